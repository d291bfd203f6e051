// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: light user VMs (include/uapi/nvx/uvm.h).
 *
 *   uvm run [--mem SIZE] [--vcpus 1] [--slow-path] [--stats] IMAGE [-- ARGS]
 *				start a user VM; its messages go to a system
 *				process (a forked `sys`) that serves its
 *				stdin and stdout
 *   sys --ep-fd FD		the minimal system process, on an endpoint fd
 *				it inherited
 *   bench uvm			fast path against the slow path, cold start
 *
 * The VMM and the default service are tools/nvx/lib/nvx_uvm.h, shared
 * with the selftests.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nvx/uvm.h>

#include "nvxtool.h"
#include "lib/nvx_uvm.h"

#define NVX_UVM_EXIT_STOPPED	125	/* uvm run: the VM was stopped */
#define NVX_SYS_MAX_WORKERS	256

/* ------------------------------------------------------------- images */

/*
 * IMAGE as given when it names a file; else NAME or NAME.img in
 * $NVX_GUEST_DIR, in guest/ beside nvxtool, or in /usr/lib/nvx/guest.
 */
static int nvx_uvm_find_image(const char *name, char *out, size_t n)
{
	char self[PATH_MAX], dir[PATH_MAX + 8];
	const char *dirs[3] = { getenv("NVX_GUEST_DIR"), dir,
				"/usr/lib/nvx/guest" };
	const char *sfx[2] = { "", ".img" };
	ssize_t len;
	unsigned int i, j;

	if (strchr(name, '/') || !access(name, R_OK)) {
		snprintf(out, n, "%s", name);
		return access(out, R_OK) ? -errno : 0;
	}
	dir[0] = 0;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = 0;
		*strrchr(self, '/') = 0;
		snprintf(dir, sizeof(dir), "%s/guest", self);
	}
	for (i = 0; i < 3; i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		for (j = 0; j < 2; j++) {
			snprintf(out, n, "%s/%s%s", dirs[i], name, sfx[j]);
			if (!access(out, R_OK))
				return 0;
		}
	}
	return -ENOENT;
}

/* ------------------------------------------------- the system process */

struct nvx_sys_item {
	struct nvx_sys_item *next;
	struct nvx_uvm_recv r;
	void *buf;
};

struct nvx_sys_worker {
	uint64_t key;		/* vm id << 32 | guest thread */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct nvx_sys_item *head, *tail;
	struct nvx_sys *sys;
};

struct nvx_sys {
	int ep_fd;
	int in_fd, out_fd, err_fd;
	struct nvx_sys_worker *workers[NVX_SYS_MAX_WORKERS];
	unsigned int nr_workers;
	pthread_mutex_t buf_mu;
	struct nvx_sys_item *free;	/* items with their buffers */
};

static struct nvx_sys_item *nvx_sys_item_get(struct nvx_sys *sys)
{
	struct nvx_sys_item *it;

	pthread_mutex_lock(&sys->buf_mu);
	it = sys->free;
	if (it)
		sys->free = it->next;
	pthread_mutex_unlock(&sys->buf_mu);
	if (it)
		return it;
	it = calloc(1, sizeof(*it));
	if (it)
		it->buf = malloc(NVX_UVM_MAX_BULK);
	if (it && !it->buf) {
		free(it);
		it = NULL;
	}
	return it;
}

static void nvx_sys_item_put(struct nvx_sys *sys, struct nvx_sys_item *it)
{
	pthread_mutex_lock(&sys->buf_mu);
	it->next = sys->free;
	sys->free = it;
	pthread_mutex_unlock(&sys->buf_mu);
}

