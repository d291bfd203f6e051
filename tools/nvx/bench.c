// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: benchmarks, one subcommand of "bench" each.
 *
 * nvx_bench_cmds[] at the bottom lists them; a new benchmark adds its
 * handler, its usage and one entry there.
 *
 * bench grant times how long it takes to obtain SIZE of zeroed memory,
 * mapped, with one byte written in every 4 KiB page: through a grant from
 * the nvx pool, and through the ways the kernel offers without nvx.
 *
 * bench uintr times user interrupts against POSIX signals and eventfd:
 * the latency of waking a thread on another CPU, and the CPU that a
 * periodic timer interruption costs a compute loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/types.h>
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

#include <nvx/pool.h>
#include <nvx/uintr.h>

#include "nvxtool.h"

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

#define NVX_NSEC_PER_SEC	1000000000ULL
#define NVX_NSEC_PER_MSEC	1000000ULL
#define NVX_MIB			(1024ULL * 1024)
#define NVX_GIB			(1024 * NVX_MIB)

#define NVX_THP_PATH		"/sys/kernel/mm/transparent_hugepage/enabled"
#define NVX_PARAM_PATH		"/sys/module/nvx/parameters/"

/* ---------------------------------------------------------- bench grant */

enum nvx_bench_method {
	NVX_BM_NVX,
	NVX_BM_MAP_POPULATE,
	NVX_BM_MADV_POPULATE_WRITE,
	NVX_BM_FIRST_TOUCH,
	NVX_BM_PIN_LONGTERM,
	NVX_BM_COUNT,
};

static const char * const nvx_bm_names[NVX_BM_COUNT] = {
	[NVX_BM_NVX]			= "nvx",
	[NVX_BM_MAP_POPULATE]		= "map_populate",
	[NVX_BM_MADV_POPULATE_WRITE]	= "madv_populate_write",
	[NVX_BM_FIRST_TOUCH]		= "first_touch",
	[NVX_BM_PIN_LONGTERM]		= "pin_longterm",
};

#define NVX_BENCH_RUNS		5	/* default runs per method and size */
#define NVX_BENCH_MAX_RUNS	10000
#define NVX_BENCH_SIZE		NVX_GIB	/* the size always measured */
/* waiting for the scrubber: give up after this long without progress */
#define NVX_BENCH_CLEAN_TIMEOUT	(60 * NVX_NSEC_PER_SEC)
#define NVX_BENCH_POLL		(10 * NVX_NSEC_PER_MSEC)
#define NVX_BENCH_SCRUB_POLL	NVX_NSEC_PER_MSEC

/* Without --size: the largest of these that fits is measured beside 1G. */
static const uint64_t nvx_bench_sizes[] = {
	NVX_GIB, 2 * NVX_GIB, 4 * NVX_GIB, 8 * NVX_GIB,
};

/**
 * struct nvx_bench_size - the results for one size
 * @bytes: the size.
 * @median_ns: per method, the median of the runs.
 * @min_ns: per method, the fastest run.
 * @setup_ns: median time of an nvx grant mapped with MAP_POPULATE (the
 *	grant, the mmap and one PMD per 2 MiB), without the writes.
 * @writes_ns: median time of the writes alone, one byte in every 4 KiB
 *	page of that populated mapping: what every method pays once its
 *	memory is mapped.
 */
struct nvx_bench_size {
	uint64_t bytes;
	uint64_t median_ns[NVX_BM_COUNT];
	uint64_t min_ns[NVX_BM_COUNT];
	uint64_t setup_ns;
	uint64_t writes_ns;
};

/**
 * struct nvx_bench - one run of bench grant
 * @ctx: the command's context; the device is open.
 * @node: the NUMA node the grants come from, and the pool grows on.
 * @runs: runs per method and size.
 * @chunk_bytes: the pool's chunk size.
 * @added: bytes the bench has added to the pool on @node so far, to be
 *	given back at the end.
 * @gup_fd: /sys/kernel/debug/gup_test, or -1.
 * @skip: per method, why it is not measured, or NULL.
 * @samples: @runs times per method, NVX_BM_COUNT * @runs, then @runs
 *	setup times and @runs write times (see struct nvx_bench_size).
 * @sizes: the sizes measured, the largest last.
 * @nr_sizes: number of @sizes.
 * @nofit: why no larger size is measured, or "".
 * @clean_again_ns: time from releasing a grant of the largest size until
 *	the pool held no dirty memory again.
 * @scrubbed_bytes: growth of the pool's scrubbed_bytes meanwhile.
 * @scrub_ns: growth of the pool's scrub_ns meanwhile.
 * @gup_why: room for @skip[NVX_BM_PIN_LONGTERM].
 * @thp: the transparent hugepage mode ("always", "madvise", "never"),
 *	or "".
 * @scrub_rate: the scrub_rate_mbps module parameter (0: no limit).
 */
struct nvx_bench {
	struct nvx_ctx *ctx;
	uint32_t node;
	unsigned int runs;
	uint64_t chunk_bytes;
	uint64_t added;
	int gup_fd;
	const char *skip[NVX_BM_COUNT];
	uint64_t *samples;
	struct nvx_bench_size sizes[2];
	unsigned int nr_sizes;
	char nofit[256];
	uint64_t clean_again_ns;
	uint64_t scrubbed_bytes;
	uint64_t scrub_ns;
	char gup_why[160];
	char thp[16];
	uint64_t scrub_rate;
};

static atomic_int nvx_bench_signal;

static void nvx_bench_handler(int sig)
{
	atomic_store(&nvx_bench_signal, sig);
}

static bool nvx_bench_stopped(void)
{
	return atomic_load(&nvx_bench_signal);
}

static uint64_t nvx_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static double nvx_mib_per_s(uint64_t bytes, uint64_t ns)
{
	if (!ns)
		return NAN;
	return ((double)bytes / NVX_MIB) / ((double)ns / NVX_NSEC_PER_SEC);
}

/* The first line of a small text file, without its newline. */
static bool nvx_read_line(const char *path, char *buf, size_t size)
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

/* The NUMA node of the CPU this runs on; 0 when the kernel won't say. */
static uint32_t nvx_cpu_node(void)
{
	unsigned int cpu, node;

	if (syscall(SYS_getcpu, &cpu, &node, NULL))
		return 0;
	return node;
}

/* Memory in the pool on @node not granted: clean or soon clean. */
static int nvx_bench_pool_free(struct nvx_bench *b, uint32_t node,
			       uint64_t *free_bytes)
{
	struct nvx_pool_stats s;
	int ret;

	ret = nvx_pool_stats_get(b->ctx, node, &s);
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
	err = nvx_pool_resize(b->ctx, false, b->node, bytes, 0, &done);
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
		err = -nvx_pool_resize(b->ctx, true, b->node, bytes - avail,
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

/*
 * Wait until the pool holds no dirty memory (the scrubber is idle),
 * polling every @poll_ns; give up after NVX_BENCH_CLEAN_TIMEOUT in which
 * the dirty memory did not shrink. *@at_ns, if given, is when it was seen
 * clean.
 */
static int nvx_bench_wait_clean(struct nvx_bench *b, uint64_t poll_ns,
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
		err = -nvx_pool_stats_get(b->ctx, NVX_NODE_ANY, &s);
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
		if (nvx_bench_stopped())
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
}

/*
 * nvx: a grant from the (clean) pool, mapped shared, touched. With
 * @split, the mapping is populated by mmap (MAP_POPULATE) and @split[0]
 * gets the time until then, @split[1] the time of the writes.
 */
static int nvx_bench_run_nvx(struct nvx_bench *b, uint64_t bytes,
			     uint64_t *ns, uint64_t *split)
{
	int flags = MAP_SHARED | (split ? MAP_POPULATE : 0);
	char h[NVX_FMT_BYTES_LEN];
	uint64_t t0, tm, t1;
	int err, fd;
	void *p;

	t0 = nvx_now_ns();
	err = -nvx_grant_new(b->ctx, b->node, bytes, NVX_GRANT_CLOEXEC, &fd);
	if (err) {
		nvx_err("%s: nvx: a grant of %s on node %u: %s", b->ctx->path,
			nvx_fmt_bytes(h, sizeof(h), bytes), b->node,
			nvx_pool_strerror(NVX_IOC_GRANT, err));
		return NVX_EXIT_FAIL;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED) {
		nvx_err("%s: nvx: mmap of a grant of %s: %s", b->ctx->path,
			nvx_fmt_bytes(h, sizeof(h), bytes), strerror(errno));
		close(fd);
		return NVX_EXIT_FAIL;
	}
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

/* The methods without nvx: anonymous memory, populated one way or another. */
static int nvx_bench_run_anon(struct nvx_bench *b, enum nvx_bench_method m,
			      uint64_t bytes, uint64_t *ns)
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
	nvx_touch_pages(p, bytes, false);
	t1 = nvx_now_ns();

	munmap(p, bytes);
	*ns = t1 - t0;
	return NVX_EXIT_OK;
}

static int nvx_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v and return the median of its @n values. */
static uint64_t nvx_median(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), nvx_u64_cmp);
	if (n % 2)
		return v[n / 2];
	return v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] & v[n / 2] & 1);
}

/* b->runs runs of every method at one size, interleaved. */
static int nvx_bench_measure(struct nvx_bench *b, struct nvx_bench_size *sz)
{
	uint64_t *setup = &b->samples[NVX_BM_COUNT * b->runs];
	uint64_t *writes = setup + b->runs;
	uint64_t split[2], total;
	char h[NVX_FMT_BYTES_LEN];
	unsigned int run, m;
	uint64_t *v;
	int ret;

	if (isatty(STDERR_FILENO))
		fprintf(stderr, "nvxtool: %s: measuring %s, %u runs...\n",
			b->ctx->path, nvx_fmt_bytes(h, sizeof(h), sz->bytes),
			b->runs);
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
				ret = nvx_bench_run_anon(b, m, sz->bytes, v);
			if (ret)
				return ret;
			if (nvx_bench_stopped())
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
	}
	sz->setup_ns = nvx_median(setup, b->runs);
	sz->writes_ns = nvx_median(writes, b->runs);

	for (m = 0; m < NVX_BM_COUNT; m++) {
		if (b->skip[m])
			continue;
		v = &b->samples[m * b->runs];
		sz->median_ns[m] = nvx_median(v, b->runs);
		sz->min_ns[m] = v[0];
	}
	return NVX_EXIT_OK;
}

