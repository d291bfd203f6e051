// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": the endpoint's message policy.
 *
 * SET_POLICY and GET_POLICY and their arguments; a type that is not
 * allowed answered -EPERM by the kernel at the doorbell, never seen by
 * the system process; the limits (bulk, requests in flight, rate) as
 * error completions and, with NVX_UVM_POLICY_STOP, as stops; a VM's own
 * policy over the endpoint's; the policy changed while a guest floods
 * the endpoint.
 */
#include "sys_fixture.h"

#define ALL_BUT(t)	(NVX_UVM_POLICY_ALL & ~TYPE_BIT(t))

/* GET_POLICY of @vm_id on @ep must say @want (OWN included). */
static void expect_policy(struct __test_metadata *_metadata, int ep,
			  uint32_t vm_id, const struct nvx_uvm_policy *want)
{
	struct nvx_uvm_policy g;

	ASSERT_EQ(0, sys_policy_get(ep, vm_id, &g)) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(want->flags, g.flags) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(vm_id, g.vm_id);
	EXPECT_EQ(want->allow, g.allow) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(want->max_bulk, g.max_bulk) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(want->max_in_flight, g.max_in_flight) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(want->rate, g.rate) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(want->burst, g.burst) TH_LOG("vm_id %u", vm_id);
	EXPECT_EQ(0U, g.reserved[0] | g.reserved[1]);
}

/* Each bad argument of SET_POLICY alone, and the bounds. */
SYS_TEST(set_policy_args)
{
	struct env *e = &self->e;
	struct nvx_uvm_policy p, def;
	char buf[sizeof(p)];
	struct nvx_uvm_recv r;
	struct bare *b;
	uint32_t id;

	/* what a new endpoint has: every type, no limit, no VM-to-VM */
	sys_policy_init(&def, 0, NVX_UVM_POLICY_ALL, 0);
	expect_policy(_metadata, e->ep, 0, &def);

#define BAD(field, value, err) do {					\
	sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, 0);			\
	p.field = value;						\
	EXPECT_EQ(err, sys_policy_set(e->ep, &p))			\
		TH_LOG("SET_POLICY with " #field " = " #value);		\
} while (0)
	BAD(flags, 0x10, -EINVAL);
	BAD(flags, ~0u, -EINVAL);
	BAD(flags, NVX_UVM_POLICY_OWN, -EINVAL);	/* GET says it, SET does not */
	BAD(flags, NVX_UVM_POLICY_VM2VM | 0x80000000u, -EINVAL);
	BAD(reserved[0], 1, -EINVAL);
	BAD(reserved[1], 1ULL << 63, -EINVAL);
	BAD(allow, NVX_UVM_POLICY_ALL | 1, -EINVAL);	/* type 0 is none */
	BAD(allow, 1, -EINVAL);
	BAD(max_bulk, NVX_UVM_MAX_BULK + 1, -EINVAL);
	BAD(max_bulk, ~0u, -EINVAL);
	BAD(max_in_flight, NVX_UVM_MAX_ENTRIES + 1, -EINVAL);
	BAD(max_in_flight, ~0u, -EINVAL);
	BAD(rate, NVX_UVM_MAX_RATE + 1, -EINVAL);
	/* no VM is attached: no VM id is known */
	BAD(vm_id, 1, -ESRCH);
	BAD(vm_id, ~0u, -ESRCH);
#undef BAD
	EXPECT_EQ(-ESRCH, sys_policy_get(e->ep, 1, &p));
	/* none of them changed anything */
	expect_policy(_metadata, e->ep, 0, &def);

	/* the bounds themselves are fine, and so is allowing nothing */
	sys_policy_init(&p, 0, 0, 0);
	p.max_bulk = NVX_UVM_MAX_BULK;
	p.max_in_flight = NVX_UVM_MAX_ENTRIES;
	p.rate = NVX_UVM_MAX_RATE;
	p.burst = 100;
	EXPECT_EQ(0, sys_policy_set(e->ep, &p));
	expect_policy(_metadata, e->ep, 0, &p);
	EXPECT_EQ(0, sys_policy_set(e->ep, &def));
	expect_policy(_metadata, e->ep, 0, &def);

	/* the numbers are the endpoint's: a channel, /dev/nvx do not know them */
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_SET_POLICY, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_GET_POLICY, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->fd, NVX_UVM_EP_IOC_SET_POLICY, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->fd, NVX_UVM_EP_IOC_GET_POLICY, buf));

	/* an attached VM's id is known, the next one is not */
	sys_policy_init(&p, b->vm_id, NVX_UVM_POLICY_ALL, 0);
	EXPECT_EQ(0, sys_policy_set(e->ep, &p));
	p.vm_id = b->vm_id + 1;
	EXPECT_EQ(-ESRCH, sys_policy_set(e->ep, &p));
	EXPECT_EQ(-ESRCH, sys_policy_get(e->ep, b->vm_id + 1, &p));
	/* a bad argument is -EINVAL for a VM's own policy as well */
	sys_policy_init(&p, b->vm_id, NVX_UVM_POLICY_ALL | 1, 0);
	EXPECT_EQ(-EINVAL, sys_policy_set(e->ep, &p));

	/* a detached VM's id names nothing */
	id = b->vm_id;
	bare_free(e, b);
	ASSERT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));
	sys_policy_init(&p, id, NVX_UVM_POLICY_ALL, 0);
	EXPECT_EQ(-ESRCH, sys_policy_set(e->ep, &p));
	EXPECT_EQ(-ESRCH, sys_policy_get(e->ep, id, &p));
	expect_policy(_metadata, e->ep, 0, &def);
	check_ep_idle(_metadata, e->ep);
}

