// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": ring rules and ioctl sizes.
 *
 * Each ring rule the kernel enforces on a guest; unknown ioctls and
 * argument sizes on every uvm fd.
 */
#include "uvm_fixture.h"

/*
 * Each rule of the ring, broken once by a "guest" of our own on a fresh
 * VM: the VM stops with the reason and detail, and its VM_GONE says so.
 */
ABI_TEST(guest_rules_enforced)
{
	enum { C_TYPE0, C_TYPE_BIG, C_BOTH, C_FLAG, C_PUSH_NOSG, C_SG_NODIR,
	       C_SG_MANY, C_SG_UNALIGNED, C_SG_END, C_SEG_ZERO, C_SEG_FLAGS,
	       C_SEG_TOTAL, C_SEG_OUT, C_SQ_AHEAD, C_CQ_BACK, C_FLOOD,
	       C_PORT, C_NR };
	static const char *const names[C_NR] = {
		"type 0", "type 64", "PUSH|PULL", "unknown flag",
		"PUSH without sg", "sg without direction", "33 segments",
		"unaligned sg", "sg past RAM", "empty segment",
		"segment flags", "segments over MAX_BULK", "segment past RAM",
		"sq_prod too far", "cq_cons moved back", "flood", "bad port",
	};
	struct env *e = &self->e;
	const uint64_t sg_gpa = 0x100000;
	int c;

	for (c = 0; c < C_NR; c++) {
		struct nvx_uvm_status cs;
		struct nvx_uvm_recv r;
		struct nvx_uvm_msg m;
		struct nvx_uvm_sg *sg;
		uint32_t reason, i, id;
		uint64_t detail;
		struct bare *b;

		ASSERT_EQ(0, bare_new(e, &b));
		ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
		sg = (struct nvx_uvm_sg *)(b->mem + sg_gpa);
		sg[0] = (struct nvx_uvm_sg){ .gpa = 0x200000, .len = 16 };
		sg[1] = (struct nvx_uvm_sg){ .gpa = 0x300000, .len = 16 };
		msg_init(&m, NVX_UVM_MSG_WRITE, 1);
		m.flags = NVX_UVM_MSGF_PUSH;
		m.sg_gpa = sg_gpa;
		m.sg_nr = 1;
		reason = NVX_UVM_ERR_MSG;
		detail = 0;	/* sq_cons of the bad entry */
		switch (c) {
		case C_TYPE0:
			m.type = 0;
			break;
		case C_TYPE_BIG:
			m.type = NVX_UVM_MSG_GUEST_MAX + 1;
			break;
		case C_BOTH:
			m.flags = NVX_UVM_MSGF_ALL;
			break;
		case C_FLAG:
			m.flags |= 1 << 4;
			break;
		case C_PUSH_NOSG:
			m.sg_nr = 0;
			break;
		case C_SG_NODIR:
			m.flags = 0;
			break;
		case C_SG_MANY:
			m.sg_nr = NVX_UVM_MAX_SG + 1;
			reason = NVX_UVM_ERR_SIZE;
			detail = m.sg_nr;
			break;
		case C_SG_UNALIGNED:
			m.sg_gpa = sg_gpa + 8;
			reason = NVX_UVM_ERR_ADDR;
			detail = m.sg_gpa;
			break;
		case C_SG_END:
			m.sg_gpa = b->mem_size - 16;
			m.sg_nr = 2;
			reason = NVX_UVM_ERR_ADDR;
			detail = m.sg_gpa;
			break;
		case C_SEG_ZERO:
			sg[0].len = 0;
			reason = NVX_UVM_ERR_SIZE;
			detail = 0;
			break;
		case C_SEG_FLAGS:
			sg[0].flags = 1;
			detail = sg[0].gpa;
			break;
		case C_SEG_TOTAL:
			sg[0].len = 200 << 10;
			sg[1].len = 200 << 10;
			m.sg_nr = 2;
			reason = NVX_UVM_ERR_SIZE;
			detail = 200 << 10;
			break;
		case C_SEG_OUT:
			sg[0].gpa = b->mem_size - 16;
			sg[0].len = 4096;
			reason = NVX_UVM_ERR_ADDR;
			detail = sg[0].gpa;
			break;
		case C_SQ_AHEAD:
			b->sq_prod = b->sq_n;	/* bare_post() adds one */
			reason = NVX_UVM_ERR_RING;
			detail = b->sq_n + 1;
			break;
		case C_CQ_BACK:
			b->ctrl->cq_cons = -(b->cq_n + 1);
			reason = NVX_UVM_ERR_RING;
			detail = (uint32_t)-(b->cq_n + 1);
			break;
		case C_FLOOD:
			msg_init(&m, NVX_UVM_MSG_IPC, 0);
			for (i = 0; i < b->cq_n; i++) {
				m.tag = i;
				ASSERT_EQ(0, bare_post(b, &m));
			}
			ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
			ASSERT_EQ((uint32_t)NVX_UVM_RUNNING, cs.reason);
			EXPECT_EQ(b->cq_n, cs.in_flight);
			m.tag = i;
			reason = NVX_UVM_ERR_FLOOD;
			detail = b->cq_n;
			break;
		case C_PORT:
			reason = NVX_UVM_ERR_PORT;
			detail = BAD_PORT;
			break;
		}
		/* a stop is no error of the doorbell's */
		EXPECT_EQ(0, c == C_PORT ? bare_kick(b, BAD_PORT) :
					   bare_post(b, &m));
		ASSERT_EQ(0, chan_status(b->chan_fd, &cs));
		EXPECT_EQ(reason, cs.reason)
			TH_LOG("%s: reason %s, not %s", names[c],
			       nvx_uvm_reason_name(cs.reason),
			       nvx_uvm_reason_name(reason));
		EXPECT_EQ(detail, cs.detail) TH_LOG("%s", names[c]);
		EXPECT_EQ(c == C_FLOOD ? b->cq_n : 0, cs.msgs_in)
			TH_LOG("%s", names[c]);

		/* its queued requests go with it; VM_GONE comes first */
		id = b->vm_id;
		bare_free(e, b);
		EXPECT_EQ(0, recv_gone(e->ep, id, reason, &r))
			TH_LOG("%s: type %u VM %u status %d", names[c],
			       r.msg.type, r.msg.src_vm, r.msg.status);
		EXPECT_EQ(detail, get_u64(r.msg.payload)) TH_LOG("%s", names[c]);
		EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r)) TH_LOG("%s", names[c]);
		if (_metadata->exit_code)
			return;
	}
	check_ep_idle(_metadata, e->ep);
}

