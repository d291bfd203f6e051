/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx: interfaces between the parts of nvx inside the kernel.
 *
 * kernel/nvx/ is the core (built in or a module); arch/x86/nvx/ is always
 * built in when nvx is enabled, because its hooks sit on paths that a
 * module cannot reach (return to user mode, KVM exits).
 */
#ifndef _LINUX_NVX_H
#define _LINUX_NVX_H

#include <linux/types.h>

struct file;
struct mm_struct;
struct task_struct;

u64 nvx_arch_hw_features(void);

/**
 * struct nvx_new_fd - a file descriptor an ioctl hands out
 * @file: the new file; NULL when the ioctl made none.
 * @fd: the reserved descriptor number, written into the argument struct.
 *
 * A handler that creates an fd reserves the number and the file but does
 * not install them: the dispatcher installs the fd only once the result
 * has reached userspace, and undoes both when copying it out fails, so
 * that no fd exists that the caller never learnt about.
 */
struct nvx_new_fd {
	struct file *file;
	int fd;
};

#ifdef CONFIG_NVX_UINTR
#include <linux/sched.h>
#include <linux/mm_types.h>

/* The /dev/nvx ioctls of arch/x86/nvx/uintr.c. */
int nvx_ioc_uintr_register(struct file *file, void *argp,
			   struct nvx_new_fd *nfd);
int nvx_ioc_uintr_unregister(struct file *file, void *argp,
			     struct nvx_new_fd *nfd);
int nvx_ioc_uintr_vector_fd(struct file *file, void *argp,
			    struct nvx_new_fd *nfd);
int nvx_ioc_uintr_add_sender(struct file *file, void *argp,
			     struct nvx_new_fd *nfd);
int nvx_ioc_uintr_del_sender(struct file *file, void *argp,
			     struct nvx_new_fd *nfd);
int nvx_ioc_uintr_send(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_uintr_send_many(struct file *file, void *argp,
			    struct nvx_new_fd *nfd);
int nvx_ioc_uintr_wait(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_uintr_timer(struct file *file, void *argp, struct nvx_new_fd *nfd);
int nvx_ioc_uintr_signal(struct file *file, void *argp,
			 struct nvx_new_fd *nfd);

/* Hooks in fork, exit, exec, mm teardown and get_signal(). */
void __nvx_uintr_exit(struct task_struct *tsk);
void __nvx_uintr_mm_exit(struct mm_struct *mm);
bool __nvx_uintr_route_signal(int signr);

static inline void nvx_uintr_fork(struct task_struct *p)
{
	p->nvx_uintr = NULL;
}

static inline void nvx_uintr_mm_init(struct mm_struct *mm)
{
	mm->nvx_uintr_senders = NULL;
}

/* The thread exits or execs: its registration, timer and routing end. */
static inline void nvx_uintr_exit(struct task_struct *tsk)
{
	if (unlikely(tsk->nvx_uintr))
		__nvx_uintr_exit(tsk);
}

/* The address space goes away: its sender table with it. */
static inline void nvx_uintr_mm_exit(struct mm_struct *mm)
{
	if (unlikely(mm->nvx_uintr_senders))
		__nvx_uintr_mm_exit(mm);
}

/* In get_signal(), siglock held: true if @signr became a user interrupt. */
static inline bool nvx_uintr_route_signal(int signr)
{
	return unlikely(current->nvx_uintr) && __nvx_uintr_route_signal(signr);
}
#else
static inline void nvx_uintr_fork(struct task_struct *p) { }
static inline void nvx_uintr_mm_init(struct mm_struct *mm) { }
static inline void nvx_uintr_exit(struct task_struct *tsk) { }
static inline void nvx_uintr_mm_exit(struct mm_struct *mm) { }
static inline bool nvx_uintr_route_signal(int signr) { return false; }
#endif

#endif /* _LINUX_NVX_H */
