// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "stress": a seeded random stress of nvx's objects.
 *
 * STRESS_THREADS threads share a table of fds (grants, endpoints, VMs'
 * channels) and do random operations on it for NVX_STRESS_SECONDS (60):
 * create a grant, map it, touch and unmap it, pass a random fd over
 * SCM_RIGHTS to a child that closes it later, close an fd another
 * thread may be using, attach and detach bare VMs, ring their doorbells,
 * receive and reply (or not) on the endpoint, send user interrupts to
 * each other, fork children that exit holding everything, and make
 * calls with unknown flags (which must fail with EINVAL). Each thread
 * draws from its own generator seeded with NVX_STRESS_SEED (printed; a
 * new one each run otherwise) and its index: a seed gives the same
 * sequence of operations per thread, not the same interleaving.
 *
 * At the end every object is closed and every child reaped, and: the
 * pool's granted bytes are back, the endpoint is idle once its notices
 * are taken, the process holds the fds and mappings it held before, and
 * every call failed only with an errno it may give.
 */
#include <sys/socket.h>

#include "uvm_fixture.h"
#include "uintr_util.h"
#include "fault_util.h"

#define STRESS_THREADS	4
#define STRESS_SLOTS	24
#define STRESS_BARES	4
#define STRESS_VECTOR	5

/* An fd of the table and what it is. */
enum slot_kind { SLOT_FREE, SLOT_GRANT, SLOT_EP };

struct slot {
	enum slot_kind kind;
	int fd;
	uint64_t bytes;
};

struct shared {
	struct env *e;
	pthread_mutex_t mu;		/* the slots */
	struct slot slots[STRESS_SLOTS];
	pthread_mutex_t bare_mu[STRESS_BARES];
	struct bare *bares[STRESS_BARES];
	bool slow[STRESS_BARES];	/* attached with ATTACH_SLOW: KICK works */
	int sock;			/* to the fd-eating child */
	int uintr_fd;
	int index[STRESS_THREADS];	/* sender index of each thread's vector */
	uint64_t deadline_ms;
	pthread_mutex_t err_mu;
	char err[512];			/* the first unexpected result */
	uint64_t ops[16];		/* per operation: how many */
};

struct worker {
	struct shared *sh;
	unsigned int id;
	uint64_t rng;
	pthread_t t;
};

/* splitmix64: each thread's own sequence. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int pick(struct worker *w, unsigned int n)
{
	return next_rand(&w->rng) % n;
}

static void __attribute__((format(printf, 2, 3)))
unexpected(struct shared *sh, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&sh->err_mu);
	if (!sh->err[0]) {
		va_start(ap, fmt);
		vsnprintf(sh->err, sizeof(sh->err), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&sh->err_mu);
}

/* @ret is 0 or one of the errnos (positive, 0-terminated) @ok lists. */
static void expect_ret(struct shared *sh, const char *what, int ret,
		       const int *ok)
{
	if (!ret)
		return;
	for (; *ok; ok++)
		if (-ret == *ok)
			return;
	unexpected(sh, "%s: %s", what, strerror(-ret));
}

/* the pool empty: ENOSPC (see Documentation/nvx/pool.rst) */
static const int grant_errs[] = { ENOSPC, ENOMEM, EAGAIN, EMFILE, 0 };
static const int ep_errs[] = { ENOMEM, EMFILE, 0 };
static const int attach_errs[] = { EBUSY, ENOMEM, EMFILE, ENOSPC, 0 };
static const int recv_errs[] = { EAGAIN, EBADF, 0 };
static const int reply_errs[] = { ESRCH, ENOENT, EBADF, 0 };
static const int kick_errs[] = { EBADF, ESRCH, EAGAIN, 0 };
/* a thread that finished has unregistered and closed its vector fd */
static const int send_errs[] = { ESRCH, EPIPE, 0 };

/* Take slot @i out of the table: its fd is the caller's to close. */
static struct slot take_slot(struct shared *sh, unsigned int i)
{
	struct slot s;

