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
/* interrupts taken with IF clear; of them at irq_stub itself (entry.S) */
extern unsigned int irq_if_clear, irq_twice;
/* sti; hlt, safe against an interrupt taken in sti's shadow (entry.S) */
void sti_hlt(void);

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

/* Zero @m and give it @type and a fresh runtime tag. */
void nvx_msg(struct nvx_uvm_msg *m, unsigned int type);

/*
 * nvx_call() of @m (type, dst and payload set by the caller) with
 * @buf/@len as its bulk (@dir: NVX_UVM_MSGF_PUSH or NVX_UVM_MSGF_PULL;
 * no segment when @len is 0), split into @segs segments of nearly equal
 * length (clamped to 1..NVX_UVM_MAX_SG and to @len). A segment may
 * cross pages: one is enough for any buffer; more are for tests of
 * the kernel's scatter/gather. @len must not exceed NVX_UVM_MAX_BULK.
 */
int nvx_call_bulk(struct nvx_uvm_msg *m, void *buf, unsigned int len,
		  unsigned int dir, unsigned int segs);

/*
 * One message of @type with one bulk segment over @buf/@len (@dir:
 * NVX_UVM_MSGF_PUSH or NVX_UVM_MSGF_PULL; no segment when @len is 0)
 * and @fd in payload[0..3] (struct nvx_uvm_fcall.fd). The completion
 * is left in @m; returns its status.
 */
int nvx_xfer(unsigned int type, int fd, void *buf, unsigned int len,
	     unsigned int dir, struct nvx_uvm_msg *m);

/* ------------------------------------------------------- services --- */

long write(int fd, const void *buf, unsigned long n);	/* all of it */
long read(int fd, void *buf, unsigned long n);		/* one message */
noreturn void exit(int status);		/* EXIT message, then the port */
noreturn void exit_now(int status);	/* the exit port only */
unsigned long long clock_ns(void);	/* TSC, since boot */
/*
 * With a vector, interrupts off: hlt until an interrupt or the safety
 * tick. 1 when it woke more than 1 ms before the tick was due (another
 * interrupt woke it), else 0.
 */
int halt(void);
/*
 * After a halt(): @idle, it woke to nothing, and the next safety tick
 * comes later (doubling up to 1 s); else back to 10 ms.
 */
void halt_woke(int idle);
unsigned long long realtime_ns(void);	/* CLOCK message; 0 on error */
const unsigned char *seed(void);	/* NVX_UVM_SEED_SIZE bytes */
/*
 * The READY message: this VM has booted and waits for work. Returns when
 * the system process gives it some (a function server: fd 0 and 1 are a
 * client's connection from now on): 0, or the negative errno (-EPERM:
 * the tenant may not send it; -ECONNRESET: no work will come).
 */
int ready(void);

/*
 * The ready point (NVX_UVM_PORT_READY): where a VMM may freeze this VM
 * into a template. Returns 0 afterwards, in this VM or in each clone of
 * the template, with the control page read again (vm_id, seed, the
 * arguments of rt_args(), rings, clock from 0); -EBUSY, without stopping,
 * while messages are in flight.
 */
int ready_point(void);
int rt_args(char ***argv);	/* the current arguments: argc */

/* Bump allocator over free RAM; @align a power of two (0 = 16). */
void *alloc(unsigned long size, unsigned long align);

/* ---------------------------------------------------------- files --- */

/*
 * File calls, forwarded to the system process (dst 0) as one message
 * each (pread, pwrite: one per NVX_UVM_MAX_BULK bytes) with a struct
 * nvx_uvm_fcall payload. There is no errno: a call that fails returns
 * the negative errno number (-ENOENT), never -1. Paths are resolved
 * beneath the tenant's root by the system process, which checks them.
 */

/* the Linux values, as the system process passes them on */
#define O_RDONLY	00
#define O_WRONLY	01
#define O_RDWR		02
#define O_CREAT		0100
#define O_EXCL		0200
#define O_TRUNC		01000
#define O_APPEND	02000
#define O_DIRECTORY	0200000
#define O_NOFOLLOW	0400000