/*
 * GET returns what SET set: the endpoint's, a VM's own (with OWN), the
 * endpoint's for a VM without one; RESET drops a VM's own.
 */
SYS_TEST(get_returns_set)
{
	struct env *e = &self->e;
	struct nvx_uvm_policy p, q, p2, want;
	struct bare *b1, *b2;

	sys_policy_init(&p, 0, TYPE_BIT(NVX_UVM_MSG_IPC) |
			TYPE_BIT(NVX_UVM_MSG_CLOCK) |
			TYPE_BIT(NVX_UVM_MSG_GUEST_MAX),
			NVX_UVM_POLICY_VM2VM | NVX_UVM_POLICY_STOP);
	p.max_bulk = 4096;
	p.max_in_flight = 7;
	p.rate = 1000;
	p.burst = 50;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	expect_policy(_metadata, e->ep, 0, &p);

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b1));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b2));
	/* a VM without a policy of its own has the endpoint's, no OWN */
	expect_policy(_metadata, e->ep, b1->vm_id, &p);
	expect_policy(_metadata, e->ep, b2->vm_id, &p);

	/* b1's own */
	sys_policy_init(&q, b1->vm_id, NVX_UVM_POLICY_ALL, 0);
	q.max_bulk = 100;
	q.max_in_flight = 3;
	q.rate = 5;
	q.burst = 2;
	ASSERT_EQ(0, sys_policy_set(e->ep, &q));
	want = q;
	want.flags |= NVX_UVM_POLICY_OWN;
	expect_policy(_metadata, e->ep, b1->vm_id, &want);
	expect_policy(_metadata, e->ep, b2->vm_id, &p);
	expect_policy(_metadata, e->ep, 0, &p);

	/* a new endpoint policy: b1 keeps its own, b2 follows */
	sys_policy_init(&p2, 0, ALL_BUT(NVX_UVM_MSG_WRITE), 0);
	p2.max_in_flight = NVX_UVM_MAX_ENTRIES;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p2));
	expect_policy(_metadata, e->ep, 0, &p2);
	expect_policy(_metadata, e->ep, b1->vm_id, &want);
	expect_policy(_metadata, e->ep, b2->vm_id, &p2);

	/* replacing b1's own */
	q.allow = TYPE_BIT(NVX_UVM_MSG_RECV);
	q.flags = NVX_UVM_POLICY_VM2VM;
	ASSERT_EQ(0, sys_policy_set(e->ep, &q));
	want = q;
	want.flags |= NVX_UVM_POLICY_OWN;
	expect_policy(_metadata, e->ep, b1->vm_id, &want);

	/* RESET: b1 has the endpoint's again */
	sys_policy_init(&q, b1->vm_id, 0, NVX_UVM_POLICY_RESET);
	ASSERT_EQ(0, sys_policy_set(e->ep, &q));
	expect_policy(_metadata, e->ep, b1->vm_id, &p2);
	expect_policy(_metadata, e->ep, 0, &p2);
}

/*
 * A type that is not allowed: the kernel answers -EPERM at the
 * doorbell (type and tag echoed, the data never read), counted as
 * denied by the endpoint and the channel; the system process never sees
 * it. Allowed types still reach it.
 */
