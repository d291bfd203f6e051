// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": the kernel's own tools on user VMs.
 *
 * nvx-trace uvm (tools/nvx/trace: BPF programs on the nvx tracepoints)
 * and perf stat around a guest's pings count what the guest sent; and
 * nvx-trace refuses what it cannot do with a clear message and a
 * non-zero exit: bad usage, no BTF, no privilege.
 */
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "nvx_fixture.h"
#include "pool_util.h"
#include "trace_util.h"

#define PINGS	1000
#define UVM_EVENTS "nvx:nvx_uvm_msg_in,nvx:nvx_uvm_recv,nvx:nvx_uvm_msg_out"

FIXTURE(uvm_trace) {
	int fd;
	uint64_t grown;
};

/* The guest's RAM comes from the pool: 16 MiB for it, given back after. */
FIXTURE_SETUP(uvm_trace)
{
	if (!nvx_require_feature(_metadata, &self->fd, NVX_FEAT_UVM))
		SKIP(return, "no NVX_FEAT_UVM: user VMs not built");
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW, 16 << 20,
				 NVX_NODE_ANY, &self->grown));
}

FIXTURE_TEARDOWN(uvm_trace)
{
	uint64_t done;

	if (self->fd < 0)
		return;
	if (self->grown)
		EXPECT_EQ(0, wait_scrubbed(self->fd));
	if (self->grown)
		EXPECT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK,
					 self->grown, NVX_NODE_ANY, &done));
	close(self->fd);
}

static struct run run;
static struct tracer trace, perf;

/*
 * 1,000 pings from a guest (nvxtool uvm run, the fast path): nvx-trace's
 * histograms of ipc messages count 1,000 each (taken -> RECV -> reply ->
 * completion), nothing denied, the VM detached at its end; perf stat,
 * run beside it on the same tracepoints, counts as many nvx_uvm_msg_in
 * and nvx_uvm_msg_out events as nvx-trace counted messages of any type.
 */
TEST_F_TIMEOUT(uvm_trace, nvx_trace_and_perf_count_pings, 600)
{
	long long taken, in, out, recv;
	char n[16];

	snprintf(n, sizeof(n), "%d", PINGS);
	ASSERT_EQ(0, nvx_trace_start(&trace, "uvm")) TH_LOG("%s", trace.run.err);
	ASSERT_EQ(0, perf_stat_start(&perf, UVM_EVENTS))
		TH_LOG("%s", perf.run.err);
	nvxtool(&run, "uvm", "run", "test", "--", "ping", n, "1", NULL);
	tracer_stop(&perf);
	tracer_stop(&trace);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	ASSERT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	ASSERT_TRUE(WIFEXITED(trace.run.status)) TH_LOG("%s", trace.run.err);
	ASSERT_EQ(0, WEXITSTATUS(trace.run.status)) TH_LOG("%s", trace.run.err);

#define IPC "\"type_name\":\"ipc\""
	EXPECT_EQ(PINGS, trace_json_sum(trace.run.out, "taken", IPC, "value"))
		TH_LOG("%s", trace.run.out);
	EXPECT_EQ(PINGS, trace_json_sum(trace.run.out, "completed", IPC,
					"value"));
	EXPECT_EQ(PINGS, trace_json_sum(trace.run.out, "taken->completed",
					IPC, "count"));
	EXPECT_EQ(PINGS, trace_json_sum(trace.run.out, "taken->recv", IPC,
					"count"));
	EXPECT_EQ(PINGS, trace_json_sum(trace.run.out, "recv->completed", IPC,
					"count"));
	EXPECT_EQ(-1, trace_json_sum(trace.run.out, "denied", NULL, "value"));
	/* the VM ended once, detached: stopped for no fault */
	EXPECT_EQ(1, trace_json_sum(trace.run.out, "ended", NULL, "value"));
	EXPECT_EQ(1, trace_json_sum(trace.run.out, "ended",
				    "\"reason_name\":\"detached\"", "value"));

	/* every message of the run, of any type (ready, exit...) */
	taken = trace_json_sum(trace.run.out, "taken", NULL, "value");
	in = perf_stat_count(perf.run.err, "nvx:nvx_uvm_msg_in");
	out = perf_stat_count(perf.run.err, "nvx:nvx_uvm_msg_out");
	recv = perf_stat_count(perf.run.err, "nvx:nvx_uvm_recv");
	EXPECT_EQ(taken, in) TH_LOG("%s", perf.run.err);
	EXPECT_EQ(taken, out);
	EXPECT_EQ(trace_json_sum(trace.run.out, "taken->recv", NULL, "count"),
		  recv);
	TH_LOG("%lld messages (%d pings): perf stat %lld in, %lld RECV, %lld out",
	       taken, PINGS, in, recv, out);
}

