// SPDX-License-Identifier: GPL-2.0
/*
 * nvx ioctl core: the dispatcher every nvx file uses.
 *
 * A table of struct nvx_ioctl_op is indexed by _IOC_NR minus the range's
 * base, so finding an op is one bounds check; the sizes in it were
 * checked when it was compiled (NVX_IOCTL_OP()). The dispatcher does the
 * copying in both directions as extensible structs (include/uapi/nvx/
 * nvx.h), then installs the file descriptor a handler created, if any.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nvx.h>
#include <linux/uaccess.h>

#include "internal.h"

/* The ioctl number without its size bits: what identifies an ioctl. */
static unsigned int nvx_ioc_base(unsigned int cmd)
{
	return cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);
}

/**
 * nvx_ioctl_op() - the op of a range that @cmd names
 * @range: the range.
 * @cmd: the ioctl number from userspace.
 *
 * Return: the op, or NULL when @cmd is not one of @range's.
 */
const struct nvx_ioctl_op *nvx_ioctl_op(const struct nvx_ioctl_range *range,
					unsigned int cmd)
{
	const struct nvx_ioctl_op *op;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != NVX_IOC_MAGIC || nr < range->base ||
	    nr - range->base >= range->nr)
		return NULL;
	op = &range->ops[nr - range->base];
	if (!op->fn || nvx_ioc_base(op->cmd) != nvx_ioc_base(cmd))
		return NULL;
	return op;
}

/**
 * nvx_ioctl_dispatch() - run one ioctl of a range
 * @file: the file the ioctl was issued on.
 * @cmd: the ioctl number from userspace.
 * @arg: the user pointer to the argument struct.
 * @range: the ioctls @file knows.
 *
 * Finds @cmd in @range ignoring its size bits, copies the argument in as
 * an extensible struct, checks that an ioctl with output can write it
 * back, calls the handler with the kernel copy, copies the result out
 * (a handler's finish callback undoes the call when that copy fails)
 * and installs the handler's new descriptor.
 *
 * Return: the handler's result; -ENOTTY for an unknown ioctl, -EINVAL
 * for a struct smaller than its first version, -E2BIG for unknown
 * nonzero trailing bytes, -EFAULT for a bad pointer.
 */
long nvx_ioctl_dispatch(struct file *file, unsigned int cmd,
			unsigned long arg, const struct nvx_ioctl_range *range)
{
	u64 kbuf[NVX_IOCTL_MAX_ARG / sizeof(u64)] = {};
	struct nvx_ucmd ucmd = {
		.file = file, .arg = kbuf, .new_file = NULL, .new_fd = -1,
	};
	void __user *uarg = (void __user *)arg;
	size_t usize = _IOC_SIZE(cmd);
	const struct nvx_ioctl_op *op;
	bool copied = true;
	int ret;

	op = nvx_ioctl_op(range, cmd);
	if (!op)
		return -ENOTTY;
	if (usize < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(kbuf, op->size, uarg, usize);
	if (ret)
		return ret;
	/*
	 * An argument that cannot take the result fails before the handler
	 * acts, not after its side effect (a message taken, a thread
	 * registered, the pool grown): write the struct back as it was
	 * read. Only a caller that unmaps or protects it meanwhile, from
	 * another thread, can still make the last copy fail; the handlers
	 * with such effects then undo them (ucmd.finish).
	 */
	if ((_IOC_DIR(op->cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kbuf, min_t(size_t, op->size, usize)))
		return -EFAULT;

	ret = op->fn(&ucmd);
	if (ret && !(op->flags & NVX_IOCTL_OUT_ON_ERROR)) {
		if (ucmd.finish)
			ucmd.finish(&ucmd, false);
		/* a handler that failed after nvx_ucmd_fd() */
		if (ucmd.new_file) {
			put_unused_fd(ucmd.new_fd);
			fput(ucmd.new_file);
		}
		return ret;
	}

	if ((_IOC_DIR(op->cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kbuf, min_t(size_t, op->size, usize))) {
		ret = -EFAULT;
		copied = false;
	}
	/* a result that did not reach userspace: the call is undone */
	if (ucmd.finish)
		ucmd.finish(&ucmd, copied);
	if (ucmd.new_file) {
		/* no descriptor for a call that failed, even with its output */
		if (ret) {
			put_unused_fd(ucmd.new_fd);
			fput(ucmd.new_file);
		} else {
			fd_install(ucmd.new_fd, ucmd.new_file);
		}
	}
	return ret;
}
EXPORT_SYMBOL_GPL(nvx_ioctl_dispatch);
