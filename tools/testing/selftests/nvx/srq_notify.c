// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": a queue posts a user interrupt when a
 * completion lands in a ring its instance had emptied
 * (NVX_SRQ_IOC_NOTIFY).
 *
 * The test thread is the receiver: it registers for user interrupts and
 * gives a queue one of its vectors. Its frames go through the software
 * NIC inside its own sendto(), so the completion, the post and the
 * delivery (on the way back from sendto()) happen in this thread.
 * The posts are traced with src=srq.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "srq_fixture.h"
#include "uintr_util.h"

#define VEC	6

static int set_notify(struct srq *s, uint32_t queue, int vfd)
{
	struct nvx_srq_notify n = { .queue = queue, .vector_fd = vfd };

	return nvx_ioctl(s->fd, NVX_SRQ_IOC_NOTIFY, &n);
}

/* Queue @q's ring emptied by the instance: cons = prod. */
static void drain(struct srq *s, uint32_t q)
{
	cq_set_cons(s, q, cq_prod(s, q));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void receiver(struct __test_metadata *_metadata, int fd, int *rfd,
		     int *vfd)
{
	*rfd = do_register(fd, NULL, 0, 0);
	ASSERT_LE(0, *rfd);
	ASSERT_LE(0, do_vector(fd, VEC, vfd));
}

/*
 * The first frame into an empty ring posts; the frames after it, while
 * the ring holds it, do not; emptied, the next frame posts again, and a
 * burst of eight posts once. Frames on another queue (without a vector)
 * post nothing.
 */
SRQ_TEST(notify_after_empty)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct srq *s = &self->s;
	int rfd, vfd;

	receiver(_metadata, self->fd, &rfd, &vfd);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, set_notify(s, 0, vfd));
	EXPECT_EQ(1, fdinfo_num(s->fd, "queue0_notify"));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue1_notify"));
	EXPECT_EQ(1, fdinfo_num(vfd, "kernel_senders"));

	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	EXPECT_EQ(0, wait_vec(VEC, 1, WAIT_LONG, true));
	ASSERT_EQ(0, send_frames(&self->nic, 3, 100, SPORT));
	EXPECT_EQ(4U, cq_wait(s, 0, 4));
	EXPECT_EQ(1ULL, handled_vec(VEC));

	drain(s, 0);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 4));
	EXPECT_EQ(0, wait_vec(VEC, 2, WAIT_LONG, true));
	drain(s, 0);
	ASSERT_EQ(0, send_frames(&self->nic, 8, 100, SPORT));
	EXPECT_EQ(8U, cq_wait(s, 0, 8));
	EXPECT_EQ(0, wait_vec(VEC, 3, WAIT_LONG, true));
	EXPECT_EQ(3ULL, handled_vec(VEC));
	EXPECT_EQ(3, fdinfo_num(s->fd, "queue0_notified"));

	/* queue 1 has no vector */
	drain(s, 0);
	ASSERT_EQ(0, srq_steer_all(s, 1));
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 20));
	EXPECT_EQ(1U, cq_wait(s, 1, 1));
	EXPECT_EQ(3ULL, handled_vec(VEC));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue1_notified"));

	srq_close(s);
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	EXPECT_EQ(0, do_unregister(self->fd));
	close(vfd);
}

/*
 * Completions already in the ring when the vector is set: posted then.
 * With delivery off, posts merge: delivered once when it is back on.
 */
SRQ_TEST(notify_late_and_masked)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct srq *s = &self->s;
	int rfd, vfd;

	receiver(_metadata, self->fd, &rfd, &vfd);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	EXPECT_EQ(1U, cq_wait(s, 0, 1));
	ASSERT_EQ(0, set_notify(s, 0, vfd));
	EXPECT_EQ(0, wait_vec(VEC, 1, WAIT_LONG, true));

	__atomic_store_n(&my_page->enabled, 0, __ATOMIC_SEQ_CST);
	drain(s, 0);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 1));
	EXPECT_EQ(1U, cq_wait(s, 0, 1));
	drain(s, 0);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 2));
	EXPECT_EQ(1U, cq_wait(s, 0, 1));
	EXPECT_EQ(3, fdinfo_num(s->fd, "queue0_notified"));
	EXPECT_EQ(1ULL, handled_vec(VEC));
	EXPECT_EQ(1ULL << VEC, my_page->pending);
	__atomic_store_n(&my_page->enabled, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(0, do_wait(self->fd, 0));
	EXPECT_EQ(0, wait_vec(VEC, 2, WAIT_LONG, true));
	EXPECT_EQ(2ULL, handled_vec(VEC));
	EXPECT_EQ(0, do_unregister(self->fd));
	close(vfd);
}

/*
 * The receiver's registration ends with the vector pending, or its
 * vector fd closes: the next post fails, the queue drops the vector and
 * the frames still arrive; a set closed with a vector set leaks nothing
 * (kmemleak, and the vector fd counts no holder).
 */