/*
 * How fast the scrubber makes a released grant of @bytes clean again:
 * from the release until the pool holds no dirty memory, and by the
 * pool's own counters.
 */
static int nvx_bench_scrub(struct nvx_bench *b, uint64_t bytes)
{
	struct nvx_pool_stats s0, s1;
	char h[NVX_FMT_BYTES_LEN];
	uint64_t t0, t1;
	int ret, err, fd;
	void *p;

	ret = nvx_bench_wait_clean(b, NVX_BENCH_POLL, NULL);
	if (ret)
		return ret;
	err = -nvx_grant_new(b->ctx, b->node, bytes, NVX_GRANT_CLOEXEC, &fd);
	if (err) {
		nvx_err("%s: scrub: a grant of %s on node %u: %s",
			b->ctx->path, nvx_fmt_bytes(h, sizeof(h), bytes),
			b->node, nvx_pool_strerror(NVX_IOC_GRANT, err));
		return NVX_EXIT_FAIL;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		nvx_touch_pages(p, bytes, false);
		munmap(p, bytes);
	}
	err = -nvx_pool_stats_get(b->ctx, NVX_NODE_ANY, &s0);
	t0 = nvx_now_ns();
	close(fd);	/* the last reference: the grant returns as dirty */
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	ret = nvx_bench_wait_clean(b, NVX_BENCH_SCRUB_POLL, &t1);
	if (ret)
		return ret;
	err = -nvx_pool_stats_get(b->ctx, NVX_NODE_ANY, &s1);
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	b->clean_again_ns = t1 - t0;
	b->scrubbed_bytes = s1.scrubbed_bytes - s0.scrubbed_bytes;
	b->scrub_ns = s1.scrub_ns - s0.scrub_ns;
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
		if (nvx_bench_stopped())
			return NVX_EXIT_FAIL;
		ret = nvx_bench_make_room(b, c, why, sizeof(why));
		if (ret == 1) {
			snprintf(b->nofit, sizeof(b->nofit), "%s: %s",
				 nvx_fmt_bytes(h, sizeof(h), c), why);
			break;
		}
		if (ret)
			return ret;
		b->sizes[1].bytes = c;
		b->nr_sizes = 2;
	}

	for (i = 0; i < b->nr_sizes; i++) {
		ret = nvx_bench_measure(b, &b->sizes[i]);
		if (ret)
			return ret;
	}
	return nvx_bench_scrub(b, b->sizes[b->nr_sizes - 1].bytes);
}

static double nvx_bench_ratio(const struct nvx_bench *b,
			      const struct nvx_bench_size *sz,
			      enum nvx_bench_method m)
{
	if (b->skip[m] || !sz->median_ns[NVX_BM_NVX])
		return NAN;
	return (double)sz->median_ns[m] / (double)sz->median_ns[NVX_BM_NVX];
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
		nvx_json_u64(j, "nvx_setup_ns", sz->setup_ns);
		nvx_json_u64(j, "nvx_writes_ns", sz->writes_ns);
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_object_begin(j, "skipped");
	for (m = 0; m < NVX_BM_COUNT; m++)
		if (b->skip[m])
			nvx_json_str(j, nvx_bm_names[m], b->skip[m]);
	nvx_json_end(j);
	nvx_json_object_begin(j, "scrub");
	nvx_json_u64(j, "bytes", big->bytes);
	nvx_json_u64(j, "clean_again_ns", b->clean_again_ns);
	nvx_json_double(j, "mib_per_s",
			nvx_mib_per_s(big->bytes, b->clean_again_ns));
	nvx_json_u64(j, "scrubbed_bytes", b->scrubbed_bytes);
	nvx_json_u64(j, "scrub_ns", b->scrub_ns);
	nvx_json_double(j, "scrubber_mib_per_s",
			nvx_mib_per_s(b->scrubbed_bytes, b->scrub_ns));
	if (b->scrub_rate)
		nvx_json_u64(j, "rate_limit_mbps", b->scrub_rate);
	else
		nvx_json_null(j, "rate_limit_mbps");
	nvx_json_end(j);
	nvx_json_double(j, "headline",
			nvx_bench_ratio(b, big, NVX_BM_MAP_POPULATE));
	nvx_json_end(j);
}

static void nvx_bench_print_text(struct nvx_bench *b)
{
	const struct nvx_bench_size *big = &b->sizes[b->nr_sizes - 1];
	char h[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	unsigned int i, m;

	printf("%s\n",
	       "bench grant: obtain SIZE of zeroed memory, mapped, with one byte written in every 4 KiB page");
	printf("node %u, %u run%s per method; median and fastest run\n\n",
	       b->node, b->runs, b->runs == 1 ? "" : "s");
	printf("%-9s %-20s %12s %12s %8s\n", "size", "method", "median ms",
	       "min ms", "vs nvx");
	for (i = 0; i < b->nr_sizes; i++) {
		const struct nvx_bench_size *sz = &b->sizes[i];

		nvx_fmt_bytes(h, sizeof(h), sz->bytes);
		for (m = 0; m < NVX_BM_COUNT; m++) {
			if (b->skip[m]) {
				printf("%-9s %-20s skipped: %s\n", h,
				       nvx_bm_names[m], b->skip[m]);
				continue;
			}
			printf("%-9s %-20s %12.3f %12.3f %8.2f\n", h,
			       nvx_bm_names[m],
			       (double)sz->median_ns[m] / NVX_NSEC_PER_MSEC,
			       (double)sz->min_ns[m] / NVX_NSEC_PER_MSEC,
			       nvx_bench_ratio(b, sz, m));
		}
	}
	printf("\nnvx, split: a grant mapped with MAP_POPULATE, then the writes (medians);\n"
	       "the writes, one byte per 4 KiB page, are what every method pays once its\n"
	       "memory is mapped\n");
	for (i = 0; i < b->nr_sizes; i++) {
		const struct nvx_bench_size *sz = &b->sizes[i];

		printf("%-9s grant+mmap %.3f ms, writes %.3f ms\n",
		       nvx_fmt_bytes(h, sizeof(h), sz->bytes),
		       (double)sz->setup_ns / NVX_NSEC_PER_MSEC,
		       (double)sz->writes_ns / NVX_NSEC_PER_MSEC);
	}
	if (b->nofit[0])
		printf("\nnot measured: %s\n", b->nofit);

	nvx_fmt_bytes(h, sizeof(h), big->bytes);
	printf("\nscrub: a released grant of %s was clean again after %.3f ms (%.1f MiB/s)\n",
	       h, (double)b->clean_again_ns / NVX_NSEC_PER_MSEC,
	       nvx_mib_per_s(big->bytes, b->clean_again_ns));
	printf("scrubber: zeroed %s in %.3f ms of its own time (%.1f MiB/s; %s)\n",
	       nvx_fmt_bytes(h2, sizeof(h2), b->scrubbed_bytes),
	       (double)b->scrub_ns / NVX_NSEC_PER_MSEC,
	       nvx_mib_per_s(b->scrubbed_bytes, b->scrub_ns),
	       "scrubbed_bytes / scrub_ns");
	if (b->scrub_rate)
		printf("scrubber rate limit: %llu MiB/s (scrub_rate_mbps)\n",
		       (unsigned long long)b->scrub_rate);
	printf("\nheadline: at %s, map_populate takes %.2f times as long as nvx\n",
	       h, nvx_bench_ratio(b, big, NVX_BM_MAP_POPULATE));
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

static int nvx_bench_grant_parse(struct nvx_ctx *ctx, int argc, char **argv,
				 uint64_t *size, bool *size_given,
				 unsigned int *runs)
{
	unsigned long long n;
	int c, ret;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", nvx_bench_grant_opts,
				NULL)) != -1) {
		switch (c) {
		case NVX_OPT_SIZE:
			ret = nvx_parse_size(optarg, size);
			if (ret == -ERANGE)
				return nvx_usage_error(ctx, "--size '%s' is too large",
						       optarg);
			if (ret)
				return nvx_usage_error(ctx,
						       "--size: '%s' is not a size (e.g. 512M, 4G)",
						       optarg);
			if (!*size)
				return nvx_usage_error(ctx, "--size must be more than 0");
			*size_given = true;
			break;
		case NVX_OPT_RUNS:
			ret = nvx_parse_uint(optarg, NVX_BENCH_MAX_RUNS, &n);
			if (ret || !n)
				return nvx_usage_error(ctx,
						       "--runs: '%s' is not a number from 1 to %u",
						       optarg, NVX_BENCH_MAX_RUNS);
			*runs = n;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind]);
	return NVX_EXIT_OK;
}

