// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "srq": shared multi-packet RX buffer queues.
 *
 * Every test gets its own software NIC pair ("ip link add NAME type
 * nvxsim": NAME and its peer NAMEp) and a pool grown by POOL_CHUNKS
 * chunks. Frames are IPv4/UDP frames sent out of the peer with an
 * AF_PACKET socket; the NIC delivers them synchronously into the set's
 * buffers, so when sendto() returns the completion is in the ring. Each
 * frame carries a tag (flow, sequence number, length) and a byte
 * pattern derived from it, so that any frame found in a buffer can be
 * checked byte for byte.
 *
 * The tests check the packing rules (strides, fillers, truncation), RSS
 * over queues sharing one pool, drops and their counters, the buffer
 * life cycle (a buffer is reused only after its last stride is
 * released; refill at the low-water mark), garbage in the release rings,
 * the set's lifetime (close, exit, NIC removal), TX, the per-queue
 * baseline, every bad parameter, and a multi-threaded stress run; then
 * the lifetime again under traffic (close, NIC removal and exit racing
 * frames), the tracepoints and the ethtool statistics. On the way out
 * the fixture stops any sender threads, disables any events it enabled
 * and checks that every grant went back to the pool.
 *
 * The whole group skips when /dev/nvx does not offer NVX_FEAT_SRQ.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <grp.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include <nvx/pool.h>
#include <nvx/srq.h>

#include "../kselftest_harness.h"
#include "nvx_pool_test.h"

#define CHUNK		(1ULL << NVX_POOL_CHUNK_SHIFT)
#define POOL_CHUNKS	16

#define ETH_HDR		14
#define IP_HDR		20
#define UDP_HDR		8
#define TAG_OFF		(ETH_HDR + IP_HDR + UDP_HDR)
#define MIN_FRAME	(TAG_OFF + (unsigned int)sizeof(struct tag))
#define MAX_ETH_FRAME	1514		/* MTU 1500 + Ethernet header */
#define MAX_FRAME	4096
#define TAG_MAGIC	0x6e767873U	/* "nvxs" */
#define SPORT		1000
#define DPORT		9000
#define POISON_BYTE	0x6b
#define ETH_P_LOCAL	0x88b5		/* IEEE local experimental */

/* How long a test waits for something that should have happened at once. */
#define WAIT_MS		2000

#define SRQ_TEST(name)	TEST_F_TIMEOUT(srq, name, 180)

/* What every test frame carries right after its UDP header. */
struct tag {
	uint32_t magic;
	uint32_t sport;
	uint32_t seq;
	uint32_t len;
};

/* The NIC pair of a test and the socket that sends from the peer. */
struct nic {
	char name[IFNAMSIZ];
	char peer[IFNAMSIZ];
	int ifindex;
	int peer_ifindex;
	unsigned char mac[ETH_ALEN];
	unsigned char peer_mac[ETH_ALEN];
	int tx;			/* AF_PACKET, sends on the peer */
	bool alive;		/* NAME exists and is ours to delete */
};

/* An SRQ set and its mappings. */
struct srq {
	int fd;
	struct nvx_srq_create c;
	unsigned char *ring;
	const unsigned char *bufs;
	uint32_t spb;		/* strides per buffer */
};

/* --- helpers: the pool ---------------------------------------------- */

/* A grant fd of at least @bytes, or -errno. */
static int grant(int fd, uint64_t bytes)
{
	struct nvx_grant_create g = {
		.flags = NVX_GRANT_CLOEXEC,
		.node = NVX_NODE_ANY,
		.bytes = bytes,
	};
	int ret = nvx_ioctl(fd, NVX_IOC_GRANT, &g);

	return ret ? ret : g.fd;
}

/* --- helpers: the NIC and frames ------------------------------------ */

/* Run a shell command built from @fmt: its exit status, or -1. */
static int __attribute__((format(printf, 1, 2))) sh(const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	if (ret == -1 || !WIFEXITED(ret))
		return -1;
	return WEXITSTATUS(ret);
}

static int get_mac(int sock, const char *name, unsigned char *mac)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(sock, SIOCGIFHWADDR, &ifr))
		return -errno;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}

static void nic_destroy(struct nic *n)
{
	if (n->tx >= 0)
		close(n->tx);
	n->tx = -1;
	if (n->alive)
		sh("ip link del %s", n->name);
	n->alive = false;
}

/*
 * Create the pair NAME/NAMEp, NAME being @prefix and the pid, bring both
 * up and open the sending socket: 0, or a negative step number
 * (everything undone). @leftover: first delete a NAME left by an earlier
 * run that died with this pid.
 */
static int nic_create_as(struct nic *n, const char *prefix, bool leftover)
{
	int one = 1;

	n->tx = -1;
	n->alive = false;
	snprintf(n->name, sizeof(n->name), "%s%u", prefix,
		 (unsigned int)getpid());
	/* NAME has at most 14 characters, as nvxsim wants */
	snprintf(n->peer, sizeof(n->peer), "%.14sp", n->name);
	if (leftover)
		sh("ip link del %s 2>/dev/null", n->name);
	if (sh("ip link add %s type nvxsim", n->name))
		return -1;
	n->alive = true;
	if (sh("ip link set %s up && ip link set %s up", n->name, n->peer))
		goto fail;
	n->ifindex = if_nametoindex(n->name);
	n->peer_ifindex = if_nametoindex(n->peer);
	if (!n->ifindex || !n->peer_ifindex)
		goto fail;
	n->tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (n->tx < 0)
		goto fail;
	/* straight to the driver: no qdisc between sendto() and the NIC */
	setsockopt(n->tx, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	if (get_mac(n->tx, n->name, n->mac) ||
	    get_mac(n->tx, n->peer, n->peer_mac))
		goto fail;
	return 0;
fail:
	nic_destroy(n);
	return -2;
}

static int nic_create(struct nic *n)
{
	return nic_create_as(n, "nvs", true);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint16_t ip_csum(const unsigned char *p, unsigned int len)
{
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static unsigned char pattern(uint32_t sport, uint32_t seq, unsigned int i)
{
	return (seq * 31 + sport * 17 + i * 7 + (i >> 8)) & 0xff;
}

/*
 * An IPv4/UDP frame of @len bytes (at least MIN_FRAME) from the peer to
 * NAME: 10.0.0.1:@sport -> 10.0.0.2:DPORT, the tag, then the pattern.
 */
static void build_frame(const struct nic *n, unsigned char *f,
			unsigned int len, uint16_t sport, uint32_t seq)
{
	struct tag t = { TAG_MAGIC, sport, seq, len };
	unsigned char *ip = f + ETH_HDR, *udp = ip + IP_HDR;
	unsigned int i;

	memcpy(f, n->mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, n->peer_mac, ETH_ALEN);
	put16(f + 12, ETH_P_IP);
	memset(ip, 0, IP_HDR);
	ip[0] = 0x45;
	put16(ip + 2, len - ETH_HDR);
	put16(ip + 4, seq);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	put32(ip + 12, 0x0a000001);
	put32(ip + 16, 0x0a000002);
	put16(ip + 10, ip_csum(ip, IP_HDR));
	put16(udp, sport);
	put16(udp + 2, DPORT);
	put16(udp + 4, len - ETH_HDR - IP_HDR);
	put16(udp + 6, 0);
	memcpy(f + TAG_OFF, &t, sizeof(t));
	for (i = MIN_FRAME; i < len; i++)
		f[i] = pattern(sport, seq, i);
}

static int send_raw(const struct nic *n, const void *f, unsigned int len)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = n->peer_ifindex,
		.sll_halen = ETH_ALEN,
	};
	ssize_t ret;

	memcpy(sll.sll_addr, n->mac, ETH_ALEN);
	ret = sendto(n->tx, f, len, 0, (struct sockaddr *)&sll, sizeof(sll));
	if (ret < 0)
		return -errno;
	return ret == len ? 0 : -EIO;
}

/* Send the test frame (@len, @sport, @seq) into NAME: 0 or -errno. */
static int send_frame(const struct nic *n, unsigned int len, uint16_t sport,
		      uint32_t seq)
{
	unsigned char f[MAX_FRAME];

	build_frame(n, f, len, sport, seq);
	return send_raw(n, f, len);
}

/* --- helpers: the set ----------------------------------------------- */

static void srq_init(struct srq *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->ring = MAP_FAILED;
	s->bufs = MAP_FAILED;
}

static void srq_unmap(struct srq *s)
{
	if (s->ring != MAP_FAILED)
		munmap(s->ring, s->c.layout.ring_bytes);
	if (s->bufs != MAP_FAILED)
		munmap((void *)s->bufs, s->c.layout.buf_bytes);
	s->ring = MAP_FAILED;
	s->bufs = MAP_FAILED;
}

static void srq_close(struct srq *s)
{
	srq_unmap(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static int srq_map(struct srq *s)
{
	const struct nvx_srq_layout *l = &s->c.layout;

	s->ring = mmap(NULL, l->ring_bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED, s->fd, 0);
	if (s->ring == MAP_FAILED)
		return -errno;
	s->bufs = mmap(NULL, l->buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		       l->buf_offset);
	if (s->bufs == MAP_FAILED)
		return -errno;
	s->spb = s->c.params.buf_size / s->c.params.stride_size;
	return 0;
}

/*
 * Create a set on @ifindex with a grant of its own (closed again: the set
 * holds its own reference), and map it: 0 or -errno.
 */
static int srq_open(int dev, struct srq *s, int ifindex,
		    const struct nvx_srq_params *p, uint32_t flags)
{
	uint64_t bytes;
	int g, ret;

	srq_init(s);
	s->c.flags = flags;
	s->c.ifindex = ifindex;
	s->c.params = *p;
	bytes = (uint64_t)(p->nr_bufs ?: NVX_SRQ_DEF_NR_BUFS) *
		(p->buf_size ?: NVX_SRQ_DEF_BUF_SIZE);
	g = grant(dev, bytes);
	if (g < 0)
		return g;
	s->c.grant_fd = g;
	ret = nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, &s->c);
	close(g);
	if (ret)
		return ret;
	s->fd = s->c.fd;
	ret = srq_map(s);
	if (ret)
		srq_close(s);
	return ret;
}

static struct nvx_srq_ring *cq_hdr(const struct srq *s, uint32_t q)
{
	return (struct nvx_srq_ring *)(s->ring + s->c.layout.cq_offset +
				       q * s->c.layout.cq_bytes);
}

static struct nvx_srq_cqe *cq_at(const struct srq *s, uint32_t q,
				 uint32_t i)
{
	struct nvx_srq_cqe *e = (struct nvx_srq_cqe *)(cq_hdr(s, q) + 1);

	return e + (i & (s->c.params.cq_entries - 1));
}

static struct nvx_srq_ring *rel_hdr(const struct srq *s, uint32_t r)
{
	return (struct nvx_srq_ring *)(s->ring + s->c.layout.rel_offset +
				       r * s->c.layout.rel_bytes);
}

static struct nvx_srq_rel *rel_at(const struct srq *s, uint32_t r,
				  uint32_t i)
{
	struct nvx_srq_rel *e = (struct nvx_srq_rel *)(rel_hdr(s, r) + 1);

	return e + (i & (s->c.params.rel_entries - 1));
}

static uint32_t cq_prod(const struct srq *s, uint32_t q)
{
	return __atomic_load_n(&cq_hdr(s, q)->prod, __ATOMIC_ACQUIRE);
}

static uint32_t cq_cons(const struct srq *s, uint32_t q)
{
	return __atomic_load_n(&cq_hdr(s, q)->cons, __ATOMIC_RELAXED);
}

static void cq_set_cons(const struct srq *s, uint32_t q, uint32_t cons)
{
	__atomic_store_n(&cq_hdr(s, q)->cons, cons, __ATOMIC_RELEASE);
}

/* Completions waiting in queue @q. */
static uint32_t cq_pending(const struct srq *s, uint32_t q)
{
	return cq_prod(s, q) - cq_cons(s, q);
}

/* Wait up to WAIT_MS for @n completions in queue @q: how many there are. */
static uint32_t cq_wait(const struct srq *s, uint32_t q, uint32_t n)
{
	uint64_t end = now_ms() + WAIT_MS;

	while (cq_pending(s, q) < n && now_ms() < end)
		usleep(1000);
	return cq_pending(s, q);
}

/* Take the next completion of queue @q, if there is one. */
static bool cq_pop(const struct srq *s, uint32_t q, struct nvx_srq_cqe *e)
{
	uint32_t cons = cq_cons(s, q);

	if (cq_prod(s, q) == cons)
		return false;
	*e = *cq_at(s, q, cons);
	cq_set_cons(s, q, cons + 1);
	return true;
}

/* The next completion of queue @q, waiting for it: 0 or -ETIMEDOUT. */
static int cq_next(const struct srq *s, uint32_t q, struct nvx_srq_cqe *e)
{
	if (cq_wait(s, q, 1) < 1)
		return -ETIMEDOUT;
	cq_pop(s, q, e);
	return 0;
}

/* Queue one release entry in ring @r: 0, or -ENOSPC when it is full. */
static int rel_push(const struct srq *s, uint32_t r, uint32_t buf,
		    uint32_t strides, uint16_t flags)
{
	struct nvx_srq_ring *h = rel_hdr(s, r);
	uint32_t prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
	uint32_t cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);
	struct nvx_srq_rel *e;

	if (prod - cons >= s->c.params.rel_entries)
		return -ENOSPC;
	e = rel_at(s, r, prod);
	e->buf = buf;
	e->strides = strides;
	e->flags = flags;
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}

static int srq_release(const struct srq *s, struct nvx_srq_release *out)
{
	struct nvx_srq_release r = { 0 };
	int ret = nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &r);

	if (out)
		*out = r;
	return ret;
}

