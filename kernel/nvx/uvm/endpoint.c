// SPDX-License-Identifier: GPL-2.0
/*
 * nvx user VMs: the endpoint, a system process's side of its VMs.
 *
 * The endpoint's file queues the messages the channels of its VMs take
 * from their guests; RECV hands the oldest to the system process (PUSH
 * data copied straight from guest memory), REPLY writes a completion
 * into the guest's ring (PULL data copied straight into guest memory).
 * When a VM goes, a VM_GONE notice is queued (not for one whose ATTACH
 * result never reached its VMM, if nothing of it came here). Closing the
 * endpoint's file stops every VM attached to it. Arrivals wake RECV and
 * poll(), and post a user-interrupt vector when one is set (NOTIFY).
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/idr.h>
#include <linux/nvx_uintr.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "uvm.h"
#include <trace/events/nvx_uvm.h>

static DEFINE_IDA(nvx_uvm_ep_ids);

/*
 * Take the endpoint's vector out if it is still @v; drop it then (its
 * last reference goes through call_rcu: fine in a read section).
 */
static void nvx_uvm_ep_drop_notify(struct nvx_uvm_ep *ep,
				   struct nvx_uintr_vec *v)
{
	spin_lock(&ep->lock);
	if (rcu_access_pointer(ep->notify) == v)
		RCU_INIT_POINTER(ep->notify, NULL);
	else
		v = NULL;
	spin_unlock(&ep->lock);
	if (v)
		nvx_uintr_vec_put(v);
}

/**
 * nvx_uvm_ep_notify() - post the endpoint's vector, if it has one
 * @ep: an endpoint something arrived at (requests, a notice).
 *
 * Called after the arrival is queued and RECV woken. A post that fails
 * (the vector fd closed, the receiver's registration ended) drops the
 * vector: from then on the endpoint only wakes RECV and poll().
 */
void nvx_uvm_ep_notify(struct nvx_uvm_ep *ep)
{
	struct nvx_uintr_vec *v;
	int ret = 0;

	if (!rcu_access_pointer(ep->notify))
		return;
	/* in the read section: @v cannot be freed and its address reused */
	rcu_read_lock();
	v = rcu_dereference(ep->notify);
	if (v)
		ret = nvx_uintr_vec_post(v, NVX_UINTR_SRC_ENDPOINT);
	if (v && !ret)
		atomic64_inc(&ep->notified);
	else if (v)
		nvx_uvm_ep_drop_notify(ep, v);
	rcu_read_unlock();
}

/*
 * NVX_UVM_EP_IOC_NOTIFY: set or clear the vector; post it at once when
 * something is already queued (an arrival before the vector was set has
 * posted nothing).
 */
static int nvx_uvm_ep_ioc_notify(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_notify *a = ucmd->arg;
	struct nvx_uintr_vec *v = NULL, *old;
	bool ready;

	if (a->flags || a->reserved || a->vector_fd < -1)
		return -EINVAL;
	if (a->vector_fd >= 0) {
		v = nvx_uintr_vec_get(a->vector_fd);
		if (IS_ERR(v))
			return PTR_ERR(v);
	}
	spin_lock(&ep->lock);
	old = rcu_replace_pointer(ep->notify, v, lockdep_is_held(&ep->lock));
	ready = !list_empty(&ep->queue) || !list_empty(&ep->gone);
	spin_unlock(&ep->lock);
	if (old)
		nvx_uintr_vec_put(old);
	if (v && ready)
		nvx_uvm_ep_notify(ep);
	return 0;
}

/**
 * nvx_uvm_ep_free() - free an endpoint (its kref's release)
 * @ref: &ep->ref.
 */
void nvx_uvm_ep_free(struct kref *ref)
{
	struct nvx_uvm_ep *ep = container_of(ref, struct nvx_uvm_ep, ref);
	struct nvx_uvm_gone *g, *tmp;

	list_for_each_entry_safe(g, tmp, &ep->gone, node)
		kfree(g);
	ida_free(&nvx_uvm_ep_ids, ep->id);
	xa_destroy(&ep->vms);
	kfree(rcu_access_pointer(ep->pol));
	kfree(ep);
}

