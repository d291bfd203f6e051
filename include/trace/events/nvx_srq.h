/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx tracepoints of shared RX queues (drivers/net/mlx5-shared-rq/srq.c
 * defines them), in events/nvx/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvx

#if !defined(_TRACE_NVX_SRQ_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NVX_SRQ_H

#include <linux/tracepoint.h>

TRACE_EVENT(nvx_srq_refill,
	TP_PROTO(u32 pool, u32 returned, u32 posted_strides),
	TP_ARGS(pool, returned, posted_strides),
	TP_STRUCT__entry(
		__field(u32, pool)
		__field(u32, returned)
		__field(u32, posted_strides)
	),
	TP_fast_assign(
		__entry->pool = pool;
		__entry->returned = returned;
		__entry->posted_strides = posted_strides;
	),
	TP_printk("pool=%u returned=%u posted_strides=%u", __entry->pool,
		  __entry->returned, __entry->posted_strides)
);

TRACE_EVENT(nvx_srq_buf_return,
	TP_PROTO(u32 pool, u32 buf),
	TP_ARGS(pool, buf),
	TP_STRUCT__entry(
		__field(u32, pool)
		__field(u32, buf)
	),
	TP_fast_assign(
		__entry->pool = pool;
		__entry->buf = buf;
	),
	TP_printk("pool=%u buf=%u", __entry->pool, __entry->buf)
);

/* a frame written into @strides strides of buffer @buf, from @stride */
TRACE_EVENT(nvx_srq_rx,
	TP_PROTO(u32 queue, u32 buf, u32 stride, u32 strides, u32 len),
	TP_ARGS(queue, buf, stride, strides, len),
	TP_STRUCT__entry(
		__field(u32, queue)
		__field(u32, buf)
		__field(u32, stride)
		__field(u32, strides)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->queue = queue;
		__entry->buf = buf;
		__entry->stride = stride;
		__entry->strides = strides;
		__entry->len = len;
	),
	TP_printk("queue=%u buf=%u stride=%u strides=%u len=%u",
		  __entry->queue, __entry->buf, __entry->stride,
		  __entry->strides, __entry->len)
);

TRACE_EVENT(nvx_srq_filler,
	TP_PROTO(u32 queue, u32 buf, u32 stride, u32 strides),
	TP_ARGS(queue, buf, stride, strides),
	TP_STRUCT__entry(
		__field(u32, queue)
		__field(u32, buf)
		__field(u32, stride)
		__field(u32, strides)
	),
	TP_fast_assign(
		__entry->queue = queue;
		__entry->buf = buf;
		__entry->stride = stride;
		__entry->strides = strides;
	),
	TP_printk("queue=%u buf=%u stride=%u strides=%u", __entry->queue,
		  __entry->buf, __entry->stride, __entry->strides)
);

TRACE_EVENT(nvx_srq_drop,
	TP_PROTO(u32 queue, int reason, u32 len),
	TP_ARGS(queue, reason, len),
	TP_STRUCT__entry(
		__field(u32, queue)
		__field(int, reason)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->queue = queue;
		__entry->reason = reason;
		__entry->len = len;
	),
	TP_printk("queue=%u reason=%s len=%u", __entry->queue,
		  __entry->reason ? "cq_full" : "no_buf", __entry->len)
);

#endif /* _TRACE_NVX_SRQ_H */

#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nvx_srq

/* This part must be outside protection */
#include <trace/define_trace.h>
