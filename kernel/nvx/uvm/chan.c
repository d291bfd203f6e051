// SPDX-License-Identifier: GPL-2.0
/*
 * nvx light user VMs: the in-kernel PMIO fast path.
 *
 * A user VM is a KVM VM whose RAM is one pool grant at GPA 0. Attaching
 * it to an endpoint makes a channel: a kvm_io_device on the VM's PIO bus
 * claims NVX_UVM_PORT_DOORBELL, so a guest's doorbell write is handled
 * here, in the vCPU thread's exit path, and never reaches the VMM. The
 * doorbell moves the guest's new submission entries (64-byte messages,
 * scatter/gather lists checked against guest RAM) into slots that the
 * endpoint queues for its system process. The system process receives a
 * message (PUSH data copied straight from guest memory into its buffer)
 * and replies (PULL data copied straight into guest memory); the reply
 * becomes a completion in the guest's ring, the credits counter in the
 * guest's control page goes up, and a halted guest is woken through its
 * irqfd.
 *
 * Guest memory is reached through the grant's pages (direct map), never
 * through the VMM's mapping: the checks are against the grant's size and
 * a hostile VMM cannot redirect them.
 *
 * Locking: chan->lock (mutex) serialises a channel's rings, slots and
 * state; ep->lock (spinlock) the endpoint's queues and VM table; the
 * order is chan->lock, then ep->lock. The doorbell runs inside KVM's SRCU
 * read side, so the io device is unregistered before chan->lock is taken
 * on detach (unregistering waits for SRCU readers). Nothing faults on
 * user memory under chan->lock (RECV copies unlocked, REPLY with page
 * faults disabled): such a fault can last forever (userfaultfd, FUSE).
 *
 * Lifetimes: a channel is kref-counted (its fd, RECV/REPLY in progress,
 * an endpoint being released); it holds the KVM VM, the grant file, the
 * irqfd's eventfd and the endpoint (kref, not the file: closing the
 * endpoint's file is how a system process goes away).
 */
#include <linux/anon_inodes.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nvx_grant.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "uvm.h"

#define CREATE_TRACE_POINTS
#include <trace/events/nvx_uvm.h>

/* Channels by KVM VM, so that a VM gets at most one. */
static DEFINE_MUTEX(nvx_uvm_chans_lock);
static LIST_HEAD(nvx_uvm_chans);

/* ------------------------------------------------------ guest memory --- */

static bool nvx_uvm_range_ok(const struct nvx_uvm_chan *ch, u64 gpa, u64 len)
{
	return gpa < ch->mem_size && len <= ch->mem_size - gpa;
}

/**
 * nvx_uvm_copy() - copy between a checked guest range and a kernel buffer
 * @ch: the channel.
 * @gpa: guest-physical address, inside guest RAM with @len; to the guest
 *	only within the control page or the CQ (a clone's own since ATTACH,
 *	so that no copy has to be made here).
 * @buf: the kernel buffer.
 * @len: bytes.
 * @to_guest: direction.
 */
void nvx_uvm_copy(struct nvx_uvm_chan *ch, u64 gpa, void *buf, size_t len,
		  bool to_guest)
{
	while (len) {
		size_t off = offset_in_page(gpa);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page = to_guest ? nvx_uvm_page_w(ch, gpa) :
					       nvx_uvm_page(ch, gpa);
		void *va;

		/* the clone's own page already: found, never made */
		if (WARN_ON_ONCE(IS_ERR(page)))
			return;
		va = kmap_local_page(page);

		if (to_guest)
			memcpy(va + off, buf, n);
		else
			memcpy(buf, va + off, n);
		kunmap_local(va);
		gpa += n;
		buf += n;
		len -= n;
	}
}

/*
 * Copy between a checked guest range and user memory; returns the bytes
 * copied (short on a fault, or when a clone's copy of a page to write
 * could not be made: then *err is its error).
 */
static size_t nvx_uvm_copy_user(struct nvx_uvm_chan *ch, u64 gpa,
				void __user *ubuf, size_t len, bool to_guest,
				int *err)
{
	size_t done = 0;

	while (done < len) {
		size_t off = offset_in_page(gpa);
		size_t n = min_t(size_t, len - done, PAGE_SIZE - off);
		struct page *page = to_guest ? nvx_uvm_page_w(ch, gpa) :
					       nvx_uvm_page(ch, gpa);
		size_t left;
		void *va;

		if (IS_ERR(page)) {
			*err = PTR_ERR(page);
			break;
		}
		va = kmap_local_page(page);

		if (to_guest)
			left = copy_from_user(va + off, ubuf + done, n);
		else
			left = copy_to_user(ubuf + done, va + off, n);
		kunmap_local(va);
		done += n - left;
		if (left)
			break;
		gpa += n;
	}
	return done;
}

/**
 * nvx_uvm_sg_user() - move bytes between a slot's segments and user memory
 * @ch: the channel.
 * @sg: the segments, checked against guest RAM.
 * @nr: number of segments.
 * @ubuf: the user buffer.
 * @len: at most this many bytes.
 * @to_guest: direction.
 *
 * Return: the bytes moved; -EFAULT when the user buffer faulted; to a
 * clone, the error of nvx_grant_page_write() when a copy of a page could
 * not be made (-ENOMEM, -EDQUOT, -EHWPOISON).
 */
long nvx_uvm_sg_user(struct nvx_uvm_chan *ch, const struct nvx_uvm_sg *sg,
		     u32 nr, void __user *ubuf, u32 len, bool to_guest)
{
	u32 i, done = 0;
	int err = -EFAULT;

	for (i = 0; i < nr && done < len; i++) {
		u32 n = min(len - done, sg[i].len);
		size_t got = nvx_uvm_copy_user(ch, sg[i].gpa, ubuf + done,
					       n, to_guest, &err);

		done += got;
		if (got < n)
			return err;
	}
	return done;
}

