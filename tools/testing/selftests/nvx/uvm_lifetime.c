// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": lifetimes.
 *
 * The system process going away (closing the endpoint, or killed), the
 * VMM killed in the middle of a transfer, and fds closed in every order
 * while the vCPU runs.
 */
#include "uvm_fixture.h"

/*
 * The system process goes away with a request of the VM taken and not
 * answered (closing the endpoint's last fd): the VM stops with
 * NVX_UVM_ERR_ENDPOINT and its memory goes back to the pool.
 */
UVM_TEST(endpoint_closed_stops_vm)
{
	struct env *e = &self->e;
	struct hold h = { .type = NVX_UVM_MSG_IPC };
	struct nvx_uvm_ep_stats es;
	struct nvx_uvm_status st;
	struct server sv;
	struct vmm *v;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	sv.handle = hold_handle;
	sv.priv = &h;
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "wait", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_until_stop(&sv, DEADLINE_MS));
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(v->vm.vm_id, h.r.msg.src_vm);
	ASSERT_EQ(0, ep_stats(e->ep, &es));
	EXPECT_EQ(1U, es.nr_vms);
	EXPECT_EQ(1U, es.taken);
	EXPECT_FALSE(vmm_done(v));

	close(e->ep);		/* the only copy: VMMs keep none */
	e->ep = -1;
	ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS)) TH_LOG("the VM runs on");
	EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(e->ep_id, v->vm.detail);
	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, st.reason);
	EXPECT_EQ(1U, st.in_flight);
	EXPECT_EQ(1U, st.msgs_in);
	EXPECT_EQ(0U, st.msgs_out);
	ASSERT_EQ(0, vmm_free(e, v));
	EXPECT_EQ(0, wait_granted(e->fd, &e->start))
		TH_LOG("granted %llu, %llu at the start",
		       (unsigned long long)granted_now(e->fd),
		       (unsigned long long)e->start.granted_bytes);
	server_fini(&sv);
}

/*
 * A pipe in @p and a child: 0 in the child, with p[1] to write to; the
 * child's pid in the parent, with p[0] to read from and the child
 * recorded as a kid of @e.
 */
static pid_t fork_piped(struct __test_metadata *_metadata, struct env *e,
			int p[2])
{
	pid_t pid;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[0]);
		return 0;
	}
	ASSERT_EQ(0, add_kid(e, pid));
	close(p[1]);
	return pid;
}

/* The child: the default service on @ep, output to @out, forever. */
static void __attribute__((noreturn)) child_serve(int ep, int out)
{
	struct nvx_uvm_serve s = { .in_fd = -1, .out_fd = out, .err_fd = out };
	struct nvx_uvm_recv r;
	int ret;

	s.buf = malloc(NVX_UVM_MAX_BULK);
	if (!s.buf)
		_exit(3);
	for (;;) {
		ret = nvx_uvm_recv(ep, &s, &r, 0);
		if (ret == -EINTR)
			continue;
		if (ret)
			_exit(4);
		nvx_uvm_serve_msg(ep, &s, &r);
	}
}

/*
 * The system process is a process of its own and is killed while the VM
 * spins: the VM stops with NVX_UVM_ERR_ENDPOINT.
 */
UVM_TEST(system_process_killed_stops_vm)
{
	struct env *e = &self->e;
	char out[64];
	size_t got = 0;
	uint64_t end;
	struct vmm *v;
	pid_t pid;
	int p[2], status;

	pid = fork_piped(_metadata, e, p);
	if (!pid)
		child_serve(e->ep, p[1]);
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "spin", NULL))
		TH_LOG("%s", vmm_why(v));
	close(e->ep);		/* the child's copy is the last one */
	e->ep = -1;

	end = now_ms() + DEADLINE_MS;
	while (got < strlen("spinning\n") && now_ms() < end && !vmm_done(v)) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 100) <= 0)
			continue;
		n = read(p[0], out + got, sizeof(out) - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
	out[got] = 0;
	ASSERT_STREQ("spinning\n", out) TH_LOG("%s", vmm_why(v));
	ASSERT_FALSE(vmm_done(v)) TH_LOG("%s", vmm_why(v));

	status = reap_kid(e, pid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the serving child ended with status %#x", status);
	ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS)) TH_LOG("the VM spins on");
	EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason) TH_LOG("%s", vmm_why(v));
	EXPECT_EQ(e->ep_id, v->vm.detail);
	ASSERT_EQ(0, vmm_free(e, v));
	EXPECT_EQ(0, wait_granted(e->fd, &e->start));
	close(p[0]);
}

