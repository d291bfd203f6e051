// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": several sets on one NIC, each taking the
 * frames its rule names (struct nvx_srq_create.match), as many user VMs
 * share one NIC: by destination IPv4 (ARP for it included), by
 * destination MAC, or everything no rule takes (the catch-all set).
 *
 * What is checked: each set receives exactly its own frames, whole and
 * in place, the others none of them; frames no rule takes reach the
 * NIC's stack (a packet socket on NAME sees them) or the catch-all set;
 * the oldest set wins when two rules take a frame; bad rules and
 * duplicates are refused; a set closed while frames for it and for
 * another flow in leaves the other's frames exact; INFO and QUERY name
 * the catch-all set, or else the oldest.
 */
#include "srq_fixture.h"
#include "run_util.h"

#define IP_A		0x0a000102U	/* 10.0.1.2 */
#define IP_B		0x0a000103U
#define IP_C		0x0a000104U	/* no set's */
#define DEF_IP		0x0a000002U	/* build_frame()'s destination */

static const unsigned char mac_m[ETH_ALEN] = { 2, 0, 0, 0, 0, 0x11 };
static const struct nvx_srq_params one = { .nr_queues = 1 };

/* A packet socket that sees what reaches NAME's stack; -errno on error. */
static int stack_socket(const struct nic *n)
{
	return packet_socket(n->ifindex, SOCK_NONBLOCK);
}

/*
 * Test frames to @dip (host order; 0: any) and ARP requests for it that
 * reached the stack socket @fd, waiting up to WAIT_MS for @want of them
 * and at least 100 ms (the stack receives from a backlog, later than a
 * set); test frames and ARP requests to other addresses are added to
 * @others.
 */
static unsigned int stack_got(int fd, uint32_t dip, unsigned int want,
			      unsigned int *others)
{
	uint64_t start = now_ms(), end = start + WAIT_MS;
	unsigned char f[MAX_FRAME];
	unsigned int got = 0;
	bool test;
	struct tag t;
	uint32_t d;
	ssize_t n;

	for (;;) {
		n = recv(fd, f, sizeof(f), 0);
		if (n < 0) {
			if ((got >= want && now_ms() > start + 100) ||
			    now_ms() > end)
				return got;
			usleep(1000);
			continue;
		}
		if (n >= ARP_FRAME && f[12] == 0x08 && f[13] == 0x06) {
			memcpy(&d, f + 38, 4);
			test = true;
		} else if (n >= (ssize_t)MIN_FRAME) {
			memcpy(&t, f + TAG_OFF, sizeof(t));
			memcpy(&d, f + ETH_HDR + 16, 4);
			test = t.magic == TAG_MAGIC;
		} else {
			continue;
		}
		if (test && (!dip || ntohl(d) == dip))
			got++;
		else if (test)
			(*others)++;
	}
}

/*
 * The completions of @s's queue 0: @n test frames of @len bytes to @dip
 * (host order), seq 0 and up from @seq0, whole and in order; nothing
 * more.
 */
static void expect_frames_to(struct __test_metadata *_metadata,
			     const struct srq *s, uint32_t dip,
			     unsigned int n, unsigned int len, uint32_t seq0)
{
	struct nvx_srq_cqe e;
	const unsigned char *f;
	unsigned int i;
	struct tag t;
	uint32_t d;

	ASSERT_EQ(n, cq_wait(s, 0, n));
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		ASSERT_EQ(len, e.len);
		f = frame_at(s, &e);
		memcpy(&t, f + TAG_OFF, sizeof(t));
		memcpy(&d, f + ETH_HDR + 16, 4);
		EXPECT_EQ(TAG_MAGIC, t.magic);
		EXPECT_EQ(seq0 + i, t.seq);
		EXPECT_EQ(dip, ntohl(d));
		ASSERT_EQ(0, rel_give(s, 0, e.buf, e.strides));
	}
	usleep(20000);
	EXPECT_EQ(0u, cq_pending(s, 0));
}

