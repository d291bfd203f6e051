/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx core API: what the nvx modules use of the core module (nvx.ko).
 *
 * The core owns /dev/nvx and the ioctl plumbing. A capability module
 * describes its ioctls in a table of struct nvx_ioctl_op, indexed by
 * _IOC_NR, and registers the table as a struct nvx_ioctl_range: on
 * /dev/nvx with nvx_register_ioctls(), or on a file of its own by calling
 * nvx_ioctl_dispatch() from its ->unlocked_ioctl. The dispatcher copies
 * the argument in and out (extensible structs, include/uapi/nvx/nvx.h)
 * and installs a new file descriptor only once the result has reached
 * userspace, so a handler never touches user memory for its argument.
 *
 * The handler signature, once for every nvx ioctl:
 *
 *	int handler(struct nvx_ucmd *ucmd);
 *
 * @ucmd->arg is a kernel copy of the argument struct, zero-extended to
 * the size this kernel knows; the handler reads its input there and
 * writes its output there. It returns 0 or a negative errno; the
 * argument is copied back on success (and also on failure for ops with
 * NVX_IOCTL_OUT_ON_ERROR). A handler that creates a file descriptor calls
 * nvx_ucmd_fd() or nvx_anon_fd() and writes the number it returns into
 * its argument.
 */
#ifndef _LINUX_NVX_H
#define _LINUX_NVX_H

#include <linux/anon_inodes.h>
#include <linux/build_bug.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/ioctl.h>
#include <linux/list.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <uapi/nvx/nvx.h>

struct dentry;
struct module;

/*
 * The _IOC_NR ranges of the tables (include/uapi/nvx/nvx.h lists them):
 * /dev/nvx ranges first, then those of the files they hand out.
 */
#define NVX_IOC_CORE_BASE	0x00	/* /dev/nvx: version, features */
#define NVX_IOC_POOL_BASE	0x10	/* /dev/nvx: pool and grant */
#define NVX_IOC_GRANT_BASE	0x18	/* grant fd */
#define NVX_IOC_UVM_BASE	0x30	/* /dev/nvx: endpoint, attach */
#define NVX_IOC_UVM_EP_BASE	0x38	/* endpoint fd */
#define NVX_IOC_UVM_CHAN_BASE	0x40	/* channel fd */
#define NVX_IOC_UINTR_BASE	0x50	/* /dev/nvx: user interrupts */
#define NVX_IOC_SRQ_BASE	0x70	/* /dev/nvx: shared RX queues */
#define NVX_IOC_SRQ_SET_BASE	0x78	/* srq set fd */

/* Largest argument struct any nvx ioctl takes; the copy lives on the stack. */
#define NVX_IOCTL_MAX_ARG	256

/* Copy the argument back to userspace even when the handler failed. */
#define NVX_IOCTL_OUT_ON_ERROR	BIT(0)

/**
 * struct nvx_ucmd - one ioctl call, as a handler sees it
 * @file: the file the ioctl was issued on.
 * @arg: the kernel copy of the argument struct.
 * @new_file: a file to install as @new_fd once the argument reached
 *	userspace; set by nvx_ucmd_fd().
 * @new_fd: the reserved descriptor number for @new_file.
 * @finish: set by a handler whose effect must not outlive a result that
 *	never reached userspace: called once the dispatcher copied the
 *	result out (@copied true, also after a failed NVX_IOCTL_OUT_ON_ERROR
 *	call) or did not (@copied false: the copy failed, or the handler
 *	failed without NVX_IOCTL_OUT_ON_ERROR; undo what the call did),
 *	before @new_file is installed or dropped.
 * @priv: the handler's, for @finish.
 */
struct nvx_ucmd {
	struct file *file;
	void *arg;
	struct file *new_file;
	int new_fd;
	void (*finish)(struct nvx_ucmd *ucmd, bool copied);
	void *priv;
};

/**
 * struct nvx_ioctl_op - one ioctl of a table
 * @cmd: the ioctl number as the uapi header defines it; 0 for a hole in
 *	the table (-ENOTTY).
 * @size: the size of the argument struct this kernel knows.
 * @min_size: the size of its first published version.
 * @flags: NVX_IOCTL_* bits.
 * @fn: the handler.
 */
struct nvx_ioctl_op {
	unsigned int cmd;
	unsigned int size;
	unsigned int min_size;
	unsigned int flags;
	int (*fn)(struct nvx_ucmd *ucmd);
};

/*
 * NVX_IOCTL_OP(base, ioctl, fn, type, last, flags): the table entry of
 * @ioctl, at index _IOC_NR(@ioctl) - @base. Checked at build time: the
 * ioctl's magic is nvx's, its encoded size is sizeof(@type), the struct
 * fits the dispatcher's copy, @last is a member of @type (the last one
 * of the first published version) and the ioctl's number is not below
 * the table's @base.
 */
