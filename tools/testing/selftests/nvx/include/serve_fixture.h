/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx selftests: the function server's fixture (sys_serve): servers
 * started and checked idle again, /proc readers, the HTTP client.
 * Documentation/nvx/testing.rst, "The sys group".
 */
#ifndef NVX_SERVE_FIXTURE_H
#define NVX_SERVE_FIXTURE_H

#include "uvm_fixture.h"
#include "run_util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/socket.h>

#define SRV_MEM		"2M"		/* each VM's RAM */
#define SRV_MEM_BYTES	(2 * MIB)
#define SRV_POOL	(192 * MIB)	/* 64 + 4 VMs, and room to scrub */
#define NR_SRV		3		/* servers a test may start */
#define LISTEN_MS	60000		/* for "listening on" */
#define IO_MS		io_ms		/* for answers (a cold VM included) */
#define CLOSE_MS	20000		/* for a connection to be closed */
#define ECHO_MS		20000		/* an echo beside stuck guests */
#define IDLE_MS		30000		/* for a server to be idle again */
#define STOP_MS		30000		/* SIGTERM to exit */
#define TIMEOUT_MS	1900		/* --timeout 2, --lifetime 2, less a tick */
#define HEAD_MAX	1024		/* an answer's head */
#define RECV_CHUNK	(64 << 10)
/*
 * Connections at once in "concurrent": 16, or $NVX_SERVE_CONC (up to
 * 64). With 64, a few guests end with the nested-TCG triple fault
 * (testing.rst, "Known problems") on the debug kernel: not the default.
 */
#define NCONC_MAX	64U
#define NCONC_DEF	16U
#define CONC_WARM	4U
#define NPIPE		10
#define DEAF_MS		"60000"
#define HTTP_REQ	"POST /echo HTTP/1.1\r\nHost: nvx\r\nContent-Length: 5\r\n\r\nhello"

/* IO_MS: each test runs in a process of its own, which may raise it */
static uint64_t io_ms = 60000;
#define CONC_IO_MS	240000		/* concurrent's */

#define SERVE_TEST(name)	TEST_F_TIMEOUT(serve, name, 300)
#define OPTS(...)		((const char *const[]){ __VA_ARGS__, NULL })
#define NO_OPTS			OPTS(NULL)

/* What /proc/PID/fdinfo says of a server's endpoint. */
struct ep_info {
	long long vms, queued, taken, gone, attached;
};

/* A server a test started. */
struct srv {
	pid_t pid;			/* 0: none */
	pid_t sys;			/* its system process */
	bool up;			/* listening, its baseline taken */
	struct run *run;		/* its stdout and stderr */
	struct sockaddr_in addr;
	unsigned int warm;
	bool tmpl;			/* --template (of SRV_MEM): clones */
	char what[64];			/* "test.img serve-mix", for messages */
	int ep_nr;			/* its endpoint's fd in it; -1: unknown */
	int fds, sys_fds;		/* open fds of both when idle */
	pthread_t pump;			/* reads run while the test runs */
	bool pumping;
	int pump_stop, pump_done;	/* atomic */
	/* its summary: connections, cold, failed, errors; -1: any */
	long long want[4];
	const char *want_err[3];	/* in its stderr */
};

/* A test's environment and its servers. */
struct servers {
	struct env e;
	struct srv s[NR_SRV];
};

FIXTURE(serve) {
	struct servers x;
};

static struct run cmd;		/* an nvxtool that ends by itself */

/* ------------------------------------------------------- /proc --- */

/* The first @n - 1 bytes of file @path, NUL-terminated: 0 or -errno. */
static inline int read_text(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	ssize_t k;

	if (fd < 0)
		return -errno;
	k = read(fd, buf, n - 1);
	if (k < 0)
		ret = -errno;
	close(fd);
	buf[k > 0 ? k : 0] = 0;
	return ret;
}

/* The number on the line "@key:" of @text, or -1. */
static inline long long field(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p) {
		if (!strncmp(p, key, n) && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The open fds of @pid, or -errno. */
static inline int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* The fd of @pid that is an nvx endpoint, or -errno. */
static inline int find_ep(pid_t pid)
{
	char path[300], link[64];
	struct dirent *d;
	int fd = -ENOENT;
	ssize_t n;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (fd < 0 && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, d->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, "anon_inode:[nvx-uvm-ep]"))
			fd = atoi(d->d_name);
	}
	closedir(dir);
	return fd;
}

