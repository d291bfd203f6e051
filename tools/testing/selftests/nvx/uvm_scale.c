// SPDX-License-Identifier: GPL-2.0
/*
 * Many user VMs at once in one tenant (Documentation/nvx/uvm.rst,
 * "Thousands of VMs"): nr_vms clones of one template attached to one
 * endpoint, each in a vCPU thread of this process, each idle (halted)
 * with one request taken by its system side.
 *
 * What is checked: every clone's request arrives, once, from a VM of
 * ours; the endpoint counts nr_vms VMs and KVM nr_vms more VMs;
 * answered, every clone exits 0; afterwards the endpoint, KVM and the
 * pool are back at their starting counts (the pool: the fixture's
 * teardown). A system process killed with nr_vms VMs attached stops
 * every one of them (NVX_UVM_ERR_ENDPOINT), and all go. A clone that
 * is still running when it should have ended is stopped and its vCPU
 * described (nvx_uvm_describe(): where it is, halted or not, its local
 * APIC); waiting_clone_described checks that description on a clone
 * that waits as it should.
 *
 * nr_vms is $NVX_SCALE_VMS, 100 by default: at 300 (the default until
 * 2026-12-04) the test VM misbehaved in about one run in three on the
 * debug kernel under nested TCG (a clone's triple fault, its vCPU state
 * holding the host's RIP, once a KASAN report and once a wedged kernel:
 * testing.rst, "Known problems"; not traced), which the suite cannot
 * carry. NVX_SCALE_VMS=300 ./uvm_scale runs it as it was; the 1,000 of
 * the issue were run on the perf kernel by nvx-bench scale.
 */
#include "uvm_fixture.h"
#include "nvx_util.h"

#include <dirent.h>
#include <sys/wait.h>

#define SCALE_VMS	100U
static unsigned int nr_vms = SCALE_VMS;
/* attached_past_the_old_limit's: above the per-endpoint limit of old */
#define PAST_LIMIT_VMS	300U
/* nr_vms KVM VMs made one after another on the debug kernel under TCG */
#define SCALE_TEST(name)	TEST_F_TIMEOUT(uvm, name, 420)
/* the longest wait on all of them, from a test's start (settings: 900 s) */
#define SCALE_MS		360000
/* an empty LAPIC bit map, as nvx_uvm_describe() prints it */
#define ZEROS64		"0000000000000000000000000000000000000000000000000000000000000000"

struct clone {
	struct nvx_uvm_vm vm;
	pthread_t th;
	bool threaded;		/* th runs it */
	int ret;		/* nvx_uvm_run()'s */
	int done;		/* the thread ended (atomic) */
	bool seen;		/* its request came */
	bool exited;		/* its EXIT message came */
	struct nvx_uvm_recv r;	/* its request, answered later */
};

struct scale {
	struct nvx_uvm_tmpl t;
	struct nvx_uvm_opts o;
	struct nvx_uvm_serve sv;
	char image[PATH_MAX + 16];
	char *argv[3];
	int ep;
	unsigned int started;
	struct clone *c;
};

/* The next message on @s->ep before @deadline (now_ms()). */
static int recv_by(struct scale *s, struct nvx_uvm_recv *r,
		   uint64_t deadline)
{
	return serve_recv_by(s->ep, &s->sv, r, deadline);
}

static struct clone *find_clone(struct scale *s, uint32_t vm_id)
{
	unsigned int i;

	for (i = 0; i < s->started; i++)
		if (s->c[i].vm.vm_id == vm_id)
			return &s->c[i];
	return NULL;
}

