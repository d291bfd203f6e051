// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench: the nvx benchmarks, one program, one benchmark per file:
 *
 *	nvx-bench [OPTIONS] BENCHMARK [ARGS...]
 *
 *   grant  zeroed memory from the pool against the kernel's other ways
 *   uvm    user VMs: the PMIO fast path against the slow path, cold start
 *   uintr  user interrupts against signals and eventfd
 *   srq    shared RX buffers against per-queue buffers and AF_PACKET
 *
 * The options, the dispatcher and the JSON writer are nvxtool's
 * (common.c, json.c); bench.h describes how a benchmark plugs in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

static const struct nvx_cmd nvx_benchs[] = {
	{
		.name = "grant",
		.summary = "time nvx grants against the kernel's other ways to get zeroed memory",
	.usage = nvx_bench_grant_usage,
		.fn = cmd_bench_grant,
	},
	{
		.name = "uvm",
		.summary = "user VMs: fast path vs slow path, cold start",
		.usage = nvx_bench_uvm_usage,
		.fn = cmd_bench_uvm,
	},
	{
		.name = "uintr",
		.summary = "time nvx user interrupts against signals and eventfd",
		.usage = nvx_bench_uintr_usage,
		.fn = cmd_bench_uintr,
	},
	{
		.name = "srq",
		.summary = "measure nvx shared RX buffers against per-queue buffers and AF_PACKET",
		.usage = nvx_bench_srq_usage,
		.fn = cmd_bench_srq,
	},
	{ }
};

static const struct nvx_prog nvx_bench;

static void nvx_bench_usage(FILE *f)
{
	fputs("Usage: nvx-bench [OPTIONS] BENCHMARK [ARGS...]\n"
	      "       nvx-bench help [BENCHMARK]\n"
	      "\n"
	      "Benchmarks of nvx against what the kernel offers without it.\n"
	      "A benchmark may be abbreviated to a unique prefix.\n"
	      "\n"
	      "Benchmarks:\n", f);
	nvx_print_cmds(f, &nvx_bench);
	fputs("\n"
	      "Options (also after BENCHMARK):\n"
	      "  -j, --json         print one JSON object on stdout instead of\n"
	      "                     text; its numeric \"headline\" is the result\n"
	      "  -p, --pretty       the same, pretty-printed (implies --json)\n"
	      "  -h, --help         show this help, or with BENCHMARK its help\n"
	      "Options (before BENCHMARK):\n"
	      "  -d, --device PATH  the nvx control device (default: $"
	      NVX_DEVICE_ENV ", else " NVX_DEFAULT_DEVICE ")\n"
	      "\n"
	      "Exit status: as for nvxtool (0 success, 1 failure, 2 usage\n"
	      "error, 3 no nvx device, 4 permission denied).\n", f);
}

static const struct nvx_prog nvx_bench = {
	.name = "nvx-bench",
	.top_word = "benchmark",
	.usage = nvx_bench_usage,
	.cmds = nvx_benchs,
};

/**
 * nvx_bench_cmp_u64() - qsort() order of uint64_t values
 * @a: one.
 * @b: the other.
 *
 * Return: -1, 0 or 1.
 */
int nvx_bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * nvx_bench_median() - sort values and take their median
 * @v: the values, sorted on return.
 * @n: how many, at least 1.
 *
 * Return: the median; of an even number, the mean of the middle two.
 */
uint64_t nvx_bench_median(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), nvx_bench_cmp_u64);
	if (n % 2)
		return v[n / 2];
	return v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] & v[n / 2] & 1);
}

/**
 * nvx_bench_pct_ms() - a percentile of sorted nanoseconds, in ms
 * @v: the values, sorted.
 * @n: how many, at least 1.
 * @p: the fraction, 0 to 1: 0.5 for the median.
 *
 * Return: the value nearest to @p of the way, in milliseconds.
 */
double nvx_bench_pct_ms(const uint64_t *v, unsigned int n, double p)
{
	unsigned int i = (unsigned int)(p * (n - 1) + 0.5);

	return v[i] / 1e6;
}

/**
 * nvx_bench_div() - a ratio that may not exist
 * @num: the numerator.
 * @den: the denominator.
 *
 * Return: @num / @den, or NAN unless @den > 0 (JSON null).
 */
double nvx_bench_div(double num, double den)
{
	return den > 0 ? num / den : NAN;
}

int main(int argc, char **argv)
{
	return nvx_main(&nvx_bench, argc, argv);
}
