/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Addresses to function names, for the sampler's reports: the kernel's
 * from /proc/kallsyms, a process's from the ELF files it has mapped
 * (.symtab, .dynsym, or separate debuginfo where it is installed) through
 * elfutils' libdwfl. Each process's mappings and each file's symbols are
 * read once and kept, and each address once looked up is remembered.
 *
 * What has no name gets a label rather than nothing: code in a file
 * without symbols, or in a mapping of no file (JIT), the mapping's range
 * ("[file 0x400000-0x4a2000]", "[anon 0x7f..-0x7f..]"); a process gone
 * before its addresses were looked up, "[pid N gone]"; a kernel whose
 * addresses are hidden (kptr_restrict, not root), "[kernel]".
 */
#ifndef MAGNET_SYMBOLS_H
#define MAGNET_SYMBOLS_H

#include <stdint.h>

struct symbols;

/*
 * @kallsyms: the kernel's symbols from this file (a copy of another
 * machine's /proc/kallsyms) rather than the running kernel's; NULL: those.
 * NULL, errno set, if it cannot be read or memory is short.
 */
struct symbols *symbols_new(const char *kallsyms);
void symbols_free(struct symbols *s);

/*
 * The kernel function at @addr: "name", or "name [module]" in a module.
 * The string lives as long as @s.
 */
const char *symbols_kernel(struct symbols *s, uint64_t addr);

/*
 * The function at @addr in process @tgid: "name (file)", or a label (see
 * above). The string lives as long as @s.
 */
const char *symbols_user(struct symbols *s, uint32_t tgid, uint64_t addr);

/* The process's name (its comm), "pid N" if it is gone; as long as @s. */
const char *symbols_comm(struct symbols *s, uint32_t tgid);

#endif
