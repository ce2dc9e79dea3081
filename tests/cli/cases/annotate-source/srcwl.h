/* inlined into the hot loops of srcwl.c: its lines show under their own function name */
static inline unsigned long mix(unsigned long x)
{
	x ^= x << 13;
	x ^= x >> 7;
	return x ^ (x << 17);
}
