// SPDX-License-Identifier: GPL-2.0
/*
 * nvx pool: physical memory prepared and zeroed ahead of demand.
 *
 * The pool holds chunks per NUMA node: 2 MiB by default, up to 1 GiB
 * when a grow asks for larger ones. Memory is counted, granted and mapped
 * in 2 MiB pieces, each one compound folio of PMD order: GUP and KVM take
 * references on the folio, and the fault path maps a piece with one PMD
 * (do_set_pmd()) where the mapping is aligned. A larger chunk is a
 * physically contiguous run of such folios (alloc_contig_folios()); a
 * grant or a shrink that needs only part of one splits it. Chunks are
 * allocated unmovable (GFP_KERNEL, never ZONE_MOVABLE or CMA, and never on
 * an LRU list, so a long-term pin neither migrates nor fails) and zeroed
 * when they are added.
 *
 * A chunk is in exactly one state, and on the list of that state:
 *
 *   clean   (node->clean)   zeroed, ready to grant
 *   granted (grant->chunks) owned by one grant
 *   dirty   (node->dirty)   returned by a grant, not yet zeroed
 *
 * Grants take clean chunks; when they run short the caller chooses
 * between zeroing dirty chunks on its own path (the default), waiting for
 * the scrubber, or failing. The last reference to a grant (its file: the
 * fd and every mapping hold one) returns its chunks as dirty, once. The
 * scrubber, a kthread at the lowest priority, zeroes dirty chunks whose
 * pages nobody else references (a page still pinned by a device or a
 * long-term GUP user is left alone until the pin goes) and makes them
 * clean again. Shrink releases clean chunks first, then unpinned dirty
 * ones, and never waits for a grant.
 *
 * Locking: each node's lists and counters are under node->lock (a
 * spinlock: no sleeping, no allocation under it). pool.resize_lock
 * serialises grow and shrink.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/pagemap.h>
#include <linux/pfn.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <uapi/nvx/pool.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* A piece: the unit of counting, granting and mapping (one folio). */
#define NVX_CHUNK_ORDER		(NVX_POOL_CHUNK_SHIFT - PAGE_SHIFT)
#define NVX_CHUNK_PAGES		BIT(NVX_CHUNK_ORDER)
#define NVX_CHUNK_BYTES		BIT_ULL(NVX_POOL_CHUNK_SHIFT)

static char *boot_pool;
module_param(boot_pool, charp, 0444);
MODULE_PARM_DESC(boot_pool,
		 "memory to put in the pool at boot or load, spread over the online nodes (e.g. 1G)");

static uint boot_chunk_shift = NVX_POOL_CHUNK_SHIFT_MAX;
module_param(boot_chunk_shift, uint, 0444);
MODULE_PARM_DESC(boot_chunk_shift,
		 "log2 of the largest chunk boot_pool allocates (21: 2 MiB .. 30: 1 GiB, the default)");

static ulong grant_max_bytes;
module_param(grant_max_bytes, ulong, 0644);
MODULE_PARM_DESC(grant_max_bytes, "largest single grant in bytes (0: no limit)");

static uint scrub_rate_mbps;
module_param(scrub_rate_mbps, uint, 0644);
MODULE_PARM_DESC(scrub_rate_mbps,
		 "scrubber rate limit in MiB/s (0: as fast as it can, at the lowest priority)");

/**
 * struct nvx_chunk - one chunk of pool memory
 * @list: on its node's clean, dirty or pinned list, or on its grant's.
 * @page: first page of @nr physically contiguous compound folios of
 *	NVX_CHUNK_PAGES pages each; the pool holds one reference to each.
 * @nr: number of folios (2 MiB pieces), at least 1.
 * @nid: NUMA node of the memory.
 */
struct nvx_chunk {
	struct list_head list;
	struct page *page;
	unsigned long nr;
	int nid;
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
};

static struct {
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
} pool;

/**
 * struct nvx_grant - memory owned by one grant file
 * @chunks: the chunks, in mapping order.
 * @pieces: the head page of every 2 MiB piece, in mapping order.
 * @nr_pieces: number of pieces in @pieces (the chunks hold as many).
 * @nid: node of the chunks.
 * @user: the user charged for the memory (RLIMIT_MEMLOCK), or NULL.
 * @accounted: pages charged to @user.
 */
struct nvx_grant {
	struct list_head chunks;
	struct page **pieces;
	unsigned long nr_pieces;
	int nid;
	struct user_struct *user;
	unsigned long accounted;
};

static struct nvx_pool_node *nvx_node(int nid)
{
	return &pool.nodes[nid];
}

static bool nvx_node_valid(u32 nid)
{
	return nid < nr_node_ids && node_online(nid);
}

/* The @i-th 2 MiB piece of @c. */
static struct page *nvx_chunk_piece(struct nvx_chunk *c, unsigned long i)
{
	return nth_page(c->page, i << NVX_CHUNK_ORDER);
}

/*
 * Does anyone but the pool hold a reference to a piece of @c (a mapping
 * whose TLB flush is still pending, a GUP pin, a pipe buffer)?
 */
static bool nvx_chunk_busy(struct nvx_chunk *c)
{
	unsigned long i;

	for (i = 0; i < c->nr; i++)
		if (folio_ref_count(page_folio(nvx_chunk_piece(c, i))) != 1)
			return true;
	return false;
}

/* Zero the 2 MiB piece whose head page is @head. */
static void nvx_piece_zero(struct page *head)
{
	unsigned long i;

	for (i = 0; i < NVX_CHUNK_PAGES; i++) {
		clear_highpage(nth_page(head, i));
		if ((i & 63) == 63)
			cond_resched();
	}
}

static void nvx_chunk_zero(struct nvx_chunk *c)
{
	unsigned long i;

	for (i = 0; i < c->nr; i++)
		nvx_piece_zero(nvx_chunk_piece(c, i));
}