/* The child of @ppid (a server has one: its system process), or 0. */
static inline pid_t child_of(pid_t ppid)
{
	char path[300], buf[512], *p;
	struct dirent *d;
	pid_t pid = 0;
	DIR *dir;
	int pp;

	dir = opendir("/proc");
	if (!dir)
		return 0;
	while (!pid && (d = readdir(dir))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if (read_text(path, buf, sizeof(buf)))
			continue;
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &pp) == 1 && pp == ppid)
			pid = atoi(d->d_name);
	}
	closedir(dir);
	return pid;
}

/* Whether @pid runs under a seccomp filter (the system process confined). */
static inline bool confined(pid_t pid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return !read_text(path, buf, sizeof(buf)) && field(buf, "Seccomp") == 2;
}

/* The counters of @s's endpoint: 0 or -errno. */
static inline int ep_info(struct srv *s, struct ep_info *ei)
{
	char path[64], buf[2048];
	int ret;

	if (s->ep_nr < 0)
		s->ep_nr = find_ep(s->pid);
	if (s->ep_nr < 0)
		return s->ep_nr;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", s->pid, s->ep_nr);
	ret = read_text(path, buf, sizeof(buf));
	if (ret)
		return ret;
	ei->vms = field(buf, "vms");
	ei->queued = field(buf, "queued");
	ei->taken = field(buf, "taken");
	ei->gone = field(buf, "gone");
	ei->attached = field(buf, "attached");
	if (ei->vms < 0 || ei->queued < 0 || ei->taken < 0 || ei->gone < 0 ||
	    ei->attached < 0)
		return -EPROTO;
	return 0;
}

/* ----------------------------------------------------- servers --- */

static inline void *pump_main(void *arg)
{
	struct srv *s = arg;

	while (!__atomic_load_n(&s->pump_stop, __ATOMIC_ACQUIRE) &&
	       (s->run->fd[0] >= 0 || s->run->fd[1] >= 0))
		pump(s->run, now_ms() + 100, NULL);
	__atomic_store_n(&s->pump_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* What the teardown expects of @s's --verbose summary (-1: anything). */
static inline void srv_want(struct srv *s, long long conns, long long cold,
			    long long failed, long long errors)
{
	s->want[0] = conns;
	s->want[1] = cold;
	s->want[2] = failed;
	s->want[3] = errors;
}

/* A line @s must have written on stderr by the time it stopped. */
static inline void srv_want_err(struct srv *s, const char *text)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(s->want_err); i++) {
		if (!s->want_err[i]) {
			s->want_err[i] = text;
			return;
		}
	}
}

/* The warm VMs of the servers that are up. */
static inline unsigned int total_warm(struct servers *x)
{
	unsigned int i, n = 0;

	for (i = 0; i < NR_SRV; i++)
		if (x->s[i].up)
			n += x->s[i].warm;
	return n;
}

/* How @s is now. */
struct idle {
	int ret;
	struct ep_info ei;
	int fds, sys_fds;
};

/*
 * @s is as at its start: its endpoint has only the warm VMs, each with
 * its READY taken, nothing queued, no notice pending; neither process
 * has an fd more or less.
 */
static inline bool srv_idle(struct srv *s, struct idle *st)
{
	st->ret = ep_info(s, &st->ei);
	st->fds = count_fds(s->pid);
	st->sys_fds = s->sys_fds >= 0 ? count_fds(s->sys) : -1;
	return !st->ret && st->ei.vms == s->warm && st->ei.taken == s->warm &&
	       !st->ei.queued && !st->ei.gone && st->fds == s->fds &&
	       st->sys_fds == s->sys_fds;
}

/*
 * The grants and bytes the servers that are up hold when idle: each warm
 * VM's RAM, but a server of clones holds its template's RAM and a clone
 * per warm VM (a grant that has no pool memory of its own).
 */
static inline void pool_want(struct servers *x, long long *grants,
			     long long *bytes)
{
	unsigned int i;

	*grants = x->e.start.grants_live;
	*bytes = x->e.start.granted_bytes;
	for (i = 0; i < NR_SRV; i++) {
		if (!x->s[i].up)
			continue;
		*grants += x->s[i].warm + x->s[i].tmpl;
		*bytes += (x->s[i].tmpl ? 1 : x->s[i].warm) * SRV_MEM_BYTES;
	}
}

/* The pool's grants are the warm VMs' of every server. */
static inline bool pool_idle(struct servers *x, struct nvx_pool_stats *ps)
{
	long long grants, bytes;

	pool_want(x, &grants, &bytes);
	return !pool_stats(x->e.fd, ps) &&
	       (long long)ps->grants_live == grants &&
	       (long long)ps->granted_bytes == bytes;
}

