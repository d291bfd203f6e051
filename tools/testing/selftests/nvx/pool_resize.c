// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": growing and shrinking the pool.
 *
 * GROW, SHRINK and STATS, their bad arguments and old struct sizes;
 * large chunks; growing beyond memory.
 */
#include "pool_fixture.h"

POOL_TEST(grow_shrink_show)
{
	struct nvx_pool_stats s, after;
	uint64_t done;

	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(CHUNK, s.piece_bytes);
	EXPECT_LE(1, s.nr_nodes);
	EXPECT_LE(POOL_CHUNKS * CHUNK, s.clean_bytes);

	/* an unaligned size is rounded up to whole chunks */
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK + 1,
				 NVX_NODE_ANY, &done));
	EXPECT_EQ(2 * CHUNK, done);
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(s.total_bytes + 2 * CHUNK, after.total_bytes);
	EXPECT_EQ(s.clean_bytes + 2 * CHUNK, after.clean_bytes);

	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, 2 * CHUNK, 0,
				 &done));
	EXPECT_EQ(2 * CHUNK, done);
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(s.total_bytes, after.total_bytes);

	/* per node: node 0 holds at least what we grew on "any" node */
	memset(&after, 0, sizeof(after));
	after.node = 0;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_POOL_STATS, &after));
	EXPECT_LE(0, (long long)after.total_bytes);
	after.node = after.nr_nodes;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_STATS, &after));
}

POOL_TEST(bad_resize)
{
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY, .bytes = CHUNK };

	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_GROW, 0,
				       NVX_NODE_ANY, NULL));
	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_GROW, ~0ULL,
				       NVX_NODE_ANY, NULL));
	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, 0,
				       NVX_NODE_ANY, NULL));
	EXPECT_EQ(-EINVAL, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK,
				       4096, NULL));
	r.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r));
	r.flags = 0;
	/* chunk sizes: 2 MiB to 1 GiB on grow, none on shrink */
	r.chunk_shift = NVX_POOL_PIECE_SHIFT - 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	r.chunk_shift = NVX_POOL_CHUNK_SHIFT_MAX + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	r.chunk_shift = NVX_POOL_PIECE_SHIFT;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r));
	r.chunk_shift = 0;
	r.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, &r));
}

/*
 * GROW and SHRINK with their argument struct in a read-only page:
 * -EFAULT and the pool as it was. Before the dispatcher checked that
 * the struct takes the result, GROW grew the pool and then failed.
 */
POOL_TEST(readonly_arg_resizes_nothing)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct nvx_pool_stats s, after;
	struct nvx_pool_resize *ro;

	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	ro->node = NVX_NODE_ANY;
	ro->bytes = CHUNK;
	ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, ro));
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(s.total_bytes, after.total_bytes);
	EXPECT_EQ(-EFAULT, nvx_ioctl(self->fd, NVX_IOC_POOL_SHRINK, ro));
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(s.total_bytes, after.total_bytes);
	munmap(ro, pg);
}

/* The first version of struct nvx_pool_resize, before chunk_shift. */
struct nvx_pool_resize_v0 {
	__u32 flags;
	__u32 node;
	__u64 bytes;
	__u64 done;
};

/* The first version of struct nvx_pool_stats, before chunks. */
struct nvx_pool_stats_v0 {
	__u32 flags, node, nr_nodes, pad;
	__u64 chunk_bytes, total_bytes, clean_bytes, dirty_bytes;
	__u64 granted_bytes, grants, grants_live, grant_failures;
	__u64 scrubbed_bytes, scrub_ns, sync_zeroed_bytes;
};

/* Binaries built against the first versions of the structs still work. */
POOL_TEST(old_struct_sizes)
{
	struct nvx_pool_resize_v0 r = { .node = NVX_NODE_ANY, .bytes = CHUNK };
	struct nvx_pool_stats_v0 s0 = { .node = NVX_NODE_ANY };
	struct nvx_pool_stats s;
	uint8_t small[8] = {};

	ASSERT_EQ(0, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x10,
					       struct nvx_pool_resize_v0), &r));
	EXPECT_EQ(CHUNK, r.done);
	ASSERT_EQ(0, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x12,
					       struct nvx_pool_stats_v0), &s0));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(s.total_bytes, s0.total_bytes);
	r.done = 0;
	ASSERT_EQ(0, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x11,
					       struct nvx_pool_resize_v0), &r));
	EXPECT_EQ(CHUNK, r.done);
	/* smaller than the first version: EINVAL */
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, _IOWR(NVX_IOC_MAGIC, 0x10,
						     uint8_t[8]), small));
}

