// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench uvm: user VMs, the in-kernel fast path against the slow path
 * and the endpoint's poller, and the cold start of a VM against fork+exec.
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
#include <poll.h>
#include <sys/wait.h>

#include <nvx/pool.h>
#include <nvx/uvm.h>

#include "bench.h"
#include "nvx_uvm.h"

enum {
	NVX_UVM_OPT_MESSAGES = 0x100,
	NVX_UVM_OPT_RUNS,
	NVX_UVM_OPT_POLL_CPU,
};

/* --poll-cpu: where the poller runs; -1: with the system side */
static int nvx_uvm_poll_cpu = -1;

/* The ways a guest's messages reach the system side, compared. */
enum {
	NVX_UVM_FAST,		/* doorbell handled in the kernel */
	NVX_UVM_SLOW,		/* doorbell exits to the VMM (KICK) */
	NVX_UVM_POLL,		/* the endpoint's SQ poller, no doorbell */
	NVX_UVM_POLL_BUSY,	/* and RECV busy-polls on the system side */
	NVX_UVM_NR_PATHS
};

/* The poller's idle time and RECV's busy-poll time in the bench. */
#define NVX_UVM_BENCH_IDLE_US	NVX_UVM_POLLER_DEF_IDLE_US
#define NVX_UVM_BENCH_BUSY_US	2000

struct nvx_uvm_bench_vm {
	struct nvx_uvm_vm vm;
	int ret;
	int done_fd;		/* written when the vCPU loop returns */
};

/*
 * With two CPUs or more the vCPU runs alone on CPU 0, the system side
 * (and the poller) on CPU 1, on every path: a vCPU thread that shares
 * its CPU is preempted, and each preemption is a VM exit.
 */
static void nvx_uvm_bench_pin(int cpu)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		nvx_pin_self(cpu);
}

static void *nvx_uvm_bench_vcpu(void *arg)
{
	struct nvx_uvm_bench_vm *b = arg;
	uint64_t one = 1;

	nvx_uvm_bench_pin(0);
	b->ret = nvx_uvm_run(&b->vm);
	if (write(b->done_fd, &one, sizeof(one)) < 0)
		b->ret = -errno;
	return NULL;
}

struct nvx_uvm_ping {
	uint64_t ns;		/* launch to exit */
	int64_t user_exits;	/* KVM's userspace_exits */
	int64_t io_exits;	/* KVM's io_exits (every PIO intercept) */
	int64_t exits;		/* KVM's exits (all kinds) */
	int64_t halt_exits;	/* of which the guest's hlt */
	int64_t irq_exits;	/* and host interrupts (ticks, IPIs) */
	uint64_t doorbells;
	uint64_t polled;
};

/*
 * Serve with blocking RECVs (busy polling) until the vCPU loop ends: a
 * timer interrupts RECV (SIGUSR1, no SA_RESTART) every 20 ms to look at
 * done_fd. 0, -ETIMEDOUT after 60 s without a message, or RECV's error.
 */
static int nvx_uvm_bench_serve_blocking(int ep_fd, struct nvx_uvm_serve *sv,
					int done_fd)
{
	struct itimerspec its = { .it_interval.tv_nsec = 20000000,
				  .it_value.tv_nsec = 20000000 };
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SIGUSR1 };
	struct pollfd pfd = { .fd = done_fd, .events = POLLIN };
	uint64_t last = nvx_now_ns();
	struct nvx_uvm_recv r;
	timer_t tm;
	int ret;

	/* glibc 2.36 names it only _sigev_un._tid */
	sev._sigev_un._tid = syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm))
		return -errno;
	timer_settime(tm, 0, &its, NULL);
	for (;;) {
		ret = nvx_uvm_recv(ep_fd, sv, &r, 0);
		if (!ret) {
			nvx_uvm_serve_msg(ep_fd, sv, &r);
			last = nvx_now_ns();
			continue;
		}
		if (ret != -EINTR)
			break;
		if (poll(&pfd, 1, 0) == 1) {
			ret = 0;
			break;
		}
		if (nvx_now_ns() - last > 60000000000ULL) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	timer_delete(tm);
	while (!ret && !nvx_uvm_recv(ep_fd, sv, &r, NVX_UVM_RECV_NONBLOCK))
		nvx_uvm_serve_msg(ep_fd, sv, &r);
	return ret;
}

