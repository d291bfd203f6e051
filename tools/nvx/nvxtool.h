/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvxtool and nvx-bench: shared types and helpers (common.c, json.c).
 *
 * Commands live in tables of struct nvx_cmd, bpftool style: the top
 * level holds objects (pool, grant, ...), each a group of commands
 * (pool grow, ...), or both: a group whose handler runs when no command
 * is given. An object in its own .c file defines its table, declares it
 * here, and adds one entry to the top-level table in main.c:
 *
 *	extern const struct nvx_cmd nvx_pool_cmds[];
 *	{ .name = "pool", .summary = "...", .usage = "...",
 *	  .sub = nvx_pool_cmds },
 *
 * Every table ends with an empty entry ({ }). Handlers are named
 * cmd_<object>_<command>.
 *
 * Before a handler runs, the dispatcher takes -j/--json, -p/--pretty and
 * -h/--help out of its arguments (up to a "--", which it leaves in
 * place), so argv holds the command name in argv[0] and only the
 * command's own arguments after it; a handler with options of its own
 * can run getopt_long() on them. --help prints the command's usage and
 * never reaches the handler; -j on an NVX_CMD_NO_JSON command is a usage
 * error.
 */
#ifndef _NVXTOOL_H
#define _NVXTOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nvx_pool.h"
#include "nvx_srq.h"
#include "nvx_uintr.h"
#include "nvx_util.h"

/* Exit statuses; nvxtool help documents them. */
enum {
	NVX_EXIT_OK	= 0,	/* success */
	NVX_EXIT_FAIL	= 1,	/* runtime failure: an ioctl failed, ... */
	NVX_EXIT_USAGE	= 2,	/* bad command line */
	NVX_EXIT_NODEV	= 3,	/* no nvx device: no CONFIG_NVX, no module */
	NVX_EXIT_PERM	= 4,	/* no permission to open the device */
};

#define NVX_DEVICE_ENV		"NVX_DEVICE"

#ifndef __printf
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#endif

/* Deepest nesting of JSON objects and arrays the emitter supports. */
#define NVX_JSON_MAX_DEPTH	16

/**
 * struct nvx_json - state of the JSON emitter
 * @out: where the JSON goes (stdout).
 * @pretty: indent, one member per line.
 * @depth: number of objects and arrays open.
 * @first: per open level, true until its first member is written.
 * @closer: per open level, '}' or ']'.
 */
struct nvx_json {
	FILE *out;
	bool pretty;
	unsigned int depth;
	bool first[NVX_JSON_MAX_DEPTH];
	char closer[NVX_JSON_MAX_DEPTH];
};

struct nvx_ctx;

/* Flags of struct nvx_cmd. */
#define NVX_CMD_NO_JSON	(1U << 0)	/* prints no JSON: -j is an error */

/**
 * struct nvx_cmd - one command, or one object (a group of commands)
 * @name: what the user types; any unique prefix of it will do.
 * @summary: one line for the command list (no trailing period).
 * @usage: the arguments after the command name on the first line,
 *	then optionally a blank line and a description, e.g.
 *	"\n\nShow the nvx ABI version.\n". The dispatcher adds the
 *	"Usage: nvxtool NAME" prefix, the list of commands and the common
 *	options.
 * @fn: the handler. Returns an NVX_EXIT_* status. For a group, it runs
 *	when no command is given; a group without one needs a command.
 * @sub: the commands of a group, ending with an empty entry; NULL for a
 *	leaf. Every group also has an implicit "help" command.
 * @flags: NVX_CMD_* flags.
 */
struct nvx_cmd {
	const char *name;
	const char *summary;
	const char *usage;
	int (*fn)(struct nvx_ctx *ctx, int argc, char **argv);
	const struct nvx_cmd *sub;
	unsigned int flags;
};

/**
 * struct nvx_prog - a program built on the dispatcher (nvx_main())
 * @name: its name, for usage and messages.
 * @top_word: what the words of @cmds are, for messages: "object".
 * @top_arg: the same in its usage: "OBJECT".
 * @args: its arguments after the options: "OBJECT { COMMAND | help }".
 * @help_args: the arguments of its help: "[OBJECT [COMMAND]]".
 * @about: what it does, the lines after the synopsis.
 * @list_title: the title of the list of @cmds: "Objects".
 * @opts_after: where else the common options go: "OBJECT and COMMAND".
 * @json_note: the second line of -j's help.
 * @epilog: the lines after the options.
 * @cmds: its objects, ending with an empty entry.
 *
 * nvx_main() prints its top-level help from these.
 */
struct nvx_prog {
	const char *name;
	const char *top_word;
	const char *top_arg;
	const char *args;
	const char *help_args;
	const char *about;
	const char *list_title;
	const char *opts_after;
	const char *json_note;
	const char *epilog;
	const struct nvx_cmd *cmds;
};

/**
 * struct nvx_ctx - what every command gets
 * @device: path of the nvx control device.
 * @fd: the open device, -1 until nvx_open_device().
 * @json: print one JSON object on stdout instead of text.
 * @cmd: the command running.
 * @path: its full name, e.g. "pool grow", for messages.
 * @js: the JSON emitter, writing to stdout.
 */
