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
#include <linux/xarray.h>
#include <uapi/nvx/pool.h>

/* A piece: the unit of counting, granting and mapping (one folio). */
#define NVX_PIECE_ORDER		(NVX_POOL_PIECE_SHIFT - PAGE_SHIFT)
#define NVX_PIECE_PAGES		BIT(NVX_PIECE_ORDER)
#define NVX_PIECE_BYTES		BIT_ULL(NVX_POOL_PIECE_SHIFT)
/* A block: the unit of small grants, 32 to a piece split for them. */
#define NVX_BLOCK_ORDER		(NVX_POOL_BLOCK_SHIFT - PAGE_SHIFT)
#define NVX_BLOCK_PAGES		BIT(NVX_BLOCK_ORDER)
#define NVX_BLOCK_BYTES		BIT_ULL(NVX_POOL_BLOCK_SHIFT)
#define NVX_PIECE_BLOCKS	(NVX_PIECE_PAGES / NVX_BLOCK_PAGES)
#define NVX_SMALL_ALL		GENMASK(NVX_PIECE_BLOCKS - 1, 0)

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
 * struct nvx_small - a piece split into blocks, for small grants
 * @list: on its node's small list.
 * @page: first of NVX_PIECE_PAGES physically contiguous order-0 pages
 *	(split_page()): each has a reference count of its own, so that a
 *	pin is seen on the block it pins; the pool holds one on each.
 * @nid: NUMA node of the memory.
 * @free: blocks zeroed and not granted (bit i: block i).
 * @dirty: blocks returned, to be zeroed.
 * @pinned: returned blocks someone else still references.
 * @scrubbing: blocks off the other masks while being zeroed.
 *
 * A block in none of the masks is granted. The masks are under the
 * node's lock.
 */
struct nvx_small {
	struct list_head list;
	struct page *page;
	int nid;
	u32 free;
	u32 dirty;
	u32 pinned;
	u32 scrubbing;
};

/**
 * struct nvx_block_ref - one block of a grant
 * @s: the piece it is in.
 * @idx: its index in @s.
 * @dirty: taken dirty: the grant zeroes it before handing it out.
 */
struct nvx_block_ref {
	struct nvx_small *s;
	u8 idx;
	bool dirty;
};

/**
 * struct nvx_grant - memory owned by one grant file
 * @chunks: the chunks, in mapping order.
 * @pieces: the head page of every 2 MiB piece, in mapping order.
 * @nr_pieces: number of pieces in @pieces (the chunks hold as many).
 * @blocks: the 64 KiB blocks after the pieces, in mapping order.
 * @nr_blocks: number of blocks in @blocks, below NVX_PIECE_BLOCKS.
 * @nid: node of the chunks.
 * @user: the user charged for the memory (RLIMIT_MEMLOCK), or NULL.
 * @accounted: pages charged to @user (a clone: its copies).
 * @memlock: a clone: the cloner's RLIMIT_MEMLOCK in pages, which its
 *	copies are held to whoever's write makes them.
 * @lock: protects @sealed, @kusers and a clone's @accounted.
 * @sealed: a template, read-only for good (NVX_GRANT_IOC_SEAL).
 * @kusers: kernel users that may write (nvx_grant_fget()).
 * @mapping: the address space of the grant's file (its mappings).
 * @tmpl: a clone's template; NULL for a grant of pool memory. A clone
 *	has the template's @nr_pieces and @nr_blocks (its size) but none of
 *	the pool's memory: @chunks is empty, @pieces NULL.
 * @tmpl_file: the template's file, referenced while the clone lives.
 * @copies: a clone's own pages, by page offset: each written page.
 * @nr_copies: number of pages in @copies.
 * @memcg: the memory cgroup a clone's pages are charged to (the
 *	cloner's), or NULL.
 */
