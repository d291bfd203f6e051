// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the nvx selftest group "srq": see include/srq_util.h.
 */
#include "srq_util.h"

/* --- helpers: the pool ---------------------------------------------- */

/**
 * srq_grant() - A grant fd of at least @bytes, or -errno
 * @fd: an open /dev/nvx
 * @bytes: the size wanted
 */
int srq_grant(int fd, uint64_t bytes)
{
	return srq_grant_flags(fd, bytes, 0);
}

/**
 * srq_grant_flags() - srq_grant() with more NVX_GRANT_* flags
 * @fd: an open /dev/nvx
 * @bytes: the grant's size
 * @flags: NVX_GRANT_* flags besides CLOEXEC (NVX_GRANT_BLOCKS)
 *
 * Return: the grant's fd, or -errno.
 */
int srq_grant_flags(int fd, uint64_t bytes, uint32_t flags)
{
	struct nvx_grant_create g = {
		.flags = NVX_GRANT_CLOEXEC | flags,
		.node = NVX_NODE_ANY,
		.bytes = bytes,
	};
	int ret = nvx_ioctl(fd, NVX_IOC_GRANT, &g);

	return ret ? ret : g.fd;
}

/* --- helpers: the NIC and frames ------------------------------------ */

/**
 * sh() - Run a shell command built from @fmt: its exit status, or -1
 * @fmt: a printf() format, then its arguments
 */
int __attribute__((format(printf, 1, 2))) sh(const char *fmt, ...)
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

/**
 * nic_destroy() - delete the NIC pair of a test, if it is ours
 * @n: the NIC pair
 */
void nic_destroy(struct nic *n)
{
	if (n->tx >= 0)
		close(n->tx);
	n->tx = -1;
	if (n->alive)
		sh("ip link del %s", n->name);
	n->alive = false;
}

/**
 * nic_create_as() - create and bring up a NIC pair
 * @n: the NIC pair to fill in
 * @prefix: the start of the NIC's name
 * @leftover: delete a NIC of this name left by an earlier run first
 *
 * Create the pair NAME/NAMEp, NAME being @prefix and the pid, bring both up and
 * open the sending socket: 0, or a negative step number (everything undone).
 * @leftover: first delete a NAME left by an earlier run that died with this
 * pid.
 */
int nic_create_as(struct nic *n, const char *prefix, bool leftover)
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

/**
 * nic_create() - create the NIC pair of a test
 * @n: the NIC pair to fill in
 */
int nic_create(struct nic *n)
{
	return nic_create_as(n, "nvs", true);
}

/**
 * put16() - store a 16-bit value in network order
 * @p: where to write
 * @v: the value, in host order
 */
void put16(unsigned char *p, uint16_t v)
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

/**
 * send_frame() - Send the test frame (@len, @sport, @seq) into NAME
 * @n: the NIC pair
 * @len: the frame's length
 * @sport: its UDP source port (its flow)
 * @seq: its sequence number
 *
 * Return: 0 or -errno.
 */
int send_frame(const struct nic *n, unsigned int len, uint16_t sport,
	       uint32_t seq)
{
	unsigned char f[MAX_FRAME];

	build_frame(n, f, len, sport, seq);
	return send_raw(n, f, len);
}

/**
 * send_frame_to() - Send the test frame (@len, @sport, @seq) to other addresses
 * @n: the NIC pair
 * @dmac: its destination MAC, or NULL for NAME's
 * @dip: its destination IPv4 address (host order), or 0 for 10.0.0.2
 * @len: the frame's length
 * @sport: its UDP source port (its flow)
 * @seq: its sequence number
 *
 * Return: 0 or -errno.
 */
int send_frame_to(const struct nic *n, const unsigned char *dmac,
		  uint32_t dip, unsigned int len, uint16_t sport, uint32_t seq)
{
	unsigned char f[MAX_FRAME], *ip = f + ETH_HDR;

	build_frame(n, f, len, sport, seq);
	if (dmac)
		memcpy(f, dmac, ETH_ALEN);
	if (dip) {
		put32(ip + 16, dip);
		put16(ip + 10, 0);
		put16(ip + 10, ip_csum(ip, IP_HDR));
	}
	return send_raw(n, f, len);
}

