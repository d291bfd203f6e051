// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": stress.
 *
 * A receiver exiting while senders hammer it; exact per-vector counts
 * over 100,000 sends.
 */
#include "uintr_fixture.h"

struct hammer {
	int fd;
	int cpu;
	uint32_t index;
	uint64_t ok, esrch, other, ok_after_esrch;
	int other_err;
};

static uint64_t hammer_total;

/* Send until 100 sends in a row got -ESRCH, or for 30 s. */
static void *hammer_thread(void *arg)
{
	uint64_t end = now_ns() + 30 * SEC;
	struct hammer *h = arg;
	int ret;

	pin_cpu(h->cpu);
	while (h->esrch < 100 && now_ns() < end) {
		ret = nvx_uintr_send(h->fd, h->index);
		if (ret == 0) {
			h->ok++;
			__atomic_fetch_add(&hammer_total, 1, __ATOMIC_SEQ_CST);
			if (h->esrch)
				h->ok_after_esrch++;
		} else if (ret == -ESRCH) {
			h->esrch++;
		} else {
			h->other++;
			h->other_err = ret;
		}
	}
	return NULL;
}

struct hammered {
	int fd;
	int cpu;
	int vfd[3];
	int err;
	int ready;
};

/* Register, hand out vector fds, take interrupts a while, and exit. */
static void *hammered_thread(void *arg)
{
	struct hammered *r = arg;
	uint64_t end;
	int i, ret;

	pin_cpu(r->cpu);
	ret = do_register(r->fd, NULL, 0, 0);
	for (i = 0; i < 3 && ret >= 0; i++) {
		ret = nvx_uintr_vector_fd(r->fd, 1 + i);
		r->vfd[i] = ret;
	}
	r->err = ret < 0 ? ret : 0;
	__atomic_store_n(&r->ready, ret < 0 ? -1 : 1, __ATOMIC_SEQ_CST);
	if (ret < 0)
		return NULL;
	end = now_ns() + 3 * SEC;
	while (__atomic_load_n(&hammer_total, __ATOMIC_SEQ_CST) < 2000 &&
	       now_ns() < end)
		__builtin_ia32_pause();
	return NULL;
}

/*
 * A receiver exits while senders hammer it: every send succeeds or gets
 * -ESRCH, once -ESRCH always -ESRCH, and all of them end up there.
 */
TEST_F_TIMEOUT(uintr, receiver_exit_while_senders_hammer, 120)
{
	struct hammered r = { .fd = self->fd };
	struct hammer h[3];
	pthread_t rt, ht[3];
	uint64_t ok = 0;
	int i, idx, cpu;

	two_cpus(&r.cpu, &cpu);
	ASSERT_EQ(0, pthread_create(&rt, NULL, hammered_thread, &r));
	ASSERT_EQ(1, wait_flag(&r.ready)) TH_LOG("receiver: %s",
						 strerror(-r.err));
	for (i = 0; i < 3; i++) {
		idx = nvx_uintr_add_sender(self->fd, r.vfd[i]);
		ASSERT_LE(0, idx);
		memset(&h[i], 0, sizeof(h[i]));
		h[i].fd = self->fd;
		h[i].cpu = cpu;
		h[i].index = idx;
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&ht[i], NULL, hammer_thread,
					    &h[i]));
	pthread_join(rt, NULL);
	for (i = 0; i < 3; i++) {
		pthread_join(ht[i], NULL);
		ok += h[i].ok;
		EXPECT_EQ(0ULL, h[i].other) TH_LOG("sender %d: %s", i,
						   strerror(-h[i].other_err));
		EXPECT_LE(100ULL, h[i].esrch) TH_LOG("sender %d", i);
		EXPECT_EQ(0ULL, h[i].ok_after_esrch) TH_LOG("sender %d", i);
		EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, h[i].index));
	}
	EXPECT_LT(0ULL, ok);
	EXPECT_LT(0ULL, handled());
}

#define STRESS_SENDS	100000
#define STRESS_VECTORS	8

struct stress {
	int fd;
	int cpu;
	uint32_t vector[STRESS_VECTORS];
	uint32_t index[STRESS_VECTORS];
	unsigned int sends;	/* out: how many it sent */
	int err;		/* out: a failed send's -errno */
	int timed_out;		/* out: a vector was not handled in time */
	int done;
};

/*
 * Round robin over the vectors. A vector sent while still pending would
 * merge, so each send of a vector first waits until its previous one
 * was handled; the others stay in flight meanwhile.
 */
static void *stress_thread(void *arg)
{
	uint64_t sent[STRESS_VECTORS] = { 0 };
	struct stress *s = arg;
	unsigned int i, v;

	pin_cpu(s->cpu);
	for (i = 0; i < STRESS_SENDS; i++) {
		v = i % STRESS_VECTORS;
		if (wait_vec(s->vector[v], sent[v], WAIT_LONG, false)) {
			s->timed_out = 1;
			break;
		}
		s->err = nvx_uintr_send(s->fd, s->index[v]);
		if (s->err)
			break;
		sent[v]++;
	}
	s->sends = i;
	__atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * 100,000 sends from another CPU to a thread spinning in user mode,
 * counted per vector: none lost, none duplicated.
 */
TEST_F_TIMEOUT(uintr, per_vector_exact_over_100000_sends, 300)
{
	struct stress s = { .fd = self->fd };
	unsigned int vec;
	pthread_t t;
	int cpu, idx[STRESS_VECTORS], v;

	if (two_cpus(&cpu, &s.cpu))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_cpu(cpu));
	for (v = 0; v < STRESS_VECTORS; v++)
		s.vector[v] = v * 9;	/* 0, 9, ... 63 */
	register_vectors(_metadata, self->fd, s.vector, idx, STRESS_VECTORS);
	for (v = 0; v < STRESS_VECTORS; v++)
		s.index[v] = idx[v];
	ASSERT_EQ(0, pthread_create(&t, NULL, stress_thread, &s));
	while (!__atomic_load_n(&s.done, __ATOMIC_SEQ_CST))
		__builtin_ia32_pause();
	wait_handled(s.sends, WAIT_LONG, false);
	pthread_join(t, NULL);
	ASSERT_EQ(0, s.err) TH_LOG("send %u: %s", s.sends, strerror(-s.err));
	ASSERT_EQ(0, s.timed_out) TH_LOG("send %u: vector %u not handled",
					 s.sends,
					 s.vector[s.sends % STRESS_VECTORS]);
	ASSERT_EQ((unsigned int)STRESS_SENDS, s.sends);
	for (v = 0; v < STRESS_VECTORS; v++) {
		vec = s.vector[v];
		EXPECT_EQ((uint64_t)(STRESS_SENDS / STRESS_VECTORS),
			  handled_vec(vec)) TH_LOG("vector %u", vec);
	}
	EXPECT_EQ((uint64_t)STRESS_SENDS, handled());
	EXPECT_EQ(0ULL, my_page->pending);
	EXPECT_LT(0ULL, my_page->delivered);
	EXPECT_GE((uint64_t)STRESS_SENDS, my_page->delivered);
}

TEST_HARNESS_MAIN
