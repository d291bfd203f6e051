/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nvx light user VMs: the guest's view (control page, rings, messages,
 * ports) and the host's (endpoint and channel ioctls).
 *
 * A user VM is an ordinary KVM VM whose RAM is one pool grant mapped at
 * guest physical address 0. NVX_IOC_UVM_ATTACH binds it to an endpoint
 * (the system process's side): the guest's writes to
 * NVX_UVM_PORT_DOORBELL are then consumed in the vCPU's exit path (the
 * fast path), never by the VMM. See Documentation/nvx/uvm.rst.
 */
#ifndef _UAPI_NVX_UVM_H
#define _UAPI_NVX_UVM_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <nvx/nvx.h>

/* ---------------------------------------------------------- ports --- */

/* out (any width): the guest published new submission entries. */
#define NVX_UVM_PORT_DOORBELL	0x0600
/* out32: the guest ends with this exit status (handled by the VMM). */
#define NVX_UVM_PORT_EXIT	0x0604
/*
 * out32 (0): the guest's ready point (handled by the VMM), with nothing
 * in flight on its rings: a VMM making a template freezes the VM here
 * (its RAM sealed, its vCPU state kept); any other goes on. The guest
 * reads the control page again after the write: a clone of the template
 * resumes there, ATTACHed afresh (a new vm_id and seed, its own
 * arguments, rings from index 0). Documentation/nvx/uvm.rst, "Templates
 * and clones".
 */
#define NVX_UVM_PORT_READY	0x0608
/*
 * The kernel owns NVX_UVM_PORT_DOORBELL .. +3. A write to any other
 * port than these three is fatal to the VM (the VMM stops it).
 */

/* ----------------------------------------------------- guest memory --- */

#define NVX_UVM_CTRL_MAGIC	0x5558564e	/* "NVXU" */
#define NVX_UVM_CTRL_VERSION	1

/* struct nvx_uvm_ctrl.flags, written by the guest */
#define NVX_UVM_CTRL_WANT_IRQ	0x1U	/* halted: signal the irqfd */

/*
 * struct nvx_uvm_ctrl.sq_flags, written by the kernel. POLLED: the
 * endpoint's poller (NVX_UVM_EP_IOC_POLLER) is awake and scans this SQ, so
 * a new entry needs no doorbell. The guest publishes sq_prod, then a full
 * barrier, then reads sq_flags: clear means ring (Documentation/nvx/uvm.rst,
 * "The poller"). Zero, the value of a kernel without pollers, always
 * means ring.
 */
#define NVX_UVM_SQ_POLLED	0x1U

#define NVX_UVM_SEED_SIZE	32
#define NVX_UVM_ARGS_SIZE	512

/**
 * struct nvx_uvm_ctrl - the guest control page (one page at @ctrl_gpa)
 * @magic: kernel: NVX_UVM_CTRL_MAGIC.
 * @version: kernel: NVX_UVM_CTRL_VERSION.
 * @vm_id: kernel: this VM's id in its endpoint (never 0); ids are the
 *	endpoint's own: another endpoint may have a VM of the same id.
 * @ctrl_size: kernel: sizeof(struct nvx_uvm_ctrl).
 * @mem_size: kernel: bytes of guest RAM (the grant), from GPA 0.
 * @sq_gpa: kernel: submission ring, @sq_entries struct nvx_uvm_msg.
 * @cq_gpa: kernel: completion ring, @cq_entries struct nvx_uvm_msg.
 * @sq_entries: kernel: power of two.
 * @cq_entries: kernel: power of two; also the most requests the guest
 *	may have whose completion it has not consumed (its credit).
 * @seed: kernel: fresh random bytes for every attach (launch).
 * @credits: kernel adds one per completion it writes; the guest
 *	subtracts one per completion it consumes (atomically). Nonzero
 *	means a reply is waiting: the guest reads it without a VM exit.
 * @flags: guest: NVX_UVM_CTRL_* bits.
 * @sq_prod: guest: submission entries published (free-running).
 * @sq_cons: kernel: submission entries taken (free-running).
 * @cq_prod: kernel: completions written (free-running).
 * @cq_cons: guest: completions consumed (free-running).
 * @doorbells: kernel: doorbells handled for this VM.
 * @irq_vector: VMM: the vector its irqfd route raises in the guest.
 * @tsc_khz: VMM: the guest's TSC frequency in kHz.
 * @argc: VMM: number of NUL-terminated strings in @args.
 * @sq_flags: kernel: NVX_UVM_SQ_* bits (since ABI 2.2).
 * @pad: 0.
 * @args: VMM: the boot arguments, NUL-separated.
 *
 * The kernel writes its fields at attach and keeps @sq_cons, @cq_prod,
 * @credits, @doorbells and @sq_flags current; it never trusts what the
 * guest writes into them (it keeps its own copies).
 */
