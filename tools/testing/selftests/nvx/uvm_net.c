// SPDX-License-Identifier: GPL-2.0
/*
 * nvx selftests, group "uvm": packets straight into user VMs, the paths
 * that work (include/net_fixture.h: the NIC pair, the host's clients).
 */
#include "net_fixture.h"
#include "run_util.h"

#include <signal.h>

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
	static struct pinger p;	/* outlives a failed ASSERT */
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
	static struct pinger p[2];	/* outlives a failed ASSERT */
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
 * A sleeping guest is woken by its set's notification (the irqfd), not
 * by its safety tick: 10 datagrams, one at a time, 250 ms apart, so the
 * guest halts between them (its tick backing off from 10 ms: the next
 * one due some 60 ms after a datagram comes). Each is echoed, and the
 * guest counts the sleeps that an interrupt ended more than 1 ms before
 * its tick was due with a frame there ("wakes"): with the notification
 * lost, only the tick would wake it and the count would be 0. The set's
 * own count of notifications agrees.
 */
NET_TEST(sleeping_guest_woken_by_its_notification)
{
	struct env *e = &self->e;
	struct nvx_uvm_net no;
	static struct pinger p;	/* outlives a failed ASSERT */
	long long notified, wakes;
	struct server sv;
	struct vmm *v;
	uint64_t t0;
	char *out;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_NE(NULL, v = vmm_new(e));
	ASSERT_EQ(0, launch_net(e, v, &no, &self->ne, 2, "--count", "10",
				NULL))
		TH_LOG("%s", vmm_why(v));
	ASSERT_EQ(0, neigh_set(&self->ne, v));
	ASSERT_EQ(0, serve_until_lines(&sv, " port 7\n", 1));
	/* long enough idle for the tick to have backed off */
	ASSERT_EQ(0, serve_for(&sv, 500));
	t0 = now_ms();
	ASSERT_EQ(0, pinger_start_paced(&p, no.ip4, 10, 64, 1, 250000));
	out = serve_to_exit(_metadata, &sv, v, NULL);
	pthread_join(p.thread, NULL);
	EXPECT_EQ(0, p.err) TH_LOG("%s", p.why);
	EXPECT_EQ(10U, p.echoed);
	TH_LOG("guest: %s (10 echoes in %llu ms)", out,
	       (unsigned long long)(now_ms() - t0));
	wakes = out_count(out, "wakes");
	free(out);
	notified = fdinfo_num(v->vm.srq_fd, "queue0_notified");
	TH_LOG("set's notifications: %lld", notified);
	/* most of the 10: one may come within a tick's margin */
	EXPECT_LE(5, wakes);
	EXPECT_LE(wakes, notified);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * A polling guest receives 10,000 frames with no exit for them (KVM's
 * own counters). Read while its last line (a WRITE) is held unanswered,
 * so after every frame and before its exit: not one exit to userspace,
 * one port I/O exit at most (the WRITE's doorbell). Read again at its
 * end, what it costs more is its last line and its exit (a WRITE and an
 * EXIT message: a doorbell, a halt and an interrupt for each reply, the
 * exit port) and the safety ticks of its wait while the line was held,
 * whatever the number of frames.
 */
NET_TEST(polling_guest_takes_no_exits)
{
	static const char *const names[] = {
		"exits", "irq_exits", "io_exits", "halt_exits",
		"irq_injections", "userspace_exits", "irq_window_exits",
	};
	int64_t before[ARRAY_SIZE(names)], after[ARRAY_SIZE(names)];
	int64_t mid[ARRAY_SIZE(names)];
	struct hold h = { .type = NVX_UVM_MSG_WRITE };
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no;
	static struct flood f;	/* outlives a failed ASSERT: not on the stack */
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
	/* its next WRITE is its last line: held, the guest waits for it */
	sv.handle = hold_handle;
	sv.priv = &h;
	ASSERT_EQ(0, pthread_create(&f.thread, NULL, flood_run, &f));
	if (serve_until_stop(&sv, DEADLINE_MS)) {
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
	for (i = 0; i < ARRAY_SIZE(names); i++)
		mid[i] = stat_of(v, names[i]);
	sv.handle = NULL;
	sv.stop = false;
	ASSERT_EQ(0, serve_default(&sv, &h.r));
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
		TH_LOG("%s: %lld at its last line, %lld at its end", names[i],
		       (long long)(mid[i] - before[i]),
		       (long long)(after[i] - before[i]));
		ASSERT_LE(0, before[i]) TH_LOG("no KVM statistic %s", names[i]);
	}
	/* after 10,000 frames, before its exit */
	EXPECT_EQ(0, mid[5] - before[5]);	/* userspace_exits */
	EXPECT_GE(1, mid[2] - before[2]);	/* io_exits: the WRITE's doorbell */
	EXPECT_GE(3, after[2] - before[2]);	/* io_exits: 2 doorbells, the port */
	/*
	 * halt_exits: waits for the 2 replies, one again after a safety
	 * tick; and the ticks while the last line was held (in mid), each
	 * a halt, an interrupt and its re-arming. irq_injections: the 2
	 * replies' interrupts and the safety ticks (10 ms) of the waits
	 * for them, one armed in the held line's wait firing after it; a
	 * few more when the emulator is slow (4 in a CI run): a handful,
	 * whatever the number of frames.
	 */
	EXPECT_GE(3, after[3] - mid[3]);
	EXPECT_GE(6, after[4] - mid[4]);
	EXPECT_GE(1, after[5] - before[5]);	/* userspace_exits: the port */
	/* beyond the host's interrupts and those ticks, 1 per 500 frames */
	EXPECT_GE(20 + 3 * (mid[3] - before[3]),
		  (after[0] - before[0]) - (after[1] - before[1]));
	ASSERT_EQ(0, vm_srq_stats(v, &st));
	EXPECT_EQ(10000U, st.rx_packets);
	EXPECT_EQ(0U, st.drops_no_buf + st.drops_cq_full);
	finish_vm(_metadata, e, v, e->ep, NVX_UVM_DETACHED);
	server_fini(&sv);
}

/*
 * The NIC is deleted under two VMs echoing a flood each (frames landing,
 * echoes kicked out): both sets detach, both guests wait on, their last
 * kick's error, if any, is ENXIO, and stopping them returns everything
 * (the pool's bytes: the teardown).
 */
NET_TEST(nic_deleted_under_running_vms)
{
	struct env *e = &self->e;
	struct nvx_srq_stats st;
	struct nvx_uvm_net no[2];
	/* static: a thread an ASSERT leaves running writes no dead frame */
	static struct flood f[2];
	struct server sv;
	struct vmm *v[2];
	uint64_t rx[2];
	unsigned int i;
	int k;

	ASSERT_EQ(0, server_init(&sv, e->ep, e->wake, true));
	ASSERT_EQ(0, launch_two(e, &sv, &self->ne, v, no));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, neigh_set(&self->ne, v[i]));
		memset(&f[i], 0, sizeof(f[i]));
		f[i].dst = no[i].ip4;
		f[i].pace_us = 2000;
		ASSERT_EQ(0, pthread_create(&f[i].thread, NULL, flood_run,
					    &f[i]));
	}
	/* both take frames and send echoes */
	for (k = 0; k < DEADLINE_MS / 20; k++) {
		ASSERT_EQ(0, serve_for(&sv, 20));
		if (__atomic_load_n(&v[0]->vm.net_sent, __ATOMIC_RELAXED) >= 64 &&
		    __atomic_load_n(&v[1]->vm.net_sent, __ATOMIC_RELAXED) >= 64)
			break;
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, vm_srq_stats(v[i], &st));
		rx[i] = st.rx_packets;
		EXPECT_LE(64U, v[i]->vm.net_sent) TH_LOG("vm %u", i);
	}
	TH_LOG("before: rx %llu and %llu", (unsigned long long)rx[0],
	       (unsigned long long)rx[1]);

	net_env_down(&self->ne);
	for (i = 0; i < 2; i++) {
		__atomic_store_n(&f[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(f[i].thread, NULL);
	}
	/* the sets outlive their NIC, detached */
	for (i = 0; i < 2; i++) {
		for (k = 0; k < SHORT_MS; k++) {
			ASSERT_EQ(0, vm_srq_stats(v[i], &st));
			if (!st.ifindex)
				break;
			usleep(1000);
		}
		EXPECT_EQ(0U, st.ifindex) TH_LOG("vm %u", i);
	}
	ASSERT_EQ(0, serve_for(&sv, 500));
	for (i = 0; i < 2; i++) {
		struct vmm *w = v[i];

		EXPECT_FALSE(vmm_done(w)) TH_LOG("%s", vmm_why(w));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, vmm_stop(v[i], SHORT_MS));
		/* the VMM's thread ended: its counters hold still */
		log_net(v[i]);
		/* a kick after the NIC went: ENXIO, nothing else */
		if (v[i]->vm.net_err)
			EXPECT_EQ(ENXIO, v[i]->vm.net_err) TH_LOG("vm %u", i);
		finish_vm(_metadata, e, v[i], e->ep, NVX_UVM_DETACHED);
	}
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
	static struct flood f;	/* outlives a failed ASSERT: not on the stack */
	static struct pinger p;	/* outlives a failed ASSERT */
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

/*
 * `nvxtool uvm run --net IFNAME,IP` gives udp-echo the same network.
 * With --hello the guest speaks first, so it finds the host's MAC by
 * ARP itself: the hello reaches a socket at the host's address from the
 * guest's address and port 7, three datagrams from that socket are then
 * echoed, and the tool exits 0 with the guest's counters and, with
 * --stats, its set's.
 */
NET_TEST(nvxtool_runs_a_vm_with_a_network)
{
	static struct run r;	/* 128 KiB of output: not on the stack */
	struct sockaddr_in host = { .sin_family = AF_INET };
	struct sockaddr_in from;
	socklen_t fl = sizeof(from), hl = sizeof(host);
	char net[64], hello[32], buf[64], msg[32], want[64];
	uint64_t end;
	char *argv[RUN_ARGS] = {
		"nvxtool", "uvm", "run", "--stats", "--net", net, "udp-echo",
		"--", "--hello", hello, "--count", "3", NULL,
	};
	struct pollfd pf;
	int s, i, status;
	ssize_t n;
	pid_t pid;

	if (system("command -v nvxtool >/dev/null 2>&1"))
		SKIP(return, "nvxtool not on PATH");
	setenv("NVX_GUEST_DIR", self->e.dir, 1);
	inet_pton(AF_INET, HOST_IP, &host.sin_addr);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, bind(s, (struct sockaddr *)&host, sizeof(host)));
	ASSERT_EQ(0, getsockname(s, (struct sockaddr *)&host, &hl));
	snprintf(net, sizeof(net), "%s," NET_PFX "2", self->ne.nic.name);
	snprintf(hello, sizeof(hello), HOST_IP ":%u", ntohs(host.sin_port));
	r.pdeath_sig = SIGKILL;
	pid = spawn(&r, argv);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, add_kid(&self->e, pid));

	/* the hello, unless the tool ends first (not reaped here) */
	pf.fd = s;
	pf.events = POLLIN;
	for (end = now_ms() + DEADLINE_MS; now_ms() < end;) {
		siginfo_t si = { 0 };

		if (poll(&pf, 1, 200) == 1)
			break;
		if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid == pid)
			break;
	}
	if (!(pf.revents & POLLIN)) {
		pump(&r, now_ms() + 1000, NULL);
		TH_LOG("no hello; stdout '%s', stderr '%s'", r.out, r.err);
		ASSERT_TRUE(false);
	}
	n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
	EXPECT_EQ(5, n);
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_EQ(guest_ip(2), from.sin_addr.s_addr);
	EXPECT_EQ(htons(GUEST_PORT), from.sin_port);
	for (i = 0; i < 3; i++) {
		int len = snprintf(msg, sizeof(msg), "datagram %d", i);

		ASSERT_EQ(len, sendto(s, msg, len, 0, (struct sockaddr *)&from,
				      fl));
		ASSERT_EQ(1, poll(&pf, 1, ECHO_WAIT_MS)) TH_LOG("echo %d", i);
		n = recv(s, buf, sizeof(buf), 0);
		EXPECT_EQ(len, n);
		EXPECT_EQ(0, memcmp(buf, msg, len)) TH_LOG("echo %d", i);
	}
	close(s);
	EXPECT_TRUE(pump(&r, now_ms() + DEADLINE_MS, NULL));
	status = reap_kid(&self->e, pid);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("status %#x; stdout '%s', stderr '%s'", status, r.out,
		       r.err);
	EXPECT_NE(NULL, strstr(r.out, "udp-echo: " NET_PFX "2 port 7\n"))
		TH_LOG("%s", r.out);
	snprintf(want, sizeof(want), "udp-echo: hello to %s after ", hello);
	EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s", r.out);
	EXPECT_EQ(3, out_count(r.out, "rx"));
	EXPECT_LE(5, out_count(r.out, "tx"));	/* ARP, hello, 3 echoes */
	EXPECT_EQ(0, out_count(r.out, "bad"));
	EXPECT_NE(NULL, strstr(r.err, " net: ")) TH_LOG("%s", r.err);
}

TEST_HARNESS_MAIN
