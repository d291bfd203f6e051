/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of the nvx selftest group "srq" (every srq_* program).
 *
 * Every test gets its own software NIC pair and a pool grown by
 * POOL_CHUNKS chunks. On the way out the fixture stops any sender
 * threads, disables any events it enabled and checks that every grant
 * went back to the pool. The whole group skips when /dev/nvx does not
 * offer NVX_FEAT_SRQ.
 *
 * The harness's fixtures and its assertions live in each program, so
 * this header holds the fixture and the helpers that assert; the rest
 * is in lib/srq_util.c.
 */
#ifndef NVX_SRQ_FIXTURE_H
#define NVX_SRQ_FIXTURE_H

#include <assert.h>
#include <stddef.h>

#include "nvx_fixture.h"
#include "srq_util.h"

#define SRQ_TEST(name)	TEST_F_TIMEOUT(srq, name, 180)

/* The completion is the frame (@len, @sport, @seq), whole and in place. */
static inline bool expect_frame(struct __test_metadata *_metadata,
				const struct nic *n, const struct srq *s,
				const struct nvx_srq_cqe *e, unsigned int len,
				uint16_t sport, uint32_t seq)
{
	bool ok = e->flags == 0 && e->pad == 0 && e->len == len &&
		  e->buf < s->c.params.nr_bufs &&
		  e->strides == strides_for(s, len) &&
		  e->stride + e->strides <= s->spb &&
		  bytes_match(n, s, e, len, sport, seq);

	if (!ok) {
		TH_LOG("frame seq %u len %u: cqe buf %u stride %u strides %u",
		       seq, len, e->buf, e->stride, e->strides);
		TH_LOG("  cqe len %u flags %#x pad %u", e->len, e->flags,
		       e->pad);
	}
	EXPECT_TRUE(ok);
	return ok;
}

/* NVX_SRQ_IOC_RELEASE on @s took @released entries, @garbage of them bad. */
static inline void expect_release(struct __test_metadata *_metadata,
				  const struct srq *s, uint32_t released,
				  uint32_t garbage)
{
	struct nvx_srq_release rel;

	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(released, rel.released);
	EXPECT_EQ(garbage, rel.garbage);
}

/* A counter of struct nvx_srq_stats, and the value a test expects of it. */
struct srq_stat_want {
	const char *name;
	size_t off;
	uint64_t val;
};

#define SRQ_STAT(field, want)						\
	{ #field, offsetof(struct nvx_srq_stats, field), (want) }

/* The __u64 counters run from rx_packets to tx_bytes; the rest are __u32. */
static_assert(offsetof(struct nvx_srq_stats, bufs_posted) ==
	       offsetof(struct nvx_srq_stats, tx_bytes) + sizeof(uint64_t),
	       "struct nvx_srq_stats: the __u64 counters moved");

/* EXPECT_EQ() each of the @n counters @w in @st, naming it if it differs. */
static inline void __expect_srq_stats(struct __test_metadata *_metadata,
				      const struct nvx_srq_stats *st,
				      const struct srq_stat_want *w, size_t n)
{
	const char *p = (const char *)st;
	uint64_t got;
	uint32_t got32;
	size_t i;

	for (i = 0; i < n; i++) {
		if (w[i].off < offsetof(struct nvx_srq_stats, rx_packets) ||
		    w[i].off >= offsetof(struct nvx_srq_stats, bufs_posted)) {
			memcpy(&got32, p + w[i].off, sizeof(got32));
			got = got32;
		} else {
			memcpy(&got, p + w[i].off, sizeof(got));
		}
		EXPECT_EQ(w[i].val, got) TH_LOG("stats.%s", w[i].name);
	}
}

/*
 * expect_srq_stats(&st, SRQ_STAT(rx_packets, 1u), ...): one EXPECT_EQ()
 * a counter, in the order given.
 */
#define expect_srq_stats(st, ...)					\
	__expect_srq_stats(_metadata, (st),				\
			   (const struct srq_stat_want[]){ __VA_ARGS__ },	\
			   ARRAY_SIZE(((const struct srq_stat_want[]){	\
				   __VA_ARGS__ })))

/*
 * Open @s with @p on @n: its first frame (1024 bytes) lands at stride 0,
 * whole, and is counted. For the tests that check that a NIC takes a new
 * set once the last one went away.
 */
static inline void expect_new_set_receives(struct __test_metadata *_metadata,
					   int dev, const struct nic *n,
					   struct srq *s,
					   const struct nvx_srq_params *p)
{
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;

	ASSERT_EQ(0, srq_open(dev, s, n->ifindex, p, 0));
	ASSERT_EQ(0, send_frame(n, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	EXPECT_EQ(0, e.stride);
	expect_frame(_metadata, n, s, &e, 1024, SPORT, 0);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.rx_packets);
}

/* --- the fixture ---------------------------------------------------- */

FIXTURE(srq) {
	int fd;			/* /dev/nvx */
	struct nvx_pool_stats start;
	uint64_t grown;
	struct nic nic;
	struct nic nic2;	/* a second NIC, for tests that delete it */
	struct srq s, s2;
	struct blast blast;	/* sender threads, stopped on the way out */
	const char *tracefs;	/* SRQ events enabled here: disabled then */
};

FIXTURE_SETUP(srq)
{
	int ret;

	srq_init(&self->s);
	srq_init(&self->s2);
	self->nic.tx = -1;
	self->nic2.tx = -1;
	self->nic2.alive = false;
	memset(&self->blast, 0, sizeof(self->blast));
	self->tracefs = NULL;
	if (!nvx_require_feature(_metadata, &self->fd, NVX_FEAT_SRQ))
		SKIP(return, "no NVX_FEAT_SRQ: shared RX queues not built");

	ret = nic_create(&self->nic);
	ASSERT_EQ(0, ret) TH_LOG("creating the nvxsim pair %s failed at step %d",
				 self->nic.name, -ret);

	ret = wait_scrubbed(self->fd);
	if (!ret)
		ret = pool_stats(self->fd, &self->start);
	if (!ret)
		ret = pool_resize(self->fd, NVX_IOC_POOL_GROW,
				  POOL_CHUNKS * CHUNK, NVX_NODE_ANY, &self->grown);
	if (ret) {
		if (self->grown)
			pool_resize(self->fd, NVX_IOC_POOL_SHRINK, self->grown,
				    NVX_NODE_ANY, NULL);
		nic_destroy(&self->nic);
	}
	ASSERT_EQ(0, ret) TH_LOG("growing the pool: %s", strerror(-ret));
	ASSERT_EQ(POOL_CHUNKS * CHUNK, self->grown);
}

/*
 * No sender left, no event left enabled; every set gone, the NICs gone,
 * every grant back in the pool.
 */
FIXTURE_TEARDOWN(srq)
{
	struct nvx_pool_stats s;

	blast_stop(&self->blast);
	if (self->tracefs)
		srq_trace_enable(self->tracefs, "0");
	srq_close(&self->s);
	srq_close(&self->s2);
	nic_destroy(&self->nic2);
	nic_destroy(&self->nic);
	if (self->fd < 0)
		return;
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));
	ASSERT_EQ(0, wait_scrubbed(self->fd));
	ASSERT_EQ(0, pool_stats(self->fd, &s));
	expect_pool_as_before(_metadata, &self->start, self->grown, &s);
	EXPECT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, self->grown,
				 NVX_NODE_ANY, NULL));
	close(self->fd);
}

#endif /* NVX_SRQ_FIXTURE_H */
