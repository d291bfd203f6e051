// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench grant: how long it takes to obtain SIZE of zeroed memory,
 * mapped (every page-table entry installed, nothing written: the
 * headline), and the same with one byte written in every 4 KiB page:
 * through a grant from the nvx pool, and through the ways the kernel
 * offers without nvx. The scrubber's part is grant_scrub.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include <nvx/pool.h>

#include "grant.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

/*
 * The kernel's gup_test debugfs interface (mm/gup_test.h, CONFIG_GUP_TEST),
 * which has no uapi header. PIN_LONGTERM_BENCHMARK pins the range with
 * pin_user_pages(gup_flags | FOLL_LONGTERM), nr_pages_per_call pages at a
 * time, unpins it again, and writes back in @size how much it pinned.
 */
#define NVX_GUP_TEST_PATH		"/sys/kernel/debug/gup_test"
#define NVX_GUP_TEST_MAX_PAGES_TO_DUMP	8
#define NVX_GUP_FOLL_WRITE		0x01	/* FOLL_WRITE */
#define NVX_GUP_PAGES_PER_CALL		1024

struct nvx_gup_test {
	__u64 get_delta_usec;
	__u64 put_delta_usec;
	__u64 addr;
	__u64 size;
	__u32 nr_pages_per_call;
	__u32 gup_flags;
	__u32 test_flags;
	__u32 which_pages[NVX_GUP_TEST_MAX_PAGES_TO_DUMP];
};

#define NVX_PIN_LONGTERM_BENCHMARK	_IOWR('g', 3, struct nvx_gup_test)

#define NVX_THP_PATH		"/sys/kernel/mm/transparent_hugepage/enabled"

static const char * const nvx_bm_names[NVX_BM_COUNT] = {
	[NVX_BM_NVX]			= "nvx",
	[NVX_BM_MAP_POPULATE]		= "map_populate",
	[NVX_BM_MADV_POPULATE_WRITE]	= "madv_populate_write",
	[NVX_BM_FIRST_TOUCH]		= "first_touch",
	[NVX_BM_PIN_LONGTERM]		= "pin_longterm",
};

/*
 * Without --size: beside 1G, 4G if it fits and the largest of the others
 * that fits.
 */
#define NVX_BENCH_SIZE_MID	(4 * NVX_GIB)
static const uint64_t nvx_bench_sizes[] = {
	4 * NVX_GIB, 8 * NVX_GIB, 16 * NVX_GIB, 32 * NVX_GIB,
};

static uint64_t nvx_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/**
 * nvx_mib_per_s() - a rate
 * @bytes: bytes moved
 * @ns: in this many nanoseconds
 *
 * Return: MiB/s, or 0 for no time.
 */
double nvx_mib_per_s(uint64_t bytes, uint64_t ns)
{
	if (!ns)
		return NAN;
	return ((double)bytes / NVX_MIB) / ((double)ns / NVX_NSEC_PER_SEC);
}

/**
 * nvx_read_line() - the first line of a small text file
 * @path: the file
 * @buf: receives the line, without its newline
 * @size: of @buf
 *
 * Return: true when it was read.
 */
bool nvx_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, size, f);
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

static bool nvx_read_u64(const char *path, uint64_t *v)
{
	unsigned long long n;
	char buf[32];

	if (!nvx_read_line(path, buf, sizeof(buf)) ||
	    nvx_parse_uint(buf, ULLONG_MAX, &n))
		return false;
	*v = n;
	return true;
}

/* MemAvailable of /proc/meminfo in bytes, or UINT64_MAX when unknown. */
static uint64_t nvx_mem_available(void)
{
	unsigned long long kib;
	uint64_t ret = UINT64_MAX;
	char line[128];
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return ret;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			ret = (uint64_t)kib << 10;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Memory in the pool on @node not granted: clean or soon clean. */
static int nvx_bench_pool_free(struct nvx_bench *b, uint32_t node,
			       uint64_t *free_bytes)
{
	struct nvx_pool_stats s;
	int ret;

	ret = nvx_pool_stats_get(b->ctx->fd, node, &s);
	if (ret)
		return ret;
	*free_bytes = s.total_bytes > s.granted_bytes ?
		      s.total_bytes - s.granted_bytes : 0;
	return 0;
}

/*
 * Choose the node: the one this runs on, unless it lacks room for
 * @bytes and another node has it (the one with the most).
 */
static int nvx_bench_pick_node(struct nvx_bench *b, uint32_t nr_nodes,
			       uint64_t bytes)
{
	uint32_t cur = nvx_cpu_node(), n, best = NVX_NODE_ANY;
	uint32_t first = NVX_NODE_ANY;
	uint64_t avail, best_avail = 0;
	bool cur_ok;
	int err;

	cur_ok = !nvx_bench_pool_free(b, cur, &avail);
	if (cur_ok && avail >= bytes) {
		b->node = cur;
		return NVX_EXIT_OK;
	}
	for (n = 0; n < nr_nodes; n++) {
		err = nvx_bench_pool_free(b, n, &avail);
		if (err == -EINVAL)
			continue;
		if (err) {
			nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
				nvx_pool_strerror(NVX_IOC_POOL_STATS, -err));
			return NVX_EXIT_FAIL;
		}
		if (first == NVX_NODE_ANY)
			first = n;
		if (avail >= bytes && avail > best_avail) {
			best = n;
			best_avail = avail;
		}
	}
	if (best == NVX_NODE_ANY)
		best = cur_ok ? cur : first;
	if (best == NVX_NODE_ANY) {
		nvx_err("%s: no online NUMA node answers NVX_IOC_POOL_STATS",
			b->ctx->path);
		return NVX_EXIT_FAIL;
	}
	b->node = best;
	return NVX_EXIT_OK;
}

