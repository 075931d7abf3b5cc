/*
** elf_symbols.h -- reading the symbol table of an ELF64 shared object in memory: the CPU device's
** compiled programs are such objects, and which of a source's kernels and variant markers g++
** actually defined is read from them, as the PTX's .entry list is read for NVRTC. Internal.
*/
#ifndef CUJIT_ELF_SYMBOLS_H
#define CUJIT_ELF_SYMBOLS_H

#include <stddef.h>

/* Whether `image` (len bytes) defines the symbol `name`: 1 when it does, 0 when the name is absent
** or only referenced (undefined, e.g. a weak reference to a kernel an inactive #if removed), -1
** when the bytes are not a little-endian ELF64 object with a symbol table, or are cut short. */
int cj_elf_defines(const unsigned char *image, size_t len, const char *name);

#endif
