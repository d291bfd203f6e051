/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvxtool: the reference system process of light user VMs (sys.c; its
 * tenants and policy file: sys_policy.c),
 * behind `nvxtool uvm serve` and `nvxtool uvm run`. One per tenant: it
 * holds the tenant's endpoint, serves its VMs' forwarded calls with one
 * fd table per VM, and runs confined (its own uid, the tenant's root,
 * seccomp). Documentation/nvx/uvm-sys.rst describes it.
 */
#ifndef _NVX_SYS_H
#define _NVX_SYS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <nvx/uvm.h>

#define NVX_SYS_CALL(type)	(1ULL << (type))

/* The default tenant's calls: the guest runtime's stdio, exit, clock, ipc. */
#define NVX_SYS_CALLS_BASE						\
	(NVX_SYS_CALL(NVX_UVM_MSG_IPC) | NVX_SYS_CALL(NVX_UVM_MSG_WRITE) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_READ) | NVX_SYS_CALL(NVX_UVM_MSG_EXIT) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_CLOCK) | NVX_SYS_CALL(NVX_UVM_MSG_READY))

/* --root DIR: the base, getrandom and the read-only file calls. */
#define NVX_SYS_CALLS_RDONLY						\
	(NVX_SYS_CALLS_BASE | NVX_SYS_CALL(NVX_UVM_MSG_GETRANDOM) |		\
	 NVX_SYS_CALL(NVX_UVM_MSG_OPENAT) | NVX_SYS_CALL(NVX_UVM_MSG_CLOSE) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_PREAD) | NVX_SYS_CALL(NVX_UVM_MSG_LSEEK) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_FSTAT) | NVX_SYS_CALL(NVX_UVM_MSG_GETDENTS))

/* The calls that resolve a path, and need a root. */
#define NVX_SYS_CALLS_PATH						\
	(NVX_SYS_CALL(NVX_UVM_MSG_OPENAT) | NVX_SYS_CALL(NVX_UVM_MSG_MKDIR) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_UNLINK) | NVX_SYS_CALL(NVX_UVM_MSG_RENAME))

/* Message types the system process knows by name: 0 .. NVX_SYS_NR_CALLS-1 */
#define NVX_SYS_NR_CALLS	(NVX_UVM_MSG_POLL + 1)

/* Guest fds per VM: 0, 1, 2 are stdio, files get 3 .. NVX_SYS_MAX_FDS-1. */
#define NVX_SYS_MAX_FDS		64

/* struct nvx_sys_tenant.open: what OPENAT may do */
#define NVX_SYS_OPEN_READ	0x1U	/* O_RDONLY, O_RDWR */
#define NVX_SYS_OPEN_WRITE	0x2U	/* O_WRONLY, O_RDWR, O_TRUNC, O_APPEND */
#define NVX_SYS_OPEN_CREATE	0x4U	/* O_CREAT, O_EXCL */

/* The socket calls (and CLOSE, READ, WRITE on their fds). */
#define NVX_SYS_CALLS_NET						\
	(NVX_SYS_CALL(NVX_UVM_MSG_SOCKET) | NVX_SYS_CALL(NVX_UVM_MSG_BIND) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_LISTEN) | NVX_SYS_CALL(NVX_UVM_MSG_ACCEPT) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_CONNECT) | NVX_SYS_CALL(NVX_UVM_MSG_SEND) |	\
	 NVX_SYS_CALL(NVX_UVM_MSG_SOCKRECV) |					\
	 NVX_SYS_CALL(NVX_UVM_MSG_SHUTDOWN) | NVX_SYS_CALL(NVX_UVM_MSG_POLL))

/* Egress rules per tenant, at most. */
#define NVX_SYS_EGRESS_MAX	32

/**
 * struct nvx_sys_cidr - one egress rule of a tenant
 * @family: AF_INET or AF_INET6.
 * @prefix: the prefix length (0..32, 0..128).
 * @allow: true: CONNECT to a matching address is allowed; false: refused.
 * @addr: the network, in network byte order (4 or 16 bytes).
 */