static int grant_ranges(int g, struct nvx_grant_range *rg, uint32_t room)
{
	struct nvx_grant_ranges r = { .count = room, .ranges = (uintptr_t)rg };
	int ret = nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r);

	return ret ? ret : (int)r.count;
}

#define POOL_DEBUGFS "/sys/kernel/debug/nvx/pool/stats"

/* The merges of every node so far (debugfs), or -1. */
static long long pool_merges(void)
{
	long long sum = -1, v;
	char line[128];
	FILE *f;
	int nid;

	f = fopen(POOL_DEBUGFS, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "merges %d %lld", &nid, &v) == 2)
			sum = (sum < 0 ? 0 : sum) + v;
	fclose(f);
	return sum;
}

/*
 * Empty the pool, so that a test knows which chunks are there, and grow
 * it by @bytes in chunks of up to 1 << @shift. *@s0 gets what it held,
 * and *@refill too (the fixture refills the pool to that if the test
 * does not); *@s the stats after the grow.
 */
static void empty_and_grow(struct __test_metadata *_metadata, int fd,
			   uint64_t *refill, uint64_t bytes,
			   unsigned int shift, struct nvx_pool_stats *s0,
			   struct nvx_pool_stats *s)
{
	struct nvx_pool_resize r = {
		.node = NVX_NODE_ANY, .bytes = bytes, .chunk_shift = shift,
	};
	uint64_t done;

	ASSERT_EQ(0, pool_stats(fd, s0));
	ASSERT_EQ(0, s0->granted_bytes);
	*refill = s0->total_bytes;
	ASSERT_EQ(0, pool_resize(fd, NVX_IOC_POOL_SHRINK,
				 s0->total_bytes, NVX_NODE_ANY, &done));
	ASSERT_EQ(s0->total_bytes, done);
	ASSERT_EQ(0, pool_stats(fd, s));
	ASSERT_EQ(0, s->total_bytes);
	ASSERT_EQ(0, s->chunks);
	ASSERT_EQ(0, nvx_ioctl(fd, NVX_IOC_POOL_GROW, &r));
	ASSERT_EQ(bytes, r.done);
	ASSERT_EQ(0, pool_stats(fd, s));
	ASSERT_EQ(bytes, s->clean_bytes);
}