/*
 * The VMM process is killed in the middle of endless 64 KiB writes, one
 * of them taken and not answered: the endpoint gets VM_GONE, the reply
 * fails with -ESRCH, nothing stays queued or taken, the VM's memory goes
 * back to the pool.
 */
UVM_TEST(vm_killed_mid_transfer)
{
	struct env *e = &self->e;
	struct hold h = {
		.type = NVX_UVM_MSG_WRITE,
		.min_len = 64 << 10,
		.after = 200,
	};
	struct nvx_uvm_ep_stats es;
	struct nvx_uvm_reply rep;
	struct nvx_uvm_recv r;
	struct pollfd pf;
	struct server sv;
	int32_t created[2];
	uint32_t vm_id;
	pid_t pid;
	int p[2], status;

	pid = fork_piped(_metadata, e, p);
	if (!pid) {
		char arg0[] = "test", arg1[] = "pushloop";
		char *args[3] = { arg0, arg1, NULL };
		struct nvx_uvm_opts o = {
			.mem = VM_MEM, .argc = 2, .argv = args, .ep_fd = e->ep,
		};
		char image[PATH_MAX + 16];
		struct nvx_uvm_vm vm;
		const char *where;

		snprintf(image, sizeof(image), "%s/test.img", e->dir);
		o.image = image;
		created[0] = nvx_uvm_create(&vm, e->fd, &o, &where);
		created[1] = vm.vm_id;
		if (write(p[1], created, sizeof(created)) != sizeof(created) ||
		    created[0])
			_exit(1);
		nvx_uvm_run(&vm);
		_exit(2);
	}
	pf.fd = p[0];
	pf.events = POLLIN;
	ASSERT_EQ(1, poll(&pf, 1, DEADLINE_MS));
	ASSERT_EQ((ssize_t)sizeof(created), read(p[0], created, sizeof(created)));
	close(p[0]);
	ASSERT_EQ(0, created[0])
		TH_LOG("the child's nvx_uvm_create(): %s", strerror(-created[0]));
	vm_id = created[1];

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, false));
	sv.handle = hold_handle;
	sv.priv = &h;
	ASSERT_EQ(0, serve_until_stop(&sv, DEADLINE_MS))
		TH_LOG("%u writes of 64 KiB in %d s", h.seen,
		       DEADLINE_MS / 1000);
	EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
	EXPECT_EQ(vm_id, h.r.msg.src_vm);
	EXPECT_EQ(NVX_UVM_MSGF_PUSH, h.r.msg.flags);
	EXPECT_EQ(64U << 10, h.r.data_len);
	ASSERT_EQ(0, ep_stats(e->ep, &es));
	EXPECT_EQ(1U, es.nr_vms);
	EXPECT_EQ(1U, es.taken);

	status = reap_kid(e, pid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("the VMM child ended with status %#x", status);
	ASSERT_EQ(0, wait_no_vms(e->ep));

	memset(&rep, 0, sizeof(rep));
	rep.cookie = h.r.cookie;
	rep.msg.type = NVX_UVM_MSG_WRITE;
	EXPECT_EQ(-ESRCH, nvx_ioctl(e->ep, NVX_UVM_EP_IOC_REPLY, &rep));
	EXPECT_EQ(0, recv_gone(e->ep, vm_id, NVX_UVM_DETACHED, &r))
		TH_LOG("type %u VM %u status %d", r.msg.type, r.msg.src_vm,
		       r.msg.status);
	EXPECT_EQ(-EAGAIN, recv_nb(e->ep, &r));
	check_ep_idle(_metadata, e->ep);
	EXPECT_EQ(0, wait_granted(e->fd, &e->start))
		TH_LOG("granted %llu, %llu at the start",
		       (unsigned long long)granted_now(e->fd),
		       (unsigned long long)e->start.granted_bytes);
	server_fini(&sv);
}