struct nvx_uvm_ctrl {
	__u32 magic;
	__u32 version;
	__u32 vm_id;
	__u32 ctrl_size;
	__u64 mem_size;
	__u64 sq_gpa;
	__u64 cq_gpa;
	__u32 sq_entries;
	__u32 cq_entries;
	__u8 seed[NVX_UVM_SEED_SIZE];
	/* 0x50: ring state */
	__u32 credits;
	__u32 flags;
	__u32 sq_prod;
	__u32 sq_cons;
	__u32 cq_prod;
	__u32 cq_cons;
	__u32 doorbells;
	__u32 irq_vector;
	/* 0x70: boot information */
	__u64 tsc_khz;
	__u32 argc;
	__u32 sq_flags;
	__u32 pad[32];
	/* 0x100 */
	char args[NVX_UVM_ARGS_SIZE];
};

/*
 * struct nvx_uvm_msg.type. A guest may send 1..NVX_UVM_MSG_GUEST_MAX;
 * the endpoint's policy (NVX_UVM_EP_IOC_SET_POLICY) says which. The
 * kernel itself serves NVX_UVM_MSG_RECV and messages whose @dst names
 * another VM; every other type goes to the system process, which gives
 * it its meaning. The types below are those of the reference system
 * process (nvxtool uvm serve, Documentation/nvx/uvm-sys.rst); a file
 * call's payload is a struct nvx_uvm_fcall.
 */
#define NVX_UVM_MSG_IPC		1	/* payload for the system process */
#define NVX_UVM_MSG_WRITE	2	/* fcall.fd; PUSH data */
#define NVX_UVM_MSG_READ	3	/* fcall.fd; PULL into sg */
#define NVX_UVM_MSG_EXIT	4	/* payload[0..3] = exit status */
#define NVX_UVM_MSG_CLOCK	5	/* reply payload: CLOCK_REALTIME ns */
#define NVX_UVM_MSG_RECV	6	/* kernel: take a VM-to-VM message */
#define NVX_UVM_MSG_OPENAT	7	/* fd (dir), flags, arg = mode; PUSH path */
#define NVX_UVM_MSG_CLOSE	8	/* fd */
#define NVX_UVM_MSG_PREAD	9	/* fd, arg = offset; PULL */
#define NVX_UVM_MSG_PWRITE	10	/* fd, arg = offset; PUSH */
#define NVX_UVM_MSG_LSEEK	11	/* fd, flags = whence, arg = offset */
#define NVX_UVM_MSG_FSTAT	12	/* fd; PULL struct nvx_uvm_stat */
#define NVX_UVM_MSG_GETDENTS	13	/* fd; PULL struct linux_dirent64s */
#define NVX_UVM_MSG_MKDIR	14	/* fd (dir), arg = mode; PUSH path */
#define NVX_UVM_MSG_UNLINK	15	/* fd (dir), flags; PUSH path */
#define NVX_UVM_MSG_RENAME	16	/* fd, flags = new dir; PUSH old\0new\0 */
#define NVX_UVM_MSG_FTRUNCATE	17	/* fd, arg = length */
#define NVX_UVM_MSG_FSYNC	18	/* fd */
#define NVX_UVM_MSG_GETRANDOM	19	/* PULL random bytes */
#define NVX_UVM_MSG_READY	20	/* ready for work; completes with it */
#define NVX_UVM_MSG_SOCKET	21	/* arg = domain, flags = type; ret = fd */
#define NVX_UVM_MSG_BIND	22	/* fd; PUSH struct nvx_uvm_sockaddr */
#define NVX_UVM_MSG_LISTEN	23	/* fd, arg = backlog */
#define NVX_UVM_MSG_ACCEPT	24	/* fd, flags; PULL peer's address; ret = fd */
#define NVX_UVM_MSG_CONNECT	25	/* fd; PUSH struct nvx_uvm_sockaddr */
#define NVX_UVM_MSG_SEND	26	/* fd, flags = NVX_UVM_SOCK_*; PUSH data */
#define NVX_UVM_MSG_SOCKRECV	27	/* fd, flags = NVX_UVM_SOCK_*; PULL data */
#define NVX_UVM_MSG_SHUTDOWN	28	/* fd, flags = SHUT_RD/WR/RDWR */
#define NVX_UVM_MSG_POLL	29	/* arg = timeout ms; PUSH pollfds */
#define NVX_UVM_MSG_GUEST_MAX	63
/*
 * Made by the kernel for the endpoint only: a VM's channel was closed
 * (status: minus the enum nvx_uvm_reason it ended with, payload[0..7]:
 * the detail). A stopped VM's notice comes when its VMM closes it.
 */
