// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": the buffer life cycle.
 *
 * A buffer is reused only after its last stride is released; refill at
 * the low-water mark; garbage in the release rings.
 */
#include "srq_fixture.h"

#define REL_THREADS	4

/*
 * The whole pool filled, then given back by four threads on different
 * CPUs, each with its own release ring, in shuffled order, some entries
 * covering two completions, RELEASE called by all of them concurrently:
 * every buffer is posted again and the pool takes a full load again.
 * The low-water mark is the whole pool, so every RELEASE refills.
 */
SRQ_TEST(release_threads_out_of_order)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16, .nr_rel_rings = REL_THREADS,
		.low_water = 16 * 64,
	};
	struct nvx_srq_rel ents[256], per[REL_THREADS][256];
	struct releaser r[REL_THREADS];
	pthread_t th[REL_THREADS];
	struct nvx_srq_release out;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e[256];
	struct srq *s = &self->s;
	uint64_t released = 0, garbage = 0;
	unsigned int seed = 42;
	int cpus[REL_THREADS], ncpu, n = 0, i, j, k;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ((uint32_t)REL_THREADS, s->c.params.nr_rel_rings);
	ASSERT_EQ(0, send_frames(&self->nic, 256, 1024, SPORT));
	ASSERT_EQ(256u, cq_wait(s, 0, 256));
	for (i = 0; i < 256; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		expect_frame(_metadata, &self->nic, s, &e[i], 1024, SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(bufs_held, 16u),
			 SRQ_STAT(bufs_posted, 0u),
			 SRQ_STAT(posted_strides, 0u));
	/* the pool is full: one more is dropped */
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 256));
	ASSERT_EQ(0, wait_accounted(s, 257, &st));
	EXPECT_EQ(1u, st.drops_no_buf);

	/* per buffer, completions 16k..16k+15; some entries cover two */
	for (i = 0; i < 256; i++) {
		ents[n].buf = e[i].buf;
		ents[n].strides = e[i].strides;
		ents[n].flags = 0;
		if (i % 3 == 1 && i % 16 != 15 && e[i + 1].buf == e[i].buf) {
			ents[n].strides += e[i + 1].strides;
			i++;
		}
		n++;
	}
	for (i = n - 1; i > 0; i--) {
		struct nvx_srq_rel tmp;

		j = rand_r(&seed) % (i + 1);
		tmp = ents[i];
		ents[i] = ents[j];
		ents[j] = tmp;
	}

	ncpu = allowed_cpus(cpus, REL_THREADS);
	if (ncpu < 2)
		TH_LOG("one CPU: the release threads share it");
	for (k = 0; k < REL_THREADS; k++) {
		r[k] = (struct releaser){
			.s = s, .ring = k, .ents = per[k],
			.cpu = ncpu ? cpus[k % ncpu] : -1,
		};
		for (i = k; i < n; i += REL_THREADS)
			per[k][r[k].n++] = ents[i];
	}
	for (k = 0; k < REL_THREADS; k++)
		ASSERT_EQ(0, pthread_create(&th[k], NULL, releaser_thread,
					    &r[k]));
	for (k = 0; k < REL_THREADS; k++) {
		pthread_join(th[k], NULL);
		EXPECT_EQ(0, r[k].err) TH_LOG("release thread %d", k);
		released += r[k].released;
		garbage += r[k].garbage;
	}
	ASSERT_EQ(0, srq_release(s, &out));
	released += out.released;
	garbage += out.garbage;
	EXPECT_EQ((uint64_t)n, released);
	EXPECT_EQ(0u, garbage);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(released, (uint64_t)n),
			 SRQ_STAT(release_garbage, 0u),
			 SRQ_STAT(bufs_returned, 16u),
			 SRQ_STAT(bufs_posted, 16u), SRQ_STAT(bufs_held, 0u),
			 SRQ_STAT(bufs_filling, 0u),
			 SRQ_STAT(posted_strides, 16u * 64));
	for (k = 0; k < REL_THREADS; k++)
		EXPECT_EQ(rel_hdr(s, k)->prod, rel_hdr(s, k)->cons);

	/* a full load lands again */
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 1000 + i));
	ASSERT_EQ(256u, cq_wait(s, 0, 256));
	for (i = 0; i < 256; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[0]));
		expect_frame(_metadata, &self->nic, s, &e[0], 1024, SPORT,
			     1000 + i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.drops_no_buf);
}

