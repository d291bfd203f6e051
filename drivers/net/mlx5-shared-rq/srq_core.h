/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx shared RX queues: the set's internals, shared by srq.c (what the
 * NIC backends call, release and refill) and srq_file.c (the set's file:
 * create, mmap, ioctls).
 */
#ifndef _NVX_SRQ_CORE_H
#define _NVX_SRQ_CORE_H

#include <linux/atomic.h>
#include <linux/eventfd.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/nvx.h>
#include <linux/nvx_grant.h>
#include <linux/nvx_uintr.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "srq.h"

struct seq_file;

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
 * @notify: the user-interrupt vector posted when a completion lands in
 *	an emptied ring (NVX_SRQ_IOC_NOTIFY), or NULL.
 * @notify_ev: the eventfd signalled instead (NVX_SRQ_NOTIFY_EVENTFD), or
 *	NULL; never both.
 * @notified: vectors posted and eventfds signalled.
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
	struct nvx_uintr_vec __rcu *notify;
	struct eventfd_ctx __rcu *notify_ev;
	atomic64_t notified;
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
 * @match: which of the NIC's frames the set takes.
 * @layout: the mmap() layout.
 * @grant_offset: byte offset of buffer 0 in the grant.
 * @grant_file: the grant's file; the set holds a reference.
 * @grant: the grant.
 * @ring_area: the rings: vmalloc_user(), or with NVX_SRQ_RINGS_IN_GRANT
 *	the grant's memory at @ring_offset (direct map, contiguous).
 * @ring_offset: byte offset of the ring area in the grant, when
 *	@rings_in_grant.
 * @rings_in_grant: NVX_SRQ_RINGS_IN_GRANT: the set does not own
 *	@ring_area and its fd maps no ring area.
 * @lock: buffer states and counts, pools, queues.
 * @bufs: per buffer.
 * @pools: one, or one per queue with NVX_SRQ_PER_QUEUE.
 * @queues: per queue.
 * @rel: release rings.
 * @sw: software release counts, a row of nr_bufs per possible CPU.
 * @refill_lock: one refill, or one taker of release entries, at a time.
 * @refill_mutex: one process-context refill at a time (RELEASE,
 *	@refill_work); it owns @refill_bufs.
 * @refill_bufs: scratch of the process-context refill, bufs_per_pool
 *	entries.
 * @refill_work: what the receive path leaves, in process context.
 * @rx_ring: the release ring the receive path takes from first.
 * @refill_bh_max_ns: the longest receive-path refill (BH off), in ns.
 * @next_refill: jiffies before which the receive path does not refill.
 * @rss: the RSS indirection table.
 * @backend: the NIC's kind.
 * @dev: the NIC; NULL once detached. Written under RTNL.
 * @backend_data: the backend's per-set state.
 * @owner: the creating thread group.
 * @owner_uid: its effective uid: who may observe the set besides
 *	CAP_NET_ADMIN (nvx_srq_may_observe()).
 * @refills: refills that ran.
 * @refills_deferred: receive-path refills handed to @refill_work.
 * @bufs_returned: buffers returned to the NIC.
 * @released: release entries taken.
 * @release_garbage: release entries (and bad ring indexes) ignored.
 * @tx_packets: frames sent.
 * @tx_bytes: their bytes.
 * @tx_lock: the TX ring (NVX_SRQ_IOC_TX_RING, NVX_SRQ_IOC_TX_KICK) and
 *	the @tx_* fields below.
 * @tx_offset: byte offset of the TX ring in the grant.
 * @tx_entries: its descriptors; 0 when the set has no TX ring.
 * @tx_cons: the kernel's consumer index.
 * @tx_stopped: 0, or why the ring stopped (enum nvx_srq_tx_stop).
 * @tx_bad: descriptors and indexes that stopped the ring.
 */
