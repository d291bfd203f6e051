// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": the socket calls of the reference system
 * process.
 *
 * Real guests under `nvxtool uvm run` (nvxtool from PATH, test.img from
 * beside this program), or in VMMs of the test served by one `nvxtool
 * uvm serve`, each test with a policy file of its own under /tmp and
 * real sockets of the test on 127.0.0.1. CONNECT follows the tenant's
 * egress rules: first match wins, no match (and the unspecified address
 * always) is ENETUNREACH, an IPv4-mapped address is judged as IPv4; a
 * tenant without the socket calls gets EPERM; a guest listens, accepts
 * and echoes the test's connections; an fd that is not a socket of the
 * VM is EBADF or ENOTSOCK (POLLNVAL for POLL), another VM's of the same
 * system process too; malformed calls get their errnos; POLL waits and
 * reports; a tenant with `netns = FILE` has its sockets in that network
 * namespace (one the test makes) and only there. test.img prints "err E"
 * (E the positive errno) for a call that failed
 * (Documentation/nvx/uvm-sys.rst, "Sockets").
 */
#include "uvm_fixture.h"
#include "run_util.h"

#include <arpa/inet.h>
#include <ftw.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define WAIT_MS		30000	/* for a guest's line or connection */
#define TREE_LEN	64	/* "/tmp/nvx-sys_sockets.XXXXXX" */
#define TPATH_LEN	128
#define UVM_STOPPED	125	/* uvm run's exit: the VM was stopped */
#define BIG		70000	/* more than test.img's 64 KiB recv() */

#define TEXT		"hello-from-the-guest"
#define REPLY		"hello from the host\n"
#define NS_REPLY	"hello from the netns\n"

#define CALL(t)		(1ULL << NVX_UVM_MSG_##t)
/* the calls of most tenants here: NET_WORDS in the policy file */
#define NET_WORDS	"write read exit clock close socket bind listen accept connect send sockrecv shutdown poll"
#define NET_CALLS	(CALL(WRITE) | CALL(READ) | CALL(EXIT) |	\
			 CALL(CLOCK) | CALL(CLOSE) | CALL(SOCKET) |	\
			 CALL(BIND) | CALL(LISTEN) | CALL(ACCEPT) |	\
			 CALL(CONNECT) | CALL(SEND) | CALL(SOCKRECV) |	\
			 CALL(SHUTDOWN) | CALL(POLL))
#define NET_TENANT(name, rules)						\
	"[tenant " name "]\ncalls = " NET_WORDS "\n" rules "\n"

/* The policy file's tenants; make_tree() adds "files", "inns", "notns". */
static const char tenants[] =
	NET_TENANT("ok", "egress = allow 127.0.0.0/8\n")
	NET_TENANT("none", "")
	NET_TENANT("deny", "egress = deny 127.0.0.1/32\negress = allow 127.0.0.0/8\n")
	NET_TENANT("order", "egress = allow 127.0.0.0/8\negress = deny 127.0.0.1/32\n")
	NET_TENANT("all", "egress = allow 0.0.0.0/0\n")
	NET_TENANT("v6", "egress = allow ::/0\n")
	"[tenant nonet]\ncalls = write read exit clock close\n\n"
	"[tenant noconnect]\ncalls = write read exit clock close socket\n"
	"egress = allow 127.0.0.0/8\n\n";

/* sock-use FD's lines: seven calls fail with EBADF (ENOTSOCK), POLLNVAL */
#define EBADF_7		"err 9\nerr 9\nerr 9\nerr 9\nerr 9\nerr 9\nerr 9\n"
#define ENOTSOCK_7	"err 88\nerr 88\nerr 88\nerr 88\nerr 88\nerr 88\nerr 88\n"
#define POLLNVAL_1	"poll 1 revents 32\n"
#define ACCEPTED	"accepted 127.0.0.1\n"

/* --policy FILE --tenant @name, for GUEST() */
#define TENANT(name)	{ "--policy", t.policy, "--tenant", name, NULL }

static struct run run;
static char test_img[PATH_MAX + 16];

/* nvxtool uvm run WHO... test.img -- ARGS... (@ap, NULL-terminated). */
static void uvm_argv(char **argv, const char *const *who, va_list ap)
{
	int n = 0;

	argv[n++] = (char *)"nvxtool";
	argv[n++] = (char *)"uvm";
	argv[n++] = (char *)"run";
	while (n < RUN_ARGS - 2 && *who)
		argv[n++] = (char *)*who++;
	argv[n++] = test_img;
	argv[n++] = (char *)"--";
	while (n < RUN_ARGS && (argv[n] = va_arg(ap, char *)))
		n++;
	argv[n] = NULL;
}

