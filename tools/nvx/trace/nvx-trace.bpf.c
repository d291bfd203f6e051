// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-trace's BPF programs: one per nvx tracepoint, each adding to a
 * histogram or a counter keyed by what it is of (a VM and a message type,
 * a thread, a node, a queue). The loader (nvx-trace.c) loads the
 * programs of one subcommand and reads the maps (never clearing them).
 *
 * The tracepoints' records are described by their own structs below,
 * with only the members read; CO-RE (preserve_access_index) finds each
 * member's offset in the running kernel's BTF (vmlinux's, or the module
 * that defines the tracepoint), so a reordered or widened field does not
 * break the tool.
 *
 * Every program returns 1: a tracepoint program's 0 would also keep the
 * event from every perf event on the tracepoint (perf_trace_run_bpf_submit()),
 * and perf stat run beside nvx-trace would count nothing.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "nvx-trace.h"

char LICENSE[] SEC("license") = "GPL";

#define PRESERVE __attribute__((preserve_access_index))

/* let the event on to perf (see above) */
#define PASS 1

struct trace_event_raw_nvx_uvm_msg_in {
	__u32 vm;
	__u16 type;
	__u32 tag;
} PRESERVE;

struct trace_event_raw_nvx_uvm_recv {
	__u32 vm;
	__u32 tag;
} PRESERVE;

struct trace_event_raw_nvx_uvm_msg_out {
	__u32 vm;
	__u32 tag;
	__s32 status;
} PRESERVE;

struct trace_event_raw_nvx_uvm_fail {
	__u32 vm;
	__u32 reason;
} PRESERVE;

struct trace_event_raw_nvx_uintr_post {
	int tid;
	__u8 pending;		/* bool in the kernel */
	int src;
} PRESERVE;

struct trace_event_raw_nvx_uintr_deliver {
	__u64 latency_ns;
} PRESERVE;

struct trace_event_raw_nvx_uintr_tick {
	int tid;
	__u64 late_ns;
} PRESERVE;

struct trace_event_raw_nvx_uintr_signal {
	int signo;
} PRESERVE;

struct trace_event_raw_nvx_grant {
	int node;
	__u64 bytes;
	__u64 sync_zeroed;
	__u64 ns;
} PRESERVE;

struct trace_event_raw_nvx_grant_release {
	int node;
	__u64 bytes;
} PRESERVE;

struct trace_event_raw_nvx_scrub {
	int node;
	__u64 bytes;
	__u64 ns;
} PRESERVE;

struct trace_event_raw_nvx_pool_resize_class {
	__u32 node;
	__u64 done;
} PRESERVE;

struct trace_event_raw_nvx_srq_rx {
	__u32 queue;
	__u32 strides;
	__u32 len;
} PRESERVE;

struct trace_event_raw_nvx_srq_filler {
	__u32 queue;
} PRESERVE;

struct trace_event_raw_nvx_srq_refill {
	__u32 pool;
	__u32 returned;
} PRESERVE;

struct trace_event_raw_nvx_srq_drop {
	__u32 queue;
	int reason;
} PRESERVE;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NVX_TRACE_MAX_KEYS);
	__type(key, struct nvx_trace_key);
	__type(value, struct nvx_trace_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NVX_TRACE_MAX_KEYS);
	__type(key, struct nvx_trace_key);
	__type(value, __u64);
} counts SEC(".maps");

/* a message in flight: when the kernel took it, when RECV returned it */
struct msg_key {
	__u32 vm;
	__u32 tag;
};

struct msg_val {
	__u64 taken;
	__u64 received;
	__u32 type;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct msg_key);
	__type(value, struct msg_val);
} msgs SEC(".maps");

/* keys and values for the maps' first insert */
static const struct nvx_trace_hist zero_hist;
static const __u64 zero_count;

static __always_inline __u32 log2_32(__u32 v)
{
	__u32 r = 0, s;

	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	return r | (v >> 1);
}

static __always_inline __u32 log2_64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? log2_32(hi) + 32 : log2_32(v);
}

