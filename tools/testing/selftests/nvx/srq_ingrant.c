// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": a set that lives wholly in its grant
 * (NVX_SRQ_RINGS_IN_GRANT), as it does in a user VM's memory.
 *
 * The test maps the grant read-write, as the VMM maps a user VM's
 * memory, and reads completions and frames and writes releases there:
 * nothing of the set's own fd is used but its ioctls. What is checked:
 * frames land in place with the right bytes, 64 small ones in one
 * buffer, releases written into the grant return buffers; the kernel
 * zeroes the ring area at creation; every misplaced ring area is refused
 * with its errno and leaves the NIC and the pool as they were; lies the
 * instance writes into the rings are counted and hurt nothing else; the
 * set outlives the grant's fd and mapping; a queue signals an eventfd
 * (what a VMM hands KVM as an irqfd) once per burst. A TX ring in the
 * grant (NVX_SRQ_IOC_TX_RING, NVX_SRQ_IOC_TX_KICK) sends frames from
 * anywhere in the grant to the NIC's peer, byte for byte, across page
 * boundaries and index wrap, an RX buffer's frame echoed in place; each
 * kind of bad descriptor or index stops that ring alone, counted, and
 * the set's receiving goes on; bad arguments get their errno.
 */
#include "srq_fixture.h"

#include <sys/eventfd.h>

#define BUFS		16
#define RING_OFF	(CHUNK / 2)

/*
 * A one-piece grant: 16 buffers at 0, the rings half-way. The low-water
 * mark is the whole pool: every RELEASE refills.
 */
static const struct nvx_srq_params small = {
	.nr_queues = 2, .nr_bufs = BUFS, .cq_entries = 1024,
	.rel_entries = 1024, .low_water = BUFS * 64,
};

/*
 * NVX_IOC_SRQ_CREATE with the ring area at @ring_off of a new grant of
 * @gbytes (@buf_off: buffer 0), flags @flags, argument size @size (0: the
 * whole struct); a set made is closed again. 0 or -errno.
 */
static int try_create(int dev, int ifindex, const struct nvx_srq_params *p,
		      uint64_t gbytes, uint32_t flags, uint64_t buf_off,
		      uint64_t ring_off, size_t size)
{
	struct nvx_srq_create c = {
		.flags = flags, .ifindex = ifindex, .params = *p,
		.grant_offset = buf_off, .ring_offset = ring_off,
	};
	unsigned long cmd = NVX_IOC_SRQ_CREATE;
	int g, ret;

	g = srq_grant(dev, gbytes);
	if (g < 0)
		return g;
	c.grant_fd = g;
	if (size)
		cmd = _IOC(_IOC_READ | _IOC_WRITE, NVX_IOC_MAGIC,
			   _IOC_NR(NVX_IOC_SRQ_CREATE), size);
	ret = ioctl(dev, cmd, &c) ? -errno : 0;
	close(g);
	if (!ret)
		close(c.fd);
	return ret;
}

/*
 * 64 frames of 64 bytes fill one 16 KiB buffer at 256-byte strides,
 * frame k at stride k; read where a guest reads them, released through
 * the release ring in the grant: the buffer goes back to the NIC.
 */
SRQ_TEST(frames_and_releases_in_the_grant)
{
	struct srq *s = &self->s;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	uint32_t buf = 0;
	int i;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	EXPECT_EQ(srq_ring_bytes(&small), s->c.layout.ring_bytes);
	EXPECT_EQ(0u, s->c.layout.cq_offset);
	EXPECT_EQ((long long)RING_OFF, fdinfo_num(s->fd, "rings_in_grant"));
	ASSERT_EQ(0, srq_steer_all(s, 1));

	ASSERT_EQ(0, send_frames(&self->nic, 64, 64, SPORT));
	ASSERT_EQ(64u, cq_wait(s, 1, 64));
	EXPECT_EQ(0u, cq_pending(s, 0));
	for (i = 0; i < 64; i++) {
		ASSERT_TRUE(cq_pop(s, 1, &e));
		if (!i)
			buf = e.buf;
		EXPECT_EQ(buf, e.buf);
		EXPECT_EQ(i, e.stride);
		/* read in the grant, where the guest reads it */
		expect_frame(_metadata, &self->nic, s, &e, 64, SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 64u),
			 SRQ_STAT(bufs_held, 1u));

	/* released in the ring in the grant: the buffer is posted again */
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, rel_push(s, 0, buf, 1, 0));
	expect_release(_metadata, s, 64, 0);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(bufs_held, 0u),
			 SRQ_STAT(bufs_returned, 1u),
			 SRQ_STAT(bufs_posted, (uint32_t)BUFS),
			 SRQ_STAT(release_garbage, 0u));
}

