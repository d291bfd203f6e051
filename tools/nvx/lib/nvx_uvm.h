/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_uvm.h - a minimal VMM for nvx user VMs, and the system side's
 * default service: part of libnvx (lib/uvm.c). nvxtool (uvm run, uvm
 * serve), nvx-bench (uvm) and the uvm selftests use it.
 *
 * A user VM: one KVM VM with one vCPU, an in-kernel irqchip, RAM = one
 * pool grant at GPA 0, a flat guest image at NVX_UVM_IMAGE_GPA entered
 * in 64-bit mode, bound to an endpoint with NVX_IOC_UVM_ATTACH. Guest
 * memory layout (Documentation/nvx/uvm.rst):
 *
 *   0x00000  control page (struct nvx_uvm_ctrl)
 *   0x01000  submission ring (up to 256 x 64 bytes)
 *   0x05000  completion ring (up to 256 x 64 bytes)
 *   0x09000  GDT
 *   0x0a000  page tables: PML4, PDPT, 4 PDs (first 4 GiB, 2 MiB pages)
 *   0x10000  with a network: the network page (nvx_vmnet.h)
 *   0x80000  initial stack pointer (grows down)
 *   0x100000 the image; the rest is the guest's (with a network, but
 *            the last NVX_UVM_NET_AREA: the net area)
 *
 * The vCPU loop sees only the guest's exit port, errors and, with
 * NVX_UVM_ATTACH_SLOW, the doorbells it passes on with NVX_UVM_CHAN_IOC_KICK.
 */
#ifndef NVX_UVM_LIB_H
#define NVX_UVM_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kvm.h>
#include <nvx/nvx.h>
#include <nvx/pool.h>
#include <nvx/uvm.h>

#include "nvx_vmnet.h"

#define NVX_UVM_CTRL_GPA	0x0ULL
#define NVX_UVM_SQ_GPA		0x1000ULL
#define NVX_UVM_CQ_GPA		0x5000ULL
#define NVX_UVM_GDT_GPA		0x9000ULL
#define NVX_UVM_PML4_GPA	0xa000ULL
#define NVX_UVM_STACK_GPA	0x80000ULL
#define NVX_UVM_IMAGE_GPA	0x100000ULL
#define NVX_UVM_IRQ_VECTOR	0x40
#define NVX_UVM_IRQ_GSI		1

#define NVX_UVM_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Reasons only the VMM sees, after enum nvx_uvm_reason. */
#define NVX_UVM_ERR_SHUTDOWN	(NVX_UVM_NR_REASONS + 0)	/* triple fault */
#define NVX_UVM_ERR_VMM		(NVX_UVM_NR_REASONS + 1)	/* KVM failed */

/* The name of a stop reason (enum nvx_uvm_reason, NVX_UVM_ERR_*). */
const char *nvx_uvm_reason_name(unsigned int r);
const char *nvx_uvm_msg_name(unsigned int type);

/*
 * A user VM's network (lib/vmnet.c): a shared RX queue set on @ifindex
 * (an nvxsim NIC) made in the VM's own memory, taking the frames for
 * @ip4 (and ARP asking for it), with a TX ring there too; the guest
 * learns it from the network page (nvx_vmnet.h). The VMM rounds o->mem
 * up to 2 MiB and adds NVX_UVM_NET_AREA bytes of RAM above for it.
 */
#define NVX_UVM_NET_AREA	(2ULL << 20)
#define NVX_UVM_NET_BUFS	32		/* default buffers (16 KiB) */
#define NVX_UVM_NET_MAX_BUFS	64		/* the area's room for them */
#define NVX_UVM_NET_MIN_CQ	64		/* completion ring entries */
#define NVX_UVM_NET_MAX_CQ	2048		/* rings in 64 KiB */
#define NVX_UVM_NET_TX		256		/* TX descriptors and slots */
#define NVX_UVM_NET_SLOT	2048		/* bytes per TX slot */