/* test.img ARGS... for the tenant @who, as run_argv() into run. */
static int guest(const char *const *who, ...)
{
	char *argv[RUN_ARGS + 1];
	va_list ap;

	va_start(ap, who);
	uvm_argv(argv, who, ap);
	va_end(ap);
	return run_argv(&run, argv);
}

/* The same in the background (spawn()), a kid of @e: its pid, or -1. */
static pid_t guest_bg(struct env *e, const char *const *who, ...)
{
	char *argv[RUN_ARGS + 1];
	va_list ap;
	pid_t pid;

	va_start(ap, who);
	uvm_argv(argv, who, ap);
	va_end(ap);
	pid = spawn(&run, argv);
	if (pid > 0 && add_kid(e, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pump_end(&run);
		pid = -1;
	}
	return pid;
}

/*
 * Read what the kid @pid (spawn()ed into run) writes until it ends,
 * within WAIT_MS (then SIGKILL its process group); reap it into
 * run.status and forget it.
 */
static void bg_end(struct env *e, pid_t pid)
{
	int i;

	if (!pump(&run, now_ms() + WAIT_MS, NULL)) {
		run.timed_out = true;
		kill(-pid, SIGKILL);
	}
	pump_end(&run);
	if (waitpid(pid, &run.status, 0) != pid)
		run.status = -1;
	for (i = 0; i < MAX_KIDS; i++)
		if (e->kids[i] == pid)
			e->kids[i] = 0;
}

/* @r exited with @code, having printed exactly @want (NULL: anything). */
static void expect_run(struct __test_metadata *_metadata, const struct run *r,
		       int code, const char *want)
{
	EXPECT_TRUE(WIFEXITED(r->status) && WEXITSTATUS(r->status) == code)
		TH_LOG("%s: status %#x%s, want exit %d; stdout: '%s'; stderr: '%s'",
		       r->cmd, r->status, r->timed_out ? " (timed out)" : "",
		       code, r->out, r->err);
	if (want)
		EXPECT_STREQ(want, r->out)
			TH_LOG("%s; stderr: '%s'", r->cmd, r->err);
}

/* test.img ARGS... for the tenant @who exits @code printing @want. */
#define GUEST(who, code, want, ...) do {				\
	guest(who, __VA_ARGS__, NULL);					\
	expect_run(_metadata, &run, code, want);			\
} while (0)

/* nvxtool on PATH (else skip) and test.img found, as sys_confine's. */
static bool prepare(struct __test_metadata *_metadata, struct env *e)
{
	int ret;

	if (system("command -v nvxtool >/dev/null 2>&1"))
		SKIP(return false, "nvxtool not on PATH");
	snprintf(test_img, sizeof(test_img), "%s/test.img", e->dir);
	ret = access(test_img, R_OK) ? -errno : 0;
	EXPECT_EQ(0, ret) TH_LOG("%s: %s", test_img, strerror(-ret));
	setenv("NVX_GUEST_DIR", e->dir, 1);
	return !ret;
}

/* The number of lines of @s. */
static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ------------------------------------------------------ the trees --- */

/*
 * One test's files under /tmp: the policy file, root/hello.txt (tenant
 * "files"), netns (an empty file a namespace may be bound at: tenant
 * "inns") and notns (a plain file: tenant "notns").
 */
struct tree {
	char dir[TREE_LEN];
	char policy[TPATH_LEN];
	char netns[TPATH_LEN];
};

/* @text into @path, mode 0644: 0 or -errno. */
static int put_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = errno ? -errno : -EIO;
	close(fd);
	return ret;
}