/* Empty the pool and refill it to what it held at the start (@s0). */
static void empty_and_refill(struct __test_metadata *_metadata, int fd,
			     const struct nvx_pool_stats *s0)
{
	struct nvx_pool_stats s;
	uint64_t done;

	ASSERT_EQ(0, pool_stats(fd, &s));
	ASSERT_EQ(0, pool_resize(fd, NVX_IOC_POOL_SHRINK, s.total_bytes,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(0, pool_resize(fd, NVX_IOC_POOL_GROW, s0->total_bytes,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(s0->total_bytes, done);
}

/*
 * Chunks larger than 2 MiB: a 64 MiB chunk is one physically contiguous,
 * aligned run; a grant of part of it splits it; its pieces are mapped
 * with PMDs, zeroed between owners, and accounted like any others. The
 * test empties the pool first (so that it knows which chunks are there)
 * and refills it to the size it found.
 */
POOL_TEST(large_chunks)
{
	struct nvx_pool_resize r = { .node = NVX_NODE_ANY };
	const uint64_t big = 64ULL << 20;
	struct nvx_grant_range rg[4];
	struct nvx_pool_stats s0, s;
	struct pin_longterm_test pt = { 0 };
	uint64_t done, sum;
	unsigned char *p, *q;
	int g, g2, n, i, gfd;

	/* one chunk of 64 MiB */
	empty_and_grow(_metadata, self->fd, &self->refill, big, 26, &s0, &s);
	r.bytes = big;
	r.chunk_shift = 26;
	EXPECT_EQ(1, s.chunks) TH_LOG("the allocator did not deliver 64 MiB in one piece");

	/* 2 MiB of it: the chunk splits, the front goes to the grant */
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(2, s.chunks);
	ASSERT_EQ(1, grant_ranges(g, rg, 4));
	EXPECT_EQ(0, rg[0].phys % big);
	EXPECT_EQ(CHUNK, rg[0].bytes);
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xa5, CHUNK);
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));

	/* the rest: contiguous with the first part */
	g2 = grant(self->fd, big - CHUNK, 0, NULL);
	ASSERT_LE(0, g2);
	ASSERT_EQ(1, grant_ranges(g2, &rg[1], 3));
	EXPECT_EQ(rg[0].phys + CHUNK, rg[1].phys);
	EXPECT_EQ(big - CHUNK, rg[1].bytes);
	q = map_grant(g2, big - CHUNK);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_TRUE(all_bytes(q, big - CHUNK, 0));
	EXPECT_EQ((long)((big - CHUNK) >> 10), smaps_kb(q, "FilePmdMapped:"));
	EXPECT_EQ(-ENOSPC, grant(self->fd, CHUNK, 0, NULL));
	munmap(q, big - CHUNK);
	close(g2);
	munmap(p, CHUNK);
	close(g);

	/*
	 * Back and scrubbed (a piece at a time): the pieces merged back
	 * into the one chunk grow made, so one range, the first chunk's
	 * 64 MiB; and it reads zero.
	 */
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big, s.clean_bytes);
	EXPECT_EQ(1, s.chunks);
	g = grant(self->fd, big, 0, NULL);
	ASSERT_LE(0, g);
	n = grant_ranges(g, &rg[2], 2);
	EXPECT_EQ(1, n);
	for (i = 0, sum = 0; i < n && i < 2; i++) {
		EXPECT_EQ(rg[0].phys, rg[2 + i].phys);
		sum += rg[2 + i].bytes;
	}
	EXPECT_EQ(big, sum);
	p = map_grant(g, big);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, big, 0));

	/*
	 * A page pinned in the middle of the chunk when the grant goes: the
	 * scrubber splits that chunk into pieces and holds back only the
	 * pinned piece; the others merge into the two chunks around it.
	 */
	gfd = open(GUP_TEST, O_RDWR);
	if (gfd >= 0) {
		pt.addr = (uintptr_t)p + big / 2;
		pt.size = PAGE;
		pt.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
		ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_START, &pt));
	} else {
		TH_LOG(GUP_TEST " missing (CONFIG_GUP_TEST): no pinned chunk");
	}
	munmap(p, big);
	close(g);
	if (gfd >= 0) {
		uint64_t end = now_ms() + 60000;

		do {
			usleep(100000);
			ASSERT_EQ(0, pool_stats(self->fd, &s));
		} while (s.clean_bytes < big - CHUNK && now_ms() < end);
		EXPECT_EQ(big - CHUNK, s.clean_bytes);
		EXPECT_EQ(CHUNK, s.dirty_bytes);
		EXPECT_EQ(3, s.chunks);
		ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_STOP));
		close(gfd);
	}

	/*
	 * The pin gone, its piece is scrubbed and joins both neighbours:
	 * one chunk again, and a shrink releases it whole.
	 */
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big, s.clean_bytes);
	EXPECT_EQ(1, s.chunks);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, big,
				 NVX_NODE_ANY, &done));
	EXPECT_EQ(big, done);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(0, s.chunks);

	/* shrinking part of a chunk leaves the rest of it (trimmed in place) */
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_POOL_GROW, &r));
	EXPECT_EQ(big, r.done);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, big / 2,
				 NVX_NODE_ANY, &done));
	EXPECT_EQ(big / 2, done);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big / 2, s.total_bytes);
	EXPECT_EQ(1, s.chunks);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, big / 2,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(0, s.total_bytes);
	EXPECT_EQ(0, s.chunks);

	/* refill to where the test started */
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, s0.total_bytes,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(s0.total_bytes, done);
}

/*
 * A large chunk returned dirty is clean piece by piece as the scrubber
 * zeroes it: slowed to 4 MiB/s (a piece every half second), part of it
 * can be granted CLEAN_ONLY, reading zero, while the rest is still dirty;
 * at full speed it ends as the one chunk grow made.
 */