static int nvx_uvm_ep_release(struct inode *inode, struct file *file)
{
	struct nvx_uvm_ep *ep = file->private_data;
	struct nvx_uintr_vec *v;
	struct nvx_uvm_chan *ch;
	unsigned long id = 0;

	/*
	 * The poller first: it takes a last look at every ring. No VM
	 * attaches from now on (one attaching now finds the endpoint dead
	 * at its first doorbell); stop those attached, one at a time. Its
	 * vector goes now: the vector fd's holders count says so.
	 */
	nvx_uvm_poller_stop(ep);
	spin_lock(&ep->lock);
	ep->dead = true;
	v = rcu_replace_pointer(ep->notify, NULL, lockdep_is_held(&ep->lock));
	spin_unlock(&ep->lock);
	if (v)
		nvx_uintr_vec_put(v);
	for (;; id++) {
		spin_lock(&ep->lock);
		ch = xa_find(&ep->vms, &id, ULONG_MAX, XA_PRESENT);
		if (ch)
			kref_get(&ch->ref);
		spin_unlock(&ep->lock);
		if (!ch)
			break;
		mutex_lock(&ch->lock);
		nvx_uvm_fail(ch, NVX_UVM_ERR_ENDPOINT, ep->id);
		mutex_unlock(&ch->lock);
		nvx_uvm_chan_put(ch);
	}
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
			   struct nvx_uvm_slot **slot, struct nvx_uvm_sg *sg,
			   struct nvx_uvm_gone **gone)
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
		*gone = g;	/* freed once the caller has it */
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

/*
 * Put TAKEN slot @s back at the head of the queue for the next RECV (its
 * PUSH data is copied again then); ch->lock held. Not for a VM that was
 * detached meanwhile: its requests are gone.
 */
static void nvx_uvm_slot_requeue(struct nvx_uvm_chan *ch,
				 struct nvx_uvm_slot *s)
{
	struct nvx_uvm_ep *ep = ch->ep;

	lockdep_assert_held(&ch->lock);
	spin_lock(&ep->lock);
	if (!ch->detached) {
		ch->bulk_out -= s->pushed;
		s->pushed = 0;
		s->state = NVX_UVM_SLOT_QUEUED;
		ch->taken--;
		ep->taken--;
		ep->queued++;
		list_add(&s->node, &ep->queue);
	}
	spin_unlock(&ep->lock);
	wake_up(&ep->wq);
}

/*
 * RECV's result did not reach the caller (the argument struct was
 * unmapped or protected during the call): the request goes back to the
 * queue, a notice back to the head of the notices. Otherwise the notice
 * is freed and the request stays received.
 */
static void nvx_uvm_ep_recv_finish(struct nvx_ucmd *ucmd, bool copied)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_recv *r = ucmd->arg;
	struct nvx_uvm_slot *s = ucmd->priv;
	struct nvx_uvm_gone *g = ucmd->priv;
	struct nvx_uvm_chan *ch;

	if (!r->cookie) {	/* a notice */
		if (copied) {
			kfree(g);
			return;
		}
		spin_lock(&ep->lock);
		list_add(&g->node, &ep->gone);
		ep->nr_gone++;
		spin_unlock(&ep->lock);
		wake_up(&ep->wq);
		return;
	}
	ch = s->ch;
	if (!copied) {
		mutex_lock(&ch->lock);
		/* a REPLY with a guessed cookie may have freed it meanwhile */
		if (s->state == NVX_UVM_SLOT_TAKEN &&
		    s->gen == ((r->cookie >> 16) & 0xffff))
			nvx_uvm_slot_requeue(ch, s);
		mutex_unlock(&ch->lock);
	} else {
		trace_nvx_uvm_recv(ch->vm_id, r->msg.type, r->msg.tag);
	}
	nvx_uvm_chan_put(ch);
}

static int nvx_uvm_ep_ioc_recv(struct nvx_ucmd *ucmd)
{
	struct file *file = ucmd->file;
	struct nvx_uvm_ep *ep = file->private_data;
	struct nvx_uvm_recv *r = ucmd->arg;
	struct nvx_uvm_sg sg[NVX_UVM_MAX_SG];
	struct nvx_uvm_gone *g = NULL;
	struct nvx_uvm_slot *s;
	struct nvx_uvm_chan *ch;
	bool nonblock, busied = false;
	long got;
	u16 gen;
	int ret;

	if (r->flags & ~NVX_UVM_RECV_FLAGS || r->reserved)
		return -EINVAL;
	nonblock = r->flags & NVX_UVM_RECV_NONBLOCK ||
		   file->f_flags & O_NONBLOCK;
	for (;;) {
		spin_lock(&ep->lock);
		if (nvx_uvm_ep_pop(ep, r, &s, sg, &g))
			break;
		spin_unlock(&ep->lock);
		if (nonblock)
			return -EAGAIN;
		/* once per call: a message that arrives meanwhile is taken */
		if (!busied) {
			busied = true;
			if (nvx_uvm_ep_busy_poll(ep))
				continue;
		}
		ret = wait_event_interruptible_exclusive(ep->wq,
							 nvx_uvm_ep_ready(ep));
		if (ret)
			return ret;
	}
	spin_unlock(&ep->lock);
	ucmd->finish = nvx_uvm_ep_recv_finish;
	if (!s) {
		ucmd->priv = g;
		return 0;
	}

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
			nvx_uvm_slot_requeue(ch, s);
		} else {
			s->pushed = got;
			ch->bulk_out += got;
			trace_nvx_uvm_bulk(ch->vm_id, true, got);
		}
		mutex_unlock(&ch->lock);
		if (got < 0) {
			ucmd->finish = NULL;
			nvx_uvm_chan_put(ch);
			return -EFAULT;
		}
	}
	/* the channel's reference is dropped by nvx_uvm_ep_recv_finish() */
	ucmd->priv = s;
	return 0;
}

