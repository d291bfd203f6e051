// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": VM-to-VM messages.
 *
 * Bare VMs of one endpoint with NVX_UVM_POLICY_VM2VM: a VM sends IPC
 * with dst = another VM's id, that VM takes it with a RECV. Payloads
 * both ways; bulk data moved guest to guest (a PUSH message into a
 * RECV's PULL segments, a RECV's PUSH segments into a PULL message),
 * checked byte for byte, also where nothing may be written; who waits
 * for whom; FIFO order; every error of the sender's completion; VMs
 * that stop or go while messages wait; nothing left behind.
 */
#include "sys_fixture.h"

#define TAG_A		0xa000U		/* tags of VM a's requests */
#define TAG_B		0xb000U
#define TAG_C		0xc000U
#define TID(tag)	((tag) ^ 0x77700000U)	/* the "guest thread" */

/* e.ep allows VM-to-VM; @a and @b are two VMs of it. */
static void two_vms(struct __test_metadata *_metadata, struct env *e,
		    struct bare **a, struct bare **b)
{
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL,
			       NVX_UVM_POLICY_VM2VM));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, a));
	ASSERT_EQ(0, sys_bare_up(e, e->ep, b));
	ASSERT_NE((*a)->vm_id, (*b)->vm_id);
}

/*
 * @s sends IPC @tag (payload seed @tag, thread TID(@tag)) to VM @dst,
 * with @sg_nr segments at SYS_SG_GPA of direction @dir: KICK's result.
 */
static int send_ipc(struct bare *s, uint32_t dst, uint32_t tag, uint16_t dir,
		    uint32_t sg_nr)
{
	struct nvx_uvm_msg m;

	sys_msg(&m, NVX_UVM_MSG_IPC, tag, dst, tag);
	m.src_tid = TID(tag);
	if (sg_nr)
		sys_msg_sg(&m, dir, SYS_SG_GPA, sg_nr);
	return bare_post(s, &m);
}

/* @r posts RECV @tag (payload seed @tag), segments as send_ipc(). */
static int post_recv(struct bare *r, uint32_t tag, uint16_t dir,
		     uint32_t sg_nr)
{
	struct nvx_uvm_msg m;

	sys_msg(&m, NVX_UVM_MSG_RECV, tag, 0, tag);
	if (sg_nr)
		sys_msg_sg(&m, dir, SYS_SG_GPA, sg_nr);
	return bare_post(r, &m);
}

/*
 * @s's IPC @stag met @r's RECV @rtag: the next completion of each says
 * so, with @bytes moved; each carries the other's payload, the RECV's
 * the sender and its thread.
 */
static void expect_delivered(struct __test_metadata *_metadata,
			     struct bare *s, uint32_t stag,
			     struct bare *r, uint32_t rtag, uint32_t bytes)
{
	struct nvx_uvm_msg cs, cr;

	get_completion(_metadata, r, &cr);
	EXPECT_EQ(NVX_UVM_MSG_RECV, cr.type);
	EXPECT_EQ(rtag, cr.tag);
	EXPECT_EQ(0, cr.status) TH_LOG("RECV %#x: status %d", rtag, cr.status);
	EXPECT_EQ(s->vm_id, cr.src_vm);
	EXPECT_EQ(TID(stag), cr.src_tid);
	EXPECT_EQ(bytes, cr.bulk_len) TH_LOG("RECV %#x", rtag);
	EXPECT_TRUE(sys_payload_is(cr.payload, stag))
		TH_LOG("RECV %#x got the payload of %#x, not of %#x", rtag,
		       get_u32(cr.payload), stag);
	get_completion(_metadata, s, &cs);
	EXPECT_EQ(NVX_UVM_MSG_IPC, cs.type);
	EXPECT_EQ(stag, cs.tag);
	EXPECT_EQ(0, cs.status) TH_LOG("IPC %#x: status %d", stag, cs.status);
	EXPECT_EQ(bytes, cs.bulk_len) TH_LOG("IPC %#x", stag);
	EXPECT_TRUE(sys_payload_is(cs.payload, rtag))
		TH_LOG("IPC %#x got the payload of %#x, not of %#x", stag,
		       get_u32(cs.payload), rtag);
}

/* The next completion of @s: its @type @tag failed with @status. */
static void expect_failed(struct __test_metadata *_metadata, struct bare *s,
			  uint16_t type, uint32_t tag, int32_t status)
{
	struct nvx_uvm_msg c;

	get_completion(_metadata, s, &c);
	EXPECT_EQ(type, c.type);
	EXPECT_EQ(tag, c.tag);
	EXPECT_EQ(status, c.status)
		TH_LOG("type %u tag %#x: status %d, not %d", type, tag,
		       c.status, status);
	EXPECT_EQ(0U, c.bulk_len);
}

