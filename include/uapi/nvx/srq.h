/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nvx: shared multi-packet RX buffer queues (SRQ).
 *
 * An SRQ set belongs to one instance and is attached to one NIC. It has
 * one pool of buffers (16 KiB by default) that feeds all of its receive
 * queues; the NIC packs frames into 256-byte strides of the buffer a
 * queue is currently filling, as an mlx5 striding RQ does, and reports
 * each frame, and each "filler" for the strides left at the end of a
 * buffer, in that queue's completion ring. The instance reads frames in
 * place and gives their strides back through a release ring; a buffer
 * returns to the NIC once every stride of it has been filled and every
 * stride released.
 *
 * NVX_IOC_SRQ_CREATE on /dev/nvx returns the set's file descriptor. Its
 * mmap() offsets (struct nvx_srq_layout):
 *
 *   0            the ring area, read-write: one struct nvx_srq_ring
 *                header plus entries per completion ring, then the same
 *                per release ring;
 *   buf_offset   the buffers, read-only, buffer i at i * buf_size.
 *
 * Every ring index is a free-running __u32; entry i of a ring of n
 * entries (a power of two) is at i & (n - 1). A completion ring is
 * written by the kernel (prod) and consumed by the instance (cons); a
 * release ring the other way round. The kernel never trusts what the
 * instance writes: a bad index or entry is counted and ignored.
 *
 * The fields are documented here; Documentation/nvx/srq.rst has the
 * behaviour and the errors of every call.
 */
#ifndef _UAPI_NVX_SRQ_H
#define _UAPI_NVX_SRQ_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <nvx/nvx.h>

/* Defaults for a zero field of struct nvx_srq_params. */
#define NVX_SRQ_DEF_BUF_SIZE	16384
#define NVX_SRQ_DEF_STRIDE	256
#define NVX_SRQ_DEF_NR_BUFS	128
#define NVX_SRQ_DEF_CQ_ENTRIES	8192
#define NVX_SRQ_DEF_REL_ENTRIES	8192

/* Limits of struct nvx_srq_params. */
#define NVX_SRQ_MAX_QUEUES	64
#define NVX_SRQ_MIN_BUF_SIZE	2048
#define NVX_SRQ_MAX_BUF_SIZE	(2U << 20)	/* one pool chunk */
#define NVX_SRQ_MIN_STRIDE	64
#define NVX_SRQ_MAX_STRIDES	1024		/* strides per buffer */
#define NVX_SRQ_MAX_BUFS	65536
#define NVX_SRQ_MAX_ENTRIES	65536		/* per ring */

/* struct nvx_srq_params.flags */
#define NVX_SRQ_PER_QUEUE	0x1U	/* a buffer pool per queue */
#define NVX_SRQ_POISON		0x2U	/* fill returned buffers with 0x6b */
#define NVX_SRQ_FLAGS		(NVX_SRQ_PER_QUEUE | NVX_SRQ_POISON)

/* struct nvx_srq_create.flags */
#define NVX_SRQ_CLOEXEC		0x1U	/* O_CLOEXEC on the new fd */
#define NVX_SRQ_RINGS_IN_GRANT	0x2U	/* the ring area in the grant */
#define NVX_SRQ_CREATE_FLAGS	(NVX_SRQ_CLOEXEC | NVX_SRQ_RINGS_IN_GRANT)

/* struct nvx_srq_create.match: which frames of the NIC the set takes */
#define NVX_SRQ_MATCH_MAC	0x1U	/* destination MAC @mac */
#define NVX_SRQ_MATCH_IP4	0x2U	/* IPv4 to @ip4, ARP asking for it */
#define NVX_SRQ_MATCH_FLAGS	(NVX_SRQ_MATCH_MAC | NVX_SRQ_MATCH_IP4)