/*
 * Split @c after its first @nr pieces; the rest goes to @rest (a spare
 * descriptor), which is returned. The caller holds the node's lock.
 */
static struct nvx_chunk *nvx_chunk_split(struct nvx_chunk *c,
					 unsigned long nr,
					 struct nvx_chunk *rest)
{
	rest->page = nvx_chunk_piece(c, nr);
	rest->nr = c->nr - nr;
	rest->nid = c->nid;
	c->nr = nr;
	nvx_node(c->nid)->nr_chunks++;
	return rest;
}

/* A chunk of @nr pieces (a power of two) on node @nid, or NULL. */
static struct nvx_chunk *nvx_chunk_alloc(int nid, unsigned long nr)
{
	/* __GFP_ZERO prepares the memory here, off every grant's path */
	const gfp_t gfp = GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN |
			  __GFP_ZERO;
	struct page *page = NULL;
	struct nvx_chunk *c;

	c = kzalloc_node(sizeof(*c), GFP_KERNEL, nid);
	if (!c)
		return NULL;
	/*
	 * Unmovable and compound: every piece is a folio of its own, so
	 * that the fault path can map it with a PMD and every page's
	 * references count on its folio. Not folio_alloc(): the folios are
	 * the driver's, neither anonymous nor in the page cache, so they are
	 * not made rmappable (no deferred split).
	 */
	if (nr == 1)
		page = alloc_pages_node(nid, gfp | __GFP_COMP | __GFP_NORETRY,
					NVX_CHUNK_ORDER);
#ifdef CONFIG_CONTIG_ALLOC
	else
		page = alloc_contig_folios(nr, NVX_CHUNK_ORDER, gfp, nid, NULL);
#endif
	if (!page) {
		kfree(c);
		return NULL;
	}
	c->page = page;
	c->nr = nr;
	c->nid = nid;
	return c;
}

/* Drop the pool's references: each folio goes when its last other one does. */
static void nvx_chunk_free(struct nvx_chunk *c)
{
	unsigned long i;

	for (i = 0; i < c->nr; i++)
		folio_put(page_folio(nvx_chunk_piece(c, i)));
	kfree(c);
}

/*
 * Add up to @nr pieces to node @nid in chunks of at most 1 << @shift
 * bytes, halving the chunk size whenever the allocator cannot deliver
 * it; return how many pieces were added.
 */
