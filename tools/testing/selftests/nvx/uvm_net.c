// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": packets straight into user VMs.
 *
 * A VM launched with a network (struct nvx_uvm_net) gets a shared RX
 * queue set in its own memory on an nvxsim NIC, steered to its IPv4
 * address; udp-echo.img answers UDP, ARP and ping on it. The host side
 * is the NIC's peer netdev with an address of the same subnet: an
 * ordinary UDP socket of this process talks to the guest.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/uio.h>
#include <nvx/srq.h>

#include "uvm_fixture.h"
#include "srq_util.h"

#define NET_PFX		"198.51.100."	/* TEST-NET-2 */
#define HOST_IP		NET_PFX "1"
#define GUEST_PORT	7
#define ECHO_WAIT_MS	20000		/* one echo, at most */

/* The NIC pair and its host address, made for each test. */
struct net_env {
	struct nic nic;
	bool up;
};

static int net_env_up(struct net_env *ne)
{
	/* a pair an earlier test left would take the subnet's route (NET_PFX) */
	sh("%s",
	   "for d in $(ip -o addr show to 198.51.100.0/24 | awk '{print $2}'); do d=${d%@*}; ip link del ${d%p} 2>/dev/null; done");
	if (nic_create_as(&ne->nic, "nvn", true))
		return -1;
	ne->up = true;
	if (sh("ip addr add %s/24 dev %s", HOST_IP, ne->nic.peer))
		return -2;
	return 0;
}

static void net_env_down(struct net_env *ne)
{
	if (ne->up)
		nic_destroy(&ne->nic);
	ne->up = false;
}

static uint32_t guest_ip(unsigned int last)
{
	char buf[32];
	struct in_addr a;

	snprintf(buf, sizeof(buf), NET_PFX "%u", last);
	inet_pton(AF_INET, buf, &a);
	return a.s_addr;
}

static void net_opts(struct nvx_uvm_net *n, const struct net_env *ne,
		     unsigned int last)
{
	memset(n, 0, sizeof(*n));
	n->ifindex = ne->nic.ifindex;
	n->ip4 = guest_ip(last);
	n->prefix = 24;
}

/* ------------------------------------------------------- the host side --- */

/*
 * A UDP client of one guest: @count datagrams of @size bytes (a 4-byte
 * sequence number, then a pattern of it), at most @window unanswered
 * (one until the first echo); each echo must be the next of ours, byte
 * for byte.
 */
struct pinger {
	uint32_t dst;		/* the guest, network order */
	unsigned int count, size, window;
	unsigned int pace_us;	/* a pause after each echo */
	unsigned int echoed;	/* written by the thread (atomic) */
	int stop;		/* end early, no error (atomic) */
	int err;
	int done;		/* the thread finished (atomic) */
	char why[160];
	pthread_t thread;
};

static void dgram_fill(unsigned char *p, unsigned int size, uint32_t seq)
{
	unsigned int i;

	memcpy(p, &seq, 4);
	for (i = 4; i < size; i++)
		p[i] = (unsigned char)(seq * 7 + i);
}

static int udp_client(uint32_t dst)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	a.sin_port = htons(GUEST_PORT);
	a.sin_addr.s_addr = dst;
	if (connect(s, (struct sockaddr *)&a, sizeof(a))) {
		close(s);
		return -1;
	}
	return s;
}

