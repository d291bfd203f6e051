// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench uintr: user interrupts against POSIX signals and eventfd:
 * the latency of waking a thread on another CPU, and the CPU that a
 * periodic timer interruption costs a compute loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nvx/uintr.h>

#include "uintr.h"

static const char * const nvx_um_names[NVX_UM_COUNT] = {
	[NVX_UM_NVX]		= "nvx",
	[NVX_UM_NVX_WAIT]	= "nvx_wait",
	[NVX_UM_SIGNAL]		= "signal",
	[NVX_UM_EVENTFD]	= "eventfd",
};

/* How the woken thread waits, in each method. */
static const char * const nvx_um_receiver[NVX_UM_COUNT] = {
	[NVX_UM_NVX]		= "running (spins in user mode)",
	[NVX_UM_NVX_WAIT]	= "blocked in NVX_IOC_UINTR_WAIT",
	[NVX_UM_SIGNAL]		= "running (spins in user mode)",
	[NVX_UM_EVENTFD]	= "blocked in read(2)",
};

static const char * const nvx_ub_mode_names[NVX_UB_MODES] = {
	[NVX_UB_ONE_WAY]	= "one_way",
	[NVX_UB_ROUND_TRIP]	= "round_trip",
};

static const char * const nvx_uk_names[NVX_UK_COUNT] = {
	[NVX_UK_NVX]	= "nvx",
	[NVX_UK_SIGNAL]	= "signal",
};

const uint64_t nvx_ub_periods[NVX_UB_NR_PERIODS] = {
	10000, 20000, 50000, 100000, 200000, 500000, 1000000, 2000000, 5000000,
};

/**
 * nvx_ub_gettid() - the calling thread's id
 *
 * Return: the tid.
 */
pid_t nvx_ub_gettid(void)
{
	return syscall(SYS_gettid);
}

static inline void nvx_cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" : : : "memory");
#endif
}

/*
 * Spin until *@v is no longer @old: true. False when *@quit (if given)
 * became nonzero, or after @timeout_ns (0: never). With @yield (both
 * threads on one CPU), yield the CPU instead of spinning on it.
 */
static bool nvx_ub_spin(const uint64_t *v, uint64_t old, const int *quit,
			uint64_t timeout_ns, bool yield)
{
	unsigned int n = 0;
	uint64_t end = 0;

	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) == old) {
		if (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE))
			return false;
		if (yield)
			sched_yield();
		else
			nvx_cpu_relax();
		if (!timeout_ns || ++n % 256)
			continue;
		if (!end)
			end = nvx_now_ns() + timeout_ns;
		else if (nvx_now_ns() > end)
			return false;
	}
	return true;
}

/* ------------------------------------------------ (a) wake-up latency */

/**
 * struct nvx_ub_pair - the two threads of one method and way of (a)
 * @ub: the bench.
 * @m: the method.
 * @mode: NVX_UB_ONE_WAY or NVX_UB_ROUND_TRIP.
 * @fd: the nvx device.
 * @pid: the process.
 * @tid_a: thread A, which wakes B and measures.
 * @tid_b: thread B, which is woken and, for round trips, wakes A.
 * @ready: B: 1 when ready, -errno when it failed.
 * @b_req: B: the request that failed, for messages.
 * @b_err: B: -errno when it stopped on an error, else 0.
 * @quit: A: B must return.
 * @b_seen: B: wake-ups it saw.
 * @b_seen_ns: B: when it saw the last one (one way).
 * @sig_a: A's signal handler runs.
 * @sig_b: B's signal handler runs.
 * @rx_a: A's nvx handler.
 * @rx_b: B's nvx handler; for round trips it answers through @to_a.
 * @vec_a: A's vector fd, or -1.
 * @vec_b: B's vector fds (0 and NVX_UINTR_RX_STOP), or -1.
 * @to_a: the sender table entry of @vec_a.
 * @to_b: the sender table entries of @vec_b.
 * @have_to: which of @to_a, @to_b[0], @to_b[1] are in the table.
 * @efd_ab: the eventfd A writes and B reads, or -1.
 * @efd_ba: the eventfd B writes and A reads, or -1.
 */
struct nvx_ub_pair {
	struct nvx_ub *ub;
	enum nvx_ub_method m;
	int mode;
	int fd;
	pid_t pid;
	pid_t tid_a;
	pid_t tid_b;
	int ready;
	unsigned long b_req;
	int b_err;
	int quit;
	uint64_t b_seen;
	uint64_t b_seen_ns;
	uint64_t sig_a;
	uint64_t sig_b;
	struct nvx_uintr_rx rx_a;
	struct nvx_uintr_rx rx_b;
	int vec_a;
	int vec_b[2];
	uint32_t to_a;
	uint32_t to_b[2];
	bool have_to[3];
	int efd_ab;
	int efd_ba;
};

/* The pair running, for the signal handlers. */
static struct nvx_ub_pair *nvx_ub_cur;

static void nvx_ub_on_sig_a(int sig)
{
	__atomic_add_fetch(&nvx_ub_cur->sig_a, 1, __ATOMIC_SEQ_CST);
}

static void nvx_ub_on_sig_b(int sig)
{
	struct nvx_ub_pair *p = nvx_ub_cur;
	int saved = errno;

	__atomic_add_fetch(&p->sig_b, 1, __ATOMIC_SEQ_CST);
	if (p->mode == NVX_UB_ROUND_TRIP)
		syscall(SYS_tgkill, p->pid, p->tid_a, NVX_UB_SIG_A);
	errno = saved;
}

/* B: register and make the vectors, for the nvx methods. */
static int nvx_ub_b_setup(struct nvx_ub_pair *p)
{
	return nvx_uintr_rx_setup(p->fd, &p->rx_b, p->vec_b, &p->b_req);
}

/*
 * B: wait for the next wake-up. Return: 1 when it came, 0 when B must
 * return, or -errno.
 */
static int nvx_ub_b_wait(struct nvx_ub_pair *p, uint64_t *seen)
{
	bool yield = p->ub->same_cpu;
	uint64_t v, one = 1;
	int err;

	switch (p->m) {
	case NVX_UM_NVX:
		if (!nvx_ub_spin(&p->rx_b.hits, *seen, &p->quit, 0, yield))
			return 0;
		*seen = __atomic_load_n(&p->rx_b.hits, __ATOMIC_ACQUIRE);
		return 1;
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_rx_wait(p->fd, *seen + 1, &p->quit, UINT64_MAX);
		if (err)
			return err;
		if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE))
			return 0;
		*seen = __atomic_load_n(&p->rx_b.hits, __ATOMIC_ACQUIRE);
		return 1;
	case NVX_UM_SIGNAL:
		if (!nvx_ub_spin(&p->sig_b, *seen, &p->quit, 0, yield))
			return 0;
		*seen = __atomic_load_n(&p->sig_b, __ATOMIC_ACQUIRE);
		return 1;
	default:
		while (read(p->efd_ab, &v, sizeof(v)) != sizeof(v))
			if (errno != EINTR)
				return -errno;
		if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE))
			return 0;
		if (p->mode == NVX_UB_ROUND_TRIP &&
		    write(p->efd_ba, &one, sizeof(one)) != sizeof(one))
			return -errno;
		*seen += v;
		return 1;
	}
}

