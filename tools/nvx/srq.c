// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the object "srq", shared multi-packet RX queues
 * (include/uapi/nvx/srq.h).
 *
 *   srq create --dev NAME ...	a grant, NVX_IOC_SRQ_CREATE, the set
 *				mapped; optionally receive and release
 *				frames, and hold the set a while
 *   srq show --dev NAME	NVX_IOC_SRQ_INFO: the set's shape, owner
 *   srq stats --dev NAME	NVX_IOC_SRQ_QUERY: counters, per queue
 *   srq debug-send --dev PEER	a debug command: IPv4/UDP test frames out
 *				of a netdev through an AF_PACKET socket
 *
 * The set, its rings, the test frames and rtnetlink are libnvx's
 * (nvx_srq.h, nvx_net.h).
 *
 * A set works on an nvxsim NIC (ip link add NAME type nvxsim): frames
 * sent out of its peer NAMEp arrive at NAME's receive queues.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <nvx/pool.h>
#include <nvx/srq.h>

#include "nvx_net.h"
#include "nvx_pool.h"
#include "nvx_srq.h"
#include "nvx_util.h"
#include "nvxtool.h"

/* srq create */
#define NVX_SRQ_DEF_QUEUES	1
#define NVX_SRQ_MAX_RECV	100000000ULL
#define NVX_SRQ_MAX_HOLD	86400		/* s */
/* --recv gives up after this long without a completion */
#define NVX_SRQ_RECV_TIMEOUT	(10 * NVX_NSEC_PER_SEC)
/* an idle receiver of srq create sleeps this long between polls */
#define NVX_SRQ_IDLE_NS		(100 * NVX_NSEC_PER_USEC)

/* srq debug-send: the frames are nvx_net.h's */
#define NVX_SEND_MAX_COUNT	1000000000ULL
#define NVX_SEND_MAX_FLOWS	4096

static const uint8_t nvx_broadcast[ETH_ALEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* ------------------------------------------------------------ netdevs */

/* The ifindex of --dev NAME; 0 after printing why there is none. */
static unsigned int nvx_srq_ifindex(struct nvx_ctx *ctx, const char *name)
{
	unsigned int ifindex = if_nametoindex(name);

	if (!ifindex)
		nvx_err("%s: no network device '%s' (%s)%s", ctx->path, name,
			strerror(errno),
			errno == ENODEV ?
			"; an nvxsim NIC is made with: ip link add NAME type nvxsim" :
			"");
	return ifindex;
}

/* The nvx device and the ifindex of --dev NAME: an NVX_EXIT_* status. */
static int nvx_srq_open_nic(struct nvx_ctx *ctx, const char *name,
			    unsigned int *ifindex)
{
	int ret = nvx_open_device(ctx);

	if (ret)
		return ret;
	*ifindex = nvx_srq_ifindex(ctx, name);
	return *ifindex ? NVX_EXIT_OK : NVX_EXIT_FAIL;
}

/* ------------------------------------------------------------- the set */

/* ---------------------------------------------------------- parameters */

static bool nvx_srq_per_queue(const struct nvx_srq_params *p)
{
	return p->flags & NVX_SRQ_PER_QUEUE;
}

/* The set's rule: which of the NIC's frames it takes. */
static void nvx_srq_print_rule(const struct nvx_srq_rule *r)
{
	char ip[INET_ADDRSTRLEN];

	printf("  %-12s ", "takes");
	if (!r->match)
		printf("every frame no other set's rule takes");
	if (r->match & NVX_SRQ_MATCH_MAC)
		printf("frames to %02x:%02x:%02x:%02x:%02x:%02x%s", r->mac[0],
		       r->mac[1], r->mac[2], r->mac[3], r->mac[4], r->mac[5],
		       r->match & NVX_SRQ_MATCH_IP4 ? " and " : "");
	if (r->match & NVX_SRQ_MATCH_IP4)
		printf("IPv4 and ARP for %s",
		       inet_ntop(AF_INET, &r->ip4, ip, sizeof(ip)) ?: "?");
	printf("\n");
}

static void nvx_srq_print_params(const struct nvx_srq_params *p)
{
	char h1[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	char h3[NVX_FMT_BYTES_LEN];
	uint32_t spb = p->stride_size ? p->buf_size / p->stride_size : 0;

	printf("  %-12s %s\n", "sharing", nvx_srq_per_queue(p) ?
	       "per queue: each queue posts only its own buffers" :
	       "shared: one pool of buffers feeds every queue");
	printf("  %-12s %s\n", "poison", p->flags & NVX_SRQ_POISON ?
	       "yes: a returned buffer is filled with 0x6b" : "no");
	printf("  %-12s %u\n", "queues", p->nr_queues);
	printf("  %-12s %u x %s = %s", "buffers", p->nr_bufs,
	       nvx_fmt_bytes(h1, sizeof(h1), p->buf_size),
	       nvx_fmt_bytes(h2, sizeof(h2),
			     (uint64_t)p->nr_bufs * p->buf_size));
	if (nvx_srq_per_queue(p) && p->nr_queues)
		printf(" (%u per queue)", p->nr_bufs / p->nr_queues);
	printf("\n  %-12s %s, %u per buffer%s\n", "strides",
	       nvx_fmt_bytes(h3, sizeof(h3), p->stride_size), spb,
	       spb == 1 ? " (striding off: one frame per buffer)" : "");
	printf("  %-12s %u per queue\n", "cq_entries", p->cq_entries);
	printf("  %-12s %u ring%s of %u entries\n", "release",
	       p->nr_rel_rings, p->nr_rel_rings == 1 ? "" : "s",
	       p->rel_entries);
	printf("  %-12s %u strides posted\n", "low_water", p->low_water);
}

/* The numbers of the parameters in JSON, after the flags. */
static const struct nvx_json_field nvx_srq_param_fields[] = {
	NVX_JSON_UINT(struct nvx_srq_params, nr_queues),
	NVX_JSON_UINT(struct nvx_srq_params, nr_bufs),
	NVX_JSON_UINT(struct nvx_srq_params, buf_size),
	NVX_JSON_UINT(struct nvx_srq_params, stride_size),
	NVX_JSON_UINT(struct nvx_srq_params, cq_entries),
	NVX_JSON_UINT(struct nvx_srq_params, rel_entries),
	NVX_JSON_UINT(struct nvx_srq_params, nr_rel_rings),
	NVX_JSON_UINT(struct nvx_srq_params, low_water),
	{ }
};

static void nvx_srq_json_params(struct nvx_json *j, const char *key,
				const struct nvx_srq_params *p)
{
	nvx_json_object_begin(j, key);
	nvx_json_hex(j, "flags", p->flags);
	nvx_json_bool(j, "per_queue", p->flags & NVX_SRQ_PER_QUEUE);
	nvx_json_bool(j, "poison", p->flags & NVX_SRQ_POISON);
	nvx_json_fields(j, p, nvx_srq_param_fields);
	nvx_json_end(j);
}

/* ------------------------------------------------------------- options */

enum {
	NVX_OPT_DEV = 256,
	NVX_OPT_QUEUES,
	NVX_OPT_BUFS,
	NVX_OPT_BUF_SIZE,
	NVX_OPT_STRIDE,
	NVX_OPT_PER_QUEUE,
	NVX_OPT_POISON,
	NVX_OPT_RECV,
	NVX_OPT_HOLD,
	NVX_OPT_QUEUE,
	NVX_OPT_COUNT,
	NVX_OPT_SIZE,
	NVX_OPT_FLOWS,
	NVX_OPT_MATCH_IP,
	NVX_OPT_MATCH_MAC,
};

/**
 * struct nvx_srq_args - the command line of an srq command
 * @dev: --dev.
 * @p: --queues, --bufs, --buf-size, --stride, --per-queue, --poison.
 * @recv: --recv, 0 without.
 * @hold: --hold, seconds, 0 without.
 * @queue: --queue, NVX_SRQ_ALL_QUEUES without.
 * @count: --count.
 * @size: --size.
 * @flows: --flows.
 * @rule: --match-ip, --match-mac.
 */
struct nvx_srq_args {
	const char *dev;
	struct nvx_srq_params p;
	uint64_t recv;
	unsigned int hold;
	uint32_t queue;
	uint64_t count;
	uint32_t size;
	uint32_t flows;
	struct nvx_srq_rule rule;
};

static const struct option nvx_srq_create_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ "queues", required_argument, NULL, NVX_OPT_QUEUES },
	{ "bufs", required_argument, NULL, NVX_OPT_BUFS },
	{ "buf-size", required_argument, NULL, NVX_OPT_BUF_SIZE },
	{ "stride", required_argument, NULL, NVX_OPT_STRIDE },
	{ "per-queue", no_argument, NULL, NVX_OPT_PER_QUEUE },
	{ "poison", no_argument, NULL, NVX_OPT_POISON },
	{ "recv", required_argument, NULL, NVX_OPT_RECV },
	{ "hold", required_argument, NULL, NVX_OPT_HOLD },
	{ "match-ip", required_argument, NULL, NVX_OPT_MATCH_IP },
	{ "match-mac", required_argument, NULL, NVX_OPT_MATCH_MAC },
	{ }
};