static void *pinger_run(void *arg)
{
	struct pinger *p = arg;
	unsigned char out[2048], in[2048];
	unsigned int sent = 0;
	struct pollfd pfd;
	int s = udp_client(p->dst);
	ssize_t n;

	if (s < 0) {
		p->err = errno;
		snprintf(p->why, sizeof(p->why), "socket: %s", strerror(errno));
		__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	pfd.fd = s;
	pfd.events = POLLIN;
	while (p->echoed < p->count &&
	       !__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		/*
		 * The first datagram alone: until it is answered the host may
		 * still be resolving the guest's address, and datagrams queued
		 * for that can be overtaken by a later one sent on another CPU
		 * (__neigh_update() drops the neighbour's lock between the
		 * frames it flushes): the order checked below would not hold.
		 */
		while (sent < p->count &&
		       sent - p->echoed < (p->echoed ? p->window : 1)) {
			dgram_fill(out, p->size, sent);
			if (send(s, out, p->size, 0) != (ssize_t)p->size) {
				p->err = errno;
				snprintf(p->why, sizeof(p->why), "send %u: %s",
					 sent, strerror(errno));
				goto out;
			}
			sent++;
		}
		if (poll(&pfd, 1, ECHO_WAIT_MS) != 1) {
			p->err = ETIMEDOUT;
			snprintf(p->why, sizeof(p->why),
				 "no echo after %u of %u sent", p->echoed,
				 sent);
			goto out;
		}
		n = recv(s, in, sizeof(in), 0);
		if (n < 0) {
			p->err = errno;
			snprintf(p->why, sizeof(p->why), "recv: %s",
				 strerror(errno));
			goto out;
		}
		/* in order: the NIC, the guest and the peer keep it */
		dgram_fill(out, p->size, p->echoed);
		if (n != (ssize_t)p->size || memcmp(in, out, n)) {
			uint32_t seq = 0;

			if (n >= 4)
				memcpy(&seq, in, 4);
			p->err = EBADMSG;
			snprintf(p->why, sizeof(p->why),
				 "echo %u: %zd bytes, not the datagram sent (sequence %u)",
				 p->echoed, n, seq);
			goto out;
		}
		__atomic_store_n(&p->echoed, p->echoed + 1, __ATOMIC_RELAXED);
		if (p->pace_us)
			usleep(p->pace_us);
	}
out:
	close(s);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool pinger_done(struct pinger *p)
{
	return __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
}

/* A pinger that pauses @pace_us after each echo. */
static int pinger_start_paced(struct pinger *p, uint32_t dst,
			      unsigned int count, unsigned int size,
			      unsigned int window, unsigned int pace_us)
{
	memset(p, 0, sizeof(*p));
	p->dst = dst;
	p->count = count;
	p->size = size;
	p->window = window;
	p->pace_us = pace_us;
	return pthread_create(&p->thread, NULL, pinger_run, p);
}

static int pinger_start(struct pinger *p, uint32_t dst, unsigned int count,
			unsigned int size, unsigned int window)
{
	return pinger_start_paced(p, dst, count, size, window, 0);
}

/* The set's counters (queue 0 and the set's). */
static int vm_srq_stats(struct vmm *v, struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = NVX_SRQ_ALL_QUEUES;
	return ioctl(v->vm.srq_fd, NVX_SRQ_IOC_STATS, st) ? -errno : 0;
}

/* A VM's network as the VMM and its set see it, for a failure's log. */
#define log_net(v) do {							\
	struct nvx_srq_stats _st;					\
									\
	vm_srq_stats((v), &_st);					\
	TH_LOG("vm %u: cq prod %u cons %u, rel prod %u cons %u, kicks %llu sent %llu err %d",\
	       (v)->vm.vm_id, vm_cq_hdr(v)->prod, vm_cq_hdr(v)->cons,	\
	       vm_rel_hdr(v)->prod, vm_rel_hdr(v)->cons,		\
	       (unsigned long long)(v)->vm.net_kicks,			\
	       (unsigned long long)(v)->vm.net_sent, (v)->vm.net_err);	\
	TH_LOG("  set: rx %llu tx %llu no-buf %llu cq-full %llu "	\
	       "refills %llu released %llu garbage %llu "		\
	       "posted %u held %u strides %u",				\
	       (unsigned long long)_st.rx_packets,			\
	       (unsigned long long)_st.tx_packets,			\
	       (unsigned long long)_st.drops_no_buf,			\
	       (unsigned long long)_st.drops_cq_full,			\
	       (unsigned long long)_st.refills,				\
	       (unsigned long long)_st.released,			\
	       (unsigned long long)_st.release_garbage,			\
	       _st.bufs_posted, _st.bufs_held, _st.posted_strides);	\
} while (0)

/* "KEY N" in the guest's counters line: N, or -1. */
static long long out_count(const char *out, const char *key)
{
	const char *line = NULL, *p = out;
	char pat[32];

	while ((p = strstr(p, "udp-echo: rx ")))
		line = p++;
	if (!line)
		return -1;
	snprintf(pat, sizeof(pat), " %s ", key);
	p = strstr(line, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* One ICMP echo to @dst answered by it, byte for byte: 0, or -errno. */
static int icmp_ping(uint32_t dst, uint16_t seq)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	unsigned char out[64], in[256];
	struct icmphdr *h = (struct icmphdr *)out;
	struct pollfd pfd;
	unsigned int i, sum = 0;
	int s, ret = -ETIMEDOUT;
	uint64_t end = now_ms() + ECHO_WAIT_MS;
	ssize_t n;

	s = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (s < 0)
		return -errno;
	memset(out, 0, sizeof(out));
	h->type = ICMP_ECHO;
	h->un.echo.id = htons(0x4e56);
	h->un.echo.sequence = htons(seq);
	for (i = sizeof(*h); i < sizeof(out); i++)
		out[i] = i;
	for (i = 0; i < sizeof(out); i += 2)
		sum += out[i] << 8 | out[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	h->checksum = htons(~sum & 0xffff);
	a.sin_addr.s_addr = dst;
	if (sendto(s, out, sizeof(out), 0, (struct sockaddr *)&a,
		   sizeof(a)) != sizeof(out)) {
		ret = -errno;
		goto out;
	}
	pfd.fd = s;
	pfd.events = POLLIN;
	while (now_ms() < end && poll(&pfd, 1, ECHO_WAIT_MS) == 1) {
		struct iphdr *ip = (struct iphdr *)in;
		struct icmphdr *r;

		n = recv(s, in, sizeof(in), 0);
		if (n < (ssize_t)sizeof(*ip) || ip->saddr != dst)
			continue;
		r = (struct icmphdr *)(in + ip->ihl * 4);
		if (n - ip->ihl * 4 != (ssize_t)sizeof(out) ||
		    r->type != ICMP_ECHOREPLY || r->un.echo.id != h->un.echo.id ||
		    r->un.echo.sequence != h->un.echo.sequence)
			continue;
		ret = memcmp(in + ip->ihl * 4 + sizeof(*h), out + sizeof(*h),
			     sizeof(out) - sizeof(*h)) ? -EBADMSG : 0;
		break;
	}
out:
	close(s);
	return ret;
}

/* Serve until the guests' stdout has @n lines with @what. */
static int serve_until_lines(struct server *sv, const char *what,
			     unsigned int n)
{
	uint64_t end = now_ms() + DEADLINE_MS;
	unsigned int seen;
	char *out, *p;
	int ret;

	for (;;) {
		out = server_stdout(sv, NULL);
		if (!out)
			return -ENOMEM;
		for (seen = 0, p = out; (p = strstr(p, what)); p++)
			seen++;
		free(out);
		if (seen >= n)
			return 0;
		if (now_ms() > end)
			return -ETIMEDOUT;
		ret = serve_for(sv, 20);
		if (ret)
			return ret;
	}
}

/* The guest's completion ring 0, as the VMM sees it in the guest's RAM. */
static struct nvx_srq_ring *vm_cq_hdr(struct vmm *v)
{
	return (struct nvx_srq_ring *)((char *)v->vm.mem +
				       v->vm.net->ring_gpa +
				       v->vm.net->cq_offset);
}

static struct nvx_srq_ring *vm_rel_hdr(struct vmm *v)
{
	return (struct nvx_srq_ring *)((char *)v->vm.mem +
				       v->vm.net->ring_gpa +
				       v->vm.net->rel_offset);
}

/*
 * A flood of 64-byte datagrams to one guest, sendmmsg() in batches, with
 * at most @window not yet consumed from the guest's completion ring
 * (its cons, in its RAM): none dropped however slow the guest is. With
 * @count 0 it floods without a window until @stop.
 */
struct flood {
	uint32_t dst;
	uint64_t count, sent;
	unsigned int window;
	unsigned int pace_us;	/* a pause after each batch */
	struct vmm *v;
	int stop, done, err;
	pthread_t thread;
};

static void *flood_run(void *arg)
{
	struct flood *f = arg;
	unsigned char d[64][18];
	struct mmsghdr m[64];
	struct iovec iov[64];
	int s = udp_client(f->dst), i, k;

	if (s < 0) {
		f->err = errno;
		goto out;
	}
	memset(m, 0, sizeof(m));
	for (i = 0; i < 64; i++) {
		iov[i].iov_base = d[i];
		iov[i].iov_len = sizeof(d[i]);
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED) &&
	       (!f->count || f->sent < f->count)) {
		k = 64;
		if (f->count && f->count - f->sent < 64)
			k = f->count - f->sent;
		if (f->count) {
			struct nvx_srq_ring *h = vm_cq_hdr(f->v);

			/* sent - consumed within the window: u32 indexes */
			if ((uint32_t)(f->sent + k -
				       __atomic_load_n(&h->cons,
						       __ATOMIC_ACQUIRE)) >
			    f->window) {
				usleep(200);
				continue;
			}
		}
		for (i = 0; i < k; i++)
			dgram_fill(d[i], sizeof(d[i]), f->sent + i);
		k = sendmmsg(s, m, k, 0);
		if (k < 0) {
			if (errno == ENOBUFS || errno == EAGAIN) {
				usleep(1000);
				continue;
			}
			f->err = errno;
			break;
		}
		f->sent += k;
		if (f->pace_us)
			usleep(f->pace_us);
	}
	close(s);
out:
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A permanent neighbour entry for @v on the peer: no ARP in the way. */
static int neigh_set(const struct net_env *ne, struct vmm *v)
{
	const uint8_t *m = v->vm.net->mac;
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &v->vm.net->ip4, ip, sizeof(ip));
	return sh("ip neigh replace %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent",
		  ip, m[0], m[1], m[2], m[3], m[4], m[5], ne->nic.peer);
}

/*
 * VMs A and B, udp-echo at NET_PFX 2 and 3 on @ne's NIC (@no their
 * options), both serving: 0 or -errno (a VM made stays in @v).
 */
static int launch_two(struct env *e, struct server *sv,
		      const struct net_env *ne, struct vmm *v[2],
		      struct nvx_uvm_net no[2])
{
	unsigned int i;
	int ret;

	for (i = 0; i < 2; i++) {
		v[i] = vmm_new(e);
		if (!v[i])
			return -ENOMEM;
		net_opts(&no[i], ne, 2 + i);
		v[i]->o.net = &no[i];
		ret = vmm_launch(e, v[i], e->ep, 0, "udp-echo", NULL);
		if (ret)
			return ret;
	}
	return serve_until_lines(sv, " port 7\n", 2);
}

/* Stop the two VMs of launch_two() and check how they ended. */
#define finish_two(e, v) do {						\
	unsigned int _i;						\
									\
	for (_i = 0; _i < 2; _i++) {					\
		ASSERT_EQ(0, vmm_stop((v)[_i], SHORT_MS));		\
		finish_vm(_metadata, (e), (v)[_i], (e)->ep,		\
			  NVX_UVM_DETACHED);				\
	}								\
} while (0)

/* Launch udp-echo on @ne's NIC at NET_PFX @last with @args (NULL-ended). */
#define launch_net(e, v, no, ne, last, ...)				\
	(net_opts((no), (ne), (last)), (v)->o.net = (no),		\
	 vmm_launch((e), (v), (e)->ep, 0, "udp-echo", __VA_ARGS__))

static int64_t stat_of(struct vmm *v, const char *name)
{
	return nvx_uvm_kvm_stat(v->vm.stats_fd, name);
}

/*
 * udp-echo with network @n refused: @err at step @where (NULL: any),
 * the VM's slot freed (the teardown checks that nothing was kept).
 */
static void expect_refused(struct __test_metadata *_metadata, struct env *e,
			   const struct nvx_uvm_net *n, int err,
			   const char *where)
{
	struct vmm *v = vmm_new(e);

	ASSERT_NE(NULL, v);
	v->o.net = n;
	EXPECT_EQ(err, vmm_launch(e, v, e->ep, 0, "udp-echo", NULL));
	if (where)
		EXPECT_STREQ(where, v->where);
	EXPECT_EQ(0, vmm_free(e, v));
}

/*
 * Fixture "uvm_net": the uvm fixture's environment, and a NIC pair with
 * the host's address on the peer, deleted in the teardown.
 */
FIXTURE(uvm_net) {
	struct env e;
	struct net_env ne;
};

FIXTURE_SETUP(uvm_net)
{
	env_setup(_metadata, &self->e, true);
	if (net_env_up(&self->ne)) {
		net_env_down(&self->ne);
		SKIP(return, "no nvxsim NIC with the host's address");
	}
}

FIXTURE_TEARDOWN(uvm_net)
{
	/* first: a teardown that fails must not leave the subnet routed */
	net_env_down(&self->ne);
	env_teardown(_metadata, &self->e);
}

#define NET_TEST(name)	TEST_F_TIMEOUT(uvm_net, name, 300)

/* =========================================================== tests === */

/*
 * A guest answers 300 datagrams of 18 to 1,400 bytes, byte for byte, on
 * its own receive queue: the host's ARP for it answered, its set's
 * counters agreeing with what was sent, nothing dropped or refused.
 */
NET_TEST(udp_echo_round_trip)
{
	static const unsigned int sizes[] = { 18, 200, 1400 };
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no;
	struct pinger p;
	struct server sv;
	struct vmm *v;
	char count[16];
	unsigned int i;
	char *out;

	net_opts(&no, &self->ne, 2);
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	v->o.net = &no;
	snprintf(count, sizeof(count), "%u", 3 * 100);
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "udp-echo", "--count", count,
				NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_NE(NULL, v->vm.net);
	EXPECT_EQ(no.ip4, v->vm.net->ip4);

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		ASSERT_EQ(0, pinger_start(&p, no.ip4, 100, sizes[i], 8));
		if (i == ARRAY_SIZE(sizes) - 1) {
			out = serve_to_exit(_metadata, &sv, v, NULL);
		} else {
			/* serve the guest's messages while the pinger runs */
			while (!pinger_done(&p))
				ASSERT_EQ(0, serve_for(&sv, 20));
			out = NULL;
		}
		pthread_join(p.thread, NULL);
		EXPECT_EQ(0, p.err) TH_LOG("size %u: %s", sizes[i], p.why);
		EXPECT_EQ(100U, p.echoed);
	}
	TH_LOG("guest: %s", out);
	EXPECT_EQ(300, out_count(out, "rx"));
	EXPECT_LE(301, out_count(out, "tx"));	/* and the ARP answer */
	EXPECT_LE(1, out_count(out, "arp"));
	EXPECT_EQ(0, out_count(out, "bad"));
	free(out);

	ASSERT_EQ(0, vm_srq_stats(v, &st));
	EXPECT_LE(301U, st.rx_packets);
	EXPECT_LE(301U, v->vm.net_sent);
	EXPECT_EQ(st.tx_packets, v->vm.net_sent);
	EXPECT_EQ(0U, v->vm.net_dropped);
	EXPECT_EQ(0, v->vm.net_err);
	EXPECT_EQ(0U, st.drops_no_buf);
	EXPECT_EQ(0U, st.drops_cq_full);
	EXPECT_EQ(0U, st.release_garbage);
	EXPECT_LE(1U, v->vm.net_kicks);

	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/* Send @n datagrams of @size bytes (dgram_fill(seq0 + i)) to @dst. */
static int send_dgrams(uint32_t dst, unsigned int n, unsigned int size,
		       uint32_t seq0)
{
	unsigned char buf[2048];
	unsigned int i;
	int s = udp_client(dst);

	if (s < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		dgram_fill(buf, size, seq0 + i);
		if (send(s, buf, size, 0) != (ssize_t)size) {
			close(s);
			return -errno;
		}
	}
	close(s);
	return 0;
}

/*
 * Where frames land, read in the guest's memory after it took them: 64
 * 60-byte frames fill one buffer at strides 0..63, in order, byte for
 * byte; then 600-byte frames (3 strides) leave one stride at a
 * buffer's end, which a filler completion reports, and the next frame
 * starts the next buffer at stride 0.
 */
NET_TEST(frames_land_in_guest_memory)
{
	struct env *e = &self->e;
	const struct nvx_vmnet_info *ni;
	struct nvx_srq_cqe *cq, c;
	struct nvx_uvm_net no;
	struct server sv;
	struct vmm *v;
	uint32_t prod, i, first, fillers = 0, big = 0;
	const unsigned char *f;
	unsigned char want[600];

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, "--sink", "--count",
				"86", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, neigh_set(&self->ne, v));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));
	ni = v->vm.net;
	ASSERT_EQ(0, send_dgrams(no.ip4, 64, 18, 0));
	ASSERT_EQ(0, send_dgrams(no.ip4, 22, 558, 1000));
	free(serve_to_exit(_metadata, &sv, v, NULL));

	cq = (struct nvx_srq_cqe *)(vm_cq_hdr(v) + 1);
	prod = vm_cq_hdr(v)->prod;
	ASSERT_LE(64U + 22 + 1, prod);
	first = cq[0].buf;
	for (i = 0; i < prod && i < ni->cq_entries; i++) {
		c = cq[i];
		if (c.flags & NVX_SRQ_CQE_FILLER) {
			fillers++;
			/* 21 frames of 3 strides, then the one left over */
			EXPECT_EQ(63, c.stride);
			EXPECT_EQ(1, c.strides);
			continue;
		}
		ASSERT_GT(ni->nr_bufs, c.buf);
		f = (const unsigned char *)v->vm.mem + ni->buf_gpa +
		    (uint64_t)c.buf * ni->buf_size +
		    (uint64_t)c.stride * ni->stride;
		if (i < 64) {
			/* one buffer, stride after stride */
			EXPECT_EQ(first, c.buf);
			EXPECT_EQ(i, c.stride);
			EXPECT_EQ(1, c.strides);
			EXPECT_EQ(60U, c.len);
			dgram_fill(want, 18, i);
			EXPECT_EQ(0, memcmp(f + 42, want, 18)) TH_LOG("frame %u", i);
			continue;
		}
		EXPECT_EQ(600U, c.len);
		EXPECT_EQ(3, c.strides);
		dgram_fill(want, 558, 1000 + big);
		EXPECT_EQ(0, memcmp(f + 42, want, 558)) TH_LOG("big %u", big);
		/* a new buffer's first frame is at stride 0 */
		if (big == 0 || big == 21)
			EXPECT_EQ(0, c.stride);
		big++;
	}
	EXPECT_EQ(22U, big);
	EXPECT_EQ(1U, fillers);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * Two VMs on one NIC, at .2 and .3: each answers its own client, and its
 * set saw only its own frames (its datagrams and the ARP for it). ping
 * (ICMP echo) is answered by the runtime on the way.
 */
