// SPDX-License-Identifier: GPL-2.0
/*
 * hello-host: the host program `bench uvm` compares a user VM's cold
 * start with: static, it prints the line the guest app hello prints.
 */
#include <unistd.h>

int main(void)
{
	static const char msg[] = "hello from an nvx user VM\n";

	return write(1, msg, sizeof(msg) - 1) == sizeof(msg) - 1 ? 0 : 1;
}
