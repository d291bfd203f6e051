// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": endpoints as tenants of their own.
 *
 * VM ids are an endpoint's own: two fresh endpoints both have a VM 1.
 * One endpoint's system process never receives, counts, answers or
 * sets the policy of another's VMs, VM-to-VM messages stay inside
 * their endpoint, and a tenant whose VM breaks its ring (or whose
 * system process goes away) does not disturb another one's traffic.
 */
#include "sys_fixture.h"

#define TAG_A	0xa000U
#define TAG_B	0xb000U

/* Two fresh endpoints, each with a VM: both are VM 1. */
SYS_TEST(vm_ids_per_endpoint)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct bare *a, *b, *a2, *b2;
	char why[256];
	int ep2;

	ep2 = sys_ep(_metadata, e, &self->eps, 0);
	EXPECT_NE(e->ep_id, self->eps.id[0]);
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a));
	ASSERT_EQ(0, sys_bare_up(e, ep2, &b));
	EXPECT_EQ(1U, a->vm_id);
	EXPECT_EQ(1U, b->vm_id);
	EXPECT_EQ(1U, a->ctrl->vm_id);
	EXPECT_EQ(1U, b->ctrl->vm_id);
	ASSERT_EQ(0, chan_status(a->chan_fd, &cs));
	EXPECT_EQ(1U, cs.vm_id);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(1U, cs.vm_id);

	/* a second VM of each: another id in its endpoint */
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a2));
	ASSERT_EQ(0, sys_bare_up(e, ep2, &b2));
	EXPECT_NE(a->vm_id, a2->vm_id);
	EXPECT_NE(b->vm_id, b2->vm_id);
	EXPECT_NE(0U, a2->vm_id);
	EXPECT_NE(0U, b2->vm_id);

	/* each VM 1 is served by its own endpoint, as VM 1 */
	EXPECT_EQ(0, sys_exchange(a, e->ep, TAG_A + 1, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(0, sys_exchange(b, ep2, TAG_B + 1, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(0, sys_exchange(a2, e->ep, TAG_A + 2, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(0, sys_exchange(b2, ep2, TAG_B + 2, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(2U, st.nr_vms);
	EXPECT_EQ(2U, st.attached);
	EXPECT_EQ(2U, st.msgs_in);
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(2U, st.nr_vms);
	EXPECT_EQ(2U, st.attached);
	EXPECT_EQ(2U, st.msgs_in);
}

/*
 * Both VMs are VM 1: what one sends reaches its own endpoint only,
 * and the other endpoint's counters and policy do not move.
 */
SYS_TEST(recv_and_stats_isolated)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats s0, s1, st;
	struct nvx_uvm_policy p;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *a, *b;
	int ep2, i;

	ep2 = sys_ep(_metadata, e, &self->eps, 0);
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a));
	ASSERT_EQ(0, sys_bare_up(e, ep2, &b));
	ASSERT_EQ(a->vm_id, b->vm_id);
	ASSERT_EQ(0, ep_stats(ep2, &s0));

	/* a's traffic: queued on e.ep only */
	for (i = 0; i < 3; i++) {
		sys_msg(&m, NVX_UVM_MSG_IPC, TAG_A + i, 0, TAG_A + i);
		ASSERT_EQ(0, bare_post(a, &m));
	}
	EXPECT_NOTHING_TO_RECV(ep2);
	ASSERT_EQ(0, ep_stats(ep2, &s1));
	EXPECT_EQ(0, memcmp(&s0, &s1, sizeof(s0)));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, recv_nb(e->ep, &r));
		EXPECT_EQ(TAG_A + i, r.msg.tag);
		EXPECT_EQ(a->vm_id, r.msg.src_vm);
		ASSERT_EQ(0, sys_reply(e->ep, r.cookie, NVX_UVM_MSG_IPC, 0, i));
		ASSERT_EQ(0, bare_complete(a, &m));
		EXPECT_EQ(TAG_A + i, m.tag);
	}
	EXPECT_EQ(0, sys_cq_pending(b));
	ASSERT_EQ(0, ep_stats(ep2, &s1));
	EXPECT_EQ(0, memcmp(&s0, &s1, sizeof(s0)));

	/* b's: on ep2 only */
	for (i = 0; i < 2; i++) {
		sys_msg(&m, NVX_UVM_MSG_IPC, TAG_B + i, 0, TAG_B + i);
		ASSERT_EQ(0, bare_post(b, &m));
	}
	EXPECT_NOTHING_TO_RECV(e->ep);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, recv_nb(ep2, &r));
		EXPECT_EQ(TAG_B + i, r.msg.tag);
		ASSERT_EQ(0, sys_reply(ep2, r.cookie, NVX_UVM_MSG_IPC, 0, i));
		ASSERT_EQ(0, bare_complete(b, &m));
		EXPECT_EQ(TAG_B + i, m.tag);
	}
	EXPECT_EQ(0, sys_cq_pending(a));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(3U, st.msgs_in);
	EXPECT_EQ(3U, st.msgs_out);
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(2U, st.msgs_in);
	EXPECT_EQ(2U, st.msgs_out);

	/* a policy is its endpoint's: e.ep denies IPC, ep2 does not notice */
	ASSERT_EQ(0, ep_stats(ep2, &s0));
	ASSERT_EQ(0, sys_allow(e->ep, 0, 0, 0));
	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_A + 9, 0, TAG_A + 9);
	expect_refused(_metadata, a, e->ep, &m, -EPERM);
	ASSERT_EQ(0, ep_stats(ep2, &s1));
	EXPECT_EQ(0, memcmp(&s0, &s1, sizeof(s0)));
	ASSERT_EQ(0, sys_policy_get(ep2, 0, &p));
	EXPECT_EQ(NVX_UVM_POLICY_ALL, p.allow);
	EXPECT_EQ(0U, p.flags);
	ASSERT_EQ(0, sys_policy_get(ep2, b->vm_id, &p));
	EXPECT_EQ(NVX_UVM_POLICY_ALL, p.allow);
	EXPECT_EQ(0U, p.flags);
	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_B + 9, 0, TAG_B + 9);
	expect_served(_metadata, b, ep2, &m, NULL);
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(0U, st.denied);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.denied);
}