static void nvx_uvm_chan_free(struct kref *ref)
{
	struct nvx_uvm_chan *ch = container_of(ref, struct nvx_uvm_chan, ref);

	if (ch->irq)
		eventfd_ctx_put(ch->irq);
	if (ch->irq_file)
		fput(ch->irq_file);
	if (ch->grant_file)
		nvx_grant_put(ch->grant, ch->grant_file);
	if (ch->kvm)
		kvm_put_kvm(ch->kvm);
	if (ch->ep)
		kref_put(&ch->ep->ref, nvx_uvm_ep_free);
	/* no reader left: it was only reachable through the channel */
	kfree(rcu_access_pointer(ch->pol));
	kfree(ch->gone);
	kvfree(ch->slots);
	kfree(ch->free);
	/* nvx_uvm_chan_find() may still look at ch->ref under RCU */
	kfree_rcu(ch, rcu);
}

/**
 * nvx_uvm_chan_put() - drop a reference on a channel
 * @ch: the channel.
 */
void nvx_uvm_chan_put(struct nvx_uvm_chan *ch)
{
	kref_put(&ch->ref, nvx_uvm_chan_free);
}

/**
 * nvx_uvm_chan_find() - the channel of a VM attached to an endpoint
 * @ep: the endpoint.
 * @vm_id: the VM's id, in @ep (ids are the endpoint's own).
 *
 * Return: the channel with a reference (nvx_uvm_chan_put() it), or NULL
 * when no VM of that id is attached to @ep now.
 */
struct nvx_uvm_chan *nvx_uvm_chan_find(struct nvx_uvm_ep *ep, u32 vm_id)
{
	struct nvx_uvm_chan *ch;
	bool ok;

	/* no lock on the REPLY path's lookup: channels are freed after RCU */
	rcu_read_lock();
	ch = xa_load(&ep->vms, vm_id);
	if (ch && !kref_get_unless_zero(&ch->ref))
		ch = NULL;
	rcu_read_unlock();
	if (!ch)
		return NULL;
	spin_lock(&ep->lock);
	ok = !ch->detached;
	spin_unlock(&ep->lock);
	if (!ok) {
		nvx_uvm_chan_put(ch);
		return NULL;
	}
	return ch;
}

/**
 * nvx_uvm_signal() - signal a VM's irqfd, if it has one
 * @ch: the channel.
 */
void nvx_uvm_signal(struct nvx_uvm_chan *ch)
{
	if (ch->irq) {
		eventfd_signal(ch->irq);
		ch->irqs++;
	}
}

/*
 * KVM_REQ_VM_DEAD does not wake a halted vCPU, and a VMM may have torn
 * down its irqfd already (closing the VM fd does). KVM unhalts every
 * vCPU (as its own PV kick does): the vCPU becomes runnable, and its
 * next entry sees the VM dead and returns -EIO to the VMM.
 */
static void nvx_uvm_unhalt_all(struct kvm *kvm)
{
	struct kvm_vcpu *vcpu;
	unsigned long i;

	kvm_for_each_vcpu(i, vcpu, kvm)
		kvm_vcpu_unhalt(vcpu);
}

/**
 * nvx_uvm_fail() - stop a VM
 * @ch: its channel; ch->lock held.
 * @reason: enum nvx_uvm_reason, what stopped it.
 * @detail: the port, index, address or length that did.
 *
 * KVM_RUN fails with -EIO from now on and a halted vCPU is woken to
 * notice. Only the first reason counts.
 */
void nvx_uvm_fail(struct nvx_uvm_chan *ch, u32 reason, u64 detail)
{
	lockdep_assert_held(&ch->lock);
	if (ch->reason)
		return;
	/* VM-to-VM senders read it under ep->lock only */
	WRITE_ONCE(ch->reason, reason);
	ch->detail = detail;
	trace_nvx_uvm_fail(ch->vm_id, reason, detail);
	kvm_vm_dead(ch->kvm);
	nvx_uvm_unhalt_all(ch->kvm);
	nvx_uvm_signal(ch);
	/* messages of other VMs wait for it in vain: turn them away */
	kref_get(&ch->ref);
	if (!schedule_work(&ch->bounce))
		nvx_uvm_chan_put(ch);
}

static void nvx_uvm_bounce_work(struct work_struct *work)
{
	struct nvx_uvm_chan *ch = container_of(work, struct nvx_uvm_chan,
					       bounce);
	LIST_HEAD(moves);

	spin_lock(&ch->ep->lock);
	nvx_uvm_v2v_bounce(ch, &moves);
	spin_unlock(&ch->ep->lock);
	nvx_uvm_v2v_run(&moves);
	nvx_uvm_chan_put(ch);
}

/**
 * nvx_uvm_cqe() - a completion for a request, as the kernel fills it in
 * @m: the completion.
 * @ch: the request's channel.
 * @s: the request.
 * @status: 0 or a negative errno.
 *
 * Type, flags, tag, thread and destination of the request; the source is
 * its VM; no bulk, no payload.
 */
void nvx_uvm_cqe(struct nvx_uvm_msg *m, const struct nvx_uvm_chan *ch,
		 const struct nvx_uvm_slot *s, s32 status)
{
	memset(m, 0, sizeof(*m));
	m->type = s->msg.type;
	m->flags = s->msg.flags;
	m->tag = s->msg.tag;
	m->src_vm = ch->vm_id;
	m->src_tid = s->msg.src_tid;
	m->dst = s->msg.dst;
	m->status = status;
}

/**
 * nvx_uvm_cq_write() - write a completion into the guest's ring
 * @ch: the channel; ch->lock held, the VM not stopped.
 * @m: the completion.
 *
 * Publishes it, adds a credit and signals the irqfd when the guest
 * asked for it (NVX_UVM_CTRL_WANT_IRQ).
 *
 * Return: 0, or -ESRCH when the guest broke its ring (the VM is stopped).
 */
