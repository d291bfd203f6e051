// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the pure pieces of the mlx5 backend (mlx5_cmd.c), checked
 * without a NIC. Command inputs are read back with mlx5's own MLX5_GET
 * on the built buffers; CQEs are built in mainline's struct mlx5_cqe64
 * layout and read back with mainline's mpwrq_* accessors as well.
 *
 * Run: load nvx_mlx5_test.ko (mlx5_core and nvx_mlx5 first); results in
 * /sys/kernel/debug/kunit/nvx_mlx5_*\/results (the selftest srq_mlx5
 * does both).
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "mlx5_cmd.h"

/* A ConnectX-6 Dx-like device: every range the backend uses. */
static const struct nvx_mlx5_caps caps_ext = {
	.striding_rq = 1,
	.ext_stride_num_range = 1,
	.log_min_stride_sz_rq = 6,
	.log_max_stride_sz_rq = 13,
	.log_max_wq_sz = 15,
	.log_max_rmp = 16,
	.log_max_rq = 17,
	.log_max_rqt_size = 11,
	.log_max_cq_sz = 22,
	.rq_ts_format = MLX5_TIMESTAMP_FORMAT_CAP_FREE_RUNNING_AND_REAL_TIME,
};

/* Junction's set: 16 KiB buffers, 256 B strides, 128 buffers, 4 queues. */
static const struct nvx_srq_shape shape_def = {
	.nr_queues = 4,
	.nr_pools = 1,
	.bufs_per_pool = 128,
	.buf_size = 16384,
	.stride_size = 256,
	.strides_per_buf = 64,
};

static void geom_ok(struct kunit *test, const struct nvx_srq_shape *s,
		    const struct nvx_mlx5_caps *c, struct nvx_mlx5_geom *g)
{
	KUNIT_ASSERT_EQ(test, nvx_mlx5_geom_init(s, c, g), 0);
}

static int geom_err(const struct nvx_srq_shape *s,
		    const struct nvx_mlx5_caps *c)
{
	struct nvx_mlx5_geom g;

	return nvx_mlx5_geom_init(s, c, &g);
}

static void *zin(struct kunit *test, size_t len)
{
	void *p = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

/* ------------------------------------------------------------ geometry */

static void geom_junction(struct kunit *test)
{
	struct nvx_mlx5_geom g;

	geom_ok(test, &shape_def, &caps_ext, &g);
	KUNIT_EXPECT_EQ(test, g.log_stride_sz, 8);
	KUNIT_EXPECT_EQ(test, g.log_num_strides, 6);
	KUNIT_EXPECT_EQ(test, g.log_wq_sz, 8);	/* 128 buffers + a free WQE */
	KUNIT_EXPECT_EQ(test, g.log_cq_sz, 13);	/* 8192: Junction's CQ */
	KUNIT_EXPECT_EQ(test, g.ts_format, MLX5_TIMESTAMP_FORMAT_FREE_RUNNING);
	KUNIT_EXPECT_EQ(test, g.nr_rmps, 1);
	KUNIT_EXPECT_EQ(test, g.nr_rqs, 4);
	KUNIT_EXPECT_EQ(test, g.strides, 64);
	KUNIT_EXPECT_EQ(test, g.stride_sz, 256);
}

static void geom_64_strides_need_ext_range(struct kunit *test)
{
	struct nvx_mlx5_caps c = caps_ext;

	c.ext_stride_num_range = 0;
	KUNIT_EXPECT_EQ(test, geom_err(&shape_def, &c), -EOPNOTSUPP);
}

static void geom_512_strides_without_ext_range(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;
	struct nvx_mlx5_caps c = caps_ext;
	struct nvx_mlx5_geom g;

	c.ext_stride_num_range = 0;
	s.stride_size = 64;
	s.strides_per_buf = 512;
	s.buf_size = 32768;
	geom_ok(test, &s, &c, &g);
	KUNIT_EXPECT_EQ(test, g.log_stride_sz, 6);
	KUNIT_EXPECT_EQ(test, g.log_num_strides, 9);
	KUNIT_EXPECT_EQ(test, g.log_cq_sz, 16);
}

static void geom_no_striding_rq(struct kunit *test)
{
	struct nvx_mlx5_caps c = caps_ext;

	c.striding_rq = 0;
	KUNIT_EXPECT_EQ(test, geom_err(&shape_def, &c), -EOPNOTSUPP);
}

static void geom_sizes_not_powers_of_two(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;

	s.stride_size = 192;
	s.buf_size = 192 * 64;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EINVAL);
	s = shape_def;
	s.strides_per_buf = 48;
	s.buf_size = 48 * 256;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EINVAL);
}

static void geom_buffer_is_not_its_strides(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;

	s.buf_size = 8192;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EINVAL);
	s.buf_size = 0;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EINVAL);
}

static void geom_empty_shape(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;

	s.nr_queues = 0;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EINVAL);
	s = shape_def;
	s.bufs_per_pool = 0;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EINVAL);
}

static void geom_stride_outside_caps(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;
	struct nvx_mlx5_caps c = caps_ext;

	/* the device's minimum is 128 B: 256 passes, 64 does not */
	c.log_min_stride_sz_rq = 7;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), 0);
	s.stride_size = 64;
	s.strides_per_buf = 256;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), -EOPNOTSUPP);
	/* 16 KiB strides are past mlx5's 2^13 bound */
	s = shape_def;
	s.stride_size = 16384;
	s.strides_per_buf = 8;
	s.buf_size = 131072;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EOPNOTSUPP);
	/* 32 B strides are below mlx5's 2^6 whatever the caps say */
	c = caps_ext;
	c.log_min_stride_sz_rq = 0;
	s = shape_def;
	s.stride_size = 32;
	s.strides_per_buf = 512;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), -EOPNOTSUPP);
}

static void geom_strides_outside_range(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;

	/* 4 strides: below 2^3 even with the extended range */
	s.strides_per_buf = 4;
	s.buf_size = 1024;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EOPNOTSUPP);
	/* 2^17 strides: above 2^16 */
	s.stride_size = 64;
	s.strides_per_buf = 1U << 17;
	s.buf_size = 64U << 17;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), -EOPNOTSUPP);
	/* 8: the extended minimum */
	s = shape_def;
	s.strides_per_buf = 8;
	s.buf_size = 2048;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &caps_ext), 0);
}

