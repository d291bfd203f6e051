// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: user interrupts (include/uapi/nvx/uintr.h).
 *
 *   uintr ping [--count N]	two threads on two CPUs send each other
 *				vectors: a ping, and the handler's answer
 *
 * The helpers at the top (nvx_uintr_rx_register() and friends, declared
 * in nvxtool.h) are shared with bench.c. This is the one file that
 * includes lib/nvx_uintr.h: the library keeps its per-thread state in the
 * file that includes it, so every thread registers, masks and unmasks
 * through the functions here.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nvx/uintr.h>

#include "nvxtool.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NVX_HAVE_UINTR_LIB	1
#include "lib/nvx_uintr.h"
#else
#define NVX_HAVE_UINTR_LIB	0	/* the library needs x86-64 GCC */
#endif

#define NVX_NSEC_PER_SEC	1000000000ULL
#define NVX_NSEC_PER_MSEC	1000000ULL
#define NVX_NSEC_PER_USEC	1000ULL
/* The longest single NVX_IOC_UINTR_WAIT, so that a quit flag is seen. */
#define NVX_UINTR_WAIT_SLICE	(100 * NVX_NSEC_PER_MSEC)

/* ------------------------------------------------------------- helpers */

#if NVX_HAVE_UINTR_LIB

static __thread struct nvx_uintr_rx *nvx_rx_self;

/* ioctl() as a raw system call: general registers only, for the handler. */
static inline NVX_UINTR_HANDLER long nvx_raw_ioctl(int fd, unsigned long req,
						   void *arg)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_ioctl), "D"((long)fd), "S"((long)req),
			   "d"(arg)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * The counting handler (struct nvx_uintr_rx). General registers only:
 * atomics and raw system calls, nothing else.
 */
static NVX_UINTR_HANDLER void nvx_rx_handler(struct nvx_uintr_frame *frame,
					     uint64_t vector)
{
	struct nvx_uintr_rx *rx = nvx_rx_self;
	struct nvx_uintr_timer off = { 0, 0, 0, 0 };
	uint32_t d;

	if (!rx)
		return;
	if (vector == NVX_UINTR_RX_STOP) {
		__atomic_store_n(&rx->stop, 1, __ATOMIC_SEQ_CST);
		return;
	}
	__atomic_add_fetch(&rx->hits, 1, __ATOMIC_SEQ_CST);
	if (rx->reply >= 0 && nvx_uintr_send(rx->nvx_fd, rx->reply))
		__atomic_add_fetch(&rx->reply_errors, 1, __ATOMIC_RELAXED);

	/* another thread asks to stop this thread's timer run @armed */
	d = __atomic_load_n(&rx->disarm, __ATOMIC_ACQUIRE);
	if (d && d == __atomic_load_n(&rx->armed, __ATOMIC_ACQUIRE) &&
	    d != __atomic_load_n(&rx->disarmed, __ATOMIC_RELAXED) &&
	    !nvx_raw_ioctl(rx->nvx_fd, NVX_IOC_UINTR_TIMER, &off))
		__atomic_store_n(&rx->disarmed, d, __ATOMIC_RELEASE);
}

int nvx_uintr_rx_register(int nvx_fd, struct nvx_uintr_rx *rx)
{
	int ret;

	if (nvx_rx_self)
		return -EBUSY;
	rx->nvx_fd = nvx_fd;
	nvx_rx_self = rx;
	ret = nvx_uintr_register_handler(nvx_fd, nvx_rx_handler, NULL, 0, 0);
	if (ret < 0) {
		nvx_rx_self = NULL;
		return ret;
	}
	return 0;
}

int nvx_uintr_rx_unregister(int nvx_fd)
{
	struct nvx_uintr_page *p = nvx_uintr_page();
	int ret;

	if (!nvx_rx_self)
		return -ENOENT;
	/* masked, the kernel delivers no more: the count is final */
	nvx_uintr_clui();
	if (p)
		nvx_rx_self->kernel_delivered =
			__atomic_load_n(&p->delivered, __ATOMIC_SEQ_CST);
	ret = nvx_uintr_unregister_handler(nvx_fd);
	nvx_rx_self = NULL;
	return ret;
}

