// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": 32-bit syscalls and rseq.
 *
 * A 64-bit test thread can make 32-bit syscalls with int $0x80 (with
 * CONFIG_IA32_EMULATION): the kernel handles them as a 32-bit caller's.
 * So without a 32-bit build: REGISTER from a 32-bit call is refused, and
 * a 32-bit nanosleep interrupted by a vector is restarted with the ia32
 * restart_syscall. And a vector that arrives inside an rseq critical
 * section aborts it before the handler's frame saves rip, as a signal
 * does (glibc registers rseq for every thread when the kernel has it).
 */
#include <sys/rseq.h>
#include <sys/wait.h>

#include "uintr_fixture.h"

/* The ia32 syscall numbers (arch/x86/entry/syscalls/syscall_32.tbl). */
#define IA32_NR_getpid			20
#define IA32_NR_ioctl			54
#define IA32_NR_clock_nanosleep_time64	407

/* The address of int80()'s int $0x80 instruction, for a frame's rip. */
static uint64_t int80_ip;

/* A 32-bit syscall from this 64-bit thread: the kernel's return value. */
static long int80(long nr, long a, long b, long c, long d)
{
	uint64_t ip;
	long ret;

	/* r8-r11: the ia32 entry has not always given them back */
	asm volatile("leaq 1f(%%rip), %[ip]\n"
		     "1:\tint $0x80"
		     : "=a"(ret), [ip] "=&D"(ip)
		     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d)
		     : "memory", "cc", "r8", "r9", "r10", "r11");
	int80_ip = ip;
	return ret;
}

/*
 * Whether int $0x80 works here: a kernel without IA32 emulation answers
 * it with SIGSEGV, so ask in a child.
 */
