// SPDX-License-Identifier: GPL-2.0
/*
 * nvx user VMs: messages between the VMs of one endpoint, moved by the
 * kernel, without the system process.
 *
 * A VM sends an IPC message whose dst names another VM of its endpoint;
 * the other VM takes it with a RECV it posted. Both are requests of
 * their guests, in flight within their credit, and both complete. The
 * doorbell that takes either puts it on a list under ep->lock (a sender
 * on its destination's inbox, a RECV on its own VM's recvs) and pairs
 * the oldest of each there. A pair is then moved with no lock held:
 * one copy from one grant to the other (the pages are the pool's or a
 * clone's copies, in the direct map; a clone's page to write is copied
 * first; both channels are referenced, so both grants stay) under the
 * lock of the VM the bytes go to, which is
 * completed first, then the other side under its own lock: one channel
 * lock at a time, never nested.
 *
 * A VM that goes takes its posted RECVs and its waiting messages with
 * it, and the messages waiting for it complete with -ECONNRESET; so do
 * they as soon as it is stopped (from a work item: a stop happens under
 * its channel's lock, and completing a sender takes the sender's).
 *
 * Slot ownership: a WAIT slot belongs to ep->lock (lists, state), a
 * MOVING slot to the one who paired it, and it becomes FREE again
 * (nvx_uvm_slot_put()) under its channel's lock.
 */
#include <linux/highmem.h>
#include <linux/list.h>

#include "uvm.h"
#include <trace/events/nvx_uvm.h>

/* Pair @b's oldest waiting message with its oldest RECV while both exist. */
static void nvx_uvm_v2v_match(struct nvx_uvm_chan *b, struct list_head *moves)
{
	struct nvx_uvm_slot *s, *r;

	lockdep_assert_held(&b->ep->lock);
	/* a stopped VM takes nothing: its messages bounce when it goes */
	if (READ_ONCE(b->reason))
		return;
	while (!list_empty(&b->inbox) && !list_empty(&b->recvs)) {
		s = list_first_entry(&b->inbox, struct nvx_uvm_slot, node);
		r = list_first_entry(&b->recvs, struct nvx_uvm_slot, node);
		list_del(&s->node);
		list_del(&r->node);
		s->state = NVX_UVM_SLOT_MOVING;
		r->state = NVX_UVM_SLOT_MOVING;
		s->mate = r;
		kref_get(&s->ch->ref);
		kref_get(&b->ref);
		list_add_tail(&s->node, moves);
	}
}

/**
 * nvx_uvm_v2v_queue() - queue a checked VM-to-VM message or RECV
 * @ch: its channel; ch->lock and ch->ep->lock held.
 * @s: the slot (a RECV, or an IPC message with a dst), checked against
 *	the policy.
 * @moves: pairs that can move now are added here, for
 *	nvx_uvm_v2v_run() once every lock is dropped.
 *
 * Return: 0, or the status to complete @s with: -ESRCH (no such VM on
 * this endpoint), -ECONNRESET (it is stopped) or -EPERM (its own policy
 * forbids VM-to-VM messages).
 */
int nvx_uvm_v2v_queue(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s,
		      struct list_head *moves)
{
	struct nvx_uvm_ep *ep = ch->ep;
	struct nvx_uvm_chan *b = ch;
	struct nvx_uvm_pol pol;

	lockdep_assert_held(&ch->lock);
	lockdep_assert_held(&ep->lock);
	s->mate = NULL;
	if (s->msg.type == NVX_UVM_MSG_RECV) {
		list_add_tail(&s->node, &ch->recvs);
	} else {
		b = xa_load(&ep->vms, s->msg.dst);
		if (!b || b->detached)
			return -ESRCH;
		if (READ_ONCE(b->reason))
			return -ECONNRESET;
		/* a VM whose own policy forbids VM-to-VM takes nothing */
		nvx_uvm_pol_get(b, &pol);
		if (!(pol.flags & NVX_UVM_POLICY_VM2VM))
			return -EPERM;
		list_add_tail(&s->node, &b->inbox);
	}
	s->state = NVX_UVM_SLOT_WAIT;
	nvx_uvm_v2v_match(b, moves);
	return 0;
}