/* One worker per guest thread: its requests are served in order. */
static void *nvx_sys_worker_main(void *arg)
{
	struct nvx_sys_worker *w = arg;
	struct nvx_sys *sys = w->sys;
	struct nvx_uvm_serve sv = {
		.in_fd = sys->in_fd, .out_fd = sys->out_fd,
		.err_fd = sys->err_fd,
	};
	struct nvx_sys_item *it;
	int ret;

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head)
			pthread_cond_wait(&w->cv, &w->mu);
		it = w->head;
		w->head = it->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);

		sv.buf = it->buf;
		ret = nvx_uvm_serve_msg(sys->ep_fd, &sv, &it->r);
		/* -ESRCH: the VM went away meanwhile; its notice follows */
		if (ret < 0 && ret != -ESRCH)
			nvx_warn("sys: reply to vm %u: %s", it->r.msg.src_vm,
				 strerror(-ret));
		nvx_sys_item_put(sys, it);
	}
	return NULL;
}

static struct nvx_sys_worker *nvx_sys_worker_for(struct nvx_sys *sys,
						 uint64_t key)
{
	struct nvx_sys_worker *w;
	unsigned int i;

	for (i = 0; i < sys->nr_workers; i++)
		if (sys->workers[i]->key == key)
			return sys->workers[i];
	if (sys->nr_workers == NVX_SYS_MAX_WORKERS)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->key = key;
	w->sys = sys;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->th, NULL, nvx_sys_worker_main, w)) {
		free(w);
		return NULL;
	}
	pthread_detach(w->th);
	sys->workers[sys->nr_workers++] = w;
	return w;
}

/*
 * Serve @ep_fd until every VM that attached is gone (after at least one
 * did). Returns NVX_EXIT_OK or NVX_EXIT_FAIL.
 */
static int nvx_sys_serve(int ep_fd, int in_fd, int out_fd, int err_fd)
{
	struct nvx_sys sys = {
		.ep_fd = ep_fd, .in_fd = in_fd, .out_fd = out_fd,
		.err_fd = err_fd,
	};
	struct nvx_uvm_ep_stats st;
	struct nvx_sys_worker *w;
	struct nvx_sys_item *it;
	uint64_t gone = 0;
	int ret;

	pthread_mutex_init(&sys.buf_mu, NULL);
	for (;;) {
		it = nvx_sys_item_get(&sys);
		if (!it) {
			nvx_err("sys: out of memory");
			return NVX_EXIT_FAIL;
		}
		memset(&it->r, 0, sizeof(it->r));
		it->r.buf = (uintptr_t)it->buf;
		it->r.buf_len = NVX_UVM_MAX_BULK;
		if (ioctl(ep_fd, NVX_UVM_EP_IOC_RECV, &it->r) < 0) {
			ret = errno;
			nvx_sys_item_put(&sys, it);
			if (ret == EINTR)
				continue;
			nvx_err("sys: NVX_UVM_EP_IOC_RECV: %s", strerror(ret));
			return NVX_EXIT_FAIL;
		}
		if (it->r.msg.type == NVX_UVM_MSG_VM_GONE) {
			nvx_sys_item_put(&sys, it);
			gone++;
			memset(&st, 0, sizeof(st));
			if (ioctl(ep_fd, NVX_UVM_EP_IOC_STATS, &st) < 0) {
				nvx_err("sys: NVX_UVM_EP_IOC_STATS: %s",
					strerror(errno));
				return NVX_EXIT_FAIL;
			}
			if (!st.nr_vms && !st.gone && gone >= st.attached)
				return NVX_EXIT_OK;
			continue;
		}
		w = nvx_sys_worker_for(&sys, (uint64_t)it->r.msg.src_vm << 32 |
					     it->r.msg.src_tid);
		if (!w) {
			struct nvx_uvm_reply rep = { .cookie = it->r.cookie };

			rep.msg.type = it->r.msg.type;
			rep.msg.status = -EAGAIN;
			ioctl(ep_fd, NVX_UVM_EP_IOC_REPLY, &rep);
			nvx_sys_item_put(&sys, it);
			continue;
		}
		it->next = NULL;
		pthread_mutex_lock(&w->mu);
		if (w->tail)
			w->tail->next = it;
		else
			w->head = it;
		w->tail = it;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
}

enum {
	NVX_UVM_OPT_MEM = 0x100,
	NVX_UVM_OPT_VCPUS,
	NVX_UVM_OPT_SLOW,
	NVX_UVM_OPT_STATS,
	NVX_UVM_OPT_EP_FD,
	NVX_UVM_OPT_MESSAGES,
	NVX_UVM_OPT_RUNS,
};

int nvx_cmd_sys(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ep-fd", required_argument, NULL, NVX_UVM_OPT_EP_FD },
		{ }
	};
	unsigned long long v;
	int c, ep_fd = -1;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c != NVX_UVM_OPT_EP_FD)
			return nvx_getopt_error(ctx, c, argv);
		if (nvx_parse_uint(optarg, INT_MAX, &v))
			return nvx_usage_error(ctx, "bad --ep-fd: %s", optarg);
		ep_fd = v;
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument: %s",
				       argv[optind]);
	if (ep_fd < 0)
		return nvx_usage_error(ctx, "--ep-fd is required");
	return nvx_sys_serve(ep_fd, 0, 1, 2);
}