#define NVX_UVM_MSG_VM_GONE	64

/* struct nvx_uvm_msg.flags */
#define NVX_UVM_MSGF_PUSH	0x1U	/* sg holds guest data out */
#define NVX_UVM_MSGF_PULL	0x2U	/* sg receives data in */
#define NVX_UVM_MSGF_ALL	(NVX_UVM_MSGF_PUSH | NVX_UVM_MSGF_PULL)

#define NVX_UVM_PAYLOAD		24

/* struct nvx_uvm_fcall.fd of a path call: the tenant's root directory */
#define NVX_UVM_FD_ROOT		(-100)
/* bytes of a path, its NUL included */
#define NVX_UVM_PATH_MAX	4096

/**
 * struct nvx_uvm_fcall - the payload of a forwarded file call
 * @fd: the guest's fd (0, 1, 2 are stdin, stdout, stderr), or for a path
 *	call the directory it is relative to (NVX_UVM_FD_ROOT: the
 *	tenant's root; a path is always resolved beneath it).
 * @flags: OPENAT: O_* flags; UNLINK: 0 or AT_REMOVEDIR; LSEEK: whence;
 *	RENAME: the new name's directory fd.
 * @arg: OPENAT, MKDIR: the mode; PREAD, PWRITE, LSEEK: the offset;
 *	FTRUNCATE: the length.
 * @ret: completion: OPENAT: the new fd; LSEEK: the new offset; else 0.
 *	Bytes moved are in the completion's @bulk_len.
 *
 * The system process checks everything; its errors are negative errnos
 * in the completion's @status.
 */
struct nvx_uvm_fcall {
	__s32 fd;
	__u32 flags;
	__u64 arg;
	__s64 ret;
};

/*
 * Sockets (NVX_UVM_MSG_SOCKET .. NVX_UVM_MSG_POLL, and CLOSE, READ and
 * WRITE on a socket's fd): the system process holds a real socket of
 * the tenant's network namespace for each; the guest's fd is its own
 * (3..63, the same table as files). A call blocks the guest thread that
 * makes it (never the system process or another VM) unless it passes
 * NVX_UVM_SOCK_NONBLOCK; CONNECT is checked against the tenant's egress
 * policy (-ENETUNREACH when refused). Documentation/nvx/uvm-sys.rst.
 */
#define NVX_UVM_SOCK_NONBLOCK	0x1U	/* ACCEPT, SEND, SOCKRECV: -EAGAIN */
#define NVX_UVM_SOCK_PEEK	0x2U	/* SOCKRECV: MSG_PEEK */

/* SOCKET's fcall.arg and struct nvx_uvm_sockaddr.family */
#define NVX_UVM_AF_INET		2	/* AF_INET */
#define NVX_UVM_AF_INET6	10	/* AF_INET6 */
/* SOCKET's fcall.flags */
#define NVX_UVM_SOCK_STREAM	1	/* SOCK_STREAM (TCP) */
#define NVX_UVM_SOCK_DGRAM	2	/* SOCK_DGRAM (UDP) */

/**
 * struct nvx_uvm_sockaddr - an IPv4 or IPv6 address and port
 * @family: NVX_UVM_AF_INET or NVX_UVM_AF_INET6.
 * @port: the port, in host byte order.
 * @pad: 0.
 * @addr: the address in network byte order: 4 bytes for IPv4, 16 for
 *	IPv6; the rest 0.
 */
struct nvx_uvm_sockaddr {
	__u16 family;
	__u16 port;
	__u32 pad;
	__u8 addr[16];
};

/* POLL: at most this many struct nvx_uvm_pollfd in one call */
#define NVX_UVM_POLL_MAX	16

/**
 * struct nvx_uvm_pollfd - one entry of a POLL's PUSH data
 * @fd: the guest fd; a negative one is ignored (revents 0).
 * @events: POLLIN (0x1), POLLPRI (0x2), POLLOUT (0x4).
 * @pad: 0.
 *
 * The completion's status is the number of entries with events (0 on
 * timeout) or a negative errno; its payload[i] (a __u8) holds entry i's
 * revents: POLLIN, POLLPRI, POLLOUT, POLLERR (0x8), POLLHUP (0x10),
 * POLLNVAL (0x20, not an open fd of this VM).
 */
struct nvx_uvm_pollfd {
	__s32 fd;
	__u16 events;
	__u16 pad;
};

/**
 * struct nvx_uvm_stat - what NVX_UVM_MSG_FSTAT writes into the guest
 * @ino: inode number.
 * @size: bytes.
 * @blocks: 512-byte blocks.
 * @mtime_ns: last modification, CLOCK_REALTIME ns.
 * @mode: type and permission bits (S_IF*).
 * @nlink: links.
 */
