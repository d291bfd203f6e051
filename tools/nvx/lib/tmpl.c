// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: template files. A template made by nvx_uvm_tmpl_make() lives
 * as long as its grant fd; written to a file it outlives the process, and
 * any process of the machine can load it and start clones of it. The
 * format is in nvx_uvm.h (struct nvx_uvm_tmpl_file) and
 * Documentation/nvx/uvm.rst, "Template files".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "nvx_uvm.h"

#define NVX_TMPL_FNV_OFFSET	0xcbf29ce484222325ULL
#define NVX_TMPL_FNV_PRIME	0x100000001b3ULL
#define NVX_TMPL_IDX_BATCH	512	/* page indexes per read or write */

/* The vCPU state in the file's order (not the order KVM takes it in). */
static const size_t nvx_tmpl_state_off[NVX_UVM_TMPL_NR_STATE] = {
	offsetof(struct nvx_uvm_tmpl, regs),
	offsetof(struct nvx_uvm_tmpl, sregs),
	offsetof(struct nvx_uvm_tmpl, xcrs),
	offsetof(struct nvx_uvm_tmpl, xsave),
	offsetof(struct nvx_uvm_tmpl, lapic),
	offsetof(struct nvx_uvm_tmpl, events),
};

static const uint32_t nvx_tmpl_state_size[NVX_UVM_TMPL_NR_STATE] = {
	sizeof(struct kvm_regs),
	sizeof(struct kvm_sregs),
	sizeof(struct kvm_xcrs),
	sizeof(struct kvm_xsave),
	sizeof(struct kvm_lapic_state),
	sizeof(struct kvm_vcpu_events),
};

/* FNV-1a over the 64-bit words of @p (@n a multiple of 8). */
static uint64_t nvx_tmpl_sum(uint64_t h, const void *p, size_t n)
{
	const uint64_t *w = p;
	size_t i;

	for (i = 0; i < n / 8; i++)
		h = (h ^ w[i]) * NVX_TMPL_FNV_PRIME;
	return h;
}

static int nvx_tmpl_write(int fd, const void *p, size_t n, uint64_t *sum)
{
	const char *c = p;
	ssize_t k;

	if (sum)
		*sum = nvx_tmpl_sum(*sum, p, n);
	while (n) {
		k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		c += k;
		n -= k;
	}
	return 0;
}

/* Exactly @n bytes, or -ENODATA at the end of the file. */
static int nvx_tmpl_read(int fd, void *p, size_t n, uint64_t *sum)
{
	size_t left = n;
	char *c = p;
	ssize_t k;

	while (left) {
		k = read(fd, c, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ENODATA;
		c += k;
		left -= k;
	}
	if (sum)
		*sum = nvx_tmpl_sum(*sum, p, n);
	return 0;
}

static bool nvx_tmpl_zero(const void *page)
{
	const uint64_t *w = page;
	size_t i;

	for (i = 0; i < NVX_UVM_TMPL_PAGE / 8; i++)
		if (w[i])
			return false;
	return true;
}

/* The file's header for @t, @nr_pages stored; @sum not yet set. */
static void nvx_tmpl_header(struct nvx_uvm_tmpl_file *h,
			    const struct nvx_uvm_tmpl *t, uint32_t nr_pages)
{
	unsigned int i;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, NVX_UVM_TMPL_MAGIC, sizeof(NVX_UVM_TMPL_MAGIC));
	h->version = NVX_UVM_TMPL_VERSION;
	h->hdr_size = sizeof(*h);
	h->mem_size = t->mem_size;
	h->tsc_khz = t->tsc_khz;
	h->entries = t->entries;
	h->nr_pages = nr_pages;
	for (i = 0; i < NVX_UVM_TMPL_NR_STATE; i++)
		h->state_size[i] = nvx_tmpl_state_size[i];
	snprintf(h->name, sizeof(h->name), "%s", t->name);
}

/**
 * nvx_uvm_tmpl_save() - write a template to a file
 * @t: from nvx_uvm_tmpl_make() or nvx_uvm_tmpl_load().
 * @fd: open for writing, at offset 0 (a new file: the caller renames it
 *	into place once this returns 0).
 * @where: set to the name of the step that failed.
 *
 * Only the pages that are not zero are stored (a 4 MiB guest that ran
 * to its ready point stores a few dozen). The template is unchanged.
 *
 * Return: 0 or a negative errno.
 */
