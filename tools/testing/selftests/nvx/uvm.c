// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": light user VMs and the PMIO fast path.
 *
 * Fixture "uvm" boots real guests (hello.img, echo.img and test.img,
 * built from tools/nvx/guest and installed next to this program) with
 * tools/nvx/lib/nvx_uvm.h: the VMM runs in a thread of its own, the test
 * thread is the system process and serves the endpoint. It covers the
 * guest services (output, input, boot arguments, seed, clock), IPC on
 * the fast path (no exit to userspace per message, read from KVM's
 * userspace_exits statistic) against the slow path through the VMM,
 * bulk PUSH/PULL of every size class and offset, two VMs on one
 * endpoint, every guest misbehaviour the host must stop (while another
 * VM on the same endpoint goes on), and the lifetimes: the system
 * process going away (closing the endpoint, or killed), the VMM killed
 * in the middle of a transfer, and fds closed in every order while the
 * vCPU runs.
 *
 * Fixture "uvm_abi" needs no guest to run: it attaches bare KVM VMs
 * (no vCPU) with NVX_UVM_ATTACH_SLOW and plays the guest itself,
 * writing the rings in the grant and ringing with NVX_UVM_IOC_KICK. It
 * covers every ioctl's argument checks and errnos, RECV/REPLY with
 * exact data placement, each ring rule the kernel enforces, blocking,
 * interrupted and polled RECV, and VM_GONE notices.
 *
 * Nested KVM makes no progress at all in a kernel that failed to
 * calibrate its TSC (the harness boots with tsc_early_khz= for that): the
 * first "uvm" test boots hello.img as a probe and, when it does not
 * finish within PROBE_MS, every "uvm" test of the run skips, saying so.
 *
 * Every test ends with the pool's granted bytes back where they were
 * (checked in the teardown); the fixtures grow the pool to hold
 * POOL_CLEAN bytes of clean memory and give back what they grew. The
 * whole group skips without NVX_FEAT_UVM or /dev/kvm.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <nvx/pool.h>
#include <nvx/uvm.h>

/*
 * For -Wextra: the harness's SIGALRM handler has an unused parameter,
 * and its TEST_F() wrapper keeps a pid across setjmp().
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"
#include "../../../nvx/lib/nvx_uvm.h"
#include "nvx_pool_test.h"

#define MIB		(1ULL << 20)
#define POOL_CLEAN	(64 * MIB)	/* clean pool memory a test may use */
#define VM_MEM		(4 * MIB)
#define EP_MAX_VMS	8U
#define MAX_VMMS	8
#define MAX_BARES	8
#define MAX_KIDS	4
#define DEADLINE_MS	120000		/* the longest wait on a guest */
#define PROBE_MS	60000
#define SHORT_MS	5000		/* for what should happen at once */
#define DEF_VMS		16U		/* max_vms 0 means this many */
#define KICK_SIG	SIGUSR2		/* makes KVM_RUN or RECV return EINTR */
#define HELLO		"hello from an nvx user VM\n"
#define BAD_PORT	0x80U

#define UVM_TEST(name)	TEST_F_TIMEOUT(uvm, name, 300)
#define ABI_TEST(name)	TEST_F_TIMEOUT(uvm_abi, name, 120)

/* ------------------------------------------------------------ types --- */

/* A user VM and its VMM thread. */
struct vmm {
	struct nvx_uvm_vm vm;
	struct nvx_uvm_opts o;
	char image[PATH_MAX];
	char *argv[16];
	pthread_t thread;
	bool created;		/* nvx_uvm_create() ran: destroy */
	bool started;		/* the thread runs nvx_uvm_run() */
	bool joined;
	int ret;		/* what nvx_uvm_run() returned */
	int done;		/* the thread finished (atomic) */
	int wake_fd;		/* eventfd written when it finishes */
	const char *where;	/* nvx_uvm_create()'s failed step */
};

/*
 * A KVM VM without a vCPU whose RAM is a grant mapped here: the test
 * plays the guest, writing the rings and ringing with KICK (slow
 * channel).
 */
struct bare {
	int kvm_fd, vm_fd, grant_fd, chan_fd;
	unsigned char *mem;
	uint64_t mem_size;
	struct nvx_uvm_ctrl *ctrl;
	struct nvx_uvm_msg *sq, *cq;
	uint32_t vm_id, sq_n, cq_n;
	uint32_t sq_prod, cq_cons;	/* the "guest's" */
};

/* What both fixtures hold. */
struct env {
	int fd;			/* /dev/nvx */
	int ep;			/* the endpoint, EP_MAX_VMS */
	uint32_t ep_id;
	int wake;		/* eventfd: a VMM thread finished */
	uint64_t grown;		/* what the pool was grown by */
	bool have_start;
	struct nvx_pool_stats start;
	char dir[PATH_MAX];	/* where the guest images are */
	struct vmm *vmms[MAX_VMMS];
	struct bare *bares[MAX_BARES];
	pid_t kids[MAX_KIDS];	/* SIGKILLed on the way out */
};

/* The system side of a test: serves an endpoint in the test thread. */
struct server {
	int ep;
	int wake;
	struct nvx_uvm_serve s;	/* out_fd, err_fd: memfds or /dev/null */
	/* NULL: the default service; else returns 0 or -errno */
	int (*handle)(struct server *sv, struct nvx_uvm_recv *r);
	void *priv;
	uint32_t tolerate_vm;	/* REPLY -ESRCH from this VM is expected */
	bool stop;		/* a handler asks serve_*() to return */
	uint64_t msgs;
	uint64_t gone;
	uint64_t esrch;
	struct nvx_uvm_recv last_gone;
	int err;		/* the first unexpected error */
	char why[256];
};

/* ---------------------------------------------------- small helpers --- */

static void no_op(int sig)
{
	(void)sig;
}

/* KICK_SIG interrupts KVM_RUN and RECV: no SA_RESTART. */
static int catch_kick_sig(void)
{
	struct sigaction sa = { .sa_handler = no_op };

	sigemptyset(&sa.sa_mask);
	return sigaction(KICK_SIG, &sa, NULL) ? -errno : 0;
}

static pid_t sys_gettid(void)
{
	return syscall(SYS_gettid);
}

/* The scheduler state letter of thread @tid of this process, or 0. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void msg_init(struct nvx_uvm_msg *m, uint16_t type, uint32_t tag)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->tag = tag;
}

/* The bulk test's pattern, as test.img makes it. */
static void bulk_pattern(unsigned char *p, uint32_t size)
{
	uint32_t k;

	for (k = 0; k < size; k++)
		p[k] = (k * 7 + size) & 0xff;
}

/* A pattern of our own for data that crosses the ABI. */
static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (i * 131 + seed * 17 + (i >> 8)) & 0xff;
}

/* All of @fd from offset 0, NUL-terminated (malloc'd), or NULL. */
static char *slurp(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;

	if (fstat(fd, &st))
		return NULL;
	buf = malloc(st.st_size + 1);
	if (!buf)
		return NULL;
	n = pread(fd, buf, st.st_size, 0);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* ------------------------------------------------------------- pool --- */

static uint64_t granted_now(int fd)
{
	struct nvx_pool_stats s;

	return pool_stats(fd, &s) ? ~0ULL : s.granted_bytes;
}

static int ep_stats(int ep, struct nvx_uvm_ep_stats *st)
{
	memset(st, 0, sizeof(*st));
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_STATS, st);
}

/* Wait until @ep serves no VM: 0, or -ETIMEDOUT. */
static int wait_no_vms(int ep)
{
	struct nvx_uvm_ep_stats st;
	uint64_t end = now_ms() + 10000;

	while (now_ms() < end) {
		if (ep_stats(ep, &st))
			return -EIO;
		if (!st.nr_vms)
			return 0;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

/* ------------------------------------------------------- VMM threads --- */

static void *vmm_thread(void *arg)
{
	struct vmm *v = arg;
	uint64_t one = 1;

	v->ret = nvx_uvm_run(&v->vm);
	__atomic_store_n(&v->done, 1, __ATOMIC_SEQ_CST);
	if (write(v->wake_fd, &one, sizeof(one)) < 0)
		v->ret = v->ret ? v->ret : -EIO;
	return NULL;
}

static bool vmm_done(struct vmm *v)
{
	return __atomic_load_n(&v->done, __ATOMIC_SEQ_CST);
}

/* A new VMM slot of @e (freed by vmm_free() or the teardown). */
static struct vmm *vmm_new(struct env *e)
{
	struct vmm *v;
	int i;

	for (i = 0; i < MAX_VMMS; i++) {
		if (e->vmms[i])
			continue;
		v = calloc(1, sizeof(*v));
		if (!v)
			return NULL;
		v->wake_fd = e->wake;
		e->vmms[i] = v;
		return v;
	}
	return NULL;
}

/*
 * Build the VM of @name.img with argv { @name, ... } attached to @ep and
 * start its VMM thread: 0 or -errno (v->where says the step).
 */
static int __attribute__((sentinel)) vmm_launch(struct env *e, struct vmm *v,
						int ep, int slow,
						const char *name, ...)
{
	const char *arg;
	va_list ap;
	int argc = 0, ret;

	if (snprintf(v->image, sizeof(v->image), "%s/%s.img", e->dir,
		     name) >= (int)sizeof(v->image))
		return -ENAMETOOLONG;
	v->argv[argc++] = (char *)name;
	va_start(ap, name);
	while ((arg = va_arg(ap, const char *)) &&
	       argc < (int)ARRAY_SIZE(v->argv) - 1)
		v->argv[argc++] = (char *)arg;
	va_end(ap);
	v->argv[argc] = NULL;

	v->o.mem = VM_MEM;
	v->o.image = v->image;
	v->o.argc = argc;
	v->o.argv = v->argv;
	v->o.ep_fd = ep;
	v->o.slow = slow;
	v->created = true;
	ret = nvx_uvm_create(&v->vm, e->fd, &v->o, &v->where);
	if (ret)
		return ret;
	ret = pthread_create(&v->thread, NULL, vmm_thread, v);
	if (ret) {
		v->where = "pthread_create";
		return -ret;
	}
	v->started = true;
	return 0;
}

/* Wait for the VMM thread to finish on its own: 0, or -ETIMEDOUT. */
static int vmm_wait(struct vmm *v, uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	if (!v->started || v->joined)
		return 0;
	while (!vmm_done(v)) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		usleep(2000);
	}
	pthread_join(v->thread, NULL);
	v->joined = true;
	return 0;
}

/*
 * Make nvx_uvm_run() return: vm.stop, then KICK_SIG until the thread
 * finished (a signal that lands just before KVM_RUN is lost).
 */
static int vmm_stop(struct vmm *v, uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	if (!v->started || v->joined)
		return 0;
	v->vm.stop = 1;
	while (!vmm_done(v)) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		pthread_kill(v->thread, KICK_SIG);
		usleep(10000);
	}
	pthread_join(v->thread, NULL);
	v->joined = true;
	return 0;
}

/*
 * Stop, destroy and forget @v. A vCPU thread that cannot be stopped is
 * left alone with its VM (-ETIMEDOUT): the process's exit ends both.
 */
static int vmm_free(struct env *e, struct vmm *v)
{
	int i, ret = vmm_stop(v, SHORT_MS * 2);

	for (i = 0; i < MAX_VMMS; i++)
		if (e->vmms[i] == v)
			e->vmms[i] = NULL;
	if (ret)
		return ret;
	if (v->created)
		nvx_uvm_destroy(&v->vm);
	free(v);
	return 0;
}

/* How a VMM ended, for the logs. */
static const char *vmm_why(struct vmm *v)
{
	static char buf[160];

	snprintf(buf, sizeof(buf),
		 "run %d (%s), exit status %u, reason %u (%s), detail %#llx, where %s",
		 v->ret, strerror(v->ret < 0 ? -v->ret : v->ret),
		 v->vm.exit_status, v->vm.reason,
		 nvx_uvm_reason_name(v->vm.reason),
		 (unsigned long long)v->vm.detail,
		 v->where ? v->where : "-");
	return buf;
}

/* -------------------------------------------------------- bare VMs --- */

static void bare_free(struct env *e, struct bare *b)
{
	int i;

	for (i = 0; i < MAX_BARES; i++)
		if (e->bares[i] == b)
			e->bares[i] = NULL;
	if (b->chan_fd >= 0)
		close(b->chan_fd);
	if (b->mem)
		munmap(b->mem, b->mem_size);
	if (b->grant_fd >= 0)
		close(b->grant_fd);
	if (b->vm_fd >= 0)
		close(b->vm_fd);
	if (b->kvm_fd >= 0)
		close(b->kvm_fd);
	free(b);
}

