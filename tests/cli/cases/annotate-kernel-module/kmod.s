# A kernel module's code for the annotate-kernel-module cases: a relocatable object with
# a GNU build-id note and a .text of two functions; mwork calls helper (resolved by the
# assembler: a local symbol) and printk (a relocation, left unapplied as objdump shows it).
	.section .note.gnu.build-id,"a",@note
	.balign 4
	.long 4, 20, 3
	.asciz "GNU"
	.byte 0x11,0x22,0x33,0x44,0x55,0x66,0x77,0x88,0x99,0xaa
	.byte 0xbb,0xcc,0xdd,0xee,0xff,0x00,0x12,0x34,0x56,0x78
	.text
	.type helper, @function
helper:
	imulq %rdi, %rsi
	leaq (%rsi,%rdi,2), %rax
	ret
	.size helper, .-helper
	.globl mwork
	.type mwork, @function
mwork:
	pushq %rbp
	xorl %eax, %eax
1:	addl $1, %eax
	cmpl $100, %eax
	jne 1b
	call helper
	call printk
	popq %rbp
	ret
	.size mwork, .-mwork
