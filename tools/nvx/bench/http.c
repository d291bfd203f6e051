// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench http: an HTTP/1.1 echo function served from user VMs by
 * `nvxtool uvm serve --listen` (guest image http-echo), against the same
 * echo served by host processes: the cold start to the first response,
 * a new connection per request, against an inetd-style server that
 * forks and execs the static http-echo-host per connection; and
 * keep-alive requests per second against one epoll process. The client
 * is this process, over loopback TCP; the host servers are forked
 * children of it.
 *
 * For trying the bench without nvx, NVX_BENCH_HTTP_SERVER may hold a
 * command line (words split at spaces) that replaces `nvxtool uvm serve`:
 * it gets the same arguments and must behave the same way. The device
 * is then neither opened nor its pool grown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvx/pool.h>

#include "bench.h"
#include "nvx_uvm.h"

enum {
	NVX_HTTP_OPT_ITERATIONS = 0x100,
	NVX_HTTP_OPT_DURATION,
	NVX_HTTP_OPT_WARM,
	NVX_HTTP_OPT_CONNS,
	NVX_HTTP_OPT_MAX,
	NVX_HTTP_OPT_NO_WARM,
};

#define NVX_HTTP_BODY		16		/* bytes of a request's body */
#define NVX_HTTP_HDR_MAX	16384		/* of a head, either way */
#define NVX_HTTP_BUF		(NVX_HTTP_HDR_MAX + 4096)
#define NVX_HTTP_IO_MS		30000		/* the longest wait for I/O */
#define NVX_HTTP_LISTEN_MS	60000		/* for `listening on` */
#define NVX_HTTP_STOP_MS	10000		/* SIGTERM, then SIGKILL */
#define NVX_HTTP_MAX_POINTS	16		/* entries of --conns */
#define NVX_HTTP_MAX_CONNS	512
/* a VM's RAM (uvm's default), and room besides in the pool */
#define NVX_HTTP_VM_MEM		(4ULL << 20)
#define NVX_HTTP_POOL_SLACK	(16ULL << 20)
#define NVX_HTTP_SERVER_ENV	"NVX_BENCH_HTTP_SERVER"
#define NVX_HTTP_LAT_FMT	"p50 %8.3f ms  p95 %8.3f ms  p99 %8.3f ms\n"

/* Percentiles of one set of times. */
struct nvx_http_lat {
	double p50, p95, p99;		/* ms */
};

/* One point of the keep-alive measure, for one server. */
struct nvx_http_rate {
	uint64_t requests;		/* answered within the duration */
	double rps;
	struct nvx_http_lat lat;
};

struct nvx_http_point {
	unsigned int conns;
	struct nvx_http_rate uvm, host;
};

struct nvx_http_bench {
	struct nvx_ctx *ctx;
	unsigned int iterations, duration, warm, max;
	unsigned int conns[NVX_HTTP_MAX_POINTS], nr_points, max_conns;
	bool no_warm;
	char *server[16];		/* the command line before its options */
	char image[PATH_MAX], echo_host[PATH_MAX], tool[PATH_MAX];
	char *env_copy;			/* what server[] points into */
	struct nvx_http_lat cold_uvm0, cold_uvm, cold_host;
	unsigned int keep_warm;		/* --warm of the keep-alive server */
	struct nvx_http_point points[NVX_HTTP_MAX_POINTS];
	uint64_t *ns;			/* the samples of one server */
	size_t nr_ns, cap_ns;
};

/* A server this process started, and where it listens. */
struct nvx_http_server {
	const char *name;
	pid_t pid;			/* its process group too; 0: none */
	int out_fd;			/* its stdout (nvx), or -1 */
	struct sockaddr_in addr;
	uint64_t pool;			/* the pool grew by this for it */
};

static uint64_t nvx_http_ms_left(uint64_t deadline)
{
	uint64_t now = nvx_now_ns();

	return now >= deadline ? 0 : (deadline - now) / 1000000 + 1;
}

/* Record one sample in b->ns. */
static int nvx_http_sample(struct nvx_http_bench *b, uint64_t ns)
{
	uint64_t *v;

	if (b->nr_ns == b->cap_ns) {
		v = realloc(b->ns, (b->cap_ns ? 2 * b->cap_ns : 4096) *
			    sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->ns = v;
		b->cap_ns = b->cap_ns ? 2 * b->cap_ns : 4096;
	}
	b->ns[b->nr_ns++] = ns;
	return 0;
}

/* Sort the samples, take their percentiles and forget them. */
static void nvx_http_lat(struct nvx_http_bench *b, struct nvx_http_lat *l)
{
	unsigned int n = b->nr_ns;

	if (!n) {
		l->p50 = NAN;
		l->p95 = NAN;
		l->p99 = NAN;
		return;
	}
	qsort(b->ns, n, sizeof(uint64_t), nvx_bench_cmp_u64);
	l->p50 = nvx_bench_pct_ms(b->ns, n, 0.5);
	l->p95 = nvx_bench_pct_ms(b->ns, n, 0.95);
	l->p99 = nvx_bench_pct_ms(b->ns, n, 0.99);
	b->nr_ns = 0;
}

/*
 * HTTP, the little of it both ends need: a head ends with an empty
 * line; Content-Length gives the length of the body that follows.
 */

/* The length of the head in @buf, its empty line included, or 0. */
static size_t nvx_http_head_end(const char *buf, size_t len)
{
	const char *e = memmem(buf, len, "\r\n\r\n", 4);

	return e ? (size_t)(e - buf) + 4 : 0;
}

/*
 * The value of header @name (with its colon, any case) in the head @h of
 * @hlen bytes: its start, its length in *@vlen; NULL when it has none.
 */
static const char *nvx_http_header(const char *h, size_t hlen,
				   const char *name, size_t *vlen)
{
	size_t nlen = strlen(name);
	const char *p, *eol, *end = h + hlen;

	p = memmem(h, hlen, "\r\n", 2);
	for (; p && p + 2 < end; p = eol) {
		p += 2;
		eol = memmem(p, end - p, "\r\n", 2);
		if (!eol)
			break;
		if ((size_t)(eol - p) < nlen || strncasecmp(p, name, nlen))
			continue;
		for (p += nlen; p < eol && (*p == ' ' || *p == '\t'); p++)
			;
		*vlen = eol - p;
		return p;
	}
	return NULL;
}

/* Content-Length of a head: 0 and *@len, or -1 when missing or bad. */
static int nvx_http_content_length(const char *h, size_t hlen,
				   unsigned long long *len)
{
	unsigned long long v = 0;
	const char *p;
	size_t n, i;

	p = nvx_http_header(h, hlen, "content-length:", &n);
	if (!p || !n || n > 12)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + p[i] - '0';
	}
	*len = v;
	return 0;
}