/* A KVM VM and a VM_MEM grant, mapped; not attached. 0 or -errno. */
static int bare_new(struct env *e, struct bare **out)
{
	struct nvx_grant_create g = {
		.flags = NVX_GRANT_WAIT | NVX_GRANT_CLOEXEC,
		.node = NVX_NODE_ANY,
		.bytes = VM_MEM,
	};
	struct bare *b;
	int i, ret;

	*out = NULL;
	for (i = 0; i < MAX_BARES && e->bares[i]; i++)
		;
	if (i == MAX_BARES)
		return -ENOSPC;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->kvm_fd = -1;
	b->vm_fd = -1;
	b->grant_fd = -1;
	b->chan_fd = -1;
	e->bares[i] = b;
	b->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (b->kvm_fd < 0)
		goto fail;
	b->vm_fd = ioctl(b->kvm_fd, KVM_CREATE_VM, 0);
	if (b->vm_fd < 0)
		goto fail;
	if (ioctl(e->fd, NVX_IOC_GRANT, &g) < 0)
		goto fail;
	b->grant_fd = g.fd;
	b->mem_size = g.granted;
	b->mem = mmap(NULL, b->mem_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->grant_fd, 0);
	if (b->mem == MAP_FAILED) {
		b->mem = NULL;
		goto fail;
	}
	b->ctrl = (struct nvx_uvm_ctrl *)(b->mem + NVX_UVM_CTRL_GPA);
	b->sq = (struct nvx_uvm_msg *)(b->mem + NVX_UVM_SQ_GPA);
	b->cq = (struct nvx_uvm_msg *)(b->mem + NVX_UVM_CQ_GPA);
	*out = b;
	return 0;
fail:
	ret = -errno;
	bare_free(e, b);
	return ret;
}

/* A valid ATTACH of @b to @ep, as the library's layout has it. */
static void bare_args(const struct bare *b, int ep, uint32_t flags,
		      struct nvx_uvm_attach *a)
{
	memset(a, 0, sizeof(*a));
	a->flags = NVX_UVM_ATTACH_CLOEXEC | flags;
	a->vm_fd = b->vm_fd;
	a->grant_fd = b->grant_fd;
	a->ep_fd = ep;
	a->irq_fd = -1;
	a->ctrl_gpa = NVX_UVM_CTRL_GPA;
	a->sq_gpa = NVX_UVM_SQ_GPA;
	a->cq_gpa = NVX_UVM_CQ_GPA;
	a->fd = -1;
}

static int bare_attach(struct env *e, struct bare *b, int ep, uint32_t flags)
{
	struct nvx_uvm_attach a;
	int ret;

	bare_args(b, ep, flags, &a);
	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ATTACH, &a);
	if (ret)
		return ret;
	b->chan_fd = a.fd;
	b->vm_id = a.vm_id;
	b->sq_n = a.sq_entries;
	b->cq_n = a.cq_entries;
	b->sq_prod = 0;
	b->cq_cons = 0;
	return 0;
}

static int bare_kick(struct bare *b, uint32_t port)
{
	struct nvx_uvm_kick k = { .port = port };

	return nvx_ioctl(b->chan_fd, NVX_UVM_IOC_KICK, &k);
}

/* Publish @m in the SQ and ring: the KICK's result. */
static int bare_post(struct bare *b, const struct nvx_uvm_msg *m)
{
	b->sq[b->sq_prod & (b->sq_n - 1)] = *m;
	b->sq_prod++;
	__atomic_store_n(&b->ctrl->sq_prod, b->sq_prod, __ATOMIC_RELEASE);
	return bare_kick(b, NVX_UVM_PORT_DOORBELL);
}

/* Consume the next completion: 0, or -EAGAIN when none is written. */
static int bare_complete(struct bare *b, struct nvx_uvm_msg *m)
{
	if (__atomic_load_n(&b->ctrl->cq_prod, __ATOMIC_ACQUIRE) ==
	    b->cq_cons)
		return -EAGAIN;
	*m = b->cq[b->cq_cons & (b->cq_n - 1)];
	__atomic_fetch_sub(&b->ctrl->credits, 1, __ATOMIC_SEQ_CST);
	b->cq_cons++;
	__atomic_store_n(&b->ctrl->cq_cons, b->cq_cons, __ATOMIC_RELEASE);
	return 0;
}

static int chan_status(int chan_fd, struct nvx_uvm_status *st)
{
	memset(st, 0, sizeof(*st));
	return nvx_ioctl(chan_fd, NVX_UVM_IOC_STATUS, st);
}

/* RECV without blocking and without a data buffer. */
static int recv_nb(int ep, struct nvx_uvm_recv *r)
{
	memset(r, 0, sizeof(*r));
	r->flags = NVX_UVM_RECV_NONBLOCK;
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_RECV, r);
}

/*
 * The next message of @ep must be the VM_GONE notice of @vm_id, saying
 * @reason: 0, or -EPROTO (or RECV's error) with *r showing what came.
 */
static int recv_gone(int ep, uint32_t vm_id, uint32_t reason,
		     struct nvx_uvm_recv *r)
{
	int ret = recv_nb(ep, r);

	if (ret)
		return ret;
	if (r->msg.type != NVX_UVM_MSG_VM_GONE || r->msg.src_vm != vm_id ||
	    r->msg.status != -(int32_t)reason || r->cookie)
		return -EPROTO;
	return 0;
}

/* ----------------------------------------------------------- server --- */

static void __attribute__((format(printf, 3, 4)))
sv_fail(struct server *sv, int err, const char *fmt, ...)
{
	va_list ap;

	if (sv->err)
		return;
	sv->err = err ? err : -EPROTO;
	va_start(ap, fmt);
	vsnprintf(sv->why, sizeof(sv->why), fmt, ap);
	va_end(ap);
}

/* @capture: stdout into a memfd (else /dev/null); stderr always is. */
static int server_init(struct server *sv, int ep, int wake, bool capture)
{
	memset(sv, 0, sizeof(*sv));
	sv->ep = ep;
	sv->wake = wake;
	sv->s.in_fd = -1;
	sv->s.out_fd = -1;
	sv->s.err_fd = -1;
	snprintf(sv->why, sizeof(sv->why), "no error");
	sv->s.buf = malloc(NVX_UVM_MAX_BULK);
	if (!sv->s.buf)
		return -ENOMEM;
	sv->s.out_fd = capture ? memfd_create("uvm-stdout", MFD_CLOEXEC) :
				 open("/dev/null", O_WRONLY | O_CLOEXEC);
	sv->s.err_fd = memfd_create("uvm-stderr", MFD_CLOEXEC);
	if (sv->s.out_fd < 0 || sv->s.err_fd < 0)
		return -errno;
	return 0;
}

static void server_fini(struct server *sv)
{
	if (sv->s.out_fd >= 0)
		close(sv->s.out_fd);
	if (sv->s.err_fd >= 0)
		close(sv->s.err_fd);
	sv->s.out_fd = -1;
	sv->s.err_fd = -1;
	free(sv->s.buf);
	sv->s.buf = NULL;
}

/* What the guests wrote to fd 1 (malloc'd, NUL-terminated). */
static char *server_stdout(struct server *sv, size_t *len)
{
	return slurp(sv->s.out_fd, len);
}

/* And to fd 2, for the logs (static buffer). */
static const char *server_stderr(struct server *sv)
{
	static char buf[512];
	ssize_t n = pread(sv->s.err_fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* The library's default service, with VM_GONE and -ESRCH accounted. */
static int serve_default(struct server *sv, struct nvx_uvm_recv *r)
{
	int ret = nvx_uvm_serve_msg(sv->ep, &sv->s, r);

	if (ret == 1) {
		sv->gone++;
		sv->last_gone = *r;
		return 0;
	}
	if (ret == -ESRCH && sv->tolerate_vm &&
	    r->msg.src_vm == sv->tolerate_vm) {
		sv->esrch++;
		return 0;
	}
	if (ret)
		sv_fail(sv, ret, "REPLY to type %u tag %#x of VM %u: %s",
			r->msg.type, r->msg.tag, r->msg.src_vm,
			strerror(-ret));
	return ret;
}

static bool all_done(struct vmm **v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!vmm_done(v[i]))
			return false;
	return true;
}

/*
 * Serve @sv's endpoint until a handler sets sv->stop or, with
 * @until_done, every VMM of @v finished and no message waits; stop at
 * @end (ms): -ETIMEDOUT with @until_done, else 0.
 */
static int serve_core(struct server *sv, struct vmm **v, int n,
		      uint64_t end, bool until_done)
{
	struct nvx_uvm_recv r;

	for (;;) {
		/* done before an empty RECV: nothing can follow */
		bool done = until_done && all_done(v, n);
		struct pollfd p[2];
		uint64_t now, x;
		int ret;

		if (sv->stop)
			return 0;
		ret = nvx_uvm_recv(sv->ep, &sv->s, &r, NVX_UVM_RECV_NONBLOCK);
		if (!ret) {
			sv->msgs++;
			ret = sv->handle ? sv->handle(sv, &r) :
					   serve_default(sv, &r);
			if (ret)
				sv_fail(sv, ret, "handler: %s", strerror(-ret));
			/* a guest that never pauses must not keep us here */
			if (now_ms() >= end && !sv->stop)
				return until_done ? -ETIMEDOUT : 0;
			continue;
		}
		if (ret != -EAGAIN) {
			sv_fail(sv, ret, "RECV: %s", strerror(-ret));
			return ret;
		}
		if (done)
			return 0;
		now = now_ms();
		if (now >= end)
			return until_done ? -ETIMEDOUT : 0;
		p[0].fd = sv->ep;
		p[0].events = POLLIN;
		p[1].fd = sv->wake;
		p[1].events = POLLIN;
		p[0].revents = 0;
		p[1].revents = 0;
		poll(p, 2, end - now > 100 ? 100 : (int)(end - now));
		if ((p[1].revents & POLLIN) &&
		    read(sv->wake, &x, sizeof(x)) < 0 && errno != EAGAIN)
			return -errno;
	}
}

/* Until every VMM of @v finished: 0, or -ETIMEDOUT after @ms. */
static int serve_done(struct server *sv, struct vmm **v, int n, uint64_t ms)
{
	return serve_core(sv, v, n, now_ms() + ms, true);
}

/* For @ms, or until sv->stop. */
static int serve_for(struct server *sv, uint64_t ms)
{
	return serve_core(sv, NULL, 0, now_ms() + ms, false);
}

/* Until a handler sets sv->stop: 0, or -ETIMEDOUT after @ms. */
static int serve_until_stop(struct server *sv, uint64_t ms)
{
	int ret = serve_for(sv, ms);

	return ret ? ret : sv->stop ? 0 : -ETIMEDOUT;
}

/*
 * Hold the message: the first of @type (with at least @min_len bytes of
 * data) after @after such ones were served. The rest gets the default
 * service.
 */
struct hold {
	uint16_t type;
	uint32_t min_len;
	uint32_t after;
	uint32_t seen;
	bool held;
	struct nvx_uvm_recv r;
};

static int hold_handle(struct server *sv, struct nvx_uvm_recv *r)
{
	struct hold *h = sv->priv;

	if (!h->held && r->msg.type == h->type && r->data_len >= h->min_len &&
	    h->seen++ == h->after) {
		h->r = *r;
		h->held = true;
		sv->stop = true;
		return 0;
	}
	return serve_default(sv, r);
}

/* ------------------------------------------------------ environment --- */

enum { PROBE_UNKNOWN, PROBE_OK, PROBE_STUCK };

/*
 * The probe's verdict, shared by every test process of this run (the
 * harness forks one per test): a shared page mapped before it forks.
 */
static int *probe_state;
static int probe_local;

static void __attribute__((constructor)) probe_state_init(void)
{
	void *p = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	probe_state = p == MAP_FAILED ? &probe_local : p;
}

static int probe_get(void)
{
	return __atomic_load_n(probe_state, __ATOMIC_SEQ_CST);
}

static void probe_set(int v)
{
	__atomic_store_n(probe_state, v, __ATOMIC_SEQ_CST);
}

static bool images_in(const char *dir)
{
	static const char *const names[] = { "hello", "echo", "test" };
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (snprintf(path, sizeof(path), "%s/%s.img", dir,
			     names[i]) >= (int)sizeof(path) ||
		    access(path, R_OK))
			return false;
	}
	return true;
}

/* The images next to this program, else in $NVX_GUEST_DIR. */
static int find_images(char *dir, size_t n)
{
	char exe[PATH_MAX], *slash;
	const char *env;
	ssize_t len;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (images_in(exe) &&
			    snprintf(dir, n, "%s", exe) < (int)n)
				return 0;
		}
	}
	env = getenv("NVX_GUEST_DIR");
	if (env && *env && images_in(env) && snprintf(dir, n, "%s", env) <
	    (int)n)
		return 0;
	return -ENOENT;
}

