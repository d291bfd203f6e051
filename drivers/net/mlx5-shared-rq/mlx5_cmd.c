// SPDX-License-Identifier: GPL-2.0
/*
 * nvx_mlx5: firmware command inputs, capability checks, completion
 * translation and ring arithmetic of the mlx5 backend. Pure functions:
 * mlx5.c runs them against a device, mlx5_test.c (KUnit) checks them with
 * mlx5's own MLX5_GET on the buffers they build.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "mlx5_cmd.h"

static_assert(BIT(NVX_MLX5_LOG_RQT_SZ) == NVX_SRQ_RSS_ENTRIES);
static_assert(BIT(NVX_MLX5_LOG_WQE_SZ) == sizeof(struct nvx_mlx5_wqe));

/**
 * nvx_mlx5_geom_init() - check a set's shape against the device
 * @s: the set's shape.
 * @caps: the device's capabilities.
 * @g: out: the shape in the device's terms.
 *
 * A striding WQE is one buffer: strides of 2^6..2^13 bytes (within the
 * device's stride range), 2^9..2^16 strides per WQE (2^3.. with
 * ext_stride_num_range). Each pool is an RMP whose linked list holds
 * every buffer of the pool and one free WQE; each queue's CQ holds a
 * completion for every stride of its pool, so that it cannot overrun.
 * RQs take the device's timestamp format (real time where that is all it
 * has, as mlx5e chooses).
 *
 * Return: 0; -EINVAL for a shape no mlx5 can take (sizes not powers of
 * two, a buffer that is not its strides); -EOPNOTSUPP for one this device
 * cannot take (no striding RQs, strides or rings outside its caps).
 */
int nvx_mlx5_geom_init(const struct nvx_srq_shape *s,
		       const struct nvx_mlx5_caps *caps,
		       struct nvx_mlx5_geom *g)
{
	u32 log_stride, log_num, lo, hi;

	if (!s->nr_queues || !s->nr_pools || !s->bufs_per_pool ||
	    !is_power_of_2(s->stride_size) ||
	    !is_power_of_2(s->strides_per_buf) ||
	    (u64)s->stride_size * s->strides_per_buf != s->buf_size)
		return -EINVAL;
	if (!caps->striding_rq)
		return -EOPNOTSUPP;

	log_stride = ilog2(s->stride_size);
	lo = max_t(u32, MLX5_MPWQE_LOG_STRIDE_SZ_BASE,
		   caps->log_min_stride_sz_rq);
	hi = min_t(u32, MLX5_MPWQE_LOG_STRIDE_SZ_MAX,
		   caps->log_max_stride_sz_rq);
	if (log_stride < lo || log_stride > hi)
		return -EOPNOTSUPP;

	log_num = ilog2(s->strides_per_buf);
	lo = caps->ext_stride_num_range ? MLX5_MPWQE_LOG_NUM_STRIDES_EXT_BASE :
					  MLX5_MPWQE_LOG_NUM_STRIDES_BASE;
	if (log_num < lo || log_num > MLX5_MPWQE_LOG_NUM_STRIDES_MAX)
		return -EOPNOTSUPP;

	g->log_stride_sz = log_stride;
	g->log_num_strides = log_num;
	g->log_wq_sz = order_base_2(s->bufs_per_pool + 1);
	g->log_cq_sz = order_base_2(s->bufs_per_pool) + log_num;
	if (g->log_wq_sz > caps->log_max_wq_sz ||
	    g->log_cq_sz > caps->log_max_cq_sz ||
	    caps->log_max_rqt_size < NVX_MLX5_LOG_RQT_SZ ||
	    s->nr_pools > BIT(caps->log_max_rmp) ||
	    s->nr_queues > BIT(caps->log_max_rq))
		return -EOPNOTSUPP;
	g->nr_rmps = s->nr_pools;
	g->nr_rqs = s->nr_queues;
	g->strides = s->strides_per_buf;
	g->stride_sz = s->stride_size;
	g->ts_format = caps->rq_ts_format == MLX5_TIMESTAMP_FORMAT_CAP_REAL_TIME ?
		       MLX5_TIMESTAMP_FORMAT_REAL_TIME :
		       MLX5_TIMESTAMP_FORMAT_FREE_RUNNING;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_geom_init);

