// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: a minimal VMM for nvx user VMs, and the system side's default
 * service. nvx_uvm.h describes the guest memory layout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "nvx_uvm.h"

/**
 * nvx_uvm_reason_name() - name a stop reason
 * @r: an enum nvx_uvm_reason value or NVX_UVM_ERR_*.
 *
 * Return: a static string, "unknown" for other values.
 */
const char *nvx_uvm_reason_name(unsigned int r)
{
	static const char *const names[] = {
		[NVX_UVM_RUNNING] = "running",
		[NVX_UVM_DETACHED] = "detached",
		[NVX_UVM_ERR_PORT] = "bad-port",
		[NVX_UVM_ERR_RING] = "bad-ring",
		[NVX_UVM_ERR_MSG] = "bad-message",
		[NVX_UVM_ERR_SIZE] = "bad-size",
		[NVX_UVM_ERR_ADDR] = "bad-address",
		[NVX_UVM_ERR_FLOOD] = "flood",
		[NVX_UVM_ERR_ENDPOINT] = "endpoint-gone",
		[NVX_UVM_ERR_LIMIT] = "over-limit",
		[NVX_UVM_ERR_MEMORY] = "no-memory",
		[NVX_UVM_ERR_SHUTDOWN] = "shutdown",
		[NVX_UVM_ERR_VMM] = "vmm-error",
	};

	return r < NVX_UVM_ARRAY_SIZE(names) && names[r] ? names[r] :
							  "unknown";
}

/**
 * nvx_uvm_msg_name() - name a message type
 * @type: an NVX_UVM_MSG_* value.
 *
 * Return: a static string ("ipc", "openat"...), NULL for other values.
 */
const char *nvx_uvm_msg_name(unsigned int type)
{
	static const char *const names[] = {
		[NVX_UVM_MSG_IPC] = "ipc",
		[NVX_UVM_MSG_WRITE] = "write",
		[NVX_UVM_MSG_READ] = "read",
		[NVX_UVM_MSG_EXIT] = "exit",
		[NVX_UVM_MSG_CLOCK] = "clock",
		[NVX_UVM_MSG_RECV] = "recv",
		[NVX_UVM_MSG_OPENAT] = "openat",
		[NVX_UVM_MSG_CLOSE] = "close",
		[NVX_UVM_MSG_PREAD] = "pread",
		[NVX_UVM_MSG_PWRITE] = "pwrite",
		[NVX_UVM_MSG_LSEEK] = "lseek",
		[NVX_UVM_MSG_FSTAT] = "fstat",
		[NVX_UVM_MSG_GETDENTS] = "getdents",
		[NVX_UVM_MSG_MKDIR] = "mkdir",
		[NVX_UVM_MSG_UNLINK] = "unlink",
		[NVX_UVM_MSG_RENAME] = "rename",
		[NVX_UVM_MSG_FTRUNCATE] = "ftruncate",
		[NVX_UVM_MSG_FSYNC] = "fsync",
		[NVX_UVM_MSG_GETRANDOM] = "getrandom",
		[NVX_UVM_MSG_READY] = "ready",
		[NVX_UVM_MSG_SOCKET] = "socket",
		[NVX_UVM_MSG_BIND] = "bind",
		[NVX_UVM_MSG_LISTEN] = "listen",
		[NVX_UVM_MSG_ACCEPT] = "accept",
		[NVX_UVM_MSG_CONNECT] = "connect",
		[NVX_UVM_MSG_SEND] = "send",
		[NVX_UVM_MSG_SOCKRECV] = "sockrecv",
		[NVX_UVM_MSG_SHUTDOWN] = "shutdown",
		[NVX_UVM_MSG_POLL] = "poll",
	};

	return type < NVX_UVM_ARRAY_SIZE(names) ? names[type] : NULL;
}

/**
 * nvx_uvm_kvm_stat() - read one u64 statistic of KVM's binary stats fd
 * @stats_fd: from KVM_GET_STATS_FD.
 * @name: the statistic, e.g. "exits".
 *
 * Return: its value, or -1 when absent or unreadable.
 */
int64_t nvx_uvm_kvm_stat(int stats_fd, const char *name)
{
	struct kvm_stats_header h;
	size_t dsz;
	char *descs;
	uint32_t i;
	int64_t v = -1;

	if (pread(stats_fd, &h, sizeof(h), 0) != sizeof(h))
		return -1;
	dsz = sizeof(struct kvm_stats_desc) + h.name_size;
	descs = calloc(h.num_desc, dsz);
	if (!descs)
		return -1;
	if (pread(stats_fd, descs, h.num_desc * dsz, h.desc_offset) !=
	    (ssize_t)(h.num_desc * dsz))
		goto out;
	for (i = 0; i < h.num_desc; i++) {
		struct kvm_stats_desc *d = (void *)(descs + i * dsz);
		uint64_t val;

		if (strcmp(d->name, name))
			continue;
		if (pread(stats_fd, &val, sizeof(val),
			  h.data_offset + d->offset) == sizeof(val))
			v = (int64_t)val;
		break;
	}
out:
	free(descs);
	return v;
}

/**
 * nvx_uvm_destroy() - unmap and close what nvx_uvm_create() made
 * @vm: the VM; also one that nvx_uvm_create() failed to finish.
 */
void nvx_uvm_destroy(struct nvx_uvm_vm *vm)
{
	int *fds[] = { &vm->chan_fd, &vm->srq_fd, &vm->net_irq_fd,
		       &vm->stats_fd, &vm->irq_fd, &vm->vcpu_fd, &vm->vm_fd,
		       &vm->grant_fd, &vm->kvm_fd };
	unsigned int i;

	if (vm->run && vm->run != MAP_FAILED)
		munmap(vm->run, vm->run_size);
	vm->run = NULL;
	if (vm->mem && vm->mem != MAP_FAILED)
		munmap(vm->mem, vm->mem_size);
	vm->mem = NULL;
	for (i = 0; i < NVX_UVM_ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	vm->prepared = 0;
}

/* The image at NVX_UVM_IMAGE_GPA, below @top (the RAM's, or the net area). */
static int nvx_uvm__load(struct nvx_uvm_vm *vm, const char *path, uint64_t top)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    (uint64_t)st.st_size > top - NVX_UVM_IMAGE_GPA - 4096) {
		close(fd);
		return -EFBIG;
	}
	n = read(fd, (char *)vm->mem + NVX_UVM_IMAGE_GPA, st.st_size);
	close(fd);
	if (n != st.st_size)
		return n < 0 ? -errno : -EIO;
	vm->image_size = n;
	return 0;
}

