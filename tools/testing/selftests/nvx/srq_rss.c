// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": RSS.
 *
 * Flows spread over queues that share one buffer pool, and the RSS
 * indirection table (NVX_SRQ_IOC_STEER).
 */
#include "srq_fixture.h"

#define NR_FLOWS	256

/*
 * Pop every completion of @s's queues; check each frame and the packing
 * (@t: what each queue was filling), record each flow's queue in @flow_q
 * (-1: not seen yet; a flow seen on another queue than before is an
 * error) and which queue holds each buffer in @buf_q. Returns the number
 * of frames, or -1 on an error.
 */
static int drain_flows(struct __test_metadata *_metadata, const struct nic *n,
		       const struct srq *s, struct qtrack *t, int *flow_q,
		       int *buf_q, unsigned int *per_q)
{
	struct nvx_srq_cqe e;
	struct tag tag;
	uint32_t q;
	int frames = 0, bad = 0, f;

	for (q = 0; q < s->c.params.nr_queues; q++) {
		per_q[q] = 0;
		while (cq_pop(s, q, &e)) {
			if (!track(&t[q], &e, s->spb)) {
				TH_LOG("queue %u: misplaced: buf %u stride %u+%u flags %#x",
				       q, e.buf, e.stride, e.strides, e.flags);
				bad++;
			}
			if (e.buf < s->c.params.nr_bufs) {
				if (buf_q[e.buf] >= 0 && buf_q[e.buf] != (int)q) {
					TH_LOG("buffer %u on queues %d and %u",
					       e.buf, buf_q[e.buf], q);
					bad++;
				}
				buf_q[e.buf] = q;
			}
			if (e.flags & NVX_SRQ_CQE_FILLER)
				continue;
			if (!cqe_frame_ok(n, s, &e, &tag)) {
				TH_LOG("queue %u: bad frame in buffer %u stride %u",
				       q, e.buf, e.stride);
				bad++;
				continue;
			}
			f = tag.sport - SPORT;
			if (f < 0 || f >= NR_FLOWS) {
				bad++;
				continue;
			}
			if (flow_q[f] >= 0 && flow_q[f] != (int)q) {
				TH_LOG("flow %d on queues %d and %u", f,
				       flow_q[f], q);
				bad++;
			}
			flow_q[f] = q;
			per_q[q]++;
			frames++;
		}
	}
	return bad ? -1 : frames;
}

static void fill_ints(int *a, int n, int v)
{
	while (n--)
		a[n] = v;
}

/*
 * 256 flows over 4 queues: every queue gets frames, a flow stays on its
 * queue, all buffers come from the one pool and no buffer serves two
 * queues; per-queue and total counters agree.
 */
SRQ_TEST(rss_spreads_flows)
{
	struct nvx_srq_params p = { .nr_queues = 4 };
	int flow_q[NR_FLOWS], buf_q[NVX_SRQ_DEF_NR_BUFS];
	struct nvx_srq_stats st, qst;
	struct srq *s = &self->s;
	unsigned int per_q[4], q;
	struct qtrack t[4];
	uint64_t sum = 0;
	int i, round;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(4u, s->c.params.nr_rel_rings);
	track_init(t, 4);
	fill_ints(flow_q, NR_FLOWS, -1);
	fill_ints(buf_q, NVX_SRQ_DEF_NR_BUFS, -1);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NR_FLOWS; i++)
			ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i,
						round));
		ASSERT_EQ(0, wait_accounted(s, (round + 1) * NR_FLOWS, &st));
		EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
						flow_q, buf_q, per_q));
		for (q = 0; q < 4; q++)
			EXPECT_LT(0u, per_q[q]) TH_LOG("queue %u got nothing",
						       q);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 2u * NR_FLOWS),
			 SRQ_STAT(nr_queues, 4u));
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(NVX_SRQ_DEF_NR_BUFS,
		  st.bufs_posted + st.bufs_filling + st.bufs_held);
	EXPECT_LE(st.bufs_filling, 4u);
	for (q = 0; q < 4; q++) {
		ASSERT_EQ(0, srq_stats(s, q, &qst));
		EXPECT_EQ(qst.rx_packets, cq_prod(s, q));
		sum += qst.rx_packets;
	}
	EXPECT_EQ(st.rx_packets, sum);
	EXPECT_EQ(-EINVAL, srq_stats(s, 4, &qst));
	EXPECT_EQ(-EINVAL, srq_stats(s, NVX_SRQ_MAX_QUEUES, &qst));
}

/*
 * STEER replaces the indirection table: all flows to queue 2, then
 * entry i to queue i % 2 (a flow that went to queue q with the default
 * table, entry i to i % 4, now goes to q % 2). Bad tables change nothing.
 */
SRQ_TEST(steer_table)
{
	struct nvx_srq_params p = { .nr_queues = 4 };
	int flow_q[NR_FLOWS], q0[NR_FLOWS], buf_q[NVX_SRQ_DEF_NR_BUFS];
	uint16_t table[NVX_SRQ_RSS_ENTRIES + 1];
	struct nvx_srq_steer bad = { .nr_entries = NVX_SRQ_RSS_ENTRIES };
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	unsigned int per_q[4];
	struct qtrack t[4];
	int i, round, sent = 0;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	fill_ints(buf_q, NVX_SRQ_DEF_NR_BUFS, -1);
	track_init(t, 4);

	/* the default table: remember each flow's queue */
	fill_ints(q0, NR_FLOWS, -1);
	for (i = 0; i < NR_FLOWS; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 0));
	sent += NR_FLOWS;
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	ASSERT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t, q0,
					buf_q, per_q));

	/* bad tables */
	for (i = 0; i <= NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = 2;
	bad.table = (uintptr_t)table;
	bad.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &bad));
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES - 1));
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES + 1));
	EXPECT_EQ(-EINVAL, srq_steer(s, table, 0));
	EXPECT_EQ(-EFAULT, srq_steer(s, (uint16_t *)8, NVX_SRQ_RSS_ENTRIES));
	table[77] = 4;
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	table[77] = 0xffff;
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	table[77] = 2;

	/* the old table still holds */
	for (i = 0; i < NR_FLOWS; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 1));
	sent += NR_FLOWS;
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	fill_ints(flow_q, NR_FLOWS, -1);
	EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
					flow_q, buf_q, per_q));
	EXPECT_EQ(0, memcmp(flow_q, q0, sizeof(q0)));

	/* everything to queue 2 */
	ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	for (i = 0; i < NR_FLOWS; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 2));
	sent += NR_FLOWS;
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	EXPECT_EQ(0u, cq_pending(s, 0) + cq_pending(s, 1) + cq_pending(s, 3));
	fill_ints(flow_q, NR_FLOWS, -1);
	EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
					flow_q, buf_q, per_q));
	EXPECT_EQ(NR_FLOWS, per_q[2]);

	/* entry i to queue i % 2 */
	for (round = 3; round < 5; round++) {
		for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
			table[i] = i % 2;
		ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
		for (i = 0; i < NR_FLOWS; i++)
			ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i,
						round));
		sent += NR_FLOWS;
		ASSERT_EQ(0, wait_accounted(s, sent, &st));
		fill_ints(flow_q, NR_FLOWS, -1);
		EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
						flow_q, buf_q, per_q));
		EXPECT_EQ(0u, per_q[2] + per_q[3]);
		for (i = 0; i < NR_FLOWS; i++)
			EXPECT_EQ(q0[i] % 2, flow_q[i]) TH_LOG("flow %d", i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ((uint64_t)sent, st.rx_packets);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
}

TEST_HARNESS_MAIN