/* Every server that is up is idle, and the pool too, within IDLE_MS. */
static inline void all_idle(struct __test_metadata *_metadata,
			    struct servers *x, const char *when)
{
	struct idle st[NR_SRV];
	bool ok[NR_SRV], pool_ok, all;
	uint64_t end = now_ms() + IDLE_MS;
	struct nvx_pool_stats ps;
	long long grants, bytes;
	unsigned int w;
	struct srv *s;
	int i;

	for (;;) {
		pool_ok = pool_idle(x, &ps);
		all = pool_ok;
		for (i = 0; i < NR_SRV; i++) {
			ok[i] = !x->s[i].up || srv_idle(&x->s[i], &st[i]);
			all &= ok[i];
		}
		if (all || now_ms() >= end)
			break;
		usleep(50000);
	}
	for (i = 0; i < NR_SRV; i++) {
		s = &x->s[i];
		if (!s->up || ok[i])
			continue;
		EXPECT_EQ(0, st[i].ret) TH_LOG("%s, %s: its endpoint: %s", when,
					       s->what, strerror(-st[i].ret));
		EXPECT_EQ(s->warm, st[i].ei.vms)
			TH_LOG("%s, %s: VMs attached", when, s->what);
		EXPECT_EQ(s->warm, st[i].ei.taken)
			TH_LOG("%s, %s: requests taken (READY)", when, s->what);
		EXPECT_EQ(0, st[i].ei.queued)
			TH_LOG("%s, %s: requests queued", when, s->what);
		EXPECT_EQ(0, st[i].ei.gone)
			TH_LOG("%s, %s: VM_GONE notices not taken", when,
			       s->what);
		EXPECT_EQ(s->fds, st[i].fds)
			TH_LOG("%s, %s: fds of the server", when, s->what);
		EXPECT_EQ(s->sys_fds, st[i].sys_fds)
			TH_LOG("%s, %s: fds of its system process", when,
			       s->what);
	}
	if (pool_ok)
		return;
	w = total_warm(x);
	pool_want(x, &grants, &bytes);
	EXPECT_EQ(grants, (long long)ps.grants_live)
		TH_LOG("%s: the pool's grants (%u warm VMs)", when, w);
	EXPECT_EQ(bytes, (long long)ps.granted_bytes)
		TH_LOG("%s: the pool's granted bytes (%u warm VMs)", when, w);
}

/*
 * Start server @i: nvxtool uvm serve --listen 127.0.0.1:0 --mem 2M
 * --warm @warm --verbose @opts... IMAGE [-- @mode]; wait for its
 * "listening on" line, for its system process to be confined and for
 * its warm VMs to wait in READY; take its fd counts then.
 */
