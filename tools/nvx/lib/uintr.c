// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: the user side of nvx user interrupts. nvx_uintr.h has the
 * handler contract. The per-thread state (the shared page, the handler)
 * lives here, so that every thread registers, masks and unmasks through
 * these functions.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nvx_uintr.h"
#include "nvx_util.h"

#if NVX_HAVE_UINTR_LIB

static __thread struct nvx_uintr_page *nvx_uintr__page;
static __thread nvx_uintr_handler_t nvx_uintr__fn;
static __thread int nvx_uintr__rfd = -1;

/**
 * nvx_uintr_page() - the calling thread's shared page
 *
 * Return: the page, or NULL before registration.
 */
NVX_UINTR_HANDLER struct nvx_uintr_page *nvx_uintr_page(void)
{
	return nvx_uintr__page;
}

/**
 * nvx_uintr_clui() - mask: vectors stay pending until nvx_uintr_stui()
 */
NVX_UINTR_HANDLER void nvx_uintr_clui(void)
{
	if (nvx_uintr__page)
		__atomic_store_n(&nvx_uintr__page->enabled, 0,
				 __ATOMIC_SEQ_CST);
}

/*
 * Unmask and deliver what is pending, highest vector first, by calling
 * the handler here (the kernel delivers only on its way back to user
 * mode). A vector is claimed with an atomic and-not, so each is handled
 * exactly once whether the kernel or this loop takes it.
 */
static NVX_UINTR_HANDLER void
nvx_uintr__drain(struct nvx_uintr_page *p, const struct nvx_uintr_frame *f)
{
	struct nvx_uintr_frame sf;
	uint64_t pend, bit;
	int v;

	for (;;) {
		__atomic_store_n(&p->enabled, 1, __ATOMIC_SEQ_CST);
		pend = __atomic_load_n(&p->pending, __ATOMIC_SEQ_CST);
		if (!pend)
			return;
		v = 63 - __builtin_clzll(pend);
		bit = 1ULL << v;
		__atomic_store_n(&p->enabled, 0, __ATOMIC_SEQ_CST);
		if (!(__atomic_fetch_and(&p->pending, ~bit, __ATOMIC_SEQ_CST) &
		      bit))
			continue;	/* the kernel delivered it meanwhile */
		sf = *f;
		sf.vector = v;
		nvx_uintr__fn(&sf, v);
	}
}

/**
 * nvx_uintr_stui() - unmask, and deliver what is pending
 */
NVX_UINTR_HANDLER void nvx_uintr_stui(void)
{
	struct nvx_uintr_frame none = { 0, 0, 0, 0 };

	if (nvx_uintr__page)
		nvx_uintr__drain(nvx_uintr__page, &none);
}

/* Called by nvx_uintr_entry with the kernel's frame. */
static __attribute__((used, noipa)) NVX_UINTR_HANDLER void
nvx_uintr__dispatch(struct nvx_uintr_frame *f)
{
	nvx_uintr__fn(f, f->vector);
	nvx_uintr__drain(nvx_uintr__page, f);
}

/*
 * The handler address given to the kernel. At entry rsp points at the
 * 16-byte aligned frame {vector, rip, rflags, rsp}. The return path
 * writes rip just below the interrupted code's red zone (old rsp - 136,
 * memory the interrupted code does not own), switches to it with
 * "pop %rsp" and returns with "ret $128", which lands rsp exactly on the
 * old value; rflags is restored by popfq before that, and no general
 * register is left changed.
 */
static __attribute__((naked, used)) void nvx_uintr_entry(void)
{
	__asm__ volatile("push %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\t"
		"push %rdi\n\tpush %r8\n\tpush %r9\n\tpush %r10\n\t"
		"push %r11\n\tpush %rbp\n\t"
		"lea 80(%rsp), %rdi\n\t"
		"call nvx_uintr__dispatch\n\t"
		"pop %rbp\n\tpop %r11\n\tpop %r10\n\tpop %r9\n\t"
		"pop %r8\n\tpop %rdi\n\tpop %rsi\n\tpop %rdx\n\t"
		"pop %rcx\n\tpop %rax\n\t"
		/* rsp -> frame F: [vector][rip][rflags][rsp] */
		"push %rax\n\tpush %rbx\n\t"
		"pushq 32(%rsp)\n\t"		/* rflags */
		"mov 48(%rsp), %rax\n\t"	/* old rsp */
		"sub $136, %rax\n\t"		/* W = old rsp - 136 */
		"mov 32(%rsp), %rbx\n\t"	/* rip */
		"mov %rbx, (%rax)\n\t"		/* [W] = rip */
		"mov %rax, 24(%rsp)\n\t"	/* F.vector = W */
		"popfq\n\t"
		"pop %rbx\n\tpop %rax\n\t"
		"pop %rsp\n\t"			/* rsp = W */
		"ret $128\n\t");
}

