// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool and nvx-bench: the JSON writer, compact or pretty-printed.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "nvxtool.h"

/**
 * nvx_json_init() - start a JSON document
 * @j: the writer; its @pretty setting is kept.
 * @out: where it goes.
 */
void nvx_json_init(struct nvx_json *j, FILE *out)
{
	bool pretty = j->pretty;

	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
}

static void nvx_json_string(FILE *f, const char *s)
{
	/* the characters JSON escapes with a backslash, and their letters */
	static const char esc[] = "\"\\\b\f\n\r\t";
	static const char letter[] = "\"\\bfnrt";
	const unsigned char *p;
	const char *e;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		e = strchr(esc, *p);
		if (e)
			fprintf(f, "\\%c", letter[e - esc]);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Pretty: a new line, indented for @depth open levels. */
static void nvx_json_indent(struct nvx_json *j, unsigned int depth)
{
	if (j->pretty)
		fprintf(j->out, "\n%*s", (int)(4 * depth), "");
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
	nvx_json_indent(j, d);
	if (key) {
		nvx_json_string(j->out, key);
		fputs(j->pretty ? ": " : ":", j->out);
	}
}

/* After a complete value: the top-level one ends the line. */
static void nvx_json_done(struct nvx_json *j)
{
	if (!j->depth)
		fputc('\n', j->out);
}

/* A complete scalar value, written with printf() format @fmt. */
static void nvx_json_printf(struct nvx_json *j, const char *key,
			    const char *fmt, ...) __printf(3, 4);

static void nvx_json_printf(struct nvx_json *j, const char *key,
			    const char *fmt, ...)
{
	va_list ap;

	nvx_json_key(j, key);
	va_start(ap, fmt);
	vfprintf(j->out, fmt, ap);
	va_end(ap);
	nvx_json_done(j);
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

/**
 * nvx_json_object_begin() - open an object
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 */
void nvx_json_object_begin(struct nvx_json *j, const char *key)
{
	nvx_json_open(j, key, '{', '}');
}

/**
 * nvx_json_array_begin() - open an array
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 */
void nvx_json_array_begin(struct nvx_json *j, const char *key)
{
	nvx_json_open(j, key, '[', ']');
}

/**
 * nvx_json_end() - close the innermost object or array
 * @j: the writer.
 *
 * Closing the top-level value ends the line.
 */
void nvx_json_end(struct nvx_json *j)
{
	assert(j->depth);
	j->depth--;
	if (!j->first[j->depth])
		nvx_json_indent(j, j->depth);
	fputc(j->closer[j->depth], j->out);
	nvx_json_done(j);
}

/**
 * nvx_json_str() - a string, or null for NULL
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
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

/**
 * nvx_json_u64() - an unsigned number
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
void nvx_json_u64(struct nvx_json *j, const char *key, uint64_t val)
{
	nvx_json_printf(j, key, "%llu", (unsigned long long)val);
}

/**
 * nvx_json_s64() - a signed number
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
void nvx_json_s64(struct nvx_json *j, const char *key, int64_t val)
{
	nvx_json_printf(j, key, "%lld", (long long)val);
}

/**
 * nvx_json_bool() - true or false
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
void nvx_json_bool(struct nvx_json *j, const char *key, bool val)
{
	nvx_json_printf(j, key, "%s", val ? "true" : "false");
}

/**
 * nvx_json_hex() - a number as a hex string, "0x1f"
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
void nvx_json_hex(struct nvx_json *j, const char *key, uint64_t val)
{
	nvx_json_printf(j, key, "\"0x%llx\"", (unsigned long long)val);
}

/**
 * nvx_json_null() - null
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 */
void nvx_json_null(struct nvx_json *j, const char *key)
{
	nvx_json_printf(j, key, "null");
}

/**
 * nvx_json_double() - a number with up to 6 significant digits; null when not finite
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
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
	nvx_json_printf(j, key, "%s", buf);
}

/**
 * nvx_json_fields() - members of a struct, by a table
 * @j: the writer, inside an object.
 * @base: the struct.
 * @fields: its members to write, in order, ending with an empty entry.
 *
 * Each is written as nvx_json_u64() or nvx_json_double() would.
 */
void nvx_json_fields(struct nvx_json *j, const void *base,
		     const struct nvx_json_field *fields)
{
	const struct nvx_json_field *f;

	for (f = fields; f->key; f++) {
		const char *p = (const char *)base + f->off;
		uint64_t u64 = 0;
		uint32_t u32;
		uint16_t u16;
		double d;

		switch (f->size) {
		case 0:
			memcpy(&d, p, sizeof(d));
			nvx_json_double(j, f->key, d);
			continue;
		case sizeof(uint8_t):
			u64 = *(const uint8_t *)p;
			break;
		case sizeof(uint16_t):
			memcpy(&u16, p, sizeof(u16));
			u64 = u16;
			break;
		case sizeof(uint32_t):
			memcpy(&u32, p, sizeof(u32));
			u64 = u32;
			break;
		default:
			assert(f->size == sizeof(u64));
			memcpy(&u64, p, sizeof(u64));
			break;
		}
		nvx_json_u64(j, f->key, u64);
	}
}