	pthread_mutex_lock(&sh->mu);
	s = sh->slots[i];
	sh->slots[i].kind = SLOT_FREE;
	sh->slots[i].fd = -1;
	pthread_mutex_unlock(&sh->mu);
	return s;
}

/* Put @s in a free slot, or close it when the table is full. */
static void put_slot(struct shared *sh, struct slot s)
{
	unsigned int i;

	pthread_mutex_lock(&sh->mu);
	for (i = 0; i < STRESS_SLOTS; i++) {
		if (sh->slots[i].kind == SLOT_FREE) {
			sh->slots[i] = s;
			pthread_mutex_unlock(&sh->mu);
			return;
		}
	}
	pthread_mutex_unlock(&sh->mu);
	close(s.fd);
}

/* A dup of slot @i's fd if it is of @kind (the caller closes it), or -1. */
static int dup_slot(struct shared *sh, unsigned int i, enum slot_kind kind,
		    uint64_t *bytes)
{
	int fd = -1;

	pthread_mutex_lock(&sh->mu);
	if (sh->slots[i].kind == kind) {
		fd = fcntl(sh->slots[i].fd, F_DUPFD_CLOEXEC, 0);
		if (bytes)
			*bytes = sh->slots[i].bytes;
	}
	pthread_mutex_unlock(&sh->mu);
	return fd;
}

static void op_grant(struct worker *w)
{
	struct shared *sh = w->sh;
	uint64_t bytes = (1 + pick(w, 2)) * CHUNK;
	int fd = grant(sh->e->fd, bytes, 0, NULL);

	expect_ret(sh, "GRANT", fd < 0 ? fd : 0, grant_errs);
	if (fd >= 0)
		put_slot(sh, (struct slot){ SLOT_GRANT, fd, bytes });
}

static void op_endpoint(struct worker *w)
{
	struct nvx_uvm_endpoint ep = {
		.flags = NVX_UVM_EP_CLOEXEC, .max_vms = 1 + pick(w, 4),
	};
	int ret = nvx_ioctl(w->sh->e->fd, NVX_IOC_UVM_ENDPOINT, &ep);

	expect_ret(w->sh, "UVM_ENDPOINT", ret, ep_errs);
	if (!ret)
		put_slot(w->sh, (struct slot){ SLOT_EP, ep.fd, 0 });
}

static void op_close(struct worker *w)
{
	struct slot s = take_slot(w->sh, pick(w, STRESS_SLOTS));

	if (s.kind != SLOT_FREE)
		close(s.fd);
}

/* Map a grant, write a page, read it back, unmap (maybe after a close). */
static void op_map(struct worker *w)
{
	struct shared *sh = w->sh;
	bool early = pick(w, 2);
	uint64_t bytes;
	unsigned char *p;
	size_t off;
	int fd = dup_slot(sh, pick(w, STRESS_SLOTS), SLOT_GRANT, &bytes);

	if (fd < 0)
		return;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (early)	/* the mapping holds the grant */
		close(fd);
	if (p == MAP_FAILED) {
		unexpected(sh, "mmap of a grant: %s", strerror(errno));
	} else {
		off = (size_t)pick(w, bytes / 4096) * 4096;
		p[off] = (unsigned char)w->id;
		if (p[off] != (unsigned char)w->id)
			unexpected(sh, "a grant's page did not keep a byte");
		munmap(p, bytes);
	}
	if (!early)
		close(fd);
}

/* Pass a dup of a random fd to the child, which closes it later. */
static void op_pass(struct worker *w)
{
	struct shared *sh = w->sh;
	unsigned int i = pick(w, STRESS_SLOTS);
	int fd = dup_slot(sh, i, SLOT_GRANT, NULL);

	if (fd < 0)
		fd = dup_slot(sh, i, SLOT_EP, NULL);
	if (fd < 0)
		return;
	if (send_fd(sh->sock, fd))
		unexpected(sh, "SCM_RIGHTS: %s", strerror(errno));
	close(fd);
}

