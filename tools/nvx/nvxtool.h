/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvxtool: shared types and helpers.
 *
 * Commands live in a table of struct nvx_cmd. A command is either a leaf
 * with a handler, or a group with a table of subcommands (for example a
 * future "pool" group holding "pool grow"), or both: a group whose handler
 * runs when no subcommand is given. A capability in its own .c file
 * defines its table, declares it here, and adds one entry to the top-level
 * table in nvxtool.c:
 *
 *	extern const struct nvx_cmd nvx_pool_cmds[];
 *	{ .name = "pool", .summary = "...", .usage = "...",
 *	  .sub = nvx_pool_cmds },
 *
 * Every table ends with an empty entry ({ }).
 *
 * Before a handler runs, the dispatcher takes --json and -h/--help out of
 * its arguments (up to a "--", which it leaves in place), so argv holds
 * the command name in argv[0] and only the command's own arguments after
 * it; a handler with options of its own can run getopt_long() on them.
 * --help prints the command's usage and never reaches the handler.
 */
#ifndef _NVXTOOL_H
#define _NVXTOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses; nvxtool help documents them. */
enum {
	NVX_EXIT_OK	= 0,	/* success */
	NVX_EXIT_FAIL	= 1,	/* runtime failure: an ioctl failed, ... */
	NVX_EXIT_USAGE	= 2,	/* bad command line */
	NVX_EXIT_NODEV	= 3,	/* no nvx device: no CONFIG_NVX, no module */
	NVX_EXIT_PERM	= 4,	/* no permission to open the device */
};

#define NVX_DEFAULT_DEVICE	"/dev/nvx"
#define NVX_DEVICE_ENV		"NVX_DEVICE"

#define NVX_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define __nvx_printf(a, b)	__attribute__((format(printf, a, b)))

/* Deepest nesting of JSON objects and arrays the emitter supports. */
#define NVX_JSON_MAX_DEPTH	16

/**
 * struct nvx_json - state of the JSON emitter
 * @out: where the JSON goes (stdout).
 * @depth: number of objects and arrays open.
 * @first: per open level, true until its first member is written.
 * @closer: per open level, '}' or ']'.
 */
struct nvx_json {
	FILE *out;
	unsigned int depth;
	bool first[NVX_JSON_MAX_DEPTH];
	char closer[NVX_JSON_MAX_DEPTH];
};

struct nvx_ctx;

/**
 * struct nvx_cmd - one command, or one group of subcommands
 * @name: what the user types.
 * @summary: one line for the command list (no trailing period).
 * @usage: the arguments after the command name on the first line,
 *	then optionally a blank line and a description, e.g.
 *	"[--json]\n\nShow the nvx ABI version.\n". nvxtool adds the
 *	"Usage: nvxtool NAME" prefix, the list of subcommands and the
 *	common options.
 * @fn: the handler. Returns an NVX_EXIT_* status. For a group, it runs
 *	when no subcommand is given; a group without one needs a subcommand.
 * @sub: subcommands, ending with an empty entry; NULL for a leaf.
 */
struct nvx_cmd {
	const char *name;
	const char *summary;
	const char *usage;
	int (*fn)(struct nvx_ctx *ctx, int argc, char **argv);
	const struct nvx_cmd *sub;
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
void nvx_err(const char *fmt, ...) __nvx_printf(1, 2);
void nvx_warn(const char *fmt, ...) __nvx_printf(1, 2);

/*
 * Report a bad command line for the running command, point at its --help,
 * and return NVX_EXIT_USAGE.
 */
int nvx_usage_error(struct nvx_ctx *ctx, const char *fmt, ...)
	__nvx_printf(2, 3);

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
 * nvx_parse_size() - parse a size in bytes
 * Decimal digits, optionally followed by K, M, G or T (powers of 1024),
 * then optionally "i", and then optionally "B"; case-insensitive: "4096",
 * "64K", "2MiB", "1gb", "512B". No sign, space, fraction or hex.
 * Return: 0 and *@out set; -EINVAL for anything else, -ERANGE when the
 * value does not fit in 64 bits. *@out is untouched on error.
 */
int nvx_parse_size(const char *s, uint64_t *out);

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

#endif /* _NVXTOOL_H */