/* -------------------------------------------------------------- run */

struct nvx_uvm_run_args {
	uint64_t mem;
	int slow;
	int stats;
	const char *image;
	int argc;
	char **argv;
};

static void nvx_uvm_print_stats(struct nvx_uvm_vm *vm)
{
	struct nvx_uvm_status st;

	if (nvx_uvm_status(vm, &st))
		return;
	fprintf(stderr,
		"vm %u: doorbells %llu, messages in %llu, out %llu, bulk out %llu B, in %llu B, irqs %llu; KVM: userspace_exits %lld, io_exits %lld; VMM kicks %llu\n",
		st.vm_id, (unsigned long long)st.doorbells,
		(unsigned long long)st.msgs_in,
		(unsigned long long)st.msgs_out,
		(unsigned long long)st.bulk_out,
		(unsigned long long)st.bulk_in, (unsigned long long)st.irqs,
		(long long)nvx_uvm_kvm_stat(vm->stats_fd, "userspace_exits"),
		(long long)nvx_uvm_kvm_stat(vm->stats_fd, "io_exits"),
		(unsigned long long)vm->kicks);
}

/* Report how a VM ended; returns the exit status for uvm run. */
static int nvx_uvm_report(struct nvx_uvm_vm *vm, int ret)
{
	if (!ret && vm->exit_status < 0x100)
		return vm->exit_status;
	if (!ret) {
		/* the runtime reports exception N as 0x100 | N */
		if (vm->exit_status < 0x120)
			nvx_err("uvm: vm %u: guest exception %u", vm->vm_id,
				vm->exit_status & 0xff);
		else
			nvx_err("uvm: vm %u: guest exit status %#x", vm->vm_id,
				vm->exit_status);
		return NVX_UVM_EXIT_STOPPED;
	}
	if (ret == -EIO)
		nvx_err("uvm: vm %u stopped: %s (detail %#llx)", vm->vm_id,
			nvx_uvm_reason_name(vm->reason),
			(unsigned long long)vm->detail);
	else
		nvx_err("uvm: vm %u: %s", vm->vm_id, strerror(-ret));
	return NVX_UVM_EXIT_STOPPED;
}

static int nvx_uvm_run_parse(struct nvx_ctx *ctx, int argc, char **argv,
			     struct nvx_uvm_run_args *a)
{
	static const struct option opts[] = {
		{ "mem", required_argument, NULL, NVX_UVM_OPT_MEM },
		{ "vcpus", required_argument, NULL, NVX_UVM_OPT_VCPUS },
		{ "slow-path", no_argument, NULL, NVX_UVM_OPT_SLOW },
		{ "stats", no_argument, NULL, NVX_UVM_OPT_STATS },
		{ }
	};
	int c;

