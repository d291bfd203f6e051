// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": a multi-threaded stress run.
 */
#include "srq_fixture.h"

#define STRESS_FRAMES	20000
#define STRESS_FLOWS	32		/* per sender */
#define STRESS_SPORT	2000
#define STRESS_WINDOW	256		/* frames sent and not yet consumed */

struct stress {
	const struct srq *s;
	const struct nic *n;
	int id;
	int cpu;
	int *done;			/* set once every frame is sent */
	uint64_t *sent_all;		/* frames sent by both senders */
	uint64_t *recv_all;		/* frames consumed by both consumers */
	int64_t *last_seq;		/* per flow */
	int *owner;			/* queue per flow */
	uint64_t count;			/* frames sent or received */
	uint64_t fillers;
	uint64_t bad;
	int err;
	char why[160];
};

static void pin(struct stress *t)
{
	cpu_set_t set;

	if (t->cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * Keep at most STRESS_WINDOW frames in flight (sent, neither consumed
 * nor dropped), so that the pool is big enough and drops stay rare.
 */
static int stress_throttle(struct stress *t, uint64_t *drops)
{
	struct nvx_srq_stats st;
	unsigned int spins = 0;
	int ret;

	while (__atomic_load_n(t->sent_all, __ATOMIC_RELAXED) -
	       __atomic_load_n(t->recv_all, __ATOMIC_RELAXED) - *drops >
	       STRESS_WINDOW) {
		if (++spins % 64) {
			sched_yield();
			continue;
		}
		ret = srq_stats(t->s, NVX_SRQ_ALL_QUEUES, &st);
		if (ret)
			return ret;
		*drops = st.drops_no_buf + st.drops_cq_full;
		usleep(100);
	}
	return 0;
}

static void *stress_sender(void *arg)
{
	struct stress *t = arg;
	uint32_t seq[STRESS_FLOWS] = { 0 };
	unsigned int k, f, len, span = MAX_ETH_FRAME - MIN_FRAME + 1;
	uint64_t drops = 0;
	int ret;

	pin(t);
	for (k = 0; k < STRESS_FRAMES / 2; k++) {
		ret = stress_throttle(t, &drops);
		if (ret) {
			t->err = ret;
			break;
		}
		f = k % STRESS_FLOWS;
		len = MIN_FRAME + (k * 7919 + t->id * 131) % span;
		ret = send_frame(t->n, len,
				 STRESS_SPORT + t->id * STRESS_FLOWS + f,
				 seq[f]);
		if (ret == -ENOBUFS || ret == -EAGAIN) {
			sched_yield();
			k--;
			continue;
		}
		if (ret) {
			t->err = ret;
			break;
		}
		seq[f]++;
		t->count++;
		__atomic_add_fetch(t->sent_all, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *stress_consumer(void *arg)
{
	struct stress *t = arg;
	const struct srq *s = t->s;
	struct nvx_srq_cqe e;
	struct qtrack qt;
	struct tag tag;
	int idle = 0, owner, d, ret;
	unsigned int flow;

	pin(t);
	track_init(&qt, 1);
	for (;;) {
		d = __atomic_load_n(t->done, __ATOMIC_ACQUIRE);
		if (!cq_pop(s, t->id, &e)) {
			if (d)
				break;
			if (++idle < 64) {
				sched_yield();
			} else {
				usleep(200);
				idle = 0;
			}
			continue;
		}
		idle = 0;
		if (!track(&qt, &e, s->spb) && !t->bad++)
			snprintf(t->why, sizeof(t->why),
				 "packing: buf %u stride %u strides %u flags %#x",
				 e.buf, e.stride, e.strides, e.flags);
		if (e.flags & NVX_SRQ_CQE_FILLER) {
			t->fillers++;
			continue;
		}
		t->count++;
		if (!cqe_frame_ok(t->n, s, &e, &tag)) {
			if (!t->bad++)
				snprintf(t->why, sizeof(t->why),
					 "bad frame: buf %u stride %u len %u",
					 e.buf, e.stride, e.len);
		} else {
			flow = tag.sport - STRESS_SPORT;
			if (flow >= 2 * STRESS_FLOWS) {
				t->bad++;
			} else {
				owner = -1;
				__atomic_compare_exchange_n(&t->owner[flow],
							    &owner, t->id,
							    false,
							    __ATOMIC_SEQ_CST,
							    __ATOMIC_SEQ_CST);
				if (owner != -1 && owner != t->id &&
				    !t->bad++)
					snprintf(t->why, sizeof(t->why),
						 "flow %u on queues %d and %d",
						 flow, owner, t->id);
				if ((int64_t)tag.seq <= t->last_seq[flow] &&
				    !t->bad++)
					snprintf(t->why, sizeof(t->why),
						 "flow %u: seq %u after %lld",
						 flow, tag.seq,
						 (long long)t->last_seq[flow]);
				t->last_seq[flow] = tag.seq;
			}
		}
		ret = rel_give(s, t->id, e.buf, e.strides);
		__atomic_add_fetch(t->recv_all, 1, __ATOMIC_RELAXED);
		if (!ret && t->count % 32 == 0)
			ret = srq_release(s, NULL);
		if (ret) {
			t->err = ret;
			break;
		}
	}
	return NULL;
}

/*
 * Two threads send 20000 frames of all sizes on 64 flows while two
 * threads consume the two queues and release every frame: every frame
 * received is whole, each flow stays on one queue in order, and every
 * frame sent is either received or counted as a drop.
 */
TEST_F_TIMEOUT(srq, stress, 600)
{
	struct nvx_srq_params p = { .nr_queues = 2, .nr_bufs = 64 };
	int64_t last_seq[2 * STRESS_FLOWS];
	int owner[2 * STRESS_FLOWS];
	struct stress snd[2], con[2];
	pthread_t ts[2], tc[2];
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	int done = 0;
	uint64_t sent = 0, received = 0, fillers = 0;
	uint64_t sent_all = 0, recv_all = 0;
	int cpus[2], ncpu, i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(2u, s->c.params.nr_rel_rings);
	for (i = 0; i < 2 * STRESS_FLOWS; i++) {
		last_seq[i] = -1;
		owner[i] = -1;
	}
	ncpu = allowed_cpus(cpus, 2);
	for (i = 0; i < 2; i++) {
		con[i] = (struct stress){
			.s = s, .n = &self->nic, .id = i, .done = &done,
			.sent_all = &sent_all, .recv_all = &recv_all,
			.last_seq = last_seq, .owner = owner,
			.cpu = ncpu ? cpus[(i + 1) % ncpu] : -1,
		};
		snd[i] = con[i];
		snd[i].cpu = ncpu ? cpus[i % ncpu] : -1;
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&tc[i], NULL, stress_consumer,
					    &con[i]));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&ts[i], NULL, stress_sender,
					    &snd[i]));
	for (i = 0; i < 2; i++) {
		pthread_join(ts[i], NULL);
		EXPECT_EQ(0, snd[i].err)
			TH_LOG("sender %d: %s", i, strerror(-snd[i].err));
		sent += snd[i].count;
	}
	/* delivery is synchronous: everything sent is in the rings now */
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		pthread_join(tc[i], NULL);
		EXPECT_EQ(0, con[i].err) TH_LOG("consumer %d: %s", i,
						strerror(-con[i].err));
		EXPECT_EQ(0u, con[i].bad)
			TH_LOG("consumer %d: %llu bad, first: %s", i,
			       (unsigned long long)con[i].bad, con[i].why);
		received += con[i].count;
		fillers += con[i].fillers;
	}
	ASSERT_EQ(0, srq_release(s, NULL));
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	TH_LOG("%llu sent, %llu received, %llu fillers",
	       (unsigned long long)sent, (unsigned long long)received,
	       (unsigned long long)fillers);
	TH_LOG("drops: %llu no buffer, %llu ring full; %llu refills",
	       (unsigned long long)st.drops_no_buf,
	       (unsigned long long)st.drops_cq_full,
	       (unsigned long long)st.refills);
	EXPECT_EQ((uint64_t)STRESS_FRAMES, sent);
	expect_srq_stats(&st, SRQ_STAT(rx_packets, received),
			 SRQ_STAT(fillers, fillers));
	EXPECT_EQ(sent, st.rx_packets + st.drops_no_buf + st.drops_cq_full);
	expect_srq_stats(&st, SRQ_STAT(release_garbage, 0u),
			 SRQ_STAT(released, received));
	EXPECT_EQ(64u, st.bufs_posted + st.bufs_filling + st.bufs_held);
	EXPECT_LT(0u, cq_prod(s, 0));
	EXPECT_LT(0u, cq_prod(s, 1));
}

TEST_HARNESS_MAIN
