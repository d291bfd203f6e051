// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": grants.
 *
 * Granting, bad grants and mappings, memory reused only zeroed,
 * exhaustion and recovery, shrinking while granted.
 */
#include "pool_fixture.h"

POOL_TEST(grant_one_and_many_chunks)
{
	struct nvx_grant_info info = { 0 };
	struct nvx_pool_stats s;
	uint64_t got;
	unsigned char *p;
	int g1, g2;

	g1 = grant(self->fd, CHUNK, 0, &got);
	ASSERT_LE(0, g1);
	EXPECT_EQ(CHUNK, got);
	ASSERT_EQ(0, nvx_ioctl(g1, NVX_GRANT_IOC_INFO, &info));
	EXPECT_EQ(CHUNK, info.bytes);
	EXPECT_EQ(1, info.nr_pieces);
	EXPECT_EQ(CHUNK, info.piece_bytes);

	g2 = grant(self->fd, 8 * CHUNK, 0, &got);
	ASSERT_LE(0, g2);
	EXPECT_EQ(8 * CHUNK, got);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(self->start.granted_bytes + 9 * CHUNK, s.granted_bytes);
	EXPECT_EQ(self->start.grants_live + 2, s.grants_live);

	p = map_grant(g2, 8 * CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, 8 * CHUNK, 0));
	memset(p, 0x5a, 8 * CHUNK);
	EXPECT_EQ(0, munmap(p, 8 * CHUNK));
	close(g1);
	close(g2);
}

POOL_TEST(unaligned_sizes_round_up)
{
	uint64_t got;
	unsigned char *p;
	int g;

	g = grant(self->fd, 1, 0, &got);
	ASSERT_LE(0, g);
	EXPECT_EQ(CHUNK, got);
	close(g);
	g = grant(self->fd, CHUNK + 1, 0, &got);
	ASSERT_LE(0, g);
	EXPECT_EQ(2 * CHUNK, got);
	/* the whole rounded size is there */
	p = map_grant(g, 2 * CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	p[2 * CHUNK - 1] = 1;
	munmap(p, 2 * CHUNK);
	close(g);
}

POOL_TEST(bad_grants)
{
	struct nvx_grant_create g = { .node = NVX_NODE_ANY, .bytes = CHUNK };
	const struct nvx_grant_create bad[] = {
		{ .flags = NVX_GRANT_WAIT | NVX_GRANT_CLEAN_ONLY,
		  .node = NVX_NODE_ANY, .bytes = CHUNK },
		{ .reserved = 1, .node = NVX_NODE_ANY, .bytes = CHUNK },
		{ .node = 4096, .bytes = CHUNK },
	};
	struct nvx_pool_stats s;
	unsigned int i;
	int bit;

	EXPECT_EQ(-EINVAL, grant(self->fd, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, grant(self->fd, ~0ULL, 0, NULL));
	for (bit = 4; bit < 32; bit++) {
		g.flags = 1U << bit;
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_GRANT, &g));
	}
	/* flags that conflict, a reserved field, a node that is not */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		g = bad[i];
		EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_GRANT, &g))
			TH_LOG("bad[%u]", i);
	}

	/* more than the pool holds */
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(-ENOSPC, grant(self->fd, s.total_bytes + CHUNK, 0, NULL));
}

POOL_TEST(bad_mmap)
{
	void *p;
	int g = grant(self->fd, 2 * CHUNK, 0, NULL);

	ASSERT_LE(0, g);
	/* private mappings would write elsewhere */
	p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE, g, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* beyond the end, or crossing it */
	p = mmap(NULL, CHUNK, PROT_READ, MAP_SHARED, g, 2 * CHUNK);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, 2 * CHUNK, PROT_READ, MAP_SHARED, g, CHUNK);
	EXPECT_EQ(MAP_FAILED, p);
	/* a window in the middle is fine, and sees the same memory */
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	((char *)p)[0] = 7;
	{
		char *all = map_grant(g, 2 * CHUNK);

		ASSERT_NE(MAP_FAILED, all);
		EXPECT_EQ(7, all[CHUNK]);
		munmap(all, 2 * CHUNK);
	}
	/* mremap cannot grow it */
	EXPECT_EQ(MAP_FAILED, mremap(p, PAGE, 2 * PAGE, MREMAP_MAYMOVE));
	munmap(p, PAGE);
	close(g);
}

/*
 * The security property: the previous owner's data is never seen by the
 * next one, whether the memory was zeroed by the scrubber or on the
 * grant's own path.
 */
static void reuse_reads_zero(struct __test_metadata *_metadata, int fd,
			     uint32_t flags, bool let_scrubber_finish)
{
	struct nvx_pool_stats s;
	unsigned char *p;
	uint64_t len;
	int g;

	/* all the free memory: the scrubber may still be at work on some */
	ASSERT_EQ(0, pool_stats(fd, &s));
	len = s.clean_bytes + s.dirty_bytes;
	g = grant(fd, len, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xa5, len);
	munmap(p, len);
	close(g);
	if (let_scrubber_finish)
		ASSERT_EQ(0, wait_scrubbed(fd));

	g = grant(fd, len, flags, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, len, 0));
	munmap(p, len);
	close(g);
}