static __always_inline void hist_add(__u32 kind, __u32 id, __u32 sub,
				     __u64 v)
{
	struct nvx_trace_key k = { .kind = kind, .id = id, .sub = sub };
	struct nvx_trace_hist *h;
	__u32 slot;

	h = bpf_map_lookup_elem(&hists, &k);
	if (!h) {
		bpf_map_update_elem(&hists, &k, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &k);
		if (!h)
			return;	/* the map is full: counted by nobody */
	}
	slot = log2_64(v);
	if (slot >= NVX_TRACE_SLOTS)
		slot = NVX_TRACE_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, v);
	/* racy between CPUs: a maximum, not an exact one */
	if (v > h->max)
		h->max = v;
}

static __always_inline void count_add(__u32 kind, __u32 id, __u32 sub,
				      __u64 v)
{
	struct nvx_trace_key k = { .kind = kind, .id = id, .sub = sub };
	__u64 *c;

	c = bpf_map_lookup_elem(&counts, &k);
	if (!c) {
		bpf_map_update_elem(&counts, &k, &zero_count, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&counts, &k);
		if (!c)
			return;
	}
	__sync_fetch_and_add(c, v);
}

/* ------------------------------------------------------------- uvm */

SEC("tp/nvx/nvx_uvm_msg_in")
int uvm_msg_in(struct trace_event_raw_nvx_uvm_msg_in *ctx)
{
	struct msg_key k = { .vm = ctx->vm, .tag = ctx->tag };
	struct msg_val v = {
		.taken = bpf_ktime_get_ns(),
		.type = ctx->type,
	};

	bpf_map_update_elem(&msgs, &k, &v, BPF_ANY);
	count_add(NVX_C_UVM_IN, k.vm, v.type, 1);
	return PASS;
}

SEC("tp/nvx/nvx_uvm_recv")
int uvm_recv(struct trace_event_raw_nvx_uvm_recv *ctx)
{
	struct msg_key k = { .vm = ctx->vm, .tag = ctx->tag };
	struct msg_val *v;

	v = bpf_map_lookup_elem(&msgs, &k);
	if (!v || v->received)
		return PASS;
	v->received = bpf_ktime_get_ns();
	hist_add(NVX_H_UVM_QUEUE, k.vm, v->type, v->received - v->taken);
	return PASS;
}

SEC("tp/nvx/nvx_uvm_msg_out")
int uvm_msg_out(struct trace_event_raw_nvx_uvm_msg_out *ctx)
{
	struct msg_key k = { .vm = ctx->vm, .tag = ctx->tag };
	__u64 now = bpf_ktime_get_ns();
	struct msg_val *v;
	__s32 status = ctx->status;

	v = bpf_map_lookup_elem(&msgs, &k);
	if (!v)
		return PASS;	/* taken before the tool started */
	hist_add(NVX_H_UVM_TOTAL, k.vm, v->type, now - v->taken);
	if (v->received)
		hist_add(NVX_H_UVM_SERVE, k.vm, v->type, now - v->received);
	count_add(NVX_C_UVM_OUT, k.vm, v->type, 1);
	if (status < 0)
		count_add(v->received ? NVX_C_UVM_ERROR : NVX_C_UVM_DENIED,
			  k.vm, v->type, 1);
	bpf_map_delete_elem(&msgs, &k);
	return PASS;
}

SEC("tp/nvx/nvx_uvm_fail")
int uvm_fail(struct trace_event_raw_nvx_uvm_fail *ctx)
{
	count_add(NVX_C_UVM_STOP, ctx->vm, ctx->reason, 1);
	return PASS;
}

/* ----------------------------------------------------------- uintr */

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

SEC("tp/nvx/nvx_uintr_post")
int uintr_post(struct trace_event_raw_nvx_uintr_post *ctx)
{
	count_add(NVX_C_UINTR_POST, ctx->tid, ctx->src, 1);
	if (ctx->pending)
		count_add(NVX_C_UINTR_PENDING, ctx->tid, ctx->src, 1);
	return PASS;
}

/* runs in the receiving thread, as it returns to user mode */
SEC("tp/nvx/nvx_uintr_deliver")
int uintr_deliver(struct trace_event_raw_nvx_uintr_deliver *ctx)
{
	__u32 tid = current_tid();
	__u64 ns = ctx->latency_ns;

	count_add(NVX_C_UINTR_DELIVER, tid, 0, 1);
	/* 0: the post was not timed (tracing started after it) */
	if (ns)
		hist_add(NVX_H_UINTR_LAT, tid, 0, ns);
	return PASS;
}

