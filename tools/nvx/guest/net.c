// SPDX-License-Identifier: GPL-2.0
/*
 * nvx guest runtime, networking: see net.h. One receive queue, one
 * release ring, one TX ring, all in this VM's memory (the network page,
 * tools/nvx/lib/nvx_vmnet.h, says where).
 *
 * Receive: a completion at cq_cons is valid once the ring's prod (the
 * kernel's, release) has passed it; the frame is read in its buffer,
 * where the NIC wrote it. Its strides are given back through the release
 * ring, summed per buffer (a buffer's frames come in order) and written
 * when a frame of the next buffer comes, so that the release ring needs
 * about one entry per buffer, not per frame: the kernel takes entries
 * only when it refills, and a full release ring is never waited on (the
 * strides wait in their counter). Fillers are the kernel's.
 *
 * Notification: the kernel signals the VM's interrupt when it writes a
 * completion into a ring whose cons it found equal to prod. While
 * polling, the published cons stays two behind ours (no interrupt, no
 * exit, however many frames come: see cq_publish()); before sleeping the whole cons is
 * published, then the ring is looked at once more, then hlt: a frame
 * that comes in between raises the interrupt, which wakes the hlt.
 *
 * Nothing the kernel wrote is trusted: a completion naming a buffer or
 * stride out of range is dropped and counted (rx_bad).
 */
#include "net.h"
#include <nvx/srq.h>

#define NET_SPIN_US	200		/* polling before a sleep */
#define NET_FLUSH_US	30		/* a frame this soon joins the batch */
#define NET_TX_BATCH	32		/* posted frames that kick at once */
#define ARP_SLOTS	8
#define ETH_HLEN	14
#define ETH_MIN		60		/* frames are padded to this */
#define ETH_P_IP	0x0800
#define ETH_P_ARP	0x0806
#define IPPROTO_ICMP	1
#define IPPROTO_UDP	17
#define UDP_HDRS	(ETH_HLEN + 20 + 8)

static const struct nvx_vmnet_info *ni;
static struct nvx_srq_ring *cqh, *relh;
static struct nvx_srq_cqe *cqe;
static struct nvx_srq_rel *rel;
static struct nvx_srq_tx_hdr *txh;
static struct nvx_srq_txd *txd;
static unsigned char *bufs, *slots;
static __u32 cq_cons, rel_prod, tx_prod, tx_kicked, ip_id;
static unsigned long long tx_first_ns;	/* the oldest frame not kicked */
static int poll_always, have_irq, hold;
static struct net_stats st;

/* the frame udp_recv() last returned, and strides waiting for release */
static __u32 held_buf, held_strides;
static __u32 pend_buf;
static unsigned short *pend;	/* per buffer: strides not yet released */

static struct {
	__u32 ip;
	unsigned char mac[6];
} arp_cache[ARP_SLOTS];
static unsigned int arp_next;

static void cq_publish(int whole);
static void rel_flush(void);

static const unsigned char bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* ------------------------------------------------------------ bytes --- */