static inline bool srv_start(struct __test_metadata *_metadata,
			     struct servers *x, int i, unsigned int warm,
			     const char *const *opts, const char *image,
			     const char *mode)
{
	char warm_s[16], img[PATH_MAX + 32], *argv[RUN_ARGS + 1], *end;
	struct srv *s = &x->s[i];
	struct ep_info ei = { -1, -1, -1, -1, -1 };
	unsigned long port;
	uint64_t until;
	bool ok;
	int n = 0;

	snprintf(img, sizeof(img), "%s/%s", x->e.dir, image ? image : "");
	snprintf(warm_s, sizeof(warm_s), "%u", warm);
	snprintf(s->what, sizeof(s->what), "%s%s%s",
		 image ? image : "a template", mode ? " " : "",
		 mode ? mode : "");
	argv[n++] = (char *)"nvxtool";
	argv[n++] = (char *)"uvm";
	argv[n++] = (char *)"serve";
	argv[n++] = (char *)"--listen";
	argv[n++] = (char *)"127.0.0.1:0";
	/* a template (in @opts) has its RAM size */
	if (image) {
		argv[n++] = (char *)"--mem";
		argv[n++] = (char *)SRV_MEM;
	}
	argv[n++] = (char *)"--warm";
	argv[n++] = warm_s;
	argv[n++] = (char *)"--verbose";
	while (*opts && n < RUN_ARGS - 3)
		argv[n++] = (char *)*opts++;
	if (image)
		argv[n++] = img;
	if (mode) {
		argv[n++] = (char *)"--";
		argv[n++] = (char *)mode;
	}
	argv[n] = NULL;
	s->warm = warm;
	s->tmpl = !image;
	s->run = calloc(1, sizeof(*s->run));
	EXPECT_NE(NULL, s->run);
	if (!s->run)
		return false;
	s->pid = spawn(s->run, argv);
	EXPECT_LT(0, s->pid) TH_LOG("%s: no pipe or fork", s->run->cmd);
	if (s->pid <= 0) {
		s->pid = 0;
		return false;
	}
	EXPECT_EQ(0, add_kid(&x->e, s->pid));

	/* its stdout has that line only */
	ok = pump(s->run, now_ms() + LISTEN_MS, "\n") &&
	     !strncmp(s->run->out, "listening on 127.0.0.1:", 23);
	port = ok ? strtoul(s->run->out + 23, &end, 10) : 0;
	ok = ok && *end == '\n' && port && port < 65536;
	EXPECT_TRUE(ok) TH_LOG("%s: stdout '%s'; stderr '%s'", s->run->cmd,
			       s->run->out, s->run->err);
	if (!ok)
		return false;
	s->addr.sin_family = AF_INET;
	s->addr.sin_port = htons(port);
	s->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->pumping = !pthread_create(&s->pump, NULL, pump_main, s);
	EXPECT_TRUE(s->pumping);

	/* the system process is forked after the line */
	until = now_ms() + LISTEN_MS;
	do {
		if (!s->sys)
			s->sys = child_of(s->pid);
		ok = s->sys > 0 && confined(s->sys) && !ep_info(s, &ei) &&
		     ei.vms == warm && ei.taken == warm && !ei.queued &&
		     !ei.gone && ei.attached == warm;
		if (!ok)
			usleep(20000);
	} while (!ok && now_ms() < until);
	if (!ok) {
		EXPECT_TRUE(s->sys > 0 && confined(s->sys))
			TH_LOG("%s: system process %d not there or not confined",
			       s->run->cmd, s->sys);
		EXPECT_EQ(warm, ei.vms) TH_LOG("%s: VMs attached", s->run->cmd);
		EXPECT_EQ(warm, ei.taken)
			TH_LOG("%s: READYs taken", s->run->cmd);
		EXPECT_EQ(warm, ei.attached)
			TH_LOG("%s: VMs made", s->run->cmd);
		return false;
	}
	s->fds = count_fds(s->pid);
	s->sys_fds = count_fds(s->sys);
	EXPECT_LT(0, s->fds);
	if (s->sys_fds < 0) {
		TH_LOG("%s: no fd count of its system process: %s", s->what,
		       strerror(-s->sys_fds));
		s->sys_fds = -1;
	}
	s->up = s->fds > 0;
	return s->up;
}

static const char summary_fmt[] =
	"%llu connections, %llu to VMs made for them, %llu without a VM, %llu VMs ended in error";

/* The numbers of "serve: C connections, K to VMs made ..." in @err. */
static inline bool summary(const char *err, long long v[4])
{
	unsigned long long a, b, c, d;
	const char *p = err;

	while ((p = strstr(p, "serve: "))) {
		p += 7;
		if (sscanf(p, summary_fmt, &a, &b, &c, &d) == 4) {
			v[0] = a;
			v[1] = b;
			v[2] = c;
			v[3] = d;
			return true;
		}
	}
	return false;
}

/* The last @n bytes of @s. */
static inline const char *tail(const char *s, size_t n)
{
	size_t len = strlen(s);

	return len > n ? s + len - n : s;
}

/*
 * SIGTERM @s: it exits 0 within STOP_MS (else SIGKILL), its summary and
 * stderr are as the test said.
 */
static inline void srv_finish(struct __test_metadata *_metadata, struct env *e,
			      struct srv *s)
{
	static const char *const names[] = {
		"connections", "to VMs made for them", "without a VM",
		"VMs ended in error",
	};
	uint64_t end = now_ms() + STOP_MS;
	long long v[4] = { -1, -1, -1, -1 };
	int status = -1, i;
	bool sum;
	pid_t got;