static int cmd_bench_grant(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_bench b = {
		.ctx = ctx,
		.runs = NVX_BENCH_RUNS,
		.gup_fd = -1,
	};
	struct sigaction sa = { .sa_handler = nvx_bench_handler };
	struct sigaction old_int, old_term;
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

	err = -nvx_pool_stats_get(ctx, NVX_NODE_ANY, &s);
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	b.chunk_bytes = s.chunk_bytes ? s.chunk_bytes :
			1ULL << NVX_POOL_CHUNK_SHIFT;
	/* every method gets the same size: whole chunks */
	if (size > UINT64_MAX - b.chunk_bytes)
		return nvx_usage_error(ctx, "--size is too large");
	size = nvx_round_up(size, b.chunk_bytes);
	if (size != (size_t)size)
		return nvx_usage_error(ctx, "--size is too large");

	ret = nvx_bench_pick_node(&b, s.nr_nodes, size);
	if (ret)
		return ret;
	b.samples = calloc((size_t)(NVX_BM_COUNT + 2) * b.runs,
			   sizeof(*b.samples));
	if (!b.samples) {
		nvx_err("%s: out of memory", ctx->path);
		return NVX_EXIT_FAIL;
	}
	nvx_bench_probe(&b);

	/* stop at the next step on SIGINT or SIGTERM, and clean up */
	atomic_store(&nvx_bench_signal, 0);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

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

	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (nvx_bench_stopped()) {
		nvx_err("%s: interrupted (%s)", ctx->path,
			strsignal(atomic_load(&nvx_bench_signal)));
		return NVX_EXIT_FAIL;
	}
	if (ret)
		return ret;
	if (ctx->json)
		nvx_bench_print_json(&b);
	else
		nvx_bench_print_text(&b);
	return cleanup_ret;
}

/* ---------------------------------------------------------- bench uintr */

/*
 * bench uintr: (a) how long a wake-up of a thread on the other CPU takes,
 * one way and there and back, with nvx user interrupts, POSIX signals and
 * an eventfd; (b) how much of a CPU a periodic interruption of a compute
 * loop costs, with the nvx timer and with a POSIX timer signal.
 */

enum nvx_ub_method {
	NVX_UM_NVX,
	NVX_UM_NVX_WAIT,
	NVX_UM_SIGNAL,
	NVX_UM_EVENTFD,
	NVX_UM_COUNT,
};

static const char * const nvx_um_names[NVX_UM_COUNT] = {
	[NVX_UM_NVX]		= "nvx",
	[NVX_UM_NVX_WAIT]	= "nvx_wait",
	[NVX_UM_SIGNAL]		= "signal",
	[NVX_UM_EVENTFD]	= "eventfd",
};

/* How the woken thread waits, in each method. */
static const char * const nvx_um_receiver[NVX_UM_COUNT] = {
	[NVX_UM_NVX]		= "running (spins in user mode)",
	[NVX_UM_NVX_WAIT]	= "blocked in NVX_IOC_UINTR_WAIT",
	[NVX_UM_SIGNAL]		= "running (spins in user mode)",
	[NVX_UM_EVENTFD]	= "blocked in read(2)",
};

enum {
	NVX_UB_ONE_WAY,
	NVX_UB_ROUND_TRIP,
	NVX_UB_MODES,
};

static const char * const nvx_ub_mode_names[NVX_UB_MODES] = {
	[NVX_UB_ONE_WAY]	= "one_way",
	[NVX_UB_ROUND_TRIP]	= "round_trip",
};

/* What interrupts the compute loop in (b). */
enum {
	NVX_UK_NVX,
	NVX_UK_SIGNAL,
	NVX_UK_COUNT,
	NVX_UK_NONE = NVX_UK_COUNT,	/* the baseline */
};

static const char * const nvx_uk_names[NVX_UK_COUNT] = {
	[NVX_UK_NVX]	= "nvx",
	[NVX_UK_SIGNAL]	= "signal",
};

#define NVX_NSEC_PER_USEC	1000ULL
#define NVX_UB_ITERS		1000	/* default wake-ups per method and way */
#define NVX_UB_MAX_ITERS	1000000
#define NVX_UB_WINDOW_MS	300	/* default measuring window of (b) */
#define NVX_UB_MAX_WINDOW_MS	60000
#define NVX_UB_ROUNDS		3	/* default rounds of (b) */
#define NVX_UB_MAX_ROUNDS	100
/* the longest a wake-up may take, also under emulation */
#define NVX_UB_TIMEOUT		(2 * NVX_NSEC_PER_SEC)
#define NVX_UB_READY_TIMEOUT	(10 * NVX_NSEC_PER_SEC)
/* the watchdog of (b) looks this often */
#define NVX_UB_WATCHDOG_POLL	(5 * NVX_NSEC_PER_MSEC)
/* and gives up this long after its deadline, when stopping did not help */
#define NVX_UB_GIVE_UP		(5 * NVX_NSEC_PER_SEC)
/* iterations of the compute loop between two clock reads */
#define NVX_UB_CHUNK		8192
/* an overhead below this (0.1 %) counts as none */
#define NVX_UB_MIN_OVERHEAD	0.001
#define NVX_UB_SIG_A		SIGUSR2	/* to thread A in (a) */
#define NVX_UB_SIG_B		SIGUSR1	/* to thread B in (a) */

/* The timer periods of (b), ns; the headline is at 20 us. */
static const uint64_t nvx_ub_periods[] = { 10000, 20000, 50000, 100000 };
#define NVX_UB_HEADLINE		1	/* 20 us in nvx_ub_periods[] */

#define NVX_UB_NR_PERIODS	NVX_ARRAY_SIZE(nvx_ub_periods)

#if defined(__GLIBC__) && !defined(sigev_notify_thread_id)
#define sigev_notify_thread_id	_sigev_un._tid
#endif

/**
 * struct nvx_ub_stat - the wake-ups of one method one way
 * @mean_ns: the mean.
 * @min_ns: the fastest.
 * @p50_ns: the median.
 * @p99_ns: the 99th percentile.
 * @max_ns: the slowest.
 */
struct nvx_ub_stat {
	double mean_ns;
	uint64_t min_ns;
	uint64_t p50_ns;
	uint64_t p99_ns;
	uint64_t max_ns;
};

/**
 * struct nvx_ub_load - the windows of (b) with one kind of interruption
 * @iters: iterations of the compute loop, summed over the windows.
 * @ns: the windows' length, summed.
 * @ticks: handler runs, summed.
 * @windows: windows measured.
 * @watchdog: windows in which the watchdog had to stop the timer.
 */
struct nvx_ub_load {
	uint64_t iters;
	uint64_t ns;
	uint64_t ticks;
	unsigned int windows;
	unsigned int watchdog;
};

/**
 * struct nvx_ub - one run of bench uintr
 * @ctx: the command's context; the device is open.
 * @iters: wake-ups measured per method and way in (a).
 * @window_ns: the length of one measuring window in (b).
 * @rounds: rounds of (b): every window once per period.
 * @cpu: the CPUs of thread A (the command's) and thread B.
 * @same_cpu: both are the same: the only CPU this process may use.
 * @samples: room for @iters wake-ups.
 * @lat: the results of (a), per method and way.
 * @base: the baseline windows of (b), without interruption.
 * @base_min: the slowest baseline window, iterations per second.
 * @base_max: the fastest.
 * @load: the results of (b), per period and kind of interruption.
 */
struct nvx_ub {
	struct nvx_ctx *ctx;
	unsigned int iters;
	uint64_t window_ns;
	unsigned int rounds;
	int cpu[2];
	bool same_cpu;
	uint64_t *samples;
	struct nvx_ub_stat lat[NVX_UM_COUNT][NVX_UB_MODES];
	struct nvx_ub_load base;
	double base_min;
	double base_max;
	struct nvx_ub_load load[NVX_UB_NR_PERIODS][NVX_UK_COUNT];
};

static pid_t nvx_gettid(void)
{
	return syscall(SYS_gettid);
}

static inline void nvx_cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" : : : "memory");
#endif
}

/*
 * Spin until *@v is no longer @old: true. False when *@quit (if given)
 * became nonzero, or after @timeout_ns (0: never). With @yield (both
 * threads on one CPU), yield the CPU instead of spinning on it.
 */
static bool nvx_ub_spin(const uint64_t *v, uint64_t old, const int *quit,
			uint64_t timeout_ns, bool yield)
{
	unsigned int n = 0;
	uint64_t end = 0;

	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) == old) {
		if (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE))
			return false;
		if (yield)
			sched_yield();
		else
			nvx_cpu_relax();
		if (!timeout_ns || ++n % 256)
			continue;
		if (!end)
			end = nvx_now_ns() + timeout_ns;
		else if (nvx_now_ns() > end)
			return false;
	}
	return true;
}

