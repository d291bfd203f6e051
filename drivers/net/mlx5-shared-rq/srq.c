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
 * reads across rows and resets them, under its own trylock. The kernel
 * never trusts the rings: a release that does not fit the counts is
 * counted and ignored, and an instance that lies about its releases can
 * only make its own frames be overwritten.
 */
#define pr_fmt(fmt) "nvx: srq: " fmt

#include <linux/anon_inodes.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/pid.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <net/net_namespace.h>

#include "internal.h"
#include "srq.h"
#include "trace.h"

enum nvx_srq_buf_state {
	NVX_SRQ_BUF_POSTED,
	NVX_SRQ_BUF_FILLING,
	NVX_SRQ_BUF_HELD,
};

/**
 * struct nvx_srq_buf - the kernel's view of one buffer
 * @node: on its pool's held list while HELD.
 * @hw_used: strides the NIC filled, fillers included.
 * @kfree: strides released by the kernel (fillers).
 * @state: enum nvx_srq_buf_state.
 * @pool: the pool it belongs to.
 */
struct nvx_srq_buf {
	struct list_head node;
	u32 hw_used;
	u32 kfree;
	u16 state;
	u16 pool;
};

/**
 * struct nvx_srq_pool - buffers that feed one or all queues
 * @held: HELD buffers, oldest first.
 * @first: index of its first buffer.
 * @posted_strides: strides the NIC can still fill.
 * @nr_posted: buffers POSTED.
 * @nr_filling: buffers FILLING.
 * @nr_held: buffers HELD.
 */
struct nvx_srq_pool {
	struct list_head held;
	u32 first;
	u32 posted_strides;
	u32 nr_posted;
	u32 nr_filling;
	u32 nr_held;
};

/**
 * struct nvx_srq_queue - one receive queue
 * @hdr: its completion ring's header in the ring area.
 * @cqes: its entries.
 * @prod: the kernel's producer index (the one in @hdr is only a copy).
 * @rx_packets: frames completed.
 * @rx_bytes: their bytes.
 * @rx_strides: strides consumed, fillers included.
 * @fillers: filler completions.
 * @truncated: frames longer than a buffer.
 * @drops_no_buf: frames dropped for want of a posted buffer.
 * @drops_cq_full: frames dropped for want of completion ring room.
 */
struct nvx_srq_queue {
	struct nvx_srq_ring *hdr;
	struct nvx_srq_cqe *cqes;
	u32 prod;
	u64 rx_packets;
	u64 rx_bytes;
	u64 rx_strides;
	u64 fillers;
	u64 truncated;
	u64 drops_no_buf;
	u64 drops_cq_full;
};

/**
 * struct nvx_srq_relring - one release ring
 * @hdr: its header in the ring area.
 * @ents: its entries.
 * @cons: the kernel's consumer index (under the set's refill_lock).
 */
struct nvx_srq_relring {
	struct nvx_srq_ring *hdr;
	struct nvx_srq_rel *ents;
	u32 cons;
};

/**
 * struct nvx_srq - an SRQ set
 * @p: parameters, defaults filled in.
 * @shape: what the backend needs of @p.
 * @layout: the mmap() layout.
 * @grant_offset: byte offset of buffer 0 in the grant.
 * @grant_file: the grant's file; the set holds a reference.
 * @grant: the grant.
 * @ring_area: the rings (vmalloc_user()).
 * @lock: buffer states and counts, pools, queues.
 * @bufs: per buffer.
 * @pools: one, or one per queue with NVX_SRQ_PER_QUEUE.
 * @queues: per queue.
 * @rel: release rings.
 * @sw: software release counts, a row of nr_bufs per possible CPU.
 * @refill_lock: one refill, or one taker of release entries, at a time.
 * @refill_bufs: scratch for the refill, bufs_per_pool entries.
 * @next_refill: jiffies before which the receive path does not refill.
 * @rss: the RSS indirection table.
 * @backend: the NIC's kind.
 * @dev: the NIC; NULL once detached. Written under RTNL.
 * @backend_data: the backend's per-set state.
 * @owner: the creating thread group.
 * @refills: refills that ran.
 * @bufs_returned: buffers returned to the NIC.
 * @released: release entries taken.
 * @release_garbage: release entries (and bad ring indexes) ignored.
 * @tx_packets: frames sent.
 * @tx_bytes: their bytes.
 */
