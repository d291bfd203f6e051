// SPDX-License-Identifier: GPL-2.0
/*
 * nvx shared multi-packet RX buffer queues: the core.
 *
 * A set is one instance's receive side on one NIC: a pool of buffers
 * (memory of a grant) feeding all of its queues, a completion ring per
 * queue and release rings, all shared with the instance through mmap().
 *
 * Buffer states, and who owns the buffer in each:
 *
 *   POSTED   the NIC's: posted through backend->post(), no stride filled.
 *   FILLING  the NIC's and the instance's: a queue's current buffer; the
 *            NIC fills strides from the front, the instance owns the
 *            strides reported in completions until it releases them.
 *   HELD     the instance's: every stride filled; on its pool's held list
 *            until every stride is released (fillers by the kernel).
 *
 * HELD -> POSTED happens only in a refill, when the strides posted to the
 * NIC fall below the low-water mark: a buffer whose strides are all
 * released is reset and posted again (after poisoning, on request).
 *
 * Counts: hw_used per buffer (strides the NIC filled, written under the
 * set's lock by the completion path) and, as in Junction, one row of
 * software release counts per CPU (sw[cpu][buf], plain u16 adds by the
 * CPU that takes a release ring's entries, BH off). Only the refill
 * reads across rows and resets them, under the refill lock (a trylock on
 * the receive path, which works within a budget). The kernel
 * never trusts the rings: a release that does not fit the counts is
 * counted and ignored, and an instance that lies about its releases can
 * only make its own frames be overwritten.
 */
#define pr_fmt(fmt) "nvx_srq: " fmt

#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "srq_core.h"

#define CREATE_TRACE_POINTS
#include <trace/events/nvx_srq.h>

static LIST_HEAD(nvx_srq_backends);	/* under RTNL */

/* ------------------------------------------------------ for backends --- */

/**
 * nvx_srq_match() - which of its NIC's frames a set takes
 * @srq: the set.
 *
 * Return: its rule; constant for the set's life.
 */
const struct nvx_srq_match *nvx_srq_match(struct nvx_srq *srq)
{
	return &srq->match;
}
EXPORT_SYMBOL_GPL(nvx_srq_match);

/**
 * nvx_srq_match_frame() - does a rule take a frame
 * @m: the rule; its flags nonzero.
 * @skb: an Ethernet frame, from its MAC header on at @skb->data.
 *
 * NVX_SRQ_MATCH_MAC compares the destination MAC; NVX_SRQ_MATCH_IP4 the
 * destination of an IPv4 packet, or the target protocol address of an
 * Ethernet/IPv4 ARP packet. A frame too short for a field does not match.
 *
 * Return: true when every part of the rule matches.
 */
bool nvx_srq_match_frame(const struct nvx_srq_match *m,
			 const struct sk_buff *skb)
{
	const struct ethhdr *eth;
	const struct arphdr *arp;
	struct arphdr _arp;
	struct ethhdr _eth;
	__be32 _ip, *ip;
	u8 _ver, *ver;
	int off;

	eth = skb_header_pointer(skb, 0, sizeof(_eth), &_eth);
	if (!eth)
		return false;
	if ((m->flags & NVX_SRQ_MATCH_MAC) &&
	    !ether_addr_equal_unaligned(eth->h_dest, m->mac))
		return false;
	if (!(m->flags & NVX_SRQ_MATCH_IP4))
		return true;
	if (eth->h_proto == htons(ETH_P_IP)) {
		ver = skb_header_pointer(skb, ETH_HLEN, 1, &_ver);
		if (!ver || *ver >> 4 != 4)
			return false;
		off = ETH_HLEN + offsetof(struct iphdr, daddr);
	} else if (eth->h_proto == htons(ETH_P_ARP)) {
		arp = skb_header_pointer(skb, ETH_HLEN, sizeof(_arp), &_arp);
		if (!arp || arp->ar_hrd != htons(ARPHRD_ETHER) ||
		    arp->ar_pro != htons(ETH_P_IP) || arp->ar_hln != ETH_ALEN ||
		    arp->ar_pln != 4)
			return false;
		/* sender MAC and IPv4, target MAC, then target IPv4 */
		off = ETH_HLEN + sizeof(_arp) + 2 * ETH_ALEN + 4;
	} else {
		return false;
	}
	ip = skb_header_pointer(skb, off, sizeof(_ip), &_ip);
	return ip && *ip == m->ip4;
}
EXPORT_SYMBOL_GPL(nvx_srq_match_frame);

/**
 * nvx_srq_shape() - the shape of a set
 * @srq: the set.
 *
 * Return: queue, pool and buffer geometry; constant for the set's life.
 */