/*
 * The striding fields of a WQ context, stored minus their bases in 4 bits:
 * 2^3..2^8 strides (ext_stride_num_range) wrap to 0xa..0xf, as mlx5e
 * stores them. A linked list (as mlx5e's striding RQs and mlx5_ib's SRQs
 * are): WQEs retire out of order when several RQs share the RMP.
 */
static void nvx_mlx5_set_striding(void *wq, const struct nvx_mlx5_geom *g)
{
	MLX5_SET(wq, wq, wq_type, MLX5_WQ_TYPE_LINKED_LIST_STRIDING_RQ);
	MLX5_SET(wq, wq, log_wqe_num_of_strides,
		 (g->log_num_strides - MLX5_MPWQE_LOG_NUM_STRIDES_BASE) & 0xf);
	MLX5_SET(wq, wq, log_wqe_stride_size,
		 g->log_stride_sz - MLX5_MPWQE_LOG_STRIDE_SZ_BASE);
	MLX5_SET(wq, wq, log_wq_stride, NVX_MLX5_LOG_WQE_SZ);
	MLX5_SET(wq, wq, log_wq_sz, g->log_wq_sz);
}

/**
 * nvx_mlx5_build_mkey() - CREATE_MKEY: a physical-address key for DMA
 * @in: MLX5_ST_SZ_BYTES(create_mkey_in) zeroed bytes.
 * @pdn: the backend's protection domain.
 *
 * Local read and write over all memory (length64), physical addresses:
 * the WQEs carry DMA addresses of the set's buffers, as mlx5e's own mkey
 * does.
 */
void nvx_mlx5_build_mkey(u32 *in, u32 pdn)
{
	void *mkc = MLX5_ADDR_OF(create_mkey_in, in, memory_key_mkey_entry);

	MLX5_SET(create_mkey_in, in, opcode, MLX5_CMD_OP_CREATE_MKEY);
	MLX5_SET(mkc, mkc, access_mode_1_0, MLX5_MKC_ACCESS_MODE_PA);
	MLX5_SET(mkc, mkc, lw, 1);
	MLX5_SET(mkc, mkc, lr, 1);
	MLX5_SET(mkc, mkc, pd, pdn);
	MLX5_SET(mkc, mkc, length64, 1);
	MLX5_SET(mkc, mkc, qpn, 0xffffff);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_mkey);

/**
 * nvx_mlx5_build_rmp() - CREATE_RMP: one pool's shared receive memory pool
 * @in: NVX_MLX5_RMP_INLEN(npages) zeroed bytes; the caller fills the page
 *	list (wq.pas) of the WQE ring.
 * @g: the set's geometry.
 * @pdn: the protection domain.
 * @db_dma: the ring's doorbell record.
 * @log_pg_sz: log2 of the ring's pages, minus MLX5_ADAPTER_PAGE_SHIFT.
 */
void nvx_mlx5_build_rmp(u32 *in, const struct nvx_mlx5_geom *g, u32 pdn,
			u64 db_dma, u8 log_pg_sz)
{
	void *rmpc = MLX5_ADDR_OF(create_rmp_in, in, ctx);
	void *wq = MLX5_ADDR_OF(rmpc, rmpc, wq);

	MLX5_SET(create_rmp_in, in, opcode, MLX5_CMD_OP_CREATE_RMP);
	MLX5_SET(rmpc, rmpc, state, MLX5_RMPC_STATE_RDY);
	nvx_mlx5_set_striding(wq, g);
	MLX5_SET(wq, wq, pd, pdn);
	MLX5_SET64(wq, wq, dbr_addr, db_dma);
	MLX5_SET(wq, wq, log_wq_pg_sz, log_pg_sz);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_rmp);

/**
 * nvx_mlx5_build_cq() - CREATE_CQ: one queue's completion queue
 * @in: NVX_MLX5_CQ_INLEN(npages) zeroed bytes; the caller fills pas.
 * @g: the set's geometry (log_cq_sz).
 * @eqn: the completion EQ.
 * @uar_page: the UAR page's index (for arming).
 * @db_dma: the CQ's doorbell record.
 * @log_pg_sz: log2 of the CQ buffer's pages, minus MLX5_ADAPTER_PAGE_SHIFT.
 *
 * 64-byte CQEs, no compression (every CQE is a whole one), no moderation.
 */