NET_TEST(two_vms_each_their_own)
{
	struct env *e = &self->e;
	struct nvx_srq_stats st[2];
	struct nvx_uvm_net no[2];
	struct pinger p[2];
	struct server sv;
	struct vmm *v[2] = { NULL, NULL };
	int i;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	for (i = 0; i < 2; i++) {
		ASSERT_NE(NULL, v[i] = vmm_new(e));
		ASSERT_EQ(0, launch_net(e, v[i], &no[i], &self->ne, 2 + i, "--count",
					i ? "150" : "100", NULL))
			TH_LOG("%s", vmm_why(v[i]));
	}
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 2));
	/* ping both, the second twice */
	EXPECT_EQ(0, icmp_ping(no[0].ip4, 1));
	EXPECT_EQ(0, icmp_ping(no[1].ip4, 2));
	EXPECT_EQ(0, icmp_ping(no[1].ip4, 3));
	ASSERT_EQ(0, pinger_start(&p[0], no[0].ip4, 100, 100, 4));
	ASSERT_EQ(0, pinger_start(&p[1], no[1].ip4, 150, 300, 4));
	ASSERT_EQ(0, serve_done(&sv, v, 2, DEADLINE_MS));
	for (i = 0; i < 2; i++) {
		pthread_join(p[i].thread, NULL);
		EXPECT_EQ(0, p[i].err) TH_LOG("VM %d: %s", i, p[i].why);
		EXPECT_EQ(0, v[i]->ret) TH_LOG("%s", vmm_why(v[i]));
		ASSERT_EQ(0, vm_srq_stats(v[i], &st[i]));
		TH_LOG("VM %d: rx %llu tx %llu kicks %llu", i,
		       (unsigned long long)st[i].rx_packets,
		       (unsigned long long)st[i].tx_packets,
		       (unsigned long long)v[i]->vm.net_kicks);
		EXPECT_EQ(0U, st[i].release_garbage);
		EXPECT_EQ(0U, st[i].drops_no_buf + st[i].drops_cq_full);
	}
	/* datagrams + pings + a few ARP requests: never the other's */
	EXPECT_LE(100U + 1, st[0].rx_packets);
	EXPECT_GE(100U + 1 + 5, st[0].rx_packets);
	EXPECT_LE(150U + 2, st[1].rx_packets);
	EXPECT_GE(150U + 2 + 5, st[1].rx_packets);
	for (i = 0; i < 2; i++)
		finish_vm(_metadata, e, v[i], e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * A polling guest receives 10,000 frames with no exit for them (KVM's
 * own counters, from its start line to its end): what it costs is its
 * last line and its exit (a WRITE and an EXIT message: a doorbell, a
 * halt and an interrupt for each reply, the exit port), whatever the
 * number of frames; the other exits come from the host's interrupts
 * (irq_exits).
 */
NET_TEST(polling_guest_takes_no_exits)
{
	static const char *const names[] = {
		"exits", "irq_exits", "io_exits", "halt_exits",
		"irq_injections", "userspace_exits", "irq_window_exits",
	};
	int64_t before[ARRAY_SIZE(names)], after[ARRAY_SIZE(names)];
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no;
	struct flood f = { 0 };
	long long notified;
	struct server sv;
	struct vmm *v;
	unsigned int i;
	char *out;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, "--count", "10000",
				"--sink", "--poll", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, neigh_set(&self->ne, v));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));
	for (i = 0; i < ARRAY_SIZE(names); i++)
		before[i] = stat_of(v, names[i]);

	f.dst = no.ip4;
	f.count = 10000;
	f.window = 512;
	f.v = v;
	ASSERT_EQ(0, pthread_create(&f.thread, NULL, flood_run, &f));
	if (serve_done(&sv, &v, 1, DEADLINE_MS)) {
		out = server_stdout(&sv, NULL);
		TH_LOG("guest: %s", out);
		free(out);
		TH_LOG("sent %llu, err %d", (unsigned long long)f.sent,
		       f.err);
		log_net(v);
		__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
		pthread_join(f.thread, NULL);
		ASSERT_TRUE(false);
	}
	out = serve_to_exit(_metadata, &sv, v, NULL);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		after[i] = stat_of(v, names[i]);
	pthread_join(f.thread, NULL);
	EXPECT_EQ(0, f.err);
	EXPECT_EQ(10000U, f.sent);
	EXPECT_EQ(10000, out_count(out, "rx"));
	EXPECT_EQ(0, out_count(out, "halts"));
	free(out);
	notified = fdinfo_num(v->vm.srq_fd, "queue0_notified");
	TH_LOG("notified: %lld", notified);
	/* the set's wake-ups: none, cons is never published whole */
	EXPECT_EQ(0, notified);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		TH_LOG("%s: %lld", names[i], (long long)(after[i] - before[i]));
		ASSERT_LE(0, before[i]) TH_LOG("no KVM statistic %s", names[i]);
	}
	EXPECT_GE(3, after[2] - before[2]);	/* io_exits: 2 doorbells, the port */
	/* halt_exits: waits for the 2 replies, one again after a safety tick */
	EXPECT_GE(3, after[3] - before[3]);
	EXPECT_GE(3, after[4] - before[4]);	/* their interrupts, a safety tick */
	EXPECT_GE(1, after[5] - before[5]);	/* userspace_exits: the port */
	/* beyond the host's interrupts, at most one exit per 500 frames */
	EXPECT_GE(20, (after[0] - before[0]) - (after[1] - before[1]));
	ASSERT_EQ(0, vm_srq_stats(v, &st));
	EXPECT_EQ(10000U, st.rx_packets);
	EXPECT_EQ(0U, st.drops_no_buf + st.drops_cq_full);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * A hostile guest (the test writes into VM A's memory what A could):
 * garbage release entries (no such buffer, more strides than a buffer
 * has, an unknown flag, a buffer A does not hold: all of them posted,
 * nothing has come yet), a release index far ahead, and, while a flood
 * comes for it, its completion ring rewritten with garbage every 20 ms
 * (the kernel never reads a completion back; A's runtime skips what it
 * cannot use, and the strides of a destroyed completion are never given
 * back). A's set counts what the kernel saw (A's own releases, behind
 * the kernel's index now, count too: its traffic suffers); A's guest
 * goes on running; B on the same NIC answers every datagram, and
 * nothing of B's is dropped or refused.
 */
NET_TEST(hostile_guest_hurts_only_itself)
{
	struct env *e = &self->e;
	struct nvx_srq_release rel = { 0 };
	struct nvx_srq_stats st[2];
	struct nvx_uvm_net no[2];
	struct nvx_srq_ring *h;
	struct nvx_srq_rel *r;
	/* static: a thread an ASSERT leaves running writes no dead frame */
	static struct flood f;
	static struct pinger p[2];
	struct server sv;
	struct vmm *v[2] = { NULL, NULL };
	unsigned int i, rewrites = 0;
	uint64_t rx1 = 0;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_EQ(0, launch_two(e, &sv, &self->ne, v, no))
		TH_LOG("A: %s; B: %s", v[0] ? vmm_why(v[0]) : "-",
		       v[1] ? vmm_why(v[1]) : "-");

	/* A's release ring: 16 garbage entries, then prod far ahead */
	h = vm_rel_hdr(v[0]);
	r = (struct nvx_srq_rel *)(h + 1);
	for (i = 0; i < 16; i++) {
		static const struct nvx_srq_rel kinds[] = {
			{ .buf = 1000000, .strides = 1 },	/* no such buffer */
			{ .buf = 0, .strides = 60000 },		/* too many strides */
			{ .buf = 0, .strides = 1, .flags = 0x80 },
			{ .buf = 1, .strides = 1 },		/* not held: posted */
		};

		r[i] = kinds[i % 4];
		if (i % 4 == 3)
			r[i].buf = 1 + i / 4;
	}
	__atomic_store_n(&h->prod, 16, __ATOMIC_RELEASE);
	ASSERT_EQ(0, ioctl(v[0]->vm.srq_fd, NVX_SRQ_IOC_RELEASE, &rel));
	EXPECT_EQ(16U, rel.garbage);
	__atomic_store_n(&h->prod, 16 + 1000000, __ATOMIC_RELEASE);
	ASSERT_EQ(0, ioctl(v[0]->vm.srq_fd, NVX_SRQ_IOC_RELEASE, &rel));
	EXPECT_LE(1U, rel.garbage);

	/*
	 * A: one datagram alone first (its echo means A is past the host's
	 * ARP), then a flood to it; B: 200 datagrams, one each 2 ms. A's
	 * completions are rewritten every 20 ms until B's client is done.
	 */
	memset(&f, 0, sizeof(f));
	ASSERT_EQ(0, pinger_start(&p[0], no[0].ip4, 1, 64, 1));
	while (!pinger_done(&p[0]))
		ASSERT_EQ(0, serve_for(&sv, 20));
	pthread_join(p[0].thread, NULL);
	EXPECT_EQ(1U, p[0].echoed) TH_LOG("A: %s", p[0].why);
	f.dst = no[0].ip4;
	f.pace_us = 10000;
	ASSERT_EQ(0, pthread_create(&f.thread, NULL, flood_run, &f));
	ASSERT_EQ(0, pinger_start_paced(&p[1], no[1].ip4, 200, 64, 4, 2000));
	while (!pinger_done(&p[1])) {
		struct nvx_srq_ring *c = vm_cq_hdr(v[0]);

		memset(c + 1, 0xee, (size_t)v[0]->vm.net->cq_entries *
		       sizeof(struct nvx_srq_cqe));
		if (!rewrites++) {
			/* what A's set had taken at the first rewrite */
			ASSERT_EQ(0, vm_srq_stats(v[0], &st[0]));
			rx1 = st[0].rx_packets;
		}
		ASSERT_EQ(0, serve_for(&sv, 20));
	}
	pthread_join(p[1].thread, NULL);
	ASSERT_EQ(0, vm_srq_stats(v[0], &st[0]));
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(f.thread, NULL);
	TH_LOG("A: completions rewritten %u times; %llu frames after the first, of %llu sent",
	       rewrites, (unsigned long long)(st[0].rx_packets - rx1),
	       (unsigned long long)f.sent);
	EXPECT_EQ(0, f.err);
	/* frames came for A after its completions were first destroyed */
	EXPECT_LT(rx1, st[0].rx_packets);
	/* A's runtime survived its own garbage */
	EXPECT_FALSE(vmm_done(v[0])) TH_LOG("%s", vmm_why(v[0]));
	if (p[1].err) {
		log_net(v[0]);
		log_net(v[1]);
	}
	EXPECT_EQ(0, p[1].err) TH_LOG("B: %s", p[1].why);
	EXPECT_EQ(200U, p[1].echoed);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, vm_srq_stats(v[i], &st[i]));
	EXPECT_LE(17U, st[0].release_garbage);
	EXPECT_EQ(0U, st[1].release_garbage);
	EXPECT_EQ(0U, st[1].drops_no_buf + st[1].drops_cq_full);
	finish_two(e, v);
	server_fini(&sv);
}