POOL_TEST(large_chunk_clean_piece_by_piece)
{
	const uint64_t big = 64ULL << 20;
	struct nvx_pool_stats s0, s;
	uint64_t end;
	unsigned char *p;
	int g;

	empty_and_grow(_metadata, self->fd, &self->refill, big, 26, &s0, &s);
	if (s.chunks != 1)
		SKIP(return, "the allocator did not deliver 64 MiB in one piece");

	g = grant(self->fd, big, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, big);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, big);
	munmap(p, big);
	ASSERT_EQ(0, write_param("scrub_rate_mbps", "4"));
	close(g);

	/* the first piece comes clean while the rest is still dirty */
	end = now_ms() + 60000;
	do {
		usleep(20000);
		ASSERT_EQ(0, pool_stats(self->fd, &s));
	} while (!s.clean_bytes && now_ms() < end);
	EXPECT_LE(CHUNK, s.clean_bytes);
	EXPECT_LT(0, s.dirty_bytes);
	g = grant(self->fd, CHUNK, NVX_GRANT_CLEAN_ONLY, NULL);
	ASSERT_LE(0, g) TH_LOG("CLEAN_ONLY: %s", strerror(-g));
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(all_bytes(p, CHUNK, 0));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_LT(0, s.dirty_bytes) TH_LOG("the whole chunk was scrubbed already");
	munmap(p, CHUNK);
	close(g);

	ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(big, s.clean_bytes);
	EXPECT_EQ(1, s.chunks);
	empty_and_refill(_metadata, self->fd, &s0);
}

/*
 * The pool heals: after 300 grants of 1 to 8 pieces, released in random
 * order while others are taken (so chunks split at every boundary), the
 * clean pieces of each allocation are one chunk again: the chunk count
 * is what grow made, and a shrink releases the chunks whole.
 */
POOL_TEST(heals_after_mixed_workload)
{
	const unsigned int shift = 25;
	const uint64_t size = 128ULL << 20;
	struct nvx_pool_stats s0, s1, s;
	int g[64], n = 0, i, j, fails = 0;
	uint64_t done, granted = 0;
	long long merges0;

	empty_and_grow(_metadata, self->fd, &self->refill, size, shift, &s0, &s1);
	EXPECT_LE(4, s1.chunks);
	merges0 = pool_merges();
	ASSERT_LE(0, merges0) TH_LOG("no merges line in " POOL_DEBUGFS);
	srand(1);
	for (i = 0; i < 300; i++) {
		if (n && (n == (int)ARRAY_SIZE(g) || rand() % 3 == 0)) {
			j = rand() % n;
			close(g[j]);
			g[j] = g[--n];
			continue;
		}
		g[n] = grant(self->fd, (1 + rand() % 8) * CHUNK, 0, NULL);
		if (g[n] < 0) {
			/* full: release one instead */
			EXPECT_EQ(-ENOSPC, g[n]);
			fails++;
			if (n) {
				close(g[0]);
				g[0] = g[--n];
			}
			continue;
		}
		granted++;
		n++;
	}
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	TH_LOG("%llu grants, %d refused (full), %d live, %llu chunks now, %llu at the start",
	       (unsigned long long)granted, fails, n,
	       (unsigned long long)s.chunks, (unsigned long long)s1.chunks);
	/* chunks of 2 MiB (a fragmented allocator) never split */
	if (s1.chunks < size >> 21)
		EXPECT_LT(s1.chunks, s.chunks);
	while (n)
		close(g[--n]);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(size, s.clean_bytes);
	EXPECT_EQ(s1.chunks, s.chunks);
	/* debugfs counts the merges that healed it */
	if (s1.chunks < size >> 21)
		EXPECT_LT(merges0, pool_merges());
	/* whole chunks: a shrink of one chunk's size takes one chunk */
	if (s1.chunks == size >> shift) {
		ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK,
					 1ULL << shift, NVX_NODE_ANY, &done));
		ASSERT_EQ(0, pool_stats(self->fd, &s));
		EXPECT_EQ(s1.chunks - 1, s.chunks);
	}
	empty_and_refill(_metadata, self->fd, &s0);
}

/* Growing beyond what memory holds: -ENOMEM, and what was added is kept. */
POOL_TEST(grow_beyond_memory)
{
	struct nvx_pool_stats before, after;
	uint64_t done = 0;

	ASSERT_EQ(0, pool_stats(self->fd, &before));
	EXPECT_EQ(-ENOMEM, pool_resize(self->fd, NVX_IOC_POOL_GROW,
				       1ULL << 40, NVX_NODE_ANY, &done));
	EXPECT_LT(0, done);
	EXPECT_GT(1ULL << 40, done);
	ASSERT_EQ(0, pool_stats(self->fd, &after));
	EXPECT_EQ(before.total_bytes + done, after.total_bytes);
	TH_LOG("grew %llu MiB before memory ran out",
	       (unsigned long long)(done >> 20));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, done,
				 NVX_NODE_ANY, NULL));
}

TEST_HARNESS_MAIN