struct nvx_srq {
	struct nvx_srq_params p;
	struct nvx_srq_shape shape;
	struct nvx_srq_match match;
	struct nvx_srq_layout layout;
	u64 grant_offset;
	struct file *grant_file;
	struct nvx_grant *grant;
	void *ring_area;
	u64 ring_offset;
	bool rings_in_grant;
	spinlock_t lock;	/* see above */
	struct nvx_srq_buf *bufs;
	struct nvx_srq_pool *pools;
	struct nvx_srq_queue *queues;
	struct nvx_srq_relring *rel;
	u16 *sw;
	spinlock_t refill_lock;	/* serialises refills */
	struct mutex refill_mutex;	/* serialises process-context refills */
	u32 *refill_bufs;
	struct work_struct refill_work;
	u32 rx_ring;
	u64 refill_bh_max_ns;
	unsigned long next_refill;
	u16 rss[NVX_SRQ_RSS_ENTRIES];
	const struct nvx_srq_backend *backend;
	struct net_device __rcu *dev;
	void *backend_data;
	struct pid *owner;
	kuid_t owner_uid;
	atomic64_t refills;
	atomic64_t refills_deferred;
	atomic64_t bufs_returned;
	atomic64_t released;
	atomic64_t release_garbage;
	atomic64_t tx_packets;
	atomic64_t tx_bytes;
	struct mutex tx_lock;	/* see above */
	u64 tx_offset;
	u32 tx_entries;
	u32 tx_cons;
	u32 tx_stopped;
	u64 tx_bad;
};

#define NVX_SRQ_RING_HDR	sizeof(struct nvx_srq_ring)
#define NVX_SRQ_POISON_BYTE	0x6b

/* Release entries taken per ring and batch in process context, BH off. */
#define NVX_SRQ_TAKE_BATCH	1024
/*
 * Held buffers a process-context refill looks at, and bytes it may
 * poison (BH on), per pool.
 */
#define NVX_SRQ_REFILL_SCAN	256
#define NVX_SRQ_POISON_BUDGET	(4U << 20)
/*
 * The receive path's budget per call, BH off: an entry checked or a held
 * buffer looked at reads one count per possible CPU, so it gets
 * max(1, NVX_SRQ_RX_READS / nr_cpu_ids) of each (in all, over the rings,
 * and in the pool that called), returns at most NVX_SRQ_RX_BUFS buffers
 * and never poisons; the rest is refill_work's.
 */
#define NVX_SRQ_RX_READS	4096U
#define NVX_SRQ_RX_BUFS		32U
/*
 * The process-context refill's per-CPU counts read per BH-off section:
 * it takes NVX_SRQ_TAKE_BATCH entries, and looks at NVX_SRQ_REFILL_SCAN
 * held buffers, per section only with at most 64 possible CPUs.
 */
#define NVX_SRQ_BH_READS	65536U

bool nvx_srq_take(struct nvx_srq *srq, struct nvx_srq_relring *r, u32 max,
		  u64 *released, u64 *garbage);
void nvx_srq_refill_all(struct nvx_srq *srq, u64 *released, u64 *garbage);
void nvx_srq_refill_workfn(struct work_struct *work);
void nvx_srq_post(struct nvx_srq *srq, u32 pool, const u32 *bufs,
		  unsigned int n);
void nvx_srq_detach(struct nvx_srq *srq);
int nvx_srq_attach(struct nvx_srq *srq, struct net_device *dev);
const struct nvx_srq_backend *nvx_srq_backend_of(struct net_device *dev);
int nvx_srq_fill_stats(struct nvx_srq *srq, struct nvx_srq_stats *st);
int nvx_srq_file_init(void);
void nvx_srq_file_exit(void);
void nvx_srq_notify_post(struct nvx_srq_queue *q);
int nvx_srq_ioc_tx(struct nvx_ucmd *ucmd);
int nvx_srq_ioc_tx_ring(struct nvx_ucmd *ucmd);
int nvx_srq_ioc_tx_kick(struct nvx_ucmd *ucmd);
void nvx_srq_tx_show_fdinfo(struct seq_file *m, struct nvx_srq *srq);

#endif /* _NVX_SRQ_CORE_H */
