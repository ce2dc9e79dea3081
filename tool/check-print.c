/* SPDX-License-Identifier: MIT */
/*
 * tool/check-print.c - `perfkit check`'s findings as text (wrapped at 100 columns) or as
 * one JSON object.
 */
#include "check.h"

static const struct {
	int bit;
	const char *name;
} cap_list[] = {
	{ CAP_PERFMON, "CAP_PERFMON" },
	{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
	{ CAP_IPC_LOCK, "CAP_IPC_LOCK" },
};


static bool has_cap(const struct facts *fx, int bit)
{
	return fx->caps_known && (fx->caps >> bit) & 1;
}

/* Print `text` word-wrapped at 100 columns; first line after `first`, the rest indented. */
static void print_wrapped(const char *first, int indent, const char *text)
{
	const int width = 100;
	int col = printf("%*s%s", indent, "", first);
	const char *p = text;

	while (*p) {
		while (*p == ' ')
			p++;
		const char *w = p;
		while (*p && *p != ' ')
			p++;
		int wl = (int)(p - w);
		if (wl == 0)
			break;
		if (col + 1 + wl > width && col > indent + (int)strlen(first)) {
			col = printf("\n%*s", indent + (int)strlen(first), "") - 1;
		} else if (w != text) {
			putchar(' ');
			col++;
		}
		col += printf("%.*s", wl, w);
	}
	putchar('\n');
}

static void print_limit(const char *name, int v, const char *unit)
{
	if (v == INT_MIN)
		printf("  %-36s unknown\n", name);
	else
		printf("  %-36s %d%s\n", name, v, unit);
}

static void rlim_str(char *buf, size_t len, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

void check_print_text(const struct facts *fx)
{
	char s[32], h[32];

	printf("kernel                 %s\n", fx->kernel);
	if (fx->lim.paranoid == INT_MIN)
		printf("perf_event_paranoid    unknown (perf events may be absent)\n");
	else {
		char first[64];
		snprintf(first, sizeof(first), "perf_event_paranoid    %d: ", fx->lim.paranoid);
		print_wrapped(first, 0, pk_paranoid__describe(fx->lim.paranoid));
	}
	printf("user                   uid %d, euid %d%s\n", (int)fx->uid, (int)fx->euid,
	       fx->euid == 0 ? " (root)" : "");
	printf("capabilities          ");
	if (!fx->caps_known) {
		printf(" unknown\n");
	} else {
		for (size_t i = 0; i < sizeof(cap_list) / sizeof(cap_list[0]); i++)
			printf(" %s=%s", cap_list[i].name, has_cap(fx, cap_list[i].bit) ? "yes" : "no");
		putchar('\n');
	}
	if (has_cap(fx, CAP_PERFMON) || has_cap(fx, CAP_SYS_ADMIN))
		printf("                       (privileged: perf_event_paranoid does not apply)\n");

	printf("\nlimits (/proc/sys/kernel)\n");
	print_limit("perf_event_max_sample_rate", fx->lim.max_sample_rate, " Hz");
	print_limit("perf_event_max_stack", fx->lim.max_stack, " frames");
	print_limit("perf_event_max_contexts_per_stack", fx->lim.max_contexts_per_stack, "");
	print_limit("perf_event_mlock_kb", fx->lim.mlock_kb, " kB");
	print_limit("perf_cpu_time_max_percent", fx->lim.cpu_time_max_percent, " %");
	print_limit("nmi_watchdog", fx->lim.nmi_watchdog, "");
	if (fx->nofile_ok) {
		rlim_str(s, sizeof(s), fx->nofile.rlim_cur);
		rlim_str(h, sizeof(h), fx->nofile.rlim_max);
		printf("  %-36s %s (hard %s)\n", "RLIMIT_NOFILE", s, h);
	}

	size_t n = fx->pmus ? pk_pmu_set__count(fx->pmus) : 0;
	printf("\nPMUs (/sys/bus/event_source/devices): %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct pk_pmu *p = pk_pmu_set__get(fx->pmus, i);
		printf("  %-24s type %u\n", pk_pmu__name(p), pk_pmu__type(p));
	}

	printf("\nfeatures (each verified by opening an event)\n");
	for (int i = 0; i < F_NR; i++) {
		const struct feature *f = &feats[i];
		if (f->detail[0])
			printf("  %-28s %-3s  %s\n", f->label, f->ok ? "yes" : "no", f->detail);
		else
			printf("  %-28s %s\n", f->label, f->ok ? "yes" : "no");
		if (!f->ok)
			print_wrapped("reason: ", 6, f->reason[0] ? f->reason : "unknown");
	}
}

static void json_int(const char *key, int v, bool comma)
{
	printf("    \"%s\": ", key);
	if (v == INT_MIN)
		printf("null");
	else
		printf("%d", v);
	printf("%s\n", comma ? "," : "");
}

void check_print_json(const struct facts *fx)
{
	printf("{\n  \"kernel\": ");
	tool_json_str(stdout, fx->kernel);
	printf(",\n  \"paranoid\": ");
	if (fx->lim.paranoid == INT_MIN)
		printf("null");
	else
		printf("%d", fx->lim.paranoid);
	printf(",\n  \"paranoid_meaning\": ");
	tool_json_str(stdout, pk_paranoid__describe(fx->lim.paranoid));
	printf(",\n  \"uid\": %d,\n  \"euid\": %d,\n  \"root\": %s,\n", (int)fx->uid,
	       (int)fx->euid, fx->euid == 0 ? "true" : "false");
	printf("  \"capabilities\": ");
	if (!fx->caps_known) {
		printf("null,\n");
	} else {
		printf("{");
		for (size_t i = 0; i < sizeof(cap_list) / sizeof(cap_list[0]); i++)
			printf("%s\"%s\": %s", i ? ", " : "", cap_list[i].name,
			       has_cap(fx, cap_list[i].bit) ? "true" : "false");
		printf("},\n");
	}
	printf("  \"limits\": {\n");
	json_int("perf_event_max_sample_rate", fx->lim.max_sample_rate, true);
	json_int("perf_event_max_stack", fx->lim.max_stack, true);
	json_int("perf_event_max_contexts_per_stack", fx->lim.max_contexts_per_stack, true);
	json_int("perf_event_mlock_kb", fx->lim.mlock_kb, true);
	json_int("perf_cpu_time_max_percent", fx->lim.cpu_time_max_percent, true);
	json_int("nmi_watchdog", fx->lim.nmi_watchdog, true);
	printf("    \"rlimit_nofile_soft\": ");
	if (!fx->nofile_ok || fx->nofile.rlim_cur == RLIM_INFINITY)
		printf("null");
	else
		printf("%llu", (unsigned long long)fx->nofile.rlim_cur);
	printf(",\n    \"rlimit_nofile_hard\": ");
	if (!fx->nofile_ok || fx->nofile.rlim_max == RLIM_INFINITY)
		printf("null");
	else
		printf("%llu", (unsigned long long)fx->nofile.rlim_max);
	printf("\n  },\n  \"pmus\": [");
	size_t n = fx->pmus ? pk_pmu_set__count(fx->pmus) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct pk_pmu *p = pk_pmu_set__get(fx->pmus, i);
		printf("%s\n    {\"name\": ", i ? "," : "");
		tool_json_str(stdout, pk_pmu__name(p));
		printf(", \"type\": %u}", pk_pmu__type(p));
	}
	printf("%s],\n  \"features\": {", n ? "\n  " : "");
	for (int i = 0; i < F_NR; i++) {
		const struct feature *f = &feats[i];
		printf("%s\n    \"%s\": {\"available\": %s, \"label\": ", i ? "," : "", f->key,
		       f->ok ? "true" : "false");
		tool_json_str(stdout, f->label);
		printf(", \"detail\": ");
		tool_json_str(stdout, f->detail);
		printf(", \"reason\": ");
		if (f->ok)
			printf("null");
		else
			tool_json_str(stdout, f->reason[0] ? f->reason : "unknown");
		printf("}");
	}
	printf("\n  }\n}\n");
}