static void *nvx_ub_pair_b(void *arg)
{
	struct nvx_ub_pair *p = arg;
	uint64_t seen = 0;
	int ret = 0;

	nvx_pin_self(p->ub->cpu[1]);
	__atomic_store_n(&p->tid_b, nvx_ub_gettid(), __ATOMIC_RELAXED);
	if (p->m == NVX_UM_NVX || p->m == NVX_UM_NVX_WAIT)
		ret = nvx_ub_b_setup(p);
	__atomic_store_n(&p->ready, ret ? ret : 1, __ATOMIC_RELEASE);
	if (ret)
		return NULL;

	while ((ret = nvx_ub_b_wait(p, &seen)) > 0) {
		__atomic_store_n(&p->b_seen_ns, nvx_now_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&p->b_seen, seen, __ATOMIC_RELEASE);
	}
	p->b_err = ret;
	if (p->m == NVX_UM_NVX || p->m == NVX_UM_NVX_WAIT)
		nvx_uintr_rx_unregister(p->fd);
	return NULL;
}

/* "bench uintr: nvx: NVX_IOC_UINTR_SEND: why"; NVX_EXIT_FAIL. */
static int nvx_ub_fail(struct nvx_ub_pair *p, const char *what,
		       unsigned long req, int err)
{
	const char *why = req ? nvx_uintr_strerror(req, err) : strerror(err);

	nvx_err("%s: %s: %s: %s", p->ub->ctx->path, nvx_um_names[p->m], what,
		why);
	return NVX_EXIT_FAIL;
}

/* A: wake B for the @i-th time (from 0) and time it into *@ns. */
static int nvx_ub_pair_once(struct nvx_ub_pair *p, uint64_t i, uint64_t *ns)
{
	bool yield = p->ub->same_cpu;
	uint64_t t0, t1, v, one = 1, got;
	int err = 0;

	t0 = nvx_now_ns();
	switch (p->m) {
	case NVX_UM_NVX:
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_post(p->fd, p->to_b[0]);
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_SEND",
					   NVX_IOC_UINTR_SEND, -err);
		break;
	case NVX_UM_SIGNAL:
		if (syscall(SYS_tgkill, p->pid, p->tid_b, NVX_UB_SIG_B))
			return nvx_ub_fail(p, "tgkill", 0, errno);
		break;
	default:
		if (write(p->efd_ab, &one, sizeof(one)) != sizeof(one))
			return nvx_ub_fail(p, "write", 0, errno);
		break;
	}

	if (p->mode == NVX_UB_ONE_WAY) {
		if (!nvx_ub_spin(&p->b_seen, i, NULL, NVX_UB_TIMEOUT, yield))
			goto timeout;
		got = __atomic_load_n(&p->b_seen, __ATOMIC_ACQUIRE);
		t1 = __atomic_load_n(&p->b_seen_ns, __ATOMIC_RELAXED);
		goto check;
	}

	switch (p->m) {
	case NVX_UM_NVX:
		if (!nvx_ub_spin(&p->rx_a.hits, i, NULL, NVX_UB_TIMEOUT, yield))
			goto timeout;
		got = __atomic_load_n(&p->rx_a.hits, __ATOMIC_ACQUIRE);
		break;
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_rx_wait(p->fd, i + 1, NULL, NVX_UB_TIMEOUT);
		if (err == -ETIMEDOUT)
			goto timeout;
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_WAIT",
					   NVX_IOC_UINTR_WAIT, -err);
		got = __atomic_load_n(&p->rx_a.hits, __ATOMIC_ACQUIRE);
		break;
	case NVX_UM_SIGNAL:
		if (!nvx_ub_spin(&p->sig_a, i, NULL, NVX_UB_TIMEOUT, yield))
			goto timeout;
		got = __atomic_load_n(&p->sig_a, __ATOMIC_ACQUIRE);
		break;
	default:
		while (read(p->efd_ba, &v, sizeof(v)) != sizeof(v))
			if (errno != EINTR)
				return nvx_ub_fail(p, "read", 0, errno);
		got = i + v;
		break;
	}
	t1 = nvx_now_ns();
check:
	if (got != i + 1) {
		nvx_err("%s: %s: wake-up %llu was seen %llu times",
			p->ub->ctx->path, nvx_um_names[p->m],
			(unsigned long long)i + 1,
			(unsigned long long)(got - i));
		return NVX_EXIT_FAIL;
	}
	/* B's clock is another CPU's: the same clock, but guard anyway */
	*ns = t1 > t0 ? t1 - t0 : 0;
	return NVX_EXIT_OK;

timeout:
	nvx_err("%s: %s %s: wake-up %llu not %s within %llu s",
		p->ub->ctx->path, nvx_um_names[p->m],
		nvx_ub_mode_names[p->mode], (unsigned long long)i + 1,
		p->mode == NVX_UB_ONE_WAY ? "seen" : "answered",
		NVX_UB_TIMEOUT / NVX_NSEC_PER_SEC);
	return NVX_EXIT_FAIL;
}

/* A: what the method needs before B starts. */
static int nvx_ub_pair_setup(struct nvx_ub_pair *p)
{
	struct sigaction sa = { .sa_flags = SA_RESTART };
	int err;

	switch (p->m) {
	case NVX_UM_NVX:
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_rx_register(p->fd, &p->rx_a);
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_REGISTER",
					   NVX_IOC_UINTR_REGISTER, -err);
		p->vec_a = nvx_uintr_vector_fd(p->fd, 0);
		err = p->vec_a < 0 ? p->vec_a : 0;
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_VECTOR_FD",
					   NVX_IOC_UINTR_VECTOR_FD, -err);
		err = nvx_uintr_add_sender(p->fd, p->vec_a);
		p->to_a = err;
		err = err < 0 ? err : 0;
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_ADD_SENDER",
					   NVX_IOC_UINTR_ADD_SENDER, -err);
		p->have_to[0] = true;
		if (p->mode == NVX_UB_ROUND_TRIP)
			p->rx_b.reply = p->to_a;
		return NVX_EXIT_OK;
	case NVX_UM_SIGNAL:
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = nvx_ub_on_sig_a;
		sigaction(NVX_UB_SIG_A, &sa, NULL);
		sa.sa_handler = nvx_ub_on_sig_b;
		sigaction(NVX_UB_SIG_B, &sa, NULL);
		return NVX_EXIT_OK;
	default:
		p->efd_ab = eventfd(0, EFD_CLOEXEC);
		p->efd_ba = eventfd(0, EFD_CLOEXEC);
		if (p->efd_ab < 0 || p->efd_ba < 0)
			return nvx_ub_fail(p, "eventfd", 0, errno);
		return NVX_EXIT_OK;
	}
}