static bool nvx_rx_done(const struct nvx_uintr_rx *rx, uint64_t target,
			const int *quit)
{
	return __atomic_load_n(&rx->hits, __ATOMIC_ACQUIRE) >= target ||
	       __atomic_load_n(&rx->stop, __ATOMIC_ACQUIRE) ||
	       (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE));
}

int nvx_uintr_rx_wait(int nvx_fd, uint64_t target, const int *quit,
		      uint64_t timeout_ns)
{
	const struct nvx_uintr_rx *rx = nvx_rx_self;
	struct nvx_uintr_wait w = { 0, 0, 0 };
	uint64_t now, end;
	int ret = 0;

	if (!rx)
		return -ENOENT;
	now = nvx_now_ns();
	end = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
	/*
	 * Masked, a vector that comes between the check and the wait stays
	 * pending, and the wait returns at once; unmasking delivers it.
	 */
	nvx_uintr_clui();
	while (!nvx_rx_done(rx, target, quit)) {
		now = nvx_now_ns();
		if (now >= end) {
			ret = -ETIMEDOUT;
			break;
		}
		w.timeout_ns = end - now < NVX_UINTR_WAIT_SLICE ?
			       end - now : NVX_UINTR_WAIT_SLICE;
		if (ioctl(nvx_fd, NVX_IOC_UINTR_WAIT, &w) &&
		    errno != ETIMEDOUT && errno != EINTR) {
			ret = -errno;
			break;
		}
		nvx_uintr_stui();
		nvx_uintr_clui();
	}
	nvx_uintr_stui();
	return ret;
}

#else /* !NVX_HAVE_UINTR_LIB */

int nvx_uintr_rx_register(int nvx_fd, struct nvx_uintr_rx *rx)
{
	return -EOPNOTSUPP;
}

int nvx_uintr_rx_unregister(int nvx_fd)
{
	return -EOPNOTSUPP;
}

int nvx_uintr_rx_wait(int nvx_fd, uint64_t target, const int *quit,
		      uint64_t timeout_ns)
{
	return -EOPNOTSUPP;
}

#endif /* NVX_HAVE_UINTR_LIB */

int nvx_uintr_vec_new(int nvx_fd, uint32_t vector, int *fd)
{
	struct nvx_uintr_vector_fd v = { .vector = vector };

	if (ioctl(nvx_fd, NVX_IOC_UINTR_VECTOR_FD, &v))
		return -errno;
	*fd = v.fd;
	return 0;
}

int nvx_uintr_sender_new(int nvx_fd, int vector_fd, uint32_t *index)
{
	struct nvx_uintr_sender s = { .vector_fd = vector_fd };

	if (ioctl(nvx_fd, NVX_IOC_UINTR_ADD_SENDER, &s))
		return -errno;
	*index = s.index;
	return 0;
}

int nvx_uintr_sender_free(int nvx_fd, uint32_t index)
{
	struct nvx_uintr_sender s = { .index = index };

	return ioctl(nvx_fd, NVX_IOC_UINTR_DEL_SENDER, &s) ? -errno : 0;
}

int nvx_uintr_post(int nvx_fd, uint32_t index)
{
	struct nvx_uintr_send s = { .index = index };

	return ioctl(nvx_fd, NVX_IOC_UINTR_SEND, &s) ? -errno : 0;
}

int nvx_uintr_timer_set(int nvx_fd, uint32_t vector, uint64_t period_ns)
{
	struct nvx_uintr_timer t = {
		.vector = vector,
		.period_ns = period_ns,
	};

	return ioctl(nvx_fd, NVX_IOC_UINTR_TIMER, &t) ? -errno : 0;
}