struct nvx_srq {
	struct nvx_srq_params p;
	struct nvx_srq_shape shape;
	struct nvx_srq_layout layout;
	u64 grant_offset;
	struct file *grant_file;
	struct nvx_grant *grant;
	void *ring_area;
	spinlock_t lock;	/* see above */
	struct nvx_srq_buf *bufs;
	struct nvx_srq_pool *pools;
	struct nvx_srq_queue *queues;
	struct nvx_srq_relring *rel;
	u16 *sw;
	spinlock_t refill_lock;	/* serialises refills */
	u32 *refill_bufs;
	unsigned long next_refill;
	u16 rss[NVX_SRQ_RSS_ENTRIES];
	const struct nvx_srq_backend *backend;
	struct net_device __rcu *dev;
	void *backend_data;
	struct pid *owner;
	atomic64_t refills;
	atomic64_t bufs_returned;
	atomic64_t released;
	atomic64_t release_garbage;
	atomic64_t tx_packets;
	atomic64_t tx_bytes;
};

#define NVX_SRQ_RING_HDR	sizeof(struct nvx_srq_ring)
#define NVX_SRQ_POISON_BYTE	0x6b

static const struct nvx_srq_backend *const nvx_srq_backends[] = {
	&nvxsim_srq_backend,
};

/* ------------------------------------------------------ for backends --- */

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

/**
 * nvx_srq_set_backend_data() - store the backend's per-set state
 * @srq: the set.
 * @data: the state.
 */
void nvx_srq_set_backend_data(struct nvx_srq *srq, void *data)
{
	srq->backend_data = data;
}

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
	struct nvx_srq_pool *pool = &srq->pools[b->pool];
	struct nvx_srq_cqe *cqe;

	spin_lock(&srq->lock);
	/*
	 * Count first: once the completion is visible the instance may
	 * release its strides, and the release is checked against these.
	 */
	if (b->state == NVX_SRQ_BUF_POSTED) {
		WRITE_ONCE(b->state, NVX_SRQ_BUF_FILLING);
		pool->nr_posted--;
		pool->nr_filling++;
	}
	WRITE_ONCE(b->hw_used, b->hw_used + strides);
	pool->posted_strides -= strides;
	q->rx_strides += strides;
	if (flags & NVX_SRQ_CQE_FILLER) {
		WRITE_ONCE(b->kfree, b->kfree + strides);
		q->fillers++;
		trace_nvx_srq_filler(queue, buf, stride, strides);
	} else {
		q->rx_packets++;
		q->rx_bytes += len;
		if (flags & NVX_SRQ_CQE_TRUNCATED)
			q->truncated++;
	}
	if (b->hw_used == srq->shape.strides_per_buf) {
		WRITE_ONCE(b->state, NVX_SRQ_BUF_HELD);
		pool->nr_filling--;
		pool->nr_held++;
		list_add_tail(&b->node, &pool->held);
	}

	cqe = &q->cqes[q->prod & (srq->p.cq_entries - 1)];
	cqe->buf = buf;
	cqe->stride = stride;
	cqe->strides = strides;
	cqe->len = len;
	cqe->flags = flags;
	cqe->pad = 0;
	q->prod++;
	/* pairs with the instance's acquire of prod: entry before index */
	smp_store_release(&q->hdr->prod, q->prod);
	spin_unlock(&srq->lock);
}

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

