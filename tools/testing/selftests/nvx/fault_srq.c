// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "fault": shared RX queue sets, every allocation
 * and user copy of SRQ_CREATE failed in turn (include/fault_util.h):
 * after each failure no fd, no set on the NIC, and the NIC takes a set
 * again; and of SRQ_IOC_TX (a frame allocated and copied in), STEER
 * (the table as before), RELEASE (the release ring as before) and the
 * calls that only report (QUERY, INFO, STATS), and NOTIFY (no vector
 * held).
 */
#include "srq_fixture.h"
#include "uintr_util.h"
#include "fault_fixture.h"

struct create_call {
	int dev, ifindex;
	struct nvx_srq_create c;
};

static int do_create(void *arg)
{
	struct create_call *cc = arg;

	cc->c.fd = -1;
	return nvx_ioctl(cc->dev, NVX_IOC_SRQ_CREATE, &cc->c);
}

static void undo_create(void *arg)
{
	struct create_call *cc = arg;

	close(cc->c.fd);
	wait_detached(cc->dev, cc->ifindex);
}

/* No set left on the NIC. */
static int check_create(void *arg, char *why, size_t len)
{
	struct create_call *cc = arg;
	struct nvx_srq_info info = { .ifindex = cc->ifindex };
	int ret = nvx_ioctl(cc->dev, NVX_IOC_SRQ_INFO, &info);

	if (ret != -ENOENT) {
		snprintf(why, len, "SRQ_INFO after a failed create: %d", ret);
		return -1;
	}
	return 0;
}

static void fault_create(struct __test_metadata *_metadata, int dev,
			 int ifindex, const struct nvx_srq_params *p,
			 const char *what)
{
	struct create_call cc = { .dev = dev, .ifindex = ifindex };
	struct fault_call c = {
		.what = what, .call = do_create, .undo = undo_create,
		.check = check_create, .arg = &cc,
	};
	struct fault_result res;
	int ret;

	cc.c.ifindex = ifindex;
	cc.c.flags = NVX_SRQ_CLOEXEC;
	cc.c.params = *p;
	cc.c.grant_fd = srq_grant(dev, (uint64_t)p->nr_bufs * p->buf_size);
	ASSERT_LE(0, cc.c.grant_fd);
	ret = fault_arm_setup();
	if (!ret) {
		ret = fault_run(&c, &res);
		fault_arm_restore();
		EXPECT_EQ(0, ret);
		EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
		EXPECT_LT(0U, res.points);
		/* the NIC takes a set again */
		EXPECT_EQ(0, do_create(&cc));
		if (cc.c.fd >= 0)
			undo_create(&cc);
	} else {
		EXPECT_EQ(0, ret);
	}
	close(cc.c.grant_fd);
}

SRQ_TEST(fault_create_one_pool)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 16, .buf_size = 16384,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	fault_create(_metadata, self->fd, self->nic.ifindex, &p,
		     "SRQ_CREATE 2 queues, 1 pool");
}

SRQ_TEST(fault_create_per_queue)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_PER_QUEUE | NVX_SRQ_POISON, .nr_queues = 4,
		.nr_bufs = 32, .buf_size = 16384, .nr_rel_rings = 2,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	fault_create(_metadata, self->fd, self->nic.ifindex, &p,
		     "SRQ_CREATE 4 queues, a pool each, 2 release rings");
}

struct tx_call {
	struct srq *s;
	unsigned char frame[64];
	uint64_t sent;		/* tx_packets so far */
};

static uint64_t tx_packets(struct srq *s)
{
	struct nvx_srq_stats st;

	return srq_stats(s, NVX_SRQ_ALL_QUEUES, &st) ? ~0ULL : st.tx_packets;
}

/* Sent although a point failed: the count goes on from there. */
static void undo_tx(void *arg)
{
	struct tx_call *tc = arg;

	tc->sent = tx_packets(tc->s);
}

/* A failed TX sent nothing. */
static int check_tx(void *arg, char *why, size_t len)
{
	struct tx_call *tc = arg;
	uint64_t n = tx_packets(tc->s);

	if (n != tc->sent) {
		snprintf(why, len, "tx_packets %llu after a failed TX, %llu before",
			 (unsigned long long)n, (unsigned long long)tc->sent);
		return -1;
	}
	return 0;
}

static int do_tx(void *arg)
{
	struct tx_call *tc = arg;
	struct nvx_srq_tx tx = {
		.len = sizeof(tc->frame), .addr = (uintptr_t)tc->frame,
	};

	return nvx_ioctl(tc->s->fd, NVX_SRQ_IOC_TX, &tx);
}

