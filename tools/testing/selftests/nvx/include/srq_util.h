/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the nvx selftest group "srq" (lib/srq_util.c): the
 * software NIC pair of a test ("ip link add NAME type nvxsim": NAME and
 * its peer NAMEp), test frames, an SRQ set and its rings, background
 * senders and the SRQ tracepoints.
 *
 * Frames are IPv4/UDP frames sent out of the peer with an AF_PACKET
 * socket; the NIC delivers them synchronously into the set's buffers, so
 * when sendto() returns the completion is in the ring. Each frame carries
 * a tag (flow, sequence number, length) and a byte pattern derived from
 * it, so that any frame found in a buffer can be checked byte for byte.
 */
#ifndef NVX_SRQ_UTIL_H
#define NVX_SRQ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <grp.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include <nvx/pool.h>
#include <nvx/srq.h>

#include "pool_util.h"

#define ETH_HDR		14
#define IP_HDR		20
#define UDP_HDR		8
#define TAG_OFF		(ETH_HDR + IP_HDR + UDP_HDR)
#define MIN_FRAME	(TAG_OFF + (unsigned int)sizeof(struct tag))
#define MAX_ETH_FRAME	1514		/* MTU 1500 + Ethernet header */
#define MAX_FRAME	4096
#define TAG_MAGIC	0x6e767873U	/* "nvxs" */
#define SPORT		1000
#define DPORT		9000
#define POISON_BYTE	0x6b
#define ETH_P_LOCAL	0x88b5		/* IEEE local experimental */
#define ARP_FRAME	60		/* send_arp()'s frames */

/* How long a test waits for something that should have happened at once. */
#define WAIT_MS		2000

/* What every test frame carries right after its UDP header. */
struct tag {
	uint32_t magic;
	uint32_t sport;
	uint32_t seq;
	uint32_t len;
};

/* The NIC pair of a test and the socket that sends from the peer. */
struct nic {
	char name[IFNAMSIZ];
	char peer[IFNAMSIZ];
	int ifindex;
	int peer_ifindex;
	unsigned char mac[ETH_ALEN];
	unsigned char peer_mac[ETH_ALEN];
	int tx;			/* AF_PACKET, sends on the peer */
	bool alive;		/* NAME exists and is ours to delete */
};

/*
 * An SRQ set and its mappings. With NVX_SRQ_RINGS_IN_GRANT
 * (srq_open_in_grant()) @ring and @bufs point into @grant, the grant
 * mapped read-write as a user VM has it.
 */
struct srq {
	int fd;
	struct nvx_srq_create c;
	unsigned char *ring;
	const unsigned char *bufs;
	uint32_t spb;		/* strides per buffer */
	unsigned char *grant;	/* MAP_FAILED unless in a grant */
	uint64_t grant_bytes;
};

/* What a queue is filling, to check that completions follow the packing. */
struct qtrack {
	int64_t cur;		/* buffer being filled; -1: none yet */
	uint32_t next;		/* its first unused stride */
};

#define BLAST_THREADS	2
#define BLAST_FLOWS	64		/* per sender */
#define BLAST_SPORT	3000
#define BLAST_LEN	64

/* A thread that sends BLAST_LEN-byte frames into the NIC until told. */
struct blaster {
	const struct nic *n;
	const int *stop;
	int id;
	bool running;
	pthread_t th;
	uint64_t sent;
	uint64_t refused;		/* ENOBUFS or EAGAIN: tried again */
	int err;
};

/* The senders of a test; the fixture stops them on the way out. */
struct blast {
	int stop;
	struct blaster t[BLAST_THREADS];
};

/* A thread of releaser_thread(). */
struct releaser {
	const struct srq *s;
	int ring;
	int cpu;			/* -1: not pinned */
	const struct nvx_srq_rel *ents;
	int n;
	uint64_t released;
	uint64_t garbage;
	int err;
};

