// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the objects "pool" and "grant" (include/uapi/nvx/pool.h).
 *
 *   pool grow SIZE [--node N]	NVX_IOC_POOL_GROW
 *   pool shrink SIZE [--node N]	NVX_IOC_POOL_SHRINK
 *   pool show [--node N]	NVX_IOC_POOL_STATS, one line per node
 *   pool stats			NVX_IOC_POOL_STATS, every counter
 *   grant create SIZE ...	NVX_IOC_GRANT, then map, touch and time it
 *
 * The ioctls themselves are libnvx's (nvx_pool.h).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nvx/pool.h>

#include "nvxtool.h"

/* ------------------------------------------------------------- helpers */

/*
 * Print why @req on @node failed with @err, e.g.
 * "nvxtool: pool grow: Operation not permitted: needs CAP_SYS_ADMIN".
 */
static void nvx_pool_perror(struct nvx_ctx *ctx, unsigned long req,
			    uint32_t node, int err)
{
	const char *why = nvx_pool_explain(req, err);

	if (err == EINVAL && node != NVX_NODE_ANY)
		nvx_err("%s: node %u does not exist or is offline", ctx->path,
			node);
	else if (why)
		nvx_err("%s: %s: %s", ctx->path, strerror(err), why);
	else
		nvx_err("%s: %s", ctx->path, strerror(err));
}

/* Open the device and read the pool's counters summed over its nodes. */
static int nvx_pool_stats_sum(struct nvx_ctx *ctx, struct nvx_pool_stats *s)
{
	int ret, err;

	ret = nvx_open_device(ctx);
	if (ret)
		return ret;
	err = -nvx_pool_stats_get(ctx->fd, NVX_NODE_ANY, s);
	if (err) {
		nvx_pool_perror(ctx, NVX_IOC_POOL_STATS, NVX_NODE_ANY, err);
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

static const char *nvx_node_name(char *buf, size_t size, uint32_t node)
{
	if (node == NVX_NODE_ANY)
		snprintf(buf, size, "any");
	else
		snprintf(buf, size, "%u", node);
	return buf;
}

/* Bytes in MiB, whole when they are: "1024", "0.50". */
static const char *nvx_fmt_mib(char *buf, size_t size, uint64_t bytes)
{
	if (bytes % NVX_MIB)
		snprintf(buf, size, "%.2f", (double)bytes / NVX_MIB);
	else
		snprintf(buf, size, "%llu", (unsigned long long)(bytes / NVX_MIB));
	return buf;
}

/* -------------------------------------------------------------- options */

enum {
	NVX_OPT_NODE = 256,
	NVX_OPT_WAIT,
	NVX_OPT_CLEAN_ONLY,
	NVX_OPT_HOLD,
	NVX_OPT_CHUNK,
	NVX_OPT_BLOCKS,
};

/**
 * struct nvx_pool_args - the command line of a pool or grant command
 * @node: --node, NVX_NODE_ANY by default.
 * @flags: NVX_GRANT_* from --wait, --clean-only and --blocks.
 * @hold: --hold.
 * @bytes: the SIZE operand.
 * @chunk_shift: log2 of --chunk, 0 without it.
 */
struct nvx_pool_args {
	uint32_t node;
	uint32_t flags;
	bool hold;
	uint64_t bytes;
	uint32_t chunk_shift;
};

static int nvx_parse_node(struct nvx_ctx *ctx, const char *s, uint32_t *node)
{
	unsigned long long v;

	if (!strcmp(s, "any")) {
		*node = NVX_NODE_ANY;
		return NVX_EXIT_OK;
	}
	if (nvx_parse_uint(s, NVX_NODE_ANY - 1, &v))
		return nvx_usage_error(ctx, "--node: '%s' is not a node number or 'any'",
				       s);
	*node = v;
	return NVX_EXIT_OK;
}

/* --chunk SIZE: a power of two from 2M to 1G, as a shift. */
static int nvx_parse_chunk(struct nvx_ctx *ctx, const char *s, uint32_t *shift)
{
	uint64_t v;
	uint32_t i;

	if (nvx_parse_size(s, &v) == 0) {
		for (i = NVX_POOL_PIECE_SHIFT; i <= NVX_POOL_CHUNK_SHIFT_MAX; i++) {
			if (v == 1ULL << i) {
				*shift = i;
				return NVX_EXIT_OK;
			}
		}
	}
	return nvx_usage_error(ctx, "--chunk: '%s' is not a power of two from 2M to 1G",
			       s);
}

/*
 * Parse the options in @opts and, with @want_size, one SIZE operand; no
 * operand otherwise.
 */
static int nvx_pool_parse(struct nvx_ctx *ctx, int argc, char **argv,
			  const struct option *opts, bool want_size,
			  struct nvx_pool_args *a)
{
	int c, ret;

	memset(a, 0, sizeof(*a));
	a->node = NVX_NODE_ANY;
	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case NVX_OPT_NODE:
			ret = nvx_parse_node(ctx, optarg, &a->node);
			if (ret)
				return ret;
			break;
		case NVX_OPT_WAIT:
			a->flags |= NVX_GRANT_WAIT;
			break;
		case NVX_OPT_CLEAN_ONLY:
			a->flags |= NVX_GRANT_CLEAN_ONLY;
			break;
		case NVX_OPT_BLOCKS:
			a->flags |= NVX_GRANT_BLOCKS;
			break;
		case NVX_OPT_HOLD:
			a->hold = true;
			break;
		case NVX_OPT_CHUNK:
			ret = nvx_parse_chunk(ctx, optarg, &a->chunk_shift);
			if (ret)
				return ret;
			break;
		default:
			return nvx_getopt_error(ctx, c, argv);
		}
	}
	if ((a->flags & NVX_GRANT_WAIT) && (a->flags & NVX_GRANT_CLEAN_ONLY))
		return nvx_usage_error(ctx, "--wait and --clean-only exclude each other");

	if (!want_size) {
		if (optind < argc)
			return nvx_usage_error(ctx, "unexpected argument '%s'",
					       argv[optind]);
		return NVX_EXIT_OK;
	}
	if (optind == argc)
		return nvx_usage_error(ctx, "missing SIZE (e.g. 512M, 4G)");
	if (optind + 1 < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind + 1]);
	ret = nvx_parse_size(argv[optind], &a->bytes);
	if (ret == -ERANGE)
		return nvx_usage_error(ctx, "SIZE '%s' is too large",
				       argv[optind]);
	if (ret)
		return nvx_usage_error(ctx, "'%s' is not a SIZE (e.g. 512M, 4G)",
				       argv[optind]);
	if (!a->bytes)
		return nvx_usage_error(ctx, "SIZE must be more than 0");
	return NVX_EXIT_OK;
}

