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

/* The first @max lines of file @path, appended to @r's stderr. */
static void run_note_file(struct run *r, const char *path, int max)
{
	char buf[2048], *p = buf;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	while (max-- && (p = strchr(p, '\n')))
		p++;
	if (p)
		*p = 0;
	run_note(r, "%s%s", buf, buf[n - 1] == '\n' || p ? "" : "\n");
}

/*
 * A command about to be killed for running too long: where each thread
 * of its process group waits (comm, wchan, the top of its kernel stack,
 * readable as root), so that a hang in a CI log says where it is.
 */
static void run_note_stuck(struct run *r, pid_t pgid)
{
	char path[560], buf[512];
	struct dirent *p, *t;
	DIR *d, *td;
	int fd, n;

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
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		/* pid (comm) state ppid pgrp: comm may hold anything */
		c = strrchr(buf, ')');
		if (!c || sscanf(c + 1, " %*c %*d %d", &n) != 1 || n != pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		td = opendir(path);
		if (!td)
			continue;
		while ((t = readdir(td))) {
			if (t->d_name[0] == '.')
				continue;
			run_note(r, "%s/%s ", p->d_name, t->d_name);
			snprintf(path, sizeof(path), "/proc/%s/task/%s/comm",
				 p->d_name, t->d_name);
			run_note_file(r, path, 1);
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stack",
				 p->d_name, t->d_name);
			run_note_file(r, path, 8);
		}
		closedir(td);
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
