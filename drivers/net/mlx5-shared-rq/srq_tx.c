// SPDX-License-Identifier: GPL-2.0
/*
 * nvx shared RX queues: sending.
 *
 * NVX_SRQ_IOC_TX sends one frame from the caller's memory. A set whose
 * rings live in its grant (NVX_SRQ_RINGS_IN_GRANT: a user VM's memory)
 * may also have a TX ring there (NVX_SRQ_IOC_TX_RING): a header (struct
 * nvx_srq_tx_hdr) and descriptors (struct nvx_srq_txd) that the instance
 * writes; NVX_SRQ_IOC_TX_KICK sends what it posted, copying each frame
 * out of the grant through the direct map (the grant's pages are the
 * pool's, never a clone's). Everything read from the ring is the
 * instance's word: each index and descriptor is checked once, in a
 * kernel copy, and a bad one stops that ring alone (counted), as bad
 * release entries hurt only the instance that wrote them.
 */
#define pr_fmt(fmt) "nvx_srq: " fmt

#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/uaccess.h>

#include "srq_core.h"

/* The kernel address of byte @off of the set's grant (direct map). */
static void *nvx_srq_grant_addr(struct nvx_srq *srq, u64 off)
{
	return page_address(nvx_grant_page(srq->grant, off >> PAGE_SHIFT)) +
	       offset_in_page(off);
}

/* Copy @len bytes at byte @off of the grant to @to, page by page. */
static void nvx_srq_grant_read(struct nvx_srq *srq, void *to, u64 off,
			       u32 len)
{
	while (len) {
		u32 n = min_t(u64, len, PAGE_SIZE - offset_in_page(off));

		memcpy(to, nvx_srq_grant_addr(srq, off), n);
		to += n;
		off += n;
		len -= n;
	}
}

/* Zero @len bytes at byte @off of the grant, page by page. */
static void nvx_srq_grant_zero(struct nvx_srq *srq, u64 off, u64 len)
{
	while (len) {
		u32 n = min_t(u64, len, PAGE_SIZE - offset_in_page(off));

		memset(nvx_srq_grant_addr(srq, off), 0, n);
		off += n;
		len -= n;
	}
}

/*
 * Send @skb (@len bytes) through the set's NIC; it is consumed. 0,
 * -ENXIO when the set lost its NIC, -EMSGSIZE over the NIC's MTU, or the
 * backend's error.
 */
static int nvx_srq_xmit(struct nvx_srq *srq, struct sk_buff *skb, u32 len)
{
	struct net_device *dev;
	int ret;

	rcu_read_lock();
	dev = rcu_dereference(srq->dev);
	if (!dev) {
		ret = -ENXIO;
	} else if (len > dev->mtu + ETH_HLEN) {
		ret = -EMSGSIZE;
	} else {
		/* as from a qdisc: the receive side of the wire runs with BH off */
		local_bh_disable();
		ret = srq->backend->xmit(srq, dev, skb);
		local_bh_enable();
		skb = NULL;
	}
	rcu_read_unlock();
	kfree_skb(skb);
	if (!ret) {
		atomic64_inc(&srq->tx_packets);
		atomic64_add(len, &srq->tx_bytes);
	}
	return ret;
}

/* A frame of @len bytes, room for it reserved; NULL without memory. */
static struct sk_buff *nvx_srq_tx_skb(u32 len)
{
	struct sk_buff *skb = alloc_skb(NET_IP_ALIGN + len,
					GFP_KERNEL_ACCOUNT);

	if (skb)
		skb_reserve(skb, NET_IP_ALIGN);
	return skb;
}

/**
 * nvx_srq_ioc_tx() - NVX_SRQ_IOC_TX: send one frame from user memory
 * @ucmd: the call, on a set's fd.
 *
 * Return: 0, or the errors listed in include/uapi/nvx/srq.h.
 */
