# SPDX-License-Identifier: MIT
# Writes an assembly file (argv[1]) for a fake kernel image: .text from this kernel's
# _text to _etext, a function label "vm_<name>" at the address of each text symbol of
# /proc/kallsyms (first name per address and per name; names with '.' left out).
# Prints _text's address, for ld -Ttext.
import sys
text = etext = None
syms = {}
seen = set()
for line in open('/proc/kallsyms'):
    f = line.split()
    if len(f) != 3: continue
    a = int(f[0], 16)
    if f[2] == '_text': text = a
    elif f[2] == '_etext': etext = a
    elif f[1] in 'Tt' and not f[2].startswith('_stext') and '.' not in f[2]:
        if f[2] not in seen: seen.add(f[2]); syms.setdefault(a, f[2])
out = ['.section .text,"ax",@progbits', '.globl _text', '_text:']
for a in sorted(syms):
    if a < text or a >= etext: continue
    n = 'vm_' + syms[a]
    out += ['.org %d' % (a - text), '.globl %s' % n, '.type %s,@function' % n, '%s:' % n]
out += ['.org %d' % (etext - text), '.globl _etext', '_etext:']
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
print(hex(text))
