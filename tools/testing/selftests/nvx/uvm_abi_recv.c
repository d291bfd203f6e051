// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": RECV and REPLY.
 *
 * RECV/REPLY with exact data placement, replies after the VM stopped,
 * the channel's STATUS and KICK.
 */
#include "uvm_fixture.h"

/*
 * RECV and REPLY of an IPC message: the kernel's fields (src_vm cannot
 * be forged), the completion in the CQ and the credit; then every
 * REPLY error and the RECV errors.
 */
ABI_TEST(recv_reply_ipc)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b;
	uint64_t v = 41;
	int fl;

	/* RECV errors */
	memset(&r, 0, sizeof(r));
	r.flags = NVX_UVM_RECV_FLAGS + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	r.flags = ~0u;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	r.flags = NVX_UVM_RECV_NONBLOCK;
	r.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r));
	fl = fcntl(e->ep, F_GETFL);
	ASSERT_EQ(0, fcntl(e->ep, F_SETFL, fl | O_NONBLOCK));
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EAGAIN, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	ASSERT_EQ(0, fcntl(e->ep, F_SETFL, fl));

	/* REPLY errors without a request */
	memset(&rep, 0, sizeof(rep));
	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.flags = 0;
	/* a guest never sees type 0 or a kernel-only type */
	rep.msg.type = 0;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.msg.type = NVX_UVM_MSG_VM_GONE;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.msg.type = NVX_UVM_MSG_IPC;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.cookie = 0xffffffffULL << 32;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	rep.cookie = (uint64_t)b->vm_id << 32 | 3;	/* a free slot */
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.cookie = (uint64_t)b->vm_id << 32 | 0xffff;	/* no such slot */
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));

	/* a message with the fields the kernel owns forged */
	msg_init(&m, NVX_UVM_MSG_IPC, 7);
	m.src_vm = 0xdead;
	m.src_tid = 5;
	m.status = 123;
	m.bulk_len = 99;
	memcpy(m.payload, &v, sizeof(v));
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_EQ(1U, b->ctrl->sq_cons);
	EXPECT_EQ(1U, b->ctrl->doorbells);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.queued);
	EXPECT_EQ(0U, st.taken);
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(NVX_UVM_MSG_IPC, r.msg.type);
	EXPECT_EQ(7U, r.msg.tag);
	EXPECT_EQ(b->vm_id, r.msg.src_vm);
	EXPECT_EQ(5U, r.msg.src_tid);
	EXPECT_EQ(0, r.msg.status);
	EXPECT_EQ(0U, r.msg.bulk_len);
	EXPECT_EQ(41U, get_u64(r.msg.payload));
	EXPECT_EQ(0U, r.data_len);
	EXPECT_EQ(0U, r.reserved);
	EXPECT_EQ(b->vm_id, r.cookie >> 32);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(1U, st.taken);
	EXPECT_EQ(1U, st.msgs_in);

	/* wrong generation, data for a request without PULL, flags */
	memset(&rep, 0, sizeof(rep));
	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.cookie = r.cookie ^ (1 << 16);
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.cookie = r.cookie;
	rep.buf = (uintptr_t)&v;
	rep.buf_len = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.buf_len = 0;
	rep.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(-EAGAIN, bare_complete(b, &m));

	/* the reply */
	rep.flags = 0;
	rep.msg.type = NVX_UVM_MSG_IPC;
	rep.msg.status = -5;
	rep.msg.tag = 1234;		/* the kernel's to fill in */
	v = 42;
	memcpy(rep.msg.payload, &v, sizeof(v));
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(1U, b->ctrl->credits);
	EXPECT_EQ(1U, b->ctrl->cq_prod);
	ASSERT_EQ(0, bare_complete(b, &m));
	EXPECT_EQ(NVX_UVM_MSG_IPC, m.type);
	EXPECT_EQ(7U, m.tag);
	EXPECT_EQ(b->vm_id, m.src_vm);
	EXPECT_EQ(5U, m.src_tid);
	EXPECT_EQ(-5, m.status);
	EXPECT_EQ(0U, m.bulk_len);
	EXPECT_EQ(42U, get_u64(m.payload));
	EXPECT_EQ(0U, b->ctrl->credits);
	/* once only */
	EXPECT_EQ(-ENOENT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(1U, st.msgs_out);
}

/*
 * PUSH: RECV copies the data straight from the guest's segments (two,
 * one crossing a page), at most buf_len of it, data_len the whole; a
 * fault puts the message back. PULL: REPLY writes the segments in order,
 * never more than their room.
 */