/*
 * A guest that stops releasing (udp-echo --hold): the NIC fills the
 * buffers it had, then drops what comes for that VM, counted on its set
 * (no buffer); its neighbour on the same NIC echoes every datagram sent
 * after the first half of the flood and with the second, nothing
 * dropped for it. The holder is stopped with every buffer held: the
 * teardown finds everything given back.
 */
NET_TEST(guest_that_stops_releasing_drops_alone)
{
	/*
	 * 8 buffers of 64 one-stride frames: 512 fit, 3,000 are sent. Fewer
	 * strides than completion ring entries (1,024): the buffers run out
	 * first, however slowly the guest takes its completions.
	 */
	const unsigned int bufs = 8, fit = bufs * 64, flood = 3000;
	struct env *e = &self->e;
	struct nvx_srq_stats st[2];
	struct nvx_uvm_net no[2];
	struct pinger p;
	struct server sv;
	struct vmm *v[2] = { NULL, NULL };
	uint64_t seen = 0;
	unsigned int i;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v[0] = vmm_new(e));
	net_opts(&no[0], &self->ne, 2);
	no[0].nr_bufs = bufs;
	v[0]->o.net = &no[0];
	ASSERT_EQ(0, vmm_launch(e, v[0], e->ep, 0, "udp-echo", "--sink",
				"--hold", "1000000", NULL))
		TH_LOG("%s", vmm_why(v[0]));
	ASSERT_NE(NULL, v[1] = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v[1], &no[1], &self->ne, 3, NULL))
		TH_LOG("%s", vmm_why(v[1]));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 2));
	ASSERT_EQ(0, neigh_set(&self->ne, v[0]));

	ASSERT_EQ(0, send_dgrams(no[0].ip4, flood / 2, 18, 0));
	ASSERT_EQ(0, pinger_start(&p, no[1].ip4, 200, 64, 4));
	ASSERT_EQ(0, send_dgrams(no[0].ip4, flood - flood / 2, 18, flood / 2));
	while (!pinger_done(&p))
		ASSERT_EQ(0, serve_for(&sv, 20));
	pthread_join(p.thread, NULL);
	/* what was sent to A has all been taken or dropped */
	for (i = 0; i < SHORT_MS / 10; i++) {
		ASSERT_EQ(0, vm_srq_stats(v[0], &st[0]));
		if (st[0].rx_packets + st[0].drops_no_buf +
		    st[0].drops_cq_full == seen && i)
			break;
		seen = st[0].rx_packets + st[0].drops_no_buf +
		       st[0].drops_cq_full;
		ASSERT_EQ(0, serve_for(&sv, 10));
	}
	ASSERT_EQ(0, vm_srq_stats(v[1], &st[1]));
	if (p.err || !st[0].drops_no_buf) {
		log_net(v[0]);
		log_net(v[1]);
	}
	TH_LOG("A: %llu in its buffers, drops %llu no-buf %llu cq-full; B: %u echoed",
	       (unsigned long long)st[0].rx_packets,
	       (unsigned long long)st[0].drops_no_buf,
	       (unsigned long long)st[0].drops_cq_full, p.echoed);
	EXPECT_EQ(0, p.err) TH_LOG("B: %s", p.why);
	EXPECT_EQ(200U, p.echoed);
	/* A: every buffer full and held, nothing posted, the rest dropped */
	EXPECT_GE(fit, st[0].rx_packets);
	EXPECT_LE(flood - fit, st[0].drops_no_buf);
	EXPECT_EQ(0U, st[0].drops_cq_full);
	EXPECT_EQ(0U, st[0].bufs_posted);
	EXPECT_EQ(0U, st[0].released);
	EXPECT_EQ(0U, st[0].release_garbage);
	/* B: nothing dropped, nothing refused */
	EXPECT_EQ(0U, st[1].drops_no_buf + st[1].drops_cq_full);
	EXPECT_EQ(0U, st[1].release_garbage);
	finish_two(e, v);
	server_fini(&sv);
}

