// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": delivery.
 *
 * Sends to self and to other threads and CPUs, the handler's frame and
 * stack, masking, priorities, no nesting, registers preserved, and
 * waiting for a user interrupt.
 */
#include "uintr_fixture.h"

/*
 * A thread sending to itself has the handler run before the send returns,
 * with delivery masked, on a 16-byte aligned frame below the red zone of
 * the interrupted stack; the send's own result (rax) survives.
 */
TEST_F(uintr, send_to_self)
{
	uint64_t here = (uintptr_t)&here, text;
	int idx, ret;

	idx = register_vector(_metadata, self->fd, 5, NULL);
	ret = nvx_uintr_send(self->fd, idx);
	ASSERT_EQ(1ULL, handled());
	EXPECT_EQ(0, ret);
	EXPECT_EQ(5u, rec.order[0]);
	EXPECT_EQ(5ULL, rec.f.vector);
	EXPECT_EQ(0, rec.mismatch);
	EXPECT_EQ(my_tid, rec.tid);
	EXPECT_EQ(0u, rec.enabled);
	EXPECT_EQ(1u, my_page->enabled);
	EXPECT_EQ(0ULL, my_page->pending);
	EXPECT_EQ(1ULL, my_page->delivered);

	EXPECT_EQ(0ULL, rec.frame % 16);
	EXPECT_LE(rec.frame + sizeof(struct nvx_uintr_frame),
		  rec.f.rsp - NVX_UINTR_RED_ZONE);
	EXPECT_LE(rec.f.rsp, here);
	EXPECT_GT(rec.f.rsp + 65536, here);
	EXPECT_LE(rec.handler_sp, rec.frame);
	EXPECT_NE(0ULL, rec.f.rflags & RFLAGS_IF);
	text = exec_mapping((uintptr_t)on_uintr);
	if (text)
		EXPECT_EQ(text, exec_mapping(rec.f.rip))
			TH_LOG("rip %#llx", (unsigned long long)rec.f.rip);

	/* again: same place, one more delivery */
	ret = nvx_uintr_send(self->fd, idx);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(2ULL, handled_vec(5));
	EXPECT_EQ(2ULL, my_page->delivered);
}

/*
 * With an alternate stack the frame lies at its top, the handler runs on
 * it, and the frame still describes the interrupted (ordinary) stack.
 */
TEST_F(uintr, alternate_stack)
{
	size_t size = 65536;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t lo = (uintptr_t)stack, top = lo + size;
	uint64_t here = (uintptr_t)&here, first;
	int idx;

	ASSERT_NE(MAP_FAILED, stack);
	ASSERT_LE(0, do_register(self->fd, stack, size, 0));
	idx = do_vector(self->fd, 7, NULL);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	ASSERT_EQ(1ULL, handled());
	EXPECT_EQ(7ULL, rec.f.vector);
	EXPECT_EQ(0ULL, rec.frame % 16);
	EXPECT_LE(lo, rec.frame);
	EXPECT_GE(top, rec.frame + sizeof(struct nvx_uintr_frame));
	/* "at the top": allow a little room above it */
	EXPECT_GE(rec.frame + 256, top) TH_LOG("frame %#llx, top %#llx",
					       (unsigned long long)rec.frame,
					       (unsigned long long)top);
	EXPECT_LE(lo, rec.handler_sp);
	EXPECT_GT(top, rec.handler_sp);
	EXPECT_TRUE(rec.f.rsp < lo || rec.f.rsp >= top);
	EXPECT_LE(rec.f.rsp, here);
	EXPECT_GT(rec.f.rsp + 65536, here);

	first = rec.frame;
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(2ULL, handled());
	EXPECT_EQ(first, rec.frame);
}

/*
 * Masked: sends only set pending bits (a vector sent twice is one bit);
 * unmasking hands them to the handler, highest vector first.
 */