static int make_tree(struct tree *t)
{
	char path[TPATH_LEN], text[sizeof(tenants) + 4 * TPATH_LEN + 512];
	int ret;

	snprintf(t->dir, sizeof(t->dir), "/tmp/nvx-sys_sockets.XXXXXX");
	if (!mkdtemp(t->dir)) {
		t->dir[0] = 0;
		return -errno;
	}
	snprintf(t->policy, sizeof(t->policy), "%s/policy", t->dir);
	snprintf(t->netns, sizeof(t->netns), "%s/netns", t->dir);
	snprintf(path, sizeof(path), "%s/root", t->dir);
	if (mkdir(path, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/root/hello.txt", t->dir);
	ret = put_file(path, "hello\n");
	if (!ret)
		ret = put_file(t->netns, "");
	snprintf(path, sizeof(path), "%s/notns", t->dir);
	if (!ret)
		ret = put_file(path, "not a namespace\n");
	snprintf(text, sizeof(text),
		 "%s[tenant files]\nroot = %s/root\ncalls = " NET_WORDS " openat\n\n"
		 "[tenant inns]\nnetns = %s\ncalls = " NET_WORDS "\negress = allow 127.0.0.0/8\n\n"
		 "[tenant notns]\nnetns = %s/notns\ncalls = " NET_WORDS "\n"
		 "egress = allow 127.0.0.0/8\n",
		 tenants, t->dir, t->netns, t->dir);
	if (!ret)
		ret = put_file(t->policy, text);
	return ret;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Unbind a namespace at netns, remove the tree (never crossing a mount). */
static void free_tree(struct tree *t)
{
	if (!t->dir[0])
		return;
	umount2(t->netns, MNT_DETACH);
	nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	t->dir[0] = 0;
}

/* The tree; the tests check with EXPECT until free_tree(). */
#define TREE(t) do {							\
	struct tree *__t = (t);						\
	int __ret = make_tree(__t);					\
									\
	if (__ret)							\
		free_tree(__t);						\
	ASSERT_EQ(0, __ret) TH_LOG("making the tree: %s",		\
				   strerror(-__ret));			\
} while (0)

/* ---------------------------------------------- the test's sockets --- */

/*
 * A TCP socket bound to 127.0.0.1:@port (0: any), listening if @backlog;
 * its port in *@got unless NULL. The fd, or -errno.
 */
static int tcp_bound(int port, int backlog, int *got)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(a);
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (backlog && listen(fd, backlog)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		ret = -errno;
	if (ret) {
		close(fd);
		return ret;
	}
	if (got)
		*got = ntohs(a.sin_port);
	return fd;
}

/* A port of 127.0.0.1 that nothing uses now (for a guest to bind). */
static int free_port(void)
{
	int port = 0, fd = tcp_bound(0, 0, &port);

	if (fd < 0)
		return 0;
	close(fd);
	return port;
}

/* A connection comes to listener @l within @ms: accept and close it. */
static bool pending(int l, int ms)
{
	struct pollfd p = { .fd = l, .events = POLLIN };
	int c;

	if (poll(&p, 1, ms) != 1)
		return false;
	c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (c >= 0)
		close(c);
	return c >= 0;
}

/* A connection on @l while run's command runs, within @ms: fd, or -1. */
static int accept_while(int l, uint64_t ms)
{
	struct pollfd p = { .fd = l, .events = POLLIN };
	uint64_t end = now_ms() + ms;

	while (now_ms() < end) {
		if (poll(&p, 1, 20) == 1)
			return accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (pump(&run, now_ms() + 1, NULL))
			return -1;	/* it ended */
	}
	return -1;
}

/* @fd to its EOF (or @len bytes) into @buf within @ms: bytes, -errno. */
static long read_all(int fd, char *buf, size_t len, uint64_t ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ms() + ms, now;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		now = now_ms();
		if (now >= end)
			return -ETIMEDOUT;
		if (poll(&p, 1, end - now) <= 0)
			continue;
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (!n)
			break;
		if (n > 0)
			got += n;
	}
	return got;
}

/*
 * Connect to 127.0.0.1:@port, send @len bytes of fill_bytes(@seed), shut
 * down writing and read to EOF, within WAIT_MS, never blocking: @len
 * when those bytes came back, -EBADMSG when others did, or -errno.
 */
static long echo_through(int port, size_t len, unsigned int seed)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	unsigned char *out = malloc(len), *back = malloc(len + 1);
	uint64_t end = now_ms() + WAIT_MS, now;
	size_t sent = 0, got = 0;
	bool shut = false;
	struct pollfd p;
	long ret = 0;
	ssize_t n;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!out || !back || fd < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK))
		ret = !out || !back ? -ENOMEM : -errno;
	if (!ret)
		fill_bytes(out, len, seed);
	while (!ret) {
		if (sent == len && !shut) {
			shut = true;
			if (shutdown(fd, SHUT_WR))
				ret = -errno;
		}
		now = now_ms();
		if (now >= end)
			ret = -ETIMEDOUT;
		if (ret)
			break;
		p = (struct pollfd){ .fd = fd,
				     .events = POLLIN | (shut ? 0 : POLLOUT) };
		if (poll(&p, 1, end - now) <= 0)
			continue;
		if (!shut && (p.revents & POLLOUT)) {
			n = send(fd, out + sent, len - sent, MSG_NOSIGNAL);
			if (n > 0)
				sent += n;
			else if (n < 0 && errno != EAGAIN)
				ret = -errno;
		}
		if (ret || !(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(fd, back + got, len + 1 - got, 0);
		if (!n)
			break;		/* EOF */
		if (n > 0)
			got += n;
		else if (errno != EAGAIN)
			ret = -errno;
		if (got > len)
			break;
	}
	if (!ret)
		ret = got == len && !memcmp(out, back, len) ? (long)len :
							       -EBADMSG;
	if (fd >= 0)
		close(fd);
	free(out);
	free(back);
	return ret;
}

/* ------------------------------------------- a network namespace --- */

/*
 * The child of netns_up(): a network namespace of its own bound at
 * @t->netns (as `ip netns add` does), its loopback up, a listener on
 * 127.0.0.1:@port in it. It writes 0 (or the errno that stopped it) to
 * @rep, then serves connections one at a time: reads to EOF, replies
 * NS_REPLY, closes, writes what it read to @rep.
 */
static void netns_child(const struct tree *t, int port, int rep)
{
	struct ifreq ifr;
	int err = 0, s = -1, l = -1, c;
	char buf[256];
	long n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (unshare(CLONE_NEWNET) ||
	    mount("/proc/self/ns/net", t->netns, NULL, MS_BIND, NULL))
		err = errno;
	if (!err)
		s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!err && (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr)))
		err = errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(s, SIOCSIFFLAGS, &ifr))
		err = errno;
	if (!err)
		l = tcp_bound(port, 8, NULL);
	if (!err && l < 0)
		err = -l;
	if (write(rep, &err, sizeof(err)) != sizeof(err) || err)
		_exit(1);
	for (;;) {
		c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0 && errno == EINTR)
			continue;
		if (c < 0)
			_exit(1);
		n = read_all(c, buf, sizeof(buf), WAIT_MS);
		if (write(c, NS_REPLY, strlen(NS_REPLY)) < 0)
			n = -errno;
		close(c);
		if (n > 0 && write(rep, buf, n) != n)
			_exit(1);
	}
}

