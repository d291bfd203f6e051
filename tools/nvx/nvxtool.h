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
 * A group defined in one file can get subcommands from another through
 * @more, a second table searched and listed after @sub: srq.c adds
 * "bench srq" to bench.c's group this way.
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
#include <stddef.h>
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

#ifndef __printf
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#endif

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
 * @more: for a group, more subcommands from another file, ending with
 *	an empty entry, found and listed after those of @sub; or NULL.
 */
struct nvx_cmd {
	const char *name;
	const char *summary;
	const char *usage;
	int (*fn)(struct nvx_ctx *ctx, int argc, char **argv);
	const struct nvx_cmd *sub;
	const struct nvx_cmd *more;
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
 * For a handler parsing its options with getopt_long() and an optstring
 * that starts with ':': report the unknown option ('?') or the missing
 * argument (':') that getopt_long() returned as @c, as a usage error.
 * Return: NVX_EXIT_USAGE.
 */
int nvx_getopt_error(struct nvx_ctx *ctx, int c, char **argv);

/* Room for any string nvx_fmt_bytes() writes, with its NUL. */
#define NVX_FMT_BYTES_LEN	32

/*
 * nvx_fmt_bytes() - a byte count for people: "512 MiB", "1.50 GiB",
 * "4 KiB", "100 B" (units of 1024; two decimals when not a whole number
 * of the unit). Return: @buf.
 */
char *nvx_fmt_bytes(char *buf, size_t size, uint64_t bytes);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t nvx_now_ns(void);

/* The stride of nvx_touch_pages(): one byte per 4 KiB page. */
#define NVX_TOUCH_STRIDE	4096UL

/*
 * nvx_touch_pages() - write one byte in every 4 KiB page of @len bytes
 * at @addr, which must be mapped writable. With @check_zero, read the byte
 * first and count the pages where it was not 0.
 * Return: that count (0 without @check_zero).
 */
uint64_t nvx_touch_pages(void *addr, uint64_t len, bool check_zero);

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

/*
 * Commands of the capabilities in their own files, for the top-level
 * table in nvxtool.c: groups by their table, leaves by handler and usage.
 */
extern const struct nvx_cmd nvx_pool_cmds[];	/* pool.c: pool ... */
extern const struct nvx_cmd nvx_bench_cmds[];	/* bench.c: bench ... */
extern const struct nvx_cmd nvx_uintr_cmds[];	/* uintr.c: uintr ... */
extern const struct nvx_cmd nvx_srq_cmds[];	/* srq.c: srq ... */
extern const struct nvx_cmd nvx_srq_bench_cmds[]; /* srq.c: bench srq */
extern const struct nvx_cmd nvx_uvm_cmds[];	/* uvm.c: uvm ... */
extern const char nvx_sys_usage[];		/* uvm.c: sys */
int nvx_cmd_sys(struct nvx_ctx *ctx, int argc, char **argv);
extern const char nvx_bench_uvm_usage[];	/* uvm.c: bench uvm */
int nvx_cmd_bench_uvm(struct nvx_ctx *ctx, int argc, char **argv);
extern const char nvx_stat_usage[];		/* pool.c: stat */
int nvx_cmd_stat(struct nvx_ctx *ctx, int argc, char **argv);
extern const char nvx_grant_usage[];		/* pool.c: grant */
int nvx_cmd_grant(struct nvx_ctx *ctx, int argc, char **argv);

/*
 * pool.c: the pool and grant ioctls for other commands (bench.c). The
 * device must be open (nvx_open_device()). Each returns 0 or -errno and
 * prints nothing; nvx_pool_strerror() explains an errno of @req.
 */
struct nvx_pool_stats;
int nvx_pool_stats_get(struct nvx_ctx *ctx, uint32_t node,
		       struct nvx_pool_stats *s);
int nvx_pool_resize(struct nvx_ctx *ctx, bool grow, uint32_t node,
		    uint64_t bytes, uint32_t chunk_shift, uint64_t *done);
int nvx_grant_new(struct nvx_ctx *ctx, uint32_t node, uint64_t bytes,
		  uint32_t flags, int *fd);
const char *nvx_pool_strerror(unsigned long req, int err);

/*
 * uintr.c: user interrupts for other commands (bench.c), so that only
 * uintr.c includes lib/nvx_uintr.h. A thread registers a counting
 * handler with nvx_uintr_rx_register(): for every vector but
 * NVX_UINTR_RX_STOP it increments @hits and, when @reply is not -1, sends
 * through sender table entry @reply. Each function returns 0 or -errno
 * and prints nothing; nvx_uintr_strerror() explains an errno of @req.
 * nvxtool built without the library (not x86-64 GCC) gets -EOPNOTSUPP.
 */
#define NVX_UINTR_RX_STOP	1	/* the vector that sets @stop */

/**
 * struct nvx_uintr_rx - what the counting handler of a thread does
 * @hits: deliveries of vectors other than NVX_UINTR_RX_STOP.
 * @reply_errors: replies that failed.
 * @kernel_delivered: set on unregistering: how many of the deliveries
 *	the kernel made (struct nvx_uintr_page's @delivered); the others
 *	were taken in user mode when unmasking.
 * @stop: set when NVX_UINTR_RX_STOP is delivered.
 * @armed: set by the thread: the number of the timer run going on.
 * @disarm: set by another thread: the next delivery stops the thread's
 *	nvx timer when @disarm equals @armed.
 * @disarmed: set by the handler to @disarm when it stopped the timer.
 * @reply: the sender table entry to answer through, or -1.
 * @nvx_fd: the nvx device, for replies and @disarm.
 *
 * Read and write the fields with __atomic builtins: the handler runs
 * at any point of the thread, and other threads look.
 */
struct nvx_uintr_rx {
	uint64_t hits;
	uint64_t reply_errors;
	uint64_t kernel_delivered;
	uint32_t stop;
	uint32_t armed;
	uint32_t disarm;
	uint32_t disarmed;
	int reply;
	int nvx_fd;
};

/* The calling thread's handler, @rx until nvx_uintr_rx_unregister(). */
int nvx_uintr_rx_register(int nvx_fd, struct nvx_uintr_rx *rx);
int nvx_uintr_rx_unregister(int nvx_fd);
/*
 * Block in NVX_IOC_UINTR_WAIT, delivery masked so that nothing is missed,
 * until the calling thread's @hits reaches @target, its @stop is set or
 * *@quit (when given) is nonzero; -ETIMEDOUT after @timeout_ns.
 */
int nvx_uintr_rx_wait(int nvx_fd, uint64_t target, const int *quit,
		      uint64_t timeout_ns);
/* A vector fd for the calling thread in *@fd. */
int nvx_uintr_vec_new(int nvx_fd, uint32_t vector, int *fd);
/* Sender table entries: add @vector_fd, *@index tells where; delete. */
int nvx_uintr_sender_new(int nvx_fd, int vector_fd, uint32_t *index);
int nvx_uintr_sender_free(int nvx_fd, uint32_t index);
/* NVX_IOC_UINTR_SEND through entry @index. */
int nvx_uintr_post(int nvx_fd, uint32_t index);
/* The calling thread's nvx timer: @vector every @period_ns; 0 stops it. */
int nvx_uintr_timer_set(int nvx_fd, uint32_t vector, uint64_t period_ns);
const char *nvx_uintr_strerror(unsigned long req, int err);

/*
 * Two CPUs for a test between two threads: the first two this process
 * may run on. Return: how many differ (2, or 1 when there is one only,
 * and then cpu[1] == cpu[0]), or -errno.
 */
int nvx_two_cpus(int cpu[2]);
/* Pin the calling thread to @cpu: 0 or -errno. */
int nvx_pin_self(int cpu);

#endif /* _NVXTOOL_H */
