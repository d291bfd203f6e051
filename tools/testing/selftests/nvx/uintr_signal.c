// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": signals routed to a vector, and a
 * fault's signal with a vector pending.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* REG_RIP */
#endif
#include <ucontext.h>

#include "uintr_fixture.h"

/*
 * A routed signal posts its vector instead of running the signal handler,
 * sent to the thread or (its only thread) to the process; signo 0 stops
 * the routing.
 */
TEST_F(uintr, signal_routed_to_vector)
{
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_signal(self->fd, SIGUSR1, 12));

	ASSERT_EQ(0, tgkill_tid(my_tid, SIGUSR1));
	EXPECT_EQ(0, wait_handled(1, WAIT_LONG, true));
	spin_syscalls_ns(50 * MS);
	EXPECT_EQ(1ULL, handled_vec(12));
	EXPECT_EQ(0, signals());

	ASSERT_EQ(0, kill(getpid(), SIGUSR1));
	EXPECT_EQ(0, wait_handled(2, WAIT_LONG, true));
	spin_syscalls_ns(50 * MS);
	EXPECT_EQ(2ULL, handled_vec(12));
	EXPECT_EQ(0, signals());

	ASSERT_EQ(0, do_signal(self->fd, 0, 0));
	ASSERT_EQ(0, tgkill_tid(my_tid, SIGUSR1));
	EXPECT_EQ(1, signals());
	EXPECT_EQ(SIGUSR1, __atomic_load_n(&sig_last, __ATOMIC_SEQ_CST));
	spin_syscalls_ns(50 * MS);
	EXPECT_EQ(2ULL, handled());
}

/* A signal from another thread, to a receiver spinning in user mode. */
TEST_F(uintr, signal_routed_from_other_thread)
{
	struct router r = { .fd = self->fd };
	pthread_t t;
	int cpu;

	ASSERT_EQ(0, catch_signal(SIGUSR1));
	two_cpus(&r.cpu, &cpu);
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_EQ(0, pthread_create(&t, NULL, router_thread, &r));
	ASSERT_EQ(1, wait_flag(&r.ready)) TH_LOG("thread: %s",
						 strerror(-r.err));
	ASSERT_EQ(0, tgkill_tid(r.tid, SIGUSR1));
	pthread_join(t, NULL);
	EXPECT_EQ(1ULL, handled_vec(11));
	EXPECT_EQ(1ULL, handled());
	EXPECT_EQ(r.tid, rec.tid);
	EXPECT_EQ(0, signals());
}

/* A blocked routed signal stays pending until unblocked, then routes. */
TEST_F(uintr, signal_blocked_then_unblocked)
{
	sigset_t set, pending;

	ASSERT_EQ(0, catch_signal(SIGUSR1));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &set, NULL));
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_signal(self->fd, SIGUSR1, 13));

	ASSERT_EQ(0, tgkill_tid(my_tid, SIGUSR1));
	spin_syscalls_ns(50 * MS);
	EXPECT_EQ(0ULL, handled());
	ASSERT_EQ(0, sigpending(&pending));
	EXPECT_TRUE(sigismember(&pending, SIGUSR1));

	ASSERT_EQ(0, pthread_sigmask(SIG_UNBLOCK, &set, NULL));
	EXPECT_EQ(0, wait_handled(1, WAIT_LONG, true));
	spin_syscalls_ns(50 * MS);
	EXPECT_EQ(1ULL, handled_vec(13));
	EXPECT_EQ(0, signals());
	ASSERT_EQ(0, sigpending(&pending));
	EXPECT_FALSE(sigismember(&pending, SIGUSR1));
}

/* An ignored signal is discarded, not routed. */
TEST_F(uintr, signal_ignored_not_routed)
{
	ASSERT_NE(SIG_ERR, signal(SIGUSR2, SIG_IGN));
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_signal(self->fd, SIGUSR2, 14));
	ASSERT_EQ(0, tgkill_tid(my_tid, SIGUSR2));
	spin_syscalls_ns(100 * MS);
	EXPECT_EQ(0ULL, handled());
}

/* fault_signal_sees_fault: what the handlers saw. */
static uint64_t fs_ill, fs_ill_bad, fs_uintr, fs_uintr_at_sig;

/* One ud2, its address nvx_fs_ud2 (the SIGILL handler skips it). */
static __attribute__((noipa)) void fs_fault(void)
{
	__asm__ volatile(".globl nvx_fs_ud2\nnvx_fs_ud2: ud2\n" ::: "memory");
}

extern const char nvx_fs_ud2[];

