// SPDX-License-Identifier: GPL-2.0
/*
 * nvx templates and copy-on-write clones of grants.
 *
 * NVX_GRANT_IOC_SEAL makes a grant a template: read-only for good. It
 * needs that nothing may write the grant any more: no shared mapping
 * that is or may become writable (the mapping's i_mmap_writable, denied
 * while the seal looks), no kernel user (nvx_grant_fget()), no page
 * pinned for DMA. Afterwards mmap() refuses PROT_WRITE and clears
 * VM_MAYWRITE, and nvx_grant_fget() refuses the template.
 *
 * NVX_GRANT_IOC_CLONE makes a clone: a grant file of the template's size
 * that owns no pool memory, only a reference to the template's file and
 * an xarray of its own pages, empty at first (O(1) in the template's
 * size). Its mappings are shared, with write notification
 * (->page_mkwrite), so every page starts mapped read-only:
 *
 *  - a read fault maps the clone's own copy of the page if it has one,
 *    else the template's page (a whole template piece with one read-only
 *    PMD, when the clone has no copy in it);
 *  - a write fault, or the first write to a read-only mapped template
 *    page, makes the copy: a page from the page allocator charged to the
 *    cloner's memory cgroup (set_active_memcg()), the template's 4 KiB
 *    copied into it, stored in the xarray; then every mapping of the
 *    clone that maps the template's page at that offset is zapped
 *    (unmap_mapping_pages()), and faults again onto the copy.
 *
 * The race between a read fault mapping the template's page and a copy
 * being made is closed by the template folio's lock: the read fault
 * takes it before it looks for a copy and holds it until the page is
 * mapped (VM_FAULT_LOCKED); the copy is stored and the zap done under
 * it. One more case: the generic fault path maps a template piece with a
 * PMD when the page-table slot is empty, whatever the piece holds, so a
 * read fault in a piece where the clone has copies and whose slot is
 * empty (and could take a PMD) copies the page instead (at most one page
 * per piece and mapping: afterwards the slot holds a page table, which
 * 6.12 frees only with the VMA, under the mmap lock held for writing; a
 * kernel that reclaims empty page tables under the read lock would need
 * this looked at again). The template folio's lock is shared by every
 * clone of the template and by the template's own faults: a clone with
 * many mappings of one piece makes the others wait while its copy's zap
 * walks them.
 *
 * Copies are pages of the page allocator, not of the pool: a clone's
 * private memory grows with its writes, one 4 KiB page at a time, on the
 * fault path, where neither taking a piece nor waiting for the scrubber
 * fits; they are charged as kernel memory to the memory cgroup of the
 * process that made the clone, and to its RLIMIT_MEMLOCK as grants are
 * (they are unswappable), and freed with the clone. A copy that cannot
 * be had (the limit, the cgroup, no memory) fails the fault with SIGBUS.
 * KVM, GUP and fork reach a clone through its mappings, like any grant.
 * A kernel user that takes clones (nvx_grant_fget_flags() with
 * NVX_GRANT_FGET_CLONES: user VMs) writes through nvx_grant_page_write(),
 * which makes the copy the same way; shared RX queues do not take them.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/nvx_grant.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include "pool.h"

/* Is a page of @g pinned for DMA (FOLL_PIN: it may be written)? */
static bool nvx_grant_dma_pinned(struct nvx_grant *g)
{
	unsigned long i, j;

	for (i = 0; i < g->nr_pieces; i++)
		if (folio_maybe_dma_pinned(page_folio(g->pieces[i])))
			return true;
	for (i = 0; i < g->nr_blocks; i++) {
		struct page *b = nvx_small_block(g->blocks[i].s,
						 g->blocks[i].idx);

		for (j = 0; j < NVX_BLOCK_PAGES; j++)
			if (folio_maybe_dma_pinned(page_folio(nth_page(b, j))))
				return true;
	}
	return false;
}

/**
 * nvx_grant_ioc_seal() - NVX_GRANT_IOC_SEAL: make a grant a template
 * @ucmd: the call, on a grant fd; its argument is a struct nvx_grant_seal.
 *
 * Return: 0, or the errors listed in include/uapi/nvx/pool.h.
 */
