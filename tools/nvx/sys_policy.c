// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the tenants of the reference system process (sys.c) and the
 * policy file that names them: a strict, default-deny parser, and the
 * kernel policy (NVX_UVM_EP_IOC_SET_POLICY) a tenant becomes.
 *
 * Documentation/nvx/uvm-sys.rst, "The policy file", has the format.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvxtool.h"
#include "nvx_uvm.h"
#include "sys.h"

void nvx_sys_tenant_default(struct nvx_sys_tenant *t)
{
	memset(t, 0, sizeof(*t));
	t->uid = -1;
	t->gid = -1;
	t->calls = NVX_SYS_CALLS_BASE;
}

int nvx_sys_tenant_root(struct nvx_sys_tenant *t, const char *dir)
{
	nvx_sys_tenant_default(t);
	if (snprintf(t->root, sizeof(t->root), "%s", dir) >=
	    (int)sizeof(t->root))
		return -ENAMETOOLONG;
	t->calls = NVX_SYS_CALLS_RDONLY;
	t->open = NVX_SYS_OPEN_READ;
	return 0;
}

void nvx_sys_tenant_policy(const struct nvx_sys_tenant *t,
			   struct nvx_uvm_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->flags = (t->vm2vm ? NVX_UVM_POLICY_VM2VM : 0) |
		   (t->stop ? NVX_UVM_POLICY_STOP : 0);
	p->vm_id = 0;
	p->allow = t->calls;
	p->max_bulk = t->max_bulk;
	p->max_in_flight = t->max_in_flight;
	p->rate = t->rate;
	p->burst = t->burst;
}

int nvx_sys_apply_policy(int ep_fd, const struct nvx_sys_tenant *t,
			 bool verbose)
{
	struct nvx_uvm_policy p;
	int ret;

	nvx_sys_tenant_policy(t, &p);
	ret = nvx_uvm_set_policy(ep_fd, &p);
	if (ret) {
		nvx_err("sys: NVX_UVM_EP_IOC_SET_POLICY: %s%s", strerror(-ret),
			ret == -ENOTTY ? " (a kernel without uvm policies)" :
					 "");
		return NVX_EXIT_FAIL;
	}
	if (!verbose)
		return NVX_EXIT_OK;
	ret = nvx_uvm_get_policy(ep_fd, 0, &p);
	if (ret) {
		nvx_err("sys: NVX_UVM_EP_IOC_GET_POLICY: %s", strerror(-ret));
		return NVX_EXIT_FAIL;
	}
	nvx_sys_info("sys: policy: allow %#llx, flags %#x, max_bulk %u, max_in_flight %u, rate %u, burst %u",
		     (unsigned long long)p.allow, p.flags, p.max_bulk,
		     p.max_in_flight, p.rate, p.burst);
	return NVX_EXIT_OK;
}

/* ------------------------------------------------ the policy file --- */

enum {
	NVX_SYS_K_ROOT, NVX_SYS_K_UID, NVX_SYS_K_GID, NVX_SYS_K_CALLS,
	NVX_SYS_K_OPEN, NVX_SYS_K_VM2VM, NVX_SYS_K_MAX_BULK,
	NVX_SYS_K_MAX_IN_FLIGHT, NVX_SYS_K_RATE, NVX_SYS_K_BURST,
	NVX_SYS_K_STOP, NVX_SYS_K_EGRESS, NVX_SYS_K_NETNS, NVX_SYS_NR_KEYS
};

static const char *const nvx_sys_keys[NVX_SYS_NR_KEYS] = {
	"root", "uid", "gid", "calls", "open", "vm2vm", "max_bulk",
	"max_in_flight", "rate", "burst", "stop_on_limit", "egress", "netns",
};

/* Keys a section may set more than once: each line adds a rule. */
#define NVX_SYS_K_REPEAT	(1U << NVX_SYS_K_EGRESS)

static const char *const nvx_sys_open_words[] = { "read", "write", "create" };

/**
 * struct nvx_sys_parser - reading a policy file
 * @file: its name, for messages.
 * @line: the line being read.
 * @want: the tenant asked for.
 * @found: it was read, into @out.
 * @out: where it goes.
 * @cur: the tenant of the section being read.
 * @cur_line: the line of its header; 0 before the first section.
 * @seen: the keys of @cur so far, bit NVX_SYS_K_*.
 * @names: the tenants read so far, @nr_names of them.
 * @nr_names: see @names.
 */
