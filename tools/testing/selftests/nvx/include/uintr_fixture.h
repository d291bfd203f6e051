/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the nvx selftest group "uintr" (every uintr_* program):
 * user-interrupt delivery.
 *
 * The whole group skips when /dev/nvx does not offer NVX_FEAT_UINTR.
 * Tests about delivery to a thread running on another CPU skip on a
 * machine with one CPU.
 */
#ifndef NVX_UINTR_FIXTURE_H
#define NVX_UINTR_FIXTURE_H

/*
 * For -Wextra: the harness's SIGALRM handler has an unused parameter,
 * and its TEST_F() wrapper keeps a pid across setjmp() (which GCC flags
 * where it inlines a test into the wrapper).
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "nvx_fixture.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"
#include "uintr_util.h"

/*
 * Start a waiter_thread() on @w, add the vector fd it made to the sender
 * table, send it once and join the thread. Returns the sender index.
 */
static inline int waiter_send_join(struct __test_metadata *_metadata, int fd,
				   struct waiter *w)
{
	pthread_t t;
	int idx;

	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, w));
	ASSERT_EQ(1, wait_flag(&w->ready))
		TH_LOG("thread: vector fd %d, register %d", w->vfd, w->rfd);
	idx = nvx_uintr_add_sender(fd, w->vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(fd, idx));
	pthread_join(t, NULL);
	return idx;
}

FIXTURE(uintr) {
	int fd;
};

FIXTURE_SETUP(uintr)
{
	if (!nvx_require_feature(_metadata, &self->fd, NVX_FEAT_UINTR))
		SKIP(return, "no NVX_FEAT_UINTR: user interrupts not built");
}

FIXTURE_TEARDOWN(uintr)
{
	if (self->fd >= 0)
		close(self->fd);
}

#endif /* NVX_UINTR_FIXTURE_H */