/* 64-bit mode: GDT, identity page tables for 4 GiB, segment registers. */
static int nvx_uvm__long_mode(struct nvx_uvm_vm *vm)
{
	uint64_t *gdt = (uint64_t *)((char *)vm->mem + NVX_UVM_GDT_GPA);
	uint64_t *pml4 = (uint64_t *)((char *)vm->mem + NVX_UVM_PML4_GPA);
	uint64_t *pdpt = pml4 + 512, *pd = pml4 + 1024;
	struct kvm_segment cs = {
		.base = 0, .limit = 0xffffffff, .selector = 0x08, .type = 11,
		.present = 1, .dpl = 0, .db = 0, .s = 1, .l = 1, .g = 1,
	};
	struct kvm_segment ds = cs;
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	unsigned int i;

	gdt[0] = 0;
	gdt[1] = 0x00af9a000000ffffULL;	/* 64-bit code */
	gdt[2] = 0x00cf92000000ffffULL;	/* data */
	pml4[0] = (NVX_UVM_PML4_GPA + 0x1000) | 3;
	for (i = 0; i < 4; i++)
		pdpt[i] = (NVX_UVM_PML4_GPA + 0x2000 + i * 0x1000) | 3;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | 0x83;	/* P, RW, PS */

	if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	ds.selector = 0x10;
	ds.type = 3;
	ds.l = 0;
	ds.db = 1;
	sregs.cs = cs;
	sregs.ds = ds;
	sregs.es = ds;
	sregs.fs = ds;
	sregs.gs = ds;
	sregs.ss = ds;
	sregs.gdt.base = NVX_UVM_GDT_GPA;
	sregs.gdt.limit = 3 * 8 - 1;
	sregs.cr3 = NVX_UVM_PML4_GPA;
	sregs.cr4 = 1 << 5;				/* PAE */
	sregs.cr0 = 0x80050033;				/* PG WP NE ET MP PE */
	sregs.efer = (1 << 8) | (1 << 10);		/* LME LMA */
	if (ioctl(vm->vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;
	memset(&regs, 0, sizeof(regs));
	regs.rip = NVX_UVM_IMAGE_GPA;
	regs.rsp = NVX_UVM_STACK_GPA;
	regs.rdi = NVX_UVM_CTRL_GPA;
	regs.rflags = 2;
	if (ioctl(vm->vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

static int nvx_uvm__cpuid(struct nvx_uvm_vm *vm)
{
	struct kvm_cpuid2 *c;
	int n = 100, ret = 0;

	for (;;) {
		c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
		if (!c)
			return -ENOMEM;
		c->nent = n;
		if (!ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c))
			break;
		ret = -errno;
		free(c);
		if (ret != -E2BIG || n > 1000)
			return ret;
		n *= 2;
		ret = 0;
	}
	if (ioctl(vm->vcpu_fd, KVM_SET_CPUID2, c) < 0)
		ret = -errno;
	free(c);
	return ret;
}

static int nvx_uvm__irq(struct nvx_uvm_vm *vm)
{
	struct {
		struct kvm_irq_routing r;
		struct kvm_irq_routing_entry e[1];
	} rt;
	struct kvm_irqfd irqfd;

	memset(&rt, 0, sizeof(rt));
	rt.r.nr = 1;
	rt.e[0].gsi = NVX_UVM_IRQ_GSI;
	rt.e[0].type = KVM_IRQ_ROUTING_MSI;
	rt.e[0].u.msi.address_lo = 0xfee00000;	/* APIC id 0, physical */
	rt.e[0].u.msi.data = NVX_UVM_IRQ_VECTOR; /* fixed, edge */
	if (ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, &rt) < 0)
		return -errno;
	vm->irq_fd = eventfd(0, EFD_CLOEXEC);
	if (vm->irq_fd < 0)
		return -errno;
	memset(&irqfd, 0, sizeof(irqfd));
	irqfd.fd = vm->irq_fd;
	irqfd.gsi = NVX_UVM_IRQ_GSI;
	if (ioctl(vm->vm_fd, KVM_IRQFD, &irqfd) < 0)
		return -errno;
	return 0;
}

/* Boot arguments into the control page. */
static int nvx_uvm__args(struct nvx_uvm_vm *vm, int argc, char **argv)
{
	size_t off = 0, n;
	int i;

	for (i = 0; i < argc; i++) {
		n = strlen(argv[i]) + 1;
		if (off + n > NVX_UVM_ARGS_SIZE)
			return -E2BIG;
		memcpy(vm->ctrl->args + off, argv[i], n);
		off += n;
	}
	vm->ctrl->argc = argc;
	return 0;
}

/* Name the step, run it: 0, or -errno when it returned < 0. */
#define NVX_UVM_STEP(what, expr)	(*where = (what), (expr) < 0 ? -errno : 0)

/* An empty VM: every fd -1, nothing mapped. */
static void nvx_uvm__init(struct nvx_uvm_vm *vm, int slow)
{
	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = -1;
	vm->vm_fd = -1;
	vm->vcpu_fd = -1;
	vm->grant_fd = -1;
	vm->chan_fd = -1;
	vm->irq_fd = -1;
	vm->stats_fd = -1;
	vm->srq_fd = -1;
	vm->net_irq_fd = -1;
	vm->slow = slow;
}

/* The mapped RAM as the VM's memory slot 0. */
static int nvx_uvm__memslot(struct nvx_uvm_vm *vm, const char **where)
{
	struct kvm_userspace_memory_region region;

	memset(&region, 0, sizeof(region));
	region.guest_phys_addr = 0;
	region.memory_size = vm->mem_size;
	region.userspace_addr = (uintptr_t)vm->mem;
	return NVX_UVM_STEP("KVM_SET_USER_MEMORY_REGION",
			    ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION,
				  &region));
}

/* Map vm->grant_fd (vm->mem_size bytes) as the VM's RAM at GPA 0. */
static int nvx_uvm__map(struct nvx_uvm_vm *vm, const char **where)
{
	*where = "map guest RAM";
	vm->mem = mmap(NULL, vm->mem_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       vm->grant_fd, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		return -errno;
	}
	vm->ctrl = (struct nvx_uvm_ctrl *)((char *)vm->mem + NVX_UVM_CTRL_GPA);
	return nvx_uvm__memslot(vm, where);
}

/* The KVM VM without its RAM: irqchip, vCPU, irqfd. */
static int nvx_uvm__kvm(struct nvx_uvm_vm *vm, const char **where)
{
	int ret, sz;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	ret = NVX_UVM_STEP("open /dev/kvm", vm->kvm_fd);
	if (ret)
		return ret;
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	ret = NVX_UVM_STEP("KVM_CREATE_VM", vm->vm_fd);
	if (ret)
		return ret;
	ret = NVX_UVM_STEP("KVM_CREATE_IRQCHIP",
			   ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0));
	if (ret)
		return ret;
	vm->vcpu_fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, 0);
	ret = NVX_UVM_STEP("KVM_CREATE_VCPU", vm->vcpu_fd);
	if (ret)
		return ret;
	sz = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	ret = NVX_UVM_STEP("KVM_GET_VCPU_MMAP_SIZE", sz);
	if (ret)
		return ret;
	vm->run_size = sz;
	*where = "map kvm_run";
	vm->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       vm->vcpu_fd, 0);
	if (vm->run == MAP_FAILED) {
		vm->run = NULL;
		return -errno;
	}
	vm->stats_fd = ioctl(vm->vcpu_fd, KVM_GET_STATS_FD, 0);
	ret = NVX_UVM_STEP("KVM_GET_STATS_FD", vm->stats_fd);
	if (ret)
		return ret;
	*where = "KVM_SET_CPUID2";
	ret = nvx_uvm__cpuid(vm);
	if (ret)
		return ret;
	*where = "irqfd";
	ret = nvx_uvm__irq(vm);
	/* /dev/kvm itself is not needed once the VM is made */
	close(vm->kvm_fd);
	vm->kvm_fd = -1;
	return ret;
}