static const struct option nvx_node_opts[] = {
	{ "node", required_argument, NULL, NVX_OPT_NODE },
	{ }
};

static const struct option nvx_grow_opts[] = {
	{ "node", required_argument, NULL, NVX_OPT_NODE },
	{ "chunk", required_argument, NULL, NVX_OPT_CHUNK },
	{ }
};

static const struct option nvx_grant_opts[] = {
	{ "node", required_argument, NULL, NVX_OPT_NODE },
	{ "wait", no_argument, NULL, NVX_OPT_WAIT },
	{ "clean-only", no_argument, NULL, NVX_OPT_CLEAN_ONLY },
	{ "blocks", no_argument, NULL, NVX_OPT_BLOCKS },
	{ "hold", no_argument, NULL, NVX_OPT_HOLD },
	{ }
};

/* ------------------------------------------------------ grow and shrink */

static int nvx_pool_resize_cmd(struct nvx_ctx *ctx, int argc, char **argv,
			       bool grow)
{
	unsigned long req = grow ? NVX_IOC_POOL_GROW : NVX_IOC_POOL_SHRINK;
	char done_s[NVX_FMT_BYTES_LEN], asked_s[NVX_FMT_BYTES_LEN], node_s[16];
	struct nvx_pool_args a;
	uint64_t done = 0;
	bool partial;
	int ret, err;

	ret = nvx_pool_parse(ctx, argc, argv, grow ? nvx_grow_opts :
			     nvx_node_opts, true, &a);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;

	err = -nvx_pool_resize(ctx->fd, grow, a.node, a.bytes, a.chunk_shift, &done);
	/* only these two still did some of the work */
	partial = err == (grow ? ENOMEM : EBUSY);
	if (err && !partial) {
		nvx_pool_perror(ctx, req, a.node, err);
		return NVX_EXIT_FAIL;
	}

	nvx_fmt_bytes(done_s, sizeof(done_s), done);
	nvx_fmt_bytes(asked_s, sizeof(asked_s), a.bytes);
	nvx_node_name(node_s, sizeof(node_s), a.node);
	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		if (a.node == NVX_NODE_ANY)
			nvx_json_null(&ctx->js, "node");
		else
			nvx_json_u64(&ctx->js, "node", a.node);
		nvx_json_u64(&ctx->js, "requested_bytes", a.bytes);
		nvx_json_u64(&ctx->js, "done_bytes", done);
		nvx_json_bool(&ctx->js, "complete", !err);
		nvx_json_end(&ctx->js);
	} else if (partial) {
		printf("%s %s of %s %s the pool (node %s)\n",
		       grow ? "added" : "released", done_s, asked_s,
		       grow ? "to" : "from", node_s);
	} else {
		printf("%s %s %s the pool (node %s", grow ? "added" : "released",
		       done_s, grow ? "to" : "from", node_s);
		if (done != a.bytes)
			printf("; %s asked for, rounded up to whole chunks",
			       asked_s);
		printf(")\n");
	}

	if (partial) {
		fflush(stdout);
		nvx_pool_perror(ctx, req, a.node, err);
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

static int cmd_pool_grow(struct nvx_ctx *ctx, int argc, char **argv)
{
	return nvx_pool_resize_cmd(ctx, argc, argv, true);
}

static int cmd_pool_shrink(struct nvx_ctx *ctx, int argc, char **argv)
{
	return nvx_pool_resize_cmd(ctx, argc, argv, false);
}

/* ----------------------------------------------------------- pool show */

static void nvx_pool_row(const char *name, const struct nvx_pool_stats *s)
{
	char t[32], c[32], d[32], g[32];

	printf("%-8s %12s %12s %12s %12s %8llu\n", name,
	       nvx_fmt_mib(t, sizeof(t), s->total_bytes),
	       nvx_fmt_mib(c, sizeof(c), s->clean_bytes),
	       nvx_fmt_mib(d, sizeof(d), s->dirty_bytes),
	       nvx_fmt_mib(g, sizeof(g), s->granted_bytes),
	       (unsigned long long)s->chunks);
}

static void nvx_pool_json_bytes(struct nvx_json *j,
				const struct nvx_pool_stats *s)
{
	nvx_json_u64(j, "total_bytes", s->total_bytes);
	nvx_json_u64(j, "clean_bytes", s->clean_bytes);
	nvx_json_u64(j, "dirty_bytes", s->dirty_bytes);
	nvx_json_u64(j, "granted_bytes", s->granted_bytes);
	nvx_json_u64(j, "chunks", s->chunks);
}

static int cmd_pool_show(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_pool_stats any, total, *rows = NULL;
	unsigned int i, nr_rows = 0;
	struct nvx_pool_args a;
	char name[16], chunk[NVX_FMT_BYTES_LEN];
	uint32_t first, last, n;
	int ret, err;

	ret = nvx_pool_parse(ctx, argc, argv, nvx_node_opts, false, &a);
	if (ret)
		return ret;
	/* the sum first: it tells nr_nodes and the chunk size */
	ret = nvx_pool_stats_sum(ctx, &any);
	if (ret)
		return ret;
	if (a.node != NVX_NODE_ANY) {
		first = a.node;
		last = a.node;
	} else if (any.nr_nodes) {
		first = 0;
		last = any.nr_nodes - 1;
	} else {
		first = 1;
		last = 0;
	}
	if (first <= last) {
		rows = calloc(last - first + 1, sizeof(*rows));
		if (!rows) {
			nvx_err("%s: out of memory", ctx->path);
			return NVX_EXIT_FAIL;
		}
	}

	memset(&total, 0, sizeof(total));
	for (n = first; n <= last; n++) {
		struct nvx_pool_stats *s = &rows[nr_rows];

		err = -nvx_pool_stats_get(ctx->fd, n, s);
		if (err == EINVAL && a.node == NVX_NODE_ANY)
			continue;	/* not a node, or offline */
		if (err) {
			nvx_pool_perror(ctx, NVX_IOC_POOL_STATS, n, err);
			free(rows);
			return NVX_EXIT_FAIL;
		}
		total.total_bytes += s->total_bytes;
		total.clean_bytes += s->clean_bytes;
		total.dirty_bytes += s->dirty_bytes;
		total.granted_bytes += s->granted_bytes;
		total.chunks += s->chunks;
		nr_rows++;
	}

	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		nvx_json_u64(&ctx->js, "piece_bytes", any.piece_bytes);
		nvx_json_array_begin(&ctx->js, "nodes");
		for (i = 0; i < nr_rows; i++) {
			nvx_json_object_begin(&ctx->js, NULL);
			nvx_json_u64(&ctx->js, "node", rows[i].node);
			nvx_pool_json_bytes(&ctx->js, &rows[i]);
			nvx_json_end(&ctx->js);
		}
		nvx_json_end(&ctx->js);
		nvx_json_object_begin(&ctx->js, "total");
		nvx_pool_json_bytes(&ctx->js, &total);
		nvx_json_end(&ctx->js);
		nvx_json_end(&ctx->js);
	} else {
		printf("%-8s %12s %12s %12s %12s %8s\n", "node", "total MiB",
		       "clean MiB", "dirty MiB", "granted MiB", "chunks");
		for (i = 0; i < nr_rows; i++) {
			snprintf(name, sizeof(name), "%u", rows[i].node);
			nvx_pool_row(name, &rows[i]);
		}
		nvx_pool_row("total", &total);
		printf("counted and mapped in pieces of %s\n",
		       nvx_fmt_bytes(chunk, sizeof(chunk), any.piece_bytes));
	}
	free(rows);
	return NVX_EXIT_OK;
}