/* Release entries taken per ring and call, to bound the time BH is off. */
#define NVX_SRQ_TAKE_BATCH	1024
/* Held buffers a refill looks at, and bytes it may poison, per pool. */
#define NVX_SRQ_REFILL_SCAN	256
#define NVX_SRQ_POISON_BUDGET	(4U << 20)

/*
 * Take up to NVX_SRQ_TAKE_BATCH of a release ring's new entries into this
 * CPU's row of counts. Called with refill_lock held (BH off): takers and
 * the refill's resets never overlap, and nothing else on this CPU writes
 * the row meanwhile. Returns true when entries are left.
 */
static bool nvx_srq_take(struct nvx_srq *srq, struct nvx_srq_relring *r,
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
	n = min_t(u32, n, NVX_SRQ_TAKE_BATCH);
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

static void nvx_srq_post(struct nvx_srq *srq, u32 pool, const u32 *bufs,
			 unsigned int n);

/* Return @pool's fully released buffers to the NIC, below low water. */
static void nvx_srq_refill_pool(struct nvx_srq *srq, u32 p)
{
	struct nvx_srq_pool *pool = &srq->pools[p];
	u32 spb = srq->shape.strides_per_buf, n = 0, i, scan, max;
	struct nvx_srq_buf *b;
	unsigned int cpu;

	max = srq->shape.bufs_per_pool;
	if (srq->p.flags & NVX_SRQ_POISON)
		max = clamp(NVX_SRQ_POISON_BUDGET / srq->p.buf_size, 1U, max);

	spin_lock_bh(&srq->lock);
	if (pool->posted_strides >= srq->p.low_water) {
		spin_unlock_bh(&srq->lock);
		return;
	}
	/* oldest first; one still in use goes to the back of the list */
	scan = min(pool->nr_held, NVX_SRQ_REFILL_SCAN);
	while (scan-- && n < max) {
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
		srq->refill_bufs[n++] = idx;
	}
	spin_unlock_bh(&srq->lock);

	atomic64_inc(&srq->refills);
	atomic64_add(n, &srq->bufs_returned);
	for (i = 0; i < n; i++) {
		if (srq->p.flags & NVX_SRQ_POISON)
			memset(nvx_srq_buf_addr(srq, srq->refill_bufs[i]),
			       NVX_SRQ_POISON_BYTE, srq->p.buf_size);
		trace_nvx_srq_buf_return(p, srq->refill_bufs[i]);
	}
	trace_nvx_srq_refill(p, n, READ_ONCE(pool->posted_strides));
	if (n)
		nvx_srq_post(srq, p, srq->refill_bufs, n);
}

/* The receive path's refill: one batch per ring, skipped when busy. */
static void nvx_srq_refill(struct nvx_srq *srq)
{
	u64 released = 0, garbage = 0;
	u32 p;

	if (!spin_trylock_bh(&srq->refill_lock))
		return;
	for (p = 0; p < srq->p.nr_rel_rings; p++)
		nvx_srq_take(srq, &srq->rel[p], &released, &garbage);
	for (p = 0; p < srq->shape.nr_pools; p++)
		nvx_srq_refill_pool(srq, p);
	spin_unlock_bh(&srq->refill_lock);
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
	nvx_srq_refill(srq);
}

/* ----------------------------------------------------------- the NIC --- */

/* Take the set off its NIC. RTNL held. */
static void nvx_srq_detach(struct nvx_srq *srq)
{
	struct net_device *dev = rtnl_dereference(srq->dev);

	if (!dev)
		return;
	/* readers that still see @dev are waited for by ->detach() */
	RCU_INIT_POINTER(srq->dev, NULL);
	srq->backend->detach(srq, dev);
}

/* Post buffers to the NIC, if the set still has one. */
static void nvx_srq_post(struct nvx_srq *srq, u32 pool, const u32 *bufs,
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

/* The backend that drives @dev, or NULL. RTNL held. */
static const struct nvx_srq_backend *nvx_srq_backend_of(struct net_device *dev)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvx_srq_backends); i++)
		if (nvx_srq_backends[i]->match(dev))
			return nvx_srq_backends[i];
	return NULL;
}

