// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench sys: the system side of user VMs. What the kernel answers or
 * moves itself (a denied message, a VM-to-VM message) against what the
 * system process answers or relays, and a forwarded file call against
 * the same call made by a host process.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvx/pool.h>
#include <nvx/uvm.h>

#include "bench.h"
#include "nvx_uvm.h"

enum {
	NVX_SYS_OPT_MESSAGES = 0x100,
};

/* the relay protocol of `test relay-ping` / `test relay-echo` */
#define NVX_SYS_RELAY_SEND	1
#define NVX_SYS_RELAY_RECV	2
#define NVX_SYS_RELAY_WAIT	4	/* requests parked at once */

#define NVX_SYS_BENCH_POOL	(16ULL << 20)

struct nvx_sys_vm {
	struct nvx_uvm_vm vm;
	pthread_t th;
	int ret;
	int done_fd;
	int started;
};

static void *nvx_sys_vcpu(void *arg)
{
	struct nvx_sys_vm *v = arg;
	uint64_t one = 1;

	v->ret = nvx_uvm_run(&v->vm);
	if (write(v->done_fd, &one, sizeof(one)) < 0)
		v->ret = -errno;
	return NULL;
}

/* A parked relay request: a RECV waiting for data, or a SEND's data. */
struct nvx_sys_parked {
	uint64_t cookie;
	uint32_t vm;
	uint32_t len;
	void *buf;
	uint8_t payload[NVX_UVM_PAYLOAD];
};

struct nvx_sys_relay {
	struct nvx_sys_parked send[NVX_SYS_RELAY_WAIT], recv[NVX_SYS_RELAY_WAIT];
	unsigned int nr_send, nr_recv;
	uint64_t relayed;
};

static int nvx_sys_reply(int ep, uint64_t cookie, const void *buf,
			 uint32_t len, const uint8_t *payload)
{
	struct nvx_uvm_reply rep = { .cookie = cookie };

	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.buf = (uintptr_t)buf;
	rep.buf_len = len;
	if (payload)
		memcpy(rep.msg.payload, payload, NVX_UVM_PAYLOAD);
	return ioctl(ep, NVX_UVM_EP_IOC_REPLY, &rep) ? -errno : 0;
}

/* Deliver parked SEND @s into RECV @r: reply to both; free both. */
static int nvx_sys_relay_pair(int ep, struct nvx_sys_relay *rl,
			      struct nvx_sys_parked *s,
			      struct nvx_sys_parked *r)
{
	uint32_t len = s->len < r->len ? s->len : r->len;
	int ret;

	ret = nvx_sys_reply(ep, r->cookie, s->buf, len, s->payload);
	if (!ret)
		ret = nvx_sys_reply(ep, s->cookie, NULL, 0, NULL);
	rl->relayed++;
	return ret;
}

/* The first parked entry of a VM other than @vm, removed; or -1. */
static int nvx_sys_take(struct nvx_sys_parked *p, unsigned int *nr,
			uint32_t vm, struct nvx_sys_parked *out)
{
	unsigned int i;

	for (i = 0; i < *nr; i++) {
		if (p[i].vm == vm)
			continue;
		*out = p[i];
		memmove(&p[i], &p[i + 1], (*nr - i - 1) * sizeof(*p));
		(*nr)--;
		return 0;
	}
	return -1;
}

