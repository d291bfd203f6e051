// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "fault": the pool's calls, every allocation and
 * user copy failed in turn (include/fault_util.h).
 *
 * GRANT of each size class (one piece, several pieces of one chunk,
 * several chunks), GRANT_IOC_RANGES, POOL_GROW and POOL_SHRINK: after
 * each failure, no fd, and the pool's accounting as before. The calls
 * that only report (VERSION, FEATURES, POOL_STATS, GRANT_IOC_INFO): the
 * argument as it was, and a success gives what an unfaulted call gives.
 */
#include "pool_fixture.h"
#include "fault_util.h"

struct pool_call {
	int fd;			/* /dev/nvx */
	uint64_t bytes;
	int made;		/* the grant fd a success made */
	struct nvx_pool_stats before;
};

static int do_grant(void *arg)
{
	struct pool_call *pc = arg;
	int ret = grant(pc->fd, pc->bytes, 0, NULL);

	if (ret < 0)
		return ret;
	pc->made = ret;
	return 0;
}

static void undo_grant(void *arg)
{
	struct pool_call *pc = arg;

	close(pc->made);
	pc->made = -1;
}

/* The pool's bytes and grants as before the call. */
static int check_pool(void *arg, char *why, size_t len)
{
	struct pool_call *pc = arg;
	struct nvx_pool_stats s;

	if (pool_stats(pc->fd, &s)) {
		snprintf(why, len, "POOL_STATS failed");
		return -1;
	}
	if (s.total_bytes != pc->before.total_bytes ||
	    s.granted_bytes != pc->before.granted_bytes ||
	    s.grants_live != pc->before.grants_live ||
	    s.clean_bytes + s.dirty_bytes !=
	    pc->before.clean_bytes + pc->before.dirty_bytes) {
		snprintf(why, len,
			 "pool: total %llu granted %llu live %llu free %llu, before %llu %llu %llu %llu",
			 (unsigned long long)s.total_bytes,
			 (unsigned long long)s.granted_bytes,
			 (unsigned long long)s.grants_live,
			 (unsigned long long)(s.clean_bytes + s.dirty_bytes),
			 (unsigned long long)pc->before.total_bytes,
			 (unsigned long long)pc->before.granted_bytes,
			 (unsigned long long)pc->before.grants_live,
			 (unsigned long long)(pc->before.clean_bytes +
					      pc->before.dirty_bytes));
		return -1;
	}
	return 0;
}

static void fault_grant(struct __test_metadata *_metadata, int fd,
			uint64_t bytes, const char *what)
{
	struct pool_call pc = { .fd = fd, .bytes = bytes, .made = -1 };
	struct fault_call c = {
		.what = what, .call = do_grant, .undo = undo_grant,
		.check = check_pool, .arg = &pc,
	};
	struct fault_result res;

	ASSERT_EQ(0, wait_scrubbed(fd));
	ASSERT_EQ(0, pool_stats(fd, &pc.before));
	ASSERT_EQ(0, fault_run(&c, &res));
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points) TH_LOG("%s: no failure point reached", what);
}

FIXTURE(fault_pool) {
	int fd;
	struct nvx_pool_stats start;
	uint64_t grown;
	bool set;
};

FIXTURE_SETUP(fault_pool)
{
	int ret;

	if (!nvx_require_feature(_metadata, &self->fd, NVX_FEAT_POOL))
		SKIP(return, "no NVX_FEAT_POOL: the memory pool not built");
	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &self->start));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW,
				 POOL_CHUNKS * CHUNK, NVX_NODE_ANY,
				 &self->grown));
	/* last: a setup that fails after this leaves no knob set */
	ret = fault_arm_setup();
	ASSERT_EQ(0, ret);
	self->set = true;
}

FIXTURE_TEARDOWN(fault_pool)
{
	struct nvx_pool_stats s;
	uint64_t done;

	if (self->set)
		fault_arm_restore();
	if (self->fd < 0)
		return;
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	expect_pool_as_before(_metadata, &self->start, self->grown, &s);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, self->grown,
				 NVX_NODE_ANY, &done));
	close(self->fd);
}