/* A request with @body (NVX_HTTP_BODY bytes) into @out: its length. */
static size_t nvx_http_request(char *out, size_t size, const char *body,
			       bool close)
{
	int n;

	n = snprintf(out, size,
		     "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		     "Content-Type: application/octet-stream\r\n"
		     "Content-Length: %u\r\n%s\r\n",
		     NVX_HTTP_BODY, close ? "Connection: close\r\n" : "");
	memcpy(out + n, body, NVX_HTTP_BODY);
	return n + NVX_HTTP_BODY;
}

/* The body of request @seq on connection @conn: 16 bytes, all distinct. */
static void nvx_http_body(char body[NVX_HTTP_BODY + 1], unsigned int conn,
			  unsigned int seq)
{
	snprintf(body, NVX_HTTP_BODY + 1, "%04x:%010x\n", conn & 0xffff,
		 seq);
}

/*
 * Check the answer in @buf (@len bytes) to a request with @body: 0 while
 * it is not complete, 1 and its length in *@used when it is the
 * expected one, -1 and why in @why when it is not.
 */
static int nvx_http_check(const char *buf, size_t len, const char *body,
			  size_t *used, char *why, size_t wsize)
{
	unsigned long long clen;
	size_t hlen, n;

	hlen = nvx_http_head_end(buf, len);
	if (!hlen) {
		if (len < NVX_HTTP_HDR_MAX)
			return 0;
		snprintf(why, wsize, "a head longer than %u bytes",
			 NVX_HTTP_HDR_MAX);
		return -1;
	}
	if (hlen < 13 || memcmp(buf, "HTTP/1.1 200 ", 13)) {
		for (n = 0; n < hlen && n < 60 && buf[n] != '\r'; n++)
			;
		snprintf(why, wsize, "answer \"%.*s\", not 200", (int)n, buf);
		return -1;
	}
	if (nvx_http_content_length(buf, hlen, &clen)) {
		snprintf(why, wsize, "no or a bad Content-Length");
		return -1;
	}
	if (clen != NVX_HTTP_BODY) {
		snprintf(why, wsize, "a body of %llu bytes, not %u", clen,
			 NVX_HTTP_BODY);
		return -1;
	}
	if (len < hlen + clen)
		return 0;
	if (memcmp(buf + hlen, body, NVX_HTTP_BODY)) {
		snprintf(why, wsize, "a body that is not the request's");
		return -1;
	}
	*used = hlen + clen;
	return 1;
}

/* All of @len bytes to the socket @fd, waiting when it is full. */
static int nvx_http_send(int fd, const char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	ssize_t k;

	while (len) {
		k = send(fd, buf, len, MSG_NOSIGNAL);
		if (k > 0) {
			buf += k;
			len -= k;
			continue;
		}
		if (k < 0 && errno != EAGAIN)
			return -errno;
		k = poll(&p, 1, NVX_HTTP_IO_MS);
		if (k <= 0)
			return k ? -errno : -ETIMEDOUT;
	}
	return 0;
}

/*
 * The host servers: children of this process, each in a process group of
 * its own, serving the listening socket they inherit.
 */

static int nvx_http_stopping;	/* set by a signal handler: __atomic */
static int nvx_http_listen_fd = -1;

/* SIGTERM in a host server: wake accept() or epoll_wait(), then stop. */
static void nvx_http_host_term(int sig)
{
	__atomic_store_n(&nvx_http_stopping, 1, __ATOMIC_RELAXED);
	shutdown(nvx_http_listen_fd, SHUT_RDWR);
}

/*
 * In a child: its own process group, SIGTERM when this process dies, the
 * default actions of the signals nvx_stop_catch() took.
 */
static void nvx_http_child_init(pid_t parent)
{
	setpgid(0, 0);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(1);
}

static void nvx_http_host_signals(int lfd)
{
	struct sigaction sa = { .sa_handler = nvx_http_host_term };

	/* no SA_RESTART: a blocked accept() or epoll_wait() returns */
	nvx_http_listen_fd = lfd;
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * The inetd-style server: fork and exec @echo per connection, the
 * connection its fd 0 and 1; reap what ended after every accept().
 * At SIGTERM, SIGTERM its children and wait for them.
 */
static void __attribute__((noreturn)) nvx_http_inetd(int lfd,
						     const char *echo)
{
	char *const argv[] = { (char *)echo, NULL };
	int c, ret = 0;
	pid_t pid;

	nvx_http_host_signals(lfd);
	while (!__atomic_load_n(&nvx_http_stopping, __ATOMIC_RELAXED)) {
		c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (!__atomic_load_n(&nvx_http_stopping, __ATOMIC_RELAXED)) {
				perror("nvx-bench http: inetd: accept");
				ret = 1;
			}
			break;
		}
		pid = fork();
		if (!pid) {
			/* dup2() leaves FD_CLOEXEC off the copies */
			if (dup2(c, 0) < 0 || dup2(c, 1) < 0)
				_exit(127);
			execv(echo, argv);
			_exit(127);
		}
		if (pid < 0)
			perror("nvx-bench http: inetd: fork");
		close(c);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGTERM);
	while (waitpid(-1, NULL, 0) > 0)
		;
	_exit(ret);
}

/* A connection of the epoll server. */
struct nvx_http_sconn {
	int fd;
	bool closing;		/* close once the output is out */
	size_t len;		/* bytes held in @in */
	size_t olen, ooff;	/* bytes in out, of them sent */
	size_t ocap;
	char *out;
	char in[NVX_HTTP_BUF];
};