int nvx_uvm_cq_write(struct nvx_uvm_chan *ch, const struct nvx_uvm_msg *m)
{
	struct nvx_uvm_ctrl *c = ch->ctrl;
	u32 unconsumed;
	u64 gpa;

	lockdep_assert_held(&ch->lock);
	unconsumed = ch->cq_prod - READ_ONCE(c->cq_cons);
	if (unconsumed >= ch->cq_n) {
		/* cannot happen unless the guest moved cq_cons back */
		nvx_uvm_fail(ch, NVX_UVM_ERR_RING, ch->cq_prod - unconsumed);
		return -ESRCH;
	}
	gpa = ch->cq_gpa + (u64)(ch->cq_prod & (ch->cq_n - 1)) *
	      NVX_UVM_MSG_SIZE;
	nvx_uvm_copy(ch, gpa, (void *)m, sizeof(*m), true);
	/* the entry before the index, the index before the credit */
	smp_wmb();
	ch->cq_prod++;
	WRITE_ONCE(c->cq_prod, ch->cq_prod);
	atomic_inc((atomic_t *)&c->credits);
	ch->msgs_out++;
	trace_nvx_uvm_msg_out(ch->vm_id, m->tag, m->status, m->bulk_len);

	/* pairs with the guest's barrier between WANT_IRQ and its check */
	smp_mb();
	trace_nvx_uvm_credit(ch->vm_id, READ_ONCE(c->credits),
			     READ_ONCE(c->flags) & NVX_UVM_CTRL_WANT_IRQ);
	if (READ_ONCE(c->flags) & NVX_UVM_CTRL_WANT_IRQ)
		nvx_uvm_signal(ch);
	return 0;
}

static struct nvx_uvm_slot *nvx_uvm_slot_get(struct nvx_uvm_chan *ch)
{
	struct nvx_uvm_slot *s;

	if (!ch->nr_free)
		return NULL;
	s = &ch->slots[ch->free[--ch->nr_free]];
	ch->in_flight++;
	return s;
}

/**
 * nvx_uvm_slot_put() - free a request slot for reuse
 * @ch: its channel; ch->lock held.
 * @s: the slot.
 */
void nvx_uvm_slot_put(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s)
{
	s->state = NVX_UVM_SLOT_FREE;
	s->gen++;
	ch->free[ch->nr_free++] = s->idx;
	ch->in_flight--;
}

/*
 * Read and check the submission entry at the head of the ring into @s.
 * Returns 0 or the reason to stop the VM, with *detail set.
 */
static u32 nvx_uvm_take(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s,
			u64 *detail)
{
	u64 gpa = ch->sq_gpa + (u64)(ch->sq_cons & (ch->sq_n - 1)) *
		  NVX_UVM_MSG_SIZE;
	struct nvx_uvm_msg *m = &s->msg;
	u32 dir, i;
	u64 total = 0;

	nvx_uvm_copy(ch, gpa, m, sizeof(*m), false);
	dir = m->flags & NVX_UVM_MSGF_ALL;
	*detail = ch->sq_cons;
	if (!m->type || m->type > NVX_UVM_MSG_GUEST_MAX ||
	    m->flags & ~NVX_UVM_MSGF_ALL || dir == NVX_UVM_MSGF_ALL ||
	    !dir != !m->sg_nr)
		return NVX_UVM_ERR_MSG;
	if (m->sg_nr > NVX_UVM_MAX_SG) {
		*detail = m->sg_nr;
		return NVX_UVM_ERR_SIZE;
	}
	if (m->sg_nr) {
		*detail = m->sg_gpa;
		if (!IS_ALIGNED(m->sg_gpa, sizeof(struct nvx_uvm_sg)) ||
		    !nvx_uvm_range_ok(ch, m->sg_gpa,
				      (u64)m->sg_nr * sizeof(s->sg[0])))
			return NVX_UVM_ERR_ADDR;
		nvx_uvm_copy(ch, m->sg_gpa, s->sg, m->sg_nr * sizeof(s->sg[0]),
			     false);
	}
	for (i = 0; i < m->sg_nr; i++) {
		const struct nvx_uvm_sg *g = &s->sg[i];

		*detail = g->gpa;
		if (g->flags)
			return NVX_UVM_ERR_MSG;
		total += g->len;
		if (!g->len || g->len > NVX_UVM_MAX_BULK ||
		    total > NVX_UVM_MAX_BULK) {
			*detail = g->len;
			return NVX_UVM_ERR_SIZE;
		}
		if (!nvx_uvm_range_ok(ch, g->gpa, g->len))
			return NVX_UVM_ERR_ADDR;
	}
	s->total = total;
	s->pushed = 0;
	m->src_vm = ch->vm_id;
	m->status = 0;
	m->bulk_len = 0;
	return 0;
}

/* Complete @s at once with @status (the kernel answers it); free it. */
static void nvx_uvm_answer(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s,
			   s32 status)
{
	struct nvx_uvm_msg m;

	nvx_uvm_cqe(&m, ch, s, status);
	nvx_uvm_slot_put(ch, s);
	/* an earlier answer of the batch may have found the CQ broken */
	if (ch->reason)
		return;
	if (status == -EPERM)
		ch->denied++;
	else if (status == -EMSGSIZE || status == -EBUSY ||
		 status == -EAGAIN)
		ch->limited++;
	nvx_uvm_cq_write(ch, &m);
}

static void nvx_uvm_drop(struct nvx_uvm_chan *ch, struct list_head *list)
{
	struct nvx_uvm_slot *s, *tmp;

	list_for_each_entry_safe(s, tmp, list, node) {
		list_del(&s->node);
		nvx_uvm_slot_put(ch, s);
	}
}

