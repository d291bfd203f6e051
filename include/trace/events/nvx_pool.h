/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx tracepoints of the memory pool and grants (kernel/nvx/pool.c
 * defines them), in events/nvx/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvx

#if !defined(_TRACE_NVX_POOL_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NVX_POOL_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(nvx_pool_resize_class,
	TP_PROTO(u32 node, u64 bytes, u64 done),
	TP_ARGS(node, bytes, done),
	TP_STRUCT__entry(
		__field(u32, node)
		__field(u64, bytes)
		__field(u64, done)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->bytes = bytes;
		__entry->done = done;
	),
	TP_printk("node=%d bytes=%llu done=%llu", (int)__entry->node,
		  __entry->bytes, __entry->done)
);

DEFINE_EVENT(nvx_pool_resize_class, nvx_pool_grow,
	TP_PROTO(u32 node, u64 bytes, u64 done),
	TP_ARGS(node, bytes, done));

DEFINE_EVENT(nvx_pool_resize_class, nvx_pool_shrink,
	TP_PROTO(u32 node, u64 bytes, u64 done),
	TP_ARGS(node, bytes, done));

TRACE_EVENT(nvx_grant,
	TP_PROTO(int node, u64 bytes, u64 sync_zeroed, u64 ns),
	TP_ARGS(node, bytes, sync_zeroed, ns),
	TP_STRUCT__entry(
		__field(int, node)
		__field(u64, bytes)
		__field(u64, sync_zeroed)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->bytes = bytes;
		__entry->sync_zeroed = sync_zeroed;
		__entry->ns = ns;
	),
	TP_printk("node=%d bytes=%llu sync_zeroed=%llu ns=%llu", __entry->node,
		  __entry->bytes, __entry->sync_zeroed, __entry->ns)
);

TRACE_EVENT(nvx_grant_release,
	TP_PROTO(int node, u64 bytes),
	TP_ARGS(node, bytes),
	TP_STRUCT__entry(
		__field(int, node)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->bytes = bytes;
	),
	TP_printk("node=%d bytes=%llu", __entry->node, __entry->bytes)
);

TRACE_EVENT(nvx_scrub,
	TP_PROTO(int node, u64 bytes, u64 ns),
	TP_ARGS(node, bytes, ns),
	TP_STRUCT__entry(
		__field(int, node)
		__field(u64, bytes)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->bytes = bytes;
		__entry->ns = ns;
	),
	TP_printk("node=%d bytes=%llu ns=%llu", __entry->node,
		  __entry->bytes, __entry->ns)
);

#endif /* _TRACE_NVX_POOL_H */

#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nvx_pool

/* This part must be outside protection */
#include <trace/define_trace.h>
