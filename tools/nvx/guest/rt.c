// SPDX-License-Identifier: GPL-2.0
/*
 * nvx guest runtime: boot (IDT, LAPIC, arguments, heap), the guest side
 * of the ring protocol of include/uapi/nvx/uvm.h, the services built on
 * it (write, read, exit, clock, the file calls, sockets, VM-to-VM
 * messages) and a few libc pieces.
 *
 * Ring rules kept here: every submission gets exactly one completion;
 * at most cq_entries may be unconsumed; the CQ entry at cq_cons is valid
 * once ctrl->cq_prod (kernel, release) has moved past it; a consumed
 * completion gives back one credit (atomic decrement) and then moves
 * ctrl->cq_cons (release).
 */
#include "rt.h"
#include "../lib/nvx_vmnet.h"

#define LAPIC_SVR	0xfee000f0UL
#define LAPIC_LVT_TIMER	0xfee00320UL
#define LAPIC_TMR_INIT	0xfee00380UL
#define LAPIC_TMR_DIV	0xfee003e0UL
#define TICK_VECTOR	0xf0
#define TICK_COUNT_MS	1000000		/* 1 ms at KVM's 1 GHz APIC bus */
#define TICK_MS		10
#define TICK_MAX_MS	1000
#if TICK_MAX_MS > 0xffffffffU / TICK_COUNT_MS
#error "the longest tick overflows the APIC timer's initial count"
#endif
#define SPIN_POLLS	200		/* polls of the CQ before sleeping */
#define POLLED_SPIN_US	2000		/* and while the SQ is polled */
#define BAD_CTRL	0x200		/* exit status: no valid ctrl page */
#define MAPPED_END	(4ULL << 30)	/* the VMM maps the first 4 GiB */

struct idt_gate {
	__u16 off_lo;
	__u16 sel;
	__u8 ist;
	__u8 type;
	__u16 off_mid;
	__u32 off_hi;
	__u32 zero;
};

static struct idt_gate idt[256] __aligned(16);

static struct nvx_uvm_ctrl *cp;
static struct nvx_uvm_msg *sq, *cq;
static __u32 sq_n, cq_n;
static __u32 sq_prod, cq_cons;	/* ours; ctrl's copies are for the kernel */
static __u32 ring_out;		/* submitted, not yet taken from the CQ */
static __u32 user_out;		/* nvx_post()ed, not yet nvx_complete()d */
static __u32 next_tag;
static int use_irq;

/* completions taken from the CQ by nvx_call() for nvx_complete() */
static struct nvx_uvm_msg stash[NVX_UVM_MAX_ENTRIES];
static __u32 stash_head, stash_tail;

static unsigned long long tsc0, tsc_khz;
static unsigned long long tick_end;	/* TSC when the armed tick fires */
static unsigned int tick_ms = TICK_MS;	/* the next tick's period */
static unsigned long heap, heap_end;

static char argbuf[NVX_UVM_ARGS_SIZE + 1];
static char *argv[NVX_UVM_ARGS_SIZE + 1];
static unsigned int argc;

/* ---------------------------------------------------------- rings --- */

struct nvx_uvm_ctrl *ctrl(void)
{
	return cp;
}

unsigned int nvx_tag(void)
{
	return NVX_RT_TAG | (next_tag++ & ~NVX_RT_TAG);
}

void nvx_doorbell(void)
{
	port_out32(NVX_UVM_PORT_DOORBELL, 0);
}

/*
 * Ring, unless the endpoint's poller is awake and scans our SQ. The
 * fence orders our store of sq_prod before our load of sq_flags; the
 * poller stores sq_flags, fences, then loads sq_prod before it sleeps:
 * one of us sees the other (Documentation/nvx/uvm.rst, "The poller").
 */
static void kick(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&cp->sq_flags, __ATOMIC_RELAXED) &
	      NVX_UVM_SQ_POLLED))
		nvx_doorbell();
}

/* Publish one SQ entry and ring; the kernel takes it during the out. */
static void post(const struct nvx_uvm_msg *m)
{
	/* The kernel drains the SQ on every doorbell: room is the rule. */
	while (sq_prod - __atomic_load_n(&cp->sq_cons, __ATOMIC_ACQUIRE) >=
	       sq_n) {
		kick();
		cpu_relax();
	}
	sq[sq_prod & (sq_n - 1)] = *m;
	sq_prod++;
	__atomic_store_n(&cp->sq_prod, sq_prod, __ATOMIC_RELEASE);
	kick();
	ring_out++;
}