struct nvx_grant {
	struct list_head chunks;
	struct page **pieces;
	unsigned long nr_pieces;
	struct nvx_block_ref blocks[NVX_PIECE_BLOCKS - 1];
	unsigned long nr_blocks;
	int nid;
	struct user_struct *user;
	unsigned long accounted;
	unsigned long memlock;
	spinlock_t lock;		/* @sealed, @kusers */
	bool sealed;
	unsigned int kusers;
	struct address_space *mapping;
	struct nvx_grant *tmpl;
	struct file *tmpl_file;
	struct xarray copies;
	atomic_long_t nr_copies;
	struct mem_cgroup *memcg;
};

/**
 * struct nvx_pool_node - the pool's memory on one NUMA node
 * @lock: protects the lists and the counters.
 * @clean: zeroed chunks.
 * @dirty: returned chunks, to be zeroed.
 * @nr_total: 2 MiB pieces on this node in any state; the counters below
 *	count pieces too, except @nr_chunks, @merges and the block counts.
 *	A piece being split, or a split piece being rejoined, stays in it
 *	while it is on no list (for as long as its replacement is being
 *	made), so that the pool's size never seems to dip.
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
 * @small: pieces split into blocks (struct nvx_small); counted in
 *	@nr_total, and in none of the piece counters above.
 * @nr_small: pieces on @small.
 * @nr_blocks_free: blocks of @small in their free masks; likewise
 * @nr_blocks_dirty: dirty,
 * @nr_blocks_pinned: pinned,
 * @nr_blocks_scrubbing: being zeroed,
 * @nr_blocks_granted: and granted.
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
	struct list_head small;
	unsigned long nr_small;
	unsigned long nr_blocks_free;
	unsigned long nr_blocks_dirty;
	unsigned long nr_blocks_pinned;
	unsigned long nr_blocks_scrubbing;
	unsigned long nr_blocks_granted;
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
 * @small_splits: pieces split into blocks.
 * @small_rejoins: split pieces made whole pieces again.
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
	atomic64_t small_splits;
	atomic64_t small_rejoins;
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

/* The first page of block @i of @s. */
static inline struct page *nvx_small_block(struct nvx_small *s,
					   unsigned int i)
{
	return nth_page(s->page, i << NVX_BLOCK_ORDER);
}

bool nvx_chunk_busy(struct nvx_chunk *c);
void nvx_pages_zero(struct page *page, unsigned long nr);
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
unsigned long nvx_pool_take_releasable(int nid, unsigned long max,
				       bool dirty_first, bool keep_total,
				       struct page **page,
				       struct nvx_chunk **whole);

/* grant.c */
int nvx_account(struct user_struct *user, unsigned long pages);
int nvx_account_limit(struct user_struct *user, unsigned long pages,
		      unsigned long limit);
void nvx_unaccount(struct user_struct *user, unsigned long pages);
struct nvx_grant *nvx_grant_alloc(void);
struct file *nvx_grant_file(struct nvx_grant *g, u64 bytes);
void nvx_grant_free(struct nvx_grant *g);

/* clone.c */
extern const struct vm_operations_struct nvx_clone_vm_ops;
struct page *nvx_clone_page(struct nvx_grant *g, unsigned long pgoff);
void nvx_clone_free(struct nvx_grant *g);
int nvx_grant_ioc_seal(struct nvx_ucmd *ucmd);
int nvx_grant_ioc_clone(struct nvx_ucmd *ucmd);

/* small.c */
bool nvx_block_busy(struct nvx_small *s, unsigned int i);
long nvx_small_take(int nid, unsigned long nr, bool dirty_ok,
		    struct nvx_block_ref *out);
void nvx_small_return(struct nvx_block_ref *b, unsigned long nr);
bool nvx_small_may_succeed(int nid, unsigned long nr, bool dirty_ok);
u64 nvx_small_scrub_one(int *nidp);
void nvx_small_recheck_pinned(void);
bool nvx_small_has_dirty(void);
bool nvx_small_has_pinned(void);
unsigned long nvx_small_shrink(int nid, unsigned long max);
void nvx_small_free_all(int nid);
void nvx_small_untake(struct nvx_block_ref *b, unsigned long nr);
unsigned long nvx_small_rejoin(void);

#endif /* _KERNEL_NVX_POOL_H */
