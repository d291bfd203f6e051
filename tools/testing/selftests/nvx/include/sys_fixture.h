/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the nvx selftest group "sys" (every sys_* program):
 * the environment of the uvm group's "uvm_abi" fixture (/dev/nvx, a
 * pool with POOL_CLEAN clean bytes, an endpoint e.ep with EP_MAX_VMS
 * VMs, no guest booted) and room for more endpoints, closed in the
 * teardown before the pool's granted bytes are checked. The tests play
 * the guests with bare VMs (sys_util.h). The group skips without
 * NVX_FEAT_UVM or /dev/kvm.
 */
#ifndef NVX_SYS_FIXTURE_H
#define NVX_SYS_FIXTURE_H

#include "uvm_fixture.h"
#include "sys_util.h"

#define SYS_EPS		2	/* endpoints besides e.ep */

#define SYS_TEST(name)	TEST_F_TIMEOUT(sys, name, 120)

/* The endpoints a test made besides e.ep: fd -1 for none. */
struct sys_eps {
	int fd[SYS_EPS];
	uint32_t id[SYS_EPS];
};

FIXTURE(sys) {
	struct env e;
	struct sys_eps eps;
};

FIXTURE_SETUP(sys)
{
	int i;

	for (i = 0; i < SYS_EPS; i++)
		self->eps.fd[i] = -1;
	env_setup(_metadata, &self->e, false);
}

FIXTURE_TEARDOWN(sys)
{
	int i;

	/* closing an endpoint stops its VMs; env_teardown() frees them */
	for (i = 0; i < SYS_EPS; i++) {
		if (self->eps.fd[i] >= 0)
			close(self->eps.fd[i]);
		self->eps.fd[i] = -1;
	}
	env_teardown(_metadata, &self->e);
}

/* Endpoint @i of @x (EP_MAX_VMS VMs), made once: its fd. */
static inline int sys_ep(struct __test_metadata *_metadata, struct env *e,
			 struct sys_eps *x, int i)
{
	int fd;

	if (x->fd[i] >= 0)
		return x->fd[i];
	fd = sys_ep_new(e->fd, EP_MAX_VMS, &x->id[i]);
	ASSERT_LE(0, fd) TH_LOG("NVX_IOC_UVM_ENDPOINT: %s", strerror(-fd));
	x->fd[i] = fd;
	return fd;
}

/* A completion of @b is due: it comes (within SYS_WAIT_MS) into *@m. */
static inline void get_completion(struct __test_metadata *_metadata,
				  struct bare *b, struct nvx_uvm_msg *m)
{
	ASSERT_EQ(0, sys_wait_complete(b, m, SYS_WAIT_MS))
		TH_LOG("VM %u: no completion within %d ms", b->vm_id,
		       SYS_WAIT_MS);
}

/* The endpoint holds nothing for its system process. */
#define EXPECT_NOTHING_TO_RECV(ep) do {					\
	struct nvx_uvm_recv __r;					\
	int __ret = recv_nb(ep, &__r);					\
									\
	EXPECT_EQ(-EAGAIN, __ret)					\
		TH_LOG("RECV got type %u tag %#x of VM %u",		\
		       __r.msg.type, __r.msg.tag, __r.msg.src_vm);	\
} while (0)

/*
 * Post @m on @b (nothing due before): the kernel answers it at the
 * doorbell with @status, type and tag echoed and no bulk moved, and
 * nothing reaches the system process on @ep (-1: do not look).
 */
static inline void expect_refused(struct __test_metadata *_metadata,
				  struct bare *b, int ep,
				  const struct nvx_uvm_msg *m, int32_t status)
{
	struct nvx_uvm_msg c;

	ASSERT_EQ(0, sys_cq_pending(b));
	ASSERT_EQ(0, bare_post(b, m));
	ASSERT_EQ(0, bare_complete(b, &c))
		TH_LOG("type %u tag %#x of VM %u: no completion written at the doorbell",
		       m->type, m->tag, b->vm_id);
	EXPECT_EQ(m->type, c.type);
	EXPECT_EQ(m->tag, c.tag);
	EXPECT_EQ(status, c.status)
		TH_LOG("type %u tag %#x of VM %u: status %d, not %d", m->type,
		       m->tag, b->vm_id, c.status, status);
	EXPECT_EQ(0U, c.bulk_len);
	EXPECT_EQ(0, sys_cq_pending(b));
	if (ep >= 0)
		EXPECT_NOTHING_TO_RECV(ep);
}

/*
 * Post @m on @b (nothing due before): it reaches the system process on
 * @ep at once, which answers it (status 0, payload seed @m->tag + 1);
 * the completion says so. Its RECV goes into *@r if not NULL.
 */
static inline void expect_served(struct __test_metadata *_metadata,
				 struct bare *b, int ep,
				 const struct nvx_uvm_msg *m,
				 struct nvx_uvm_recv *r)
{
	struct nvx_uvm_recv rr;
	struct nvx_uvm_msg c;

	if (!r)
		r = &rr;
	ASSERT_EQ(0, sys_cq_pending(b));
	ASSERT_EQ(0, bare_post(b, m));
	EXPECT_EQ(0, sys_cq_pending(b))
		TH_LOG("type %u tag %#x of VM %u: completed before its reply",
		       m->type, m->tag, b->vm_id);
	ASSERT_EQ(0, recv_nb(ep, r))
		TH_LOG("type %u tag %#x of VM %u did not reach the system process",
		       m->type, m->tag, b->vm_id);
	EXPECT_EQ(m->type, r->msg.type);
	EXPECT_EQ(m->tag, r->msg.tag);
	EXPECT_EQ(b->vm_id, r->msg.src_vm);
	ASSERT_EQ(0, sys_reply(ep, r->cookie, m->type, 0, m->tag + 1));
	ASSERT_EQ(0, bare_complete(b, &c));
	EXPECT_EQ(m->type, c.type);
	EXPECT_EQ(m->tag, c.tag);
	EXPECT_EQ(0, c.status);
	EXPECT_TRUE(sys_payload_is(c.payload, m->tag + 1));
}

#endif /* NVX_SYS_FIXTURE_H */
