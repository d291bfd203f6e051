// SPDX-License-Identifier: GPL-2.0
/*
 * nvx pool: pieces split into 64 KiB blocks, for small grants.
 *
 * A grant made with NVX_GRANT_BLOCKS takes whole pieces for as much of
 * its size as they cover and blocks for the rest. Blocks come from
 * pieces the pool splits on demand: the piece (a compound folio of PMD
 * order, one reference count for 2 MiB) goes back to the page allocator
 * and is replaced by 2 MiB of single pages on the same node
 * (split_page()), each with a reference count of its own. That is what
 * lets several grants share a piece: a block returned while a page of it
 * is still pinned is told from its neighbours, which the scrubber zeroes
 * and hands out again. A block is 16 physically contiguous pages, so an
 * object up to 64 KiB aligned in a grant (an SRQ buffer, a guest page
 * table) is contiguous in the direct map; the grant maps blocks with one
 * PTE per page.
 *
 * The replacement's contents are unknown: all of its blocks start dirty,
 * and are zeroed by the scrubber or on a grant's own path, as returned
 * blocks are. Blocks are counted, taken and returned under the node's
 * lock, in the masks of struct nvx_small. A split piece stays split
 * until a shrink releases it (shrink takes pieces none of whose blocks
 * is granted first).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "pool.h"

/**
 * nvx_block_busy() - does anyone but the pool reference a page of a block?
 * @s: the split piece.
 * @i: the block.
 *
 * Return: true when some page of block @i has a reference other than the
 * pool's (a pin, a mapping whose TLB flush is pending, a pipe buffer).
 */
bool nvx_block_busy(struct nvx_small *s, unsigned int i)
{
	struct page *page = nvx_small_block(s, i);
	unsigned int j;

	for (j = 0; j < NVX_BLOCK_PAGES; j++)
		if (page_ref_count(nth_page(page, j)) != 1)
			return true;
	return false;
}

/*
 * Split one piece of node @nid into blocks: take 2 MiB of single pages
 * from the page allocator, then give a releasable piece (a dirty one
 * first: its zeroing is not lost) back in their place, so that the pool
 * keeps its size whatever happens. 0, -ENOMEM when the allocator has no
 * 2 MiB to lend, -ENOSPC when the node has no releasable piece.
 */
static int nvx_small_split(int nid)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN |
			  __GFP_NORETRY;
	struct nvx_pool_node *n = nvx_node(nid);
	struct nvx_chunk *whole;
	struct page *page, *old;
	struct nvx_small *s;

	s = kzalloc_node(sizeof(*s), GFP_KERNEL, nid);
	if (!s)
		return -ENOMEM;
	/* not compound: split_page() gives every page its own count */
	page = alloc_pages_node(nid, gfp, NVX_PIECE_ORDER);
	if (!page) {
		kfree(s);
		return -ENOMEM;
	}
	if (!nvx_pool_take_releasable(nid, 1, true, true, &old, &whole)) {
		__free_pages(page, NVX_PIECE_ORDER);
		kfree(s);
		return -ENOSPC;
	}
	folio_put(page_folio(old));
	kfree(whole);
	split_page(page, NVX_PIECE_ORDER);
	s->page = page;
	s->nid = nid;
	s->dirty = NVX_SMALL_ALL;
	atomic64_inc(&nvx_pool.small_splits);

	spin_lock(&n->lock);
	list_add_tail(&s->list, &n->small);
	n->nr_small++;
	n->nr_blocks_dirty += NVX_PIECE_BLOCKS;
	spin_unlock(&n->lock);
	atomic_inc(&nvx_pool.returns);
	wake_up(&nvx_pool.scrub_wq);
	return 0;
}

/* Take up to @nr blocks of @mask's kind; the caller holds the lock. */
static unsigned long nvx_small_pick(struct nvx_pool_node *n, bool dirty,
				    unsigned long nr, struct nvx_block_ref *out)
{
	unsigned long got = 0;
	struct nvx_small *s;

	list_for_each_entry(s, &n->small, list) {
		u32 *mask = dirty ? &s->dirty : &s->free;

		while (got < nr && *mask) {
			unsigned int i = __ffs(*mask);

			*mask &= ~BIT(i);
			if (dirty && nvx_block_busy(s, i)) {
				s->pinned |= BIT(i);
				n->nr_blocks_dirty--;
				n->nr_blocks_pinned++;
				continue;
			}
			out[got].s = s;
			out[got].idx = i;
			out[got].dirty = dirty;
			got++;
		}
		if (got == nr)
			break;
	}
	return got;
}

