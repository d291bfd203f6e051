// SPDX-License-Identifier: GPL-2.0
/*
 * nvx core: the /dev/nvx misc device and its ioctl dispatch.
 *
 * Each ioctl is described once in nvx_ioctls[]: its number, the first
 * published size of its argument struct and the size this kernel knows.
 * The dispatcher does the copying in both directions (extensible structs,
 * see include/uapi/nvx/nvx.h), so a handler only sees a kernel copy of
 * the argument and never touches user memory for it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nvx.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <uapi/nvx/nvx.h>

#include "internal.h"

static int nvx_ioc_version(struct file *file, void *argp)
{
	struct nvx_version *v = argp;

	if (v->flags || v->reserved)
		return -EINVAL;

	v->abi_major = NVX_ABI_MAJOR;
	v->abi_minor = NVX_ABI_MINOR;
	v->kernel_version = LINUX_VERSION_CODE;
	v->pad = 0;
	return 0;
}

/**
 * nvx_features() - the capabilities this kernel provides
 *
 * Return: a mask of NVX_FEAT_* bits. A capability's bit is set only when
 * its code is built in and initialised.
 */
u64 nvx_features(void)
{
	return NVX_FEAT_CORE;
}

static int nvx_ioc_features(struct file *file, void *argp)
{
	struct nvx_features *f = argp;

	if (f->flags || f->reserved)
		return -EINVAL;

	f->features = nvx_features();
	f->hw = nvx_arch_hw_features();
	return 0;
}

/**
 * struct nvx_ioctl_desc - one /dev/nvx ioctl
 * @cmd: the ioctl number as the uapi header defines it.
 * @min_size: size of the first published version of the argument struct.
 * @handler: called with a kernel copy of the argument, zero-extended to
 *	the size of the struct this kernel knows (_IOC_SIZE(@cmd)).
 */
struct nvx_ioctl_desc {
	unsigned int cmd;
	size_t min_size;
	int (*handler)(struct file *file, void *argp);
};

/* Largest argument struct any nvx ioctl takes; the copy lives on the stack. */
#define NVX_IOCTL_MAX_ARG	128

#define NVX_IOCTL(_cmd, _min_size, _handler) {				\
	.cmd = (_cmd) + BUILD_BUG_ON_ZERO(_IOC_SIZE(_cmd) > NVX_IOCTL_MAX_ARG), \
	.min_size = (_min_size),					\
	.handler = (_handler),						\
}

static const struct nvx_ioctl_desc nvx_ioctls[] = {
	NVX_IOCTL(NVX_IOC_VERSION, sizeof(struct nvx_version),
		  nvx_ioc_version),
	NVX_IOCTL(NVX_IOC_FEATURES, sizeof(struct nvx_features),
		  nvx_ioc_features),
};

/* The ioctl number without its size bits: what identifies an ioctl. */
static unsigned int nvx_ioc_base(unsigned int cmd)
{
	return cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);
}

static const struct nvx_ioctl_desc *nvx_ioctl_find(unsigned int cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nvx_ioctls); i++)
		if (nvx_ioc_base(nvx_ioctls[i].cmd) == nvx_ioc_base(cmd))
			return &nvx_ioctls[i];
	return NULL;
}

static long nvx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	u64 kbuf[NVX_IOCTL_MAX_ARG / sizeof(u64)] = {};
	const struct nvx_ioctl_desc *desc;
	void __user *uarg = (void __user *)arg;
	size_t usize = _IOC_SIZE(cmd);
	size_t ksize;
	int ret;

	if (_IOC_TYPE(cmd) != NVX_IOC_MAGIC)
		return -ENOTTY;
	desc = nvx_ioctl_find(cmd);
	if (!desc)
		return -ENOTTY;
	if (usize < desc->min_size)
		return -EINVAL;

	ksize = _IOC_SIZE(desc->cmd);
	ret = copy_struct_from_user(kbuf, ksize, uarg, usize);
	if (ret)
		return ret;

	ret = desc->handler(file, kbuf);
	if (ret)
		return ret;

	if ((_IOC_DIR(desc->cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kbuf, min(ksize, usize)))
		return -EFAULT;
	return 0;
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

	ret = misc_register(&nvx_misc);
	if (ret) {
		pr_err("cannot register /dev/nvx: %d\n", ret);
		return ret;
	}
	pr_info("ABI %u.%u, features %#llx\n", NVX_ABI_MAJOR, NVX_ABI_MINOR,
		nvx_features());
	return 0;
}

static void __exit nvx_exit(void)
{
	misc_deregister(&nvx_misc);
}

module_init(nvx_init);
module_exit(nvx_exit);

MODULE_DESCRIPTION("nvx: serverless hot paths in the kernel");
MODULE_LICENSE("GPL");
