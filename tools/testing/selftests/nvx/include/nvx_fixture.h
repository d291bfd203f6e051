/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fixtures of every nvx selftest group share. The harness's
 * assertions work only in the program that includes kselftest_harness.h,
 * so this lives in a header, not in lib/.
 */
#ifndef NVX_FIXTURE_H
#define NVX_FIXTURE_H

#include <nvx/pool.h>

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

/*
 * For the FIXTURE_TEARDOWN() of a group that grew the pool by @grown
 * bytes for its test: the pool stats @s show the grants and bytes of
 * @start again, the @grown bytes still in, and no byte lost.
 */
static inline void expect_pool_as_before(struct __test_metadata *_metadata,
					 const struct nvx_pool_stats *start,
					 uint64_t grown,
					 const struct nvx_pool_stats *s)
{
	EXPECT_EQ(start->grants_live, s->grants_live);
	EXPECT_EQ(start->granted_bytes, s->granted_bytes);
	EXPECT_EQ(start->total_bytes + grown, s->total_bytes);
	EXPECT_EQ(s->total_bytes, s->clean_bytes + s->granted_bytes);
}

#endif /* NVX_FIXTURE_H */