/* Two sets by IPv4 on one NIC: each gets its own; the rest, the stack. */
SRQ_TEST(ip_rules_split_traffic)
{
	struct srq *a = &self->s, *b = &self->s2;
	struct nvx_srq_stats st;
	unsigned int others = 0;
	char v[64];
	int fd, i;

	fd = stack_socket(&self->nic);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, srq_open_rule(self->fd, a, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_A));
	ASSERT_EQ(0, srq_open_rule(self->fd, b, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_B));
	ASSERT_EQ(0, fdinfo_get(a->fd, "match_ip4", v, sizeof(v)));
	EXPECT_STREQ("10.0.1.2", v);
	EXPECT_EQ(-1, fdinfo_get(a->fd, "match_mac", v, sizeof(v)));

	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_A, 200, SPORT,
					   i));
		if (i < 5)
			ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_B, 300,
						   SPORT, i));
		if (i < 3)
			ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_C, 400,
						   SPORT, i));
	}
	expect_frames_to(_metadata, a, IP_A, 8, 200, 0);
	expect_frames_to(_metadata, b, IP_B, 5, 300, 0);
	EXPECT_EQ(3u, stack_got(fd, IP_C, 3, &others));
	EXPECT_EQ(0u, others);
	ASSERT_EQ(0, srq_stats(a, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 8u),
			 SRQ_STAT(drops_no_buf, 0u));
	ASSERT_EQ(0, srq_stats(b, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 5u));
	close(fd);
}

/* ARP asking for a set's address is that set's; for another, the stack's. */
SRQ_TEST(arp_follows_the_ip_rule)
{
	struct srq *a = &self->s;
	struct nvx_srq_cqe e;
	const unsigned char *f;
	unsigned int others = 0;
	uint32_t tip;
	int fd;

	fd = stack_socket(&self->nic);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, srq_open_rule(self->fd, a, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_A));
	ASSERT_EQ(0, send_arp(&self->nic, IP_A));
	ASSERT_EQ(0, send_arp(&self->nic, IP_C));
	ASSERT_EQ(0, cq_next(a, 0, &e));
	EXPECT_EQ((uint32_t)ARP_FRAME, e.len);
	f = frame_at(a, &e);
	EXPECT_EQ(0x0806, f[12] << 8 | f[13]);
	memcpy(&tip, f + 38, 4);
	EXPECT_EQ(IP_A, ntohl(tip));
	usleep(20000);
	EXPECT_EQ(0u, cq_pending(a, 0));
	EXPECT_EQ(1u, stack_got(fd, IP_C, 1, &others));
	EXPECT_EQ(0u, others);
	close(fd);
}

/*
 * A MAC rule and an IP rule: each takes its frames; a frame both take
 * goes to the older set.
 */
SRQ_TEST(mac_rule_and_the_oldest_wins)
{
	struct srq *m = &self->s, *a = &self->s2;
	char v[64];
	int i;

	ASSERT_EQ(0, srq_open_rule(self->fd, m, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_MAC, mac_m, 0));
	ASSERT_EQ(0, srq_open_rule(self->fd, a, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_A));
	ASSERT_EQ(0, fdinfo_get(m->fd, "match_mac", v, sizeof(v)));
	EXPECT_STREQ("02:00:00:00:00:11", v);
	for (i = 0; i < 4; i++) {
		/* MAC M, another address: the MAC set's */
		ASSERT_EQ(0, send_frame_to(&self->nic, mac_m, IP_C, 128,
					   SPORT, i));
		/* NAME's MAC, address A: the IP set's */
		ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_A, 128,
					   SPORT, 100 + i));
	}
	expect_frames_to(_metadata, m, IP_C, 4, 128, 0);
	expect_frames_to(_metadata, a, IP_A, 4, 128, 100);
	/* MAC M and address A: both rules take it; the MAC set is older */
	ASSERT_EQ(0, send_frame_to(&self->nic, mac_m, IP_A, 128, SPORT, 4));
	expect_frames_to(_metadata, m, IP_A, 1, 128, 4);
	EXPECT_EQ(0u, cq_pending(a, 0));
}

/* A set without a rule takes what no rule takes; INFO and QUERY name it. */
SRQ_TEST(catch_all_takes_the_rest)
{
	const struct nvx_srq_params two = { .nr_queues = 2 };
	struct srq *a = &self->s, *all = &self->s2;
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_query q = {
		.ifindex = self->nic.ifindex,
		.stats.queue = NVX_SRQ_ALL_QUEUES,
	};
	unsigned int others = 0;
	int fd;

	fd = stack_socket(&self->nic);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, srq_open_rule(self->fd, a, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_A));
	/* only the rule's set: INFO names it (the oldest) */
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	EXPECT_EQ(1u, info.params.nr_queues);
	ASSERT_EQ(0, srq_open(self->fd, all, self->nic.ifindex, &two, 0));
	ASSERT_EQ(0, srq_steer_all(all, 0));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	EXPECT_EQ(2u, info.params.nr_queues);

	ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_A, 256, SPORT, 0));
	ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_C, 256, SPORT, 0));
	ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_B, 256, SPORT, 1));
	expect_frames_to(_metadata, a, IP_A, 1, 256, 0);
	ASSERT_EQ(2u, cq_wait(all, 0, 2));
	EXPECT_EQ(0u, stack_got(fd, 0, 0, &others));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &q));
	EXPECT_EQ(2u, q.stats.rx_packets);
	EXPECT_EQ(2u, q.stats.nr_queues);
	/* a second catch-all set: EBUSY */
	EXPECT_EQ(-EBUSY, srq_open(self->fd, &(struct srq){ 0 },
				   self->nic.ifindex, &one, 0));
	close(fd);
}