/* STATUS of @b: in flight, and VM-to-VM messages out and in. */
static void expect_vm(struct __test_metadata *_metadata, struct bare *b,
		      uint32_t in_flight, uint64_t out, uint64_t in)
{
	struct nvx_uvm_status cs;

	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason) TH_LOG("VM %u", b->vm_id);
	EXPECT_EQ(in_flight, cs.in_flight) TH_LOG("VM %u", b->vm_id);
	EXPECT_EQ(out, cs.vm2vm_out) TH_LOG("VM %u", b->vm_id);
	EXPECT_EQ(in, cs.vm2vm_in) TH_LOG("VM %u", b->vm_id);
}

/*
 * The endpoint's VM-to-VM counters; its system process saw none of it
 * (nothing queued, taken or received).
 */
static void expect_ep(struct __test_metadata *_metadata, int ep,
		      uint64_t vm2vm, uint64_t bytes)
{
	struct nvx_uvm_ep_stats st;

	ASSERT_EQ(0, ep_stats(ep, &st));
	EXPECT_EQ(vm2vm, st.vm2vm);
	EXPECT_EQ(bytes, st.vm2vm_bytes);
	EXPECT_EQ(0U, st.msgs_in);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	EXPECT_NOTHING_TO_RECV(ep);
}

/*
 * Ping and pong, payload only: RECV first, then the message; then the
 * other way round.
 */
SYS_TEST(ping_pong)
{
	struct env *e = &self->e;
	struct bare *a, *b;

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, 0, 0));
	EXPECT_EQ(0, sys_cq_pending(b));
	expect_vm(_metadata, b, 1, 0, 0);
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 1, b, TAG_B + 1, 0);

	ASSERT_EQ(0, post_recv(a, TAG_A + 2, 0, 0));
	ASSERT_EQ(0, send_ipc(b, a->vm_id, TAG_B + 2, 0, 0));
	expect_delivered(_metadata, b, TAG_B + 2, a, TAG_A + 2, 0);

	EXPECT_EQ(0, sys_cq_pending(a));
	EXPECT_EQ(0, sys_cq_pending(b));
	expect_vm(_metadata, a, 0, 1, 1);
	expect_vm(_metadata, b, 0, 1, 1);
	expect_ep(_metadata, e->ep, 2, 0);
}

/*
 * One transfer: @x->len bytes from the data side's segments (d_*, at
 * SYS_DATA_GPA of its RAM) into the room side's (r_*, @x->room bytes
 * at SYS_DATA2_GPA). Without @pull, @a's IPC pushes into @b's RECV;
 * with @pull, @b's RECV offers its data and @a's IPC pulls it.
 */
struct xfer {
	uint32_t len, d_nr, d_off, d_gap;
	uint32_t room, r_nr, r_off, r_gap;
};

/* Whether @b's segments at @sg_gpa hold @len bytes of @src, in order. */
static bool sg_holds(const struct bare *b, uint64_t sg_gpa, uint32_t nr,
		     const unsigned char *src, uint32_t len)
{
	const struct nvx_uvm_sg *sg = sys_sg_at(b, sg_gpa);
	uint32_t i, n, done = 0;

	for (i = 0; i < nr && done < len; i++) {
		n = sg[i].len < len - done ? sg[i].len : len - done;
		if (memcmp(b->mem + sg[i].gpa, src + done, n))
			return false;
		done += n;
	}
	return done == len;
}