SYS_TEST(denied_type)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct nvx_uvm_msg m, c;
	struct nvx_uvm_sg *sg;
	struct bare *b;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL &
			       ~TYPE_BIT(NVX_UVM_MSG_CLOCK) &
			       ~TYPE_BIT(NVX_UVM_MSG_WRITE), 0));

	sys_msg(&m, NVX_UVM_MSG_CLOCK, 0x71, 0, 0x71);
	m.src_tid = 3;
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_EQ(1U, b->ctrl->sq_cons);
	/* written at the doorbell, with its credit */
	EXPECT_EQ(1U, b->ctrl->cq_prod);
	EXPECT_EQ(1U, b->ctrl->credits);
	ASSERT_EQ(0, bare_complete(b, &c));
	EXPECT_EQ(NVX_UVM_MSG_CLOCK, c.type);
	EXPECT_EQ(0x71U, c.tag);
	EXPECT_EQ(-EPERM, c.status);
	EXPECT_EQ(0U, c.bulk_len);
	EXPECT_EQ(0U, b->ctrl->credits);
	EXPECT_NOTHING_TO_RECV(e->ep);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.denied);
	EXPECT_EQ(0U, st.limited);
	EXPECT_EQ(0U, st.msgs_in);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(1U, cs.denied);
	EXPECT_EQ(0U, cs.limited);
	EXPECT_EQ(0U, cs.in_flight);
	EXPECT_EQ(0U, cs.bulk_out);

	/* a denied PUSH: its data is not read */
	sg = (struct nvx_uvm_sg *)(b->mem + SYS_SG_GPA);
	sg[0] = (struct nvx_uvm_sg){ .gpa = SYS_DATA_GPA, .len = 100 };
	sys_msg(&m, NVX_UVM_MSG_WRITE, 0x72, 0, 0x72);
	sys_msg_sg(&m, NVX_UVM_MSGF_PUSH, SYS_SG_GPA, 1);
	expect_refused(_metadata, b, e->ep, &m, -EPERM);

	/* the types allowed pass */
	sys_msg(&m, NVX_UVM_MSG_IPC, 0x73, 0, 0x73);
	expect_served(_metadata, b, e->ep, &m, NULL);
	sys_msg(&m, NVX_UVM_MSG_READ, 0x74, 0, 0x74);
	sys_msg_sg(&m, NVX_UVM_MSGF_PULL, SYS_SG_GPA, 1);
	expect_served(_metadata, b, e->ep, &m, NULL);

	/* nothing allowed: IPC is denied too */
	ASSERT_EQ(0, sys_allow(e->ep, 0, 0, 0));
	sys_msg(&m, NVX_UVM_MSG_IPC, 0x75, 0, 0x75);
	expect_refused(_metadata, b, e->ep, &m, -EPERM);
	/* everything allowed: CLOCK passes now */
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL, 0));
	sys_msg(&m, NVX_UVM_MSG_CLOCK, 0x76, 0, 0x76);
	expect_served(_metadata, b, e->ep, &m, NULL);

	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(3U, st.denied);
	EXPECT_EQ(0U, st.limited);
	EXPECT_EQ(3U, st.msgs_in);
	EXPECT_EQ(3U, st.msgs_out);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(3U, cs.denied);
	EXPECT_EQ(0U, cs.limited);
	EXPECT_EQ(0U, cs.in_flight);
	EXPECT_EQ(0U, cs.bulk_out);
}

/*
 * max_bulk: the bytes a message's segments cover, PUSH or PULL; one
 * byte over is -EMSGSIZE, counted as limited; 0 is the ABI's limit.
 */