static const struct option nvx_srq_show_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ }
};

static const struct option nvx_srq_stats_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ "queue", required_argument, NULL, NVX_OPT_QUEUE },
	{ }
};

static const struct option nvx_srq_send_opts[] = {
	{ "dev", required_argument, NULL, NVX_OPT_DEV },
	{ "count", required_argument, NULL, NVX_OPT_COUNT },
	{ "size", required_argument, NULL, NVX_OPT_SIZE },
	{ "flows", required_argument, NULL, NVX_OPT_FLOWS },
	{ }
};

/* --NAME: a power-of-two size from @min to @max into *@v. */
static int nvx_srq_pow2(struct nvx_ctx *ctx, const char *name, const char *s,
			uint64_t min, uint64_t max, uint32_t *v)
{
	uint64_t bytes;

	if (!nvx_parse_size(s, &bytes) && bytes >= min && bytes <= max &&
	    nvx_pow2(bytes)) {
		*v = bytes;
		return NVX_EXIT_OK;
	}
	return nvx_usage_error(ctx,
			       "--%s: '%s' is not a power of two from %llu to %llu bytes (e.g. 4K)",
			       name, s, (unsigned long long)min,
			       (unsigned long long)max);
}

/* --dev: a network device name into *@dev. */
static int nvx_srq_dev(struct nvx_ctx *ctx, const char *s, const char **dev)
{
	if (s[0] && strlen(s) < IFNAMSIZ) {
		*dev = s;
		return NVX_EXIT_OK;
	}
	return nvx_usage_error(ctx,
			       "--dev: '%s' is not a network device name (1 to %d characters)",
			       s, IFNAMSIZ - 1);
}

/* --match-ip ADDR: an IPv4 address other than 0.0.0.0 */
static int nvx_srq_match_ip(struct nvx_ctx *ctx, const char *s,
			    struct nvx_srq_rule *r)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1 || !a.s_addr)
		return nvx_usage_error(ctx,
				       "--match-ip: '%s' is not an IPv4 address (A.B.C.D, not 0.0.0.0)",
				       s);
	r->match |= NVX_SRQ_MATCH_IP4;
	r->ip4 = a.s_addr;
	return NVX_EXIT_OK;
}

/* --match-mac MAC: six hex bytes separated by ':', not all zero */
static int nvx_srq_match_mac(struct nvx_ctx *ctx, const char *s,
			     struct nvx_srq_rule *r)
{
	unsigned int b[6], i;
	char end;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2],
		   &b[3], &b[4], &b[5], &end) != 6 ||
	    !(b[0] | b[1] | b[2] | b[3] | b[4] | b[5]))
		return nvx_usage_error(ctx,
				       "--match-mac: '%s' is not a MAC address (xx:xx:xx:xx:xx:xx, not all zero)",
				       s);
	for (i = 0; i < 6; i++)
		r->mac[i] = b[i];
	r->match |= NVX_SRQ_MATCH_MAC;
	return NVX_EXIT_OK;
}

