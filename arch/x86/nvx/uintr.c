// SPDX-License-Identifier: GPL-2.0
/*
 * nvx user interrupts: UINTR-shaped upcalls delivered in software.
 *
 * A receiver (struct nvx_uintr_recv) belongs to one thread
 * (task_struct::nvx_uintr) and owns a page shared with that thread: the
 * pending vectors and the "enabled" flag. A vector fd names (receiver,
 * vector). A sender table (mm_struct::nvx_uintr_senders) maps the indices
 * a process sends by to vector fds' objects.
 *
 * Sending sets the pending bit, then the receiver's TIF_NVX_UINTR, and
 * kicks it (kick_process(): an IPI gets a receiver running on another CPU
 * into the kernel at once). On its way back to user mode the thread sees
 * the flag (the generic entry code's arch_exit_to_user_mode_work(), or
 * get_signal() first when a system call waits for its restart decision),
 * builds the frame {vector, rip, rflags, rsp} on the user stack below the
 * red zone, or on the alternate stack, and points the user registers at
 * the handler: the way hardware UINTR's kernel support enters a pending
 * notification on the return to user mode. No task_work, no allocation
 * and no reference per delivery. The handler returns without a system
 * call (see tools/nvx/lib/nvx_uintr.h). No extended state is saved:
 * handlers are general-registers-only, as with hardware UINTR.
 *
 * Lifetimes: the thread's pointer, the receiver fd and every vector
 * object each hold a reference on the receiver; the sender table holds
 * one on each vector object. Senders look entries up
 * under RCU, and both objects are freed after a grace period, so a sender
 * never touches freed memory; a dead receiver (exited, exec'd,
 * unregistered) or a closed vector fd makes sends fail instead.
 *
 * Hardware UINTR (SENDUIPI/UIRET) could back the same ABI; it is only
 * detected (NVX_HW_UINTR), never enabled, since it cannot be tested here.
 */
#include <linux/anon_inodes.h>
#include <linux/compat.h>
#include <linux/export.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/percpu.h>
#include <linux/debugfs.h>
#include <linux/nvx.h>
#include <linux/nvx_uintr.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rseq.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unistd.h>
#include <linux/wait.h>
#include <asm/shstk.h>
#include <asm/syscall.h>
#include <uapi/nvx/uintr.h>

#define CREATE_TRACE_POINTS
#include <trace/events/nvx_uintr.h>

#define NVX_UINTR_MIN_STACK	256

/**
 * struct nvx_uintr_recv - a thread registered to receive user interrupts
 * @ref: references: the thread, the receiver fd, vector objects.
 * @task: the thread (a reference is held).
 * @page: the page shared with the thread.
 * @upage: @page's kernel address.
 * @handler: user address delivery enters.
 * @stack: alternate stack, lowest address; 0 for none.
 * @stack_size: its size.
 * @flags: NVX_UINTR_* register flags.
 * @dead: the registration ended; sends fail with -ESRCH.
 * @wq: NVX_IOC_UINTR_WAIT sleeps here.
 * @timer: the thread's kernel sender.
 * @period_ns: the timer's period; 0 for a one-shot timer or none.
 * @timer_vector: what the timer posts.
 * @route_signo: the signal routed to @route_vector, 0 for none.
 * @route_vector: see @route_signo.
 * @posted: vectors posted to it (counted by the kernel: the page's
 *	numbers are the thread's to write).
 * @delivered: handlers entered; written by the thread only.
 * @ticks: timer ticks; written by the timer only.
 * @routed: signals routed; written under the thread's siglock.
 * @posted_ns: when each vector was posted while not pending, for the
 *	delivery tracepoint's latency (only while it is enabled).
 * @rcu: frees after senders that may still look at it.
 */
struct nvx_uintr_recv {
	refcount_t ref;
	struct task_struct *task;
	struct page *page;
	struct nvx_uintr_page *upage;
	unsigned long handler;
	unsigned long stack;
	unsigned long stack_size;
	u32 flags;
	bool dead;
	wait_queue_head_t wq;
	struct hrtimer timer;
	u64 period_ns;
	u32 timer_vector;
	int route_signo;
	u32 route_vector;
	atomic64_t posted;
	u64 delivered;
	u64 ticks;
	u64 routed;
	u64 posted_ns[NVX_UINTR_VECTORS];
	struct rcu_head rcu;
};

/**
 * struct nvx_uintr_vec - what a vector fd names
 * @ref: references: the fd, sender table entries.
 * @recv: the receiver (a reference is held).
 * @vector: the vector.
 * @closed: the fd was closed: entries made from it fail with -EPIPE.
 * @kernel_senders: nvx objects that post it (nvx_uintr_vec_get()).
 * @rcu: frees after senders that may still look at it.
 */
