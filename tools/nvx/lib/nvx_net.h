/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nvx_net.h - test network helpers of libnvx: netdevs and rtnetlink
 * (lib/netlink.c), IPv4/UDP test frames and their sender (lib/frame.c).
 *
 * The frames: Ethernet, IPv4 192.0.2.1 to 192.0.2.2 (TEST-NET-1), UDP
 * from port NVX_FRAME_SPORT + flow to port NVX_FRAME_DPORT, then the
 * frame's number and a byte pattern. The flow hash of a frame depends on
 * the addresses and ports only: one flow, one queue.
 */
#ifndef NVX_NET_LIB_H
#define NVX_NET_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/if_ether.h>

#define NVX_FRAME_HDRS		42		/* Ethernet + IPv4 + UDP */
#define NVX_FRAME_DEF		64
#define NVX_FRAME_MAX		9216
#define NVX_FRAME_SPORT		1024
#define NVX_FRAME_DPORT		9
#define NVX_FRAME_UDP		34		/* offset of the UDP header */
#define NVX_SEND_BATCH		64		/* frames per sendmmsg() */
/* a send that makes no progress (ENOBUFS) this long fails */
#define NVX_SEND_STALL		(10 * 1000000000ULL)

int nvx_if_mac(const char *name, uint8_t mac[ETH_ALEN]);
bool nvx_if_up(const char *name);
int nvx_link_add(const char *name, const char *kind, const char *peer);
int nvx_link_del(const char *name);
int nvx_link_up(unsigned int ifindex);
void nvx_link_quiet(const char *name);

/**
 * struct nvx_tx - frames sent in batches through an AF_PACKET socket
 * @fd: the socket, bound to the netdev they leave through.
 * @len: bytes per frame.
 * @flows: flows the frames go round, 1 or more.
 * @next: the number of the next frame.
 * @frames: NVX_SEND_BATCH frames of @len bytes.
 * @iov: one per frame.
 * @msgs: one per frame, for sendmmsg().
 */
struct nvx_tx {
	int fd;
	size_t len;
	uint32_t flows;
	uint64_t next;
	uint8_t *frames;
	struct iovec iov[NVX_SEND_BATCH];
	struct mmsghdr msgs[NVX_SEND_BATCH];
};

uint16_t nvx_ip_csum(const uint8_t *p, size_t len);
void nvx_frame_build(uint8_t *f, size_t len, const uint8_t *dst,
		     const uint8_t *src);
void nvx_frame_number(uint8_t *f, size_t len, uint32_t flow, uint64_t seq);
int nvx_tx_open(struct nvx_tx *t, unsigned int ifindex, size_t len,
		uint32_t flows, const uint8_t *dst, const uint8_t *src);
void nvx_tx_close(struct nvx_tx *t);
int nvx_tx_send(struct nvx_tx *t, uint64_t count, uint64_t deadline_ns,
		uint64_t *sent, uint64_t *retries);

#endif /* NVX_NET_LIB_H */