static void xfer(struct __test_metadata *_metadata, struct bare *a,
		 struct bare *b, const struct xfer *x, bool pull,
		 bool send_first, unsigned int seed, unsigned char *src,
		 unsigned char *img)
{
	struct bare *d = pull ? b : a, *r = pull ? a : b;
	uint32_t moved = x->len < x->room ? x->len : x->room;
	uint32_t dn, rn, ta = TAG_A + seed, tb = TAG_B + seed;
	uint16_t adir = pull ? NVX_UVM_MSGF_PULL : NVX_UVM_MSGF_PUSH;
	uint16_t bdir = pull ? NVX_UVM_MSGF_PUSH : NVX_UVM_MSGF_PULL;
	uint64_t span, k;

	fill_bytes(src, x->len, seed);
	dn = sys_sg_split(d, SYS_SG_GPA, x->d_nr, SYS_DATA_GPA + x->d_off,
			  x->len, x->d_gap);
	sys_sg_scatter(d, sys_sg_at(d, SYS_SG_GPA), dn, src, x->len);
	rn = sys_sg_split(r, SYS_SG_GPA, x->r_nr, SYS_DATA2_GPA + x->r_off,
			  x->room, x->r_gap);
	/* the room, the gaps and a page after: only the room may change */
	span = sys_sg_end(sys_sg_at(r, SYS_SG_GPA), rn) - SYS_DATA2_GPA + 4096;
	memset(r->mem + SYS_DATA2_GPA, 0xc0 + seed, span);
	memset(img, 0xc0 + seed, span);
	sys_sg_expect(img, SYS_DATA2_GPA, sys_sg_at(r, SYS_SG_GPA), rn, src,
		      moved);

	if (send_first) {
		ASSERT_EQ(0, send_ipc(a, b->vm_id, ta, adir, pull ? rn : dn));
		EXPECT_EQ(0, sys_cq_pending(a)) TH_LOG("%u bytes", x->len);
		ASSERT_EQ(0, post_recv(b, tb, bdir, pull ? dn : rn));
	} else {
		ASSERT_EQ(0, post_recv(b, tb, bdir, pull ? dn : rn));
		EXPECT_EQ(0, sys_cq_pending(b)) TH_LOG("%u bytes", x->len);
		ASSERT_EQ(0, send_ipc(a, b->vm_id, ta, adir, pull ? rn : dn));
	}
	expect_delivered(_metadata, a, ta, b, tb, moved);
	for (k = 0; k < span && img[k] == r->mem[SYS_DATA2_GPA + k]; k++)
		;
	EXPECT_EQ(span, k)
		TH_LOG("%u bytes into %u: at GPA %#llx %#x, not %#x", x->len,
		       x->room, (unsigned long long)(SYS_DATA2_GPA + k),
		       r->mem[SYS_DATA2_GPA + k], img[k]);
	/* the data side is only read */
	EXPECT_TRUE(sg_holds(d, SYS_SG_GPA, dn, src, x->len))
		TH_LOG("%u bytes: the source changed", x->len);
}

#define XFER_SRC	NVX_UVM_MAX_BULK
#define XFER_IMG	(2 * NVX_UVM_MAX_BULK)

/*
 * PUSH: sizes around pages, up to NVX_UVM_MAX_BULK, segments up to
 * NVX_UVM_MAX_SG on either side at unaligned addresses across pages;
 * the receiver's room larger and smaller than the data. Every other
 * transfer sends first, the others post the RECV first.
 */
SYS_TEST(push_sizes)
{
	static const struct xfer x[] = {
		{ 1, 1, 4095, 0,	1, 1, 4095, 0 },
		{ 4095, 1, 0x123, 0,	4095, 3, 0xff1, 13 },
		{ 4097, 2, 0xfff, 1,	4097, 1, 1, 0 },
		{ 65536, NVX_UVM_MAX_SG, 0x801, 7,	65536, 7, 3, 4101 },
		{ NVX_UVM_MAX_BULK, 5, 7, 3,
		  NVX_UVM_MAX_BULK, NVX_UVM_MAX_SG, 0xffd, 1 },
		/* more room than data: the data moves */
		{ 5000, 3, 0x10, 4096,	8000, 2, 0x20, 100 },
		/* less: as much as there is room for */
		{ 65536, 4, 0x30, 0,	60000, NVX_UVM_MAX_SG, 0x40, 64 },
	};
	struct env *e = &self->e;
	unsigned char *src, *img;
	struct bare *a, *b;
	uint64_t bytes = 0;
	unsigned int i;

	two_vms(_metadata, e, &a, &b);
	src = malloc(XFER_SRC);
	img = malloc(XFER_IMG);
	ASSERT_TRUE(src && img);
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		xfer(_metadata, a, b, &x[i], false, i & 1, i + 1, src, img);
		bytes += x[i].len < x[i].room ? x[i].len : x[i].room;
		if (_metadata->exit_code)
			break;
	}
	expect_vm(_metadata, a, 0, i, 0);
	expect_vm(_metadata, b, 0, 0, i);
	expect_ep(_metadata, e->ep, i, bytes);
	free(src);
	free(img);
}