/* What was in the grant where the rings go reads as empty rings. */
SRQ_TEST(ring_area_zeroed)
{
	uint64_t rb = srq_ring_bytes(&small);
	struct srq *s = &self->s;
	struct nvx_srq_cqe e;
	uint64_t i;

	/* the place written with 0xff before the create */
	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, 0xff, 0));
	/* the kernel zeroed the whole area */
	for (i = 0; i < rb; i++)
		if (s->ring[i])
			break;
	EXPECT_EQ(rb, i) TH_LOG("ring area byte %llu is %#x",
				(unsigned long long)i, s->ring[i]);
	/* and it works as rings */
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	EXPECT_EQ(1u, cq_hdr(s, 0)->prod);
	expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, 0);
}

/*
 * Every misplaced ring area is refused, and the NIC and the pool are as
 * before (a set made afterwards works; the fixture checks the pool).
 */
SRQ_TEST(misplaced_ring_area_refused)
{
	uint64_t rb = srq_ring_bytes(&small);
	const size_t v1 = offsetof(struct nvx_srq_create, ring_offset);
	int dev = self->fd, ifi = self->nic.ifindex;
	struct srq *s = &self->s;
	void *m;

	/* not page aligned */
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0,
				      RING_OFF + 64, 0));
	/* past the grant's end, partly or wholly */
	EXPECT_EQ(-ENOSPC, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0,
				      CHUNK - PAGE, 0));
	EXPECT_EQ(-ENOSPC, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0,
				      4 * CHUNK, 0));
	EXPECT_EQ(-ENOSPC, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0,
				      UINT64_MAX & ~(PAGE - 1), 0));
	/* over the buffers: at buffer 0, and straddling the last one */
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0, 0, 0));
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0,
				      BUFS * 16384ULL - PAGE, 0));
	/* the buffers after the rings, overlapping them */
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, RING_OFF,
				      RING_OFF - PAGE, 0));
	/* across two pieces: not contiguous */
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, 2 * CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0,
				      CHUNK - PAGE, 0));
	/* a ring offset without the flag */
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, CHUNK, 0, 0,
				      RING_OFF, 0));
	/* a first-version caller's struct: the rings are the set's */
	EXPECT_EQ(0, try_create(dev, ifi, &small, CHUNK, 0, 0, 0, v1));
	/* the same, with the flag: its ring offset reads 0, the buffers' */
	EXPECT_EQ(-EINVAL, try_create(dev, ifi, &small, CHUNK,
				      NVX_SRQ_RINGS_IN_GRANT, 0, 0, v1));
	/* right after the buffers, and at the piece's last pages: fine */
	EXPECT_EQ(0, try_create(dev, ifi, &small, CHUNK,
				NVX_SRQ_RINGS_IN_GRANT, 0, BUFS * 16384ULL, 0));
	EXPECT_EQ(0, try_create(dev, ifi, &small, 2 * CHUNK,
				NVX_SRQ_RINGS_IN_GRANT, 0, CHUNK - rb, 0));

	/* the set's fd maps no ring area; its buffers still map read-only */
	ASSERT_EQ(0, srq_open_in_grant(dev, s, ifi, &small, CHUNK, 0,
				       RING_OFF, -1, 0));
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENODEV, errno);
	m = mmap(NULL, s->c.layout.buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		 s->c.layout.buf_offset);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(1u, cq_wait(s, 0, 1));
	/* the set fd's buffers are the grant's pages */
	EXPECT_EQ(0, memcmp(m, s->bufs, s->c.layout.buf_bytes));
	munmap(m, s->c.layout.buf_bytes);
}

/*
 * A guest whose memory is made of 64 KiB blocks (NVX_GRANT_BLOCKS, the
 * small grants of small VMs): 16 KiB buffers and small rings fit in
 * blocks and work; a ring area across two blocks is refused.
 */