/* Serve one relay request; 1 when @r was not one. */
static int nvx_sys_relay_msg(int ep, struct nvx_sys_relay *rl,
			     const struct nvx_uvm_recv *r, void *data)
{
	struct nvx_sys_parked me = { .cookie = r->cookie,
				     .vm = r->msg.src_vm }, other;
	uint32_t op;
	int ret;

	memcpy(&op, r->msg.payload, sizeof(op));
	if (r->msg.type != NVX_UVM_MSG_IPC ||
	    (op != NVX_SYS_RELAY_SEND && op != NVX_SYS_RELAY_RECV))
		return 1;
	memcpy(me.payload, r->msg.payload, NVX_UVM_PAYLOAD);
	if (op == NVX_SYS_RELAY_SEND) {
		me.len = r->data_len < NVX_UVM_MAX_BULK ? r->data_len :
			 NVX_UVM_MAX_BULK;
		if (!nvx_sys_take(rl->recv, &rl->nr_recv, me.vm, &other)) {
			me.buf = data;
			return nvx_sys_relay_pair(ep, rl, &me, &other);
		}
		if (rl->nr_send == NVX_SYS_RELAY_WAIT)
			return -ENOSPC;
		/* park a copy: @data is the next RECV's buffer */
		me.buf = malloc(me.len ?: 1);
		if (!me.buf)
			return -ENOMEM;
		memcpy(me.buf, data, me.len);
		rl->send[rl->nr_send++] = me;
		return 0;
	}
	me.len = r->data_len;
	if (!nvx_sys_take(rl->send, &rl->nr_send, me.vm, &other)) {
		ret = nvx_sys_relay_pair(ep, rl, &other, &me);
		free(other.buf);
		return ret;
	}
	if (rl->nr_recv == NVX_SYS_RELAY_WAIT)
		return -ENOSPC;
	rl->recv[rl->nr_recv++] = me;
	return 0;
}

struct nvx_sys_run {
	struct nvx_ctx *ctx;
	const char *image;
	uint32_t pol_flags;	/* NVX_UVM_POLICY_* of the endpoint */
	int relay;		/* serve the relay protocol */
	unsigned int nr_vms;	/* 1 or 2 */
	/* argv of VM i; nvx_sys_peer in it stands for VM 0's id */
	const char *argv[2][6];
	uint64_t ns;		/* creation of the first VM to the last exit */
	uint64_t relayed;
	struct nvx_uvm_ep_stats st;
};

static const char nvx_sys_peer[] = "PEER";

/* What a run that stopped making progress was waiting for. */
static void nvx_sys_stuck(int ep, struct nvx_sys_vm *v, unsigned int n,
			  const struct nvx_sys_relay *rl)
{
	struct nvx_uvm_ep_stats st = { 0 };
	struct nvx_uvm_status cs;
	unsigned int i;

	ioctl(ep, NVX_UVM_EP_IOC_STATS, &st);
	nvx_err("bench sys: endpoint: %u VMs, %u queued, %u taken, %llu in, %llu out; relay: %u sends and %u receives parked",
		st.nr_vms, st.queued, st.taken,
		(unsigned long long)st.msgs_in,
		(unsigned long long)st.msgs_out, rl->nr_send, rl->nr_recv);
	for (i = 0; i < n; i++) {
		if (nvx_uvm_status(&v[i].vm, &cs))
			continue;
		nvx_err("bench sys: vm %u: reason %u, in flight %u, doorbells %llu, in %llu, out %llu, irqs %llu; credits %u, flags %#x, runs %llu",
			cs.vm_id, cs.reason, cs.in_flight,
			(unsigned long long)cs.doorbells,
			(unsigned long long)cs.msgs_in,
			(unsigned long long)cs.msgs_out,
			(unsigned long long)cs.irqs,
			v[i].vm.ctrl->credits, v[i].vm.ctrl->flags,
			(unsigned long long)v[i].vm.runs);
	}
}