/* ioctl @cmd with @size in its size bits: 0 or -errno. */
static int resized(int fd, unsigned long cmd, size_t size, void *arg)
{
	return nvx_ioctl(fd, nvx_ioc_resize(cmd, size), arg);
}

/* Numbers a file does not know, and argument sizes. */
ABI_TEST(unknown_ioctls_and_sizes)
{
	struct env *e = &self->e;
	struct {
		struct nvx_uvm_ep_stats st;
		uint64_t future[2];
	} big;
	struct {
		struct nvx_uvm_status st;
		uint64_t future;
	} bigst;
	struct nvx_uvm_recv r;
	char buf[512];
	struct bare *b;

	ASSERT_EQ(0, bare_new(e, &b));
	ASSERT_EQ(0, bare_attach(e, b, e->ep, NVX_UVM_ATTACH_SLOW));
	memset(buf, 0, sizeof(buf));

	/* the endpoint */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, _IOWR(NVX_IOC_MAGIC, 0x3f,
						  struct nvx_uvm_recv), buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_UVM_CHAN_IOC_STATUS, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_UVM_CHAN_IOC_KICK, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_IOC_UVM_ATTACH, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, NVX_IOC_FEATURES, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->ep, _IOWR('x', 0x38,
						  struct nvx_uvm_recv), buf));
	/* the channel */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_RECV, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_UVM_EP_IOC_STATS, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, _IOW(NVX_IOC_MAGIC, 0x42,
						      struct nvx_uvm_kick),
				     buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(b->chan_fd, NVX_IOC_UVM_ENDPOINT, buf));
	/* /dev/nvx */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->fd, NVX_UVM_CHAN_IOC_STATUS, buf));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(e->fd, NVX_UVM_EP_IOC_RECV, buf));

	/* smaller than the struct: -EINVAL */
	EXPECT_EQ(-EINVAL, resized(e->ep, NVX_UVM_EP_IOC_RECV, 0, buf));
	EXPECT_EQ(-EINVAL, resized(e->ep, NVX_UVM_EP_IOC_RECV,
				   sizeof(struct nvx_uvm_recv) - 1, buf));
	EXPECT_EQ(-EINVAL, resized(e->ep, NVX_UVM_EP_IOC_REPLY,
				   sizeof(struct nvx_uvm_reply) - 8, buf));
	EXPECT_EQ(-EINVAL, resized(b->chan_fd, NVX_UVM_CHAN_IOC_STATUS, 8, buf));
	EXPECT_EQ(-EINVAL, resized(b->chan_fd, NVX_UVM_CHAN_IOC_KICK, 12, buf));
	EXPECT_EQ(-EINVAL, resized(e->fd, NVX_IOC_UVM_ATTACH, 16, buf));
	/* bigger: fine when the unknown tail is zero, and left alone */
	memset(&big, 0, sizeof(big));
	EXPECT_EQ(0, resized(e->ep, NVX_UVM_EP_IOC_STATS, sizeof(big), &big));
	EXPECT_EQ(EP_MAX_VMS, big.st.max_vms);
	EXPECT_EQ(1U, big.st.nr_vms);
	EXPECT_EQ(0U, big.future[0] | big.future[1]);
	big.future[1] = 1;
	EXPECT_EQ(-E2BIG, resized(e->ep, NVX_UVM_EP_IOC_STATS, sizeof(big),
				  &big));
	memset(&bigst, 0, sizeof(bigst));
	EXPECT_EQ(0, resized(b->chan_fd, NVX_UVM_CHAN_IOC_STATUS, sizeof(bigst),
			     &bigst));
	EXPECT_EQ(b->vm_id, bigst.st.vm_id);
	EXPECT_EQ(0U, bigst.future);
	bigst.future = 1;
	EXPECT_EQ(-E2BIG, resized(b->chan_fd, NVX_UVM_CHAN_IOC_STATUS,
				  sizeof(bigst), &bigst));
	memset(&r, 0, sizeof(r));
	memset(buf, 0, sizeof(buf));
	r.flags = NVX_UVM_RECV_NONBLOCK;
	memcpy(buf, &r, sizeof(r));
	EXPECT_EQ(-EAGAIN, resized(e->ep, NVX_UVM_EP_IOC_RECV, sizeof(r) + 16,
				   buf));
	buf[sizeof(r) + 15] = 1;
	EXPECT_EQ(-E2BIG, resized(e->ep, NVX_UVM_EP_IOC_RECV, sizeof(r) + 16,
				  buf));
}

TEST_HARNESS_MAIN