struct nvx_uintr_vec {
	refcount_t ref;
	struct nvx_uintr_recv *recv;
	u32 vector;
	bool closed;
	atomic_t kernel_senders;
	struct rcu_head rcu;
};

/**
 * struct nvx_uintr_senders - a process's sender table
 * @lock: serialises changes; senders read under RCU.
 * @entry: the vector objects, by index.
 */
struct nvx_uintr_senders {
	spinlock_t lock;	/* protects @entry against other writers */
	struct nvx_uintr_vec __rcu *entry[NVX_UINTR_SENDERS];
};

static const struct file_operations nvx_recv_fops;
static const struct file_operations nvx_vec_fops;

/*
 * For debugfs: receiver objects alive (a registration, and after it ends
 * until its last vector fd and sender entry are gone), vectors delivered.
 */
static atomic_t nvx_uintr_receivers = ATOMIC_INIT(0);
/* per CPU: a delivery takes no shared cache line */
static DEFINE_PER_CPU(u64, nvx_uintr_delivered);

static void nvx_recv_free_rcu(struct rcu_head *rcu)
{
	struct nvx_uintr_recv *r = container_of(rcu, struct nvx_uintr_recv,
						rcu);

	put_task_struct(r->task);
	__free_page(r->page);
	kfree(r);
	atomic_dec(&nvx_uintr_receivers);
}

static void nvx_recv_put(struct nvx_uintr_recv *r)
{
	if (refcount_dec_and_test(&r->ref))
		call_rcu(&r->rcu, nvx_recv_free_rcu);
}

static void nvx_vec_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct nvx_uintr_vec, rcu));
}

static void nvx_vec_put(struct nvx_uintr_vec *v)
{
	if (refcount_dec_and_test(&v->ref)) {
		nvx_recv_put(v->recv);
		call_rcu(&v->rcu, nvx_vec_free_rcu);
	}
}

static unsigned long *nvx_pending(struct nvx_uintr_recv *r)
{
	return (unsigned long *)&r->upage->pending;
}

/*
 * restart_syscall's number in the ABI the interrupted call came in by, as
 * the signal code computes it (arch/x86/kernel/signal.c): a 32-bit caller
 * (int $0x80 or a compat sysenter) needs the ia32 number, an x32 caller
 * its x32 bit.
 */
static unsigned long nvx_uintr_nr_restart_syscall(const struct pt_regs *regs)
{
#ifdef CONFIG_IA32_EMULATION
	if (current->restart_block.arch_data & TS_COMPAT)
		return __NR_ia32_restart_syscall;
#endif
#ifdef CONFIG_X86_X32_ABI
	return __NR_restart_syscall | (regs->orig_ax & __X32_SYSCALL_BIT);
#else
	return __NR_restart_syscall;
#endif
}

/*
 * The handler is entered on the way out of a syscall that still waits for
 * its restart decision (from get_signal(), before the signal code
 * decides): decide here, then tell the signal code that the restart is
 * dealt with. With NVX_UINTR_INTERRUPT_SYSCALLS the call fails with
 * -EINTR, as for a signal handler without SA_RESTART; otherwise it is
 * restarted after the handler, as for a signal nobody handles.
 */
static void nvx_uintr_end_syscall(struct pt_regs *regs, bool interrupt)
{
	if (syscall_get_nr(current, regs) < 0)
		return;
	switch (syscall_get_error(current, regs)) {
	case -ERESTART_RESTARTBLOCK:
		if (interrupt) {
			regs->ax = -EINTR;
		} else {
			regs->ax = nvx_uintr_nr_restart_syscall(regs);
			regs->ip -= 2;
		}
		break;
	case -ERESTARTNOHAND:
	case -ERESTARTSYS:
		if (interrupt) {
			regs->ax = -EINTR;
			break;
		}
		fallthrough;
	case -ERESTARTNOINTR:
		regs->ax = regs->orig_ax;
		regs->ip -= 2;
		break;
	default:
		return;
	}
	regs->orig_ax = -1;
}

