/* SPDX-License-Identifier: MIT */
/*
 * perf's max-stack rule on a resolved call chain (perf report --max-stack, perf script
 * --max-stack, 127 frames by default: PERF_MAX_STACK_DEPTH).
 *
 * perf applies the limit twice, not to the whole chain: once to the chain the kernel
 * recorded (its frames counted, the context markers not), and once more to the frames its
 * DWARF unwinder adds from the user stack copy. A --call-graph dwarf sample taken in the
 * kernel thus keeps its kernel frames and up to max-stack user frames; a frame-pointer
 * chain keeps its first max-stack frames, kernel and user together. (The kernel already
 * cuts what it records at kernel.perf_event_max_stack, also 127 by default, so the limit
 * mostly shows on unwound chains, where perfkit's unwinder goes as deep as the stack copy
 * reaches.) Inlined-function frames are added at print time and never count.
 */
#include <limits.h>

#include "internal.h"
#include <perfkit/symbol.h>

PK_API int pk_callchain__cut(struct pk_chain_entry *chain, size_t n, unsigned int max_stack)
{
	if (!chain && n)
		return pk_err(-EINVAL);
	if (n > INT_MAX)
		return pk_err(-ERANGE);
	if (n <= max_stack) /* neither kind can reach the limit: the common case, no pass */
		return (int)n;
	size_t out = 0, recorded = 0, unwound = 0;
	for (size_t i = 0; i < n; i++) {
		size_t *count = (chain[i].flags & PK_CHAIN_UNWOUND) ? &unwound : &recorded;
		if (*count >= max_stack)
			continue;
		(*count)++;
		if (out != i)
			chain[out] = chain[i];
		out++;
	}
	return (int)out;
}
