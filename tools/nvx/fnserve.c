// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the function server, `nvxtool uvm serve --listen ADDR:PORT
 * IMAGE`. Documentation/nvx/uvm-sys.rst, "The function server".
 *
 * One process per tenant, two parts:
 *
 *   this process: listens, accepts, and is the VMM of one user VM per
 *	connection (a vCPU thread each); VMs are made after accept (cold)
 *	or ahead of demand (--warm N: each handed out once, then
 *	replaced), booted from IMAGE or cloned from a template file
 *	(--template FILE). It holds /dev/nvx, /dev/kvm and the listening socket,
 *	never a guest's request.
 *   the system process (sys.c, forked first): holds the tenant's
 *	endpoint, confined as for `uvm run`; the connection of each VM
 *	is passed to it over a socket pair (struct nvx_sys_ctl,
 *	SCM_RIGHTS) and becomes the VM's fd 0 and 1 when the guest says
 *	READY. Bytes move as the guest's READ and WRITE calls, bulk
 *	messages of up to NVX_UVM_MAX_BULK bytes: nothing is buffered
 *	here, so a slow client holds up only its VM's WRITE, and a guest
 *	that does not read leaves the client's bytes in its socket.
 *
 * A VM that exits, is stopped or crashes is destroyed here; the system
 * process sees it go and shuts its connection down: the client reads
 * EOF. Every control packet is sent under fn->mu, so a RELEASE of a VM
 * never overtakes its CONN.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nvx/uvm.h>

#include "nvxtool.h"
#include "nvx_uvm.h"
#include "sys.h"

/**
 * struct nvx_fn_vm - one user VM of the server
 * @next: in fn->vms (every live VM).
 * @prev: the same.
 * @warm_next: in fn->warm (made, not handed out), or unused.
 * @vm: the VM (libnvx).
 * @id: its id in the endpoint, kept past nvx_uvm_destroy().
 * @th: its vCPU thread.
 * @fn: the server.
 * @serving: handed a connection (counted in fn->busy).
 * @warm: in fn->warm.
 * @ended: its vCPU loop returned (set under fn->mu): stop it no more.
 * @since: CLOCK_MONOTONIC ms it was handed its connection.
 */
struct nvx_fn_vm {
	struct nvx_fn_vm *next, *prev, *warm_next;
	struct nvx_uvm_vm vm;
	uint32_t id;
	pthread_t th;
	struct nvx_fn *fn;
	bool serving;
	bool warm;
	bool ended;
	uint64_t since;
};

/**
 * struct nvx_fn - the server
 * @o: how VMs are made (image, arguments, RAM, the endpoint).
 * @opt: the command line's.
 * @nvx_fd: /dev/nvx.
 * @lfd: the listening socket.
 * @ctl_fd: this end of the control socket pair.
 * @sys: the system process.
 * @sig: a self-pipe written by the SIGTERM/SIGINT handler.
 * @mu: guards everything below, and every send on @ctl_fd.
 * @cv: a VM went, a warm VM was taken or made, or the server stops.
 * @vms: every live VM.
 * @warm: warm VMs, oldest first; @nr_warm of them, @making being made.
 * @nr_warm: see @warm.
 * @making: see @warm.
 * @live: VMs in @vms.
 * @busy: VMs serving a connection.
 * @stopping: the server stops: make no VM.
 * @conns: connections accepted.
 * @cold: of those, served by a VM made after accept.
 * @failed: connections closed without a VM (it could not be made).
 * @vm_errors: VMs that ended otherwise than by the guest's exit.
 * @make_err: how the last VM to be made failed, or 0.
 */
struct nvx_fn {
	struct nvx_uvm_opts o;
	const struct nvx_fn_opts *opt;
	int nvx_fd, lfd, ctl_fd;
	pid_t sys;
	int sig[2];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct nvx_fn_vm *vms, *warm, *warm_tail;
	unsigned int nr_warm, making, live, busy;
	bool stopping;
	uint64_t conns, cold, failed, vm_errors;
	int make_err;
};

static int nvx_fn_sig_fd = -1;

static void nvx_fn_on_term(int sig)
{
	char c = (char)sig;

	if (write(nvx_fn_sig_fd, &c, 1) < 0)
		return;		/* the pipe is full: a stop is pending */
}

/* SIGUSR1 takes a vCPU thread out of KVM_RUN (EINTR); it does nothing. */
static void nvx_fn_on_kick(int sig)
{
	(void)sig;
}

static uint64_t nvx_fn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* One control packet (@fd: a connection to pass, or -1); under fn->mu. */
static int nvx_fn_ctl_send(struct nvx_fn *fn, uint32_t op, uint32_t vm_id,
			   int fd)
{
	struct nvx_sys_ctl m = { .op = op, .vm_id = vm_id };
	char cbuf[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8))) = { };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (fd >= 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do {
		n = sendmsg(fn->ctl_fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == sizeof(m) ? 0 : -(n < 0 ? errno : EIO);
}

/* Stop @v: its vCPU thread leaves KVM_RUN and ends it. Under fn->mu. */
static void nvx_fn_vm_stop(struct nvx_fn_vm *v)
{
	if (v->ended)		/* its run page may be gone already */
		return;
	__atomic_store_n(&v->vm.stop, 1, __ATOMIC_RELAXED);
	/* KVM_RUN entered after this returns -EINTR at once */
	__atomic_store_n(&v->vm.run->immediate_exit, 1, __ATOMIC_RELEASE);
	pthread_kill(v->th, SIGUSR1);
}

/* The vCPU thread: run the VM, destroy it, say so. */
static void *nvx_fn_vm_main(void *arg)
{
	struct nvx_fn_vm *v = arg, **pp;
	struct nvx_fn *fn = v->fn;
	int ret;

	ret = nvx_uvm_run(&v->vm);
	if (ret && ret != -EINTR) {
		if (fn->opt->verbose)
			nvx_sys_info("serve: vm %u stopped: %s (%#llx)", v->id,
				     nvx_uvm_reason_name(v->vm.reason),
				     (unsigned long long)v->vm.detail);
	}
	pthread_mutex_lock(&fn->mu);
	v->ended = true;
	if (v->warm) {
		/* it ended before it was handed a connection: never hand it */
		for (pp = &fn->warm; *pp != v; pp = &(*pp)->warm_next)
			;
		*pp = v->warm_next;
		if (fn->warm_tail == v) {
			fn->warm_tail = NULL;
			for (pp = &fn->warm; *pp; pp = &(*pp)->warm_next)
				fn->warm_tail = *pp;
		}
		fn->nr_warm--;
		v->warm = false;
		pthread_cond_broadcast(&fn->cv);	/* make another */
	}
	pthread_mutex_unlock(&fn->mu);
	/* the system process sees it go and closes its connection */
	nvx_uvm_destroy(&v->vm);

	pthread_mutex_lock(&fn->mu);
	if (ret && ret != -EINTR)
		fn->vm_errors++;
	/* after the destroy: a CONN for it came before, under fn->mu */
	nvx_fn_ctl_send(fn, NVX_SYS_CTL_RELEASE, v->id, -1);
	if (v->serving)
		fn->busy--;
	if (v->prev)
		v->prev->next = v->next;
	else
		fn->vms = v->next;
	if (v->next)
		v->next->prev = v->prev;
	fn->live--;
	pthread_cond_broadcast(&fn->cv);
	pthread_mutex_unlock(&fn->mu);
	free(v);
	return NULL;
}

/*
 * Make a VM, attached to the endpoint, not running yet. NULL when it
 * could not be made (said on stderr once per run of failures alike).
 */
static struct nvx_fn_vm *nvx_fn_vm_make(struct nvx_fn *fn)
{
	struct nvx_fn_vm *v = calloc(1, sizeof(*v));
	const char *where;
	int ret;

	if (!v)
		return NULL;
	v->fn = fn;
	if (fn->opt->tmpl)
		ret = nvx_uvm_clone(&v->vm, fn->nvx_fd, fn->opt->tmpl, &fn->o,
				    &where);
	else
		ret = nvx_uvm_create(&v->vm, fn->nvx_fd, &fn->o, &where);
	/* said once until a VM is made again (the warm thread retries) */
	if (__atomic_exchange_n(&fn->make_err, ret, __ATOMIC_RELAXED) != ret &&
	    ret)
		nvx_warn("serve: make a VM: %s: %s", where, strerror(-ret));
	if (ret) {
		nvx_uvm_destroy(&v->vm);
		free(v);
		return NULL;
	}
	v->id = v->vm.vm_id;
	return v;
}

/* Start @v's vCPU thread and count it live; under fn->mu. */
static int nvx_fn_vm_start(struct nvx_fn *fn, struct nvx_fn_vm *v)
{
	pthread_attr_t a;
	int ret;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	/* the loop needs little: 64 such VMs cost 8 MiB, not 512 */
	pthread_attr_setstacksize(&a, 128 << 10);
	ret = pthread_create(&v->th, &a, nvx_fn_vm_main, v);
	pthread_attr_destroy(&a);
	if (ret)
		return -ret;
	v->prev = NULL;
	v->next = fn->vms;
	if (fn->vms)
		fn->vms->prev = v;
	fn->vms = v;
	fn->live++;
	return 0;
}

/*
 * A VM whose thread never ran: destroy it, release what the system
 * process may hold for it. Under fn->mu.
 */
static void nvx_fn_vm_drop(struct nvx_fn *fn, struct nvx_fn_vm *v)
{
	nvx_uvm_destroy(&v->vm);
	nvx_fn_ctl_send(fn, NVX_SYS_CTL_RELEASE, v->id, -1);
	if (v->serving)
		fn->busy--;
	/* made when the server began to stop: not an error */
	if (!fn->stopping)
		fn->vm_errors++;
	free(v);
}

/* Keep fn->opt->warm VMs made ahead of demand. */
static void *nvx_fn_warm_main(void *arg)
{
	struct nvx_fn *fn = arg;
	struct nvx_fn_vm *v;
	struct timespec ts;

	pthread_mutex_lock(&fn->mu);
	while (!fn->stopping) {
		if (fn->nr_warm + fn->making >= fn->opt->warm) {
			pthread_cond_wait(&fn->cv, &fn->mu);
			continue;
		}
		fn->making++;
		pthread_mutex_unlock(&fn->mu);
		v = nvx_fn_vm_make(fn);
		pthread_mutex_lock(&fn->mu);
		fn->making--;
		if (v && (fn->stopping || nvx_fn_vm_start(fn, v))) {
			nvx_fn_vm_drop(fn, v);
			v = NULL;
		}
		if (!v) {
			/* the pool or the endpoint is full: try again later */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&fn->cv, &fn->mu, &ts);
			continue;
		}
		v->warm = true;
		v->warm_next = NULL;
		if (fn->warm_tail)
			fn->warm_tail->warm_next = v;
		else
			fn->warm = v;
		fn->warm_tail = v;
		fn->nr_warm++;
		pthread_cond_broadcast(&fn->cv);
	}
	pthread_mutex_unlock(&fn->mu);
	return NULL;
}

/* Give connection @cfd a VM: a warm one, else one made now. */
static void nvx_fn_serve_conn(struct nvx_fn *fn, int cfd)
{
	struct nvx_fn_vm *v = NULL;
	bool cold = false;
	int ret;

	pthread_mutex_lock(&fn->mu);
	fn->conns++;
	if (fn->warm) {
		/*
		 * Taken, marked and passed in one hold of fn->mu: its thread
		 * (which takes a VM that ended off fn->warm under fn->mu
		 * first) cannot free it meanwhile, and its RELEASE comes
		 * after this CONN.
		 */
		v = fn->warm;
		fn->warm = v->warm_next;
		if (!fn->warm)
			fn->warm_tail = NULL;
		fn->nr_warm--;
		v->warm = false;
		pthread_cond_broadcast(&fn->cv);	/* make another */
	}
	if (!v) {
		pthread_mutex_unlock(&fn->mu);
		v = nvx_fn_vm_make(fn);
		cold = true;
		pthread_mutex_lock(&fn->mu);
	}
	if (v) {
		v->serving = true;
		v->since = nvx_fn_now_ms();
		fn->busy++;
		fn->cold += cold;
		/* before the thread of a cold VM starts: see the top */
		ret = nvx_fn_ctl_send(fn, NVX_SYS_CTL_CONN, v->id, cfd);
		if (ret)
			nvx_warn("serve: pass a connection: %s", strerror(-ret));
		if (!cold && ret)
			nvx_fn_vm_stop(v);	/* its thread cleans up */
		else if (cold && (ret || nvx_fn_vm_start(fn, v)))
			nvx_fn_vm_drop(fn, v);
	} else {
		fn->failed++;
	}
	pthread_mutex_unlock(&fn->mu);
	/* the system process holds it now, or nobody: the client sees EOF */
	close(cfd);
}

/* Stop the VMs that have served their connection for --lifetime. */
static void nvx_fn_reap(struct nvx_fn *fn)
{
	uint64_t now = nvx_fn_now_ms(), max = fn->opt->lifetime * 1000ULL;
	struct nvx_fn_vm *v;

	if (!max)
		return;
	pthread_mutex_lock(&fn->mu);
	for (v = fn->vms; v; v = v->next) {
		if (v->serving && !v->vm.stop && now - v->since > max) {
			if (fn->opt->verbose)
				nvx_sys_info("serve: vm %u: over --lifetime, stopped",
					     v->id);
			nvx_fn_vm_stop(v);
		}
	}
	pthread_mutex_unlock(&fn->mu);
}

/**
 * nvx_fn_parse_addr() - parse --listen's address
 * @s: "ADDR:PORT" (IPv4) or "[ADDR6]:PORT".
 * @ss: the address.
 * @len: its length.
 *
 * Return: 0 or -EINVAL.
 */
int nvx_fn_parse_addr(const char *s, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN + 2];
	unsigned long long port;
	const char *colon;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	colon = strrchr(s, ':');
	if (!colon || nvx_parse_uint(colon + 1, 65535, &port))
		return -EINVAL;
	n = colon - s;
	if (n >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = 0;
	if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	a4->sin_family = AF_INET;
	a4->sin_port = htons(port);
	*len = sizeof(*a4);
	return 0;
}

/* Listen on fn->opt->listen; print "listening on ADDR:PORT". */
static int nvx_fn_listen(struct nvx_fn *fn)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN];
	socklen_t len;
	int one = 1, port;

	if (nvx_fn_parse_addr(fn->opt->listen, &ss, &len))
		return -EINVAL;
	fn->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fn->lfd < 0)
		return -errno;
	setsockopt(fn->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fn->lfd, (struct sockaddr *)&ss, len) ||
	    listen(fn->lfd, 1024) ||
	    getsockname(fn->lfd, (struct sockaddr *)&ss, &len))
		return -errno;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof(host));
		port = ntohs(a6->sin6_port);
		printf("listening on [%s]:%d\n", host, port);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a4->sin_addr, host, sizeof(host));
		port = ntohs(a4->sin_port);
		printf("listening on %s:%d\n", host, port);
	}
	fflush(stdout);
	return 0;
}

/*
 * The accept loop: wait for a free slot (--max), accept, hand over.
 * Returns at SIGTERM or SIGINT.
 */
static void nvx_fn_loop(struct nvx_fn *fn)
{
	struct pollfd p[3] = {
		{ .fd = fn->lfd, .events = POLLIN },
		{ .fd = fn->sig[0], .events = POLLIN },
		/* POLLHUP: the system process ended, nothing can be served */
		{ .fd = fn->ctl_fd, .events = 0 },
	};
	struct timeval tv = { .tv_sec = fn->opt->timeout };
	bool full;
	int cfd;

	for (;;) {
		pthread_mutex_lock(&fn->mu);
		full = fn->busy >= fn->opt->max;
		pthread_mutex_unlock(&fn->mu);
		/* full: leave new connections in the backlog, tick */
		p[0].fd = full ? -1 : fn->lfd;
		if (poll(p, 3, full ? 20 : 1000) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[2].revents) {
			nvx_err("serve: the system process ended: stopping");
			break;
		}
		nvx_fn_reap(fn);
		if (full || !(p[0].revents & POLLIN))
			continue;
		cfd = accept4(fn->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			/* out of fds: let VMs end rather than spin */
			if (errno == EMFILE || errno == ENFILE)
				poll(NULL, 0, 20);
			continue;	/* ECONNABORTED: the next one */
		}
		if (fn->opt->timeout) {
			/* a client silent or not reading for so long: -EAGAIN */
			setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		}
		nvx_fn_serve_conn(fn, cfd);
	}
}

/* Stop making VMs, stop the live ones and wait until they are gone. */
static void nvx_fn_stop(struct nvx_fn *fn, pthread_t warm_th, bool warm)
{
	struct nvx_fn_vm *v;

	pthread_mutex_lock(&fn->mu);
	fn->stopping = true;
	pthread_cond_broadcast(&fn->cv);
	pthread_mutex_unlock(&fn->mu);
	if (warm)
		pthread_join(warm_th, NULL);
	pthread_mutex_lock(&fn->mu);
	while (fn->live) {
		for (v = fn->vms; v; v = v->next)
			if (!v->vm.stop)
				nvx_fn_vm_stop(v);
		pthread_cond_wait(&fn->cv, &fn->mu);
	}
	pthread_mutex_unlock(&fn->mu);
}

/**
 * nvx_fn_serve() - the function server (see the top of this file)
 * @nvx_fd: /dev/nvx, open.
 * @t: the tenant.
 * @opt: the command line.
 *
 * Return: NVX_EXIT_OK after SIGTERM or SIGINT, or NVX_EXIT_FAIL.
 */
int nvx_fn_serve(int nvx_fd, const struct nvx_sys_tenant *t,
		 const struct nvx_fn_opts *opt)
{
	static struct nvx_fn fn;	/* VM threads may run until the end */
	struct nvx_uvm_endpoint ep = { .max_vms = opt->max + opt->warm };
	struct nvx_sys_opts so = { .verbose = opt->verbose, .policy_set = true,
				   .uintr = opt->uintr, .nvx_fd = nvx_fd };
	struct sigaction sa = { .sa_handler = nvx_fn_on_kick };
	pthread_t warm_th;
	int ctl[2], ret, st;
	bool warm = false;

	/* a VM holds a few fds here (KVM, vCPU, grant, channel...) */
	nvx_nofile_max(7UL * (opt->max + opt->warm) + 64);
	fn.opt = opt;
	fn.nvx_fd = nvx_fd;
	fn.lfd = -1;
	fn.o.mem = opt->mem;
	fn.o.image = opt->image;
	fn.o.argc = opt->argc;
	fn.o.argv = opt->argv;
	pthread_mutex_init(&fn.mu, NULL);
	pthread_cond_init(&fn.cv, NULL);

	ret = nvx_fn_listen(&fn);
	if (ret) {
		nvx_err("serve: listen on %s: %s", opt->listen, strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	if (ioctl(nvx_fd, NVX_IOC_UVM_ENDPOINT, &ep) < 0) {
		nvx_err("serve: NVX_IOC_UVM_ENDPOINT: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	fn.o.ep_fd = ep.fd;
	/* the policy is in place before the first VM can send anything */
	ret = nvx_sys_apply_policy(ep.fd, t, opt->verbose);
	if (ret)
		return ret;
	if (opt->poll) {
		struct nvx_uvm_poller p = { .flags = NVX_UVM_POLLER_SQ };

		ret = nvx_uvm_set_poller(ep.fd, &p);
		if (ret) {
			nvx_err("serve: --poll: NVX_UVM_EP_IOC_POLLER: %s%s",
				strerror(-ret),
				ret == -EPERM ? " (needs CAP_SYS_NICE)" : "");
			return NVX_EXIT_FAIL;
		}
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) ||
	    pipe2(fn.sig, O_CLOEXEC | O_NONBLOCK)) {
		nvx_err("serve: socketpair: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	fflush(NULL);
	fn.sys = fork();
	if (fn.sys < 0) {
		nvx_err("serve: fork: %s", strerror(errno));
		return NVX_EXIT_FAIL;
	}
	if (!fn.sys) {
		/* the system process: the endpoint and the connections */
		if (!opt->uintr)
			close(nvx_fd);
		close(fn.lfd);
		close(ctl[0]);
		/* it ends when the server closes the control socket */
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		so.ctl_fd = ctl[1];
		_exit(nvx_sys_serve(ep.fd, t, &so));
	}
	close(ctl[1]);
	fn.ctl_fd = ctl[0];

	nvx_fn_sig_fd = fn.sig[1];
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = nvx_fn_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (opt->warm) {
		ret = pthread_create(&warm_th, NULL, nvx_fn_warm_main, &fn);
		warm = !ret;
		if (ret)
			nvx_warn("serve: no warm VMs: %s", strerror(ret));
	}
	nvx_fn_loop(&fn);
	nvx_fn_stop(&fn, warm_th, warm);

	/* the system process ends when its control socket closes */
	close(fn.ctl_fd);
	close(ep.fd);
	close(fn.lfd);
	ret = NVX_EXIT_OK;
	if (waitpid(fn.sys, &st, 0) != fn.sys || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		nvx_warn("serve: the system process ended with status %#x", st);
		ret = NVX_EXIT_FAIL;
	}
	if (opt->verbose)
		nvx_sys_info("serve: %llu connections, %llu to VMs made for them, %llu without a VM, %llu VMs ended in error",
			     (unsigned long long)fn.conns,
			     (unsigned long long)fn.cold,
			     (unsigned long long)fn.failed,
			     (unsigned long long)fn.vm_errors);
	return ret;
}
