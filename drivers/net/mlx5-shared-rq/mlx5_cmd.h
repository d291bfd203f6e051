/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx_mlx5: the pure pieces of the mlx5 backend. Everything here builds
 * firmware command inputs, checks parameters against the device's
 * capabilities, translates completions or does ring arithmetic; nothing
 * here touches a device, so KUnit (mlx5_test.c) checks all of it on a
 * machine without a ConnectX NIC.
 */
#ifndef _NVX_MLX5_CMD_H
#define _NVX_MLX5_CMD_H

#include <linux/mlx5/cq.h>
#include <linux/mlx5/device.h>
#include <linux/mlx5/fs.h>
#include <linux/mlx5/mlx5_ifc.h>
#include <linux/mlx5/qp.h>
#include <linux/types.h>

#include "srq.h"

/**
 * struct nvx_mlx5_caps - what the backend needs of the device's general
 * capabilities (MLX5_CAP_GEN), copied at probe
 * @striding_rq: multi-packet (striding) RQs.
 * @ext_stride_num_range: strides per WQE from 2^3 instead of 2^9.
 * @log_min_stride_sz_rq: smallest stride.
 * @log_max_stride_sz_rq: largest stride.
 * @log_max_wq_sz: WQEs per work queue.
 * @log_max_rmp: RMPs.
 * @log_max_rq: RQs.
 * @log_max_rqt_size: entries per RQ table.
 * @log_max_cq_sz: entries per CQ.
 * @rq_ts_format: MLX5_TIMESTAMP_FORMAT_CAP_* of RQs.
 */
struct nvx_mlx5_caps {
	u8 striding_rq;
	u8 ext_stride_num_range;
	u8 log_min_stride_sz_rq;
	u8 log_max_stride_sz_rq;
	u8 log_max_wq_sz;
	u8 log_max_rmp;
	u8 log_max_rq;
	u8 log_max_rqt_size;
	u8 log_max_cq_sz;
	u8 rq_ts_format;
};

/**
 * struct nvx_mlx5_geom - a set's shape in the device's terms
 * @log_stride_sz: log2 of the stride (bytes).
 * @log_num_strides: log2 of the strides per WQE (= per buffer).
 * @log_wq_sz: log2 of the WQEs in each RMP's list (> buffers per pool: a
 *	linked list keeps one WQE free).
 * @log_cq_sz: log2 of each queue's CQ entries (every stride of a pool).
 * @nr_rmps: one per pool.
 * @nr_rqs: one per queue.
 * @strides: strides per WQE.
 * @stride_sz: bytes per stride.
 * @ts_format: the RQs' MLX5_TIMESTAMP_FORMAT_*.
 */
struct nvx_mlx5_geom {
	u8 log_stride_sz;
	u8 log_num_strides;
	u8 log_wq_sz;
	u8 log_cq_sz;
	u32 nr_rmps;
	u32 nr_rqs;
	u32 strides;
	u32 stride_sz;
	u8 ts_format;
};

/**
 * struct nvx_mlx5_wqe - a WQE of an RMP's linked striding list
 * @next: the index of the WQE after it in the list.
 * @data: the buffer: all of its strides.
 */
struct nvx_mlx5_wqe {
	struct mlx5_wqe_srq_next_seg next;
	struct mlx5_wqe_data_seg data;
};

#define NVX_MLX5_LOG_WQE_SZ	5	/* sizeof(struct nvx_mlx5_wqe) */
/* The RQ table always has NVX_SRQ_RSS_ENTRIES entries (the set's table). */
#define NVX_MLX5_LOG_RQT_SZ	7
/* Sets with a rule on one port (entries of its rules table). */
#define NVX_MLX5_MAX_RULES	256

int nvx_mlx5_geom_init(const struct nvx_srq_shape *s,
		       const struct nvx_mlx5_caps *caps,
		       struct nvx_mlx5_geom *g);

void nvx_mlx5_build_mkey(u32 *in, u32 pdn);
void nvx_mlx5_build_rmp(u32 *in, const struct nvx_mlx5_geom *g, u32 pdn,
			u64 db_dma, u8 log_pg_sz);
void nvx_mlx5_build_cq(u32 *in, const struct nvx_mlx5_geom *g, u32 eqn,
		       u32 uar_page, u64 db_dma, u8 log_pg_sz);
void nvx_mlx5_build_rq(u32 *in, const struct nvx_mlx5_geom *g, u32 cqn,
		       u32 rmpn, u32 user_index);
void nvx_mlx5_build_rq_ready(u32 *in, u32 rqn);
void nvx_mlx5_build_rqt(u32 *in, const u32 *rqns, u32 nr_rqs,
			const u16 *table);