/* Run `test ping N W` with the default service in this thread. */
static int nvx_uvm_bench_ping(struct nvx_ctx *ctx, const char *image,
			      int path, unsigned int n, unsigned int w,
			      struct nvx_uvm_ping *out)
{
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 1 };
	char ns[16], ws[16], *argv[4];
	struct nvx_uvm_serve sv = { .in_fd = -1, .out_fd = -1, .err_fd = 2 };
	struct nvx_uvm_poller pl = { 0 };
	struct nvx_uvm_opts o = { 0 };
	struct nvx_uvm_bench_vm b = { 0 };
	struct nvx_uvm_status st;
	struct nvx_uvm_recv r;
	struct pollfd pfd[2];
	const char *where;
	pthread_t th;
	uint64_t t0;
	int ret, cpu, finished = 0;

	argv[0] = "test";
	argv[1] = "ping";
	argv[2] = ns;
	argv[3] = ws;
	snprintf(ns, sizeof(ns), "%u", n);
	snprintf(ws, sizeof(ws), "%u", w);
	sv.buf = malloc(NVX_UVM_MAX_BULK);
	if (!sv.buf)
		return -ENOMEM;
	if (ioctl(ctx->fd, NVX_IOC_UVM_ENDPOINT, &ep) < 0) {
		free(sv.buf);
		return -errno;
	}
	/* the poller's CPU must be in our mask when we ask: pin later */
	cpu = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 1 : -1;
	if (nvx_uvm_poll_cpu >= 0)
		cpu = nvx_uvm_poll_cpu;
	if (path >= NVX_UVM_POLL) {
		pl.flags = NVX_UVM_POLLER_SQ;
		if (cpu >= 0) {
			pl.flags |= NVX_UVM_POLLER_CPU;
			pl.cpu = cpu;
		}
		pl.idle_us = NVX_UVM_BENCH_IDLE_US;
		if (path == NVX_UVM_POLL_BUSY)
			pl.recv_busy_us = NVX_UVM_BENCH_BUSY_US;
		ret = nvx_uvm_set_poller(ep.fd, &pl);
		/* a CPU outside our cpuset: an unbound poller, then */
		if (ret == -EINVAL && pl.flags & NVX_UVM_POLLER_CPU) {
			pl.flags &= ~NVX_UVM_POLLER_CPU;
			pl.cpu = 0;
			ret = nvx_uvm_set_poller(ep.fd, &pl);
		}
		if (ret) {
			nvx_err("bench uvm: NVX_UVM_EP_IOC_POLLER: %s",
				strerror(-ret));
			nvx_unpin_self();
			close(ep.fd);
			free(sv.buf);
			return ret;
		}
	}
	nvx_uvm_bench_pin(1);
	b.done_fd = eventfd(0, EFD_CLOEXEC);
	o.image = image;
	o.argc = 4;
	o.argv = argv;
	o.ep_fd = ep.fd;
	o.slow = path == NVX_UVM_SLOW;
	t0 = nvx_now_ns();
	ret = nvx_uvm_create(&b.vm, ctx->fd, &o, &where);
	if (ret) {
		nvx_err("bench uvm: %s: %s", where, strerror(-ret));
		goto out;
	}
	ret = -pthread_create(&th, NULL, nvx_uvm_bench_vcpu, &b);
	if (ret)
		goto out;
	if (path == NVX_UVM_POLL_BUSY) {
		ret = nvx_uvm_bench_serve_blocking(ep.fd, &sv, b.done_fd);
		if (ret) {
			nvx_err("bench uvm: serving with busy polls: %s",
				strerror(-ret));
			b.vm.stop = 1;
			pthread_kill(th, SIGUSR1);
		}
		finished = 1;
	}
	pfd[0].fd = ep.fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = b.done_fd;
	pfd[1].events = POLLIN;
	while (!finished) {
		if (poll(pfd, 2, 60000) <= 0) {
			nvx_err("bench uvm: no progress in 60 s");
			b.vm.stop = 1;
			pthread_kill(th, SIGUSR1);
			finished = 1;
			break;
		}
		if (pfd[1].revents)
			finished = 1;
		while (!nvx_uvm_recv(ep.fd, &sv, &r, NVX_UVM_RECV_NONBLOCK))
			nvx_uvm_serve_msg(ep.fd, &sv, &r);
	}
	pthread_join(th, NULL);
	out->ns = nvx_now_ns() - t0;
	out->user_exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "userspace_exits");
	out->io_exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "io_exits");
	out->exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "exits");
	out->halt_exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "halt_exits");
	out->irq_exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "irq_exits");
	nvx_uvm_status(&b.vm, &st);
	out->doorbells = st.doorbells;
	out->polled = st.polled;
	ret = b.ret;
	if (!ret && b.vm.exit_status) {
		nvx_err("bench uvm: ping exited with %u", b.vm.exit_status);
		ret = -EPROTO;
	} else if (ret) {
		nvx_uvm_report(&b.vm, ret);
	}