#define SEEK_SET	0
#define SEEK_CUR	1
#define SEEK_END	2

#define AT_REMOVEDIR	0x200

#define S_IFMT		0170000
#define S_IFDIR		0040000
#define S_IFREG		0100000

#define EPERM		1
#define ENOENT		2
#define ESRCH		3
#define EIO		5
#define EBADF		9
#define EAGAIN		11
#define EACCES		13
#define EBUSY		16
#define EEXIST		17
#define EXDEV		18
#define ENOTDIR		20
#define EISDIR		21
#define EINVAL		22
#define ENOSPC		28
#define ENAMETOOLONG	36
#define ENOTEMPTY	39
#define ELOOP		40
#define EMFILE		24
#define EPIPE		32
#define ENOTSOCK	88
#define EMSGSIZE	90
#define EOPNOTSUPP	95
#define EAFNOSUPPORT	97
#define EADDRINUSE	98
#define ENETUNREACH	101
#define ECONNABORTED	103
#define ECONNRESET	104
#define EISCONN		106
#define ENOTCONN	107
#define ETIMEDOUT	110
#define ECONNREFUSED	111
#define EINPROGRESS	115

/* What getdents64() fills @buf with, as Linux's: @d_reclen bytes each. */
struct linux_dirent64 {
	__u64 d_ino;
	__s64 d_off;
	__u16 d_reclen;
	__u8 d_type;		/* DT_* */
	char d_name[];
};

/*
 * open() strips @path's leading '/' and resolves the rest beneath the
 * tenant root ("/data/x" is data/x there; "/" alone is "."). openat()
 * sends @path as given, relative to @dirfd (NVX_UVM_FD_ROOT: the root),
 * so that the system process is what rejects an absolute one. A path
 * goes with its NUL, however long (up to NVX_UVM_MAX_BULK bytes): the
 * system process judges its length. Both return the new fd.
 */
int open(const char *path, int flags, unsigned int mode);
int openat(int dirfd, const char *path, int flags, unsigned int mode);
int close(int fd);

/* All @n bytes, in as many messages as needed; short at end of file. */
long pread(int fd, void *buf, unsigned long n, unsigned long long off);
long pwrite(int fd, const void *buf, unsigned long n,
	    unsigned long long off);
long long lseek(int fd, long long off, int whence);
int fstat(int fd, struct nvx_uvm_stat *st);
/* One message: at most NVX_UVM_MAX_BULK bytes of whole records. */
long getdents64(int fd, void *buf, unsigned long n);
int ftruncate(int fd, unsigned long long len);
int fsync(int fd);

/* Paths as for open(): beneath the tenant root. */
int mkdir(const char *path, unsigned int mode);
int unlink(const char *path);
int rmdir(const char *path);
int rename(const char *oldp, const char *newp);

/* One message: at most NVX_UVM_MAX_BULK random bytes; returns how many. */
long getrandom(void *buf, unsigned long n);

/* -------------------------------------------------------- sockets --- */

/*
 * Socket calls, forwarded to the system process, which holds a real
 * socket of the tenant's network namespace for each (see uvm.h and
 * Documentation/nvx/uvm-sys.rst, "Sockets"). A socket's fd comes from
 * the same table as files: read(), write() and close() work on it too.
 * Errors are negative errnos, as for files; connect() to an address the
 * tenant's egress policy refuses is -ENETUNREACH. Each call blocks this
 * guest (never the system process or another VM) unless it passes
 * MSG_DONTWAIT where it takes flags.
 */

#define AF_INET		NVX_UVM_AF_INET
#define AF_INET6	NVX_UVM_AF_INET6
#define SOCK_STREAM	NVX_UVM_SOCK_STREAM
#define SOCK_DGRAM	NVX_UVM_SOCK_DGRAM