/* On the way back to user mode: enter the handler for one vector. */
static void nvx_uintr_deliver(struct nvx_uintr_recv *r, struct pt_regs *regs)
{
	struct nvx_uintr_page *p = r->upage;
	struct nvx_uintr_frame frame;
	unsigned long sp, pend;
	unsigned int v;
	u64 t;

	if (!user_mode(regs) || !READ_ONCE(p->enabled))
		return;
	do {
		pend = READ_ONCE(*nvx_pending(r));
		if (!pend)
			return;
		v = __fls(pend);
	} while (!test_and_clear_bit(v, nvx_pending(r)));

	nvx_uintr_end_syscall(regs, r->flags & NVX_UINTR_INTERRUPT_SYSCALLS);
	/* abort an rseq critical section, as signal delivery does */
	rseq_signal_deliver(NULL, regs);

	sp = regs->sp;
	if (r->stack_size &&
	    !(sp > r->stack && sp - r->stack <= r->stack_size))
		sp = r->stack + r->stack_size;
	else
		sp -= NVX_UINTR_RED_ZONE;
	sp = round_down(sp, 16) - sizeof(frame);

	frame.vector = v;
	frame.rip = regs->ip;
	frame.rflags = regs->flags;
	frame.rsp = regs->sp;
	if (copy_to_user((void __user *)sp, &frame, sizeof(frame))) {
		/* as for a signal frame that cannot be written */
		force_sig(SIGSEGV);
		return;
	}
	regs->ip = r->handler;
	regs->sp = sp;
	regs->flags &= ~(X86_EFLAGS_DF | X86_EFLAGS_RF | X86_EFLAGS_TF);
	WRITE_ONCE(p->enabled, 0);
	WRITE_ONCE(p->delivered, p->delivered + 1);
	WRITE_ONCE(r->delivered, r->delivered + 1);
	this_cpu_inc(nvx_uintr_delivered);
	/* cleared at every delivery, so that a stale time is never used */
	t = xchg(&r->posted_ns[v], 0);
	if (trace_nvx_uintr_deliver_enabled())
		trace_nvx_uintr_deliver(v, t ? ktime_get_ns() - t : 0);
}

/**
 * __nvx_uintr_resume() - enter the handler of a posted vector
 * @regs: current's user registers.
 *
 * Current is on its way back to user mode and found TIF_NVX_UINTR set,
 * which it cleared (arch_exit_to_user_mode_work(), or
 * __nvx_uintr_signal_deliver()): the full barrier of that clear orders
 * it before the pending bits are read, as a sender sets the bit before
 * the flag.
 */
void __nvx_uintr_resume(struct pt_regs *regs)
{
	struct nvx_uintr_recv *r = current->nvx_uintr;

	if (r && !READ_ONCE(r->dead) && !(current->flags & PF_EXITING))
		nvx_uintr_deliver(r, regs);
}

/**
 * __nvx_uintr_signal_deliver() - deliver before a restart decision
 * @regs: current's user registers.
 *
 * From get_signal(), with TIF_NVX_UINTR set. Only a system call that
 * waits for its restart decision is dealt with here: the delivery makes
 * the decision (nvx_uintr_end_syscall()). Anything else, a fault's signal
 * above all, is left to the exit to user mode, after the signal frame is
 * written: the signal sees the state it was raised in (its ucontext, a
 * tracer, a core dump), and the handler is entered at the signal
 * handler's first instruction, as a hardware user interrupt would be.
 */
void __nvx_uintr_signal_deliver(struct pt_regs *regs)
{
	if (syscall_get_nr(current, regs) < 0)
		return;
	switch (syscall_get_error(current, regs)) {
	case -ERESTART_RESTARTBLOCK:
	case -ERESTARTNOHAND:
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
		break;
	default:
		return;
	}
	if (test_and_clear_thread_flag(TIF_NVX_UINTR))
		__nvx_uintr_resume(regs);
}

/*
 * Get the receiver to its return to user mode. Any context; @r is not
 * freed meanwhile, and holds its task.
 */
static void nvx_uintr_kick(struct nvx_uintr_recv *r)
{
	struct task_struct *t = r->task;

	if (r->flags & NVX_UINTR_INTERRUPT_SYSCALLS) {
		/* end an interruptible sleep, as TWA_SIGNAL task_work does */
		set_tsk_thread_flag(t, TIF_NVX_UINTR);
		set_notify_signal(t);
		return;
	}
	if (!test_and_set_tsk_thread_flag(t, TIF_NVX_UINTR))
		kick_process(t);
}

/*
 * Post @vector to @r for @src. Any context; @r must not be freed
 * meanwhile.
 */
static int nvx_uintr_post(struct nvx_uintr_recv *r, u32 vector,
			  enum nvx_uintr_src src)
{
	bool was;

	if (READ_ONCE(r->dead))
		return -ESRCH;
	/* the time before the bit: a delivery may follow the bit at once */
	if (trace_nvx_uintr_deliver_enabled() &&
	    !test_bit(vector, nvx_pending(r)))
		WRITE_ONCE(r->posted_ns[vector], ktime_get_ns());
	was = test_and_set_bit(vector, nvx_pending(r));
	atomic64_inc(&r->posted);
	trace_nvx_uintr_post(task_pid_nr(r->task), vector, was, src);
	/* the bit is visible before a waiter is looked for or kicked */
	smp_mb__after_atomic();
	if (wq_has_sleeper(&r->wq))
		wake_up(&r->wq);
	nvx_uintr_kick(r);
	return 0;
}

static enum hrtimer_restart nvx_uintr_tick(struct hrtimer *t)
{
	struct nvx_uintr_recv *r = container_of(t, struct nvx_uintr_recv,
						timer);

