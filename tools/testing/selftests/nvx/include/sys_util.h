/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the nvx selftest group "sys" (lib/sys_util.c): what the
 * kernel does for the system process of user VMs: the endpoint's
 * message policy (NVX_UVM_EP_IOC_SET_POLICY, GET_POLICY), VM-to-VM
 * messages and endpoints as tenants of their own. The tests play the
 * guests with the "bare" VMs of the uvm group (uvm_util.h): KVM VMs
 * without a vCPU attached with NVX_UVM_ATTACH_SLOW, whose rings the test
 * writes, ringing with NVX_UVM_CHAN_IOC_KICK.
 *
 * Nothing here uses the harness: errors are returned as -errno, or
 * -EPROTO with the reason written into a caller's buffer.
 */
#ifndef NVX_SYS_UTIL_H
#define NVX_SYS_UTIL_H

#include "uvm_util.h"

/* bit of type @t in struct nvx_uvm_policy.allow */
#define TYPE_BIT(t)		(1ULL << (t))

/*
 * Where the tests put things in a bare VM's RAM (VM_MEM): the control
 * page and rings of the library's layout end below 0x9000.
 */
#define SYS_SG_GPA		0x10000ULL	/* a message's segment list */
#define SYS_SG2_GPA		0x11000ULL	/* a second one */
#define SYS_DATA_GPA		0x100000ULL	/* up to 1 MiB of bulk data */
#define SYS_DATA2_GPA		0x200000ULL	/* another MiB */

/* How long a test waits for a completion that should come at once. */
#define SYS_WAIT_MS		SHORT_MS

int sys_ep_new(int fd, uint32_t max_vms, uint32_t *ep_id);
void sys_policy_init(struct nvx_uvm_policy *p, uint32_t vm_id,
		     uint64_t allow, uint32_t flags);
int sys_policy_set(int ep, const struct nvx_uvm_policy *p);
int sys_policy_get(int ep, uint32_t vm_id, struct nvx_uvm_policy *p);
int sys_allow(int ep, uint32_t vm_id, uint64_t allow, uint32_t flags);
int sys_bare_up(struct env *e, int ep, struct bare **out);
void sys_msg(struct nvx_uvm_msg *m, uint16_t type, uint32_t tag, uint32_t dst,
	     unsigned int seed);
void sys_payload(uint8_t *p, unsigned int seed);
bool sys_payload_is(const uint8_t *p, unsigned int seed);
void sys_msg_sg(struct nvx_uvm_msg *m, uint16_t dir, uint64_t sg_gpa,
		uint32_t sg_nr);
void sys_publish(struct bare *b, const struct nvx_uvm_msg *m);
int sys_wait_complete(struct bare *b, struct nvx_uvm_msg *m, uint64_t ms);
int sys_cq_pending(const struct bare *b);
uint32_t sys_sg_split(struct bare *b, uint64_t sg_gpa, uint32_t nr,
		      uint64_t gpa, uint32_t total, uint32_t gap);
const struct nvx_uvm_sg *sys_sg_at(const struct bare *b, uint64_t sg_gpa);
uint64_t sys_sg_end(const struct nvx_uvm_sg *sg, uint32_t nr);
void sys_sg_scatter(struct bare *b, const struct nvx_uvm_sg *sg, uint32_t nr,
		    const unsigned char *src, uint32_t len);
void sys_sg_expect(unsigned char *img, uint64_t base,
		   const struct nvx_uvm_sg *sg, uint32_t nr,
		   const unsigned char *src, uint32_t len);
int sys_reply(int ep, uint64_t cookie, uint16_t type, int32_t status,
	      unsigned int seed);
int sys_exchange(struct bare *b, int ep, uint32_t tag, char *why, size_t n);

#endif /* NVX_SYS_UTIL_H */