/* NVX_IOC_UVM_ATTACH with the standard layout. */
static int nvx_uvm__attach(struct nvx_uvm_vm *vm, int nvx_fd, int ep_fd,
			   uint32_t entries, const char **where)
{
	struct nvx_uvm_attach a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.flags = NVX_UVM_ATTACH_CLOEXEC | (vm->slow ? NVX_UVM_ATTACH_SLOW : 0);
	a.vm_fd = vm->vm_fd;
	a.grant_fd = vm->grant_fd;
	a.ep_fd = ep_fd;
	a.irq_fd = vm->irq_fd;
	a.sq_entries = entries;
	a.cq_entries = entries;
	a.ctrl_gpa = NVX_UVM_CTRL_GPA;
	a.sq_gpa = NVX_UVM_SQ_GPA;
	a.cq_gpa = NVX_UVM_CQ_GPA;
	ret = NVX_UVM_STEP("NVX_IOC_UVM_ATTACH",
			   ioctl(nvx_fd, NVX_IOC_UVM_ATTACH, &a));
	if (ret)
		return ret;
	vm->chan_fd = a.fd;
	vm->vm_id = a.vm_id;
	vm->entries = a.sq_entries;
	*where = NULL;
	return 0;
}

/**
 * nvx_uvm_create() - build a user VM and attach it to an endpoint
 * @vm: filled in.
 * @nvx_fd: the nvx device.
 * @o: the VM's shape, image and endpoint (@o->ep_fd).
 * @where: set to the name of the step that failed.
 *
 * Call nvx_uvm_destroy() on success and failure alike.
 *
 * Return: 0 or a negative errno.
 */
int nvx_uvm_create(struct nvx_uvm_vm *vm, int nvx_fd,
		   const struct nvx_uvm_opts *o,
		   const char **where)
{
	struct nvx_grant_create g;
	int ret, khz;

	nvx_uvm__init(vm, o->slow);
	ret = nvx_uvm__kvm(vm, where);
	if (ret)
		return ret;
	memset(&g, 0, sizeof(g));
	g.flags = NVX_GRANT_WAIT | NVX_GRANT_CLOEXEC | o->grant_flags;
	g.node = NVX_NODE_ANY;
	g.bytes = o->mem ? o->mem : 4ULL << 20;
	if (o->net) {
		/* the net area: 2 MiB above the RAM, below 4 GiB (mapped) */
		g.bytes = (g.bytes + NVX_UVM_NET_AREA - 1) &
			  ~(NVX_UVM_NET_AREA - 1);
		g.bytes += NVX_UVM_NET_AREA;
		*where = "network area";
		if (g.bytes > 4ULL << 30)
			return -E2BIG;
	}
	ret = NVX_UVM_STEP("grant guest RAM", ioctl(nvx_fd, NVX_IOC_GRANT, &g));
	if (ret)
		return ret;
	vm->grant_fd = g.fd;
	vm->mem_size = g.granted;
	ret = nvx_uvm__map(vm, where);
	if (ret)
		return ret;
	*where = "64-bit mode";
	ret = nvx_uvm__long_mode(vm);
	if (ret)
		return ret;
	*where = "load image";
	ret = nvx_uvm__load(vm, o->image, o->net ? vm->mem_size -
			    NVX_UVM_NET_AREA : vm->mem_size);
	if (ret)
		return ret;
	*where = "boot arguments";
	ret = nvx_uvm__args(vm, o->argc, o->argv);
	if (ret)
		return ret;
	khz = ioctl(vm->vcpu_fd, KVM_GET_TSC_KHZ, 0);
	vm->ctrl->tsc_khz = khz > 0 ? khz : 1000000;
	vm->ctrl->irq_vector = NVX_UVM_IRQ_VECTOR;
	if (o->net) {
		ret = nvx_uvm_net_setup(vm, nvx_fd, o->net, where);
		if (ret)
			return ret;
	}
	return nvx_uvm__attach(vm, nvx_fd, o->ep_fd, o->entries, where);
}

