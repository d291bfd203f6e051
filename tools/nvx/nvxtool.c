// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the nvx command line.
 *
 * Inspects and controls nvx through its control device, /dev/nvx. The
 * commands are in nvx_commands[] below; nvxtool.h describes the table
 * and the helpers shared by commands in other files.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nvx/nvx.h>

#include "nvxtool.h"

/* ------------------------------------------------------------ messages */

static void nvx_vmsg(const char *prefix, const char *fmt, va_list ap)
	__printf(2, 0);

static void nvx_vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "nvxtool: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void nvx_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nvx_vmsg("", fmt, ap);
	va_end(ap);
}

void nvx_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nvx_vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/* Where to look for help after a usage error. */
static void nvx_try_help(const char *path)
{
	if (path[0])
		fprintf(stderr, "Try 'nvxtool %s --help'.\n", path);
	else
		fprintf(stderr, "Try 'nvxtool --help'.\n");
}

int nvx_usage_error(struct nvx_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fputs("nvxtool: ", stderr);
	if (ctx->path[0])
		fprintf(stderr, "%s: ", ctx->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	nvx_try_help(ctx->path);
	return NVX_EXIT_USAGE;
}

int nvx_no_args(struct nvx_ctx *ctx, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			return nvx_usage_error(ctx, "unknown option '%s'",
					       argv[i]);
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[i]);
	}
	return NVX_EXIT_OK;
}

/* ---------------------------------------------------------------- JSON */