static int nvx_srq_parse(struct nvx_ctx *ctx, int argc, char **argv,
			 const struct option *opts, struct nvx_srq_args *a)
{
	unsigned long long v = 0;
	int c, ret = NVX_EXIT_OK;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case NVX_OPT_DEV:
			ret = nvx_srq_dev(ctx, optarg, &a->dev);
			break;
		case NVX_OPT_QUEUES:
			ret = nvx_opt_u32(ctx, "queues", optarg, 1,
					  NVX_SRQ_MAX_QUEUES, &a->p.nr_queues);
			break;
		case NVX_OPT_BUFS:
			ret = nvx_opt_u32(ctx, "bufs", optarg, 1,
					  NVX_SRQ_MAX_BUFS, &a->p.nr_bufs);
			break;
		case NVX_OPT_BUF_SIZE:
			ret = nvx_srq_pow2(ctx, "buf-size", optarg,
					   NVX_SRQ_MIN_BUF_SIZE,
					   NVX_SRQ_MAX_BUF_SIZE,
					   &a->p.buf_size);
			break;
		case NVX_OPT_STRIDE:
			ret = nvx_srq_pow2(ctx, "stride", optarg,
					   NVX_SRQ_MIN_STRIDE,
					   NVX_SRQ_MAX_BUF_SIZE,
					   &a->p.stride_size);
			break;
		case NVX_OPT_PER_QUEUE:
			a->p.flags |= NVX_SRQ_PER_QUEUE;
			break;
		case NVX_OPT_POISON:
			a->p.flags |= NVX_SRQ_POISON;
			break;
		case NVX_OPT_RECV:
			ret = nvx_opt_num(ctx, "recv", optarg, 1,
					  NVX_SRQ_MAX_RECV, &v);
			a->recv = v;
			break;
		case NVX_OPT_HOLD:
			ret = nvx_opt_u32(ctx, "hold", optarg, 0,
					  NVX_SRQ_MAX_HOLD, &a->hold);
			break;
		case NVX_OPT_QUEUE:
			ret = nvx_opt_u32(ctx, "queue", optarg, 0,
					  NVX_SRQ_MAX_QUEUES - 1, &a->queue);
			break;
		case NVX_OPT_COUNT:
			ret = nvx_opt_num(ctx, "count", optarg, 1,
					  NVX_SEND_MAX_COUNT, &v);
			a->count = v;
			break;
		case NVX_OPT_SIZE:
			ret = nvx_opt_u32(ctx, "size", optarg, NVX_FRAME_HDRS,
					  NVX_FRAME_MAX, &a->size);
			break;
		case NVX_OPT_FLOWS:
			ret = nvx_opt_u32(ctx, "flows", optarg, 1,
					  NVX_SEND_MAX_FLOWS, &a->flows);
			break;
		case NVX_OPT_MATCH_IP:
			ret = nvx_srq_match_ip(ctx, optarg, &a->rule);
			break;
		case NVX_OPT_MATCH_MAC:
			ret = nvx_srq_match_mac(ctx, optarg, &a->rule);
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
		if (ret)
			return ret;
	}
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind]);
	if (opts[0].val == NVX_OPT_DEV && !a->dev)
		return nvx_usage_error(ctx, "missing --dev");
	return NVX_EXIT_OK;
}

/* ---------------------------------------------------------- srq create */

/**
 * struct nvx_srq_recv - what srq create --recv took
 * @frames: frames received, each released.
 * @bytes: their bytes.
 * @fillers: filler completions seen (the kernel releases those).
 * @truncated: frames cut to what their buffer held.
 * @bad: completions naming strides outside the set: not released.
 * @garbage: release entries the kernel ignored.
 * @per_queue: frames per queue.
 * @ns: from the start until the last completion.
 */
struct nvx_srq_recv {
	uint64_t frames;
	uint64_t bytes;
	uint64_t fillers;
	uint64_t truncated;
	uint64_t bad;
	uint64_t garbage;
	uint64_t *per_queue;
	uint64_t ns;
};

/* srq create --json: "layout", and "recv" before its "per_queue". */
static const struct nvx_json_field nvx_srq_layout_fields[] = {
	NVX_JSON_UINT(struct nvx_srq_layout, ring_bytes),
	NVX_JSON_UINT(struct nvx_srq_layout, cq_offset),
	NVX_JSON_UINT(struct nvx_srq_layout, cq_bytes),
	NVX_JSON_UINT(struct nvx_srq_layout, rel_offset),
	NVX_JSON_UINT(struct nvx_srq_layout, rel_bytes),
	NVX_JSON_UINT(struct nvx_srq_layout, buf_offset),
	NVX_JSON_UINT(struct nvx_srq_layout, buf_bytes),
	{ }
};

static const struct nvx_json_field nvx_srq_recv_fields[] = {
	NVX_JSON_UINT(struct nvx_srq_recv, frames),
	NVX_JSON_UINT(struct nvx_srq_recv, bytes),
	NVX_JSON_UINT(struct nvx_srq_recv, fillers),
	NVX_JSON_UINT(struct nvx_srq_recv, truncated),
	NVX_JSON_UINT(struct nvx_srq_recv, bad),
	NVX_JSON_UINT_AS(struct nvx_srq_recv, "release_garbage", garbage),
	NVX_JSON_UINT(struct nvx_srq_recv, ns),
	{ }
};

static const char *nvx_srq_cqe_flags(const struct nvx_srq_cqe *c, bool ok)
{
	if (!ok)
		return "BAD: not in the set";
	if (c->flags & NVX_SRQ_CQE_FILLER)
		return "filler";
	if (c->flags & NVX_SRQ_CQE_TRUNCATED)
		return "truncated";
	return "-";
}

/*
 * Receive @want frames on every queue of @s, printing one line per
 * completion (text) and releasing each frame; NVX_SRQ_IOC_RELEASE after
 * every pass that found some.
 */
static int nvx_srq_recv(struct nvx_ctx *ctx, const struct nvx_srq_set *s,
			const char *dev, uint64_t want,
			struct nvx_srq_recv *r)
{
	struct timespec idle = { 0, NVX_SRQ_IDLE_NS };
	uint64_t t0 = nvx_now_ns(), last = t0, now;
	uint32_t q, n, cons, rel;
	struct nvx_srq_cqe c;
	bool got, ok;
	int err;

