// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": blocking, interrupted and polled RECV.
 */
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

TEST_HARNESS_MAIN