/* Put back blocks nvx_small_pick() took; the caller holds the lock. */
static void nvx_small_unpick(struct nvx_block_ref *b, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		if (b[i].dirty)
			b[i].s->dirty |= BIT(b[i].idx);
		else
			b[i].s->free |= BIT(b[i].idx);
	}
}

/**
 * nvx_small_take() - take blocks of one node for a grant
 * @nid: the node.
 * @nr: how many, at most NVX_PIECE_BLOCKS - 1.
 * @dirty_ok: dirty blocks nobody else references may be taken (the
 *	caller zeroes them, before the grant is handed out).
 * @out: @nr entries: the blocks taken, dirty ones marked.
 *
 * Free blocks first, then (@dirty_ok) dirty ones; when the node's blocks
 * cannot cover @nr even after the scrubber's work, splits pieces.
 *
 * Return: the number of dirty blocks taken, or -EAGAIN (the scrubber has
 * blocks to zero first), -ENOSPC (no piece left to split), -ENOMEM.
 */
long nvx_small_take(int nid, unsigned long nr, bool dirty_ok,
		    struct nvx_block_ref *out)
{
	struct nvx_pool_node *n = nvx_node(nid);
	unsigned long got, dirty, avail;
	int ret;

	for (;;) {
		spin_lock(&n->lock);
		got = nvx_small_pick(n, false, nr, out);
		dirty = 0;
		if (got < nr && dirty_ok)
			dirty = nvx_small_pick(n, true, nr - got, out + got);
		if (got + dirty == nr) {
			n->nr_blocks_free -= got;
			n->nr_blocks_dirty -= dirty;
			n->nr_blocks_granted += nr;
			spin_unlock(&n->lock);
			return dirty;
		}
		nvx_small_unpick(out, got + dirty);
		avail = n->nr_blocks_free + n->nr_blocks_dirty +
			n->nr_blocks_scrubbing;
		spin_unlock(&n->lock);
		if (avail >= nr)
			return -EAGAIN;	/* the scrubber is on it */
		ret = nvx_small_split(nid);
		if (ret)
			return ret;
	}
}

/**
 * nvx_small_untake() - put blocks nvx_small_take() took back as they were
 * @b: the blocks, all of one node; none was zeroed or handed out.
 * @nr: how many.
 */
void nvx_small_untake(struct nvx_block_ref *b, unsigned long nr)
{
	struct nvx_pool_node *n;
	unsigned long i, dirty = 0;

	if (!nr)
		return;
	n = nvx_node(b[0].s->nid);
	for (i = 0; i < nr; i++)
		dirty += b[i].dirty;
	spin_lock(&n->lock);
	nvx_small_unpick(b, nr);
	n->nr_blocks_granted -= nr;
	n->nr_blocks_free += nr - dirty;
	n->nr_blocks_dirty += dirty;
	spin_unlock(&n->lock);
}

/**
 * nvx_small_may_succeed() - worth calling nvx_small_take() again?
 * @nid: the node.
 * @nr: blocks wanted.
 * @dirty_ok: as for nvx_small_take().
 *
 * Return: true when enough blocks are free, or when nothing is being
 * zeroed that waiting would bring.
 */
bool nvx_small_may_succeed(int nid, unsigned long nr, bool dirty_ok)
{
	struct nvx_pool_node *n = nvx_node(nid);
	bool ok;

	spin_lock(&n->lock);
	ok = n->nr_blocks_free >= nr ||
	     (dirty_ok && !n->nr_blocks_scrubbing) ||
	     n->nr_blocks_free + n->nr_blocks_dirty +
	     n->nr_blocks_scrubbing < nr;
	spin_unlock(&n->lock);
	return ok;
}

/**
 * nvx_small_return() - blocks of a grant come back dirty
 * @b: the blocks, all of one node.
 * @nr: how many.
 */
void nvx_small_return(struct nvx_block_ref *b, unsigned long nr)
{
	struct nvx_pool_node *n;
	unsigned long i;

	if (!nr)
		return;
	n = nvx_node(b[0].s->nid);
	spin_lock(&n->lock);
	for (i = 0; i < nr; i++)
		b[i].s->dirty |= BIT(b[i].idx);
	n->nr_blocks_granted -= nr;
	n->nr_blocks_dirty += nr;
	spin_unlock(&n->lock);
}

