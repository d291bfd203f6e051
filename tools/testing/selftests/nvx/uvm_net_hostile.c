// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": packets straight into user VMs, hostile
 * and broken input: a guest that lies in its rings, stops releasing or
 * posts a bad TX descriptor, malformed frames, bad network options
 * (include/net_fixture.h: the NIC pair, the host's clients).
 */
#include "net_fixture.h"

/* =========================================================== tests === */

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
	static struct pinger p;	/* outlives a failed ASSERT */
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
	static struct pinger p;	/* outlives a failed ASSERT */
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
	static struct pinger p;	/* outlives a failed ASSERT */
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