struct nvx_ctx {
	const char *device;
	int fd;
	bool json;
	const struct nvx_cmd *cmd;
	char path[64];
	struct nvx_json js;
};

/* Messages on stderr, prefixed with "nvxtool: ". */
void nvx_err(const char *fmt, ...) __printf(1, 2);
void nvx_warn(const char *fmt, ...) __printf(1, 2);

/* Where to look for help after a usage error. */
void nvx_try_help(const char *path);

/* The program's name in messages, set by nvx_main(). */
extern const char *nvx_prog;

int nvx_main(const struct nvx_prog *prog, int argc, char **argv);

/*
 * Report a bad command line for the running command, point at its --help,
 * and return NVX_EXIT_USAGE.
 */
int nvx_usage_error(struct nvx_ctx *ctx, const char *fmt, ...)
	__printf(2, 3);

/* For a command without arguments: NVX_EXIT_OK or a usage error. */
int nvx_no_args(struct nvx_ctx *ctx, int argc, char **argv);

/* Print the full usage of @cmd, named @path, to @f. */
void nvx_print_usage(FILE *f, const struct nvx_cmd *cmd, const char *path);

/*
 * Open ctx->device read-write into ctx->fd; a no-op when it is open.
 * Return: NVX_EXIT_OK, or NVX_EXIT_NODEV, NVX_EXIT_PERM or NVX_EXIT_FAIL
 * after printing why.
 */
int nvx_open_device(struct nvx_ctx *ctx);

/*
 * ioctl(ctx->fd, @req, @arg), opening the device first if needed.
 * @name names the ioctl in messages ("NVX_IOC_VERSION").
 * Return: NVX_EXIT_OK, or an NVX_EXIT_* status after printing why
 * (ENOTTY: the running kernel does not know the ioctl).
 */
int nvx_ioctl(struct nvx_ctx *ctx, unsigned long req, void *arg,
	      const char *name);

/*
 * For a command without arguments that reads one ioctl: nvx_no_args(),
 * then @arg (@size bytes) zeroed, then nvx_ioctl(). Return: as those.
 */
int nvx_no_args_ioctl(struct nvx_ctx *ctx, int argc, char **argv,
		      unsigned long req, void *arg, size_t size,
		      const char *name);

/*
 * nvx_parse_size() - parse a size in bytes
 * Decimal digits, optionally followed by K, M, G or T (powers of 1024),
 * then optionally "i", and then optionally "B"; case-insensitive: "4096",
 * "64K", "2MiB", "1gb", "512B". No sign, space, fraction or hex.
 * Return: 0 and *@out set; -EINVAL for anything else, -ERANGE when the
 * value does not fit in 64 bits. *@out is untouched on error.
 */
int nvx_parse_size(const char *s, uint64_t *out);

/*
 * nvx_parse_uint() - parse a decimal number no larger than @max
 * Only decimal digits: no sign, space or suffix.
 * Return: 0 and *@out set; -EINVAL for anything else, -ERANGE above @max.
 * *@out is untouched on error.
 */
int nvx_parse_uint(const char *s, unsigned long long max,
		   unsigned long long *out);

/*
 * nvx_opt_num() - --NAME's argument @s, a decimal from @min to @max,
 * into *@v. Return: NVX_EXIT_OK or a usage error.
 */
int nvx_opt_num(struct nvx_ctx *ctx, const char *name, const char *s,
		unsigned long long min, unsigned long long max,
		unsigned long long *v);

/* nvx_opt_num() into a uint32_t; *@v is untouched on error. */
int nvx_opt_u32(struct nvx_ctx *ctx, const char *name, const char *s,
		uint32_t min, uint32_t max, uint32_t *v);

/* After getopt_long(): a usage error when arguments are left. */
int nvx_getopt_done(struct nvx_ctx *ctx, int argc, char **argv);

/*
 * For a handler parsing its options with getopt_long() and an optstring
 * that starts with ':': report the unknown option ('?') or the missing
 * argument (':') that getopt_long() returned as @c, as a usage error.
 * Return: NVX_EXIT_USAGE.
 */
int nvx_getopt_error(struct nvx_ctx *ctx, int c, char **argv);

struct option;

/* What an option handler of nvx_getopt() returns for an option not its own. */
#define NVX_OPT_UNKNOWN	(-1)

int nvx_getopt(struct nvx_ctx *ctx, int argc, char **argv,
	       const struct option *opts,
	       int (*fn)(struct nvx_ctx *ctx, int c, void *arg), void *arg);

/* Room for any string nvx_fmt_bytes() writes, with its NUL. */
#define NVX_FMT_BYTES_LEN	32

/*
 * nvx_fmt_bytes() - a byte count for people: "512 MiB", "1.50 GiB",
 * "4 KiB", "100 B" (units of 1024; two decimals when not a whole number
 * of the unit). Return: @buf.
 */
char *nvx_fmt_bytes(char *buf, size_t size, uint64_t bytes);

