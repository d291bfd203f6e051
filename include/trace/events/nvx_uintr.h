/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx tracepoints of user interrupts (arch/x86/nvx/uintr.c defines them),
 * in events/nvx/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvx

#if !defined(_TRACE_NVX_UINTR_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NVX_UINTR_H

#include <linux/tracepoint.h>

/* Who posted a vector: enum nvx_uintr_src. */
#define nvx_uintr_show_src(src)						\
	__print_symbolic(src, { 0, "thread" }, { 1, "timer" },		\
			 { 2, "signal" }, { 3, "endpoint" }, { 4, "srq" })

/*
 * A vector posted to a receiver: @tid the receiver thread, @pending
 * whether it was already pending (the posts merge), @src who posted.
 */
TRACE_EVENT(nvx_uintr_post,
	TP_PROTO(pid_t tid, u32 vector, bool pending, int src),
	TP_ARGS(tid, vector, pending, src),
	TP_STRUCT__entry(
		__field(pid_t, tid)
		__field(u32, vector)
		__field(bool, pending)
		__field(int, src)
	),
	TP_fast_assign(
		__entry->tid = tid;
		__entry->vector = vector;
		__entry->pending = pending;
		__entry->src = src;
	),
	TP_printk("tid=%d vector=%u pending=%d src=%s", __entry->tid,
		  __entry->vector, __entry->pending,
		  nvx_uintr_show_src(__entry->src))
);

/*
 * A vector delivered (the handler entered), in the receiver: @latency_ns
 * since it was posted while not pending, 0 when unknown (tracing was off
 * at the post, or the thread set the bit itself).
 */
TRACE_EVENT(nvx_uintr_deliver,
	TP_PROTO(u32 vector, u64 latency_ns),
	TP_ARGS(vector, latency_ns),
	TP_STRUCT__entry(
		__field(u32, vector)
		__field(u64, latency_ns)
	),
	TP_fast_assign(
		__entry->vector = vector;
		__entry->latency_ns = latency_ns;
	),
	TP_printk("vector=%u latency_ns=%llu", __entry->vector,
		  __entry->latency_ns)
);

/* A timer tick of thread @tid, @late_ns after its expiry time. */
TRACE_EVENT(nvx_uintr_tick,
	TP_PROTO(pid_t tid, u32 vector, u64 late_ns),
	TP_ARGS(tid, vector, late_ns),
	TP_STRUCT__entry(
		__field(pid_t, tid)
		__field(u32, vector)
		__field(u64, late_ns)
	),
	TP_fast_assign(
		__entry->tid = tid;
		__entry->vector = vector;
		__entry->late_ns = late_ns;
	),
	TP_printk("tid=%d vector=%u late_ns=%llu", __entry->tid,
		  __entry->vector, __entry->late_ns)
);

/* Signal @signo of the receiver became vector @vector. */
TRACE_EVENT(nvx_uintr_signal,
	TP_PROTO(int signo, u32 vector),
	TP_ARGS(signo, vector),
	TP_STRUCT__entry(
		__field(int, signo)
		__field(u32, vector)
	),
	TP_fast_assign(
		__entry->signo = signo;
		__entry->vector = vector;
	),
	TP_printk("signo=%d vector=%u", __entry->signo, __entry->vector)
);

#endif /* _TRACE_NVX_UINTR_H */

#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nvx_uintr

/* This part must be outside protection */
#include <trace/define_trace.h>
