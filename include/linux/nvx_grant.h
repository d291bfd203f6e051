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

struct nvx_grant *nvx_grant_fget(int fd, struct file **gfile);
void nvx_grant_put(struct nvx_grant *g, struct file *gfile);
u64 nvx_grant_bytes(const struct nvx_grant *g);
u64 nvx_grant_contig_bytes(const struct nvx_grant *g, u64 off);
struct page *nvx_grant_page(struct nvx_grant *g, unsigned long pgoff);

#endif /* _LINUX_NVX_GRANT_H */
