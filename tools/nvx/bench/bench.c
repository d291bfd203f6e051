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
 *   sys    the system side: a denied message, VM-to-VM messages and a
 *          forwarded pread against what a system process or host does
 *   http   an HTTP echo function served from user VMs against host
 *          servers: cold start to first response, keep-alive rate
 *   scale  user VMs started from a template against fresh boots, fork+exec
 *          and fork; memory per idle clone
 *   vmnet  UDP echoed by a user VM on its own receive queue against a
 *          host process on a veth pair; exits per frame
 *
 * The options, the dispatcher and the JSON writer are nvxtool's
 * (common.c, json.c); bench.h describes how a benchmark plugs in.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvx/pool.h>

#include "bench.h"

/* A benchmark NAME: its usage nvx_bench_NAME_usage, cmd_bench_NAME. */
#define NVX_BENCH(bench, what)						\
	{								\
		.name = #bench,						\
		.summary = what,					\
		.usage = nvx_bench_##bench##_usage,			\
		.fn = cmd_bench_##bench,				\
	}

static const struct nvx_cmd nvx_benchs[] = {
	NVX_BENCH(grant, "time nvx grants against the kernel's other ways to get zeroed memory"),
	NVX_BENCH(uvm, "user VMs: fast path vs slow path, cold start"),
	NVX_BENCH(sys, "the system side: policy, VM-to-VM, forwarded file calls"),
	NVX_BENCH(http, "an HTTP function in user VMs against host servers"),
	NVX_BENCH(scale, "user VMs from a template against fresh boots and processes; density"),
	NVX_BENCH(vmnet, "UDP echoed by a user VM on its own RX queue against a process on veth"),
	NVX_BENCH(uintr, "time nvx user interrupts against signals and eventfd"),
	NVX_BENCH(srq, "measure nvx shared RX buffers against per-queue buffers and AF_PACKET"),
	{ }
};

static const struct nvx_prog nvx_bench = {
	.name = "nvx-bench",
	.top_word = "benchmark",
	.top_arg = "BENCHMARK",
	.args = "BENCHMARK [ARGS...]",
	.help_args = "[BENCHMARK]",
	.about = "Benchmarks of nvx against what the kernel offers without it.\n"
		 "A benchmark may be abbreviated to a unique prefix.\n",
	.list_title = "Benchmarks",
	.opts_after = "BENCHMARK",
	.json_note = "text; its numeric \"headline\" is the result",
	.epilog = "Exit status: as for nvxtool (0 success, 1 failure, 2 usage\n"
		  "error, 3 no nvx device, 4 permission denied).\n",
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

/**
 * nvx_bench_cpus() - the CPUs of a benchmark's two threads
 * @ctx: the benchmark.
 * @cpu: nvx_two_cpus()'s choice.
 * @same_cpu: set when this process may use one CPU only.
 *
 * Return: NVX_EXIT_OK, or NVX_EXIT_FAIL after a message.
 */
int nvx_bench_cpus(struct nvx_ctx *ctx, int cpu[2], bool *same_cpu)
{
	int ncpus = nvx_two_cpus(cpu);

	if (ncpus < 0) {
		nvx_err("%s: which CPUs may this process use? %s", ctx->path,
			strerror(-ncpus));
		return NVX_EXIT_FAIL;
	}
	*same_cpu = ncpus < 2;
	return NVX_EXIT_OK;
}

int main(int argc, char **argv)
{
	return nvx_main(&nvx_bench, argc, argv);
}

/**
 * nvx_bench_shrink() - give back to the pool what a benchmark grew
 * @ctx: the benchmark.
 * @bytes: what it grew.
 * @what: its name, for the warning.
 *
 * Waits (up to 5 s) for the scrubber to clean what the benchmark's
 * grants returned.
 */
void nvx_bench_shrink(struct nvx_ctx *ctx, uint64_t bytes, const char *what)
{
	struct nvx_pool_resize r;
	int i;

	for (i = 0; i < 100 && bytes; i++) {
		memset(&r, 0, sizeof(r));
		r.bytes = bytes;
		/* EBUSY: part of it is dirty yet; done says what went */
		if (!ioctl(ctx->fd, NVX_IOC_POOL_SHRINK, &r) || errno == EBUSY)
			bytes -= r.done < bytes ? r.done : bytes;
		if (bytes)
			usleep(50000);
	}
	if (bytes)
		nvx_warn("bench %s: %llu bytes not given back to the pool",
			 what, (unsigned long long)bytes);
}

/**
 * nvx_bench_first_byte() - start to first byte of a program
 * @argv: the program (a path) and its arguments; its stdout is a pipe,
 *	its stdin /dev/null. NULL: no exec, the forked child of this
 *	process writes a byte itself (a fork of a warm process).
 * @ns: out: from before fork() to the first byte read, in ns.
 *
 * Return: 0 when it also exited 0, else a negative errno.
 */
int nvx_bench_first_byte(char *const argv[], uint64_t *ns)
{
	int p[2], st, dn;
	uint64_t t0;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	t0 = nvx_now_ns();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid && !argv) {
		c = 'x';
		_exit(write(p[1], &c, 1) != 1);
	}
	if (!pid) {
		dup2(p[1], 1);
		dn = open("/dev/null", O_RDONLY);
		if (dn >= 0)
			dup2(dn, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		waitpid(pid, &st, 0);
		return -EPIPE;
	}
	*ns = nvx_now_ns() - t0;
	while (read(p[0], &c, 1) > 0)
		;
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -ECHILD;
	return 0;
}
