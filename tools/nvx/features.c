// SPDX-License-Identifier: GPL-2.0
/*
 * nvxtool: the objects "version" and "features" (include/uapi/nvx/nvx.h).
 */
#include <string.h>

#include <nvx/nvx.h>

#include "nvxtool.h"

/* -------------------------------------------------------------- version */

/**
 * cmd_version_show() - nvxtool version [show]
 * @ctx: the command.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_version_show(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_version v;
	char kver[32];
	int ret;

	ret = nvx_no_args_ioctl(ctx, argc, argv, NVX_IOC_VERSION, &v,
				sizeof(v), "NVX_IOC_VERSION");
	if (ret)
		return ret;

	/* LINUX_VERSION_CODE; the kernel clamps the patch level at 255. */
	snprintf(kver, sizeof(kver), "%u.%u.%u", v.kernel_version >> 16,
		 (v.kernel_version >> 8) & 0xff, v.kernel_version & 0xff);

	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		nvx_json_u64(&ctx->js, "abi_major", v.abi_major);
		nvx_json_u64(&ctx->js, "abi_minor", v.abi_minor);
		nvx_json_str(&ctx->js, "kernel_version", kver);
		nvx_json_u64(&ctx->js, "tool_abi_major", NVX_ABI_MAJOR);
		nvx_json_u64(&ctx->js, "tool_abi_minor", NVX_ABI_MINOR);
		nvx_json_end(&ctx->js);
	} else {
		printf("nvx ABI %u.%u (kernel %s)\n", v.abi_major, v.abi_minor,
		       kver);
		printf("nvxtool built for ABI %u.%u\n", NVX_ABI_MAJOR,
		       NVX_ABI_MINOR);
	}

	if (v.abi_major != NVX_ABI_MAJOR)
		nvx_warn("the running kernel has nvx ABI %u.%u, but nvxtool was built for ABI %u.%u: other commands may fail; rebuild nvxtool against this kernel's headers",
			 v.abi_major, v.abi_minor, NVX_ABI_MAJOR,
			 NVX_ABI_MINOR);
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------------- features */

struct nvx_bit_name {
	uint64_t bit;
	const char *name;
	const char *desc;
};

static const struct nvx_bit_name nvx_feature_names[] = {
	{ NVX_FEAT_CORE,	"core",		"/dev/nvx and the core ioctls" },
	{ NVX_FEAT_POOL,	"pool",		"memory pool and grants" },
	{ NVX_FEAT_UVM,		"uvm",		"user VMs, PMIO fast path" },
	{ NVX_FEAT_UINTR,	"uintr",	"user-interrupt delivery" },
	{ NVX_FEAT_SRQ,		"srq",		"shared multi-packet RX queues" },
};

static const struct nvx_bit_name nvx_hw_names[] = {
	{ NVX_HW_UINTR,		"uintr",
	  "CPU user interrupts (CPUID.7.0:EDX[5])" },
	{ NVX_HW_VMX,		"vmx",		"Intel VT-x" },
	{ NVX_HW_SVM,		"svm",		"AMD-V" },
	{ NVX_HW_HYPERVISOR,	"hypervisor",	"running as a guest" },
};

/* Text: one line per known bit, then one per set bit nvxtool does not know. */
static void nvx_print_bits(uint64_t mask, const struct nvx_bit_name *names,
			   size_t n)
{
	uint64_t known = 0;
	char unknown[16];
	unsigned int bit;
	size_t i;

	for (i = 0; i < n; i++) {
		printf("  %-12s %-4s %s\n", names[i].name,
		       mask & names[i].bit ? "yes" : "no", names[i].desc);
		known |= names[i].bit;
	}
	for (bit = 0; bit < 64; bit++) {
		if (!(mask & ~known & (1ULL << bit)))
			continue;
		snprintf(unknown, sizeof(unknown), "bit %u", bit);
		printf("  %-12s %-4s %s\n", unknown, "yes",
		       "not known to this nvxtool");
	}
}

static void nvx_json_bits(struct nvx_json *j, const char *key, uint64_t mask,
			  const struct nvx_bit_name *names, size_t n)
{
	size_t i;

	nvx_json_object_begin(j, key);
	for (i = 0; i < n; i++)
		nvx_json_bool(j, names[i].name, mask & names[i].bit);
	nvx_json_end(j);
}

/**
 * cmd_features_show() - nvxtool features [show]
 * @ctx: the command.
 * @argc: its arguments.
 * @argv: its arguments.
 *
 * Return: the exit status.
 */
int cmd_features_show(struct nvx_ctx *ctx, int argc, char **argv)
{
	struct nvx_features f;
	int ret;

	ret = nvx_no_args_ioctl(ctx, argc, argv, NVX_IOC_FEATURES, &f,
				sizeof(f), "NVX_IOC_FEATURES");
	if (ret)
		return ret;

	if (ctx->json) {
		nvx_json_object_begin(&ctx->js, NULL);
		nvx_json_hex(&ctx->js, "features", f.features);
		nvx_json_hex(&ctx->js, "hw", f.hw);
		nvx_json_bits(&ctx->js, "feature", f.features,
			      nvx_feature_names,
			      NVX_ARRAY_SIZE(nvx_feature_names));
		nvx_json_bits(&ctx->js, "hw_facts", f.hw, nvx_hw_names,
			      NVX_ARRAY_SIZE(nvx_hw_names));
		nvx_json_end(&ctx->js);
		return NVX_EXIT_OK;
	}

	printf("features: 0x%llx\n", (unsigned long long)f.features);
	nvx_print_bits(f.features, nvx_feature_names,
		       NVX_ARRAY_SIZE(nvx_feature_names));
	printf("hw: 0x%llx (what the machine offers, not what nvx uses)\n",
	       (unsigned long long)f.hw);
	nvx_print_bits(f.hw, nvx_hw_names, NVX_ARRAY_SIZE(nvx_hw_names));
	return NVX_EXIT_OK;
}

/* ------------------------------------------------------- command tables */

#define NVX_VERSION_USAGE \
	"\n" \
	"Show the nvx ABI version and the version of the running kernel\n" \
	"(NVX_IOC_VERSION), and the ABI version nvxtool was built for.\n" \
	"Warns when the major versions differ. JSON: \"abi_major\",\n" \
	"\"abi_minor\", \"kernel_version\", \"tool_abi_major\",\n" \
	"\"tool_abi_minor\".\n"

const struct nvx_cmd nvx_version_cmds[] = {
	{
		.name = "show",
		.summary = "show the nvx ABI version (the default)",
		.usage = NVX_VERSION_USAGE,
		.fn = cmd_version_show,
	},
	{ }
};

#define NVX_FEATURES_USAGE \
	"\n" \
	"Show which nvx capabilities the running kernel provides and\n" \
	"what the hardware offers (NVX_IOC_FEATURES). JSON output keeps\n" \
	"the raw masks as hex strings (\"features\", \"hw\") beside one\n" \
	"boolean per known bit (\"feature\", \"hw_facts\").\n"

const struct nvx_cmd nvx_features_cmds[] = {
	{
		.name = "show",
		.summary = "show the capabilities and hardware facts (the default)",
		.usage = NVX_FEATURES_USAGE,
		.fn = cmd_features_show,
	},
	{ }
};