/* PULL: a RECV offers data (PUSH), the message takes it (PULL). */
SYS_TEST(pull_from_recv)
{
	static const struct xfer x[] = {
		{ 5000, 3, 0x11, 9,	8192, 2, 0xffe, 4096 },
		{ 9000, 1, 0x800, 0,	4096, 5, 0x1, 3 },
		{ NVX_UVM_MAX_BULK, NVX_UVM_MAX_SG, 0x5, 11,
		  NVX_UVM_MAX_BULK, 3, 0xfff, 1 },
		{ 1, 1, 0xfff, 0,	4097, 2, 0, 0 },
	};
	struct env *e = &self->e;
	unsigned char *src, *img;
	struct bare *a, *b;
	uint64_t bytes = 0;
	unsigned int i;

	two_vms(_metadata, e, &a, &b);
	src = malloc(XFER_SRC);
	img = malloc(XFER_IMG);
	ASSERT_TRUE(src && img);
	for (i = 0; i < ARRAY_SIZE(x); i++) {
		xfer(_metadata, a, b, &x[i], true, !(i & 1), i + 1, src, img);
		bytes += x[i].len < x[i].room ? x[i].len : x[i].room;
		if (_metadata->exit_code)
			break;
	}
	expect_vm(_metadata, a, 0, i, 0);
	expect_vm(_metadata, b, 0, 0, i);
	expect_ep(_metadata, e->ep, i, bytes);
	free(src);
	free(img);
}

/*
 * Directions that do not meet (both PUSH, both PULL, segments on one
 * side only): delivered, with status 0 and no byte moved, in neither
 * VM's memory.
 */
SYS_TEST(direction_mismatch)
{
	static const struct {
		uint16_t adir, bdir;
	} c[] = {
		{ NVX_UVM_MSGF_PUSH, NVX_UVM_MSGF_PUSH },
		{ NVX_UVM_MSGF_PULL, NVX_UVM_MSGF_PULL },
		{ NVX_UVM_MSGF_PUSH, 0 },
		{ 0, NVX_UVM_MSGF_PULL },
		{ NVX_UVM_MSGF_PULL, 0 },
		{ 0, NVX_UVM_MSGF_PUSH },
	};
	const uint32_t len = 3 * 4096;
	struct env *e = &self->e;
	unsigned char *pa, *pb;
	struct bare *a, *b;
	unsigned int i;
	uint32_t na, nb;

	two_vms(_metadata, e, &a, &b);
	pa = malloc(len);
	pb = malloc(len);
	ASSERT_TRUE(pa && pb);
	fill_bytes(pa, len, 1);
	fill_bytes(pb, len, 2);
	memcpy(a->mem + SYS_DATA_GPA, pa, len);
	memcpy(b->mem + SYS_DATA_GPA, pb, len);
	na = sys_sg_split(a, SYS_SG_GPA, 3, SYS_DATA_GPA + 5, len - 100, 10);
	nb = sys_sg_split(b, SYS_SG_GPA, 2, SYS_DATA_GPA + 9, len - 100, 20);
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		ASSERT_EQ(0, post_recv(b, TAG_B + i, c[i].bdir,
				       c[i].bdir ? nb : 0));
		ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + i, c[i].adir,
				      c[i].adir ? na : 0));
		expect_delivered(_metadata, a, TAG_A + i, b, TAG_B + i, 0);
		EXPECT_EQ(0, memcmp(a->mem + SYS_DATA_GPA, pa, len))
			TH_LOG("case %u wrote into a", i);
		EXPECT_EQ(0, memcmp(b->mem + SYS_DATA_GPA, pb, len))
			TH_LOG("case %u wrote into b", i);
	}
	expect_vm(_metadata, a, 0, ARRAY_SIZE(c), 0);
	expect_vm(_metadata, b, 0, 0, ARRAY_SIZE(c));
	expect_ep(_metadata, e->ep, ARRAY_SIZE(c), 0);
	free(pa);
	free(pb);
}

/*
 * A message sent before any RECV waits, in its sender's flight, seen by
 * nobody, until a RECV takes it.
 */
