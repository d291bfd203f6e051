// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": user-interrupt delivery.
 *
 * Receivers register a handler through tools/nvx/lib/nvx_uintr.h; the
 * handlers here only count and record what they saw (general registers
 * only: atomics, stores, the library's raw send). Every test runs in a
 * process of its own, so the record starts zeroed.
 *
 * The whole group skips when /dev/nvx does not offer NVX_FEAT_UINTR.
 * Tests about delivery to a thread running on another CPU skip on a
 * machine with one CPU.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <nvx/uintr.h>

/*
 * For -Wextra: the harness's SIGALRM handler has an unused parameter,
 * and its TEST_F() wrapper keeps a pid across setjmp() (which GCC flags
 * where it inlines a test into the wrapper).
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"
#include "../../../nvx/lib/nvx_uintr.h"
#include "nvx_test.h"

#define MS		1000000ULL		/* in ns */
#define SEC		(1000 * MS)
/* How long a test waits for something that should happen at once. */
#define WAIT_LONG	(10 * SEC)
#define ORDER_MAX	128
#define RFLAGS_IF	0x200ULL
#define RED_ZONE_FILL	0x5a5aa5a5c3c33c3cULL
#define EXEC_CHILD_ARG	"--uintr-exec-child"

/* What the handlers saw. */
static struct {
	uint64_t count;			/* handler calls, all vectors */
	uint64_t per_vec[NVX_UINTR_VECTORS];
	uint32_t order[ORDER_MAX];	/* the vectors, in the order handled */
	int depth;			/* handlers running now */
	int max_depth;
	int mismatch;			/* frame->vector != vector seen */
	uint64_t frame;			/* the last handler's frame pointer */
	struct nvx_uintr_frame f;	/* and what it held */
	uint64_t handler_sp;		/* an address on that handler's stack */
	uint32_t enabled;		/* the page's enabled flag it saw */
	int tid;			/* the thread it ran on */
	uint64_t stop_at;		/* count that sets spin.stop */
	uint64_t resend_vector;		/* vector + 1: send from its handler */
	int resend_fd;
	uint32_t resend_index;
	int resend_ret;
} rec;

/*
 * A receiver spinning in user mode: it counts its rounds of spinning in
 * @ready and spins until @stop (one struct: one asm operand for both).
 */
static struct {
	int ready;
	int stop;
} spin;

static __thread int my_tid;
static __thread struct nvx_uintr_page *my_page;

static NVX_UINTR_HANDLER void on_uintr(struct nvx_uintr_frame *f,
				       uint64_t vector)
{
	int depth = __atomic_add_fetch(&rec.depth, 1, __ATOMIC_SEQ_CST);
	uint64_t n;

	if (depth > rec.max_depth)
		rec.max_depth = depth;
	rec.enabled = my_page ? __atomic_load_n(&my_page->enabled,
						__ATOMIC_SEQ_CST) : ~0u;
	rec.frame = (uintptr_t)f;
	rec.f.vector = f->vector;
	rec.f.rip = f->rip;
	rec.f.rflags = f->rflags;
	rec.f.rsp = f->rsp;
	rec.handler_sp = (uintptr_t)__builtin_frame_address(0);
	rec.tid = my_tid;
	if (f->vector != vector)
		rec.mismatch = 1;
	if (rec.resend_vector == vector + 1) {
		rec.resend_vector = 0;
		rec.resend_ret = nvx_uintr_send(rec.resend_fd,
						rec.resend_index);
	}
	if (vector < NVX_UINTR_VECTORS)
		__atomic_fetch_add(&rec.per_vec[vector], 1, __ATOMIC_SEQ_CST);
	n = __atomic_fetch_add(&rec.count, 1, __ATOMIC_SEQ_CST);
	if (n < ORDER_MAX)
		rec.order[n] = vector;
	if (rec.stop_at && n + 1 >= rec.stop_at)
		__atomic_store_n(&spin.stop, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&rec.depth, 1, __ATOMIC_SEQ_CST);
}

/* A handler address for raw registrations that must never deliver. */
static __attribute__((naked, used)) void trap_entry(void)
{
	__asm__ volatile("ud2");
}

static int sig_count;
static int sig_last;

static void on_signal(int sig)
{
	__atomic_store_n(&sig_last, sig, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sig_count, 1, __ATOMIC_SEQ_CST);
}

/* Install on_signal for @sig, without SA_RESTART. */
static int catch_signal(int sig)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}

static int signals(void)
{
	return __atomic_load_n(&sig_count, __ATOMIC_SEQ_CST);
}

static pid_t sys_gettid(void)
{
	return syscall(SYS_gettid);
}

static int tgkill_tid(pid_t tid, int sig)
{
	return syscall(SYS_tgkill, getpid(), tid, sig) ? -errno : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* Busy-wait in user mode for @ns. */
static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		__builtin_ia32_pause();
}

/* Busy-wait for @ns making system calls (returns to user mode). */
static void spin_syscalls_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		syscall(SYS_getppid);
}

static uint64_t handled(void)
{
	return __atomic_load_n(&rec.count, __ATOMIC_SEQ_CST);
}

static uint64_t handled_vec(unsigned int vector)
{
	return __atomic_load_n(&rec.per_vec[vector], __ATOMIC_SEQ_CST);
}

/*
 * Wait until the handlers ran @n times in all: 0, or -ETIMEDOUT after
 * @ns. @syscalls: make system calls meanwhile, else stay in user mode.
 */
static int wait_handled(uint64_t n, uint64_t ns, bool syscalls)
{
	uint64_t end = now_ns() + ns;

	while (handled() < n) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		if (syscalls)
			syscall(SYS_getppid);
	}
	return 0;
}

/* The same for one vector, checking the clock only now and then. */
static int wait_vec(unsigned int vector, uint64_t n, uint64_t ns,
		    bool syscalls)
{
	unsigned int spins = 0;
	uint64_t end = 0;

	while (handled_vec(vector) < n) {
		if (syscalls)
			syscall(SYS_getppid);
		if (++spins % 1024)
			continue;
		if (!end)
			end = now_ns() + ns;
		else if (now_ns() > end)
			return -ETIMEDOUT;
	}
	return 0;
}

/* Pin the calling thread to @cpu; -1 leaves it alone. */
static int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * Two CPUs this process may run on: 0. Where there are fewer: -1, and
 * both are -1 (pin_cpu() then leaves threads alone).
 */
static int two_cpus(int *a, int *b)
{
	int cpu, found[2] = { -1, -1 }, n = 0;
	cpu_set_t set;

	*a = -1;
	*b = -1;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
		if (CPU_ISSET(cpu, &set))
			found[n++] = cpu;
	if (n < 2)
		return -1;
	*a = found[0];
	*b = found[1];
	return 0;
}

/*
 * Wait until thread @tid sleeps (blocked in a system call), then a
 * little longer: 0, or -ETIMEDOUT. Without /proc, just wait a while.
 */
