// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the nvx selftest group "fault" (include/fault_util.h).
 */
#include <dirent.h>
#include <stdarg.h>

#include "fault_util.h"

#define FAULT_DEBUGFS	"/sys/kernel/debug"
#define FAULT_MAX_N	100000

const int fault_errnos_default[] = { ENOMEM, EFAULT, 0 };

/*
 * The debugfs knobs fail-nth needs, and what they were: by default
 * failslab and fail_page_alloc skip allocations that may sleep (nearly
 * all of nvx's) and fail_page_alloc order 0; verbose 0, so that an
 * injected failure prints no stack (nothing the harness must tell from a
 * report).
 */
static const struct {
	const char *path, *val;
} fault_knobs[] = {
	{ FAULT_DEBUGFS "/failslab/ignore-gfp-wait", "N" },
	{ FAULT_DEBUGFS "/failslab/verbose", "0" },
	{ FAULT_DEBUGFS "/fail_page_alloc/ignore-gfp-wait", "N" },
	{ FAULT_DEBUGFS "/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ FAULT_DEBUGFS "/fail_page_alloc/min-order", "0" },
	{ FAULT_DEBUGFS "/fail_page_alloc/verbose", "0" },
	{ FAULT_DEBUGFS "/fail_usercopy/verbose", "0" },
};

static char fault_saved[ARRAY_SIZE(fault_knobs)][32];
static bool fault_set[ARRAY_SIZE(fault_knobs)];

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return 0;
}

/** fault_available() - whether this kernel has fail-nth (fault injection) */
bool fault_available(void)
{
	return !access("/proc/thread-self/fail-nth", W_OK);
}

/**
 * fault_arm_setup() - make fail-nth reach every allocation and user copy
 *
 * Return: 0; -ENOENT when this kernel has no fail-nth (no fault
 * injection: the caller skips); -EOPNOTSUPP when a knob is missing or
 * cannot be set (a fault-injection kernel without what the group needs:
 * the caller fails), with everything set so far put back.
 */
int fault_arm_setup(void)
{
	unsigned int i;

	if (!fault_available())
		return -ENOENT;
	for (i = 0; i < ARRAY_SIZE(fault_knobs); i++) {
		if (read_str(fault_knobs[i].path, fault_saved[i],
			     sizeof(fault_saved[i])) ||
		    write_str(fault_knobs[i].path, fault_knobs[i].val)) {
			printf("# %s: %s\n", fault_knobs[i].path,
			       strerror(errno));
			fault_arm_restore();
			return -EOPNOTSUPP;
		}
		fault_set[i] = true;
	}
	return 0;
}

/** fault_arm_restore() - put the knobs fault_arm_setup() changed back */
void fault_arm_restore(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fault_knobs); i++) {
		if (fault_set[i])
			write_str(fault_knobs[i].path, fault_saved[i]);
		fault_set[i] = false;
	}
}

/** fd_count() - the open fds of this process, or -errno */
int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* opendir's own */
}

static bool errno_allowed(const int *errnos, int err)
{
	for (; *errnos; errnos++)
		if (*errnos == err)
			return true;
	return false;
}

static void why(struct fault_result *res, const char *fmt, ...)
{
	va_list ap;

	if (!res->ok)
		return;
	res->ok = false;
	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
}

/**
 * fault_run() - fail each fault-injection point of a call in turn
 * @c: the call.
 * @res: what was found.
 *
 * For N = 1, 2, ...: arm fail-nth with N, make the call, and see whether
 * the N-th point was reached (fail-nth reads 0). A failure must give one
 * of @c->errnos, leave the fd count as it was and pass @c->check; a
 * success is undone; the loop ends with the first N the call does not
 * reach. Stops at the first check that does not hold.
 *
 * Return: 0, or -errno when fail-nth could not be used.
 */