static void geom_rings_outside_caps(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;
	struct nvx_mlx5_caps c = caps_ext;
	struct nvx_mlx5_geom g;

	/* 100 buffers: a list of 128 */
	s.bufs_per_pool = 100;
	geom_ok(test, &s, &c, &g);
	KUNIT_EXPECT_EQ(test, g.log_wq_sz, 7);
	KUNIT_EXPECT_EQ(test, g.log_cq_sz, 7 + 6);
	/* 2^15 - 1 buffers and the free WQE: 2^15, the device's most */
	s.bufs_per_pool = 32767;
	geom_ok(test, &s, &c, &g);
	KUNIT_EXPECT_EQ(test, g.log_wq_sz, 15);
	/* 2^15 buffers need a list of 2^16 */
	s.bufs_per_pool = 32768;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), -EOPNOTSUPP);
	/* every stride of 128 buffers is 2^13 CQEs: a 2^12 CQ cannot */
	c.log_max_cq_sz = 12;
	KUNIT_EXPECT_EQ(test, geom_err(&shape_def, &c), -EOPNOTSUPP);
	c.log_max_cq_sz = 13;
	KUNIT_EXPECT_EQ(test, geom_err(&shape_def, &c), 0);
}

static void geom_objects_outside_caps(struct kunit *test)
{
	struct nvx_srq_shape s = shape_def;
	struct nvx_mlx5_caps c = caps_ext;
	struct nvx_mlx5_geom g;

	c.log_max_rq = 1;		/* 2 RQs, 4 queues */
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), -EOPNOTSUPP);
	c = caps_ext;
	c.log_max_rqt_size = 6;		/* 64 entries, table of 128 */
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), -EOPNOTSUPP);
	c = caps_ext;
	c.log_max_rmp = 1;		/* a pool per queue: 4 RMPs */
	s.nr_pools = 4;
	KUNIT_EXPECT_EQ(test, geom_err(&s, &c), -EOPNOTSUPP);
	c.log_max_rmp = 2;
	geom_ok(test, &s, &c, &g);
	KUNIT_EXPECT_EQ(test, g.nr_rmps, 4);
}

static void geom_timestamp_format(struct kunit *test)
{
	struct nvx_mlx5_caps c = caps_ext;
	struct nvx_mlx5_geom g;

	/* a device that has only real-time stamps gets them (mlx5e's rule) */
	c.rq_ts_format = MLX5_TIMESTAMP_FORMAT_CAP_REAL_TIME;
	geom_ok(test, &shape_def, &c, &g);
	KUNIT_EXPECT_EQ(test, g.ts_format, MLX5_TIMESTAMP_FORMAT_REAL_TIME);
	c.rq_ts_format = MLX5_TIMESTAMP_FORMAT_CAP_FREE_RUNNING;
	geom_ok(test, &shape_def, &c, &g);
	KUNIT_EXPECT_EQ(test, g.ts_format, MLX5_TIMESTAMP_FORMAT_FREE_RUNNING);
}

/* ------------------------------------------------------ command inputs */

static void cmd_mkey(struct kunit *test)
{
	u32 *in = zin(test, MLX5_ST_SZ_BYTES(create_mkey_in));
	void *mkc = MLX5_ADDR_OF(create_mkey_in, in, memory_key_mkey_entry);

	nvx_mlx5_build_mkey(in, 0x1234);
	KUNIT_EXPECT_EQ(test, MLX5_GET(create_mkey_in, in, opcode),
			MLX5_CMD_OP_CREATE_MKEY);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, access_mode_1_0),
			MLX5_MKC_ACCESS_MODE_PA);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, access_mode_4_2), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, lw), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, lr), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, rw), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, rr), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, pd), 0x1234);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, length64), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(mkc, mkc, qpn), 0xffffff);
}

static void cmd_rmp(struct kunit *test)
{
	u32 *in = zin(test, NVX_MLX5_RMP_INLEN(2));
	void *rmpc = MLX5_ADDR_OF(create_rmp_in, in, ctx);
	void *wq = MLX5_ADDR_OF(rmpc, rmpc, wq);
	struct nvx_mlx5_geom g;

	geom_ok(test, &shape_def, &caps_ext, &g);
	nvx_mlx5_build_rmp(in, &g, 0xabcde, 0x123456789abcdef0ULL, 3);
	KUNIT_EXPECT_EQ(test, MLX5_GET(create_rmp_in, in, opcode),
			MLX5_CMD_OP_CREATE_RMP);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rmpc, rmpc, state), MLX5_RMPC_STATE_RDY);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, wq_type),
			MLX5_WQ_TYPE_LINKED_LIST_STRIDING_RQ);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, wq_type), 2);
	/* 64 strides: 6 - 9 in 4 bits */
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wqe_num_of_strides), 0xd);
	/* 256 B: 8 - 6 */
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wqe_stride_size), 2);
	/* a next segment and a data segment: 32 bytes */
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wq_stride), 5);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wq_sz), 8);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, pd), 0xabcde);
	KUNIT_EXPECT_EQ(test, MLX5_GET64(wq, wq, dbr_addr),
			0x123456789abcdef0ULL);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wq_pg_sz), 3);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, shampo_enable), 0);
}

/* 0x0..0x7: 2^9..2^16 strides; 0xa..0xf: 2^3..2^8 (extended range) */
static u32 decode_num_strides(void *wq)
{
	u32 v = MLX5_GET(wq, wq, log_wqe_num_of_strides);

	return v >= 0xa ? v - 0xa + MLX5_MPWQE_LOG_NUM_STRIDES_EXT_BASE :
			  v + MLX5_MPWQE_LOG_NUM_STRIDES_BASE;
}

