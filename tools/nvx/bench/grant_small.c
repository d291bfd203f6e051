// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench grant, small grants and clones, each against what a user
 * would do otherwise, in the same run:
 *  - create + map + release cycles per second of a grant of 64 KiB
 *    blocks (NVX_GRANT_BLOCKS, mmap with MAP_POPULATE, munmap, close)
 *    against an anonymous mmap with MAP_POPULATE and munmap;
 *  - a clone of a 64 MiB template (NVX_GRANT_IOC_CLONE), mapped and read
 *    all through, against copying the template into anonymous memory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* Read every 8-byte word of @p: their sum, which the caller checks. */
static uint64_t nvx_read_all(const void *p, size_t len)
{
	const uint64_t *w = p;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < len / sizeof(*w); i++)
		sum += w[i];
	return sum;
}

/* A sealed template of @bytes on b->node, every byte written. */
static int nvx_clone_template(struct nvx_bench *b, uint64_t bytes, int *tfd)
{
	struct nvx_grant_seal seal = {};
	void *p;
	int fd, err;

	err = -nvx_grant_new(b->ctx->fd, b->node, bytes, NVX_GRANT_CLOEXEC,
			     &fd);
	if (err) {
		nvx_err("bench grant: the template's grant: %s", strerror(err));
		return NVX_EXIT_FAIL;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		nvx_err("bench grant: mmap of the template: %s",
			strerror(errno));
		close(fd);
		return NVX_EXIT_FAIL;
	}
	memset(p, 0x5a, bytes);
	munmap(p, bytes);
	if (ioctl(fd, NVX_GRANT_IOC_SEAL, &seal)) {
		nvx_err("bench grant: NVX_GRANT_IOC_SEAL: %s", strerror(errno));
		close(fd);
		return NVX_EXIT_FAIL;
	}
	*tfd = fd;
	return NVX_EXIT_OK;
}

/*
 * One clone: its creation time in *@create_ns, creation + map + reading
 * all of it in *@all_ns.
 */
static int nvx_clone_once(int tfd, uint64_t bytes, uint64_t *create_ns,
			  uint64_t *all_ns)
{
	struct nvx_grant_clone c = { .flags = NVX_CLONE_CLOEXEC };
	uint64_t t0 = nvx_now_ns(), sum;
	void *p;

	if (ioctl(tfd, NVX_GRANT_IOC_CLONE, &c)) {
		nvx_err("bench grant: NVX_GRANT_IOC_CLONE: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	*create_ns = nvx_now_ns() - t0;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd, 0);
	if (p == MAP_FAILED) {
		nvx_err("bench grant: mmap of a clone: %s", strerror(errno));
		close(c.fd);
		return NVX_EXIT_FAIL;
	}
	sum = nvx_read_all(p, bytes);
	*all_ns = nvx_now_ns() - t0;
	munmap(p, bytes);
	close(c.fd);
	if (sum != bytes / 8 * 0x5a5a5a5a5a5a5a5aULL) {
		nvx_err("bench grant: a clone does not read as its template");
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* The baseline: anonymous memory, the template copied into it. */
static int nvx_copy_once(const void *src, uint64_t bytes, uint64_t *ns)
{
	uint64_t t0 = nvx_now_ns();
	void *p;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		nvx_err("bench grant: anonymous mmap: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	memcpy(p, src, bytes);
	*ns = nvx_now_ns() - t0;
	munmap(p, bytes);
	return NVX_EXIT_OK;
}

/**
 * nvx_bench_clone() - measure clones of a template
 * @b: the bench; the pool has room for NVX_BENCH_CLONE_BYTES on b->node.
 *
 * Fills b->clone: the medians of b->runs (at most
 * NVX_BENCH_MAX_SMALL_RUNS) clones made, mapped and read, and copies.
 *
 * Return: NVX_EXIT_OK, or an NVX_EXIT_* status after a message.
 */
int nvx_bench_clone(struct nvx_bench *b)
{
	const uint64_t bytes = NVX_BENCH_CLONE_BYTES;
	uint64_t create[NVX_BENCH_MAX_SMALL_RUNS], all[NVX_BENCH_MAX_SMALL_RUNS];
	uint64_t copy[NVX_BENCH_MAX_SMALL_RUNS];
	unsigned int r, runs = b->runs;
	int tfd, ret;
	void *src;

	if (runs > NVX_BENCH_MAX_SMALL_RUNS)
		runs = NVX_BENCH_MAX_SMALL_RUNS;
	ret = nvx_clone_template(b, bytes, &tfd);
	if (ret)
		return ret;
	src = mmap(NULL, bytes, PROT_READ, MAP_SHARED, tfd, 0);
	if (src == MAP_FAILED) {
		nvx_err("bench grant: read-only mmap of the template: %s",
			strerror(errno));
		close(tfd);
		return NVX_EXIT_FAIL;
	}
	for (r = 0; r < runs && !ret; r++) {
		ret = nvx_clone_once(tfd, bytes, &create[r], &all[r]);
		if (!ret)
			ret = nvx_copy_once(src, bytes, &copy[r]);
		if (!ret && nvx_stop_signal())
			ret = NVX_EXIT_FAIL;
	}
	munmap(src, bytes);
	close(tfd);
	if (ret)
		return ret;
	b->clone.bytes = bytes;
	b->clone.create_ns = nvx_bench_median(create, runs);
	b->clone.read_ns = nvx_bench_median(all, runs);
	b->clone.copy_ns = nvx_bench_median(copy, runs);
	return NVX_EXIT_OK;
}

/**
 * nvx_bench_clone_json() - the "clone" member of bench grant --json
 * @b: the bench, measured.
 */
void nvx_bench_clone_json(struct nvx_bench *b)
{
	struct nvx_json *j = &b->ctx->js;

	nvx_json_object_begin(j, "clone");
	nvx_json_u64(j, "bytes", b->clone.bytes);
	nvx_json_u64(j, "create_ns", b->clone.create_ns);
	nvx_json_u64(j, "create_map_read_ns", b->clone.read_ns);
	nvx_json_u64(j, "copy_ns", b->clone.copy_ns);
	nvx_json_double(j, "ratio", nvx_bench_div(b->clone.copy_ns,
						  b->clone.read_ns));
	nvx_json_end(j);
}

/**
 * nvx_bench_clone_text() - the clones' lines
 * @b: the bench, measured.
 */
void nvx_bench_clone_text(struct nvx_bench *b)
{
	printf("\nclone of a %llu MiB template (medians): created in %.3f ms; created, mapped\n"
	       "and read all through in %.3f ms; copied into anonymous memory in %.3f ms\n"
	       "(copy / clone and read: %.2f)\n",
	       (unsigned long long)(b->clone.bytes >> 20),
	       b->clone.create_ns / 1e6, b->clone.read_ns / 1e6,
	       b->clone.copy_ns / 1e6,
	       nvx_bench_div(b->clone.copy_ns, b->clone.read_ns));
}
