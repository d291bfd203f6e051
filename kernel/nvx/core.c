// SPDX-License-Identifier: GPL-2.0
/*
 * nvx core: the /dev/nvx misc device, its version and feature ioctls,
 * the registry of the capabilities' ioctl ranges and the debugfs root.
 *
 * A capability registers its /dev/nvx ioctls as one range
 * (nvx_register_ioctls()); NVX_IOC_FEATURES reports the feature bits of
 * the ranges registered now. A call into a range holds a reference on
 * the range's module, so a module is never unloaded under a running
 * handler; its files hold one through their file_operations' owner.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nvx.h>
#include <linux/nvx_uintr.h>
#include <linux/rculist.h>
#include <linux/version.h>
#include <uapi/nvx/nvx.h>

#include "internal.h"

static DEFINE_MUTEX(nvx_ranges_lock);
static LIST_HEAD(nvx_ranges);
static struct dentry *nvx_debugfs;

static int nvx_core_ioc_version(struct nvx_ucmd *ucmd)
{
	struct nvx_version *v = ucmd->arg;

	if (v->flags || v->reserved || v->reserved2)
		return -EINVAL;
	v->abi_major = NVX_ABI_MAJOR;
	v->abi_minor = NVX_ABI_MINOR;
	v->kernel_version = KERNEL_VERSION(LINUX_VERSION_MAJOR,
					   LINUX_VERSION_PATCHLEVEL,
					   LINUX_VERSION_SUBLEVEL);
	return 0;
}

static u64 nvx_features(void)
{
	struct nvx_ioctl_range *r;
	u64 f = NVX_FEAT_CORE;

	rcu_read_lock();
	list_for_each_entry_rcu(r, &nvx_ranges, node)
		f |= r->feature;
	rcu_read_unlock();
	return f;
}

static int nvx_core_ioc_features(struct nvx_ucmd *ucmd)
{
	struct nvx_features *f = ucmd->arg;

	if (f->flags || f->reserved)
		return -EINVAL;
	f->features = nvx_features();
	f->hw = nvx_arch_hw_features();
	return 0;
}

static const struct nvx_ioctl_op nvx_core_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_CORE_BASE, NVX_IOC_VERSION, nvx_core_ioc_version,
		     struct nvx_version, reserved2, 0),
	NVX_IOCTL_OP(NVX_IOC_CORE_BASE, NVX_IOC_FEATURES,
		     nvx_core_ioc_features, struct nvx_features, hw, 0),
};

static struct nvx_ioctl_range nvx_core_range =
	NVX_IOCTL_RANGE(NVX_IOC_CORE_BASE, nvx_core_ops, NVX_FEAT_CORE);

/**
 * nvx_register_ioctls() - add a range of /dev/nvx ioctls
 * @range: the range; it must stay valid until nvx_unregister_ioctls().
 *
 * Return: 0, or -EBUSY when its numbers overlap a registered range.
 */
int nvx_register_ioctls(struct nvx_ioctl_range *range)
{
	struct nvx_ioctl_range *r;

	mutex_lock(&nvx_ranges_lock);
	list_for_each_entry(r, &nvx_ranges, node) {
		if (range->base < r->base + r->nr &&
		    r->base < range->base + range->nr) {
			mutex_unlock(&nvx_ranges_lock);
			return -EBUSY;
		}
	}
	list_add_tail_rcu(&range->node, &nvx_ranges);
	mutex_unlock(&nvx_ranges_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(nvx_register_ioctls);

/**
 * nvx_unregister_ioctls() - remove a range added by nvx_register_ioctls()
 * @range: the range.
 *
 * Returns once no new call can enter the range; calls that are running
 * hold a reference on its module, so a module calls this from its exit.
 */
void nvx_unregister_ioctls(struct nvx_ioctl_range *range)
{
	mutex_lock(&nvx_ranges_lock);
	list_del_rcu(&range->node);
	mutex_unlock(&nvx_ranges_lock);
	synchronize_rcu();
}
EXPORT_SYMBOL_GPL(nvx_unregister_ioctls);

/**
 * nvx_debugfs_dir() - the nvx debugfs directory
 *
 * Each capability puts its own directory below it.
 *
 * Return: the dentry of /sys/kernel/debug/nvx (an error pointer when
 * debugfs is not available, which the debugfs calls accept).
 */
struct dentry *nvx_debugfs_dir(void)
{
	return nvx_debugfs;
}
EXPORT_SYMBOL_GPL(nvx_debugfs_dir);

static long nvx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct nvx_ioctl_range *r, *found = NULL;
	long ret;

	rcu_read_lock();
	list_for_each_entry_rcu(r, &nvx_ranges, node) {
		if (nvx_ioctl_op(r, cmd)) {
			/* fails once the module's unload has begun */
			if (try_module_get(r->owner))
				found = r;
			break;
		}
	}
	rcu_read_unlock();
	if (!found)
		return -ENOTTY;
	ret = nvx_ioctl_dispatch(file, cmd, arg, found);
	module_put(found->owner);
	return ret;
}

static const struct file_operations nvx_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = nvx_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice nvx_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvx",
	.fops = &nvx_fops,
	.mode = 0660,
};

static int __init nvx_init(void)
{
	int ret;

	nvx_debugfs = debugfs_create_dir("nvx", NULL);
	ret = nvx_register_ioctls(&nvx_core_range);
	if (ret)
		goto err_debugfs;
	ret = nvx_pool_init();
	if (ret)
		goto err_core;
#ifdef CONFIG_NVX_UINTR
	ret = nvx_register_ioctls(&nvx_uintr_ioctls);
	if (ret)
		goto err_pool;
	nvx_uintr_debugfs_init(debugfs_create_dir("uintr", nvx_debugfs));
#endif
	ret = misc_register(&nvx_misc);
	if (ret) {
		pr_err("cannot register /dev/nvx: %d\n", ret);
		goto err_uintr;
	}
	pr_info("ABI %u.%u, features %#llx\n", NVX_ABI_MAJOR, NVX_ABI_MINOR,
		nvx_features());
	return 0;

err_uintr:
#ifdef CONFIG_NVX_UINTR
	nvx_unregister_ioctls(&nvx_uintr_ioctls);
err_pool:
#endif
	nvx_pool_exit();
err_core:
	nvx_unregister_ioctls(&nvx_core_range);
err_debugfs:
	debugfs_remove_recursive(nvx_debugfs);
	return ret;
}

static void __exit nvx_exit(void)
{
	misc_deregister(&nvx_misc);
#ifdef CONFIG_NVX_UINTR
	nvx_unregister_ioctls(&nvx_uintr_ioctls);
#endif
	nvx_pool_exit();
	nvx_unregister_ioctls(&nvx_core_range);
	debugfs_remove_recursive(nvx_debugfs);
}

module_init(nvx_init);
module_exit(nvx_exit);

MODULE_DESCRIPTION("nvx: serverless hot paths in the kernel (core, pool)");
MODULE_LICENSE("GPL");