static void cmd_rmp_stride_encodings(struct kunit *test)
{
	static const struct {
		u32 stride, strides;
		u32 f_strides, f_size;
	} t[] = {
		{ 64, 512, 0x0, 0 },		/* the bases */
		{ 64, 65536, 0x7, 0 },		/* 2^16 */
		{ 8192, 512, 0x0, 7 },		/* 2^13 */
		{ 256, 8, 0xa, 2 },		/* extended range: 2^3 */
		{ 256, 256, 0xf, 2 },		/* 2^8 */
		{ 2048, 1024, 0x1, 5 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct nvx_srq_shape s = shape_def;
		u32 *in = zin(test, NVX_MLX5_RMP_INLEN(0));
		void *wq = MLX5_ADDR_OF(create_rmp_in, in, ctx.wq);
		struct nvx_mlx5_geom g;

		s.stride_size = t[i].stride;
		s.strides_per_buf = t[i].strides;
		s.buf_size = t[i].stride * t[i].strides;
		s.bufs_per_pool = 4;
		geom_ok(test, &s, &caps_ext, &g);
		nvx_mlx5_build_rmp(in, &g, 1, 0, 0);
		KUNIT_EXPECT_EQ_MSG(test,
				    MLX5_GET(wq, wq, log_wqe_num_of_strides),
				    t[i].f_strides, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, MLX5_GET(wq, wq, log_wqe_stride_size),
				    t[i].f_size, "case %u", i);
		/* the PRM's decoding gives the strides back */
		KUNIT_EXPECT_EQ_MSG(test, decode_num_strides(wq),
				    ilog2(t[i].strides), "case %u", i);
	}
}

static void cmd_cq(struct kunit *test)
{
	u32 *in = zin(test, NVX_MLX5_CQ_INLEN(4));
	void *cqc = MLX5_ADDR_OF(create_cq_in, in, cq_context);
	struct nvx_mlx5_geom g;

	geom_ok(test, &shape_def, &caps_ext, &g);
	nvx_mlx5_build_cq(in, &g, 17, 0x42, 0xfeed000ULL, 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(create_cq_in, in, opcode),
			MLX5_CMD_OP_CREATE_CQ);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, cqe_sz), CQE_STRIDE_64);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, cqe_comp_en), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, log_cq_size), 13);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, uar_page), 0x42);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, c_eqn_or_apu_element), 17);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, log_page_size), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET64(cqc, cqc, dbr_addr), 0xfeed000ULL);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, cq_period), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(cqc, cqc, cq_max_count), 0);
}

static void cmd_rq(struct kunit *test)
{
	u32 *in = zin(test, MLX5_ST_SZ_BYTES(create_rq_in));
	void *rqc = MLX5_ADDR_OF(create_rq_in, in, ctx);
	void *wq = MLX5_ADDR_OF(rqc, rqc, wq);
	struct nvx_mlx5_geom g;

	geom_ok(test, &shape_def, &caps_ext, &g);
	nvx_mlx5_build_rq(in, &g, 0x77, 0x8899, 3);
	KUNIT_EXPECT_EQ(test, MLX5_GET(create_rq_in, in, opcode),
			MLX5_CMD_OP_CREATE_RQ);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, mem_rq_type),
			MLX5_RQC_MEM_RQ_TYPE_MEMORY_RQ_RMP);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, state), MLX5_RQC_STATE_RST);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, vsd), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, flush_in_error_en), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, user_index), 3);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, cqn), 0x77);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, rmpn), 0x8899);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, hairpin), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, ts_format),
			MLX5_TIMESTAMP_FORMAT_FREE_RUNNING);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, wq_type),
			MLX5_WQ_TYPE_LINKED_LIST_STRIDING_RQ);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wqe_num_of_strides), 0xd);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wqe_stride_size), 2);
	KUNIT_EXPECT_EQ(test, MLX5_GET(wq, wq, log_wq_sz), 8);
}

static void cmd_rq_ready(struct kunit *test)
{
	u32 *in = zin(test, MLX5_ST_SZ_BYTES(modify_rq_in));
	void *rqc = MLX5_ADDR_OF(modify_rq_in, in, ctx);

	nvx_mlx5_build_rq_ready(in, 0x5a5a5);
	KUNIT_EXPECT_EQ(test, MLX5_GET(modify_rq_in, in, opcode),
			MLX5_CMD_OP_MODIFY_RQ);
	KUNIT_EXPECT_EQ(test, MLX5_GET(modify_rq_in, in, rqn), 0x5a5a5);
	KUNIT_EXPECT_EQ(test, MLX5_GET(modify_rq_in, in, rq_state),
			MLX5_RQC_STATE_RST);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqc, rqc, state), MLX5_RQC_STATE_RDY);
}

static const u32 rqns[4] = { 0x100, 0x201, 0x302, 0x403 };

static void cmd_rqt(struct kunit *test)
{
	u32 *in = zin(test, NVX_MLX5_RQT_INLEN);
	void *rqtc = MLX5_ADDR_OF(create_rqt_in, in, rqt_context);
	u16 table[NVX_SRQ_RSS_ENTRIES];
	unsigned int i;

	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = (i * 3) % 4;
	nvx_mlx5_build_rqt(in, rqns, 4, table);
	KUNIT_EXPECT_EQ(test, MLX5_GET(create_rqt_in, in, opcode),
			MLX5_CMD_OP_CREATE_RQT);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rqt_max_size), 128);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rqt_actual_size), 128);
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		KUNIT_EXPECT_EQ_MSG(test, MLX5_GET(rqtc, rqtc, rq_num[i]),
				    rqns[(i * 3) % 4], "entry %u", i);
}

static void cmd_rqt_bad_entry(struct kunit *test)
{
	u32 *in = zin(test, NVX_MLX5_RQT_INLEN);
	void *rqtc = MLX5_ADDR_OF(create_rqt_in, in, rqt_context);
	u16 table[NVX_SRQ_RSS_ENTRIES] = { 0 };

	table[5] = 2;
	table[6] = 9;	/* no queue 9: queue 0 */
	nvx_mlx5_build_rqt(in, rqns, 4, table);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[5]), rqns[2]);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[6]), rqns[0]);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[127]), rqns[0]);
}

static void cmd_rqt_modify(struct kunit *test)
{
	u32 *in = zin(test, NVX_MLX5_RQT_MODIFY_INLEN);
	void *rqtc = MLX5_ADDR_OF(modify_rqt_in, in, ctx);
	u16 table[NVX_SRQ_RSS_ENTRIES];
	unsigned int i;

	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = i < 64 ? 1 : 3;
	KUNIT_ASSERT_EQ(test, nvx_mlx5_build_rqt_modify(in, 0xbeef, rqns, 4,
							table), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(modify_rqt_in, in, opcode),
			MLX5_CMD_OP_MODIFY_RQT);
	KUNIT_EXPECT_EQ(test, MLX5_GET(modify_rqt_in, in, rqtn), 0xbeef);
	KUNIT_EXPECT_EQ(test, MLX5_GET(modify_rqt_in, in, bitmask.rqn_list), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rqt_actual_size), 128);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[0]), rqns[1]);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[63]), rqns[1]);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[64]), rqns[3]);
	KUNIT_EXPECT_EQ(test, MLX5_GET(rqtc, rqtc, rq_num[127]), rqns[3]);
}

