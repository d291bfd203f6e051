// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uintr": processes.
 *
 * fork(), vector fds passed over a unix socket, and exec().
 */
#include "uintr_fixture.h"

/* In a forked child: none of the parent's registration or senders. */
static int fork_child(int fd, uint32_t parent_index)
{
	struct nvx_uintr_unregister u = { 0 };
	int idx;

	if (nvx_uintr_vector_fd(fd, 0) != -ENOENT)
		return 1;
	if (do_wait(fd, 0) != -ENOENT)
		return 2;
	if (do_timer(fd, 1, MS, 0) != -ENOENT)
		return 3;
	if (do_signal(fd, SIGUSR1, 1) != -ENOENT)
		return 4;
	if (nvx_ioctl(fd, NVX_IOC_UINTR_UNREGISTER, &u) != -ENOENT)
		return 5;
	if (nvx_uintr_send(fd, parent_index) != -ENOENT)
		return 6;
	/* it can have interrupts of its own */
	if (do_register(fd, NULL, 0, 0) < 0)
		return 7;
	idx = do_vector(fd, 6, NULL);
	if (idx < 0)
		return 8;
	if (nvx_uintr_send(fd, idx) || handled_vec(6) != 1 || handled() != 1)
		return 9;
	return 0;
}

TEST_F(uintr, fork_child_starts_clean)
{
	int idx, status;
	pid_t pid;

	idx = register_vector(_metadata, self->fd, 5, NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(fork_child(self->fd, idx));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed",
						 WEXITSTATUS(status));
	EXPECT_EQ(0ULL, handled());
	EXPECT_EQ(0, nvx_uintr_send(self->fd, idx));
	EXPECT_EQ(1ULL, handled_vec(5));
}

/* In a forked child: take a vector fd from @sock and send through it. */
static int scm_child(int sock)
{
	int fd = nvx_open(), vfd, idx;

	if (fd < 0)
		return 1;
	vfd = recv_fd(sock);
	if (vfd < 0)
		return 2;
	idx = nvx_uintr_add_sender(fd, vfd);
	if (idx < 0)
		return 3;
	if (nvx_uintr_send(fd, idx))
		return 4;
	return 0;
}

/*
 * A vector fd passed over SCM_RIGHTS to another process works there.
 * The parent waits in waitpid() (not interruptible by the vector), so
 * the handler has run when waitpid returns.
 */
TEST_F(uintr, vector_fd_over_scm_rights)
{
	int sv[2], vfd, status;
	pid_t pid;

	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		_exit(scm_child(sv[1]));
	}
	close(sv[1]);
	/* made after the fork: the child can only have it from the socket */
	vfd = nvx_uintr_vector_fd(self->fd, 21);
	EXPECT_LE(0, vfd);
	EXPECT_EQ(0, send_fd(sv[0], vfd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed",
						 WEXITSTATUS(status));
	EXPECT_EQ(1ULL, handled_vec(21));
	EXPECT_EQ(1ULL, handled());
	close(sv[0]);
	close(vfd);
}

static const char *self_path;

/*
 * In a forked child: register, check that it works, pass a vector fd to
 * the parent, then exec this program in EXEC_CHILD_ARG mode. Returns
 * only on failure: the number of the failed step.
 */
static int exec_child_prepare(int fd, int sock, int ready_w, int go_r)
{
	char args[5][16], *argv[8];
	int rfd, vfd, idx, i;

	rfd = do_register(fd, NULL, 0, 0);
	if (rfd < 0)
		return 20;
	vfd = nvx_uintr_vector_fd(fd, 3);
	if (vfd < 0)
		return 21;
	idx = nvx_uintr_add_sender(fd, vfd);
	if (idx < 0)
		return 22;
	if (!(fcntl(rfd, F_GETFD) & FD_CLOEXEC) ||
	    !(fcntl(vfd, F_GETFD) & FD_CLOEXEC))
		return 23;
	if (nvx_uintr_send(fd, idx) || handled_vec(3) != 1)
		return 24;
	if (send_fd(sock, vfd))
		return 25;
	snprintf(args[0], sizeof(args[0]), "%d", rfd);
	snprintf(args[1], sizeof(args[1]), "%d", vfd);
	snprintf(args[2], sizeof(args[2]), "%d", idx);
	snprintf(args[3], sizeof(args[3]), "%d", ready_w);
	snprintf(args[4], sizeof(args[4]), "%d", go_r);
	argv[0] = "uintr";
	argv[1] = EXEC_CHILD_ARG;
	for (i = 0; i < 5; i++)
		argv[2 + i] = args[i];
	argv[7] = NULL;
	execv("/proc/self/exe", argv);
	if (self_path)
		execv(self_path, argv);
	return 26;
}

/*
 * This program run by exec_closes_fds_and_unregisters, as
 * "uintr --uintr-exec-child RFD VFD INDEX READY_W GO_R": the receiver
 * fd, vector fd and sender index it had before exec, a pipe to report
 * on and one to wait on. Exit status: 0, or the failed check.
 */
static int exec_child(int argc, char **argv)
{
	int rfd, vfd, idx, ready_w, go_r, fd;
	char c;

	if (argc != 7)
		return 30;
	rfd = atoi(argv[2]);
	vfd = atoi(argv[3]);
	idx = atoi(argv[4]);
	ready_w = atoi(argv[5]);
	go_r = atoi(argv[6]);
	if (fcntl(rfd, F_GETFD) != -1 || errno != EBADF)
		return 31;
	if (fcntl(vfd, F_GETFD) != -1 || errno != EBADF)
		return 32;
	fd = nvx_open();
	if (fd < 0)
		return 33;
	if (nvx_uintr_vector_fd(fd, 0) != -ENOENT)
		return 34;
	if (do_wait(fd, 0) != -ENOENT)
		return 35;
	/* the sender table is empty after exec */
	if (nvx_uintr_send(fd, idx) != -ENOENT)
		return 36;
	if (write(ready_w, "r", 1) != 1)
		return 37;
	if (read(go_r, &c, 1) != 1)
		return 38;
	return 0;
}

/*
 * exec closes the receiver and vector fds, ends the thread's registration
 * (the parent's sends to its old vector get -ESRCH while the exec'd
 * process lives) and empties the sender table.
 */
TEST_F(uintr, exec_closes_fds_and_unregisters)
{
	int sv[2], ready[2], go[2], vfd, idx, status, n;
	pid_t pid;
	char c;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	/* these two stay open across exec */
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		close(ready[0]);
		close(go[1]);
		_exit(exec_child_prepare(self->fd, sv[1], ready[1], go[0]));
	}
	close(sv[1]);
	close(ready[1]);
	close(go[0]);

	vfd = recv_fd(sv[0]);
	idx = vfd < 0 ? vfd : nvx_uintr_add_sender(self->fd, vfd);
	/* end of file: the child failed before it got there */
	n = read(ready[0], &c, 1);
	if (n == 1) {
		if (idx >= 0)
			EXPECT_EQ(-ESRCH, nvx_uintr_send(self->fd, idx));
		EXPECT_EQ(1, write(go[1], "g", 1));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed",
						 WEXITSTATUS(status));
	EXPECT_LE(0, vfd);
	EXPECT_LE(0, idx);
	EXPECT_EQ(1, n);
	EXPECT_EQ(0ULL, handled());
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], EXEC_CHILD_ARG))
		return exec_child(argc, argv);
	self_path = argv[0];
	return test_harness_run(argc, argv);
}
