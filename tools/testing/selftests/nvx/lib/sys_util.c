// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the nvx selftest group "sys": see include/sys_util.h.
 */
#include "sys_util.h"

/* ------------------------------------------------ endpoints, policy --- */

/**
 * sys_ep_new() - A new endpoint: its fd, or -errno
 * @fd: an open /dev/nvx
 * @max_vms: the VMs it may serve (0: the default)
 * @ep_id: where its id goes, if not NULL
 */
int sys_ep_new(int fd, uint32_t max_vms, uint32_t *ep_id)
{
	struct nvx_uvm_endpoint ep = {
		.flags = NVX_UVM_EP_CLOEXEC,
		.max_vms = max_vms,
	};
	int ret = nvx_ioctl(fd, NVX_IOC_UVM_ENDPOINT, &ep);

	if (ret)
		return ret;
	if (ep_id)
		*ep_id = ep.ep_id;
	return ep.fd;
}

/**
 * sys_policy_init() - A policy without limits
 * @p: the policy
 * @vm_id: 0 (the endpoint's) or a VM's id
 * @allow: the types allowed (TYPE_BIT()s)
 * @flags: NVX_UVM_POLICY_* flags
 */
void sys_policy_init(struct nvx_uvm_policy *p, uint32_t vm_id,
		     uint64_t allow, uint32_t flags)
{
	memset(p, 0, sizeof(*p));
	p->flags = flags;
	p->vm_id = vm_id;
	p->allow = allow;
}

/**
 * sys_policy_set() - NVX_UVM_EP_IOC_SET_POLICY: 0 or -errno
 * @ep: an endpoint fd
 * @p: the policy (not changed)
 */
int sys_policy_set(int ep, const struct nvx_uvm_policy *p)
{
	struct nvx_uvm_policy c = *p;

	return nvx_ioctl(ep, NVX_UVM_EP_IOC_SET_POLICY, &c);
}

/**
 * sys_policy_get() - NVX_UVM_EP_IOC_GET_POLICY: 0 or -errno
 * @ep: an endpoint fd
 * @vm_id: 0 (the endpoint's) or a VM's id
 * @p: where the policy goes
 */
int sys_policy_get(int ep, uint32_t vm_id, struct nvx_uvm_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->vm_id = vm_id;
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_GET_POLICY, p);
}

/**
 * sys_allow() - Set a policy of types only, no limits: 0 or -errno
 * @ep: an endpoint fd
 * @vm_id: 0 (the endpoint's) or a VM's id
 * @allow: the types allowed (TYPE_BIT()s)
 * @flags: NVX_UVM_POLICY_* flags
 */
int sys_allow(int ep, uint32_t vm_id, uint64_t allow, uint32_t flags)
{
	struct nvx_uvm_policy p;

	sys_policy_init(&p, vm_id, allow, flags);
	return sys_policy_set(ep, &p);
}

/* --------------------------------------------------------- bare VMs --- */

/**
 * sys_bare_up() - A bare VM attached to @ep with NVX_UVM_ATTACH_SLOW
 * @e: the test's environment
 * @ep: the endpoint fd
 * @out: where the bare VM goes (NULL on an error)
 *
 * Return: 0 or -errno (nothing is left behind then).
 */
int sys_bare_up(struct env *e, int ep, struct bare **out)
{
	struct bare *b;
	int ret = bare_new(e, &b);

	*out = NULL;
	if (ret)
		return ret;
	ret = bare_attach(e, b, ep, NVX_UVM_ATTACH_SLOW);
	if (ret) {
		bare_free(e, b);
		return ret;
	}
	*out = b;
	return 0;
}

/**
 * sys_payload() - Fill a message payload with the pattern of @seed
 * @p: NVX_UVM_PAYLOAD bytes
 * @seed: the pattern's seed
 */
void sys_payload(uint8_t *p, unsigned int seed)
{
	fill_bytes(p, NVX_UVM_PAYLOAD, seed);
	memcpy(p, &seed, sizeof(seed));
}

/**
 * sys_payload_is() - Whether a payload holds the pattern of @seed
 * @p: NVX_UVM_PAYLOAD bytes
 * @seed: the pattern's seed
 */
bool sys_payload_is(const uint8_t *p, unsigned int seed)
{
	uint8_t want[NVX_UVM_PAYLOAD];

	sys_payload(want, seed);
	return !memcmp(p, want, sizeof(want));
}

/**
 * sys_msg() - A message without bulk data
 * @m: the message
 * @type: NVX_UVM_MSG_*
 * @tag: its tag
 * @dst: 0 (the system process) or a VM's id
 * @seed: the payload's pattern (sys_payload())
 */
