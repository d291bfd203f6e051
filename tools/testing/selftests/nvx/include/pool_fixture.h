/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the nvx selftest group "pool" (every pool_* program).
 *
 * Every test runs on a pool grown by POOL_CHUNKS chunks for it, and the
 * fixture checks on the way out that the pool's accounting is back where
 * it started: nothing lost, nothing leaked, nothing left dirty. The
 * whole group skips when /dev/nvx does not offer NVX_FEAT_POOL.
 */
#ifndef NVX_POOL_FIXTURE_H
#define NVX_POOL_FIXTURE_H

#include <grp.h>
#include <linux/kvm.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "nvx_fixture.h"
#include "../../../../../mm/gup_test.h"
#include "pool_util.h"

/*
 * Emulated machines with KASAN are slow: a KVM guest's first entry or
 * zeroing the whole test pool can take far longer than the harness's
 * default 30 seconds.
 */
#define POOL_TEST(name) TEST_F_TIMEOUT(pool, name, 180)

FIXTURE(pool) {
	int fd;
	struct nvx_pool_stats start;
	uint64_t grown;
	uint64_t refill;	/* a test emptied the pool: refill it to this */
	char rate[16];		/* scrub_rate_mbps at the start */
	char nontemporal[16];	/* zero_nontemporal at the start */
};

FIXTURE_SETUP(pool)
{
	if (!nvx_require_feature(_metadata, &self->fd, NVX_FEAT_POOL))
		SKIP(return, "no NVX_FEAT_POOL: the memory pool not built");
	ASSERT_EQ(0, read_param("scrub_rate_mbps", self->rate,
				sizeof(self->rate)));
	ASSERT_EQ(0, read_param("zero_nontemporal", self->nontemporal,
				sizeof(self->nontemporal)));
	/*
	 * A test whose ASSERT failed may have skipped its teardown (the
	 * harness's longjmp loses which side of its fork it is on): do not
	 * inherit a slowed scrubber from it.
	 */
	if (strcmp(self->rate, "0")) {
		TH_LOG("scrub_rate_mbps was %s: reset to 0", self->rate);
		ASSERT_EQ(0, write_param("scrub_rate_mbps", "0"));
		snprintf(self->rate, sizeof(self->rate), "0");
	}
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &self->start));
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW,
				 POOL_CHUNKS * CHUNK, NVX_NODE_ANY,
				 &self->grown));
	ASSERT_EQ(POOL_CHUNKS * CHUNK, self->grown);
}

/* Nothing lost, nothing leaked: the pool is back where it started. */
FIXTURE_TEARDOWN(pool)
{
	struct nvx_pool_stats s;
	uint64_t done;

	if (self->fd < 0)
		return;
	/* a test that failed may have left the scrubber slowed */
	EXPECT_EQ(0, write_param("scrub_rate_mbps", self->rate));
	EXPECT_EQ(0, write_param("zero_nontemporal", self->nontemporal));
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	if (s.total_bytes < self->refill) {
		/* a test that emptied the pool failed before refilling it */
		ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_GROW,
					 self->refill - s.total_bytes,
					 NVX_NODE_ANY, &done));
		ASSERT_EQ(0, pool_stats(self->fd, &s));
	}
	expect_pool_as_before(_metadata, &self->start, self->grown, &s);
	ASSERT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, self->grown,
				 NVX_NODE_ANY, &done));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	EXPECT_EQ(self->start.total_bytes, s.total_bytes);
	EXPECT_EQ(self->start.clean_bytes, s.clean_bytes);
	close(self->fd);
}

#endif /* NVX_POOL_FIXTURE_H */