	WRITE_ONCE(r->ticks, r->ticks + 1);
	if (trace_nvx_uintr_tick_enabled())
		trace_nvx_uintr_tick(task_pid_nr(r->task), r->timer_vector,
				     ktime_to_ns(ktime_sub(hrtimer_cb_get_time(t),
							   hrtimer_get_expires(t))));
	if (nvx_uintr_post(r, r->timer_vector, NVX_UINTR_SRC_TIMER)) {
		/* the receiver is gone: so is its timer */
		WRITE_ONCE(r->period_ns, 0);
		return HRTIMER_NORESTART;
	}
	if (!r->period_ns)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(r->period_ns));
	return HRTIMER_RESTART;
}

/**
 * __nvx_uintr_exit() - end a thread's registration
 * @tsk: the thread, which is current: it exits, execs or unregisters.
 */
void __nvx_uintr_exit(struct task_struct *tsk)
{
	struct nvx_uintr_recv *r = tsk->nvx_uintr;

	tsk->nvx_uintr = NULL;
	WRITE_ONCE(r->dead, true);
	hrtimer_cancel(&r->timer);
	WRITE_ONCE(r->period_ns, 0);
	nvx_recv_put(r);
}

/**
 * __nvx_uintr_mm_exit() - free an address space's sender table
 * @mm: the address space; nobody uses it any more.
 */
void __nvx_uintr_mm_exit(struct mm_struct *mm)
{
	struct nvx_uintr_senders *t = mm->nvx_uintr_senders;
	struct nvx_uintr_vec *v;
	int i;

	mm->nvx_uintr_senders = NULL;
	for (i = 0; i < NVX_UINTR_SENDERS; i++) {
		v = rcu_dereference_protected(t->entry[i], true);
		if (v)
			nvx_vec_put(v);
	}
	kfree(t);
}

/**
 * __nvx_uintr_route_signal() - turn a dequeued signal into a user interrupt
 * @signr: the signal current dequeued, siglock held.
 *
 * Return: true when current routes @signr: the vector is posted and the
 * signal consumed.
 */
bool __nvx_uintr_route_signal(int signr)
{
	struct nvx_uintr_recv *r = current->nvx_uintr;
	/* get_signal() holds its siglock */
	struct sighand_struct *sh = rcu_dereference_protected(current->sighand,
							      true);
	struct k_sigaction *ka = &sh->action[signr - 1];

	if (READ_ONCE(r->route_signo) != signr ||
	    (ka->sa.sa_flags & SA_IMMUTABLE) || ka->sa.sa_handler == SIG_IGN)
		return false;
	WRITE_ONCE(r->routed, r->routed + 1);
	trace_nvx_uintr_signal(signr, READ_ONCE(r->route_vector));
	nvx_uintr_post(r, READ_ONCE(r->route_vector), NVX_UINTR_SRC_SIGNAL);
	return true;
}

/* ------------------------------------------------------------ files --- */

static int nvx_recv_release(struct inode *inode, struct file *file)
{
	nvx_recv_put(file->private_data);
	return 0;
}

static int nvx_recv_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct nvx_uintr_recv *r = file->private_data;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTCOPY | VM_DONTDUMP);
	return vm_insert_page(vma, vma->vm_start, r->page);
}

/* /proc/PID/fdinfo/N of a receiver: its thread and what it received. */
static void nvx_recv_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct nvx_uintr_recv *r = file->private_data;

	seq_puts(m, "nvx-object:\tuintr-receiver\n");
	seq_printf(m, "tid:\t%d\n", task_pid_vnr(r->task));
	seq_printf(m, "registered:\t%d\n", !READ_ONCE(r->dead));
	seq_printf(m, "pending:\t%#llx\n", READ_ONCE(r->upage->pending));
	seq_printf(m, "delivered:\t%llu\n", READ_ONCE(r->upage->delivered));
	seq_printf(m, "timer_period_ns:\t%llu\n", READ_ONCE(r->period_ns));
	seq_printf(m, "routed_signal:\t%d\n", READ_ONCE(r->route_signo));
	/* the kernel's own counts: the page's are the thread's to write */
	seq_printf(m, "posted:\t%lld\n", atomic64_read(&r->posted));
	seq_printf(m, "delivered_kernel:\t%llu\n", READ_ONCE(r->delivered));
	seq_printf(m, "timer_ticks:\t%llu\n", READ_ONCE(r->ticks));
	seq_printf(m, "signals_routed:\t%llu\n", READ_ONCE(r->routed));
}

static const struct file_operations nvx_recv_fops = {
	.show_fdinfo = nvx_recv_show_fdinfo,
	.release = nvx_recv_release,
	.mmap = nvx_recv_mmap,
	.llseek = noop_llseek,
};