/* Shrink the pool on b->node by @bytes of what the bench added. */
static int nvx_bench_give_back(struct nvx_bench *b, uint64_t bytes)
{
	uint64_t done = 0;
	int err;

	if (bytes > b->added)
		bytes = b->added;
	if (!bytes)
		return 0;
	err = nvx_pool_resize(b->ctx->fd, false, b->node, bytes, 0, &done);
	b->added -= done < bytes ? done : bytes;
	return err;
}

/*
 * Make room for a grant of @bytes on b->node: grow the pool by what it
 * lacks there, and check that as much anonymous memory is available
 * besides, for the other methods.
 * Return: 0 when @bytes fits; 1 when not, with the reason in @why; or
 * an NVX_EXIT_* status after printing why.
 */
static int nvx_bench_make_room(struct nvx_bench *b, uint64_t bytes,
			       char *why, size_t why_size)
{
	char size_s[NVX_FMT_BYTES_LEN], h1[NVX_FMT_BYTES_LEN];
	char h2[NVX_FMT_BYTES_LEN];
	uint64_t avail, max, mem, done = 0, grown = 0;
	int err;

	nvx_fmt_bytes(size_s, sizeof(size_s), bytes);
	if (nvx_read_u64(NVX_PARAM_PATH "grant_max_bytes", &max) && max &&
	    bytes > max) {
		snprintf(why, why_size, "%s is above grant_max_bytes (%s, %s)",
			 size_s, nvx_fmt_bytes(h1, sizeof(h1), max),
			 NVX_PARAM_PATH "grant_max_bytes");
		return 1;
	}

	err = -nvx_bench_pool_free(b, b->node, &avail);
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	if (avail < bytes) {
		err = -nvx_pool_resize(b->ctx->fd, true, b->node, bytes - avail,
				       NVX_POOL_CHUNK_SHIFT_MAX,
				       &done);
		b->added += done;
		if (err) {
			nvx_bench_give_back(b, done);
			snprintf(why, why_size,
				 "the pool holds %s free on node %u, and growing it by %s failed: %s",
				 nvx_fmt_bytes(h1, sizeof(h1), avail), b->node,
				 nvx_fmt_bytes(h2, sizeof(h2), bytes - avail),
				 nvx_pool_strerror(NVX_IOC_POOL_GROW, err));
			return 1;
		}
		grown = done;
	}

	mem = nvx_mem_available();
	if (mem != UINT64_MAX && mem < bytes + bytes / 8) {
		nvx_bench_give_back(b, grown);
		snprintf(why, why_size,
			 "the other methods need %s of anonymous memory, and only %s is available (MemAvailable) besides the pool",
			 size_s, nvx_fmt_bytes(h1, sizeof(h1), mem));
		return 1;
	}
	return 0;
}

/**
 * nvx_bench_wait_clean() - wait until the pool holds no dirty memory
 * @b: the bench
 * @poll_ns: how often to look
 * @at_ns: if not NULL, receives when it was seen clean
 *
 * Gives up after NVX_BENCH_CLEAN_TIMEOUT in which the dirty memory did
 * not shrink.
 *
 * Return: NVX_EXIT_OK, or an NVX_EXIT_* status after a message.
 */
int nvx_bench_wait_clean(struct nvx_bench *b, uint64_t poll_ns,
			 uint64_t *at_ns)
{
	struct timespec ts = {
		.tv_sec = poll_ns / NVX_NSEC_PER_SEC,
		.tv_nsec = poll_ns % NVX_NSEC_PER_SEC,
	};
	uint64_t now, since = nvx_now_ns(), last = UINT64_MAX;
	char h[NVX_FMT_BYTES_LEN];
	struct nvx_pool_stats s;
	int err;

	for (;;) {
		err = -nvx_pool_stats_get(b->ctx->fd, NVX_NODE_ANY, &s);
		now = nvx_now_ns();
		if (err) {
			nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
				nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
			return NVX_EXIT_FAIL;
		}
		if (!s.dirty_bytes) {
			if (at_ns)
				*at_ns = now;
			return NVX_EXIT_OK;
		}
		if (nvx_stop_signal())
			return NVX_EXIT_FAIL;
		if (s.dirty_bytes < last) {
			last = s.dirty_bytes;
			since = now;
		} else if (now - since >= NVX_BENCH_CLEAN_TIMEOUT) {
			nvx_err("%s: the pool still holds %s of dirty memory, and the scrubber made no progress for 60 s (pinned by someone? see scrub_rate_mbps)",
				b->ctx->path,
				nvx_fmt_bytes(h, sizeof(h), s.dirty_bytes));
			return NVX_EXIT_FAIL;
		}
		nanosleep(&ts, NULL);
	}
}