/* Run the VMs of @run on one endpoint, this thread their system side. */
static int nvx_sys_run(struct nvx_sys_run *run)
{
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 2 };
	struct nvx_uvm_policy pol = { .allow = NVX_UVM_POLICY_ALL };
	struct nvx_uvm_serve sv = { .in_fd = -1, .out_fd = -1, .err_fd = 2 };
	struct nvx_sys_relay rl = { 0 };
	struct nvx_sys_vm v[2];
	char args[2][6][32], *argv[6];
	struct nvx_uvm_opts o = { 0 };
	struct pollfd pfd[2];
	struct nvx_uvm_recv r;
	unsigned int i, j, exited = 0;
	const char *where = "";
	uint64_t t0, n;
	int done_fd, ret;

	memset(v, 0, sizeof(v));
	sv.buf = malloc(NVX_UVM_MAX_BULK);
	done_fd = eventfd(0, EFD_CLOEXEC);
	if (!sv.buf || done_fd < 0) {
		free(sv.buf);
		return -ENOMEM;
	}
	ret = -errno;
	if (ioctl(run->ctx->fd, NVX_IOC_UVM_ENDPOINT, &ep) < 0)
		goto out_free;
	pol.flags = run->pol_flags;
	if (ioctl(ep.fd, NVX_UVM_EP_IOC_SET_POLICY, &pol) < 0) {
		ret = -errno;
		goto out_ep;
	}
	t0 = nvx_now_ns();
	for (i = 0; i < run->nr_vms; i++) {
		for (j = 0; run->argv[i][j]; j++) {
			if (run->argv[i][j] == nvx_sys_peer)
				snprintf(args[i][j], sizeof(args[i][j]), "%u",
					 v[0].vm.vm_id);
			else
				snprintf(args[i][j], sizeof(args[i][j]), "%s",
					 run->argv[i][j]);
			argv[j] = args[i][j];
		}
		o.mem = 4ULL << 20;
		o.image = run->image;
		o.argc = j;
		o.argv = argv;
		o.ep_fd = ep.fd;
		v[i].done_fd = done_fd;
		ret = nvx_uvm_create(&v[i].vm, run->ctx->fd, &o, &where);
		if (ret)
			goto out_vms;
		ret = -pthread_create(&v[i].th, NULL, nvx_sys_vcpu, &v[i]);
		if (ret)
			goto out_vms;
		v[i].started = 1;
	}
	pfd[0].fd = ep.fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = done_fd;
	pfd[1].events = POLLIN;
	while (exited < run->nr_vms) {
		if (poll(pfd, 2, 60000) <= 0) {
			where = "no progress in 60 s";
			ret = -ETIMEDOUT;
			nvx_sys_stuck(ep.fd, v, run->nr_vms, &rl);
			goto out_vms;
		}
		if (pfd[1].revents && read(done_fd, &n, sizeof(n)) == sizeof(n))
			exited += n;
		while (!nvx_uvm_recv(ep.fd, &sv, &r, NVX_UVM_RECV_NONBLOCK)) {
			if (run->relay &&
			    nvx_sys_relay_msg(ep.fd, &rl, &r, sv.buf) <= 0)
				continue;
			nvx_uvm_serve_msg(ep.fd, &sv, &r);
		}
	}
	run->ns = nvx_now_ns() - t0;
	run->relayed = rl.relayed;
	ioctl(ep.fd, NVX_UVM_EP_IOC_STATS, &run->st);
	ret = 0;
	for (i = 0; i < run->nr_vms && !ret; i++) {
		pthread_join(v[i].th, NULL);
		v[i].started = 0;
		ret = v[i].ret;
		if (ret) {
			nvx_uvm_report(&v[i].vm, ret);
			where = "a VM was stopped";
		} else if (v[i].vm.exit_status) {
			ret = -EPROTO;
			where = "a guest failed";
		}
	}
out_vms:
	if (ret)
		nvx_err("bench sys: %s %s: %s", run->argv[0][1], where,
			strerror(-ret));
	for (i = 0; i < run->nr_vms; i++) {
		if (v[i].started) {
			v[i].vm.stop = 1;
			pthread_kill(v[i].th, SIGUSR1);
			pthread_join(v[i].th, NULL);
		}
		nvx_uvm_destroy(&v[i].vm);
	}
	for (i = 0; i < rl.nr_send; i++)
		free(rl.send[i].buf);
out_ep:
	close(ep.fd);
out_free:
	close(done_fd);
	free(sv.buf);
	return ret;
}

/* Per-message time of @run with @n messages, less that of 0, in us. */
static int nvx_sys_per_msg(struct nvx_sys_run *run, unsigned int n,
			   const char *fmt_n, double *us)
{
	struct nvx_sys_run base = *run;
	unsigned int i, j;
	char num[2][16];
	int ret;

	snprintf(num[0], sizeof(num[0]), "%u", 0U);
	snprintf(num[1], sizeof(num[1]), "%u", n);
	/* the argument that reads fmt_n is the message count */
	for (i = 0; i < run->nr_vms; i++)
		for (j = 0; run->argv[i][j]; j++)
			if (run->argv[i][j] == fmt_n) {
				base.argv[i][j] = num[0];
				run->argv[i][j] = num[1];
			}
	ret = nvx_sys_run(&base);
	if (!ret)
		ret = nvx_sys_run(run);
	if (ret)
		return ret;
	*us = ((double)run->ns - (double)base.ns) / n / 1e3;
	return 0;
}