/* rel_push(), draining the rings through NVX_SRQ_IOC_RELEASE when full. */
static int rel_give(const struct srq *s, uint32_t r, uint32_t buf,
		    uint32_t strides)
{
	int tries, ret = 0;

	for (tries = 0; tries < 1000; tries++) {
		ret = rel_push(s, r, buf, strides, 0);
		if (ret != -ENOSPC)
			return ret;
		ret = srq_release(s, NULL);
		if (ret)
			return ret;
	}
	return ret;
}

static int srq_stats(const struct srq *s, uint32_t q, struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = q;
	return nvx_ioctl(s->fd, NVX_SRQ_IOC_STATS, st);
}

static int srq_steer(const struct srq *s, const uint16_t *table, uint32_t n)
{
	struct nvx_srq_steer st = {
		.nr_entries = n,
		.table = (uintptr_t)table,
	};

	return nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &st);
}

/* Wait until @sent frames are accounted for (landed or dropped). */
static int wait_accounted(const struct srq *s, uint64_t sent,
			  struct nvx_srq_stats *st)
{
	uint64_t end = now_ms() + WAIT_MS;
	int ret;

	for (;;) {
		ret = srq_stats(s, NVX_SRQ_ALL_QUEUES, st);
		if (ret)
			return ret;
		if (st->rx_packets + st->drops_no_buf + st->drops_cq_full >=
		    sent)
			return 0;
		if (now_ms() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/* Wait until no set is attached to @ifindex: 0, or INFO's last answer. */
static int wait_detached(int dev, int ifindex)
{
	struct nvx_srq_info info;
	uint64_t end = now_ms() + WAIT_MS;
	int ret;

	for (;;) {
		memset(&info, 0, sizeof(info));
		info.ifindex = ifindex;
		ret = nvx_ioctl(dev, NVX_IOC_SRQ_INFO, &info);
		if (ret == -ENOENT)
			return 0;
		if (now_ms() > end)
			return ret;
		usleep(1000);
	}
}

static const unsigned char *frame_at(const struct srq *s,
				     const struct nvx_srq_cqe *e)
{
	return s->bufs + (size_t)e->buf * s->c.params.buf_size +
	       (size_t)e->stride * s->c.params.stride_size;
}

static uint32_t strides_for(const struct srq *s, uint32_t len)
{
	return (len + s->c.params.stride_size - 1) / s->c.params.stride_size;
}

/* Do the bytes at @e's place hold the frame (@len, @sport, @seq)? */
static bool bytes_match(const struct nic *n, const struct srq *s,
			const struct nvx_srq_cqe *e, unsigned int len,
			uint16_t sport, uint32_t seq)
{
	unsigned char f[MAX_FRAME];

	if (e->buf >= s->c.params.nr_bufs)
		return false;
	build_frame(n, f, len, sport, seq);
	return !memcmp(frame_at(s, e), f, e->len < len ? e->len : len);
}

/*
 * Is @e a complete, untruncated test frame? Its tag goes to @t. Used
 * where the test does not know which frame comes next.
 */
static bool cqe_frame_ok(const struct nic *n, const struct srq *s,
			 const struct nvx_srq_cqe *e, struct tag *t)
{
	const struct nvx_srq_params *p = &s->c.params;

	if (e->flags || e->pad || e->buf >= p->nr_bufs ||
	    e->stride + e->strides > s->spb || e->len < MIN_FRAME ||
	    e->len > MAX_FRAME || e->strides != strides_for(s, e->len))
		return false;
	memcpy(t, frame_at(s, e) + TAG_OFF, sizeof(*t));
	if (t->magic != TAG_MAGIC || t->len != e->len)
		return false;
	return bytes_match(n, s, e, e->len, t->sport, t->seq);
}

/* The completion is the frame (@len, @sport, @seq), whole and in place. */
static bool expect_frame(struct __test_metadata *_metadata,
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

/* What a queue is filling, to check that completions follow the packing. */
struct qtrack {
	int64_t cur;		/* buffer being filled; -1: none yet */
	uint32_t next;		/* its first unused stride */
};

static void track_init(struct qtrack *t, unsigned int n)
{
	while (n--) {
		t[n].cur = -1;
		t[n].next = 0;
	}
}

/*
 * Does @e follow what the queue did before? A queue fills its buffer
 * stride after stride, closes it with a filler when a frame does not
 * fit, and starts a buffer only when the one before is complete.
 */
static bool track(struct qtrack *t, const struct nvx_srq_cqe *e, uint32_t spb)
{
	if (e->flags & NVX_SRQ_CQE_FILLER) {
		if (t->cur < 0 || e->buf != t->cur || e->stride != t->next ||
		    !e->strides || e->len || t->next + e->strides != spb)
			return false;
		t->next = spb;
		return true;
	}
	if (t->cur < 0 || t->next == spb) {
		t->cur = e->buf;
		t->next = 0;
	} else if (e->buf != t->cur) {
		return false;
	}
	if (e->stride != t->next || !e->strides || t->next + e->strides > spb)
		return false;
	t->next += e->strides;
	return true;
}

/* An ifindex that names no device. */
static int unused_ifindex(void)
{
	char name[IFNAMSIZ];
	int i;

	for (i = 1000000; i < 1001000; i++)
		if (!if_indextoname(i, name))
			return i;
	return 0x7ffffff0;
}

/* NVX_IOC_SRQ_QUERY of the set on @ifindex, all queues: 0 or -errno. */
static int srq_query(int dev, int ifindex, struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = NVX_SRQ_ALL_QUEUES;
	st->ifindex = ifindex;
	return nvx_ioctl(dev, NVX_IOC_SRQ_QUERY, st);
}

/*
 * Close an open, mapped set: the fd first when @fd_first (the last
 * munmap() then drops the last reference), else the mappings first
 * (close() drops it). 0, or the first -errno.
 */
static int srq_shut(struct srq *s, bool fd_first)
{
	int ret = 0;

	if (fd_first && close(s->fd))
		ret = -errno;
	if (munmap(s->ring, s->c.layout.ring_bytes) && !ret)
		ret = -errno;
	if (munmap((void *)s->bufs, s->c.layout.buf_bytes) && !ret)
		ret = -errno;
	if (!fd_first && close(s->fd) && !ret)
		ret = -errno;
	s->fd = -1;
	s->ring = MAP_FAILED;
	s->bufs = MAP_FAILED;
	return ret;
}

/* Wait up to @ms for a completion in any queue of @s. */
static bool cq_wait_any(const struct srq *s, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	uint32_t q;

	for (;;) {
		for (q = 0; q < s->c.params.nr_queues; q++)
			if (cq_pending(s, q))
				return true;
		if (now_ms() >= end)
			return false;
		usleep(200);
	}
}

/* --- helpers: background traffic ------------------------------------ */

#define BLAST_THREADS	2
#define BLAST_FLOWS	64		/* per sender */
#define BLAST_SPORT	3000
#define BLAST_LEN	64

/* A thread that sends BLAST_LEN-byte frames into the NIC until told. */
struct blaster {
	const struct nic *n;
	const int *stop;
	int id;
	bool running;
	pthread_t th;
	uint64_t sent;
	uint64_t refused;		/* ENOBUFS or EAGAIN: tried again */
	int err;
};

/* The senders of a test; the fixture stops them on the way out. */
struct blast {
	int stop;
	struct blaster t[BLAST_THREADS];
};

static void *blaster_thread(void *arg)
{
	struct blaster *b = arg;
	unsigned char f[BLAST_LEN];
	uint32_t seq = 0;
	int ret;

	while (!__atomic_load_n(b->stop, __ATOMIC_RELAXED)) {
		build_frame(b->n, f, sizeof(f), BLAST_SPORT +
			    b->id * BLAST_FLOWS + seq % BLAST_FLOWS, seq);
		ret = send_raw(b->n, f, sizeof(f));
		if (ret == -ENOBUFS || ret == -EAGAIN) {
			b->refused++;
			sched_yield();
			continue;
		}
		if (ret) {
			b->err = ret;
			break;
		}
		b->sent++;
		seq++;
	}
	return NULL;
}

/* Stop and join the senders that run; harmless when none does. */
static void blast_stop(struct blast *b)
{
	int i;

	__atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < BLAST_THREADS; i++) {
		if (b->t[i].running)
			pthread_join(b->t[i].th, NULL);
		b->t[i].running = false;
	}
}

/* Start BLAST_THREADS senders into @n: 0, or -errno with none running. */
static int blast_start(struct blast *b, const struct nic *n)
{
	int i, ret;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < BLAST_THREADS; i++) {
		b->t[i].n = n;
		b->t[i].stop = &b->stop;
		b->t[i].id = i;
		ret = pthread_create(&b->t[i].th, NULL, blaster_thread,
				     &b->t[i]);
		if (ret) {
			blast_stop(b);
			return -ret;
		}
		b->t[i].running = true;
	}
	return 0;
}

/* Frames the (stopped) senders sent; the first error of one in @err. */
static uint64_t blast_sent(const struct blast *b, uint64_t *refused,
			   int *err)
{
	uint64_t sent = 0;
	int i;

	*refused = 0;
	*err = 0;
	for (i = 0; i < BLAST_THREADS; i++) {
		sent += b->t[i].sent;
		*refused += b->t[i].refused;
		if (!*err)
			*err = b->t[i].err;
	}
	return sent;
}

/* --- helpers: tracepoints ------------------------------------------- */

static const char *const srq_events[] = {
	"nvx_srq_filler", "nvx_srq_drop", "nvx_srq_refill",
	"nvx_srq_buf_return",
};

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The tracefs directory (with its '/') that has the SRQ events, or NULL. */
static const char *srq_tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing/", "/sys/kernel/debug/tracing/",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path),
			 "%sevents/nvx/nvx_srq_filler/enable", dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
	}
	return NULL;
}

