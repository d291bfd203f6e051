// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the nvx selftest group "uvm": see include/uvm_util.h.
 */
#include <dirent.h>

#include "uvm_util.h"

/* ---------------------------------------------------- small helpers --- */

static void no_op(int sig)
{
	(void)sig;
}

/**
 * catch_kick_sig() - KICK_SIG interrupts KVM_RUN and RECV: no SA_RESTART
 */
int catch_kick_sig(void)
{
	struct sigaction sa = { .sa_handler = no_op };

	sigemptyset(&sa.sa_mask);
	return sigaction(KICK_SIG, &sa, NULL) ? -errno : 0;
}

/**
 * thread_state() - the scheduler state letter of a thread
 * @tid: a thread of this process
 *
 * The scheduler state letter of thread @tid of this process, or 0.
 */
char thread_state(pid_t tid)
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

/**
 * get_u32() - a little-endian 32-bit value from bytes
 * @p: the bytes
 */
uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/**
 * get_u64() - a little-endian 64-bit value from bytes
 * @p: the bytes
 */
uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/**
 * msg_init() - zero a message and set its type and tag
 * @m: the message
 * @type: its type (NVX_UVM_MSG_*)
 * @tag: its tag
 */
void msg_init(struct nvx_uvm_msg *m, uint16_t type, uint32_t tag)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->tag = tag;
}

/**
 * bulk_pattern() - The bulk test's pattern, as test.img makes it
 * @p: the buffer
 * @size: its length
 */
void bulk_pattern(unsigned char *p, uint32_t size)
{
	uint32_t k;

	for (k = 0; k < size; k++)
		p[k] = (k * 7 + size) & 0xff;
}

/**
 * fill_bytes() - A pattern of our own for data that crosses the ABI
 * @p: the buffer
 * @len: its length
 * @seed: the pattern's seed
 */
void fill_bytes(unsigned char *p, size_t len, unsigned int seed)
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

/**
 * granted_now() - the pool's granted bytes now
 * @fd: an open /dev/nvx
 */
uint64_t granted_now(int fd)
{
	struct nvx_pool_stats s;

	return pool_stats(fd, &s) ? ~0ULL : s.granted_bytes;
}

/**
 * ep_stats() - NVX_UVM_EP_IOC_STATS on an endpoint
 * @ep: an endpoint fd
 * @st: where the stats go
 */
int ep_stats(int ep, struct nvx_uvm_ep_stats *st)
{
	memset(st, 0, sizeof(*st));
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_STATS, st);
}

/* For wait_until(): @ep serves no VM. */
static int no_vms(int ep, const void *unused)
{
	struct nvx_uvm_ep_stats st;

	return ep_stats(ep, &st) ? -EIO : !st.nr_vms;
}

/**
 * wait_no_vms() - Wait until @ep serves no VM: 0, or -ETIMEDOUT
 * @ep: an endpoint fd
 */