SYS_TEST(max_bulk)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_policy p;
	struct nvx_uvm_status cs;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct nvx_uvm_sg *sg;
	struct bare *b;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, 0);
	p.max_bulk = 4096;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	sg = (struct nvx_uvm_sg *)(b->mem + SYS_SG_GPA);

	/* the limit itself, in two segments */
	sg[0] = (struct nvx_uvm_sg){ .gpa = SYS_DATA_GPA + 7, .len = 3000 };
	sg[1] = (struct nvx_uvm_sg){ .gpa = SYS_DATA_GPA + 8192, .len = 1096 };
	sys_msg(&m, NVX_UVM_MSG_WRITE, 1, 0, 1);
	sys_msg_sg(&m, NVX_UVM_MSGF_PUSH, SYS_SG_GPA, 2);
	expect_served(_metadata, b, e->ep, &m, &r);
	EXPECT_EQ(4096U, r.data_len);

	/* a byte over */
	sg[1].len = 1097;
	m.tag = 2;
	expect_refused(_metadata, b, e->ep, &m, -EMSGSIZE);
	/* room to PULL into counts the same */
	sg[0].len = 4096;
	sg[1].len = 4096;
	sys_msg(&m, NVX_UVM_MSG_READ, 3, 0, 3);
	sys_msg_sg(&m, NVX_UVM_MSGF_PULL, SYS_SG_GPA, 2);
	expect_refused(_metadata, b, e->ep, &m, -EMSGSIZE);
	m.tag = 4;
	m.sg_nr = 1;
	expect_served(_metadata, b, e->ep, &m, &r);
	EXPECT_EQ(4096U, r.data_len);
	/* no bulk is never over */
	sys_msg(&m, NVX_UVM_MSG_IPC, 5, 0, 5);
	expect_served(_metadata, b, e->ep, &m, NULL);

	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(2U, st.limited);
	EXPECT_EQ(0U, st.denied);
	EXPECT_EQ(3U, st.msgs_in);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(2U, cs.limited);
	EXPECT_EQ(0U, cs.denied);

	/* 0: no limit but NVX_UVM_MAX_BULK */
	p.max_bulk = 0;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	sg[0].len = NVX_UVM_MAX_BULK / 2;
	sg[1] = (struct nvx_uvm_sg){ .gpa = SYS_DATA2_GPA + 1,
				     .len = NVX_UVM_MAX_BULK / 2 };
	sys_msg(&m, NVX_UVM_MSG_WRITE, 6, 0, 6);
	sys_msg_sg(&m, NVX_UVM_MSGF_PUSH, SYS_SG_GPA, 2);
	expect_served(_metadata, b, e->ep, &m, &r);
	EXPECT_EQ(NVX_UVM_MAX_BULK, r.data_len);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(2U, st.limited);
}

/*
 * max_in_flight: with N requests of a VM taken and not answered, the
 * next one is -EBUSY (and never queued); an answer makes room again.
 */
SYS_TEST(max_in_flight)
{
	enum { N = 4 };
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_policy p;
	struct nvx_uvm_status cs;
	struct nvx_uvm_recv r[N + 2];
	struct nvx_uvm_msg m, c;
	struct bare *b;
	int i;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, 0);
	p.max_in_flight = N;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));

	for (i = 0; i < N; i++) {
		sys_msg(&m, NVX_UVM_MSG_IPC, i + 1, 0, i + 1);
		ASSERT_EQ(0, bare_post(b, &m));
		ASSERT_EQ(0, recv_nb(e->ep, &r[i])) TH_LOG("request %d", i + 1);
		EXPECT_EQ((uint32_t)i + 1, r[i].msg.tag);
	}
	EXPECT_EQ(0, sys_cq_pending(b));
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)N, cs.in_flight);

	/* one more: -EBUSY, not queued, nothing else changed */
	sys_msg(&m, NVX_UVM_MSG_IPC, N + 1, 0, N + 1);
	expect_refused(_metadata, b, e->ep, &m, -EBUSY);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)N, cs.in_flight);
	EXPECT_EQ(1U, cs.limited);

	/* an answer: room for exactly one more */
	ASSERT_EQ(0, sys_reply(e->ep, r[0].cookie, NVX_UVM_MSG_IPC, 0, 1));
	ASSERT_EQ(0, bare_complete(b, &c));
	EXPECT_EQ(1U, c.tag);
	EXPECT_EQ(0, c.status);
	sys_msg(&m, NVX_UVM_MSG_IPC, N + 2, 0, N + 2);
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_EQ(0, sys_cq_pending(b));
	ASSERT_EQ(0, recv_nb(e->ep, &r[N])) TH_LOG("request %d", N + 2);
	EXPECT_EQ((uint32_t)N + 2, r[N].msg.tag);
	sys_msg(&m, NVX_UVM_MSG_IPC, N + 3, 0, N + 3);
	expect_refused(_metadata, b, e->ep, &m, -EBUSY);

	for (i = 1; i <= N; i++) {
		ASSERT_EQ(0, sys_reply(e->ep, r[i].cookie, NVX_UVM_MSG_IPC, 0,
				       r[i].msg.tag));
		ASSERT_EQ(0, bare_complete(b, &c));
		EXPECT_EQ(r[i].msg.tag, c.tag);
		EXPECT_EQ(0, c.status);
	}
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(2U, st.limited);
	EXPECT_EQ(0U, st.denied);
	EXPECT_EQ((uint64_t)N + 1, st.msgs_in);
	EXPECT_EQ((uint64_t)N + 1, st.msgs_out);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(0U, cs.in_flight);
	EXPECT_EQ(2U, cs.limited);
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
}

/*
 * rate 1 per second, burst 3: three messages pass at once, the fourth
 * is -EAGAIN; the bucket refills, one a second. The bounds on the time
 * that passed make the outcome certain (else the test skips).
 */
