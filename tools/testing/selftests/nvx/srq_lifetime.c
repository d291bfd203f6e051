// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": the set's lifetime.
 *
 * Close, exit and NIC removal; TX through the NIC; the per-queue
 * baseline.
 */
#include "srq_fixture.h"

/*
 * A child creates a set, receives frames and exits holding them all,
 * mapped, fd open: the set goes, every grant goes back, and a new set
 * can be created on the NIC, with fresh counters.
 */
SRQ_TEST(exit_returns_everything)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct nvx_srq_stats st;
	struct nvx_pool_stats ps;
	struct srq *s = &self->s;
	int status, i;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint64_t end = now_ms() + WAIT_MS;
		struct srq cs;

		if (srq_open(self->fd, &cs, self->nic.ifindex, &p, 0))
			_exit(1);
		for (i = 0; i < 100; i++)
			if (send_frame(&self->nic, 1024, SPORT + i, i))
				_exit(2);
		while (cq_pending(&cs, 0) + cq_pending(&cs, 1) != 100)
			if (now_ms() > end)
				_exit(3);
		/* exit holding every frame, the set mapped and open */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex, &st));
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));
	ASSERT_EQ(0, pool_stats(self->fd, &ps));
	EXPECT_EQ(self->start.granted_bytes, ps.granted_bytes);

	p.nr_queues = 1;
	expect_new_set_receives(_metadata, self->fd, &self->nic, s, &p);
	srq_close(s);
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));
}

/*
 * One set per NIC (-EBUSY); closing and unmapping detaches it (QUERY
 * and INFO say -ENOENT) and a new one can be created; CLOEXEC sets
 * FD_CLOEXEC, and only it.
 */
SRQ_TEST(close_and_recreate)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	int round;

	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p,
				      round ? 0 : NVX_SRQ_CLOEXEC));
		EXPECT_EQ(round ? 0 : FD_CLOEXEC,
			  fcntl(s->fd, F_GETFD) & FD_CLOEXEC);
		EXPECT_EQ(-EBUSY, srq_open(self->fd, &self->s2,
					   self->nic.ifindex, &p, 0));
		ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
		EXPECT_EQ((uint32_t)getpid(), info.owner);
		EXPECT_EQ(1u, info.params.nr_queues);

		ASSERT_EQ(0, send_frame(&self->nic, 300, SPORT, round));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		EXPECT_EQ(0, e.stride);
		EXPECT_EQ(1u, cq_prod(s, 0));
		expect_frame(_metadata, &self->nic, s, &e, 300, SPORT, round);
		ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
		EXPECT_EQ(1u, st.rx_packets);

		srq_close(s);
		EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
		EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex,
					     &st));
		EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO,
					     &info));
	}
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));
}

/*
 * The NIC is deleted under an attached set: the set's fd stays usable
 * (STATS, RELEASE, the mapped frames), TX says -ENXIO, and /dev/nvx no
 * longer finds the NIC.
 */