TEST_F(uintr, masked_vectors_stay_pending)
{
	const uint32_t vec[3] = { 3, 7, 40 };
	int idx[3];

	register_vectors(_metadata, self->fd, vec, idx, 3);

	nvx_uintr_clui();
	EXPECT_EQ(0u, my_page->enabled);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[0]));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[2]));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[1]));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[1]));
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ((1ULL << 3) | (1ULL << 7) | (1ULL << 40), my_page->pending);
	EXPECT_EQ(0ULL, my_page->delivered);

	nvx_uintr_stui();
	ASSERT_EQ(3ULL, handled());
	EXPECT_EQ(40u, rec.order[0]);
	EXPECT_EQ(7u, rec.order[1]);
	EXPECT_EQ(3u, rec.order[2]);
	EXPECT_EQ(1ULL, handled_vec(7));
	EXPECT_EQ(0ULL, my_page->pending);
	EXPECT_EQ(1u, my_page->enabled);
}

/* All 64 vectors: each its own bit, handled once, 63 down to 0. */
TEST_F(uintr, all_vectors_highest_first)
{
	int idx[NVX_UINTR_VECTORS], v;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	for (v = 0; v < NVX_UINTR_VECTORS; v++) {
		idx[v] = do_vector(self->fd, v, NULL);
		ASSERT_LE(0, idx[v]) TH_LOG("vector %d: %s", v,
					    strerror(-idx[v]));
	}
	nvx_uintr_clui();
	for (v = 0; v < NVX_UINTR_VECTORS; v++)
		EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[v]));
	EXPECT_EQ(~0ULL, my_page->pending);
	EXPECT_EQ(0ULL, handled());
	nvx_uintr_stui();
	ASSERT_EQ((uint64_t)NVX_UINTR_VECTORS, handled());
	for (v = 0; v < NVX_UINTR_VECTORS; v++) {
		EXPECT_EQ((uint32_t)(NVX_UINTR_VECTORS - 1 - v), rec.order[v]);
		EXPECT_EQ(1ULL, handled_vec(v));
	}
}

/*
 * NVX_IOC_UINTR_SEND_MANY: one call posts to every target (the kernel
 * hands over the highest first); bad indices send nothing; a gone target
 * is skipped and reported after the others got theirs.
 */
TEST_F(uintr, send_many)
{
	uint32_t many[NVX_UINTR_SENDERS + 1], list[3], sent;
	const uint32_t vec[3] = { 2, 17, 60 };
	int idx[3], i2, i17, i60, i33, gone, vfd33, i;

	register_vectors(_metadata, self->fd, vec, idx, 3);
	i2 = idx[0];
	i17 = idx[1];
	i60 = idx[2];
	i33 = do_vector(self->fd, 33, &vfd33);
	gone = do_vector(self->fd, 40, NULL);
	ASSERT_LE(0, i33);
	ASSERT_LE(0, gone);
	ASSERT_EQ(0, do_del(self->fd, gone));

	list[0] = i2;
	list[1] = i60;
	list[2] = i17;
	EXPECT_EQ(0, do_send_many(self->fd, list, 3, &sent));
	EXPECT_EQ(3u, sent);
	ASSERT_EQ(3ULL, handled());
	EXPECT_EQ(60u, rec.order[0]);
	EXPECT_EQ(17u, rec.order[1]);
	EXPECT_EQ(2u, rec.order[2]);
	EXPECT_LE(1ULL, my_page->delivered);

	/* bad calls: nothing sent */
	EXPECT_EQ(-EINVAL, do_send_many(self->fd, list, 0, &sent));
	for (i = 0; i < NVX_UINTR_SENDERS + 1; i++)
		many[i] = i2;
	EXPECT_EQ(-EINVAL, do_send_many(self->fd, many,
					NVX_UINTR_SENDERS + 1, &sent));
	EXPECT_EQ(-EFAULT, do_send_many(self->fd, NULL, 3, &sent));
	list[1] = NVX_UINTR_SENDERS;
	EXPECT_EQ(-EINVAL, do_send_many(self->fd, list, 3, &sent));
	EXPECT_EQ(0u, sent);
	list[1] = gone;
	EXPECT_EQ(-ENOENT, do_send_many(self->fd, list, 3, &sent));
	EXPECT_EQ(0u, sent);
	EXPECT_EQ(3ULL, handled());

	/* a closed vector fd in the middle: the others still get theirs */
	close(vfd33);
	list[1] = i33;
	EXPECT_EQ(-EPIPE, do_send_many(self->fd, list, 3, &sent));
	EXPECT_EQ(2u, sent);
	EXPECT_EQ(5ULL, handled());
	EXPECT_EQ(2ULL, handled_vec(2));
	EXPECT_EQ(2ULL, handled_vec(17));
	EXPECT_EQ(0ULL, handled_vec(33));

	/* the most entries a call may have; one vector's bit merges */
	EXPECT_EQ(0, do_send_many(self->fd, many, NVX_UINTR_SENDERS, &sent));
	EXPECT_EQ((uint32_t)NVX_UINTR_SENDERS, sent);
	EXPECT_EQ(3ULL, handled_vec(2));
	EXPECT_EQ(6ULL, handled());
}