	kill(s->pid, SIGTERM);
	while ((got = waitpid(s->pid, &status, WNOHANG)) == 0 &&
	       now_ms() < end)
		usleep(10000);
	if (got != s->pid) {
		kill(-s->pid, SIGKILL);
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	for (i = 0; i < MAX_KIDS; i++)
		if (e->kids[i] == s->pid)
			e->kids[i] = 0;
	/* its pipes end with its system process */
	end = now_ms() + SHORT_MS;
	while (s->pumping && !__atomic_load_n(&s->pump_done, __ATOMIC_ACQUIRE) &&
	       now_ms() < end)
		usleep(10000);
	__atomic_store_n(&s->pump_stop, 1, __ATOMIC_RELEASE);
	if (s->pumping)
		pthread_join(s->pump, NULL);
	s->pumping = false;
	pump_end(s->run);

	EXPECT_TRUE(got == s->pid && WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("%s: %s %#x at SIGTERM; stderr: '%s'", s->what,
		       got == s->pid ? "status" : "not ended in 30 s, killed; status",
		       status, tail(s->run->err, 4000));
	sum = summary(s->run->err, v);
	for (i = 0; i < 4; i++) {
		if (s->want[i] < 0)
			continue;
		EXPECT_TRUE(sum) TH_LOG("%s: no summary on stderr: '%s'",
					s->what, tail(s->run->err, 4000));
		if (!sum)
			break;
		EXPECT_EQ(s->want[i], v[i])
			TH_LOG("%s: %lld %s, want %lld", s->what, v[i],
			       names[i], s->want[i]);
	}
	for (i = 0; i < (int)ARRAY_SIZE(s->want_err) && s->want_err[i]; i++)
		EXPECT_NE(NULL, strstr(s->run->err, s->want_err[i]))
			TH_LOG("%s: no '%s' on stderr: '%s'", s->what,
			       s->want_err[i], tail(s->run->err, 4000));
	if (_metadata->exit_code == KSFT_FAIL)
		TH_LOG("%s: stderr: '%s'", s->what, tail(s->run->err, 4000));
	free(s->run);
	s->run = NULL;
	s->pid = 0;
	s->up = false;
}

/* ----------------------------------------------------- clients --- */

/* A client's connection and what came on it, not yet taken. */
struct hc {
	int fd;
	unsigned char *buf;
	size_t len, cap;
	bool eof;
};

static inline void hc_init(struct hc *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Connect @c to @s (non-blocking, TCP_NODELAY): 0 or -errno. */
static inline int hc_open(struct hc *c, const struct srv *s)
{
	struct pollfd p = { .events = POLLOUT };
	socklen_t len = sizeof(int);
	int one = 1, err = 0, ret;

	hc_init(c);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0)
		return -errno;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!connect(c->fd, (const struct sockaddr *)&s->addr,
		     sizeof(s->addr)))
		return 0;
	ret = -errno;
	if (ret == -EINPROGRESS) {
		p.fd = c->fd;
		ret = poll(&p, 1, SHORT_MS) == 1 ? 0 : -ETIMEDOUT;
		if (!ret && getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
			ret = -errno;
		if (!ret)
			ret = -err;
	}
	if (ret) {
		close(c->fd);
		c->fd = -1;
	}
	return ret;
}

static inline void hc_close(struct hc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	hc_init(c);
}

/* Close @c with a reset (SO_LINGER 0). */
static inline void hc_reset(struct hc *c)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd >= 0)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	hc_close(c);
}

/* Take what the socket has: bytes, 0 at its end, or -errno (-EAGAIN). */
static inline int hc_recv(struct hc *c)
{
	unsigned char *p;
	size_t cap;
	ssize_t n;

	if (c->cap - c->len < RECV_CHUNK) {
		cap = c->cap ? c->cap : 4 * RECV_CHUNK;
		while (cap - c->len < RECV_CHUNK)
			cap *= 2;
		p = realloc(c->buf, cap);
		if (!p)
			return -ENOMEM;
		c->buf = p;
		c->cap = cap;
	}
	n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (n < 0)
		return -errno;
	if (!n)
		c->eof = true;
	c->len += n;
	return n;
}

/*
 * Send the @n bytes at @out on @c and take what comes meanwhile, until
 * @enough(c, @arg) holds and, with @all_sent, all was sent: 0. -EPIPE
 * when the server closed first, -ETIMEDOUT at @deadline, or the -errno
 * of a call (-ECONNRESET). @enough NULL: until the server closes.
 */
static inline int hc_io(struct hc *c, const void *out, size_t n,
			bool (*enough)(const struct hc *c, size_t arg), size_t arg,
			bool all_sent, uint64_t deadline)
{
	struct pollfd p = { .fd = c->fd };
	size_t sent = 0;
	uint64_t now;
	ssize_t k;
	int ret;

	for (;;) {
		if ((sent == n || !all_sent) && enough && enough(c, arg))
			return 0;
		if (c->eof)
			return -EPIPE;
		now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		p.events = POLLIN | (sent < n ? POLLOUT : 0);
		ret = poll(&p, 1, deadline - now);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret <= 0)
			continue;
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			ret = hc_recv(c);
			if (ret < 0 && ret != -EAGAIN && ret != -EINTR)
				return ret;
		}
		if (sent < n && (p.revents & POLLOUT)) {
			k = send(c->fd, (const char *)out + sent, n - sent,
				 MSG_NOSIGNAL);
			if (k < 0 && errno != EAGAIN && errno != EINTR)
				return -errno;
			if (k > 0)
				sent += k;
		}
	}
}