/* An answer to the complete requests in c->in: 0, or -1 to close now. */
static int nvx_http_serve_reqs(struct nvx_http_sconn *c)
{
	static const char bad[] = "HTTP/1.1 400 Bad Request\r\n"
				  "Content-Length: 0\r\nConnection: close\r\n\r\n";
	unsigned long long clen;
	size_t hlen, n, cl_len;
	const char *v;
	char head[96];
	bool keep;
	char *o;
	int k;

	while (!c->closing) {
		hlen = nvx_http_head_end(c->in, c->len);
		if (!hlen) {
			if (c->len == sizeof(c->in))
				goto fail;
			return 0;
		}
		clen = 0;
		v = nvx_http_header(c->in, hlen, "content-length:", &cl_len);
		if (v && nvx_http_content_length(c->in, hlen, &clen))
			goto fail;
		if (clen > sizeof(c->in) - hlen)
			goto fail;
		if (c->len < hlen + clen)
			return 0;
		v = nvx_http_header(c->in, hlen, "connection:", &n);
		keep = !(v && memmem(v, n, "close", 5));
		k = snprintf(head, sizeof(head),
			     "HTTP/1.1 200 OK\r\nContent-Length: %llu\r\n%s\r\n",
			     clen, keep ? "" : "Connection: close\r\n");
		n = k + clen;
		if (c->olen + n > c->ocap) {
			o = realloc(c->out, c->olen + n + 4096);
			if (!o)
				return -1;
			c->out = o;
			c->ocap = c->olen + n + 4096;
		}
		memcpy(c->out + c->olen, head, k);
		memcpy(c->out + c->olen + k, c->in + hlen, clen);
		c->olen += n;
		memmove(c->in, c->in + hlen + clen, c->len - hlen - clen);
		c->len -= hlen + clen;
		c->closing = !keep;
	}
	return 0;
fail:
	c->len = 0;
	c->closing = true;
	if (c->olen + sizeof(bad) > c->ocap) {
		o = realloc(c->out, c->olen + sizeof(bad));
		if (!o)
			return -1;
		c->out = o;
		c->ocap = c->olen + sizeof(bad);
	}
	memcpy(c->out + c->olen, bad, sizeof(bad) - 1);
	c->olen += sizeof(bad) - 1;
	return 0;
}

/* Read, answer and write what can be: 0, or -1 when it is to close. */
static int nvx_http_sconn_io(int ep, struct nvx_http_sconn *c)
{
	struct epoll_event ev = { .data.ptr = c };
	bool eof = false;
	ssize_t k;

	while (!c->closing && c->len < sizeof(c->in)) {
		k = recv(c->fd, c->in + c->len, sizeof(c->in) - c->len, 0);
		if (k > 0) {
			c->len += k;
			if (nvx_http_serve_reqs(c))
				return -1;
			continue;
		}
		if (!k)
			eof = true;
		else if (errno != EAGAIN && errno != EINTR)
			return -1;
		break;
	}
	while (c->ooff < c->olen) {
		k = send(c->fd, c->out + c->ooff, c->olen - c->ooff,
			 MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EAGAIN)
				break;
			if (errno == EINTR)
				continue;
			return -1;
		}
		c->ooff += k;
	}
	if (c->ooff == c->olen) {
		c->ooff = 0;
		c->olen = 0;
		if (c->closing || eof)
			return -1;
		ev.events = EPOLLIN;
	} else {
		ev.events = EPOLLOUT;
	}
	return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) ? -1 : 0;
}

static void nvx_http_sconn_close(struct nvx_http_sconn *c)
{
	close(c->fd);
	free(c->out);
	free(c);
}

/*
 * The epoll server: one process, one thread, every connection
 * non-blocking; requests parsed as http-echo does (request line,
 * headers, a Content-Length body) and answered with their body.
 */
static void __attribute__((noreturn)) nvx_http_epoll_server(int lfd)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	struct nvx_http_sconn *c;
	int ep, n, i, fd, one = 1;

	nvx_http_host_signals(lfd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || fcntl(lfd, F_SETFL, O_NONBLOCK) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		perror("nvx-bench http: epoll server");
		_exit(1);
	}
	while (!__atomic_load_n(&nvx_http_stopping, __ATOMIC_RELAXED)) {
		n = epoll_wait(ep, evs, 64, -1);
		if (n < 0 && errno != EINTR) {
			perror("nvx-bench http: epoll server: epoll_wait");
			_exit(1);
		}
		for (i = 0; i < n; i++) {
			c = evs[i].data.ptr;
			if (c) {
				if (nvx_http_sconn_io(ep, c))
					nvx_http_sconn_close(c);
				continue;
			}
			while ((fd = accept4(lfd, NULL, NULL,
					     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				c = calloc(1, sizeof(*c));
				if (!c) {
					close(fd);
					continue;
				}
				c->fd = fd;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
					nvx_http_sconn_close(c);
			}
		}
	}
	_exit(0);
}

/* A listening socket on 127.0.0.1 and a free port, in *@a. */
static int nvx_http_listen(struct sockaddr_in *a)
{
	socklen_t alen = sizeof(*a);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)a, &alen)) {
		one = -errno;
		close(fd);
		return one;
	}
	return fd;
}

