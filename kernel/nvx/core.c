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

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nvx.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <uapi/nvx/nvx.h>
#include <uapi/nvx/pool.h>
#include <uapi/nvx/srq.h>
#include <uapi/nvx/uintr.h>
#include <uapi/nvx/uvm.h>

#include "internal.h"

static int nvx_ioc_version(struct file *file, void *argp,
			   struct nvx_new_fd *nfd)
{
	struct nvx_version *v = argp;

	if (v->flags || v->reserved)
		return -EINVAL;

	v->abi_major = NVX_ABI_MAJOR;
	v->abi_minor = NVX_ABI_MINOR;
	v->kernel_version = KERNEL_VERSION(LINUX_VERSION_MAJOR,
					   LINUX_VERSION_PATCHLEVEL,
					   LINUX_VERSION_SUBLEVEL);
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
	u64 f = NVX_FEAT_CORE;

	if (IS_ENABLED(CONFIG_NVX_POOL))
		f |= NVX_FEAT_POOL;
	if (IS_ENABLED(CONFIG_NVX_UVM))
		f |= NVX_FEAT_UVM;
	if (IS_ENABLED(CONFIG_NVX_UINTR))
		f |= NVX_FEAT_UINTR;
	if (IS_ENABLED(CONFIG_NVX_SRQ))
		f |= NVX_FEAT_SRQ;
	return f;
}

static int nvx_ioc_features(struct file *file, void *argp,
			    struct nvx_new_fd *nfd)
{
	struct nvx_features *f = argp;

	if (f->flags || f->reserved)
		return -EINVAL;

	f->features = nvx_features();
	f->hw = nvx_arch_hw_features();
	return 0;
}

