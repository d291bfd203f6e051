/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pool helpers shared by the nvx selftest groups that need pool memory
 * (pool, srq).
 */
#ifndef NVX_POOL_TEST_H
#define NVX_POOL_TEST_H

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvx/pool.h>

#include "nvx_test.h"

/* CLOCK_MONOTONIC in milliseconds. */
static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* The pool's stats summed over all nodes: 0 or -errno. */
static inline int pool_stats(int fd, struct nvx_pool_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->node = NVX_NODE_ANY;
	return nvx_ioctl(fd, NVX_IOC_POOL_STATS, s);
}

/* NVX_IOC_POOL_GROW or _SHRINK (@cmd): 0 or -errno; @done if not NULL. */
static inline int pool_resize(int fd, unsigned long cmd, uint64_t bytes,
			      uint32_t node, uint64_t *done)
{
	struct nvx_pool_resize r = { .node = node, .bytes = bytes };
	int ret = nvx_ioctl(fd, cmd, &r);

	if (done)
		*done = r.done;
	return ret;
}

/* Wait until the scrubber has nothing left: 0, or -ETIMEDOUT. */
static inline int wait_scrubbed(int fd)
{
	struct nvx_pool_stats s;
	uint64_t end = now_ms() + 120000;

	while (now_ms() < end) {
		if (pool_stats(fd, &s))
			return -EIO;
		if (!s.dirty_bytes)
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* Wait until the live grants are those of @start: 0, or -ETIMEDOUT. */
static inline int wait_granted(int fd, const struct nvx_pool_stats *start)
{
	struct nvx_pool_stats s;
	uint64_t end = now_ms() + 10000;

	while (now_ms() < end) {
		if (pool_stats(fd, &s))
			return -EIO;
		if (s.granted_bytes == start->granted_bytes &&
		    s.grants_live == start->grants_live)
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

#endif /* NVX_POOL_TEST_H */
