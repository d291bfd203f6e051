/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nvx: the memory pool and grants.
 *
 * Three words, each with one meaning:
 *  - a piece is 2 MiB (NVX_POOL_PIECE_SHIFT), the unit memory is
 *    counted, granted and mapped in (one PMD each);
 *  - a chunk is what the pool allocated in one go: a physically
 *    contiguous run of one or more pieces (2 MiB to 1 GiB);
 *  - a block is 64 KiB (NVX_POOL_BLOCK_SHIFT), the unit of small grants
 *    (NVX_GRANT_BLOCKS): a piece the pool splits into 32 blocks serves
 *    the part of grants smaller than a piece, mapped page by page.
 * The pool holds chunks per NUMA node, each clean (zeroed), granted or
 * dirty (returned, not yet zeroed); a grant that takes part of a chunk
 * splits it. A grant can be sealed into a read-only template, and cloned:
 * a clone is a grant that shares the template's pages until it writes
 * them (copy on write). A background scrubber turns dirty chunks clean. A grant is
 * a file descriptor owning some pieces; mmap() maps them; the last
 * reference (the fd and every mapping) returns them as dirty.
 *
 * The fields are documented here; Documentation/nvx/pool.rst has the
 * behaviour and the errors of every call.
 */
#ifndef _UAPI_NVX_POOL_H
#define _UAPI_NVX_POOL_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <nvx/nvx.h>

/* Any NUMA node. */
#define NVX_NODE_ANY		0xffffffffU

/* A piece: 2 MiB (order 9 on 4 KiB pages), also the default chunk. */
#define NVX_POOL_PIECE_SHIFT	21
/* A block: 64 KiB, physically contiguous and aligned; 32 per piece. */
#define NVX_POOL_BLOCK_SHIFT	16
/* Largest chunk a grow may ask for: 1 GiB. */
#define NVX_POOL_CHUNK_SHIFT_MAX	30

/**
 * struct nvx_pool_resize - NVX_IOC_POOL_GROW and NVX_IOC_POOL_SHRINK
 * @flags: in: must be 0.
 * @node: in: the NUMA node; NVX_NODE_ANY spreads over the online nodes
 *	(grow) or takes from any node (shrink).
 * @bytes: in: how much to add or remove; rounded up to whole 2 MiB.
 * @done: out: bytes actually added or removed, also on failure.
 * @chunk_shift: in: grow: log2 of the largest chunk to allocate, from
 *	NVX_POOL_PIECE_SHIFT to NVX_POOL_CHUNK_SHIFT_MAX, or 0 for
 *	NVX_POOL_PIECE_SHIFT. Grow takes chunks of that size while the
 *	allocator delivers them, then halves the size, down to 2 MiB.
 *	Shrink: must be 0.
 * @reserved: in: must be 0.
 *
 * Grow fails with -ENOMEM when the node could not deliver all of @bytes;
 * what it did add stays in the pool and is reported in @done. Shrink
 * releases pieces split into blocks first, those none of whose blocks is
 * granted, pinned or being zeroed (the pool splits pieces again on
 * demand), then clean chunks, then dirty ones; granted chunks cannot be
 * released, and a shrink that could not release all of @bytes fails
 * with -EBUSY after releasing what it could.
 * Neither ever waits for a grant to be returned. Both need CAP_SYS_ADMIN
 * (-EPERM).
 */
struct nvx_pool_resize {
	__u32 flags;
	__u32 node;
	__u64 bytes;
	__u64 done;
	__u32 chunk_shift;
	__u32 reserved;
};

/**
 * struct nvx_pool_stats - NVX_IOC_POOL_STATS
 * @flags: in: must be 0.
 * @node: in: the NUMA node, or NVX_NODE_ANY for the sum of all nodes.
 * @nr_nodes: out: nr_node_ids, the bound for @node.
 * @reserved: in: must be 0.
 * @piece_bytes: out: the size of a piece, the unit of the counts: 2 MiB.
 * @total_bytes: out: memory in the pool (clean + dirty + granted).
 * @clean_bytes: out: zeroed and ready to grant (free blocks included,
 *	which serve only the blocks of NVX_GRANT_BLOCKS grants).
 * @dirty_bytes: out: returned, waiting for the scrubber (this includes
 *	chunks whose pages are still pinned by someone else).
 * @granted_bytes: out: owned by live grants.
 * @grants: out: grants created since boot.
 * @grants_live: out: grants not yet released.
 * @grant_failures: out: grant requests refused for want of memory.
 * @scrubbed_bytes: out: bytes zeroed by the scrubber since boot.
 * @scrub_ns: out: time the scrubber spent zeroing, in nanoseconds.
 * @sync_zeroed_bytes: out: bytes zeroed on a grant's own path.
 * @chunks: out: number of chunks in the pool, in any state, of any size
 *	(a chunk larger than 2 MiB counts once; a grant that takes part of
 *	one splits it in two). Pieces split into blocks are not chunks.
 * @block_bytes: out: the size of a block: 64 KiB.
 * @small_bytes: out: memory in pieces split into blocks (part of
 *	@total_bytes; their blocks are counted in @clean_bytes,
 *	@dirty_bytes and @granted_bytes by state).
 * @small_splits: out: pieces split into blocks since boot (each one
 *	given back to the page allocator and replaced by 2 MiB of single
 *	pages, zeroed before use).
 *
 * @block_bytes and the fields after it were added later: a caller with
 * the older, shorter struct gets the fields it knows.
 * Needs only /dev/nvx access. Fails with -EINVAL for a node that does
 * not exist or is offline.
 */
