/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_pool.h - /dev/nvx, the pool and grants: part of libnvx
 * (lib/pool.c). Each function returns 0 or -errno and prints nothing;
 * nvx_pool_strerror() explains an errno.
 */
#ifndef NVX_POOL_LIB_H
#define NVX_POOL_LIB_H

#include <stdbool.h>
#include <stdint.h>
#include <nvx/nvx.h>
#include <nvx/pool.h>

#define NVX_DEFAULT_DEVICE	"/dev/nvx"

/* A piece, the unit the pool counts, grants and maps in. */
#define NVX_PIECE_BYTES		(1ULL << NVX_POOL_PIECE_SHIFT)

int nvx_dev_open(const char *path);
int nvx_pool_stats_get(int nvx_fd, uint32_t node, struct nvx_pool_stats *s);
int nvx_pool_resize(int nvx_fd, bool grow, uint32_t node, uint64_t bytes,
		    uint32_t chunk_shift, uint64_t *done);
int nvx_grant_new(int nvx_fd, uint32_t node, uint64_t bytes, uint32_t flags,
		  int *fd);
int nvx_grant_info_get(int grant_fd, struct nvx_grant_info *info);
const char *nvx_pool_explain(unsigned long req, int err);
const char *nvx_pool_strerror(unsigned long req, int err);

#endif /* NVX_POOL_LIB_H */