int nvx_srq_ioc_tx(struct nvx_ucmd *ucmd)
{
	struct nvx_srq *srq = ucmd->file->private_data;
	struct nvx_srq_tx *tx = ucmd->arg;
	struct sk_buff *skb;

	if (tx->flags)
		return -EINVAL;
	if (tx->len < ETH_HLEN || tx->len > ETH_HLEN + ETH_MAX_MTU)
		return -EMSGSIZE;
	skb = nvx_srq_tx_skb(tx->len);
	if (!skb)
		return -ENOMEM;
	if (copy_from_user(skb_put(skb, tx->len), u64_to_user_ptr(tx->addr),
			   tx->len)) {
		kfree_skb(skb);
		return -EFAULT;
	}
	return nvx_srq_xmit(srq, skb, tx->len);
}

/* Does [@a, @a + @alen) meet [@b, @b + @blen)? */
static bool nvx_srq_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/**
 * nvx_srq_ioc_tx_ring() - NVX_SRQ_IOC_TX_RING: set up or remove a TX ring
 * @ucmd: the call, on a set's fd.
 *
 * Return: 0, or the errors listed in include/uapi/nvx/srq.h.
 */
int nvx_srq_ioc_tx_ring(struct nvx_ucmd *ucmd)
{
	struct nvx_srq *srq = ucmd->file->private_data;
	struct nvx_srq_tx_ring *a = ucmd->arg;
	u64 gbytes = nvx_grant_bytes(srq->grant), bytes;
	u64 bufs = (u64)srq->p.nr_bufs * srq->p.buf_size;

	if (a->flags || !srq->rings_in_grant)
		return -EINVAL;
	if (!a->entries) {
		if (a->offset)
			return -EINVAL;
		mutex_lock(&srq->tx_lock);
		srq->tx_entries = 0;
		mutex_unlock(&srq->tx_lock);
		return 0;
	}
	if (!is_power_of_2(a->entries) ||
	    a->entries > NVX_SRQ_TX_MAX_ENTRIES || !PAGE_ALIGNED(a->offset))
		return -EINVAL;
	bytes = sizeof(struct nvx_srq_tx_hdr) +
		(u64)a->entries * sizeof(struct nvx_srq_txd);
	if (a->offset > gbytes || bytes > gbytes - a->offset)
		return -ENOSPC;
	if (nvx_srq_overlap(a->offset, bytes, srq->grant_offset, bufs) ||
	    nvx_srq_overlap(a->offset, bytes, srq->ring_offset,
			    srq->layout.ring_bytes))
		return -EINVAL;

	mutex_lock(&srq->tx_lock);
	nvx_srq_grant_zero(srq, a->offset, bytes);
	srq->tx_offset = a->offset;
	srq->tx_entries = a->entries;
	srq->tx_cons = 0;
	srq->tx_stopped = 0;
	mutex_unlock(&srq->tx_lock);
	return 0;
}

/* Stop the TX ring for @why; the caller holds tx_lock. */
static void nvx_srq_tx_stop(struct nvx_srq *srq, struct nvx_srq_tx_hdr *h,
			    u32 why)
{
	srq->tx_stopped = why;
	srq->tx_bad++;
	WRITE_ONCE(h->stopped, why);
}

/* The MTU of the set's NIC; 0 once the NIC went (the send says ENXIO). */
static u32 nvx_srq_tx_mtu(struct nvx_srq *srq)
{
	struct net_device *dev;
	u32 mtu = 0;

	rcu_read_lock();
	dev = rcu_dereference(srq->dev);
	if (dev)
		mtu = READ_ONCE(dev->mtu);
	rcu_read_unlock();
	return mtu ?: ETH_MAX_MTU;
}

/* 0 for a descriptor the kernel may send, else why it stops the ring. */
static u32 nvx_srq_txd_check(struct nvx_srq *srq,
			     const struct nvx_srq_txd *d)
{
	u64 gbytes = nvx_grant_bytes(srq->grant);

	if (d->flags)
		return NVX_SRQ_TX_STOP_FLAGS;
	if (d->len < ETH_HLEN || d->len > ETH_HLEN + ETH_MAX_MTU)
		return NVX_SRQ_TX_STOP_LEN;
	if (d->addr > gbytes || d->len > gbytes - d->addr)
		return NVX_SRQ_TX_STOP_ADDR;
	return 0;
}