SYS_TEST(rate)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_policy p;
	struct nvx_uvm_status cs;
	uint64_t t0, t4b, t4a, t6a;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m, c;
	struct bare *b;
	int i;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, 0);
	p.rate = 1;
	p.burst = 3;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));

	/* a new policy's bucket is full: 3 pass */
	t0 = now_ms();
	for (i = 1; i <= 3; i++) {
		sys_msg(&m, NVX_UVM_MSG_IPC, i, 0, i);
		ASSERT_EQ(0, bare_post(b, &m));
	}
	EXPECT_EQ(0, sys_cq_pending(b));
	t4b = now_ms();
	sys_msg(&m, NVX_UVM_MSG_IPC, 4, 0, 4);
	ASSERT_EQ(0, bare_post(b, &m));
	t4a = now_ms();
	if (t4a - t0 >= 900)
		SKIP(return, "4 KICKs took %llu ms: the bucket may have refilled",
		     (unsigned long long)(t4a - t0));
	ASSERT_EQ(0, bare_complete(b, &c)) TH_LOG("the fourth passed");
	EXPECT_EQ(4U, c.tag);
	EXPECT_EQ(NVX_UVM_MSG_IPC, c.type);
	EXPECT_EQ(-EAGAIN, c.status);
	for (i = 1; i <= 3; i++) {
		ASSERT_EQ(0, recv_nb(e->ep, &r));
		EXPECT_EQ((uint32_t)i, r.msg.tag);
		ASSERT_EQ(0, sys_reply(e->ep, r.cookie, NVX_UVM_MSG_IPC, 0, i));
	}

	/* over a second later there is a token, and only one */
	while (now_ms() < t4a + 1100)
		usleep(10000);
	sys_msg(&m, NVX_UVM_MSG_IPC, 5, 0, 5);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r)) TH_LOG("a second later, no token");
	EXPECT_EQ(5U, r.msg.tag);
	ASSERT_EQ(0, sys_reply(e->ep, r.cookie, NVX_UVM_MSG_IPC, 0, 5));
	/* take the four completions so far */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, bare_complete(b, &c));
		EXPECT_EQ(0, c.status);
	}
	ASSERT_EQ(0, sys_cq_pending(b));
	sys_msg(&m, NVX_UVM_MSG_IPC, 6, 0, 6);
	ASSERT_EQ(0, bare_post(b, &m));
	t6a = now_ms();
	/*
	 * The bucket held less than (t4a - t0) / 1000 tokens at the fourth
	 * message and gained less than (t6a - t4b) / 1000 since; the fifth
	 * took one.
	 */
	if (t4a - t0 + t6a - t4b < 2000) {
		ASSERT_EQ(0, bare_complete(b, &c)) TH_LOG("the sixth passed");
		EXPECT_EQ(6U, c.tag);
		EXPECT_EQ(-EAGAIN, c.status);
		EXPECT_NOTHING_TO_RECV(e->ep);
		ASSERT_EQ(0, ep_stats(e->ep, &st));
		EXPECT_EQ(2U, st.limited);
		EXPECT_EQ(4U, st.msgs_in);
		ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
		EXPECT_EQ(2U, cs.limited);
		EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	} else {
		SKIP(return, "%llu ms passed: the sixth may have had a token",
		     (unsigned long long)(t6a - t4b));
	}
}

/*
 * A debt run up under a slow rate does not outlive the policy: a new
 * policy's bucket is full (rate 1/s drained, then 100/s: the next
 * message passes).
 */
SYS_TEST(rate_raised)
{
	struct env *e = &self->e;
	struct nvx_uvm_policy p;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m, c;
	struct bare *b;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, 0);
	p.rate = 1;
	p.burst = 1;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	sys_msg(&m, NVX_UVM_MSG_IPC, 1, 0, 1);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	ASSERT_EQ(0, sys_reply(e->ep, r.cookie, NVX_UVM_MSG_IPC, 0, 1));
	ASSERT_EQ(0, bare_complete(b, &c));
	EXPECT_EQ(0, c.status);
	/* drained: the next would wait a second */
	sys_msg(&m, NVX_UVM_MSG_IPC, 2, 0, 2);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, bare_complete(b, &c));
	EXPECT_EQ(-EAGAIN, c.status);

	p.rate = 100;
	p.burst = 1;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	sys_msg(&m, NVX_UVM_MSG_IPC, 3, 0, 3);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r)) TH_LOG("the old debt still counts");
	EXPECT_EQ(3U, r.msg.tag);
	ASSERT_EQ(0, sys_reply(e->ep, r.cookie, NVX_UVM_MSG_IPC, 0, 3));
	ASSERT_EQ(0, bare_complete(b, &c));
	EXPECT_EQ(0, c.status);
}

