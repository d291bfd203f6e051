/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixtures of the nvx selftest group "uvm" (every uvm_* program).
 *
 * Fixture "uvm" boots real guests: the VMM runs in a thread of its
 * own, the test thread is the system process and serves the endpoint.
 * Fixture "uvm_abi" needs no guest to run: it attaches bare KVM VMs and
 * plays the guest itself, writing the rings in the grant and ringing
 * with NVX_UVM_CHAN_IOC_KICK.
 *
 * Every test ends with the pool's granted bytes back where they were
 * (checked in the teardown); the fixtures grow the pool to hold
 * POOL_CLEAN bytes of clean memory and give back what they grew. The
 * whole group skips without NVX_FEAT_UVM or /dev/kvm.
 */
#ifndef NVX_UVM_FIXTURE_H
#define NVX_UVM_FIXTURE_H

/*
 * For -Wextra: the harness's SIGALRM handler has an unused parameter,
 * and its TEST_F() wrapper keeps a pid across setjmp().
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "nvx_fixture.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"
#include "uvm_util.h"

#define ABI_TEST(name)	TEST_F_TIMEOUT(uvm_abi, name, 120)

#define UVM_TEST(name)	TEST_F_TIMEOUT(uvm, name, 300)

/*
 * Serve @v until it finishes (within DEADLINE_MS): it must have exited 0
 * and the server seen no error. Returns what the guest wrote to stdout
 * (free() it), its length in *@len if not NULL.
 */
static inline char *serve_to_exit(struct __test_metadata *_metadata,
				  struct server *sv, struct vmm *v,
				  size_t *len)
{
	char *out;

	ASSERT_EQ(0, serve_done(sv, &v, 1, DEADLINE_MS));
	EXPECT_EQ(0, sv->err) TH_LOG("%s", sv->why);
	EXPECT_EQ(0, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(0U, v->vm.exit_status);
	out = server_stdout(sv, len);
	ASSERT_NE(NULL, out);
	return out;
}

/*
 * Destroy @v and take its VM_GONE notice from @ep (a VM that detached
 * says NVX_UVM_DETACHED).
 */
static inline void finish_vm(struct __test_metadata *_metadata, struct env *e,
			     struct vmm *v, int ep, uint32_t reason)
{
	struct nvx_uvm_recv r;
	uint32_t id = v->vm.vm_id;

	ASSERT_EQ(0, vmm_free(e, v));
	EXPECT_EQ(0, recv_gone(ep, id, reason, &r))
		TH_LOG("expected VM_GONE of VM %u status %d, got type %u of VM %u status %d",
		       id, -(int)reason, r.msg.type, r.msg.src_vm,
		       r.msg.status);
}

/*
 * Open /dev/nvx, check the features and /dev/kvm, find the images, grow
 * the pool to hold POOL_CLEAN clean bytes, make the endpoint and, when
 * @boot, make sure nested KVM makes progress in this boot.
 */
static inline void env_setup(struct __test_metadata *_metadata, struct env *e,
			     bool boot)
{
	struct nvx_uvm_endpoint ep = {
		.flags = NVX_UVM_EP_CLOEXEC,
		.max_vms = EP_MAX_VMS,
	};
	struct nvx_pool_stats s;
	char why[512];
	int ret;

	memset(e, 0, sizeof(*e));
	e->ep = -1;
	e->wake = -1;
	if (!nvx_require_feature(_metadata, &e->fd, NVX_FEAT_UVM)) {
		env_release(e);
		SKIP(return, "no NVX_FEAT_UVM: user VMs not built");
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		env_release(e);
		SKIP(return, "no usable /dev/kvm: %s", strerror(errno));
	}
	if (boot && probe_get() == PROBE_STUCK) {
		env_release(e);
		SKIP(return, "nested KVM makes no progress in this boot (see the first uvm test)");
	}
	ret = find_images(e->dir, sizeof(e->dir));
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret)
		TH_LOG("no hello.img, echo.img, test.img here nor in $NVX_GUEST_DIR");
	ASSERT_EQ(0, catch_kick_sig());
	e->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, e->wake);

	ret = wait_scrubbed(e->fd);
	if (!ret)
		ret = pool_stats(e->fd, &s);
	if (!ret && s.clean_bytes < POOL_CLEAN)
		ret = pool_resize(e->fd, NVX_IOC_POOL_GROW,
				  POOL_CLEAN - s.clean_bytes, NVX_NODE_ANY,
				  &e->grown);
	if (!ret)
		ret = wait_scrubbed(e->fd);
	if (!ret)
		ret = pool_stats(e->fd, &e->start);
	if (!ret && e->start.clean_bytes < POOL_CLEAN)
		ret = -ENOMEM;
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("making %llu MiB of the pool clean: %s",
				 POOL_CLEAN / MIB, strerror(-ret));
	e->have_start = true;

	ret = nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep);
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("NVX_IOC_UVM_ENDPOINT: %s", strerror(-ret));
	e->ep = ep.fd;
	e->ep_id = ep.ep_id;

	if (!boot || probe_get() == PROBE_OK)
		return;
	ret = probe(e, why, sizeof(why));
	if (ret == 1) {
		probe_set(PROBE_STUCK);
		env_release(e);
		SKIP(return,
		     "nested KVM makes no progress in this boot: hello.img did not finish in %d s (all uvm tests skip)",
		     PROBE_MS / 1000);
	}
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("probe: %s", why);
	probe_set(PROBE_OK);
	ret = wait_granted(e->fd, &e->start);
	if (ret)
		env_release(e);
	ASSERT_EQ(0, ret) TH_LOG("the probe's grant was not given back");
}

/* Everything stopped and closed; the grants all given back. */
static inline void env_teardown(struct __test_metadata *_metadata, struct env *e)
{
	struct nvx_pool_stats s;

	if (e->fd < 0)
		return;
	env_stop_all(e);
	if (e->have_start) {
		EXPECT_EQ(0, wait_granted(e->fd, &e->start)) {
			pool_stats(e->fd, &s);
			TH_LOG("granted %llu bytes in %llu grants, %llu in %llu at the start",
			       (unsigned long long)s.granted_bytes,
			       (unsigned long long)s.grants_live,
			       (unsigned long long)e->start.granted_bytes,
			       (unsigned long long)e->start.grants_live);
		}
	}
	env_release(e);
}

/* The endpoint serves no VM and holds no message. */
static inline void check_ep_idle(struct __test_metadata *_metadata, int ep)
{
	struct nvx_uvm_ep_stats st;

	ASSERT_EQ(0, ep_stats(ep, &st));
	EXPECT_EQ(0U, st.nr_vms);
	EXPECT_EQ(0U, st.queued);
	EXPECT_EQ(0U, st.taken);
	EXPECT_EQ(0U, st.gone);
}

FIXTURE(uvm) {
	struct env e;
};

FIXTURE_SETUP(uvm)
{
	env_setup(_metadata, &self->e, true);
}

FIXTURE_TEARDOWN(uvm)
{
	env_teardown(_metadata, &self->e);
}

FIXTURE(uvm_abi) {
	struct env e;
};

FIXTURE_SETUP(uvm_abi)
{
	env_setup(_metadata, &self->e, false);
}

FIXTURE_TEARDOWN(uvm_abi)
{
	env_teardown(_metadata, &self->e);
}

#endif /* NVX_UVM_FIXTURE_H */
