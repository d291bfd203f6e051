// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the object "uvm", light user VMs (include/uapi/nvx/uvm.h).
 *
 *   uvm run [--mem SIZE] [--vcpus 1] [--slow-path] [--stats]
 *	     [--policy FILE --tenant NAME | --root DIR] [--verbose] [--uintr] [--poll]
 *	     [--net IFNAME,IP[/PREFIX]]
 *	     [--clones N [--clone-args ARGS]] IMAGE [-- ARGS]
 *   uvm run --template FILE [--clones N [--clone-args ARGS]] [-- ARGS]
 *				clones of a template file
 *   uvm template -o FILE [run's options but --clones] IMAGE [-- ARGS]
 *				boot IMAGE to its ready point, write it to
 *				FILE as a template
 *				start a user VM; its messages go to a system
 *				process (a forked `uvm serve`) that serves
 *				its stdin and stdout, and files when the
 *				tenant may use them
 *   uvm serve --ep-fd FD [--policy FILE --tenant NAME | --root DIR]
 *	       [--verbose] [--uintr] [--poll] [--debug-forbidden-syscall]
 *				the confined system process of one tenant,
 *				on an endpoint fd it inherited (sys.c)
 *   uvm serve --listen ADDR:PORT [--warm N] [--max N] [--timeout S]
 *	       [--lifetime S] [--mem SIZE] [tenant options]
 *	       IMAGE | --template FILE [-- ARGS]
 *				the function server: a user VM per TCP
 *				connection (fnserve.c)
 *
 * The VMM is libnvx's (nvx_uvm.h), shared with nvx-bench and the
 * selftests. Neither command prints JSON: their output is the guest's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <nvx/srq.h>
#include <nvx/uvm.h>

#include "nvxtool.h"
#include "nvx_uvm.h"
#include "sys.h"

/*
 * VMs one nvxtool serves at once: its system process runs a worker per
 * VM that made a request (sys_int.h, NVX_SYS_MAX_WORKERS), so past 256
 * live VMs requests would get -EAGAIN. The endpoint takes up to
 * NVX_UVM_MAX_VMS; a system process of its own can serve that many.
 */
#define NVX_UVM_TOOL_MAX_VMS	256

enum {
	NVX_UVM_OPT_MEM = 0x100,
	NVX_UVM_OPT_VCPUS,
	NVX_UVM_OPT_SLOW,
	NVX_UVM_OPT_STATS,
	NVX_UVM_OPT_EP_FD,
	NVX_UVM_OPT_POLICY,
	NVX_UVM_OPT_TENANT,
	NVX_UVM_OPT_ROOT,
	NVX_UVM_OPT_VERBOSE,
	NVX_UVM_OPT_FORBIDDEN,
	NVX_UVM_OPT_LISTEN,
	NVX_UVM_OPT_WARM,
	NVX_UVM_OPT_MAX,
	NVX_UVM_OPT_TIMEOUT,
	NVX_UVM_OPT_LIFETIME,
	NVX_UVM_OPT_UINTR,
	NVX_UVM_OPT_POLL,
	NVX_UVM_OPT_CLONES,
	NVX_UVM_OPT_CLONE_ARGS,
	NVX_UVM_OPT_TEMPLATE,
	NVX_UVM_OPT_NET,
	NVX_UVM_OPT_OUTPUT = 'o',
};

/**
 * struct nvx_uvm_tenant_args - who the system process serves
 * @policy: --policy FILE.
 * @tenant: --tenant NAME.
 * @root: --root DIR.
 * @verbose: --verbose.
 * @uintr: --uintr: the system process's event loop (struct nvx_sys_opts).
 * @poll: --poll: the endpoint's SQ poller (NVX_UVM_EP_IOC_POLLER).
 */
struct nvx_uvm_tenant_args {
	const char *policy;
	const char *tenant;
	const char *root;
	bool verbose;
	bool uintr;
	bool poll;
};

/*
 * Take option @c if it names the tenant or says how its system process
 * runs (--verbose, --uintr): 1, else 0.
 */
static int nvx_uvm_tenant_opt(struct nvx_uvm_tenant_args *a, int c)
{
	switch (c) {
	case NVX_UVM_OPT_POLICY:
		a->policy = optarg;
		return 1;
	case NVX_UVM_OPT_TENANT:
		a->tenant = optarg;
		return 1;
	case NVX_UVM_OPT_ROOT:
		a->root = optarg;
		return 1;
	case NVX_UVM_OPT_VERBOSE:
		a->verbose = true;
		return 1;
	case NVX_UVM_OPT_UINTR:
		a->uintr = true;
		return 1;
	case NVX_UVM_OPT_POLL:
		a->poll = true;
		return 1;
	}
	return 0;
}

/* --poll: the endpoint's SQ poller, with its defaults. */
static int nvx_uvm_poll_ep(int ep_fd)
{
	struct nvx_uvm_poller p = { .flags = NVX_UVM_POLLER_SQ };
	int ret = nvx_uvm_set_poller(ep_fd, &p);

	if (ret)
		nvx_err("uvm: --poll: NVX_UVM_EP_IOC_POLLER: %s%s",
			strerror(-ret),
			ret == -EPERM ? " (needs CAP_SYS_NICE)" : "");
	return ret ? NVX_EXIT_FAIL : 0;
}

/* The tenant the options name: the policy file's, --root's or the default. */
static int nvx_uvm_tenant(struct nvx_ctx *ctx,
			  const struct nvx_uvm_tenant_args *a,
			  struct nvx_sys_tenant *t)
{
	if (a->root && (a->policy || a->tenant))
		return nvx_usage_error(ctx,
				       "--root and --policy/--tenant exclude each other");
	if (!a->policy != !a->tenant)
		return nvx_usage_error(ctx, "--policy and --tenant go together");
	if (a->policy)
		return nvx_sys_policy_load(a->policy, a->tenant, t);
	if (a->root) {
		if (!a->root[0] || nvx_sys_tenant_root(t, a->root))
			return nvx_usage_error(ctx, "bad --root: '%s'", a->root);
		return NVX_EXIT_OK;
	}
	nvx_sys_tenant_default(t);
	return NVX_EXIT_OK;
}

/* --mem SIZE: 2M to 4G. */
static int nvx_uvm_parse_mem(struct nvx_ctx *ctx, const char *arg,
			     uint64_t *mem)
{
	if (nvx_parse_size(arg, mem) || *mem < (2ULL << 20) ||
	    *mem > (4ULL << 30))
		return nvx_usage_error(ctx, "--mem: a size from 2M to 4G, not %s",
				       arg);
	return NVX_EXIT_OK;
}

/* --template FILE: the template it holds, or an exit status. */
static int nvx_uvm_tmpl_open(struct nvx_ctx *ctx, const char *path,
			     struct nvx_uvm_tmpl *t)
{
	const char *where;
	int fd, ret;

	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		nvx_err("uvm: template %s: %s", path, strerror(errno));
		return NVX_EXIT_FAIL;
	}
	ret = nvx_uvm_tmpl_load(t, ctx->fd, fd, 0, &where);
	close(fd);
	if (ret) {
		nvx_err("uvm: template %s: %s: %s", path, where,
			strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* `uvm serve --listen ADDR:PORT ... IMAGE [-- ARGS]`: fnserve.c. */
static int nvx_uvm_fn_serve(struct nvx_ctx *ctx, struct nvx_fn_opts *fo,
			    const struct nvx_sys_tenant *t, const char *tmpl,
			    int argc, char **argv)
{
	static char path[PATH_MAX], *gargv[64];
	static struct nvx_uvm_tmpl tm;
	struct sockaddr_storage ss;
	const char *image;
	socklen_t len;
	int ret, i, n;

	if (nvx_fn_parse_addr(fo->listen, &ss, &len))
		return nvx_usage_error(ctx,
				       "--listen: ADDR:PORT or [ADDR6]:PORT, not '%s'",
				       fo->listen);
	if (tmpl) {
		if (fo->mem)
			return nvx_usage_error(ctx,
					       "--template: the RAM is the template's (no --mem)");
		if (optind < argc && strcmp(argv[optind - 1], "--"))
			return nvx_usage_error(ctx,
					       "--template: no IMAGE (ARGS after --)");
		image = NULL;
	} else {
		if (optind >= argc)
			return nvx_usage_error(ctx,
					       "--listen: IMAGE is required");
		image = argv[optind++];
		if (!fo->mem)
			fo->mem = 4ULL << 20;
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	n = argc - optind;
	if (n + 1 > (int)NVX_ARRAY_SIZE(gargv) - 1)
		return nvx_usage_error(ctx, "too many guest arguments");
	if (!fo->max || fo->max + fo->warm > NVX_UVM_TOOL_MAX_VMS)
		return nvx_usage_error(ctx,
				       "--max: 1 or more, and --max plus --warm at most %d",
				       NVX_UVM_TOOL_MAX_VMS);
	if (image) {
		ret = nvx_uvm_find_image(image, path, sizeof(path));
		if (ret) {
			nvx_err("uvm: image %s: %s", image, strerror(-ret));
			return NVX_EXIT_FAIL;
		}
		gargv[0] = (char *)image;
		fo->image = path;
	} else {
		ret = nvx_uvm_tmpl_open(ctx, tmpl, &tm);
		if (ret)
			return ret;
		gargv[0] = tm.name;
		fo->tmpl = &tm;
	}
	for (i = 0; i < n; i++)
		gargv[i + 1] = argv[optind + i];
	/* a template's own arguments unless ARGS are given */
	fo->argc = image || n ? n + 1 : 0;
	fo->argv = gargv;
	ret = nvx_open_device(ctx);
	if (!ret)
		ret = nvx_fn_serve(ctx->fd, t, fo);
	if (!image)
		nvx_uvm_tmpl_free(&tm);
	return ret;
}

static int cmd_uvm_serve(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ep-fd", required_argument, NULL, NVX_UVM_OPT_EP_FD },
		{ "debug-forbidden-syscall", no_argument, NULL,
		  NVX_UVM_OPT_FORBIDDEN },
		{ "policy", required_argument, NULL, NVX_UVM_OPT_POLICY },
		{ "tenant", required_argument, NULL, NVX_UVM_OPT_TENANT },
		{ "root", required_argument, NULL, NVX_UVM_OPT_ROOT },
		{ "verbose", no_argument, NULL, NVX_UVM_OPT_VERBOSE },
		{ "uintr", no_argument, NULL, NVX_UVM_OPT_UINTR },
		{ "poll", no_argument, NULL, NVX_UVM_OPT_POLL },
		{ "listen", required_argument, NULL, NVX_UVM_OPT_LISTEN },
		{ "warm", required_argument, NULL, NVX_UVM_OPT_WARM },
		{ "max", required_argument, NULL, NVX_UVM_OPT_MAX },
		{ "timeout", required_argument, NULL, NVX_UVM_OPT_TIMEOUT },
		{ "lifetime", required_argument, NULL, NVX_UVM_OPT_LIFETIME },
		{ "mem", required_argument, NULL, NVX_UVM_OPT_MEM },
		{ "template", required_argument, NULL, NVX_UVM_OPT_TEMPLATE },
		{ }
	};
	struct nvx_fn_opts fo = { .max = 64, .timeout = 30 };
	const char *tmpl = NULL;
	struct nvx_uvm_tenant_args ta = { };
	struct nvx_sys_opts so = { };
	bool fn_only = false;
	struct nvx_sys_tenant t;
	unsigned long long v;
	int c, ret, ep_fd = -1;

	opterr = 0;
	optind = 0;
	/* "+": options only before IMAGE; what follows goes to the guest */
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (nvx_uvm_tenant_opt(&ta, c))
			continue;
		switch (c) {
		case NVX_UVM_OPT_EP_FD:
			/* 0-2 are the guests' stdio */
			if (nvx_parse_uint(optarg, INT_MAX, &v) || v < 3)
				return nvx_usage_error(ctx, "bad --ep-fd: %s",
						       optarg);
			ep_fd = v;
			break;
		case NVX_UVM_OPT_FORBIDDEN:
			so.debug_forbidden = true;
			break;
		case NVX_UVM_OPT_LISTEN:
			fo.listen = optarg;
			break;
		case NVX_UVM_OPT_WARM:
		case NVX_UVM_OPT_MAX:
			if (nvx_parse_uint(optarg, NVX_UVM_TOOL_MAX_VMS, &v))
				return nvx_usage_error(ctx, "%s: 0 to %d, not %s",
						       c == NVX_UVM_OPT_WARM ?
						       "--warm" : "--max",
						       NVX_UVM_TOOL_MAX_VMS, optarg);
			*(c == NVX_UVM_OPT_WARM ? &fo.warm : &fo.max) = v;
			fn_only = true;
			break;
		case NVX_UVM_OPT_TIMEOUT:
		case NVX_UVM_OPT_LIFETIME:
			if (nvx_parse_uint(optarg, 86400, &v))
				return nvx_usage_error(ctx,
						       "%s: seconds, 0 to 86400, not %s",
						       c == NVX_UVM_OPT_TIMEOUT ?
						       "--timeout" : "--lifetime",
						       optarg);
			*(c == NVX_UVM_OPT_TIMEOUT ? &fo.timeout :
			  &fo.lifetime) = v;
			fn_only = true;
			break;
		case NVX_UVM_OPT_MEM:
			ret = nvx_uvm_parse_mem(ctx, optarg, &fo.mem);
			if (ret)
				return ret;
			fn_only = true;
			break;
		case NVX_UVM_OPT_TEMPLATE:
			tmpl = optarg;
			fn_only = true;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (fo.listen && (ep_fd >= 0 || so.debug_forbidden))
		return nvx_usage_error(ctx,
				       "--listen excludes --ep-fd and --debug-forbidden-syscall");
	if (!fo.listen && fn_only)
		return nvx_usage_error(ctx,
				       "--warm, --max, --timeout, --lifetime, --mem and --template need --listen");
	if (!fo.listen && optind < argc)
		return nvx_usage_error(ctx, "unexpected argument: %s",
				       argv[optind]);
	if (!fo.listen && ep_fd < 0)
		return nvx_usage_error(ctx, "--ep-fd or --listen is required");
	ret = nvx_uvm_tenant(ctx, &ta, &t);
	if (ret)
		return ret;
	if (fo.listen) {
		fo.verbose = ta.verbose;
		fo.uintr = ta.uintr;
		fo.poll = ta.poll;
		return nvx_uvm_fn_serve(ctx, &fo, &t, tmpl, argc, argv);
	}
	if (ta.poll) {
		ret = nvx_uvm_poll_ep(ep_fd);
		if (ret)
			return ret;
	}
	so.verbose = ta.verbose;
	if (ta.uintr) {
		ret = nvx_open_device(ctx);
		if (ret)
			return ret;
		so.uintr = true;
		so.nvx_fd = ctx->fd;
	}
	return nvx_sys_serve(ep_fd, &t, &so);
}

/* -------------------------------------------------------------- run */

struct nvx_uvm_run_args {
	uint64_t mem;
	int slow;
	int stats;
	unsigned int clones;	/* --clones N */
	const char *clone_args;	/* --clone-args STR */
	const char *tmpl;	/* run --template FILE */
	const char *out;	/* template -o FILE */
	bool mem_set;		/* --mem given */
	bool net_set;		/* --net given */
	struct nvx_uvm_net net;	/* --net IFNAME,IP[/PREFIX] */
	struct nvx_uvm_tenant_args ta;
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
		"vm %u: doorbells %llu, polled %llu, messages in %llu, out %llu, bulk out %llu B, in %llu B, irqs %llu, denied %llu, limited %llu, vm2vm out %llu, in %llu; KVM: userspace_exits %lld, io_exits %lld; VMM kicks %llu\n",
		st.vm_id, (unsigned long long)st.doorbells,
		(unsigned long long)st.polled,
		(unsigned long long)st.msgs_in,
		(unsigned long long)st.msgs_out,
		(unsigned long long)st.bulk_out,
		(unsigned long long)st.bulk_in, (unsigned long long)st.irqs,
		(unsigned long long)st.denied, (unsigned long long)st.limited,
		(unsigned long long)st.vm2vm_out,
		(unsigned long long)st.vm2vm_in,
		(long long)nvx_uvm_kvm_stat(vm->stats_fd, "userspace_exits"),
		(long long)nvx_uvm_kvm_stat(vm->stats_fd, "io_exits"),
		(unsigned long long)vm->kicks);
	if (vm->srq_fd >= 0) {
		struct nvx_srq_stats ss = { .queue = NVX_SRQ_ALL_QUEUES };

		if (ioctl(vm->srq_fd, NVX_SRQ_IOC_STATS, &ss))
			return;
		fprintf(stderr,
			"vm %u net: rx %llu frames %llu B, drops no-buf %llu cq-full %llu, release garbage %llu; tx kicks %llu, sent %llu, dropped %llu\n",
			st.vm_id, (unsigned long long)ss.rx_packets,
			(unsigned long long)ss.rx_bytes,
			(unsigned long long)ss.drops_no_buf,
			(unsigned long long)ss.drops_cq_full,
			(unsigned long long)ss.release_garbage,
			(unsigned long long)vm->net_kicks,
			(unsigned long long)vm->net_sent,
			(unsigned long long)vm->net_dropped);
	}
}

/* --net IFNAME,IP[/PREFIX] */
static int nvx_uvm_parse_net(struct nvx_ctx *ctx, const char *arg,
			     struct nvx_uvm_net *n)
{
	const char *comma = strchr(arg, ',');
	char name[IF_NAMESIZE];

	memset(n, 0, sizeof(*n));
	if (!comma || comma == arg || comma - arg >= IF_NAMESIZE ||
	    nvx_uvm_net_parse_ip(n, comma + 1))
		return nvx_usage_error(ctx,
				       "--net: IFNAME,IP[/PREFIX], not '%s'", arg);
	memcpy(name, arg, comma - arg);
	name[comma - arg] = '\0';
	n->ifindex = if_nametoindex(name);
	if (!n->ifindex)
		return nvx_usage_error(ctx, "--net: no interface '%s'", name);
	return NVX_EXIT_OK;
}

/*
 * The command line of `uvm run` and, with @make_tmpl, of `uvm template`
 * (-o FILE, no --clones).
 */
static int nvx_uvm_run_parse(struct nvx_ctx *ctx, int argc, char **argv,
			     struct nvx_uvm_run_args *a, bool make_tmpl)
{
	static const struct option opts[] = {
		{ "mem", required_argument, NULL, NVX_UVM_OPT_MEM },
		{ "vcpus", required_argument, NULL, NVX_UVM_OPT_VCPUS },
		{ "slow-path", no_argument, NULL, NVX_UVM_OPT_SLOW },
		{ "stats", no_argument, NULL, NVX_UVM_OPT_STATS },
		{ "policy", required_argument, NULL, NVX_UVM_OPT_POLICY },
		{ "tenant", required_argument, NULL, NVX_UVM_OPT_TENANT },
		{ "root", required_argument, NULL, NVX_UVM_OPT_ROOT },
		{ "verbose", no_argument, NULL, NVX_UVM_OPT_VERBOSE },
		{ "uintr", no_argument, NULL, NVX_UVM_OPT_UINTR },
		{ "poll", no_argument, NULL, NVX_UVM_OPT_POLL },
		{ "clones", required_argument, NULL, NVX_UVM_OPT_CLONES },
		{ "clone-args", required_argument, NULL,
		  NVX_UVM_OPT_CLONE_ARGS },
		{ "template", required_argument, NULL, NVX_UVM_OPT_TEMPLATE },
		{ "output", required_argument, NULL, NVX_UVM_OPT_OUTPUT },
		{ "net", required_argument, NULL, NVX_UVM_OPT_NET },
		{ }
	};
	int c, ret;

	opterr = 0;
	optind = 0;
	/* "+": options only before IMAGE; what follows goes to the guest */
	while ((c = getopt_long(argc, argv, "+:o:", opts, NULL)) != -1) {
		if (nvx_uvm_tenant_opt(&a->ta, c))
			continue;
		if (make_tmpl && (c == NVX_UVM_OPT_CLONES ||
				  c == NVX_UVM_OPT_CLONE_ARGS ||
				  c == NVX_UVM_OPT_TEMPLATE))
			return nvx_usage_error(ctx,
					       "uvm template: no --clones, --clone-args or --template");
		if (!make_tmpl && c == NVX_UVM_OPT_OUTPUT)
			return nvx_usage_error(ctx,
					       "uvm run: -o is uvm template's");
		switch (c) {
		case NVX_UVM_OPT_MEM:
			ret = nvx_uvm_parse_mem(ctx, optarg, &a->mem);
			if (ret)
				return ret;
			a->mem_set = true;
			break;
		case NVX_UVM_OPT_TEMPLATE:
			a->tmpl = optarg;
			break;
		case NVX_UVM_OPT_OUTPUT:
			a->out = optarg;
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
		case NVX_UVM_OPT_CLONES:
			ret = nvx_opt_u32(ctx, "--clones", optarg, 1,
					  NVX_UVM_TOOL_MAX_VMS - 1, &a->clones);
			if (ret)
				return ret;
			break;
		case NVX_UVM_OPT_CLONE_ARGS:
			a->clone_args = optarg;
			break;
		case NVX_UVM_OPT_NET:
			ret = nvx_uvm_parse_net(ctx, optarg, &a->net);
			if (ret)
				return ret;
			a->net_set = true;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (a->net_set && (make_tmpl || a->clones || a->tmpl))
		return nvx_usage_error(ctx,
				       "--net: one fresh VM (no template, no --clones): a clone's memory is shared");
	if (make_tmpl && !a->out)
		return nvx_usage_error(ctx, "-o FILE is required");
	if (a->tmpl) {
		if (a->mem_set)
			return nvx_usage_error(ctx,
					       "--template: the RAM is the template's (no --mem)");
		if (!a->clones)
			a->clones = 1;
		if (optind < argc && strcmp(argv[optind - 1], "--"))
			return nvx_usage_error(ctx,
					       "--template: no IMAGE (ARGS after --)");
	} else {
		if (a->clone_args && !a->clones)
			return nvx_usage_error(ctx,
					       "--clone-args needs --clones");
		if (optind >= argc)
			return nvx_usage_error(ctx, "IMAGE is required");
		a->image = argv[optind++];
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	a->argc = argc - optind;
	a->argv = argv + optind;
	return NVX_EXIT_OK;
}

/*
 * The tenant's endpoint for @vms VMs (its policy and poller set), and
 * its system process forked on it: *@ep_fd and *@sys, or an exit status.
 */
static int nvx_uvm_start_sys(struct nvx_ctx *ctx,
			     const struct nvx_uvm_run_args *a,
			     unsigned int vms, int *ep_fd, pid_t *sys)
{
	struct nvx_uvm_endpoint ep = { .max_vms = vms };
	struct nvx_sys_opts so = { .policy_set = true, .vms = vms };
	struct nvx_sys_tenant t;
	int ret;

	ret = nvx_uvm_tenant(ctx, &a->ta, &t);
	if (ret)
		return ret;
	so.verbose = a->ta.verbose;
	so.uintr = a->ta.uintr;
	ret = nvx_ioctl(ctx, NVX_IOC_UVM_ENDPOINT, &ep, "NVX_IOC_UVM_ENDPOINT");
	if (ret)
		return ret;
	/* the policy is in place before the VM can send anything */
	ret = nvx_sys_apply_policy(ep.fd, &t, so.verbose);
	if (!ret && a->ta.poll)
		ret = nvx_uvm_poll_ep(ep.fd);
	if (ret) {
		close(ep.fd);
		return ret;
	}

	fflush(NULL);
	*sys = fork();
	if (*sys < 0) {
		nvx_err("uvm: fork: %s", strerror(errno));
		close(ep.fd);
		return NVX_EXIT_FAIL;
	}
	if (!*sys) {
		/* the system process: the endpoint, stdin and stdout */
		if (so.uintr)
			so.nvx_fd = ctx->fd;
		else
			close(ctx->fd);
		_exit(nvx_sys_serve(ep.fd, &t, &so));
	}
	*ep_fd = ep.fd;
	return NVX_EXIT_OK;
}

/* The system process ends once every VM is gone; @stop: kill it first. */
static void nvx_uvm_end_sys(pid_t sys, bool stop)
{
	int st;

	if (stop)
		kill(sys, SIGTERM);
	if (waitpid(sys, &st, 0) == sys && !stop &&
	    !(WIFEXITED(st) && !WEXITSTATUS(st)))
		nvx_warn("uvm: the system process ended with status %#x", st);
}

/*
 * The guest's argv in @gargv (@name or IMAGE, then ARGS; IMAGE's path in
 * @path) and the VM's options in @o: NVX_EXIT_OK or an exit status.
 */
static int nvx_uvm_guest(const struct nvx_uvm_run_args *a, const char *name,
			 char *path, size_t n, char **gargv,
			 struct nvx_uvm_opts *o)
{
	int i, ret;

	if (!name) {
		ret = nvx_uvm_find_image(a->image, path, n);
		if (ret) {
			nvx_err("uvm: image %s: %s", a->image, strerror(-ret));
			return NVX_EXIT_FAIL;
		}
	}
	gargv[0] = (char *)(name ? name : a->image);
	for (i = 0; i < a->argc; i++)
		gargv[i + 1] = a->argv[i];
	o->mem = a->mem;
	o->image = name ? NULL : path;
	o->argc = a->argc + 1;
	o->argv = gargv;
	o->slow = a->slow;
	o->net = a->net_set ? &a->net : NULL;
	return NVX_EXIT_OK;
}

static int cmd_uvm_run(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_uvm_run_args a = { .mem = 4ULL << 20 };
	struct nvx_uvm_opts o = { 0 };
	char path[PATH_MAX], *gargv[64];
	struct nvx_uvm_tmpl *t = NULL;
	struct nvx_uvm_vm vm;
	unsigned int started;
	const char *where;
	int ret, ep_fd;
	pid_t sys;

	ret = nvx_uvm_run_parse(ctx, argc, argv, &a, false);
	if (ret)
		return ret;
	if (a.argc + 1 > (int)NVX_ARRAY_SIZE(gargv))
		return nvx_usage_error(ctx, "too many guest arguments");
	if (a.tmpl) {
		t = calloc(1, sizeof(*t));
		if (!t) {
			nvx_err("uvm: %s", strerror(ENOMEM));
			return NVX_EXIT_FAIL;
		}
		ret = nvx_uvm_tmpl_open(ctx, a.tmpl, t);
		if (ret) {
			free(t);
			return ret;
		}
	}
	ret = nvx_uvm_guest(&a, t ? t->name : NULL, path, sizeof(path), gargv,
			    &o);
	if (ret)
		return ret;
	/* the template's VM (unless loaded), then its clones */
	ret = nvx_uvm_start_sys(ctx, &a, a.clones + !t, &ep_fd, &sys);
	if (ret) {
		if (t)
			nvx_uvm_tmpl_free(t);
		free(t);
		return ret;
	}

	o.ep_fd = ep_fd;
	if (a.clones) {
		/* with a template file and no ARGS: the template's */
		if (t && !a.argc)
			o.argc = 0;
		/* it closes ep_fd once the clones are attached */
		ret = nvx_uvm_run_clones(ctx, &o, t, a.clones, a.clone_args,
					 a.stats, &started);
		free(t);
		/* the system process waits for every clone's VM_GONE notice */
		nvx_uvm_end_sys(sys, started < a.clones);
		return ret;
	}
	ret = nvx_uvm_create(&vm, ctx->fd, &o, &where);
	/* from now on only the system process holds the endpoint */
	close(ep_fd);
	if (ret) {
		nvx_err("uvm: %s: %s", where, strerror(-ret));
		nvx_uvm_destroy(&vm);
		nvx_uvm_end_sys(sys, true);
		return NVX_EXIT_FAIL;
	}
	ret = nvx_uvm_run(&vm);
	if (a.stats)
		nvx_uvm_print_stats(&vm);
	ret = nvx_uvm_report(&vm, ret);
	nvx_uvm_destroy(&vm);	/* the system process sees VM_GONE */
	nvx_uvm_end_sys(sys, false);
	return ret;
}

/*
 * `uvm template -o FILE IMAGE [-- ARGS]`: boot IMAGE to its ready point
 * (its messages served by a system process, as for uvm run), freeze it
 * and write the template to FILE (through a new FILE.XXXXXX, renamed).
 */
static int cmd_uvm_template(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_uvm_run_args a = { .mem = 4ULL << 20 };
	char path[PATH_MAX], tmp[PATH_MAX], *gargv[64];
	struct nvx_uvm_opts o = { 0 };
	struct nvx_uvm_tmpl *t;
	int ret, ep_fd, fd;
	const char *where;
	struct stat st;
	pid_t sys;

	ret = nvx_uvm_run_parse(ctx, argc, argv, &a, true);
	if (ret)
		return ret;
	if (a.argc + 1 > (int)NVX_ARRAY_SIZE(gargv))
		return nvx_usage_error(ctx, "too many guest arguments");
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", a.out) >= (int)sizeof(tmp))
		return nvx_usage_error(ctx, "-o: name too long");
	ret = nvx_uvm_guest(&a, NULL, path, sizeof(path), gargv, &o);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t) {
		nvx_err("uvm: %s", strerror(ENOMEM));
		return NVX_EXIT_FAIL;
	}
	ret = nvx_uvm_start_sys(ctx, &a, 1, &ep_fd, &sys);
	if (ret) {
		free(t);
		return ret;
	}
	o.ep_fd = ep_fd;
	ret = nvx_uvm_tmpl_make(t, ctx->fd, &o, &where);
	close(ep_fd);
	/* the VM is gone: the system process ends (told to if it failed) */
	nvx_uvm_end_sys(sys, ret);
	if (ret == -ENOEXEC) {
		if (t->reason)
			nvx_err("uvm: template: the guest was stopped before its ready point: %s",
				nvx_uvm_reason_name(t->reason));
		else
			nvx_err("uvm: template: the guest exited with status %u before its ready point",
				t->exit_status);
		free(t);
		return NVX_UVM_EXIT_STOPPED;
	}
	if (ret) {
		nvx_err("uvm: template: %s: %s", where, strerror(-ret));
		free(t);
		return ret == -EBUSY ? NVX_UVM_EXIT_STOPPED : NVX_EXIT_FAIL;
	}
	/* a new file of our own beside FILE, renamed over it when whole */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd >= 0 && fchmod(fd, 0644) < 0) {
		close(fd);
		unlink(tmp);
		fd = -1;
	}
	if (fd < 0) {
		ret = -errno;
		where = "create";
	} else {
		ret = nvx_uvm_tmpl_save(t, fd, &where);
		if (!ret && fsync(fd) < 0) {
			ret = -errno;
			where = "fsync";
		}
		if (!ret && fstat(fd, &st) < 0) {
			ret = -errno;
			where = "fstat";
		}
		close(fd);
		if (!ret && rename(tmp, a.out) < 0) {
			ret = -errno;
			where = "rename";
		}
		if (ret)
			unlink(tmp);
	}
	nvx_uvm_tmpl_free(t);
	free(t);
	if (ret) {
		nvx_err("uvm: template %s: %s: %s", a.out, where,
			strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	if (a.stats)
		fprintf(stderr, "template %s: %llu KiB of guest RAM, file %lld KiB\n",
			a.out, (unsigned long long)(o.mem >> 10),
			(long long)(st.st_size >> 10));
	return NVX_EXIT_OK;
}

/* What --policy, --tenant and --root mean, in both usages. */
#define NVX_UVM_TENANT_HELP						\
	"The tenant is the policy file FILE's [tenant NAME] section, or with\n" \
	"--root DIR one whose root is DIR and who may read files there\n"	\
	"(openat read-only, read, pread, lseek, fstat, getdents, close) and\n" \
	"make the default calls and getrandom; without either, the default\n" \
	"tenant: guest writes to fd 1 and 2, reads of fd 0, exit, clock, READY and\n" \
	"IPC (a ping service: the reply carries the request's first 8 payload\n" \
	"bytes plus one). A call the tenant may not make completes with\n"	\
	"-EPERM; the endpoint's kernel policy denies it first. A malformed\n" \
	"FILE is a usage error (2), with its line. --verbose prints the\n"	\
	"policy and the seccomp filter's size and install time on stderr.\n" \
	"With --uintr the system process runs an event loop: the endpoint\n"	\
	"posts a user interrupt to it per arrival batch and it takes requests\n" \
	"with nonblocking RECVs, waiting in NVX_IOC_UINTR_WAIT when there are\n" \
	"none (needs CONFIG_NVX_UINTR); with --verbose it says at the end how\n" \
	"many user interrupts it took (not under --listen, whose system\n"	\
	"process runs until it is stopped).\n"				\
	"With --poll the endpoint gets a kernel poller (NVX_UVM_EP_IOC_POLLER,\n" \
	"its defaults; needs CAP_SYS_NICE): guests need no doorbell while it\n" \
	"is awake. Documentation/nvx/uvm.rst, \"The poller\".\n"		\
	"Documentation/nvx/uvm-sys.rst describes calls, checks and FILE.\n"

static const char nvx_uvm_serve_usage[] =
	"--ep-fd FD [--policy FILE --tenant NAME | --root DIR] [--verbose] [--uintr] [--poll] [--debug-forbidden-syscall]\n"
	"       uvm serve --listen ADDR:PORT [--warm N] [--max N] [--timeout S] [--lifetime S] [--mem SIZE] [--policy FILE --tenant NAME | --root DIR] [--verbose] [--uintr] [--poll] IMAGE [-- ARGS...]\n"
	"       uvm serve --listen ADDR:PORT --template FILE [the options above but --mem] [-- ARGS...]\n"
	"\n"
	"With --listen, the function server: listens on ADDR:PORT (IPv4, or\n"
	"[IPv6]; port 0 picks one; it prints \"listening on ADDR:PORT\") and\n"
	"gives each TCP connection a user VM of IMAGE (RAM SIZE, default 4M):\n"
	"one of N made ahead of demand (--warm, default 0; each is handed out\n"
	"once, then replaced), or one made for it. The guest says READY, then\n"
	"its fd 0 and 1 are the connection; when it exits, crashes or is\n"
	"stopped, the connection is closed (the client reads EOF). At most\n"
	"--max connections (default 64; --max plus --warm at most 256) are\n"
	"served at once, more wait in the listen backlog. A client silent or\n"
	"not reading for --timeout seconds (default 30, 0: no limit) fails the\n"
	"guest's READ or WRITE with -EAGAIN; a VM serving one connection for\n"
	"--lifetime seconds (default 0: no limit) is stopped. One system\n"
	"process of the tenant serves all the VMs. Runs until SIGTERM or\n"
	"SIGINT, then stops every VM and exits 0. With --template FILE (made by\n"
	"uvm template of a guest whose ready point comes before its READY) each\n"
	"VM is a clone of the template instead of a fresh boot of an IMAGE:\n"
	"it resumes at the ready point with its own id and seed, and ARGS (if\n"
	"given) as its arguments.\n"
	"\n"
	"Without --listen:\n"
	"The system process of one tenant. Serves the endpoint FD (inherited\n"
	"from the process that made it with NVX_IOC_UVM_ENDPOINT) with one\n"
	"worker thread per guest thread and one fd table per VM: guest fds 0,\n"
	"1 and 2 are this process's stdin, stdout and stderr, files the guest\n"
	"opens get fds 3 to 63. Exits when every VM that attached is gone.\n"
	"`uvm run` forks one of these per VM.\n"
	"\n"
	NVX_UVM_TENANT_HELP
	"\n"
	"It sets the tenant's kernel policy on FD, then confines itself before\n"
	"it serves: opens the root, closes every other fd, becomes the\n"
	"tenant's uid and gid (when run as root), sets no_new_privs and\n"
	"installs a seccomp filter that kills it for any other system call.\n"
	"--debug-forbidden-syscall then calls getppid(2): it must die of SIGSYS.\n";

const struct nvx_cmd nvx_uvm_cmds[] = {
	{
		.name = "run",
		.summary = "run a guest image in a light user VM",
		.usage =
			 "[--mem SIZE] [--vcpus 1] [--slow-path] [--stats] [--policy FILE --tenant NAME | --root DIR] [--verbose] [--uintr] [--poll] [--net IFNAME,IP[/PREFIX]] [--clones N [--clone-args ARGS]] IMAGE [-- ARGS...]\n"
			 "       uvm run --template FILE [--clones N [--clone-args ARGS]] [other options but --mem] [-- ARGS...]\n"
			 "\n"
			 "Starts a KVM VM with one vCPU whose RAM (SIZE, default 4M) is a grant\n"
			 "from the nvx pool, loads IMAGE (a flat image from tools/nvx/guest:\n"
			 "a path, or a name looked up in $NVX_GUEST_DIR, in guest/ beside\n"
			 "nvxtool and in /usr/lib/nvx/guest) and passes ARGS to it. A forked\n"
			 "system process (nvxtool uvm serve) serves the VM's messages: the guest's\n"
			 "fd 0, 1 and 2 are this command's stdin, stdout and stderr. The\n"
			 "tenant's kernel policy is set on the endpoint before the system\n"
			 "process is forked and the VM attached.\n"
			 "\n"
			 NVX_UVM_TENANT_HELP
			 "\n"
			 "The guest's doorbell port writes are handled in the kernel; with\n"
			 "--slow-path they exit to this VMM, which passes them on\n"
			 "(NVX_UVM_CHAN_IOC_KICK): the baseline the fast path is measured against.\n"
			 "--stats prints the VM's counters and KVM's exit counts on stderr.\n"
			 "\n"
			 "With --net IFNAME,IP[/PREFIX] (an nvxsim NIC; prefix 24 by default)\n"
			 "the VM gets a network in its own memory: a shared RX queue set on\n"
			 "IFNAME taking the frames for IP (and ARP asking for it), a TX ring\n"
			 "beside it, 2 MiB of RAM above --mem (rounded up to 2M); the runtime's\n"
			 "net.c answers ARP and ping and gives UDP to the app (udp-echo.img).\n"
			 "Not with --clones or --template. Documentation/nvx/uvm.rst,\n"
			 "\"Networking\".\n"
			 "\n"
			 "With --clones N (1-255) the guest must reach its ready point (the\n"
			 "runtime's ready_point()): there it is frozen into a template (its RAM\n"
			 "sealed, its vCPU state kept), and N clones of it run at once, each\n"
			 "resuming from the ready point with its own VM id, seed and rings and\n"
			 "copy-on-write RAM; with --clone-args ARGS their arguments are ARGS\n"
			 "split at spaces, each word %i replaced by the clone's index (by\n"
			 "default the template's). The exit status is then 0 when every clone\n"
			 "exited 0, else the first other status; --stats prints the template's\n"
			 "and the clones' start times and the pages the clones copied.\n"
			 "Documentation/nvx/uvm.rst, \"Templates and clones\".\n"
			 "\n"
			 "With --template FILE (made by uvm template) no template is made: N\n"
			 "clones (default 1) of the one in FILE run, with ARGS as their\n"
			 "arguments (argv[0] the template's image name; without ARGS the\n"
			 "template's own); the RAM size is the template's. A FILE that is not\n"
			 "a template, is cut short or damaged fails with a message (exit 1).\n"
			 "\n"
			 "Exit status: the guest's exit status (0-255), or 125 when the VM\n"
			 "was stopped (a message on stderr says why: bad-port, bad-ring,\n"
			 "bad-message, bad-size, bad-address, flood, endpoint-gone, over-limit,\n"
			 "no-memory, shutdown, a guest exception), or 1 when it could not be\n"
			 "started, or 2 for a bad command line or policy file.\n",
		.fn = cmd_uvm_run,
		.flags = NVX_CMD_NO_JSON,
	},
	{
		.name = "template",
		.summary = "make a template of a guest at its ready point, in a file",
		.usage =
			 "-o FILE [--mem SIZE] [--slow-path] [--stats] [--policy FILE --tenant NAME | --root DIR] [--verbose] [--uintr] [--poll] IMAGE [-- ARGS...]\n"
			 "\n"
			 "Boots IMAGE with ARGS as uvm run does (its messages served by a\n"
			 "forked system process of the tenant) until the guest reaches its\n"
			 "ready point (the runtime's ready_point()), freezes it there and\n"
			 "writes the template to FILE (through a new FILE.XXXXXX, renamed): the\n"
			 "guest's vCPU state and the pages of its RAM that are not zero. `uvm run\n"
			 "--template FILE` and `uvm serve --listen ... --template FILE` start\n"
			 "clones of it, in any later process of this machine. --stats prints\n"
			 "the RAM and file sizes. Documentation/nvx/uvm.rst, \"Template files\".\n"
			 "\n"
			 "Exit status: 0 when FILE was written; 125 when the guest exited, was\n"
			 "stopped, or had messages in flight before or at its ready point (a\n"
			 "message on stderr says which); 1 when the VM or FILE could not be\n"
			 "made; 2 for a bad command line or policy file.\n",
		.fn = cmd_uvm_template,
		.flags = NVX_CMD_NO_JSON,
	},
	{
		.name = "serve",
		.summary = "the confined system process of a tenant's user VMs",
		.usage = nvx_uvm_serve_usage,
		.fn = cmd_uvm_serve,
		.flags = NVX_CMD_NO_JSON,
	},
	{ }
};
