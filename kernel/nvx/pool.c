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
 * grant that needs only part of one splits it, a shrink trims its last
 * pieces in place (so that a shrink allocates nothing), and the pieces of
 * one allocation merge back into one chunk as they come back clean
 * (nvx_chunk_clean(): the pool heals). Chunks are
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
 * clean again, a piece at a time. Shrink releases clean chunks first,
 * then unpinned dirty ones, and never waits for a grant.
 *
 * Locking: each node's lists and counters are under node->lock (a
 * spinlock: no sleeping, no allocation under it). nvx_pool.resize_lock
 * serialises grow and shrink.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#ifdef CONFIG_X86_64
#include <asm/fpu/api.h>
#endif
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "internal.h"
#include "pool.h"

#define CREATE_TRACE_POINTS
#include <trace/events/nvx_pool.h>

static char *boot_pool;
module_param(boot_pool, charp, 0444);
MODULE_PARM_DESC(boot_pool,
		 "memory to put in the pool at boot or load, spread over the online nodes (e.g. 1G)");

static uint boot_chunk_shift = NVX_POOL_CHUNK_SHIFT_MAX;
module_param(boot_chunk_shift, uint, 0444);
MODULE_PARM_DESC(boot_chunk_shift,
		 "log2 of the largest chunk boot_pool allocates (21: 2 MiB .. 30: 1 GiB, the default)");

static bool zero_nontemporal = IS_ENABLED(CONFIG_X86_64);
module_param(zero_nontemporal, bool, 0644);
MODULE_PARM_DESC(zero_nontemporal,
		 "zero pieces with non-temporal stores, past the caches (x86-64; otherwise clear_page())");

struct nvx_pool nvx_pool;

/**
 * nvx_chunk_busy() - does anyone but the pool reference a piece of @c?
 * @c: the chunk.
 *
 * A mapping whose TLB flush is still pending, a GUP pin or a pipe buffer
 * holds a reference on a piece's folio.
 *
 * Return: true when some piece has a reference other than the pool's.
 */
bool nvx_chunk_busy(struct nvx_chunk *c)
{
	unsigned long i;

	for (i = 0; i < c->nr; i++)
		if (folio_ref_count(page_folio(nvx_chunk_piece(c, i))) != 1)
			return true;
	return false;
}

#ifdef CONFIG_X86_64
/*
 * Zero @len bytes (a multiple of 64) at @p with movntdq, a cache line per
 * iteration: no read for ownership, and the lines do not displace what
 * the caches hold for others (a zeroed piece is not read soon). SSE2 is
 * in every x86-64 CPU; 16-byte stores are half the instructions of
 * movnti's 8 (under QEMU TCG, which emulates one instruction at a time,
 * that is the rate: 0.70-0.80 of a userspace movntdq loop with movnti,
 * 0.76-0.96 with movntdq, three runs each). The caller is in process
 * context, and fences.
 */
static void nvx_zero_nt(void *p, size_t len)
{
	char *q = p, *end = q + len;

	kernel_fpu_begin();
	asm volatile("pxor %%xmm0, %%xmm0\n"
		     "1:\tmovntdq %%xmm0, 0(%0)\n\t"
		     "movntdq %%xmm0, 16(%0)\n\t"
		     "movntdq %%xmm0, 32(%0)\n\t"
		     "movntdq %%xmm0, 48(%0)\n\t"
		     "add $64, %0\n\t"
		     "cmp %1, %0\n\t"
		     "jb 1b"
		     : "+r" (q) : "r" (end) : "memory", "cc");
	kernel_fpu_end();
}
#endif

/**
 * nvx_pages_zero() - zero physically contiguous pages
 * @page: the first.
 * @nr: how many; a piece or a block.
 *
 * With zero_nontemporal (x86-64), by non-temporal stores through the
 * direct map, 256 KiB between rescheduling points, fenced before the
 * caller publishes the memory as zeroed; otherwise clear_highpage() page
 * by page.
 */
