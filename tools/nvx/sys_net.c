// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the system process's socket calls (NVX_UVM_MSG_SOCKET ..
 * NVX_UVM_MSG_POLL).
 *
 * A guest's socket is a real socket of the system process, in the
 * tenant's network namespace (nvx_sys_net_enter()), always non-blocking:
 * a call that would block waits in poll() in the worker of the guest
 * thread that made it, so it holds up no other guest thread and no
 * other VM. A VM that goes has its sockets shut down
 * (nvx_sys_vm_sweep()), which wakes such a wait; the waits here also
 * look at the VM's @gone now and then (NVX_NET_SLICE_MS), for a socket
 * another guest thread closed meanwhile and for a POLL with nothing to
 * wait on. CONNECT is checked against the tenant's egress rules, first
 * match wins, no match is -ENETUNREACH.
 *
 * Documentation/nvx/uvm-sys.rst, "Sockets", has the calls, their checks
 * and errnos.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nvxtool.h"
#include "sys_int.h"

/* How long a wait sleeps before it looks whether its VM went. */
#define NVX_NET_SLICE_MS	1000

/* Every host socket is non-blocking and closed on exec. */
#define NVX_NET_SOCK_FLAGS	(SOCK_NONBLOCK | SOCK_CLOEXEC)

/* The events a guest may poll for; revents it may see (uvm.h). */
#define NVX_NET_POLL_EVENTS	(POLLIN | POLLPRI | POLLOUT)
#define NVX_NET_POLL_REVENTS	(NVX_NET_POLL_EVENTS | POLLERR | POLLHUP | \
				 POLLNVAL)

static_assert(NVX_UVM_POLL_MAX <= NVX_UVM_PAYLOAD,
	      "POLL: a revents byte per entry fits the payload");

/*
 * The tenant's egress rules, copied by nvx_sys_net_enter() before the
 * first request: one system process serves one tenant. Read-only after.
 */
static struct nvx_sys_cidr nvx_net_egress[NVX_SYS_EGRESS_MAX];
static unsigned int nvx_net_nr_egress;

static int64_t nvx_net_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait at most @ms milliseconds (negative: no limit) until one of the
 * @n host fds of @p has an event, as poll(2). It sleeps at most
 * NVX_NET_SLICE_MS at a time and gives up when @vm went.
 * Return: the number of fds with events, 0 (the time passed or the VM
 * went) or -errno.
 */
static int nvx_net_wait(struct nvx_sys_vm *vm, struct pollfd *p,
			unsigned int n, int64_t ms)
{
	int64_t end = ms >= 0 ? nvx_net_now_ms() + ms : 0, left;
	int ret;

	for (;;) {
		left = NVX_NET_SLICE_MS;
		if (ms >= 0) {
			left = end - nvx_net_now_ms();
			if (left < 0)
				left = 0;
			if (left > NVX_NET_SLICE_MS)
				left = NVX_NET_SLICE_MS;
		}
		ret = poll(p, n, left);
		if (ret < 0 && errno != EINTR)
			return -errno;
		/* first: a gone VM's sockets are shut down, always "ready" */
		if (__atomic_load_n(&vm->gone, __ATOMIC_ACQUIRE))
			return 0;
		if (ret > 0)
			return ret;
		if (ms >= 0 && nvx_net_now_ms() >= end)
			return 0;
	}
}

/**
 * nvx_sys_sock_wait() - wait for @events on host socket @fd
 * @vm: the VM of the guest thread that waits.
 * @fd: the socket.
 * @events: POLLIN or POLLOUT.
 *
 * Return: 0 (try again), 1 (it is shut down or in error: a retry that
 * would block again will never succeed, see nvx_net_hup()),
 * -ECONNRESET (the VM went) or -errno.
 */
int nvx_sys_sock_wait(struct nvx_sys_vm *vm, int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret = nvx_net_wait(vm, &p, 1, -1);

	if (ret < 0)
		return ret;
	if (!ret)
		return -ECONNRESET;
	return p.revents & (POLLHUP | POLLERR | POLLNVAL) ? 1 : 0;
}

static int nvx_net_wait1(struct nvx_sys_vm *vm, int fd, short events)
{
	return nvx_sys_sock_wait(vm, fd, events);
}

/*
 * The guest's own socket of guest fd @c->fc.fd, with a reference (put
 * it with nvx_sys_fput()): -EBADF when the fd is not open in this VM,
 * -ENOTSOCK when it is not a socket the guest made (a file, stdio, a
 * function server's connection).
 */