/* Stop everything a test left running; close the endpoint. */
static void env_stop_all(struct env *e)
{
	int i;

	for (i = 0; i < MAX_KIDS; i++) {
		if (e->kids[i] > 0) {
			kill(e->kids[i], SIGKILL);
			waitpid(e->kids[i], NULL, 0);
		}
		e->kids[i] = 0;
	}
	for (i = 0; i < MAX_VMMS; i++)
		if (e->vmms[i])
			vmm_free(e, e->vmms[i]);
	for (i = 0; i < MAX_BARES; i++)
		if (e->bares[i])
			bare_free(e, e->bares[i]);
	if (e->ep >= 0)
		close(e->ep);
	e->ep = -1;
}

/* Give everything back, the pool's growth included (best effort). */
static void env_release(struct env *e)
{
	env_stop_all(e);
	if (e->fd >= 0 && e->grown) {
		if (e->have_start)
			wait_granted(e->fd, &e->start);
		wait_scrubbed(e->fd);
		pool_resize(e->fd, NVX_IOC_POOL_SHRINK, e->grown, NVX_NODE_ANY,
			    NULL);
		e->grown = 0;
	}
	if (e->wake >= 0)
		close(e->wake);
	e->wake = -1;
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

static int add_kid(struct env *e, pid_t pid)
{
	int i;

	for (i = 0; i < MAX_KIDS; i++) {
		if (!e->kids[i]) {
			e->kids[i] = pid;
			return 0;
		}
	}
	return -ENOSPC;
}

/* The kid is gone: SIGKILL it (again) and reap it; its wait status. */
static int reap_kid(struct env *e, pid_t pid)
{
	int i, status = -1;

	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		status = -1;
	for (i = 0; i < MAX_KIDS; i++)
		if (e->kids[i] == pid)
			e->kids[i] = 0;
	return status;
}

/*
 * Boot hello.img: 0 when it printed its line and exited 0, 1 when it
 * did not finish within PROBE_MS, else -errno with @why set.
 */
static int probe(struct env *e, char *why, size_t n)
{
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC };
	struct server sv;
	struct vmm *v = vmm_new(e);
	char *out = NULL;
	int ret;

	if (!v)
		return -ENOMEM;
	/* an endpoint of its own: the test's starts unused */
	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
	if (ret) {
		snprintf(why, n, "NVX_IOC_UVM_ENDPOINT: %s", strerror(-ret));
		vmm_free(e, v);
		return ret;
	}
	ret = server_init(&sv, ep.fd, e->wake, true);
	if (!ret)
		ret = vmm_launch(e, v, ep.fd, 0, "hello", NULL);
	if (ret) {
		snprintf(why, n, "launching hello.img: %s at %s",
			 strerror(-ret), v->where ? v->where : "server");
		goto out;
	}
	ret = serve_done(&sv, &v, 1, PROBE_MS);
	if (ret == -ETIMEDOUT) {
		ret = 1;
		goto out;
	}
	out = server_stdout(&sv, NULL);
	if (ret || sv.err || v->ret || v->vm.exit_status || !out ||
	    strcmp(out, HELLO)) {
		snprintf(why, n, "hello.img: serve %d, %s; %s; stdout \"%s\"",
			 ret, sv.why, vmm_why(v), out ? out : "?");
		ret = -EIO;
		goto out;
	}
	ret = 0;
out:
	free(out);
	vmm_free(e, v);
	server_fini(&sv);
	close(ep.fd);
	return ret;
}

/*
 * Open /dev/nvx, check the features and /dev/kvm, find the images, grow
 * the pool to hold POOL_CLEAN clean bytes, make the endpoint and, when
 * @boot, make sure nested KVM makes progress in this boot.
 */
static void env_setup(struct __test_metadata *_metadata, struct env *e,
		      bool boot)
{
	struct nvx_uvm_endpoint ep = {
		.flags = NVX_UVM_EP_CLOEXEC,
		.max_vms = EP_MAX_VMS,
	};
	struct nvx_features f = { 0 };
	struct nvx_pool_stats s;
	char why[512];
	int ret;

	memset(e, 0, sizeof(*e));
	e->ep = -1;
	e->wake = -1;
	e->fd = nvx_open();
	if (e->fd < 0)
		SKIP(return, "open " NVX_DEV ": %s", strerror(-e->fd));
	ret = nvx_ioctl(e->fd, NVX_IOC_FEATURES, &f);
	if (ret || !(f.features & NVX_FEAT_UVM)) {
		env_release(e);
		SKIP(return, "no NVX_FEAT_UVM: user VMs not built");
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		env_release(e);
		SKIP(return, "no usable /dev/kvm: %s", strerror(errno));
	}
	if (boot && probe_get() == PROBE_STUCK) {
		env_release(e);
		SKIP(return, "nested KVM makes no progress in this boot (see the first uvm test)");
	}
	ret = find_images(e->dir, sizeof(e->dir));
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret)
		TH_LOG("no hello.img, echo.img, test.img here nor in $NVX_GUEST_DIR");
	ASSERT_EQ(0, catch_kick_sig());
	e->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, e->wake);

	ret = wait_scrubbed(e->fd);
	if (!ret)
		ret = pool_stats(e->fd, &s);
	if (!ret && s.clean_bytes < POOL_CLEAN)
		ret = pool_resize(e->fd, NVX_IOC_POOL_GROW,
				  POOL_CLEAN - s.clean_bytes, NVX_NODE_ANY,
				  &e->grown);
	if (!ret)
		ret = wait_scrubbed(e->fd);
	if (!ret)
		ret = pool_stats(e->fd, &e->start);
	if (!ret && e->start.clean_bytes < POOL_CLEAN)
		ret = -ENOMEM;
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("making %llu MiB of the pool clean: %s",
				 POOL_CLEAN / MIB, strerror(-ret));
	e->have_start = true;

	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("NVX_IOC_UVM_ENDPOINT: %s", strerror(-ret));
	e->ep = ep.fd;
	e->ep_id = ep.ep_id;

	if (!boot || probe_get() == PROBE_OK)
		return;
	ret = probe(e, why, sizeof(why));
	if (ret == 1) {
		probe_set(PROBE_STUCK);
		env_release(e);
		SKIP(return,
		     "nested KVM makes no progress in this boot: hello.img did not finish in %d s (all uvm tests skip)",
		     PROBE_MS / 1000);
	}
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("probe: %s", why);
	probe_set(PROBE_OK);
	ret = wait_granted(e->fd, &e->start);
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("the probe's grant was not given back");
}

/* Everything stopped and closed; the grants all given back. */
static void env_teardown(struct __test_metadata *_metadata, struct env *e)
{
	struct nvx_pool_stats s;

	if (e->fd < 0)
		return;
	env_stop_all(e);
	if (e->have_start) {
		EXPECT_EQ(0, wait_granted(e->fd, &e->start)) {
			pool_stats(e->fd, &s);
			TH_LOG("granted %llu bytes in %llu grants, %llu in %llu at the start",
			       (unsigned long long)s.granted_bytes,
			       (unsigned long long)s.grants_live,
			       (unsigned long long)e->start.granted_bytes,
			       (unsigned long long)e->start.grants_live);
		}
	}
	env_release(e);
}

/* The endpoint serves no VM and holds no message. */
static void check_ep_idle(struct __test_metadata *_metadata, int ep)
{
	struct nvx_uvm_ep_stats st;

	ASSERT_EQ(0, ep_stats(ep, &st));
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(0U, st.gone);
}

FIXTURE(uvm) {
	struct env e;
};

FIXTURE_SETUP(uvm)
{
	env_setup(_metadata, &self->e, true);
}

FIXTURE_TEARDOWN(uvm)
{
	env_teardown(_metadata, &self->e);
}

FIXTURE(uvm_abi) {
	struct env e;
};

FIXTURE_SETUP(uvm_abi)
{
	env_setup(_metadata, &self->e, false);
}

FIXTURE_TEARDOWN(uvm_abi)
{
	env_teardown(_metadata, &self->e);
}

/*
 * Destroy @v and take its VM_GONE notice from @ep (a VM that detached
 * says NVX_UVM_DETACHED).
 */
static void finish_vm(struct __test_metadata *_metadata, struct env *e,
		      struct vmm *v, int ep, uint32_t reason)
{
	struct nvx_uvm_recv r;
	uint32_t id = v->vm.vm_id;

	ASSERT_EQ(0, vmm_free(e, v));
	EXPECT_EQ(0, recv_gone(ep, id, reason, &r))
		TH_LOG("expected VM_GONE of VM %u status %d, got type %u of VM %u status %d",
		       id, -(int)reason, r.msg.type, r.msg.src_vm,
		       r.msg.status);
}

/* ========================================================= guests === */

/*
 * hello.img prints its line and exits 0; the channel's counters agree:
 * two messages (the line, the exit) in and out, nothing in flight.
 */
UVM_TEST(hello_prints_and_exits)
{
	struct env *e = &self->e;
	struct nvx_uvm_status st;
	struct server sv;
	struct vmm *v;
	char *out;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "hello", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	out = server_stdout(&sv, NULL);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ(HELLO, out);
	free(out);
	EXPECT_STREQ("", server_stderr(&sv));

	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, st.reason);
	EXPECT_EQ(v->vm.vm_id, st.vm_id);
	EXPECT_EQ(st.msgs_in, st.msgs_out);
	EXPECT_EQ(2U, st.msgs_in);
	EXPECT_EQ(0U, st.in_flight);
	EXPECT_EQ(strlen(HELLO), st.bulk_out);
	EXPECT_EQ(0U, st.bulk_in);
	EXPECT_LE(1U, st.doorbells);

	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	check_ep_idle(_metadata, e->ep);
	server_fini(&sv);
}

/* echo.img copies ~10 KiB of stdin (a pipe) to stdout, byte for byte. */
UVM_TEST(echo_round_trip)
{
	struct env *e = &self->e;
	size_t len = 10 * 1024 + 123, got = 0;
	unsigned char *in;
	struct server sv;
	struct vmm *v;
	char *out;
	int p[2];

	in = malloc(len);
	ASSERT_NE(NULL, in);
	fill(in, len, 1);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ((ssize_t)len, write(p[1], in, len));	/* fits a pipe */
	close(p[1]);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	sv.s.in_fd = p[0];
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "echo", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	out = server_stdout(&sv, &got);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(len, got);
	EXPECT_EQ(0, memcmp(in, out, len));
	free(out);
	free(in);
	close(p[0]);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * "ping N W" on the fast path: the guest checks every reply (no loss,
 * duplicate or reordering) and the vCPU never returned to userspace per
 * message.
 */
static void ping_fast(struct __test_metadata *_metadata, struct env *e,
		      unsigned int n, unsigned int w)
{
	struct nvx_uvm_status st;
	char ns[16], ws[16];
	struct server sv;
	struct vmm *v;
	int64_t exits;
	uint64_t t0;

	snprintf(ns, sizeof(ns), "%u", n);
	snprintf(ws, sizeof(ws), "%u", w);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "ping", ns, ws,
				NULL))
		TH_LOG("%s", vmm_why(v));
	t0 = now_ms();
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS))
		TH_LOG("%llu messages served in %d s",
		       (unsigned long long)sv.msgs, DEADLINE_MS / 1000);
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status)
		TH_LOG("10: reply out of order, 11: wrong payload, 12: error status; stderr \"%s\"",
		       server_stderr(&sv));
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_LE(n, st.msgs_in);
	EXPECT_EQ(st.msgs_in, st.msgs_out);
	EXPECT_EQ(0U, st.in_flight);
	EXPECT_LE(1U, st.doorbells);
	EXPECT_EQ(0U, v->vm.kicks);
	exits = nvx_uvm_kvm_stat(v->vm.stats_fd, "userspace_exits");
	ASSERT_LE(0, exits) TH_LOG("no userspace_exits in KVM's statistics");
	EXPECT_GT(50, exits)
		TH_LOG("%lld exits to userspace for %llu messages",
		       (long long)exits, (unsigned long long)st.msgs_in);
	TH_LOG("ping %u window %u: %llu ms, %lld exits to userspace, %llu doorbells",
	       n, w, (unsigned long long)(now_ms() - t0), (long long)exits,
	       (unsigned long long)st.doorbells);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

UVM_TEST(ping_fast_path_one_at_a_time)
{
	ping_fast(_metadata, &self->e, 10000, 1);
}

UVM_TEST(ping_fast_path_sixteen_in_flight)
{
	ping_fast(_metadata, &self->e, 10000, 16);
}

/*
 * The baseline: with NVX_UVM_ATTACH_SLOW every doorbell exits to the
 * VMM, which passes it on with KICK; userspace_exits shows it.
 */
