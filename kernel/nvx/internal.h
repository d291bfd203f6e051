/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx core module: declarations shared by the files of nvx.ko.
 */
#ifndef _KERNEL_NVX_INTERNAL_H
#define _KERNEL_NVX_INTERNAL_H

#include <linux/nvx.h>

const struct nvx_ioctl_op *nvx_ioctl_op(const struct nvx_ioctl_range *range,
					unsigned int cmd);

#ifdef CONFIG_NVX_POOL
int nvx_pool_init(void);
void nvx_pool_exit(void);
#else
static inline int nvx_pool_init(void) { return 0; }
static inline void nvx_pool_exit(void) { }
#endif

#endif /* _KERNEL_NVX_INTERNAL_H */