int wait_no_vms(int ep)
{
	return wait_until(no_vms, ep, NULL, 10000, 5000);
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

/**
 * vmm_done() - whether a VMM thread has finished
 * @v: the VMM thread
 */
bool vmm_done(struct vmm *v)
{
	return __atomic_load_n(&v->done, __ATOMIC_SEQ_CST);
}

/**
 * vmm_new() - A new VMM slot of @e (freed by vmm_free() or the teardown)
 * @e: the test's environment
 */
struct vmm *vmm_new(struct env *e)
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

/**
 * vmm_launch() - build a VM from an image and start its VMM thread
 * @e: the test's environment
 * @v: the VMM thread, from vmm_new()
 * @ep: the endpoint fd
 * @slow: attach with NVX_UVM_ATTACH_SLOW
 * @name: the image's name, then its boot arguments, then NULL
 *
 * Build the VM of @name.img with argv { @name, ... } attached to @ep and start
 * its VMM thread: 0 or -errno (v->where says the step).
 */
int __attribute__((sentinel)) vmm_launch(struct env *e, struct vmm *v,
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

/*
 * Join @v's thread within @ms: 0, or -ETIMEDOUT. With @stop, make
 * nvx_uvm_run() return first: Vm.stop, then KICK_SIG every 10 ms;
 * without, look every 2 ms.
 */
static int vmm_join(struct vmm *v, uint64_t ms, bool stop)
{
	uint64_t end = now_ms() + ms;

	if (!v->started || v->joined)
		return 0;
	if (stop)
		v->vm.stop = 1;
	while (!vmm_done(v)) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		if (stop)
			pthread_kill(v->thread, KICK_SIG);
		usleep(stop ? 10000 : 2000);
	}
	pthread_join(v->thread, NULL);
	v->joined = true;
	return 0;
}

/**
 * vmm_wait() - Wait for the VMM thread to finish on its own: 0, or -ETIMEDOUT
 * @v: the VMM thread
 * @ms: how long, in milliseconds
 */
int vmm_wait(struct vmm *v, uint64_t ms)
{
	return vmm_join(v, ms, false);
}

/**
 * vmm_stop() - Make nvx_uvm_run() return
 * @v: the VMM thread
 * @ms: how long, in milliseconds
 *
 * Vm.stop, then KICK_SIG until the thread finished (a signal that lands just
 * before KVM_RUN is lost).
 */
int vmm_stop(struct vmm *v, uint64_t ms)
{
	return vmm_join(v, ms, true);
}

/**
 * vmm_free() - Stop, destroy and forget @v
 * @e: the test's environment
 * @v: the VMM thread
 *
 * A vCPU thread that cannot be stopped is left alone with its VM (-ETIMEDOUT):
 * the process's exit ends both.
 */
int vmm_free(struct env *e, struct vmm *v)
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

/**
 * vmm_why() - How a VMM ended, for the logs
 * @v: the VMM thread
 */
const char *vmm_why(struct vmm *v)
{
	static char buf[448];

	snprintf(buf, sizeof(buf),
		 "run %d (%s), exit status %u, reason %u (%s), detail %#llx, where %s%s%s",
		 v->ret, strerror(v->ret < 0 ? -v->ret : v->ret),
		 v->vm.exit_status, v->vm.reason,
		 nvx_uvm_reason_name(v->vm.reason),
		 (unsigned long long)v->vm.detail,
		 v->where ? v->where : "-", v->vm.fault[0] ? "; " : "",
		 v->vm.fault);
	return buf;
}

/* -------------------------------------------------------- bare VMs --- */

/**
 * bare_free() - detach and free a bare VM
 * @e: the test's environment
 * @b: the bare VM
 */
void bare_free(struct env *e, struct bare *b)
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

/**
 * bare_new() - A KVM VM and a VM_MEM grant, mapped; not attached. 0 or -errno
 * @e: the test's environment
 * @out: where the new bare VM goes
 */
int bare_new(struct env *e, struct bare **out)
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

/**
 * bare_args() - A valid ATTACH of @b to @ep, as the library's layout has it
 * @b: the bare VM
 * @ep: the endpoint fd
 * @flags: NVX_UVM_ATTACH_* flags
 * @a: the arguments to fill in
 */
void bare_args(const struct bare *b, int ep, uint32_t flags,
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

/**
 * bare_attach() - attach a bare VM to an endpoint
 * @e: the test's environment
 * @b: the bare VM
 * @ep: the endpoint fd
 * @flags: NVX_UVM_ATTACH_* flags
 */
int bare_attach(struct env *e, struct bare *b, int ep, uint32_t flags)
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

/**
 * bare_kick() - NVX_UVM_CHAN_IOC_KICK: ring a bare VM's doorbell
 * @b: the bare VM
 * @port: the port the guest writes
 */
int bare_kick(struct bare *b, uint32_t port)
{
	struct nvx_uvm_kick k = { .port = port };

	return nvx_ioctl(b->chan_fd, NVX_UVM_CHAN_IOC_KICK, &k);
}

/**
 * bare_post() - Publish @m in the SQ and ring: the KICK's result
 * @b: the bare VM
 * @m: the message to submit
 */
int bare_post(struct bare *b, const struct nvx_uvm_msg *m)
{
	b->sq[b->sq_prod & (b->sq_n - 1)] = *m;
	b->sq_prod++;
	__atomic_store_n(&b->ctrl->sq_prod, b->sq_prod, __ATOMIC_RELEASE);
	return bare_kick(b, NVX_UVM_PORT_DOORBELL);
}

/**
 * bare_complete() - Consume the next completion
 * @b: the bare VM
 * @m: where the completion goes
 *
 * Return: 0, or -EAGAIN when none is written.
 */
int bare_complete(struct bare *b, struct nvx_uvm_msg *m)
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

/**
 * chan_status() - NVX_UVM_CHAN_IOC_STATUS on a channel
 * @chan_fd: a channel fd
 * @st: where the status goes
 */
int chan_status(int chan_fd, struct nvx_uvm_status *st)
{
	memset(st, 0, sizeof(*st));
	return nvx_ioctl(chan_fd, NVX_UVM_CHAN_IOC_STATUS, st);
}

/**
 * recv_nb() - RECV without blocking and without a data buffer
 * @ep: an endpoint fd
 * @r: the message taken by RECV
 */
int recv_nb(int ep, struct nvx_uvm_recv *r)
{
	memset(r, 0, sizeof(*r));
	r->flags = NVX_UVM_RECV_NONBLOCK;
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_RECV, r);
}

/**
 * kvm_vms() - the VMs KVM has
 *
 * Counts KVM's debugfs directories ("PID-FD").
 *
 * Return: the count, or -1 when KVM's debugfs cannot be read.
 */
int kvm_vms(void)
{
	DIR *d = opendir("/sys/kernel/debug/kvm");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] >= '0' && de->d_name[0] <= '9' &&
		     strchr(de->d_name, '-');
	closedir(d);
	return n;
}

