/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_vmnet.h - a user VM's network page: what libnvx's VMM (lib/uvm.c,
 * struct nvx_uvm_net) tells the guest runtime (tools/nvx/guest/net.c)
 * about the shared RX queue set it made on the guest's own memory.
 * A contract between nvx's VMM and its runtime, not a kernel ABI: the
 * kernel sees only the set (include/uapi/nvx/srq.h). Documentation/nvx/
 * uvm.rst, "Networking".
 *
 * The VMM writes one struct nvx_vmnet_info at NVX_VMNET_INFO_GPA before
 * the guest runs; a guest without it (magic) has no network. Every GPA
 * below lies in the net area [area_gpa, area_gpa + area_size), which the
 * guest keeps out of its heap:
 *
 *   buf_gpa    the set's buffers (buffer i at buf_gpa + i * buf_size)
 *   ring_gpa   the set's ring area (struct nvx_srq_layout offsets)
 *   tx_gpa     the TX ring (struct nvx_srq_tx_hdr, then tx_entries
 *              struct nvx_srq_txd; addr = a byte offset in the grant,
 *              which is the GPA: the grant is the RAM from GPA 0)
 *   slot_gpa   tx_entries frame slots of slot_size bytes, the guest's
 *
 * After writing TX descriptors and the ring's prod the guest writes any
 * value to NVX_VMNET_PORT_KICK (out32); the VMM sends them
 * (NVX_SRQ_IOC_TX_KICK). Completion ring 0 signals the VM's interrupt
 * (the control page's irq_vector) when the guest had emptied it (its
 * cons equal to prod): a guest that keeps its published cons two behind
 * what it consumed while it polls gets no interrupt, one that publishes
 * every completion before it halts is woken by the next frame.
 */
#ifndef NVX_VMNET_H
#define NVX_VMNET_H

#include <linux/types.h>

#define NVX_VMNET_INFO_GPA	0x10000ULL
#define NVX_VMNET_MAGIC		0x4e58564eU	/* "NVXN" */
#define NVX_VMNET_VERSION	1
#define NVX_VMNET_PORT_KICK	0x060c

/**
 * struct nvx_vmnet_info - the network page (at NVX_VMNET_INFO_GPA)
 * @magic: NVX_VMNET_MAGIC.
 * @version: NVX_VMNET_VERSION.
 * @area_gpa: where the net area starts.
 * @area_size: its bytes.
 * @buf_gpa: buffer 0.
 * @ring_gpa: the ring area.
 * @cq_offset: completion ring 0 in the ring area (struct nvx_srq_ring,
 *	then @cq_entries struct nvx_srq_cqe).
 * @rel_offset: release ring 0 in the ring area (struct nvx_srq_ring,
 *	then @rel_entries struct nvx_srq_rel).
 * @tx_gpa: the TX ring.
 * @slot_gpa: TX frame slot 0.
 * @nr_bufs: buffers.
 * @buf_size: bytes per buffer.
 * @stride: bytes per stride.
 * @cq_entries: entries of completion ring 0 (the only queue).
 * @rel_entries: entries of release ring 0.
 * @tx_entries: descriptors of the TX ring, and frame slots.
 * @slot_size: bytes per frame slot.
 * @mtu: the NIC's MTU: a frame has at most @mtu + 14 bytes.
 * @ip4: the VM's IPv4 address, network order.
 * @prefix: its prefix length (on-link addresses).
 * @mac: the VM's MAC address.
 * @pad: 0.
 */
struct nvx_vmnet_info {
	__u32 magic;
	__u32 version;
	__u64 area_gpa;
	__u64 area_size;
	__u64 buf_gpa;
	__u64 ring_gpa;
	__u64 cq_offset;
	__u64 rel_offset;
	__u64 tx_gpa;
	__u64 slot_gpa;
	__u32 nr_bufs;
	__u32 buf_size;
	__u32 stride;
	__u32 cq_entries;
	__u32 rel_entries;
	__u32 tx_entries;
	__u32 slot_size;
	__u32 mtu;
	__be32 ip4;
	__u32 prefix;
	__u8 mac[6];
	__u8 pad[2];
};

#endif /* NVX_VMNET_H */
