// SPDX-License-Identifier: GPL-2.0
/*
 * nvx grants: files that own pieces of the nvx_pool.
 *
 * NVX_IOC_GRANT takes pieces from the pool (clean ones, or dirty ones
 * zeroed on the caller's path, or after waiting for the scrubber), and
 * with NVX_GRANT_BLOCKS 64 KiB blocks for what is left below a piece
 * (small.c), and hands them out as a file: mmap() maps them with one PMD
 * per piece and one PTE per page of a block on first touch, GUP and KVM
 * take references on their folios, and the last reference to the file
 * returns them to the pool as dirty, once.
 * The memory is charged to the caller's RLIMIT_MEMLOCK unless it has
 * CAP_IPC_LOCK.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nvx_grant.h>
#include <linux/pagemap.h>
#include <linux/pfn.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pool.h"
#include <trace/events/nvx_pool.h>

static ulong grant_max_bytes;
module_param(grant_max_bytes, ulong, 0644);
MODULE_PARM_DESC(grant_max_bytes, "largest single grant in bytes (0: no limit)");

/**
 * nvx_account_limit() - charge pages to a user's locked memory
 * @user: the user.
 * @pages: how many.
 * @limit: the most pages the user may have locked: the RLIMIT_MEMLOCK of
 *	the process the charge is made for, which need not be current.
 *
 * As io_uring and RDMA do.
 *
 * Return: 0, or -EDQUOT when the limit would be exceeded.
 */
int nvx_account_limit(struct user_struct *user, unsigned long pages,
		      unsigned long limit)
{
	unsigned long cur, new;

	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + pages;
		if (new < cur || new > limit)
			return -EDQUOT;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

/**
 * nvx_account() - charge pages to a user's RLIMIT_MEMLOCK
 * @user: the user.
 * @pages: how many.
 *
 * Against the calling process's RLIMIT_MEMLOCK; see nvx_account_limit().
 *
 * Return: 0, or -EDQUOT when the limit would be exceeded.
 */
int nvx_account(struct user_struct *user, unsigned long pages)
{
	return nvx_account_limit(user, pages,
				 rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT);
}

/**
 * nvx_unaccount() - give back what nvx_account() charged
 * @user: the user.
 * @pages: how many.
 */
void nvx_unaccount(struct user_struct *user, unsigned long pages)
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

			page_folio(piece)->index = g->nr_pieces << NVX_PIECE_ORDER;
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
		wake_up(&nvx_pool.scrub_wq);
		if (wait_event_interruptible_timeout(nvx_pool.clean_wq,
						     nvx_grant_may_succeed(nid, nr, dirty_ok),
						     HZ) < 0) {
			ret = -EINTR;
			break;
		}
	}
	kfree(spare);
	return ret;
}

/*
 * Take @nb blocks of node @nid for @g, as nvx_grant_fill() takes pieces:
 * dirty ones are marked in g->blocks for the caller to zero. Returns 0 or
 * a negative errno.
 */
static int nvx_grant_fill_blocks(struct nvx_grant *g, int nid,
				 unsigned long nb, u32 flags)
{
	bool dirty_ok = !(flags & (NVX_GRANT_WAIT | NVX_GRANT_CLEAN_ONLY));
	long ret;

	for (;;) {
		ret = nvx_small_take(nid, nb, dirty_ok, g->blocks);
		if (ret != -EAGAIN || (flags & NVX_GRANT_CLEAN_ONLY))
			break;
		wake_up(&nvx_pool.scrub_wq);
		if (wait_event_interruptible_timeout(nvx_pool.clean_wq,
						     nvx_small_may_succeed(nid, nb, dirty_ok),
						     HZ) < 0) {
			ret = -EINTR;
			break;
		}
	}
	if (ret < 0)
		return ret;
	g->nr_blocks = nb;
	return 0;
}

/*
 * Fill @g with @nr pieces and @nb blocks of node @nid: blocks first, put
 * back as they were when the pieces fail (a piece split for them stays
 * split). Returns as nvx_grant_fill().
 */