const struct nvx_srq_shape *nvx_srq_shape(struct nvx_srq *srq)
{
	return &srq->shape;
}
EXPORT_SYMBOL_GPL(nvx_srq_shape);

/**
 * nvx_srq_buf_addr() - kernel address of a buffer
 * @srq: the set.
 * @buf: buffer index, below nr_bufs.
 *
 * A buffer never crosses a pool chunk, so its bytes are contiguous in
 * the direct map.
 *
 * Return: the address of the buffer's first byte.
 */
void *nvx_srq_buf_addr(struct nvx_srq *srq, u32 buf)
{
	u64 off = srq->grant_offset + (u64)buf * srq->p.buf_size;

	return page_address(nvx_grant_page(srq->grant, off >> PAGE_SHIFT)) +
	       offset_in_page(off);
}
EXPORT_SYMBOL_GPL(nvx_srq_buf_addr);

/**
 * nvx_srq_set_backend_data() - store the backend's per-set state
 * @srq: the set.
 * @data: the state.
 */
void nvx_srq_set_backend_data(struct nvx_srq *srq, void *data)
{
	srq->backend_data = data;
}
EXPORT_SYMBOL_GPL(nvx_srq_set_backend_data);

/**
 * nvx_srq_backend_data() - the backend's per-set state
 * @srq: the set.
 *
 * Return: what nvx_srq_set_backend_data() stored.
 */
void *nvx_srq_backend_data(struct nvx_srq *srq)
{
	return srq->backend_data;
}
EXPORT_SYMBOL_GPL(nvx_srq_backend_data);

static struct nvx_srq_pool *nvx_srq_queue_pool(struct nvx_srq *srq, u32 q)
{
	return &srq->pools[srq->p.flags & NVX_SRQ_PER_QUEUE ? q : 0];
}

/**
 * nvx_srq_cq_room() - can a queue's completion ring take @n entries?
 * @srq: the set.
 * @queue: the queue.
 * @n: entries wanted.
 *
 * A consumer index the instance wrote that is not sane (ahead of the
 * kernel's producer, or more than the ring behind it) reads as full.
 *
 * Return: true when @n entries fit.
 */
bool nvx_srq_cq_room(struct nvx_srq *srq, u32 queue, unsigned int n)
{
	struct nvx_srq_queue *q = &srq->queues[queue];
	u32 used = q->prod - READ_ONCE(q->hdr->cons);

	return used <= srq->p.cq_entries && srq->p.cq_entries - used >= n;
}
EXPORT_SYMBOL_GPL(nvx_srq_cq_room);

/**
 * nvx_srq_notify_post() - post a queue's vector or signal its eventfd
 * @q: the queue.
 *
 * A post that fails (the vector fd closed, the receiver's registration
 * ended) drops the vector. Any context.
 */
void nvx_srq_notify_post(struct nvx_srq_queue *q)
{
	struct eventfd_ctx *ev;
	struct nvx_uintr_vec *v;

	/* in the read section: @v cannot be freed and its address reused */
	rcu_read_lock();
	/* an eventfd is put only after a grace period (NOTIFY, the set's free) */
	ev = rcu_dereference(q->notify_ev);
	if (ev) {
		eventfd_signal(ev);
		atomic64_inc(&q->notified);
	}
	v = rcu_dereference(q->notify);
	if (v && !nvx_uintr_vec_post(v, NVX_UINTR_SRC_SRQ))
		atomic64_inc(&q->notified);
	else if (v && unrcu_pointer(cmpxchg(&q->notify, RCU_INITIALIZER(v),
					    NULL)) == v)
		nvx_uintr_vec_put(v);
	rcu_read_unlock();
}

/*
 * A queue that just published completion @prod - 1 (its producer index
 * is now @prod): post its vector if its ring was empty. The instance
 * empties the ring by writing ``cons`` = ``prod``, then
 * (a full barrier) reads ``prod`` again before it waits; here the
 * completion is published, then (a full barrier) ``cons`` is read: one
 * of the two sees the other's write, so an instance never waits on a
 * completion nobody posted for. Only the completion that lands in an
 * emptied ring posts: once per burst. A post that fails (the vector fd
 * closed, the receiver's registration ended) drops the vector.
 */
static void nvx_srq_notify(struct nvx_srq_queue *q, u32 prod)
{
	/* pairs with the instance's barrier between cons and its re-read */
	smp_mb();
	if (READ_ONCE(q->hdr->cons) == prod - 1)
		nvx_srq_notify_post(q);
}

/*
 * The NIC filled @strides of @b through @q: the buffer's state and counts,
 * the strides counted as released by the kernel when @kernel_freed (a
 * filler's, a dropped frame's). Under srq->lock.
 */