/* Where nvx says more than strerror(): per request (0: any) and errno. */
static const struct {
	unsigned long req;
	int err;
	const char *why;
} nvx_uintr_why[] = {
	{ 0, ENOTTY,
	  "the running kernel has no nvx user interrupts (CONFIG_NVX_UINTR), or an older nvx ABI" },
	/* 64-bit callers only, and so only nvxtool with the library */
	{ 0, EOPNOTSUPP,
	  "this nvxtool was built without lib/nvx_uintr.h (x86-64 GCC only)" },
	{ NVX_IOC_UINTR_REGISTER, EBUSY, "the thread has a handler already" },
	{ NVX_IOC_UINTR_VECTOR_FD, ENOENT, "the thread has no handler" },
	{ NVX_IOC_UINTR_WAIT, ENOENT, "the thread has no handler" },
	{ NVX_IOC_UINTR_TIMER, ENOENT, "the thread has no handler" },
	{ NVX_IOC_UINTR_ADD_SENDER, ENOSPC,
	  "the process's sender table is full" },
	{ NVX_IOC_UINTR_SEND, ENOENT, "an empty sender table entry" },
	{ NVX_IOC_UINTR_SEND, EPIPE, "the vector fd was closed" },
	{ NVX_IOC_UINTR_SEND, ESRCH,
	  "the receiver exited, exec'd or unregistered" },
};

const char *nvx_uintr_strerror(unsigned long req, int err)
{
	size_t i;

	for (i = 0; i < NVX_ARRAY_SIZE(nvx_uintr_why); i++)
		if (nvx_uintr_why[i].err == err &&
		    (!nvx_uintr_why[i].req || nvx_uintr_why[i].req == req))
			return nvx_uintr_why[i].why;
	return strerror(err);
}

int nvx_two_cpus(int cpu[2])
{
	size_t size, ncpus = CPU_SETSIZE;
	cpu_set_t *set;
	size_t i;
	int n = 0;

	/* the kernel wants a mask as large as its own: grow until it fits */
	for (;;) {
		set = CPU_ALLOC(ncpus);
		if (!set)
			return -ENOMEM;
		size = CPU_ALLOC_SIZE(ncpus);
		if (!sched_getaffinity(0, size, set))
			break;
		CPU_FREE(set);
		if (errno != EINVAL || ncpus >= 1U << 20)
			return -errno;
		ncpus *= 2;
	}
	for (i = 0; i < ncpus && n < 2; i++)
		if (CPU_ISSET_S(i, size, set))
			cpu[n++] = i;
	CPU_FREE(set);
	if (!n)
		return -ENOENT;
	if (n == 1)
		cpu[1] = cpu[0];
	return n;
}

int nvx_pin_self(int cpu)
{
	cpu_set_t *set;
	size_t size;
	int ret = 0;

	if (cpu < 0)
		return -EINVAL;
	set = CPU_ALLOC(cpu + 1);
	if (!set)
		return -ENOMEM;
	size = CPU_ALLOC_SIZE(cpu + 1);
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	if (sched_setaffinity(0, size, set))	/* 0: the calling thread */
		ret = -errno;
	CPU_FREE(set);
	return ret;
}

/* ---------------------------------------------------------------- ping */

#define NVX_PING_COUNT		10
#define NVX_PING_MAX_COUNT	1000000
/* how long a ping may take to be answered, also under emulation */
#define NVX_PING_TIMEOUT	(5 * NVX_NSEC_PER_SEC)
#define NVX_PING_READY_TIMEOUT	(10 * NVX_NSEC_PER_SEC)
/* how long A waits for an answer too many at the end */
#define NVX_PING_LATE		(20 * NVX_NSEC_PER_MSEC)

/**
 * struct nvx_ping - the two threads of uintr ping
 * @fd: the nvx device.
 * @cpu: the CPUs of thread A (the command's) and thread B.
 * @a: A's handler: counts B's answers.
 * @b: B's handler: counts pings and answers each through A's vector.
 * @b_vec: B's vector fds: 0 for pings, NVX_UINTR_RX_STOP to end.
 * @b_ready: B: 1 when registered with its vectors made, -errno if not.
 * @b_req: B: the request that failed.
 * @b_err: B: -errno of a wait that failed, else 0.
 * @quit: A: B must return.
 */