static bool have_int80(void)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(int80(IA32_NR_getpid, 0, 0, 0, 0) == getpid() ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

/* Memory below 4 GiB, for the 32-bit calls' pointers. */
static void *low_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* REGISTER from a 32-bit call: -EOPNOTSUPP, and nothing registered. */
TEST_F(uintr, int80_register_is_eopnotsupp)
{
	struct nvx_uintr_register *r;

	if (!have_int80())
		SKIP(return, "no int $0x80 (CONFIG_IA32_EMULATION)");
	r = low_page();
	ASSERT_NE(NULL, r);
	memset(r, 0, sizeof(*r));
	r->handler = (uintptr_t)trap_entry;
	EXPECT_EQ(-EOPNOTSUPP, int80(IA32_NR_ioctl, self->fd,
				     (long)NVX_IOC_UINTR_REGISTER,
				     (long)(uintptr_t)r, 0));
	EXPECT_EQ(-ENOENT, do_unregister_raw(self->fd));
	munmap(r, 4096);
}

/* The ia32 clock_nanosleep_time64's struct: 64-bit fields. */
struct ts64 {
	int64_t tv_sec;
	int64_t tv_nsec;
};

/*
 * A thread of its own: once thread @tid sleeps in the 32-bit call, post
 * the vector of sender index @idx, and @ms later send it @sig.
 */
struct late_signal {
	int fd;
	int idx;
	pid_t tid;
	int sig, ms;
	int in_call;		/* 1: it was seen in the call */
	int send_ret, ret;
};

/* Whether thread @tid is in the ia32 clock_nanosleep_time64. */
static bool in_sleep(pid_t tid)
{
	char path[64], buf[64] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && atoi(buf) == IA32_NR_clock_nanosleep_time64;
}

static void *late_signal_main(void *arg)
{
	struct late_signal *l = arg;
	uint64_t end = now_ns() + WAIT_LONG;

	while (!in_sleep(l->tid) && now_ns() < end)
		usleep(1000);
	l->in_call = in_sleep(l->tid);
	l->send_ret = nvx_uintr_send(l->fd, l->idx);
	usleep(l->ms * 1000);
	l->ret = tgkill_tid(l->tid, l->sig);
	return NULL;
}

/*
 * A 32-bit clock_nanosleep of 20 s. Once the thread sleeps in it, a
 * vector is posted (it waits: the thread sleeps; the call is seen in
 * /proc, so that the vector cannot come before the call however slow
 * the machine); 30 ms later a signal with a handler ends the sleep with
 * -ERESTART_RESTARTBLOCK, and the vector is delivered first, on the way
 * to the signal: nvx decides the restart (a handler without
 * NVX_UINTR_INTERRUPT_SYSCALLS: restart), the signal handler runs, then
 * the vector's handler, whose frame is at the int $0x80, and the call
 * made again is the ia32 restart_syscall (number 0). The signal
 * handler's sigreturn has reset the restart block, so it ends with
 * EINTR, as any sleep a handled signal interrupts. With the 64-bit
 * number (219) the call made again was the ia32 syscall 219 (madvise):
 * EINVAL.
 */
TEST_F(uintr, int80_nanosleep_restarts)
{
	struct late_signal l = { .fd = self->fd, .tid = sys_gettid(),
				 .sig = SIGUSR2, .ms = 30 };
	struct ts64 *ts;
	uint64_t t0, took;
	pthread_t t;
	long ret;

	if (!have_int80())
		SKIP(return, "no int $0x80 (CONFIG_IA32_EMULATION)");
	ts = low_page();
	ASSERT_NE(NULL, ts);
	ASSERT_EQ(0, catch_signal(SIGUSR2));
	l.idx = register_vector(_metadata, self->fd, 9, NULL);
	ts[0] = (struct ts64){ .tv_sec = 20 };
	ASSERT_EQ(0, pthread_create(&t, NULL, late_signal_main, &l));
	t0 = now_ns();
	ret = int80(IA32_NR_clock_nanosleep_time64, CLOCK_MONOTONIC, 0,
		    (long)(uintptr_t)&ts[0], (long)(uintptr_t)&ts[1]);
	took = now_ns() - t0;
	pthread_join(t, NULL);
	EXPECT_EQ(1, l.in_call);
	EXPECT_EQ(0, l.send_ret);
	EXPECT_EQ(0, l.ret);
	EXPECT_EQ(-EINTR, ret) TH_LOG("after %llu ms",
				      (unsigned long long)(took / MS));
	EXPECT_EQ(1ULL, handled_vec(9));
	EXPECT_EQ(1, signals());
	/* delivered in the sleep: the handler returned to the int, again */
	EXPECT_EQ(int80_ip, rec.f.rip);
	munmap(ts, 4096);
}

/* The abort handler's address, for the frame's rip (not a function). */
void nvx_test_rseq_abort(void);

/*
 * Count rounds in spin.ready inside an rseq critical section until
 * spin.stop: 1 when the section was aborted (a preemption, a migration,
 * a signal or a vector), 0 when spin.stop ended it. noinline, noclone:
 * the asm defines a global label.
 */
static __attribute__((noinline, noclone)) int rseq_spin(struct rseq *rs)
{
	int aborted = 0;

	asm volatile(".pushsection .data, \"aw\"\n\t"
		     ".balign 32\n"
		     "70:\n\t"
		     ".long 0, 0\n\t"			/* version, flags */
		     ".quad 71f, 72f - 71f, nvx_test_rseq_abort\n\t"
		     ".popsection\n\t"
		     "leaq 70b(%%rip), %%rax\n\t"
		     "movq %%rax, %[cs]\n"
		     "71:\n\t"
		     "lock addl $1, %[ready]\n\t"
		     "cmpl $0, %[stop]\n\t"
		     "je 71b\n"
		     "72:\n\t"
		     "jmp 74f\n\t"
		     ".long 0x53053053\n"		/* glibc's RSEQ_SIG */
		     ".globl nvx_test_rseq_abort\n"
		     "nvx_test_rseq_abort:\n\t"
		     "movl $1, %[ab]\n"
		     "74:\n\t"
		     : [ab] "+m"(aborted), [cs] "=m"(rs->rseq_cs),
		       [ready] "+m"(spin.ready)
		     : [stop] "m"(spin.stop)
		     : "rax", "memory", "cc");
	/* the kernel cleared it if it aborted */
	__atomic_store_n(&rs->rseq_cs, 0, __ATOMIC_RELAXED);
	return aborted;
}

/*
 * A vector sent from another CPU while this thread spins in an rseq
 * critical section (the sender waits for a round counted inside it):
 * the section is aborted and the handler's frame holds the abort
 * handler's address, so the handler returns there. A round that a
 * preemption aborted first is tried again.
 */
TEST_F(uintr, vector_aborts_rseq_section)
{
	unsigned int round;
	struct rseq *rs;
	int idx, other, me;
	bool hit = false;
	char *tp;

	if (!__rseq_size)
		SKIP(return, "rseq not registered (CONFIG_RSEQ)");
	if (two_cpus(&me, &other))
		SKIP(return, "one CPU");
	ASSERT_EQ(0, pin_cpu(me));
	asm("movq %%fs:0, %0" : "=r"(tp));	/* the thread pointer */
	rs = (struct rseq *)(tp + __rseq_offset);
	idx = register_vector(_metadata, self->fd, 11, NULL);
	for (round = 0; round < 20 && !hit; round++) {
		struct kicker k = { .fd = self->fd, .cpu = other,
				    .ready = &spin.ready, .nsends = 1,
				    .index = { idx }, .nindex = 1 };
		pthread_t t;
		int aborted;

		__atomic_store_n(&spin.ready, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&spin.stop, 0, __ATOMIC_SEQ_CST);
		rec.f.rip = 0;
		ASSERT_EQ(0, pthread_create(&t, NULL, kicker_thread, &k));
		aborted = rseq_spin(rs);
		if (!aborted)	/* the kicker gave up */
			__atomic_store_n(&spin.stop, 1, __ATOMIC_SEQ_CST);
		/*
		 * A preemption may have aborted the section before the
		 * vector came: take it here, not blocked in the join (the
		 * kicker waits for the handler before it ends).
		 */
		if (aborted)
			wait_vec(11, round + 1, WAIT_LONG, true);
		pthread_join(t, NULL);
		ASSERT_EQ(0, k.err);
		ASSERT_EQ(0, k.timed_out)
			TH_LOG("round %u: ready %d, handled %llu, aborted %d, rip %#llx",
			       round, spin.ready,
			       (unsigned long long)handled_vec(11), aborted,
			       (unsigned long long)rec.f.rip);
		hit = aborted &&
		      rec.f.rip == (uint64_t)(uintptr_t)nvx_test_rseq_abort;
	}
	TH_LOG("%u rounds", round);
	EXPECT_TRUE(hit) TH_LOG("frame rip %#llx, abort handler %#llx",
				(unsigned long long)rec.f.rip,
				(unsigned long long)(uintptr_t)nvx_test_rseq_abort);
	EXPECT_EQ((uint64_t)round, handled_vec(11));
}

TEST_HARNESS_MAIN