static void *clone_vcpu(void *arg)
{
	struct clone *c = arg;

	c->ret = nvx_uvm_run(&c->vm);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Room for six fds per VM; an endpoint for @nr clones and the template;
 * the template of `test template wait` (one IPC request after the ready
 * point, then exit 0), its VM's VM_GONE notice taken.
 */
static int scale_setup(struct env *e, struct scale *s, unsigned int nr,
		       char *why, size_t n)
{
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = nr + 1 };
	struct nvx_uvm_recv r;
	const char *where;
	int ret;

	s->ep = -1;
	s->t.grant_fd = -1;
	s->c = calloc(nr, sizeof(*s->c));
	s->sv.buf = malloc(NVX_UVM_MAX_BULK);
	s->sv.in_fd = -1;
	s->sv.out_fd = -1;
	s->sv.err_fd = -1;
	if (!s->c || !s->sv.buf)
		return snprintf(why, n, "no memory"), -ENOMEM;
	ret = nvx_nofile_max(8UL * nr + 256);
	if (ret)
		return snprintf(why, n, "RLIMIT_NOFILE: %s", strerror(-ret)),
		       ret;
	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
	if (ret)
		return snprintf(why, n, "ENDPOINT: %s", strerror(-ret)), ret;
	s->ep = ep.fd;
	snprintf(s->image, sizeof(s->image), "%s/test.img", e->dir);
	s->argv[0] = "test";
	s->argv[1] = "template";
	s->argv[2] = "wait";
	s->o.mem = VM_MEM;
	s->o.image = s->image;
	s->o.argc = 3;
	s->o.argv = s->argv;
	s->o.ep_fd = s->ep;
	ret = nvx_uvm_tmpl_make(&s->t, e->fd, &s->o, &where);
	if (ret)
		return snprintf(why, n, "template: %s: %s", where,
				strerror(-ret)), ret;
	s->o.argc = 0;	/* clones: the template's arguments */
	s->o.argv = NULL;
	ret = recv_by(s, &r, now_ms() + DEADLINE_MS);
	if (!ret && r.msg.type != NVX_UVM_MSG_VM_GONE)
		ret = -EPROTO;
	if (ret)
		return snprintf(why, n, "the template VM's VM_GONE: %s",
				strerror(-ret)), ret;
	return 0;
}

/*
 * Start @nr clones, each in its vCPU thread (or, without @run, made and
 * attached but never run): how many started.
 */
static unsigned int make_clones(struct env *e, struct scale *s,
				unsigned int nr, bool run, char *why, size_t n)
{
	const char *where;
	int ret;

	while (s->started < nr) {
		struct clone *c = &s->c[s->started];

		ret = nvx_uvm_clone(&c->vm, e->fd, &s->t, &s->o, &where);
		if (!ret && run) {
			where = "pthread_create";
			ret = -pthread_create(&c->th, NULL, clone_vcpu, c);
			c->threaded = !ret;
		} else if (!ret) {
			c->done = 1;
		}
		if (ret) {
			snprintf(why, n, "clone %u: %s: %s", s->started, where,
				 strerror(-ret));
			nvx_uvm_destroy(&c->vm);
			break;
		}
		s->started++;
	}
	return s->started;
}

static unsigned int start_clones(struct env *e, struct scale *s,
				 unsigned int nr, char *why, size_t n)
{
	return make_clones(e, s, nr, true, why, n);
}

/* Make @c's nvx_uvm_run() return (its thread then ends). */
static void clone_stop(struct clone *c)
{
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&c->vm.stop, 1, __ATOMIC_RELAXED);
		pthread_kill(c->th, KICK_SIG);
		usleep(1000);
	}
}

/*
 * A clone that is still running when it should have ended: stopped, and
 * where its vCPU was, in @buf (for the log).
 */
static const char *clone_stuck(struct clone *c, char *buf, size_t n)
{
	clone_stop(c);
	if (nvx_uvm_describe(&c->vm, buf, n))
		snprintf(buf, n, "vCPU state unreadable");
	return buf;
}

/* Stop the clones still running, join and destroy all; free the rest. */
static void scale_free(struct scale *s)
{
	unsigned int i;

	for (i = 0; i < s->started; i++) {
		struct clone *c = &s->c[i];

		if (c->threaded) {
			clone_stop(c);
			pthread_join(c->th, NULL);
		}
		nvx_uvm_destroy(&c->vm);
	}
	s->started = 0;
	nvx_uvm_tmpl_free(&s->t);
	if (s->ep >= 0)
		close(s->ep);
	s->ep = -1;
	free(s->c);
	free(s->sv.buf);
}

/* How many clones' threads have ended. */
static unsigned int clones_done(struct scale *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->started; i++)
		n += __atomic_load_n(&s->c[i].done, __ATOMIC_ACQUIRE);
	return n;
}