static int nvx_net_get(struct nvx_sys_call *c, struct nvx_sys_file **fp)
{
	struct nvx_sys_file *f;

	f = nvx_sys_fget(c->vm, c->fc.fd, NVX_SYS_F_ANY);
	if (!f)
		return -EBADF;
	if (!nvx_sys_f_waits(f)) {
		nvx_sys_fput(c->vm, f);
		return -ENOTSOCK;
	}
	*fp = f;
	return 0;
}

static bool nvx_net_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/*
 * @c's PUSH data as a host address: exactly one struct nvx_uvm_sockaddr
 * (-EINVAL otherwise), of NVX_UVM_AF_INET or _INET6 (-EAFNOSUPPORT),
 * with pad and the bytes an IPv4 address leaves 0 (-EINVAL).
 */
static int nvx_net_addr(const struct nvx_sys_call *c,
			struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct nvx_uvm_sockaddr a;

	if (c->push_len != sizeof(a) || c->in_len != sizeof(a))
		return -EINVAL;
	memcpy(&a, c->buf, sizeof(a));
	if (a.family != NVX_UVM_AF_INET && a.family != NVX_UVM_AF_INET6)
		return -EAFNOSUPPORT;
	if (a.pad || (a.family == NVX_UVM_AF_INET &&
		      !nvx_net_zero(a.addr + 4, sizeof(a.addr) - 4)))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (a.family == NVX_UVM_AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(a.port);
		memcpy(&sin->sin_addr, a.addr, 4);
		*len = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a.port);
		memcpy(&sin6->sin6_addr, a.addr, 16);
		*len = sizeof(*sin6);
	}
	return 0;
}

/* A host address as the guest's; all zeros for another family. */
static void nvx_net_guest_addr(const struct sockaddr_storage *ss,
			       struct nvx_uvm_sockaddr *a)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		a->family = NVX_UVM_AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		a->family = NVX_UVM_AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

/* The first @prefix bits of @a and @net are the same. */
static bool nvx_net_in(const uint8_t *net, const uint8_t *a,
		       unsigned int prefix)
{
	unsigned int full = prefix / 8, rest = prefix % 8;

	if (memcmp(net, a, full))
		return false;
	return !rest || !((net[full] ^ a[full]) & (uint8_t)(0xff00 >> rest));
}

/*
 * May the tenant connect to @ss? An IPv4-mapped IPv6 address is judged
 * as the IPv4 address it maps. The unspecified address (0.0.0.0, ::,
 * ::ffff:0.0.0.0) is refused: Linux connects it to a local address (the
 * socket's bound one, else the loopback), which no rule names.
 */
static bool nvx_net_egress_ok(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct nvx_sys_cidr *r;
	uint8_t addr[16];
	unsigned int i, len;
	int family;

	if (ss->ss_family == AF_INET) {
		family = AF_INET;
		memcpy(addr, &sin->sin_addr, 4);
	} else if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		family = AF_INET;
		memcpy(addr, sin6->sin6_addr.s6_addr + 12, 4);
	} else {
		family = AF_INET6;
		memcpy(addr, &sin6->sin6_addr, 16);
	}
	len = family == AF_INET ? 4 : 16;
	if (nvx_net_zero(addr, len))
		return false;
	for (i = 0; i < nvx_net_nr_egress; i++) {
		r = &nvx_net_egress[i];
		if (r->family == family && nvx_net_in(r->addr, addr, r->prefix))
			return r->allow;
	}
	return false;		/* default deny */
}

int nvx_sys_socket(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int domain, type, gfd, fd;

	if (c->fc.arg == NVX_UVM_AF_INET)
		domain = AF_INET;
	else if (c->fc.arg == NVX_UVM_AF_INET6)
		domain = AF_INET6;
	else
		return -EAFNOSUPPORT;
	if (c->fc.flags == NVX_UVM_SOCK_STREAM)
		type = SOCK_STREAM;
	else if (c->fc.flags == NVX_UVM_SOCK_DGRAM)
		type = SOCK_DGRAM;
	else
		return -EINVAL;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	gfd = nvx_sys_fd_reserve(c->vm);
	if (gfd < 0) {
		free(f);
		return gfd;
	}
	fd = socket(domain, type | NVX_NET_SOCK_FLAGS, 0);
	if (fd < 0) {
		fd = -errno;
		nvx_sys_fd_install(c->vm, gfd, NULL);
		free(f);
		return fd;
	}
	f->fd = fd;
	f->kind = NVX_SYS_F_SOCK;
	f->refs = 1;
	nvx_sys_fd_install(c->vm, gfd, f);
	c->fc.ret = gfd;
	return 0;
}