void nvx_mlx5_build_cq(u32 *in, const struct nvx_mlx5_geom *g, u32 eqn,
		       u32 uar_page, u64 db_dma, u8 log_pg_sz)
{
	void *cqc = MLX5_ADDR_OF(create_cq_in, in, cq_context);

	MLX5_SET(create_cq_in, in, opcode, MLX5_CMD_OP_CREATE_CQ);
	MLX5_SET(cqc, cqc, cqe_sz, CQE_STRIDE_64);
	MLX5_SET(cqc, cqc, cqe_comp_en, 0);
	MLX5_SET(cqc, cqc, log_cq_size, g->log_cq_sz);
	MLX5_SET(cqc, cqc, uar_page, uar_page);
	MLX5_SET(cqc, cqc, c_eqn_or_apu_element, eqn);
	MLX5_SET(cqc, cqc, log_page_size, log_pg_sz);
	MLX5_SET64(cqc, cqc, dbr_addr, db_dma);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_cq);

/**
 * nvx_mlx5_build_rq() - CREATE_RQ: a striding RQ fed by an RMP
 * @in: MLX5_ST_SZ_BYTES(create_rq_in) zeroed bytes.
 * @g: the set's geometry.
 * @cqn: its CQ.
 * @rmpn: the RMP of its pool.
 * @user_index: the queue's index (comes back in the CQEs' srqn field).
 *
 * The RQ's memory is the RMP's (mem_rq_type MEMORY_RQ_RMP); its WQ context
 * repeats the RMP's striding fields. Created in RST, moved to RDY by
 * nvx_mlx5_build_rq_ready(). VLAN tags are left in the frame (vsd).
 */
void nvx_mlx5_build_rq(u32 *in, const struct nvx_mlx5_geom *g, u32 cqn,
		       u32 rmpn, u32 user_index)
{
	void *rqc = MLX5_ADDR_OF(create_rq_in, in, ctx);
	void *wq = MLX5_ADDR_OF(rqc, rqc, wq);

	MLX5_SET(create_rq_in, in, opcode, MLX5_CMD_OP_CREATE_RQ);
	MLX5_SET(rqc, rqc, mem_rq_type, MLX5_RQC_MEM_RQ_TYPE_MEMORY_RQ_RMP);
	MLX5_SET(rqc, rqc, state, MLX5_RQC_STATE_RST);
	MLX5_SET(rqc, rqc, vsd, 1);
	MLX5_SET(rqc, rqc, flush_in_error_en, 1);
	MLX5_SET(rqc, rqc, ts_format, g->ts_format);
	MLX5_SET(rqc, rqc, user_index, user_index);
	MLX5_SET(rqc, rqc, cqn, cqn);
	MLX5_SET(rqc, rqc, rmpn, rmpn);
	nvx_mlx5_set_striding(wq, g);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_rq);

/**
 * nvx_mlx5_build_rq_ready() - MODIFY_RQ input for RST -> RDY
 * @in: MLX5_ST_SZ_BYTES(modify_rq_in) zeroed bytes.
 * @rqn: the RQ (mlx5_core_modify_rq() also takes it; set here too).
 */
void nvx_mlx5_build_rq_ready(u32 *in, u32 rqn)
{
	void *rqc = MLX5_ADDR_OF(modify_rq_in, in, ctx);

	MLX5_SET(modify_rq_in, in, opcode, MLX5_CMD_OP_MODIFY_RQ);
	MLX5_SET(modify_rq_in, in, rqn, rqn);
	MLX5_SET(modify_rq_in, in, rq_state, MLX5_RQC_STATE_RST);
	MLX5_SET(rqc, rqc, state, MLX5_RQC_STATE_RDY);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_rq_ready);

static void nvx_mlx5_set_rqt(void *rqtc, const u32 *rqns, const u16 *table)
{
	unsigned int i;

	MLX5_SET(rqtc, rqtc, rqt_max_size, NVX_SRQ_RSS_ENTRIES);
	MLX5_SET(rqtc, rqtc, rqt_actual_size, NVX_SRQ_RSS_ENTRIES);
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		MLX5_SET(rqtc, rqtc, rq_num[i], rqns[table[i]]);
}