/**
 * struct nvx_srq_params - the shape of an SRQ set
 * @flags: NVX_SRQ_PER_QUEUE: sharing off, @nr_bufs split evenly over
 *	the queues, each queue posting only its own (the baseline);
 *	NVX_SRQ_POISON: a buffer returned to the NIC is first filled with
 *	0x6b, so that a frame read after its release shows.
 * @nr_queues: receive queues, 1..NVX_SRQ_MAX_QUEUES; 0 is -EINVAL.
 * @nr_bufs: buffers in the pool, 1..NVX_SRQ_MAX_BUFS; 0 means
 *	NVX_SRQ_DEF_NR_BUFS. With PER_QUEUE a multiple of @nr_queues.
 * @buf_size: bytes per buffer, a power of two from NVX_SRQ_MIN_BUF_SIZE
 *	to NVX_SRQ_MAX_BUF_SIZE; 0 means NVX_SRQ_DEF_BUF_SIZE.
 * @stride_size: bytes per stride, a power of two from NVX_SRQ_MIN_STRIDE
 *	to @buf_size, at most NVX_SRQ_MAX_STRIDES per buffer; 0 means
 *	NVX_SRQ_DEF_STRIDE. @stride_size == @buf_size turns striding off
 *	(one frame per buffer: the baseline).
 * @cq_entries: entries per completion ring, a power of two up to
 *	NVX_SRQ_MAX_ENTRIES; 0 means NVX_SRQ_DEF_CQ_ENTRIES.
 * @rel_entries: entries per release ring, likewise; 0 means
 *	NVX_SRQ_DEF_REL_ENTRIES.
 * @nr_rel_rings: release rings, 1..NVX_SRQ_MAX_QUEUES; 0 means one per
 *	queue. Each ring must have one writer at a time.
 * @low_water: refill when the strides posted to the NIC (per pool: the
 *	set's, or each queue's with PER_QUEUE) fall below this; 0 means a
 *	quarter of the pool's strides. At most the pool's strides.
 * @reserved: in: must be 0.
 *
 * Every field is written back with the value in use.
 */
struct nvx_srq_params {
	__u32 flags;
	__u32 nr_queues;
	__u32 nr_bufs;
	__u32 buf_size;
	__u32 stride_size;
	__u32 cq_entries;
	__u32 rel_entries;
	__u32 nr_rel_rings;
	__u32 low_water;
	__u32 reserved;
};

/**
 * struct nvx_srq_layout - where things are in the set's mmap() offsets
 * @ring_bytes: size of the ring area at offset 0 (whole pages).
 * @cq_offset: offset of completion ring 0 in the ring area.
 * @cq_bytes: distance between two completion rings (header + entries).
 * @rel_offset: offset of release ring 0 in the ring area.
 * @rel_bytes: distance between two release rings.
 * @buf_offset: mmap() offset of the buffers (read-only).
 * @buf_bytes: size of the buffer region (whole pages).
 */
struct nvx_srq_layout {
	__u64 ring_bytes;
	__u64 cq_offset;
	__u64 cq_bytes;
	__u64 rel_offset;
	__u64 rel_bytes;
	__u64 buf_offset;
	__u64 buf_bytes;
};