static const struct nvx_ioctl_desc nvx_ioctls[] = {
	NVX_IOCTL(NVX_IOC_VERSION, sizeof(struct nvx_version),
		  nvx_ioc_version, 0),
	NVX_IOCTL(NVX_IOC_FEATURES, sizeof(struct nvx_features),
		  nvx_ioc_features, 0),
#ifdef CONFIG_NVX_POOL
	/* the sizes before chunk_shift and chunks were added still work */
	NVX_IOCTL(NVX_IOC_POOL_GROW, offsetofend(struct nvx_pool_resize, done),
		  nvx_ioc_pool_grow, NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL(NVX_IOC_POOL_SHRINK, offsetofend(struct nvx_pool_resize, done),
		  nvx_ioc_pool_shrink, NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL(NVX_IOC_POOL_STATS,
		  offsetofend(struct nvx_pool_stats, sync_zeroed_bytes),
		  nvx_ioc_pool_stats, 0),
	NVX_IOCTL(NVX_IOC_GRANT, sizeof(struct nvx_grant_create),
		  nvx_ioc_grant, 0),
#endif
#ifdef CONFIG_NVX_UINTR
	NVX_IOCTL(NVX_IOC_UINTR_REGISTER, sizeof(struct nvx_uintr_register),
		  nvx_ioc_uintr_register, 0),
	NVX_IOCTL(NVX_IOC_UINTR_UNREGISTER,
		  sizeof(struct nvx_uintr_unregister),
		  nvx_ioc_uintr_unregister, 0),
	NVX_IOCTL(NVX_IOC_UINTR_VECTOR_FD, sizeof(struct nvx_uintr_vector_fd),
		  nvx_ioc_uintr_vector_fd, 0),
	NVX_IOCTL(NVX_IOC_UINTR_ADD_SENDER, sizeof(struct nvx_uintr_sender),
		  nvx_ioc_uintr_add_sender, 0),
	NVX_IOCTL(NVX_IOC_UINTR_DEL_SENDER, sizeof(struct nvx_uintr_sender),
		  nvx_ioc_uintr_del_sender, 0),
	NVX_IOCTL(NVX_IOC_UINTR_SEND, sizeof(struct nvx_uintr_send),
		  nvx_ioc_uintr_send, 0),
	NVX_IOCTL(NVX_IOC_UINTR_SEND_MANY, sizeof(struct nvx_uintr_send_many),
		  nvx_ioc_uintr_send_many, NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL(NVX_IOC_UINTR_WAIT, sizeof(struct nvx_uintr_wait),
		  nvx_ioc_uintr_wait, 0),
	NVX_IOCTL(NVX_IOC_UINTR_TIMER, sizeof(struct nvx_uintr_timer),
		  nvx_ioc_uintr_timer, 0),
	NVX_IOCTL(NVX_IOC_UINTR_SIGNAL, sizeof(struct nvx_uintr_signal),
		  nvx_ioc_uintr_signal, 0),
#endif
#ifdef CONFIG_NVX_UVM
	NVX_IOCTL(NVX_IOC_UVM_ENDPOINT, sizeof(struct nvx_uvm_endpoint),
		  nvx_ioc_uvm_endpoint, 0),
	NVX_IOCTL(NVX_IOC_UVM_ATTACH, sizeof(struct nvx_uvm_attach),
		  nvx_ioc_uvm_attach, 0),
#endif
#ifdef CONFIG_NVX_SRQ
	NVX_IOCTL(NVX_IOC_SRQ_CREATE, sizeof(struct nvx_srq_create),
		  nvx_ioc_srq_create, 0),
	NVX_IOCTL(NVX_IOC_SRQ_QUERY, sizeof(struct nvx_srq_stats),
		  nvx_ioc_srq_query, 0),
	NVX_IOCTL(NVX_IOC_SRQ_INFO, sizeof(struct nvx_srq_info),
		  nvx_ioc_srq_info, 0),
#endif
};

/* The ioctl number without its size bits: what identifies an ioctl. */
static unsigned int nvx_ioc_base(unsigned int cmd)
{
	return cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);
}

/**
 * nvx_ioctl_dispatch() - run one ioctl described in a table
 * @file: the file the ioctl was issued on.
 * @cmd: the ioctl number from userspace.
 * @arg: the user pointer to the argument struct.
 * @table: the ioctls this file knows.
 * @n: number of entries in @table.
 *
 * Matches @cmd against @table ignoring the size bits, copies the argument
 * in as an extensible struct (see include/uapi/nvx/nvx.h), calls the
 * handler with the kernel copy and copies the result out.
 *
 * Return: the handler's result; -ENOTTY for an unknown ioctl, -EINVAL for
 * a struct smaller than its first version, -E2BIG for unknown nonzero
 * trailing bytes, -EFAULT for a bad pointer.
 */
long nvx_ioctl_dispatch(struct file *file, unsigned int cmd, unsigned long arg,
			const struct nvx_ioctl_desc *table, size_t n)
{
	u64 kbuf[NVX_IOCTL_MAX_ARG / sizeof(u64)] = {};
	struct nvx_new_fd nfd = { .file = NULL, .fd = -1 };
	const struct nvx_ioctl_desc *desc = NULL;
	void __user *uarg = (void __user *)arg;
	size_t usize = _IOC_SIZE(cmd);
	size_t i, ksize;
	int ret;

	if (_IOC_TYPE(cmd) != NVX_IOC_MAGIC)
		return -ENOTTY;
	for (i = 0; i < n; i++) {
		if (nvx_ioc_base(table[i].cmd) == nvx_ioc_base(cmd)) {
			desc = &table[i];
			break;
		}
	}
	if (!desc)
		return -ENOTTY;
	if (usize < desc->min_size)
		return -EINVAL;

	ksize = _IOC_SIZE(desc->cmd);
	if (WARN_ON_ONCE(ksize > sizeof(kbuf)))
		return -EINVAL;
	ret = copy_struct_from_user(kbuf, ksize, uarg, usize);
	if (ret)
		return ret;

	ret = desc->handler(file, kbuf, &nfd);
	if (ret && !(desc->flags & NVX_IOCTL_OUT_ON_ERROR))
		return ret;

	if ((_IOC_DIR(desc->cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kbuf, min(ksize, usize))) {
		if (nfd.file) {
			put_unused_fd(nfd.fd);
			fput(nfd.file);
		}
		return -EFAULT;
	}
	if (nfd.file)
		fd_install(nfd.fd, nfd.file);
	return ret;
}

static long nvx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return nvx_ioctl_dispatch(file, cmd, arg, nvx_ioctls,
				  ARRAY_SIZE(nvx_ioctls));
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

/* Every argument struct must fit the dispatcher's stack copy. */
/**
 * nvx_ioctls_check() - check an ioctl table once, at init
 * @table: the table.
 * @n: number of entries.
 *
 * Return: 0, or -EINVAL when an entry's sizes are out of range.
 */
int __init nvx_ioctls_check(const struct nvx_ioctl_desc *table, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (_IOC_SIZE(table[i].cmd) > NVX_IOCTL_MAX_ARG ||
		    table[i].min_size > _IOC_SIZE(table[i].cmd)) {
			pr_err("ioctl %#x: argument size out of range\n",
			       table[i].cmd);
			return -EINVAL;
		}
	}
	return 0;
}

static int __init nvx_init(void)
{
	int ret;

	ret = nvx_ioctls_check(nvx_ioctls, ARRAY_SIZE(nvx_ioctls));
	if (ret)
		return ret;
	ret = nvx_pool_init();
	if (ret)
		return ret;
	ret = nvx_srq_init();
	if (ret)
		goto err_pool;

	ret = misc_register(&nvx_misc);
	if (ret) {
		pr_err("cannot register /dev/nvx: %d\n", ret);
		goto err_srq;
	}
	pr_info("ABI %u.%u, features %#llx\n", NVX_ABI_MAJOR, NVX_ABI_MINOR,
		nvx_features());
	return 0;

err_srq:
	nvx_srq_exit();
err_pool:
	nvx_pool_exit();
	return ret;
}

static void __exit nvx_exit(void)
{
	misc_deregister(&nvx_misc);
	nvx_srq_exit();
	nvx_pool_exit();
}

module_init(nvx_init);
module_exit(nvx_exit);

MODULE_DESCRIPTION("nvx: serverless hot paths in the kernel");
MODULE_LICENSE("GPL");