int nvx_grant_ioc_seal(struct nvx_ucmd *ucmd)
{
	struct nvx_grant *g = ucmd->file->private_data;
	struct nvx_grant_seal *a = ucmd->arg;
	int ret = 0;

	if (a->flags || a->reserved || g->tmpl)
		return -EINVAL;
	if (READ_ONCE(g->sealed))
		return 0;
	/* no shared mapping that may write; none made while we look */
	if (mapping_deny_writable(g->mapping))
		return -EBUSY;
	/* a new pin needs a writable mapping: none can be made now */
	if (nvx_grant_dma_pinned(g)) {
		ret = -EBUSY;
	} else {
		spin_lock(&g->lock);
		if (g->kusers)
			ret = -EBUSY;
		else
			WRITE_ONCE(g->sealed, true);
		spin_unlock(&g->lock);
	}
	/* from here on nvx_grant_mmap() refuses writable mappings itself */
	mapping_allow_writable(g->mapping);
	return ret;
}

/**
 * nvx_grant_ioc_clone() - NVX_GRANT_IOC_CLONE: a clone of a template
 * @ucmd: the call, on a template's fd; its argument is a struct
 *	nvx_grant_clone.
 *
 * Return: 0 with the clone's fd in the argument, or the errors listed in
 * include/uapi/nvx/pool.h.
 */
int nvx_grant_ioc_clone(struct nvx_ucmd *ucmd)
{
	struct nvx_grant *t = ucmd->file->private_data, *g;
	struct nvx_grant_clone *a = ucmd->arg;
	struct file *gfile;
	u64 bytes;
	int fd;

	if (a->flags & ~NVX_CLONE_FLAGS)
		return -EINVAL;
	if (!READ_ONCE(t->sealed))
		return -EINVAL;

	g = nvx_grant_alloc();
	if (!g)
		return -ENOMEM;
	g->nr_pieces = t->nr_pieces;
	g->nr_blocks = t->nr_blocks;
	g->nid = t->nid;
	g->tmpl = t;
	g->tmpl_file = get_file(ucmd->file);
	g->memcg = get_mem_cgroup_from_mm(current->mm);
	/* copies are charged to the cloner's RLIMIT_MEMLOCK, as grants are */
	if (!capable(CAP_IPC_LOCK)) {
		g->user = get_uid(current_user());
		g->memlock = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	}
	bytes = nvx_grant_bytes(g);

	gfile = nvx_grant_file(g, bytes);
	if (IS_ERR(gfile)) {
		nvx_grant_free(g);
		return PTR_ERR(gfile);
	}
	/* a clone is a grant: its release counts like one */
	atomic64_inc(&nvx_pool.grants_live);
	fd = nvx_ucmd_fd(ucmd, gfile,
			 a->flags & NVX_CLONE_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0)
		return fd;
	atomic64_inc(&nvx_pool.grants);
	a->fd = fd;
	a->bytes = bytes;
	return 0;
}

/**
 * nvx_clone_page() - a page of a clone, as it reads
 * @g: the clone.
 * @pgoff: page offset, below nvx_grant_bytes() >> PAGE_SHIFT.
 *
 * Return: the clone's copy of the page, or the template's page.
 */
struct page *nvx_clone_page(struct nvx_grant *g, unsigned long pgoff)
{
	struct page *page = xa_load(&g->copies, pgoff);

	return page ?: nvx_grant_page(g->tmpl, pgoff);
}

/**
 * nvx_clone_free() - free what a clone holds
 * @g: the clone, whose file is being released; the caller frees @g.
 *
 * Its copies go to the page allocator (a copy still pinned goes with its
 * last reference), and the template's file is released.
 */
void nvx_clone_free(struct nvx_grant *g)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&g->copies, idx, page)
		put_page(page);
	xa_destroy(&g->copies);
	if (g->user) {
		nvx_unaccount(g->user, g->accounted);
		free_uid(g->user);
	}
	mem_cgroup_put(g->memcg);
	fput(g->tmpl_file);
}

/*
 * Charge one page to the cloner's RLIMIT_MEMLOCK, if it is charged: the
 * limit it had when it cloned, not that of the task whose write (a
 * fault, a system process's REPLY, another VM's message) makes the copy.
 */
static int nvx_clone_charge(struct nvx_grant *g)
{
	int ret;

	if (!g->user)
		return 0;
	ret = nvx_account_limit(g->user, 1, g->memlock);
	if (!ret) {
		spin_lock(&g->lock);
		g->accounted++;
		spin_unlock(&g->lock);
	}
	return ret;
}

