/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx pool: declarations shared by pool.c (chunks, nodes, resize),
 * scrub.c (the scrubber) and grant.c (grant files).
 */
#ifndef _KERNEL_NVX_POOL_H
#define _KERNEL_NVX_POOL_H

#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/nvx.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <uapi/nvx/pool.h>

/* A piece: the unit of counting, granting and mapping (one folio). */
#define NVX_PIECE_ORDER		(NVX_POOL_PIECE_SHIFT - PAGE_SHIFT)
#define NVX_PIECE_PAGES		BIT(NVX_PIECE_ORDER)
#define NVX_PIECE_BYTES		BIT_ULL(NVX_POOL_PIECE_SHIFT)

/**
 * struct nvx_chunk - one chunk of pool memory
 * @list: on its node's clean, dirty or pinned list, or on its grant's.
 * @page: first page of @nr physically contiguous compound folios of
 *	NVX_PIECE_PAGES pages each; the pool holds one reference to each.
 * @nr: number of folios (2 MiB pieces), at least 1.
 * @nid: NUMA node of the memory.
 * @origin: pfn of the first page of the allocation the chunk was carved
 *	from (splits keep it): clean chunks of one origin (@origin and
 *	@origin_nr) that touch merge back into one (nvx_chunk_clean()), so
 *	that a chunk never spans two allocations and the chunk count returns
 *	to what grow made.
 * @origin_nr: pieces in that allocation when it was made.
 */
struct nvx_chunk {
	struct list_head list;
	struct page *page;
	unsigned long nr;
	int nid;
	unsigned long origin;
	unsigned long origin_nr;
};

/**
 * struct nvx_pool_node - the pool's memory on one NUMA node
 * @lock: protects the lists and the counters.
 * @clean: zeroed chunks.
 * @dirty: returned chunks, to be zeroed.
 * @nr_total: 2 MiB pieces on this node in any state; the counters below
 *	count pieces too, except @nr_chunks.
 * @nr_clean: pieces on @clean.
 * @nr_dirty: pieces on @dirty.
 * @nr_granted: pieces owned by grants.
 * @nr_scrubbing: dirty pieces off the lists while the scrubber zeroes or
 *	checks them.
 * @pinned: returned chunks with a page someone else still references
 *	(a long-term pin, a pipe buffer): neither zeroed nor granted until
 *	the scrubber finds them free again; checked once a second.
 * @nr_pinned: pieces on @pinned.
 * @nr_chunks: chunks (of any size) on this node in any state.
 * @merges: clean chunks merged into a neighbour of the same origin.
 */
struct nvx_pool_node {
	spinlock_t lock;		/* lists and counters below */
	struct list_head clean;
	struct list_head dirty;
	unsigned long nr_total;
	unsigned long nr_clean;
	unsigned long nr_dirty;
	unsigned long nr_granted;
	unsigned long nr_scrubbing;
	struct list_head pinned;
	unsigned long nr_pinned;
	unsigned long nr_chunks;
	unsigned long merges;
};

/**
 * struct nvx_pool - the pool
 * @nodes: one per possible node (nr_node_ids).
 * @resize_lock: serialises grow and shrink.
 * @scrubber: the scrubber thread.
 * @scrub_wq: the scrubber waits here for returned chunks.
 * @clean_wq: grants wait here for clean memory.
 * @returns: grant returns so far; the scrubber's "anything new?".
 * @debugfs: the pool's debugfs directory.
 * @grants: grants created.
 * @grants_live: grants not yet released.
 * @grant_failures: grants refused for want of memory.
 * @scrubbed_bytes: bytes the scrubber zeroed.
 * @scrub_ns: time it spent zeroing.
 * @sync_zeroed_bytes: bytes zeroed on a grant's own path.
 */
struct nvx_pool {
	struct nvx_pool_node *nodes;
	struct mutex resize_lock;	/* serialises grow and shrink */
	struct task_struct *scrubber;
	wait_queue_head_t scrub_wq;
	wait_queue_head_t clean_wq;
	atomic_t returns;
	struct dentry *debugfs;
	atomic64_t grants;
	atomic64_t grants_live;
	atomic64_t grant_failures;
	atomic64_t scrubbed_bytes;
	atomic64_t scrub_ns;
	atomic64_t sync_zeroed_bytes;
};

extern struct nvx_pool nvx_pool;

static inline struct nvx_pool_node *nvx_node(int nid)
{
	return &nvx_pool.nodes[nid];
}

static inline bool nvx_node_valid(u32 nid)
{
	return nid < nr_node_ids && node_online(nid);
}

/* The @i-th 2 MiB piece of @c. */
static inline struct page *nvx_chunk_piece(struct nvx_chunk *c,
					   unsigned long i)
{
	return nth_page(c->page, i << NVX_PIECE_ORDER);
}

bool nvx_chunk_busy(struct nvx_chunk *c);
void nvx_chunk_clean(struct nvx_pool_node *n, struct nvx_chunk *c);
void nvx_piece_zero(struct page *head);
void nvx_chunk_zero(struct nvx_chunk *c);
struct nvx_chunk *nvx_chunk_split(struct nvx_chunk *c, unsigned long nr,
				  struct nvx_chunk *rest);
void nvx_chunk_free(struct nvx_chunk *c);
int nvx_bytes_to_pieces(u64 bytes, unsigned long *nr);
int nvx_pool_check_req(u32 node, u64 bytes, unsigned long *nr);
unsigned long nvx_pool_total_pieces(void);
int nvx_scrubber(void *unused);
int nvx_pool_ioc_grant(struct nvx_ucmd *ucmd);

#endif /* _KERNEL_NVX_POOL_H */