/**
 * nvx_uvm_plain_mem() - RAM for VMs that nvx does not know
 * @path: the guest image.
 * @mem_size: bytes.
 *
 * Return: a memfd (close-on-exec) of @mem_size bytes holding the image
 * at NVX_UVM_IMAGE_GPA, for nvx_uvm_plain(); or a negative errno.
 */
int nvx_uvm_plain_mem(const char *path, uint64_t mem_size)
{
	char buf[65536];
	off_t off = NVX_UVM_IMAGE_GPA;
	ssize_t n = 0;
	int fd, img, ret = 0;

	fd = memfd_create("nvx-plain", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	img = open(path, O_RDONLY | O_CLOEXEC);
	if (img < 0 || ftruncate(fd, mem_size) < 0)
		ret = -errno;
	while (!ret && (n = read(img, buf, sizeof(buf))) > 0) {
		if ((uint64_t)(off + n) > mem_size - 4096)
			ret = -EFBIG;
		else if (pwrite(fd, buf, n, off) != n)
			ret = errno ? -errno : -EIO;
		off += n;
	}
	if (!ret && n < 0)
		ret = -errno;
	/* an empty image, as nvx_uvm__load() refuses it */
	if (!ret && off == NVX_UVM_IMAGE_GPA)
		ret = -EFBIG;
	if (img >= 0)
		close(img);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/**
 * nvx_uvm_plain() - a KVM VM that nvx does not know (a control)
 * @vm: filled in; nvx_uvm_destroy() it on success and failure alike.
 * @mem_fd: from nvx_uvm_plain_mem(), mapped private (copy-on-write).
 * @mem_size: bytes to map, at most @mem_fd's size.
 * @argc: the guest's arguments...
 * @argv: ... into the control page.
 * @where: set to the name of the step that failed.
 *
 * The KVM VM of nvx_uvm_create() without a grant or a channel: the
 * control page is written here as ATTACH would write it (its rings
 * unused: the guest must not send a message).
 *
 * Return: 0 or a negative errno.
 */
int nvx_uvm_plain(struct nvx_uvm_vm *vm, int mem_fd, uint64_t mem_size,
		  int argc, char **argv, const char **where)
{
	struct stat st;
	int ret, khz;

	nvx_uvm__init(vm, 0);
	ret = nvx_uvm__kvm(vm, where);
	if (ret)
		return ret;
	*where = "map guest RAM";
	if (fstat(mem_fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < mem_size)
		return -EINVAL;
	vm->mem = mmap(NULL, mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		       mem_fd, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		return -errno;
	}
	vm->mem_size = mem_size;
	vm->ctrl = (struct nvx_uvm_ctrl *)((char *)vm->mem + NVX_UVM_CTRL_GPA);
	ret = nvx_uvm__memslot(vm, where);
	if (ret)
		return ret;
	*where = "64-bit mode";
	ret = nvx_uvm__long_mode(vm);
	if (ret)
		return ret;
	*where = "boot arguments";
	ret = nvx_uvm__args(vm, argc, argv);
	if (ret)
		return ret;
	/* what NVX_IOC_UVM_ATTACH would write; the rings stay unused */
	vm->entries = NVX_UVM_DEF_ENTRIES;
	vm->ctrl->magic = NVX_UVM_CTRL_MAGIC;
	vm->ctrl->version = NVX_UVM_CTRL_VERSION;
	vm->ctrl->ctrl_size = sizeof(*vm->ctrl);
	vm->ctrl->mem_size = mem_size;
	vm->ctrl->sq_gpa = NVX_UVM_SQ_GPA;
	vm->ctrl->cq_gpa = NVX_UVM_CQ_GPA;
	vm->ctrl->sq_entries = vm->entries;
	vm->ctrl->cq_entries = vm->entries;
	khz = ioctl(vm->vcpu_fd, KVM_GET_TSC_KHZ, 0);
	vm->ctrl->tsc_khz = khz > 0 ? khz : 1000000;
	vm->ctrl->irq_vector = NVX_UVM_IRQ_VECTOR;
	*where = NULL;
	return 0;
}

/*
 * The vCPU state a template keeps, in the order it is written back (the
 * segment and control registers before the general ones, XCR0 before
 * the XSAVE area it enables).
 */
static const struct {
	unsigned long get, set;
	const char *get_name, *set_name;
	size_t off;
} nvx_uvm_vcpu_state[] = {
#define NVX_UVM_STATE(name, member)					\
	{ KVM_GET_##name, KVM_SET_##name, "KVM_GET_" #name,		\
	  "KVM_SET_" #name, offsetof(struct nvx_uvm_tmpl, member) }
	NVX_UVM_STATE(SREGS, sregs),
	NVX_UVM_STATE(REGS, regs),
	NVX_UVM_STATE(XCRS, xcrs),
	NVX_UVM_STATE(XSAVE, xsave),
	NVX_UVM_STATE(LAPIC, lapic),
	NVX_UVM_STATE(VCPU_EVENTS, events),
#undef NVX_UVM_STATE
};

/* Read (@set false) or write back the vCPU state of @t. */
static int nvx_uvm__state(struct nvx_uvm_vm *vm, struct nvx_uvm_tmpl *t,
			  bool set, const char **where)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < NVX_UVM_ARRAY_SIZE(nvx_uvm_vcpu_state) && !ret; i++)
		ret = NVX_UVM_STEP(set ? nvx_uvm_vcpu_state[i].set_name :
					 nvx_uvm_vcpu_state[i].get_name,
				   ioctl(vm->vcpu_fd,
					 set ? nvx_uvm_vcpu_state[i].set :
					       nvx_uvm_vcpu_state[i].get,
					 (char *)t + nvx_uvm_vcpu_state[i].off));
	return ret;
}

/*
 * The vCPU's state at the ready point. KVM_RUN with immediate_exit first
 * completes the port write the vCPU exited for (its rip moves past the
 * out), then returns EINTR without entering the guest.
 */
static int nvx_uvm__save(struct nvx_uvm_vm *vm, struct nvx_uvm_tmpl *t,
			 const char **where)
{
	int ret;

	vm->run->immediate_exit = 1;
	ret = ioctl(vm->vcpu_fd, KVM_RUN, 0);
	vm->run->immediate_exit = 0;
	*where = "KVM_RUN (complete the ready point)";
	if (ret == 0 || errno != EINTR)
		return ret ? -errno : -EPROTO;
	return nvx_uvm__state(vm, t, false, where);
}

static int nvx_uvm__restore(struct nvx_uvm_vm *vm,
			    const struct nvx_uvm_tmpl *t, const char **where)
{
	/* the KVM_SET_* ioctls only read it */
	return nvx_uvm__state(vm, (struct nvx_uvm_tmpl *)t, true, where);
}

/**
 * nvx_uvm_tmpl_make() - boot a user VM to its ready point, freeze it
 * @t: filled in; nvx_uvm_tmpl_free() it on success.
 * @nvx_fd: the nvx device.
 * @o: as for nvx_uvm_create(); the guest must reach its ready point
 *	(NVX_UVM_PORT_READY) with its messages served meanwhile on
 *	@o->ep_fd.
 * @where: set to the name of the step that failed.
 *
 * The VM is taken down at the ready point (its channel closed: the
 * system side sees it gone), its RAM sealed into a template grant
 * (NVX_GRANT_IOC_SEAL) and its vCPU state kept in @t.
 *
 * Return: 0, -ENOEXEC when the guest exited or was stopped before its
 * ready point (@t->exit_status, @t->reason), -EBUSY when it had messages
 * in flight there (the runtime's ready_point() never does that),
 * -EINVAL with @o->net (clones cannot have one), or another negative
 * errno.
 */
int nvx_uvm_tmpl_make(struct nvx_uvm_tmpl *t, int nvx_fd,
		      const struct nvx_uvm_opts *o, const char **where)
{
	struct nvx_grant_seal seal = { 0 };
	struct nvx_uvm_status st;
	struct nvx_uvm_vm vm;
	int ret, i;

	memset(t, 0, sizeof(*t));
	t->grant_fd = -1;
	if (o->net) {
		/* a clone's grant cannot carry a set: its pages are shared */
		*where = "a template with a network";
		return -EINVAL;
	}
	ret = nvx_uvm_create(&vm, nvx_fd, o, where);
	if (ret)
		goto out;
	vm.stop_at_ready = 1;
	ret = nvx_uvm_run(&vm);
	if (ret != 1) {
		*where = "run to the ready point";
		t->exit_status = vm.exit_status;
		t->reason = vm.reason;
		ret = ret < 0 && ret != -EIO ? ret : -ENOEXEC;
		goto out;
	}
	/*
	 * Nothing may be in flight, published or completed unread: a clone
	 * starts with empty rings.
	 */
	*where = "ready point with messages in flight";
	ret = nvx_uvm_status(&vm, &st);
	if (ret)
		goto out;
	if (st.in_flight || vm.ctrl->sq_prod != vm.ctrl->sq_cons ||
	    vm.ctrl->cq_prod != vm.ctrl->cq_cons) {
		ret = -EBUSY;
		goto out;
	}
	ret = nvx_uvm__save(&vm, t, where);
	if (ret)
		goto out;
	t->mem_size = vm.mem_size;
	t->entries = vm.entries;
	t->tsc_khz = vm.ctrl->tsc_khz;
	if (o->argc > 0)
		snprintf(t->name, sizeof(t->name), "%s", o->argv[0]);
	/* keep the RAM, drop the rest: no mapping, no channel holds it */
	t->grant_fd = vm.grant_fd;
	vm.grant_fd = -1;
	nvx_uvm_destroy(&vm);
	/* the channel lets go of the grant when its last user is done */
	*where = "NVX_GRANT_IOC_SEAL";
	for (i = 0; i < 2000; i++) {
		ret = ioctl(t->grant_fd, NVX_GRANT_IOC_SEAL, &seal) < 0 ?
		      -errno : 0;
		if (ret != -EBUSY)
			break;
		usleep(1000);
	}
	if (ret) {
		nvx_uvm_tmpl_free(t);
		return ret;
	}
	*where = NULL;
	return 0;
out:
	nvx_uvm_destroy(&vm);
	return ret;
}

/**
 * nvx_uvm_tmpl_free() - close a template's grant
 * @t: from nvx_uvm_tmpl_make(); clones made from it live on.
 */
void nvx_uvm_tmpl_free(struct nvx_uvm_tmpl *t)
{
	if (t->grant_fd >= 0)
		close(t->grant_fd);
	t->grant_fd = -1;
}

/**
 * nvx_uvm_prepare() - a KVM VM ahead of demand, for nvx_uvm_clone()
 * @vm: filled in: the KVM VM, its irqchip, vCPU, kvm_run, statistics
 *	and irqfd, no RAM, not attached. nvx_uvm_destroy() it when unused.
 * @where: set to the name of the step that failed.
 *
 * Return: 0 or a negative errno.
 */
int nvx_uvm_prepare(struct nvx_uvm_vm *vm, const char **where)
{
	int ret;

	nvx_uvm__init(vm, 0);
	ret = nvx_uvm__kvm(vm, where);
	if (!ret)
		vm->prepared = 1;
	return ret;
}

/**
 * nvx_uvm_clone() - a user VM started from a template
 * @vm: zeroed, or from nvx_uvm_prepare(); filled in.
 * @nvx_fd: the nvx device.
 * @t: the template.
 * @o: the endpoint (@o->ep_fd), @o->slow, and the clone's arguments
 *	(@o->argc, @o->argv; with @o->argc 0 the template's); the rest of
 *	@o is not used.
 * @where: set to the name of the step that failed.
 *
 * RAM is a copy-on-write clone of the template's (NVX_GRANT_IOC_CLONE),
 * the vCPU resumes after the ready point with the template's registers,
 * and ATTACH gives it its own identity (vm_id, seed) and rings. @vm may
 * come from nvx_uvm_prepare() (its KVM VM made ahead of demand), else it
 * is made here. Call nvx_uvm_destroy() on success and failure alike.
 *
 * Return: 0 or a negative errno.
 */
int nvx_uvm_clone(struct nvx_uvm_vm *vm, int nvx_fd,
		  const struct nvx_uvm_tmpl *t, const struct nvx_uvm_opts *o,
		  const char **where)
{
	struct nvx_grant_clone c = { .flags = NVX_CLONE_CLOEXEC };
	int ret;

	if (!vm->prepared) {
		ret = nvx_uvm_prepare(vm, where);
		if (ret)
			return ret;
	}
	vm->prepared = 0;
	vm->slow = o->slow;
	ret = NVX_UVM_STEP("NVX_GRANT_IOC_CLONE",
			   ioctl(t->grant_fd, NVX_GRANT_IOC_CLONE, &c));
	if (ret)
		return ret;
	vm->grant_fd = c.fd;
	vm->mem_size = c.bytes;
	ret = nvx_uvm__map(vm, where);
	if (!ret)
		ret = nvx_uvm__restore(vm, t, where);
	if (ret)
		return ret;
	if (o->argc) {
		*where = "boot arguments";
		ret = nvx_uvm__args(vm, o->argc, o->argv);
		if (ret)
			return ret;
	}
	return nvx_uvm__attach(vm, nvx_fd, o->ep_fd, t->entries, where);
}

#undef NVX_UVM_STEP

/**
 * nvx_uvm_status() - the channel's status (NVX_UVM_CHAN_IOC_STATUS)
 * @vm: the VM.
 * @st: filled in.
 *
 * Return: 0 or -errno.
 */
int nvx_uvm_status(struct nvx_uvm_vm *vm, struct nvx_uvm_status *st)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(vm->chan_fd, NVX_UVM_CHAN_IOC_STATUS, st) < 0)
		return -errno;
	return 0;
}

