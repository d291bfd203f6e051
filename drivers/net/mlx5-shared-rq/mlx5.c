// SPDX-License-Identifier: GPL-2.0
/*
 * nvx_mlx5: the mlx5 backend of the shared RX queues.
 *
 * An auxiliary driver for mlx5_core's Ethernet device ("mlx5_core.eth"),
 * bound to a port or sub-function that mlx5e is not bound to (the
 * operator unbinds mlx5e and binds this driver; Documentation/nvx/srq.rst).
 * A bound port gets a netdev (nvxmlx%d) that names it to
 * NVX_IOC_SRQ_CREATE; a set attached to it becomes, in firmware objects:
 *
 *   pool  -> an RMP (shared receive memory pool) whose cyclic striding
 *            ring holds the pool's buffers, one WQE per buffer
 *   queue -> a CQ and a striding RQ with mem_rq_type MEMORY_RQ_RMP on its
 *            pool's RMP; completions go through NAPI to nvx_srq_complete()
 *   set   -> an RQ table (the set's RSS table), a TIR (Toeplitz over the
 *            IPv4 addresses) and one flow rule -> the TIR: the set's
 *            destination (MAC, IPv4 or both) in the port's rules table
 *            (kernel namespace, priority 0), or, for the set without a
 *            rule, every frame to the port's MAC in the catch-all table
 *            (priority 1, which the first table's misses reach)
 *
 * The buffers stay the grant's pages, DMA-mapped for the device, reached
 * through one physical-address mkey. Everything that builds a command or
 * reads a CQE is in mlx5_cmd.c and checked by KUnit (mlx5_test.c); this
 * file, the part that talks to a device, has never run against one: there
 * is no ConnectX NIC where it was written (see srq.rst, "mlx5").
 */
#include <linux/auxiliary_bus.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/mlx5/cq.h>
#include <linux/mlx5/driver.h>
#include <linux/mlx5/fs.h>
#include <linux/mlx5/mpfs.h>
#include <linux/mlx5/transobj.h>
#include <linux/mlx5/vport.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "mlx5_cmd.h"
#include "srq.h"

struct nvx_mlx5_set;

/* A pool's RMP and the software side of its list. */
struct nvx_mlx5_rmp {
	struct mlx5_frag_buf buf;
	struct mlx5_frag_buf_ctrl fbc;
	struct mlx5_db db;
	struct nvx_mlx5_wq wq;
	spinlock_t lock;	/* @wq, the WQEs' links, the doorbell record */
	u32 rmpn;
	bool created;
};

/* A queue's CQ and RQ. */
struct nvx_mlx5_rq {
	struct nvx_mlx5_set *set;
	u32 idx;
	struct mlx5_core_cq mcq;
	struct mlx5_frag_buf cqbuf;
	struct mlx5_frag_buf_ctrl fbc;
	struct mlx5_db cqdb;
	struct napi_struct napi;
	u32 rqn;
	bool cq_created;
	bool rq_created;
};

/* The device side of one attached set. */
struct nvx_mlx5_set {
	struct nvx_srq *srq;
	struct nvx_mlx5_dev *md;
	struct nvx_mlx5_geom g;
	const struct nvx_srq_shape *shape;
	struct nvx_mlx5_rmp *rmps;
	struct nvx_mlx5_rq *rqs;
	u32 *rqns;
	dma_addr_t *dma;
	u32 nr_bufs;
	u32 rqtn;
	u32 tirn;
	bool rqt_created;
	bool tir_created;
	bool mpfs_added;
	struct nvx_mlx5_rule rule;
	struct mlx5_flow_handle *fte;
	struct list_head node;		/* in nvx_mlx5_dev.sets, RTNL */
};

/* One bound mlx5_core.eth device. */
struct nvx_mlx5_dev {
	struct mlx5_core_dev *mdev;
	struct net_device *netdev;
	struct nvx_mlx5_caps caps;
	struct mlx5_uars_page *uar;
	u32 pdn;
	u32 tdn;
	u32 mkey;
	bool has_pd;
	bool has_td;
	bool has_mkey;
	bool mpfs_added;
	/* RTNL: */
	struct list_head sets;		/* attached, oldest first */
	struct mlx5_flow_table *ft_rules;
	struct mlx5_flow_table *ft_all;
	u32 nr_rules;			/* entries in @ft_rules */
};

static const struct net_device_ops nvx_mlx5_netdev_ops;

static struct nvx_mlx5_dev *nvx_mlx5_of(struct net_device *dev)
{
	return *(struct nvx_mlx5_dev **)netdev_priv(dev);
}

static struct device *nvx_mlx5_dma(struct nvx_mlx5_dev *md)
{
	return &md->mdev->pdev->dev;
}

static u8 nvx_mlx5_log_pg(const struct mlx5_frag_buf *b)
{
	return b->page_shift - MLX5_ADAPTER_PAGE_SHIFT;
}

/* ------------------------------------------------------------- receive --- */

/*
 * Strides the device consumed: counted in their WQE (which goes back on
 * the RMP's list once all are), then reported to the core; @err: an error
 * CQE, whose strides are dropped. BH off (NAPI).
 */
