// SPDX-License-Identifier: GPL-2.0
/*
 * nvxsim: a software NIC that carries nvx SRQ sets, for tests.
 *
 * `ip link add NAME type nvxsim` creates two netdevs: NAME, the NIC, and
 * NAMEp, its peer, an ordinary netdev at the other end of the wire. The
 * peer can be moved to another network namespace and used by the normal
 * stack; a frame it sends arrives at the NIC. With an SRQ set attached
 * (and NAME up), the NIC's "hardware" below places every frame as an
 * mlx5 striding RQ does:
 *
 *  - the RSS hash of the frame's flow picks the queue through a
 *    128-entry indirection table;
 *  - the queue fills its current buffer's strides from the front; a
 *    frame that does not fit the strides left gets a filler completion
 *    for them first and starts the next posted buffer of the queue's
 *    pool at stride 0; a frame longer than a buffer takes a whole one,
 *    truncated;
 *  - no posted buffer, or no room in the completion ring: the frame is
 *    dropped and counted.
 *
 * Without a set, NAME is a plain veth-like end: frames reach its stack.
 * Whatever NAME transmits (the stack, or NVX_SRQ_IOC_TX) reaches NAMEp.
 */
#define pr_fmt(fmt) "nvxsim: " fmt

#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/rtnetlink.h>

#include "srq.h"

/**
 * struct nvxsim_fifo - buffers posted to one pool, in order
 * @ring: @mask + 1 entries, a power of two that holds bufs_per_pool.
 * @mask: index mask.
 * @head: next to take (free-running).
 * @tail: next free slot (free-running).
 */
struct nvxsim_fifo {
	u32 *ring;
	u32 mask;
	u32 head;
	u32 tail;
};

/**
 * struct nvxsim_rxq - a receive queue's place in its current buffer
 * @buf: the buffer being filled.
 * @next: its next free stride.
 * @active: @buf is valid.
 */
struct nvxsim_rxq {
	u32 buf;
	u32 next;
	bool active;
};

/**
 * struct nvxsim_hw - the NIC's state for one attached set
 * @node: on the NIC's list of sets, oldest first.
 * @lock: everything below; one frame at a time.
 * @srq: the set.
 * @match: its rule.
 * @shape: its geometry.
 * @rss: indirection table.
 * @posted: one FIFO per pool.
 * @rxq: one per queue.
 */
struct nvxsim_hw {
	struct list_head node;
	spinlock_t lock;	/* see above */
	struct nvx_srq *srq;
	const struct nvx_srq_match *match;
	const struct nvx_srq_shape *shape;
	u16 rss[NVX_SRQ_RSS_ENTRIES];
	struct nvxsim_fifo *posted;
	struct nvxsim_rxq *rxq;
};

/**
 * struct nvxsim - private data of the NIC
 * @peer: the other end of the wire.
 * @sets: the attached sets' states (struct nvxsim_hw), oldest first: an
 *	RCU list, written under RTNL. A frame goes to the first set whose
 *	rule takes it, else to the set without a rule, else to the stack.
 */
struct nvxsim {
	struct net_device *peer;
	struct list_head sets;
};

/**
 * struct nvxsim_peer - private data of the peer
 * @nic: the NIC.
 */
struct nvxsim_peer {
	struct net_device *nic;
};

static const struct net_device_ops nvxsim_nic_ops;

static void nvxsim_hw_free(struct nvxsim_hw *hw)
{
	u32 i;

	if (hw->posted)
		for (i = 0; i < hw->shape->nr_pools; i++)
			kvfree(hw->posted[i].ring);
	kfree(hw->posted);
	kfree(hw->rxq);
	kfree(hw);
}

/* The hardware: place one frame that arrived on the wire. */
static void nvxsim_hw_rx(struct nvxsim_hw *hw, struct net_device *nic,
			 struct sk_buff *skb)
{
	const struct nvx_srq_shape *s = hw->shape;
	u32 spb = s->strides_per_buf, len = skb->len, need, copy, q, fill;
	struct nvx_srq *srq = hw->srq;
	struct nvxsim_fifo *fifo;
	struct nvxsim_rxq *rxq;
	u16 flags = 0;

