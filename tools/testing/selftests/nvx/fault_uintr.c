// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "fault": user interrupts, every allocation and
 * user copy of REGISTER and of VECTOR_FD with ADD_SENDER failed in turn
 * (include/fault_util.h): after each failure no fd and nothing
 * registered. And of the calls that change a registration: SEND and
 * SEND_MANY (nothing posted), DEL_SENDER (the entry still sends), TIMER
 * (no timer armed) and SIGNAL (no signal routed). Those run with the
 * thread's interrupts disabled in its page, so that a send only sets a
 * pending bit and no delivery (a user copy of its own) runs while
 * fail-nth is armed.
 */
#include <stdarg.h>

#include "uintr_fixture.h"
#include "fault_fixture.h"

struct reg_call {
	int fd;
	struct nvx_uintr_register r;
};

static int do_reg(void *arg)
{
	struct reg_call *rc = arg;

	rc->r = (struct nvx_uintr_register){
		.handler = (uintptr_t)trap_entry,
	};
	return nvx_ioctl(rc->fd, NVX_IOC_UINTR_REGISTER, &rc->r);
}

static void undo_reg(void *arg)
{
	struct reg_call *rc = arg;

	do_unregister_raw(rc->fd);
	close(rc->r.fd);
}

/* Not registered: UNREGISTER finds nothing. */
static int check_reg(void *arg, char *why, size_t len)
{
	struct reg_call *rc = arg;
	int ret = do_unregister_raw(rc->fd);

	if (ret != -ENOENT) {
		snprintf(why, len, "registered after a failure (%d)", ret);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_register)
{
	struct reg_call rc = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_REGISTER", .call = do_reg, .undo = undo_reg,
		.check = check_reg, .arg = &rc,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	fault_sweep(_metadata, &c, true);
	ASSERT_EQ(0, do_reg(&rc));
	undo_reg(&rc);
}

struct vec_call {
	int fd, vfd, idx;
	int base;		/* the first free sender index */
};

/* VECTOR_FD, then ADD_SENDER of it (do_vector() closes it on failure) */
static int do_vec(void *arg)
{
	struct vec_call *vc = arg;

	vc->idx = do_vector(vc->fd, 3, &vc->vfd);
	return vc->idx < 0 ? vc->idx : 0;
}

static void undo_vec(void *arg)
{
	struct vec_call *vc = arg;

	do_del(vc->fd, vc->idx);
	close(vc->vfd);
}

/*
 * Nothing left in the sender table: the next ADD_SENDER takes the same
 * first free index (entries are taken lowest first).
 */
static int check_vec(void *arg, char *why, size_t len)
{
	struct vec_call *vc = arg;
	int ret = do_vec(vc);

	if (ret) {
		snprintf(why, len, "VECTOR_FD after a failure: %d", ret);
		return -1;
	}
	undo_vec(vc);
	if (vc->idx != vc->base) {
		snprintf(why, len, "sender index %d after a failure, %d before",
			 vc->idx, vc->base);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_vector_fd)
{
	struct vec_call vc = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_VECTOR_FD", .call = do_vec, .undo = undo_vec,
		.check = check_vec, .arg = &vc,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_vec(&vc));
	vc.base = vc.idx;
	undo_vec(&vc);
	fault_sweep(_metadata, &c, true);
	/* and a vector still works, at the same index */
	ASSERT_EQ(0, do_vec(&vc));
	EXPECT_EQ(vc.base, vc.idx);
	undo_vec(&vc);
	EXPECT_EQ(0, do_unregister(self->fd));
}

/* A registered thread that receives nothing: its sends stay pending. */
struct masked {
	int fd, rfd;
	int idx[3];		/* sender indices of vectors 3, 5, 7 */
	int vfd[3];
	uint64_t bits;		/* the pending bits of all three */
	char bad[256];		/* what an undo found, for the test */
};

static void masked_setup(struct __test_metadata *_metadata, struct masked *m)
{
	static const uint32_t vec[3] = { 3, 5, 7 };
	unsigned int i;

	m->rfd = do_register(m->fd, NULL, 0, 0);
	ASSERT_LE(0, m->rfd);
	__atomic_store_n(&my_page->enabled, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < 3; i++) {
		m->idx[i] = do_vector(m->fd, vec[i], &m->vfd[i]);
		ASSERT_LE(0, m->idx[i]);
		m->bits |= 1ULL << vec[i];
	}
}

static void masked_teardown(struct masked *m)
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		do_del(m->fd, m->idx[i]);
		close(m->vfd[i]);
	}
	__atomic_store_n(&my_page->pending, 0, __ATOMIC_SEQ_CST);
	do_unregister(m->fd);	/* closes m->rfd */
}