static inline bool got_bytes(const struct hc *c, size_t n)
{
	return c->len >= n;
}

/* The server closes @c (EOF or a reset) by @deadline: 0 or -errno. */
static inline int wait_closed(struct hc *c, uint64_t deadline)
{
	int ret = hc_io(c, NULL, 0, NULL, 0, true, deadline);

	return ret == -EPIPE || ret == -ECONNRESET ? 0 : ret;
}

/* An answer in hc.buf. */
struct resp {
	size_t off, head_len, clen;
	int status;
};

/*
 * How many whole answers @c holds from its start (at most @max), each
 * into @r[] unless NULL; -EPROTO for a head that is not HTTP/1.1 with a
 * Content-Length.
 */
static inline int resp_scan(const struct hc *c, int max, struct resp *r)
{
	char head[HEAD_MAX + 1], *line, *nl;
	const unsigned char *end;
	size_t off = 0, hl;
	long long clen;
	int n, status;

	for (n = 0; n < max && off < c->len; n++) {
		end = memmem(c->buf + off, c->len - off, "\r\n\r\n", 4);
		if (!end)
			return c->len - off > HEAD_MAX ? -EPROTO : n;
		hl = end + 4 - (c->buf + off);
		if (hl > HEAD_MAX)
			return -EPROTO;
		memcpy(head, c->buf + off, hl);
		head[hl] = 0;
		if (strncmp(head, "HTTP/1.1 ", 9) || !isdigit(head[9]))
			return -EPROTO;
		status = atoi(head + 9);
		clen = -1;
		for (line = strstr(head, "\r\n") + 2; *line; line = nl + 2) {
			nl = strstr(line, "\r\n");
			if (!strncasecmp(line, "content-length:", 15))
				clen = strtoll(line + 15, NULL, 10);
		}
		if (clen < 0)
			return -EPROTO;
		if (c->len - off - hl < (size_t)clen)
			return n;
		if (r)
			r[n] = (struct resp){ .off = off, .head_len = hl,
					      .clen = clen, .status = status };
		off += hl + clen;
	}
	return n;
}

static inline bool got_answers(const struct hc *c, size_t n)
{
	int k = resp_scan(c, n, NULL);

	return k < 0 || (size_t)k >= n;
}

/* A request: its body, and whether it says "Connection: close". */
struct req {
	const unsigned char *body;
	size_t len;
	bool close;
};

