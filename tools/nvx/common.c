// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool and nvx-bench: messages, usage errors, option parsing, the nvx
 * device, sizes. nvxtool.h declares them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvx_uvm.h"
#include "nvxtool.h"

/* The program's name in messages: "nvxtool", "nvx-bench". */
const char *nvx_prog = "nvxtool";
/* What its top-level words name: "object", "benchmark". */
static const char *nvx_top_word = "object";

/* ------------------------------------------------------------ messages */

static void nvx_vmsg(const char *prefix, const char *fmt, va_list ap)
	__printf(2, 0);

static void nvx_vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", nvx_prog, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/**
 * nvx_err() - an error message on stderr, after the program's name
 * @fmt: printf() format.
 */
void nvx_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nvx_vmsg("", fmt, ap);
	va_end(ap);
}

/**
 * nvx_warn() - a warning on stderr, after the program's name
 * @fmt: printf() format.
 */
void nvx_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nvx_vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/**
 * nvx_try_help() - where to look for help after a usage error
 * @path: the command, e.g. "pool grow", or "".
 */
void nvx_try_help(const char *path)
{
	if (path[0])
		fprintf(stderr, "Try '%s %s --help'.\n", nvx_prog, path);
	else
		fprintf(stderr, "Try '%s --help'.\n", nvx_prog);
}

/**
 * nvx_usage_error() - report a bad command line
 * @ctx: the running command.
 * @fmt: printf() format.
 *
 * Points at the command's --help.
 *
 * Return: NVX_EXIT_USAGE.
 */
