// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": the per-thread timer.
 */
#include "uintr_fixture.h"

/*
 * A 5 ms periodic timer watched for a second from user mode. Under QEMU
 * TCG the guest clock can move in steps of a few ms and a tick that
 * finds its vector still pending merges, so the count may fall short:
 * accept 50% to 110% (+1) of elapsed / period.
 */
TEST_F(uintr, timer_periodic)
{
	unsigned long long ms, n, expect;
	uint64_t t0;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_timer(self->fd, 9, 0, 5 * MS));
	t0 = now_ns();
	spin_ns(SEC);
	ASSERT_EQ(0, do_timer(self->fd, 9, 0, 0));
	ms = (now_ns() - t0) / MS;
	n = handled_vec(9);
	expect = ms / 5;
	EXPECT_LE(expect / 2, n) TH_LOG("%llu ticks in %llu ms", n, ms);
	EXPECT_GE(expect * 11 / 10 + 1, n) TH_LOG("%llu ticks in %llu ms",
						  n, ms);
	EXPECT_EQ(n, handled());
}

/* period 0: one tick after first_ns, and no more. */
TEST_F(uintr, timer_one_shot)
{
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_timer(self->fd, 5, 20 * MS, 0));
	spin_ns(300 * MS);
	EXPECT_EQ(1ULL, handled_vec(5));
	EXPECT_EQ(1ULL, handled());
}

/*
 * A new timer replaces the old one; first = period = 0 stops it: after a
 * grace period no more ticks.
 */
TEST_F(uintr, timer_replace_and_stop)
{
	uint64_t n;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_timer(self->fd, 6, 0, 5 * MS));
	ASSERT_EQ(0, wait_vec(6, 3, WAIT_LONG, false));

	/* replaced by a one-shot on another vector */
	ASSERT_EQ(0, do_timer(self->fd, 7, 20 * MS, 0));
	spin_ns(50 * MS);
	n = handled_vec(6);
	spin_ns(300 * MS);
	EXPECT_EQ(n, handled_vec(6));
	EXPECT_EQ(1ULL, handled_vec(7));

	/* periodic again, then stopped */
	ASSERT_EQ(0, do_timer(self->fd, 6, 0, 5 * MS));
	ASSERT_EQ(0, wait_vec(6, n + 3, WAIT_LONG, false));
	ASSERT_EQ(0, do_timer(self->fd, 6, 0, 0));
	spin_ns(50 * MS);
	n = handled();
	spin_ns(300 * MS);
	EXPECT_EQ(n, handled());
}

/* Masked, ticks merge into one pending bit: one call on unmasking. */
TEST_F(uintr, timer_ticks_merge_while_masked)
{
	uint64_t n;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	nvx_uintr_clui();
	ASSERT_EQ(0, do_timer(self->fd, 8, 10 * MS, 10 * MS));
	usleep(200000);
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(1ULL << 8, my_page->pending);
	nvx_uintr_stui();
	n = handled_vec(8);
	EXPECT_EQ(0, do_timer(self->fd, 8, 0, 0));
	/* ~20 ticks went by; one more may land while unmasking */
	EXPECT_LE(1ULL, n);
	EXPECT_GE(2ULL, n);
}

TEST_F(uintr, timer_bad_args)
{
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, NVX_UINTR_VECTORS, MS, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, 0, 1));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, MS,
				    NVX_UINTR_MIN_PERIOD_NS - 1));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, NVX_UINTR_MAX_NS + 1, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, MS, NVX_UINTR_MAX_NS + 1));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, UINT64_MAX, 0));
	/* the limits themselves are fine (far away: nothing fires) */
	EXPECT_EQ(0, do_timer(self->fd, 1, NVX_UINTR_MAX_NS,
			      NVX_UINTR_MIN_PERIOD_NS));
	EXPECT_EQ(0, do_timer(self->fd, 1, NVX_UINTR_MAX_NS, NVX_UINTR_MAX_NS));
	EXPECT_EQ(0, do_timer(self->fd, 1, 0, 0));
	EXPECT_EQ(0ULL, handled());
}

TEST_HARNESS_MAIN
