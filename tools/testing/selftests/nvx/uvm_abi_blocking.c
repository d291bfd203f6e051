// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": blocking, interrupted and polled RECV.
 */
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>

#include "uvm_fixture.h"

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

/* A REPLY in a thread of its own, and what it returned. */
struct replier {
	int ep;
	struct nvx_uvm_reply rep;
	int ret;
	int done;
};

static void *replier_main(void *arg)
{
	struct replier *rp = arg;

	rp->ret = nvx_ioctl(rp->ep, NVX_UVM_EP_IOC_REPLY, &rp->rep);
	__atomic_store_n(&rp->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A VMM's calls on its channel: a doorbell, STATUS, then close. */
struct prober {
	struct bare *b;
	int kick_ret, status_ret, close_ret;
	uint64_t msgs_in;
	int done;
};

static void *prober_main(void *arg)
{
	struct prober *p = arg;
	struct nvx_uvm_status cs;
	struct nvx_uvm_msg m;

	msg_init(&m, NVX_UVM_MSG_IPC, 2);
	p->kick_ret = bare_post(p->b, &m);
	p->status_ret = chan_status(p->b->chan_fd, &cs);
	p->msgs_in = cs.msgs_in;
	p->close_ret = close(p->b->chan_fd);
	__atomic_store_n(&p->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Wait up to @ms for *@flag: true when it was set. */
static bool flag_within(const int *flag, int ms)
{
	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST) && ms-- > 0)
		usleep(1000);
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST);
}

/*
 * A REPLY whose PULL data is in a userfaultfd page nobody serves: the
 * REPLY waits for the fault, but the VM's next doorbell, STATUS and the
 * VMM's close of the channel do not wait for it. Once the page comes the
 * REPLY finds its request gone. Before REPLY copied with page faults
 * disabled, it held the channel's mutex across the fault: the doorbell
 * (a vCPU thread) and close() stayed blocked until the page came.
 */
ABI_TEST(reply_fault_blocks_only_the_replier)
{
	const uint64_t sg_gpa = 0x100000, g1 = 0x200000;
	long pg = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zp = { };
	struct env *e = &self->e;
	struct replier rp = { .ep = e->ep };
	struct prober pb = { };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg fault;
	pthread_t rt, pt;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	bool probed = false, faulted, started = false;
	struct nvx_uvm_sg *sg;
	struct bare *b;
	char *area;
	uint32_t id;
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "userfaultfd: %s (CONFIG_USERFAULTFD)",
		     strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	area = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	reg.range.start = (uintptr_t)area;
	reg.range.len = pg;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	id = b->vm_id;
	sg = (struct nvx_uvm_sg *)(b->mem + sg_gpa);
	sg[0] = (struct nvx_uvm_sg){ .gpa = g1, .len = 100 };
	msg_init(&m, NVX_UVM_MSG_READ, 1);
	m.flags = NVX_UVM_MSGF_PULL;
	m.sg_gpa = sg_gpa;
	m.sg_nr = 1;
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r));

	rp.rep.cookie = r.cookie;
	rp.rep.msg.type = NVX_UVM_MSG_READ;
	rp.rep.buf = (uintptr_t)area;
	rp.rep.buf_len = 100;
	ASSERT_EQ(0, pthread_create(&rt, NULL, replier_main, &rp));
	/*
	 * The REPLY reached the page: its fault is there to read. From
	 * here on no ASSERT: the threads must be let go first.
	 */
	pfd.fd = uffd;
	faulted = poll(&pfd, 1, 60000) == 1 &&
		  read(uffd, &fault, sizeof(fault)) == (ssize_t)sizeof(fault);
	EXPECT_TRUE(faulted) TH_LOG("REPLY did not reach its page");
	if (faulted) {
		EXPECT_EQ(UFFD_EVENT_PAGEFAULT, fault.event);
		EXPECT_FALSE(__atomic_load_n(&rp.done, __ATOMIC_SEQ_CST));
		pb.b = b;
		started = !pthread_create(&pt, NULL, prober_main, &pb);
		EXPECT_TRUE(started);
		probed = started && flag_within(&pb.done, 30000);
	}
	/* the page comes: everything blocked goes on */
	zp.range.start = (uintptr_t)area;
	zp.range.len = pg;
	EXPECT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zp));
	if (started)
		pthread_join(pt, NULL);
	pthread_join(rt, NULL);
	if (!started)
		close(b->chan_fd);
	b->chan_fd = -1;

	EXPECT_TRUE(probed)
		TH_LOG("a doorbell, STATUS or close waited for REPLY's fault");
	EXPECT_EQ(0, pb.kick_ret);
	EXPECT_EQ(0, pb.status_ret);
	EXPECT_EQ(2U, pb.msgs_in);
	EXPECT_EQ(0, pb.close_ret);
	/* the channel was closed first: the request is no more */
	EXPECT_TRUE(rp.ret == -ESRCH || rp.ret == -ENOENT)
		TH_LOG("REPLY after the close: %d", rp.ret);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));
	check_ep_idle(_metadata, e->ep);
	close(uffd);
	munmap(area, pg);
}

TEST_HARNESS_MAIN
