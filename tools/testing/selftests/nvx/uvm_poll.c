// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": the endpoint's SQ poller and RECV busy
 * polling (NVX_UVM_EP_IOC_POLLER).
 *
 * Bare VMs attached on the fast path have no vCPU, so nobody can ring
 * for them: what they publish is taken by the poller or by nobody. They
 * show the poller's flag, its last look before it sleeps and when it
 * stops, its stops of a broken ring (the doorbell's, to the reason), its
 * share of each pass between VMs, a flooding VM's cost to a quiet one,
 * and closes while it scans. Real
 * guests show the protocol end to end: 100,000 pings without doorbells,
 * and a guest that catches the poller going to sleep as it publishes,
 * 10,000 times, without losing a message.
 */
#include "uvm_fixture.h"
#include "nvx_util.h"
#include "run_util.h"

#include <grp.h>
#include <sched.h>

#define SQ		NVX_UVM_POLLER_SQ
#define NR_PINGS	100000
#define NR_GAPS		10000

/* @cpu -1: any CPU; else NVX_UVM_POLLER_CPU. */
static int set_poller(int ep, uint32_t flags, int cpu, uint32_t idle_us,
		      uint32_t budget, uint32_t busy_us)
{
	struct nvx_uvm_poller p = {
		.flags = flags, .idle_us = idle_us,
		.budget = budget, .recv_busy_us = busy_us,
	};

	if (cpu >= 0) {
		p.flags |= NVX_UVM_POLLER_CPU;
		p.cpu = cpu;
	}
	return nvx_uvm_set_poller(ep, &p);
}

/* Publish @m in a bare VM's SQ without ringing (no KICK on the fast path). */
static void publish(struct bare *b, const struct nvx_uvm_msg *m)
{
	b->sq[b->sq_prod & (b->sq_n - 1)] = *m;
	b->sq_prod++;
	__atomic_store_n(&b->ctrl->sq_prod, b->sq_prod, __ATOMIC_SEQ_CST);
}

static void publish_ipc(struct bare *b, uint32_t tag)
{
	struct nvx_uvm_msg m;

	msg_init(&m, NVX_UVM_MSG_IPC, tag);
	publish(b, &m);
}

/* For wait_until(): the SQ flags of the control page @arg are @want. */
static int sq_flags_are(int want, const void *arg)
{
	const struct nvx_uvm_ctrl *c = arg;

	return __atomic_load_n(&c->sq_flags, __ATOMIC_ACQUIRE) ==
	       (uint32_t)want;
}

/* For wait_until(): the endpoint's poller sleeps. */
static int poller_asleep(int ep, const void *unused)
{
	return fdinfo_num(ep, "poller_asleep") == 1;
}

/* For wait_until(): channel @chan was stopped. */
static int chan_stopped(int chan, const void *unused)
{
	struct nvx_uvm_status st;

	if (chan_status(chan, &st))
		return -1;
	return st.reason != NVX_UVM_RUNNING;
}

/* For wait_until(): process @pid is gone. */
static int pid_gone(int pid, const void *unused)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) != 0;
}

/* REPLY to @r with status 0. */
static int reply_ok(int ep, const struct nvx_uvm_recv *r)
{
	struct nvx_uvm_reply rp = { 0 };

	rp.cookie = r->cookie;
	rp.msg.type = r->msg.type;
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_REPLY, &rp);
}

/* Take @n messages of @ep and answer each with status 0. */
static int answer(int ep, unsigned int n)
{
	uint64_t end = now_ms() + SHORT_MS;
	struct nvx_uvm_recv r;
	int ret;

	while (n) {
		ret = recv_nb(ep, &r);
		if (ret == -EAGAIN && now_ms() < end) {
			usleep(1000);
			continue;
		}
		if (ret)
			return ret;
		ret = reply_ok(ep, &r);
		if (ret)
			return ret;
		n--;
	}
	return 0;
}

/* The next completion of @b within SHORT_MS: its tag, or -errno. */
static long long complete_tag(struct bare *b)
{
	uint64_t end = now_ms() + SHORT_MS;
	struct nvx_uvm_msg m;

	while (bare_complete(b, &m)) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return m.status ? m.status : (long long)m.tag;
}

static int new_fast_vm(struct env *e, int ep, struct bare **b)
{
	int ret = bare_new(e, b);

	return ret ? ret : bare_attach(e, *b, ep, 0);
}

/* A bad @field with @flags, and again with the poller's flag. */
#define BADP(err, flags_, field, val) do {				\
	struct nvx_uvm_poller p_ = { .flags = (flags_) };		\
	long long v_ = (val);						\
	p_.field = v_;							\
	EXPECT_EQ(err, nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p_))	\
		TH_LOG(#flags_ ", " #field " = %lld", v_);		\
	p_.flags |= SQ;							\
	EXPECT_EQ(err, nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p_))	\
		TH_LOG(#flags_ " | SQ, " #field " = %lld", v_);		\
} while (0)

