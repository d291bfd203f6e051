/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_util.h - small helpers of libnvx (lib/util.c) that nvxtool,
 * nvx-bench and the selftests share: time, touching memory, CPUs.
 */
#ifndef NVX_UTIL_LIB_H
#define NVX_UTIL_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef NVX_ARRAY_SIZE
#define NVX_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define NVX_NSEC_PER_SEC	1000000000ULL
#define NVX_NSEC_PER_MSEC	1000000ULL
#define NVX_NSEC_PER_USEC	1000ULL
#define NVX_MIB			(1024ULL * 1024)
#define NVX_GIB			(1024 * NVX_MIB)

/**
 * struct nvx_errno_why - where nvx says more than strerror()
 * @req: the ioctl request it is about; 0: any.
 * @err: the positive errno.
 * @why: what nvx means by it.
 */
struct nvx_errno_why {
	unsigned long req;
	int err;
	const char *why;
};

/* The stride of nvx_touch_pages(): one byte per 4 KiB page. */
#define NVX_TOUCH_STRIDE	4096UL

/* Is @v a power of two? */
static inline bool nvx_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

uint64_t nvx_now_ns(void);
uint64_t nvx_touch_pages(void *addr, uint64_t len, bool check_zero);
int nvx_two_cpus(int cpu[2]);
int nvx_pin_self(int cpu);
int nvx_unpin_self(void);
int nvx_nofile_max(unsigned long want);
long long nvx_file_num(const char *path, const char *key);
uint32_t nvx_cpu_node(void);
int nvx_wait_flag(const int *flag, uint64_t timeout_ns);
const char *nvx_errno_why_find(const struct nvx_errno_why *table, size_t n,
			       unsigned long req, int err);

#endif /* NVX_UTIL_LIB_H */
