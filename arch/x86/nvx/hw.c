// SPDX-License-Identifier: GPL-2.0
/*
 * nvx: what the x86 hardware offers.
 *
 * Reads CPUID directly rather than through boot_cpu_has() so that facts
 * the kernel has no feature bit for (UINTR in 6.12) are reported too.
 * Nothing here turns a hardware feature on.
 */
#include <linux/export.h>
#include <linux/nvx.h>
#include <asm/processor.h>
#include <asm/cpufeature.h>
#include <uapi/nvx/nvx.h>

/* CPUID.(EAX=7,ECX=0):EDX bit 5, "User Interrupts" (UINTR). */
#define NVX_CPUID7_EDX_UINTR	BIT(5)

/**
 * nvx_arch_hw_features() - hardware facts for NVX_IOC_FEATURES
 *
 * Return: a mask of NVX_HW_* bits describing the boot CPU.
 */
u64 nvx_arch_hw_features(void)
{
	u32 eax, ebx, ecx, edx;
	u64 hw = 0;

	if (boot_cpu_data.cpuid_level >= 7) {
		cpuid_count(7, 0, &eax, &ebx, &ecx, &edx);
		if (edx & NVX_CPUID7_EDX_UINTR)
			hw |= NVX_HW_UINTR;
	}
	if (boot_cpu_has(X86_FEATURE_VMX))
		hw |= NVX_HW_VMX;
	if (boot_cpu_has(X86_FEATURE_SVM))
		hw |= NVX_HW_SVM;
	if (boot_cpu_has(X86_FEATURE_HYPERVISOR))
		hw |= NVX_HW_HYPERVISOR;
	return hw;
}
EXPORT_SYMBOL_GPL(nvx_arch_hw_features);
