/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_uintr.h - the user side of nvx user interrupts, header only.
 *
 * Include it in the program (x86-64, GCC) that receives interrupts:
 *
 *	static NVX_UINTR_HANDLER void on_irq(struct nvx_uintr_frame *f,
 *					     uint64_t vector) { ... }
 *	int rfd = nvx_uintr_register_handler(nvx_fd, on_irq, NULL, 0, 0);
 *
 * nvx_uintr_entry is the address the kernel enters: it saves the
 * caller-saved general registers, calls the thread's handler, delivers
 * whatever became pending meanwhile, and returns to the interrupted code
 * restoring rip, rflags and rsp without a system call (nvx's "uiret").
 *
 * The handler contract, as with hardware UINTR: general registers only.
 * Extended state (x87/SSE/AVX) is neither saved nor restored, so the
 * handler and everything it calls must not touch it: mark handlers with
 * NVX_UINTR_HANDLER (GCC's general-regs-only) and call only functions
 * that are general-registers-only themselves (raw system calls, atomics;
 * not printf). Handlers run on the interrupted thread, with delivery
 * masked (the page's enabled flag clear) until they return.
 *
 * The per-thread state lives in this translation unit: register, mask and
 * unmask from the file that includes this header. See
 * Documentation/nvx/uintr.rst.
 */
#ifndef NVX_UINTR_LIB_H
#define NVX_UINTR_LIB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <nvx/uintr.h>

#if !defined(__x86_64__) || !defined(__GNUC__) || defined(__clang__)
#error "nvx_uintr.h needs GCC on x86-64"
#endif

#define NVX_UINTR_HANDLER __attribute__((target("general-regs-only")))

typedef void (*nvx_uintr_handler_t)(struct nvx_uintr_frame *frame,
				    uint64_t vector);

static __thread struct nvx_uintr_page *nvx_uintr__page;
static __thread nvx_uintr_handler_t nvx_uintr__fn;
static __thread int nvx_uintr__rfd = -1;

/* The calling thread's shared page, or NULL before registration. */
static inline struct nvx_uintr_page *nvx_uintr_page(void)
{
	return nvx_uintr__page;
}

/* Mask: vectors stay pending until nvx_uintr_stui(). */
static inline NVX_UINTR_HANDLER void nvx_uintr_clui(void)
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
static inline NVX_UINTR_HANDLER void
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

static inline NVX_UINTR_HANDLER void nvx_uintr_stui(void)
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

/*
 * Register @fn as the calling thread's handler. Returns the receiver fd
 * (mapped, delivery unmasked), or -errno. @stack/@stack_size: an
 * alternate stack, or NULL/0. @flags: NVX_UINTR_* register flags.
 */
static inline int nvx_uintr_register_handler(int nvx_fd,
					     nvx_uintr_handler_t fn,
					     void *stack, size_t stack_size,
					     uint32_t flags)
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

/* Undo nvx_uintr_register_handler(): 0 or -errno. */
static inline int nvx_uintr_unregister_handler(int nvx_fd)
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

/* A vector fd for the calling thread, or -errno. */
static inline int nvx_uintr_vector_fd(int nvx_fd, uint32_t vector)
{
	struct nvx_uintr_vector_fd v = { .vector = vector };

	return ioctl(nvx_fd, NVX_IOC_UINTR_VECTOR_FD, &v) ? -errno : v.fd;
}

/* Add @vector_fd to this process's sender table: the index, or -errno. */
static inline int nvx_uintr_add_sender(int nvx_fd, int vector_fd)
{
	struct nvx_uintr_sender s = { .vector_fd = vector_fd };

	return ioctl(nvx_fd, NVX_IOC_UINTR_ADD_SENDER, &s) ? -errno :
							      (int)s.index;
}

/* Send through sender table entry @index: 0 or -errno. */
static inline NVX_UINTR_HANDLER int nvx_uintr_send(int nvx_fd,
						   uint32_t index)
{
	struct nvx_uintr_send s = { .flags = 0, .index = index };
	long ret;

	/* a raw system call: usable from a handler */
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(16L /* __NR_ioctl */), "D"((long)nvx_fd),
			   "S"((long)NVX_IOC_UINTR_SEND), "d"(&s)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif /* NVX_UINTR_LIB_H */
