// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": an endpoint posts a user interrupt when
 * something arrives (NVX_UVM_EP_IOC_NOTIFY).
 *
 * The test thread is the receiver: it registers for user interrupts and
 * gives the endpoint one of its vectors. Its bare VM rings by KICK from
 * this thread, so the arrival, the post and the delivery (on the way
 * back from the KICK) happen in this thread, in order.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "uvm_fixture.h"
#include "uintr_util.h"

#define VEC	4

static int set_notify(int ep, int vfd)
{
	struct nvx_uvm_notify n = { .vector_fd = vfd };

	return nvx_ioctl(ep, NVX_UVM_EP_IOC_NOTIFY, &n);
}

/* @n IPC requests in the SQ, then one doorbell. */
static int post_batch(struct bare *b, unsigned int n, uint32_t tag)
{
	struct nvx_uvm_msg m;
	unsigned int i;

	for (i = 0; i < n; i++) {
		msg_init(&m, NVX_UVM_MSG_IPC, tag + i);
		b->sq[b->sq_prod & (b->sq_n - 1)] = m;
		b->sq_prod++;
	}
	__atomic_store_n(&b->ctrl->sq_prod, b->sq_prod, __ATOMIC_RELEASE);
	return bare_kick(b, NVX_UVM_PORT_DOORBELL);
}

/* Take and answer @n requests; the VM takes the completions. */
static int answer_all(int ep, struct bare *b, unsigned int n)
{
	struct nvx_uvm_recv r;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_msg m;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = recv_nb(ep, &r);
		if (ret)
			return ret;
		rep = (struct nvx_uvm_reply){
			.cookie = r.cookie, .msg.type = r.msg.type,
		};
		ret = nvx_ioctl(ep, NVX_UVM_EP_IOC_REPLY, &rep);
		if (ret)
			return ret;
	}
	while (!bare_complete(b, &m))
		;
	return recv_nb(ep, &r) == -EAGAIN ? 0 : -EPROTO;
}

/* The receiver: this thread, a vector fd for VEC. */
static void receiver(struct __test_metadata *_metadata, int fd, int *rfd,
		     int *vfd)
{
	*rfd = do_register(fd, NULL, 0, 0);
	ASSERT_LE(0, *rfd);
	ASSERT_LE(0, do_vector(fd, VEC, vfd));
}

/*
 * One vector per arrival batch: 3 requests in one doorbell, then 2 in
 * another, each batch answered before the next: two deliveries, and the
 * endpoint counts two posts. A VM_GONE notice posts one too.
 */
ABI_TEST(notify_per_batch)
{
	int rfd, vfd, ep = self->e.ep;
	struct nvx_uvm_recv r;
	struct bare *b;

	receiver(_metadata, self->e.fd, &rfd, &vfd);
	ASSERT_EQ(0, set_notify(ep, vfd));
	EXPECT_EQ(1, fdinfo_num(ep, "notify"));
	EXPECT_EQ(1, fdinfo_num(vfd, "kernel_senders"));
	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, ep, NVX_UVM_ATTACH_SLOW));
	EXPECT_EQ(0ULL, handled_vec(VEC));

	ASSERT_EQ(0, post_batch(b, 3, 100));
	EXPECT_EQ(1ULL, handled_vec(VEC));
	EXPECT_EQ(0, answer_all(ep, b, 3));
	ASSERT_EQ(0, post_batch(b, 2, 200));
	EXPECT_EQ(2ULL, handled_vec(VEC));
	EXPECT_EQ(0, answer_all(ep, b, 2));
	EXPECT_EQ(2, fdinfo_num(ep, "notified"));

	/* the VM goes: its notice is an arrival */
	close(b->chan_fd);
	b->chan_fd = -1;
	EXPECT_EQ(0, wait_vec(VEC, 3, WAIT_LONG, true));
	EXPECT_EQ(0, recv_gone(ep, b->vm_id, NVX_UVM_DETACHED, &r));
	EXPECT_EQ(3, fdinfo_num(ep, "notified"));

	EXPECT_EQ(0, set_notify(ep, -1));
	EXPECT_EQ(0, fdinfo_num(ep, "notify"));
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	EXPECT_EQ(0, do_unregister(self->e.fd));
	close(vfd);
}

/*
 * With delivery off, two batches post twice and the vector is pending
 * once; turned on, it is delivered once. Requests that arrived before
 * the vector was set are posted for when it is set.
 */