POOL_TEST(reuse_reads_zero_sync)
{
	struct nvx_pool_stats a, b;

	/* a slow scrubber leaves the zeroing to the grant */
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "1"));
	ASSERT_EQ(0, pool_stats(self->fd, &a));
	reuse_reads_zero(_metadata, self->fd, 0, false);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	ASSERT_EQ(0, pool_stats(self->fd, &b));
	EXPECT_LT(a.sync_zeroed_bytes, b.sync_zeroed_bytes);
}

POOL_TEST(reuse_reads_zero_wait)
{
	reuse_reads_zero(_metadata, self->fd, NVX_GRANT_WAIT, false);
}

POOL_TEST(reuse_reads_zero_scrubbed)
{
	struct nvx_pool_stats a, b;

	/* after the scrubber ran, everything is clean again */
	ASSERT_EQ(0, pool_stats(self->fd, &a));
	reuse_reads_zero(_metadata, self->fd, NVX_GRANT_CLEAN_ONLY, true);
	ASSERT_EQ(0, pool_stats(self->fd, &b));
	EXPECT_LE(a.scrubbed_bytes + a.clean_bytes, b.scrubbed_bytes);
	EXPECT_EQ(a.sync_zeroed_bytes, b.sync_zeroed_bytes);
}

/*
 * Both ways of zeroing leave zeroes, on the scrubber's path and on the
 * grant's: non-temporal stores (zero_nontemporal, the x86-64 default,
 * the other tests) and clear_page().
 */
POOL_TEST(reuse_reads_zero_clear_page)
{
	ASSERT_EQ(0, write_param("zero_nontemporal", "N"));
	reuse_reads_zero(_metadata, self->fd, NVX_GRANT_CLEAN_ONLY, true);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "1"));
	reuse_reads_zero(_metadata, self->fd, 0, false);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	EXPECT_EQ(-EINVAL, write_param("zero_nontemporal", "maybe"));
	/* the fixture's teardown restores zero_nontemporal */
}

/*
 * scrub_rate_mbps is a ceiling: at 32 MiB/s the scrubber takes at least
 * (nearly) size / rate to make a released grant clean again, however the
 * pieces' time rounds to jiffies. Only the lower bound is asserted: under
 * TCG any upper one would be a timing test.
 */
POOL_TEST(scrub_rate_is_a_ceiling)
{
	struct nvx_pool_stats s;
	uint64_t t0, ms, want;
	unsigned char *p;
	int g;

	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, s.clean_bytes);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x3c, s.clean_bytes);
	munmap(p, s.clean_bytes);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "32"));
	t0 = now_ms();
	close(g);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ms = now_ms() - t0;
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	want = (s.clean_bytes >> 20) * 1000 / 32;
	TH_LOG("%llu MiB clean again in %llu ms at 32 MiB/s (%llu ms at the rate)",
	       (unsigned long long)(s.clean_bytes >> 20),
	       (unsigned long long)ms, (unsigned long long)want);
	/* the last nap may be cut short: the first piece is free */
	EXPECT_LE(want - want / 10 - 1000 * (CHUNK >> 20) / 32, ms);
}

POOL_TEST(clean_only_fails_while_dirty)
{
	struct nvx_pool_stats s;
	int g;

	ASSERT_EQ(0, write_param("scrub_rate_mbps", "1"));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes, 0, NULL);
	ASSERT_LE(0, g);
	close(g);
	/* at 1 MiB/s the scrubber needs seconds per chunk */
	EXPECT_EQ(-EAGAIN, grant(self->fd, s.clean_bytes,
				 NVX_GRANT_CLEAN_ONLY, NULL));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_LT(0, s.grant_failures);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	g = grant(self->fd, s.total_bytes - s.granted_bytes, NVX_GRANT_WAIT,
		  NULL);
	EXPECT_LE(0, g);
	close(g);
}

POOL_TEST(exhaustion_and_recovery)
{
	struct nvx_pool_stats s;
	int g[POOL_CHUNKS * 2], n = 0, i;

	/* take chunks one by one until the pool is empty */
	while (n < (int)ARRAY_SIZE(g)) {
		int r = grant(self->fd, CHUNK, 0, NULL);

		if (r < 0) {
			EXPECT_EQ(-ENOSPC, r);
			break;
		}
		g[n++] = r;
	}
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s.total_bytes, s.granted_bytes);
	EXPECT_LE(POOL_CHUNKS, n);
	EXPECT_EQ(-ENOSPC, grant(self->fd, CHUNK, 0, NULL));
	for (i = 0; i < n; i++)
		close(g[i]);
	/* recovery: all of it can be granted again at once */
	i = grant(self->fd, (uint64_t)n * CHUNK, 0, NULL);
	EXPECT_LE(0, i);
	close(i);
}

POOL_TEST(shrink_while_granted)
{
	struct nvx_pool_stats s;
	uint64_t done;
	int g;

	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes - 2 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	/* only the two free chunks can go; the call does not wait */
	EXPECT_EQ(-EBUSY, pool_resize(self->fd, NVX_IOC_POOL_SHRINK,
				      4 * CHUNK, NVX_NODE_ANY, &done));
	EXPECT_EQ(2 * CHUNK, done);
	close(g);
	/* give back what the fixture will shrink */
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, 2 * CHUNK,
				 NVX_NODE_ANY, NULL));
}

TEST_HARNESS_MAIN
