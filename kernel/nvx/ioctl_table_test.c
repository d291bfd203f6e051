// SPDX-License-Identifier: GPL-2.0
/*
 * A compile-time test of NVX_IOCTL_OP(), not part of any module: built
 * only by `tools/nvx/vm check` (make kernel/nvx/ioctl_table_test.o
 * NVX_IOCTL_TABLE_TEST=y). As it is, the table below compiles; with one
 * of the NVX_BREAK_* macros defined, one entry is malformed the way a
 * slip in a real table would be, and the file must not compile.
 */
#include <linux/nvx.h>

struct nvx_test_arg {
	__u32 flags;
	__u32 reserved;
	__u64 value;
};

struct nvx_test_big {
	__u64 a, b, c;
};

#define NVX_TEST_BASE		0x60
#define NVX_TEST_IOC_A		_IOWR(NVX_IOC_MAGIC, 0x60, struct nvx_test_arg)
#define NVX_TEST_IOC_B		_IOWR(NVX_IOC_MAGIC, 0x61, struct nvx_test_arg)

static int nvx_test_ioc(struct nvx_ucmd *ucmd)
{
	return 0;
}

static const struct nvx_ioctl_op nvx_test_ops[] __maybe_unused = {
	NVX_IOCTL_OP(NVX_TEST_BASE, NVX_TEST_IOC_A, nvx_test_ioc,
		     struct nvx_test_arg, value, 0),
#if defined(NVX_BREAK_SIZE)
	/* the ioctl number encodes another struct's size */
	NVX_IOCTL_OP(NVX_TEST_BASE, NVX_TEST_IOC_B, nvx_test_ioc,
		     struct nvx_test_big, c, 0),
#elif defined(NVX_BREAK_MAGIC)
	/* not an nvx ioctl */
	NVX_IOCTL_OP(NVX_TEST_BASE, _IOWR('x', 0x61, struct nvx_test_arg),
		     nvx_test_ioc, struct nvx_test_arg, value, 0),
#elif defined(NVX_BREAK_MEMBER)
	/* the first version's last member is not a member */
	NVX_IOCTL_OP(NVX_TEST_BASE, NVX_TEST_IOC_B, nvx_test_ioc,
		     struct nvx_test_arg, nonexistent, 0),
#elif defined(NVX_BREAK_ORDER)
	/* a number below the table's base */
	NVX_IOCTL_OP(NVX_TEST_BASE,
		     _IOWR(NVX_IOC_MAGIC, 0x5f, struct nvx_test_arg),
		     nvx_test_ioc, struct nvx_test_arg, value, 0),
#else
	NVX_IOCTL_OP(NVX_TEST_BASE, NVX_TEST_IOC_B, nvx_test_ioc,
		     struct nvx_test_arg, value, 0),
#endif
};
