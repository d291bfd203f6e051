// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "pool": what a grant's memory is.
 *
 * Physical ranges and the largest grant, I/O into a grant, PMD
 * mappings, the tracepoints, and long-term pins.
 */
#include "pool_fixture.h"
#include "trace_util.h"

POOL_TEST(ranges_and_max_grant)
{
	struct nvx_grant_range rg[POOL_CHUNKS];
	struct nvx_grant_ranges r = { 0 };
	uint64_t sum = 0;
	uint32_t i;
	int g;

	g = grant(self->fd, 4 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	r.count = 0;
	r.ranges = (uintptr_t)rg;
	EXPECT_EQ(-EOVERFLOW, nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r));
	EXPECT_LE(1, r.count);
	r.count = POOL_CHUNKS;
	ASSERT_EQ(0, nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r));
	for (i = 0; i < r.count; i++) {
		EXPECT_EQ(0, rg[i].phys % CHUNK);
		sum += rg[i].bytes;
	}
	EXPECT_EQ(4 * CHUNK, sum);
	r.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r));
	r.flags = 0;
	r.ranges = 0xffffffffff000000ULL;
	EXPECT_EQ(-EFAULT, nvx_ioctl(g, NVX_GRANT_IOC_RANGES, &r));
	/* grant ioctls on /dev/nvx and the other way round */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_GRANT_IOC_RANGES, &r));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(g, NVX_IOC_POOL_STATS, &r));
	close(g);

	ASSERT_EQ(0, write_param("grant_max_bytes", "4194304"));
	EXPECT_EQ(-EFBIG, grant(self->fd, 3 * CHUNK, 0, NULL));
	g = grant(self->fd, 2 * CHUNK, 0, NULL);
	EXPECT_LE(0, g);
	close(g);
	ASSERT_EQ(0, write_param("grant_max_bytes", "0"));
}

/* Grant memory works as an I/O buffer: read() into it, write() from it. */
POOL_TEST(io_buffer)
{
	unsigned char *p, buf[4096];
	int g, pfd[2], fd;

	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	fd = open("/dev/urandom", O_RDONLY);
	ASSERT_LE(0, fd);
	/* across the page boundary in the middle of the chunk */
	ASSERT_EQ(8192, read(fd, p + CHUNK / 2 - 4096, 8192));
	close(fd);
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(4096, write(pfd[1], p + CHUNK / 2 - 2048, 4096));
	ASSERT_EQ(4096, read(pfd[0], buf, sizeof(buf)));
	EXPECT_EQ(0, memcmp(buf, p + CHUNK / 2 - 2048, 4096));
	close(pfd[0]);
	close(pfd[1]);
	munmap(p, CHUNK);
	close(g);
}

/*
 * A mapping at a chunk-aligned offset gets a chunk-aligned address and
 * one PMD per chunk; an unaligned offset gets PTEs; splitting a PMD
 * (partial munmap, mprotect) and fork keep the data; the accounting in
 * the teardown proves every reference the mappings took went back.
 */
