// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: small helpers (nvx_util.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "nvx_util.h"

/**
 * nvx_now_ns() - CLOCK_MONOTONIC in nanoseconds
 *
 * Return: the time.
 */
uint64_t nvx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NVX_NSEC_PER_SEC + ts.tv_nsec;
}

/**
 * nvx_touch_pages() - write one byte in every 4 KiB page
 * @addr: the start, mapped writable.
 * @len: bytes.
 * @check_zero: read the byte first and count the pages where it was not 0.
 *
 * Return: that count (0 without @check_zero).
 */
uint64_t nvx_touch_pages(void *addr, uint64_t len, bool check_zero)
{
	unsigned char *p = addr;
	uint64_t off, nonzero = 0;

	/*
	 * Plain accesses do: the memory came from mmap() and goes to
	 * munmap(), so the compiler can drop none of them.
	 */
	for (off = 0; off < len; off += NVX_TOUCH_STRIDE) {
		if (check_zero && p[off])
			nonzero++;
		p[off] = 1;
	}
	return nonzero;
}

/**
 * nvx_two_cpus() - two CPUs for a test between two threads
 * @cpu: the first two CPUs this process may run on.
 *
 * Return: how many differ (2, or 1 when there is one only, and then
 * @cpu[1] == @cpu[0]), or -errno.
 */
int nvx_two_cpus(int cpu[2])
{
	size_t size, ncpus = CPU_SETSIZE;
	cpu_set_t *set;
	size_t i;
	int n = 0;

	/* the kernel wants a mask as large as its own: grow until it fits */
	for (;;) {
		set = CPU_ALLOC(ncpus);
		if (!set)
			return -ENOMEM;
		size = CPU_ALLOC_SIZE(ncpus);
		if (!sched_getaffinity(0, size, set))
			break;
		CPU_FREE(set);
		if (errno != EINVAL || ncpus >= 1U << 20)
			return -errno;
		ncpus *= 2;
	}
	for (i = 0; i < ncpus && n < 2; i++)
		if (CPU_ISSET_S(i, size, set))
			cpu[n++] = i;
	CPU_FREE(set);
	if (!n)
		return -ENOENT;
	if (n == 1)
		cpu[1] = cpu[0];
	return n;
}

/**
 * nvx_pin_self() - pin the calling thread to one CPU
 * @cpu: the CPU.
 *
 * Return: 0 or -errno.
 */
int nvx_pin_self(int cpu)
{
	cpu_set_t *set;
	size_t size;
	int ret = 0;

	if (cpu < 0)
		return -EINVAL;
	set = CPU_ALLOC(cpu + 1);
	if (!set)
		return -ENOMEM;
	size = CPU_ALLOC_SIZE(cpu + 1);
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	if (sched_setaffinity(0, size, set))	/* 0: the calling thread */
		ret = -errno;
	CPU_FREE(set);
	return ret;
}

/**
 * nvx_unpin_self() - let the calling thread run on every online CPU again
 *
 * Return: 0 or -errno.
 */
int nvx_unpin_self(void)
{
	long i, n = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t *set;
	size_t size;
	int ret = 0;

	if (n < 1)
		return -EINVAL;
	set = CPU_ALLOC(n);
	if (!set)
		return -ENOMEM;
	size = CPU_ALLOC_SIZE(n);
	CPU_ZERO_S(size, set);
	for (i = 0; i < n; i++)
		CPU_SET_S(i, size, set);
	/* offline CPUs in the mask are ignored */
	if (sched_setaffinity(0, size, set))
		ret = -errno;
	CPU_FREE(set);
	return ret;
}

/**
 * nvx_cpu_node() - the NUMA node of the CPU this runs on
 *
 * Return: the node; 0 when the kernel won't say.
 */
uint32_t nvx_cpu_node(void)
{
	unsigned int cpu, node;

	if (syscall(SYS_getcpu, &cpu, &node, NULL))
		return 0;
	return node;
}

/**
 * nvx_wait_flag() - wait for another thread to set a flag
 * @flag: 0 until set; positive: ready, negative: -errno.
 * @timeout_ns: give up after this long.
 *
 * Polls once a millisecond.
 *
 * Return: 0, the flag's negative value, or -ETIMEDOUT.
 */
int nvx_wait_flag(const int *flag, uint64_t timeout_ns)
{
	struct timespec ms = { 0, NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + timeout_ns;
	int r;

	while (!(r = __atomic_load_n(flag, __ATOMIC_ACQUIRE))) {
		if (nvx_now_ns() > end)
			return -ETIMEDOUT;
		nanosleep(&ms, NULL);
	}
	return r < 0 ? r : 0;
}

/**
 * nvx_errno_why_find() - what nvx means by an errno of a request
 * @table: the explanations; an entry with req 0 is about any request.
 * @n: how many.
 * @req: the ioctl request.
 * @err: the positive errno.
 *
 * Return: the first explanation of @table for @req and @err, or NULL.
 */
const char *nvx_errno_why_find(const struct nvx_errno_why *table, size_t n,
			       unsigned long req, int err)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (table[i].err == err && (!table[i].req || table[i].req == req))
			return table[i].why;
	return NULL;
}

/**
 * nvx_nofile_max() - room for @want open files
 * @want: the descriptors the caller will hold at most.
 *
 * A VMM of many user VMs holds six fds per VM. The soft RLIMIT_NOFILE
 * is raised to the hard one; when that is below @want, both are raised
 * to @want, which needs CAP_SYS_RESOURCE (and @want at most
 * /proc/sys/fs/nr_open).
 *
 * Return: 0, or -errno when the limit stays below @want.
 */
int nvx_nofile_max(unsigned long want)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return -errno;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want) {
		struct rlimit up = { want, want };

		if (!setrlimit(RLIMIT_NOFILE, &up))
			return 0;
	}
	if (r.rlim_cur != r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &r))
			return -errno;
	}
	return r.rlim_cur >= want ? 0 : -EMFILE;
}

/**
 * nvx_file_num() - a number from a text file of "key: value" lines
 * @path: the file (/proc/meminfo, /proc/self/fdinfo/N).
 * @key: what the line starts with, its colon included ("MemAvailable:").
 *
 * Return: the number after @key on the first line that starts with it,
 * or -1.
 */
long long nvx_file_num(const char *path, const char *key)
{
	size_t n = strlen(key);
	char line[256], *end;
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, n))
			continue;
		v = strtoll(line + n, &end, 10);
		if (end == line + n)
			v = -1;
		break;
	}
	fclose(f);
	return v;
}