#define CPU	NVX_UVM_POLLER_CPU

/* Every bad setting, with its errno; the limits themselves work. */
ABI_TEST(poller_bad_input)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int ep = self->e.ep;
	struct {
		struct nvx_uvm_poller p;
		uint64_t more;
	} big = { .more = 1 };
	struct nvx_uvm_poller p = { 0 };
	struct bare *b;

	ASSERT_LT(0, ncpu);
	BADP(-EINVAL, 0, flags, 4);
	BADP(-EINVAL, 0, flags, 1U << 31);
	BADP(-EINVAL, 0, reserved, 1);
	BADP(-EINVAL, 0, idle_us, NVX_UVM_POLLER_MAX_IDLE_US + 1);
	BADP(-EINVAL, 0, idle_us, UINT32_MAX);
	BADP(-EINVAL, 0, budget, NVX_UVM_MAX_ENTRIES + 1);
	BADP(-EINVAL, 0, recv_busy_us, NVX_UVM_POLLER_MAX_BUSY_US + 1);
	/* a CPU: only with its flag; online, in our mask */
	BADP(-EINVAL, 0, cpu, 1);
	BADP(-EINVAL, 0, cpu, -1);
	BADP(-EINVAL, CPU, cpu, -1);
	BADP(-EINVAL, CPU, cpu, INT32_MIN);
	BADP(-EINVAL, CPU, cpu, ncpu);
	BADP(-EINVAL, CPU, cpu, 1 << 20);
	/* the poller's settings without the poller */
	p.flags = CPU;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p));
	p.flags = 0;
	p.idle_us = 10;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p));
	p.idle_us = 0;
	p.budget = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p));
	p.budget = 0;
	EXPECT_EQ(0, fdinfo_num(ep, "poller"));

	/* too short, unknown trailing bytes, no struct, other fds */
	EXPECT_EQ(-EINVAL,
		  nvx_ioctl(ep, nvx_ioc_resize(NVX_UVM_EP_IOC_POLLER, 16), &p));
	EXPECT_EQ(-E2BIG,
		  nvx_ioctl(ep, nvx_ioc_resize(NVX_UVM_EP_IOC_POLLER,
					       sizeof(big)), &big));
	EXPECT_EQ(-EFAULT, nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, NULL));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->e.fd, NVX_UVM_EP_IOC_POLLER, &p));
	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, ep, 0));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_POLLER, &p));

	/* the limits work, and all zero stops it */
	EXPECT_EQ(0, set_poller(ep, SQ, 0, NVX_UVM_POLLER_MAX_IDLE_US,
				NVX_UVM_MAX_ENTRIES,
				NVX_UVM_POLLER_MAX_BUSY_US));
	EXPECT_EQ(1, fdinfo_num(ep, "poller"));
	EXPECT_EQ(0, fdinfo_num(ep, "poller_cpu"));
	EXPECT_EQ(NVX_UVM_POLLER_MAX_IDLE_US, fdinfo_num(ep, "poller_idle_us"));
	EXPECT_EQ(NVX_UVM_MAX_ENTRIES, fdinfo_num(ep, "poller_budget"));
	EXPECT_EQ(NVX_UVM_POLLER_MAX_BUSY_US, fdinfo_num(ep, "recv_busy_us"));
	EXPECT_EQ(0, set_poller(ep, SQ, -1, 1, 1, 0));
	EXPECT_EQ(-1, fdinfo_num(ep, "poller_cpu"));
	EXPECT_EQ(1, fdinfo_num(ep, "poller_idle_us"));
	/* 0 means the defaults */
	EXPECT_EQ(0, set_poller(ep, SQ, -1, 0, 0, 0));
	EXPECT_EQ(NVX_UVM_POLLER_DEF_IDLE_US, fdinfo_num(ep, "poller_idle_us"));
	EXPECT_EQ(NVX_UVM_POLLER_DEF_BUDGET, fdinfo_num(ep, "poller_budget"));
	EXPECT_EQ(0, set_poller(ep, 0, -1, 0, 0, 0));
	EXPECT_EQ(0, fdinfo_num(ep, "poller"));
	EXPECT_EQ(0, fdinfo_num(ep, "recv_busy_us"));
	EXPECT_EQ(0U, b->ctrl->sq_flags);
}

static int nobody_polls(int ep)
{
	struct nvx_uvm_poller p = { .flags = SQ };

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 100;
	if (nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p) != -EPERM)
		return 1;
	/* busy polling spends the caller's own CPU: allowed */
	p.flags = 0;
	p.recv_busy_us = 100;
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_POLLER, &p) ? 2 : 0;
}

/* A kernel thread that spins needs CAP_SYS_NICE, even on root's fd. */
ABI_TEST(poller_needs_cap_sys_nice)
{
	int ep = self->e.ep, st;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_polls(ep));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st))
		TH_LOG("100: setresuid; 1: not EPERM; 2: busy polling refused");
	EXPECT_EQ(0, fdinfo_num(ep, "poller"));
	EXPECT_EQ(100, fdinfo_num(ep, "recv_busy_us"));
}