	if (!ctx->json)
		printf("%5s %6s %6s %7s %6s  %s\n", "queue", "buf", "stride",
		       "strides", "len", "flags");
	while (r->frames < want) {
		got = false;
		for (q = 0; q < s->p.nr_queues && r->frames < want; q++) {
			n = nvx_srq_cq_ready(s, q, &cons);
			if (n == UINT32_MAX) {
				fflush(stdout);
				nvx_err("%s: queue %u: the completion ring's producer index is %u, more than its %u entries ahead of the consumer's, %u",
					ctx->path, q, nvx_srq_cq(s, q)->prod,
					s->p.cq_entries, cons);
				return NVX_EXIT_FAIL;
			}
			if (n)
				got = true;
			rel = q % s->p.nr_rel_rings;
			for (; n && r->frames < want; n--) {
				c = *nvx_srq_cqe(s, q, cons++);
				ok = nvx_srq_cqe_ok(s, &c);
				if (!ctx->json)
					printf("%5u %6u %6u %7u %6u  %s\n", q,
					       c.buf, c.stride, c.strides,
					       c.len, nvx_srq_cqe_flags(&c, ok));
				if (!ok) {
					r->bad++;
					continue;
				}
				if (c.flags & NVX_SRQ_CQE_FILLER) {
					r->fillers++;
					continue;
				}
				r->frames++;
				r->bytes += c.len;
				r->per_queue[q]++;
				if (c.flags & NVX_SRQ_CQE_TRUNCATED)
					r->truncated++;
				err = nvx_srq_release(s, rel, c.buf, c.strides,
						      &r->garbage);
				if (err) {
					fflush(stdout);
					nvx_err("%s: releasing %u strides of buffer %u: %s",
						ctx->path, c.strides, c.buf,
						err == -ENOSPC ?
						"the release ring stays full" :
						strerror(-err));
					return NVX_EXIT_FAIL;
				}
			}
			nvx_srq_cq_done(s, q, cons);
		}
		now = nvx_now_ns();
		if (got) {
			err = nvx_srq_release_now(s, &r->garbage);
			if (err) {
				fflush(stdout);
				nvx_err("%s: NVX_SRQ_IOC_RELEASE: %s",
					ctx->path, strerror(-err));
				return NVX_EXIT_FAIL;
			}
			last = now;
			r->ns = now - t0;
			continue;
		}
		if (nvx_stop_signal()) {
			fflush(stdout);
			nvx_err("%s: interrupted (%s) after %llu of %llu frames",
				ctx->path,
				strsignal(nvx_stop_signal()),
				(unsigned long long)r->frames,
				(unsigned long long)want);
			return NVX_EXIT_FAIL;
		}
		if (now - last >= NVX_SRQ_RECV_TIMEOUT) {
			fflush(stdout);
			nvx_err("%s: no completion for %llu s, %llu of %llu frames received: is %s up, and is something sending through its peer (e.g. nvxtool srq debug-send --dev %sp)?",
				ctx->path,
				NVX_SRQ_RECV_TIMEOUT / NVX_NSEC_PER_SEC,
				(unsigned long long)r->frames,
				(unsigned long long)want, dev, dev);
			return NVX_EXIT_FAIL;
		}
		nanosleep(&idle, NULL);
	}
	return NVX_EXIT_OK;
}

/* Keep the set @seconds, or until SIGINT or SIGTERM: the signal, or 0. */
static int nvx_srq_hold(unsigned int seconds)
{
	uint64_t end = nvx_now_ns() + seconds * NVX_NSEC_PER_SEC, now, left;
	struct timespec ts;

	while (!nvx_stop_signal() && (now = nvx_now_ns()) < end) {
		left = end - now;
		if (left > 100 * NVX_NSEC_PER_MSEC)
			left = 100 * NVX_NSEC_PER_MSEC;
		ts.tv_sec = 0;
		ts.tv_nsec = left;
		nanosleep(&ts, NULL);
	}
	return nvx_stop_signal();
}

/* "rule": {"match": N[, "mac": "..."][, "ip4": "..."]} */
static void nvx_srq_json_rule(struct nvx_json *j, const struct nvx_srq_rule *r)
{
	char ip[INET_ADDRSTRLEN], mac[18];

	nvx_json_object_begin(j, "rule");
	nvx_json_u64(j, "match", r->match);
	if (r->match & NVX_SRQ_MATCH_MAC) {
		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
			 r->mac[0], r->mac[1], r->mac[2], r->mac[3], r->mac[4],
			 r->mac[5]);
		nvx_json_str(j, "mac", mac);
	}
	if ((r->match & NVX_SRQ_MATCH_IP4) &&
	    inet_ntop(AF_INET, &r->ip4, ip, sizeof(ip)))
		nvx_json_str(j, "ip4", ip);
	nvx_json_end(j);
}

static void nvx_srq_create_print(struct nvx_ctx *ctx, const char *dev,
				 const struct nvx_srq_set *s,
				 const struct nvx_srq_args *a,
				 const struct nvx_srq_recv *r)
{
	const struct nvx_srq_layout *l = &s->l;
	struct nvx_json *j = &ctx->js;
	uint32_t q;

	if (!ctx->json) {
		if (!r)
			return;
		printf("received %llu frames (%llu bytes) within %.3f s; ",
		       (unsigned long long)r->frames,
		       (unsigned long long)r->bytes, (double)r->ns / 1e9);
		printf("fillers %llu, truncated %llu; every frame released\n",
		       (unsigned long long)r->fillers,
		       (unsigned long long)r->truncated);
		printf("frames per queue:");
		for (q = 0; q < s->p.nr_queues; q++)
			printf(" %llu", (unsigned long long)r->per_queue[q]);
		printf("\n");
		return;
	}

	nvx_json_object_begin(j, NULL);
	nvx_json_str(j, "dev", dev);
	nvx_json_u64(j, "ifindex", s->ifindex);
	nvx_json_u64(j, "grant_bytes", s->granted);
	nvx_srq_json_params(j, "params", &s->p);
	nvx_srq_json_rule(j, &a->rule);
	nvx_json_object_begin(j, "layout");
	nvx_json_fields(j, l, nvx_srq_layout_fields);
	nvx_json_end(j);
	if (r) {
		nvx_json_object_begin(j, "recv");
		nvx_json_fields(j, r, nvx_srq_recv_fields);
		nvx_json_array_begin(j, "per_queue");
		for (q = 0; q < s->p.nr_queues; q++)
			nvx_json_u64(j, NULL, r->per_queue[q]);
		nvx_json_end(j);
		nvx_json_end(j);
	} else {
		nvx_json_null(j, "recv");
	}
	nvx_json_u64(j, "hold_s", a->hold);
	nvx_json_end(j);
}