/* Time of `nvxtool uvm run ARGS`, from fork to exit, in ns. */
static int nvx_sys_tool(char *const argv[], uint64_t *ns)
{
	uint64_t t0 = nvx_now_ns();
	int st, dn;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dn = open("/dev/null", O_RDWR);
		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -ECHILD;
	*ns = nvx_now_ns() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		nvx_err("bench sys: %s %s %s %s %s: status %#x", argv[1],
			argv[2], argv[3], argv[4], argv[5], st);
		return -EPROTO;
	}
	return 0;
}

/*
 * Per-message time of `nvxtool uvm run [--slow-path] --root DIR test
 * MODE ... N ...` less that of N = 0, in us.
 */
static int nvx_sys_tool_per_msg(const char *tool, const char *root, int slow,
				const char *const mode[], unsigned int n,
				double *us)
{
	char num[2][16], *argv[16];
	uint64_t ns[2];
	unsigned int i, k, a;
	int ret;

	snprintf(num[0], sizeof(num[0]), "%u", 0U);
	snprintf(num[1], sizeof(num[1]), "%u", n);
	for (k = 0; k < 2; k++) {
		a = 0;
		argv[a++] = (char *)tool;
		argv[a++] = "uvm";
		argv[a++] = "run";
		if (slow)
			argv[a++] = "--slow-path";
		argv[a++] = "--root";
		argv[a++] = (char *)root;
		argv[a++] = "test";
		for (i = 0; mode[i] && a < 15; i++)
			argv[a++] = strcmp(mode[i], "N") ? (char *)mode[i] :
				    num[k];
		argv[a] = NULL;
		ret = nvx_sys_tool(argv, &ns[k]);
		if (ret)
			return ret;
	}
	*us = ((double)ns[1] - (double)ns[0]) / n / 1e3;
	return 0;
}

struct nvx_sys_bench {
	unsigned int messages;
	double pread_uvm, pread_slow, pread_host;
	double deny_kernel, ping_sys;
	double v2v_64, relay_64, v2v_64k, relay_64k;
	uint64_t v2v_bytes;
};

/* The host baseline: pread of 4 KiB from the same file, in us per call. */
static int nvx_sys_host_pread(const char *path, unsigned int n, double *us)
{
	char buf[4096];
	unsigned int i;
	uint64_t t0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	t0 = nvx_now_ns();
	for (i = 0; i < n; i++) {
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf)) {
			close(fd);
			return -EIO;
		}
	}
	*us = (double)(nvx_now_ns() - t0) / n / 1e3;
	close(fd);
	return 0;
}

