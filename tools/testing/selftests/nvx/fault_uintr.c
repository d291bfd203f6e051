// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "fault": user interrupts, every allocation and
 * user copy of REGISTER and of VECTOR_FD with ADD_SENDER failed in turn
 * (include/fault_util.h): after each failure no fd and nothing
 * registered.
 */
#include "uintr_fixture.h"
#include "fault_util.h"

struct reg_call {
	int fd;
	struct nvx_uintr_register r;
};

static int do_reg(void *arg)
{
	struct reg_call *rc = arg;

	rc->r = (struct nvx_uintr_register){
		.handler = (uintptr_t)trap_entry,
	};
	return nvx_ioctl(rc->fd, NVX_IOC_UINTR_REGISTER, &rc->r);
}

static void undo_reg(void *arg)
{
	struct reg_call *rc = arg;

	do_unregister_raw(rc->fd);
	close(rc->r.fd);
}

/* Not registered: UNREGISTER finds nothing. */
static int check_reg(void *arg, char *why, size_t len)
{
	struct reg_call *rc = arg;
	int ret = do_unregister_raw(rc->fd);

	if (ret != -ENOENT) {
		snprintf(why, len, "registered after a failure (%d)", ret);
		return -1;
	}
	return 0;
}

/* Run @c's sweep; the knobs are put back whatever happens. */
static void run(struct __test_metadata *_metadata, struct fault_call *c)
{
	struct fault_result res;
	int ret = fault_arm_setup();

	ASSERT_EQ(0, ret);
	ret = fault_run(c, &res);
	fault_arm_restore();
	ASSERT_EQ(0, ret);
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points);
}

TEST_F(uintr, fault_register)
{
	struct reg_call rc = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_REGISTER", .call = do_reg, .undo = undo_reg,
		.check = check_reg, .arg = &rc,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	run(_metadata, &c);
	ASSERT_EQ(0, do_reg(&rc));
	undo_reg(&rc);
}

struct vec_call {
	int fd, vfd, idx;
	int base;		/* the first free sender index */
};

/* VECTOR_FD, then ADD_SENDER of it (do_vector() closes it on failure) */
static int do_vec(void *arg)
{
	struct vec_call *vc = arg;

	vc->idx = do_vector(vc->fd, 3, &vc->vfd);
	return vc->idx < 0 ? vc->idx : 0;
}

static void undo_vec(void *arg)
{
	struct vec_call *vc = arg;

	do_del(vc->fd, vc->idx);
	close(vc->vfd);
}

/*
 * Nothing left in the sender table: the next ADD_SENDER takes the same
 * first free index (entries are taken lowest first).
 */
static int check_vec(void *arg, char *why, size_t len)
{
	struct vec_call *vc = arg;
	int ret = do_vec(vc);

	if (ret) {
		snprintf(why, len, "VECTOR_FD after a failure: %d", ret);
		return -1;
	}
	undo_vec(vc);
	if (vc->idx != vc->base) {
		snprintf(why, len, "sender index %d after a failure, %d before",
			 vc->idx, vc->base);
		return -1;
	}
	return 0;
}

TEST_F(uintr, fault_vector_fd)
{
	struct vec_call vc = { .fd = self->fd };
	struct fault_call c = {
		.what = "UINTR_VECTOR_FD", .call = do_vec, .undo = undo_vec,
		.check = check_vec, .arg = &vc,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_LE(0, do_register(self->fd, NULL, 0, 0));
	ASSERT_EQ(0, do_vec(&vc));
	vc.base = vc.idx;
	undo_vec(&vc);
	run(_metadata, &c);
	/* and a vector still works, at the same index */
	ASSERT_EQ(0, do_vec(&vc));
	EXPECT_EQ(vc.base, vc.idx);
	undo_vec(&vc);
	EXPECT_EQ(0, do_unregister(self->fd));
}

TEST_HARNESS_MAIN