SEC("tp/nvx/nvx_uintr_tick")
int uintr_tick(struct trace_event_raw_nvx_uintr_tick *ctx)
{
	count_add(NVX_C_UINTR_TICK, ctx->tid, 0, 1);
	hist_add(NVX_H_UINTR_LATE, ctx->tid, 0, ctx->late_ns);
	return PASS;
}

SEC("tp/nvx/nvx_uintr_signal")
int uintr_signal(struct trace_event_raw_nvx_uintr_signal *ctx)
{
	count_add(NVX_C_UINTR_SIGNAL, current_tid(), ctx->signo, 1);
	return PASS;
}

/* ------------------------------------------------------------ pool */

SEC("tp/nvx/nvx_grant")
int pool_grant(struct trace_event_raw_nvx_grant *ctx)
{
	__u32 node = ctx->node;
	__u64 bytes = ctx->bytes;

	count_add(NVX_C_POOL_GRANTS, node, 0, 1);
	count_add(NVX_C_POOL_GRANT_BYTES, node, 0, bytes);
	count_add(NVX_C_POOL_SYNC_BYTES, node, 0, ctx->sync_zeroed);
	hist_add(NVX_H_POOL_SIZE, node, 0, bytes);
	/* 0: tracing was enabled while the grant ran */
	if (ctx->ns)
		hist_add(NVX_H_POOL_LAT, node, 0, ctx->ns);
	return PASS;
}

SEC("tp/nvx/nvx_grant_release")
int pool_release(struct trace_event_raw_nvx_grant_release *ctx)
{
	count_add(NVX_C_POOL_RELEASES, ctx->node, 0, 1);
	count_add(NVX_C_POOL_RELEASE_BYTES, ctx->node, 0, ctx->bytes);
	return PASS;
}

SEC("tp/nvx/nvx_scrub")
int pool_scrub(struct trace_event_raw_nvx_scrub *ctx)
{
	__u64 bytes = ctx->bytes, ns = ctx->ns;

	count_add(NVX_C_SCRUB_BYTES, ctx->node, 0, bytes);
	count_add(NVX_C_SCRUB_NS, ctx->node, 0, ns);
	/* MiB/s = bytes / 2^20 / (ns / 10^9); exact below 18 GB a batch */
	if (ns)
		hist_add(NVX_H_SCRUB_RATE, ctx->node, 0,
			 bytes * 1000000000ULL / ns >> 20);
	return PASS;
}

SEC("tp/nvx/nvx_pool_grow")
int pool_grow(struct trace_event_raw_nvx_pool_resize_class *ctx)
{
	count_add(NVX_C_POOL_GROW_BYTES, ctx->node, 0, ctx->done);
	return PASS;
}

SEC("tp/nvx/nvx_pool_shrink")
int pool_shrink(struct trace_event_raw_nvx_pool_resize_class *ctx)
{
	count_add(NVX_C_POOL_SHRINK_BYTES, ctx->node, 0, ctx->done);
	return PASS;
}

/* ------------------------------------------------------------- srq */

SEC("tp/nvx/nvx_srq_rx")
int srq_rx(struct trace_event_raw_nvx_srq_rx *ctx)
{
	__u32 q = ctx->queue;

	count_add(NVX_C_SRQ_FRAMES, q, 0, 1);
	count_add(NVX_C_SRQ_BYTES, q, 0, ctx->len);
	hist_add(NVX_H_SRQ_STRIDES, q, 0, ctx->strides);
	return PASS;
}

SEC("tp/nvx/nvx_srq_filler")
int srq_filler(struct trace_event_raw_nvx_srq_filler *ctx)
{
	count_add(NVX_C_SRQ_FILLERS, ctx->queue, 0, 1);
	return PASS;
}

SEC("tp/nvx/nvx_srq_refill")
int srq_refill(struct trace_event_raw_nvx_srq_refill *ctx)
{
	count_add(NVX_C_SRQ_REFILLS, ctx->pool, 0, 1);
	count_add(NVX_C_SRQ_RETURNED, ctx->pool, 0, ctx->returned);
	return PASS;
}

SEC("tp/nvx/nvx_srq_drop")
int srq_drop(struct trace_event_raw_nvx_srq_drop *ctx)
{
	count_add(NVX_C_SRQ_DROPS, ctx->queue, ctx->reason, 1);
	return PASS;
}