/* A tenant root with a 64 KiB file data/file; the directory's path. */
static int nvx_sys_root(char *dir, size_t n, char *file, size_t fn)
{
	char block[4096];
	int fd, i;

	snprintf(dir, n, "/tmp/nvx-bench-sys.XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(file, fn, "%s/data", dir);
	if (mkdir(file, 0755))
		return -errno;
	snprintf(file, fn, "%s/data/file", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	memset(block, 'x', sizeof(block));
	for (i = 0; i < 16; i++)
		if (write(fd, block, sizeof(block)) != sizeof(block)) {
			close(fd);
			return -EIO;
		}
	close(fd);
	/* the confined system process may run as another user */
	chmod(dir, 0755);
	return 0;
}

static void nvx_sys_root_rm(const char *dir, const char *file)
{
	char sub[128];

	unlink(file);
	snprintf(sub, sizeof(sub), "%s/data", dir);
	rmdir(sub);
	rmdir(dir);
}

static int nvx_sys_v2v(struct nvx_sys_bench *b, struct nvx_ctx *ctx,
		       const char *test, const char *len, double *v2v,
		       double *relay)
{
	static const char n_arg[] = "N";
	struct nvx_sys_run run = {
		.ctx = ctx, .image = test, .nr_vms = 2,
		.pol_flags = NVX_UVM_POLICY_VM2VM,
		.argv = {
			{ "test", "vm-echo", n_arg, NULL },
			{ "test", "vm-ping", nvx_sys_peer, n_arg, len, NULL },
		},
	};
	int ret;

	ret = nvx_sys_per_msg(&run, b->messages, n_arg, v2v);
	if (ret)
		return ret;
	if (run.st.vm2vm < 2ULL * b->messages) {
		nvx_err("bench sys: %llu VM-to-VM messages, not %u",
			(unsigned long long)run.st.vm2vm, 2 * b->messages);
		return -EPROTO;
	}
	b->v2v_bytes = run.st.vm2vm_bytes;
	memset(&run.argv, 0, sizeof(run.argv));
	run.argv[0][0] = "test";
	run.argv[0][1] = "relay-echo";
	run.argv[0][2] = n_arg;
	run.argv[1][0] = "test";
	run.argv[1][1] = "relay-ping";
	run.argv[1][2] = n_arg;
	run.argv[1][3] = len;
	run.pol_flags = 0;
	run.relay = 1;
	ret = nvx_sys_per_msg(&run, b->messages, n_arg, relay);
	if (!ret && run.relayed < 2ULL * b->messages) {
		nvx_err("bench sys: %llu messages relayed, not %u",
			(unsigned long long)run.relayed, 2 * b->messages);
		return -EPROTO;
	}
	return ret;
}

static void nvx_sys_print(struct nvx_ctx *ctx, struct nvx_sys_bench *b)
{
	struct nvx_json *j = &ctx->js;
	double head = nvx_bench_div(b->relay_64, b->v2v_64);

	if (ctx->json) {
		nvx_json_init(j, stdout);
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "messages", b->messages);
		nvx_json_object_begin(j, "pread_4k_us");
		nvx_json_double(j, "uvm_fast", b->pread_uvm);
		nvx_json_double(j, "uvm_slow", b->pread_slow);
		nvx_json_double(j, "host", b->pread_host);
		nvx_json_end(j);
		nvx_json_object_begin(j, "denied_us");
		nvx_json_double(j, "kernel_denied", b->deny_kernel);
		nvx_json_double(j, "system_noop", b->ping_sys);
		nvx_json_double(j, "noop_over_denied",
				nvx_bench_div(b->ping_sys, b->deny_kernel));
		nvx_json_end(j);
		nvx_json_object_begin(j, "vm2vm_rtt_us");
		nvx_json_double(j, "kernel_64", b->v2v_64);
		nvx_json_double(j, "relayed_64", b->relay_64);
		nvx_json_double(j, "kernel_64k", b->v2v_64k);
		nvx_json_double(j, "relayed_64k", b->relay_64k);
		nvx_json_double(j, "relayed_over_kernel_64k",
				nvx_bench_div(b->relay_64k, b->v2v_64k));
		nvx_json_end(j);
		nvx_json_double(j, "headline", head);
		nvx_json_end(j);
		fputc('\n', stdout);
		return;
	}
	printf("messages: %u per measure (each: time of N less time of 0, / N)\n",
	       b->messages);
	printf("pread 4 KiB, us per call: uvm fast path %.1f, slow path %.1f, host syscall %.2f\n",
	       b->pread_uvm, b->pread_slow, b->pread_host);
	printf("a denied message, answered by the kernel: %.1f us\n",
	       b->deny_kernel);
	printf("an allowed no-op, answered by the system process: %.1f us (%.2fx)\n",
	       b->ping_sys, nvx_bench_div(b->ping_sys, b->deny_kernel));
	printf("VM-to-VM round trip, us:   %12s %12s %8s\n", "kernel",
	       "relayed", "ratio");
	printf("  64 B payload             %12.1f %12.1f %8.2f\n", b->v2v_64,
	       b->relay_64, head);
	printf("  64 KiB PUSH each way     %12.1f %12.1f %8.2f\n", b->v2v_64k,
	       b->relay_64k, nvx_bench_div(b->relay_64k, b->v2v_64k));
	printf("headline (relayed / in-kernel VM-to-VM round trip, 64 B): %.2f\n",
	       head);
}

static void nvx_sys_nop(int sig)
{
}

/**
 * cmd_bench_sys() - nvx-bench sys
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_sys(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "messages", required_argument, NULL, NVX_SYS_OPT_MESSAGES },
		{ }
	};
	static const char *const pread_mode[] = {
		"bench-pread", "/data/file", "N", "4096", NULL };
	static const char *const deny_mode[] = { "deny", "N", NULL };
	static const char *const ping_mode[] = { "ping", "N", "1", NULL };
	struct sigaction sa = { .sa_handler = nvx_sys_nop };
	struct nvx_sys_bench b = { .messages = 2000 };
	struct nvx_pool_resize grow = { 0 };
	char test[PATH_MAX], tool[PATH_MAX], root[64], file[128];
	unsigned long long v;
	ssize_t len;
	int c, ret;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c != NVX_SYS_OPT_MESSAGES)
			return nvx_getopt_error(ctx, c, argv);
		if (nvx_parse_uint(optarg, 1000000, &v) || !v)
			return nvx_usage_error(ctx, "bad --messages: %s",
					       optarg);
		b.messages = v;
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument: %s",
				       argv[optind]);
	if (nvx_uvm_find_image("test", test, sizeof(test))) {
		nvx_err("bench sys: the guest image test was not found (set NVX_GUEST_DIR)");
		return NVX_EXIT_FAIL;
	}
	/* nvxtool is built and installed beside nvx-bench */
	len = readlink("/proc/self/exe", tool, sizeof(tool) - 16);
	if (len <= 0)
		return NVX_EXIT_FAIL;
	tool[len] = 0;
	snprintf(strrchr(tool, '/'), 16, "/nvxtool");
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	grow.node = NVX_NODE_ANY;
	grow.bytes = NVX_SYS_BENCH_POOL;
	ret = nvx_ioctl(ctx, NVX_IOC_POOL_GROW, &grow, "NVX_IOC_POOL_GROW");
	if (ret)
		return ret;
	sigaction(SIGUSR1, &sa, NULL);
	ret = nvx_sys_root(root, sizeof(root), file, sizeof(file));
	if (ret)
		nvx_err("bench sys: tenant root: %s", strerror(-ret));
	if (!ret)
		ret = nvx_sys_tool_per_msg(tool, root, 0, pread_mode,
					   b.messages, &b.pread_uvm);
	if (!ret)
		ret = nvx_sys_tool_per_msg(tool, root, 1, pread_mode,
					   b.messages, &b.pread_slow);
	if (!ret)
		ret = nvx_sys_host_pread(file, b.messages, &b.pread_host);
	if (!ret)
		ret = nvx_sys_tool_per_msg(tool, root, 0, deny_mode,
					   b.messages, &b.deny_kernel);
	if (!ret)
		ret = nvx_sys_tool_per_msg(tool, root, 0, ping_mode,
					   b.messages, &b.ping_sys);
	if (!ret)
		ret = nvx_sys_v2v(&b, ctx, test, "64", &b.v2v_64, &b.relay_64);
	if (!ret)
		ret = nvx_sys_v2v(&b, ctx, test, "65536", &b.v2v_64k,
				  &b.relay_64k);
	nvx_sys_root_rm(root, file);
	if (!ret)
		nvx_sys_print(ctx, &b);
	nvx_bench_shrink(ctx, grow.done, "sys");
	return ret ? NVX_EXIT_FAIL : NVX_EXIT_OK;
}