/* Fork a host server, @echo for the inetd one, NULL for the epoll one. */
static int nvx_http_host_start(struct nvx_http_server *s, const char *echo)
{
	pid_t parent = getpid();
	int lfd;

	lfd = nvx_http_listen(&s->addr);
	if (lfd < 0) {
		nvx_err("bench http: %s: listen on 127.0.0.1: %s", s->name,
			strerror(-lfd));
		return lfd;
	}
	fflush(NULL);
	s->pid = fork();
	if (!s->pid) {
		nvx_http_child_init(parent);
		if (echo)
			nvx_http_inetd(lfd, echo);
		nvx_http_epoll_server(lfd);
	}
	close(lfd);
	if (s->pid < 0) {
		s->pid = 0;
		nvx_err("bench http: %s: fork: %s", s->name, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Read the server's `listening on ADDR:PORT` into s->addr. */
static int nvx_http_listening(struct nvx_http_server *s)
{
	static const char word[] = "listening on ";
	uint64_t deadline = nvx_now_ns() + NVX_HTTP_LISTEN_MS * 1000000ULL;
	struct pollfd p = { .fd = s->out_fd, .events = POLLIN };
	char line[256], *colon, *end;
	unsigned long port;
	size_t len = 0;
	ssize_t k;
	int r;

	while (!memchr(line, '\n', len)) {
		if (len == sizeof(line) - 1) {
			nvx_err("bench http: %s: a first line of over %zu bytes",
				s->name, len);
			return -EPROTO;
		}
		r = poll(&p, 1, nvx_http_ms_left(deadline));
		if (r < 0)
			return -errno;
		if (!r) {
			nvx_err("bench http: %s: no `listening on` line in %u s",
				s->name, NVX_HTTP_LISTEN_MS / 1000);
			return -ETIMEDOUT;
		}
		k = read(s->out_fd, line + len, sizeof(line) - 1 - len);
		if (k < 0 && errno == EINTR)
			return -EINTR;
		if (k <= 0) {
			nvx_err("bench http: %s: ended before it listened",
				s->name);
			return -EPIPE;
		}
		len += k;
	}
	line[len] = 0;
	*strchr(line, '\n') = 0;
	colon = strrchr(line, ':');
	if (strncmp(line, word, sizeof(word) - 1) || !colon)
		goto bad;
	*colon = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || !port || port > 65535)
		goto bad;
	memset(&s->addr, 0, sizeof(s->addr));
	s->addr.sin_family = AF_INET;
	s->addr.sin_port = htons(port);
	if (inet_pton(AF_INET, line + sizeof(word) - 1,
		      &s->addr.sin_addr) != 1 ||
	    s->addr.sin_addr.s_addr == htonl(INADDR_ANY))
		s->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return 0;
bad:
	nvx_err("bench http: %s: not `listening on ADDR:PORT`: %s", s->name,
		line);
	return -EPROTO;
}

/* Grow the pool for @vms VMs at a time of the nvx server @s. */
static int nvx_http_pool(struct nvx_http_bench *b, struct nvx_http_server *s,
			 unsigned int vms)
{
	struct nvx_pool_resize grow = { 0 };
	int ret;

	grow.node = NVX_NODE_ANY;
	grow.bytes = vms * NVX_HTTP_VM_MEM + NVX_HTTP_POOL_SLACK;
	ret = nvx_ioctl(b->ctx, NVX_IOC_POOL_GROW, &grow, "NVX_IOC_POOL_GROW");
	s->pool = grow.done;
	return ret ? -ENOMEM : 0;
}

/*
 * Start `nvxtool uvm serve --listen 127.0.0.1:0 --warm @warm --max M
 * IMAGE` with its stdout a pipe, and wait for its `listening on` line.
 * @vms: the VMs it may hold at a time, for the pool.
 */
static int nvx_http_nvx_start(struct nvx_http_bench *b,
			      struct nvx_http_server *s, unsigned int warm,
			      unsigned int vms)
{
	char warm_s[16], max_s[16], *argv[32];
	pid_t parent = getpid();
	unsigned int a;
	int p[2], dn, ret;

	if (!b->env_copy) {
		ret = nvx_http_pool(b, s, vms);
		if (ret)
			return ret;
	}
	snprintf(warm_s, sizeof(warm_s), "%u", warm);
	snprintf(max_s, sizeof(max_s), "%u", b->max);
	for (a = 0; b->server[a]; a++)
		argv[a] = b->server[a];
	argv[a++] = "--listen";
	argv[a++] = "127.0.0.1:0";
	argv[a++] = "--warm";
	argv[a++] = warm_s;
	argv[a++] = "--max";
	argv[a++] = max_s;
	argv[a++] = b->image;
	argv[a] = NULL;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	s->pid = fork();
	if (!s->pid) {
		nvx_http_child_init(parent);
		dn = open("/dev/null", O_RDONLY);
		if (dn < 0 || dup2(dn, 0) < 0 || dup2(p[1], 1) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "nvx-bench http: %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (s->pid < 0) {
		ret = -errno;
		s->pid = 0;
		close(p[0]);
		nvx_err("bench http: %s: fork: %s", s->name, strerror(-ret));
		return ret;
	}
	s->out_fd = p[0];
	return nvx_http_listening(s);
}

/*
 * Stop server @s: SIGTERM, SIGKILL to its process group after
 * NVX_HTTP_STOP_MS, and reap it; give back what the pool grew for it.
 */
static void nvx_http_stop(struct nvx_http_bench *b, struct nvx_http_server *s)
{
	uint64_t deadline = nvx_now_ns() + NVX_HTTP_STOP_MS * 1000000ULL;
	char buf[256];
	pid_t r;
	int st = 0;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		while ((r = waitpid(s->pid, &st, WNOHANG)) == 0 &&
		       nvx_now_ns() < deadline)
			usleep(10000);
		if (r != s->pid) {
			nvx_warn("bench http: %s did not stop in %u s: killed",
				 s->name, NVX_HTTP_STOP_MS / 1000);
			kill(-s->pid, SIGKILL);
			kill(s->pid, SIGKILL);
			while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
				;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			nvx_warn("bench http: %s ended with status %#x at SIGTERM",
				 s->name, st);
		}
		s->pid = 0;
	}
	if (s->out_fd >= 0) {
		/* anything it wrote after its first line */
		fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
		while (read(s->out_fd, buf, sizeof(buf)) > 0)
			;
		close(s->out_fd);
		s->out_fd = -1;
	}
	if (s->pool) {
		nvx_bench_shrink(b->ctx, s->pool, "http");
		s->pool = 0;
	}
}

/* A connected TCP socket to @a, blocking, TCP_NODELAY. */
static int nvx_http_connect(const struct sockaddr_in *a, uint64_t *t0)
{
	int fd, one = 1, ret;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (t0)
		*t0 = nvx_now_ns();
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * One request on a new connection with Connection: close: from the start
 * of connect() to the whole answer, in *@ns. Then the server must close
 * the connection without sending more.
 */
static int nvx_http_once(const struct sockaddr_in *a, unsigned int seq,
			 uint64_t *ns, char *why, size_t wsize)
{
	char req[256], body[NVX_HTTP_BODY + 1], buf[NVX_HTTP_BUF];
	struct pollfd p = { .events = POLLIN };
	size_t rlen, len = 0, used = 0;
	uint64_t t0 = 0, deadline;
	int fd, ret = 0;
	ssize_t k;

	nvx_http_body(body, 0, seq);
	rlen = nvx_http_request(req, sizeof(req), body, true);
	fd = nvx_http_connect(a, &t0);
	if (fd < 0) {
		snprintf(why, wsize, "connect: %s", strerror(-fd));
		return fd;
	}
	deadline = t0 + NVX_HTTP_IO_MS * 1000000ULL;
	p.fd = fd;
	ret = nvx_http_send(fd, req, rlen);
	if (ret) {
		snprintf(why, wsize, "send: %s", strerror(-ret));
		goto out;
	}
	while (!ret) {
		ret = poll(&p, 1, nvx_http_ms_left(deadline));
		if (ret <= 0) {
			ret = ret ? -errno : -ETIMEDOUT;
			snprintf(why, wsize, "no answer: %s", strerror(-ret));
			goto out;
		}
		k = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (k <= 0) {
			ret = k ? -errno : -EPIPE;
			snprintf(why, wsize, "%s after %zu bytes of the answer",
				 k ? strerror(errno) : "closed", len);
			goto out;
		}
		len += k;
		ret = nvx_http_check(buf, len, body, &used, why, wsize);
	}
	*ns = nvx_now_ns() - t0;
	if (ret < 0) {
		ret = -EPROTO;
		goto out;
	}
	/* Connection: close: the end of the stream, nothing more */
	deadline = nvx_now_ns() + NVX_HTTP_IO_MS * 1000000ULL;
	for (ret = 0;;) {
		if (len > used) {
			snprintf(why, wsize, "%zu bytes after the answer",
				 len - used);
			ret = -EPROTO;
			break;
		}
		len = 0;
		used = 0;
		ret = poll(&p, 1, nvx_http_ms_left(deadline));
		if (ret <= 0) {
			ret = ret ? -errno : -ETIMEDOUT;
			snprintf(why, wsize, "Connection: close, not closed: %s",
				 strerror(-ret));
			break;
		}
		k = recv(fd, buf, sizeof(buf), 0);
		ret = 0;
		if (!k || (k < 0 && errno == ECONNRESET))
			break;
		if (k < 0) {
			ret = -errno;
			snprintf(why, wsize, "recv: %s", strerror(errno));
			break;
		}
		len = k;
	}
out:
	close(fd);
	return ret;
}

/*
 * The cold start against server @s: one request untimed, then
 * b->iterations timed, each on a new connection.
 */
static int nvx_http_cold(struct nvx_http_bench *b, struct nvx_http_server *s,
			 struct nvx_http_lat *l)
{
	unsigned int i;
	uint64_t ns;
	char why[128];
	int ret;

	for (i = 0; i <= b->iterations; i++) {
		if (nvx_stop_signal())
			return -EINTR;
		ret = nvx_http_once(&s->addr, i, &ns, why, sizeof(why));
		if (ret) {
			nvx_err("bench http: %s: request %u of %u: %s",
				s->name, i, b->iterations, why);
			return ret;
		}
		if (i) {
			ret = nvx_http_sample(b, ns);
			if (ret)
				return ret;
		}
	}
	nvx_http_lat(b, l);
	return 0;
}

/* A keep-alive connection of the client. */
struct nvx_http_cconn {
	int fd;
	unsigned int seq;
	bool busy;		/* a request is out */
	uint64_t t0;		/* when it went */
	size_t len;
	char body[NVX_HTTP_BODY + 1];
	char buf[NVX_HTTP_BUF];
};

/* Send connection @i's next request. */
static int nvx_http_next(struct nvx_http_cconn *c, unsigned int i)
{
	char req[256];
	size_t rlen;

	nvx_http_body(c->body, i, c->seq++);
	rlen = nvx_http_request(req, sizeof(req), c->body, false);
	c->busy = true;
	c->t0 = nvx_now_ns();
	return nvx_http_send(c->fd, req, rlen);
}

/*
 * Read what connection @c has: 1 when its answer is complete (and
 * right), 0 while it is not, < 0 after a message.
 */
static int nvx_http_read(struct nvx_http_server *s, struct nvx_http_cconn *c,
			 unsigned int i)
{
	size_t used;
	char why[128];
	ssize_t k;
	int ret;

	k = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (k <= 0) {
		nvx_err("bench http: %s: connection %u: %s", s->name, i,
			k ? strerror(errno) : "closed by the server");
		return k ? -errno : -EPIPE;
	}
	c->len += k;
	ret = nvx_http_check(c->buf, c->len, c->body, &used, why,
			     sizeof(why));
	if (ret > 0 && c->len > used) {
		snprintf(why, sizeof(why), "%zu bytes after the answer",
			 c->len - used);
		ret = -1;
	}
	if (ret < 0) {
		nvx_err("bench http: %s: connection %u, request %u: %s",
			s->name, i, c->seq, why);
		return -EPROTO;
	}
	if (ret)
		c->len = 0;
	return ret;
}

/*
 * Keep-alive requests on @conns connections to @s, one request out on
 * each at a time, by this thread with epoll: one request on each,
 * untimed, then requests back to back for b->duration seconds. The
 * requests answered within that time count.
 */
static int nvx_http_rate(struct nvx_http_bench *b, struct nvx_http_server *s,
			 unsigned int conns, struct nvx_http_rate *r)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	uint64_t now, t_start = 0, t_end = 0;
	unsigned int i, busy = 0, round;
	struct nvx_http_cconn *cc, *c;
	int ep, n, k, ret = 0;

	cc = calloc(conns, sizeof(*cc));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!cc || ep < 0) {
		ret = cc ? -errno : -ENOMEM;
		nvx_err("bench http: %s", strerror(-ret));
		goto out;
	}
	for (i = 0; i < conns; i++)
		cc[i].fd = -1;
	for (i = 0; i < conns; i++) {
		ret = nvx_http_connect(&s->addr, NULL);
		if (ret < 0) {
			nvx_err("bench http: %s: connection %u: %s", s->name,
				i, strerror(-ret));
			goto out;
		}
		cc[i].fd = ret;
		ev.data.u32 = i;
		if (fcntl(ret, F_SETFL, O_NONBLOCK) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, ret, &ev)) {
			ret = -errno;
			nvx_err("bench http: epoll: %s", strerror(-ret));
			goto out;
		}
	}
	/* round 0: one untimed request each; round 1: the measure */
	for (round = 0; round < 2; round++) {
		if (round) {
			t_start = nvx_now_ns();
			t_end = t_start + b->duration * 1000000000ULL;
		}
		for (i = 0; i < conns; i++) {
			ret = nvx_http_next(&cc[i], i);
			if (ret) {
				nvx_err("bench http: %s: connection %u: send: %s",
					s->name, i, strerror(-ret));
				goto out;
			}
		}
		busy = conns;
		while (busy) {
			if (nvx_stop_signal()) {
				ret = -EINTR;
				goto out;
			}
			n = epoll_wait(ep, evs, 64, NVX_HTTP_IO_MS);
			if (n <= 0) {
				if (n < 0 && errno == EINTR)
					continue;
				ret = n ? -errno : -ETIMEDOUT;
				nvx_err("bench http: %s: %u connections wait for an answer: %s",
					s->name, busy, strerror(-ret));
				goto out;
			}
			for (k = 0; k < n; k++) {
				i = evs[k].data.u32;
				c = &cc[i];
				ret = nvx_http_read(s, c, i);
				if (ret < 0)
					goto out;
				if (!ret)
					continue;
				now = nvx_now_ns();
				c->busy = false;
				if (round && now <= t_end) {
					r->requests++;
					ret = nvx_http_sample(b, now - c->t0);
					if (ret)
						goto out;
				}
				if (!round || now >= t_end) {
					busy--;
					continue;
				}
				ret = nvx_http_next(c, i);
				if (ret) {
					nvx_err("bench http: %s: connection %u: send: %s",
						s->name, i, strerror(-ret));
					goto out;
				}
			}
		}
	}
	r->rps = r->requests / (b->duration * 1.0);
	nvx_http_lat(b, &r->lat);
	ret = 0;
out:
	for (i = 0; cc && i < conns; i++)
		if (cc[i].fd >= 0)
			close(cc[i].fd);
	if (ep >= 0)
		close(ep);
	free(cc);
	b->nr_ns = 0;
	return ret;
}

