/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nvx: user-interrupt delivery (UINTR-shaped, in software).
 *
 * A thread registers a handler and gets a receiver fd whose one page it
 * maps: the page holds the thread's pending vectors and its "interrupts
 * enabled" flag. It creates vector fds (vectors 0-63) and hands them to
 * senders; a sender registers a vector fd in its process's sender table
 * and sends by table index. The kernel posts the vector's pending bit,
 * kicks the receiver, and on the receiver's next return to user mode
 * pushes a struct nvx_uintr_frame below the red zone (or on the
 * alternate stack), clears the enabled flag and enters the handler. The
 * handler returns with tools/nvx/lib/nvx_uintr.h's return helper, which
 * restores rip, rflags and rsp without a system call.
 *
 * The fields are documented here; Documentation/nvx/uintr.rst has the
 * behaviour and the errors of every call.
 */
#ifndef _UAPI_NVX_UINTR_H
#define _UAPI_NVX_UINTR_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <nvx/nvx.h>

/* Vectors per receiver: 0 .. NVX_UINTR_VECTORS - 1. */
#define NVX_UINTR_VECTORS	64
/* Entries in a process's sender table. */
#define NVX_UINTR_SENDERS	256
/* Bytes below the interrupted rsp that delivery never touches. */
#define NVX_UINTR_RED_ZONE	128
/* The shortest timer period. */
#define NVX_UINTR_MIN_PERIOD_NS	10000ULL
/* The longest wait and the latest timer expiry: 1000 s. */
#define NVX_UINTR_MAX_NS	1000000000000ULL

/**
 * struct nvx_uintr_frame - what delivery pushes; the handler's rsp points at it
 * @vector: the vector being delivered.
 * @rip: the interrupted instruction pointer.
 * @rflags: the interrupted flags.
 * @rsp: the interrupted stack pointer.
 *
 * The frame is 16-byte aligned. On the interrupted stack it lies below
 * NVX_UINTR_RED_ZONE bytes under @rsp; on the alternate stack it lies at
 * the top. General registers are those of the interrupted code: the
 * handler saves what it uses. Extended (FPU/SSE/AVX) state is not saved.
 */
struct nvx_uintr_frame {
	__u64 vector;
	__u64 rip;
	__u64 rflags;
	__u64 rsp;
};

/**
 * struct nvx_uintr_page - the page shared by a receiver thread and the kernel
 * @pending: bit v set: vector v was sent and not yet delivered. Senders
 *	set bits, delivery clears the bit it delivers. User code may claim
 *	a bit itself with an atomic and-not (the return helper does).
 * @enabled: 1: deliver; 0: keep vectors pending. Delivery writes 0 before
 *	entering the handler; user code writes 1 to unmask (and then
 *	delivers what is pending itself, see nvx_uintr_stui()).
 * @pad0: 0.
 * @delivered: vectors the kernel delivered to this thread.
 * @pad1: 0.
 *
 * Read-write for the owning thread; mapped from the receiver fd at offset
 * 0, one page, MAP_SHARED. The kernel never trusts it: a thread that
 * scribbles here only loses or gains interrupts of its own.
 */
struct nvx_uintr_page {
	__u64 pending;
	__u32 enabled;
	__u32 pad0;
	__u64 delivered;
	__u64 pad1[5];
};

/*
 * Register flags. INTERRUPT_SYSCALLS: a vector sent while the thread is
 * blocked in any interruptible system call ends that call with -EINTR
 * (as a signal without SA_RESTART would) and the handler runs; without
 * it the call keeps blocking and the handler runs when it returns.
 * A thread waiting in NVX_IOC_UINTR_WAIT is always woken.
 */
#define NVX_UINTR_INTERRUPT_SYSCALLS	0x1U
#define NVX_UINTR_REGISTER_FLAGS	NVX_UINTR_INTERRUPT_SYSCALLS