const char nvx_bench_sys_usage[] =
	"[--messages N]\n"
	"\n"
	"The system side of user VMs, in the same run (each measure: the time\n"
	"of a run with N messages less that of a run with 0, divided by N):\n"
	"\n"
	"  pread of 4 KiB forwarded from a guest to the confined system\n"
	"    process (`nvxtool uvm run --root DIR test bench-pread`), on the\n"
	"    fast path and the slow path, against pread(2) by this process\n"
	"  a message of a type the policy denies (the kernel answers it:\n"
	"    `test deny`) against an allowed no-op IPC message the system\n"
	"    process answers (`test ping N 1`)\n"
	"  a VM-to-VM round trip between two VMs of one endpoint, 64 B of\n"
	"    payload and 64 KiB PUSHed each way: moved by the kernel\n"
	"    (`test vm-ping` / `test vm-echo`) against relayed by a system\n"
	"    process, this one (`test relay-ping` / `test relay-echo`)\n"
	"\n"
	"Default: 2000 messages. Grows the pool by 16 MiB for its VMs\n"
	"(CAP_SYS_ADMIN) and gives that back at the end.\n"
	"Under QEMU TCG the times are not hardware times: compare the ratios.\n"
	"JSON: \"headline\" is the relayed / in-kernel VM-to-VM round trip, 64 B.\n";