SRQ_TEST(rings_in_a_block_grant)
{
	const uint64_t block = 64 << 10, gbytes = 8 * block;
	uint64_t rb = srq_ring_bytes(&small);
	struct srq *s = &self->s, t;
	struct nvx_srq_cqe e;

	ASSERT_GE(block, rb);
	/* buffers in blocks 0-3, the rings ending past block 4's end */
	EXPECT_EQ(-EINVAL, srq_open_in_grant(self->fd, &t, self->nic.ifindex,
					     &small, gbytes, 0,
					     5 * block - PAGE, -1,
					     NVX_GRANT_BLOCKS));
	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	/* in block 4: a frame lands, read through the grant */
	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       gbytes, 0, 4 * block, 0xff,
				       NVX_GRANT_BLOCKS));
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 1500, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 1500, SPORT, 0);
}

/*
 * The instance lies in the rings in its memory: a completion ring's
 * cons far ahead, a release ring's prod far ahead, a completion
 * rewritten, releases of a buffer it does not hold. Each is counted
 * (drops_cq_full, release_garbage) and, once it writes sane values,
 * frames flow and the real releases return the buffer.
 */
SRQ_TEST(lying_instance_counted)
{
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e, copy;
	struct srq *s = &self->s;
	struct nvx_srq_cqe *slot;
	uint32_t other;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	ASSERT_EQ(0, srq_steer_all(s, 0));

	/* cons far ahead: the ring reads full, the frame is dropped */
	cq_hdr(s, 0)->cons = 0x80000000U;
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, wait_accounted(s, 1, &st));
	EXPECT_EQ(1u, st.drops_cq_full);
	cq_hdr(s, 0)->cons = 0;

	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 1));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, 1);
	/* the completion rewritten in place: the kernel never reads it */
	slot = (struct nvx_srq_cqe *)(cq_hdr(s, 0) + 1);
	copy = slot[0];
	memset(slot, 0xee, sizeof(*slot));

	/* a release ring index far ahead: garbage, nothing taken */
	rel_hdr(s, 1)->prod = 0x40000000U;
	expect_release(_metadata, s, 0, 1);
	rel_hdr(s, 1)->prod = 0;
	/* a buffer it does not hold, and more strides than it got */
	other = (copy.buf + 1) % BUFS;
	ASSERT_EQ(0, rel_push(s, 0, other, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, copy.buf, copy.strides + 1, 0));
	expect_release(_metadata, s, 2, 2);
	/* the truth returns what it holds */
	ASSERT_EQ(0, rel_push(s, 0, copy.buf, copy.strides, 0));
	expect_release(_metadata, s, 1, 0);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(rx_packets, 1u),
			 SRQ_STAT(release_garbage, 3u));
}

/*
 * The set holds the grant: with the grant's fd closed and its mapping
 * gone, frames still land (in the grant's pages, seen through the
 * buffers' read-only mapping of the set fd) until the set closes; then
 * the fixture finds the grant back in the pool.
 */
SRQ_TEST(set_outlives_grant_mapping)
{
	struct srq *s = &self->s;
	struct nvx_srq_stats st;
	const unsigned char *b;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	munmap(s->grant, s->grant_bytes);
	s->grant = MAP_FAILED;
	s->ring = MAP_FAILED;
	s->bufs = MAP_FAILED;
	b = mmap(NULL, s->c.layout.buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		 s->c.layout.buf_offset);
	ASSERT_NE(MAP_FAILED, b);
	ASSERT_EQ(0, send_frames(&self->nic, 8, 1024, SPORT));
	ASSERT_EQ(0, wait_accounted(s, 8, &st));
	EXPECT_EQ(8u, st.rx_packets);
	/* frame 0 at buffer 0 stride 0 (the set posts its buffers in order) */
	EXPECT_EQ(TAG_MAGIC, *(const uint32_t *)(b + TAG_OFF));
	munmap((void *)b, s->c.layout.buf_bytes);
}

/* NVX_SRQ_IOC_NOTIFY on queue @q with an eventfd (or -1): 0 or -errno. */
static int notify_eventfd(const struct srq *s, uint32_t q, int efd,
			  uint32_t flags)
{
	struct nvx_srq_notify n = {
		.flags = flags, .queue = q, .vector_fd = efd,
	};

	return nvx_ioctl(s->fd, NVX_SRQ_IOC_NOTIFY, &n);
}

