// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool and nvx-bench: the JSON writer, compact or pretty-printed.
 */
#include <assert.h>
#include <math.h>
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
/**
 * nvx_json_null() - null
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 */
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
	nvx_json_key(j, key);
	fprintf(j->out, "%llu", (unsigned long long)val);
	nvx_json_done(j);
}

/**
 * nvx_json_s64() - a signed number
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
void nvx_json_s64(struct nvx_json *j, const char *key, int64_t val)
{
	nvx_json_key(j, key);
	fprintf(j->out, "%lld", (long long)val);
	nvx_json_done(j);
}

/**
 * nvx_json_bool() - true or false
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
void nvx_json_bool(struct nvx_json *j, const char *key, bool val)
{
	nvx_json_key(j, key);
	fputs(val ? "true" : "false", j->out);
	nvx_json_done(j);
}

/**
 * nvx_json_hex() - a number as a hex string, "0x1f"
 * @j: the writer.
 * @key: the member's name in an object; NULL at the top and in arrays.
 * @val: the value.
 */
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
	nvx_json_key(j, key);
	fputs(buf, j->out);
	nvx_json_done(j);
}