	skb_reset_mac_header(skb);
	if (len >= ETH_HLEN) {
		skb->protocol = eth_hdr(skb)->h_proto;
		skb_set_network_header(skb, ETH_HLEN);
	}
	skb_clear_hash(skb);
	q = READ_ONCE(hw->rss[skb_get_hash_net(dev_net(nic), skb) %
			      NVX_SRQ_RSS_ENTRIES]);

	if (len > s->buf_size) {
		need = spb;
		copy = s->buf_size;
		flags = NVX_SRQ_CQE_TRUNCATED;
	} else {
		need = max(1U, DIV_ROUND_UP(len, s->stride_size));
		copy = len;
	}

	spin_lock(&hw->lock);
	rxq = &hw->rxq[q];
	fifo = &hw->posted[s->nr_pools > 1 ? q : 0];
	fill = rxq->active && rxq->next + need > spb ? spb - rxq->next : 0;
	if (!nvx_srq_cq_room(srq, q, fill ? 2 : 1)) {
		nvx_srq_drop(srq, q, NVX_SRQ_DROP_CQ_FULL, len);
		goto out;
	}
	if (fill) {
		nvx_srq_complete(srq, q, rxq->buf, rxq->next, fill, 0,
				 NVX_SRQ_CQE_FILLER);
		rxq->active = false;
	}
	if (!rxq->active) {
		if (fifo->head == fifo->tail) {
			nvx_srq_drop(srq, q, NVX_SRQ_DROP_NO_BUF, len);
			goto out;
		}
		rxq->buf = fifo->ring[fifo->head++ & fifo->mask];
		rxq->next = 0;
		rxq->active = true;
	}
	/* the "DMA": bytes first, then the completion */
	skb_copy_bits(skb, 0, nvx_srq_buf_addr(srq, rxq->buf) +
		      rxq->next * s->stride_size, copy);
	nvx_srq_complete(srq, q, rxq->buf, rxq->next, need, copy, flags);
	rxq->next += need;
	if (rxq->next == spb)
		rxq->active = false;
out:
	spin_unlock(&hw->lock);
	nvx_srq_rx_done(srq, q);
}

/* The set that takes @skb, under rcu_read_lock(); or NULL. */
static struct nvxsim_hw *nvxsim_hw_for(struct nvxsim *sim,
				       const struct sk_buff *skb)
{
	struct nvxsim_hw *hw, *all = NULL;

	list_for_each_entry_rcu(hw, &sim->sets, node) {
		if (!hw->match->flags)
			all = hw;
		else if (nvx_srq_match_frame(hw->match, skb))
			return hw;
	}
	return all;
}

/* A frame leaves the peer: it arrives at the NIC. */
static netdev_tx_t nvxsim_peer_xmit(struct sk_buff *skb,
				    struct net_device *peer)
{
	struct nvxsim_peer *pp = netdev_priv(peer);
	struct net_device *nic = pp->nic;
	struct nvxsim *sim = netdev_priv(nic);
	unsigned int len = skb->len;
	struct nvxsim_hw *hw;

	if (!netif_running(nic)) {
		DEV_STATS_INC(peer, tx_dropped);
		kfree_skb(skb);
		return NETDEV_TX_OK;
	}
	DEV_STATS_INC(peer, tx_packets);
	DEV_STATS_ADD(peer, tx_bytes, len);

	rcu_read_lock();
	hw = nvxsim_hw_for(sim, skb);
	if (hw) {
		nvxsim_hw_rx(hw, nic, skb);
		rcu_read_unlock();
		DEV_STATS_INC(nic, rx_packets);
		DEV_STATS_ADD(nic, rx_bytes, len);
		consume_skb(skb);
		return NETDEV_TX_OK;
	}
	rcu_read_unlock();

	/* no set takes it: the NIC's own stack receives it */
	if (dev_forward_skb(nic, skb) == NET_RX_SUCCESS) {
		DEV_STATS_INC(nic, rx_packets);
		DEV_STATS_ADD(nic, rx_bytes, len);
	} else {
		DEV_STATS_INC(nic, rx_dropped);
	}
	return NETDEV_TX_OK;
}

