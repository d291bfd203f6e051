// SPDX-License-Identifier: GPL-2.0
/*
 * nvx user VMs: the endpoint's SQ poller and RECV busy polling.
 *
 * The doorbell costs a VM exit per batch. With a poller
 * (NVX_UVM_EP_IOC_POLLER, NVX_UVM_POLLER_SQ) a kernel thread per endpoint,
 * "nvx-poll/EP_ID", scans the submission rings of the endpoint's
 * fast-path VMs while any has work and takes new entries with
 * nvx_uvm_sq_take(), the doorbell's own code. While it is awake, each
 * scanned VM's control page says NVX_UVM_SQ_POLLED and its guest rings no
 * doorbell; after idle_us without work the poller clears the flag and
 * sleeps, and the next doorbell (handled at once, as always) wakes it.
 * It is io_uring's SQPOLL with IORING_SQ_NEED_WAKEUP, the bit inverted so
 * that a zero (a kernel or endpoint without a poller) means "ring".
 *
 * Why no entry is stranded: the guest stores sq_prod, then a full
 * barrier, then loads sq_flags; the poller, before it sleeps, stores
 * sq_flags = 0, then smp_mb(), then loads every sq_prod once more. Of
 * two such store-barrier-load sequences at least one load sees the other
 * side's store: either the guest sees the flag clear and rings (the
 * doorbell takes the entry), or the poller's last look sees the entry
 * and takes it. A guest that writes the flag itself only delays its own
 * entries: the kernel never reads sq_flags back (it keeps its own copy).
 * The flag is written under the channel's lock and only while the VM
 * runs.
 *
 * Fairness: a pass visits every VM and takes at most budget entries from
 * each, so a flooding VM cannot hold the others back by more than one
 * budget per pass. A VM that keeps sending keeps the poller awake, also
 * with messages the kernel answers itself (refused types, limits): that
 * is the CPU its owner chose to spend (CAP_SYS_NICE). The poller holds
 * no lock while it looks at a ring (the grant's pages are in the direct
 * map and never fault); it takes the channel's lock only inside
 * nvx_uvm_sq_take(), as a doorbell does, and to change the flag,
 * and a channel reference for as long as it uses one.
 *
 * Busy polling: a blocking RECV on an endpoint with recv_busy_us spins
 * that long for a message before it sleeps, so that under load the
 * system side takes no wake-up per message either (SO_BUSY_POLL).
 */
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "uvm.h"

/* An endpoint's poller thread and what it counts (it alone writes). */
struct nvx_uvm_sqpoll {
	struct task_struct *task;
	struct nvx_uvm_ep *ep;
	u64 idle_ns;
	u32 budget;
	int cpu;
	bool asleep;
	u64 passes;		/* passes over the VMs */
	u64 taken;		/* entries taken */
	u64 sleeps;
	u64 wakeups;
	u64 busy_ns;		/* time in passes that found work */
};

enum nvx_uvm_pass {
	NVX_UVM_PASS_POLL,	/* set POLLED, take up to the budget */
	NVX_UVM_PASS_CLEAR,	/* clear POLLED, take nothing */
	NVX_UVM_PASS_LAST,	/* take what came before the clear */
};

/* The next channel from *id on, with a reference; NULL after the last. */
static struct nvx_uvm_chan *nvx_uvm_poll_next(struct nvx_uvm_ep *ep,
					      unsigned long *id)
{
	struct nvx_uvm_chan *ch;

	rcu_read_lock();
	for (;;) {
		/* channels are freed after RCU: see nvx_uvm_chan_find() */
		ch = xa_find(&ep->vms, id, ULONG_MAX, XA_PRESENT);
		if (!ch || kref_get_unless_zero(&ch->ref))
			break;
		(*id)++;
	}
	rcu_read_unlock();
	return ch;
}

/*
 * Set or clear NVX_UVM_SQ_POLLED in a VM's control page. Under the
 * channel's lock and only while the VM runs: a channel being released
 * may have its VM attached again, elsewhere, as soon as it is stopped,
 * and then its page is no longer ours to write. The kernel keeps its own
 * copy (ch->sq_polled) and never reads the flag back.
 */
static void nvx_uvm_poll_flag(struct nvx_uvm_chan *ch, bool on)
{
	mutex_lock(&ch->lock);
	if (!ch->reason && ch->sq_polled != on) {
		ch->sq_polled = on;
		WRITE_ONCE(ch->ctrl->sq_flags, on ? NVX_UVM_SQ_POLLED : 0);
	}
	mutex_unlock(&ch->lock);
}