static void nvx_clone_uncharge(struct nvx_grant *g)
{
	if (!g->user)
		return;
	nvx_unaccount(g->user, 1);
	spin_lock(&g->lock);
	g->accounted--;
	spin_unlock(&g->lock);
}

/*
 * The clone's own copy of page @pgoff, made now if it has none; see the
 * top of this file. Returns the page (the clone's reference, none for
 * the caller) or an ERR_PTR(): -EDQUOT over RLIMIT_MEMLOCK, -ENOMEM,
 * -EHWPOISON when the template's page is poisoned.
 */
static struct page *nvx_clone_copy(struct nvx_grant *g, pgoff_t pgoff)
{
	struct page *src, *page, *cur;
	struct mem_cgroup *old;
	struct folio *tf;
	int ret;

	page = xa_load(&g->copies, pgoff);
	if (page)
		return page;
	ret = nvx_clone_charge(g);
	if (ret)
		return ERR_PTR(ret);
	src = nvx_grant_page(g->tmpl, pgoff);
	/* the page and the xarray's nodes: the cloner's memory cgroup */
	old = set_active_memcg(g->memcg);
	page = alloc_page(GFP_HIGHUSER | __GFP_ACCOUNT);
	if (page && xa_reserve(&g->copies, pgoff, GFP_KERNEL_ACCOUNT)) {
		__free_page(page);
		page = NULL;
	}
	set_active_memcg(old);
	if (!page) {
		nvx_clone_uncharge(g);
		return ERR_PTR(-ENOMEM);
	}
	if (copy_mc_highpage(page, src)) {
		xa_release(&g->copies, pgoff);
		__free_page(page);
		nvx_clone_uncharge(g);
		return ERR_PTR(-EHWPOISON);
	}

	/*
	 * Copies of @pgoff are stored only here, under the lock of the
	 * template's folio that holds it: a reserved entry reads as NULL,
	 * and xa_store() fills it without allocating.
	 */
	tf = page_folio(src);
	folio_lock(tf);
	cur = xa_load(&g->copies, pgoff);
	if (cur) {
		/* another fault stored its copy first: use that */
		folio_unlock(tf);
		__free_page(page);
		nvx_clone_uncharge(g);
		return cur;
	}
	cur = xa_store(&g->copies, pgoff, page, GFP_NOWAIT);
	if (xa_is_err(cur)) {
		folio_unlock(tf);
		__free_page(page);
		nvx_clone_uncharge(g);
		return ERR_PTR(xa_err(cur));
	}
	atomic_long_inc(&g->nr_copies);
	/* no mapping of the clone may go on showing the template's page */
	unmap_mapping_pages(g->mapping, pgoff, 1, false);
	folio_unlock(tf);
	return page;
}

/**
 * nvx_grant_page_write() - a page of a grant, to be written by the kernel
 * @g: the grant, taken with nvx_grant_fget_flags().
 * @pgoff: page offset, below nvx_grant_bytes() >> PAGE_SHIFT.
 *
 * Of a clone: its own copy of the page, made now if it has none (as a
 * write fault makes it: charged to the cloner, the template's page
 * zapped from the clone's mappings); the copy stays the clone's page
 * until the clone is freed. Of any other grant: nvx_grant_page().
 *
 * Context: may sleep (not under a spinlock, nor under a lock that a
 * fault on the clone's mappings or a KVM MMU notifier takes).
 * Return: the page, or ERR_PTR(-EDQUOT) over the cloner's
 * RLIMIT_MEMLOCK, ERR_PTR(-ENOMEM), ERR_PTR(-EHWPOISON) for a poisoned
 * template page.
 */
struct page *nvx_grant_page_write(struct nvx_grant *g, unsigned long pgoff)
{
	if (g->tmpl)
		return nvx_clone_copy(g, pgoff);
	return nvx_grant_page(g, pgoff);
}
EXPORT_SYMBOL_GPL(nvx_grant_page_write);

/* The fault's answer to an error of nvx_clone_copy(). */
static vm_fault_t nvx_clone_error(struct page *page)
{
	/*
	 * Not VM_FAULT_OOM for -ENOMEM: the cloner's memory cgroup may be
	 * full while the faulting task's is not, and the fault would be
	 * retried for ever.
	 */
	return PTR_ERR(page) == -EHWPOISON ? VM_FAULT_HWPOISON :
					     VM_FAULT_SIGBUS;
}