static long nvx_grant_fill_node(struct nvx_grant *g, int nid,
				unsigned long nr, unsigned long nb, u32 flags)
{
	long ret = 0;

	if (nb) {
		ret = nvx_grant_fill_blocks(g, nid, nb, flags);
		if (ret)
			return ret;
	}
	if (nr) {
		ret = nvx_grant_fill(g, nid, nr, flags);
		if (ret < 0 && g->nr_blocks) {
			/* as they were: clean ones stay clean */
			nvx_small_untake(g->blocks, g->nr_blocks);
			g->nr_blocks = 0;
		}
	}
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
	nvx_small_return(g->blocks, g->nr_blocks);
	g->nr_blocks = 0;
	atomic_inc(&nvx_pool.returns);
	wake_up(&nvx_pool.scrub_wq);
}

/**
 * nvx_grant_free() - free a grant, returning its memory to the pool
 * @g: the grant; its file, if it had one, is being released.
 */
void nvx_grant_free(struct nvx_grant *g)
{
	if (g->tmpl) {
		nvx_clone_free(g);
		kfree(g);
		return;
	}
	if (g->nr_pieces || g->nr_blocks) {
		trace_nvx_grant_release(g->nid, nvx_grant_bytes(g));
		nvx_grant_return(g);
	}
	if (g->user) {
		nvx_unaccount(g->user, g->accounted);
		free_uid(g->user);
	}
	kvfree(g->pieces);
	kfree(g);
}

static int nvx_grant_release(struct inode *inode, struct file *file)
{
	nvx_grant_free(file->private_data);
	atomic64_dec(&nvx_pool.grants_live);
	return 0;
}

/**
 * nvx_grant_page() - a page of a grant
 * @g: the grant.
 * @pgoff: page offset in the grant, below nvx_grant_bytes() >> PAGE_SHIFT.
 *
 * The pages of one piece (NVX_POOL_PIECE_SHIFT) are physically
 * contiguous, in the direct map, and belong to one compound folio; those
 * of one block (NVX_POOL_BLOCK_SHIFT, after the pieces) are physically
 * contiguous, in the direct map, and each a folio of its own. Of a
 * clone: its own copy of the page if it wrote it, else the template's.
 *
 * Return: the page.
 */
struct page *nvx_grant_page(struct nvx_grant *g, unsigned long pgoff)
{
	unsigned long b;

	if (g->tmpl)
		return nvx_clone_page(g, pgoff);
	if (pgoff < g->nr_pieces * NVX_PIECE_PAGES)
		return nth_page(g->pieces[pgoff >> NVX_PIECE_ORDER],
				pgoff & (NVX_PIECE_PAGES - 1));
	pgoff -= g->nr_pieces * NVX_PIECE_PAGES;
	b = pgoff >> NVX_BLOCK_ORDER;
	return nth_page(nvx_small_block(g->blocks[b].s, g->blocks[b].idx),
			pgoff & (NVX_BLOCK_PAGES - 1));
}
EXPORT_SYMBOL_GPL(nvx_grant_page);

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

	if (vmf->pgoff >= nvx_grant_bytes(g) >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	vmf->page = nvx_grant_page(g, vmf->pgoff);
	get_page(vmf->page);
	return 0;
}

/*
 * A PMD fault on a grant mapping (THP enabled: the VMA is VM_HUGEPAGE):
 * map the piece with one PMD directly, and the pieces after it
 * (nvx_grant_map_around()). Unlike ->fault, which the kernel
 * calls after preallocating a page table a PMD mapping does not need,
 * this costs no page table. do_set_pmd() checks the alignment and that
 * the piece lies inside the VMA, and falls back otherwise; the mapping
 * holds the reference taken here.
 */
/*
 * Map the pieces after the one a PMD fault just mapped, with a PMD each,
 * as far as the VMA, the grant's pieces and the page-table page of PMDs
 * (1 GiB) go: PMD fault-around. A populating mmap or a guest touching
 * its RAM then takes one fault per GiB instead of one per piece. The
 * folio's lock is only tried: a piece someone holds is left to its own
 * fault.
 */