/**
 * send_arp() - Send a broadcast ARP request for @tip into NAME
 * @n: the NIC pair
 * @tip: the address asked for (host order)
 *
 * From the peer (10.0.0.1), 60 bytes (the Ethernet minimum).
 *
 * Return: 0 or -errno.
 */
int send_arp(const struct nic *n, uint32_t tip)
{
	unsigned char f[ARP_FRAME] = { 0 };

	memset(f, 0xff, ETH_ALEN);
	memcpy(f + ETH_ALEN, n->peer_mac, ETH_ALEN);
	put16(f + 12, ETH_P_ARP);
	put16(f + 14, 1);		/* Ethernet */
	put16(f + 16, ETH_P_IP);
	f[18] = ETH_ALEN;
	f[19] = 4;
	put16(f + 20, 1);		/* request */
	memcpy(f + 22, n->peer_mac, ETH_ALEN);
	put32(f + 28, 0x0a000001);
	put32(f + 38, tip);
	return send_raw(n, f, sizeof(f));
}

/**
 * send_frames() - Send @count test frames of @len bytes, seq 0 and up
 * @n: the NIC pair
 * @count: how many
 * @len: each frame's length
 * @sport: their UDP source port (their flow)
 *
 * Stops at the first frame that cannot be sent.
 *
 * Return: 0 or -errno.
 */
int send_frames(const struct nic *n, uint32_t count, unsigned int len,
		uint16_t sport)
{
	uint32_t seq;
	int ret;

	for (seq = 0; seq < count; seq++) {
		ret = send_frame(n, len, sport, seq);
		if (ret)
			return ret;
	}
	return 0;
}

/* --- helpers: the set ----------------------------------------------- */

/**
 * srq_init() - mark a set as not open
 * @s: the set
 */
void srq_init(struct srq *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->ring = MAP_FAILED;
	s->bufs = MAP_FAILED;
	s->grant = MAP_FAILED;
}

static void srq_unmap(struct srq *s)
{
	if (s->grant != MAP_FAILED) {
		/* the rings and buffers are the grant's */
		munmap(s->grant, s->grant_bytes);
		s->ring = MAP_FAILED;
		s->bufs = MAP_FAILED;
	}
	s->grant = MAP_FAILED;
	if (s->ring != MAP_FAILED)
		munmap(s->ring, s->c.layout.ring_bytes);
	if (s->bufs != MAP_FAILED)
		munmap((void *)s->bufs, s->c.layout.buf_bytes);
	s->ring = MAP_FAILED;
	s->bufs = MAP_FAILED;
}

/**
 * srq_close() - unmap and close a set, if open
 * @s: the set
 */
void srq_close(struct srq *s)
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

/**
 * srq_open() - Create a set on @ifindex with a grant of its own (closed again
 * @dev: an open /dev/nvx
 * @s: the set to open and map
 * @ifindex: the NIC's ifindex
 * @p: the set's parameters (0s for the defaults)
 * @flags: NVX_SRQ_* creation flags
 *
 * The set holds its own reference), and map it: 0 or -errno.
 */
int srq_open(int dev, struct srq *s, int ifindex,
	     const struct nvx_srq_params *p, uint32_t flags)
{
	return srq_open_rule(dev, s, ifindex, p, flags, 0, NULL, 0);
}

/**
 * srq_open_rule() - srq_open() for a set with a steering rule
 * @dev: an open /dev/nvx
 * @s: the set to open and map
 * @ifindex: the NIC's ifindex
 * @p: the set's parameters (0s for the defaults)
 * @flags: NVX_SRQ_* creation flags
 * @match: NVX_SRQ_MATCH_* (0: the NIC's catch-all set)
 * @mac: the destination MAC of NVX_SRQ_MATCH_MAC, or NULL
 * @ip4: the destination of NVX_SRQ_MATCH_IP4 (host order), or 0
 *
 * Return: 0 or -errno.
 */