/*
 * How many clones' threads have ended other than by exiting 0 before
 * their request came (@sent false) or before their EXIT message came:
 * messages that will never come.
 */
static unsigned int clones_failed(struct scale *s, bool sent)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->started; i++) {
		struct clone *c = &s->c[i];

		if ((sent ? c->exited : c->seen) ||
		    !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
			continue;
		n += c->ret || c->vm.exit_status;
	}
	return n;
}

/*
 * nr_vms idle clones at once in one tenant: each one's request comes,
 * the endpoint and KVM count them; answered, each exits 0; the counts
 * go back to where they were.
 */
SCALE_TEST(idle_clones_at_once)
{
	struct nvx_uvm_ep_stats st, st0;
	uint64_t deadline, t0;
	struct nvx_uvm_recv r;
	unsigned int i, got = 0, exits = 0, bad = 0;
	long long avail0, avail1;
	struct scale s = { 0 };
	char why[256] = "";
	int kvm0 = kvm_vms(), ret;

	deadline = now_ms() + SCALE_MS;
	ret = scale_setup(&self->e, &s, nr_vms, why, sizeof(why));
	if (ret)
		scale_free(&s);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	ASSERT_EQ(0, ep_stats(s.ep, &st0)) scale_free(&s);
	avail0 = nvx_file_num("/proc/meminfo", "MemAvailable:");
	t0 = now_ms();
	start_clones(&self->e, &s, nr_vms, why, sizeof(why));
	ASSERT_EQ(nr_vms, s.started) {
		TH_LOG("%s", why);
		scale_free(&s);
	}

	/* every clone's request, once each; a VM gone ends the wait */
	while (got < s.started) {
		struct clone *c;

		/* a clone that failed sends no request: stop waiting */
		ret = recv_by(&s, &r, now_ms() + 1000 < deadline ?
				      now_ms() + 1000 : deadline);
		if (ret == -ETIMEDOUT && now_ms() < deadline) {
			if (got + clones_failed(&s, false) < s.started)
				continue;
			ret = -ECHILD;
		}
		if (ret)
			break;
		c = find_clone(&s, r.msg.src_vm);
		if (!c || c->seen || r.msg.type != NVX_UVM_MSG_IPC) {
			TH_LOG("unexpected: type %u from VM %u",
			       r.msg.type, r.msg.src_vm);
			bad++;
			if (r.msg.type == NVX_UVM_MSG_VM_GONE)
				break;
			continue;
		}
		c->seen = true;
		c->r = r;
		got++;
	}
	TH_LOG("%u clones started and waiting in %.1f s",
	       got, (now_ms() - t0) / 1000.0);
	EXPECT_EQ(0, ret) TH_LOG("%u requests came, %u clones failed first: %s",
				 got, clones_failed(&s, false), strerror(-ret));
	EXPECT_EQ(0U, bad);
	ASSERT_EQ(s.started, got) {
		char text[512];

		for (i = 0; i < s.started; i++) {
			struct clone *c = &s.c[i];

			if (c->seen)
				continue;
			if (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
				TH_LOG("clone %u (VM %u) still running, no request: %s",
				       i, c->vm.vm_id,
				       clone_stuck(c, text, sizeof(text)));
			else
				TH_LOG("clone %u: run %d, exit %u, reason %s %s",
				       i, c->ret, c->vm.exit_status,
				       nvx_uvm_reason_name(c->vm.reason),
				       c->vm.fault);
			break;
		}
		scale_free(&s);
	}
	avail1 = nvx_file_num("/proc/meminfo", "MemAvailable:");
	TH_LOG("MemAvailable fell by %lld KiB: %.0f KiB per VM (debug kernel)",
	       avail0 - avail1, (double)(avail0 - avail1) / got);

	ASSERT_EQ(0, ep_stats(s.ep, &st)) scale_free(&s);
	EXPECT_EQ((uint32_t)nr_vms, st.nr_vms);
	EXPECT_EQ((uint32_t)nr_vms, st.taken);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ((uint64_t)nr_vms + 1, st.attached);
	if (kvm0 >= 0)
		EXPECT_EQ(kvm0 + (int)nr_vms, kvm_vms());

	/* answered, each exits: its EXIT message, then the exit port */
	for (i = 0; i < s.started; i++)
		EXPECT_EQ(0, nvx_uvm_serve_msg(s.ep, &s.sv, &s.c[i].r));
	while (exits < s.started) {
		/* a clone that failed sends no EXIT: stop waiting for it */
		ret = recv_by(&s, &r, now_ms() + 1000 < deadline ?
				      now_ms() + 1000 : deadline);
		if (ret == -ETIMEDOUT && now_ms() < deadline) {
			if (exits + clones_failed(&s, true) < s.started)
				continue;
			ret = -ECHILD;
		}
		if (ret)
			break;
		if (r.msg.type == NVX_UVM_MSG_EXIT) {
			struct clone *c = find_clone(&s, r.msg.src_vm);

			if (c && !c->exited) {
				c->exited = true;
				exits++;
			}
		}
		ret = nvx_uvm_serve_msg(s.ep, &s.sv, &r);
		if (ret)
			break;
	}
	EXPECT_EQ(0, ret) TH_LOG("%u EXIT messages, %u clones failed first: %s",
				 exits, clones_failed(&s, true),
				 strerror(-ret));
	while (clones_done(&s) < s.started && now_ms() < deadline)
		usleep(10000);
	for (i = 0, bad = 0; i < s.started; i++) {
		struct clone *c = &s.c[i];
		bool running = !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
		char text[512];

		if (!running && !c->ret && !c->vm.exit_status)
			continue;
		if (bad++)
			continue;
		if (running)
			TH_LOG("clone %u (VM %u) still running, request %s, EXIT %s: %s",
			       i, c->vm.vm_id, c->seen ? "seen" : "not seen",
			       c->exited ? "seen" : "not seen",
			       clone_stuck(c, text, sizeof(text)));
		else
			TH_LOG("clone %u: ended %d, run %d, exit %u, reason %s %s",
			       i, c->done, c->ret, c->vm.exit_status,
			       nvx_uvm_reason_name(c->vm.reason),
			       c->vm.fault);
	}
	/* scale_free() stops what did not end */
	ASSERT_EQ(0U, bad) {
		TH_LOG("%u clones did not exit 0", bad);
		scale_free(&s);
	}

	/* taken down: a VM_GONE notice each; counts back */
	for (i = 0; i < s.started; i++) {
		pthread_join(s.c[i].th, NULL);
		nvx_uvm_destroy(&s.c[i].vm);
	}
	s.started = 0;
	for (got = 0; got < nr_vms; got++) {
		ret = recv_by(&s, &r, now_ms() + DEADLINE_MS);
		if (ret || r.msg.type != NVX_UVM_MSG_VM_GONE)
			break;
	}
	EXPECT_EQ(nr_vms, got) TH_LOG("VM_GONE notices: %u, then %d type %u",
				      got, ret, r.msg.type);
	ASSERT_EQ(0, ep_stats(s.ep, &st)) scale_free(&s);
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.gone);
	EXPECT_EQ((uint64_t)nr_vms + 1, st.attached);
	/* each: its request and its EXIT */
	EXPECT_EQ(st0.msgs_in + 2 * nr_vms, st.msgs_in);
	scale_free(&s);
	if (kvm0 >= 0)
		EXPECT_EQ(0, wait_until(kvm_vms_are, -1, &kvm0, SHORT_MS, 10000))
			TH_LOG("KVM has %d VMs, %d at the start", kvm_vms(),
			       kvm0);
}

