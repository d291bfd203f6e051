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

/*
 * Register this thread (on its own stack, no flags) and add a vector fd
 * for @vector, into *@vfd (closed when @vfd is NULL), to the sender
 * table. Returns the sender index.
 */
static inline int register_vector(struct __test_metadata *_metadata, int fd,
				  uint32_t vector, int *vfd)
{
	int idx;

	ASSERT_LE(0, do_register(fd, NULL, 0, 0));
	idx = do_vector(fd, vector, vfd);
	ASSERT_LE(0, idx);
	return idx;
}

/*
 * Register this thread as register_vector() does, and add the @n vectors
 * @vec to the sender table in that order: their sender indices into @idx.
 */
static inline void register_vectors(struct __test_metadata *_metadata,
				    int fd, const uint32_t *vec, int *idx,
				    unsigned int n)
{
	unsigned int i;

	ASSERT_LE(0, do_register(fd, NULL, 0, 0));
	for (i = 0; i < n; i++) {
		idx[i] = do_vector(fd, vec[i], NULL);
		ASSERT_LE(0, idx[i]) TH_LOG("vector %u: %s", vec[i],
					    strerror(-idx[i]));
	}
}

/*
 * Start a blocker thread on @b, on another CPU than this thread where
 * there are two, add the vector fd it made to the sender table and send
 * it once.
 */
static inline void blocker_start_send(struct __test_metadata *_metadata,
				      int fd, pthread_t *t, struct blocker *b)
{
	int cpu, idx;

	two_cpus(&b->cpu, &cpu);
	ASSERT_EQ(0, pin_cpu(cpu));
	ASSERT_EQ(0, start_blocker(t, b));
	idx = nvx_uintr_add_sender(fd, b->vfd);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(fd, idx));
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