void sys_msg(struct nvx_uvm_msg *m, uint16_t type, uint32_t tag, uint32_t dst,
	     unsigned int seed)
{
	msg_init(m, type, tag);
	m->dst = dst;
	sys_payload(m->payload, seed);
}

/**
 * sys_msg_sg() - Give a message bulk data
 * @m: the message
 * @dir: NVX_UVM_MSGF_PUSH or NVX_UVM_MSGF_PULL
 * @sg_gpa: its segment list
 * @sg_nr: the segments
 */
void sys_msg_sg(struct nvx_uvm_msg *m, uint16_t dir, uint64_t sg_gpa,
		uint32_t sg_nr)
{
	m->flags = dir;
	m->sg_gpa = sg_gpa;
	m->sg_nr = sg_nr;
}

/**
 * sys_publish() - Publish @m in the SQ without ringing (bare_kick() rings)
 * @b: the bare VM
 * @m: the message to submit
 */
void sys_publish(struct bare *b, const struct nvx_uvm_msg *m)
{
	b->sq[b->sq_prod & (b->sq_n - 1)] = *m;
	b->sq_prod++;
	__atomic_store_n(&b->ctrl->sq_prod, b->sq_prod, __ATOMIC_RELEASE);
}

/**
 * sys_wait_complete() - Consume the next completion, waiting up to @ms
 * @b: the bare VM
 * @m: where the completion goes
 * @ms: how long to wait, in milliseconds (0: look once)
 *
 * Return: 0, or -ETIMEDOUT when none came.
 */
int sys_wait_complete(struct bare *b, struct nvx_uvm_msg *m, uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	for (;;) {
		if (!bare_complete(b, m))
			return 0;
		if (now_ms() >= end)
			return -ETIMEDOUT;
		usleep(200);
	}
}

/**
 * sys_cq_pending() - Completions written and not consumed
 * @b: the bare VM
 */
int sys_cq_pending(const struct bare *b)
{
	return (int)(__atomic_load_n(&b->ctrl->cq_prod, __ATOMIC_ACQUIRE) -
		     b->cq_cons);
}

/* ------------------------------------------------ scatter / gather --- */

/**
 * sys_sg_split() - Lay out a segment list of irregular pieces
 * @b: the bare VM
 * @sg_gpa: where the list goes (16-byte aligned)
 * @nr: segments wanted (fewer when @total is smaller)
 * @gpa: where the first segment starts (any alignment)
 * @total: the bytes they add up to (1..NVX_UVM_MAX_BULK)
 * @gap: bytes left out between a segment and the next
 *
 * The lengths differ from segment to segment (weights 1..5), so that
 * the two sides of a transfer rarely split at the same offsets.
 *
 * Return: the number of segments written.
 */
uint32_t sys_sg_split(struct bare *b, uint64_t sg_gpa, uint32_t nr,
		      uint64_t gpa, uint32_t total, uint32_t gap)
{
	struct nvx_uvm_sg *sg = (struct nvx_uvm_sg *)(b->mem + sg_gpa);
	uint32_t i, wsum = 0, left = total, len;

	if (nr > total)
		nr = total;
	for (i = 0; i < nr; i++)
		wsum += 1 + (i * 7) % 5;
	for (i = 0; i < nr; i++) {
		if (i == nr - 1) {
			len = left;
		} else {
			len = (uint64_t)total * (1 + (i * 7) % 5) / wsum;
			if (!len)
				len = 1;
			/* at least a byte for each segment after this one */
			if (len > left - (nr - 1 - i))
				len = left - (nr - 1 - i);
		}
		sg[i] = (struct nvx_uvm_sg){ .gpa = gpa, .len = len };
		gpa += len + gap;
		left -= len;
	}
	return nr;
}

/**
 * sys_sg_at() - The segment list at @sg_gpa in @b's RAM
 * @b: the bare VM
 * @sg_gpa: the list's guest physical address
 */
const struct nvx_uvm_sg *sys_sg_at(const struct bare *b, uint64_t sg_gpa)
{
	return (const struct nvx_uvm_sg *)(b->mem + sg_gpa);
}

/**
 * sys_sg_end() - The end of the highest segment
 * @sg: the segments
 * @nr: how many
 */
uint64_t sys_sg_end(const struct nvx_uvm_sg *sg, uint32_t nr)
{
	uint64_t end = 0;
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (sg[i].gpa + sg[i].len > end)
			end = sg[i].gpa + sg[i].len;
	return end;
}

/**
 * sys_sg_scatter() - Write @len bytes of @src into @b's segments, in order
 * @b: the bare VM
 * @sg: the segments (in @b's RAM or a copy)
 * @nr: how many
 * @src: the data
 * @len: at most this many bytes
 */