static void nvx_srq_fill(struct nvx_srq *srq, struct nvx_srq_queue *q,
			 struct nvx_srq_buf *b, u32 strides, bool kernel_freed)
{
	struct nvx_srq_pool *pool = &srq->pools[b->pool];

	if (b->state == NVX_SRQ_BUF_POSTED) {
		WRITE_ONCE(b->state, NVX_SRQ_BUF_FILLING);
		pool->nr_posted--;
		pool->nr_filling++;
	}
	WRITE_ONCE(b->hw_used, b->hw_used + strides);
	if (kernel_freed)
		WRITE_ONCE(b->kfree, b->kfree + strides);
	pool->posted_strides -= strides;
	q->rx_strides += strides;
	if (b->hw_used == srq->shape.strides_per_buf) {
		WRITE_ONCE(b->state, NVX_SRQ_BUF_HELD);
		pool->nr_filling--;
		pool->nr_held++;
		list_add_tail(&b->node, &pool->held);
	}
}

/**
 * nvx_srq_complete() - the NIC filled strides of a buffer
 * @srq: the set.
 * @queue: the queue that filled them.
 * @buf: the buffer.
 * @stride: the first stride filled.
 * @strides: how many.
 * @len: bytes of the frame stored (0 for a filler).
 * @flags: NVX_SRQ_CQE_* bits.
 *
 * Writes the completion (the caller checked the room with
 * nvx_srq_cq_room() and wrote the frame's bytes first) and counts the
 * strides; a filler's strides count as released by the kernel. One
 * caller per queue at a time, BH disabled.
 */
void nvx_srq_complete(struct nvx_srq *srq, u32 queue, u32 buf, u32 stride,
		      u32 strides, u32 len, u16 flags)
{
	struct nvx_srq_queue *q = &srq->queues[queue];
	struct nvx_srq_buf *b = &srq->bufs[buf];
	struct nvx_srq_cqe *cqe;
	u32 prod;

	spin_lock(&srq->lock);
	/*
	 * Count first: once the completion is visible the instance may
	 * release its strides, and the release is checked against these.
	 */
	nvx_srq_fill(srq, q, b, strides, flags & NVX_SRQ_CQE_FILLER);
	if (flags & NVX_SRQ_CQE_FILLER) {
		q->fillers++;
		trace_nvx_srq_filler(queue, buf, stride, strides);
	} else {
		q->rx_packets++;
		q->rx_bytes += len;
		if (flags & NVX_SRQ_CQE_TRUNCATED)
			q->truncated++;
		trace_nvx_srq_rx(queue, buf, stride, strides, len);
	}

	cqe = &q->cqes[q->prod & (srq->p.cq_entries - 1)];
	cqe->buf = buf;
	cqe->stride = stride;
	cqe->strides = strides;
	cqe->len = len;
	cqe->flags = flags;
	cqe->pad = 0;
	prod = ++q->prod;
	/* pairs with the instance's acquire of prod: entry before index */
	smp_store_release(&q->hdr->prod, prod);
	spin_unlock(&srq->lock);
	/*
	 * After the unlock: NOTIFY sets the vector, then reads prod under
	 * srq->lock, so either it sees this completion or this sees its
	 * vector.
	 */
	if (rcu_access_pointer(q->notify) || rcu_access_pointer(q->notify_ev))
		nvx_srq_notify(q, prod);
}
EXPORT_SYMBOL_GPL(nvx_srq_complete);

/**
 * nvx_srq_discard() - the NIC filled strides no completion can report
 * @srq: the set.
 * @queue: the queue that filled them.
 * @buf: the buffer.
 * @strides: how many.
 * @len: the frame's length.
 * @flags: NVX_SRQ_CQE_FILLER for a filler, else 0.
 *
 * For a NIC that writes first and completes after (mlx5): a frame that
 * arrived when the queue's completion ring was full, or that the NIC
 * reported in error, still used its strides. They count as released by
 * the kernel (as a filler's, so the buffer comes back once the instance
 * releases the rest); the frame counts as dropped for want of completion
 * ring room (a filler counts as a filler). One caller per queue at a
 * time, BH disabled.
 */
void nvx_srq_discard(struct nvx_srq *srq, u32 queue, u32 buf, u32 strides,
		     u32 len, u16 flags)
{
	struct nvx_srq_queue *q = &srq->queues[queue];

	spin_lock(&srq->lock);
	nvx_srq_fill(srq, q, &srq->bufs[buf], strides, true);
	if (flags & NVX_SRQ_CQE_FILLER)
		q->fillers++;
	else
		q->drops_cq_full++;
	spin_unlock(&srq->lock);
	if (!(flags & NVX_SRQ_CQE_FILLER))
		trace_nvx_srq_drop(queue, NVX_SRQ_DROP_CQ_FULL, len);
}
EXPORT_SYMBOL_GPL(nvx_srq_discard);