/* ----------------------------------------------------------- the set --- */

static void nvx_srq_free(struct nvx_srq *srq)
{
	/*
	 * Under RTNL even when the NIC already cleared @dev: its detach
	 * (from its unregister) may still be running, and holds RTNL.
	 */
	if (srq->backend) {
		rtnl_lock();
		nvx_srq_detach(srq);
		rtnl_unlock();
	}
	if (srq->grant_file)
		fput(srq->grant_file);
	put_pid(srq->owner);
	vfree(srq->ring_area);
	kvfree(srq->bufs);
	kfree(srq->pools);
	kfree(srq->queues);
	kfree(srq->rel);
	kvfree(srq->sw);
	kvfree(srq->refill_bufs);
	kfree(srq);
}

static int nvx_srq_release(struct inode *inode, struct file *file)
{
	nvx_srq_free(file->private_data);
	return 0;
}

static int nvx_srq_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct nvx_srq *srq = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long pgoff, npages, addr, i;
	struct page **pages;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (off == 0) {
		if (len > srq->layout.ring_bytes)
			return -EINVAL;
		vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
		return remap_vmalloc_range(vma, srq->ring_area, 0);
	}
	if (off != srq->layout.buf_offset)
		return -EINVAL;
	if (len > srq->layout.buf_bytes)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP,
		     VM_MAYWRITE);

	npages = len >> PAGE_SHIFT;
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	pgoff = srq->grant_offset >> PAGE_SHIFT;
	for (i = 0; i < npages; i++)
		pages[i] = nvx_grant_page(srq->grant, pgoff + i);
	addr = vma->vm_start;
	ret = vm_insert_pages(vma, addr, pages, &npages);
	kvfree(pages);
	return ret;
}

static int nvx_srq_fill_stats(struct nvx_srq *srq, struct nvx_srq_stats *st)
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

static int nvx_srq_ioc_release(struct file *file, void *argp,
			       struct nvx_new_fd *nfd)
{
	struct nvx_srq *srq = file->private_data;
	struct nvx_srq_release *r = argp;
	u32 p;

	if (r->flags || r->pad)
		return -EINVAL;
	r->released = 0;
	r->garbage = 0;
	for (p = 0; p < srq->p.nr_rel_rings; p++) {
		unsigned int batches = srq->p.rel_entries / NVX_SRQ_TAKE_BATCH;
		bool more;

		/* at most one ring's worth each, in batches */
		do {
			spin_lock_bh(&srq->refill_lock);
			more = nvx_srq_take(srq, &srq->rel[p], &r->released,
					    &r->garbage);
			spin_unlock_bh(&srq->refill_lock);
			cond_resched();
		} while (more && batches--);
	}
	/* the caller asked: no rate limit, but one refill at a time */
	spin_lock_bh(&srq->refill_lock);
	for (p = 0; p < srq->shape.nr_pools; p++)
		nvx_srq_refill_pool(srq, p);
	spin_unlock_bh(&srq->refill_lock);
	return 0;
}

static int nvx_srq_ioc_stats(struct file *file, void *argp,
			     struct nvx_new_fd *nfd)
{
	return nvx_srq_fill_stats(file->private_data, argp);
}

static int nvx_srq_ioc_tx(struct file *file, void *argp,
			  struct nvx_new_fd *nfd)
{
	struct nvx_srq *srq = file->private_data;
	struct nvx_srq_tx *tx = argp;
	struct net_device *dev;
	struct sk_buff *skb;
	int ret;