/* Wait until *@ready is set: 0, its negative value, or -ETIMEDOUT. */
static int nvx_ub_wait_ready(const int *ready)
{
	struct timespec ms = { 0, NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + NVX_UB_READY_TIMEOUT;
	int r;

	while (!(r = __atomic_load_n(ready, __ATOMIC_ACQUIRE))) {
		if (nvx_now_ns() > end)
			return -ETIMEDOUT;
		nanosleep(&ms, NULL);
	}
	return r < 0 ? r : 0;
}

/* ------------------------------------------------ (a) wake-up latency */

/**
 * struct nvx_ub_pair - the two threads of one method and way of (a)
 * @ub: the bench.
 * @m: the method.
 * @mode: NVX_UB_ONE_WAY or NVX_UB_ROUND_TRIP.
 * @fd: the nvx device.
 * @pid: the process.
 * @tid_a: thread A, which wakes B and measures.
 * @tid_b: thread B, which is woken and, for round trips, wakes A.
 * @ready: B: 1 when ready, -errno when it failed.
 * @b_req: B: the request that failed, for messages.
 * @b_err: B: -errno when it stopped on an error, else 0.
 * @quit: A: B must return.
 * @b_seen: B: wake-ups it saw.
 * @b_seen_ns: B: when it saw the last one (one way).
 * @sig_a: A's signal handler runs.
 * @sig_b: B's signal handler runs.
 * @rx_a: A's nvx handler.
 * @rx_b: B's nvx handler; for round trips it answers through @to_a.
 * @vec_a: A's vector fd, or -1.
 * @vec_b: B's vector fds (0 and NVX_UINTR_RX_STOP), or -1.
 * @to_a: the sender table entry of @vec_a.
 * @to_b: the sender table entries of @vec_b.
 * @have_to: which of @to_a, @to_b[0], @to_b[1] are in the table.
 * @efd_ab: the eventfd A writes and B reads, or -1.
 * @efd_ba: the eventfd B writes and A reads, or -1.
 */
struct nvx_ub_pair {
	struct nvx_ub *ub;
	enum nvx_ub_method m;
	int mode;
	int fd;
	pid_t pid;
	pid_t tid_a;
	pid_t tid_b;
	int ready;
	unsigned long b_req;
	int b_err;
	int quit;
	uint64_t b_seen;
	uint64_t b_seen_ns;
	uint64_t sig_a;
	uint64_t sig_b;
	struct nvx_uintr_rx rx_a;
	struct nvx_uintr_rx rx_b;
	int vec_a;
	int vec_b[2];
	uint32_t to_a;
	uint32_t to_b[2];
	bool have_to[3];
	int efd_ab;
	int efd_ba;
};

/* The pair running, for the signal handlers. */
static struct nvx_ub_pair *nvx_ub_cur;

static void nvx_ub_on_sig_a(int sig)
{
	__atomic_add_fetch(&nvx_ub_cur->sig_a, 1, __ATOMIC_SEQ_CST);
}

static void nvx_ub_on_sig_b(int sig)
{
	struct nvx_ub_pair *p = nvx_ub_cur;
	int saved = errno;

	__atomic_add_fetch(&p->sig_b, 1, __ATOMIC_SEQ_CST);
	if (p->mode == NVX_UB_ROUND_TRIP)
		syscall(SYS_tgkill, p->pid, p->tid_a, NVX_UB_SIG_A);
	errno = saved;
}

/* B: register and make the vectors, for the nvx methods. */
static int nvx_ub_b_setup(struct nvx_ub_pair *p)
{
	int err;

	err = nvx_uintr_rx_register(p->fd, &p->rx_b);
	if (err) {
		p->b_req = NVX_IOC_UINTR_REGISTER;
		return err;
	}
	err = nvx_uintr_vec_new(p->fd, 0, &p->vec_b[0]);
	if (!err)
		err = nvx_uintr_vec_new(p->fd, NVX_UINTR_RX_STOP,
					&p->vec_b[1]);
	if (err) {
		p->b_req = NVX_IOC_UINTR_VECTOR_FD;
		nvx_uintr_rx_unregister(p->fd);
	}
	return err;
}

/*
 * B: wait for the next wake-up. Return: 1 when it came, 0 when B must
 * return, or -errno.
 */
static int nvx_ub_b_wait(struct nvx_ub_pair *p, uint64_t *seen)
{
	bool yield = p->ub->same_cpu;
	uint64_t v, one = 1;
	int err;

	switch (p->m) {
	case NVX_UM_NVX:
		if (!nvx_ub_spin(&p->rx_b.hits, *seen, &p->quit, 0, yield))
			return 0;
		*seen = __atomic_load_n(&p->rx_b.hits, __ATOMIC_ACQUIRE);
		return 1;
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_rx_wait(p->fd, *seen + 1, &p->quit, UINT64_MAX);
		if (err)
			return err;
		if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE))
			return 0;
		*seen = __atomic_load_n(&p->rx_b.hits, __ATOMIC_ACQUIRE);
		return 1;
	case NVX_UM_SIGNAL:
		if (!nvx_ub_spin(&p->sig_b, *seen, &p->quit, 0, yield))
			return 0;
		*seen = __atomic_load_n(&p->sig_b, __ATOMIC_ACQUIRE);
		return 1;
	default:
		while (read(p->efd_ab, &v, sizeof(v)) != sizeof(v))
			if (errno != EINTR)
				return -errno;
		if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE))
			return 0;
		if (p->mode == NVX_UB_ROUND_TRIP &&
		    write(p->efd_ba, &one, sizeof(one)) != sizeof(one))
			return -errno;
		*seen += v;
		return 1;
	}
}

static void *nvx_ub_pair_b(void *arg)
{
	struct nvx_ub_pair *p = arg;
	uint64_t seen = 0;
	int ret = 0;

	nvx_pin_self(p->ub->cpu[1]);
	__atomic_store_n(&p->tid_b, nvx_gettid(), __ATOMIC_RELAXED);
	if (p->m == NVX_UM_NVX || p->m == NVX_UM_NVX_WAIT)
		ret = nvx_ub_b_setup(p);
	__atomic_store_n(&p->ready, ret ? ret : 1, __ATOMIC_RELEASE);
	if (ret)
		return NULL;

	while ((ret = nvx_ub_b_wait(p, &seen)) > 0) {
		__atomic_store_n(&p->b_seen_ns, nvx_now_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&p->b_seen, seen, __ATOMIC_RELEASE);
	}
	p->b_err = ret;
	if (p->m == NVX_UM_NVX || p->m == NVX_UM_NVX_WAIT)
		nvx_uintr_rx_unregister(p->fd);
	return NULL;
}

/* "bench uintr: nvx: NVX_IOC_UINTR_SEND: why"; NVX_EXIT_FAIL. */
static int nvx_ub_fail(struct nvx_ub_pair *p, const char *what,
		       unsigned long req, int err)
{
	const char *why = req ? nvx_uintr_strerror(req, err) : strerror(err);

	nvx_err("%s: %s: %s: %s", p->ub->ctx->path, nvx_um_names[p->m], what,
		why);
	return NVX_EXIT_FAIL;
}

/* A: wake B for the @i-th time (from 0) and time it into *@ns. */
static int nvx_ub_pair_once(struct nvx_ub_pair *p, uint64_t i, uint64_t *ns)
{
	bool yield = p->ub->same_cpu;
	uint64_t t0, t1, v, one = 1, got;
	int err = 0;

	t0 = nvx_now_ns();
	switch (p->m) {
	case NVX_UM_NVX:
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_post(p->fd, p->to_b[0]);
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_SEND",
					   NVX_IOC_UINTR_SEND, -err);
		break;
	case NVX_UM_SIGNAL:
		if (syscall(SYS_tgkill, p->pid, p->tid_b, NVX_UB_SIG_B))
			return nvx_ub_fail(p, "tgkill", 0, errno);
		break;
	default:
		if (write(p->efd_ab, &one, sizeof(one)) != sizeof(one))
			return nvx_ub_fail(p, "write", 0, errno);
		break;
	}

	if (p->mode == NVX_UB_ONE_WAY) {
		if (!nvx_ub_spin(&p->b_seen, i, NULL, NVX_UB_TIMEOUT, yield))
			goto timeout;
		got = __atomic_load_n(&p->b_seen, __ATOMIC_ACQUIRE);
		t1 = __atomic_load_n(&p->b_seen_ns, __ATOMIC_RELAXED);
		goto check;
	}

	switch (p->m) {
	case NVX_UM_NVX:
		if (!nvx_ub_spin(&p->rx_a.hits, i, NULL, NVX_UB_TIMEOUT, yield))
			goto timeout;
		got = __atomic_load_n(&p->rx_a.hits, __ATOMIC_ACQUIRE);
		break;
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_rx_wait(p->fd, i + 1, NULL, NVX_UB_TIMEOUT);
		if (err == -ETIMEDOUT)
			goto timeout;
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_WAIT",
					   NVX_IOC_UINTR_WAIT, -err);
		got = __atomic_load_n(&p->rx_a.hits, __ATOMIC_ACQUIRE);
		break;
	case NVX_UM_SIGNAL:
		if (!nvx_ub_spin(&p->sig_a, i, NULL, NVX_UB_TIMEOUT, yield))
			goto timeout;
		got = __atomic_load_n(&p->sig_a, __ATOMIC_ACQUIRE);
		break;
	default:
		while (read(p->efd_ba, &v, sizeof(v)) != sizeof(v))
			if (errno != EINTR)
				return nvx_ub_fail(p, "read", 0, errno);
		got = i + v;
		break;
	}
	t1 = nvx_now_ns();
check:
	if (got != i + 1) {
		nvx_err("%s: %s: wake-up %llu was seen %llu times",
			p->ub->ctx->path, nvx_um_names[p->m],
			(unsigned long long)i + 1,
			(unsigned long long)(got - i));
		return NVX_EXIT_FAIL;
	}
	/* B's clock is another CPU's: the same clock, but guard anyway */
	*ns = t1 > t0 ? t1 - t0 : 0;
	return NVX_EXIT_OK;

timeout:
	nvx_err("%s: %s %s: wake-up %llu not %s within %llu s",
		p->ub->ctx->path, nvx_um_names[p->m],
		nvx_ub_mode_names[p->mode], (unsigned long long)i + 1,
		p->mode == NVX_UB_ONE_WAY ? "seen" : "answered",
		NVX_UB_TIMEOUT / NVX_NSEC_PER_SEC);
	return NVX_EXIT_FAIL;
}

/* A: what the method needs before B starts. */
static int nvx_ub_pair_setup(struct nvx_ub_pair *p)
{
	struct sigaction sa = { .sa_flags = SA_RESTART };
	int err;

	switch (p->m) {
	case NVX_UM_NVX:
	case NVX_UM_NVX_WAIT:
		err = nvx_uintr_rx_register(p->fd, &p->rx_a);
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_REGISTER",
					   NVX_IOC_UINTR_REGISTER, -err);
		err = nvx_uintr_vec_new(p->fd, 0, &p->vec_a);
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_VECTOR_FD",
					   NVX_IOC_UINTR_VECTOR_FD, -err);
		err = nvx_uintr_sender_new(p->fd, p->vec_a, &p->to_a);
		if (err)
			return nvx_ub_fail(p, "NVX_IOC_UINTR_ADD_SENDER",
					   NVX_IOC_UINTR_ADD_SENDER, -err);
		p->have_to[0] = true;
		if (p->mode == NVX_UB_ROUND_TRIP)
			p->rx_b.reply = p->to_a;
		return NVX_EXIT_OK;
	case NVX_UM_SIGNAL:
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = nvx_ub_on_sig_a;
		sigaction(NVX_UB_SIG_A, &sa, NULL);
		sa.sa_handler = nvx_ub_on_sig_b;
		sigaction(NVX_UB_SIG_B, &sa, NULL);
		return NVX_EXIT_OK;
	default:
		p->efd_ab = eventfd(0, EFD_CLOEXEC);
		p->efd_ba = eventfd(0, EFD_CLOEXEC);
		if (p->efd_ab < 0 || p->efd_ba < 0)
			return nvx_ub_fail(p, "eventfd", 0, errno);
		return NVX_EXIT_OK;
	}
}