int nvx_mlx5_build_rqt_modify(u32 *in, u32 rqtn, const u32 *rqns,
			      u32 nr_rqs, const u16 *table);
void nvx_mlx5_build_tir(u32 *in, u32 rqtn, u32 tdn, const u8 *key);
void nvx_mlx5_build_match(struct mlx5_flow_spec *spec, const u8 *dmac,
			  __be32 dst_ip);

/**
 * struct nvx_mlx5_rule - what a set's steering rule matches on a port
 * @dmac: destination MAC (the set's with NVX_SRQ_MATCH_MAC, else the
 *	port's).
 * @dst_ip: with NVX_SRQ_MATCH_IP4: IPv4 destination (network order);
 *	0: any frame to @dmac.
 * @catch_all: the set has no rule: every frame to the port's MAC that no
 *	rule takes (a flow table of its own, after the rules' table).
 */
struct nvx_mlx5_rule {
	u8 dmac[ETH_ALEN];
	__be32 dst_ip;
	bool catch_all;
};

void nvx_mlx5_rule_of(const struct nvx_srq_match *m, const u8 *port_mac,
		      struct nvx_mlx5_rule *r);
bool nvx_mlx5_rules_overlap(const struct nvx_mlx5_rule *a,
			    const struct nvx_mlx5_rule *b);
void nvx_mlx5_build_paos(u32 *in, bool up);
void nvx_mlx5_wqe_fill(struct nvx_mlx5_wqe *wqe, u64 dma, u32 lkey, u32 len);
void nvx_mlx5_wqe_link(struct nvx_mlx5_wqe *wqe, u16 next);

/* The length of a command's input with its page list. */
#define NVX_MLX5_RMP_INLEN(npages) \
	(MLX5_ST_SZ_BYTES(create_rmp_in) + (npages) * sizeof(u64))
#define NVX_MLX5_CQ_INLEN(npages) \
	(MLX5_ST_SZ_BYTES(create_cq_in) + (npages) * sizeof(u64))
#define NVX_MLX5_RQT_INLEN \
	(MLX5_ST_SZ_BYTES(create_rqt_in) + \
	 MLX5_ST_SZ_BYTES(rq_num) * NVX_SRQ_RSS_ENTRIES)
#define NVX_MLX5_RQT_MODIFY_INLEN \
	(MLX5_ST_SZ_BYTES(modify_rqt_in) + \
	 MLX5_ST_SZ_BYTES(rq_num) * NVX_SRQ_RSS_ENTRIES)

/**
 * struct nvx_mlx5_rx - one completion, in nvx's terms
 * @slot: the WQE it belongs to (an index in the RMP's ring).
 * @stride: its first stride.
 * @strides: strides consumed, fillers included.
 * @len: bytes stored (0 for a filler).
 * @flags: NVX_SRQ_CQE_*.
 */
struct nvx_mlx5_rx {
	u32 slot;
	u32 stride;
	u32 strides;
	u32 len;
	u16 flags;
};

int nvx_mlx5_cqe_parse(const struct mlx5_cqe64 *cqe, u32 cc, u8 log_cq_sz,
		       const struct nvx_mlx5_geom *g, struct nvx_mlx5_rx *rx);

/**
 * struct nvx_mlx5_wq - the software side of an RMP's linked list
 * @log_sz: log2 of its WQEs.
 * @strides: strides per WQE.
 * @head: the next WQE to post (free).
 * @tail: the list's last WQE (free; a retired WQE is linked after it).
 * @ctr: WQEs posted, the doorbell record's counter (16 bits).
 * @cur: WQEs posted and not retired.
 * @next: each WQE's next index (what its next segment holds).
 * @posted: each WQE is posted and not retired.
 * @buf: the set's buffer in each WQE.
 * @used: strides consumed of each WQE.
 *
 * The device takes posted WQEs in list order; each queue's RQ holds the
 * one it fills, so WQEs retire in any order: a retired WQE is linked at
 * the tail (as mlx5_wq_ll_pop() does), one WQE always stays free.
 */
struct nvx_mlx5_wq {
	u8 log_sz;
	u32 strides;
	u16 head;
	u16 tail;
	u16 ctr;
	u32 cur;
	u16 *next;
	u8 *posted;
	u32 *buf;
	u32 *used;
};

void nvx_mlx5_wq_init(struct nvx_mlx5_wq *wq);
u32 nvx_mlx5_wq_room(const struct nvx_mlx5_wq *wq);
u32 nvx_mlx5_wq_post(struct nvx_mlx5_wq *wq, u32 buf);
int nvx_mlx5_wq_consume(struct nvx_mlx5_wq *wq, u32 slot, u32 strides,
			u32 *buf, u16 *link);

#endif /* _NVX_MLX5_CMD_H */