out:
	nvx_unpin_self();
	nvx_uvm_destroy(&b.vm);
	close(b.done_fd);
	close(ep.fd);
	free(sv.buf);
	return ret;
}

static void nvx_uvm_nop(int sig)
{
}

struct nvx_uvm_bench {
	unsigned int messages, runs;
	struct nvx_uvm_ping base[NVX_UVM_NR_PATHS], one[NVX_UVM_NR_PATHS];
	struct nvx_uvm_ping many[NVX_UVM_NR_PATHS];
	double exits_per_msg[NVX_UVM_NR_PATHS], io_per_msg[NVX_UVM_NR_PATHS];
	double all_per_msg[NVX_UVM_NR_PATHS], polled_share[NVX_UVM_NR_PATHS];
	double halt_per_msg[NVX_UVM_NR_PATHS], irq_per_msg[NVX_UVM_NR_PATHS];
	double loaded_per_msg[NVX_UVM_NR_PATHS];	/* 32 in flight */
	double rtt_us[NVX_UVM_NR_PATHS], rate[NVX_UVM_NR_PATHS];
	uint64_t *uvm_ns, *host_ns;
	double uvm_p50, uvm_p99, host_p50, host_p99;
};

static int nvx_uvm_bench_cold(struct nvx_uvm_bench *b, const char *hello,
			      const char *host)
{
	char self[PATH_MAX], *uvm_argv[5], *host_argv[2];
	unsigned int i;
	ssize_t len;
	int ret;

	uvm_argv[0] = self;
	uvm_argv[1] = "uvm";
	uvm_argv[2] = "run";
	uvm_argv[3] = (char *)hello;
	uvm_argv[4] = NULL;
	host_argv[0] = (char *)host;
	host_argv[1] = NULL;

	/* nvxtool is built and installed beside nvx-bench */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return -errno;
	self[len] = 0;
	*strrchr(self, '/') = 0;
	if (strlen(self) + sizeof("/nvxtool") > sizeof(self))
		return -ENAMETOOLONG;
	strcat(self, "/nvxtool");
	if (access(self, X_OK)) {
		nvx_err("bench uvm: %s: %s", self, strerror(errno));
		return -errno;
	}
	b->uvm_ns = calloc(b->runs, sizeof(uint64_t));
	b->host_ns = calloc(b->runs, sizeof(uint64_t));
	if (!b->uvm_ns || !b->host_ns)
		return -ENOMEM;
	for (i = 0; i < b->runs; i++) {
		ret = nvx_bench_first_byte(uvm_argv, &b->uvm_ns[i]);
		if (ret) {
			nvx_err("bench uvm: uvm run %s: %s", hello,
				strerror(-ret));
			return ret;
		}
		ret = nvx_bench_first_byte(host_argv, &b->host_ns[i]);
		if (ret) {
			nvx_err("bench uvm: %s: %s", host, strerror(-ret));
			return ret;
		}
	}
	qsort(b->uvm_ns, b->runs, sizeof(uint64_t), nvx_bench_cmp_u64);
	qsort(b->host_ns, b->runs, sizeof(uint64_t), nvx_bench_cmp_u64);
	b->uvm_p50 = nvx_bench_pct_ms(b->uvm_ns, b->runs, 0.5);
	b->uvm_p99 = nvx_bench_pct_ms(b->uvm_ns, b->runs, 0.99);
	b->host_p50 = nvx_bench_pct_ms(b->host_ns, b->runs, 0.5);
	b->host_p99 = nvx_bench_pct_ms(b->host_ns, b->runs, 0.99);
	return 0;
}