/* Has the clone a copy in the template piece that holds @pgoff? */
static bool nvx_clone_piece_copied(struct nvx_grant *g, pgoff_t pgoff)
{
	unsigned long first = round_down(pgoff, NVX_PIECE_PAGES);

	return xa_find(&g->copies, &first, first + NVX_PIECE_PAGES - 1,
		       XA_PRESENT);
}

static vm_fault_t nvx_clone_fault(struct vm_fault *vmf)
{
	struct nvx_grant *g = vmf->vma->vm_file->private_data;
	struct page *page, *own;
	struct folio *tf;

	if (vmf->pgoff >= nvx_grant_bytes(g) >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (vmf->flags & FAULT_FLAG_WRITE)
		goto copy;

	page = nvx_grant_page(g->tmpl, vmf->pgoff);
	tf = page_folio(page);
	folio_lock(tf);
	own = xa_load(&g->copies, vmf->pgoff);
	if (own) {
		folio_unlock(tf);
		get_page(own);
		vmf->page = own;
		return 0;
	}
	/* an empty slot would take the template piece's PMD: copy instead */
	if (folio_test_large(tf) && pmd_none(pmdp_get_lockless(vmf->pmd)) &&
	    !vma_thp_disabled(vmf->vma, vmf->vma->vm_flags) &&
	    thp_vma_suitable_order(vmf->vma, vmf->address & PMD_MASK,
				   PMD_ORDER) &&
	    nvx_clone_piece_copied(g, vmf->pgoff)) {
		folio_unlock(tf);
		goto copy;
	}
	folio_get(tf);
	vmf->page = page;
	return VM_FAULT_LOCKED;

copy:
	page = nvx_clone_copy(g, vmf->pgoff);
	if (IS_ERR(page))
		return nvx_clone_error(page);
	get_page(page);
	vmf->page = page;
	return 0;
}

/*
 * A read fault maps a template piece the clone has no copy in with one
 * read-only PMD; anything else falls back to the page fault.
 */
static vm_fault_t nvx_clone_huge_fault(struct vm_fault *vmf,
				       unsigned int order)
{
	struct nvx_grant *g = vmf->vma->vm_file->private_data;
	struct folio *tf;
	vm_fault_t ret;

	if (order != PMD_ORDER || (vmf->flags & FAULT_FLAG_WRITE) ||
	    vmf->pgoff >= g->nr_pieces * NVX_PIECE_PAGES)
		return VM_FAULT_FALLBACK;
	tf = page_folio(nvx_grant_page(g->tmpl, vmf->pgoff));
	folio_lock(tf);
	if (nvx_clone_piece_copied(g, vmf->pgoff)) {
		folio_unlock(tf);
		return VM_FAULT_FALLBACK;
	}
	folio_get(tf);
	ret = do_set_pmd(vmf, &tf->page);
	folio_unlock(tf);
	if (ret) {
		folio_put(tf);
		return ret;
	}
	return VM_FAULT_NOPAGE;
}

/*
 * A write to a read-only mapped page: the clone's own page becomes
 * writable; the template's page is copied, its mapping zapped, and the
 * access faults again onto the copy.
 */
static vm_fault_t nvx_clone_page_mkwrite(struct vm_fault *vmf)
{
	struct nvx_grant *g = vmf->vma->vm_file->private_data;
	struct folio *folio = page_folio(vmf->page);
	struct page *page = xa_load(&g->copies, vmf->pgoff);

	if (page == vmf->page) {
		folio_lock(folio);
		return VM_FAULT_LOCKED;
	}
	if (page) {
		/*
		 * The template's page, mapped over a copy made since: the
		 * copy's zap is on its way, or done and this fault raced
		 * it. Zap it here too, so that the access faults again
		 * onto the copy whatever happened (never a retry loop).
		 */
		unmap_mapping_pages(g->mapping, vmf->pgoff, 1, false);
		return VM_FAULT_NOPAGE;
	}
	page = nvx_clone_copy(g, vmf->pgoff);
	if (IS_ERR(page))
		return nvx_clone_error(page);
	return VM_FAULT_NOPAGE;
}

const struct vm_operations_struct nvx_clone_vm_ops = {
	.fault = nvx_clone_fault,
	.huge_fault = nvx_clone_huge_fault,
	.page_mkwrite = nvx_clone_page_mkwrite,
};