static void nvx_srq_print_layout(const struct nvx_srq_set *s)
{
	const struct nvx_srq_layout *l = &s->l;
	char h[NVX_FMT_BYTES_LEN];

	printf("layout (mmap offsets of the set's fd):\n");
	printf("  %-12s 0x0, %llu bytes, read-write\n", "ring area",
	       (unsigned long long)l->ring_bytes);
	printf("  %-12s 0x%llx + queue x 0x%llx (header, then %u entries)\n",
	       "completion", (unsigned long long)l->cq_offset,
	       (unsigned long long)l->cq_bytes, s->p.cq_entries);
	printf("  %-12s 0x%llx + ring x 0x%llx (header, then %u entries)\n",
	       "release", (unsigned long long)l->rel_offset,
	       (unsigned long long)l->rel_bytes, s->p.rel_entries);
	printf("  %-12s 0x%llx, %s, read-only\n", "buffers",
	       (unsigned long long)l->buf_offset,
	       nvx_fmt_bytes(h, sizeof(h), l->buf_bytes));
}

/* The checks the kernel would make, with a better message. */
static int nvx_srq_check_params(struct nvx_ctx *ctx,
				const struct nvx_srq_params *p)
{
	uint32_t bs = p->buf_size ? p->buf_size : NVX_SRQ_DEF_BUF_SIZE;
	uint32_t ss = p->stride_size ? p->stride_size : NVX_SRQ_DEF_STRIDE;
	uint32_t nr = p->nr_bufs ? p->nr_bufs : NVX_SRQ_DEF_NR_BUFS;

	if (ss > bs)
		return nvx_usage_error(ctx, "strides of %u bytes do not fit in buffers of %u bytes",
				       ss, bs);
	if (bs / ss > NVX_SRQ_MAX_STRIDES)
		return nvx_usage_error(ctx,
				       "%u-byte buffers hold %u strides of %u bytes: at most %u",
				       bs, bs / ss, ss, NVX_SRQ_MAX_STRIDES);
	if (nvx_srq_per_queue(p) && nr % p->nr_queues)
		return nvx_usage_error(ctx,
				       "--per-queue: --bufs %u is not a multiple of the %u queues",
				       nr, p->nr_queues);
	return NVX_EXIT_OK;
}

static int cmd_srq_create(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { .p.nr_queues = NVX_SRQ_DEF_QUEUES };
	struct nvx_stop_old old;
	struct nvx_srq_recv r = { 0 };
	struct nvx_srq_set s = { .fd = -1 };
	char h[NVX_FMT_BYTES_LEN], h2[NVX_FMT_BYTES_LEN];
	enum nvx_srq_step step;
	unsigned int ifindex;
	int ret, err, sig;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_create_opts, &a);
	if (ret)
		return ret;
	ret = nvx_srq_check_params(ctx, &a.p);
	if (ret)
		return ret;
	ret = nvx_srq_open_nic(ctx, a.dev, &ifindex);
	if (ret)
		return ret;
	if (a.recv) {
		r.per_queue = calloc(a.p.nr_queues, sizeof(*r.per_queue));
		if (!r.per_queue) {
			nvx_err("%s: out of memory", ctx->path);
			return NVX_EXIT_FAIL;
		}
		if (!nvx_if_up(a.dev))
			nvx_warn("%s: %s is down: frames reach the set only while it is up (ip link set %s up)",
				 ctx->path, a.dev, a.dev);
	}

	/* SIGINT and SIGTERM end --recv (a failure) and --hold (not one) */
	nvx_stop_catch(&old, 0);

	err = -nvx_srq_open_rule(ctx->fd, &s, ifindex, NVX_NODE_ANY, &a.p,
				 &a.rule, true, &step);
	if (err) {
		nvx_srq_open_perror(ctx, a.dev, s.grant_bytes, step, err);
		ret = NVX_EXIT_FAIL;
		goto out;
	}

	if (!ctx->json) {
		printf("srq set on %s (ifindex %u): %s of buffers in a grant of %s\n",
		       a.dev, ifindex,
		       nvx_fmt_bytes(h, sizeof(h), s.grant_bytes),
		       nvx_fmt_bytes(h2, sizeof(h2), s.granted));
		nvx_srq_print_params(&s.p);
		nvx_srq_print_rule(&a.rule);
		nvx_srq_print_layout(&s);
		fflush(stdout);
	}
	if (a.recv) {
		ret = nvx_srq_recv(ctx, &s, a.dev, a.recv, &r);
		if (ret)
			goto out;
	}
	nvx_srq_create_print(ctx, a.dev, &s, &a, a.recv ? &r : NULL);
	fflush(stdout);
	if (r.bad || r.garbage) {
		nvx_err("%s: %llu completions named strides outside the set, and the kernel ignored %llu release entries",
			ctx->path, (unsigned long long)r.bad,
			(unsigned long long)r.garbage);
		ret = NVX_EXIT_FAIL;
		goto out;
	}

	if (a.hold) {
		fprintf(stderr, "nvxtool: holding the set on %s for %u s; ",
			a.dev, a.hold);
		fprintf(stderr, "end early with Ctrl-C or SIGTERM\n");
		sig = nvx_srq_hold(a.hold);
		fprintf(stderr, "nvxtool: releasing the set (%s)\n",
			sig ? strsignal(sig) : "time is up");
	}
out:
	nvx_srq_close(&s);
	nvx_stop_restore(&old);
	free(r.per_queue);
	return ret;
}

/* ------------------------------------------------------------ srq show */

