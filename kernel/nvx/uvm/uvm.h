/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx user VMs: what chan.c (channels: the doorbell fast path, attach)
 * and endpoint.c (a system process's endpoint: RECV, REPLY) share.
 */
#ifndef _NVX_UVM_H
#define _NVX_UVM_H

#include <linux/eventfd.h>
#include <linux/kref.h>
#include <linux/kvm_host.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/nvx.h>
#include <linux/nvx_grant.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <kvm/iodev.h>
#include <uapi/nvx/uvm.h>

#define NVX_UVM_MSG_SIZE	sizeof(struct nvx_uvm_msg)
#define NVX_UVM_DEF_VMS		16

enum nvx_uvm_slot_state {
	NVX_UVM_SLOT_FREE,
	NVX_UVM_SLOT_QUEUED,	/* on the endpoint's queue */
	NVX_UVM_SLOT_TAKEN,	/* received, waiting for the reply */
	NVX_UVM_SLOT_WAIT,	/* VM-to-VM: on a channel's inbox or recvs */
	NVX_UVM_SLOT_MOVING,	/* VM-to-VM: matched, being completed */
};

/*
 * An endpoint's or a VM's message policy (struct nvx_uvm_policy, checked).
 * Replaced whole under ep->lock, read under RCU, freed after a grace.
 */
struct nvx_uvm_pol {
	struct rcu_head rcu;
	u32 flags;
	u64 allow;
	u32 max_bulk;
	u32 max_in_flight;
	u32 rate;
	u32 burst;
	u64 gen;			/* which SET made it */
};

struct nvx_uvm_chan;
struct nvx_uvm_sqpoll;
struct seq_file;

/* One request of a guest, from the doorbell to its completion. */
struct nvx_uvm_slot {
	struct list_head node;		/* ep->queue, an inbox or recvs */
	struct nvx_uvm_chan *ch;
	struct nvx_uvm_slot *mate;	/* MOVING: the RECV it meets */
	s32 err;			/* a bounced message's status */
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
	struct xarray vms;		/* VM id -> channel (the tenant's) */
	u32 next_id;			/* VM ids are allocated cyclically */
	struct nvx_uvm_pol __rcu *pol;	/* NULL: every type, no limits */
	struct nvx_uintr_vec __rcu *notify;	/* NULL: none; ep->lock */
	atomic64_t notified;		/* vectors posted */
	struct mutex poll_lock;		/* replaces the poller, below */
	struct nvx_uvm_sqpoll __rcu *sqpoll;	/* the SQ poller, or NULL */
	u32 recv_busy_us;		/* RECV's busy-poll budget */
	atomic64_t busy_hits;		/* RECVs a busy poll served */
	u32 id;
	u32 max_vms;
	u32 nr_vms;			/* attached and attaching */
	u32 queued;
	u32 taken;
	u32 nr_gone;
	bool dead;			/* its file was released */
	u64 msgs_in;
	u64 msgs_out;
	u64 attached;
	u64 denied;
	u64 limited;
	u64 vm2vm;
	u64 vm2vm_bytes;
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
	u32 reason;
	u64 detail;
	bool slow;
	bool registered;
	bool detached;
	bool quiet;			/* ATTACH's fd never reached the VMM */
	u16 nr_free;
	u16 *free;
	struct nvx_uvm_slot *slots;
	struct nvx_uvm_gone *gone;	/* until queued on the endpoint */
	struct nvx_uvm_pol __rcu *pol;	/* its own, or NULL: the endpoint's */
	u64 rate_tat;			/* the rate limit's next arrival, ns */
	u64 rate_gen;			/* of the policy rate_tat is for */
	struct list_head inbox;		/* WAIT slots of senders, ep->lock */
	struct list_head recvs;		/* its WAIT RECV slots, ep->lock */
	struct work_struct bounce;	/* stopped: bounce its inbox */
	u64 doorbells;
	u64 msgs_in;
	u64 msgs_out;
	u64 bulk_out;
	u64 bulk_in;
	u64 irqs;
	u64 denied;
	u64 limited;
	u64 vm2vm_out;
	u64 vm2vm_in;
	u64 polled;			/* entries the poller took */
	bool sq_polled;			/* we set NVX_UVM_SQ_POLLED */
	struct rcu_head rcu;		/* frees after nvx_uvm_chan_find() */
};

bool nvx_uvm_is_ep(struct file *file);

void nvx_uvm_ep_free(struct kref *ref);
void nvx_uvm_ep_notify(struct nvx_uvm_ep *ep);
int nvx_uvm_ioc_endpoint(struct nvx_ucmd *ucmd);
void nvx_uvm_chan_put(struct nvx_uvm_chan *ch);
struct nvx_uvm_chan *nvx_uvm_chan_find(struct nvx_uvm_ep *ep, u32 vm_id);
void nvx_uvm_fail(struct nvx_uvm_chan *ch, u32 reason, u64 detail);
void nvx_uvm_signal(struct nvx_uvm_chan *ch);
void nvx_uvm_copy(struct nvx_uvm_chan *ch, u64 gpa, void *buf, size_t len,
		  bool to_guest);
long nvx_uvm_sg_user(struct nvx_uvm_chan *ch, const struct nvx_uvm_sg *sg,
		     u32 nr, void __user *ubuf, u32 len, bool to_guest);
void nvx_uvm_slot_put(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s);
void nvx_uvm_cqe(struct nvx_uvm_msg *m, const struct nvx_uvm_chan *ch,
		 const struct nvx_uvm_slot *s, s32 status);
int nvx_uvm_cq_write(struct nvx_uvm_chan *ch, const struct nvx_uvm_msg *m);
u32 nvx_uvm_sq_take(struct nvx_uvm_chan *ch, u32 max, bool polled);

/* poll.c */
int nvx_uvm_ep_ioc_poller(struct nvx_ucmd *ucmd);
void nvx_uvm_poller_kick(struct nvx_uvm_ep *ep);
void nvx_uvm_poller_stop(struct nvx_uvm_ep *ep);
void nvx_uvm_poller_show(struct seq_file *m, struct nvx_uvm_ep *ep);
bool nvx_uvm_ep_busy_poll(struct nvx_uvm_ep *ep);

/* policy.c */
void nvx_uvm_pol_get(struct nvx_uvm_chan *ch, struct nvx_uvm_pol *out);
int nvx_uvm_pol_check(struct nvx_uvm_chan *ch, const struct nvx_uvm_pol *p,
		      const struct nvx_uvm_slot *s);
int nvx_uvm_ep_ioc_set_policy(struct nvx_ucmd *ucmd);
int nvx_uvm_ep_ioc_get_policy(struct nvx_ucmd *ucmd);

/* vm2vm.c */
int nvx_uvm_v2v_queue(struct nvx_uvm_chan *ch, struct nvx_uvm_slot *s,
		      struct list_head *moves);
void nvx_uvm_v2v_detach(struct nvx_uvm_chan *ch, struct list_head *moves);
void nvx_uvm_v2v_bounce(struct nvx_uvm_chan *ch, struct list_head *moves);
void nvx_uvm_v2v_run(struct list_head *moves);

/* A page of guest RAM to read (of a clone: its copy or the template's). */
static inline struct page *nvx_uvm_page(struct nvx_uvm_chan *ch, u64 gpa)
{
	return nvx_grant_page(ch->grant, gpa >> PAGE_SHIFT);
}

/*
 * A page of guest RAM to write: of a clone, its own copy, made now if
 * need be (an ERR_PTR() when it cannot be); see nvx_grant_page_write().
 * The control page and the CQ are made the clone's own at ATTACH.
 */
static inline struct page *nvx_uvm_page_w(struct nvx_uvm_chan *ch, u64 gpa)
{
	return nvx_grant_page_write(ch->grant, gpa >> PAGE_SHIFT);
}

#endif /* _NVX_UVM_H */