/* One pass over the endpoint's VMs; returns the entries taken. */
static u32 nvx_uvm_poll_pass(struct nvx_uvm_sqpoll *p, enum nvx_uvm_pass how)
{
	struct nvx_uvm_ep *ep = p->ep;
	struct nvx_uvm_chan *ch;
	unsigned long id = 0;
	u32 taken = 0;

	while ((ch = nvx_uvm_poll_next(ep, &id))) {
		bool on = how == NVX_UVM_PASS_POLL, flagged;
		u32 cons;

		id++;
		if (ch->slow || READ_ONCE(ch->reason)) {
			nvx_uvm_chan_put(ch);
			continue;
		}
		/* a hint: nvx_uvm_poll_flag() looks again, locked */
		flagged = data_race(ch->sq_polled);
		/* a hint: nvx_uvm_sq_take() reads it again, locked */
		cons = data_race(ch->sq_cons);
		if (how != NVX_UVM_PASS_LAST && flagged != on)
			nvx_uvm_poll_flag(ch, on);
		if (how != NVX_UVM_PASS_CLEAR &&
		    READ_ONCE(ch->ctrl->sq_prod) != cons)
			taken += nvx_uvm_sq_take(ch, on ? p->budget : U32_MAX,
						 true);
		nvx_uvm_chan_put(ch);
		cond_resched();
	}
	return taken;
}

/*
 * Clear the flags, then look once more at every ring: whatever a guest
 * published before it could see the flag clear is taken now.
 */
static u32 nvx_uvm_poll_quiesce(struct nvx_uvm_sqpoll *p)
{
	nvx_uvm_poll_pass(p, NVX_UVM_PASS_CLEAR);
	/* pairs with the guest's barrier between sq_prod and sq_flags */
	smp_mb();
	return nvx_uvm_poll_pass(p, NVX_UVM_PASS_LAST);
}

/* The thread's counters: it alone writes them, fdinfo reads them. */
static void nvx_uvm_poll_count(u64 *c, u64 n)
{
	WRITE_ONCE(*c, *c + n);
}

static int nvx_uvm_poll_thread(void *arg)
{
	struct nvx_uvm_sqpoll *p = arg;
	u64 last = ktime_get_ns();

	while (!kthread_should_stop()) {
		u64 t0 = ktime_get_ns();
		u32 n = nvx_uvm_poll_pass(p, NVX_UVM_PASS_POLL);

		nvx_uvm_poll_count(&p->passes, 1);
		if (n) {
			nvx_uvm_poll_count(&p->taken, n);
			last = ktime_get_ns();
			nvx_uvm_poll_count(&p->busy_ns, last - t0);
			continue;
		}
		if (t0 - last < p->idle_ns) {
			/*
			 * Nothing to take: whoever else is runnable here (the
			 * system side that answers what we took, often) runs
			 * first, not at the next tick. cond_resched() would
			 * wait for the tick, schedule() may pick us again;
			 * yield() passes our turn (benchmarks.rst: a polled
			 * round trip 18-21 us with it, 23-27 with schedule(),
			 * 51-98 with cond_resched(), perf kernel under TCG).
			 */
			if (!single_task_running()) {
				yield();
			} else {
				cond_resched();
				cpu_relax();
			}
			continue;
		}
		n = nvx_uvm_poll_quiesce(p);
		if (n) {
			nvx_uvm_poll_count(&p->taken, n);
			last = ktime_get_ns();
			continue;
		}
		/*
		 * A doorbell from now on wakes us. One rung between the last
		 * look and here was handled by its vCPU: we sleep until the
		 * next, which is all a missed wake-up costs.
		 */
		set_current_state(TASK_INTERRUPTIBLE);
		WRITE_ONCE(p->asleep, true);
		nvx_uvm_poll_count(&p->sleeps, 1);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
		WRITE_ONCE(p->asleep, false);
		nvx_uvm_poll_count(&p->wakeups, 1);
		last = ktime_get_ns();
	}
	/* the flags go with the poller; nothing published is left behind */
	nvx_uvm_poll_count(&p->taken, nvx_uvm_poll_quiesce(p));
	return 0;
}

