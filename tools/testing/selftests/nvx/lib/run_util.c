// SPDX-License-Identifier: GPL-2.0
/*
 * Run a command from a test and capture its output (run_util.h).
 */
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

int run_argv(struct run *r, char *const argv[])
{
	pid_t pid = spawn(r, argv);

	if (pid < 0)
		return r->status;
	if (!pump(r, now_ms() + RUN_MS, NULL)) {
		r->timed_out = true;
		kill(-pid, SIGKILL);
	}
	pump_end(r);
	waitpid(pid, &r->status, 0);
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
