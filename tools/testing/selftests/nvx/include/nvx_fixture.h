/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fixtures of every nvx selftest group share. The harness's
 * assertions work only in the program that includes kselftest_harness.h,
 * so this lives in a header, not in lib/.
 */
#ifndef NVX_FIXTURE_H
#define NVX_FIXTURE_H

#include "kselftest_harness.h"
#include "nvx_test.h"

/*
 * For the FIXTURE_SETUP() of a group that needs @feature (an NVX_FEAT_*
 * bit): open /dev/nvx into *@fd. nvx kernels have /dev/nvx, so a device
 * that cannot be opened or asked for its features fails the test. Returns
 * false when the kernel lacks @feature: the caller then SKIP()s, and so
 * every test of the group reports SKIP. Every group's fixture uses it, so
 * that they agree.
 */
static inline bool nvx_require_feature(struct __test_metadata *_metadata,
				       int *fd, uint64_t feature)
{
	int has;

	*fd = nvx_open();
	ASSERT_LE(0, *fd) TH_LOG("open " NVX_DEV ": %s", strerror(-*fd));
	has = nvx_has_feature(*fd, feature);
	ASSERT_LE(0, has) TH_LOG("NVX_IOC_FEATURES: %s", strerror(-has));
	return has;
}

#endif /* NVX_FIXTURE_H */