/* Part 1: the cold start against the three servers. */
static int nvx_http_cold_all(struct nvx_http_bench *b)
{
	char name0[32], name[48];
	struct nvx_http_server s = { .out_fd = -1 };
	int ret;

	snprintf(name0, sizeof(name0), "uvm serve --warm 0");
	s.name = name0;
	ret = nvx_http_nvx_start(b, &s, 0, 2);
	if (!ret)
		ret = nvx_http_cold(b, &s, &b->cold_uvm0);
	nvx_http_stop(b, &s);
	if (ret)
		return ret;

	snprintf(name, sizeof(name), "uvm serve --warm %u", b->warm);
	s.name = name;
	ret = nvx_http_nvx_start(b, &s, b->warm, b->warm + 2);
	if (!ret)
		ret = nvx_http_cold(b, &s, &b->cold_uvm);
	nvx_http_stop(b, &s);
	if (ret)
		return ret;

	s.name = "host inetd fork+exec";
	ret = nvx_http_host_start(&s, b->echo_host);
	if (!ret)
		ret = nvx_http_cold(b, &s, &b->cold_host);
	nvx_http_stop(b, &s);
	return ret;
}

/* Part 2: keep-alive requests at each --conns, nvx then the host. */
static int nvx_http_rate_all(struct nvx_http_bench *b)
{
	struct nvx_http_server s = { .out_fd = -1 };
	char name[48];
	unsigned int i;
	int ret;

	b->keep_warm = b->max_conns;
	snprintf(name, sizeof(name), "uvm serve --warm %u", b->keep_warm);
	s.name = name;
	ret = nvx_http_nvx_start(b, &s, b->keep_warm,
				 b->max_conns + b->keep_warm + 2);
	for (i = 0; !ret && i < b->nr_points; i++)
		ret = nvx_http_rate(b, &s, b->conns[i], &b->points[i].uvm);
	nvx_http_stop(b, &s);
	if (ret)
		return ret;

	s.name = "host epoll";
	ret = nvx_http_host_start(&s, NULL);
	for (i = 0; !ret && i < b->nr_points; i++)
		ret = nvx_http_rate(b, &s, b->conns[i], &b->points[i].host);
	nvx_http_stop(b, &s);
	return ret;
}

