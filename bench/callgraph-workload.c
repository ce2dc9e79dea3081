/*
 * bench/callgraph-workload [MS]: a CPU-bound program with deep, varied call stacks, built
 * with frame pointers (see CMakeLists.txt), for the frame-pointer call-graph benchmarks.
 *
 * Four kinds of work rotate on two threads: a recursive expression-tree evaluator (stacks
 * 10-20 deep), a recursive merge sort, hash-table inserts and look-ups, and string
 * building through libc (memcpy/strlen, frames without frame pointers). Together they give
 * a few thousand distinct call paths, the shape of a real application's profile, where
 * demo-workload has two leaf loops.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINL __attribute__((noinline))

static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- expression trees ---- */
struct expr {
	int op; /* 0 leaf, 1 add, 2 mul, 3 neg */
	uint64_t v;
	struct expr *l, *r;
};

NOINL static struct expr *build(struct expr *pool, size_t *n, int depth, uint64_t *s)
{
	struct expr *e = &pool[(*n)++];
	if (depth == 0 || rnd(s) % 7 == 0) {
		e->op = 0;
		e->v = rnd(s) & 0xff;
		return e;
	}
	e->op = 1 + (int)(rnd(s) % 3);
	e->l = build(pool, n, depth - 1, s);
	e->r = e->op == 3 ? NULL : build(pool, n, depth - 1, s);
	return e;
}

NOINL static uint64_t eval(const struct expr *e);

NOINL static uint64_t eval_add(const struct expr *e)
{
	return eval(e->l) + eval(e->r);
}

NOINL static uint64_t eval_mul(const struct expr *e)
{
	uint64_t a = eval(e->l), b = eval(e->r);
	for (int i = 0; i < 8; i++)
		a = a * 31 + b;
	return a;
}

NOINL static uint64_t eval_neg(const struct expr *e)
{
	return ~eval(e->l);
}

NOINL static uint64_t eval(const struct expr *e)
{
	switch (e->op) {
	case 1:
		return eval_add(e);
	case 2:
		return eval_mul(e);
	case 3:
		return eval_neg(e);
	default:
		return e->v;
	}
}

NOINL static void work_expr(uint64_t *s)
{
	static __thread struct expr pool[1 << 15];
	size_t n = 0;
	struct expr *root = build(pool, &n, 14, s);
	for (int i = 0; i < 4; i++)
		sink += eval(root);
}

/* ---- merge sort ---- */
NOINL static void merge(uint32_t *a, uint32_t *tmp, size_t mid, size_t n)
{
	size_t i = 0, j = mid, k = 0;
	while (i < mid && j < n)
		tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

NOINL static void msort(uint32_t *a, uint32_t *tmp, size_t n)
{
	if (n < 16) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && a[j - 1] > a[j]; j--) {
				uint32_t t = a[j];
				a[j] = a[j - 1];
				a[j - 1] = t;
			}
		return;
	}
	msort(a, tmp, n / 2);
	msort(a + n / 2, tmp, n - n / 2);
	merge(a, tmp, n / 2, n);
}

NOINL static void work_sort(uint64_t *s)
{
	static __thread uint32_t a[1 << 14], tmp[1 << 14];
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		a[i] = (uint32_t)rnd(s);
	msort(a, tmp, sizeof(a) / sizeof(a[0]));
	sink += a[0];
}

/* ---- hash table ---- */
#define HBITS 14
NOINL static size_t probe(const uint64_t *t, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ULL) >> (64 - HBITS));
	while (t[i] && t[i] != k)
		i = (i + 1) & ((1u << HBITS) - 1);
	return i;
}

NOINL static void insert(uint64_t *t, uint64_t k)
{
	t[probe(t, k)] = k;
}

NOINL static int lookup(const uint64_t *t, uint64_t k)
{
	return t[probe(t, k)] == k;
}

NOINL static void work_hash(uint64_t *s)
{
	static __thread uint64_t t[1 << HBITS];
	memset(t, 0, sizeof(t));
	for (int i = 0; i < (1 << HBITS) / 2; i++)
		insert(t, rnd(s) | 1);
	int hits = 0;
	for (int i = 0; i < (1 << HBITS); i++)
		hits += lookup(t, rnd(s) | 1);
	sink += (uint64_t)hits;
}

/* ---- strings through libc ---- */
NOINL static size_t append(char *buf, size_t len, size_t cap, const char *w)
{
	size_t n = strlen(w);
	if (len + n + 1 >= cap)
		len = 0;
	memcpy(buf + len, w, n + 1);
	return len + n;
}

NOINL static void work_string(uint64_t *s)
{
	static const char *const words[] = { "perf", "event", "sample", "callchain",
					     "symbol", "report", "overhead", "period" };
	static __thread char buf[1 << 16];
	size_t len = 0;
	for (int i = 0; i < 20000; i++)
		len = append(buf, len, sizeof(buf), words[rnd(s) % 8]);
	sink += len;
}

/* ---- drivers ---- */
NOINL static void step(int kind, uint64_t *s)
{
	switch (kind) {
	case 0:
		work_expr(s);
		break;
	case 1:
		work_sort(s);
		break;
	case 2:
		work_hash(s);
		break;
	default:
		work_string(s);
		break;
	}
}

NOINL static void run(double until, uint64_t seed)
{
	uint64_t s = seed;
	for (int k = 0; now_ms() < until; k++)
		step(k & 3, &s);
}

static void *thread_main(void *arg)
{
	run(*(double *)arg, 0x2545f4914f6cdd1dULL);
	return NULL;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	double until = now_ms() + ms;
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, &until)) {
		fprintf(stderr, "callgraph-workload: pthread_create failed\n");
		return 1;
	}
	run(until, 0x9e3779b97f4a7c15ULL);
	pthread_join(t, NULL);
	return 0;
}
