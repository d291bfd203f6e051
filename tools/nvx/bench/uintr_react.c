// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench uintr, (c): how fast a system process reacts to a message.
 *
 * A bare VM (a KVM VM that never runs, its RAM a grant, attached to an
 * endpoint with NVX_UVM_ATTACH_SLOW) stands for the guest: thread A puts
 * one request in its submission ring and rings with NVX_UVM_CHAN_IOC_KICK,
 * the path a VMM takes for a slow-path doorbell. Thread B is the system
 * process; it learns of the request in one of three ways and takes it
 * with NVX_UVM_EP_IOC_RECV:
 *
 *   recv    blocked in RECV
 *   poll    blocked in poll(2) on the endpoint, then a nonblocking RECV
 *   uintr   running (a compute loop in user mode); the endpoint posts a
 *           user interrupt (NVX_UVM_EP_IOC_NOTIFY), the handler counts,
 *           the loop sees the count and makes a nonblocking RECV
 *
 * The reaction time is from A's clock before the KICK to B's after RECV
 * returned the request. B then answers it (REPLY) and A takes the
 * completion before the next request, so one request is in flight.
 * Before each request A waits until B waits as its method says: back in
 * its user-mode loop (uintr), or switched out in RECV or poll() (its
 * voluntary context switches went up since it said it would wait).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <nvx/nvx.h>
#include <nvx/pool.h>
#include <nvx/uvm.h>

#include "nvx_uintr.h"
#include "nvx_uvm.h"
#include "uintr.h"

const char * const nvx_ur_names[NVX_UR_COUNT] = {
	[NVX_UR_RECV]	= "recv",
	[NVX_UR_POLL]	= "poll",
	[NVX_UR_UINTR]	= "uintr",
};

const char * const nvx_ur_receiver[NVX_UR_COUNT] = {
	[NVX_UR_RECV]	= "blocked in NVX_UVM_EP_IOC_RECV",
	[NVX_UR_POLL]	= "blocked in poll(2), then RECV",
	[NVX_UR_UINTR]	= "running; user interrupt, then RECV",
};

#define NVX_UR_MEM	(2ULL << 20)	/* the bare VM's RAM: one piece */
#define NVX_UR_TYPE	NVX_UVM_MSG_IPC

/**
 * struct nvx_ur - one method of (c)
 * @ub: the bench.
 * @m: the method.
 * @kvm_fd: /dev/kvm.
 * @vm_fd: the bare VM.
 * @grant_fd: its RAM.
 * @ep_fd: the endpoint.
 * @chan_fd: the VM's channel.
 * @mem: the RAM, mapped.
 * @ctrl: its control page.
 * @sq: its submission ring.
 * @cq: its completion ring.
 * @sq_n: entries of @sq.
 * @cq_n: entries of @cq.
 * @sq_prod: requests published.
 * @cq_cons: completions taken.
 * @tid_b: thread B.
 * @ready: B: 1 when ready, -errno when it failed.
 * @b_req: B: the nvx request that failed, or 0.
 * @b_what: B: the call that failed.
 * @b_err: B: -errno when it stopped on an error.
 * @b_done: B: it returned.
 * @b_waits: B: requests it is about to wait for (seen + 1 once waiting).
 * @b_nvcsw: B: its voluntary context switches then.
 * @quit: A: B must return.
 * @seen: B: requests taken.
 * @seen_ns: B: when it took the last one.
 * @rx: B's counting handler (uintr).
 * @vec: B's vector fds (uintr), or -1.
 */
struct nvx_ur {
	struct nvx_ub *ub;
	enum nvx_ur_method m;
	int kvm_fd, vm_fd, grant_fd, ep_fd, chan_fd;
	char *mem;
	struct nvx_uvm_ctrl *ctrl;
	struct nvx_uvm_msg *sq, *cq;
	uint32_t sq_n, cq_n, sq_prod, cq_cons;
	pid_t tid_b;
	int ready;
	unsigned long b_req;
	const char *b_what;
	int b_err;
	int b_done;
	uint64_t b_waits;
	long b_nvcsw;
	int quit;
	uint64_t seen;
	uint64_t seen_ns;
	struct nvx_uintr_rx rx;
	int vec[2];
};

/* "bench uintr: reaction recv: WHAT: why"; NVX_EXIT_FAIL. */
static int nvx_ur_fail(struct nvx_ur *u, const char *what, unsigned long req,
		       int err)
{
	nvx_err("%s: reaction %s: %s: %s", u->ub->ctx->path,
		nvx_ur_names[u->m], what,
		req ? nvx_uintr_strerror(req, err) : strerror(err));
	return NVX_EXIT_FAIL;
}

