/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fault group's sweep with its assertions (include/fault_util.h has
 * the sweep). Include it after a fixture header: it needs the harness.
 */
#ifndef NVX_FAULT_FIXTURE_H
#define NVX_FAULT_FIXTURE_H

#include "fault_util.h"

/*
 * Fail each point of @c in turn (with the knobs set and put back around
 * it when @arm; a fixture that set them passes false) and expect every
 * check to hold and at least one point. Returns the number of points.
 */
static inline unsigned int fault_sweep(struct __test_metadata *_metadata,
				       const struct fault_call *c, bool arm)
{
	struct fault_result res = { };
	int ret = arm ? fault_arm_setup() : 0;

	EXPECT_EQ(0, ret);
	if (ret)
		return 0;
	ret = fault_run(c, &res);
	if (arm)
		fault_arm_restore();
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points) TH_LOG("%s: no failure point", c->what);
	return res.points;
}

#endif /* NVX_FAULT_FIXTURE_H */