ABI_TEST(recv_reply_bulk)
{
	struct env *e = &self->e;
	const uint64_t sg_gpa = 0x100000, g1 = 0x1ff000 + 4000, g2 = 0x300000;
	unsigned char src[300], pat[300], buf[400];
	struct nvx_uvm_status cs;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct nvx_uvm_sg *sg;
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	sg = (struct nvx_uvm_sg *)(b->mem + sg_gpa);

	/* PUSH 200 + 77 bytes */
	fill_bytes(src, sizeof(src), 3);
	memcpy(b->mem + g1, src, 200);
	memcpy(b->mem + g2, src + 200, 77);
	sg[0] = (struct nvx_uvm_sg){ .gpa = g1, .len = 200 };
	sg[1] = (struct nvx_uvm_sg){ .gpa = g2, .len = 77 };
	msg_init(&m, NVX_UVM_MSG_WRITE, 1);
	m.flags = NVX_UVM_MSGF_PUSH;
	m.sg_gpa = sg_gpa;
	m.sg_nr = 2;
	ASSERT_EQ(0, bare_post(b, &m));
	/* the sg list is read at the doorbell: changing it now is too late */
	sg[0].len = 1;

	memset(&r, 0, sizeof(r));
	r.buf = 1;		/* a fault: the message goes back */
	r.buf_len = 100;
	EXPECT_EQ(-EFAULT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.queued);
	EXPECT_EQ(0U, st.taken);

	memset(buf, 0xee, sizeof(buf));
	memset(&r, 0, sizeof(r));
	r.buf = (uintptr_t)buf;
	r.buf_len = 250;
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, &r));
	EXPECT_EQ(NVX_UVM_MSG_WRITE, r.msg.type);
	EXPECT_EQ(NVX_UVM_MSGF_PUSH, r.msg.flags);
	EXPECT_EQ(277U, r.data_len);
	EXPECT_EQ(0, memcmp(buf, src, 250));
	EXPECT_EQ(0xee, buf[250]);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_WRITE;
	rep.buf = (uintptr_t)buf;
	rep.buf_len = 5;	/* data for a PUSH */
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.buf_len = 0;
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	ASSERT_EQ(0, bare_complete(b, &m));
	EXPECT_EQ(1U, m.tag);
	EXPECT_EQ(0, m.status);
	EXPECT_EQ(250U, m.bulk_len);	/* what the system process took */
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(250U, cs.bulk_out);

	/* PULL into 200 + 100 bytes of room */
	memset(b->mem + g1, 0xcc, 200);
	memset(b->mem + g2, 0xcc, 100);
	sg[0] = (struct nvx_uvm_sg){ .gpa = g1, .len = 200 };
	sg[1] = (struct nvx_uvm_sg){ .gpa = g2, .len = 100 };
	msg_init(&m, NVX_UVM_MSG_READ, 2);
	m.flags = NVX_UVM_MSGF_PULL;
	m.sg_gpa = sg_gpa;
	m.sg_nr = 2;
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(NVX_UVM_MSGF_PULL, r.msg.flags);
	EXPECT_EQ(300U, r.data_len);
	fill_bytes(pat, sizeof(pat), 4);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_READ;
	rep.buf = (uintptr_t)pat;
	rep.buf_len = 301;
	EXPECT_EQ(-EMSGSIZE, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	rep.buf = 1;
	rep.buf_len = 10;
	EXPECT_EQ(-EFAULT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(-EAGAIN, bare_complete(b, &m));
	rep.buf = (uintptr_t)pat;
	rep.buf_len = 250;
	ASSERT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(0, memcmp(b->mem + g1, pat, 200));
	EXPECT_EQ(0, memcmp(b->mem + g2, pat + 200, 50));
	EXPECT_EQ(0xcc, b->mem[g2 + 50]);
	EXPECT_EQ(0xcc, b->mem[g2 + 99]);
	ASSERT_EQ(0, bare_complete(b, &m));
	EXPECT_EQ(2U, m.tag);
	EXPECT_EQ(NVX_UVM_MSGF_PULL, m.flags);
	EXPECT_EQ(250U, m.bulk_len);
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ(250U, cs.bulk_in);
	EXPECT_EQ(2U, cs.msgs_in);
	EXPECT_EQ(2U, cs.msgs_out);
	EXPECT_EQ(0U, cs.in_flight);
}

/*
 * A request taken, then the VM stopped (a bad port through KICK): the
 * reply fails with -ESRCH; the detach clears "taken" and leaves a
 * VM_GONE notice that carries the reason and the detail.
 */
ABI_TEST(reply_after_vm_stopped)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_status cs;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct nvx_uvm_msg m;
	struct bare *b;
	uint32_t id;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	msg_init(&m, NVX_UVM_MSG_IPC, 9);
	ASSERT_EQ(0, bare_post(b, &m));
	ASSERT_EQ(0, recv_nb(e->ep, &r));
	ASSERT_EQ(0, bare_kick(b, BAD_PORT));
	ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_PORT, cs.reason);
	EXPECT_EQ(BAD_PORT, cs.detail);
	EXPECT_EQ(1U, cs.in_flight);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_IPC;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	/* a stopped VM takes nothing more */
	ASSERT_EQ(0, bare_post(b, &m));
	EXPECT_EQ(1U, b->ctrl->sq_cons);
	EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.taken);

	id = b->vm_id;
	close(b->chan_fd);
	b->chan_fd = -1;
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_ERR_PORT, &r));
	EXPECT_EQ(BAD_PORT, get_u64(r.msg.payload));
	EXPECT_EQ(0U, r.data_len);
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	check_ep_idle(_metadata, e->ep);
}