	if (tx->flags)
		return -EINVAL;
	if (tx->len < ETH_HLEN || tx->len > ETH_HLEN + ETH_MAX_MTU)
		return -EMSGSIZE;
	skb = alloc_skb(NET_IP_ALIGN + tx->len, GFP_KERNEL_ACCOUNT);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, NET_IP_ALIGN);
	if (copy_from_user(skb_put(skb, tx->len), u64_to_user_ptr(tx->addr),
			   tx->len)) {
		kfree_skb(skb);
		return -EFAULT;
	}

	rcu_read_lock();
	dev = rcu_dereference(srq->dev);
	if (!dev) {
		ret = -ENXIO;
	} else if (tx->len > dev->mtu + ETH_HLEN) {
		ret = -EMSGSIZE;
	} else {
		ret = srq->backend->xmit(srq, dev, skb);
		skb = NULL;
	}
	rcu_read_unlock();
	if (skb)
		kfree_skb(skb);
	if (ret)
		return ret;
	atomic64_inc(&srq->tx_packets);
	atomic64_add(tx->len, &srq->tx_bytes);
	return 0;
}

static int nvx_srq_ioc_steer(struct file *file, void *argp,
			     struct nvx_new_fd *nfd)
{
	struct nvx_srq *srq = file->private_data;
	struct nvx_srq_steer *st = argp;
	u16 table[NVX_SRQ_RSS_ENTRIES];
	struct net_device *dev;
	unsigned int i;
	int ret = 0;

	if (st->flags || st->nr_entries != NVX_SRQ_RSS_ENTRIES)
		return -EINVAL;
	if (copy_from_user(table, u64_to_user_ptr(st->table), sizeof(table)))
		return -EFAULT;
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		if (table[i] >= srq->p.nr_queues)
			return -EINVAL;

	rtnl_lock();
	dev = rtnl_dereference(srq->dev);
	if (dev) {
		memcpy(srq->rss, table, sizeof(table));
		srq->backend->steer(srq, table);
	} else {
		ret = -ENXIO;
	}
	rtnl_unlock();
	return ret;
}

static const struct nvx_ioctl_desc nvx_srq_ioctls[] = {
	NVX_IOCTL(NVX_SRQ_IOC_RELEASE, sizeof(struct nvx_srq_release),
		  nvx_srq_ioc_release, 0),
	NVX_IOCTL(NVX_SRQ_IOC_STATS, sizeof(struct nvx_srq_stats),
		  nvx_srq_ioc_stats, 0),
	NVX_IOCTL(NVX_SRQ_IOC_TX, sizeof(struct nvx_srq_tx),
		  nvx_srq_ioc_tx, 0),
	NVX_IOCTL(NVX_SRQ_IOC_STEER, sizeof(struct nvx_srq_steer),
		  nvx_srq_ioc_steer, 0),
};

static long nvx_srq_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	return nvx_ioctl_dispatch(file, cmd, arg, nvx_srq_ioctls,
				  ARRAY_SIZE(nvx_srq_ioctls));
}