int nvx_uvm_tmpl_save(const struct nvx_uvm_tmpl *t, int fd,
		      const char **where)
{
	uint64_t npages = t->mem_size / NVX_UVM_TMPL_PAGE, i, sum;
	uint64_t idx[NVX_TMPL_IDX_BATCH];
	struct nvx_uvm_tmpl_file h;
	uint32_t nr = 0, n = 0;
	unsigned int s;
	char *mem;
	int ret;

	*where = "map the template";
	mem = mmap(NULL, t->mem_size, PROT_READ, MAP_SHARED, t->grant_fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	for (i = 0; i < npages; i++)
		nr += !nvx_tmpl_zero(mem + i * NVX_UVM_TMPL_PAGE);

	/* the sum covers what follows the header: compute it first */
	sum = NVX_TMPL_FNV_OFFSET;
	for (s = 0; s < NVX_UVM_TMPL_NR_STATE; s++)
		sum = nvx_tmpl_sum(sum, (const char *)t + nvx_tmpl_state_off[s],
				   nvx_tmpl_state_size[s]);
	for (i = 0; i < npages; i++)
		if (!nvx_tmpl_zero(mem + i * NVX_UVM_TMPL_PAGE))
			sum = nvx_tmpl_sum(sum, &i, sizeof(i));
	for (i = 0; i < npages; i++)
		if (!nvx_tmpl_zero(mem + i * NVX_UVM_TMPL_PAGE))
			sum = nvx_tmpl_sum(sum, mem + i * NVX_UVM_TMPL_PAGE,
					   NVX_UVM_TMPL_PAGE);
	nvx_tmpl_header(&h, t, nr);
	h.sum = sum;

	*where = "write the template file";
	ret = nvx_tmpl_write(fd, &h, sizeof(h), NULL);
	for (s = 0; s < NVX_UVM_TMPL_NR_STATE && !ret; s++)
		ret = nvx_tmpl_write(fd, (const char *)t + nvx_tmpl_state_off[s],
				     nvx_tmpl_state_size[s], NULL);
	for (i = 0; i < npages && !ret; i++) {
		if (!nvx_tmpl_zero(mem + i * NVX_UVM_TMPL_PAGE))
			idx[n++] = i;
		if (n == NVX_TMPL_IDX_BATCH || (i == npages - 1 && n)) {
			ret = nvx_tmpl_write(fd, idx, n * sizeof(*idx), NULL);
			n = 0;
		}
	}
	for (i = 0; i < npages && !ret; i++)
		if (!nvx_tmpl_zero(mem + i * NVX_UVM_TMPL_PAGE))
			ret = nvx_tmpl_write(fd, mem + i * NVX_UVM_TMPL_PAGE,
					     NVX_UVM_TMPL_PAGE, NULL);
	munmap(mem, t->mem_size);
	if (!ret)
		*where = NULL;
	return ret;
}

/* Check a header read from a file: 0, or -EINVAL with *@where saying why. */
static int nvx_tmpl_check(const struct nvx_uvm_tmpl_file *h,
			  const char **where)
{
	unsigned int s;

	*where = "not an nvx template file (magic)";
	if (memcmp(h->magic, NVX_UVM_TMPL_MAGIC, sizeof(NVX_UVM_TMPL_MAGIC)))
		return -EINVAL;
	*where = "template file version not supported";
	if (h->version != NVX_UVM_TMPL_VERSION ||
	    h->hdr_size != sizeof(*h))
		return -EINVAL;
	*where = "template file: guest RAM size";
	if (!h->mem_size || h->mem_size % NVX_UVM_TMPL_PAGE ||
	    h->mem_size > NVX_UVM_TMPL_MAX_MEM ||
	    h->mem_size <= NVX_UVM_IMAGE_GPA)
		return -EINVAL;
	*where = "template file: pages stored";
	if (h->nr_pages > h->mem_size / NVX_UVM_TMPL_PAGE)
		return -EINVAL;
	*where = "template file: ring entries";
	if (!h->entries || h->entries > NVX_UVM_MAX_ENTRIES ||
	    (h->entries & (h->entries - 1)))
		return -EINVAL;
	*where = "template file: vCPU state sizes (another KVM?)";
	for (s = 0; s < NVX_UVM_TMPL_NR_STATE; s++)
		if (h->state_size[s] != nvx_tmpl_state_size[s])
			return -EINVAL;
	*where = "template file: name";
	if (!memchr(h->name, 0, sizeof(h->name)))
		return -EINVAL;
	return 0;
}

/* The stored pages into @mem (mapped, zero), their indexes checked. */
static int nvx_tmpl_read_pages(int fd, const struct nvx_uvm_tmpl_file *h,
			       char *mem, uint64_t *sum, const char **where)
{
	uint64_t *idx, npages = h->mem_size / NVX_UVM_TMPL_PAGE;
	uint32_t i;
	int ret;

	if (!h->nr_pages)
		return 0;
	*where = "template file: page indexes";
	idx = malloc((size_t)h->nr_pages * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	*where = "template file: truncated (page indexes)";
	ret = nvx_tmpl_read(fd, idx, (size_t)h->nr_pages * sizeof(*idx), sum);
	for (i = 0; i < h->nr_pages && !ret; i++) {
		if (idx[i] >= npages) {
			*where = "template file: page index past RAM";
			ret = -EINVAL;
		} else if (i && idx[i] <= idx[i - 1]) {
			*where = "template file: page index out of order";
			ret = -EINVAL;
		}
	}
	for (i = 0; i < h->nr_pages && !ret; i++) {
		*where = "template file: truncated (pages)";
		ret = nvx_tmpl_read(fd, mem + idx[i] * NVX_UVM_TMPL_PAGE,
				    NVX_UVM_TMPL_PAGE, sum);
	}
	free(idx);
	return ret;
}

/**
 * nvx_uvm_tmpl_load() - read a template file into a new template
 * @t: filled in; nvx_uvm_tmpl_free() it on success.
 * @nvx_fd: the nvx device: the template's RAM is a grant of its pool.
 * @fd: the file, at offset 0.
 * @grant_flags: more NVX_GRANT_* flags for the RAM (NVX_GRANT_BLOCKS).
 * @where: set to what was wrong or the step that failed.
 *
 * The header is checked (magic, version, sizes, the vCPU state sizes of
 * this build's KVM headers), the stored pages written into a fresh grant
 * (zero elsewhere), the sum compared, and the grant sealed: @t is then
 * as nvx_uvm_tmpl_make() leaves one. Clones resume with the vCPU state
 * the file holds; KVM refuses state the CPU cannot take (another CPU
 * model), and the guest keeps the TSC rate it was told (the same
 * machine, or one of its kind: Documentation/nvx/uvm.rst).
 *
 * Return: 0; -EINVAL for a file that is not a template of this format
 * or whose indexes are wrong, -ENODATA for one cut short, -EBADMSG when
 * the sum does not match, or another negative errno (the grant's,
 * read's).
 */
int nvx_uvm_tmpl_load(struct nvx_uvm_tmpl *t, int nvx_fd, int fd,
		      uint32_t grant_flags, const char **where)
{
	struct nvx_grant_seal seal = { 0 };
	struct nvx_uvm_tmpl_file h;
	struct nvx_grant_create g;
	uint64_t sum = NVX_TMPL_FNV_OFFSET;
	unsigned int s;
	char *mem, c;
	int ret;

	memset(t, 0, sizeof(*t));
	t->grant_fd = -1;
	*where = "template file: truncated (header)";
	ret = nvx_tmpl_read(fd, &h, sizeof(h), NULL);
	if (ret)
		return ret;
	ret = nvx_tmpl_check(&h, where);
	if (ret)
		return ret;
	*where = "template file: truncated (vCPU state)";
	for (s = 0; s < NVX_UVM_TMPL_NR_STATE && !ret; s++)
		ret = nvx_tmpl_read(fd, (char *)t + nvx_tmpl_state_off[s],
				    nvx_tmpl_state_size[s], &sum);
	if (ret)
		return ret;

	memset(&g, 0, sizeof(g));
	g.flags = NVX_GRANT_WAIT | NVX_GRANT_CLOEXEC | grant_flags;
	g.node = NVX_NODE_ANY;
	g.bytes = h.mem_size;
	*where = "grant the template's RAM";
	if (ioctl(nvx_fd, NVX_IOC_GRANT, &g) < 0)
		return -errno;
	t->grant_fd = g.fd;
	if (g.granted != h.mem_size) {
		ret = -EINVAL;
		goto err;
	}
	*where = "map the template's RAM";
	mem = mmap(NULL, h.mem_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   t->grant_fd, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	ret = nvx_tmpl_read_pages(fd, &h, mem, &sum, where);
	munmap(mem, h.mem_size);
	if (ret)
		goto err;
	*where = "template file: longer than its header says";
	do
		ret = read(fd, &c, 1);
	while (ret < 0 && errno == EINTR);
	if (ret) {
		ret = ret < 0 ? -errno : -EINVAL;
		goto err;
	}
	*where = "template file: sum does not match (damaged)";
	if (sum != h.sum) {
		ret = -EBADMSG;
		goto err;
	}
	*where = "NVX_GRANT_IOC_SEAL";
	if (ioctl(t->grant_fd, NVX_GRANT_IOC_SEAL, &seal) < 0) {
		ret = -errno;
		goto err;
	}
	t->mem_size = h.mem_size;
	t->entries = h.entries;
	t->tsc_khz = h.tsc_khz;
	memcpy(t->name, h.name, sizeof(t->name));
	*where = NULL;
	return 0;
err:
	nvx_uvm_tmpl_free(t);
	return ret;
}