/*
 * The system process is killed with nr_vms VMs attached (each one's
 * request taken, unanswered): every VM stops with NVX_UVM_ERR_ENDPOINT,
 * every vCPU thread returns, and KVM is back where it was.
 */
SCALE_TEST(system_process_killed_with_clones_attached)
{
	struct pollfd pfd;
	unsigned int i, bad = 0;
	struct scale s = { 0 };
	char why[256] = "", c = 0;
	int kvm0 = kvm_vms(), p[2], ret;
	uint64_t deadline = now_ms() + SCALE_MS;
	pid_t pid;

	ret = scale_setup(&self->e, &s, nr_vms, why, sizeof(why));
	if (ret)
		scale_free(&s);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC)) scale_free(&s);
	pid = fork();
	ASSERT_LE(0, pid) scale_free(&s);
	if (!pid) {
		/* the system process: take every request, answer none */
		struct nvx_uvm_recv r;
		unsigned int n = 0;

		close(p[0]);
		alarm(SCALE_MS / 1000);
		while (n < nr_vms) {
			ret = nvx_uvm_recv(s.ep, &s.sv, &r, 0);
			if (ret == -EINTR)
				continue;
			if (ret)
				_exit(2);
			n += r.msg.type == NVX_UVM_MSG_IPC;
		}
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	add_kid(&self->e, pid);

	start_clones(&self->e, &s, nr_vms, why, sizeof(why));
	ASSERT_EQ(nr_vms, s.started) {
		TH_LOG("%s", why);
		reap_kid(&self->e, pid);
		scale_free(&s);
	}
	/* from now on only the system process holds the endpoint */
	close(s.ep);
	s.ep = -1;
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, deadline > now_ms() ?
				 (int)(deadline - now_ms()) : 0));
	EXPECT_EQ(1, read(p[0], &c, 1));
	close(p[0]);
	ASSERT_EQ('r', c) {
		TH_LOG("the system process did not take %u requests", nr_vms);
		reap_kid(&self->e, pid);
		scale_free(&s);
	}
	EXPECT_EQ(0, kill(pid, SIGKILL));
	reap_kid(&self->e, pid);

	deadline = now_ms() + DEADLINE_MS;
	while (clones_done(&s) < s.started && now_ms() < deadline)
		usleep(10000);
	EXPECT_EQ(s.started, clones_done(&s));
	for (i = 0; i < s.started; i++) {
		struct clone *cl = &s.c[i];

		if (!__atomic_load_n(&cl->done, __ATOMIC_ACQUIRE) ||
		    cl->ret != -EIO || cl->vm.reason != NVX_UVM_ERR_ENDPOINT) {
			if (!bad++)
				TH_LOG("clone %u: ended %d, run %d, reason %s",
				       i, cl->done, cl->ret,
				       nvx_uvm_reason_name(cl->vm.reason));
		}
	}
	EXPECT_EQ(0U, bad) TH_LOG("%u clones not stopped for the endpoint",
				  bad);
	scale_free(&s);
	if (kvm0 >= 0)
		EXPECT_EQ(0, wait_until(kvm_vms_are, -1, &kvm0, SHORT_MS, 10000))
			TH_LOG("KVM has %d VMs, %d at the start", kvm_vms(),
			       kvm0);
}