/**
 * kvm_vms_are() - a wait_until() condition: KVM has *@arg VMs
 * @fd: unused
 * @arg: an int, the count
 */
int kvm_vms_are(int fd, const void *arg)
{
	(void)fd;
	return kvm_vms() == *(const int *)arg;
}

/**
 * serve_recv_by() - the next message of an endpoint, before a deadline
 * @ep: the endpoint
 * @sv: the serving state nvx_uvm_recv() fills (PUSH data, fds)
 * @r: the message
 * @deadline: now_ms() time
 *
 * Return: nvx_uvm_recv()'s result, or -ETIMEDOUT.
 */
int serve_recv_by(int ep, struct nvx_uvm_serve *sv, struct nvx_uvm_recv *r,
		  uint64_t deadline)
{
	struct pollfd p = { .fd = ep, .events = POLLIN };
	uint64_t now;
	int ret;

	for (;;) {
		ret = nvx_uvm_recv(ep, sv, r, NVX_UVM_RECV_NONBLOCK);
		if (ret != -EAGAIN && ret != -EINTR)
			return ret;
		now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&p, 1, deadline - now) < 0 && errno != EINTR)
			return -errno;
	}
}

/**
 * recv_gone() - take the VM_GONE notice of a VM
 * @ep: an endpoint fd
 * @vm_id: the VM
 * @reason: the NVX_UVM_* reason it must say
 * @r: the message taken by RECV
 *
 * The next message of @ep must be the VM_GONE notice of @vm_id, saying @reason:
 * 0, or -EPROTO (or RECV's error) with *r showing what came.
 */
