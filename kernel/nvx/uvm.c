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
 * on detach (unregistering waits for SRCU readers).
 *
 * Lifetimes: a channel is kref-counted (its fd, RECV/REPLY in progress,
 * an endpoint being released); it holds the KVM VM, the grant file, the
 * irqfd's eventfd and the endpoint (kref, not the file: closing the
 * endpoint's file is how a system process goes away).
 */

#include <linux/anon_inodes.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/kvm_host.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <kvm/iodev.h>
#include <uapi/nvx/uvm.h>

#include "internal.h"
#include "trace.h"

#define NVX_UVM_MSG_SIZE	sizeof(struct nvx_uvm_msg)
#define NVX_UVM_DEF_VMS		16

enum nvx_uvm_slot_state {
	NVX_UVM_SLOT_FREE,
	NVX_UVM_SLOT_QUEUED,	/* on the endpoint's queue */
	NVX_UVM_SLOT_TAKEN,	/* received, waiting for the reply */
};

struct nvx_uvm_chan;

/* One request of a guest, from the doorbell to its completion. */
struct nvx_uvm_slot {
	struct list_head node;		/* ep->queue while QUEUED */
	struct nvx_uvm_chan *ch;
	u16 idx;
	u16 gen;			/* bumped on every reuse */
	u8 state;
	u32 total;			/* bytes the segments cover */
	u32 pushed;			/* PUSH bytes the receiver took */
	struct nvx_uvm_msg msg;
	struct nvx_uvm_sg sg[NVX_UVM_MAX_SG];
};

/* The VM_GONE notice a channel leaves behind on its endpoint. */
struct nvx_uvm_gone {
	struct list_head node;
	struct nvx_uvm_msg msg;
};

struct nvx_uvm_ep {
	struct kref ref;
	spinlock_t lock;		/* the fields below, the queues */
	wait_queue_head_t wq;
	struct list_head queue;		/* QUEUED slots, oldest first */
	struct list_head gone;		/* struct nvx_uvm_gone */
	struct nvx_uvm_chan **vms;	/* max_vms entries, NULL = free */
	u32 id;
	u32 max_vms;
	u32 nr_vms;
	u32 queued;
	u32 taken;
	u32 nr_gone;
	bool dead;			/* its file was released */
	u64 msgs_in;
	u64 msgs_out;
	u64 attached;
};

struct nvx_uvm_chan {
	struct kref ref;
	struct mutex lock;		/* rings, slots, state, counters */
	struct kvm_io_device iodev;
	struct list_head node;		/* nvx_uvm_chans */
	struct kvm *kvm;
	struct nvx_grant *grant;
	struct file *grant_file;
	struct nvx_uvm_ep *ep;
	struct eventfd_ctx *irq;
	struct file *irq_file;		/* keeps the VMM's irqfd wired */
	struct nvx_uvm_ctrl *ctrl;	/* in the direct map */
	u64 mem_size;
	u64 sq_gpa;
	u64 cq_gpa;
	u32 sq_n;
	u32 cq_n;
	u32 sq_cons;			/* ours; the guest's copy is a hint */
	u32 cq_prod;
	u32 in_flight;
	u32 taken;			/* slots TAKEN (for ep->taken) */
	u32 vm_id;
	u32 ep_idx;
	u32 reason;
	u64 detail;
	bool slow;
	bool registered;
	bool detached;
	u16 nr_free;
	u16 *free;
	struct nvx_uvm_slot *slots;
	struct nvx_uvm_gone *gone;	/* until queued on the endpoint */
	u64 doorbells;
	u64 msgs_in;
	u64 msgs_out;
	u64 bulk_out;
	u64 bulk_in;
	u64 irqs;
};

static DEFINE_IDA(nvx_uvm_ep_ids);
/*
 * Channels by VM, so that a VM gets at most one, and VM ids, allocated
 * cyclically so that a stale cookie or notice never names a newer VM.
 */
static DEFINE_MUTEX(nvx_uvm_chans_lock);
static LIST_HEAD(nvx_uvm_chans);
static DEFINE_IDR(nvx_uvm_vm_idr);

static const struct file_operations nvx_uvm_ep_fops;

/* ------------------------------------------------------ guest memory --- */

static bool nvx_uvm_range_ok(const struct nvx_uvm_chan *ch, u64 gpa, u64 len)
{
	return gpa < ch->mem_size && len <= ch->mem_size - gpa;
}