static int nvx_vec_release(struct inode *inode, struct file *file)
{
	struct nvx_uintr_vec *v = file->private_data;

	WRITE_ONCE(v->closed, true);
	nvx_vec_put(v);
	return 0;
}

/* /proc/PID/fdinfo/N of a vector fd: which vector of which thread. */
static void nvx_vec_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct nvx_uintr_vec *v = file->private_data;

	seq_puts(m, "nvx-object:\tuintr-vector\n");
	seq_printf(m, "vector:\t%u\n", v->vector);
	seq_printf(m, "receiver_tid:\t%d\n", task_pid_vnr(v->recv->task));
	seq_printf(m, "receiver_registered:\t%d\n", !READ_ONCE(v->recv->dead));
	seq_printf(m, "kernel_senders:\t%d\n",
		   atomic_read(&v->kernel_senders));
}

static const struct file_operations nvx_vec_fops = {
	.show_fdinfo = nvx_vec_show_fdinfo,
	.release = nvx_vec_release,
	.llseek = noop_llseek,
};

/* --------------------------------------------------- kernel senders --- */

/**
 * nvx_uintr_vec_get() - take a vector fd's vector, for an nvx object to post
 * @fd: a vector fd (NVX_IOC_UINTR_VECTOR_FD) of the calling process.
 *
 * An nvx object (an endpoint, a shared-RX queue) holds the vector and
 * posts it with nvx_uintr_vec_post() when it has something for its
 * receiver, as a process posts through its sender table; the vector's
 * fdinfo counts such holders (``kernel_senders``).
 *
 * Return: the vector, with a reference nvx_uintr_vec_put() drops;
 * ERR_PTR(-EBADF) for no open fd, ERR_PTR(-EINVAL) for an fd that is not
 * a vector fd.
 */
struct nvx_uintr_vec *nvx_uintr_vec_get(int fd)
{
	struct nvx_uintr_vec *v = ERR_PTR(-EINVAL);
	struct fd f = fdget(fd);

	if (!fd_file(f))
		return ERR_PTR(-EBADF);
	if (fd_file(f)->f_op == &nvx_vec_fops) {
		v = fd_file(f)->private_data;
		refcount_inc(&v->ref);
		atomic_inc(&v->kernel_senders);
	}
	fdput(f);
	return v;
}
EXPORT_SYMBOL_GPL(nvx_uintr_vec_get);

/**
 * nvx_uintr_vec_post() - post a held vector to its receiver
 * @v: from nvx_uintr_vec_get().
 * @src: who posts it (the tracepoint says).
 *
 * Any context. The rules of a send by a thread hold: the vector is
 * pending until the receiver's handler runs; posts of a pending vector
 * merge.
 *
 * Return: 0; -EPIPE when the vector fd was closed, -ESRCH when the
 * receiver's registration ended: the holder then drops the vector and
 * falls back to its own wake-up.
 */
int nvx_uintr_vec_post(struct nvx_uintr_vec *v, enum nvx_uintr_src src)
{
	if (READ_ONCE(v->closed))
		return -EPIPE;
	return nvx_uintr_post(v->recv, v->vector, src);
}
EXPORT_SYMBOL_GPL(nvx_uintr_vec_post);

/**
 * nvx_uintr_vec_put() - drop a vector nvx_uintr_vec_get() gave
 * @v: the vector. Any context.
 */
void nvx_uintr_vec_put(struct nvx_uintr_vec *v)
{
	atomic_dec(&v->kernel_senders);
	nvx_vec_put(v);
}
EXPORT_SYMBOL_GPL(nvx_uintr_vec_put);

/* ----------------------------------------------------------- ioctls --- */

/* REGISTER's receiver fd never reached the thread: it is not registered. */
static void nvx_uintr_register_finish(struct nvx_ucmd *ucmd, bool copied)
{
	if (!copied && current->nvx_uintr)
		__nvx_uintr_exit(current);
}