/* Attach bare VM @i to a random endpoint (or the env's), or detach it. */
static void op_attach(struct worker *w)
{
	struct shared *sh = w->sh;
	unsigned int i = pick(w, STRESS_BARES);
	struct bare *b = sh->bares[i];
	int ep, ret;

	pthread_mutex_lock(&sh->bare_mu[i]);
	if (b->chan_fd >= 0) {
		close(b->chan_fd);
		b->chan_fd = -1;
	} else {
		ep = dup_slot(sh, pick(w, STRESS_SLOTS), SLOT_EP, NULL);
		sh->slow[i] = pick(w, 2);
		ret = bare_attach(sh->e, b, ep >= 0 ? ep : sh->e->ep,
				  sh->slow[i] ? NVX_UVM_ATTACH_SLOW : 0);
		expect_ret(sh, "UVM_ATTACH", ret, attach_errs);
		if (ep >= 0)
			close(ep);
	}
	pthread_mutex_unlock(&sh->bare_mu[i]);
}

/* The "guest" of bare VM @i posts a request, or takes its completions. */
static void op_guest(struct worker *w)
{
	struct shared *sh = w->sh;
	unsigned int i = pick(w, STRESS_BARES);
	struct bare *b = sh->bares[i];
	struct nvx_uvm_msg m;
	int ret;

	pthread_mutex_lock(&sh->bare_mu[i]);
	if (b->chan_fd >= 0) {
		/* without a vCPU only a slow-path channel can be rung */
		if (sh->slow[i] && pick(w, 2)) {
			msg_init(&m, NVX_UVM_MSG_IPC, w->id);
			ret = bare_post(b, &m);
			expect_ret(sh, "KICK", ret, kick_errs);
		} else {
			while (!bare_complete(b, &m))
				;
		}
	}
	pthread_mutex_unlock(&sh->bare_mu[i]);
}

/* RECV on the env's endpoint or a random one; REPLY most of the time. */
static void op_serve(struct worker *w)
{
	struct shared *sh = w->sh;
	struct nvx_uvm_reply rep = { .msg.type = NVX_UVM_MSG_IPC };
	int ep = dup_slot(sh, pick(w, STRESS_SLOTS), SLOT_EP, NULL);
	struct nvx_uvm_recv r;
	int ret;

	ret = recv_nb(ep >= 0 ? ep : sh->e->ep, &r);
	expect_ret(sh, "RECV", ret, recv_errs);
	if (!ret && r.cookie && pick(w, 4)) {
		rep.cookie = r.cookie;
		ret = nvx_ioctl(ep >= 0 ? ep : sh->e->ep,
				NVX_UVM_EP_IOC_REPLY, &rep);
		expect_ret(sh, "REPLY", ret, reply_errs);
	}
	if (ep >= 0)
		close(ep);
}

/* Unknown flags are EINVAL, whatever else is going on. */
static void op_bad_flags(struct worker *w)
{
	struct shared *sh = w->sh;
	uint32_t bit = 1U << (16 + pick(w, 16));
	struct nvx_grant_create g = { .flags = bit, .bytes = CHUNK };
	struct nvx_uvm_endpoint ep = { .flags = bit };
	struct nvx_uvm_recv r = { .flags = bit };
	int ret;

	switch (pick(w, 3)) {
	case 0:
		ret = nvx_ioctl(sh->e->fd, NVX_IOC_GRANT, &g);
		break;
	case 1:
		ret = nvx_ioctl(sh->e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
		break;
	default:
		ret = nvx_ioctl(sh->e->ep, NVX_UVM_EP_IOC_RECV, &r);
		break;
	}
	if (ret != -EINVAL)
		unexpected(sh, "unknown flag %#x: %d, not EINVAL", bit, ret);
}

/* Send to a random thread's vector (its handler counts). */
static void op_uintr(struct worker *w)
{
	struct shared *sh = w->sh;
	int ret = nvx_uintr_send(sh->uintr_fd,
				 sh->index[pick(w, STRESS_THREADS)]);

	expect_ret(sh, "UINTR_SEND", ret, send_errs);
}

/* A child that exits at once, holding every fd of the process. */
static void op_fork(struct worker *w)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	if (pid < 0)
		unexpected(w->sh, "fork: %s", strerror(errno));
	else
		waitpid(pid, NULL, 0);
}

