// SPDX-License-Identifier: GPL-2.0
/*
 * nvx shared RX queues: the set's file.
 *
 * NVX_IOC_SRQ_CREATE makes a set on a NIC whose driver registered a
 * backend, with its buffers in a grant; the set's fd maps its rings
 * (offset 0) and its buffers (read-only) and takes the set's ioctls.
 * Closing the last reference detaches the set from its NIC.
 */
#define pr_fmt(fmt) "nvx_srq: " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/etherdevice.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/pid.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <net/net_namespace.h>

#include "srq_core.h"

/* ----------------------------------------------------------- the set --- */

static void nvx_srq_free(struct nvx_srq *srq)
{
	struct nvx_uintr_vec *v;
	struct eventfd_ctx *ev;
	u32 i;

	/*
	 * Under RTNL even when the NIC already cleared @dev: its detach
	 * (from its unregister) may still be running, and holds RTNL.
	 */
	if (srq->backend) {
		rtnl_lock();
		nvx_srq_detach(srq);
		rtnl_unlock();
	}
	/* after the detach: no receive path can queue it again */
	cancel_work_sync(&srq->refill_work);
	for (i = 0; srq->queues && i < srq->p.nr_queues; i++) {
		v = rcu_dereference_protected(srq->queues[i].notify, true);
		if (v)
			nvx_uintr_vec_put(v);
		/* detached: no receive path reads it any more */
		ev = rcu_dereference_protected(srq->queues[i].notify_ev, true);
		if (ev)
			eventfd_ctx_put(ev);
	}
	mutex_destroy(&srq->refill_mutex);
	mutex_destroy(&srq->tx_lock);
	if (srq->grant_file)
		nvx_grant_put(srq->grant, srq->grant_file);
	put_pid(srq->owner);
	if (!srq->rings_in_grant)
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
		/* the rings are the grant's: map the grant */
		if (srq->rings_in_grant)
			return -ENODEV;
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

static int nvx_srq_ioc_release(struct nvx_ucmd *ucmd)
{
	struct nvx_srq *srq = ucmd->file->private_data;
	struct nvx_srq_release *r = ucmd->arg;

	if (r->flags || r->reserved)
		return -EINVAL;
	r->released = 0;
	r->garbage = 0;
	/* the caller asked: no rate limit, but one refill at a time */
	nvx_srq_refill_all(srq, &r->released, &r->garbage);
	return 0;
}

static int nvx_srq_ioc_stats(struct nvx_ucmd *ucmd)
{
	return nvx_srq_fill_stats(ucmd->file->private_data, ucmd->arg);
}

static int nvx_srq_ioc_steer(struct nvx_ucmd *ucmd)
{
	struct nvx_srq *srq = ucmd->file->private_data;
	struct nvx_srq_steer *st = ucmd->arg;
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

/*
 * NVX_SRQ_IOC_NOTIFY: set or clear a queue's vector; post it at once when
 * the queue's ring already holds completions.
 */
static int nvx_srq_ioc_notify(struct nvx_ucmd *ucmd)
{
	struct nvx_srq *srq = ucmd->file->private_data;
	struct nvx_srq_notify *a = ucmd->arg;
	struct nvx_uintr_vec *v = NULL, *old;
	struct eventfd_ctx *ev = NULL, *old_ev;
	struct nvx_srq_queue *q;
	u32 prod;

	if (a->flags & ~NVX_SRQ_NOTIFY_FLAGS || a->reserved ||
	    a->vector_fd < -1 || a->queue >= srq->p.nr_queues)
		return -EINVAL;
	q = &srq->queues[array_index_nospec(a->queue, srq->p.nr_queues)];
	if (a->vector_fd >= 0 && (a->flags & NVX_SRQ_NOTIFY_EVENTFD)) {
		ev = eventfd_ctx_fdget(a->vector_fd);
		if (IS_ERR(ev))
			return PTR_ERR(ev);
	} else if (a->vector_fd >= 0) {
		v = nvx_uintr_vec_get(a->vector_fd);
		if (IS_ERR(v))
			return PTR_ERR(v);
	}
	/* both at once, for NOTIFYs racing on the queue: never both set */
	spin_lock_bh(&srq->lock);
	old = unrcu_pointer(xchg(&q->notify, RCU_INITIALIZER(v)));
	old_ev = unrcu_pointer(xchg(&q->notify_ev, RCU_INITIALIZER(ev)));
	spin_unlock_bh(&srq->lock);
	if (old)
		nvx_uintr_vec_put(old);
	if (old_ev) {
		/* a receive path may be signalling it */
		synchronize_rcu();
		eventfd_ctx_put(old_ev);
	}
	if (!v && !ev)
		return 0;
	/*
	 * Completions that came before the vector: post for them. The
	 * vector is set before srq->lock is taken and a completion reads it
	 * after its unlock: either this sees the completion's prod, or the
	 * completion sees the vector (both may post: posts merge).
	 */
	spin_lock_bh(&srq->lock);
	prod = q->prod;
	spin_unlock_bh(&srq->lock);
	if (READ_ONCE(q->hdr->cons) != prod)
		nvx_srq_notify_post(q);
	return 0;
}

static const struct nvx_ioctl_op nvx_srq_set_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_RELEASE,
		     nvx_srq_ioc_release, struct nvx_srq_release, garbage, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_STATS,
		     nvx_srq_ioc_stats, struct nvx_srq_stats, posted_strides, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_TX, nvx_srq_ioc_tx,
		     struct nvx_srq_tx, addr, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_STEER,
		     nvx_srq_ioc_steer, struct nvx_srq_steer, table, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_NOTIFY,
		     nvx_srq_ioc_notify, struct nvx_srq_notify, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_TX_RING,
		     nvx_srq_ioc_tx_ring, struct nvx_srq_tx_ring, offset, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_SET_BASE, NVX_SRQ_IOC_TX_KICK,
		     nvx_srq_ioc_tx_kick, struct nvx_srq_tx_kick, bad,
		     NVX_IOCTL_OUT_ON_ERROR),
};