/* NVX_IOC_UINTR_REGISTER */
static int nvx_uintr_ioc_register(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_register *a = ucmd->arg;
	struct nvx_uintr_recv *r;
	int fd;

	if (a->flags & ~NVX_UINTR_REGISTER_FLAGS || !a->handler)
		return -EINVAL;
	if (a->stack || a->stack_size) {
		if (!a->stack || a->stack_size < NVX_UINTR_MIN_STACK)
			return -EINVAL;
		if (a->stack >= TASK_SIZE_MAX ||
		    a->stack_size > TASK_SIZE_MAX - a->stack)
			return -EFAULT;
	}
	if (a->handler >= TASK_SIZE_MAX)
		return -EFAULT;
	/* 32-bit frames and a shadow stack are not supported */
	if (in_compat_syscall() || shstk_is_enabled())
		return -EOPNOTSUPP;
	if (current->nvx_uintr)
		return -EBUSY;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	r->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!r->page) {
		kfree(r);
		return -ENOMEM;
	}
	r->upage = page_address(r->page);
	r->handler = a->handler;
	r->stack = a->stack;
	r->stack_size = a->stack_size;
	r->flags = a->flags;
	r->task = get_task_struct(current);
	refcount_set(&r->ref, 2);	/* the thread and the fd */
	init_waitqueue_head(&r->wq);
	hrtimer_init(&r->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	r->timer.function = nvx_uintr_tick;

	fd = nvx_anon_fd(ucmd, "[nvx-uintr]", &nvx_recv_fops, r, O_CLOEXEC);
	if (fd < 0) {
		put_task_struct(r->task);
		__free_page(r->page);
		kfree(r);
		return fd;
	}
	a->fd = fd;
	current->nvx_uintr = r;
	atomic_inc(&nvx_uintr_receivers);
	ucmd->finish = nvx_uintr_register_finish;
	return 0;
}

/* The calling thread's receiver, or NULL. */
static struct nvx_uintr_recv *nvx_uintr_self(void)
{
	return current->nvx_uintr;
}

/* NVX_IOC_UINTR_UNREGISTER */
static int nvx_uintr_ioc_unregister(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_unregister *a = ucmd->arg;

	if (a->flags || a->reserved)
		return -EINVAL;
	if (!nvx_uintr_self())
		return -ENOENT;
	__nvx_uintr_exit(current);
	return 0;
}

/* NVX_IOC_UINTR_VECTOR_FD */
static int nvx_uintr_ioc_vector_fd(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_vector_fd *a = ucmd->arg;
	struct nvx_uintr_recv *r = nvx_uintr_self();
	struct nvx_uintr_vec *v;
	int fd;

	if (a->flags || a->reserved || a->vector >= NVX_UINTR_VECTORS)
		return -EINVAL;
	if (!r)
		return -ENOENT;
	v = kzalloc(sizeof(*v), GFP_KERNEL_ACCOUNT);
	if (!v)
		return -ENOMEM;
	refcount_set(&v->ref, 1);
	refcount_inc(&r->ref);
	v->recv = r;
	v->vector = a->vector;
	fd = nvx_anon_fd(ucmd, "[nvx-uintr-vector]", &nvx_vec_fops, v, O_CLOEXEC);
	if (fd < 0) {
		nvx_vec_put(v);
		return fd;
	}
	a->fd = fd;
	return 0;
}

/* The current process's sender table, made on first use when @create. */
static struct nvx_uintr_senders *nvx_senders(bool create)
{
	struct mm_struct *mm = current->mm;
	struct nvx_uintr_senders *t, *old;

	/* pairs with cmpxchg_release() below: the table is initialised */
	t = smp_load_acquire(&mm->nvx_uintr_senders);
	if (t || !create)
		return t;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return NULL;
	spin_lock_init(&t->lock);
	old = cmpxchg_release(&mm->nvx_uintr_senders, NULL, t);
	if (old) {
		kfree(t);
		t = old;
	}
	return t;
}

/*
 * ADD_SENDER's index never reached the caller: take the entry out again,
 * if it still holds the vector (a DEL_SENDER of a guessed index may have
 * taken it first).
 */
static void nvx_uintr_add_sender_finish(struct nvx_ucmd *ucmd, bool copied)
{
	struct nvx_uintr_sender *a = ucmd->arg;
	struct nvx_uintr_vec *v = ucmd->priv;
	struct nvx_uintr_senders *t;

	if (copied)
		return;
	t = nvx_senders(false);
	if (!t)
		return;
	spin_lock(&t->lock);
	if (rcu_access_pointer(t->entry[a->index]) == v)
		RCU_INIT_POINTER(t->entry[a->index], NULL);
	else
		v = NULL;
	spin_unlock(&t->lock);
	if (v)
		nvx_vec_put(v);
}

/* NVX_IOC_UINTR_ADD_SENDER */
static int nvx_uintr_ioc_add_sender(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_sender *a = ucmd->arg;
	struct nvx_uintr_senders *t;
	struct nvx_uintr_vec *v;
	struct fd f;
	int i, ret = -ENOSPC;

	if (a->flags || a->reserved)
		return -EINVAL;
	f = fdget(a->vector_fd);
	if (!fd_file(f))
		return -EBADF;
	if (fd_file(f)->f_op != &nvx_vec_fops) {
		ret = -EINVAL;
		goto out;
	}
	v = fd_file(f)->private_data;
	t = nvx_senders(true);
	if (!t) {
		ret = -ENOMEM;
		goto out;
	}
	spin_lock(&t->lock);
	for (i = 0; i < NVX_UINTR_SENDERS; i++) {
		if (!rcu_access_pointer(t->entry[i])) {
			refcount_inc(&v->ref);
			rcu_assign_pointer(t->entry[i], v);
			a->index = i;
			ucmd->finish = nvx_uintr_add_sender_finish;
			ucmd->priv = v;
			ret = 0;
			break;
		}
	}
	spin_unlock(&t->lock);
out:
	fdput(f);
	return ret;
}