/*
 * A cookie and a VM id are their endpoint's: on another endpoint an id
 * it does not have is -ESRCH (REPLY, SET_POLICY, GET_POLICY); an id it
 * has names its own VM, which has no such request (-ENOENT). The
 * requests stay answerable on their own endpoint.
 */
SYS_TEST(cookies_and_ids_isolated)
{
	struct env *e = &self->e;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_policy p;
	struct nvx_uvm_recv r1, r2, r;
	struct nvx_uvm_msg m;
	struct bare *a1, *a2, *b;
	int ep2;

	ep2 = sys_ep(_metadata, e, &self->eps, 0);
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a1));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a2));
	ASSERT_EQ(0, sys_bare_up(e, ep2, &b));
	ASSERT_EQ(a1->vm_id, b->vm_id);
	ASSERT_NE(a2->vm_id, b->vm_id);

	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_A + 1, 0, TAG_A + 1);
	ASSERT_EQ(0, bare_post(a1, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r1));
	m.tag = TAG_A + 2;
	ASSERT_EQ(0, bare_post(a2, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r2));
	EXPECT_EQ(a2->vm_id, r2.cookie >> 32);

	/* a2's id is no VM of ep2 */
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r2.cookie;
	rep.msg.type = NVX_UVM_MSG_IPC;
	EXPECT_EQ(-ESRCH, nvx_ioctl(ep2, NVX_UVM_EP_IOC_REPLY, &rep));
	sys_policy_init(&p, a2->vm_id, 0, 0);
	EXPECT_EQ(-ESRCH, sys_policy_set(ep2, &p));
	EXPECT_EQ(-ESRCH, sys_policy_get(ep2, a2->vm_id, &p));
	sys_policy_init(&p, a2->vm_id, 0, NVX_UVM_POLICY_RESET);
	EXPECT_EQ(-ESRCH, sys_policy_set(ep2, &p));
	/* a1's id is ep2's VM b, which has no request taken */
	rep.cookie = r1.cookie;
	EXPECT_EQ(-ENOENT, nvx_ioctl(ep2, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(0, sys_cq_pending(a1));
	EXPECT_EQ(0, sys_cq_pending(a2));
	EXPECT_EQ(0, sys_cq_pending(b));

	/* a policy for ep2's VM 1 is b's, not a1's */
	ASSERT_EQ(0, sys_allow(ep2, b->vm_id, 0, 0));
	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_A + 3, 0, TAG_A + 3);
	ASSERT_EQ(0, bare_post(a1, &m));
	EXPECT_EQ(0, sys_cq_pending(a1)) TH_LOG("ep2's policy refused a1's message");
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(TAG_A + 3, r.msg.tag);
	ASSERT_EQ(0, sys_reply(e->ep, r.cookie, NVX_UVM_MSG_IPC, 0, 3));
	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_B + 3, 0, TAG_B + 3);
	expect_refused(_metadata, b, ep2, &m, -EPERM);

	/* the requests are still answerable where they came from */
	ASSERT_EQ(0, sys_reply(e->ep, r1.cookie, NVX_UVM_MSG_IPC, 0, 1));
	ASSERT_EQ(0, sys_reply(e->ep, r2.cookie, NVX_UVM_MSG_IPC, 0, 2));
	ASSERT_EQ(0, bare_complete(a1, &m));
	EXPECT_EQ(TAG_A + 3, m.tag);
	ASSERT_EQ(0, bare_complete(a1, &m));
	EXPECT_EQ(TAG_A + 1, m.tag);
	EXPECT_TRUE(sys_payload_is(m.payload, 1));
	ASSERT_EQ(0, bare_complete(a2, &m));
	EXPECT_EQ(TAG_A + 2, m.tag);
	EXPECT_TRUE(sys_payload_is(m.payload, 2));
}