SYS_TEST(message_waits_for_recv)
{
	static const struct xfer x = { 3000, 2, 0x10, 5, 4096, 1, 0x7, 0 };
	struct env *e = &self->e;
	unsigned char *src, *img;
	struct nvx_uvm_sg *sg;
	struct bare *a, *b;

	two_vms(_metadata, e, &a, &b);
	src = malloc(XFER_SRC);
	img = malloc(XFER_IMG);
	ASSERT_TRUE(src && img);

	/* payload only first */
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, 0, 0));
	EXPECT_EQ(0, sys_cq_pending(a));
	expect_vm(_metadata, a, 1, 0, 0);
	expect_vm(_metadata, b, 0, 0, 0);
	expect_ep(_metadata, e->ep, 0, 0);
	usleep(50000);
	EXPECT_EQ(0, sys_cq_pending(a)) TH_LOG("completed without a RECV");
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 1, b, TAG_B + 1, 0);
	expect_vm(_metadata, a, 0, 1, 0);
	expect_vm(_metadata, b, 0, 0, 1);

	/* with data, which is read when the RECV comes */
	xfer(_metadata, a, b, &x, false, true, 2, src, img);
	/* and a PULL message waiting for a RECV's data */
	xfer(_metadata, a, b, &x, true, true, 3, src, img);

	/* the segment list is read at the doorbell, the data when it moves */
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 4, NVX_UVM_MSGF_PUSH,
			      sys_sg_split(a, SYS_SG_GPA, 1, SYS_DATA_GPA,
					   100, 0)));
	sg = (struct nvx_uvm_sg *)(a->mem + SYS_SG_GPA);
	sg[0].len = 50;
	memset(a->mem + SYS_DATA_GPA, 0x42, 100);
	sys_sg_split(b, SYS_SG_GPA, 1, SYS_DATA2_GPA, 200, 0);
	memset(b->mem + SYS_DATA2_GPA, 0, 200);
	ASSERT_EQ(0, post_recv(b, TAG_B + 4, NVX_UVM_MSGF_PULL, 1));
	expect_delivered(_metadata, a, TAG_A + 4, b, TAG_B + 4, 100);
	EXPECT_TRUE(all_bytes(b->mem + SYS_DATA2_GPA, 100, 0x42));
	EXPECT_TRUE(all_bytes(b->mem + SYS_DATA2_GPA + 100, 100, 0));

	expect_vm(_metadata, a, 0, 4, 0);
	expect_vm(_metadata, b, 0, 0, 4);
	expect_ep(_metadata, e->ep, 4, 3000 * 2 + 100);
	free(src);
	free(img);
}

/*
 * RECVs posted before any message wait, in their VM's flight; the
 * oldest takes the first message.
 */
SYS_TEST(recv_waits_for_message)
{
	struct env *e = &self->e;
	struct bare *a, *b;

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, 0, 0));
	ASSERT_EQ(0, post_recv(b, TAG_B + 2, 0, 0));
	usleep(50000);
	EXPECT_EQ(0, sys_cq_pending(b)) TH_LOG("a RECV completed alone");
	expect_vm(_metadata, b, 2, 0, 0);
	expect_vm(_metadata, a, 0, 0, 0);
	expect_ep(_metadata, e->ep, 0, 0);

	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 1, b, TAG_B + 1, 0);
	EXPECT_EQ(0, sys_cq_pending(b));
	expect_vm(_metadata, b, 1, 0, 1);
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 2, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 2, b, TAG_B + 2, 0);
	expect_vm(_metadata, b, 0, 0, 2);
	expect_vm(_metadata, a, 0, 2, 0);
	expect_ep(_metadata, e->ep, 2, 0);
}

/*
 * Messages of two senders wait for one VM; its RECVs take them oldest
 * first, one RECV per doorbell and three in one.
 */
SYS_TEST(fifo_order)
{
	struct env *e = &self->e;
	struct nvx_uvm_msg m;
	struct bare *a, *b, *c;
	struct bare *from[7];
	uint32_t tag[7];
	int i;

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &c));
	for (i = 0; i < 7; i++) {
		from[i] = i & 1 ? c : a;
		tag[i] = (i & 1 ? TAG_C : TAG_A) + i;
	}
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, send_ipc(from[i], b->vm_id, tag[i], 0, 0));
	expect_vm(_metadata, a, 2, 0, 0);
	expect_vm(_metadata, c, 2, 0, 0);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, post_recv(b, TAG_B + i, 0, 0));
		expect_delivered(_metadata, from[i], tag[i], b, TAG_B + i, 0);
	}
	EXPECT_EQ(0, sys_cq_pending(a));
	EXPECT_EQ(0, sys_cq_pending(c));

	for (i = 4; i < 7; i++)
		ASSERT_EQ(0, send_ipc(from[i], b->vm_id, tag[i], 0, 0));
	for (i = 4; i < 7; i++) {
		sys_msg(&m, NVX_UVM_MSG_RECV, TAG_B + i, 0, TAG_B + i);
		sys_publish(b, &m);
	}
	ASSERT_EQ(0, bare_kick(b, NVX_UVM_PORT_DOORBELL));
	for (i = 4; i < 7; i++)
		expect_delivered(_metadata, from[i], tag[i], b, TAG_B + i, 0);

	expect_vm(_metadata, a, 0, 4, 0);
	expect_vm(_metadata, c, 0, 3, 0);
	expect_vm(_metadata, b, 0, 0, 7);
	expect_ep(_metadata, e->ep, 7, 0);
}