/**
 * nvx_uintr_register_handler() - register the calling thread's handler
 * @nvx_fd: the nvx device.
 * @fn: the handler, marked NVX_UINTR_HANDLER.
 * @stack: an alternate stack, or NULL.
 * @stack_size: its size, or 0.
 * @flags: NVX_UINTR_* register flags.
 *
 * Return: the receiver fd (mapped, delivery unmasked), or -errno.
 */
int nvx_uintr_register_handler(int nvx_fd, nvx_uintr_handler_t fn,
			       void *stack, size_t stack_size, uint32_t flags)
{
	struct nvx_uintr_register r = {
		.flags = flags,
		.handler = (uintptr_t)nvx_uintr_entry,
		.stack = (uintptr_t)stack,
		.stack_size = stack_size,
	};
	struct nvx_uintr_unregister u = { 0, 0 };
	void *p;
	int err;

	nvx_uintr__fn = fn;
	if (ioctl(nvx_fd, NVX_IOC_UINTR_REGISTER, &r))
		return -errno;
	p = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		 MAP_SHARED, r.fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		ioctl(nvx_fd, NVX_IOC_UINTR_UNREGISTER, &u);
		close(r.fd);
		return err;
	}
	nvx_uintr__page = p;
	nvx_uintr__rfd = r.fd;
	nvx_uintr_stui();
	return r.fd;
}

/**
 * nvx_uintr_unregister_handler() - undo nvx_uintr_register_handler()
 * @nvx_fd: the nvx device.
 *
 * Return: 0 or -errno.
 */
int nvx_uintr_unregister_handler(int nvx_fd)
{
	struct nvx_uintr_unregister u = { 0, 0 };
	int ret = ioctl(nvx_fd, NVX_IOC_UINTR_UNREGISTER, &u) ? -errno : 0;

	if (nvx_uintr__page)
		munmap(nvx_uintr__page, sysconf(_SC_PAGESIZE));
	if (nvx_uintr__rfd >= 0)
		close(nvx_uintr__rfd);
	nvx_uintr__page = NULL;
	nvx_uintr__rfd = -1;
	return ret;
}

static __thread struct nvx_uintr_rx *nvx_rx_self;

/*
 * The counting handler (struct nvx_uintr_rx). General registers only:
 * atomics and raw system calls, nothing else.
 */
static NVX_UINTR_HANDLER void nvx_rx_handler(struct nvx_uintr_frame *frame,
					     uint64_t vector)
{
	struct nvx_uintr_rx *rx = nvx_rx_self;
	struct nvx_uintr_timer off = { 0, 0, 0, 0 };
	uint32_t d;

	if (!rx)
		return;
	if (vector == NVX_UINTR_RX_STOP) {
		__atomic_store_n(&rx->stop, 1, __ATOMIC_SEQ_CST);
		return;
	}
	__atomic_add_fetch(&rx->hits, 1, __ATOMIC_SEQ_CST);
	if (rx->reply >= 0 && nvx_uintr_send(rx->nvx_fd, rx->reply))
		__atomic_add_fetch(&rx->reply_errors, 1, __ATOMIC_RELAXED);

	/* another thread asks to stop this thread's timer run @armed */
	d = __atomic_load_n(&rx->disarm, __ATOMIC_ACQUIRE);
	if (d && d == __atomic_load_n(&rx->armed, __ATOMIC_ACQUIRE) &&
	    d != __atomic_load_n(&rx->disarmed, __ATOMIC_RELAXED) &&
	    !nvx_uintr_raw_ioctl(rx->nvx_fd, NVX_IOC_UINTR_TIMER, &off))
		__atomic_store_n(&rx->disarmed, d, __ATOMIC_RELEASE);
}

/**
 * nvx_uintr_rx_register() - register the counting handler for this thread
 * @nvx_fd: the nvx device.
 * @rx: what the handler counts, until nvx_uintr_rx_unregister().
 *
 * Return: 0 or -errno (-EOPNOTSUPP without NVX_HAVE_UINTR_LIB).
 */
int nvx_uintr_rx_register(int nvx_fd, struct nvx_uintr_rx *rx)
{
	int ret;

	if (nvx_rx_self)
		return -EBUSY;
	rx->nvx_fd = nvx_fd;
	nvx_rx_self = rx;
	ret = nvx_uintr_register_handler(nvx_fd, nvx_rx_handler, NULL, 0, 0);
	if (ret < 0) {
		nvx_rx_self = NULL;
		return ret;
	}
	return 0;
}