struct nvx_uvm_net {
	unsigned int ifindex;	/* the NIC */
	uint32_t ip4;		/* network order, not 0 */
	unsigned int prefix;	/* 1..32; 0 = 24 */
	uint8_t mac[6];		/* all zeros: 02:4e:56 + the IP's last 3 bytes */
	uint32_t nr_bufs;	/* 2..NVX_UVM_NET_MAX_BUFS; 0 = default */
	/* a power of two, NVX_UVM_NET_MIN_CQ..NVX_UVM_NET_MAX_CQ; 0 = 1024 */
	uint32_t cq_entries;
};

struct nvx_uvm_opts {
	uint64_t mem;		/* bytes of guest RAM; 0 = 4 MiB */
	const char *image;	/* path of the flat image */
	int argc;		/* boot arguments (argv[0] = image name) */
	char **argv;
	int ep_fd;		/* the endpoint to attach to */
	int slow;		/* NVX_UVM_ATTACH_SLOW */
	uint32_t entries;	/* ring entries; 0 = 64 */
	uint32_t grant_flags;	/* more NVX_GRANT_* flags (NVX_GRANT_BLOCKS) */
	const struct nvx_uvm_net *net;	/* NULL: no network */
};

struct nvx_uvm_vm {
	int kvm_fd;	/* -1 once the VM is made */
	int vm_fd, vcpu_fd, grant_fd, chan_fd, irq_fd, stats_fd;
	void *mem;
	uint64_t mem_size;
	struct kvm_run *run;
	size_t run_size;
	struct nvx_uvm_ctrl *ctrl;
	uint32_t vm_id;
	int slow;
	uint32_t entries;	/* of each ring */
	int stop_at_ready;	/* nvx_uvm_run() returns 1 at the ready point */
	int prepared;		/* by nvx_uvm_prepare(): no RAM yet */
	size_t image_size;
	/* after nvx_uvm_run() */
	uint32_t exit_status;	/* the guest's, when it exited */
	uint32_t reason;	/* why it stopped otherwise */
	uint64_t detail;
	char fault[256];	/* a triple fault: the vCPU's state, in words */
	uint64_t kicks;		/* doorbells passed on (slow path) */
	uint64_t runs;		/* returns from KVM_RUN */
	int stop;		/* set to make nvx_uvm_run() return */
	/* with a network (o->net) */
	int srq_fd;		/* the set; -1 without */
	int net_irq_fd;		/* its eventfd, an irqfd of the VM */
	/* the network page: the guest's memory, which it may rewrite */
	struct nvx_vmnet_info *net;
	uint64_t net_kicks;	/* NVX_VMNET_PORT_KICK writes */
	uint64_t net_sent;	/* frames they sent */
	uint64_t net_dropped;	/* frames they took that were not sent */
	int net_err;		/* the last kick's errno, 0 */
};

/* Read one u64 statistic of KVM's binary stats fd; -1 when absent. */
int64_t nvx_uvm_kvm_stat(int stats_fd, const char *name);

/*
 * A stopped vCPU's state in words (rip, halted, pending events, the local
 * APIC's ISR/IRR and timer): for a guest that stopped making progress.
 */
int nvx_uvm_describe(struct nvx_uvm_vm *vm, char *buf, size_t len);

/* Unmap and close what nvx_uvm_create() made; safe on a partial VM. */
void nvx_uvm_destroy(struct nvx_uvm_vm *vm);

/*
 * Build a user VM and attach it to o->ep_fd. Returns 0 or a negative
 * errno; *where names the step that failed. Call nvx_uvm_destroy() in
 * both cases.
 */
int nvx_uvm_create(struct nvx_uvm_vm *vm, int nvx_fd,
		   const struct nvx_uvm_opts *o,
		   const char **where);