/* ---------------------------------------------------------------- stat */

static void nvx_stat_bytes(const char *name, uint64_t bytes)
{
	char h[NVX_FMT_BYTES_LEN];

	printf("%-22s %s (%llu bytes)\n", name,
	       nvx_fmt_bytes(h, sizeof(h), bytes), (unsigned long long)bytes);
}

static const char nvx_pool_stats_usage[] =
	"\n"
	"\n"
	"Show every counter of the nvx pool, summed over the NUMA nodes\n"
	"(NVX_IOC_POOL_STATS): memory in the pool by state (clean: zeroed and\n"
	"ready; dirty: returned, waiting for the scrubber; granted: owned by\n"
	"live grants), grants created, live and refused, what the background\n"
	"scrubber zeroed and in how much time (and so its throughput), and\n"
	"what grants had to zero on their own path. JSON keys are the field\n"
	"names of struct nvx_pool_stats: \"nr_nodes\" and \"piece_bytes\", then\n"
	"\"counters\" (the others, as numbers), and \"scrub_mib_per_s\" (null\n"
	"until the scrubber has run): the shape of srq stats.\n";

/* The "counters" of pool stats --json, in their order. */
static const struct nvx_json_field nvx_pool_counter_fields[] = {
	NVX_JSON_UINT(struct nvx_pool_stats, total_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, clean_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, dirty_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, granted_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, grants),
	NVX_JSON_UINT(struct nvx_pool_stats, grants_live),
	NVX_JSON_UINT(struct nvx_pool_stats, grant_failures),
	NVX_JSON_UINT(struct nvx_pool_stats, scrubbed_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, scrub_ns),
	NVX_JSON_UINT(struct nvx_pool_stats, sync_zeroed_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, chunks),
	NVX_JSON_UINT(struct nvx_pool_stats, block_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, small_bytes),
	NVX_JSON_UINT(struct nvx_pool_stats, small_splits),
	{ }
};

