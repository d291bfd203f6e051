// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the object "uintr", user interrupts (include/uapi/nvx/uintr.h).
 *
 *   uintr debug-ping [--count N]	a debug command: two threads on two
 *					CPUs send each other vectors, a ping
 *					and the handler's answer
 *
 * The counting handler and the ioctl wrappers are libnvx's (nvx_uintr.h).
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

/* ---------------------------------------------------------------- ping */

#define NVX_PING_COUNT		10
#define NVX_PING_MAX_COUNT	1000000
/* how long a ping may take to be answered, also under emulation */
#define NVX_PING_TIMEOUT	(5 * NVX_NSEC_PER_SEC)
#define NVX_PING_READY_TIMEOUT	(10 * NVX_NSEC_PER_SEC)
/* how long A waits for an answer too many at the end */
#define NVX_PING_LATE		(20 * NVX_NSEC_PER_MSEC)

/**
 * struct nvx_ping - the two threads of uintr debug-ping
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
	err = nvx_uintr_rx_setup(p->fd, &p->b, p->b_vec, &p->b_req);
	if (err) {
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

/**
 * struct nvx_ping_result - what uintr debug-ping reports
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
		printf("uintr debug-ping: threads A and B both on CPU %d (%s)\n",
		       p->cpu[0], ncpus < 0 ? "CPUs unknown" :
		       "this process may run on one CPU only");
	else
		printf("uintr debug-ping: thread A on CPU %d, thread B on CPU %d\n",
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

/* nvx_getopt()'s handler: @arg is the uint64_t count. */
static int nvx_ping_opt(struct nvx_ctx *ctx, int c, void *arg)
{
	uint64_t *count = arg;
	unsigned long long n;
	int ret;

	if (c != 'c')
		return NVX_OPT_UNKNOWN;
	ret = nvx_opt_num(ctx, "count", optarg, 1, NVX_PING_MAX_COUNT, &n);
	if (!ret)
		*count = n;
	return ret;
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

static int cmd_uintr_debug_ping(struct nvx_ctx *ctx, int argc, char **argv)
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

	ret = nvx_getopt(ctx, argc, argv, nvx_ping_opts, nvx_ping_opt, &r.count);
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
	a_vec = nvx_uintr_vector_fd(p.fd, 0);
	err = a_vec < 0 ? a_vec : 0;
	if (err) {
		nvx_ping_fail(ctx, "A", NVX_IOC_UINTR_VECTOR_FD,
			      "NVX_IOC_UINTR_VECTOR_FD", err);
		goto out;
	}
	err = nvx_uintr_add_sender(p.fd, a_vec);
	to_a = err;
	err = err < 0 ? err : 0;
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
	err = nvx_wait_flag(&p.b_ready, NVX_PING_READY_TIMEOUT);
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
	err = nvx_uintr_add_sender(p.fd, p.b_vec[0]);
	to_b = err;
	err = err < 0 ? err : 0;
	if (!err) {
		senders[1] = true;
		err = nvx_uintr_add_sender(p.fd, p.b_vec[1]);
		to_b_stop = err;
		err = err < 0 ? err : 0;
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
		nvx_uintr_del_sender(p.fd, to_b_stop);
	if (senders[1])
		nvx_uintr_del_sender(p.fd, to_b);
	if (senders[0])
		nvx_uintr_del_sender(p.fd, to_a);
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
		.name = "debug-ping",
		.summary = "debug: ping-pong between two threads through their vectors",
		.usage = "[--count N]\n"
			 "\n"
			 "A debug command, for testing nvx user interrupts end to end.\n"
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
		.fn = cmd_uintr_debug_ping,
	},
	{ }
};
