/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx-bench grant, shared by its three parts: grant.c (the methods, the
 * sizes, the results, the command), grant_scrub.c (the scrubber against
 * userspace zeroing) and grant_small.c (small grants and clones).
 */
#ifndef _NVX_BENCH_GRANT_H
#define _NVX_BENCH_GRANT_H

#include <stdbool.h>
#include <stdint.h>

#include "bench.h"

#define NVX_PARAM_PATH		"/sys/module/nvx/parameters/"

enum nvx_bench_method {
	NVX_BM_NVX,
	NVX_BM_MAP_POPULATE,
	NVX_BM_MADV_POPULATE_WRITE,
	NVX_BM_FIRST_TOUCH,
	NVX_BM_PIN_LONGTERM,
	NVX_BM_COUNT,
};

#define NVX_BENCH_RUNS		5	/* default runs per method and size */
#define NVX_BENCH_MAX_RUNS	10000
#define NVX_BENCH_SIZE		NVX_GIB	/* the size always measured */
/* waiting for the scrubber: give up after this long without progress */
#define NVX_BENCH_CLEAN_TIMEOUT	(60 * NVX_NSEC_PER_SEC)
#define NVX_BENCH_POLL		(10 * NVX_NSEC_PER_MSEC)
#define NVX_BENCH_SCRUB_POLL	NVX_NSEC_PER_MSEC
/* the userspace zeroing baselines: passes over a buffer of at most */
#define NVX_BENCH_USER_RUNS	3
#define NVX_BENCH_USER_MAX	(256 * NVX_MIB)
/* small grants: sizes, cycles per run, and at most this many runs */
#define NVX_BENCH_SMALL_SIZES	2
#define NVX_BENCH_SMALL_CYCLES	200
#define NVX_BENCH_MAX_SMALL_RUNS	16
/* the template the clones are made of */
#define NVX_BENCH_CLONE_BYTES	(64 * NVX_MIB)

/**
 * struct nvx_bench_small - small grants of one size
 * @bytes: the size, in 64 KiB blocks.
 * @nvx_per_s: grant + mmap MAP_POPULATE + munmap + close per second.
 * @anon_per_s: anonymous mmap MAP_POPULATE + munmap per second.
 */
struct nvx_bench_small {
	uint64_t bytes;
	double nvx_per_s;
	double anon_per_s;
};

/**
 * struct nvx_bench_clone - clones of a template, medians
 * @bytes: the template's size.
 * @create_ns: NVX_GRANT_IOC_CLONE.
 * @read_ns: the clone created, mapped and read all through.
 * @copy_ns: an anonymous mmap with the template copied into it.
 */
struct nvx_bench_clone {
	uint64_t bytes;
	uint64_t create_ns;
	uint64_t read_ns;
	uint64_t copy_ns;
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
 * @map_median_ns: per method, the median of the runs that map (every
 *	page-table entry installed) and write nothing; for nvx, @setup_ns.
 * @map_min_ns: and the fastest of them.
 * @around_ns: median time of an nvx grant mapped without MAP_POPULATE
 *	and read once per GiB (the fault handler maps up to 1 GiB of PMDs
 *	per fault); nvx's map-only time is the faster of this and
 *	@setup_ns.
 * @around_min_ns: and the fastest.
 */
struct nvx_bench_size {
	uint64_t bytes;
	uint64_t median_ns[NVX_BM_COUNT];
	uint64_t min_ns[NVX_BM_COUNT];
	uint64_t setup_ns;
	uint64_t writes_ns;
	uint64_t map_median_ns[NVX_BM_COUNT];
	uint64_t map_min_ns[NVX_BM_COUNT];
	uint64_t around_ns;
	uint64_t around_min_ns;
};

/**
 * struct nvx_bench - one run of bench grant
 * @ctx: the command's context; the device is open.
 * @node: the NUMA node the grants come from, and the pool grows on.
 * @runs: runs per method and size.
 * @piece_bytes: the pool's piece size.
 * @added: bytes the bench has added to the pool on @node so far, to be
 *	given back at the end.
 * @gup_fd: /sys/kernel/debug/gup_test, or -1.
 * @skip: per method, why it is not measured, or NULL.
 * @samples: @runs times per method, NVX_BM_COUNT * @runs, then @runs
 *	setup times and @runs write times (see struct nvx_bench_size), then
 *	@runs map-only times per method, then @runs times of nvx mapped by
 *	one read per GiB.
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
 * @nt: the zero_nontemporal module parameter: 1, 0, or -1 when the
 *	kernel has none (the scrubber uses clear_page()).
 * @alt_scrubbed_bytes: with the other zeroing method (@nt flipped for
 *	one more release of the largest grant): scrubbed_bytes' growth;
 * @alt_scrub_ns: and scrub_ns's.
 * @user_bytes: the buffer the userspace baselines zero.
 * @user_memset_ns: fastest of NVX_BENCH_USER_RUNS memset()s of it.
 * @user_nt_ns: fastest of as many passes of 16-byte non-temporal stores.
 * @small: small grants, per size.
 * @clone: clones of a template.
 */
struct nvx_bench {
	struct nvx_ctx *ctx;
	uint32_t node;
	unsigned int runs;
	uint64_t piece_bytes;
	uint64_t added;
	int gup_fd;
	const char *skip[NVX_BM_COUNT];
	uint64_t *samples;
	struct nvx_bench_size sizes[3];
	unsigned int nr_sizes;
	char nofit[256];
	uint64_t clean_again_ns;
	uint64_t scrubbed_bytes;
	uint64_t scrub_ns;
	char gup_why[160];
	char thp[16];
	uint64_t scrub_rate;
	int nt;
	uint64_t alt_scrubbed_bytes;
	uint64_t alt_scrub_ns;
	uint64_t user_bytes;
	uint64_t user_memset_ns;
	uint64_t user_nt_ns;
	struct nvx_bench_small small[NVX_BENCH_SMALL_SIZES];
	struct nvx_bench_clone clone;
};

double nvx_mib_per_s(uint64_t bytes, uint64_t ns);
bool nvx_read_line(const char *path, char *buf, size_t size);
int nvx_bench_wait_clean(struct nvx_bench *b, uint64_t poll_ns,
			 uint64_t *at_ns);
int nvx_bench_user_zero(struct nvx_bench *b, uint64_t bytes);
int nvx_bench_scrubs(struct nvx_bench *b, uint64_t bytes);
void nvx_bench_scrub_json(struct nvx_bench *b, uint64_t bytes);
void nvx_bench_scrub_text(struct nvx_bench *b, uint64_t bytes);
int nvx_bench_small(struct nvx_bench *b);
void nvx_bench_small_json(struct nvx_bench *b);
void nvx_bench_small_text(struct nvx_bench *b);
int nvx_bench_clone(struct nvx_bench *b);
void nvx_bench_clone_json(struct nvx_bench *b);
void nvx_bench_clone_text(struct nvx_bench *b);

#endif /* _NVX_BENCH_GRANT_H */