int srq_open_rule(int dev, struct srq *s, int ifindex,
		  const struct nvx_srq_params *p, uint32_t flags,
		  uint32_t match, const unsigned char *mac, uint32_t ip4)
{
	uint64_t bytes;
	int g, ret;

	srq_init(s);
	s->c.flags = flags;
	s->c.ifindex = ifindex;
	s->c.params = *p;
	s->c.match = match;
	s->c.ip4 = htonl(ip4);
	if (mac)
		memcpy(s->c.mac, mac, ETH_ALEN);
	bytes = (uint64_t)(p->nr_bufs ?: NVX_SRQ_DEF_NR_BUFS) *
		(p->buf_size ?: NVX_SRQ_DEF_BUF_SIZE);
	g = srq_grant(dev, bytes);
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

/**
 * srq_ring_bytes() - the ring area a set of shape @p has
 * @p: the parameters, 0s for the defaults (nr_queues set)
 *
 * As srq.rst lays it out: per queue a 128-byte header and cq_entries
 * 16-byte completions, then per release ring the header and rel_entries
 * 8-byte entries, in whole pages.
 */
uint64_t srq_ring_bytes(const struct nvx_srq_params *p)
{
	uint64_t cq = p->cq_entries ?: NVX_SRQ_DEF_CQ_ENTRIES;
	uint64_t rel = p->rel_entries ?: NVX_SRQ_DEF_REL_ENTRIES;
	uint64_t nrel = p->nr_rel_rings ?: p->nr_queues;
	uint64_t bytes;

	bytes = p->nr_queues * (sizeof(struct nvx_srq_ring) +
				cq * sizeof(struct nvx_srq_cqe)) +
		nrel * (sizeof(struct nvx_srq_ring) +
			rel * sizeof(struct nvx_srq_rel));
	return (bytes + PAGE - 1) / PAGE * PAGE;
}

/**
 * srq_open_in_grant() - Create a set whose rings are in its grant
 * @dev: an open /dev/nvx
 * @s: the set
 * @ifindex: the NIC's ifindex
 * @p: the set's parameters
 * @grant_bytes: the grant's size
 * @buf_off: grant_offset: buffer 0
 * @ring_off: ring_offset: the ring area
 * @fill: a byte written over the ring area's place before the create, or
 *	-1 for none
 * @grant_flags: NVX_GRANT_* flags of the grant (NVX_GRANT_BLOCKS)
 *
 * The grant is mapped read-write, as a user VM has its memory, before
 * the set is made on it (NVX_SRQ_RINGS_IN_GRANT); @s->ring and @s->bufs
 * point into that mapping. Return: 0 or -errno (the create's).
 */
int srq_open_in_grant(int dev, struct srq *s, int ifindex,
		      const struct nvx_srq_params *p, uint64_t grant_bytes,
		      uint64_t buf_off, uint64_t ring_off, int fill,
		      uint32_t grant_flags)
{
	int g, ret;

	srq_init(s);
	g = srq_grant_flags(dev, grant_bytes, grant_flags);
	if (g < 0)
		return g;
	s->grant = mmap(NULL, grant_bytes, PROT_READ | PROT_WRITE,
			MAP_SHARED, g, 0);
	if (s->grant == MAP_FAILED) {
		ret = -errno;
		close(g);
		return ret;
	}
	s->grant_bytes = grant_bytes;
	if (fill >= 0 && ring_off < grant_bytes)
		memset(s->grant + ring_off, fill,
		       grant_bytes - ring_off < srq_ring_bytes(p) ?
		       grant_bytes - ring_off : srq_ring_bytes(p));
	s->c.flags = NVX_SRQ_RINGS_IN_GRANT;
	s->c.ifindex = ifindex;
	s->c.params = *p;
	s->c.grant_fd = g;
	s->c.grant_offset = buf_off;
	s->c.ring_offset = ring_off;
	ret = nvx_ioctl(dev, NVX_IOC_SRQ_CREATE, &s->c);
	close(g);
	if (ret) {
		srq_close(s);
		return ret;
	}
	s->fd = s->c.fd;
	s->ring = s->grant + ring_off;
	s->bufs = s->grant + buf_off;
	s->spb = s->c.params.buf_size / s->c.params.stride_size;
	return 0;
}

/* Ring @i of the rings of @bytes each at @off in the set's ring area. */
static struct nvx_srq_ring *ring_hdr(const struct srq *s, uint64_t off,
				     uint64_t bytes, uint32_t i)
{
	return (struct nvx_srq_ring *)(s->ring + off + i * bytes);
}

/* Entry @i of the ring at @h: @n entries (a power of 2) of @size bytes. */
static void *ring_ent(struct nvx_srq_ring *h, uint32_t n, size_t size,
		      uint32_t i)
{
	return (char *)(h + 1) + (size_t)(i & (n - 1)) * size;
}

/**
 * cq_hdr() - the header of a completion ring
 * @s: the set
 * @q: a queue index
 */
struct nvx_srq_ring *cq_hdr(const struct srq *s, uint32_t q)
{
	return ring_hdr(s, s->c.layout.cq_offset, s->c.layout.cq_bytes, q);
}

/**
 * rel_hdr() - the header of a release ring
 * @s: the set
 * @r: a release ring index
 */
struct nvx_srq_ring *rel_hdr(const struct srq *s, uint32_t r)
{
	return ring_hdr(s, s->c.layout.rel_offset, s->c.layout.rel_bytes, r);
}

/**
 * cq_prod() - the producer index of a completion ring
 * @s: the set
 * @q: a queue index
 */
uint32_t cq_prod(const struct srq *s, uint32_t q)
{
	return __atomic_load_n(&cq_hdr(s, q)->prod, __ATOMIC_ACQUIRE);
}

static uint32_t cq_cons(const struct srq *s, uint32_t q)
{
	return __atomic_load_n(&cq_hdr(s, q)->cons, __ATOMIC_RELAXED);
}

/**
 * cq_set_cons() - publish a completion ring's consumer index
 * @s: the set
 * @q: a queue index
 * @cons: the new consumer index
 */
void cq_set_cons(const struct srq *s, uint32_t q, uint32_t cons)
{
	__atomic_store_n(&cq_hdr(s, q)->cons, cons, __ATOMIC_RELEASE);
}

/**
 * cq_pending() - Completions waiting in queue @q
 * @s: the set
 * @q: a queue index
 */
uint32_t cq_pending(const struct srq *s, uint32_t q)
{
	return cq_prod(s, q) - cq_cons(s, q);
}

/**
 * cq_wait() - Wait up to WAIT_MS for @n completions in queue @q
 * @s: the set
 * @q: a queue index
 * @n: how many completions to wait for
 *
 * How many there are.
 */
uint32_t cq_wait(const struct srq *s, uint32_t q, uint32_t n)
{
	uint64_t end = now_ms() + WAIT_MS;

	while (cq_pending(s, q) < n && now_ms() < end)
		usleep(1000);
	return cq_pending(s, q);
}

/**
 * cq_pop() - Take the next completion of queue @q, if there is one
 * @s: the set
 * @q: a queue index
 * @e: a completion
 */
bool cq_pop(const struct srq *s, uint32_t q, struct nvx_srq_cqe *e)
{
	uint32_t cons = cq_cons(s, q);

	if (cq_prod(s, q) == cons)
		return false;
	*e = *(struct nvx_srq_cqe *)ring_ent(cq_hdr(s, q),
					     s->c.params.cq_entries,
					     sizeof(*e), cons);
	cq_set_cons(s, q, cons + 1);
	return true;
}

/**
 * cq_next() - The next completion of queue @q, waiting for it: 0 or -ETIMEDOUT
 * @s: the set
 * @q: a queue index
 * @e: a completion
 */
int cq_next(const struct srq *s, uint32_t q, struct nvx_srq_cqe *e)
{
	if (cq_wait(s, q, 1) < 1)
		return -ETIMEDOUT;
	cq_pop(s, q, e);
	return 0;
}

/**
 * rel_push() - Queue one release entry in ring @r
 * @s: the set
 * @r: a release ring index
 * @buf: a buffer index
 * @strides: strides to release
 * @flags: the entry's flags
 *
 * Return: 0, or -ENOSPC when it is full.
 */
int rel_push(const struct srq *s, uint32_t r, uint32_t buf,
	     uint32_t strides, uint16_t flags)
{
	struct nvx_srq_ring *h = rel_hdr(s, r);
	uint32_t prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
	uint32_t cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);
	struct nvx_srq_rel *e;

	if (prod - cons >= s->c.params.rel_entries)
		return -ENOSPC;
	e = ring_ent(h, s->c.params.rel_entries, sizeof(*e), prod);
	e->buf = buf;
	e->strides = strides;
	e->flags = flags;
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}