int recv_gone(int ep, uint32_t vm_id, uint32_t reason,
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

/**
 * sv_fail() - record a server's first failure
 * @sv: the server
 * @err: the -errno
 * @fmt: a printf() format, then its arguments
 */
void __attribute__((format(printf, 3, 4)))
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

/**
 * server_init() - @capture
 * @sv: the server to set up
 * @ep: the endpoint fd to serve
 * @wake: an eventfd that wakes the server
 * @capture: keep the guests' output instead of printing it
 *
 * Stdout into a memfd (else /dev/null); stderr always is.
 */
int server_init(struct server *sv, int ep, int wake, bool capture)
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

/**
 * server_fini() - free what a server holds
 * @sv: the server
 */
void server_fini(struct server *sv)
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

/**
 * server_stdout() - What the guests wrote to fd 1 (malloc'd, NUL-terminated)
 * @sv: the server
 * @len: where its length goes
 */
char *server_stdout(struct server *sv, size_t *len)
{
	return slurp(sv->s.out_fd, len);
}

/**
 * server_stderr() - And to fd 2, for the logs (static buffer)
 * @sv: the server
 */
const char *server_stderr(struct server *sv)
{
	static char buf[512];
	ssize_t n = pread(sv->s.err_fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/**
 * serve_default() - the default service of a request
 * @sv: the server
 * @r: the message taken by RECV
 *
 * The library's default service, with VM_GONE and -ESRCH accounted.
 */
int serve_default(struct server *sv, struct nvx_uvm_recv *r)
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

/**
 * serve_done() - Until every VMM of @v finished: 0, or -ETIMEDOUT after @ms
 * @sv: the server
 * @v: the VMM threads
 * @n: how many
 * @ms: the deadline, in milliseconds from now
 */
int serve_done(struct server *sv, struct vmm **v, int n, uint64_t ms)
{
	return serve_core(sv, v, n, now_ms() + ms, true);
}

/**
 * serve_for() - For @ms, or until sv->stop
 * @sv: the server
 * @ms: how long, in milliseconds
 */
int serve_for(struct server *sv, uint64_t ms)
{
	return serve_core(sv, NULL, 0, now_ms() + ms, false);
}

/**
 * serve_until_stop() - Until a handler sets sv->stop
 * @sv: the server
 * @ms: the deadline, in milliseconds from now
 *
 * Return: 0, or -ETIMEDOUT after @ms.
 */
int serve_until_stop(struct server *sv, uint64_t ms)
{
	int ret = serve_for(sv, ms);

	return ret ? ret : sv->stop ? 0 : -ETIMEDOUT;
}

/**
 * hold_handle() - a service that holds requests unanswered
 * @sv: the server
 * @r: the message taken
 */
int hold_handle(struct server *sv, struct nvx_uvm_recv *r)
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

/**
 * probe_get() - the probe's verdict for this program
 */
int probe_get(void)
{
	return __atomic_load_n(probe_state, __ATOMIC_SEQ_CST);
}

/**
 * probe_set() - record the probe's verdict
 * @v: PROBE_OK or PROBE_STUCK
 */
void probe_set(int v)
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

/**
 * find_images() - The images next to this program, else in $NVX_GUEST_DIR
 * @dir: where the directory goes
 * @n: the room at @dir
 */
int find_images(char *dir, size_t n)
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

/**
 * env_stop_all() - Stop everything a test left running; close the endpoint
 * @e: the test's environment
 */
void env_stop_all(struct env *e)
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

/**
 * env_release() - give everything of an environment back
 * @e: the test's environment
 *
 * Give everything back, the pool's growth included (best effort).
 */
void env_release(struct env *e)
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

/**
 * add_kid() - record a child process to reap
 * @e: the test's environment
 * @pid: the child
 */
int add_kid(struct env *e, pid_t pid)
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

/**
 * reap_kid() - The kid is gone
 * @e: the test's environment
 * @pid: the child
 *
 * SIGKILL it (again) and reap it; its wait status.
 */
int reap_kid(struct env *e, pid_t pid)
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

/**
 * probe() - Boot hello.img
 * @e: the test's environment
 * @why: where to say why it failed
 * @n: the room at @why
 *
 * Return: 0 when it printed its line and exited 0, 1 when it did not finish
 * within PROBE_MS, else -errno with @why set.
 */
int probe(struct env *e, char *why, size_t n)
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

