// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: /dev/nvx, the pool and grants (nvx_pool.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "nvx_pool.h"
#include "nvx_util.h"

/**
 * nvx_dev_open() - open the nvx control device
 * @path: its path, or NULL for NVX_DEFAULT_DEVICE.
 *
 * Return: the fd (read-write, close-on-exec), or -errno: -ENOENT, -ENXIO
 * or -ENODEV when the kernel has no nvx, -EACCES or -EPERM, and
 * -ENOTTY when @path is not a character device.
 */
int nvx_dev_open(const char *path)
{
	struct stat st;
	int fd;

	fd = open(path ? path : NVX_DEFAULT_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode)) {
		close(fd);
		return -ENOTTY;
	}
	return fd;
}

/**
 * nvx_pool_stats_get() - NVX_IOC_POOL_STATS
 * @nvx_fd: the nvx device.
 * @node: a node, or NVX_NODE_ANY for the sums.
 * @s: filled in.
 *
 * Return: 0 or -errno.
 */
int nvx_pool_stats_get(int nvx_fd, uint32_t node, struct nvx_pool_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->node = node;
	if (ioctl(nvx_fd, NVX_IOC_POOL_STATS, s))
		return -errno;
	return 0;
}

/**
 * nvx_pool_resize() - NVX_IOC_POOL_GROW or NVX_IOC_POOL_SHRINK
 * @nvx_fd: the nvx device.
 * @grow: grow, else shrink.
 * @node: a node, or NVX_NODE_ANY.
 * @bytes: how much.
 * @chunk_shift: grow: the largest chunk, or 0; shrink: 0.
 * @done: bytes added or removed, also on failure.
 *
 * Return: 0 or -errno.
 */
int nvx_pool_resize(int nvx_fd, bool grow, uint32_t node, uint64_t bytes,
		    uint32_t chunk_shift, uint64_t *done)
{
	struct nvx_pool_resize r = {
		.node = node,
		.bytes = bytes,
		.chunk_shift = chunk_shift,
	};
	int ret = 0;

	/* the kernel writes @done back also on failure */
	if (ioctl(nvx_fd, grow ? NVX_IOC_POOL_GROW : NVX_IOC_POOL_SHRINK, &r))
		ret = -errno;
	*done = r.done;
	return ret;
}

/**
 * nvx_grant_new() - NVX_IOC_GRANT
 * @nvx_fd: the nvx device.
 * @node: a node, or NVX_NODE_ANY.
 * @bytes: the size, rounded up to whole pieces by the kernel.
 * @flags: NVX_GRANT_* flags.
 * @fd: the grant fd.
 *
 * Return: 0 or -errno.
 */
int nvx_grant_new(int nvx_fd, uint32_t node, uint64_t bytes, uint32_t flags,
		  int *fd)
{
	struct nvx_grant_create g = {
		.flags = flags,
		.node = node,
		.bytes = bytes,
	};

	if (ioctl(nvx_fd, NVX_IOC_GRANT, &g))
		return -errno;
	*fd = g.fd;
	return 0;
}

/**
 * nvx_grant_info_get() - NVX_GRANT_IOC_INFO
 * @grant_fd: a grant.
 * @info: filled in.
 *
 * Return: 0 or -errno.
 */
int nvx_grant_info_get(int grant_fd, struct nvx_grant_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(grant_fd, NVX_GRANT_IOC_INFO, info) ? -errno : 0;
}

/* Where nvx says more than strerror(): per request (0: any) and errno. */
static const struct nvx_errno_why nvx_pool_why[] = {
	{ 0, ENOTTY,
	  "the running kernel has no nvx pool (CONFIG_NVX_POOL), or an older nvx ABI",
	},
	{ 0, EPERM, "needs CAP_SYS_ADMIN" },
	{ NVX_IOC_POOL_GROW, ENOMEM, "the node could not deliver all of it" },
	{ NVX_IOC_POOL_SHRINK, EBUSY,
	  "granted memory cannot be released (nor returned memory still pinned by someone): close the grants first",
	},
	{ NVX_IOC_GRANT, ENOSPC,
	  "the pool does not hold enough free memory on that node (nvxtool pool grow)",
	},
	{ NVX_IOC_GRANT, EAGAIN,
	  "the pool holds too few clean (zeroed) chunks on that node right now: the scrubber has not caught up (try --wait, or drop --clean-only)",
	},
	{ NVX_IOC_GRANT, EDQUOT,
	  "over RLIMIT_MEMLOCK (ulimit -l; CAP_IPC_LOCK is exempt)",
	},
	{ NVX_IOC_GRANT, EFBIG,
	  "above grant_max_bytes (/sys/module/nvx/parameters/grant_max_bytes)",
	},
	{ NVX_IOC_GRANT, EINTR, "interrupted while waiting for the scrubber" },
};

/**
 * nvx_pool_explain() - what nvx means by an errno of a pool ioctl
 * @req: the ioctl request (NVX_IOC_POOL_GROW, NVX_IOC_GRANT, ...).
 * @err: the positive errno.
 *
 * Return: the explanation, or NULL where strerror() says it all.
 */
const char *nvx_pool_explain(unsigned long req, int err)
{
	return nvx_errno_why_find(nvx_pool_why, NVX_ARRAY_SIZE(nvx_pool_why),
				  req, err);
}

/**
 * nvx_pool_strerror() - explain an errno of a pool ioctl
 * @req: the ioctl request.
 * @err: the positive errno.
 *
 * Return: nvx_pool_explain(), or strerror(@err).
 */
const char *nvx_pool_strerror(unsigned long req, int err)
{
	const char *why = nvx_pool_explain(req, err);

	return why ? why : strerror(err);
}