void nvx_pages_zero(struct page *page, unsigned long nr)
{
	unsigned long i;

#ifdef CONFIG_X86_64
	if (READ_ONCE(zero_nontemporal)) {
		char *p = page_address(page);
		size_t len = nr << PAGE_SHIFT;

		for (i = 0; i < len; i += SZ_256K) {
			nvx_zero_nt(p + i, min_t(size_t, len - i, SZ_256K));
			cond_resched();
		}
		/* the stores are weakly ordered: visible before the list */
		wmb();
		return;
	}
#endif
	for (i = 0; i < nr; i++) {
		clear_highpage(nth_page(page, i));
		if ((i & 63) == 63)
			cond_resched();
	}
}

/**
 * nvx_piece_zero() - zero one piece
 * @head: its head page.
 *
 * As nvx_pages_zero().
 */
void nvx_piece_zero(struct page *head)
{
	nvx_pages_zero(head, NVX_PIECE_PAGES);
}

/**
 * nvx_chunk_zero() - zero every piece of a chunk
 * @c: the chunk.
 */
void nvx_chunk_zero(struct nvx_chunk *c)
{
	unsigned long i;

	for (i = 0; i < c->nr; i++)
		nvx_piece_zero(nvx_chunk_piece(c, i));
}

/**
 * nvx_chunk_split() - split a chunk in two
 * @c: the chunk; keeps its first @nr pieces.
 * @nr: pieces @c keeps, fewer than it has.
 * @rest: a spare descriptor that receives the rest.
 *
 * The caller holds the node's lock.
 *
 * Return: @rest.
 */
struct nvx_chunk *nvx_chunk_split(struct nvx_chunk *c, unsigned long nr,
				  struct nvx_chunk *rest)
{
	rest->page = nvx_chunk_piece(c, nr);
	rest->nr = c->nr - nr;
	rest->nid = c->nid;
	rest->origin = c->origin;
	rest->origin_nr = c->origin_nr;
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
					NVX_PIECE_ORDER);
#ifdef CONFIG_CONTIG_ALLOC
	else
		page = alloc_contig_folios(nr, NVX_PIECE_ORDER, gfp, nid, NULL);
#endif
	if (!page) {
		kfree(c);
		return NULL;
	}
	c->page = page;
	c->nr = nr;
	c->nid = nid;
	c->origin = page_to_pfn(page);
	c->origin_nr = nr;
	return c;
}

static unsigned long nvx_chunk_end_pfn(struct nvx_chunk *c)
{
	return page_to_pfn(c->page) + (c->nr << NVX_PIECE_ORDER);
}

/**
 * nvx_chunk_clean() - put a zeroed chunk on its node's clean list
 * @n: its node, locked by the caller.
 * @c: the chunk, on no list; counted by the caller.
 *
 * A clean chunk of the same origin (first pfn and size of the allocation)
 * that ends where @c starts takes @c in, one that starts where @c ends is
 * taken into @c: the pieces a grant or the scrubber split off an
 * allocation become one chunk again as they come back clean. A
 * descriptor merged away is freed. The clean list is scanned only for a
 * chunk smaller than its allocation (one that was split), and holds one
 * chunk per allocation at rest.
 */
void nvx_chunk_clean(struct nvx_pool_node *n, struct nvx_chunk *c)
{
	struct nvx_chunk *a, *before = NULL, *after = NULL;

	lockdep_assert_held(&n->lock);
	if (c->nr >= c->origin_nr) {
		list_add_tail(&c->list, &n->clean);
		return;
	}
	list_for_each_entry(a, &n->clean, list) {
		/*
		 * Both: a pfn freed by a shrink may start a new allocation
		 * while pieces of the old one live on, but not one of the
		 * same size, which would need all of the old one's memory.
		 */
		if (a->origin != c->origin || a->origin_nr != c->origin_nr)
			continue;
		if (nvx_chunk_end_pfn(a) == page_to_pfn(c->page))
			before = a;
		else if (nvx_chunk_end_pfn(c) == page_to_pfn(a->page))
			after = a;
		if (before && after)
			break;
	}
	if (after) {
		c->nr += after->nr;
		list_del(&after->list);
		kfree(after);
		n->nr_chunks--;
		n->merges++;
	}
	if (before) {
		before->nr += c->nr;
		kfree(c);
		n->nr_chunks--;
		n->merges++;
		return;
	}
	list_add_tail(&c->list, &n->clean);
}

