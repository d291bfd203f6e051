// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench srq, part (c): the frames per second one receiving thread
 * takes from an nvx set against an AF_PACKET TPACKET_V3 ring.
 */
#include <stdarg.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <nvx/pool.h>
#include <nvx/srq.h>

#include "srq.h"

/* ---- (c) */

/**
 * struct nvx_sb_sender - the sending thread of (c)
 * @tx: what it sends through.
 * @cpu: where it runs.
 * @duration_ns: how long it sends.
 * @t0: when it started.
 * @t1: when it stopped.
 * @sent: frames sent.
 * @retries: sendmmsg() calls that found no room.
 * @err: -errno of a send that failed, else 0.
 * @done: set last, when it stopped.
 */
struct nvx_sb_sender {
	struct nvx_tx *tx;
	int cpu;
	uint64_t duration_ns;
	uint64_t t0;
	uint64_t t1;
	uint64_t sent;
	uint64_t retries;
	int err;
	int done;
};

static void *nvx_sb_send_thread(void *arg)
{
	struct nvx_sb_sender *snd = arg;

	nvx_pin_self(snd->cpu);
	snd->t0 = nvx_now_ns();
	snd->err = nvx_tx_send(snd->tx, UINT64_MAX,
			       snd->t0 + snd->duration_ns, &snd->sent,
			       &snd->retries);
	snd->t1 = nvx_now_ns();
	__atomic_store_n(&snd->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/**
 * struct nvx_sb_rx - the receiving thread of (c)
 * @received: frames taken.
 * @last_ns: when the last were taken.
 * @done_ns: when the receiver saw the sender stopped, 0 before.
 * @sum: of a word of every frame, so that every frame is read.
 * @garbage: nvx: release entries the kernel ignored.
 * @bad: nvx: completions naming strides outside the set.
 */
struct nvx_sb_rx {
	uint64_t received;
	uint64_t last_ns;
	uint64_t done_ns;
	uint32_t sum;
	uint64_t garbage;
	uint64_t bad;
};

/* Nothing new: true when the receiver is done, after a pause. */
static bool nvx_sb_rx_idle(const struct nvx_sb *b,
			   const struct nvx_sb_sender *snd,
			   struct nvx_sb_rx *rx)
{
	uint64_t now = nvx_now_ns();

	if (!rx->done_ns && __atomic_load_n(&snd->done, __ATOMIC_ACQUIRE))
		rx->done_ns = now;
	if (rx->done_ns &&
	    now - (rx->last_ns > rx->done_ns ? rx->last_ns : rx->done_ns) >
	    NVX_SB_DRAIN)
		return true;
	nvx_sb_relax(b);
	return false;
}

static uint32_t nvx_sb_word(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * nvx: poll every completion ring, read each frame's UDP ports, give
 * the strides back (consecutive frames of a buffer in one entry), and
 * NVX_SRQ_IOC_RELEASE after every pass that found frames.
 */
static int nvx_sb_rx_nvx(struct nvx_sb *b, const struct nvx_srq_set *s,
			 const struct nvx_sb_sender *snd, struct nvx_sb_rx *rx)
{
	uint32_t q, n, cons, rel, pend_buf = 0, pend_n;
	const struct nvx_srq_cqe *c;
	uint64_t got;
	int err;

	for (;;) {
		got = 0;
		for (q = 0; q < s->p.nr_queues; q++) {
			n = nvx_srq_cq_ready(s, q, &cons);
			if (n == UINT32_MAX) {
				nvx_err("%s: nvx: queue %u: the completion ring's producer index is more than its %u entries ahead",
					b->ctx->path, q, s->p.cq_entries);
				return NVX_EXIT_FAIL;
			}
			rel = q % s->p.nr_rel_rings;
			pend_n = 0;
			for (; n; n--, cons++) {
				c = nvx_srq_cqe(s, q, cons);
				if (c->flags & NVX_SRQ_CQE_FILLER)
					continue;
				if (c->buf >= s->p.nr_bufs ||
				    c->stride >= s->spb || !c->strides) {
					rx->bad++;
					continue;
				}
				rx->sum += nvx_sb_word(s->bufs +
					(uint64_t)c->buf * s->p.buf_size +
					(uint64_t)c->stride * s->p.stride_size +
					NVX_FRAME_UDP);
				got++;
				if (pend_n && c->buf == pend_buf &&
				    pend_n + c->strides <= UINT16_MAX) {
					pend_n += c->strides;
					continue;
				}
				if (pend_n) {
					err = nvx_srq_release(s, rel, pend_buf,
							      pend_n,
							      &rx->garbage);
					if (err)
						goto fail;
				}
				pend_buf = c->buf;
				pend_n = c->strides;
			}
			nvx_srq_cq_done(s, q, cons);
			if (pend_n) {
				err = nvx_srq_release(s, rel, pend_buf, pend_n,
						      &rx->garbage);
				if (err)
					goto fail;
			}
		}
		if (got) {
			rx->received += got;
			rx->last_ns = nvx_now_ns();
			err = nvx_srq_release_now(s, &rx->garbage);
			if (err)
				goto fail;
			continue;
		}
		if (nvx_stop_signal())
			return NVX_EXIT_FAIL;
		if (nvx_sb_rx_idle(b, snd, rx))
			return NVX_EXIT_OK;
	}
fail:
	nvx_err("%s: nvx: giving strides back: %s", b->ctx->path,
		err == -ENOSPC ? "the release ring stays full" :
		strerror(-err));
	return NVX_EXIT_FAIL;
}

/* AF_PACKET: poll the blocks of the TPACKET_V3 ring, read every frame. */
static int nvx_sb_rx_packet(struct nvx_sb *b, uint8_t *ring,
			    const struct nvx_sb_sender *snd,
			    struct nvx_sb_rx *rx)
{
	struct tpacket_block_desc *bd;
	struct tpacket3_hdr *h;
	unsigned int cur = 0;
	uint32_t i, n;

	for (;;) {
		bd = (struct tpacket_block_desc *)(ring +
						   (size_t)cur * NVX_SB_BLOCK);
		if (__atomic_load_n(&bd->hdr.bh1.block_status,
				    __ATOMIC_ACQUIRE) & TP_STATUS_USER) {
			n = bd->hdr.bh1.num_pkts;
			h = (struct tpacket3_hdr *)((uint8_t *)bd +
				bd->hdr.bh1.offset_to_first_pkt);
			for (i = 0; i < n; i++) {
				rx->sum += nvx_sb_word((uint8_t *)h + h->tp_mac +
						       NVX_FRAME_UDP);
				h = (struct tpacket3_hdr *)((uint8_t *)h +
							    h->tp_next_offset);
			}
			__atomic_store_n(&bd->hdr.bh1.block_status,
					 TP_STATUS_KERNEL, __ATOMIC_RELEASE);
			cur = (cur + 1) % NVX_SB_BLOCKS;
			rx->received += n;
			rx->last_ns = nvx_now_ns();
			continue;
		}
		if (nvx_stop_signal())
			return NVX_EXIT_FAIL;
		if (nvx_sb_rx_idle(b, snd, rx))
			return NVX_EXIT_OK;
	}
}

/* A TPACKET_V3 ring of NVX_SB_BLOCKS blocks on the receiving veth. */
static int nvx_sb_packet_open(struct nvx_sb *b, int *fd, uint8_t **ring)
{
	struct tpacket_req3 req = {
		.tp_block_size = NVX_SB_BLOCK,
		.tp_block_nr = NVX_SB_BLOCKS,
		.tp_frame_size = NVX_SB_BASE_BUF,
		.tp_frame_nr = NVX_SB_BLOCK / NVX_SB_BASE_BUF * NVX_SB_BLOCKS,
		.tp_retire_blk_tov = NVX_SB_BLOCK_TOV,
	};
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = b->veth_if[1],
	};
	size_t size = (size_t)NVX_SB_BLOCK * NVX_SB_BLOCKS;
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);
	int v = TPACKET_V3, err;
	const char *what;
	void *m;

	*ring = NULL;
	/* protocol 0: nothing arrives before the ring is there */
	what = "socket(AF_PACKET)";
	*fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		goto fail;
	what = "PACKET_VERSION TPACKET_V3";
	if (setsockopt(*fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		goto fail;
	what = "PACKET_RX_RING";
	if (setsockopt(*fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		goto fail;
	what = "mmap of the ring";
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	*ring = m;
	what = "bind";
	if (bind(*fd, (struct sockaddr *)&sll, sizeof(sll)))
		goto fail;
	/* the counters start from zero */
	getsockopt(*fd, SOL_PACKET, PACKET_STATISTICS, &st, &len);
	return NVX_EXIT_OK;
fail:
	err = errno;
	nvx_err("%s: af_packet: %s on %s: %s", b->ctx->path, what, b->veth[1],
		strerror(err));
	if (*ring)
		munmap(*ring, size);
	if (*fd >= 0)
		close(*fd);
	*ring = NULL;
	*fd = -1;
	return NVX_EXIT_FAIL;
}

/**
 * nvx_sb_rate_run() - (c) with one method
 * @b: the bench; the result goes to @b->rate[@method].
 * @method: NVX_SB_NVX or NVX_SB_PACKET.
 *
 * Return: 0, or an NVX_EXIT_* status after a message.
 */
int nvx_sb_rate_run(struct nvx_sb *b, int method)
{
	struct nvx_sb_sender snd = {
		.cpu = b->cpu[1],
		.duration_ns = b->duration_ns,
	};
	struct nvx_sb_rate *r = &b->rate[method];
	const char *name = nvx_sb_method_names[method];
	struct nvx_srq_set s = { .fd = -1 };
	struct tpacket_stats_v3 pst;
	socklen_t len = sizeof(pst);
	struct nvx_sb_rx rx = { 0 };
	struct nvx_srq_params p;
	struct nvx_srq_stats st;
	struct nvx_tx tx = { .fd = -1 };
	uint8_t *ring = NULL;
	int pfd = -1, ret, err;
	pthread_t th;

	nvx_sb_progress(b, "(c) %s, %llu s...", name,
			(unsigned long long)(b->duration_ns / NVX_NSEC_PER_SEC));
	if (method == NVX_SB_NVX) {
		nvx_sb_params(NVX_SB_SHARED, NVX_SB_RATE_QUEUES,
			      NVX_SB_RATE_BUFS, &p);
		ret = nvx_sb_open(b, &s, &p, true);
		if (ret)
			return ret;
		err = -nvx_tx_open(&tx, b->peer_if, NVX_SB_SMALL,
				   NVX_SB_RATE_FLOWS, b->nic_mac, b->peer_mac);
	} else {
		ret = nvx_sb_packet_open(b, &pfd, &ring);
		if (ret)
			return ret;
		err = -nvx_tx_open(&tx, b->veth_if[0], NVX_SB_SMALL,
				   NVX_SB_RATE_FLOWS, b->veth_mac[1],
				   b->veth_mac[0]);
	}
	ret = NVX_EXIT_FAIL;
	if (err) {
		nvx_err("%s: %s: an AF_PACKET socket to send on: %s",
			b->ctx->path, name, strerror(err));
		goto out;
	}
	snd.tx = &tx;
	nvx_pin_self(b->cpu[0]);
	err = pthread_create(&th, NULL, nvx_sb_send_thread, &snd);
	if (err) {
		nvx_err("%s: %s: cannot start the sending thread: %s",
			b->ctx->path, name, strerror(err));
		goto out;
	}
	if (method == NVX_SB_NVX)
		ret = nvx_sb_rx_nvx(b, &s, &snd, &rx);
	else
		ret = nvx_sb_rx_packet(b, ring, &snd, &rx);
	pthread_join(th, NULL);
	__asm__ volatile("" : : "r"(rx.sum));	/* every frame was read */
	if (ret)
		goto out;
	ret = NVX_EXIT_FAIL;
	if (snd.err) {
		nvx_err("%s: %s: sending, after %llu frames: %s", b->ctx->path,
			name, (unsigned long long)snd.sent,
			snd.err == -ETIMEDOUT ? "no room to send for 10 s" :
			strerror(-snd.err));
		goto out;
	}
	if (method == NVX_SB_NVX) {
		err = -nvx_srq_stats_get(&s, NVX_SRQ_ALL_QUEUES, &st);
		if (err) {
			nvx_err("%s: nvx: NVX_SRQ_IOC_STATS: %s", b->ctx->path,
				strerror(err));
			goto out;
		}
		if (rx.bad || rx.garbage) {
			nvx_err("%s: nvx: %llu completions named strides outside the set, and the kernel ignored %llu release entries",
				b->ctx->path, (unsigned long long)rx.bad,
				(unsigned long long)rx.garbage);
			goto out;
		}
		r->ring_drops = st.drops_no_buf + st.drops_cq_full;
	} else {
		if (getsockopt(pfd, SOL_PACKET, PACKET_STATISTICS, &pst,
			       &len)) {
			nvx_err("%s: af_packet: PACKET_STATISTICS: %s",
				b->ctx->path, strerror(errno));
			goto out;
		}
		r->ring_drops = pst.tp_drops;
	}
	r->sent = snd.sent;
	r->received = rx.received;
	r->retries = snd.retries;
	r->ns = rx.last_ns > snd.t0 ? rx.last_ns - snd.t0 : 0;
	r->pps = r->ns ? (double)r->received * NVX_NSEC_PER_SEC / r->ns : 0;
	ret = NVX_EXIT_OK;
out:
	nvx_tx_close(&tx);
	nvx_srq_close(&s);
	if (ring)
		munmap(ring, (size_t)NVX_SB_BLOCK * NVX_SB_BLOCKS);
	if (pfd >= 0)
		close(pfd);
	return ret;
}