/**
 * struct nvx_srq_create - NVX_IOC_SRQ_CREATE
 * @flags: in: NVX_SRQ_CLOEXEC; NVX_SRQ_RINGS_IN_GRANT: the ring area
 *	lives in the grant at @ring_offset instead of in the set, so that
 *	everything the instance reads and writes is in the grant (a user
 *	VM's memory: Documentation/nvx/srq.rst, "A set in a user VM").
 * @ifindex: in: the NIC, in the caller's network namespace; it must be
 *	a device a registered backend drives (-EOPNOTSUPP otherwise) with
 *	no set of the same @match rule attached (-EBUSY).
 * @grant_fd: in: a grant (NVX_IOC_GRANT) that holds the buffers; the
 *	set keeps its own reference to it.
 * @fd: out: the set's file descriptor.
 * @grant_offset: in: byte offset of buffer 0 in the grant, a multiple
 *	of @params.buf_size and of the page size (-EINVAL); the buffers
 *	must fit in the grant (-ENOSPC). Buffers larger than 64 KiB must
 *	lie in the grant's whole pieces, not in its blocks
 *	(NVX_GRANT_BLOCKS; -EINVAL): a buffer is physically contiguous.
 * @params: in/out: the shape, defaults filled in.
 * @layout: out: the mmap() layout; with NVX_SRQ_RINGS_IN_GRANT the ring
 *	area's offsets are relative to @ring_offset in the grant.
 * @ring_offset: in: with NVX_SRQ_RINGS_IN_GRANT, byte offset of the ring
 *	area in the grant: page aligned, the area (layout.ring_bytes) inside
 *	the grant (-ENOSPC), inside one physically contiguous unit of it (a
 *	whole piece, or one block: NVX_GRANT_BLOCKS) and not overlapping the
 *	buffers (-EINVAL). The kernel zeroes the area before it attaches
 *	the set (a create that fails then leaves it zeroed). Without the
 *	flag it must be 0 (-EINVAL). Added in ABI 2.5; a caller built
 *	before it passes the shorter struct and reads as 0.
 * @match: in: 0: the set takes every frame of the NIC that no other
 *	set's rule takes (at most one such set per NIC, -EBUSY);
 *	NVX_SRQ_MATCH_MAC: frames whose destination MAC is @mac;
 *	NVX_SRQ_MATCH_IP4: IPv4 packets whose destination is @ip4, and ARP
 *	packets whose target protocol address is @ip4; both: frames that
 *	match both. Rules are tried oldest set first; a frame no rule and
 *	no catch-all set takes goes to the NIC's own stack. A second set
 *	with the same rule is -EBUSY. Backends other than nvxsim take only
 *	0 (-EOPNOTSUPP). ABI 2.5.
 * @ip4: in: with NVX_SRQ_MATCH_IP4 the address, network byte order, not
 *	0 (-EINVAL); otherwise 0 (-EINVAL).
 * @mac: in: with NVX_SRQ_MATCH_MAC the address, not all zeros
 *	(-EINVAL); otherwise all zeros (-EINVAL).
 * @reserved: in: must be 0.
 *
 * Needs CAP_NET_ADMIN in the NIC's network namespace (-EPERM).
 * The NIC: `ip link add NAME type nvxsim` creates the software NIC NAME
 * (at most 14 characters) and its peer NAMEp, an ordinary netdev; a
 * frame sent out of the peer arrives at the receive queues of the set
 * whose rule (@match) takes it while NAME is up, and goes to the normal
 * stack of NAME otherwise. Frames the NIC sends (NVX_SRQ_IOC_TX, or the stack sending
 * through NAME) arrive at the peer.
 *
 * Errors: -EINVAL (flags, params, not a grant, a clone), -EPERM (a
 * template: read-only), -EBADF (@grant_fd),
 * -ENODEV (no such ifindex), -EOPNOTSUPP, -EBUSY, -ENOSPC, -ENOMEM,
 * -EMFILE.
 */
struct nvx_srq_create {
	__u32 flags;
	__u32 ifindex;
	__s32 grant_fd;
	__s32 fd;
	__u64 grant_offset;
	struct nvx_srq_params params;
	struct nvx_srq_layout layout;
	__u64 ring_offset;
	__u32 match;
	__be32 ip4;
	__u8 mac[6];
	__u16 reserved;
};

/**
 * struct nvx_srq_ring - header of every ring in the ring area
 * @prod: the producer's index: the kernel's for a completion ring, the
 *	instance's for a release ring.
 * @pad0: unused.
 * @cons: the consumer's index: the instance's for a completion ring, the
 *	kernel's for a release ring.
 * @pad1: unused.
 *
 * Entries follow the header. A completion ring whose @cons is more than
 * its size behind @prod, or ahead of it, counts as full: frames for that
 * queue are dropped (drops_cq_full) until it is sane again.
 */
struct nvx_srq_ring {
	__u32 prod;
	__u32 pad0[15];
	__u32 cons;
	__u32 pad1[15];
};