/**
 * nvx_mlx5_build_rqt() - CREATE_RQT: the set's RSS indirection table
 * @in: NVX_MLX5_RQT_INLEN zeroed bytes.
 * @rqns: the RQ number of each queue.
 * @nr_rqs: entries of @rqns.
 * @table: NVX_SRQ_RSS_ENTRIES queue indexes, each below @nr_rqs (the
 *	core checked them; an index past @nr_rqs maps to queue 0).
 *
 * Entry i of the device's table is the RQ of queue @table[i], so the
 * device spreads flows exactly as the set's table says.
 */
void nvx_mlx5_build_rqt(u32 *in, const u32 *rqns, u32 nr_rqs,
			const u16 *table)
{
	void *rqtc = MLX5_ADDR_OF(create_rqt_in, in, rqt_context);
	u16 t[NVX_SRQ_RSS_ENTRIES];
	unsigned int i;

	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		t[i] = table[i] < nr_rqs ? table[i] : 0;
	MLX5_SET(create_rqt_in, in, opcode, MLX5_CMD_OP_CREATE_RQT);
	nvx_mlx5_set_rqt(rqtc, rqns, t);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_rqt);

/**
 * nvx_mlx5_build_rqt_modify() - MODIFY_RQT: a new RSS table, same RQT
 * @in: NVX_MLX5_RQT_MODIFY_INLEN zeroed bytes.
 * @rqtn: the RQT.
 * @rqns: the RQ number of each queue.
 * @nr_rqs: entries of @rqns.
 * @table: NVX_SRQ_RSS_ENTRIES queue indexes.
 *
 * mlx5_core_modify_rqt() is not exported: the backend runs this input
 * through mlx5_cmd_exec().
 *
 * Return: 0, or -EINVAL when an entry of @table is not below @nr_rqs
 * (nothing is built).
 */
int nvx_mlx5_build_rqt_modify(u32 *in, u32 rqtn, const u32 *rqns,
			      u32 nr_rqs, const u16 *table)
{
	void *rqtc = MLX5_ADDR_OF(modify_rqt_in, in, ctx);
	unsigned int i;

	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		if (table[i] >= nr_rqs)
			return -EINVAL;
	MLX5_SET(modify_rqt_in, in, opcode, MLX5_CMD_OP_MODIFY_RQT);
	MLX5_SET(modify_rqt_in, in, rqtn, rqtn);
	MLX5_SET(modify_rqt_in, in, bitmask.rqn_list, 1);
	nvx_mlx5_set_rqt(rqtc, rqns, table);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_rqt_modify);

/**
 * nvx_mlx5_build_tir() - CREATE_TIR: the set's transport interface
 * @in: MLX5_ST_SZ_BYTES(create_tir_in) zeroed bytes.
 * @rqtn: the set's RQT.
 * @tdn: the backend's transport domain.
 * @key: the 40-byte Toeplitz key.
 *
 * Indirect dispatch through @rqtn, Toeplitz over the outer IPv4 source
 * and destination addresses (frames of one host pair stay on one queue),
 * no LRO or header-data split: every frame lands in strides as it came.
 */
void nvx_mlx5_build_tir(u32 *in, u32 rqtn, u32 tdn, const u8 *key)
{
	void *tirc = MLX5_ADDR_OF(create_tir_in, in, ctx);
	void *hfso = MLX5_ADDR_OF(tirc, tirc, rx_hash_field_selector_outer);
	void *k = MLX5_ADDR_OF(tirc, tirc, rx_hash_toeplitz_key);

	MLX5_SET(create_tir_in, in, opcode, MLX5_CMD_OP_CREATE_TIR);
	MLX5_SET(tirc, tirc, disp_type, MLX5_TIRC_DISP_TYPE_INDIRECT);
	MLX5_SET(tirc, tirc, indirect_table, rqtn);
	MLX5_SET(tirc, tirc, transport_domain, tdn);
	MLX5_SET(tirc, tirc, packet_merge_mask, 0);
	MLX5_SET(tirc, tirc, rx_hash_fn, MLX5_RX_HASH_FN_TOEPLITZ);
	MLX5_SET(tirc, tirc, rx_hash_symmetric, 1);
	memcpy(k, key, MLX5_FLD_SZ_BYTES(tirc, rx_hash_toeplitz_key));
	MLX5_SET(rx_hash_field_select, hfso, l3_prot_type,
		 MLX5_L3_PROT_TYPE_IPV4);
	MLX5_SET(rx_hash_field_select, hfso, selected_fields,
		 MLX5_HASH_FIELD_SEL_SRC_IP | MLX5_HASH_FIELD_SEL_DST_IP);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_tir);

