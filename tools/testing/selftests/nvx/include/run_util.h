/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a command (nvxtool, a server) from a test and capture its stdout
 * and stderr: lib/run_util.c.
 */
#ifndef NVX_RUN_UTIL_H
#define NVX_RUN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RUN_OUT		(64 << 10)	/* captured bytes per stream */
#define RUN_ARGS	32
#define RUN_MS		120000	/* the longest a command runs */

/* A command's output and how it ended. */
struct run {
	char cmd[1024];		/* its command line, for messages */
	int status;		/* waitpid()'s; -1: it did not run */
	bool timed_out;		/* killed after RUN_MS */
	int fd[2];		/* pipes from its stdout, stderr; -1: ended */
	size_t len[2];		/* bytes in out, err */
	char out[RUN_OUT];	/* stdout, NUL-terminated (cut at RUN_OUT) */
	char err[RUN_OUT];	/* stderr */
	int pdeath_sig;		/* in: sent to it when the spawner exits */
};

/*
 * Start @argv (stdin /dev/null, in a process group of its own, no core
 * dumps) with its stdout and stderr into pipes for pump(): its pid, or
 * -1 (@r->status -1: it did not run).
 */
pid_t spawn(struct run *r, char *const argv[]);

/*
 * Read what @r's process writes into r->out and r->err until r->out
 * holds @want or, with @want NULL, until both streams ended; give up at
 * @deadline (now_ms()). Whether that came.
 */
bool pump(struct run *r, uint64_t deadline, const char *want);

/* pump(), waiting for @want in stream @stream: 0 stdout, 1 stderr. */
bool pump_stream(struct run *r, int stream, uint64_t deadline,
		 const char *want);

/* Close what is left of @r's pipes. */
void pump_end(struct run *r);

/*
 * Run @argv as spawn() and capture its stdout and stderr (killing its
 * process group after RUN_MS): waitpid()'s status.
 */
int run_argv(struct run *r, char *const argv[]);

/*
 * Where each thread of @pid is: one call of @fn per thread with
 * "PID/TID (comm): state S, wchan W" and the top of its kernel stack
 * (8 lines, readable as root); a thread that went meanwhile is skipped.
 */
void thread_report(pid_t pid, void (*fn)(void *arg, const char *text),
		   void *arg);

/* nvxtool ARGS... (NULL-terminated), as run_argv(). */
int nvxtool(struct run *r, ...);

#endif /* NVX_RUN_UTIL_H */