static unsigned long nvx_pool_grow_node(int nid, unsigned long nr,
					unsigned int shift)
{
	unsigned long size = 1UL << (shift - NVX_POOL_CHUNK_SHIFT);
	struct nvx_pool_node *n = nvx_node(nid);
	unsigned long done = 0;

	while (done < nr) {
		struct nvx_chunk *c;

		while (size > nr - done)
			size >>= 1;
		c = nvx_chunk_alloc(nid, size);
		if (!c) {
			if (size == 1)
				break;
			size >>= 1;
			continue;
		}
		spin_lock(&n->lock);
		list_add_tail(&c->list, &n->clean);
		n->nr_clean += c->nr;
		n->nr_total += c->nr;
		n->nr_chunks++;
		spin_unlock(&n->lock);
		done += c->nr;
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	if (done)
		wake_up_all(&pool.clean_wq);
	return done;
}

/*
 * Take one releasable chunk of at most @max pieces off node @nid: clean
 * first, then dirty ones nobody else references; a larger one is split
 * and the rest stays, in *@spare (which is then used up). Returns NULL
 * when there is none.
 */
static struct nvx_chunk *nvx_pool_take_releasable(int nid, unsigned long max,
						  struct nvx_chunk **spare)
{
	struct nvx_pool_node *n = nvx_node(nid);
	struct nvx_chunk *c, *rest;
	bool clean = true;

	spin_lock(&n->lock);
	c = list_first_entry_or_null(&n->clean, struct nvx_chunk, list);
	if (c)
		goto found;
	clean = false;
	while ((c = list_first_entry_or_null(&n->dirty, struct nvx_chunk,
					     list))) {
		if (!nvx_chunk_busy(c))
			goto found;
		n->nr_dirty -= c->nr;
		list_move_tail(&c->list, &n->pinned);
		n->nr_pinned += c->nr;
	}
	spin_unlock(&n->lock);
	return NULL;
found:
	if (c->nr > max) {
		/* the rest stays where @c was, in the same state */
		rest = nvx_chunk_split(c, max, *spare);
		*spare = NULL;
		list_add(&rest->list, &c->list);
	}
	if (clean)
		n->nr_clean -= c->nr;
	else
		n->nr_dirty -= c->nr;
	list_del(&c->list);
	n->nr_total -= c->nr;
	n->nr_chunks--;
	spin_unlock(&n->lock);
	return c;
}

static unsigned long nvx_pool_shrink_node(int nid, unsigned long nr)
{
	struct nvx_chunk *spare = NULL;
	unsigned long done = 0;

	while (done < nr) {
		struct nvx_chunk *c;

		if (!spare)
			spare = kzalloc(sizeof(*spare), GFP_KERNEL);
		if (!spare)
			break;
		c = nvx_pool_take_releasable(nid, nr - done, &spare);
		if (!c)
			break;
		done += c->nr;
		nvx_chunk_free(c);
		cond_resched();
	}
	kfree(spare);
	return done;
}

static int nvx_bytes_to_chunks(u64 bytes, unsigned long *nr)
{
	if (!bytes)
		return -EINVAL;
	if (bytes > U64_MAX - (NVX_CHUNK_BYTES - 1))
		return -EINVAL;
	*nr = DIV_ROUND_UP_ULL(bytes, NVX_CHUNK_BYTES);
	return 0;
}

/*
 * Grow (@grow, in chunks of at most 1 << @shift bytes) or shrink by @nr
 * pieces on @node or spread over all.
 */
static unsigned long nvx_pool_resize(u32 node, unsigned long nr, bool grow,
				     unsigned int shift)
{
	nodemask_t online = node_states[N_ONLINE];
	unsigned long done = 0, share, step;
	int nid, nodes, i;

	mutex_lock(&pool.resize_lock);
	if (node != NVX_NODE_ANY) {
		done = grow ? nvx_pool_grow_node(node, nr, shift) :
			      nvx_pool_shrink_node(node, nr);
		goto out;
	}
	/* spread evenly; a node that falls short leaves the rest to others */
	nodes = nodes_weight(online);
	i = 0;
	for_each_node_mask(nid, online) {
		share = DIV_ROUND_UP(nr - done, nodes - i);
		step = grow ? nvx_pool_grow_node(nid, share, shift) :
			      nvx_pool_shrink_node(nid, share);
		done += step;
		i++;
	}
	/* a second pass takes what the first one left */
	for_each_node_mask(nid, online) {
		if (done >= nr)
			break;
		done += grow ? nvx_pool_grow_node(nid, nr - done, shift) :
			       nvx_pool_shrink_node(nid, nr - done);
	}
out:
	mutex_unlock(&pool.resize_lock);
	return done;
}

static int nvx_pool_resize_ioctl(void *argp, bool grow)
{
	struct nvx_pool_resize *r = argp;
	unsigned int shift = r->chunk_shift ?: NVX_POOL_CHUNK_SHIFT;
	unsigned long nr, done;
	int ret;

	r->done = 0;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (r->flags || r->pad)
		return -EINVAL;
	if (!grow && r->chunk_shift)
		return -EINVAL;
	if (shift < NVX_POOL_CHUNK_SHIFT || shift > NVX_POOL_CHUNK_SHIFT_MAX)
		return -EINVAL;
	if (r->node != NVX_NODE_ANY && !nvx_node_valid(r->node))
		return -EINVAL;
	ret = nvx_bytes_to_chunks(r->bytes, &nr);
	if (ret)
		return ret;

	done = nvx_pool_resize(r->node, nr, grow, shift);
	r->done = (u64)done * NVX_CHUNK_BYTES;
	if (grow)
		trace_nvx_pool_grow(r->node, r->bytes, r->done);
	else
		trace_nvx_pool_shrink(r->node, r->bytes, r->done);
	if (done < nr)
		return grow ? -ENOMEM : -EBUSY;
	return 0;
}

/**
 * nvx_ioc_pool_grow() - NVX_IOC_POOL_GROW
 * @file: the /dev/nvx file.
 * @argp: struct nvx_pool_resize.
 * @nfd: unused.
 *
 * Return: 0, -EPERM, -EINVAL, or -ENOMEM after adding less than asked.
 */
int nvx_ioc_pool_grow(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	return nvx_pool_resize_ioctl(argp, true);
}

/**
 * nvx_ioc_pool_shrink() - NVX_IOC_POOL_SHRINK
 * @file: the /dev/nvx file.
 * @argp: struct nvx_pool_resize.
 * @nfd: unused.
 *
 * Return: 0, -EPERM, -EINVAL, or -EBUSY after releasing less than asked.
 */
int nvx_ioc_pool_shrink(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	return nvx_pool_resize_ioctl(argp, false);
}

static void nvx_pool_node_stats(int nid, struct nvx_pool_stats *s)
{
	struct nvx_pool_node *n = nvx_node(nid);

	spin_lock(&n->lock);
	s->total_bytes += (u64)n->nr_total * NVX_CHUNK_BYTES;
	s->clean_bytes += (u64)n->nr_clean * NVX_CHUNK_BYTES;
	s->dirty_bytes += (u64)(n->nr_dirty + n->nr_scrubbing + n->nr_pinned) *
			  NVX_CHUNK_BYTES;
	s->granted_bytes += (u64)n->nr_granted * NVX_CHUNK_BYTES;
	s->chunks += n->nr_chunks;
	spin_unlock(&n->lock);
}

/**
 * nvx_ioc_pool_stats() - NVX_IOC_POOL_STATS
 * @file: the /dev/nvx file.
 * @argp: struct nvx_pool_stats.
 * @nfd: unused.
 *
 * Return: 0, or -EINVAL for bad flags or an offline node.
 */
int nvx_ioc_pool_stats(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	struct nvx_pool_stats *s = argp;
	int nid;

	if (s->flags || s->pad)
		return -EINVAL;
	if (s->node != NVX_NODE_ANY && !nvx_node_valid(s->node))
		return -EINVAL;

	s->nr_nodes = nr_node_ids;
	s->chunk_bytes = NVX_CHUNK_BYTES;
	s->total_bytes = 0;
	s->clean_bytes = 0;
	s->dirty_bytes = 0;
	s->granted_bytes = 0;
	s->chunks = 0;
	if (s->node == NVX_NODE_ANY) {
		for_each_online_node(nid)
			nvx_pool_node_stats(nid, s);
	} else {
		nvx_pool_node_stats(s->node, s);
	}
	s->grants = atomic64_read(&pool.grants);
	s->grants_live = atomic64_read(&pool.grants_live);
	s->grant_failures = atomic64_read(&pool.grant_failures);
	s->scrubbed_bytes = atomic64_read(&pool.scrubbed_bytes);
	s->scrub_ns = atomic64_read(&pool.scrub_ns);
	s->sync_zeroed_bytes = atomic64_read(&pool.sync_zeroed_bytes);
	return 0;
}

/* ------------------------------------------------------------ grants --- */

/* Charge @pages to @user's RLIMIT_MEMLOCK, as io_uring and RDMA do. */
static int nvx_account(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur, new;

	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + pages;
		if (new < cur || new > limit)
			return -EDQUOT;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

static void nvx_unaccount(struct user_struct *user, unsigned long pages)
{
	atomic_long_sub(pages, &user->locked_vm);
}

/*
 * Append the chunks on @list to @g, their pieces in order. Each piece's
 * folio gets its page offset in the grant as its index: finish_fault()
 * maps a folio with a PMD only if it ends below i_size by that index, and
 * a folio's index is otherwise whatever its memory's last user left.
 */
static void nvx_grant_add(struct nvx_grant *g, struct list_head *list)
{
	struct nvx_chunk *c, *tmp;
	unsigned long i;

	list_for_each_entry_safe(c, tmp, list, list) {
		list_move_tail(&c->list, &g->chunks);
		for (i = 0; i < c->nr; i++) {
			struct page *piece = nvx_chunk_piece(c, i);

			page_folio(piece)->index = g->nr_pieces << NVX_CHUNK_ORDER;
			g->pieces[g->nr_pieces++] = piece;
		}
	}
}

/*
 * Move @nr pieces of node @nid to @g: clean ones first; dirty ones
 * nobody else references only if @dirty_ok (they come last, and the
 * caller zeroes them after the lock is dropped). A chunk larger than
 * what is still needed is split with *@spare, the rest staying in the
 * pool; one call splits at most one chunk (dirty pieces are taken only
 * after every clean one). Returns the number of dirty pieces taken, or,
 * with nothing taken: -ENOSPC when the node cannot cover @nr even after
 * scrubbing, -EAGAIN when it can once the scrubber has done its work.
 */
static long nvx_grant_take(struct nvx_grant *g, int nid, unsigned long nr,
			   bool dirty_ok, struct nvx_chunk **spare)
{
	struct nvx_pool_node *n = nvx_node(nid);
	unsigned long from_dirty, got = 0, want;
	struct nvx_chunk *c, *tmp, *rest;
	LIST_HEAD(dirty);
	LIST_HEAD(taken);

	spin_lock(&n->lock);
	if (n->nr_clean + n->nr_dirty + n->nr_scrubbing < nr)
		goto nospc;
	from_dirty = nr > n->nr_clean ? nr - n->nr_clean : 0;
	if (from_dirty) {
		if (!dirty_ok)
			goto again;
		/*
		 * One pass: usable chunks move to a local list, chunks
		 * someone still references move to the pinned list, so
		 * that none is looked at twice.
		 */
		list_for_each_entry_safe(c, tmp, &n->dirty, list) {
			if (got >= from_dirty)
				break;
			if (nvx_chunk_busy(c)) {
				n->nr_dirty -= c->nr;
				list_move_tail(&c->list, &n->pinned);
				n->nr_pinned += c->nr;
				continue;
			}
			list_move_tail(&c->list, &dirty);
			got += c->nr;
		}
		if (got < from_dirty) {
			list_splice(&dirty, &n->dirty);
			if (n->nr_clean + n->nr_dirty + n->nr_scrubbing < nr)
				goto nospc;
			goto again;	/* the scrubber is on it */
		}
		if (got > from_dirty) {
			c = list_last_entry(&dirty, struct nvx_chunk, list);
			rest = nvx_chunk_split(c, c->nr - (got - from_dirty),
					       *spare);
			*spare = NULL;
			list_add(&rest->list, &n->dirty);
		}
		n->nr_dirty -= from_dirty;
	}
	want = nr - from_dirty;
	list_for_each_entry_safe(c, tmp, &n->clean, list) {
		if (!want)
			break;
		if (c->nr > want) {
			rest = nvx_chunk_split(c, want, *spare);
			*spare = NULL;
			list_add(&rest->list, &c->list);
		}
		want -= c->nr;
		list_move_tail(&c->list, &taken);
	}
	n->nr_clean -= nr - from_dirty;
	n->nr_granted += nr;
	spin_unlock(&n->lock);
	list_splice_tail(&dirty, &taken);
	nvx_grant_add(g, &taken);
	return from_dirty;

again:
	spin_unlock(&n->lock);
	return -EAGAIN;
nospc:
	spin_unlock(&n->lock);
	return -ENOSPC;
}

/* Worth trying nvx_grant_take() again? */
static bool nvx_grant_may_succeed(int nid, unsigned long nr, bool dirty_ok)
{
	struct nvx_pool_node *n = nvx_node(nid);
	bool ok;

	spin_lock(&n->lock);
	ok = n->nr_clean >= nr || (dirty_ok && !n->nr_scrubbing) ||
	     n->nr_clean + n->nr_dirty + n->nr_scrubbing < nr;
	spin_unlock(&n->lock);
	return ok;
}

static long nvx_grant_fill(struct nvx_grant *g, int nid, unsigned long nr,
			   u32 flags)
{
	bool dirty_ok = !(flags & (NVX_GRANT_WAIT | NVX_GRANT_CLEAN_ONLY));
	struct nvx_chunk *spare = NULL;
	long ret;

	for (;;) {
		/* a chunk to split one with, allocated outside the lock */
		if (!spare)
			spare = kzalloc(sizeof(*spare), GFP_KERNEL);
		if (!spare)
			return -ENOMEM;
		ret = nvx_grant_take(g, nid, nr, dirty_ok, &spare);
		if (ret != -EAGAIN || (flags & NVX_GRANT_CLEAN_ONLY))
			break;
		/* wait for the scrubber; look again at least once a second */
		wake_up(&pool.scrub_wq);
		if (wait_event_interruptible_timeout(pool.clean_wq,
						     nvx_grant_may_succeed(nid, nr, dirty_ok),
						     HZ) < 0) {
			ret = -EINTR;
			break;
		}
	}
	kfree(spare);
	return ret;
}

static void nvx_grant_return(struct nvx_grant *g)
{
	struct nvx_chunk *c, *tmp;

	list_for_each_entry_safe(c, tmp, &g->chunks, list) {
		struct nvx_pool_node *n = nvx_node(c->nid);

		spin_lock(&n->lock);
		list_move_tail(&c->list, &n->dirty);
		n->nr_granted -= c->nr;
		n->nr_dirty += c->nr;
		spin_unlock(&n->lock);
	}
	g->nr_pieces = 0;
	atomic_inc(&pool.returns);
	wake_up(&pool.scrub_wq);
}

static void nvx_grant_free(struct nvx_grant *g)
{
	if (g->nr_pieces) {
		trace_nvx_grant_release(g->nid,
					(u64)g->nr_pieces * NVX_CHUNK_BYTES);
		nvx_grant_return(g);
	}
	if (g->user) {
		nvx_unaccount(g->user, g->accounted);
		free_uid(g->user);
	}
	kvfree(g->pieces);
	kfree(g);
}

static unsigned long nvx_pool_total_chunks(void)
{
	unsigned long total = 0;
	int nid;

	for_each_online_node(nid)
		total += READ_ONCE(nvx_node(nid)->nr_total);
	return total;
}

static int nvx_grant_release(struct inode *inode, struct file *file)
{
	nvx_grant_free(file->private_data);
	atomic64_dec(&pool.grants_live);
	return 0;
}

/**
 * nvx_grant_page() - a page of a grant
 * @g: the grant.
 * @pgoff: page offset in the grant, below nvx_grant_bytes() >> PAGE_SHIFT.
 *
 * The pages of one chunk (NVX_POOL_CHUNK_SHIFT) are physically
 * contiguous, in the direct map, and belong to one compound folio.
 *
 * Return: the page.
 */
struct page *nvx_grant_page(struct nvx_grant *g, unsigned long pgoff)
{
	return nth_page(g->pieces[pgoff >> NVX_CHUNK_ORDER],
			pgoff & (NVX_CHUNK_PAGES - 1));
}

/*
 * The page at the fault's offset, with a reference for the mapping.
 * finish_fault() maps its whole chunk with one PMD (do_set_pmd()) when
 * the mapping's address and offset agree modulo 2 MiB and the chunk lies
 * inside the VMA: the grant's inode has the grant's size, so the PMD is
 * not beyond i_size. Otherwise it maps this one page.
 */
static vm_fault_t nvx_grant_fault(struct vm_fault *vmf)
{
	struct nvx_grant *g = vmf->vma->vm_file->private_data;

	if (vmf->pgoff >= g->nr_pieces * NVX_CHUNK_PAGES)
		return VM_FAULT_SIGBUS;
	vmf->page = nvx_grant_page(g, vmf->pgoff);
	get_page(vmf->page);
	return 0;
}

/*
 * A PMD fault on a grant mapping (THP enabled: the VMA is VM_HUGEPAGE):
 * map the piece with one PMD directly. Unlike ->fault, which the kernel
 * calls after preallocating a page table a PMD mapping does not need,
 * this costs no page table. do_set_pmd() checks the alignment and that
 * the piece lies inside the VMA, and falls back otherwise; the mapping
 * holds the reference taken here.
 */
static vm_fault_t nvx_grant_huge_fault(struct vm_fault *vmf,
				       unsigned int order)
{
	struct nvx_grant *g = vmf->vma->vm_file->private_data;
	struct folio *folio;
	vm_fault_t ret;

	if (order != PMD_ORDER || vmf->pgoff >= g->nr_pieces * NVX_CHUNK_PAGES)
		return VM_FAULT_FALLBACK;
	folio = page_folio(nvx_grant_page(g, vmf->pgoff));
	folio_get(folio);
	folio_lock(folio);
	ret = do_set_pmd(vmf, &folio->page);
	folio_unlock(folio);
	if (ret) {
		folio_put(folio);
		return ret;
	}
	return VM_FAULT_NOPAGE;
}

static const struct vm_operations_struct nvx_grant_vm_ops = {
	.fault = nvx_grant_fault,
	.huge_fault = nvx_grant_huge_fault,
};

/*
 * mmap: shared mappings only (a private one would copy on write and
 * write elsewhere), inside the grant, never growing. Nothing is mapped
 * here: the first touch of each piece faults once and maps it with a PMD
 * (nvx_grant_huge_fault(), or nvx_grant_fault() when transparent
 * hugepages are off); thp_get_unmapped_area() picks a 2 MiB-aligned
 * address when the caller lets the kernel choose. The
 * VMA is not VM_MIXEDMAP or VM_PFNMAP: the mappings are of ordinary
 * refcounted folios, so GUP (also FOLL_LONGTERM), KVM, I/O and fork
 * work, and unmapping drops the references the faults took.
 */
static int nvx_grant_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct nvx_grant *g = file->private_data;
	unsigned long total = g->nr_pieces * NVX_CHUNK_PAGES;
	unsigned long pgoff = vma->vm_pgoff, npages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (pgoff >= total || npages > total - pgoff)
		return -EINVAL;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_HUGEPAGE);
	vma->vm_ops = &nvx_grant_vm_ops;
	return 0;
}