static int cq_ready(void)
{
	return __atomic_load_n(&cp->cq_prod, __ATOMIC_ACQUIRE) != cq_cons;
}

static int sq_polled(void)
{
	return __atomic_load_n(&cp->sq_flags, __ATOMIC_RELAXED) &
	       NVX_UVM_SQ_POLLED;
}

/*
 * Poll the CQ SPIN_POLLS times, and while a poller scans our SQ for up
 * to POLLED_SPIN_US more: a guest that spins takes no exit and is sent
 * no interrupt. Returns 1 when a completion came.
 */
static int cq_spin(void)
{
	unsigned long long end = 0;
	int i;

	for (i = 0; ; i++) {
		if (cq_ready())
			return 1;
		cpu_relax();
		if (i < SPIN_POLLS)
			continue;
		if (!sq_polled())
			return 0;
		if (!end)
			end = rdtsc() + tsc_khz * POLLED_SPIN_US / 1000;
		else if (rdtsc() >= end)
			return 0;
	}
}

static void lapic_write(unsigned long reg, __u32 v)
{
	asm volatile("movl %0, (%1)" :: "r"(v), "r"(reg) : "memory");
}

/*
 * The safety tick: a one-shot local APIC timer, armed only before a hlt
 * and only when none is pending soon enough, to wake a halted guest
 * whose completion interrupt never arrives. Under nested KVM in QEMU
 * TCG a guest was seen not to continue after KVM had injected its
 * completion interrupt (one cause found since: an interrupt taken
 * inside sti's shadow, which sti_hlt() survives now; others may
 * remain); with the tick such a stall costs at most the tick's period.
 * Arming is a trapped APIC write, so a guest that halts often arms at
 * most once per period, and one that only polls never does (a periodic
 * tick cost an exit and an EOI 100 times a second, polling or not). The
 * period is 10 ms while completions come, and doubles, up to 1 s, each
 * time the guest woke to find nothing (tick_idle()): a VM idle for
 * long, waiting for a request or a reply that takes its time, wakes
 * about once a second, not 100 times (a thousand idle VMs on a host).
 * The tick's vector goes to irq_stub like any. Interrupts are off.
 */
static void tick_arm(void)
{
	unsigned long long now = rdtsc();

	/*
	 * One due in 1 ms to one period from now is kept; a later one (a
	 * longer period, before a completion reset it) is re-armed. The
	 * 1 ms margin: the APIC timer and the TSC need not agree exactly.
	 */
	if (now + tsc_khz < tick_end && tick_end <= now + tsc_khz * tick_ms)
		return;
	lapic_write(LAPIC_TMR_INIT, TICK_COUNT_MS * tick_ms);
	tick_end = now + tsc_khz * tick_ms;
}

/* A wake-up found nothing to do: the next tick comes later. */
static void tick_idle(void)
{
	tick_ms = tick_ms * 2 > TICK_MAX_MS ? TICK_MAX_MS : tick_ms * 2;
}

void halt_woke(int idle)
{
	if (idle)
		tick_idle();
	else
		tick_ms = TICK_MS;
}

int halt(void)
{
	tick_arm();
	sti_hlt();
	asm volatile("cli" ::: "memory");
	/* the same 1 ms of margin as tick_arm()'s */
	return rdtsc() + tsc_khz < tick_end;
}

/*
 * Wait until the CQ entry at cq_cons is written: poll a little, then
 * ask for the interrupt and halt. cli before WANT_IRQ and sti_hlt() (one
 * step for interrupts, entry.S) close the race with a completion posted
 * between the check and the hlt; the locked or is the full barrier between our
 * flag store and our loads of credits/cq_prod.
 */
static void cq_wait(void)
{
	for (;;) {
		if (cq_spin()) {
			tick_ms = TICK_MS;
			return;
		}
		if (!use_irq)
			continue;
		asm volatile("cli" ::: "memory");
		__atomic_fetch_or(&cp->flags, NVX_UVM_CTRL_WANT_IRQ,
				  __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&cp->credits, __ATOMIC_SEQ_CST) &&
		    !cq_ready()) {
			tick_arm();
			sti_hlt();
			if (!cq_ready())
				tick_idle();
		} else {
			asm volatile("sti" ::: "memory");
		}
		__atomic_fetch_and(&cp->flags, ~NVX_UVM_CTRL_WANT_IRQ,
				   __ATOMIC_SEQ_CST);
	}
}

