// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": guests boot, print and echo.
 *
 * hello.img prints and exits; echo.img echoes its input back.
 */
#include "uvm_fixture.h"

/* ========================================================= guests === */

/*
 * hello.img prints its line and exits 0; the channel's counters agree:
 * two messages (the line, the exit) in and out, nothing in flight.
 */
UVM_TEST(hello_prints_and_exits)
{
	struct env *e = &self->e;
	struct nvx_uvm_status st;
	struct server sv;
	struct vmm *v;
	char *out;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "hello", NULL))
		TH_LOG("%s", vmm_why(v));
	out = serve_to_exit(_metadata, &sv, v, NULL);
	EXPECT_STREQ(HELLO, out);
	free(out);
	EXPECT_STREQ("", server_stderr(&sv));

	ASSERT_EQ(0, nvx_uvm_status(&v->vm, &st));
	EXPECT_EQ((uint32_t)NVX_UVM_RUNNING, st.reason);
	EXPECT_EQ(v->vm.vm_id, st.vm_id);
	EXPECT_EQ(st.msgs_in, st.msgs_out);
	EXPECT_EQ(2U, st.msgs_in);
	EXPECT_EQ(0U, st.in_flight);
	EXPECT_EQ(strlen(HELLO), st.bulk_out);
	EXPECT_EQ(0U, st.bulk_in);
	EXPECT_LE(1U, st.doorbells);

	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	check_ep_idle(_metadata, e->ep);
	server_fini(&sv);
}

/* echo.img copies ~10 KiB of stdin (a pipe) to stdout, byte for byte. */
UVM_TEST(echo_round_trip)
{
	struct env *e = &self->e;
	size_t len = 10 * 1024 + 123, got = 0;
	unsigned char *in;
	struct server sv;
	struct vmm *v;
	char *out;
	int p[2];

	in = malloc(len);
	ASSERT_NE(NULL, in);
	fill_bytes(in, len, 1);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ((ssize_t)len, write(p[1], in, len));	/* fits a pipe */
	close(p[1]);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	sv.s.in_fd = p[0];
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "echo", NULL))
		TH_LOG("%s", vmm_why(v));
	out = serve_to_exit(_metadata, &sv, v, &got);
	ASSERT_EQ(len, got);
	EXPECT_EQ(0, memcmp(in, out, len));
	free(out);
	free(in);
	close(p[0]);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

TEST_HARNESS_MAIN