/*
 * NVX_UVM_POLICY_STOP: over a limit, the VM stops (NVX_UVM_ERR_LIMIT,
 * the detail says which limit; KICK still succeeds, no completion) and
 * its VM_GONE says so; a type not allowed is still only refused.
 */
SYS_TEST(stop_mode)
{
	static const char *const names[] = { "?", "bulk", "in flight", "rate" };
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_policy p;
	struct nvx_uvm_status cs;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct nvx_uvm_sg *sg;
	struct bare *b;
	uint32_t lim, id;

	for (lim = NVX_UVM_LIMIT_BULK; lim <= NVX_UVM_LIMIT_RATE; lim++) {
		sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, NVX_UVM_POLICY_STOP);
		if (lim == NVX_UVM_LIMIT_BULK) {
			p.max_bulk = 4096;
		} else if (lim == NVX_UVM_LIMIT_IN_FLIGHT) {
			p.max_in_flight = 2;
		} else {
			p.rate = 1;
			p.burst = 1;
		}
		ASSERT_EQ(0, sys_policy_set(e->ep, &p));
		ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
		id = b->vm_id;
		if (lim == NVX_UVM_LIMIT_BULK) {
			sg = (struct nvx_uvm_sg *)(b->mem + SYS_SG_GPA);
			sg[0] = (struct nvx_uvm_sg){ .gpa = SYS_DATA_GPA,
						     .len = 4097 };
			sys_msg(&m, NVX_UVM_MSG_WRITE, 1, 0, 1);
			sys_msg_sg(&m, NVX_UVM_MSGF_PUSH, SYS_SG_GPA, 1);
		} else {
			/* within the limit: queued, the VM runs */
			sys_msg(&m, NVX_UVM_MSG_IPC, 1, 0, 1);
			ASSERT_EQ(0, bare_post(b, &m));
			if (lim == NVX_UVM_LIMIT_IN_FLIGHT) {
				m.tag = 2;
				ASSERT_EQ(0, bare_post(b, &m));
			}
			ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
			EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason)
				TH_LOG("%s", names[lim]);
			m.tag = 3;
		}
		EXPECT_EQ(0, bare_post(b, &m)) TH_LOG("%s", names[lim]);
		ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
		EXPECT_EQ((uint32_t)NVX_UVM_ERR_LIMIT, cs.reason)
			TH_LOG("%s: reason %s", names[lim],
			       nvx_uvm_reason_name(cs.reason));
		EXPECT_EQ(lim, cs.detail) TH_LOG("%s", names[lim]);
		EXPECT_EQ(1U, cs.limited) TH_LOG("%s", names[lim]);
		EXPECT_EQ(0U, cs.denied);
		EXPECT_EQ(0, sys_cq_pending(b)) TH_LOG("%s", names[lim]);
		ASSERT_EQ(0, ep_stats(e->ep, &st));
		EXPECT_EQ((uint64_t)lim, st.limited) TH_LOG("%s", names[lim]);

		bare_free(e, b);
		EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_ERR_LIMIT, &r))
			TH_LOG("%s: type %u VM %u status %d", names[lim],
			       r.msg.type, r.msg.src_vm, r.msg.status);
		EXPECT_EQ((uint64_t)lim, get_u64(r.msg.payload));
		EXPECT_NOTHING_TO_RECV(e->ep);
		if (_metadata->exit_code)
			return;
	}

	/* a type not allowed is an error completion, never a stop */
	ASSERT_EQ(0, sys_allow(e->ep, 0, ALL_BUT(NVX_UVM_MSG_CLOCK),
			       NVX_UVM_POLICY_STOP));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	sys_msg(&m, NVX_UVM_MSG_CLOCK, 9, 0, 9);
	expect_refused(_metadata, b, e->ep, &m, -EPERM);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(1U, cs.denied);
	EXPECT_EQ(0U, cs.limited);
	sys_msg(&m, NVX_UVM_MSG_IPC, 10, 0, 10);
	expect_served(_metadata, b, e->ep, &m, NULL);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(3U, st.limited);
	EXPECT_EQ(1U, st.denied);
}

/*
 * A VM's own policy replaces the endpoint's for that VM, whole (not
 * merged), also when the endpoint's changes; RESET gives it back; it
 * goes with the VM.
 */
