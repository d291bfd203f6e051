// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": small grants (NVX_GRANT_BLOCKS), made of
 * whole 2 MiB pieces and 64 KiB blocks of pieces the pool splits.
 */
#include "pool_fixture.h"

/* struct nvx_grant_info before block_bytes and nr_blocks were added */
struct nvx_grant_info_v0 {
	uint32_t flags;
	uint32_t node;
	uint64_t bytes;
	uint64_t piece_bytes;
	uint64_t nr_pieces;
};

static int block_grant(int fd, uint64_t bytes, uint32_t flags)
{
	return grant(fd, bytes, flags | NVX_GRANT_BLOCKS, NULL);
}

static int grant_ranges(int g, struct nvx_grant_range *rg, uint32_t room)
{
	struct nvx_grant_ranges r = { .count = room, .ranges = (uintptr_t)rg };
	int ret = nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r);

	return ret ? ret : (int)r.count;
}

/* The physical address of a one-block grant. */
static uint64_t block_phys(int g)
{
	struct nvx_grant_range rg;

	return grant_ranges(g, &rg, 1) == 1 ? rg.phys : 0;
}

/*
 * Every size class, from one block to pieces plus 31 blocks: a grant
 * reads zero although the previous owner of the same memory wrote all of
 * it, whether its blocks were zeroed on the grant's path (default), by
 * the scrubber while it waited (NVX_GRANT_WAIT) or before it came
 * (CLEAN_ONLY after the scrubber finished), with non-temporal stores and
 * with clear_page.
 */
POOL_TEST(zeroed_across_owners_every_class)
{
	static const uint64_t sizes[] = {
		BLOCK, 2 * BLOCK, 7 * BLOCK, 31 * BLOCK, CHUNK + BLOCK,
		2 * CHUNK + 31 * BLOCK,
	};
	static const uint32_t modes[] = { 0, NVX_GRANT_WAIT,
					  NVX_GRANT_CLEAN_ONLY };
	struct nvx_grant_info info = {};
	unsigned int i, m, nt;
	unsigned char *p;
	int g;

	for (nt = 0; nt < 2; nt++) {
		ASSERT_EQ(0, write_param("zero_nontemporal", nt ? "N" : "Y"));
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			for (m = 0; m < ARRAY_SIZE(modes); m++) {
				if (modes[m] == NVX_GRANT_CLEAN_ONLY)
					ASSERT_EQ(0, wait_scrubbed(self->fd));
				g = block_grant(self->fd, sizes[i], modes[m]);
				ASSERT_LE(0, g) TH_LOG("size %llu mode %u: %s",
						       (unsigned long long)sizes[i],
						       modes[m], strerror(-g));
				ASSERT_EQ(0, nvx_ioctl(g, NVX_GRANT_IOC_INFO, &info));
				EXPECT_EQ(sizes[i], info.bytes);
				EXPECT_EQ(sizes[i] / CHUNK, info.nr_pieces);
				EXPECT_EQ((sizes[i] % CHUNK) / BLOCK, info.nr_blocks);
				EXPECT_EQ(BLOCK, info.block_bytes);
				EXPECT_EQ((long long)info.nr_blocks,
					  fdinfo_num(g, "blocks"));
				p = map_grant(g, sizes[i]);
				ASSERT_NE(MAP_FAILED, p);
				EXPECT_TRUE(all_bytes(p, sizes[i], 0))
					TH_LOG("size %llu mode %u nt %u: not zero",
					       (unsigned long long)sizes[i],
					       modes[m], nt);
				memset(p, 0xa5, sizes[i]);
				ASSERT_EQ(0, munmap(p, sizes[i]));
				close(g);
			}
		}
	}
}

/*
 * 32 one-block grants share one split piece, each its own memory: what
 * one writes the others do not see, and none maps past its end.
 */