/* Write the completion for TAKEN slot @s and free it; ch->lock held. */
static int nvx_uvm_complete(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s,
			    const struct nvx_uvm_msg *reply, u32 bulk_len)
{
	struct nvx_uvm_ep *ep = ch->ep;
	struct nvx_uvm_msg m;
	int ret;

	nvx_uvm_cqe(&m, ch, s, reply->status);
	m.type = reply->type;
	m.bulk_len = bulk_len;
	memcpy(m.payload, reply->payload, sizeof(m.payload));
	ret = nvx_uvm_cq_write(ch, &m);
	if (ret)
		return ret;
	spin_lock(&ep->lock);
	ch->taken--;
	ep->taken--;
	ep->msgs_out++;
	spin_unlock(&ep->lock);
	nvx_uvm_slot_put(ch, s);
	return 0;
}

static int nvx_uvm_ep_ioc_reply(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_reply *r = ucmd->arg;
	u32 idx = r->cookie & 0xffff, gen = (r->cookie >> 16) & 0xffff;
	void __user *ubuf = u64_to_user_ptr(r->buf);
	struct nvx_uvm_chan *ch;
	struct nvx_uvm_slot *s;
	long got = 0;
	int ret;

	if (r->flags || !r->msg.type || r->msg.type > NVX_UVM_MSG_GUEST_MAX)
		return -EINVAL;
	ch = nvx_uvm_chan_find(ep, r->cookie >> 32);
	if (!ch)
		return -ESRCH;
again:
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
		/*
		 * No page fault under ch->lock: the doorbell (a vCPU), the
		 * channel's release and VM-to-VM moves take it
		 * uninterruptibly, and a fault may never end (userfaultfd,
		 * FUSE). Copy with faults disabled; on a miss, fault the
		 * buffer in unlocked and check the request again. Guest
		 * memory is still written only here, under the lock, with
		 * the VM running and the request taken: a retry rewrites
		 * room the guest still lends, never a completed request's.
		 */
		pagefault_disable();
		got = nvx_uvm_sg_user(ch, s->sg, s->msg.sg_nr, ubuf,
				      r->buf_len, true);
		pagefault_enable();
		if (got < 0 && got != -EFAULT) {
			/* a clone's page had no copy and none could be made */
			nvx_uvm_fail(ch, NVX_UVM_ERR_MEMORY, -got);
			ret = -ESRCH;
			goto out;
		}
		if (got < 0) {
			mutex_unlock(&ch->lock);
			ret = -EFAULT;
			if (fault_in_readable(ubuf, r->buf_len))
				goto put;
			ret = -EINTR;
			if (fatal_signal_pending(current))
				goto put;
			cond_resched();
			goto again;
		}
		ch->bulk_in += got;
		trace_nvx_uvm_bulk(ch->vm_id, false, got);
	} else if (s->msg.flags & NVX_UVM_MSGF_PUSH) {
		got = s->pushed;
	}
	ret = nvx_uvm_complete(ch, s, &r->msg, got);
out:
	mutex_unlock(&ch->lock);
put:
	nvx_uvm_chan_put(ch);
	return ret;
}

static int nvx_uvm_ep_ioc_stats(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_ep_stats *st = ucmd->arg;

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
	st->denied = ep->denied;
	st->limited = ep->limited;
	st->vm2vm = ep->vm2vm;
	st->vm2vm_bytes = ep->vm2vm_bytes;
	spin_unlock(&ep->lock);
	return 0;
}

