// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench uintr, part (b): how much of a CPU a periodic interruption
 * of a compute loop costs, with the nvx timer and with a POSIX timer
 * signal.
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

/* ------------------------------------------- (b) preemption overhead */

/**
 * struct nvx_ub_pre - the compute thread of (b) and its watchdog
 * @ub: the bench.
 * @fd: the nvx device.
 * @rx: the compute thread's nvx handler: counts the nvx timer's ticks.
 * @timer: the POSIX timer, signalling the compute thread.
 * @sig_ticks: the timer signal's handler runs.
 * @kind: the kind of interruption of the window running.
 * @period_ns: and its period.
 * @seq: the window running (from 1), 0 between windows.
 * @deadline_ns: when the watchdog stops the running window's timer.
 * @sig_disarm: the watchdog: stop the POSIX timer if window @seq runs.
 * @sig_disarmed: the signal handler: it did, for this window.
 * @done: the compute thread finished.
 * @err: -errno of what failed, else 0.
 * @what: what failed.
 * @req: the nvx request that failed, or 0.
 */
struct nvx_ub_pre {
	struct nvx_ub *ub;
	int fd;
	struct nvx_uintr_rx rx;
	timer_t timer;
	uint64_t sig_ticks;
	int kind;
	uint64_t period_ns;
	uint32_t seq;
	uint64_t deadline_ns;
	uint32_t sig_disarm;
	uint32_t sig_disarmed;
	int done;
	int err;
	const char *what;
	unsigned long req;
};

static struct nvx_ub_pre *nvx_ub_pre_cur;

static void nvx_ub_on_tick(int sig)
{
	struct nvx_ub_pre *q = nvx_ub_pre_cur;
	struct itimerspec off = { };
	int saved = errno;
	uint32_t d;

	__atomic_add_fetch(&q->sig_ticks, 1, __ATOMIC_RELAXED);
	d = __atomic_load_n(&q->sig_disarm, __ATOMIC_ACQUIRE);
	if (d && d == __atomic_load_n(&q->seq, __ATOMIC_ACQUIRE) &&
	    d != __atomic_load_n(&q->sig_disarmed, __ATOMIC_RELAXED) &&
	    !timer_settime(q->timer, 0, &off, NULL))
		__atomic_store_n(&q->sig_disarmed, d, __ATOMIC_RELEASE);
	errno = saved;
}