static inline size_t first_diff(const unsigned char *a, const unsigned char *b,
				size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

/*
 * Send the @n requests @q on @c at once (pipelined) and read the @n
 * answers: each must be http-echo's, byte for byte ("HTTP/1.1 200 OK",
 * the body's Content-Length, "Connection: close" if the request said
 * so, the body), and nothing more may come. 0, or -errno with @why.
 */
static inline int echo_reqs(struct hc *c, const struct req *q, int n, char *why,
			    size_t wn)
{
	size_t total = 0, off = 0, end = 0;
	struct resp *r = calloc(n, sizeof(*r));
	unsigned char *out = NULL;
	char head[160];
	int ret = 0, k, i, hl;

	for (i = 0; i < n; i++)
		total += q[i].len + sizeof(head);
	out = malloc(total);
	if (!out || !r) {
		snprintf(why, wn, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		hl = snprintf(head, sizeof(head),
			      "POST /echo HTTP/1.1\r\nHost: nvx\r\nContent-Length: %zu\r\n%s\r\n",
			      q[i].len, q[i].close ? "Connection: close\r\n" : "");
		memcpy(out + off, head, hl);
		off += hl;
		memcpy(out + off, q[i].body, q[i].len);
		off += q[i].len;
	}
	ret = hc_io(c, out, off, got_answers, n, true, now_ms() + IO_MS);
	k = ret ? 0 : resp_scan(c, n, r);
	if (ret || k != n) {
		snprintf(why, wn, "%d of %d answers in %zu bytes, then %s",
			 resp_scan(c, n, NULL), n, c->len,
			 ret ? strerror(-ret) : "a malformed head");
		ret = ret ? ret : -EPROTO;
		goto out;
	}
	for (i = 0; i < n; i++) {
		hl = snprintf(head, sizeof(head),
			      "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n%s\r\n",
			      q[i].len, q[i].close ? "Connection: close\r\n" : "");
		if (r[i].head_len != (size_t)hl ||
		    memcmp(c->buf + r[i].off, head, hl)) {
			snprintf(why, wn, "answer %d of %d: head '%.*s'", i + 1,
				 n, (int)r[i].head_len,
				 (const char *)c->buf + r[i].off);
			ret = -EBADMSG;
			goto out;
		}
		if (r[i].clen != q[i].len ||
		    memcmp(c->buf + r[i].off + hl, q[i].body, q[i].len)) {
			snprintf(why, wn,
				 "answer %d of %d: the body (%zu bytes) differs at byte %zu",
				 i + 1, n, q[i].len,
				 first_diff(c->buf + r[i].off + hl, q[i].body,
					    q[i].len));
			ret = -EBADMSG;
			goto out;
		}
		end = r[i].off + r[i].head_len + r[i].clen;
	}
	if (c->len != end) {
		snprintf(why, wn, "%zu bytes more than the answers",
			 c->len - end);
		ret = -EBADMSG;
		goto out;
	}
	c->len = 0;
out:
	free(out);
	free(r);
	return ret;
}

static inline unsigned char *body_of(size_t len, unsigned int seed)
{
	unsigned char *p = malloc(len ? len : 1);

	if (p)
		fill_bytes(p, len, seed);
	return p;
}

/* echo_reqs(), expected to succeed. */
static inline bool echo_ok(struct __test_metadata *_metadata, struct hc *c,
			   const struct req *q, int n, const char *what)
{
	char why[512];
	int ret = echo_reqs(c, q, n, why, sizeof(why));

	EXPECT_EQ(0, ret) TH_LOG("%s: %s", what, why);
	return !ret;
}

/* A new connection to @s, one request of @len bytes: echoed exactly. */
static inline bool echo_new(struct __test_metadata *_metadata, const struct srv *s,
			    size_t len, unsigned int seed, const char *what)
{
	struct req q = { .body = body_of(len, seed), .len = len };
	bool ok = false;
	struct hc c;
	int ret;

	hc_init(&c);
	ret = q.body ? hc_open(&c, s) : -ENOMEM;
	EXPECT_EQ(0, ret) TH_LOG("%s: connect to %s: %s", what, s->what,
				 strerror(-ret));
	if (!ret)
		ok = echo_ok(_metadata, &c, &q, 1, what);
	hc_close(&c);
	free((void *)q.body);
	return ok;
}

/*
 * The server closes @c (EOF or a reset) between @lo and @hi ms after
 * @t0, having sent nothing (or only a 502 answer).
 */
static inline void expect_closed(struct __test_metadata *_metadata, struct hc *c,
				 uint64_t t0, uint64_t lo, uint64_t hi,
				 const char *what)
{
	int ret = wait_closed(c, t0 + hi);
	unsigned long long ms = now_ms() - t0;

	EXPECT_EQ(0, ret) TH_LOG("%s: not closed after %llu ms: %s", what,
				 ms, strerror(-ret));
	EXPECT_LE(lo, ms) TH_LOG("%s: closed after %llu ms, not %llu",
				 what, ms, (unsigned long long)lo);
	EXPECT_TRUE(!c->len ||
		    (c->len >= 13 && !memcmp(c->buf, "HTTP/1.1 502 ", 13)))
		TH_LOG("%s: %zu bytes came: '%.*s'", what, c->len,
		       (int)(c->len < 200 ? c->len : 200),
		       c->buf ? (const char *)c->buf : "");
}

/*
 * A new connection to @s that sends @text (NULL: nothing): closed by the
 * server within CLOSE_MS, nothing sent back.
 */
static inline void closed_new(struct __test_metadata *_metadata,
			      const struct srv *s, const char *text, const char *what)
{
	uint64_t t0 = now_ms();
	struct hc c;
	int ret;

	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("%s: connect to %s: %s", what, s->what,
				 strerror(-ret));
	if (ret)
		return;
	/* the server may close it before all of @text is sent */
	if (text)
		hc_io(&c, text, strlen(text), got_bytes, 0, true,
		      t0 + CLOSE_MS);
	expect_closed(_metadata, &c, t0, 0, CLOSE_MS, what);
	hc_close(&c);
}

/*
 * A new connection to the serve-mix server @s: "echo" and @len bytes,
 * all of them back, exactly; how long that took into *@ms.
 */
static inline bool mix_echo(struct __test_metadata *_metadata, const struct srv *s,
			    size_t len, unsigned int seed, uint64_t *ms,
			    const char *what)
{
	unsigned char *out = malloc(len + 5);
	uint64_t t0 = now_ms();
	bool ok = false;
	struct hc c;
	int ret;

	hc_init(&c);
	ret = out ? hc_open(&c, s) : -ENOMEM;
	EXPECT_EQ(0, ret) TH_LOG("%s: connect to %s: %s", what, s->what,
				 strerror(-ret));
	if (!ret) {
		memcpy(out, "echo\n", 5);
		fill_bytes(out + 5, len, seed);
		ret = hc_io(&c, out, len + 5, got_bytes, len, true,
			    t0 + IO_MS);
		EXPECT_EQ(0, ret) TH_LOG("%s: %zu of %zu bytes back: %s", what,
					 c.len, len, strerror(-ret));
		ok = !ret && c.len == len && !memcmp(c.buf, out + 5, len);
		EXPECT_TRUE(ret || ok)
			TH_LOG("%s: %zu bytes back for %zu, differing at byte %zu",
			       what, c.len, len,
			       first_diff(c.buf, out + 5,
					  c.len < len ? c.len : len));
	}
	if (ms)
		*ms = now_ms() - t0;
	/* the guest reads EOF: exit 0 */
	hc_close(&c);
	free(out);
	return ok;
}

/* Wait until @s's endpoint has @vms VMs, @attached made in all. */
static inline bool wait_vms(struct srv *s, long long vms, long long attached,
			    uint64_t deadline, struct ep_info *ei)
{
	do {
		if (!ep_info(s, ei) && ei->vms == vms &&
		    (attached < 0 || ei->attached == attached))
			return true;
		usleep(20000);
	} while (now_ms() < deadline);
	return false;
}

/* ------------------------------------------------------ fixture --- */

FIXTURE_SETUP(serve)
{
	struct nvx_pool_stats ps;
	char img[PATH_MAX + 32];
	uint64_t more = 0;
	int i, ret;

	for (i = 0; i < NR_SRV; i++) {
		memset(&self->x.s[i], 0, sizeof(self->x.s[i]));
		self->x.s[i].ep_nr = -1;
		self->x.s[i].sys_fds = -1;
		srv_want(&self->x.s[i], -1, -1, -1, -1);
	}
	env_setup(_metadata, &self->x.e, true);
	if (_metadata->exit_code)	/* skipped */
		return;
	if (system("command -v nvxtool >/dev/null 2>&1")) {
		env_release(&self->x.e);
		SKIP(return, "nvxtool not on PATH");
	}
	snprintf(img, sizeof(img), "%s/http-echo.img", self->x.e.dir);
	ret = access(img, R_OK) ? -errno : 0;
	if (ret)
		env_release(&self->x.e);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", img, strerror(-ret));

	/* the most VMs at a time: 64 serving, 4 warm; and their scrubbing */
	ret = pool_stats(self->x.e.fd, &ps);
	if (!ret && ps.clean_bytes < SRV_POOL)
		ret = pool_resize(self->x.e.fd, NVX_IOC_POOL_GROW,
				  SRV_POOL - ps.clean_bytes, NVX_NODE_ANY,
				  &more);
	self->x.e.grown += more;
	if (!ret)
		ret = wait_scrubbed(self->x.e.fd);
	if (!ret)
		ret = pool_stats(self->x.e.fd, &ps);
	if (!ret && ps.clean_bytes < SRV_POOL)
		ret = -ENOMEM;
	if (ret)
		env_release(&self->x.e);
	ASSERT_EQ(0, ret) TH_LOG("making %llu MiB of the pool clean: %s",
				 SRV_POOL / MIB, strerror(-ret));
	/* a client writing to a connection its server closed */
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN(serve)
{
	bool all_up = true, any = false;
	int i;

	for (i = 0; i < NR_SRV; i++) {
		any |= self->x.s[i].pid > 0;
		all_up &= !self->x.s[i].pid || self->x.s[i].up;
	}
	if (any && all_up)
		all_idle(_metadata, &self->x, "at the end");
	for (i = 0; i < NR_SRV; i++)
		if (self->x.s[i].pid > 0)
			srv_finish(_metadata, &self->x.e, &self->x.s[i]);
	env_teardown(_metadata, &self->x.e);
}

#endif /* NVX_SERVE_FIXTURE_H */