static int wait_sleeping(pid_t tid)
{
	uint64_t end = now_ns() + WAIT_LONG;
	char path[64], buf[512], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	while (now_ns() < end) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			usleep(200000);
			return 0;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S') {
				usleep(20000);
				return 0;
			}
		}
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/* Start of the executable mapping that holds @addr, or 0. */
static uint64_t exec_mapping(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	uint64_t ret = 0;
	char line[4096], perms[8];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (addr >= lo && addr < hi && perms[2] == 'x') {
			ret = lo;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Register on_uintr for the calling thread: the receiver fd, or -errno. */
static int do_register(int fd, void *stack, size_t size, uint32_t flags)
{
	int rfd = nvx_uintr_register_handler(fd, on_uintr, stack, size, flags);

	my_tid = sys_gettid();
	if (rfd >= 0)
		my_page = nvx_uintr_page();
	return rfd;
}

static int do_unregister(int fd)
{
	my_page = NULL;
	return nvx_uintr_unregister_handler(fd);
}

static int do_unregister_raw(int fd)
{
	struct nvx_uintr_unregister u = { 0 };

	return nvx_ioctl(fd, NVX_IOC_UINTR_UNREGISTER, &u);
}

/*
 * A vector fd for @vector of the calling thread, added to the sender
 * table: the index, or -errno. The fd goes to *@vfd, or stays open.
 */
static int do_vector(int fd, uint32_t vector, int *vfd)
{
	int v = nvx_uintr_vector_fd(fd, vector), idx;

	if (v < 0)
		return v;
	idx = nvx_uintr_add_sender(fd, v);
	if (idx < 0) {
		close(v);
		return idx;
	}
	if (vfd)
		*vfd = v;
	return idx;
}

static int do_del(int fd, uint32_t index)
{
	struct nvx_uintr_sender s = { .index = index };

	return nvx_ioctl(fd, NVX_IOC_UINTR_DEL_SENDER, &s);
}

static int do_send_many(int fd, const uint32_t *indices, uint32_t count,
			uint32_t *sent)
{
	struct nvx_uintr_send_many m = {
		.count = count,
		.indices = (uintptr_t)indices,
		.sent = 0xdeadbeef,
	};
	int ret = nvx_ioctl(fd, NVX_IOC_UINTR_SEND_MANY, &m);

	*sent = m.sent;
	return ret;
}

static int do_wait(int fd, uint64_t timeout_ns)
{
	struct nvx_uintr_wait w = { .timeout_ns = timeout_ns };

	return nvx_ioctl(fd, NVX_IOC_UINTR_WAIT, &w);
}

static int do_timer(int fd, uint32_t vector, uint64_t first_ns,
		    uint64_t period_ns)
{
	struct nvx_uintr_timer t = {
		.vector = vector,
		.first_ns = first_ns,
		.period_ns = period_ns,
	};

	return nvx_ioctl(fd, NVX_IOC_UINTR_TIMER, &t);
}

static int do_signal(int fd, uint32_t signo, uint32_t vector)
{
	struct nvx_uintr_signal s = { .signo = signo, .vector = vector };

	return nvx_ioctl(fd, NVX_IOC_UINTR_SIGNAL, &s);
}

/* Pass @fd over the unix socket @sock. */
static int send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char c = 'F';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;

	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -EIO;
}

/* Receive an fd (close-on-exec) from @sock: the fd, or -errno. */
static int recv_fd(int sock)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET ||
	    cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * A thread that sends @nsends interrupts, one at a time: send i once
 * *@ready exceeds i (the receiver counts its rounds there), then wait
 * until a handler ran for it.
 */
struct kicker {
	int fd;
	int cpu;
	const int *ready;
	uint32_t index[4];
	unsigned int nindex;
	unsigned int nsends;
	int err;		/* the failed send's -errno */
	int timed_out;		/* not ready, or a send not handled */
	int failed;		/* either: it gave up */
};

static void *kicker_thread(void *arg)
{
	struct kicker *k = arg;
	uint64_t end, n;
	unsigned int i;

	pin_cpu(k->cpu);
	for (i = 0; i < k->nsends; i++) {
		end = now_ns() + WAIT_LONG;
		while (__atomic_load_n(k->ready, __ATOMIC_SEQ_CST) <= (int)i) {
			if (now_ns() > end) {
				k->timed_out = 1;
				goto fail;
			}
		}
		n = handled();
		k->err = nvx_uintr_send(k->fd, k->index[i % k->nindex]);
		if (k->err)
			goto fail;
		if (wait_handled(n + 1, WAIT_LONG, false)) {
			k->timed_out = 1;
			goto fail;
		}
	}
	return NULL;
fail:
	/* never leave the receiver spinning */
	__atomic_store_n(&k->failed, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&spin.stop, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * A receiver thread that registers, hands out a vector fd, then blocks
 * in one call (NVX_IOC_UINTR_WAIT or a read() from a pipe) and says how
 * that call ended.
 */
struct blocker {
	int fd;
	int cpu;
	uint32_t flags;		/* register flags */
	bool use_wait;		/* else read(pipe_r) */
	int pipe_r;
	uint32_t vector;
	int route_signo;	/* route this signal to @vector first */
	int vfd;		/* out: its vector fd */
	pid_t tid;		/* out */
	int setup_err;		/* out: -errno */
	int ready;		/* 1: about to block, -1: setup failed */
	int done;		/* the call returned */
	int ret;		/* its result: >= 0, or -errno */
	uint64_t handled_then;	/* handler calls when it returned */
};

static void *blocker_thread(void *arg)
{
	struct blocker *b = arg;
	int ret;
	char c;

	pin_cpu(b->cpu);
	b->tid = sys_gettid();
	ret = do_register(b->fd, NULL, 0, b->flags);
	if (ret >= 0 && b->route_signo)
		ret = do_signal(b->fd, b->route_signo, b->vector);
	if (ret >= 0)
		ret = nvx_uintr_vector_fd(b->fd, b->vector);
	if (ret < 0) {
		b->setup_err = ret;
		__atomic_store_n(&b->ready, -1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	b->vfd = ret;
	__atomic_store_n(&b->ready, 1, __ATOMIC_SEQ_CST);
	if (b->use_wait)
		ret = do_wait(b->fd, WAIT_LONG);
	else
		ret = read(b->pipe_r, &c, 1) < 0 ? -errno : 1;
	b->handled_then = handled();
	b->ret = ret;
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Start @b and wait until it sleeps in its call: 0 or -errno. */
static int start_blocker(pthread_t *t, struct blocker *b)
{
	uint64_t end = now_ns() + WAIT_LONG;
	int ready;

	if (pthread_create(t, NULL, blocker_thread, b))
		return -EAGAIN;
	for (;;) {
		ready = __atomic_load_n(&b->ready, __ATOMIC_SEQ_CST);
		if (ready)
			break;
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
	if (ready < 0)
		return b->setup_err;
	return wait_sleeping(b->tid);
}

static bool blocker_done(struct blocker *b)
{
	return __atomic_load_n(&b->done, __ATOMIC_SEQ_CST);
}

/*
 * Join @b, first waiting up to @ns for its call to return: 0, or
 * -ETIMEDOUT when it did not (a read is then ended through @pipe_w).
 */
static int join_blocker(pthread_t t, struct blocker *b, int pipe_w,
			uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	int ret = 0;

	while (!blocker_done(b)) {
		if (now_ns() > end) {
			ret = -ETIMEDOUT;
			if (pipe_w >= 0 && write(pipe_w, "x", 1) != 1)
				ret = -EIO;
			break;
		}
		usleep(1000);
	}
	pthread_join(t, NULL);
	return ret;
}

/*
 * A receiver thread that registers, hands out a vector fd, then waits
 * in NVX_IOC_UINTR_WAIT until its handler has run @want times in all.
 */
struct waiter {
	int fd;
	int cpu;
	uint32_t vector;
	uint64_t want;
	int unregistered_err;	/* out: NVX_IOC_UINTR_VECTOR_FD before */
	int rfd;		/* out: its registration */
	int vfd;		/* out: its vector fd */
	pid_t tid;		/* out */
	int ready;		/* 1: vfd is valid, -1: it failed */
};

static void *waiter_thread(void *arg)
{
	struct waiter *w = arg;
	uint64_t end;

	pin_cpu(w->cpu);
	w->tid = sys_gettid();
	w->unregistered_err = nvx_uintr_vector_fd(w->fd, w->vector);
	w->rfd = do_register(w->fd, NULL, 0, 0);
	w->vfd = w->rfd < 0 ? -1 : nvx_uintr_vector_fd(w->fd, w->vector);
	__atomic_store_n(&w->ready, w->vfd < 0 ? -1 : 1, __ATOMIC_SEQ_CST);
	if (w->vfd < 0)
		return NULL;
	end = now_ns() + WAIT_LONG;
	while (handled() < w->want && now_ns() < end)
		do_wait(w->fd, 100 * MS);
	return NULL;
}

/* Wait for *@flag to become nonzero: its value, or 0 after WAIT_LONG. */
static int wait_flag(const int *flag)
{
	uint64_t end = now_ns() + WAIT_LONG;
	int v;

	for (;;) {
		v = __atomic_load_n(flag, __ATOMIC_SEQ_CST);
		if (v || now_ns() > end)
			return v;
		usleep(1000);
	}
}

FIXTURE(uintr) {
	int fd;
};

FIXTURE_SETUP(uintr)
{
	struct nvx_features f = { 0 };

	/* nvx kernels have /dev/nvx: no device is a failure, not a skip */
	self->fd = nvx_open();
	ASSERT_LE(0, self->fd) TH_LOG("open " NVX_DEV ": %s",
				      strerror(-self->fd));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_FEATURES, &f));
	if (!(f.features & NVX_FEAT_UINTR))
		SKIP(return, "no NVX_FEAT_UINTR: user interrupts not built");
}

FIXTURE_TEARDOWN(uintr)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* --- registration and bad input ------------------------------------- */

/*
 * The library registers, maps the page and unmasks; the page starts
 * clear and maps no other way; receiver and vector fds are
 * close-on-exec; a second registration is -EBUSY; after unregistering,
 * a new one works.
 */
TEST_F(uintr, register_maps_page)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)trap_entry };
	long pg = sysconf(_SC_PAGESIZE);
	struct nvx_uintr_page *p;
	int rfd, vfd, i;

	rfd = do_register(self->fd, NULL, 0, 0);
	ASSERT_LE(0, rfd) TH_LOG("register: %s", strerror(-rfd));
	p = nvx_uintr_page();
	ASSERT_NE(NULL, p);
	EXPECT_EQ(1u, p->enabled);
	EXPECT_EQ(0ULL, p->pending);
	EXPECT_EQ(0ULL, p->delivered);
	EXPECT_EQ(0u, p->reserved0);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0ULL, p->reserved[i]);
	EXPECT_EQ(FD_CLOEXEC, fcntl(rfd, F_GETFD) & FD_CLOEXEC);

	/* the page maps only as one shared page at offset 0 */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED, rfd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED, rfd, pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, rfd, 0));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-EBUSY, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	EXPECT_EQ(-EBUSY, nvx_uintr_register_handler(self->fd, on_uintr, NULL,
						     0, 0));
	EXPECT_EQ(p, nvx_uintr_page());

	vfd = nvx_uintr_vector_fd(self->fd, 0);
	ASSERT_LE(0, vfd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(vfd, F_GETFD) & FD_CLOEXEC);
	close(vfd);
	vfd = nvx_uintr_vector_fd(self->fd, NVX_UINTR_VECTORS - 1);
	ASSERT_LE(0, vfd);
	close(vfd);

	EXPECT_EQ(0, do_unregister(self->fd));
	EXPECT_EQ(-ENOENT, do_unregister_raw(self->fd));
	rfd = do_register(self->fd, NULL, 0, 0);
	EXPECT_LE(0, rfd) TH_LOG("register again: %s", strerror(-rfd));
	EXPECT_EQ(0ULL, handled());
}

