// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": drops.
 *
 * Frames dropped for want of a buffer or of room in a completion ring,
 * and their counters.
 */
#include "srq_fixture.h"

/*
 * 200 frames of 4 strides into 8 buffers of 64 strides, nothing
 * released: exactly the first 128 land, intact; 72 are counted as
 * drops. Giving the buffers back makes room again.
 */
SRQ_TEST(burst_drops_no_buf)
{
	struct nvx_srq_params p = { .nr_queues = 1, .nr_bufs = 8 };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e[128], x;
	struct qtrack t;
	struct srq *s = &self->s;
	int i, b;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frames(&self->nic, 200, 1024, SPORT));
	ASSERT_EQ(0, wait_accounted(s, 200, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 128u),
			 SRQ_STAT(drops_no_buf, 72u),
			 SRQ_STAT(drops_cq_full, 0u), SRQ_STAT(bufs_posted, 0u),
			 SRQ_STAT(bufs_filling, 0u), SRQ_STAT(bufs_held, 8u),
			 SRQ_STAT(posted_strides, 0u));
	ASSERT_EQ(0, srq_stats(s, 0, &st));
	EXPECT_EQ(72u, st.drops_no_buf);

	ASSERT_EQ(128u, cq_pending(s, 0));
	track_init(&t, 1);
	for (i = 0; i < 128; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		EXPECT_TRUE(track(&t, &e[i], s->spb));
		EXPECT_EQ(4, e[i].strides);
		expect_frame(_metadata, &self->nic, s, &e[i], 1024, SPORT, i);
	}

	/* one entry per buffer: 16 completions of 4 strides each */
	for (b = 0; b < 8; b++)
		ASSERT_EQ(0, rel_push(s, 0, e[b * 16].buf, 64, 0));
	expect_release(_metadata, s, 8u, 0u);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(bufs_returned, 8u),
			 SRQ_STAT(bufs_posted, 8u), SRQ_STAT(bufs_held, 0u),
			 SRQ_STAT(posted_strides, 512u));

	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 200));
	ASSERT_EQ(0, cq_next(s, 0, &x));
	EXPECT_EQ(0, x.stride);
	expect_frame(_metadata, &self->nic, s, &x, 1024, SPORT, 200);
}

/*
 * A completion ring without room drops frames (drops_cq_full), and so
 * does one whose consumer index is not sane (ahead of prod, or more
 * than its size behind); the ring works again once it is.
 */
SRQ_TEST(cq_full_drops)
{
	struct nvx_srq_params p = { .nr_queues = 1, .cq_entries = 16 };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	uint32_t prod;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(16u, s->c.params.cq_entries);
	ASSERT_EQ(0, send_frames(&self->nic, 20, 128, SPORT));
	ASSERT_EQ(0, wait_accounted(s, 20, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 16u),
			 SRQ_STAT(drops_cq_full, 4u),
			 SRQ_STAT(drops_no_buf, 0u));
	ASSERT_EQ(16u, cq_pending(s, 0));
	for (i = 0; i < 16; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		expect_frame(_metadata, &self->nic, s, &e, 128, SPORT, i);
	}

	/* room again */
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 20));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 128, SPORT, 20);

	/* cons ahead of prod */
	prod = cq_prod(s, 0);
	cq_set_cons(s, 0, prod + 1);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 21));
	ASSERT_EQ(0, wait_accounted(s, 22, &st));
	EXPECT_EQ(5u, st.drops_cq_full);
	EXPECT_EQ(prod, cq_prod(s, 0));

	/* cons more than the ring's size behind */
	cq_set_cons(s, 0, prod - 17);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 22));
	ASSERT_EQ(0, wait_accounted(s, 23, &st));
	EXPECT_EQ(6u, st.drops_cq_full);
	EXPECT_EQ(prod, cq_prod(s, 0));

	/* sane again */
	cq_set_cons(s, 0, prod);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 23));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 128, SPORT, 23);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 18u),
			 SRQ_STAT(drops_cq_full, 6u));
}

TEST_HARNESS_MAIN