/* Write @val to every SRQ event's enable file: 0, or the first -errno. */
static int srq_trace_enable(const char *dir, const char *val)
{
	char path[128];
	unsigned int i;
	int ret, first = 0;

	for (i = 0; i < ARRAY_SIZE(srq_events); i++) {
		snprintf(path, sizeof(path), "%sevents/nvx/%s/enable", dir,
			 srq_events[i]);
		ret = write_str(path, val);
		if (ret && !first)
			first = ret;
	}
	return first;
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
	struct nvx_features f = { 0 };
	int ret;

	srq_init(&self->s);
	srq_init(&self->s2);
	self->nic.tx = -1;
	self->nic2.tx = -1;
	self->nic2.alive = false;
	memset(&self->blast, 0, sizeof(self->blast));
	self->tracefs = NULL;
	/* nvx kernels have /dev/nvx: no device is a failure, not a skip */
	self->fd = nvx_open();
	ASSERT_LE(0, self->fd) TH_LOG("open " NVX_DEV ": %s",
				      strerror(-self->fd));
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_FEATURES, &f));
	if (!(f.features & NVX_FEAT_SRQ))
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
	EXPECT_EQ(self->start.grants_live, s.grants_live);
	EXPECT_EQ(self->start.granted_bytes, s.granted_bytes);
	EXPECT_EQ(self->start.total_bytes + self->grown, s.total_bytes);
	EXPECT_EQ(s.total_bytes, s.clean_bytes + s.granted_bytes);
	EXPECT_EQ(0, pool_resize(self->fd, NVX_IOC_POOL_SHRINK, self->grown,
				 NVX_NODE_ANY, NULL));
	close(self->fd);
}

/* --- packing -------------------------------------------------------- */

/*
 * A new set: its parameters come back with the defaults, its layout is
 * sane, its counters are zero; the first frame lands at stride 0 of a
 * buffer with its length and bytes; STATS, QUERY and INFO agree.
 */
SRQ_TEST(one_frame)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	const struct nvx_srq_params *cp = &self->s.c.params;
	const struct nvx_srq_layout *l = &self->s.c.layout;
	struct nvx_srq_stats st, qst;
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	long pg = sysconf(_SC_PAGESIZE);

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(0u, cp->flags);
	EXPECT_EQ(1u, cp->nr_queues);
	EXPECT_EQ(NVX_SRQ_DEF_NR_BUFS, cp->nr_bufs);
	EXPECT_EQ(NVX_SRQ_DEF_BUF_SIZE, cp->buf_size);
	EXPECT_EQ(NVX_SRQ_DEF_STRIDE, cp->stride_size);
	EXPECT_EQ(NVX_SRQ_DEF_CQ_ENTRIES, cp->cq_entries);
	EXPECT_EQ(NVX_SRQ_DEF_REL_ENTRIES, cp->rel_entries);
	EXPECT_EQ(1u, cp->nr_rel_rings);
	EXPECT_EQ(NVX_SRQ_DEF_NR_BUFS * 64 / 4, cp->low_water);
	EXPECT_EQ(0u, cp->pad);
	EXPECT_LE(0, s->c.fd);

	/* the layout holds every ring and buffer, in whole pages */
	EXPECT_EQ(0u, l->ring_bytes % pg);
	EXPECT_EQ(0u, l->buf_bytes % pg);
	EXPECT_EQ(0u, l->buf_offset % pg);
	EXPECT_NE(0u, l->buf_offset);
	EXPECT_LE(sizeof(struct nvx_srq_ring) +
		  cp->cq_entries * sizeof(struct nvx_srq_cqe), l->cq_bytes);
	EXPECT_LE(sizeof(struct nvx_srq_ring) +
		  cp->rel_entries * sizeof(struct nvx_srq_rel), l->rel_bytes);
	EXPECT_LE(l->cq_offset + cp->nr_queues * l->cq_bytes, l->ring_bytes);
	EXPECT_LE(l->rel_offset + cp->nr_rel_rings * l->rel_bytes,
		  l->ring_bytes);
	EXPECT_TRUE(l->cq_offset + cp->nr_queues * l->cq_bytes <=
		    l->rel_offset ||
		    l->rel_offset + cp->nr_rel_rings * l->rel_bytes <=
		    l->cq_offset);
	EXPECT_LE((uint64_t)cp->nr_bufs * cp->buf_size, l->buf_bytes);
	EXPECT_EQ(0u, cq_hdr(s, 0)->prod);
	EXPECT_EQ(0u, cq_hdr(s, 0)->cons);
	EXPECT_EQ(0u, rel_hdr(s, 0)->prod);
	EXPECT_EQ(0u, rel_hdr(s, 0)->cons);

	/* nothing received yet, every buffer accounted for */
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ((uint32_t)self->nic.ifindex, st.ifindex);
	EXPECT_EQ(1u, st.nr_queues);
	EXPECT_EQ(0u, st.rx_packets);
	EXPECT_EQ(0u, st.rx_strides);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(0u, st.released + st.release_garbage + st.refills);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(cp->nr_bufs, st.bufs_posted + st.bufs_filling);
	EXPECT_LE(st.posted_strides, cp->nr_bufs * s->spb);
	EXPECT_LE((cp->nr_bufs - 1) * s->spb, st.posted_strides);

	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	EXPECT_EQ(1u, cq_prod(s, 0));
	EXPECT_EQ(0, e.stride);
	EXPECT_EQ(1, e.strides);
	EXPECT_EQ(100u, e.len);
	expect_frame(_metadata, &self->nic, s, &e, 100, SPORT, 0);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.rx_packets);
	EXPECT_EQ(100u, st.rx_bytes);
	EXPECT_EQ(1u, st.rx_strides);
	EXPECT_EQ(0u, st.fillers + st.truncated);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(cp->nr_bufs, st.bufs_posted + st.bufs_filling + st.bufs_held);
	ASSERT_EQ(0, srq_stats(s, 0, &qst));
	EXPECT_EQ(1u, qst.rx_packets);
	EXPECT_EQ(100u, qst.rx_bytes);

	/* the same numbers through /dev/nvx */
	memset(&qst, 0, sizeof(qst));
	qst.queue = NVX_SRQ_ALL_QUEUES;
	qst.ifindex = self->nic.ifindex;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &qst));
	EXPECT_EQ(1u, qst.rx_packets);
	EXPECT_EQ(100u, qst.rx_bytes);
	EXPECT_EQ(1u, qst.nr_queues);

	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	EXPECT_EQ(0, memcmp(&info.params, cp, sizeof(*cp)));
	EXPECT_EQ((uint32_t)getpid(), info.owner);
	EXPECT_EQ(0u, info.pad);
}

/* 64 frames of up to 256 bytes fill one 16 KiB buffer, stride by stride. */
SRQ_TEST(small_frames_share_buffer)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_cqe e[64], next;
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	unsigned int len[64];
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 64; i++) {
		len[i] = i == 0 ? 256 : 64 + (i * 37) % 193;
		ASSERT_EQ(0, send_frame(&self->nic, len[i], SPORT, i));
	}
	ASSERT_EQ(64u, cq_wait(s, 0, 64));
	for (i = 0; i < 64; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		EXPECT_EQ(e[0].buf, e[i].buf);
		EXPECT_EQ(i, e[i].stride);
		EXPECT_EQ(1, e[i].strides);
		expect_frame(_metadata, &self->nic, s, &e[i], len[i], SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(64u, st.rx_packets);
	EXPECT_EQ(64u, st.rx_strides);
	EXPECT_EQ(0u, st.fillers);
	/* every stride filled: the buffer waits for its releases */
	EXPECT_EQ(1u, st.bufs_held);
	EXPECT_EQ(0u, st.bufs_filling);

	/* the buffer was full to the last stride: no filler, a new buffer */
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 64));
	ASSERT_EQ(0, cq_next(s, 0, &next));
	EXPECT_EQ(0, next.flags);
	EXPECT_NE(e[0].buf, next.buf);
	EXPECT_EQ(0, next.stride);
	expect_frame(_metadata, &self->nic, s, &next, 100, SPORT, 64);
	/* and the frames before are untouched */
	for (i = 0; i < 64; i++)
		EXPECT_TRUE(bytes_match(&self->nic, s, &e[i], len[i], SPORT, i));
}

/* A 1500-byte frame takes 6 strides; frames pack right behind it. */
SRQ_TEST(mtu_frame_six_strides)
{
	static const unsigned int len[] = { 1500, MAX_ETH_FRAME, 257, 256 };
	static const unsigned int stride[] = { 0, 6, 12, 14 };
	static const unsigned int strides[] = { 6, 6, 2, 1 };
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_cqe e[4];
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, send_frame(&self->nic, len[i], SPORT, i));
	ASSERT_EQ(4u, cq_wait(s, 0, 4));
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		EXPECT_EQ(e[0].buf, e[i].buf);
		EXPECT_EQ(stride[i], e[i].stride);
		EXPECT_EQ(strides[i], e[i].strides);
		expect_frame(_metadata, &self->nic, s, &e[i], len[i], SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(15u, st.rx_strides);
	EXPECT_EQ(1500u + MAX_ETH_FRAME + 257 + 256, st.rx_bytes);
}

/*
 * 60 small frames leave 4 strides; a 1500-byte frame does not fit: a
 * filler closes the buffer and the frame starts the next one. The
 * filler's strides are the kernel's to release, not the instance's.
 */
SRQ_TEST(filler_at_buffer_end)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e, f;
	struct srq *s = &self->s;
	uint32_t a = 0;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 60; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 200, SPORT, i));
	ASSERT_EQ(0, send_frame(&self->nic, 1500, SPORT, 60));
	ASSERT_EQ(62u, cq_wait(s, 0, 62));
	for (i = 0; i < 60; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		if (!i)
			a = e.buf;
		EXPECT_EQ(a, e.buf);
		EXPECT_EQ(i, e.stride);
		expect_frame(_metadata, &self->nic, s, &e, 200, SPORT, i);
	}
	ASSERT_TRUE(cq_pop(s, 0, &f));
	EXPECT_EQ(NVX_SRQ_CQE_FILLER, f.flags);
	EXPECT_EQ(a, f.buf);
	EXPECT_EQ(60, f.stride);
	EXPECT_EQ(4, f.strides);
	EXPECT_EQ(0u, f.len);
	EXPECT_EQ(0, f.pad);
	ASSERT_TRUE(cq_pop(s, 0, &e));
	EXPECT_NE(a, e.buf);
	EXPECT_EQ(0, e.stride);
	EXPECT_EQ(6, e.strides);
	expect_frame(_metadata, &self->nic, s, &e, 1500, SPORT, 60);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(61u, st.rx_packets);
	EXPECT_EQ(1u, st.fillers);
	EXPECT_EQ(70u, st.rx_strides);
	EXPECT_EQ(1u, st.bufs_held);
	EXPECT_EQ(1u, st.bufs_filling);

	/* the 60 frame strides in one entry; the filler's are not ours */
	ASSERT_EQ(0, rel_push(s, 0, a, 60, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(1u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
	ASSERT_EQ(0, rel_push(s, 0, a, 4, 0));
	/* 7 strides of a buffer that has 6 filled */
	ASSERT_EQ(0, rel_push(s, 0, e.buf, 7, 0));
	ASSERT_EQ(0, rel_push(s, 0, e.buf, 6, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(3u, rel.released);
	EXPECT_EQ(2u, rel.garbage);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(2u, st.release_garbage);
	EXPECT_EQ(4u, st.released);
}

/*
 * With 2 KiB buffers, a 3000-byte frame (the peer's MTU raised) does
 * not fit in any buffer: the partly used buffer is closed by a filler,
 * and the frame takes a whole fresh buffer, cut to 2048 bytes.
 */
SRQ_TEST(truncated_frame)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16,
		.buf_size = 2048, .stride_size = 256,
	};
	struct nvx_srq_cqe a, f, t, c;
	struct nvx_srq_stats st;
	struct srq *s = &self->s;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(8u, s->spb);
	if (sh("ip link set %s mtu 4000", self->nic.peer))
		SKIP(return, "the peer's MTU cannot be raised to 4000");
	/* in case the NIC checks its own MTU on receive as well */
	sh("ip link set %s mtu 4000 2>/dev/null", self->nic.name);

	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 3000, SPORT, 1));
	ASSERT_EQ(0, send_frame(&self->nic, 100, SPORT, 2));
	ASSERT_EQ(4u, cq_wait(s, 0, 4));
	ASSERT_TRUE(cq_pop(s, 0, &a));
	ASSERT_TRUE(cq_pop(s, 0, &f));
	ASSERT_TRUE(cq_pop(s, 0, &t));
	ASSERT_TRUE(cq_pop(s, 0, &c));

	EXPECT_EQ(0, a.stride);
	expect_frame(_metadata, &self->nic, s, &a, 100, SPORT, 0);
	EXPECT_EQ(NVX_SRQ_CQE_FILLER, f.flags);
	EXPECT_EQ(a.buf, f.buf);
	EXPECT_EQ(1, f.stride);
	EXPECT_EQ(7, f.strides);

	EXPECT_EQ(NVX_SRQ_CQE_TRUNCATED, t.flags);
	EXPECT_NE(a.buf, t.buf);
	EXPECT_EQ(0, t.stride);
	EXPECT_EQ(8, t.strides);
	EXPECT_EQ(2048u, t.len);
	EXPECT_TRUE(bytes_match(&self->nic, s, &t, 3000, SPORT, 1));

	EXPECT_NE(a.buf, c.buf);
	EXPECT_NE(t.buf, c.buf);
	EXPECT_EQ(0, c.stride);
	expect_frame(_metadata, &self->nic, s, &c, 100, SPORT, 2);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(3u, st.rx_packets);
	EXPECT_EQ(1u, st.truncated);
	EXPECT_EQ(1u, st.fillers);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
}

