// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": IPC on the fast path and bulk transfers.
 *
 * IPC on the fast path (no exit to userspace per message, read from
 * KVM's userspace_exits statistic) against the slow path through the
 * VMM, bulk PUSH/PULL of every size class and offset, two VMs on one
 * endpoint.
 */
#include "uvm_fixture.h"

/*
 * "ping N W" on the fast path: the guest checks every reply (no loss,
 * duplicate or reordering) and the vCPU never returned to userspace per
 * message.
 */
static void ping_fast(struct __test_metadata *_metadata, struct env *e,
		      unsigned int n, unsigned int w)
{
	struct nvx_uvm_status st;
	char ns[16], ws[16];
	struct server sv;
	struct vmm *v;
	int64_t exits;
	uint64_t t0;

	snprintf(ns, sizeof(ns), "%u", n);
	snprintf(ws, sizeof(ws), "%u", w);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "ping", ns, ws,
				NULL))
		TH_LOG("%s", vmm_why(v));
	t0 = now_ms();
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS))
		TH_LOG("%llu messages served in %d s",
		       (unsigned long long)sv.msgs, DEADLINE_MS / 1000);
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status)
		TH_LOG("10: reply out of order, 11: wrong payload, 12: error status; stderr \"%s\"",
		       server_stderr(&sv));
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_LE(n, st.msgs_in);
	EXPECT_EQ(st.msgs_in, st.msgs_out);
	EXPECT_EQ(0U, st.in_flight);
	EXPECT_LE(1U, st.doorbells);
	EXPECT_EQ(0U, v->vm.kicks);
	exits = nvx_uvm_kvm_stat(v->vm.stats_fd, "userspace_exits");
	ASSERT_LE(0, exits) TH_LOG("no userspace_exits in KVM's statistics");
	EXPECT_GT(50, exits)
		TH_LOG("%lld exits to userspace for %llu messages",
		       (long long)exits, (unsigned long long)st.msgs_in);
	TH_LOG("ping %u window %u: %llu ms, %lld exits to userspace, %llu doorbells",
	       n, w, (unsigned long long)(now_ms() - t0), (long long)exits,
	       (unsigned long long)st.doorbells);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

UVM_TEST(ping_fast_path_one_at_a_time)
{
	ping_fast(_metadata, &self->e, 10000, 1);
}

UVM_TEST(ping_fast_path_sixteen_in_flight)
{
	ping_fast(_metadata, &self->e, 10000, 16);
}

/*
 * The baseline: with NVX_UVM_ATTACH_SLOW every doorbell exits to the
 * VMM, which passes it on with KICK; userspace_exits shows it.
 */