static void nvx_grant_map_around(struct vm_fault *vmf, struct nvx_grant *g)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long haddr = vmf->address & PMD_MASK;
	unsigned long end = min(vma->vm_end, (haddr & PUD_MASK) + PUD_SIZE);
	pgoff_t pgoff = vmf->pgoff & ~(pgoff_t)(NVX_PIECE_PAGES - 1);
	unsigned long addr;

	for (addr = haddr + PMD_SIZE; addr + PMD_SIZE <= end;
	     addr += PMD_SIZE) {
		struct vm_fault around = {
			.vma = vma,
			.gfp_mask = vmf->gfp_mask,
			.pgoff = pgoff + NVX_PIECE_PAGES,
			.address = addr,
			.real_address = addr,
			.flags = vmf->flags & ~FAULT_FLAG_WRITE,
			.pud = vmf->pud,
			.pmd = pmd_offset(vmf->pud, addr),
		};
		struct folio *folio;
		vm_fault_t ret;

		pgoff += NVX_PIECE_PAGES;
		if (pgoff >= g->nr_pieces * NVX_PIECE_PAGES)
			break;
		if (!pmd_none(pmdp_get_lockless(around.pmd)))
			continue;
		folio = page_folio(nvx_grant_page(g, pgoff));
		if (!folio_trylock(folio))
			continue;
		folio_get(folio);
		ret = do_set_pmd(&around, &folio->page);
		folio_unlock(folio);
		if (ret)
			folio_put(folio);
	}
}

static vm_fault_t nvx_grant_huge_fault(struct vm_fault *vmf,
				       unsigned int order)
{
	struct nvx_grant *g = vmf->vma->vm_file->private_data;
	struct folio *folio;
	vm_fault_t ret;

	if (order != PMD_ORDER || vmf->pgoff >= g->nr_pieces * NVX_PIECE_PAGES)
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
	nvx_grant_map_around(vmf, g);
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
	unsigned long total = nvx_grant_bytes(g) >> PAGE_SHIFT;
	unsigned long pgoff = vma->vm_pgoff, npages = vma_pages(vma);

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (pgoff >= total || npages > total - pgoff)
		return -EINVAL;
	/* a template is read-only, and stays so (no mprotect) */
	if (READ_ONCE(g->sealed)) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		vm_flags_clear(vma, VM_MAYWRITE);
	}

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_HUGEPAGE);
	vma->vm_ops = g->tmpl ? &nvx_clone_vm_ops : &nvx_grant_vm_ops;
	return 0;
}

static int nvx_grant_ioc_info(struct nvx_ucmd *ucmd)
{
	struct nvx_grant *g = ucmd->file->private_data;
	struct nvx_grant_info *info = ucmd->arg;

	if (info->flags)
		return -EINVAL;
	info->node = g->nid;
	info->bytes = nvx_grant_bytes(g);
	info->piece_bytes = NVX_PIECE_BYTES;
	info->nr_pieces = g->nr_pieces;
	info->block_bytes = NVX_BLOCK_BYTES;
	info->nr_blocks = g->nr_blocks;
	return 0;
}

static int nvx_grant_ioc_ranges(struct nvx_ucmd *ucmd)
{
	struct nvx_grant *g = ucmd->file->private_data;
	struct nvx_grant_ranges *r = ucmd->arg;
	struct nvx_grant_range __user *out = u64_to_user_ptr(r->ranges);
	struct nvx_grant_range cur = {};
	u32 room = r->count, count = 0;
	unsigned long i;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (r->flags || g->tmpl)
		return -EINVAL;

	for (i = 0; i < g->nr_pieces + g->nr_blocks; i++) {
		u64 phys, len = NVX_PIECE_BYTES;
		struct page *page;

		if (i < g->nr_pieces) {
			page = g->pieces[i];
		} else {
			struct nvx_block_ref *b = &g->blocks[i - g->nr_pieces];

			page = nvx_small_block(b->s, b->idx);
			len = NVX_BLOCK_BYTES;
		}
		phys = PFN_PHYS(page_to_pfn(page));
		if (count && cur.phys + cur.bytes == phys) {
			cur.bytes += len;
			continue;
		}
		if (count && count <= room &&
		    copy_to_user(&out[count - 1], &cur, sizeof(cur)))
			return -EFAULT;
		cur.phys = phys;
		cur.bytes = len;
		count++;
		cond_resched();
	}
	if (count && count <= room &&
	    copy_to_user(&out[count - 1], &cur, sizeof(cur)))
		return -EFAULT;
	r->count = count;
	return count > room ? -EOVERFLOW : 0;
}