struct nvx_sys_parser {
	const char *file;
	unsigned int line;
	const char *want;
	bool found;
	struct nvx_sys_tenant *out;
	struct nvx_sys_tenant cur;
	unsigned int cur_line;
	unsigned int seen;
	char (*names)[NVX_SYS_NAME_MAX + 1];
	unsigned int nr_names;
};

/* Report a malformed file at line @line: NVX_EXIT_USAGE. */
static int __printf(3, 4) nvx_sys_perr(struct nvx_sys_parser *p,
				       unsigned int line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nvx_err("%s:%u: %s", p->file, line, msg);
	return NVX_EXIT_USAGE;
}

static char *nvx_sys_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* The end of a section: check it as a whole, keep it if it is wanted. */
static int nvx_sys_section_end(struct nvx_sys_parser *p)
{
	struct nvx_sys_tenant *t = &p->cur;
	bool uid = t->uid >= 0, gid = t->gid >= 0;

	if (!p->cur_line)
		return NVX_EXIT_OK;
	if (uid != gid)
		return nvx_sys_perr(p, p->cur_line,
				    "tenant %s: uid and gid go together",
				    t->name);
	if ((t->calls & NVX_SYS_CALLS_PATH) && !t->root[0])
		return nvx_sys_perr(p, p->cur_line,
				    "tenant %s: openat, mkdir, unlink and rename need a root",
				    t->name);
	if (t->burst && !t->rate)
		return nvx_sys_perr(p, p->cur_line,
				    "tenant %s: burst needs a rate", t->name);
	if (!strcmp(t->name, p->want)) {
		*p->out = *t;
		p->found = true;
	}
	return NVX_EXIT_OK;
}

static int nvx_sys_section(struct nvx_sys_parser *p, char *s)
{
	char (*names)[NVX_SYS_NAME_MAX + 1];
	size_t len = strlen(s);
	unsigned int i;
	char *name;
	int ret;

	ret = nvx_sys_section_end(p);
	if (ret)
		return ret;
	s[len - 1] = 0;
	s = nvx_sys_trim(s + 1);
	if (strncmp(s, "tenant", 6) || !isspace((unsigned char)s[6]))
		return nvx_sys_perr(p, p->line,
				    "expected [tenant NAME], not [%s]", s);
	name = nvx_sys_trim(s + 6);
	len = strlen(name);
	if (!len || len > NVX_SYS_NAME_MAX)
		return nvx_sys_perr(p, p->line,
				    "a tenant name has 1 to %d characters",
				    NVX_SYS_NAME_MAX);
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return nvx_sys_perr(p, p->line,
					    "bad tenant name '%s' (letters, digits, '.', '_', '-')",
					    name);
	for (i = 0; i < p->nr_names; i++)
		if (!strcmp(p->names[i], name))
			return nvx_sys_perr(p, p->line,
					    "tenant %s is defined twice", name);
	names = realloc(p->names, (p->nr_names + 1) * sizeof(*names));
	if (!names) {
		nvx_err("%s: out of memory", p->file);
		return NVX_EXIT_FAIL;
	}
	p->names = names;
	snprintf(p->names[p->nr_names++], sizeof(*names), "%s", name);

	nvx_sys_tenant_default(&p->cur);
	p->cur.calls = 0;		/* default deny */
	p->cur.open = NVX_SYS_OPEN_READ;
	snprintf(p->cur.name, sizeof(p->cur.name), "%s", name);
	p->cur_line = p->line;
	p->seen = 0;
	return NVX_EXIT_OK;
}