/*
 * The kernel's own view: the page starts masked, so a send only sets a
 * pending bit (were it delivered, trap_entry would kill the test), and a
 * pending vector ends NVX_IOC_UINTR_WAIT at once.
 */
TEST_F(uintr, raw_register_starts_masked)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)trap_entry };
	long pg = sysconf(_SC_PAGESIZE);
	struct nvx_uintr_page *p;
	int vfd, idx;
	uint64_t t0;

	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	ASSERT_LE(0, r.fd);
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0u, p->enabled);
	EXPECT_EQ(0ULL, p->pending);
	EXPECT_EQ(0ULL, p->delivered);

	vfd = nvx_uintr_vector_fd(self->fd, 30);
	ASSERT_LE(0, vfd);
	idx = nvx_uintr_add_sender(self->fd, vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL << 30, p->pending);
	EXPECT_EQ(0ULL, p->delivered);

	t0 = now_ns();
	EXPECT_EQ(0, do_wait(self->fd, WAIT_LONG));
	EXPECT_GT(WAIT_LONG / 2, now_ns() - t0);
	EXPECT_EQ(1ULL << 30, p->pending);

	EXPECT_EQ(0, do_unregister_raw(self->fd));
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	munmap(p, pg);
	close(r.fd);
}

TEST_F(uintr, register_bad_args)
{
	size_t size = 65536;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t h = (uintptr_t)trap_entry, s = (uintptr_t)stack;
	const struct {
		uint64_t handler, stack, size;
		int err;
	} bad[] = {
		{ 0, 0, 0, -EINVAL },				/* no handler */
		{ 0xffff800000000000ULL, 0, 0, -EFAULT },	/* kernel */
		{ 0xffffffff81000000ULL, 0, 0, -EFAULT },
		{ h, s, 0, -EINVAL },				/* no size */
		{ h, 0, 4096, -EINVAL },			/* no stack */
		{ h, s, 255, -EINVAL },				/* too small */
		{ h, 0xffff800000000000ULL, 4096, -EFAULT },
		{ h, s, UINT64_MAX, -EFAULT },			/* too far */
	};
	struct nvx_uintr_register r;
	unsigned int i;

	ASSERT_NE(MAP_FAILED, stack);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&r, 0, sizeof(r));
		r.handler = bad[i].handler;
		r.stack = bad[i].stack;
		r.stack_size = bad[i].size;
		EXPECT_EQ(bad[i].err,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r))
			TH_LOG("case %u", i);
	}
	/* none of them registered anything */
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(self->fd, 0));

	/* the smallest alternate stack is fine */
	memset(&r, 0, sizeof(r));
	r.handler = h;
	r.stack = s + size - 256;
	r.stack_size = 256;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	EXPECT_EQ(0, do_unregister_raw(self->fd));
	close(r.fd);
	munmap(stack, size);
}