int nvx_sys_bind(struct nvx_sys_call *c)
{
	struct sockaddr_storage ss;
	struct nvx_sys_file *f;
	socklen_t len;
	int ret;

	if (c->fc.flags)
		return -EINVAL;
	ret = nvx_net_addr(c, &ss, &len);
	if (!ret)
		ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	ret = bind(f->fd, (struct sockaddr *)&ss, len) ? -errno : 0;
	nvx_sys_fput(c->vm, f);
	return ret;
}

int nvx_sys_listen(struct nvx_sys_call *c)
{
	int backlog = c->fc.arg > INT_MAX ? INT_MAX : (int)c->fc.arg;
	struct nvx_sys_file *f;
	int ret;

	if (c->fc.flags)
		return -EINVAL;
	ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	/* the kernel caps the backlog at net.core.somaxconn */
	ret = listen(f->fd, backlog) ? -errno : 0;
	nvx_sys_fput(c->vm, f);
	return ret;
}

int nvx_sys_accept(struct nvx_sys_call *c)
{
	bool nonblock = c->fc.flags & NVX_UVM_SOCK_NONBLOCK;
	struct nvx_sys_file *f, *nf;
	struct nvx_uvm_sockaddr a;
	struct sockaddr_storage ss;
	int ret, gfd, fd, hup = 0;
	socklen_t len;

	if (c->fc.flags & ~NVX_UVM_SOCK_NONBLOCK)
		return -EINVAL;
	ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	nf = malloc(sizeof(*nf));
	if (!nf) {
		nvx_sys_fput(c->vm, f);
		return -ENOMEM;
	}
	/* a guest fd first: a connection taken is never dropped for want of one */
	gfd = nvx_sys_fd_reserve(c->vm);
	if (gfd < 0) {
		ret = gfd;
		goto out;
	}
	for (;;) {
		len = sizeof(ss);
		fd = accept4(f->fd, (struct sockaddr *)&ss, &len,
			     NVX_NET_SOCK_FLAGS);
		if (fd >= 0)
			break;
		ret = -errno;
		if (ret == -EINTR)
			continue;
		if (ret != -EAGAIN || nonblock || hup)
			break;
		ret = nvx_net_wait1(c->vm, f->fd, POLLIN);
		if (ret < 0)
			break;
		hup = ret;
	}
	if (fd < 0) {
		nvx_sys_fd_install(c->vm, gfd, NULL);
		goto out;
	}
	nf->fd = fd;
	nf->kind = NVX_SYS_F_SOCK;
	nf->refs = 1;
	nvx_sys_fd_install(c->vm, gfd, nf);
	nf = NULL;
	c->fc.ret = gfd;
	if (c->room >= sizeof(a)) {
		nvx_net_guest_addr(&ss, &a);
		memcpy(c->buf, &a, sizeof(a));
		c->out = c->buf;
		c->out_len = sizeof(a);
	}
	ret = 0;
out:
	free(nf);
	nvx_sys_fput(c->vm, f);
	return ret;
}

int nvx_sys_connect(struct nvx_sys_call *c)
{
	struct sockaddr_storage ss;
	struct nvx_sys_file *f;
	socklen_t len;
	int ret, err;

	if (c->fc.flags)
		return -EINVAL;
	ret = nvx_net_addr(c, &ss, &len);
	if (!ret)
		ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	if (!nvx_net_egress_ok(&ss)) {
		ret = -ENETUNREACH;
		goto out;
	}
	if (!connect(f->fd, (struct sockaddr *)&ss, len))
		goto out;
	ret = -errno;
	if (ret != -EINPROGRESS && ret != -EINTR)
		goto out;
	/* the connection goes on in the background: wait for its end */
	ret = nvx_net_wait1(c->vm, f->fd, POLLOUT);
	if (ret < 0)
		goto out;
	len = sizeof(err);
	if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &len))
		ret = -errno;
	else
		ret = -err;
out:
	nvx_sys_fput(c->vm, f);
	return ret;
}

