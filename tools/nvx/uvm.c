// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the object "uvm", light user VMs (include/uapi/nvx/uvm.h).
 *
 *   uvm run [--mem SIZE] [--vcpus 1] [--slow-path] [--stats] IMAGE [-- ARGS]
 *				start a user VM; its messages go to a system
 *				process (a forked `uvm serve`) that serves
 *				its stdin and stdout
 *   uvm serve --ep-fd FD	the minimal system process, on an endpoint
 *				fd it inherited
 *
 * The VMM and the default service are libnvx's (nvx_uvm.h), shared with
 * nvx-bench and the selftests. Neither command prints JSON: their output
 * is the guest's.
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
#include <fcntl.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nvx/uvm.h>

#include "nvxtool.h"
#include "nvx_uvm.h"

#define NVX_SYS_MAX_WORKERS	256

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
};

static int cmd_uvm_serve(struct nvx_ctx *ctx, int argc, char **argv)
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

static int cmd_uvm_run(struct nvx_ctx *ctx, int argc, char **argv)
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

static const char nvx_uvm_serve_usage[] =
	"--ep-fd FD\n"
	"\n"
	"Serves the endpoint FD (inherited from the process that made it with\n"
	"NVX_IOC_UVM_ENDPOINT): one worker thread per guest thread; guest\n"
	"writes to fd 1 and 2 go to stdout and stderr, reads of fd 0 come\n"
	"from stdin; exit, clock and IPC (a ping service: the reply carries\n"
	"the request's first 8 payload bytes plus one). Exits when every VM\n"
	"that attached is gone. `uvm run` forks one of these per VM.\n";

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
			 "system process (nvxtool uvm serve) serves the VM's messages: the guest's\n"
			 "fd 0, 1 and 2 are this command's stdin, stdout and stderr.\n"
			 "\n"
			 "The guest's doorbell port writes are handled in the kernel; with\n"
			 "--slow-path they exit to this VMM, which passes them on\n"
			 "(NVX_UVM_CHAN_IOC_KICK): the baseline the fast path is measured against.\n"
			 "--stats prints the VM's counters and KVM's exit counts on stderr.\n"
			 "\n"
			 "Exit status: the guest's exit status (0-255), or 125 when the VM\n"
			 "was stopped (a message on stderr says why: bad-port, bad-ring,\n"
			 "bad-message, bad-size, bad-address, flood, endpoint-gone, shutdown,\n"
			 "a guest exception), or 1 when it could not be started.\n",
		.fn = cmd_uvm_run,
		.flags = NVX_CMD_NO_JSON,
	},
	{
		.name = "serve",
		.summary = "the minimal system process of user VMs",
		.usage = nvx_uvm_serve_usage,
		.fn = cmd_uvm_serve,
		.flags = NVX_CMD_NO_JSON,
	},
	{ }
};