TEST_F_TIMEOUT(fault_pool, grant_one_piece, 300)
{
	fault_grant(_metadata, self->fd, CHUNK, "GRANT 1 piece");
}

TEST_F_TIMEOUT(fault_pool, grant_pieces, 300)
{
	fault_grant(_metadata, self->fd, 5 * CHUNK, "GRANT 5 pieces");
}

TEST_F_TIMEOUT(fault_pool, grant_most_of_pool, 300)
{
	fault_grant(_metadata, self->fd, (POOL_CHUNKS - 1) * CHUNK,
		    "GRANT 15 pieces");
}

struct ranges_call {
	int g;
	struct nvx_grant_range rg[4];
};

static int do_ranges(void *arg)
{
	struct ranges_call *rc = arg;
	struct nvx_grant_ranges r = {
		.count = ARRAY_SIZE(rc->rg),
		.ranges = (uintptr_t)rc->rg,
	};

	return nvx_ioctl(rc->g, NVX_GRANT_IOC_RANGES, &r);
}

/* RANGES copies out: its user copies fail in turn. */
TEST_F_TIMEOUT(fault_pool, grant_ranges, 300)
{
	struct ranges_call rc = { };
	struct fault_call c = {
		.what = "GRANT_IOC_RANGES", .call = do_ranges, .arg = &rc,
	};
	struct fault_result res;

	rc.g = grant(self->fd, 3 * CHUNK, 0, NULL);
	ASSERT_LE(0, rc.g);
	ASSERT_EQ(0, fault_run(&c, &res));
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points);
	close(rc.g);
}

struct grow_call {
	int fd;
	uint64_t done;
	struct nvx_pool_stats before;
};

static int do_grow(void *arg)
{
	struct grow_call *gc = arg;

	return pool_resize(gc->fd, NVX_IOC_POOL_GROW, 2 * CHUNK,
			   NVX_NODE_ANY, &gc->done);
}

static void undo_grow(void *arg)
{
	struct grow_call *gc = arg;
	uint64_t done;

	pool_resize(gc->fd, NVX_IOC_POOL_SHRINK, gc->done, NVX_NODE_ANY,
		    &done);
}

/* A failed GROW adds nothing (what it reports in done it added). */
static int check_grow(void *arg, char *why, size_t len)
{
	struct grow_call *gc = arg;
	struct nvx_pool_stats s;
	uint64_t done;

	if (pool_stats(gc->fd, &s)) {
		snprintf(why, len, "POOL_STATS failed");
		return -1;
	}
	if (s.total_bytes != gc->before.total_bytes + gc->done) {
		snprintf(why, len, "total %llu, before %llu, done %llu",
			 (unsigned long long)s.total_bytes,
			 (unsigned long long)gc->before.total_bytes,
			 (unsigned long long)gc->done);
		return -1;
	}
	if (gc->done)
		pool_resize(gc->fd, NVX_IOC_POOL_SHRINK, gc->done,
			    NVX_NODE_ANY, &done);
	return 0;
}

TEST_F_TIMEOUT(fault_pool, pool_grow, 300)
{
	struct grow_call gc = { .fd = self->fd };
	struct fault_call c = {
		.what = "POOL_GROW 2 pieces", .call = do_grow,
		.undo = undo_grow, .check = check_grow, .arg = &gc,
	};
	struct fault_result res;

	ASSERT_EQ(0, pool_stats(self->fd, &gc.before));
	ASSERT_EQ(0, fault_run(&c, &res));
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points);
}

struct shrink_call {
	int fd;
	uint64_t total;		/* total_bytes before */
	int ret;
	unsigned int late;	/* failures after the pool shrank */
	unsigned int calls, late_at;	/* calls made; the late one's */
	char bad[128];
};

static uint64_t pool_total(int fd)
{
	struct nvx_pool_stats s;

	return pool_stats(fd, &s) ? 0 : s.total_bytes;
}