static void nvx_http_json_lat(struct nvx_json *j, const char *key,
			      const struct nvx_http_lat *l, int warm)
{
	nvx_json_object_begin(j, key);
	if (warm >= 0)
		nvx_json_u64(j, "warm", warm);
	nvx_json_double(j, "p50_ms", l->p50);
	nvx_json_double(j, "p95_ms", l->p95);
	nvx_json_double(j, "p99_ms", l->p99);
	nvx_json_end(j);
}

static void nvx_http_json_rate(struct nvx_json *j, const char *key,
			       const struct nvx_http_rate *r)
{
	nvx_json_object_begin(j, key);
	nvx_json_u64(j, "requests", r->requests);
	nvx_json_double(j, "req_per_s", r->rps);
	nvx_json_double(j, "p50_ms", r->lat.p50);
	nvx_json_double(j, "p99_ms", r->lat.p99);
	nvx_json_end(j);
}

static void nvx_http_print(struct nvx_ctx *ctx, struct nvx_http_bench *b)
{
	double head = nvx_bench_div(b->cold_uvm0.p50, b->cold_host.p50);
	double warm = nvx_bench_div(b->cold_uvm.p50, b->cold_host.p50);
	struct nvx_json *j = &ctx->js;
	struct nvx_http_point *p;
	unsigned int i;

	if (ctx->json) {
		nvx_json_init(j, stdout);
		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "body_bytes", NVX_HTTP_BODY);
		nvx_json_u64(j, "max", b->max);
		nvx_json_object_begin(j, "cold_start");
		nvx_json_u64(j, "iterations", b->iterations);
		nvx_http_json_lat(j, "uvm_warm0", &b->cold_uvm0, 0);
		nvx_http_json_lat(j, "uvm_warm", &b->cold_uvm, b->warm);
		nvx_http_json_lat(j, "host_fork_exec", &b->cold_host, -1);
		nvx_json_double(j, "uvm_warm0_over_host_p50", head);
		nvx_json_double(j, "uvm_warm_over_host_p50", warm);
		nvx_json_end(j);
		if (b->no_warm) {
			nvx_json_null(j, "keep_alive");
		} else {
			nvx_json_object_begin(j, "keep_alive");
			nvx_json_u64(j, "duration_s", b->duration);
			nvx_json_u64(j, "warm", b->keep_warm);
			nvx_json_array_begin(j, "points");
			for (i = 0; i < b->nr_points; i++) {
				p = &b->points[i];
				nvx_json_object_begin(j, NULL);
				nvx_json_u64(j, "conns", p->conns);
				nvx_http_json_rate(j, "uvm", &p->uvm);
				nvx_http_json_rate(j, "host_epoll", &p->host);
				nvx_json_double(j, "uvm_over_host_req_per_s",
						nvx_bench_div(p->uvm.rps,
							      p->host.rps));
				nvx_json_end(j);
			}
			nvx_json_end(j);
			nvx_json_end(j);
		}
		nvx_json_double(j, "headline", head);
		nvx_json_end(j);
		return;
	}
	printf("cold start to the first response (a new connection, POST of %u B,\n"
	       "Connection: close), %u requests each:\n",
	       NVX_HTTP_BODY, b->iterations);
	printf("  uvm serve --warm 0 (VM made after accept) " NVX_HTTP_LAT_FMT,
	       b->cold_uvm0.p50, b->cold_uvm0.p95, b->cold_uvm0.p99);
	printf("  uvm serve --warm %-3u (prepared VMs)       " NVX_HTTP_LAT_FMT,
	       b->warm, b->cold_uvm.p50, b->cold_uvm.p95, b->cold_uvm.p99);
	printf("  host inetd, fork+exec of http-echo-host  " NVX_HTTP_LAT_FMT,
	       b->cold_host.p50, b->cold_host.p95, b->cold_host.p99);
	printf("  p50 / host p50: --warm 0 %.2f (goal <= 1.5), --warm %u %.2f\n",
	       head, b->warm, warm);
	if (!b->no_warm) {
		printf("keep-alive requests, %u s per point, one out per connection:\n",
		       b->duration);
		printf("  %5s  %-22s %12s %10s %10s\n", "conns", "server",
		       "req/s", "p50 ms", "p99 ms");
		for (i = 0; i < b->nr_points; i++) {
			p = &b->points[i];
			printf("  %5u  uvm serve --warm %-5u %12.0f %10.3f %10.3f\n",
			       p->conns, b->keep_warm, p->uvm.rps,
			       p->uvm.lat.p50, p->uvm.lat.p99);
			printf("  %5u  %-22s %12.0f %10.3f %10.3f\n", p->conns,
			       "host epoll", p->host.rps, p->host.lat.p50,
			       p->host.lat.p99);
		}
	}
	printf("headline (cold start p50, uvm serve --warm 0 / host fork+exec): %.2f\n",
	       head);
}