static void fs_on_ill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	if (uc->uc_mcontext.gregs[REG_RIP] != (greg_t)(uintptr_t)nvx_fs_ud2)
		__atomic_add_fetch(&fs_ill_bad, 1, __ATOMIC_RELAXED);
	else
		uc->uc_mcontext.gregs[REG_RIP] += 2;
	__atomic_add_fetch(&fs_ill, 1, __ATOMIC_RELAXED);
}

static NVX_UINTR_HANDLER void
fs_on_uintr(struct nvx_uintr_frame *f, uint64_t vector)
{
	__atomic_add_fetch(&fs_uintr, 1, __ATOMIC_RELAXED);
	if (f->rip == (uint64_t)(uintptr_t)fs_on_ill)
		__atomic_add_fetch(&fs_uintr_at_sig, 1, __ATOMIC_RELAXED);
}

/*
 * A vector pending when a fault raises its signal (the nvx timer ticks
 * every 10 us while the thread takes ud2 faults): the signal is
 * delivered first, so its ucontext always holds the faulting
 * instruction, and a vector that came at such a moment is entered at
 * the signal handler's first instruction (its frame's rip), which shows
 * that the two did meet.
 */
TEST_F(uintr, fault_signal_sees_fault)
{
	struct sigaction sa = { .sa_sigaction = fs_on_ill,
				.sa_flags = SA_SIGINFO }, old;
	uint64_t end;
	int rfd;

	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGILL, &sa, &old));
	rfd = nvx_uintr_register_handler(self->fd, fs_on_uintr, NULL, 0, 0);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(0, do_timer(self->fd, 9, 10000, 10000));
	end = now_ns() + 20 * SEC;
	while (now_ns() < end &&
	       (__atomic_load_n(&fs_uintr_at_sig, __ATOMIC_RELAXED) < 20 ||
		__atomic_load_n(&fs_ill, __ATOMIC_RELAXED) < 1000))
		fs_fault();
	EXPECT_EQ(0, do_timer(self->fd, 9, 0, 0));
	EXPECT_EQ(0, nvx_uintr_unregister_handler(self->fd));
	sigaction(SIGILL, &old, NULL);
	EXPECT_EQ(0ULL, fs_ill_bad)
		TH_LOG("%llu of %llu SIGILLs saw another rip than the ud2",
		       (unsigned long long)fs_ill_bad,
		       (unsigned long long)fs_ill);
	EXPECT_LE(1ULL, fs_uintr_at_sig)
		TH_LOG("no vector met a fault: %llu deliveries, %llu faults",
		       (unsigned long long)fs_uintr,
		       (unsigned long long)fs_ill);
	TH_LOG("%llu faults, %llu deliveries, %llu at the signal handler",
	       (unsigned long long)fs_ill, (unsigned long long)fs_uintr,
	       (unsigned long long)fs_uintr_at_sig);
}

TEST_F(uintr, signal_bad_args)
{
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGKILL, 1));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGSTOP, 1));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, 65, 1));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, UINT32_MAX, 1));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGUSR1, NVX_UINTR_VECTORS));
	/* the highest signal (SIGRTMAX, 64) is in range */
	EXPECT_EQ(0, do_signal(self->fd, 64, 1));
	EXPECT_EQ(0, do_signal(self->fd, 0, 0));
}

/* Unregistering stops the timer, the signal routing and the senders. */
TEST_F(uintr, unregister_stops_timer_and_signal)
{
	uint64_t n;
	int idx;

	ASSERT_EQ(0, catch_signal(SIGUSR1));
	idx = register_vector(_metadata, self->fd, 5, NULL);
	ASSERT_EQ(0, do_signal(self->fd, SIGUSR1, 4));
	ASSERT_EQ(0, do_timer(self->fd, 3, 0, 5 * MS));
	ASSERT_EQ(0, wait_vec(3, 2, WAIT_LONG, false));
	ASSERT_EQ(0, tgkill_tid(my_tid, SIGUSR1));
	ASSERT_EQ(0, wait_vec(4, 1, WAIT_LONG, true));
	EXPECT_EQ(1ULL, handled_vec(4));
	EXPECT_EQ(0, signals());

	ASSERT_EQ(0, do_unregister(self->fd));
	n = handled();
	spin_ns(200 * MS);
	EXPECT_EQ(n, handled());
	ASSERT_EQ(0, tgkill_tid(my_tid, SIGUSR1));
	EXPECT_EQ(1, signals());
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	spin_syscalls_ns(50 * MS);
	EXPECT_EQ(n, handled());
}

TEST_HARNESS_MAIN