/* The "cold_start" of the JSON, up to its ratio. */
static const struct nvx_json_field nvx_uvm_bench_cold_fields[] = {
	NVX_JSON_UINT(struct nvx_uvm_bench, runs),
	NVX_JSON_DOUBLE(struct nvx_uvm_bench, "uvm_p50_ms", uvm_p50),
	NVX_JSON_DOUBLE(struct nvx_uvm_bench, "uvm_p99_ms", uvm_p99),
	NVX_JSON_DOUBLE(struct nvx_uvm_bench, "host_p50_ms", host_p50),
	NVX_JSON_DOUBLE(struct nvx_uvm_bench, "host_p99_ms", host_p99),
	{ }
};

static void nvx_uvm_bench_print(struct nvx_ctx *ctx, struct nvx_uvm_bench *b)
{
	static const char *const path[NVX_UVM_NR_PATHS] = {
		"fast", "slow", "poll", "poll_busy",
	};
	struct nvx_json *j = &ctx->js;
	int s;

	if (ctx->json) {
		nvx_json_init(j, stdout);
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "messages", b->messages);
		for (s = 0; s < NVX_UVM_NR_PATHS; s++) {
			nvx_json_object_begin(j, path[s]);
			nvx_json_double(j, "userspace_exits_per_msg",
					b->exits_per_msg[s]);
			nvx_json_double(j, "io_exits_per_msg", b->io_per_msg[s]);
			nvx_json_double(j, "exits_per_msg", b->all_per_msg[s]);
			nvx_json_double(j, "exits_per_msg_32",
					b->loaded_per_msg[s]);
			nvx_json_double(j, "halt_exits_per_msg",
					b->halt_per_msg[s]);
			nvx_json_double(j, "irq_exits_per_msg",
					b->irq_per_msg[s]);
			nvx_json_double(j, "polled_share", b->polled_share[s]);
			nvx_json_double(j, "rtt_us", b->rtt_us[s]);
			nvx_json_double(j, "msgs_per_s", b->rate[s]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "rtt_slow_over_fast",
				b->rtt_us[1] / b->rtt_us[0]);
		nvx_json_double(j, "rate_fast_over_slow",
				b->rate[0] / b->rate[1]);
		nvx_json_double(j, "exits_per_msg_polled",
				b->loaded_per_msg[NVX_UVM_POLL]);
		nvx_json_double(j, "rtt_fast_over_polled",
				b->rtt_us[NVX_UVM_FAST] /
				b->rtt_us[NVX_UVM_POLL]);
		nvx_json_double(j, "rtt_fast_over_polled_busy",
				b->rtt_us[NVX_UVM_FAST] /
				b->rtt_us[NVX_UVM_POLL_BUSY]);
		nvx_json_object_begin(j, "cold_start");
		nvx_json_fields(j, b, nvx_uvm_bench_cold_fields);
		nvx_json_double(j, "uvm_over_host_p50",
				b->uvm_p50 / b->host_p50);
		nvx_json_end(j);
		nvx_json_double(j, "headline", b->exits_per_msg[0]);
		nvx_json_end(j);
		fputc('\n', stdout);
		return;
	}
	printf("messages: %u ping-pongs (IPC, 1 in flight) and %u with 32 in flight\n",
	       b->messages, b->messages);
	printf("%-9s %14s %12s %10s %7s %10s %12s\n", "path",
	       "user exits/msg", "io exits/msg", "exits/msg", "polled",
	       "rtt us", "msgs/s (32)");
	for (s = 0; s < NVX_UVM_NR_PATHS; s++)
		printf("%-9s %14.4f %12.4f %10.4f %7.4f %10.1f %12.0f\n",
		       path[s], b->exits_per_msg[s], b->io_per_msg[s],
		       b->all_per_msg[s], b->polled_share[s], b->rtt_us[s],
		       b->rate[s]);
	printf("round trip slow/fast: %.2f   throughput fast/slow: %.2f\n",
	       b->rtt_us[1] / b->rtt_us[0], b->rate[0] / b->rate[1]);
	printf("round trip fast/poll: %.2f   fast/poll_busy: %.2f\n",
	       b->rtt_us[NVX_UVM_FAST] / b->rtt_us[NVX_UVM_POLL],
	       b->rtt_us[NVX_UVM_FAST] / b->rtt_us[NVX_UVM_POLL_BUSY]);
	printf("exits per message polled, 32 in flight: %.4f\n",
	       b->loaded_per_msg[NVX_UVM_POLL]);
	printf("%-9s %10s %10s %10s %12s\n", "path", "hlt/msg", "irq/msg",
	       "other/msg", "exits (32)");
	for (s = 0; s < NVX_UVM_NR_PATHS; s++)
		printf("%-9s %10.4f %10.4f %10.4f %12.4f\n", path[s],
		       b->halt_per_msg[s], b->irq_per_msg[s],
		       b->all_per_msg[s] - b->halt_per_msg[s] -
		       b->irq_per_msg[s] - b->io_per_msg[s],
		       b->loaded_per_msg[s]);
	printf("cold start to first byte, %u runs:\n", b->runs);
	printf("  uvm run hello               p50 %8.2f ms  p99 %8.2f ms\n",
	       b->uvm_p50, b->uvm_p99);
	printf("  fork+exec static host hello p50 %8.2f ms  p99 %8.2f ms\n",
	       b->host_p50, b->host_p99);
	printf("  ratio of the p50s: %.2f\n", b->uvm_p50 / b->host_p50);
	printf("headline (fast path userspace exits per message): %.4f\n",
	       b->exits_per_msg[0]);
}