/**
 * nvx_srq_drop() - the NIC dropped a frame
 * @srq: the set.
 * @queue: the queue the frame was steered to.
 * @why: the reason.
 * @len: the frame's length.
 */
void nvx_srq_drop(struct nvx_srq *srq, u32 queue,
		  enum nvx_srq_drop_reason why, u32 len)
{
	struct nvx_srq_queue *q = &srq->queues[queue];

	spin_lock_bh(&srq->lock);
	if (why == NVX_SRQ_DROP_NO_BUF)
		q->drops_no_buf++;
	else
		q->drops_cq_full++;
	spin_unlock_bh(&srq->lock);
	trace_nvx_srq_drop(queue, why, len);
}
EXPORT_SYMBOL_GPL(nvx_srq_drop);

/* ------------------------------------------------------------ release --- */

static u32 nvx_srq_released(struct nvx_srq *srq, u32 buf)
{
	u32 sum = READ_ONCE(srq->bufs[buf].kfree);
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(srq->sw[(size_t)cpu * srq->p.nr_bufs + buf]);
	return sum;
}

static bool nvx_srq_rel_valid(struct nvx_srq *srq, const struct nvx_srq_rel *e)
{
	struct nvx_srq_buf *b;

	if (e->flags || e->buf >= srq->p.nr_bufs || !e->strides ||
	    e->strides > srq->shape.strides_per_buf)
		return false;
	b = &srq->bufs[e->buf];
	if (READ_ONCE(b->state) == NVX_SRQ_BUF_POSTED)
		return false;
	return nvx_srq_released(srq, e->buf) + e->strides <=
	       READ_ONCE(b->hw_used);
}

/**
 * nvx_srq_take() - take a batch of a release ring's new entries
 * @srq: the set.
 * @r: the release ring.
 * @max: at most this many entries.
 * @released: incremented by the entries taken.
 * @garbage: incremented by those ignored as garbage.
 *
 * Takes up to @max entries into this CPU's row of counts.
 * Called with refill_lock held (BH off): takers and the refill's resets
 * never overlap, and nothing else on this CPU writes the row meanwhile.
 *
 * Return: true when entries are left.
 */
bool nvx_srq_take(struct nvx_srq *srq, struct nvx_srq_relring *r, u32 max,
		  u64 *released, u64 *garbage)
{
	u32 mask = srq->p.rel_entries - 1, prod, n, i;
	u64 ok = 0, bad = 0;
	u16 *row;

	lockdep_assert_held(&srq->refill_lock);
	/* pairs with the instance's release of prod: index before entries */
	prod = smp_load_acquire(&r->hdr->prod);
	n = prod - r->cons;
	if (!n)
		return false;
	if (n > srq->p.rel_entries) {
		atomic64_inc(&srq->release_garbage);
		(*garbage)++;
		return false;
	}
	n = min(n, max);
	row = srq->sw + (size_t)smp_processor_id() * srq->p.nr_bufs;
	for (i = 0; i < n; i++) {
		struct nvx_srq_rel *slot = &r->ents[(r->cons + i) & mask];
		struct nvx_srq_rel e;

		e.buf = READ_ONCE(slot->buf);
		e.strides = READ_ONCE(slot->strides);
		e.flags = READ_ONCE(slot->flags);
		if (!nvx_srq_rel_valid(srq, &e)) {
			bad++;
			continue;
		}
		WRITE_ONCE(row[e.buf], row[e.buf] + e.strides);
		ok++;
	}
	r->cons += n;
	/* the entries are read before the instance may reuse their slots */
	smp_store_release(&r->hdr->cons, r->cons);
	atomic64_add(ok + bad, &srq->released);
	atomic64_add(bad, &srq->release_garbage);
	*released += ok + bad;
	*garbage += bad;
	return r->cons != prod;
}

/* ------------------------------------------------------------- refill --- */

/*
 * Pick up to @max of pool @p's fully released buffers among up to @scan
 * held ones, oldest first (one still in use goes to the back of the
 * list); reset their counts and mark them POSTED. Off the held list,
 * refused by releases and not yet in the NIC's FIFO, they are nobody's
 * until nvx_srq_give(). refill_lock held. *@more is set when held
 * buffers were left unseen with the pool still below the mark.
 * Return: the buffers put in @bufs, or -1 when the pool is not below the
 * mark.
 */