POOL_TEST(pmd_mappings)
{
	const size_t len = 4 * CHUNK;
	unsigned char *p, *q;
	int g, status;
	pid_t pid;

	g = grant(self->fd, len, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, len);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, (uintptr_t)p % CHUNK);
	tag_pages(p, len, 0);
	EXPECT_EQ((long)(len >> 10), smaps_kb(p, "FilePmdMapped:"));
	EXPECT_EQ((long)(len >> 10), smaps_kb(p, "Rss:"));

	/* a second mapping, one page into the grant: PTEs, same memory */
	q = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, g, PAGE);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_TRUE(pages_tagged(q, CHUNK, 1));
	EXPECT_EQ(0, smaps_kb(q, "FilePmdMapped:"));
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(q, "Rss:"));
	*(unsigned long *)(q + CHUNK - PAGE + 8) = 0xfeed;
	EXPECT_EQ(0xfeed, *(unsigned long *)(p + CHUNK + 8));
	ASSERT_EQ(0, munmap(q, CHUNK));

	/* a child sees and writes the same memory */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (!pages_tagged(p, len, 0))
			_exit(1);
		p[len - 1] = 0x5a;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0x5a, p[len - 1]);

	/* split chunk 1's PMD by unmapping one page in it */
	ASSERT_EQ(0, munmap(p + CHUNK + PAGE, PAGE));
	/* and chunk 3's by making one page read-only */
	ASSERT_EQ(0, mprotect(p + 3 * CHUNK, PAGE, PROT_READ));
	EXPECT_TRUE(pages_tagged(p, CHUNK + PAGE, 0));
	EXPECT_TRUE(pages_tagged(p + CHUNK + 2 * PAGE, 3 * CHUNK - 2 * PAGE,
				 CHUNK / PAGE + 2));
	/* chunk 0 kept its PMD; chunk 1 is PTEs now */
	EXPECT_EQ((long)(CHUNK >> 10), smaps_kb(p, "FilePmdMapped:"));
	ASSERT_EQ(0, munmap(p, len));
	close(g);
}

/* The pool's tracepoints fire: grow, grant, release, scrub, shrink. */
POOL_TEST(tracepoints)
{
	static const char * const events[] = {
		"nvx_pool_grow:", "nvx_grant:", "nvx_grant_release:",
		"nvx_scrub:", "nvx_pool_shrink:",
	};
	char *trace;
	size_t len = 0, i;
	ssize_t n;
	int fd, g;

	if (access(TRACEFS "events/nvx/enable", W_OK))
		SKIP(return, "no tracefs at " TRACEFS);
	ASSERT_EQ(0, write_str(TRACEFS "trace", ""));
	ASSERT_EQ(0, write_str(TRACEFS "events/nvx/enable", "1"));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, CHUNK,
				 NVX_NODE_ANY, NULL));
	g = grant(self->fd, CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	close(g);
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, CHUNK,
				 NVX_NODE_ANY, NULL));
	ASSERT_EQ(0, write_str(TRACEFS "events/nvx/enable", "0"));

	trace = malloc(1 << 20);
	ASSERT_NE(NULL, trace);
	fd = open(TRACEFS "trace", O_RDONLY);
	ASSERT_LE(0, fd);
	while (len < (1 << 20) - 1 &&
	       (n = read(fd, trace + len, (1 << 20) - 1 - len)) > 0)
		len += n;
	trace[len] = '\0';
	close(fd);
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		if (!strstr(trace, events[i]))
			TH_LOG("no %s event in the trace", events[i]);
		EXPECT_NE(NULL, strstr(trace, events[i]));
	}
	free(trace);
}

/* A FOLL_LONGTERM pin of grant memory succeeds (no migration needed). */
POOL_TEST(longterm_pin)
{
	struct gup_test gt = { 0 };
	int gfd, g;
	char *p;

	gfd = open(GUP_TEST, O_RDWR);
	if (gfd < 0)
		SKIP(return, GUP_TEST " missing (CONFIG_GUP_TEST)");
	g = grant(self->fd, 2 * CHUNK, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, 2 * CHUNK);
	ASSERT_NE(MAP_FAILED, p);
	gt.addr = (uintptr_t)p;
	gt.size = 2 * CHUNK;
	gt.nr_pages_per_call = 512;
	gt.gup_flags = 1;	/* FOLL_WRITE */
	EXPECT_EQ(0, ioctl(gfd, PIN_LONGTERM_BENCHMARK, &gt))
		TH_LOG("PIN_LONGTERM_BENCHMARK: %s", strerror(errno));
	munmap(p, 2 * CHUNK);
	close(g);
	close(gfd);
}

/*
 * Memory still pinned when its grant goes is neither scrubbed nor handed
 * out again until the pin is released.
 */