/*
 * One frame held while the pool cycles three times over: its buffer is
 * never reused and its bytes never change. Once the frame is released
 * the buffer goes back, poisoned with 0x6b, and is reused.
 */
SRQ_TEST(reuse_after_last_release)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_POISON, .nr_queues = 1, .nr_bufs = 8,
		.low_water = 8 * 64,
	};
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e, h0;
	struct qtrack t;
	struct srq *s = &self->s;
	unsigned char held[1024];
	const unsigned char *hb;
	uint64_t returned;
	uint32_t h, seq, reused = 0;
	int hits = 0, i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(NVX_SRQ_POISON, s->c.params.flags);
	track_init(&t, 1);
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &h0));
	ASSERT_TRUE(track(&t, &h0, s->spb));
	expect_frame(_metadata, &self->nic, s, &h0, 1024, SPORT, 0);
	h = h0.buf;
	hb = s->bufs + (size_t)h * s->c.params.buf_size;
	memcpy(held, frame_at(s, &h0), sizeof(held));

	/* 15 more fill it; after that it must not come back */
	for (seq = 1; seq < 16 + 3 * 8 * 16; seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		EXPECT_TRUE(track(&t, &e, s->spb));
		if (!expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT,
				  seq))
			break;
		if (seq < 16) {
			EXPECT_EQ(h, e.buf);
			EXPECT_EQ(seq * 4, e.stride);
		} else if (e.buf == h) {
			hits++;
		}
		ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
		ASSERT_EQ(0, srq_release(s, &rel));
		EXPECT_EQ(0u, rel.garbage);
	}
	EXPECT_EQ(0, hits) TH_LOG("the held buffer %u was reused %d times",
				  h, hits);
	EXPECT_EQ(0, memcmp(held, hb, sizeof(held)));
	for (i = 1; i < 16; i++) {
		e = h0;
		e.stride = i * 4;
		EXPECT_TRUE(bytes_match(&self->nic, s, &e, 1024, SPORT, i))
			TH_LOG("released frame %d of the held buffer changed", i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(1u, st.bufs_held);
	returned = st.bufs_returned;

	/* the last reference goes: the buffer is returned, poisoned */
	ASSERT_EQ(0, rel_push(s, 0, h, h0.strides, 0));
	expect_release(_metadata, s, 1u, 0u);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(bufs_returned, returned + 1),
			 SRQ_STAT(bufs_held, 0u));
	for (i = 0; i < (int)s->c.params.buf_size; i++)
		if (hb[i] != POISON_BYTE)
			break;
	EXPECT_EQ((int)s->c.params.buf_size, i)
		TH_LOG("byte %d of the returned buffer is %#x", i, hb[i]);

	/* and it is reused */
	for (; seq < 16 + 5 * 8 * 16 && !reused; seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		EXPECT_TRUE(track(&t, &e, s->spb));
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq);
		if (e.buf == h) {
			reused = 1;
			EXPECT_EQ(0, e.stride);
			/* the rest of it still shows the poison */
			EXPECT_EQ(POISON_BYTE, hb[1024]);
			EXPECT_EQ(POISON_BYTE, hb[s->c.params.buf_size - 1]);
		}
		ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
		ASSERT_EQ(0, srq_release(s, NULL));
	}
	EXPECT_EQ(1u, reused);
}

