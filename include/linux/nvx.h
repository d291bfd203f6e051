/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx: interfaces between the parts of nvx inside the kernel.
 *
 * kernel/nvx/ is the core (built in or a module); arch/x86/nvx/ is always
 * built in when nvx is enabled, because its hooks sit on paths that a
 * module cannot reach (return to user mode, KVM exits).
 */
#ifndef _LINUX_NVX_H
#define _LINUX_NVX_H

#include <linux/types.h>

u64 nvx_arch_hw_features(void);

#endif /* _LINUX_NVX_H */
