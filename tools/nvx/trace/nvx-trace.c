// SPDX-License-Identifier: GPL-2.0
/*
 * nvx-trace: histograms of nvx's latencies and sizes from its tracepoints,
 * in the style of libbpf-tools (runqlat, biolatency): BPF programs
 * (nvx-trace.bpf.c, loaded through a skeleton that bpftool generates)
 * count into maps; this program prints what changed in them every
 * interval (they are never cleared) and a summary of the whole run at
 * exit.
 *
 *   nvx-trace uvm|uintr|pool|srq [-i SEC] [-d SEC] [-j] [--btf FILE] [-v]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "nvxtool.h"
#include "nvx_uvm.h"
#include "nvx-trace.h"
#include "nvx-trace.skel.h"

enum group { G_UVM, G_UINTR, G_POOL, G_SRQ, G_NR };

/* A subcommand: its programs (by name prefix) and the module of its events. */
static const struct group_desc {
	const char *name;
	const char *prefix;	/* of its BPF programs' names */
	const char *event;	/* one of its tracepoints, to check for */
	const char *module;	/* that defines them; NULL: built in */
	const char *summary;
} groups[G_NR] = {
	[G_UVM] = { "uvm", "uvm_", "nvx_uvm_msg_in", "nvx_uvm",
		    "user VM messages: taken -> RECV -> completed, per VM\n"
		    "         and type; denied, VMs ended by reason" },
	[G_UINTR] = { "uintr", "uintr_", "nvx_uintr_deliver", NULL,
		      "user interrupts: post -> delivery latency, timer\n"
		      "         tick lateness, per thread" },
	[G_POOL] = { "pool", "pool_", "nvx_grant", "nvx",
		     "grants: size and latency, bytes zeroed on the\n"
		     "         caller's path; scrubber throughput" },
	[G_SRQ] = { "srq", "srq_", "nvx_srq_rx", "nvx_srq",
		    "shared RX queues: frames and strides per frame per\n"
		    "         queue, refills, drops" },
};

/* How a histogram or counter kind is printed. */
struct kind_desc {
	enum group group;
	const char *what;	/* JSON "what" and the text label */
	const char *id;		/* the name of key.id */
	const char *sub;	/* the name of key.sub, NULL when unused */
	const char *unit;	/* histograms: of the values */
};

static const struct kind_desc hist_kinds[NVX_H_KINDS] = {
	[NVX_H_UVM_TOTAL] = { G_UVM, "taken->completed", "vm", "type", "ns" },
	[NVX_H_UVM_QUEUE] = { G_UVM, "taken->recv", "vm", "type", "ns" },
	[NVX_H_UVM_SERVE] = { G_UVM, "recv->completed", "vm", "type", "ns" },
	[NVX_H_UINTR_LAT] = { G_UINTR, "post->delivery", "tid", NULL, "ns" },
	[NVX_H_UINTR_LATE] = { G_UINTR, "tick-lateness", "tid", NULL, "ns" },
	[NVX_H_POOL_SIZE] = { G_POOL, "grant-size", "node", NULL, "bytes" },
	[NVX_H_POOL_LAT] = { G_POOL, "grant-latency", "node", NULL, "ns" },
	[NVX_H_SCRUB_RATE] = { G_POOL, "scrub-rate", "node", NULL, "MiB/s" },
	[NVX_H_SRQ_STRIDES] = { G_SRQ, "strides-per-frame", "queue", NULL,
				"strides" },
};