/* A: stop B (@b: NULL when not started) and undo what the method set up. */
static void nvx_ub_pair_cleanup(struct nvx_ub_pair *p, const pthread_t *b)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	uint64_t one = 1;
	unsigned int i;

	__atomic_store_n(&p->quit, 1, __ATOMIC_SEQ_CST);
	if (b) {
		if (p->have_to[2])
			nvx_uintr_post(p->fd, p->to_b[1]);
		if (p->efd_ab >= 0 &&
		    write(p->efd_ab, &one, sizeof(one)) != sizeof(one))
			nvx_warn("%s: eventfd: %s", p->ub->ctx->path,
				 strerror(errno));
		pthread_join(*b, NULL);
	}
	if (p->have_to[2])
		nvx_uintr_sender_free(p->fd, p->to_b[1]);
	if (p->have_to[1])
		nvx_uintr_sender_free(p->fd, p->to_b[0]);
	if (p->have_to[0])
		nvx_uintr_sender_free(p->fd, p->to_a);
	for (i = 0; i < 2; i++)
		if (p->vec_b[i] >= 0)
			close(p->vec_b[i]);
	if (p->vec_a >= 0)
		close(p->vec_a);
	if (p->m == NVX_UM_NVX || p->m == NVX_UM_NVX_WAIT)
		nvx_uintr_rx_unregister(p->fd);
	if (p->m == NVX_UM_SIGNAL) {
		sigemptyset(&dfl.sa_mask);
		sigaction(NVX_UB_SIG_A, &dfl, NULL);
		sigaction(NVX_UB_SIG_B, &dfl, NULL);
	}
	if (p->efd_ab >= 0)
		close(p->efd_ab);
	if (p->efd_ba >= 0)
		close(p->efd_ba);
	nvx_ub_cur = NULL;
}