SYS_TEST(per_vm_override)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct nvx_uvm_policy p;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b1, *b2;
	uint32_t id1;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b1));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b2));
	ASSERT_EQ(0, sys_allow(e->ep, 0, ALL_BUT(NVX_UVM_MSG_CLOCK), 0));
	ASSERT_EQ(0, sys_allow(e->ep, b1->vm_id, NVX_UVM_POLICY_ALL, 0));

	sys_msg(&m, NVX_UVM_MSG_CLOCK, 1, 0, 1);
	expect_served(_metadata, b1, e->ep, &m, NULL);
	m.tag = 2;
	expect_refused(_metadata, b2, e->ep, &m, -EPERM);

	/* b2's own denies what the endpoint allows, allows what it denies */
	ASSERT_EQ(0, sys_allow(e->ep, b2->vm_id, ALL_BUT(NVX_UVM_MSG_IPC), 0));
	m.tag = 3;
	expect_served(_metadata, b2, e->ep, &m, NULL);
	sys_msg(&m, NVX_UVM_MSG_IPC, 4, 0, 4);
	expect_refused(_metadata, b2, e->ep, &m, -EPERM);
	m.tag = 5;
	expect_served(_metadata, b1, e->ep, &m, NULL);

	/* the endpoint's changes: neither VM notices */
	ASSERT_EQ(0, sys_allow(e->ep, 0, 0, 0));
	m.tag = 6;
	expect_served(_metadata, b1, e->ep, &m, NULL);
	sys_msg(&m, NVX_UVM_MSG_CLOCK, 7, 0, 7);
	expect_served(_metadata, b2, e->ep, &m, NULL);

	/* RESET: the endpoint's again (nothing allowed) */
	sys_policy_init(&p, b1->vm_id, 0, NVX_UVM_POLICY_RESET);
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	sys_msg(&m, NVX_UVM_MSG_IPC, 8, 0, 8);
	expect_refused(_metadata, b1, e->ep, &m, -EPERM);
	p.vm_id = b2->vm_id;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));
	sys_msg(&m, NVX_UVM_MSG_CLOCK, 9, 0, 9);
	expect_refused(_metadata, b2, e->ep, &m, -EPERM);
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL, 0));
	m.tag = 10;
	expect_served(_metadata, b1, e->ep, &m, NULL);
	m.tag = 11;
	expect_served(_metadata, b2, e->ep, &m, NULL);

	ASSERT_EQ(0, chan_status(b1->chan_fd, &cs));
	EXPECT_EQ(1U, cs.denied);
	ASSERT_EQ(0, chan_status(b2->chan_fd, &cs));
	EXPECT_EQ(3U, cs.denied);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(4U, st.denied);
	EXPECT_EQ(7U, st.msgs_in);

	/* a VM's own policy goes with it */
	ASSERT_EQ(0, sys_allow(e->ep, b1->vm_id, 0, 0));
	id1 = b1->vm_id;
	bare_free(e, b1);
	ASSERT_EQ(0, recv_gone(e->ep, id1, NVX_UVM_DETACHED, &r));
	EXPECT_EQ(-ESRCH, sys_policy_get(e->ep, id1, &p));
	sys_msg(&m, NVX_UVM_MSG_IPC, 12, 0, 12);
	expect_served(_metadata, b2, e->ep, &m, NULL);
}

/* ---------------------------------------- policy flips under a flood --- */

#define FLOOD_N		20000U

/* What the system process's thread and the policy flipper share. */
struct flood {
	int ep;
	int stop;		/* atomic: the threads return */
	uint8_t *seen;		/* RECVs of each tag */
	uint64_t served;
	uint64_t flips;
	int err;		/* atomic */
	char why[160];
	pthread_t rx, flip;
};

/* The system process: RECV, REPLY (payload seed = tag), until stop. */
static void *flood_rx(void *arg)
{
	struct flood *f = arg;
	struct nvx_uvm_recv r;
	int ret;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		ret = recv_nb(f->ep, &r);
		if (ret == -EAGAIN) {
			struct pollfd p = { .fd = f->ep, .events = POLLIN };

			poll(&p, 1, 10);
			continue;
		}
		if (!ret && (r.msg.type != NVX_UVM_MSG_IPC ||
			     r.msg.tag >= FLOOD_N)) {
			snprintf(f->why, sizeof(f->why),
				 "RECV got type %u tag %u", r.msg.type,
				 r.msg.tag);
			ret = -EPROTO;
		}
		if (!ret) {
			f->seen[r.msg.tag]++;
			ret = sys_reply(f->ep, r.cookie, NVX_UVM_MSG_IPC, 0,
					r.msg.tag);
		}
		if (ret) {
			if (!f->why[0])
				snprintf(f->why, sizeof(f->why),
					 "RECV/REPLY: %s", strerror(-ret));
			__atomic_store_n(&f->err, ret, __ATOMIC_RELEASE);
			return NULL;
		}
		f->served++;
	}
	return NULL;
}