/* struct nvx_srq_cqe.flags */
#define NVX_SRQ_CQE_FILLER	0x1U	/* strides left unused at a buffer's end */
#define NVX_SRQ_CQE_TRUNCATED	0x2U	/* frame longer than a buffer, cut */

/**
 * struct nvx_srq_cqe - one completion
 * @buf: buffer index.
 * @stride: first stride of the frame in the buffer.
 * @strides: strides consumed.
 * @len: bytes of the frame at @stride (0 for a filler); with TRUNCATED
 *	the bytes stored (a whole buffer), not the frame's length.
 * @flags: NVX_SRQ_CQE_*.
 * @pad: written as 0.
 *
 * The instance releases @strides of @buf for every completion that is
 * not a filler; a filler's strides are released by the kernel.
 */
struct nvx_srq_cqe {
	__u32 buf;
	__u16 stride;
	__u16 strides;
	__u32 len;
	__u16 flags;
	__u16 pad;
};

/**
 * struct nvx_srq_rel - one release ring entry
 * @buf: buffer index.
 * @strides: strides given back (those of one or more completions).
 * @flags: must be 0.
 *
 * An entry that names no buffer, gives back 0 strides or more than the
 * NIC filled and the instance has not yet released, or has flags set, is
 * garbage: counted (release_garbage) and ignored.
 */
struct nvx_srq_rel {
	__u32 buf;
	__u16 strides;
	__u16 flags;
};

/**
 * struct nvx_srq_release - NVX_SRQ_IOC_RELEASE (on the set's fd)
 * @flags: in: must be 0.
 * @reserved: in: must be 0.
 * @released: out: release entries taken from the rings by this call.
 * @garbage: out: of these, entries ignored as garbage.
 *
 * Takes every release ring's new entries now (at most one ring's worth
 * per ring) and refills the NIC when posted strides are below the
 * low-water mark, without the rate limit of the refill on the receive
 * path. A refill looks at up to 256 held buffers per pool, oldest
 * first, and with NVX_SRQ_POISON returns at most 4 MiB of buffers.
 */
struct nvx_srq_release {
	__u32 flags;
	__u32 reserved;
	__u64 released;
	__u64 garbage;
};

/* struct nvx_srq_stats.queue: all queues */
#define NVX_SRQ_ALL_QUEUES	0xffffffffU

/**
 * struct nvx_srq_stats - NVX_SRQ_IOC_STATS (set fd); also inside
 *	struct nvx_srq_query
 * @flags: in: must be 0.
 * @queue: in: a queue index, or NVX_SRQ_ALL_QUEUES for the set's sums.
 *	Queue counters are the rx_, fillers, truncated and drops_ ones;
 *	the others are the set's and are reported for any @queue.
 * @ifindex: out: the NIC the set is attached to.
 * @nr_queues: out: queues of the set.
 * @rx_packets: out: frames completed (not fillers).
 * @rx_bytes: out: their bytes.
 * @rx_strides: out: strides the NIC consumed, fillers included.
 * @fillers: out: filler completions.
 * @truncated: out: frames longer than a buffer.
 * @drops_no_buf: out: frames dropped because no buffer was posted.
 * @drops_cq_full: out: frames dropped because the completion ring was
 *	full (or its index was not sane).
 * @refills: out: refills that ran.
 * @bufs_returned: out: buffers returned to the NIC after their last
 *	release.
 * @released: out: release entries taken.
 * @release_garbage: out: release entries ignored; bad release ring
 *	indexes count here too.
 * @tx_packets: out: frames sent through NVX_SRQ_IOC_TX.
 * @tx_bytes: out: their bytes.
 * @bufs_posted: out: buffers posted to the NIC and not yet started.
 * @bufs_filling: out: buffers a queue is filling.
 * @bufs_held: out: buffers filled, waiting for releases.
 * @posted_strides: out: strides the NIC can still fill.
 */