/* Take the next completion from the CQ (waiting for it). */
static void cq_take(struct nvx_uvm_msg *out)
{
	cq_wait();
	*out = cq[cq_cons & (cq_n - 1)];
	__atomic_fetch_sub(&cp->credits, 1, __ATOMIC_SEQ_CST);
	cq_cons++;
	__atomic_store_n(&cp->cq_cons, cq_cons, __ATOMIC_RELEASE);
	ring_out--;
}

static void stash_put(void)
{
	cq_take(&stash[stash_tail++ & (NVX_UVM_MAX_ENTRIES - 1)]);
}

void nvx_post(const struct nvx_uvm_msg *m)
{
	post(m);
	user_out++;
}

int nvx_submit(const struct nvx_uvm_msg *m)
{
	if (user_out >= cq_n)
		return -1;
	nvx_post(m);
	return 0;
}

int nvx_complete(struct nvx_uvm_msg *out)
{
	if (!user_out)
		return -1;
	if (stash_head != stash_tail)
		*out = stash[stash_head++ & (NVX_UVM_MAX_ENTRIES - 1)];
	else
		cq_take(out);
	user_out--;
	return 0;
}

int nvx_call(struct nvx_uvm_msg *m)
{
	struct nvx_uvm_msg c;

	/* no credit left: park a pipelined completion to make room */
	while (ring_out >= cq_n)
		stash_put();
	post(m);
	for (;;) {
		cq_take(&c);
		if (c.tag == m->tag)
			break;
		stash[stash_tail++ & (NVX_UVM_MAX_ENTRIES - 1)] = c;
	}
	*m = c;
	return c.status;
}

void nvx_msg(struct nvx_uvm_msg *m, unsigned int type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->tag = nvx_tag();
}

static void put_u32(__u8 *p, __u32 v)
{
	memcpy(p, &v, sizeof(v));	/* x86: little-endian already */
}

/* @m with the @nr segments at @sg (read at the doorbell) */
static int call_sg(struct nvx_uvm_msg *m, struct nvx_uvm_sg *sg,
		   unsigned int nr, unsigned int dir)
{
	if (nr) {
		m->flags = dir;
		m->sg_gpa = (unsigned long)sg;	/* identity mapped */
		m->sg_nr = nr;
	}
	return nvx_call(m);
}

int nvx_call_bulk(struct nvx_uvm_msg *m, void *buf, unsigned int len,
		  unsigned int dir, unsigned int segs)
{
	struct nvx_uvm_sg sg[NVX_UVM_MAX_SG] __aligned(16);
	unsigned long gpa = (unsigned long)buf;
	unsigned int i, n;

	if (segs > NVX_UVM_MAX_SG)
		segs = NVX_UVM_MAX_SG;
	if (segs > len)
		segs = len;
	if (!segs && len)
		segs = 1;
	for (i = 0; i < segs; i++) {
		n = len / segs + (i < len % segs);
		sg[i].gpa = gpa;
		sg[i].len = n;
		sg[i].flags = 0;
		gpa += n;
	}
	return call_sg(m, sg, segs, dir);
}

int nvx_xfer(unsigned int type, int fd, void *buf, unsigned int len,
	     unsigned int dir, struct nvx_uvm_msg *m)
{
	nvx_msg(m, type);
	put_u32(m->payload, fd);
	return nvx_call_bulk(m, buf, len, dir, 1);
}

/* ------------------------------------------------------- services --- */

long write(int fd, const void *buf, unsigned long n)
{
	unsigned long done = 0, len;
	struct nvx_uvm_msg m;
	int st;

	while (done < n) {
		len = n - done;
		if (len > NVX_UVM_MAX_BULK)
			len = NVX_UVM_MAX_BULK;
		st = nvx_xfer(NVX_UVM_MSG_WRITE, fd, (char *)buf + done, len,
			      NVX_UVM_MSGF_PUSH, &m);
		/* bulk_len is what the kernel moved, written or not */
		if (st < 0)
			return done ? (long)done : st;
		if (m.bulk_len > len)
			m.bulk_len = len;
		done += m.bulk_len;
		if (!m.bulk_len)
			break;
	}
	return done;
}

