// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": the lifetime under traffic.
 *
 * Close, NIC removal and exit racing frames.
 */
#include "srq_fixture.h"

#define RACE_ITERS	200
#define RACE_BUDGET_MS	25000		/* fewer sets on a very slow machine */
#define RACE_MIN_ITERS	20

/*
 * Pop every completion of @s (at most a ring's worth per queue: frames
 * keep coming) and give each frame back on its queue's release ring.
 * Returns the entries pushed, or -errno; @bad counts frames not whole.
 */
static int64_t release_popped(const struct nic *n, const struct srq *s,
			      uint64_t *bad)
{
	const struct nvx_srq_params *p = &s->c.params;
	struct nvx_srq_cqe e;
	struct tag tag;
	int64_t pushed = 0;
	uint32_t q, k;
	int ret;

	for (q = 0; q < p->nr_queues; q++) {
		for (k = 0; k < p->cq_entries && cq_pop(s, q, &e); k++) {
			if (e.flags & NVX_SRQ_CQE_FILLER)
				continue;
			if (!cqe_frame_ok(n, s, &e, &tag))
				(*bad)++;
			ret = rel_give(s, q % p->nr_rel_rings, e.buf,
				       e.strides);
			if (ret)
				return ret;
			pushed++;
		}
	}
	return pushed;
}

/* NVX_SRQ_IOC_TX of a small frame to the peer: 0 or -errno. */
static int tx_small(const struct nic *n, const struct srq *s)
{
	unsigned char f[60] = { 0 };
	struct nvx_srq_tx tx = { .len = sizeof(f), .addr = (uintptr_t)f };

	memcpy(f, n->peer_mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, n->mac, ETH_ALEN);
	put16(f + 12, ETH_P_LOCAL);
	return nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx);
}

/*
 * Two threads blast 64-byte frames of 128 flows into the NIC for the
 * whole test, while a small set (8 buffers, 2 queues) is created,
 * mapped, used a little (in turn nothing, RELEASE of what landed, STATS,
 * TX) and closed, 200 times (fewer if that takes longer than 25 s).
 * The last reference goes in close() or, in every other group of four
 * sets, in the last munmap(); either detaches the set before the call
 * returns, so every create succeeds at once: no -EBUSY, no retry (a
 * retry would hide a detach left for later). Frames that land
 * are whole, releases are never garbage, and at the end no set is left
 * on the NIC (the fixture then checks the pool).
 */
SRQ_TEST(racing_close)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 8, .cq_entries = 256,
		.rel_entries = 256,
	};
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	uint64_t end, sent, refused, bad = 0, released = 0;
	unsigned int landed = 0, tx_ok = 0, tx_refused = 0;
	int64_t pushed;
	int i, ret, err;

	ASSERT_EQ(0, blast_start(&self->blast, &self->nic));
	end = now_ms() + RACE_BUDGET_MS;
	for (i = 0; i < RACE_ITERS && now_ms() < end; i++) {
		ret = srq_open(self->fd, s, self->nic.ifindex, &p, 0);
		ASSERT_EQ(0, ret) TH_LOG("create %d: %s", i, strerror(-ret));
		if (cq_wait_any(s, 10))
			landed++;
		switch (i % 4) {
		case 1:
			pushed = release_popped(&self->nic, s, &bad);
			ASSERT_LE(0, pushed) TH_LOG("set %d: releasing: %s", i,
						    strerror(-pushed));
			ASSERT_EQ(0, srq_release(s, &rel));
			EXPECT_EQ(0u, rel.garbage);
			ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
			/* taken by this RELEASE or by a refill before it */
			expect_srq_stats(&st, SRQ_STAT(released, (uint64_t)pushed),
					 SRQ_STAT(release_garbage, 0u));
			released += pushed;
			break;
		case 2:
			ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
			expect_srq_stats(&st, SRQ_STAT(nr_queues, 2u),
					 SRQ_STAT(ifindex, (uint32_t)self->nic.ifindex));
			EXPECT_EQ(8u, st.bufs_posted + st.bufs_filling +
				  st.bufs_held);
			EXPECT_EQ(0u, st.release_garbage);
			break;
		case 3:
			/* this CPU's backlog may be full of frames: ENOBUFS */
			ret = tx_small(&self->nic, s);
			if (ret == -ENOBUFS)
				tx_refused++;
			else if (!ret)
				tx_ok++;
			EXPECT_TRUE(!ret || ret == -ENOBUFS)
				TH_LOG("set %d: TX: %s", i, strerror(-ret));
			break;
		}
		ret = srq_shut(s, (i / 4) % 2);
		ASSERT_EQ(0, ret) TH_LOG("set %d: close: %s", i,
					 strerror(-ret));
	}
	blast_stop(&self->blast);
	sent = blast_sent(&self->blast, &refused, &err);
	TH_LOG("%d sets, %u with frames; %llu frames sent (%llu refused), %llu released",
	       i, landed, (unsigned long long)sent,
	       (unsigned long long)refused, (unsigned long long)released);
	TH_LOG("TX: %u sent, %u refused", tx_ok, tx_refused);
	EXPECT_EQ(0, err) TH_LOG("sender: %s", strerror(-err));
	EXPECT_LE(RACE_MIN_ITERS, i);
	EXPECT_LT(0u, sent);
	EXPECT_LT(0u, landed);
	EXPECT_EQ(0u, bad);
	EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex, &st));
}

