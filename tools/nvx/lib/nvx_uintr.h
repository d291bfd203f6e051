/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_uintr.h - the user side of nvx user interrupts: part of libnvx
 * (lib/uintr.c).
 *
 * A thread that receives interrupts (x86-64, GCC) registers a handler:
 *
 *	static NVX_UINTR_HANDLER void on_irq(struct nvx_uintr_frame *f,
 *					     uint64_t vector) { ... }
 *	int rfd = nvx_uintr_register_handler(nvx_fd, on_irq, NULL, 0, 0);
 *
 * The kernel enters the library's entry stub: it saves the caller-saved
 * general registers, calls the thread's handler, delivers whatever
 * became pending meanwhile, and returns to the interrupted code restoring
 * rip, rflags and rsp without a system call (nvx's "uiret").
 *
 * The handler contract, as with hardware UINTR: general registers only.
 * Extended state (x87/SSE/AVX) is neither saved nor restored, so the
 * handler and everything it calls must not touch it: mark handlers with
 * NVX_UINTR_HANDLER (GCC's general-regs-only) and call only functions
 * that are general-registers-only themselves (nvx_uintr_send(),
 * nvx_uintr_clui(), nvx_uintr_stui(), atomics; not printf). Handlers run
 * on the interrupted thread, with delivery masked (the page's enabled
 * flag clear) until they return.
 *
 * The plain ioctl wrappers (vector fds, the sender table, the timer)
 * work on any architecture; the handler side needs NVX_HAVE_UINTR_LIB,
 * and its struct nvx_uintr_rx helpers return -EOPNOTSUPP without it.
 * See Documentation/nvx/uintr.rst.
 */
#ifndef NVX_UINTR_LIB_H
#define NVX_UINTR_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <nvx/uintr.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NVX_HAVE_UINTR_LIB	1
#else
#define NVX_HAVE_UINTR_LIB	0	/* the handler side needs x86-64 GCC */
#endif

/* Plain ioctl wrappers, any architecture: see lib/uintr.c. */
int nvx_uintr_vector_fd(int nvx_fd, uint32_t vector);
int nvx_uintr_add_sender(int nvx_fd, int vector_fd);
int nvx_uintr_del_sender(int nvx_fd, uint32_t index);
int nvx_uintr_post(int nvx_fd, uint32_t index);
int nvx_uintr_timer_set(int nvx_fd, uint32_t vector, uint64_t period_ns);
const char *nvx_uintr_strerror(unsigned long req, int err);

/*
 * A counting handler for programs that only count deliveries and answer
 * them (nvxtool, nvx-bench). A thread registers it with
 * nvx_uintr_rx_register(): for every vector but NVX_UINTR_RX_STOP it
 * increments @hits and, when @reply is not -1, sends through sender table
 * entry @reply.
 */
#define NVX_UINTR_RX_STOP	1	/* the vector that sets @stop */
/* The longest single NVX_IOC_UINTR_WAIT, so that a quit flag is seen. */
#define NVX_UINTR_WAIT_SLICE	(100 * 1000000ULL)

/**
 * struct nvx_uintr_rx - what the counting handler of a thread does
 * @hits: deliveries of vectors other than NVX_UINTR_RX_STOP.
 * @reply_errors: replies that failed.
 * @kernel_delivered: set on unregistering: how many of the deliveries
 *	the kernel made (struct nvx_uintr_page's @delivered); the others
 *	were taken in user mode when unmasking.
 * @stop: set when NVX_UINTR_RX_STOP is delivered.
 * @armed: set by the thread: the number of the timer run going on.
 * @disarm: set by another thread: the next delivery stops the thread's
 *	nvx timer when @disarm equals @armed.
 * @disarmed: set by the handler to @disarm when it stopped the timer.
 * @reply: the sender table entry to answer through, or -1.
 * @nvx_fd: the nvx device, for replies and @disarm.
 *
 * Read and write the fields with __atomic builtins: the handler runs
 * at any point of the thread, and other threads look.
 */
struct nvx_uintr_rx {
	uint64_t hits;
	uint64_t reply_errors;
	uint64_t kernel_delivered;
	uint32_t stop;
	uint32_t armed;
	uint32_t disarm;
	uint32_t disarmed;
	int reply;
	int nvx_fd;
};

int nvx_uintr_rx_register(int nvx_fd, struct nvx_uintr_rx *rx);
int nvx_uintr_rx_unregister(int nvx_fd);
int nvx_uintr_rx_wait(int nvx_fd, uint64_t target, const int *quit,
		      uint64_t timeout_ns);
int nvx_uintr_rx_setup(int nvx_fd, struct nvx_uintr_rx *rx, int vec[2],
		       unsigned long *req);

#if NVX_HAVE_UINTR_LIB

#define NVX_UINTR_HANDLER __attribute__((target("general-regs-only")))

typedef void (*nvx_uintr_handler_t)(struct nvx_uintr_frame *frame,
				    uint64_t vector);

int nvx_uintr_register_handler(int nvx_fd, nvx_uintr_handler_t fn,
			       void *stack, size_t stack_size, uint32_t flags);
int nvx_uintr_unregister_handler(int nvx_fd);
NVX_UINTR_HANDLER struct nvx_uintr_page *nvx_uintr_page(void);
NVX_UINTR_HANDLER void nvx_uintr_clui(void);
NVX_UINTR_HANDLER void nvx_uintr_stui(void);

/*
 * ioctl() as a raw system call: general registers only, so that a
 * handler may call it. Return: 0 or -errno.
 */
static inline NVX_UINTR_HANDLER long nvx_uintr_raw_ioctl(int fd,
							 unsigned long req,
							 void *arg)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(16L /* __NR_ioctl */), "D"((long)fd),
			   "S"((long)req), "d"(arg)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Send through sender table entry @index from anywhere: 0 or -errno. */
static inline NVX_UINTR_HANDLER int nvx_uintr_send(int nvx_fd,
						   uint32_t index)
{
	struct nvx_uintr_send s = { .flags = 0, .index = index };

	return nvx_uintr_raw_ioctl(nvx_fd, NVX_IOC_UINTR_SEND, &s);
}

#endif /* NVX_HAVE_UINTR_LIB */

#endif /* NVX_UINTR_LIB_H */