POOL_TEST(blocks_share_a_piece_isolated)
{
	const unsigned int n = CHUNK / BLOCK;
	struct nvx_grant_info_v0 v0 = {};
	struct nvx_pool_stats s0, s;
	uint64_t phys[CHUNK / BLOCK], lo = UINT64_MAX, hi = 0;
	unsigned char *p[CHUNK / BLOCK];
	int g[CHUNK / BLOCK];
	unsigned int i, j;

	ASSERT_EQ(0, pool_stats(self->fd, &s0));
	ASSERT_EQ(0, s0.small_bytes) TH_LOG("split pieces left by an earlier test");
	for (i = 0; i < n; i++) {
		g[i] = block_grant(self->fd, BLOCK, 0);
		ASSERT_LE(0, g[i]);
		phys[i] = block_phys(g[i]);
		ASSERT_NE(0, phys[i]);
		lo = phys[i] < lo ? phys[i] : lo;
		hi = phys[i] > hi ? phys[i] : hi;
		for (j = 0; j < i; j++)
			EXPECT_NE(phys[j], phys[i]);
		p[i] = map_grant(g[i], BLOCK);
		ASSERT_NE(MAP_FAILED, p[i]);
		memset(p[i], i + 1, BLOCK);
	}
	/* one piece split, all 32 blocks in it */
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s0.small_splits + 1, s.small_splits);
	EXPECT_EQ(CHUNK, s.small_bytes);
	EXPECT_EQ(s0.granted_bytes + CHUNK, s.granted_bytes);
	EXPECT_EQ(s0.total_bytes, s.total_bytes);
	EXPECT_EQ(s.total_bytes, s.clean_bytes + s.dirty_bytes + s.granted_bytes);
	EXPECT_EQ(CHUNK - BLOCK, hi - lo);
	EXPECT_EQ(0, lo % CHUNK);
	for (i = 0; i < n; i++)
		EXPECT_TRUE(all_bytes(p[i], BLOCK, i + 1)) TH_LOG("grant %u", i);

	/* no mapping past the end of a grant, or from beyond it */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * BLOCK, PROT_READ | PROT_WRITE,
				   MAP_SHARED, g[0], 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, g[0], BLOCK));
	EXPECT_EQ(EINVAL, errno);
	/* the older, shorter NVX_GRANT_IOC_INFO still works */
	ASSERT_EQ(0, nvx_ioctl(g[0], _IOWR(NVX_IOC_MAGIC, 0x18,
					   struct nvx_grant_info_v0), &v0));
	EXPECT_EQ(BLOCK, v0.bytes);
	EXPECT_EQ(0, v0.nr_pieces);

	for (i = 0; i < n; i++) {
		munmap(p[i], BLOCK);
		close(g[i]);
	}
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(CHUNK, s.small_bytes);
	EXPECT_EQ(s0.granted_bytes, s.granted_bytes);
	/* the blocks are reused before another piece is split */
	g[0] = block_grant(self->fd, 31 * BLOCK, NVX_GRANT_CLEAN_ONLY);
	ASSERT_LE(0, g[0]);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s0.small_splits + 1, s.small_splits);
	close(g[0]);

	/* a shrink releases the split piece first */
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, CHUNK,
				 NVX_NODE_ANY, &self->refill));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(0, s.small_bytes);
	EXPECT_EQ(s0.total_bytes - CHUNK, s.total_bytes);
	self->refill = s0.total_bytes;
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK,
				 NVX_NODE_ANY, &self->refill));
	self->refill = 0;
}

/* Sizes and flags a block grant refuses, and what it is without them. */
POOL_TEST(bad_block_grants)
{
	uint64_t granted = 0;
	int g;

	EXPECT_EQ(-EINVAL, block_grant(self->fd, PAGE, 0));
	EXPECT_EQ(-EINVAL, block_grant(self->fd, BLOCK + PAGE, 0));
	EXPECT_EQ(-EINVAL, block_grant(self->fd, CHUNK + BLOCK / 2, 0));
	EXPECT_EQ(-EINVAL, block_grant(self->fd, 0, 0));
	EXPECT_EQ(-EINVAL, block_grant(self->fd, BLOCK, 0x10));
	EXPECT_EQ(-EINVAL, block_grant(self->fd, BLOCK,
				       NVX_GRANT_WAIT | NVX_GRANT_CLEAN_ONLY));
	EXPECT_EQ(-ENOSPC, block_grant(self->fd, POOL_CHUNKS * CHUNK + BLOCK
				       + self->start.total_bytes, 0));
	/* without NVX_GRANT_BLOCKS a size still rounds up to pieces */
	g = grant(self->fd, BLOCK, 0, &granted);
	ASSERT_LE(0, g);
	EXPECT_EQ(CHUNK, granted);
	EXPECT_EQ(0, fdinfo_num(g, "blocks"));
	close(g);
}

/*
 * A grant of pieces and blocks: the piece is mapped with one PMD, the
 * blocks page by page, and both hold what was written through another
 * mapping of the same grant.
 */
POOL_TEST(pieces_pmd_blocks_pte)
{
	const size_t len = CHUNK + 3 * BLOCK;
	unsigned char *p, *q;
	int g;

	g = block_grant(self->fd, len, 0);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, (uintptr_t)p % CHUNK);
	tag_pages(p, len, 0);
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));
	EXPECT_EQ((long)(len >> 10), smaps_kb(p, "Rss:"));
	q = mmap(NULL, 3 * BLOCK, PROT_READ, MAP_SHARED, g, CHUNK);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_TRUE(pages_tagged(q, 3 * BLOCK, CHUNK / PAGE));
	munmap(q, 3 * BLOCK);
	munmap(p, len);
	close(g);
}

/*
 * Block grants work under a long-term pin, across fork() and over
 * SCM_RIGHTS, like piece grants.
 */
