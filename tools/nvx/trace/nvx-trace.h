/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx-trace: what its BPF programs (nvx-trace.bpf.c) and its loader
 * (nvx-trace.c) share: the keys and values of the two maps.
 */
#ifndef NVX_TRACE_H
#define NVX_TRACE_H

/* log2 buckets: slot 0 holds 0 and 1, slot s holds [2^s, 2^(s+1)) */
#define NVX_TRACE_SLOTS 40

/* histograms, by what they measure (key.kind) */
enum nvx_trace_hist_kind {
	NVX_H_UVM_TOTAL,	/* id vm, sub type: taken -> completed, ns */
	NVX_H_UVM_QUEUE,	/* id vm, sub type: taken -> RECV, ns */
	NVX_H_UVM_SERVE,	/* id vm, sub type: RECV -> completed, ns */
	NVX_H_UINTR_LAT,	/* id receiver tid: post -> delivery, ns */
	NVX_H_UINTR_LATE,	/* id receiver tid: tick lateness, ns */
	NVX_H_POOL_SIZE,	/* id node: grant size, bytes */
	NVX_H_POOL_LAT,		/* id node: grant latency, ns */
	NVX_H_SCRUB_RATE,	/* id node: scrub batch, MiB/s */
	NVX_H_SRQ_STRIDES,	/* id queue: strides per frame */
	NVX_H_KINDS
};

/* counters (key.kind) */
enum nvx_trace_count_kind {
	NVX_C_UVM_IN,		/* id vm, sub type: messages taken */
	NVX_C_UVM_OUT,		/* id vm, sub type: completions */
	NVX_C_UVM_DENIED,	/* id vm, sub type: failed, never received */
	NVX_C_UVM_ERROR,	/* id vm, sub type: failed after RECV */
	NVX_C_UVM_STOP,		/* id vm, sub reason: VMs ended */
	NVX_C_UINTR_POST,	/* id tid, sub source: vectors posted */
	NVX_C_UINTR_PENDING,	/* id tid, sub source: posted, already pending */
	NVX_C_UINTR_DELIVER,	/* id tid: deliveries */
	NVX_C_UINTR_TICK,	/* id tid: timer ticks */
	NVX_C_UINTR_SIGNAL,	/* id tid, sub signo: signals routed */
	NVX_C_POOL_GRANTS,	/* id node */
	NVX_C_POOL_GRANT_BYTES,	/* id node */
	NVX_C_POOL_SYNC_BYTES,	/* id node: zeroed on the caller's path */
	NVX_C_POOL_RELEASES,	/* id node */
	NVX_C_POOL_RELEASE_BYTES, /* id node */
	NVX_C_SCRUB_BYTES,	/* id node */
	NVX_C_SCRUB_NS,		/* id node */
	NVX_C_POOL_GROW_BYTES,	/* id node */
	NVX_C_POOL_SHRINK_BYTES, /* id node */
	NVX_C_SRQ_FRAMES,	/* id queue */
	NVX_C_SRQ_BYTES,	/* id queue */
	NVX_C_SRQ_FILLERS,	/* id queue */
	NVX_C_SRQ_REFILLS,	/* id pool */
	NVX_C_SRQ_RETURNED,	/* id pool: buffers reposted */
	NVX_C_SRQ_DROPS,	/* id queue, sub reason */
	NVX_C_KINDS
};

struct nvx_trace_key {
	__u32 kind;
	__u32 id;
	__u32 sub;
	__u32 pad;
};

struct nvx_trace_hist {
	__u64 slots[NVX_TRACE_SLOTS];
	__u64 count;
	__u64 sum;
	__u64 max;
};

#define NVX_TRACE_MAX_KEYS 4096

#endif /* NVX_TRACE_H */