int nvx_usage_error(struct nvx_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", nvx_prog);
	if (ctx->path[0])
		fprintf(stderr, "%s: ", ctx->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	nvx_try_help(ctx->path);
	return NVX_EXIT_USAGE;
}

/**
 * nvx_no_args() - for a command without arguments
 * @ctx: the running command.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: NVX_EXIT_OK, or a usage error.
 */
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

/**
 * nvx_parse_size() - parse a size in bytes: "4096", "64K", "2MiB", "1gb"
 * @s: the text.
 * @out: the value; untouched on error.
 *
 * Return: 0, -EINVAL or -ERANGE.
 */
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

/**
 * nvx_parse_uint() - parse a decimal number no larger than @max
 * @s: the text: decimal digits only.
 * @max: the largest value.
 * @out: the value; untouched on error.
 *
 * Return: 0, -EINVAL or -ERANGE.
 */
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

/**
 * nvx_fmt_bytes() - a byte count for people: "512 MiB", "1.50 GiB"
 * @buf: where to write it.
 * @size: its size, NVX_FMT_BYTES_LEN will do.
 * @bytes: the count.
 *
 * Return: @buf.
 */
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

/**
 * nvx_getopt_error() - report what getopt_long() returned as a usage error
 * @ctx: the running command.
 * @c: '?' (unknown option) or ':' (missing argument).
 * @argv: the arguments getopt_long() parsed.
 *
 * Return: NVX_EXIT_USAGE.
 */
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

/**
 * nvx_open_device() - open ctx->device into ctx->fd, once
 * @ctx: the running command.
 *
 * Return: NVX_EXIT_OK, or NVX_EXIT_NODEV, NVX_EXIT_PERM or NVX_EXIT_FAIL
 * after printing why.
 */
int nvx_open_device(struct nvx_ctx *ctx)
{
	int fd;

	if (ctx->fd >= 0)
		return NVX_EXIT_OK;

	fd = nvx_dev_open(ctx->device);
	switch (fd) {
	case -ENOENT:
		nvx_err("%s not found: this kernel has no nvx (CONFIG_NVX), or the nvx module is not loaded",
			ctx->device);
		return NVX_EXIT_NODEV;
	case -ENXIO:
	case -ENODEV:
		/* A device node left behind without its driver. */
		nvx_err("%s: %s: this kernel has no nvx (CONFIG_NVX), or the nvx module is not loaded",
			ctx->device, strerror(-fd));
		return NVX_EXIT_NODEV;
	case -EACCES:
	case -EPERM:
		nvx_err("%s: permission denied (the device is mode 0660 root:root; run as root or ask the operator for access)",
			ctx->device);
		return NVX_EXIT_PERM;
	case -ENOTTY:
		nvx_err("%s is not a character device, so not the nvx control device",
			ctx->device);
		return NVX_EXIT_FAIL;
	default:
		if (fd >= 0)
			break;
		nvx_err("cannot open %s: %s", ctx->device, strerror(-fd));
		return NVX_EXIT_FAIL;
	}
	ctx->fd = fd;
	return NVX_EXIT_OK;
}

/**
 * nvx_ioctl() - an ioctl on the nvx device, opened first if needed
 * @ctx: the running command.
 * @req: the request.
 * @arg: its argument.
 * @name: the request's name, for messages.
 *
 * Return: NVX_EXIT_OK, or an NVX_EXIT_* status after printing why.
 */
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

/**
 * nvx_no_args_ioctl() - a command without arguments that reads one ioctl
 * @ctx: the running command.
 * @argc: its arguments.
 * @argv: its arguments.
 * @req: the request.
 * @arg: its argument, zeroed first.
 * @size: the size of *@arg.
 * @name: the request's name, for messages.
 *
 * Return: NVX_EXIT_OK, a usage error, or what nvx_ioctl() returned.
 */
int nvx_no_args_ioctl(struct nvx_ctx *ctx, int argc, char **argv,
		      unsigned long req, void *arg, size_t size,
		      const char *name)
{
	int ret;

	ret = nvx_no_args(ctx, argc, argv);
	if (ret)
		return ret;
	memset(arg, 0, size);
	return nvx_ioctl(ctx, req, arg, name);
}

/* ----------------------------------------------------- library errors */

/**
 * nvx_srq_perror() - say that an srq request on a NIC failed
 * @ctx: the running command.
 * @what: what failed, e.g. "NVX_IOC_SRQ_INFO".
 * @dev: the NIC.
 * @req: the request.
 * @err: the positive errno.
 */
void nvx_srq_perror(struct nvx_ctx *ctx, const char *what, const char *dev,
		    unsigned long req, int err)
{
	const char *why = nvx_srq_explain(req, err);

	if (why)
		nvx_err("%s: %s on %s: %s: %s", ctx->path, what, dev,
			strerror(err), why);
	else
		nvx_err("%s: %s on %s: %s", ctx->path, what, dev,
			strerror(err));
}

/**
 * nvx_srq_open_perror() - say why nvx_srq_open() failed
 * @ctx: the running command.
 * @dev: the NIC.
 * @grant_bytes: the grant it asked for.
 * @step: where it failed.
 * @err: the positive errno.
 */
void nvx_srq_open_perror(struct nvx_ctx *ctx, const char *dev,
			 uint64_t grant_bytes, enum nvx_srq_step step, int err)
{
	const char *why = nvx_pool_strerror(NVX_IOC_GRANT, err);
	uint64_t piece = NVX_PIECE_BYTES;
	char h[NVX_FMT_BYTES_LEN];

	nvx_fmt_bytes(h, sizeof(h), grant_bytes);
	switch (step) {
	case NVX_SRQ_STEP_GRANT:
		if (err == ENOSPC)
			nvx_err("%s: a grant of %s for the buffers: the pool does not hold that much free memory; grow it first: nvxtool pool grow %lluM",
				ctx->path, h,
				(unsigned long long)((grant_bytes + piece - 1) /
						     piece * piece / NVX_MIB));
		else if (strcmp(why, strerror(err)))
			nvx_err("%s: a grant of %s for the buffers: %s: %s",
				ctx->path, h, strerror(err), why);
		else
			nvx_err("%s: a grant of %s for the buffers: %s",
				ctx->path, h, strerror(err));
		break;
	case NVX_SRQ_STEP_CREATE:
		nvx_srq_perror(ctx, "NVX_IOC_SRQ_CREATE", dev,
			       NVX_IOC_SRQ_CREATE, err);
		break;
	default:
		if (err == EPROTO)
			nvx_err("%s: the layout the kernel wrote back does not hold the rings and buffers of the parameters: a kernel bug, or a different ABI",
				ctx->path);
		else
			nvx_err("%s: mmap of the set: %s", ctx->path,
				strerror(err));
		break;
	}
}

/**
 * nvx_uvm_report() - say how a VM ended
 * @vm: the VM, after nvx_uvm_run().
 * @ret: what nvx_uvm_run() returned.
 *
 * Return: the exit status for uvm run: the guest's, or
 * NVX_UVM_EXIT_STOPPED after a message.
 */
int nvx_uvm_report(struct nvx_uvm_vm *vm, int ret)
{
	if (!ret && vm->exit_status < 0x100)
		return vm->exit_status;
	if (!ret) {
		/* the runtime reports exception N as 0x100 | N */
		if (vm->exit_status < 0x120)
			nvx_err("uvm: vm %u: guest exception %u", vm->vm_id,
				vm->exit_status & 0xff);
		else
			nvx_err("uvm: vm %u: guest exit status %#x", vm->vm_id,
				vm->exit_status);
		return NVX_UVM_EXIT_STOPPED;
	}
	if (ret == -EIO)
		nvx_err("uvm: vm %u stopped: %s (detail %#llx)", vm->vm_id,
			nvx_uvm_reason_name(vm->reason),
			(unsigned long long)vm->detail);
	else
		nvx_err("uvm: vm %u: %s", vm->vm_id, strerror(-ret));
	return NVX_UVM_EXIT_STOPPED;
}

/* -------------------------------------------------------- stop signals */

/* The signal (SIGINT, SIGTERM) that asked the command to stop; 0: none. */
static atomic_int nvx_stop_sig;

static void nvx_stop_handler(int sig)
{
	atomic_store(&nvx_stop_sig, sig);
}

/**
 * nvx_stop_catch() - catch SIGINT and SIGTERM, to stop at the next step
 * @old: where to keep their actions, for nvx_stop_restore().
 * @flags: sa_flags of the handler: SA_RESTART, or 0.
 *
 * Forgets a signal caught before.
 */
void nvx_stop_catch(struct nvx_stop_old *old, int flags)
{
	struct sigaction sa = { .sa_handler = nvx_stop_handler };

	atomic_store(&nvx_stop_sig, 0);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	sigaction(SIGINT, &sa, &old->sigint);
	sigaction(SIGTERM, &sa, &old->sigterm);
}

/**
 * nvx_stop_signal() - did SIGINT or SIGTERM come?
 *
 * Return: the signal, or 0.
 */
int nvx_stop_signal(void)
{
	return atomic_load(&nvx_stop_sig);
}

/**
 * nvx_stop_restore() - give SIGINT and SIGTERM back their actions
 * @old: what nvx_stop_catch() kept.
 */
void nvx_stop_restore(const struct nvx_stop_old *old)
{
	sigaction(SIGINT, &old->sigint, NULL);
	sigaction(SIGTERM, &old->sigterm, NULL);
}

/**
 * nvx_stop_end() - restore SIGINT and SIGTERM, and report an interruption
 * @ctx: the running command.
 * @old: what nvx_stop_catch() kept.
 *
 * Return: NVX_EXIT_FAIL after a message when one of them came, else
 * NVX_EXIT_OK.
 */
int nvx_stop_end(struct nvx_ctx *ctx, const struct nvx_stop_old *old)
{
	nvx_stop_restore(old);
	if (!nvx_stop_signal())
		return NVX_EXIT_OK;
	nvx_err("%s: interrupted (%s)", ctx->path,
		strsignal(nvx_stop_signal()));
	return NVX_EXIT_FAIL;
}

/* ------------------------------------------------------------ options */

/**
 * nvx_opt_num() - an option's decimal value from @min to @max
 * @ctx: the running command.
 * @name: the option's name without "--", for the message.
 * @s: its argument.
 * @min: the smallest value.
 * @max: the largest value.
 * @v: the value.
 *
 * Return: NVX_EXIT_OK, or a usage error.
 */
int nvx_opt_num(struct nvx_ctx *ctx, const char *name, const char *s,
		unsigned long long min, unsigned long long max,
		unsigned long long *v)
{
	if (nvx_parse_uint(s, max, v) || *v < min)
		return nvx_usage_error(ctx, "--%s: '%s' is not a number from %llu to %llu",
				       name, s, min, max);
	return NVX_EXIT_OK;
}

/**
 * nvx_opt_u32() - nvx_opt_num() into a uint32_t
 * @ctx: the running command.
 * @name: the option's name without "--", for the message.
 * @s: its argument.
 * @min: the smallest value.
 * @max: the largest value.
 * @v: the value; untouched on error.
 *
 * Return: NVX_EXIT_OK, or a usage error.
 */
int nvx_opt_u32(struct nvx_ctx *ctx, const char *name, const char *s,
		uint32_t min, uint32_t max, uint32_t *v)
{
	unsigned long long n;
	int ret;

	ret = nvx_opt_num(ctx, name, s, min, max, &n);
	if (!ret)
		*v = n;
	return ret;
}

/**
 * nvx_getopt_done() - after getopt_long(): no arguments may be left
 * @ctx: the running command.
 * @argc: its arguments.
 * @argv: its arguments; optind is past the options.
 *
 * Return: NVX_EXIT_OK, or a usage error.
 */
int nvx_getopt_done(struct nvx_ctx *ctx, int argc, char **argv)
{
	if (optind < argc)
		return nvx_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind]);
	return NVX_EXIT_OK;
}