/* Bad rules: EINVAL; the same rule twice: EBUSY; nothing left attached. */
SRQ_TEST(bad_rules_refused)
{
	static const unsigned char zero[ETH_ALEN];
	struct srq *a = &self->s, t;
	int dev = self->fd, ifi = self->nic.ifindex;

	EXPECT_EQ(-EINVAL, srq_open_rule(dev, &t, ifi, &one, 0, 0x4, NULL,
					 0));
	EXPECT_EQ(-EINVAL, srq_open_rule(dev, &t, ifi, &one, 0,
					 NVX_SRQ_MATCH_MAC, zero, 0));
	EXPECT_EQ(-EINVAL, srq_open_rule(dev, &t, ifi, &one, 0, 0, mac_m,
					 0));
	EXPECT_EQ(-EINVAL, srq_open_rule(dev, &t, ifi, &one, 0,
					 NVX_SRQ_MATCH_IP4, NULL, 0));
	EXPECT_EQ(-EINVAL, srq_open_rule(dev, &t, ifi, &one, 0, 0, NULL,
					 IP_A));
	/* a good MAC rule, and an address without its bit */
	EXPECT_EQ(-EINVAL, srq_open_rule(dev, &t, ifi, &one, 0,
					 NVX_SRQ_MATCH_MAC, mac_m, IP_A));
	/* reserved */
	srq_init(&t);
	t.c.ifindex = ifi;
	t.c.params = one;
	t.c.grant_fd = srq_grant(dev, 2 << 20);
	ASSERT_LE(0, t.c.grant_fd);
	t.c.reserved = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, &t.c));
	close(t.c.grant_fd);
	EXPECT_EQ(0, wait_detached(dev, ifi));

	ASSERT_EQ(0, srq_open_rule(dev, a, ifi, &one, 0, NVX_SRQ_MATCH_IP4,
				   NULL, IP_A));
	EXPECT_EQ(-EBUSY, srq_open_rule(dev, &t, ifi, &one, 0,
					NVX_SRQ_MATCH_IP4, NULL, IP_A));
	/* another address, or the same one with a MAC too: fine */
	ASSERT_EQ(0, srq_open_rule(dev, &t, ifi, &one, 0, NVX_SRQ_MATCH_IP4,
				   NULL, IP_B));
	srq_close(&t);
	ASSERT_EQ(0, srq_open_rule(dev, &t, ifi, &one, 0,
				   NVX_SRQ_MATCH_IP4 | NVX_SRQ_MATCH_MAC,
				   mac_m, IP_A));
	srq_close(&t);
	srq_close(a);
	EXPECT_EQ(0, wait_detached(dev, ifi));
}

/*
 * A set's rule first, then its RSS table: 64 flows to a 4-queue set's
 * address spread over all four of its queues (the per-queue counts add
 * up to the 64), and the set with the other address gets none of them.
 */