/*
 * A network namespace at @t->netns with netns_child() serving
 * 127.0.0.1:@port in it, a kid of @e whose reports come on *@rep. Its
 * pid, or -errno (-EPERM, -EINVAL: no network namespaces here).
 */
static pid_t netns_up(struct env *e, const struct tree *t, int port, int *rep)
{
	struct pollfd p;
	int fds[2], err;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (!pid) {
		close(fds[0]);
		netns_child(t, port, fds[1]);
		_exit(1);
	}
	err = pid < 0 ? errno : 0;
	close(fds[1]);
	if (!err && add_kid(e, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		err = ENOSPC;
	}
	if (err) {
		close(fds[0]);
		return -err;
	}
	p = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (poll(&p, 1, SHORT_MS) != 1 ||
	    read(fds[0], &err, sizeof(err)) != sizeof(err))
		err = ETIMEDOUT;
	if (err) {
		reap_kid(e, pid);
		close(fds[0]);
		return -err;
	}
	*rep = fds[0];
	return pid;
}

/* The next report of netns_child() on @rep into @buf (a string). */
static long netns_report(int rep, char *buf, size_t len)
{
	struct pollfd p = { .fd = rep, .events = POLLIN };
	ssize_t n;

	buf[0] = 0;
	if (poll(&p, 1, SHORT_MS) != 1)
		return -ETIMEDOUT;
	n = read(rep, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/* ------------------------------------------------------ the tests --- */

/*
 * CONNECT by the egress rules, to the test's listener on 127.0.0.1: an
 * allowed guest's bytes reach it and its reply comes back; with no rule,
 * a deny before the allow, or the unspecified address even with an
 * allow-all rule the guest gets ENETUNREACH and nothing connects; the
 * first match wins either way.
 */
UVM_TEST(connect_by_egress)
{
	struct tree t;
	const char *const ok[] = TENANT("ok");
	const char *const none[] = TENANT("none");
	const char *const deny[] = TENANT("deny");
	const char *const order[] = TENANT("order");
	const char *const all[] = TENANT("all");
	char port[8], buf[256], want[64];
	struct env *e = &self->e;
	int l, c = -1, p = 0;
	pid_t pid;
	long n;

	if (!prepare(_metadata, e))
		return;
	TREE(&t);

	l = tcp_bound(0, 8, &p);
	EXPECT_LE(0, l) TH_LOG("a listener: %s", strerror(-l));
	if (l < 0)
		goto out;
	snprintf(port, sizeof(port), "%d", p);

	/* allowed: TEXT reaches the host, REPLY's bytes come back */
	pid = guest_bg(e, ok, "sock-connect", "127.0.0.1", port, TEXT, NULL);
	EXPECT_LT(0, pid) TH_LOG("%s: did not start", run.cmd);
	if (pid < 0)
		goto out;
	c = accept_while(l, WAIT_MS);
	EXPECT_LE(0, c) TH_LOG("no connection; stdout: '%s'; stderr: '%s'",
			       run.out, run.err);
	if (c >= 0) {
		n = read_all(c, buf, sizeof(buf) - 1, WAIT_MS);
		buf[n > 0 ? n : 0] = 0;
		EXPECT_EQ((long)strlen(TEXT), n);
		EXPECT_STREQ(TEXT, buf);
		EXPECT_EQ((ssize_t)strlen(REPLY), write(c, REPLY, strlen(REPLY)));
		close(c);
	}
	bg_end(e, pid);
	snprintf(want, sizeof(want), "ok\ngot %zu\n", strlen(REPLY));
	expect_run(_metadata, &run, 0, want);

	/* no rule: default deny */
	GUEST(none, 0, "err 101\n", "sock-connect", "127.0.0.1", port, TEXT);
	EXPECT_FALSE(pending(l, 0));
	/* deny 127.0.0.1/32 before allow 127.0.0.0/8 */
	GUEST(deny, 0, "err 101\n", "sock-connect", "127.0.0.1", port, TEXT);
	EXPECT_FALSE(pending(l, 0));
	/* ... while 127.0.0.2 passes to the allow: no listener there */
	GUEST(deny, 0, "err 111\n", "sock-connect", "127.0.0.2", port);
	/* allow 127.0.0.0/8 before deny 127.0.0.1/32 */
	GUEST(order, 0, "ok\n", "sock-connect", "127.0.0.1", port);
	EXPECT_TRUE(pending(l, SHORT_MS));
	/* 0.0.0.0 (Linux: a local address) matches no rule, not even /0 */
	GUEST(all, 0, "err 101\n", "sock-connect", "0.0.0.0", port);
	EXPECT_FALSE(pending(l, 0));
	GUEST(all, 0, "ok\n", "sock-connect", "127.0.0.1", port);
	EXPECT_TRUE(pending(l, SHORT_MS));
out:
	if (l >= 0)
		close(l);
	free_tree(&t);
}

/*
 * An IPv6 socket's connect to ::ffff:127.0.0.1 is judged as 127.0.0.1:
 * the IPv4 rule allows it (and it reaches the IPv4 listener), an IPv6
 * allow-all rule does not, no rule does not.
 */
UVM_TEST(connect6_mapped)
{
	struct tree t;
	const char *const ok[] = TENANT("ok");
	const char *const none[] = TENANT("none");
	const char *const v6[] = TENANT("v6");
	char port[8];
	int l, fd, p = 0;

	if (!prepare(_metadata, &self->e))
		return;
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && errno == EAFNOSUPPORT)
		SKIP(return, "no IPv6 in this kernel (CONFIG_IPV6)");
	if (fd >= 0)
		close(fd);
	TREE(&t);

	l = tcp_bound(0, 8, &p);
	EXPECT_LE(0, l) TH_LOG("a listener: %s", strerror(-l));
	if (l < 0)
		goto out;
	snprintf(port, sizeof(port), "%d", p);

	GUEST(ok, 0, "ok\n", "sock-connect6", "127.0.0.1", port);
	EXPECT_TRUE(pending(l, SHORT_MS));
	GUEST(none, 0, "err 101\n", "sock-connect6", "127.0.0.1", port);
	EXPECT_FALSE(pending(l, 0));
	GUEST(v6, 0, "err 101\n", "sock-connect6", "127.0.0.1", port);
	EXPECT_FALSE(pending(l, 0));
	GUEST(v6, 0, "err 101\n", "sock-connect", "127.0.0.1", port);
	EXPECT_FALSE(pending(l, 0));
	close(l);
out:
	free_tree(&t);
}

/*
 * A tenant without the socket calls: socket() is EPERM (sock-echo exits
 * 1 after it); one with socket but not connect or bind: those are EPERM.
 * Nothing connects.
 */
UVM_TEST(calls_not_granted)
{
	struct tree t;
	const char *const nonet[] = TENANT("nonet");
	const char *const noconn[] = TENANT("noconnect");
	char port[8];
	int l, p = 0;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t);

	l = tcp_bound(0, 8, &p);
	EXPECT_LE(0, l) TH_LOG("a listener: %s", strerror(-l));
	if (l < 0)
		goto out;
	snprintf(port, sizeof(port), "%d", p);

	GUEST(nonet, 0, "err 1\n", "sock-connect", "127.0.0.1", port, TEXT);
	GUEST(nonet, 1, "err 1\n", "sock-echo", port, "1");
	GUEST(nonet, 0, "err 1\n", "sock-poll", port);
	GUEST(noconn, 0, "err 1\n", "sock-connect", "127.0.0.1", port, TEXT);
	GUEST(noconn, 1, "err 1\n", "sock-echo", port, "1");
	EXPECT_FALSE(pending(l, 0));
	close(l);
out:
	free_tree(&t);
}

/*
 * sock-echo in a guest: it listens, the test connects three times (1,
 * BIG and 3000 bytes), each comes back byte for byte from 127.0.0.1.
 * On a port the test listens on, bind() is EADDRINUSE: exit 1.
 */
UVM_TEST(listen_accept)
{
	static const size_t sizes[] = { 1, BIG, 3000 };
	struct tree t;
	const char *const ok[] = TENANT("ok");
	char port[8];
	struct env *e = &self->e;
	bool listening;
	unsigned int i;
	int l, p;
	pid_t pid;

	if (!prepare(_metadata, e))
		return;
	TREE(&t);

	p = free_port();
	EXPECT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	pid = guest_bg(e, ok, "sock-echo", port, "3", NULL);
	EXPECT_LT(0, pid) TH_LOG("%s: did not start", run.cmd);
	if (pid < 0)
		goto out;
	listening = pump(&run, now_ms() + WAIT_MS, "listening\n");
	EXPECT_TRUE(listening) TH_LOG("stdout '%s'; stderr '%s'", run.out,
				      run.err);
	if (listening) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++)
			EXPECT_EQ((long)sizes[i], echo_through(p, sizes[i], i))
				TH_LOG("connection %u of %zu bytes", i,
				       sizes[i]);
	}
	bg_end(e, pid);
	expect_run(_metadata, &run, 0,
		   "listening\n" ACCEPTED ACCEPTED ACCEPTED "done 3\n");

	l = tcp_bound(0, 8, &p);
	EXPECT_LE(0, l) TH_LOG("a listener: %s", strerror(-l));
	if (l < 0)
		goto out;
	snprintf(port, sizeof(port), "%d", p);
	GUEST(ok, 1, "err 98\n", "sock-echo", port, "1");
	close(l);