static void cmd_rqt_modify_refuses(struct kunit *test)
{
	u32 *in = zin(test, NVX_MLX5_RQT_MODIFY_INLEN);
	u16 table[NVX_SRQ_RSS_ENTRIES] = { 0 };
	unsigned int i;

	table[100] = 4;	/* 4 queues: 0..3 */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_build_rqt_modify(in, 1, rqns, 4, table),
			-EINVAL);
	for (i = 0; i < NVX_MLX5_RQT_MODIFY_INLEN / 4; i++)
		KUNIT_EXPECT_EQ(test, in[i], 0);
}

static void cmd_tir(struct kunit *test)
{
	u32 *in = zin(test, MLX5_ST_SZ_BYTES(create_tir_in));
	void *tirc = MLX5_ADDR_OF(create_tir_in, in, ctx);
	void *hf = MLX5_ADDR_OF(tirc, tirc, rx_hash_field_selector_outer);
	void *hi = MLX5_ADDR_OF(tirc, tirc, rx_hash_field_selector_inner);
	u8 key[40];
	unsigned int i;

	for (i = 0; i < sizeof(key); i++)
		key[i] = i * 7 + 1;
	nvx_mlx5_build_tir(in, 0x333, 0x4444, key);
	KUNIT_EXPECT_EQ(test, MLX5_GET(create_tir_in, in, opcode),
			MLX5_CMD_OP_CREATE_TIR);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, disp_type),
			MLX5_TIRC_DISP_TYPE_INDIRECT);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, indirect_table), 0x333);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, inline_rqn), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, transport_domain), 0x4444);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, rx_hash_fn),
			MLX5_RX_HASH_FN_TOEPLITZ);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, rx_hash_symmetric), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, packet_merge_mask), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(tirc, tirc, tls_en), 0);
	KUNIT_EXPECT_MEMEQ(test, MLX5_ADDR_OF(tirc, tirc, rx_hash_toeplitz_key),
			   key, sizeof(key));
	KUNIT_EXPECT_EQ(test, MLX5_GET(rx_hash_field_select, hf, l3_prot_type),
			MLX5_L3_PROT_TYPE_IPV4);
	KUNIT_EXPECT_EQ(test,
			MLX5_GET(rx_hash_field_select, hf, selected_fields),
			MLX5_HASH_FIELD_SEL_SRC_IP | MLX5_HASH_FIELD_SEL_DST_IP);
	KUNIT_EXPECT_EQ(test,
			MLX5_GET(rx_hash_field_select, hi, selected_fields), 0);
}

static const u8 mac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

static void rule_mac(struct kunit *test)
{
	struct mlx5_flow_spec *spec = zin(test, sizeof(*spec));
	void *c = MLX5_ADDR_OF(fte_match_param, spec->match_criteria,
			       outer_headers);
	void *v = MLX5_ADDR_OF(fte_match_param, spec->match_value,
			       outer_headers);
	u8 *dmac_mask;

	nvx_mlx5_build_match(spec, mac, 0);
	KUNIT_EXPECT_EQ(test, spec->match_criteria_enable,
			MLX5_MATCH_OUTER_HEADERS);
	dmac_mask = MLX5_ADDR_OF(fte_match_set_lyr_2_4, c, dmac_47_16);
	KUNIT_EXPECT_TRUE(test, is_broadcast_ether_addr(dmac_mask));
	KUNIT_EXPECT_MEMEQ(test,
			   MLX5_ADDR_OF(fte_match_set_lyr_2_4, v, dmac_47_16),
			   mac, ETH_ALEN);
	KUNIT_EXPECT_EQ(test, MLX5_GET(fte_match_set_lyr_2_4, c, ethertype), 0);
	KUNIT_EXPECT_EQ(test,
			MLX5_GET(fte_match_set_lyr_2_4, c,
				 dst_ipv4_dst_ipv6.ipv4_layout.ipv4), 0);
	KUNIT_EXPECT_EQ(test, MLX5_GET(fte_match_set_lyr_2_4, c, smac_47_16),
			0);
	/* nothing outside the outer headers */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(MLX5_ADDR_OF(fte_match_param,
							 spec->match_criteria,
							 misc_parameters), 0,
					    MLX5_ST_SZ_BYTES(fte_match_set_misc)));
}

static void rule_mac_ipv4(struct kunit *test)
{
	struct mlx5_flow_spec *spec = zin(test, sizeof(*spec));
	void *c = MLX5_ADDR_OF(fte_match_param, spec->match_criteria,
			       outer_headers);
	void *v = MLX5_ADDR_OF(fte_match_param, spec->match_value,
			       outer_headers);

	nvx_mlx5_build_match(spec, mac, htonl(0x0a000102));	/* 10.0.1.2 */
	KUNIT_EXPECT_EQ(test, MLX5_GET(fte_match_set_lyr_2_4, c, ethertype),
			0xffff);
	KUNIT_EXPECT_EQ(test, MLX5_GET(fte_match_set_lyr_2_4, v, ethertype),
			ETH_P_IP);
	KUNIT_EXPECT_EQ(test,
			MLX5_GET(fte_match_set_lyr_2_4, c,
				 dst_ipv4_dst_ipv6.ipv4_layout.ipv4),
			0xffffffff);
	KUNIT_EXPECT_EQ(test,
			MLX5_GET(fte_match_set_lyr_2_4, v,
				 dst_ipv4_dst_ipv6.ipv4_layout.ipv4),
			0x0a000102);
	KUNIT_EXPECT_EQ(test,
			MLX5_GET(fte_match_set_lyr_2_4, c,
				 src_ipv4_src_ipv6.ipv4_layout.ipv4), 0);
	KUNIT_EXPECT_MEMEQ(test,
			   MLX5_ADDR_OF(fte_match_set_lyr_2_4, v, dmac_47_16),
			   mac, ETH_ALEN);
}

static const u8 port_mac[ETH_ALEN] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };

