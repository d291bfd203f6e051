// SPDX-License-Identifier: GPL-2.0
/*
 * echo: copy fd 0 to fd 1 in 4 KiB chunks until end of file; exit 0,
 * or 1 when a read or write fails.
 */
#include "rt.h"

#define CHUNK	4096

int nvx_main(int argc, char **argv)
{
	char *buf = alloc(CHUNK, CHUNK);
	long n;

	(void)argc;
	(void)argv;
	if (!buf)
		return 1;
	while ((n = read(0, buf, CHUNK)) > 0)
		if (write(1, buf, n) != n)
			return 1;
	return n < 0;
}
