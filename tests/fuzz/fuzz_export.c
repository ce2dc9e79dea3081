/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the profile builder and every writer: the input becomes samples
 * whose names, DSOs, files, comms and stack shapes are arbitrary bytes (names in real
 * recordings come from files we did not write), then every exporter runs on the profile.
 *
 * Input: byte 0 = options (bit0 timeline off, bit1 root_comm, bit2 addresses, bits3-4
 * number of events - 1); then records: [event:1][depth:1][period:1][tid:1] then depth
 * frames of [kind:1][addr:1][len:1][len bytes of name; '|' splits name|dso|file].
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perfkit/perfkit.h>

static void quiet(enum pk_log_level l, const char *m, void *c)
{
	(void)l;
	(void)m;
	(void)c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	pk_set_log(quiet, NULL, PK_LOG_ERROR);
	uint8_t o = data[0];
	PK_OPTS(pk_profile_opts, po, .timeline = !(o & 1), .root_comm = (o >> 1) & 1,
		.addresses = (o >> 2) & 1, .max_depth = 64);
	struct pk_profile *p = pk_profile__new(&po);
	if (!p)
		return 0;
	unsigned nev = ((o >> 3) & 3) + 1;
	for (unsigned e = 0; e < nev; e++)
		pk_profile__add_event(p, e ? "ev\"<b>" : "cpu-clock", e & 1 ? NULL : "nanoseconds");
	size_t at = 1;
	char strs[64][3][64];
	struct pk_export_frame fr[64];
	uint64_t t = 0;
	while (at + 4 <= size) {
		struct pk_export_sample s = { .event = data[at] % (nev + 1), .period = data[at + 2],
					      .tid = data[at + 3], .pid = data[at + 3] / 4,
					      .comm = data[at + 3] & 1 ? "a b" : NULL };
		unsigned depth = data[at + 1] % 64;
		at += 4;
		unsigned n = 0;
		for (; n < depth && at + 3 <= size; n++) {
			uint8_t kind = data[at], addr = data[at + 1], len = data[at + 2];
			at += 3;
			if (len > size - at)
				len = (uint8_t)(size - at);
			char tmp[256];
			memcpy(tmp, data + at, len);
			tmp[len] = '\0';
			at += len;
			char *parts[3] = { tmp, NULL, NULL };
			for (int k = 1; k < 3 && parts[k - 1]; k++) {
				char *bar = strchr(parts[k - 1], '|');
				if (bar) {
					*bar = '\0';
					parts[k] = bar + 1;
				}
			}
			for (int k = 0; k < 3; k++)
				snprintf(strs[n][k], sizeof(strs[n][k]), "%s", parts[k] ? parts[k] : "");
			fr[n] = (struct pk_export_frame){
				.name = parts[0] && *parts[0] ? strs[n][0] : NULL,
				.dso = parts[1] ? strs[n][1] : NULL,
				.file = parts[2] ? strs[n][2] : NULL,
				.addr = addr * 0x10ULL, .line = addr, .kind = kind % 6,
				.inlined = kind & 0x80,
			};
		}
		s.frames = fr;
		s.nr_frames = n;
		s.time = (t += data[at - 1] * 1000ULL) ^ (s.tid & 3 ? 0 : 500);
		pk_profile__add_sample(p, &s);
	}
	FILE *f = fopen("/dev/null", "w");
	if (f) {
		PK_OPTS(pk_folded_opts, fo, .event = (int)(o >> 5) % 3 - 1, .annotate_kind = o & 1);
		pk_export__folded(p, f, &fo);
		pk_export__pprof(p, f, NULL);
		pk_export__speedscope(p, f, NULL);
		pk_export__gecko(p, f, NULL);
		pk_export__json(p, f, NULL);
		PK_OPTS(pk_flamegraph_opts, fg, .min_percent = (o & 0x80) ? 5 : 0, .max_nodes = 50);
		pk_export__flamegraph(p, f, &fg);
		pk_export__flamegraph_diff(p, p, f, NULL);
		struct pk_diff_entry *d = NULL;
		if (pk_profile__diff(p, p, NULL, PK_WEIGHT_SAMPLES, &d) >= 0)
			free(d);
		fclose(f);
	}
	pk_profile__free(p);
	return 0;
}