/*
 * Close the channel, the endpoint and the VMM's fds in different orders
 * while the vCPU runs (spinning, or pushing 64 KiB writes that are being
 * served): every round ends within its deadline the way its order
 * allows, and every grant goes back.
 */
UVM_TEST(racing_close)
{
	struct env *e = &self->e;
	unsigned int seed = 1, i;

	for (i = 0; i < 20; i++) {
		struct nvx_uvm_endpoint ep = {
			.flags = NVX_UVM_EP_CLOEXEC,
			.max_vms = 1,
		};
		unsigned int order = i % 4, wait = rand_r(&seed) % 200;
		bool push = (i / 4) % 2;
		struct nvx_uvm_recv r;
		struct server sv;
		struct vmm *v;
		uint32_t id;

		TH_LOG("round %u: order %u, %s, closing after %u ms", i, order,
		       push ? "pushloop" : "spin", wait);
		ASSERT_EQ(0, nvx_ioctl(e->fd, NVX_IOC_UVM_ENDPOINT, &ep));
		ASSERT_EQ(0, server_init(&sv, ep.fd, e->wake, false));
		ASSERT_NE(NULL, v = vmm_new(e));
		ASSERT_EQ(0, vmm_launch(e, v, ep.fd, 0, "test",
					push ? "pushloop" : "spin", NULL))
			TH_LOG("%s", vmm_why(v));
		id = v->vm.vm_id;
		EXPECT_EQ(0, serve_for(&sv, wait));
		EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);

		switch (order) {
		case 0:
		case 3:
			/* the channel first: detached, the vCPU may run on */
			close(v->vm.chan_fd);
			v->vm.chan_fd = -1;
			EXPECT_EQ(0, recv_gone(ep.fd, id, NVX_UVM_DETACHED, &r))
				TH_LOG("type %u VM %u status %d", r.msg.type,
				       r.msg.src_vm, r.msg.status);
			if (order == 3) {
				/* an endpoint without VMs: stops nothing */
				close(ep.fd);
				ep.fd = -1;
			}
			usleep(20000);
			ASSERT_EQ(0, vmm_stop(v, SHORT_MS * 2));
			/* or its next doorbell reached the VMM */
			if (v->ret != -EINTR) {
				EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
				EXPECT_EQ((uint32_t)NVX_UVM_ERR_PORT, v->vm.reason);
				EXPECT_EQ((uint32_t)NVX_UVM_PORT_DOORBELL, v->vm.detail);
			}
			break;
		case 1:
		case 2:
			if (order == 2) {
				/* the VMM's other handles: the VM does not care */
				close(v->vm.vm_fd);
				close(v->vm.grant_fd);
				close(v->vm.kvm_fd);
				close(v->vm.irq_fd);
				v->vm.vm_fd = -1;
				v->vm.grant_fd = -1;
				v->vm.kvm_fd = -1;
				v->vm.irq_fd = -1;
				EXPECT_EQ(0, serve_for(&sv, 50));
				EXPECT_EQ(0, sv.err) TH_LOG("%s", sv.why);
				EXPECT_FALSE(vmm_done(v)) TH_LOG("%s", vmm_why(v));
			}
			/* the endpoint (first in order 1): the VM must stop by itself */
			close(ep.fd);
			ep.fd = -1;
			ASSERT_EQ(0, vmm_wait(v, DEADLINE_MS));
			EXPECT_EQ(-EIO, v->ret) TH_LOG("%s", vmm_why(v));
			EXPECT_EQ((uint32_t)NVX_UVM_ERR_ENDPOINT, v->vm.reason);
			break;
		}
		ASSERT_EQ(0, vmm_free(e, v));
		if (ep.fd >= 0)
			close(ep.fd);
		server_fini(&sv);
		if (_metadata->exit_code)
			return;
	}
	check_ep_idle(_metadata, e->ep);
	EXPECT_EQ(0, wait_granted(e->fd, &e->start))
		TH_LOG("granted %llu, %llu at the start",
		       (unsigned long long)granted_now(e->fd),
		       (unsigned long long)e->start.granted_bytes);
}

/* ====================================================== the ABI === */

TEST_HARNESS_MAIN