/**
 * nvx_uintr_rx_unregister() - unregister the counting handler
 * @nvx_fd: the nvx device.
 *
 * Sets @kernel_delivered of the thread's struct nvx_uintr_rx.
 *
 * Return: 0 or -errno.
 */
int nvx_uintr_rx_unregister(int nvx_fd)
{
	struct nvx_uintr_page *p = nvx_uintr_page();
	int ret;

	if (!nvx_rx_self)
		return -ENOENT;
	/* masked, the kernel delivers no more: the count is final */
	nvx_uintr_clui();
	if (p)
		nvx_rx_self->kernel_delivered =
			__atomic_load_n(&p->delivered, __ATOMIC_SEQ_CST);
	ret = nvx_uintr_unregister_handler(nvx_fd);
	nvx_rx_self = NULL;
	return ret;
}

static bool nvx_rx_done(const struct nvx_uintr_rx *rx, uint64_t target,
			const int *quit)
{
	return __atomic_load_n(&rx->hits, __ATOMIC_ACQUIRE) >= target ||
	       __atomic_load_n(&rx->stop, __ATOMIC_ACQUIRE) ||
	       (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE));
}

/**
 * nvx_uintr_rx_wait() - block until enough deliveries
 * @nvx_fd: the nvx device.
 * @target: return once the thread's @hits reaches this.
 * @quit: return once *@quit is nonzero; or NULL.
 * @timeout_ns: give up after this long.
 *
 * Blocks in NVX_IOC_UINTR_WAIT, delivery masked so that nothing is
 * missed, until @target, the thread's @stop or *@quit.
 *
 * Return: 0, -ETIMEDOUT or another -errno.
 */
int nvx_uintr_rx_wait(int nvx_fd, uint64_t target, const int *quit,
		      uint64_t timeout_ns)
{
	const struct nvx_uintr_rx *rx = nvx_rx_self;
	struct nvx_uintr_wait w = { 0, 0, 0 };
	uint64_t now, end;
	int ret = 0;

	if (!rx)
		return -ENOENT;
	now = nvx_now_ns();
	end = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
	/*
	 * Masked, a vector that comes between the check and the wait stays
	 * pending, and the wait returns at once; unmasking delivers it.
	 */
	nvx_uintr_clui();
	while (!nvx_rx_done(rx, target, quit)) {
		now = nvx_now_ns();
		if (now >= end) {
			ret = -ETIMEDOUT;
			break;
		}
		w.timeout_ns = end - now < NVX_UINTR_WAIT_SLICE ?
			       end - now : NVX_UINTR_WAIT_SLICE;
		if (ioctl(nvx_fd, NVX_IOC_UINTR_WAIT, &w) &&
		    errno != ETIMEDOUT && errno != EINTR) {
			ret = -errno;
			break;
		}
		nvx_uintr_stui();
		nvx_uintr_clui();
	}
	nvx_uintr_stui();
	return ret;
}

/**
 * nvx_uintr_rx_setup() - a receiving thread: handler and vector fds
 * @nvx_fd: the nvx device.
 * @rx: what the counting handler counts.
 * @vec: the thread's vector fds for vector 0 and NVX_UINTR_RX_STOP.
 * @req: the request that failed.
 *
 * nvx_uintr_rx_register(), then the two vector fds; on failure nothing
 * stays registered.
 *
 * Return: 0 or -errno.
 */
int nvx_uintr_rx_setup(int nvx_fd, struct nvx_uintr_rx *rx, int vec[2],
		       unsigned long *req)
{
	int err;

	err = nvx_uintr_rx_register(nvx_fd, rx);
	if (err) {
		*req = NVX_IOC_UINTR_REGISTER;
		return err;
	}
	vec[0] = nvx_uintr_vector_fd(nvx_fd, 0);
	vec[1] = vec[0] < 0 ? vec[0] :
		 nvx_uintr_vector_fd(nvx_fd, NVX_UINTR_RX_STOP);
	if (vec[1] >= 0)
		return 0;
	if (vec[0] >= 0)
		close(vec[0]);
	err = vec[1];
	*req = NVX_IOC_UINTR_VECTOR_FD;
	nvx_uintr_rx_unregister(nvx_fd);
	return err;
}

#else /* !NVX_HAVE_UINTR_LIB */

int nvx_uintr_rx_register(int nvx_fd, struct nvx_uintr_rx *rx)
{
	return -EOPNOTSUPP;
}

int nvx_uintr_rx_unregister(int nvx_fd)
{
	return -EOPNOTSUPP;
}

int nvx_uintr_rx_wait(int nvx_fd, uint64_t target, const int *quit,
		      uint64_t timeout_ns)
{
	return -EOPNOTSUPP;
}