/*
 * A vector sent while a handler runs (here by the handler itself, a raw
 * system call) waits until the handler returns: handlers never nest.
 */
TEST_F(uintr, no_nesting_in_handler)
{
	const uint32_t vec[3] = { 10, 50, 5 };
	int idx[3];

	register_vectors(_metadata, self->fd, vec, idx, 3);

	/* a higher vector from the handler of a lower one */
	rec.resend_fd = self->fd;
	rec.resend_index = idx[1];
	rec.resend_vector = 10 + 1;
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[0]));
	EXPECT_EQ(0, rec.resend_ret);
	ASSERT_EQ(2ULL, handled());
	EXPECT_EQ(10u, rec.order[0]);
	EXPECT_EQ(50u, rec.order[1]);

	/* and a lower one from the handler of a higher one */
	rec.resend_index = idx[2];
	rec.resend_vector = 50 + 1;
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx[1]));
	EXPECT_EQ(0, rec.resend_ret);
	ASSERT_EQ(4ULL, handled());
	EXPECT_EQ(50u, rec.order[2]);
	EXPECT_EQ(5u, rec.order[3]);

	EXPECT_EQ(1, rec.max_depth);
	EXPECT_EQ(0u, rec.enabled);
	EXPECT_EQ(1u, my_page->enabled);
}

/*
 * Count a round in spin.ready, then spin in user mode until spin.stop,
 * with rsp 136 bytes below the compiler's (past its red zone and 8 bytes
 * off its alignment) and the 128 bytes below that filled with a pattern.
 * Returns whether they still hold it afterwards; *@sp gets the spinning
 * rsp, [*@lo, *@hi] the spin loop's addresses.
 */
static __attribute__((noinline)) int spin_red_zone(uint64_t *sp,
						   uint64_t *lo,
						   uint64_t *hi)
{
	uint64_t rsp, l, h;
	uint8_t ok;

	__asm__ volatile("lea -136(%%rsp), %%rsp\n\t"
			 "mov %%rsp, %[sp]\n\t"
			 "lea -128(%%rsp), %%rdi\n\t"
			 "mov $16, %%ecx\n\t"
			 "rep stosq\n\t"
			 "lea 1f(%%rip), %[lo]\n\t"
			 "lea 2f(%%rip), %[hi]\n\t"
			 "addl $1, (%[ready])\n"
			 "1:\tcmpl $0, (%[stop])\n\t"
			 "je 1b\n"
			 "2:\tlea -128(%%rsp), %%rdi\n\t"
			 "mov $16, %%ecx\n\t"
			 "repe scasq\n\t"
			 "sete %[ok]\n\t"
			 "lea 136(%%rsp), %%rsp"
			 : [sp] "=&r"(rsp), [lo] "=&r"(l), [hi] "=&r"(h),
			   [ok] "=&q"(ok)
			 : "a"(RED_ZONE_FILL), [ready] "r"(&spin.ready),
			   [stop] "r"(&spin.stop)
			 : "rcx", "rdi", "cc", "memory");
	*sp = rsp;
	*lo = l;
	*hi = h;
	return ok;
}