/* Send @skb from @nic to its peer. */
static int nvxsim_to_peer(struct net_device *nic, struct sk_buff *skb)
{
	struct nvxsim *sim = netdev_priv(nic);
	unsigned int len = skb->len;

	if (!netif_running(sim->peer)) {
		DEV_STATS_INC(nic, tx_dropped);
		kfree_skb(skb);
		return -ENETDOWN;
	}
	if (dev_forward_skb(sim->peer, skb) != NET_RX_SUCCESS) {
		DEV_STATS_INC(nic, tx_dropped);
		return -ENOBUFS;
	}
	DEV_STATS_INC(nic, tx_packets);
	DEV_STATS_ADD(nic, tx_bytes, len);
	DEV_STATS_INC(sim->peer, rx_packets);
	DEV_STATS_ADD(sim->peer, rx_bytes, len);
	return 0;
}

static netdev_tx_t nvxsim_nic_xmit(struct sk_buff *skb, struct net_device *nic)
{
	nvxsim_to_peer(nic, skb);
	return NETDEV_TX_OK;
}

/* The NIC goes away: so do its sets' attachments. */
static void nvxsim_nic_uninit(struct net_device *nic)
{
	struct nvxsim *sim = netdev_priv(nic);
	struct nvxsim_hw *hw, *tmp;

	list_for_each_entry_safe(hw, tmp, &sim->sets, node)
		nvx_srq_nic_gone(hw->srq);
}

static const struct net_device_ops nvxsim_nic_ops = {
	.ndo_uninit = nvxsim_nic_uninit,
	.ndo_start_xmit = nvxsim_nic_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

static const struct net_device_ops nvxsim_peer_ops = {
	.ndo_start_xmit = nvxsim_peer_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

static void nvxsim_get_drvinfo(struct net_device *dev,
			       struct ethtool_drvinfo *info)
{
	strscpy(info->driver, "nvxsim", sizeof(info->driver));
}

/* ethtool -S NAME: the attached set's counters, per queue. RTNL held. */
static struct nvx_srq *nvxsim_lookup(struct net_device *dev);

static struct nvx_srq *nvxsim_srq(struct net_device *dev)
{
	if (dev->netdev_ops != &nvxsim_nic_ops)
		return NULL;
	return nvxsim_lookup(dev);
}

static int nvxsim_get_sset_count(struct net_device *dev, int sset)
{
	struct nvx_srq *srq = nvxsim_srq(dev);

	/* no set, no statistics (ethtool wants a count above 0) */
	if (sset != ETH_SS_STATS || !srq)
		return -EOPNOTSUPP;
	return nvx_srq_ethtool_count(srq);
}

static void nvxsim_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	struct nvx_srq *srq = nvxsim_srq(dev);

	if (sset == ETH_SS_STATS && srq)
		nvx_srq_ethtool_strings(srq, data);
}

static void nvxsim_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct nvx_srq *srq = nvxsim_srq(dev);

	if (srq)
		nvx_srq_ethtool_stats(srq, data);
}

static const struct ethtool_ops nvxsim_ethtool_ops = {
	.get_drvinfo = nvxsim_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = nvxsim_get_sset_count,
	.get_strings = nvxsim_get_strings,
	.get_ethtool_stats = nvxsim_get_ethtool_stats,
};

static void nvxsim_common_setup(struct net_device *dev)
{
	ether_setup(dev);
	/* netpoll would call ndo_start_xmit with IRQs off: not here */
	dev->priv_flags |= IFF_NO_QUEUE | IFF_DISABLE_NETPOLL;
	dev->priv_flags &= ~IFF_TX_SKB_SHARING;
	dev->lltx = true;
	dev->needs_free_netdev = true;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = ETH_MAX_MTU - ETH_HLEN;
	dev->ethtool_ops = &nvxsim_ethtool_ops;
	eth_hw_addr_random(dev);
}

static void nvxsim_setup(struct net_device *dev)
{
	nvxsim_common_setup(dev);
	dev->netdev_ops = &nvxsim_nic_ops;
}