static void (*const ops[])(struct worker *w) = {
	op_grant, op_grant, op_endpoint, op_close, op_close, op_map,
	op_pass, op_attach, op_attach, op_guest, op_guest, op_serve,
	op_serve, op_bad_flags, op_uintr, op_fork,
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	int idx, vfd = -1;
	unsigned int op;

	idx = do_register(sh->uintr_fd, NULL, 0, 0);
	if (idx >= 0)
		idx = do_vector(sh->uintr_fd, STRESS_VECTOR, &vfd);
	__atomic_store_n(&sh->index[w->id], idx, __ATOMIC_SEQ_CST);
	if (idx < 0) {
		unexpected(sh, "thread %u: uintr: %s", w->id, strerror(-idx));
		return NULL;
	}
	while (now_ms() < sh->deadline_ms) {
		op = pick(w, ARRAY_SIZE(ops));
		ops[op](w);
		__atomic_add_fetch(&sh->ops[op], 1, __ATOMIC_RELAXED);
	}
	/* sends to it fail from here: ESRCH, then EPIPE */
	do_unregister(sh->uintr_fd);
	close(vfd);
	return NULL;
}

/* The child: take fds, hold a few, close them in a random order. */
static void eater(int sock, uint64_t seed)
{
	int held[8], n = 0, fd;

	for (;;) {
		fd = recv_fd(sock);
		if (fd < 0)
			break;
		if (n == 8) {
			n = next_rand(&seed) % 8;
			close(held[n]);
			held[n] = held[7];
			n = 7;
		}
		held[n++] = fd;
	}
	_exit(0);
}

static void *idle_main(void *arg)
{
	return arg;
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "re");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

FIXTURE(stress) {
	struct env e;
};

FIXTURE_SETUP(stress)
{
	env_setup(_metadata, &self->e, false);
}

FIXTURE_TEARDOWN(stress)
{
	env_teardown(_metadata, &self->e);
}