/* The eventfd's count, read (and so reset); 0 when it was 0. */
static uint64_t efd_take(int efd)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/*
 * NVX_SRQ_NOTIFY_EVENTFD, what a VMM binds to a guest interrupt
 * (KVM_IRQFD): the eventfd counts one per burst, i.e. per completion
 * that lands in a ring the instance (here, through the grant) had
 * emptied; set while completions wait, it is signalled at once;
 * cleared, it is not signalled; replaced by another, only the new one.
 */
SRQ_TEST(eventfd_once_per_burst)
{
	struct srq *s = &self->s;
	int efd, efd2, i;

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	efd2 = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	ASSERT_LE(0, efd2);
	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, notify_eventfd(s, 0, efd, NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(1, fdinfo_num(s->fd, "queue0_notify_eventfd"));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue0_notify"));
	EXPECT_EQ(0u, efd_take(efd));

	for (i = 0; i < 3; i++) {
		/* a burst of five into an empty ring: one signal */
		ASSERT_EQ(0, send_frames(&self->nic, 5, 128, SPORT));
		ASSERT_EQ(5u, cq_wait(s, 0, 5));
		EXPECT_EQ(1u, efd_take(efd)) TH_LOG("burst %d", i);
		/* nothing more until the ring is emptied */
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 5));
		EXPECT_EQ(0u, efd_take(efd));
		cq_set_cons(s, 0, cq_prod(s, 0));
	}
	EXPECT_EQ(3, fdinfo_num(s->fd, "queue0_notified"));

	/* replaced while a completion waits: the new one, at once */
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 0));
	EXPECT_EQ(1u, efd_take(efd));
	ASSERT_EQ(0, notify_eventfd(s, 0, efd2, NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(1u, efd_take(efd2));
	cq_set_cons(s, 0, cq_prod(s, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 1));
	EXPECT_EQ(0u, efd_take(efd));
	EXPECT_EQ(1u, efd_take(efd2));

	/* cleared: nothing */
	cq_set_cons(s, 0, cq_prod(s, 0));
	ASSERT_EQ(0, notify_eventfd(s, 0, -1, NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue0_notify_eventfd"));
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 2));
	EXPECT_EQ(0u, efd_take(efd2));

	/* set again, and the eventfd's own fd closed: the set holds it */
	ASSERT_EQ(0, notify_eventfd(s, 0, efd, NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(1u, efd_take(efd));
	close(efd);
	close(efd2);
	cq_set_cons(s, 0, cq_prod(s, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 3));
	EXPECT_EQ(1, fdinfo_num(s->fd, "queue0_notify_eventfd"));
	/* the set goes with it held: the debug kernel checks for a leak */
}

/* Bad NOTIFY arguments with eventfds: EINVAL, EBADF; nothing set. */
SRQ_TEST(eventfd_bad_input)
{
	struct srq *s = &self->s;
	int efd, closed;

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	closed = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, closed);
	close(closed);
	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	/* unknown flag, queue out of range, fd below -1 */
	EXPECT_EQ(-EINVAL, notify_eventfd(s, 0, efd, 0x2));
	EXPECT_EQ(-EINVAL, notify_eventfd(s, 2, efd, NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(-EINVAL, notify_eventfd(s, 0, -2, NVX_SRQ_NOTIFY_EVENTFD));
	/* not an eventfd: /dev/nvx, the set itself */
	EXPECT_EQ(-EINVAL, notify_eventfd(s, 0, self->fd,
					  NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(-EINVAL, notify_eventfd(s, 0, s->fd,
					  NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(-EBADF, notify_eventfd(s, 0, closed,
					 NVX_SRQ_NOTIFY_EVENTFD));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue0_notify_eventfd"));
	EXPECT_EQ(0, fdinfo_num(s->fd, "queue1_notify_eventfd"));
	close(efd);
}

#define TX_OFF		(3 * CHUNK / 4)
#define TX_FRAMES	(CHUNK - 64 * 1024)

/* A packet socket on the NIC's peer: what the NIC sends arrives there. */
static int peer_socket(const struct nic *n)
{
	return packet_socket(n->peer_ifindex, 0);
}

/*
 * The next frame of ours (EtherType ETH_P_LOCAL: not the stack's IPv6
 * chatter on a new link) the peer receives within WAIT_MS: its length,
 * or -errno.
 */
static int peer_recv(int sock, unsigned char *buf, size_t size)
{
	uint64_t end = now_ms() + WAIT_MS;
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	while (now_ms() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		fl = sizeof(from);
		n = recvfrom(sock, buf, size, 0, (struct sockaddr *)&from,
			     &fl);
		if (n < 0)
			return -errno;
		if (from.sll_pkttype != PACKET_OUTGOING && n >= ETH_HDR &&
		    buf[12] == ETH_P_LOCAL >> 8 && buf[13] == (ETH_P_LOCAL & 0xff))
			return n;
	}
	return -ETIMEDOUT;
}

static int tx_ring(const struct srq *s, uint32_t entries, uint64_t off)
{
	struct nvx_srq_tx_ring r = { .entries = entries, .offset = off };

	return nvx_ioctl(s->fd, NVX_SRQ_IOC_TX_RING, &r);
}

static int tx_kick(const struct srq *s, struct nvx_srq_tx_kick *k)
{
	memset(k, 0, sizeof(*k));
	return nvx_ioctl(s->fd, NVX_SRQ_IOC_TX_KICK, k);
}

static struct nvx_srq_tx_hdr *tx_hdr(const struct srq *s)
{
	return (struct nvx_srq_tx_hdr *)(s->grant + TX_OFF);
}

/* Post a descriptor at the ring's next index (@entries of them). */
static void tx_post(const struct srq *s, uint32_t entries, uint64_t addr,
		    uint32_t len, uint32_t flags)
{
	struct nvx_srq_tx_hdr *h = tx_hdr(s);
	struct nvx_srq_txd *d = (struct nvx_srq_txd *)(h + 1);
	uint32_t prod = h->prod;

	d[prod & (entries - 1)] = (struct nvx_srq_txd){
		.addr = addr, .len = len, .flags = flags,
	};
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
}

/* A frame to the peer of @len bytes at @off of the grant, @seed's bytes. */
static void tx_frame(const struct srq *s, const struct nic *n, uint64_t off,
		     uint32_t len, unsigned int seed)
{
	unsigned char *f = s->grant + off;
	uint32_t i;

	memcpy(f, n->peer_mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, n->mac, ETH_ALEN);
	put16(f + 12, ETH_P_LOCAL);
	for (i = ETH_HDR; i < len; i++)
		f[i] = i * 7 + seed;
}

/* The peer's next frame is the @len bytes at @off of the grant. */
static void expect_peer_frame(struct __test_metadata *_metadata,
			      const struct srq *s, int sock, uint64_t off,
			      uint32_t len)
{
	static unsigned char buf[MAX_FRAME];
	int n = peer_recv(sock, buf, sizeof(buf));

	EXPECT_EQ((int)len, n);
	if (n == (int)len)
		EXPECT_EQ(0, memcmp(buf, s->grant + off, len))
			TH_LOG("frame at %llu differs", (unsigned long long)off);
}

/*
 * Frames posted in the grant reach the peer byte for byte: one across a
 * page boundary, the largest and smallest, a received frame echoed from
 * its RX buffer; a small ring wraps its indexes; cons is published and
 * the counters count.
 */
SRQ_TEST(tx_ring_sends_from_the_grant)
{
	struct srq *s = &self->s;
	struct nvx_srq_tx_kick k;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	uint64_t echo, sent_bytes = 0;
	int sock, i;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, 0xff, 0));
	sock = peer_socket(&self->nic);
	ASSERT_LE(0, sock);
	ASSERT_EQ(0, tx_ring(s, 64, TX_OFF));
	/* zeroed by the kernel, though the grant held 0xff there */
	EXPECT_EQ(0u, tx_hdr(s)->prod);
	EXPECT_EQ(0u, tx_hdr(s)->cons);
	EXPECT_EQ(64, fdinfo_num(s->fd, "tx_entries"));
	EXPECT_EQ((long long)TX_OFF, fdinfo_num(s->fd, "tx_ring"));

	/* nothing posted: nothing sent */
	ASSERT_EQ(0, tx_kick(s, &k));
	EXPECT_EQ(0u, k.sent);

	tx_frame(s, &self->nic, TX_FRAMES, 200, 1);
	tx_frame(s, &self->nic, TX_FRAMES + 2 * PAGE - 100, 300, 2);
	tx_frame(s, &self->nic, TX_FRAMES + 4 * PAGE, MAX_ETH_FRAME, 3);
	tx_frame(s, &self->nic, TX_FRAMES + 6 * PAGE, ETH_HDR, 4);
	tx_post(s, 64, TX_FRAMES, 200, 0);
	tx_post(s, 64, TX_FRAMES + 2 * PAGE - 100, 300, 0);
	tx_post(s, 64, TX_FRAMES + 4 * PAGE, MAX_ETH_FRAME, 0);
	tx_post(s, 64, TX_FRAMES + 6 * PAGE, ETH_HDR, 0);
	ASSERT_EQ(0, tx_kick(s, &k));
	EXPECT_EQ(4u, k.sent);
	EXPECT_EQ(0u, k.dropped);
	EXPECT_EQ(0u, k.stopped);
	EXPECT_EQ(0ull, k.bad);
	EXPECT_EQ(4u, tx_hdr(s)->cons);
	expect_peer_frame(_metadata, s, sock, TX_FRAMES, 200);
	expect_peer_frame(_metadata, s, sock, TX_FRAMES + 2 * PAGE - 100, 300);
	expect_peer_frame(_metadata, s, sock, TX_FRAMES + 4 * PAGE,
			  MAX_ETH_FRAME);
	expect_peer_frame(_metadata, s, sock, TX_FRAMES + 6 * PAGE, ETH_HDR);
	sent_bytes += 200 + 300 + MAX_ETH_FRAME + ETH_HDR;

	/*
	 * A received frame sent back from where it landed: its addresses
	 * swapped and its EtherType made ours in place, as an echo does.
	 */
	ASSERT_EQ(0, srq_steer_all(s, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 512, SPORT, 7));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 512, SPORT, 7);
	echo = frame_at(s, &e) - s->grant;
	memcpy(s->grant + echo, self->nic.peer_mac, ETH_ALEN);
	memcpy(s->grant + echo + ETH_ALEN, self->nic.mac, ETH_ALEN);
	put16(s->grant + echo + 12, ETH_P_LOCAL);
	tx_post(s, 64, echo, 512, 0);
	ASSERT_EQ(0, tx_kick(s, &k));
	EXPECT_EQ(1u, k.sent);
	expect_peer_frame(_metadata, s, sock, echo, 512);
	sent_bytes += 512;

	/* a full ring: all 64 posted at once, all sent */
	for (i = 0; i < 64; i++) {
		tx_frame(s, &self->nic, TX_FRAMES + i * 128, 100, 20 + i);
		tx_post(s, 64, TX_FRAMES + i * 128, 100, 0);
	}
	EXPECT_EQ(69u, tx_hdr(s)->prod);
	ASSERT_EQ(0, tx_kick(s, &k));
	EXPECT_EQ(64u, k.sent);
	EXPECT_EQ(0u, k.stopped);
	EXPECT_EQ(69u, tx_hdr(s)->cons);
	for (i = 0; i < 64; i++)
		expect_peer_frame(_metadata, s, sock, TX_FRAMES + i * 128, 100);
	sent_bytes += 64 * 100;

	/* a ring of 4 entries: 3 + 3 + 3 wrap it */
	ASSERT_EQ(0, tx_ring(s, 4, TX_OFF));
	EXPECT_EQ(0u, tx_hdr(s)->cons);
	for (i = 0; i < 9; i++) {
		tx_frame(s, &self->nic, TX_FRAMES + i * 128, 100, 10 + i);
		tx_post(s, 4, TX_FRAMES + i * 128, 100, 0);
		if (i % 3 != 2)
			continue;
		ASSERT_EQ(0, tx_kick(s, &k));
		EXPECT_EQ(3u, k.sent);
		EXPECT_EQ((uint32_t)i + 1, tx_hdr(s)->cons);
		expect_peer_frame(_metadata, s, sock, TX_FRAMES + (i - 2) * 128,
				  100);
		expect_peer_frame(_metadata, s, sock, TX_FRAMES + (i - 1) * 128,
				  100);
		expect_peer_frame(_metadata, s, sock, TX_FRAMES + i * 128, 100);
		sent_bytes += 300;
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	expect_srq_stats(&st, SRQ_STAT(tx_packets, 78u),
			 SRQ_STAT(tx_bytes, sent_bytes),
			 SRQ_STAT(rx_packets, 1u));
	EXPECT_EQ(0, fdinfo_num(s->fd, "tx_bad"));
	close(sock);
}

/*
 * Each kind of bad descriptor, and an index far ahead, stops the ring
 * before the bad entry is taken: nothing after it is sent, a kick of a
 * stopped ring sends nothing, the header and the kick say why, the set
 * counts it; setting the ring up again restarts it; receiving goes on.
 */
SRQ_TEST(tx_ring_hostile_instance)
{
	static const struct {
		uint64_t addr;
		uint32_t len, flags, why;
	} bad[] = {
		{ TX_FRAMES, 100, 1, NVX_SRQ_TX_STOP_FLAGS },
		{ TX_FRAMES, 100, 0x80000000u, NVX_SRQ_TX_STOP_FLAGS },
		{ TX_FRAMES, ETH_HDR - 1, 0, NVX_SRQ_TX_STOP_LEN },
		{ TX_FRAMES, 0, 0, NVX_SRQ_TX_STOP_LEN },
		{ TX_FRAMES, MAX_ETH_FRAME + 1, 0, NVX_SRQ_TX_STOP_LEN },
		{ TX_FRAMES, 0xffffffffu, 0, NVX_SRQ_TX_STOP_LEN },
		{ CHUNK, 100, 0, NVX_SRQ_TX_STOP_ADDR },
		{ CHUNK - 50, 100, 0, NVX_SRQ_TX_STOP_ADDR },
		{ UINT64_MAX - 10, 100, 0, NVX_SRQ_TX_STOP_ADDR },
	};
	struct srq *s = &self->s;
	struct nvx_srq_tx_kick k;
	struct nvx_srq_cqe e;
	unsigned char buf[64];
	unsigned int i;
	int sock;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	ASSERT_EQ(0, srq_steer_all(s, 0));
	sock = peer_socket(&self->nic);
	ASSERT_LE(0, sock);
	tx_frame(s, &self->nic, TX_FRAMES, 100, 1);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_EQ(0, tx_ring(s, 16, TX_OFF));
		/* a good one, the bad one, a good one after it */
		tx_post(s, 16, TX_FRAMES, 100, 0);
		tx_post(s, 16, bad[i].addr, bad[i].len, bad[i].flags);
		tx_post(s, 16, TX_FRAMES, 100, 0);
		ASSERT_EQ(0, tx_kick(s, &k));
		EXPECT_EQ(1u, k.sent) TH_LOG("bad descriptor %u", i);
		EXPECT_EQ(bad[i].why, k.stopped) TH_LOG("bad descriptor %u", i);
		EXPECT_EQ(i + 1, k.bad);
		EXPECT_EQ(bad[i].why, tx_hdr(s)->stopped);
		/* taken up to the bad one, not past it */
		EXPECT_EQ(1u, tx_hdr(s)->cons);
		expect_peer_frame(_metadata, s, sock, TX_FRAMES, 100);
		/* stopped: a kick sends nothing, the reason stays */
		ASSERT_EQ(0, tx_kick(s, &k));
		EXPECT_EQ(0u, k.sent);
		EXPECT_EQ(bad[i].why, k.stopped);
	}
	/* prod far ahead of cons */
	ASSERT_EQ(0, tx_ring(s, 16, TX_OFF));
	tx_hdr(s)->prod = 17;
	ASSERT_EQ(0, tx_kick(s, &k));
	EXPECT_EQ(0u, k.sent);
	EXPECT_EQ((uint32_t)NVX_SRQ_TX_STOP_INDEX, k.stopped);
	EXPECT_EQ(ARRAY_SIZE(bad) + 1, k.bad);
	EXPECT_EQ((long long)ARRAY_SIZE(bad) + 1,
		  fdinfo_num(s->fd, "tx_bad"));
	/* nothing else reached the peer */
	EXPECT_EQ(-ETIMEDOUT, peer_recv(sock, buf, sizeof(buf)));

	/* set up again: sends */
	ASSERT_EQ(0, tx_ring(s, 16, TX_OFF));
	EXPECT_EQ(0u, tx_hdr(s)->stopped);
	tx_post(s, 16, TX_FRAMES, 100, 0);
	ASSERT_EQ(0, tx_kick(s, &k));
	EXPECT_EQ(1u, k.sent);
	EXPECT_EQ(0u, k.stopped);
	expect_peer_frame(_metadata, s, sock, TX_FRAMES, 100);
	/* and the set receives as before */
	ASSERT_EQ(0, send_frame(&self->nic, 256, SPORT, 1));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 256, SPORT, 1);
	close(sock);
}

/*
 * The NIC deleted with frames posted: a kick says -ENXIO and takes
 * nothing (cons stays); the ring can still be removed, the set closed.
 */
SRQ_TEST(tx_ring_nic_gone)
{
	struct srq *s = &self->s;
	struct nvx_srq_tx_kick k;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	ASSERT_EQ(0, tx_ring(s, 16, TX_OFF));
	tx_frame(s, &self->nic, TX_FRAMES, 100, 1);
	tx_post(s, 16, TX_FRAMES, 100, 0);
	tx_post(s, 16, TX_FRAMES, 100, 0);
	ASSERT_EQ(0, sh("ip link del %s", self->nic.name));
	self->nic.alive = false;
	k = (struct nvx_srq_tx_kick){ .sent = 99, .dropped = 99 };
	EXPECT_EQ(-ENXIO, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX_KICK, &k));
	/* written back with the error: nothing sent, nothing dropped */
	EXPECT_EQ(0u, k.sent);
	EXPECT_EQ(0u, k.dropped);
	EXPECT_EQ(0u, tx_hdr(s)->cons);
	EXPECT_EQ(0, fdinfo_num(s->fd, "tx_cons"));
	EXPECT_EQ(0u, tx_hdr(s)->stopped);
	EXPECT_EQ(0, tx_ring(s, 0, 0));
}

/* Bad TX_RING and TX_KICK arguments: their errno; nothing set up. */
SRQ_TEST(tx_ring_bad_input)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	uint64_t rb = srq_ring_bytes(&small);
	struct nvx_srq_tx_ring r = { 0 };
	struct srq *s = &self->s;
	struct nvx_srq_tx_kick k;

	ASSERT_EQ(0, srq_open_in_grant(self->fd, s, self->nic.ifindex, &small,
				       CHUNK, 0, RING_OFF, -1, 0));
	/* no ring yet */
	EXPECT_EQ(-ENOENT, tx_kick(s, &k));
	/* fdinfo has no TX ring lines (fdinfo_num() -1: no such key) */
	EXPECT_EQ(-1, fdinfo_num(s->fd, "tx_entries"));
	/* flags */
	r.flags = 1;
	r.entries = 16;
	r.offset = TX_OFF;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX_RING, &r));
	memset(&k, 0, sizeof(k));
	k.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX_KICK, &k));
	/* entries: not a power of two, too many */
	EXPECT_EQ(-EINVAL, tx_ring(s, 3, TX_OFF));
	EXPECT_EQ(-EINVAL, tx_ring(s, NVX_SRQ_TX_MAX_ENTRIES * 2, TX_OFF));
	EXPECT_EQ(-EINVAL, tx_ring(s, 0x80000001u, TX_OFF));
	/* removing with an offset */
	EXPECT_EQ(-EINVAL, tx_ring(s, 0, TX_OFF));
	/* not page aligned */
	EXPECT_EQ(-EINVAL, tx_ring(s, 16, TX_OFF + 64));
	/* past the grant, partly, wholly, wrapping */
	EXPECT_EQ(-ENOSPC, tx_ring(s, 16, CHUNK));
	EXPECT_EQ(-ENOSPC, tx_ring(s, NVX_SRQ_TX_MAX_ENTRIES, CHUNK - PAGE));
	EXPECT_EQ(-ENOSPC, tx_ring(s, 16, UINT64_MAX & ~(PAGE - 1)));
	/* over the buffers, over the ring area */
	EXPECT_EQ(-EINVAL, tx_ring(s, 16, 0));
	EXPECT_EQ(-EINVAL, tx_ring(s, 16, (BUFS - 1) * 16384ULL));
	EXPECT_EQ(-EINVAL, tx_ring(s, 16, RING_OFF));
	EXPECT_EQ(-EINVAL, tx_ring(s, 16, (RING_OFF + rb - 1) & ~(PAGE - 1)));
	EXPECT_EQ(-ENOENT, tx_kick(s, &k));
	EXPECT_EQ(-1, fdinfo_num(s->fd, "tx_entries"));

	/* set up, then removed */
	ASSERT_EQ(0, tx_ring(s, 16, TX_OFF));
	ASSERT_EQ(0, tx_kick(s, &k));
	ASSERT_EQ(0, tx_ring(s, 0, 0));
	EXPECT_EQ(-ENOENT, tx_kick(s, &k));

	/* a set whose rings are its own (in its place on the NIC): none */
	srq_close(s);
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(-EINVAL, tx_ring(s, 16, 0));
	EXPECT_EQ(-ENOENT, tx_kick(s, &k));
}

TEST_HARNESS_MAIN