UVM_TEST(ping_slow_path_exits_per_doorbell)
{
	struct env *e = &self->e;
	struct nvx_uvm_status st;
	struct server sv;
	struct vmm *v;
	int64_t exits;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 1, "test", "ping", "1000", "1",
				NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_LE(1000U, st.msgs_in);
	EXPECT_LT(0U, st.doorbells);
	EXPECT_LE(1000U, st.doorbells);
	EXPECT_LE(st.doorbells, v->vm.kicks);
	exits = nvx_uvm_kvm_stat(v->vm.stats_fd, "userspace_exits");
	ASSERT_LE(0, exits) TH_LOG("no userspace_exits in KVM's statistics");
	EXPECT_LE(1000, exits);
	EXPECT_LE((int64_t)v->vm.kicks, exits);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/* The bulk test's system side: check the PUSH, answer the PULL. */
struct bulk_ctx {
	uint32_t size;
	unsigned char *pat;
	int writes;
	int reads;
};

static int bulk_handle(struct server *sv, struct nvx_uvm_recv *r)
{
	struct bulk_ctx *c = sv->priv;
	const unsigned char *got = sv->s.buf;
	struct nvx_uvm_reply rep;
	uint32_t fd = get_u32(r->msg.payload), k;

	memset(&rep, 0, sizeof(rep));
	rep.cookie = r->cookie;
	rep.msg.type = r->msg.type;
	switch (r->msg.type) {
	case NVX_UVM_MSG_WRITE:
		c->writes++;
		rep.msg.status = -EIO;
		if (r->msg.flags != NVX_UVM_MSGF_PUSH || fd != 1 ||
		    r->data_len != c->size) {
			sv_fail(sv, -EPROTO,
				"WRITE: flags %#x fd %u data_len %u, expected PUSH 1 %u",
				r->msg.flags, fd, r->data_len, c->size);
			break;
		}
		for (k = 0; k < c->size && got[k] == c->pat[k]; k++)
			;
		if (k < c->size) {
			sv_fail(sv, -EPROTO, "WRITE of %u: byte %u is %#x, not %#x",
				c->size, k, got[k], c->pat[k]);
			break;
		}
		rep.msg.status = 0;
		break;
	case NVX_UVM_MSG_READ:
		c->reads++;
		rep.msg.status = -EIO;
		if (r->msg.flags != NVX_UVM_MSGF_PULL || fd != 0 ||
		    r->data_len != c->size) {
			sv_fail(sv, -EPROTO,
				"READ: flags %#x fd %u room %u, expected PULL 0 %u",
				r->msg.flags, fd, r->data_len, c->size);
			break;
		}
		rep.msg.status = 0;
		rep.buf = (uintptr_t)c->pat;
		rep.buf_len = c->size;
		break;
	default:
		return serve_default(sv, r);
	}
	if (ioctl(sv->ep, NVX_UVM_EP_IOC_REPLY, &rep) < 0)
		return -errno;
	return 0;
}

/*
 * "bulk SIZE OFF": a PUSH of SIZE bytes from OFF bytes into a page,
 * checked byte for byte here, then a PULL of the same bytes, checked by
 * the guest; sizes around a page, offsets that cross pages.
 */
UVM_TEST(bulk_push_pull_sizes_offsets)
{
	static const struct {
		uint32_t size, off;
	} cases[] = {
		{ 1, 0 }, { 1, 4095 }, { 4095, 0 }, { 4095, 4000 },
		{ 4096, 0 }, { 4096, 100 }, { 4097, 0 }, { 4097, 4000 },
		{ 65536, 0 }, { 65536, 100 },
	};
	struct env *e = &self->e;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct bulk_ctx c = { .size = cases[i].size };
		struct nvx_uvm_status st;
		char size[16], off[16];
		struct server sv;
		struct vmm *v;

		TH_LOG("bulk %u at offset %u", cases[i].size, cases[i].off);
		snprintf(size, sizeof(size), "%u", cases[i].size);
		snprintf(off, sizeof(off), "%u", cases[i].off);
		ASSERT_NE(NULL, c.pat = malloc(c.size));
		bulk_pattern(c.pat, c.size);
		ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
		sv.handle = bulk_handle;
		sv.priv = &c;
		ASSERT_NE(NULL, v = vmm_new(e));
		ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "bulk", size,
					off, NULL))
			TH_LOG("%s", vmm_why(v));
		ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
		EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
		ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
		EXPECT_EQ(0U, v->vm.exit_status)
			TH_LOG("20: write short, 21: read short, 22: pattern wrong");
		EXPECT_EQ(1, c.writes);
		EXPECT_EQ(1, c.reads);
		ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
		EXPECT_EQ(c.size, st.bulk_out);
		EXPECT_EQ(c.size, st.bulk_in);
		EXPECT_EQ(0U, st.in_flight);
		finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
		server_fini(&sv);
		free(c.pat);
		if (_metadata->exit_code)
			return;
	}
}

/* Two VMs on one endpoint: every message names its true sender. */
struct two_ctx {
	uint32_t id[2];
	uint64_t next[2];	/* the IPC payload expected next */
};

static int two_handle(struct server *sv, struct nvx_uvm_recv *r)
{
	struct two_ctx *c = sv->priv;
	int i;

	if (r->msg.type == NVX_UVM_MSG_VM_GONE)
		return serve_default(sv, r);
	for (i = 0; i < 2 && r->msg.src_vm != c->id[i]; i++)
		;
	if (i == 2) {
		sv_fail(sv, -EPROTO, "message type %u from VM %u, not %u or %u",
			r->msg.type, r->msg.src_vm, c->id[0], c->id[1]);
	} else if (r->msg.type == NVX_UVM_MSG_IPC) {
		/* a window of 1: each VM's payloads come in order */
		if (get_u64(r->msg.payload) != c->next[i])
			sv_fail(sv, -EPROTO, "VM %u sent payload %llu, expected %llu",
				c->id[i],
				(unsigned long long)get_u64(r->msg.payload),
				(unsigned long long)c->next[i]);
		c->next[i]++;
	}
	return serve_default(sv, r);
}

UVM_TEST(two_vms_one_endpoint)
{
	struct env *e = &self->e;
	struct two_ctx c = { 0 };
	struct server sv;
	struct vmm *v[2];
	int i;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	sv.handle = two_handle;
	sv.priv = &c;
	for (i = 0; i < 2; i++) {
		ASSERT_NE(NULL, v[i] = vmm_new(e));
		ASSERT_EQ(0, vmm_launch(e, v[i], e->ep, 0, "test", "ping",
					"2000", "1", NULL))
			TH_LOG("%s", vmm_why(v[i]));
		c.id[i] = v[i]->vm.vm_id;
	}
	ASSERT_NE(c.id[0], c.id[1]);
	ASSERT_EQ(0, serve_done(&sv, v, 2, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, v[i]->ret) TH_LOG("%s", vmm_why(v[i]));
		EXPECT_EQ(0U, v[i]->vm.exit_status);
		EXPECT_EQ(2000U, c.next[i]);
	}
	for (i = 0; i < 2; i++)
		finish_vm(_metadata, e, v[i], e->ep, NVX_UVM_DETACHED);
	check_ep_idle(_metadata, e->ep);
	server_fini(&sv);
}

/* Run test.img with one argument word and return its stdout. */
static char *run_capture(struct __test_metadata *_metadata, struct env *e,
			 const char *mode, struct nvx_uvm_ctrl *ctrl)
{
	struct server sv;
	struct vmm *v;
	char *out;

	if (server_init(&sv, e->ep, e->wake, true))
		return NULL;
	v = vmm_new(e);
	if (!v || vmm_launch(e, v, e->ep, 0, "test", mode, NULL) ||
	    serve_done(&sv, &v, 1, DEADLINE_MS) || sv.err || v->ret ||
	    v->vm.exit_status) {
		TH_LOG("test %s: %s; %s", mode, sv.why,
		       v ? vmm_why(v) : "no VMM slot");
		if (v)
			vmm_free(e, v);
		server_fini(&sv);
		return NULL;
	}
	if (ctrl)
		*ctrl = *v->vm.ctrl;
	out = server_stdout(&sv, NULL);
	vmm_free(e, v);
	server_fini(&sv);
	return out;
}

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

/* Every launch gets fresh seed bytes: different, not all zero. */
UVM_TEST(seed_fresh_per_launch)
{
	static const char zero[NVX_UVM_SEED_SIZE * 2 + 1] =
		"0000000000000000000000000000000000000000000000000000000000000000";
	struct nvx_uvm_ctrl ctrl;
	char *out[2], hex[NVX_UVM_SEED_SIZE * 2 + 1];
	int i, k;

	for (i = 0; i < 2; i++) {
		out[i] = run_capture(_metadata, &self->e, "seed", &ctrl);
		ASSERT_NE(NULL, out[i]);
		ASSERT_EQ((uint32_t)(NVX_UVM_SEED_SIZE * 2 + 1), strlen(out[i]))
			TH_LOG("\"%s\"", out[i]);
		EXPECT_TRUE(is_hex(out[i], NVX_UVM_SEED_SIZE * 2));
		EXPECT_EQ('\n', out[i][NVX_UVM_SEED_SIZE * 2]);
		EXPECT_NE(0, strncmp(out[i], zero, NVX_UVM_SEED_SIZE * 2));
		/* what the guest printed is the control page's seed */
		for (k = 0; k < NVX_UVM_SEED_SIZE; k++)
			snprintf(hex + 2 * k, 3, "%02x", ctrl.seed[k]);
		EXPECT_EQ(0, strncmp(out[i], hex, NVX_UVM_SEED_SIZE * 2));
	}
	EXPECT_NE(0, strcmp(out[0], out[1])) TH_LOG("the same seed twice: %s",
						    out[0]);
	free(out[0]);
	free(out[1]);
}

/* The boot arguments arrive, each one whole, in order. */
UVM_TEST(boot_args_arrive)
{
	struct env *e = &self->e;
	char longarg[301], expect[512];
	struct server sv;
	struct vmm *v;
	char *out;

	memset(longarg, 'a', sizeof(longarg) - 1);
	longarg[sizeof(longarg) - 1] = 0;
	longarg[0] = 'L';
	snprintf(expect, sizeof(expect), "test\nargs\none\ntwo words\n\nx=1\n%s\n",
		 longarg);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "args", "one",
				"two words", "", "x=1", longarg, NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	out = server_stdout(&sv, NULL);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ(expect, out);
	free(out);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/* The CLOCK service's reply reaches the guest: the host's realtime. */
UVM_TEST(clock_reply_reaches_guest)
{
	struct timespec ts;
	unsigned long long t0, t1, v;
	char *out, *end;

	clock_gettime(CLOCK_REALTIME, &ts);
	t0 = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	out = run_capture(_metadata, &self->e, "clock", NULL);
	ASSERT_NE(NULL, out);
	clock_gettime(CLOCK_REALTIME, &ts);
	t1 = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	v = strtoull(out, &end, 10);
	EXPECT_STREQ("\n", end) TH_LOG("\"%s\"", out);
	EXPECT_LE(t0, v);
	EXPECT_GE(t1, v);
	free(out);
}

/*
 * test.img @mode breaks a rule: nvx_uvm_run() returns -EIO with @reason
 * (and @detail), while "ping 500" on the same endpoint goes on. @kernel:
 * the kernel stopped it (not the VMM), so STATUS and VM_GONE say so.
 */
static void misbehave(struct __test_metadata *_metadata, struct env *e,
		      const char *mode, uint32_t reason, uint64_t detail,
		      bool kernel)
{
	struct nvx_uvm_status st;
	struct nvx_uvm_recv r;
	struct server sv;
	struct vmm *v[2];
	uint32_t bad_id;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v[0] = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v[0], e->ep, 0, "test", "ping", "500", "1",
				NULL))
		TH_LOG("%s", vmm_why(v[0]));
	ASSERT_NE(NULL, v[1] = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v[1], e->ep, 0, "test", mode, NULL))
		TH_LOG("%s", vmm_why(v[1]));
	bad_id = v[1]->vm.vm_id;
	sv.tolerate_vm = bad_id;
	ASSERT_EQ(0, serve_done(&sv, v, 2, DEADLINE_MS))
		TH_LOG("ping: %s; %s: %s", vmm_done(v[0]) ? "done" : "running",
		       mode, vmm_done(v[1]) ? "done" : "running");
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);

	EXPECT_EQ(-EIO, v[1]->ret) TH_LOG("%s: %s", mode, vmm_why(v[1]));
	EXPECT_EQ(reason, v[1]->vm.reason)
		TH_LOG("%s stopped for %s, not %s", mode,
		       nvx_uvm_reason_name(v[1]->vm.reason),
		       nvx_uvm_reason_name(reason));
	EXPECT_EQ(detail, v[1]->vm.detail);
	ASSERT_EQ(0, nvx_uvm_status(&v[1]->vm, &st));
	EXPECT_EQ(kernel ? reason : NVX_UVM_RUNNING, st.reason);
	if (kernel)
		EXPECT_EQ(detail, st.detail);

	EXPECT_EQ(0, v[0]->ret) TH_LOG("ping: %s", vmm_why(v[0]));
	EXPECT_EQ(0U, v[0]->vm.exit_status);

	ASSERT_EQ(0, vmm_free(e, v[1]));
	EXPECT_EQ(0, recv_gone(e->ep, bad_id,
			       kernel ? reason : NVX_UVM_DETACHED, &r))
		TH_LOG("type %u VM %u status %d", r.msg.type, r.msg.src_vm,
		       r.msg.status);
	if (kernel)
		EXPECT_EQ(detail, get_u64(r.msg.payload));
	finish_vm(_metadata, e, v[0], e->ep, NVX_UVM_DETACHED);
	check_ep_idle(_metadata, e->ep);
	server_fini(&sv);
}