out:
	free_tree(&t);
}

/*
 * Fds that are not a socket of the VM: a closed one, never-opened ones
 * (3, 5, 64, -1) are EBADF, stdio and a file ENOTSOCK; POLL says
 * POLLNVAL (32) for them and does not wait.
 */
UVM_TEST(bad_fds)
{
	struct tree t;
	const char *const ok[] = TENANT("ok");
	const char *const files[] = TENANT("files");

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t);

	/*
	 * socket, close; on it send, recv, listen, accept, shutdown; listen
	 * on 64 and -1: EBADF; listen on 1, send on 0: ENOTSOCK
	 */
	GUEST(ok, 0, "fd 3\nok\n" EBADF_7 "err 88\nerr 88\n", "sock-fds");
	/* then open a file (fd 3 again), listen on it, poll it */
	GUEST(files, 0,
	      "fd 3\nok\n" EBADF_7 "err 88\nerr 88\nfd 3\nerr 88\n" POLLNVAL_1,
	      "sock-fds", "/hello.txt");
	/* send, recv, bind, listen, accept, connect, shutdown; poll */
	GUEST(ok, 0, EBADF_7 POLLNVAL_1, "sock-use", "5");
	GUEST(ok, 0, ENOTSOCK_7 POLLNVAL_1, "sock-use", "1");
	free_tree(&t);
}