#define DEL_ROUNDS	6

/* When the closing side of link_del_races_close closes. */
enum {
	CLOSE_AT_ONCE,		/* as the deletion starts */
	CLOSE_IN_DETACH,	/* once the unregister took the set off */
	CLOSE_AFTER_DELAY,	/* a few ms into the deletion */
};

/* One side of the race between deleting a NIC and closing its set. */
struct del_race {
	const int *go;
	const char *name;	/* the NIC to delete */
	struct srq *s;		/* the set to close */
	int mode;		/* CLOSE_* */
	bool fd_first;
	unsigned int delay_us;
	bool saw_detach;	/* CLOSE_IN_DETACH: STATS said ifindex 0 */
	int ret;
};

static void race_wait(const int *go)
{
	while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *link_del_thread(void *arg)
{
	struct del_race *r = arg;

	race_wait(r->go);
	r->ret = sh("ip link del %s", r->name);
	return NULL;
}

static void *set_close_thread(void *arg)
{
	struct del_race *r = arg;
	struct nvx_srq_stats st;
	uint64_t end;
	int ret;

	race_wait(r->go);
	switch (r->mode) {
	case CLOSE_IN_DETACH:
		/*
		 * The unregister clears the set's NIC first, then detaches
		 * (synchronize_net() and all): close right then.
		 */
		end = now_ms() + 5000;
		do {
			ret = srq_stats(r->s, NVX_SRQ_ALL_QUEUES, &st);
		} while (!ret && st.ifindex && now_ms() < end);
		r->saw_detach = !ret && !st.ifindex;
		break;
	case CLOSE_AFTER_DELAY:
		usleep(r->delay_us);
		break;
	}
	r->ret = srq_shut(r->s, r->fd_first);
	return NULL;
}

/*
 * DEL_ROUNDS times, one per closing mode and order: a fresh NIC pair
 * (a second name), a set on it that receives a few frames, then at the
 * same time `ip link del` of the NIC in one
 * thread and, in another, close() and munmap() of the set (either
 * order), as the deletion starts, just after the unregister took the set
 * off the NIC, or a few ms in. Both complete; the NIC and its peer are
 * gone and so is the set (its grant is back). The regression test for a
 * set freed while the NIC's unregister was still detaching it.
 */
SRQ_TEST(link_del_races_close)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 8, .cq_entries = 256,
		.rel_entries = 256,
	};
	struct del_race del, cl;
	struct nvx_srq_stats st;
	struct nic *n = &self->nic2;
	struct srq *s = &self->s;
	pthread_t td, tc;
	int round, go, k, ret, ifindex;

	for (round = 0; round < DEL_ROUNDS; round++) {
		ret = nic_create_as(n, "nvd", round == 0);
		ASSERT_EQ(0, ret) TH_LOG("round %d: creating %s failed at step %d",
					 round, n->name, -ret);
		ifindex = n->ifindex;
		ASSERT_EQ(0, srq_open(self->fd, s, ifindex, &p, 0));
		for (k = 0; k < 4; k++)
			ASSERT_EQ(0, send_frame(n, 200, SPORT + k, k));
		ASSERT_EQ(0, wait_accounted(s, 4, &st));
		EXPECT_EQ(4u, st.rx_packets);

		go = 0;
		del = (struct del_race){ .go = &go, .name = n->name };
		cl = (struct del_race){
			.go = &go, .s = s, .mode = round % 3,
			.fd_first = (round / 3) % 2,
			.delay_us = (round % 10) * 2000,
		};
		ASSERT_EQ(0, pthread_create(&td, NULL, link_del_thread, &del));
		ret = pthread_create(&tc, NULL, set_close_thread, &cl);
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		pthread_join(td, NULL);
		if (!ret)
			pthread_join(tc, NULL);
		if (!del.ret)
			n->alive = false;
		ASSERT_EQ(0, ret);
		EXPECT_EQ(0, del.ret) TH_LOG("round %d: ip link del %s: %d",
					     round, n->name, del.ret);
		EXPECT_EQ(0, cl.ret) TH_LOG("round %d: close: %s", round,
					    strerror(-cl.ret));
		if (cl.mode == CLOSE_IN_DETACH)
			EXPECT_TRUE(cl.saw_detach)
				TH_LOG("round %d: the set kept its NIC", round);

		nic_destroy(n);
		EXPECT_EQ(0u, if_nametoindex(n->name));
		EXPECT_EQ(0u, if_nametoindex(n->peer));
		EXPECT_EQ(-ENODEV, srq_query(self->fd, ifindex, &st));
		ASSERT_EQ(0, wait_granted(self->fd, &self->start))
			TH_LOG("round %d: the set's grant is still live", round);
	}
	EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex, &st));
}

