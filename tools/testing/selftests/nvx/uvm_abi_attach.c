// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": endpoint and attach arguments.
 *
 * Every argument check and errno of NVX_IOC_UVM_ENDPOINT and
 * NVX_IOC_UVM_ATTACH, and a full endpoint.
 */
#include "uvm_fixture.h"

/* ENDPOINT: flags and max_vms are checked; defaults come back. */
ABI_TEST(endpoint_args)
{
	struct env *e = &self->e;
	struct nvx_uvm_endpoint ep;
	struct nvx_uvm_ep_stats st;
	struct {
		struct nvx_uvm_endpoint ep;
		uint64_t future;
	} big;
	unsigned long cmd;

	memset(&ep, 0, sizeof(ep));
	ep.flags = NVX_UVM_EP_FLAGS + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ep.flags = ~0u;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	memset(&ep, 0, sizeof(ep));
	ep.max_vms = NVX_UVM_MAX_VMS + 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ep.max_vms = ~0u;
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	cmd = nvx_ioc_resize(NVX_IOC_UVM_ENDPOINT, 8);
	EXPECT_EQ(-EINVAL, nvx_ioctl(e->fd, cmd, &ep));
	memset(&big, 0, sizeof(big));
	big.future = 1;
	cmd = nvx_ioc_resize(NVX_IOC_UVM_ENDPOINT, sizeof(big));
	EXPECT_EQ(-E2BIG, nvx_ioctl(e->fd, cmd, &big));

	/* 0 = the default; no CLOEXEC unless asked */
	memset(&ep, 0, sizeof(ep));
	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	EXPECT_EQ(DEF_VMS, ep.max_vms);
	EXPECT_LE(0, ep.fd);
	EXPECT_NE(0U, ep.ep_id);
	EXPECT_NE(e->ep_id, ep.ep_id);
	EXPECT_EQ(0, fcntl(ep.fd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ(DEF_VMS, st.max_vms);
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.attached);
	EXPECT_EQ(0U, st.msgs_in);
	st.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(ep.fd, NVX_UVM_EP_IOC_STATS, &st));
	close(ep.fd);

	memset(&ep, 0, sizeof(ep));
	ep.flags = NVX_UVM_EP_CLOEXEC;
	ep.max_vms = NVX_UVM_MAX_VMS;
	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	EXPECT_EQ((uint32_t)NVX_UVM_MAX_VMS, ep.max_vms);
	EXPECT_EQ(FD_CLOEXEC, fcntl(ep.fd, F_GETFD) & FD_CLOEXEC);
	close(ep.fd);
}

/* ATTACH that fails, and which field made it fail. */
static int try_attach(struct env *e, struct nvx_uvm_attach *a)
{
	int ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ATTACH, a);

	if (!ret && a->fd >= 0)
		close(a->fd);
	return ret;
}

#define ATTACH_FAILS(err, b, ...) do {					\
	struct nvx_uvm_attach a_;					\
	bare_args((b), self->e.ep, 0, &a_);				\
	{								\
		struct nvx_uvm_attach *a = &a_;				\
		__VA_ARGS__;						\
	}								\
	EXPECT_EQ(err, try_attach(&self->e, &a_))			\
		TH_LOG("ATTACH with %s", #__VA_ARGS__);			\
} while (0)

/*
 * Every ATTACH check: flags, pad, ring sizes and alignment, each fd of
 * the wrong kind or not open, rings outside RAM or overlapping; then a
 * good one and what it writes into the control page.
 */