/* --- RSS ------------------------------------------------------------ */

#define NR_FLOWS	256

/*
 * Pop every completion of @s's queues; check each frame and the packing
 * (@t: what each queue was filling), record each flow's queue in @flow_q
 * (-1: not seen yet; a flow seen on another queue than before is an
 * error) and which queue holds each buffer in @buf_q. Returns the number
 * of frames, or -1 on an error.
 */
static int drain_flows(struct __test_metadata *_metadata, const struct nic *n,
		       const struct srq *s, struct qtrack *t, int *flow_q,
		       int *buf_q, unsigned int *per_q)
{
	struct nvx_srq_cqe e;
	struct tag tag;
	uint32_t q;
	int frames = 0, bad = 0, f;

	for (q = 0; q < s->c.params.nr_queues; q++) {
		per_q[q] = 0;
		while (cq_pop(s, q, &e)) {
			if (!track(&t[q], &e, s->spb)) {
				TH_LOG("queue %u: misplaced: buf %u stride %u+%u flags %#x",
				       q, e.buf, e.stride, e.strides, e.flags);
				bad++;
			}
			if (e.buf < s->c.params.nr_bufs) {
				if (buf_q[e.buf] >= 0 && buf_q[e.buf] != (int)q) {
					TH_LOG("buffer %u on queues %d and %u",
					       e.buf, buf_q[e.buf], q);
					bad++;
				}
				buf_q[e.buf] = q;
			}
			if (e.flags & NVX_SRQ_CQE_FILLER)
				continue;
			if (!cqe_frame_ok(n, s, &e, &tag)) {
				TH_LOG("queue %u: bad frame in buffer %u stride %u",
				       q, e.buf, e.stride);
				bad++;
				continue;
			}
			f = tag.sport - SPORT;
			if (f < 0 || f >= NR_FLOWS) {
				bad++;
				continue;
			}
			if (flow_q[f] >= 0 && flow_q[f] != (int)q) {
				TH_LOG("flow %d on queues %d and %u", f,
				       flow_q[f], q);
				bad++;
			}
			flow_q[f] = q;
			per_q[q]++;
			frames++;
		}
	}
	return bad ? -1 : frames;
}

static void fill(int *a, int n, int v)
{
	while (n--)
		a[n] = v;
}

/*
 * 256 flows over 4 queues: every queue gets frames, a flow stays on its
 * queue, all buffers come from the one pool and no buffer serves two
 * queues; per-queue and total counters agree.
 */
SRQ_TEST(rss_spreads_flows)
{
	struct nvx_srq_params p = { .nr_queues = 4 };
	int flow_q[NR_FLOWS], buf_q[NVX_SRQ_DEF_NR_BUFS];
	struct nvx_srq_stats st, qst;
	struct srq *s = &self->s;
	unsigned int per_q[4], q;
	struct qtrack t[4];
	uint64_t sum = 0;
	int i, round;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(4u, s->c.params.nr_rel_rings);
	track_init(t, 4);
	fill(flow_q, NR_FLOWS, -1);
	fill(buf_q, NVX_SRQ_DEF_NR_BUFS, -1);
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NR_FLOWS; i++)
			ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i,
						round));
		ASSERT_EQ(0, wait_accounted(s, (round + 1) * NR_FLOWS, &st));
		EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
						flow_q, buf_q, per_q));
		for (q = 0; q < 4; q++)
			EXPECT_LT(0u, per_q[q]) TH_LOG("queue %u got nothing",
						       q);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(2u * NR_FLOWS, st.rx_packets);
	EXPECT_EQ(4u, st.nr_queues);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(NVX_SRQ_DEF_NR_BUFS,
		  st.bufs_posted + st.bufs_filling + st.bufs_held);
	EXPECT_LE(st.bufs_filling, 4u);
	for (q = 0; q < 4; q++) {
		ASSERT_EQ(0, srq_stats(s, q, &qst));
		EXPECT_EQ(qst.rx_packets, cq_prod(s, q));
		sum += qst.rx_packets;
	}
	EXPECT_EQ(st.rx_packets, sum);
	EXPECT_EQ(-EINVAL, srq_stats(s, 4, &qst));
	EXPECT_EQ(-EINVAL, srq_stats(s, NVX_SRQ_MAX_QUEUES, &qst));
}

/*
 * STEER replaces the indirection table: all flows to queue 2, then
 * entry i to queue i % 2 (a flow that went to queue q with the default
 * table, entry i to i % 4, now goes to q % 2). Bad tables change nothing.
 */
SRQ_TEST(steer_table)
{
	struct nvx_srq_params p = { .nr_queues = 4 };
	int flow_q[NR_FLOWS], q0[NR_FLOWS], buf_q[NVX_SRQ_DEF_NR_BUFS];
	uint16_t table[NVX_SRQ_RSS_ENTRIES + 1];
	struct nvx_srq_steer bad = { .nr_entries = NVX_SRQ_RSS_ENTRIES };
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	unsigned int per_q[4];
	struct qtrack t[4];
	int i, round, sent = 0;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	fill(buf_q, NVX_SRQ_DEF_NR_BUFS, -1);
	track_init(t, 4);

	/* the default table: remember each flow's queue */
	fill(q0, NR_FLOWS, -1);
	for (i = 0; i < NR_FLOWS; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 0));
	sent += NR_FLOWS;
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	ASSERT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t, q0,
					buf_q, per_q));

	/* bad tables */
	for (i = 0; i <= NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = 2;
	bad.table = (uintptr_t)table;
	bad.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &bad));
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES - 1));
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES + 1));
	EXPECT_EQ(-EINVAL, srq_steer(s, table, 0));
	EXPECT_EQ(-EFAULT, srq_steer(s, (uint16_t *)8, NVX_SRQ_RSS_ENTRIES));
	table[77] = 4;
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	table[77] = 0xffff;
	EXPECT_EQ(-EINVAL, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	table[77] = 2;

	/* the old table still holds */
	for (i = 0; i < NR_FLOWS; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 1));
	sent += NR_FLOWS;
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	fill(flow_q, NR_FLOWS, -1);
	EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
					flow_q, buf_q, per_q));
	EXPECT_EQ(0, memcmp(flow_q, q0, sizeof(q0)));

	/* everything to queue 2 */
	ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
	for (i = 0; i < NR_FLOWS; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i, 2));
	sent += NR_FLOWS;
	ASSERT_EQ(0, wait_accounted(s, sent, &st));
	EXPECT_EQ(0u, cq_pending(s, 0) + cq_pending(s, 1) + cq_pending(s, 3));
	fill(flow_q, NR_FLOWS, -1);
	EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
					flow_q, buf_q, per_q));
	EXPECT_EQ(NR_FLOWS, per_q[2]);

	/* entry i to queue i % 2 */
	for (round = 3; round < 5; round++) {
		for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
			table[i] = i % 2;
		ASSERT_EQ(0, srq_steer(s, table, NVX_SRQ_RSS_ENTRIES));
		for (i = 0; i < NR_FLOWS; i++)
			ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT + i,
						round));
		sent += NR_FLOWS;
		ASSERT_EQ(0, wait_accounted(s, sent, &st));
		fill(flow_q, NR_FLOWS, -1);
		EXPECT_EQ(NR_FLOWS, drain_flows(_metadata, &self->nic, s, t,
						flow_q, buf_q, per_q));
		EXPECT_EQ(0u, per_q[2] + per_q[3]);
		for (i = 0; i < NR_FLOWS; i++)
			EXPECT_EQ(q0[i] % 2, flow_q[i]) TH_LOG("flow %d", i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ((uint64_t)sent, st.rx_packets);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
}

/* --- drops ---------------------------------------------------------- */

/*
 * 200 frames of 4 strides into 8 buffers of 64 strides, nothing
 * released: exactly the first 128 land, intact; 72 are counted as
 * drops. Giving the buffers back makes room again.
 */
SRQ_TEST(burst_drops_no_buf)
{
	struct nvx_srq_params p = { .nr_queues = 1, .nr_bufs = 8 };
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e[128], x;
	struct qtrack t;
	struct srq *s = &self->s;
	int i, b;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 200; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, i));
	ASSERT_EQ(0, wait_accounted(s, 200, &st));
	EXPECT_EQ(128u, st.rx_packets);
	EXPECT_EQ(72u, st.drops_no_buf);
	EXPECT_EQ(0u, st.drops_cq_full);
	EXPECT_EQ(0u, st.bufs_posted);
	EXPECT_EQ(0u, st.bufs_filling);
	EXPECT_EQ(8u, st.bufs_held);
	EXPECT_EQ(0u, st.posted_strides);
	ASSERT_EQ(0, srq_stats(s, 0, &st));
	EXPECT_EQ(72u, st.drops_no_buf);

	ASSERT_EQ(128u, cq_pending(s, 0));
	track_init(&t, 1);
	for (i = 0; i < 128; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		EXPECT_TRUE(track(&t, &e[i], s->spb));
		EXPECT_EQ(4, e[i].strides);
		expect_frame(_metadata, &self->nic, s, &e[i], 1024, SPORT, i);
	}

	/* one entry per buffer: 16 completions of 4 strides each */
	for (b = 0; b < 8; b++)
		ASSERT_EQ(0, rel_push(s, 0, e[b * 16].buf, 64, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(8u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(8u, st.bufs_returned);
	EXPECT_EQ(8u, st.bufs_posted);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(512u, st.posted_strides);

	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 200));
	ASSERT_EQ(0, cq_next(s, 0, &x));
	EXPECT_EQ(0, x.stride);
	expect_frame(_metadata, &self->nic, s, &x, 1024, SPORT, 200);
}

/*
 * A completion ring without room drops frames (drops_cq_full), and so
 * does one whose consumer index is not sane (ahead of prod, or more
 * than its size behind); the ring works again once it is.
 */