static void nvx_mlx5_rx_one(struct nvx_mlx5_rq *rq,
			    const struct nvx_mlx5_rx *rx, bool err)
{
	struct nvx_mlx5_set *set = rq->set;
	u32 pool = set->g.nr_rmps > 1 ? rq->idx : 0;
	struct nvx_mlx5_rmp *rmp = &set->rmps[pool];
	u32 buf;
	u16 link;
	int ret;

	spin_lock(&rmp->lock);
	ret = nvx_mlx5_wq_consume(&rmp->wq, rx->slot, rx->strides, &buf,
				  &link);
	if (ret == 1)
		nvx_mlx5_wqe_link(mlx5_frag_buf_get_wqe(&rmp->fbc, link),
				  rx->slot);
	spin_unlock(&rmp->lock);
	if (ret < 0 || buf >= set->nr_bufs) {
		/* a CQE naming a WQE not posted: ip -s link's rx dropped */
		dev_core_stats_rx_dropped_inc(set->md->netdev);
		return;
	}
	dma_sync_single_range_for_cpu(nvx_mlx5_dma(set->md), set->dma[buf],
				      rx->stride * set->g.stride_sz,
				      rx->strides * set->g.stride_sz,
				      DMA_FROM_DEVICE);
	if (err || !nvx_srq_cq_room(set->srq, rq->idx, 1))
		/* an error CQE's strides count as a filler's */
		nvx_srq_discard(set->srq, rq->idx, buf, rx->strides, rx->len,
				err ? NVX_SRQ_CQE_FILLER : rx->flags);
	else
		nvx_srq_complete(set->srq, rq->idx, buf, rx->stride,
				 rx->strides, rx->len, rx->flags);
}

static int nvx_mlx5_poll(struct napi_struct *napi, int budget)
{
	struct nvx_mlx5_rq *rq = container_of(napi, struct nvx_mlx5_rq, napi);
	struct nvx_mlx5_set *set = rq->set;
	struct mlx5_core_cq *mcq = &rq->mcq;
	struct nvx_mlx5_rx rx;
	int done = 0, err;

	while (done < budget) {
		struct mlx5_cqe64 *cqe;

		cqe = mlx5_frag_buf_get_wqe(&rq->fbc, mcq->cons_index &
					    rq->fbc.sz_m1);
		err = nvx_mlx5_cqe_parse(cqe, mcq->cons_index, set->g.log_cq_sz,
					 &set->g, &rx);
		if (err == -EAGAIN)
			break;
		mcq->cons_index++;
		done++;
		if (err) {
			/*
			 * An error CQE (the RQ went to error: not recovered,
			 * the queue receives nothing more) or not a receive.
			 */
			dev_core_stats_rx_dropped_inc(set->md->netdev);
			netdev_warn_once(set->md->netdev,
					 "queue %u: bad CQE (%d)\n", rq->idx, err);
			if (err == -EIO && rx.strides)
				nvx_mlx5_rx_one(rq, &rx, true);
			continue;
		}
		nvx_mlx5_rx_one(rq, &rx, false);
	}
	if (done) {
		mlx5_cq_set_ci(mcq);
		nvx_srq_rx_done(set->srq, rq->idx);
	}
	if (done < budget && napi_complete_done(napi, done))
		mlx5_cq_arm(mcq, MLX5_CQ_DB_REQ_NOT, set->md->uar->map,
			    mcq->cons_index);
	return done;
}

static void nvx_mlx5_cq_comp(struct mlx5_core_cq *mcq, struct mlx5_eqe *eqe)
{
	struct nvx_mlx5_rq *rq = container_of(mcq, struct nvx_mlx5_rq, mcq);

	napi_schedule(&rq->napi);
}

static void nvx_mlx5_cq_event(struct mlx5_core_cq *mcq, enum mlx5_event ev)
{
	struct nvx_mlx5_rq *rq = container_of(mcq, struct nvx_mlx5_rq, mcq);

	netdev_err_once(rq->set->md->netdev, "queue %u: CQ event %d\n",
			rq->idx, ev);
}

/* ----------------------------------------------------- backend: post --- */

static void nvx_mlx5_post(struct nvx_srq *srq, u32 pool, const u32 *bufs,
			  unsigned int n)
{
	struct nvx_mlx5_set *set = nvx_srq_backend_data(srq);
	struct nvx_mlx5_rmp *rmp = &set->rmps[pool];
	struct device *dma = nvx_mlx5_dma(set->md);
	unsigned int i;
	u32 slot;

	spin_lock_bh(&rmp->lock);
	/*
	 * The list has a WQE for every buffer of the pool and one more, and
	 * the core posts a buffer only when the device gave it back: room
	 * never runs out.
	 */
	for (i = 0; i < n && nvx_mlx5_wq_room(&rmp->wq); i++) {
		/* the device may write it again: the CPU's view goes back */
		dma_sync_single_for_device(dma, set->dma[bufs[i]],
					   set->shape->buf_size,
					   DMA_FROM_DEVICE);
		slot = nvx_mlx5_wq_post(&rmp->wq, bufs[i]);
		nvx_mlx5_wqe_fill(mlx5_frag_buf_get_wqe(&rmp->fbc, slot),
				  set->dma[bufs[i]], set->md->mkey,
				  set->shape->buf_size);
	}
	/* WQEs and links before the doorbell record */
	dma_wmb();
	*rmp->db.db = cpu_to_be32(rmp->wq.ctr);
	spin_unlock_bh(&rmp->lock);
	WARN_ON_ONCE(i < n);
}

/* ------------------------------------------------- backend: steering --- */