/* accept(), send(), recv() flags */
#define MSG_DONTWAIT	NVX_UVM_SOCK_NONBLOCK	/* -EAGAIN, not a wait */
#define MSG_PEEK	NVX_UVM_SOCK_PEEK	/* recv() only */

#define SHUT_RD		0
#define SHUT_WR		1
#define SHUT_RDWR	2

#define POLLIN		0x01
#define POLLPRI		0x02
#define POLLOUT		0x04
#define POLLERR		0x08
#define POLLHUP		0x10
#define POLLNVAL	0x20

/* @domain AF_INET or AF_INET6, @type SOCK_STREAM or SOCK_DGRAM: the fd */
int socket(int domain, int type);
int bind(int fd, const struct nvx_uvm_sockaddr *addr);
int listen(int fd, int backlog);
/* The new connection's fd; its peer's address into @peer unless NULL. */
int accept(int fd, struct nvx_uvm_sockaddr *peer, unsigned int flags);
int connect(int fd, const struct nvx_uvm_sockaddr *addr);
/*
 * send(): all of @n bytes (MSG_DONTWAIT: what fits now), in messages of
 * at most NVX_UVM_MAX_BULK bytes: the bytes sent; an error only when
 * none was. recv(): one message, at most min(@n, NVX_UVM_MAX_BULK)
 * bytes: the bytes received, 0 at the end of the stream.
 */
long send(int fd, const void *buf, unsigned long n, unsigned int flags);
long recv(int fd, void *buf, unsigned long n, unsigned int flags);
int shutdown(int fd, int how);
/*
 * Wait at most @timeout_ms (negative: no limit) until one of the @n
 * (at most NVX_UVM_POLL_MAX) entries of @fds (pad 0) has one of its
 * events: the number of entries with revents (0 on timeout), each one's
 * in @revents[i] (POLLIN .. POLLNVAL; POLLNVAL: not a socket of this VM).
 */
int poll(const struct nvx_uvm_pollfd *fds, unsigned int n, int timeout_ms,
	 unsigned char *revents);

/*
 * inet_pton4() parses dotted-quad IPv4 @s ("127.0.0.1": four decimal
 * numbers 0..255, nothing after) into @addr (network order): 0 or
 * -EINVAL. sockaddr4() makes an AF_INET address of it and @port.
 */
int inet_pton4(const char *s, unsigned char addr[4]);
int sockaddr4(struct nvx_uvm_sockaddr *sa, const char *ip,
	      unsigned int port);

/* ---------------------------------------------------- VM-to-VM --- */

/*
 * vm_send() sends an NVX_UVM_MSG_IPC message to VM @dst of the same
 * endpoint (0: the system process) and waits for its completion: it
 * comes when @dst's RECV took it. @payload: NVX_UVM_PAYLOAD bytes, or
 * NULL for zeros. @buf/@len (at most NVX_UVM_MAX_BULK, one segment; no
 * segment when @len is 0): PUSH data for the receiver, or with
 * NVX_UVM_MSGF_PULL room for the data the receiver offers. The
 * completion (bulk_len: bytes moved; payload: the RECV's) is copied to
 * @done unless it is NULL. Returns its status: 0, -EPERM, -ESRCH,
 * -ECONNRESET or -EINVAL (see uvm.h), or a policy limit's error.
 *
 * vm_recv() posts a RECV and waits for the next message sent to this
 * VM: @buf/@len is PULL room for a PUSH sender's data, or PUSH data
 * offered to a PULL sender; @payload (or zeros) goes to the sender.
 * @done gets the completion: src_vm is the sender, payload its
 * payload, bulk_len the bytes moved.
 */
int vm_send(unsigned int dst, const void *payload, void *buf,
	    unsigned int len, unsigned int dir, struct nvx_uvm_msg *done);
int vm_recv(void *buf, unsigned int len, unsigned int dir,
	    const void *payload, struct nvx_uvm_msg *done);

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
