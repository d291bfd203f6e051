// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": the function server, `nvxtool uvm serve
 * --listen`.
 *
 * Each test starts its servers (nvxtool from PATH, on 127.0.0.1 port 0,
 * --mem 2M --verbose, images from beside this program: http-echo.img,
 * or test.img with a serve-* mode) and talks to them as TCP clients:
 * HTTP requests whose answers must be http-echo's byte for byte (bodies
 * of 0 B to 1 MiB, pipelined keep-alive requests, 64 connections at
 * once), warm VMs handed out once and replaced, clients that leave
 * mid-request, mid-response or at once, guests that exit, crash, never
 * read, never write or flood (their clients read EOF within CLOSE_MS;
 * other connections of the same server and system process are served
 * meanwhile), --timeout and --lifetime, bad command lines. The
 * teardown checks that every server is idle again (its endpoint holds
 * only the warm VMs, each waiting in READY; neither the server nor its
 * system process has an fd more than at its start; the pool's grants
 * are the warm VMs'), stops it with SIGTERM (exit 0) and compares its
 * --verbose summary with what the test expects
 * (Documentation/nvx/uvm-sys.rst, "The function server").
 */
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
static int read_text(const char *path, char *buf, size_t n)
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
static long long field(const char *text, const char *key)
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
static int count_fds(pid_t pid)
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
static int find_ep(pid_t pid)
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
static pid_t child_of(pid_t ppid)
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
static bool confined(pid_t pid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return !read_text(path, buf, sizeof(buf)) && field(buf, "Seccomp") == 2;
}

/* The counters of @s's endpoint: 0 or -errno. */
static int ep_info(struct srv *s, struct ep_info *ei)
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

static void *pump_main(void *arg)
{
	struct srv *s = arg;

	while (!__atomic_load_n(&s->pump_stop, __ATOMIC_ACQUIRE) &&
	       (s->run->fd[0] >= 0 || s->run->fd[1] >= 0))
		pump(s->run, now_ms() + 100, NULL);
	__atomic_store_n(&s->pump_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* What the teardown expects of @s's --verbose summary (-1: anything). */
static void srv_want(struct srv *s, long long conns, long long cold,
		     long long failed, long long errors)
{
	s->want[0] = conns;
	s->want[1] = cold;
	s->want[2] = failed;
	s->want[3] = errors;
}

/* A line @s must have written on stderr by the time it stopped. */
static void srv_want_err(struct srv *s, const char *text)
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
static unsigned int total_warm(struct servers *x)
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
static bool srv_idle(struct srv *s, struct idle *st)
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
static void pool_want(struct servers *x, long long *grants,
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
static bool pool_idle(struct servers *x, struct nvx_pool_stats *ps)
{
	long long grants, bytes;

	pool_want(x, &grants, &bytes);
	return !pool_stats(x->e.fd, ps) &&
	       (long long)ps->grants_live == grants &&
	       (long long)ps->granted_bytes == bytes;
}

/* Every server that is up is idle, and the pool too, within IDLE_MS. */
static void all_idle(struct __test_metadata *_metadata,
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
static bool srv_start(struct __test_metadata *_metadata,
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
static bool summary(const char *err, long long v[4])
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
static const char *tail(const char *s, size_t n)
{
	size_t len = strlen(s);

	return len > n ? s + len - n : s;
}

/*
 * SIGTERM @s: it exits 0 within STOP_MS (else SIGKILL), its summary and
 * stderr are as the test said.
 */
static void srv_finish(struct __test_metadata *_metadata, struct env *e,
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

static void hc_init(struct hc *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Connect @c to @s (non-blocking, TCP_NODELAY): 0 or -errno. */
static int hc_open(struct hc *c, const struct srv *s)
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

static void hc_close(struct hc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	hc_init(c);
}

/* Close @c with a reset (SO_LINGER 0). */
static void hc_reset(struct hc *c)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd >= 0)
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	hc_close(c);
}

/* Take what the socket has: bytes, 0 at its end, or -errno (-EAGAIN). */
static int hc_recv(struct hc *c)
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
static int hc_io(struct hc *c, const void *out, size_t n,
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

static bool got_bytes(const struct hc *c, size_t n)
{
	return c->len >= n;
}

/* The server closes @c (EOF or a reset) by @deadline: 0 or -errno. */
static int wait_closed(struct hc *c, uint64_t deadline)
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
static int resp_scan(const struct hc *c, int max, struct resp *r)
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

static bool got_answers(const struct hc *c, size_t n)
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

static size_t first_diff(const unsigned char *a, const unsigned char *b,
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
static int echo_reqs(struct hc *c, const struct req *q, int n, char *why,
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

static unsigned char *body_of(size_t len, unsigned int seed)
{
	unsigned char *p = malloc(len ? len : 1);

	if (p)
		fill_bytes(p, len, seed);
	return p;
}

/* echo_reqs(), expected to succeed. */
static bool echo_ok(struct __test_metadata *_metadata, struct hc *c,
		    const struct req *q, int n, const char *what)
{
	char why[512];
	int ret = echo_reqs(c, q, n, why, sizeof(why));

	EXPECT_EQ(0, ret) TH_LOG("%s: %s", what, why);
	return !ret;
}

/* A new connection to @s, one request of @len bytes: echoed exactly. */
static bool echo_new(struct __test_metadata *_metadata, const struct srv *s,
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
static void expect_closed(struct __test_metadata *_metadata, struct hc *c,
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
static void closed_new(struct __test_metadata *_metadata,
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
static bool mix_echo(struct __test_metadata *_metadata, const struct srv *s,
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
static bool wait_vms(struct srv *s, long long vms, long long attached,
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

/* ------------------------------------------------------- tests --- */

/*
 * Bodies of 0 B, 1 B, 64 KiB and 1 MiB, each on a new connection (a VM
 * made for it), then one after the other on one keep-alive connection:
 * each echoed exactly.
 */
SERVE_TEST(echo_bodies)
{
	static const size_t sizes[] = { 0, 1, 64 << 10, 1 << 20 };
	struct req q[ARRAY_SIZE(sizes)];
	struct srv *s = &self->x.s[0];
	unsigned int i;
	char what[64];
	struct hc c;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS,
			      "http-echo.img", NULL));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "a body of %zu bytes", sizes[i]);
		EXPECT_TRUE(echo_new(_metadata, s, sizes[i], i + 1, what));
	}
	memset(q, 0, sizeof(q));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		q[i].body = body_of(sizes[i], 10 + i);
		q[i].len = sizes[i];
	}
	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	for (i = 0; !ret && i < ARRAY_SIZE(sizes); i++) {
		snprintf(what, sizeof(what), "keep-alive, a body of %zu bytes",
			 sizes[i]);
		if (!q[i].body || !echo_ok(_metadata, &c, &q[i], 1, what))
			break;
	}
	hc_close(&c);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		free((void *)q[i].body);
	srv_want(s, 5, 5, 0, 0);
}

/* How many of @pid's fds have @line in their fdinfo. */
static int count_fdinfo(pid_t pid, const char *line)
{
	char path[320], buf[2048];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid,
			 de->d_name);
		if (!read_text(path, buf, sizeof(buf)) && strstr(buf, line))
			n++;
	}
	closedir(d);
	return n;
}

static void th_log_text(void *arg, const char *text)
{
	struct __test_metadata *_metadata = arg;

	TH_LOG("thread %s", text);
}

/*
 * --template FILE: `uvm template` of http-echo (its ready point comes
 * before READY) in one process, a server of clones of it in another.
 * Its VMs are clones (fdinfo of the server: one template grant, a clone
 * grant per warm VM); bodies of 0 to 35,000 bytes, each on a new
 * connection, are echoed as by booted VMs; warm VMs and VMs made for
 * their connection are all clones (no grant that is neither template
 * nor clone); a bad --template is refused.
 */
SERVE_TEST(template_clones)
{
	char dir[] = "/tmp/nvx-serve-XXXXXX", path[64], img[PATH_MAX + 32];
	struct srv *s = &self->x.s[0];
	unsigned int i;
	char what[64];
	uint64_t end;
	int n;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/http.nvxt", dir);
	snprintf(img, sizeof(img), "%s/http-echo.img", self->x.e.dir);
	nvxtool(&cmd, "uvm", "template", "-o", path, "--mem", SRV_MEM, img,
		NULL);
	ASSERT_TRUE(WIFEXITED(cmd.status)) TH_LOG("%s: %s", cmd.cmd, cmd.err);
	ASSERT_EQ(0, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 2,
			      OPTS("--template", path), NULL, NULL));
	/* the file is read at the start: the server does not need it */
	unlink(path);
	rmdir(dir);
	EXPECT_EQ(1, count_fdinfo(s->pid, "template:\t1\n"));
	EXPECT_EQ(2, count_fdinfo(s->pid, "clone:\t1\n"));
	for (i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "clone %u, %u bytes", i,
			 i * 7000);
		EXPECT_TRUE(echo_new(_metadata, s, i * 7000, i + 1, what));
	}
	/*
	 * 2 warm, then made for their connections; the server makes its
	 * warm VMs again after it answered, so wait for them (CI once
	 * counted 1 clone here, the second one not yet made).
	 */
	srv_want(s, 6, -1, 0, 0);
	end = now_ms() + IDLE_MS;
	while ((n = count_fdinfo(s->pid, "clone:\t1\n")) >= 0 && n < 2 &&
	       now_ms() < end)
		usleep(50 * 1000);
	EXPECT_EQ(1, count_fdinfo(s->pid, "template:\t1\n"));
	n = count_fdinfo(s->pid, "clone:\t1\n");
	EXPECT_LE(2, n);
	if (n < 2)
		thread_report(s->pid, th_log_text, _metadata);
	EXPECT_EQ(0, count_fdinfo(s->pid, "template:\t0\nclone:\t0\n"))
		TH_LOG("a grant that is not a clone: a VM booted from an image");

	/* usage: no --mem, no IMAGE with --template; a bad file: 1 */
	nvxtool(&cmd, "uvm", "serve", "--listen", "127.0.0.1:0", "--template",
		path, "--mem", "2M", NULL);
	EXPECT_EQ(2, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);
	nvxtool(&cmd, "uvm", "serve", "--listen", "127.0.0.1:0", "--template",
		path, img, NULL);
	EXPECT_EQ(2, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);
	nvxtool(&cmd, "uvm", "serve", "--listen", "127.0.0.1:0", "--template",
		img, NULL);
	EXPECT_EQ(1, WEXITSTATUS(cmd.status)) TH_LOG("%s", cmd.err);
	EXPECT_NE(NULL, strstr(cmd.err, "not an nvx template"))
		TH_LOG("%s", cmd.err);
}

/*
 * --uintr: the system process runs its event loop. The endpoint holds its
 * vector and has posted it (fdinfo of the server's endpoint: notify 1,
 * notified > 0), and new connections are echoed as without it.
 * Skipped without user interrupts.
 */
SERVE_TEST(uintr_event_loop)
{
	struct srv *s = &self->x.s[0];
	char path[64], buf[2048];
	struct ep_info ei;
	long long notified;
	unsigned int i;
	char what[64];

	if (nvx_has_feature(self->x.e.fd, NVX_FEAT_UINTR) != 1)
		SKIP(return, "no user interrupts (NVX_FEAT_UINTR)");
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, OPTS("--uintr"),
			      "http-echo.img", NULL));
	for (i = 0; i < 4; i++) {
		snprintf(what, sizeof(what), "--uintr, connection %u", i);
		EXPECT_TRUE(echo_new(_metadata, s, 100 << i, i + 1, what));
	}
	ASSERT_EQ(0, ep_info(s, &ei));
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", s->pid, s->ep_nr);
	ASSERT_EQ(0, read_text(path, buf, sizeof(buf)));
	EXPECT_EQ(1, field(buf, "notify")) TH_LOG("%s", buf);
	notified = field(buf, "notified");
	EXPECT_LT(0, notified) TH_LOG("%s", buf);
	srv_want(s, 4, 4, 0, 0);
}

/*
 * NPIPE requests written at once on one connection, answered in order
 * (each body starts with its number), by one VM; the last says
 * "Connection: close": its answer says so too and the server closes.
 */
SERVE_TEST(pipelined)
{
	struct srv *s = &self->x.s[0];
	struct ep_info e0, e1;
	struct req q[NPIPE];
	unsigned int i;
	struct hc c;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS,
			      "http-echo.img", NULL));
	ASSERT_EQ(0, ep_info(s, &e0));
	memset(q, 0, sizeof(q));
	for (i = 0; i < NPIPE; i++) {
		q[i].len = 20 + i * 997;
		q[i].body = body_of(q[i].len, 100 + i);
		if (q[i].body)
			snprintf((char *)q[i].body, 20, "request %02u of %u", i + 1,
				 NPIPE);
		q[i].close = i == NPIPE - 1;
		EXPECT_NE(NULL, q[i].body);
	}
	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret && q[NPIPE - 1].body &&
	    echo_ok(_metadata, &c, q, NPIPE, "pipelined requests"))
		expect_closed(_metadata, &c, now_ms(), 0, CLOSE_MS,
			      "after Connection: close");
	hc_close(&c);
	for (i = 0; i < NPIPE; i++)
		free((void *)q[i].body);
	all_idle(_metadata, &self->x, "after the connection");
	ASSERT_EQ(0, ep_info(s, &e1));
	EXPECT_EQ(e0.attached + 1, e1.attached)
		TH_LOG("one VM serves a connection: %lld made for it",
		       e1.attached - e0.attached);
	srv_want(s, 1, 1, 0, 0);
}

/* Lets the threads of concurrent go on once all got there. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int arrived;
	bool open;
};

static void gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->arrived++;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

/* Wait up to @ms for @n threads at @g: how many came. */
static unsigned int gate_wait(struct gate *g, unsigned int n, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	struct timespec ts;
	unsigned int got;

	pthread_mutex_lock(&g->mu);
	while (g->arrived < n && now_ms() < end) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	got = g->arrived;
	pthread_mutex_unlock(&g->mu);
	return got;
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* One client of concurrent. */
struct job {
	const struct srv *s;
	struct gate *g;
	unsigned int i;
	int ret;
	char why[512];
};

/*
 * Connect, one request; wait at the gate (if there is one) with the
 * connection open; a second request with "Connection: close"; the
 * server closes.
 */
static void *job_main(void *arg)
{
	struct job *j = arg;
	struct req q1 = { .len = 1 + j->i * 1237 % 20000 };
	struct req q2 = { .len = j->i * 331 % 5000, .close = true };
	struct hc c;

	q1.body = body_of(q1.len, 2 * j->i + 1);
	q2.body = body_of(q2.len, 2 * j->i + 2);
	hc_init(&c);
	j->ret = q1.body && q2.body ? hc_open(&c, j->s) : -ENOMEM;
	if (j->ret)
		snprintf(j->why, sizeof(j->why), "connect: %s",
			 strerror(-j->ret));
	else
		j->ret = echo_reqs(&c, &q1, 1, j->why, sizeof(j->why));
	if (j->g)
		gate_pass(j->g);
	if (!j->ret)
		j->ret = echo_reqs(&c, &q2, 1, j->why, sizeof(j->why));
	if (!j->ret) {
		j->ret = wait_closed(&c, now_ms() + CLOSE_MS);
		if (j->ret)
			snprintf(j->why, sizeof(j->why),
				 "not closed after Connection: close: %s",
				 strerror(-j->ret));
	}
	hc_close(&c);
	free((void *)q1.body);
	free((void *)q2.body);
	return NULL;
}

/*
 * nconc clients at once (--max 64, --warm 4), each with bodies of its
 * own: all answered exactly, all nconc VMs live at the same time.
 */
/*
 * 64 VMs made one after the other by the accept loop, on the debug
 * kernel under TCG: the last is answered minutes after the first.
 */
TEST_F_TIMEOUT(serve, concurrent, 600)
{
	static struct job jobs[NCONC_MAX];
	const char *env = getenv("NVX_SERVE_CONC");
	unsigned int nconc;
	struct gate g = {
		.mu = PTHREAD_MUTEX_INITIALIZER,
		.cv = PTHREAD_COND_INITIALIZER,
	};
	struct srv *s = &self->x.s[0];
	unsigned int i, made = 0, came, ok = 0;
	pthread_t th[NCONC_MAX];
	struct ep_info ei = { };
	pthread_attr_t a;
	int ret = -1;

	nconc = env ? strtoul(env, NULL, 10) : NCONC_DEF;
	if (!nconc || nconc > NCONC_MAX)
		nconc = NCONC_DEF;
	TH_LOG("%u connections at once", nconc);
	io_ms = CONC_IO_MS;
	/* --timeout: the first to be answered wait for the last */
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, CONC_WARM,
			      OPTS("--max", "64", "--timeout", "300"),
			      "http-echo.img", NULL));
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	for (i = 0; i < nconc; i++) {
		jobs[i] = (struct job){ .s = s, .g = &g, .i = i };
		if (pthread_create(&th[i], &a, job_main, &jobs[i]))
			break;
		made++;
	}
	pthread_attr_destroy(&a);
	EXPECT_EQ(nconc, made);
	came = gate_wait(&g, made, SHORT_MS + IO_MS + SHORT_MS);
	EXPECT_EQ(made, came);
	if (came == made) {
		for (i = 0; i < made; i++)
			ok += !jobs[i].ret;
		/* every connection answered once and still open */
		ret = ep_info(s, &ei);
	}
	EXPECT_EQ(0, ret);
	if (!ret && ok == nconc) {
		EXPECT_LE(nconc, ei.vms) TH_LOG("%lld VMs at a time", ei.vms);
		EXPECT_GE(nconc + CONC_WARM, ei.vms);
	}
	gate_open(&g);
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < made; i++)
		EXPECT_EQ(0, jobs[i].ret)
			TH_LOG("connection %u: %s", i, jobs[i].why);
	srv_want(s, nconc, -1, 0, 0);
}

/*
 * NCONC_MAX (64) clients at once, --max 16: the server holds 16 VMs at
 * a time and the other connections wait in the listen backlog until a
 * VM ends (their requests already sent); every body echoed exactly.
 * 16 live VMs, not 64: with 64 nested guests at once under TCG on the
 * debug kernel some end in a triple fault (concurrent with
 * NVX_SERVE_CONC=64 shows it), a limit of the emulation, not of nvx.
 */
TEST_F_TIMEOUT(serve, concurrent_queued, 600)
{
	static struct job jobs[NCONC_MAX];
	struct srv *s = &self->x.s[0];
	pthread_t th[NCONC_MAX];
	unsigned int i, made = 0;
	pthread_attr_t a;

	io_ms = CONC_IO_MS;
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, CONC_WARM,
			      OPTS("--max", "16", "--timeout", "300"),
			      "http-echo.img", NULL));
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	for (i = 0; i < NCONC_MAX; i++) {
		jobs[i] = (struct job){ .s = s, .i = i };
		if (pthread_create(&th[i], &a, job_main, &jobs[i]))
			break;
		made++;
	}
	pthread_attr_destroy(&a);
	EXPECT_EQ(NCONC_MAX, made);
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < made; i++)
		EXPECT_EQ(0, jobs[i].ret)
			TH_LOG("connection %u: %s", i, jobs[i].why);
	srv_want(s, made, -1, 0, 0);
}

/*
 * --warm 2: before any connection two VMs wait in READY; each of four
 * connections in turn gets a warm one (no VM made for a connection),
 * and each warm VM handed out is replaced by exactly one.
 */
SERVE_TEST(warm_vms)
{
	struct srv *s = &self->x.s[0];
	struct ep_info ei;
	unsigned int i;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 2, NO_OPTS,
			      "http-echo.img", NULL));
	for (i = 0; i < 4; i++) {
		EXPECT_TRUE(echo_new(_metadata, s, 1000 + i, i,
				     "a request to a warm VM"));
		/* its VM went, another was made and waits */
		all_idle(_metadata, &self->x, "after a connection");
	}
	ASSERT_EQ(0, ep_info(s, &ei));
	EXPECT_EQ(2 + 4, ei.attached)
		TH_LOG("%lld VMs made for --warm 2 and 4 connections",
		       ei.attached);
	srv_want(s, 4, 0, 0, 0);
}

/*
 * Clients that leave mid-request, mid-response, at once after connect
 * (while their VM is being made) and with a reset: the server serves
 * the next client, and nothing of theirs is left.
 */
SERVE_TEST(client_disconnects)
{
	static const char head[] =
		"POST /echo HTTP/1.1\r\nHost: nvx\r\nContent-Length: 200000\r\n\r\n";
	static const char big[] =
		"POST /echo HTTP/1.1\r\nHost: nvx\r\nContent-Length: 1048576\r\n\r\n";
	size_t n = sizeof(big) - 1 + (1 << 20);
	struct srv *s = &self->x.s[0];
	unsigned char *out;
	struct hc c;
	int ret;

	out = malloc(n);
	ASSERT_NE(NULL, out);
	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS,
			      "http-echo.img", NULL));

	/* half of a 200000-byte body, then close */
	memcpy(out, head, sizeof(head) - 1);
	fill_bytes(out + sizeof(head) - 1, 100000, 1);
	ret = hc_open(&c, s);
	if (!ret)
		ret = hc_io(&c, out, sizeof(head) - 1 + 100000, got_bytes, 0,
			    true, now_ms() + IO_MS);
	EXPECT_EQ(0, ret) TH_LOG("half a request: %s", strerror(-ret));
	hc_close(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 2, "after half a request"));
	all_idle(_metadata, &self->x, "after half a request");

	/* a 1 MiB body; close once 64 KiB of the answer came */
	memcpy(out, big, sizeof(big) - 1);
	fill_bytes(out + sizeof(big) - 1, 1 << 20, 3);
	ret = hc_open(&c, s);
	if (!ret)
		ret = hc_io(&c, out, n, got_bytes, 64 << 10, false,
			    now_ms() + IO_MS);
	EXPECT_EQ(0, ret) TH_LOG("64 KiB of an answer: %s", strerror(-ret));
	hc_close(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 4, "after half an answer"));
	all_idle(_metadata, &self->x, "after half an answer");

	/* gone before its VM is there */
	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	hc_close(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 5, "after a quick close"));
	all_idle(_metadata, &self->x, "after a quick close");

	ret = hc_open(&c, s);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	hc_reset(&c);
	EXPECT_TRUE(echo_new(_metadata, s, 4096, 6, "after a reset"));
	free(out);
	/* a reset connection may go before it is accepted */
	srv_want(s, -1, -1, 0, 0);
}

/*
 * A guest that reads the request and exits without an answer: its
 * client reads EOF; the next connection of the same server is served.
 */
SERVE_TEST(guest_exits_before_answer)
{
	struct srv *ex = &self->x.s[0], *m = &self->x.s[1];

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS, "test.img",
			      "serve-exit"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 0, NO_OPTS, "test.img",
			      "serve-mix"));
	closed_new(_metadata, ex, HTTP_REQ, "serve-exit");
	closed_new(_metadata, ex, HTTP_REQ, "serve-exit, again");
	closed_new(_metadata, m, "exit\nhello", "serve-mix exit");
	EXPECT_TRUE(mix_echo(_metadata, m, 4096, 1, NULL,
			     "serve-mix echo after an exit"));
	closed_new(_metadata, m, "exit\n", "serve-mix exit, again");
	EXPECT_TRUE(mix_echo(_metadata, m, 100, 2, NULL,
			     "serve-mix echo after two"));
	srv_want(ex, 2, 2, 0, 0);
	srv_want(m, 4, 4, 0, 0);
}

/*
 * Guests that crash (port 0x80) after reading the request, or before
 * READY (badport): their clients read EOF, the VMs count as ended in
 * error; the next connection of the same server is served.
 */
SERVE_TEST(guest_crashes)
{
	struct srv *c = &self->x.s[0], *b = &self->x.s[1], *m = &self->x.s[2];

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, NO_OPTS, "test.img",
			      "serve-crash"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 0, NO_OPTS, "test.img",
			      "badport"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 2, 0, NO_OPTS, "test.img",
			      "serve-mix"));
	closed_new(_metadata, c, HTTP_REQ, "serve-crash");
	closed_new(_metadata, c, HTTP_REQ, "serve-crash, again");
	closed_new(_metadata, b, HTTP_REQ, "badport");
	closed_new(_metadata, b, NULL, "badport, again");
	closed_new(_metadata, m, "crash\n", "serve-mix crash");
	EXPECT_TRUE(mix_echo(_metadata, m, 4096, 1, NULL,
			     "serve-mix echo after a crash"));
	srv_want(c, 2, 2, 0, 2);
	srv_want(b, 2, 2, 0, 2);
	srv_want(m, 2, 2, 0, 1);
	srv_want_err(c, " stopped: bad-port (0x80)");
	srv_want_err(b, " stopped: bad-port (0x80)");
	srv_want_err(m, " stopped: bad-port (0x80)");
}

/*
 * Guests that flood a client who does not read, never read a client who
 * sends, or never write: while they hold their connections, new
 * connections of the same server (one system process) are served
 * within ECHO_MS each.
 *
 * Two of each: under nested KVM in QEMU TCG, four flooding guests and
 * four deaf ones beside the rest were too much for the emulator now and
 * then (a VM that never left guest mode, an oops with a corrupted stack,
 * the test VM's kernel memory corrupted: testing.rst, "Known problems").
 */
#define NR_FLOOD	2
#define NR_DEAF		2
#define NR_MUTE		2
#define NR_STUCK	(NR_FLOOD + NR_DEAF + NR_MUTE)
#define NR_ECHO		3	/* echoes beside them, a VM each */

/* 450 s: the deaf guests sleep DEAF_MS by their own clock, late under load */
TEST_F_TIMEOUT(serve, stuck_guests_isolated, 450)
{
	static unsigned char junk[256 << 10];
	struct hc flood[NR_FLOOD], deaf[NR_DEAF], mute[NR_MUTE];
	struct srv *s = &self->x.s[0];
	struct pollfd p;
	struct ep_info ei;
	uint64_t ms, t0;
	unsigned int i;
	bool ok;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0,
			      OPTS("--max", "16", "--timeout", "300"),
			      "test.img", "serve-mix"));
	memset(junk, 'j', sizeof(junk));
	memcpy(junk, "deaf " DEAF_MS "\n", sizeof("deaf " DEAF_MS));
	for (i = 0; i < NR_FLOOD; i++) {
		EXPECT_EQ(0, hc_open(&flood[i], s));
		hc_io(&flood[i], "flood\n", 6, got_bytes, 0, true,
		      now_ms() + SHORT_MS);
	}
	for (i = 0; i < NR_DEAF; i++) {
		/* as much as the socket takes in a moment */
		EXPECT_EQ(0, hc_open(&deaf[i], s));
		hc_io(&deaf[i], junk, sizeof(junk), got_bytes, 0, true,
		      now_ms() + 500);
	}
	memcpy(junk, "mute\n", 5);
	for (i = 0; i < NR_MUTE; i++) {
		EXPECT_EQ(0, hc_open(&mute[i], s));
		hc_io(&mute[i], junk, 64 << 10, got_bytes, 0, true,
		      now_ms() + SHORT_MS);
	}
	/*
	 * All the stuck VMs there, the floods flowing. They are made one
	 * after the other (tens of seconds under TCG on the debug kernel):
	 * the deaf ones must outlive that, hence DEAF_MS.
	 */
	t0 = now_ms();
	ok = wait_vms(s, NR_STUCK, NR_STUCK, t0 + IO_MS, &ei);
	EXPECT_TRUE(ok) TH_LOG("%lld VMs, %lld made after %llu ms; want %d",
			       ei.vms, ei.attached,
			       (unsigned long long)(now_ms() - t0), NR_STUCK);
	for (i = 0; i < NR_FLOOD; i++) {
		p = (struct pollfd){ .fd = flood[i].fd, .events = POLLIN };
		EXPECT_EQ(1, poll(&p, 1, IO_MS)) TH_LOG("flood %u: no byte", i);
	}
	usleep(500000);

	for (i = 0; i < NR_ECHO; i++) {
		ms = 0;
		EXPECT_TRUE(mix_echo(_metadata, s, 64 << 10, i, &ms,
				     "an echo beside stuck guests"));
		EXPECT_GT((uint64_t)ECHO_MS, ms)
			TH_LOG("an echo took %llu ms", (unsigned long long)ms);
	}
	/* the floods and the mutes are still there: they cannot end */
	ASSERT_EQ(0, ep_info(s, &ei));
	EXPECT_LE(NR_FLOOD + NR_MUTE, ei.vms);

	for (i = 0; i < NR_FLOOD; i++)
		hc_close(&flood[i]);
	for (i = 0; i < NR_DEAF; i++)
		hc_close(&deaf[i]);
	for (i = 0; i < NR_MUTE; i++)
		hc_close(&mute[i]);
	/* the deaf ones end after DEAF_MS; then the server is idle */
	ok = wait_vms(s, 0, NR_STUCK + NR_ECHO,
		      now_ms() + 3 * atoi(DEAF_MS), &ei);
	EXPECT_TRUE(ok) TH_LOG("%lld VMs left, %lld made", ei.vms,
			       ei.attached);
	srv_want(s, NR_STUCK + NR_ECHO, NR_STUCK + NR_ECHO, 0, 0);
}

/*
 * Read @c to its end: every byte of the stream must be 'a' + K % 26.
 * The bytes read, or -errno; *@bad: the first byte that was not.
 */
static long long drain_flood(struct hc *c, uint64_t deadline,
			     long long *bad)
{
	static unsigned char buf[64 << 10];
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	long long total = 0;
	uint64_t now;
	ssize_t n, i;

	*bad = -1;
	for (;;) {
		now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&p, 1, deadline - now) < 0 && errno != EINTR)
			return -errno;
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return errno == ECONNRESET ? total : -errno;
		if (!n)
			return total;
		for (i = 0; i < n && *bad < 0; i++)
			if (buf[i] != 'a' + (total + i) % 26)
				*bad = total + i;
		total += n;
	}
}

/*
 * --timeout 2: a silent client's guest (serve-mute) fails its READ with
 * -EAGAIN after 2 s, exits, and the client reads EOF; the guest of a
 * client that does not read (serve-flood) fails its WRITE the same way,
 * and the client reads what it wrote, then EOF.
 */
SERVE_TEST(timeouts)
{
	struct srv *m = &self->x.s[0], *f = &self->x.s[1];
	long long got, bad;
	struct ep_info ei;
	uint64_t t0;
	struct hc c;
	bool ok;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, OPTS("--timeout", "2"),
			      "test.img", "serve-mute"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 0, OPTS("--timeout", "2"),
			      "test.img", "serve-flood"));
	t0 = now_ms();
	ret = hc_open(&c, m);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret)
		expect_closed(_metadata, &c, t0, TIMEOUT_MS, CLOSE_MS,
			      "a silent client");
	hc_close(&c);

	t0 = now_ms();
	ret = hc_open(&c, f);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret) {
		/* not reading: the VM comes and goes */
		ok = wait_vms(f, 0, 1, t0 + CLOSE_MS, &ei);
		EXPECT_TRUE(ok) TH_LOG("flooding: %lld VMs, %lld made, after %llu ms",
				       ei.vms, ei.attached,
				       (unsigned long long)(now_ms() - t0));
		EXPECT_LE((uint64_t)TIMEOUT_MS, now_ms() - t0);
		got = drain_flood(&c, now_ms() + IO_MS, &bad);
		EXPECT_LT(0, got) TH_LOG("read the flood: %s",
					 got < 0 ? strerror(-got) : "no byte");
		EXPECT_EQ(-1, bad) TH_LOG("byte %lld of the flood", bad);
	}
	hc_close(&c);
	srv_want(m, 1, 1, 0, 0);
	srv_want(f, 1, 1, 0, 0);
	srv_want_err(m, "serve-mute: read -11\n");
	srv_want_err(f, "serve-flood: write -11\n");
}

/*
 * --lifetime 2: a guest that never reads nor ends (serve-deaf) and a
 * keep-alive connection answered once, then idle (a warm VM of
 * http-echo, --timeout 0): both VMs are stopped after 2 s, their
 * clients read EOF.
 */
SERVE_TEST(lifetime)
{
	struct srv *d = &self->x.s[0], *h = &self->x.s[1];
	struct req q = { .len = 1000 };
	struct hc a, b;
	uint64_t ta, tb;
	int ret;

	ASSERT_TRUE(srv_start(_metadata, &self->x, 0, 0, OPTS("--lifetime", "2"),
			      "test.img", "serve-deaf"));
	ASSERT_TRUE(srv_start(_metadata, &self->x, 1, 1,
			      OPTS("--lifetime", "2", "--timeout", "0"),
			      "http-echo.img", NULL));
	q.body = body_of(q.len, 7);
	ASSERT_NE(NULL, q.body);
	ta = now_ms();
	ret = hc_open(&a, d);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	tb = now_ms();
	ret = hc_open(&b, h);
	EXPECT_EQ(0, ret) TH_LOG("connect: %s", strerror(-ret));
	if (!ret)
		echo_ok(_metadata, &b, &q, 1, "a request before --lifetime");
	if (a.fd >= 0)
		expect_closed(_metadata, &a, ta, TIMEOUT_MS, CLOSE_MS,
			      "serve-deaf past --lifetime 2");
	if (b.fd >= 0)
		expect_closed(_metadata, &b, tb, TIMEOUT_MS, CLOSE_MS,
			      "an idle connection past --lifetime 2");
	hc_close(&a);
	hc_close(&b);
	free((void *)q.body);
	/* a stop is not an error */
	srv_want(d, 1, 1, 0, 0);
	srv_want(h, 1, 0, 0, 0);
	srv_want_err(d, ": over --lifetime, stopped");
	srv_want_err(h, ": over --lifetime, stopped");
}

/* @cmd exited @code, printed no "listening on" line. */
static void expect_exit(struct __test_metadata *_metadata, int code)
{
	EXPECT_TRUE(WIFEXITED(cmd.status) && WEXITSTATUS(cmd.status) == code)
		TH_LOG("%s: status %#x%s, want exit %d; stdout '%s'; stderr '%s'",
		       cmd.cmd, cmd.status, cmd.timed_out ? " (timed out)" : "",
		       code, cmd.out, cmd.err);
	EXPECT_EQ(NULL, strstr(cmd.out, "listening on")) TH_LOG("%s", cmd.cmd);
}

/* nvxtool uvm serve ARGS... is a usage error: exit 2. */
#define USAGE(...) do {							\
	nvxtool(&cmd, "uvm", "serve", __VA_ARGS__, NULL);		\
	expect_exit(_metadata, 2);					\
} while (0)

/*
 * Bad command lines are usage errors (exit 2); a port another socket
 * listens on is exit 1.
 */
SERVE_TEST(bad_command_lines)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char img[PATH_MAX + 32], addr[32];
	int l, ret;

	snprintf(img, sizeof(img), "%s/http-echo.img", self->x.e.dir);
	USAGE("--listen", "nonsense", img);
	USAGE("--listen", "127.0.0.1:0", "--warm", "300", img);
	USAGE("--listen", "127.0.0.1:0", "--max", "0", img);
	USAGE("--listen", "127.0.0.1:0", "--max", "200", "--warm", "57", img);
	USAGE("--listen", "127.0.0.1:0", "--ep-fd", "5", img);
	USAGE("--listen", "127.0.0.1:0", "--debug-forbidden-syscall", img);
	USAGE("--listen", "127.0.0.1:0", "--mem", "1M", img);
	USAGE("--listen", "127.0.0.1:0", "--timeout", "86401", img);
	USAGE("--listen", "127.0.0.1:0");
	USAGE("--warm", "1", img);
	USAGE("--lifetime", "1", img);

	/* a port in use */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, l);
	ret = bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	      getsockname(l, (struct sockaddr *)&a, &len) ? -errno : 0;
	EXPECT_EQ(0, ret) TH_LOG("a listening socket: %s", strerror(-ret));
	if (!ret) {
		snprintf(addr, sizeof(addr), "127.0.0.1:%u",
			 ntohs(a.sin_port));
		nvxtool(&cmd, "uvm", "serve", "--listen", addr, img, NULL);
		expect_exit(_metadata, 1);
		EXPECT_NE(NULL, strstr(cmd.err, "Address already in use"))
			TH_LOG("stderr: '%s'", cmd.err);
	}
	close(l);
}

TEST_HARNESS_MAIN