struct nvx_pool_stats {
	__u32 flags;
	__u32 node;
	__u32 nr_nodes;
	__u32 reserved;
	__u64 piece_bytes;
	__u64 total_bytes;
	__u64 clean_bytes;
	__u64 dirty_bytes;
	__u64 granted_bytes;
	__u64 grants;
	__u64 grants_live;
	__u64 grant_failures;
	__u64 scrubbed_bytes;
	__u64 scrub_ns;
	__u64 sync_zeroed_bytes;
	__u64 chunks;
	__u64 block_bytes;
	__u64 small_bytes;
	__u64 small_splits;
};

/*
 * When clean chunks run short (dirty ones would cover the request), the
 * default zeroes dirty chunks synchronously on the grant's path.
 */
#define NVX_GRANT_WAIT		0x1U	/* wait for the scrubber */
#define NVX_GRANT_CLEAN_ONLY	0x2U	/* fail with -EAGAIN */
#define NVX_GRANT_CLOEXEC	0x4U	/* O_CLOEXEC on the new fd */
/* size in 64 KiB blocks, not rounded up to whole 2 MiB pieces */
#define NVX_GRANT_BLOCKS	0x8U
#define NVX_GRANT_FLAGS		(NVX_GRANT_WAIT | NVX_GRANT_CLEAN_ONLY | \
				 NVX_GRANT_CLOEXEC | NVX_GRANT_BLOCKS)

/**
 * struct nvx_grant_create - NVX_IOC_GRANT
 * @flags: in: NVX_GRANT_* bits; WAIT and CLEAN_ONLY exclude each other.
 * @node: in: the NUMA node, or NVX_NODE_ANY (the caller's node first).
 * @bytes: in: size; rounded up to whole pieces, or with
 *	NVX_GRANT_BLOCKS a multiple of 64 KiB (-EINVAL otherwise): whole
 *	pieces for as much of it as they cover, blocks for the rest (at
 *	most 31). 0 fails with -EINVAL.
 * @fd: out: the grant file descriptor.
 * @reserved: in: must be 0.
 * @granted: out: the size of the grant (@bytes rounded up).
 *
 * Errors: -EINVAL (flags, size 0 or not a multiple of 64 KiB with
 * NVX_GRANT_BLOCKS, bad node), -EFBIG (above the per-grant
 * maximum), -EDQUOT (the caller's RLIMIT_MEMLOCK, unless CAP_IPC_LOCK),
 * -ENOSPC (the pool does not hold enough free pieces on that node),
 * -ENOMEM (the page allocator could not replace a piece the pool split
 * into blocks; the pool is one piece smaller),
 * -EAGAIN (CLEAN_ONLY and too few clean pieces), -EINTR (WAIT
 * interrupted), -EMFILE.
 */
struct nvx_grant_create {
	__u32 flags;
	__u32 node;
	__u64 bytes;
	__s32 fd;
	__u32 reserved;
	__u64 granted;
};

/**
 * struct nvx_grant_info - NVX_GRANT_IOC_INFO, on a grant fd
 * @flags: in: must be 0.
 * @node: out: the node of the grant's memory (its pieces and blocks).
 * @bytes: out: the size of the grant.
 * @piece_bytes: out: the size of a piece: 2 MiB.
 * @nr_pieces: out: whole pieces, the first @nr_pieces * @piece_bytes of
 *	the grant (each mapped with one PMD where the mapping is aligned).
 * @block_bytes: out: the size of a block: 64 KiB.
 * @nr_blocks: out: blocks after the pieces, mapped page by page:
 *	@bytes = @nr_pieces * @piece_bytes + @nr_blocks * @block_bytes.
 *	NVX_GRANT_IOC_RANGES shows which pieces and blocks are physically
 *	contiguous.
 *
 * @block_bytes and @nr_blocks were added later: a caller with the older,
 * shorter struct gets the fields it knows.
 */