struct nvx_ping {
	int fd;
	int cpu[2];
	struct nvx_uintr_rx a;
	struct nvx_uintr_rx b;
	int b_vec[2];
	int b_ready;
	unsigned long b_req;
	int b_err;
	int quit;
};

static void *nvx_ping_b(void *arg)
{
	struct nvx_ping *p = arg;
	struct nvx_uintr_wait w = { .timeout_ns = NVX_UINTR_WAIT_SLICE };
	int err;

	nvx_pin_self(p->cpu[1]);
	err = nvx_uintr_rx_register(p->fd, &p->b);
	if (err) {
		p->b_req = NVX_IOC_UINTR_REGISTER;
		__atomic_store_n(&p->b_ready, err, __ATOMIC_RELEASE);
		return NULL;
	}
	err = nvx_uintr_vec_new(p->fd, 0, &p->b_vec[0]);
	if (!err)
		err = nvx_uintr_vec_new(p->fd, NVX_UINTR_RX_STOP,
					&p->b_vec[1]);
	if (err) {
		p->b_req = NVX_IOC_UINTR_VECTOR_FD;
		nvx_uintr_rx_unregister(p->fd);
		__atomic_store_n(&p->b_ready, err, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&p->b_ready, 1, __ATOMIC_RELEASE);

	/*
	 * Unmasked: the kernel enters the handler on the way back from the
	 * wait, or, when a ping comes while B is in user mode, at once.
	 */
	while (!__atomic_load_n(&p->b.stop, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE)) {
		if (ioctl(p->fd, NVX_IOC_UINTR_WAIT, &w) &&
		    errno != ETIMEDOUT && errno != EINTR) {
			p->b_err = -errno;
			break;
		}
	}
	nvx_uintr_rx_unregister(p->fd);
	return NULL;
}

/* Wait until thread B is ready: 0, or -errno (B's, or -ETIMEDOUT). */
static int nvx_ping_wait_ready(const int *ready)
{
	struct timespec ms = { 0, NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + NVX_PING_READY_TIMEOUT;
	int r;

	while (!(r = __atomic_load_n(ready, __ATOMIC_ACQUIRE))) {
		if (nvx_now_ns() > end)
			return -ETIMEDOUT;
		nanosleep(&ms, NULL);
	}
	return r < 0 ? r : 0;
}

/**
 * struct nvx_ping_result - what uintr ping reports
 * @count: pings asked for.
 * @sent: pings sent.
 * @delivered: pings B's handler ran for.
 * @answered: answers A's handler ran for.
 * @b_total: vectors B's handler ran for: @delivered and the stop.
 * @b_kernel: of @b_total, those the kernel delivered (the others the
 *	library took when B unmasked).
 * @reply_errors: answers B's handler could not send.
 * @rtt_sum: the sum of the round trips of the answered pings, ns.
 * @rtt_min: the fastest, ns.
 * @rtt_max: the slowest, ns.
 */
struct nvx_ping_result {
	uint64_t count;
	uint64_t sent;
	uint64_t delivered;
	uint64_t answered;
	uint64_t b_total;
	uint64_t b_kernel;
	uint64_t reply_errors;
	uint64_t rtt_sum;
	uint64_t rtt_min;
	uint64_t rtt_max;
};

static void nvx_ping_print(struct nvx_ctx *ctx, const struct nvx_ping *p,
			   const struct nvx_ping_result *r, int ncpus,
			   bool ok)
{
	double mean = r->answered ? (double)r->rtt_sum / r->answered : 0;
	struct nvx_json *j = &ctx->js;

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "count", r->count);
		nvx_json_array_begin(j, "cpus");
		nvx_json_s64(j, NULL, p->cpu[0]);
		nvx_json_s64(j, NULL, p->cpu[1]);
		nvx_json_end(j);
		nvx_json_bool(j, "same_cpu", p->cpu[0] == p->cpu[1]);
		nvx_json_u64(j, "sent", r->sent);
		nvx_json_u64(j, "delivered", r->delivered);
		nvx_json_u64(j, "answered", r->answered);
		nvx_json_u64(j, "kernel_delivered", r->b_kernel);
		nvx_json_u64(j, "reply_errors", r->reply_errors);
		nvx_json_bool(j, "exactly_once", ok);
		if (r->answered) {
			nvx_json_object_begin(j, "round_trip_us");
			nvx_json_double(j, "mean", mean / NVX_NSEC_PER_USEC);
			nvx_json_double(j, "min", (double)r->rtt_min /
					NVX_NSEC_PER_USEC);
			nvx_json_double(j, "max", (double)r->rtt_max /
					NVX_NSEC_PER_USEC);
			nvx_json_end(j);
		} else {
			nvx_json_null(j, "round_trip_us");
		}
		nvx_json_end(j);
		return;
	}

	if (p->cpu[0] == p->cpu[1])
		printf("uintr ping: threads A and B both on CPU %d (%s)\n",
		       p->cpu[0], ncpus < 0 ? "CPUs unknown" :
		       "this process may run on one CPU only");
	else
		printf("uintr ping: thread A on CPU %d, thread B on CPU %d\n",
		       p->cpu[0], p->cpu[1]);
	printf("A sends pings to B's vector 0; B's handler answers each through A's vector 0\n");
	printf("sent %llu of %llu, delivered %llu, answered %llu: %s\n",
	       (unsigned long long)r->sent, (unsigned long long)r->count,
	       (unsigned long long)r->delivered,
	       (unsigned long long)r->answered,
	       ok ? "every ping delivered exactly once" :
	       "NOT every ping delivered exactly once");
	printf("vectors to B (pings, stop): %llu delivered by the kernel, %llu on unmasking\n",
	       (unsigned long long)r->b_kernel,
	       (unsigned long long)(r->b_total > r->b_kernel ?
				    r->b_total - r->b_kernel : 0));
	if (r->reply_errors)
		printf("answers B's handler could not send: %llu\n",
		       (unsigned long long)r->reply_errors);
	if (r->answered)
		printf("round trip (this machine): mean %.1f us, min %.1f us, max %.1f us\n",
		       mean / NVX_NSEC_PER_USEC,
		       (double)r->rtt_min / NVX_NSEC_PER_USEC,
		       (double)r->rtt_max / NVX_NSEC_PER_USEC);
}