struct nvx_uvm_stat {
	__u64 ino;
	__u64 size;
	__u64 blocks;
	__u64 mtime_ns;
	__u32 mode;
	__u32 nlink;
};

/**
 * struct nvx_uvm_msg - one message, 64 bytes, in both rings
 * @type: NVX_UVM_MSG_*.
 * @flags: NVX_UVM_MSGF_* (at most one of PUSH and PULL).
 * @tag: guest's cookie, copied into the completion.
 * @src_vm: source VM; the kernel writes it (a guest cannot forge it).
 *	In the completion of a RECV: the sending VM.
 * @src_tid: source guest thread (in a RECV completion: the sender's).
 * @dst: destination: 0 is the system process, another VM id of the
 *	same endpoint a VM-to-VM message (type NVX_UVM_MSG_IPC only).
 * @status: completion: 0 or a negative errno, from the system process,
 *	the endpoint's policy or the VM-to-VM path (see uvm.rst).
 * @sg_gpa: guest physical address of @sg_nr struct nvx_uvm_sg, 16-byte
 *	aligned, inside guest RAM.
 * @sg_nr: scatter/gather entries, at most NVX_UVM_MAX_SG; 0 = no bulk.
 * @bulk_len: completion: bytes moved (PUSH: read by the system
 *	process; PULL: written into the guest).
 * @payload: free-form.
 */
struct nvx_uvm_msg {
	__u16 type;
	__u16 flags;
	__u32 tag;
	__u32 src_vm;
	__u32 src_tid;
	__u32 dst;
	__s32 status;
	__u64 sg_gpa;
	__u32 sg_nr;
	__u32 bulk_len;
	__u8 payload[NVX_UVM_PAYLOAD];
};

/*
 * VM-to-VM messages, moved by the kernel (policy NVX_UVM_POLICY_VM2VM):
 * a VM sends type NVX_UVM_MSG_IPC with @dst = the other VM's id; the
 * other VM takes it with a RECV it posted (type NVX_UVM_MSG_RECV, @dst
 * 0). The oldest message waiting for a VM meets its oldest RECV; then
 * bulk data moves once, guest to guest: a PUSH message's data into the
 * RECV's PULL segments, or a RECV's PUSH segments into a PULL message's
 * (at most the shorter side; other combinations move nothing), and both
 * complete: @bulk_len the bytes moved, the sender's completion carries
 * the RECV's @payload and the RECV's carries the sender's, with the
 * sender in @src_vm and @src_tid. A message waits (in flight, within
 * its sender's credit) until a RECV takes it. Errors in the sender's
 * completion: -EPERM (VM-to-VM not allowed), -ESRCH (no such VM in this
 * endpoint: VMs of other endpoints cannot be told from VMs that never
 * were), -ECONNRESET (the VM stopped or went before taking it), -EINVAL
 * (@dst is the sender, or the type is not IPC). A VM that goes takes
 * its own RECVs and waiting messages with it.
 */

#define NVX_UVM_MAX_SG		32
#define NVX_UVM_MAX_BULK	(256U << 10)	/* bytes per message */

/**
 * struct nvx_uvm_sg - one scatter/gather segment in guest memory
 * @gpa: start; a segment may cross any number of pages.
 * @len: bytes, 1..NVX_UVM_MAX_BULK; the segments add up to at most
 *	NVX_UVM_MAX_BULK.
 * @flags: must be 0.
 */
struct nvx_uvm_sg {
	__u64 gpa;
	__u32 len;
	__u32 flags;
};

/* ------------------------------------------------- why a VM stopped --- */

enum nvx_uvm_reason {
	NVX_UVM_RUNNING = 0,
	NVX_UVM_DETACHED = 1,		/* the channel was closed */
	NVX_UVM_ERR_PORT = 2,		/* write to an unknown port */
	NVX_UVM_ERR_RING = 3,		/* ring indexes out of range */
	NVX_UVM_ERR_MSG = 4,		/* malformed message (type, flags) */
	NVX_UVM_ERR_SIZE = 5,		/* bulk too long, too many segments */
	NVX_UVM_ERR_ADDR = 6,		/* ring or segment outside RAM */
	NVX_UVM_ERR_FLOOD = 7,		/* more requests than credits */
	NVX_UVM_ERR_ENDPOINT = 8,	/* the system process went away */
	NVX_UVM_ERR_LIMIT = 9,		/* over a hard policy limit */
	NVX_UVM_ERR_MEMORY = 10,	/* a clone's page could not be copied */
	NVX_UVM_NR_REASONS
};

/* ------------------------------------------------------- ioctls --- */