SRQ_TEST(link_del_while_attached)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	unsigned char f[64] = { 0 };
	struct nvx_srq_tx tx = { .len = sizeof(f), .addr = (uintptr_t)f };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 500, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 500, SPORT, 0);

	ASSERT_EQ(0, sh("ip link del %s", self->nic.name));
	self->nic.alive = false;

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.rx_packets);
	EXPECT_EQ(-ENXIO, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	EXPECT_TRUE(bytes_match(&self->nic, s, &e, 500, SPORT, 0));
	ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
	expect_release(_metadata, s, 1u, 0u);
	EXPECT_EQ(-ENODEV, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	EXPECT_EQ(-ENODEV, srq_query(self->fd, info.ifindex, &st));
	ASSERT_EQ(0, srq_stats(s, 0, &st));
	srq_close(s);
}

/* Wait for a frame of @len bytes on @sock equal to @f: 0 or -errno. */
static int recv_match(int sock, const unsigned char *f, unsigned int len)
{
	unsigned char buf[MAX_FRAME];
	struct sockaddr_ll from;
	socklen_t fl;
	uint64_t end = now_ms() + WAIT_MS;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	ssize_t n;

	while (now_ms() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		fl = sizeof(from);
		n = recvfrom(sock, buf, sizeof(buf), 0,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			return -errno;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (n == len && !memcmp(buf, f, len))
			return 0;
	}
	return -ETIMEDOUT;
}

/* TX sends a frame out of the NIC: the peer receives it. Bad TX args. */
SRQ_TEST(tx_reaches_peer)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	static unsigned char f[MAX_ETH_FRAME + 16];
	struct nvx_srq_tx tx = { .addr = (uintptr_t)f };
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = self->nic.peer_ifindex,
	};
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	unsigned int i;
	int rx;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	rx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, bind(rx, (struct sockaddr *)&sll, sizeof(sll)));

	memcpy(f, self->nic.peer_mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, self->nic.mac, ETH_ALEN);
	put16(f + 12, ETH_P_LOCAL);
	for (i = ETH_HDR; i < sizeof(f); i++)
		f[i] = i * 7 + 3;

	tx.len = 200;
	ASSERT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	EXPECT_EQ(0, recv_match(rx, f, 200));
	tx.len = ETH_HDR;
	ASSERT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	EXPECT_EQ(0, recv_match(rx, f, ETH_HDR));
	tx.len = MAX_ETH_FRAME;
	f[100] ^= 0xff;
	ASSERT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	EXPECT_EQ(0, recv_match(rx, f, MAX_ETH_FRAME));

	/* bad frames and arguments */
	tx.len = ETH_HDR - 1;
	EXPECT_EQ(-EMSGSIZE, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	tx.len = 0;
	EXPECT_EQ(-EMSGSIZE, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	tx.len = MAX_ETH_FRAME + 1;
	EXPECT_EQ(-EMSGSIZE, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	tx.len = 0x7fffffff;
	EXPECT_EQ(-EMSGSIZE, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	tx.len = 60;
	tx.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	tx.flags = 0;
	tx.addr = 8;
	EXPECT_EQ(-EFAULT, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	tx.addr = 0;
	EXPECT_EQ(-EFAULT, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(tx_packets, 3u),
			 SRQ_STAT(tx_bytes, 200u + ETH_HDR + MAX_ETH_FRAME));
	/* nothing came back in */
	EXPECT_EQ(0u, st.rx_packets);
	close(rx);
}

/*
 * The baseline: with PER_QUEUE, queue q posts only buffers
 * [q * n / Q, (q + 1) * n / Q), and a burst to one queue drops once its
 * share is used even though the other queues' buffers are free.
 */
SRQ_TEST(per_queue_pools)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_PER_QUEUE, .nr_queues = 4, .nr_bufs = 16,
	};
	uint16_t table[NVX_SRQ_RSS_ENTRIES];
	unsigned int landed[4] = { 0 }, q;
	struct nvx_srq_stats st, qst;
	struct nvx_srq_cqe e;
	struct qtrack t[4];
	struct srq *s = &self->s;
	uint64_t drops;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(NVX_SRQ_PER_QUEUE, s->c.params.flags);
	track_init(t, 4);

	/* one flow, all to queue 1: its 4 buffers take 64 frames of 4 strides */
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = 1;
	ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	ASSERT_EQ(0, send_frames(&self->nic, 80, 1024, SPORT));
	ASSERT_EQ(0, wait_accounted(s, 80, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 64u),
			 SRQ_STAT(drops_no_buf, 16u),
			 SRQ_STAT(bufs_posted, 12u), SRQ_STAT(bufs_held, 4u));
	ASSERT_EQ(0, srq_stats(s, 1, &qst));
	expect_srq_stats(&qst, SRQ_STAT(rx_packets, 64u),
			 SRQ_STAT(drops_no_buf, 16u));
	ASSERT_EQ(64u, cq_pending(s, 1));
	for (i = 0; i < 64; i++) {
		ASSERT_TRUE(cq_pop(s, 1, &e));
		EXPECT_TRUE(track(&t[1], &e, s->spb));
		EXPECT_LE(4u, e.buf);
		EXPECT_GT(8u, e.buf);
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, i);
	}

	/* many flows, round-robin: the other queues use their own buffers */
	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = i % 4;
	ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	drops = st.drops_no_buf;
	for (i = 0; i < 128; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 100));
	ASSERT_EQ(0, wait_accounted(s, 80 + 128, &st));
	EXPECT_EQ(0u, cq_pending(s, 1));
	for (q = 0; q < 4; q++) {
		struct tag tag;

		while (cq_pop(s, q, &e)) {
			EXPECT_TRUE(track(&t[q], &e, s->spb));
			EXPECT_LE(q * 4, e.buf);
			EXPECT_GT(q * 4 + 4, e.buf);
			EXPECT_TRUE(cqe_frame_ok(&self->nic, s, &e, &tag));
			landed[q]++;
		}
	}
	EXPECT_EQ(0u, landed[1]);
	EXPECT_LT(0u, landed[0]);
	EXPECT_LT(0u, landed[2]);
	EXPECT_LT(0u, landed[3]);
	EXPECT_EQ(128u, landed[0] + landed[2] + landed[3] +
		  st.drops_no_buf - drops);
	EXPECT_EQ(64u + landed[0] + landed[2] + landed[3], st.rx_packets);
	EXPECT_EQ(16u, st.bufs_posted + st.bufs_filling + st.bufs_held);
}

TEST_HARNESS_MAIN
