/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own tools around a workload (lib/trace_util.c): nvx-trace
 * (tools/nvx/trace) and perf stat, started before it and stopped after,
 * and what they printed.
 */
#ifndef NVX_TRACE_UTIL_H
#define NVX_TRACE_UTIL_H

#include <stdint.h>
#include <sys/types.h>

#include "run_util.h"

/* A tool running in the background, and its output once stopped. */
struct tracer {
	struct run run;
	pid_t pid;
};

/*
 * Start `nvx-trace TOOL -j` and wait until its programs are attached:
 * 0, or -1 with the reason in t->run.err.
 */
int nvx_trace_start(struct tracer *t, const char *tool);

/*
 * Start `perf stat -a -x, -I 1000` on the comma-separated @events,
 * counting from when this returns (its first interval printed): 0, or -1.
 */
int perf_stat_start(struct tracer *t, const char *events);

/* SIGINT the tool, collect what it printed, reap it: waitpid()'s status. */
int tracer_stop(struct tracer *t);

/*
 * In nvx-trace's JSON: the sum of member @key ("count", "value") over the
 * entries whose "what" is @what and whose text holds @filter (a member
 * such as "\"type_name\":\"ipc\""; NULL for all). -1 when none matched.
 */
long long trace_json_sum(const char *json, const char *what,
			 const char *filter, const char *key);

/* In perf stat -I -x, output: @event's count, summed, or -1. */
long long perf_stat_count(const char *out, const char *event);

#endif /* NVX_TRACE_UTIL_H */