/**
 * nvx_mlx5_build_match() - the steering rule's match
 * @spec: zeroed; gets outer-header criteria and values.
 * @dmac: destination MAC the set receives.
 * @dst_ip: destination IPv4 address (network order) it also requires, or
 *	0 for any IPv4 and non-IPv4 frame to @dmac.
 *
 * One rule per set (Caladan's model): frames to the set's MAC, and when
 * the set has an address, only IPv4 frames to it.
 */
void nvx_mlx5_build_match(struct mlx5_flow_spec *spec, const u8 *dmac,
			  __be32 dst_ip)
{
	void *c = MLX5_ADDR_OF(fte_match_param, spec->match_criteria,
			       outer_headers);
	void *v = MLX5_ADDR_OF(fte_match_param, spec->match_value,
			       outer_headers);

	spec->match_criteria_enable = MLX5_MATCH_OUTER_HEADERS;
	eth_broadcast_addr(MLX5_ADDR_OF(fte_match_set_lyr_2_4, c,
					dmac_47_16));
	ether_addr_copy(MLX5_ADDR_OF(fte_match_set_lyr_2_4, v, dmac_47_16),
			dmac);
	if (!dst_ip)
		return;
	MLX5_SET_TO_ONES(fte_match_set_lyr_2_4, c, ethertype);
	MLX5_SET(fte_match_set_lyr_2_4, v, ethertype, ETH_P_IP);
	MLX5_SET_TO_ONES(fte_match_set_lyr_2_4, c,
			 dst_ipv4_dst_ipv6.ipv4_layout.ipv4);
	memcpy(MLX5_ADDR_OF(fte_match_set_lyr_2_4, v,
			    dst_ipv4_dst_ipv6.ipv4_layout.ipv4),
	       &dst_ip, sizeof(dst_ip));
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_match);

/**
 * nvx_mlx5_rule_of() - the steering rule of a set on a port
 * @m: the set's rule (struct nvx_srq_match; flags 0: no rule).
 * @port_mac: the port's MAC.
 * @r: out.
 *
 * NVX_SRQ_MATCH_MAC names the destination MAC, else the port's own;
 * NVX_SRQ_MATCH_IP4 adds IPv4 to that address. ARP is not matched: the
 * device's match fields do not reach ARP's target address (srq.rst).
 */
void nvx_mlx5_rule_of(const struct nvx_srq_match *m, const u8 *port_mac,
		      struct nvx_mlx5_rule *r)
{
	memset(r, 0, sizeof(*r));
	ether_addr_copy(r->dmac, m->flags & NVX_SRQ_MATCH_MAC ? m->mac :
							       port_mac);
	if (m->flags & NVX_SRQ_MATCH_IP4)
		r->dst_ip = m->ip4;
	r->catch_all = !m->flags;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_rule_of);

/**
 * nvx_mlx5_rules_overlap() - could one frame match both rules
 * @a: a rule.
 * @b: another.
 *
 * The device orders two flow tables, not two entries of one table: a
 * port takes one catch-all set, and rules that no frame matches twice
 * (a MAC-only rule and an IPv4 rule on the same MAC overlap; two IPv4
 * rules on the same MAC overlap only with the same address).
 *
 * Return: true if both could take a frame (the second set is refused).
 */
bool nvx_mlx5_rules_overlap(const struct nvx_mlx5_rule *a,
			    const struct nvx_mlx5_rule *b)
{
	if (a->catch_all || b->catch_all)
		return a->catch_all && b->catch_all;
	if (!ether_addr_equal(a->dmac, b->dmac))
		return false;
	return !a->dst_ip || !b->dst_ip || a->dst_ip == b->dst_ip;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_rules_overlap);