#define NVX_UVM_BENCH_POOL	(16ULL << 20)

/**
 * cmd_bench_uvm() - nvx-bench uvm
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_uvm(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "messages", required_argument, NULL, NVX_UVM_OPT_MESSAGES },
		{ "runs", required_argument, NULL, NVX_UVM_OPT_RUNS },
		{ "poll-cpu", required_argument, NULL, NVX_UVM_OPT_POLL_CPU },
		{ }
	};
	struct sigaction sa = { .sa_handler = nvx_uvm_nop };
	struct nvx_uvm_bench b = { .messages = 10000, .runs = 100 };
	struct nvx_pool_resize grow = { 0 };
	char test[PATH_MAX], hello[PATH_MAX], host[PATH_MAX];
	unsigned long long v;
	int c, s, ret;
	double d;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case NVX_UVM_OPT_MESSAGES:
			if (nvx_parse_uint(optarg, 10000000, &v) || !v)
				return nvx_usage_error(ctx,
					"bad --messages: %s", optarg);
			b.messages = v;
			break;
		case NVX_UVM_OPT_RUNS:
			if (nvx_parse_uint(optarg, 100000, &v) || !v)
				return nvx_usage_error(ctx, "bad --runs: %s",
						       optarg);
			b.runs = v;
			break;
		case NVX_UVM_OPT_POLL_CPU:
			if (nvx_parse_uint(optarg, CPU_SETSIZE - 1, &v))
				return nvx_usage_error(ctx,
					"bad --poll-cpu: %s", optarg);
			nvx_uvm_poll_cpu = v;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument: %s",
				       argv[optind]);
	if (nvx_uvm_find_image("test", test, sizeof(test)) ||
	    nvx_uvm_find_image("hello", hello, sizeof(hello)) ||
	    nvx_uvm_find_image("hello-host", host, sizeof(host))) {
		nvx_err("bench uvm: test, hello or hello-host not found (set NVX_GUEST_DIR)");
		return NVX_EXIT_FAIL;
	}
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	/* room for two VMs at a time, given back at the end */
	grow.node = NVX_NODE_ANY;
	grow.bytes = NVX_UVM_BENCH_POOL;
	ret = nvx_ioctl(ctx, NVX_IOC_POOL_GROW, &grow, "NVX_IOC_POOL_GROW");
	if (ret)
		return ret;
	sigaction(SIGUSR1, &sa, NULL);

	for (s = 0; s < NVX_UVM_NR_PATHS; s++) {
		ret = nvx_uvm_bench_ping(ctx, test, s, 0, 1, &b.base[s]);
		if (!ret)
			ret = nvx_uvm_bench_ping(ctx, test, s, b.messages, 1,
						 &b.one[s]);
		if (!ret)
			ret = nvx_uvm_bench_ping(ctx, test, s, b.messages, 32,
						 &b.many[s]);
		if (ret) {
			nvx_bench_shrink(ctx, grow.done, "uvm");
			return NVX_EXIT_FAIL;
		}
		b.exits_per_msg[s] = (double)(b.one[s].user_exits -
					      b.base[s].user_exits) / b.messages;
		b.io_per_msg[s] = (double)(b.one[s].io_exits -
					   b.base[s].io_exits) / b.messages;
		b.all_per_msg[s] = (double)(b.one[s].exits -
					    b.base[s].exits) / b.messages;
		b.loaded_per_msg[s] = (double)(b.many[s].exits -
					       b.base[s].exits) / b.messages;
		b.halt_per_msg[s] = (double)(b.one[s].halt_exits -
					     b.base[s].halt_exits) / b.messages;
		b.irq_per_msg[s] = (double)(b.one[s].irq_exits -
					    b.base[s].irq_exits) / b.messages;
		b.polled_share[s] = (double)(b.one[s].polled -
					     b.base[s].polled) / b.messages;
		d = (double)(b.one[s].ns - b.base[s].ns);
		b.rtt_us[s] = d / b.messages / 1e3;
		d = (double)(b.many[s].ns - b.base[s].ns);
		b.rate[s] = d > 0 ? b.messages / (d / 1e9) : 0;
	}
	ret = nvx_uvm_bench_cold(&b, hello, host);
	if (!ret)
		nvx_uvm_bench_print(ctx, &b);
	free(b.uvm_ns);
	free(b.host_ns);
	nvx_bench_shrink(ctx, grow.done, "uvm");
	return ret ? NVX_EXIT_FAIL : NVX_EXIT_OK;
}