/*
 * A KVM VM that nvx does not know, the control for user VMs: RAM a
 * private (copy-on-write) mapping of @mem_fd, a memfd from
 * nvx_uvm_plain_mem() that any number of such VMs share; the same KVM VM
 * as nvx_uvm_create()'s (irqchip, one vCPU, the irqfd of
 * NVX_UVM_IRQ_VECTOR, 64-bit mode) and the same runtime, but no grant
 * and no channel: the control page is written here, its rings unused,
 * so the guest must not send a message (test.img's "plain" mode). Signal
 * vm->irq_fd to interrupt the guest. Returns 0 or a negative errno;
 * *where names the step that failed. Call nvx_uvm_destroy() in both
 * cases.
 */
int nvx_uvm_plain(struct nvx_uvm_vm *vm, int mem_fd, uint64_t mem_size,
		  int argc, char **argv, const char **where);

/* A memfd of @mem_size bytes, the image @path at NVX_UVM_IMAGE_GPA. */
int nvx_uvm_plain_mem(const char *path, uint64_t mem_size);

/*
 * The network of o->net on @vm's RAM (lib/vmnet.c): called by
 * nvx_uvm_create() once the RAM is mapped. 0 or -errno (*where says
 * the step).
 */
int nvx_uvm_net_setup(struct nvx_uvm_vm *vm, int nvx_fd,
		      const struct nvx_uvm_net *n, const char **where);

/* Send what the guest posted on its TX ring (NVX_VMNET_PORT_KICK). */
int nvx_uvm_net_kick(struct nvx_uvm_vm *vm);

/* "IP[/PREFIX]" into @n->ip4 and @n->prefix: 0 or -EINVAL. */
int nvx_uvm_net_parse_ip(struct nvx_uvm_net *n, const char *s);

/* The channel's status; reason and detail copied into @vm. */
int nvx_uvm_status(struct nvx_uvm_vm *vm, struct nvx_uvm_status *st);

/*
 * The vCPU loop. Returns 0 when the guest wrote NVX_UVM_PORT_EXIT
 * (vm->exit_status), 1 at the guest's ready point (NVX_UVM_PORT_READY)
 * when vm->stop_at_ready is set (else the guest goes on), -EIO when the
 * VM was stopped (vm->reason and vm->detail say why), -EINTR when
 * vm->stop was set, or another errno from KVM.
 */
int nvx_uvm_run(struct nvx_uvm_vm *vm);

/*
 * A template: a user VM frozen at its ready point. Its RAM is a sealed
 * grant; its vCPU state is what KVM gives (registers, segments and
 * control registers, XSAVE and XCR0, the local APIC, pending events; no
 * MSRs: the runtime sets none). Clones share the RAM copy-on-write.
 */
#define NVX_UVM_TMPL_NAME	64

struct nvx_uvm_tmpl {
	int grant_fd;
	uint64_t mem_size;
	uint32_t entries;
	uint64_t tsc_khz;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_xcrs xcrs;
	struct kvm_xsave xsave;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	/* when nvx_uvm_tmpl_make() says -ENOEXEC */
	uint32_t exit_status;
	uint32_t reason;
	char name[NVX_UVM_TMPL_NAME];	/* the guest's argv[0] */
};

/*
 * A template file (lib/tmpl.c; Documentation/nvx/uvm.rst, "Template
 * files"), little-endian: this header, the vCPU state (struct kvm_regs,
 * kvm_sregs, kvm_xcrs, kvm_xsave, kvm_lapic_state, kvm_vcpu_events, in
 * that order, each of the size the header gives), the index (u64) of
 * each stored page, ascending, then the stored pages, 4 KiB each. Pages
 * not stored are zero. @sum is FNV-1a over every 64-bit word after the
 * header.
 */
#define NVX_UVM_TMPL_MAGIC	"NVXTMPL"	/* and a NUL */
#define NVX_UVM_TMPL_VERSION	1
#define NVX_UVM_TMPL_PAGE	4096
#define NVX_UVM_TMPL_NR_STATE	6
#define NVX_UVM_TMPL_MAX_MEM	(4ULL << 30)

