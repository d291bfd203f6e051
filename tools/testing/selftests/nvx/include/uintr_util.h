/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the nvx selftest group "uintr" (lib/uintr_util.c).
 *
 * Receivers register a handler through tools/nvx/lib/nvx_uintr.h; the
 * handler here only counts and records what it saw (general registers
 * only: atomics, stores, the library's raw send). Every test runs in a
 * process of its own, so the record starts zeroed. Also: signal
 * counting, time, CPUs, the ioctl wrappers, fd passing and the threads
 * that send, block and wait for the tests.
 */
#ifndef NVX_UINTR_UTIL_H
#define NVX_UINTR_UTIL_H

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

#include "nvx_uintr.h"
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
struct uintr_record {
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
};

extern struct uintr_record rec;

/*
 * A receiver spinning in user mode: it counts its rounds of spinning in
 * @ready and spins until @stop (one struct: one asm operand for both).
 */
struct uintr_spin {
	int ready;
	int stop;
};

extern struct uintr_spin spin;
extern __thread int my_tid;
extern __thread struct nvx_uintr_page *my_page;
extern int sig_last;

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

/* A thread of router_thread(). */
struct router {
	int fd;
	int cpu;
	pid_t tid;
	int err;
	int ready;
};

NVX_UINTR_HANDLER void on_uintr(struct nvx_uintr_frame *f,
				uint64_t vector);
__attribute__((naked, used)) void trap_entry(void);
int catch_signal(int sig);
int signals(void);
int tgkill_tid(pid_t tid, int sig);
uint64_t now_ns(void);
void spin_ns(uint64_t ns);
void spin_syscalls_ns(uint64_t ns);
uint64_t handled(void);
uint64_t handled_vec(unsigned int vector);
int wait_handled(uint64_t n, uint64_t ns, bool syscalls);
int wait_vec(unsigned int vector, uint64_t n, uint64_t ns,
	     bool syscalls);
int pin_cpu(int cpu);
int two_cpus(int *a, int *b);
uint64_t exec_mapping(uint64_t addr);
int do_register(int fd, void *stack, size_t size, uint32_t flags);
int do_unregister(int fd);
int do_unregister_raw(int fd);
int do_vector(int fd, uint32_t vector, int *vfd);
int do_del(int fd, uint32_t index);
int do_send_many(int fd, const uint32_t *indices, uint32_t count,
		 uint32_t *sent);
int do_wait(int fd, uint64_t timeout_ns);
int do_timer(int fd, uint32_t vector, uint64_t first_ns,
	     uint64_t period_ns);
int do_signal(int fd, uint32_t signo, uint32_t vector);
void *kicker_thread(void *arg);
int start_blocker(pthread_t *t, struct blocker *b);
bool blocker_done(struct blocker *b);
int join_blocker(pthread_t t, struct blocker *b, int pipe_w,
		 uint64_t ns);
void *waiter_thread(void *arg);
void *router_thread(void *arg);
int wait_flag(const int *flag);

#endif /* NVX_UINTR_UTIL_H */