TEST_F_TIMEOUT(stress, objects, 900)
{
	static struct shared sh;
	const char *env = getenv("NVX_STRESS_SEED");
	const char *secs = getenv("NVX_STRESS_SECONDS");
	struct worker w[STRESS_THREADS];
	struct nvx_uvm_ep_stats st;
	int fds0, maps0, sv[2], i, status;
	uint64_t seed, total = 0;
	struct nvx_uvm_recv r;
	pid_t kid;

	seed = env ? strtoull(env, NULL, 0) :
		     (uint64_t)time(NULL) << 20 ^ now_ms() << 8 ^ getpid();
	memset(&sh, 0, sizeof(sh));
	sh.e = &self->e;
	pthread_mutex_init(&sh.mu, NULL);
	pthread_mutex_init(&sh.err_mu, NULL);
	for (i = 0; i < STRESS_SLOTS; i++)
		sh.slots[i] = (struct slot){ SLOT_FREE, -1, 0 };
	for (i = 0; i < STRESS_BARES; i++) {
		pthread_mutex_init(&sh.bare_mu[i], NULL);
		ASSERT_EQ(0, bare_new(&self->e, &sh.bares[i]));
	}
	sh.uintr_fd = nvx_open();
	ASSERT_LE(0, sh.uintr_fd);
	if (!nvx_has_feature(sh.uintr_fd, NVX_FEAT_UINTR))
		SKIP(return, "no NVX_FEAT_UINTR");
	/* glibc keeps the stacks of joined threads: have them cached first */
	for (i = 0; i < STRESS_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&w[i].t, NULL, idle_main, NULL));
	for (i = 0; i < STRESS_THREADS; i++)
		pthread_join(w[i].t, NULL);
	fds0 = fd_count();
	maps0 = count_lines("/proc/self/maps");
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		close(sv[0]);
		eater(sv[1], seed);
	}
	add_kid(&self->e, kid);	/* killed on the way out if we fail */
	close(sv[1]);
	sh.sock = sv[0];
	/* at most 600 s: the test's timeout is 900 */
	sh.deadline_ms = now_ms() + 1000ULL *
			 (secs ? (atoi(secs) > 600 ? 600 : atoi(secs)) : 60);
	ksft_print_msg("NVX_STRESS_SEED=%#llx NVX_STRESS_SECONDS=%s\n",
		       (unsigned long long)seed, secs ? secs : "60");

	for (i = 0; i < STRESS_THREADS; i++) {
		w[i] = (struct worker){ .sh = &sh, .id = i,
					.rng = seed + 0x1000 * i };
		ASSERT_EQ(0, pthread_create(&w[i].t, NULL, worker_main, &w[i]));
	}
	for (i = 0; i < STRESS_THREADS; i++)
		pthread_join(w[i].t, NULL);

	/* everything closed, detached and reaped */
	for (i = 0; i < STRESS_SLOTS; i++) {
		struct slot s = take_slot(&sh, i);

		if (s.kind != SLOT_FREE)
			close(s.fd);
	}
	for (i = 0; i < STRESS_BARES; i++) {
		if (sh.bares[i]->chan_fd >= 0)
			close(sh.bares[i]->chan_fd);
		sh.bares[i]->chan_fd = -1;
	}
	close(sh.sock);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	for (i = 0; i < MAX_KIDS; i++)	/* reaped: not to be killed */
		if (self->e.kids[i] == kid)
			self->e.kids[i] = 0;
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	for (i = 0; i < (int)ARRAY_SIZE(sh.ops); i++)
		total += sh.ops[i];
	ksft_print_msg("%llu operations by %d threads\n",
		       (unsigned long long)total, STRESS_THREADS);
	EXPECT_EQ(0, sh.err[0]) TH_LOG("seed %#llx: %s",
				       (unsigned long long)seed, sh.err);
	/* the notices of the VMs detached from the env's endpoint */
	while (!recv_nb(self->e.ep, &r))
		;
	ASSERT_EQ(0, ep_stats(self->e.ep, &st));
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(0U, st.gone);
	EXPECT_EQ(fds0, fd_count());
	EXPECT_EQ(maps0, count_lines("/proc/self/maps"));
	close(sh.uintr_fd);
	/* the pool's granted bytes are checked by the teardown */
}

/* ------------------------------------------------- a hostile guest --- */

struct hostile {
	struct env *e;
	struct bare *bad, *good;
	uint64_t deadline_ms, rng;
	uint64_t scribbles, kicks, served, good_done, stops, bad_served;
	char err[256];
};

/*
 * The hostile "guest": rewrites its control page's indexes, its SQ
 * entries (types, flags, segment lists, lengths) and the segment lists
 * themselves at random while the kernel consumes them.
 */