/**
 * nvx_mlx5_build_paos() - the PAOS register: the port's admin state
 * @in: MLX5_ST_SZ_BYTES(paos_reg) zeroed bytes, for
 *	mlx5_core_access_reg(MLX5_REG_PAOS, write).
 * @up: up or down.
 *
 * Unbinding mlx5e took the port down; the netdev's open and stop set it
 * (mlx5_set_port_admin_status() is not exported: the same register).
 */
void nvx_mlx5_build_paos(u32 *in, bool up)
{
	MLX5_SET(paos_reg, in, local_port, 1);
	MLX5_SET(paos_reg, in, admin_status, up ? MLX5_PORT_UP :
						  MLX5_PORT_DOWN);
	MLX5_SET(paos_reg, in, ase, 1);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_build_paos);

/**
 * nvx_mlx5_wqe_fill() - a WQE of an RMP's list: a whole buffer
 * @wqe: the WQE (its next segment is left as it is).
 * @dma: the buffer's DMA address.
 * @lkey: the mkey it is reached through.
 * @len: the buffer's bytes (strides * stride size).
 */
void nvx_mlx5_wqe_fill(struct nvx_mlx5_wqe *wqe, u64 dma, u32 lkey, u32 len)
{
	wqe->data.byte_count = cpu_to_be32(len);
	wqe->data.lkey = cpu_to_be32(lkey);
	wqe->data.addr = cpu_to_be64(dma);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_wqe_fill);

/**
 * nvx_mlx5_wqe_link() - set the WQE after @wqe in the list
 * @wqe: the WQE.
 * @next: the next one's index.
 */
void nvx_mlx5_wqe_link(struct nvx_mlx5_wqe *wqe, u16 next)
{
	wqe->next.next_wqe_index = cpu_to_be16(next);
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_wqe_link);

/**
 * nvx_mlx5_cqe_parse() - translate one striding-RQ CQE
 * @cqe: the CQE at consumer counter @cc.
 * @cc: the CQ's consumer counter (free-running).
 * @log_cq_sz: log2 of the CQ's entries.
 * @g: the set's geometry.
 * @rx: out: the completion in nvx's terms.
 *
 * wqe_id names the WQE (the RMP ring slot), wqe_counter the first stride,
 * byte_cnt's low 16 bits the length, bits 30:16 the strides consumed and
 * bit 31 a filler. Checksum, LRO, VLAN and hash bits are ignored: the
 * instance reads the frame as it came. A frame whose bytes do not fit its
 * strides is cut to them and flagged NVX_SRQ_CQE_TRUNCATED.
 *
 * Return: 0; -EAGAIN when the CQE is still the device's (owner bit);
 * -EIO for an error CQE (the RQ went to error), whose strides are
 * consumed all the same (as mlx5e counts them): @rx has them, or
 * @rx->strides is 0 when they are out of range; -EPROTO for a CQE that
 * cannot be a striding-RQ receive (other opcode, compressed, strides
 * outside the WQE).
 */
