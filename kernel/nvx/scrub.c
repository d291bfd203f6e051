// SPDX-License-Identifier: GPL-2.0
/*
 * nvx pool scrubber: a kthread at the lowest priority that zeroes the
 * chunks grants returned, a 2 MiB piece at a time, and makes them clean
 * again.
 *
 * A chunk whose pages someone else still references (a long-term pin,
 * a pipe buffer) is left on its node's pinned list until the reference
 * goes; the scrubber looks at those once a second. A large chunk with a
 * pinned piece is split so that the rest can be zeroed.
 */
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "pool.h"
#include <trace/events/nvx_pool.h>

/* the rate limit sleeps once this much time is owed */
#define NVX_SCRUB_NAP	(10 * NSEC_PER_MSEC)

static uint scrub_rate_mbps;
module_param(scrub_rate_mbps, uint, 0644);
MODULE_PARM_DESC(scrub_rate_mbps,
		 "scrubber rate limit in MiB/s (0: as fast as it can, at the lowest priority)");

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

/*
 * Split the first piece off @c, which the scrubber took, and put the
 * rest back at the head of the dirty list: a grant may zero it on its own
 * path meanwhile, and the scrubber takes it next. Without memory for a
 * descriptor @c stays whole.
 */
static void nvx_scrub_first_piece(struct nvx_chunk *c)
{
	struct nvx_pool_node *n = nvx_node(c->nid);
	struct nvx_chunk *rest;

	if (c->nr == 1)
		return;
	rest = kzalloc(sizeof(*rest), GFP_KERNEL);
	if (!rest)
		return;
	spin_lock(&n->lock);
	nvx_chunk_split(c, 1, rest);
	list_add(&rest->list, &n->dirty);
	n->nr_scrubbing -= rest->nr;
	n->nr_dirty += rest->nr;
	spin_unlock(&n->lock);
}

/*
 * The rate limit: the time @bytes should have taken beyond the @ns they
 * took is owed, and slept off once it adds up to NVX_SCRUB_NAP (a jiffy
 * is too coarse per piece).
 */
static void nvx_scrub_pace(s64 *owed, u64 bytes, u64 ns)
{
	uint rate = READ_ONCE(scrub_rate_mbps);
	u64 t0;

	if (!rate) {
		*owed = 0;
		return;
	}
	*owed += (s64)div64_u64(bytes * NSEC_PER_SEC, (u64)rate << 20) -
		 (s64)ns;
	if (*owed < 0)
		*owed = 0;
	if (*owed >= NVX_SCRUB_NAP) {
		t0 = ktime_get_ns();
		schedule_timeout_interruptible(nsecs_to_jiffies(*owed) ?: 1);
		*owed -= (s64)(ktime_get_ns() - t0);
	}
}

/* Count what the scrubber zeroed, and tell the grants waiting for it. */
static void nvx_scrub_account(int nid, u64 bytes, u64 ns)
{
	trace_nvx_scrub(nid, bytes, ns);
	atomic64_add(bytes, &nvx_pool.scrubbed_bytes);
	atomic64_add(ns, &nvx_pool.scrub_ns);
	wake_up_all(&nvx_pool.clean_wq);
}

/**
 * nvx_scrubber() - the scrubber thread
 * @unused: unused.
 *
 * Zeroes returned blocks and chunks nobody else references, a block or a
 * piece at a time and the two by turns, at the lowest priority and within
 * scrub_rate_mbps, until kthread_stop(); looks at pinned chunks and
 * blocks again once a second, and when idle turns unused split pieces
 * back into whole pieces (nvx_small_rejoin()). Each piece is clean as soon as it is zeroed: a
 * large chunk becomes usable piece by piece, and its pieces merge back
 * into one chunk as they come clean (nvx_chunk_clean()).
 *
 * Return: 0.
 */
int nvx_scrubber(void *unused)
{
	unsigned long rechecked = jiffies;
	bool blocks_first = true;
	s64 owed = 0;

	set_user_nice(current, MAX_NICE);
	while (!kthread_should_stop()) {
		struct nvx_pool_node *n;
		struct nvx_chunk *c;
		int seen = atomic_read(&nvx_pool.returns);
		unsigned long nr;
		int nid;
		u64 t0, ns, bytes;

		/* pins go away while the scrubber is busy too */
		if (time_after(jiffies, rechecked + HZ)) {
			rechecked = jiffies;
			if (nvx_pool_has_pinned())
				nvx_scrub_recheck_pinned();
			if (nvx_small_has_pinned())
				nvx_small_recheck_pinned();
		}
		/* blocks and chunks by turns: neither starves the other */
		blocks_first = !blocks_first;
		c = blocks_first ? NULL : nvx_scrub_take();
		if (!c && nvx_small_has_dirty()) {
			t0 = ktime_get_ns();
			bytes = nvx_small_scrub_one(&nid);
			ns = ktime_get_ns() - t0;
			if (bytes) {
				nvx_scrub_account(nid, bytes, ns);
				nvx_scrub_pace(&owed, bytes, ns);
			}
			cond_resched();
			continue;
		}
		if (!c)
			c = nvx_scrub_take();
		if (!c) {
			/* idle: unused split pieces become whole pieces */
			if (nvx_small_rejoin())
				continue;
			/*
			 * Nothing to do, or only chunks and blocks still
			 * pinned by someone: look again when a grant returns
			 * memory, or in a second.
			 */
			wait_event_interruptible_timeout(nvx_pool.scrub_wq,
							 kthread_should_stop() ||
							 atomic_read(&nvx_pool.returns) != seen,
							 HZ);
			rechecked = jiffies;
			if (nvx_pool_has_pinned())
				nvx_scrub_recheck_pinned();
			if (nvx_small_has_pinned())
				nvx_small_recheck_pinned();
			continue;
		}
		if (nvx_chunk_busy(c)) {
			nvx_scrub_sort(c);
			continue;
		}
		nvx_scrub_first_piece(c);
		t0 = ktime_get_ns();
		nvx_chunk_zero(c);
		ns = ktime_get_ns() - t0;

		nid = c->nid;
		n = nvx_node(nid);
		nr = c->nr;
		bytes = (u64)nr * NVX_PIECE_BYTES;
		spin_lock(&n->lock);
		n->nr_scrubbing -= nr;
		n->nr_clean += nr;
		nvx_chunk_clean(n, c);	/* may free @c */
		spin_unlock(&n->lock);
		nvx_scrub_account(nid, bytes, ns);
		nvx_scrub_pace(&owed, bytes, ns);
		cond_resched();
	}
	return 0;
}