/*
 * sock-bad: a family (97) or type (22) SOCKET does not know, flags a
 * call does not take, bad addresses (pad, IPv4's spare bytes: 22; a
 * family: 97; a size: 22), bad POLLs (17 entries, pad, POLLERR asked
 * for, a partial entry, flags): 22 each; the socket is still good
 * after (accept without listen: 22).
 */
UVM_TEST(malformed_calls)
{
	struct tree t;
	const char *const ok[] = TENANT("ok");

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t);

	GUEST(ok, 0,
	      "err 97\nerr 22\nerr 22\nfd 3\n"
	      /* send 0x4, send PEEK, recv 0x4, accept PEEK, shutdown 3 */
	      "err 22\nerr 22\nerr 22\nerr 22\nerr 22\n"
	      /* LISTEN flags; bind pad, connect addr[4], bind family 1 */
	      "err 22\nerr 22\nerr 22\nerr 97\n"
	      /* BIND 20 bytes, CONNECT 28 bytes, CONNECT flags */
	      "err 22\nerr 22\nerr 22\n"
	      /* POLL: 17 entries, pad, POLLERR, 12 bytes, flags */
	      "err 22\nerr 22\nerr 22\nerr 22\nerr 22\n"
	      /* accept(MSG_DONTWAIT) of a socket not listening */
	      "err 22\n",
	      "sock-bad");
	free_tree(&t);
}

/*
 * sock-poll: a listener, a client and the accepted socket polled with
 * a never-opened fd (40), -1 and stdout: the client writable, 40 and
 * stdout POLLNVAL, -1 nothing; a byte wakes a wait; a timeout is 0; the
 * EOF is POLLIN; a closed fd POLLNVAL; nothing to accept is EAGAIN.
 */