static long nvx_grant_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg);

static const struct file_operations nvx_grant_fops = {
	.owner = THIS_MODULE,
	.release = nvx_grant_release,
	.mmap = nvx_grant_mmap,
	.get_unmapped_area = thp_get_unmapped_area,
	.unlocked_ioctl = nvx_grant_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/**
 * nvx_grant_fget() - the grant behind a file descriptor
 * @fd: a file descriptor of the calling process.
 * @gfile: out: the grant's file, with a reference for the caller
 *	(fput() it when done with the grant).
 *
 * Return: the grant; ERR_PTR(-EBADF) when @fd is not open,
 * ERR_PTR(-EINVAL) when it is not a grant.
 */
struct nvx_grant *nvx_grant_fget(int fd, struct file **gfile)
{
	struct file *f = fget(fd);

	if (!f)
		return ERR_PTR(-EBADF);
	if (f->f_op != &nvx_grant_fops) {
		fput(f);
		return ERR_PTR(-EINVAL);
	}
	*gfile = f;
	return f->private_data;
}

/**
 * nvx_grant_bytes() - size of a grant
 * @g: the grant.
 *
 * Return: its size in bytes, a multiple of the chunk size.
 */
u64 nvx_grant_bytes(const struct nvx_grant *g)
{
	return (u64)g->nr_pieces * NVX_CHUNK_BYTES;
}

static int nvx_ioc_grant_info(struct file *file, void *argp,
			      struct nvx_new_fd *nfd)
{
	struct nvx_grant *g = file->private_data;
	struct nvx_grant_info *info = argp;

	if (info->flags)
		return -EINVAL;
	info->node = g->nid;
	info->bytes = (u64)g->nr_pieces * NVX_CHUNK_BYTES;
	info->chunk_bytes = NVX_CHUNK_BYTES;
	info->nr_chunks = g->nr_pieces;
	return 0;
}

static int nvx_ioc_grant_ranges(struct file *file, void *argp,
				struct nvx_new_fd *nfd)
{
	struct nvx_grant *g = file->private_data;
	struct nvx_grant_ranges *r = argp;
	struct nvx_grant_range __user *out = u64_to_user_ptr(r->ranges);
	struct nvx_grant_range cur = {};
	u32 room = r->count, count = 0;
	unsigned long i;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (r->flags)
		return -EINVAL;

	for (i = 0; i < g->nr_pieces; i++) {
		u64 phys = PFN_PHYS(page_to_pfn(g->pieces[i]));

		if (count && cur.phys + cur.bytes == phys) {
			cur.bytes += NVX_CHUNK_BYTES;
			continue;
		}
		if (count && count <= room &&
		    copy_to_user(&out[count - 1], &cur, sizeof(cur)))
			return -EFAULT;
		cur.phys = phys;
		cur.bytes = NVX_CHUNK_BYTES;
		count++;
		cond_resched();
	}
	if (count && count <= room &&
	    copy_to_user(&out[count - 1], &cur, sizeof(cur)))
		return -EFAULT;
	r->count = count;
	return count > room ? -EOVERFLOW : 0;
}

static const struct nvx_ioctl_desc nvx_grant_ioctls[] = {
	NVX_IOCTL(NVX_IOC_GRANT_INFO, sizeof(struct nvx_grant_info),
		  nvx_ioc_grant_info, 0),
	NVX_IOCTL(NVX_IOC_GRANT_RANGES, sizeof(struct nvx_grant_ranges),
		  nvx_ioc_grant_ranges, NVX_IOCTL_OUT_ON_ERROR),
};

static long nvx_grant_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	return nvx_ioctl_dispatch(file, cmd, arg, nvx_grant_ioctls,
				  ARRAY_SIZE(nvx_grant_ioctls));
}