struct nvx_uvm_tmpl_file {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size;	/* of this header */
	uint64_t mem_size;	/* bytes of guest RAM */
	uint64_t tsc_khz;	/* the TSC rate the guest was told */
	uint32_t entries;	/* ring entries */
	uint32_t nr_pages;	/* pages stored */
	uint32_t state_size[NVX_UVM_TMPL_NR_STATE];
	char name[NVX_UVM_TMPL_NAME];	/* NUL-terminated */
	uint64_t sum;
};

/* Boot @o to its ready point and freeze it into @t (see lib/uvm.c). */
int nvx_uvm_tmpl_make(struct nvx_uvm_tmpl *t, int nvx_fd,
		      const struct nvx_uvm_opts *o, const char **where);
void nvx_uvm_tmpl_free(struct nvx_uvm_tmpl *t);

/*
 * Write @t to @fd as a template file; read one into @t (its RAM a new
 * sealed grant, more flags @grant_flags). See lib/tmpl.c.
 */
int nvx_uvm_tmpl_save(const struct nvx_uvm_tmpl *t, int fd,
		      const char **where);
int nvx_uvm_tmpl_load(struct nvx_uvm_tmpl *t, int nvx_fd, int fd,
		      uint32_t grant_flags, const char **where);

/* A KVM VM made ahead of demand for nvx_uvm_clone(); see lib/uvm.c. */
int nvx_uvm_prepare(struct nvx_uvm_vm *vm, const char **where);

/* A VM resumed from @t with its own identity; nvx_uvm_destroy() it. */
int nvx_uvm_clone(struct nvx_uvm_vm *vm, int nvx_fd,
		  const struct nvx_uvm_tmpl *t, const struct nvx_uvm_opts *o,
		  const char **where);

/* ----------------------------------------------- the system side --- */

struct nvx_uvm_serve {
	int in_fd;		/* what guest reads of fd 0 come from */
	int out_fd;		/* where guest writes of fd 1 go */
	int err_fd;		/* and of fd 2 */
	void *buf;		/* NVX_UVM_MAX_BULK bytes */
	uint64_t served;
	int gone;		/* VM_GONE notices seen */
	uint32_t last_exit;	/* status of the last EXIT message */
};

/*
 * Serve one received message the default way: WRITE to out_fd/err_fd,
 * READ from in_fd, EXIT and CLOCK, and IPC as a ping service (the reply's
 * payload[0..7] is the request's plus one). Returns the REPLY result (0
 * or -errno), or 1 for a VM_GONE notice.
 */
int nvx_uvm_serve_msg(int ep_fd, struct nvx_uvm_serve *s,
		      const struct nvx_uvm_recv *r);

/* Receive one message into @r (blocking), PUSH data into s->buf. */
int nvx_uvm_recv(int ep_fd, struct nvx_uvm_serve *s,
		 struct nvx_uvm_recv *r, uint32_t flags);

/*
 * The endpoint's message policy (NVX_UVM_EP_IOC_SET_POLICY and _GET_):
 * @p->vm_id / @vm_id 0 for the endpoint's, else a VM's. Return 0 or
 * -errno (-ENOTTY: a kernel without policies).
 */
int nvx_uvm_set_policy(int ep_fd, const struct nvx_uvm_policy *p);
int nvx_uvm_get_policy(int ep_fd, uint32_t vm_id, struct nvx_uvm_policy *p);

/*
 * The endpoint's SQ poller and RECV busy polling (NVX_UVM_EP_IOC_POLLER).
 * Return 0 or -errno (-ENOTTY: a kernel without pollers).
 */
int nvx_uvm_set_poller(int ep_fd, const struct nvx_uvm_poller *p);

/* A guest image by path or name: see lib/uvm.c. */
int nvx_uvm_find_image(const char *name, char *out, size_t n);

#endif /* NVX_UVM_LIB_H */