	opterr = 0;
	optind = 0;
	/* "+": options only before IMAGE; what follows goes to the guest */
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case NVX_UVM_OPT_MEM:
			if (nvx_parse_size(optarg, &a->mem) ||
			    a->mem < (2ULL << 20) || a->mem > (4ULL << 30))
				return nvx_usage_error(ctx,
					"--mem: a size from 2M to 4G, not %s",
					optarg);
			break;
		case NVX_UVM_OPT_VCPUS:
			if (strcmp(optarg, "1"))
				return nvx_usage_error(ctx,
					"--vcpus: only 1 vCPU is supported");
			break;
		case NVX_UVM_OPT_SLOW:
			a->slow = 1;
			break;
		case NVX_UVM_OPT_STATS:
			a->stats = 1;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind >= argc)
		return nvx_usage_error(ctx, "IMAGE is required");
	a->image = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	a->argc = argc - optind;
	a->argv = argv + optind;
	return NVX_EXIT_OK;
}

static int nvx_cmd_uvm_run(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_uvm_run_args a = { .mem = 4ULL << 20 };
	struct nvx_uvm_endpoint ep = { .max_vms = 1 };
	struct nvx_uvm_opts o = { 0 };
	char path[PATH_MAX], *gargv[64];
	struct nvx_uvm_vm vm;
	const char *where;
	pid_t sys;
	int ret, i, st;

	ret = nvx_uvm_run_parse(ctx, argc, argv, &a);
	if (ret)
		return ret;
	if (a.argc + 1 > (int)NVX_ARRAY_SIZE(gargv))
		return nvx_usage_error(ctx, "too many guest arguments");
	ret = nvx_uvm_find_image(a.image, path, sizeof(path));
	if (ret) {
		nvx_err("uvm: image %s: %s", a.image, strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	gargv[0] = (char *)a.image;
	for (i = 0; i < a.argc; i++)
		gargv[i + 1] = a.argv[i];
	ret = nvx_ioctl(ctx, NVX_IOC_UVM_ENDPOINT, &ep, "NVX_IOC_UVM_ENDPOINT");
	if (ret)
		return ret;

	fflush(NULL);
	sys = fork();
	if (sys < 0) {
		nvx_err("uvm: fork: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	if (!sys) {
		/* the system process: the endpoint, stdin and stdout */
		close(ctx->fd);
		_exit(nvx_sys_serve(ep.fd, 0, 1, 2));
	}

	o.mem = a.mem;
	o.image = path;
	o.argc = a.argc + 1;
	o.argv = gargv;
	o.ep_fd = ep.fd;
	o.slow = a.slow;
	ret = nvx_uvm_create(&vm, ctx->fd, &o, &where);
	/* from now on only the system process holds the endpoint */
	close(ep.fd);
	if (ret) {
		nvx_err("uvm: %s: %s", where, strerror(-ret));
		nvx_uvm_destroy(&vm);
		kill(sys, SIGTERM);
		waitpid(sys, NULL, 0);
		return NVX_EXIT_FAIL;
	}
	ret = nvx_uvm_run(&vm);
	if (a.stats)
		nvx_uvm_print_stats(&vm);
	ret = nvx_uvm_report(&vm, ret);
	nvx_uvm_destroy(&vm);	/* the system process sees VM_GONE */
	if (waitpid(sys, &st, 0) == sys && !(WIFEXITED(st) &&
					     !WEXITSTATUS(st)))
		nvx_warn("uvm: the system process ended with status %#x", st);
	return ret;
}

const struct nvx_cmd nvx_uvm_cmds[] = {
	{
		.name = "run",
		.summary = "run a guest image in a light user VM",
		.usage = "[--mem SIZE] [--vcpus 1] [--slow-path] [--stats] IMAGE [-- ARGS...]\n"
			 "\n"
			 "Starts a KVM VM with one vCPU whose RAM (SIZE, default 4M) is a grant\n"
			 "from the nvx pool, loads IMAGE (a flat image from tools/nvx/guest:\n"
			 "a path, or a name looked up in $NVX_GUEST_DIR, in guest/ beside\n"
			 "nvxtool and in /usr/lib/nvx/guest) and passes ARGS to it. A forked\n"
			 "system process (nvxtool sys) serves the VM's messages: the guest's\n"
			 "fd 0, 1 and 2 are this command's stdin, stdout and stderr.\n"
			 "\n"
			 "The guest's doorbell port writes are handled in the kernel; with\n"
			 "--slow-path they exit to this VMM, which passes them on\n"
			 "(NVX_UVM_IOC_KICK): the baseline the fast path is measured against.\n"
			 "--stats prints the VM's counters and KVM's exit counts on stderr.\n"
			 "\n"
			 "Exit status: the guest's exit status (0-255), or 125 when the VM\n"
			 "was stopped (a message on stderr says why: bad-port, bad-ring,\n"
			 "bad-message, bad-size, bad-address, flood, endpoint-gone, shutdown,\n"
			 "a guest exception), or 1 when it could not be started.\n",
		.fn = nvx_cmd_uvm_run,
	},
	{ }
};

const char nvx_sys_usage[] =
	"--ep-fd FD\n"
	"\n"
	"Serves the endpoint FD (inherited from the process that made it with\n"
	"NVX_IOC_UVM_ENDPOINT): one worker thread per guest thread; guest\n"
	"writes to fd 1 and 2 go to stdout and stderr, reads of fd 0 come\n"
	"from stdin; exit, clock and IPC (a ping service: the reply carries\n"
	"the request's first 8 payload bytes plus one). Exits when every VM\n"
	"that attached is gone. `uvm run` forks one of these per VM.\n";

/* ------------------------------------------------------------ bench */

static uint64_t nvx_uvm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct nvx_uvm_bench_vm {
	struct nvx_uvm_vm vm;
	int ret;
	int done_fd;		/* written when the vCPU loop returns */
};

static void *nvx_uvm_bench_vcpu(void *arg)
{
	struct nvx_uvm_bench_vm *b = arg;
	uint64_t one = 1;

	b->ret = nvx_uvm_run(&b->vm);
	if (write(b->done_fd, &one, sizeof(one)) < 0)
		b->ret = -errno;
	return NULL;
}

struct nvx_uvm_ping {
	uint64_t ns;		/* launch to exit */
	int64_t user_exits;	/* KVM's userspace_exits */
	int64_t io_exits;	/* KVM's io_exits (every PIO intercept) */
	uint64_t doorbells;
};

/* Run `test ping N W` with the default service in this thread. */
static int nvx_uvm_bench_ping(struct nvx_ctx *ctx, const char *image,
			      int slow, unsigned int n, unsigned int w,
			      struct nvx_uvm_ping *out)
{
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 1 };
	char ns[16], ws[16], *argv[4];
	struct nvx_uvm_serve sv = { .in_fd = -1, .out_fd = -1, .err_fd = 2 };
	struct nvx_uvm_opts o = { 0 };
	struct nvx_uvm_bench_vm b;
	struct nvx_uvm_status st;
	struct nvx_uvm_recv r;
	struct pollfd pfd[2];
	const char *where;
	pthread_t th;
	uint64_t t0;
	int ret, finished = 0;

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
	b.done_fd = eventfd(0, EFD_CLOEXEC);
	o.image = image;
	o.argc = 4;
	o.argv = argv;
	o.ep_fd = ep.fd;
	o.slow = slow;
	t0 = nvx_uvm_now_ns();
	ret = nvx_uvm_create(&b.vm, ctx->fd, &o, &where);
	if (ret) {
		nvx_err("bench uvm: %s: %s", where, strerror(-ret));
		goto out;
	}
	ret = -pthread_create(&th, NULL, nvx_uvm_bench_vcpu, &b);
	if (ret)
		goto out;
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
	out->ns = nvx_uvm_now_ns() - t0;
	out->user_exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "userspace_exits");
	out->io_exits = nvx_uvm_kvm_stat(b.vm.stats_fd, "io_exits");
	nvx_uvm_status(&b.vm, &st);
	out->doorbells = st.doorbells;
	ret = b.ret;
	if (!ret && b.vm.exit_status) {
		nvx_err("bench uvm: ping exited with %u", b.vm.exit_status);
		ret = -EPROTO;
	} else if (ret) {
		nvx_uvm_report(&b.vm, ret);
	}
out:
	nvx_uvm_destroy(&b.vm);
	close(b.done_fd);
	close(ep.fd);
	free(sv.buf);
	return ret;
}

static void nvx_uvm_nop(int sig)
{
}

static int nvx_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Start-to-first-byte of `argv`, whose stdout is a pipe; in ns. */
static int nvx_first_byte(char *const argv[], uint64_t *ns)
{
	int p[2], st, dn;
	uint64_t t0;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	t0 = nvx_uvm_now_ns();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(p[1], 1);
		dn = open("/dev/null", O_RDONLY);
		if (dn >= 0)
			dup2(dn, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		waitpid(pid, &st, 0);
		return -EPIPE;
	}
	*ns = nvx_uvm_now_ns() - t0;
	while (read(p[0], &c, 1) > 0)
		;
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -ECHILD;
	return 0;
}

struct nvx_uvm_bench {
	unsigned int messages, runs;
	struct nvx_uvm_ping base[2], one[2], many[2];	/* [slow] */
	double exits_per_msg[2], io_per_msg[2], rtt_us[2], rate[2];
	uint64_t *uvm_ns, *host_ns;
	double uvm_p50, uvm_p99, host_p50, host_p99;
};

static double nvx_pct(uint64_t *v, unsigned int n, double p)
{
	unsigned int i = (unsigned int)(p * (n - 1) + 0.5);

	return v[i] / 1e6;
}

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

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return -errno;
	self[len] = 0;
	b->uvm_ns = calloc(b->runs, sizeof(uint64_t));
	b->host_ns = calloc(b->runs, sizeof(uint64_t));
	if (!b->uvm_ns || !b->host_ns)
		return -ENOMEM;
	for (i = 0; i < b->runs; i++) {
		ret = nvx_first_byte(uvm_argv, &b->uvm_ns[i]);
		if (ret) {
			nvx_err("bench uvm: uvm run %s: %s", hello,
				strerror(-ret));
			return ret;
		}
		ret = nvx_first_byte(host_argv, &b->host_ns[i]);
		if (ret) {
			nvx_err("bench uvm: %s: %s", host, strerror(-ret));
			return ret;
		}
	}
	qsort(b->uvm_ns, b->runs, sizeof(uint64_t), nvx_cmp_u64);
	qsort(b->host_ns, b->runs, sizeof(uint64_t), nvx_cmp_u64);
	b->uvm_p50 = nvx_pct(b->uvm_ns, b->runs, 0.5);
	b->uvm_p99 = nvx_pct(b->uvm_ns, b->runs, 0.99);
	b->host_p50 = nvx_pct(b->host_ns, b->runs, 0.5);
	b->host_p99 = nvx_pct(b->host_ns, b->runs, 0.99);
	return 0;
}