#define NVX_IOCTL_OP(_base, _ioctl, _fn, _type, _last, _flags)		\
	[_IOC_NR(_ioctl) - (_base)] = {					\
		.cmd = (_ioctl),					\
		.size = sizeof(_type) +					\
			BUILD_BUG_ON_ZERO(_IOC_TYPE(_ioctl) != NVX_IOC_MAGIC) + \
			BUILD_BUG_ON_ZERO(_IOC_NR(_ioctl) < (_base)) +	\
			BUILD_BUG_ON_ZERO(_IOC_SIZE(_ioctl) != sizeof(_type)) + \
			BUILD_BUG_ON_ZERO(sizeof(_type) > NVX_IOCTL_MAX_ARG), \
		.min_size = offsetofend(_type, _last),			\
		.flags = (_flags),					\
		.fn = (_fn),						\
	}

/**
 * struct nvx_ioctl_range - a table of ioctls with consecutive numbers
 * @base: _IOC_NR of @ops[0].
 * @nr: entries in @ops.
 * @ops: the table, built with NVX_IOCTL_OP().
 * @feature: the NVX_FEAT_* bit the range provides on /dev/nvx (0 for a
 *	range of a derived file).
 * @owner: the module of the handlers; a call takes a reference on it.
 * @node: on the core's list of /dev/nvx ranges.
 */
struct nvx_ioctl_range {
	unsigned int base;
	unsigned int nr;
	const struct nvx_ioctl_op *ops;
	u64 feature;
	struct module *owner;
	struct list_head node;
};

#define NVX_IOCTL_RANGE(_base, _ops, _feature) {			\
	.base = (_base),						\
	.nr = ARRAY_SIZE(_ops),						\
	.ops = (_ops),							\
	.feature = (_feature),						\
	.owner = THIS_MODULE,						\
}

long nvx_ioctl_dispatch(struct file *file, unsigned int cmd,
			unsigned long arg, const struct nvx_ioctl_range *range);

/*
 * DEFINE_NVX_FOPS(name, base, ops, ...): the file_operations name_fops of
 * a file nvx hands out, whose ioctls are the table @ops (of NVX_IOCTL_OP()
 * entries from _IOC_NR @base), dispatched by nvx_ioctl_dispatch(); the
 * file's other operations (.release, .mmap, .show_fdinfo, ...) follow as
 * designated initializers.
 */
#define DEFINE_NVX_FOPS(_name, _base, _ops, ...)			\
static const struct nvx_ioctl_range _name##_range =			\
	NVX_IOCTL_RANGE(_base, _ops, 0);				\
static long _name##_ioctl(struct file *file, unsigned int cmd,		\
			  unsigned long arg)				\
{									\
	return nvx_ioctl_dispatch(file, cmd, arg, &_name##_range);	\
}									\
									\
static const struct file_operations _name##_fops = {			\
	.owner = THIS_MODULE,						\
	.unlocked_ioctl = _name##_ioctl,				\
	.compat_ioctl = compat_ptr_ioctl,				\
	.llseek = noop_llseek,						\
	__VA_ARGS__							\
}

int nvx_register_ioctls(struct nvx_ioctl_range *range);
void nvx_unregister_ioctls(struct nvx_ioctl_range *range);
struct dentry *nvx_debugfs_dir(void);

/**
 * nvx_ucmd_fd() - hand out a file as a new descriptor of an ioctl
 * @ucmd: the call.
 * @file: the new file; on failure it is released (fput()).
 * @o_flags: O_CLOEXEC or 0.
 *
 * Reserves a descriptor for @file; the dispatcher installs it once the
 * argument has been copied back, or drops both if that fails or the
 * handler fails. At most one per call (a second is a bug: -EINVAL).
 *
 * Return: the descriptor number, or a negative errno.
 */
static inline int nvx_ucmd_fd(struct nvx_ucmd *ucmd, struct file *file,
			      unsigned int o_flags)
{
	int fd;

	if (IS_ERR(file))
		return PTR_ERR(file);
	if (WARN_ON_ONCE(ucmd->new_file)) {
		fput(file);
		return -EINVAL;
	}
	fd = get_unused_fd_flags(O_RDWR | (o_flags & O_CLOEXEC));
	if (fd < 0) {
		fput(file);
		return fd;
	}
	ucmd->new_file = file;
	ucmd->new_fd = fd;
	return fd;
}

/**
 * nvx_anon_fd() - a new anon-inode file, handed out as a descriptor
 * @ucmd: the call.
 * @name: the anon inode's name ("[nvx-...]").
 * @fops: its file operations (with .owner set).
 * @priv: its private_data.
 * @o_flags: O_CLOEXEC or 0.
 *
 * On failure nothing of @priv is released: the caller still owns it.
 * On success the file owns @priv (its ->release frees it).
 *
 * Return: the descriptor number, or a negative errno.
 */
static inline int nvx_anon_fd(struct nvx_ucmd *ucmd, const char *name,
			      const struct file_operations *fops, void *priv,
			      unsigned int o_flags)
{
	struct file *file;
	int fd;

	if (WARN_ON_ONCE(ucmd->new_file))
		return -EINVAL;
	fd = get_unused_fd_flags(O_RDWR | (o_flags & O_CLOEXEC));
	if (fd < 0)
		return fd;
	file = anon_inode_getfile(name, fops, priv, O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	ucmd->new_file = file;
	ucmd->new_fd = fd;
	return fd;
}

/* Hardware facts for NVX_IOC_FEATURES (arch/x86/nvx/hw.c, built in). */
u64 nvx_arch_hw_features(void);

#endif /* _LINUX_NVX_H */