ABI_TEST(notify_masked_and_late)
{
	int rfd, vfd, ep = self->e.ep;
	struct bare *b;

	receiver(_metadata, self->e.fd, &rfd, &vfd);
	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, ep, NVX_UVM_ATTACH_SLOW));

	/* queued before: the vector is posted when it is set */
	ASSERT_EQ(0, post_batch(b, 1, 1));
	EXPECT_EQ(0ULL, handled_vec(VEC));
	ASSERT_EQ(0, set_notify(ep, vfd));
	EXPECT_EQ(1ULL, handled_vec(VEC));
	EXPECT_EQ(0, answer_all(ep, b, 1));

	__atomic_store_n(&my_page->enabled, 0, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, post_batch(b, 1, 10));
	ASSERT_EQ(0, post_batch(b, 2, 20));
	EXPECT_EQ(1ULL, handled_vec(VEC));
	EXPECT_EQ(1ULL << VEC, my_page->pending);
	EXPECT_EQ(3, fdinfo_num(ep, "notified"));
	__atomic_store_n(&my_page->enabled, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, do_wait(self->e.fd, 0));
	EXPECT_EQ(2ULL, handled_vec(VEC));
	EXPECT_EQ(0, answer_all(ep, b, 3));
	EXPECT_EQ(0, do_unregister(self->e.fd));
	close(vfd);
}

/*
 * The endpoint's posts are traced as such: two batches give two
 * nvx_uintr_post lines with this thread's tid, the vector and
 * src=endpoint, and two deliveries of the vector.
 */
ABI_TEST(notify_traced)
{
	static const char *const events[] = {
		"nvx_uintr_post", "nvx_uintr_deliver",
	};
	const char *dir = tracefs_with("nvx_uintr_post");
	int rfd, vfd, ep = self->e.ep;
	char path[160], want[96], *text;
	struct bare *b;

	if (!dir)
		SKIP(return, "no tracefs with events/nvx/nvx_uintr_post");
	snprintf(path, sizeof(path), "%strace", dir);
	ASSERT_EQ(0, write_str(path, ""));
	receiver(_metadata, self->e.fd, &rfd, &vfd);
	ASSERT_EQ(0, set_notify(ep, vfd));
	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, ep, NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, trace_events_enable(dir, events, ARRAY_SIZE(events),
					 "1"));

	ASSERT_EQ(0, post_batch(b, 2, 300));
	EXPECT_EQ(1ULL, handled_vec(VEC));
	EXPECT_EQ(0, answer_all(ep, b, 2));
	ASSERT_EQ(0, post_batch(b, 1, 400));
	EXPECT_EQ(2ULL, handled_vec(VEC));
	EXPECT_EQ(0, answer_all(ep, b, 1));

	trace_events_enable(dir, events, ARRAY_SIZE(events), "0");
	text = read_file(path, 8 << 20);
	ASSERT_NE(NULL, text);
	snprintf(want, sizeof(want),
		 "nvx_uintr_post: tid=%d vector=%d pending=0 src=endpoint",
		 sys_gettid(), VEC);
	EXPECT_EQ(2U, count_str(text, want)) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "nvx_uintr_deliver: vector=%d ", VEC);
	EXPECT_EQ(2U, count_str(text, want)) TH_LOG("%s", text);
	EXPECT_EQ(0U, count_str(text, "src=srq"));
	free(text);
	EXPECT_EQ(2, fdinfo_num(ep, "notified"));
	EXPECT_EQ(0, do_unregister(self->e.fd));
	close(vfd);
}

/*
 * The receiver's registration ends, or its vector fd is closed: the next
 * arrival's post fails, the endpoint drops the vector and goes on with
 * RECV alone (the request is there), and the vector fd counts no holder.
 */
ABI_TEST(notify_receiver_gone)
{
	int rfd, vfd, ep = self->e.ep;
	struct bare *b;

	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, ep, NVX_UVM_ATTACH_SLOW));

	/* unregistered: -ESRCH */
	receiver(_metadata, self->e.fd, &rfd, &vfd);
	ASSERT_EQ(0, set_notify(ep, vfd));
	EXPECT_EQ(0, do_unregister(self->e.fd));
	ASSERT_EQ(0, post_batch(b, 2, 1));
	EXPECT_EQ(0, fdinfo_num(ep, "notify"));
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	EXPECT_EQ(0, fdinfo_num(ep, "notified"));
	EXPECT_EQ(0, answer_all(ep, b, 2));
	close(vfd);

	/* the vector fd closed: -EPIPE */
	receiver(_metadata, self->e.fd, &rfd, &vfd);
	ASSERT_EQ(0, set_notify(ep, vfd));
	close(vfd);
	ASSERT_EQ(0, post_batch(b, 1, 10));
	EXPECT_EQ(0ULL, handled_vec(VEC));
	EXPECT_EQ(0, fdinfo_num(ep, "notify"));
	EXPECT_EQ(0, answer_all(ep, b, 1));
	EXPECT_EQ(0, do_unregister(self->e.fd));
}