/*
 * The poller flags the fast VM's SQ and takes what it publishes without
 * a doorbell; it leaves a slow VM alone (its doorbells come by KICK).
 * Stopping it clears the flag and ends its thread.
 */
ABI_TEST(takes_entries_nobody_rang_for)
{
	int ep = self->e.ep, i;
	struct nvx_uvm_status st;
	struct bare *b, *slow;
	char path[64], *comm, want[32];
	long long pid;

	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &b));
	ASSERT_EQ(0, bare_new(&self->e, &slow));
	ASSERT_EQ(0, bare_attach(&self->e, slow, ep, NVX_UVM_ATTACH_SLOW));
	EXPECT_EQ(0U, b->ctrl->sq_flags);
	ASSERT_EQ(0, set_poller(ep, SQ, -1, NVX_UVM_POLLER_MAX_IDLE_US, 0, 0));
	ASSERT_EQ(0, wait_until(sq_flags_are, NVX_UVM_SQ_POLLED, b->ctrl,
				SHORT_MS, 1000));
	pid = fdinfo_num(ep, "poller_pid");
	ASSERT_LT(0, pid);
	snprintf(path, sizeof(path), "/proc/%lld/comm", pid);
	comm = read_file(path, 64);
	ASSERT_NE(NULL, comm);
	snprintf(want, sizeof(want), "nvx-poll/%u\n", self->e.ep_id);
	EXPECT_STREQ(want, comm);
	free(comm);

	for (i = 0; i < 20; i++)
		publish_ipc(b, i);
	ASSERT_EQ(0, answer(ep, 20));
	for (i = 0; i < 20; i++)
		EXPECT_EQ(i, complete_tag(b));
	ASSERT_EQ(0, chan_status(b->chan_fd, &st));
	EXPECT_EQ(20U, st.msgs_in);
	EXPECT_EQ(20U, st.polled);
	EXPECT_EQ(0U, st.doorbells);
	EXPECT_EQ(20, fdinfo_num(b->chan_fd, "polled"));
	EXPECT_LE(20, fdinfo_num(ep, "poller_taken"));
	EXPECT_LT(0, fdinfo_num(ep, "poller_passes"));

	/* the slow VM: never flagged, never polled */
	publish_ipc(slow, 7);
	usleep(100 * 1000);
	EXPECT_EQ(0U, slow->ctrl->sq_flags);
	ASSERT_EQ(0, chan_status(slow->chan_fd, &st));
	EXPECT_EQ(0U, st.msgs_in);
	ASSERT_EQ(0, bare_kick(slow, NVX_UVM_PORT_DOORBELL));
	ASSERT_EQ(0, answer(ep, 1));
	EXPECT_EQ(7, complete_tag(slow));
	ASSERT_EQ(0, chan_status(slow->chan_fd, &st));
	EXPECT_EQ(1U, st.doorbells);
	EXPECT_EQ(0U, st.polled);

	ASSERT_EQ(0, set_poller(ep, 0, -1, 0, 0, 0));
	EXPECT_EQ(0U, b->ctrl->sq_flags);
	EXPECT_EQ(0, fdinfo_num(ep, "poller"));
	EXPECT_EQ(0, wait_until(pid_gone, pid, NULL, SHORT_MS, 1000));
}

/*
 * Idle, the poller clears the flag and sleeps; an entry published
 * against the protocol (without ringing) then stays in the ring. When
 * the poller stops it takes a last look, and takes it.
 */
ABI_TEST(last_look_when_it_stops)
{
	struct nvx_uvm_status st;
	int ep = self->e.ep;
	struct bare *b;

	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &b));
	ASSERT_EQ(0, set_poller(ep, SQ, -1, 1000, 0, 0));
	ASSERT_EQ(0, wait_until(poller_asleep, ep, NULL, SHORT_MS, 1000));
	EXPECT_EQ(0U, b->ctrl->sq_flags);
	EXPECT_LE(1, fdinfo_num(ep, "poller_sleeps"));

	publish_ipc(b, 5);
	usleep(200 * 1000);
	ASSERT_EQ(0, chan_status(b->chan_fd, &st));
	EXPECT_EQ(0U, st.msgs_in) TH_LOG("a sleeping poller took an entry");

	ASSERT_EQ(0, set_poller(ep, 0, -1, 0, 0, 0));
	ASSERT_EQ(0, chan_status(b->chan_fd, &st));
	EXPECT_EQ(1U, st.msgs_in);
	EXPECT_EQ(1U, st.polled);
	ASSERT_EQ(0, answer(ep, 1));
	EXPECT_EQ(5, complete_tag(b));
}

/*
 * A broken ring stops the VM with the doorbell's reason and detail: an
 * sq_prod beyond the ring, a malformed entry. The endpoint goes on.
 */
