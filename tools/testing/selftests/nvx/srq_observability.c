// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": observability.
 *
 * The SRQ tracepoints and the ethtool statistics.
 */
#include "srq_fixture.h"
#include "trace_util.h"

/* What the trace says about the SRQ events. */
struct srq_trace {
	unsigned int fillers;
	unsigned int filler[4];		/* queue, buf, stride, strides */
	unsigned int drops;
	unsigned int drop_queue, drop_len;
	char drop_reason[16];
	unsigned int refills;		/* that returned buffers */
	unsigned int refill[3];		/* pool, returned, posted_strides */
	unsigned int empty_refills;	/* that returned none */
	unsigned int returns;
	uint32_t returned;		/* mask of the buffers returned */
	unsigned int bad;		/* lines that do not parse, or odd */
};

static const char *event_args(const char *line, const char *event)
{
	const char *p = strstr(line, event);

	return p ? p + strlen(event) : NULL;
}

static void srq_trace_parse(char *text, struct srq_trace *t)
{
	unsigned int a[4];
	char *line, *save = NULL;
	const char *p;

	memset(t, 0, sizeof(*t));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		p = event_args(line, "nvx_srq_filler: ");
		if (p) {
			if (sscanf(p, "queue=%u buf=%u stride=%u strides=%u",
				   &a[0], &a[1], &a[2], &a[3]) != 4)
				t->bad++;
			memcpy(t->filler, a, sizeof(t->filler));
			t->fillers++;
			continue;
		}
		p = event_args(line, "nvx_srq_drop: ");
		if (p) {
			if (sscanf(p, "queue=%u reason=%15s len=%u",
				   &t->drop_queue, t->drop_reason,
				   &t->drop_len) != 3)
				t->bad++;
			t->drops++;
			continue;
		}
		p = event_args(line, "nvx_srq_refill: ");
		if (p) {
			if (sscanf(p, "pool=%u returned=%u posted_strides=%u",
				   &a[0], &a[1], &a[2]) != 3) {
				t->bad++;
			} else if (!a[1]) {
				t->empty_refills++;
			} else {
				memcpy(t->refill, a, sizeof(t->refill));
				t->refills++;
			}
			continue;
		}
		p = event_args(line, "nvx_srq_buf_return: ");
		if (p) {
			if (sscanf(p, "pool=%u buf=%u", &a[0], &a[1]) != 2 ||
			    a[0] || a[1] >= 32 || t->returned & (1U << a[1]))
				t->bad++;
			else
				t->returned |= 1U << a[1];
			t->returns++;
		}
	}
}

/*
 * With nvx_srq_filler, nvx_srq_drop, nvx_srq_refill and
 * nvx_srq_buf_return enabled: one filler (60 one-stride frames, then a
 * 1500-byte frame, in a fresh set), one drop for want of a buffer (4
 * buffers filled by 64 frames, one more) and one refill that returns
 * buffers (all four released, then RELEASE below the low-water mark)
 * show in the trace with their fields; so does each returned buffer,
 * once. Refills that return nothing (the receive path tries below the
 * mark) may show too. The fixture disables the events whatever happens.
 */