/* --conns LIST: comma-separated connection counts. */
static int nvx_http_parse_conns(struct nvx_http_bench *b, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long long v;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	b->nr_points = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (b->nr_points == NVX_HTTP_MAX_POINTS ||
		    nvx_parse_uint(tok, NVX_HTTP_MAX_CONNS, &v) || !v) {
			ret = -EINVAL;
			break;
		}
		b->conns[b->nr_points++] = v;
	}
	free(copy);
	return ret || !b->nr_points ? -EINVAL : 0;
}

/* What runs the function server: $NVX_BENCH_HTTP_SERVER or nvxtool. */
static int nvx_http_server_cmd(struct nvx_http_bench *b)
{
	const char *env = getenv(NVX_HTTP_SERVER_ENV);
	char *tok, *save = NULL;
	unsigned int n = 0;
	ssize_t len;

	if (env && *env) {
		b->env_copy = strdup(env);
		if (!b->env_copy)
			return -ENOMEM;
		for (tok = strtok_r(b->env_copy, " ", &save); tok && n < 15;
		     tok = strtok_r(NULL, " ", &save))
			b->server[n++] = tok;
		if (!n || tok)
			return -EINVAL;
		b->server[n] = NULL;
		nvx_warn("bench http: the function server is $%s: %s",
			 NVX_HTTP_SERVER_ENV, env);
		return 0;
	}
	/* nvxtool is built and installed beside nvx-bench */
	len = readlink("/proc/self/exe", b->tool, sizeof(b->tool) - 16);
	if (len <= 0)
		return -errno;
	b->tool[len] = 0;
	snprintf(strrchr(b->tool, '/'), 16, "/nvxtool");
	if (access(b->tool, X_OK)) {
		nvx_err("bench http: %s: %s", b->tool, strerror(errno));
		return -errno;
	}
	b->server[0] = b->tool;
	b->server[1] = "uvm";
	b->server[2] = "serve";
	b->server[3] = NULL;
	return 0;
}