/*
 * Every error of the sender's completion, while the receiver waits
 * with a RECV that none of them may reach: an unknown VM, a VM of
 * another endpoint (-ESRCH), itself, another type than IPC, a RECV
 * with a destination (-EINVAL), VM-to-VM not allowed (-EPERM); a RECV
 * whose type is not allowed (-EPERM).
 */
SYS_TEST(sender_errors)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct bare *a, *b, *o = NULL;
	struct nvx_uvm_msg m;
	uint32_t unknown;
	int ep2, i;

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, 0, 0));
	unknown = a->vm_id + b->vm_id + 100;

	ASSERT_EQ(0, send_ipc(a, unknown, TAG_A + 1, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 1, -ESRCH);
	ASSERT_EQ(0, send_ipc(a, a->vm_id, TAG_A + 2, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 2, -EINVAL);
	sys_msg(&m, NVX_UVM_MSG_CLOCK, TAG_A + 3, b->vm_id, TAG_A + 3);
	ASSERT_EQ(0, bare_post(a, &m));
	expect_failed(_metadata, a, NVX_UVM_MSG_CLOCK, TAG_A + 3, -EINVAL);
	sys_msg(&m, NVX_UVM_MSG_WRITE, TAG_A + 4, b->vm_id, TAG_A + 4);
	sys_msg_sg(&m, NVX_UVM_MSGF_PUSH, SYS_SG_GPA,
		   sys_sg_split(a, SYS_SG_GPA, 1, SYS_DATA_GPA, 64, 0));
	ASSERT_EQ(0, bare_post(a, &m));
	expect_failed(_metadata, a, NVX_UVM_MSG_WRITE, TAG_A + 4, -EINVAL);
	sys_msg(&m, NVX_UVM_MSG_RECV, TAG_A + 5, b->vm_id, TAG_A + 5);
	ASSERT_EQ(0, bare_post(a, &m));
	expect_failed(_metadata, a, NVX_UVM_MSG_RECV, TAG_A + 5, -EINVAL);
	EXPECT_EQ(0, sys_cq_pending(b));

	/*
	 * A VM of another endpoint (VM-to-VM allowed there, a RECV
	 * waiting): its id, where e.ep has no VM of that id, is unknown.
	 */
	ep2 = sys_ep(_metadata, e, &self->eps, 0);
	ASSERT_EQ(0, sys_allow(ep2, 0, NVX_UVM_POLICY_ALL,
			       NVX_UVM_POLICY_VM2VM));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, sys_bare_up(e, ep2, &o));
		if (o->vm_id != a->vm_id && o->vm_id != b->vm_id)
			break;
	}
	ASSERT_NE(a->vm_id, o->vm_id);
	ASSERT_NE(b->vm_id, o->vm_id);
	ASSERT_EQ(0, post_recv(o, TAG_C + 1, 0, 0));
	ASSERT_EQ(0, send_ipc(a, o->vm_id, TAG_A + 6, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 6, -ESRCH);
	usleep(20000);
	EXPECT_EQ(0, sys_cq_pending(o));
	EXPECT_EQ(0, sys_cq_pending(b));

	/* VM-to-VM not allowed: checked at the sender's doorbell */
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL, 0));
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 7, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 7, -EPERM);
	EXPECT_EQ(0, sys_cq_pending(b));
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL,
			       NVX_UVM_POLICY_VM2VM));
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 8, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 8, b, TAG_B + 1, 0);

	/* a RECV needs its type allowed */
	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL &
			       ~TYPE_BIT(NVX_UVM_MSG_RECV),
			       NVX_UVM_POLICY_VM2VM));
	ASSERT_EQ(0, post_recv(b, TAG_B + 2, 0, 0));
	expect_failed(_metadata, b, NVX_UVM_MSG_RECV, TAG_B + 2, -EPERM);

	expect_vm(_metadata, a, 0, 1, 0);
	expect_vm(_metadata, b, 0, 0, 1);
	expect_ep(_metadata, e->ep, 1, 0);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(2U, st.denied);
	ASSERT_EQ(0, ep_stats(ep2, &st));
	EXPECT_EQ(0U, st.vm2vm);
	EXPECT_EQ(0U, st.denied);
}