#define NVX_UVM_MAX_ENTRIES	256
#define NVX_UVM_DEF_ENTRIES	64
#define NVX_UVM_MAX_VMS		4096	/* per endpoint: a tenant's */
/* VM_GONE notices an endpoint keeps unreceived before ATTACH says EBUSY */
#define NVX_UVM_MAX_GONE	1024

/* struct nvx_uvm_endpoint.flags */
#define NVX_UVM_EP_CLOEXEC	0x1U
#define NVX_UVM_EP_FLAGS	NVX_UVM_EP_CLOEXEC

/**
 * struct nvx_uvm_endpoint - NVX_IOC_UVM_ENDPOINT: make an endpoint
 * @flags: in: NVX_UVM_EP_*.
 * @max_vms: in: VMs it may serve at once, 1..NVX_UVM_MAX_VMS; 0 = 16.
 *	out: the value used.
 * @fd: out: the endpoint's fd (pollable: POLLIN when a message waits).
 * @ep_id: out: the endpoint's id.
 */
struct nvx_uvm_endpoint {
	__u32 flags;
	__u32 max_vms;
	__s32 fd;
	__u32 ep_id;
};

/* struct nvx_uvm_attach.flags */
#define NVX_UVM_ATTACH_CLOEXEC	0x1U
#define NVX_UVM_ATTACH_SLOW	0x2U	/* doorbells via the VMM */
#define NVX_UVM_ATTACH_FLAGS	(NVX_UVM_ATTACH_CLOEXEC | NVX_UVM_ATTACH_SLOW)

/**
 * struct nvx_uvm_attach - NVX_IOC_UVM_ATTACH: bind a KVM VM to an endpoint
 * @flags: in: NVX_UVM_ATTACH_*. With SLOW no port is claimed in KVM:
 *	the doorbell exits to the VMM, which passes it on with
 *	NVX_UVM_CHAN_IOC_KICK (the baseline the fast path is measured against).
 * @vm_fd: in: a KVM VM fd (from KVM_CREATE_VM).
 * @grant_fd: in: the grant that is the guest's RAM, mapped at GPA 0.
 * @ep_fd: in: the endpoint.
 * @irq_fd: in: an eventfd bound to the VM with KVM_IRQFD, signalled when
 *	a completion arrives while the guest asked for NVX_UVM_CTRL_WANT_IRQ,
 *	and when the VM is stopped; the channel holds the file (but KVM
 *	drops its irqfds when the VM fd is closed). -1 for none: the guest
 *	must then poll for completions. A stopped VM's halted vCPUs are
 *	woken either way.
 * @sq_entries: in: power of two up to NVX_UVM_MAX_ENTRIES; 0 = 64.
 * @cq_entries: in: as @sq_entries.
 * @ctrl_gpa: in: page-aligned GPA of the control page.
 * @sq_gpa: in: 64-byte aligned GPA of the submission ring.
 * @cq_gpa: in: 64-byte aligned GPA of the completion ring.
 * @reserved: in: must be 0.
 * @fd: out: the channel fd; closing it detaches the VM.
 * @vm_id: out: the VM's id.
 * @mem_size: out: guest RAM in bytes.
 *
 * The control page and both rings must lie inside guest RAM and must
 * not overlap. Errors: -EINVAL (flags, sizes, alignment, overlap, not a
 * KVM fd, an eventfd that is not one, a grant that is a clone), -EPERM
 * (a grant that is a template: read-only), -EBADF, -ENOSPC (outside RAM),
 * -EBUSY (the VM already has a channel, the endpoint serves max_vms, or
 * it holds NVX_UVM_MAX_GONE VM_GONE notices nobody received),
 * -ENXIO (the endpoint's system process is gone).
 */
struct nvx_uvm_attach {
	__u32 flags;
	__s32 vm_fd;
	__s32 grant_fd;
	__s32 ep_fd;
	__s32 irq_fd;
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 reserved;
	__u64 ctrl_gpa;
	__u64 sq_gpa;
	__u64 cq_gpa;
	__s32 fd;
	__u32 vm_id;
	__u64 mem_size;
};

#define NVX_IOC_UVM_ENDPOINT	_IOWR(NVX_IOC_MAGIC, 0x30, struct nvx_uvm_endpoint)
#define NVX_IOC_UVM_ATTACH	_IOWR(NVX_IOC_MAGIC, 0x31, struct nvx_uvm_attach)

/* struct nvx_uvm_recv.flags */
#define NVX_UVM_RECV_NONBLOCK	0x1U
#define NVX_UVM_RECV_FLAGS	NVX_UVM_RECV_NONBLOCK