/* Which methods can run here; the reasons for the others in b->skip. */
static void nvx_bench_probe(struct nvx_bench *b)
{
	long page = sysconf(_SC_PAGESIZE);
	char line[128];
	void *p;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		if (madvise(p, page, MADV_POPULATE_WRITE))
			b->skip[NVX_BM_MADV_POPULATE_WRITE] = errno == EINVAL ?
				"the kernel has no MADV_POPULATE_WRITE (Linux 5.14)" :
				strerror(errno);
		munmap(p, page);
	}

	b->gup_fd = open(NVX_GUP_TEST_PATH, O_RDWR | O_CLOEXEC);
	if (b->gup_fd < 0) {
		snprintf(b->gup_why, sizeof(b->gup_why),
			 "%s: %s (needs CONFIG_GUP_TEST, debugfs mounted, and root)",
			 NVX_GUP_TEST_PATH, strerror(errno));
		b->skip[NVX_BM_PIN_LONGTERM] = b->gup_why;
	}

	/* "always [madvise] never": the mode in brackets */
	if (nvx_read_line(NVX_THP_PATH, line, sizeof(line))) {
		char *l = strchr(line, '['), *r = l ? strchr(l, ']') : NULL;

		if (r) {
			*r = 0;
			snprintf(b->thp, sizeof(b->thp), "%s", l + 1);
		}
	}
	if (!nvx_read_u64(NVX_PARAM_PATH "scrub_rate_mbps", &b->scrub_rate))
		b->scrub_rate = 0;
	b->nt = -1;
	if (nvx_read_line(NVX_PARAM_PATH "zero_nontemporal", line, sizeof(line)))
		b->nt = line[0] == 'Y';
}

/*
 * A grant of @bytes from b->node, mapped shared, read and write, with
 * @mflags added to MAP_SHARED: NVX_EXIT_OK with the fd in *@fd and the
 * mapping in *@p, or NVX_EXIT_FAIL after a message.
 */
