// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests: nvx-trace and perf stat around a workload.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvx_test.h"
#include "trace_util.h"

#define TRACER_MS 60000	/* to attach, and to end after SIGINT */

int nvx_trace_start(struct tracer *t, const char *tool)
{
	char *const argv[] = { "nvx-trace", (char *)tool, "-j", NULL };

	memset(t, 0, sizeof(*t));
	t->run.pdeath_sig = SIGINT;
	t->pid = spawn(&t->run, argv);
	if (t->pid < 0)
		return -1;
	if (pump_stream(&t->run, 1, now_ms() + TRACER_MS, "tracing nvx"))
		return 0;
	tracer_stop(t);
	return -1;
}

int perf_stat_start(struct tracer *t, const char *events)
{
	char *const argv[] = { "perf", "stat", "-a", "-x,", "-I", "1000",
			       "-e", (char *)events, NULL };

	memset(t, 0, sizeof(*t));
	t->run.pdeath_sig = SIGINT;
	t->pid = spawn(&t->run, argv);
	if (t->pid < 0)
		return -1;
	/*
	 * The counters count from before the first interval's line. (Not
	 * perf's --control enable: perf 6.1 counted nothing after it with
	 * -a.)
	 */
	if (pump_stream(&t->run, 1, now_ms() + TRACER_MS, ",nvx:"))
		return 0;
	tracer_stop(t);
	return -1;
}

int tracer_stop(struct tracer *t)
{
	if (t->pid <= 0)
		return -1;
	kill(t->pid, SIGINT);
	if (!pump(&t->run, now_ms() + TRACER_MS, NULL)) {
		t->run.timed_out = true;
		kill(-t->pid, SIGKILL);
	}
	pump_end(&t->run);
	if (waitpid(t->pid, &t->run.status, 0) < 0)
		t->run.status = -1;
	t->pid = 0;
	return t->run.status;
}

long long trace_json_sum(const char *json, const char *what,
			 const char *filter, const char *key)
{
	char head[96], k[48], *obj;
	const char *p, *end, *v;
	long long sum = -1;
	size_t n;

	snprintf(head, sizeof(head), "{\"what\":\"%s\",", what);
	snprintf(k, sizeof(k), "\"%s\":", key);
	for (p = strstr(json, head); p; p = strstr(p + 1, head)) {
		/* the entry: up to the next entry, or the end */
		end = strstr(p + 1, "{\"what\":");
		n = end ? (size_t)(end - p) : strlen(p);
		obj = strndup(p, n);
		if (!obj)
			return -1;
		v = strstr(obj, k);
		if (v && (!filter || strstr(obj, filter))) {
			if (sum < 0)
				sum = 0;
			sum += strtoll(v + strlen(k), NULL, 10);
		}
		free(obj);
	}
	return sum;
}

long long perf_stat_count(const char *out, const char *event)
{
	const char *line, *f[4];
	long long sum = -1;
	size_t n = strlen(event);
	int i;

	/* lines of -I -x,: TIME,COUNT,UNIT,EVENT,... one per interval */
	for (line = out; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		f[0] = line;
		for (i = 1; i < 4 && f[i - 1]; i++) {
			f[i] = strchr(f[i - 1], ',');
			if (f[i])
				f[i]++;
		}
		if (i < 4 || !f[3] || strncmp(f[3], event, n) || f[3][n] != ',')
			continue;
		if (f[1][0] < '0' || f[1][0] > '9')
			continue;	/* <not counted> */
		if (sum < 0)
			sum = 0;
		sum += strtoll(f[1], NULL, 10);
	}
	return sum;
}
