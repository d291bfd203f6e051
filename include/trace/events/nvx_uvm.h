/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx tracepoints of light user VMs (kernel/nvx/uvm/chan.c defines
 * them), in events/nvx/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvx

#if !defined(_TRACE_NVX_UVM_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NVX_UVM_H

#include <linux/tracepoint.h>

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

/* the system process took the message (RECV returned it) */
TRACE_EVENT(nvx_uvm_recv,
	TP_PROTO(u32 vm, u16 type, u32 tag),
	TP_ARGS(vm, type, tag),
	TP_STRUCT__entry(
		__field(u32, vm)
		__field(u16, type)
		__field(u32, tag)
	),
	TP_fast_assign(
		__entry->vm = vm;
		__entry->type = type;
		__entry->tag = tag;
	),
	TP_printk("vm=%u type=%u tag=%u", __entry->vm, __entry->type,
		  __entry->tag)
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

#endif /* _TRACE_NVX_UVM_H */

#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nvx_uvm

/* This part must be outside protection */
#include <trace/define_trace.h>
