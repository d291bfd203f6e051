// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: a user VM's network. The VMM makes a shared RX queue set with
 * its rings in the VM's own memory (NVX_SRQ_RINGS_IN_GRANT), steered to
 * the VM's IPv4 address, with a TX ring beside it and the set's
 * notification bound to the VM's interrupt (an irqfd), and describes it
 * to the guest in the network page (nvx_vmnet.h). Frames then reach the
 * guest with no copy and no exit; the VMM sees only TX kicks.
 *
 * The net area, the last NVX_UVM_NET_AREA (2 MiB, one aligned piece of
 * the grant) of the RAM:
 *
 *   +0          the buffers (at most 1 MiB)
 *   +1 MiB      the ring area (at most 64 KiB: inside one block of a
 *               grant made of blocks too)
 *   +1088 KiB   the TX ring (header and NVX_UVM_NET_TX descriptors)
 *   +1152 KiB   NVX_UVM_NET_TX frame slots of NVX_UVM_NET_SLOT bytes
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <nvx/srq.h>

#include "nvx_uvm.h"

#define NET_RING_OFF	(1ULL << 20)
#define NET_RING_MAX	(64ULL << 10)
#define NET_TX_OFF	(NET_RING_OFF + NET_RING_MAX)
#define NET_SLOT_OFF	(NET_TX_OFF + (64ULL << 10))

/* Name the step, run it: 0, or -errno when it returned < 0. */
#define NVX_NET_STEP(what, expr)	(*where = (what), (expr) < 0 ? -errno : 0)

/**
 * nvx_uvm_net_parse_ip() - parse "IP[/PREFIX]"
 * @n: its ip4 and prefix are set.
 * @s: a dotted-quad IPv4 address other than 0.0.0.0, optionally with a
 *	prefix length of 1 to 32 (24 when absent).
 *
 * Return: 0 or -EINVAL.
 */
int nvx_uvm_net_parse_ip(struct nvx_uvm_net *n, const char *s)
{
	char buf[32], *slash, *end;
	struct in_addr a;
	unsigned long p = 24;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	slash = strchr(buf, '/');
	if (slash) {
		*slash++ = '\0';
		errno = 0;
		p = strtoul(slash, &end, 10);
		if (errno || end == slash || *end || p < 1 || p > 32)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, buf, &a) != 1 || !a.s_addr)
		return -EINVAL;
	n->ip4 = a.s_addr;
	n->prefix = p;
	return 0;
}