/* Run nvx-trace ARGS...: its waitpid() status, output in run. */
static int nvx_trace(char *const *args)
{
	char *argv[RUN_ARGS + 1] = { "nvx-trace" };
	int i;

	for (i = 0; args[i] && i < RUN_ARGS - 1; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	memset(&run, 0, sizeof(run));
	return run_argv(&run, argv);
}

#define EXPECT_EXIT(code, want, ...) do {				\
	char *const _a[] = { __VA_ARGS__, NULL };			\
	int _st = nvx_trace(_a);					\
									\
	EXPECT_TRUE(WIFEXITED(_st) && WEXITSTATUS(_st) == (code))	\
		TH_LOG("%s: status %#x: %s", run.cmd, _st, run.err);	\
	EXPECT_NE(NULL, strstr(run.err, want))				\
		TH_LOG("%s: %s", run.cmd, run.err);			\
} while (0)

/* Bad usage: status 2 and what was wrong. */
TEST_F(uvm_trace, nvx_trace_bad_usage)
{
	EXPECT_EXIT(2, "Usage: nvx-trace", "-d");
	EXPECT_EXIT(2, "unknown command 'bogus'", "bogus");
	EXPECT_EXIT(2, "--interval: not a number of seconds: x", "uvm", "-i",
		    "x");
	EXPECT_EXIT(2, "--duration: not a number of seconds: -1", "uvm", "-d",
		    "-1");
	EXPECT_EXIT(2, "unexpected argument 'extra'", "pool", "extra");
}

/*
 * No BTF: a file that does not exist, and one that is not BTF, in place
 * of the kernel's (this kernel has BTF: the message for a kernel without
 * it is the first case's, from the same check).
 */
TEST_F(uvm_trace, nvx_trace_without_btf)
{
	EXPECT_EXIT(1, "--btf /nonexistent: No such file", "uvm", "--btf",
		    "/nonexistent");
	EXPECT_EXIT(1, "nvx-trace: cannot", "uintr", "--btf", "/etc/hostname");
	/* libbpf reads no module BTF beside a file: refused, and said why */
	EXPECT_EXIT(1, "--btf works for uintr only", "pool", "--btf",
		    "/etc/hostname");
}

/*
 * Not root: refused before anything is loaded, and said so; the same
 * command as root runs (a second and a summary).
 */
TEST_F(uvm_trace, nvx_trace_unprivileged)
{
	char *const argv[] = { "setpriv", "--reuid=65534", "--regid=65534",
			       "--clear-groups", "nvx-trace", "pool", "-d",
			       "1", "-j", NULL };
	int st;

	st = run_argv(&run, argv);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1)
		TH_LOG("%s: status %#x: %s", run.cmd, st, run.err);
	EXPECT_NE(NULL, strstr(run.err, "run as root")) TH_LOG("%s", run.err);
	EXPECT_EQ(0, run.len[0]) TH_LOG("%s", run.out);

	memset(&run, 0, sizeof(run));
	st = run_argv(&run, &argv[4]);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("%s: status %#x: %s", run.cmd, st, run.err);
	EXPECT_NE(NULL, strstr(run.out, "{\"tool\":\"pool\","))
		TH_LOG("%s", run.out);
}

/* Text: a table per interval under a time stamp, then the summary. */
TEST_F(uvm_trace, nvx_trace_intervals)
{
	char *const argv[] = { "nvx-trace", "pool", "-i", "1", "-d", "3",
			       NULL };
	unsigned int stamps = 0;
	const char *p;
	int st;

	st = run_argv(&run, argv);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("%s: status %#x: %s", run.cmd, st, run.err);
	/* "HH:MM:SS" lines */
	for (p = run.out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned int h, m, sec;
		char nl;

		if (*p >= '0' && *p <= '9' &&
		    sscanf(p, "%2u:%2u:%2u%c", &h, &m, &sec, &nl) == 4 &&
		    nl == '\n')
			stamps++;
	}
	EXPECT_LE(2U, stamps) TH_LOG("%s", run.out);
	EXPECT_GE(3U, stamps) TH_LOG("%s", run.out);
	EXPECT_NE(NULL, strstr(run.out, "summary, ")) TH_LOG("%s", run.out);
}

TEST_HARNESS_MAIN