/**
 * nvx_ioc_grant() - NVX_IOC_GRANT: a new grant fd
 * @file: the /dev/nvx file.
 * @argp: struct nvx_grant_create.
 * @nfd: receives the new fd, installed once the result reached userspace.
 *
 * Return: 0 with the fd in the argument, or the errors listed in
 * include/uapi/nvx/pool.h.
 */
int nvx_ioc_grant(struct file *file, void *argp, struct nvx_new_fd *nfd)
{
	struct nvx_grant_create *req = argp;
	unsigned long nr, i;
	struct nvx_grant *g;
	struct file *gfile;
	int ret, fd, nid;
	long dirty = 0;
	u64 bytes;

	if (req->flags & ~NVX_GRANT_FLAGS || req->pad)
		return -EINVAL;
	if ((req->flags & NVX_GRANT_WAIT) && (req->flags & NVX_GRANT_CLEAN_ONLY))
		return -EINVAL;
	if (req->node != NVX_NODE_ANY && !nvx_node_valid(req->node))
		return -EINVAL;
	ret = nvx_bytes_to_chunks(req->bytes, &nr);
	if (ret)
		return ret;
	bytes = (u64)nr * NVX_CHUNK_BYTES;
	if (grant_max_bytes && bytes > grant_max_bytes)
		return -EFBIG;
	/* never more than the whole pool: bounds the allocations below */
	if (nr > nvx_pool_total_chunks()) {
		atomic64_inc(&pool.grant_failures);
		return -ENOSPC;
	}

	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return -ENOMEM;
	INIT_LIST_HEAD(&g->chunks);
	if (!capable(CAP_IPC_LOCK)) {
		ret = nvx_account(current_user(), bytes >> PAGE_SHIFT);
		if (ret)
			goto err_free;
		g->user = get_uid(current_user());
		g->accounted = bytes >> PAGE_SHIFT;
	}
	g->pieces = kvmalloc_array(nr, sizeof(*g->pieces),
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!g->pieces) {
		ret = -ENOMEM;
		goto err_free;
	}

	if (req->node != NVX_NODE_ANY) {
		dirty = nvx_grant_fill(g, req->node, nr, req->flags);
	} else {
		/* the caller's node first, then any node that has room */
		int first = numa_node_id();
		long err;

		dirty = nvx_grant_fill(g, first, nr, req->flags);
		err = dirty;
		for_each_online_node(nid) {
			if (dirty >= 0 || dirty == -EINTR)
				break;
			if (nid == first)
				continue;
			dirty = nvx_grant_fill(g, nid, nr, req->flags);
			if (dirty == -EAGAIN)
				err = dirty;
		}
		/* "wait for the scrubber" says more than "no room" */
		if (dirty == -ENOSPC)
			dirty = err;
	}
	if (dirty < 0) {
		ret = dirty;
		if (ret == -ENOSPC || ret == -EAGAIN)
			atomic64_inc(&pool.grant_failures);
		goto err_free;
	}
	nid = list_first_entry(&g->chunks, struct nvx_chunk, list)->nid;
	g->nid = nid;

	/* dirty pieces taken on the caller's path are zeroed here */
	for (i = nr - dirty; i < nr; i++) {
		nvx_piece_zero(g->pieces[i]);
		atomic64_add(NVX_CHUNK_BYTES, &pool.sync_zeroed_bytes);
	}

	fd = get_unused_fd_flags(O_RDWR |
				 (req->flags & NVX_GRANT_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}
	/*
	 * An inode of its own, with the grant's size: the fault path maps a
	 * PMD only below i_size (and fstat() shows the size).
	 */
	gfile = anon_inode_create_getfile("[nvx-grant]", &nvx_grant_fops, g,
					  O_RDWR, NULL);
	if (IS_ERR(gfile)) {
		put_unused_fd(fd);
		ret = PTR_ERR(gfile);
		goto err_free;
	}
	i_size_write(file_inode(gfile), bytes);
	/* from here on the file owns the grant: its release frees it */
	atomic64_inc(&pool.grants);
	atomic64_inc(&pool.grants_live);
	trace_nvx_grant(nid, bytes, dirty * NVX_CHUNK_BYTES);
	req->fd = fd;
	req->granted = bytes;
	nfd->file = gfile;
	nfd->fd = fd;
	return 0;

err_free:
	nvx_grant_free(g);
	return ret;
}

/* ---------------------------------------------------------- scrubber --- */

/*
 * Take one dirty chunk, from any node, off its list for the scrubber; it
 * counts as scrubbing until nvx_scrub_done() or nvx_scrub_pinned().
 */
static struct nvx_chunk *nvx_scrub_take(void)
{
	struct nvx_chunk *c;
	int nid;

	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);

		spin_lock(&n->lock);
		c = list_first_entry_or_null(&n->dirty, struct nvx_chunk, list);
		if (c) {
			list_del(&c->list);
			n->nr_dirty -= c->nr;
			n->nr_scrubbing += c->nr;
			spin_unlock(&n->lock);
			return c;
		}
		spin_unlock(&n->lock);
	}
	return NULL;
}