/**
 * nvx_small_scrub_one() - the scrubber zeroes one dirty block
 * @nidp: out: the block's node.
 *
 * Takes the first dirty block of any node; one someone else references
 * becomes pinned, one nobody does is zeroed and made free.
 *
 * Return: the bytes zeroed (0 when there was no dirty block, or it was
 * pinned).
 */
u64 nvx_small_scrub_one(int *nidp)
{
	struct nvx_small *s;
	unsigned int i;
	int nid;

	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);

		spin_lock(&n->lock);
		list_for_each_entry(s, &n->small, list) {
			if (!s->dirty)
				continue;
			i = __ffs(s->dirty);
			s->dirty &= ~BIT(i);
			n->nr_blocks_dirty--;
			if (nvx_block_busy(s, i)) {
				s->pinned |= BIT(i);
				n->nr_blocks_pinned++;
				spin_unlock(&n->lock);
				return 0;
			}
			s->scrubbing |= BIT(i);
			n->nr_blocks_scrubbing++;
			spin_unlock(&n->lock);
			*nidp = nid;

			nvx_pages_zero(nvx_small_block(s, i), NVX_BLOCK_PAGES);

			spin_lock(&n->lock);
			s->scrubbing &= ~BIT(i);
			s->free |= BIT(i);
			n->nr_blocks_scrubbing--;
			n->nr_blocks_free++;
			spin_unlock(&n->lock);
			return NVX_BLOCK_BYTES;
		}
		spin_unlock(&n->lock);
	}
	return 0;
}

/**
 * nvx_small_has_dirty() - does any node have dirty blocks?
 *
 * Return: true when one does; a snapshot without locks.
 */
bool nvx_small_has_dirty(void)
{
	int nid;

	for_each_online_node(nid)
		if (READ_ONCE(nvx_node(nid)->nr_blocks_dirty))
			return true;
	return false;
}

/**
 * nvx_small_has_pinned() - does any node have pinned blocks?
 *
 * Return: true when one does; a snapshot without locks.
 */
bool nvx_small_has_pinned(void)
{
	int nid;

	for_each_online_node(nid)
		if (READ_ONCE(nvx_node(nid)->nr_blocks_pinned))
			return true;
	return false;
}

/**
 * nvx_small_recheck_pinned() - pinned blocks whose pin went become dirty
 */
void nvx_small_recheck_pinned(void)
{
	struct nvx_small *s;
	int nid;

	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);

		spin_lock(&n->lock);
		list_for_each_entry(s, &n->small, list) {
			u32 pinned = s->pinned;

			while (pinned) {
				unsigned int i = __ffs(pinned);

				pinned &= ~BIT(i);
				if (nvx_block_busy(s, i))
					continue;
				s->pinned &= ~BIT(i);
				s->dirty |= BIT(i);
				n->nr_blocks_pinned--;
				n->nr_blocks_dirty++;
			}
		}
		spin_unlock(&n->lock);
	}
}

/*
 * A split piece none of whose blocks is granted, pinned or being zeroed
 * and whose pages nobody else references; the caller holds the lock.
 */
static bool nvx_small_unused(struct nvx_small *s)
{
	unsigned int i;

	if ((s->free | s->dirty) != NVX_SMALL_ALL)
		return false;
	for (i = 0; i < NVX_PIECE_BLOCKS; i++)
		if (nvx_block_busy(s, i))
			return false;
	return true;
}

/*
 * Take @s, unused, off its node's split pieces; the caller holds the lock.
 * It stays in the node's total: a shrink takes it out of that too, a
 * rejoin puts its replacement in its place, so that the pool's size never
 * seems to dip while a piece is being rejoined.
 */
static void nvx_small_unlink(struct nvx_pool_node *n, struct nvx_small *s)
{
	list_del(&s->list);
	n->nr_blocks_free -= hweight32(s->free);
	n->nr_blocks_dirty -= hweight32(s->dirty);
	n->nr_small--;
}

/* Put @s back on its node, as nvx_small_unlink() took it. */
static void nvx_small_link(struct nvx_pool_node *n, struct nvx_small *s)
{
	list_add_tail(&s->list, &n->small);
	n->nr_blocks_free += hweight32(s->free);
	n->nr_blocks_dirty += hweight32(s->dirty);
	n->nr_small++;
}