/**
 * nvx_chunk_free() - give a chunk's memory back to the page allocator
 * @c: the chunk, on no list.
 *
 * Drops the pool's references: each folio goes when its last other
 * reference does.
 */
void nvx_chunk_free(struct nvx_chunk *c)
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
	unsigned long size = 1UL << (shift - NVX_POOL_PIECE_SHIFT);
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
		wake_up_all(&nvx_pool.clean_wq);
	return done;
}

/**
 * nvx_pool_take_releasable() - take pieces off the pool to release them
 * @nid: the node.
 * @max: at most this many pieces.
 * @dirty_first: a dirty chunk nobody else references before a clean one
 *	(whose zeroing would be lost), instead of the other way round.
 * @keep_total: the pieces stay in the node's total (a split, whose
 *	split piece takes their place), so that the pool's size never
 *	seems to dip meanwhile.
 * @page: out: the first piece's page.
 * @whole: out: the chunk's descriptor when all of it was taken, or NULL.
 *
 * Of a larger chunk only its last @max pieces go and the rest stays where
 * it was, in the same state: no descriptor is allocated, so a shrink
 * allocates nothing. The pieces are no longer counted in the node,
 * but for its total with @keep_total.
 *
 * Return: the number of pieces taken, 0 when there is none.
 */
unsigned long nvx_pool_take_releasable(int nid, unsigned long max,
				       bool dirty_first, bool keep_total,
				       struct page **page,
				       struct nvx_chunk **whole)
{
	struct nvx_pool_node *n = nvx_node(nid);
	struct nvx_chunk *c;
	bool clean;
	unsigned long got;

	spin_lock(&n->lock);
	if (!dirty_first) {
		clean = true;
		c = list_first_entry_or_null(&n->clean, struct nvx_chunk, list);
		if (c)
			goto found;
	}
	clean = false;
	while ((c = list_first_entry_or_null(&n->dirty, struct nvx_chunk,
					     list))) {
		if (!nvx_chunk_busy(c))
			goto found;
		n->nr_dirty -= c->nr;
		list_move_tail(&c->list, &n->pinned);
		n->nr_pinned += c->nr;
	}
	if (dirty_first) {
		clean = true;
		c = list_first_entry_or_null(&n->clean, struct nvx_chunk, list);
		if (c)
			goto found;
	}
	spin_unlock(&n->lock);
	return 0;
found:
	if (c->nr > max) {
		got = max;
		c->nr -= max;
		*page = nvx_chunk_piece(c, c->nr);
		*whole = NULL;
	} else {
		got = c->nr;
		*page = c->page;
		*whole = c;
		list_del(&c->list);
		n->nr_chunks--;
	}
	if (clean)
		n->nr_clean -= got;
	else
		n->nr_dirty -= got;
	if (!keep_total)
		n->nr_total -= got;
	spin_unlock(&n->lock);
	return got;
}

static unsigned long nvx_pool_shrink_node(int nid, unsigned long nr)
{
	unsigned long done, got, i;
	struct nvx_chunk *whole;
	struct page *page;

	/* split pieces first: they are split again on demand */
	done = nvx_small_shrink(nid, nr);
	while (done < nr) {
		got = nvx_pool_take_releasable(nid, nr - done, false, false,
					       &page, &whole);
		if (!got)
			break;
		/* every piece is a folio of its own: the pool's reference */
		for (i = 0; i < got; i++)
			folio_put(page_folio(nth_page(page,
						      i << NVX_PIECE_ORDER)));
		kfree(whole);
		done += got;
		cond_resched();
	}
	return done;
}

/**
 * nvx_pool_check_req() - check the node and size of a request
 * @node: a node, or NVX_NODE_ANY.
 * @bytes: a size.
 * @nr: out: @bytes in whole pieces.
 *
 * Return: 0, or -EINVAL for a node that does not exist or is offline, a
 * size of 0 or one that overflows.
 */
int nvx_pool_check_req(u32 node, u64 bytes, unsigned long *nr)
{
	if (node != NVX_NODE_ANY && !nvx_node_valid(node))
		return -EINVAL;
	return nvx_bytes_to_pieces(bytes, nr);
}

