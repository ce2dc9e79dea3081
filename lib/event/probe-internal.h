/* SPDX-License-Identifier: MIT */
/*
 * lib/event/probe-internal.h - the pieces of the dynamic-probe resolver (probe.c,
 * probe-find.c, probe-sdt.c) shared between its files and with the fuzz harness. Never
 * installed.
 */
#ifndef PK_EVENT_PROBE_INTERNAL_H
#define PK_EVENT_PROBE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <perfkit/probe.h>

/* An ELF file opened for probing: the descriptor is kept so the offsets computed match
 * the file the probe is placed on (the caller may hand it to the kernel). */
struct probe_elf {
	int fd;
	Elf *elf;
	GElf_Ehdr eh;
	uint64_t dev, ino;
	char path[PK_PROBE_PATH_MAX];
};

/* Open path as a probe target: a regular ELF executable or shared object. */
int pk_probe_elf_open(struct probe_elf *pe, const char *path, char *msg, size_t msglen);
void pk_probe_elf_close(struct probe_elf *pe);
/*
 * How each pk_probe__ entry point taking a binary begins: clear msg, check the arguments
 * (args_ok: the caller's own checks passed), find the binary into path and open it into
 * *pe. 0, or a negative errno with msg saying why.
 */
int pk_probe_open_binary(const char *binary, bool args_ok, const struct pk_probe_opts *opts,
			 char path[PK_PROBE_PATH_MAX], struct probe_elf *pe, char *msg,
			 size_t msglen);
/* File offset of vaddr through the PT_LOAD headers; need_exec: in an executable segment. */
int pk_probe_vaddr_to_offset(const struct probe_elf *pe, uint64_t vaddr, bool need_exec,
			     uint64_t *off);

/* One SDT note's descriptor, parsed (strings point into the descriptor). */
struct sdt_raw {
	uint64_t pc, base, sem;
	const char *provider, *name, *args;
};

/* Parse the descriptor of an NT_STAPSDT note (type 3, owner "stapsdt"): three addresses
 * of 4 or 8 bytes (is64), then provider, name and argument strings, each NUL-terminated
 * within len. Returns 0 or -EINVAL. */
int pk_sdt_parse_desc(const uint8_t *desc, size_t len, bool is64, struct sdt_raw *out);

#endif