/* Each kind of set's rule: its MAC, its address, its table. */
static void rule_of_each_match(struct kunit *test)
{
	struct nvx_srq_match m = { .ip4 = htonl(0x0a000102) };
	struct nvx_mlx5_rule r;

	ether_addr_copy(m.mac, mac);
	nvx_mlx5_rule_of(&m, port_mac, &r);	/* flags 0: no rule */
	KUNIT_EXPECT_TRUE(test, r.catch_all);
	KUNIT_EXPECT_MEMEQ(test, r.dmac, port_mac, ETH_ALEN);
	KUNIT_EXPECT_FALSE(test, r.dst_ip);

	m.flags = NVX_SRQ_MATCH_MAC;
	nvx_mlx5_rule_of(&m, port_mac, &r);
	KUNIT_EXPECT_FALSE(test, r.catch_all);
	KUNIT_EXPECT_MEMEQ(test, r.dmac, mac, ETH_ALEN);
	KUNIT_EXPECT_FALSE(test, r.dst_ip);

	m.flags = NVX_SRQ_MATCH_IP4;
	nvx_mlx5_rule_of(&m, port_mac, &r);
	KUNIT_EXPECT_FALSE(test, r.catch_all);
	KUNIT_EXPECT_MEMEQ(test, r.dmac, port_mac, ETH_ALEN);
	KUNIT_EXPECT_EQ(test, ntohl(r.dst_ip), 0x0a000102);

	m.flags = NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4;
	nvx_mlx5_rule_of(&m, port_mac, &r);
	KUNIT_EXPECT_FALSE(test, r.catch_all);
	KUNIT_EXPECT_MEMEQ(test, r.dmac, mac, ETH_ALEN);
	KUNIT_EXPECT_EQ(test, ntohl(r.dst_ip), 0x0a000102);
}

/* Which two sets a port takes together: never two for one frame. */
static void rules_overlap_pairs(struct kunit *test)
{
	static const struct {
		u32 fa, ipa, fb, ipb;
		bool same_mac, overlap;
	} pairs[] = {
		/* one catch-all per port; it never overlaps a rule */
		{ 0, 0, 0, 0, true, true },
		{ 0, 0, NVX_SRQ_MATCH_IP4, 1, true, false },
		{ 0, 0, NVX_SRQ_MATCH_MAC, 0, true, false },
		/* IPv4 on the port's MAC: one set per address */
		{ NVX_SRQ_MATCH_IP4, 1, NVX_SRQ_MATCH_IP4, 2, true, false },
		{ NVX_SRQ_MATCH_IP4, 1, NVX_SRQ_MATCH_IP4, 1, true, true },
		/* a MAC-only rule takes every frame to its MAC */
		{ NVX_SRQ_MATCH_MAC, 0, NVX_SRQ_MATCH_MAC, 0, true, true },
		{ NVX_SRQ_MATCH_MAC, 0, NVX_SRQ_MATCH_MAC, 0, false, false },
		{ NVX_SRQ_MATCH_MAC, 0, NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4,
		  1, true, true },
		{ NVX_SRQ_MATCH_MAC, 0, NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4,
		  1, false, false },
		/* the same address on two MACs: two destinations */
		{ NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4, 1,
		  NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4, 1, false, false },
	};
	static const u8 other[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x77 };
	struct nvx_srq_match a = {}, b = {};
	struct nvx_mlx5_rule ra, rb;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		a.flags = pairs[i].fa;
		a.ip4 = htonl(0x0a000100 + pairs[i].ipa);
		ether_addr_copy(a.mac, mac);
		b.flags = pairs[i].fb;
		b.ip4 = htonl(0x0a000100 + pairs[i].ipb);
		ether_addr_copy(b.mac, pairs[i].same_mac ? mac : other);
		nvx_mlx5_rule_of(&a, port_mac, &ra);
		nvx_mlx5_rule_of(&b, port_mac, &rb);
		KUNIT_EXPECT_EQ_MSG(test, nvx_mlx5_rules_overlap(&ra, &rb),
				    pairs[i].overlap, "pair %u", i);
		KUNIT_EXPECT_EQ_MSG(test, nvx_mlx5_rules_overlap(&rb, &ra),
				    pairs[i].overlap, "pair %u reversed", i);
	}
	/* an IPv4 rule and a MAC-only rule on the port's own MAC */
	a.flags = NVX_SRQ_MATCH_IP4;
	b.flags = NVX_SRQ_MATCH_MAC;
	ether_addr_copy(b.mac, port_mac);
	nvx_mlx5_rule_of(&a, port_mac, &ra);
	nvx_mlx5_rule_of(&b, port_mac, &rb);
	KUNIT_EXPECT_TRUE(test, nvx_mlx5_rules_overlap(&ra, &rb));
	/* MAC and IPv4 naming the port's MAC, and IPv4 alone: one rule */
	a.ip4 = htonl(0x0a000101);
	b.flags = NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4;
	b.ip4 = a.ip4;
	nvx_mlx5_rule_of(&a, port_mac, &ra);
	nvx_mlx5_rule_of(&b, port_mac, &rb);
	KUNIT_EXPECT_TRUE(test, nvx_mlx5_rules_overlap(&ra, &rb));
	b.ip4 = htonl(0x0a000102);
	nvx_mlx5_rule_of(&b, port_mac, &rb);
	KUNIT_EXPECT_FALSE(test, nvx_mlx5_rules_overlap(&ra, &rb));
}

static void wqe_layout(struct kunit *test)
{
	struct nvx_mlx5_wqe w;

	memset(&w, 0xff, sizeof(w));
	nvx_mlx5_wqe_link(&w, 0x1234);
	nvx_mlx5_wqe_fill(&w, 0x1122334455667000ULL, 0xabcd12, 16384);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(w.next.next_wqe_index), 0x1234);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(w.data.byte_count), 16384);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(w.data.lkey), 0xabcd12);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(w.data.addr), 0x1122334455667000ULL);
	/* the data segment is the WQE's second 16 bytes, as in mlx5e's */
	KUNIT_EXPECT_EQ(test, offsetof(struct nvx_mlx5_wqe, data), 16);
	/* filling keeps the link; linking keeps the data */
	nvx_mlx5_wqe_link(&w, 7);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(w.data.addr), 0x1122334455667000ULL);
	nvx_mlx5_wqe_fill(&w, 0x2000, 1, 2048);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(w.next.next_wqe_index), 7);
}