/**
 * nvx_getopt() - parse a command's long options with getopt_long()
 * @ctx: the running command.
 * @argc: its arguments.
 * @argv: its arguments.
 * @opts: its options, long ones only (the optstring is ":").
 * @fn: the handler of each option getopt_long() returns, as @c, with
 *	@arg: NVX_EXIT_OK to go on, another NVX_EXIT_* status to stop
 *	with, or NVX_OPT_UNKNOWN for one it does not know (unknown options
 *	and missing arguments, '?' and ':', among them).
 * @arg: @fn's argument.
 *
 * Return: NVX_EXIT_OK when every option was taken and no argument is
 * left, else the NVX_EXIT_* status of the first error, reported.
 */
int nvx_getopt(struct nvx_ctx *ctx, int argc, char **argv,
	       const struct option *opts,
	       int (*fn)(struct nvx_ctx *ctx, int c, void *arg), void *arg)
{
	int c, ret;

	opterr = 0;
	optind = 0;	/* glibc and musl: start afresh */
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		ret = fn(ctx, c, arg);
		if (ret == NVX_OPT_UNKNOWN)
			return nvx_getopt_error(ctx, c, argv);
		if (ret)
			return ret;
	}
	return nvx_getopt_done(ctx, argc, argv);
}

/* ------------------------------------------------------------ dispatch */