/* A: stop B (@b: NULL when not started) and undo what the method set up. */
static void nvx_ub_pair_cleanup(struct nvx_ub_pair *p, const pthread_t *b)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	uint64_t one = 1;
	unsigned int i;

	__atomic_store_n(&p->quit, 1, __ATOMIC_SEQ_CST);
	if (b) {
		if (p->have_to[2])
			nvx_uintr_post(p->fd, p->to_b[1]);
		if (p->efd_ab >= 0 &&
		    write(p->efd_ab, &one, sizeof(one)) != sizeof(one))
			nvx_warn("%s: eventfd: %s", p->ub->ctx->path,
				 strerror(errno));
		pthread_join(*b, NULL);
	}
	if (p->have_to[2])
		nvx_uintr_del_sender(p->fd, p->to_b[1]);
	if (p->have_to[1])
		nvx_uintr_del_sender(p->fd, p->to_b[0]);
	if (p->have_to[0])
		nvx_uintr_del_sender(p->fd, p->to_a);
	for (i = 0; i < 2; i++)
		if (p->vec_b[i] >= 0)
			close(p->vec_b[i]);
	if (p->vec_a >= 0)
		close(p->vec_a);
	if (p->m == NVX_UM_NVX || p->m == NVX_UM_NVX_WAIT)
		nvx_uintr_rx_unregister(p->fd);
	if (p->m == NVX_UM_SIGNAL) {
		sigemptyset(&dfl.sa_mask);
		sigaction(NVX_UB_SIG_A, &dfl, NULL);
		sigaction(NVX_UB_SIG_B, &dfl, NULL);
	}
	if (p->efd_ab >= 0)
		close(p->efd_ab);
	if (p->efd_ba >= 0)
		close(p->efd_ba);
	nvx_ub_cur = NULL;
}

/**
 * nvx_ub_stat() - sort samples and sum them up
 * @v: the samples.
 * @n: how many, at least 1.
 * @s: the mean, minimum, median, 99th percentile and maximum.
 */
void nvx_ub_stat(uint64_t *v, unsigned int n, struct nvx_ub_stat *s)
{
	double sum = 0;
	unsigned int i;

	qsort(v, n, sizeof(*v), nvx_bench_cmp_u64);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->mean_ns = sum / n;
	s->min_ns = v[0];
	s->p50_ns = v[(n - 1) / 2];
	s->p99_ns = v[(uint64_t)n * 99 / 100 < n ? (uint64_t)n * 99 / 100 :
		      n - 1];
	s->max_ns = v[n - 1];
}

/* One method one way: @iters wake-ups after a tenth as many to warm up. */
static int nvx_ub_pair_run(struct nvx_ub *ub, enum nvx_ub_method m, int mode)
{
	struct nvx_ub_pair p = {
		.ub = ub,
		.m = m,
		.mode = mode,
		.fd = ub->ctx->fd,
		.pid = getpid(),
		.tid_a = nvx_ub_gettid(),
		.rx_a = { .reply = -1 },
		.rx_b = { .reply = -1 },
		.vec_a = -1,
		.vec_b = { -1, -1 },
		.efd_ab = -1,
		.efd_ba = -1,
	};
	unsigned int warm = ub->iters / 10 < 100 ? ub->iters / 10 : 100;
	bool started = false;
	uint64_t i, ns = 0;
	pthread_t b;
	int ret, err;

	nvx_ub_cur = &p;
	ret = nvx_ub_pair_setup(&p);
	if (ret)
		goto out;
	ret = NVX_EXIT_FAIL;
	err = pthread_create(&b, NULL, nvx_ub_pair_b, &p);
	if (err) {
		nvx_ub_fail(&p, "pthread_create", 0, err);
		goto out;
	}
	started = true;
	err = nvx_wait_flag(&p.ready, NVX_UB_READY_TIMEOUT);
	if (err == -ETIMEDOUT) {
		nvx_err("%s: %s: thread B did not get ready within %llu s",
			ub->ctx->path, nvx_um_names[m],
			NVX_UB_READY_TIMEOUT / NVX_NSEC_PER_SEC);
		goto out;
	}
	if (err) {
		nvx_ub_fail(&p, p.b_req == NVX_IOC_UINTR_REGISTER ?
			    "B: NVX_IOC_UINTR_REGISTER" :
			    "B: NVX_IOC_UINTR_VECTOR_FD", p.b_req, -err);
		goto out;
	}
	for (i = 0; i < 2 && (m == NVX_UM_NVX || m == NVX_UM_NVX_WAIT); i++) {
		err = nvx_uintr_add_sender(p.fd, p.vec_b[i]);
		p.to_b[i] = err;
		err = err < 0 ? err : 0;
		if (err) {
			nvx_ub_fail(&p, "NVX_IOC_UINTR_ADD_SENDER",
				    NVX_IOC_UINTR_ADD_SENDER, -err);
			goto out;
		}
		p.have_to[1 + i] = true;
	}

	for (i = 0; i < warm + ub->iters; i++) {
		ret = nvx_ub_pair_once(&p, i, &ns);
		if (ret)
			goto out;
		if (i >= warm)
			ub->samples[i - warm] = ns;
	}
	nvx_ub_stat(ub->samples, ub->iters, &ub->lat[m][mode]);
	ret = NVX_EXIT_OK;
out:
	nvx_ub_pair_cleanup(&p, started ? &b : NULL);
	if (!ret && p.b_err) {
		nvx_ub_fail(&p, "thread B", m == NVX_UM_NVX_WAIT ?
			    NVX_IOC_UINTR_WAIT : 0, -p.b_err);
		ret = NVX_EXIT_FAIL;
	}
	if (!ret && p.rx_b.reply_errors) {
		nvx_err("%s: %s: %llu answers of B's handler failed",
			ub->ctx->path, nvx_um_names[m],
			(unsigned long long)p.rx_b.reply_errors);
		ret = NVX_EXIT_FAIL;
	}
	return ret;
}

/* ------------------------------------------------------------- results */

static double nvx_ub_rate(const struct nvx_ub_load *l)
{
	if (!l->ns)
		return NAN;
	return (double)l->iters * NVX_NSEC_PER_SEC / l->ns;
}

static double nvx_ub_ticks_per_s(const struct nvx_ub_load *l)
{
	if (!l->ns)
		return NAN;
	return (double)l->ticks * NVX_NSEC_PER_SEC / l->ns;
}

/* The share of the CPU the interruptions took: 1 - rate / baseline. */
static double nvx_ub_overhead(const struct nvx_ub *ub,
			      const struct nvx_ub_load *l)
{
	double base = nvx_ub_rate(&ub->base);

	if (!(base > 0))
		return NAN;
	return 1 - nvx_ub_rate(l) / base;
}

/* How much longer a fixed amount of work takes: baseline / rate - 1. */
static double nvx_ub_slowdown(const struct nvx_ub *ub,
			      const struct nvx_ub_load *l)
{
	double rate = nvx_ub_rate(l);

	if (!(rate > 0))
		return NAN;
	return nvx_ub_rate(&ub->base) / rate - 1;
}