/*
 * The receiver's channel closed with messages waiting for it: each
 * completes -ECONNRESET; then its id names no VM (-ESRCH), also for a
 * VM that went with a RECV posted.
 */
SYS_TEST(receiver_closed)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *a, *b;
	uint32_t id;
	int i, seen[2] = { 0, 0 };

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 0, 0, 0));
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, NVX_UVM_MSGF_PUSH,
			      sys_sg_split(a, SYS_SG_GPA, 2, SYS_DATA_GPA,
					   5000, 1)));
	expect_vm(_metadata, a, 2, 0, 0);
	id = b->vm_id;
	bare_free(e, b);
	for (i = 0; i < 2; i++) {
		get_completion(_metadata, a, &m);
		EXPECT_EQ(NVX_UVM_MSG_IPC, m.type);
		EXPECT_EQ(-ECONNRESET, m.status) TH_LOG("tag %#x", m.tag);
		EXPECT_EQ(0U, m.bulk_len);
		if (m.tag - TAG_A < 2)
			seen[m.tag - TAG_A]++;
	}
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));
	expect_vm(_metadata, a, 0, 0, 0);
	ASSERT_EQ(0, send_ipc(a, id, TAG_A + 2, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 2, -ESRCH);

	/* gone with a RECV posted: a closed VM is detached, unknown */
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, 0, 0));
	id = b->vm_id;
	bare_free(e, b);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));
	ASSERT_EQ(0, send_ipc(a, id, TAG_A + 3, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 3, -ESRCH);

	expect_vm(_metadata, a, 0, 0, 0);
	expect_ep(_metadata, e->ep, 0, 0);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(0U, st.gone);
}

/*
 * The receiver stopped (not closed): what waited for it completes
 * -ECONNRESET, and so does what is sent to it while it stays attached;
 * its own waiting RECV gets no completion (nothing is written into a
 * stopped VM).
 */
SYS_TEST(receiver_stopped)
{
	struct env *e = &self->e;
	struct nvx_uvm_status cs;
	struct nvx_uvm_recv r;
	struct bare *a, *b;
	uint32_t id;

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, 0, 0));
	ASSERT_EQ(0, bare_kick(b, BAD_PORT));
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	ASSERT_EQ((uint32_t)NVX_UVM_ERR_PORT, cs.reason);
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 1, -ECONNRESET);
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 2, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 2, -ECONNRESET);
	id = b->vm_id;
	bare_free(e, b);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_ERR_PORT, &r));
	ASSERT_EQ(0, send_ipc(a, id, TAG_A + 3, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 3, -ESRCH);

	/* a RECV waiting when its own VM stops */
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &b));
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, NVX_UVM_MSGF_PULL,
			       sys_sg_split(b, SYS_SG_GPA, 1, SYS_DATA_GPA,
					    4096, 0)));
	ASSERT_EQ(0, bare_kick(b, BAD_PORT));
	/* nothing is written into a stopped VM: its RECV just goes */
	usleep(50000);
	EXPECT_EQ(0U, __atomic_load_n(&b->ctrl->cq_prod, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 4, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 4, -ECONNRESET);
	id = b->vm_id;
	bare_free(e, b);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_ERR_PORT, &r));

	expect_vm(_metadata, a, 0, 0, 0);
	expect_ep(_metadata, e->ep, 0, 0);
}

/*
 * The sender closed while its message waits: the message goes with it;
 * a later RECV waits for the next sender's.
 */
SYS_TEST(sender_closed)
{
	struct env *e = &self->e;
	struct nvx_uvm_recv r;
	struct bare *a, *b, *c;
	uint32_t id;

	two_vms(_metadata, e, &a, &b);
	ASSERT_EQ(0, sys_bare_up(e, e->ep, &c));
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, NVX_UVM_MSGF_PUSH,
			      sys_sg_split(a, SYS_SG_GPA, 3, SYS_DATA_GPA + 1,
					   10000, 4096)));
	id = a->vm_id;
	bare_free(e, a);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, NVX_UVM_MSGF_PULL,
			       sys_sg_split(b, SYS_SG_GPA, 1, SYS_DATA_GPA,
					    20000, 0)));
	usleep(20000);
	EXPECT_EQ(0, sys_cq_pending(b)) TH_LOG("got a closed VM's message");
	expect_vm(_metadata, b, 1, 0, 0);
	ASSERT_EQ(0, send_ipc(c, b->vm_id, TAG_C + 1, 0, 0));
	expect_delivered(_metadata, c, TAG_C + 1, b, TAG_B + 1, 0);
	expect_vm(_metadata, b, 0, 0, 1);
	expect_vm(_metadata, c, 0, 1, 0);
	expect_ep(_metadata, e->ep, 1, 0);
}