SRQ_TEST(cq_full_drops)
{
	struct nvx_srq_params p = { .nr_queues = 1, .cq_entries = 16 };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	uint32_t prod;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(16u, s->c.params.cq_entries);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, i));
	ASSERT_EQ(0, wait_accounted(s, 20, &st));
	EXPECT_EQ(16u, st.rx_packets);
	EXPECT_EQ(4u, st.drops_cq_full);
	EXPECT_EQ(0u, st.drops_no_buf);
	ASSERT_EQ(16u, cq_pending(s, 0));
	for (i = 0; i < 16; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e));
		expect_frame(_metadata, &self->nic, s, &e, 128, SPORT, i);
	}

	/* room again */
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 20));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 128, SPORT, 20);

	/* cons ahead of prod */
	prod = cq_prod(s, 0);
	cq_set_cons(s, 0, prod + 1);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 21));
	ASSERT_EQ(0, wait_accounted(s, 22, &st));
	EXPECT_EQ(5u, st.drops_cq_full);
	EXPECT_EQ(prod, cq_prod(s, 0));

	/* cons more than the ring's size behind */
	cq_set_cons(s, 0, prod - 17);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 22));
	ASSERT_EQ(0, wait_accounted(s, 23, &st));
	EXPECT_EQ(6u, st.drops_cq_full);
	EXPECT_EQ(prod, cq_prod(s, 0));

	/* sane again */
	cq_set_cons(s, 0, prod);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 23));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 128, SPORT, 23);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(18u, st.rx_packets);
	EXPECT_EQ(6u, st.drops_cq_full);
}

/* --- buffer life cycle ---------------------------------------------- */

#define REL_THREADS	4

struct releaser {
	const struct srq *s;
	int ring;
	int cpu;			/* -1: not pinned */
	const struct nvx_srq_rel *ents;
	int n;
	uint64_t released;
	uint64_t garbage;
	int err;
};

static void *releaser_thread(void *arg)
{
	struct releaser *r = arg;
	struct nvx_srq_release out;
	cpu_set_t set;
	int i, ret;

	if (r->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(r->cpu, &set);
		ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (ret)
			r->err = -ret;
	}
	for (i = 0; i < r->n && !r->err; i++) {
		ret = rel_push(r->s, r->ring, r->ents[i].buf,
			       r->ents[i].strides, 0);
		if (ret == -ENOSPC) {
			r->err = ret;	/* the rings are far from full */
			break;
		}
		if (i % 8 == 7) {
			ret = srq_release(r->s, &out);
			if (ret) {
				r->err = ret;
				break;
			}
			r->released += out.released;
			r->garbage += out.garbage;
		}
	}
	return NULL;
}

/* The CPUs this process may run on: how many, listed in @cpus. */
static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (i = 0; i < CPU_SETSIZE && n < max; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	return n;
}

/*
 * The whole pool filled, then given back by four threads on different
 * CPUs, each with its own release ring, in shuffled order, some entries
 * covering two completions, RELEASE called by all of them concurrently:
 * every buffer is posted again and the pool takes a full load again.
 * The low-water mark is the whole pool, so every RELEASE refills.
 */
SRQ_TEST(release_threads_out_of_order)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16, .nr_rel_rings = REL_THREADS,
		.low_water = 16 * 64,
	};
	struct nvx_srq_rel ents[256], per[REL_THREADS][256];
	struct releaser r[REL_THREADS];
	pthread_t th[REL_THREADS];
	struct nvx_srq_release out;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e[256];
	struct srq *s = &self->s;
	uint64_t released = 0, garbage = 0;
	unsigned int seed = 42;
	int cpus[REL_THREADS], ncpu, n = 0, i, j, k;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ((uint32_t)REL_THREADS, s->c.params.nr_rel_rings);
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, i));
	ASSERT_EQ(256u, cq_wait(s, 0, 256));
	for (i = 0; i < 256; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		expect_frame(_metadata, &self->nic, s, &e[i], 1024, SPORT, i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(16u, st.bufs_held);
	EXPECT_EQ(0u, st.bufs_posted);
	EXPECT_EQ(0u, st.posted_strides);
	/* the pool is full: one more is dropped */
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 256));
	ASSERT_EQ(0, wait_accounted(s, 257, &st));
	EXPECT_EQ(1u, st.drops_no_buf);

	/* per buffer, completions 16k..16k+15; some entries cover two */
	for (i = 0; i < 256; i++) {
		ents[n].buf = e[i].buf;
		ents[n].strides = e[i].strides;
		ents[n].flags = 0;
		if (i % 3 == 1 && i % 16 != 15 && e[i + 1].buf == e[i].buf) {
			ents[n].strides += e[i + 1].strides;
			i++;
		}
		n++;
	}
	for (i = n - 1; i > 0; i--) {
		struct nvx_srq_rel tmp;

		j = rand_r(&seed) % (i + 1);
		tmp = ents[i];
		ents[i] = ents[j];
		ents[j] = tmp;
	}

	ncpu = allowed_cpus(cpus, REL_THREADS);
	if (ncpu < 2)
		TH_LOG("one CPU: the release threads share it");
	for (k = 0; k < REL_THREADS; k++) {
		r[k] = (struct releaser){
			.s = s, .ring = k, .ents = per[k],
			.cpu = ncpu ? cpus[k % ncpu] : -1,
		};
		for (i = k; i < n; i += REL_THREADS)
			per[k][r[k].n++] = ents[i];
	}
	for (k = 0; k < REL_THREADS; k++)
		ASSERT_EQ(0, pthread_create(&th[k], NULL, releaser_thread,
					    &r[k]));
	for (k = 0; k < REL_THREADS; k++) {
		pthread_join(th[k], NULL);
		EXPECT_EQ(0, r[k].err) TH_LOG("release thread %d", k);
		released += r[k].released;
		garbage += r[k].garbage;
	}
	ASSERT_EQ(0, srq_release(s, &out));
	released += out.released;
	garbage += out.garbage;
	EXPECT_EQ((uint64_t)n, released);
	EXPECT_EQ(0u, garbage);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ((uint64_t)n, st.released);
	EXPECT_EQ(0u, st.release_garbage);
	EXPECT_EQ(16u, st.bufs_returned);
	EXPECT_EQ(16u, st.bufs_posted);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(0u, st.bufs_filling);
	EXPECT_EQ(16u * 64, st.posted_strides);
	for (k = 0; k < REL_THREADS; k++)
		EXPECT_EQ(rel_hdr(s, k)->prod, rel_hdr(s, k)->cons);

	/* a full load lands again */
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 1000 + i));
	ASSERT_EQ(256u, cq_wait(s, 0, 256));
	for (i = 0; i < 256; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[0]));
		expect_frame(_metadata, &self->nic, s, &e[0], 1024, SPORT,
			     1000 + i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.drops_no_buf);
}

/*
 * One frame held while the pool cycles three times over: its buffer is
 * never reused and its bytes never change. Once the frame is released
 * the buffer goes back, poisoned with 0x6b, and is reused.
 */
SRQ_TEST(reuse_after_last_release)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_POISON, .nr_queues = 1, .nr_bufs = 8,
		.low_water = 8 * 64,
	};
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e, h0;
	struct qtrack t;
	struct srq *s = &self->s;
	unsigned char held[1024];
	const unsigned char *hb;
	uint64_t returned;
	uint32_t h, seq, reused = 0;
	int hits = 0, i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(NVX_SRQ_POISON, s->c.params.flags);
	track_init(&t, 1);
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &h0));
	ASSERT_TRUE(track(&t, &h0, s->spb));
	expect_frame(_metadata, &self->nic, s, &h0, 1024, SPORT, 0);
	h = h0.buf;
	hb = s->bufs + (size_t)h * s->c.params.buf_size;
	memcpy(held, frame_at(s, &h0), sizeof(held));

	/* 15 more fill it; after that it must not come back */
	for (seq = 1; seq < 16 + 3 * 8 * 16; seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		EXPECT_TRUE(track(&t, &e, s->spb));
		if (!expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT,
				  seq))
			break;
		if (seq < 16) {
			EXPECT_EQ(h, e.buf);
			EXPECT_EQ(seq * 4, e.stride);
		} else if (e.buf == h) {
			hits++;
		}
		ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
		ASSERT_EQ(0, srq_release(s, &rel));
		EXPECT_EQ(0u, rel.garbage);
	}
	EXPECT_EQ(0, hits) TH_LOG("the held buffer %u was reused %d times",
				  h, hits);
	EXPECT_EQ(0, memcmp(held, hb, sizeof(held)));
	for (i = 1; i < 16; i++) {
		e = h0;
		e.stride = i * 4;
		EXPECT_TRUE(bytes_match(&self->nic, s, &e, 1024, SPORT, i))
			TH_LOG("released frame %d of the held buffer changed", i);
	}
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(1u, st.bufs_held);
	returned = st.bufs_returned;

	/* the last reference goes: the buffer is returned, poisoned */
	ASSERT_EQ(0, rel_push(s, 0, h, h0.strides, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(1u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(returned + 1, st.bufs_returned);
	EXPECT_EQ(0u, st.bufs_held);
	for (i = 0; i < (int)s->c.params.buf_size; i++)
		if (hb[i] != POISON_BYTE)
			break;
	EXPECT_EQ((int)s->c.params.buf_size, i)
		TH_LOG("byte %d of the returned buffer is %#x", i, hb[i]);

	/* and it is reused */
	for (; seq < 16 + 5 * 8 * 16 && !reused; seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		EXPECT_TRUE(track(&t, &e, s->spb));
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq);
		if (e.buf == h) {
			reused = 1;
			EXPECT_EQ(0, e.stride);
			/* the rest of it still shows the poison */
			EXPECT_EQ(POISON_BYTE, hb[1024]);
			EXPECT_EQ(POISON_BYTE, hb[s->c.params.buf_size - 1]);
		}
		ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
		ASSERT_EQ(0, srq_release(s, NULL));
	}
	EXPECT_EQ(1u, reused);
}

/*
 * Refill at the low-water mark (512 of 1024 strides): at the mark,
 * released buffers stay held, even through RELEASE; one frame below it,
 * exactly one refill returns them. Then, without any RELEASE call, the
 * receive path takes the release ring's entries at its next refill,
 * and not before the pool crosses the mark again.
 */
SRQ_TEST(refill_at_low_water)
{
	struct nvx_srq_params p = {
		.nr_queues = 1, .nr_bufs = 16, .low_water = 512,
	};
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	uint32_t bufs[8], cons0;
	uint64_t released0;
	int i, seq = 0, at = -1;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	EXPECT_EQ(512u, s->c.params.low_water);

	/* half the pool: at the mark, not below it */
	for (i = 0; i < 128; i++, seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq);
		if (i % 16 == 0)
			bufs[i / 16] = e.buf;
		EXPECT_EQ(bufs[i / 16], e.buf);
	}
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, rel_push(s, 0, bufs[i], 64, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(8u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(0u, rel.released);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(0u, st.refills);
	EXPECT_EQ(0u, st.bufs_returned);
	EXPECT_EQ(8u, st.bufs_held);
	EXPECT_EQ(8u, st.bufs_posted);
	EXPECT_EQ(0u, st.bufs_filling);
	EXPECT_EQ(512u, st.posted_strides);
	EXPECT_EQ(8u, st.released);

	/* one frame more: below the mark; one refill returns all eight */
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq++);
	ASSERT_EQ(0, srq_release(s, &rel));
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.refills);
	EXPECT_EQ(8u, st.bufs_returned);
	EXPECT_EQ(15u, st.bufs_posted);
	EXPECT_EQ(1u, st.bufs_filling);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_LE(15u * 64, st.posted_strides);

	/*
	 * No more RELEASE calls: frames are released through the ring only.
	 * The frame just received starts a buffer; 15 more fill it, 7 more
	 * buffers bring the pool to the mark; the frame after that (number
	 * 127 from here) takes it below, and the receive path refills.
	 */
	ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
	cons0 = __atomic_load_n(&rel_hdr(s, 0)->cons, __ATOMIC_ACQUIRE);
	released0 = st.released;
	usleep(50000);	/* the last refill is jiffies ago */
	for (i = 0; i < 300; i++, seq++) {
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, seq));
		ASSERT_EQ(0, cq_next(s, 0, &e));
		expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, seq);
		ASSERT_EQ(0, rel_push(s, 0, e.buf, e.strides, 0));
		ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
		if (st.refills > 1) {
			at = i;
			break;
		}
	}
	EXPECT_LE(127, at) TH_LOG("refilled above the mark, at frame %d", at);
	EXPECT_EQ(2u, st.refills);
	EXPECT_NE(cons0, __atomic_load_n(&rel_hdr(s, 0)->cons,
					 __ATOMIC_ACQUIRE));
	EXPECT_LT(released0, st.released);
	EXPECT_LE(16u, st.bufs_returned);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(16u, st.bufs_posted + st.bufs_filling);
	EXPECT_EQ(0u, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(0u, st.release_garbage);
}