/* Every group's implicit "help" command. */
static const struct nvx_cmd nvx_help_cmd = {
	.name = "help",
	.summary = "show this help",
};

/* Is @a one of the options every command takes? Sets @ctx or @help. */
static bool nvx_common_opt(struct nvx_ctx *ctx, const char *a, bool *help)
{
	if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
		ctx->json = true;
	} else if (!strcmp(a, "-p") || !strcmp(a, "--pretty")) {
		ctx->json = true;
		ctx->js.pretty = true;
	} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		*help = true;
	} else {
		return false;
	}
	return true;
}

/*
 * The command of @table (and the implicit "help") that @name names:
 * its full name, or a prefix of exactly one name. NULL after a usage
 * error for an unknown or ambiguous name.
 */
static const struct nvx_cmd *nvx_find_cmd(struct nvx_ctx *ctx,
					  const struct nvx_cmd *table,
					  const char *name)
{
	const struct nvx_cmd *c, *found = NULL;
	size_t len = strlen(name);
	unsigned int n = 0;

	if (!strcmp(name, nvx_help_cmd.name))
		return &nvx_help_cmd;
	for (c = table; c && c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
		if (len && !strncmp(c->name, name, len)) {
			found = c;
			n++;
		}
	}
	if (len && !strncmp(nvx_help_cmd.name, name, len)) {
		found = &nvx_help_cmd;
		n++;
	}
	if (n == 1)
		return found;
	if (!n) {
		nvx_usage_error(ctx, "unknown %s '%s'",
				ctx->path[0] ? "command" : nvx_top_word, name);
		return NULL;
	}
	fprintf(stderr, "%s: %s%s'%s' is ambiguous:", nvx_prog, ctx->path,
		ctx->path[0] ? ": " : "", name);
	for (c = table; c && c->name; c++)
		if (!strncmp(c->name, name, len))
			fprintf(stderr, " %s", c->name);
	if (!strncmp(nvx_help_cmd.name, name, len))
		fprintf(stderr, " %s", nvx_help_cmd.name);
	fputc('\n', stderr);
	nvx_try_help(ctx->path);
	return NULL;
}