static const struct option nvx_ping_opts[] = {
	{ "count", required_argument, NULL, 'c' },
	{ }
};

static int nvx_ping_parse(struct nvx_ctx *ctx, int argc, char **argv,
			  uint64_t *count)
{
	unsigned long long n;
	int c;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", nvx_ping_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (nvx_parse_uint(optarg, NVX_PING_MAX_COUNT, &n) || !n)
				return nvx_usage_error(ctx,
						       "--count: '%s' is not a number from 1 to %u",
						       optarg, NVX_PING_MAX_COUNT);
			*count = n;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind]);
	return NVX_EXIT_OK;
}

/* Report @req failing with -@err for @who; NVX_EXIT_FAIL. */
static int nvx_ping_fail(struct nvx_ctx *ctx, const char *who,
			 unsigned long req, const char *req_name, int err)
{
	nvx_err("%s: %s: %s: %s", ctx->path, who, req_name,
		nvx_uintr_strerror(req, -err));
	return NVX_EXIT_FAIL;
}

/* The ping-pong itself, once both threads are ready. */
static int nvx_ping_run(struct nvx_ctx *ctx, struct nvx_ping *p,
			struct nvx_ping_result *r, uint32_t to_b)
{
	uint64_t i, t0, rtt;
	int err;

	r->rtt_min = UINT64_MAX;
	for (i = 0; i < r->count; i++) {
		t0 = nvx_now_ns();
		err = nvx_uintr_post(p->fd, to_b);
		if (err)
			return nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_SEND,
					     "NVX_IOC_UINTR_SEND", err);
		r->sent++;
		err = nvx_uintr_rx_wait(p->fd, i + 1, NULL, NVX_PING_TIMEOUT);
		rtt = nvx_now_ns() - t0;
		if (err == -ETIMEDOUT) {
			nvx_err("%s: ping %llu: no answer within %llu s (B's handler ran %llu times)",
				ctx->path, (unsigned long long)i + 1,
				NVX_PING_TIMEOUT / NVX_NSEC_PER_SEC,
				(unsigned long long)__atomic_load_n(&p->b.hits,
								    __ATOMIC_SEQ_CST));
			return NVX_EXIT_FAIL;
		}
		if (err)
			return nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_WAIT,
					     "NVX_IOC_UINTR_WAIT", err);
		r->rtt_sum += rtt;
		if (rtt < r->rtt_min)
			r->rtt_min = rtt;
		if (rtt > r->rtt_max)
			r->rtt_max = rtt;
	}
	return NVX_EXIT_OK;
}