static int cmd_pool_stats(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_pool_stats s;
	double mibps = 0;
	int ret;

	ret = nvx_no_args(ctx, argc, argv);
	if (ret)
		return ret;
	ret = nvx_pool_stats_sum(ctx, &s);
	if (ret)
		return ret;
	if (s.scrub_ns)
		mibps = ((double)s.scrubbed_bytes / NVX_MIB) /
			((double)s.scrub_ns / 1e9);

	if (ctx->json) {
		struct nvx_json *j = &ctx->js;

		nvx_json_object_begin(j, NULL);
		nvx_json_u64(j, "nr_nodes", s.nr_nodes);
		nvx_json_u64(j, "piece_bytes", s.piece_bytes);
		nvx_json_object_begin(j, "counters");
		nvx_json_fields(j, &s, nvx_pool_counter_fields);
		nvx_json_end(j);
		if (s.scrub_ns)
			nvx_json_double(j, "scrub_mib_per_s", mibps);
		else
			nvx_json_null(j, "scrub_mib_per_s");
		nvx_json_end(j);
		return NVX_EXIT_OK;
	}

	printf("%-22s %u\n", "nodes (nr_node_ids)", s.nr_nodes);
	nvx_stat_bytes("piece size", s.piece_bytes);
	nvx_stat_bytes("total", s.total_bytes);
	printf("%-22s %llu (of any size)\n", "chunks",
	       (unsigned long long)s.chunks);
	nvx_stat_bytes("clean", s.clean_bytes);
	nvx_stat_bytes("dirty", s.dirty_bytes);
	nvx_stat_bytes("granted", s.granted_bytes);
	printf("%-22s %llu\n", "grants created",
	       (unsigned long long)s.grants);
	printf("%-22s %llu\n", "grants live",
	       (unsigned long long)s.grants_live);
	printf("%-22s %llu (refused for want of memory)\n", "grant failures",
	       (unsigned long long)s.grant_failures);
	nvx_stat_bytes("scrubbed", s.scrubbed_bytes);
	printf("%-22s %.3f ms\n", "scrub time", (double)s.scrub_ns / 1e6);
	if (s.scrub_ns)
		printf("%-22s %.1f MiB/s\n", "scrub throughput", mibps);
	else
		printf("%-22s n/a (the scrubber has not run)\n",
		       "scrub throughput");
	nvx_stat_bytes("zeroed on grant path", s.sync_zeroed_bytes);
	nvx_stat_bytes("in 64 KiB blocks", s.small_bytes);
	printf("%-22s %llu\n", "pieces split",
	       (unsigned long long)s.small_splits);
	return NVX_EXIT_OK;
}