/* Every flag bit a struct does not define is -EINVAL, and does nothing. */
TEST_F(uintr, unknown_flags_are_einval)
{
	int vfd = -1, idx, bit;
	uint32_t flag;

	for (bit = 0; bit < 32; bit++) {
		struct nvx_uintr_register r = {
			.flags = 1u << bit,
			.handler = (uintptr_t)trap_entry,
		};

		if (r.flags & NVX_UINTR_REGISTER_FLAGS)
			continue;
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r))
			TH_LOG("flag %#x", r.flags);
	}
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 1, &vfd);
	ASSERT_LE(0, idx);

	for (bit = 0; bit < 32; bit++) {
		struct nvx_uintr_vector_fd v = { .vector = 1 };
		struct nvx_uintr_sender add = { .vector_fd = vfd };
		struct nvx_uintr_sender del = { .index = idx };
		struct nvx_uintr_send s = { .index = idx };
		uint32_t one = idx;
		struct nvx_uintr_send_many m = {
			.count = 1,
			.indices = (uintptr_t)&one,
		};
		struct nvx_uintr_wait w = { 0 };
		struct nvx_uintr_timer t = {
			.vector = 1,
			.first_ns = NVX_UINTR_MAX_NS,
		};
		struct nvx_uintr_signal sig = { .signo = SIGUSR1 };
		struct nvx_uintr_unregister u = { 0 };

		flag = 1u << bit;
		v.flags = flag;
		add.flags = flag;
		del.flags = flag;
		s.flags = flag;
		m.flags = flag;
		w.flags = flag;
		t.flags = flag;
		sig.flags = flag;
		u.flags = flag;
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_VECTOR_FD, &v))
			TH_LOG("VECTOR_FD flag %#x", flag);
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_ADD_SENDER, &add))
			TH_LOG("ADD_SENDER flag %#x", flag);
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_DEL_SENDER, &del))
			TH_LOG("DEL_SENDER flag %#x", flag);
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_SEND, &s))
			TH_LOG("SEND flag %#x", flag);
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_SEND_MANY, &m))
			TH_LOG("SEND_MANY flag %#x", flag);
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_WAIT, &w))
			TH_LOG("WAIT flag %#x", flag);
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_TIMER, &t))
			TH_LOG("TIMER flag %#x", flag);
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_SIGNAL, &sig))
			TH_LOG("SIGNAL flag %#x", flag);
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd, NVX_IOC_UINTR_UNREGISTER, &u))
			TH_LOG("UNREGISTER flag %#x", flag);
	}
	/* nothing was sent, the entry and the registration are still there */
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(1));
}

/* A nonzero reserved field is -EINVAL (Documentation/nvx/uintr.rst). */
TEST_F(uintr, nonzero_reserved_is_einval)
{
	struct nvx_uintr_unregister u = { .reserved = 1 };
	struct nvx_uintr_vector_fd v = { .vector = 1, .reserved = 1 };
	struct nvx_uintr_sender add = { .reserved = 1 };
	struct nvx_uintr_sender del = { .reserved = 1 };
	struct nvx_uintr_send_many m = { .count = 1, .reserved = 1 };
	struct nvx_uintr_wait w = { .reserved = 1 };
	struct nvx_uintr_signal sig = { .signo = SIGUSR1, .reserved = 1 };
	uint32_t one;
	int idx, vfd = -1;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 1, &vfd);
	ASSERT_LE(0, idx);
	one = idx;
	add.vector_fd = vfd;
	del.index = idx;
	m.indices = (uintptr_t)&one;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_VECTOR_FD, &v));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_ADD_SENDER, &add));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_DEL_SENDER, &del));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_SEND_MANY, &m));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_WAIT, &w));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_SIGNAL, &sig));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_UINTR_UNREGISTER, &u));
	/* nothing was sent, the entry and the registration are still there */
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(1));
}

/* A struct smaller than its first version is -EINVAL, for every ioctl. */
TEST_F(uintr, undersized_structs_are_einval)
{
	union {
		struct nvx_uintr_register reg;
		struct nvx_uintr_unregister unreg;
		struct nvx_uintr_vector_fd vec;
		struct nvx_uintr_sender sender;
		struct nvx_uintr_send send;
		struct nvx_uintr_send_many many;
		struct nvx_uintr_wait wait;
		struct nvx_uintr_timer timer;
		struct nvx_uintr_signal sig;
		uint64_t raw[8];
	} u;
	const struct {
		unsigned long cmd;
		size_t size;
		const char *name;
	} ioc[] = {
		{ NVX_IOC_UINTR_UNREGISTER, sizeof(u.unreg), "UNREGISTER" },
		{ NVX_IOC_UINTR_VECTOR_FD, sizeof(u.vec), "VECTOR_FD" },
		{ NVX_IOC_UINTR_ADD_SENDER, sizeof(u.sender), "ADD_SENDER" },
		{ NVX_IOC_UINTR_DEL_SENDER, sizeof(u.sender), "DEL_SENDER" },
		{ NVX_IOC_UINTR_SEND, sizeof(u.send), "SEND" },
		{ NVX_IOC_UINTR_SEND_MANY, sizeof(u.many), "SEND_MANY" },
		{ NVX_IOC_UINTR_WAIT, sizeof(u.wait), "WAIT" },
		{ NVX_IOC_UINTR_TIMER, sizeof(u.timer), "TIMER" },
		{ NVX_IOC_UINTR_SIGNAL, sizeof(u.sig), "SIGNAL" },
	};
	uint32_t one;
	unsigned int i;
	size_t sz;
	int idx, vfd = -1;

	/*
	 * Each buffer holds a valid struct, so only its size is wrong.
	 * REGISTER first, while the thread has no handler (not -EBUSY).
	 */
	for (sz = 0; sz < sizeof(u.reg); sz++) {
		memset(&u, 0, sizeof(u));
		u.reg.handler = (uintptr_t)trap_entry;
		EXPECT_EQ(-EINVAL,
			  nvx_ioctl(self->fd,
				    nvx_ioc_resize(NVX_IOC_UINTR_REGISTER, sz),
				    &u))
			TH_LOG("REGISTER size %zu", sz);
	}
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(self->fd, 0));

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 2, &vfd);
	ASSERT_LE(0, idx);
	one = idx;
	for (i = 0; i < ARRAY_SIZE(ioc); i++) {
		for (sz = 0; sz < ioc[i].size; sz++) {
			memset(&u, 0, sizeof(u));
			switch (_IOC_NR(ioc[i].cmd)) {
			case _IOC_NR(NVX_IOC_UINTR_ADD_SENDER):
				u.sender.vector_fd = vfd;
				break;
			case _IOC_NR(NVX_IOC_UINTR_DEL_SENDER):
				u.sender.index = idx;
				break;
			case _IOC_NR(NVX_IOC_UINTR_SEND):
				u.send.index = idx;
				break;
			case _IOC_NR(NVX_IOC_UINTR_SEND_MANY):
				u.many.count = 1;
				u.many.indices = (uintptr_t)&one;
				break;
			case _IOC_NR(NVX_IOC_UINTR_SIGNAL):
				u.sig.signo = SIGUSR1;
				break;
			}
			EXPECT_EQ(-EINVAL,
				  nvx_ioctl(self->fd,
					    nvx_ioc_resize(ioc[i].cmd, sz), &u))
				TH_LOG("%s size %zu", ioc[i].name, sz);
		}
	}
	/* still registered, the entry still there */
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(2));
}

