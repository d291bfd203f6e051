// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "sys": the system side with real guests.
 *
 * Two guests of one endpoint exchange VM-to-VM messages through the
 * kernel (the guest runtime's vm_send()/vm_recv(), test.img's vm-* modes
 * check every byte); a guest's denied messages are answered by the
 * kernel and never reach the system process.
 */
#include "uvm_fixture.h"

static void set_policy(struct __test_metadata *_metadata, int ep,
		       uint32_t flags, uint64_t allow)
{
	struct nvx_uvm_policy p = { .flags = flags, .allow = allow };

	ASSERT_EQ(0, nvx_ioctl(ep, NVX_UVM_EP_IOC_SET_POLICY, &p));
}

/*
 * Launch test.img "@a" (the receiver, first) and test.img "@b ID ..."
 * (the sender, told the receiver's id), serve both to their exit and
 * return the sender's stdout.
 */
static char *two_guests(struct __test_metadata *_metadata, struct env *e,
			const char *const a[], const char *const b[],
			struct nvx_uvm_ep_stats *st)
{
	struct server sv;
	struct vmm *v[2];
	char id[16], *out = NULL;
	int i;

	if (server_init(&sv, e->ep, e->wake, true))
		return NULL;
	v[0] = vmm_new(e);
	v[1] = vmm_new(e);
	if (!v[0] || !v[1])
		goto out;
	if (vmm_launch(e, v[0], e->ep, 0, "test", a[0], a[1], a[2], NULL)) {
		TH_LOG("receiver: %s", vmm_why(v[0]));
		goto out;
	}
	snprintf(id, sizeof(id), "%u", v[0]->vm.vm_id);
	if (vmm_launch(e, v[1], e->ep, 0, "test", b[0], id, b[1], b[2], b[3],
		       NULL)) {
		TH_LOG("sender: %s", vmm_why(v[1]));
		goto out;
	}
	if (serve_done(&sv, v, 2, DEADLINE_MS) || sv.err) {
		TH_LOG("serving: %s", sv.why);
		goto out;
	}
	for (i = 0; i < 2; i++) {
		if (v[i]->ret || v[i]->vm.exit_status) {
			TH_LOG("guest %d: ret %d, exit %u, %s; stderr: %s", i,
			       v[i]->ret, v[i]->vm.exit_status,
			       vmm_why(v[i]), server_stderr(&sv));
			goto out;
		}
	}
	ep_stats(e->ep, st);
	out = server_stdout(&sv, NULL);
out:
	for (i = 0; i < 2; i++)
		if (v[i])
			vmm_free(e, v[i]);
	server_fini(&sv);
	return out;
}

/* 64-byte messages, payload only, 200 round trips, checked by the guests. */
UVM_TEST(vm2vm_guests_ping_payload)
{
	static const char *const a[] = { "vm-echo", "200", "64" };
	static const char *const b[] = { "vm-ping", "200", "0", "1" };
	struct nvx_uvm_ep_stats st;
	char *out;

	set_policy(_metadata, self->e.ep, NVX_UVM_POLICY_VM2VM,
		   NVX_UVM_POLICY_ALL);
	out = two_guests(_metadata, &self->e, a, b, &st);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "ping 200 0 ok")) TH_LOG("%s", out);
	EXPECT_EQ(400U, st.vm2vm);
	EXPECT_EQ(0U, st.vm2vm_bytes);
	/* only the guests' stdout and exits reached the system process */
	EXPECT_GE(st.msgs_in, 2U);
	EXPECT_LT(st.msgs_in, 20U);
	free(out);
}

/* 64 KiB each way, in 4 segments, unaligned, across pages. */
UVM_TEST(vm2vm_guests_push_64k_segments)
{
	static const char *const a[] = { "vm-echo", "30", "262144" };
	static const char *const b[] = { "vm-ping", "30", "65536", "4" };
	struct nvx_uvm_ep_stats st;
	char *out;

	set_policy(_metadata, self->e.ep, NVX_UVM_POLICY_VM2VM,
		   NVX_UVM_POLICY_ALL);
	out = two_guests(_metadata, &self->e, a, b, &st);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "ping 30 65536 ok")) TH_LOG("%s", out);
	EXPECT_EQ(60U, st.vm2vm);
	EXPECT_EQ(60ULL * 65536, st.vm2vm_bytes);
	free(out);
}

/* The maximum bulk, PULLed from a RECV that offers it. */
UVM_TEST(vm2vm_guests_pull_max)
{
	static const char *const a[] = { "vm-offer", "10", "262144" };
	static const char *const b[] = { "vm-pull", "10", "262144", NULL };
	struct nvx_uvm_ep_stats st;
	char *out;

	set_policy(_metadata, self->e.ep, NVX_UVM_POLICY_VM2VM,
		   NVX_UVM_POLICY_ALL);
	out = two_guests(_metadata, &self->e, a, b, &st);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(10U, st.vm2vm);
	EXPECT_EQ(10ULL * NVX_UVM_MAX_BULK, st.vm2vm_bytes);
	free(out);
}

/* Without NVX_UVM_POLICY_VM2VM a guest's send completes with -EPERM. */
UVM_TEST(vm2vm_guests_forbidden)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st0, st;
	struct server sv;
	struct vmm *v;
	char *out;

	ASSERT_EQ(0, ep_stats(e->ep, &st0));
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "vm-send", "1", "64",
				NULL)) TH_LOG("%s", vmm_why(v));
	out = serve_to_exit(_metadata, &sv, v, NULL);
	EXPECT_NE(NULL, strstr(out, "status -1 bulk 0")) TH_LOG("%s", out);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(1U, st.denied - st0.denied);
	EXPECT_EQ(0U, st.vm2vm);
	free(out);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * A type the policy denies: 500 messages answered by the kernel, none
 * seen by the system process; the guest checks each status is -EPERM.
 */
UVM_TEST(policy_guest_denied_never_reaches_system)
{
	struct env *e = &self->e;
	struct nvx_uvm_ep_stats st0, st;
	struct server sv;
	struct vmm *v;
	char *out;

	set_policy(_metadata, e->ep, 0,
		   NVX_UVM_POLICY_ALL & ~(1ULL << NVX_UVM_MSG_GUEST_MAX));
	/* the first test of a boot ran the probe VM on this endpoint */
	ASSERT_EQ(0, ep_stats(e->ep, &st0));
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "deny", "500", NULL))
		TH_LOG("%s", vmm_why(v));
	out = serve_to_exit(_metadata, &sv, v, NULL);
	ASSERT_EQ(0, ep_stats(e->ep, &st));
	EXPECT_EQ(500U, st.denied - st0.denied);
	/* the EXIT message only */
	EXPECT_EQ(1U, st.msgs_in - st0.msgs_in);
	free(out);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

TEST_HARNESS_MAIN