/*
 * More VMs on one endpoint than the old limit of 256, whatever
 * $NVX_SCALE_VMS says: PAST_LIMIT_VMS clones made and attached, none run
 * (no nested guest executes: the endpoint's and KVM's counts are what
 * is checked); all closed, the endpoint counts none and holds one
 * VM_GONE notice each, KVM is back where it was.
 */
SCALE_TEST(attached_past_the_old_limit)
{
	struct nvx_uvm_ep_stats st;
	struct scale s = { 0 };
	char why[256] = "";
	int kvm0 = kvm_vms(), ret;
	uint64_t t0;

	ret = scale_setup(&self->e, &s, PAST_LIMIT_VMS, why, sizeof(why));
	if (ret)
		scale_free(&s);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	t0 = now_ms();
	make_clones(&self->e, &s, PAST_LIMIT_VMS, false, why, sizeof(why));
	ASSERT_EQ(PAST_LIMIT_VMS, s.started) {
		TH_LOG("%u clones attached: %s", s.started, why);
		scale_free(&s);
	}
	TH_LOG("%u clones made and attached in %.1f s", s.started,
	       (now_ms() - t0) / 1000.0);
	ASSERT_EQ(0, ep_stats(s.ep, &st)) scale_free(&s);
	EXPECT_EQ(PAST_LIMIT_VMS, st.nr_vms);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ((uint64_t)PAST_LIMIT_VMS + 1, st.attached);
	if (kvm0 >= 0)
		EXPECT_EQ(kvm0 + (int)PAST_LIMIT_VMS, kvm_vms());

	/* all closed: the endpoint counts none, KVM has as many as before */
	for (; s.started; s.started--)
		nvx_uvm_destroy(&s.c[s.started - 1].vm);
	EXPECT_EQ(0, ep_stats(s.ep, &st));
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(PAST_LIMIT_VMS, st.gone);
	if (kvm0 >= 0)
		EXPECT_EQ(0, wait_until(kvm_vms_are, -1, &kvm0, SHORT_MS, 10000))
			TH_LOG("KVM has %d VMs, %d at the start", kvm_vms(),
			       kvm0);
	scale_free(&s);
}