/**
 * struct nvx_uvm_recv - NVX_UVM_EP_IOC_RECV: take the oldest message
 * @flags: in: NVX_UVM_RECV_*; the fd's O_NONBLOCK counts as well.
 * @buf_len: in: bytes at @buf.
 * @buf: in: where a PUSH message's data is copied (straight from guest
 *	memory, one copy), at most @buf_len bytes.
 * @cookie: out: names the request in NVX_UVM_EP_IOC_REPLY.
 * @data_len: out: the PUSH data's full length (more than @buf_len: the
 *	rest was not copied); for PULL, the room the guest offers.
 * @reserved: in: must be 0.
 * @msg: out: the message; @msg.src_vm and @msg.src_tid say who sent it.
 *
 * Errors: -EAGAIN (nothing waits, nonblocking), -EINTR (a signal; the
 * call restarts under SA_RESTART), -EFAULT (the message stays queued),
 * -EINVAL.
 */
struct nvx_uvm_recv {
	__u32 flags;
	__u32 buf_len;
	__u64 buf;
	__u64 cookie;
	__u32 data_len;
	__u32 reserved;
	struct nvx_uvm_msg msg;
};

/**
 * struct nvx_uvm_reply - NVX_UVM_EP_IOC_REPLY: complete a request
 * @flags: in: must be 0.
 * @buf_len: in: bytes at @buf, written into a PULL request's segments
 *	(at most their room: -EMSGSIZE otherwise); must be 0 otherwise.
 * @buf: in: the data.
 * @cookie: in: from NVX_UVM_EP_IOC_RECV.
 * @msg: in: @type (1..NVX_UVM_MSG_GUEST_MAX, -EINVAL otherwise),
 *	@status and @payload of the completion; the kernel fills in the
 *	rest (tag, source, bulk_len).
 *
 * Errors: -ESRCH (the VM is gone or stopped), -ENOENT (no such request
 * taken), -EMSGSIZE, -EFAULT, -EINVAL.
 */
struct nvx_uvm_reply {
	__u32 flags;
	__u32 buf_len;
	__u64 buf;
	__u64 cookie;
	struct nvx_uvm_msg msg;
};

/**
 * struct nvx_uvm_ep_stats - NVX_UVM_EP_IOC_STATS
 * @flags: in: must be 0.
 * @nr_vms: out: VMs attached now (and being attached).
 * @queued: out: messages waiting for RECV.
 * @taken: out: messages received and not replied to.
 * @gone: out: VM_GONE notices waiting.
 * @max_vms: out: the limit.
 * @msgs_in: out: messages queued for the system process.
 * @msgs_out: out: replies written.
 * @attached: out: attaches ever.
 * @denied: out: messages the policy answered with -EPERM.
 * @limited: out: messages over a limit (error completions and stops).
 * @vm2vm: out: VM-to-VM messages delivered.
 * @vm2vm_bytes: out: their bulk bytes.
 */
struct nvx_uvm_ep_stats {
	__u32 flags;
	__u32 nr_vms;
	__u32 queued;
	__u32 taken;
	__u32 gone;
	__u32 max_vms;
	__u64 msgs_in;
	__u64 msgs_out;
	__u64 attached;
	__u64 denied;
	__u64 limited;
	__u64 vm2vm;
	__u64 vm2vm_bytes;
};

/* struct nvx_uvm_policy.flags */
#define NVX_UVM_POLICY_VM2VM	0x1U	/* VMs of the endpoint may message */
#define NVX_UVM_POLICY_STOP	0x2U	/* over a limit: stop the VM */
#define NVX_UVM_POLICY_RESET	0x4U	/* set: drop @vm_id's own policy */
#define NVX_UVM_POLICY_OWN	0x8U	/* get: @vm_id has its own policy */
#define NVX_UVM_POLICY_FLAGS	(NVX_UVM_POLICY_VM2VM | NVX_UVM_POLICY_STOP)

/* the detail of NVX_UVM_ERR_LIMIT: which limit */
#define NVX_UVM_LIMIT_BULK	1
#define NVX_UVM_LIMIT_IN_FLIGHT	2
#define NVX_UVM_LIMIT_RATE	3

/* the most messages per second a rate limit may name */
#define NVX_UVM_MAX_RATE	1000000

/* every type a guest may send */
#define NVX_UVM_POLICY_ALL	(~0ULL << 1)