struct nvx_grant_info {
	__u32 flags;
	__u32 node;
	__u64 bytes;
	__u64 piece_bytes;
	__u64 nr_pieces;
	__u64 block_bytes;
	__u64 nr_blocks;
};

/**
 * struct nvx_grant_range - one physically contiguous range
 * @phys: physical address.
 * @bytes: length.
 */
struct nvx_grant_range {
	__u64 phys;
	__u64 bytes;
};

/**
 * struct nvx_grant_ranges - NVX_GRANT_IOC_RANGES, on a grant fd
 * @flags: in: must be 0.
 * @count: in: room in @ranges; out: number of ranges of the grant (also
 *	when @ranges was too small: then the call fails with -EOVERFLOW
 *	after filling the first @count).
 * @ranges: in: user pointer to an array of struct nvx_grant_range.
 *
 * Adjacent pieces and blocks are merged into one range. Needs
 * CAP_SYS_ADMIN. A clone has no ranges of its own (-EINVAL).
 */
struct nvx_grant_ranges {
	__u32 flags;
	__u32 count;
	__u64 ranges;
};

/**
 * struct nvx_grant_seal - NVX_GRANT_IOC_SEAL, on a grant fd
 * @flags: in: must be 0.
 * @reserved: in: must be 0.
 *
 * Makes the grant a template, read-only for good: later mmap() with
 * PROT_WRITE fails with -EPERM, read-only mappings cannot be made
 * writable (mprotect() fails with -EACCES), and no kernel user (a user
 * VM, a shared RX queue) may take it (-EPERM). Sealing a template again
 * succeeds and changes nothing. Errors: -EINVAL (flags, reserved, a
 * clone), -EBUSY (a shared mapping that is or may become writable, a
 * kernel user, or a page pinned for DMA: FOLL_PIN). While the first seal
 * looks, an mmap() of the grant fails with -EPERM.
 */
struct nvx_grant_seal {
	__u32 flags;
	__u32 reserved;
};

#define NVX_CLONE_CLOEXEC	0x1U	/* O_CLOEXEC on the clone's fd */
#define NVX_CLONE_FLAGS		NVX_CLONE_CLOEXEC

/**
 * struct nvx_grant_clone - NVX_GRANT_IOC_CLONE, on a template's fd
 * @flags: in: NVX_CLONE_* bits.
 * @fd: out: the clone, a grant fd of the template's size.
 * @bytes: out: its size.
 *
 * O(1) in the template's size: the clone shares every page of the
 * template until it writes one; the first write to a page (through a
 * mapping, KVM or GUP) gives the clone its own copy, a page from the page
 * allocator charged to the memory cgroup and the RLIMIT_MEMLOCK of the
 * process that made the clone (a fault that cannot have its copy gets
 * SIGBUS). A read can make a copy too, in a 2 MiB piece the clone has
 * written, once per piece and mapping (Documentation/nvx/pool.rst). The
 * template lives while any clone does. A clone is not a
 * template and cannot be cloned or sealed. Errors: -EINVAL (flags, not a
 * template), -ENOMEM, -EMFILE.
 */
struct nvx_grant_clone {
	__u32 flags;
	__s32 fd;
	__u64 bytes;
};

/* On /dev/nvx. */
#define NVX_IOC_POOL_GROW	_IOWR(NVX_IOC_MAGIC, 0x10, struct nvx_pool_resize)
#define NVX_IOC_POOL_SHRINK	_IOWR(NVX_IOC_MAGIC, 0x11, struct nvx_pool_resize)
#define NVX_IOC_POOL_STATS	_IOWR(NVX_IOC_MAGIC, 0x12, struct nvx_pool_stats)
#define NVX_IOC_GRANT		_IOWR(NVX_IOC_MAGIC, 0x13, struct nvx_grant_create)
/* On a grant fd. */
#define NVX_GRANT_IOC_INFO	_IOWR(NVX_IOC_MAGIC, 0x18, struct nvx_grant_info)
#define NVX_GRANT_IOC_RANGES	_IOWR(NVX_IOC_MAGIC, 0x19, struct nvx_grant_ranges)
#define NVX_GRANT_IOC_SEAL	_IOWR(NVX_IOC_MAGIC, 0x1a, struct nvx_grant_seal)
#define NVX_GRANT_IOC_CLONE	_IOWR(NVX_IOC_MAGIC, 0x1b, struct nvx_grant_clone)

#endif /* _UAPI_NVX_POOL_H */