/*
 * Garbage in a release ring is counted and ignored, each kind of it; the
 * valid entries of the same batch still count. A release ring whose
 * prod is more than its size ahead is garbage as a whole; fixed, the
 * ring works again.
 */
SRQ_TEST(garbage_releases)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e[3];
	struct nvx_srq_ring *rh;
	struct srq *s = &self->s;
	uint32_t a, b, cons;
	uint64_t garbage;
	int i;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, i));
	ASSERT_EQ(3u, cq_wait(s, 0, 3));
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE(cq_pop(s, 0, &e[i]));
		expect_frame(_metadata, &self->nic, s, &e[i], 128, SPORT, i);
	}
	a = e[0].buf;
	b = (a + 1) % s->c.params.nr_bufs;	/* posted, never filled */

	ASSERT_EQ(0, rel_push(s, 0, s->c.params.nr_bufs, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));		/* valid */
	ASSERT_EQ(0, rel_push(s, 0, a, 0, 0));		/* no strides */
	ASSERT_EQ(0, rel_push(s, 0, a, 4, 0));		/* 2 unreleased */
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 1));		/* flags */
	ASSERT_EQ(0, rel_push(s, 0, b, 1, 0));		/* posted buffer */
	ASSERT_EQ(0, rel_push(s, 0, 0xffffffffU, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));		/* valid */
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(8u, rel.released);
	EXPECT_EQ(6u, rel.garbage);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(6u, st.release_garbage);
	EXPECT_EQ(8u, st.released);

	/* the two valid ones counted: one stride is left, then none */
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));
	ASSERT_EQ(0, rel_push(s, 0, a, 1, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(2u, rel.released);
	EXPECT_EQ(1u, rel.garbage);

	/* prod more than rel_entries ahead of cons: nothing is taken */
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	garbage = st.release_garbage;
	rh = rel_hdr(s, 0);
	cons = __atomic_load_n(&rh->cons, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rh->prod, cons + s->c.params.rel_entries + 1,
			 __ATOMIC_RELEASE);
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(0u, rel.released);
	EXPECT_EQ(cons, __atomic_load_n(&rh->cons, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_LT(garbage, st.release_garbage);
	/* behind cons is just as bad */
	__atomic_store_n(&rh->prod, cons - 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(0u, rel.released);
	EXPECT_EQ(cons, __atomic_load_n(&rh->cons, __ATOMIC_ACQUIRE));

	/* fixed: valid entries count again */
	__atomic_store_n(&rh->prod, cons, __ATOMIC_RELEASE);
	ASSERT_EQ(0, send_frame(&self->nic, 128, SPORT, 3));
	ASSERT_EQ(0, cq_next(s, 0, &e[0]));
	expect_frame(_metadata, &self->nic, s, &e[0], 128, SPORT, 3);
	ASSERT_EQ(0, rel_push(s, 0, e[0].buf, e[0].strides, 0));
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(1u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
}

/* --- lifetime ------------------------------------------------------- */

/*
 * A child creates a set, receives frames and exits holding them all,
 * mapped, fd open: the set goes, every grant goes back, and a new set
 * can be created on the NIC, with fresh counters.
 */
SRQ_TEST(exit_returns_everything)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
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
	memset(&st, 0, sizeof(st));
	st.queue = NVX_SRQ_ALL_QUEUES;
	st.ifindex = self->nic.ifindex;
	EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));
	ASSERT_EQ(0, pool_stats(self->fd, &ps));
	EXPECT_EQ(self->start.granted_bytes, ps.granted_bytes);

	p.nr_queues = 1;
	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	EXPECT_EQ(0, e.stride);
	expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, 0);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.rx_packets);
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
		memset(&st, 0, sizeof(st));
		st.queue = NVX_SRQ_ALL_QUEUES;
		st.ifindex = self->nic.ifindex;
		EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
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
	struct nvx_srq_release rel;
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
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(1u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
	EXPECT_EQ(-ENODEV, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	memset(&st, 0, sizeof(st));
	st.queue = NVX_SRQ_ALL_QUEUES;
	st.ifindex = info.ifindex;
	EXPECT_EQ(-ENODEV, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
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
	EXPECT_EQ(3u, st.tx_packets);
	EXPECT_EQ(200u + ETH_HDR + MAX_ETH_FRAME, st.tx_bytes);
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
	for (i = 0; i < 80; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, i));
	ASSERT_EQ(0, wait_accounted(s, 80, &st));
	EXPECT_EQ(64u, st.rx_packets);
	EXPECT_EQ(16u, st.drops_no_buf);
	EXPECT_EQ(12u, st.bufs_posted);
	EXPECT_EQ(4u, st.bufs_held);
	ASSERT_EQ(0, srq_stats(s, 1, &qst));
	EXPECT_EQ(64u, qst.rx_packets);
	EXPECT_EQ(16u, qst.drops_no_buf);
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

/* --- bad input ------------------------------------------------------ */

/* Try a create; close what it made. 0 or -errno. */
static int try_create(int dev, struct nvx_srq_create *c)
{
	int ret = nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, c);

	if (!ret) {
		close(c->fd);
		ret = wait_detached(dev, c->ifindex);
		if (ret)
			return -EEXIST;		/* did not go away */
	}
	return ret;
}

#define BAD(err, field, val) do {					\
	struct nvx_srq_create c_ = base;				\
	long long v_ = (val);						\
	c_.field = v_;							\
	EXPECT_EQ(err, try_create(self->fd, &c_))			\
		TH_LOG(#field " = %lld", v_);				\
} while (0)

/* Every bad create parameter, with its errno; good neighbours work. */
SRQ_TEST(bad_create)
{
	struct nvx_srq_create base = {
		.ifindex = self->nic.ifindex,
		.params = { .nr_queues = 1, .nr_bufs = 4 },
	};
	struct {
		struct nvx_srq_create c;
		uint64_t more;
	} big;
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_create c;
	int g, nul, closed, lo = if_nametoindex("lo");

	g = grant(self->fd, 2 * CHUNK);
	ASSERT_LE(0, g);
	base.grant_fd = g;
	ASSERT_NE(0, lo);

	/* the base works (and goes again); base keeps its zero defaults */
	c = base;
	EXPECT_EQ(0, try_create(self->fd, &c));

	BAD(-EINVAL, flags, 2);
	BAD(-EINVAL, flags, 1U << 31);
	BAD(-EINVAL, params.flags, 4);
	BAD(-EINVAL, params.flags, 1U << 31);
	BAD(-ENODEV, ifindex, unused_ifindex());
	BAD(-EOPNOTSUPP, ifindex, lo);
	BAD(-EINVAL, params.nr_queues, 0);
	BAD(-EINVAL, params.nr_queues, NVX_SRQ_MAX_QUEUES + 1);
	BAD(-EINVAL, params.stride_size, 96);
	BAD(-EINVAL, params.stride_size, 32);
	BAD(-EINVAL, params.stride_size, 2 * NVX_SRQ_DEF_BUF_SIZE);
	BAD(-EINVAL, params.buf_size, 3000);
	BAD(-EINVAL, params.buf_size, 1024);
	BAD(-EINVAL, params.nr_bufs, NVX_SRQ_MAX_BUFS + 1);
	BAD(-EINVAL, params.cq_entries, 3000);
	BAD(-EINVAL, params.cq_entries, 2 * NVX_SRQ_MAX_ENTRIES);
	BAD(-EINVAL, params.rel_entries, 3000);
	BAD(-EINVAL, params.rel_entries, 2 * NVX_SRQ_MAX_ENTRIES);
	BAD(-EINVAL, params.nr_rel_rings, NVX_SRQ_MAX_QUEUES + 1);
	BAD(-EINVAL, params.low_water, 4 * 64 + 1);
	BAD(-EINVAL, params.pad, 1);
	BAD(-EINVAL, grant_offset, 100);
	BAD(-EINVAL, grant_offset, NVX_SRQ_DEF_BUF_SIZE / 2);
	BAD(-ENOSPC, params.nr_bufs, 2 * CHUNK / NVX_SRQ_DEF_BUF_SIZE + 1);
	BAD(-ENOSPC, grant_offset, 2 * CHUNK - NVX_SRQ_DEF_BUF_SIZE);
	BAD(-ENOSPC, grant_offset, 2 * CHUNK);
	BAD(-ENOSPC, grant_offset, ~0ULL - NVX_SRQ_DEF_BUF_SIZE + 1);
	BAD(-EBADF, grant_fd, -1);
	closed = dup(g);
	ASSERT_LE(0, closed);
	close(closed);
	BAD(-EBADF, grant_fd, closed);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nul);
	BAD(-EINVAL, grant_fd, nul);
	BAD(-EINVAL, grant_fd, self->fd);
	close(nul);

	/* a buffer above the maximum (alone, it would fit in the grant) */
	c = base;
	c.params.nr_bufs = 1;
	c.params.buf_size = 2 * NVX_SRQ_MAX_BUF_SIZE;
	c.params.stride_size = NVX_SRQ_MAX_BUF_SIZE;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	/* more than 1024 strides per buffer; 1024 is fine */
	c = base;
	c.params.buf_size = 128 * 1024;
	c.params.stride_size = 64;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	c.params.buf_size = 64 * 1024;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* the largest buffer, one of it */
	c = base;
	c.params.nr_bufs = 1;
	c.params.buf_size = NVX_SRQ_MAX_BUF_SIZE;
	c.params.stride_size = NVX_SRQ_MAX_BUF_SIZE / NVX_SRQ_MAX_STRIDES;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* stride == buffer: striding off */
	c = base;
	c.params.buf_size = 2048;
	c.params.stride_size = 2048;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* per queue: nr_bufs a multiple of nr_queues */
	c = base;
	c.params.flags = NVX_SRQ_PER_QUEUE;
	c.params.nr_queues = 4;
	c.params.nr_bufs = 6;
	EXPECT_EQ(-EINVAL, try_create(self->fd, &c));
	c.params.nr_bufs = 8;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* the most queues, with small rings */
	c = base;
	c.params.nr_queues = NVX_SRQ_MAX_QUEUES;
	c.params.cq_entries = 64;
	c.params.rel_entries = 64;
	EXPECT_EQ(0, try_create(self->fd, &c));
	EXPECT_EQ(NVX_SRQ_MAX_QUEUES, c.params.nr_rel_rings);
	/* the low-water mark may be the whole pool */
	c = base;
	c.params.low_water = 4 * 64;
	EXPECT_EQ(0, try_create(self->fd, &c));
	/* buffers at an offset that fits */
	c = base;
	c.params.nr_bufs = 2 * CHUNK / NVX_SRQ_DEF_BUF_SIZE - 1;
	c.grant_offset = NVX_SRQ_DEF_BUF_SIZE;
	EXPECT_EQ(0, try_create(self->fd, &c));

	/* a struct smaller than the first version */
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd,
				     nvx_ioc_resize(NVX_IOC_SRQ_CREATE, 8),
				     &base));
	/* a larger one: zeroes beyond are fine, anything else is not */
	big.c = base;
	big.more = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(self->fd,
				    nvx_ioc_resize(NVX_IOC_SRQ_CREATE,
						   sizeof(big)), &big));
	/* nothing was left attached by any of these */
	EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));

	/* one set per NIC */
	c = base;
	ASSERT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_CREATE, &c));
	big.c = base;
	EXPECT_EQ(-EBUSY, try_create(self->fd, &big.c));
	close(c.fd);
	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	close(g);
}