/*
 * After a triple fault: what the vCPU's state says, into @vm->fault
 * (registers, descriptor tables, pending events, the bytes at RIP when
 * they are in guest RAM: the runtime's addresses are physical ones).
 * Returns RIP, or 0 when KVM would not say. On Intel (VMX) that is the
 * state at the fault; on AMD (SVM), KVM has reset the vCPU before it
 * returns KVM_EXIT_SHUTDOWN (rip 0xfff0, cr0 0x10): there only the
 * interrupt being injected, if any, is left (irq N/VECTOR), and the
 * kvm_exit tracepoint is what shows where it was (testing.rst).
 */
static uint64_t nvx_uvm_fault_state(struct nvx_uvm_vm *vm)
{
	struct kvm_vcpu_events ev = { 0 };
	struct kvm_sregs sr = { 0 };
	struct kvm_regs regs;
	const uint8_t *code = NULL;
	size_t n;
	int i;

	if (ioctl(vm->vcpu_fd, KVM_GET_REGS, &regs))
		return 0;
	ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sr);
	ioctl(vm->vcpu_fd, KVM_GET_VCPU_EVENTS, &ev);
	n = snprintf(vm->fault, sizeof(vm->fault),
		     "rip %llx rsp %llx rflags %llx cr0 %llx cr2 %llx cr3 %llx cr4 %llx idt %llx/%x gdt %llx/%x exc %u/%u/%u irq %u/%u shadow %u",
		     regs.rip, regs.rsp, regs.rflags, sr.cr0, sr.cr2, sr.cr3,
		     sr.cr4, sr.idt.base, sr.idt.limit, sr.gdt.base,
		     sr.gdt.limit, ev.exception.injected, ev.exception.pending,
		     ev.exception.nr, ev.interrupt.injected, ev.interrupt.nr,
		     ev.interrupt.shadow);
	if (vm->mem && regs.rip < vm->mem_size - 8)
		code = (const uint8_t *)vm->mem + regs.rip;
	for (i = 0; code && i < 8 && n < sizeof(vm->fault) - 4; i++)
		n += snprintf(vm->fault + n, sizeof(vm->fault) - n, "%s%02x",
			      i ? "" : " code ", code[i]);
	return regs.rip;
}

