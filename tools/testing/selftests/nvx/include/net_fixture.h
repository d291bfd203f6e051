/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx selftests: user VMs with a network (uvm_net, uvm_net_hostile).
 *
 * A VM launched with a network (struct nvx_uvm_net) gets a shared RX
 * queue set in its own memory on an nvxsim NIC, steered to its IPv4
 * address; udp-echo.img answers UDP, ARP and ping on it. The host side
 * is the NIC's peer netdev with an address of the same subnet: an
 * ordinary UDP socket of this process talks to the guest. The fixture
 * "uvm_net" makes the NIC pair for each test.
 */
#ifndef NVX_NET_FIXTURE_H
#define NVX_NET_FIXTURE_H

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

static inline int net_env_up(struct net_env *ne)
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

static inline void net_env_down(struct net_env *ne)
{
	if (ne->up)
		nic_destroy(&ne->nic);
	ne->up = false;
}

static inline uint32_t guest_ip(unsigned int last)
{
	char buf[32];
	struct in_addr a;

	snprintf(buf, sizeof(buf), NET_PFX "%u", last);
	inet_pton(AF_INET, buf, &a);
	return a.s_addr;
}

static inline void net_opts(struct nvx_uvm_net *n, const struct net_env *ne,
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

static inline void dgram_fill(unsigned char *p, unsigned int size, uint32_t seq)
{
	unsigned int i;

	memcpy(p, &seq, 4);
	for (i = 4; i < size; i++)
		p[i] = (unsigned char)(seq * 7 + i);
}

static inline int udp_client(uint32_t dst)
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

static inline void *pinger_run(void *arg)
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

static inline bool pinger_done(struct pinger *p)
{
	return __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
}

/* A pinger that pauses @pace_us after each echo. */
static inline int pinger_start_paced(struct pinger *p, uint32_t dst,
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

static inline int pinger_start(struct pinger *p, uint32_t dst, unsigned int count,
			       unsigned int size, unsigned int window)
{
	return pinger_start_paced(p, dst, count, size, window, 0);
}

/* The set's counters (queue 0 and the set's). */
static inline int vm_srq_stats(struct vmm *v, struct nvx_srq_stats *st)
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
static inline long long out_count(const char *out, const char *key)
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
static inline int icmp_ping(uint32_t dst, uint16_t seq)
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
static inline int serve_until_lines(struct server *sv, const char *what,
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
static inline struct nvx_srq_ring *vm_cq_hdr(struct vmm *v)
{
	return (struct nvx_srq_ring *)((char *)v->vm.mem +
				       v->vm.net->ring_gpa +
				       v->vm.net->cq_offset);
}

static inline struct nvx_srq_ring *vm_rel_hdr(struct vmm *v)
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

static inline void *flood_run(void *arg)
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
static inline int neigh_set(const struct net_env *ne, struct vmm *v)
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
static inline int launch_two(struct env *e, struct server *sv,
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

static inline int64_t stat_of(struct vmm *v, const char *name)
{
	return nvx_uvm_kvm_stat(v->vm.stats_fd, name);
}

/*
 * udp-echo with network @n refused: @err at step @where (NULL: any),
 * the VM's slot freed (the teardown checks that nothing was kept).
 */
static inline void expect_refused(struct __test_metadata *_metadata, struct env *e,
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

/* Send @n datagrams of @size bytes (dgram_fill(seq0 + i)) to @dst. */
static inline int send_dgrams(uint32_t dst, unsigned int n, unsigned int size,
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

#endif /* NVX_NET_FIXTURE_H */
