// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": guests that misbehave.
 *
 * Every guest misbehaviour the host must stop, while another VM on the
 * same endpoint goes on.
 */
#include "uvm_fixture.h"

/*
 * test.img @mode breaks a rule: nvx_uvm_run() returns -EIO with @reason
 * (and @detail), while "ping 500" on the same endpoint goes on. @kernel:
 * the kernel stopped it (not the VMM), so STATUS and VM_GONE say so.
 */
static void misbehave(struct __test_metadata *_metadata, struct env *e,
		      const char *mode, uint32_t reason, uint64_t detail,
		      bool kernel)
{
	struct nvx_uvm_status st;
	struct nvx_uvm_recv r;
	struct server sv;
	struct vmm *v[2];
	uint32_t bad_id;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v[0] = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v[0], e->ep, 0, "test", "ping", "500", "1",
				NULL))
		TH_LOG("%s", vmm_why(v[0]));
	ASSERT_NE(NULL, v[1] = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v[1], e->ep, 0, "test", mode, NULL))
		TH_LOG("%s", vmm_why(v[1]));
	bad_id = v[1]->vm.vm_id;
	sv.tolerate_vm = bad_id;
	ASSERT_EQ(0, serve_done(&sv, v, 2, DEADLINE_MS))
		TH_LOG("ping: %s; %s: %s", vmm_done(v[0]) ? "done" : "running",
		       mode, vmm_done(v[1]) ? "done" : "running");
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);

	EXPECT_EQ(-EIO, v[1]->ret) TH_LOG("%s: %s", mode, vmm_why(v[1]));
	EXPECT_EQ(reason, v[1]->vm.reason)
		TH_LOG("%s stopped for %s, not %s", mode,
		       nvx_uvm_reason_name(v[1]->vm.reason),
		       nvx_uvm_reason_name(reason));
	EXPECT_EQ(detail, v[1]->vm.detail);
	ASSERT_EQ(0, nvx_uvm_status(&v[1]->vm, &st));
	EXPECT_EQ(kernel ? reason : NVX_UVM_RUNNING, st.reason);
	if (kernel)
		EXPECT_EQ(detail, st.detail);

	EXPECT_EQ(0, v[0]->ret) TH_LOG("ping: %s", vmm_why(v[0]));
	EXPECT_EQ(0U, v[0]->vm.exit_status);

	ASSERT_EQ(0, vmm_free(e, v[1]));
	EXPECT_EQ(0, recv_gone(e->ep, bad_id,
			       kernel ? reason : NVX_UVM_DETACHED, &r))
		TH_LOG("type %u VM %u status %d", r.msg.type, r.msg.src_vm,
		       r.msg.status);
	if (kernel)
		EXPECT_EQ(detail, get_u64(r.msg.payload));
	finish_vm(_metadata, e, v[0], e->ep, NVX_UVM_DETACHED);
	check_ep_idle(_metadata, e->ep);
	server_fini(&sv);
}

/* outb to port 0x80: the VMM stops it (the kernel owns only its ports). */
UVM_TEST(misbehave_bad_port)
{
	misbehave(_metadata, &self->e, "badport", NVX_UVM_ERR_PORT, BAD_PORT,
		  false);
}

/* sq_prod sq_entries + 5 ahead of sq_cons (0). */
UVM_TEST(misbehave_bad_ring)
{
	misbehave(_metadata, &self->e, "badring", NVX_UVM_ERR_RING,
		  NVX_UVM_DEF_ENTRIES + 5, true);
}

/* One segment of NVX_UVM_MAX_BULK + 1 bytes. */
UVM_TEST(misbehave_oversize)
{
	misbehave(_metadata, &self->e, "oversize", NVX_UVM_ERR_SIZE,
		  NVX_UVM_MAX_BULK + 1, true);
}

/* A segment 16 bytes before the end of RAM, 4096 long. */
UVM_TEST(misbehave_bad_addr)
{
	misbehave(_metadata, &self->e, "badaddr", NVX_UVM_ERR_ADDR,
		  VM_MEM - 16, true);
}

/* The sg array past the end of RAM. */
UVM_TEST(misbehave_bad_sg)
{
	misbehave(_metadata, &self->e, "badsg", NVX_UVM_ERR_ADDR,
		  VM_MEM + 0x1000, true);
}

/* Message type 0, the first entry of the ring. */
UVM_TEST(misbehave_bad_msg)
{
	misbehave(_metadata, &self->e, "badmsg", NVX_UVM_ERR_MSG, 0, true);
}

/* cq_entries + 1 requests without consuming: the last is refused. */
UVM_TEST(misbehave_flood)
{
	misbehave(_metadata, &self->e, "flood", NVX_UVM_ERR_FLOOD,
		  NVX_UVM_DEF_ENTRIES, true);
}

TEST_HARNESS_MAIN
