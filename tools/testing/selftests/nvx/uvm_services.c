// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": the guest services.
 *
 * A fresh seed per launch, boot arguments, the clock.
 */
#include "uvm_fixture.h"

/* Run test.img with one argument word and return its stdout. */
static char *run_capture(struct __test_metadata *_metadata, struct env *e,
			 const char *mode, struct nvx_uvm_ctrl *ctrl)
{
	struct server sv;
	struct vmm *v;
	char *out;

	if (server_init(&sv, e->ep, e->wake, true))
		return NULL;
	v = vmm_new(e);
	if (!v || vmm_launch(e, v, e->ep, 0, "test", mode, NULL) ||
	    serve_done(&sv, &v, 1, DEADLINE_MS) || sv.err || v->ret ||
	    v->vm.exit_status) {
		TH_LOG("test %s: %s; %s", mode, sv.why,
		       v ? vmm_why(v) : "no VMM slot");
		if (v)
			vmm_free(e, v);
		server_fini(&sv);
		return NULL;
	}
	if (ctrl)
		*ctrl = *v->vm.ctrl;
	out = server_stdout(&sv, NULL);
	vmm_free(e, v);
	server_fini(&sv);
	return out;
}

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return true;
}

/* Every launch gets fresh seed bytes: different, not all zero. */
UVM_TEST(seed_fresh_per_launch)
{
	static const char zero[NVX_UVM_SEED_SIZE * 2 + 1] =
		"0000000000000000000000000000000000000000000000000000000000000000";
	struct nvx_uvm_ctrl ctrl;
	char *out[2], hex[NVX_UVM_SEED_SIZE * 2 + 1];
	int i, k;

	for (i = 0; i < 2; i++) {
		out[i] = run_capture(_metadata, &self->e, "seed", &ctrl);
		ASSERT_NE(NULL, out[i]);
		ASSERT_EQ((uint32_t)(NVX_UVM_SEED_SIZE * 2 + 1), strlen(out[i]))
			TH_LOG("\"%s\"", out[i]);
		EXPECT_TRUE(is_hex(out[i], NVX_UVM_SEED_SIZE * 2));
		EXPECT_EQ('\n', out[i][NVX_UVM_SEED_SIZE * 2]);
		EXPECT_NE(0, strncmp(out[i], zero, NVX_UVM_SEED_SIZE * 2));
		/* what the guest printed is the control page's seed */
		for (k = 0; k < NVX_UVM_SEED_SIZE; k++)
			snprintf(hex + 2 * k, 3, "%02x", ctrl.seed[k]);
		EXPECT_EQ(0, strncmp(out[i], hex, NVX_UVM_SEED_SIZE * 2));
	}
	EXPECT_NE(0, strcmp(out[0], out[1])) TH_LOG("the same seed twice: %s",
						    out[0]);
	free(out[0]);
	free(out[1]);
}

/* The boot arguments arrive, each one whole, in order. */
UVM_TEST(boot_args_arrive)
{
	struct env *e = &self->e;
	char longarg[301], expect[512];
	struct server sv;
	struct vmm *v;
	char *out;

	memset(longarg, 'a', sizeof(longarg) - 1);
	longarg[sizeof(longarg) - 1] = 0;
	longarg[0] = 'L';
	snprintf(expect, sizeof(expect), "test\nargs\none\ntwo words\n\nx=1\n%s\n",
		 longarg);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "test", "args", "one",
				"two words", "", "x=1", longarg, NULL))
		TH_LOG("%s", vmm_why(v));
	out = serve_to_exit(_metadata, &sv, v, NULL);
	EXPECT_STREQ(expect, out);
	free(out);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/* The CLOCK service's reply reaches the guest: the host's realtime. */
UVM_TEST(clock_reply_reaches_guest)
{
	struct timespec ts;
	unsigned long long t0, t1, v;
	char *out, *end;

	clock_gettime(CLOCK_REALTIME, &ts);
	t0 = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	out = run_capture(_metadata, &self->e, "clock", NULL);
	ASSERT_NE(NULL, out);
	clock_gettime(CLOCK_REALTIME, &ts);
	t1 = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	v = strtoull(out, &end, 10);
	EXPECT_STREQ("\n", end) TH_LOG("\"%s\"", out);
	EXPECT_LE(t0, v);
	EXPECT_GE(t1, v);
	free(out);
}

TEST_HARNESS_MAIN