static const struct file_operations nvx_srq_fops = {
	.owner = THIS_MODULE,
	.release = nvx_srq_release,
	.mmap = nvx_srq_mmap,
	.unlocked_ioctl = nvx_srq_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* Check @p and fill in its defaults. */
static int nvx_srq_check_params(struct nvx_srq_params *p)
{
	u32 pool_bufs;

	if (p->flags & ~NVX_SRQ_FLAGS || p->pad)
		return -EINVAL;
	if (!p->nr_queues || p->nr_queues > NVX_SRQ_MAX_QUEUES)
		return -EINVAL;
	p->nr_bufs = p->nr_bufs ?: NVX_SRQ_DEF_NR_BUFS;
	p->buf_size = p->buf_size ?: NVX_SRQ_DEF_BUF_SIZE;
	p->stride_size = p->stride_size ?: NVX_SRQ_DEF_STRIDE;
	p->cq_entries = p->cq_entries ?: NVX_SRQ_DEF_CQ_ENTRIES;
	p->rel_entries = p->rel_entries ?: NVX_SRQ_DEF_REL_ENTRIES;
	p->nr_rel_rings = p->nr_rel_rings ?: p->nr_queues;

	if (p->nr_bufs > NVX_SRQ_MAX_BUFS)
		return -EINVAL;
	if (!is_power_of_2(p->buf_size) ||
	    p->buf_size < NVX_SRQ_MIN_BUF_SIZE ||
	    p->buf_size > NVX_SRQ_MAX_BUF_SIZE)
		return -EINVAL;
	if (!is_power_of_2(p->stride_size) ||
	    p->stride_size < NVX_SRQ_MIN_STRIDE ||
	    p->stride_size > p->buf_size ||
	    p->buf_size / p->stride_size > NVX_SRQ_MAX_STRIDES)
		return -EINVAL;
	if (!is_power_of_2(p->cq_entries) ||
	    p->cq_entries > NVX_SRQ_MAX_ENTRIES ||
	    !is_power_of_2(p->rel_entries) ||
	    p->rel_entries > NVX_SRQ_MAX_ENTRIES)
		return -EINVAL;
	if (p->nr_rel_rings > NVX_SRQ_MAX_QUEUES)
		return -EINVAL;
	pool_bufs = p->nr_bufs;
	if (p->flags & NVX_SRQ_PER_QUEUE) {
		if (p->nr_bufs % p->nr_queues)
			return -EINVAL;
		pool_bufs /= p->nr_queues;
	}
	if (!p->low_water)
		p->low_water = max(1U, pool_bufs *
					(p->buf_size / p->stride_size) / 4);
	if (p->low_water > pool_bufs * (p->buf_size / p->stride_size))
		return -EINVAL;
	return 0;
}

/* Lay out the rings and allocate the set's memory. */
static int nvx_srq_alloc(struct nvx_srq *srq)
{
	struct nvx_srq_params *p = &srq->p;
	struct nvx_srq_layout *l = &srq->layout;
	u32 i;

	l->cq_offset = 0;
	l->cq_bytes = NVX_SRQ_RING_HDR +
		      (u64)p->cq_entries * sizeof(struct nvx_srq_cqe);
	l->rel_offset = l->cq_bytes * p->nr_queues;
	l->rel_bytes = NVX_SRQ_RING_HDR +
		       (u64)p->rel_entries * sizeof(struct nvx_srq_rel);
	l->ring_bytes = PAGE_ALIGN(l->rel_offset +
				   l->rel_bytes * p->nr_rel_rings);
	l->buf_offset = l->ring_bytes;
	l->buf_bytes = PAGE_ALIGN((u64)p->nr_bufs * p->buf_size);

	srq->ring_area = vmalloc_user(l->ring_bytes);
	srq->bufs = kvcalloc(p->nr_bufs, sizeof(*srq->bufs),
			     GFP_KERNEL_ACCOUNT);
	srq->pools = kcalloc(srq->shape.nr_pools, sizeof(*srq->pools),
			     GFP_KERNEL_ACCOUNT);
	srq->queues = kcalloc(p->nr_queues, sizeof(*srq->queues),
			      GFP_KERNEL_ACCOUNT);
	srq->rel = kcalloc(p->nr_rel_rings, sizeof(*srq->rel),
			   GFP_KERNEL_ACCOUNT);
	srq->sw = kvcalloc((size_t)nr_cpu_ids * p->nr_bufs, sizeof(*srq->sw),
			   GFP_KERNEL_ACCOUNT);
	srq->refill_bufs = kvcalloc(srq->shape.bufs_per_pool,
				    sizeof(*srq->refill_bufs),
				    GFP_KERNEL_ACCOUNT);
	if (!srq->ring_area || !srq->bufs || !srq->pools || !srq->queues ||
	    !srq->rel || !srq->sw || !srq->refill_bufs)
		return -ENOMEM;

	for (i = 0; i < p->nr_queues; i++) {
		struct nvx_srq_queue *q = &srq->queues[i];

		q->hdr = srq->ring_area + l->cq_offset + i * l->cq_bytes;
		q->cqes = (void *)q->hdr + NVX_SRQ_RING_HDR;
	}
	for (i = 0; i < p->nr_rel_rings; i++) {
		struct nvx_srq_relring *r = &srq->rel[i];

		r->hdr = srq->ring_area + l->rel_offset + i * l->rel_bytes;
		r->ents = (void *)r->hdr + NVX_SRQ_RING_HDR;
	}
	for (i = 0; i < srq->shape.nr_pools; i++) {
		struct nvx_srq_pool *pool = &srq->pools[i];

		INIT_LIST_HEAD(&pool->held);
		pool->first = i * srq->shape.bufs_per_pool;
		pool->nr_posted = srq->shape.bufs_per_pool;
		pool->posted_strides = srq->shape.bufs_per_pool *
				       srq->shape.strides_per_buf;
	}
	for (i = 0; i < p->nr_bufs; i++) {
		INIT_LIST_HEAD(&srq->bufs[i].node);
		srq->bufs[i].pool = i / srq->shape.bufs_per_pool;
	}
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		srq->rss[i] = i % p->nr_queues;
	return 0;
}

/* Attach @srq to the NIC @ifindex of the caller's namespace. */
static int nvx_srq_attach(struct nvx_srq *srq, u32 ifindex)
{
	struct net *net = current->nsproxy->net_ns;
	const struct nvx_srq_backend *be;
	struct net_device *dev;
	int ret;

	rtnl_lock();
	dev = __dev_get_by_index(net, ifindex);
	if (!dev) {
		ret = -ENODEV;
		goto out;
	}
	be = nvx_srq_backend_of(dev);
	if (!be) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	srq->backend = be;
	ret = be->attach(srq, dev);
	if (ret)
		goto out;
	rcu_assign_pointer(srq->dev, dev);
	be->steer(srq, srq->rss);
out:
	rtnl_unlock();
	return ret;
}

/**
 * nvx_ioc_srq_create() - NVX_IOC_SRQ_CREATE
 * @file: /dev/nvx.
 * @argp: struct nvx_srq_create.
 * @nfd: the set's new fd.
 *
 * Return: 0 or a negative errno (see struct nvx_srq_create).
 */
int nvx_ioc_srq_create(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	struct nvx_srq_create *req = argp;
	struct file *sfile;
	struct nvx_srq *srq;
	u32 p;
	int ret, fd;

	if (req->flags & ~NVX_SRQ_CREATE_FLAGS)
		return -EINVAL;
	ret = nvx_srq_check_params(&req->params);
	if (ret)
		return ret;
	if (!ns_capable(current->nsproxy->net_ns->user_ns, CAP_NET_ADMIN))
		return -EPERM;

	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq)
		return -ENOMEM;
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->refill_lock);
	srq->next_refill = jiffies;
	srq->p = req->params;
	srq->shape.nr_queues = srq->p.nr_queues;
	srq->shape.nr_pools = srq->p.flags & NVX_SRQ_PER_QUEUE ?
			      srq->p.nr_queues : 1;
	srq->shape.bufs_per_pool = srq->p.nr_bufs / srq->shape.nr_pools;
	srq->shape.buf_size = srq->p.buf_size;
	srq->shape.stride_size = srq->p.stride_size;
	srq->shape.strides_per_buf = srq->p.buf_size / srq->p.stride_size;
	srq->owner = get_pid(task_tgid(current));

	srq->grant = nvx_grant_fget(req->grant_fd, &srq->grant_file);
	if (IS_ERR(srq->grant)) {
		ret = PTR_ERR(srq->grant);
		srq->grant = NULL;
		goto err;
	}
	srq->grant_offset = req->grant_offset;
	if (req->grant_offset % max_t(u32, srq->p.buf_size, PAGE_SIZE)) {
		ret = -EINVAL;
		goto err;
	}
	if (req->grant_offset > nvx_grant_bytes(srq->grant) ||
	    (u64)srq->p.nr_bufs * srq->p.buf_size >
	    nvx_grant_bytes(srq->grant) - req->grant_offset) {
		ret = -ENOSPC;
		goto err;
	}
	ret = nvx_srq_alloc(srq);
	if (ret)
		goto err;
	ret = nvx_srq_attach(srq, req->ifindex);
	if (ret)
		goto err;
	for (p = 0; p < srq->shape.nr_pools; p++) {
		u32 i, n = srq->shape.bufs_per_pool;

		for (i = 0; i < n; i++)
			srq->refill_bufs[i] = srq->pools[p].first + i;
		nvx_srq_post(srq, p, srq->refill_bufs, n);
	}

	fd = get_unused_fd_flags(O_RDWR |
				 (req->flags & NVX_SRQ_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto err;
	}
	sfile = anon_inode_getfile("[nvx-srq]", &nvx_srq_fops, srq, O_RDWR);
	if (IS_ERR(sfile)) {
		put_unused_fd(fd);
		ret = PTR_ERR(sfile);
		goto err;
	}
	req->params = srq->p;
	req->layout = srq->layout;
	req->fd = fd;
	nfd->file = sfile;
	nfd->fd = fd;
	return 0;

err:
	nvx_srq_free(srq);
	return ret;
}