/* The eight 32-bit words of a LAPIC bit map at @off, highest first. */
static size_t nvx_uvm_apic_map(char *buf, size_t len, const char *name,
			       const struct kvm_lapic_state *l,
			       unsigned int off)
{
	size_t n = snprintf(buf, len, " %s ", name);
	uint32_t w;
	int i;

	for (i = 7; i >= 0 && n < len; i--) {
		memcpy(&w, l->regs + off + i * 0x10, sizeof(w));
		n += snprintf(buf + n, len - n, "%08x", w);
	}
	return n;
}

/**
 * nvx_uvm_describe() - a stopped vCPU's state, in words
 * @vm: a VM whose nvx_uvm_run() has returned (its vCPU not running).
 * @buf: filled in, NUL-terminated.
 * @len: its size.
 *
 * For a guest that stopped making progress: where it is (rip, rflags,
 * whether KVM holds it halted), what KVM has pending or is injecting, the
 * interrupt shadow, and its local APIC (TPR, PPR, the ISR and IRR bit
 * maps, the timer's LVT, initial and current count). An ISR bit with no
 * handler running means an interrupt that was taken off the IRR but
 * never delivered: it blocks every vector of its priority class or
 * lower until an EOI that will not come.
 *
 * Return: 0, or -errno when KVM would not say.
 */