void nvx_json_init(struct nvx_json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

static void nvx_json_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* The comma before a member or element, and the key inside an object. */
static void nvx_json_key(struct nvx_json *j, const char *key)
{
	unsigned int d = j->depth;

	/* Members of objects have keys; elements and the top level not. */
	assert(d ? !!key == (j->closer[d - 1] == '}') : !key);
	if (!d)
		return;
	if (!j->first[d - 1])
		fputc(',', j->out);
	j->first[d - 1] = false;
	if (key) {
		nvx_json_string(j->out, key);
		fputc(':', j->out);
	}
}

/* After a complete value: the top-level one ends the line. */
static void nvx_json_done(struct nvx_json *j)
{
	if (!j->depth)
		fputc('\n', j->out);
}

static void nvx_json_open(struct nvx_json *j, const char *key, char open,
			  char close)
{
	assert(j->depth < NVX_JSON_MAX_DEPTH);
	nvx_json_key(j, key);
	fputc(open, j->out);
	j->first[j->depth] = true;
	j->closer[j->depth] = close;
	j->depth++;
}

void nvx_json_object_begin(struct nvx_json *j, const char *key)
{
	nvx_json_open(j, key, '{', '}');
}

void nvx_json_array_begin(struct nvx_json *j, const char *key)
{
	nvx_json_open(j, key, '[', ']');
}

void nvx_json_end(struct nvx_json *j)
{
	assert(j->depth);
	j->depth--;
	fputc(j->closer[j->depth], j->out);
	nvx_json_done(j);
}

void nvx_json_str(struct nvx_json *j, const char *key, const char *val)
{
	if (!val) {
		nvx_json_null(j, key);
		return;
	}
	nvx_json_key(j, key);
	nvx_json_string(j->out, val);
	nvx_json_done(j);
}

void nvx_json_u64(struct nvx_json *j, const char *key, uint64_t val)
{
	nvx_json_key(j, key);
	fprintf(j->out, "%llu", (unsigned long long)val);
	nvx_json_done(j);
}

void nvx_json_s64(struct nvx_json *j, const char *key, int64_t val)
{
	nvx_json_key(j, key);
	fprintf(j->out, "%lld", (long long)val);
	nvx_json_done(j);
}

void nvx_json_bool(struct nvx_json *j, const char *key, bool val)
{
	nvx_json_key(j, key);
	fputs(val ? "true" : "false", j->out);
	nvx_json_done(j);
}

void nvx_json_hex(struct nvx_json *j, const char *key, uint64_t val)
{
	nvx_json_key(j, key);
	fprintf(j->out, "\"0x%llx\"", (unsigned long long)val);
	nvx_json_done(j);
}

void nvx_json_null(struct nvx_json *j, const char *key)
{
	nvx_json_key(j, key);
	fputs("null", j->out);
	nvx_json_done(j);
}

void nvx_json_double(struct nvx_json *j, const char *key, double val)
{
	char buf[40];

	if (!isfinite(val)) {
		nvx_json_null(j, key);
		return;
	}
	/* keep it a float to the reader: 1.0, not 1 */
	snprintf(buf, sizeof(buf), "%.6g", val);
	if (!strpbrk(buf, ".en"))
		strcat(buf, ".0");
	nvx_json_key(j, key);
	fputs(buf, j->out);
	nvx_json_done(j);
}

/* ---------------------------------------------------------------- sizes */

int nvx_parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	const char *p, *end;
	uint64_t v = 0;

	if (!s)
		return -EINVAL;
	for (p = s; *p >= '0' && *p <= '9'; p++)
		;
	if (p == s)
		return -EINVAL;
	end = p;

	switch (*p) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	}
	if (shift) {
		p++;
		if (*p == 'i' || *p == 'I')
			p++;
	}
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p)
		return -EINVAL;

	for (p = s; p < end; p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > UINT64_MAX >> shift)
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int nvx_parse_uint(const char *s, unsigned long long max,
		   unsigned long long *out)
{
	unsigned long long v = 0;
	const char *p;

	if (!s || !*s)
		return -EINVAL;
	for (p = s; *p; p++) {
		unsigned int d = *p - '0';

		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (ULLONG_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

char *nvx_fmt_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char * const units[] = { "KiB", "MiB", "GiB", "TiB",
					      "PiB", "EiB" };
	unsigned int u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (u + 1 < NVX_ARRAY_SIZE(units) && bytes >> (10 * (u + 2)))
		u++;
	if (bytes & ((1ULL << (10 * (u + 1))) - 1))
		snprintf(buf, size, "%.2f %s",
			 (double)bytes / (double)(1ULL << (10 * (u + 1))),
			 units[u]);
	else
		snprintf(buf, size, "%llu %s",
			 (unsigned long long)(bytes >> (10 * (u + 1))),
			 units[u]);
	return buf;
}

/* ----------------------------------------------------------- getopt */

int nvx_getopt_error(struct nvx_ctx *ctx, int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = !strncmp(arg, "--", 2);
	const char *eq = strchr(arg, '=');

	if (c == ':')
		return nvx_usage_error(ctx, "option '%s' needs an argument",
				       arg);
	if (is_long && eq && optopt)
		return nvx_usage_error(ctx, "option '%.*s' takes no argument",
				       (int)(eq - arg), arg);
	if (!is_long && optopt)
		return nvx_usage_error(ctx, "unknown option '-%c'", optopt);
	return nvx_usage_error(ctx, "unknown option '%s'", arg);
}

/* ------------------------------------------------------- time, memory */

uint64_t nvx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t nvx_touch_pages(void *addr, uint64_t len, bool check_zero)
{
	unsigned char *p = addr;
	uint64_t off, nonzero = 0;

	/*
	 * Plain accesses do: the memory came from mmap() and goes to
	 * munmap(), so the compiler can drop none of them.
	 */
	for (off = 0; off < len; off += NVX_TOUCH_STRIDE) {
		if (check_zero && p[off])
			nonzero++;
		p[off] = 1;
	}
	return nonzero;
}

/* --------------------------------------------------------------- device */

int nvx_open_device(struct nvx_ctx *ctx)
{
	struct stat st;
	int fd, err;

	if (ctx->fd >= 0)
		return NVX_EXIT_OK;

	fd = open(ctx->device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		switch (err) {
		case ENOENT:
			nvx_err("%s not found: this kernel has no nvx (CONFIG_NVX), or the nvx module is not loaded",
				ctx->device);
			return NVX_EXIT_NODEV;
		case ENXIO:
		case ENODEV:
			/* A device node left behind without its driver. */
			nvx_err("%s: %s: this kernel has no nvx (CONFIG_NVX), or the nvx module is not loaded",
				ctx->device, strerror(err));
			return NVX_EXIT_NODEV;
		case EACCES:
		case EPERM:
			nvx_err("%s: permission denied (the device is mode 0660 root:root; run as root or ask the operator for access)",
				ctx->device);
			return NVX_EXIT_PERM;
		default:
			nvx_err("cannot open %s: %s", ctx->device,
				strerror(err));
			return NVX_EXIT_FAIL;
		}
	}

	if (fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode)) {
		nvx_err("%s is not a character device, so not the nvx control device",
			ctx->device);
		close(fd);
		return NVX_EXIT_FAIL;
	}
	ctx->fd = fd;
	return NVX_EXIT_OK;
}

int nvx_ioctl(struct nvx_ctx *ctx, unsigned long req, void *arg,
	      const char *name)
{
	int ret;

	ret = nvx_open_device(ctx);
	if (ret)
		return ret;

	if (ioctl(ctx->fd, req, arg) == 0)
		return NVX_EXIT_OK;

	if (errno == ENOTTY)
		nvx_err("%s: %s: the running kernel does not know this ioctl (older nvx ABI)",
			ctx->device, name);
	else
		nvx_err("%s: %s: %s", ctx->device, name, strerror(errno));
	return NVX_EXIT_FAIL;
}

/* -------------------------------------------------------------- version */

static int cmd_version(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_version v;
	char kver[32];
	int ret;

	ret = nvx_no_args(ctx, argc, argv);
	if (ret)
		return ret;

	memset(&v, 0, sizeof(v));
	ret = nvx_ioctl(ctx, NVX_IOC_VERSION, &v, "NVX_IOC_VERSION");
	if (ret)
		return ret;

	/* LINUX_VERSION_CODE; the kernel clamps the patch level at 255. */
	snprintf(kver, sizeof(kver), "%u.%u.%u", v.kernel_version >> 16,
		 (v.kernel_version >> 8) & 0xff, v.kernel_version & 0xff);

	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		nvx_json_u64(&ctx->js, "abi_major", v.abi_major);
		nvx_json_u64(&ctx->js, "abi_minor", v.abi_minor);
		nvx_json_str(&ctx->js, "kernel_version", kver);
		nvx_json_u64(&ctx->js, "tool_abi_major", NVX_ABI_MAJOR);
		nvx_json_u64(&ctx->js, "tool_abi_minor", NVX_ABI_MINOR);
		nvx_json_end(&ctx->js);
	} else {
		printf("nvx ABI %u.%u (kernel %s)\n", v.abi_major, v.abi_minor,
		       kver);
		printf("nvxtool built for ABI %u.%u\n", NVX_ABI_MAJOR,
		       NVX_ABI_MINOR);
	}

	if (v.abi_major != NVX_ABI_MAJOR)
		nvx_warn("the running kernel has nvx ABI %u.%u, but nvxtool was built for ABI %u.%u: other commands may fail; rebuild nvxtool against this kernel's headers",
			 v.abi_major, v.abi_minor, NVX_ABI_MAJOR,
			 NVX_ABI_MINOR);
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------------- features */

struct nvx_bit_name {
	uint64_t bit;
	const char *name;
	const char *desc;
};

static const struct nvx_bit_name nvx_feature_names[] = {
	{ NVX_FEAT_CORE,	"core",		"/dev/nvx and the core ioctls" },
	{ NVX_FEAT_POOL,	"pool",		"memory pool and grants" },
	{ NVX_FEAT_UVM,		"uvm",		"user VMs, PMIO fast path" },
	{ NVX_FEAT_UINTR,	"uintr",	"user-interrupt delivery" },
	{ NVX_FEAT_SRQ,		"srq",		"shared multi-packet RX queues" },
	{ NVX_FEAT_SRQ_MLX5,	"srq-mlx5",	"mlx5 backend for SRQ" },
};

static const struct nvx_bit_name nvx_hw_names[] = {
	{ NVX_HW_UINTR,		"uintr",
	  "CPU user interrupts (CPUID.7.0:EDX[5])" },
	{ NVX_HW_VMX,		"vmx",		"Intel VT-x" },
	{ NVX_HW_SVM,		"svm",		"AMD-V" },
	{ NVX_HW_HYPERVISOR,	"hypervisor",	"running as a guest" },
};

/* Text: one line per known bit, then one per set bit nvxtool does not know. */
static void nvx_print_bits(uint64_t mask, const struct nvx_bit_name *names,
			   size_t n)
{
	uint64_t known = 0;
	char unknown[16];
	unsigned int bit;
	size_t i;

	for (i = 0; i < n; i++) {
		printf("  %-12s %-4s %s\n", names[i].name,
		       mask & names[i].bit ? "yes" : "no", names[i].desc);
		known |= names[i].bit;
	}
	for (bit = 0; bit < 64; bit++) {
		if (!(mask & ~known & (1ULL << bit)))
			continue;
		snprintf(unknown, sizeof(unknown), "bit %u", bit);
		printf("  %-12s %-4s %s\n", unknown, "yes",
		       "not known to this nvxtool");
	}
}

static void nvx_json_bits(struct nvx_json *j, const char *key, uint64_t mask,
			  const struct nvx_bit_name *names, size_t n)
{
	size_t i;

	nvx_json_object_begin(j, key);
	for (i = 0; i < n; i++)
		nvx_json_bool(j, names[i].name, mask & names[i].bit);
	nvx_json_end(j);
}

static int cmd_features(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_features f;
	int ret;

	ret = nvx_no_args(ctx, argc, argv);
	if (ret)
		return ret;

	memset(&f, 0, sizeof(f));
	ret = nvx_ioctl(ctx, NVX_IOC_FEATURES, &f, "NVX_IOC_FEATURES");
	if (ret)
		return ret;

	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		nvx_json_hex(&ctx->js, "features", f.features);
		nvx_json_hex(&ctx->js, "hw", f.hw);
		nvx_json_bits(&ctx->js, "feature", f.features,
			      nvx_feature_names,
			      NVX_ARRAY_SIZE(nvx_feature_names));
		nvx_json_bits(&ctx->js, "hw_facts", f.hw, nvx_hw_names,
			      NVX_ARRAY_SIZE(nvx_hw_names));
		nvx_json_end(&ctx->js);
		return NVX_EXIT_OK;
	}

	printf("features: 0x%llx\n", (unsigned long long)f.features);
	nvx_print_bits(f.features, nvx_feature_names,
		       NVX_ARRAY_SIZE(nvx_feature_names));
	printf("hw: 0x%llx (what the machine offers, not what nvx uses)\n",
	       (unsigned long long)f.hw);
	nvx_print_bits(f.hw, nvx_hw_names, NVX_ARRAY_SIZE(nvx_hw_names));
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------- command table */

static int cmd_help(struct nvx_ctx *ctx, int argc, char **argv);

static const struct nvx_cmd nvx_commands[] = {
	{
		.name = "version",
		.summary = "show the nvx ABI version of the running kernel",
		.usage = "[--json]\n"
			 "\n"
			 "Show the nvx ABI version and the version of the running kernel\n"
			 "(NVX_IOC_VERSION), and the ABI version nvxtool was built for.\n"
			 "Warns when the major versions differ.\n",
		.fn = cmd_version,
	},
	{
		.name = "features",
		.summary = "show the nvx capabilities and hardware facts",
		.usage = "[--json]\n"
			 "\n"
			 "Show which nvx capabilities the running kernel provides and\n"
			 "what the hardware offers (NVX_IOC_FEATURES). JSON output keeps\n"
			 "the raw masks as hex strings (\"features\", \"hw\") beside one\n"
			 "boolean per known bit (\"feature\", \"hw_facts\").\n",
		.fn = cmd_features,
	},
	{
		.name = "pool",
		.summary = "grow, shrink and show the nvx memory pool",
		.usage = "COMMAND [ARGS...]\n"
			 "\n"
			 "The pool holds zeroed memory per NUMA node for grants.\n",
		.sub = nvx_pool_cmds,
	},
	{
		.name = "stat",
		.summary = "show every counter of the pool and its scrubber",
		.usage = nvx_stat_usage,
		.fn = nvx_cmd_stat,
	},
	{
		.name = "grant",
		.summary = "take a grant from the pool, map it, touch it, time it",
		.usage = nvx_grant_usage,
		.fn = nvx_cmd_grant,
	},
	{
		.name = "uintr",
		.summary = "user interrupts between threads: a ping demo",
		.usage = "COMMAND [ARGS...]\n"
			 "\n"
			 "User interrupts: a thread registers a handler, other threads send\n"
			 "it vectors, and the handler runs on the thread's next return to\n"
			 "user mode, without a signal frame or sigreturn.\n",
		.sub = nvx_uintr_cmds,
	},
	{
		.name = "uvm",
		.summary = "light user VMs: run a guest image",
		.usage = "COMMAND [ARGS...]\n"
			 "\n"
			 "Tiny KVM guests whose RAM is a grant and whose messages to their\n"
			 "system process are handled in the kernel (the PMIO fast path).\n",
		.sub = nvx_uvm_cmds,
	},
	{
		.name = "sys",
		.summary = "the minimal system process of user VMs",
		.usage = nvx_sys_usage,
		.fn = nvx_cmd_sys,
	},
	{
		.name = "srq",
		.summary = "shared multi-packet RX queues on an nvxsim NIC",
		.usage = "COMMAND [ARGS...]\n"
			 "\n"
			 "Shared RX queues: one pool of buffers, from a grant, feeds every\n"
			 "receive queue of a NIC; frames are packed into strides of the\n"
			 "buffers, read in place and released through a release ring.\n",
		.sub = nvx_srq_cmds,
	},
	{
		.name = "bench",
		.summary = "run a benchmark",
		.usage = "COMMAND [ARGS...]\n"
			 "\n"
			 "Benchmarks of nvx against what the kernel offers without it.\n",
		.sub = nvx_bench_cmds,
		.more = nvx_srq_bench_cmds,
	},
	{
		.name = "help",
		.summary = "show this help, or the help of COMMAND",
		.usage = "[COMMAND [SUBCOMMAND...]]\n"
			 "\n"
			 "Show the help of nvxtool, or the usage of COMMAND.\n",
		.fn = cmd_help,
	},
	{ }
};

static const struct nvx_cmd *nvx_find_cmd(const struct nvx_cmd *table,
					  const char *name)
{
	for (; table && table->name; table++)
		if (!strcmp(table->name, name))
			return table;
	return NULL;
}

static void nvx_path_append(char *path, size_t size, const char *name)
{
	size_t len = strlen(path);

	snprintf(path + len, size - len, "%s%s", len ? " " : "", name);
}

/* The commands of @table, then those of @more (either may be NULL). */
static void nvx_print_cmd_list(FILE *f, const struct nvx_cmd *table,
			       const struct nvx_cmd *more)
{
	const struct nvx_cmd *tables[] = { table, more }, *c;
	unsigned int t;
	int width = 8;

	for (t = 0; t < NVX_ARRAY_SIZE(tables); t++)
		for (c = tables[t]; c && c->name; c++)
			if ((int)strlen(c->name) > width)
				width = (int)strlen(c->name);
	for (t = 0; t < NVX_ARRAY_SIZE(tables); t++)
		for (c = tables[t]; c && c->name; c++)
			fprintf(f, "  %-*s  %s\n", width, c->name,
				c->summary);
}

void nvx_print_usage(FILE *f, const struct nvx_cmd *cmd, const char *path)
{
	const char *usage = cmd->usage ? cmd->usage : "";
	size_t len = strlen(usage);

	fprintf(f, "Usage: nvxtool %s%s%s", path,
		len && usage[0] != '\n' ? " " : "", usage);
	if (!len || usage[len - 1] != '\n')
		fputc('\n', f);
	if (cmd->sub || cmd->more) {
		fputs("\nCommands:\n", f);
		nvx_print_cmd_list(f, cmd->sub, cmd->more);
	}
	fputs("\nOptions:\n"
	      "  --json      print one JSON object on stdout instead of text\n"
	      "  -h, --help  show this help\n", f);
}

static void nvx_print_main_usage(FILE *f)
{
	fputs("Usage: nvxtool [OPTIONS] COMMAND [ARGS...]\n"
	      "       nvxtool help [COMMAND]\n"
	      "\n"
	      "Inspect and control nvx through its control device, /dev/nvx.\n"
	      "\n"
	      "Commands:\n", f);
	nvx_print_cmd_list(f, nvx_commands, NULL);
	fputs("\n"
	      "Options (before COMMAND):\n"
	      "  --json         print one JSON object on stdout instead of text\n"
	      "  --device PATH  the nvx control device (default: $"
	      NVX_DEVICE_ENV ", else " NVX_DEFAULT_DEVICE ")\n"
	      "  -h, --help     show this help, or with COMMAND its help\n"
	      "\n"
	      "Every command also takes --json and -h/--help after its name.\n"
	      "\n"
	      "Exit status:\n"
	      "  0  success\n"
	      "  1  runtime failure: an ioctl failed, or the kernel does not know it\n"
	      "  2  usage error: unknown command or option, bad argument\n"
	      "  3  no nvx device: the kernel has no CONFIG_NVX, or the nvx module\n"
	      "     is not loaded\n"
	      "  4  permission denied on the nvx device\n", f);
}

/*
 * Print the help of the command named by the words argv[0..argc). With
 * @strict, every word must name a command; otherwise the words after a
 * command without subcommands are its arguments and ignored.
 */
static int nvx_help_words(int argc, char **argv, bool strict)
{
	const struct nvx_cmd *table = nvx_commands, *more = NULL, *cmd = NULL;
	char path[sizeof(((struct nvx_ctx *)0)->path)] = "";
	int i;

	if (!argc) {
		nvx_print_main_usage(stdout);
		return NVX_EXIT_OK;
	}
	for (i = 0; i < argc && (strict || table || more); i++) {
		cmd = nvx_find_cmd(table, argv[i]);
		if (!cmd)
			cmd = nvx_find_cmd(more, argv[i]);
		if (!cmd) {
			nvx_err("unknown command '%s%s%s'", path,
				path[0] ? " " : "", argv[i]);
			fputs("Try 'nvxtool help'.\n", stderr);
			return NVX_EXIT_USAGE;
		}
		nvx_path_append(path, sizeof(path), cmd->name);
		table = cmd->sub;
		more = cmd->more;
	}
	nvx_print_usage(stdout, cmd, path);
	return NVX_EXIT_OK;
}

static int cmd_help(struct nvx_ctx *ctx, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return nvx_usage_error(ctx, "unknown option '%s'",
					       argv[i]);
	return nvx_help_words(argc - 1, argv + 1, true);
}

/*
 * Run the command argv[0] from @table, or else from @more (NULL: none),
 * with its arguments. Leading --json and --help of a group are taken
 * before its subcommand; a leaf's are taken from anywhere before "--".
 */
static int nvx_dispatch(struct nvx_ctx *ctx, const struct nvx_cmd *table,
			const struct nvx_cmd *more, int argc, char **argv)
{
	const struct nvx_cmd *cmd;
	bool help = false;
	int i, n;

	cmd = nvx_find_cmd(table, argv[0]);
	if (!cmd)
		cmd = nvx_find_cmd(more, argv[0]);
	if (!cmd) {
		if (ctx->path[0])
			return nvx_usage_error(ctx, "unknown command '%s'",
					       argv[0]);
		nvx_err("unknown command '%s'", argv[0]);
		fputs("Try 'nvxtool help'.\n", stderr);
		return NVX_EXIT_USAGE;
	}
	nvx_path_append(ctx->path, sizeof(ctx->path), cmd->name);
	ctx->cmd = cmd;

	if (cmd->sub || cmd->more) {
		for (i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--json")) {
				ctx->json = true;
			} else if (!strcmp(argv[i], "-h") ||
				   !strcmp(argv[i], "--help")) {
				help = true;
			} else if (!strcmp(argv[i], "--")) {
				i++;
				break;
			} else if (argv[i][0] == '-' && argv[i][1]) {
				return nvx_usage_error(ctx,
						       "unknown option '%s'",
						       argv[i]);
			} else {
				break;
			}
		}
		if (help) {
			nvx_print_usage(stdout, cmd, ctx->path);
			return NVX_EXIT_OK;
		}
		if (i < argc)
			return nvx_dispatch(ctx, cmd->sub, cmd->more, argc - i,
					    argv + i);
		if (!cmd->fn)
			return nvx_usage_error(ctx, "missing command");
		argv[1] = NULL;
		return cmd->fn(ctx, 1, argv);
	}

	for (i = 1, n = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--json"))
			ctx->json = true;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			help = true;
		else
			argv[n++] = argv[i];
	}
	while (i < argc)
		argv[n++] = argv[i++];
	argv[n] = NULL;

	if (help) {
		nvx_print_usage(stdout, cmd, ctx->path);
		return NVX_EXIT_OK;
	}
	return cmd->fn(ctx, n, argv);
}