/* outb to port 0x80: the VMM stops it (the kernel owns only its ports). */
UVM_TEST(misbehave_bad_port)
{
	misbehave(_metadata, &self->e, "badport", NVX_UVM_ERR_PORT, BAD_PORT,
		  false);
}

/* sq_prod sq_entries + 5 ahead of sq_cons (0). */
UVM_TEST(misbehave_bad_ring)
{
	misbehave(_metadata, &self->e, "badring", NVX_UVM_ERR_RING,
		  NVX_UVM_DEF_ENTRIES + 5, true);
}

/* One segment of NVX_UVM_MAX_BULK + 1 bytes. */
UVM_TEST(misbehave_oversize)
{
	misbehave(_metadata, &self->e, "oversize", NVX_UVM_ERR_SIZE,
		  NVX_UVM_MAX_BULK + 1, true);
}

/* A segment 16 bytes before the end of RAM, 4096 long. */
UVM_TEST(misbehave_bad_addr)
{
	misbehave(_metadata, &self->e, "badaddr", NVX_UVM_ERR_ADDR,
		  VM_MEM - 16, true);
}

/* The sg array past the end of RAM. */
UVM_TEST(misbehave_bad_sg)
{
	misbehave(_metadata, &self->e, "badsg", NVX_UVM_ERR_ADDR,
		  VM_MEM + 0x1000, true);
}

/* Message type 0, the first entry of the ring. */
UVM_TEST(misbehave_bad_msg)
{
	misbehave(_metadata, &self->e, "badmsg", NVX_UVM_ERR_MSG, 0, true);
}

/* cq_entries + 1 requests without consuming: the last is refused. */
UVM_TEST(misbehave_flood)
{
	misbehave(_metadata, &self->e, "flood", NVX_UVM_ERR_FLOOD,
		  NVX_UVM_DEF_ENTRIES, true);
}

/*
 * The system process goes away with a request of the VM taken and not
 * answered (closing the endpoint's last fd): the VM stops with
 * NVX_UVM_ERR_ENDPOINT and its memory goes back to the pool.
 */
UVM_TEST(endpoint_closed_stops_vm)
{
	struct env *e = &self->e;
	struct hold h = { .type = NVX_UVM_MSG_IPC };
	struct nvx_uvm_ep_stats es;
	struct nvx_uvm_status st;
	struct server sv;
	struct vmm *v;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	sv.handle = hold_handle;
	sv.priv = &h;
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "wait", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_until_stop(&sv, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(v->vm.vm_id, h.r.msg.src_vm);
	ASSERT_EQ(0, ep_stats(e->ep, &es));
	EXPECT_EQ(1U, es.nr_vms);
	EXPECT_EQ(1U, es.taken);
	EXPECT_FALSE(vmm_done(v));

	close(e->ep);		/* the only copy: VMMs keep none */
	e->ep = -1;
	ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS)) TH_LOG("the VM runs on");
	EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(e->ep_id, v->vm.detail);
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, st.reason);
	EXPECT_EQ(1U, st.in_flight);
	EXPECT_EQ(1U, st.msgs_in);
	EXPECT_EQ(0U, st.msgs_out);
	ASSERT_EQ(0, vmm_free(e, v));
	EXPECT_EQ(0, wait_granted(e->fd, &e->start))
		TH_LOG("granted %llu, %llu at the start",
		       (unsigned long long)granted_now(e->fd),
		       (unsigned long long)e->start.granted_bytes);
	server_fini(&sv);
}

/* The child: the default service on @ep, output to @out, forever. */
static void __attribute__((noreturn)) child_serve(int ep, int out)
{
	struct nvx_uvm_serve s = { .in_fd = -1, .out_fd = out, .err_fd = out };
	struct nvx_uvm_recv r;
	int ret;

	s.buf = malloc(NVX_UVM_MAX_BULK);
	if (!s.buf)
		_exit(3);
	for (;;) {
		ret = nvx_uvm_recv(ep, &s, &r, 0);
		if (ret == -EINTR)
			continue;
		if (ret)
			_exit(4);
		nvx_uvm_serve_msg(ep, &s, &r);
	}
}

/*
 * The system process is a process of its own and is killed while the VM
 * spins: the VM stops with NVX_UVM_ERR_ENDPOINT.
 */
UVM_TEST(system_process_killed_stops_vm)
{
	struct env *e = &self->e;
	char out[64];
	size_t got = 0;
	uint64_t end;
	struct vmm *v;
	pid_t pid;
	int p[2], status;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[0]);
		child_serve(e->ep, p[1]);
	}
	ASSERT_EQ(0, add_kid(e, pid));
	close(p[1]);
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "spin", NULL))
		TH_LOG("%s", vmm_why(v));
	close(e->ep);		/* the child's copy is the last one */
	e->ep = -1;

	end = now_ms() + DEADLINE_MS;
	while (got < strlen("spinning\n") && now_ms() < end && !vmm_done(v)) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 100) <= 0)
			continue;
		n = read(p[0], out + got, sizeof(out) - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
	out[got] = 0;
	ASSERT_STREQ("spinning\n", out) TH_LOG("%s", vmm_why(v));
	ASSERT_FALSE(vmm_done(v)) TH_LOG("%s", vmm_why(v));

	status = reap_kid(e, pid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the serving child ended with status %#x", status);
	ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS)) TH_LOG("the VM spins on");
	EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(e->ep_id, v->vm.detail);
	ASSERT_EQ(0, vmm_free(e, v));
	EXPECT_EQ(0, wait_granted(e->fd, &e->start));
	close(p[0]);
}

/*
 * The VMM process is killed in the middle of endless 64 KiB writes, one
 * of them taken and not answered: the endpoint gets VM_GONE, the reply
 * fails with -ESRCH, nothing stays queued or taken, the VM's memory goes
 * back to the pool.
 */
UVM_TEST(vm_killed_mid_transfer)
{
	struct env *e = &self->e;
	struct hold h = {
		.type = NVX_UVM_MSG_WRITE,
		.min_len = 64 << 10,
		.after = 200,
	};
	struct nvx_uvm_ep_stats es;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct pollfd pf;
	struct server sv;
	int32_t created[2];
	uint32_t vm_id;
	pid_t pid;
	int p[2], status;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char arg0[] = "test", arg1[] = "pushloop";
		char *args[3] = { arg0, arg1, NULL };
		struct nvx_uvm_opts o = {
			.mem = VM_MEM, .argc = 2, .argv = args, .ep_fd = e->ep,
		};
		char image[PATH_MAX + 16];
		struct nvx_uvm_vm vm;
		const char *where;

		close(p[0]);
		snprintf(image, sizeof(image), "%s/test.img", e->dir);
		o.image = image;
		created[0] = nvx_uvm_create(&vm, e->fd, &o, &where);
		created[1] = vm.vm_id;
		if (write(p[1], created, sizeof(created)) != sizeof(created) ||
		    created[0])
			_exit(1);
		nvx_uvm_run(&vm);
		_exit(2);
	}
	ASSERT_EQ(0, add_kid(e, pid));
	close(p[1]);
	pf.fd = p[0];
	pf.events = POLLIN;
	ASSERT_EQ(1, poll(&pf, 1, DEADLINE_MS));
	ASSERT_EQ((ssize_t)sizeof(created), read(p[0], created, sizeof(created)));
	close(p[0]);
	ASSERT_EQ(0, created[0])
		TH_LOG("the child's nvx_uvm_create(): %s", strerror(-created[0]));
	vm_id = created[1];

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, false));
	sv.handle = hold_handle;
	sv.priv = &h;
	ASSERT_EQ(0, serve_until_stop(&sv, DEADLINE_MS))
		TH_LOG("%u writes of 64 KiB in %d s", h.seen,
		       DEADLINE_MS / 1000);
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(vm_id, h.r.msg.src_vm);
	EXPECT_EQ(NVX_UVM_MSGF_PUSH, h.r.msg.flags);
	EXPECT_EQ(64U << 10, h.r.data_len);
	ASSERT_EQ(0, ep_stats(e->ep, &es));
	EXPECT_EQ(1U, es.nr_vms);
	EXPECT_EQ(1U, es.taken);

	status = reap_kid(e, pid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the VMM child ended with status %#x", status);
	ASSERT_EQ(0, wait_no_vms(e->ep));

	memset(&rep, 0, sizeof(rep));
	rep.cookie = h.r.cookie;
	rep.msg.type = NVX_UVM_MSG_WRITE;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(0, recv_gone(e->ep, vm_id, NVX_UVM_DETACHED, &r))
		TH_LOG("type %u VM %u status %d", r.msg.type, r.msg.src_vm,
		       r.msg.status);
	EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r));
	check_ep_idle(_metadata, e->ep);
	EXPECT_EQ(0, wait_granted(e->fd, &e->start))
		TH_LOG("granted %llu, %llu at the start",
		       (unsigned long long)granted_now(e->fd),
		       (unsigned long long)e->start.granted_bytes);
	server_fini(&sv);
}

/*
 * Close the channel, the endpoint and the VMM's fds in different orders
 * while the vCPU runs (spinning, or pushing 64 KiB writes that are being
 * served): every round ends within its deadline the way its order
 * allows, and every grant goes back.
 */
UVM_TEST(racing_close)
{
	struct env *e = &self->e;
	unsigned int seed = 1, i;

	for (i = 0; i < 20; i++) {
		struct nvx_uvm_endpoint ep = {
			.flags = NVX_UVM_EP_CLOEXEC,
			.max_vms = 1,
		};
		unsigned int order = i % 4, wait = rand_r(&seed) % 200;
		bool push = (i / 4) % 2;
		struct nvx_uvm_recv r;
		struct server sv;
		struct vmm *v;
		uint32_t id;

		TH_LOG("round %u: order %u, %s, closing after %u ms", i, order,
		       push ? "pushloop" : "spin", wait);
		ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
		ASSERT_EQ(0, server_init(&sv, ep.fd, e->wake, false));
		ASSERT_NE(NULL, v = vmm_new(e));
		ASSERT_EQ(0, vmm_launch(e, v, ep.fd, 0, "test",
					push ? "pushloop" : "spin", NULL))
			TH_LOG("%s", vmm_why(v));
		id = v->vm.vm_id;
		EXPECT_EQ(0, serve_for(&sv, wait));
		EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);

		switch (order) {
		case 0:
		case 3:
			/* the channel first: detached, the vCPU may run on */
			close(v->vm.chan_fd);
			v->vm.chan_fd = -1;
			EXPECT_EQ(0, recv_gone(ep.fd, id, NVX_UVM_DETACHED, &r))
				TH_LOG("type %u VM %u status %d", r.msg.type,
				       r.msg.src_vm, r.msg.status);
			if (order == 3) {
				/* an endpoint without VMs: stops nothing */
				close(ep.fd);
				ep.fd = -1;
			}
			usleep(20000);
			ASSERT_EQ(0, vmm_stop(v, SHORT_MS * 2));
			/* or its next doorbell reached the VMM */
			if (v->ret != -EINTR) {
				EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
				EXPECT_EQ((uint32_t)NVX_UVM_ERR_PORT, v->vm.reason);
				EXPECT_EQ((uint32_t)NVX_UVM_PORT_DOORBELL, v->vm.detail);
			}
			break;
		case 1:
			/* the endpoint first: the VM must stop by itself */
			close(ep.fd);
			ep.fd = -1;
			ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS));
			EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
			EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason);
			break;
		case 2:
			/* the VMM's other handles: the VM does not care */
			close(v->vm.vm_fd);
			close(v->vm.grant_fd);
			close(v->vm.kvm_fd);
			close(v->vm.irq_fd);
			v->vm.vm_fd = -1;
			v->vm.grant_fd = -1;
			v->vm.kvm_fd = -1;
			v->vm.irq_fd = -1;
			EXPECT_EQ(0, serve_for(&sv, 50));
			EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
			EXPECT_FALSE(vmm_done(v)) TH_LOG("%s", vmm_why(v));
			close(ep.fd);
			ep.fd = -1;
			ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS));
			EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
			EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason);
			break;
		}
		ASSERT_EQ(0, vmm_free(e, v));
		if (ep.fd >= 0)
			close(ep.fd);
		server_fini(&sv);
		if (_metadata->exit_code)
			return;
	}
	check_ep_idle(_metadata, e->ep);
	EXPECT_EQ(0, wait_granted(e->fd, &e->start))
		TH_LOG("granted %llu, %llu at the start",
		       (unsigned long long)granted_now(e->fd),
		       (unsigned long long)e->start.granted_bytes);
}