/**
 * cmd_bench_http() - nvx-bench http
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_http(struct nvx_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iterations", required_argument, NULL,
		  NVX_HTTP_OPT_ITERATIONS },
		{ "duration", required_argument, NULL, NVX_HTTP_OPT_DURATION },
		{ "warm", required_argument, NULL, NVX_HTTP_OPT_WARM },
		{ "conns", required_argument, NULL, NVX_HTTP_OPT_CONNS },
		{ "max", required_argument, NULL, NVX_HTTP_OPT_MAX },
		{ "no-warm", no_argument, NULL, NVX_HTTP_OPT_NO_WARM },
		{ }
	};
	struct nvx_http_bench *b;
	struct nvx_stop_old old;
	unsigned long long v = 0;
	unsigned int i;
	int c, ret, stop;

	b = calloc(1, sizeof(*b));
	if (!b) {
		nvx_err("bench http: %s", strerror(ENOMEM));
		return NVX_EXIT_FAIL;
	}
	b->ctx = ctx;
	b->iterations = 1000;
	b->duration = 3;
	b->warm = 4;
	b->conns[0] = 1;
	b->conns[1] = 16;
	b->conns[2] = 64;
	b->nr_points = 3;
	ret = NVX_EXIT_OK;
	opterr = 0;
	optind = 0;
	while (!ret && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case NVX_HTTP_OPT_ITERATIONS:
			ret = nvx_opt_num(ctx, "iterations", optarg, 1,
					  10000000, &v);
			b->iterations = v;
			break;
		case NVX_HTTP_OPT_DURATION:
			ret = nvx_opt_num(ctx, "duration", optarg, 1, 600, &v);
			b->duration = v;
			break;
		case NVX_HTTP_OPT_WARM:
			ret = nvx_opt_num(ctx, "warm", optarg, 1, 1024, &v);
			b->warm = v;
			break;
		case NVX_HTTP_OPT_MAX:
			ret = nvx_opt_num(ctx, "max", optarg, 1, 65536, &v);
			b->max = v;
			break;
		case NVX_HTTP_OPT_CONNS:
			if (nvx_http_parse_conns(b, optarg))
				ret = nvx_usage_error(ctx,
						      "bad --conns: %s (1 to %u, up to %u of them)",
						      optarg, NVX_HTTP_MAX_CONNS,
						      NVX_HTTP_MAX_POINTS);
			break;
		case NVX_HTTP_OPT_NO_WARM:
			b->no_warm = true;
			break;
		default:
			ret = nvx_getopt_error(ctx, c, argv);
		}
	}
	if (!ret && optind < argc)
		ret = nvx_usage_error(ctx, "unexpected argument: %s",
				      argv[optind]);
	if (ret)
		goto out;
	for (i = 0; i < b->nr_points; i++) {
		b->points[i].conns = b->conns[i];
		if (b->conns[i] > b->max_conns)
			b->max_conns = b->conns[i];
	}
	/* room for every connection and a prepared VM for each */
	if (!b->max)
		b->max = 2 * (b->max_conns > 64 ? b->max_conns : 64);
	if (!b->no_warm && b->max < b->max_conns) {
		ret = nvx_usage_error(ctx, "--max %u is below --conns %u",
				      b->max, b->max_conns);
		goto out;
	}
	ret = NVX_EXIT_FAIL;
	if (nvx_uvm_find_image("http-echo", b->image, sizeof(b->image)) ||
	    nvx_uvm_find_image("http-echo-host", b->echo_host,
			       sizeof(b->echo_host))) {
		nvx_err("bench http: http-echo or http-echo-host not found (set NVX_GUEST_DIR)");
		goto out;
	}
	c = nvx_http_server_cmd(b);
	if (c) {
		nvx_err("bench http: the function server: %s", strerror(-c));
		goto out;
	}
	if (!b->env_copy) {
		/* the pool grows for the servers' VMs */
		ret = nvx_open_device(ctx);
		if (ret)
			goto out;
	}
	nvx_stop_catch(&old, 0);
	c = nvx_http_cold_all(b);
	if (!c && !b->no_warm)
		c = nvx_http_rate_all(b);
	stop = nvx_stop_end(ctx, &old);
	if (!c)
		nvx_http_print(ctx, b);
	ret = c ? NVX_EXIT_FAIL : stop;
out:
	free(b->ns);
	free(b->env_copy);
	free(b);
	return ret;
}

const char nvx_bench_http_usage[] =
	"[--iterations N] [--duration SEC] [--warm W] [--conns LIST]\n"
	"                    [--max N] [--no-warm]\n"
	"\n"
	"An HTTP/1.1 echo function (POST a body, get it back) served from user\n"
	"VMs by `nvxtool uvm serve --listen 127.0.0.1:0 IMAGE` with the guest\n"
	"image http-echo, a VM per connection, against the same echo served by\n"
	"host processes, in the same run. The client is this process, over\n"
	"loopback TCP; every answer is checked (a 200 with the body sent),\n"
	"and a wrong one is an error, not a sample.\n"
	"\n"
	"  cold start to the first response: N requests, each on a new\n"
	"    connection with a 16-byte body and Connection: close, timed\n"
	"    from the start of connect() to the whole answer (after one\n"
	"    untimed request); p50, p95 and p99 of: uvm serve --warm 0 (the\n"
	"    VM is made after accept), uvm serve --warm W (a prepared VM per\n"
	"    connection), and an inetd-style host server, a child of this\n"
	"    process that forks and execs the static http-echo-host per\n"
	"    connection (its fd 0 and 1)\n"
	"  keep-alive: for each count C of --conns, C connections each with\n"
	"    one request out at a time, back to back for SEC seconds (after\n"
	"    one untimed request each), by one epoll client thread: requests\n"
	"    per second and the p50 and p99 latency; against uvm serve with\n"
	"    --warm the largest C, and a host process serving every\n"
	"    connection with epoll\n"
	"\n"
	"Defaults: 1000 iterations, 3 s per point, --warm 4, --conns 1,16,64,\n"
	"--max (passed to uvm serve) twice the largest of 64 and --conns.\n"
	"--no-warm skips the keep-alive part. For the VMs of each uvm serve\n"
	"the pool grows by 4 MiB per VM it may hold at a time and 16 MiB\n"
	"(CAP_SYS_ADMIN), given back when it stops. nvxtool is the one beside\n"
	"nvx-bench.\n"
	"Under QEMU TCG the times are not hardware times: compare the ratios.\n"
	"JSON: \"headline\" is the cold start p50 of uvm serve --warm 0 over\n"
	"that of the host fork+exec server (goal <= 1.5).\n";