/* A chunk the scrubber took goes back on the pinned or the dirty list. */
static void nvx_scrub_putback(struct nvx_chunk *c, bool pinned)
{
	struct nvx_pool_node *n = nvx_node(c->nid);

	spin_lock(&n->lock);
	n->nr_scrubbing -= c->nr;
	if (pinned) {
		list_add_tail(&c->list, &n->pinned);
		n->nr_pinned += c->nr;
	} else {
		list_add_tail(&c->list, &n->dirty);
		n->nr_dirty += c->nr;
	}
	spin_unlock(&n->lock);
}

/*
 * Put back a chunk the scrubber holds: dirty when nobody else references
 * it, pinned when someone does. A pinned chunk of several pieces is split
 * into one-piece chunks first, so that one pinned page holds back 2 MiB,
 * not the whole chunk; without memory for the descriptors it goes back
 * whole.
 */
static void nvx_scrub_sort(struct nvx_chunk *c)
{
	struct nvx_pool_node *n = nvx_node(c->nid);
	struct nvx_chunk *p, *tmp;
	LIST_HEAD(pieces);
	unsigned long i;

	if (c->nr == 1 || !nvx_chunk_busy(c)) {
		nvx_scrub_putback(c, nvx_chunk_busy(c));
		return;
	}
	for (i = 1; i < c->nr; i++) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			break;
		list_add_tail(&p->list, &pieces);
	}
	if (i < c->nr) {
		list_for_each_entry_safe(p, tmp, &pieces, list)
			kfree(p);
		nvx_scrub_putback(c, true);
		return;
	}
	/* @c keeps its first piece, each descriptor takes one from the end */
	spin_lock(&n->lock);
	list_for_each_entry(p, &pieces, list)
		nvx_chunk_split(c, c->nr - 1, p);
	spin_unlock(&n->lock);
	list_add(&c->list, &pieces);
	list_for_each_entry_safe(p, tmp, &pieces, list) {
		list_del(&p->list);
		nvx_scrub_putback(p, nvx_chunk_busy(p));
	}
}