struct nvx_sys_cidr {
	uint8_t family;
	uint8_t prefix;
	bool allow;
	uint8_t addr[16];
};

/* The longest tenant name, without its NUL. */
#define NVX_SYS_NAME_MAX	63

/**
 * struct nvx_sys_tenant - a tenant of the policy file, or of --root
 * @name: the tenant's name ("" for --root and for the default).
 * @root: its root directory; "" for none (no path call is served).
 * @uid: the uid the system process runs as; -1 to keep it.
 * @gid: the gid, with @uid (both or none).
 * @calls: bit T set: its VMs may send message type T (NVX_UVM_MSG_*);
 *	the kernel policy's allow bitmap.
 * @open: NVX_SYS_OPEN_* bits.
 * @vm2vm: its VMs may message each other (NVX_UVM_POLICY_VM2VM).
 * @stop: a VM over a limit is stopped (NVX_UVM_POLICY_STOP).
 * @max_bulk: struct nvx_uvm_policy's; 0 = no limit.
 * @max_in_flight: the same.
 * @rate: the same.
 * @burst: the same.
 * @egress: CONNECT's rules, first match wins; no match: refused.
 * @nr_egress: rules in @egress.
 * @netns: a network namespace file (/run/netns/NAME) the system process
 *	enters before it confines itself; "" to stay in its own.
 */
struct nvx_sys_tenant {
	char name[NVX_SYS_NAME_MAX + 1];
	char root[PATH_MAX];
	int64_t uid;
	int64_t gid;
	uint64_t calls;
	unsigned int open;
	bool vm2vm;
	bool stop;
	uint32_t max_bulk;
	uint32_t max_in_flight;
	uint32_t rate;
	uint32_t burst;
	struct nvx_sys_cidr egress[NVX_SYS_EGRESS_MAX];
	unsigned int nr_egress;
	char netns[PATH_MAX];
};

/*
 * The function server (fnserve.c) and its system process talk over a
 * SOCK_SEQPACKET socket pair, one struct nvx_sys_ctl per packet:
 * NVX_SYS_CTL_CONN carries a client's connection (SCM_RIGHTS, one fd)
 * for VM @vm_id, whose READY then completes with the connection as its
 * fd 0 and 1; NVX_SYS_CTL_RELEASE says VM @vm_id was destroyed (a
 * connection it never took is closed).
 */
#define NVX_SYS_CTL_CONN	1
#define NVX_SYS_CTL_RELEASE	2

struct nvx_sys_ctl {
	uint32_t op;
	uint32_t vm_id;
};

/**
 * struct nvx_sys_opts - how nvx_sys_serve() runs
 * @verbose: say on stderr what it applied (policy, seccomp filter).
 * @debug_forbidden: after confining itself, make a system call the
 *	filter forbids (socket()): the process must die of SIGSYS.
 * @policy_set: the endpoint's policy was set already (uvm run sets it
 *	before it forks the system process).
 * @ctl_fd: the function server's end of the control socket pair; 0 or
 *	-1 for none (uvm run: READY completes at once, guest stdio is the
 *	process's). With one, the process runs until the server closes it.
 * @uintr: the event loop: the endpoint posts a user interrupt to the
 *	serving thread per arrival batch, and the thread takes requests
 *	with nonblocking RECVs, waiting in NVX_IOC_UINTR_WAIT when there
 *	are none, instead of blocking in RECV.
 * @nvx_fd: the nvx device, for @uintr.
 * @vms: without @ctl_fd, the VMs whose VM_GONE notices end the process
 *	(at least every VM that attached): uvm run --clones, whose
 *	template has gone before its clones attach.
 */
struct nvx_sys_opts {
	bool verbose;
	bool debug_forbidden;
	bool policy_set;
	bool uintr;
	int ctl_fd;
	int nvx_fd;
	unsigned int vms;
};