/* (max - min) / mean of the baseline windows' rates. */
static double nvx_ub_spread(const struct nvx_ub *ub)
{
	double base = nvx_ub_rate(&ub->base);

	if (!(base > 0) || ub->base_max < ub->base_min)
		return NAN;
	return (ub->base_max - ub->base_min) / base;
}

/* signal / nvx overhead of period @i: NAN when nvx's is about none. */
static double nvx_ub_ratio(const struct nvx_ub *ub, unsigned int i)
{
	double n = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_NVX]);
	double s = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_SIGNAL]);

	if (!(n >= NVX_UB_MIN_OVERHEAD))
		return NAN;
	return s / n;
}

static const char nvx_ub_unbounded[] =
	"the nvx timer cost less than 0.1% of the CPU and the signal more: the ratio is unbounded";
static const char nvx_ub_neither[] =
	"neither timer cost 0.1% of the CPU: no ratio";
static const char nvx_ub_uncertain[] =
	"the nvx overhead is within the spread of the baseline windows: the ratio is uncertain";

/* Why there is no ratio at period @i, or NULL. */
static const char *nvx_ub_no_ratio(const struct nvx_ub *ub, unsigned int i)
{
	double n = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_NVX]);
	double s = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_SIGNAL]);

	if (n >= NVX_UB_MIN_OVERHEAD)
		return NULL;
	if (s >= NVX_UB_MIN_OVERHEAD)
		return nvx_ub_unbounded;
	return nvx_ub_neither;
}

/* The share of its wanted ticks a timer delivered at period @i. */
static double nvx_ub_kept(const struct nvx_ub_load *l, unsigned int i)
{
	return nvx_ub_ticks_per_s(l) * nvx_ub_periods[i] / NVX_NSEC_PER_SEC;
}

/* Whether both timers kept their rate at period @i (>= 90 %). */
static bool nvx_ub_both_keep(const struct nvx_ub *ub, unsigned int i)
{
	return nvx_ub_kept(&ub->load[i][NVX_UK_NVX], i) >= NVX_UB_KEEP &&
	       nvx_ub_kept(&ub->load[i][NVX_UK_SIGNAL], i) >= NVX_UB_KEEP;
}

/* CPU time lost per delivered tick, ns: the overhead / ticks per s. */
static double nvx_ub_cost(const struct nvx_ub *ub,
			  const struct nvx_ub_load *l)
{
	double t = nvx_ub_ticks_per_s(l);

	if (!(t > 0))
		return NAN;
	return nvx_ub_overhead(ub, l) * NVX_NSEC_PER_SEC / t;
}

/*
 * signal / nvx CPU cost per delivered tick at period @i: NAN when nvx's
 * overhead is about none (nvx_ub_no_ratio() says why).
 */
static double nvx_ub_cost_ratio(const struct nvx_ub *ub, unsigned int i)
{
	if (!(nvx_ub_overhead(ub, &ub->load[i][NVX_UK_NVX]) >=
	      NVX_UB_MIN_OVERHEAD))
		return NAN;
	return nvx_ub_cost(ub, &ub->load[i][NVX_UK_SIGNAL]) /
	       nvx_ub_cost(ub, &ub->load[i][NVX_UK_NVX]);
}

/* The headline's period: the shortest at which both keep their rate. */
static int nvx_ub_headline_period(const struct nvx_ub *ub)
{
	unsigned int i;

	for (i = 0; i < NVX_UB_NR_PERIODS; i++)
		if (nvx_ub_both_keep(ub, i))
			return i;
	return -1;
}

static const char nvx_ub_none_keeps[] =
	"at no period did both timers keep 90% of their rate: no headline";

/* Why there is no headline, or NULL. */
static const char *nvx_ub_headline_why(const struct nvx_ub *ub)
{
	int h = nvx_ub_headline_period(ub);

	return h < 0 ? nvx_ub_none_keeps : nvx_ub_no_ratio(ub, h);
}

static double nvx_ub_headline(const struct nvx_ub *ub)
{
	int h = nvx_ub_headline_period(ub);

	return h < 0 ? NAN : nvx_ub_cost_ratio(ub, h);
}

/* Round trip or one-way ratio @num / @den of the means: NAN if none. */
static double nvx_ub_lat_ratio(const struct nvx_ub *ub, int mode,
			       enum nvx_ub_method num, enum nvx_ub_method den)
{
	if (!(ub->lat[den][mode].mean_ns > 0))
		return NAN;
	return ub->lat[num][mode].mean_ns / ub->lat[den][mode].mean_ns;
}

static void nvx_ub_json_stat(struct nvx_json *j, const char *key,
			     const struct nvx_ub_stat *s)
{
	static const struct nvx_json_field fields[] = {
		NVX_JSON_DOUBLE(struct nvx_ub_stat, "mean_ns", mean_ns),
		NVX_JSON_UINT(struct nvx_ub_stat, p50_ns),
		NVX_JSON_UINT(struct nvx_ub_stat, p99_ns),
		NVX_JSON_UINT(struct nvx_ub_stat, min_ns),
		NVX_JSON_UINT(struct nvx_ub_stat, max_ns),
		{ }
	};

	nvx_json_object_begin(j, key);
	nvx_json_fields(j, s, fields);
	nvx_json_end(j);
}

static void nvx_ub_json_ratios(struct nvx_json *j, const struct nvx_ub *ub,
			       int mode)
{
	nvx_json_object_begin(j, nvx_ub_mode_names[mode]);
	nvx_json_double(j, "signal_nvx",
			nvx_ub_lat_ratio(ub, mode, NVX_UM_SIGNAL, NVX_UM_NVX));
	nvx_json_double(j, "eventfd_nvx",
			nvx_ub_lat_ratio(ub, mode, NVX_UM_EVENTFD, NVX_UM_NVX));
	nvx_json_double(j, "eventfd_nvx_wait",
			nvx_ub_lat_ratio(ub, mode, NVX_UM_EVENTFD,
					 NVX_UM_NVX_WAIT));
	nvx_json_end(j);
}

/* (d): the signal's delivery cost / nvx's; NAN when nvx's is not > 0. */
static double nvx_ub_delivery_ratio(const struct nvx_ub *ub)
{
	double n = nvx_ub_delivery_ns(ub, false);

	return n > 0 ? nvx_ub_delivery_ns(ub, true) / n : NAN;
}

/* (c): blocked RECV (or poll) / user interrupt, of the means. */
static double nvx_ub_react_ratio(const struct nvx_ub *ub,
				 enum nvx_ur_method m)
{
	double u = ub->react[NVX_UR_UINTR].mean_ns;

	return u > 0 && !ub->react_skip ? ub->react[m].mean_ns / u : NAN;
}