/**
 * nvx_uvm_sq_take() - take new submission entries of a VM
 * @ch: the channel.
 * @max: take at most this many (the rest stays in the ring).
 * @polled: the endpoint's poller calls, not a doorbell.
 *
 * Checks each entry, then the policy, and queues it for the endpoint (or
 * for another VM), answering at once what the kernel answers itself. A
 * broken ring or entry stops the VM. The doorbell (the vCPU thread on the
 * fast path, the VMM's KICK on the slow one) takes everything; the poller
 * (poll.c) takes at most its budget, with exactly these checks. Guest
 * memory is read through the grant's pages, which never fault.
 *
 * Return: the entries taken from the ring.
 */
u32 nvx_uvm_sq_take(struct nvx_uvm_chan *ch, u32 max, bool polled)
{
	struct nvx_uvm_ctrl *c = ch->ctrl;
	struct nvx_uvm_ep *ep = ch->ep;
	LIST_HEAD(batch);		/* for the system process */
	LIST_HEAD(v2v);			/* RECVs and VM-to-VM messages */
	LIST_HEAD(bounced);		/* VM-to-VM messages with no taker */
	LIST_HEAD(moves);
	struct nvx_uvm_slot *s, *tmp;
	struct nvx_uvm_pol pol;
	u32 prod, n, unconsumed, reason = 0, taken = 0, took = 0;
	u64 detail = 0, denied, limited;
	int err;

	mutex_lock(&ch->lock);
	if (ch->reason)
		goto out;
	denied = ch->denied;
	limited = ch->limited;
	if (!polled) {
		ch->doorbells++;
		WRITE_ONCE(c->doorbells, (u32)ch->doorbells);
	}
	prod = READ_ONCE(c->sq_prod);
	n = prod - ch->sq_cons;
	unconsumed = ch->cq_prod - READ_ONCE(c->cq_cons);
	if (!polled)
		trace_nvx_uvm_doorbell(ch->vm_id, n);
	if (n > ch->sq_n) {
		reason = NVX_UVM_ERR_RING;
		detail = prod;
	} else if (unconsumed > ch->cq_n) {
		reason = NVX_UVM_ERR_RING;
		detail = ch->cq_prod - unconsumed;
	}
	n = min(n, max);
	nvx_uvm_pol_get(ch, &pol);
	/*
	 * The guest's writes to the ring happened before its out, or (the
	 * poller) before its store of sq_prod, read above.
	 */
	smp_rmb();
	while (!reason && !ch->reason && n--) {
		/* answers written meanwhile count against the credit too */
		unconsumed = ch->cq_prod - READ_ONCE(c->cq_cons);
		if (unconsumed > ch->cq_n) {
			reason = NVX_UVM_ERR_RING;
			detail = ch->cq_prod - unconsumed;
			break;
		}
		if (ch->in_flight + unconsumed >= ch->cq_n) {
			reason = NVX_UVM_ERR_FLOOD;
			detail = ch->sq_cons;
			break;
		}
		s = nvx_uvm_slot_get(ch);
		reason = nvx_uvm_take(ch, s, &detail);
		if (reason) {
			nvx_uvm_slot_put(ch, s);
			break;
		}
		ch->sq_cons++;
		ch->msgs_in++;
		took++;
		trace_nvx_uvm_msg_in(ch->vm_id, s->msg.src_tid, s->msg.type,
				     s->msg.tag, s->total);
		err = nvx_uvm_pol_check(ch, &pol, s);
		if (err > 0) {
			ch->limited++;
			nvx_uvm_slot_put(ch, s);
			reason = NVX_UVM_ERR_LIMIT;
			detail = err;
		} else if (err < 0) {
			nvx_uvm_answer(ch, s, err);
		} else if (s->msg.type == NVX_UVM_MSG_RECV || s->msg.dst) {
			list_add_tail(&s->node, &v2v);
		} else {
			s->state = NVX_UVM_SLOT_QUEUED;
			list_add_tail(&s->node, &batch);
			taken++;
		}
	}
	WRITE_ONCE(c->sq_cons, ch->sq_cons);
	if (polled)
		ch->polled += took;

	spin_lock(&ep->lock);
	if (ep->dead && !reason) {
		reason = NVX_UVM_ERR_ENDPOINT;
		detail = ep->id;
	}
	if (!reason && !ch->reason) {
		ep->queued += taken;
		ep->msgs_in += taken;
		list_splice_tail_init(&batch, &ep->queue);
		list_for_each_entry_safe(s, tmp, &v2v, node) {
			list_del(&s->node);
			s->err = nvx_uvm_v2v_queue(ch, s, &moves);
			if (s->err)
				list_add_tail(&s->node, &bounced);
		}
	}
	ep->denied += ch->denied - denied;
	ep->limited += ch->limited - limited;
	spin_unlock(&ep->lock);
	if (reason || ch->reason) {
		nvx_uvm_drop(ch, &batch);
		nvx_uvm_drop(ch, &v2v);
		nvx_uvm_fail(ch, reason, detail);
	} else {
		list_for_each_entry_safe(s, tmp, &bounced, node) {
			list_del(&s->node);
			nvx_uvm_answer(ch, s, s->err);
		}
		/* receivers wait exclusively: one per message */
		if (taken) {
			wake_up_nr(&ep->wq, taken);
			nvx_uvm_ep_notify(ep);
		}
	}
out:
	mutex_unlock(&ch->lock);
	nvx_uvm_v2v_run(&moves);
	return took;
}

/*
 * A guest's write to a port of the channel, from the vCPU's exit path
 * (fast path) or passed on by the VMM (KICK): the doorbell, or a port
 * nobody owns, which stops the VM.
 */