static const struct kind_desc count_kinds[NVX_C_KINDS] = {
	[NVX_C_UVM_IN] = { G_UVM, "taken", "vm", "type" },
	[NVX_C_UVM_OUT] = { G_UVM, "completed", "vm", "type" },
	[NVX_C_UVM_DENIED] = { G_UVM, "denied", "vm", "type" },
	[NVX_C_UVM_ERROR] = { G_UVM, "failed", "vm", "type" },
	[NVX_C_UVM_STOP] = { G_UVM, "ended", "vm", "reason" },
	[NVX_C_UINTR_POST] = { G_UINTR, "posted", "tid", "source" },
	[NVX_C_UINTR_PENDING] = { G_UINTR, "posted-pending", "tid", "source" },
	[NVX_C_UINTR_DELIVER] = { G_UINTR, "delivered", "tid", NULL },
	[NVX_C_UINTR_TICK] = { G_UINTR, "ticks", "tid", NULL },
	[NVX_C_UINTR_SIGNAL] = { G_UINTR, "signals", "tid", "signo" },
	[NVX_C_POOL_GRANTS] = { G_POOL, "grants", "node", NULL },
	[NVX_C_POOL_GRANT_BYTES] = { G_POOL, "granted-bytes", "node", NULL },
	[NVX_C_POOL_SYNC_BYTES] = { G_POOL, "sync-zeroed-bytes", "node", NULL },
	[NVX_C_POOL_RELEASES] = { G_POOL, "releases", "node", NULL },
	[NVX_C_POOL_RELEASE_BYTES] = { G_POOL, "released-bytes", "node", NULL },
	[NVX_C_SCRUB_BYTES] = { G_POOL, "scrubbed-bytes", "node", NULL },
	[NVX_C_SCRUB_NS] = { G_POOL, "scrub-ns", "node", NULL },
	[NVX_C_POOL_GROW_BYTES] = { G_POOL, "grown-bytes", "node", NULL },
	[NVX_C_POOL_SHRINK_BYTES] = { G_POOL, "shrunk-bytes", "node", NULL },
	[NVX_C_SRQ_FRAMES] = { G_SRQ, "frames", "queue", NULL },
	[NVX_C_SRQ_BYTES] = { G_SRQ, "bytes", "queue", NULL },
	[NVX_C_SRQ_FILLERS] = { G_SRQ, "fillers", "queue", NULL },
	[NVX_C_SRQ_REFILLS] = { G_SRQ, "refills", "pool", NULL },
	[NVX_C_SRQ_RETURNED] = { G_SRQ, "buffers-reposted", "pool", NULL },
	[NVX_C_SRQ_DROPS] = { G_SRQ, "drops", "queue", "reason" },
};

static const char *const uintr_sources[] = {
	"thread", "timer", "signal", "endpoint", "srq",
};

static const char *const srq_drop_reasons[] = { "no_buf", "cq_full" };

/* One map entry, summed over the intervals read so far. */
struct hist_ent {
	struct nvx_trace_key key;
	struct nvx_trace_hist h;
};

struct count_ent {
	struct nvx_trace_key key;
	uint64_t v;
};

struct table {
	struct hist_ent *hists;
	size_t nr_hists, cap_hists;
	struct count_ent *counts;
	size_t nr_counts, cap_counts;
};

static struct opts {
	enum group group;
	unsigned int interval;	/* seconds; 0: only the summary */
	unsigned int duration;	/* seconds; 0: until a signal */
	bool json;
	bool verbose;
	const char *btf;
} o;

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* the errors are explained in nvx-trace's words; -v adds libbpf's */
	return o.verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * size);
	if (!p) {
		fprintf(stderr, "nvx-trace: out of memory\n");
		exit(1);
	}
	*cap = n;
	return p;
}

static int key_cmp(const struct nvx_trace_key *a, const struct nvx_trace_key *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	return 0;
}

static int hist_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct hist_ent *)a)->key,
		       &((const struct hist_ent *)b)->key);
}

static int count_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct count_ent *)a)->key,
		       &((const struct count_ent *)b)->key);
}

static struct hist_ent *table_hist(struct table *t,
				   const struct nvx_trace_key *k)
{
	size_t i;

	for (i = 0; i < t->nr_hists; i++)
		if (!key_cmp(&t->hists[i].key, k))
			return &t->hists[i];
	t->hists = grow(t->hists, &t->cap_hists, t->nr_hists + 1,
			sizeof(*t->hists));
	memset(&t->hists[t->nr_hists], 0, sizeof(t->hists[0]));
	t->hists[t->nr_hists].key = *k;
	return &t->hists[t->nr_hists++];
}

static struct count_ent *table_count(struct table *t,
				     const struct nvx_trace_key *k)
{
	size_t i;

	for (i = 0; i < t->nr_counts; i++)
		if (!key_cmp(&t->counts[i].key, k))
			return &t->counts[i];
	t->counts = grow(t->counts, &t->cap_counts, t->nr_counts + 1,
			 sizeof(*t->counts));
	t->counts[t->nr_counts].key = *k;
	t->counts[t->nr_counts].v = 0;
	return &t->counts[t->nr_counts++];
}