/*
 * The set attached to NIC @ifindex of the caller's namespace, RTNL held;
 * or an ERR_PTR.
 */
static struct nvx_srq *nvx_srq_lookup(u32 ifindex)
{
	const struct nvx_srq_backend *be;
	struct net_device *dev;
	struct nvx_srq *srq;

	ASSERT_RTNL();
	dev = __dev_get_by_index(current->nsproxy->net_ns, ifindex);
	if (!dev)
		return ERR_PTR(-ENODEV);
	be = nvx_srq_backend_of(dev);
	if (!be)
		return ERR_PTR(-EOPNOTSUPP);
	srq = be->lookup(dev);
	return srq ?: ERR_PTR(-ENOENT);
}

/**
 * nvx_ioc_srq_query() - NVX_IOC_SRQ_QUERY
 * @file: /dev/nvx.
 * @argp: struct nvx_srq_stats; @ifindex names the NIC.
 * @nfd: unused.
 *
 * Return: 0, -ENODEV, -EOPNOTSUPP, -ENOENT or -EINVAL.
 */
int nvx_ioc_srq_query(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	struct nvx_srq_stats *st = argp;
	struct nvx_srq *srq;
	int ret;

	if (st->flags)
		return -EINVAL;
	rtnl_lock();
	srq = nvx_srq_lookup(st->ifindex);
	ret = IS_ERR(srq) ? PTR_ERR(srq) : nvx_srq_fill_stats(srq, st);
	rtnl_unlock();
	return ret;
}