SRQ_TEST(notify_receiver_gone)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct srq *s = &self->s;
	int rfd, vfd;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	receiver(_metadata, self->fd, &rfd, &vfd);
	ASSERT_EQ(0, set_notify(s, 0, vfd));
	__atomic_store_n(&my_page->enabled, 0, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	EXPECT_EQ(1U, cq_wait(s, 0, 1));
	EXPECT_EQ(1, fdinfo_num(s->fd, "queue0_notified"));
	EXPECT_EQ(0, do_unregister(self->fd));
	drain(s, 0);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 1));
	EXPECT_EQ(1U, cq_wait(s, 0, 1));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue0_notify"));
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	close(vfd);

	/* emptied first: a vector set on a ring with entries posts at once */
	drain(s, 0);
	receiver(_metadata, self->fd, &rfd, &vfd);
	ASSERT_EQ(0, set_notify(s, 0, vfd));
	EXPECT_EQ(0ULL, handled_vec(VEC));
	close(vfd);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 2));
	EXPECT_EQ(1U, cq_wait(s, 0, 1));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue0_notify"));
	EXPECT_EQ(0ULL, handled_vec(VEC));

	/* set closed while it holds a vector */
	ASSERT_LE(0, do_vector(self->fd, VEC, &vfd));
	ASSERT_EQ(0, set_notify(s, 0, vfd));
	EXPECT_EQ(1, fdinfo_num(vfd, "kernel_senders"));
	srq_close(s);
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	EXPECT_EQ(0, do_unregister(self->fd));
	close(vfd);
}

/*
 * A queue's posts are traced as such: two posts (first frame into an
 * empty ring, twice) give two nvx_uintr_post lines with this thread's
 * tid, the vector and src=srq, and two deliveries of the vector.
 */
SRQ_TEST(notify_traced)
{
	static const char *const events[] = {
		"nvx_uintr_post", "nvx_uintr_deliver",
	};
	const char *dir = tracefs_with("nvx_uintr_post");
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct srq *s = &self->s;
	char path[160], want[96], *text;
	int rfd, vfd;

	if (!dir)
		SKIP(return, "no tracefs with events/nvx/nvx_uintr_post");
	snprintf(path, sizeof(path), "%strace", dir);
	ASSERT_EQ(0, write_str(path, ""));
	receiver(_metadata, self->fd, &rfd, &vfd);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, set_notify(s, 0, vfd));
	ASSERT_EQ(0, trace_events_enable(dir, events, ARRAY_SIZE(events),
					 "1"));

	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	EXPECT_EQ(0, wait_vec(VEC, 1, WAIT_LONG, true));
	drain(s, 0);
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 1));
	EXPECT_EQ(0, wait_vec(VEC, 2, WAIT_LONG, true));

	trace_events_enable(dir, events, ARRAY_SIZE(events), "0");
	text = read_file(path, 8 << 20);
	ASSERT_NE(NULL, text);
	snprintf(want, sizeof(want),
		 "nvx_uintr_post: tid=%d vector=%d pending=0 src=srq",
		 sys_gettid(), VEC);
	EXPECT_EQ(2U, count_str(text, want)) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "nvx_uintr_deliver: vector=%d ", VEC);
	EXPECT_EQ(2U, count_str(text, want)) TH_LOG("%s", text);
	EXPECT_EQ(0U, count_str(text, "src=endpoint"));
	free(text);
	EXPECT_EQ(2, fdinfo_num(s->fd, "queue0_notified"));
	srq_close(s);
	EXPECT_EQ(0, do_unregister(self->fd));
	close(vfd);
}

SRQ_TEST(notify_bad_input)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct nvx_srq_notify n = { .vector_fd = -1 };
	struct srq *s = &self->s;
	int rfd, vfd, closed;

	receiver(_metadata, self->fd, &rfd, &vfd);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	/* a flag nvx does not know (eventfds: srq_ingrant) */
	n.flags = ~NVX_SRQ_NOTIFY_FLAGS;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_NOTIFY, &n));
	n.flags = 0;
	n.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_NOTIFY, &n));
	n.reserved = 0;
	n.vector_fd = -2;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_NOTIFY, &n));
	EXPECT_EQ(-EINVAL, set_notify(s, 2, vfd));
	EXPECT_EQ(-EINVAL, set_notify(s, ~0U, vfd));
	EXPECT_EQ(-EINVAL, set_notify(s, 0, s->fd));
	EXPECT_EQ(-EINVAL, set_notify(s, 0, rfd));
	closed = dup(vfd);
	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(-EBADF, set_notify(s, 0, closed));
	EXPECT_EQ(0, fdinfo_num(vfd, "kernel_senders"));
	EXPECT_EQ(-EINVAL,
		  nvx_ioctl(s->fd, nvx_ioc_resize(NVX_SRQ_IOC_NOTIFY, 8), &n));
	EXPECT_EQ(0, set_notify(s, 1, -1));
	EXPECT_EQ(0, do_unregister(self->fd));
	close(vfd);
}

TEST_HARNESS_MAIN