static int nvx_srq_collect(struct nvx_srq *srq, u32 p, u32 *bufs, u32 scan,
			   u32 max, bool *more)
{
	struct nvx_srq_pool *pool = &srq->pools[p];
	u32 spb = srq->shape.strides_per_buf, n = 0, held, looked;
	struct nvx_srq_buf *b;
	unsigned int cpu;

	lockdep_assert_held(&srq->refill_lock);
	spin_lock_bh(&srq->lock);
	if (pool->posted_strides >= srq->p.low_water) {
		spin_unlock_bh(&srq->lock);
		return -1;
	}
	held = pool->nr_held;
	scan = min(held, scan);
	for (looked = 0; looked < scan && n < max; looked++) {
		u32 idx;

		b = list_first_entry(&pool->held, struct nvx_srq_buf, node);
		idx = b - srq->bufs;
		if (nvx_srq_released(srq, idx) < spb) {
			list_move_tail(&b->node, &pool->held);
			continue;
		}
		list_del(&b->node);
		for_each_possible_cpu(cpu)
			WRITE_ONCE(srq->sw[(size_t)cpu * srq->p.nr_bufs + idx],
				   0);
		WRITE_ONCE(b->hw_used, 0);
		WRITE_ONCE(b->kfree, 0);
		WRITE_ONCE(b->state, NVX_SRQ_BUF_POSTED);
		pool->nr_held--;
		pool->nr_posted++;
		pool->posted_strides += spb;
		bufs[n++] = idx;
	}
	if (more && looked < held && pool->posted_strides < srq->p.low_water)
		*more = true;
	spin_unlock_bh(&srq->lock);
	return n;
}

/* Poison (process context only), trace and post what collect() picked. */
static void nvx_srq_give(struct nvx_srq *srq, u32 p, const u32 *bufs, u32 n,
			 bool poison)
{
	u32 i;

	atomic64_inc(&srq->refills);
	atomic64_add(n, &srq->bufs_returned);
	for (i = 0; i < n; i++) {
		if (poison) {
			memset(nvx_srq_buf_addr(srq, bufs[i]),
			       NVX_SRQ_POISON_BYTE, srq->p.buf_size);
			cond_resched();
		}
		trace_nvx_srq_buf_return(p, bufs[i]);
	}
	trace_nvx_srq_refill(p, n, READ_ONCE(srq->pools[p].posted_strides));
	if (n)
		nvx_srq_post(srq, p, bufs, n);
}

/**
 * nvx_srq_refill_all() - take every release ring's entries, refill every pool
 * @srq: the set.
 * @released: incremented by the entries taken.
 * @garbage: incremented by those ignored.
 *
 * Process context (NVX_SRQ_IOC_RELEASE, the refill work), one at a time.
 * BH is off for one batch of one ring, or one pool's pick, never for
 * poisoning or posting. A pool is refilled only while its posted
 * strides are below the low-water mark.
 */
void nvx_srq_refill_all(struct nvx_srq *srq, u64 *released, u64 *garbage)
{
	bool poison = srq->p.flags & NVX_SRQ_POISON;
	u32 max = srq->shape.bufs_per_pool, p;
	int n;

	/* BH off for at most about NVX_SRQ_BH_READS per-CPU counts at a time */
	u32 batch = clamp(NVX_SRQ_BH_READS / nr_cpu_ids, 1U, NVX_SRQ_TAKE_BATCH);
	u32 scan = clamp(NVX_SRQ_BH_READS / nr_cpu_ids, 1U, NVX_SRQ_REFILL_SCAN);

	if (poison)
		max = clamp(NVX_SRQ_POISON_BUDGET / srq->p.buf_size, 1U, max);
	mutex_lock(&srq->refill_mutex);
	for (p = 0; p < srq->p.nr_rel_rings; p++) {
		unsigned int batches = srq->p.rel_entries / batch;
		bool more;

		/* at most one ring's worth each, in batches */
		do {
			spin_lock_bh(&srq->refill_lock);
			more = nvx_srq_take(srq, &srq->rel[p], batch,
					    released, garbage);
			spin_unlock_bh(&srq->refill_lock);
			cond_resched();
		} while (more && batches--);
	}
	for (p = 0; p < srq->shape.nr_pools; p++) {
		spin_lock_bh(&srq->refill_lock);
		n = nvx_srq_collect(srq, p, srq->refill_bufs, scan, max, NULL);
		spin_unlock_bh(&srq->refill_lock);
		if (n >= 0)
			nvx_srq_give(srq, p, srq->refill_bufs, n, poison);
		cond_resched();
	}
	mutex_unlock(&srq->refill_mutex);
}

/**
 * nvx_srq_refill_workfn() - the refill the receive path left
 * @work: the set's refill_work.
 */
void nvx_srq_refill_workfn(struct work_struct *work)
{
	struct nvx_srq *srq = container_of(work, struct nvx_srq, refill_work);
	u64 released = 0, garbage = 0;

	nvx_srq_refill_all(srq, &released, &garbage);
}