/*
 * A struct larger than the kernel knows is fine when the extra bytes are
 * zero, and -E2BIG when they are not (nvx.h's ABI rules).
 */
TEST_F(uintr, larger_structs)
{
	struct {
		struct nvx_uintr_register r;
		uint64_t future[2];
	} reg;
	struct {
		struct nvx_uintr_vector_fd v;
		uint64_t future[2];
	} vec;
	unsigned long reg_cmd = nvx_ioc_resize(NVX_IOC_UINTR_REGISTER,
					       sizeof(reg));
	unsigned long vec_cmd = nvx_ioc_resize(NVX_IOC_UINTR_VECTOR_FD,
					       sizeof(vec));

	memset(&reg, 0, sizeof(reg));
	reg.r.handler = (uintptr_t)trap_entry;
	reg.future[1] = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd, reg_cmd, &reg));
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(self->fd, 0));
	reg.future[1] = 0;
	ASSERT_EQ(0, nvx_ioctl(self->fd, reg_cmd, &reg));
	EXPECT_LE(0, reg.r.fd);
	EXPECT_EQ(0ULL, reg.future[0] | reg.future[1]);

	memset(&vec, 0, sizeof(vec));
	vec.v.vector = 1;
	ASSERT_EQ(0, nvx_ioctl(self->fd, vec_cmd, &vec));
	EXPECT_LE(0, vec.v.fd);
	EXPECT_EQ(0ULL, vec.future[0] | vec.future[1]);
	close(vec.v.fd);
	memset(&vec, 0, sizeof(vec));
	vec.v.vector = 1;
	vec.future[0] = 1ULL << 63;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd, vec_cmd, &vec));

	EXPECT_EQ(0, do_unregister_raw(self->fd));
	close(reg.r.fd);
}

TEST_F(uintr, vector_out_of_range_is_einval)
{
	int vfd;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, nvx_uintr_vector_fd(self->fd, NVX_UINTR_VECTORS));
	EXPECT_EQ(-EINVAL, nvx_uintr_vector_fd(self->fd, UINT32_MAX));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, NVX_UINTR_VECTORS, MS, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, UINT32_MAX, MS, 0));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGUSR1, NVX_UINTR_VECTORS));
	EXPECT_EQ(-EINVAL, do_signal(self->fd, SIGUSR1, UINT32_MAX));
	vfd = nvx_uintr_vector_fd(self->fd, 0);
	EXPECT_LE(0, vfd);
	close(vfd);
	vfd = nvx_uintr_vector_fd(self->fd, NVX_UINTR_VECTORS - 1);
	EXPECT_LE(0, vfd);
	close(vfd);
	EXPECT_EQ(0ULL, handled());
}

static void expect_unregistered(struct __test_metadata *_metadata, int fd)
{
	EXPECT_EQ(-ENOENT, nvx_uintr_vector_fd(fd, 0));
	EXPECT_EQ(-ENOENT, do_wait(fd, 0));
	EXPECT_EQ(-ENOENT, do_timer(fd, 0, MS, 0));
	EXPECT_EQ(-ENOENT, do_signal(fd, SIGUSR1, 0));
	EXPECT_EQ(-ENOENT, do_unregister_raw(fd));
}

/* Per-thread ioctls need a handler: before registering and after. */
TEST_F(uintr, unregistered_is_enoent)
{
	expect_unregistered(_metadata, self->fd);
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_unregister(self->fd));
	expect_unregistered(_metadata, self->fd);
}

/*
 * Registration belongs to the thread: another thread of the process
 * starts without one, can register its own, and its vectors reach it.
 */
TEST_F(uintr, registration_is_per_thread)
{
	struct waiter w = { .fd = self->fd, .cpu = -1, .vector = 4, .want = 1 };
	int idx;
	pthread_t t;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	ASSERT_EQ(1, wait_flag(&w.ready))
		TH_LOG("thread: vector fd %d, register %d", w.vfd, w.rfd);
	idx = nvx_uintr_add_sender(self->fd, w.vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	pthread_join(t, NULL);
	EXPECT_EQ(-ENOENT, w.unregistered_err);
	EXPECT_LE(0, w.rfd);
	EXPECT_EQ(1ULL, handled_vec(4));
	EXPECT_EQ(w.tid, rec.tid);

	/* and this thread's registration was not touched */
	idx = do_vector(self->fd, 4, NULL);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(2ULL, handled_vec(4));
	EXPECT_EQ(my_tid, rec.tid);
}

/* Out of fds: -EMFILE, and nothing left behind. */
TEST_F(uintr, out_of_fds_is_emfile)
{
	struct nvx_uintr_register r = { .handler = (uintptr_t)trap_entry };
	struct rlimit old, low;
	int lowest;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	lowest = fcntl(self->fd, F_DUPFD, 0);
	ASSERT_LE(0, lowest);
	close(lowest);
	low = old;
	low.rlim_cur = lowest;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, nvx_ioctl(self->fd, NVX_IOC_UINTR_REGISTER, &r));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	lowest = fcntl(self->fd, F_DUPFD, 0);
	ASSERT_LE(0, lowest);
	close(lowest);
	low.rlim_cur = lowest;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	EXPECT_EQ(-EMFILE, nvx_uintr_vector_fd(self->fd, 0));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	EXPECT_LE(0, nvx_uintr_vector_fd(self->fd, 0));
}