static void table_clear(struct table *t)
{
	t->nr_hists = 0;
	t->nr_counts = 0;
}

/*
 * Read the maps into @cur. They are never cleared: a BPF program on
 * another CPU may hold an entry while it adds to it, and a deleted entry
 * of a preallocated hash map can be reused for another key at once.
 * Intervals are differences between two reads.
 */
static void snapshot(struct nvx_trace *skel, struct table *cur)
{
	int hfd = bpf_map__fd(skel->maps.hists);
	int cfd = bpf_map__fd(skel->maps.counts);
	struct nvx_trace_key k, next, *prev;
	struct nvx_trace_hist h;
	__u64 v;

	table_clear(cur);
	for (prev = NULL; !bpf_map_get_next_key(hfd, prev, &next);
	     prev = &k) {
		k = next;
		if (!bpf_map_lookup_elem(hfd, &k, &h))
			table_hist(cur, &k)->h = h;
	}
	for (prev = NULL; !bpf_map_get_next_key(cfd, prev, &next);
	     prev = &k) {
		k = next;
		if (!bpf_map_lookup_elem(cfd, &k, &v))
			table_count(cur, &k)->v = v;
	}
	qsort(cur->hists, cur->nr_hists, sizeof(*cur->hists), hist_cmp);
	qsort(cur->counts, cur->nr_counts, sizeof(*cur->counts), count_cmp);
}

static const struct hist_ent *find_hist(const struct table *t,
					const struct nvx_trace_key *k)
{
	return bsearch(k, t->hists, t->nr_hists, sizeof(*t->hists), hist_cmp);
}

static const struct count_ent *find_count(const struct table *t,
					  const struct nvx_trace_key *k)
{
	return bsearch(k, t->counts, t->nr_counts, sizeof(*t->counts),
		       count_cmp);
}

/* @d = @cur - @prev, without the entries that did not change. */
static void delta(const struct table *cur, const struct table *prev,
		  struct table *d)
{
	const struct hist_ent *ph;
	const struct count_ent *pc;
	struct hist_ent *e;
	size_t i, s;

	table_clear(d);
	for (i = 0; i < cur->nr_hists; i++) {
		ph = find_hist(prev, &cur->hists[i].key);
		if (ph && ph->h.count == cur->hists[i].h.count)
			continue;
		e = table_hist(d, &cur->hists[i].key);
		e->h = cur->hists[i].h;
		if (!ph)
			continue;
		for (s = 0; s < NVX_TRACE_SLOTS; s++)
			e->h.slots[s] -= ph->h.slots[s];
		e->h.count -= ph->h.count;
		e->h.sum -= ph->h.sum;
	}
	for (i = 0; i < cur->nr_counts; i++) {
		pc = find_count(prev, &cur->counts[i].key);
		if (pc && pc->v == cur->counts[i].v)
			continue;
		table_count(d, &cur->counts[i].key)->v =
			cur->counts[i].v - (pc ? pc->v : 0);
	}
}

static void table_copy(struct table *to, const struct table *from)
{
	size_t i;

	table_clear(to);
	for (i = 0; i < from->nr_hists; i++)
		table_hist(to, &from->hists[i].key)->h = from->hists[i].h;
	for (i = 0; i < from->nr_counts; i++)
		table_count(to, &from->counts[i].key)->v = from->counts[i].v;
}

/* The name of @sub for the key's kind, or NULL to print the number. */
static const char *sub_name(const char *sub, uint32_t v)
{
	if (!sub)
		return NULL;
	if (!strcmp(sub, "type"))
		return nvx_uvm_msg_name(v);
	if (!strcmp(sub, "source"))
		return v < 5 ? uintr_sources[v] : NULL;
	return NULL;
}

static const char *sub_name_kind(const struct kind_desc *d, uint32_t v)
{
	if (d->sub && !strcmp(d->sub, "reason"))
		return d->group == G_UVM ? nvx_uvm_reason_name(v) :
		       v < 2 ? srq_drop_reasons[v] : NULL;
	return sub_name(d->sub, v);
}