/* --------------------------------------------------------------- grant */

/*
 * Wait until stdin reaches EOF (or fails), or SIGINT or SIGTERM comes.
 * Return: the signal, or 0 for EOF.
 */
static int nvx_hold(void)
{
	struct nvx_stop_old old;
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	sigset_t block, orig, pending;
	char buf[256];
	ssize_t n;

	/* blocked outside ppoll(), so none is lost before it waits */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	nvx_stop_catch(&old, 0);

	while (!nvx_stop_signal()) {
		if (ppoll(&pfd, 1, NULL, &orig) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd.revents & POLLNVAL)
			break;		/* no stdin at all */
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (!n || (n < 0 && errno != EINTR && errno != EAGAIN))
			break;
		/*
		 * ppoll() returns at once while stdin is readable, without
		 * taking a pending signal: take it here.
		 */
		sigpending(&pending);
		if ((sigismember(&pending, SIGINT) &&
		     !sigismember(&orig, SIGINT)) ||
		    (sigismember(&pending, SIGTERM) &&
		     !sigismember(&orig, SIGTERM)))
			sigsuspend(&orig);
	}

	nvx_stop_restore(&old);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return nvx_stop_signal();
}

static const char nvx_grant_create_usage[] =
	"SIZE [--node N] [--wait | --clean-only] [--blocks] [--hold]\n"
	"\n"
	"Take a grant of SIZE from the pool (NVX_IOC_GRANT; rounded up to\n"
	"whole 2 MiB pieces), map all of it shared and writable, and write one byte\n"
	"in every 4 KiB page, checking first that the byte read is 0. Prints\n"
	"the size, node, pieces and blocks of the grant (NVX_GRANT_IOC_INFO), how long\n"
	"the grant ioctl and the map + touch took, and whether the memory was\n"
	"zeroed. The grant is released on exit.\n"
	"\n"
	"  --node N      take the memory from NUMA node N; default 'any': the\n"
	"                caller's node first, then any node with room\n"
	"  --wait        when too few chunks are clean, wait for the scrubber\n"
	"                (default: zero dirty chunks on the grant's own path)\n"
	"  --clean-only  when too few chunks are clean, fail\n"
	"  --blocks      SIZE in 64 KiB blocks (NVX_GRANT_BLOCKS): a multiple\n"
	"                of 64K, whole pieces for what they cover and blocks\n"
	"                for the rest\n"
	"  --hold        keep the grant until stdin reaches EOF (Ctrl-D), or\n"
	"                SIGINT (Ctrl-C) or SIGTERM, e.g. to watch it in\n"
	"                'nvxtool pool show' from another shell\n"
	"\n"
	"Exits 1 when the grant fails or the memory was not zeroed. JSON:\n"
	"\"bytes\", \"node\", \"nr_pieces\", \"piece_bytes\", \"nr_blocks\",\n"
	"\"block_bytes\", \"grant_ns\", \"map_touch_ns\", \"zeroed\".\n";

