/* SPDX-License-Identifier: MIT */
/* tests/unit/test_oahash.c - lib/core/oahash.h: the rehash of an in-place table and the
 * rebuild of an index table keep every entry findable, through several doublings and with
 * keys that collide in their home slot. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "testutil.h"
#include "../../lib/core/oahash.h"

struct ent {
	uint32_t key; /* 0: empty */
	uint32_t val;
};

static bool ent_empty(const struct ent *e)
{
	return e->key == 0;
}

/* keys k and k + 1000 share a home slot in every table up to 1024 slots */
static size_t ent_slot(const struct ent *e, size_t cap)
{
	return (size_t)(e->key % 1000) & (cap - 1);
}

PK_DEFINE_OA_REHASH(ents_rehash, struct ent, ent_empty, ent_slot)
PK_DEFINE_OA_INDEX(ents_index, struct ent, ent_slot)

static struct ent *find(struct ent *t, size_t cap, uint32_t key)
{
	for (size_t j = (size_t)(key % 1000) & (cap - 1); !ent_empty(&t[j]);
	     j = (j + 1) & (cap - 1))
		if (t[j].key == key)
			return &t[j];
	return NULL;
}

static void test_rehash_keeps_entries(void **state)
{
	(void)state;
	size_t cap = 4, n = 0;
	struct ent *t = calloc(cap, sizeof(*t));
	assert_non_null(t);
	for (uint32_t k = 1; k <= 300; k++) {
		uint32_t key = k % 2 ? k : k + 1000;
		if ((n + 1) * 2 > cap) {
			struct ent *nt = ents_rehash(t, cap, cap * 2);
			assert_non_null(nt);
			free(t);
			t = nt;
			cap *= 2;
		}
		size_t j = ent_slot(&(struct ent){ .key = key }, cap);
		while (!ent_empty(&t[j]))
			j = (j + 1) & (cap - 1);
		t[j] = (struct ent){ key, k * 7 };
		n++;
	}
	assert_int_equal(cap, 1024);
	size_t used = 0;
	for (size_t i = 0; i < cap; i++)
		used += !ent_empty(&t[i]);
	assert_int_equal(used, 300);
	for (uint32_t k = 1; k <= 300; k++) {
		struct ent *e = find(t, cap, k % 2 ? k : k + 1000);
		assert_non_null(e);
		assert_int_equal(e->val, k * 7);
	}
	assert_null(find(t, cap, 2)); /* stored as 1002 */
	free(t);
}

static void test_index_finds_every_entry(void **state)
{
	(void)state;
	struct ent v[200];
	for (uint32_t i = 0; i < 200; i++)
		v[i] = (struct ent){ i % 2 ? i + 1 : i + 1001, i };
	uint32_t *tab = ents_index(v, 200, 512);
	assert_non_null(tab);
	size_t used = 0;
	for (size_t j = 0; j < 512; j++)
		used += tab[j] != 0;
	assert_int_equal(used, 200);
	for (uint32_t i = 0; i < 200; i++) {
		size_t j = ent_slot(&v[i], 512);
		while (tab[j] && v[tab[j] - 1].key != v[i].key)
			j = (j + 1) & 511;
		assert_int_equal(tab[j], i + 1);
	}
	free(tab);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rehash_keeps_entries),
		cmocka_unit_test(test_index_finds_every_entry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