/* The pending bits, cleared. */
static uint64_t take_pending(void)
{
	return __atomic_exchange_n(&my_page->pending, 0, __ATOMIC_SEQ_CST);
}

static void __attribute__((format(printf, 2, 3)))
note(struct masked *m, const char *fmt, ...)
{
	va_list ap;

	if (m->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(m->bad, sizeof(m->bad), fmt, ap);
	va_end(ap);
}

static int do_send1(void *arg)
{
	struct masked *m = arg;

	return nvx_uintr_send(m->fd, m->idx[0]);
}

static void undo_send1(void *arg)
{
	struct masked *m = arg;
	uint64_t p = take_pending();

	if (p != 1ULL << 3)
		note(m, "a SEND that succeeded posted %#llx, not %#llx",
		     (unsigned long long)p, 1ULL << 3);
}

static int check_nothing_posted(void *arg, char *why, size_t len)
{
	uint64_t p = take_pending();

	(void)arg;
	if (p) {
		snprintf(why, len, "pending %#llx after a failure",
			 (unsigned long long)p);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_send)
{
	struct masked m = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_SEND", .call = do_send1, .undo = undo_send1,
		.check = check_nothing_posted, .arg = &m,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	masked_setup(_metadata, &m);
	fault_sweep(_metadata, &c, true);
	EXPECT_STREQ("", m.bad);
	/* and it still sends */
	EXPECT_EQ(0, do_send1(&m));
	EXPECT_EQ(1ULL << 3, take_pending());
	masked_teardown(&m);
}

struct many_call {
	struct masked *m;
	uint32_t idx[3];
	int ret;
	unsigned int late;	/* failures after the sends */
	unsigned int calls, late_at;	/* calls made; the last late one's */
	unsigned int late_first;	/* the first late one's */
};

static int do_many(void *arg)
{
	struct many_call *mc = arg;
	uint32_t sent;

	mc->calls++;
	mc->ret = do_send_many(mc->m->fd, mc->idx, 3, &sent);
	return mc->ret;
}

static void undo_many(void *arg)
{
	struct many_call *mc = arg;
	uint64_t p = take_pending();

	if (p != mc->m->bits)
		note(mc->m, "a SEND_MANY that succeeded posted %#llx, not %#llx",
		     (unsigned long long)p, (unsigned long long)mc->m->bits);
}

/*
 * Nothing posted; or all three with EFAULT: the result's copy failed
 * after the sends (only a caller that unmaps its argument from another
 * thread meets that: an interrupt cannot be taken back, abi.rst).
 */
static int check_many(void *arg, char *why, size_t len)
{
	struct many_call *mc = arg;
	uint64_t p = take_pending();

	if (!p)
		return 0;
	if (p == mc->m->bits && mc->ret == -EFAULT) {
		if (!mc->late)
			mc->late_first = mc->calls;
		mc->late++;
		mc->late_at = mc->calls;
		return 0;
	}
	snprintf(why, len, "pending %#llx after a failure (%s)",
		 (unsigned long long)p, strerror(-mc->ret));
	return -1;
}

TEST_F(uintr, fault_send_many)
{
	struct masked m = { .fd = self->fd };
	struct many_call mc = { .m = &m };
	struct fault_call c = {
		.what = "UINTR_SEND_MANY 3 targets", .call = do_many,
		.undo = undo_many, .check = check_many, .arg = &mc,
	};
	unsigned int i, points;

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	masked_setup(_metadata, &m);
	for (i = 0; i < 3; i++)
		mc.idx[i] = m.idx[i];
	/*
	 * The index table's allocation and copy come before any send: the
	 * result's copy, the last point, is the only late failure. On the
	 * debug kernel a tolerated point comes and goes between calls (seen:
	 * 6 or 7 points, 1 tolerated), which can move that copy from point
	 * N to N + 1: the sweep may then fail it twice (both EFAULT, all
	 * three posted, at the last two points), or step over it. A sweep
	 * that stepped over it is run again (three at most).
	 */
	for (i = 0; i < 3; i++) {
		mc.late = 0;
		mc.late_at = 0;
		mc.late_first = 0;
		mc.calls = 0;
		points = fault_sweep(_metadata, &c, true);
		if (mc.late)
			break;
	}
	EXPECT_STREQ("", m.bad);
	EXPECT_LE(1U, mc.late);
	EXPECT_GE(2U, mc.late);
	EXPECT_EQ(points, mc.late_at);
	EXPECT_EQ(mc.late, mc.late_at - mc.late_first + 1);
	printf("# SEND_MANY: %u failure(s) after the sends, at point %u\n",
	       mc.late, mc.late_at);
	EXPECT_EQ(0, do_many(&mc));
	EXPECT_EQ(m.bits, take_pending());
	masked_teardown(&m);
}

struct del_call {
	struct masked *m;
	int vfd;
	int idx;
};

static int do_del1(void *arg)
{
	struct del_call *dc = arg;

	return do_del(dc->m->fd, dc->idx);
}

/* Put the entry back: the lowest free index, the one taken out. */
static void undo_del1(void *arg)
{
	struct del_call *dc = arg;
	int idx;

	close(dc->vfd);
	dc->vfd = -1;
	idx = do_vector(dc->m->fd, 9, &dc->vfd);
	if (idx != dc->idx)
		note(dc->m, "the entry came back at %d, not %d", idx,
		     dc->idx);
}

/* The entry still sends. */
static int check_del1(void *arg, char *why, size_t len)
{
	struct del_call *dc = arg;
	int ret = nvx_uintr_send(dc->m->fd, dc->idx);
	uint64_t p = take_pending();

	if (ret || p != 1ULL << 9) {
		snprintf(why, len,
			 "SEND after a failed DEL_SENDER: %s, pending %#llx",
			 strerror(-ret), (unsigned long long)p);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_del_sender)
{
	struct masked m = { .fd = self->fd };
	struct del_call dc = { .m = &m };
	struct fault_call c = {
		.what = "UINTR_DEL_SENDER", .call = do_del1, .undo = undo_del1,
		.check = check_del1, .arg = &dc,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	masked_setup(_metadata, &m);
	dc.idx = do_vector(m.fd, 9, &dc.vfd);
	ASSERT_LE(0, dc.idx);
	fault_sweep(_metadata, &c, true);
	EXPECT_STREQ("", m.bad);
	EXPECT_EQ(0, do_del1(&dc));
	EXPECT_EQ(-ENOENT, nvx_uintr_send(m.fd, dc.idx));
	if (dc.vfd >= 0)
		close(dc.vfd);
	masked_teardown(&m);
}

static int do_timer1(void *arg)
{
	struct masked *m = arg;

	/* the first tick at 1 ms, then every 50 ms */
	return do_timer(m->fd, 11, MS, 50 * MS);
}

/* Disarmed again: no period left, and no tick after a short wait. */
static void undo_timer1(void *arg)
{
	struct masked *m = arg;
	long long period;

	do_timer(m->fd, 11, 0, 0);
	take_pending();
	period = fdinfo_num(m->rfd, "timer_period_ns");
	if (period)
		note(m, "timer_period_ns %lld after disarming", period);
}

/* No timer: none in fdinfo, no tick within 20 ms. */
static int check_timer1(void *arg, char *why, size_t len)
{
	struct masked *m = arg;
	long long period = fdinfo_num(m->rfd, "timer_period_ns");
	uint64_t p;

	usleep(20000);
	p = take_pending();
	if (period || p) {
		snprintf(why, len,
			 "after a failed TIMER: timer_period_ns %lld, pending %#llx",
			 period, (unsigned long long)p);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_timer)
{
	struct masked m = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_TIMER", .call = do_timer1, .undo = undo_timer1,
		.check = check_timer1, .arg = &m,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	masked_setup(_metadata, &m);
	fault_sweep(_metadata, &c, true);
	EXPECT_STREQ("", m.bad);
	/* the timer works: a tick comes */
	EXPECT_EQ(0, do_timer1(&m));
	EXPECT_EQ(50 * MS, (uint64_t)fdinfo_num(m.rfd, "timer_period_ns"));
	usleep(100000);
	EXPECT_EQ(1ULL << 11, take_pending());
	undo_timer1(&m);
	EXPECT_STREQ("", m.bad);
	masked_teardown(&m);
}

/* WAIT with nothing to wait for: a vector is pending (bit 3). */
static int do_wait1(void *arg)
{
	struct masked *m = arg;

	return do_wait(m->fd, 0);
}

static int check_wait1(void *arg, char *why, size_t len)
{
	uint64_t p = __atomic_load_n(&my_page->pending, __ATOMIC_SEQ_CST);

	(void)arg;
	if (p != 1ULL << 3) {
		snprintf(why, len, "pending %#llx after a failed WAIT",
			 (unsigned long long)p);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_wait)
{
	struct masked m = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_WAIT", .call = do_wait1,
		.check = check_wait1, .arg = &m,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	masked_setup(_metadata, &m);
	ASSERT_EQ(0, do_send1(&m));
	fault_sweep(_metadata, &c, true);
	/* delivery is off: the vector is still pending */
	EXPECT_EQ(1ULL << 3, take_pending());
	EXPECT_EQ(-ETIMEDOUT, do_wait1(&m));
	masked_teardown(&m);
}

static int do_signal1(void *arg)
{
	struct masked *m = arg;

	return do_signal(m->fd, SIGUSR1, 13);
}

static void undo_signal1(void *arg)
{
	struct masked *m = arg;
	long long routed;

	do_signal(m->fd, 0, 0);
	routed = fdinfo_num(m->rfd, "routed_signal");
	if (routed)
		note(m, "signal %lld still routed", routed);
}

/* Not routed: SIGUSR1 reaches its handler, no vector is posted. */
static int check_signal1(void *arg, char *why, size_t len)
{
	struct masked *m = arg;
	long long routed = fdinfo_num(m->rfd, "routed_signal");
	int before = signals();
	uint64_t p;

	tgkill_tid(sys_gettid(), SIGUSR1);
	p = take_pending();
	if (routed || p || signals() != before + 1) {
		snprintf(why, len,
			 "after a failed SIGNAL: routed %lld, pending %#llx, %d signal(s)",
			 routed, (unsigned long long)p, signals() - before);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_signal)
{
	struct masked m = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_SIGNAL", .call = do_signal1,
		.undo = undo_signal1, .check = check_signal1, .arg = &m,
	};
	int before;

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	masked_setup(_metadata, &m);
	fault_sweep(_metadata, &c, true);
	EXPECT_STREQ("", m.bad);
	/* routed, the signal becomes the vector */
	EXPECT_EQ(0, do_signal1(&m));
	EXPECT_EQ(SIGUSR1, fdinfo_num(m.rfd, "routed_signal"));
	before = signals();
	EXPECT_EQ(0, tgkill_tid(sys_gettid(), SIGUSR1));
	EXPECT_EQ(1ULL << 13, take_pending());
	EXPECT_EQ(before, signals());
	undo_signal1(&m);
	EXPECT_STREQ("", m.bad);
	masked_teardown(&m);
}

TEST_HARNESS_MAIN
