/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx guest runtime, networking (net.c): Ethernet, ARP, IPv4, UDP and
 * ICMP echo straight on the shared RX queue set the VMM made in this
 * VM's memory (tools/nvx/lib/nvx_vmnet.h). Frames are read where the NIC
 * wrote them, with no copy and no VM exit; sending copies a frame into a
 * TX slot and posts it on the TX ring, sent at the next net_flush() (one
 * port write, handled by the VMM, per batch).
 *
 * Answered on the way, never seen by the app: ARP requests for our
 * address, ICMP echo requests (ping). Learned on the way: the MAC of
 * every sender (a small ARP cache).
 */
#ifndef NVX_GUEST_NET_H
#define NVX_GUEST_NET_H

#include "rt.h"
#include "../lib/nvx_vmnet.h"

#define ENOMEM		12
#define ENODEV		19
#define EHOSTUNREACH	113

/* A received UDP datagram, valid until the next udp_recv(). */
struct udp_dgram {
	unsigned char mac[6];	/* the sender's MAC */
	unsigned int ip;	/* the sender's address, network order */
	unsigned short sport;	/* its port */
	unsigned short dport;	/* ours */
	const unsigned char *data;	/* in the RX buffer: read it, in place */
	unsigned int len;
};

struct net_stats {
	unsigned long long rx_frames;	/* completions that were frames */
	unsigned long long rx_udp;	/* datagrams given to the app */
	unsigned long long rx_arp;	/* ARP requests answered */
	unsigned long long rx_icmp;	/* echo requests answered */
	unsigned long long rx_bad;	/* frames dropped: malformed, not ours */
	unsigned long long tx_frames;	/* frames posted */
	unsigned long long tx_full;	/* posts that found the ring full */
	unsigned long long kicks;	/* net_flush() port writes */
	unsigned long long halts;	/* waits that slept for an interrupt */
	/*
	 * Sleeps that a frame's interrupt (the set's notification) ended,
	 * not the safety tick: woken before the tick was due, a frame there.
	 */
	unsigned long long irq_wakes;
};

/* 0, -ENODEV (the VMM gave this VM no network page) or -ENOMEM. */
int net_init(void);
const struct nvx_vmnet_info *net_info(void);
const struct net_stats *net_stats(void);

/*
 * Never sleep: poll the completion ring only (no interrupt, no exit
 * while frames come or not). Default: poll NET_SPIN_US, then sleep.
 */
void net_set_poll(int always);

/*
 * Hold every frame's strides (@on 1): nothing is given back to the NIC,
 * which drops what comes once the buffers it had are full (a guest that
 * stops releasing, or a burst taken whole). @on 0 gives them all back.
 */
void net_set_hold(int on);

/*
 * The next UDP datagram for us: 0 with @d filled, or -EAGAIN when none
 * is there and @wait is 0. With @wait, waits (flushing what was sent
 * first). Releases the previous datagram's frame.
 */
int udp_recv(struct udp_dgram *d, int wait);

/*
 * Post a datagram from @sport to @ip:@dport (network order @ip) with
 * @len bytes of @data; @mac the next hop's (NULL: from the ARP cache,
 * -EHOSTUNREACH after sending an ARP request when it is not there).
 * 0, -EMSGSIZE (over the MTU), -EIO (the TX ring was stopped).
 */
int udp_send(const unsigned char *mac, unsigned int ip, unsigned short sport,
	     unsigned short dport, const void *data, unsigned int len);

/* Send everything posted: one port write when something is. */
void net_flush(void);

#endif /* NVX_GUEST_NET_H */