static void nvx_ub_stat(uint64_t *v, unsigned int n, struct nvx_ub_stat *s)
{
	double sum = 0;
	unsigned int i;

	qsort(v, n, sizeof(*v), nvx_u64_cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->mean_ns = sum / n;
	s->min_ns = v[0];
	s->p50_ns = v[(n - 1) / 2];
	s->p99_ns = v[(uint64_t)n * 99 / 100 < n ? (uint64_t)n * 99 / 100 :
		      n - 1];
	s->max_ns = v[n - 1];
}

/* One method one way: @iters wake-ups after a tenth as many to warm up. */
static int nvx_ub_pair_run(struct nvx_ub *ub, enum nvx_ub_method m, int mode)
{
	struct nvx_ub_pair p = {
		.ub = ub,
		.m = m,
		.mode = mode,
		.fd = ub->ctx->fd,
		.pid = getpid(),
		.tid_a = nvx_gettid(),
		.rx_a = { .reply = -1 },
		.rx_b = { .reply = -1 },
		.vec_a = -1,
		.vec_b = { -1, -1 },
		.efd_ab = -1,
		.efd_ba = -1,
	};
	unsigned int warm = ub->iters / 10 < 100 ? ub->iters / 10 : 100;
	bool started = false;
	uint64_t i, ns = 0;
	pthread_t b;
	int ret, err;

	nvx_ub_cur = &p;
	ret = nvx_ub_pair_setup(&p);
	if (ret)
		goto out;
	ret = NVX_EXIT_FAIL;
	err = pthread_create(&b, NULL, nvx_ub_pair_b, &p);
	if (err) {
		nvx_ub_fail(&p, "pthread_create", 0, err);
		goto out;
	}
	started = true;
	err = nvx_ub_wait_ready(&p.ready);
	if (err == -ETIMEDOUT) {
		nvx_err("%s: %s: thread B did not get ready within %llu s",
			ub->ctx->path, nvx_um_names[m],
			NVX_UB_READY_TIMEOUT / NVX_NSEC_PER_SEC);
		goto out;
	}
	if (err) {
		nvx_ub_fail(&p, p.b_req == NVX_IOC_UINTR_REGISTER ?
			    "B: NVX_IOC_UINTR_REGISTER" :
			    "B: NVX_IOC_UINTR_VECTOR_FD", p.b_req, -err);
		goto out;
	}
	for (i = 0; i < 2 && (m == NVX_UM_NVX || m == NVX_UM_NVX_WAIT); i++) {
		err = nvx_uintr_sender_new(p.fd, p.vec_b[i], &p.to_b[i]);
		if (err) {
			nvx_ub_fail(&p, "NVX_IOC_UINTR_ADD_SENDER",
				    NVX_IOC_UINTR_ADD_SENDER, -err);
			goto out;
		}
		p.have_to[1 + i] = true;
	}

	for (i = 0; i < warm + ub->iters; i++) {
		ret = nvx_ub_pair_once(&p, i, &ns);
		if (ret)
			goto out;
		if (i >= warm)
			ub->samples[i - warm] = ns;
	}
	nvx_ub_stat(ub->samples, ub->iters, &ub->lat[m][mode]);
	ret = NVX_EXIT_OK;
out:
	nvx_ub_pair_cleanup(&p, started ? &b : NULL);
	if (!ret && p.b_err) {
		nvx_ub_fail(&p, "thread B", m == NVX_UM_NVX_WAIT ?
			    NVX_IOC_UINTR_WAIT : 0, -p.b_err);
		ret = NVX_EXIT_FAIL;
	}
	if (!ret && p.rx_b.reply_errors) {
		nvx_err("%s: %s: %llu answers of B's handler failed",
			ub->ctx->path, nvx_um_names[m],
			(unsigned long long)p.rx_b.reply_errors);
		ret = NVX_EXIT_FAIL;
	}
	return ret;
}

/* ------------------------------------------- (b) preemption overhead */

/**
 * struct nvx_ub_pre - the compute thread of (b) and its watchdog
 * @ub: the bench.
 * @fd: the nvx device.
 * @rx: the compute thread's nvx handler: counts the nvx timer's ticks.
 * @timer: the POSIX timer, signalling the compute thread.
 * @sig_ticks: the timer signal's handler runs.
 * @kind: the kind of interruption of the window running.
 * @period_ns: and its period.
 * @seq: the window running (from 1), 0 between windows.
 * @deadline_ns: when the watchdog stops the running window's timer.
 * @sig_disarm: the watchdog: stop the POSIX timer if window @seq runs.
 * @sig_disarmed: the signal handler: it did, for this window.
 * @done: the compute thread finished.
 * @err: -errno of what failed, else 0.
 * @what: what failed.
 * @req: the nvx request that failed, or 0.
 */
struct nvx_ub_pre {
	struct nvx_ub *ub;
	int fd;
	struct nvx_uintr_rx rx;
	timer_t timer;
	uint64_t sig_ticks;
	int kind;
	uint64_t period_ns;
	uint32_t seq;
	uint64_t deadline_ns;
	uint32_t sig_disarm;
	uint32_t sig_disarmed;
	int done;
	int err;
	const char *what;
	unsigned long req;
};

static struct nvx_ub_pre *nvx_ub_pre_cur;

static void nvx_ub_on_tick(int sig)
{
	struct nvx_ub_pre *q = nvx_ub_pre_cur;
	struct itimerspec off = { };
	int saved = errno;
	uint32_t d;

	__atomic_add_fetch(&q->sig_ticks, 1, __ATOMIC_RELAXED);
	d = __atomic_load_n(&q->sig_disarm, __ATOMIC_ACQUIRE);
	if (d && d == __atomic_load_n(&q->seq, __ATOMIC_ACQUIRE) &&
	    d != __atomic_load_n(&q->sig_disarmed, __ATOMIC_RELAXED) &&
	    !timer_settime(q->timer, 0, &off, NULL))
		__atomic_store_n(&q->sig_disarmed, d, __ATOMIC_RELEASE);
	errno = saved;
}

/* The work: a chain of multiplications the compiler cannot shorten. */
static __attribute__((noinline)) uint64_t nvx_ub_work(uint64_t x,
						      unsigned int n)
{
	while (n--) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static int nvx_ub_arm(struct nvx_ub_pre *q, int kind, uint64_t period_ns)
{
	struct itimerspec its = {
		.it_interval = { 0, period_ns },
		.it_value = { 0, period_ns },
	};
	int err;

	if (kind == NVX_UK_NVX) {
		err = nvx_uintr_timer_set(q->fd, 0, period_ns);
		if (err) {
			q->what = "NVX_IOC_UINTR_TIMER";
			q->req = NVX_IOC_UINTR_TIMER;
			return err;
		}
	} else if (kind == NVX_UK_SIGNAL && timer_settime(q->timer, 0, &its,
							  NULL)) {
		q->what = "timer_settime";
		return -errno;
	}
	return 0;
}

/*
 * One window: the compute loop for ub->window_ns, interrupted by @kind
 * every @period_ns, added to @l. *@rate: its iterations per second.
 */
static int nvx_ub_window(struct nvx_ub_pre *q, uint32_t seq, int kind,
			 uint64_t period_ns, struct nvx_ub_load *l,
			 double *rate)
{
	uint64_t *ticks = kind == NVX_UK_NVX ? &q->rx.hits : &q->sig_ticks;
	uint64_t t0, t1, ticks0, ticks1, iters = 0, x = seq;
	uint64_t window = q->ub->window_ns;
	int err;

	__atomic_store_n(&q->kind, kind, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->period_ns, period_ns, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->rx.armed, seq, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->seq, seq, __ATOMIC_SEQ_CST);
	/* stuck in handlers for as long again, the timer is stopped */
	__atomic_store_n(&q->deadline_ns, nvx_now_ns() + 2 * window +
			 100 * NVX_NSEC_PER_MSEC, __ATOMIC_SEQ_CST);
	ticks0 = __atomic_load_n(ticks, __ATOMIC_SEQ_CST);
	err = nvx_ub_arm(q, kind, period_ns);
	if (err)
		return err;
	t0 = nvx_now_ns();
	do {
		x = nvx_ub_work(x, NVX_UB_CHUNK);
		iters += NVX_UB_CHUNK;
		t1 = nvx_now_ns();
	} while (t1 - t0 < window);
	__atomic_store_n(&q->deadline_ns, 0, __ATOMIC_SEQ_CST);
	err = nvx_ub_arm(q, kind, 0);
	ticks1 = __atomic_load_n(ticks, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->seq, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&q->rx.armed, 0, __ATOMIC_SEQ_CST);
	__asm__ volatile("" : : "r"(x));	/* the work is used */

	l->iters += iters;
	l->ns += t1 - t0;
	l->ticks += kind == NVX_UK_NONE ? 0 : ticks1 - ticks0;
	l->windows++;
	if (__atomic_load_n(&q->rx.disarmed, __ATOMIC_SEQ_CST) == seq ||
	    __atomic_load_n(&q->sig_disarmed, __ATOMIC_SEQ_CST) == seq)
		l->watchdog++;
	*rate = (double)iters * NVX_NSEC_PER_SEC / (t1 - t0);
	return err;
}

/*
 * The rounds: per period a baseline window, an nvx window and a signal
 * window, nvx and signal in turns first, so that a drift of the
 * machine's speed falls on both alike.
 */
static int nvx_ub_pre_rounds(struct nvx_ub_pre *q)
{
	struct nvx_ub *ub = q->ub;
	unsigned int r, i, k;
	uint32_t seq = 0;
	double rate;
	int kind, err;

	ub->base_min = INFINITY;
	ub->base_max = 0;
	for (r = 0; r < ub->rounds; r++) {
		for (i = 0; i < NVX_UB_NR_PERIODS; i++) {
			err = nvx_ub_window(q, ++seq, NVX_UK_NONE, 0,
					    &ub->base, &rate);
			if (err)
				return err;
			if (rate < ub->base_min)
				ub->base_min = rate;
			if (rate > ub->base_max)
				ub->base_max = rate;
			for (k = 0; k < NVX_UK_COUNT; k++) {
				kind = (k + r) % NVX_UK_COUNT;
				err = nvx_ub_window(q, ++seq, kind,
						    nvx_ub_periods[i],
						    &ub->load[i][kind], &rate);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static void *nvx_ub_pre_thread(void *arg)
{
	struct nvx_ub_pre *q = arg;
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGRTMIN,
	};
	int err;

	nvx_pin_self(q->ub->cpu[1]);
	err = nvx_uintr_rx_register(q->fd, &q->rx);
	if (err) {
		q->what = "NVX_IOC_UINTR_REGISTER";
		q->req = NVX_IOC_UINTR_REGISTER;
		goto out;
	}
	sev.sigev_notify_thread_id = nvx_gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &q->timer)) {
		err = -errno;
		q->what = "timer_create";
	} else {
		err = nvx_ub_pre_rounds(q);
		timer_delete(q->timer);
	}
	nvx_uintr_rx_unregister(q->fd);
out:
	q->err = err;
	__atomic_store_n(&q->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * The watchdog: a timer whose handling takes longer than its period
 * leaves the loop no time to see that its window is over. Past the
 * deadline, ask the handlers to stop the timer; later stop a POSIX timer
 * from here; and give up (exit) NVX_UB_GIVE_UP after the deadline.
 */
static void nvx_ub_watchdog(struct nvx_ub_pre *q, uint32_t *fired)
{
	int kind = __atomic_load_n(&q->kind, __ATOMIC_SEQ_CST);
	struct itimerspec off = { };
	uint64_t deadline, now;
	uint32_t seq;

	seq = __atomic_load_n(&q->seq, __ATOMIC_SEQ_CST);
	deadline = __atomic_load_n(&q->deadline_ns, __ATOMIC_SEQ_CST);
	now = nvx_now_ns();
	if (!seq || !deadline || now <= deadline)
		return;
	if (*fired != seq) {
		__atomic_store_n(&q->rx.disarm, seq, __ATOMIC_SEQ_CST);
		__atomic_store_n(&q->sig_disarm, seq, __ATOMIC_SEQ_CST);
		*fired = seq;
		return;
	}
	if (kind == NVX_UK_SIGNAL && now > deadline + NVX_UB_GIVE_UP / 2)
		timer_settime(q->timer, 0, &off, NULL);
	if (now <= deadline + NVX_UB_GIVE_UP)
		return;
	nvx_err("%s: preemption: with the %s timer every %llu us the compute loop made no progress, even %llu s after the timer was asked to stop: giving up",
		q->ub->ctx->path,
		kind == NVX_UK_SIGNAL ? "signal" : "nvx",
		(unsigned long long)(__atomic_load_n(&q->period_ns,
						     __ATOMIC_SEQ_CST) /
				     NVX_NSEC_PER_USEC),
		NVX_UB_GIVE_UP / NVX_NSEC_PER_SEC);
	exit(NVX_EXIT_FAIL);
}

/* Run the compute thread on B's CPU, and its watchdog here. */
static int nvx_ub_preempt(struct nvx_ub *ub)
{
	struct timespec poll = { 0, NVX_UB_WATCHDOG_POLL };
	struct nvx_ub_pre q = {
		.ub = ub,
		.fd = ub->ctx->fd,
		.rx = { .reply = -1 },
	};
	struct sigaction sa = {
		.sa_handler = nvx_ub_on_tick,
		.sa_flags = SA_RESTART,
	};
	struct sigaction old;
	uint32_t fired = 0;
	pthread_t t;
	int err;

	nvx_ub_pre_cur = &q;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, &old);
	err = pthread_create(&t, NULL, nvx_ub_pre_thread, &q);
	if (err) {
		nvx_err("%s: pthread_create: %s", ub->ctx->path,
			strerror(err));
		sigaction(SIGRTMIN, &old, NULL);
		return NVX_EXIT_FAIL;
	}
	while (!__atomic_load_n(&q.done, __ATOMIC_SEQ_CST)) {
		nanosleep(&poll, NULL);
		nvx_ub_watchdog(&q, &fired);
	}
	pthread_join(t, NULL);
	sigaction(SIGRTMIN, &old, NULL);
	nvx_ub_pre_cur = NULL;
	if (q.err) {
		nvx_err("%s: preemption: %s: %s", ub->ctx->path, q.what,
			q.req ? nvx_uintr_strerror(q.req, -q.err) :
			strerror(-q.err));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------------- results */

static double nvx_ub_rate(const struct nvx_ub_load *l)
{
	if (!l->ns)
		return NAN;
	return (double)l->iters * NVX_NSEC_PER_SEC / l->ns;
}

static double nvx_ub_ticks_per_s(const struct nvx_ub_load *l)
{
	if (!l->ns)
		return NAN;
	return (double)l->ticks * NVX_NSEC_PER_SEC / l->ns;
}

/* The share of the CPU the interruptions took: 1 - rate / baseline. */
static double nvx_ub_overhead(const struct nvx_ub *ub,
			      const struct nvx_ub_load *l)
{
	double base = nvx_ub_rate(&ub->base);

	if (!(base > 0))
		return NAN;
	return 1 - nvx_ub_rate(l) / base;
}

/* How much longer a fixed amount of work takes: baseline / rate - 1. */
static double nvx_ub_slowdown(const struct nvx_ub *ub,
			      const struct nvx_ub_load *l)
{
	double rate = nvx_ub_rate(l);

	if (!(rate > 0))
		return NAN;
	return nvx_ub_rate(&ub->base) / rate - 1;
}

/* (max - min) / mean of the baseline windows' rates. */
static double nvx_ub_spread(const struct nvx_ub *ub)
{
	double base = nvx_ub_rate(&ub->base);

	if (!(base > 0) || ub->base_max < ub->base_min)
		return NAN;
	return (ub->base_max - ub->base_min) / base;
}

/* signal / nvx overhead of period @i: NAN when nvx's is about none. */
static double nvx_ub_ratio(const struct nvx_ub *ub, unsigned int i)
{
	double n = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_NVX]);
	double s = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_SIGNAL]);

	if (!(n >= NVX_UB_MIN_OVERHEAD))
		return NAN;
	return s / n;
}

static const char nvx_ub_unbounded[] =
	"the nvx timer cost less than 0.1% of the CPU and the signal more: the ratio is unbounded";
static const char nvx_ub_neither[] =
	"neither timer cost 0.1% of the CPU: no ratio";
static const char nvx_ub_uncertain[] =
	"the nvx overhead is within the spread of the baseline windows: the ratio is uncertain";

/* Why there is no ratio at period @i, or NULL. */
static const char *nvx_ub_no_ratio(const struct nvx_ub *ub, unsigned int i)
{
	double n = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_NVX]);
	double s = nvx_ub_overhead(ub, &ub->load[i][NVX_UK_SIGNAL]);

	if (n >= NVX_UB_MIN_OVERHEAD)
		return NULL;
	if (s >= NVX_UB_MIN_OVERHEAD)
		return nvx_ub_unbounded;
	return nvx_ub_neither;
}

/* Round trip or one-way ratio @num / @den of the means: NAN if none. */
static double nvx_ub_lat_ratio(const struct nvx_ub *ub, int mode,
			       enum nvx_ub_method num, enum nvx_ub_method den)
{
	if (!(ub->lat[den][mode].mean_ns > 0))
		return NAN;
	return ub->lat[num][mode].mean_ns / ub->lat[den][mode].mean_ns;
}