/*
 * A guest posts a frame outside its grant on its TX ring (the test
 * writes it into VM A's memory, as A could) and kicks: A's ring stops,
 * with the reason, counted. A's runtime finds its ring stopped when it
 * answers the next datagram and udp-echo ends with status 1, its answer
 * never posted nor sent; B on the same NIC echoes every datagram, its TX
 * untouched.
 */
NET_TEST(bad_tx_descriptor_stops_that_vm_alone)
{
	struct env *e = &self->e;
	struct nvx_srq_tx_kick k = { 0 };
	struct nvx_srq_stats st[2], was;
	struct nvx_uvm_net no[2];
	struct nvx_srq_tx_hdr *th;
	struct nvx_srq_txd *d;
	struct pinger p;
	struct server sv;
	struct vmm *v[2] = { NULL, NULL };
	unsigned int i;
	uint32_t prod;
	char *out;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_EQ(0, launch_two(e, &sv, &self->ne, v, no))
		TH_LOG("A: %s; B: %s", v[0] ? vmm_why(v[0]) : "-",
		       v[1] ? vmm_why(v[1]) : "-");
	/* A could not answer the host's ARP */
	ASSERT_EQ(0, neigh_set(&self->ne, v[0]));

	th = (struct nvx_srq_tx_hdr *)((char *)v[0]->vm.mem +
				       v[0]->vm.net->tx_gpa);
	d = (struct nvx_srq_txd *)(th + 1);
	prod = __atomic_load_n(&th->prod, __ATOMIC_ACQUIRE);
	d[prod & (v[0]->vm.net->tx_entries - 1)] = (struct nvx_srq_txd){
		.addr = 1ULL << 40, .len = 64,
	};
	__atomic_store_n(&th->prod, prod + 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, ioctl(v[0]->vm.srq_fd, NVX_SRQ_IOC_TX_KICK, &k));
	EXPECT_EQ((uint32_t)NVX_SRQ_TX_STOP_ADDR, k.stopped);
	EXPECT_EQ(1U, k.bad);
	EXPECT_EQ(0U, k.sent);
	EXPECT_EQ((uint32_t)NVX_SRQ_TX_STOP_ADDR,
		  __atomic_load_n(&th->stopped, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, vm_srq_stats(v[0], &was));

	/* A takes a datagram, cannot answer it, and ends */
	ASSERT_EQ(0, send_dgrams(no[0].ip4, 1, 64, 0));
	ASSERT_EQ(0, serve_done(&sv, &v[0], 1, DEADLINE_MS));
	EXPECT_EQ(1U, v[0]->vm.exit_status) TH_LOG("%s", vmm_why(v[0]));
	out = server_stdout(&sv, NULL);
	ASSERT_NE(NULL, out);
	TH_LOG("A: %s", out);
	EXPECT_EQ(1, out_count(out, "rx"));
	EXPECT_EQ(0, out_count(out, "tx"));
	free(out);

	/* B echoes all */
	ASSERT_EQ(0, pinger_start(&p, no[1].ip4, 100, 64, 4));
	while (!pinger_done(&p))
		ASSERT_EQ(0, serve_for(&sv, 20));
	pthread_join(p.thread, NULL);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, vm_srq_stats(v[i], &st[i]));
	if (p.err)
		log_net(v[1]);
	EXPECT_EQ(0, p.err) TH_LOG("B: %s", p.why);
	EXPECT_EQ(100U, p.echoed);
	EXPECT_LE(was.rx_packets + 1, st[0].rx_packets);
	EXPECT_EQ(was.tx_packets, st[0].tx_packets);
	EXPECT_EQ((uint32_t)NVX_SRQ_TX_STOP_ADDR,
		  __atomic_load_n(&th->stopped, __ATOMIC_ACQUIRE));
	EXPECT_LE(100U, st[1].tx_packets);
	EXPECT_EQ(0U, st[1].drops_no_buf + st[1].drops_cq_full);
	finish_vm(_metadata, e, v[0], e->ep, NVX_UVM_DETACHED);
	ASSERT_EQ(0, vmm_stop(v[1], SHORT_MS));
	finish_vm(_metadata, e, v[1], e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * The NIC is deleted under a VM that echoes: the set detaches, the guest
 * waits on (its kicks fail with ENXIO at most), and stopping it returns
 * everything (the pool's bytes: the teardown).
 */
NET_TEST(nic_deleted_under_a_running_vm)
{
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no;
	struct pinger p;
	struct server sv;
	struct vmm *v;
	int i;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, pinger_start(&p, no.ip4, 50, 64, 4));
	while (!pinger_done(&p))
		ASSERT_EQ(0, serve_for(&sv, 20));
	pthread_join(p.thread, NULL);
	EXPECT_EQ(50U, p.echoed) TH_LOG("%s", p.why);
	if (p.err)
		log_net(v);

	net_env_down(&self->ne);
	/* the set outlives its NIC, detached */
	for (i = 0; i < SHORT_MS; i++) {
		ASSERT_EQ(0, vm_srq_stats(v, &st));
		if (!st.ifindex)
			break;
		usleep(1000);
	}
	EXPECT_EQ(0U, st.ifindex);
	ASSERT_EQ(0, serve_for(&sv, 200));
	EXPECT_FALSE(vmm_done(v)) TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, vmm_stop(v, SHORT_MS));
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * A VM stopped and destroyed while frames pour in: its set goes with it
 * (the NIC has none attached after), nothing leaks (the teardown), and
 * a new VM at the same address works on the same NIC.
 */
NET_TEST(vm_stopped_while_frames_arrive)
{
	struct env *e = &self->e;
	struct nvx_uvm_net no;
	struct flood f = { 0 };
	struct pinger p;
	struct server sv;
	struct vmm *v;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, "--sink", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, neigh_set(&self->ne, v));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));
	f.dst = no.ip4;
	ASSERT_EQ(0, pthread_create(&f.thread, NULL, flood_run, &f));
	ASSERT_EQ(0, serve_for(&sv, 500));
	ASSERT_EQ(0, vmm_stop(v, SHORT_MS));
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	EXPECT_EQ(0, wait_detached(e->fd, self->ne.nic.ifindex));
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(f.thread, NULL);
	EXPECT_EQ(0, f.err);
	EXPECT_LT(0U, f.sent);

	/* the address is free again */
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, "--count", "20", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, pinger_start(&p, no.ip4, 20, 64, 4));
	free(serve_to_exit(_metadata, &sv, v, NULL));
	pthread_join(p.thread, NULL);
	EXPECT_EQ(0, p.err) TH_LOG("%s", p.why);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * Serve until @p has @n more echoes than @from: 0; -ETIMEDOUT when the
 * pinger ended first (its err and why say how) or DEADLINE_MS passed,
 * -EIO when serving failed.
 */