UVM_TEST(poll_sockets)
{
	struct tree t;
	const char *const ok[] = TENANT("ok");
	char port[8];
	int p;

	if (!prepare(_metadata, &self->e))
		return;
	TREE(&t);

	p = free_port();
	EXPECT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	GUEST(ok, 0,
	      "ok\npoll 3 revents 0 4 0 32 0 32\npoll 1 revents 1\n"
	      "poll 0 revents 0\nrecv 1\npoll 1 revents 1\nrecv 0\n"
	      "poll 1 revents 32\nerr 11\n",
	      "sock-poll", port);
	free_tree(&t);
}

/*
 * One `nvxtool uvm serve` for two VMs: VM A listens (its fd 3), VM B
 * uses fd 3 for every socket call: EBADF each, POLLNVAL; A's listener
 * is untouched (the test's connection is echoed after B is done). The
 * serve process exits 0 once both VMs are gone.
 */
UVM_TEST(foreign_vm_socket)
{
	struct nvx_uvm_endpoint ep = { .max_vms = 2 };	/* no CLOEXEC */
	char epfd[16], port[8];
	struct tree t;
	char *const argv[] = { (char *)"nvxtool", (char *)"uvm",
			       (char *)"serve", (char *)"--ep-fd", epfd,
			       (char *)"--policy", t.policy,
			       (char *)"--tenant", (char *)"ok", NULL };
	struct env *e = &self->e;
	struct vmm *a = NULL, *b = NULL;
	const char *nval, *acc;
	struct nvx_uvm_policy pol;
	pid_t pid = -1;
	uint64_t end;
	int ret, p;

	if (!prepare(_metadata, e))
		return;
	TREE(&t);
	p = free_port();
	EXPECT_LT(0, p);
	snprintf(port, sizeof(port), "%d", p);
	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
	if (ret)
		free_tree(&t);
	ASSERT_EQ(0, ret) TH_LOG("NVX_IOC_UVM_ENDPOINT: %s", strerror(-ret));
	snprintf(epfd, sizeof(epfd), "%d", ep.fd);

	pid = spawn(&run, argv);
	EXPECT_LT(0, pid) TH_LOG("%s: no pipe or fork", run.cmd);
	if (pid > 0 && add_kid(e, pid)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	if (pid < 0)
		goto out;
	/* it is up once it set the tenant's policy on the endpoint */
	end = now_ms() + WAIT_MS;
	do {
		memset(&pol, 0, sizeof(pol));
		ret = nvx_ioctl(ep.fd, NVX_UVM_EP_IOC_GET_POLICY, &pol);
		if (ret || pol.allow == NET_CALLS)
			break;
		usleep(10000);
	} while (now_ms() < end);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(NET_CALLS, pol.allow) TH_LOG("stderr: '%s'", run.err);
	if (ret || pol.allow != NET_CALLS)
		goto out;

	a = vmm_new(e);
	b = vmm_new(e);
	EXPECT_TRUE(a && b);
	if (!a || !b)
		goto out;
	ret = vmm_launch(e, a, ep.fd, 0, "test", "sock-echo", port, "1",
			 NULL);
	EXPECT_EQ(0, ret) TH_LOG("VM A: %s", vmm_why(a));
	if (ret)
		goto out;
	EXPECT_TRUE(pump(&run, now_ms() + WAIT_MS, "listening\n"))
		TH_LOG("VM A: stdout '%s'; stderr '%s'", run.out, run.err);
	ret = vmm_launch(e, b, ep.fd, 0, "test", "sock-use", "3", NULL);
	EXPECT_EQ(0, ret) TH_LOG("VM B: %s", vmm_why(b));
	if (ret)
		goto out;
	close(ep.fd);
	ep.fd = -1;

	EXPECT_EQ(0, vmm_wait(b, DEADLINE_MS));
	EXPECT_EQ(0, b->ret) TH_LOG("VM B: %s", vmm_why(b));
	EXPECT_EQ(0U, b->vm.exit_status);
	/* B is done: A's listener still takes the test's connection */
	EXPECT_EQ(1000L, echo_through(p, 1000, 1));
	EXPECT_EQ(0, vmm_wait(a, DEADLINE_MS));
	EXPECT_EQ(0, a->ret) TH_LOG("VM A: %s", vmm_why(a));
	EXPECT_EQ(0U, a->vm.exit_status);
	EXPECT_EQ(0, vmm_free(e, a));
	EXPECT_EQ(0, vmm_free(e, b));
	a = NULL;
	b = NULL;
	bg_end(e, pid);
	pid = -1;
	expect_run(_metadata, &run, 0, NULL);

	/* A: listening, accepted, done; B: 7 EBADF and POLLNVAL, between */
	EXPECT_EQ(0, strncmp(run.out, "listening\n", 10)) TH_LOG("'%s'", run.out);
	EXPECT_EQ(11, lines(run.out)) TH_LOG("'%s'", run.out);
	nval = strstr(run.out, EBADF_7 POLLNVAL_1);
	acc = strstr(run.out, ACCEPTED "done 1\n");
	EXPECT_TRUE(nval && acc && nval < acc) TH_LOG("'%s'", run.out);
	EXPECT_STREQ("", run.err);
out:
	if (ep.fd >= 0)
		close(ep.fd);
	if (a)
		vmm_free(e, a);
	if (b)
		vmm_free(e, b);
	if (pid > 0)
		reap_kid(e, pid);
	pump_end(&run);
	free_tree(&t);
}

/*
 * `netns = FILE`: the tenant's sockets are in that namespace. The test
 * makes one with a listener on 127.0.0.1:P; P is bound, not listening,
 * in the test's own, which also listens on P2. Tenant "inns" reaches P
 * there (its bytes arrive, the reply comes back) and not P2; tenant
 * "ok" (no netns) is refused at P (ECONNREFUSED) and reaches P2. A
 * netns that is not a network namespace stops the system process (the
 * VM is stopped, uvm run exits 125); a relative one is a usage error.
 */
UVM_TEST(tenant_netns)
{
	char port[8], port2[8], buf[256], want[PATH_MAX + 128];
	struct tree t;
	const char *const inns[] = TENANT("inns");
	const char *const ok[] = TENANT("ok");
	const char *const notns[] = TENANT("notns");
	const char *const rel[] = { "--policy", buf, "--tenant", "rel", NULL };
	int hold = -1, l = -1, rep = -1, p = 0, p2 = 0;
	struct env *e = &self->e;
	pid_t ns;
	long n;

	if (!prepare(_metadata, e))
		return;
	TREE(&t);

	hold = tcp_bound(0, 0, &p);
	l = tcp_bound(0, 8, &p2);
	EXPECT_TRUE(hold >= 0 && l >= 0);
	if (hold < 0 || l < 0)
		goto out;
	snprintf(port, sizeof(port), "%d", p);
	snprintf(port2, sizeof(port2), "%d", p2);
	ns = netns_up(e, &t, p, &rep);
	if (ns == -EPERM || ns == -EINVAL) {
		close(hold);
		close(l);
		free_tree(&t);
		SKIP(return, "no network namespace: %s", strerror(-ns));
	}
	EXPECT_LT(0, ns) TH_LOG("a network namespace: %s", strerror(-ns));
	if (ns < 0)
		goto out;

	snprintf(want, sizeof(want), "ok\ngot %zu\n", strlen(NS_REPLY));
	GUEST(inns, 0, want, "sock-connect", "127.0.0.1", port, TEXT);
	n = netns_report(rep, buf, sizeof(buf));
	EXPECT_EQ((long)strlen(TEXT), n);
	EXPECT_STREQ(TEXT, buf);
	GUEST(ok, 0, "err 111\n", "sock-connect", "127.0.0.1", port, TEXT);
	GUEST(inns, 0, "err 111\n", "sock-connect", "127.0.0.1", port2);
	EXPECT_FALSE(pending(l, 0));
	GUEST(ok, 0, "ok\n", "sock-connect", "127.0.0.1", port2);
	EXPECT_TRUE(pending(l, SHORT_MS));

	GUEST(notns, UVM_STOPPED, "", "sock-connect", "127.0.0.1", port);
	snprintf(want, sizeof(want),
		 "nvxtool: sys: enter netns %s/notns: Invalid argument (not a network namespace)\n",
		 t.dir);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);

	snprintf(buf, sizeof(buf), "%s/policy2", t.dir);
	EXPECT_EQ(0, put_file(buf, "[tenant rel]\nnetns = run/netns/x\ncalls = write exit\n"));
	GUEST(rel, 2, "", "sock-connect", "127.0.0.1", port);
	snprintf(want, sizeof(want),
		 "nvxtool: %s:2: netns: an absolute path (/run/netns/NAME), not 'run/netns/x'\n",
		 buf);
	EXPECT_NE(NULL, strstr(run.err, want)) TH_LOG("stderr: '%s'", run.err);
	reap_kid(e, ns);
out:
	if (rep >= 0)
		close(rep);
	if (hold >= 0)
		close(hold);
	if (l >= 0)
		close(l);
	free_tree(&t);
}

TEST_HARNESS_MAIN