/* /proc/PID/fdinfo/N of a set: its NIC, shape and counters. */
static void nvx_srq_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct nvx_srq_stats st = { .queue = NVX_SRQ_ALL_QUEUES };
	struct nvx_srq *srq = file->private_data;
	u32 i;

	nvx_srq_fill_stats(srq, &st);
	seq_puts(m, "nvx-object:\tsrq-set\n");
	seq_printf(m, "ifindex:\t%u\n", st.ifindex);
	seq_printf(m, "queues:\t%u\n", srq->p.nr_queues);
	seq_printf(m, "bufs:\t%u\n", srq->p.nr_bufs);
	seq_printf(m, "buf_size:\t%u\n", srq->p.buf_size);
	seq_printf(m, "stride_size:\t%u\n", srq->p.stride_size);
	if (srq->rings_in_grant)
		seq_printf(m, "rings_in_grant:\t%llu\n", srq->ring_offset);
	if (srq->match.flags & NVX_SRQ_MATCH_MAC)
		seq_printf(m, "match_mac:\t%pM\n", srq->match.mac);
	if (srq->match.flags & NVX_SRQ_MATCH_IP4)
		seq_printf(m, "match_ip4:\t%pI4\n", &srq->match.ip4);
	seq_printf(m, "rx_packets:\t%llu\n", st.rx_packets);
	seq_printf(m, "rx_bytes:\t%llu\n", st.rx_bytes);
	seq_printf(m, "drops:\t%llu\n", st.drops_no_buf + st.drops_cq_full);
	seq_printf(m, "bufs_posted:\t%u\n", st.bufs_posted);
	seq_printf(m, "bufs_held:\t%u\n", st.bufs_held);
	seq_printf(m, "refills_deferred:\t%lld\n",
		   atomic64_read(&srq->refills_deferred));
	seq_printf(m, "refill_bh_max_ns:\t%llu\n",
		   READ_ONCE(srq->refill_bh_max_ns));
	for (i = 0; i < srq->p.nr_queues; i++) {
		seq_printf(m, "queue%u_notify:\t%d\n", i,
			   !!rcu_access_pointer(srq->queues[i].notify));
		seq_printf(m, "queue%u_notify_eventfd:\t%d\n", i,
			   !!rcu_access_pointer(srq->queues[i].notify_ev));
		seq_printf(m, "queue%u_notified:\t%lld\n", i,
			   atomic64_read(&srq->queues[i].notified));
	}
	nvx_srq_tx_show_fdinfo(m, srq);
}

DEFINE_NVX_FOPS(nvx_srq_set, NVX_IOC_SRQ_SET_BASE, nvx_srq_set_ops,
		.release = nvx_srq_release,
		.mmap = nvx_srq_mmap,
		.show_fdinfo = nvx_srq_show_fdinfo);