static int nvx_sys_yes_no(const char *v, bool *out)
{
	if (!strcmp(v, "yes"))
		*out = true;
	else if (!strcmp(v, "no"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int nvx_sys_u32(const char *v, unsigned long long max, uint32_t *out)
{
	unsigned long long n;

	if (nvx_parse_uint(v, max, &n))
		return -EINVAL;
	*out = n;
	return 0;
}

/* Each word of @v, one of @names[0..@nr), sets its bit in *@out. */
static int nvx_sys_words(struct nvx_sys_parser *p, const char *key, char *v,
			 const char *const *names, unsigned int nr,
			 uint64_t *out)
{
	char *w, *save;
	unsigned int i;

	*out = 0;
	for (w = strtok_r(v, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		for (i = 0; i < nr; i++)
			if (names[i] && !strcmp(w, names[i]))
				break;
		if (i == nr)
			return nvx_sys_perr(p, p->line, "%s: unknown word '%s'",
					    key, w);
		*out |= 1ULL << i;
	}
	return NVX_EXIT_OK;
}

/*
 * "allow CIDR" or "deny CIDR": an IPv4 or IPv6 network, "ADDR/LEN" or
 * an address alone (/32, /128), with no bit set past LEN. An IPv6 rule
 * inside ::ffff:0:0/96 would never match (an IPv4-mapped address is
 * judged as IPv4): write it as IPv4.
 */
static int nvx_sys_egress(struct nvx_sys_parser *p, char *v)
{
	struct nvx_sys_tenant *t = &p->cur;
	static const uint8_t mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};
	struct nvx_sys_cidr r = { };
	unsigned long long n;
	unsigned int max, i;
	char *net, *slash;

	net = v + strcspn(v, " \t");
	if (*net)
		*net++ = 0;
	net = nvx_sys_trim(net);
	if (!strcmp(v, "allow"))
		r.allow = true;
	else if (strcmp(v, "deny"))
		return nvx_sys_perr(p, p->line,
				    "egress: allow or deny, then a network, not '%s'",
				    v);
	if (t->nr_egress == NVX_SYS_EGRESS_MAX)
		return nvx_sys_perr(p, p->line,
				    "egress: more than %d rules",
				    NVX_SYS_EGRESS_MAX);
	slash = strchr(net, '/');
	if (slash)
		*slash = 0;
	r.family = strchr(net, ':') ? AF_INET6 : AF_INET;
	max = r.family == AF_INET ? 32 : 128;
	if (inet_pton(r.family, net, r.addr) != 1)
		return nvx_sys_perr(p, p->line,
				    "egress: '%s' is not an IPv4 or IPv6 address",
				    net);
	n = max;
	if (slash && nvx_parse_uint(slash + 1, max, &n))
		return nvx_sys_perr(p, p->line,
				    "egress: a prefix length 0 to %u, not '%s'",
				    max, slash + 1);
	r.prefix = n;
	for (i = r.prefix; i < max; i++)
		if (r.addr[i / 8] & (0x80 >> (i % 8)))
			return nvx_sys_perr(p, p->line,
					    "egress: %s/%u has bits set past the prefix",
					    net, r.prefix);
	if (r.family == AF_INET6 && r.prefix >= 96 &&
	    !memcmp(r.addr, mapped, sizeof(mapped)))
		return nvx_sys_perr(p, p->line,
				    "egress: %s is IPv4-mapped: write it as an IPv4 network",
				    net);
	t->egress[t->nr_egress++] = r;
	return NVX_EXIT_OK;
}

static int nvx_sys_key(struct nvx_sys_parser *p, char *s)
{
	const char *names[NVX_SYS_NR_CALLS];
	struct nvx_sys_tenant *t = &p->cur;
	unsigned long long n;
	char *eq = strchr(s, '='), *key, *v;
	unsigned int k, i;
	uint64_t bits;
	uint64_t size;
	int ret = 0;

	if (!eq)
		return nvx_sys_perr(p, p->line, "expected KEY = VALUE");
	*eq = 0;
	key = nvx_sys_trim(s);
	v = nvx_sys_trim(eq + 1);
	for (k = 0; k < NVX_SYS_NR_KEYS; k++)
		if (!strcmp(key, nvx_sys_keys[k]))
			break;
	if (k == NVX_SYS_NR_KEYS)
		return nvx_sys_perr(p, p->line, "unknown key '%s'", key);
	if (!p->cur_line)
		return nvx_sys_perr(p, p->line,
				    "%s outside a [tenant NAME] section", key);
	if (p->seen & (1U << k) & ~NVX_SYS_K_REPEAT)
		return nvx_sys_perr(p, p->line, "%s is set twice", key);
	p->seen |= 1U << k;

	switch (k) {
	case NVX_SYS_K_ROOT:
		if (v[0] != '/' || strlen(v) >= sizeof(t->root))
			return nvx_sys_perr(p, p->line,
					    "root: an absolute path, not '%s'",
					    v);
		snprintf(t->root, sizeof(t->root), "%s", v);
		break;
	case NVX_SYS_K_UID:
	case NVX_SYS_K_GID:
		/* a tenant is never root */
		if (nvx_parse_uint(v, UINT32_MAX - 1, &n) || !n)
			return nvx_sys_perr(p, p->line,
					    "%s: a number from 1, not '%s'",
					    key, v);
		if (k == NVX_SYS_K_UID)
			t->uid = n;
		else
			t->gid = n;
		break;
	case NVX_SYS_K_CALLS:
		for (i = 0; i < NVX_SYS_NR_CALLS; i++)
			names[i] = nvx_sys_call_name(i);
		ret = nvx_sys_words(p, key, v, names, NVX_ARRAY_SIZE(names),
				    &t->calls);
		break;
	case NVX_SYS_K_OPEN:
		ret = nvx_sys_words(p, key, v, nvx_sys_open_words,
				    NVX_ARRAY_SIZE(nvx_sys_open_words), &bits);
		t->open = bits;
		break;
	case NVX_SYS_K_VM2VM:
	case NVX_SYS_K_STOP:
		if (nvx_sys_yes_no(v, k == NVX_SYS_K_VM2VM ? &t->vm2vm :
							     &t->stop))
			return nvx_sys_perr(p, p->line,
					    "%s: yes or no, not '%s'", key, v);
		break;
	case NVX_SYS_K_MAX_BULK:
		if (nvx_parse_size(v, &size) || size > NVX_UVM_MAX_BULK)
			return nvx_sys_perr(p, p->line,
					    "max_bulk: a size up to 256K, not '%s'",
					    v);
		t->max_bulk = size;
		break;
	case NVX_SYS_K_MAX_IN_FLIGHT:
		if (nvx_sys_u32(v, NVX_UVM_MAX_ENTRIES, &t->max_in_flight))
			return nvx_sys_perr(p, p->line,
					    "max_in_flight: 0 to %d, not '%s'",
					    NVX_UVM_MAX_ENTRIES, v);
		break;
	case NVX_SYS_K_RATE:
	case NVX_SYS_K_BURST:
		if (nvx_sys_u32(v, k == NVX_SYS_K_RATE ? NVX_UVM_MAX_RATE :
				UINT32_MAX, k == NVX_SYS_K_RATE ?
			       &t->rate : &t->burst))
			return nvx_sys_perr(p, p->line,
					    "%s: a number (rate: up to %d), not '%s'",
					    key, NVX_UVM_MAX_RATE, v);
		break;
	case NVX_SYS_K_EGRESS:
		ret = nvx_sys_egress(p, v);
		break;
	case NVX_SYS_K_NETNS:
		if (v[0] != '/' || strlen(v) >= sizeof(t->netns))
			return nvx_sys_perr(p, p->line,
					    "netns: an absolute path (/run/netns/NAME), not '%s'",
					    v);
		snprintf(t->netns, sizeof(t->netns), "%s", v);
		break;
	}
	return ret;
}

int nvx_sys_policy_load(const char *file, const char *name,
			struct nvx_sys_tenant *t)
{
	struct nvx_sys_parser p = { .file = file, .want = name, .out = t };
	size_t cap = 0;
	char *line = NULL, *s;
	int ret = NVX_EXIT_OK;
	FILE *f;

	f = fopen(file, "re");
	if (!f) {
		nvx_err("%s: %s", file, strerror(errno));
		return NVX_EXIT_FAIL;
	}
	while (!ret && getline(&line, &cap, f) >= 0) {
		p.line++;
		s = nvx_sys_trim(line);
		if (!*s || *s == '#')
			continue;
		if (*s == '[' && s[strlen(s) - 1] == ']')
			ret = nvx_sys_section(&p, s);
		else if (*s == '[')
			ret = nvx_sys_perr(&p, p.line, "expected [tenant NAME]");
		else
			ret = nvx_sys_key(&p, s);
	}
	if (!ret && ferror(f)) {
		nvx_err("%s: %s", file, strerror(errno));
		ret = NVX_EXIT_FAIL;
	}
	if (!ret)
		ret = nvx_sys_section_end(&p);
	if (!ret && !p.found) {
		nvx_err("%s: no tenant '%s'", file, name);
		ret = NVX_EXIT_USAGE;
	}
	free(line);
	free(p.names);
	fclose(f);
	return ret;
}