static int do_shrink(void *arg)
{
	struct shrink_call *sc = arg;
	uint64_t done;

	sc->calls++;
	sc->ret = pool_resize(sc->fd, NVX_IOC_POOL_SHRINK, 2 * CHUNK,
			      NVX_NODE_ANY, &done);
	return sc->ret;
}

/* Grow back what a SHRINK took: the pool as before. */
static int grow_back(struct shrink_call *sc)
{
	uint64_t done;

	if (pool_total(sc->fd) != sc->total - 2 * CHUNK)
		return -1;
	return pool_resize(sc->fd, NVX_IOC_POOL_GROW, 2 * CHUNK,
			   NVX_NODE_ANY, &done) || done != 2 * CHUNK ||
	       pool_total(sc->fd) != sc->total ? -1 : 0;
}

static void undo_shrink(void *arg)
{
	struct shrink_call *sc = arg;

	if (grow_back(sc) && !sc->bad[0])
		snprintf(sc->bad, sizeof(sc->bad),
			 "a SHRINK that succeeded: total %llu, before %llu",
			 (unsigned long long)pool_total(sc->fd),
			 (unsigned long long)sc->total);
}

/*
 * Nothing taken; or the result's copy failed after the pieces went (a
 * caller that unmaps its argument from another thread: abi.rst).
 */
static int check_shrink(void *arg, char *why, size_t len)
{
	struct shrink_call *sc = arg;
	uint64_t t = pool_total(sc->fd);

	if (t == sc->total)
		return 0;
	if (sc->ret == -EFAULT && !grow_back(sc)) {
		sc->late++;
		sc->late_at = sc->calls;
		return 0;
	}
	snprintf(why, len, "total %llu after a failed SHRINK (%s), before %llu",
		 (unsigned long long)t, strerror(-sc->ret),
		 (unsigned long long)sc->total);
	return -1;
}

TEST_F_TIMEOUT(fault_pool, pool_shrink, 300)
{
	struct shrink_call sc = { .fd = self->fd };
	struct fault_call c = {
		.what = "POOL_SHRINK 2 pieces", .call = do_shrink,
		.undo = undo_shrink, .check = check_shrink, .arg = &sc,
	};
	struct fault_result res;

	sc.total = pool_total(self->fd);
	ASSERT_LE(2 * CHUNK, sc.total);
	ASSERT_EQ(0, fault_run(&c, &res));
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points);
	EXPECT_STREQ("", sc.bad);
	/* the result's copy, the last point, is the one late failure */
	EXPECT_EQ(1U, sc.late);
	EXPECT_EQ(res.points, sc.late_at);
	printf("# POOL_SHRINK: %u failure(s) after the pool shrank, at point %u\n",
	       sc.late, sc.late_at);
	EXPECT_EQ(sc.total, pool_total(self->fd));
}

/* VERSION, FEATURES, POOL_STATS and a grant's INFO, the pool idle. */
TEST_F_TIMEOUT(fault_pool, queries, 300)
{
	struct nvx_version v = { };
	struct nvx_features f = { };
	struct nvx_pool_stats st = { .node = NVX_NODE_ANY };
	struct nvx_grant_info gi = { };
	struct fault_query fq[4] = {
		{ "VERSION", self->fd, NVX_IOC_VERSION, &v, sizeof(v), true },
		{ "FEATURES", self->fd, NVX_IOC_FEATURES, &f, sizeof(f),
		  true },
		{ "POOL_STATS", self->fd, NVX_IOC_POOL_STATS, &st, sizeof(st),
		  true },
		{ "GRANT_IOC_INFO", -1, NVX_GRANT_IOC_INFO, &gi, sizeof(gi),
		  true },
	};
	struct fault_result res;
	unsigned int i;
	int g;

	g = grant(self->fd, 3 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	fq[3].fd = g;
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, fault_run_query(&fq[i], &res));
		EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
		EXPECT_LT(0U, res.points);
	}
	close(g);
}

TEST_HARNESS_MAIN