static const struct nvx_ioctl_op nvx_uvm_ep_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_RECV,
		     nvx_uvm_ep_ioc_recv, struct nvx_uvm_recv, msg, 0),
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_REPLY,
		     nvx_uvm_ep_ioc_reply, struct nvx_uvm_reply, msg, 0),
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_STATS,
		     nvx_uvm_ep_ioc_stats, struct nvx_uvm_ep_stats, attached, 0),
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_SET_POLICY,
		     nvx_uvm_ep_ioc_set_policy, struct nvx_uvm_policy, reserved,
		     0),
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_GET_POLICY,
		     nvx_uvm_ep_ioc_get_policy, struct nvx_uvm_policy, reserved,
		     0),
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_NOTIFY,
		     nvx_uvm_ep_ioc_notify, struct nvx_uvm_notify, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_UVM_EP_BASE, NVX_UVM_EP_IOC_POLLER,
		     nvx_uvm_ep_ioc_poller, struct nvx_uvm_poller, reserved, 0),
};

/* /proc/PID/fdinfo/N of an endpoint: its VMs and its queues. */
static void nvx_uvm_ep_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct nvx_uvm_ep *ep = file->private_data;

	spin_lock(&ep->lock);
	seq_puts(m, "nvx-object:\tuvm-endpoint\n");
	seq_printf(m, "ep_id:\t%u\n", ep->id);
	seq_printf(m, "vms:\t%u\n", ep->nr_vms);
	seq_printf(m, "max_vms:\t%u\n", ep->max_vms);
	seq_printf(m, "queued:\t%u\n", ep->queued);
	seq_printf(m, "taken:\t%u\n", ep->taken);
	seq_printf(m, "gone:\t%u\n", ep->nr_gone);
	seq_printf(m, "msgs_in:\t%llu\n", ep->msgs_in);
	seq_printf(m, "msgs_out:\t%llu\n", ep->msgs_out);
	seq_printf(m, "attached:\t%llu\n", ep->attached);
	seq_printf(m, "denied:\t%llu\n", ep->denied);
	seq_printf(m, "limited:\t%llu\n", ep->limited);
	seq_printf(m, "vm2vm:\t%llu\n", ep->vm2vm);
	seq_printf(m, "vm2vm_bytes:\t%llu\n", ep->vm2vm_bytes);
	seq_printf(m, "notify:\t%d\n", !!rcu_access_pointer(ep->notify));
	seq_printf(m, "notified:\t%lld\n", atomic64_read(&ep->notified));
	spin_unlock(&ep->lock);
	nvx_uvm_poller_show(m, ep);
}

DEFINE_NVX_FOPS(nvx_uvm_ep, NVX_IOC_UVM_EP_BASE, nvx_uvm_ep_ops,
		.release = nvx_uvm_ep_release,
		.poll = nvx_uvm_ep_poll,
		.show_fdinfo = nvx_uvm_ep_show_fdinfo);

/**
 * nvx_uvm_is_ep() - is @file an endpoint?
 * @file: any file.
 *
 * Return: true when @file is an endpoint's file.
 */
bool nvx_uvm_is_ep(struct file *file)
{
	return file->f_op == &nvx_uvm_ep_fops;
}

/**
 * nvx_uvm_ioc_endpoint() - NVX_IOC_UVM_ENDPOINT: a new endpoint fd
 * @ucmd: the call; its argument is a struct nvx_uvm_endpoint.
 *
 * Return: 0, -EINVAL, -ENOMEM or -EMFILE.
 */
int nvx_uvm_ioc_endpoint(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_endpoint *req = ucmd->arg;
	struct nvx_uvm_ep *ep;
	int ret;

	if (req->flags & ~NVX_UVM_EP_FLAGS || req->max_vms > NVX_UVM_MAX_VMS)
		return -EINVAL;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return -ENOMEM;
	kref_init(&ep->ref);
	spin_lock_init(&ep->lock);
	mutex_init(&ep->poll_lock);
	init_waitqueue_head(&ep->wq);
	INIT_LIST_HEAD(&ep->queue);
	INIT_LIST_HEAD(&ep->gone);
	xa_init_flags(&ep->vms, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	ep->max_vms = req->max_vms ?: NVX_UVM_DEF_VMS;
	ret = ida_alloc_min(&nvx_uvm_ep_ids, 1, GFP_KERNEL);
	if (ret < 0) {
		kfree(ep);
		return ret;
	}
	ep->id = ret;
	ret = nvx_anon_fd(ucmd, "[nvx-uvm-ep]", &nvx_uvm_ep_fops, ep,
			  req->flags & NVX_UVM_EP_CLOEXEC ? O_CLOEXEC : 0);
	if (ret < 0) {
		kref_put(&ep->ref, nvx_uvm_ep_free);
		return ret;
	}
	req->max_vms = ep->max_vms;
	req->fd = ret;
	req->ep_id = ep->id;
	return 0;
}