/*
 * The JSON emitter. @key is the member name inside an object, and NULL
 * for the top-level value and for array elements. Ending the top-level
 * value writes the newline. Strings are escaped; nvx_json_hex() writes
 * the value as a string, "0x1f".
 */
void nvx_json_init(struct nvx_json *j, FILE *out);
void nvx_json_object_begin(struct nvx_json *j, const char *key);
void nvx_json_array_begin(struct nvx_json *j, const char *key);
void nvx_json_end(struct nvx_json *j);
void nvx_json_str(struct nvx_json *j, const char *key, const char *val);
void nvx_json_u64(struct nvx_json *j, const char *key, uint64_t val);
void nvx_json_s64(struct nvx_json *j, const char *key, int64_t val);
void nvx_json_bool(struct nvx_json *j, const char *key, bool val);
void nvx_json_hex(struct nvx_json *j, const char *key, uint64_t val);
void nvx_json_null(struct nvx_json *j, const char *key);
/* A number with up to 6 significant digits; null when not finite. */
void nvx_json_double(struct nvx_json *j, const char *key, double val);

/**
 * struct nvx_json_field - a member of a struct, for nvx_json_fields()
 * @key: its name in JSON.
 * @off: its offset in the struct.
 * @size: the size of an unsigned integer member (1, 2, 4 or 8), written
 *	as nvx_json_u64(); 0 for a double, written as nvx_json_double().
 */
struct nvx_json_field {
	const char *key;
	size_t off;
	size_t size;
};

/* An unsigned integer member of struct @type, named in JSON as in C. */
#define NVX_JSON_UINT(type, member)					\
	{ #member, offsetof(type, member), sizeof(((type *)0)->member) }
/* The same, named @key in JSON. */
#define NVX_JSON_UINT_AS(type, key, member)				\
	{ key, offsetof(type, member), sizeof(((type *)0)->member) }
/* A double member of struct @type, named @key in JSON. */
#define NVX_JSON_DOUBLE(type, key, member)				\
	{ key, offsetof(type, member), 0 }

/*
 * Write the members of *@base that @fields (ending with an empty entry)
 * name, in their order, into the open object.
 */
void nvx_json_fields(struct nvx_json *j, const void *base,
		     const struct nvx_json_field *fields);

/**
 * struct nvx_stop_old - what SIGINT and SIGTERM did before nvx_stop_catch()
 * @sigint: SIGINT's action.
 * @sigterm: SIGTERM's action.
 */
struct nvx_stop_old {
	struct sigaction sigint;
	struct sigaction sigterm;
};

/*
 * SIGINT and SIGTERM ask a long command to stop at its next step:
 * nvx_stop_catch() catches them (@flags: sa_flags, SA_RESTART or 0) and
 * forgets any earlier one, nvx_stop_signal() says which came (0: none),
 * nvx_stop_restore() puts back their actions. nvx_stop_end() restores
 * them too, then reports an interruption: NVX_EXIT_FAIL after
 * "interrupted (SIGNAL)", else NVX_EXIT_OK.
 */
void nvx_stop_catch(struct nvx_stop_old *old, int flags);
int nvx_stop_signal(void);
void nvx_stop_restore(const struct nvx_stop_old *old);
int nvx_stop_end(struct nvx_ctx *ctx, const struct nvx_stop_old *old);

/* How a user VM ended, for uvm run and nvx-bench uvm: see common.c. */
#define NVX_UVM_EXIT_STOPPED	125	/* uvm run: the VM was stopped */
struct nvx_uvm_vm;
int nvx_uvm_report(struct nvx_uvm_vm *vm, int ret);
struct nvx_uvm_opts;
struct nvx_uvm_tmpl;
int nvx_uvm_run_clones(struct nvx_ctx *ctx, const struct nvx_uvm_opts *o,
		       struct nvx_uvm_tmpl *loaded, unsigned int n,
		       const char *spec, bool stats,
		       unsigned int *started);	/* clones.c */

/* The objects in their own files, for the top-level table in main.c. */
extern const struct nvx_cmd nvx_version_cmds[];	/* features.c */
extern const struct nvx_cmd nvx_features_cmds[];	/* features.c */
extern const struct nvx_cmd nvx_pool_cmds[];		/* pool.c */
extern const struct nvx_cmd nvx_grant_cmds[];		/* pool.c */
extern const struct nvx_cmd nvx_uvm_cmds[];		/* uvm.c */
extern const struct nvx_cmd nvx_uintr_cmds[];		/* uintr.c */
extern const struct nvx_cmd nvx_srq_cmds[];		/* srq.c */
int cmd_version_show(struct nvx_ctx *ctx, int argc, char **argv);
int cmd_features_show(struct nvx_ctx *ctx, int argc, char **argv);

/*
 * Errors of the srq library (lib/srq.c) on NIC @dev, for srq.c and
 * nvx-bench srq.
 */
void nvx_srq_perror(struct nvx_ctx *ctx, const char *what, const char *dev,
		    unsigned long req, int err);
void nvx_srq_open_perror(struct nvx_ctx *ctx, const char *dev,
			 uint64_t grant_bytes, enum nvx_srq_step step, int err);

#endif /* _NVXTOOL_H */