/* Before any method: "bench uintr: reaction: WHAT: why". */
static int nvx_ur_fail_setup(struct nvx_ub *ub, const char *what, int err)
{
	nvx_err("%s: reaction: %s: %s", ub->ctx->path, what, strerror(err));
	return NVX_EXIT_FAIL;
}

/* B: remember what failed; -@err. */
static int nvx_ur_b_fail(struct nvx_ur *u, const char *what,
			 unsigned long req, int err)
{
	u->b_what = what;
	u->b_req = req;
	return -err;
}

/* The endpoint, and a bare VM attached to it. */
static int nvx_ur_setup(struct nvx_ur *u)
{
	struct nvx_ctx *ctx = u->ub->ctx;
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC };
	struct nvx_grant_create g = {
		.flags = NVX_GRANT_WAIT | NVX_GRANT_CLOEXEC,
		.node = NVX_NODE_ANY,
		.bytes = NVX_UR_MEM,
	};
	struct nvx_uvm_attach a = {
		.flags = NVX_UVM_ATTACH_CLOEXEC | NVX_UVM_ATTACH_SLOW,
		.irq_fd = -1,
		.ctrl_gpa = NVX_UVM_CTRL_GPA,
		.sq_gpa = NVX_UVM_SQ_GPA,
		.cq_gpa = NVX_UVM_CQ_GPA,
	};

	if (ioctl(ctx->fd, NVX_IOC_UVM_ENDPOINT, &ep))
		return nvx_ur_fail(u, "NVX_IOC_UVM_ENDPOINT", 0, errno);
	u->ep_fd = ep.fd;
	u->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (u->kvm_fd < 0)
		return nvx_ur_fail(u, "/dev/kvm", 0, errno);
	u->vm_fd = ioctl(u->kvm_fd, KVM_CREATE_VM, 0);
	if (u->vm_fd < 0)
		return nvx_ur_fail(u, "KVM_CREATE_VM", 0, errno);
	if (ioctl(ctx->fd, NVX_IOC_GRANT, &g))
		return nvx_ur_fail(u, "NVX_IOC_GRANT", 0, errno);
	u->grant_fd = g.fd;
	u->mem = mmap(NULL, NVX_UR_MEM, PROT_READ | PROT_WRITE, MAP_SHARED,
		      u->grant_fd, 0);
	if (u->mem == MAP_FAILED) {
		u->mem = NULL;
		return nvx_ur_fail(u, "mmap of the grant", 0, errno);
	}
	a.vm_fd = u->vm_fd;
	a.grant_fd = u->grant_fd;
	a.ep_fd = u->ep_fd;
	if (ioctl(ctx->fd, NVX_IOC_UVM_ATTACH, &a))
		return nvx_ur_fail(u, "NVX_IOC_UVM_ATTACH", 0, errno);
	u->chan_fd = a.fd;
	u->sq_n = a.sq_entries;
	u->cq_n = a.cq_entries;
	u->ctrl = (struct nvx_uvm_ctrl *)(u->mem + NVX_UVM_CTRL_GPA);
	u->sq = (struct nvx_uvm_msg *)(u->mem + NVX_UVM_SQ_GPA);
	u->cq = (struct nvx_uvm_msg *)(u->mem + NVX_UVM_CQ_GPA);
	return NVX_EXIT_OK;
}

static void nvx_ur_cleanup(struct nvx_ur *u)
{
	int i;

	for (i = 0; i < 2; i++)
		if (u->vec[i] >= 0)
			close(u->vec[i]);
	if (u->chan_fd >= 0)
		close(u->chan_fd);
	if (u->mem)
		munmap(u->mem, NVX_UR_MEM);
	if (u->grant_fd >= 0)
		close(u->grant_fd);
	if (u->vm_fd >= 0)
		close(u->vm_fd);
	if (u->kvm_fd >= 0)
		close(u->kvm_fd);
	if (u->ep_fd >= 0)
		close(u->ep_fd);
}

/* A: publish request @i and ring, as a VMM passes a doorbell on. */
static int nvx_ur_post(struct nvx_ur *u, uint64_t i)
{
	struct nvx_uvm_msg *m = &u->sq[u->sq_prod & (u->sq_n - 1)];
	struct nvx_uvm_kick k = { .port = NVX_UVM_PORT_DOORBELL };

	memset(m, 0, sizeof(*m));
	m->type = NVX_UR_TYPE;
	m->tag = (uint32_t)i;
	u->sq_prod++;
	__atomic_store_n(&u->ctrl->sq_prod, u->sq_prod, __ATOMIC_RELEASE);
	return ioctl(u->chan_fd, NVX_UVM_CHAN_IOC_KICK, &k) ? -errno : 0;
}