static void nvx_ub_json_stat(struct nvx_json *j, const char *key,
			     const struct nvx_ub_stat *s)
{
	nvx_json_object_begin(j, key);
	nvx_json_double(j, "mean_ns", s->mean_ns);
	nvx_json_u64(j, "p50_ns", s->p50_ns);
	nvx_json_u64(j, "p99_ns", s->p99_ns);
	nvx_json_u64(j, "min_ns", s->min_ns);
	nvx_json_u64(j, "max_ns", s->max_ns);
	nvx_json_end(j);
}

static void nvx_ub_json_ratios(struct nvx_json *j, const struct nvx_ub *ub,
			       int mode)
{
	nvx_json_object_begin(j, nvx_ub_mode_names[mode]);
	nvx_json_double(j, "signal_nvx",
			nvx_ub_lat_ratio(ub, mode, NVX_UM_SIGNAL, NVX_UM_NVX));
	nvx_json_double(j, "eventfd_nvx",
			nvx_ub_lat_ratio(ub, mode, NVX_UM_EVENTFD, NVX_UM_NVX));
	nvx_json_double(j, "eventfd_nvx_wait",
			nvx_ub_lat_ratio(ub, mode, NVX_UM_EVENTFD,
					 NVX_UM_NVX_WAIT));
	nvx_json_end(j);
}

static void nvx_ub_print_json(const struct nvx_ub *ub)
{
	struct nvx_json *j = &ub->ctx->js;
	unsigned int i, h = NVX_UB_HEADLINE;
	int m, mode, k;

	nvx_json_object_begin(j, NULL);
	nvx_json_array_begin(j, "cpus");
	nvx_json_s64(j, NULL, ub->cpu[0]);
	nvx_json_s64(j, NULL, ub->cpu[1]);
	nvx_json_end(j);
	nvx_json_bool(j, "same_cpu", ub->same_cpu);

	nvx_json_object_begin(j, "latency");
	nvx_json_u64(j, "iters", ub->iters);
	nvx_json_object_begin(j, "methods");
	for (m = 0; m < NVX_UM_COUNT; m++) {
		nvx_json_object_begin(j, nvx_um_names[m]);
		nvx_json_str(j, "receiver", nvx_um_receiver[m]);
		for (mode = 0; mode < NVX_UB_MODES; mode++)
			nvx_ub_json_stat(j, nvx_ub_mode_names[mode],
					 &ub->lat[m][mode]);
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_object_begin(j, "ratios");
	for (mode = 0; mode < NVX_UB_MODES; mode++)
		nvx_ub_json_ratios(j, ub, mode);
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "preemption");
	nvx_json_u64(j, "window_ns", ub->window_ns);
	nvx_json_u64(j, "rounds", ub->rounds);
	nvx_json_object_begin(j, "baseline");
	nvx_json_double(j, "iters_per_s", nvx_ub_rate(&ub->base));
	nvx_json_double(j, "spread", nvx_ub_spread(ub));
	nvx_json_u64(j, "windows", ub->base.windows);
	nvx_json_end(j);
	nvx_json_array_begin(j, "periods");
	for (i = 0; i < NVX_UB_NR_PERIODS; i++) {
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "period_ns", nvx_ub_periods[i]);
		nvx_json_double(j, "wanted_ticks_per_s",
				(double)NVX_NSEC_PER_SEC / nvx_ub_periods[i]);
		for (k = 0; k < NVX_UK_COUNT; k++) {
			const struct nvx_ub_load *l = &ub->load[i][k];

			nvx_json_object_begin(j, nvx_uk_names[k]);
			nvx_json_double(j, "iters_per_s", nvx_ub_rate(l));
			nvx_json_double(j, "overhead", nvx_ub_overhead(ub, l));
			nvx_json_double(j, "slowdown", nvx_ub_slowdown(ub, l));
			nvx_json_double(j, "ticks_per_s",
					nvx_ub_ticks_per_s(l));
			nvx_json_u64(j, "watchdog_windows", l->watchdog);
			nvx_json_end(j);
		}
		nvx_json_double(j, "signal_nvx", nvx_ub_ratio(ub, i));
		nvx_json_str(j, "no_ratio", nvx_ub_no_ratio(ub, i));
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_double(j, "headline", nvx_ub_ratio(ub, h));
	nvx_json_str(j, "headline_note", nvx_ub_no_ratio(ub, h));
	nvx_json_end(j);
}

/* A ratio for people: "2.31", or "inf" / "n/a" where there is none. */
static const char *nvx_ub_fmt_ratio(char *buf, size_t size, double r,
				    const char *why)
{
	if (isfinite(r))
		snprintf(buf, size, "%.2f", r);
	else if (why == nvx_ub_unbounded)
		snprintf(buf, size, "inf");
	else
		snprintf(buf, size, "n/a");
	return buf;
}

static void nvx_ub_print_text(const struct nvx_ub *ub)
{
	unsigned int i, h = NVX_UB_HEADLINE;
	const struct nvx_ub_stat *s;
	const char *why, *note = NULL;
	char r1[16], r2[16], r3[16];
	unsigned int watchdog = 0;
	int m;

	printf("bench uintr: nvx user interrupts against POSIX signals and eventfd\n");
	if (ub->same_cpu)
		printf("both threads on CPU %d: the only CPU this process may use\n",
		       ub->cpu[0]);
	else
		printf("thread A on CPU %d, thread B on CPU %d\n", ub->cpu[0],
		       ub->cpu[1]);

	printf("\n(a) thread A wakes thread B, %u times per method and way; ns\n",
	       ub->iters);
	printf("%-9s %-31s %27s %27s\n", "", "", "one way (A to B)",
	       "round trip (A to B to A)");
	printf("%-9s %-31s %9s %8s %8s %9s %8s %8s\n", "method",
	       "the woken thread", "mean", "p50", "p99", "mean", "p50",
	       "p99");
	for (m = 0; m < NVX_UM_COUNT; m++) {
		s = ub->lat[m];
		printf("%-9s %-31s %9.0f %8llu %8llu %9.0f %8llu %8llu\n",
		       nvx_um_names[m], nvx_um_receiver[m],
		       s[NVX_UB_ONE_WAY].mean_ns,
		       (unsigned long long)s[NVX_UB_ONE_WAY].p50_ns,
		       (unsigned long long)s[NVX_UB_ONE_WAY].p99_ns,
		       s[NVX_UB_ROUND_TRIP].mean_ns,
		       (unsigned long long)s[NVX_UB_ROUND_TRIP].p50_ns,
		       (unsigned long long)s[NVX_UB_ROUND_TRIP].p99_ns);
	}
	for (m = 0; m < NVX_UB_MODES; m++)
		printf("%-10s signal/nvx %s, eventfd/nvx %s, eventfd/nvx_wait %s (means)\n",
		       m == NVX_UB_ONE_WAY ? "one way:" : "round trip:",
		       nvx_ub_fmt_ratio(r1, sizeof(r1),
					nvx_ub_lat_ratio(ub, m, NVX_UM_SIGNAL,
							 NVX_UM_NVX), NULL),
		       nvx_ub_fmt_ratio(r2, sizeof(r2),
					nvx_ub_lat_ratio(ub, m, NVX_UM_EVENTFD,
							 NVX_UM_NVX), NULL),
		       nvx_ub_fmt_ratio(r3, sizeof(r3),
					nvx_ub_lat_ratio(ub, m, NVX_UM_EVENTFD,
							 NVX_UM_NVX_WAIT),
					NULL));
	printf("one way: from A's clock before waking to B's after it woke\n");

	printf("\n(b) a timer interrupts a compute loop on CPU %d: %u round%s, %.0f ms windows\n",
	       ub->cpu[1], ub->rounds, ub->rounds == 1 ? "" : "s",
	       (double)ub->window_ns / NVX_NSEC_PER_MSEC);
	printf("baseline, no timer: %.4g iterations/s (windows spread %.1f%%)\n",
	       nvx_ub_rate(&ub->base), 100 * nvx_ub_spread(ub));
	printf("%-8s %10s %12s %10s %12s %10s %11s\n", "period",
	       "wanted/s", "nvx ticks/s", "nvx CPU", "sig ticks/s", "sig CPU",
	       "signal/nvx");
	for (i = 0; i < NVX_UB_NR_PERIODS; i++) {
		const struct nvx_ub_load *n = &ub->load[i][NVX_UK_NVX];
		const struct nvx_ub_load *g = &ub->load[i][NVX_UK_SIGNAL];

		why = nvx_ub_no_ratio(ub, i);
		printf("%5llu us %10.0f %12.0f %9.2f%% %12.0f %9.2f%% %11s\n",
		       (unsigned long long)(nvx_ub_periods[i] /
					    NVX_NSEC_PER_USEC),
		       (double)NVX_NSEC_PER_SEC / nvx_ub_periods[i],
		       nvx_ub_ticks_per_s(n), 100 * nvx_ub_overhead(ub, n),
		       nvx_ub_ticks_per_s(g), 100 * nvx_ub_overhead(ub, g),
		       nvx_ub_fmt_ratio(r1, sizeof(r1), nvx_ub_ratio(ub, i),
					why));
		watchdog += n->watchdog + g->watchdog;
	}
	printf("%s\n",
	       "CPU: the share the interruptions took, 1 - rate / baseline rate (below 0: noise)");
	if (watchdog)
		printf("watchdog: stopped a timer in %u window%s, its handler left no time\n",
		       watchdog, watchdog == 1 ? "" : "s");

	why = nvx_ub_no_ratio(ub, h);
	if (why) {
		printf("\nheadline: %s at %llu us (%s)\n",
		       nvx_ub_fmt_ratio(r1, sizeof(r1), NAN, why),
		       (unsigned long long)(nvx_ub_periods[h] /
					    NVX_NSEC_PER_USEC), why);
	} else {
		printf("\nheadline: %.2f (at %llu us, %s)\n", nvx_ub_ratio(ub, h),
		       (unsigned long long)(nvx_ub_periods[h] /
					    NVX_NSEC_PER_USEC),
		       "signal overhead / nvx overhead");
		if (nvx_ub_overhead(ub, &ub->load[h][NVX_UK_NVX]) <
		    nvx_ub_spread(ub))
			note = nvx_ub_uncertain;
	}
	if (note)
		printf("note: %s\n", note);
	printf("%s\n",
	       "note: times are from this machine; under QEMU TCG they are not hardware times, and timers may not keep their period: compare the ratios");
}