static unsigned int get16(const unsigned char *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

static void put16(unsigned char *p, unsigned int v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static __u32 get32(const unsigned char *p)	/* as stored: network order */
{
	__u32 v;

	memcpy(&v, p, 4);
	return v;
}

static unsigned int csum(const unsigned char *p, unsigned int len)
{
	unsigned long sum = 0;
	unsigned int i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (unsigned int)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* ------------------------------------------------------------- init --- */

const struct nvx_vmnet_info *net_info(void)
{
	return ni;
}

const struct net_stats *net_stats(void)
{
	return &st;
}

void net_set_poll(int always)
{
	poll_always = always;
}

void net_set_hold(int on)
{
	hold = on;
	if (!on && pend)
		rel_flush();
}

static int pow2(__u32 v)
{
	return v && !(v & (v - 1));
}

/* The page's areas inside the net area, which lies inside RAM. */
static int net_sane(const struct nvx_vmnet_info *p)
{
	unsigned long long a = p->area_gpa, e = a + p->area_size;

	return p->version == NVX_VMNET_VERSION && e > a &&
	       e <= ctrl()->mem_size && pow2(p->cq_entries) &&
	       pow2(p->rel_entries) && pow2(p->tx_entries) &&
	       pow2(p->buf_size) && pow2(p->stride) &&
	       p->stride <= p->buf_size && p->nr_bufs &&
	       p->buf_gpa >= a &&
	       p->buf_gpa + (unsigned long long)p->nr_bufs * p->buf_size <= e &&
	       p->tx_gpa >= a && p->tx_gpa + sizeof(struct nvx_srq_tx_hdr) +
	       (unsigned long long)p->tx_entries * sizeof(struct nvx_srq_txd) <= e &&
	       p->slot_gpa >= a && p->slot_size >= ETH_MIN &&
	       p->slot_gpa + (unsigned long long)p->tx_entries * p->slot_size <= e &&
	       p->ring_gpa >= a && p->ring_gpa + p->cq_offset +
	       sizeof(struct nvx_srq_ring) +
	       (unsigned long long)p->cq_entries * sizeof(struct nvx_srq_cqe) <= e &&
	       p->ring_gpa + p->rel_offset + sizeof(struct nvx_srq_ring) +
	       (unsigned long long)p->rel_entries * sizeof(struct nvx_srq_rel) <= e &&
	       p->mtu >= 68 && p->mtu + ETH_HLEN <= p->slot_size;
}

int net_init(void)
{
	const struct nvx_vmnet_info *p = (const void *)NVX_VMNET_INFO_GPA;
	unsigned char *ring;

	if (p->magic != NVX_VMNET_MAGIC || !net_sane(p))
		return -ENODEV;
	/* at most NVX_SRQ_MAX_STRIDES per buffer: a short is enough */
	pend = alloc(p->nr_bufs * sizeof(*pend), 0);
	if (!pend)
		return -ENOMEM;
	memset(pend, 0, p->nr_bufs * sizeof(*pend));
	ni = p;
	ring = (unsigned char *)(unsigned long)ni->ring_gpa;
	cqh = (struct nvx_srq_ring *)(ring + ni->cq_offset);
	cqe = (struct nvx_srq_cqe *)(cqh + 1);
	relh = (struct nvx_srq_ring *)(ring + ni->rel_offset);
	rel = (struct nvx_srq_rel *)(relh + 1);
	txh = (struct nvx_srq_tx_hdr *)(unsigned long)ni->tx_gpa;
	txd = (struct nvx_srq_txd *)(txh + 1);
	bufs = (unsigned char *)(unsigned long)ni->buf_gpa;
	slots = (unsigned char *)(unsigned long)ni->slot_gpa;
	/* the kernel zeroed the rings: every index starts at 0 */
	cq_cons = __atomic_load_n(&cqh->cons, __ATOMIC_RELAXED);
	rel_prod = __atomic_load_n(&relh->prod, __ATOMIC_RELAXED);
	tx_prod = __atomic_load_n(&txh->prod, __ATOMIC_RELAXED);
	tx_kicked = tx_prod;
	/* not armed: the first frame raises no interrupt unless we sleep */
	cq_publish(0);
	have_irq = ctrl()->irq_vector >= 32 && ctrl()->irq_vector < 255;
	return 0;
}

/* ------------------------------------------------------------- send --- */

/* The port write: the VMM sends every posted frame before it returns. */
static void net_kick(void)
{
	tx_kicked = tx_prod;
	st.kicks++;
	port_out32(NVX_VMNET_PORT_KICK, 0);
}

void net_flush(void)
{
	if (ni && tx_prod != tx_kicked)
		net_kick();
}

/* A free TX slot for a frame, or NULL (-EIO: stopped, -EAGAIN: full). */
static unsigned char *tx_slot(int *err)
{
	if (__atomic_load_n(&txh->stopped, __ATOMIC_ACQUIRE)) {
		*err = -EIO;
		return NULL;
	}
	if (tx_prod - __atomic_load_n(&txh->cons, __ATOMIC_ACQUIRE) >=
	    ni->tx_entries) {
		st.tx_full++;
		/* again even if kicked: a kick that failed left them posted */
		net_kick();
		if (tx_prod - __atomic_load_n(&txh->cons, __ATOMIC_ACQUIRE) >=
		    ni->tx_entries) {
			*err = __atomic_load_n(&txh->stopped, __ATOMIC_ACQUIRE) ?
			       -EIO : -EAGAIN;
			return NULL;
		}
	}
	return slots + (unsigned long)(tx_prod & (ni->tx_entries - 1)) *
		       ni->slot_size;
}

/* Post the frame built in tx_slot()'s slot. */
static void tx_post(unsigned char *f, unsigned int len)
{
	struct nvx_srq_txd *d = &txd[tx_prod & (ni->tx_entries - 1)];

	if (len < ETH_MIN) {
		memset(f + len, 0, ETH_MIN - len);
		len = ETH_MIN;
	}
	d->addr = ni->slot_gpa + (unsigned long)(f - slots);
	d->len = len;
	d->flags = 0;
	if (tx_prod == tx_kicked)
		tx_first_ns = clock_ns();
	tx_prod++;
	__atomic_store_n(&txh->prod, tx_prod, __ATOMIC_RELEASE);
	st.tx_frames++;
}

static void eth_hdr(unsigned char *f, const unsigned char *dst,
		    unsigned int type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, ni->mac, 6);
	put16(f + 12, type);
}

static void ip_hdr(unsigned char *p, unsigned int len, unsigned int proto,
		   __u32 dst)
{
	p[0] = 0x45;
	p[1] = 0;
	put16(p + 2, len);
	put16(p + 4, ip_id++);
	put16(p + 6, 0x4000);	/* DF */
	p[8] = 64;
	p[9] = proto;
	put16(p + 10, 0);
	memcpy(p + 12, &ni->ip4, 4);
	memcpy(p + 16, &dst, 4);
	put16(p + 10, csum(p, 20));
}

static const unsigned char *arp_lookup(__u32 ip)
{
	unsigned int i;

	for (i = 0; i < ARP_SLOTS; i++)
		if (arp_cache[i].ip == ip)
			return arp_cache[i].mac;
	return NULL;
}

static void arp_learn(__u32 ip, const unsigned char *mac)
{
	unsigned int i;

	if (!ip || (mac[0] & 1))
		return;
	for (i = 0; i < ARP_SLOTS; i++)
		if (arp_cache[i].ip == ip)
			break;
	if (i == ARP_SLOTS)
		i = arp_next++ % ARP_SLOTS;
	arp_cache[i].ip = ip;
	memcpy(arp_cache[i].mac, mac, 6);
}

/* An ARP packet: @op 1 (request) or 2 (reply) to @tha/@tip. */
static int arp_send(unsigned int op, const unsigned char *dst,
		    const unsigned char *tha, __u32 tip)
{
	unsigned char *f;
	int err;

	f = tx_slot(&err);
	if (!f)
		return err;
	eth_hdr(f, dst, ETH_P_ARP);
	put16(f + 14, 1);		/* Ethernet */
	put16(f + 16, ETH_P_IP);
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, op);
	memcpy(f + 22, ni->mac, 6);
	memcpy(f + 28, &ni->ip4, 4);
	memcpy(f + 32, tha, 6);
	memcpy(f + 38, &tip, 4);
	tx_post(f, 42);
	return 0;
}

int udp_send(const unsigned char *mac, unsigned int ip, unsigned short sport,
	     unsigned short dport, const void *data, unsigned int len)
{
	static const unsigned char zero[6];
	unsigned char *f;
	int err;

	if (!ni)
		return -ENODEV;
	if (len > ni->mtu - 28)
		return -EMSGSIZE;
	if (!mac) {
		mac = arp_lookup(ip);
		if (!mac) {
			err = arp_send(1, bcast, zero, ip);
			net_flush();
			return err ? err : -EHOSTUNREACH;
		}
	}
	f = tx_slot(&err);
	if (!f)
		return err;
	eth_hdr(f, mac, ETH_P_IP);
	ip_hdr(f + ETH_HLEN, 28 + len, IPPROTO_UDP, ip);
	put16(f + 34, sport);
	put16(f + 36, dport);
	put16(f + 38, 8 + len);
	put16(f + 40, 0);	/* no checksum: IPv4 allows it */
	memcpy(f + UDP_HDRS, data, len);
	tx_post(f, UDP_HDRS + len);
	return 0;
}

/* ---------------------------------------------------------- receive --- */

/*
 * Publish cq_cons: whole before a sleep, two behind while polling. One
 * behind is not enough: the kernel publishes a completion, then reads
 * cons to see whether the ring was empty, and a guest that took that
 * completion in between has published its index by then.
 */
static void cq_publish(int whole)
{
	__atomic_store_n(&cqh->cons, whole ? cq_cons : cq_cons - 2,
			 __ATOMIC_RELEASE);
}

/*
 * Write release entries for every buffer with strides waiting, as far
 * as the ring has room; what does not fit waits for the next call (the
 * kernel takes entries when it refills: never wait for it here). Nothing
 * while holding (net_set_hold()).
 */
static void rel_flush(void)
{
	struct nvx_srq_rel *r;
	__u32 b;

	if (hold)
		return;
	for (b = 0; b < ni->nr_bufs; b++) {
		if (!pend[b])
			continue;
		if (rel_prod - __atomic_load_n(&relh->cons, __ATOMIC_ACQUIRE) >=
		    ni->rel_entries)
			break;
		r = &rel[rel_prod & (ni->rel_entries - 1)];
		r->buf = b;
		r->strides = pend[b];
		r->flags = 0;
		rel_prod++;
		pend[b] = 0;
	}
	__atomic_store_n(&relh->prod, rel_prod, __ATOMIC_RELEASE);
}

/*
 * Give back @strides of @buf. A buffer's frames come in order, so its
 * strides are summed until a frame of another buffer comes: about one
 * release entry per buffer, not one per frame.
 */
static void rel_add(__u32 buf, __u32 strides)
{
	if (pend_buf != buf)
		rel_flush();
	pend_buf = buf;
	pend[buf] += strides;
}

static void release_held(void)
{
	if (held_strides)
		rel_add(held_buf, held_strides);
	held_strides = 0;
}

static int cq_ready(void)
{
	return __atomic_load_n(&cqh->prod, __ATOMIC_ACQUIRE) != cq_cons;
}

/*
 * The next frame: 1 with *@f and *@len (its strides held), 0 when the
 * ring is empty.
 */
static int rx_frame(const unsigned char **f, unsigned int *len)
{
	struct nvx_srq_cqe e;
	unsigned long off;

	while (cq_ready()) {
		e = cqe[cq_cons & (ni->cq_entries - 1)];
		cq_cons++;
		cq_publish(0);
		if (e.flags & NVX_SRQ_CQE_FILLER) {
			/* the buffer is full: what waits for it can go */
			if (e.buf == pend_buf && pend && e.buf < ni->nr_bufs &&
			    pend[e.buf])
				rel_flush();
			continue;
		}
		off = (unsigned long)e.stride * ni->stride;
		if (e.buf >= ni->nr_bufs || !e.strides ||
		    off + e.len > ni->buf_size ||
		    (e.flags & NVX_SRQ_CQE_TRUNCATED)) {
			st.rx_bad++;
			if (e.buf < ni->nr_bufs && e.strides)
				rel_add(e.buf, e.strides);
			continue;
		}
		held_buf = e.buf;
		held_strides = e.strides;
		*f = bufs + (unsigned long)e.buf * ni->buf_size + off;
		*len = e.len;
		st.rx_frames++;
		return 1;
	}
	return 0;
}

/*
 * Poll for a while, then sleep until the interrupt (or the tick). What
 * was posted is sent first (a port write, an exit to the VMM), unless
 * fewer than NET_TX_BATCH wait, the oldest for less than NET_FLUSH_US,
 * and a frame comes meanwhile: its answer may go in the same kick.
 */
static void net_wait(void)
{
	unsigned long long end;

	if (tx_prod != tx_kicked && tx_prod - tx_kicked < NET_TX_BATCH) {
		end = tx_first_ns + NET_FLUSH_US * 1000ULL;
		while (clock_ns() < end)
			if (cq_ready())
				return;
	}
	net_flush();
	/*
	 * Interrupts off while polling (the message wait may have left
	 * them on): one that comes is taken only by the hlt it is for.
	 */
	asm volatile("cli" ::: "memory");
	end = clock_ns() + NET_SPIN_US * 1000ULL;
	while (!cq_ready()) {
		if (poll_always || !have_irq || clock_ns() < end) {
			cpu_relax();
			continue;
		}
		/* a buffer's last strides: the NIC may need it back */
		rel_flush();
		cq_publish(1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!cq_ready()) {
			st.halts++;
			if (halt() && cq_ready())
				st.irq_wakes++;
			halt_woke(!cq_ready());
		}
		end = clock_ns() + NET_SPIN_US * 1000ULL;
	}
}

static void arp_in(const unsigned char *f, unsigned int len)
{
	__u32 spa, tpa;

	if (len < 42 || get16(f + 14) != 1 || get16(f + 16) != ETH_P_IP ||
	    f[18] != 6 || f[19] != 4) {
		st.rx_bad++;
		return;
	}
	spa = get32(f + 28);
	tpa = get32(f + 38);
	arp_learn(spa, f + 22);
	if (get16(f + 20) == 1 && tpa == ni->ip4 &&
	    !arp_send(2, f + 22, f + 22, spa))
		st.rx_arp++;
}

/* Answer an echo request: its IP packet @p of @n bytes, @ihl long head. */
static void icmp_echo(const unsigned char *f, const unsigned char *p,
		      unsigned int n, unsigned int ihl)
{
	unsigned char *o;
	__u32 src = get32(p + 12);
	int err;

	if (n - ihl < 8 || p[ihl] != 8 || p[ihl + 1] != 0 || !src ||
	    csum(p + ihl, n - ihl) || 20 + n - ihl > ni->mtu) {
		st.rx_bad++;
		return;
	}
	o = tx_slot(&err);
	if (!o)
		return;
	eth_hdr(o, f + 6, ETH_P_IP);
	ip_hdr(o + ETH_HLEN, 20 + n - ihl, IPPROTO_ICMP, src);
	memcpy(o + ETH_HLEN + 20, p + ihl, n - ihl);
	o[ETH_HLEN + 20] = 0;		/* echo reply */
	put16(o + ETH_HLEN + 22, 0);
	put16(o + ETH_HLEN + 22, csum(o + ETH_HLEN + 20, n - ihl));
	tx_post(o, ETH_HLEN + 20 + n - ihl);
	st.rx_icmp++;
}

/* An IPv4 frame: 1 with @d for the app (UDP), 0 when done with. */
static int ip_in(const unsigned char *f, unsigned int len,
		 struct udp_dgram *d)
{
	const unsigned char *p = f + ETH_HLEN, *u;
	unsigned int ihl, n, ulen;
	__u32 src;

	if (len < ETH_HLEN + 20 || (p[0] >> 4) != 4)
		goto bad;
	ihl = (p[0] & 15) * 4;
	n = get16(p + 2);
	if (ihl < 20 || n < ihl || n > len - ETH_HLEN || csum(p, ihl) ||
	    (get16(p + 6) & 0x3fff) || get32(p + 16) != ni->ip4)
		goto bad;	/* short, broken, a fragment, not ours */
	src = get32(p + 12);
	arp_learn(src, f + 6);
	if (p[9] == IPPROTO_ICMP) {
		icmp_echo(f, p, n, ihl);
		return 0;
	}
	if (p[9] != IPPROTO_UDP || n - ihl < 8)
		goto bad;
	u = p + ihl;
	ulen = get16(u + 4);
	if (ulen < 8 || ulen > n - ihl)
		goto bad;
	memcpy(d->mac, f + 6, 6);
	d->ip = src;
	d->sport = get16(u);
	d->dport = get16(u + 2);
	d->data = u + 8;
	d->len = ulen - 8;
	return 1;
bad:
	st.rx_bad++;
	return 0;
}

int udp_recv(struct udp_dgram *d, int wait)
{
	const unsigned char *f;
	unsigned int len, type;

	if (!ni)
		return -ENODEV;
	release_held();
	for (;;) {
		if (!rx_frame(&f, &len)) {
			if (!wait)
				return -EAGAIN;
			net_wait();
			continue;
		}
		if (len < ETH_HLEN ||
		    (memcmp(f, ni->mac, 6) && memcmp(f, bcast, 6))) {
			st.rx_bad++;
			release_held();
			continue;
		}
		type = get16(f + 12);
		if (type == ETH_P_IP && ip_in(f, len, d)) {
			st.rx_udp++;
			return 0;
		}
		if (type == ETH_P_ARP)
			arp_in(f, len);
		else if (type != ETH_P_IP)
			st.rx_bad++;
		release_held();
	}
}