ABI_TEST(broken_ring_stops_the_vm)
{
	struct nvx_uvm_status st;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b, *c, *ok;
	int ep = self->e.ep;
	uint32_t far, id;

	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &b));
	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &c));
	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &ok));
	ASSERT_EQ(0, set_poller(ep, SQ, -1, NVX_UVM_POLLER_MAX_IDLE_US, 0, 0));

	far = b->sq_n + 1;
	__atomic_store_n(&b->ctrl->sq_prod, far, __ATOMIC_SEQ_CST);
	msg_init(&m, NVX_UVM_MSG_IPC, 1);
	m.type = 0;
	publish(c, &m);
	ASSERT_EQ(0, wait_until(chan_stopped, b->chan_fd, NULL, SHORT_MS, 1000));
	ASSERT_EQ(0, wait_until(chan_stopped, c->chan_fd, NULL, SHORT_MS, 1000));
	ASSERT_EQ(0, chan_status(b->chan_fd, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_RING, st.reason);
	EXPECT_EQ(far, st.detail);
	ASSERT_EQ(0, chan_status(c->chan_fd, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_MSG, st.reason);
	EXPECT_EQ(0U, st.detail);

	publish_ipc(ok, 3);
	ASSERT_EQ(0, answer(ep, 1));
	EXPECT_EQ(3, complete_tag(ok));
	id = b->vm_id;
	bare_free(&self->e, b);
	EXPECT_EQ(0, recv_gone(ep, id, NVX_UVM_ERR_RING, &r));
	id = c->vm_id;
	bare_free(&self->e, c);
	EXPECT_EQ(0, recv_gone(ep, id, NVX_UVM_ERR_MSG, &r));
}

/* Position of the first nvx_uvm_msg_in of VM @vm in @text, or -1. */
static int msg_in_rank(const char *text, uint32_t vm, unsigned int *total)
{
	char want[48];
	int rank = -1, i = 0;
	const char *p;

	snprintf(want, sizeof(want), "nvx_uvm_msg_in: vm=%u ", vm);
	for (p = text; (p = strstr(p, "nvx_uvm_msg_in: vm=")); p++, i++)
		if (rank < 0 && !strncmp(p, want, strlen(want)))
			rank = i;
	*total = i;
	return rank;
}

/*
 * A pass takes at most the budget from each VM: of 32 entries waiting in
 * one VM and one in another, the poller's first pass takes 4 and 1, so
 * the second VM's entry is the fifth taken, not the 33rd.
 */
ABI_TEST(budget_per_vm_per_pass)
{
	static const char *const events[] = { "nvx_uvm_msg_in" };
	const char *dir = tracefs_with("nvx_uvm_msg_in");
	int ep = self->e.ep, i, rank;
	char path[160], *text;
	unsigned int total;
	struct bare *a, *b;

	if (!dir)
		SKIP(return, "no tracefs with events/nvx/nvx_uvm_msg_in");
	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &a));
	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &b));
	ASSERT_LT(a->vm_id, b->vm_id);
	for (i = 0; i < 32; i++)
		publish_ipc(a, i);
	publish_ipc(b, 100);
	snprintf(path, sizeof(path), "%strace", dir);
	ASSERT_EQ(0, write_str(path, ""));
	ASSERT_EQ(0, trace_events_enable(dir, events, 1, "1"));
	ASSERT_EQ(0, set_poller(ep, SQ, -1, NVX_UVM_POLLER_MAX_IDLE_US, 4, 0));
	ASSERT_EQ(0, answer(ep, 33));
	trace_events_enable(dir, events, 1, "0");
	text = read_file(path, 8 << 20);
	ASSERT_NE(NULL, text);
	rank = msg_in_rank(text, b->vm_id, &total);
	EXPECT_EQ(33U, total) TH_LOG("%s", text);
	EXPECT_EQ(4, rank) TH_LOG("%s", text);
	free(text);
	for (i = 0; i < 32; i++)
		EXPECT_EQ(i, complete_tag(a));
	EXPECT_EQ(100, complete_tag(b));
}

#define NR_QUIET	1000
#define FLOOD_ENTRIES	NVX_UVM_MAX_ENTRIES

struct flooder {
	struct bare *b;
	uint32_t dst;		/* a VM-to-VM IPC: refused (-EPERM) at once */
	int flooding;		/* 0: only the thread's own wake-ups */
	int stop;
	int bad;		/* a completion other than -EPERM */
	uint64_t answered;
};

/*
 * While told to, keep a bare VM's SQ nearly full of messages the kernel
 * answers itself: the poller always finds more than its budget there.
 * The ring is written once; then every 200 us the thread consumes what
 * was answered and publishes as many entries again (the kernel only
 * reads the SQ, so the old entries are new again). It shares CPU 0 with
 * the quiet VM's system side and wakes as often whether it floods or
 * not, so that the solo value is measured with the same wake-ups.
 */