static void cmd_paos(struct kunit *test)
{
	u32 *in = zin(test, MLX5_ST_SZ_BYTES(paos_reg));

	nvx_mlx5_build_paos(in, true);
	KUNIT_EXPECT_EQ(test, MLX5_GET(paos_reg, in, local_port), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(paos_reg, in, admin_status),
			MLX5_PORT_UP);
	KUNIT_EXPECT_EQ(test, MLX5_GET(paos_reg, in, ase), 1);
	KUNIT_EXPECT_EQ(test, MLX5_GET(paos_reg, in, swid), 0);
	memset(in, 0, MLX5_ST_SZ_BYTES(paos_reg));
	nvx_mlx5_build_paos(in, false);
	KUNIT_EXPECT_EQ(test, MLX5_GET(paos_reg, in, admin_status),
			MLX5_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, MLX5_GET(paos_reg, in, ase), 1);
}

/* ---------------------------------------------------------------- CQEs */

static void mk_cqe(struct mlx5_cqe64 *c, u8 opcode, u8 owner, u16 wqe_id,
		   u16 stride, u16 strides, bool filler, u16 len)
{
	struct mpwrq_cqe_bc *bc = (struct mpwrq_cqe_bc *)&c->byte_cnt;

	memset(c, 0, sizeof(*c));
	c->wqe_id = cpu_to_be16(wqe_id);
	c->wqe_counter = cpu_to_be16(stride);
	bc->filler_consumed_strides = cpu_to_be16((filler ? 0x8000 : 0) |
						  strides);
	bc->byte_cnt = cpu_to_be16(len);
	c->op_own = opcode << 4 | owner;
}

static void cqe_frame(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 5, 3, 1, false, 60);
	/* mainline's accessors read what the test wrote */
	KUNIT_EXPECT_EQ(test, mpwrq_get_cqe_byte_cnt(&c), 60);
	KUNIT_EXPECT_EQ(test, mpwrq_get_cqe_consumed_strides(&c), 1);
	KUNIT_EXPECT_EQ(test, mpwrq_get_cqe_stride_index(&c), 3);
	KUNIT_EXPECT_FALSE(test, mpwrq_is_filler_cqe(&c));
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.slot, 5);
	KUNIT_EXPECT_EQ(test, rx.stride, 3);
	KUNIT_EXPECT_EQ(test, rx.strides, 1);
	KUNIT_EXPECT_EQ(test, rx.len, 60);
	KUNIT_EXPECT_EQ(test, rx.flags, 0);
}

static void cqe_frame_of_many_strides(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 10, 6, false, 1514);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.stride, 10);
	KUNIT_EXPECT_EQ(test, rx.strides, 6);
	KUNIT_EXPECT_EQ(test, rx.len, 1514);
	KUNIT_EXPECT_EQ(test, rx.flags, 0);
	/* the last strides of a WQE */
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 58, 6, false, 1514);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.stride + rx.strides, 64);
}

static void cqe_filler(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 7, 60, 4, true, 0);
	KUNIT_EXPECT_TRUE(test, mpwrq_is_filler_cqe(&c));
	KUNIT_EXPECT_EQ(test, mpwrq_get_cqe_consumed_strides(&c), 4);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.slot, 7);
	KUNIT_EXPECT_EQ(test, rx.stride, 60);
	KUNIT_EXPECT_EQ(test, rx.strides, 4);
	KUNIT_EXPECT_EQ(test, rx.len, 0);
	KUNIT_EXPECT_EQ(test, rx.flags, NVX_SRQ_CQE_FILLER);
}

static void cqe_truncated(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 1, 0, 2, false, 600);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.len, 512);
	KUNIT_EXPECT_EQ(test, rx.flags, NVX_SRQ_CQE_TRUNCATED);
	/* exactly its strides: whole */
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 1, 0, 2, false, 512);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.len, 512);
	KUNIT_EXPECT_EQ(test, rx.flags, 0);
}

static void cqe_owner_bit(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;
	u32 wrap;

	geom_ok(test, &shape_def, &caps_ext, &g);
	wrap = 1U << g.log_cq_sz;
	/* first pass: owner 0 is software's, owner 1 the device's */
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 1, 0, 0, 1, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, wrap - 1, g.log_cq_sz,
						 &g, &rx), -EAGAIN);
	/* second pass: the other way round */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, wrap, g.log_cq_sz, &g,
						 &rx), 0);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 0, 1, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, wrap + 5, g.log_cq_sz,
						 &g, &rx), -EAGAIN);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 2 * wrap, g.log_cq_sz,
						 &g, &rx), 0);
}

static void cqe_initial_is_not_ours(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	/* how a CQ is initialised: invalid opcode, owner 1 (mlx5e: 0xf1) */
	memset(&c, 0, sizeof(c));
	c.op_own = 0xf1;
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 1U << g.log_cq_sz,
						 g.log_cq_sz, &g, &rx),
			-EAGAIN);
}

static void cqe_error(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	/* an error CQE still names the strides it consumed (mlx5e frees them) */
	mk_cqe(&c, MLX5_CQE_RESP_ERR, 0, 4, 8, 2, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EIO);
	KUNIT_EXPECT_EQ(test, rx.slot, 4);
	KUNIT_EXPECT_EQ(test, rx.stride, 8);
	KUNIT_EXPECT_EQ(test, rx.strides, 2);
	KUNIT_EXPECT_EQ(test, rx.len, 0);
	/* strides past the WQE: none to count */
	mk_cqe(&c, MLX5_CQE_RESP_ERR, 0, 4, 63, 2, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EIO);
	KUNIT_EXPECT_EQ(test, rx.strides, 0);
}

static void cqe_not_a_receive(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	/* send completions, good and in error */
	mk_cqe(&c, MLX5_CQE_REQ, 0, 0, 0, 1, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
	mk_cqe(&c, MLX5_CQE_REQ_ERR, 0, 0, 0, 1, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
	/* a compressed CQE (format bits 3:2), never enabled */
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 0, 1, false, 64);
	c.op_own |= MLX5_COMPRESSED << 2;
	KUNIT_EXPECT_EQ(test, mlx5_get_cqe_format(&c), MLX5_COMPRESSED);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
}

static void cqe_strides_outside_wqe(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 64, 1, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 60, 5, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 0, 0, false, 64);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, 0, 0x7fff, true, 0);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			-EPROTO);
}