static void nvx_mlx5_steer(struct nvx_srq *srq, const u16 *table)
{
	struct nvx_mlx5_set *set = nvx_srq_backend_data(srq);
	u32 out[MLX5_ST_SZ_DW(modify_rqt_out)] = {};
	u32 *in;
	int err;

	in = kvzalloc(NVX_MLX5_RQT_MODIFY_INLEN, GFP_KERNEL);
	if (!in)
		return;
	err = nvx_mlx5_build_rqt_modify(in, set->rqtn, set->rqns,
					set->g.nr_rqs, table);
	if (!err)
		err = mlx5_cmd_exec(set->md->mdev, in,
				    NVX_MLX5_RQT_MODIFY_INLEN, out,
				    sizeof(out));
	if (err)
		netdev_warn(set->md->netdev, "RSS table not changed: %d\n",
			    err);
	kvfree(in);
}

/* ---------------------------------------------- backend: attach/detach --- */

static void nvx_mlx5_unmap(struct nvx_mlx5_set *set, u32 n)
{
	struct device *dma = nvx_mlx5_dma(set->md);

	while (n--)
		dma_unmap_single(dma, set->dma[n], set->shape->buf_size,
				 DMA_FROM_DEVICE);
}

static int nvx_mlx5_map(struct nvx_mlx5_set *set)
{
	struct device *dma = nvx_mlx5_dma(set->md);
	u32 i;

	for (i = 0; i < set->nr_bufs; i++) {
		/* a buffer never crosses a grant chunk: contiguous */
		set->dma[i] = dma_map_single(dma,
					     nvx_srq_buf_addr(set->srq, i),
					     set->shape->buf_size,
					     DMA_FROM_DEVICE);
		if (dma_mapping_error(dma, set->dma[i])) {
			nvx_mlx5_unmap(set, i);
			return -ENOMEM;
		}
	}
	return 0;
}

static void nvx_mlx5_rmp_destroy(struct nvx_mlx5_set *set,
				 struct nvx_mlx5_rmp *rmp)
{
	struct mlx5_core_dev *mdev = set->md->mdev;
	u32 in[MLX5_ST_SZ_DW(destroy_rmp_in)] = {};

	if (rmp->created) {
		MLX5_SET(destroy_rmp_in, in, opcode, MLX5_CMD_OP_DESTROY_RMP);
		MLX5_SET(destroy_rmp_in, in, rmpn, rmp->rmpn);
		mlx5_cmd_exec_in(mdev, destroy_rmp, in);
	}
	if (rmp->db.db)
		mlx5_db_free(mdev, &rmp->db);
	if (rmp->buf.frags)
		mlx5_frag_buf_free(mdev, &rmp->buf);
	kvfree(rmp->wq.next);
	kvfree(rmp->wq.posted);
	kvfree(rmp->wq.buf);
	kvfree(rmp->wq.used);
}

static int nvx_mlx5_rmp_create(struct nvx_mlx5_set *set,
			       struct nvx_mlx5_rmp *rmp)
{
	struct mlx5_core_dev *mdev = set->md->mdev;
	u32 out[MLX5_ST_SZ_DW(create_rmp_out)] = {};
	int node = dev_to_node(mdev->device);
	u32 slots = BIT(set->g.log_wq_sz), i;
	int inlen, err;
	u32 *in;

	spin_lock_init(&rmp->lock);
	rmp->wq.log_sz = set->g.log_wq_sz;
	rmp->wq.strides = set->g.strides;
	rmp->wq.next = kvcalloc(slots, sizeof(u16), GFP_KERNEL);
	rmp->wq.posted = kvcalloc(slots, sizeof(u8), GFP_KERNEL);
	rmp->wq.buf = kvcalloc(slots, sizeof(u32), GFP_KERNEL);
	rmp->wq.used = kvcalloc(slots, sizeof(u32), GFP_KERNEL);
	if (!rmp->wq.next || !rmp->wq.posted || !rmp->wq.buf || !rmp->wq.used)
		return -ENOMEM;
	nvx_mlx5_wq_init(&rmp->wq);
	err = mlx5_db_alloc_node(mdev, &rmp->db, node);
	if (err)
		return err;
	*rmp->db.db = 0;
	err = mlx5_frag_buf_alloc_node(mdev, slots << NVX_MLX5_LOG_WQE_SZ,
				       &rmp->buf, node);
	if (err) {
		/* it freed its frags on failure, and left the pointer */
		rmp->buf.frags = NULL;
		return err;
	}
	mlx5_init_fbc(rmp->buf.frags, NVX_MLX5_LOG_WQE_SZ, set->g.log_wq_sz,
		      &rmp->fbc);
	for (i = 0; i < slots; i++)
		nvx_mlx5_wqe_link(mlx5_frag_buf_get_wqe(&rmp->fbc, i),
				  rmp->wq.next[i]);

	inlen = NVX_MLX5_RMP_INLEN(rmp->buf.npages);
	in = kvzalloc(inlen, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	nvx_mlx5_build_rmp(in, &set->g, set->md->pdn, rmp->db.dma,
			   nvx_mlx5_log_pg(&rmp->buf));
	mlx5_fill_page_frag_array(&rmp->buf,
				  (__be64 *)MLX5_ADDR_OF(create_rmp_in, in,
							 ctx.wq.pas));
	err = mlx5_cmd_exec(mdev, in, inlen, out, sizeof(out));
	kvfree(in);
	if (err)
		return err;
	rmp->rmpn = MLX5_GET(create_rmp_out, out, rmpn);
	rmp->created = true;
	return 0;
}

static void nvx_mlx5_rq_destroy(struct nvx_mlx5_set *set,
				struct nvx_mlx5_rq *rq)
{
	struct mlx5_core_dev *mdev = set->md->mdev;