/*
 * A receiver spinning in user mode on one CPU, a sender on another: the
 * receiver is interrupted where it spins; the frame records that place
 * and stack, lies below the red zone, 16-byte aligned although rsp was
 * not, and the red zone is left alone.
 */
TEST_F(uintr, spinning_receiver_on_other_cpu)
{
	struct kicker k = { .fd = self->fd, .ready = &spin.ready,
			    .nindex = 1, .nsends = 1 };
	uint64_t sp = 0, lo = 0, hi = 0;
	int cpu, idx, ok;
	pthread_t t;

	if (two_cpus(&cpu, &k.cpu))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_cpu(cpu));
	idx = register_vector(_metadata, self->fd, 42, NULL);
	k.index[0] = idx;
	rec.stop_at = 1;
	ASSERT_EQ(0, pthread_create(&t, NULL, kicker_thread, &k));
	ok = spin_red_zone(&sp, &lo, &hi);
	pthread_join(t, NULL);
	ASSERT_EQ(0, k.err);
	ASSERT_EQ(0, k.timed_out) TH_LOG("not delivered to the spinner");

	EXPECT_EQ(1ULL, handled());
	EXPECT_TRUE(ok) TH_LOG("the red zone was written");
	EXPECT_EQ(42ULL, rec.f.vector);
	EXPECT_EQ(my_tid, rec.tid);
	EXPECT_EQ(sp, rec.f.rsp);
	EXPECT_LE(lo, rec.f.rip);
	EXPECT_GE(hi, rec.f.rip);
	EXPECT_NE(0ULL, rec.f.rflags & RFLAGS_IF);
	EXPECT_EQ(0ULL, rec.frame % 16);
	EXPECT_LE(rec.frame + sizeof(struct nvx_uintr_frame),
		  sp - NVX_UINTR_RED_ZONE);
	EXPECT_EQ(1ULL, my_page->delivered);
}

#define REG_PATTERN(n)	(0x0123456789abcdefULL ^ ((n) * 0x1111111111111111ULL))

/*
 * Count a round in spin.ready, then spin in user mode until spin.stop
 * with every general register but rsp and rbp holding a pattern: a bit
 * set per register that changed.
 */
static __attribute__((noinline)) unsigned int spin_check_regs(void)
{
	register uint64_t r8 __asm__("r8") = REG_PATTERN(8);
	register uint64_t r9 __asm__("r9") = REG_PATTERN(9);
	register uint64_t r10 __asm__("r10") = REG_PATTERN(10);
	register uint64_t r11 __asm__("r11") = REG_PATTERN(11);
	register uint64_t r12 __asm__("r12") = REG_PATTERN(12);
	register uint64_t r13 __asm__("r13") = REG_PATTERN(13);
	register uint64_t r14 __asm__("r14") = REG_PATTERN(14);
	register uint64_t r15 __asm__("r15") = REG_PATTERN(15);
	uint64_t a = REG_PATTERN(1), b = REG_PATTERN(2), c = REG_PATTERN(3);
	uint64_t d = REG_PATTERN(4), si = REG_PATTERN(5), di = REG_PATTERN(6);
	uint64_t got[16];
	unsigned int bad = 0, i;

	/* %[spin] is spin.ready, 4 bytes on is spin.stop */
	__asm__ volatile("addl $1, %[spin]\n"
			 "1:\tcmpl $0, 4+%[spin]\n\t"
			 "je 1b"
			 : "+a"(a), "+b"(b), "+c"(c), "+d"(d), "+S"(si),
			   "+D"(di), "+r"(r8), "+r"(r9), "+r"(r10), "+r"(r11),
			   "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15),
			   [spin] "+m"(spin)
			 :
			 : "cc", "memory");
	got[0] = 0;
	got[1] = a;
	got[2] = b;
	got[3] = c;
	got[4] = d;
	got[5] = si;
	got[6] = di;
	got[7] = REG_PATTERN(7);	/* rbp: not tested */
	got[8] = r8;
	got[9] = r9;
	got[10] = r10;
	got[11] = r11;
	got[12] = r12;
	got[13] = r13;
	got[14] = r14;
	got[15] = r15;
	for (i = 1; i < 16; i++)
		if (got[i] != REG_PATTERN(i))
			bad |= 1u << i;
	return bad;
}