/* The command name of process @pid, or "?". */
static void nvx_srq_comm(uint32_t pid, char *buf, size_t size)
{
	char path[32];
	FILE *f;

	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static int cmd_srq_show(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { 0 };
	struct nvx_srq_info info;
	struct nvx_json *j = &ctx->js;
	unsigned int ifindex;
	char comm[64];
	int ret;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_show_opts, &a);
	if (ret)
		return ret;
	ret = nvx_srq_open_nic(ctx, a.dev, &ifindex);
	if (ret)
		return ret;

	memset(&info, 0, sizeof(info));
	info.ifindex = ifindex;
	if (ioctl(ctx->fd, NVX_IOC_SRQ_INFO, &info)) {
		nvx_srq_perror(ctx, "NVX_IOC_SRQ_INFO", a.dev,
			       NVX_IOC_SRQ_INFO, errno);
		return NVX_EXIT_FAIL;
	}
	nvx_srq_comm(info.owner, comm, sizeof(comm));

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_str(j, "dev", a.dev);
		nvx_json_u64(j, "ifindex", ifindex);
		if (info.owner) {
			nvx_json_u64(j, "owner", info.owner);
			nvx_json_str(j, "owner_comm", comm);
		} else {
			nvx_json_null(j, "owner");
			nvx_json_null(j, "owner_comm");
		}
		nvx_srq_json_params(j, "params", &info.params);
		nvx_json_end(j);
		return NVX_EXIT_OK;
	}
	printf("srq set on %s (ifindex %u), ", a.dev, ifindex);
	if (info.owner)
		printf("made by pid %u (%s)\n", info.owner, comm);
	else
		printf("made by a process not visible in this pid namespace\n");
	nvx_srq_print_params(&info.params);
	return NVX_EXIT_OK;
}

/* ----------------------------------------------------------- srq stats */

/**
 * struct nvx_srq_counter - a __u64 field of struct nvx_srq_stats
 * @name: its name, the JSON key.
 * @off: its offset.
 * @width: its column in text (queue counters).
 */
struct nvx_srq_counter {
	const char *name;
	size_t off;
	int width;
};

#define NVX_SRQ_COUNTER(f, w) { #f, offsetof(struct nvx_srq_stats, f), w }

/* Counted per queue. */
static const struct nvx_srq_counter nvx_srq_qcounters[] = {
	NVX_SRQ_COUNTER(rx_packets, 12),
	NVX_SRQ_COUNTER(rx_bytes, 14),
	NVX_SRQ_COUNTER(rx_strides, 12),
	NVX_SRQ_COUNTER(fillers, 9),
	NVX_SRQ_COUNTER(truncated, 9),
	NVX_SRQ_COUNTER(drops_no_buf, 12),
	NVX_SRQ_COUNTER(drops_cq_full, 13),
};

/* The set's. */
static const struct nvx_srq_counter nvx_srq_scounters[] = {
	NVX_SRQ_COUNTER(refills, 0),
	NVX_SRQ_COUNTER(bufs_returned, 0),
	NVX_SRQ_COUNTER(released, 0),
	NVX_SRQ_COUNTER(release_garbage, 0),
	NVX_SRQ_COUNTER(tx_packets, 0),
	NVX_SRQ_COUNTER(tx_bytes, 0),
};

static uint64_t nvx_srq_counter(const struct nvx_srq_stats *st,
				const struct nvx_srq_counter *c)
{
	uint64_t v;

	memcpy(&v, (const char *)st + c->off, sizeof(v));
	return v;
}

static void nvx_srq_json_qcounters(struct nvx_json *j,
				   const struct nvx_srq_stats *st)
{
	size_t i;

	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_qcounters); i++)
		nvx_json_u64(j, nvx_srq_qcounters[i].name,
			     nvx_srq_counter(st, &nvx_srq_qcounters[i]));
}

static void nvx_srq_print_qrow(const char *name,
			       const struct nvx_srq_stats *st)
{
	size_t i;

	printf("%-5s", name);
	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_qcounters); i++)
		printf(" %*llu", nvx_srq_qcounters[i].width,
		       (unsigned long long)nvx_srq_counter(st,
							   &nvx_srq_qcounters[i]));
	printf("\n");
}

static int nvx_srq_query(struct nvx_ctx *ctx, const char *dev,
			 uint32_t ifindex, uint32_t queue,
			 struct nvx_srq_stats *st)
{
	struct nvx_srq_query q = { .ifindex = ifindex };
	char what[48];

	q.stats.queue = queue;
	if (!ioctl(ctx->fd, NVX_IOC_SRQ_QUERY, &q)) {
		*st = q.stats;
		return NVX_EXIT_OK;
	}
	if (queue == NVX_SRQ_ALL_QUEUES)
		snprintf(what, sizeof(what), "NVX_IOC_SRQ_QUERY");
	else
		snprintf(what, sizeof(what), "NVX_IOC_SRQ_QUERY of queue %u",
			 queue);
	nvx_srq_perror(ctx, what, dev, NVX_IOC_SRQ_QUERY, errno);
	return NVX_EXIT_FAIL;
}

