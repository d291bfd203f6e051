/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx guest runtime: the API an app of an nvx user VM is written
 * against. The app defines nvx_main(); the runtime boots, calls it with
 * the VMM's arguments and exits with its return value. Everything else
 * (I/O, time, exit) goes through the rings of include/uapi/nvx/uvm.h.
 *
 * Single-threaded, no interrupts outside the completion wait.
 */
#ifndef NVX_GUEST_RT_H
#define NVX_GUEST_RT_H

#include <nvx/uvm.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* from the linker script and entry.S */
extern char _end[];
extern char exc_stubs[], irq_stub[], spurious_stub[];

#define NULL		((void *)0)
#define noreturn	__attribute__((noreturn))
#define __aligned(x)	__attribute__((aligned(x)))
#define __packed	__attribute__((packed))

/* Tags with this bit set are made by the runtime (nvx_tag()). */
#define NVX_RT_TAG	0x80000000U

/* Defined by the app. argv[0] is the image name; argv[argc] is NULL. */
int nvx_main(int argc, char **argv);

/* ---------------------------------------------------------- rings --- */

struct nvx_uvm_ctrl *ctrl(void);

/* A fresh runtime tag (NVX_RT_TAG set). */
unsigned int nvx_tag(void);

/*
 * Submit @m, wait for the completion with @m->tag, copy it into @m and
 * return its status. Completions of other requests (nvx_submit()) that
 * arrive meanwhile are kept for nvx_complete(). @m's tag must not be in
 * use by a pipelined request. Bulk buffers and the sg array must stay
 * valid until the completion: they are read when the system process
 * takes the message, not at the doorbell.
 */
int nvx_call(struct nvx_uvm_msg *m);

/*
 * Pipelined pair: nvx_submit() publishes @m and rings the doorbell;
 * it returns -1 without doing so when cq_entries requests already wait
 * for nvx_complete(). nvx_complete() returns the next completion in CQ
 * order (0), or -1 if no request is outstanding.
 */
int nvx_submit(const struct nvx_uvm_msg *m);
int nvx_complete(struct nvx_uvm_msg *out);

/* nvx_submit() without the credit check (for tests of the host). */
void nvx_post(const struct nvx_uvm_msg *m);
void nvx_doorbell(void);

/*
 * One message of @type with one bulk segment over @buf/@len (@dir:
 * NVX_UVM_MSGF_PUSH or NVX_UVM_MSGF_PULL; no segment when @len is 0)
 * and @fd in payload[0..3]. The completion is left in @m; returns its
 * status.
 */
int nvx_xfer(unsigned int type, int fd, void *buf, unsigned int len,
	     unsigned int dir, struct nvx_uvm_msg *m);

/* ------------------------------------------------------- services --- */

long write(int fd, const void *buf, unsigned long n);	/* all of it */
long read(int fd, void *buf, unsigned long n);		/* one message */
noreturn void exit(int status);		/* EXIT message, then the port */
noreturn void exit_now(int status);	/* the exit port only */
unsigned long long clock_ns(void);	/* TSC, since boot */
unsigned long long realtime_ns(void);	/* CLOCK message; 0 on error */
const unsigned char *seed(void);	/* NVX_UVM_SEED_SIZE bytes */

/* Bump allocator over free RAM; @align a power of two (0 = 16). */
void *alloc(unsigned long size, unsigned long align);

/* ----------------------------------------------------------- libc --- */

void *memcpy(void *dst, const void *src, unsigned long n);
void *memset(void *dst, int c, unsigned long n);
int memcmp(const void *a, const void *b, unsigned long n);
unsigned long strlen(const char *s);
int strcmp(const char *a, const char *b);
unsigned long strtoul(const char *s, char **end, int base);

/* @v in @base (2..16, lowercase) into @buf (no NUL); returns the length. */
unsigned int fmt_u64(char *buf, unsigned long long v, unsigned int base);
void print(const char *s);			/* to fd 1 */
void print_dec(unsigned long long v);
void print_hex(unsigned long long v);

/* ------------------------------------------------------------ cpu --- */

static inline void cpu_relax(void)
{
	asm volatile("pause" ::: "memory");
}

static inline void port_out8(unsigned short port, unsigned char v)
{
	asm volatile("outb %0, %1" :: "a"(v), "Nd"(port) : "memory");
}

static inline void port_out32(unsigned short port, unsigned int v)
{
	asm volatile("outl %0, %1" :: "a"(v), "Nd"(port) : "memory");
}

static inline unsigned long long rdtsc(void)
{
	unsigned int lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((unsigned long long)hi << 32) | lo;
}

#endif /* NVX_GUEST_RT_H */