static int cmd_uintr_ping(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_ping p = {
		.cpu = { -1, -1 },
		.a = { .reply = -1 },
		.b = { .reply = -1 },
		.b_vec = { -1, -1 },
	};
	struct nvx_ping_result r = { .count = NVX_PING_COUNT };
	uint32_t to_a = 0, to_b = 0, to_b_stop = 0;
	int ret, err, ncpus, a_vec = -1;
	bool senders[3] = { false, false, false };
	bool started = false, ok;
	pthread_t b;

	ret = nvx_ping_parse(ctx, argc, argv, &r.count);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	p.fd = ctx->fd;

	ncpus = nvx_two_cpus(p.cpu);
	if (ncpus < 0)
		nvx_warn("%s: cannot tell which CPUs to use (%s): not pinning the threads",
			 ctx->path, strerror(-ncpus));
	else
		nvx_pin_self(p.cpu[0]);

	err = nvx_uintr_rx_register(p.fd, &p.a);
	if (err)
		return nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_REGISTER,
				     "NVX_IOC_UINTR_REGISTER", err);
	ret = NVX_EXIT_FAIL;
	err = nvx_uintr_vec_new(p.fd, 0, &a_vec);
	if (err) {
		nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_VECTOR_FD,
			      "NVX_IOC_UINTR_VECTOR_FD", err);
		goto out;
	}
	err = nvx_uintr_sender_new(p.fd, a_vec, &to_a);
	if (err) {
		nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_ADD_SENDER,
			      "NVX_IOC_UINTR_ADD_SENDER", err);
		goto out;
	}
	senders[0] = true;
	p.b.reply = to_a;

	err = pthread_create(&b, NULL, nvx_ping_b, &p);
	if (err) {
		nvx_err("%s: cannot start thread B: %s", ctx->path,
			strerror(err));
		goto out;
	}
	started = true;
	err = nvx_ping_wait_ready(&p.b_ready);
	if (err == -ETIMEDOUT) {
		nvx_err("%s: thread B did not get ready within %llu s",
			ctx->path, NVX_PING_READY_TIMEOUT / NVX_NSEC_PER_SEC);
		goto out;
	}
	if (err) {
		nvx_ping_fail(ctx, "B", p.b_req,
			      p.b_req == NVX_IOC_UINTR_REGISTER ?
			      "NVX_IOC_UINTR_REGISTER" :
			      "NVX_IOC_UINTR_VECTOR_FD", err);
		goto out;
	}
	err = nvx_uintr_sender_new(p.fd, p.b_vec[0], &to_b);
	if (!err) {
		senders[1] = true;
		err = nvx_uintr_sender_new(p.fd, p.b_vec[1], &to_b_stop);
	}
	if (err) {
		nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_ADD_SENDER,
			      "NVX_IOC_UINTR_ADD_SENDER", err);
		goto out;
	}
	senders[2] = true;

	ret = nvx_ping_run(ctx, &p, &r, to_b);