static void text_key(const struct kind_desc *d, const struct nvx_trace_key *k)
{
	const char *s = sub_name_kind(d, k->sub);

	if (k->id == UINT32_MAX && !strcmp(d->id, "node"))
		printf("node any");	/* a resize of NVX_NODE_ANY */
	else
		printf("%s %u", d->id, k->id);
	if (d->sub && s)
		printf(" %s %s", d->sub, s);
	else if (d->sub)
		printf(" %s %u", d->sub, k->sub);
}

static void text_hist(const struct hist_ent *e, bool summary)
{
	const struct kind_desc *d = &hist_kinds[e->key.kind];
	const struct nvx_trace_hist *h = &e->h;
	int first = -1, last = -1, i, j, stars;
	uint64_t top = 0, lo, hi;

	for (i = 0; i < NVX_TRACE_SLOTS; i++) {
		if (!h->slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (h->slots[i] > top)
			top = h->slots[i];
	}
	text_key(d, &e->key);
	printf(": %s (%s): count %llu, avg %llu", d->what, d->unit,
	       (unsigned long long)h->count,
	       (unsigned long long)(h->count ? h->sum / h->count : 0));
	/* the maximum is kept since the start: not an interval's */
	if (summary)
		printf(", max %llu", (unsigned long long)h->max);
	printf("\n");
	if (first < 0)
		return;
	printf("%24s : %-8s %s\n", d->unit, "count", "distribution");
	for (i = first; i <= last; i++) {
		lo = i ? 1ULL << i : 0;
		hi = (2ULL << i) - 1;
		stars = (int)(h->slots[i] * 40 / top);
		/* the last bucket also holds what is larger */
		if (i == NVX_TRACE_SLOTS - 1)
			printf("%10llu -> %-10s : %-8llu |",
			       (unsigned long long)lo, "inf",
			       (unsigned long long)h->slots[i]);
		else
			printf("%10llu -> %-10llu : %-8llu |",
			       (unsigned long long)lo, (unsigned long long)hi,
			       (unsigned long long)h->slots[i]);
		for (j = 0; j < 40; j++)
			putchar(j < stars ? '*' : ' ');
		printf("|\n");
	}
}

static void text_counts(const struct table *t)
{
	const struct kind_desc *d;
	size_t i;

	for (i = 0; i < t->nr_counts; i++) {
		d = &count_kinds[t->counts[i].key.kind];
		text_key(d, &t->counts[i].key);
		printf(": %s %llu\n", d->what,
		       (unsigned long long)t->counts[i].v);
	}
}

static uint64_t count_of(const struct table *t, uint32_t kind, uint32_t id,
			 uint32_t sub)
{
	size_t i;

	for (i = 0; i < t->nr_counts; i++)
		if (t->counts[i].key.kind == kind &&
		    t->counts[i].key.id == id && t->counts[i].key.sub == sub)
			return t->counts[i].v;
	return 0;
}

/*
 * Events a program did not see: the kernel skips a tracepoint's BPF
 * program when another one is running on that CPU (an interrupt that
 * fires during a program), counts the skip in the program's
 * recursion_misses, and keeps the event from perf as well. 0 if the
 * kernel cannot say.
 */
static uint64_t prog_missed(const struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.recursion_misses;
}

static void text_missed(const struct nvx_trace *skel)
{
	struct bpf_program *prog;
	uint64_t n;

	bpf_object__for_each_program(prog, skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		n = prog_missed(prog);
		if (n)
			printf("%s: missed %llu (BPF recursion)\n",
			       bpf_program__name(prog), (unsigned long long)n);
	}
}

/* The pool's derived number: scrubbed bytes over scrub time, per node. */
static void text_scrub(const struct table *t)
{
	uint64_t ns;
	size_t i;

	for (i = 0; i < t->nr_counts; i++) {
		if (t->counts[i].key.kind != NVX_C_SCRUB_BYTES)
			continue;
		ns = count_of(t, NVX_C_SCRUB_NS, t->counts[i].key.id, 0);
		if (ns)
			printf("node %u: scrubbed at %.1f MiB/s\n",
			       t->counts[i].key.id,
			       t->counts[i].v * 1e9 / ns / (1 << 20));
	}
}

static void text_table(const struct table *t, bool summary)
{
	size_t i;

	for (i = 0; i < t->nr_hists; i++)
		text_hist(&t->hists[i], summary);
	text_counts(t);
	if (o.group == G_POOL)
		text_scrub(t);
	if (!t->nr_hists && !t->nr_counts)
		printf("(no events)\n");
}

static void json_key(struct nvx_json *j, const struct kind_desc *d,
		     const struct nvx_trace_key *k)
{
	const char *s = sub_name_kind(d, k->sub);
	char name[32];

	nvx_json_str(j, "what", d->what);
	nvx_json_u64(j, d->id, k->id);
	if (!d->sub)
		return;
	nvx_json_u64(j, d->sub, k->sub);
	if (s) {
		snprintf(name, sizeof(name), "%s_name", d->sub);
		nvx_json_str(j, name, s);
	}
}

static void json_table(const struct nvx_trace *skel, const struct table *t,
		       double seconds)
{
	struct bpf_program *prog;
	const struct nvx_trace_hist *h;
	const struct kind_desc *d;
	struct nvx_json j = { 0 };
	uint64_t ns;
	size_t i;
	int s;

	nvx_json_init(&j, stdout);
	nvx_json_object_begin(&j, NULL);
	nvx_json_str(&j, "tool", groups[o.group].name);
	nvx_json_double(&j, "seconds", seconds);
	nvx_json_array_begin(&j, "histograms");
	for (i = 0; i < t->nr_hists; i++) {
		d = &hist_kinds[t->hists[i].key.kind];
		h = &t->hists[i].h;
		nvx_json_object_begin(&j, NULL);
		json_key(&j, d, &t->hists[i].key);
		nvx_json_str(&j, "unit", d->unit);
		nvx_json_u64(&j, "count", h->count);
		nvx_json_u64(&j, "sum", h->sum);
		nvx_json_u64(&j, "max", h->max);
		nvx_json_array_begin(&j, "buckets");
		for (s = 0; s < NVX_TRACE_SLOTS; s++) {
			if (!h->slots[s])
				continue;
			nvx_json_object_begin(&j, NULL);
			nvx_json_u64(&j, "lo", s ? 1ULL << s : 0);
			nvx_json_u64(&j, "hi", s == NVX_TRACE_SLOTS - 1 ?
				     UINT64_MAX : (2ULL << s) - 1);
			nvx_json_u64(&j, "count", h->slots[s]);
			nvx_json_end(&j);
		}
		nvx_json_end(&j);
		nvx_json_end(&j);
	}
	nvx_json_end(&j);
	nvx_json_array_begin(&j, "counters");
	for (i = 0; i < t->nr_counts; i++) {
		d = &count_kinds[t->counts[i].key.kind];
		nvx_json_object_begin(&j, NULL);
		json_key(&j, d, &t->counts[i].key);
		nvx_json_u64(&j, "value", t->counts[i].v);
		nvx_json_end(&j);
	}
	nvx_json_end(&j);
	if (o.group == G_POOL) {
		nvx_json_array_begin(&j, "scrub");
		for (i = 0; i < t->nr_counts; i++) {
			if (t->counts[i].key.kind != NVX_C_SCRUB_BYTES)
				continue;
			ns = count_of(t, NVX_C_SCRUB_NS, t->counts[i].key.id, 0);
			nvx_json_object_begin(&j, NULL);
			nvx_json_u64(&j, "node", t->counts[i].key.id);
			nvx_json_u64(&j, "bytes", t->counts[i].v);
			nvx_json_u64(&j, "ns", ns);
			nvx_json_double(&j, "mib_per_s",
					ns ? t->counts[i].v * 1e9 / ns /
					     (1 << 20) : 0);
			nvx_json_end(&j);
		}
		nvx_json_end(&j);
	}
	nvx_json_array_begin(&j, "missed");
	bpf_object__for_each_program(prog, skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		nvx_json_object_begin(&j, NULL);
		nvx_json_str(&j, "what", "missed");
		nvx_json_str(&j, "prog", bpf_program__name(prog));
		nvx_json_u64(&j, "value", prog_missed(prog));
		nvx_json_end(&j);
	}
	nvx_json_end(&j);
	nvx_json_end(&j);
	fflush(stdout);
}

/* An interval's table under a time stamp (not with --json). */
static void print_interval(struct nvx_trace *skel, struct table *cur,
			   struct table *prev, struct table *now)
{
	time_t wall = time(NULL);
	char stamp[16];

	snapshot(skel, cur);
	delta(cur, prev, now);
	table_copy(prev, cur);
	if (o.json)
		return;
	strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&wall));
	printf("%s\n", stamp);
	text_table(now, false);
	printf("\n");
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_usage(FILE *f)
{
	int g;

	fprintf(f,
		"Usage: nvx-trace COMMAND [-i SECONDS] [-d SECONDS] [-j] [--btf FILE] [-v]\n"
		"\n"
		"Histograms (log2 buckets) and counts of nvx's events, from its\n"
		"tracepoints, by BPF programs (CO-RE against the kernel's BTF).\n"
		"Commands:\n");
	for (g = 0; g < G_NR; g++)
		fprintf(f, "  %-6s %s\n", groups[g].name, groups[g].summary);
	fprintf(f,
		"\n"
		"  -i, --interval SECONDS  print what changed every SECONDS\n"
		"                          (default: only the summary at exit)\n"
		"  -d, --duration SECONDS  stop after SECONDS (default: at SIGINT or\n"
		"                          SIGTERM)\n"
		"  -j, --json              print the summary as one JSON object on\n"
		"                          stdout, and no intervals\n"
		"      --btf FILE          relocate against FILE instead of\n"
		"                          /sys/kernel/btf/vmlinux (a kernel without BTF)\n"
		"  -v, --verbose           libbpf's messages (the verifier's log)\n"
		"\n"
		"Needs root (CAP_BPF and CAP_PERFMON), a kernel with BTF\n"
		"(CONFIG_DEBUG_INFO_BTF, CONFIG_DEBUG_INFO_BTF_MODULES) and the BPF\n"
		"system call, tracefs at /sys/kernel/tracing (or debugfs's\n"
		"tracing), and the nvx module of the command loaded. Latencies are\n"
		"in ns: times under emulation (QEMU TCG) are not hardware times.\n"
		"Exit status: 0, 1 on an error (said on stderr), 2 on bad usage.\n");
}