/**
 * nvx_ioc_srq_info() - NVX_IOC_SRQ_INFO
 * @file: /dev/nvx.
 * @argp: struct nvx_srq_info.
 * @nfd: unused.
 *
 * Return: 0, -ENODEV, -EOPNOTSUPP, -ENOENT or -EINVAL.
 */
int nvx_ioc_srq_info(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	struct nvx_srq_info *info = argp;
	struct nvx_srq *srq;
	int ret = 0;

	if (info->flags)
		return -EINVAL;
	rtnl_lock();
	srq = nvx_srq_lookup(info->ifindex);
	if (IS_ERR(srq)) {
		ret = PTR_ERR(srq);
	} else {
		info->params = srq->p;
		info->owner = pid_vnr(srq->owner);
		info->pad = 0;
	}
	rtnl_unlock();
	return ret;
}

/**
 * nvx_srq_init() - register the software NIC
 *
 * Return: 0 or a negative errno.
 */
int __init nvx_srq_init(void)
{
	int ret = nvx_ioctls_check(nvx_srq_ioctls,
				   ARRAY_SIZE(nvx_srq_ioctls));

	return ret ?: nvxsim_init();
}

/**
 * nvx_srq_exit() - unregister the software NIC
 */
void nvx_srq_exit(void)
{
	nvxsim_exit();
}