/**
 * struct nvx_uvm_policy - NVX_UVM_EP_IOC_SET_POLICY, NVX_UVM_EP_IOC_GET_POLICY
 * @flags: NVX_UVM_POLICY_*: VM2VM and STOP are the policy's; RESET is
 *	for SET only; GET reports OWN.
 * @vm_id: in: 0 for the endpoint's policy (every VM without its own),
 *	or a VM of this endpoint for that VM's own policy (-ESRCH when
 *	there is none attached).
 * @allow: bit T set: the guest may send type T (1..NVX_UVM_MSG_GUEST_MAX);
 *	bit 0 must be 0. A message of another type completes with -EPERM,
 *	written by the kernel; the system process never sees it.
 * @max_bulk: bytes of bulk per message, 1..NVX_UVM_MAX_BULK; 0 = no
 *	limit but NVX_UVM_MAX_BULK. Over it: -EMSGSIZE.
 * @max_in_flight: requests taken and not completed (RECVs posted and
 *	VM-to-VM messages waiting count); 0 = no limit but the ring's.
 *	Over it: -EBUSY.
 * @rate: messages per second, up to NVX_UVM_MAX_RATE (a token bucket,
 *	refilled continuously); 0 = no limit. Over it: -EAGAIN.
 * @burst: the bucket's depth, in messages; 0 = max(1, @rate / 10).
 * @reserved: must be 0.
 *
 * With NVX_UVM_POLICY_STOP a message over a limit stops its VM
 * (NVX_UVM_ERR_LIMIT, detail NVX_UVM_LIMIT_*) instead; a type that is
 * not allowed is always an error completion. A new policy replaces the
 * old one atomically: each message is checked against exactly one of
 * them. A new endpoint allows every type, no limits, no VM-to-VM
 * (before policies existed a message with a @dst went to the system
 * process; now it completes -EPERM unless VM-to-VM is allowed).
 */
struct nvx_uvm_policy {
	__u32 flags;
	__u32 vm_id;
	__u64 allow;
	__u32 max_bulk;
	__u32 max_in_flight;
	__u32 rate;
	__u32 burst;
	__u64 reserved[2];
};

/**
 * struct nvx_uvm_notify - NVX_UVM_EP_IOC_NOTIFY: a user interrupt per arrival
 * @flags: in: must be 0.
 * @vector_fd: in: a vector fd (NVX_IOC_UINTR_VECTOR_FD) of the caller, or
 *	-1 for none.
 * @reserved: in: must be 0.
 *
 * With a vector set, the endpoint posts it once per arrival batch (the
 * requests one doorbell queues, a VM_GONE notice), as well as waking
 * RECV and poll(); and at once when something is already queued.
 * Posts of a pending vector merge. The endpoint holds the vector until
 * it is replaced, the endpoint goes, or a post fails because the vector
 * fd was closed or its thread's registration ended: then it drops it and
 * wakes RECV and poll() only. Errors: -EINVAL (flags, reserved, an fd
 * that is not a vector fd), -EBADF, -EFAULT, -EOPNOTSUPP (no user
 * interrupts).
 */
struct nvx_uvm_notify {
	__u32 flags;
	__s32 vector_fd;
	__u64 reserved;
};

/* struct nvx_uvm_poller.flags */
#define NVX_UVM_POLLER_SQ	0x1U	/* run a poller for the VMs' SQs */
#define NVX_UVM_POLLER_CPU	0x2U	/* bind it to @cpu */
#define NVX_UVM_POLLER_FLAGS	(NVX_UVM_POLLER_SQ | NVX_UVM_POLLER_CPU)

#define NVX_UVM_POLLER_DEF_IDLE_US	2000
#define NVX_UVM_POLLER_MAX_IDLE_US	1000000
#define NVX_UVM_POLLER_DEF_BUDGET	8
#define NVX_UVM_POLLER_MAX_BUSY_US	1000000

/**
 * struct nvx_uvm_poller - NVX_UVM_EP_IOC_POLLER: the endpoint's pollers
 * @flags: in: NVX_UVM_POLLER_*. With NVX_UVM_POLLER_SQ the endpoint gets a
 *	kernel thread ("nvx-poll/EP_ID") that scans the submission rings of
 *	its fast-path VMs while any has work and sleeps after @idle_us
 *	without; the guests need no doorbell while it is awake
 *	(NVX_UVM_SQ_POLLED). Without it, a running poller stops (and
 *	@cpu, @idle_us and @budget must be 0). NVX_UVM_POLLER_CPU binds
 *	the poller to @cpu. A new call replaces the old settings whole.
 * @cpu: in: with NVX_UVM_POLLER_CPU the CPU the poller runs on (online,
 *	in the caller's affinity mask); else 0.
 * @idle_us: in: microseconds without work before the poller sleeps,
 *	1..NVX_UVM_POLLER_MAX_IDLE_US; 0 = NVX_UVM_POLLER_DEF_IDLE_US.
 * @budget: in: the most entries taken from one VM per pass over the
 *	VMs, 1..NVX_UVM_MAX_ENTRIES; 0 = NVX_UVM_POLLER_DEF_BUDGET.
 * @recv_busy_us: in: a blocking RECV that finds nothing spins this many
 *	microseconds (0..NVX_UVM_POLLER_MAX_BUSY_US) for a message before it
 *	sleeps, as SO_BUSY_POLL does (no poller needed).
 * @reserved: in: must be 0.
 *
 * A poller is a kernel thread that spends CPU time for the endpoint's
 * owner, so NVX_UVM_POLLER_SQ needs CAP_SYS_NICE; busy polling spends the
 * caller's own and needs nothing. All zero stops both. Errors: -EINVAL
 * (flags, reserved, a value out of range or set without its flag, a CPU
 * that is offline or not in the caller's affinity mask), -EPERM,
 * -ENOMEM, -EINTR.
 */