/* An endpoint that goes drops its vector: the vector fd says so. */
ABI_TEST(notify_endpoint_closed)
{
	struct nvx_uvm_endpoint e = { .flags = NVX_UVM_EP_CLOEXEC };
	int rfd, vfd;

	receiver(_metadata, self->e.fd, &rfd, &vfd);
	ASSERT_EQ(0, nvx_ioctl(self->e.fd, NVX_IOC_UVM_ENDPOINT, &e));
	ASSERT_EQ(0, set_notify(e.fd, vfd));
	ASSERT_EQ(0, set_notify(self->e.ep, vfd));
	EXPECT_EQ(2, fdinfo_num(vfd, "kernel_senders"));
	close(e.fd);
	EXPECT_EQ(1, fdinfo_num(vfd, "kernel_senders"));
	/* replaced by itself: still one */
	ASSERT_EQ(0, set_notify(self->e.ep, vfd));
	EXPECT_EQ(1, fdinfo_num(vfd, "kernel_senders"));
	EXPECT_EQ(0, do_unregister(self->e.fd));
	EXPECT_EQ(0, set_notify(self->e.ep, -1));
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	close(vfd);
}

/* notify_races: the other thread's side. */
struct notify_race {
	struct bare *b;
	int ep;
	int stop;		/* atomic */
	unsigned int answered;
	int err;
};

/* Batches of 2 requests, each answered, until told to stop. */
static void *notify_race_arrivals(void *arg)
{
	struct notify_race *r = arg;
	uint32_t tag = 1000;
	int ret = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		ret = post_batch(r->b, 2, tag);
		if (!ret)
			ret = answer_all(r->ep, r->b, 2);
		if (ret)
			break;
		r->answered += 2;
		tag += 2;
	}
	r->err = ret;
	return NULL;
}

/*
 * Arrivals from another thread race this thread setting, clearing and
 * replacing the endpoint's vector and closing the vector fds it held:
 * every request is still taken and answered, the vectors that were
 * delivered are at most the posts made, and a vector held after its fd
 * is closed is dropped by the next arrival (notify 0). The kernel
 * reports nothing (the harness checks).
 */
ABI_TEST(notify_races)
{
	struct notify_race r = { .ep = self->e.ep };
	int rfd, vfd, i, ep = self->e.ep;
	uint64_t t_end;
	pthread_t th;

	rfd = do_register(self->e.fd, NULL, 0, 0);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(0, bare_new(&self->e, &r.b));
	ASSERT_EQ(0, bare_attach(&self->e, r.b, ep, NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, pthread_create(&th, NULL, notify_race_arrivals, &r));

	t_end = now_ns() + 2000000000ULL;
	for (i = 0; now_ns() < t_end; i++) {
		vfd = nvx_uintr_vector_fd(self->e.fd, VEC);
		ASSERT_LE(0, vfd);
		ASSERT_EQ(0, set_notify(ep, vfd));
		if (i % 3 == 1)
			ASSERT_EQ(0, set_notify(ep, -1));
		if (i % 3 == 2) {
			/* replaced by itself, then closed while held */
			ASSERT_EQ(0, set_notify(ep, vfd));
		}
		close(vfd);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, r.err) TH_LOG("arrivals: %s", strerror(-r.err));
	EXPECT_LT(0U, r.answered);
	/* a vector held after its fd closed: the next arrival drops it */
	vfd = nvx_uintr_vector_fd(self->e.fd, VEC);
	ASSERT_LE(0, vfd);
	ASSERT_EQ(0, set_notify(ep, vfd));
	EXPECT_EQ(1, fdinfo_num(ep, "notify"));
	close(vfd);
	ASSERT_EQ(0, post_batch(r.b, 2, 1));
	EXPECT_EQ(0, answer_all(ep, r.b, 2));
	EXPECT_EQ(0, fdinfo_num(ep, "notify"));
	EXPECT_GE((long long)fdinfo_num(ep, "notified"),
		  (long long)handled_vec(VEC));
	TH_LOG("%d vector fds, %u requests, %llu delivered", i, r.answered,
	       (unsigned long long)handled_vec(VEC));
	EXPECT_EQ(0, do_unregister(self->e.fd));
}

ABI_TEST(notify_bad_input)
{
	struct nvx_uvm_notify n = { .vector_fd = -1 };
	int rfd, vfd, ep = self->e.ep, closed;

	receiver(_metadata, self->e.fd, &rfd, &vfd);
	n.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, NVX_UVM_EP_IOC_NOTIFY, &n));
	n.flags = 0;
	n.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, NVX_UVM_EP_IOC_NOTIFY, &n));
	n.reserved = 0;
	n.vector_fd = -2;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, NVX_UVM_EP_IOC_NOTIFY, &n));
	/* not a vector fd: the endpoint, the receiver fd, /dev/nvx */
	EXPECT_EQ(-EINVAL, set_notify(ep, ep));
	EXPECT_EQ(-EINVAL, set_notify(ep, rfd));
	EXPECT_EQ(-EINVAL, set_notify(ep, self->e.fd));
	closed = dup(vfd);
	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(-EBADF, set_notify(ep, closed));
	EXPECT_EQ(0, fdinfo_num(ep, "notify"));
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	/* a short struct */
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, nvx_ioc_resize(NVX_UVM_EP_IOC_NOTIFY,
							4), &n));
	/* clearing what is not set is fine */
	EXPECT_EQ(0, set_notify(ep, -1));
	EXPECT_EQ(0, do_unregister(self->e.fd));
	close(vfd);
}

TEST_HARNESS_MAIN
