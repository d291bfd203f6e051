/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx-bench srq, shared by its two parts: srq.c ((a) burst memory,
 * (b) memory per frame, the results, the command) and srq_rate.c ((c)
 * frames per second against AF_PACKET).
 */
#ifndef _NVX_BENCH_SRQ_H
#define _NVX_BENCH_SRQ_H

#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/if_ether.h>

#include "bench.h"
#include "nvx_net.h"
#include "nvx_srq.h"

/*
 * bench srq: (a) the buffer memory that takes a burst on one queue with
 * no drop, shared and striding against a pool per queue with a frame per
 * buffer; (b) the buffer memory a frame consumes; (c) the frames per
 * second one receiving thread takes from nvx against AF_PACKET.
 */

#define NVX_SB_BURST		4096	/* frames of (a), one flow */
#define NVX_SB_FRAMES		2048	/* frames of (b) per size and shape */
#define NVX_SB_SMALL		64	/* the frames of (a) and (c) */
#define NVX_SB_BASE_BUF		2048	/* the baseline: a frame per 2 KiB */
#define NVX_SB_RATE_QUEUES	4	/* the set of (c) */
#define NVX_SB_RATE_FLOWS	64
#define NVX_SB_RATE_BUFS	256	/* 4 MiB of 16 KiB buffers */
#define NVX_SB_BLOCK		(128 * 1024)	/* TPACKET_V3 block */
#define NVX_SB_BLOCKS		32		/* the same 4 MiB */
#define NVX_SB_BLOCK_TOV	1	/* ms until a block not full is retired */
#define NVX_SB_DURATION		2	/* s of sending per method in (c) */
#define NVX_SB_MAX_DURATION	60	/* --duration */
/* the receiver of (c) stops when idle this long after the sender */
#define NVX_SB_DRAIN		(100 * NVX_NSEC_PER_MSEC)
/* a set just closed may hold its NIC and grant a little longer */
#define NVX_SB_RETRY		(2 * NVX_NSEC_PER_SEC)
/* how long the counters may take to show every frame sent */
#define NVX_SB_SETTLE		NVX_NSEC_PER_SEC
#define NVX_SB_HEADLINE_Q	8	/* queues of the headline */
#define NVX_SB_GOAL		32	/* what the headline should reach */

#define NVX_SB_NR_Q		5	/* nvx_sb_queues[] */
#define NVX_SB_NR_LENS		3	/* nvx_sb_lens[] */

/* The two shapes of buffer pool compared in (a) and (b). */
enum {
	NVX_SB_SHARED,		/* the defaults: 16 KiB, 256 B strides */
	NVX_SB_PER_QUEUE,	/* PER_QUEUE, 2 KiB, a frame per buffer */
	NVX_SB_SHAPES,
};

/* The receivers of (c). */
enum {
	NVX_SB_NVX,
	NVX_SB_PACKET,
	NVX_SB_METHODS,
};

/**
 * struct nvx_sb_burst - a row of (a)
 * @queues: the set's queues.
 * @found: per shape, whether a pool within the limits took the burst.
 * @nr_bufs: per shape, the fewest buffers that took it.
 * @bytes: per shape, their memory.
 * @trials: per shape, the sets tried.
 */
struct nvx_sb_burst {
	uint32_t queues;
	bool found[NVX_SB_SHAPES];
	uint32_t nr_bufs[NVX_SB_SHAPES];
	uint64_t bytes[NVX_SB_SHAPES];
	unsigned int trials[NVX_SB_SHAPES];
};

/**
 * struct nvx_sb_frame - a row of (b)
 * @len: bytes per frame.
 * @rx_packets: per shape, frames completed.
 * @rx_strides: per shape, strides consumed, fillers included.
 * @fillers: per shape, filler completions.
 * @stride: per shape, the stride size.
 * @per_frame: per shape, bytes of buffer consumed per frame.
 */
struct nvx_sb_frame {
	uint32_t len;
	uint64_t rx_packets[NVX_SB_SHAPES];
	uint64_t rx_strides[NVX_SB_SHAPES];
	uint64_t fillers[NVX_SB_SHAPES];
	uint32_t stride[NVX_SB_SHAPES];
	double per_frame[NVX_SB_SHAPES];
};

/**
 * struct nvx_sb_rate - one receiver of (c)
 * @sent: frames the sending thread sent.
 * @received: frames the receiving thread took.
 * @ring_drops: frames the kernel dropped for want of room in the ring
 *	(nvx: drops_no_buf + drops_cq_full; AF_PACKET: tp_drops).
 * @retries: sendmmsg() calls that found no room.
 * @ns: from the first send until the last frame was taken.
 * @pps: @received / @ns.
 */
struct nvx_sb_rate {
	uint64_t sent;
	uint64_t received;
	uint64_t ring_drops;
	uint64_t retries;
	uint64_t ns;
	double pps;
};

/**
 * struct nvx_sb - one run of bench srq
 * @ctx: the command's context; the device is open.
 * @node: the NUMA node of the pool memory and grants.
 * @added: bytes the bench added to the pool on @node, to give back.
 * @duration_ns: how long the sender of (c) sends, per method.
 * @cpu: the CPUs of the receiving thread (this one) and the sender.
 * @same_cpu: both are the same.
 * @nic: the nvxsim NIC made for the run, @peer its peer.
 * @veth: the veth pair for AF_PACKET: sender side, receiver side.
 * @have_nic: @nic exists (and so @peer).
 * @have_veth: the veth pair exists.
 * @nic_if: ifindex of @nic; @peer_if, @veth_if likewise.
 * @nic_mac: MAC address of @nic; @peer_mac, @veth_mac likewise.
 * @burst: the rows of (a).
 * @frame: the rows of (b).
 * @rate: the results of (c).
 */
struct nvx_sb {
	struct nvx_ctx *ctx;
	uint32_t node;
	uint64_t added;
	uint64_t duration_ns;
	int cpu[2];
	bool same_cpu;
	char nic[IFNAMSIZ];
	char peer[IFNAMSIZ + 1];
	char veth[2][IFNAMSIZ];
	bool have_nic;
	bool have_veth;
	unsigned int nic_if;
	unsigned int peer_if;
	unsigned int veth_if[2];
	uint8_t nic_mac[ETH_ALEN];
	uint8_t peer_mac[ETH_ALEN];
	uint8_t veth_mac[2][ETH_ALEN];
	struct nvx_sb_burst burst[NVX_SB_NR_Q];
	struct nvx_sb_frame frame[NVX_SB_NR_LENS];
	struct nvx_sb_rate rate[NVX_SB_METHODS];
};

extern const char * const nvx_sb_method_names[NVX_SB_METHODS];

static inline void nvx_sb_relax(const struct nvx_sb *b)
{
	if (b->same_cpu)
		sched_yield();
#if defined(__x86_64__)
	else
		__builtin_ia32_pause();
#endif
}

void nvx_sb_progress(const struct nvx_sb *b, const char *fmt, ...)
	__printf(2, 3);
void nvx_sb_params(int shape, uint32_t queues, uint32_t nr_bufs,
		   struct nvx_srq_params *p);
int nvx_sb_open(struct nvx_sb *b, struct nvx_srq_set *s,
		const struct nvx_srq_params *p, bool map);
/* (c) with one method: the frames per second into @b->rate[@method]. */
int nvx_sb_rate_run(struct nvx_sb *b, int method);

#endif /* _NVX_BENCH_SRQ_H */