struct nvx_uvm_poller {
	__u32 flags;
	__s32 cpu;
	__u32 idle_us;
	__u32 budget;
	__u32 recv_busy_us;
	__u32 reserved;
};

#define NVX_UVM_EP_IOC_RECV	_IOWR(NVX_IOC_MAGIC, 0x38, struct nvx_uvm_recv)
#define NVX_UVM_EP_IOC_REPLY	_IOW(NVX_IOC_MAGIC, 0x39, struct nvx_uvm_reply)
#define NVX_UVM_EP_IOC_STATS	_IOWR(NVX_IOC_MAGIC, 0x3a, struct nvx_uvm_ep_stats)
#define NVX_UVM_EP_IOC_SET_POLICY _IOW(NVX_IOC_MAGIC, 0x3b, struct nvx_uvm_policy)
#define NVX_UVM_EP_IOC_GET_POLICY _IOWR(NVX_IOC_MAGIC, 0x3c, struct nvx_uvm_policy)
#define NVX_UVM_EP_IOC_NOTIFY	_IOW(NVX_IOC_MAGIC, 0x3d, struct nvx_uvm_notify)
#define NVX_UVM_EP_IOC_POLLER	_IOW(NVX_IOC_MAGIC, 0x3e, struct nvx_uvm_poller)

/**
 * struct nvx_uvm_status - NVX_UVM_CHAN_IOC_STATUS: a VM's state and counters
 * @flags: in: must be 0.
 * @reason: out: enum nvx_uvm_reason; NVX_UVM_RUNNING while it runs.
 * @detail: out: the port, index, address or length that stopped it.
 * @vm_id: out.
 * @in_flight: out: requests taken from the guest, not yet completed.
 * @doorbells: out: doorbells handled (fast path and KICK).
 * @msgs_in: out: messages taken from the submission ring.
 * @msgs_out: out: completions written.
 * @bulk_out: out: bytes copied out of the guest (PUSH).
 * @bulk_in: out: bytes copied into the guest (PULL).
 * @irqs: out: irqfd signals.
 * @denied: out: messages answered -EPERM by the policy.
 * @limited: out: messages over a policy limit.
 * @vm2vm_out: out: VM-to-VM messages this VM sent that were delivered.
 * @vm2vm_in: out: VM-to-VM messages it received.
 * @polled: out: messages the endpoint's poller took from the submission
 *	ring (they needed no doorbell; since ABI 2.2).
 */
struct nvx_uvm_status {
	__u32 flags;
	__u32 reason;
	__u64 detail;
	__u32 vm_id;
	__u32 in_flight;
	__u64 doorbells;
	__u64 msgs_in;
	__u64 msgs_out;
	__u64 bulk_out;
	__u64 bulk_in;
	__u64 irqs;
	__u64 denied;
	__u64 limited;
	__u64 vm2vm_out;
	__u64 vm2vm_in;
	__u64 polled;
};

/**
 * struct nvx_uvm_kick - NVX_UVM_CHAN_IOC_KICK: a doorbell the VMM received
 * @flags: in: must be 0.
 * @port: in: the port of the KVM_EXIT_IO (NVX_UVM_PORT_DOORBELL).
 * @value: in: the value written (ignored today).
 * @reserved: in: must be 0.
 *
 * Only for a channel attached with NVX_UVM_ATTACH_SLOW (-EINVAL
 * otherwise). A guest error found here stops the VM as on the fast path.
 */
struct nvx_uvm_kick {
	__u32 flags;
	__u32 port;
	__u32 value;
	__u32 reserved;
};

#define NVX_UVM_CHAN_IOC_STATUS	_IOWR(NVX_IOC_MAGIC, 0x40, struct nvx_uvm_status)
#define NVX_UVM_CHAN_IOC_KICK	_IOW(NVX_IOC_MAGIC, 0x41, struct nvx_uvm_kick)

#endif /* _UAPI_NVX_UVM_H */