/* Check @p and fill in its defaults. */
static int nvx_srq_check_params(struct nvx_srq_params *p)
{
	u32 pool_bufs;

	if (p->flags & ~NVX_SRQ_FLAGS || p->reserved)
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

	if (!srq->rings_in_grant)
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
	if ((!srq->rings_in_grant && !srq->ring_area) || !srq->bufs ||
	    !srq->pools || !srq->queues || !srq->rel || !srq->sw ||
	    !srq->refill_bufs)
		return -ENOMEM;

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

/* Point the queues and release rings into the ring area. */
static void nvx_srq_ring_ptrs(struct nvx_srq *srq)
{
	const struct nvx_srq_layout *l = &srq->layout;
	u32 i;

	for (i = 0; i < srq->p.nr_queues; i++) {
		struct nvx_srq_queue *q = &srq->queues[i];

		q->hdr = srq->ring_area + l->cq_offset + i * l->cq_bytes;
		q->cqes = (void *)q->hdr + NVX_SRQ_RING_HDR;
	}
	for (i = 0; i < srq->p.nr_rel_rings; i++) {
		struct nvx_srq_relring *r = &srq->rel[i];

		r->hdr = srq->ring_area + l->rel_offset + i * l->rel_bytes;
		r->ents = (void *)r->hdr + NVX_SRQ_RING_HDR;
	}
}

/*
 * NVX_SRQ_RINGS_IN_GRANT: check the ring area at @off of the grant
 * against the layout and the buffers, and use the grant's memory for it.
 * The area lies in one contiguous unit of the grant (a piece or a
 * block), which is in the direct map: no mapping is made for it.
 */
static int nvx_srq_rings_in_grant(struct nvx_srq *srq, u64 off)
{
	u64 bytes = srq->layout.ring_bytes, unit, gbytes;
	u64 buf_end = srq->grant_offset +
		      (u64)srq->p.nr_bufs * srq->p.buf_size;

	gbytes = nvx_grant_bytes(srq->grant);
	if (!PAGE_ALIGNED(off))
		return -EINVAL;
	if (off > gbytes || bytes > gbytes - off)
		return -ENOSPC;
	unit = nvx_grant_contig_bytes(srq->grant, off);
	if (off / unit != (off + bytes - 1) / unit)
		return -EINVAL;
	if (off < buf_end && srq->grant_offset < off + bytes)
		return -EINVAL;
	srq->ring_area = page_address(nvx_grant_page(srq->grant,
						     off >> PAGE_SHIFT));
	srq->ring_offset = off;
	/* whatever the instance left there reads as empty rings */
	memset(srq->ring_area, 0, bytes);
	return 0;
}

/* Attach @srq to the NIC @ifindex of the caller's namespace. */
static int nvx_srq_attach_ifindex(struct nvx_srq *srq, u32 ifindex)
{
	struct net_device *dev;
	int ret;

	rtnl_lock();
	dev = __dev_get_by_index(current->nsproxy->net_ns, ifindex);
	ret = dev ? nvx_srq_attach(srq, dev) : -ENODEV;
	rtnl_unlock();
	return ret;
}

/* The rule of struct nvx_srq_create: known flags, fields set iff used. */
static int nvx_srq_check_match(const struct nvx_srq_create *req)
{
	bool mac = req->match & NVX_SRQ_MATCH_MAC;
	bool ip4 = req->match & NVX_SRQ_MATCH_IP4;

	if (req->match & ~NVX_SRQ_MATCH_FLAGS || req->reserved)
		return -EINVAL;
	if (mac == is_zero_ether_addr(req->mac))
		return -EINVAL;
	if (ip4 == !req->ip4)
		return -EINVAL;
	return 0;
}

/* NVX_IOC_SRQ_CREATE: a new set and its fd (see struct nvx_srq_create) */
static int nvx_srq_ioc_create(struct nvx_ucmd *ucmd)
{
	struct nvx_srq_create *req = ucmd->arg;
	struct nvx_srq *srq;
	u32 p;
	int ret, fd;

	if (req->flags & ~NVX_SRQ_CREATE_FLAGS)
		return -EINVAL;
	if (!(req->flags & NVX_SRQ_RINGS_IN_GRANT) && req->ring_offset)
		return -EINVAL;
	ret = nvx_srq_check_match(req);
	if (ret)
		return ret;
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
	mutex_init(&srq->refill_mutex);
	mutex_init(&srq->tx_lock);
	INIT_WORK(&srq->refill_work, nvx_srq_refill_workfn);
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
	srq->owner_uid = current_euid();
	srq->rings_in_grant = req->flags & NVX_SRQ_RINGS_IN_GRANT;
	srq->match.flags = req->match;
	srq->match.ip4 = req->ip4;
	ether_addr_copy(srq->match.mac, req->mac);

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
	/* a buffer is contiguous: one larger than a block lies in pieces */
	if (nvx_grant_contig_bytes(srq->grant, req->grant_offset +
				   (u64)(srq->p.nr_bufs - 1) * srq->p.buf_size) <
	    srq->p.buf_size) {
		ret = -EINVAL;
		goto err;
	}
	ret = nvx_srq_alloc(srq);
	if (!ret && srq->rings_in_grant)
		ret = nvx_srq_rings_in_grant(srq, req->ring_offset);
	if (ret)
		goto err;
	nvx_srq_ring_ptrs(srq);
	ret = nvx_srq_attach_ifindex(srq, req->ifindex);
	if (ret)
		goto err;
	/* the refill work may run from the first frame on */
	mutex_lock(&srq->refill_mutex);
	for (p = 0; p < srq->shape.nr_pools; p++) {
		u32 i, n = srq->shape.bufs_per_pool;

		for (i = 0; i < n; i++)
			srq->refill_bufs[i] = srq->pools[p].first + i;
		nvx_srq_post(srq, p, srq->refill_bufs, n);
	}
	mutex_unlock(&srq->refill_mutex);

	fd = nvx_anon_fd(ucmd, "[nvx-srq]", &nvx_srq_set_fops, srq,
			 req->flags & NVX_SRQ_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0) {
		ret = fd;
		goto err;
	}
	req->params = srq->p;
	req->layout = srq->layout;
	req->fd = fd;
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

/*
 * May the caller see who owns @srq and its counters: the creator's user,
 * or CAP_NET_ADMIN over the caller's (the NIC's) network namespace, the
 * capability CREATE needs. The shape and presence of a set are the NIC's
 * and public to any opener of /dev/nvx (INFO), as ethtool -S counters are
 * to anyone in the namespace.
 */
static bool nvx_srq_may_observe(const struct nvx_srq *srq, bool audit)
{
	struct user_namespace *ns = current->nsproxy->net_ns->user_ns;

	if (uid_eq(current_euid(), srq->owner_uid))
		return true;
	return audit ? ns_capable(ns, CAP_NET_ADMIN) :
		       ns_capable_noaudit(ns, CAP_NET_ADMIN);
}

/* NVX_IOC_SRQ_QUERY: the counters of the set on a NIC */
static int nvx_srq_ioc_query(struct nvx_ucmd *ucmd)
{
	struct nvx_srq_query *q = ucmd->arg;
	struct nvx_srq *srq;
	int ret;

	if (q->flags)
		return -EINVAL;
	rtnl_lock();
	srq = nvx_srq_lookup(q->ifindex);
	if (IS_ERR(srq))
		ret = PTR_ERR(srq);
	else if (!nvx_srq_may_observe(srq, true))
		ret = -EPERM;
	else
		ret = nvx_srq_fill_stats(srq, &q->stats);
	rtnl_unlock();
	return ret;
}

/* NVX_IOC_SRQ_INFO: the shape and owner of the set on a NIC */
static int nvx_srq_ioc_info(struct nvx_ucmd *ucmd)
{
	struct nvx_srq_info *info = ucmd->arg;
	struct nvx_srq *srq;
	int ret = 0;

	if (info->flags || info->reserved)
		return -EINVAL;
	rtnl_lock();
	srq = nvx_srq_lookup(info->ifindex);
	if (IS_ERR(srq)) {
		ret = PTR_ERR(srq);
	} else {
		info->params = srq->p;
		/* the shape is the NIC's; who owns it, the observers' */
		info->owner = nvx_srq_may_observe(srq, false) ?
			      pid_vnr(srq->owner) : 0;
	}
	rtnl_unlock();
	return ret;
}

static const struct nvx_ioctl_op nvx_srq_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_SRQ_BASE, NVX_IOC_SRQ_CREATE, nvx_srq_ioc_create,
		     struct nvx_srq_create, layout, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_BASE, NVX_IOC_SRQ_QUERY, nvx_srq_ioc_query,
		     struct nvx_srq_query, stats, 0),
	NVX_IOCTL_OP(NVX_IOC_SRQ_BASE, NVX_IOC_SRQ_INFO, nvx_srq_ioc_info,
		     struct nvx_srq_info, reserved, 0),
};

static struct nvx_ioctl_range nvx_srq_range =
	NVX_IOCTL_RANGE(NVX_IOC_SRQ_BASE, nvx_srq_ops, NVX_FEAT_SRQ);

/**
 * nvx_srq_file_init() - offer NVX_IOC_SRQ_* on /dev/nvx
 *
 * Return: 0 or a negative errno.
 */
int nvx_srq_file_init(void)
{
	return nvx_register_ioctls(&nvx_srq_range);
}

/**
 * nvx_srq_file_exit() - withdraw them
 */
void nvx_srq_file_exit(void)
{
	nvx_unregister_ioctls(&nvx_srq_range);
}
