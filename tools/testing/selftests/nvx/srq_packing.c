// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": packing.
 *
 * The packing rules of a shared RX buffer queue set: strides, fillers
 * and truncation.
 */
#include "srq_fixture.h"

/*
 * A new set: its parameters come back with the defaults, its layout is
 * sane, its counters are zero; the first frame lands at stride 0 of a
 * buffer with its length and bytes; STATS, QUERY and INFO agree.
 */
SRQ_TEST(one_frame)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	const struct nvx_srq_params *cp = &self->s.c.params;
	const struct nvx_srq_layout *l = &self->s.c.layout;
	struct nvx_srq_stats st, qst;
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	long pg = sysconf(_SC_PAGESIZE);

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(0u, cp->flags);
	EXPECT_EQ(1u, cp->nr_queues);
	EXPECT_EQ(NVX_SRQ_DEF_NR_BUFS, cp->nr_bufs);
	EXPECT_EQ(NVX_SRQ_DEF_BUF_SIZE, cp->buf_size);
	EXPECT_EQ(NVX_SRQ_DEF_STRIDE, cp->stride_size);
	EXPECT_EQ(NVX_SRQ_DEF_CQ_ENTRIES, cp->cq_entries);
	EXPECT_EQ(NVX_SRQ_DEF_REL_ENTRIES, cp->rel_entries);
	EXPECT_EQ(1u, cp->nr_rel_rings);
	EXPECT_EQ(NVX_SRQ_DEF_NR_BUFS * 64 / 4, cp->low_water);
	EXPECT_EQ(0u, cp->reserved);
	EXPECT_LE(0, s->c.fd);

	/* the layout holds every ring and buffer, in whole pages */
	EXPECT_EQ(0u, l->ring_bytes % pg);
	EXPECT_EQ(0u, l->buf_bytes % pg);
	EXPECT_EQ(0u, l->buf_offset % pg);
	EXPECT_NE(0u, l->buf_offset);
	EXPECT_LE(sizeof(struct nvx_srq_ring) +
		  cp->cq_entries * sizeof(struct nvx_srq_cqe), l->cq_bytes);
	EXPECT_LE(sizeof(struct nvx_srq_ring) +
		  cp->rel_entries * sizeof(struct nvx_srq_rel), l->rel_bytes);
	EXPECT_LE(l->cq_offset + cp->nr_queues * l->cq_bytes, l->ring_bytes);
	EXPECT_LE(l->rel_offset + cp->nr_rel_rings * l->rel_bytes,
		  l->ring_bytes);
	EXPECT_TRUE(l->cq_offset + cp->nr_queues * l->cq_bytes <=
		    l->rel_offset ||
		    l->rel_offset + cp->nr_rel_rings * l->rel_bytes <=
		    l->cq_offset);
	EXPECT_LE((uint64_t)cp->nr_bufs * cp->buf_size, l->buf_bytes);
	EXPECT_EQ(0u, cq_hdr(s, 0)->prod);
	EXPECT_EQ(0u, cq_hdr(s, 0)->cons);
	EXPECT_EQ(0u, rel_hdr(s, 0)->prod);
	EXPECT_EQ(0u, rel_hdr(s, 0)->cons);

	/* nothing received yet, every buffer accounted for */
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(ifindex, (uint32_t)self->nic.ifindex),
			 SRQ_STAT(nr_queues, 1u), SRQ_STAT(rx_packets, 0u),
			 SRQ_STAT(rx_strides, 0u));
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(0u, st.released + st.release_garbage + st.refills);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(cp->nr_bufs, st.bufs_posted + st.bufs_filling);
	EXPECT_LE(st.posted_strides, cp->nr_bufs * s->spb);
	EXPECT_LE((cp->nr_bufs - 1) * s->spb, st.posted_strides);

	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	EXPECT_EQ(1u, cq_prod(s, 0));
	EXPECT_EQ(0, e.stride);
	EXPECT_EQ(1, e.strides);
	EXPECT_EQ(100u, e.len);
	expect_frame(_metadata, &self->nic, s, &e, 100, SPORT, 0);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 1u),
			 SRQ_STAT(rx_bytes, 100u), SRQ_STAT(rx_strides, 1u));
	EXPECT_EQ(0u, st.fillers + st.truncated);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(cp->nr_bufs, st.bufs_posted + st.bufs_filling + st.bufs_held);
	ASSERT_EQ(0, srq_stats(s, 0, &qst));
	expect_srq_stats(&qst, SRQ_STAT(rx_packets, 1u),
			 SRQ_STAT(rx_bytes, 100u));

	/* the same numbers through /dev/nvx */
	ASSERT_EQ(0, srq_query(self->fd, self->nic.ifindex, &qst));
	expect_srq_stats(&qst, SRQ_STAT(ifindex, (uint32_t)self->nic.ifindex),
			 SRQ_STAT(rx_packets, 1u), SRQ_STAT(rx_bytes, 100u),
			 SRQ_STAT(nr_queues, 1u));

	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	EXPECT_EQ(0, memcmp(&info.params, cp, sizeof(*cp)));
	EXPECT_EQ((uint32_t)getpid(), info.owner);
	EXPECT_EQ(0u, info.reserved);
}

