// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": the sender table.
 *
 * Sender indexes and their errors, a full table, and sends after the
 * vector fd, the receiver or its registration went away.
 */
#include "uintr_fixture.h"

TEST_F(uintr, sender_index_errors)
{
	uint32_t empty;
	int idx;

	idx = register_vector(_metadata, self->fd, 2, NULL);
	ASSERT_GT(NVX_UINTR_SENDERS, idx);
	empty = (idx + 1) % NVX_UINTR_SENDERS;

	EXPECT_EQ(-EINVAL, nvx_uintr_send(self->fd, NVX_UINTR_SENDERS));
	EXPECT_EQ(-EINVAL, nvx_uintr_send(self->fd, UINT32_MAX));
	EXPECT_EQ(-EINVAL, do_del(self->fd, NVX_UINTR_SENDERS));
	EXPECT_EQ(-EINVAL, do_del(self->fd, UINT32_MAX));
	EXPECT_EQ(-ENOENT, nvx_uintr_send(self->fd, empty));
	EXPECT_EQ(-ENOENT, do_del(self->fd, empty));

	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
	EXPECT_EQ(0, do_del(self->fd, idx));
	EXPECT_EQ(-ENOENT, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(-ENOENT, do_del(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
}

/* Only a vector fd can be added: others are -EINVAL, non-fds -EBADF. */
TEST_F(uintr, add_sender_bad_fds)
{
	int rfd, efd, closed;

	rfd = do_register(self->fd, NULL, 0, 0);
	ASSERT_LE(0, rfd);
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	EXPECT_EQ(-EINVAL, nvx_uintr_add_sender(self->fd, efd));
	EXPECT_EQ(-EINVAL, nvx_uintr_add_sender(self->fd, self->fd));
	EXPECT_EQ(-EINVAL, nvx_uintr_add_sender(self->fd, rfd));
	EXPECT_EQ(-EBADF, nvx_uintr_add_sender(self->fd, -1));
	closed = dup(efd);
	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(-EBADF, nvx_uintr_add_sender(self->fd, closed));
	close(efd);
}

/*
 * NVX_UINTR_SENDERS entries, all distinct and in range; one more is
 * -ENOSPC; a deleted entry is the one the next add gets.
 */
TEST_F(uintr, sender_table_full_is_enospc)
{
	bool seen[NVX_UINTR_SENDERS] = { false };
	int vfd, idx, i;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	vfd = nvx_uintr_vector_fd(self->fd, 9);
	ASSERT_LE(0, vfd);
	for (i = 0; i < NVX_UINTR_SENDERS; i++) {
		idx = nvx_uintr_add_sender(self->fd, vfd);
		ASSERT_LE(0, idx) TH_LOG("add %d: %s", i, strerror(-idx));
		ASSERT_GT(NVX_UINTR_SENDERS, idx);
		EXPECT_FALSE(seen[idx]) TH_LOG("index %d twice", idx);
		seen[idx] = true;
	}
	EXPECT_EQ(-ENOSPC, nvx_uintr_add_sender(self->fd, vfd));
	EXPECT_EQ(0, do_del(self->fd, 77));
	EXPECT_EQ(77, nvx_uintr_add_sender(self->fd, vfd));
	EXPECT_EQ(-ENOSPC, nvx_uintr_add_sender(self->fd, vfd));

	EXPECT_EQ(0, nvx_uintr_send(self->fd, 0));
	EXPECT_EQ(0, nvx_uintr_send(self->fd, NVX_UINTR_SENDERS - 1));
	EXPECT_EQ(2ULL, handled_vec(9));
}

TEST_F(uintr, send_after_vector_fd_closed_is_epipe)
{
	int vfd, idx;

	idx = register_vector(_metadata, self->fd, 11, &vfd);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
	close(vfd);
	EXPECT_EQ(-EPIPE, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());

	/* another vector fd for the same vector is unaffected */
	idx = do_vector(self->fd, 11, NULL);
	ASSERT_LE(0, idx);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(2ULL, handled_vec(11));
}

/* The receiving thread exited (and was joined): -ESRCH. */
TEST_F(uintr, send_after_receiver_exit_is_esrch)
{
	struct waiter w = { .fd = self->fd, .cpu = -1, .vector = 8, .want = 1 };
	int idx;

	idx = waiter_send_join(_metadata, self->fd, &w);
	EXPECT_EQ(1ULL, handled_vec(8));
	EXPECT_EQ(w.tid, rec.tid);
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled());
}

/* Unregistering ends delivery: -ESRCH; a new registration works. */
TEST_F(uintr, send_after_unregister_is_esrch)
{
	int idx;

	idx = register_vector(_metadata, self->fd, 12, NULL);
	nvx_uintr_clui();
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	ASSERT_EQ(0, do_unregister(self->fd));
	EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(0ULL, handled());

	idx = register_vector(_metadata, self->fd, 12, NULL);
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(12));
}

TEST_HARNESS_MAIN
