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

/* The bytes of the data symbol `name` that `image` defines in a section of its file (*size of
** them), or NULL: the CPU device's entries export each kernel's parameter layout this way. */
const unsigned char *cj_elf_data(const unsigned char *image, size_t len, const char *name,
                                 size_t *size);

/* The bytes of the thread-local (STT_TLS) symbols of the full symbol table whose names begin with
** `prefix`: the CPU device's static __shared__ variables are thread_local (cpu_prelude.h). -1 when
** the image has no such table or is not a well-formed ELF64 object. */
long long cj_elf_tls_bytes(const unsigned char *image, size_t len, const char *prefix);

/* The data objects (STT_OBJECT, defined) of the full symbol table that are the variable `name` as
** the source names it (cj_symbol_names_variable: static ones and those in namespaces too, which
** dlsym cannot see): how many there are, the first one's value (its offset from the load address)
** and size in *value and *size; -1 when the image has no such table or is not well formed. */
int cj_elf_variable(const unsigned char *image, size_t len, const char *name,
                    unsigned long long *value, unsigned long long *size);

#endif