int nvx_uvm_describe(struct nvx_uvm_vm *vm, char *buf, size_t len)
{
	struct kvm_vcpu_events ev = { 0 };
	struct kvm_mp_state mp = { .mp_state = ~0U };	/* unknown */
	struct kvm_lapic_state *l;
	struct kvm_regs regs;
	uint32_t tpr, ppr, lvtt, tmict, tmcct;
	size_t n;

	if (ioctl(vm->vcpu_fd, KVM_GET_REGS, &regs))
		return -errno;
	ioctl(vm->vcpu_fd, KVM_GET_VCPU_EVENTS, &ev);
	ioctl(vm->vcpu_fd, KVM_GET_MP_STATE, &mp);
	n = snprintf(buf, len,
		     "rip %llx rflags %llx mp_state %u irq %u/%u shadow %u nmi %u/%u",
		     regs.rip, regs.rflags, mp.mp_state, ev.interrupt.injected,
		     ev.interrupt.nr, ev.interrupt.shadow, ev.nmi.injected,
		     ev.nmi.pending);
	l = calloc(1, sizeof(*l));
	if (!l || n >= len || ioctl(vm->vcpu_fd, KVM_GET_LAPIC, l)) {
		free(l);
		return 0;
	}
	memcpy(&tpr, l->regs + 0x80, 4);
	memcpy(&ppr, l->regs + 0xa0, 4);
	memcpy(&lvtt, l->regs + 0x320, 4);
	memcpy(&tmict, l->regs + 0x380, 4);
	memcpy(&tmcct, l->regs + 0x390, 4);
	n += snprintf(buf + n, len - n,
		      " apic tpr %x ppr %x lvtt %x tmict %u tmcct %u", tpr, ppr,
		      lvtt, tmict, tmcct);
	if (n < len)
		n += nvx_uvm_apic_map(buf + n, len - n, "isr", l, 0x100);
	if (n < len)
		nvx_uvm_apic_map(buf + n, len - n, "irr", l, 0x200);
	free(l);
	return 0;
}

/**
 * nvx_uvm_run() - the vCPU loop
 * @vm: a VM from nvx_uvm_create().
 *
 * Return: 0 when the guest wrote NVX_UVM_PORT_EXIT (@vm->exit_status),
 * -EIO when the VM was stopped (@vm->reason and @vm->detail say why),
 * -EINTR when @vm->stop was set, or another errno from KVM.
 */
int nvx_uvm_run(struct nvx_uvm_vm *vm)
{
	struct nvx_uvm_status st;
	struct kvm_run *run = vm->run;

	for (;;) {
		if (__atomic_load_n(&vm->stop, __ATOMIC_RELAXED))
			return -EINTR;
		if (ioctl(vm->vcpu_fd, KVM_RUN, 0) < 0) {
			int err = errno;

			vm->runs++;
			if (err == EINTR || err == EAGAIN)
				continue;
			if (err == EIO && !nvx_uvm_status(vm, &st) &&
			    st.reason) {
				vm->reason = st.reason;
				vm->detail = st.detail;
				return -EIO;
			}
			vm->reason = NVX_UVM_ERR_VMM;
			vm->detail = err;
			return -err;
		}
		vm->runs++;
		switch (run->exit_reason) {
		case KVM_EXIT_IO: {
			uint8_t *data = (uint8_t *)run + run->io.data_offset;
			uint32_t v = 0;

			if (run->io.direction == KVM_EXIT_IO_OUT) {
				memcpy(&v, data, run->io.size < 4 ?
				       run->io.size : 4);
				if (run->io.port == NVX_UVM_PORT_EXIT) {
					vm->exit_status = v;
					return 0;
				}
				if (run->io.port == NVX_VMNET_PORT_KICK &&
				    vm->srq_fd >= 0) {
					nvx_uvm_net_kick(vm);
					continue;
				}
				if (run->io.port == NVX_UVM_PORT_READY) {
					if (vm->stop_at_ready)
						return 1;
					continue;
				}
				if (vm->slow &&
				    run->io.port == NVX_UVM_PORT_DOORBELL) {
					struct nvx_uvm_kick k = {
						.port = run->io.port,
						.value = v,
					};

					vm->kicks++;
					if (ioctl(vm->chan_fd, NVX_UVM_CHAN_IOC_KICK,
						  &k) < 0) {
						vm->reason = NVX_UVM_ERR_VMM;
						vm->detail = errno;
						return -EIO;
					}
					continue;
				}
			}
			vm->reason = NVX_UVM_ERR_PORT;
			vm->detail = run->io.port;
			return -EIO;
		}
		case KVM_EXIT_INTR:
			continue;
		case KVM_EXIT_SHUTDOWN:
			/* a triple fault: the detail is where */
			vm->reason = NVX_UVM_ERR_SHUTDOWN;
			vm->detail = nvx_uvm_fault_state(vm);
			return -EIO;
		default:
			vm->reason = NVX_UVM_ERR_VMM;
			vm->detail = run->exit_reason;
			return -EIO;
		}
	}
}

static uint32_t nvx_uvm_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/**
 * nvx_uvm_serve_msg() - serve one received message the default way
 * @ep_fd: the endpoint.
 * @s: the service's files, buffer and counters.
 * @r: the message, from nvx_uvm_recv().
 *
 * WRITE goes to @s->out_fd/@s->err_fd, READ comes from @s->in_fd, EXIT
 * and CLOCK are answered, and IPC as a ping service (the reply's
 * payload[0..7] is the request's plus one).
 *
 * Return: the REPLY result (0 or -errno), or 1 for a VM_GONE notice.
 */