static void nvx_ub_print_json(const struct nvx_ub *ub)
{
	struct nvx_json *j = &ub->ctx->js;
	int h = nvx_ub_headline_period(ub);
	int m, mode, k;
	unsigned int i;

	nvx_json_object_begin(j, NULL);
	nvx_json_array_begin(j, "cpus");
	nvx_json_s64(j, NULL, ub->cpu[0]);
	nvx_json_s64(j, NULL, ub->cpu[1]);
	nvx_json_end(j);
	nvx_json_bool(j, "same_cpu", ub->same_cpu);

	nvx_json_object_begin(j, "latency");
	nvx_json_u64(j, "iters", ub->iters);
	nvx_json_object_begin(j, "methods");
	for (m = 0; m < NVX_UM_COUNT; m++) {
		nvx_json_object_begin(j, nvx_um_names[m]);
		nvx_json_str(j, "receiver", nvx_um_receiver[m]);
		for (mode = 0; mode < NVX_UB_MODES; mode++)
			nvx_ub_json_stat(j, nvx_ub_mode_names[mode],
					 &ub->lat[m][mode]);
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_object_begin(j, "ratios");
	for (mode = 0; mode < NVX_UB_MODES; mode++)
		nvx_ub_json_ratios(j, ub, mode);
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "preemption");
	nvx_json_u64(j, "window_ns", ub->window_ns);
	nvx_json_u64(j, "rounds", ub->rounds);
	nvx_json_object_begin(j, "baseline");
	nvx_json_double(j, "iters_per_s", nvx_ub_rate(&ub->base));
	nvx_json_double(j, "spread", nvx_ub_spread(ub));
	nvx_json_u64(j, "windows", ub->base.windows);
	nvx_json_end(j);
	nvx_json_array_begin(j, "periods");
	for (i = 0; i < NVX_UB_NR_PERIODS; i++) {
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "period_ns", nvx_ub_periods[i]);
		nvx_json_double(j, "wanted_ticks_per_s",
				(double)NVX_NSEC_PER_SEC / nvx_ub_periods[i]);
		for (k = 0; k < NVX_UK_COUNT; k++) {
			const struct nvx_ub_load *l = &ub->load[i][k];

			nvx_json_object_begin(j, nvx_uk_names[k]);
			nvx_json_double(j, "iters_per_s", nvx_ub_rate(l));
			nvx_json_double(j, "overhead", nvx_ub_overhead(ub, l));
			nvx_json_double(j, "slowdown", nvx_ub_slowdown(ub, l));
			nvx_json_double(j, "ticks_per_s",
					nvx_ub_ticks_per_s(l));
			nvx_json_u64(j, "ticks", l->ticks);
			nvx_json_double(j, "kept", nvx_ub_kept(l, i));
			nvx_json_double(j, "cpu_ns_per_tick",
					nvx_ub_cost(ub, l));
			nvx_json_u64(j, "watchdog_windows", l->watchdog);
			nvx_json_end(j);
		}
		nvx_json_bool(j, "nominal", i < NVX_UB_NR_NOMINAL);
		nvx_json_bool(j, "saturated", !nvx_ub_both_keep(ub, i));
		nvx_json_double(j, "signal_nvx", nvx_ub_ratio(ub, i));
		nvx_json_double(j, "signal_nvx_per_tick",
				nvx_ub_cost_ratio(ub, i));
		nvx_json_str(j, "no_ratio", nvx_ub_no_ratio(ub, i));
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "reaction");
	if (ub->react_skip) {
		nvx_json_str(j, "skipped", ub->react_skip);
	} else {
		nvx_json_u64(j, "iters", ub->iters);
		nvx_json_object_begin(j, "methods");
		for (m = 0; m < NVX_UR_COUNT; m++) {
			nvx_json_object_begin(j, nvx_ur_names[m]);
			nvx_json_str(j, "receiver", nvx_ur_receiver[m]);
			nvx_ub_json_stat(j, "time", &ub->react[m]);
			nvx_json_end(j);
		}
		nvx_json_end(j);
	}
	nvx_json_object_begin(j, "ratios");
	nvx_json_double(j, "recv_uintr",
			nvx_ub_react_ratio(ub, NVX_UR_RECV));
	nvx_json_double(j, "poll_uintr",
			nvx_ub_react_ratio(ub, NVX_UR_POLL));
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "delivery");
	nvx_json_u64(j, "calls", ub->deliver_sends);
	nvx_json_u64(j, "rounds", ub->rounds);
	nvx_json_object_begin(j, "ns_per_call");
	for (k = 0; k < NVX_UD_COUNT; k++)
		nvx_json_double(j, nvx_ud_names[k], nvx_ub_deliver_ns(ub, k));
	nvx_json_end(j);
	nvx_json_double(j, "nvx_post_kick_ns",
			nvx_ub_deliver_ns(ub, NVX_UD_MASKED) -
			nvx_ub_deliver_ns(ub, NVX_UD_REJECTED));
	nvx_json_double(j, "nvx_entry_ns",
			nvx_ub_deliver_ns(ub, NVX_UD_DELIVERED) -
			nvx_ub_deliver_ns(ub, NVX_UD_MASKED));
	nvx_json_double(j, "nvx_delivery_ns", nvx_ub_delivery_ns(ub, false));
	nvx_json_double(j, "signal_delivery_ns", nvx_ub_delivery_ns(ub, true));
	nvx_json_double(j, "signal_nvx", nvx_ub_delivery_ratio(ub));
	nvx_json_end(j);

	nvx_json_double(j, "headline", nvx_ub_headline(ub));
	if (h < 0)
		nvx_json_null(j, "headline_period_ns");
	else
		nvx_json_u64(j, "headline_period_ns", nvx_ub_periods[h]);
	nvx_json_str(j, "headline_note", nvx_ub_headline_why(ub));
	nvx_json_double(j, "overhead_ratio_20us",
			nvx_ub_ratio(ub, NVX_UB_AT_20US));
	nvx_json_double(j, "reaction_ratio",
			nvx_ub_react_ratio(ub, NVX_UR_RECV));
	nvx_json_double(j, "delivery_ratio", nvx_ub_delivery_ratio(ub));
	nvx_json_end(j);
}

/* A ratio for people: "2.31", or "inf" / "n/a" where there is none. */
static const char *nvx_ub_fmt_ratio(char *buf, size_t size, double r,
				    const char *why)
{
	if (isfinite(r))
		snprintf(buf, size, "%.2f", r);
	else if (why == nvx_ub_unbounded)
		snprintf(buf, size, "inf");
	else
		snprintf(buf, size, "n/a");
	return buf;
}