/* Wait up to @ms for one byte on @fd: true when it came. */
static bool read_byte(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, ms) == 1 && read(fd, &c, 1) == 1;
}

/*
 * The child of exit_while_receiving: create a set, say so on @ready,
 * then poll its queues and release every frame until killed. Returns
 * (exits with) a step number only on failure.
 */
static int receive_until_killed(int dev, int ifindex, int ready)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_POISON, .nr_queues = 2, .nr_bufs = 16,
		.cq_entries = 1024, .rel_entries = 1024,
	};
	struct nvx_srq_cqe e;
	struct srq s;
	uint64_t n = 0;
	uint32_t q;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		return 1;
	if (srq_open(dev, &s, ifindex, &p, 0))
		return 2;
	if (write(ready, "r", 1) != 1)
		return 3;
	for (;;) {
		for (q = 0; q < p.nr_queues; q++) {
			while (cq_pop(&s, q, &e)) {
				if (e.flags & NVX_SRQ_CQE_FILLER)
					continue;
				if (rel_give(&s, q, e.buf, e.strides))
					return 4;
				if (++n % 16 == 0 && srq_release(&s, NULL))
					return 5;
			}
		}
	}
}

/*
 * A child creates a set and busy-polls it, releasing every frame, while
 * two threads of the parent blast frames into it; the parent SIGKILLs
 * it mid-stream. The set goes with the process, frames still arriving
 * (QUERY says -ENOENT within 2 s), its grant goes back, and a new set on
 * the NIC receives a frame at stride 0.
 */
SRQ_TEST(exit_while_receiving)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	uint64_t end, sent, refused;
	int pfd[2], status = 0, ret = -1, err;
	bool ready, busy = false;
	pid_t pid;

	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pfd[0]);
		_exit(receive_until_killed(self->fd, self->nic.ifindex,
					   pfd[1]));
	}
	close(pfd[1]);
	/* nothing may fail before the child is killed: it would stay */
	ready = read_byte(pfd[0], 10000);
	close(pfd[0]);
	if (ready)
		ret = blast_start(&self->blast, &self->nic);
	end = now_ms() + 10000;
	while (ready && !ret && !busy && now_ms() < end) {
		busy = !srq_query(self->fd, self->nic.ifindex, &st) &&
		       st.rx_packets >= 256 && st.released >= 64;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(ready) TH_LOG("the child did not create its set: status %#x",
				  status);
	ASSERT_EQ(0, ret) TH_LOG("starting the senders: %s", strerror(-ret));
	EXPECT_TRUE(busy) TH_LOG("the child did not receive and release");
	ASSERT_TRUE(WIFSIGNALED(status))
		TH_LOG("the child stopped by itself, at step %d",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	EXPECT_EQ(SIGKILL, WTERMSIG(status));

	end = now_ms() + WAIT_MS;
	while ((ret = srq_query(self->fd, self->nic.ifindex, &st)) !=
	       -ENOENT && now_ms() < end)
		usleep(1000);
	EXPECT_EQ(-ENOENT, ret);
	blast_stop(&self->blast);
	sent = blast_sent(&self->blast, &refused, &err);
	TH_LOG("%llu frames sent (%llu refused)", (unsigned long long)sent,
	       (unsigned long long)refused);
	EXPECT_EQ(0, err) TH_LOG("sender: %s", strerror(-err));
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));

	expect_new_set_receives(_metadata, self->fd, &self->nic, s, &p);
}

TEST_HARNESS_MAIN