static void *scribbler_main(void *arg)
{
	struct hostile *h = arg;
	struct bare *b = h->bad;
	uint64_t rng = h->rng;
	struct nvx_uvm_msg *m;
	struct nvx_uvm_sg *sg;
	uint32_t *ctrl32 = (uint32_t *)&b->ctrl->credits;

	sg = (struct nvx_uvm_sg *)(b->mem + 0x100000);
	while (now_ms() < h->deadline_ms) {
		uint64_t r = next_rand(&rng);
		unsigned int k = r % 64;

		/* of 64: 1 the control page, 31 an entry, 16 a segment, 16 a publish */
		switch (!k ? 0 : k < 32 ? 1 : k < 48 ? 2 : 3) {
		case 0:	/* an index or a flag of the control page */
			__atomic_store_n(&ctrl32[(r >> 8) % 8],
					 (uint32_t)(r >> 32), __ATOMIC_RELAXED);
			break;
		case 1:	/* an SQ entry: mostly valid, 1 in 16 anything */
			m = &b->sq[(r >> 8) % b->sq_n];
			if (r >> 60) {
				msg_init(m, NVX_UVM_MSG_IPC, (uint32_t)r);
				m->flags = (r >> 24) & 1 ? NVX_UVM_MSGF_PUSH :
					   (r >> 25) & 1 ? NVX_UVM_MSGF_PULL : 0;
				m->sg_gpa = 0x100000;
				m->sg_nr = m->flags ? 1 + (r >> 40) % 4 : 0;
				break;
			}
			m->type = 1 + (r >> 16) % 12;
			m->flags = (r >> 24) & 7;
			m->sg_gpa = (r >> 28) & 1 ? 0x100000 : r >> 20;
			m->sg_nr = (r >> 40) % 40;
			m->bulk_len = (uint32_t)(r >> 32);
			break;
		case 2:	/* a segment: mostly in RAM, now and then not */
			sg[(r >> 8) % 32] = (struct nvx_uvm_sg){
				.gpa = (r >> 16) & 7 ? 0x200000 + (r % 4096) :
						       r >> 12,
				.len = (uint32_t)(r >> 40) % 70000,
			};
			break;
		default: /* publish: sq_prod forward, now and then far */
			__atomic_fetch_add(&b->ctrl->sq_prod,
					   (r >> 8) & 255 ? 1 : (uint32_t)(r >> 32),
					   __ATOMIC_RELEASE);
			break;
		}
		if (!(++h->scribbles % 16))
			sched_yield();	/* 2 vCPUs, 4 threads */
	}
	return NULL;
}

/* Ring the hostile VM's doorbell; once it is stopped, attach it again. */
static void *kicker_main(void *arg)
{
	struct hostile *h = arg;
	struct nvx_uvm_status cs;
	int ret;

	while (now_ms() < h->deadline_ms) {
		ret = bare_kick(h->bad, NVX_UVM_PORT_DOORBELL);
		if (ret && ret != -ESRCH)
			snprintf(h->err, sizeof(h->err), "KICK: %s",
				 strerror(-ret));
		h->kicks++;
		if (h->kicks % 64 || chan_status(h->bad->chan_fd, &cs) ||
		    !cs.reason)
			continue;
		h->stops++;
		close(h->bad->chan_fd);
		h->bad->chan_fd = -1;
		ret = bare_attach(h->e, h->bad, h->e->ep, NVX_UVM_ATTACH_SLOW);
		if (ret) {
			snprintf(h->err, sizeof(h->err), "ATTACH again: %s",
				 strerror(-ret));
			break;
		}
	}
	return NULL;
}

/* The system side: RECV, PUSH data taken, PULL data given, REPLY. */
static void *server_main(void *arg)
{
	static unsigned char buf[256 << 10];
	struct hostile *h = arg;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	int ret;

	while (now_ms() < h->deadline_ms + 500) {
		memset(&r, 0, sizeof(r));
		r.flags = NVX_UVM_RECV_NONBLOCK;
		r.buf = (uintptr_t)buf;
		r.buf_len = sizeof(buf);
		ret = nvx_ioctl(h->e->ep, NVX_UVM_EP_IOC_RECV, &r);
		if (ret == -EAGAIN || (!ret && !r.cookie))
			continue;
		if (ret && ret != -EFAULT) {
			snprintf(h->err, sizeof(h->err), "RECV: %s",
				 strerror(-ret));
			continue;
		}
		if (ret)
			continue;
		memset(&rep, 0, sizeof(rep));
		rep.cookie = r.cookie;
		rep.msg.type = r.msg.type;
		rep.msg.payload[0] = r.msg.payload[0];
		if (r.msg.flags & NVX_UVM_MSGF_PULL) {
			rep.buf = (uintptr_t)buf;
			rep.buf_len = r.data_len;
		}
		ret = nvx_ioctl(h->e->ep, NVX_UVM_EP_IOC_REPLY, &rep);
		if (ret && ret != -ESRCH && ret != -ENOENT)
			snprintf(h->err, sizeof(h->err), "REPLY: %s",
				 strerror(-ret));
		h->served++;
		if (r.msg.src_vm == h->bad->vm_id)
			h->bad_served++;
	}
	return NULL;
}