/* A: take the completion of request @i; -ETIMEDOUT when none came. */
static int nvx_ur_complete(struct nvx_ur *u, uint64_t i)
{
	uint64_t until = nvx_now_ns() + NVX_UB_TIMEOUT;
	struct nvx_uvm_msg m;

	while (__atomic_load_n(&u->ctrl->cq_prod, __ATOMIC_ACQUIRE) ==
	       u->cq_cons) {
		if (nvx_now_ns() > until)
			return -ETIMEDOUT;
		if (u->ub->same_cpu)
			sched_yield();
	}
	m = u->cq[u->cq_cons & (u->cq_n - 1)];
	__atomic_fetch_sub(&u->ctrl->credits, 1, __ATOMIC_SEQ_CST);
	u->cq_cons++;
	__atomic_store_n(&u->ctrl->cq_cons, u->cq_cons, __ATOMIC_RELEASE);
	return m.tag == (uint32_t)i && !m.status ? 0 : -EPROTO;
}

/* B's voluntary context switches so far, or -errno. */
static long nvx_ur_nvcsw_self(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -errno : ru.ru_nvcsw;
}

/* B: say that it waits now for request @seen + 1. */
static void nvx_ur_b_waits(struct nvx_ur *u, uint64_t seen)
{
	__atomic_store_n(&u->b_nvcsw, nvx_ur_nvcsw_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&u->b_waits, seen + 1, __ATOMIC_RELEASE);
}

static bool nvx_ur_quit(struct nvx_ur *u)
{
	return __atomic_load_n(&u->quit, __ATOMIC_ACQUIRE);
}

/*
 * B: wait for the next request as the method says and take it into @r.
 * Return: 1 when it came, 0 when B must return, or -errno.
 */
static int nvx_ur_b_take(struct nvx_ur *u, struct nvx_uvm_recv *r,
			 uint64_t *hits, uint64_t seen)
{
	struct pollfd p = { .fd = u->ep_fd, .events = POLLIN };
	bool yield = u->ub->same_cpu;
	int ret;

	memset(r, 0, sizeof(*r));
	nvx_ur_b_waits(u, seen);
	switch (u->m) {
	case NVX_UR_RECV:
		for (;;) {
			ret = ioctl(u->ep_fd, NVX_UVM_EP_IOC_RECV, r);
			if (nvx_ur_quit(u))
				return 0;
			if (!ret)
				return 1;
			if (errno != EINTR)
				return nvx_ur_b_fail(u, "NVX_UVM_EP_IOC_RECV",
						     0, errno);
		}
	case NVX_UR_POLL:
		for (;;) {
			ret = poll(&p, 1, 100);
			if (nvx_ur_quit(u))
				return 0;
			if (ret < 0 && errno != EINTR)
				return nvx_ur_b_fail(u, "poll", 0, errno);
			if (ret > 0)
				break;
		}
		break;
	default:
		/* the compute loop: it only looks at the handler's count */
		while (__atomic_load_n(&u->rx.hits, __ATOMIC_ACQUIRE) ==
		       *hits) {
			if (nvx_ur_quit(u))
				return 0;
			if (yield)
				sched_yield();
		}
		*hits = __atomic_load_n(&u->rx.hits, __ATOMIC_ACQUIRE);
		break;
	}
	if (nvx_ur_quit(u))
		return 0;
	r->flags = NVX_UVM_RECV_NONBLOCK;
	if (ioctl(u->ep_fd, NVX_UVM_EP_IOC_RECV, r))
		return nvx_ur_b_fail(u, "NVX_UVM_EP_IOC_RECV", 0, errno);
	return 1;
}

/* B, uintr: the counting handler, and the endpoint posts its vector. */
static int nvx_ur_b_setup(struct nvx_ur *u)
{
	struct nvx_uvm_notify n = { .vector_fd = -1 };
	int ret;

	ret = nvx_uintr_rx_setup(u->ub->ctx->fd, &u->rx, u->vec, &u->b_req);
	if (ret) {
		u->b_what = "user interrupts";
		return ret;
	}
	n.vector_fd = u->vec[0];
	if (!ioctl(u->ep_fd, NVX_UVM_EP_IOC_NOTIFY, &n))
		return 0;
	ret = nvx_ur_b_fail(u, "NVX_UVM_EP_IOC_NOTIFY", 0, errno);
	nvx_uintr_rx_unregister(u->ub->ctx->fd);
	return ret;
}

