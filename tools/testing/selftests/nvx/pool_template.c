// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": templates (NVX_GRANT_IOC_SEAL) and their
 * copy-on-write clones (NVX_GRANT_IOC_CLONE).
 */
#include "pool_fixture.h"

/* A template: two pieces and two blocks, every page tagged. */
#define TLEN	(2 * CHUNK + 2 * BLOCK)

static int seal(int g)
{
	struct nvx_grant_seal s = {};

	return nvx_ioctl(g, NVX_GRANT_IOC_SEAL, &s);
}

static int clone_of(int t)
{
	struct nvx_grant_clone c = { .flags = NVX_CLONE_CLOEXEC };
	int ret = nvx_ioctl(t, NVX_GRANT_IOC_CLONE, &c);

	return ret ? ret : c.fd;
}

/* A sealed template of TLEN bytes whose pages hold their numbers. */
static int make_template(struct __test_metadata *_metadata, int fd)
{
	unsigned char *p;
	int t;

	t = grant(fd, TLEN, NVX_GRANT_BLOCKS, NULL);
	if (t < 0)
		return t;
	p = map_grant(t, TLEN);
	if (p == MAP_FAILED) {
		close(t);
		return -errno;
	}
	tag_pages(p, TLEN, 0);
	munmap(p, TLEN);
	EXPECT_EQ(0, seal(t));
	return t;
}

static void *map_ro(int g, size_t len)
{
	return mmap(NULL, len, PROT_READ, MAP_SHARED, g, 0);
}

/*
 * A sealed grant is read-only for good: no writable mapping, no way to
 * make a read-only one writable, a write through one is SIGSEGV; sealing
 * again changes nothing.
 */
POOL_TEST(seal_makes_read_only)
{
	unsigned char *p;
	int t, status;
	pid_t pid;

	t = make_template(_metadata, self->fd);
	ASSERT_LE(0, t);
	EXPECT_EQ(0, seal(t));
	EXPECT_EQ(1, fdinfo_num(t, "template"));
	EXPECT_EQ(MAP_FAILED, map_grant(t, TLEN));
	EXPECT_EQ(EPERM, errno);
	p = map_ro(t, TLEN);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(pages_tagged(p, TLEN, 0));
	EXPECT_EQ(-1, mprotect(p, PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		p[0] = 1;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_TRUE(pages_tagged(p, TLEN, 0));
	munmap(p, TLEN);
	close(t);
}

/* What seal and clone refuse, and why. */
POOL_TEST(seal_and_clone_bad_input)
{
	struct nvx_grant_seal bad = { .flags = 1 };
	struct nvx_grant_clone cb = { .flags = 2 };
	struct pin_longterm_test pt = { 0 };
	unsigned char *p;
	int g, c, t, gfd;

	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	EXPECT_EQ(-EINVAL, nvx_ioctl(g, NVX_GRANT_IOC_SEAL, &bad));
	bad.flags = 0;
	bad.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(g, NVX_GRANT_IOC_SEAL, &bad));
	/* not a template: no clone */
	EXPECT_EQ(-EINVAL, clone_of(g));
	/* mapped shared and writable, or read-only (mprotect could add write) */
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-EBUSY, seal(g));
	munmap(p, CHUNK);
	p = map_ro(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-EBUSY, seal(g));
	munmap(p, CHUNK);
	EXPECT_EQ(0, fdinfo_num(g, "template"));

	/* pinned for DMA: the device may write */
	gfd = open(GUP_TEST, O_RDWR);
	if (gfd >= 0) {
		p = map_grant(g, CHUNK);
		ASSERT_NE(MAP_FAILED, p);
		pt.addr = (uintptr_t)p;
		pt.size = PAGE;
		pt.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
		ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_START, &pt));
		munmap(p, CHUNK);
		EXPECT_EQ(-EBUSY, seal(g));
		ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_STOP));
		close(gfd);
	} else {
		TH_LOG(GUP_TEST " missing (CONFIG_GUP_TEST): no pin");
	}
	/* nothing in the way now */
	EXPECT_EQ(0, seal(g));
	t = g;

	EXPECT_EQ(-EINVAL, nvx_ioctl(t, NVX_GRANT_IOC_CLONE, &cb));
	c = clone_of(t);
	ASSERT_LE(0, c);
	EXPECT_EQ(1, fdinfo_num(c, "clone"));
	/* a clone is not a template: no clone of it, no seal */
	EXPECT_EQ(-EINVAL, clone_of(c));
	EXPECT_EQ(-EINVAL, seal(c));
	close(c);
	close(t);
}