/*
 * A host thread scribbles over a running "guest"'s control page, SQ
 * entries and segment lists while another rings its doorbell and the
 * system side serves it (issue 21's hostile guest, double-fetch
 * hunting), beside a well-behaved VM on the same endpoint: the kernel
 * stops the hostile VM with a reason or serves it, never reports
 * anything, and the bystander's requests are all answered, in order,
 * each with its own tag and payload.
 */
TEST_F_TIMEOUT(stress, hostile_guest, 600)
{
	const char *secs = getenv("NVX_STRESS_SECONDS");
	const char *env = getenv("NVX_STRESS_SEED");
	struct hostile h = { .e = &self->e };
	struct nvx_uvm_status cs;
	pthread_t t[3];
	struct nvx_uvm_msg m, c;
	uint32_t tag = 0, i;
	char why[128] = "";
	uint64_t end;
	int ret;

	h.rng = env ? strtoull(env, NULL, 0) :
		      (uint64_t)time(NULL) << 20 ^ now_ms() << 8 ^ getpid();
	ksft_print_msg("NVX_STRESS_SEED=%#llx\n", (unsigned long long)h.rng);
	ASSERT_EQ(0, bare_new(&self->e, &h.bad));
	ASSERT_EQ(0, bare_new(&self->e, &h.good));
	ASSERT_EQ(0, bare_attach(&self->e, h.bad, self->e.ep,
				 NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, bare_attach(&self->e, h.good, self->e.ep,
				 NVX_UVM_ATTACH_SLOW));
	h.deadline_ms = now_ms() + 1000ULL * (secs ? atoi(secs) / 3 + 1 : 20);
	ASSERT_EQ(0, pthread_create(&t[0], NULL, scribbler_main, &h));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, kicker_main, &h));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, server_main, &h));

	/*
	 * The bystander: one request at a time, each answered exactly. A
	 * failure ends the run first (the threads use the VMs' memory).
	 */
	while (now_ms() < h.deadline_ms && !why[0]) {
		msg_init(&m, NVX_UVM_MSG_IPC, ++tag);
		m.payload[0] = (uint8_t)(tag * 7);
		ret = bare_post(h.good, &m);
		if (ret) {
			snprintf(why, sizeof(why), "post %u: %d", tag, ret);
			break;
		}
		end = now_ms() + 30000;
		while ((ret = bare_complete(h.good, &c)) && now_ms() < end)
			sched_yield();
		if (ret)
			snprintf(why, sizeof(why), "request %u not answered",
				 tag);
		else if (c.tag != tag || c.payload[0] != (uint8_t)(tag * 7))
			snprintf(why, sizeof(why),
				 "request %u answered as %u with %u", tag,
				 c.tag, c.payload[0]);
		else
			h.good_done++;
	}
	__atomic_store_n(&h.deadline_ms, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, why[0]) TH_LOG("bystander: %s", why);
	EXPECT_EQ(0, h.err[0]) TH_LOG("%s", h.err);
	ASSERT_EQ(0, chan_status(h.good->chan_fd, &cs));
	EXPECT_EQ(0U, cs.reason);
	ASSERT_EQ(0, chan_status(h.bad->chan_fd, &cs));
	ksft_print_msg("%llu scribbles, %llu kicks, %llu served (%llu of the hostile VM)\n",
		       (unsigned long long)h.scribbles,
		       (unsigned long long)h.kicks,
		       (unsigned long long)h.served,
		       (unsigned long long)h.bad_served);
	ksft_print_msg("hostile VM stopped %llu times (last %u, %#llx); bystander %llu\n",
		       (unsigned long long)h.stops, cs.reason,
		       (unsigned long long)cs.detail,
		       (unsigned long long)h.good_done);
	EXPECT_LT(0U, h.good_done);
	/* the hostile VM was rung, and stopped or served */
	EXPECT_LT(0U, h.kicks);
	EXPECT_LT(0U, h.stops + h.bad_served);
}

TEST_HARNESS_MAIN