static int nobody_creates(int dev, struct nvx_srq_create *c)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 100;
	return nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, c) == -EPERM ? 0 : 1;
}

/* Creating a set needs CAP_NET_ADMIN, even with root's fds in hand. */
SRQ_TEST(create_needs_net_admin)
{
	struct nvx_srq_create c = {
		.ifindex = self->nic.ifindex,
		.params = { .nr_queues = 1 },
	};
	int status;
	pid_t pid;

	c.grant_fd = grant(self->fd, CHUNK);
	ASSERT_LE(0, c.grant_fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(nobody_creates(self->fd, &c));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, wait_detached(self->fd, self->nic.ifindex));
	close(c.grant_fd);
}

/* Bad arguments to every ioctl of /dev/nvx's SRQ part and of a set. */
SRQ_TEST(bad_ioctls)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_info info = { .ifindex = self->nic.ifindex };
	struct nvx_srq_release rel = { 0 };
	struct nvx_srq_stats st;
	struct {
		struct nvx_srq_stats st;
		uint64_t more;
	} big;
	unsigned char f[64] = { 0 };
	struct nvx_srq_tx tx = { .len = sizeof(f), .addr = (uintptr_t)f };
	uint16_t table[NVX_SRQ_RSS_ENTRIES] = { 0 };
	struct nvx_srq_steer steer = {
		.flags = 1, .nr_entries = NVX_SRQ_RSS_ENTRIES,
		.table = (uintptr_t)table,
	};
	struct srq *s = &self->s;
	int lo = if_nametoindex("lo"), none = unused_ifindex();

	/* no set yet; not an nvxsim NIC; no NIC */
	memset(&st, 0, sizeof(st));
	st.queue = NVX_SRQ_ALL_QUEUES;
	st.ifindex = self->nic.ifindex;
	EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
	EXPECT_EQ(-ENOENT, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	st.ifindex = lo;
	EXPECT_EQ(-EOPNOTSUPP, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
	st.ifindex = none;
	EXPECT_EQ(-ENODEV, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
	info.ifindex = lo;
	EXPECT_EQ(-EOPNOTSUPP, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	info.ifindex = none;
	EXPECT_EQ(-ENODEV, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));

	/* QUERY and INFO flags */
	memset(&st, 0, sizeof(st));
	st.queue = NVX_SRQ_ALL_QUEUES;
	st.ifindex = self->nic.ifindex;
	EXPECT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
	st.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_SRQ_QUERY, &st));
	memset(&info, 0, sizeof(info));
	info.ifindex = self->nic.ifindex;
	EXPECT_EQ(0, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));
	info.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(self->fd, NVX_IOC_SRQ_INFO, &info));

	/* STATS */
	memset(&st, 0, sizeof(st));
	st.flags = 1;
	st.queue = NVX_SRQ_ALL_QUEUES;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_STATS, &st));
	EXPECT_EQ(-EINVAL, srq_stats(s, 1, &st));
	EXPECT_EQ(0, srq_stats(s, 0, &st));
	EXPECT_EQ((uint32_t)self->nic.ifindex, st.ifindex);
	EXPECT_EQ(1u, st.nr_queues);
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd,
				     nvx_ioc_resize(NVX_SRQ_IOC_STATS, 8),
				     &st));
	memset(&big, 0, sizeof(big));
	big.st.queue = NVX_SRQ_ALL_QUEUES;
	EXPECT_EQ(0, nvx_ioctl(s->fd, nvx_ioc_resize(NVX_SRQ_IOC_STATS,
						     sizeof(big)), &big));
	EXPECT_EQ(1u, big.st.nr_queues);
	big.more = 1;
	EXPECT_EQ(-E2BIG, nvx_ioctl(s->fd,
				    nvx_ioc_resize(NVX_SRQ_IOC_STATS,
						   sizeof(big)), &big));

	/* RELEASE */
	rel.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &rel));
	rel.flags = 0;
	rel.pad = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &rel));
	rel.pad = 0;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd,
				     nvx_ioc_resize(NVX_SRQ_IOC_RELEASE, 4),
				     &rel));
	EXPECT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &rel));

	/* TX and STEER flags */
	tx.flags = 1;
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx));
	EXPECT_EQ(-EINVAL, nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &steer));
	steer.flags = 0;
	EXPECT_EQ(0, nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &steer));

	/* ioctls that are not the set's, and the other way round */
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, _IOWR(NVX_IOC_MAGIC, 0x7f,
						  struct nvx_srq_stats), &st));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, _IO(NVX_IOC_MAGIC, 0x8f), NULL));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, NVX_IOC_SRQ_CREATE, &s->c));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(s->fd, NVX_IOC_POOL_STATS, &st));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_SRQ_IOC_RELEASE, &rel));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_SRQ_IOC_STATS, &st));
	EXPECT_EQ(-ENOTTY, nvx_ioctl(self->fd, NVX_SRQ_IOC_TX, &tx));
}

/* The set's mmap(): the ring area shared only, buffers read-only. */
SRQ_TEST(bad_mmap)
{
	struct nvx_srq_params p = { .nr_queues = 2 };
	const struct nvx_srq_layout *l;
	struct srq *s = &self->s;
	long pg = sysconf(_SC_PAGESIZE);
	void *m;

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	l = &s->c.layout;

	m = mmap(NULL, l->ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 s->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, l->buf_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, l->buf_offset);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	/* read-only stays read-only */
	m = mmap(NULL, l->buf_bytes, PROT_READ, MAP_SHARED, s->fd,
		 l->buf_offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_NE(0, mprotect(m, pg, PROT_READ | PROT_WRITE));
	munmap(m, l->buf_bytes);
	/* offsets that name nothing */
	m = mmap(NULL, pg, PROT_READ, MAP_SHARED, s->fd,
		 l->buf_offset + l->buf_bytes);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	if (l->ring_bytes < l->buf_offset) {
		m = mmap(NULL, pg, PROT_READ, MAP_SHARED, s->fd,
			 l->ring_bytes);
		EXPECT_EQ(MAP_FAILED, m);
		EXPECT_EQ(EINVAL, errno);
	}
	/* a second mapping of the ring area sees the same rings */
	m = mmap(NULL, l->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	cq_set_cons(s, 1, 5);
	EXPECT_EQ(5u, ((struct nvx_srq_ring *)((unsigned char *)m +
					       l->cq_offset +
					       l->cq_bytes))->cons);
	cq_set_cons(s, 1, 0);
	munmap(m, l->ring_bytes);
}

/* --- stress --------------------------------------------------------- */

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
	EXPECT_EQ(received, st.rx_packets);
	EXPECT_EQ(fillers, st.fillers);
	EXPECT_EQ(sent, st.rx_packets + st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(0u, st.release_garbage);
	EXPECT_EQ(received, st.released);
	EXPECT_EQ(64u, st.bufs_posted + st.bufs_filling + st.bufs_held);
	EXPECT_LT(0u, cq_prod(s, 0));
	EXPECT_LT(0u, cq_prod(s, 1));
}

/* --- lifetime under traffic ----------------------------------------- */

#define RACE_ITERS	200
#define RACE_BUDGET_MS	25000		/* fewer sets on a very slow machine */
#define RACE_MIN_ITERS	20

/*
 * Pop every completion of @s (at most a ring's worth per queue: frames
 * keep coming) and give each frame back on its queue's release ring.
 * Returns the entries pushed, or -errno; @bad counts frames not whole.
 */
static int64_t release_popped(const struct nic *n, const struct srq *s,
			      uint64_t *bad)
{
	const struct nvx_srq_params *p = &s->c.params;
	struct nvx_srq_cqe e;
	struct tag tag;
	int64_t pushed = 0;
	uint32_t q, k;
	int ret;

	for (q = 0; q < p->nr_queues; q++) {
		for (k = 0; k < p->cq_entries && cq_pop(s, q, &e); k++) {
			if (e.flags & NVX_SRQ_CQE_FILLER)
				continue;
			if (!cqe_frame_ok(n, s, &e, &tag))
				(*bad)++;
			ret = rel_give(s, q % p->nr_rel_rings, e.buf,
				       e.strides);
			if (ret)
				return ret;
			pushed++;
		}
	}
	return pushed;
}

/* NVX_SRQ_IOC_TX of a small frame to the peer: 0 or -errno. */
static int tx_small(const struct nic *n, const struct srq *s)
{
	unsigned char f[60] = { 0 };
	struct nvx_srq_tx tx = { .len = sizeof(f), .addr = (uintptr_t)f };

	memcpy(f, n->peer_mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, n->mac, ETH_ALEN);
	put16(f + 12, ETH_P_LOCAL);
	return nvx_ioctl(s->fd, NVX_SRQ_IOC_TX, &tx);
}

/*
 * Two threads blast 64-byte frames of 128 flows into the NIC for the
 * whole test, while a small set (8 buffers, 2 queues) is created,
 * mapped, used a little (in turn nothing, RELEASE of what landed, STATS,
 * TX) and closed, 200 times (fewer if that takes longer than 25 s).
 * The last reference goes in close() or, in every other group of four
 * sets, in the last munmap(); either detaches the set before the call
 * returns, so every create succeeds at once: no -EBUSY, no retry (a
 * retry would hide a detach left for later). Frames that land
 * are whole, releases are never garbage, and at the end no set is left
 * on the NIC (the fixture then checks the pool).
 */
SRQ_TEST(racing_close)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 8, .cq_entries = 256,
		.rel_entries = 256,
	};
	struct nvx_srq_release rel;
	struct nvx_srq_stats st;
	struct srq *s = &self->s;
	uint64_t end, sent, refused, bad = 0, released = 0;
	unsigned int landed = 0, tx_ok = 0, tx_refused = 0;
	int64_t pushed;
	int i, ret, err;

	ASSERT_EQ(0, blast_start(&self->blast, &self->nic));
	end = now_ms() + RACE_BUDGET_MS;
	for (i = 0; i < RACE_ITERS && now_ms() < end; i++) {
		ret = srq_open(self->fd, s, self->nic.ifindex, &p, 0);
		ASSERT_EQ(0, ret) TH_LOG("create %d: %s", i, strerror(-ret));
		if (cq_wait_any(s, 10))
			landed++;
		switch (i % 4) {
		case 1:
			pushed = release_popped(&self->nic, s, &bad);
			ASSERT_LE(0, pushed) TH_LOG("set %d: releasing: %s", i,
						    strerror(-pushed));
			ASSERT_EQ(0, srq_release(s, &rel));
			EXPECT_EQ(0u, rel.garbage);
			ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
			/* taken by this RELEASE or by a refill before it */
			EXPECT_EQ((uint64_t)pushed, st.released);
			EXPECT_EQ(0u, st.release_garbage);
			released += pushed;
			break;
		case 2:
			ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
			EXPECT_EQ(2u, st.nr_queues);
			EXPECT_EQ((uint32_t)self->nic.ifindex, st.ifindex);
			EXPECT_EQ(8u, st.bufs_posted + st.bufs_filling +
				  st.bufs_held);
			EXPECT_EQ(0u, st.release_garbage);
			break;
		case 3:
			/* this CPU's backlog may be full of frames: ENOBUFS */
			ret = tx_small(&self->nic, s);
			if (ret == -ENOBUFS)
				tx_refused++;
			else if (!ret)
				tx_ok++;
			EXPECT_TRUE(!ret || ret == -ENOBUFS)
				TH_LOG("set %d: TX: %s", i, strerror(-ret));
			break;
		}
		ret = srq_shut(s, (i / 4) % 2);
		ASSERT_EQ(0, ret) TH_LOG("set %d: close: %s", i,
					 strerror(-ret));
	}
	blast_stop(&self->blast);
	sent = blast_sent(&self->blast, &refused, &err);
	TH_LOG("%d sets, %u with frames; %llu frames sent (%llu refused), %llu released",
	       i, landed, (unsigned long long)sent,
	       (unsigned long long)refused, (unsigned long long)released);
	TH_LOG("TX: %u sent, %u refused", tx_ok, tx_refused);
	EXPECT_EQ(0, err) TH_LOG("sender: %s", strerror(-err));
	EXPECT_LE(RACE_MIN_ITERS, i);
	EXPECT_LT(0u, sent);
	EXPECT_LT(0u, landed);
	EXPECT_EQ(0u, bad);
	EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex, &st));
}