static void cqe_offload_bits_ignored(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 9, 2, 1, false, 98);
	c.check_sum = cpu_to_be16(0xbeef);
	c.l4_l3_hdr_type = 0x2a | 0x1;			/* UDP, IPv4, VLAN */
	c.hds_ip_ext = 0x6;				/* l3/l4 checksum ok */
	c.srqn = cpu_to_be32(3 << 24 | 1);		/* lro_num_seg 3 */
	c.rss_hash_result = cpu_to_be32(0x12345678);
	c.vlan_info = cpu_to_be16(100);
	c.lro.tcppsh_abort_dupack = 0xff;
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.slot, 9);
	KUNIT_EXPECT_EQ(test, rx.stride, 2);
	KUNIT_EXPECT_EQ(test, rx.strides, 1);
	KUNIT_EXPECT_EQ(test, rx.len, 98);
	KUNIT_EXPECT_EQ(test, rx.flags, 0);
}

static void cqe_slot_within_ring(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;

	geom_ok(test, &shape_def, &caps_ext, &g);
	/* wqe_id is 16 bits; the list has 256 WQEs */
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 256 + 3, 0, 1, false, 64);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, 0, g.log_cq_sz, &g, &rx),
			0);
	KUNIT_EXPECT_EQ(test, rx.slot, 3);
}

/* ---------------------------------------------------------- RMP list */

static void wq_new(struct kunit *test, struct nvx_mlx5_wq *wq, u8 log_sz,
		   u32 strides)
{
	wq->log_sz = log_sz;
	wq->strides = strides;
	wq->next = zin(test, sizeof(u16) << log_sz);
	wq->posted = zin(test, sizeof(u8) << log_sz);
	wq->buf = zin(test, sizeof(u32) << log_sz);
	wq->used = zin(test, sizeof(u32) << log_sz);
	nvx_mlx5_wq_init(wq);
}

/* Consume all of @slot's strides: it must retire, linked after the tail. */
static void retire(struct kunit *test, struct nvx_mlx5_wq *wq, u32 slot)
{
	u16 tail = wq->tail, link = 0xffff;
	u32 buf;

	KUNIT_ASSERT_EQ(test, nvx_mlx5_wq_consume(wq, slot,
						  wq->strides - wq->used[slot],
						  &buf, &link), 1);
	KUNIT_EXPECT_EQ(test, link, tail);
	KUNIT_EXPECT_EQ(test, wq->next[tail], slot);
	KUNIT_EXPECT_EQ(test, wq->tail, slot);
}

static void wq_init_links(struct kunit *test)
{
	struct nvx_mlx5_wq wq;
	unsigned int i;

	wq_new(test, &wq, 3, 64);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, wq.next[i], (i + 1) % 8);
	KUNIT_EXPECT_EQ(test, wq.head, 0);
	KUNIT_EXPECT_EQ(test, wq.tail, 7);
	/* one WQE always stays free */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 7);
}

static void wq_post_until_full(struct kunit *test)
{
	struct nvx_mlx5_wq wq;
	unsigned int i;

	wq_new(test, &wq, 2, 64);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_post(&wq, 100 + i), i);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 0);
	KUNIT_EXPECT_EQ(test, wq.ctr, 3);
	KUNIT_EXPECT_EQ(test, wq.head, wq.tail);
	KUNIT_EXPECT_EQ(test, wq.buf[2], 102);
	KUNIT_EXPECT_EQ(test, wq.posted[2], 1);
	KUNIT_EXPECT_EQ(test, wq.posted[3], 0);
}

static void wq_retire_and_repost(struct kunit *test)
{
	struct nvx_mlx5_wq wq;
	u32 buf;
	u16 link;

	wq_new(test, &wq, 2, 64);
	nvx_mlx5_wq_post(&wq, 7);
	nvx_mlx5_wq_post(&wq, 8);
	/* slot 0 filled in three completions: 10 + 50 + a filler of 4 */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 10, &buf, &link), 0);
	KUNIT_EXPECT_EQ(test, buf, 7);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 50, &buf, &link), 0);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 1);
	retire(test, &wq, 0);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 2);
	/* the list goes on: 2, 3, then the retired 0 */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_post(&wq, 9), 2);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_post(&wq, 10), 3);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 0);
	retire(test, &wq, 1);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_post(&wq, 11), 0);
	KUNIT_EXPECT_EQ(test, wq.buf[0], 11);
	KUNIT_EXPECT_EQ(test, wq.used[0], 0);
	KUNIT_EXPECT_EQ(test, wq.ctr, 5);
}

/*
 * Several RQs share an RMP: a quiet queue keeps a half-filled WQE for as
 * long as it likes while the others retire and repost around it. A ring
 * retiring in order would stall here; the list never does.
 */
static void wq_quiet_queue_does_not_stall(struct kunit *test)
{
	struct nvx_mlx5_wq wq;
	unsigned int round;
	u32 buf, slot;
	u16 link;

	wq_new(test, &wq, 3, 16);
	for (slot = 0; slot < 7; slot++)
		nvx_mlx5_wq_post(&wq, slot);
	/* the quiet queue's WQE */
	KUNIT_ASSERT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 3, &buf, &link), 0);
	for (round = 0; round < 1000; round++) {
		/* another queue's WQE retires, its buffer comes back */
		for (slot = 1; slot < 8 && !wq.posted[slot]; slot++)
			;
		KUNIT_ASSERT_LT(test, slot, 8);
		buf = wq.buf[slot];
		retire(test, &wq, slot);
		KUNIT_ASSERT_EQ(test, nvx_mlx5_wq_room(&wq), 1);
		nvx_mlx5_wq_post(&wq, buf);
	}
	KUNIT_EXPECT_EQ(test, wq.posted[0], 1);
	KUNIT_EXPECT_EQ(test, wq.used[0], 3);
	KUNIT_EXPECT_EQ(test, wq.buf[0], 0);
	KUNIT_EXPECT_EQ(test, wq.cur, 7);
	/* the doorbell counter is 16 bits, posts go on past it */
	KUNIT_EXPECT_EQ(test, wq.ctr, (u16)(7 + 1000));
}

