/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx-bench uintr, shared by its parts: uintr.c ((a) wake-up latency,
 * the results, the command), uintr_timer.c ((b) the preemption overhead
 * of a periodic timer) and uintr_react.c ((c) how fast a system process
 * reacts to a message).
 */
#ifndef _NVX_BENCH_UINTR_H
#define _NVX_BENCH_UINTR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

/*
 * bench uintr: (a) how long a wake-up of a thread on the other CPU takes,
 * one way and there and back, with nvx user interrupts, POSIX signals and
 * an eventfd; (b) how much of a CPU a periodic interruption of a compute
 * loop costs, with the nvx timer and with a POSIX timer signal; (c) how
 * long a system process takes to have a message in hand, blocked in RECV,
 * in poll() or running with the endpoint's user interrupt.
 */

enum nvx_ub_method {
	NVX_UM_NVX,
	NVX_UM_NVX_WAIT,
	NVX_UM_SIGNAL,
	NVX_UM_EVENTFD,
	NVX_UM_COUNT,
};

enum {
	NVX_UB_ONE_WAY,
	NVX_UB_ROUND_TRIP,
	NVX_UB_MODES,
};

/* How the system process learns of a message in (c). */
enum nvx_ur_method {
	NVX_UR_RECV,
	NVX_UR_POLL,
	NVX_UR_UINTR,
	NVX_UR_COUNT,
};

/* What each call of (d) does. */
enum {
	NVX_UD_REJECTED,
	NVX_UD_MASKED,
	NVX_UD_DELIVERED,
	NVX_UD_SIG_PROBE,
	NVX_UD_SIG_BLOCKED,
	NVX_UD_SIG_DELIVERED,
	NVX_UD_COUNT,
};

/* calls per kind and round of (d), per --iters */
#define NVX_UD_SENDS_PER_ITER	10

extern const char * const nvx_ud_names[NVX_UD_COUNT];
extern const char * const nvx_ur_names[NVX_UR_COUNT];
extern const char * const nvx_ur_receiver[NVX_UR_COUNT];

/* What interrupts the compute loop in (b). */
enum {
	NVX_UK_NVX,
	NVX_UK_SIGNAL,
	NVX_UK_COUNT,
	NVX_UK_NONE = NVX_UK_COUNT,	/* the baseline */
};

#define NVX_UB_ITERS		1000	/* default wake-ups per method and way */
#define NVX_UB_MAX_ITERS	1000000
#define NVX_UB_WINDOW_MS	300	/* default measuring window of (b) */
#define NVX_UB_MAX_WINDOW_MS	60000
#define NVX_UB_ROUNDS		3	/* default rounds of (b) */
#define NVX_UB_MAX_ROUNDS	100
/* the longest a wake-up may take, also under emulation */
#define NVX_UB_TIMEOUT		(2 * NVX_NSEC_PER_SEC)
#define NVX_UB_READY_TIMEOUT	(10 * NVX_NSEC_PER_SEC)
/* the watchdog of (b) looks this often */
#define NVX_UB_WATCHDOG_POLL	(5 * NVX_NSEC_PER_MSEC)
/* and gives up this long after its deadline, when stopping did not help */
#define NVX_UB_GIVE_UP		(5 * NVX_NSEC_PER_SEC)
/* iterations of the compute loop between two clock reads */
#define NVX_UB_CHUNK		8192
/* an overhead below this (0.1 %) counts as none */
#define NVX_UB_MIN_OVERHEAD	0.001
#define NVX_UB_SIG_A		SIGUSR2	/* to thread A in (a) */
#define NVX_UB_SIG_B		SIGUSR1	/* to thread B in (a) */

/*
 * The timer periods of (b), ns (uintr.c): the nominal 10, 20, 50 and
 * 100 us, then longer ones, up to where both timers keep their rate
 * (under emulation neither keeps it at 20 us).
 */
