/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvx guest entry and interrupt stubs.
 *
 * The VMM enters the image at its first byte in 64-bit mode with
 * %rdi = GPA of the control page, %rsp = 0x80000 and interrupts off.
 * _start zeroes .bss and calls rt_start(ctrl), which never returns.
 *
 * exc_stubs: 32 stubs of 16 bytes, one per exception vector; each
 * reports 0x100 | vector on the exit port and halts for good.
 * irq_stub: any external interrupt (the completion MSI, the safety
 * tick); it acknowledges the LAPIC, since waking from hlt is all it is
 * for, and returns past sti_hlt's hlt when it interrupted the hlt itself.
 * One that interrupted code running with interrupts off (IF clear in
 * the rflags it saved) came from a faulty CPU (the emulator of the test
 * VM delivers one vector twice, the second time at irq_stub's first
 * instruction): it is counted in irq_if_clear (and irq_twice when at
 * irq_stub itself) and taken like any other.
 * spurious_stub: the LAPIC spurious vector (0xff), no EOI.
 */

#define PORT_EXIT	0x0604		/* NVX_UVM_PORT_EXIT */
#define LAPIC_EOI	0xfee000b0

	.section .text.entry, "ax"
	.globl _start
	.type _start, @function
_start:
	cli
	cld
	andq	$-16, %rsp
	movq	%rdi, %rbx			/* callee-saved: ctrl */
	movl	$__bss_start, %edi
	movl	$__bss_end, %ecx
	subl	%edi, %ecx
	xorl	%eax, %eax
	rep stosb
	movq	%rbx, %rdi
	call	rt_start
1:	cli
	hlt
	jmp	1b
	.size _start, . - _start

	.text
	.balign 16
	.globl exc_stubs
exc_stubs:
	.set vec, 0
	.rept 32
	.balign 16
	movl	$(0x100 + vec), %eax
	jmp	exc_common
	.set vec, vec + 1
	.endr

exc_common:
	movw	$PORT_EXIT, %dx
	outl	%eax, %dx
1:	cli
	hlt
	jmp	1b

/*
 * sti_hlt: enable interrupts and halt until one comes; called with them
 * off, returns with them on. sti holds interrupts off for one more
 * instruction, so one that is due now wakes the hlt rather than coming
 * before it. The emulated CPU of the test VM (nested SVM in QEMU TCG)
 * was traced delivering one inside that shadow, at sti_hlt_insn: the
 * return to the hlt then halted the guest with its wake-up spent (no
 * completion left to come, the safety tick not re-armed) for good.
 * irq_stub therefore returns past the hlt from there.
 */
	.globl sti_hlt
	.type sti_hlt, @function
sti_hlt:
	sti
sti_hlt_insn:
	hlt
	ret
	.size sti_hlt, . - sti_hlt

	.balign 16
	.globl irq_stub
irq_stub:
	pushq	%rax
	testl	$0x200, 24(%rsp)	/* the interrupted rflags' IF */
	jnz	2f
	/*
	 * Taken with interrupts off: counted (irq_if_clear), and those at
	 * irq_stub's own first instruction (one delivery made twice, the
	 * second before the handler ran at all) in irq_twice too; then
	 * taken like any other: each delivery has a frame of its own, and
	 * an EOI with nothing in service does nothing.
	 */
	lock incl irq_if_clear(%rip)
	leaq	irq_stub(%rip), %rax
	cmpq	%rax, 8(%rsp)
	jne	1f
	lock incl irq_twice(%rip)
	jmp	1f
2:	leaq	sti_hlt_insn(%rip), %rax
	cmpq	%rax, 8(%rsp)		/* the interrupted rip */
	jne	1f
	incq	8(%rsp)			/* past the hlt (one byte) */
1:	movabsq	$LAPIC_EOI, %rax
	movl	$0, (%rax)
	popq	%rax
	iretq

	.balign 16
	.globl spurious_stub
spurious_stub:
	iretq

	.section .note.GNU-stack, "", @progbits