/*
 * Deliveries to a spinning thread leave its general registers intact:
 * checked after each of them.
 */
TEST_F(uintr, registers_preserved)
{
	struct kicker k = { .fd = self->fd, .ready = &spin.ready,
			    .nindex = 4, .nsends = 16 };
	const uint32_t vec[4] = { 1, 20, 40, 63 };
	unsigned int bad = 0, round;
	pthread_t t;
	int cpu, idx[4], i;

	if (two_cpus(&cpu, &k.cpu))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_cpu(cpu));
	register_vectors(_metadata, self->fd, vec, idx, 4);
	for (i = 0; i < 4; i++)
		k.index[i] = idx[i];
	ASSERT_EQ(0, pthread_create(&t, NULL, kicker_thread, &k));
	for (round = 1; round <= k.nsends; round++) {
		/* the handler sets stop once it ran round times */
		rec.stop_at = round;
		__atomic_store_n(&spin.stop, 0, __ATOMIC_SEQ_CST);
		bad |= spin_check_regs();
		if (__atomic_load_n(&k.failed, __ATOMIC_SEQ_CST))
			break;
	}
	pthread_join(t, NULL);
	ASSERT_EQ(0, k.err);
	ASSERT_EQ(0, k.timed_out);
	EXPECT_EQ((uint64_t)k.nsends, handled());
	/* bit n: 1 rax, 2 rbx, 3 rcx, 4 rdx, 5 rsi, 6 rdi, 8-15 r8-r15 */
	EXPECT_EQ(0u, bad) TH_LOG("registers changed: %#x", bad);
}

/* A thread asleep in NVX_IOC_UINTR_WAIT is woken; the handler has run. */
TEST_F(uintr, wait_woken_by_send)
{
	struct blocker b = { .fd = self->fd, .use_wait = true, .vector = 23 };
	pthread_t t;
	int cpu, idx;

	two_cpus(&b.cpu, &cpu);
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_EQ(0, start_blocker(&t, &b));
	idx = nvx_uintr_add_sender(self->fd, b.vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	ASSERT_EQ(0, join_blocker(t, &b, -1, WAIT_LONG));
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(1ULL, b.handled_then);
	EXPECT_EQ(1ULL, handled_vec(23));
	EXPECT_EQ(b.tid, rec.tid);
}

TEST_F(uintr, wait_timeout)
{
	uint64_t t0, took;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, do_wait(self->fd, 50 * MS));
	took = now_ns() - t0;
	/* hrtimers do not end early; 10% for a coarse guest clock */
	EXPECT_LE(45 * MS, took);
	EXPECT_GT(WAIT_LONG, took);
	/* 0 only polls */
	EXPECT_EQ(-ETIMEDOUT, do_wait(self->fd, 0));
	EXPECT_EQ(-EINVAL, do_wait(self->fd, NVX_UINTR_MAX_NS + 1));
	EXPECT_EQ(-EINVAL, do_wait(self->fd, UINT64_MAX));
	EXPECT_EQ(0ULL, handled());
}

/*
 * Masked, a pending vector still ends the wait at once (and a poll), but
 * is not delivered until unmasked.
 */
TEST_F(uintr, wait_masked_pending_returns_at_once)
{
	uint64_t t0;
	int idx;

	idx = register_vector(_metadata, self->fd, 20, NULL);
	nvx_uintr_clui();
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	t0 = now_ns();
	EXPECT_EQ(0, do_wait(self->fd, WAIT_LONG));
	EXPECT_GT(WAIT_LONG / 2, now_ns() - t0);
	EXPECT_EQ(0, do_wait(self->fd, 0));
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(1ULL << 20, my_page->pending);
	nvx_uintr_stui();
	EXPECT_EQ(1ULL, handled_vec(20));
}