static void nvx_srq_defer(struct nvx_srq *srq)
{
	if (queue_work(system_unbound_wq, &srq->refill_work))
		atomic64_inc(&srq->refills_deferred);
}

/*
 * The receive path's refill, BH off, within the budget NVX_SRQ_RX_READS
 * sets (see there): entries from the rings in turn, buffers of @pool
 * only (the pool of the queue that called); what is left, and every refill of a set with
 * NVX_SRQ_POISON (no memset with BH off), goes to the refill work.
 */
static void nvx_srq_refill(struct nvx_srq *srq, u32 pool)
{
	u32 budget = max(1U, NVX_SRQ_RX_READS / nr_cpu_ids), left = budget;
	u32 nr = srq->p.nr_rel_rings, r, i, bufs[NVX_SRQ_RX_BUFS];
	u64 released = 0, garbage = 0, t0, ns;
	bool more = false;
	int n;

	if (srq->p.flags & NVX_SRQ_POISON) {
		nvx_srq_defer(srq);
		return;
	}
	if (!spin_trylock_bh(&srq->refill_lock))
		return;
	t0 = ktime_get_ns();
	r = srq->rx_ring < nr ? srq->rx_ring : 0;
	for (i = 0; i < nr && left; i++, r = (r + 1) % nr) {
		u64 before = released;

		more |= nvx_srq_take(srq, &srq->rel[r], left, &released,
				     &garbage);
		left -= min_t(u64, released - before, left);
	}
	srq->rx_ring = r;
	more |= i < nr;
	n = nvx_srq_collect(srq, pool, bufs, budget,
			    min(budget, NVX_SRQ_RX_BUFS), &more);
	/* the other pools below the mark are the work's (one read each) */
	for (i = 0; i < srq->shape.nr_pools && !more; i++)
		more = i != pool && READ_ONCE(srq->pools[i].posted_strides) <
				    srq->p.low_water;
	if (n >= 0)
		nvx_srq_give(srq, pool, bufs, n, false);
	ns = ktime_get_ns() - t0;
	if (ns > srq->refill_bh_max_ns)
		WRITE_ONCE(srq->refill_bh_max_ns, ns);
	spin_unlock_bh(&srq->refill_lock);
	if (more)
		nvx_srq_defer(srq);
}

/**
 * nvx_srq_rx_done() - the NIC finished with a frame for @queue
 * @srq: the set.
 * @queue: the queue.
 *
 * Refills the queue's pool when its posted strides are below the
 * low-water mark, at most once per jiffy. Call without backend locks
 * held: the refill posts buffers.
 */
void nvx_srq_rx_done(struct nvx_srq *srq, u32 queue)
{
	struct nvx_srq_pool *pool = nvx_srq_queue_pool(srq, queue);
	unsigned long next = READ_ONCE(srq->next_refill);

	if (READ_ONCE(pool->posted_strides) >= srq->p.low_water ||
	    time_before(jiffies, next))
		return;
	if (cmpxchg(&srq->next_refill, next, jiffies + 1) != next)
		return;
	nvx_srq_refill(srq, pool - srq->pools);
}
EXPORT_SYMBOL_GPL(nvx_srq_rx_done);

/* ----------------------------------------------------------- the NIC --- */

/**
 * nvx_srq_attach() - give a set to a NIC
 * @srq: the set, with no NIC.
 * @dev: the NIC.
 *
 * RTNL held. The set holds a reference on the backend's module while it
 * is attached, so a NIC driver cannot go while a set uses it.
 *
 * Return: 0, -EOPNOTSUPP (no backend drives @dev), -ENODEV (its driver
 * is going away) or the backend's error.
 */
int nvx_srq_attach(struct nvx_srq *srq, struct net_device *dev)
{
	const struct nvx_srq_backend *be;
	int ret;

	ASSERT_RTNL();
	be = nvx_srq_backend_of(dev);
	if (!be)
		return -EOPNOTSUPP;
	if (!try_module_get(be->owner))
		return -ENODEV;
	srq->backend = be;
	ret = be->attach(srq, dev);
	if (ret) {
		module_put(be->owner);
		return ret;
	}
	rcu_assign_pointer(srq->dev, dev);
	be->steer(srq, srq->rss);
	return 0;
}

/**
 * nvx_srq_detach() - take a set off its NIC
 * @srq: the set.
 *
 * RTNL held. Nothing happens when the set has no NIC (any more).
 */
void nvx_srq_detach(struct nvx_srq *srq)
{
	struct net_device *dev = rtnl_dereference(srq->dev);

	if (!dev)
		return;
	/* readers that still see @dev are waited for by ->detach() */
	RCU_INIT_POINTER(srq->dev, NULL);
	srq->backend->detach(srq, dev);
	module_put(srq->backend->owner);
}