static int serve_until_echoed(struct server *sv, struct pinger *p,
			      unsigned int from, unsigned int n)
{
	uint64_t end = now_ms() + DEADLINE_MS;

	while (__atomic_load_n(&p->echoed, __ATOMIC_RELAXED) < from + n) {
		if (pinger_done(p) || now_ms() > end)
			return -ETIMEDOUT;
		if (serve_for(sv, 20))
			return -EIO;
	}
	return 0;
}

/*
 * Rules added and removed while traffic flows: VM A echoes datagrams
 * (a pause of 2 ms after each echo) all along; a flood to B's address starts before B
 * exists (the NIC's stack gets it); B (udp-echo --sink) starts while A
 * echoes, so a set with B's rule joins the NIC and the flood lands in
 * B's memory; B is stopped with the flood still coming and A still
 * echoing, so its rule goes; A echoes 50 more after that. A's echoes
 * are exact, A's set never sees a frame of the flood (its receive count
 * stays within its own traffic), nothing is dropped or refused for A,
 * and everything of B's is given back (the teardown).
 */
NET_TEST(rules_come_and_go_under_traffic)
{
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no[2];
	/* static: a thread an ASSERT leaves running writes no dead frame */
	static struct flood f;
	static struct pinger p;
	static const uint8_t bmac[6] = { 0x02, 0x6e, 0x76, 0x78, 0x00, 0x03 };
	struct server sv;
	struct vmm *a, *b;
	char addr[INET_ADDRSTRLEN];
	unsigned int mark;
	uint64_t end;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, a = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, a, &no[0], &self->ne, 2, NULL))
		TH_LOG("%s", vmm_why(a));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));

	/* B's address and MAC known to the peer before B exists */
	net_opts(&no[1], &self->ne, 3);
	memcpy(no[1].mac, bmac, sizeof(bmac));
	inet_ntop(AF_INET, &no[1].ip4, addr, sizeof(addr));
	ASSERT_EQ(0, sh("ip neigh replace %s lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s %s",
			addr, bmac[0], bmac[1], bmac[2], bmac[3], bmac[4],
			bmac[5], self->ne.nic.peer, "nud permanent"));
	memset(&f, 0, sizeof(f));
	f.dst = no[1].ip4;
	f.pace_us = 5000;
	ASSERT_EQ(0, pthread_create(&f.thread, NULL, flood_run, &f));
	ASSERT_EQ(0, pinger_start_paced(&p, no[0].ip4, 1000000, 64, 4, 2000));
	ASSERT_EQ(0, serve_until_echoed(&sv, &p, 0, 50)) TH_LOG("A: %s", p.why);

	/* the rule comes */
	ASSERT_NE(NULL, b = vmm_new(e));
	b->o.net = &no[1];
	ASSERT_EQ(0, vmm_launch(e, b, e->ep, 0, "udp-echo", "--sink", NULL))
		TH_LOG("%s", vmm_why(b));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 2));
	/* the flood lands in B */
	end = now_ms() + DEADLINE_MS;
	do {
		ASSERT_EQ(0, serve_for(&sv, 20));
		ASSERT_EQ(0, vm_srq_stats(b, &st));
	} while (st.rx_packets < 64 && now_ms() < end);
	EXPECT_LE(64U, st.rx_packets);
	EXPECT_FALSE(pinger_done(&p)) TH_LOG("A: %s", p.why);
	mark = __atomic_load_n(&p.echoed, __ATOMIC_RELAXED);
	ASSERT_EQ(0, serve_until_echoed(&sv, &p, mark, 50)) TH_LOG("A: %s", p.why);

	/* the rule goes, the flood and A's traffic on */
	ASSERT_EQ(0, vm_srq_stats(b, &st));
	TH_LOG("B took %llu frames of the flood",
	       (unsigned long long)st.rx_packets);
	ASSERT_EQ(0, vmm_stop(b, SHORT_MS));
	finish_vm(_metadata, e, b, e->ep, NVX_UVM_DETACHED);
	EXPECT_FALSE(pinger_done(&p)) TH_LOG("A: %s", p.why);
	mark = __atomic_load_n(&p.echoed, __ATOMIC_RELAXED);
	EXPECT_EQ(0, serve_until_echoed(&sv, &p, mark, 50)) TH_LOG("A: %s", p.why);

	__atomic_store_n(&p.stop, 1, __ATOMIC_RELAXED);
	while (!pinger_done(&p))
		ASSERT_EQ(0, serve_for(&sv, 20));
	pthread_join(p.thread, NULL);
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(f.thread, NULL);
	EXPECT_EQ(0, f.err);
	EXPECT_EQ(0, p.err) TH_LOG("A: %s", p.why);
	ASSERT_EQ(0, vm_srq_stats(a, &st));
	TH_LOG("flood: %llu sent; A: %u echoed, its set took %llu",
	       (unsigned long long)f.sent, p.echoed,
	       (unsigned long long)st.rx_packets);
	if (p.err)
		log_net(a);
	/* its datagrams (4 at most unanswered), the host's ARP, a few more */
	EXPECT_GE(p.echoed + 4 + 16, st.rx_packets);
	EXPECT_EQ(0U, st.drops_no_buf + st.drops_cq_full);
	EXPECT_EQ(0U, st.release_garbage);
	ASSERT_EQ(0, vmm_stop(a, SHORT_MS));
	finish_vm(_metadata, e, a, e->ep, NVX_UVM_DETACHED);
	sh("ip neigh del %s dev %s", addr, self->ne.nic.peer);
	server_fini(&sv);
}