/*
 * Refill at the low-water mark (512 of 1024 strides): at the mark,
 * released buffers stay held, even through RELEASE; one frame below it,
 * exactly one refill returns them. Then, without any RELEASE call, the
 * receive path takes the release ring's entries at its next refill,
 * and not before the pool crosses the mark again.
 */
SRQ_TEST(refill_at_low_water)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16, .low_water = 512,
	};
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	uint32_t bufs[8], cons0;
	uint64_t released0;
	int i, seq = 0, at = -1;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(512u, s->c.params.low_water);

	/* half the pool: at the mark, not below it */
	for (i = 0; i < 128; i++, seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq);
		if (i % 16 == 0)
			bufs[i / 16] = e.buf;
		EXPECT_EQ(bufs[i / 16], e.buf);
	}
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, rel_push(s, 0, bufs[i], 64, 0));
	expect_release(_metadata, s, 8u, 0u);
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(0u, rel.released);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(refills, 0u),
			 SRQ_STAT(bufs_returned, 0u), SRQ_STAT(bufs_held, 8u),
			 SRQ_STAT(bufs_posted, 8u), SRQ_STAT(bufs_filling, 0u),
			 SRQ_STAT(posted_strides, 512u),
			 SRQ_STAT(released, 8u));

	/* one frame more: below the mark; one refill returns all eight */
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq++);
	ASSERT_EQ(0, srq_release(s, &rel));
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(refills, 1u),
			 SRQ_STAT(bufs_returned, 8u),
			 SRQ_STAT(bufs_posted, 15u), SRQ_STAT(bufs_filling, 1u),
			 SRQ_STAT(bufs_held, 0u));
	EXPECT_LE(15u * 64, st.posted_strides);

	/*
	 * No more RELEASE calls: frames are released through the ring only.
	 * The frame just received starts a buffer; 15 more fill it, 7 more
	 * buffers bring the pool to the mark; the frame after that (number
	 * 127 from here) takes it below, and the receive path refills.
	 */
	ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
	cons0 = __atomic_load_n(&rel_hdr(s, 0)->cons, __ATOMIC_ACQUIRE);
	released0 = st.released;
	usleep(50000);	/* the last refill is jiffies ago */
	for (i = 0; i < 300; i++, seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq);
		ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
		ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
		if (st.refills > 1) {
			at = i;
			break;
		}
	}
	EXPECT_LE(127, at) TH_LOG("refilled above the mark, at frame %d", at);
	EXPECT_EQ(2u, st.refills);
	EXPECT_NE(cons0, __atomic_load_n(&rel_hdr(s, 0)->cons,
					 __ATOMIC_ACQUIRE));
	EXPECT_LT(released0, st.released);
	EXPECT_LE(16u, st.bufs_returned);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(16u, st.bufs_posted + st.bufs_filling);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(0u, st.release_garbage);
}

/*
 * Garbage in a release ring is counted and ignored, each kind of it; the
 * valid entries of the same batch still count. A release ring whose
 * prod is more than its size ahead is garbage as a whole; fixed, the
 * ring works again.
 */