int srq_grant(int fd, uint64_t bytes);
int srq_grant_flags(int fd, uint64_t bytes, uint32_t flags);
int __attribute__((format(printf, 1, 2))) sh(const char *fmt, ...);
void nic_destroy(struct nic *n);
int nic_create_as(struct nic *n, const char *prefix, bool leftover);
int nic_create(struct nic *n);
void put16(unsigned char *p, uint16_t v);
int send_frame(const struct nic *n, unsigned int len, uint16_t sport,
	       uint32_t seq);
int send_frame_to(const struct nic *n, const unsigned char *dmac,
		  uint32_t dip, unsigned int len, uint16_t sport, uint32_t seq);
int send_arp(const struct nic *n, uint32_t tip);
int send_frames(const struct nic *n, uint32_t count, unsigned int len,
		uint16_t sport);
void *releaser_thread(void *arg);
void srq_init(struct srq *s);
void srq_close(struct srq *s);
int srq_open(int dev, struct srq *s, int ifindex,
	     const struct nvx_srq_params *p, uint32_t flags);
int srq_open_rule(int dev, struct srq *s, int ifindex,
		  const struct nvx_srq_params *p, uint32_t flags,
		  uint32_t match, const unsigned char *mac, uint32_t ip4);
uint64_t srq_ring_bytes(const struct nvx_srq_params *p);
int srq_open_in_grant(int dev, struct srq *s, int ifindex,
		      const struct nvx_srq_params *p, uint64_t grant_bytes,
		      uint64_t buf_off, uint64_t ring_off, int fill,
		      uint32_t grant_flags);
struct nvx_srq_ring *cq_hdr(const struct srq *s, uint32_t q);
struct nvx_srq_ring *rel_hdr(const struct srq *s, uint32_t r);
uint32_t cq_prod(const struct srq *s, uint32_t q);
void cq_set_cons(const struct srq *s, uint32_t q, uint32_t cons);
uint32_t cq_pending(const struct srq *s, uint32_t q);
uint32_t cq_wait(const struct srq *s, uint32_t q, uint32_t n);
bool cq_pop(const struct srq *s, uint32_t q, struct nvx_srq_cqe *e);
int cq_next(const struct srq *s, uint32_t q, struct nvx_srq_cqe *e);
int rel_push(const struct srq *s, uint32_t r, uint32_t buf,
	     uint32_t strides, uint16_t flags);
int srq_release(const struct srq *s, struct nvx_srq_release *out);
int rel_give(const struct srq *s, uint32_t r, uint32_t buf,
	     uint32_t strides);
int srq_stats(const struct srq *s, uint32_t q, struct nvx_srq_stats *st);
int srq_steer(const struct srq *s, const uint16_t *table, uint32_t n);
int srq_steer_all(const struct srq *s, uint16_t q);
int wait_accounted(const struct srq *s, uint64_t sent,
		   struct nvx_srq_stats *st);
int wait_detached(int dev, int ifindex);
const unsigned char *frame_at(const struct srq *s,
			      const struct nvx_srq_cqe *e);
uint32_t strides_for(const struct srq *s, uint32_t len);
bool bytes_match(const struct nic *n, const struct srq *s,
		 const struct nvx_srq_cqe *e, unsigned int len,
		 uint16_t sport, uint32_t seq);
bool cqe_frame_ok(const struct nic *n, const struct srq *s,
		  const struct nvx_srq_cqe *e, struct tag *t);
void track_init(struct qtrack *t, unsigned int n);
bool track(struct qtrack *t, const struct nvx_srq_cqe *e, uint32_t spb);
int unused_ifindex(void);
int srq_query(int dev, int ifindex, struct nvx_srq_stats *st);
int srq_shut(struct srq *s, bool fd_first);
bool cq_wait_any(const struct srq *s, unsigned int ms);
void blast_stop(struct blast *b);
int blast_start(struct blast *b, const struct nic *n);
uint64_t blast_sent(const struct blast *b, uint64_t *refused,
		    int *err);
const char *srq_tracefs(void);
int srq_trace_enable(const char *dir, const char *val);
int allowed_cpus(int *cpus, int max);

#endif /* NVX_SRQ_UTIL_H */