static const struct nvx_ioctl_op nvx_grant_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_GRANT_BASE, NVX_GRANT_IOC_INFO,
		     nvx_grant_ioc_info, struct nvx_grant_info, nr_pieces, 0),
	/* sizes from before block_bytes and nr_blocks were added work */
	NVX_IOCTL_OP(NVX_IOC_GRANT_BASE, NVX_GRANT_IOC_RANGES,
		     nvx_grant_ioc_ranges, struct nvx_grant_ranges, ranges,
		     NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL_OP(NVX_IOC_GRANT_BASE, NVX_GRANT_IOC_SEAL,
		     nvx_grant_ioc_seal, struct nvx_grant_seal, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_GRANT_BASE, NVX_GRANT_IOC_CLONE,
		     nvx_grant_ioc_clone, struct nvx_grant_clone, bytes, 0),
};

/* /proc/PID/fdinfo/N of a grant: what it is and what it holds. */
static void nvx_grant_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct nvx_grant *g = file->private_data;

	seq_puts(m, "nvx-object:\tgrant\n");
	seq_printf(m, "bytes:\t%llu\n", nvx_grant_bytes(g));
	seq_printf(m, "node:\t%d\n", g->nid);
	seq_printf(m, "pieces:\t%lu\n", g->nr_pieces);
	seq_printf(m, "piece_bytes:\t%llu\n", NVX_PIECE_BYTES);
	seq_printf(m, "blocks:\t%lu\n", g->nr_blocks);
	seq_printf(m, "block_bytes:\t%llu\n", NVX_BLOCK_BYTES);
	seq_printf(m, "template:\t%d\n", READ_ONCE(g->sealed));
	seq_printf(m, "clone:\t%d\n", !!g->tmpl);
	seq_printf(m, "copied_pages:\t%ld\n", atomic_long_read(&g->nr_copies));
	seq_printf(m, "charged_pages:\t%lu\n", g->accounted);
}

DEFINE_NVX_FOPS(nvx_grant, NVX_IOC_GRANT_BASE, nvx_grant_ops,
		.release = nvx_grant_release,
		.mmap = nvx_grant_mmap,
		.get_unmapped_area = thp_get_unmapped_area,
		.show_fdinfo = nvx_grant_show_fdinfo);

/**
 * nvx_grant_fget_flags() - the grant behind a file descriptor
 * @fd: a file descriptor of the calling process.
 * @gfile: out: the grant's file, with a reference for the caller
 *	(fput() it when done with the grant).
 * @flags: NVX_GRANT_FGET_CLONES: clones are taken too.
 *
 * The caller may read the grant's memory through nvx_grant_page() and
 * write it through nvx_grant_page_write() until nvx_grant_put() (for a
 * grant that is not a clone nvx_grant_page() may be written to as well);
 * a template cannot be sealed meanwhile. Templates (read-only) are
 * refused; clones only when the caller says it writes them through
 * nvx_grant_page_write(), which makes a clone's copies
 * (nvx_grant_fget() passes no flag).
 *
 * Return: the grant; ERR_PTR(-EBADF) when @fd is not open,
 * ERR_PTR(-EINVAL) when it is not a grant, or a clone not asked for, or
 * @flags has an unknown bit, ERR_PTR(-EPERM) for a template.
 */
struct nvx_grant *nvx_grant_fget_flags(int fd, struct file **gfile,
				       unsigned int flags)
{
	struct nvx_grant *g;
	struct file *f;
	int ret = 0;

	if (flags & ~NVX_GRANT_FGET_CLONES)
		return ERR_PTR(-EINVAL);
	f = fget(fd);
	if (!f)
		return ERR_PTR(-EBADF);
	if (f->f_op != &nvx_grant_fops) {
		fput(f);
		return ERR_PTR(-EINVAL);
	}
	g = f->private_data;
	spin_lock(&g->lock);
	if (g->sealed)
		ret = -EPERM;
	else if (g->tmpl && !(flags & NVX_GRANT_FGET_CLONES))
		ret = -EINVAL;
	else
		g->kusers++;
	spin_unlock(&g->lock);
	if (ret) {
		fput(f);
		return ERR_PTR(ret);
	}
	*gfile = f;
	return g;
}
EXPORT_SYMBOL_GPL(nvx_grant_fget_flags);