/**
 * nvx_uvm_v2v_detach() - take a going VM out of VM-to-VM messaging
 * @ch: its channel; ch->lock and ch->ep->lock held.
 * @moves: the messages that waited for it are added here, to complete
 *	with -ECONNRESET by nvx_uvm_v2v_run().
 */
void nvx_uvm_v2v_detach(struct nvx_uvm_chan *ch, struct list_head *moves)
{
	struct nvx_uvm_slot *s;
	u32 i;

	lockdep_assert_held(&ch->lock);
	lockdep_assert_held(&ch->ep->lock);
	/* its own: RECVs posted, messages waiting on other inboxes */
	for (i = 0; i < ch->cq_n; i++) {
		s = &ch->slots[i];
		if (s->state != NVX_UVM_SLOT_WAIT)
			continue;
		list_del(&s->node);
		nvx_uvm_slot_put(ch, s);
	}
	nvx_uvm_v2v_bounce(ch, moves);
}

/**
 * nvx_uvm_v2v_bounce() - turn away the messages that wait for a VM
 * @ch: its channel, stopped or going; ch->ep->lock held.
 * @moves: the messages are added here, to complete with -ECONNRESET
 *	by nvx_uvm_v2v_run().
 */
void nvx_uvm_v2v_bounce(struct nvx_uvm_chan *ch, struct list_head *moves)
{
	struct nvx_uvm_slot *s, *tmp;

	lockdep_assert_held(&ch->ep->lock);
	list_for_each_entry_safe(s, tmp, &ch->inbox, node) {
		list_del(&s->node);
		s->state = NVX_UVM_SLOT_MOVING;
		s->mate = NULL;
		s->err = -ECONNRESET;
		kref_get(&s->ch->ref);
		list_add_tail(&s->node, moves);
	}
}

/*
 * Copy up to the shorter of two segment lists, from one grant to another;
 * dch->lock held. A destination clone whose copy of a page cannot be made
 * is stopped (NVX_UVM_ERR_MEMORY) and the copy ends there.
 */
static u32 nvx_uvm_g2g(struct nvx_uvm_chan *dch, const struct nvx_uvm_sg *dsg,
		       u32 dnr, struct nvx_uvm_chan *sch,
		       const struct nvx_uvm_sg *ssg, u32 snr)
{
	u32 di = 0, si = 0, doff = 0, soff = 0, done = 0;

	while (di < dnr && si < snr) {
		u64 dgpa = dsg[di].gpa + doff, sgpa = ssg[si].gpa + soff;
		size_t n = min(dsg[di].len - doff, ssg[si].len - soff);
		struct page *dpage = nvx_uvm_page_w(dch, dgpa);
		void *d, *src;

		if (IS_ERR(dpage)) {
			nvx_uvm_fail(dch, NVX_UVM_ERR_MEMORY, -PTR_ERR(dpage));
			break;
		}
		n = min3(n, PAGE_SIZE - offset_in_page(dgpa),
			 PAGE_SIZE - offset_in_page(sgpa));
		d = kmap_local_page(dpage);
		src = kmap_local_page(nvx_uvm_page(sch, sgpa));
		memcpy(d + offset_in_page(dgpa), src + offset_in_page(sgpa), n);
		kunmap_local(src);
		kunmap_local(d);
		done += n;
		doff += n;
		soff += n;
		if (doff == dsg[di].len) {
			di++;
			doff = 0;
		}
		if (soff == ssg[si].len) {
			si++;
			soff = 0;
		}
	}
	return done;
}

/*
 * Complete MOVING slot @s of @ch with @m, unless the VM stopped or went
 * meanwhile; free the slot either way. Returns whether it completed.
 */
static bool nvx_uvm_v2v_complete(struct nvx_uvm_chan *ch,
				 struct nvx_uvm_slot *s,
				 const struct nvx_uvm_msg *m, u64 *count)
{
	bool done = false;

	mutex_lock(&ch->lock);
	if (!ch->reason && !ch->detached)
		done = !nvx_uvm_cq_write(ch, m);
	if (done && count)
		(*count)++;
	nvx_uvm_slot_put(ch, s);
	mutex_unlock(&ch->lock);
	return done;
}

