// SPDX-License-Identifier: GPL-2.0
/*
 * cat: "cat PATH..." copies each file beneath the tenant root to fd 1
 * (no argument: fd 0). A file that cannot be opened or read gets
 * "cat: PATH: ENAME" on fd 2 and the others still go; the exit status
 * is then 1.
 */
#include "rt.h"

#define CHUNK	(64 << 10)

static const char *const names[] = {
	[EPERM] = "EPERM",
	[ENOENT] = "ENOENT",
	[EIO] = "EIO",
	[EBADF] = "EBADF",
	[EAGAIN] = "EAGAIN",
	[EACCES] = "EACCES",
	[EBUSY] = "EBUSY",
	[ENOTDIR] = "ENOTDIR",
	[EISDIR] = "EISDIR",
	[EINVAL] = "EINVAL",
	[ENAMETOOLONG] = "ENAMETOOLONG",
	[ELOOP] = "ELOOP",
	[EMSGSIZE] = "EMSGSIZE",
};

/* "cat: PATH: ENAME" (or the number) on fd 2 */
static void complain(const char *path, long err)
{
	char num[20];
	const char *name = NULL;

	if (err < (long)ARRAY_SIZE(names))
		name = names[err];
	if (!name) {
		num[fmt_u64(num, err, 10)] = 0;
		name = num;
	}
	write(2, "cat: ", 5);
	write(2, path, strlen(path));
	write(2, ": ", 2);
	write(2, name, strlen(name));
	write(2, "\n", 1);
}

/* @fd to fd 1: 0, or a negative errno */
static long copy(int fd, char *buf)
{
	long n;

	while ((n = read(fd, buf, CHUNK)) > 0)
		if (write(1, buf, n) != n)
			return -EIO;
	return n;
}

int nvx_main(int argc, char **argv)
{
	char *buf = alloc(CHUNK, 4096);
	int i, fd, ret = 0;
	long err;

	if (!buf)
		return 1;
	if (argc < 2)
		return copy(0, buf) < 0;
	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_RDONLY, 0);
		err = fd < 0 ? fd : copy(fd, buf);
		if (fd >= 0)
			close(fd);
		if (err < 0) {
			complain(argv[i], -err);
			ret = 1;
		}
	}
	return ret;
}