/* 64 frames of up to 256 bytes fill one 16 KiB buffer, stride by stride. */
SRQ_TEST(small_frames_share_buffer)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_cqe e[64], next;
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	unsigned int len[64];
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 64; i++) {
		len[i] = i == 0 ? 256 : 64 + (i * 37) % 193;
		ASSERT_EQ(0, send_frame(&self->nic, len[i], SPORT, i));
	}
	ASSERT_EQ(64u, cq_wait(s, 0, 64));
	for (i = 0; i < 64; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		EXPECT_EQ(e[0].buf, e[i].buf);
		EXPECT_EQ(i, e[i].stride);
		EXPECT_EQ(1, e[i].strides);
		expect_frame(_metadata, &self->nic, s, &e[i], len[i], SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 64u),
			 SRQ_STAT(rx_strides, 64u), SRQ_STAT(fillers, 0u));
	/* every stride filled: the buffer waits for its releases */
	expect_srq_stats(&st, SRQ_STAT(bufs_held, 1u),
			 SRQ_STAT(bufs_filling, 0u));

	/* the buffer was full to the last stride: no filler, a new buffer */
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 64));
	ASSERT_EQ(0, cq_next(s, 0, &next));
	EXPECT_EQ(0, next.flags);
	EXPECT_NE(e[0].buf, next.buf);
	EXPECT_EQ(0, next.stride);
	expect_frame(_metadata, &self->nic, s, &next, 100, SPORT, 64);
	/* and the frames before are untouched */
	for (i = 0; i < 64; i++)
		EXPECT_TRUE(bytes_match(&self->nic, s, &e[i], len[i], SPORT, i));
}

/* A 1500-byte frame takes 6 strides; frames pack right behind it. */
SRQ_TEST(mtu_frame_six_strides)
{
	static const unsigned int len[] = { 1500, MAX_ETH_FRAME, 257, 256 };
	static const unsigned int stride[] = { 0, 6, 12, 14 };
	static const unsigned int strides[] = { 6, 6, 2, 1 };
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_cqe e[4];
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, send_frame(&self->nic, len[i], SPORT, i));
	ASSERT_EQ(4u, cq_wait(s, 0, 4));
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		EXPECT_EQ(e[0].buf, e[i].buf);
		EXPECT_EQ(stride[i], e[i].stride);
		EXPECT_EQ(strides[i], e[i].strides);
		expect_frame(_metadata, &self->nic, s, &e[i], len[i], SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_strides, 15u),
			 SRQ_STAT(rx_bytes, 1500u + MAX_ETH_FRAME + 257 + 256));
}

/*
 * 60 small frames leave 4 strides; a 1500-byte frame does not fit: a
 * filler closes the buffer and the frame starts the next one. The
 * filler's strides are the kernel's to release, not the instance's.
 */