/* The work: a chain of multiplications the compiler cannot shorten. */
static __attribute__((noinline)) uint64_t nvx_ub_work(uint64_t x,
						      unsigned int n)
{
	while (n--) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static int nvx_ub_arm(struct nvx_ub_pre *q, int kind, uint64_t period_ns)
{
	struct itimerspec its = {
		.it_interval = { 0, period_ns },
		.it_value = { 0, period_ns },
	};
	int err;

	if (kind == NVX_UK_NVX) {
		err = nvx_uintr_timer_set(q->fd, 0, period_ns);
		if (err) {
			q->what = "NVX_IOC_UINTR_TIMER";
			q->req = NVX_IOC_UINTR_TIMER;
			return err;
		}
	} else if (kind == NVX_UK_SIGNAL && timer_settime(q->timer, 0, &its,
							  NULL)) {
		q->what = "timer_settime";
		return -errno;
	}
	return 0;
}

/*
 * One window: the compute loop for ub->window_ns, interrupted by @kind
 * every @period_ns, added to @l. *@rate: its iterations per second.
 */
static int nvx_ub_window(struct nvx_ub_pre *q, uint32_t seq, int kind,
			 uint64_t period_ns, struct nvx_ub_load *l,
			 double *rate)
{
	uint64_t *ticks = kind == NVX_UK_NVX ? &q->rx.hits : &q->sig_ticks;
	uint64_t t0, t1, ticks0, ticks1, iters = 0, x = seq;
	uint64_t window = q->ub->window_ns;
	int err;

	__atomic_store_n(&q->kind, kind, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->period_ns, period_ns, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->rx.armed, seq, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->seq, seq, __ATOMIC_SEQ_CST);
	/* stuck in handlers for as long again, the timer is stopped */
	__atomic_store_n(&q->deadline_ns, nvx_now_ns() + 2 * window +
			 100 * NVX_NSEC_PER_MSEC, __ATOMIC_SEQ_CST);
	ticks0 = __atomic_load_n(ticks, __ATOMIC_SEQ_CST);
	err = nvx_ub_arm(q, kind, period_ns);
	if (err)
		return err;
	t0 = nvx_now_ns();
	do {
		x = nvx_ub_work(x, NVX_UB_CHUNK);
		iters += NVX_UB_CHUNK;
		t1 = nvx_now_ns();
	} while (t1 - t0 < window);
	__atomic_store_n(&q->deadline_ns, 0, __ATOMIC_SEQ_CST);
	err = nvx_ub_arm(q, kind, 0);
	ticks1 = __atomic_load_n(ticks, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->seq, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->rx.armed, 0, __ATOMIC_SEQ_CST);
	__asm__ volatile("" : : "r"(x));	/* the work is used */

	l->iters += iters;
	l->ns += t1 - t0;
	l->ticks += kind == NVX_UK_NONE ? 0 : ticks1 - ticks0;
	l->windows++;
	if (__atomic_load_n(&q->rx.disarmed, __ATOMIC_SEQ_CST) == seq ||
	    __atomic_load_n(&q->sig_disarmed, __ATOMIC_SEQ_CST) == seq)
		l->watchdog++;
	*rate = (double)iters * NVX_NSEC_PER_SEC / (t1 - t0);
	return err;
}

/*
 * The rounds: per period a baseline window, an nvx window and a signal
 * window, nvx and signal in turns first, so that a drift of the
 * machine's speed falls on both alike.
 */
static int nvx_ub_pre_rounds(struct nvx_ub_pre *q)
{
	struct nvx_ub *ub = q->ub;
	unsigned int r, i, k;
	uint32_t seq = 0;
	double rate;
	int kind, err;

	ub->base_min = INFINITY;
	ub->base_max = 0;
	for (r = 0; r < ub->rounds; r++) {
		for (i = 0; i < NVX_UB_NR_PERIODS; i++) {
			err = nvx_ub_window(q, ++seq, NVX_UK_NONE, 0,
					    &ub->base, &rate);
			if (err)
				return err;
			if (rate < ub->base_min)
				ub->base_min = rate;
			if (rate > ub->base_max)
				ub->base_max = rate;
			for (k = 0; k < NVX_UK_COUNT; k++) {
				kind = (k + r) % NVX_UK_COUNT;
				err = nvx_ub_window(q, ++seq, kind,
						    nvx_ub_periods[i],
						    &ub->load[i][kind], &rate);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static void *nvx_ub_pre_thread(void *arg)
{
	struct nvx_ub_pre *q = arg;
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGRTMIN,
	};
	int err;

	nvx_pin_self(q->ub->cpu[1]);
	err = nvx_uintr_rx_register(q->fd, &q->rx);
	if (err) {
		q->what = "NVX_IOC_UINTR_REGISTER";
		q->req = NVX_IOC_UINTR_REGISTER;
		goto out;
	}
	sev.sigev_notify_thread_id = nvx_ub_gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &q->timer)) {
		err = -errno;
		q->what = "timer_create";
	} else {
		err = nvx_ub_pre_rounds(q);
		timer_delete(q->timer);
	}
	nvx_uintr_rx_unregister(q->fd);
out:
	q->err = err;
	__atomic_store_n(&q->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * The watchdog: a timer whose handling takes longer than its period
 * leaves the loop no time to see that its window is over. Past the
 * deadline, ask the handlers to stop the timer; later stop a POSIX timer
 * from here; and give up (exit) NVX_UB_GIVE_UP after the deadline.
 */
static void nvx_ub_watchdog(struct nvx_ub_pre *q, uint32_t *fired)
{
	int kind = __atomic_load_n(&q->kind, __ATOMIC_SEQ_CST);
	struct itimerspec off = { };
	uint64_t deadline, now;
	uint32_t seq;

	seq = __atomic_load_n(&q->seq, __ATOMIC_SEQ_CST);
	deadline = __atomic_load_n(&q->deadline_ns, __ATOMIC_SEQ_CST);
	now = nvx_now_ns();
	if (!seq || !deadline || now <= deadline)
		return;
	if (*fired != seq) {
		__atomic_store_n(&q->rx.disarm, seq, __ATOMIC_SEQ_CST);
		__atomic_store_n(&q->sig_disarm, seq, __ATOMIC_SEQ_CST);
		*fired = seq;
		return;
	}
	if (kind == NVX_UK_SIGNAL && now > deadline + NVX_UB_GIVE_UP / 2)
		timer_settime(q->timer, 0, &off, NULL);
	if (now <= deadline + NVX_UB_GIVE_UP)
		return;
	nvx_err("%s: preemption: with the %s timer every %llu us the compute loop made no progress, even %llu s after the timer was asked to stop: giving up",
		q->ub->ctx->path,
		kind == NVX_UK_SIGNAL ? "signal" : "nvx",
		(unsigned long long)(__atomic_load_n(&q->period_ns,
						     __ATOMIC_SEQ_CST) /
				     NVX_NSEC_PER_USEC),
		NVX_UB_GIVE_UP / NVX_NSEC_PER_SEC);
	exit(NVX_EXIT_FAIL);
}

/**
 * nvx_ub_preempt() - (b): every window of every round
 * @ub: the bench; the results go to @ub->base and @ub->load.
 *
 * Return: 0, or an NVX_EXIT_* status after a message.
 */
int nvx_ub_preempt(struct nvx_ub *ub)
{
	struct timespec poll = { 0, NVX_UB_WATCHDOG_POLL };
	struct nvx_ub_pre q = {
		.ub = ub,
		.fd = ub->ctx->fd,
		.rx = { .reply = -1 },
	};
	struct sigaction sa = {
		.sa_handler = nvx_ub_on_tick,
		.sa_flags = SA_RESTART,
	};
	struct sigaction old;
	uint32_t fired = 0;
	pthread_t t;
	int err;

	nvx_ub_pre_cur = &q;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, &old);
	err = pthread_create(&t, NULL, nvx_ub_pre_thread, &q);
	if (err) {
		nvx_err("%s: pthread_create: %s", ub->ctx->path,
			strerror(err));
		sigaction(SIGRTMIN, &old, NULL);
		return NVX_EXIT_FAIL;
	}
	while (!__atomic_load_n(&q.done, __ATOMIC_SEQ_CST)) {
		nanosleep(&poll, NULL);
		nvx_ub_watchdog(&q, &fired);
	}
	pthread_join(t, NULL);
	sigaction(SIGRTMIN, &old, NULL);
	nvx_ub_pre_cur = NULL;
	if (q.err) {
		nvx_err("%s: preemption: %s: %s", ub->ctx->path, q.what,
			q.req ? nvx_uintr_strerror(q.req, -q.err) :
			strerror(-q.err));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}