/* Look at the pinned chunks again, outside the lock; free ones go dirty. */
static void nvx_scrub_recheck_pinned(void)
{
	struct nvx_chunk *c, *tmp;
	int nid;

	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);
		LIST_HEAD(list);

		spin_lock(&n->lock);
		list_splice_init(&n->pinned, &list);
		n->nr_scrubbing += n->nr_pinned;
		n->nr_pinned = 0;
		spin_unlock(&n->lock);
		list_for_each_entry_safe(c, tmp, &list, list) {
			list_del(&c->list);
			nvx_scrub_sort(c);
			cond_resched();
		}
	}
}

static bool nvx_pool_has_pinned(void)
{
	int nid;

	for_each_online_node(nid)
		if (READ_ONCE(nvx_node(nid)->nr_pinned))
			return true;
	return false;
}

static int nvx_scrubber(void *unused)
{
	set_user_nice(current, MAX_NICE);
	while (!kthread_should_stop()) {
		struct nvx_pool_node *n;
		struct nvx_chunk *c;
		int seen = atomic_read(&pool.returns);
		u64 t0, ns, bytes;
		uint rate;

		c = nvx_scrub_take();
		if (!c) {
			/*
			 * Nothing to do, or only chunks still pinned by
			 * someone: look again when a grant returns memory,
			 * or in a second.
			 */
			wait_event_interruptible_timeout(pool.scrub_wq,
							 kthread_should_stop() ||
							 atomic_read(&pool.returns) != seen,
							 HZ);
			if (nvx_pool_has_pinned())
				nvx_scrub_recheck_pinned();
			continue;
		}
		if (nvx_chunk_busy(c)) {
			nvx_scrub_sort(c);
			continue;
		}
		t0 = ktime_get_ns();
		nvx_chunk_zero(c);
		ns = ktime_get_ns() - t0;

		n = nvx_node(c->nid);
		bytes = (u64)c->nr * NVX_CHUNK_BYTES;
		trace_nvx_scrub(c->nid, bytes, ns);
		spin_lock(&n->lock);
		list_add_tail(&c->list, &n->clean);
		n->nr_scrubbing -= c->nr;
		n->nr_clean += c->nr;
		spin_unlock(&n->lock);
		atomic64_add(bytes, &pool.scrubbed_bytes);
		atomic64_add(ns, &pool.scrub_ns);
		wake_up_all(&pool.clean_wq);

		rate = READ_ONCE(scrub_rate_mbps);
		if (rate) {
			u64 want = div64_u64(bytes * NSEC_PER_SEC,
					     (u64)rate << 20);

			if (want > ns)
				schedule_timeout_interruptible(nsecs_to_jiffies(want - ns) ?: 1);
		}
		cond_resched();
	}
	return 0;
}