/* The IPv4 header checksum of @h (its field zero). */
static uint16_t ip4_csum(const struct iphdr *h)
{
	const unsigned char *p = (const unsigned char *)h;
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i < h->ihl * 4U; i += 2)
		sum += p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons(~sum & 0xffff);
}

/*
 * Malformed frames for a guest, each taken by its set (IPv4 to its
 * address) and each of a kind the guest runtime must refuse: what is
 * done to a good UDP datagram to port 7.
 */
enum bad_frame {
	BAD_IP_CSUM, BAD_FRAGMENT, BAD_IHL, BAD_TOT_LEN, BAD_PROTO,
	BAD_UDP_LEN, BAD_DST_MAC, BAD_UDP_SHORT, NR_BAD_FRAMES
};

static int send_bad_frame(const struct net_env *ne, struct vmm *v,
			  enum bad_frame kind)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = ne->nic.peer_ifindex,
		.sll_halen = ETH_ALEN,
	};
	unsigned char f[128] = { 0 };
	struct iphdr *ip = (struct iphdr *)(f + ETH_HLEN);
	unsigned char *udp = f + ETH_HLEN + sizeof(*ip);
	unsigned int len = ETH_HLEN + sizeof(*ip) + 8 + 32;

	memcpy(f, v->vm.net->mac, ETH_ALEN);
	memcpy(f + ETH_ALEN, ne->nic.peer_mac, ETH_ALEN);
	put16(f + 12, ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(sizeof(*ip) + 8 + 32);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	inet_pton(AF_INET, HOST_IP, &ip->saddr);
	ip->daddr = v->vm.net->ip4;
	put16(udp, 40000);
	put16(udp + 2, GUEST_PORT);
	put16(udp + 4, 8 + 32);
	switch (kind) {
	case BAD_FRAGMENT:
		ip->frag_off = htons(IP_MF);
		break;
	case BAD_IHL:
		/* read as UDP 16 bytes in, it would pass the length checks */
		ip->ihl = 4;
		put16(udp, 44);
		break;
	case BAD_TOT_LEN:
		ip->tot_len = htons(len);	/* more than the frame holds */
		break;
	case BAD_PROTO:
		ip->protocol = IPPROTO_TCP;
		break;
	case BAD_UDP_LEN:
		put16(udp + 4, 8 + 33);
		break;
	case BAD_DST_MAC:
		f[5] ^= 0x80;			/* unicast, another MAC */
		break;
	case BAD_UDP_SHORT:
		put16(udp + 4, 7);
		break;
	default:
		break;
	}
	ip->check = ip4_csum(ip);
	if (kind == BAD_IP_CSUM)
		ip->check ^= htons(0x100);
	memcpy(sll.sll_addr, f, ETH_ALEN);
	if (sendto(ne->nic.tx, f, len, 0, (struct sockaddr *)&sll,
		   sizeof(sll)) != (ssize_t)len)
		return -errno;
	return 0;
}

