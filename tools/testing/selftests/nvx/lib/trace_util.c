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
	char ctl[80];
	char *const argv[] = { "perf", "stat", "-a", "-x,", "-D", "-1",
			       "--control", ctl, "-e", (char *)events, NULL };
	char buf[8] = { 0 };
	int fd, ok = 0;

	memset(t, 0, sizeof(*t));
	snprintf(t->ctl, sizeof(t->ctl), "/tmp/nvx-perf-ctl.%d", getpid());
	snprintf(t->ack, sizeof(t->ack), "/tmp/nvx-perf-ack.%d", getpid());
	unlink(t->ctl);
	unlink(t->ack);
	if (mkfifo(t->ctl, 0600) || mkfifo(t->ack, 0600))
		goto out;
	snprintf(ctl, sizeof(ctl), "fifo:%s,%s", t->ctl, t->ack);
	t->pid = spawn(&t->run, argv);
	if (t->pid < 0)
		goto out;
	/* perf opens both when it starts; counting begins at the ack */
	fd = open(t->ctl, O_WRONLY);
	if (fd < 0)
		goto out;
	ok = write(fd, "enable\n", 7) == 7;
	close(fd);
	fd = open(t->ack, O_RDONLY);
	if (fd < 0)
		goto out;
	ok = ok && read(fd, buf, sizeof(buf) - 1) > 0 && !strncmp(buf, "ack", 3);
	close(fd);
out:
	unlink(t->ctl);
	unlink(t->ack);
	if (ok)
		return 0;
	if (t->pid > 0)
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
	waitpid(t->pid, &t->run.status, 0);
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
	char want[96];
	const char *p, *line;

	/* a line: COUNT,UNIT,EVENT,... */
	snprintf(want, sizeof(want), ",%s,", event);
	for (p = strstr(out, want); p; p = strstr(p + 1, want)) {
		line = p;
		while (line > out && line[-1] != '\n')
			line--;
		if (line[0] >= '0' && line[0] <= '9')
			return strtoll(line, NULL, 10);
	}
	return -1;
}