static void nvxsim_peer_setup(struct net_device *dev)
{
	nvxsim_common_setup(dev);
	dev->netdev_ops = &nvxsim_peer_ops;
}

static int nvxsim_newlink(struct net *src_net, struct net_device *dev,
			  struct nlattr *tb[], struct nlattr *data[],
			  struct netlink_ext_ack *extack)
{
	struct nvxsim *sim = netdev_priv(dev);
	struct nvxsim_peer *pp;
	struct net_device *peer;
	char name[IFNAMSIZ];
	int err;

	if (strchr(dev->name, '%')) {
		err = dev_alloc_name(dev, dev->name);
		if (err < 0)
			return err;
	}
	if (strlen(dev->name) > IFNAMSIZ - 2) {
		NL_SET_ERR_MSG(extack, "nvxsim: name too long to name its peer NAMEp");
		return -ENAMETOOLONG;
	}
	snprintf(name, sizeof(name), "%sp", dev->name);
	peer = alloc_netdev(sizeof(*pp), name, NET_NAME_USER,
			    nvxsim_peer_setup);
	if (!peer)
		return -ENOMEM;
	dev_net_set(peer, dev_net(dev));
	pp = netdev_priv(peer);
	pp->nic = dev;
	sim->peer = peer;
	INIT_LIST_HEAD(&sim->sets);

	err = register_netdevice(peer);
	if (err) {
		free_netdev(peer);
		return err;
	}
	err = register_netdevice(dev);
	if (err) {
		unregister_netdevice(peer);
		return err;
	}
	netif_carrier_on(peer);
	netif_carrier_on(dev);
	return 0;
}

static void nvxsim_dellink(struct net_device *dev, struct list_head *head)
{
	struct nvxsim *sim = netdev_priv(dev);

	unregister_netdevice_queue(dev, head);
	unregister_netdevice_queue(sim->peer, head);
}

static struct rtnl_link_ops nvxsim_link_ops __read_mostly = {
	.kind = "nvxsim",
	.priv_size = sizeof(struct nvxsim),
	.setup = nvxsim_setup,
	.newlink = nvxsim_newlink,
	.dellink = nvxsim_dellink,
};

/* ------------------------------------------------------ SRQ backend --- */

static bool nvxsim_match(struct net_device *dev)
{
	return dev->netdev_ops == &nvxsim_nic_ops;
}

/* Do two rules take the same frames (the same rule)? */
static bool nvxsim_same_rule(const struct nvx_srq_match *a,
			     const struct nvx_srq_match *b)
{
	if (a->flags != b->flags)
		return false;
	if ((a->flags & NVX_SRQ_MATCH_MAC) && !ether_addr_equal(a->mac, b->mac))
		return false;
	return !(a->flags & NVX_SRQ_MATCH_IP4) || a->ip4 == b->ip4;
}

static int nvxsim_attach(struct nvx_srq *srq, struct net_device *dev)
{
	const struct nvx_srq_shape *s = nvx_srq_shape(srq);
	const struct nvx_srq_match *m = nvx_srq_match(srq);
	struct nvxsim *sim = netdev_priv(dev);
	struct nvxsim_hw *hw;
	u32 i;

	list_for_each_entry(hw, &sim->sets, node)
		if (nvxsim_same_rule(hw->match, m))
			return -EBUSY;
	if (dev->reg_state != NETREG_REGISTERED)
		return -ENODEV;
	hw = kzalloc(sizeof(*hw), GFP_KERNEL_ACCOUNT);
	if (!hw)
		return -ENOMEM;
	spin_lock_init(&hw->lock);
	hw->srq = srq;
	hw->match = m;
	hw->shape = s;
	hw->posted = kcalloc(s->nr_pools, sizeof(*hw->posted),
			     GFP_KERNEL_ACCOUNT);
	hw->rxq = kcalloc(s->nr_queues, sizeof(*hw->rxq), GFP_KERNEL_ACCOUNT);
	if (!hw->posted || !hw->rxq)
		goto nomem;
	for (i = 0; i < s->nr_pools; i++) {
		u32 size = roundup_pow_of_two(s->bufs_per_pool);

		hw->posted[i].ring = kvcalloc(size, sizeof(u32),
					      GFP_KERNEL_ACCOUNT);
		if (!hw->posted[i].ring)
			goto nomem;
		hw->posted[i].mask = size - 1;
	}
	nvx_srq_set_backend_data(srq, hw);
	list_add_tail_rcu(&hw->node, &sim->sets);
	return 0;

nomem:
	nvxsim_hw_free(hw);
	return -ENOMEM;
}