int fault_run(const struct fault_call *c, struct fault_result *res)
{
	int fd, ret, fds, after, n;
	char buf[32], msg[256];
	ssize_t got;
	bool hit;

	memset(res, 0, sizeof(*res));
	res->ok = true;
	fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (n = 1; n < FAULT_MAX_N; n++) {
		fds = fd_count();
		snprintf(buf, sizeof(buf), "%d", n);
		if (pwrite(fd, buf, strlen(buf), 0) < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		ret = c->call(c->arg);
		/* the read copies out: a point of its own, when not reached */
		got = pread(fd, buf, sizeof(buf) - 1, 0);
		hit = got > 0 && (buf[got] = 0, atoi(buf) == 0);
		/*
		 * Disarm. A point not reached by the call may be this
		 * write's own copy of "0" (EFAULT): then it is spent, and
		 * the write goes through the second time.
		 */
		if (pwrite(fd, "0", 1, 0) < 0 &&
		    (errno != EFAULT || pwrite(fd, "0", 1, 0) < 0)) {
			/* still armed: nothing after this can be trusted */
			printf("# fail-nth: cannot disarm: %s\n",
			       strerror(errno));
			abort();
		}
		if (!hit) {
			if (ret) {
				why(res, "%s: %s without a fault", c->what,
				    strerror(-ret));
			} else if (c->undo) {
				c->undo(c->arg);
			}
			break;
		}
		res->points++;
		if (!ret) {
			res->tolerated++;
			if (c->undo)
				c->undo(c->arg);
			continue;
		}
		res->failed++;
		if (!errno_allowed(c->errnos ?: fault_errnos_default, -ret))
			why(res, "%s: point %d: %s", c->what, n,
			    strerror(-ret));
		after = fd_count();
		if (after != fds)
			why(res, "%s: point %d: %d fds after, %d before",
			    c->what, n, after, fds);
		if (c->check && c->check(c->arg, msg, sizeof(msg)))
			why(res, "%s: point %d: %s", c->what, n, msg);
		if (!res->ok)
			break;
	}
	if (n >= FAULT_MAX_N)
		why(res, "%s: still failing at point %d", c->what, n);
	close(fd);
	printf("# %s: %u failure points (%u failed the call, %u tolerated)\n",
	       c->what, res->points, res->failed, res->tolerated);
	fflush(stdout);
	return 0;
}

struct query_state {
	const struct fault_query *q;
	unsigned char ref[FAULT_QUERY_MAX];	/* an unfaulted call's result */
	unsigned char out[FAULT_QUERY_MAX];
	char differs[256];			/* a success that differed */
};

static int query_call(void *arg)
{
	struct query_state *qs = arg;

	memcpy(qs->out, qs->q->in, qs->q->size);
	return nvx_ioctl(qs->q->fd, qs->q->cmd, qs->out);
}

/* A success (a point tolerated): the result an unfaulted call gave. */
static void query_undo(void *arg)
{
	struct query_state *qs = arg;
	size_t i;

	if (!qs->q->stable || qs->differs[0])
		return;
	for (i = 0; i < qs->q->size; i++) {
		if (qs->out[i] != qs->ref[i]) {
			snprintf(qs->differs, sizeof(qs->differs),
				 "a success gave byte %zu = %#x, unfaulted %#x",
				 i, qs->out[i], qs->ref[i]);
			return;
		}
	}
}

/* A failure: the caller's argument as it was. */
static int query_check(void *arg, char *why, size_t len)
{
	struct query_state *qs = arg;
	size_t i;

	for (i = 0; i < qs->q->size; i++) {
		if (qs->out[i] != ((const unsigned char *)qs->q->in)[i]) {
			snprintf(why, len,
				 "a failure changed byte %zu of the argument",
				 i);
			return -1;
		}
	}
	return 0;
}

/**
 * fault_run_query() - fault_run() for a call that only reports
 * @q: the call.
 * @res: what was found.
 *
 * Makes the call once unfaulted (it must succeed), then fails each of its
 * points in turn: a failure gives ENOMEM or EFAULT, installs no fd and
 * leaves the argument as it was; a success gives the unfaulted result
 * when @q->stable.
 *
 * Return: 0, or -errno when fail-nth could not be used or the unfaulted
 * call failed.
 */
int fault_run_query(const struct fault_query *q, struct fault_result *res)
{
	struct query_state *qs = calloc(1, sizeof(*qs));
	struct fault_call c = {
		.what = q->what, .call = query_call, .undo = query_undo,
		.check = query_check,
	};
	int ret;

	memset(res, 0, sizeof(*res));
	snprintf(res->why, sizeof(res->why), "%s: not run", q->what);
	if (!qs)
		return -ENOMEM;
	if (q->size > FAULT_QUERY_MAX) {
		free(qs);
		return -EINVAL;
	}
	qs->q = q;
	c.arg = qs;
	ret = query_call(qs);
	if (ret) {
		snprintf(res->why, sizeof(res->why), "%s: %s unfaulted",
			 q->what, strerror(-ret));
		free(qs);
		return ret;
	}
	memcpy(qs->ref, qs->out, q->size);
	ret = fault_run(&c, res);
	if (!ret && qs->differs[0] && res->ok) {
		res->ok = false;
		snprintf(res->why, sizeof(res->why), "%s: %s", q->what,
			 qs->differs);
	}
	free(qs);
	return ret;
}