/*
 * A waiting message and a waiting RECV are requests in flight: with
 * max_in_flight 1 the next is -EBUSY, counted as limited.
 */
SYS_TEST(waiting_counts_in_flight)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct nvx_uvm_policy p;
	struct bare *a, *b;

	two_vms(_metadata, e, &a, &b);
	sys_policy_init(&p, 0, NVX_UVM_POLICY_ALL, NVX_UVM_POLICY_VM2VM);
	p.max_in_flight = 1;
	ASSERT_EQ(0, sys_policy_set(e->ep, &p));

	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 1, 0, 0));
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 2, 0, 0));
	expect_failed(_metadata, a, NVX_UVM_MSG_IPC, TAG_A + 2, -EBUSY);
	ASSERT_EQ(0, post_recv(b, TAG_B + 1, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 1, b, TAG_B + 1, 0);

	ASSERT_EQ(0, post_recv(b, TAG_B + 2, 0, 0));
	ASSERT_EQ(0, post_recv(b, TAG_B + 3, 0, 0));
	expect_failed(_metadata, b, NVX_UVM_MSG_RECV, TAG_B + 3, -EBUSY);
	ASSERT_EQ(0, send_ipc(a, b->vm_id, TAG_A + 3, 0, 0));
	expect_delivered(_metadata, a, TAG_A + 3, b, TAG_B + 2, 0);

	ASSERT_EQ(0, chan_status(a->chan_fd, &cs));
	EXPECT_EQ(1U, cs.limited);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(1U, cs.limited);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(2U, st.limited);
	expect_vm(_metadata, a, 0, 2, 0);
	expect_vm(_metadata, b, 0, 0, 2);
	expect_ep(_metadata, e->ep, 2, 0);
}

/*
 * VMs closed with messages and RECVs waiting, senders first and
 * receivers first: nothing stays behind (no VM, message or notice on
 * the endpoint; every grant given back).
 */
SYS_TEST(closed_while_waiting_no_leak)
{
	struct env *e = &self->e;
	struct nvx_uvm_recv r;
	struct bare *v[3];
	uint32_t id[3];
	int order, i, k;

	ASSERT_EQ(0, sys_allow(e->ep, 0, NVX_UVM_POLICY_ALL,
			       NVX_UVM_POLICY_VM2VM));
	for (order = 0; order < 2; order++) {
		/* v[0] sends to v[1]; v[2] waits with RECVs */
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, sys_bare_up(e, e->ep, &v[i]));
			id[i] = v[i]->vm_id;
		}
		sys_sg_split(v[0], SYS_SG_GPA, 4, SYS_DATA_GPA + 3, 4096, 100);
		for (k = 0; k < 3; k++)
			ASSERT_EQ(0, send_ipc(v[0], id[1], TAG_A + k,
					      NVX_UVM_MSGF_PUSH, 4));
		sys_sg_split(v[2], SYS_SG_GPA, 2, SYS_DATA_GPA, 8192, 0);
		for (k = 0; k < 2; k++)
			ASSERT_EQ(0, post_recv(v[2], TAG_C + k,
					       NVX_UVM_MSGF_PULL, 2));
		expect_vm(_metadata, v[0], 3, 0, 0);
		expect_vm(_metadata, v[2], 2, 0, 0);

		/* order 0: sender, receiver, other; order 1: receiver first */
		i = order ? 1 : 0;
		bare_free(e, v[i]);
		bare_free(e, v[1 - i]);
		bare_free(e, v[2]);
		EXPECT_EQ(0, recv_gone(e->ep, id[i], NVX_UVM_DETACHED, &r))
			TH_LOG("order %d", order);
		EXPECT_EQ(0, recv_gone(e->ep, id[1 - i], NVX_UVM_DETACHED, &r))
			TH_LOG("order %d", order);
		EXPECT_EQ(0, recv_gone(e->ep, id[2], NVX_UVM_DETACHED, &r))
			TH_LOG("order %d", order);
		check_ep_idle(_metadata, e->ep);
		expect_ep(_metadata, e->ep, 0, 0);
		EXPECT_EQ(0, wait_granted(e->fd, &e->start))
			TH_LOG("order %d: granted %llu, %llu at the start", order,
			       (unsigned long long)granted_now(e->fd),
			       (unsigned long long)e->start.granted_bytes);
		if (_metadata->exit_code)
			return;
	}
}

TEST_HARNESS_MAIN
