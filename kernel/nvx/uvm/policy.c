// SPDX-License-Identifier: GPL-2.0
/*
 * nvx user VMs: the message policy of an endpoint (a tenant) and of its
 * VMs.
 *
 * The system process says which message types its guests may send and
 * how much (bulk bytes per message, requests in flight, a rate); the
 * doorbell checks every message against it before anything is queued,
 * so a denied message costs the system process nothing: the kernel
 * writes its error completion. A policy is immutable once published: a
 * change replaces it whole (RCU), and the doorbell copies the one in
 * force once per batch, so each message meets exactly one policy.
 */
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "uvm.h"

/* A new endpoint's: every type, no limits, no VM-to-VM messages. */
static const struct nvx_uvm_pol nvx_uvm_pol_default = {
	.allow = NVX_UVM_POLICY_ALL,
};

/* Each policy set gets a new generation (0 is the default's). */
static atomic64_t nvx_uvm_pol_gen = ATOMIC64_INIT(0);

/**
 * nvx_uvm_pol_get() - the policy in force for a VM, copied
 * @ch: the VM's channel (attached).
 * @out: its own policy, else its endpoint's, else the default.
 */
void nvx_uvm_pol_get(struct nvx_uvm_chan *ch, struct nvx_uvm_pol *out)
{
	const struct nvx_uvm_pol *p;

	rcu_read_lock();
	p = rcu_dereference(ch->pol);
	if (!p)
		p = rcu_dereference(ch->ep->pol);
	*out = p ? *p : nvx_uvm_pol_default;
	rcu_read_unlock();
}

/* A generic cell rate check: may one more message go now? */
static bool nvx_uvm_rate_ok(struct nvx_uvm_chan *ch,
			    const struct nvx_uvm_pol *p)
{
	u64 now = ktime_get_ns(), t = NSEC_PER_SEC / p->rate;
	u32 burst = p->burst ?: max(1U, p->rate / 10);
	u64 tat;

	/* a new policy's bucket starts full: no debt outlives its policy */
	if (ch->rate_gen != p->gen) {
		ch->rate_gen = p->gen;
		ch->rate_tat = 0;
	}
	tat = max(ch->rate_tat, now);
	if (tat - now > (u64)(burst - 1) * t)
		return false;
	ch->rate_tat = tat + t;
	return true;
}

/**
 * nvx_uvm_pol_check() - may a message taken from the guest go on?
 * @ch: its channel; ch->lock held.
 * @p: the policy in force.
 * @s: the message, checked for form and counted in ch->in_flight.
 *
 * Return: 0 when it may; a negative errno to complete it with (-EPERM:
 * type or VM-to-VM not allowed; -EINVAL: a VM-to-VM message of the wrong
 * form; -EMSGSIZE, -EBUSY, -EAGAIN: over the bulk, in-flight or rate
 * limit); or NVX_UVM_LIMIT_* when it is over that limit and the policy
 * stops the VM for it.
 */
int nvx_uvm_pol_check(struct nvx_uvm_chan *ch, const struct nvx_uvm_pol *p,
		      const struct nvx_uvm_slot *s)
{
	const struct nvx_uvm_msg *m = &s->msg;
	int lim = 0;

	lockdep_assert_held(&ch->lock);
	if (!(p->allow & BIT_ULL(m->type)))
		return -EPERM;
	if (m->type == NVX_UVM_MSG_RECV || m->dst) {
		if (!(p->flags & NVX_UVM_POLICY_VM2VM))
			return -EPERM;
		if (m->type == NVX_UVM_MSG_RECV ? m->dst :
		    m->type != NVX_UVM_MSG_IPC || m->dst == ch->vm_id)
			return -EINVAL;
	}
	if (p->max_bulk && s->total > p->max_bulk)
		lim = NVX_UVM_LIMIT_BULK;
	else if (p->max_in_flight && ch->in_flight > p->max_in_flight)
		lim = NVX_UVM_LIMIT_IN_FLIGHT;
	else if (p->rate && !nvx_uvm_rate_ok(ch, p))
		lim = NVX_UVM_LIMIT_RATE;
	if (!lim)
		return 0;
	if (p->flags & NVX_UVM_POLICY_STOP)
		return lim;
	return lim == NVX_UVM_LIMIT_BULK ? -EMSGSIZE :
	       lim == NVX_UVM_LIMIT_IN_FLIGHT ? -EBUSY : -EAGAIN;
}