static int parse_uint(const char *s, const char *what, unsigned int *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n > 86400 * 365 || *s == '-') {
		fprintf(stderr, "nvx-trace: %s: not a number of seconds: %s\n",
			what, s);
		return -1;
	}
	*v = n;
	return 0;
}

/* Tell why the programs cannot run, before libbpf says it less clearly. */
static int check_kernel(void)
{
	const struct group_desc *g = &groups[o.group];
	static const char *const tracefs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[256];
	struct stat st;
	unsigned int i;
	bool mounted = false;

	/* the sysctl exists with the bpf() system call */
	if (stat("/proc/sys/kernel/unprivileged_bpf_disabled", &st)) {
		fprintf(stderr,
			"nvx-trace: this kernel has no BPF system call (CONFIG_BPF_SYSCALL)\n");
		return -1;
	}
	if (o.btf) {
		if (stat(o.btf, &st)) {
			fprintf(stderr, "nvx-trace: --btf %s: %s\n", o.btf,
				strerror(errno));
			return -1;
		}
		/* libbpf looks in no module's BTF when given a file */
		if (g->module) {
			fprintf(stderr,
				"nvx-trace: --btf: the %s tracepoints are in module %s, whose types a BTF file of the kernel does not hold; --btf works for uintr only\n",
				g->name, g->module);
			return -1;
		}
	} else if (stat("/sys/kernel/btf/vmlinux", &st)) {
		fprintf(stderr,
			"nvx-trace: this kernel has no BTF (/sys/kernel/btf/vmlinux: %s): build it with CONFIG_DEBUG_INFO_BTF=y and CONFIG_DEBUG_INFO_BTF_MODULES=y, or give --btf FILE\n",
			strerror(errno));
		return -1;
	} else if (g->module) {
		snprintf(path, sizeof(path), "/sys/kernel/btf/%s", g->module);
		if (stat(path, &st)) {
			fprintf(stderr,
				"nvx-trace: no BTF for module %s (%s: %s): is it loaded, and was the kernel built with CONFIG_DEBUG_INFO_BTF_MODULES=y?\n",
				g->module, path, strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events", tracefs[i]);
		if (stat(path, &st) && errno == EACCES) {
			fprintf(stderr,
				"nvx-trace: cannot read %s (%s): run as root (CAP_BPF and CAP_PERFMON)\n",
				path, strerror(errno));
			return -1;
		}
		if (stat(path, &st))
			continue;
		mounted = true;
		snprintf(path, sizeof(path), "%s/events/nvx/%s", tracefs[i],
			 g->event);
		if (!stat(path, &st))
			return 0;
	}
	if (!mounted)
		fprintf(stderr,
			"nvx-trace: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)\n");
	else
		fprintf(stderr,
			"nvx-trace: no tracepoint nvx:%s: %s\n", g->event,
			g->module ? "load the module that defines it" :
			"this kernel was built without it (CONFIG_NVX_UINTR)");
	if (mounted && g->module)
		fprintf(stderr, "nvx-trace: (module %s)\n", g->module);
	return -1;
}

static void explain_load(int err)
{
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr,
			"nvx-trace: loading BPF programs was refused (%s): run as root (CAP_BPF and CAP_PERFMON)\n",
			strerror(-err));
	else
		fprintf(stderr,
			"nvx-trace: cannot load the BPF programs: %s (-v shows libbpf's log)\n",
			strerror(-err));
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "btf", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct table now = { 0 }, cur = { 0 }, prev = { 0 };
	struct nvx_trace *skel = NULL;
	struct bpf_program *prog;
	double start, next, end;
	const char *cmd;
	sigset_t sigs;
	int c, g, err, ret = 1;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		print_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	cmd = argv[1];
	for (g = 0; g < G_NR && strcmp(cmd, groups[g].name); g++)
		;
	if (g == G_NR) {
		fprintf(stderr, "nvx-trace: unknown command '%s'\n\n", cmd);
		print_usage(stderr);
		return 2;
	}
	o.group = g;
	optind = 2;
	while ((c = getopt_long(argc, argv, "i:d:jvh", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_uint(optarg, "--interval", &o.interval))
				return 2;
			break;
		case 'd':
			if (parse_uint(optarg, "--duration", &o.duration))
				return 2;
			break;
		case 'j':
			o.json = true;
			break;
		case 'b':
			o.btf = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nvx-trace: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}

	libbpf_set_print(libbpf_print);
	if (check_kernel())
		return 1;
	open_opts.btf_custom_path = o.btf;
	skel = nvx_trace__open_opts(&open_opts);
	if (!skel) {
		fprintf(stderr, "nvx-trace: cannot open the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	/* only the command's programs: the other modules may be absent */
	bpf_object__for_each_program(prog, skel->obj) {
		bool mine = !strncmp(bpf_program__name(prog), groups[g].prefix,
				     strlen(groups[g].prefix));

		bpf_program__set_autoload(prog, mine);
	}
	err = nvx_trace__load(skel);
	if (err) {
		explain_load(err);
		goto out;
	}
	err = nvx_trace__attach(skel);
	if (err) {
		fprintf(stderr, "nvx-trace: cannot attach: %s\n",
			strerror(-err));
		goto out;
	}

	/* SIGINT and SIGTERM end the run: taken by sigtimedwait() below */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	fprintf(stderr, "nvx-trace: tracing nvx %s events; Ctrl-C to end\n",
		groups[g].name);
	start = now_s();
	next = start + o.interval;
	end = o.duration ? start + o.duration : 0;
	for (;;) {
		double t = now_s(), wake = o.interval ? next : t + 3600;
		struct timespec ts;

		if (end && end < wake)
			wake = end;
		if (wake < t)
			wake = t;
		ts.tv_sec = (time_t)(wake - t);
		ts.tv_nsec = (long)((wake - t - ts.tv_sec) * 1e9);
		if (sigtimedwait(&sigs, NULL, &ts) > 0)
			break;
		t = now_s();
		/* an interval that ends with the run is printed too */
		if (o.interval && t >= next) {
			print_interval(skel, &cur, &prev, &now);
			next += o.interval;
		}
		if (end && t >= end)
			break;
	}
	/* the maps hold the whole run */
	snapshot(skel, &cur);
	if (o.json) {
		json_table(skel, &cur, now_s() - start);
	} else {
		printf("summary, %.1f s:\n", now_s() - start);
		text_table(&cur, true);
		text_missed(skel);
	}
	ret = 0;
out:
	nvx_trace__destroy(skel);
	free(now.hists);
	free(now.counts);
	free(cur.hists);
	free(cur.counts);
	free(prev.hists);
	free(prev.counts);
	return ret;
}