/**
 * nvx_srq_post() - post buffers to the NIC, if the set still has one
 * @srq: the set.
 * @pool: the pool the buffers belong to.
 * @bufs: buffer indexes.
 * @n: entries in @bufs.
 */
void nvx_srq_post(struct nvx_srq *srq, u32 pool, const u32 *bufs,
		  unsigned int n)
{
	rcu_read_lock();
	if (rcu_dereference(srq->dev))
		srq->backend->post(srq, pool, bufs, n);
	rcu_read_unlock();
}

/**
 * nvx_srq_nic_gone() - the NIC of a set is going away
 * @srq: the set.
 *
 * Called by the backend, RTNL held, when the NIC is unregistered. The
 * set stays valid for its owner; it receives nothing more and its
 * transmit fails with -ENXIO.
 */
void nvx_srq_nic_gone(struct nvx_srq *srq)
{
	ASSERT_RTNL();
	nvx_srq_detach(srq);
}
EXPORT_SYMBOL_GPL(nvx_srq_nic_gone);

/**
 * nvx_srq_backend_of() - the backend that drives a NIC
 * @dev: the NIC.
 *
 * RTNL held.
 *
 * Return: the backend, or NULL.
 */
const struct nvx_srq_backend *nvx_srq_backend_of(struct net_device *dev)
{
	struct nvx_srq_backend *be;

	ASSERT_RTNL();
	list_for_each_entry(be, &nvx_srq_backends, list)
		if (be->match(dev))
			return be;
	return NULL;
}

/**
 * nvx_srq_register_backend() - a NIC driver offers shared RX queues
 * @be: the backend, with @be->owner set (THIS_MODULE); it must stay valid
 *	until nvx_srq_unregister_backend().
 *
 * Return: 0.
 */
int nvx_srq_register_backend(struct nvx_srq_backend *be)
{
	rtnl_lock();
	list_add_tail(&be->list, &nvx_srq_backends);
	rtnl_unlock();
	return 0;
}
EXPORT_SYMBOL_GPL(nvx_srq_register_backend);

/**
 * nvx_srq_unregister_backend() - remove a backend
 * @be: the backend.
 *
 * Sets hold a reference on the backend's module while attached, so none
 * is attached through @be when its module calls this from its exit.
 */
void nvx_srq_unregister_backend(struct nvx_srq_backend *be)
{
	rtnl_lock();
	list_del(&be->list);
	rtnl_unlock();
}
EXPORT_SYMBOL_GPL(nvx_srq_unregister_backend);

/**
 * nvx_srq_fill_stats() - a set's counters
 * @srq: the set.
 * @st: in: @flags (0) and @queue; out: the rest.
 *
 * Return: 0, or -EINVAL for bad flags or queue.
 */
int nvx_srq_fill_stats(struct nvx_srq *srq, struct nvx_srq_stats *st)
{
	u32 first = 0, last = srq->p.nr_queues, q, p, pfirst = 0;
	u32 plast = srq->shape.nr_pools;
	struct net_device *dev;

	if (st->flags)
		return -EINVAL;
	if (st->queue != NVX_SRQ_ALL_QUEUES) {
		if (st->queue >= srq->p.nr_queues)
			return -EINVAL;
		first = st->queue;
		last = first + 1;
		if (srq->p.flags & NVX_SRQ_PER_QUEUE) {
			pfirst = first;
			plast = last;
		}
	}
	memset(&st->rx_packets, 0,
	       sizeof(*st) - offsetof(struct nvx_srq_stats, rx_packets));
	st->nr_queues = srq->p.nr_queues;

	spin_lock_bh(&srq->lock);
	for (q = first; q < last; q++) {
		struct nvx_srq_queue *sq = &srq->queues[q];

		st->rx_packets += sq->rx_packets;
		st->rx_bytes += sq->rx_bytes;
		st->rx_strides += sq->rx_strides;
		st->fillers += sq->fillers;
		st->truncated += sq->truncated;
		st->drops_no_buf += sq->drops_no_buf;
		st->drops_cq_full += sq->drops_cq_full;
	}
	for (p = pfirst; p < plast; p++) {
		struct nvx_srq_pool *pool = &srq->pools[p];

		st->bufs_posted += pool->nr_posted;
		st->bufs_filling += pool->nr_filling;
		st->bufs_held += pool->nr_held;
		st->posted_strides += pool->posted_strides;
	}
	spin_unlock_bh(&srq->lock);

	st->refills = atomic64_read(&srq->refills);
	st->bufs_returned = atomic64_read(&srq->bufs_returned);
	st->released = atomic64_read(&srq->released);
	st->release_garbage = atomic64_read(&srq->release_garbage);
	st->tx_packets = atomic64_read(&srq->tx_packets);
	st->tx_bytes = atomic64_read(&srq->tx_bytes);
	rcu_read_lock();
	dev = rcu_dereference(srq->dev);
	st->ifindex = dev ? dev->ifindex : 0;
	rcu_read_unlock();
	return 0;
}