/* NVX_IOC_UINTR_DEL_SENDER */
static int nvx_uintr_ioc_del_sender(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_sender *a = ucmd->arg;
	struct nvx_uintr_senders *t;
	struct nvx_uintr_vec *v;
	u32 i = a->index;

	if (a->flags || a->reserved || i >= NVX_UINTR_SENDERS)
		return -EINVAL;
	i = array_index_nospec(i, NVX_UINTR_SENDERS);
	t = nvx_senders(false);
	if (!t)
		return -ENOENT;
	spin_lock(&t->lock);
	v = rcu_dereference_protected(t->entry[i], lockdep_is_held(&t->lock));
	RCU_INIT_POINTER(t->entry[i], NULL);
	spin_unlock(&t->lock);
	if (!v)
		return -ENOENT;
	nvx_vec_put(v);
	return 0;
}

/* Send through entry @i of @t; @i is in range. */
static int nvx_uintr_send_index(struct nvx_uintr_senders *t, u32 i)
{
	struct nvx_uintr_vec *v;
	int ret;

	i = array_index_nospec(i, NVX_UINTR_SENDERS);
	rcu_read_lock();
	v = rcu_dereference(t->entry[i]);
	if (!v)
		ret = -ENOENT;
	else if (READ_ONCE(v->closed))
		ret = -EPIPE;
	else
		ret = nvx_uintr_post(v->recv, v->vector, NVX_UINTR_SRC_THREAD);
	rcu_read_unlock();
	return ret;
}

/* NVX_IOC_UINTR_SEND */
static int nvx_uintr_ioc_send(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_send *a = ucmd->arg;
	struct nvx_uintr_senders *t;

	if (a->flags || a->index >= NVX_UINTR_SENDERS)
		return -EINVAL;
	t = nvx_senders(false);
	if (!t)
		return -ENOENT;
	return nvx_uintr_send_index(t, a->index);
}

/* NVX_IOC_UINTR_SEND_MANY */
static int nvx_uintr_ioc_send_many(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_send_many *a = ucmd->arg;
	struct nvx_uintr_senders *t;
	u32 *idx, i;
	int ret = 0, err;

	a->sent = 0;
	if (a->flags || a->reserved || !a->count ||
	    a->count > NVX_UINTR_SENDERS)
		return -EINVAL;
	idx = memdup_array_user(u64_to_user_ptr(a->indices), a->count,
				sizeof(*idx));
	if (IS_ERR(idx))
		return PTR_ERR(idx);
	t = nvx_senders(false);
	for (i = 0; i < a->count && !ret; i++) {
		u32 j = idx[i];

		if (j >= NVX_UINTR_SENDERS) {
			ret = -EINVAL;
			break;
		}
		j = array_index_nospec(j, NVX_UINTR_SENDERS);
		if (!t || !rcu_access_pointer(t->entry[j]))
			ret = -ENOENT;
	}
	if (!ret) {
		for (i = 0; i < a->count; i++) {
			err = nvx_uintr_send_index(t, idx[i]);
			if (!err)
				a->sent++;
			else if (!ret)
				ret = err;
		}
	}
	kfree(idx);
	return ret;
}

/* NVX_IOC_UINTR_WAIT */
static int nvx_uintr_ioc_wait(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_wait *a = ucmd->arg;
	struct nvx_uintr_recv *r = nvx_uintr_self();
	long ret;

	if (a->flags || a->reserved || a->timeout_ns > NVX_UINTR_MAX_NS)
		return -EINVAL;
	if (!r)
		return -ENOENT;
	if (READ_ONCE(r->upage->pending))
		goto pending;
	if (!a->timeout_ns)
		return -ETIMEDOUT;
	ret = wait_event_interruptible_hrtimeout(r->wq,
						 READ_ONCE(r->upage->pending),
						 ns_to_ktime(a->timeout_ns));
	if (READ_ONCE(r->upage->pending))
		goto pending;
	if (ret == -ETIME)
		return -ETIMEDOUT;
	return ret ? -EINTR : 0;
pending:
	/* deliver on the way out, if the thread unmasked by hand meanwhile */
	nvx_uintr_kick(r);
	return 0;
}

