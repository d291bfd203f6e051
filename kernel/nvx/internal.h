/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx core: declarations shared by the files of kernel/nvx/.
 */
#ifndef _KERNEL_NVX_INTERNAL_H
#define _KERNEL_NVX_INTERNAL_H

#include <linux/fs.h>
#include <linux/nvx.h>
#include <linux/types.h>

u64 nvx_features(void);

/* Largest argument struct any nvx ioctl takes; the copy lives on the stack. */
#define NVX_IOCTL_MAX_ARG	256

/* Copy the argument back to userspace even when the handler failed. */
#define NVX_IOCTL_OUT_ON_ERROR	BIT(0)

/**
 * struct nvx_ioctl_desc - one nvx ioctl
 * @cmd: the ioctl number as the uapi header defines it.
 * @min_size: size of the first published version of the argument struct.
 * @handler: called with a kernel copy of the argument, zero-extended to
 *	the size of the struct this kernel knows (_IOC_SIZE(@cmd)), and a
 *	struct nvx_new_fd to fill in when it creates a file descriptor.
 * @flags: NVX_IOCTL_* bits.
 */
struct nvx_ioctl_desc {
	unsigned int cmd;
	size_t min_size;
	int (*handler)(struct file *file, void *argp, struct nvx_new_fd *nfd);
	unsigned int flags;
};

#define NVX_IOCTL(_cmd, _min_size, _handler, _flags) {			\
	.cmd = (_cmd),							\
	.min_size = (_min_size),					\
	.handler = (_handler),						\
	.flags = (_flags),						\
}

long nvx_ioctl_dispatch(struct file *file, unsigned int cmd, unsigned long arg,
			const struct nvx_ioctl_desc *table, size_t n);
int nvx_ioctls_check(const struct nvx_ioctl_desc *table, size_t n);

#ifdef CONFIG_NVX_POOL
int nvx_pool_init(void);
void nvx_pool_exit(void);
int nvx_ioc_pool_grow(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_pool_shrink(struct file *file, void *argp,
			struct nvx_new_fd *nfd);
int nvx_ioc_pool_stats(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_grant(struct file *file, void *argp, struct nvx_new_fd *nfd);

/* Grants as other parts of nvx use them (SRQ buffers). */
struct nvx_grant;
struct page;
struct nvx_grant *nvx_grant_fget(int fd, struct file **gfile);
u64 nvx_grant_bytes(const struct nvx_grant *g);
struct page *nvx_grant_page(struct nvx_grant *g, unsigned long pgoff);
#else
static inline int nvx_pool_init(void) { return 0; }
static inline void nvx_pool_exit(void) { }
#endif

#ifdef CONFIG_NVX_UVM
int nvx_ioc_uvm_endpoint(struct file *file, void *argp,
			 struct nvx_new_fd *nfd);
int nvx_ioc_uvm_attach(struct file *file, void *argp, struct nvx_new_fd *nfd);
#endif

#ifdef CONFIG_NVX_SRQ
int nvx_srq_init(void);
void nvx_srq_exit(void);
int nvx_ioc_srq_create(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_srq_query(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_srq_info(struct file *file, void *argp, struct nvx_new_fd *nfd);
#else
static inline int nvx_srq_init(void) { return 0; }
static inline void nvx_srq_exit(void) { }
#endif

#endif /* _KERNEL_NVX_INTERNAL_H */