/* Deny IPC, allow it, deny it, ... until stop. */
static void *flood_flip(void *arg)
{
	struct flood *f = arg;
	int ret;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		ret = sys_allow(f->ep, 0, f->flips & 1 ? NVX_UVM_POLICY_ALL :
				ALL_BUT(NVX_UVM_MSG_IPC), 0);
		if (ret) {
			snprintf(f->why, sizeof(f->why), "SET_POLICY: %s",
				 strerror(-ret));
			__atomic_store_n(&f->err, ret, __ATOMIC_RELEASE);
			return NULL;
		}
		f->flips++;
		usleep(50);
	}
	return NULL;
}

/*
 * A guest posts FLOOD_N IPC messages as fast as its credit allows
 * (the test thread), the system process answers them (a thread), and
 * a third thread flips the endpoint's policy between allowing and
 * denying IPC. Every message gets exactly one completion, 0 (it was
 * received, once) or -EPERM (never received); the counters add up.
 */
TEST_F_TIMEOUT(sys, policy_flips_under_flood, 300)
{
	struct env *e = &self->e;
	struct flood f = { .ep = e->ep };
	uint64_t posted = 0, consumed = 0, ok = 0, denied = 0, bad = 0;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	uint8_t *got, *okay;
	struct nvx_uvm_msg m;
	struct bare *b;
	uint64_t end;
	uint32_t t, wrong = 0;
	int ret = 0;

	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	f.seen = calloc(FLOOD_N, 1);
	got = calloc(FLOOD_N, 1);
	okay = calloc(FLOOD_N, 1);
	ASSERT_TRUE(f.seen && got && okay);
	ASSERT_EQ(0, pthread_create(&f.rx, NULL, flood_rx, &f));
	ret = pthread_create(&f.flip, NULL, flood_flip, &f);
	if (ret) {
		__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
		pthread_join(f.rx, NULL);
	}
	ASSERT_EQ(0, ret);

	/* no ASSERT until the threads are joined */
	ret = 0;
	end = now_ms() + 120000;
	while (consumed < FLOOD_N && !ret &&
	       !__atomic_load_n(&f.err, __ATOMIC_ACQUIRE) && now_ms() < end) {
		bool progress = false;

		while (!bare_complete(b, &m)) {
			progress = true;
			consumed++;
			if (m.type != NVX_UVM_MSG_IPC || m.tag >= FLOOD_N) {
				bad++;
				continue;
			}
			got[m.tag]++;
			if (!m.status && sys_payload_is(m.payload, m.tag)) {
				okay[m.tag] = 1;
				ok++;
			} else if (m.status == -EPERM) {
				denied++;
			} else {
				bad++;
			}
		}
		/* at most cq_n - 1 outstanding: never a flood */
		if (posted < FLOOD_N && posted - consumed < b->cq_n - 1) {
			sys_msg(&m, NVX_UVM_MSG_IPC, posted, 0, posted);
			ret = bare_post(b, &m);
			posted++;
			progress = true;
		}
		if (!progress)
			sched_yield();
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	pthread_join(f.rx, NULL);
	pthread_join(f.flip, NULL);

	ASSERT_EQ(0, ret) TH_LOG("KICK: %s", strerror(-ret));
	ASSERT_EQ(0, f.err) TH_LOG("%s", f.why);
	ASSERT_EQ(FLOOD_N, consumed)
		TH_LOG("%llu posted, %llu completed in 120 s",
		       (unsigned long long)posted,
		       (unsigned long long)consumed);
	EXPECT_EQ(0U, bad);
	for (t = 0; t < FLOOD_N; t++) {
		if (got[t] != 1 || f.seen[t] != okay[t]) {
			if (!wrong++)
				TH_LOG("tag %u: %u completions, received %u times, ok %u",
				       t, got[t], f.seen[t], okay[t]);
		}
	}
	EXPECT_EQ(0U, wrong);
	EXPECT_EQ(FLOOD_N, ok + denied);
	/* both policies were in force at some point */
	EXPECT_LT(0U, ok);
	EXPECT_LT(0U, denied);
	EXPECT_LT(1U, f.flips);
	EXPECT_EQ(ok, f.served);

	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(FLOOD_N, st.msgs_out + st.denied);
	EXPECT_EQ(ok, st.msgs_out);
	EXPECT_EQ(ok, st.msgs_in);
	EXPECT_EQ(denied, st.denied);
	EXPECT_EQ(0U, st.limited);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(denied, cs.denied);
	EXPECT_EQ(0U, cs.in_flight);
	free(f.seen);
	free(got);
	free(okay);
}

TEST_HARNESS_MAIN
