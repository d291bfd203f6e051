// SPDX-License-Identifier: GPL-2.0
/*
 * hello: the smallest nvx guest app; one line on fd 1, exit 0.
 */
#include "rt.h"

int nvx_main(int argc, char **argv)
{
	static const char msg[] = "hello from an nvx user VM\n";

	(void)argc;
	(void)argv;
	return write(1, msg, sizeof(msg) - 1) == sizeof(msg) - 1 ? 0 : 1;
}
