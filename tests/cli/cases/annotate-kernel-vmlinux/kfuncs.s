# two kernel functions of a synthetic vmlinux (annotate-kernel-* cases): f1 a loop, f2 calls it
	.text
	.globl _text
_text:
	.globl f1
	.type f1,@function
f1:
	push %rbp
	mov %rsp,%rbp
	xor %eax,%eax
1:	add $1,%eax
	cmp $100,%eax
	jne 1b
	pop %rbp
	ret
	.size f1,.-f1
	.p2align 4
	.globl f2
	.type f2,@function
f2:
	imul %rdi,%rsi
	lea (%rsi,%rdi,2),%rax
	call f1
	ret
	.size f2,.-f2