static void nvx_ub_print_text(const struct nvx_ub *ub)
{
	int h = nvx_ub_headline_period(ub);
	unsigned int i;
	const struct nvx_ub_stat *s;
	const char *why, *note = NULL;
	char r1[16], r2[16], r3[16];
	unsigned int watchdog = 0;
	int m;

	printf("bench uintr: nvx user interrupts against POSIX signals and eventfd\n");
	if (ub->same_cpu)
		printf("both threads on CPU %d: the only CPU this process may use\n",
		       ub->cpu[0]);
	else
		printf("thread A on CPU %d, thread B on CPU %d\n", ub->cpu[0],
		       ub->cpu[1]);

	printf("\n(a) thread A wakes thread B, %u times per method and way; ns\n",
	       ub->iters);
	printf("%-9s %-31s %27s %27s\n", "", "", "one way (A to B)",
	       "round trip (A to B to A)");
	printf("%-9s %-31s %9s %8s %8s %9s %8s %8s\n", "method",
	       "the woken thread", "mean", "p50", "p99", "mean", "p50",
	       "p99");
	for (m = 0; m < NVX_UM_COUNT; m++) {
		s = ub->lat[m];
		printf("%-9s %-31s %9.0f %8llu %8llu %9.0f %8llu %8llu\n",
		       nvx_um_names[m], nvx_um_receiver[m],
		       s[NVX_UB_ONE_WAY].mean_ns,
		       (unsigned long long)s[NVX_UB_ONE_WAY].p50_ns,
		       (unsigned long long)s[NVX_UB_ONE_WAY].p99_ns,
		       s[NVX_UB_ROUND_TRIP].mean_ns,
		       (unsigned long long)s[NVX_UB_ROUND_TRIP].p50_ns,
		       (unsigned long long)s[NVX_UB_ROUND_TRIP].p99_ns);
	}
	for (m = 0; m < NVX_UB_MODES; m++)
		printf("%-10s signal/nvx %s, eventfd/nvx %s, eventfd/nvx_wait %s (means)\n",
		       m == NVX_UB_ONE_WAY ? "one way:" : "round trip:",
		       nvx_ub_fmt_ratio(r1, sizeof(r1),
					nvx_ub_lat_ratio(ub, m, NVX_UM_SIGNAL,
							 NVX_UM_NVX), NULL),
		       nvx_ub_fmt_ratio(r2, sizeof(r2),
					nvx_ub_lat_ratio(ub, m, NVX_UM_EVENTFD,
							 NVX_UM_NVX), NULL),
		       nvx_ub_fmt_ratio(r3, sizeof(r3),
					nvx_ub_lat_ratio(ub, m, NVX_UM_EVENTFD,
							 NVX_UM_NVX_WAIT),
					NULL));
	printf("one way: from A's clock before waking to B's after it woke\n");

	printf("\n(b) a timer interrupts a compute loop on CPU %d: %u round%s, %.0f ms windows\n",
	       ub->cpu[1], ub->rounds, ub->rounds == 1 ? "" : "s",
	       (double)ub->window_ns / NVX_NSEC_PER_MSEC);
	printf("baseline, no timer: %.4g iterations/s (windows spread %.1f%%)\n",
	       nvx_ub_rate(&ub->base), 100 * nvx_ub_spread(ub));
	printf("%-8s %9s %6s %8s %9s %6s %8s %9s %9s %9s\n", "period",
	       "wanted/s", "nvx", "nvx CPU", "nvx ns", "sig", "sig CPU",
	       "sig ns", "sig/nvx", "per tick");
	for (i = 0; i < NVX_UB_NR_PERIODS; i++) {
		const struct nvx_ub_load *n = &ub->load[i][NVX_UK_NVX];
		const struct nvx_ub_load *g = &ub->load[i][NVX_UK_SIGNAL];

		why = nvx_ub_no_ratio(ub, i);
		printf("%5llu us %9.0f %5.0f%% %7.2f%% %9.0f %5.0f%% %7.2f%% %9.0f %9s %9s%s\n",
		       (unsigned long long)(nvx_ub_periods[i] /
					    NVX_NSEC_PER_USEC),
		       (double)NVX_NSEC_PER_SEC / nvx_ub_periods[i],
		       100 * nvx_ub_kept(n, i), 100 * nvx_ub_overhead(ub, n),
		       nvx_ub_cost(ub, n),
		       100 * nvx_ub_kept(g, i), 100 * nvx_ub_overhead(ub, g),
		       nvx_ub_cost(ub, g),
		       nvx_ub_fmt_ratio(r1, sizeof(r1), nvx_ub_ratio(ub, i),
					why),
		       nvx_ub_fmt_ratio(r2, sizeof(r2),
					nvx_ub_cost_ratio(ub, i), why),
		       nvx_ub_both_keep(ub, i) ? "" : "  saturated");
		watchdog += n->watchdog + g->watchdog;
	}
	printf("%s\n%s\n%s\n",
	       "nvx, sig: ticks delivered / ticks wanted; saturated: one of them kept less than 90%",
	       "CPU: the share the interruptions took, 1 - rate / baseline rate (below 0: noise)",
	       "ns: CPU lost per delivered tick, CPU share / ticks per second; sig/nvx of the CPU shares, per tick of the ns");
	if (watchdog)
		printf("watchdog: stopped a timer in %u window%s, its handler left no time\n",
		       watchdog, watchdog == 1 ? "" : "s");

	if (ub->react_skip) {
		printf("\n(c) skipped: %s\n", ub->react_skip);
		goto deliver;
	}
	printf("\n(c) system process B takes a VM's request, %u times per method; ns\n",
	       ub->iters);
	printf("%-9s %-36s %9s %8s %8s\n", "method", "the system process",
	       "mean", "p50", "p99");
	for (m = 0; m < NVX_UR_COUNT; m++) {
		s = &ub->react[m];
		printf("%-9s %-36s %9.0f %8llu %8llu\n", nvx_ur_names[m],
		       nvx_ur_receiver[m], s->mean_ns,
		       (unsigned long long)s->p50_ns,
		       (unsigned long long)s->p99_ns);
	}
	printf("recv/uintr %s, poll/uintr %s (means; reaction ratio: recv/uintr)\n",
	       nvx_ub_fmt_ratio(r1, sizeof(r1),
				nvx_ub_react_ratio(ub, NVX_UR_RECV), NULL),
	       nvx_ub_fmt_ratio(r2, sizeof(r2),
				nvx_ub_react_ratio(ub, NVX_UR_POLL), NULL));
	printf("%s\n",
	       "from A's clock before the doorbell (KICK) to B's once RECV returned it");

deliver:
	printf("\n(d) one thread interrupts itself, %u calls per kind, %s%u rounds; ns per call\n",
	       ub->deliver_sends, "best of ", ub->rounds);
	for (m = 0; m < NVX_UD_COUNT; m++)
		printf("%-17s %9.0f\n", nvx_ud_names[m],
		       nvx_ub_deliver_ns(ub, m));
	printf("nvx: post and kick (masked - rejected) %.0f, %s %.0f\n",
	       nvx_ub_deliver_ns(ub, NVX_UD_MASKED) -
	       nvx_ub_deliver_ns(ub, NVX_UD_REJECTED),
	       "entry (delivered - masked)",
	       nvx_ub_deliver_ns(ub, NVX_UD_DELIVERED) -
	       nvx_ub_deliver_ns(ub, NVX_UD_MASKED));
	printf("one delivery: nvx %.0f, signal %.0f (%s); signal/nvx %s\n",
	       nvx_ub_delivery_ns(ub, false), nvx_ub_delivery_ns(ub, true),
	       "delivered - rejected or probe",
	       nvx_ub_fmt_ratio(r1, sizeof(r1), nvx_ub_delivery_ratio(ub),
				NULL));

	why = nvx_ub_headline_why(ub);
	if (h < 0) {
		printf("\nheadline: n/a (%s)\n", why);
	} else if (why) {
		printf("\nheadline: %s at %llu us (%s)\n",
		       nvx_ub_fmt_ratio(r1, sizeof(r1), NAN, why),
		       (unsigned long long)(nvx_ub_periods[h] /
					    NVX_NSEC_PER_USEC), why);
	} else {
		printf("\nheadline: %.2f (at %llu us, the shortest period both keep; %s)\n",
		       nvx_ub_headline(ub),
		       (unsigned long long)(nvx_ub_periods[h] /
					    NVX_NSEC_PER_USEC),
		       "signal / nvx CPU lost per delivered tick");
		if (nvx_ub_overhead(ub, &ub->load[h][NVX_UK_NVX]) <
		    nvx_ub_spread(ub))
			note = nvx_ub_uncertain;
	}
	if (note)
		printf("note: %s\n", note);
	printf("%s\n",
	       "note: times are from this machine; under QEMU TCG they are not hardware times, and timers may not keep their period: compare the ratios");
}