static bool nvx_uvm_pol_valid(const struct nvx_uvm_policy *u)
{
	return !(u->flags & ~(NVX_UVM_POLICY_FLAGS | NVX_UVM_POLICY_RESET)) &&
	       !u->reserved[0] && !u->reserved[1] && !(u->allow & 1) &&
	       u->max_bulk <= NVX_UVM_MAX_BULK &&
	       u->max_in_flight <= NVX_UVM_MAX_ENTRIES &&
	       u->rate <= NVX_UVM_MAX_RATE &&
	       (!(u->flags & NVX_UVM_POLICY_RESET) ||
		(u->vm_id && u->flags == NVX_UVM_POLICY_RESET));
}

/**
 * nvx_uvm_ep_ioc_set_policy() - NVX_UVM_EP_IOC_SET_POLICY
 * @ucmd: the call; its argument is a struct nvx_uvm_policy.
 *
 * Return: 0, -EINVAL, -ESRCH (no such VM on this endpoint) or -ENOMEM.
 */
int nvx_uvm_ep_ioc_set_policy(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_policy *u = ucmd->arg;
	struct nvx_uvm_pol *p = NULL, *old;
	struct nvx_uvm_chan *ch = NULL;

	if (!nvx_uvm_pol_valid(u))
		return -EINVAL;
	if (u->vm_id) {
		ch = nvx_uvm_chan_find(ep, u->vm_id);
		if (!ch)
			return -ESRCH;
	}
	if (!(u->flags & NVX_UVM_POLICY_RESET)) {
		p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
		if (!p) {
			if (ch)
				nvx_uvm_chan_put(ch);
			return -ENOMEM;
		}
		p->flags = u->flags;
		p->allow = u->allow;
		p->max_bulk = u->max_bulk;
		p->max_in_flight = u->max_in_flight;
		p->rate = u->rate;
		p->burst = u->burst;
		p->gen = atomic64_inc_return(&nvx_uvm_pol_gen);
	}
	spin_lock(&ep->lock);
	if (ch)
		old = rcu_replace_pointer(ch->pol, p,
					  lockdep_is_held(&ep->lock));
	else
		old = rcu_replace_pointer(ep->pol, p,
					  lockdep_is_held(&ep->lock));
	spin_unlock(&ep->lock);
	if (old)
		kfree_rcu(old, rcu);
	if (ch)
		nvx_uvm_chan_put(ch);
	return 0;
}

/**
 * nvx_uvm_ep_ioc_get_policy() - NVX_UVM_EP_IOC_GET_POLICY
 * @ucmd: the call; its argument is a struct nvx_uvm_policy.
 *
 * Return: 0, -EINVAL or -ESRCH (no such VM on this endpoint).
 */
int nvx_uvm_ep_ioc_get_policy(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_policy *u = ucmd->arg;
	const struct nvx_uvm_pol *p = NULL;
	struct nvx_uvm_chan *ch = NULL;
	struct nvx_uvm_pol v;
	u32 own = 0;

	if (u->flags || u->reserved[0] || u->reserved[1])
		return -EINVAL;
	if (u->vm_id) {
		ch = nvx_uvm_chan_find(ep, u->vm_id);
		if (!ch)
			return -ESRCH;
	}
	rcu_read_lock();
	if (ch)
		p = rcu_dereference(ch->pol);
	if (p)
		own = NVX_UVM_POLICY_OWN;
	else
		p = rcu_dereference(ep->pol);
	v = p ? *p : nvx_uvm_pol_default;
	rcu_read_unlock();
	if (ch)
		nvx_uvm_chan_put(ch);
	u->flags = v.flags | own;
	u->allow = v.allow;
	u->max_bulk = v.max_bulk;
	u->max_in_flight = v.max_in_flight;
	u->rate = v.rate;
	u->burst = v.burst;
	return 0;
}