int nvx_uintr_rx_setup(int nvx_fd, struct nvx_uintr_rx *rx, int vec[2],
		       unsigned long *req)
{
	*req = NVX_IOC_UINTR_REGISTER;
	return -EOPNOTSUPP;
}

#endif /* NVX_HAVE_UINTR_LIB */

/**
 * nvx_uintr_vector_fd() - a vector fd for the calling thread
 * @nvx_fd: the nvx device.
 * @vector: 0 .. NVX_UINTR_VECTORS - 1.
 *
 * Return: the fd, or -errno.
 */
int nvx_uintr_vector_fd(int nvx_fd, uint32_t vector)
{
	struct nvx_uintr_vector_fd v = { .vector = vector };

	return ioctl(nvx_fd, NVX_IOC_UINTR_VECTOR_FD, &v) ? -errno : v.fd;
}

/**
 * nvx_uintr_add_sender() - add a vector fd to the process's sender table
 * @nvx_fd: the nvx device.
 * @vector_fd: from nvx_uintr_vector_fd(), of any thread or process.
 *
 * Return: the table index, or -errno.
 */
int nvx_uintr_add_sender(int nvx_fd, int vector_fd)
{
	struct nvx_uintr_sender s = { .vector_fd = vector_fd };

	return ioctl(nvx_fd, NVX_IOC_UINTR_ADD_SENDER, &s) ? -errno :
							      (int)s.index;
}

/**
 * nvx_uintr_del_sender() - delete a sender table entry
 * @nvx_fd: the nvx device.
 * @index: from nvx_uintr_add_sender().
 *
 * Return: 0 or -errno.
 */
int nvx_uintr_del_sender(int nvx_fd, uint32_t index)
{
	struct nvx_uintr_sender s = { .index = index };

	return ioctl(nvx_fd, NVX_IOC_UINTR_DEL_SENDER, &s) ? -errno : 0;
}

/**
 * nvx_uintr_post() - NVX_IOC_UINTR_SEND through a sender table entry
 * @nvx_fd: the nvx device.
 * @index: the entry.
 *
 * An ordinary ioctl(); a handler uses nvx_uintr_send() instead.
 *
 * Return: 0 or -errno.
 */
int nvx_uintr_post(int nvx_fd, uint32_t index)
{
	struct nvx_uintr_send s = { .index = index };

	return ioctl(nvx_fd, NVX_IOC_UINTR_SEND, &s) ? -errno : 0;
}

/**
 * nvx_uintr_timer_set() - the calling thread's nvx timer
 * @nvx_fd: the nvx device.
 * @vector: the vector it posts.
 * @period_ns: its period; 0 stops it.
 *
 * Return: 0 or -errno.
 */
int nvx_uintr_timer_set(int nvx_fd, uint32_t vector, uint64_t period_ns)
{
	struct nvx_uintr_timer t = {
		.vector = vector,
		.period_ns = period_ns,
	};

	return ioctl(nvx_fd, NVX_IOC_UINTR_TIMER, &t) ? -errno : 0;
}

/* Where nvx says more than strerror(): per request (0: any) and errno. */
static const struct nvx_errno_why nvx_uintr_why[] = {
	{ 0, ENOTTY,
	  "the running kernel has no nvx user interrupts (CONFIG_NVX_UINTR), or an older nvx ABI" },
	/* 64-bit callers only, and so only nvxtool with the library */
	{ 0, EOPNOTSUPP,
	  "built without the user-interrupt handler library (x86-64 GCC only)" },
	{ NVX_IOC_UINTR_REGISTER, EBUSY, "the thread has a handler already" },
	{ NVX_IOC_UINTR_VECTOR_FD, ENOENT, "the thread has no handler" },
	{ NVX_IOC_UINTR_WAIT, ENOENT, "the thread has no handler" },
	{ NVX_IOC_UINTR_TIMER, ENOENT, "the thread has no handler" },
	{ NVX_IOC_UINTR_ADD_SENDER, ENOSPC,
	  "the process's sender table is full" },
	{ NVX_IOC_UINTR_SEND, ENOENT, "an empty sender table entry" },
	{ NVX_IOC_UINTR_SEND, EPIPE, "the vector fd was closed" },
	{ NVX_IOC_UINTR_SEND, ESRCH,
	  "the receiver exited, exec'd or unregistered" },
};

/**
 * nvx_uintr_strerror() - explain an errno of a uintr ioctl
 * @req: the ioctl request.
 * @err: the positive errno.
 *
 * Return: what nvx means by it, or strerror(@err).
 */
const char *nvx_uintr_strerror(unsigned long req, int err)
{
	const char *why = nvx_errno_why_find(nvx_uintr_why,
					     NVX_ARRAY_SIZE(nvx_uintr_why),
					     req, err);

	return why ? why : strerror(err);
}
