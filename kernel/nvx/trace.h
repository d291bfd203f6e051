/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx tracepoints: events/nvx/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvx

#if !defined(_NVX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _NVX_TRACE_H

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
	TP_PROTO(int node, u64 bytes, u64 sync_zeroed),
	TP_ARGS(node, bytes, sync_zeroed),
	TP_STRUCT__entry(
		__field(int, node)
		__field(u64, bytes)
		__field(u64, sync_zeroed)
	),
	TP_fast_assign(
		__entry->node = node;
		__entry->bytes = bytes;
		__entry->sync_zeroed = sync_zeroed;
	),
	TP_printk("node=%d bytes=%llu sync_zeroed=%llu", __entry->node,
		  __entry->bytes, __entry->sync_zeroed)
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

TRACE_EVENT(nvx_uvm_doorbell,
	TP_PROTO(u32 vm, u32 nr),
	TP_ARGS(vm, nr),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(u32, nr)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->nr = nr;
	),
	TP_printk("vm=%u new=%u", __entry->vm, __entry->nr)
);

TRACE_EVENT(nvx_uvm_msg_in,
	TP_PROTO(u32 vm, u32 tid, u16 type, u32 tag, u32 bulk),
	TP_ARGS(vm, tid, type, tag, bulk),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(u32, tid)
		__field(u16, type)
		__field(u32, tag)
		__field(u32, bulk)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->tid = tid;
		__entry->type = type;
		__entry->tag = tag;
		__entry->bulk = bulk;
	),
	TP_printk("vm=%u tid=%u type=%u tag=%u bulk=%u", __entry->vm,
		  __entry->tid, __entry->type, __entry->tag, __entry->bulk)
);

TRACE_EVENT(nvx_uvm_msg_out,
	TP_PROTO(u32 vm, u32 tag, s32 status, u32 bulk),
	TP_ARGS(vm, tag, status, bulk),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(u32, tag)
		__field(s32, status)
		__field(u32, bulk)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->tag = tag;
		__entry->status = status;
		__entry->bulk = bulk;
	),
	TP_printk("vm=%u tag=%u status=%d bulk=%u", __entry->vm,
		  __entry->tag, __entry->status, __entry->bulk)
);

TRACE_EVENT(nvx_uvm_bulk,
	TP_PROTO(u32 vm, bool out, u32 len),
	TP_ARGS(vm, out, len),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(bool, out)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->out = out;
		__entry->len = len;
	),
	TP_printk("vm=%u dir=%s len=%u", __entry->vm,
		  __entry->out ? "push" : "pull", __entry->len)
);

TRACE_EVENT(nvx_uvm_credit,
	TP_PROTO(u32 vm, u32 credits, bool irq),
	TP_ARGS(vm, credits, irq),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(u32, credits)
		__field(bool, irq)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->credits = credits;
		__entry->irq = irq;
	),
	TP_printk("vm=%u credits=%u irq=%d", __entry->vm, __entry->credits,
		  __entry->irq)
);

TRACE_EVENT(nvx_uvm_fail,
	TP_PROTO(u32 vm, u32 reason, u64 detail),
	TP_ARGS(vm, reason, detail),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(u32, reason)
		__field(u64, detail)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->reason = reason;
		__entry->detail = detail;
	),
	TP_printk("vm=%u reason=%u detail=%#llx", __entry->vm,
		  __entry->reason, __entry->detail)
);

#endif /* _NVX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