/**
 * nvx_bytes_to_pieces() - a size in whole pieces
 * @bytes: the size; rounded up.
 * @nr: out: the number of pieces.
 *
 * Return: 0, or -EINVAL for 0 or a size that overflows.
 */
int nvx_bytes_to_pieces(u64 bytes, unsigned long *nr)
{
	if (!bytes)
		return -EINVAL;
	if (bytes > U64_MAX - (NVX_PIECE_BYTES - 1))
		return -EINVAL;
	*nr = DIV_ROUND_UP_ULL(bytes, NVX_PIECE_BYTES);
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

	mutex_lock(&nvx_pool.resize_lock);
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
	mutex_unlock(&nvx_pool.resize_lock);
	return done;
}

static int nvx_pool_resize_ioctl(struct nvx_pool_resize *r, bool grow)
{
	unsigned int shift = r->chunk_shift ?: NVX_POOL_PIECE_SHIFT;
	unsigned long nr, done;
	int ret;

	r->done = 0;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (r->flags || r->reserved)
		return -EINVAL;
	if (!grow && r->chunk_shift)
		return -EINVAL;
	if (shift < NVX_POOL_PIECE_SHIFT || shift > NVX_POOL_CHUNK_SHIFT_MAX)
		return -EINVAL;
	ret = nvx_pool_check_req(r->node, r->bytes, &nr);
	if (ret)
		return ret;

	done = nvx_pool_resize(r->node, nr, grow, shift);
	r->done = (u64)done * NVX_PIECE_BYTES;
	if (grow)
		trace_nvx_pool_grow(r->node, r->bytes, r->done);
	else
		trace_nvx_pool_shrink(r->node, r->bytes, r->done);
	if (done < nr)
		return grow ? -ENOMEM : -EBUSY;
	return 0;
}

/*
 * GROW's result (what it added, in done) did not reach the caller: give
 * back what it added, as far as nobody took it meanwhile.
 */
static void nvx_pool_grow_finish(struct nvx_ucmd *ucmd, bool copied)
{
	struct nvx_pool_resize *r = ucmd->arg;

	if (!copied && r->done)
		nvx_pool_resize(r->node, r->done / NVX_PIECE_BYTES, false,
				NVX_POOL_PIECE_SHIFT);
}

/* NVX_IOC_POOL_GROW: -ENOMEM after adding less than asked */
static int nvx_pool_ioc_grow(struct nvx_ucmd *ucmd)
{
	ucmd->finish = nvx_pool_grow_finish;
	return nvx_pool_resize_ioctl(ucmd->arg, true);
}

/* NVX_IOC_POOL_SHRINK: -EBUSY after releasing less than asked */
static int nvx_pool_ioc_shrink(struct nvx_ucmd *ucmd)
{
	return nvx_pool_resize_ioctl(ucmd->arg, false);
}

static void nvx_pool_node_stats(int nid, struct nvx_pool_stats *s)
{
	struct nvx_pool_node *n = nvx_node(nid);

	spin_lock(&n->lock);
	s->total_bytes += (u64)n->nr_total * NVX_PIECE_BYTES;
	s->clean_bytes += (u64)n->nr_clean * NVX_PIECE_BYTES;
	s->dirty_bytes += (u64)(n->nr_dirty + n->nr_scrubbing + n->nr_pinned) *
			  NVX_PIECE_BYTES;
	s->granted_bytes += (u64)n->nr_granted * NVX_PIECE_BYTES;
	s->chunks += n->nr_chunks;
	s->clean_bytes += (u64)n->nr_blocks_free * NVX_BLOCK_BYTES;
	s->dirty_bytes += (u64)(n->nr_blocks_dirty + n->nr_blocks_pinned +
				n->nr_blocks_scrubbing) * NVX_BLOCK_BYTES;
	s->granted_bytes += (u64)n->nr_blocks_granted * NVX_BLOCK_BYTES;
	s->small_bytes += (u64)n->nr_small * NVX_PIECE_BYTES;
	spin_unlock(&n->lock);
}

