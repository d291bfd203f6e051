// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench grant, small grants: create + map + release cycles per
 * second of a grant of 64 KiB blocks (NVX_GRANT_BLOCKS, mmap with
 * MAP_POPULATE, munmap, close) against an anonymous mmap with
 * MAP_POPULATE and munmap of the same size, in the same run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <nvx/pool.h>
#include "grant.h"

static const uint64_t nvx_small_sizes[NVX_BENCH_SMALL_SIZES] = {
	64 * 1024, 256 * 1024,
};

/* One nvx cycle: 0, or a positive errno after a message. */
static int nvx_small_cycle_nvx(struct nvx_bench *b, uint64_t bytes)
{
	void *p;
	int fd, err;

	err = -nvx_grant_new(b->ctx->fd, b->node, bytes,
			     NVX_GRANT_BLOCKS | NVX_GRANT_CLOEXEC, &fd);
	if (err) {
		nvx_err("bench grant: a grant of %llu bytes in blocks: %s",
			(unsigned long long)bytes, strerror(err));
		return err;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		nvx_err("bench grant: mmap of a grant in blocks: %s",
			strerror(err));
		close(fd);
		return err;
	}
	munmap(p, bytes);
	close(fd);
	return 0;
}

/* One anonymous cycle: 0, or a positive errno after a message. */
static int nvx_small_cycle_anon(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		nvx_err("bench grant: anonymous mmap: %s", strerror(errno));
		return errno;
	}
	munmap(p, bytes);
	return 0;
}

/* Cycles per second of @nvx or anonymous memory: the median of b->runs. */
static int nvx_small_rate(struct nvx_bench *b, uint64_t bytes, bool nvx,
			  double *per_s)
{
	uint64_t ns[NVX_BENCH_MAX_SMALL_RUNS], t0;
	unsigned int r, i, runs = b->runs;
	int err;

	if (runs > NVX_BENCH_MAX_SMALL_RUNS)
		runs = NVX_BENCH_MAX_SMALL_RUNS;
	for (r = 0; r < runs; r++) {
		t0 = nvx_now_ns();
		for (i = 0; i < NVX_BENCH_SMALL_CYCLES; i++) {
			err = nvx ? nvx_small_cycle_nvx(b, bytes) :
				    nvx_small_cycle_anon(bytes);
			if (err)
				return NVX_EXIT_FAIL;
		}
		ns[r] = nvx_now_ns() - t0;
		if (nvx_stop_signal())
			return NVX_EXIT_FAIL;
	}
	*per_s = NVX_BENCH_SMALL_CYCLES * 1e9 /
		 (double)nvx_bench_median(ns, runs);
	return NVX_EXIT_OK;
}

/**
 * nvx_bench_small() - measure small grants
 * @b: the bench; the pool has room for a few pieces on b->node.
 *
 * Fills b->small. The grants split a piece of the pool into blocks; the
 * bench's shrink at the end releases it first.
 *
 * Return: NVX_EXIT_OK, or an NVX_EXIT_* status after a message.
 */
int nvx_bench_small(struct nvx_bench *b)
{
	unsigned int i;
	int ret;

	for (i = 0; i < NVX_BENCH_SMALL_SIZES; i++) {
		struct nvx_bench_small *s = &b->small[i];

		s->bytes = nvx_small_sizes[i];
		/* one cycle each first: the piece is split, faults warm */
		if (nvx_small_cycle_nvx(b, s->bytes) ||
		    nvx_small_cycle_anon(s->bytes))
			return NVX_EXIT_FAIL;
		ret = nvx_small_rate(b, s->bytes, true, &s->nvx_per_s);
		if (ret)
			return ret;
		ret = nvx_small_rate(b, s->bytes, false, &s->anon_per_s);
		if (ret)
			return ret;
	}
	return NVX_EXIT_OK;
}

/**
 * nvx_bench_small_json() - the "small" member of bench grant --json
 * @b: the bench, measured.
 */
void nvx_bench_small_json(struct nvx_bench *b)
{
	struct nvx_json *j = &b->ctx->js;
	unsigned int i;

	nvx_json_array_begin(j, "small");
	for (i = 0; i < NVX_BENCH_SMALL_SIZES; i++) {
		const struct nvx_bench_small *s = &b->small[i];

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "bytes", s->bytes);
		nvx_json_double(j, "nvx_per_s", s->nvx_per_s);
		nvx_json_double(j, "map_populate_per_s", s->anon_per_s);
		nvx_json_double(j, "ratio",
				nvx_bench_div(s->nvx_per_s, s->anon_per_s));
		nvx_json_end(j);
	}
	nvx_json_end(j);
}

/**
 * nvx_bench_small_text() - the small grants' table
 * @b: the bench, measured.
 */
void nvx_bench_small_text(struct nvx_bench *b)
{
	unsigned int i;

	printf("\nsmall grants: create + map (MAP_POPULATE) + release, cycles per second,\n"
	       "median of %u runs of %u cycles\n", b->runs > NVX_BENCH_MAX_SMALL_RUNS ?
	       NVX_BENCH_MAX_SMALL_RUNS : b->runs, NVX_BENCH_SMALL_CYCLES);
	printf("%-9s %14s %14s %8s\n", "size", "nvx blocks/s", "map_populate/s",
	       "ratio");
	for (i = 0; i < NVX_BENCH_SMALL_SIZES; i++) {
		const struct nvx_bench_small *s = &b->small[i];

		printf("%4llu KiB  %14.0f %14.0f %8.2f\n",
		       (unsigned long long)(s->bytes >> 10), s->nvx_per_s,
		       s->anon_per_s, nvx_bench_div(s->nvx_per_s, s->anon_per_s));
	}
}