struct nvx_srq_stats {
	__u32 flags;
	__u32 queue;
	__u32 ifindex;
	__u32 nr_queues;
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 rx_strides;
	__u64 fillers;
	__u64 truncated;
	__u64 drops_no_buf;
	__u64 drops_cq_full;
	__u64 refills;
	__u64 bufs_returned;
	__u64 released;
	__u64 release_garbage;
	__u64 tx_packets;
	__u64 tx_bytes;
	__u32 bufs_posted;
	__u32 bufs_filling;
	__u32 bufs_held;
	__u32 posted_strides;
};

/**
 * struct nvx_srq_query - NVX_IOC_SRQ_QUERY: the counters of the set on a NIC
 *	(with several sets: its catch-all set, or else its oldest)
 * @flags: in: must be 0.
 * @ifindex: in: the NIC, in the caller's network namespace.
 * @stats: in: @stats.flags (must be 0) and @stats.queue, as for
 *	NVX_SRQ_IOC_STATS; out: the rest of @stats.
 *
 * For a process that watches a NIC without holding the set's fd: the
 * set's owner (the creator's effective uid) or a caller with
 * CAP_NET_ADMIN over its network namespace.
 * Errors: -EINVAL, -ENODEV (no such ifindex), -EOPNOTSUPP (no
 * registered backend drives the NIC), -ENOENT (no set attached), -EPERM
 * (neither the owner's user nor CAP_NET_ADMIN).
 */
struct nvx_srq_query {
	__u32 flags;
	__u32 ifindex;
	struct nvx_srq_stats stats;
};

/**
 * struct nvx_srq_tx - NVX_SRQ_IOC_TX: send one frame out of the NIC
 * @flags: in: must be 0.
 * @len: in: frame length, from 14 (an Ethernet header) to the NIC's
 *	MTU + 14 (-EMSGSIZE).
 * @addr: in: the frame (an Ethernet frame without FCS).
 *
 * The frame leaves through the NIC's wire: the peer netdev receives it.
 * Errors: -EINVAL, -EMSGSIZE, -EFAULT, -ENXIO (the NIC is gone),
 * -ENOMEM, -ENETDOWN (the peer is down), -ENOBUFS (the peer's stack
 * refused the frame).
 */
struct nvx_srq_tx {
	__u32 flags;
	__u32 len;
	__u64 addr;
};

/* RSS indirection table entries (struct nvx_srq_steer) */
#define NVX_SRQ_RSS_ENTRIES	128

/**
 * struct nvx_srq_steer - NVX_SRQ_IOC_STEER: steer flows to queues
 * @flags: in: must be 0.
 * @nr_entries: in: NVX_SRQ_RSS_ENTRIES.
 * @table: in: address of @nr_entries __u16 queue indexes, each below
 *	nr_queues. A frame goes to table[hash % NVX_SRQ_RSS_ENTRIES], hash
 *	being the flow hash of its addresses and ports. A new set spreads
 *	the entries round-robin over its queues.
 */
struct nvx_srq_steer {
	__u32 flags;
	__u32 nr_entries;
	__u64 table;
};

/**
 * struct nvx_srq_info - NVX_IOC_SRQ_INFO: the set attached to a NIC (with
 *	several, its catch-all set, or else its oldest; as for QUERY)
 * @flags: in: must be 0.
 * @ifindex: in: the NIC, in the caller's network namespace.
 * @params: out: the set's shape.
 * @owner: out: thread-group id of the creator, in the caller's pid
 *	namespace; 0 when not visible there, or when the caller is neither
 *	the creator's user nor has CAP_NET_ADMIN (as for QUERY).
 * @reserved: in: must be 0.
 *
 * Needs no capability: a set's presence and shape are the NIC's.
 * Errors: -EINVAL, -ENODEV (no such ifindex), -EOPNOTSUPP (no
 * registered backend drives the NIC), -ENOENT (no set attached).
 */
struct nvx_srq_info {
	__u32 flags;
	__u32 ifindex;
	struct nvx_srq_params params;
	__u32 owner;
	__u32 reserved;
};

