// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the nvx selftest group "uintr": see include/uintr_util.h.
 */
#include "uintr_util.h"

struct uintr_record rec;

struct uintr_spin spin;

__thread int my_tid;

__thread struct nvx_uintr_page *my_page;

/**
 * on_uintr() - the test handler: count and record a delivery
 * @f: the frame the kernel built
 * @vector: the vector delivered
 */
NVX_UINTR_HANDLER void on_uintr(struct nvx_uintr_frame *f,
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

/**
 * trap_entry() - a handler address that must never be called
 *
 * A handler address for raw registrations that must never deliver.
 */
__attribute__((naked, used)) void trap_entry(void)
{
	__asm__ volatile("ud2");
}

static int sig_count;

int sig_last;

static void on_signal(int sig)
{
	__atomic_store_n(&sig_last, sig, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sig_count, 1, __ATOMIC_SEQ_CST);
}

/**
 * catch_signal() - Install on_signal for @sig, without SA_RESTART
 * @sig: the signal
 */
int catch_signal(int sig)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}

/**
 * signals() - the number of signals on_signal() caught
 */
int signals(void)
{
	return __atomic_load_n(&sig_count, __ATOMIC_SEQ_CST);
}

/**
 * tgkill_tid() - send a signal to a thread of this process
 * @tid: a thread of this process
 * @sig: the signal
 */
int tgkill_tid(pid_t tid, int sig)
{
	return syscall(SYS_tgkill, getpid(), tid, sig) ? -errno : 0;
}

/**
 * now_ns() - CLOCK_MONOTONIC in nanoseconds
 */
uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/**
 * spin_ns() - Busy-wait in user mode for @ns
 * @ns: how long, in ns
 */
void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		__builtin_ia32_pause();
}

/**
 * spin_syscalls_ns() - busy-wait making system calls
 * @ns: how long, in ns
 *
 * Busy-wait for @ns making system calls (returns to user mode).
 */
void spin_syscalls_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		syscall(SYS_getppid);
}

/**
 * handled() - handler calls so far, all vectors
 */
uint64_t handled(void)
{
	return __atomic_load_n(&rec.count, __ATOMIC_SEQ_CST);
}

/**
 * handled_vec() - handler calls so far for one vector
 * @vector: the vector
 */
uint64_t handled_vec(unsigned int vector)
{
	return __atomic_load_n(&rec.per_vec[vector], __ATOMIC_SEQ_CST);
}

/**
 * wait_handled() - Wait until the handlers ran @n times in all
 * @n: the handler calls to wait for
 * @ns: how long, in ns
 * @syscalls: make system calls while waiting
 *
 * Return: 0, or -ETIMEDOUT after @ns. @syscalls: make system calls meanwhile,
 * else stay in user mode.
 */
int wait_handled(uint64_t n, uint64_t ns, bool syscalls)
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

/**
 * wait_vec() - The same for one vector, checking the clock only now and then
 * @vector: the vector
 * @n: the handler calls to wait for
 * @ns: how long, in ns
 * @syscalls: make system calls while waiting
 */