#define NVX_UB_NR_PERIODS	9
#define NVX_UB_NR_NOMINAL	4
extern const uint64_t nvx_ub_periods[NVX_UB_NR_PERIODS];
#define NVX_UB_AT_20US		1	/* 20 us in nvx_ub_periods[] */
/* a timer keeps its rate when it delivers this share of its ticks */
#define NVX_UB_KEEP		0.9

#if defined(__GLIBC__) && !defined(sigev_notify_thread_id)
#define sigev_notify_thread_id	_sigev_un._tid
#endif

/**
 * struct nvx_ub_stat - the wake-ups of one method one way
 * @mean_ns: the mean.
 * @min_ns: the fastest.
 * @p50_ns: the median.
 * @p99_ns: the 99th percentile.
 * @max_ns: the slowest.
 */
struct nvx_ub_stat {
	double mean_ns;
	uint64_t min_ns;
	uint64_t p50_ns;
	uint64_t p99_ns;
	uint64_t max_ns;
};

/**
 * struct nvx_ub_load - the windows of (b) with one kind of interruption
 * @iters: iterations of the compute loop, summed over the windows.
 * @ns: the windows' length, summed.
 * @ticks: handler runs, summed.
 * @windows: windows measured.
 * @watchdog: windows in which the watchdog had to stop the timer.
 */
struct nvx_ub_load {
	uint64_t iters;
	uint64_t ns;
	uint64_t ticks;
	unsigned int windows;
	unsigned int watchdog;
};

/**
 * struct nvx_ub - one run of bench uintr
 * @ctx: the command's context; the device is open.
 * @iters: wake-ups measured per method and way in (a), requests per
 *	method in (c).
 * @window_ns: the length of one measuring window in (b).
 * @rounds: rounds of (b): every window once per period.
 * @cpu: the CPUs of thread A (the command's) and thread B.
 * @same_cpu: both are the same: the only CPU this process may use.
 * @samples: room for @iters samples.
 * @lat: the results of (a), per method and way.
 * @react: the results of (c), per method.
 * @react_skip: why (c) measured nothing, or NULL.
 * @base: the baseline windows of (b), without interruption.
 * @base_min: the slowest baseline window, iterations per second.
 * @base_max: the fastest.
 * @load: the results of (b), per period and kind of interruption.
 * @deliver_sends: calls per kind and round of (d).
 * @deliver: (d): per kind of call, the least time a round of them took.
 */
struct nvx_ub {
	struct nvx_ctx *ctx;
	unsigned int iters;
	uint64_t window_ns;
	unsigned int rounds;
	int cpu[2];
	bool same_cpu;
	uint64_t *samples;
	struct nvx_ub_stat lat[NVX_UM_COUNT][NVX_UB_MODES];
	struct nvx_ub_stat react[NVX_UR_COUNT];
	const char *react_skip;
	struct nvx_ub_load base;
	double base_min;
	double base_max;
	struct nvx_ub_load load[NVX_UB_NR_PERIODS][NVX_UK_COUNT];
	uint32_t deliver_sends;
	uint64_t deliver[NVX_UD_COUNT];
};

/* The calling thread's id. */
pid_t nvx_ub_gettid(void);
/* Sort @v (@n > 0 values) and sum it up into @s. */
void nvx_ub_stat(uint64_t *v, unsigned int n, struct nvx_ub_stat *s);
/* (c): every method; the results in @ub->react. */
int nvx_ub_react(struct nvx_ub *ub);
/* (b): every window of every round; the results in @ub->base, ->load. */
int nvx_ub_preempt(struct nvx_ub *ub);
/* (d): every kind of send in every round; the results in @ub->deliver. */
int nvx_ub_deliver(struct nvx_ub *ub);
/* (d): nanoseconds per call of @kind. */
double nvx_ub_deliver_ns(const struct nvx_ub *ub, int kind);
/* (d): nanoseconds per delivery, the signal's or nvx's. */
double nvx_ub_delivery_ns(const struct nvx_ub *ub, bool signal);

#endif /* _NVX_BENCH_UINTR_H */