	if (rq->rq_created)
		mlx5_core_destroy_rq(mdev, rq->rqn);
	if (rq->cq_created) {
		napi_disable(&rq->napi);
		mlx5_core_destroy_cq(mdev, &rq->mcq);
	}
	if (rq->napi.poll)
		netif_napi_del(&rq->napi);
	if (rq->cqdb.db)
		mlx5_db_free(mdev, &rq->cqdb);
	if (rq->cqbuf.frags)
		mlx5_frag_buf_free(mdev, &rq->cqbuf);
}

static int nvx_mlx5_rq_create(struct nvx_mlx5_set *set,
			      struct nvx_mlx5_rq *rq)
{
	struct nvx_mlx5_dev *md = set->md;
	struct mlx5_core_dev *mdev = md->mdev;
	u32 out[MLX5_ST_SZ_DW(create_cq_out)] = {};
	int node = dev_to_node(mdev->device);
	u32 pool = set->g.nr_rmps > 1 ? rq->idx : 0;
	u32 entries = BIT(set->g.log_cq_sz), i;
	int inlen, eqn, err;
	u32 *in;

	err = mlx5_db_alloc_node(mdev, &rq->cqdb, node);
	if (err)
		return err;
	err = mlx5_frag_buf_alloc_node(mdev, entries * sizeof(struct mlx5_cqe64),
				       &rq->cqbuf, node);
	if (err) {
		rq->cqbuf.frags = NULL;
		return err;
	}
	mlx5_init_fbc(rq->cqbuf.frags, ilog2(sizeof(struct mlx5_cqe64)),
		      set->g.log_cq_sz, &rq->fbc);
	/* every CQE the device's: invalid opcode, owner 1 */
	for (i = 0; i < entries; i++) {
		struct mlx5_cqe64 *cqe = mlx5_frag_buf_get_wqe(&rq->fbc, i);

		cqe->op_own = 0xf1;
	}
	err = mlx5_comp_eqn_get(mdev, rq->idx % mlx5_comp_vectors_max(mdev),
				&eqn);
	if (err)
		return err;

