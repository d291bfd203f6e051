// SPDX-License-Identifier: GPL-2.0
/*
 * http-echo: an HTTP/1.1 echo function. It passes its ready point (where
 * `nvxtool uvm template` freezes it), says READY, then serves the
 * requests that come on fd 0 and answers on fd 1: a function server
 * (nvxtool uvm serve --listen) makes both a client's connection.
 *
 * A request is a request line, headers up to HDR_MAX bytes and a body
 * of Content-Length bytes (none without one); the answer is 200 with the
 * body as its own, streamed through in chunks (any length). The
 * connection stays open for the next request (pipelined ones too)
 * unless the request says "Connection: close" or is HTTP/1.0 without
 * "Connection: keep-alive". A malformed request gets 400, headers
 * longer than HDR_MAX 431, a chunked body 501, two Content-Lengths that
 * differ 400; each closes the connection. "Expect: 100-continue" gets
 * its "100 Continue". Exit 0 at the end of the input, 1 when a write or
 * a read within a request fails.
 *
 * Built twice from this file: the guest image http-echo.img, and with
 * NVX_HOST the static host program http-echo-host, which serves one
 * connection on its stdin and stdout (inetd style): what nvx-bench http
 * compares a user VM's cold start with.
 */
#ifdef NVX_HOST
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ready(void)
{
	return 0;
}

static int ready_point(void)
{
	return 0;
}

static void *alloc(unsigned long size, unsigned long align)
{
	(void)align;
	return malloc(size);
}

/* All of @n bytes, as the guest runtime's write() does. */
static long write_all(int fd, const void *buf, unsigned long n)
{
	unsigned long done = 0;
	long k;

	while (done < n) {
		k = write(fd, (const char *)buf + done, n - done);
		if (k <= 0)
			return done ? (long)done : -1;
		done += k;
	}
	return done;
}
#else
#include "rt.h"

#define write_all	write
#endif

#define HDR_MAX		16384		/* request line and headers */
#define CHUNK		65536		/* body bytes per read and write */
#define OUT_MAX		(CHUNK + 256)	/* an answer's head and a chunk */

struct conn {
	char *in;		/* HDR_MAX bytes read and not used yet */
	unsigned long len;
	char *out;		/* OUT_MAX */
	int eof;
};

/* memmove() toward the start (the runtime has none; gcc must not make one). */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void shift(char *dst, const char *src, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		dst[i] = src[i];
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c;
}

/* Does @s (of @n bytes) start with @word, case aside? */
static int starts(const char *s, unsigned long n, const char *word)
{
	unsigned long i;

	for (i = 0; word[i]; i++)
		if (i >= n || lower(s[i]) != lower(word[i]))
			return 0;
	return 1;
}

/* Does @s (of @n bytes) hold @word, case aside? */
static int holds(const char *s, unsigned long n, const char *word)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (starts(s + i, n - i, word))
			return 1;
	return 0;
}

/* The end of the head ("\r\n\r\n" included) in c->in, or 0. */
static unsigned long head_end(const struct conn *c)
{
	unsigned long i;

	for (i = 3; i < c->len; i++)
		if (c->in[i - 3] == '\r' && c->in[i - 2] == '\n' &&
		    c->in[i - 1] == '\r' && c->in[i] == '\n')
			return i + 1;
	return 0;
}

/* Read more into c->in: bytes read, 0 at the end, < 0 on error. */
static long fill(struct conn *c)
{
	long n = read(0, c->in + c->len, HDR_MAX - c->len);

	if (n > 0)
		c->len += n;
	else
		c->eof = 1;
	return n;
}

static unsigned long put(char *p, const char *s)
{
	unsigned long n = strlen(s);

	memcpy(p, s, n);
	return n;
}