POOL_TEST(pinned_memory_is_not_reused)
{
	struct pin_longterm_test pt = { 0 };
	struct nvx_pool_stats s;
	int gfd, g;
	char *p;

	gfd = open(GUP_TEST, O_RDWR);
	if (gfd < 0)
		SKIP(return, GUP_TEST " missing (CONFIG_GUP_TEST)");
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	g = grant(self->fd, s.clean_bytes, 0, NULL);
	ASSERT_LE(0, g);
	p = map_grant(g, s.clean_bytes);
	ASSERT_NE(MAP_FAILED, p);
	pt.addr = (uintptr_t)p;
	pt.size = PAGE;
	pt.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
	ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_START, &pt))
		TH_LOG("PIN_LONGTERM_TEST_START: %s", strerror(errno));
	munmap(p, s.clean_bytes);
	close(g);

	/* give the scrubber time: the pinned chunk must stay dirty */
	sleep(2);
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(CHUNK, s.dirty_bytes);
	EXPECT_EQ(-ENOSPC, grant(self->fd, s.total_bytes - s.granted_bytes,
				 0, NULL));

	ASSERT_EQ(0, ioctl(gfd, PIN_LONGTERM_TEST_STOP));
	close(gfd);
	EXPECT_EQ(0, wait_scrubbed(self->fd));
}

static struct tracer trace, perf;

/*
 * nvx-trace pool and perf stat around 8 grants of one piece and 4 of two:
 * both count 12 grants and 12 releases; nvx-trace's size histogram holds
 * their bytes and its latency histogram times each of them.
 */
POOL_TEST(nvx_trace_and_perf_count_grants)
{
	uint64_t granted, bytes = 0;
	int i, gfd;

	ASSERT_EQ(0, nvx_trace_start(&trace, "pool")) TH_LOG("%s",
							     trace.run.err);
	ASSERT_EQ(0, perf_stat_start(&perf, "nvx:nvx_grant,nvx:nvx_grant_release"))
		TH_LOG("%s", perf.run.err);
	for (i = 0; i < 12; i++) {
		gfd = grant(self->fd, (i < 8 ? 1 : 2) * CHUNK, 0, &granted);
		ASSERT_LE(0, gfd) TH_LOG("grant %d: %s", i, strerror(-gfd));
		bytes += granted;
		close(gfd);
	}
	tracer_stop(&perf);
	tracer_stop(&trace);
	ASSERT_TRUE(WIFEXITED(trace.run.status) &&
		    !WEXITSTATUS(trace.run.status)) TH_LOG("%s", trace.run.err);
	EXPECT_EQ(12 * CHUNK + 4 * CHUNK, bytes);
	EXPECT_EQ(12, trace_json_sum(trace.run.out, "grants", NULL, "value"))
		TH_LOG("%s", trace.run.out);
	EXPECT_EQ((long long)bytes, trace_json_sum(trace.run.out,
						   "granted-bytes", NULL,
						   "value"));
	EXPECT_EQ(12, trace_json_sum(trace.run.out, "releases", NULL, "value"));
	EXPECT_EQ((long long)bytes, trace_json_sum(trace.run.out,
						   "released-bytes", NULL,
						   "value"));
	EXPECT_EQ(12, trace_json_sum(trace.run.out, "grant-size", NULL,
				     "count"));
	EXPECT_EQ((long long)bytes, trace_json_sum(trace.run.out, "grant-size",
						   NULL, "sum"));
	EXPECT_EQ(12, trace_json_sum(trace.run.out, "grant-latency", NULL,
				     "count"));
	EXPECT_EQ(12, perf_stat_count(perf.run.err, "nvx:nvx_grant"))
		TH_LOG("%s", perf.run.err);
	EXPECT_EQ(12, perf_stat_count(perf.run.err, "nvx:nvx_grant_release"));
}

TEST_HARNESS_MAIN