/* --- the sender table ----------------------------------------------- */

TEST_F(uintr, sender_index_errors)
{
	uint32_t empty;
	int idx;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 2, NULL);
	ASSERT_LE(0, idx);
	ASSERT_GT(NVX_UINTR_SENDERS, idx);
	empty = (idx + 1) % NVX_UINTR_SENDERS;

	EXPECT_EQ(-EINVAL, nvx_uintr_send(self->fd, NVX_UINTR_SENDERS));
	EXPECT_EQ(-EINVAL, nvx_uintr_send(self->fd, UINT32_MAX));
	EXPECT_EQ(-EINVAL, do_del(self->fd, NVX_UINTR_SENDERS));
	EXPECT_EQ(-EINVAL, do_del(self->fd, UINT32_MAX));
	EXPECT_EQ(-ENOENT, nvx_uintr_send(self->fd, empty));
	EXPECT_EQ(-ENOENT, do_del(self->fd, empty));

	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
	EXPECT_EQ(0, do_del(self->fd, idx));
	EXPECT_EQ(-ENOENT, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(-ENOENT, do_del(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
}

/* Only a vector fd can be added: others are -EINVAL, non-fds -EBADF. */
TEST_F(uintr, add_sender_bad_fds)
{
	int rfd, efd, closed;

	rfd = do_register(self->fd, NULL, 0, 0);
	ASSERT_LE(0, rfd);
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	EXPECT_EQ(-EINVAL, nvx_uintr_add_sender(self->fd, efd));
	EXPECT_EQ(-EINVAL, nvx_uintr_add_sender(self->fd, self->fd));
	EXPECT_EQ(-EINVAL, nvx_uintr_add_sender(self->fd, rfd));
	EXPECT_EQ(-EBADF, nvx_uintr_add_sender(self->fd, -1));
	closed = dup(efd);
	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(-EBADF, nvx_uintr_add_sender(self->fd, closed));
	close(efd);
}

/*
 * NVX_UINTR_SENDERS entries, all distinct and in range; one more is
 * -ENOSPC; a deleted entry is the one the next add gets.
 */
TEST_F(uintr, sender_table_full_is_enospc)
{
	bool seen[NVX_UINTR_SENDERS] = { false };
	int vfd, idx, i;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	vfd = nvx_uintr_vector_fd(self->fd, 9);
	ASSERT_LE(0, vfd);
	for (i = 0; i < NVX_UINTR_SENDERS; i++) {
		idx = nvx_uintr_add_sender(self->fd, vfd);
		ASSERT_LE(0, idx) TH_LOG("add %d: %s", i, strerror(-idx));
		ASSERT_GT(NVX_UINTR_SENDERS, idx);
		EXPECT_FALSE(seen[idx]) TH_LOG("index %d twice", idx);
		seen[idx] = true;
	}
	EXPECT_EQ(-ENOSPC, nvx_uintr_add_sender(self->fd, vfd));
	EXPECT_EQ(0, do_del(self->fd, 77));
	EXPECT_EQ(77, nvx_uintr_add_sender(self->fd, vfd));
	EXPECT_EQ(-ENOSPC, nvx_uintr_add_sender(self->fd, vfd));

	EXPECT_EQ(0, nvx_uintr_send(self->fd, 0));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, NVX_UINTR_SENDERS - 1));
	EXPECT_EQ(2ULL, handled_vec(9));
}

TEST_F(uintr, send_after_vector_fd_closed_is_epipe)
{
	int vfd, idx;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 11, &vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
	close(vfd);
	EXPECT_EQ(-EPIPE, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());

	/* another vector fd for the same vector is unaffected */
	idx = do_vector(self->fd, 11, NULL);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(2ULL, handled_vec(11));
}

/* The receiving thread exited (and was joined): -ESRCH. */
TEST_F(uintr, send_after_receiver_exit_is_esrch)
{
	struct waiter w = { .fd = self->fd, .cpu = -1, .vector = 8, .want = 1 };
	pthread_t t;
	int idx;

	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	ASSERT_EQ(1, wait_flag(&w.ready))
		TH_LOG("thread: vector fd %d, register %d", w.vfd, w.rfd);
	idx = nvx_uintr_add_sender(self->fd, w.vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	pthread_join(t, NULL);
	EXPECT_EQ(1ULL, handled_vec(8));
	EXPECT_EQ(w.tid, rec.tid);
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
}

/* Unregistering ends delivery: -ESRCH; a new registration works. */
TEST_F(uintr, send_after_unregister_is_esrch)
{
	int idx;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 12, NULL);
	ASSERT_LE(0, idx);
	nvx_uintr_clui();
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	ASSERT_EQ(0, do_unregister(self->fd));
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(0ULL, handled());

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 12, NULL);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(12));
}

/* --- delivery ------------------------------------------------------- */

/*
 * A thread sending to itself has the handler run before the send returns,
 * with delivery masked, on a 16-byte aligned frame below the red zone of
 * the interrupted stack; the send's own result (rax) survives.
 */