SRQ_TEST(rule_then_rss)
{
	const struct nvx_srq_params four = { .nr_queues = 4 };
	struct srq *a = &self->s, *b = &self->s2;
	struct nvx_srq_stats st, qst;
	uint64_t sum = 0;
	unsigned int i, q;

	ASSERT_EQ(0, srq_open_rule(self->fd, a, self->nic.ifindex, &four, 0,
				   NVX_SRQ_MATCH_IP4, NULL, DEF_IP));
	ASSERT_EQ(0, srq_open_rule(self->fd, b, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_B));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 0));
	ASSERT_EQ(0, wait_accounted(a, 64, &st));
	EXPECT_EQ(64u, st.rx_packets);
	for (q = 0; q < 4; q++) {
		ASSERT_EQ(0, srq_stats(a, q, &qst));
		EXPECT_LT(0u, qst.rx_packets) TH_LOG("queue %u got nothing", q);
		sum += qst.rx_packets;
	}
	EXPECT_EQ(64u, sum);
	ASSERT_EQ(0, srq_stats(b, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(0u, st.rx_packets);
}

/*
 * A set closed while frames for it flow in (two senders to its address)
 * and frames for another set come one by one: the other set gets every
 * one of its frames, exact; after the close, the first set's frames
 * reach the stack. The debug kernel checks the rest.
 */
SRQ_TEST(rule_removed_mid_traffic)
{
	struct srq *a = &self->s, *b = &self->s2;
	unsigned int others = 0;
	int fd, i;

	fd = stack_socket(&self->nic);
	ASSERT_LE(0, fd);
	/* the senders' frames go to 10.0.0.2 */
	ASSERT_EQ(0, srq_open_rule(self->fd, a, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, DEF_IP));
	ASSERT_EQ(0, srq_open_rule(self->fd, b, self->nic.ifindex, &one, 0,
				   NVX_SRQ_MATCH_IP4, NULL, IP_B));
	ASSERT_EQ(0, blast_start(&self->blast, &self->nic));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, send_frame_to(&self->nic, NULL, IP_B, 512,
					   SPORT, i));
		if (i == 100)
			srq_close(a);
		if (i % 50 == 49)
			expect_frames_to(_metadata, b, IP_B, 50, 512, i - 49);
	}
	blast_stop(&self->blast);
	/* the rule is gone: its address now reaches the stack */
	ASSERT_EQ(0, send_frame_to(&self->nic, NULL, DEF_IP, 512, SPORT, 0));
	EXPECT_LE(1u, stack_got(fd, DEF_IP, 1, &others));
	EXPECT_EQ(0u, others);
	close(fd);
}

/*
 * nvxtool srq create --match-ip/--match-mac: the rule goes to the kernel
 * (the JSON echoes it, and a second set with it is refused while the
 * first holds the NIC); bad addresses are usage errors.
 */
SRQ_TEST(nvxtool_rules)
{
	static struct run r;
	static const char *const bad[][2] = {
		{ "--match-ip", "10.0.1" }, { "--match-ip", "0.0.0.0" },
		{ "--match-mac", "02:00:00:00:00" },
		{ "--match-mac", "00:00:00:00:00:00" },
		{ "--match-mac", "02:00:00:00:00:11:22" },
	};
	const char *want = "\"rule\":{\"match\":3,\"mac\":\"02:00:00:00:00:11\",";
	const char *want_ip = "\"ip4\":\"10.0.1.2\"}";
	unsigned int i;

	nvxtool(&r, "--json", "srq", "create", "--dev", self->nic.name,
		"--match-ip", "10.0.1.2", "--match-mac", "02:00:00:00:00:11",
		NULL);
	ASSERT_TRUE(WIFEXITED(r.status) && !WEXITSTATUS(r.status))
		TH_LOG("%s: status %#x; stderr: '%s'", r.cmd, r.status, r.err);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("stdout: '%s'", r.out);
	EXPECT_NE(NULL, strstr(r.out, want_ip)) TH_LOG("stdout: '%s'", r.out);

	/* held by a set of the test: nvxtool's is refused, EBUSY */
	ASSERT_EQ(0, srq_open_rule(self->fd, &self->s, self->nic.ifindex,
				   &one, 0, NVX_SRQ_MATCH_IP4, NULL, IP_A));
	nvxtool(&r, "srq", "create", "--dev", self->nic.name, "--match-ip",
		"10.0.1.2", NULL);
	EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1)
		TH_LOG("%s: status %#x", r.cmd, r.status);
	EXPECT_NE(NULL, strstr(r.err, "same rule"))
		TH_LOG("stderr: '%s'", r.err);
	/* another address: fine, and it says what it takes */
	nvxtool(&r, "srq", "create", "--dev", self->nic.name, "--match-ip",
		"10.0.1.3", NULL);
	EXPECT_TRUE(WIFEXITED(r.status) && !WEXITSTATUS(r.status))
		TH_LOG("%s: status %#x; stderr: '%s'", r.cmd, r.status, r.err);
	EXPECT_NE(NULL, strstr(r.out, "takes        IPv4 and ARP for 10.0.1.3"))
		TH_LOG("stdout: '%s'", r.out);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		nvxtool(&r, "srq", "create", "--dev", self->nic.name,
			bad[i][0], bad[i][1], NULL);
		EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2)
			TH_LOG("%s: status %#x", r.cmd, r.status);
		EXPECT_NE(NULL, strstr(r.err, bad[i][0]))
			TH_LOG("stderr: '%s'", r.err);
	}
}

TEST_HARNESS_MAIN