static void nvx_uvm_bench_print(struct nvx_ctx *ctx, struct nvx_uvm_bench *b)
{
	static const char *const path[2] = { "fast", "slow" };
	struct nvx_json *j = &ctx->js;
	int s;

	if (ctx->json) {
		nvx_json_init(j, stdout);
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "messages", b->messages);
		for (s = 0; s < 2; s++) {
			nvx_json_object_begin(j, path[s]);
			nvx_json_double(j, "userspace_exits_per_msg",
					b->exits_per_msg[s]);
			nvx_json_double(j, "io_exits_per_msg", b->io_per_msg[s]);
			nvx_json_double(j, "rtt_us", b->rtt_us[s]);
			nvx_json_double(j, "msgs_per_s", b->rate[s]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "rtt_slow_over_fast",
				b->rtt_us[1] / b->rtt_us[0]);
		nvx_json_double(j, "rate_fast_over_slow",
				b->rate[0] / b->rate[1]);
		nvx_json_object_begin(j, "cold_start");
		nvx_json_u64(j, "runs", b->runs);
		nvx_json_double(j, "uvm_p50_ms", b->uvm_p50);
		nvx_json_double(j, "uvm_p99_ms", b->uvm_p99);
		nvx_json_double(j, "host_p50_ms", b->host_p50);
		nvx_json_double(j, "host_p99_ms", b->host_p99);
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
	printf("%-5s %14s %12s %12s %14s\n", "path", "user exits/msg",
	       "io exits/msg", "rtt us", "msgs/s (32)");
	for (s = 0; s < 2; s++)
		printf("%-5s %14.4f %12.4f %12.1f %14.0f\n", path[s],
		       b->exits_per_msg[s], b->io_per_msg[s], b->rtt_us[s],
		       b->rate[s]);
	printf("round trip slow/fast: %.2f   throughput fast/slow: %.2f\n",
	       b->rtt_us[1] / b->rtt_us[0], b->rate[0] / b->rate[1]);
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

/* Give back what the bench grew, once the scrubber has cleaned it. */
static void nvx_uvm_bench_shrink(struct nvx_ctx *ctx, uint64_t bytes)
{
	struct nvx_pool_resize r;
	int i;

	for (i = 0; i < 100 && bytes; i++) {
		memset(&r, 0, sizeof(r));
		r.bytes = bytes;
		if (!ioctl(ctx->fd, NVX_IOC_POOL_SHRINK, &r))
			bytes -= r.done < bytes ? r.done : bytes;
		if (bytes)
			usleep(50000);
	}
	if (bytes)
		nvx_warn("bench uvm: %llu bytes not given back to the pool",
			 (unsigned long long)bytes);
}

int nvx_cmd_bench_uvm(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "messages", required_argument, NULL, NVX_UVM_OPT_MESSAGES },
		{ "runs", required_argument, NULL, NVX_UVM_OPT_RUNS },
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

	for (s = 0; s < 2; s++) {
		ret = nvx_uvm_bench_ping(ctx, test, s, 0, 1, &b.base[s]);
		if (!ret)
			ret = nvx_uvm_bench_ping(ctx, test, s, b.messages, 1,
						 &b.one[s]);
		if (!ret)
			ret = nvx_uvm_bench_ping(ctx, test, s, b.messages, 32,
						 &b.many[s]);
		if (ret) {
			nvx_uvm_bench_shrink(ctx, grow.done);
			return NVX_EXIT_FAIL;
		}
		b.exits_per_msg[s] = (double)(b.one[s].user_exits -
					      b.base[s].user_exits) / b.messages;
		b.io_per_msg[s] = (double)(b.one[s].io_exits -
					   b.base[s].io_exits) / b.messages;
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
	nvx_uvm_bench_shrink(ctx, grow.done);
	return ret ? NVX_EXIT_FAIL : NVX_EXIT_OK;
}

const char nvx_bench_uvm_usage[] =
	"[--messages N] [--runs N] [--json]\n"
	"\n"
	"User VMs: the in-kernel fast path against the slow path (doorbells\n"
	"exit to the VMM, which passes them on with NVX_UVM_IOC_KICK), in\n"
	"the same run, with the guest image `test` and this process as the\n"
	"system side (its ping service):\n"
	"\n"
	"  exits to userspace per message: KVM's userspace_exits of a run of\n"
	"    N ping-pongs minus those of a run of 0, divided by N (and KVM's\n"
	"    io_exits, every port-I/O intercept, handled in the kernel or not)\n"
	"  round trip: (time of N ping-pongs - time of 0) / N, 1 in flight\n"
	"  throughput: N messages with 32 in flight, per second\n"
	"  cold start: from starting `nvxtool uvm run hello` to the first byte\n"
	"    of its output, against fork+exec of a static host program that\n"
	"    prints the same line, --runs times each; p50 and p99\n"
	"\n"
	"Defaults: 10000 messages, 100 runs. Grows the pool by 16 MiB for its\n"
	"VMs (CAP_SYS_ADMIN) and gives that back at the end.\n"
	"Under QEMU TCG the times are not hardware times: compare the ratios.\n"
	"JSON: \"headline\" is the fast path's userspace exits per message.\n";