long read(int fd, void *buf, unsigned long n)
{
	struct nvx_uvm_msg m;
	int st;

	if (n > NVX_UVM_MAX_BULK)
		n = NVX_UVM_MAX_BULK;
	st = nvx_xfer(NVX_UVM_MSG_READ, fd, buf, n, NVX_UVM_MSGF_PULL, &m);
	if (st < 0)
		return st;
	return m.bulk_len < n ? m.bulk_len : n;
}

void exit_now(int status)
{
	port_out32(NVX_UVM_PORT_EXIT, status);
	for (;;)
		asm volatile("cli; hlt" ::: "memory");
}

/*
 * Interrupts taken with interrupts off (entry.S, irq_stub), and of them
 * those taken at irq_stub's own first instruction: none on a real CPU.
 * Kept for whoever reads the guest's memory (a debugger, a dump).
 */
unsigned int irq_if_clear, irq_twice;

void exit(int status)
{
	struct nvx_uvm_msg m;

	nvx_msg(&m, NVX_UVM_MSG_EXIT);
	put_u32(m.payload, status);
	nvx_call(&m);
	exit_now(status);
}

int ready(void)
{
	struct nvx_uvm_msg m;

	nvx_msg(&m, NVX_UVM_MSG_READY);
	return nvx_call(&m);
}

unsigned long long clock_ns(void)
{
	unsigned long long t = rdtsc() - tsc0;

	return t / tsc_khz * 1000000 + t % tsc_khz * 1000000 / tsc_khz;
}

unsigned long long realtime_ns(void)
{
	struct nvx_uvm_msg m;
	unsigned long long ns;

	nvx_msg(&m, NVX_UVM_MSG_CLOCK);
	if (nvx_call(&m) < 0)
		return 0;
	memcpy(&ns, m.payload, sizeof(ns));
	return ns;
}

const unsigned char *seed(void)
{
	return cp->seed;
}

void *alloc(unsigned long size, unsigned long align)
{
	unsigned long p;

	if (!align)
		align = 16;
	p = (heap + align - 1) & ~(align - 1);
	if (p < heap || p > heap_end || size > heap_end - p)
		return NULL;
	heap = p + size;
	return (void *)p;
}

/* ---------------------------------------------------------- files --- */

static unsigned int min_bulk(unsigned long n)
{
	return n < NVX_UVM_MAX_BULK ? n : NVX_UVM_MAX_BULK;
}

/*
 * One file call: @fc is the payload going out and, on success, the
 * reply's coming back. Returns the status; the completion is in @m.
 */
static int fcall(unsigned int type, struct nvx_uvm_fcall *fc, void *buf,
		 unsigned int len, unsigned int dir, struct nvx_uvm_msg *m)
{
	int st;

	nvx_msg(m, type);
	memcpy(m->payload, fc, sizeof(*fc));
	st = nvx_call_bulk(m, buf, len, dir, 1);
	if (!st)
		memcpy(fc, m->payload, sizeof(*fc));
	if (m->bulk_len > len)
		m->bulk_len = len;	/* never trust more than we offered */
	return st;
}

/* the fd-only calls: CLOSE, FSYNC, FTRUNCATE */
static int fd_call(unsigned int type, int fd, unsigned long long arg)
{
	struct nvx_uvm_fcall fc = { .fd = fd, .arg = arg };
	struct nvx_uvm_msg m;

	return fcall(type, &fc, NULL, 0, 0, &m);
}