/*
 * 100 clones of one template read its data; what a clone writes only it
 * sees (neither the template nor the other clones); clones outlive the
 * template's fd; no clone takes pool memory; everything goes back.
 */
POOL_TEST(hundred_clones_share_and_diverge)
{
	enum { N = 100 };
	/* a page in piece 0, one in piece 1, one in the blocks */
	static const size_t at[] = { 5 * PAGE, CHUNK + 7 * PAGE,
				     2 * CHUNK + BLOCK + PAGE };
	struct nvx_pool_stats s0, s;
	unsigned char *tp, *cp[N];
	int t, c[N], i, j, k;

	ASSERT_EQ(0, pool_stats(self->fd, &s0));
	t = make_template(_metadata, self->fd);
	ASSERT_LE(0, t);
	tp = map_ro(t, TLEN);
	ASSERT_NE(MAP_FAILED, tp);
	for (i = 0; i < N; i++) {
		c[i] = clone_of(t);
		ASSERT_LE(0, c[i]);
	}
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s0.granted_bytes + TLEN, s.granted_bytes);
	EXPECT_EQ(s0.grants_live + 1 + N, s.grants_live);
	/* the clones outlive the template's fd */
	close(t);

	for (i = 0; i < N; i++) {
		cp[i] = map_grant(c[i], TLEN);
		ASSERT_NE(MAP_FAILED, cp[i]);
		ASSERT_TRUE(pages_tagged(cp[i], TLEN, 0)) TH_LOG("clone %d", i);
		for (k = 0; k < (int)ARRAY_SIZE(at); k++)
			*(unsigned long *)(cp[i] + at[k] + 8) = 1000 + i;
		for (j = 0; j < i; j++)
			for (k = 0; k < (int)ARRAY_SIZE(at); k++)
				ASSERT_EQ(1000 + j,
					  *(unsigned long *)(cp[j] + at[k] + 8))
					TH_LOG("clone %d sees clone %d's write", j, i);
		EXPECT_EQ((long long)ARRAY_SIZE(at),
			  fdinfo_num(c[i], "copied_pages"));
	}
	/* the template is unchanged, and every clone still reads it */
	EXPECT_TRUE(pages_tagged(tp, TLEN, 0));
	for (k = 0; k < (int)ARRAY_SIZE(at); k++)
		EXPECT_EQ(0, *(unsigned long *)(tp + at[k] + 8));
	EXPECT_TRUE(pages_tagged(cp[N - 1], TLEN, 0));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s0.granted_bytes + TLEN, s.granted_bytes);

	for (i = 0; i < N; i++) {
		munmap(cp[i], TLEN);
		close(c[i]);
	}
	/* the template went with its last clone and mapping */
	munmap(tp, TLEN);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s0.granted_bytes, s.granted_bytes);
	EXPECT_EQ(s0.grants_live, s.grants_live);
}

/*
 * A clone reads a template piece through one read-only PMD; its first
 * write in the piece gives it its own page there, and a piece it has not
 * written keeps its PMD. A new mapping shows the same: the copy where it
 * wrote, the template elsewhere.
 */
POOL_TEST(clone_pmd_until_written)
{
	unsigned char *p, *q;
	int t, c;

	t = make_template(_metadata, self->fd);
	ASSERT_LE(0, t);
	c = clone_of(t);
	ASSERT_LE(0, c);
	close(t);
	p = map_grant(c, TLEN);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, (uintptr_t)p % CHUNK);
	EXPECT_TRUE(pages_tagged(p, TLEN, 0));
	EXPECT_EQ((long)(2 * CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));
	p[3 * PAGE + 100] = 0x77;
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));
	EXPECT_TRUE(pages_tagged(p, TLEN, 0));
	EXPECT_EQ(0x77, p[3 * PAGE + 100]);
	EXPECT_EQ(1, fdinfo_num(c, "copied_pages"));

	/* a second mapping: the empty slot takes no PMD of piece 0 */
	q = map_ro(c, TLEN);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(0x77, q[3 * PAGE + 100]);
	EXPECT_TRUE(pages_tagged(q, TLEN, 0));
	EXPECT_EQ(0x77, q[3 * PAGE + 100]);
	/* a write through the first shows in the second */
	p[9 * PAGE + 200] = 0x78;
	EXPECT_EQ(0x78, q[9 * PAGE + 200]);
	p[CHUNK + 200] = 0x79;
	EXPECT_EQ(0x79, q[CHUNK + 200]);
	munmap(q, TLEN);
	munmap(p, TLEN);
	close(c);
}

TEST_HARNESS_MAIN