/**
 * srq_release() - NVX_SRQ_IOC_RELEASE on a set
 * @s: the set
 * @out: where NVX_SRQ_IOC_RELEASE's result goes
 */
int srq_release(const struct srq *s, struct nvx_srq_release *out)
{
	struct nvx_srq_release r = { 0 };
	int ret = nvx_ioctl(s->fd, NVX_SRQ_IOC_RELEASE, &r);

	if (out)
		*out = r;
	return ret;
}

/**
 * rel_give() - release strides, draining the rings when full
 * @s: the set
 * @r: a release ring index
 * @buf: a buffer index
 * @strides: strides to release
 *
 * rel_push(), draining the rings through NVX_SRQ_IOC_RELEASE when full.
 */
int rel_give(const struct srq *s, uint32_t r, uint32_t buf,
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

/**
 * srq_stats() - NVX_SRQ_IOC_STATS on a set
 * @s: the set
 * @q: a queue index, or NVX_SRQ_ALL_QUEUES
 * @st: where the counters go
 */
int srq_stats(const struct srq *s, uint32_t q, struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = q;
	return nvx_ioctl(s->fd, NVX_SRQ_IOC_STATS, st);
}

/**
 * srq_steer() - NVX_SRQ_IOC_STEER on a set
 * @s: the set
 * @table: the RSS indirection table
 * @n: its number of entries
 */
int srq_steer(const struct srq *s, const uint16_t *table, uint32_t n)
{
	struct nvx_srq_steer st = {
		.nr_entries = n,
		.table = (uintptr_t)table,
	};

	return nvx_ioctl(s->fd, NVX_SRQ_IOC_STEER, &st);
}

/**
 * srq_steer_all() - steer every flow of @s to queue @q
 * @s: the set
 * @q: a queue of it
 */
int srq_steer_all(const struct srq *s, uint16_t q)
{
	uint16_t table[NVX_SRQ_RSS_ENTRIES];
	unsigned int i;

	for (i = 0; i < NVX_SRQ_RSS_ENTRIES; i++)
		table[i] = q;
	return srq_steer(s, table, NVX_SRQ_RSS_ENTRIES);
}

/**
 * wait_accounted() - wait until frames sent are accounted for
 * @s: the set
 * @sent: frames sent
 * @st: where the last counters go
 *
 * Wait until @sent frames are accounted for (landed or dropped).
 */
int wait_accounted(const struct srq *s, uint64_t sent,
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

/**
 * wait_detached() - Wait until no set is attached to @ifindex
 * @dev: an open /dev/nvx
 * @ifindex: the NIC's ifindex
 *
 * Return: 0, or INFO's last answer.
 */
int wait_detached(int dev, int ifindex)
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

/**
 * frame_at() - the start of a completion's frame in the buffers
 * @s: the set
 * @e: the completion
 */
const unsigned char *frame_at(const struct srq *s,
			      const struct nvx_srq_cqe *e)
{
	return s->bufs + (size_t)e->buf * s->c.params.buf_size +
	       (size_t)e->stride * s->c.params.stride_size;
}

/**
 * strides_for() - the strides a frame of some length takes
 * @s: the set
 * @len: a frame length
 */
uint32_t strides_for(const struct srq *s, uint32_t len)
{
	return (len + s->c.params.stride_size - 1) / s->c.params.stride_size;
}

/**
 * bytes_match() - whether a completion's bytes are the frame sent
 * @n: the NIC pair
 * @s: the set
 * @e: the completion
 * @len: the frame's length
 * @sport: its UDP source port (its flow)
 * @seq: its sequence number
 *
 * Do the bytes at @e's place hold the frame (@len, @sport, @seq)?
 */
bool bytes_match(const struct nic *n, const struct srq *s,
		 const struct nvx_srq_cqe *e, unsigned int len,
		 uint16_t sport, uint32_t seq)
{
	unsigned char f[MAX_FRAME];

	if (e->buf >= s->c.params.nr_bufs)
		return false;
	build_frame(n, f, len, sport, seq);
	return !memcmp(frame_at(s, e), f, e->len < len ? e->len : len);
}

/**
 * cqe_frame_ok() - Is @e a complete, untruncated test frame? Its tag goes to @t
 * @n: the NIC pair
 * @s: the set
 * @e: a completion
 * @t: where the frame's tag goes
 *
 * Used where the test does not know which frame comes next.
 */
bool cqe_frame_ok(const struct nic *n, const struct srq *s,
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

/**
 * track_init() - start tracking the packing of each queue
 * @t: the tracker
 * @n: the number of queues
 */
void track_init(struct qtrack *t, unsigned int n)
{
	while (n--) {
		t[n].cur = -1;
		t[n].next = 0;
	}
}

/**
 * track() - check a completion against its queue's packing
 * @t: the tracker
 * @e: a completion
 * @spb: strides per buffer
 *
 * Does @e follow what the queue did before? A queue fills its buffer stride
 * after stride, closes it with a filler when a frame does not fit, and starts a
 * buffer only when the one before is complete.
 */
bool track(struct qtrack *t, const struct nvx_srq_cqe *e, uint32_t spb)
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

/**
 * unused_ifindex() - An ifindex that names no device
 */
int unused_ifindex(void)
{
	char name[IFNAMSIZ];
	int i;

	for (i = 1000000; i < 1001000; i++)
		if (!if_indextoname(i, name))
			return i;
	return 0x7ffffff0;
}

/**
 * srq_query() - NVX_IOC_SRQ_QUERY of the set on @ifindex, all queues
 * @dev: an open /dev/nvx
 * @ifindex: the NIC's ifindex
 * @st: where the counters go
 *
 * Return: 0 or -errno; the counters in *@st.
 */
int srq_query(int dev, int ifindex, struct nvx_srq_stats *st)
{
	struct nvx_srq_query q = { .ifindex = ifindex };
	int ret;

	q.stats.queue = NVX_SRQ_ALL_QUEUES;
	ret = nvx_ioctl(dev, NVX_IOC_SRQ_QUERY, &q);
	*st = q.stats;
	return ret;
}

/**
 * srq_shut() - Close an open, mapped set
 * @s: the set
 * @fd_first: close the fd before the mappings
 *
 * The fd first when @fd_first (the last munmap() then drops the last
 * reference), else the mappings first (close() drops it). 0, or the first
 * -errno.
 */
int srq_shut(struct srq *s, bool fd_first)
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

/**
 * cq_wait_any() - Wait up to @ms for a completion in any queue of @s
 * @s: the set
 * @ms: how long to wait, in milliseconds
 */
bool cq_wait_any(const struct srq *s, unsigned int ms)
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

/**
 * blast_stop() - Stop and join the senders that run; harmless when none does
 * @b: the senders
 */
void blast_stop(struct blast *b)
{
	int i;

	__atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < BLAST_THREADS; i++) {
		if (b->t[i].running)
			pthread_join(b->t[i].th, NULL);
		b->t[i].running = false;
	}
}

/**
 * blast_start() - Start BLAST_THREADS senders into @n
 * @b: the senders
 * @n: the NIC pair to send on
 *
 * Return: 0, or -errno with none running.
 */
int blast_start(struct blast *b, const struct nic *n)
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

/**
 * blast_sent() - Frames the (stopped) senders sent
 * @b: the senders
 * @refused: where the number of refused frames goes
 * @err: where the first sender error goes (0 if none)
 *
 * The first error of one in @err.
 */
uint64_t blast_sent(const struct blast *b, uint64_t *refused,
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

/**
 * srq_tracefs() - find the tracefs directory with the SRQ events
 *
 * The tracefs directory (with its '/') that has the SRQ events, or NULL.
 */
const char *srq_tracefs(void)
{
	return tracefs_with("nvx_srq_filler");
}

/**
 * srq_trace_enable() - Write @val to every SRQ event's enable file
 * @dir: the tracefs directory, from srq_tracefs()
 * @val: "1" to enable, "0" to disable
 *
 * Return: 0, or the first -errno.
 */
int srq_trace_enable(const char *dir, const char *val)
{
	return trace_events_enable(dir, srq_events, ARRAY_SIZE(srq_events),
				   val);
}

/**
 * allowed_cpus() - The CPUs this process may run on: how many, listed in @cpus
 * @cpus: where the CPU numbers go
 * @max: the room at @cpus
 */
int allowed_cpus(int *cpus, int max)
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

/**
 * releaser_thread() - Give back a list of completions through one ring
 * @arg: its struct releaser
 *
 * Pushes the entries to its release ring, calling RELEASE after every
 * eighth; pinned to its CPU first unless that is -1.
 *
 * Return: NULL.
 */
void *releaser_thread(void *arg)
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