/* The NIC's MTU, or 1500 when it cannot be read. */
static unsigned int nvx_net_mtu(unsigned int ifindex)
{
	struct ifreq ifr;
	int s, mtu = 1500;

	memset(&ifr, 0, sizeof(ifr));
	if (!if_indextoname(ifindex, ifr.ifr_name))
		return mtu;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return mtu;
	if (!ioctl(s, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

static bool nvx_net_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* The set on the net area, taking @n->ip4's frames. */
static int nvx_net_set(struct nvx_uvm_vm *vm, int nvx_fd,
		       const struct nvx_uvm_net *n, uint64_t area,
		       struct nvx_srq_create *c, const char **where)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->flags = NVX_SRQ_CLOEXEC | NVX_SRQ_RINGS_IN_GRANT;
	c->ifindex = n->ifindex;
	c->grant_fd = vm->grant_fd;
	c->grant_offset = area;
	c->params.nr_queues = 1;
	c->params.nr_bufs = n->nr_bufs ? n->nr_bufs : NVX_UVM_NET_BUFS;
	c->params.buf_size = NVX_SRQ_DEF_BUF_SIZE;
	c->params.cq_entries = n->cq_entries ? n->cq_entries : 1024;
	c->params.rel_entries = c->params.cq_entries;
	c->params.nr_rel_rings = 1;
	c->ring_offset = area + NET_RING_OFF;
	c->match = NVX_SRQ_MATCH_IP4;
	c->ip4 = n->ip4;
	ret = NVX_NET_STEP("NVX_IOC_SRQ_CREATE",
			   ioctl(nvx_fd, NVX_IOC_SRQ_CREATE, c));
	if (ret)
		return ret;
	vm->srq_fd = c->fd;
	/* NVX_UVM_NET_MAX_CQ keeps it so: a check, not a limit */
	*where = "ring area over 64 KiB";
	return c->layout.ring_bytes > NET_RING_MAX ? -E2BIG : 0;
}

/* The TX ring, and completion ring 0's notification as the VM's irq. */
static int nvx_net_tx_irq(struct nvx_uvm_vm *vm, uint64_t area,
			  const char **where)
{
	struct nvx_srq_tx_ring tx = {
		.entries = NVX_UVM_NET_TX,
		.offset = area + NET_TX_OFF,
	};
	struct nvx_srq_notify nt = {
		.flags = NVX_SRQ_NOTIFY_EVENTFD,
		.queue = 0,
	};
	struct kvm_irqfd irqfd;
	int ret;

	ret = NVX_NET_STEP("NVX_SRQ_IOC_TX_RING",
			   ioctl(vm->srq_fd, NVX_SRQ_IOC_TX_RING, &tx));
	if (ret)
		return ret;
	vm->net_irq_fd = eventfd(0, EFD_CLOEXEC);
	ret = NVX_NET_STEP("eventfd", vm->net_irq_fd);
	if (ret)
		return ret;
	/* the channel's GSI: one vector wakes the guest for both */
	memset(&irqfd, 0, sizeof(irqfd));
	irqfd.fd = vm->net_irq_fd;
	irqfd.gsi = NVX_UVM_IRQ_GSI;
	ret = NVX_NET_STEP("KVM_IRQFD (network)",
			   ioctl(vm->vm_fd, KVM_IRQFD, &irqfd));
	if (ret)
		return ret;
	nt.vector_fd = vm->net_irq_fd;
	return NVX_NET_STEP("NVX_SRQ_IOC_NOTIFY",
			    ioctl(vm->srq_fd, NVX_SRQ_IOC_NOTIFY, &nt));
}

/**
 * nvx_uvm_net_setup() - give a user VM its network
 * @vm: a VM whose RAM (with the net area at its end) is mapped.
 * @nvx_fd: the nvx device.
 * @n: the NIC, address and shape.
 * @where: set to the name of the step that failed.
 *
 * Makes the set, its TX ring and notification, and writes the network
 * page. The set holds its own reference to the grant; nvx_uvm_destroy()
 * closes it.
 *
 * Return: 0 or a negative errno: -EINVAL for bad @n, or the set's own errors (-EBUSY: another
 * set takes @n->ip4 on that NIC; -EOPNOTSUPP: not an nvxsim NIC).
 */
int nvx_uvm_net_setup(struct nvx_uvm_vm *vm, int nvx_fd,
		      const struct nvx_uvm_net *n, const char **where)
{
	struct nvx_vmnet_info *ni;
	struct nvx_srq_create c;
	uint64_t area;
	unsigned int mtu;
	uint32_t cqe = n->cq_entries ? n->cq_entries : 1024;
	int ret;

	*where = "network options";
	if (!n->ip4 || n->prefix > 32 || n->nr_bufs == 1 ||
	    n->nr_bufs > NVX_UVM_NET_MAX_BUFS || !nvx_net_pow2(cqe) ||
	    cqe < NVX_UVM_NET_MIN_CQ || cqe > NVX_UVM_NET_MAX_CQ ||
	    vm->mem_size < NVX_UVM_IMAGE_GPA + NVX_UVM_NET_AREA)
		return -EINVAL;
	area = vm->mem_size - NVX_UVM_NET_AREA;
	ret = nvx_net_set(vm, nvx_fd, n, area, &c, where);
	if (ret)
		return ret;
	ret = nvx_net_tx_irq(vm, area, where);
	if (ret)
		return ret;

	mtu = nvx_net_mtu(n->ifindex);
	if (mtu > NVX_UVM_NET_SLOT - 14)
		mtu = NVX_UVM_NET_SLOT - 14;
	ni = (struct nvx_vmnet_info *)((char *)vm->mem + NVX_VMNET_INFO_GPA);
	memset(ni, 0, sizeof(*ni));
	ni->version = NVX_VMNET_VERSION;
	ni->area_gpa = area;
	ni->area_size = NVX_UVM_NET_AREA;
	ni->buf_gpa = area;
	ni->ring_gpa = area + NET_RING_OFF;
	ni->cq_offset = c.layout.cq_offset;
	ni->rel_offset = c.layout.rel_offset;
	ni->tx_gpa = area + NET_TX_OFF;
	ni->slot_gpa = area + NET_SLOT_OFF;
	ni->nr_bufs = c.params.nr_bufs;
	ni->buf_size = c.params.buf_size;
	ni->stride = c.params.stride_size;
	ni->cq_entries = c.params.cq_entries;
	ni->rel_entries = c.params.rel_entries;
	ni->tx_entries = NVX_UVM_NET_TX;
	ni->slot_size = NVX_UVM_NET_SLOT;
	ni->mtu = mtu;
	ni->ip4 = n->ip4;
	ni->prefix = n->prefix ? n->prefix : 24;
	memcpy(ni->mac, n->mac, 6);
	if (!memcmp(ni->mac, "\0\0\0\0\0\0", 6)) {
		const uint8_t *ip = (const uint8_t *)&n->ip4;

		ni->mac[0] = 0x02;	/* locally administered, unicast */
		ni->mac[1] = 0x4e;
		ni->mac[2] = 0x56;
		memcpy(ni->mac + 3, ip + 1, 3);
	}
	/* the magic last: the page is whole when the guest sees it */
	ni->magic = NVX_VMNET_MAGIC;
	vm->net = ni;
	*where = NULL;
	return 0;
}

/**
 * nvx_uvm_net_kick() - send what the guest posted on its TX ring
 * @vm: a VM with a network.
 *
 * Counts the frames in @vm (net_sent, net_dropped) and keeps the error
 * in net_err: a failed kick (the NIC gone) costs the guest its frames,
 * not its life.
 *
 * Return: 0 or a negative errno.
 */
int nvx_uvm_net_kick(struct nvx_uvm_vm *vm)
{
	struct nvx_srq_tx_kick k = { 0 };
	int ret;

	vm->net_kicks++;
	ret = ioctl(vm->srq_fd, NVX_SRQ_IOC_TX_KICK, &k) < 0 ? -errno : 0;
	vm->net_sent += k.sent;
	vm->net_dropped += k.dropped;
	vm->net_err = -ret;
	return ret;
}
