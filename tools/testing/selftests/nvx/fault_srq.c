// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "fault": shared RX queue sets, every allocation
 * and user copy of SRQ_CREATE failed in turn (include/fault_util.h):
 * after each failure no fd, no set on the NIC, and the NIC takes a set
 * again; and of SRQ_IOC_TX (a frame allocated and copied in).
 */
#include "srq_fixture.h"
#include "fault_util.h"

struct create_call {
	int dev, ifindex;
	struct nvx_srq_create c;
};

static int do_create(void *arg)
{
	struct create_call *cc = arg;

	cc->c.fd = -1;
	return nvx_ioctl(cc->dev, NVX_IOC_SRQ_CREATE, &cc->c);
}

static void undo_create(void *arg)
{
	struct create_call *cc = arg;

	close(cc->c.fd);
	wait_detached(cc->dev, cc->ifindex);
}

/* No set left on the NIC. */
static int check_create(void *arg, char *why, size_t len)
{
	struct create_call *cc = arg;
	struct nvx_srq_info info = { .ifindex = cc->ifindex };
	int ret = nvx_ioctl(cc->dev, NVX_IOC_SRQ_INFO, &info);

	if (ret != -ENOENT) {
		snprintf(why, len, "SRQ_INFO after a failed create: %d", ret);
		return -1;
	}
	return 0;
}

static void fault_create(struct __test_metadata *_metadata, int dev,
			 int ifindex, const struct nvx_srq_params *p,
			 const char *what)
{
	struct create_call cc = { .dev = dev, .ifindex = ifindex };
	struct fault_call c = {
		.what = what, .call = do_create, .undo = undo_create,
		.check = check_create, .arg = &cc,
	};
	struct fault_result res;
	int ret;

	cc.c.ifindex = ifindex;
	cc.c.flags = NVX_SRQ_CLOEXEC;
	cc.c.params = *p;
	cc.c.grant_fd = srq_grant(dev, (uint64_t)p->nr_bufs * p->buf_size);
	ASSERT_LE(0, cc.c.grant_fd);
	ret = fault_arm_setup();
	if (!ret) {
		ret = fault_run(&c, &res);
		fault_arm_restore();
		EXPECT_EQ(0, ret);
		EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
		EXPECT_LT(0U, res.points);
		/* the NIC takes a set again */
		EXPECT_EQ(0, do_create(&cc));
		if (cc.c.fd >= 0)
			undo_create(&cc);
	} else {
		EXPECT_EQ(0, ret);
	}
	close(cc.c.grant_fd);
}

SRQ_TEST(fault_create_one_pool)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 16, .buf_size = 16384,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	fault_create(_metadata, self->fd, self->nic.ifindex, &p,
		     "SRQ_CREATE 2 queues, 1 pool");
}

SRQ_TEST(fault_create_per_queue)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_PER_QUEUE | NVX_SRQ_POISON, .nr_queues = 4,
		.nr_bufs = 32, .buf_size = 16384, .nr_rel_rings = 2,
	};

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	fault_create(_metadata, self->fd, self->nic.ifindex, &p,
		     "SRQ_CREATE 4 queues, a pool each, 2 release rings");
}

struct tx_call {
	struct srq *s;
	unsigned char frame[64];
	uint64_t sent;		/* tx_packets so far */
};

static uint64_t tx_packets(struct srq *s)
{
	struct nvx_srq_stats st;

	return srq_stats(s, NVX_SRQ_ALL_QUEUES, &st) ? ~0ULL : st.tx_packets;
}

/* Sent although a point failed: the count goes on from there. */
static void undo_tx(void *arg)
{
	struct tx_call *tc = arg;

	tc->sent = tx_packets(tc->s);
}

/* A failed TX sent nothing. */
static int check_tx(void *arg, char *why, size_t len)
{
	struct tx_call *tc = arg;
	uint64_t n = tx_packets(tc->s);

	if (n != tc->sent) {
		snprintf(why, len, "tx_packets %llu after a failed TX, %llu before",
			 (unsigned long long)n, (unsigned long long)tc->sent);
		return -1;
	}
	return 0;
}

static int do_tx(void *arg)
{
	struct tx_call *tc = arg;
	struct nvx_srq_tx tx = {
		.len = sizeof(tc->frame), .addr = (uintptr_t)tc->frame,
	};

	return nvx_ioctl(tc->s->fd, NVX_SRQ_IOC_TX, &tx);
}

/* TX allocates a frame and copies it from the caller. */
SRQ_TEST(fault_tx)
{
	static const int errnos[] = { ENOMEM, EFAULT, ENOBUFS, 0 };
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct tx_call tc = { };
	struct fault_call c = {
		.what = "SRQ_IOC_TX", .call = do_tx, .undo = undo_tx,
		.check = check_tx, .arg = &tc, .errnos = errnos,
	};
	struct fault_result res;
	int ret;

	if (!fault_available())
		SKIP(return, "no fail-nth (CONFIG_FAULT_INJECTION)");
	ASSERT_EQ(0, srq_open(self->fd, &self->s, self->nic.ifindex, &p, 0));
	tc.s = &self->s;
	tc.sent = tx_packets(&self->s);
	memset(tc.frame, 0xff, 6);		/* broadcast */
	memcpy(tc.frame + 6, "\x02\0\0\0\0\1", 6);
	tc.frame[12] = 0x88;			/* a local experimental type */
	tc.frame[13] = 0xb5;
	ret = fault_arm_setup();
	ASSERT_EQ(0, ret);
	ret = fault_run(&c, &res);
	fault_arm_restore();
	ASSERT_EQ(0, ret);
	EXPECT_TRUE(res.ok) TH_LOG("%s", res.why);
	EXPECT_LT(0U, res.points);
	EXPECT_EQ(0, do_tx(&tc));
	EXPECT_EQ(tc.sent + 1, tx_packets(&self->s));
}

TEST_HARNESS_MAIN