/**
 * nvx_uvm_poller_kick() - a doorbell rang: wake the endpoint's poller
 * @ep: the endpoint.
 *
 * The doorbell has taken its entries already; an awake poller spares
 * the guest the next ones.
 */
void nvx_uvm_poller_kick(struct nvx_uvm_ep *ep)
{
	struct nvx_uvm_sqpoll *p;

	if (!rcu_access_pointer(ep->sqpoll))
		return;
	rcu_read_lock();
	p = rcu_dereference(ep->sqpoll);
	if (p && READ_ONCE(p->asleep))
		wake_up_process(p->task);
	rcu_read_unlock();
}

/* ep->poll_lock held: stop and free the poller, if there is one. */
static void nvx_uvm_poller_put(struct nvx_uvm_ep *ep)
{
	struct nvx_uvm_sqpoll *p;

	p = rcu_replace_pointer(ep->sqpoll, NULL,
				lockdep_is_held(&ep->poll_lock));
	if (!p)
		return;
	/* no doorbell wakes it, no fdinfo reads it, from here on */
	synchronize_rcu();
	kthread_stop(p->task);
	put_task_struct(p->task);
	kfree(p);
}

/**
 * nvx_uvm_poller_stop() - stop an endpoint's poller (the endpoint goes)
 * @ep: the endpoint.
 */
void nvx_uvm_poller_stop(struct nvx_uvm_ep *ep)
{
	mutex_lock(&ep->poll_lock);
	nvx_uvm_poller_put(ep);
	mutex_unlock(&ep->poll_lock);
}

static int nvx_uvm_poller_check(const struct nvx_uvm_poller *a)
{
	if (a->flags & ~NVX_UVM_POLLER_FLAGS || a->reserved ||
	    a->idle_us > NVX_UVM_POLLER_MAX_IDLE_US ||
	    a->budget > NVX_UVM_MAX_ENTRIES ||
	    a->recv_busy_us > NVX_UVM_POLLER_MAX_BUSY_US)
		return -EINVAL;
	/* the SQ poller's settings mean nothing without it */
	if (!(a->flags & NVX_UVM_POLLER_SQ) &&
	    (a->flags & NVX_UVM_POLLER_CPU || a->idle_us || a->budget))
		return -EINVAL;
	if (!(a->flags & NVX_UVM_POLLER_CPU) && a->cpu)
		return -EINVAL;
	if (a->flags & NVX_UVM_POLLER_CPU &&
	    ((u32)a->cpu >= nr_cpu_ids || !cpu_online(a->cpu) ||
	     !cpumask_test_cpu(a->cpu, current->cpus_ptr)))
		return -EINVAL;
	if (a->flags & NVX_UVM_POLLER_SQ && !capable(CAP_SYS_NICE))
		return -EPERM;
	return 0;
}

static struct nvx_uvm_sqpoll *nvx_uvm_poller_new(struct nvx_uvm_ep *ep,
						 const struct nvx_uvm_poller *a)
{
	bool bind = a->flags & NVX_UVM_POLLER_CPU;
	int node = bind ? cpu_to_node(a->cpu) : NUMA_NO_NODE;
	struct nvx_uvm_sqpoll *p;
	struct task_struct *t;
	int ret;

	p = kzalloc_node(sizeof(*p), GFP_KERNEL_ACCOUNT, node);
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->ep = ep;
	p->cpu = bind ? a->cpu : -1;
	p->idle_ns = (u64)(a->idle_us ?: NVX_UVM_POLLER_DEF_IDLE_US) *
		     NSEC_PER_USEC;
	p->budget = a->budget ?: NVX_UVM_POLLER_DEF_BUDGET;
	t = kthread_create_on_node(nvx_uvm_poll_thread, p, node,
				   "nvx-poll/%u", ep->id);
	if (IS_ERR(t)) {
		kfree(p);
		return ERR_CAST(t);
	}
	/* a CPU going offline moves it elsewhere; kthread_bind() would not */
	if (bind) {
		ret = set_cpus_allowed_ptr(t, cpumask_of(a->cpu));
		if (ret) {
			kthread_stop(t);
			kfree(p);
			return ERR_PTR(ret);
		}
	}
	get_task_struct(t);
	p->task = t;
	return p;
}