#define DEL_ROUNDS	6

/* When the closing side of link_del_races_close closes. */
enum {
	CLOSE_AT_ONCE,		/* as the deletion starts */
	CLOSE_IN_DETACH,	/* once the unregister took the set off */
	CLOSE_AFTER_DELAY,	/* a few ms into the deletion */
};

/* One side of the race between deleting a NIC and closing its set. */
struct del_race {
	const int *go;
	const char *name;	/* the NIC to delete */
	struct srq *s;		/* the set to close */
	int mode;		/* CLOSE_* */
	bool fd_first;
	unsigned int delay_us;
	bool saw_detach;	/* CLOSE_IN_DETACH: STATS said ifindex 0 */
	int ret;
};

static void race_wait(const int *go)
{
	while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *link_del_thread(void *arg)
{
	struct del_race *r = arg;

	race_wait(r->go);
	r->ret = sh("ip link del %s", r->name);
	return NULL;
}

static void *set_close_thread(void *arg)
{
	struct del_race *r = arg;
	struct nvx_srq_stats st;
	uint64_t end;
	int ret;

	race_wait(r->go);
	switch (r->mode) {
	case CLOSE_IN_DETACH:
		/*
		 * The unregister clears the set's NIC first, then detaches
		 * (synchronize_net() and all): close right then.
		 */
		end = now_ms() + 5000;
		do {
			ret = srq_stats(r->s, NVX_SRQ_ALL_QUEUES, &st);
		} while (!ret && st.ifindex && now_ms() < end);
		r->saw_detach = !ret && !st.ifindex;
		break;
	case CLOSE_AFTER_DELAY:
		usleep(r->delay_us);
		break;
	}
	r->ret = srq_shut(r->s, r->fd_first);
	return NULL;
}

/*
 * DEL_ROUNDS times, one per closing mode and order: a fresh NIC pair
 * (a second name), a set on it that receives a few frames, then at the
 * same time `ip link del` of the NIC in one
 * thread and, in another, close() and munmap() of the set (either
 * order), as the deletion starts, just after the unregister took the set
 * off the NIC, or a few ms in. Both complete; the NIC and its peer are
 * gone and so is the set (its grant is back). The regression test for a
 * set freed while the NIC's unregister was still detaching it.
 */
SRQ_TEST(link_del_races_close)
{
	struct nvx_srq_params p = {
		.nr_queues = 2, .nr_bufs = 8, .cq_entries = 256,
		.rel_entries = 256,
	};
	struct del_race del, cl;
	struct nvx_srq_stats st;
	struct nic *n = &self->nic2;
	struct srq *s = &self->s;
	pthread_t td, tc;
	int round, go, k, ret, ifindex;

	for (round = 0; round < DEL_ROUNDS; round++) {
		ret = nic_create_as(n, "nvd", round == 0);
		ASSERT_EQ(0, ret) TH_LOG("round %d: creating %s failed at step %d",
					 round, n->name, -ret);
		ifindex = n->ifindex;
		ASSERT_EQ(0, srq_open(self->fd, s, ifindex, &p, 0));
		for (k = 0; k < 4; k++)
			ASSERT_EQ(0, send_frame(n, 200, SPORT + k, k));
		ASSERT_EQ(0, wait_accounted(s, 4, &st));
		EXPECT_EQ(4u, st.rx_packets);

		go = 0;
		del = (struct del_race){ .go = &go, .name = n->name };
		cl = (struct del_race){
			.go = &go, .s = s, .mode = round % 3,
			.fd_first = (round / 3) % 2,
			.delay_us = (round % 10) * 2000,
		};
		ASSERT_EQ(0, pthread_create(&td, NULL, link_del_thread, &del));
		ret = pthread_create(&tc, NULL, set_close_thread, &cl);
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		pthread_join(td, NULL);
		if (!ret)
			pthread_join(tc, NULL);
		if (!del.ret)
			n->alive = false;
		ASSERT_EQ(0, ret);
		EXPECT_EQ(0, del.ret) TH_LOG("round %d: ip link del %s: %d",
					     round, n->name, del.ret);
		EXPECT_EQ(0, cl.ret) TH_LOG("round %d: close: %s", round,
					    strerror(-cl.ret));
		if (cl.mode == CLOSE_IN_DETACH)
			EXPECT_TRUE(cl.saw_detach)
				TH_LOG("round %d: the set kept its NIC", round);

		nic_destroy(n);
		EXPECT_EQ(0u, if_nametoindex(n->name));
		EXPECT_EQ(0u, if_nametoindex(n->peer));
		EXPECT_EQ(-ENODEV, srq_query(self->fd, ifindex, &st));
		ASSERT_EQ(0, wait_granted(self->fd, &self->start))
			TH_LOG("round %d: the set's grant is still live", round);
	}
	EXPECT_EQ(-ENOENT, srq_query(self->fd, self->nic.ifindex, &st));
}

/* Wait up to @ms for one byte on @fd: true when it came. */
static bool read_byte(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, ms) == 1 && read(fd, &c, 1) == 1;
}

/*
 * The child of exit_while_receiving: create a set, say so on @ready,
 * then poll its queues and release every frame until killed. Returns
 * (exits with) a step number only on failure.
 */
static int receive_until_killed(int dev, int ifindex, int ready)
{
	struct nvx_srq_params p = {
		.flags = NVX_SRQ_POISON, .nr_queues = 2, .nr_bufs = 16,
		.cq_entries = 1024, .rel_entries = 1024,
	};
	struct nvx_srq_cqe e;
	struct srq s;
	uint64_t n = 0;
	uint32_t q;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		return 1;
	if (srq_open(dev, &s, ifindex, &p, 0))
		return 2;
	if (write(ready, "r", 1) != 1)
		return 3;
	for (;;) {
		for (q = 0; q < p.nr_queues; q++) {
			while (cq_pop(&s, q, &e)) {
				if (e.flags & NVX_SRQ_CQE_FILLER)
					continue;
				if (rel_give(&s, q, e.buf, e.strides))
					return 4;
				if (++n % 16 == 0 && srq_release(&s, NULL))
					return 5;
			}
		}
	}
}

/*
 * A child creates a set and busy-polls it, releasing every frame, while
 * two threads of the parent blast frames into it; the parent SIGKILLs
 * it mid-stream. The set goes with the process, frames still arriving
 * (QUERY says -ENOENT within 2 s), its grant goes back, and a new set on
 * the NIC receives a frame at stride 0.
 */
SRQ_TEST(exit_while_receiving)
{
	struct nvx_srq_params p = { .nr_queues = 1 };
	struct nvx_srq_stats st;
	struct nvx_srq_cqe e;
	struct srq *s = &self->s;
	uint64_t end, sent, refused;
	int pfd[2], status = 0, ret = -1, err;
	bool ready, busy = false;
	pid_t pid;

	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pfd[0]);
		_exit(receive_until_killed(self->fd, self->nic.ifindex,
					   pfd[1]));
	}
	close(pfd[1]);
	/* nothing may fail before the child is killed: it would stay */
	ready = read_byte(pfd[0], 10000);
	close(pfd[0]);
	if (ready)
		ret = blast_start(&self->blast, &self->nic);
	end = now_ms() + 10000;
	while (ready && !ret && !busy && now_ms() < end) {
		busy = !srq_query(self->fd, self->nic.ifindex, &st) &&
		       st.rx_packets >= 256 && st.released >= 64;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(ready) TH_LOG("the child did not create its set: status %#x",
				  status);
	ASSERT_EQ(0, ret) TH_LOG("starting the senders: %s", strerror(-ret));
	EXPECT_TRUE(busy) TH_LOG("the child did not receive and release");
	ASSERT_TRUE(WIFSIGNALED(status))
		TH_LOG("the child stopped by itself, at step %d",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	EXPECT_EQ(SIGKILL, WTERMSIG(status));

	end = now_ms() + WAIT_MS;
	while ((ret = srq_query(self->fd, self->nic.ifindex, &st)) !=
	       -ENOENT && now_ms() < end)
		usleep(1000);
	EXPECT_EQ(-ENOENT, ret);
	blast_stop(&self->blast);
	sent = blast_sent(&self->blast, &refused, &err);
	TH_LOG("%llu frames sent (%llu refused)", (unsigned long long)sent,
	       (unsigned long long)refused);
	EXPECT_EQ(0, err) TH_LOG("sender: %s", strerror(-err));
	EXPECT_EQ(0, wait_granted(self->fd, &self->start));

	ASSERT_EQ(0, srq_open(self->fd, s, self->nic.ifindex, &p, 0));
	ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, 0));
	ASSERT_EQ(0, cq_next(s, 0, &e));
	EXPECT_EQ(0, e.stride);
	expect_frame(_metadata, &self->nic, s, &e, 1024, SPORT, 0);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(1u, st.rx_packets);
}

/* --- observability -------------------------------------------------- */

/* The contents of @path, NUL-terminated, at most @max bytes; or NULL. */
static char *read_all(const char *path, size_t max)
{
	char *buf = malloc(max + 1);
	size_t len = 0;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (len < max && (n = read(fd, buf + len, max - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

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
	struct nvx_srq_release rel;
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
	for (i = 0; i < 60; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 200, SPORT, i));
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
	for (i = 0; i < 65; i++)
		ASSERT_EQ(0, send_frame(&self->nic, 1024, SPORT, i));
	ASSERT_EQ(0, wait_accounted(s, 65, &st));
	EXPECT_EQ(64u, st.rx_packets);
	EXPECT_EQ(1u, st.drops_no_buf);
	EXPECT_EQ(0u, st.fillers);
	EXPECT_EQ(0u, st.bufs_returned);
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
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(4u, rel.released);
	EXPECT_EQ(0u, rel.garbage);
	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_EQ(4u, st.bufs_returned);
	EXPECT_EQ(4u * 64, st.posted_strides);
	srq_close(s);

	ASSERT_EQ(0, srq_trace_enable(dir, "0"));
	snprintf(path, sizeof(path), "%strace", dir);
	text = read_all(path, 8 << 20);
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
	struct nvx_srq_release rel;
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
	ASSERT_EQ(0, srq_release(s, &rel));
	EXPECT_EQ(112u, rel.released);
	EXPECT_EQ(1u, rel.garbage);

	ASSERT_EQ(0, srq_stats(s, NVX_SRQ_ALL_QUEUES, &st));
	EXPECT_LE(1u, st.refills);
	EXPECT_EQ(7u, st.bufs_returned);
	EXPECT_EQ(112u, st.released);
	EXPECT_EQ(1u, st.release_garbage);
	EXPECT_EQ(7u, st.bufs_posted);
	EXPECT_EQ(1u, st.bufs_filling);
	EXPECT_EQ(0u, st.bufs_held);
	EXPECT_EQ(7u * 64 + 64 - 15, st.posted_strides);
	EXPECT_EQ(111u, st.rx_packets);
	EXPECT_EQ(1u, st.fillers);
	EXPECT_EQ(4u, st.drops_no_buf);
	EXPECT_EQ(2u, st.drops_cq_full);

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

TEST_HARNESS_MAIN