void sys_sg_scatter(struct bare *b, const struct nvx_uvm_sg *sg, uint32_t nr,
		    const unsigned char *src, uint32_t len)
{
	uint32_t i, n, done = 0;

	for (i = 0; i < nr && done < len; i++) {
		n = sg[i].len < len - done ? sg[i].len : len - done;
		memcpy(b->mem + sg[i].gpa, src + done, n);
		done += n;
	}
}

/**
 * sys_sg_expect() - What guest memory should hold after a transfer
 * @img: the image of guest memory from @base, filled by the caller with
 *	what was there before
 * @base: the guest physical address of @img[0]
 * @sg: the segments written (all at or above @base)
 * @nr: how many
 * @src: the data
 * @len: the bytes moved: the first @len bytes of @src land in the
 *	segments, in order; the rest of @img stays as it was
 */
void sys_sg_expect(unsigned char *img, uint64_t base,
		   const struct nvx_uvm_sg *sg, uint32_t nr,
		   const unsigned char *src, uint32_t len)
{
	uint32_t i, n, done = 0;

	for (i = 0; i < nr && done < len; i++) {
		n = sg[i].len < len - done ? sg[i].len : len - done;
		memcpy(img + (sg[i].gpa - base), src + done, n);
		done += n;
	}
}

/* ---------------------------------------------------- system side --- */

/**
 * sys_reply() - REPLY to a request without data: 0 or -errno
 * @ep: the endpoint fd
 * @cookie: from RECV
 * @type: the completion's type
 * @status: its status
 * @seed: its payload's pattern (sys_payload())
 */
int sys_reply(int ep, uint64_t cookie, uint16_t type, int32_t status,
	      unsigned int seed)
{
	struct nvx_uvm_reply rep;

	memset(&rep, 0, sizeof(rep));
	rep.cookie = cookie;
	rep.msg.type = type;
	rep.msg.status = status;
	sys_payload(rep.msg.payload, seed);
	return nvx_ioctl(ep, NVX_UVM_EP_IOC_REPLY, &rep);
}

/**
 * sys_exchange() - One IPC request of @b served through @ep, checked
 * @b: the bare VM (attached to @ep)
 * @ep: the endpoint fd
 * @tag: the request's tag (also its payload's seed; the reply's is ~@tag)
 * @why: where a failure is described
 * @n: the room at @why
 *
 * Post the request, RECV it from @ep (without blocking: the doorbell
 * queues it at once), REPLY, consume the completion; every field the
 * other side sees is checked.
 *
 * Return: 0, -EPROTO (something else came) or -errno of a call.
 */
int sys_exchange(struct bare *b, int ep, uint32_t tag, char *why, size_t n)
{
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	int ret;

	sys_msg(&m, NVX_UVM_MSG_IPC, tag, 0, tag);
	m.src_tid = tag ^ 0x5a5a;
	ret = bare_post(b, &m);
	if (ret) {
		snprintf(why, n, "KICK of tag %#x: %s", tag, strerror(-ret));
		return ret;
	}
	ret = recv_nb(ep, &r);
	if (ret) {
		snprintf(why, n, "RECV of tag %#x: %s", tag, strerror(-ret));
		return ret;
	}
	if (r.msg.type != NVX_UVM_MSG_IPC || r.msg.tag != tag ||
	    r.msg.src_vm != b->vm_id || r.msg.src_tid != (tag ^ 0x5a5a) ||
	    !sys_payload_is(r.msg.payload, tag) || !r.cookie) {
		snprintf(why, n,
			 "RECV for tag %#x of VM %u got type %u tag %#x of VM %u tid %#x",
			 tag, b->vm_id, r.msg.type, r.msg.tag, r.msg.src_vm,
			 r.msg.src_tid);
		return -EPROTO;
	}
	ret = sys_reply(ep, r.cookie, NVX_UVM_MSG_IPC, 0, ~tag);
	if (ret) {
		snprintf(why, n, "REPLY to tag %#x: %s", tag, strerror(-ret));
		return ret;
	}
	ret = bare_complete(b, &m);
	if (ret) {
		snprintf(why, n, "no completion of tag %#x", tag);
		return -EPROTO;
	}
	if (m.type != NVX_UVM_MSG_IPC || m.tag != tag || m.status ||
	    !sys_payload_is(m.payload, ~tag)) {
		snprintf(why, n,
			 "completion of tag %#x: type %u tag %#x status %d",
			 tag, m.type, m.tag, m.status);
		return -EPROTO;
	}
	return 0;
}
