// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-bench srq: shared RX buffers against per-queue buffers and
 * AF_PACKET.
 */
#include <arpa/inet.h>
#include <stdarg.h>
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

static const uint32_t nvx_sb_queues[NVX_SB_NR_Q] = { 1, 2, 4, 8, 16 };
static const uint32_t nvx_sb_lens[NVX_SB_NR_LENS] = { 64, 256, 1500 };

static const char * const nvx_sb_shape_names[NVX_SB_SHAPES] = {
	[NVX_SB_SHARED]		= "shared",
	[NVX_SB_PER_QUEUE]	= "per_queue",
};

const char * const nvx_sb_method_names[NVX_SB_METHODS] = {
	[NVX_SB_NVX]	= "nvx",
	[NVX_SB_PACKET]	= "af_packet",
};

/**
 * nvx_sb_progress() - a progress line on stderr, when it is a terminal
 * @b: the bench.
 * @fmt: printf() format.
 */
void nvx_sb_progress(const struct nvx_sb *b, const char *fmt, ...)
{
	va_list ap;

	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "%s: %s: ", nvx_prog, b->ctx->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint32_t nvx_div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/**
 * nvx_sb_params() - the parameters of a set of one shape
 * @shape: NVX_SB_SHARED or NVX_SB_PER_QUEUE.
 * @queues: its queues.
 * @nr_bufs: its buffers.
 * @p: filled in.
 */
void nvx_sb_params(int shape, uint32_t queues, uint32_t nr_bufs,
		   struct nvx_srq_params *p)
{
	memset(p, 0, sizeof(*p));
	p->nr_queues = queues;
	p->nr_bufs = nr_bufs;
	if (shape == NVX_SB_SHARED) {
		p->buf_size = NVX_SRQ_DEF_BUF_SIZE;
		p->stride_size = NVX_SRQ_DEF_STRIDE;
	} else {
		p->flags = NVX_SRQ_PER_QUEUE;
		p->buf_size = NVX_SB_BASE_BUF;
		p->stride_size = NVX_SB_BASE_BUF;
	}
}

/* Buffers of @shape that surely hold @frames frames of @len bytes. */
static uint32_t nvx_sb_enough(int shape, uint32_t frames, uint32_t len)
{
	uint32_t spb = NVX_SRQ_DEF_BUF_SIZE / NVX_SRQ_DEF_STRIDE;
	uint32_t per_buf = spb / nvx_div_up(len, NVX_SRQ_DEF_STRIDE);

	if (shape == NVX_SB_PER_QUEUE)
		return frames;
	return nvx_div_up(frames, per_buf ? per_buf : 1);
}

/* The largest grant a set of the bench takes. */
static uint64_t nvx_sb_need(void)
{
	uint64_t need = (uint64_t)NVX_SRQ_MAX_BUFS * NVX_SB_BASE_BUF;
	uint64_t shared = (uint64_t)NVX_SB_BURST * NVX_SRQ_DEF_BUF_SIZE;
	uint64_t frames = 2ULL * NVX_SB_FRAMES * NVX_SB_BASE_BUF;

	if (shared > need)
		need = shared;
	if (frames > need)
		need = frames;
	return need;
}

/* ---- the links */

static int nvx_sb_link_err(struct nvx_sb *b, const char *what, int err)
{
	nvx_err("%s: %s: %s%s", b->ctx->path, what, strerror(err),
		err == EPERM ? " (needs CAP_NET_ADMIN: run as root)" : "");
	return NVX_EXIT_FAIL;
}

/* ifindex and MAC address of @name, brought up without IPv6. */
static int nvx_sb_link_ready(struct nvx_sb *b, const char *name,
			     unsigned int *ifindex, uint8_t *mac)
{
	char what[64];
	int err;

	*ifindex = if_nametoindex(name);
	if (!*ifindex) {
		nvx_err("%s: %s was made, but is not there: %s", b->ctx->path,
			name, strerror(errno));
		return NVX_EXIT_FAIL;
	}
	nvx_link_quiet(name);
	snprintf(what, sizeof(what), "ip link set %s up", name);
	err = -nvx_link_up(*ifindex);
	if (err)
		return nvx_sb_link_err(b, what, err);
	err = -nvx_if_mac(name, mac);
	if (err) {
		nvx_err("%s: the MAC address of %s: %s", b->ctx->path, name,
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* The nvxsim pair and the veth pair of this run, up. */
static int nvx_sb_links(struct nvx_sb *b)
{
	unsigned int id = getpid() % 10000000;	/* names of 15 at most */
	char what[96];
	int err, ret;

	snprintf(b->nic, sizeof(b->nic), "nvxb%u", id);
	snprintf(b->peer, sizeof(b->peer), "%sp", b->nic);
	snprintf(b->veth[0], sizeof(b->veth[0]), "nvxv%ua", id);
	snprintf(b->veth[1], sizeof(b->veth[1]), "nvxv%ub", id);

	snprintf(what, sizeof(what), "ip link add %s type nvxsim", b->nic);
	err = -nvx_link_add(b->nic, "nvxsim", NULL);
	if (err == EOPNOTSUPP) {
		nvx_err("%s: %s: the running kernel has no nvxsim NIC (CONFIG_NVX_SRQ)",
			b->ctx->path, what);
		return NVX_EXIT_FAIL;
	}
	if (err)
		return nvx_sb_link_err(b, what, err);
	b->have_nic = true;
	snprintf(what, sizeof(what), "ip link add %s type veth peer name %s",
		 b->veth[0], b->veth[1]);
	err = -nvx_link_add(b->veth[0], "veth", b->veth[1]);
	if (err)
		return nvx_sb_link_err(b, what, err);
	b->have_veth = true;

	ret = nvx_sb_link_ready(b, b->nic, &b->nic_if, b->nic_mac);
	if (!ret)
		ret = nvx_sb_link_ready(b, b->peer, &b->peer_if, b->peer_mac);
	if (!ret)
		ret = nvx_sb_link_ready(b, b->veth[0], &b->veth_if[0],
					b->veth_mac[0]);
	if (!ret)
		ret = nvx_sb_link_ready(b, b->veth[1], &b->veth_if[1],
					b->veth_mac[1]);
	return ret;
}

/* Delete the links of the run: status 1 when one stays. */
static int nvx_sb_unlink(struct nvx_sb *b)
{
	int err, ret = NVX_EXIT_OK;

	if (b->have_nic) {
		err = -nvx_link_del(b->nic);
		if (err) {
			nvx_err("%s: could not delete %s: %s (ip link del %s)",
				b->ctx->path, b->nic, strerror(err), b->nic);
			ret = NVX_EXIT_FAIL;
		}
		b->have_nic = false;
	}
	if (b->have_veth) {
		err = -nvx_link_del(b->veth[0]);
		if (err) {
			nvx_err("%s: could not delete %s: %s (ip link del %s)",
				b->ctx->path, b->veth[0], strerror(err),
				b->veth[0]);
			ret = NVX_EXIT_FAIL;
		}
		b->have_veth = false;
	}
	return ret;
}

/* ---- the pool */

/* Grow the pool on b->node until @need bytes of it are not granted. */
static int nvx_sb_grow(struct nvx_sb *b, uint64_t need)
{
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	struct nvx_pool_stats s;
	uint64_t avail, done = 0;
	int err;

	err = -nvx_pool_stats_get(b->ctx->fd, b->node, &s);
	if (err) {
		nvx_err("%s: NVX_IOC_POOL_STATS: %s", b->ctx->path,
			nvx_pool_strerror(NVX_IOC_POOL_STATS, err));
		return NVX_EXIT_FAIL;
	}
	avail = s.total_bytes > s.granted_bytes ?
		s.total_bytes - s.granted_bytes : 0;
	if (avail >= need)
		return NVX_EXIT_OK;
	err = -nvx_pool_resize(b->ctx->fd, true, b->node, need - avail, 0,
			       &done);
	b->added += done;
	if (err) {
		nvx_err("%s: the bench needs %s of the pool, which holds %s not granted; growing it by the rest failed: %s",
			b->ctx->path, nvx_fmt_bytes(h1, sizeof(h1), need),
			nvx_fmt_bytes(h2, sizeof(h2), avail),
			nvx_pool_strerror(NVX_IOC_POOL_GROW, err));
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* Shrink the pool by what the bench added; status 1 when some stays. */
static int nvx_sb_give_back(struct nvx_sb *b)
{
	struct timespec ms = { 0, 10 * NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + NVX_SB_RETRY, added = b->added, done;
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	int err = 0;

	while (b->added) {
		done = 0;
		err = -nvx_pool_resize(b->ctx->fd, false, b->node, b->added, 0,
				       &done);
		b->added -= done < b->added ? done : b->added;
		/* a grant may be returned a little after its set is closed */
		if (err != EBUSY || nvx_now_ns() > end)
			break;
		nanosleep(&ms, NULL);
	}
	if (!b->added)
		return NVX_EXIT_OK;
	nvx_err("%s: could not give back %s of the %s the bench added to the pool on node %u (%s); see nvxtool pool shrink",
		b->ctx->path, nvx_fmt_bytes(h1, sizeof(h1), b->added),
		nvx_fmt_bytes(h2, sizeof(h2), added), b->node,
		err ? nvx_pool_strerror(NVX_IOC_POOL_SHRINK, err) :
		"it shrank by less than asked");
	return NVX_EXIT_FAIL;
}

/* ---- sets */

/**
 * nvx_sb_open() - make a set on the bench's NIC, retrying while busy
 * @b: the bench.
 * @s: the set.
 * @p: its parameters.
 * @map: map its rings and buffers.
 *
 * Return: 0, or an NVX_EXIT_* status after a message.
 */
int nvx_sb_open(struct nvx_sb *b, struct nvx_srq_set *s,
		const struct nvx_srq_params *p, bool map)
{
	struct timespec ms = { 0, 10 * NVX_NSEC_PER_MSEC };
	uint64_t end = nvx_now_ns() + NVX_SB_RETRY;
	enum nvx_srq_step step;
	int err;

	for (;;) {
		err = -nvx_srq_open(b->ctx->fd, s, b->nic_if, b->node, p, map,
				    &step);
		if (!err)
			return NVX_EXIT_OK;
		if (!((step == NVX_SRQ_STEP_GRANT && err == ENOSPC) ||
		      (step == NVX_SRQ_STEP_CREATE && err == EBUSY)) ||
		    nvx_now_ns() > end)
			break;
		nanosleep(&ms, NULL);
	}
	nvx_srq_open_perror(b->ctx, b->nic, s->grant_bytes, step, err);
	return NVX_EXIT_FAIL;
}

/*
 * A fresh set of @p; @count frames sent through @tx, none released; the
 * set's counters in *@st. Fails when frames went missing on the way.
 */
static int nvx_sb_fill(struct nvx_sb *b, struct nvx_tx *tx,
		       const struct nvx_srq_params *p, uint64_t count,
		       struct nvx_srq_stats *st)
{
	struct timespec ms = { 0, NVX_NSEC_PER_MSEC };
	uint64_t sent = 0, seen, end;
	struct nvx_srq_set s;
	int ret, err;

	ret = nvx_sb_open(b, &s, p, false);
	if (ret)
		return ret;
	err = -nvx_tx_send(tx, count, 0, &sent, NULL);
	if (err) {
		nvx_srq_close(&s);
		nvx_err("%s: sending on %s, after %llu of %llu frames: %s",
			b->ctx->path, b->peer, (unsigned long long)sent,
			(unsigned long long)count,
			err == ETIMEDOUT ? "no room to send for 10 s" :
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	/* the frames are there when sendmmsg() returns; allow a moment */
	end = nvx_now_ns() + NVX_SB_SETTLE;
	do {
		err = -nvx_srq_stats_get(&s, NVX_SRQ_ALL_QUEUES, st);
		seen = st->rx_packets + st->drops_no_buf + st->drops_cq_full;
		if (err || seen >= sent)
			break;
		nanosleep(&ms, NULL);
	} while (nvx_now_ns() < end);
	nvx_srq_close(&s);
	if (err) {
		nvx_err("%s: NVX_SRQ_IOC_STATS: %s", b->ctx->path,
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	if (seen != sent || st->drops_cq_full) {
		nvx_err("%s: %llu frames sent out of %s, and the set on %s saw %llu: %llu received, %llu dropped for want of a buffer, %llu for a full completion ring (%u entries)",
			b->ctx->path, (unsigned long long)sent, b->peer, b->nic,
			(unsigned long long)seen,
			(unsigned long long)st->rx_packets,
			(unsigned long long)st->drops_no_buf,
			(unsigned long long)st->drops_cq_full, p->cq_entries ?
			p->cq_entries : NVX_SRQ_DEF_CQ_ENTRIES);
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* ---- (a) */

/* Does @shape with @n buffers (per queue for PER_QUEUE) take the burst? */
static int nvx_sb_try(struct nvx_sb *b, struct nvx_tx *tx, int shape,
		      struct nvx_sb_burst *row, uint32_t n, bool *fits)
{
	struct nvx_srq_params p;
	struct nvx_srq_stats st;
	int ret;

	if (nvx_stop_signal())
		return NVX_EXIT_FAIL;
	nvx_sb_params(shape, row->queues,
		      shape == NVX_SB_PER_QUEUE ? n * row->queues : n, &p);
	ret = nvx_sb_fill(b, tx, &p, NVX_SB_BURST, &st);
	if (ret)
		return ret;
	row->trials[shape]++;
	*fits = !st.drops_no_buf;
	return NVX_EXIT_OK;
}

/*
 * The fewest buffers (per queue for the per-queue shape) that take the
 * burst without a drop: a bisection over pool sizes, each tried with a
 * fresh set. Nothing is computed from the geometry: the answer is what
 * the NIC model did.
 */
static int nvx_sb_search(struct nvx_sb *b, struct nvx_tx *tx, int shape,
			 struct nvx_sb_burst *row)
{
	uint32_t q = row->queues, cap, lo = 0, hi, mid;
	bool fits;
	int ret;

	/* per queue: the burst may land on any queue, each needs it all */
	cap = shape == NVX_SB_PER_QUEUE ? NVX_SRQ_MAX_BUFS / q : NVX_SB_BURST;
	ret = nvx_sb_try(b, tx, shape, row, cap, &fits);
	if (ret)
		return ret;
	if (!fits)
		return NVX_EXIT_OK;	/* not found */
	hi = cap;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		ret = nvx_sb_try(b, tx, shape, row, mid, &fits);
		if (ret)
			return ret;
		if (fits)
			hi = mid;
		else
			lo = mid;
	}
	row->found[shape] = true;
	row->nr_bufs[shape] = shape == NVX_SB_PER_QUEUE ? hi * q : hi;
	row->bytes[shape] = (uint64_t)row->nr_bufs[shape] *
			    (shape == NVX_SB_PER_QUEUE ? NVX_SB_BASE_BUF :
			     NVX_SRQ_DEF_BUF_SIZE);
	return NVX_EXIT_OK;
}

static int nvx_sb_bursts(struct nvx_sb *b)
{
	struct nvx_tx tx;
	unsigned int i;
	int ret = NVX_EXIT_OK, shape, err;

	err = -nvx_tx_open(&tx, b->peer_if, NVX_SB_SMALL, 1, b->nic_mac,
			   b->peer_mac);
	if (err) {
		nvx_err("%s: an AF_PACKET socket on %s: %s", b->ctx->path,
			b->peer, strerror(err));
		return NVX_EXIT_FAIL;
	}
	for (i = 0; i < NVX_SB_NR_Q && !ret; i++) {
		b->burst[i].queues = nvx_sb_queues[i];
		for (shape = 0; shape < NVX_SB_SHAPES && !ret; shape++) {
			nvx_sb_progress(b, "(a) %u queue%s, %s...",
					nvx_sb_queues[i],
					nvx_sb_queues[i] == 1 ? "" : "s",
					nvx_sb_shape_names[shape]);
			ret = nvx_sb_search(b, &tx, shape, &b->burst[i]);
		}
	}
	nvx_tx_close(&tx);
	return ret;
}

/* ---- (b) */

static int nvx_sb_frames(struct nvx_sb *b, struct nvx_sb_frame *row)
{
	struct nvx_srq_params p;
	struct nvx_srq_stats st;
	struct nvx_tx tx;
	int ret = NVX_EXIT_OK, shape, err;

	err = -nvx_tx_open(&tx, b->peer_if, row->len, 1, b->nic_mac,
			   b->peer_mac);
	if (err) {
		nvx_err("%s: an AF_PACKET socket on %s: %s", b->ctx->path,
			b->peer, strerror(err));
		return NVX_EXIT_FAIL;
	}
	for (shape = 0; shape < NVX_SB_SHAPES && !ret; shape++) {
		nvx_sb_progress(b, "(b) %u-byte frames, %s...", row->len,
				nvx_sb_shape_names[shape]);
		/* twice what they should need: none is dropped */
		nvx_sb_params(shape, 1,
			      2 * nvx_sb_enough(shape, NVX_SB_FRAMES,
						row->len) + 2, &p);
		ret = nvx_sb_fill(b, &tx, &p, NVX_SB_FRAMES, &st);
		if (ret)
			break;
		if (st.drops_no_buf || !st.rx_packets) {
			nvx_err("%s: a set of %u buffers of %u bytes dropped %llu of %u frames of %u bytes for want of a buffer",
				b->ctx->path, p.nr_bufs, p.buf_size,
				(unsigned long long)st.drops_no_buf,
				NVX_SB_FRAMES, row->len);
			ret = NVX_EXIT_FAIL;
			break;
		}
		row->rx_packets[shape] = st.rx_packets;
		row->rx_strides[shape] = st.rx_strides;
		row->fillers[shape] = st.fillers;
		row->stride[shape] = p.stride_size;
		row->per_frame[shape] = (double)st.rx_strides *
					p.stride_size / st.rx_packets;
	}
	nvx_tx_close(&tx);
	return ret;
}

/* ---- the run */

static int nvx_sb_body(struct nvx_sb *b)
{
	unsigned int i;
	int ret, m;

	ret = nvx_sb_links(b);
	if (ret)
		return ret;
	ret = nvx_sb_grow(b, nvx_sb_need());
	if (ret)
		return ret;
	ret = nvx_sb_bursts(b);
	for (i = 0; i < NVX_SB_NR_LENS && !ret; i++) {
		b->frame[i].len = nvx_sb_lens[i];
		ret = nvx_sb_frames(b, &b->frame[i]);
	}
	for (m = 0; m < NVX_SB_METHODS && !ret; m++)
		ret = nvx_sb_rate_run(b, m);
	if (!ret && nvx_stop_signal())
		ret = NVX_EXIT_FAIL;
	return ret;
}

static double nvx_sb_burst_ratio(const struct nvx_sb_burst *row)
{
	if (!row->found[NVX_SB_SHARED] || !row->found[NVX_SB_PER_QUEUE])
		return NAN;
	return nvx_bench_div(row->bytes[NVX_SB_PER_QUEUE],
			    row->bytes[NVX_SB_SHARED]);
}

static double nvx_sb_headline(const struct nvx_sb *b)
{
	unsigned int i;

	for (i = 0; i < NVX_SB_NR_Q; i++)
		if (b->burst[i].queues == NVX_SB_HEADLINE_Q)
			return nvx_sb_burst_ratio(&b->burst[i]);
	return NAN;
}

/* The cap of the search of (a) for @shape at @queues, in buffers. */
static uint32_t nvx_sb_cap(int shape, uint32_t queues)
{
	return shape == NVX_SB_PER_QUEUE ?
	       NVX_SRQ_MAX_BUFS / queues * queues : NVX_SB_BURST;
}

static void nvx_sb_print_json(const struct nvx_sb *b)
{
	struct nvx_json *j = &b->ctx->js;
	unsigned int i;
	int shape, m;

	nvx_json_object_begin(j, NULL);
	nvx_json_array_begin(j, "cpus");
	nvx_json_s64(j, NULL, b->cpu[0]);
	nvx_json_s64(j, NULL, b->cpu[1]);
	nvx_json_end(j);
	nvx_json_bool(j, "same_cpu", b->same_cpu);
	nvx_json_u64(j, "node", b->node);

	nvx_json_object_begin(j, "burst");
	nvx_json_u64(j, "frames", NVX_SB_BURST);
	nvx_json_u64(j, "frame_bytes", NVX_SB_SMALL);
	nvx_json_array_begin(j, "rows");
	for (i = 0; i < NVX_SB_NR_Q; i++) {
		const struct nvx_sb_burst *row = &b->burst[i];

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "queues", row->queues);
		for (shape = 0; shape < NVX_SB_SHAPES; shape++) {
			struct nvx_srq_params p;

			nvx_sb_params(shape, row->queues, 0, &p);
			nvx_json_object_begin(j, nvx_sb_shape_names[shape]);
			nvx_json_u64(j, "buf_size", p.buf_size);
			nvx_json_u64(j, "stride_size", p.stride_size);
			if (row->found[shape]) {
				nvx_json_u64(j, "nr_bufs", row->nr_bufs[shape]);
				nvx_json_u64(j, "bytes", row->bytes[shape]);
			} else {
				nvx_json_null(j, "nr_bufs");
				nvx_json_null(j, "bytes");
			}
			nvx_json_u64(j, "searched_up_to",
				     nvx_sb_cap(shape, row->queues));
			nvx_json_u64(j, "trials", row->trials[shape]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "ratio", nvx_sb_burst_ratio(row));
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "per_frame");
	nvx_json_u64(j, "frames", NVX_SB_FRAMES);
	nvx_json_array_begin(j, "rows");
	for (i = 0; i < NVX_SB_NR_LENS; i++) {
		const struct nvx_sb_frame *row = &b->frame[i];

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "frame_bytes", row->len);
		for (shape = 0; shape < NVX_SB_SHAPES; shape++) {
			nvx_json_object_begin(j, nvx_sb_shape_names[shape]);
			nvx_json_double(j, "bytes_per_frame",
					row->per_frame[shape]);
			nvx_json_u64(j, "stride_size", row->stride[shape]);
			nvx_json_u64(j, "rx_packets", row->rx_packets[shape]);
			nvx_json_u64(j, "rx_strides", row->rx_strides[shape]);
			nvx_json_u64(j, "fillers", row->fillers[shape]);
			nvx_json_end(j);
		}
		nvx_json_double(j, "ratio",
				nvx_bench_div(row->per_frame[NVX_SB_PER_QUEUE],
					      row->per_frame[NVX_SB_SHARED]));
		nvx_json_end(j);
	}
	nvx_json_end(j);
	nvx_json_end(j);

	nvx_json_object_begin(j, "rate");
	nvx_json_u64(j, "duration_ns", b->duration_ns);
	nvx_json_u64(j, "frame_bytes", NVX_SB_SMALL);
	nvx_json_u64(j, "batch", NVX_SEND_BATCH);
	nvx_json_u64(j, "flows", NVX_SB_RATE_FLOWS);
	nvx_json_u64(j, "buffer_bytes",
		     (uint64_t)NVX_SB_RATE_BUFS * NVX_SRQ_DEF_BUF_SIZE);
	for (m = 0; m < NVX_SB_METHODS; m++) {
		const struct nvx_sb_rate *r = &b->rate[m];

		nvx_json_object_begin(j, nvx_sb_method_names[m]);
		nvx_json_u64(j, "sent", r->sent);
		nvx_json_u64(j, "received", r->received);
		nvx_json_u64(j, "ns", r->ns);
		nvx_json_double(j, "pps", r->pps);
		nvx_json_u64(j, "ring_drops", r->ring_drops);
		nvx_json_u64(j, "lost", r->sent > r->received ?
			     r->sent - r->received : 0);
		nvx_json_u64(j, "send_retries", r->retries);
		nvx_json_end(j);
	}
	nvx_json_double(j, "ratio",
			nvx_bench_div(b->rate[NVX_SB_NVX].pps,
				      b->rate[NVX_SB_PACKET].pps));
	nvx_json_end(j);

	nvx_json_double(j, "headline", nvx_sb_headline(b));
	nvx_json_u64(j, "headline_queues", NVX_SB_HEADLINE_Q);
	nvx_json_end(j);
}

/* "1.50", or "n/a" where there is no ratio. */
static const char *nvx_sb_fmt_ratio(char *buf, size_t size, double r)
{
	if (isfinite(r))
		snprintf(buf, size, "%.2f", r);
	else
		snprintf(buf, size, "n/a");
	return buf;
}

static void nvx_sb_print_text(const struct nvx_sb *b)
{
	static const char * const receivers[NVX_SB_METHODS] = {
		[NVX_SB_NVX]	= "polls the completion rings, releases",
		[NVX_SB_PACKET]	= "polls a TPACKET_V3 ring on a veth",
	};
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN], r[16];
	char n1[16], n2[16];
	unsigned int i, missing = 0;
	int m;

	printf("bench srq: nvx shared striding RX buffers against ");
	printf("a pool per queue with a frame per buffer, and AF_PACKET\n");
	printf("NIC %s (nvxsim, peer %s), veth %s and %s, pool memory on node %u\n",
	       b->nic, b->peer, b->veth[0], b->veth[1], b->node);

	printf("\n(a) buffer memory that takes a burst of %u frames of %u B ",
	       NVX_SB_BURST, NVX_SB_SMALL);
	printf("on one flow (so one queue) without a drop\n");
	printf("    shared: one pool, %u KiB buffers, %u B strides; ",
	       NVX_SRQ_DEF_BUF_SIZE / 1024, NVX_SRQ_DEF_STRIDE);
	printf("per queue: a pool per queue, a frame per %u B buffer\n",
	       NVX_SB_BASE_BUF);
	printf("%6s %12s %14s %12s %14s %10s\n", "queues", "shared bufs",
	       "shared memory", "per-q bufs", "per-q memory", "per-q/shr");
	for (i = 0; i < NVX_SB_NR_Q; i++) {
		const struct nvx_sb_burst *row = &b->burst[i];

		snprintf(n1, sizeof(n1), "%u", row->nr_bufs[NVX_SB_SHARED]);
		snprintf(n2, sizeof(n2), "%u", row->nr_bufs[NVX_SB_PER_QUEUE]);
		nvx_fmt_bytes(h1, sizeof(h1), row->bytes[NVX_SB_SHARED]);
		nvx_fmt_bytes(h2, sizeof(h2), row->bytes[NVX_SB_PER_QUEUE]);
		if (!row->found[NVX_SB_SHARED]) {
			snprintf(n1, sizeof(n1), "n/a");
			snprintf(h1, sizeof(h1), "n/a");
			missing++;
		}
		if (!row->found[NVX_SB_PER_QUEUE]) {
			snprintf(n2, sizeof(n2), "n/a");
			snprintf(h2, sizeof(h2), "n/a");
			missing++;
		}
		printf("%6u %12s %14s %12s %14s %10s\n", row->queues, n1, h1,
		       n2, h2, nvx_sb_fmt_ratio(r, sizeof(r),
						nvx_sb_burst_ratio(row)));
	}
	if (missing) {
		printf("n/a: even the largest set tried dropped frames ");
		printf("(shared: %u buffers, a buffer per frame; ",
		       NVX_SB_BURST);
		printf("per queue: %u buffers in all, NVX_SRQ_MAX_BUFS)\n",
		       NVX_SRQ_MAX_BUFS);
	}

	printf("\n(b) buffer memory a frame consumes: %u frames of one flow, ",
	       NVX_SB_FRAMES);
	printf("strides consumed (fillers included) x stride size / frames\n");
	printf("%8s %16s %16s %10s\n", "frame", "shared, strided",
	       "a frame per buf", "ratio");
	for (i = 0; i < NVX_SB_NR_LENS; i++) {
		const struct nvx_sb_frame *row = &b->frame[i];

		printf("%6u B %14.1f B %14.1f B %10s\n", row->len,
		       row->per_frame[NVX_SB_SHARED],
		       row->per_frame[NVX_SB_PER_QUEUE],
		       nvx_sb_fmt_ratio(r, sizeof(r),
					nvx_bench_div(row->per_frame[NVX_SB_PER_QUEUE],
						      row->per_frame[NVX_SB_SHARED])));
	}

	printf("\n(c) %u B frames into one instance for %.1f s per method: ",
	       NVX_SB_SMALL, (double)b->duration_ns / NVX_NSEC_PER_SEC);
	printf("a sending thread (sendmmsg, %u frames a call, %u flows) ",
	       NVX_SEND_BATCH, NVX_SB_RATE_FLOWS);
	printf("and a receiving thread; %s of buffers for each\n",
	       nvx_fmt_bytes(h1, sizeof(h1),
			     (uint64_t)NVX_SB_RATE_BUFS * NVX_SRQ_DEF_BUF_SIZE));
	if (b->same_cpu)
		printf("    both threads on CPU %d, the only CPU this process may use\n",
		       b->cpu[0]);
	else
		printf("    receiving thread on CPU %d, sending thread on CPU %d\n",
		       b->cpu[0], b->cpu[1]);
	printf("%-10s %-37s %11s %11s %11s %10s %10s\n", "method",
	       "receiving thread", "sent", "received", "frames/s",
	       "ring drops", "lost");
	for (m = 0; m < NVX_SB_METHODS; m++) {
		const struct nvx_sb_rate *rt = &b->rate[m];

		printf("%-10s %-37s %11llu %11llu %11.0f %10llu %10llu\n",
		       nvx_sb_method_names[m], receivers[m],
		       (unsigned long long)rt->sent,
		       (unsigned long long)rt->received, rt->pps,
		       (unsigned long long)rt->ring_drops,
		       (unsigned long long)(rt->sent > rt->received ?
					    rt->sent - rt->received : 0));
	}
	printf("nvx/af_packet: %s (frames received per second)\n",
	       nvx_sb_fmt_ratio(r, sizeof(r),
				nvx_bench_div(b->rate[NVX_SB_NVX].pps,
					      b->rate[NVX_SB_PACKET].pps)));

	printf("\nheadline: per-queue/shared buffer memory at %u queues: %s (goal >= %u)\n",
	       NVX_SB_HEADLINE_Q,
	       nvx_sb_fmt_ratio(r, sizeof(r), nvx_sb_headline(b)),
	       NVX_SB_GOAL);
	printf("note: frame rates are from this machine; ");
	printf("under QEMU TCG they are not hardware numbers: compare the ratios\n");
}

/* --duration SECONDS into *@duration. */
static int nvx_sb_parse(struct nvx_ctx *ctx, int argc, char **argv,
			unsigned long long *duration)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ }
	};
	int c, ret;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c != 'd')
			return nvx_getopt_error(ctx, c, argv);
		ret = nvx_opt_num(ctx, "duration", optarg, 1,
				  NVX_SB_MAX_DURATION, duration);
		if (ret)
			return ret;
	}
	return nvx_getopt_done(ctx, argc, argv);
}

/**
 * cmd_bench_srq() - nvx-bench srq
 * @ctx: the benchmark.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_bench_srq(struct nvx_ctx *ctx, int argc, char **argv)
{
	unsigned long long duration = NVX_SB_DURATION;
	struct nvx_stop_old old;
	struct nvx_features f = { 0 };
	struct nvx_pool_stats ps;
	struct nvx_sb b;
	int ret, unlinked, given;

	ret = nvx_sb_parse(ctx, argc, argv, &duration);
	if (ret)
		return ret;
	ret = nvx_ioctl(ctx, NVX_IOC_FEATURES, &f, "NVX_IOC_FEATURES");
	if (ret)
		return ret;
	if (!(f.features & NVX_FEAT_SRQ)) {
		nvx_err("%s: the running kernel has no shared RX queues (nvxtool features: srq no; CONFIG_NVX_SRQ)",
			ctx->path);
		return NVX_EXIT_FAIL;
	}

	memset(&b, 0, sizeof(b));
	b.ctx = ctx;
	b.duration_ns = duration * NVX_NSEC_PER_SEC;
	b.node = nvx_cpu_node();
	if (nvx_pool_stats_get(ctx->fd, b.node, &ps) == -EINVAL)
		b.node = 0;
	ret = nvx_bench_cpus(ctx, b.cpu, &b.same_cpu);
	if (ret)
		return ret;

	/* stop at the next step on SIGINT or SIGTERM, and clean up */
	nvx_stop_catch(&old, SA_RESTART);

	ret = nvx_sb_body(&b);

	/* every set is closed: the links and the pool go back as they were */
	unlinked = nvx_sb_unlink(&b);
	given = nvx_sb_give_back(&b);
	if (nvx_stop_end(ctx, &old))
		return NVX_EXIT_FAIL;
	if (ret)
		return ret;
	if (ctx->json)
		nvx_sb_print_json(&b);
	else
		nvx_sb_print_text(&b);
	return unlinked ? unlinked : given;
}

const char nvx_bench_srq_usage[] =
	"[--duration SECONDS]\n"
	"\n"
	"Makes its own nvxsim NIC and veth pair (deleted at the end), grows\n"
	"the pool by what it lacks for its largest set (128 MiB) and gives\n"
	"that back at the end. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).\n"
	"\n"
	"(a) The buffer memory that takes a burst of 4096 frames of 64 B\n"
	"on one flow, so on one queue, without a drop, for 1, 2, 4, 8 and\n"
	"16 queues: shared (the defaults: one pool of 16 KiB buffers,\n"
	"256 B strides) against a pool per queue with a frame per 2 KiB\n"
	"buffer (NVX_SRQ_PER_QUEUE, stride = buffer = 2 KiB). Each is the\n"
	"fewest buffers with which a fresh set, sent the burst without a\n"
	"release, drops nothing (drops_no_buf), found by trying sets.\n"
	"\n"
	"(b) The buffer memory a frame consumes, for frames of 64, 256\n"
	"and 1500 B: 2048 frames into a set with room, then rx_strides x\n"
	"stride size / rx_packets (fillers included), both shapes.\n"
	"\n"
	"(c) Frames per second into one instance: a thread sends 64 B\n"
	"frames on 64 flows (sendmmsg, 64 a call) for SECONDS while this\n"
	"thread receives: from a shared set of 4 queues and 4 MiB, polling\n"
	"the completion rings, reading each frame, giving the strides back\n"
	"and calling NVX_SRQ_IOC_RELEASE after every pass; and from an\n"
	"AF_PACKET TPACKET_V3 ring of the same 4 MiB on a veth, polling\n"
	"its blocks. Frames received per second, the ratio, the ring's\n"
	"drops and the frames lost.\n"
	"\n"
	"  --duration SECONDS  sending time per method in (c), 1 to 60\n"
	"                      (default 2)\n"
	"\n"
	"Frame rates are from this machine; under QEMU TCG they are not\n"
	"hardware numbers: compare the ratios. The headline is the memory\n"
	"per queue over the shared memory of (a) at 8 queues (goal >= 32).\n"
	"JSON: \"cpus\", \"same_cpu\", \"node\", \"burst\" (\"frames\",\n"
	"\"frame_bytes\", \"rows\": \"queues\", \"shared\" and \"per_queue\"\n"
	"with \"buf_size\", \"stride_size\", \"nr_bufs\" and \"bytes\" (null\n"
	"when even \"searched_up_to\" buffers dropped frames), \"trials\";\n"
	"\"ratio\"), \"per_frame\" (\"frames\", \"rows\": \"frame_bytes\",\n"
	"\"shared\" and \"per_queue\" with \"bytes_per_frame\",\n"
	"\"stride_size\", \"rx_packets\", \"rx_strides\", \"fillers\";\n"
	"\"ratio\"), \"rate\" (\"duration_ns\", \"frame_bytes\", \"batch\",\n"
	"\"flows\", \"buffer_bytes\", \"nvx\" and \"af_packet\" with \"sent\",\n"
	"\"received\", \"ns\", \"pps\", \"ring_drops\", \"lost\",\n"
	"\"send_retries\"; \"ratio\"), \"headline\" and \"headline_queues\".\n";