UVM_TEST(ping_slow_path_exits_per_doorbell)
{
	struct env *e = &self->e;
	struct nvx_uvm_status st;
	struct server sv;
	struct vmm *v;
	int64_t exits;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 1, "test", "ping", "1000", "1",
				NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_LE(1000U, st.msgs_in);
	EXPECT_LT(0U, st.doorbells);
	EXPECT_LE(1000U, st.doorbells);
	EXPECT_LE(st.doorbells, v->vm.kicks);
	exits = nvx_uvm_kvm_stat(v->vm.stats_fd, "userspace_exits");
	ASSERT_LE(0, exits) TH_LOG("no userspace_exits in KVM's statistics");
	EXPECT_LE(1000, exits);
	EXPECT_LE((int64_t)v->vm.kicks, exits);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/* The bulk test's system side: check the PUSH, answer the PULL. */
struct bulk_ctx {
	uint32_t size;
	unsigned char *pat;
	int writes;
	int reads;
};

static int bulk_handle(struct server *sv, struct nvx_uvm_recv *r)
{
	struct bulk_ctx *c = sv->priv;
	const unsigned char *got = sv->s.buf;
	struct nvx_uvm_reply rep;
	uint32_t fd = get_u32(r->msg.payload), k;

	memset(&rep, 0, sizeof(rep));
	rep.cookie = r->cookie;
	rep.msg.type = r->msg.type;
	switch (r->msg.type) {
	case NVX_UVM_MSG_WRITE:
		c->writes++;
		rep.msg.status = -EIO;
		if (r->msg.flags != NVX_UVM_MSGF_PUSH || fd != 1 ||
		    r->data_len != c->size) {
			sv_fail(sv, -EPROTO,
				"WRITE: flags %#x fd %u data_len %u, expected PUSH 1 %u",
				r->msg.flags, fd, r->data_len, c->size);
			break;
		}
		for (k = 0; k < c->size && got[k] == c->pat[k]; k++)
			;
		if (k < c->size) {
			sv_fail(sv, -EPROTO, "WRITE of %u: byte %u is %#x, not %#x",
				c->size, k, got[k], c->pat[k]);
			break;
		}
		rep.msg.status = 0;
		break;
	case NVX_UVM_MSG_READ:
		c->reads++;
		rep.msg.status = -EIO;
		if (r->msg.flags != NVX_UVM_MSGF_PULL || fd != 0 ||
		    r->data_len != c->size) {
			sv_fail(sv, -EPROTO,
				"READ: flags %#x fd %u room %u, expected PULL 0 %u",
				r->msg.flags, fd, r->data_len, c->size);
			break;
		}
		rep.msg.status = 0;
		rep.buf = (uintptr_t)c->pat;
		rep.buf_len = c->size;
		break;
	default:
		return serve_default(sv, r);
	}
	if (ioctl(sv->ep, NVX_UVM_EP_IOC_REPLY, &rep) < 0)
		return -errno;
	return 0;
}

/*
 * "bulk SIZE OFF": a PUSH of SIZE bytes from OFF bytes into a page,
 * checked byte for byte here, then a PULL of the same bytes, checked by
 * the guest; sizes around a page, offsets that cross pages.
 */
UVM_TEST(bulk_push_pull_sizes_offsets)
{
	static const struct {
		uint32_t size, off;
	} cases[] = {
		{ 1, 0 }, { 1, 4095 }, { 4095, 0 }, { 4095, 4000 },
		{ 4096, 0 }, { 4096, 100 }, { 4097, 0 }, { 4097, 4000 },
		{ 65536, 0 }, { 65536, 100 },
	};
	struct env *e = &self->e;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct bulk_ctx c = { .size = cases[i].size };
		struct nvx_uvm_status st;
		char size[16], off[16];
		struct server sv;
		struct vmm *v;

		TH_LOG("bulk %u at offset %u", cases[i].size, cases[i].off);
		snprintf(size, sizeof(size), "%u", cases[i].size);
		snprintf(off, sizeof(off), "%u", cases[i].off);
		ASSERT_NE(NULL, c.pat = malloc(c.size));
		bulk_pattern(c.pat, c.size);
		ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
		sv.handle = bulk_handle;
		sv.priv = &c;
		ASSERT_NE(NULL, v = vmm_new(e));
		ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "bulk", size,
					off, NULL))
			TH_LOG("%s", vmm_why(v));
		ASSERT_EQ(0, serve_done(&sv, &v, 1, DEADLINE_MS));
		EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
		ASSERT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
		EXPECT_EQ(0U, v->vm.exit_status)
			TH_LOG("20: write short, 21: read short, 22: pattern wrong");
		EXPECT_EQ(1, c.writes);
		EXPECT_EQ(1, c.reads);
		ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
		EXPECT_EQ(c.size, st.bulk_out);
		EXPECT_EQ(c.size, st.bulk_in);
		EXPECT_EQ(0U, st.in_flight);
		finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
		server_fini(&sv);
		free(c.pat);
		if (_metadata->exit_code)
			return;
	}
}

/* Two VMs on one endpoint: every message names its true sender. */
struct two_ctx {
	uint32_t id[2];
	uint64_t next[2];	/* the IPC payload expected next */
};

static int two_handle(struct server *sv, struct nvx_uvm_recv *r)
{
	struct two_ctx *c = sv->priv;
	int i;

	if (r->msg.type == NVX_UVM_MSG_VM_GONE)
		return serve_default(sv, r);
	for (i = 0; i < 2 && r->msg.src_vm != c->id[i]; i++)
		;
	if (i == 2) {
		sv_fail(sv, -EPROTO, "message type %u from VM %u, not %u or %u",
			r->msg.type, r->msg.src_vm, c->id[0], c->id[1]);
	} else if (r->msg.type == NVX_UVM_MSG_IPC) {
		/* a window of 1: each VM's payloads come in order */
		if (get_u64(r->msg.payload) != c->next[i])
			sv_fail(sv, -EPROTO, "VM %u sent payload %llu, expected %llu",
				c->id[i],
				(unsigned long long)get_u64(r->msg.payload),
				(unsigned long long)c->next[i]);
		c->next[i]++;
	}
	return serve_default(sv, r);
}

UVM_TEST(two_vms_one_endpoint)
{
	struct env *e = &self->e;
	struct two_ctx c = { 0 };
	struct server sv;
	struct vmm *v[2];
	int i;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	sv.handle = two_handle;
	sv.priv = &c;
	for (i = 0; i < 2; i++) {
		ASSERT_NE(NULL, v[i] = vmm_new(e));
		ASSERT_EQ(0, vmm_launch(e, v[i], e->ep, 0, "test", "ping",
					"2000", "1", NULL))
			TH_LOG("%s", vmm_why(v[i]));
		c.id[i] = v[i]->vm.vm_id;
	}
	ASSERT_NE(c.id[0], c.id[1]);
	ASSERT_EQ(0, serve_done(&sv, v, 2, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, v[i]->ret) TH_LOG("%s", vmm_why(v[i]));
		EXPECT_EQ(0U, v[i]->vm.exit_status);
		EXPECT_EQ(2000U, c.next[i]);
	}
	for (i = 0; i < 2; i++)
		finish_vm(_metadata, e, v[i], e->ep, NVX_UVM_DETACHED);
	check_ep_idle(_metadata, e->ep);
	server_fini(&sv);
}

TEST_HARNESS_MAIN
