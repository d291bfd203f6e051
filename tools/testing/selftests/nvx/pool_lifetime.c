// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": the lifetime of grants and who may
 * manage the pool.
 *
 * munmap() and close() in either order, a grant fd passed over a unix
 * socket, concurrent grants, and the privileges each ioctl needs.
 */
#include "pool_fixture.h"

/* Every order of munmap and close returns the memory exactly once. */
POOL_TEST(munmap_close_orders)
{
	struct nvx_pool_stats s;
	int order, g, g2;
	char *p, *p2;

	for (order = 0; order < 5; order++) {
		g = grant(self->fd, 2 * CHUNK, 0, NULL);
		ASSERT_LE(0, g);
		p = map_grant(g, 2 * CHUNK);
		ASSERT_NE(MAP_FAILED, p);
		p[0] = 1;
		switch (order) {
		case 0:		/* munmap, then close */
			munmap(p, 2 * CHUNK);
			close(g);
			break;
		case 1:		/* close, then munmap: the mapping holds it */
			close(g);
			ASSERT_EQ(0, pool_stats(self->fd, &s));
			EXPECT_EQ(self->start.grants_live + 1, s.grants_live);
			p[1] = 2;
			munmap(p, 2 * CHUNK);
			break;
		case 2:		/* two mappings, a dup, mixed order */
			g2 = dup(g);
			p2 = map_grant(g2, CHUNK);
			ASSERT_NE(MAP_FAILED, p2);
			close(g);
			munmap(p, 2 * CHUNK);
			close(g2);
			EXPECT_EQ(1, p2[0]);
			munmap(p2, CHUNK);
			break;
		case 3:		/* partial munmaps */
			munmap(p + CHUNK, CHUNK);
			close(g);
			munmap(p, CHUNK);
			break;
		case 4:		/* exit with it mapped (a child does it) */
			if (fork() == 0) {
				p[2] = 3;
				_exit(0);
			}
			wait(NULL);
			munmap(p, 2 * CHUNK);
			close(g);
			break;
		}
		ASSERT_EQ(0, pool_stats(self->fd, &s));
		EXPECT_EQ(self->start.grants_live, s.grants_live)
			TH_LOG("order %d", order);
		EXPECT_EQ(self->start.granted_bytes, s.granted_bytes)
			TH_LOG("order %d", order);
	}
}

/* A grant passed over SCM_RIGHTS is the same memory in the receiver. */
POOL_TEST(fd_passed_over_unix_socket)
{
	int sv[2], g, status;
	char *p;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int rg = recv_fd(sv[1]);
		char *q;

		if (rg < 0)
			_exit(10);
		q = map_grant(rg, CHUNK);
		if (q == MAP_FAILED)
			_exit(11);
		if (q[100] != 42)
			_exit(12);
		q[200] = 43;
		_exit(0);
	}
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	p[100] = 42;
	ASSERT_EQ(0, send_fd(sv[0], g));
	close(g);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(43, p[200]);
	munmap(p, CHUNK);
	close(sv[0]);
	close(sv[1]);
}

POOL_TEST(concurrent_grants_never_shared)
{
	struct racer r[6];
	pthread_t t[6];
	int i, errors = 0, enospc = 0;

	for (i = 0; i < 6; i++) {
		r[i] = (struct racer){ .fd = self->fd, .id = i, .rounds = 40 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, racer_thread, &r[i]));
	}
	for (i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		errors += r[i].errors;
		enospc += r[i].enospc;
	}
	TH_LOG("%d grants refused for want of memory", enospc);
	EXPECT_EQ(0, errors);
}

static int run_as_nobody(int (*fn)(int fd), int fd)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fn(fd));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static int nobody_manages_pool(int fd)
{
	struct nvx_pool_stats s;
	uint64_t done;

	/* the fd was opened by root; management still checks the caller */
	if (pool_resize(fd, NVX_IOC_POOL_GROW, CHUNK, NVX_NODE_ANY, &done) !=
	    -EPERM)
		return 1;
	if (pool_resize(fd, NVX_IOC_POOL_SHRINK, CHUNK, NVX_NODE_ANY,
			&done) != -EPERM)
		return 2;
	if (pool_stats(fd, &s))
		return 3;	/* stats are for anyone with the device */
	return 0;
}

POOL_TEST(management_needs_cap_sys_admin)
{
	EXPECT_EQ(0, run_as_nobody(nobody_manages_pool, self->fd));
}

static int nobody_ranges_and_memlock(int fd)
{
	struct nvx_grant_range rg[4];
	struct nvx_grant_ranges r = { .count = 4 };
	struct rlimit rl = { 4 * CHUNK, 4 * CHUNK };
	int g, g2;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	g = grant(fd, 4 * CHUNK, 0, NULL);
	if (g < 0)
		return 2;
	r.ranges = (uintptr_t)rg;
	if (nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r) != -EPERM)
		return 3;
	/* RLIMIT_MEMLOCK is used up: the next grant is over quota */
	g2 = grant(fd, CHUNK, 0, NULL);
	if (g2 != -EDQUOT)
		return 4;
	close(g);
	/* and the charge went away with the grant */
	g2 = grant(fd, 4 * CHUNK, 0, NULL);
	if (g2 < 0)
		return 5;
	close(g2);
	return 0;
}

POOL_TEST(unprivileged_ranges_and_memlock)
{
	EXPECT_EQ(0, run_as_nobody(nobody_ranges_and_memlock, self->fd));
}

TEST_HARNESS_MAIN
