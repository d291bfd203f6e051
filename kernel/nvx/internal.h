/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx core: declarations shared by the files of kernel/nvx/.
 */
#ifndef _KERNEL_NVX_INTERNAL_H
#define _KERNEL_NVX_INTERNAL_H

#include <linux/types.h>

u64 nvx_features(void);

#endif /* _KERNEL_NVX_INTERNAL_H */