enum {
	NVX_OPT_ITERS = 300,
	NVX_OPT_WINDOW,
	NVX_OPT_ROUNDS,
};

static const struct option nvx_bench_uintr_opts[] = {
	{ "iters", required_argument, NULL, NVX_OPT_ITERS },
	{ "window", required_argument, NULL, NVX_OPT_WINDOW },
	{ "rounds", required_argument, NULL, NVX_OPT_ROUNDS },
	{ }
};

static int nvx_bench_uintr_parse(struct nvx_ctx *ctx, int argc, char **argv,
				 struct nvx_ub *ub)
{
	unsigned long long n;
	int c;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", nvx_bench_uintr_opts,
				NULL)) != -1) {
		switch (c) {
		case NVX_OPT_ITERS:
			if (nvx_parse_uint(optarg, NVX_UB_MAX_ITERS, &n) || !n)
				return nvx_usage_error(ctx,
						       "--iters: '%s' is not a number from 1 to %u",
						       optarg, NVX_UB_MAX_ITERS);
			ub->iters = n;
			break;
		case NVX_OPT_WINDOW:
			if (nvx_parse_uint(optarg, NVX_UB_MAX_WINDOW_MS, &n) ||
			    !n)
				return nvx_usage_error(ctx,
						       "--window: '%s' is not a number of ms from 1 to %u",
						       optarg, NVX_UB_MAX_WINDOW_MS);
			ub->window_ns = n * NVX_NSEC_PER_MSEC;
			break;
		case NVX_OPT_ROUNDS:
			if (nvx_parse_uint(optarg, NVX_UB_MAX_ROUNDS, &n) || !n)
				return nvx_usage_error(ctx,
						       "--rounds: '%s' is not a number from 1 to %u",
						       optarg, NVX_UB_MAX_ROUNDS);
			ub->rounds = n;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind]);
	return NVX_EXIT_OK;
}

static int cmd_bench_uintr(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_ub ub = {
		.ctx = ctx,
		.iters = NVX_UB_ITERS,
		.window_ns = NVX_UB_WINDOW_MS * NVX_NSEC_PER_MSEC,
		.rounds = NVX_UB_ROUNDS,
	};
	struct nvx_uintr_rx probe = { .reply = -1 };
	int ret, err, m, mode, ncpus;
	bool tty = isatty(STDERR_FILENO);

	ret = nvx_bench_uintr_parse(ctx, argc, argv, &ub);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;

	ncpus = nvx_two_cpus(ub.cpu);
	if (ncpus < 0) {
		nvx_err("%s: which CPUs may this process use? %s", ctx->path,
			strerror(-ncpus));
		return NVX_EXIT_FAIL;
	}
	ub.same_cpu = ncpus < 2;
	if (ub.same_cpu)
		nvx_warn("%s: this process may use one CPU only: both threads share it, and the waiting ones yield instead of spinning",
			 ctx->path);
	nvx_pin_self(ub.cpu[0]);

	/* does the kernel have user interrupts at all? */
	err = nvx_uintr_rx_register(ctx->fd, &probe);
	if (err) {
		nvx_err("%s: NVX_IOC_UINTR_REGISTER: %s", ctx->path,
			nvx_uintr_strerror(NVX_IOC_UINTR_REGISTER, -err));
		return NVX_EXIT_FAIL;
	}
	nvx_uintr_rx_unregister(ctx->fd);

	ub.samples = calloc(ub.iters, sizeof(*ub.samples));
	if (!ub.samples) {
		nvx_err("%s: out of memory", ctx->path);
		return NVX_EXIT_FAIL;
	}
	for (m = 0; m < NVX_UM_COUNT; m++) {
		for (mode = 0; mode < NVX_UB_MODES; mode++) {
			if (tty)
				fprintf(stderr, "nvxtool: %s: %s %s, %u times...\n",
					ctx->path, nvx_um_names[m],
					nvx_ub_mode_names[mode], ub.iters);
			ret = nvx_ub_pair_run(&ub, m, mode);
			if (ret)
				goto out;
		}
	}
	if (tty)
		fprintf(stderr, "nvxtool: %s: preemption, about %.0f s...\n",
			ctx->path, (double)ub.rounds * NVX_UB_NR_PERIODS *
			(1 + NVX_UK_COUNT) * ub.window_ns / NVX_NSEC_PER_SEC);
	ret = nvx_ub_preempt(&ub);
	if (ret)
		goto out;

	if (ctx->json)
		nvx_ub_print_json(&ub);
	else
		nvx_ub_print_text(&ub);
out:
	free(ub.samples);
	return ret;
}

/* ------------------------------------------------------- command table */

const struct nvx_cmd nvx_bench_cmds[] = {
	{
		.name = "uvm",
		.summary = "user VMs: fast path vs slow path, cold start",
		.usage = nvx_bench_uvm_usage,
		.fn = nvx_cmd_bench_uvm,
	},
	{
		.name = "grant",
		.summary = "time nvx grants against the kernel's other ways to get zeroed memory",
		.usage = "[--size SIZE] [--runs N] [--json]\n"
			 "\n"
			 "Time how long it takes to obtain SIZE of zeroed memory, mapped,\n"
			 "with one byte written in every 4 KiB page, five ways:\n"
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
			 "measures 1G and the largest of 2G, 4G and 8G that fits. Then it\n"
			 "times how long a released grant of the largest size takes to be\n"
			 "clean again. Each run also times nvx split in two: the grant\n"
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
			 "skipped; \"nvx_setup_ns\", \"nvx_writes_ns\": the split),\n"
			 "\"skipped\" (why), \"scrub\" (\"bytes\",\n"
			 "\"clean_again_ns\", \"mib_per_s\", \"scrubbed_bytes\", \"scrub_ns\",\n"
			 "\"scrubber_mib_per_s\", \"rate_limit_mbps\") and \"headline\"\n"
			 "(map_populate / nvx at the largest size).\n",
		.fn = cmd_bench_grant,
	},
	{
		.name = "uintr",
		.summary = "time nvx user interrupts against signals and eventfd",
		.usage = "[--iters N] [--window MS] [--rounds N] [--json]\n"
			 "\n"
			 "Two threads, A (this one) and B, on two CPUs (when the process may\n"
			 "use two).\n"
			 "\n"
			 "(a) Wake-up latency. A wakes B N times, one at a time, and times\n"
			 "each wake-up one way (A's clock before waking to B's clock once\n"
			 "B's code runs) and as a round trip (B's handler or loop wakes A\n"
			 "back at once):\n"
			 "\n"
			 "  nvx       NVX_IOC_UINTR_SEND; the handler runs on B, which spins\n"
			 "            in user mode\n"
			 "  nvx_wait  the same, B (and A, for the way back) blocked in\n"
			 "            NVX_IOC_UINTR_WAIT\n"
			 "  signal    tgkill() to B, a sigaction() handler, sigreturn; B\n"
			 "            spins in user mode\n"
			 "  eventfd   write() to an eventfd that B is blocked reading\n"
			 "\n"
			 "Mean, median and 99th percentile, and the ratios of the means\n"
			 "signal/nvx, eventfd/nvx and eventfd/nvx_wait.\n"
			 "\n"
			 "(b) Preemption overhead. A compute loop runs on B's CPU for\n"
			 "windows of MS, interrupted every 10, 20, 50 and 100 us by the nvx\n"
			 "timer (NVX_IOC_UINTR_TIMER, a handler counts) or by a POSIX timer\n"
			 "(timer_create() with SIGEV_THREAD_ID, a sigaction() handler\n"
			 "counts), against windows without a timer in the same run. In\n"
			 "every round each period gets a window of each kind. The overhead\n"
			 "is the share of the CPU lost: 1 - iterations per second with the\n"
			 "timer / iterations per second without. Also the ticks actually\n"
			 "handled per second: a timer may not keep its period, under\n"
			 "emulation in particular. A watchdog stops a timer whose handler\n"
			 "leaves the loop no time at all, and says so.\n"
			 "\n"
			 "  --iters N    wake-ups per method and way in (a) (default 1000)\n"
			 "  --window MS  the length of one window in (b) (default 300)\n"
			 "  --rounds N   rounds of (b) (default 3): 12 windows each\n"
			 "\n"
			 "With the defaults the bench takes about 15 s, most of it in (b)\n"
			 "(rounds x 12 x MS). Times are from this machine; under QEMU TCG\n"
			 "they are not hardware times: compare the ratios. The headline is\n"
			 "the signal's overhead / nvx's overhead at 20 us; it is null (text:\n"
			 "inf or n/a, with the reason) when nvx's overhead is below 0.1%.\n"
			 "JSON: \"cpus\", \"same_cpu\", \"latency\" (\"iters\", \"methods\":\n"
			 "per method \"receiver\", \"one_way\" and \"round_trip\" with\n"
			 "\"mean_ns\", \"p50_ns\", \"p99_ns\", \"min_ns\", \"max_ns\";\n"
			 "\"ratios\"), \"preemption\" (\"window_ns\", \"rounds\",\n"
			 "\"baseline\": \"iters_per_s\", \"spread\", \"windows\"; \"periods\":\n"
			 "per period \"period_ns\", \"wanted_ticks_per_s\", \"nvx\" and\n"
			 "\"signal\" with \"iters_per_s\", \"overhead\", \"slowdown\" (how much\n"
			 "longer a fixed amount of work takes: baseline rate / rate - 1),\n"
			 "\"ticks_per_s\", \"watchdog_windows\"; \"signal_nvx\" (of the\n"
			 "overheads), \"no_ratio\" (why it is null)), \"headline\" and\n"
			 "\"headline_note\".\n",
		.fn = cmd_bench_uintr,
	},
	{ }
};
