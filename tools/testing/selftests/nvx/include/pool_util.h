/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pool and grant helpers of the nvx selftests (lib/pool_util.c): the
 * pool's accounting and its resizing, grants and their mappings. Used by
 * the groups that need pool memory (pool, srq, uvm).
 */
#ifndef NVX_POOL_UTIL_H
#define NVX_POOL_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nvx/pool.h>

#include "nvx_test.h"

#define CHUNK		(1ULL << NVX_POOL_PIECE_SHIFT)
#define BLOCK		(1ULL << NVX_POOL_BLOCK_SHIFT)
#define POOL_CHUNKS	16
#define PAGE		4096UL
#define PARAMS		"/sys/module/nvx/parameters/"
#define GUP_TEST	"/sys/kernel/debug/gup_test"
#define TRACEFS		"/sys/kernel/tracing/"

/* A thread of racer_thread(): its counts are out. */
struct racer {
	int fd;
	int id;
	int rounds;
	int errors;
	int enospc;
};

int pool_stats(int fd, struct nvx_pool_stats *s);
int pool_resize(int fd, unsigned long cmd, uint64_t bytes,
		uint32_t node, uint64_t *done);
int wait_scrubbed(int fd);
int wait_granted(int fd, const struct nvx_pool_stats *start);
int grant(int fd, uint64_t bytes, uint32_t flags, uint64_t *granted);
void *map_grant(int gfd, size_t len);
int write_param(const char *name, const char *val);
int read_param(const char *name, char *buf, size_t size);
bool all_bytes(const unsigned char *p, size_t len, unsigned char c);
long smaps_kb(const void *start, const char *field);
void tag_pages(unsigned char *p, size_t len, unsigned long first);
bool pages_tagged(const unsigned char *p, size_t len,
		  unsigned long first);
void *racer_thread(void *arg);

#endif /* NVX_POOL_UTIL_H */