/**
 * nvx_uvm_ep_ioc_poller() - NVX_UVM_EP_IOC_POLLER: set the endpoint's pollers
 * @ucmd: the call; its argument is a struct nvx_uvm_poller.
 *
 * Replaces the settings whole: a running poller is stopped (after a last
 * look at every ring) and, with NVX_UVM_POLLER_SQ, a new one started.
 *
 * Return: 0, -EINVAL, -EPERM, -ENOMEM or -EINTR.
 */
int nvx_uvm_ep_ioc_poller(struct nvx_ucmd *ucmd)
{
	struct nvx_uvm_ep *ep = ucmd->file->private_data;
	struct nvx_uvm_poller *a = ucmd->arg;
	struct nvx_uvm_sqpoll *p = NULL;
	int ret;

	ret = nvx_uvm_poller_check(a);
	if (ret)
		return ret;
	if (a->flags & NVX_UVM_POLLER_SQ) {
		p = nvx_uvm_poller_new(ep, a);
		if (IS_ERR(p))
			return PTR_ERR(p);
	}
	if (mutex_lock_interruptible(&ep->poll_lock)) {
		if (p) {
			kthread_stop(p->task);
			put_task_struct(p->task);
			kfree(p);
		}
		return -EINTR;
	}
	nvx_uvm_poller_put(ep);
	WRITE_ONCE(ep->recv_busy_us, a->recv_busy_us);
	if (p) {
		rcu_assign_pointer(ep->sqpoll, p);
		wake_up_process(p->task);
	}
	mutex_unlock(&ep->poll_lock);
	return 0;
}

/**
 * nvx_uvm_poller_show() - the pollers' lines of an endpoint's fdinfo
 * @m: the fdinfo file.
 * @ep: the endpoint.
 */
void nvx_uvm_poller_show(struct seq_file *m, struct nvx_uvm_ep *ep)
{
	struct nvx_uvm_sqpoll *p;

	seq_printf(m, "recv_busy_us:\t%u\n", READ_ONCE(ep->recv_busy_us));
	seq_printf(m, "busy_hits:\t%lld\n", atomic64_read(&ep->busy_hits));
	rcu_read_lock();
	p = rcu_dereference(ep->sqpoll);
	seq_printf(m, "poller:\t%d\n", !!p);
	if (p) {
		/* the thread's own counters, written by it alone: a snapshot */
		seq_printf(m, "poller_pid:\t%d\n", task_pid_vnr(p->task));
		seq_printf(m, "poller_cpu:\t%d\n", p->cpu);
		seq_printf(m, "poller_idle_us:\t%llu\n",
			   div_u64(p->idle_ns, NSEC_PER_USEC));
		seq_printf(m, "poller_budget:\t%u\n", p->budget);
		seq_printf(m, "poller_asleep:\t%d\n", READ_ONCE(p->asleep));
		seq_printf(m, "poller_passes:\t%llu\n", READ_ONCE(p->passes));
		seq_printf(m, "poller_taken:\t%llu\n", READ_ONCE(p->taken));
		seq_printf(m, "poller_sleeps:\t%llu\n", READ_ONCE(p->sleeps));
		seq_printf(m, "poller_wakeups:\t%llu\n", READ_ONCE(p->wakeups));
		seq_printf(m, "poller_busy_ns:\t%llu\n", READ_ONCE(p->busy_ns));
		seq_printf(m, "poller_runtime_ns:\t%llu\n",
			   READ_ONCE(p->task->se.sum_exec_runtime));
	}
	rcu_read_unlock();
}

/**
 * nvx_uvm_ep_busy_poll() - spin for a message before RECV sleeps
 * @ep: the endpoint.
 *
 * Spins up to the endpoint's recv_busy_us, ending early for a signal or
 * as soon as another task is runnable on this CPU (the poller, often,
 * which would take what the caller waits for): busy polling pays only
 * on a CPU of one's own.
 *
 * Return: true when something arrived meanwhile.
 */
bool nvx_uvm_ep_busy_poll(struct nvx_uvm_ep *ep)
{
	u32 us = READ_ONCE(ep->recv_busy_us);
	u64 end;

	if (!us)
		return false;
	end = local_clock() + (u64)us * NSEC_PER_USEC;
	do {
		/* a hint; RECV takes the message under ep->lock */
		if (data_race(!list_empty(&ep->queue) ||
			      !list_empty(&ep->gone))) {
			atomic64_inc(&ep->busy_hits);
			return true;
		}
		cpu_relax();
	} while (!signal_pending(current) && !need_resched() &&
		 single_task_running() && local_clock() < end);
	return false;
}