static unsigned long put_dec(char *p, unsigned long long v)
{
	char d[24];
	unsigned long n = 0, i;

	do {
		d[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = d[n - 1 - i];
	return n;
}

/* An error answer; the connection closes after it. */
static int fail(struct conn *c, const char *status)
{
	unsigned long n = 0;

	n += put(c->out + n, "HTTP/1.1 ");
	n += put(c->out + n, status);
	n += put(c->out + n,
		 "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	write_all(1, c->out, n);
	return 1;
}

/*
 * Parse the head of @hlen bytes: its body's length in *@body, whether
 * the connection stays open in *@keep and whether the client waits for
 * "100 Continue" before it sends the body in *@cont. 0, or the status
 * of an error answer.
 */
static const char *parse(const char *h, unsigned long hlen,
			 unsigned long long *body, int *keep, int *cont)
{
	unsigned long i = 0, eol, sp = 0;
	int http10, seen;

	/* request line: METHOD SP TARGET SP HTTP/1.x */
	for (eol = 0; eol + 1 < hlen && h[eol] != '\r'; eol++)
		sp += h[eol] == ' ';
	if (sp != 2 || eol < 14 || !starts(h + eol - 8, 8, "HTTP/1."))
		return "400 Bad Request";
	http10 = h[eol - 1] == '0';
	*keep = !http10;
	*body = 0;
	*cont = 0;
	seen = 0;
	for (i = eol + 2; i + 2 < hlen; i = eol + 2) {
		for (eol = i; eol + 1 < hlen && h[eol] != '\r'; eol++)
			;
		if (starts(h + i, eol - i, "content-length:")) {
			unsigned long j = i + 15;
			unsigned long long v = 0;
			int digits = 0;

			while (j < eol && h[j] == ' ')
				j++;
			for (; j < eol && h[j] >= '0' && h[j] <= '9'; j++) {
				if (v > (~0ULL - 9) / 10)
					return "400 Bad Request";
				v = v * 10 + h[j] - '0';
				digits++;
			}
			while (j < eol && (h[j] == ' ' || h[j] == '\t'))
				j++;
			if (!digits || j != eol)
				return "400 Bad Request";
			/* two that differ: which one a proxy took is unknown */
			if (seen && *body != v)
				return "400 Bad Request";
			seen = 1;
			*body = v;
		} else if (starts(h + i, eol - i, "transfer-encoding:")) {
			return "501 Not Implemented";
		} else if (starts(h + i, eol - i, "expect:")) {
			*cont = !http10 && holds(h + i, eol - i, "100-continue");
		} else if (starts(h + i, eol - i, "connection:")) {
			if (holds(h + i, eol - i, "close"))
				*keep = 0;
			else if (holds(h + i, eol - i, "keep-alive"))
				*keep = 1;
		}
	}
	return 0;
}

/* Serve one request: 0 to go on, 1 when the connection is done. */
static int serve(struct conn *c)
{
	unsigned long long body, left;
	unsigned long hlen, n, k;
	const char *err;
	int keep, cont;

	while (!(hlen = head_end(c))) {
		if (c->len == HDR_MAX)
			return fail(c, "431 Request Header Fields Too Large");
		if (fill(c) <= 0)
			return c->len ? fail(c, "400 Bad Request") : 1;
	}
	err = parse(c->in, hlen, &body, &keep, &cont);
	if (err)
		return fail(c, err);

	n = 0;
	/* a client that waits for it before its body (curl's large POSTs) */
	if (cont && body > c->len - hlen)
		n = put(c->out, "HTTP/1.1 100 Continue\r\n\r\n");
	n += put(c->out + n, "HTTP/1.1 200 OK\r\nContent-Length: ");
	n += put_dec(c->out + n, body);
	n += put(c->out + n, keep ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
	/* the head, with what of the body came with the request */
	k = c->len - hlen < body ? c->len - hlen : body;
	memcpy(c->out + n, c->in + hlen, k);
	if (write_all(1, c->out, n + k) != (long)(n + k))
		return -1;
	shift(c->in, c->in + hlen + k, c->len - hlen - k);
	c->len -= hlen + k;
	/* the rest of the body, chunk by chunk */
	for (left = body - k; left; left -= n) {
		n = read(0, c->out, left < CHUNK ? left : CHUNK);
		if ((long)n <= 0)
			return -1;
		if (write_all(1, c->out, n) != (long)n)
			return -1;
	}
	return !keep;
}

static int main_http_echo(void)
{
	struct conn c = { 0 };
	int ret;

	c.in = alloc(HDR_MAX, 16);
	c.out = alloc(OUT_MAX, 16);
	if (!c.in || !c.out)
		return 1;
	/*
	 * Where a template is made (uvm template): a clone resumes here,
	 * buffers allocated; nothing in flight, so never -EBUSY.
	 */
	if (ready_point())
		return 1;
	/* no request before this: a server hands a connection only now */
	if (ready())
		return 1;
	do {
		ret = serve(&c);
	} while (!ret);
	return ret < 0;
}

#ifdef NVX_HOST
int main(void)
{
	return main_http_echo();
}
#else
int nvx_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return main_http_echo();
}
#endif
