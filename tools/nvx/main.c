// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the nvx command line, an operator tool after bpftool:
 *
 *	nvxtool [OPTIONS] OBJECT { COMMAND | help }
 *
 * Inspects and controls nvx through its control device, /dev/nvx. The
 * objects are in nvx_objects[] below, each in its own file; common.c
 * holds the dispatcher, nvxtool.h describes the tables.
 */
#include <stdio.h>

#include "nvxtool.h"

static const struct nvx_cmd nvx_objects[] = {
	{
		.name = "pool",
		.summary = "grow, shrink and show the nvx memory pool",
		.usage = "{ COMMAND | help }\n"
			 "\n"
			 "The pool holds zeroed memory per NUMA node for grants.\n",
		.sub = nvx_pool_cmds,
	},
	{
		.name = "grant",
		.summary = "take a grant from the pool, map it, touch it, time it",
		.usage = "{ COMMAND | help }\n"
			 "\n"
			 "A grant is a file descriptor owning memory of the pool.\n",
		.sub = nvx_grant_cmds,
	},
	{
		.name = "uvm",
		.summary = "light user VMs: run a guest image, serve one",
		.usage = "{ COMMAND | help }\n"
			 "\n"
			 "Tiny KVM guests whose RAM is a grant and whose messages to their\n"
			 "system process are handled in the kernel (the PMIO fast path).\n",
		.sub = nvx_uvm_cmds,
	},
	{
		.name = "uintr",
		.summary = "user interrupts between threads",
		.usage = "{ COMMAND | help }\n"
			 "\n"
			 "User interrupts: a thread registers a handler, other threads send\n"
			 "it vectors, and the handler runs on the thread's next return to\n"
			 "user mode, without a signal frame or sigreturn.\n",
		.sub = nvx_uintr_cmds,
	},
	{
		.name = "srq",
		.summary = "shared multi-packet RX queues on an nvxsim NIC",
		.usage = "{ COMMAND | help }\n"
			 "\n"
			 "Shared RX queues: one pool of buffers, from a grant, feeds every\n"
			 "receive queue of a NIC; frames are packed into strides of the\n"
			 "buffers, read in place and released through a release ring.\n",
		.sub = nvx_srq_cmds,
	},
	{
		.name = "features",
		.summary = "show the nvx capabilities and hardware facts",
		.usage = "[ show | help ]\n"
			 "\n"
			 "Without a command: features show.\n",
		.fn = cmd_features_show,
		.sub = nvx_features_cmds,
	},
	{
		.name = "version",
		.summary = "show the nvx ABI version of the running kernel",
		.usage = "[ show | help ]\n"
			 "\n"
			 "Without a command: version show.\n",
		.fn = cmd_version_show,
		.sub = nvx_version_cmds,
	},
	{ }
};

static const struct nvx_prog nvxtool = {
	.name = "nvxtool",
	.top_word = "object",
	.top_arg = "OBJECT",
	.args = "OBJECT { COMMAND | help }",
	.help_args = "[OBJECT [COMMAND]]",
	.about = "Inspect and control nvx through its control device, /dev/nvx.\n"
		 "Objects and commands may be abbreviated to a unique prefix.\n",
	.list_title = "Objects",
	.opts_after = "OBJECT and COMMAND",
	.json_note = "text; a command without JSON output rejects it",
	.epilog = "Benchmarks are a program of their own: nvx-bench.\n"
		  "\n"
		  "Exit status:\n"
		  "  0  success\n"
		  "  1  runtime failure: an ioctl failed, or the kernel does not know it\n"
		  "  2  usage error: unknown object, command or option, bad argument\n"
		  "  3  no nvx device: the kernel has no CONFIG_NVX, or the nvx module\n"
		  "     is not loaded\n"
		  "  4  permission denied on the nvx device\n",
	.cmds = nvx_objects,
};

int main(int argc, char **argv)
{
	return nvx_main(&nvxtool, argc, argv);
}