/* TX allocates a frame and copies it from the caller. */
SRQ_TEST(fault_tx)
{
	static const int errnos[] = { ENOMEM, EFAULT, ENOBUFS, 0 };
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct tx_call tc = { };
	struct fault_call c = {
		.what = "SRQ_IOC_TX", .call = do_tx, .undo = undo_tx,
		.check = check_tx, .arg = &tc, .errnos = errnos,
	};
	struct fault_result res;
	int ret;

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	tc.s = &self->s;
	tc.sent = tx_packets(&self->s);
	memset(tc.frame, 0xff, 6);		/* broadcast */
	memcpy(tc.frame + 6, "\x02\0\0\0\0\1", 6);
	tc.frame[12] = 0x88;			/* a local experimental type */
	tc.frame[13] = 0xb5;
	ret = fault_arm_setup();
	ASSERT_EQ(0, ret);
	ret = fault_run(&c, &res);
	fault_arm_restore();
	ASSERT_EQ(0, ret);
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points);
	EXPECT_EQ(0, do_tx(&tc));
	EXPECT_EQ(tc.sent + 1, tx_packets(&self->s));
}

struct steer_call {
	struct srq *s;
	const struct nic *nic;
	uint32_t seq;
	char bad[128];
};

static int do_steer(void *arg)
{
	struct steer_call *sc = arg;

	return srq_steer_all(sc->s, 1);
}

static void undo_steer(void *arg)
{
	struct steer_call *sc = arg;
	int ret = srq_steer_all(sc->s, 0);

	if (ret && !sc->bad[0])
		snprintf(sc->bad, sizeof(sc->bad), "STEER back: %s",
			 strerror(-ret));
}

/* The frame of (@sport, seq) arrives on queue @q alone; it is taken. */
static int frame_on(struct steer_call *sc, uint32_t q, char *why, size_t len)
{
	struct nvx_srq_cqe e;
	int ret = send_frame(sc->nic, 100, 4000 + sc->seq % 64, sc->seq);

	sc->seq++;
	if (ret) {
		snprintf(why, len, "send_frame: %s", strerror(-ret));
		return -1;
	}
	if (cq_wait(sc->s, q, 1) != 1 || cq_pending(sc->s, !q)) {
		snprintf(why, len, "frame not on queue %u alone: %u and %u",
			 q, cq_pending(sc->s, 0), cq_pending(sc->s, 1));
		return -1;
	}
	cq_pop(sc->s, q, &e);
	return 0;
}

/*
 * The table as before: a frame still goes to queue 0. Frames are sent
 * from the checks only, with fail-nth disarmed: the receive path runs in
 * the sender's task and its allocations would count as the call's.
 */
static int check_steer(void *arg, char *why, size_t len)
{
	return frame_on(arg, 0, why, len);
}

SRQ_TEST(fault_steer)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct steer_call sc = { .s = &self->s, .nic = &self->nic };
	struct fault_call c = {
		.what = "SRQ_IOC_STEER", .call = do_steer, .undo = undo_steer,
		.check = check_steer, .arg = &sc,
	};
	char why[128] = "";

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, srq_steer_all(&self->s, 0));
	fault_sweep(_metadata, &c, true);
	EXPECT_STREQ("", sc.bad);
	/* and it steers */
	ASSERT_EQ(0, do_steer(&sc));
	EXPECT_EQ(0, frame_on(&sc, 1, why, sizeof(why))) TH_LOG("%s", why);
}

struct release_call {
	struct srq *s;
	int ret;
	uint64_t garbage;	/* release_garbage before the call */
	unsigned int late;	/* failures after the ring was taken */
	unsigned int calls, late_at;	/* calls made; the late one's */
	char bad[128];
};

static uint64_t garbage_count(struct srq *s)
{
	struct nvx_srq_stats st;

	return srq_stats(s, NVX_SRQ_ALL_QUEUES, &st) ? ~0ULL :
	       st.release_garbage;
}

/* One entry for RELEASE, of no buffer: garbage. */
static int release_arm(struct release_call *rc)
{
	rc->garbage = garbage_count(rc->s);
	return rel_push(rc->s, 0, ~0U, 1, 0);
}

static int do_release(void *arg)
{
	struct release_call *rc = arg;

	rc->calls++;
	rc->ret = srq_release(rc->s, NULL);
	return rc->ret;
}

static bool release_taken(struct release_call *rc)
{
	struct nvx_srq_ring *h = rel_hdr(rc->s, 0);

	return __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE) &&
	       garbage_count(rc->s) == rc->garbage + 1;
}

static void undo_release(void *arg)
{
	struct release_call *rc = arg;

	if (!release_taken(rc) && !rc->bad[0])
		snprintf(rc->bad, sizeof(rc->bad),
			 "a RELEASE that succeeded left its entry");
	if (release_arm(rc) && !rc->bad[0])
		snprintf(rc->bad, sizeof(rc->bad), "release ring full");
}

/*
 * The entry still in the ring, nothing counted; or taken, with EFAULT:
 * the result's copy failed after the ring was read (only a caller that
 * unmaps its argument from another thread meets that, abi.rst).
 */