out:
	if (started) {
		__atomic_store_n(&p.quit, 1, __ATOMIC_SEQ_CST);
		if (senders[2])
			nvx_uintr_post(p.fd, to_b_stop);
		pthread_join(b, NULL);
		if (p.b_err) {
			nvx_ping_fail(ctx, "B", NVX_IOC_UINTR_WAIT,
				      "NVX_IOC_UINTR_WAIT", p.b_err);
			ret = NVX_EXIT_FAIL;
		}
	}
	/* an answer too many would come now */
	if (ret == NVX_EXIT_OK)
		nvx_uintr_rx_wait(p.fd, r.count + 1, NULL, NVX_PING_LATE);
	if (senders[2])
		nvx_uintr_sender_free(p.fd, to_b_stop);
	if (senders[1])
		nvx_uintr_sender_free(p.fd, to_b);
	if (senders[0])
		nvx_uintr_sender_free(p.fd, to_a);
	if (p.b_vec[1] >= 0)
		close(p.b_vec[1]);
	if (p.b_vec[0] >= 0)
		close(p.b_vec[0]);
	if (a_vec >= 0)
		close(a_vec);
	nvx_uintr_rx_unregister(p.fd);
	if (!started || p.b_ready < 0)
		return ret;

	r.delivered = __atomic_load_n(&p.b.hits, __ATOMIC_SEQ_CST);
	r.answered = __atomic_load_n(&p.a.hits, __ATOMIC_SEQ_CST);
	r.b_total = r.delivered + __atomic_load_n(&p.b.stop, __ATOMIC_SEQ_CST);
	r.b_kernel = p.b.kernel_delivered;
	r.reply_errors = __atomic_load_n(&p.b.reply_errors, __ATOMIC_SEQ_CST);
	if (!r.answered)
		r.rtt_min = 0;
	ok = r.sent == r.count && r.delivered == r.count &&
	     r.answered == r.count && !r.reply_errors;
	nvx_ping_print(ctx, &p, &r, ncpus, ok);
	if (ret == NVX_EXIT_OK && !ok) {
		fflush(stdout);
		nvx_err("%s: sent %llu pings, B's handler ran %llu times, A's %llu times: expected %llu each",
			ctx->path, (unsigned long long)r.sent,
			(unsigned long long)r.delivered,
			(unsigned long long)r.answered,
			(unsigned long long)r.count);
		ret = NVX_EXIT_FAIL;
	}
	return ret;
}

/* ------------------------------------------------------- command table */

const struct nvx_cmd nvx_uintr_cmds[] = {
	{
		.name = "ping",
		.summary = "ping-pong between two threads through their vectors",
		.usage = "[--count N] [--json]\n"
			 "\n"
			 "Thread A (this one) and thread B, on two different CPUs when the\n"
			 "process may use two, each register a handler\n"
			 "(NVX_IOC_UINTR_REGISTER) and make a vector fd. A sends N pings to\n"
			 "B's vector (NVX_IOC_UINTR_SEND), one at a time; B waits in\n"
			 "NVX_IOC_UINTR_WAIT, and its handler answers every ping through\n"
			 "A's vector. A times each ping until the answer's handler ran.\n"
			 "\n"
			 "  --count N  pings to send (default 10)\n"
			 "\n"
			 "Exit status 0 only when every ping was delivered exactly once and\n"
			 "answered. Round trips are from this machine; under emulation\n"
			 "(QEMU TCG) they are not hardware times. JSON: \"count\", \"cpus\",\n"
			 "\"same_cpu\", \"sent\", \"delivered\", \"answered\",\n"
			 "\"kernel_delivered\" (of the vectors to B, pings and the final\n"
			 "stop, those the kernel delivered rather than the library),\n"
			 "\"reply_errors\", \"exactly_once\", \"round_trip_us\" (\"mean\",\n"
			 "\"min\", \"max\").\n",
		.fn = cmd_uintr_ping,
	},
	{ }
};