/**
 * nvx_grant_put() - done with a grant from nvx_grant_fget()
 * @g: the grant.
 * @gfile: its file; its reference is dropped.
 */
void nvx_grant_put(struct nvx_grant *g, struct file *gfile)
{
	spin_lock(&g->lock);
	g->kusers--;
	spin_unlock(&g->lock);
	fput(gfile);
}
EXPORT_SYMBOL_GPL(nvx_grant_put);

/**
 * nvx_grant_alloc() - an empty grant
 *
 * Return: the grant, or NULL without memory.
 */
struct nvx_grant *nvx_grant_alloc(void)
{
	struct nvx_grant *g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);

	if (!g)
		return NULL;
	INIT_LIST_HEAD(&g->chunks);
	spin_lock_init(&g->lock);
	xa_init(&g->copies);
	return g;
}

/**
 * nvx_grant_file() - the file of a new grant
 * @g: the grant, owned by the file from here on (its release frees it).
 * @bytes: its size.
 *
 * An inode of its own, with the grant's size: the fault path maps a PMD
 * only below i_size (and fstat() shows the size); its address space
 * tracks the grant's mappings.
 *
 * Return: the file, or an ERR_PTR() (then @g is still the caller's).
 */
struct file *nvx_grant_file(struct nvx_grant *g, u64 bytes)
{
	struct file *gfile;

	gfile = anon_inode_create_getfile("[nvx-grant]", &nvx_grant_fops, g,
					  O_RDWR, NULL);
	if (IS_ERR(gfile))
		return gfile;
	i_size_write(file_inode(gfile), bytes);
	g->mapping = gfile->f_mapping;
	return gfile;
}

/**
 * nvx_grant_bytes() - size of a grant
 * @g: the grant.
 *
 * Return: its size in bytes: whole pieces, then blocks.
 */
u64 nvx_grant_bytes(const struct nvx_grant *g)
{
	return (u64)g->nr_pieces * NVX_PIECE_BYTES +
	       (u64)g->nr_blocks * NVX_BLOCK_BYTES;
}
EXPORT_SYMBOL_GPL(nvx_grant_bytes);

/**
 * nvx_grant_contig_bytes() - the contiguous unit of a grant at an offset
 * @g: the grant.
 * @off: a byte offset in it, below nvx_grant_bytes().
 *
 * Every naturally aligned range of this size in @g is physically
 * contiguous and in the direct map: a piece in the whole pieces at the
 * start of a grant, a block after them.
 *
 * Return: NVX_PIECE_BYTES or NVX_BLOCK_BYTES.
 */
u64 nvx_grant_contig_bytes(const struct nvx_grant *g, u64 off)
{
	return off < (u64)g->nr_pieces * NVX_PIECE_BYTES ? NVX_PIECE_BYTES :
							   NVX_BLOCK_BYTES;
}
EXPORT_SYMBOL_GPL(nvx_grant_contig_bytes);

/*
 * Fill @g from any node: the caller's first, then any other that has
 * room. Returns as nvx_grant_fill(); when every node fails, the most
 * telling error: "wait for the scrubber" (-EAGAIN) says more than "no
 * room" (-ENOSPC).
 */
static long nvx_grant_fill_any(struct nvx_grant *g, unsigned long nr,
			       unsigned long nb, u32 flags)
{
	int first = numa_node_id(), nid;
	long ret, err;

	ret = nvx_grant_fill_node(g, first, nr, nb, flags);
	err = ret;
	for_each_online_node(nid) {
		if (ret >= 0 || ret == -EINTR)
			return ret;
		if (nid == first)
			continue;
		ret = nvx_grant_fill_node(g, nid, nr, nb, flags);
		if (ret == -EAGAIN)
			err = ret;
	}
	return ret == -ENOSPC ? err : ret;
}