SRQ_TEST(tracepoints)
{
	struct nvx_srq_params p1 = { .nr_queues = 1 };
	struct nvx_srq_params p2 = { .nr_queues = 1, .nr_bufs = 4 };
	const char *dir = srq_tracefs();
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	struct srq_trace t;
	uint32_t a = 0, bufs[4], mask = 0;
	char path[128], *text;
	int i;

	if (!dir)
		SKIP(return, "no tracefs with events/nvx/nvx_srq_filler");
	snprintf(path, sizeof(path), "%strace", dir);
	ASSERT_EQ(0, write_str(path, ""));
	self->tracefs = dir;
	ASSERT_EQ(0, srq_trace_enable(dir, "1"));

	/* a filler: 4 strides left, the 1500-byte frame needs 6 */
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p1, 0));
	ASSERT_EQ(0, send_frames(&self->nic, 60, 200, SPORT));
	ASSERT_EQ(0, send_frame(&self->nic, 1500, SPORT, 60));
	ASSERT_EQ(62u, cq_wait(s, 0, 62));
	for (i = 0; i < 62; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		if (!i)
			a = e.buf;
		if (i == 60) {
			EXPECT_EQ(NVX_SRQ_CQE_FILLER, e.flags);
			EXPECT_EQ(a, e.buf);
		}
	}
	srq_close(s);

	/* a drop: 64 frames of 4 strides fill the 4 buffers */
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p2, 0));
	ASSERT_EQ(0, send_frames(&self->nic, 65, 1024, SPORT));
	ASSERT_EQ(0, wait_accounted(s, 65, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 64u),
			 SRQ_STAT(drops_no_buf, 1u), SRQ_STAT(fillers, 0u),
			 SRQ_STAT(bufs_returned, 0u));
	ASSERT_EQ(64u, cq_pending(s, 0));
	for (i = 0; i < 64; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		ASSERT_GT(4u, e.buf);
		if (i % 16 == 0) {
			bufs[i / 16] = e.buf;
			mask |= 1U << e.buf;
		}
	}
	EXPECT_EQ(0xfu, mask);

	/* a refill that returns them: every stride given back, below 64 */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, rel_push(s, 0, bufs[i], 64, 0));
	expect_release(_metadata, s, 4u, 0u);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(bufs_returned, 4u),
			 SRQ_STAT(posted_strides, 4u * 64));
	srq_close(s);

	ASSERT_EQ(0, srq_trace_enable(dir, "0"));
	snprintf(path, sizeof(path), "%strace", dir);
	text = read_file(path, 8 << 20);
	ASSERT_NE(NULL, text);
	srq_trace_parse(text, &t);
	free(text);

	EXPECT_EQ(0u, t.bad);
	EXPECT_EQ(1u, t.fillers);
	EXPECT_EQ(0u, t.filler[0]);
	EXPECT_EQ(a, t.filler[1]);
	EXPECT_EQ(60u, t.filler[2]);
	EXPECT_EQ(4u, t.filler[3]);
	EXPECT_EQ(1u, t.drops);
	EXPECT_EQ(0u, t.drop_queue);
	EXPECT_STREQ("no_buf", t.drop_reason);
	EXPECT_EQ(1024u, t.drop_len);
	EXPECT_EQ(1u, t.refills);
	EXPECT_EQ(0u, t.refill[0]);
	EXPECT_EQ(4u, t.refill[1]);
	EXPECT_EQ(4u * 64, t.refill[2]);
	EXPECT_EQ(4u, t.returns);
	EXPECT_EQ(mask, t.returned);
	TH_LOG("%u refills returned nothing", t.empty_refills);
}

static const char *const srq_set_stat_names[] = {
	"srq_refills", "srq_bufs_returned", "srq_released",
	"srq_release_garbage", "srq_bufs_posted", "srq_bufs_filling",
	"srq_bufs_held", "srq_posted_strides",
};

static const char *const srq_queue_stat_names[] = {
	"packets", "bytes", "strides", "fillers", "truncated",
	"drops_no_buf", "drops_cq_full",
};

#define SET_STATS	((unsigned int)ARRAY_SIZE(srq_set_stat_names))
#define QUEUE_STATS	((unsigned int)ARRAY_SIZE(srq_queue_stat_names))