static void nvx_uvm_port_write(struct nvx_uvm_chan *ch, u64 port)
{
	if (port != NVX_UVM_PORT_DOORBELL) {
		mutex_lock(&ch->lock);
		nvx_uvm_fail(ch, NVX_UVM_ERR_PORT, port);
		mutex_unlock(&ch->lock);
		return;
	}
	nvx_uvm_sq_take(ch, U32_MAX, false);
	/* a sleeping poller takes over from here (poll.c) */
	if (!ch->slow)
		nvx_uvm_poller_kick(ch->ep);
}

static int nvx_uvm_iodev_write(struct kvm_vcpu *vcpu,
			       struct kvm_io_device *dev, gpa_t addr, int len,
			       const void *val)
{
	nvx_uvm_port_write(container_of(dev, struct nvx_uvm_chan, iodev),
			   addr);
	return 0;
}

/* No destructor: the channel owns the device and frees it with itself. */
static const struct kvm_io_device_ops nvx_uvm_iodev_ops = {
	.write = nvx_uvm_iodev_write,
};

/*
 * Detach from the endpoint: drop queued requests and, when @notify, leave
 * the VM_GONE notice for the system process.
 */
static void nvx_uvm_detach(struct nvx_uvm_chan *ch, bool notify,
			   struct list_head *moves)
{
	struct nvx_uvm_ep *ep = ch->ep;
	struct nvx_uvm_slot *s, *tmp;

	lockdep_assert_held(&ch->lock);
	spin_lock(&ep->lock);
	nvx_uvm_v2v_detach(ch, moves);
	list_for_each_entry_safe(s, tmp, &ep->queue, node) {
		if (s->ch != ch)
			continue;
		list_del(&s->node);
		ep->queued--;
		nvx_uvm_slot_put(ch, s);
	}
	ep->taken -= ch->taken;
	xa_erase(&ep->vms, ch->vm_id);
	ep->nr_vms--;
	ch->detached = true;
	if (!notify) {
		spin_unlock(&ep->lock);
		return;
	}
	ch->gone->msg.type = NVX_UVM_MSG_VM_GONE;
	ch->gone->msg.src_vm = ch->vm_id;
	ch->gone->msg.status = -(s32)ch->reason;
	memcpy(ch->gone->msg.payload, &ch->detail, sizeof(ch->detail));
	list_add_tail(&ch->gone->node, &ep->gone);
	ep->nr_gone++;
	ch->gone = NULL;
	spin_unlock(&ep->lock);
	wake_up(&ep->wq);
	nvx_uvm_ep_notify(ep);
}

static int nvx_uvm_chan_release(struct inode *inode, struct file *file)
{
	struct nvx_uvm_chan *ch = file->private_data;
	LIST_HEAD(moves);
	bool notify;

	/* first: no vCPU is inside the doorbell once this returns */
	if (ch->registered) {
		mutex_lock(&ch->kvm->slots_lock);
		kvm_io_bus_unregister_dev(ch->kvm, KVM_PIO_BUS, &ch->iodev);
		mutex_unlock(&ch->kvm->slots_lock);
	}
	mutex_lock(&ch->lock);
	if (!ch->reason) {
		WRITE_ONCE(ch->reason, NVX_UVM_DETACHED);
		trace_nvx_uvm_fail(ch->vm_id, ch->reason, 0);
	}
	/* ATTACH's lost result: a notice only if the VM was seen */
	notify = !ch->quiet || ch->msgs_in || ch->vm2vm_in || ch->vm2vm_out;
	nvx_uvm_detach(ch, notify, &moves);
	mutex_unlock(&ch->lock);
	/*
	 * Only now may the VM be attached again: nothing of ours writes its
	 * control page once the reason is set (the poller's flag included).
	 */
	mutex_lock(&nvx_uvm_chans_lock);
	list_del(&ch->node);
	mutex_unlock(&nvx_uvm_chans_lock);
	/*
	 * With a reason set nvx_uvm_fail() queues no more bounces; the one
	 * queued before (if any) has nothing left to do after the detach.
	 */
	if (cancel_work_sync(&ch->bounce))
		nvx_uvm_chan_put(ch);
	nvx_uvm_v2v_run(&moves);
	nvx_uvm_chan_put(ch);
	return 0;
}

static void nvx_uvm_status_fill(struct nvx_uvm_chan *ch,
				struct nvx_uvm_status *st)
{
	mutex_lock(&ch->lock);
	st->reason = ch->reason;
	st->detail = ch->detail;
	st->vm_id = ch->vm_id;
	st->in_flight = ch->in_flight;
	st->doorbells = ch->doorbells;
	st->msgs_in = ch->msgs_in;
	st->msgs_out = ch->msgs_out;
	st->bulk_out = ch->bulk_out;
	st->bulk_in = ch->bulk_in;
	st->irqs = ch->irqs;
	st->denied = ch->denied;
	st->limited = ch->limited;
	st->vm2vm_out = ch->vm2vm_out;
	st->vm2vm_in = ch->vm2vm_in;
	st->polled = ch->polled;
	mutex_unlock(&ch->lock);
}

static int nvx_uvm_chan_ioc_status(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_status *st = ucmd->arg;

	if (st->flags)
		return -EINVAL;
	nvx_uvm_status_fill(ucmd->file->private_data, st);
	return 0;
}

static int nvx_uvm_chan_ioc_kick(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_chan *ch = ucmd->file->private_data;
	struct nvx_uvm_kick *k = ucmd->arg;

	if (k->flags || k->reserved || !ch->slow)
		return -EINVAL;
	nvx_uvm_port_write(ch, k->port);
	return 0;
}

static const struct nvx_ioctl_op nvx_uvm_chan_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_UVM_CHAN_BASE, NVX_UVM_CHAN_IOC_STATUS,
		     nvx_uvm_chan_ioc_status, struct nvx_uvm_status, irqs, 0),
	NVX_IOCTL_OP(NVX_IOC_UVM_CHAN_BASE, NVX_UVM_CHAN_IOC_KICK,
		     nvx_uvm_chan_ioc_kick, struct nvx_uvm_kick, reserved, 0),
};