static int cmd_grant_create(struct nvx_ctx *ctx, int argc, char **argv)
{
	char size_s[NVX_FMT_BYTES_LEN], piece_s[NVX_FMT_BYTES_LEN];
	struct nvx_grant_info info;
	uint64_t t0, grant_ns, map_touch_ns, pages, nonzero;
	struct nvx_pool_args a;
	void *map;
	int ret, err, fd = -1, sig;

	ret = nvx_pool_parse(ctx, argc, argv, nvx_grant_opts, true, &a);
	if (ret)
		return ret;
	ret = nvx_open_device(ctx);
	if (ret)
		return ret;

	t0 = nvx_now_ns();
	err = -nvx_grant_new(ctx->fd, a.node, a.bytes, a.flags | NVX_GRANT_CLOEXEC,
			     &fd);
	grant_ns = nvx_now_ns() - t0;
	if (err) {
		nvx_pool_perror(ctx, NVX_IOC_GRANT, a.node, err);
		return NVX_EXIT_FAIL;
	}

	err = -nvx_grant_info_get(fd, &info);
	if (err) {
		nvx_err("%s: NVX_GRANT_IOC_INFO: %s", ctx->path,
			strerror(err));
		close(fd);
		return NVX_EXIT_FAIL;
	}

	t0 = nvx_now_ns();
	map = mmap(NULL, info.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (map == MAP_FAILED) {
		nvx_err("%s: mmap of the grant (%llu bytes): %s", ctx->path,
			(unsigned long long)info.bytes, strerror(errno));
		close(fd);
		return NVX_EXIT_FAIL;
	}
	nonzero = nvx_touch_pages(map, info.bytes, true);
	map_touch_ns = nvx_now_ns() - t0;
	pages = (info.bytes + NVX_TOUCH_STRIDE - 1) / NVX_TOUCH_STRIDE;

	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		nvx_json_u64(&ctx->js, "bytes", info.bytes);
		nvx_json_u64(&ctx->js, "node", info.node);
		nvx_json_u64(&ctx->js, "nr_pieces", info.nr_pieces);
		nvx_json_u64(&ctx->js, "piece_bytes", info.piece_bytes);
		nvx_json_u64(&ctx->js, "nr_blocks", info.nr_blocks);
		nvx_json_u64(&ctx->js, "block_bytes", info.block_bytes);
		nvx_json_u64(&ctx->js, "grant_ns", grant_ns);
		nvx_json_u64(&ctx->js, "map_touch_ns", map_touch_ns);
		nvx_json_bool(&ctx->js, "zeroed", !nonzero);
		nvx_json_end(&ctx->js);
	} else {
		printf("granted %s on node %u: %llu pieces of %s, %llu blocks of 64 KiB\n",
		       nvx_fmt_bytes(size_s, sizeof(size_s), info.bytes),
		       info.node, (unsigned long long)info.nr_pieces,
		       nvx_fmt_bytes(piece_s, sizeof(piece_s),
				     info.piece_bytes),
		       (unsigned long long)info.nr_blocks);
		printf("  %-14s %.3f ms\n", "grant ioctl", grant_ns / 1e6);
		printf("  %-14s %.3f ms (%llu pages of 4 KiB, one byte written in each)\n",
		       "map + touch", map_touch_ns / 1e6,
		       (unsigned long long)pages);
		printf("  %-14s %s\n", "zeroed", nonzero ? "no" : "yes");
	}
	fflush(stdout);

	if (a.hold) {
		fprintf(stderr,
			"nvxtool: holding the grant; end with EOF on stdin (Ctrl-D), Ctrl-C or SIGTERM\n");
		sig = nvx_hold();
		fprintf(stderr, "nvxtool: releasing the grant (%s)\n",
			sig ? strsignal(sig) : "EOF on stdin");
	}
	munmap(map, info.bytes);
	close(fd);

	if (nonzero) {
		nvx_err("%s: %llu of %llu pages were not zero: the grant was not zeroed",
			ctx->path, (unsigned long long)nonzero,
			(unsigned long long)pages);
		return NVX_EXIT_FAIL;
	}
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------- command table */

const struct nvx_cmd nvx_pool_cmds[] = {
	{
		.name = "grow",
		.summary = "add memory to the pool",
		.usage = "SIZE [--node N] [--chunk CSIZE]\n"
			 "\n"
			 "Add SIZE (e.g. 512M, 4G; rounded up to whole 2 MiB) of\n"
			 "zeroed memory to the pool (NVX_IOC_POOL_GROW). Needs\n"
			 "CAP_SYS_ADMIN. When the node cannot deliver all of it, what\n"
			 "was added stays in the pool and is reported, and the exit\n"
			 "status is 1.\n"
			 "\n"
			 "  --node N       put it on NUMA node N; default 'any': spread\n"
			 "                 it over the online nodes\n"
			 "  --chunk CSIZE  allocate physically contiguous chunks of up\n"
			 "                 to CSIZE (a power of two, 2M to 1G; default\n"
			 "                 2M), halving it while the allocator cannot\n"
			 "                 deliver it\n"
			 "\n"
			 "JSON: \"node\" (null for any), \"requested_bytes\",\n"
			 "\"done_bytes\", \"complete\".\n",
		.fn = cmd_pool_grow,
	},
	{
		.name = "shrink",
		.summary = "give memory of the pool back to the system",
		.usage = "SIZE [--node N]\n"
			 "\n"
			 "Release SIZE (rounded up to whole chunks) of the pool's\n"
			 "memory (NVX_IOC_POOL_SHRINK): clean chunks first, then\n"
			 "returned ones. Granted memory cannot be released, and the\n"
			 "shrink never waits for a grant: when it could not release\n"
			 "all of SIZE, what it did release is reported and the exit\n"
			 "status is 1. Needs CAP_SYS_ADMIN.\n"
			 "\n"
			 "  --node N  take it from NUMA node N; default 'any': from any\n"
			 "            node\n"
			 "\n"
			 "JSON: as for pool grow.\n",
		.fn = cmd_pool_shrink,
	},
	{
		.name = "show",
		.summary = "show the pool's memory per NUMA node",
		.usage = "[--node N]\n"
			 "\n"
			 "Show the memory in the pool per online NUMA node, and the\n"
			 "total, in MiB (NVX_IOC_POOL_STATS): total, clean (zeroed,\n"
			 "ready to grant), dirty (returned, waiting for the\n"
			 "scrubber) and granted, and the number of chunks (of any\n"
			 "size: see pool grow --chunk).\n"
			 "\n"
			 "  --node N  show only NUMA node N\n"
			 "\n"
			 "JSON: \"piece_bytes\", \"nodes\" (one object per node: \"node\",\n"
			 "\"total_bytes\", \"clean_bytes\", \"dirty_bytes\",\n"
			 "\"granted_bytes\", \"chunks\") and \"total\" (the same sums).\n",
		.fn = cmd_pool_show,
	},
	{
		.name = "stats",
		.summary = "show every counter of the pool and its scrubber",
		.usage = nvx_pool_stats_usage,
		.fn = cmd_pool_stats,
	},
	{ }
};

const struct nvx_cmd nvx_grant_cmds[] = {
	{
		.name = "create",
		.summary = "take a grant, map it, touch it, time it; release it on exit",
		.usage = nvx_grant_create_usage,
		.fn = cmd_grant_create,
	},
	{ }
};