ABI_TEST(attach_args)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_attach a;
	struct nvx_uvm_ctrl *c;
	struct nvx_uvm_recv r;
	struct bare *b, *b2;
	int efd, pfd[2], closed, i;
	uint64_t mem;
	uint32_t id;

	ASSERT_EQ(0, bare_new(e, &b));
	mem = b->mem_size;
	ASSERT_EQ(VM_MEM, mem);
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	closed = dup(efd);
	ASSERT_LE(0, closed);
	close(closed);

	ATTACH_FAILS(-EINVAL, b, a->flags |= 1u << 7);
	ATTACH_FAILS(-EINVAL, b, a->flags = ~0u);
	ATTACH_FAILS(-EINVAL, b, a->reserved = 1);
	ATTACH_FAILS(-EINVAL, b, a->sq_entries = 3);
	ATTACH_FAILS(-EINVAL, b, a->cq_entries = 48);
	ATTACH_FAILS(-EINVAL, b, a->sq_entries = 2 * NVX_UVM_MAX_ENTRIES);
	ATTACH_FAILS(-EINVAL, b, a->cq_entries = 1u << 31);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = 0x800);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = 0x100010);
	ATTACH_FAILS(-EINVAL, b, a->sq_gpa = NVX_UVM_SQ_GPA + 32);
	ATTACH_FAILS(-EINVAL, b, a->cq_gpa = NVX_UVM_CQ_GPA + 1);

	/* fds of the wrong kind, or not open */
	ATTACH_FAILS(-EINVAL, b, a->vm_fd = efd);
	ATTACH_FAILS(-EINVAL, b, a->vm_fd = e->fd);
	ATTACH_FAILS(-EINVAL, b, a->vm_fd = b->kvm_fd);
	ATTACH_FAILS(-EBADF, b, a->vm_fd = -1);
	ATTACH_FAILS(-EBADF, b, a->vm_fd = closed);
	ATTACH_FAILS(-EBADF, b, a->vm_fd = INT_MAX);
	ATTACH_FAILS(-EINVAL, b, a->ep_fd = efd);
	ATTACH_FAILS(-EINVAL, b, a->ep_fd = e->fd);
	ATTACH_FAILS(-EBADF, b, a->ep_fd = -1);
	ATTACH_FAILS(-EBADF, b, a->ep_fd = closed);
	/* nvx_grant_fget(): -EINVAL for another file, -EBADF for none */
	ATTACH_FAILS(-EINVAL, b, a->grant_fd = efd);
	ATTACH_FAILS(-EINVAL, b, a->grant_fd = b->vm_fd);
	ATTACH_FAILS(-EBADF, b, a->grant_fd = -1);
	ATTACH_FAILS(-EBADF, b, a->grant_fd = closed);
	/* eventfd_ctx_fdget(): -EINVAL for another file, -EBADF for none */
	ATTACH_FAILS(-EINVAL, b, a->irq_fd = pfd[0]);
	ATTACH_FAILS(-EINVAL, b, a->irq_fd = b->grant_fd);
	ATTACH_FAILS(-EBADF, b, a->irq_fd = -2);
	ATTACH_FAILS(-EBADF, b, a->irq_fd = closed);

	/* outside RAM */
	ATTACH_FAILS(-ENOSPC, b, a->ctrl_gpa = mem);
	ATTACH_FAILS(-ENOSPC, b, a->ctrl_gpa = 1ULL << 40);
	ATTACH_FAILS(-ENOSPC, b, a->ctrl_gpa = ~0xfffULL);
	ATTACH_FAILS(-ENOSPC, b, a->sq_gpa = mem - 63 * 64);
	ATTACH_FAILS(-ENOSPC, b, a->cq_gpa = mem);
	ATTACH_FAILS(-ENOSPC, b, a->cq_gpa = ~63ULL);
	ATTACH_FAILS(-ENOSPC, b, a->sq_entries = 256;
		     a->sq_gpa = mem - 255 * 64);
	/* overlapping */
	ATTACH_FAILS(-EINVAL, b, a->sq_gpa = 0);
	ATTACH_FAILS(-EINVAL, b, a->sq_gpa = 0xfc0);
	ATTACH_FAILS(-EINVAL, b, a->cq_gpa = NVX_UVM_SQ_GPA + 63 * 64);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = NVX_UVM_SQ_GPA);
	ATTACH_FAILS(-EINVAL, b, a->ctrl_gpa = NVX_UVM_CQ_GPA);
	ATTACH_FAILS(-EINVAL, b, a->cq_gpa = NVX_UVM_SQ_GPA);

	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.attached);

	/* a good one, rings back to back, explicit sizes */
	c = b->ctrl;
	memset(c, 0xa5, 4096);
	bare_args(b, e->ep, 0, &a);
	a.irq_fd = efd;
	a.sq_entries = 128;
	a.cq_entries = 32;
	a.sq_gpa = 0x1000;
	a.cq_gpa = 0x1000 + 128 * 64;
	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ATTACH, &a));
	b->chan_fd = a.fd;
	EXPECT_LE(0, a.fd);
	EXPECT_NE(0U, a.vm_id);
	EXPECT_EQ(mem, a.mem_size);
	EXPECT_EQ(128U, a.sq_entries);
	EXPECT_EQ(32U, a.cq_entries);
	EXPECT_EQ(FD_CLOEXEC, fcntl(a.fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ((uint32_t)NVX_UVM_CTRL_MAGIC, c->magic);
	EXPECT_EQ((uint32_t)NVX_UVM_CTRL_VERSION, c->version);
	EXPECT_EQ(a.vm_id, c->vm_id);
	EXPECT_EQ(sizeof(*c), c->ctrl_size);
	EXPECT_EQ(mem, c->mem_size);
	EXPECT_EQ(0x1000U, c->sq_gpa);
	EXPECT_EQ(0x1000U + 128 * 64, c->cq_gpa);
	EXPECT_EQ(128U, c->sq_entries);
	EXPECT_EQ(32U, c->cq_entries);
	for (i = 0; i < NVX_UVM_SEED_SIZE && c->seed[i] == 0xa5; i++)
		;
	EXPECT_GT(NVX_UVM_SEED_SIZE, i) TH_LOG("the seed was not written");
	EXPECT_EQ(0U, c->credits);
	EXPECT_EQ(0U, c->flags);
	EXPECT_EQ(0U, c->sq_prod);
	EXPECT_EQ(0U, c->sq_cons);
	EXPECT_EQ(0U, c->cq_prod);
	EXPECT_EQ(0U, c->cq_cons);
	EXPECT_EQ(0U, c->doorbells);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(1U, st.attached);

	/* one channel per VM, by any fd of it */
	b->vm_id = a.vm_id;
	bare_args(b, e->ep, 0, &a);
	EXPECT_EQ(-EBUSY, try_attach(e, &a));
	a.vm_fd = dup(b->vm_fd);
	ASSERT_LE(0, a.vm_fd);
	EXPECT_EQ(-EBUSY, try_attach(e, &a));
	close(a.vm_fd);
	/* a channel is no endpoint (another VM: this one is taken) */
	ASSERT_EQ(0, bare_new(e, &b2));
	ATTACH_FAILS(-EINVAL, b2, a->ep_fd = b->chan_fd);

	/* detached, the VM may attach again, with a new id */
	id = b->vm_id;
	close(b->chan_fd);
	b->chan_fd = -1;
	ASSERT_EQ(0, bare_attach(e, b, e->ep, 0));
	EXPECT_NE(id, b->vm_id);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(2U, st.attached);
	EXPECT_EQ(1U, st.gone);
	EXPECT_EQ(0, recv_gone(e->ep, id, NVX_UVM_DETACHED, &r));

	close(efd);
	close(pfd[0]);
	close(pfd[1]);
}

/* An endpoint serves at most max_vms VMs; a detach makes room. */
ABI_TEST(attach_endpoint_full)
{
	struct env *e = &self->e;
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 1 };
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_recv r;
	struct bare *b[2];
	uint32_t id;

	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ASSERT_EQ(0, bare_new(e, &b[0]));
	ASSERT_EQ(0, bare_new(e, &b[1]));
	ASSERT_EQ(0, bare_attach(e, b[0], ep.fd, 0));
	EXPECT_EQ(-EBUSY, bare_attach(e, b[1], ep.fd, 0));
	/* another endpoint has room */
	ASSERT_EQ(0, bare_attach(e, b[1], e->ep, 0));
	close(b[1]->chan_fd);
	b[1]->chan_fd = -1;

	id = b[0]->vm_id;
	close(b[0]->chan_fd);
	b[0]->chan_fd = -1;
	ASSERT_EQ(0, bare_attach(e, b[1], ep.fd, 0));
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ(1U, st.nr_vms);
	EXPECT_EQ(1U, st.max_vms);
	EXPECT_EQ(2U, st.attached);
	EXPECT_EQ(1U, st.gone);
	EXPECT_EQ(0, recv_gone(ep.fd, id, NVX_UVM_DETACHED, &r));
	EXPECT_EQ(-EBUSY, bare_attach(e, b[0], ep.fd, 0));
	close(ep.fd);
}