/* /proc/PID/fdinfo/N of a channel: its VM, state and counters. */
static void nvx_uvm_chan_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct nvx_uvm_chan *ch = file->private_data;

	/*
	 * A snapshot without ch->lock: reading an fd's fdinfo must not wait
	 * for a doorbell or a reply in progress.
	 */
	seq_puts(m, "nvx-object:\tuvm-channel\n");
	seq_printf(m, "vm_id:\t%u\n", ch->vm_id);
	seq_printf(m, "endpoint:\t%u\n", ch->ep ? ch->ep->id : 0);
	seq_printf(m, "mem_size:\t%llu\n", ch->mem_size);
	seq_printf(m, "fast_path:\t%d\n", !ch->slow);
	seq_printf(m, "reason:\t%u\n", READ_ONCE(ch->reason));
	seq_printf(m, "in_flight:\t%u\n", READ_ONCE(ch->in_flight));
	seq_printf(m, "doorbells:\t%llu\n", READ_ONCE(ch->doorbells));
	seq_printf(m, "msgs_in:\t%llu\n", READ_ONCE(ch->msgs_in));
	seq_printf(m, "msgs_out:\t%llu\n", READ_ONCE(ch->msgs_out));
	seq_printf(m, "irqs:\t%llu\n", READ_ONCE(ch->irqs));
	seq_printf(m, "denied:\t%llu\n", READ_ONCE(ch->denied));
	seq_printf(m, "limited:\t%llu\n", READ_ONCE(ch->limited));
	seq_printf(m, "vm2vm_out:\t%llu\n", READ_ONCE(ch->vm2vm_out));
	seq_printf(m, "vm2vm_in:\t%llu\n", READ_ONCE(ch->vm2vm_in));
	seq_printf(m, "polled:\t%llu\n", READ_ONCE(ch->polled));
}

DEFINE_NVX_FOPS(nvx_uvm_chan, NVX_IOC_UVM_CHAN_BASE, nvx_uvm_chan_ops,
		.release = nvx_uvm_chan_release,
		.show_fdinfo = nvx_uvm_chan_show_fdinfo);

static int nvx_uvm_check_attach(struct nvx_uvm_attach *a)
{
	if (a->flags & ~NVX_UVM_ATTACH_FLAGS || a->reserved)
		return -EINVAL;
	a->sq_entries = a->sq_entries ?: NVX_UVM_DEF_ENTRIES;
	a->cq_entries = a->cq_entries ?: NVX_UVM_DEF_ENTRIES;
	if (!is_power_of_2(a->sq_entries) ||
	    a->sq_entries > NVX_UVM_MAX_ENTRIES ||
	    !is_power_of_2(a->cq_entries) ||
	    a->cq_entries > NVX_UVM_MAX_ENTRIES)
		return -EINVAL;
	if (!PAGE_ALIGNED(a->ctrl_gpa) ||
	    !IS_ALIGNED(a->sq_gpa, NVX_UVM_MSG_SIZE) ||
	    !IS_ALIGNED(a->cq_gpa, NVX_UVM_MSG_SIZE))
		return -EINVAL;
	return 0;
}

static bool nvx_uvm_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* Place the control page and rings in guest RAM; ch->mem_size is set. */
static int nvx_uvm_place(struct nvx_uvm_chan *ch,
			 const struct nvx_uvm_attach *a)
{
	u64 sql = (u64)a->sq_entries * NVX_UVM_MSG_SIZE;
	u64 cql = (u64)a->cq_entries * NVX_UVM_MSG_SIZE;

	if (!nvx_uvm_range_ok(ch, a->ctrl_gpa, PAGE_SIZE) ||
	    !nvx_uvm_range_ok(ch, a->sq_gpa, sql) ||
	    !nvx_uvm_range_ok(ch, a->cq_gpa, cql))
		return -ENOSPC;
	if (nvx_uvm_overlap(a->ctrl_gpa, PAGE_SIZE, a->sq_gpa, sql) ||
	    nvx_uvm_overlap(a->ctrl_gpa, PAGE_SIZE, a->cq_gpa, cql) ||
	    nvx_uvm_overlap(a->sq_gpa, sql, a->cq_gpa, cql))
		return -EINVAL;
	return 0;
}

/*
 * Make the pages the kernel writes without a request in hand (the
 * control page, the CQ) the guest's own, once: for a clone, its copies,
 * which stay its pages; nvx_uvm_copy() then never has a copy to make.
 * Sets ch->ctrl.
 */
static int nvx_uvm_own(struct nvx_uvm_chan *ch, u64 ctrl_gpa)
{
	u64 end = ch->cq_gpa + (u64)ch->cq_n * NVX_UVM_MSG_SIZE, gpa;
	struct page *page;

	page = nvx_uvm_page_w(ch, ctrl_gpa);
	if (IS_ERR(page))
		return PTR_ERR(page);
	ch->ctrl = page_address(page);
	for (gpa = ch->cq_gpa & PAGE_MASK; gpa < end; gpa += PAGE_SIZE) {
		page = nvx_uvm_page_w(ch, gpa);
		if (IS_ERR(page))
			return PTR_ERR(page);
	}
	return 0;
}

/*
 * The file of @fd with a reference, when @is_type says it is of the kind
 * wanted; ERR_PTR(-EBADF) or ERR_PTR(-EINVAL) otherwise.
 */
static struct file *nvx_uvm_fget(int fd, bool (*is_type)(struct file *))
{
	struct file *f = fget(fd);

	if (!f)
		return ERR_PTR(-EBADF);
	if (!is_type(f)) {
		fput(f);
		return ERR_PTR(-EINVAL);
	}
	return f;
}