static int check_release(void *arg, char *why, size_t len)
{
	struct release_call *rc = arg;
	struct nvx_srq_ring *h = rel_hdr(rc->s, 0);
	uint32_t left = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE) -
			__atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);

	if (left == 1 && garbage_count(rc->s) == rc->garbage)
		return 0;
	if (rc->ret == -EFAULT && release_taken(rc)) {
		rc->late++;
		rc->late_at = rc->calls;
		if (!release_arm(rc))
			return 0;
		snprintf(why, len, "release ring full");
		return -1;
	}
	snprintf(why, len,
		 "after a failed RELEASE (%s): %u entries left, garbage %llu, before %llu",
		 strerror(-rc->ret), left,
		 (unsigned long long)garbage_count(rc->s),
		 (unsigned long long)rc->garbage);
	return -1;
}

SRQ_TEST(fault_release)
{
	struct nvx_srq_params p = { .nr_queues = 1, .nr_bufs = 16 };
	struct release_call rc = { .s = &self->s };
	struct fault_call c = {
		.what = "SRQ_IOC_RELEASE", .call = do_release,
		.undo = undo_release, .check = check_release, .arg = &rc,
	};
	struct nvx_srq_release r;
	unsigned int points;

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, release_arm(&rc));
	points = fault_sweep(_metadata, &c, true);
	EXPECT_STREQ("", rc.bad);
	/* the result's copy, the last point, is the one late failure */
	EXPECT_EQ(1U, rc.late);
	EXPECT_EQ(points, rc.late_at);
	printf("# RELEASE: %u failure(s) after the ring was taken, at point %u\n",
	       rc.late, rc.late_at);
	ASSERT_EQ(0, srq_release(&self->s, &r));
	EXPECT_EQ(1U, r.released);
	EXPECT_EQ(1U, r.garbage);
}

/*
 * QUERY, INFO and STATS of an idle set: nothing changes between calls
 * (the test kernel has no IPv6 and the NIC no address: nothing sends).
 */
SRQ_TEST(fault_queries)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct nvx_srq_query q = { .ifindex = self->nic.ifindex };
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_stats st = { .queue = NVX_SRQ_ALL_QUEUES };
	struct fault_query fq[3] = {
		{ "SRQ_QUERY", self->fd, NVX_IOC_SRQ_QUERY, &q, sizeof(q),
		  true },
		{ "SRQ_INFO", self->fd, NVX_IOC_SRQ_INFO, &info,
		  sizeof(info), true },
		{ "SRQ_IOC_STATS", -1, NVX_SRQ_IOC_STATS, &st, sizeof(st),
		  true },
	};
	struct fault_result res;
	unsigned int i;

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	q.stats.queue = NVX_SRQ_ALL_QUEUES;
	fq[2].fd = self->s.fd;
	ASSERT_EQ(0, fault_arm_setup());
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, fault_run_query(&fq[i], &res));
		EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
		EXPECT_LT(0U, res.points);
	}
	fault_arm_restore();
}

struct notify_call {
	struct srq *s;
	int vfd;
};

static int do_notify(void *arg)
{
	struct notify_call *nc = arg;
	struct nvx_srq_notify n = { .queue = 1, .vector_fd = nc->vfd };

	return nvx_ioctl(nc->s->fd, NVX_SRQ_IOC_NOTIFY, &n);
}

static void undo_notify(void *arg)
{
	struct notify_call *nc = arg;
	struct nvx_srq_notify n = { .queue = 1, .vector_fd = -1 };

	nvx_ioctl(nc->s->fd, NVX_SRQ_IOC_NOTIFY, &n);
}

/* No vector held: not by the queue, not counted by the vector fd. */
static int check_notify(void *arg, char *why, size_t len)
{
	struct notify_call *nc = arg;
	long long set = fdinfo_num(nc->s->fd, "queue1_notify");
	long long held = fdinfo_num(nc->vfd, "kernel_senders");

	if (set || held) {
		snprintf(why, len, "after a failed NOTIFY: notify %lld, kernel_senders %lld",
			 set, held);
		return -1;
	}
	return 0;
}

SRQ_TEST(fault_notify)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct notify_call nc = { .s = &self->s };
	struct fault_call c = {
		.what = "SRQ_IOC_NOTIFY", .call = do_notify,
		.undo = undo_notify, .check = check_notify, .arg = &nc,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_LE(0, do_vector(self->fd, 3, &nc.vfd));
	fault_sweep(_metadata, &c, true);
	EXPECT_EQ(0, do_notify(&nc));
	EXPECT_EQ(1, fdinfo_num(self->s.fd, "queue1_notify"));
	EXPECT_EQ(1, fdinfo_num(nc.vfd, "kernel_senders"));
	undo_notify(&nc);
	EXPECT_EQ(0, do_unregister(self->fd));
	close(nc.vfd);
}

TEST_HARNESS_MAIN
