/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx grants as the other nvx modules use them: memory of the pool owned
 * by a grant file (guest RAM for user VMs, buffers for shared RX queues).
 * The grant stays alive while its file is referenced.
 */
#ifndef _LINUX_NVX_GRANT_H
#define _LINUX_NVX_GRANT_H

#include <linux/types.h>

struct file;
struct nvx_grant;
struct page;

/* nvx_grant_fget_flags(): the caller writes through nvx_grant_page_write() */
#define NVX_GRANT_FGET_CLONES	0x1U

struct nvx_grant *nvx_grant_fget_flags(int fd, struct file **gfile,
				       unsigned int flags);
void nvx_grant_put(struct nvx_grant *g, struct file *gfile);
u64 nvx_grant_bytes(const struct nvx_grant *g);
u64 nvx_grant_contig_bytes(const struct nvx_grant *g, u64 off);
struct page *nvx_grant_page(struct nvx_grant *g, unsigned long pgoff);
struct page *nvx_grant_page_write(struct nvx_grant *g, unsigned long pgoff);

/* Templates and clones refused; see nvx_grant_fget_flags(). */
static inline struct nvx_grant *nvx_grant_fget(int fd, struct file **gfile)
{
	return nvx_grant_fget_flags(fd, gfile, 0);
}

#endif /* _LINUX_NVX_GRANT_H */