static void *flood(void *arg)
{
	struct flooder *f = arg;
	struct bare *b = f->b;
	struct nvx_uvm_msg m;
	uint32_t i, n;

	msg_init(&m, NVX_UVM_MSG_IPC, 0);
	m.dst = f->dst;
	for (i = 0; i < b->sq_n; i++)
		b->sq[i] = m;
	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		usleep(200);
		n = __atomic_load_n(&b->ctrl->cq_prod, __ATOMIC_ACQUIRE) -
		    b->cq_cons;
		if (n) {
			m = b->cq[(b->cq_cons + n - 1) & (b->cq_n - 1)];
			if (m.status != -EPERM)
				f->bad = m.status ? m.status : -EPROTO;
			f->answered += n;
			b->cq_cons += n;
			__atomic_store_n(&b->ctrl->cq_cons, b->cq_cons,
					 __ATOMIC_RELEASE);
		}
		if (!__atomic_load_n(&f->flooding, __ATOMIC_ACQUIRE))
			continue;
		/* every answer is in the CQ until consumed: stay below it */
		b->sq_prod = b->cq_cons + b->cq_n - 16;
		__atomic_store_n(&b->ctrl->sq_prod, b->sq_prod,
				 __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * @n round trips of the quiet VM @b, one at a time: publish (no
 * doorbell), a blocking RECV, REPLY, the completion; their times in ns,
 * sorted, into @ns.
 */
static int quiet_pings(int ep, struct bare *b, unsigned int n, uint64_t *ns)
{
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	unsigned int i;
	uint64_t t0;
	int ret;

	for (i = 0; i < n; i++) {
		t0 = nvx_now_ns();
		publish_ipc(b, i);
		memset(&r, 0, sizeof(r));
		ret = nvx_ioctl(ep, NVX_UVM_EP_IOC_RECV, &r);
		if (ret)
			return ret;
		if (r.msg.src_vm != b->vm_id || r.msg.tag != i)
			return -EPROTO;
		ret = reply_ok(ep, &r);
		if (ret)
			return ret;
		/* REPLY wrote the completion before it returned */
		if (bare_complete(b, &m))
			return -ENOMSG;
		if (m.status || m.tag != i)
			return -EPROTO;
		ns[i] = nvx_now_ns() - t0;
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	return 0;
}

#define PCT(ns, p)	((ns)[NR_QUIET * (p) / 100] / 1000.0)

static void log_rtt(struct __test_metadata *_metadata, const char *what,
		    const uint64_t *ns)
{
	TH_LOG("quiet round trip, %s: p50 %.1f us, p90 %.1f, p99 %.1f",
	       what, PCT(ns, 50), PCT(ns, 90), PCT(ns, 99));
}

/*
 * A flooding VM and a quiet VM on one poller: the quiet VM's round trip
 * (p50) stays within twice its solo value. The flood is of messages the
 * kernel answers itself, so that the system side sees only the quiet
 * VM's messages and the test measures the poller's share of each pass,
 * not the order of the endpoint's queue. The poller has CPU 1 to itself
 * and never sleeps; the system side and the flooding thread share CPU 0.
 * That thread's own wake-ups cost the quiet VM about as much as the
 * flood does (on the debug kernel under TCG), so "solo" is measured with
 * the thread waking as often but not flooding; the round trip with
 * nothing else running, and the flood with a budget of the whole ring
 * (256 per pass), are logged for comparison, not asserted.
 */
TEST_F_TIMEOUT(uvm, flood_and_quiet, 300)
{
	uint64_t idle[NR_QUIET], solo[NR_QUIET], flooded[NR_QUIET];
	uint64_t whole[NR_QUIET], taken0, taken;
	/* static: a thread an ASSERT leaves running writes no dead frame */
	static struct flooder f;
	struct nvx_uvm_attach a;
	struct nvx_uvm_status st;
	int ep = self->e.ep;
	struct bare *quiet;
	pthread_t th;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	memset(&f, 0, sizeof(f));
	ASSERT_EQ(0, new_fast_vm(&self->e, ep, &quiet));
	ASSERT_EQ(0, bare_new(&self->e, &f.b));
	bare_args(f.b, ep, 0, &a);
	a.sq_entries = NVX_UVM_MAX_ENTRIES;
	a.cq_entries = NVX_UVM_MAX_ENTRIES;
	ASSERT_EQ(0, nvx_ioctl(self->e.fd, NVX_IOC_UVM_ATTACH, &a));
	f.b->chan_fd = a.fd;
	f.b->vm_id = a.vm_id;
	f.b->sq_n = a.sq_entries;
	f.b->cq_n = a.cq_entries;
	f.dst = quiet->vm_id;

	ASSERT_EQ(0, set_poller(ep, SQ, 1, NVX_UVM_POLLER_MAX_IDLE_US, 0, 0));
	ASSERT_EQ(0, nvx_pin_self(0));
	ASSERT_EQ(0, quiet_pings(ep, quiet, NR_QUIET / 10, idle));
	ASSERT_EQ(0, quiet_pings(ep, quiet, NR_QUIET, idle));
	/* the thread inherits CPU 0 */
	ASSERT_EQ(0, pthread_create(&th, NULL, flood, &f));
	ASSERT_EQ(0, quiet_pings(ep, quiet, NR_QUIET, solo));

	__atomic_store_n(&f.flooding, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&f.answered, __ATOMIC_RELAXED) < 1000)
		usleep(1000);
	ASSERT_EQ(0, chan_status(f.b->chan_fd, &st));
	taken0 = st.polled;
	ASSERT_EQ(0, quiet_pings(ep, quiet, NR_QUIET, flooded));
	ASSERT_EQ(0, chan_status(f.b->chan_fd, &st));
	taken = st.polled - taken0;

	/* the same with the whole ring per VM per pass (CPU 1: unpinned) */
	nvx_unpin_self();
	ASSERT_EQ(0, set_poller(ep, SQ, 1, NVX_UVM_POLLER_MAX_IDLE_US,
				NVX_UVM_MAX_ENTRIES, 0));
	ASSERT_EQ(0, nvx_pin_self(0));
	ASSERT_EQ(0, quiet_pings(ep, quiet, NR_QUIET, whole));
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	nvx_unpin_self();

	log_rtt(_metadata, "nothing else", idle);
	log_rtt(_metadata, "solo", solo);
	log_rtt(_metadata, "flooded", flooded);
	log_rtt(_metadata, "flooded, budget 256", whole);
	TH_LOG("flood entries taken during the flooded pings: %llu (%.1f per round trip)",
	       (unsigned long long)taken, (double)taken / NR_QUIET);
	TH_LOG("flood entries answered by the kernel: %llu",
	       (unsigned long long)f.answered);
	EXPECT_EQ(0, f.bad);
	/* the flood was real: more than a budget per quiet round trip */
	EXPECT_LE((uint64_t)NVX_UVM_POLLER_DEF_BUDGET * NR_QUIET, taken);
	ASSERT_EQ(0, chan_status(f.b->chan_fd, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, st.reason);
	EXPECT_EQ(st.msgs_in, st.denied);
	EXPECT_GE(2 * solo[NR_QUIET / 2], flooded[NR_QUIET / 2]);
}

struct scribbler {
	struct bare *b[4];
	int stop;
	uint64_t published;
};

/* Publish into every VM as fast as credits allow, until told to stop. */
static void *scribble(void *arg)
{
	struct scribbler *s = arg;
	struct nvx_uvm_msg m;
	uint32_t tag = 0;
	int i;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < 4; i++) {
			struct bare *b = s->b[i];

			while (!bare_complete(b, &m))
				;
			if (b->sq_prod - b->cq_cons >= b->cq_n / 2)
				continue;
			publish_ipc(b, tag++);
			s->published++;
		}
	}
	return NULL;
}

/*
 * Channels and then the endpoint closed while the poller scans VMs that
 * keep publishing: nothing hangs, the thread ends, the grants come back
 * (the teardown checks them).
 */
ABI_TEST(close_while_it_scans)
{
	struct nvx_uvm_endpoint epa = { .flags = NVX_UVM_EP_CLOEXEC,
					.max_vms = 8 };
	struct scribbler s = { 0 };
	struct nvx_uvm_recv r;
	pthread_t th;
	long long pid;
	int ep, i;
	uint64_t end;

	ASSERT_EQ(0, nvx_ioctl(self->e.fd, NVX_IOC_UVM_ENDPOINT, &epa));
	ep = epa.fd;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, new_fast_vm(&self->e, ep, &s.b[i]));
	ASSERT_EQ(0, set_poller(ep, SQ, -1, NVX_UVM_POLLER_MAX_IDLE_US, 1, 0));
	pid = fdinfo_num(ep, "poller_pid");
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, pthread_create(&th, NULL, scribble, &s));
	end = now_ms() + 500;
	while (now_ms() < end) {
		if (recv_nb(ep, &r))
			continue;
		if (r.cookie)
			reply_ok(ep, &r);
	}
	EXPECT_LT(0, fdinfo_num(ep, "poller_taken"));
	/* two channels go while the thread still publishes into them */
	close(s.b[0]->chan_fd);
	s.b[0]->chan_fd = -1;
	close(s.b[1]->chan_fd);
	s.b[1]->chan_fd = -1;
	usleep(100 * 1000);
	close(ep);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TH_LOG("%llu entries published", (unsigned long long)s.published);
	EXPECT_LT(0U, s.published);
	EXPECT_EQ(0, wait_until(pid_gone, pid, NULL, SHORT_MS, 1000));
	for (i = 0; i < 4; i++)
		bare_free(&self->e, s.b[i]);
}