int main(int argc, char **argv)
{
	struct nvx_ctx ctx = { .fd = -1 };
	const char *env = getenv(NVX_DEVICE_ENV);
	bool help = false;
	int i, ret;

	ctx.device = env && env[0] ? env : NVX_DEFAULT_DEVICE;
	nvx_json_init(&ctx.js, stdout);

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || !a[1])
			break;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--json")) {
			ctx.json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help = true;
		} else if (!strcmp(a, "--device")) {
			if (++i == argc)
				return nvx_usage_error(&ctx,
						       "--device needs a PATH");
			ctx.device = argv[i];
		} else if (!strncmp(a, "--device=", 9)) {
			ctx.device = a + 9;
		} else {
			return nvx_usage_error(&ctx, "unknown option '%s'", a);
		}
		if (!ctx.device[0])
			return nvx_usage_error(&ctx, "--device needs a PATH");
	}

	if (help) {
		/* "nvxtool --help CMD [SUB...] [ARGS]": the help of CMD. */
		int words = 0;

		while (i + words < argc && argv[i + words][0] != '-')
			words++;
		ret = nvx_help_words(words, argv + i, false);
	} else if (i == argc) {
		nvx_err("missing command");
		nvx_try_help("");
		ret = NVX_EXIT_USAGE;
	} else {
		ret = nvx_dispatch(&ctx, nvx_commands, NULL, argc - i,
				   argv + i);
	}

	if (ctx.fd >= 0)
		close(ctx.fd);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		nvx_err("error writing to stdout");
		if (!ret)
			ret = NVX_EXIT_FAIL;
	}
	return ret;
}