/* SIOCETHTOOL on @name: 0 or -errno. */
static int eth_ioctl(int sock, const char *name, void *cmd)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = cmd;
	return ioctl(sock, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* ETHTOOL_GSSET_INFO: the ETH_SS_STATS count of @name, or -errno. */
static int eth_stats_count(int sock, const char *name)
{
	struct ethtool_sset_info *info;
	int ret;

	info = calloc(1, sizeof(*info) + sizeof(info->data[0]));
	if (!info)
		return -ENOMEM;
	info->cmd = ETHTOOL_GSSET_INFO;
	info->sset_mask = 1ULL << ETH_SS_STATS;
	ret = eth_ioctl(sock, name, info);
	if (!ret)
		ret = info->sset_mask & (1ULL << ETH_SS_STATS) ?
		      (int)info->data[0] : -EOPNOTSUPP;
	free(info);
	return ret;
}

/*
 * ETHTOOL_GSTRINGS: the @n ETH_SS_STATS names of @name into @names
 * (@n * ETH_GSTRING_LEN bytes): 0, -ERANGE for another count, or -errno.
 */
static int eth_stats_names(int sock, const char *name, char *names,
			   unsigned int n)
{
	struct ethtool_gstrings *g;
	int ret;

	g = calloc(1, sizeof(*g) + (size_t)n * ETH_GSTRING_LEN);
	if (!g)
		return -ENOMEM;
	g->cmd = ETHTOOL_GSTRINGS;
	g->string_set = ETH_SS_STATS;
	g->len = n;
	ret = eth_ioctl(sock, name, g);
	if (!ret && g->len != n)
		ret = -ERANGE;
	if (!ret)
		memcpy(names, g->data, (size_t)n * ETH_GSTRING_LEN);
	free(g);
	return ret;
}

/* ETHTOOL_GSTATS: the @n values; 0, -ERANGE for another count, -errno. */
static int eth_stats_values(int sock, const char *name, uint64_t *v,
			    unsigned int n)
{
	struct ethtool_stats *es;
	int ret;

	es = calloc(1, sizeof(*es) + (size_t)n * sizeof(es->data[0]));
	if (!es)
		return -ENOMEM;
	es->cmd = ETHTOOL_GSTATS;
	es->n_stats = n;
	ret = eth_ioctl(sock, name, es);
	if (!ret && es->n_stats != n)
		ret = -ERANGE;
	if (!ret)
		memcpy(v, es->data, (size_t)n * sizeof(*v));
	free(es);
	return ret;
}

#define ETH_FRAMES	(16 + 96)	/* completions popped, fillers too */

/*
 * The ethtool statistics through SIOCETHTOOL: none without a set (the
 * NIC and its peer; GSTRINGS and GSTATS are not called then, they WARN
 * on a count of 0). With a 2-queue set of 8 buffers and 16-entry rings:
 * queue 0 gets 12 frames of 1500 bytes (a filler) and 5 of 200 bytes
 * (3 land, 2 find the ring full), queue 1 gets 100 of 1024 bytes (96
 * fill the 6 buffers left, 4 find none); everything is released, with
 * one garbage entry, and RELEASE returns the 7 full buffers. Names and
 * order are the set's 8 then each queue's 7; every value equals
 * NVX_SRQ_IOC_STATS's, set-wide and per queue. Closed: none again.
 */
SRQ_TEST(ethtool_stats)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 8, .cq_entries = 16,
	};
	/* packets, bytes, strides, fillers, truncated, no_buf, cq_full */
	static const uint64_t expect[] = {
		15, 12 * 1500 + 3 * 200, 12 * 6 + 4 + 3, 1, 0, 0, 2,
		96, 96 * 1024, 96 * 4, 0, 0, 4, 0,
	};
	const unsigned int count = SET_STATS + 2 * QUEUE_STATS;
	char names[(SET_STATS + 2 * QUEUE_STATS) * ETH_GSTRING_LEN];
	uint64_t v[SET_STATS + 2 * QUEUE_STATS], want[QUEUE_STATS];
	uint16_t table[NVX_SRQ_RSS_ENTRIES];
	struct nvx_srq_cqe e[ETH_FRAMES], x;
	struct nvx_srq_stats st, qst;
	struct srq *s = &self->s;
	char want_name[ETH_GSTRING_LEN];
	unsigned int i, k, q, n = 0, extra = 0;
	const char *got;
	int sock;

	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, sock);
	/*
	 * No set, no statistics: the count is "not supported", not 0
	 * (ethtool's GSTRINGS and GSTATS WARN on a count of 0), and asking
	 * for the strings anyway fails cleanly.
	 */
	EXPECT_EQ(-EOPNOTSUPP, eth_stats_count(sock, self->nic.name));
	EXPECT_EQ(-EOPNOTSUPP, eth_stats_count(sock, self->nic.peer));
	EXPECT_EQ(-EOPNOTSUPP, eth_stats_names(sock, self->nic.name, names, 1));

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(16u, s->c.params.cq_entries);
	ASSERT_EQ(2u, s->c.params.nr_rel_rings);

	/* queue 0: 10 frames of 6 strides, a filler, 2 more; then 5 small */
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = 0;
	ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	for (i = 0; i < 12; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1500, SPORT + i, i));
	for (i = 12; i < 17; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 200, SPORT + i, i));
	ASSERT_EQ(0, wait_accounted(s, 17, &st));
	ASSERT_EQ(16u, cq_pending(s, 0));
	while (n < 16 && cq_pop(s, 0, &e[n]))
		n++;

	/* queue 1: consumed as it comes, until the buffers run out */
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = 1;
	ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 100 + i));
		while (n < ETH_FRAMES && cq_pop(s, 1, &e[n]))
			n++;
		while (cq_pop(s, 1, &x))
			extra++;
	}
	ASSERT_EQ(0, wait_accounted(s, 117, &st));
	EXPECT_EQ((unsigned int)ETH_FRAMES, n);
	EXPECT_EQ(0u, extra);

	/* every frame back, and one garbage entry; 7 buffers come back */
	for (i = 0; i < n; i++)
		if (!(e[i].flags & NVX_SRQ_CQE_FILLER))
			ASSERT_EQ(0, rel_push(s, i < 16 ? 0 : 1, e[i].buf,
					      e[i].strides, 0));
	ASSERT_EQ(0, rel_push(s, 0, p.nr_bufs, 1, 0));
	expect_release(_metadata, s, 112u, 1u);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_LE(1u, st.refills);
	expect_srq_stats(&st, SRQ_STAT(bufs_returned, 7u),
			 SRQ_STAT(released, 112u),
			 SRQ_STAT(release_garbage, 1u),
			 SRQ_STAT(bufs_posted, 7u), SRQ_STAT(bufs_filling, 1u),
			 SRQ_STAT(bufs_held, 0u),
			 SRQ_STAT(posted_strides, 7u * 64 + 64 - 15),
			 SRQ_STAT(rx_packets, 111u), SRQ_STAT(fillers, 1u),
			 SRQ_STAT(drops_no_buf, 4u),
			 SRQ_STAT(drops_cq_full, 2u));

	ASSERT_EQ((int)count, eth_stats_count(sock, self->nic.name));
	ASSERT_EQ(0, eth_stats_names(sock, self->nic.name, names, count));
	for (i = 0; i < count; i++) {
		if (i < SET_STATS)
			snprintf(want_name, sizeof(want_name), "%s",
				 srq_set_stat_names[i]);
		else
			snprintf(want_name, sizeof(want_name), "rxq%u_%s",
				 (i - SET_STATS) / QUEUE_STATS,
				 srq_queue_stat_names[(i - SET_STATS) %
						      QUEUE_STATS]);
		got = names + i * ETH_GSTRING_LEN;
		EXPECT_TRUE(memchr(got, '\0', ETH_GSTRING_LEN) &&
			    !strcmp(got, want_name))
			TH_LOG("stat %u: \"%.*s\", not \"%s\"", i,
			       ETH_GSTRING_LEN, got, want_name);
	}

	ASSERT_EQ(0, eth_stats_values(sock, self->nic.name, v, count));
	EXPECT_EQ(st.refills, v[0]);
	EXPECT_EQ(st.bufs_returned, v[1]);
	EXPECT_EQ(st.released, v[2]);
	EXPECT_EQ(st.release_garbage, v[3]);
	EXPECT_EQ(st.bufs_posted, v[4]);
	EXPECT_EQ(st.bufs_filling, v[5]);
	EXPECT_EQ(st.bufs_held, v[6]);
	EXPECT_EQ(st.posted_strides, v[7]);
	for (q = 0; q < 2; q++) {
		ASSERT_EQ(0, srq_stats(s, q, &qst));
		want[0] = qst.rx_packets;
		want[1] = qst.rx_bytes;
		want[2] = qst.rx_strides;
		want[3] = qst.fillers;
		want[4] = qst.truncated;
		want[5] = qst.drops_no_buf;
		want[6] = qst.drops_cq_full;
		for (i = 0; i < QUEUE_STATS; i++) {
			k = SET_STATS + q * QUEUE_STATS + i;
			EXPECT_EQ(want[i], v[k])
				TH_LOG("%.*s", ETH_GSTRING_LEN,
				       names + k * ETH_GSTRING_LEN);
		}
	}
	/* what each queue got, as described above */
	for (i = 0; i < 2 * QUEUE_STATS; i++)
		EXPECT_EQ(expect[i], v[SET_STATS + i])
			TH_LOG("%.*s", ETH_GSTRING_LEN,
			       names + (SET_STATS + i) * ETH_GSTRING_LEN);
	EXPECT_EQ(st.rx_packets, v[SET_STATS] + v[SET_STATS + QUEUE_STATS]);
	EXPECT_EQ(st.rx_bytes, v[SET_STATS + 1] +
		  v[SET_STATS + QUEUE_STATS + 1]);

	srq_close(s);
	EXPECT_EQ(-EOPNOTSUPP, eth_stats_count(sock, self->nic.name));
	close(sock);
}