/* NVX_IOC_UINTR_TIMER */
static int nvx_uintr_ioc_timer(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_timer *a = ucmd->arg;
	struct nvx_uintr_recv *r = nvx_uintr_self();

	if (a->flags || a->vector >= NVX_UINTR_VECTORS ||
	    (a->period_ns && a->period_ns < NVX_UINTR_MIN_PERIOD_NS) ||
	    a->period_ns > NVX_UINTR_MAX_NS || a->first_ns > NVX_UINTR_MAX_NS)
		return -EINVAL;
	if (!r)
		return -ENOENT;
	hrtimer_cancel(&r->timer);
	/* the callback has ended: nothing reads these until the start */
	WRITE_ONCE(r->period_ns, a->period_ns);
	if (!a->first_ns && !a->period_ns)
		return 0;
	r->timer_vector = a->vector;
	hrtimer_start(&r->timer, ns_to_ktime(a->first_ns ?: a->period_ns),
		      HRTIMER_MODE_REL_HARD);
	return 0;
}

/*
 * Signals that cannot be routed: SIGKILL and SIGSTOP, and those the kernel
 * raises for a faulting instruction, which must never be swallowed.
 */
static bool nvx_uintr_routable(u32 signo)
{
	switch (signo) {
	case SIGKILL:
	case SIGSTOP:
	case SIGILL:
	case SIGTRAP:
	case SIGFPE:
	case SIGSEGV:
	case SIGBUS:
	case SIGSYS:
		return false;
	}
	return true;
}

/* NVX_IOC_UINTR_SIGNAL */
static int nvx_uintr_ioc_signal(struct nvx_ucmd *ucmd)
{
	struct nvx_uintr_signal *a = ucmd->arg;
	struct nvx_uintr_recv *r = nvx_uintr_self();
	struct sighand_struct *sh;

	if (a->flags || a->reserved || a->signo > _NSIG ||
	    !nvx_uintr_routable(a->signo) || a->vector >= NVX_UINTR_VECTORS)
		return -EINVAL;
	if (!r)
		return -ENOENT;
	/* only exec (de_thread) replaces it, and only in this thread */
	sh = rcu_dereference_protected(current->sighand, true);
	spin_lock_irq(&sh->siglock);
	WRITE_ONCE(r->route_vector, a->vector);
	WRITE_ONCE(r->route_signo, a->signo);
	spin_unlock_irq(&sh->siglock);
	return 0;
}

static const struct nvx_ioctl_op nvx_uintr_ops[] = {
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_REGISTER, nvx_uintr_ioc_register,
		     struct nvx_uintr_register, stack_size, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_UNREGISTER, nvx_uintr_ioc_unregister,
		     struct nvx_uintr_unregister, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_VECTOR_FD, nvx_uintr_ioc_vector_fd,
		     struct nvx_uintr_vector_fd, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_ADD_SENDER, nvx_uintr_ioc_add_sender,
		     struct nvx_uintr_sender, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_DEL_SENDER, nvx_uintr_ioc_del_sender,
		     struct nvx_uintr_sender, reserved, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_SEND, nvx_uintr_ioc_send,
		     struct nvx_uintr_send, index, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_SEND_MANY, nvx_uintr_ioc_send_many,
		     struct nvx_uintr_send_many, reserved, NVX_IOCTL_OUT_ON_ERROR),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_WAIT, nvx_uintr_ioc_wait,
		     struct nvx_uintr_wait, timeout_ns, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_TIMER, nvx_uintr_ioc_timer,
		     struct nvx_uintr_timer, period_ns, 0),
	NVX_IOCTL_OP(NVX_IOC_UINTR_BASE, NVX_IOC_UINTR_SIGNAL, nvx_uintr_ioc_signal,
		     struct nvx_uintr_signal, reserved, 0),
};

/*
 * The /dev/nvx ioctls of user interrupts. This code is built in (it
 * hooks fork, exit, exec and signal delivery); the core module registers
 * the range when it loads.
 */
struct nvx_ioctl_range nvx_uintr_ioctls = {
	.base = NVX_IOC_UINTR_BASE,
	.nr = ARRAY_SIZE(nvx_uintr_ops),
	.ops = nvx_uintr_ops,
	.feature = NVX_FEAT_UINTR,
};
EXPORT_SYMBOL_GPL(nvx_uintr_ioctls);

static int nvx_uintr_stats_show(struct seq_file *m, void *unused)
{
	u64 delivered = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		delivered += READ_ONCE(per_cpu(nvx_uintr_delivered, cpu));
	seq_printf(m, "receivers %d\n", atomic_read(&nvx_uintr_receivers));
	seq_printf(m, "delivered %llu\n", delivered);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nvx_uintr_stats);

/**
 * nvx_uintr_debugfs_init() - fill the user-interrupt debugfs directory
 * @dir: nvx/uintr, made by the core module.
 */
void nvx_uintr_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("stats", 0444, dir, NULL, &nvx_uintr_stats_fops);
}
EXPORT_SYMBOL_GPL(nvx_uintr_debugfs_init);