SRQ_TEST(garbage_releases)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e[3];
	struct nvx_srq_ring *rh;
	struct srq *s = &self->s;
	uint32_t a, b, cons;
	uint64_t garbage;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frames(&self->nic, 3, 128, SPORT));
	ASSERT_EQ(3u, cq_wait(s, 0, 3));
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		expect_frame(_metadata, &self->nic, s, &e[i], 128, SPORT, i);
	}
	a = e[0].buf;
	b = (a + 1) % s->c.params.nr_bufs;	/* posted, never filled */

	ASSERT_EQ(0, rel_push(s, 0, s->c.params.nr_bufs, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));		/* valid */
	ASSERT_EQ(0, rel_push(s, 0, a, 0, 0));		/* no strides */
	ASSERT_EQ(0, rel_push(s, 0, a, 4, 0));		/* 2 unreleased */
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 1));		/* flags */
	ASSERT_EQ(0, rel_push(s, 0, b, 1, 0));		/* posted buffer */
	ASSERT_EQ(0, rel_push(s, 0, 0xffffffffU, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));		/* valid */
	expect_release(_metadata, s, 8u, 6u);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(release_garbage, 6u),
			 SRQ_STAT(released, 8u));

	/* the two valid ones counted: one stride is left, then none */
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));
	expect_release(_metadata, s, 2u, 1u);

	/* prod more than rel_entries ahead of cons: nothing is taken */
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	garbage = st.release_garbage;
	rh = rel_hdr(s, 0);
	cons = __atomic_load_n(&rh->cons, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rh->prod, cons + s->c.params.rel_entries + 1,
			 __ATOMIC_RELEASE);
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(0u, rel.released);
	EXPECT_EQ(cons, __atomic_load_n(&rh->cons, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_LT(garbage, st.release_garbage);
	/* behind cons is just as bad */
	__atomic_store_n(&rh->prod, cons - 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(0u, rel.released);
	EXPECT_EQ(cons, __atomic_load_n(&rh->cons, __ATOMIC_ACQUIRE));

	/* fixed: valid entries count again */
	__atomic_store_n(&rh->prod, cons, __ATOMIC_RELEASE);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 3));
	ASSERT_EQ(0, cq_next(s, 0, &e[0]));
	expect_frame(_metadata, &self->nic, s, &e[0], 128, SPORT, 3);
	ASSERT_EQ(0, rel_push(s, 0, e[0].buf, e[0].strides, 0));
	expect_release(_metadata, s, 1u, 0u);
}

/*
 * nr_cpu_ids, as the receive path's budget uses it: the highest possible
 * CPU plus one (the last number of /sys/devices/system/cpu/possible).
 */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256], *p;

	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p)
		return -1;
	p = line + strcspn(line, "\n");
	while (p > line && (p[-1] < '0' || p[-1] > '9'))
		p--;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atoi(p) + 1;
}

/*
 * The receive path's refill has a budget (max(1, 4096 / possible CPUs)
 * release entries): with four release rings of 1,024 entries full of
 * garbage, one frame below the mark takes part of them with BH off and
 * hands the rest to the set's refill work, which takes them all without
 * a RELEASE call. Before the budget the receive path took 1,024 entries
 * of every ring, and refilled (and poisoned) every pool, with BH off.
 */
SRQ_TEST(rx_refill_deferred)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16, .rel_entries = 1024,
		.nr_rel_rings = 4, .low_water = 16 * 64,
	};
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	int cpus = possible_cpus(), i, r, left = 0;

	ASSERT_LT(0, cpus);
	if (4096 / cpus >= 4 * 1024)
		SKIP(return, "one possible CPU: the budget takes all");
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(0, fdinfo_num(s->fd, "refills_deferred"));
	/*
	 * The last buffer stays posted (the frame goes to the first):
	 * every entry is garbage, and costs what a valid one does.
	 */
	for (r = 0; r < 4; r++)
		for (i = 0; i < 1024; i++)
			ASSERT_EQ(0, rel_push(s, r, 15, 1, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	for (i = 0; i < 30000; i++) {
		for (left = 0, r = 0; r < 4; r++)
			left += __atomic_load_n(&rel_hdr(s, r)->prod,
						__ATOMIC_RELAXED) -
				__atomic_load_n(&rel_hdr(s, r)->cons,
						__ATOMIC_ACQUIRE);
		if (!left)
			break;
		usleep(1000);
	}
	EXPECT_EQ(0, left) TH_LOG("entries not taken");
	EXPECT_LE(1, fdinfo_num(s->fd, "refills_deferred"));
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(4096u, st.released);
	EXPECT_EQ(4096u, st.release_garbage);
	TH_LOG("%d possible CPUs; longest receive-path refill %lld ns (TCG)",
	       cpus, fdinfo_num(s->fd, "refill_bh_max_ns"));
}

TEST_HARNESS_MAIN