int nvx_mlx5_cqe_parse(const struct mlx5_cqe64 *cqe, u32 cc, u8 log_cq_sz,
		       const struct nvx_mlx5_geom *g, struct nvx_mlx5_rx *rx)
{
	const struct mpwrq_cqe_bc *bc = (const void *)&cqe->byte_cnt;
	u8 op_own = READ_ONCE(cqe->op_own);
	u16 fcs, stride, strides, len;
	bool bad;
	u8 op;

	op = op_own >> 4;
	if ((op_own & MLX5_CQE_OWNER_MASK) != ((cc >> log_cq_sz) & 1) ||
	    op == MLX5_CQE_INVALID)
		return -EAGAIN;
	/* the CQE's other bytes are read after its owner bit */
	dma_rmb();
	if ((op != MLX5_CQE_RESP_SEND && op != MLX5_CQE_RESP_ERR) ||
	    ((op_own >> 2) & 3))
		return -EPROTO;

	fcs = be16_to_cpu(bc->filler_consumed_strides);
	len = be16_to_cpu(bc->byte_cnt);
	strides = fcs & 0x7fff;
	stride = be16_to_cpu(cqe->wqe_counter);
	bad = !strides || stride >= g->strides ||
	      strides > g->strides - stride;
	rx->slot = be16_to_cpu(cqe->wqe_id) & (BIT(g->log_wq_sz) - 1);
	rx->stride = stride;
	rx->strides = bad ? 0 : strides;
	rx->len = 0;
	rx->flags = 0;
	if (op == MLX5_CQE_RESP_ERR)
		return -EIO;
	if (bad)
		return -EPROTO;
	if (fcs & 0x8000) {
		rx->flags = NVX_SRQ_CQE_FILLER;
		return 0;
	}
	rx->len = len;
	if (len > strides * g->stride_sz) {
		rx->len = strides * g->stride_sz;
		rx->flags = NVX_SRQ_CQE_TRUNCATED;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_cqe_parse);

/**
 * nvx_mlx5_wq_init() - an RMP's list, every WQE free
 * @wq: log_sz, strides and the arrays set; the rest is set here.
 *
 * WQE i links to i + 1, the last to 0; the caller writes the same links
 * into the WQEs (nvx_mlx5_wqe_link()) before it creates the RMP.
 */
void nvx_mlx5_wq_init(struct nvx_mlx5_wq *wq)
{
	u32 n = BIT(wq->log_sz), i;

	for (i = 0; i < n; i++) {
		wq->next[i] = (i + 1) & (n - 1);
		wq->posted[i] = 0;
		wq->used[i] = 0;
	}
	wq->head = 0;
	wq->tail = n - 1;
	wq->ctr = 0;
	wq->cur = 0;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_wq_init);

/**
 * nvx_mlx5_wq_room() - WQEs that can be posted to an RMP's list
 * @wq: the list.
 *
 * Return: free WQEs, less the one that always stays free.
 */
u32 nvx_mlx5_wq_room(const struct nvx_mlx5_wq *wq)
{
	return BIT(wq->log_sz) - 1 - wq->cur;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_wq_room);

/**
 * nvx_mlx5_wq_post() - take the list's head for a buffer
 * @wq: the list, with room (nvx_mlx5_wq_room()).
 * @buf: the set's buffer.
 *
 * Return: the WQE, which the caller fills (nvx_mlx5_wqe_fill()) before it
 * writes @wq->ctr to the doorbell record.
 */
u32 nvx_mlx5_wq_post(struct nvx_mlx5_wq *wq, u32 buf)
{
	u32 slot = wq->head;

	wq->buf[slot] = buf;
	wq->used[slot] = 0;
	wq->posted[slot] = 1;
	wq->head = wq->next[slot];
	wq->cur++;
	wq->ctr++;
	return slot;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_wq_post);

/**
 * nvx_mlx5_wq_consume() - count strides the device consumed in a WQE
 * @wq: the list.
 * @slot: the CQE's WQE.
 * @strides: strides it consumed.
 * @buf: out: the set's buffer in @slot.
 * @link: out, when the WQE retires: the WQE whose next segment must now
 *	hold @slot (the old tail).
 *
 * A WQE retires when all its strides are consumed: it is linked after the
 * tail and can be posted again once the head reaches it.
 *
 * Return: 1 when @slot retired, 0 when it did not, -EPROTO when @slot is
 * not posted or its strides would pass the WQE's (nothing counted).
 */
int nvx_mlx5_wq_consume(struct nvx_mlx5_wq *wq, u32 slot, u32 strides,
			u32 *buf, u16 *link)
{
	if (slot >= BIT(wq->log_sz) || !wq->posted[slot] ||
	    strides > wq->strides - wq->used[slot])
		return -EPROTO;
	wq->used[slot] += strides;
	*buf = wq->buf[slot];
	if (wq->used[slot] < wq->strides)
		return 0;
	wq->posted[slot] = 0;
	*link = wq->tail;
	wq->next[wq->tail] = slot;
	wq->tail = slot;
	wq->cur--;
	return 1;
}
EXPORT_SYMBOL_IF_KUNIT(nvx_mlx5_wq_consume);