SRQ_TEST(filler_at_buffer_end)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e, f;
	struct srq *s = &self->s;
	uint32_t a = 0;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frames(&self->nic, 60, 200, SPORT));
	ASSERT_EQ(0, send_frame(&self->nic, 1500, SPORT, 60));
	ASSERT_EQ(62u, cq_wait(s, 0, 62));
	for (i = 0; i < 60; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		if (!i)
			a = e.buf;
		EXPECT_EQ(a, e.buf);
		EXPECT_EQ(i, e.stride);
		expect_frame(_metadata, &self->nic, s, &e, 200, SPORT, i);
	}
	ASSERT_TRUE(cq_pop(s, 0, &f));
	EXPECT_EQ(NVX_SRQ_CQE_FILLER, f.flags);
	EXPECT_EQ(a, f.buf);
	EXPECT_EQ(60, f.stride);
	EXPECT_EQ(4, f.strides);
	EXPECT_EQ(0u, f.len);
	EXPECT_EQ(0, f.pad);
	ASSERT_TRUE(cq_pop(s, 0, &e));
	EXPECT_NE(a, e.buf);
	EXPECT_EQ(0, e.stride);
	EXPECT_EQ(6, e.strides);
	expect_frame(_metadata, &self->nic, s, &e, 1500, SPORT, 60);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 61u), SRQ_STAT(fillers, 1u),
			 SRQ_STAT(rx_strides, 70u), SRQ_STAT(bufs_held, 1u),
			 SRQ_STAT(bufs_filling, 1u));

	/* the 60 frame strides in one entry; the filler's are not ours */
	ASSERT_EQ(0, rel_push(s, 0, a, 60, 0));
	expect_release(_metadata, s, 1u, 0u);
	ASSERT_EQ(0, rel_push(s, 0, a, 4, 0));
	/* 7 strides of a buffer that has 6 filled */
	ASSERT_EQ(0, rel_push(s, 0, e.buf, 7, 0));
	ASSERT_EQ(0, rel_push(s, 0, e.buf, 6, 0));
	expect_release(_metadata, s, 3u, 2u);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(release_garbage, 2u),
			 SRQ_STAT(released, 4u));
}

/*
 * With 2 KiB buffers, a 3000-byte frame (the peer's MTU raised) does
 * not fit in any buffer: the partly used buffer is closed by a filler,
 * and the frame takes a whole fresh buffer, cut to 2048 bytes.
 */
SRQ_TEST(truncated_frame)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16,
		.buf_size = 2048, .stride_size = 256,
	};
	struct nvx_srq_cqe a, f, t, c;
	struct nvx_srq_stats st;
	struct srq *s = &self->s;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(8u, s->spb);
	if (sh("ip link set %s mtu 4000", self->nic.peer))
		SKIP(return, "the peer's MTU cannot be raised to 4000");
	/* in case the NIC checks its own MTU on receive as well */
	sh("ip link set %s mtu 4000 2>/dev/null", self->nic.name);

	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 3000, SPORT, 1));
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 2));
	ASSERT_EQ(4u, cq_wait(s, 0, 4));
	ASSERT_TRUE(cq_pop(s, 0, &a));
	ASSERT_TRUE(cq_pop(s, 0, &f));
	ASSERT_TRUE(cq_pop(s, 0, &t));
	ASSERT_TRUE(cq_pop(s, 0, &c));

	EXPECT_EQ(0, a.stride);
	expect_frame(_metadata, &self->nic, s, &a, 100, SPORT, 0);
	EXPECT_EQ(NVX_SRQ_CQE_FILLER, f.flags);
	EXPECT_EQ(a.buf, f.buf);
	EXPECT_EQ(1, f.stride);
	EXPECT_EQ(7, f.strides);

	EXPECT_EQ(NVX_SRQ_CQE_TRUNCATED, t.flags);
	EXPECT_NE(a.buf, t.buf);
	EXPECT_EQ(0, t.stride);
	EXPECT_EQ(8, t.strides);
	EXPECT_EQ(2048u, t.len);
	EXPECT_TRUE(bytes_match(&self->nic, s, &t, 3000, SPORT, 1));

	EXPECT_NE(a.buf, c.buf);
	EXPECT_NE(t.buf, c.buf);
	EXPECT_EQ(0, c.stride);
	expect_frame(_metadata, &self->nic, s, &c, 100, SPORT, 2);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 3u), SRQ_STAT(truncated, 1u),
			 SRQ_STAT(fillers, 1u));
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
}

TEST_HARNESS_MAIN