int wait_vec(unsigned int vector, uint64_t n, uint64_t ns,
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

/**
 * pin_cpu() - Pin the calling thread to @cpu; -1 leaves it alone
 * @cpu: the CPU
 */
int pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/**
 * two_cpus() - Two CPUs this process may run on
 * @a: where the first CPU goes
 * @b: where the second CPU goes
 *
 * Return: 0. Where there are fewer: -1, and both are -1 (pin_cpu() then leaves
 * threads alone).
 */
int two_cpus(int *a, int *b)
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

/**
 * exec_mapping() - Start of the executable mapping that holds @addr, or 0
 * @addr: an address in this process
 */
uint64_t exec_mapping(uint64_t addr)
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

/**
 * do_register() - Register on_uintr for the calling thread
 * @fd: an open /dev/nvx
 * @stack: an alternate stack, or NULL
 * @size: its size
 * @flags: NVX_UINTR_REGISTER_* flags
 *
 * The receiver fd, or -errno.
 */
int do_register(int fd, void *stack, size_t size, uint32_t flags)
{
	int rfd = nvx_uintr_register_handler(fd, on_uintr, stack, size, flags);

	my_tid = sys_gettid();
	if (rfd >= 0)
		my_page = nvx_uintr_page();
	return rfd;
}

/**
 * do_unregister() - unregister the calling thread's handler
 * @fd: an open /dev/nvx
 */
int do_unregister(int fd)
{
	my_page = NULL;
	return nvx_uintr_unregister_handler(fd);
}

/**
 * do_unregister_raw() - NVX_IOC_UINTR_UNREGISTER, without the library
 * @fd: an open /dev/nvx
 */
int do_unregister_raw(int fd)
{
	struct nvx_uintr_unregister u = { 0 };

	return nvx_ioctl(fd, NVX_IOC_UINTR_UNREGISTER, &u);
}

/**
 * do_vector() - a vector fd added to the sender table
 * @fd: an open /dev/nvx
 * @vector: the vector
 * @vfd: where the vector fd goes, or NULL to close it
 *
 * A vector fd for @vector of the calling thread, added to the sender table: the
 * index, or -errno. The fd goes to *@vfd, or stays open.
 */
int do_vector(int fd, uint32_t vector, int *vfd)
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

/**
 * do_del() - NVX_IOC_UINTR_DEL_SENDER
 * @fd: an open /dev/nvx
 * @index: a sender index
 */
int do_del(int fd, uint32_t index)
{
	struct nvx_uintr_sender s = { .index = index };

	return nvx_ioctl(fd, NVX_IOC_UINTR_DEL_SENDER, &s);
}

/**
 * do_send_many() - NVX_IOC_UINTR_SEND_MANY
 * @fd: an open /dev/nvx
 * @indices: the sender indexes
 * @count: how many
 * @sent: where the number sent goes
 */
int do_send_many(int fd, const uint32_t *indices, uint32_t count,
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

/**
 * do_wait() - NVX_IOC_UINTR_WAIT
 * @fd: an open /dev/nvx
 * @timeout_ns: the timeout in ns
 */
int do_wait(int fd, uint64_t timeout_ns)
{
	struct nvx_uintr_wait w = { .timeout_ns = timeout_ns };

	return nvx_ioctl(fd, NVX_IOC_UINTR_WAIT, &w);
}

/**
 * do_timer() - NVX_IOC_UINTR_TIMER
 * @fd: an open /dev/nvx
 * @vector: the vector it raises
 * @first_ns: the first tick, in ns from now
 * @period_ns: the period in ns, 0 for one shot
 */
int do_timer(int fd, uint32_t vector, uint64_t first_ns,
	     uint64_t period_ns)
{
	struct nvx_uintr_timer t = {
		.vector = vector,
		.first_ns = first_ns,
		.period_ns = period_ns,
	};

	return nvx_ioctl(fd, NVX_IOC_UINTR_TIMER, &t);
}

/**
 * do_signal() - NVX_IOC_UINTR_SIGNAL: route a signal to a vector
 * @fd: an open /dev/nvx
 * @signo: the signal
 * @vector: the vector it raises
 */
int do_signal(int fd, uint32_t signo, uint32_t vector)
{
	struct nvx_uintr_signal s = { .signo = signo, .vector = vector };

	return nvx_ioctl(fd, NVX_IOC_UINTR_SIGNAL, &s);
}

/**
 * kicker_thread() - a thread that sends to a receiver
 * @arg: its struct kicker
 */
void *kicker_thread(void *arg)
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

/**
 * start_blocker() - Start @b and wait until it sleeps in its call: 0 or -errno
 * @t: where the thread goes
 * @b: what the thread blocks on
 */
int start_blocker(pthread_t *t, struct blocker *b)
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

/**
 * blocker_done() - whether a blocker thread has returned
 * @b: the blocker
 */
bool blocker_done(struct blocker *b)
{
	return __atomic_load_n(&b->done, __ATOMIC_SEQ_CST);
}

/**
 * join_blocker() - Join @b, first waiting up to @ns for its call to return
 * @t: the thread
 * @b: the blocker
 * @pipe_w: the pipe end that ends its read()
 * @ns: how long to wait, in ns
 *
 * Return: 0, or -ETIMEDOUT when it did not (a read is then ended through
 * @pipe_w).
 */
int join_blocker(pthread_t t, struct blocker *b, int pipe_w,
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

/**
 * waiter_thread() - a thread that waits in NVX_IOC_UINTR_WAIT
 * @arg: its struct waiter
 */
void *waiter_thread(void *arg)
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

/**
 * wait_flag() - Wait for *@flag to become nonzero
 * @flag: the flag
 *
 * Its value, or 0 after WAIT_LONG.
 */
int wait_flag(const int *flag)
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

/**
 * router_thread() - A receiver that routes SIGUSR1 to its vector 11
 * @arg: its struct router
 *
 * Registers on its CPU, routes SIGUSR1 to vector 11, says it is ready,
 * then stays in user mode until a handler ran, and 50 ms more.
 *
 * Return: NULL.
 */
void *router_thread(void *arg)
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