/* ====================================================== the ABI === */

/* ENDPOINT: flags and max_vms are checked; defaults come back. */
ABI_TEST(endpoint_args)
{
	struct env *e = &self->e;
	struct nvx_uvm_endpoint ep;
	struct nvx_uvm_ep_stats st;
	struct {
		struct nvx_uvm_endpoint ep;
		uint64_t future;
	} big;
	unsigned long cmd;

	memset(&ep, 0, sizeof(ep));
	ep.flags = NVX_UVM_EP_FLAGS + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ep.flags = ~0u;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	memset(&ep, 0, sizeof(ep));
	ep.max_vms = NVX_UVM_MAX_VMS + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ep.max_vms = ~0u;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	cmd = nvx_ioc_resize(NVX_IOC_UVM_ENDPOINT, 8);
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, cmd, &ep));
	memset(&big, 0, sizeof(big));
	big.future = 1;
	cmd = nvx_ioc_resize(NVX_IOC_UVM_ENDPOINT, sizeof(big));
	EXPECT_EQ(-E2BIG, nvx_ioctl(e->fd, cmd, &big));

	/* 0 = the default; no CLOEXEC unless asked */
	memset(&ep, 0, sizeof(ep));
	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	EXPECT_EQ(DEF_VMS, ep.max_vms);
	EXPECT_LE(0, ep.fd);
	EXPECT_NE(0U, ep.ep_id);
	EXPECT_NE(e->ep_id, ep.ep_id);
	EXPECT_EQ(0, fcntl(ep.fd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ(DEF_VMS, st.max_vms);
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.attached);
	EXPECT_EQ(0U, st.msgs_in);
	st.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep.fd, NVX_UVM_EP_IOC_STATS, &st));
	close(ep.fd);

	memset(&ep, 0, sizeof(ep));
	ep.flags = NVX_UVM_EP_CLOEXEC;
	ep.max_vms = NVX_UVM_MAX_VMS;
	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	EXPECT_EQ((uint32_t)NVX_UVM_MAX_VMS, ep.max_vms);
	EXPECT_EQ(FD_CLOEXEC, fcntl(ep.fd, F_GETFD) & FD_CLOEXEC);
	close(ep.fd);
}

/* ATTACH that fails, and which field made it fail. */
static int try_attach(struct env *e, struct nvx_uvm_attach *a)
{
	int ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ATTACH, a);

	if (!ret && a->fd >= 0)
		close(a->fd);
	return ret;
}

#define ATTACH_FAILS(err, b, ...) do {					\
	struct nvx_uvm_attach a_;					\
	bare_args((b), self->e.ep, 0, &a_);				\
	{								\
		struct nvx_uvm_attach *a = &a_;				\
		__VA_ARGS__;						\
	}								\
	EXPECT_EQ(err, try_attach(&self->e, &a_))			\
		TH_LOG("ATTACH with %s", #__VA_ARGS__);			\
} while (0)

/*
 * Every ATTACH check: flags, pad, ring sizes and alignment, each fd of
 * the wrong kind or not open, rings outside RAM or overlapping; then a
 * good one and what it writes into the control page.
 */
ABI_TEST(attach_args)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_attach a;
	struct nvx_uvm_ctrl *c;
	struct nvx_uvm_recv r;
	struct bare *b, *b2;
	int efd, pfd[2], closed, i;
	uint64_t mem;
	uint32_t id;

	ASSERT_EQ(0, bare_new(e, &b));
	mem = b->mem_size;
	ASSERT_EQ(VM_MEM, mem);
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	closed = dup(efd);
	ASSERT_LE(0, closed);
	close(closed);

	ATTACH_FAILS(-EINVAL, b, a->flags |= 1u << 7);
	ATTACH_FAILS(-EINVAL, b, a->flags = ~0u);
	ATTACH_FAILS(-EINVAL, b, a->pad = 1);
	ATTACH_FAILS(-EINVAL, b, a->sq_entries = 3);
	ATTACH_FAILS(-EINVAL, b, a->cq_entries = 48);
	ATTACH_FAILS(-EINVAL, b, a->sq_entries = 2 * NVX_UVM_MAX_ENTRIES);
	ATTACH_FAILS(-EINVAL, b, a->cq_entries = 1u << 31);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = 0x800);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = 0x100010);
	ATTACH_FAILS(-EINVAL, b, a->sq_gpa = NVX_UVM_SQ_GPA + 32);
	ATTACH_FAILS(-EINVAL, b, a->cq_gpa = NVX_UVM_CQ_GPA + 1);

	/* fds of the wrong kind, or not open */
	ATTACH_FAILS(-EINVAL, b, a->vm_fd = efd);
	ATTACH_FAILS(-EINVAL, b, a->vm_fd = e->fd);
	ATTACH_FAILS(-EINVAL, b, a->vm_fd = b->kvm_fd);
	ATTACH_FAILS(-EBADF, b, a->vm_fd = -1);
	ATTACH_FAILS(-EBADF, b, a->vm_fd = closed);
	ATTACH_FAILS(-EBADF, b, a->vm_fd = INT_MAX);
	ATTACH_FAILS(-EINVAL, b, a->ep_fd = efd);
	ATTACH_FAILS(-EINVAL, b, a->ep_fd = e->fd);
	ATTACH_FAILS(-EBADF, b, a->ep_fd = -1);
	ATTACH_FAILS(-EBADF, b, a->ep_fd = closed);
	/* nvx_grant_fget(): -EINVAL for another file, -EBADF for none */
	ATTACH_FAILS(-EINVAL, b, a->grant_fd = efd);
	ATTACH_FAILS(-EINVAL, b, a->grant_fd = b->vm_fd);
	ATTACH_FAILS(-EBADF, b, a->grant_fd = -1);
	ATTACH_FAILS(-EBADF, b, a->grant_fd = closed);
	/* eventfd_ctx_fdget(): -EINVAL for another file, -EBADF for none */
	ATTACH_FAILS(-EINVAL, b, a->irq_fd = pfd[0]);
	ATTACH_FAILS(-EINVAL, b, a->irq_fd = b->grant_fd);
	ATTACH_FAILS(-EBADF, b, a->irq_fd = -2);
	ATTACH_FAILS(-EBADF, b, a->irq_fd = closed);

	/* outside RAM */
	ATTACH_FAILS(-ENOSPC, b, a->ctrl_gpa = mem);
	ATTACH_FAILS(-ENOSPC, b, a->ctrl_gpa = 1ULL << 40);
	ATTACH_FAILS(-ENOSPC, b, a->ctrl_gpa = ~0xfffULL);
	ATTACH_FAILS(-ENOSPC, b, a->sq_gpa = mem - 63 * 64);
	ATTACH_FAILS(-ENOSPC, b, a->cq_gpa = mem);
	ATTACH_FAILS(-ENOSPC, b, a->cq_gpa = ~63ULL);
	ATTACH_FAILS(-ENOSPC, b, a->sq_entries = 256;
		     a->sq_gpa = mem - 255 * 64);
	/* overlapping */
	ATTACH_FAILS(-EINVAL, b, a->sq_gpa = 0);
	ATTACH_FAILS(-EINVAL, b, a->sq_gpa = 0xfc0);
	ATTACH_FAILS(-EINVAL, b, a->cq_gpa = NVX_UVM_SQ_GPA + 63 * 64);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = NVX_UVM_SQ_GPA);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = NVX_UVM_CQ_GPA);
	ATTACH_FAILS(-EINVAL, b, a->cq_gpa = NVX_UVM_SQ_GPA);

	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.attached);

	/* a good one, rings back to back, explicit sizes */
	c = b->ctrl;
	memset(c, 0xa5, 4096);
	bare_args(b, e->ep, 0, &a);
	a.irq_fd = efd;
	a.sq_entries = 128;
	a.cq_entries = 32;
	a.sq_gpa = 0x1000;
	a.cq_gpa = 0x1000 + 128 * 64;
	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ATTACH, &a));
	b->chan_fd = a.fd;
	EXPECT_LE(0, a.fd);
	EXPECT_NE(0U, a.vm_id);
	EXPECT_EQ(mem, a.mem_size);
	EXPECT_EQ(128U, a.sq_entries);
	EXPECT_EQ(32U, a.cq_entries);
	EXPECT_EQ(FD_CLOEXEC, fcntl(a.fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ((uint32_t)NVX_UVM_CTRL_MAGIC, c->magic);
	EXPECT_EQ((uint32_t)NVX_UVM_CTRL_VERSION, c->version);
	EXPECT_EQ(a.vm_id, c->vm_id);
	EXPECT_EQ(sizeof(*c), c->ctrl_size);
	EXPECT_EQ(mem, c->mem_size);
	EXPECT_EQ(0x1000U, c->sq_gpa);
	EXPECT_EQ(0x1000U + 128 * 64, c->cq_gpa);
	EXPECT_EQ(128U, c->sq_entries);
	EXPECT_EQ(32U, c->cq_entries);
	for (i = 0; i < NVX_UVM_SEED_SIZE && c->seed[i] == 0xa5; i++)
		;
	EXPECT_GT(NVX_UVM_SEED_SIZE, i) TH_LOG("the seed was not written");
	EXPECT_EQ(0U, c->credits);
	EXPECT_EQ(0U, c->flags);
	EXPECT_EQ(0U, c->sq_prod);
	EXPECT_EQ(0U, c->sq_cons);
	EXPECT_EQ(0U, c->cq_prod);
	EXPECT_EQ(0U, c->cq_cons);
	EXPECT_EQ(0U, c->doorbells);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(1U, st.attached);

	/* one channel per VM, by any fd of it */
	b->vm_id = a.vm_id;
	bare_args(b, e->ep, 0, &a);
	EXPECT_EQ(-EBUSY, try_attach(e, &a));
	a.vm_fd = dup(b->vm_fd);
	ASSERT_LE(0, a.vm_fd);
	EXPECT_EQ(-EBUSY, try_attach(e, &a));
	close(a.vm_fd);
	/* a channel is no endpoint (another VM: this one is taken) */
	ASSERT_EQ(0, bare_new(e, &b2));
	ATTACH_FAILS(-EINVAL, b2, a->ep_fd = b->chan_fd);

	/* detached, the VM may attach again, with a new id */
	id = b->vm_id;
	close(b->chan_fd);
	b->chan_fd = -1;
	ASSERT_EQ(0, bare_attach(e, b, e->ep, 0));
	EXPECT_NE(id, b->vm_id);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(2U, st.attached);
	EXPECT_EQ(1U, st.gone);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));

	close(efd);
	close(pfd[0]);
	close(pfd[1]);
}

/* An endpoint serves at most max_vms VMs; a detach makes room. */
ABI_TEST(attach_endpoint_full)
{
	struct env *e = &self->e;
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 1 };
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_recv r;
	struct bare *b[2];
	uint32_t id;

	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ASSERT_EQ(0, bare_new(e, &b[0]));
	ASSERT_EQ(0, bare_new(e, &b[1]));
	ASSERT_EQ(0, bare_attach(e, b[0], ep.fd, 0));
	EXPECT_EQ(-EBUSY, bare_attach(e, b[1], ep.fd, 0));
	/* another endpoint has room */
	ASSERT_EQ(0, bare_attach(e, b[1], e->ep, 0));
	close(b[1]->chan_fd);
	b[1]->chan_fd = -1;

	id = b[0]->vm_id;
	close(b[0]->chan_fd);
	b[0]->chan_fd = -1;
	ASSERT_EQ(0, bare_attach(e, b[1], ep.fd, 0));
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(1U, st.max_vms);
	EXPECT_EQ(2U, st.attached);
	EXPECT_EQ(1U, st.gone);
	EXPECT_EQ(0, recv_gone(ep.fd, id, NVX_UVM_DETACHED, &r));
	EXPECT_EQ(-EBUSY, bare_attach(e, b[0], ep.fd, 0));
	close(ep.fd);
}

/*
 * RECV and REPLY of an IPC message: the kernel's fields (src_vm cannot
 * be forged), the completion in the CQ and the credit; then every
 * REPLY error and the RECV errors.
 */