/* Give a split piece's pages back; one still pinned goes with its pin. */
static void nvx_small_free(struct nvx_small *s)
{
	unsigned int i;

	for (i = 0; i < NVX_PIECE_PAGES; i++)
		put_page(nth_page(s->page, i));
	kfree(s);
}

/**
 * nvx_small_shrink() - release split pieces none of whose blocks is granted
 * @nid: the node.
 * @max: at most this many.
 *
 * A piece qualifies when every block is free or dirty and no page has a
 * reference other than the pool's.
 *
 * Return: the number of pieces released.
 */
unsigned long nvx_small_shrink(int nid, unsigned long max)
{
	struct nvx_pool_node *n = nvx_node(nid);
	struct nvx_small *s, *tmp;
	unsigned long done = 0;
	LIST_HEAD(list);

	spin_lock(&n->lock);
	list_for_each_entry_safe(s, tmp, &n->small, list) {
		if (done == max)
			break;
		if (!nvx_small_unused(s))
			continue;
		nvx_small_unlink(n, s);
		n->nr_total--;
		list_add_tail(&s->list, &list);
		done++;
	}
	spin_unlock(&n->lock);
	list_for_each_entry_safe(s, tmp, &list, list) {
		list_del(&s->list);
		nvx_small_free(s);
		cond_resched();
	}
	return done;
}

/**
 * nvx_small_free_all() - release every split piece of a node, at exit
 * @nid: the node.
 *
 * No grant is alive; a page still pinned is freed when its pin goes.
 */
void nvx_small_free_all(int nid)
{
	struct nvx_pool_node *n = nvx_node(nid);
	struct nvx_small *s, *tmp;
	LIST_HEAD(list);

	spin_lock(&n->lock);
	list_splice_init(&n->small, &list);
	n->nr_total -= n->nr_small;
	n->nr_small = 0;
	n->nr_blocks_free = 0;
	n->nr_blocks_dirty = 0;
	n->nr_blocks_pinned = 0;
	spin_unlock(&n->lock);
	list_for_each_entry_safe(s, tmp, &list, list) {
		list_del(&s->list);
		nvx_small_free(s);
	}
}

/**
 * nvx_small_rejoin() - turn unused split pieces back into pieces
 *
 * Keeps one unused split piece per node for the next small grants; each
 * other one is replaced by a zeroed compound piece from the page
 * allocator (a clean chunk of its own) and its pages given back, so that
 * small grants that came and went do not leave the pool in split pieces
 * that whole-piece grants cannot use. Stops at the first allocation that
 * fails. The scrubber calls it when it has nothing else to do.
 *
 * Return: the number of pieces rejoined.
 */
unsigned long nvx_small_rejoin(void)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN |
			  __GFP_NORETRY | __GFP_COMP;
	unsigned long done = 0;
	int nid;

	for_each_online_node(nid) {
		struct nvx_pool_node *n = nvx_node(nid);
		struct nvx_small *s, *found;
		struct nvx_chunk *c;
		struct page *page;
		bool kept;

		for (;;) {
			kept = false;
			found = NULL;
			spin_lock(&n->lock);
			list_for_each_entry(s, &n->small, list) {
				if (!nvx_small_unused(s))
					continue;
				if (kept) {
					found = s;
					break;
				}
				kept = true;
			}
			if (found)
				nvx_small_unlink(n, found);
			spin_unlock(&n->lock);
			if (!found)
				break;

			c = kzalloc_node(sizeof(*c), GFP_KERNEL, nid);
			page = c ? alloc_pages_node(nid, gfp, NVX_PIECE_ORDER) :
				   NULL;
			if (!page) {
				kfree(c);
				spin_lock(&n->lock);
				nvx_small_link(n, found);
				spin_unlock(&n->lock);
				return done;
			}
			nvx_piece_zero(page);
			c->page = page;
			c->nr = 1;
			c->nid = nid;
			c->origin = page_to_pfn(page);
			c->origin_nr = 1;
			spin_lock(&n->lock);
			list_add_tail(&c->list, &n->clean);
			n->nr_clean++;
			n->nr_chunks++;
			spin_unlock(&n->lock);
			nvx_small_free(found);
			atomic64_inc(&nvx_pool.small_rejoins);
			done++;
			cond_resched();
		}
	}
	return done;
}