static void nvx_path_append(char *path, size_t size, const char *name)
{
	size_t len = strlen(path);

	snprintf(path + len, size - len, "%s%s", len ? " " : "", name);
}

/* The commands of @table and "help", one line each. */
static void nvx_print_cmd_list(FILE *f, const struct nvx_cmd *table)
{
	const struct nvx_cmd *c;
	int width = 8;

	for (c = table; c && c->name; c++)
		if ((int)strlen(c->name) > width)
			width = (int)strlen(c->name);
	for (c = table; c && c->name; c++)
		fprintf(f, "  %-*s  %s\n", width, c->name, c->summary);
	fprintf(f, "  %-*s  %s\n", width, nvx_help_cmd.name,
		nvx_help_cmd.summary);
}

/**
 * nvx_print_usage() - print the full usage of a command
 * @f: where to.
 * @cmd: the command or group.
 * @path: its full name, e.g. "pool grow".
 */
void nvx_print_usage(FILE *f, const struct nvx_cmd *cmd, const char *path)
{
	const char *usage = cmd->usage ? cmd->usage : "";
	size_t len = strlen(usage);

	fprintf(f, "Usage: %s %s%s%s", nvx_prog, path,
		len && usage[0] != '\n' ? " " : "", usage);
	if (!len || usage[len - 1] != '\n')
		fputc('\n', f);
	if (cmd->sub) {
		fputs("\nCommands (a unique prefix will do):\n", f);
		nvx_print_cmd_list(f, cmd->sub);
	}
	fputs("\nOptions:\n", f);
	if (!(cmd->flags & NVX_CMD_NO_JSON))
		fputs("  -j, --json    print one JSON object on stdout instead of text\n"
		      "  -p, --pretty  the same, pretty-printed\n", f);
	fputs("  -h, --help    show this help\n", f);
}

/* The top-level help of @prog. */
static void nvx_print_prog_usage(FILE *f, const struct nvx_prog *prog)
{
	fprintf(f, "Usage: %s [OPTIONS] %s\n"
		"       %s help %s\n"
		"\n"
		"%s\n"
		"%s:\n",
		prog->name, prog->args, prog->name, prog->help_args,
		prog->about, prog->list_title);
	nvx_print_cmd_list(f, prog->cmds);
	fprintf(f, "\n"
		"Options (also after %s):\n"
		"  -j, --json         print one JSON object on stdout instead of\n"
		"                     %s\n"
		"  -p, --pretty       the same, pretty-printed (implies --json)\n"
		"  -h, --help         show this help, or with %s its help\n"
		"Options (before %s):\n"
		"  -d, --device PATH  the nvx control device (default: $"
		NVX_DEVICE_ENV ", else " NVX_DEFAULT_DEVICE ")\n"
		"\n"
		"%s",
		prog->opts_after, prog->json_note, prog->top_arg, prog->top_arg,
		prog->epilog);
}

/* Print the help of the command named by the words argv[0..argc). */
static int nvx_help_words(struct nvx_ctx *ctx, const struct nvx_prog *prog,
			  int argc, char **argv)
{
	const struct nvx_cmd *table = prog->cmds, *cmd = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!table)
			return nvx_usage_error(ctx, "'%s' has no commands",
					       ctx->path);
		cmd = nvx_find_cmd(ctx, table, argv[i]);
		if (!cmd)
			return NVX_EXIT_USAGE;
		if (cmd == &nvx_help_cmd)
			break;
		nvx_path_append(ctx->path, sizeof(ctx->path), cmd->name);
		table = cmd->sub;
	}
	if (!cmd || cmd == &nvx_help_cmd)
		nvx_print_prog_usage(stdout, prog);
	else
		nvx_print_usage(stdout, cmd, ctx->path);
	return NVX_EXIT_OK;
}

/*
 * Run the leaf @cmd, named argv[0], with its arguments: the common
 * options are taken out of them, up to a "--" (left in place).
 */