struct late_post {
	struct bare *b;
	unsigned int ms;
	int ready;
};

static void *post_late(void *arg)
{
	struct late_post *l = arg;
	struct nvx_uvm_msg m;

	__atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
	usleep(l->ms * 1000);
	msg_init(&m, NVX_UVM_MSG_IPC, 9);
	bare_post(l->b, &m);
	return NULL;
}

static void *kick_late(void *arg)
{
	usleep(100 * 1000);
	pthread_kill(*(pthread_t *)arg, KICK_SIG);
	return NULL;
}

/*
 * A blocking RECV (on CPU 0) of the message a thread made on CPU 1 posts
 * 20 ms later, so that nothing else wants the receiver's CPU meanwhile.
 */
static int recv_late(int ep, struct bare *b, struct nvx_uvm_recv *r)
{
	struct late_post l = { .b = b, .ms = 20 };
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t th;
	int ret;

	memset(r, 0, sizeof(*r));
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	if (pthread_attr_init(&attr) ||
	    pthread_attr_setaffinity_np(&attr, sizeof(set), &set))
		return -EINVAL;
	ret = pthread_create(&th, &attr, post_late, &l);
	pthread_attr_destroy(&attr);
	if (ret)
		return -ret;
	while (!__atomic_load_n(&l.ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	ret = nvx_ioctl(ep, NVX_UVM_EP_IOC_RECV, r);
	pthread_join(th, NULL);
	if (ret)
		return ret;
	ret = reply_ok(ep, r);
	if (ret)
		return ret;
	return complete_tag(b) == 9 ? 0 : -EPROTO;
}

/*
 * RECV busy polling: a blocking RECV spins for what comes within
 * recv_busy_us (busy_hits counts it; the spin gives way when another
 * task needs the CPU, so of ten tries at least one must spin to the
 * end, and without busy polling none counts); with nothing coming, a
 * signal ends the spin at once (not after its second).
 */
ABI_TEST(recv_busy_poll)
{
	pthread_t self_th = pthread_self(), th;
	struct nvx_uvm_recv r;
	int ep = self->e.ep, i;
	struct bare *b;
	uint64_t t0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, bare_new(&self->e, &b));
	ASSERT_EQ(0, bare_attach(&self->e, b, ep, NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, nvx_pin_self(0));
	ASSERT_EQ(0, recv_late(ep, b, &r));
	EXPECT_EQ(0, fdinfo_num(ep, "busy_hits"));

	ASSERT_EQ(0, set_poller(ep, 0, -1, 0, 0, NVX_UVM_POLLER_MAX_BUSY_US));
	for (i = 0; i < 10 && fdinfo_num(ep, "busy_hits") < 1; i++)
		ASSERT_EQ(0, recv_late(ep, b, &r));
	EXPECT_LE(1, fdinfo_num(ep, "busy_hits"));
	TH_LOG("busy hits: %lld of %d", fdinfo_num(ep, "busy_hits"), i);

	ASSERT_EQ(0, pthread_create(&th, NULL, kick_late, &self_th));
	memset(&r, 0, sizeof(r));
	t0 = now_ms();
	EXPECT_EQ(-EINTR, nvx_ioctl(ep, NVX_UVM_EP_IOC_RECV, &r));
	EXPECT_GT(600ULL, now_ms() - t0);
	pthread_join(th, NULL);
	nvx_unpin_self();
}

/* Launch "test ARGS..." on a polled endpoint; returns the VMM. */
static struct vmm *polled_guest(struct __test_metadata *_metadata,
				struct env *e, struct server *sv,
				const char *mode, const char *a1,
				const char *a2)
{
	struct vmm *v;

	if (server_init(sv, e->ep, e->wake, true))
		return NULL;
	v = vmm_new(e);
	if (!v)
		return NULL;
	if (vmm_launch(e, v, e->ep, 0, "test", mode, a1, a2, NULL)) {
		TH_LOG("%s", vmm_why(v));
		return NULL;
	}
	return v;
}

/*
 * 100,000 pings, one in flight, with the poller on: every reply checked
 * by the guest, and port-I/O exits (every doorbell is one) at most 1 %
 * of the messages. The system side and the poller share CPU 1, so that
 * the vCPU's thread has CPU 0 to itself (each preemption of it is a VM
 * exit, which this test does not count but logs).
 */
TEST_F_TIMEOUT(uvm, pings_without_doorbells, 600)
{
	struct env *e = &self->e;
	struct nvx_uvm_status st;
	struct server sv;
	int64_t io, exits;
	struct vmm *v;
	int cpu = -1;
	char ns[16];
	uint64_t t0;

	/* CPU 1 must be in our mask when we ask for it */
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		cpu = 1;
	ASSERT_EQ(0, set_poller(e->ep, SQ, cpu, 100000, 0, 0));
	/* the VMM's thread is made on CPU 0 (it inherits our mask) */
	if (cpu == 1 && nvx_pin_self(0))
		cpu = -1;
	snprintf(ns, sizeof(ns), "%u", NR_PINGS);
	t0 = now_ms();
	ASSERT_NE(NULL, v = polled_guest(_metadata, e, &sv, "ping", ns, "1"));
	if (cpu == 1)
		ASSERT_EQ(0, nvx_pin_self(1));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, 4 * DEADLINE_MS))
		TH_LOG("%llu messages served", (unsigned long long)sv.msgs);
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status)
		TH_LOG("10: reply out of order, 11: wrong payload, 12: error status");
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	io = nvx_uvm_kvm_stat(v->vm.stats_fd, "io_exits");
	exits = nvx_uvm_kvm_stat(v->vm.stats_fd, "exits");
	ASSERT_LE(0, io);
	EXPECT_LE((uint64_t)NR_PINGS, st.msgs_in);
	EXPECT_EQ(st.msgs_in, st.msgs_out);
	EXPECT_GE(st.msgs_in / 100, (uint64_t)io)
		TH_LOG("%lld port-I/O exits for %llu messages", (long long)io,
		       (unsigned long long)st.msgs_in);
	EXPECT_GE(st.msgs_in / 100, st.doorbells);
	EXPECT_LE(st.msgs_in - st.msgs_in / 100, st.polled);
	TH_LOG("%u pings: %llu ms, %llu polled, %llu doorbells", NR_PINGS,
	       (unsigned long long)(now_ms() - t0),
	       (unsigned long long)st.polled,
	       (unsigned long long)st.doorbells);
	TH_LOG("%lld io exits, %lld exits, %llu irqs; poller: %lld sleeps, %lld ms CPU",
	       (long long)io, (long long)exits, (unsigned long long)st.irqs,
	       fdinfo_num(e->ep, "poller_sleeps"),
	       fdinfo_num(e->ep, "poller_runtime_ns") / 1000000);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
	nvx_unpin_self();
}