/*
 * VM-to-VM stays inside an endpoint: a VM of e.ep sending to "VM 1"
 * reaches e.ep's VM 1, never ep2's, though both wait with a RECV.
 */
SYS_TEST(vm2vm_stays_in_endpoint)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_msg m, c;
	struct bare *a1, *a2, *b, *o;
	int ep2;

	ep2 = sys_ep(_metadata, e, &self->eps, 0);
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL,
			       NVX_UVM_POLICY_VM2VM));
	ASSERT_EQ(0, sys_allow(ep2, 0, NVX_UVM_POLICY_ALL,
			       NVX_UVM_POLICY_VM2VM));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a1));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a2));
	ASSERT_EQ(0, sys_bare_up(e, ep2, &b));
	ASSERT_EQ(a1->vm_id, b->vm_id);

	sys_msg(&m, NVX_UVM_MSG_RECV, TAG_B + 1, 0, TAG_B + 1);
	ASSERT_EQ(0, bare_post(b, &m));
	sys_msg(&m, NVX_UVM_MSG_RECV, TAG_A + 1, 0, TAG_A + 1);
	ASSERT_EQ(0, bare_post(a1, &m));
	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_A + 2, a1->vm_id, TAG_A + 2);
	ASSERT_EQ(0, bare_post(a2, &m));

	get_completion(_metadata, a1, &c);
	EXPECT_EQ(NVX_UVM_MSG_RECV, c.type);
	EXPECT_EQ(TAG_A + 1, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(a2->vm_id, c.src_vm);
	EXPECT_TRUE(sys_payload_is(c.payload, TAG_A + 2));
	get_completion(_metadata, a2, &c);
	EXPECT_EQ(TAG_A + 2, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_TRUE(sys_payload_is(c.payload, TAG_A + 1));
	usleep(20000);
	EXPECT_EQ(0, sys_cq_pending(b));

	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.vm2vm);
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(0U, st.vm2vm);

	/* ep2's VM 1 takes its own endpoint's message */
	ASSERT_EQ(0, sys_bare_up(e, ep2, &o));
	sys_msg(&m, NVX_UVM_MSG_IPC, TAG_B + 2, b->vm_id, TAG_B + 2);
	ASSERT_EQ(0, bare_post(o, &m));
	get_completion(_metadata, b, &c);
	EXPECT_EQ(NVX_UVM_MSG_RECV, c.type);
	EXPECT_EQ(TAG_B + 1, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(o->vm_id, c.src_vm);
	EXPECT_TRUE(sys_payload_is(c.payload, TAG_B + 2));
	get_completion(_metadata, o, &c);
	EXPECT_EQ(TAG_B + 2, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(0, sys_cq_pending(a1));
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(1U, st.vm2vm);
}

/* One tenant's guest and system process in a thread: exchange, checked. */
struct tenant {
	struct bare *b;
	int ep;
	int stop;		/* atomic */
	uint64_t rounds;	/* atomic */
	int err;		/* atomic */
	char why[256];
	pthread_t thread;
};

static void *tenant_main(void *arg)
{
	struct tenant *t = arg;
	uint64_t n = 0;
	int ret;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		ret = sys_exchange(t->b, t->ep, 0xb0000000U | (uint32_t)n,
				   t->why, sizeof(t->why));
		if (ret) {
			__atomic_store_n(&t->err, ret, __ATOMIC_RELEASE);
			break;
		}
		__atomic_store_n(&t->rounds, ++n, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Wait until @t did @n rounds or failed: whether it did them. */
static bool tenant_wait(struct tenant *t, uint64_t n)
{
	uint64_t end = now_ms() + 60000;

	while (__atomic_load_n(&t->rounds, __ATOMIC_ACQUIRE) < n) {
		if (__atomic_load_n(&t->err, __ATOMIC_ACQUIRE) ||
		    now_ms() >= end)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * Tenant B exchanges messages in a thread of its own while tenant A's
 * VM breaks its ring (sq_prod out of range: stopped, NVX_UVM_ERR_RING),
 * is closed, and then A's system process goes away with another VM
 * attached (NVX_UVM_ERR_ENDPOINT). B notices nothing: every exchange
 * succeeds, no notice, its VM runs.
 */
SYS_TEST(stopped_tenant_isolated)
{
	struct env *e = &self->e;
	struct tenant t = { 0 };
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *a, *a2, *b;
	uint64_t mid = 0, rounds;
	uint32_t id, cons;
	char why[256];
	int ep2;

	ep2 = sys_ep(_metadata, e, &self->eps, 0);
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &a2));
	ASSERT_EQ(0, sys_bare_up(e, ep2, &b));
	ASSERT_EQ(0, sys_exchange(a, e->ep, TAG_A, why, sizeof(why)))
		TH_LOG("%s", why);
	t.b = b;
	t.ep = ep2;
	ASSERT_EQ(0, pthread_create(&t.thread, NULL, tenant_main, &t));

	/* no ASSERT until the thread is joined */
	if (tenant_wait(&t, 200)) {
		/* a request of a queued, then the bad ring */
		sys_msg(&m, NVX_UVM_MSG_IPC, TAG_A + 1, 0, TAG_A + 1);
		EXPECT_EQ(0, bare_post(a, &m));
		/* sq_cons + sq_n + 1 published: more than the ring holds */
		cons = a->ctrl->sq_cons;
		a->sq_prod = cons + a->sq_n;	/* bare_post() adds one */
		m.tag = TAG_A + 2;
		EXPECT_EQ(0, bare_post(a, &m));
		EXPECT_EQ(0, chan_status(a->chan_fd, &cs));
		EXPECT_EQ((uint32_t)NVX_UVM_ERR_RING, cs.reason);
		EXPECT_EQ(cons + a->sq_n + 1, cs.detail);
		id = a->vm_id;
		bare_free(e, a);
		EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_ERR_RING, &r))
			TH_LOG("type %u VM %u status %d", r.msg.type,
			       r.msg.src_vm, r.msg.status);
		EXPECT_NOTHING_TO_RECV(e->ep);

		/* tenant A's system process goes */
		close(e->ep);
		e->ep = -1;
		EXPECT_EQ(0, chan_status(a2->chan_fd, &cs));
		EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, cs.reason);
		EXPECT_EQ(e->ep_id, cs.detail);

		mid = __atomic_load_n(&t.rounds, __ATOMIC_ACQUIRE);
		tenant_wait(&t, mid + 200);
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t.thread, NULL);

	ASSERT_EQ(0, t.err) TH_LOG("tenant B: %s", t.why);
	rounds = t.rounds;
	ASSERT_LE(200U, mid) TH_LOG("tenant B: %llu rounds",
				    (unsigned long long)rounds);
	ASSERT_LE(mid + 200, rounds);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(rounds, cs.msgs_in);
	EXPECT_EQ(rounds, cs.msgs_out);
	EXPECT_EQ(0U, cs.in_flight);
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(0U, st.gone);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(rounds, st.msgs_in);
	EXPECT_EQ(rounds, st.msgs_out);
	EXPECT_NOTHING_TO_RECV(ep2);
	/* and it goes on */
	EXPECT_EQ(0, sys_exchange(b, ep2, TAG_B, why, sizeof(why)))
		TH_LOG("%s", why);
}

TEST_HARNESS_MAIN
