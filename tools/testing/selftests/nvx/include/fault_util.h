/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The nvx selftest group "fault" (every fault_* program): fail the N-th
 * fault-injection point of one call, for N = 1, 2, 3, ... until the call
 * runs through, as syzkaller does, through /proc/thread-self/fail-nth
 * (CONFIG_FAULT_INJECTION with FAILSLAB, FAIL_PAGE_ALLOC and
 * FAULT_INJECTION_USERCOPY: the debug flavour). After each failure the
 * call must have failed with an errno it may give, installed no fd and
 * left the state as it was (the test's check); a call that succeeds
 * although a point failed (an allocation with a fallback, a copy that is
 * retried) is undone and counted as tolerated.
 */
#ifndef NVX_FAULT_UTIL_H
#define NVX_FAULT_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "nvx_test.h"

/* One call to fail at every point. */
struct fault_call {
	const char *what;
	/* the call: 0, or -errno; a success keeps what it made in @arg */
	int (*call)(void *arg);
	/* undo a success (close what it made); may be NULL */
	void (*undo)(void *arg);
	/* after a failure: 0 when all is as before, else -1 with @why */
	int (*check)(void *arg, char *why, size_t len);
	void *arg;
	/* the errnos (positive, 0-terminated) a failure may give */
	const int *errnos;
};

/* What fault_run() found. */
struct fault_result {
	unsigned int points;	/* failure points injected */
	unsigned int failed;	/* of which the call failed */
	unsigned int tolerated;	/* of which the call still succeeded */
	bool ok;		/* every check held and the call ran through */
	char why[512];		/* the first check that did not */
};

/*
 * A call that only reports (a query): the ioctl @cmd on @fd with the
 * @size bytes at @in as its argument. A failure must leave the caller's
 * argument as it was; a success must give what an unfaulted call gave
 * (when @stable: nothing it reports changes meanwhile).
 */
struct fault_query {
	const char *what;
	int fd;
	unsigned long cmd;
	const void *in;
	size_t size;		/* at most FAULT_QUERY_MAX */
	bool stable;
};

#define FAULT_QUERY_MAX	256

bool fault_available(void);
int fault_arm_setup(void);
void fault_arm_restore(void);
int fault_run(const struct fault_call *c, struct fault_result *res);
int fault_run_query(const struct fault_query *q, struct fault_result *res);
int fd_count(void);

/* The errnos most calls may fail with: no memory, a user copy failed. */
extern const int fault_errnos_default[];

#endif /* NVX_FAULT_UTIL_H */