static void wq_refuses_bad_slots(struct kunit *test)
{
	struct nvx_mlx5_wq wq;
	u32 buf = 0xdead;
	u16 link = 0xbeef;

	wq_new(test, &wq, 2, 64);
	/* nothing posted */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 1, &buf, &link),
			-EPROTO);
	nvx_mlx5_wq_post(&wq, 5);
	/* slot 1 not posted; a slot past the list */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 1, 1, &buf, &link),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 4, 1, &buf, &link),
			-EPROTO);
	/* more strides than the WQE has left: nothing counted */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 60, &buf, &link), 0);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 5, &buf, &link),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, wq.used[0], 60);
	KUNIT_EXPECT_EQ(test, buf, 5);
	KUNIT_EXPECT_EQ(test, link, 0xbeef);
	/* a retired WQE is not posted any more */
	retire(test, &wq, 0);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, 0, 1, &buf, &link),
			-EPROTO);
}

/* CQEs as the device would write them, through parse and the list. */
static void rx_path_end_to_end(struct kunit *test)
{
	struct mlx5_cqe64 c;
	struct nvx_mlx5_geom g;
	struct nvx_mlx5_rx rx;
	struct nvx_mlx5_wq wq;
	u32 buf, cc = 0, total = 0, i;
	u16 link;
	int ret;

	geom_ok(test, &shape_def, &caps_ext, &g);
	wq_new(test, &wq, g.log_wq_sz, g.strides);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 255);
	nvx_mlx5_wq_post(&wq, 40);
	nvx_mlx5_wq_post(&wq, 41);
	/* 63 frames of one stride, then a filler of one, in slot 0 */
	for (i = 0; i < 64; i++) {
		mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 0, i, 1, i == 63,
		       i == 63 ? 0 : 64);
		KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, cc++, g.log_cq_sz,
							 &g, &rx), 0);
		ret = nvx_mlx5_wq_consume(&wq, rx.slot, rx.strides, &buf,
					  &link);
		KUNIT_ASSERT_GE(test, ret, 0);
		KUNIT_EXPECT_EQ(test, buf, 40);
		total += ret;
	}
	KUNIT_EXPECT_EQ(test, rx.flags, NVX_SRQ_CQE_FILLER);
	KUNIT_EXPECT_EQ(test, total, 1);
	KUNIT_EXPECT_EQ(test, link, 255);	/* linked after the first tail */
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_room(&wq), 254);
	/* the next frame lands at stride 0 of slot 1: buffer 41 */
	mk_cqe(&c, MLX5_CQE_RESP_SEND, 0, 1, 0, 6, false, 1400);
	KUNIT_ASSERT_EQ(test, nvx_mlx5_cqe_parse(&c, cc++, g.log_cq_sz, &g,
						 &rx), 0);
	KUNIT_EXPECT_EQ(test, nvx_mlx5_wq_consume(&wq, rx.slot, rx.strides,
						  &buf, &link), 0);
	KUNIT_EXPECT_EQ(test, buf, 41);
	KUNIT_EXPECT_EQ(test, rx.len, 1400);
}

static struct kunit_case nvx_mlx5_geom_cases[] = {
	KUNIT_CASE(geom_junction),
	KUNIT_CASE(geom_64_strides_need_ext_range),
	KUNIT_CASE(geom_512_strides_without_ext_range),
	KUNIT_CASE(geom_no_striding_rq),
	KUNIT_CASE(geom_sizes_not_powers_of_two),
	KUNIT_CASE(geom_buffer_is_not_its_strides),
	KUNIT_CASE(geom_empty_shape),
	KUNIT_CASE(geom_stride_outside_caps),
	KUNIT_CASE(geom_strides_outside_range),
	KUNIT_CASE(geom_rings_outside_caps),
	KUNIT_CASE(geom_objects_outside_caps),
	KUNIT_CASE(geom_timestamp_format),
	{}
};

static struct kunit_case nvx_mlx5_cmd_cases[] = {
	KUNIT_CASE(cmd_mkey),
	KUNIT_CASE(cmd_rmp),
	KUNIT_CASE(cmd_rmp_stride_encodings),
	KUNIT_CASE(cmd_cq),
	KUNIT_CASE(cmd_rq),
	KUNIT_CASE(cmd_rq_ready),
	KUNIT_CASE(cmd_rqt),
	KUNIT_CASE(cmd_rqt_bad_entry),
	KUNIT_CASE(cmd_rqt_modify),
	KUNIT_CASE(cmd_rqt_modify_refuses),
	KUNIT_CASE(cmd_tir),
	KUNIT_CASE(rule_mac),
	KUNIT_CASE(rule_mac_ipv4),
	KUNIT_CASE(rule_of_each_match),
	KUNIT_CASE(rules_overlap_pairs),
	KUNIT_CASE(wqe_layout),
	KUNIT_CASE(cmd_paos),
	{}
};

static struct kunit_case nvx_mlx5_rx_cases[] = {
	KUNIT_CASE(cqe_frame),
	KUNIT_CASE(cqe_frame_of_many_strides),
	KUNIT_CASE(cqe_filler),
	KUNIT_CASE(cqe_truncated),
	KUNIT_CASE(cqe_owner_bit),
	KUNIT_CASE(cqe_initial_is_not_ours),
	KUNIT_CASE(cqe_error),
	KUNIT_CASE(cqe_not_a_receive),
	KUNIT_CASE(cqe_strides_outside_wqe),
	KUNIT_CASE(cqe_offload_bits_ignored),
	KUNIT_CASE(cqe_slot_within_ring),
	KUNIT_CASE(wq_init_links),
	KUNIT_CASE(wq_post_until_full),
	KUNIT_CASE(wq_retire_and_repost),
	KUNIT_CASE(wq_quiet_queue_does_not_stall),
	KUNIT_CASE(wq_refuses_bad_slots),
	KUNIT_CASE(rx_path_end_to_end),
	{}
};

static struct kunit_suite nvx_mlx5_geom_suite = {
	.name = "nvx_mlx5_geom",
	.test_cases = nvx_mlx5_geom_cases,
};

static struct kunit_suite nvx_mlx5_cmd_suite = {
	.name = "nvx_mlx5_cmd",
	.test_cases = nvx_mlx5_cmd_cases,
};

static struct kunit_suite nvx_mlx5_rx_suite = {
	.name = "nvx_mlx5_rx",
	.test_cases = nvx_mlx5_rx_cases,
};

kunit_test_suites(&nvx_mlx5_geom_suite, &nvx_mlx5_cmd_suite,
		  &nvx_mlx5_rx_suite);

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of nvx's mlx5 shared-RX backend");
MODULE_LICENSE("GPL");