	inlen = NVX_MLX5_CQ_INLEN(rq->cqbuf.npages);
	in = kvzalloc(max_t(int, inlen, MLX5_ST_SZ_BYTES(create_rq_in)),
		      GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	nvx_mlx5_build_cq(in, &set->g, eqn, md->uar->index, rq->cqdb.dma,
			  nvx_mlx5_log_pg(&rq->cqbuf));
	mlx5_fill_page_frag_array(&rq->cqbuf,
				  (__be64 *)MLX5_ADDR_OF(create_cq_in, in, pas));
	rq->mcq.cqe_sz = 64;
	rq->mcq.set_ci_db = rq->cqdb.db;
	rq->mcq.arm_db = rq->cqdb.db + 1;
	rq->mcq.comp = nvx_mlx5_cq_comp;
	rq->mcq.event = nvx_mlx5_cq_event;
	*rq->mcq.set_ci_db = 0;
	*rq->mcq.arm_db = 0;
	netif_napi_add(md->netdev, &rq->napi, nvx_mlx5_poll);
	err = mlx5_core_create_cq(mdev, &rq->mcq, in, inlen, out, sizeof(out));
	if (err)
		goto out;
	rq->cq_created = true;
	napi_enable(&rq->napi);

	memset(in, 0, MLX5_ST_SZ_BYTES(create_rq_in));
	nvx_mlx5_build_rq(in, &set->g, rq->mcq.cqn, set->rmps[pool].rmpn,
			  rq->idx);
	err = mlx5_core_create_rq(mdev, in, MLX5_ST_SZ_BYTES(create_rq_in),
				  &rq->rqn);
	if (err)
		goto out;
	rq->rq_created = true;
	memset(in, 0, MLX5_ST_SZ_BYTES(modify_rq_in));
	nvx_mlx5_build_rq_ready(in, rq->rqn);
	err = mlx5_core_modify_rq(mdev, rq->rqn, in);
	if (err)
		goto out;
	set->rqns[rq->idx] = rq->rqn;
	mlx5_cq_arm(&rq->mcq, MLX5_CQ_DB_REQ_NOT, md->uar->map, 0);
out:
	kvfree(in);
	return err;
}

/*
 * The port's unicast addresses, for the device's filters: its own MAC and
 * every MAC a set's rule names, in the NIC vport context's list (what
 * mlx5e keeps there for its addresses). RTNL.
 */
static int nvx_mlx5_sync_uc(struct nvx_mlx5_dev *md)
{
	u8 (*list)[ETH_ALEN];
	struct nvx_mlx5_set *set;
	int n = 0, i, err;

	list = kcalloc(1 + md->nr_rules, ETH_ALEN, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	ether_addr_copy(list[n++], md->netdev->dev_addr);
	list_for_each_entry(set, &md->sets, node) {
		for (i = 0; i < n; i++)
			if (ether_addr_equal(list[i], set->rule.dmac))
				break;
		if (i == n && n < 1 + md->nr_rules)
			ether_addr_copy(list[n++], set->rule.dmac);
	}
	err = mlx5_modify_nic_vport_mac_list(md->mdev, MLX5_NVPRT_LIST_TYPE_UC,
					     list, n);
	kfree(list);
	return err;
}

/* The table for @set's rule, made with the first rule it holds. RTNL. */
static struct mlx5_flow_table *nvx_mlx5_table(struct nvx_mlx5_set *set)
{
	struct nvx_mlx5_dev *md = set->md;
	struct mlx5_flow_table **ft = set->rule.catch_all ? &md->ft_all :
							     &md->ft_rules;
	struct mlx5_flow_table_attr ft_attr = {};
	struct mlx5_flow_namespace *ns;
	struct mlx5_flow_table *t;

	if (*ft)
		return *ft;
	ns = mlx5_get_flow_namespace(md->mdev, MLX5_FLOW_NAMESPACE_KERNEL);
	if (!ns)
		return ERR_PTR(-EOPNOTSUPP);
	/* the rules first; their misses go on to the next priority's table */
	ft_attr.prio = set->rule.catch_all ? 1 : 0;
	ft_attr.max_fte = set->rule.catch_all ? 1 : NVX_MLX5_MAX_RULES;
	/* MAC only; MAC, ethertype and IPv4 destination */
	ft_attr.autogroup.max_num_groups = set->rule.catch_all ? 1 : 2;
	t = mlx5_create_auto_grouped_flow_table(ns, &ft_attr);
	if (!IS_ERR(t))
		*ft = t;
	return t;
}

static int nvx_mlx5_steering_create(struct nvx_mlx5_set *set)
{
	struct nvx_mlx5_dev *md = set->md;
	struct mlx5_flow_destination dest = {};
	struct mlx5_flow_act act = {};
	struct mlx5_flow_handle *fte;
	struct mlx5_flow_spec *spec;
	struct mlx5_flow_table *ft;
	u16 table[NVX_SRQ_RSS_ENTRIES];
	u8 key[40];
	u32 *in, i;
	int err;

	in = kvzalloc(max_t(size_t, NVX_MLX5_RQT_INLEN,
			    MLX5_ST_SZ_BYTES(create_tir_in)), GFP_KERNEL);
	spec = kvzalloc(sizeof(*spec), GFP_KERNEL);
	if (!in || !spec) {
		err = -ENOMEM;
		goto out;
	}
	/* the core programs the set's table right after attach */
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = i % set->g.nr_rqs;
	nvx_mlx5_build_rqt(in, set->rqns, set->g.nr_rqs, table);
	err = mlx5_core_create_rqt(md->mdev, in, NVX_MLX5_RQT_INLEN,
				   &set->rqtn);
	if (err)
		goto out;
	set->rqt_created = true;

	memset(in, 0, MLX5_ST_SZ_BYTES(create_tir_in));
	netdev_rss_key_fill(key, sizeof(key));
	nvx_mlx5_build_tir(in, set->rqtn, md->tdn, key);
	err = mlx5_core_create_tir(md->mdev, in, &set->tirn);
	if (err)
		goto out;
	set->tir_created = true;

	/* a MAC of the set's own: let the port's filters pass it */
	if (!ether_addr_equal(set->rule.dmac, md->netdev->dev_addr)) {
		err = mlx5_mpfs_add_mac(md->mdev, set->rule.dmac);
		if (err)
			goto out;
		set->mpfs_added = true;
	}
	ft = nvx_mlx5_table(set);
	if (IS_ERR(ft)) {
		err = PTR_ERR(ft);
		goto out;
	}
	nvx_mlx5_build_match(spec, set->rule.dmac, set->rule.dst_ip);
	act.action = MLX5_FLOW_CONTEXT_ACTION_FWD_DEST;
	dest.type = MLX5_FLOW_DESTINATION_TYPE_TIR;
	dest.tir_num = set->tirn;
	fte = mlx5_add_flow_rules(ft, spec, &act, &dest, 1);
	if (IS_ERR(fte)) {
		err = PTR_ERR(fte);
		goto out;
	}
	set->fte = fte;
	if (!set->rule.catch_all)
		md->nr_rules++;
out:
	kvfree(spec);
	kvfree(in);
	return err;
}

/* A table that holds no rule any more goes. RTNL. */
static void nvx_mlx5_tables_trim(struct nvx_mlx5_dev *md)
{
	struct nvx_mlx5_set *set;
	bool all = false;

	list_for_each_entry(set, &md->sets, node)
		all |= set->rule.catch_all && set->fte;
	if (md->ft_all && !all) {
		mlx5_destroy_flow_table(md->ft_all);
		md->ft_all = NULL;
	}
	if (md->ft_rules && !md->nr_rules) {
		mlx5_destroy_flow_table(md->ft_rules);
		md->ft_rules = NULL;
	}
}

/*
 * Everything a set made, in the reverse order; any part may be missing.
 * Not in the port's list of sets. RTNL.
 */
static void nvx_mlx5_set_free(struct nvx_mlx5_set *set)
{
	struct nvx_mlx5_dev *md = set->md;
	struct mlx5_core_dev *mdev = md->mdev;
	u32 i;

	if (set->fte) {
		mlx5_del_flow_rules(set->fte);
		if (!set->rule.catch_all)
			md->nr_rules--;
		set->fte = NULL;
	}
	nvx_mlx5_tables_trim(md);
	if (set->mpfs_added)
		mlx5_mpfs_del_mac(mdev, set->rule.dmac);
	if (set->tir_created)
		mlx5_core_destroy_tir(mdev, set->tirn);
	if (set->rqt_created)
		mlx5_core_destroy_rqt(mdev, set->rqtn);
	if (set->rqs)
		for (i = 0; i < set->g.nr_rqs; i++)
			nvx_mlx5_rq_destroy(set, &set->rqs[i]);
	if (set->rmps)
		for (i = 0; i < set->g.nr_rmps; i++)
			nvx_mlx5_rmp_destroy(set, &set->rmps[i]);
	if (set->dma)
		nvx_mlx5_unmap(set, set->nr_bufs);
	kvfree(set->dma);
	kfree(set->rqns);
	kfree(set->rqs);
	kfree(set->rmps);
	kfree(set);
}

static int nvx_mlx5_attach(struct nvx_srq *srq, struct net_device *dev)
{
	struct nvx_mlx5_dev *md = nvx_mlx5_of(dev);
	struct nvx_mlx5_set *set, *other;
	struct nvx_mlx5_rule rule;
	u32 i;
	int err;

	ASSERT_RTNL();
	/* no frame for two sets: the device orders tables, not rules */
	nvx_mlx5_rule_of(nvx_srq_match(srq), dev->dev_addr, &rule);
	/* MPFS and the unicast list take unicast MACs only */
	if (is_multicast_ether_addr(rule.dmac))
		return -EOPNOTSUPP;
	list_for_each_entry(other, &md->sets, node)
		if (nvx_mlx5_rules_overlap(&other->rule, &rule))
			return -EBUSY;
	if (!rule.catch_all && md->nr_rules >= NVX_MLX5_MAX_RULES)
		return -ENOSPC;
	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	set->srq = srq;
	set->md = md;
	set->rule = rule;
	INIT_LIST_HEAD(&set->node);
	set->shape = nvx_srq_shape(srq);
	err = nvx_mlx5_geom_init(set->shape, &md->caps, &set->g);
	if (err) {
		kfree(set);
		return err;
	}
	set->nr_bufs = set->shape->nr_pools * set->shape->bufs_per_pool;
	set->rmps = kcalloc(set->g.nr_rmps, sizeof(*set->rmps), GFP_KERNEL);
	set->rqs = kcalloc(set->g.nr_rqs, sizeof(*set->rqs), GFP_KERNEL);
	set->rqns = kcalloc(set->g.nr_rqs, sizeof(u32), GFP_KERNEL);
	set->dma = kvcalloc(set->nr_bufs, sizeof(dma_addr_t), GFP_KERNEL);
	if (!set->rmps || !set->rqs || !set->rqns || !set->dma) {
		kvfree(set->dma);
		set->dma = NULL;
		err = -ENOMEM;
		goto fail;
	}
	err = nvx_mlx5_map(set);
	if (err) {
		kvfree(set->dma);
		set->dma = NULL;
		goto fail;
	}
	for (i = 0; i < set->g.nr_rmps; i++) {
		err = nvx_mlx5_rmp_create(set, &set->rmps[i]);
		if (err)
			goto fail;
	}
	for (i = 0; i < set->g.nr_rqs; i++) {
		set->rqs[i].set = set;
		set->rqs[i].idx = i;
		err = nvx_mlx5_rq_create(set, &set->rqs[i]);
		if (err)
			goto fail;
	}
	err = nvx_mlx5_steering_create(set);
	if (err)
		goto fail;
	list_add_tail(&set->node, &md->sets);
	if (set->mpfs_added) {
		err = nvx_mlx5_sync_uc(md);
		if (err) {
			list_del(&set->node);
			nvx_mlx5_sync_uc(md);
			goto fail;
		}
	}
	nvx_srq_set_backend_data(srq, set);
	return 0;
fail:
	netdev_err(dev, "shared RX set not attached: %d\n", err);
	nvx_mlx5_set_free(set);
	return err;
}

static void nvx_mlx5_detach(struct nvx_srq *srq, struct net_device *dev)
{
	struct nvx_mlx5_dev *md = nvx_mlx5_of(dev);
	struct nvx_mlx5_set *set = nvx_srq_backend_data(srq);

	ASSERT_RTNL();
	if (!set)
		return;
	list_del(&set->node);
	nvx_srq_set_backend_data(srq, NULL);
	/* post() callers under rcu_read_lock() saw the set attached */
	synchronize_net();
	if (set->mpfs_added && nvx_mlx5_sync_uc(md))
		netdev_warn(dev, "unicast list not updated\n");
	nvx_mlx5_set_free(set);
}

static bool nvx_mlx5_match(struct net_device *dev)
{
	return dev->netdev_ops == &nvx_mlx5_netdev_ops;
}

static struct nvx_srq *nvx_mlx5_lookup(struct net_device *dev)
{
	struct nvx_mlx5_dev *md = nvx_mlx5_of(dev);
	struct nvx_mlx5_set *set;

	list_for_each_entry(set, &md->sets, node)
		if (set->rule.catch_all)
			return set->srq;
	set = list_first_entry_or_null(&md->sets, struct nvx_mlx5_set, node);
	return set ? set->srq : NULL;
}

/*
 * No send queue: mlx5_core_create_sq() is not exported, and a set's TX
 * is a test convenience of nvxsim. Refused, the frame freed.
 */
static int nvx_mlx5_xmit(struct nvx_srq *srq, struct net_device *dev,
			 struct sk_buff *skb)
{
	kfree_skb(skb);
	return -EOPNOTSUPP;
}

static struct nvx_srq_backend nvx_mlx5_backend = {
	.name = "mlx5",
	.owner = THIS_MODULE,
	.match = nvx_mlx5_match,
	.attach = nvx_mlx5_attach,
	.detach = nvx_mlx5_detach,
	.post = nvx_mlx5_post,
	.steer = nvx_mlx5_steer,
	.xmit = nvx_mlx5_xmit,
	.lookup = nvx_mlx5_lookup,
};

/* ------------------------------------------------------------- netdev --- */

static netdev_tx_t nvx_mlx5_start_xmit(struct sk_buff *skb,
				       struct net_device *dev)
{
	dev_core_stats_tx_dropped_inc(dev);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* The port's admin state (PAOS): unbinding mlx5e took it down. */
static int nvx_mlx5_port_admin(struct net_device *dev, bool up)
{
	struct nvx_mlx5_dev *md = nvx_mlx5_of(dev);
	u32 in[MLX5_ST_SZ_DW(paos_reg)] = {};
	u32 out[MLX5_ST_SZ_DW(paos_reg)];

	nvx_mlx5_build_paos(in, up);
	return mlx5_core_access_reg(md->mdev, in, sizeof(in), out,
				    sizeof(out), MLX5_REG_PAOS, 0, 1);
}

/*
 * Up: the port (a sub-function may not own the PAOS register: warned, as
 * mlx5e ignores the result) and the port's MAC in the device's filters.
 */
static int nvx_mlx5_open(struct net_device *dev)
{
	struct nvx_mlx5_dev *md = nvx_mlx5_of(dev);
	int err;

	err = nvx_mlx5_port_admin(dev, true);
	if (err)
		netdev_warn(dev, "port admin state not set up: %d\n", err);
	err = nvx_mlx5_sync_uc(md);
	if (err)
		netdev_warn(dev, "unicast list not set: %d\n", err);
	return 0;
}

static int nvx_mlx5_stop(struct net_device *dev)
{
	nvx_mlx5_port_admin(dev, false);
	return 0;
}

static const struct net_device_ops nvx_mlx5_netdev_ops = {
	.ndo_open = nvx_mlx5_open,
	.ndo_stop = nvx_mlx5_stop,
	.ndo_start_xmit = nvx_mlx5_start_xmit,
};

static void nvx_mlx5_get_drvinfo(struct net_device *dev,
				 struct ethtool_drvinfo *info)
{
	struct nvx_mlx5_dev *md = nvx_mlx5_of(dev);

	strscpy(info->driver, KBUILD_MODNAME, sizeof(info->driver));
	strscpy(info->bus_info, dev_name(md->mdev->device),
		sizeof(info->bus_info));
}

/* ethtool -S NAME: the attached set's counters, as on nvxsim. RTNL held. */
static int nvx_mlx5_get_sset_count(struct net_device *dev, int sset)
{
	struct nvx_srq *srq = nvx_mlx5_lookup(dev);

	if (sset != ETH_SS_STATS || !srq)
		return -EOPNOTSUPP;
	return nvx_srq_ethtool_count(srq);
}

static void nvx_mlx5_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	struct nvx_srq *srq = nvx_mlx5_lookup(dev);

	if (sset == ETH_SS_STATS && srq)
		nvx_srq_ethtool_strings(srq, data);
}

static void nvx_mlx5_get_ethtool_stats(struct net_device *dev,
				       struct ethtool_stats *stats, u64 *data)
{
	struct nvx_srq *srq = nvx_mlx5_lookup(dev);

	if (srq)
		nvx_srq_ethtool_stats(srq, data);
}

static const struct ethtool_ops nvx_mlx5_ethtool_ops = {
	.get_drvinfo = nvx_mlx5_get_drvinfo,
	.get_sset_count = nvx_mlx5_get_sset_count,
	.get_strings = nvx_mlx5_get_strings,
	.get_ethtool_stats = nvx_mlx5_get_ethtool_stats,
};

/* ----------------------------------------------------- auxiliary driver --- */

static void nvx_mlx5_read_caps(struct mlx5_core_dev *mdev,
			       struct nvx_mlx5_caps *c)
{
	c->striding_rq = MLX5_CAP_GEN(mdev, striding_rq);
	c->ext_stride_num_range = MLX5_CAP_GEN(mdev, ext_stride_num_range);
	c->log_min_stride_sz_rq = MLX5_CAP_GEN(mdev, log_min_stride_sz_rq);
	c->log_max_stride_sz_rq = MLX5_CAP_GEN(mdev, log_max_stride_sz_rq);
	c->log_max_wq_sz = MLX5_CAP_GEN(mdev, log_max_wq_sz);
	c->log_max_rmp = MLX5_CAP_GEN(mdev, log_max_rmp);
	c->log_max_rq = MLX5_CAP_GEN(mdev, log_max_rq);
	c->log_max_rqt_size = MLX5_CAP_GEN(mdev, log_max_rqt_size);
	c->log_max_cq_sz = MLX5_CAP_GEN(mdev, log_max_cq_sz);
	c->rq_ts_format = MLX5_CAP_GEN(mdev, rq_ts_format);
}

static void nvx_mlx5_res_free(struct nvx_mlx5_dev *md)
{
	if (md->has_mkey)
		mlx5_core_destroy_mkey(md->mdev, md->mkey);
	if (md->has_td)
		mlx5_core_dealloc_transport_domain(md->mdev, md->tdn);
	if (md->has_pd)
		mlx5_core_dealloc_pd(md->mdev, md->pdn);
	if (md->uar)
		mlx5_put_uars_page(md->mdev, md->uar);
}

static int nvx_mlx5_res_alloc(struct nvx_mlx5_dev *md)
{
	u32 in[MLX5_ST_SZ_DW(create_mkey_in)] = {};
	int err;

	md->uar = mlx5_get_uars_page(md->mdev);
	if (IS_ERR(md->uar)) {
		err = PTR_ERR(md->uar);
		md->uar = NULL;
		return err;
	}
	err = mlx5_core_alloc_pd(md->mdev, &md->pdn);
	if (err)
		return err;
	md->has_pd = true;
	err = mlx5_core_alloc_transport_domain(md->mdev, &md->tdn);
	if (err)
		return err;
	md->has_td = true;
	nvx_mlx5_build_mkey(in, md->pdn);
	err = mlx5_core_create_mkey(md->mdev, &md->mkey, in, sizeof(in));
	md->has_mkey = !err;
	return err;
}

static int nvx_mlx5_probe(struct auxiliary_device *adev,
			  const struct auxiliary_device_id *id)
{
	struct mlx5_adev *madev = container_of(adev, struct mlx5_adev, adev);
	struct mlx5_core_dev *mdev = madev->mdev;
	struct net_device *netdev;
	struct nvx_mlx5_dev *md;
	u8 mac[ETH_ALEN];
	int err;

	md = kzalloc(sizeof(*md), GFP_KERNEL);
	if (!md)
		return -ENOMEM;
	md->mdev = mdev;
	INIT_LIST_HEAD(&md->sets);
	nvx_mlx5_read_caps(mdev, &md->caps);
	if (!md->caps.striding_rq) {
		dev_info(&adev->dev, "no striding RQs: not bound\n");
		err = -EOPNOTSUPP;
		goto free;
	}
	err = nvx_mlx5_res_alloc(md);
	if (err)
		goto res;

	netdev = alloc_etherdev(sizeof(md));
	if (!netdev) {
		err = -ENOMEM;
		goto res;
	}
	*(struct nvx_mlx5_dev **)netdev_priv(netdev) = md;
	md->netdev = netdev;
	strscpy(netdev->name, "nvxmlx%d", IFNAMSIZ);
	netdev->netdev_ops = &nvx_mlx5_netdev_ops;
	netdev->ethtool_ops = &nvx_mlx5_ethtool_ops;
	SET_NETDEV_DEV(netdev, &adev->dev);
	err = mlx5_query_nic_vport_mac_address(mdev, 0, false, mac);
	if (err)
		goto netdev;
	/* a sub-function without hw_addr: a random one, as mlx5e does */
	if (is_zero_ether_addr(mac))
		eth_hw_addr_random(netdev);
	else
		eth_hw_addr_set(netdev, mac);
	/* the port's MAC in the PF's L2 table (MPFS), as mlx5e puts it */
	ether_addr_copy(mac, netdev->dev_addr);
	err = mlx5_mpfs_add_mac(mdev, mac);
	if (err)
		dev_warn(&adev->dev, "MAC %pM not in the L2 table: %d\n", mac,
			 err);
	md->mpfs_added = !err;
	err = register_netdev(netdev);
	if (err)
		goto mpfs;
	auxiliary_set_drvdata(adev, md);
	dev_info(&adev->dev, "bound: %s, %s strides\n", netdev->name,
		 md->caps.ext_stride_num_range ? "2^3..2^16" : "2^9..2^16");
	return 0;
mpfs:
	if (md->mpfs_added)
		mlx5_mpfs_del_mac(mdev, mac);
netdev:
	free_netdev(netdev);
res:
	nvx_mlx5_res_free(md);
free:
	kfree(md);
	return err;
}

static void nvx_mlx5_remove(struct auxiliary_device *adev)
{
	struct nvx_mlx5_dev *md = auxiliary_get_drvdata(adev);
	struct nvx_mlx5_set *set, *tmp;

	rtnl_lock();
	/* the sets stay their owners', and receive nothing more */
	list_for_each_entry_safe(set, tmp, &md->sets, node)
		nvx_srq_nic_gone(set->srq);
	unregister_netdevice(md->netdev);
	rtnl_unlock();
	if (md->mpfs_added) {
		u8 mac[ETH_ALEN];

		ether_addr_copy(mac, md->netdev->dev_addr);
		mlx5_mpfs_del_mac(md->mdev, mac);
	}
	free_netdev(md->netdev);
	nvx_mlx5_res_free(md);
	kfree(md);
}

static const struct auxiliary_device_id nvx_mlx5_id_table[] = {
	{ .name = MLX5_ADEV_NAME ".eth" },
	{},
};
MODULE_DEVICE_TABLE(auxiliary, nvx_mlx5_id_table);

static struct auxiliary_driver nvx_mlx5_driver = {
	.name = "srq",
	.probe = nvx_mlx5_probe,
	.remove = nvx_mlx5_remove,
	.id_table = nvx_mlx5_id_table,
};

static int __init nvx_mlx5_init(void)
{
	int ret;

	ret = nvx_srq_register_backend(&nvx_mlx5_backend);
	if (ret)
		return ret;
	ret = auxiliary_driver_register(&nvx_mlx5_driver);
	if (ret)
		nvx_srq_unregister_backend(&nvx_mlx5_backend);
	return ret;
}

/* Unbinding removes every netdev; no set is attached (it holds a ref). */
static void __exit nvx_mlx5_exit(void)
{
	auxiliary_driver_unregister(&nvx_mlx5_driver);
	nvx_srq_unregister_backend(&nvx_mlx5_backend);
}

module_init(nvx_mlx5_init);
module_exit(nvx_mlx5_exit);

MODULE_DESCRIPTION("nvx shared RX queues: mlx5 backend (RMP + striding RQs)");
MODULE_LICENSE("GPL");