/*
 * Move one pair: sender slot @s, its mate the RECV. The bytes land in
 * one of the two VMs (the RECV's for a PUSH message, the sender's for a
 * PULL one): that VM's lock is held across the copy, so nothing is
 * written into a VM that stopped or went, and its completion is written
 * first. Both completions are built before either slot is freed: a
 * freed slot is reused by its guest's next message at once.
 */
static void nvx_uvm_v2v_move(struct nvx_uvm_slot *s)
{
	struct nvx_uvm_slot *r = s->mate, *fs, *ss;
	struct nvx_uvm_chan *a = s->ch, *b = r->ch, *first, *second;
	u32 sdir = s->msg.flags & NVX_UVM_MSGF_ALL;
	u32 rdir = r->msg.flags & NVX_UVM_MSGF_ALL;
	bool push = sdir == NVX_UVM_MSGF_PUSH && rdir == NVX_UVM_MSGF_PULL;
	bool pull = sdir == NVX_UVM_MSGF_PULL && rdir == NVX_UVM_MSGF_PUSH;
	struct nvx_uvm_msg ma, mb, *fm, *sm;
	struct nvx_uvm_ep *ep = a->ep;
	u64 *fcount, *scount;
	u32 moved = 0;
	bool ok;

	/* the RECV's: the sender's message; the sender's: the RECV's payload */
	nvx_uvm_cqe(&mb, b, r, 0);
	mb.src_vm = a->vm_id;
	mb.src_tid = s->msg.src_tid;
	mb.dst = b->vm_id;
	memcpy(mb.payload, s->msg.payload, sizeof(mb.payload));
	nvx_uvm_cqe(&ma, a, s, 0);
	memcpy(ma.payload, r->msg.payload, sizeof(ma.payload));

	if (pull) {
		first = a, fs = s, fm = &ma, fcount = &a->vm2vm_out;
		second = b, ss = r, sm = &mb, scount = &b->vm2vm_in;
	} else {
		first = b, fs = r, fm = &mb, fcount = &b->vm2vm_in;
		second = a, ss = s, sm = &ma, scount = &a->vm2vm_out;
	}
	mutex_lock(&first->lock);
	ok = !first->reason && !first->detached;
	if (ok && push)
		moved = nvx_uvm_g2g(b, r->sg, r->msg.sg_nr, a, s->sg,
				    s->msg.sg_nr);
	else if (ok && pull)
		moved = nvx_uvm_g2g(a, s->sg, s->msg.sg_nr, b, r->sg,
				    r->msg.sg_nr);
	fm->bulk_len = moved;
	if (ok)
		ok = !first->reason && !nvx_uvm_cq_write(first, fm);
	if (ok)
		(*fcount)++;
	nvx_uvm_slot_put(first, fs);
	mutex_unlock(&first->lock);
	if (ok)
		trace_nvx_uvm_bulk(first->vm_id, false, moved);

	/* the other side learns whether the bytes arrived */
	sm->status = ok ? 0 : -ECONNRESET;
	sm->bulk_len = ok ? moved : 0;
	nvx_uvm_v2v_complete(second, ss, sm, ok ? scount : NULL);

	if (ok) {
		spin_lock(&ep->lock);
		ep->vm2vm++;
		ep->vm2vm_bytes += moved;
		spin_unlock(&ep->lock);
	}
	nvx_uvm_chan_put(b);
}

/**
 * nvx_uvm_v2v_run() - move and complete what nvx_uvm_v2v_queue() paired
 * @moves: sender slots, MOVING, each holding a reference on its channel
 *	(and on its mate's); no lock held.
 */
void nvx_uvm_v2v_run(struct list_head *moves)
{
	struct nvx_uvm_slot *s, *tmp;
	struct nvx_uvm_chan *a;
	struct nvx_uvm_msg m;

	list_for_each_entry_safe(s, tmp, moves, node) {
		list_del(&s->node);
		a = s->ch;
		if (s->mate) {
			nvx_uvm_v2v_move(s);
		} else {
			nvx_uvm_cqe(&m, a, s, s->err);
			nvx_uvm_v2v_complete(a, s, &m, NULL);
		}
		nvx_uvm_chan_put(a);
	}
}