static int nvx_pool_ioc_stats(struct nvx_ucmd *ucmd)
{
	struct nvx_pool_stats *s = ucmd->arg;
	int nid;

	if (s->flags || s->reserved)
		return -EINVAL;
	if (s->node != NVX_NODE_ANY && !nvx_node_valid(s->node))
		return -EINVAL;

	s->nr_nodes = nr_node_ids;
	s->piece_bytes = NVX_PIECE_BYTES;
	s->total_bytes = 0;
	s->clean_bytes = 0;
	s->dirty_bytes = 0;
	s->granted_bytes = 0;
	s->chunks = 0;
	s->block_bytes = NVX_BLOCK_BYTES;
	s->small_bytes = 0;
	if (s->node == NVX_NODE_ANY) {
		for_each_online_node(nid)
			nvx_pool_node_stats(nid, s);
	} else {
		nvx_pool_node_stats(s->node, s);
	}
	s->grants = atomic64_read(&nvx_pool.grants);
	s->grants_live = atomic64_read(&nvx_pool.grants_live);
	s->grant_failures = atomic64_read(&nvx_pool.grant_failures);
	s->scrubbed_bytes = atomic64_read(&nvx_pool.scrubbed_bytes);
	s->scrub_ns = atomic64_read(&nvx_pool.scrub_ns);
	s->sync_zeroed_bytes = atomic64_read(&nvx_pool.sync_zeroed_bytes);
	s->small_splits = atomic64_read(&nvx_pool.small_splits);
	return 0;
}

/*
 * The sizes from before chunk_shift, chunks and the block counts were
 * added still work.
 */
static const struct nvx_ioctl_op nvx_pool_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_POOL_BASE, NVX_IOC_POOL_GROW, nvx_pool_ioc_grow,
		     struct nvx_pool_resize, done, NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL_OP(NVX_IOC_POOL_BASE, NVX_IOC_POOL_SHRINK,
		     nvx_pool_ioc_shrink, struct nvx_pool_resize, done,
		     NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL_OP(NVX_IOC_POOL_BASE, NVX_IOC_POOL_STATS, nvx_pool_ioc_stats,
		     struct nvx_pool_stats, sync_zeroed_bytes, 0),
	NVX_IOCTL_OP(NVX_IOC_POOL_BASE, NVX_IOC_GRANT, nvx_pool_ioc_grant,
		     struct nvx_grant_create, granted, 0),
};

static struct nvx_ioctl_range nvx_pool_range =
	NVX_IOCTL_RANGE(NVX_IOC_POOL_BASE, nvx_pool_ops, NVX_FEAT_POOL);

/**
 * nvx_pool_total_pieces() - pieces in the pool, in any state, on any node
 *
 * Return: the number; a snapshot without locks.
 */
unsigned long nvx_pool_total_pieces(void)
{
	unsigned long total = 0;
	int nid;

	for_each_online_node(nid)
		total += READ_ONCE(nvx_node(nid)->nr_total);
	return total;
}

/* ----------------------------------------------------- debugfs, init --- */

static int nvx_pool_show(struct seq_file *m, void *unused)
{
	struct nvx_pool_stats s;
	int nid;

	seq_puts(m, "node total_bytes clean_bytes dirty_bytes granted_bytes chunks small_bytes\n");
	for_each_online_node(nid) {
		memset(&s, 0, sizeof(s));
		nvx_pool_node_stats(nid, &s);
		seq_printf(m, "%d %llu %llu %llu %llu %llu %llu\n", nid,
			   s.total_bytes, s.clean_bytes, s.dirty_bytes,
			   s.granted_bytes, s.chunks, s.small_bytes);
	}
	seq_printf(m, "piece_bytes %llu\n", NVX_PIECE_BYTES);
	seq_printf(m, "grants %lld\n", atomic64_read(&nvx_pool.grants));
	seq_printf(m, "grants_live %lld\n", atomic64_read(&nvx_pool.grants_live));
	seq_printf(m, "grant_failures %lld\n",
		   atomic64_read(&nvx_pool.grant_failures));
	seq_printf(m, "scrubbed_bytes %lld\n",
		   atomic64_read(&nvx_pool.scrubbed_bytes));
	seq_printf(m, "scrub_ns %lld\n", atomic64_read(&nvx_pool.scrub_ns));
	seq_printf(m, "sync_zeroed_bytes %lld\n",
		   atomic64_read(&nvx_pool.sync_zeroed_bytes));
	for_each_online_node(nid)
		seq_printf(m, "merges %d %lu\n", nid,
			   READ_ONCE(nvx_node(nid)->merges));
	seq_printf(m, "small_splits %lld\n",
		   atomic64_read(&nvx_pool.small_splits));
	seq_printf(m, "small_rejoins %lld\n",
		   atomic64_read(&nvx_pool.small_rejoins));
	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);

		spin_lock(&n->lock);
		seq_printf(m, "blocks %d free %lu dirty %lu pinned %lu scrubbing %lu granted %lu\n",
			   nid, n->nr_blocks_free, n->nr_blocks_dirty,
			   n->nr_blocks_pinned, n->nr_blocks_scrubbing,
			   n->nr_blocks_granted);
		spin_unlock(&n->lock);
	}
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
		nvx_small_free_all(nid);
	}
}