/*
 * SEND: all of the PUSH data, waiting while the socket is full; with
 * NVX_UVM_SOCK_NONBLOCK what fits now (-EAGAIN when nothing does).
 * ret: the bytes sent; an error after some bytes went is not reported
 * (the next call gets it), as send(2).
 */
int nvx_sys_send(struct nvx_sys_call *c)
{
	bool nonblock = c->fc.flags & NVX_UVM_SOCK_NONBLOCK;
	struct nvx_sys_file *f;
	uint32_t done = 0;
	bool hup = false;
	ssize_t n;
	int ret;

	if (c->fc.flags & ~NVX_UVM_SOCK_NONBLOCK)
		return -EINVAL;
	ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	/* at least one send: a datagram may be empty */
	do {
		n = sendto(f->fd, c->buf + done, c->in_len - done,
			   MSG_NOSIGNAL, NULL, 0);
		if (n >= 0) {
			done += n;
			ret = 0;
			continue;
		}
		ret = -errno;
		if (ret == -EINTR)
			continue;
		if (ret == -EAGAIN && !nonblock) {
			/* shut down and still full: it will never drain */
			if (hup) {
				ret = -EPIPE;
				break;
			}
			ret = nvx_net_wait1(c->vm, f->fd, POLLOUT);
			hup = ret > 0;
			if (ret > 0)
				ret = 0;
		}
		if (ret)
			break;
	} while (done < c->in_len);
	nvx_sys_fput(c->vm, f);
	if (done || !ret) {
		c->fc.ret = done;
		return 0;
	}
	return ret;
}

/*
 * SOCKRECV: one recv(2) of at most the PULL room, waiting for data
 * unless NVX_UVM_SOCK_NONBLOCK; 0 bytes at the end of a stream.
 * ret, as bulk_len: the bytes received.
 */
int nvx_sys_sockrecv(struct nvx_sys_call *c)
{
	bool nonblock = c->fc.flags & NVX_UVM_SOCK_NONBLOCK;
	int flags = c->fc.flags & NVX_UVM_SOCK_PEEK ? MSG_PEEK : 0;
	struct nvx_sys_file *f;
	int ret, hup = 0;
	ssize_t n;

	if (c->fc.flags & ~(NVX_UVM_SOCK_NONBLOCK | NVX_UVM_SOCK_PEEK))
		return -EINVAL;
	ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	for (;;) {
		n = recvfrom(f->fd, c->buf, c->room, flags, NULL, NULL);
		if (n >= 0)
			break;
		ret = -errno;
		if (ret == -EINTR)
			continue;
		if (ret != -EAGAIN || nonblock)
			break;
		if (hup) {
			/* shut down (a UDP socket stays "readable"): the end */
			n = 0;
			break;
		}
		ret = nvx_net_wait1(c->vm, f->fd, POLLIN);
		if (ret < 0)
			break;
		hup = ret;
	}
	nvx_sys_fput(c->vm, f);
	if (n < 0)
		return ret;
	c->out_len = n;
	c->fc.ret = n;
	return 0;
}

int nvx_sys_shutdown(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f;
	int ret;

	/* SHUT_RD 0, SHUT_WR 1, SHUT_RDWR 2, as Linux's */
	if (c->fc.flags > SHUT_RDWR)
		return -EINVAL;
	ret = nvx_net_get(c, &f);
	if (ret)
		return ret;
	ret = shutdown(f->fd, c->fc.flags) ? -errno : 0;
	nvx_sys_fput(c->vm, f);
	return ret;
}

/*
 * POLL: up to NVX_UVM_POLL_MAX struct nvx_uvm_pollfd as PUSH data,
 * fcall.arg the timeout in ms (negative: none), fcall.flags 0. An entry
 * whose fd is not a socket of this VM (its own, or a function server's
 * connection) gets POLLNVAL, and then the call does not wait. Status:
 * the entries with revents; payload[i]: entry i's revents.
 */