static void *nvx_ur_b(void *arg)
{
	struct nvx_ur *u = arg;
	struct nvx_uvm_notify n = { .vector_fd = -1 };
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	uint64_t hits = 0, seen = 0;
	int ret = 0;

	nvx_pin_self(u->ub->cpu[1]);
	__atomic_store_n(&u->tid_b, nvx_ub_gettid(), __ATOMIC_RELAXED);
	if (u->m == NVX_UR_UINTR)
		ret = nvx_ur_b_setup(u);
	__atomic_store_n(&u->ready, ret ? ret : 1, __ATOMIC_RELEASE);
	if (ret)
		goto out;

	while ((ret = nvx_ur_b_take(u, &r, &hits, seen)) > 0) {
		/* only A's requests come, until A closes the channel */
		if (r.msg.type != NVX_UR_TYPE) {
			ret = nvx_ur_b_fail(u, "a message A did not send", 0,
					    EPROTO);
			break;
		}
		__atomic_store_n(&u->seen_ns, nvx_now_ns(), __ATOMIC_RELAXED);
		seen = __atomic_add_fetch(&u->seen, 1, __ATOMIC_RELEASE);
		rep = (struct nvx_uvm_reply){
			.cookie = r.cookie,
			.msg = { .type = r.msg.type },
		};
		if (ioctl(u->ep_fd, NVX_UVM_EP_IOC_REPLY, &rep)) {
			ret = nvx_ur_b_fail(u, "NVX_UVM_EP_IOC_REPLY", 0,
					    errno);
			break;
		}
	}
	u->b_err = ret;
	if (u->m == NVX_UR_UINTR) {
		ioctl(u->ep_fd, NVX_UVM_EP_IOC_NOTIFY, &n);
		nvx_uintr_rx_unregister(u->ub->ctx->fd);
	}
out:
	__atomic_store_n(&u->b_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The voluntary context switches of thread @tid of this process; -errno
 * when its status cannot be read, -EPROTO without the line.
 */
static long nvx_ur_nvcsw(pid_t tid)
{
	static const char key[] = "\nvoluntary_ctxt_switches:";
	char path[64], buf[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? strtol(p + sizeof(key) - 1, NULL, 10) : -EPROTO;
}

static bool nvx_ur_b_gone(struct nvx_ur *u)
{
	return __atomic_load_n(&u->b_done, __ATOMIC_ACQUIRE);
}

/*
 * A: before request @i, wait until B waits for it as its method says:
 * in its user-mode loop (uintr), or switched out in RECV or poll(): its
 * voluntary context switches went up after it said it would wait.
 * Return: 0, -ESRCH when B stopped, -ETIMEDOUT, or -errno (B's
 * /proc status unreadable, -EPROTO: without the count).
 */
static int nvx_ur_wait_b(struct nvx_ur *u, uint64_t i)
{
	uint64_t until = nvx_now_ns() + NVX_UB_TIMEOUT;
	long before, now;

	while (__atomic_load_n(&u->b_waits, __ATOMIC_ACQUIRE) != i + 1) {
		if (nvx_ur_b_gone(u))
			return -ESRCH;
		if (nvx_now_ns() > until)
			return -ETIMEDOUT;
		if (u->ub->same_cpu)
			sched_yield();
	}
	if (u->m == NVX_UR_UINTR)
		return 0;
	before = __atomic_load_n(&u->b_nvcsw, __ATOMIC_RELAXED);
	if (before < 0)
		return before;		/* getrusage(RUSAGE_THREAD) failed */
	for (;;) {
		now = nvx_ur_nvcsw(u->tid_b);
		if (now < 0)
			return now;
		if (now > before)
			return 0;
		if (nvx_ur_b_gone(u))
			return -ESRCH;
		if (nvx_now_ns() > until)
			return -ETIMEDOUT;
		usleep(50);
	}
}

/* A: request @i, timed into *@ns. */
static int nvx_ur_once(struct nvx_ur *u, uint64_t i, uint64_t *ns)
{
	uint64_t t0, t1, until;
	int err;

	err = nvx_ur_wait_b(u, i);
	if (err == -ESRCH)
		return NVX_EXIT_FAIL;	/* B says why */
	if (err)
		return nvx_ur_fail(u, "waiting for B to wait", 0, -err);
	t0 = nvx_now_ns();
	err = nvx_ur_post(u, i);
	if (err)
		return nvx_ur_fail(u, "NVX_UVM_CHAN_IOC_KICK", 0, -err);
	until = t0 + NVX_UB_TIMEOUT;
	while (__atomic_load_n(&u->seen, __ATOMIC_ACQUIRE) == i) {
		if (nvx_ur_b_gone(u))
			return NVX_EXIT_FAIL;
		if (nvx_now_ns() > until)
			return nvx_ur_fail(u, "request not taken", 0,
					   ETIMEDOUT);
		if (u->ub->same_cpu)
			sched_yield();
	}
	t1 = __atomic_load_n(&u->seen_ns, __ATOMIC_RELAXED);
	err = nvx_ur_complete(u, i);
	if (err)
		return nvx_ur_fail(u, "completion", 0, -err);
	*ns = t1 > t0 ? t1 - t0 : 0;
	return NVX_EXIT_OK;
}

/* One method: @iters requests after a tenth as many (at most 100). */
static int nvx_ur_run(struct nvx_ub *ub, enum nvx_ur_method m)
{
	struct nvx_ur u = {
		.ub = ub, .m = m, .kvm_fd = -1, .vm_fd = -1, .grant_fd = -1,
		.ep_fd = -1, .chan_fd = -1, .vec = { -1, -1 },
		.rx = { .reply = -1 },
	};
	unsigned int warm = ub->iters / 10 < 100 ? ub->iters / 10 : 100, i;
	uint64_t ns;
	pthread_t b;
	int ret;

	ret = nvx_ur_setup(&u);
	if (ret)
		goto out;
	ret = pthread_create(&b, NULL, nvx_ur_b, &u);
	if (ret) {
		ret = nvx_ur_fail(&u, "pthread_create", 0, ret);
		goto out;
	}
	if (nvx_wait_flag(&u.ready, NVX_UB_READY_TIMEOUT) && !u.ready) {
		ret = nvx_ur_fail(&u, "thread B", 0, ETIMEDOUT);
		goto stop;
	}
	for (i = 0; u.ready > 0 && i < warm + ub->iters; i++) {
		ret = nvx_ur_once(&u, i, &ns);
		if (ret)
			break;
		if (i >= warm)
			ub->samples[i - warm] = ns;
	}
stop:
	__atomic_store_n(&u.quit, 1, __ATOMIC_SEQ_CST);
	/* a VM_GONE notice wakes B in RECV (poll looks every 100 ms) */
	if (u.chan_fd >= 0) {
		close(u.chan_fd);
		u.chan_fd = -1;
	}
	pthread_join(b, NULL);
	if (u.b_err < 0 || u.ready < 0)
		ret = nvx_ur_fail(&u, u.b_what ? u.b_what : "thread B",
				  u.b_req, u.b_err < 0 ? -u.b_err : -u.ready);
	else if (!ret)
		nvx_ub_stat(ub->samples, ub->iters, &ub->react[m]);
out:
	nvx_ur_cleanup(&u);
	return ret;
}

/**
 * nvx_ub_react() - (c): the reaction time of every method
 * @ub: the bench; the results go to @ub->react. Without /dev/kvm, user
 *	VMs or CAP_SYS_ADMIN (it grows the pool by 2 MiB for the VM) it
 *	sets @ub->react_skip to why and measures nothing.
 *
 * Return: the exit status.
 */
int nvx_ub_react(struct nvx_ub *ub)
{
	struct nvx_pool_resize grow = {
		.node = NVX_NODE_ANY,
		.bytes = NVX_UR_MEM,
	};
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC };
	int m, ret;

	/* what (a) and (b) do not need: say so, and leave their results */
	if (access("/dev/kvm", R_OK | W_OK)) {
		ub->react_skip = "no /dev/kvm to make the VM with";
		return NVX_EXIT_OK;
	}
	if (ioctl(ub->ctx->fd, NVX_IOC_UVM_ENDPOINT, &ep)) {
		if (errno != ENOTTY && errno != EOPNOTSUPP)
			return nvx_ur_fail_setup(ub, "NVX_IOC_UVM_ENDPOINT",
						 errno);
		ub->react_skip = "no user VMs in this kernel (nvx_uvm)";
		return NVX_EXIT_OK;
	}
	close(ep.fd);
	/* the bare VM's RAM, given back at the end */
	if (ioctl(ub->ctx->fd, NVX_IOC_POOL_GROW, &grow)) {
		if (errno != EPERM)
			return nvx_ur_fail_setup(ub, "NVX_IOC_POOL_GROW",
						 errno);
		ub->react_skip = "growing the pool needs CAP_SYS_ADMIN";
		return NVX_EXIT_OK;
	}
	ret = NVX_EXIT_OK;
	for (m = 0; m < NVX_UR_COUNT && !ret; m++)
		ret = nvx_ur_run(ub, m);
	nvx_bench_shrink(ub->ctx, grow.done, "uintr");
	return ret;
}