/* Take the KVM VM of @fd; one channel per VM. */
static int nvx_uvm_get_kvm(struct nvx_uvm_chan *ch, int fd)
{
	struct nvx_uvm_chan *o;
	struct file *f;
	int ret = 0;

	f = nvx_uvm_fget(fd, file_is_kvm);
	if (IS_ERR(f))
		return PTR_ERR(f);
	mutex_lock(&nvx_uvm_chans_lock);
	list_for_each_entry(o, &nvx_uvm_chans, node) {
		if (o->kvm == f->private_data) {
			ret = -EBUSY;
			break;
		}
	}
	if (!ret) {
		ch->kvm = f->private_data;
		kvm_get_kvm(ch->kvm);
		list_add(&ch->node, &nvx_uvm_chans);
	}
	mutex_unlock(&nvx_uvm_chans_lock);
	fput(f);
	return ret;
}

/*
 * Take a reference on the endpoint of @fd and an id in it: a place in
 * its table, not yet visible (nvx_uvm_publish() stores the channel).
 */
static int nvx_uvm_join(struct nvx_uvm_chan *ch, int fd)
{
	struct nvx_uvm_ep *ep;
	struct file *f;
	u32 id;
	int ret = 0;

	f = nvx_uvm_fget(fd, nvx_uvm_is_ep);
	if (IS_ERR(f))
		return PTR_ERR(f);
	ep = f->private_data;
	spin_lock(&ep->lock);
	if (ep->dead)
		ret = -ENXIO;
	else if (ep->nr_vms >= ep->max_vms ||
		 ep->nr_gone >= NVX_UVM_MAX_GONE)	/* nobody receives */
		ret = -EBUSY;
	else
		ep->nr_vms++;
	spin_unlock(&ep->lock);
	if (!ret) {
		/* cyclic: a stale cookie or notice never names a newer VM */
		ret = xa_alloc_cyclic(&ep->vms, &id, NULL,
				      XA_LIMIT(1, INT_MAX), &ep->next_id,
				      GFP_KERNEL_ACCOUNT);
		if (ret < 0) {
			spin_lock(&ep->lock);
			ep->nr_vms--;
			spin_unlock(&ep->lock);
		} else {
			ret = 0;
			kref_get(&ep->ref);
			ch->ep = ep;
			ch->vm_id = id;
		}
	}
	fput(f);
	return ret;
}

/* Make the VM visible in its endpoint: REPLY, VM-to-VM, policies. */
static void nvx_uvm_publish(struct nvx_uvm_chan *ch)
{
	struct nvx_uvm_ep *ep = ch->ep;

	spin_lock(&ep->lock);
	/* the entry is reserved: storing into it allocates nothing */
	xa_store(&ep->vms, ch->vm_id, ch, GFP_ATOMIC);
	ep->attached++;
	spin_unlock(&ep->lock);
}

static void nvx_uvm_init_ctrl(struct nvx_uvm_chan *ch)
{
	struct nvx_uvm_ctrl *c = ch->ctrl;

	c->magic = NVX_UVM_CTRL_MAGIC;
	c->version = NVX_UVM_CTRL_VERSION;
	c->vm_id = ch->vm_id;
	c->ctrl_size = sizeof(*c);
	c->mem_size = ch->mem_size;
	c->sq_gpa = ch->sq_gpa;
	c->cq_gpa = ch->cq_gpa;
	c->sq_entries = ch->sq_n;
	c->cq_entries = ch->cq_n;
	get_random_bytes(c->seed, sizeof(c->seed));
	c->credits = 0;
	c->flags = 0;
	c->sq_prod = 0;
	c->sq_cons = 0;
	c->cq_prod = 0;
	c->cq_cons = 0;
	c->doorbells = 0;
	c->sq_flags = 0;
}

/*
 * ATTACH's channel fd never reached the VMM (the argument struct was
 * unmapped or protected during the call): the dispatcher drops the file.
 * Its release leaves no VM_GONE notice when nothing of the VM reached
 * the endpoint by then (no request, no VM-to-VM message), so the system
 * process never learnt of it; a VM whose vCPU already rang gets its
 * notice as any other.
 */
static void nvx_uvm_attach_finish(struct nvx_ucmd *ucmd, bool copied)
{
	struct nvx_uvm_chan *ch = ucmd->priv;

	if (copied)
		return;
	mutex_lock(&ch->lock);
	ch->quiet = true;	/* see nvx_uvm_chan_release() */
	mutex_unlock(&ch->lock);
}

