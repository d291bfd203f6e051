/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx-bench: one benchmark per file, after
 * tools/testing/selftests/bpf/bench.c + benchs/. bench.c holds main(),
 * the table of benchmarks and the helpers they share; a benchmark
 * defines its handler and usage, declared here, and adds one entry to
 * nvx_benchs[] in bench.c.
 *
 * Every benchmark prints text, or with -j/--json one JSON object whose
 * top-level numeric "headline" member is its main result.
 */
#ifndef _NVX_BENCH_H
#define _NVX_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "nvxtool.h"

extern const char nvx_bench_grant_usage[];
extern const char nvx_bench_uvm_usage[];
extern const char nvx_bench_uintr_usage[];
extern const char nvx_bench_srq_usage[];
extern const char nvx_bench_sys_usage[];
extern const char nvx_bench_http_usage[];
extern const char nvx_bench_scale_usage[];
extern const char nvx_bench_vmnet_usage[];
int cmd_bench_grant(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_uvm(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_uintr(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_srq(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_sys(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_http(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_scale(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_bench_vmnet(struct nvx_ctx *ctx, int argc, char **argv);

/* Start to first byte on stdout of @argv (NULL: a fork), in ns: bench.c. */
int nvx_bench_first_byte(char *const argv[], uint64_t *ns);
/* qsort() order of uint64_t values. */
int nvx_bench_cmp_u64(const void *a, const void *b);
/* Sort @v and return the median of its @n values. */
uint64_t nvx_bench_median(uint64_t *v, unsigned int n);
/* Of @n sorted values, the one at fraction @p (0.5: the median), in ms. */
double nvx_bench_pct_ms(const uint64_t *v, unsigned int n, double p);
/* @num / @den, or NAN unless @den > 0. */
double nvx_bench_div(double num, double den);
/* Give back @bytes the benchmark @what grew the pool by. */
void nvx_bench_shrink(struct nvx_ctx *ctx, uint64_t bytes, const char *what);
/* nvx_two_cpus() for a benchmark: NVX_EXIT_OK, or a failure reported. */
int nvx_bench_cpus(struct nvx_ctx *ctx, int cpu[2], bool *same_cpu);

#endif /* _NVX_BENCH_H */
