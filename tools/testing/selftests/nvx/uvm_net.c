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
#include <poll.h>
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
 * sequence number, then a pattern of it), at most @window unanswered;
 * each echo must be one of ours, byte for byte.
 */
struct pinger {
	uint32_t dst;		/* the guest, network order */
	unsigned int count, size, window;
	unsigned int echoed;
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
	while (p->echoed < p->count) {
		while (sent < p->count && sent - p->echoed < p->window) {
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
			p->err = EBADMSG;
			snprintf(p->why, sizeof(p->why),
				 "echo %u: %zd bytes, not the datagram sent",
				 p->echoed, n);
			goto out;
		}
		p->echoed++;
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

static int pinger_start(struct pinger *p, uint32_t dst, unsigned int count,
			unsigned int size, unsigned int window)
{
	memset(p, 0, sizeof(*p));
	p->dst = dst;
	p->count = count;
	p->size = size;
	p->window = window;
	return pthread_create(&p->thread, NULL, pinger_run, p);
}

/* The set's counters (queue 0 and the set's). */
static int vm_srq_stats(struct vmm *v, struct nvx_srq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->queue = NVX_SRQ_ALL_QUEUES;
	return ioctl(v->vm.srq_fd, NVX_SRQ_IOC_STATS, st) ? -errno : 0;
}

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

/* =========================================================== tests === */

/*
 * A guest answers 300 datagrams of 64 to 1,400 bytes, byte for byte, on
 * its own receive queue: the host's ARP for it answered, its set's
 * counters agreeing with what was sent, nothing dropped or refused.
 */
UVM_TEST(udp_echo_round_trip)
{
	static const unsigned int sizes[] = { 18, 200, 1400 };
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no;
	struct net_env ne = { 0 };
	struct pinger p;
	struct server sv;
	struct vmm *v;
	char count[16];
	unsigned int i;
	char *out;

	if (net_env_up(&ne)) {
		net_env_down(&ne);
		SKIP(return, "no nvxsim NIC");
	}
	net_opts(&no, &ne, 2);
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
	net_env_down(&ne);
}

TEST_HARNESS_MAIN