/*
 * A guest pausing 0..2000 us before each ping, a poller that sleeps
 * after 1000 us without work (counted from the last entry it took, so
 * the reply's round trip comes on top of the pause): the guest keeps
 * publishing as the poller decides to sleep. 10,000 pings, none lost
 * (the guest checks each, and a lost one would hang it), both ways of
 * taking entries used many times.
 */
UVM_TEST(sleep_race_loses_nothing)
{
	struct env *e = &self->e;
	struct nvx_uvm_status st;
	long long sleeps, wakeups;
	struct server sv;
	struct vmm *v;
	char ns[16];
	uint64_t t0;

	ASSERT_EQ(0, set_poller(e->ep, SQ, -1, 1000, 0, 0));
	snprintf(ns, sizeof(ns), "%u", NR_GAPS);
	t0 = now_ms();
	ASSERT_NE(NULL, v = polled_guest(_metadata, e, &sv, "ping-gap", ns,
					 "2000"));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, 2 * DEADLINE_MS))
		TH_LOG("%llu messages served", (unsigned long long)sv.msgs);
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	sleeps = fdinfo_num(e->ep, "poller_sleeps");
	wakeups = fdinfo_num(e->ep, "poller_wakeups");
	EXPECT_LE((uint64_t)NR_GAPS, st.msgs_in);
	EXPECT_EQ(st.msgs_in, st.msgs_out);
	EXPECT_EQ(0U, st.in_flight);
	EXPECT_LE(100U, st.doorbells);
	EXPECT_LE(100U, st.polled);
	EXPECT_LE(100, sleeps);
	TH_LOG("%u pings with pauses: %llu ms, %llu polled, %llu doorbells",
	       NR_GAPS, (unsigned long long)(now_ms() - t0),
	       (unsigned long long)st.polled,
	       (unsigned long long)st.doorbells);
	TH_LOG("poller: %lld sleeps, %lld wake-ups", sleeps, wakeups);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