POOL_TEST(blocks_pin_fork_scm_rights)
{
	const size_t len = 3 * BLOCK;
	struct gup_test gt = { 0 };
	int g, sv[2], status, gfd;
	unsigned char *p;
	pid_t pid;

	g = block_grant(self->fd, len, 0);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	tag_pages(p, len, 7);

	gfd = open(GUP_TEST, O_RDWR);
	if (gfd >= 0) {
		gt.addr = (uintptr_t)p;
		gt.size = len;
		gt.nr_pages_per_call = 16;
		gt.gup_flags = 1;	/* FOLL_WRITE */
		EXPECT_EQ(0, ioctl(gfd, PIN_LONGTERM_BENCHMARK, &gt))
			TH_LOG("PIN_LONGTERM_BENCHMARK: %s", strerror(errno));
		close(gfd);
	} else {
		TH_LOG(GUP_TEST " missing (CONFIG_GUP_TEST): no pin");
	}

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (!pages_tagged(p, len, 7))
			_exit(1);
		p[len - 1] = 0x5a;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0x5a, p[len - 1]);

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int rg = recv_fd(sv[1]);
		unsigned char *q;

		if (rg < 0)
			_exit(10);
		q = map_grant(rg, len);
		if (q == MAP_FAILED)
			_exit(11);
		if (!pages_tagged(q, BLOCK, 7))
			_exit(12);
		q[BLOCK + 100] = 43;
		_exit(0);
	}
	ASSERT_EQ(0, send_fd(sv[0], g));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child exit %d", WEXITSTATUS(status));
	EXPECT_EQ(43, p[BLOCK + 100]);
	close(sv[0]);
	close(sv[1]);
	munmap(p, len);
	close(g);
}

/*
 * A block still pinned when its grant goes is neither zeroed nor handed
 * out again while the pin lasts; its neighbours are.
 */
POOL_TEST(pinned_block_is_not_reused)
{
	struct pin_longterm_test pt = { 0 };
	struct nvx_pool_stats s0, s;
	uint64_t pinned;
	int gfd, g, more[CHUNK / BLOCK], n = 0, i;
	unsigned char *p;

	gfd = open(GUP_TEST, O_RDWR);
	if (gfd < 0)
		SKIP(return, GUP_TEST " missing (CONFIG_GUP_TEST)");
	ASSERT_EQ(0, pool_stats(self->fd, &s0));
	g = block_grant(self->fd, BLOCK, 0);
	ASSERT_LE(0, g);
	pinned = block_phys(g);
	p = map_grant(g, BLOCK);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	pt.addr = (uintptr_t)p;
	pt.size = PAGE;
	pt.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
	ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_START, &pt))
		TH_LOG("PIN_LONGTERM_TEST_START: %s", strerror(errno));
	munmap(p, BLOCK);
	close(g);

	/* give the scrubber time: the pinned block must stay dirty */
	sleep(2);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(BLOCK, s.dirty_bytes);
	/* take blocks until a second piece is split: never the pinned one */
	while (n < (int)(CHUNK / BLOCK)) {
		more[n] = block_grant(self->fd, BLOCK, 0);
		ASSERT_LE(0, more[n]);
		EXPECT_NE(pinned, block_phys(more[n]));
		n++;
		ASSERT_EQ(0, pool_stats(self->fd, &s));
		if (s.small_splits > s0.small_splits + 1)
			break;
	}
	EXPECT_EQ(s0.small_splits + 2, s.small_splits);
	EXPECT_EQ((int)(CHUNK / BLOCK), n);
	for (i = 0; i < n; i++)
		close(more[i]);

	ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_STOP));
	close(gfd);
	EXPECT_EQ(0, wait_scrubbed(self->fd));
}

static uint64_t small_bytes(int fd)
{
	struct nvx_pool_stats s;

	return pool_stats(fd, &s) ? UINT64_MAX : s.small_bytes;
}

/*
 * Small grants that came and went leave one split piece per node, not
 * all they needed: the scrubber turns the others back into whole pieces,
 * which whole-piece grants can take again.
 */
POOL_TEST(unused_split_pieces_rejoin)
{
	struct nvx_pool_stats s0, s;
	int g[3], i, t;

	ASSERT_EQ(0, pool_stats(self->fd, &s0));
	ASSERT_EQ(0, s0.small_bytes);
	for (i = 0; i < 3; i++) {
		g[i] = block_grant(self->fd, 31 * BLOCK, 0);
		ASSERT_LE(0, g[i]);
	}
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(3 * CHUNK, s.small_bytes);
	for (i = 0; i < 3; i++)
		close(g[i]);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	for (t = 0; t < 100 && small_bytes(self->fd) != CHUNK; t++)
		usleep(100 * 1000);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(CHUNK, s.small_bytes);
	EXPECT_EQ(s0.total_bytes, s.total_bytes);
	EXPECT_EQ(s0.small_splits + 3, s.small_splits);
	/* all but the split piece serves whole pieces again */
	g[0] = grant(self->fd, s.clean_bytes - CHUNK, NVX_GRANT_CLEAN_ONLY,
		     NULL);
	EXPECT_LE(0, g[0]) TH_LOG("%s", strerror(-g[0]));
	if (g[0] >= 0)
		close(g[0]);
}

TEST_HARNESS_MAIN