static void nvx_pool_teardown(void)
{
	kthread_stop(nvx_pool.scrubber);
	debugfs_remove_recursive(nvx_pool.debugfs);
	nvx_pool_free_all();
	kfree(nvx_pool.nodes);
}

/**
 * nvx_pool_init() - set up the pool, start the scrubber, fill boot_pool
 *
 * Return: 0 or a negative errno.
 */
int __init nvx_pool_init(void)
{
	int nid, ret;

	nvx_pool.nodes = kcalloc(nr_node_ids, sizeof(*nvx_pool.nodes), GFP_KERNEL);
	if (!nvx_pool.nodes)
		return -ENOMEM;
	for (nid = 0; nid < nr_node_ids; nid++) {
		spin_lock_init(&nvx_pool.nodes[nid].lock);
		INIT_LIST_HEAD(&nvx_pool.nodes[nid].clean);
		INIT_LIST_HEAD(&nvx_pool.nodes[nid].dirty);
		INIT_LIST_HEAD(&nvx_pool.nodes[nid].pinned);
		INIT_LIST_HEAD(&nvx_pool.nodes[nid].small);
	}
	mutex_init(&nvx_pool.resize_lock);
	init_waitqueue_head(&nvx_pool.scrub_wq);
	init_waitqueue_head(&nvx_pool.clean_wq);

	nvx_pool.scrubber = kthread_run(nvx_scrubber, NULL, "nvx_scrub");
	if (IS_ERR(nvx_pool.scrubber)) {
		ret = PTR_ERR(nvx_pool.scrubber);
		kfree(nvx_pool.nodes);
		return ret;
	}

	nvx_pool.debugfs = debugfs_create_dir("pool", nvx_debugfs_dir());
	debugfs_create_file("stats", 0444, nvx_pool.debugfs, NULL,
			    &nvx_pool_fops);

	if (boot_pool && *boot_pool) {
		char *end;
		u64 bytes = memparse(boot_pool, &end);
		unsigned long nr, done;

		if (*end || nvx_bytes_to_pieces(bytes, &nr)) {
			pr_warn("boot_pool=%s: not a size, ignored\n", boot_pool);
		} else {
			done = nvx_pool_resize(NVX_NODE_ANY, nr, true,
					       clamp_t(uint, boot_chunk_shift,
						       NVX_POOL_PIECE_SHIFT,
						       NVX_POOL_CHUNK_SHIFT_MAX));
			pr_info("boot pool: %llu of %llu bytes reserved\n",
				(u64)done * NVX_PIECE_BYTES,
				(u64)nr * NVX_PIECE_BYTES);
		}
	}
	ret = nvx_register_ioctls(&nvx_pool_range);
	if (ret)
		nvx_pool_teardown();
	return ret;
}

/**
 * nvx_pool_exit() - stop the scrubber and give all memory back
 *
 * Grants hold a reference to the module, so none is alive here.
 */
void nvx_pool_exit(void)
{
	nvx_unregister_ioctls(&nvx_pool_range);
	nvx_pool_teardown();
}