static struct run run;

/*
 * nvxtool uvm run --poll: the endpoint of the command's VM has a poller,
 * and --stats shows that it took guest requests.
 */
UVM_TEST(nvxtool_run_poll)
{
	unsigned long long doorbells = 0, polled = 0;
	const char *p;
	int n;

	nvxtool(&run, "uvm", "run", "--poll", "--stats", "test", "--",
		"ping", "2000", "1", NULL);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("%s: %s", run.cmd, run.err);
	EXPECT_EQ(0, WEXITSTATUS(run.status)) TH_LOG("%s", run.err);
	p = strstr(run.err, "doorbells ");
	ASSERT_NE(NULL, p) TH_LOG("%s", run.err);
	n = sscanf(p, "doorbells %llu, polled %llu", &doorbells, &polled);
	ASSERT_EQ(2, n) TH_LOG("%s", run.err);
	/*
	 * The default idle time is 2 ms: a system side later than that
	 * (the debug kernel's round trip is about 2 ms) lets the poller
	 * sleep, and the guest rings. In a whole-suite run 880 of 2,001
	 * were polled. Without --poll none would be.
	 */
	EXPECT_LT(0ULL, polled) TH_LOG("%s", run.err);
	EXPECT_LE(2000ULL, polled + doorbells) TH_LOG("%s", run.err);
}

TEST_HARNESS_MAIN