static int cmd_srq_stats(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = { .queue = NVX_SRQ_ALL_QUEUES };
	struct nvx_srq_stats all, *qs = NULL;
	struct nvx_json *j = &ctx->js;
	uint32_t q, first, n;
	unsigned int ifindex;
	char name[16];
	size_t i;
	int ret;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_stats_opts, &a);
	if (ret)
		return ret;
	ret = nvx_srq_open_nic(ctx, a.dev, &ifindex);
	if (ret)
		return ret;
	ret = nvx_srq_query(ctx, a.dev, ifindex, NVX_SRQ_ALL_QUEUES, &all);
	if (ret)
		return ret;
	if (a.queue != NVX_SRQ_ALL_QUEUES && a.queue >= all.nr_queues) {
		nvx_err("%s: --queue %u: the set on %s has %u queue%s",
			ctx->path, a.queue, a.dev, all.nr_queues,
			all.nr_queues == 1 ? "" : "s");
		return NVX_EXIT_FAIL;
	}
	first = a.queue == NVX_SRQ_ALL_QUEUES ? 0 : a.queue;
	n = a.queue == NVX_SRQ_ALL_QUEUES ? all.nr_queues : 1;
	if (n) {
		qs = calloc(n, sizeof(*qs));
		if (!qs) {
			nvx_err("%s: out of memory", ctx->path);
			return NVX_EXIT_FAIL;
		}
	}
	for (q = 0; q < n; q++) {
		ret = nvx_srq_query(ctx, a.dev, ifindex, first + q, &qs[q]);
		if (ret)
			goto out;
	}

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_str(j, "dev", a.dev);
		nvx_json_u64(j, "ifindex", ifindex);
		nvx_json_u64(j, "nr_queues", all.nr_queues);
		nvx_json_object_begin(j, "counters");
		nvx_srq_json_qcounters(j, &all);
		for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_scounters); i++)
			nvx_json_u64(j, nvx_srq_scounters[i].name,
				     nvx_srq_counter(&all,
						     &nvx_srq_scounters[i]));
		nvx_json_u64(j, "bufs_posted", all.bufs_posted);
		nvx_json_u64(j, "bufs_filling", all.bufs_filling);
		nvx_json_u64(j, "bufs_held", all.bufs_held);
		nvx_json_u64(j, "posted_strides", all.posted_strides);
		nvx_json_end(j);
		nvx_json_array_begin(j, "queues");
		for (q = 0; q < n; q++) {
			nvx_json_object_begin(j, NULL);
			nvx_json_u64(j, "queue", first + q);
			nvx_json_object_begin(j, "counters");
			nvx_srq_json_qcounters(j, &qs[q]);
			nvx_json_end(j);
			nvx_json_end(j);
		}
		nvx_json_end(j);
		nvx_json_end(j);
		goto out;
	}

	printf("srq set on %s (ifindex %u): %u queue%s\n", a.dev, ifindex,
	       all.nr_queues, all.nr_queues == 1 ? "" : "s");
	printf("%-5s", "queue");
	for (i = 0; i < NVX_ARRAY_SIZE(nvx_srq_qcounters); i++)
		printf(" %*s", nvx_srq_qcounters[i].width,
		       nvx_srq_qcounters[i].name);
	printf("\n");
	nvx_srq_print_qrow("all", &all);
	for (q = 0; q < n; q++) {
		snprintf(name, sizeof(name), "%u", first + q);
		nvx_srq_print_qrow(name, &qs[q]);
	}
	printf("refills %llu, buffers returned %llu, ",
	       (unsigned long long)all.refills,
	       (unsigned long long)all.bufs_returned);
	printf("release entries taken %llu (ignored as garbage %llu)\n",
	       (unsigned long long)all.released,
	       (unsigned long long)all.release_garbage);
	printf("sent (NVX_SRQ_IOC_TX) %llu frames, %llu bytes\n",
	       (unsigned long long)all.tx_packets,
	       (unsigned long long)all.tx_bytes);
	printf("buffers now: %u posted, %u filling, %u held for releases; %u strides posted\n",
	       all.bufs_posted, all.bufs_filling, all.bufs_held,
	       all.posted_strides);
out:
	free(qs);
	return ret;
}

/* ------------------------------------------------------ srq debug-send */

/*
 * Where srq debug-send addresses its frames: the MAC address of NAME when
 * @dev is the peer NAMEp of an existing NAME (an nvxsim pair), else the
 * broadcast address.
 */
static void nvx_srq_send_dst(const char *dev, uint8_t dst[ETH_ALEN])
{
	char nic[IFNAMSIZ];
	size_t len = strlen(dev);

	memcpy(dst, nvx_broadcast, ETH_ALEN);
	if (len < 2 || dev[len - 1] != 'p')
		return;
	snprintf(nic, sizeof(nic), "%.*s", (int)(len - 1), dev);
	if (nvx_if_mac(nic, dst))
		memcpy(dst, nvx_broadcast, ETH_ALEN);
}

