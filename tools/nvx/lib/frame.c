// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnvx: IPv4/UDP test frames, and an AF_PACKET socket that sends them
 * in batches (nvx_net.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "nvx_net.h"
#include "nvx_util.h"

static void nvx_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void nvx_put32(uint8_t *p, uint32_t v)
{
	nvx_put16(p, v >> 16);
	nvx_put16(p + 2, v);
}

/**
 * nvx_ip_csum() - the Internet checksum
 * @p: the bytes.
 * @len: how many.
 *
 * Return: the checksum, in host order.
 */
uint16_t nvx_ip_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/**
 * nvx_frame_build() - an IPv4/UDP test frame
 * @f: the frame.
 * @len: its bytes, at least NVX_FRAME_HDRS.
 * @dst: the destination MAC.
 * @src: the source MAC.
 *
 * nvx_frame_number() sets the flow and number.
 */
void nvx_frame_build(uint8_t *f, size_t len, const uint8_t *dst,
		     const uint8_t *src)
{
	static const uint8_t saddr[4] = { 192, 0, 2, 1 };
	static const uint8_t daddr[4] = { 192, 0, 2, 2 };
	uint8_t *ip = f + ETH_HLEN, *udp = f + NVX_FRAME_UDP;
	size_t i;

	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, src, ETH_ALEN);
	nvx_put16(f + 2 * ETH_ALEN, ETH_P_IP);
	ip[0] = 0x45;				/* IPv4, 20 bytes */
	ip[1] = 0;
	nvx_put16(ip + 2, len - ETH_HLEN);
	nvx_put16(ip + 4, 0);
	nvx_put16(ip + 6, 0x4000);		/* DF */
	ip[8] = 64;				/* TTL */
	ip[9] = 17;				/* UDP */
	nvx_put16(ip + 10, 0);
	memcpy(ip + 12, saddr, 4);
	memcpy(ip + 16, daddr, 4);
	nvx_put16(ip + 10, nvx_ip_csum(ip, 20));
	nvx_put16(udp + 2, NVX_FRAME_DPORT);
	nvx_put16(udp + 4, len - NVX_FRAME_UDP);
	nvx_put16(udp + 6, 0);			/* no checksum */
	for (i = NVX_FRAME_HDRS; i < len; i++)
		f[i] = i;
}

/**
 * nvx_frame_number() - the flow (source port) and number of a built frame
 * @f: the frame.
 * @len: its bytes.
 * @flow: the flow.
 * @seq: the number.
 */
void nvx_frame_number(uint8_t *f, size_t len, uint32_t flow,
		      uint64_t seq)
{
	nvx_put16(f + NVX_FRAME_UDP, NVX_FRAME_SPORT + flow);
	if (len >= NVX_FRAME_HDRS + 4)
		nvx_put32(f + NVX_FRAME_HDRS, seq);
}

/**
 * nvx_tx_close() - close what nvx_tx_open() opened
 * @t: the sender.
 */
void nvx_tx_close(struct nvx_tx *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	free(t->frames);
	t->frames = NULL;
}

/**
 * nvx_tx_open() - an AF_PACKET sender of test frames
 * @t: the sender.
 * @ifindex: the netdev the frames leave through.
 * @len: bytes per frame.
 * @flows: the frames go round this many flows.
 * @dst: the destination MAC.
 * @src: the source MAC.
 *
 * Return: 0 or -errno.
 */
int nvx_tx_open(struct nvx_tx *t, unsigned int ifindex, size_t len,
		uint32_t flows, const uint8_t *dst, const uint8_t *src)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_ifindex = ifindex,		/* protocol 0: receive nothing */
	};
	unsigned int i;
	int err;

	memset(t, 0, sizeof(*t));
	t->len = len;
	t->flows = flows;
	t->frames = calloc(NVX_SEND_BATCH, len);
	if (!t->frames)
		return -ENOMEM;
	t->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (t->fd < 0 || bind(t->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		nvx_tx_close(t);
		return err;
	}
	for (i = 0; i < NVX_SEND_BATCH; i++) {
		nvx_frame_build(t->frames + i * len, len, dst, src);
		t->iov[i].iov_base = t->frames + i * len;
		t->iov[i].iov_len = len;
		t->msgs[i].msg_hdr.msg_iov = &t->iov[i];
		t->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

/**
 * nvx_tx_send() - send frames, NVX_SEND_BATCH per sendmmsg()
 * @t: the sender.
 * @count: frames to send.
 * @deadline_ns: stop at this nvx_now_ns() time; 0: none.
 * @sent: how many went.
 * @retries: if not NULL, grows by the calls that sent nothing for want
 *	of room (ENOBUFS, EAGAIN).
 *
 * Return: 0 or -errno (-ETIMEDOUT: no progress for NVX_SEND_STALL).
 */
int nvx_tx_send(struct nvx_tx *t, uint64_t count, uint64_t deadline_ns,
		uint64_t *sent, uint64_t *retries)
{
	uint64_t done = 0, now, progress = nvx_now_ns();
	unsigned int i, n;
	int r;

	while (done < count) {
		n = count - done < NVX_SEND_BATCH ? count - done :
		    NVX_SEND_BATCH;
		for (i = 0; i < n; i++)
			nvx_frame_number(t->frames + i * t->len, t->len,
					 (t->next + i) % t->flows,
					 t->next + i);
		r = sendmmsg(t->fd, t->msgs, n, 0);
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN &&
		    errno != EINTR) {
			*sent = done;
			return -errno;
		}
		now = nvx_now_ns();
		if (r > 0) {
			done += r;
			t->next += r;
			progress = now;
		} else {
			if (retries)
				(*retries)++;
			if (now - progress > NVX_SEND_STALL) {
				*sent = done;
				return -ETIMEDOUT;
			}
			sched_yield();
		}
		if (deadline_ns && now >= deadline_ns)
			break;
	}
	*sent = done;
	return 0;
}