/**
 * struct nvx_uintr_register - NVX_IOC_UINTR_REGISTER, for the calling thread
 * @flags: in: NVX_UINTR_* register flags.
 * @fd: out: the receiver fd (close-on-exec); mmap it for the page.
 * @handler: in: the handler's address, a user address.
 * @stack: in: lowest address of an alternate stack, or 0 for none.
 * @stack_size: in: its size; at least 256 bytes when @stack is set.
 *
 * Errors: -EINVAL (flags, handler 0, a stack without a size or the other
 * way round, a stack under 256 bytes), -EFAULT (handler or stack outside
 * user space), -EBUSY (the thread has a handler already), -EOPNOTSUPP (a
 * 32-bit caller, or a thread with a CET shadow stack), -ENOMEM, -EMFILE,
 * -ENFILE.
 */
struct nvx_uintr_register {
	__u32 flags;
	__s32 fd;
	__u64 handler;
	__u64 stack;
	__u64 stack_size;
};

/**
 * struct nvx_uintr_vector_fd - NVX_IOC_UINTR_VECTOR_FD, for the calling thread
 * @flags: in: must be 0.
 * @vector: in: 0 .. NVX_UINTR_VECTORS - 1.
 * @fd: out: the vector fd (close-on-exec). It can be passed to other
 *	processes; whoever holds it can send this vector to this thread.
 * @reserved: in: must be 0.
 *
 * Errors: -EINVAL (flags, vector), -ENOENT (no handler registered),
 * -ENOMEM, -EMFILE.
 */
struct nvx_uintr_vector_fd {
	__u32 flags;
	__u32 vector;
	__s32 fd;
	__u32 reserved;
};

/**
 * struct nvx_uintr_sender - NVX_IOC_UINTR_ADD_SENDER / NVX_IOC_UINTR_DEL_SENDER
 * @flags: in: must be 0.
 * @vector_fd: in (add): a vector fd.
 * @index: out (add), in (del): the entry in the calling process's table.
 * @reserved: in: must be 0.
 *
 * The table belongs to the process (its address space): every thread
 * sends through it, it is empty after fork and after exec.
 * Errors: -EINVAL (flags, an fd that is not a vector fd; del: index out
 * of range), -EBADF (not an open fd), -ENOSPC (table full), -ENOENT
 * (del: empty entry), -ENOMEM.
 */
struct nvx_uintr_sender {
	__u32 flags;
	__s32 vector_fd;
	__u32 index;
	__u32 reserved;
};

/**
 * struct nvx_uintr_send - NVX_IOC_UINTR_SEND
 * @flags: in: must be 0.
 * @index: in: the sender table entry.
 *
 * Posts the entry's vector to its receiver and kicks it.
 * Errors: -EINVAL (flags, index out of range), -ENOENT (empty entry),
 * -EPIPE (the vector fd was closed), -ESRCH (the receiver exited, exec'd
 * or unregistered).
 */
struct nvx_uintr_send {
	__u32 flags;
	__u32 index;
};

/**
 * struct nvx_uintr_send_many - NVX_IOC_UINTR_SEND_MANY: one call, many targets
 * @flags: in: must be 0.
 * @count: in: entries in @indices, 1 .. NVX_UINTR_SENDERS.
 * @indices: in: user pointer to @count __u32 table indices.
 * @sent: out: how many were posted, also on failure.
 * @reserved: in: must be 0.
 *
 * Every index is checked before anything is sent (-EINVAL, -ENOENT as
 * for NVX_IOC_UINTR_SEND: nothing sent). Targets that are gone (-EPIPE,
 * -ESRCH, or -ENOENT for an entry another thread deleted meanwhile) are
 * skipped; the call then fails with the first such error after sending
 * to all the others, and @sent says how many got theirs. -EFAULT for a
 * bad @indices, -ENOMEM.
 */
struct nvx_uintr_send_many {
	__u32 flags;
	__u32 count;
	__u64 indices;
	__u32 sent;
	__u32 reserved;
};

/**
 * struct nvx_uintr_wait - NVX_IOC_UINTR_WAIT, for the calling thread
 * @flags: in: must be 0.
 * @reserved: in: must be 0.
 * @timeout_ns: in: 0 .. NVX_UINTR_MAX_NS; 0 only polls.
 *
 * Returns 0 once a vector is pending (it is delivered on the way back to
 * user mode if the thread's enabled flag is set), -ETIMEDOUT when none
 * came in time, -EINTR for a signal. Errors: -EINVAL (flags, timeout),
 * -ENOENT (no handler registered).
 */