/* On /dev/nvx */
#define NVX_IOC_SRQ_CREATE	_IOWR(NVX_IOC_MAGIC, 0x70, struct nvx_srq_create)
#define NVX_IOC_SRQ_QUERY	_IOWR(NVX_IOC_MAGIC, 0x71, struct nvx_srq_query)
#define NVX_IOC_SRQ_INFO	_IOWR(NVX_IOC_MAGIC, 0x72, struct nvx_srq_info)

/* struct nvx_srq_notify.flags */
#define NVX_SRQ_NOTIFY_EVENTFD	0x1U	/* @vector_fd is an eventfd */
#define NVX_SRQ_NOTIFY_FLAGS	NVX_SRQ_NOTIFY_EVENTFD

/**
 * struct nvx_srq_notify - NVX_SRQ_IOC_NOTIFY: a wake-up per burst
 * @flags: in: NVX_SRQ_NOTIFY_EVENTFD: @vector_fd is an eventfd, signalled
 *	(its count + 1) instead of a user interrupt posted: a VMM binds it
 *	to a guest interrupt with KVM_IRQFD, and a halted guest is woken
 *	with no VMM on the way (ABI 2.5).
 * @queue: in: a queue of the set.
 * @vector_fd: in: a vector fd (NVX_IOC_UINTR_VECTOR_FD) of the caller, an
 *	eventfd with NVX_SRQ_NOTIFY_EVENTFD, or -1 for none.
 * @reserved: in: must be 0.
 *
 * With a vector or an eventfd set, the queue posts or signals it when it
 * writes a completion into a completion ring the instance had emptied
 * (its ``cons`` equal to the ring's ``prod`` before the write): once per
 * burst, not per frame. Posts of a pending vector merge; an eventfd
 * counts. A queue has one or the other: setting one drops what was set.
 * The queue holds a vector until it is replaced, the set goes, or a post
 * fails because the vector fd was closed or its thread's registration
 * ended (then it drops it); an eventfd until it is replaced or the set
 * goes. Errors: -EINVAL (flags, reserved, a queue out of range, an fd
 * that is not a vector fd, or not an eventfd), -EBADF, -EFAULT,
 * -EOPNOTSUPP (a vector without user interrupts).
 */
struct nvx_srq_notify {
	__u32 flags;
	__u32 queue;
	__s32 vector_fd;
	__u32 reserved;
};

/* struct nvx_srq_tx_ring.entries: at most this many */
#define NVX_SRQ_TX_MAX_ENTRIES	4096

/**
 * struct nvx_srq_tx_hdr - the head of a TX ring in a grant (ABI 2.6)
 * @prod: written by the instance: descriptors posted, free-running.
 * @pad0: padding: @prod and @cons on cache lines of their own.
 * @cons: written by the kernel: descriptors taken, free-running.
 * @stopped: written by the kernel: 0, or why the ring stopped (enum
 *	nvx_srq_tx_stop).
 * @pad1: padding.
 *
 * The ring (NVX_SRQ_IOC_TX_RING) is this header, then its descriptors.
 */
struct nvx_srq_tx_hdr {
	__u32 prod;
	__u32 pad0[15];
	__u32 cons;
	__u32 stopped;
	__u32 pad1[14];
};

/**
 * struct nvx_srq_txd - one descriptor of a TX ring
 * @addr: byte offset of the frame in the set's grant (any of its bytes:
 *	an RX buffer the instance holds, for an echo in place, too).
 * @len: the frame's bytes, with its Ethernet header: ETH_HLEN (14) to
 *	ETH_HLEN + the NIC's MTU.
 * @flags: must be 0.
 */
struct nvx_srq_txd {
	__u64 addr;
	__u32 len;
	__u32 flags;
};