TEST_F(uintr, send_to_self)
{
	uint64_t here = (uintptr_t)&here, text;
	int idx, ret;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 5, NULL);
	ASSERT_LE(0, idx);
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
	int i3, i7, i40;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	i3 = do_vector(self->fd, 3, NULL);
	i7 = do_vector(self->fd, 7, NULL);
	i40 = do_vector(self->fd, 40, NULL);
	ASSERT_LE(0, i3);
	ASSERT_LE(0, i7);
	ASSERT_LE(0, i40);

	nvx_uintr_clui();
	EXPECT_EQ(0u, my_page->enabled);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, i3));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, i40));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, i7));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, i7));
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
	int i2, i17, i60, i33, gone, vfd33, i;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	i2 = do_vector(self->fd, 2, NULL);
	i17 = do_vector(self->fd, 17, NULL);
	i60 = do_vector(self->fd, 60, NULL);
	i33 = do_vector(self->fd, 33, &vfd33);
	gone = do_vector(self->fd, 40, NULL);
	ASSERT_LE(0, i2);
	ASSERT_LE(0, i17);
	ASSERT_LE(0, i60);
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
	int i10, i50, i5;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	i10 = do_vector(self->fd, 10, NULL);
	i50 = do_vector(self->fd, 50, NULL);
	i5 = do_vector(self->fd, 5, NULL);
	ASSERT_LE(0, i10);
	ASSERT_LE(0, i50);
	ASSERT_LE(0, i5);

	/* a higher vector from the handler of a lower one */
	rec.resend_fd = self->fd;
	rec.resend_index = i50;
	rec.resend_vector = 10 + 1;
	EXPECT_EQ(0, nvx_uintr_send(self->fd, i10));
	EXPECT_EQ(0, rec.resend_ret);
	ASSERT_EQ(2ULL, handled());
	EXPECT_EQ(10u, rec.order[0]);
	EXPECT_EQ(50u, rec.order[1]);

	/* and a lower one from the handler of a higher one */
	rec.resend_index = i5;
	rec.resend_vector = 50 + 1;
	EXPECT_EQ(0, nvx_uintr_send(self->fd, i50));
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
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 42, NULL);
	ASSERT_LE(0, idx);
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
	int cpu, idx, i;

	if (two_cpus(&cpu, &k.cpu))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	for (i = 0; i < 4; i++) {
		idx = do_vector(self->fd, vec[i], NULL);
		ASSERT_LE(0, idx);
		k.index[i] = idx;
	}
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

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 20, NULL);
	ASSERT_LE(0, idx);
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
	int p[2], cpu, idx;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	b.pipe_r = p[0];
	two_cpus(&b.cpu, &cpu);
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_EQ(0, start_blocker(&t, &b));
	idx = nvx_uintr_add_sender(self->fd, b.vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
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
	int p[2], cpu, idx;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	b.pipe_r = p[0];
	two_cpus(&b.cpu, &cpu);
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_EQ(0, start_blocker(&t, &b));
	idx = nvx_uintr_add_sender(self->fd, b.vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(0, join_blocker(t, &b, p[1], WAIT_LONG))
		TH_LOG("read() kept blocking");
	EXPECT_EQ(-EINTR, b.ret);
	EXPECT_EQ(1ULL, b.handled_then);
	EXPECT_EQ(1ULL, handled_vec(18));
	close(p[0]);
	close(p[1]);
}

/* --- the timer ------------------------------------------------------ */

/*
 * A 5 ms periodic timer watched for a second from user mode. Under QEMU
 * TCG the guest clock can move in steps of a few ms and a tick that
 * finds its vector still pending merges, so the count may fall short:
 * accept 50% to 110% (+1) of elapsed / period.
 */
TEST_F(uintr, timer_periodic)
{
	unsigned long long ms, n, expect;
	uint64_t t0;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_timer(self->fd, 9, 0, 5 * MS));
	t0 = now_ns();
	spin_ns(SEC);
	ASSERT_EQ(0, do_timer(self->fd, 9, 0, 0));
	ms = (now_ns() - t0) / MS;
	n = handled_vec(9);
	expect = ms / 5;
	EXPECT_LE(expect / 2, n) TH_LOG("%llu ticks in %llu ms", n, ms);
	EXPECT_GE(expect * 11 / 10 + 1, n) TH_LOG("%llu ticks in %llu ms",
						  n, ms);
	EXPECT_EQ(n, handled());
}

/* period 0: one tick after first_ns, and no more. */
TEST_F(uintr, timer_one_shot)
{
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_timer(self->fd, 5, 20 * MS, 0));
	spin_ns(300 * MS);
	EXPECT_EQ(1ULL, handled_vec(5));
	EXPECT_EQ(1ULL, handled());
}

/*
 * A new timer replaces the old one; first = period = 0 stops it: after a
 * grace period no more ticks.
 */
TEST_F(uintr, timer_replace_and_stop)
{
	uint64_t n;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_timer(self->fd, 6, 0, 5 * MS));
	ASSERT_EQ(0, wait_vec(6, 3, WAIT_LONG, false));

	/* replaced by a one-shot on another vector */
	ASSERT_EQ(0, do_timer(self->fd, 7, 20 * MS, 0));
	spin_ns(50 * MS);
	n = handled_vec(6);
	spin_ns(300 * MS);
	EXPECT_EQ(n, handled_vec(6));
	EXPECT_EQ(1ULL, handled_vec(7));

	/* periodic again, then stopped */
	ASSERT_EQ(0, do_timer(self->fd, 6, 0, 5 * MS));
	ASSERT_EQ(0, wait_vec(6, n + 3, WAIT_LONG, false));
	ASSERT_EQ(0, do_timer(self->fd, 6, 0, 0));
	spin_ns(50 * MS);
	n = handled();
	spin_ns(300 * MS);
	EXPECT_EQ(n, handled());
}

/* Masked, ticks merge into one pending bit: one call on unmasking. */
TEST_F(uintr, timer_ticks_merge_while_masked)
{
	uint64_t n;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	nvx_uintr_clui();
	ASSERT_EQ(0, do_timer(self->fd, 8, 10 * MS, 10 * MS));
	usleep(200000);
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(1ULL << 8, my_page->pending);
	nvx_uintr_stui();
	n = handled_vec(8);
	EXPECT_EQ(0, do_timer(self->fd, 8, 0, 0));
	/* ~20 ticks went by; one more may land while unmasking */
	EXPECT_LE(1ULL, n);
	EXPECT_GE(2ULL, n);
}

TEST_F(uintr, timer_bad_args)
{
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, NVX_UINTR_VECTORS, MS, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, 0, 1));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, MS,
				    NVX_UINTR_MIN_PERIOD_NS - 1));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, NVX_UINTR_MAX_NS + 1, 0));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, MS, NVX_UINTR_MAX_NS + 1));
	EXPECT_EQ(-EINVAL, do_timer(self->fd, 1, UINT64_MAX, 0));
	/* the limits themselves are fine (far away: nothing fires) */
	EXPECT_EQ(0, do_timer(self->fd, 1, NVX_UINTR_MAX_NS,
			      NVX_UINTR_MIN_PERIOD_NS));
	EXPECT_EQ(0, do_timer(self->fd, 1, NVX_UINTR_MAX_NS, NVX_UINTR_MAX_NS));
	EXPECT_EQ(0, do_timer(self->fd, 1, 0, 0));
	EXPECT_EQ(0ULL, handled());
}

/* --- signal routing ------------------------------------------------- */

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

struct router {
	int fd;
	int cpu;
	pid_t tid;
	int err;
	int ready;
};

static void *router_thread(void *arg)
{
	struct router *r = arg;

	pin_cpu(r->cpu);
	r->tid = sys_gettid();
	r->err = do_register(r->fd, NULL, 0, 0);
	if (r->err >= 0)
		r->err = do_signal(r->fd, SIGUSR1, 11);
	__atomic_store_n(&r->ready, r->err < 0 ? -1 : 1, __ATOMIC_SEQ_CST);
	if (r->err < 0)
		return NULL;
	/* in user mode, until delivered */
	wait_handled(1, WAIT_LONG, false);
	spin_ns(50 * MS);
	return NULL;
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
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 5, NULL);
	ASSERT_LE(0, idx);
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

/* --- processes ------------------------------------------------------ */