static struct page *nvx_uvm_page(struct nvx_uvm_chan *ch, u64 gpa)
{
	return nvx_grant_page(ch->grant, gpa >> PAGE_SHIFT);
}

/* Copy between a checked guest range and a kernel buffer. */
static void nvx_uvm_copy(struct nvx_uvm_chan *ch, u64 gpa, void *buf,
			 size_t len, bool to_guest)
{
	while (len) {
		size_t off = offset_in_page(gpa);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		void *va = kmap_local_page(nvx_uvm_page(ch, gpa));

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
 * copied (short on a fault).
 */
static size_t nvx_uvm_copy_user(struct nvx_uvm_chan *ch, u64 gpa,
				void __user *ubuf, size_t len, bool to_guest)
{
	size_t done = 0;

	while (done < len) {
		size_t off = offset_in_page(gpa);
		size_t n = min_t(size_t, len - done, PAGE_SIZE - off);
		void *va = kmap_local_page(nvx_uvm_page(ch, gpa));
		size_t left;

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

/*
 * Move up to @len bytes between a slot's segments and user memory;
 * returns the bytes moved or -EFAULT when nothing could be.
 */
static long nvx_uvm_sg_user(struct nvx_uvm_chan *ch,
			    const struct nvx_uvm_sg *sg, u32 nr,
			    void __user *ubuf, u32 len, bool to_guest)
{
	u32 i, done = 0;

	for (i = 0; i < nr && done < len; i++) {
		u32 n = min(len - done, sg[i].len);
		size_t got = nvx_uvm_copy_user(ch, sg[i].gpa, ubuf + done,
					       n, to_guest);

		done += got;
		if (got < n)
			return -EFAULT;
	}
	return done;
}

/* ----------------------------------------------------------- channel --- */

static void nvx_uvm_ep_free(struct kref *ref)
{
	struct nvx_uvm_ep *ep = container_of(ref, struct nvx_uvm_ep, ref);
	struct nvx_uvm_gone *g, *tmp;

	list_for_each_entry_safe(g, tmp, &ep->gone, node)
		kfree(g);
	ida_free(&nvx_uvm_ep_ids, ep->id);
	kfree(ep->vms);
	kfree(ep);
}

static void nvx_uvm_chan_free(struct kref *ref)
{
	struct nvx_uvm_chan *ch = container_of(ref, struct nvx_uvm_chan, ref);

	if (ch->irq)
		eventfd_ctx_put(ch->irq);
	if (ch->irq_file)
		fput(ch->irq_file);
	if (ch->grant_file)
		fput(ch->grant_file);
	if (ch->kvm)
		kvm_put_kvm(ch->kvm);
	if (ch->ep)
		kref_put(&ch->ep->ref, nvx_uvm_ep_free);
	if (ch->vm_id) {
		mutex_lock(&nvx_uvm_chans_lock);
		idr_remove(&nvx_uvm_vm_idr, ch->vm_id);
		mutex_unlock(&nvx_uvm_chans_lock);
	}
	kfree(ch->gone);
	kvfree(ch->slots);
	kfree(ch->free);
	kfree(ch);
}

static void nvx_uvm_chan_put(struct nvx_uvm_chan *ch)
{
	kref_put(&ch->ref, nvx_uvm_chan_free);
}

static void nvx_uvm_signal(struct nvx_uvm_chan *ch)
{
	if (ch->irq) {
		eventfd_signal(ch->irq);
		ch->irqs++;
	}
}

/*
 * KVM_REQ_VM_DEAD does not wake a halted vCPU, and a VMM may have torn
 * down its irqfd already (closing the VM fd does). Unhalt every vCPU the
 * way KVM's own PV kick does (x86): the vCPU becomes runnable, and its
 * next entry sees the VM dead and returns -EIO to the VMM.
 */
static void nvx_uvm_unhalt_all(struct kvm *kvm)
{
	struct kvm_vcpu *vcpu;
	unsigned long i;

	kvm_for_each_vcpu(i, vcpu, kvm) {
		WRITE_ONCE(vcpu->arch.pv.pv_unhalted, true);
		kvm_make_request(KVM_REQ_EVENT, vcpu);
		kvm_vcpu_kick(vcpu);
	}
}

/*
 * Stop the VM for @reason: KVM_RUN fails with -EIO from now on and a
 * halted vCPU is woken to notice. Called with ch->lock held.
 */
static void nvx_uvm_fail(struct nvx_uvm_chan *ch, u32 reason, u64 detail)
{
	lockdep_assert_held(&ch->lock);
	if (ch->reason)
		return;
	ch->reason = reason;
	ch->detail = detail;
	trace_nvx_uvm_fail(ch->vm_id, reason, detail);
	kvm_vm_dead(ch->kvm);
	nvx_uvm_unhalt_all(ch->kvm);
	nvx_uvm_signal(ch);
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

static void nvx_uvm_slot_put(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s)
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

/*
 * The doorbell: take every new submission entry and queue it for the
 * endpoint. Runs in the vCPU thread (fast path) or in the VMM's KICK.
 */
static void nvx_uvm_doorbell(struct nvx_uvm_chan *ch)
{
	struct nvx_uvm_ctrl *c = ch->ctrl;
	struct nvx_uvm_ep *ep = ch->ep;
	LIST_HEAD(batch);
	struct nvx_uvm_slot *s, *tmp;
	u32 prod, n, unconsumed, reason = 0, taken = 0;
	u64 detail = 0;

	mutex_lock(&ch->lock);
	if (ch->reason)
		goto out;
	ch->doorbells++;
	WRITE_ONCE(c->doorbells, (u32)ch->doorbells);
	prod = READ_ONCE(c->sq_prod);
	n = prod - ch->sq_cons;
	unconsumed = ch->cq_prod - READ_ONCE(c->cq_cons);
	trace_nvx_uvm_doorbell(ch->vm_id, n);
	if (n > ch->sq_n) {
		reason = NVX_UVM_ERR_RING;
		detail = prod;
	} else if (unconsumed > ch->cq_n) {
		reason = NVX_UVM_ERR_RING;
		detail = ch->cq_prod - unconsumed;
	}
	/* the guest's writes to the ring happened before its out */
	smp_rmb();
	while (!reason && n--) {
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
		s->state = NVX_UVM_SLOT_QUEUED;
		list_add_tail(&s->node, &batch);
		ch->sq_cons++;
		ch->msgs_in++;
		taken++;
		trace_nvx_uvm_msg_in(ch->vm_id, s->msg.src_tid, s->msg.type,
				     s->msg.tag, s->total);
	}
	WRITE_ONCE(c->sq_cons, ch->sq_cons);

	spin_lock(&ep->lock);
	if (ep->dead && !reason) {
		reason = NVX_UVM_ERR_ENDPOINT;
		detail = ep->id;
	}
	if (!reason) {
		ep->queued += taken;
		ep->msgs_in += taken;
		list_splice_tail_init(&batch, &ep->queue);
	}
	spin_unlock(&ep->lock);
	if (reason) {
		list_for_each_entry_safe(s, tmp, &batch, node) {
			list_del(&s->node);
			nvx_uvm_slot_put(ch, s);
		}
		nvx_uvm_fail(ch, reason, detail);
	} else if (taken) {
		/* receivers wait exclusively: one per message */
		wake_up_nr(&ep->wq, taken);
	}
out:
	mutex_unlock(&ch->lock);
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
	nvx_uvm_doorbell(ch);
}

static int nvx_uvm_iodev_write(struct kvm_vcpu *vcpu,
			       struct kvm_io_device *dev, gpa_t addr, int len,
			       const void *val)
{
	nvx_uvm_port_write(container_of(dev, struct nvx_uvm_chan, iodev),
			   addr);
	return 0;
}

/* KVM calls this when the device leaves the bus; the channel owns it. */
static void nvx_uvm_iodev_destructor(struct kvm_io_device *dev)
{
}

static const struct kvm_io_device_ops nvx_uvm_iodev_ops = {
	.write = nvx_uvm_iodev_write,
	.destructor = nvx_uvm_iodev_destructor,
};

/*
 * Detach from the endpoint: drop queued requests and, when @notify, leave
 * the VM_GONE notice for the system process.
 */
static void nvx_uvm_detach(struct nvx_uvm_chan *ch, bool notify)
{
	struct nvx_uvm_ep *ep = ch->ep;
	struct nvx_uvm_slot *s, *tmp;

	lockdep_assert_held(&ch->lock);
	spin_lock(&ep->lock);
	list_for_each_entry_safe(s, tmp, &ep->queue, node) {
		if (s->ch != ch)
			continue;
		list_del(&s->node);
		ep->queued--;
		nvx_uvm_slot_put(ch, s);
	}
	ep->taken -= ch->taken;
	ep->vms[ch->ep_idx] = NULL;
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
}

static int nvx_uvm_chan_release(struct inode *inode, struct file *file)
{
	struct nvx_uvm_chan *ch = file->private_data;

	/* first: no vCPU is inside the doorbell once this returns */
	if (ch->registered) {
		mutex_lock(&ch->kvm->slots_lock);
		kvm_io_bus_unregister_dev(ch->kvm, KVM_PIO_BUS, &ch->iodev);
		mutex_unlock(&ch->kvm->slots_lock);
	}
	mutex_lock(&nvx_uvm_chans_lock);
	list_del(&ch->node);
	mutex_unlock(&nvx_uvm_chans_lock);

	mutex_lock(&ch->lock);
	if (!ch->reason) {
		ch->reason = NVX_UVM_DETACHED;
		trace_nvx_uvm_fail(ch->vm_id, ch->reason, 0);
	}
	nvx_uvm_detach(ch, true);
	mutex_unlock(&ch->lock);
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
	mutex_unlock(&ch->lock);
}

static int nvx_uvm_ioc_status(struct file *file, void *argp,
			      struct nvx_new_fd *nfd)
{
	struct nvx_uvm_status *st = argp;

	if (st->flags)
		return -EINVAL;
	nvx_uvm_status_fill(file->private_data, st);
	return 0;
}

static int nvx_uvm_ioc_kick(struct file *file, void *argp,
			    struct nvx_new_fd *nfd)
{
	struct nvx_uvm_chan *ch = file->private_data;
	struct nvx_uvm_kick *k = argp;

	if (k->flags || k->pad || !ch->slow)
		return -EINVAL;
	nvx_uvm_port_write(ch, k->port);
	return 0;
}

static const struct nvx_ioctl_desc nvx_uvm_chan_ioctls[] = {
	NVX_IOCTL(NVX_UVM_IOC_STATUS, sizeof(struct nvx_uvm_status),
		  nvx_uvm_ioc_status, 0),
	NVX_IOCTL(NVX_UVM_IOC_KICK, sizeof(struct nvx_uvm_kick),
		  nvx_uvm_ioc_kick, 0),
};

static long nvx_uvm_chan_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	return nvx_ioctl_dispatch(file, cmd, arg, nvx_uvm_chan_ioctls,
				  ARRAY_SIZE(nvx_uvm_chan_ioctls));
}

static const struct file_operations nvx_uvm_chan_fops = {
	.owner = THIS_MODULE,
	.release = nvx_uvm_chan_release,
	.unlocked_ioctl = nvx_uvm_chan_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* ---------------------------------------------------------- endpoint --- */

static int nvx_uvm_ep_release(struct inode *inode, struct file *file)
{
	struct nvx_uvm_ep *ep = file->private_data;
	struct nvx_uvm_chan **chans;
	u32 i, n = 0;

	chans = kcalloc(ep->max_vms, sizeof(*chans), GFP_KERNEL | __GFP_NOFAIL);
	spin_lock(&ep->lock);
	ep->dead = true;
	for (i = 0; i < ep->max_vms; i++) {
		if (ep->vms[i]) {
			kref_get(&ep->vms[i]->ref);
			chans[n++] = ep->vms[i];
		}
	}
	spin_unlock(&ep->lock);
	for (i = 0; i < n; i++) {
		mutex_lock(&chans[i]->lock);
		nvx_uvm_fail(chans[i], NVX_UVM_ERR_ENDPOINT, ep->id);
		mutex_unlock(&chans[i]->lock);
		nvx_uvm_chan_put(chans[i]);
	}
	kfree(chans);
	kref_put(&ep->ref, nvx_uvm_ep_free);
	return 0;
}

static bool nvx_uvm_ep_ready(struct nvx_uvm_ep *ep)
{
	return !list_empty(&ep->queue) || !list_empty(&ep->gone);
}

static __poll_t nvx_uvm_ep_poll(struct file *file, poll_table *wait)
{
	struct nvx_uvm_ep *ep = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &ep->wq, wait);
	spin_lock(&ep->lock);
	if (nvx_uvm_ep_ready(ep))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock(&ep->lock);
	return mask;
}

/*
 * ep->lock held: the next message, or false. A slot's segments are
 * copied into @sg while it is still QUEUED: once TAKEN, a REPLY may free
 * it at any time.
 */
static bool nvx_uvm_ep_pop(struct nvx_uvm_ep *ep, struct nvx_uvm_recv *r,
			   struct nvx_uvm_slot **slot, struct nvx_uvm_sg *sg)
{
	struct nvx_uvm_gone *g;
	struct nvx_uvm_slot *s;

	*slot = NULL;
	g = list_first_entry_or_null(&ep->gone, struct nvx_uvm_gone, node);
	if (g) {
		list_del(&g->node);
		ep->nr_gone--;
		r->msg = g->msg;
		r->cookie = 0;
		r->data_len = 0;
		kfree(g);
		return true;
	}
	s = list_first_entry_or_null(&ep->queue, struct nvx_uvm_slot, node);
	if (!s)
		return false;
	list_del(&s->node);
	if (s->msg.flags & NVX_UVM_MSGF_PUSH)
		memcpy(sg, s->sg, s->msg.sg_nr * sizeof(*sg));
	s->state = NVX_UVM_SLOT_TAKEN;
	s->ch->taken++;
	ep->queued--;
	ep->taken++;
	kref_get(&s->ch->ref);
	r->msg = s->msg;
	r->cookie = (u64)s->ch->vm_id << 32 | (u32)s->gen << 16 | s->idx;
	r->data_len = s->total;
	*slot = s;
	return true;
}

static int nvx_uvm_ep_recv(struct file *file, void *argp,
			   struct nvx_new_fd *nfd)
{
	struct nvx_uvm_ep *ep = file->private_data;
	struct nvx_uvm_recv *r = argp;
	struct nvx_uvm_sg sg[NVX_UVM_MAX_SG];
	struct nvx_uvm_slot *s;
	struct nvx_uvm_chan *ch;
	bool nonblock;
	long got;
	u16 gen;
	int ret;

	if (r->flags & ~NVX_UVM_RECV_FLAGS)
		return -EINVAL;
	nonblock = r->flags & NVX_UVM_RECV_NONBLOCK ||
		   file->f_flags & O_NONBLOCK;
	r->pad = 0;
	for (;;) {
		spin_lock(&ep->lock);
		if (nvx_uvm_ep_pop(ep, r, &s, sg))
			break;
		spin_unlock(&ep->lock);
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible_exclusive(ep->wq,
							 nvx_uvm_ep_ready(ep));
		if (ret)
			return ret;
	}
	spin_unlock(&ep->lock);
	if (!s)
		return 0;

	ch = s->ch;
	gen = (r->cookie >> 16) & 0xffff;
	if (r->msg.flags & NVX_UVM_MSGF_PUSH) {
		/*
		 * Copy without the channel lock (the system process's page
		 * faults must not stall the vCPU's doorbell); the grant
		 * stays while we hold the channel. A REPLY racing with us on
		 * a guessed cookie may free the slot meanwhile: re-check it
		 * under the lock before touching it again.
		 */
		got = nvx_uvm_sg_user(ch, sg, r->msg.sg_nr,
				      u64_to_user_ptr(r->buf),
				      min(r->buf_len, r->data_len), false);
		mutex_lock(&ch->lock);
		if (s->state != NVX_UVM_SLOT_TAKEN || s->gen != gen) {
			got = got < 0 ? got : 0;
		} else if (got < 0) {
			/* put it back: the next RECV gets it again */
			spin_lock(&ep->lock);
			if (!ch->detached) {
				s->state = NVX_UVM_SLOT_QUEUED;
				ch->taken--;
				ep->taken--;
				ep->queued++;
				list_add(&s->node, &ep->queue);
			}
			spin_unlock(&ep->lock);
			wake_up(&ep->wq);
		} else {
			s->pushed = got;
			ch->bulk_out += got;
			trace_nvx_uvm_bulk(ch->vm_id, true, got);
		}
		mutex_unlock(&ch->lock);
		if (got < 0) {
			nvx_uvm_chan_put(ch);
			return -EFAULT;
		}
	}
	nvx_uvm_chan_put(ch);
	return 0;
}

/* The channel of @vm_id with a reference, or NULL. */
static struct nvx_uvm_chan *nvx_uvm_ep_find(struct nvx_uvm_ep *ep, u32 vm_id)
{
	struct nvx_uvm_chan *ch = NULL;
	u32 i;

	spin_lock(&ep->lock);
	for (i = 0; i < ep->max_vms; i++) {
		if (ep->vms[i] && ep->vms[i]->vm_id == vm_id) {
			ch = ep->vms[i];
			kref_get(&ch->ref);
			break;
		}
	}
	spin_unlock(&ep->lock);
	return ch;
}

/* Write the completion for TAKEN slot @s and free it; ch->lock held. */
static int nvx_uvm_complete(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s,
			    const struct nvx_uvm_msg *reply, u32 bulk_len)
{
	struct nvx_uvm_ctrl *c = ch->ctrl;
	struct nvx_uvm_ep *ep = ch->ep;
	struct nvx_uvm_msg m;
	u32 unconsumed;
	u64 gpa;

	unconsumed = ch->cq_prod - READ_ONCE(c->cq_cons);
	if (unconsumed >= ch->cq_n) {
		/* cannot happen unless the guest moved cq_cons back */
		nvx_uvm_fail(ch, NVX_UVM_ERR_RING, ch->cq_prod - unconsumed);
		return -ESRCH;
	}
	memset(&m, 0, sizeof(m));
	m.type = reply->type;
	m.flags = s->msg.flags;
	m.tag = s->msg.tag;
	m.src_vm = ch->vm_id;
	m.src_tid = s->msg.src_tid;
	m.status = reply->status;
	m.bulk_len = bulk_len;
	memcpy(m.payload, reply->payload, sizeof(m.payload));
	gpa = ch->cq_gpa + (u64)(ch->cq_prod & (ch->cq_n - 1)) *
	      NVX_UVM_MSG_SIZE;
	nvx_uvm_copy(ch, gpa, &m, sizeof(m), true);
	/* the entry before the index, the index before the credit */
	smp_wmb();
	ch->cq_prod++;
	WRITE_ONCE(c->cq_prod, ch->cq_prod);
	atomic_inc((atomic_t *)&c->credits);
	ch->msgs_out++;
	trace_nvx_uvm_msg_out(ch->vm_id, m.tag, m.status, bulk_len);

	spin_lock(&ep->lock);
	ch->taken--;
	ep->taken--;
	ep->msgs_out++;
	spin_unlock(&ep->lock);
	nvx_uvm_slot_put(ch, s);

	/* pairs with the guest's barrier between WANT_IRQ and its check */
	smp_mb();
	trace_nvx_uvm_credit(ch->vm_id, READ_ONCE(c->credits),
			     READ_ONCE(c->flags) & NVX_UVM_CTRL_WANT_IRQ);
	if (READ_ONCE(c->flags) & NVX_UVM_CTRL_WANT_IRQ)
		nvx_uvm_signal(ch);
	return 0;
}

static int nvx_uvm_ep_reply(struct file *file, void *argp,
			    struct nvx_new_fd *nfd)
{
	struct nvx_uvm_ep *ep = file->private_data;
	struct nvx_uvm_reply *r = argp;
	u32 idx = r->cookie & 0xffff, gen = (r->cookie >> 16) & 0xffff;
	struct nvx_uvm_chan *ch;
	struct nvx_uvm_slot *s;
	long got = 0;
	int ret;

	if (r->flags || !r->msg.type || r->msg.type > NVX_UVM_MSG_GUEST_MAX)
		return -EINVAL;
	ch = nvx_uvm_ep_find(ep, r->cookie >> 32);
	if (!ch)
		return -ESRCH;
	mutex_lock(&ch->lock);
	ret = -ESRCH;
	if (ch->reason)
		goto out;
	ret = -ENOENT;
	if (idx >= ch->cq_n)
		goto out;
	s = &ch->slots[idx];
	if (s->state != NVX_UVM_SLOT_TAKEN || s->gen != gen)
		goto out;
	ret = -EINVAL;
	if (r->buf_len && !(s->msg.flags & NVX_UVM_MSGF_PULL))
		goto out;
	ret = -EMSGSIZE;
	if (r->buf_len > s->total)
		goto out;
	if (r->buf_len) {
		got = nvx_uvm_sg_user(ch, s->sg, s->msg.sg_nr,
				      u64_to_user_ptr(r->buf), r->buf_len, true);
		ret = -EFAULT;
		if (got < 0)
			goto out;
		ch->bulk_in += got;
		trace_nvx_uvm_bulk(ch->vm_id, false, got);
	} else if (s->msg.flags & NVX_UVM_MSGF_PUSH) {
		got = s->pushed;
	}
	ret = nvx_uvm_complete(ch, s, &r->msg, got);
out:
	mutex_unlock(&ch->lock);
	nvx_uvm_chan_put(ch);
	return ret;
}

static int nvx_uvm_ep_stats(struct file *file, void *argp,
			    struct nvx_new_fd *nfd)
{
	struct nvx_uvm_ep *ep = file->private_data;
	struct nvx_uvm_ep_stats *st = argp;

	if (st->flags)
		return -EINVAL;
	spin_lock(&ep->lock);
	st->nr_vms = ep->nr_vms;
	st->queued = ep->queued;
	st->taken = ep->taken;
	st->gone = ep->nr_gone;
	st->max_vms = ep->max_vms;
	st->msgs_in = ep->msgs_in;
	st->msgs_out = ep->msgs_out;
	st->attached = ep->attached;
	spin_unlock(&ep->lock);
	return 0;
}

static const struct nvx_ioctl_desc nvx_uvm_ep_ioctls[] = {
	NVX_IOCTL(NVX_UVM_EP_IOC_RECV, sizeof(struct nvx_uvm_recv),
		  nvx_uvm_ep_recv, 0),
	NVX_IOCTL(NVX_UVM_EP_IOC_REPLY, sizeof(struct nvx_uvm_reply),
		  nvx_uvm_ep_reply, 0),
	NVX_IOCTL(NVX_UVM_EP_IOC_STATS, sizeof(struct nvx_uvm_ep_stats),
		  nvx_uvm_ep_stats, 0),
};

static long nvx_uvm_ep_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	return nvx_ioctl_dispatch(file, cmd, arg, nvx_uvm_ep_ioctls,
				  ARRAY_SIZE(nvx_uvm_ep_ioctls));
}

static const struct file_operations nvx_uvm_ep_fops = {
	.owner = THIS_MODULE,
	.release = nvx_uvm_ep_release,
	.poll = nvx_uvm_ep_poll,
	.unlocked_ioctl = nvx_uvm_ep_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* Reserve an fd and make the file; fills @nfd. */
static int nvx_uvm_new_fd(const char *name, const struct file_operations *fops,
			  void *priv, bool cloexec, struct nvx_new_fd *nfd)
{
	struct file *f;
	int fd;

	fd = get_unused_fd_flags(O_RDWR | (cloexec ? O_CLOEXEC : 0));
	if (fd < 0)
		return fd;
	f = anon_inode_getfile(name, fops, priv, O_RDWR);
	if (IS_ERR(f)) {
		put_unused_fd(fd);
		return PTR_ERR(f);
	}
	nfd->file = f;
	nfd->fd = fd;
	return fd;
}

/**
 * nvx_ioc_uvm_endpoint() - NVX_IOC_UVM_ENDPOINT
 * @file: /dev/nvx.
 * @argp: struct nvx_uvm_endpoint.
 * @nfd: the endpoint's new fd.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int nvx_ioc_uvm_endpoint(struct file *file, void *argp,
			 struct nvx_new_fd *nfd)
{
	struct nvx_uvm_endpoint *req = argp;
	struct nvx_uvm_ep *ep;
	int ret;

	if (req->flags & ~NVX_UVM_EP_FLAGS || req->max_vms > NVX_UVM_MAX_VMS)
		return -EINVAL;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return -ENOMEM;
	kref_init(&ep->ref);
	spin_lock_init(&ep->lock);
	init_waitqueue_head(&ep->wq);
	INIT_LIST_HEAD(&ep->queue);
	INIT_LIST_HEAD(&ep->gone);
	ep->max_vms = req->max_vms ?: NVX_UVM_DEF_VMS;
	ep->vms = kcalloc(ep->max_vms, sizeof(*ep->vms), GFP_KERNEL_ACCOUNT);
	ret = ida_alloc_min(&nvx_uvm_ep_ids, 1, GFP_KERNEL);
	if (!ep->vms || ret < 0) {
		if (ret >= 0)
			ida_free(&nvx_uvm_ep_ids, ret);
		kfree(ep->vms);
		kfree(ep);
		return ret < 0 ? ret : -ENOMEM;
	}
	ep->id = ret;
	ret = nvx_uvm_new_fd("[nvx-uvm-ep]", &nvx_uvm_ep_fops, ep,
			     req->flags & NVX_UVM_EP_CLOEXEC, nfd);
	if (ret < 0) {
		kref_put(&ep->ref, nvx_uvm_ep_free);
		return ret;
	}
	req->max_vms = ep->max_vms;
	req->fd = ret;
	req->ep_id = ep->id;
	return 0;
}

static int nvx_uvm_check_attach(struct nvx_uvm_attach *a)
{
	if (a->flags & ~NVX_UVM_ATTACH_FLAGS || a->pad)
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

/* Take the KVM VM of @fd; one channel per VM. */
static int nvx_uvm_get_kvm(struct nvx_uvm_chan *ch, int fd)
{
	struct nvx_uvm_chan *o;
	struct file *f;
	int ret = 0;

	f = fget(fd);
	if (!f)
		return -EBADF;
	if (!file_is_kvm(f)) {
		fput(f);
		return -EINVAL;
	}
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

/* Take a reference on the endpoint of @fd and join its table. */
static int nvx_uvm_join(struct nvx_uvm_chan *ch, int fd)
{
	struct nvx_uvm_ep *ep;
	struct file *f;
	u32 i;
	int ret = 0;

	f = fget(fd);
	if (!f)
		return -EBADF;
	if (f->f_op != &nvx_uvm_ep_fops) {
		fput(f);
		return -EINVAL;
	}
	ep = f->private_data;
	spin_lock(&ep->lock);
	if (ep->dead) {
		ret = -ENXIO;
	} else if (ep->nr_vms >= ep->max_vms) {
		ret = -EBUSY;
	} else {
		for (i = 0; ep->vms[i]; i++)
			;
		ep->vms[i] = ch;
		ch->ep_idx = i;
		ep->nr_vms++;
		ep->attached++;
		kref_get(&ep->ref);
		ch->ep = ep;
	}
	spin_unlock(&ep->lock);
	fput(f);
	return ret;
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
}

/**
 * nvx_ioc_uvm_attach() - NVX_IOC_UVM_ATTACH
 * @file: /dev/nvx.
 * @argp: struct nvx_uvm_attach.
 * @nfd: the channel's new fd.
 *
 * Return: 0 or a negative errno (see struct nvx_uvm_attach).
 */
int nvx_ioc_uvm_attach(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	struct nvx_uvm_attach *a = argp;
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

	ch->grant = nvx_grant_fget(a->grant_fd, &ch->grant_file);
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
	mutex_lock(&nvx_uvm_chans_lock);
	ret = idr_alloc_cyclic(&nvx_uvm_vm_idr, ch, 1, INT_MAX, GFP_KERNEL);
	mutex_unlock(&nvx_uvm_chans_lock);
	if (ret < 0)
		goto err;
	ch->vm_id = ret;
	ch->ctrl = page_address(nvx_uvm_page(ch, a->ctrl_gpa));

	ret = nvx_uvm_get_kvm(ch, a->vm_fd);
	if (ret)
		goto err;
	ret = nvx_uvm_join(ch, a->ep_fd);
	if (ret)
		goto err;
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
	ret = nvx_uvm_new_fd("[nvx-uvm]", &nvx_uvm_chan_fops, ch,
			     a->flags & NVX_UVM_ATTACH_CLOEXEC, nfd);
	if (ret < 0)
		goto err_unregister;
	a->fd = ret;
	a->vm_id = ch->vm_id;
	a->mem_size = ch->mem_size;
	return 0;

err_unregister:
	if (ch->registered) {
		mutex_lock(&ch->kvm->slots_lock);
		kvm_io_bus_unregister_dev(ch->kvm, KVM_PIO_BUS, &ch->iodev);
		mutex_unlock(&ch->kvm->slots_lock);
	}
err_detach:
	mutex_lock(&ch->lock);
	ch->reason = NVX_UVM_DETACHED;
	nvx_uvm_detach(ch, false);
	mutex_unlock(&ch->lock);
err:
	mutex_lock(&nvx_uvm_chans_lock);
	list_del(&ch->node);
	mutex_unlock(&nvx_uvm_chans_lock);
	nvx_uvm_chan_put(ch);
	return ret;
}