/*
 * An endpoint nobody receives on: after NVX_UVM_MAX_GONE detaches it holds
 * that many VM_GONE notices and refuses ATTACH with -EBUSY, losing none;
 * one RECV makes room again. Before the bound every detach queued one
 * more notice, without end.
 */
ABI_TEST(gone_notices_bounded)
{
	struct env *e = &self->e;
	struct nvx_uvm_endpoint ep = { .flags = NVX_UVM_EP_CLOEXEC,
				       .max_vms = 1 };
	struct nvx_uvm_ep_stats st;
	struct nvx_uvm_recv r;
	uint32_t first = 0, i;
	struct bare *b;

	ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
	ASSERT_EQ(0, bare_new(e, &b));
	for (i = 0; i < NVX_UVM_MAX_GONE; i++) {
		ASSERT_EQ(0, bare_attach(e, b, ep.fd, NVX_UVM_ATTACH_SLOW))
			TH_LOG("attach %u", i);
		if (!i)
			first = b->vm_id;
		close(b->chan_fd);
		b->chan_fd = -1;
	}
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_MAX_GONE, st.gone);
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(-EBUSY, bare_attach(e, b, ep.fd, NVX_UVM_ATTACH_SLOW));
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_MAX_GONE, st.gone);

	/* the oldest notice first; then there is room for one VM */
	EXPECT_EQ(0, recv_gone(ep.fd, first, NVX_UVM_DETACHED, &r));
	ASSERT_EQ(0, bare_attach(e, b, ep.fd, NVX_UVM_ATTACH_SLOW));
	close(b->chan_fd);
	b->chan_fd = -1;
	ASSERT_EQ(0, ep_stats(ep.fd, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_MAX_GONE, st.gone);
	for (i = 0; i < NVX_UVM_MAX_GONE; i++)
		ASSERT_EQ(0, recv_nb(ep.fd, &r)) TH_LOG("notice %u", i);
	EXPECT_EQ(-EAGAIN, recv_nb(ep.fd, &r));
	close(ep.fd);
}

TEST_HARNESS_MAIN
