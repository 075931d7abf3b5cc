/*
** symbols.h -- the compiled names of a source's variables: whether a symbol (plain, or mangled the
** Itanium way as NVRTC and g++ do) is the variable the source names "taps" or "ns::taps"
** (elf_symbols.h finds such variables in a shared object). For cujit_program_global. Internal.
*/
#ifndef CUJIT_SYMBOLS_H
#define CUJIT_SYMBOLS_H

#include <stddef.h>

/* Whether the compiled symbol sym[0..len) is the variable `name` as the source names it ("taps",
** "ns::taps", "::taps"): the plain name, or an Itanium-mangled one ("_ZL4taps", "_ZN2ns4tapsE")
** read with what only the compiler adds left out: internal linkage ('L', NVRTC's "_INTERNAL_..."
** scope), anonymous namespaces ("_GLOBAL__N_..."), and the CPU device's own namespace __cj
** around a program. A template or any other mangling is no match. */
int cj_symbol_names_variable(const char *sym, size_t len, const char *name);

#endif