/* In a forked child: none of the parent's registration or senders. */
static int fork_child(int fd, uint32_t parent_index)
{
	struct nvx_uintr_unregister u = { 0 };
	int idx;

	if (nvx_uintr_vector_fd(fd, 0) != -ENOENT)
		return 1;
	if (do_wait(fd, 0) != -ENOENT)
		return 2;
	if (do_timer(fd, 1, MS, 0) != -ENOENT)
		return 3;
	if (do_signal(fd, SIGUSR1, 1) != -ENOENT)
		return 4;
	if (nvx_ioctl(fd, NVX_IOC_UINTR_UNREGISTER, &u) != -ENOENT)
		return 5;
	if (nvx_uintr_send(fd, parent_index) != -ENOENT)
		return 6;
	/* it can have interrupts of its own */
	if (do_register(fd, NULL, 0, 0) < 0)
		return 7;
	idx = do_vector(fd, 6, NULL);
	if (idx < 0)
		return 8;
	if (nvx_uintr_send(fd, idx) || handled_vec(6) != 1 || handled() != 1)
		return 9;
	return 0;
}

TEST_F(uintr, fork_child_starts_clean)
{
	int idx, status;
	pid_t pid;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	idx = do_vector(self->fd, 5, NULL);
	ASSERT_LE(0, idx);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(fork_child(self->fd, idx));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed",
						 WEXITSTATUS(status));
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(5));
}

/* In a forked child: take a vector fd from @sock and send through it. */
static int scm_child(int sock)
{
	int fd = nvx_open(), vfd, idx;

	if (fd < 0)
		return 1;
	vfd = recv_fd(sock);
	if (vfd < 0)
		return 2;
	idx = nvx_uintr_add_sender(fd, vfd);
	if (idx < 0)
		return 3;
	if (nvx_uintr_send(fd, idx))
		return 4;
	return 0;
}

/*
 * A vector fd passed over SCM_RIGHTS to another process works there.
 * The parent waits in waitpid() (not interruptible by the vector), so
 * the handler has run when waitpid returns.
 */
TEST_F(uintr, vector_fd_over_scm_rights)
{
	int sv[2], vfd, status;
	pid_t pid;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		_exit(scm_child(sv[1]));
	}
	close(sv[1]);
	/* made after the fork: the child can only have it from the socket */
	vfd = nvx_uintr_vector_fd(self->fd, 21);
	EXPECT_LE(0, vfd);
	EXPECT_EQ(0, send_fd(sv[0], vfd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed",
						 WEXITSTATUS(status));
	EXPECT_EQ(1ULL, handled_vec(21));
	EXPECT_EQ(1ULL, handled());
	close(sv[0]);
	close(vfd);
}

static const char *self_path;

/*
 * In a forked child: register, check that it works, pass a vector fd to
 * the parent, then exec this program in EXEC_CHILD_ARG mode. Returns
 * only on failure: the number of the failed step.
 */
static int exec_child_prepare(int fd, int sock, int ready_w, int go_r)
{
	char args[5][16], *argv[8];
	int rfd, vfd, idx, i;

	rfd = do_register(fd, NULL, 0, 0);
	if (rfd < 0)
		return 20;
	vfd = nvx_uintr_vector_fd(fd, 3);
	if (vfd < 0)
		return 21;
	idx = nvx_uintr_add_sender(fd, vfd);
	if (idx < 0)
		return 22;
	if (!(fcntl(rfd, F_GETFD) & FD_CLOEXEC) ||
	    !(fcntl(vfd, F_GETFD) & FD_CLOEXEC))
		return 23;
	if (nvx_uintr_send(fd, idx) || handled_vec(3) != 1)
		return 24;
	if (send_fd(sock, vfd))
		return 25;
	snprintf(args[0], sizeof(args[0]), "%d", rfd);
	snprintf(args[1], sizeof(args[1]), "%d", vfd);
	snprintf(args[2], sizeof(args[2]), "%d", idx);
	snprintf(args[3], sizeof(args[3]), "%d", ready_w);
	snprintf(args[4], sizeof(args[4]), "%d", go_r);
	argv[0] = "uintr";
	argv[1] = EXEC_CHILD_ARG;
	for (i = 0; i < 5; i++)
		argv[2 + i] = args[i];
	argv[7] = NULL;
	execv("/proc/self/exe", argv);
	if (self_path)
		execv(self_path, argv);
	return 26;
}

/*
 * This program run by exec_closes_fds_and_unregisters, as
 * "uintr --uintr-exec-child RFD VFD INDEX READY_W GO_R": the receiver
 * fd, vector fd and sender index it had before exec, a pipe to report
 * on and one to wait on. Exit status: 0, or the failed check.
 */
static int exec_child(int argc, char **argv)
{
	int rfd, vfd, idx, ready_w, go_r, fd;
	char c;

	if (argc != 7)
		return 30;
	rfd = atoi(argv[2]);
	vfd = atoi(argv[3]);
	idx = atoi(argv[4]);
	ready_w = atoi(argv[5]);
	go_r = atoi(argv[6]);
	if (fcntl(rfd, F_GETFD) != -1 || errno != EBADF)
		return 31;
	if (fcntl(vfd, F_GETFD) != -1 || errno != EBADF)
		return 32;
	fd = nvx_open();
	if (fd < 0)
		return 33;
	if (nvx_uintr_vector_fd(fd, 0) != -ENOENT)
		return 34;
	if (do_wait(fd, 0) != -ENOENT)
		return 35;
	/* the sender table is empty after exec */
	if (nvx_uintr_send(fd, idx) != -ENOENT)
		return 36;
	if (write(ready_w, "r", 1) != 1)
		return 37;
	if (read(go_r, &c, 1) != 1)
		return 38;
	return 0;
}

/*
 * exec closes the receiver and vector fds, ends the thread's registration
 * (the parent's sends to its old vector get -ESRCH while the exec'd
 * process lives) and empties the sender table.
 */
TEST_F(uintr, exec_closes_fds_and_unregisters)
{
	int sv[2], ready[2], go[2], vfd, idx, status, n;
	pid_t pid;
	char c;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	/* these two stay open across exec */
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		close(ready[0]);
		close(go[1]);
		_exit(exec_child_prepare(self->fd, sv[1], ready[1], go[0]));
	}
	close(sv[1]);
	close(ready[1]);
	close(go[0]);

	vfd = recv_fd(sv[0]);
	idx = vfd < 0 ? vfd : nvx_uintr_add_sender(self->fd, vfd);
	/* end of file: the child failed before it got there */
	n = read(ready[0], &c, 1);
	if (n == 1) {
		if (idx >= 0)
			EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
		EXPECT_EQ(1, write(go[1], "g", 1));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed",
						 WEXITSTATUS(status));
	EXPECT_LE(0, vfd);
	EXPECT_LE(0, idx);
	EXPECT_EQ(1, n);
	EXPECT_EQ(0ULL, handled());
}

/* --- stress --------------------------------------------------------- */

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
	int cpu, idx, v;

	if (two_cpus(&cpu, &s.cpu))
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	for (v = 0; v < STRESS_VECTORS; v++) {
		s.vector[v] = v * 9;	/* 0, 9, ... 63 */
		idx = do_vector(self->fd, s.vector[v], NULL);
		ASSERT_LE(0, idx);
		s.index[v] = idx;
	}
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

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], EXEC_CHILD_ARG))
		return exec_child(argc, argv);
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
