/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx user interrupts: the hooks in fork, exit, exec, mm teardown,
 * get_signal() and the exit to user mode (TIF_NVX_UINTR, see
 * arch/x86/include/asm/entry-common.h), what the core module takes from the built-in code
 * (arch/x86/nvx/uintr.c): its ioctl range and its debugfs files, and the
 * kernel-sender calls other nvx objects post vectors with.
 */
#ifndef _LINUX_NVX_UINTR_H
#define _LINUX_NVX_UINTR_H

#include <linux/types.h>

struct dentry;
struct mm_struct;
struct pt_regs;
struct task_struct;
struct nvx_uintr_vec;

/* Who posts a vector (the nvx_uintr_post tracepoint's src). */
enum nvx_uintr_src {
	NVX_UINTR_SRC_THREAD,
	NVX_UINTR_SRC_TIMER,
	NVX_UINTR_SRC_SIGNAL,
	NVX_UINTR_SRC_ENDPOINT,
	NVX_UINTR_SRC_SRQ,
};

#ifdef CONFIG_NVX_UINTR
#include <linux/sched.h>
#include <linux/mm_types.h>

struct nvx_ioctl_range;

extern struct nvx_ioctl_range nvx_uintr_ioctls;
void nvx_uintr_debugfs_init(struct dentry *dir);

struct nvx_uintr_vec *nvx_uintr_vec_get(int fd);
int nvx_uintr_vec_post(struct nvx_uintr_vec *v, enum nvx_uintr_src src);
void nvx_uintr_vec_put(struct nvx_uintr_vec *v);

void __nvx_uintr_exit(struct task_struct *tsk);
void __nvx_uintr_mm_exit(struct mm_struct *mm);
bool __nvx_uintr_route_signal(int signr);
void __nvx_uintr_resume(struct pt_regs *regs);
void __nvx_uintr_signal_deliver(struct pt_regs *regs);

/* A new thread has no receiver, and no vector posted to one. */
static inline void nvx_uintr_fork(struct task_struct *p)
{
	p->nvx_uintr = NULL;
	clear_tsk_thread_flag(p, TIF_NVX_UINTR);
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

/*
 * In get_signal(), before the signal code decides whether an interrupted
 * system call restarts: a posted vector's delivery decides it instead.
 */
static inline void nvx_uintr_signal_deliver(struct pt_regs *regs)
{
	if (unlikely(test_thread_flag(TIF_NVX_UINTR)))
		__nvx_uintr_signal_deliver(regs);
}

/* In get_signal(), siglock held: true if @signr became a user interrupt. */
static inline bool nvx_uintr_route_signal(int signr)
{
	return unlikely(current->nvx_uintr) && __nvx_uintr_route_signal(signr);
}
#else
#include <linux/err.h>

static inline struct nvx_uintr_vec *nvx_uintr_vec_get(int fd)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline int nvx_uintr_vec_post(struct nvx_uintr_vec *v,
				     enum nvx_uintr_src src)
{
	return -EOPNOTSUPP;
}

static inline void nvx_uintr_vec_put(struct nvx_uintr_vec *v) { }
static inline void nvx_uintr_fork(struct task_struct *p) { }
static inline void nvx_uintr_mm_init(struct mm_struct *mm) { }
static inline void nvx_uintr_exit(struct task_struct *tsk) { }
static inline void nvx_uintr_mm_exit(struct mm_struct *mm) { }
static inline bool nvx_uintr_route_signal(int signr) { return false; }
static inline void nvx_uintr_signal_deliver(struct pt_regs *regs) { }
#endif

#endif /* _LINUX_NVX_UINTR_H */