/**
 * nvx_srq_ioc_tx_kick() - NVX_SRQ_IOC_TX_KICK: send what the TX ring holds
 * @ucmd: the call, on a set's fd.
 *
 * Return: 0, or the errors listed in include/uapi/nvx/srq.h.
 */
int nvx_srq_ioc_tx_kick(struct nvx_ucmd *ucmd)
{
	struct nvx_srq *srq = ucmd->file->private_data;
	struct nvx_srq_tx_kick *k = ucmd->arg;
	struct nvx_srq_tx_hdr *h;
	int ret = 0;
	u32 prod;

	if (k->flags)
		return -EINVAL;
	k->sent = 0;
	k->dropped = 0;
	mutex_lock(&srq->tx_lock);
	if (!srq->tx_entries) {
		ret = -ENOENT;
		goto out;
	}
	h = nvx_srq_grant_addr(srq, srq->tx_offset);
	if (srq->tx_stopped)
		goto done;
	prod = READ_ONCE(h->prod);
	if (prod - srq->tx_cons > srq->tx_entries) {
		nvx_srq_tx_stop(srq, h, NVX_SRQ_TX_STOP_INDEX);
		goto done;
	}
	/* the descriptors are read after the index that published them */
	smp_rmb();
	while (srq->tx_cons != prod) {
		u64 off = srq->tx_offset + sizeof(*h) +
			  (u64)(srq->tx_cons & (srq->tx_entries - 1)) *
			  sizeof(struct nvx_srq_txd);
		struct nvx_srq_txd *sd = nvx_srq_grant_addr(srq, off), d;
		struct sk_buff *skb;
		u32 why;

		/* one read each, checked: the instance may rewrite the ring */
		d.addr = READ_ONCE(sd->addr);
		d.len = READ_ONCE(sd->len);
		d.flags = READ_ONCE(sd->flags);
		why = nvx_srq_txd_check(srq, &d);
		if (!why && d.len > nvx_srq_tx_mtu(srq) + ETH_HLEN)
			why = NVX_SRQ_TX_STOP_LEN;
		if (why) {
			nvx_srq_tx_stop(srq, h, why);
			break;
		}
		skb = nvx_srq_tx_skb(d.len);
		if (!skb) {
			ret = -ENOMEM;
			break;
		}
		nvx_srq_grant_read(srq, skb_put(skb, d.len), d.addr, d.len);
		ret = nvx_srq_xmit(srq, skb, d.len);
		if (ret == -EMSGSIZE) {
			/* the MTU went down since the check: the same stop */
			ret = 0;
			nvx_srq_tx_stop(srq, h, NVX_SRQ_TX_STOP_LEN);
			break;
		}
		if (ret == -ENXIO)
			break;
		if (ret)
			k->dropped++;
		else
			k->sent++;
		ret = 0;
		srq->tx_cons++;
		cond_resched();
	}
	/* the frames were copied before the instance may reuse them */
	smp_store_release(&h->cons, srq->tx_cons);
done:
	k->stopped = srq->tx_stopped;
	k->bad = srq->tx_bad;
out:
	mutex_unlock(&srq->tx_lock);
	return ret;
}

/**
 * nvx_srq_tx_show_fdinfo() - the TX ring's lines of a set's fdinfo
 * @m: the fdinfo file.
 * @srq: the set.
 */
void nvx_srq_tx_show_fdinfo(struct seq_file *m, struct nvx_srq *srq)
{
	mutex_lock(&srq->tx_lock);
	if (srq->tx_entries) {
		seq_printf(m, "tx_ring:\t%llu\n", srq->tx_offset);
		seq_printf(m, "tx_entries:\t%u\n", srq->tx_entries);
		seq_printf(m, "tx_cons:\t%u\n", srq->tx_cons);
		seq_printf(m, "tx_stopped:\t%u\n", srq->tx_stopped);
	}
	seq_printf(m, "tx_bad:\t%llu\n", srq->tx_bad);
	mutex_unlock(&srq->tx_lock);
}