static int nvx_run_leaf(struct nvx_ctx *ctx, const struct nvx_cmd *cmd,
			int argc, char **argv)
{
	bool help = false;
	int i, n;

	for (i = 1, n = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!nvx_common_opt(ctx, argv[i], &help))
			argv[n++] = argv[i];
	}
	while (i < argc)
		argv[n++] = argv[i++];
	argv[n] = NULL;

	if (help) {
		nvx_print_usage(stdout, cmd, ctx->path);
		return NVX_EXIT_OK;
	}
	if (ctx->json && (cmd->flags & NVX_CMD_NO_JSON))
		return nvx_usage_error(ctx, "has no JSON output (no -j, --json, -p or --pretty)");
	return cmd->fn(ctx, n, argv);
}

/*
 * Run the group @grp, named argv[0]: its leading common options, then
 * the command that argv names, or the group's own handler without one.
 */
static int nvx_run_group(struct nvx_ctx *ctx, const struct nvx_cmd *grp,
			 int argc, char **argv)
{
	const struct nvx_cmd *cmd;
	bool help = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (argv[i][0] != '-' || !argv[i][1])
			break;
		if (!nvx_common_opt(ctx, argv[i], &help))
			return nvx_usage_error(ctx, "unknown option '%s'",
					       argv[i]);
	}
	if (help) {
		nvx_print_usage(stdout, grp, ctx->path);
		return NVX_EXIT_OK;
	}
	if (i == argc) {
		if (!grp->fn)
			return nvx_usage_error(ctx, "missing command");
		argv[1] = NULL;
		return nvx_run_leaf(ctx, grp, 1, argv);
	}
	cmd = nvx_find_cmd(ctx, grp->sub, argv[i]);
	if (!cmd)
		return NVX_EXIT_USAGE;
	if (cmd == &nvx_help_cmd) {
		nvx_print_usage(stdout, grp, ctx->path);
		return NVX_EXIT_OK;
	}
	nvx_path_append(ctx->path, sizeof(ctx->path), cmd->name);
	ctx->cmd = cmd;
	if (cmd->sub)
		return nvx_run_group(ctx, cmd, argc - i, argv + i);
	return nvx_run_leaf(ctx, cmd, argc - i, argv + i);
}

/* Run the object (or leaf) argv[0] of @prog with its arguments. */
static int nvx_run_object(struct nvx_ctx *ctx, const struct nvx_prog *prog,
			  int argc, char **argv)
{
	const struct nvx_cmd *cmd = nvx_find_cmd(ctx, prog->cmds, argv[0]);

	if (!cmd)
		return NVX_EXIT_USAGE;
	if (cmd == &nvx_help_cmd)
		return nvx_help_words(ctx, prog, argc - 1, argv + 1);
	nvx_path_append(ctx->path, sizeof(ctx->path), cmd->name);
	ctx->cmd = cmd;
	if (cmd->sub)
		return nvx_run_group(ctx, cmd, argc, argv);
	return nvx_run_leaf(ctx, cmd, argc, argv);
}

/**
 * nvx_main() - the main() of nvxtool and nvx-bench
 * @prog: the program: its name, usage and top-level commands.
 * @argc: main()'s.
 * @argv: main()'s.
 *
 * PROG [OPTIONS] OBJECT { COMMAND | help }: the options are -j/--json,
 * -p/--pretty, -d/--device PATH and -h/--help; "PROG help [OBJECT
 * [COMMAND]]" and "PROG --help [OBJECT...]" show help.
 *
 * Return: the exit status.
 */
int nvx_main(const struct nvx_prog *prog, int argc, char **argv)
{
	struct nvx_ctx ctx = { .fd = -1 };
	const char *env = getenv(NVX_DEVICE_ENV);
	bool help = false;
	int i, ret;

	nvx_prog = prog->name;
	nvx_top_word = prog->top_word;
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
		if (nvx_common_opt(&ctx, a, &help))
			continue;
		if (!strcmp(a, "-d") || !strcmp(a, "--device")) {
			if (++i == argc)
				return nvx_usage_error(&ctx,
						       "%s needs a PATH", a);
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
		/* "PROG --help OBJECT [COMMAND] [ARGS]": the help of those */
		int words = 0;

		while (i + words < argc && argv[i + words][0] != '-' &&
		       words < 2)
			words++;
		ret = nvx_help_words(&ctx, prog, words, argv + i);
	} else if (i == argc) {
		nvx_err("missing %s", nvx_top_word);
		nvx_try_help("");
		ret = NVX_EXIT_USAGE;
	} else {
		ret = nvx_run_object(&ctx, prog, argc - i, argv + i);
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