struct nvx_uintr_wait {
	__u32 flags;
	__u32 reserved;
	__u64 timeout_ns;
};

/**
 * struct nvx_uintr_timer - NVX_IOC_UINTR_TIMER: a kernel sender for the calling thread
 * @flags: in: must be 0.
 * @vector: in: the vector the timer posts.
 * @first_ns: in: first expiry, relative; 0 means @period_ns.
 * @period_ns: in: 0 for one-shot, else NVX_UINTR_MIN_PERIOD_NS or more.
 *
 * Replaces the thread's timer; @first_ns and @period_ns both 0 stop it.
 * A tick that finds its vector still pending is merged with it.
 * Errors: -EINVAL (flags, vector, period below the minimum, a value above
 * NVX_UINTR_MAX_NS), -ENOENT (no handler registered).
 */
struct nvx_uintr_timer {
	__u32 flags;
	__u32 vector;
	__u64 first_ns;
	__u64 period_ns;
};

/**
 * struct nvx_uintr_signal - NVX_IOC_UINTR_SIGNAL: route a signal to a vector
 * @flags: in: must be 0.
 * @signo: in: the signal, or 0 to stop routing.
 * @vector: in: the vector to post instead.
 * @reserved: in: must be 0.
 *
 * From then on, when the calling thread dequeues @signo (sent to it or to
 * its process), the signal is consumed and @vector posted to the thread
 * instead: no signal frame, no sigreturn, no siginfo. The signal must be
 * unblocked and have a handler installed (one the kernel would otherwise
 * run): an ignored signal, or a default action that kills or is ignored,
 * is decided when it is sent and never reaches routing. One signal per
 * thread. Errors: -EINVAL (flags, signal above 64, vector; SIGKILL,
 * SIGSTOP and the signals the kernel raises for a faulting instruction:
 * SIGILL, SIGTRAP, SIGFPE, SIGSEGV, SIGBUS, SIGSYS), -ENOENT (no handler
 * registered).
 */
struct nvx_uintr_signal {
	__u32 flags;
	__u32 signo;
	__u32 vector;
	__u32 reserved;
};

/**
 * struct nvx_uintr_unregister - NVX_IOC_UINTR_UNREGISTER, for the calling thread
 * @flags: in: must be 0.
 * @reserved: in: must be 0.
 *
 * Stops delivery, the timer and signal routing; senders then get -ESRCH.
 * Errors: -EINVAL (flags), -ENOENT (no handler registered).
 */
struct nvx_uintr_unregister {
	__u32 flags;
	__u32 reserved;
};

#define NVX_IOC_UINTR_REGISTER	 _IOWR(NVX_IOC_MAGIC, 0x50, struct nvx_uintr_register)
#define NVX_IOC_UINTR_UNREGISTER _IOW(NVX_IOC_MAGIC, 0x51, struct nvx_uintr_unregister)
#define NVX_IOC_UINTR_VECTOR_FD	 _IOWR(NVX_IOC_MAGIC, 0x52, struct nvx_uintr_vector_fd)
#define NVX_IOC_UINTR_ADD_SENDER _IOWR(NVX_IOC_MAGIC, 0x53, struct nvx_uintr_sender)
#define NVX_IOC_UINTR_DEL_SENDER _IOW(NVX_IOC_MAGIC, 0x54, struct nvx_uintr_sender)
#define NVX_IOC_UINTR_SEND	 _IOW(NVX_IOC_MAGIC, 0x55, struct nvx_uintr_send)
#define NVX_IOC_UINTR_SEND_MANY	 _IOWR(NVX_IOC_MAGIC, 0x56, struct nvx_uintr_send_many)
#define NVX_IOC_UINTR_WAIT	 _IOW(NVX_IOC_MAGIC, 0x57, struct nvx_uintr_wait)
#define NVX_IOC_UINTR_TIMER	 _IOW(NVX_IOC_MAGIC, 0x58, struct nvx_uintr_timer)
#define NVX_IOC_UINTR_SIGNAL	 _IOW(NVX_IOC_MAGIC, 0x59, struct nvx_uintr_signal)

#endif /* _UAPI_NVX_UINTR_H */