ABI_TEST(recv_reply_ipc)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b;
	uint64_t v = 41;
	int fl;

	/* RECV errors */
	memset(&r, 0, sizeof(r));
	r.flags = NVX_UVM_RECV_FLAGS + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	r.flags = ~0u;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r));
	fl = fcntl(e->ep, F_GETFL);
	ASSERT_EQ(0, fcntl(e->ep, F_SETFL, fl | O_NONBLOCK));
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EAGAIN, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	ASSERT_EQ(0, fcntl(e->ep, F_SETFL, fl));

	/* REPLY errors without a request */
	memset(&rep, 0, sizeof(rep));
	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.flags = 0;
	/* a guest never sees type 0 or a kernel-only type */
	rep.msg.type = 0;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.msg.type = NVX_UVM_MSG_VM_GONE;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.msg.type = NVX_UVM_MSG_IPC;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.cookie = 0xffffffffULL << 32;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	rep.cookie = (uint64_t)b->vm_id << 32 | 3;	/* a free slot */
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.cookie = (uint64_t)b->vm_id << 32 | 0xffff;	/* no such slot */
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));

	/* a message with the fields the kernel owns forged */
	msg_init(&m, NVX_UVM_MSG_IPC, 7);
	m.src_vm = 0xdead;
	m.src_tid = 5;
	m.status = 123;
	m.bulk_len = 99;
	memcpy(m.payload, &v, sizeof(v));
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_EQ(1U, b->ctrl->sq_cons);
	EXPECT_EQ(1U, b->ctrl->doorbells);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.queued);
	EXPECT_EQ(0U, st.taken);
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(NVX_UVM_MSG_IPC, r.msg.type);
	EXPECT_EQ(7U, r.msg.tag);
	EXPECT_EQ(b->vm_id, r.msg.src_vm);
	EXPECT_EQ(5U, r.msg.src_tid);
	EXPECT_EQ(0, r.msg.status);
	EXPECT_EQ(0U, r.msg.bulk_len);
	EXPECT_EQ(41U, get_u64(r.msg.payload));
	EXPECT_EQ(0U, r.data_len);
	EXPECT_EQ(0U, r.pad);
	EXPECT_EQ(b->vm_id, r.cookie >> 32);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(1U, st.taken);
	EXPECT_EQ(1U, st.msgs_in);

	/* wrong generation, data for a request without PULL, flags */
	memset(&rep, 0, sizeof(rep));
	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.cookie = r.cookie ^ (1 << 16);
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.cookie = r.cookie;
	rep.buf = (uintptr_t)&v;
	rep.buf_len = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.buf_len = 0;
	rep.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(-EAGAIN, bare_complete(b, &m));

	/* the reply */
	rep.flags = 0;
	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.msg.status = -5;
	rep.msg.tag = 1234;		/* the kernel's to fill in */
	v = 42;
	memcpy(rep.msg.payload, &v, sizeof(v));
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(1U, b->ctrl->credits);
	EXPECT_EQ(1U, b->ctrl->cq_prod);
	ASSERT_EQ(0, bare_complete(b, &m));
	EXPECT_EQ(NVX_UVM_MSG_IPC, m.type);
	EXPECT_EQ(7U, m.tag);
	EXPECT_EQ(b->vm_id, m.src_vm);
	EXPECT_EQ(5U, m.src_tid);
	EXPECT_EQ(-5, m.status);
	EXPECT_EQ(0U, m.bulk_len);
	EXPECT_EQ(42U, get_u64(m.payload));
	EXPECT_EQ(0U, b->ctrl->credits);
	/* once only */
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(1U, st.msgs_out);
}

/*
 * PUSH: RECV copies the data straight from the guest's segments (two,
 * one crossing a page), at most buf_len of it, data_len the whole; a
 * fault puts the message back. PULL: REPLY writes the segments in order,
 * never more than their room.
 */
ABI_TEST(recv_reply_bulk)
{
	struct env *e = &self->e;
	const uint64_t sg_gpa = 0x100000, g1 = 0x1ff000 + 4000, g2 = 0x300000;
	unsigned char src[300], pat[300], buf[400];
	struct nvx_uvm_status cs;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct nvx_uvm_sg *sg;
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	sg = (struct nvx_uvm_sg *)(b->mem + sg_gpa);

	/* PUSH 200 + 77 bytes */
	fill(src, sizeof(src), 3);
	memcpy(b->mem + g1, src, 200);
	memcpy(b->mem + g2, src + 200, 77);
	sg[0] = (struct nvx_uvm_sg){ .gpa = g1, .len = 200 };
	sg[1] = (struct nvx_uvm_sg){ .gpa = g2, .len = 77 };
	msg_init(&m, NVX_UVM_MSG_WRITE, 1);
	m.flags = NVX_UVM_MSGF_PUSH;
	m.sg_gpa = sg_gpa;
	m.sg_nr = 2;
	ASSERT_EQ(0, bare_post(b, &m));
	/* the sg list is read at the doorbell: changing it now is too late */
	sg[0].len = 1;

	memset(&r, 0, sizeof(r));
	r.buf = 1;		/* a fault: the message goes back */
	r.buf_len = 100;
	EXPECT_EQ(-EFAULT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.queued);
	EXPECT_EQ(0U, st.taken);

	memset(buf, 0xee, sizeof(buf));
	memset(&r, 0, sizeof(r));
	r.buf = (uintptr_t)buf;
	r.buf_len = 250;
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	EXPECT_EQ(NVX_UVM_MSG_WRITE, r.msg.type);
	EXPECT_EQ(NVX_UVM_MSGF_PUSH, r.msg.flags);
	EXPECT_EQ(277U, r.data_len);
	EXPECT_EQ(0, memcmp(buf, src, 250));
	EXPECT_EQ(0xee, buf[250]);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_WRITE;
	rep.buf = (uintptr_t)buf;
	rep.buf_len = 5;	/* data for a PUSH */
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.buf_len = 0;
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	ASSERT_EQ(0, bare_complete(b, &m));
	EXPECT_EQ(1U, m.tag);
	EXPECT_EQ(0, m.status);
	EXPECT_EQ(250U, m.bulk_len);	/* what the system process took */
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(250U, cs.bulk_out);

	/* PULL into 200 + 100 bytes of room */
	memset(b->mem + g1, 0xcc, 200);
	memset(b->mem + g2, 0xcc, 100);
	sg[0] = (struct nvx_uvm_sg){ .gpa = g1, .len = 200 };
	sg[1] = (struct nvx_uvm_sg){ .gpa = g2, .len = 100 };
	msg_init(&m, NVX_UVM_MSG_READ, 2);
	m.flags = NVX_UVM_MSGF_PULL;
	m.sg_gpa = sg_gpa;
	m.sg_nr = 2;
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(NVX_UVM_MSGF_PULL, r.msg.flags);
	EXPECT_EQ(300U, r.data_len);
	fill(pat, sizeof(pat), 4);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_READ;
	rep.buf = (uintptr_t)pat;
	rep.buf_len = 301;
	EXPECT_EQ(-EMSGSIZE, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.buf = 1;
	rep.buf_len = 10;
	EXPECT_EQ(-EFAULT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(-EAGAIN, bare_complete(b, &m));
	rep.buf = (uintptr_t)pat;
	rep.buf_len = 250;
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(0, memcmp(b->mem + g1, pat, 200));
	EXPECT_EQ(0, memcmp(b->mem + g2, pat + 200, 50));
	EXPECT_EQ(0xcc, b->mem[g2 + 50]);
	EXPECT_EQ(0xcc, b->mem[g2 + 99]);
	ASSERT_EQ(0, bare_complete(b, &m));
	EXPECT_EQ(2U, m.tag);
	EXPECT_EQ(NVX_UVM_MSGF_PULL, m.flags);
	EXPECT_EQ(250U, m.bulk_len);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(250U, cs.bulk_in);
	EXPECT_EQ(2U, cs.msgs_in);
	EXPECT_EQ(2U, cs.msgs_out);
	EXPECT_EQ(0U, cs.in_flight);
}

/*
 * A request taken, then the VM stopped (a bad port through KICK): the
 * reply fails with -ESRCH; the detach clears "taken" and leaves a
 * VM_GONE notice that carries the reason and the detail.
 */
ABI_TEST(reply_after_vm_stopped)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b;
	uint32_t id;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	msg_init(&m, NVX_UVM_MSG_IPC, 9);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	ASSERT_EQ(0, bare_kick(b, BAD_PORT));
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_PORT, cs.reason);
	EXPECT_EQ(BAD_PORT, cs.detail);
	EXPECT_EQ(1U, cs.in_flight);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_IPC;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	/* a stopped VM takes nothing more */
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_EQ(1U, b->ctrl->sq_cons);
	EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.taken);

	id = b->vm_id;
	close(b->chan_fd);
	b->chan_fd = -1;
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_ERR_PORT, &r));
	EXPECT_EQ(BAD_PORT, get_u64(r.msg.payload));
	EXPECT_EQ(0U, r.data_len);
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	check_ep_idle(_metadata, e->ep);
}

/* STATUS and KICK on a channel. */
ABI_TEST(channel_status_kick)
{
	struct env *e = &self->e;
	struct nvx_uvm_status cs;
	struct nvx_uvm_kick k;
	struct bare *b[2];

	ASSERT_EQ(0, bare_new(e, &b[0]));
	ASSERT_EQ(0, bare_attach(e, b[0], e->ep, 0));
	ASSERT_EQ(0, chan_status(b[0]->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(b[0]->vm_id, cs.vm_id);
	EXPECT_EQ(0U, cs.doorbells);
	cs.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(b[0]->chan_fd, NVX_UVM_IOC_STATUS, &cs));
	/* the fast path has no KICK */
	EXPECT_EQ(-EINVAL, bare_kick(b[0], NVX_UVM_PORT_DOORBELL));

	ASSERT_EQ(0, bare_new(e, &b[1]));
	ASSERT_EQ(0, bare_attach(e, b[1], e->ep, NVX_UVM_ATTACH_SLOW));
	memset(&k, 0, sizeof(k));
	k.port = NVX_UVM_PORT_DOORBELL;
	k.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(b[1]->chan_fd, NVX_UVM_IOC_KICK, &k));
	k.flags = 0;
	k.pad = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(b[1]->chan_fd, NVX_UVM_IOC_KICK, &k));
	k.pad = 0;
	k.value = 0x12345678;	/* ignored */
	EXPECT_EQ(0, nvx_ioctl(b[1]->chan_fd, NVX_UVM_IOC_KICK, &k));
	EXPECT_EQ(0, bare_kick(b[1], NVX_UVM_PORT_DOORBELL));
	ASSERT_EQ(0, chan_status(b[1]->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(2U, cs.doorbells);
	EXPECT_EQ(0U, cs.msgs_in);
	EXPECT_EQ(2U, b[1]->ctrl->doorbells);
	/* a write to another port of the kernel's is fatal too */
	EXPECT_EQ(0, bare_kick(b[1], NVX_UVM_PORT_DOORBELL + 1));
	ASSERT_EQ(0, chan_status(b[1]->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_PORT, cs.reason);
	EXPECT_EQ((uint32_t)(NVX_UVM_PORT_DOORBELL + 1), cs.detail);
	/* and a stopped VM's doorbells count no more */
	EXPECT_EQ(0, bare_kick(b[1], NVX_UVM_PORT_DOORBELL));
	ASSERT_EQ(0, chan_status(b[1]->chan_fd, &cs));
	EXPECT_EQ(2U, cs.doorbells);
}

/*
 * Each rule of the ring, broken once by a "guest" of our own on a fresh
 * VM: the VM stops with the reason and detail, and its VM_GONE says so.
 */
ABI_TEST(guest_rules_enforced)
{
	enum { C_TYPE0, C_TYPE_BIG, C_BOTH, C_FLAG, C_PUSH_NOSG, C_SG_NODIR,
	       C_SG_MANY, C_SG_UNALIGNED, C_SG_END, C_SEG_ZERO, C_SEG_FLAGS,
	       C_SEG_TOTAL, C_SEG_OUT, C_SQ_AHEAD, C_CQ_BACK, C_FLOOD,
	       C_PORT, C_NR };
	static const char *const names[C_NR] = {
		"type 0", "type 64", "PUSH|PULL", "unknown flag",
		"PUSH without sg", "sg without direction", "33 segments",
		"unaligned sg", "sg past RAM", "empty segment",
		"segment flags", "segments over MAX_BULK", "segment past RAM",
		"sq_prod too far", "cq_cons moved back", "flood", "bad port",
	};
	struct env *e = &self->e;
	const uint64_t sg_gpa = 0x100000;
	int c;

	for (c = 0; c < C_NR; c++) {
		struct nvx_uvm_status cs;
		struct nvx_uvm_recv r;
		struct nvx_uvm_msg m;
		struct nvx_uvm_sg *sg;
		uint32_t reason, i, id;
		uint64_t detail;
		struct bare *b;

		ASSERT_EQ(0, bare_new(e, &b));
		ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
		sg = (struct nvx_uvm_sg *)(b->mem + sg_gpa);
		sg[0] = (struct nvx_uvm_sg){ .gpa = 0x200000, .len = 16 };
		sg[1] = (struct nvx_uvm_sg){ .gpa = 0x300000, .len = 16 };
		msg_init(&m, NVX_UVM_MSG_WRITE, 1);
		m.flags = NVX_UVM_MSGF_PUSH;
		m.sg_gpa = sg_gpa;
		m.sg_nr = 1;
		reason = NVX_UVM_ERR_MSG;
		detail = 0;	/* sq_cons of the bad entry */
		switch (c) {
		case C_TYPE0:
			m.type = 0;
			break;
		case C_TYPE_BIG:
			m.type = NVX_UVM_MSG_GUEST_MAX + 1;
			break;
		case C_BOTH:
			m.flags = NVX_UVM_MSGF_ALL;
			break;
		case C_FLAG:
			m.flags |= 1 << 4;
			break;
		case C_PUSH_NOSG:
			m.sg_nr = 0;
			break;
		case C_SG_NODIR:
			m.flags = 0;
			break;
		case C_SG_MANY:
			m.sg_nr = NVX_UVM_MAX_SG + 1;
			reason = NVX_UVM_ERR_SIZE;
			detail = m.sg_nr;
			break;
		case C_SG_UNALIGNED:
			m.sg_gpa = sg_gpa + 8;
			reason = NVX_UVM_ERR_ADDR;
			detail = m.sg_gpa;
			break;
		case C_SG_END:
			m.sg_gpa = b->mem_size - 16;
			m.sg_nr = 2;
			reason = NVX_UVM_ERR_ADDR;
			detail = m.sg_gpa;
			break;
		case C_SEG_ZERO:
			sg[0].len = 0;
			reason = NVX_UVM_ERR_SIZE;
			detail = 0;
			break;
		case C_SEG_FLAGS:
			sg[0].flags = 1;
			detail = sg[0].gpa;
			break;
		case C_SEG_TOTAL:
			sg[0].len = 200 << 10;
			sg[1].len = 200 << 10;
			m.sg_nr = 2;
			reason = NVX_UVM_ERR_SIZE;
			detail = 200 << 10;
			break;
		case C_SEG_OUT:
			sg[0].gpa = b->mem_size - 16;
			sg[0].len = 4096;
			reason = NVX_UVM_ERR_ADDR;
			detail = sg[0].gpa;
			break;
		case C_SQ_AHEAD:
			b->sq_prod = b->sq_n;	/* bare_post() adds one */
			reason = NVX_UVM_ERR_RING;
			detail = b->sq_n + 1;
			break;
		case C_CQ_BACK:
			b->ctrl->cq_cons = -(b->cq_n + 1);
			reason = NVX_UVM_ERR_RING;
			detail = (uint32_t)-(b->cq_n + 1);
			break;
		case C_FLOOD:
			msg_init(&m, NVX_UVM_MSG_IPC, 0);
			for (i = 0; i < b->cq_n; i++) {
				m.tag = i;
				ASSERT_EQ(0, bare_post(b, &m));
			}
			ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
			ASSERT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
			EXPECT_EQ(b->cq_n, cs.in_flight);
			m.tag = i;
			reason = NVX_UVM_ERR_FLOOD;
			detail = b->cq_n;
			break;
		case C_PORT:
			reason = NVX_UVM_ERR_PORT;
			detail = BAD_PORT;
			break;
		}
		/* a stop is no error of the doorbell's */
		EXPECT_EQ(0, c == C_PORT ? bare_kick(b, BAD_PORT) :
					   bare_post(b, &m));
		ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
		EXPECT_EQ(reason, cs.reason)
			TH_LOG("%s: reason %s, not %s", names[c],
			       nvx_uvm_reason_name(cs.reason),
			       nvx_uvm_reason_name(reason));
		EXPECT_EQ(detail, cs.detail) TH_LOG("%s", names[c]);
		EXPECT_EQ(c == C_FLOOD ? b->cq_n : 0, cs.msgs_in)
			TH_LOG("%s", names[c]);

		/* its queued requests go with it; VM_GONE comes first */
		id = b->vm_id;
		bare_free(e, b);
		EXPECT_EQ(0, recv_gone(e->ep, id, reason, &r))
			TH_LOG("%s: type %u VM %u status %d", names[c],
			       r.msg.type, r.msg.src_vm, r.msg.status);
		EXPECT_EQ(detail, get_u64(r.msg.payload)) TH_LOG("%s", names[c]);
		EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r)) TH_LOG("%s", names[c]);
		if (_metadata->exit_code)
			return;
	}
	check_ep_idle(_metadata, e->ep);
}