int nvx_sys_poll(struct nvx_sys_call *c)
{
	struct nvx_sys_file *f[NVX_UVM_POLL_MAX] = { };
	struct nvx_uvm_pollfd in[NVX_UVM_POLL_MAX];
	struct pollfd p[NVX_UVM_POLL_MAX];
	int64_t ms = (int64_t)c->fc.arg;
	unsigned int n, i, nval = 0;
	int ret;

	/* negative, or more than 2^40 ms (35 years): no limit */
	if (ms > 1LL << 40)
		ms = -1;

	if (c->fc.flags || c->push_len % sizeof(in[0]) ||
	    c->push_len > sizeof(in) || c->in_len != c->push_len)
		return -EINVAL;
	n = c->push_len / sizeof(in[0]);
	memcpy(in, c->buf, c->push_len);
	for (i = 0; i < n; i++)
		if (in[i].pad || (in[i].events & ~NVX_NET_POLL_EVENTS))
			return -EINVAL;
	for (i = 0; i < n; i++) {
		p[i] = (struct pollfd){ .fd = -1 };
		if (in[i].fd < 0)
			continue;
		f[i] = nvx_sys_fget(c->vm, in[i].fd, NVX_SYS_F_SOCK);
		if (!f[i]) {
			nval++;
			continue;
		}
		p[i].fd = f[i]->fd;
		p[i].events = in[i].events;
	}
	ret = nvx_net_wait(c->vm, p, n, nval ? 0 : ms);
	memset(c->payload, 0, sizeof(c->payload));
	for (i = 0; i < n; i++) {
		if (ret >= 0 && in[i].fd >= 0)
			c->payload[i] = f[i] ? p[i].revents &
					       NVX_NET_POLL_REVENTS : POLLNVAL;
		nvx_sys_fput(c->vm, f[i]);
	}
	if (ret < 0)
		return ret;
	for (ret = 0, i = 0; i < n; i++)
		ret += !!c->payload[i];
	return ret;
}

/* --------------------------------------------------- confinement --- */

int nvx_sys_net_enter(const struct nvx_sys_tenant *t)
{
	int fd;

	memcpy(nvx_net_egress, t->egress, sizeof(nvx_net_egress));
	nvx_net_nr_egress = t->nr_egress < NVX_SYS_EGRESS_MAX ?
			    t->nr_egress : NVX_SYS_EGRESS_MAX;
	if (!t->netns[0])
		return NVX_EXIT_OK;
	fd = open(t->netns, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		nvx_err("sys: netns %s: %s", t->netns, strerror(errno));
		return NVX_EXIT_FAIL;
	}
	if (setns(fd, CLONE_NEWNET)) {
		nvx_err("sys: enter netns %s: %s%s", t->netns, strerror(errno),
			errno == EPERM ? " (needs CAP_SYS_ADMIN: run as root)" :
			errno == EINVAL ? " (not a network namespace)" : "");
		close(fd);
		return NVX_EXIT_FAIL;
	}
	close(fd);
	return NVX_EXIT_OK;
}

/* int argument @i of a rule equals @v (the upper 32 bits are ignored) */
#define NVX_NET_ARG(i, v)	SCMP_CMP((i), SCMP_CMP_MASKED_EQ, 0xffffffff, (v))

int nvx_sys_net_seccomp(void *ctx, int *n)
{
	/* sendto, recvfrom: glibc's send() and recv(); poll: the waits */
	static const int calls[] = {
		SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(connect),
		SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(poll),
		SCMP_SYS(ppoll),
	};
	static const int domains[] = { AF_INET, AF_INET6 };
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM };
	scmp_filter_ctx f = ctx;
	unsigned int i, j;
	int ret = 0;

	for (i = 0; !ret && i < NVX_ARRAY_SIZE(calls); i++, (*n)++)
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, calls[i], 0);
	/* socket(): IPv4 or IPv6, TCP or UDP, non-blocking, close-on-exec */
	for (i = 0; !ret && i < NVX_ARRAY_SIZE(domains); i++)
		for (j = 0; !ret && j < NVX_ARRAY_SIZE(types); j++, (*n)++)
			ret = seccomp_rule_add(f, SCMP_ACT_ALLOW,
					       SCMP_SYS(socket), 3,
					       NVX_NET_ARG(0, domains[i]),
					       NVX_NET_ARG(1, types[j] |
							   NVX_NET_SOCK_FLAGS),
					       NVX_NET_ARG(2, 0));
	if (!ret) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(accept4), 1,
				       NVX_NET_ARG(3, NVX_NET_SOCK_FLAGS));
		(*n)++;
	}
	/* CONNECT's result */
	if (!ret) {
		ret = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(getsockopt),
				       2, NVX_NET_ARG(1, SOL_SOCKET),
				       NVX_NET_ARG(2, SO_ERROR));
		(*n)++;
	}
	return ret;
}