static int cmd_srq_debug_send(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_srq_args a = {
		.count = 1,
		.size = NVX_FRAME_DEF,
		.flows = 1,
	};
	uint8_t src[ETH_ALEN], dst[ETH_ALEN];
	uint64_t t0, ns, sent = 0;
	struct nvx_json *j = &ctx->js;
	unsigned int ifindex;
	struct nvx_tx tx;
	int ret, err;

	ret = nvx_srq_parse(ctx, argc, argv, nvx_srq_send_opts, &a);
	if (ret)
		return ret;
	ifindex = nvx_srq_ifindex(ctx, a.dev);
	if (!ifindex)
		return NVX_EXIT_FAIL;
	err = -nvx_if_mac(a.dev, src);
	if (err) {
		nvx_err("%s: the MAC address of %s: %s", ctx->path, a.dev,
			strerror(err));
		return NVX_EXIT_FAIL;
	}
	nvx_srq_send_dst(a.dev, dst);
	if (!nvx_if_up(a.dev))
		nvx_warn("%s: %s is down: nothing leaves through it (ip link set %s up)",
			 ctx->path, a.dev, a.dev);

	err = -nvx_tx_open(&tx, ifindex, a.size, a.flows, dst, src);
	if (err) {
		nvx_err("%s: an AF_PACKET socket on %s: %s%s", ctx->path,
			a.dev, strerror(err),
			err == EPERM ? " (needs CAP_NET_RAW)" : "");
		return NVX_EXIT_FAIL;
	}
	t0 = nvx_now_ns();
	err = -nvx_tx_send(&tx, a.count, 0, &sent, NULL);
	ns = nvx_now_ns() - t0;
	nvx_tx_close(&tx);
	if (err) {
		nvx_err("%s: sending on %s, after %llu of %llu frames: %s%s",
			ctx->path, a.dev, (unsigned long long)sent,
			(unsigned long long)a.count,
			err == ETIMEDOUT ? "no room to send for 10 s" :
			strerror(err),
			err == EMSGSIZE ? " (--size above the MTU + 14?)" : "");
		return NVX_EXIT_FAIL;
	}

	if (ctx->json) {
		nvx_json_object_begin(j, NULL);
		nvx_json_str(j, "dev", a.dev);
		nvx_json_u64(j, "ifindex", ifindex);
		nvx_json_u64(j, "count", a.count);
		nvx_json_u64(j, "size", a.size);
		nvx_json_u64(j, "flows", a.flows);
		nvx_json_u64(j, "sent", sent);
		nvx_json_u64(j, "ns", ns);
		nvx_json_double(j, "frames_per_s",
				ns ? (double)sent * NVX_NSEC_PER_SEC / ns : NAN);
		nvx_json_end(j);
		return NVX_EXIT_OK;
	}
	printf("sent %llu frames of %u bytes on %u flow%s out of %s in %.3f s (%.0f frames/s)\n",
	       (unsigned long long)sent, a.size, a.flows,
	       a.flows == 1 ? "" : "s", a.dev, (double)ns / 1e9,
	       ns ? (double)sent * NVX_NSEC_PER_SEC / ns : 0.0);
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------- command table */

const struct nvx_cmd nvx_srq_cmds[] = {
	{
		.name = "create",
		.summary = "make a set on a NIC; receive, release, hold",
		.usage = "--dev NAME [--queues N] [--bufs N] [--buf-size S] [--stride S]\n"
			 "       [--per-queue] [--poison] [--match-ip ADDR] [--match-mac MAC]\n"
			 "       [--recv N] [--hold SECONDS]\n"
			 "\n"
			 "Take a grant of the set's buffers from the pool (NVX_IOC_GRANT: N x\n"
			 "S, rounded up to whole 2 MiB pieces; nothing grows the pool, see\n"
			 "nvxtool pool grow), make a set on the NIC NAME with it\n"
			 "(NVX_IOC_SRQ_CREATE), map its rings and buffers, and print its\n"
			 "parameters, defaults filled in by the kernel, and its mmap()\n"
			 "layout. The set goes away when nvxtool exits.\n"
			 "\n"
			 "  --dev NAME        the NIC: an nvxsim NIC (ip link add NAME\n"
			 "                    type nvxsim) or an mlx5 port bound to\n"
			 "                    nvx_mlx5 (nvxmlxN)\n"
			 "  --queues N        receive queues, 1 to 64 (default 1)\n"
			 "  --bufs N          buffers in the pool (default 128)\n"
			 "  --buf-size S      bytes per buffer, a power of two from 2K to\n"
			 "                    2M (default 16K)\n"
			 "  --stride S        bytes per stride, a power of two from 64 to\n"
			 "                    the buffer size, at most 1024 strides per\n"
			 "                    buffer (default 256); S = --buf-size: one\n"
			 "                    frame per buffer\n"
			 "  --per-queue       NVX_SRQ_PER_QUEUE: the buffers split evenly\n"
			 "                    over the queues (a multiple of N queues)\n"
			 "  --poison          NVX_SRQ_POISON: returned buffers are filled\n"
			 "                    with 0x6b\n"
			 "  --match-ip ADDR   take only IPv4 packets to ADDR and ARP\n"
			 "                    asking for it (NVX_SRQ_MATCH_IP4); without\n"
			 "                    --match-*, every frame no other set's rule\n"
			 "                    takes (one such set per NIC); nvxsim only\n"
			 "  --match-mac MAC   take only frames to MAC (NVX_SRQ_MATCH_MAC);\n"
			 "                    with --match-ip, frames that match both\n"
			 "  --recv N          receive N frames, polling the completion\n"
			 "                    rings: one line per completion (queue, buf,\n"
			 "                    stride, strides, len, flags), each frame\n"
			 "                    released; fails after 10 s without one\n"
			 "  --hold SECONDS    then keep the set that long, e.g. for srq\n"
			 "                    show and srq stats from another shell; SIGINT\n"
			 "                    or SIGTERM ends it early\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"grant_bytes\", \"params\" (the fields of\n"
			 "struct nvx_srq_params, \"flags\" as hex, plus \"per_queue\" and\n"
			 "\"poison\"), \"rule\" (\"match\", and \"mac\" and \"ip4\" when\n"
			 "set), \"layout\" (the fields of struct nvx_srq_layout),\n"
			 "\"recv\" (null without --recv; \"frames\", \"bytes\", \"fillers\",\n"
			 "\"truncated\", \"bad\", \"release_garbage\", \"ns\", \"per_queue\")\n"
			 "and \"hold_s\". Printed before the hold.\n",
		.fn = cmd_srq_create,
	},
	{
		.name = "show",
		.summary = "show the set attached to a NIC and its owner",
		.usage = "--dev NAME\n"
			 "\n"
			 "Show the parameters of the set attached to NAME and the process\n"
			 "that made it (NVX_IOC_SRQ_INFO). Exits 1 when no set is attached.\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"owner\" (a pid, null when not visible\n"
			 "in this pid namespace), \"owner_comm\", \"params\" (as for srq\n"
			 "create).\n",
		.fn = cmd_srq_show,
	},
	{
		.name = "stats",
		.summary = "show the counters of the set attached to a NIC",
		.usage = "--dev NAME [--queue N]\n"
			 "\n"
			 "Show the counters of the set attached to NAME (NVX_IOC_SRQ_QUERY):\n"
			 "the receive counters of all queues together and of each queue\n"
			 "(frames, bytes, strides consumed, fillers, truncated frames,\n"
			 "drops for want of a buffer or of room in the completion ring),\n"
			 "then the set's own: refills, buffers returned, release entries\n"
			 "taken and ignored, frames sent, and the buffers posted, filling\n"
			 "and held now. Exits 1 when no set is attached.\n"
			 "\n"
			 "  --queue N  of the queues, show only queue N\n"
			 "\n"
			 "JSON, the shape of pool stats: \"dev\", \"ifindex\", \"nr_queues\",\n"
			 "\"counters\" (every counter of struct nvx_srq_stats, of the whole\n"
			 "set, by its field name) and \"queues\" (\"queue\" and its\n"
			 "\"counters\": the per-queue fields).\n",
		.fn = cmd_srq_stats,
	},
	{
		.name = "debug-send",
		.summary = "debug: send IPv4/UDP test frames out of a netdev (AF_PACKET)",
		.usage = "--dev PEER [--count N] [--size BYTES] [--flows N]\n"
			 "\n"
			 "A debug command, for feeding a set test frames.\n"
			 "Send N frames of BYTES out of the netdev PEER through an AF_PACKET\n"
			 "socket, 64 per sendmmsg(): Ethernet, IPv4 192.0.2.1 to 192.0.2.2,\n"
			 "UDP to port 9 from port 1024 + the frame's flow, then its number.\n"
			 "Frames go round the flows in turn; one flow lands on one queue.\n"
			 "They are addressed to NAME when PEER is the peer NAMEp of an\n"
			 "nvxsim NIC NAME, else to the broadcast address. Needs CAP_NET_RAW.\n"
			 "\n"
			 "  --dev PEER     the netdev, e.g. NAMEp to reach the NIC NAME\n"
			 "  --count N      frames to send (default 1)\n"
			 "  --size BYTES   bytes per frame, 42 to 9216 (default 64); at\n"
			 "                 most PEER's MTU + 14\n"
			 "  --flows N      UDP source ports to go round, 1 to 4096\n"
			 "                 (default 1)\n"
			 "\n"
			 "JSON: \"dev\", \"ifindex\", \"count\", \"size\", \"flows\", \"sent\",\n"
			 "\"ns\", \"frames_per_s\".\n",
		.fn = cmd_srq_debug_send,
	},
	{ }
};