static void nvxsim_detach(struct nvx_srq *srq, struct net_device *dev)
{
	struct nvxsim_hw *hw = nvx_srq_backend_data(srq);

	if (!hw)
		return;
	list_del_rcu(&hw->node);
	/* receive paths and posts that still see @hw end first */
	synchronize_net();
	nvx_srq_set_backend_data(srq, NULL);
	nvxsim_hw_free(hw);
}

static void nvxsim_post(struct nvx_srq *srq, u32 pool, const u32 *bufs,
			unsigned int n)
{
	struct nvxsim_hw *hw = nvx_srq_backend_data(srq);
	struct nvxsim_fifo *fifo = &hw->posted[pool];
	u32 cap = hw->shape->bufs_per_pool;
	unsigned int i;

	spin_lock_bh(&hw->lock);
	/* the core never posts a buffer twice: the FIFO cannot overflow */
	if (WARN_ON_ONCE(fifo->tail - fifo->head + n > cap))
		n = cap - (fifo->tail - fifo->head);
	for (i = 0; i < n; i++)
		fifo->ring[fifo->tail++ & fifo->mask] = bufs[i];
	spin_unlock_bh(&hw->lock);
}

static void nvxsim_steer(struct nvx_srq *srq, const u16 *table)
{
	struct nvxsim_hw *hw = nvx_srq_backend_data(srq);
	unsigned int i;

	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		WRITE_ONCE(hw->rss[i], table[i]);
}

static int nvxsim_xmit(struct nvx_srq *srq, struct net_device *dev,
		       struct sk_buff *skb)
{
	skb->dev = dev;
	return nvxsim_to_peer(dev, skb);
}

/* The set without a rule, or else the oldest; RTNL held. */
static struct nvx_srq *nvxsim_lookup(struct net_device *dev)
{
	struct nvxsim *sim = netdev_priv(dev);
	struct nvxsim_hw *hw;

	ASSERT_RTNL();
	list_for_each_entry(hw, &sim->sets, node)
		if (!hw->match->flags)
			return hw->srq;
	hw = list_first_entry_or_null(&sim->sets, struct nvxsim_hw, node);
	return hw ? hw->srq : NULL;
}

static struct nvx_srq_backend nvxsim_srq_backend = {
	.name = "nvxsim",
	.owner = THIS_MODULE,
	.match = nvxsim_match,
	.attach = nvxsim_attach,
	.detach = nvxsim_detach,
	.post = nvxsim_post,
	.steer = nvxsim_steer,
	.xmit = nvxsim_xmit,
	.lookup = nvxsim_lookup,
};

static int __init nvxsim_init(void)
{
	int ret;

	ret = nvx_srq_register_backend(&nvxsim_srq_backend);
	if (ret)
		return ret;
	ret = rtnl_link_register(&nvxsim_link_ops);
	if (ret)
		nvx_srq_unregister_backend(&nvxsim_srq_backend);
	return ret;
}

/*
 * Unregistering the link type deletes every nvxsim NIC. No set is
 * attached to one: an attached set holds a reference on this module.
 */
static void __exit nvxsim_exit(void)
{
	rtnl_link_unregister(&nvxsim_link_ops);
	nvx_srq_unregister_backend(&nvxsim_srq_backend);
}

module_init(nvxsim_init);
module_exit(nvxsim_exit);

MODULE_ALIAS_RTNL_LINK("nvxsim");
MODULE_DESCRIPTION("nvxsim: a software NIC for nvx shared RX queues");
MODULE_LICENSE("GPL");