/* ----------------------------------------------------- debugfs, init --- */

static int nvx_pool_show(struct seq_file *m, void *unused)
{
	struct nvx_pool_stats s;
	int nid;

	seq_puts(m, "node total_bytes clean_bytes dirty_bytes granted_bytes chunks\n");
	for_each_online_node(nid) {
		memset(&s, 0, sizeof(s));
		nvx_pool_node_stats(nid, &s);
		seq_printf(m, "%d %llu %llu %llu %llu %llu\n", nid, s.total_bytes,
			   s.clean_bytes, s.dirty_bytes, s.granted_bytes,
			   s.chunks);
	}
	seq_printf(m, "chunk_bytes %llu\n", NVX_CHUNK_BYTES);
	seq_printf(m, "grants %lld\n", atomic64_read(&pool.grants));
	seq_printf(m, "grants_live %lld\n", atomic64_read(&pool.grants_live));
	seq_printf(m, "grant_failures %lld\n",
		   atomic64_read(&pool.grant_failures));
	seq_printf(m, "scrubbed_bytes %lld\n",
		   atomic64_read(&pool.scrubbed_bytes));
	seq_printf(m, "scrub_ns %lld\n", atomic64_read(&pool.scrub_ns));
	seq_printf(m, "sync_zeroed_bytes %lld\n",
		   atomic64_read(&pool.sync_zeroed_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvx_pool);

static void nvx_pool_free_all(void)
{
	struct nvx_chunk *c, *tmp;
	int nid;

	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);
		LIST_HEAD(list);

		spin_lock(&n->lock);
		list_splice_init(&n->clean, &list);
		list_splice_init(&n->dirty, &list);
		list_splice_init(&n->pinned, &list);
		n->nr_total -= n->nr_clean + n->nr_dirty + n->nr_pinned;
		n->nr_clean = 0;
		n->nr_dirty = 0;
		n->nr_pinned = 0;
		n->nr_chunks = 0;
		spin_unlock(&n->lock);
		/* a page still pinned elsewhere is freed when its pin goes */
		list_for_each_entry_safe(c, tmp, &list, list)
			nvx_chunk_free(c);
	}
}

/**
 * nvx_pool_init() - set up the pool, start the scrubber, fill boot_pool
 *
 * Return: 0 or a negative errno.
 */
int __init nvx_pool_init(void)
{
	int nid, ret;

	ret = nvx_ioctls_check(nvx_grant_ioctls, ARRAY_SIZE(nvx_grant_ioctls));
	if (ret)
		return ret;
	pool.nodes = kcalloc(nr_node_ids, sizeof(*pool.nodes), GFP_KERNEL);
	if (!pool.nodes)
		return -ENOMEM;
	for (nid = 0; nid < nr_node_ids; nid++) {
		spin_lock_init(&pool.nodes[nid].lock);
		INIT_LIST_HEAD(&pool.nodes[nid].clean);
		INIT_LIST_HEAD(&pool.nodes[nid].dirty);
		INIT_LIST_HEAD(&pool.nodes[nid].pinned);
	}
	mutex_init(&pool.resize_lock);
	init_waitqueue_head(&pool.scrub_wq);
	init_waitqueue_head(&pool.clean_wq);

	pool.scrubber = kthread_run(nvx_scrubber, NULL, "nvx_scrub");
	if (IS_ERR(pool.scrubber)) {
		ret = PTR_ERR(pool.scrubber);
		kfree(pool.nodes);
		return ret;
	}

	pool.debugfs = debugfs_create_dir("nvx", NULL);
	debugfs_create_file("pool", 0444, pool.debugfs, NULL, &nvx_pool_fops);

	if (boot_pool && *boot_pool) {
		char *end;
		u64 bytes = memparse(boot_pool, &end);
		unsigned long nr, done;

		if (*end || nvx_bytes_to_chunks(bytes, &nr)) {
			pr_warn("boot_pool=%s: not a size, ignored\n", boot_pool);
		} else {
			done = nvx_pool_resize(NVX_NODE_ANY, nr, true,
					       clamp_t(uint, boot_chunk_shift,
						       NVX_POOL_CHUNK_SHIFT,
						       NVX_POOL_CHUNK_SHIFT_MAX));
			pr_info("boot pool: %llu of %llu bytes reserved\n",
				(u64)done * NVX_CHUNK_BYTES,
				(u64)nr * NVX_CHUNK_BYTES);
		}
	}
	return 0;
}

/**
 * nvx_pool_exit() - stop the scrubber and give all memory back
 *
 * Grants hold a reference to the module, so none is alive here.
 */
void nvx_pool_exit(void)
{
	kthread_stop(pool.scrubber);
	debugfs_remove_recursive(pool.debugfs);
	nvx_pool_free_all();
	kfree(pool.nodes);
}