/* A signal ends NVX_IOC_UINTR_WAIT with -EINTR. */
TEST_F(uintr, wait_interrupted_by_signal)
{
	struct blocker b = { .fd = self->fd, .use_wait = true, .vector = 1 };
	pthread_t t;
	int cpu;

	ASSERT_EQ(0, catch_signal(SIGUSR1));
	two_cpus(&b.cpu, &cpu);
	ASSERT_EQ(0, start_blocker(&t, &b));
	ASSERT_EQ(0, pthread_kill(t, SIGUSR1));
	ASSERT_EQ(0, join_blocker(t, &b, -1, WAIT_LONG));
	EXPECT_EQ(-EINTR, b.ret);
	EXPECT_EQ(1, signals());
	EXPECT_EQ(0ULL, handled());
}

/*
 * A routed signal also ends NVX_IOC_UINTR_WAIT with -EINTR (as
 * Documentation/nvx/uintr.rst says); its vector's handler has run when
 * the call returns, the signal handler never does.
 */
TEST_F(uintr, wait_ended_by_routed_signal)
{
	struct blocker b = { .fd = self->fd, .use_wait = true, .vector = 19,
			     .route_signo = SIGUSR1 };
	pthread_t t;
	int cpu;

	ASSERT_EQ(0, catch_signal(SIGUSR1));
	two_cpus(&b.cpu, &cpu);
	ASSERT_EQ(0, start_blocker(&t, &b));
	ASSERT_EQ(0, tgkill_tid(b.tid, SIGUSR1));
	ASSERT_EQ(0, join_blocker(t, &b, -1, WAIT_LONG));
	EXPECT_EQ(-EINTR, b.ret);
	EXPECT_EQ(1ULL, b.handled_then);
	EXPECT_EQ(1ULL, handled_vec(19));
	EXPECT_EQ(0, signals());
}

/*
 * Without NVX_UINTR_INTERRUPT_SYSCALLS a receiver blocked in read()
 * stays blocked; its handler runs when the read returns.
 */
TEST_F(uintr, blocked_read_keeps_blocking)
{
	struct blocker b = { .fd = self->fd, .vector = 17 };
	pthread_t t;
	int p[2];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	b.pipe_r = p[0];
	blocker_start_send(_metadata, self->fd, &t, &b);
	usleep(200000);
	EXPECT_FALSE(blocker_done(&b)) TH_LOG("read() returned without data");
	EXPECT_EQ(0ULL, handled());
	ASSERT_EQ(1, write(p[1], "x", 1));
	ASSERT_EQ(0, join_blocker(t, &b, p[1], WAIT_LONG));
	EXPECT_EQ(1, b.ret);
	EXPECT_EQ(1ULL, b.handled_then);
	EXPECT_EQ(1ULL, handled_vec(17));
	close(p[0]);
	close(p[1]);
}

/* With NVX_UINTR_INTERRUPT_SYSCALLS the read ends with -EINTR. */
TEST_F(uintr, blocked_read_interrupted_with_flag)
{
	struct blocker b = { .fd = self->fd, .vector = 18,
			     .flags = NVX_UINTR_INTERRUPT_SYSCALLS };
	pthread_t t;
	int p[2];

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	b.pipe_r = p[0];
	blocker_start_send(_metadata, self->fd, &t, &b);
	EXPECT_EQ(0, join_blocker(t, &b, p[1], WAIT_LONG))
		TH_LOG("read() kept blocking");
	EXPECT_EQ(-EINTR, b.ret);
	EXPECT_EQ(1ULL, b.handled_then);
	EXPECT_EQ(1ULL, handled_vec(18));
	close(p[0]);
	close(p[1]);
}

TEST_HARNESS_MAIN