/*
 * Malformed frames sent to a guest on its own queue (a bad IPv4 checksum, a
 * fragment, a header length under 20, a total length past the frame, a
 * protocol it does not serve, a UDP length past the packet or under 8,
 * another destination MAC), each twice: its runtime counts every one as
 * bad and answers none, and then echoes 20 good datagrams exactly.
 */
NET_TEST(malformed_frames_counted_by_the_guest)
{
	struct env *e = &self->e;
	struct nvx_uvm_net no;
	struct pinger p;
	struct server sv;
	struct vmm *v;
	unsigned int i;
	char *out;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, "--count", "20",
				NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));
	for (i = 0; i < 2 * NR_BAD_FRAMES; i++)
		ASSERT_EQ(0, send_bad_frame(&self->ne, v, i % NR_BAD_FRAMES))
			TH_LOG("frame %u", i);
	ASSERT_EQ(0, pinger_start(&p, no.ip4, 20, 64, 4));
	out = serve_to_exit(_metadata, &sv, v, NULL);
	pthread_join(p.thread, NULL);
	EXPECT_EQ(0, p.err) TH_LOG("%s", p.why);
	EXPECT_EQ(20U, p.echoed);
	TH_LOG("guest: %s", out);
	EXPECT_EQ(20, out_count(out, "rx"));
	EXPECT_EQ(2 * NR_BAD_FRAMES, out_count(out, "bad"));
	free(out);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * Bad network options: each refused with its errno at its step, nothing
 * left behind (the teardown counts the pool); a template cannot have a
 * network; two VMs cannot take one address on a NIC.
 */
NET_TEST(bad_network_options)
{
	static const struct {
		const char *s;
		int ret;
		uint32_t prefix;
	} ips[] = {
		{ "10.0.0.1", 0, 24 }, { "10.0.0.1/8", 0, 8 },
		{ "10.0.0.1/32", 0, 32 }, { "0.0.0.0", -EINVAL, 0 },
		{ "10.0.0.1/0", -EINVAL, 0 }, { "10.0.0.1/33", -EINVAL, 0 },
		{ "10.0.0", -EINVAL, 0 }, { "10.0.0.1/", -EINVAL, 0 },
		{ "", -EINVAL, 0 }, { "10.0.0.1/8x", -EINVAL, 0 },
	};
	struct env *e = &self->e;
	struct nvx_uvm_net no, bad;
	struct nvx_uvm_tmpl t;
	struct server sv;
	struct vmm *v, *w;
	const char *where;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ips); i++) {
		memset(&no, 0, sizeof(no));
		EXPECT_EQ(ips[i].ret, nvx_uvm_net_parse_ip(&no, ips[i].s))
			TH_LOG("\"%s\"", ips[i].s);
		if (!ips[i].ret)
			EXPECT_EQ(ips[i].prefix, no.prefix);
	}
	net_opts(&no, &self->ne, 2);

	/* field by field */
	bad = no;
	bad.ip4 = 0;
	expect_refused(_metadata, e, &bad, -EINVAL, "network options");

	bad = no;
	bad.nr_bufs = NVX_UVM_NET_MAX_BUFS + 1;
	expect_refused(_metadata, e, &bad, -EINVAL, "network options");

	bad = no;
	bad.cq_entries = 1000;
	expect_refused(_metadata, e, &bad, -EINVAL, "network options");

	bad = no;
	bad.cq_entries = 4096;	/* rings over the area's 64 KiB */
	expect_refused(_metadata, e, &bad, -EINVAL, "network options");
	bad = no;
	bad.cq_entries = 32;	/* below NVX_UVM_NET_MIN_CQ */
	expect_refused(_metadata, e, &bad, -EINVAL, "network options");
	bad = no;
	bad.nr_bufs = 1;	/* one buffer: its releases would wait for a second */
	expect_refused(_metadata, e, &bad, -EINVAL, "network options");

	bad = no;
	bad.ifindex = if_nametoindex("lo");	/* no backend drives it */
	expect_refused(_metadata, e, &bad, -EOPNOTSUPP, "NVX_IOC_SRQ_CREATE");

	bad = no;
	bad.ifindex = 0x7fffffff;
	expect_refused(_metadata, e, &bad, -ENODEV, "NVX_IOC_SRQ_CREATE");

	/* one address, one VM: the second is refused, the first unharmed */
	ASSERT_NE(NULL, v = vmm_new(e));
	v->o.net = &no;
	ASSERT_EQ(0, vmm_launch(e, v, e->ep, 0, "udp-echo", NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_NE(NULL, w = vmm_new(e));
	w->o.net = &no;
	EXPECT_EQ(-EBUSY, vmm_launch(e, w, e->ep, 0, "udp-echo", NULL));
	EXPECT_EQ(0, vmm_free(e, w));
	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));
	EXPECT_EQ(0, icmp_ping(no.ip4, 9));
	ASSERT_EQ(0, vmm_stop(v, SHORT_MS));
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);

	/* a template: its clones would share the set's memory */
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_GT((int)sizeof(v->image),
		  snprintf(v->image, sizeof(v->image), "%s/udp-echo.img",
			   e->dir));
	v->argv[0] = "udp-echo";
	v->o.mem = VM_MEM;
	v->o.image = v->image;
	v->o.argc = 1;
	v->o.argv = v->argv;
	v->o.ep_fd = e->ep;
	v->o.net = &no;
	EXPECT_EQ(-EINVAL, nvx_uvm_tmpl_make(&t, e->fd, &v->o, &where));
	EXPECT_STREQ("a template with a network", where);
	EXPECT_EQ(0, vmm_free(e, v));
}

TEST_HARNESS_MAIN