/* @path: the leading '/'s of an absolute path off; "/" is "." */
static const char *beneath_root(const char *path)
{
	if (*path != '/')
		return path;
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

/* A path call: @path with its NUL, however long, as PUSH. */
static int path_call(unsigned int type, struct nvx_uvm_fcall *fc,
		     const char *path)
{
	struct nvx_uvm_msg m;

	return fcall(type, fc, (char *)path, min_bulk(strlen(path) + 1),
		     NVX_UVM_MSGF_PUSH, &m);
}

int openat(int dirfd, const char *path, int flags, unsigned int mode)
{
	struct nvx_uvm_fcall fc = { .fd = dirfd, .flags = flags, .arg = mode };
	int st = path_call(NVX_UVM_MSG_OPENAT, &fc, path);

	return st < 0 ? st : (int)fc.ret;
}

int open(const char *path, int flags, unsigned int mode)
{
	return openat(NVX_UVM_FD_ROOT, beneath_root(path), flags, mode);
}

int close(int fd)
{
	return fd_call(NVX_UVM_MSG_CLOSE, fd, 0);
}

/* PREAD or PWRITE: all of @n unless a message moves less than asked */
static long prw(unsigned int type, int fd, void *buf, unsigned long n,
		unsigned long long off)
{
	unsigned int dir = type == NVX_UVM_MSG_PREAD ? NVX_UVM_MSGF_PULL :
						       NVX_UVM_MSGF_PUSH;
	struct nvx_uvm_fcall fc;
	struct nvx_uvm_msg m;
	unsigned long done = 0;
	unsigned int len;
	int st;

	do {
		len = min_bulk(n - done);
		fc = (struct nvx_uvm_fcall){ .fd = fd, .arg = off + done };
		st = fcall(type, &fc, (char *)buf + done, len, dir, &m);
		if (st < 0)
			return done ? (long)done : st;
		done += m.bulk_len;
	} while (done < n && m.bulk_len == len);
	return done;
}

long pread(int fd, void *buf, unsigned long n, unsigned long long off)
{
	return prw(NVX_UVM_MSG_PREAD, fd, buf, n, off);
}

long pwrite(int fd, const void *buf, unsigned long n, unsigned long long off)
{
	return prw(NVX_UVM_MSG_PWRITE, fd, (void *)buf, n, off);
}

long long lseek(int fd, long long off, int whence)
{
	struct nvx_uvm_fcall fc = { .fd = fd, .flags = whence, .arg = off };
	struct nvx_uvm_msg m;
	int st = fcall(NVX_UVM_MSG_LSEEK, &fc, NULL, 0, 0, &m);

	return st < 0 ? st : fc.ret;
}

int fstat(int fd, struct nvx_uvm_stat *st)
{
	struct nvx_uvm_fcall fc = { .fd = fd };
	struct nvx_uvm_msg m;
	int ret = fcall(NVX_UVM_MSG_FSTAT, &fc, st, sizeof(*st),
			NVX_UVM_MSGF_PULL, &m);

	if (!ret && m.bulk_len != sizeof(*st))
		ret = -EIO;
	return ret;
}

long getdents64(int fd, void *buf, unsigned long n)
{
	struct nvx_uvm_fcall fc = { .fd = fd };
	struct nvx_uvm_msg m;
	int st = fcall(NVX_UVM_MSG_GETDENTS, &fc, buf, min_bulk(n),
		       NVX_UVM_MSGF_PULL, &m);

	return st < 0 ? st : (long)m.bulk_len;
}

int ftruncate(int fd, unsigned long long len)
{
	return fd_call(NVX_UVM_MSG_FTRUNCATE, fd, len);
}

int fsync(int fd)
{
	return fd_call(NVX_UVM_MSG_FSYNC, fd, 0);
}

int mkdir(const char *path, unsigned int mode)
{
	struct nvx_uvm_fcall fc = { .fd = NVX_UVM_FD_ROOT, .arg = mode };

	return path_call(NVX_UVM_MSG_MKDIR, &fc, beneath_root(path));
}

static int unlink_flags(const char *path, unsigned int flags)
{
	struct nvx_uvm_fcall fc = { .fd = NVX_UVM_FD_ROOT, .flags = flags };

	return path_call(NVX_UVM_MSG_UNLINK, &fc, beneath_root(path));
}

int unlink(const char *path)
{
	return unlink_flags(path, 0);
}

int rmdir(const char *path)
{
	return unlink_flags(path, AT_REMOVEDIR);
}

/* "old\0new\0" as two segments, one per name */
int rename(const char *oldp, const char *newp)
{
	const char *o = beneath_root(oldp), *n = beneath_root(newp);
	struct nvx_uvm_fcall fc = { .fd = NVX_UVM_FD_ROOT,
				    .flags = NVX_UVM_FD_ROOT };
	struct nvx_uvm_sg sg[2] __aligned(16) = {
		{ .gpa = (unsigned long)o, .len = strlen(o) + 1 },
		{ .gpa = (unsigned long)n, .len = strlen(n) + 1 },
	};
	struct nvx_uvm_msg m;

	if (sg[0].len + sg[1].len > NVX_UVM_MAX_BULK)
		return -ENAMETOOLONG;
	nvx_msg(&m, NVX_UVM_MSG_RENAME);
	memcpy(m.payload, &fc, sizeof(fc));
	return call_sg(&m, sg, 2, NVX_UVM_MSGF_PUSH);
}

long getrandom(void *buf, unsigned long n)
{
	struct nvx_uvm_fcall fc = { 0 };
	struct nvx_uvm_msg m;
	int st = fcall(NVX_UVM_MSG_GETRANDOM, &fc, buf, min_bulk(n),
		       NVX_UVM_MSGF_PULL, &m);

	return st < 0 ? st : (long)m.bulk_len;
}

/* -------------------------------------------------------- sockets --- */

int socket(int domain, int type)
{
	struct nvx_uvm_fcall fc = { .flags = type, .arg = domain };
	struct nvx_uvm_msg m;
	int st = fcall(NVX_UVM_MSG_SOCKET, &fc, NULL, 0, 0, &m);

	return st < 0 ? st : (int)fc.ret;
}

/* BIND, CONNECT: @addr as PUSH */
static int addr_call(unsigned int type, int fd,
		     const struct nvx_uvm_sockaddr *addr)
{
	struct nvx_uvm_fcall fc = { .fd = fd };
	struct nvx_uvm_msg m;

	return fcall(type, &fc, (void *)addr, sizeof(*addr),
		     NVX_UVM_MSGF_PUSH, &m);
}

int bind(int fd, const struct nvx_uvm_sockaddr *addr)
{
	return addr_call(NVX_UVM_MSG_BIND, fd, addr);
}

int connect(int fd, const struct nvx_uvm_sockaddr *addr)
{
	return addr_call(NVX_UVM_MSG_CONNECT, fd, addr);
}

int listen(int fd, int backlog)
{
	return fd_call(NVX_UVM_MSG_LISTEN, fd, backlog < 0 ? 0 : backlog);
}

int accept(int fd, struct nvx_uvm_sockaddr *peer, unsigned int flags)
{
	struct nvx_uvm_fcall fc = { .fd = fd, .flags = flags };
	struct nvx_uvm_sockaddr a;
	struct nvx_uvm_msg m;
	int st = fcall(NVX_UVM_MSG_ACCEPT, &fc, &a, sizeof(a),
		       NVX_UVM_MSGF_PULL, &m);

	if (st < 0)
		return st;
	if (peer) {
		if (m.bulk_len != sizeof(a))
			memset(&a, 0, sizeof(a));
		*peer = a;
	}
	return fc.ret;
}

long send(int fd, const void *buf, unsigned long n, unsigned int flags)
{
	struct nvx_uvm_fcall fc;
	struct nvx_uvm_msg m;
	unsigned long done = 0;
	unsigned int len;
	int st;

	/* at least one message: a datagram may be empty */
	do {
		len = min_bulk(n - done);
		fc = (struct nvx_uvm_fcall){ .fd = fd, .flags = flags };
		st = fcall(NVX_UVM_MSG_SEND, &fc, (char *)buf + done, len,
			   NVX_UVM_MSGF_PUSH, &m);
		if (st < 0)
			return done ? (long)done : st;
		if (fc.ret < 0 || fc.ret > len)
			return done ? (long)done : -EIO;
		done += fc.ret;
	} while (done < n && fc.ret == len);
	return done;
}

long recv(int fd, void *buf, unsigned long n, unsigned int flags)
{
	struct nvx_uvm_fcall fc = { .fd = fd, .flags = flags };
	struct nvx_uvm_msg m;
	int st = fcall(NVX_UVM_MSG_SOCKRECV, &fc, buf, min_bulk(n),
		       NVX_UVM_MSGF_PULL, &m);

	return st < 0 ? st : (long)m.bulk_len;
}

int shutdown(int fd, int how)
{
	struct nvx_uvm_fcall fc = { .fd = fd, .flags = how };
	struct nvx_uvm_msg m;

	return fcall(NVX_UVM_MSG_SHUTDOWN, &fc, NULL, 0, 0, &m);
}

int poll(const struct nvx_uvm_pollfd *fds, unsigned int n, int timeout_ms,
	 unsigned char *revents)
{
	struct nvx_uvm_fcall fc = { .arg = (long long)timeout_ms };
	struct nvx_uvm_msg m;
	unsigned int i;
	int st;

	nvx_msg(&m, NVX_UVM_MSG_POLL);
	memcpy(m.payload, &fc, sizeof(fc));
	st = nvx_call_bulk(&m, (void *)fds, min_bulk(n * sizeof(*fds)),
			   NVX_UVM_MSGF_PUSH, 1);
	for (i = 0; revents && i < n; i++)
		revents[i] = st >= 0 && i < NVX_UVM_PAYLOAD ? m.payload[i] : 0;
	return st;
}

int inet_pton4(const char *s, unsigned char addr[4])
{
	unsigned int i, v, digits;

	for (i = 0; i < 4; i++) {
		if (i && *s++ != '.')
			return -EINVAL;
		for (v = 0, digits = 0; *s >= '0' && *s <= '9'; s++) {
			v = v * 10 + *s - '0';
			if (++digits > 3 || v > 255)
				return -EINVAL;
		}
		if (!digits)
			return -EINVAL;
		addr[i] = v;
	}
	return *s ? -EINVAL : 0;
}

int sockaddr4(struct nvx_uvm_sockaddr *sa, const char *ip, unsigned int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->family = NVX_UVM_AF_INET;
	sa->port = port;
	return port > 0xffff ? -EINVAL : inet_pton4(ip, sa->addr);
}

/* ------------------------------------------------------- VM-to-VM --- */

static int vm_call(unsigned int type, unsigned int dst, const void *payload,
		   void *buf, unsigned int len, unsigned int dir,
		   struct nvx_uvm_msg *done)
{
	struct nvx_uvm_msg m;
	int st;

	nvx_msg(&m, type);
	m.dst = dst;
	if (payload)
		memcpy(m.payload, payload, NVX_UVM_PAYLOAD);
	st = nvx_call_bulk(&m, buf, len, dir, 1);
	if (done)
		*done = m;
	return st;
}

int vm_send(unsigned int dst, const void *payload, void *buf,
	    unsigned int len, unsigned int dir, struct nvx_uvm_msg *done)
{
	return vm_call(NVX_UVM_MSG_IPC, dst, payload, buf, len, dir, done);
}

int vm_recv(void *buf, unsigned int len, unsigned int dir,
	    const void *payload, struct nvx_uvm_msg *done)
{
	return vm_call(NVX_UVM_MSG_RECV, 0, payload, buf, len, dir, done);
}

/* ----------------------------------------------------------- libc --- */

/* In asm: gcc may turn a C loop here into a call to itself. */
void *memcpy(void *dst, const void *src, unsigned long n)
{
	void *d = dst;

	asm volatile("rep movsb"
		     : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

void *memset(void *dst, int c, unsigned long n)
{
	void *d = dst;

	asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, unsigned long n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

unsigned long strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return p - s;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

static int digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* base 0: 0x prefix = 16, else 10 (no octal); no sign, no overflow check */
unsigned long strtoul(const char *s, char **end, int base)
{
	unsigned long v = 0;
	int d;

	while (*s == ' ' || *s == '\t')
		s++;
	if ((base == 0 || base == 16) && s[0] == '0' &&
	    (s[1] == 'x' || s[1] == 'X') && digit(s[2]) < 16) {
		s += 2;
		base = 16;
	} else if (base == 0) {
		base = 10;
	}
	for (; (d = digit(*s)) < base; s++)
		v = v * base + d;
	if (end)
		*end = (char *)s;
	return v;
}

unsigned int fmt_u64(char *buf, unsigned long long v, unsigned int base)
{
	char tmp[64];
	unsigned int n = 0, i;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

void print(const char *s)
{
	write(1, s, strlen(s));
}

void print_dec(unsigned long long v)
{
	char buf[20];

	write(1, buf, fmt_u64(buf, v, 10));
}

void print_hex(unsigned long long v)
{
	char buf[16];

	write(1, buf, fmt_u64(buf, v, 16));
}

/* ----------------------------------------------------------- boot --- */

static void set_gate(int vec, void *handler)
{
	unsigned long a = (unsigned long)handler;

	idt[vec].off_lo = a;
	idt[vec].sel = 0x08;			/* the VMM's 64-bit code */
	idt[vec].type = 0x8e;			/* present, interrupt gate */
	idt[vec].off_mid = a >> 16;
	idt[vec].off_hi = a >> 32;
}

static void idt_init(void)
{
	struct {
		__u16 limit;
		__u64 base;
	} __packed d;
	unsigned long svr = LAPIC_SVR;
	int v;

	for (v = 0; v < 32; v++)
		set_gate(v, exc_stubs + 16 * v);
	for (; v < 255; v++)
		set_gate(v, irq_stub);
	set_gate(255, spurious_stub);
	d.limit = sizeof(idt) - 1;
	d.base = (unsigned long)idt;
	asm volatile("lidt %0" :: "m"(d) : "memory");
	/* software-enable the LAPIC, spurious vector 0xff */
	asm volatile("movl %0, (%1)" :: "r"(0x1ff), "r"(svr) : "memory");
}

/* The safety tick's mode: one-shot (tick_arm() starts it), divide by 1. */
static void tick_init(void)
{
	lapic_write(LAPIC_TMR_DIV, 0xb);
	lapic_write(LAPIC_LVT_TIMER, TICK_VECTOR);
}

static int ring_ok(__u32 n)
{
	return n && n <= NVX_UVM_MAX_ENTRIES && !(n & (n - 1));
}

/* Keep the heap off a ring the VMM may have put above the image. */
static void heap_skip(unsigned long gpa, unsigned long len)
{
	if (gpa + len > heap && gpa < heap_end)
		heap = (gpa + len + 4095) & ~4095UL;
}

/* The network's area (net.c) is the NIC's and the TX ring's: the heap ends there. */
static void heap_below_net(void)
{
	const struct nvx_vmnet_info *ni = (const void *)NVX_VMNET_INFO_GPA;

	if (ni->magic == NVX_VMNET_MAGIC && ni->area_gpa < heap_end)
		heap_end = ni->area_gpa > heap ? ni->area_gpa : heap;
}

/*
 * What the runtime takes from the control page: at boot, and again after
 * the ready point, where a clone resumes with its own identity, arguments
 * and rings (indexes from 0) and its own TSC (the clock starts again).
 */
static void rt_sync(struct nvx_uvm_ctrl *c)
{
	char *p;

	tsc0 = rdtsc();
	tick_end = 0;
	tick_ms = TICK_MS;
	tsc_khz = c->tsc_khz ? c->tsc_khz : 1000000;
	sq = (struct nvx_uvm_msg *)(unsigned long)c->sq_gpa;
	cq = (struct nvx_uvm_msg *)(unsigned long)c->cq_gpa;
	sq_n = c->sq_entries;
	cq_n = c->cq_entries;
	sq_prod = c->sq_prod;
	cq_cons = c->cq_cons;
	/* no vector: nothing would wake a hlt, so only poll */
	use_irq = c->irq_vector >= 32 && c->irq_vector < 255;
	if (use_irq)
		tick_init();
	__atomic_fetch_and(&c->flags, ~NVX_UVM_CTRL_WANT_IRQ,
			   __ATOMIC_SEQ_CST);

	memcpy(argbuf, c->args, NVX_UVM_ARGS_SIZE);
	p = argbuf;
	for (argc = 0; argc < c->argc && p < argbuf + NVX_UVM_ARGS_SIZE;
	     argc++) {
		argv[argc] = p;
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;
}

int ready_point(void)
{
	if (ring_out || user_out)
		return -EBUSY;
	port_out32(NVX_UVM_PORT_READY, 0);
	if (cp->magic != NVX_UVM_CTRL_MAGIC || !ring_ok(cp->sq_entries) ||
	    !ring_ok(cp->cq_entries))
		exit_now(BAD_CTRL);
	rt_sync(cp);
	return 0;
}

int rt_args(char ***out)
{
	*out = argv;
	return argc;
}

noreturn void rt_start(struct nvx_uvm_ctrl *c);

noreturn void rt_start(struct nvx_uvm_ctrl *c)
{
	cp = c;
	idt_init();
	if (c->magic != NVX_UVM_CTRL_MAGIC || !ring_ok(c->sq_entries) ||
	    !ring_ok(c->cq_entries))
		exit_now(BAD_CTRL);
	rt_sync(c);

	heap = ((unsigned long)_end + 4095) & ~4095UL;
	heap_end = c->mem_size < MAPPED_END ? c->mem_size : MAPPED_END;
	heap_skip(c->sq_gpa, sq_n * sizeof(struct nvx_uvm_msg));
	heap_skip(c->cq_gpa, cq_n * sizeof(struct nvx_uvm_msg));
	heap_below_net();

	exit(nvx_main(argc, argv));
}