const char nvx_bench_uvm_usage[] =
	"[--messages N] [--runs N] [--poll-cpu CPU]\n"
	"\n"
	"User VMs: four ways to the system side, in the same run, with the\n"
	"guest image `test` and this process as the system side (its ping\n"
	"service): fast (the doorbell handled in the kernel), slow (doorbells\n"
	"exit to the VMM, which passes them on with NVX_UVM_CHAN_IOC_KICK),\n"
	"poll (the endpoint's SQ poller, idle 2000 us: no doorbell while it is\n"
	"awake) and poll_busy (the poller, and blocking RECVs that busy-poll\n"
	"2000 us on the system side). With two CPUs or more the vCPU runs\n"
	"alone on CPU 0, the system side on CPU 1, and the poller with it or\n"
	"on --poll-cpu CPU:\n"
	"\n"
	"  exits to userspace per message: KVM's userspace_exits of a run of\n"
	"    N ping-pongs minus those of a run of 0, divided by N (and KVM's\n"
	"    io_exits, every port-I/O intercept, handled in the kernel or not,\n"
	"    and KVM's exits, all kinds, of which halt_exits and irq_exits);\n"
	"    polled: the share of messages the poller took\n"
	"  round trip: (time of N ping-pongs - time of 0) / N, 1 in flight\n"
	"  throughput: N messages with 32 in flight, per second\n"
	"  cold start: from starting `nvxtool uvm run hello` to the first byte\n"
	"    of its output, against fork+exec of a static host program that\n"
	"    prints the same line, --runs times each; p50 and p99\n"
	"\n"
	"Defaults: 10000 messages, 100 runs. Grows the pool by 16 MiB for its\n"
	"VMs (CAP_SYS_ADMIN) and gives that back at the end.\n"
	"Under QEMU TCG the times are not hardware times: compare the ratios.\n"
	"JSON: per path (\"fast\", \"slow\", \"poll\", \"poll_busy\"):\n"
	"\"userspace_exits_per_msg\", \"io_exits_per_msg\", \"exits_per_msg\",\n"
	"\"exits_per_msg_32\" (all exits, 32 in flight), \"halt_exits_per_msg\",\n"
	"\"irq_exits_per_msg\", \"polled_share\", \"rtt_us\", \"msgs_per_s\"; then\n"
	"\"rtt_slow_over_fast\", \"rate_fast_over_slow\", \"exits_per_msg_polled\"\n"
	"(poll's exits_per_msg_32: a VM under load), \"rtt_fast_over_polled\",\n"
	"\"rtt_fast_over_polled_busy\", \"cold_start\" and \"headline\", the fast\n"
	"path's userspace exits per message.\n";