/* STATUS and KICK on a channel. */
ABI_TEST(channel_status_kick)
{
	struct env *e = &self->e;
	struct nvx_uvm_status cs;
	struct nvx_uvm_kick k;
	struct bare *b[2];

	ASSERT_EQ(0, bare_new(e, &b[0]));
	ASSERT_EQ(0, bare_attach(e, b[0], e->ep, 0));
	ASSERT_EQ(0, chan_status(b[0]->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(b[0]->vm_id, cs.vm_id);
	EXPECT_EQ(0U, cs.doorbells);
	cs.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(b[0]->chan_fd, NVX_UVM_CHAN_IOC_STATUS, &cs));
	/* the fast path has no KICK */
	EXPECT_EQ(-EINVAL, bare_kick(b[0], NVX_UVM_PORT_DOORBELL));

	ASSERT_EQ(0, bare_new(e, &b[1]));
	ASSERT_EQ(0, bare_attach(e, b[1], e->ep, NVX_UVM_ATTACH_SLOW));
	memset(&k, 0, sizeof(k));
	k.port = NVX_UVM_PORT_DOORBELL;
	k.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(b[1]->chan_fd, NVX_UVM_CHAN_IOC_KICK, &k));
	k.flags = 0;
	k.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(b[1]->chan_fd, NVX_UVM_CHAN_IOC_KICK, &k));
	k.reserved = 0;
	k.value = 0x12345678;	/* ignored */
	EXPECT_EQ(0, nvx_ioctl(b[1]->chan_fd, NVX_UVM_CHAN_IOC_KICK, &k));
	EXPECT_EQ(0, bare_kick(b[1], NVX_UVM_PORT_DOORBELL));
	ASSERT_EQ(0, chan_status(b[1]->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
	EXPECT_EQ(2U, cs.doorbells);
	EXPECT_EQ(0U, cs.msgs_in);
	EXPECT_EQ(2U, b[1]->ctrl->doorbells);
	/* a write to another port of the kernel's is fatal too */
	EXPECT_EQ(0, bare_kick(b[1], NVX_UVM_PORT_DOORBELL + 1));
	ASSERT_EQ(0, chan_status(b[1]->chan_fd, &cs));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_PORT, cs.reason);
	EXPECT_EQ((uint32_t)(NVX_UVM_PORT_DOORBELL + 1), cs.detail);
	/* and a stopped VM's doorbells count no more */
	EXPECT_EQ(0, bare_kick(b[1], NVX_UVM_PORT_DOORBELL));
	ASSERT_EQ(0, chan_status(b[1]->chan_fd, &cs));
	EXPECT_EQ(2U, cs.doorbells);
}

/*
 * RECV with its argument struct in a read-only page: -EFAULT and the
 * request still queued, so the next RECV takes it. Before the
 * dispatcher checked that the struct takes the result, the request was
 * taken and lost: the next RECV got -EAGAIN and the guest hung.
 */
ABI_TEST(recv_readonly_arg_takes_nothing)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_recv *ro, r;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_msg m;
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	msg_init(&m, NVX_UVM_MSG_IPC, 9);
	ASSERT_EQ(0, bare_post(b, &m));

	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	ro->flags = NVX_UVM_RECV_NONBLOCK;
	ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));
	EXPECT_EQ(-EFAULT, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_RECV, ro));
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.queued);
	EXPECT_EQ(0U, st.taken);

	ASSERT_EQ(0, recv_nb(e->ep, &r));
	EXPECT_EQ(NVX_UVM_MSG_IPC, r.msg.type);
	EXPECT_EQ(9U, r.msg.tag);
	memset(&rep, 0, sizeof(rep));
	rep.cookie = r.cookie;
	rep.msg.type = NVX_UVM_MSG_IPC;
	EXPECT_EQ(0, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	munmap(ro, pg);
}

TEST_HARNESS_MAIN
