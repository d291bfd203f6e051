/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx shared RX queues: the interface between the core (nvx_srq.ko) and
 * a NIC backend (nvxsim.ko, the software NIC; an mlx5 backend would be
 * another). A backend registers itself with nvx_srq_register_backend()
 * when its driver loads and unregisters when it unloads.
 *
 * The core owns the buffer pool, the per-buffer counts, the rings shared
 * with the instance, refill and the statistics. A backend is the NIC: it
 * keeps the buffers the core posted, packs frames into their strides,
 * and reports every frame and filler through nvx_srq_complete().
 */
#ifndef _NVX_SRQ_H
#define _NVX_SRQ_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/types.h>
#include <uapi/nvx/srq.h>

struct nvx_srq;

/**
 * struct nvx_srq_backend - a kind of NIC that can carry SRQ sets
 * @name: for messages.
 * @match: does this backend drive @dev? Called under RTNL.
 * @attach: give @dev to @srq (RTNL held). -EBUSY when @dev already has a
 *	set with the same rule (nvx_srq_match()); -EOPNOTSUPP for a rule
 *	the backend cannot steer by. After it returns, the backend may call
 *	nvx_srq_complete().
 * @detach: take @srq off its NIC (RTNL held). After it returns the
 *	backend never touches @srq again. Also called by the backend itself
 *	(through nvx_srq_nic_gone()) when the NIC goes away.
 * @post: post buffers @bufs[0..@n) of pool @pool (a pool per queue with
 *	NVX_SRQ_PER_QUEUE, one otherwise) to the NIC. mlx5: WQEs of the
 *	shared RMP; software NIC: its posted FIFO. Called without the
 *	core's locks.
 * @steer: program the RSS indirection table (NVX_SRQ_RSS_ENTRIES
 *	queue indexes, checked by the core).
 * @xmit: send @skb (an Ethernet frame) out of @dev; consumes @skb.
 *	Called under rcu_read_lock() while the set is attached.
 * @lookup: the set attached to @dev (with several: the catch-all set,
 *	or else the oldest), or NULL. RTNL held.
 * @owner: the backend's module (THIS_MODULE); an attached set holds a
 *	reference on it.
 * @list: on the core's list of backends.
 *
 * @post runs under rcu_read_lock() and only while the set is attached;
 * @detach must wait (synchronize_net()) for such callers before it frees
 * what they use.
 */
struct nvx_srq_backend {
	const char *name;
	bool (*match)(struct net_device *dev);
	int (*attach)(struct nvx_srq *srq, struct net_device *dev);
	void (*detach)(struct nvx_srq *srq, struct net_device *dev);
	void (*post)(struct nvx_srq *srq, u32 pool, const u32 *bufs,
		     unsigned int n);
	void (*steer)(struct nvx_srq *srq, const u16 *table);
	int (*xmit)(struct nvx_srq *srq, struct net_device *dev,
		    struct sk_buff *skb);
	struct nvx_srq *(*lookup)(struct net_device *dev);
	struct module *owner;
	struct list_head list;
};

int nvx_srq_register_backend(struct nvx_srq_backend *be);
void nvx_srq_unregister_backend(struct nvx_srq_backend *be);

/* The shape of a set, as the backend needs it. */
struct nvx_srq_shape {
	u32 nr_queues;
	u32 nr_pools;
	u32 bufs_per_pool;
	u32 buf_size;
	u32 stride_size;
	u32 strides_per_buf;
};

/**
 * struct nvx_srq_match - which of the NIC's frames a set takes
 * @flags: NVX_SRQ_MATCH_*; 0: every frame no other set's rule takes.
 * @ip4: with NVX_SRQ_MATCH_IP4: IPv4 destination (and ARP target).
 * @mac: with NVX_SRQ_MATCH_MAC: destination MAC.
 */
struct nvx_srq_match {
	u32 flags;
	__be32 ip4;
	u8 mac[ETH_ALEN];
};

const struct nvx_srq_shape *nvx_srq_shape(struct nvx_srq *srq);
const struct nvx_srq_match *nvx_srq_match(struct nvx_srq *srq);
bool nvx_srq_match_frame(const struct nvx_srq_match *m,
			 const struct sk_buff *skb);
void *nvx_srq_buf_addr(struct nvx_srq *srq, u32 buf);
void nvx_srq_set_backend_data(struct nvx_srq *srq, void *data);
void *nvx_srq_backend_data(struct nvx_srq *srq);

/* Reasons for nvx_srq_drop() */
enum nvx_srq_drop_reason {
	NVX_SRQ_DROP_NO_BUF,
	NVX_SRQ_DROP_CQ_FULL,
};

bool nvx_srq_cq_room(struct nvx_srq *srq, u32 queue, unsigned int n);
void nvx_srq_complete(struct nvx_srq *srq, u32 queue, u32 buf, u32 stride,
		      u32 strides, u32 len, u16 flags);
void nvx_srq_discard(struct nvx_srq *srq, u32 queue, u32 buf, u32 strides,
		     u32 len, u16 flags);
void nvx_srq_drop(struct nvx_srq *srq, u32 queue,
		  enum nvx_srq_drop_reason why, u32 len);
void nvx_srq_rx_done(struct nvx_srq *srq, u32 queue);
void nvx_srq_nic_gone(struct nvx_srq *srq);
int nvx_srq_ethtool_count(struct nvx_srq *srq);
void nvx_srq_ethtool_strings(struct nvx_srq *srq, u8 *data);
void nvx_srq_ethtool_stats(struct nvx_srq *srq, u64 *data);

#endif /* _NVX_SRQ_H */