/**
 * nvx_pool_ioc_grant() - NVX_IOC_GRANT: a new grant fd
 * @ucmd: the call; its argument is a struct nvx_grant_create.
 *
 * Return: 0 with the fd in the argument, or the errors listed in
 * include/uapi/nvx/pool.h.
 */
int nvx_pool_ioc_grant(struct nvx_ucmd *ucmd)
{
	struct nvx_grant_create *req = ucmd->arg;
	unsigned long nr, nb = 0, i;
	struct nvx_grant *g;
	struct file *gfile;
	int ret, fd, nid;
	long dirty = 0;
	u64 bytes, zeroed, t0 = 0;

	if (trace_nvx_grant_enabled())
		t0 = ktime_get_ns();
	if (req->flags & ~NVX_GRANT_FLAGS || req->reserved)
		return -EINVAL;
	if ((req->flags & NVX_GRANT_WAIT) && (req->flags & NVX_GRANT_CLEAN_ONLY))
		return -EINVAL;
	if ((req->flags & NVX_GRANT_BLOCKS) &&
	    !IS_ALIGNED(req->bytes, NVX_BLOCK_BYTES))
		return -EINVAL;
	ret = nvx_pool_check_req(req->node, req->bytes, &nr);
	if (ret)
		return ret;
	if (req->flags & NVX_GRANT_BLOCKS) {
		nr = req->bytes >> NVX_POOL_PIECE_SHIFT;
		nb = (req->bytes & (NVX_PIECE_BYTES - 1)) >> NVX_POOL_BLOCK_SHIFT;
	}
	bytes = (u64)nr * NVX_PIECE_BYTES + (u64)nb * NVX_BLOCK_BYTES;
	if (grant_max_bytes && bytes > grant_max_bytes)
		return -EFBIG;
	/* never more than the whole pool: bounds the allocations below */
	if (nr + !!nb > nvx_pool_total_pieces()) {
		atomic64_inc(&nvx_pool.grant_failures);
		return -ENOSPC;
	}

	g = nvx_grant_alloc();
	if (!g)
		return -ENOMEM;
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

	if (req->node != NVX_NODE_ANY)
		dirty = nvx_grant_fill_node(g, req->node, nr, nb, req->flags);
	else
		dirty = nvx_grant_fill_any(g, nr, nb, req->flags);
	if (dirty < 0) {
		ret = dirty;
		if (ret == -ENOSPC || ret == -EAGAIN)
			atomic64_inc(&nvx_pool.grant_failures);
		goto err_free;
	}
	nid = nr ? list_first_entry(&g->chunks, struct nvx_chunk, list)->nid :
		   g->blocks[0].s->nid;
	g->nid = nid;

	/* dirty pieces and blocks taken on the caller's path are zeroed here */
	zeroed = (u64)dirty * NVX_PIECE_BYTES;
	for (i = nr - dirty; i < nr; i++) {
		nvx_piece_zero(g->pieces[i]);
		atomic64_add(NVX_PIECE_BYTES, &nvx_pool.sync_zeroed_bytes);
	}
	for (i = 0; i < nb; i++) {
		if (!g->blocks[i].dirty)
			continue;
		nvx_pages_zero(nvx_small_block(g->blocks[i].s, g->blocks[i].idx),
			       NVX_BLOCK_PAGES);
		zeroed += NVX_BLOCK_BYTES;
		atomic64_add(NVX_BLOCK_BYTES, &nvx_pool.sync_zeroed_bytes);
	}

	gfile = nvx_grant_file(g, bytes);
	if (IS_ERR(gfile)) {
		ret = PTR_ERR(gfile);
		goto err_free;
	}
	/* from here on the file owns the grant: its release frees it */
	atomic64_inc(&nvx_pool.grants_live);
	fd = nvx_ucmd_fd(ucmd, gfile,
			 req->flags & NVX_GRANT_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0)
		return fd;
	atomic64_inc(&nvx_pool.grants);
	trace_nvx_grant(nid, bytes, zeroed,
			t0 ? ktime_get_ns() - t0 : 0);
	req->fd = fd;
	req->granted = bytes;
	return 0;

err_free:
	nvx_grant_free(g);
	return ret;
}