/* ------------------------------------------------------ ethtool -S --- */

static const char *const nvx_srq_queue_stat_names[] = {
	"packets", "bytes", "strides", "fillers", "truncated",
	"drops_no_buf", "drops_cq_full",
};

static const char *const nvx_srq_set_stat_names[] = {
	"srq_refills", "srq_bufs_returned", "srq_released",
	"srq_release_garbage", "srq_bufs_posted", "srq_bufs_filling",
	"srq_bufs_held", "srq_posted_strides",
};

/**
 * nvx_srq_ethtool_count() - number of ethtool statistics of a set
 * @srq: the set.
 *
 * Return: the count for ETH_SS_STATS.
 */
int nvx_srq_ethtool_count(struct nvx_srq *srq)
{
	return ARRAY_SIZE(nvx_srq_set_stat_names) +
	       srq->p.nr_queues * ARRAY_SIZE(nvx_srq_queue_stat_names);
}
EXPORT_SYMBOL_GPL(nvx_srq_ethtool_count);

/**
 * nvx_srq_ethtool_strings() - names of the ethtool statistics of a set
 * @srq: the set.
 * @data: nvx_srq_ethtool_count() strings of ETH_GSTRING_LEN.
 */
void nvx_srq_ethtool_strings(struct nvx_srq *srq, u8 *data)
{
	unsigned int i, q;

	for (i = 0; i < ARRAY_SIZE(nvx_srq_set_stat_names); i++)
		ethtool_puts(&data, nvx_srq_set_stat_names[i]);
	for (q = 0; q < srq->p.nr_queues; q++)
		for (i = 0; i < ARRAY_SIZE(nvx_srq_queue_stat_names); i++)
			ethtool_sprintf(&data, "rxq%u_%s", q,
					nvx_srq_queue_stat_names[i]);
}
EXPORT_SYMBOL_GPL(nvx_srq_ethtool_strings);

/**
 * nvx_srq_ethtool_stats() - values of the ethtool statistics of a set
 * @srq: the set.
 * @data: nvx_srq_ethtool_count() values, in nvx_srq_ethtool_strings()
 *	order.
 */
void nvx_srq_ethtool_stats(struct nvx_srq *srq, u64 *data)
{
	struct nvx_srq_stats st = { .queue = NVX_SRQ_ALL_QUEUES };
	u32 q;

	nvx_srq_fill_stats(srq, &st);
	*data++ = st.refills;
	*data++ = st.bufs_returned;
	*data++ = st.released;
	*data++ = st.release_garbage;
	*data++ = st.bufs_posted;
	*data++ = st.bufs_filling;
	*data++ = st.bufs_held;
	*data++ = st.posted_strides;
	spin_lock_bh(&srq->lock);
	for (q = 0; q < srq->p.nr_queues; q++) {
		struct nvx_srq_queue *sq = &srq->queues[q];

		*data++ = sq->rx_packets;
		*data++ = sq->rx_bytes;
		*data++ = sq->rx_strides;
		*data++ = sq->fillers;
		*data++ = sq->truncated;
		*data++ = sq->drops_no_buf;
		*data++ = sq->drops_cq_full;
	}
	spin_unlock_bh(&srq->lock);
}
EXPORT_SYMBOL_GPL(nvx_srq_ethtool_stats);

/* debugfs nvx/srq/backends: the NIC drivers that offer shared RX queues */
static int nvx_srq_backends_show(struct seq_file *m, void *unused)
{
	struct nvx_srq_backend *be;

	rtnl_lock();
	list_for_each_entry(be, &nvx_srq_backends, list)
		seq_printf(m, "%s\n", be->name);
	rtnl_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvx_srq_backends);

static struct dentry *nvx_srq_debugfs;

static int __init nvx_srq_init(void)
{
	int ret;

	ret = nvx_srq_file_init();
	if (ret)
		return ret;
	nvx_srq_debugfs = debugfs_create_dir("srq", nvx_debugfs_dir());
	debugfs_create_file("backends", 0444, nvx_srq_debugfs, NULL,
			    &nvx_srq_backends_fops);
	return 0;
}

static void __exit nvx_srq_exit(void)
{
	debugfs_remove_recursive(nvx_srq_debugfs);
	nvx_srq_file_exit();
}

module_init(nvx_srq_init);
module_exit(nvx_srq_exit);

MODULE_DESCRIPTION("nvx: shared multi-packet RX buffer queues");
MODULE_LICENSE("GPL");