/* Why a TX ring stopped: struct nvx_srq_tx_hdr.stopped */
enum nvx_srq_tx_stop {
	NVX_SRQ_TX_STOP_INDEX = 1,	/* prod more than entries past cons */
	NVX_SRQ_TX_STOP_FLAGS = 2,	/* a descriptor's unknown flags */
	NVX_SRQ_TX_STOP_LEN = 3,	/* a length out of range, or the MTU's */
	NVX_SRQ_TX_STOP_ADDR = 4,	/* a frame not inside the grant */
};

/**
 * struct nvx_srq_tx_ring - NVX_SRQ_IOC_TX_RING: a TX ring in the grant
 * @flags: in: must be 0.
 * @entries: in: descriptors, a power of two up to
 *	NVX_SRQ_TX_MAX_ENTRIES; 0 (with @offset 0) removes the ring.
 * @offset: in: byte offset of the ring in the set's grant: page aligned,
 *	its header and @entries descriptors inside the grant and off the
 *	buffers and the ring area.
 *
 * For a set made with NVX_SRQ_RINGS_IN_GRANT, whose instance (a user
 * VM) posts frames to send in its own memory: it writes descriptors and
 * moves the header's prod; NVX_SRQ_IOC_TX_KICK sends them. The kernel zeroes the
 * ring when it sets it up (again), which restarts a stopped ring.
 * Errors: -EINVAL (flags, entries, alignment, an overlap, a set without
 * NVX_SRQ_RINGS_IN_GRANT), -ENOSPC (not inside the grant).
 */
struct nvx_srq_tx_ring {
	__u32 flags;
	__u32 entries;
	__u64 offset;
};

/**
 * struct nvx_srq_tx_kick - NVX_SRQ_IOC_TX_KICK: send the TX ring's frames
 * @flags: in: must be 0.
 * @sent: out: frames this call sent.
 * @dropped: out: frames this call took that the NIC did not send.
 * @stopped: out: 0, or why the ring is stopped (enum nvx_srq_tx_stop).
 * @bad: out: descriptors (and ring indexes) that stopped the ring since
 *	the set was made.
 *
 * Takes every descriptor between the header's cons and the prod read at
 * the start, checks it (flags, length, inside the grant), copies the
 * frame out of the grant and sends it through the set's NIC (nvxsim: to
 * its peer), then publishes cons. A bad descriptor stops the ring
 * (@stopped, and the header's) before it is taken: that instance's TX
 * only, until NVX_SRQ_IOC_TX_RING sets the ring up again; a stopped
 * ring's kick sends nothing and succeeds. Errors: -EINVAL (flags),
 * -ENOENT (no TX ring), -ENXIO (the NIC went, met by a posted frame:
 * that one and the rest stay posted), -ENOMEM (the same); @sent and
 * @dropped are written back with an error too (what the call did
 * before it).
 */
struct nvx_srq_tx_kick {
	__u32 flags;
	__u32 sent;
	__u32 dropped;
	__u32 stopped;
	__u64 bad;
};

/* On an SRQ set's fd */
#define NVX_SRQ_IOC_RELEASE	_IOWR(NVX_IOC_MAGIC, 0x78, struct nvx_srq_release)
#define NVX_SRQ_IOC_STATS	_IOWR(NVX_IOC_MAGIC, 0x79, struct nvx_srq_stats)
#define NVX_SRQ_IOC_TX		_IOW(NVX_IOC_MAGIC, 0x7a, struct nvx_srq_tx)
#define NVX_SRQ_IOC_STEER	_IOW(NVX_IOC_MAGIC, 0x7b, struct nvx_srq_steer)
#define NVX_SRQ_IOC_NOTIFY	_IOW(NVX_IOC_MAGIC, 0x7c, struct nvx_srq_notify)
#define NVX_SRQ_IOC_TX_RING	_IOW(NVX_IOC_MAGIC, 0x7d, struct nvx_srq_tx_ring)
#define NVX_SRQ_IOC_TX_KICK	_IOWR(NVX_IOC_MAGIC, 0x7e, struct nvx_srq_tx_kick)

#endif /* _UAPI_NVX_SRQ_H */