/**
 * struct nvx_fn_opts - the function server's command line (fnserve.c)
 * @listen: "ADDR:PORT" or "[ADDR6]:PORT"; port 0: any.
 * @image: the guest image's path.
 * @argc: its arguments, argv[0] included.
 * @argv: the same.
 * @mem: guest RAM per VM, bytes.
 * @warm: VMs kept made ahead of demand, each handed out once.
 * @max: connections served at once; more wait in the listen backlog.
 * @timeout: seconds a connection may be silent, or not read, before the
 *	guest's READ or WRITE fails with -EAGAIN; 0: no limit.
 * @lifetime: seconds a VM may serve its connection before it is
 *	stopped; 0: no limit.
 * @tmpl: --template FILE's template (lib/tmpl.c): every VM is a clone of
 *	it (@image and @mem unused; @argc 0: the template's arguments).
 * @verbose: say on stderr what happens.
 * @uintr: the system process runs its event loop (struct nvx_sys_opts).
 * @poll: the endpoint gets an SQ poller (NVX_UVM_EP_IOC_POLLER).
 */
struct nvx_uvm_tmpl;

struct nvx_fn_opts {
	const char *listen;
	const char *image;
	int argc;
	char **argv;
	uint64_t mem;
	unsigned int warm;
	unsigned int max;
	unsigned int timeout;
	unsigned int lifetime;
	const struct nvx_uvm_tmpl *tmpl;
	bool verbose;
	bool uintr;
	bool poll;
};

/*
 * The function server: listen, give each connection a user VM of
 * @opt->image, serve them with a forked system process of tenant @t.
 * Runs until SIGTERM or SIGINT. Return: NVX_EXIT_OK or NVX_EXIT_FAIL.
 */
int nvx_fn_serve(int nvx_fd, const struct nvx_sys_tenant *t,
		 const struct nvx_fn_opts *opt);

/* --listen's "ADDR:PORT" or "[ADDR6]:PORT": 0 or -EINVAL (fnserve.c). */
int nvx_fn_parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len);

/* The tenant of neither --policy nor --root: stdio, exit, clock, ipc. */
void nvx_sys_tenant_default(struct nvx_sys_tenant *t);

/*
 * The tenant of --root DIR: the read-only file calls beneath DIR, plus
 * the default's and getrandom. Return: 0, or -ENAMETOOLONG.
 */
int nvx_sys_tenant_root(struct nvx_sys_tenant *t, const char *dir);

/*
 * Parse the policy file @file and fill @t with its tenant @name.
 * Return: NVX_EXIT_OK, or NVX_EXIT_USAGE after printing "FILE:LINE: why"
 * (a malformed file, no such tenant), or NVX_EXIT_FAIL when it cannot be
 * read.
 */
int nvx_sys_policy_load(const char *file, const char *name,
			struct nvx_sys_tenant *t);

/* The kernel policy of @t, for NVX_UVM_EP_IOC_SET_POLICY (vm_id 0). */
void nvx_sys_tenant_policy(const struct nvx_sys_tenant *t,
			   struct nvx_uvm_policy *p);

/*
 * Set @t's kernel policy on the endpoint @ep_fd (and with @verbose, print
 * what the kernel reports back). Return: NVX_EXIT_OK or NVX_EXIT_FAIL
 * after printing why.
 */
int nvx_sys_apply_policy(int ep_fd, const struct nvx_sys_tenant *t,
			 bool verbose);

/*
 * The system process: set the policy (unless @o->policy_set), confine
 * the process (root, ids, no_new_privs, seccomp) and serve @ep_fd until
 * every VM that attached is gone. Guest fds 0, 1, 2 are the process's.
 * Return: NVX_EXIT_OK or NVX_EXIT_FAIL.
 */
int nvx_sys_serve(int ep_fd, const struct nvx_sys_tenant *t,
		  const struct nvx_sys_opts *o);

/* The name of message type @type in a policy file's calls; NULL if none. */
const char *nvx_sys_call_name(unsigned int type);

/* A line on stderr, after the program's name (nvxtool.h: __printf). */
void __printf(1, 2) nvx_sys_info(const char *fmt, ...);

#endif /* _NVX_SYS_H */