int nvx_uvm_serve_msg(int ep_fd, struct nvx_uvm_serve *s,
		      const struct nvx_uvm_recv *r)
{
	struct nvx_uvm_reply rep;
	const struct nvx_uvm_msg *m = &r->msg;
	uint32_t fd = nvx_uvm_u32(m->payload);
	struct timespec ts;
	uint64_t v;
	ssize_t n;

	if (m->type == NVX_UVM_MSG_VM_GONE) {
		s->gone++;
		return 1;
	}
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r->cookie;
	rep.msg.type = m->type;
	switch (m->type) {
	case NVX_UVM_MSG_WRITE: {
		int out = fd == 1 ? s->out_fd : fd == 2 ? s->err_fd : -1;
		uint32_t len = r->data_len < NVX_UVM_MAX_BULK ?
			       r->data_len : NVX_UVM_MAX_BULK;
		uint32_t done = 0;

		if (out < 0) {
			rep.msg.status = -EBADF;
			break;
		}
		while (done < len) {
			n = write(out, (char *)s->buf + done, len - done);
			if (n <= 0) {
				rep.msg.status = n < 0 ? -errno : -EIO;
				break;
			}
			done += n;
		}
		break;
	}
	case NVX_UVM_MSG_READ:
		if (fd != 0 || s->in_fd < 0) {
			rep.msg.status = -EBADF;
			break;
		}
		n = read(s->in_fd, s->buf, r->data_len < NVX_UVM_MAX_BULK ?
			 r->data_len : NVX_UVM_MAX_BULK);
		if (n < 0) {
			rep.msg.status = -errno;
			break;
		}
		rep.buf = (uintptr_t)s->buf;
		rep.buf_len = n;
		break;
	case NVX_UVM_MSG_EXIT:
		s->last_exit = fd;
		break;
	case NVX_UVM_MSG_CLOCK:
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		memcpy(rep.msg.payload, &v, sizeof(v));
		break;
	case NVX_UVM_MSG_IPC:
		memcpy(&v, m->payload, sizeof(v));
		v++;
		memcpy(rep.msg.payload, &v, sizeof(v));
		break;
	default:
		rep.msg.status = -EOPNOTSUPP;
		break;
	}
	s->served++;
	if (ioctl(ep_fd, NVX_UVM_EP_IOC_REPLY, &rep) < 0)
		return -errno;
	return 0;
}

/**
 * nvx_uvm_recv() - receive one message (NVX_UVM_EP_IOC_RECV)
 * @ep_fd: the endpoint.
 * @s: PUSH data lands in @s->buf.
 * @r: filled in.
 * @flags: NVX_UVM_RECV_* flags.
 *
 * Return: 0 or -errno.
 */
int nvx_uvm_recv(int ep_fd, struct nvx_uvm_serve *s,
		 struct nvx_uvm_recv *r, uint32_t flags)
{
	memset(r, 0, sizeof(*r));
	r->flags = flags;
	r->buf = (uintptr_t)s->buf;
	r->buf_len = NVX_UVM_MAX_BULK;
	if (ioctl(ep_fd, NVX_UVM_EP_IOC_RECV, r) < 0)
		return -errno;
	return 0;
}

/**
 * nvx_uvm_set_policy() - set an endpoint's message policy
 * @ep_fd: the endpoint.
 * @p: the policy (NVX_UVM_EP_IOC_SET_POLICY): @p->vm_id 0 for the
 *	endpoint's, a VM's id for that VM's own.
 *
 * Return: 0 or -errno (-ENOTTY: a kernel without policies).
 */
int nvx_uvm_set_policy(int ep_fd, const struct nvx_uvm_policy *p)
{
	struct nvx_uvm_policy c = *p;

	if (ioctl(ep_fd, NVX_UVM_EP_IOC_SET_POLICY, &c) < 0)
		return -errno;
	return 0;
}

/**
 * nvx_uvm_set_poller() - set an endpoint's pollers
 * @ep_fd: the endpoint.
 * @p: the settings (NVX_UVM_EP_IOC_POLLER): NVX_UVM_POLLER_SQ for a
 *	kernel poller of the VMs' submission rings, recv_busy_us for RECV's
 *	busy polling; all zero stops both.
 *
 * Return: 0 or -errno (-ENOTTY: a kernel without pollers).
 */
int nvx_uvm_set_poller(int ep_fd, const struct nvx_uvm_poller *p)
{
	struct nvx_uvm_poller c = *p;

	if (ioctl(ep_fd, NVX_UVM_EP_IOC_POLLER, &c) < 0)
		return -errno;
	return 0;
}

/**
 * nvx_uvm_get_policy() - read an endpoint's message policy
 * @ep_fd: the endpoint.
 * @vm_id: 0 for the endpoint's policy, a VM's id for the one it runs
 *	under (NVX_UVM_POLICY_OWN set in @p->flags when it is its own).
 * @p: filled in (NVX_UVM_EP_IOC_GET_POLICY).
 *
 * Return: 0 or -errno.
 */
int nvx_uvm_get_policy(int ep_fd, uint32_t vm_id, struct nvx_uvm_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->vm_id = vm_id;
	if (ioctl(ep_fd, NVX_UVM_EP_IOC_GET_POLICY, p) < 0)
		return -errno;
	return 0;
}

/**
 * nvx_uvm_find_image() - find a guest image
 * @name: a path, or the name of an image.
 * @out: the path found.
 * @n: the size of @out.
 *
 * @name as given when it names a file; else NAME or NAME.img in
 * $NVX_GUEST_DIR, in guest/ beside the running program, or in
 * /usr/lib/nvx/guest.
 *
 * Return: 0, or -ENOENT or another -errno.
 */
int nvx_uvm_find_image(const char *name, char *out, size_t n)
{
	char self[PATH_MAX], dir[PATH_MAX + 8];
	const char *dirs[3] = { getenv("NVX_GUEST_DIR"), dir,
				"/usr/lib/nvx/guest" };
	const char *sfx[2] = { "", ".img" };
	ssize_t len;
	unsigned int i, j;

	if (strchr(name, '/') || !access(name, R_OK)) {
		snprintf(out, n, "%s", name);
		return access(out, R_OK) ? -errno : 0;
	}
	dir[0] = 0;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = 0;
		*strrchr(self, '/') = 0;
		snprintf(dir, sizeof(dir), "%s/guest", self);
	}
	for (i = 0; i < 3; i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		for (j = 0; j < 2; j++) {
			snprintf(out, n, "%s/%s%s", dirs[i], name, sfx[j]);
			if (!access(out, R_OK))
				return 0;
		}
	}
	return -ENOENT;
}