/* ioctl @cmd with @size in its size bits: 0 or -errno. */
static int resized(int fd, unsigned long cmd, size_t size, void *arg)
{
	return nvx_ioctl(fd, nvx_ioc_resize(cmd, size), arg);
}

/* Numbers a file does not know, and argument sizes. */
ABI_TEST(unknown_ioctls_and_sizes)
{
	struct env *e = &self->e;
	struct {
		struct nvx_uvm_ep_stats st;
		uint64_t future[2];
	} big;
	struct {
		struct nvx_uvm_status st;
		uint64_t future;
	} bigst;
	struct nvx_uvm_recv r;
	char buf[512];
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	memset(buf, 0, sizeof(buf));

	/* the endpoint */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, _IOWR(NVX_IOC_MAGIC, 0x3f,
						  struct nvx_uvm_recv), buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_UVM_IOC_STATUS, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_UVM_IOC_KICK, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_IOC_UVM_ATTACH, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_IOC_FEATURES, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, _IOWR('x', 0x38,
						  struct nvx_uvm_recv), buf));
	/* the channel */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_RECV, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_STATS, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, _IOW(NVX_IOC_MAGIC, 0x42,
						      struct nvx_uvm_kick),
				     buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_IOC_UVM_ENDPOINT, buf));
	/* /dev/nvx */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->fd, NVX_UVM_IOC_STATUS, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->fd, NVX_UVM_EP_IOC_RECV, buf));

	/* smaller than the struct: -EINVAL */
	EXPECT_EQ(-EINVAL, resized(e->ep, NVX_UVM_EP_IOC_RECV, 0, buf));
	EXPECT_EQ(-EINVAL, resized(e->ep, NVX_UVM_EP_IOC_RECV,
				   sizeof(struct nvx_uvm_recv) - 1, buf));
	EXPECT_EQ(-EINVAL, resized(e->ep, NVX_UVM_EP_IOC_REPLY,
				   sizeof(struct nvx_uvm_reply) - 8, buf));
	EXPECT_EQ(-EINVAL, resized(b->chan_fd, NVX_UVM_IOC_STATUS, 8, buf));
	EXPECT_EQ(-EINVAL, resized(b->chan_fd, NVX_UVM_IOC_KICK, 12, buf));
	EXPECT_EQ(-EINVAL, resized(e->fd, NVX_IOC_UVM_ATTACH, 16, buf));
	/* bigger: fine when the unknown tail is zero, and left alone */
	memset(&big, 0, sizeof(big));
	EXPECT_EQ(0, resized(e->ep, NVX_UVM_EP_IOC_STATS, sizeof(big), &big));
	EXPECT_EQ(EP_MAX_VMS, big.st.max_vms);
	EXPECT_EQ(1U, big.st.nr_vms);
	EXPECT_EQ(0U, big.future[0] | big.future[1]);
	big.future[1] = 1;
	EXPECT_EQ(-E2BIG, resized(e->ep, NVX_UVM_EP_IOC_STATS, sizeof(big),
				  &big));
	memset(&bigst, 0, sizeof(bigst));
	EXPECT_EQ(0, resized(b->chan_fd, NVX_UVM_IOC_STATUS, sizeof(bigst),
			     &bigst));
	EXPECT_EQ(b->vm_id, bigst.st.vm_id);
	EXPECT_EQ(0U, bigst.future);
	bigst.future = 1;
	EXPECT_EQ(-E2BIG, resized(b->chan_fd, NVX_UVM_IOC_STATUS,
				  sizeof(bigst), &bigst));
	memset(&r, 0, sizeof(r));
	memset(buf, 0, sizeof(buf));
	r.flags = NVX_UVM_RECV_NONBLOCK;
	memcpy(buf, &r, sizeof(r));
	EXPECT_EQ(-EAGAIN, resized(e->ep, NVX_UVM_EP_IOC_RECV, sizeof(r) + 16,
				   buf));
	buf[sizeof(r) + 15] = 1;
	EXPECT_EQ(-E2BIG, resized(e->ep, NVX_UVM_EP_IOC_RECV, sizeof(r) + 16,
				  buf));
}

/* A thread blocked in RECV, its tid and what it got. */
struct receiver {
	int ep;
	pid_t tid;
	int ret;
	int done;
	struct nvx_uvm_recv r;
	pthread_t thread;
};

static void *receiver_main(void *arg)
{
	struct receiver *rc = arg;

	__atomic_store_n(&rc->tid, sys_gettid(), __ATOMIC_SEQ_CST);
	memset(&rc->r, 0, sizeof(rc->r));
	rc->ret = nvx_ioctl(rc->ep, NVX_UVM_EP_IOC_RECV, &rc->r);
	__atomic_store_n(&rc->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Start @rc and wait until it sleeps (in RECV): 0 or -ETIMEDOUT. */
static int receiver_start(struct receiver *rc, int ep)
{
	uint64_t end = now_ms() + SHORT_MS;
	pid_t tid;

	memset(rc, 0, sizeof(*rc));
	rc->ep = ep;
	if (pthread_create(&rc->thread, NULL, receiver_main, rc))
		return -EAGAIN;
	while (now_ms() < end) {
		tid = __atomic_load_n(&rc->tid, __ATOMIC_SEQ_CST);
		if (tid && thread_state(tid) == 'S')
			return 0;
		if (__atomic_load_n(&rc->done, __ATOMIC_SEQ_CST))
			return -EPROTO;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

/* Wait for @rc to return: 0, or -ETIMEDOUT (then it is left behind). */
static int receiver_join(struct receiver *rc, int kick_sig)
{
	uint64_t end = now_ms() + SHORT_MS;

	while (!__atomic_load_n(&rc->done, __ATOMIC_SEQ_CST)) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		if (kick_sig)
			pthread_kill(rc->thread, kick_sig);
		usleep(10000);
	}
	pthread_join(rc->thread, NULL);
	return 0;
}

/* A blocking RECV sleeps until a message comes and then returns it. */
ABI_TEST(recv_blocks_until_message)
{
	struct env *e = &self->e;
	struct receiver rc;
	struct nvx_uvm_msg m;
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, receiver_start(&rc, e->ep));
	usleep(100000);
	EXPECT_FALSE(__atomic_load_n(&rc.done, __ATOMIC_SEQ_CST));
	msg_init(&m, NVX_UVM_MSG_IPC, 77);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, receiver_join(&rc, 0));
	EXPECT_EQ(0, rc.ret);
	EXPECT_EQ(NVX_UVM_MSG_IPC, rc.r.msg.type);
	EXPECT_EQ(77U, rc.r.msg.tag);
	EXPECT_EQ(b->vm_id, rc.r.msg.src_vm);

	/* a VM_GONE notice wakes it too */
	ASSERT_EQ(0, receiver_start(&rc, e->ep));
	close(b->chan_fd);
	b->chan_fd = -1;
	ASSERT_EQ(0, receiver_join(&rc, 0));
	EXPECT_EQ(0, rc.ret);
	EXPECT_EQ(NVX_UVM_MSG_VM_GONE, rc.r.msg.type);
	EXPECT_EQ(b->vm_id, rc.r.msg.src_vm);
	check_ep_idle(_metadata, e->ep);
}

/* A signal (handler without SA_RESTART) ends a blocked RECV: -EINTR. */
ABI_TEST(recv_interrupted_by_signal)
{
	struct env *e = &self->e;
	struct receiver rc;

	ASSERT_EQ(0, receiver_start(&rc, e->ep));
	ASSERT_EQ(0, pthread_kill(rc.thread, KICK_SIG));
	/* only a signal that came before RECV slept would need another */
	ASSERT_EQ(0, receiver_join(&rc, KICK_SIG));
	EXPECT_EQ(-EINTR, rc.ret);
	check_ep_idle(_metadata, e->ep);
}

static short poll_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) < 0 ? -1 : p.revents;
}

/* POLLIN while a message or a VM_GONE notice waits, not otherwise. */
ABI_TEST(poll_reports_messages)
{
	struct env *e = &self->e;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	EXPECT_EQ(0, poll_in(e->ep));
	msg_init(&m, NVX_UVM_MSG_IPC, 1);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_TRUE(poll_in(e->ep) & POLLIN);
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_TRUE(poll_in(e->ep) & POLLIN);
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(0, poll_in(e->ep));
	close(b->chan_fd);
	b->chan_fd = -1;
	EXPECT_TRUE(poll_in(e->ep) & POLLIN);
	EXPECT_EQ(0, recv_gone(e->ep, b->vm_id, NVX_UVM_DETACHED, &r));
	EXPECT_EQ(0, poll_in(e->ep));
	check_ep_idle(_metadata, e->ep);
}

TEST_HARNESS_MAIN