enum {
	NVX_OPT_ITERS = 300,
	NVX_OPT_WINDOW,
	NVX_OPT_ROUNDS,
};

static const struct option nvx_bench_uintr_opts[] = {
	{ "iters", required_argument, NULL, NVX_OPT_ITERS },
	{ "window", required_argument, NULL, NVX_OPT_WINDOW },
	{ "rounds", required_argument, NULL, NVX_OPT_ROUNDS },
	{ }
};

/* nvx_getopt()'s handler: @arg is the struct nvx_ub. */
static int nvx_bench_uintr_opt(struct nvx_ctx *ctx, int c, void *arg)
{
	struct nvx_ub *ub = arg;
	unsigned long long n;

	switch (c) {
	case NVX_OPT_ITERS:
		return nvx_opt_u32(ctx, "iters", optarg, 1, NVX_UB_MAX_ITERS,
				   &ub->iters);
	case NVX_OPT_WINDOW:
		if (nvx_parse_uint(optarg, NVX_UB_MAX_WINDOW_MS, &n) || !n)
			return nvx_usage_error(ctx,
					       "--window: '%s' is not a number of ms from 1 to %u",
					       optarg, NVX_UB_MAX_WINDOW_MS);
		ub->window_ns = n * NVX_NSEC_PER_MSEC;
		return NVX_EXIT_OK;
	case NVX_OPT_ROUNDS:
		return nvx_opt_u32(ctx, "rounds", optarg, 1, NVX_UB_MAX_ROUNDS,
				   &ub->rounds);
	}
	return NVX_OPT_UNKNOWN;
}

static int nvx_bench_uintr_parse(struct nvx_ctx *ctx, int argc, char **argv,
				 struct nvx_ub *ub)
{
	return nvx_getopt(ctx, argc, argv, nvx_bench_uintr_opts,
			  nvx_bench_uintr_opt, ub);
}

/**
 * cmd_bench_uintr() - nvx-bench uintr
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_uintr(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_ub ub = {
		.ctx = ctx,
		.iters = NVX_UB_ITERS,
		.window_ns = NVX_UB_WINDOW_MS * NVX_NSEC_PER_MSEC,
		.rounds = NVX_UB_ROUNDS,
	};
	struct nvx_uintr_rx probe = { .reply = -1 };
	int ret, err, m, mode;
	bool tty = isatty(STDERR_FILENO);

	ret = nvx_bench_uintr_parse(ctx, argc, argv, &ub);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;

	ret = nvx_bench_cpus(ctx, ub.cpu, &ub.same_cpu);
	if (ret)
		return ret;
	if (ub.same_cpu)
		nvx_warn("%s: this process may use one CPU only: both threads share it, and the waiting ones yield instead of spinning",
			 ctx->path);
	nvx_pin_self(ub.cpu[0]);

	/* does the kernel have user interrupts at all? */
	err = nvx_uintr_rx_register(ctx->fd, &probe);
	if (err) {
		nvx_err("%s: NVX_IOC_UINTR_REGISTER: %s", ctx->path,
			nvx_uintr_strerror(NVX_IOC_UINTR_REGISTER, -err));
		return NVX_EXIT_FAIL;
	}
	nvx_uintr_rx_unregister(ctx->fd);

	ub.samples = calloc(ub.iters, sizeof(*ub.samples));
	if (!ub.samples) {
		nvx_err("%s: out of memory", ctx->path);
		return NVX_EXIT_FAIL;
	}
	for (m = 0; m < NVX_UM_COUNT; m++) {
		for (mode = 0; mode < NVX_UB_MODES; mode++) {
			if (tty)
				fprintf(stderr, "%s: %s: %s %s, %u times...\n",
					nvx_prog, ctx->path, nvx_um_names[m],
					nvx_ub_mode_names[mode], ub.iters);
			ret = nvx_ub_pair_run(&ub, m, mode);
			if (ret)
				goto out;
		}
	}
	if (tty)
		fprintf(stderr, "%s: %s: preemption, about %.0f s...\n",
			nvx_prog, ctx->path,
			(double)ub.rounds * NVX_UB_NR_PERIODS *
			(1 + NVX_UK_COUNT) * ub.window_ns / NVX_NSEC_PER_SEC);
	ret = nvx_ub_preempt(&ub);
	if (ret)
		goto out;
	if (tty)
		fprintf(stderr, "%s: %s: reaction, %u times per method...\n",
			nvx_prog, ctx->path, ub.iters);
	ret = nvx_ub_react(&ub);
	if (ret)
		goto out;
	if (tty)
		fprintf(stderr, "%s: %s: delivery, %u rounds...\n", nvx_prog,
			ctx->path, ub.rounds);
	ub.deliver_sends = ub.iters * NVX_UD_SENDS_PER_ITER;
	ret = nvx_ub_deliver(&ub);
	if (ret)
		goto out;

	if (ctx->json)
		nvx_ub_print_json(&ub);
	else
		nvx_ub_print_text(&ub);
out:
	free(ub.samples);
	return ret;
}