static struct tracer trace, perf;

/*
 * nvx-trace srq and perf stat (system-wide: frames arrive in softirq)
 * around the frames of the tracepoints test: 61 frames and a filler on
 * one set, 64 frames and a drop for want of a buffer on another. Both
 * count them; nvx-trace's strides-per-frame histogram holds each frame's
 * strides.
 */
SRQ_TEST(nvx_trace_and_perf_count_frames)
{
	struct nvx_srq_params p1 = { .nr_queues = 1 };
	struct nvx_srq_params p2 = { .nr_queues = 1, .nr_bufs = 4 };
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	long long strides, frames, rx_missed, fillers, drops;

	ASSERT_EQ(0, nvx_trace_start(&trace, "srq")) TH_LOG("%s",
							    trace.run.err);
	ASSERT_EQ(0, perf_stat_start(&perf, "nvx:nvx_srq_rx,nvx:nvx_srq_filler,nvx:nvx_srq_drop"))
		TH_LOG("%s", perf.run.err);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p1, 0));
	strides = 60 * strides_for(s, 200) + strides_for(s, 1500);
	ASSERT_EQ(0, send_frames(&self->nic, 60, 200, SPORT));
	ASSERT_EQ(0, send_frame(&self->nic, 1500, SPORT, 60));
	ASSERT_EQ(62u, cq_wait(s, 0, 62));
	srq_close(s);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p2, 0));
	strides += 64 * strides_for(s, 1024);
	ASSERT_EQ(0, send_frames(&self->nic, 65, 1024, SPORT));
	ASSERT_EQ(0, wait_accounted(s, 65, &st));
	srq_close(s);
	tracer_stop(&perf);
	tracer_stop(&trace);
	ASSERT_TRUE(WIFEXITED(trace.run.status) &&
		    !WEXITSTATUS(trace.run.status)) TH_LOG("%s", trace.run.err);

	/*
	 * A frame arrives in softirq: if it interrupts another BPF program
	 * on its CPU, the kernel keeps it from nvx-trace and from perf
	 * alike, and nvx-trace reports it missed.
	 */
	rx_missed = trace_json_sum(trace.run.out, "missed",
				   "\"prog\":\"srq_rx\"", "value");
	ASSERT_LE(0, rx_missed) TH_LOG("%s", trace.run.out);
	/* none counted: no entry (-1) */
	fillers = trace_json_sum(trace.run.out, "fillers", NULL, "value");
	fillers = fillers < 0 ? 0 : fillers;
	drops = trace_json_sum(trace.run.out, "drops",
			       "\"reason_name\":\"no_buf\"", "value");
	drops = drops < 0 ? 0 : drops;
	frames = trace_json_sum(trace.run.out, "frames", NULL, "value");
	EXPECT_EQ(125, frames + rx_missed) TH_LOG("%s", trace.run.out);
	EXPECT_EQ(1, fillers + trace_json_sum(trace.run.out, "missed",
					      "\"prog\":\"srq_filler\"",
					      "value"));
	EXPECT_EQ(1, drops + trace_json_sum(trace.run.out, "missed",
					    "\"prog\":\"srq_drop\"", "value"));
	EXPECT_EQ(frames, trace_json_sum(trace.run.out, "strides-per-frame",
					 NULL, "count"));
	if (!rx_missed) {
		EXPECT_EQ(strides, trace_json_sum(trace.run.out,
						  "strides-per-frame", NULL,
						  "sum"));
	} else {
		TH_LOG("%lld frames missed by nvx-trace's srq_rx", rx_missed);
	}
	EXPECT_EQ(frames, perf_stat_count(perf.run.err, "nvx:nvx_srq_rx"))
		TH_LOG("%s", perf.run.err);
	EXPECT_EQ(fillers, perf_stat_count(perf.run.err, "nvx:nvx_srq_filler"));
	EXPECT_EQ(drops, perf_stat_count(perf.run.err, "nvx:nvx_srq_drop"));
}

TEST_HARNESS_MAIN
