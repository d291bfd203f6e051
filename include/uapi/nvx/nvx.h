/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nvx: the /dev/nvx control device.
 *
 * Every nvx object is reached through /dev/nvx. This header holds the
 * core ioctls that every nvx kernel has; each capability adds its own
 * header beside this one and its own ioctl numbers in the ranges below.
 *
 * ABI rules (Documentation/nvx/abi.rst has the long form):
 *
 *  - Every argument struct has fixed-width fields and explicit padding.
 *  - Every struct has a @flags field; unknown bits fail with -EINVAL.
 *  - A field named @reserved (or an array of them) is "in: must be 0":
 *    nonzero fails with -EINVAL, and the kernel never writes it. It is
 *    room for a later field. Padding in shared memory (rings, control
 *    pages) is named pad: 0 when written, ignored when read.
 *  - Structs are extensible. The size encoded in the ioctl number
 *    (_IOC_SIZE) is the size the caller knows. The kernel accepts a
 *    smaller size down to the first published version of the struct
 *    (-EINVAL below that) and zero-fills the fields the caller does not
 *    know; it accepts a larger size when every byte it does not know is
 *    zero (-E2BIG otherwise), as copy_struct_from_user() defines. Output
 *    is written back only up to the smaller of the two sizes.
 *  - An ioctl number nvx does not know fails with -ENOTTY.
 */
#ifndef _UAPI_NVX_NVX_H
#define _UAPI_NVX_NVX_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Registered in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define NVX_IOC_MAGIC		0xB9

/*
 * ioctl number ranges, one per capability:
 *   0x00-0x0f core (this header)
 *   0x10-0x2f pool and grants
 *   0x30-0x4f user VMs and endpoints
 *   0x50-0x6f user interrupts
 *   0x70-0x8f shared RX queues
 */

/* The ABI version. The major number changes only on a break. */
#define NVX_ABI_MAJOR		2
#define NVX_ABI_MINOR		6

/**
 * struct nvx_version - NVX_IOC_VERSION argument
 * @flags: in: must be 0.
 * @reserved: in: must be 0.
 * @abi_major: out: NVX_ABI_MAJOR of the running kernel.
 * @abi_minor: out: NVX_ABI_MINOR of the running kernel.
 * @kernel_version: out: LINUX_VERSION_CODE of the running kernel.
 * @reserved2: in: must be 0.
 *
 * The one struct whose layout never changes, in any ABI major version:
 * a tool built for another major still finds @abi_major where it
 * expects it, and can tell that the ABI broke.
 */
struct nvx_version {
	__u32 flags;
	__u32 reserved;
	__u32 abi_major;
	__u32 abi_minor;
	__u32 kernel_version;
	__u32 reserved2;
};

/*
 * Capabilities this kernel provides (struct nvx_features.features).
 * A bit is set only while the capability's code is loaded and ready to
 * use (the module that provides it registered its ioctls).
 */
#define NVX_FEAT_CORE		_BITULL(0)	/* /dev/nvx and these ioctls */
#define NVX_FEAT_POOL		_BITULL(1)	/* memory pool and grants */
#define NVX_FEAT_UVM		_BITULL(2)	/* user VMs, PMIO fast path */
#define NVX_FEAT_UINTR		_BITULL(3)	/* user-interrupt delivery */
#define NVX_FEAT_SRQ		_BITULL(4)	/* shared multi-packet RX queues */
/* Bit 5 is retired (ABI 1.x's never-set SRQ_MLX5); it is not reused. */

/*
 * Facts about the machine (struct nvx_features.hw), read at boot from
 * CPUID. They say what the hardware offers, not what nvx uses.
 */
#define NVX_HW_UINTR		_BITULL(0)	/* CPUID.(7,0):EDX[5] */
#define NVX_HW_VMX		_BITULL(1)	/* Intel VT-x */
#define NVX_HW_SVM		_BITULL(2)	/* AMD-V */
#define NVX_HW_HYPERVISOR	_BITULL(3)	/* running as a guest */

/**
 * struct nvx_features - NVX_IOC_FEATURES argument
 * @flags: in: must be 0.
 * @reserved: in: must be 0.
 * @features: out: NVX_FEAT_* bits.
 * @hw: out: NVX_HW_* bits.
 */
struct nvx_features {
	__u32 flags;
	__u32 reserved;
	__u64 features;
	__u64 hw;
};

#define NVX_IOC_VERSION		_IOWR(NVX_IOC_MAGIC, 0x00, struct nvx_version)
#define NVX_IOC_FEATURES	_IOWR(NVX_IOC_MAGIC, 0x01, struct nvx_features)

#endif /* _UAPI_NVX_NVX_H */