const char nvx_bench_uintr_usage[] =
	"[--iters N] [--window MS] [--rounds N]\n"
	"\n"
	"Two threads, A (this one) and B, on two CPUs (when the process may\n"
	"use two).\n"
	"\n"
	"(a) Wake-up latency. A wakes B N times, one at a time, and times\n"
	"each wake-up one way (A's clock before waking to B's clock once\n"
	"B's code runs) and as a round trip (B's handler or loop wakes A\n"
	"back at once):\n"
	"\n"
	"  nvx       NVX_IOC_UINTR_SEND; the handler runs on B, which spins\n"
	"            in user mode\n"
	"  nvx_wait  the same, B (and A, for the way back) blocked in\n"
	"            NVX_IOC_UINTR_WAIT\n"
	"  signal    tgkill() to B, a sigaction() handler, sigreturn; B\n"
	"            spins in user mode\n"
	"  eventfd   write() to an eventfd that B is blocked reading\n"
	"\n"
	"Mean, median and 99th percentile, and the ratios of the means\n"
	"signal/nvx, eventfd/nvx and eventfd/nvx_wait.\n"
	"\n"
	"(b) Preemption overhead. A compute loop runs on B's CPU for\n"
	"windows of MS, interrupted every 10, 20, 50 and 100 us (the\n"
	"nominal periods) and 200 us, 500 us, 1, 2 and 5 ms (where a timer\n"
	"under emulation keeps its rate) by the nvx\n"
	"timer (NVX_IOC_UINTR_TIMER, a handler counts) or by a POSIX timer\n"
	"(timer_create() with SIGEV_THREAD_ID, a sigaction() handler\n"
	"counts), against windows without a timer in the same run. In\n"
	"every round each period gets a window of each kind. The overhead\n"
	"is the share of the CPU lost: 1 - iterations per second with the\n"
	"timer / iterations per second without. Also the ticks actually\n"
	"handled per second: a timer may not keep its period, under\n"
	"emulation in particular; a period at which one of them delivers\n"
	"less than 90% of its ticks is marked saturated. The CPU lost per\n"
	"delivered tick is the overhead / ticks per second. A watchdog\n"
	"stops a timer whose handler leaves the loop no time at all, and\n"
	"says so.\n"
	"\n"
	"(c) Reaction time of a system process. A bare VM (a KVM VM that\n"
	"never runs, attached to an endpoint for slow-path doorbells) stands\n"
	"for the guest: A queues one request in its ring and rings with\n"
	"NVX_UVM_CHAN_IOC_KICK, N times; B, the system process, learns of\n"
	"it and takes it with NVX_UVM_EP_IOC_RECV, then answers:\n"
	"\n"
	"  recv      B blocked in RECV\n"
	"  poll      B blocked in poll(2) on the endpoint, then RECV\n"
	"  uintr     B running a loop in user mode; the endpoint posts a\n"
	"            user interrupt (NVX_UVM_EP_IOC_NOTIFY), then RECV\n"
	"\n"
	"timed from A's clock before the KICK to B's once RECV returned the\n"
	"request, after N/10 (at most 100) untimed ones. Before each, A\n"
	"waits until B waits: back in its loop (uintr), or switched out in\n"
	"RECV or poll (so those times include waking B's idle CPU, as in a\n"
	"real system process that sleeps). The ratios recv/uintr (the\n"
	"reaction ratio) and poll/uintr of the means. (c) grows the pool\n"
	"by 2 MiB for the VM and gives it back; without CAP_SYS_ADMIN,\n"
	"/dev/kvm or user VMs in the kernel it is skipped, and says why.\n"
	"\n"
	"(d) The cost of one delivery, against a signal's. A interrupts\n"
	"itself 10 x N times per kind and round, by NVX_IOC_UINTR_SEND\n"
	"through its own sender entry or by tgkill() (a sigaction()\n"
	"handler counts):\n"
	"\n"
	"  nvx_rejected      through an empty entry (ENOENT): the call alone\n"
	"  nvx_masked        delivery masked: the vector is posted and A\n"
	"                    kicked, nothing is entered\n"
	"  nvx_delivered     every send delivered on the way out\n"
	"  signal_probe      tgkill() of signal 0: the call alone\n"
	"  signal_blocked    the signal blocked: queued once, merged\n"
	"  signal_delivered  every tgkill() delivered on the way out\n"
	"\n"
	"the lowest mean of the rounds per kind. One delivery costs\n"
	"delivered - rejected (nvx) or delivered - probe (signal): the\n"
	"kernel's and the handler's work without the call, the part a\n"
	"timer tick's delivery shares; their ratio signal/nvx is the\n"
	"delivery ratio. For nvx, masked - rejected is the post and the\n"
	"kick, delivered - masked the entry (frame, handler, return).\n"
	"\n"
	"  --iters N    wake-ups per method and way in (a), requests per\n"
	"               method in (c), a tenth of the calls per kind\n"
	"               and round in (d)\n"
	"               (default 1000)\n"
	"  --window MS  the length of one window in (b) (default 300)\n"
	"  --rounds N   rounds of (b) (default 3): 27 windows each; and\n"
	"               of (d)\n"
	"\n"
	"With the defaults the bench takes about 30 s, most of it in (b)\n"
	"(rounds x 27 x MS). Times are from this machine; under QEMU TCG\n"
	"they are not hardware times: compare the ratios. The headline is\n"
	"the signal's CPU lost per delivered tick / nvx's, at the shortest\n"
	"period at which both timers keep 90% of their rate; it is null\n"
	"(text: inf or n/a, with the reason) when no period qualifies or\n"
	"nvx's overhead there is below 0.1%.\n"
	"JSON: \"cpus\", \"same_cpu\", \"latency\" (\"iters\", \"methods\":\n"
	"per method \"receiver\", \"one_way\" and \"round_trip\" with\n"
	"\"mean_ns\", \"p50_ns\", \"p99_ns\", \"min_ns\", \"max_ns\";\n"
	"\"ratios\"), \"preemption\" (\"window_ns\", \"rounds\",\n"
	"\"baseline\": \"iters_per_s\", \"spread\", \"windows\"; \"periods\":\n"
	"per period \"period_ns\", \"wanted_ticks_per_s\", \"nvx\" and\n"
	"\"signal\" with \"iters_per_s\", \"overhead\", \"slowdown\" (how much\n"
	"longer a fixed amount of work takes: baseline rate / rate - 1),\n"
	"\"ticks_per_s\", \"ticks\" (handler runs, all rounds), \"kept\"\n"
	"(ticks delivered / wanted),\n"
	"\"cpu_ns_per_tick\", \"watchdog_windows\"; \"nominal\",\n"
	"\"saturated\", \"signal_nvx\" (of the overheads),\n"
	"\"signal_nvx_per_tick\" (of the CPU per tick), \"no_ratio\" (why\n"
	"they are null)), \"reaction\" (\"iters\", \"methods\": per method\n"
	"\"receiver\" and \"time\" with the statistics of (a);\n"
	"\"ratios\": \"recv_uintr\", \"poll_uintr\"; \"skipped\": why, with\n"
	"null ratios, when (c) could not run), \"delivery\" (\"calls\",\n"
	"\"rounds\", \"ns_per_call\" per kind, \"nvx_post_kick_ns\",\n"
	"\"nvx_entry_ns\", \"nvx_delivery_ns\", \"signal_delivery_ns\",\n"
	"\"signal_nvx\"), \"headline\",\n"
	"\"headline_period_ns\", \"headline_note\", \"overhead_ratio_20us\"\n"
	"(the headline before the sweep: signal / nvx overhead at 20 us),\n"
	"\"reaction_ratio\" (recv / uintr reaction time, of the means) and\n"
	"\"delivery_ratio\" (signal / nvx cost of one delivery, (d)).\n";
