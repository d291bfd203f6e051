// SPDX-License-Identifier: GPL-2.0
/*
 * Run a command from a test and capture its output (run_util.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/prctl.h>

#include "nvx_test.h"
#include "run_util.h"

pid_t spawn(struct run *r, char *const argv[])
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, i, fd;
	pid_t pid = -1;
	size_t len = 0;

	r->cmd[0] = 0;
	r->out[0] = 0;
	r->err[0] = 0;
	r->status = -1;
	r->timed_out = false;
	for (i = 0; i < 2; i++) {
		r->fd[i] = -1;
		r->len[i] = 0;
	}
	for (i = 0; argv[i] && len < sizeof(r->cmd); i++)
		len += snprintf(r->cmd + len, sizeof(r->cmd) - len, "%s%s",
				i ? " " : "", argv[i]);
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		goto out;
	pid = fork();
	if (!pid) {
		struct rlimit no_core = { 0, 0 };

		fd = open("/dev/null", O_RDONLY);
		setpgid(0, 0);
		setrlimit(RLIMIT_CORE, &no_core);
		/* a tool left running by a test that failed ends with it */
		if (r->pdeath_sig)
			prctl(PR_SET_PDEATHSIG, r->pdeath_sig);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(po[1], 1) < 0 ||
		    dup2(pe[1], 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
out:
	for (i = 0; i < 2; i++) {
		/* the write ends are the child's; the read ends pump()'s */
		if (po[i] >= 0 && (i || pid < 0))
			close(po[i]);
		if (pe[i] >= 0 && (i || pid < 0))
			close(pe[i]);
	}
	if (pid > 0) {
		r->fd[0] = po[0];
		r->fd[1] = pe[0];
	}
	return pid;
}

bool pump_stream(struct run *r, int stream, uint64_t deadline,
		 const char *want)
{
	char *buf[2] = { r->out, r->err }, tmp[4096];
	struct pollfd p[2];
	uint64_t now;
	ssize_t got;
	size_t k;
	int i;

	for (;;) {
		if (want && strstr(buf[stream], want))
			return true;
		if (r->fd[0] < 0 && r->fd[1] < 0)
			return !want;
		now = now_ms();
		if (now >= deadline)
			return false;
		for (i = 0; i < 2; i++)
			p[i] = (struct pollfd){ .fd = r->fd[i],
						.events = POLLIN };
		if (poll(p, 2, deadline - now) < 0 && errno != EINTR)
			return false;
		for (i = 0; i < 2; i++) {
			if (r->fd[i] < 0 || !p[i].revents)
				continue;
			got = read(r->fd[i], tmp, sizeof(tmp));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(r->fd[i]);
				r->fd[i] = -1;
				continue;
			}
			k = (size_t)got < RUN_OUT - 1 - r->len[i] ?
				(size_t)got : RUN_OUT - 1 - r->len[i];
			memcpy(buf[i] + r->len[i], tmp, k);
			r->len[i] += k;
			buf[i][r->len[i]] = 0;
		}
	}
}

bool pump(struct run *r, uint64_t deadline, const char *want)
{
	return pump_stream(r, 0, deadline, want);
}

void pump_end(struct run *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (r->fd[i] >= 0)
			close(r->fd[i]);
		r->fd[i] = -1;
	}
}

/* Append printf() output to @r's stderr, as far as it has room. */
static void run_note(struct run *r, const char *fmt, ...)
{
	size_t room = RUN_OUT - 1 - r->len[1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->err + r->len[1], room + 1, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->len[1] += (size_t)n < room ? (size_t)n : room;
}

/* The first @n - 1 bytes of file @path, NUL-terminated: 0 or -1. */
static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k = -1;

	buf[0] = 0;
	if (fd < 0)
		return -1;
	k = read(fd, buf, n - 1);
	close(fd);
	buf[k > 0 ? k : 0] = 0;
	return k < 0 ? -1 : 0;
}

void thread_report(pid_t pid, void (*fn)(void *arg, const char *text),
		   void *arg)
{
	char path[320], comm[64], stat[512], wchan[64], stack[2048];
	char text[2400], *st, *p;
	struct dirent *de;
	int max;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* a thread that went meanwhile: its files are gone */
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid,
			 de->d_name);
		if (read_small(path, comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = 0;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid,
			 de->d_name);
		read_small(path, stat, sizeof(stat));
		/* pid (comm) state ...: comm may hold anything */
		st = strrchr(stat, ')');
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid,
			 de->d_name);
		read_small(path, wchan, sizeof(wchan));
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", pid,
			 de->d_name);
		read_small(path, stack, sizeof(stack));
		/* the top of the stack: 8 lines */
		for (p = stack, max = 8; max-- && (p = strchr(p, '\n'));)
			p++;
		if (p)
			*p = 0;
		snprintf(text, sizeof(text), "%d/%s (%s): state %c, wchan %s\n%s",
			 pid, de->d_name, comm, st && st[1] ? st[2] : '?',
			 wchan[0] ? wchan : "-", stack);
		fn(arg, text);
	}
	closedir(d);
}

static void run_note_text(void *arg, const char *text)
{
	run_note(arg, "%s", text);
}

/*
 * A command about to be killed for running too long: where each thread
 * of its process group waits (thread_report()), so that a hang in a CI
 * log says where it is.
 */
static void run_note_stuck(struct run *r, pid_t pgid)
{
	char path[300], buf[512];
	struct dirent *p;
	DIR *d;
	int n;

	d = opendir("/proc");
	if (!d)
		return;
	run_note(r, "\n[run_util: still running after %d s; its threads:]\n",
		 RUN_MS / 1000);
	while ((p = readdir(d))) {
		char *c;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", p->d_name);
		if (read_small(path, buf, sizeof(buf)))
			continue;
		/* pid (comm) state ppid pgrp: comm may hold anything */
		c = strrchr(buf, ')');
		if (!c || sscanf(c + 1, " %*c %*d %d", &n) != 1 || n != pgid)
			continue;
		thread_report(atoi(p->d_name), run_note_text, r);
	}
	closedir(d);
}

/*
 * A command killed by a signal says nothing itself: note on its stderr
 * how it ended, for the test's messages.
 */
static void run_note_end(struct run *r)
{
	if (r->timed_out)
		run_note(r, "\n[run_util: killed after %d s]", RUN_MS / 1000);
	else if (WIFSIGNALED(r->status))
		run_note(r, "\n[run_util: ended by signal %d (%s)]",
			 WTERMSIG(r->status), strsignal(WTERMSIG(r->status)));
}

int run_argv(struct run *r, char *const argv[])
{
	pid_t pid = spawn(r, argv);

	if (pid < 0)
		return r->status;
	if (!pump(r, now_ms() + RUN_MS, NULL)) {
		r->timed_out = true;
		run_note_stuck(r, pid);
		kill(-pid, SIGKILL);
	}
	pump_end(r);
	waitpid(pid, &r->status, 0);
	run_note_end(r);
	return r->status;
}

int nvxtool(struct run *r, ...)
{
	char *argv[RUN_ARGS + 1] = { (char *)"nvxtool" };
	int n = 1;
	va_list ap;

	va_start(ap, r);
	while (n < RUN_ARGS && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return run_argv(r, argv);
}
