// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench grant, the scrubber: how fast it makes a released grant clean
 * again, its zeroing rate with either method (zero_nontemporal), and what
 * this CPU clears from userspace in the same run (memset() and
 * non-temporal stores).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <emmintrin.h>

#include <nvx/pool.h>

#include "grant.h"

/* Set the zero_nontemporal module parameter: 0, or -errno. */
static int nvx_bench_set_nt(int on)
{
	int fd = open(NVX_PARAM_PATH "zero_nontemporal", O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, on ? "Y" : "N", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

/* 16-byte non-temporal stores of zero over @len (a multiple of 64) */
static void nvx_zero_nt_user(void *p, size_t len)
{
	__m128i z = _mm_setzero_si128();
	char *q = p, *end = q + len;

	for (; q < end; q += 64) {
		_mm_stream_si128((__m128i *)q, z);
		_mm_stream_si128((__m128i *)(q + 16), z);
		_mm_stream_si128((__m128i *)(q + 32), z);
		_mm_stream_si128((__m128i *)(q + 48), z);
	}
	_mm_sfence();
}

/**
 * nvx_bench_user_zero() - what this CPU clears from userspace
 * @b: the bench; gets user_bytes, user_memset_ns and user_nt_ns
 * @bytes: the largest size measured; the buffer is at most
 *	NVX_BENCH_USER_MAX
 *
 * The fastest of NVX_BENCH_USER_RUNS passes of memset() and of
 * non-temporal stores over one populated buffer.
 *
 * Return: NVX_EXIT_OK, or NVX_EXIT_FAIL after a message.
 */
int nvx_bench_user_zero(struct nvx_bench *b, uint64_t bytes)
{
	uint64_t len = bytes < NVX_BENCH_USER_MAX ? bytes : NVX_BENCH_USER_MAX;
	uint64_t t, ns;
	unsigned int i;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		nvx_err("bench grant: a buffer of %llu MiB to zero: %s",
			(unsigned long long)(len >> 20), strerror(errno));
		return NVX_EXIT_FAIL;
	}
	b->user_bytes = len;
	b->user_memset_ns = UINT64_MAX;
	b->user_nt_ns = UINT64_MAX;
	for (i = 0; i < NVX_BENCH_USER_RUNS; i++) {
		t = nvx_now_ns();
		memset(p, 0, len);
		/* the buffer is used: the memset is not left out */
		__asm__ __volatile__("" : : "r" (p) : "memory");
		ns = nvx_now_ns() - t;
		if (ns < b->user_memset_ns)
			b->user_memset_ns = ns;
		t = nvx_now_ns();
		nvx_zero_nt_user(p, len);
		ns = nvx_now_ns() - t;
		if (ns < b->user_nt_ns)
			b->user_nt_ns = ns;
	}
	munmap(p, len);
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
	err = -nvx_grant_new(b->ctx->fd, b->node, bytes, NVX_GRANT_CLOEXEC, &fd);
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
	err = -nvx_pool_stats_get(b->ctx->fd, NVX_NODE_ANY, &s0);
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
	err = -nvx_pool_stats_get(b->ctx->fd, NVX_NODE_ANY, &s1);
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

/**
 * nvx_bench_scrubs() - the scrubber's rates
 * @b: the bench; gets the scrub and alt_scrub fields
 * @bytes: the size of the grant released
 *
 * With the zeroing method in use, then, where the kernel has the choice
 * and lets root make it, once with the other method (the parameter
 * restored after).
 *
 * Return: NVX_EXIT_OK, or an NVX_EXIT_* status after a message.
 */
int nvx_bench_scrubs(struct nvx_bench *b, uint64_t bytes)
{
	uint64_t again, scrubbed, ns;
	int ret, err;

	ret = nvx_bench_scrub(b, bytes);
	if (ret || b->nt < 0 || nvx_bench_set_nt(!b->nt))
		return ret;
	again = b->clean_again_ns;
	scrubbed = b->scrubbed_bytes;
	ns = b->scrub_ns;
	ret = nvx_bench_scrub(b, bytes);
	b->alt_scrubbed_bytes = b->scrubbed_bytes;
	b->alt_scrub_ns = b->scrub_ns;
	b->clean_again_ns = again;
	b->scrubbed_bytes = scrubbed;
	b->scrub_ns = ns;
	err = nvx_bench_set_nt(b->nt);
	if (err && !ret) {
		nvx_err("bench grant: restoring " NVX_PARAM_PATH "zero_nontemporal: %s",
			strerror(-err));
		ret = NVX_EXIT_FAIL;
	}
	return ret;
}

static const char *nvx_bench_method_name(int nt)
{
	return nt > 0 ? "nontemporal" : "clear_page";
}

/* The scrubber's rate over the faster of the userspace baselines. */
static double nvx_bench_scrub_vs_user(const struct nvx_bench *b)
{
	uint64_t user = b->user_memset_ns < b->user_nt_ns ?
			b->user_memset_ns : b->user_nt_ns;

	if (!b->scrub_ns || !user)
		return NAN;
	return nvx_mib_per_s(b->scrubbed_bytes, b->scrub_ns) /
	       nvx_mib_per_s(b->user_bytes, user);
}

/**
 * nvx_bench_scrub_json() - the "scrub" member of the JSON object
 * @b: the bench, measured
 * @bytes: the largest size
 */
void nvx_bench_scrub_json(struct nvx_bench *b, uint64_t bytes)
{
	struct nvx_json *j = &b->ctx->js;

	nvx_json_object_begin(j, "scrub");
	nvx_json_u64(j, "bytes", bytes);
	nvx_json_u64(j, "clean_again_ns", b->clean_again_ns);
	nvx_json_double(j, "mib_per_s",
			nvx_mib_per_s(bytes, b->clean_again_ns));
	nvx_json_u64(j, "scrubbed_bytes", b->scrubbed_bytes);
	nvx_json_u64(j, "scrub_ns", b->scrub_ns);
	nvx_json_double(j, "scrubber_mib_per_s",
			nvx_mib_per_s(b->scrubbed_bytes, b->scrub_ns));
	if (b->scrub_rate)
		nvx_json_u64(j, "rate_limit_mbps", b->scrub_rate);
	else
		nvx_json_null(j, "rate_limit_mbps");
	nvx_json_str(j, "method", nvx_bench_method_name(b->nt));
	if (b->alt_scrub_ns) {
		nvx_json_str(j, "other_method", nvx_bench_method_name(!b->nt));
		nvx_json_double(j, "other_method_mib_per_s",
				nvx_mib_per_s(b->alt_scrubbed_bytes,
					      b->alt_scrub_ns));
	} else {
		nvx_json_null(j, "other_method");
		nvx_json_null(j, "other_method_mib_per_s");
	}
	nvx_json_u64(j, "user_bytes", b->user_bytes);
	nvx_json_double(j, "user_memset_mib_per_s",
			nvx_mib_per_s(b->user_bytes, b->user_memset_ns));
	nvx_json_double(j, "user_nontemporal_mib_per_s",
			nvx_mib_per_s(b->user_bytes, b->user_nt_ns));
	nvx_json_double(j, "scrubber_vs_fastest_user",
			nvx_bench_scrub_vs_user(b));
	nvx_json_end(j);
}

/**
 * nvx_bench_scrub_text() - the scrubber's lines of the text output
 * @b: the bench, measured
 * @bytes: the largest size
 */
void nvx_bench_scrub_text(struct nvx_bench *b, uint64_t bytes)
{
	char h[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];

	nvx_fmt_bytes(h, sizeof(h), bytes);
	printf("\nscrub: a released grant of %s was clean again after %.3f ms (%.1f MiB/s)\n",
	       h, (double)b->clean_again_ns / NVX_NSEC_PER_MSEC,
	       nvx_mib_per_s(bytes, b->clean_again_ns));
	printf("scrubber: zeroed %s in %.3f ms of its own time (%.1f MiB/s; %s)\n",
	       nvx_fmt_bytes(h2, sizeof(h2), b->scrubbed_bytes),
	       (double)b->scrub_ns / NVX_NSEC_PER_MSEC,
	       nvx_mib_per_s(b->scrubbed_bytes, b->scrub_ns),
	       "scrubbed_bytes / scrub_ns");
	printf("scrubber zeroing method: %s (zero_nontemporal)\n",
	       nvx_bench_method_name(b->nt));
	if (b->alt_scrub_ns)
		printf("scrubber with %s instead: %.1f MiB/s\n",
		       nvx_bench_method_name(!b->nt),
		       nvx_mib_per_s(b->alt_scrubbed_bytes, b->alt_scrub_ns));
	printf("userspace, %s buffer, fastest of %d: memset %.1f MiB/s, ",
	       nvx_fmt_bytes(h2, sizeof(h2), b->user_bytes), NVX_BENCH_USER_RUNS,
	       nvx_mib_per_s(b->user_bytes, b->user_memset_ns));
	printf("non-temporal stores %.1f MiB/s\n",
	       nvx_mib_per_s(b->user_bytes, b->user_nt_ns));
	printf("scrubber / fastest userspace: %.2f\n",
	       nvx_bench_scrub_vs_user(b));
	if (b->scrub_rate)
		printf("scrubber rate limit: %llu MiB/s (scrub_rate_mbps)\n",
		       (unsigned long long)b->scrub_rate);
}