static int nvx_bench_grant_map(struct nvx_bench *b, uint64_t bytes,
			       int mflags, int *fd, char **p)
{
	char h[NVX_FMT_BYTES_LEN];
	int err;

	err = -nvx_grant_new(b->ctx->fd, b->node, bytes, NVX_GRANT_CLOEXEC, fd);
	if (err) {
		nvx_err("%s: nvx: a grant of %s on node %u: %s", b->ctx->path,
			nvx_fmt_bytes(h, sizeof(h), bytes), b->node,
			nvx_pool_strerror(NVX_IOC_GRANT, err));
		return NVX_EXIT_FAIL;
	}
	*p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | mflags,
		  *fd, 0);
	if (*p == MAP_FAILED) {
		nvx_err("%s: nvx: mmap of a grant of %s: %s", b->ctx->path,
			nvx_fmt_bytes(h, sizeof(h), bytes), strerror(errno));
		close(*fd);
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/*
 * nvx: a grant from the (clean) pool, mapped shared, touched. With
 * @split, the mapping is populated by mmap (MAP_POPULATE) and @split[0]
 * gets the time until then, @split[1] the time of the writes.
 */
static int nvx_bench_run_nvx(struct nvx_bench *b, uint64_t bytes,
			     uint64_t *ns, uint64_t *split)
{
	uint64_t t0, tm, t1;
	int ret, fd;
	char *p;

	t0 = nvx_now_ns();
	ret = nvx_bench_grant_map(b, bytes, split ? MAP_POPULATE : 0, &fd, &p);
	if (ret)
		return ret;
	tm = nvx_now_ns();
	nvx_touch_pages(p, bytes, false);
	t1 = nvx_now_ns();

	munmap(p, bytes);
	close(fd);
	*ns = t1 - t0;
	if (split) {
		split[0] = tm - t0;
		split[1] = t1 - tm;
	}
	return NVX_EXIT_OK;
}

/* FilePmdMapped of the mapping at @p, in bytes, or -1. */
static long long nvx_pmd_mapped(const void *p)
{
	char line[256], start[32];
	long long kb = -1;
	bool in = false;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	snprintf(start, sizeof(start), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (!in) {
			in = !strncmp(line, start, strlen(start));
			continue;
		}
		if (sscanf(line, "FilePmdMapped: %lld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * nvx, mapping without MAP_POPULATE: a grant, mmap, then one read at the
 * start and at every 1 GiB boundary in the mapping; each read faults
 * once and the grant's fault handler maps every piece to the end of its
 * page-table page of PMDs (1 GiB). Checked afterwards, outside the time:
 * all of it PMD-mapped (else it fails, and says so).
 */
static int nvx_bench_run_around(struct nvx_bench *b, uint64_t bytes,
				uint64_t *ns)
{
	const uint64_t gib = 1ULL << 30;
	char h[NVX_FMT_BYTES_LEN];
	uint64_t t0, off;
	long long pmd;
	int ret, fd;
	char *p;

	t0 = nvx_now_ns();
	ret = nvx_bench_grant_map(b, bytes, 0, &fd, &p);
	if (ret)
		return ret;
	/* atomic loads: the compiler keeps them */
	(void)__atomic_load_n(p, __ATOMIC_RELAXED);
	for (off = gib - ((uintptr_t)p & (gib - 1)); off < bytes; off += gib)
		(void)__atomic_load_n(p + off, __ATOMIC_RELAXED);
	*ns = nvx_now_ns() - t0;

	pmd = nvx_pmd_mapped(p);
	munmap(p, bytes);
	close(fd);
	if (pmd != (long long)bytes) {
		nvx_err("%s: nvx: one read per GiB left %lld of %s PMD-mapped",
			b->ctx->path, pmd, nvx_fmt_bytes(h, sizeof(h), bytes));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* The methods without nvx: anonymous memory, populated one way or another. */
static int nvx_bench_run_anon(struct nvx_bench *b, enum nvx_bench_method m,
			      uint64_t bytes, uint64_t *ns, bool touch)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	const char *name = nvx_bm_names[m];
	char h[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	struct nvx_gup_test gup;
	uint64_t t0, t1;
	void *p;

	nvx_fmt_bytes(h, sizeof(h), bytes);
	if (m == NVX_BM_MAP_POPULATE)
		flags |= MAP_POPULATE;

	t0 = nvx_now_ns();
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		nvx_err("%s: %s: mmap of %s: %s", b->ctx->path, name, h,
			strerror(errno));
		return NVX_EXIT_FAIL;
	}
	if (m == NVX_BM_MADV_POPULATE_WRITE &&
	    madvise(p, bytes, MADV_POPULATE_WRITE)) {
		nvx_err("%s: %s: madvise(MADV_POPULATE_WRITE) of %s: %s",
			b->ctx->path, name, h, strerror(errno));
		munmap(p, bytes);
		return NVX_EXIT_FAIL;
	}
	if (m == NVX_BM_PIN_LONGTERM) {
		memset(&gup, 0, sizeof(gup));
		gup.addr = (uintptr_t)p;
		gup.size = bytes;
		gup.nr_pages_per_call = NVX_GUP_PAGES_PER_CALL;
		gup.gup_flags = NVX_GUP_FOLL_WRITE;
		if (ioctl(b->gup_fd, NVX_PIN_LONGTERM_BENCHMARK, &gup)) {
			nvx_err("%s: %s: %s PIN_LONGTERM_BENCHMARK of %s: %s",
				b->ctx->path, name, NVX_GUP_TEST_PATH, h,
				strerror(errno));
			munmap(p, bytes);
			return NVX_EXIT_FAIL;
		}
		if (gup.size != bytes) {
			nvx_err("%s: %s: gup_test pinned only %s of %s",
				b->ctx->path, name,
				nvx_fmt_bytes(h2, sizeof(h2), gup.size), h);
			munmap(p, bytes);
			return NVX_EXIT_FAIL;
		}
	}
	if (touch)
		nvx_touch_pages(p, bytes, false);
	t1 = nvx_now_ns();

	munmap(p, bytes);
	*ns = t1 - t0;
	return NVX_EXIT_OK;
}

/* Does @m install page-table entries without being written to? */
static bool nvx_bench_maps(enum nvx_bench_method m)
{
	return m != NVX_BM_FIRST_TOUCH;
}

/* b->runs runs of every method at one size, interleaved. */
static int nvx_bench_measure(struct nvx_bench *b, struct nvx_bench_size *sz)
{
	uint64_t *setup = &b->samples[NVX_BM_COUNT * b->runs];
	uint64_t *writes = setup + b->runs;
	uint64_t *maps = writes + b->runs;
	uint64_t *around = maps + NVX_BM_COUNT * b->runs;
	uint64_t split[2], total;
	char h[NVX_FMT_BYTES_LEN];
	unsigned int run, m;
	uint64_t *v;
	int ret;

	if (isatty(STDERR_FILENO))
		fprintf(stderr, "%s: %s: measuring %s, %u runs...\n",
			nvx_prog, b->ctx->path,
			nvx_fmt_bytes(h, sizeof(h), sz->bytes), b->runs);
	for (run = 0; run < b->runs; run++) {
		for (m = 0; m < NVX_BM_COUNT; m++) {
			if (b->skip[m])
				continue;
			/* a scrubber at work would disturb any method */
			ret = nvx_bench_wait_clean(b, NVX_BENCH_POLL, NULL);
			if (ret)
				return ret;
			v = &b->samples[m * b->runs + run];
			if (m == NVX_BM_NVX)
				ret = nvx_bench_run_nvx(b, sz->bytes, v, NULL);
			else
				ret = nvx_bench_run_anon(b, m, sz->bytes, v, true);
			if (ret)
				return ret;
			if (nvx_stop_signal())
				return NVX_EXIT_FAIL;
		}
		/* the others again, mapping only (nvx's is its setup below) */
		for (m = 0; m < NVX_BM_COUNT; m++) {
			if (b->skip[m] || m == NVX_BM_NVX ||
			    !nvx_bench_maps(m))
				continue;
			ret = nvx_bench_wait_clean(b, NVX_BENCH_POLL, NULL);
			if (ret)
				return ret;
			ret = nvx_bench_run_anon(b, m, sz->bytes,
						 &maps[m * b->runs + run],
						 false);
			if (ret)
				return ret;
			if (nvx_stop_signal())
				return NVX_EXIT_FAIL;
		}
		/* nvx again, split into its setup and the writes */
		ret = nvx_bench_wait_clean(b, NVX_BENCH_POLL, NULL);
		if (ret)
			return ret;
		ret = nvx_bench_run_nvx(b, sz->bytes, &total, split);
		if (ret)
			return ret;
		setup[run] = split[0];
		writes[run] = split[1];
		/* and mapped by one read per GiB */
		ret = nvx_bench_wait_clean(b, NVX_BENCH_POLL, NULL);
		if (ret)
			return ret;
		ret = nvx_bench_run_around(b, sz->bytes, &around[run]);
		if (ret)
			return ret;
	}
	sz->setup_ns = nvx_bench_median(setup, b->runs);
	sz->writes_ns = nvx_bench_median(writes, b->runs);
	sz->around_ns = nvx_bench_median(around, b->runs);
	sz->around_min_ns = around[0];

	for (m = 0; m < NVX_BM_COUNT; m++) {
		if (b->skip[m])
			continue;
		v = &b->samples[m * b->runs];
		sz->median_ns[m] = nvx_bench_median(v, b->runs);
		sz->min_ns[m] = v[0];
		if (!nvx_bench_maps(m))
			continue;
		v = m == NVX_BM_NVX ? setup : &maps[m * b->runs];
		sz->map_median_ns[m] = nvx_bench_median(v, b->runs);
		sz->map_min_ns[m] = v[0];
	}
	/* nvx maps by whichever of its two ways is faster */
	if (sz->around_ns < sz->map_median_ns[NVX_BM_NVX]) {
		sz->map_median_ns[NVX_BM_NVX] = sz->around_ns;
		sz->map_min_ns[NVX_BM_NVX] = sz->around_min_ns;
	}
	return NVX_EXIT_OK;
}

/* Choose the sizes, make room for them, measure. */
static int nvx_bench_body(struct nvx_bench *b, uint64_t size,
			  bool size_given)
{
	char why[sizeof(b->nofit) - NVX_FMT_BYTES_LEN - 2];
	char h[NVX_FMT_BYTES_LEN];
	unsigned int i;
	int ret;

	ret = nvx_bench_make_room(b, size, why, sizeof(why));
	if (ret == 1) {
		nvx_err("%s: %s does not fit: %s", b->ctx->path,
			nvx_fmt_bytes(h, sizeof(h), size), why);
		return NVX_EXIT_FAIL;
	}
	if (ret)
		return ret;
	b->sizes[0].bytes = size;
	b->nr_sizes = 1;

	for (i = 0; !size_given && i < NVX_ARRAY_SIZE(nvx_bench_sizes); i++) {
		uint64_t c = nvx_bench_sizes[i];

		if (c <= size)
			continue;
		if (nvx_stop_signal())
			return NVX_EXIT_FAIL;
		ret = nvx_bench_make_room(b, c, why, sizeof(why));
		if (ret == 1) {
			snprintf(b->nofit, sizeof(b->nofit), "%s: %s",
				 nvx_fmt_bytes(h, sizeof(h), c), why);
			break;
		}
		if (ret)
			return ret;
		/* 4G stays; a larger one replaces the previous larger one */
		if (b->nr_sizes == 1 || b->sizes[b->nr_sizes - 1].bytes ==
		    NVX_BENCH_SIZE_MID)
			b->nr_sizes++;
		b->sizes[b->nr_sizes - 1].bytes = c;
	}

	for (i = 0; i < b->nr_sizes; i++) {
		ret = nvx_bench_measure(b, &b->sizes[i]);
		if (ret)
			return ret;
	}
	ret = nvx_bench_user_zero(b, b->sizes[b->nr_sizes - 1].bytes);
	if (ret)
		return ret;
	ret = nvx_bench_scrubs(b, b->sizes[b->nr_sizes - 1].bytes);
	if (ret)
		return ret;
	/* the template and a piece split for small grants */
	ret = nvx_bench_make_room(b, NVX_BENCH_CLONE_BYTES + b->piece_bytes,
				  why, sizeof(why));
	if (ret == 1) {
		nvx_err("%s: no room for the template and the small grants: %s",
			b->ctx->path, why);
		return NVX_EXIT_FAIL;
	}
	if (ret)
		return ret;
	ret = nvx_bench_clone(b);
	if (ret)
		return ret;
	return nvx_bench_small(b);
}

static double nvx_bench_ratio(const struct nvx_bench *b,
			      const struct nvx_bench_size *sz,
			      enum nvx_bench_method m)
{
	if (b->skip[m] || !sz->median_ns[NVX_BM_NVX])
		return NAN;
	return (double)sz->median_ns[m] / (double)sz->median_ns[NVX_BM_NVX];
}

/* The map-only median of @m over nvx's (grant + populated mmap). */
static double nvx_bench_map_ratio(const struct nvx_bench *b,
				  const struct nvx_bench_size *sz,
				  enum nvx_bench_method m)
{
	if (b->skip[m] || !nvx_bench_maps(m) || !sz->map_median_ns[NVX_BM_NVX])
		return NAN;
	return (double)sz->map_median_ns[m] /
	       (double)sz->map_median_ns[NVX_BM_NVX];
}

static void nvx_bench_print_json(struct nvx_bench *b)
{
	const struct nvx_bench_size *big = &b->sizes[b->nr_sizes - 1];
	struct nvx_json *j = &b->ctx->js;
	unsigned int i, m;

	nvx_json_object_begin(j, NULL);
	nvx_json_u64(j, "node", b->node);
	nvx_json_u64(j, "runs", b->runs);
	nvx_json_str(j, "thp", b->thp[0] ? b->thp : NULL);
	nvx_json_array_begin(j, "sizes");
	for (i = 0; i < b->nr_sizes; i++) {
		const struct nvx_bench_size *sz = &b->sizes[i];

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "bytes", sz->bytes);
		nvx_json_object_begin(j, "methods");
		for (m = 0; m < NVX_BM_COUNT; m++) {
			if (b->skip[m]) {
				nvx_json_null(j, nvx_bm_names[m]);
				continue;
			}
			nvx_json_object_begin(j, nvx_bm_names[m]);
			nvx_json_u64(j, "median_ns", sz->median_ns[m]);
			nvx_json_u64(j, "min_ns", sz->min_ns[m]);
			nvx_json_double(j, "ratio", nvx_bench_ratio(b, sz, m));
			nvx_json_end(j);
		}
		nvx_json_end(j);
		nvx_json_object_begin(j, "map_only");
		for (m = 0; m < NVX_BM_COUNT; m++) {
			if (b->skip[m] || !nvx_bench_maps(m)) {
				nvx_json_null(j, nvx_bm_names[m]);
				continue;
			}
			nvx_json_object_begin(j, nvx_bm_names[m]);
			nvx_json_u64(j, "median_ns", sz->map_median_ns[m]);
			nvx_json_u64(j, "min_ns", sz->map_min_ns[m]);
			nvx_json_double(j, "ratio",
					nvx_bench_map_ratio(b, sz, m));
			nvx_json_end(j);
		}
		nvx_json_end(j);
		nvx_json_u64(j, "nvx_setup_ns", sz->setup_ns);
		nvx_json_u64(j, "nvx_read_per_gib_ns", sz->around_ns);
		nvx_json_u64(j, "nvx_writes_ns", sz->writes_ns);
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_object_begin(j, "skipped");
	for (m = 0; m < NVX_BM_COUNT; m++)
		if (b->skip[m])
			nvx_json_str(j, nvx_bm_names[m], b->skip[m]);
	nvx_json_end(j);
	nvx_bench_scrub_json(b, big->bytes);
	nvx_bench_small_json(b);
	nvx_bench_clone_json(b);
	nvx_json_double(j, "touch_ratio",
			nvx_bench_ratio(b, big, NVX_BM_MAP_POPULATE));
	nvx_json_double(j, "headline",
			nvx_bench_map_ratio(b, big, NVX_BM_MAP_POPULATE));
	nvx_json_end(j);
}

/* One table: per size and method, median, fastest and ratio to nvx. */
static void nvx_bench_print_table(const struct nvx_bench *b, bool map_only)
{
	char h[NVX_FMT_BYTES_LEN];
	unsigned int i, m;

	printf("%-9s %-20s %12s %12s %10s\n", "size", "method", "median ms",
	       "min ms", "vs nvx");
	for (i = 0; i < b->nr_sizes; i++) {
		const struct nvx_bench_size *sz = &b->sizes[i];

		nvx_fmt_bytes(h, sizeof(h), sz->bytes);
		for (m = 0; m < NVX_BM_COUNT; m++) {
			if (map_only && !nvx_bench_maps(m))
				continue;
			if (b->skip[m]) {
				printf("%-9s %-20s skipped: %s\n", h,
				       nvx_bm_names[m], b->skip[m]);
				continue;
			}
			printf("%-9s %-20s %12.3f %12.3f %10.2f\n", h,
			       nvx_bm_names[m],
			       (double)(map_only ? sz->map_median_ns[m] :
					sz->median_ns[m]) / NVX_NSEC_PER_MSEC,
			       (double)(map_only ? sz->map_min_ns[m] :
					sz->min_ns[m]) / NVX_NSEC_PER_MSEC,
			       map_only ? nvx_bench_map_ratio(b, sz, m) :
					  nvx_bench_ratio(b, sz, m));
		}
	}
}

static void nvx_bench_print_text(struct nvx_bench *b)
{
	const struct nvx_bench_size *big = &b->sizes[b->nr_sizes - 1];
	char h[NVX_FMT_BYTES_LEN];
	unsigned int i;

	printf("%s\n",
	       "bench grant: obtain SIZE of zeroed memory, mapped: page tables filled, nothing written");
	printf("node %u, %u run%s per method; median and fastest run\n\n",
	       b->node, b->runs, b->runs == 1 ? "" : "s");
	nvx_bench_print_table(b, true);
	printf("(nvx: a grant mapped with MAP_POPULATE, or mapped and read once per GiB\n"
	       "(PMD fault-around; all of it checked PMD-mapped), whichever is faster;\n"
	       "%s)\n", "first_touch installs nothing until written");

	printf("\n%s\n",
	       "the same with one byte written in every 4 KiB page");
	nvx_bench_print_table(b, false);
	printf("\nnvx, split: a grant mapped with MAP_POPULATE, then the writes (medians),\n"
	       "and a grant mapped and read once per GiB instead of MAP_POPULATE;\n"
	       "the writes, one byte per 4 KiB page, are what every method pays once its\n"
	       "memory is mapped\n");
	for (i = 0; i < b->nr_sizes; i++) {
		const struct nvx_bench_size *sz = &b->sizes[i];

		printf("%-9s grant+mmap %.3f ms, writes %.3f ms; read per GiB %.3f ms\n",
		       nvx_fmt_bytes(h, sizeof(h), sz->bytes),
		       (double)sz->setup_ns / NVX_NSEC_PER_MSEC,
		       (double)sz->writes_ns / NVX_NSEC_PER_MSEC,
		       (double)sz->around_ns / NVX_NSEC_PER_MSEC);
	}
	if (b->nofit[0])
		printf("\nnot measured: %s\n", b->nofit);

	nvx_fmt_bytes(h, sizeof(h), big->bytes);
	nvx_bench_scrub_text(b, big->bytes);
	nvx_bench_small_text(b);
	nvx_bench_clone_text(b);
	printf("\nheadline: at %s, mapping only, map_populate takes %.2f times as long as nvx\n",
	       h, nvx_bench_map_ratio(b, big, NVX_BM_MAP_POPULATE));
	printf("touch_ratio: at %s, with the writes, %.2f times\n", h,
	       nvx_bench_ratio(b, big, NVX_BM_MAP_POPULATE));
	if (b->thp[0])
		printf("transparent hugepages: %s (this affects the methods without nvx)\n",
		       b->thp);
	printf("%s\n",
	       "note: times are from this machine; under QEMU TCG they are not hardware times: compare the ratios");
}

enum {
	NVX_OPT_SIZE = 256,
	NVX_OPT_RUNS,
};

static const struct option nvx_bench_grant_opts[] = {
	{ "size", required_argument, NULL, NVX_OPT_SIZE },
	{ "runs", required_argument, NULL, NVX_OPT_RUNS },
	{ }
};

/* What nvx-bench grant's options set. */
struct nvx_bench_grant_args {
	uint64_t *size;
	bool *size_given;
	unsigned int *runs;
};

/* nvx_getopt()'s handler: @arg is a struct nvx_bench_grant_args. */
static int nvx_bench_grant_opt(struct nvx_ctx *ctx, int c, void *arg)
{
	struct nvx_bench_grant_args *a = arg;
	unsigned long long n;
	int ret;

	switch (c) {
	case NVX_OPT_SIZE:
		ret = nvx_parse_size(optarg, a->size);
		if (ret == -ERANGE)
			return nvx_usage_error(ctx, "--size '%s' is too large",
					       optarg);
		if (ret)
			return nvx_usage_error(ctx,
					       "--size: '%s' is not a size (e.g. 512M, 4G)",
					       optarg);
		if (!*a->size)
			return nvx_usage_error(ctx, "--size must be more than 0");
		*a->size_given = true;
		return NVX_EXIT_OK;
	case NVX_OPT_RUNS:
		ret = nvx_opt_num(ctx, "runs", optarg, 1, NVX_BENCH_MAX_RUNS,
				  &n);
		if (!ret)
			*a->runs = n;
		return ret;
	}
	return NVX_OPT_UNKNOWN;
}

static int nvx_bench_grant_parse(struct nvx_ctx *ctx, int argc, char **argv,
				 uint64_t *size, bool *size_given,
				 unsigned int *runs)
{
	struct nvx_bench_grant_args a = { size, size_given, runs };

	return nvx_getopt(ctx, argc, argv, nvx_bench_grant_opts,
			  nvx_bench_grant_opt, &a);
}

/**
 * cmd_bench_grant() - nvx-bench grant
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_grant(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_bench b = {
		.ctx = ctx,
		.runs = NVX_BENCH_RUNS,
		.gup_fd = -1,
	};
	struct nvx_stop_old old;
	char h[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	uint64_t size = NVX_BENCH_SIZE, added;
	struct nvx_pool_stats s;
	int ret, err, cleanup_ret = NVX_EXIT_OK;
	bool size_given = false;

	ret = nvx_bench_grant_parse(ctx, argc, argv, &size, &size_given,
				    &b.runs);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;

	err = -nvx_pool_stats_get(ctx->fd, NVX_NODE_ANY, &s);
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	b.piece_bytes = s.piece_bytes ? s.piece_bytes :
			1ULL << NVX_POOL_PIECE_SHIFT;
	/* every method gets the same size: whole chunks */
	if (size > UINT64_MAX - b.piece_bytes)
		return nvx_usage_error(ctx, "--size is too large");
	size = nvx_round_up(size, b.piece_bytes);
	if (size != (size_t)size)
		return nvx_usage_error(ctx, "--size is too large");

	ret = nvx_bench_pick_node(&b, s.nr_nodes, size);
	if (ret)
		return ret;
	b.samples = calloc((size_t)(2 * NVX_BM_COUNT + 3) * b.runs,
			   sizeof(*b.samples));
	if (!b.samples) {
		nvx_err("%s: out of memory", ctx->path);
		return NVX_EXIT_FAIL;
	}
	nvx_bench_probe(&b);

	/* stop at the next step on SIGINT or SIGTERM, and clean up */
	nvx_stop_catch(&old, SA_RESTART);

	ret = nvx_bench_body(&b, size, size_given);

	/* give back what the bench added to the pool, on every path */
	added = b.added;
	err = -nvx_bench_give_back(&b, b.added);
	if (b.added) {
		nvx_err("%s: could not give back %s of the %s the bench added to the pool on node %u (%s); see nvxtool pool shrink",
			ctx->path, nvx_fmt_bytes(h, sizeof(h), b.added),
			nvx_fmt_bytes(h2, sizeof(h2), added), b.node,
			err ? nvx_pool_strerror(NVX_IOC_POOL_SHRINK, err) :
			"it shrank by less than asked");
		cleanup_ret = NVX_EXIT_FAIL;
	}
	if (b.gup_fd >= 0)
		close(b.gup_fd);
	free(b.samples);
	b.samples = NULL;

	if (nvx_stop_end(ctx, &old))
		return NVX_EXIT_FAIL;
	if (ret)
		return ret;
	if (ctx->json)
		nvx_bench_print_json(&b);
	else
		nvx_bench_print_text(&b);
	return cleanup_ret;
}

const char nvx_bench_grant_usage[] =
	"[--size SIZE] [--runs N]\n"
	"\n"
	"Time how long it takes to obtain SIZE of zeroed memory, mapped\n"
	"(every page-table entry installed, nothing written: the headline),\n"
	"and the same with one byte written in every 4 KiB page (touch),\n"
	"five ways (mapping only: nvx with MAP_POPULATE or mapped and read\n"
	"once per GiB, whichever is faster, all of it checked PMD-mapped;\n"
	"no first_touch):\n"
	"\n"
	"  nvx                  a grant from a clean pool (NVX_IOC_GRANT),\n"
	"                       mmap MAP_SHARED, touch\n"
	"  map_populate         anonymous mmap with MAP_POPULATE, touch\n"
	"  madv_populate_write  anonymous mmap, MADV_POPULATE_WRITE, touch\n"
	"  first_touch          anonymous mmap, touch\n"
	"  pin_longterm         anonymous mmap, a FOLL_LONGTERM pin and\n"
	"                       unpin through " NVX_GUP_TEST_PATH "\n"
	"                       (CONFIG_GUP_TEST; skipped without), touch\n"
	"\n"
	"Each method runs N times per size (median and fastest shown, and\n"
	"the ratio of its median to nvx's); before every run the bench\n"
	"waits until the scrubber has cleaned the pool. Without --size, it\n"
	"measures 1G, 4G if it fits and the largest of 8G, 16G and 32G\n"
	"that fits. Then it times how long a released grant of the largest\n"
	"size takes to be clean again, the scrubber's rate with both\n"
	"zeroing methods (zero_nontemporal), and userspace memset() and\n"
	"non-temporal stores over up to 256 MiB, the fastest of 3, and\n"
	"small grants: create (NVX_GRANT_BLOCKS) + mmap MAP_POPULATE +\n"
	"munmap + close cycles per second at 64K and 256K against an\n"
	"anonymous mmap MAP_POPULATE + munmap (median of up to 16 runs\n"
	"of 200 cycles), and a clone of a 64 MiB template\n"
	"(NVX_GRANT_IOC_CLONE) created, mapped and read all through\n"
	"against the template copied into anonymous memory (medians).\n"
	"Each run also times nvx split in two: the grant\n"
	"mapped with MAP_POPULATE (its PMDs in place), then the writes\n"
	"alone, which every method pays once its memory is mapped.\n"
	"The pool grows for the bench in chunks of up to 1 GiB.\n"
	"\n"
	"A size fits when the pool can be grown to hold it on the node\n"
	"(the bench grows the pool by what is missing, which needs\n"
	"CAP_SYS_ADMIN, and gives it back at the end) and the system has\n"
	"as much memory available besides, for the other methods.\n"
	"\n"
	"  --size SIZE  measure only SIZE (rounded up to whole chunks)\n"
	"  --runs N     runs per method and size (default 5)\n"
	"\n"
	"Times are from this machine; under QEMU TCG they are not hardware\n"
	"times: compare the ratios. JSON: \"sizes\" (\"bytes\", \"methods\":\n"
	"per method \"median_ns\", \"min_ns\", \"ratio\", or null when\n"
	"skipped, with the writes; \"map_only\": the same without;\n"
	"\"nvx_setup_ns\", \"nvx_writes_ns\": the split),\n"
	"\"skipped\" (why), \"scrub\" (\"bytes\",\n"
	"\"clean_again_ns\", \"mib_per_s\", \"scrubbed_bytes\", \"scrub_ns\",\n"
	"\"scrubber_mib_per_s\", \"rate_limit_mbps\", \"method\",\n"
	"\"other_method\", \"other_method_mib_per_s\", \"user_bytes\",\n"
	"\"user_memset_mib_per_s\", \"user_nontemporal_mib_per_s\",\n"
	"\"scrubber_vs_fastest_user\"), \"small\" (per size \"bytes\",\n"
	"\"nvx_per_s\", \"map_populate_per_s\", \"ratio\"), \"clone\"\n"
	"(\"bytes\", \"create_ns\", \"create_map_read_ns\", \"copy_ns\",\n"
	"\"ratio\": copy / clone), \"touch_ratio\" (map_populate / nvx\n"
	"with the writes at the largest size) and \"headline\" (map_populate\n"
	"/ nvx mapping only, at the largest size).\n";