/*
 * What a stuck clone's log line is read against: nvx_uvm_describe() of
 * a clone stopped while it waits, halted, for its answer says KVM holds
 * it halted (mp_state 3, KVM_MP_STATE_HALTED) with interrupts on, its
 * safety tick's vector (0xf0) unmasked in the timer LVT and no interrupt
 * in service. The tick wakes it now and then: a stop that caught it
 * awake is retried (the vCPU thread started again).
 */
TEST_F_TIMEOUT(uvm, waiting_clone_described, 180)
{
	static const char isr0[] = " isr " ZEROS64 " ";
	unsigned long long rip = 0, rflags = 0;
	unsigned int mp = ~0U, lvtt = 0, try;
	const char *p;
	struct scale s = { 0 };
	struct nvx_uvm_recv r;
	char why[256] = "", text[512] = "";
	struct clone *c;
	int ret, n;

	ret = scale_setup(&self->e, &s, 1, why, sizeof(why));
	if (ret)
		scale_free(&s);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	start_clones(&self->e, &s, 1, why, sizeof(why));
	ASSERT_EQ(1U, s.started) {
		TH_LOG("%s", why);
		scale_free(&s);
	}
	c = &s.c[0];
	ret = recv_by(&s, &r, now_ms() + DEADLINE_MS);
	ASSERT_EQ(0, ret) scale_free(&s);
	ASSERT_EQ(NVX_UVM_MSG_IPC, r.msg.type) scale_free(&s);
	for (try = 0; try < 3; try++) {
		if (try) {
			pthread_join(c->th, NULL);
			c->done = 0;
			c->vm.stop = 0;
			ret = pthread_create(&c->th, NULL, clone_vcpu, c);
			ASSERT_EQ(0, ret) {
				/* joined already: not scale_free()'s */
				nvx_uvm_destroy(&c->vm);
				s.started = 0;
				scale_free(&s);
			}
		}
		/* it polls a little, then halts; the tick's period grows */
		sleep(2);
		clone_stuck(c, text, sizeof(text));
		n = sscanf(text, "rip %llx rflags %llx mp_state %u", &rip,
			   &rflags, &mp);
		ASSERT_EQ(3, n) {
			TH_LOG("%s", text);
			scale_free(&s);
		}
		if (mp == 3 && strstr(text, isr0))
			break;
	}
	TH_LOG("%s", text);
	EXPECT_EQ(-EINTR, c->ret);
	EXPECT_EQ(3U, mp) TH_LOG("not halted in 3 tries");
	EXPECT_NE(0ULL, rflags & 0x200) TH_LOG("interrupts off");
	p = strstr(text, " lvtt ");
	EXPECT_TRUE(p && sscanf(p, " lvtt %x", &lvtt) == 1) TH_LOG("%s", text);
	/* vector 0xf0, not masked (bit 16), one-shot (bits 17-18) */
	EXPECT_EQ(0xf0U, lvtt & 0x700ff);
	EXPECT_NE(NULL, strstr(text, isr0));
	EXPECT_GT(rip, 0ULL);
	scale_free(&s);
}

/* $NVX_SCALE_VMS, then the harness. */
int main(int argc, char **argv)
{
	const char *v = getenv("NVX_SCALE_VMS");
	char *end;

	if (v) {
		unsigned long n = strtoul(v, &end, 10);

		if (*end || !n || n >= NVX_UVM_MAX_VMS) {
			fprintf(stderr, "NVX_SCALE_VMS: 1 to %u, not '%s'\n",
				NVX_UVM_MAX_VMS - 1, v);
			return 2;
		}
		nr_vms = n;
	}
	return test_harness_run(argc, argv);
}