/* NVX_IOC_UVM_ATTACH: a VM's channel to an endpoint, as a new fd */
static int nvx_uvm_ioc_attach(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_attach *a = ucmd->arg;
	LIST_HEAD(moves);
	struct nvx_uvm_chan *ch;
	u32 i;
	int ret;

	ret = nvx_uvm_check_attach(a);
	if (ret)
		return ret;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	kref_init(&ch->ref);
	mutex_init(&ch->lock);
	INIT_LIST_HEAD(&ch->node);
	ch->sq_n = a->sq_entries;
	ch->cq_n = a->cq_entries;
	ch->sq_gpa = a->sq_gpa;
	ch->cq_gpa = a->cq_gpa;
	ch->slow = a->flags & NVX_UVM_ATTACH_SLOW;
	INIT_LIST_HEAD(&ch->inbox);
	INIT_LIST_HEAD(&ch->recvs);
	INIT_WORK(&ch->bounce, nvx_uvm_bounce_work);

	ch->grant = nvx_grant_fget_flags(a->grant_fd, &ch->grant_file,
					 NVX_GRANT_FGET_CLONES);
	if (IS_ERR(ch->grant)) {
		ret = PTR_ERR(ch->grant);
		ch->grant = NULL;
		ch->grant_file = NULL;
		goto err;
	}
	ch->mem_size = nvx_grant_bytes(ch->grant);
	ret = nvx_uvm_place(ch, a);
	if (ret)
		goto err;
	if (a->irq_fd != -1) {
		/*
		 * Hold the file, not only the context: KVM's irqfd goes away
		 * when the eventfd file is released, and a stopped VM's
		 * halted vCPU is woken through it.
		 */
		ch->irq_file = fget(a->irq_fd);
		ret = -EBADF;
		if (!ch->irq_file)
			goto err;
		ch->irq = eventfd_ctx_fileget(ch->irq_file);
		if (IS_ERR(ch->irq)) {
			ret = PTR_ERR(ch->irq);
			ch->irq = NULL;
			goto err;
		}
	}
	ret = -ENOMEM;
	ch->slots = kvcalloc(ch->cq_n, sizeof(*ch->slots), GFP_KERNEL_ACCOUNT);
	ch->free = kcalloc(ch->cq_n, sizeof(*ch->free), GFP_KERNEL_ACCOUNT);
	ch->gone = kzalloc(sizeof(*ch->gone), GFP_KERNEL_ACCOUNT);
	if (!ch->slots || !ch->free || !ch->gone)
		goto err;
	for (i = 0; i < ch->cq_n; i++) {
		ch->slots[i].idx = i;
		ch->slots[i].ch = ch;
		ch->free[i] = ch->cq_n - 1 - i;
	}
	ch->nr_free = ch->cq_n;

	ret = nvx_uvm_get_kvm(ch, a->vm_fd);
	if (ret)
		goto err;
	ret = nvx_uvm_join(ch, a->ep_fd);
	if (ret)
		goto err;
	/* copies of a clone's pages only for an ATTACH that can succeed */
	ret = nvx_uvm_own(ch, a->ctrl_gpa);
	if (ret)
		goto err_detach;
	nvx_uvm_init_ctrl(ch);

	if (!ch->slow) {
		kvm_iodevice_init(&ch->iodev, &nvx_uvm_iodev_ops);
		mutex_lock(&ch->kvm->slots_lock);
		ret = kvm_io_bus_register_dev(ch->kvm, KVM_PIO_BUS,
					      NVX_UVM_PORT_DOORBELL, 4,
					      &ch->iodev);
		mutex_unlock(&ch->kvm->slots_lock);
		if (ret)
			goto err_detach;
		ch->registered = true;
	}
	ret = nvx_anon_fd(ucmd, "[nvx-uvm]", &nvx_uvm_chan_fops, ch,
			  a->flags & NVX_UVM_ATTACH_CLOEXEC ? O_CLOEXEC : 0);
	if (ret < 0)
		goto err_unregister;
	/* nothing fails from here: the endpoint may stop it, REPLY to it */
	nvx_uvm_publish(ch);
	a->fd = ret;
	a->vm_id = ch->vm_id;
	a->mem_size = ch->mem_size;
	ucmd->finish = nvx_uvm_attach_finish;
	ucmd->priv = ch;
	return 0;

err_unregister:
	if (ch->registered) {
		mutex_lock(&ch->kvm->slots_lock);
		kvm_io_bus_unregister_dev(ch->kvm, KVM_PIO_BUS, &ch->iodev);
		mutex_unlock(&ch->kvm->slots_lock);
	}
err_detach:
	mutex_lock(&ch->lock);
	WRITE_ONCE(ch->reason, NVX_UVM_DETACHED);
	nvx_uvm_detach(ch, false, &moves);
	mutex_unlock(&ch->lock);
	/* a doorbell of a VMM that ran the vCPU early may have stopped it */
	if (cancel_work_sync(&ch->bounce))
		nvx_uvm_chan_put(ch);
	/* unpublished: no other VM could message it; for form's sake */
	nvx_uvm_v2v_run(&moves);
err:
	mutex_lock(&nvx_uvm_chans_lock);
	list_del(&ch->node);
	mutex_unlock(&nvx_uvm_chans_lock);
	nvx_uvm_chan_put(ch);
	return ret;
}

static const struct nvx_ioctl_op nvx_uvm_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_UVM_BASE, NVX_IOC_UVM_ENDPOINT,
		     nvx_uvm_ioc_endpoint, struct nvx_uvm_endpoint, ep_id, 0),
	NVX_IOCTL_OP(NVX_IOC_UVM_BASE, NVX_IOC_UVM_ATTACH, nvx_uvm_ioc_attach,
		     struct nvx_uvm_attach, mem_size, 0),
};

static struct nvx_ioctl_range nvx_uvm_range =
	NVX_IOCTL_RANGE(NVX_IOC_UVM_BASE, nvx_uvm_ops, NVX_FEAT_UVM);

static int nvx_uvm_stats_show(struct seq_file *m, void *unused)
{
	struct nvx_uvm_chan *ch;
	unsigned int n = 0;

	mutex_lock(&nvx_uvm_chans_lock);
	list_for_each_entry(ch, &nvx_uvm_chans, node)
		n++;
	mutex_unlock(&nvx_uvm_chans_lock);
	seq_printf(m, "channels %u\n", n);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvx_uvm_stats);

static struct dentry *nvx_uvm_debugfs;

static int __init nvx_uvm_init(void)
{
	int ret;

	ret = nvx_register_ioctls(&nvx_uvm_range);
	if (ret)
		return ret;
	nvx_uvm_debugfs = debugfs_create_dir("uvm", nvx_debugfs_dir());
	debugfs_create_file("stats", 0444, nvx_uvm_debugfs, NULL,
			    &nvx_uvm_stats_fops);
	return 0;
}

static void __exit nvx_uvm_exit(void)
{
	/* every channel and endpoint file held this module: none is left */
	debugfs_remove_recursive(nvx_uvm_debugfs);
	nvx_unregister_ioctls(&nvx_uvm_range);
}

module_init(nvx_uvm_init);
module_exit(nvx_uvm_exit);

MODULE_DESCRIPTION("nvx: light user VMs with an in-kernel PMIO fast path");
MODULE_LICENSE("GPL");
