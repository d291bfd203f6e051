// SPDX-License-Identifier: GPL-2.0
/*
 * fetch: an HTTP/1.1 GET from a user VM, through the system process's
 * sockets. "fetch HOST_IPV4 PORT [PATH]" connects to HOST_IPV4:PORT
 * (the tenant's egress policy decides whether it may), sends
 *
 *   GET PATH HTTP/1.1\r\nHost: HOST[:PORT]\r\nConnection: close\r\n\r\n
 *
 * (PATH "/" by default, PORT left out of Host when it is 80) and writes
 * the whole answer, head and body as they came, to fd 1 until the
 * server closes. Exit 0; or "err E" (E the positive errno) on stderr and
 * exit 1 when a call fails (ENETUNREACH 101: the egress policy refused
 * the address; ECONNREFUSED 111: nothing listens there); exit 2 for
 * bad arguments.
 */
#include "rt.h"

#define CHUNK		(64 << 10)
#define REQ_MAX		(NVX_UVM_ARGS_SIZE + 128)

static char req[REQ_MAX];
static unsigned int req_n;

static void put(const char *s)
{
	while (*s && req_n < sizeof(req))
		req[req_n++] = *s++;
}

static int fail(long e)
{
	char buf[24];
	unsigned int n = 0;

	buf[n++] = 'e';
	buf[n++] = 'r';
	buf[n++] = 'r';
	buf[n++] = ' ';
	n += fmt_u64(buf + n, -e, 10);
	buf[n++] = '\n';
	write(2, buf, n);
	return 1;
}

int nvx_main(int argc, char **argv)
{
	const char *path = argc > 3 ? argv[3] : "/";
	struct nvx_uvm_sockaddr sa;
	unsigned long port;
	char *end, num[8];
	char *buf;
	long n;
	int fd, ret;

	if (argc < 3) {
		print("usage: fetch HOST_IPV4 PORT [PATH]\n");
		return 2;
	}
	port = strtoul(argv[2], &end, 10);
	if (*end || end == argv[2] || port > 65535 ||
	    sockaddr4(&sa, argv[1], port) < 0) {
		print("fetch: bad address or port\n");
		return 2;
	}
	buf = alloc(CHUNK, 4096);
	if (!buf)
		return 2;

	put("GET ");
	put(path);
	put(" HTTP/1.1\r\nHost: ");
	put(argv[1]);
	if (port != 80) {
		num[fmt_u64(num, port, 10)] = 0;
		put(":");
		put(num);
	}
	put("\r\nConnection: close\r\n\r\n");

	fd = socket(AF_INET, SOCK_STREAM);
	if (fd < 0)
		return fail(fd);
	ret = connect(fd, &sa);
	if (ret < 0)
		return fail(ret);
	n = send(fd, req, req_n, 0);
	if (n < 0)
		return fail(n);
	if ((unsigned long)n != req_n)
		return fail(-EIO);
	while ((n = recv(fd, buf, CHUNK, 0)) > 0)
		if (write(1, buf, n) != n)
			return fail(-EIO);
	if (n < 0)
		return fail(n);
	ret = close(fd);
	return ret < 0 ? fail(ret) : 0;
}
