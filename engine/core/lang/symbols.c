/*
** symbols.c -- the compiled names of a source's variables (symbols.h): a mangled name read back
** into the source's words, and an ELF64 image's symbol table searched for them. Every offset and
** size read from the image is checked against its length before use: the bytes come from the
** disk cache.
*/
#include "symbols.h"

#include <ctype.h>
#include <elf.h>
#include <string.h>

/* A scope the compiler adds, which the source does not name. */
static int added_scope(const char *c, size_t n, int first) {
  return (n > 11 && memcmp(c, "_GLOBAL__N_", 11) == 0) ||
         (n > 10 && memcmp(c, "_INTERNAL_", 10) == 0) ||
         (first && n == 4 && memcmp(c, "__cj", 4) == 0);
}

int cj_symbol_names_variable(const char *sym, size_t len, const char *name) {
  if (name[0] == ':' && name[1] == ':') name += 2;
  if (len < 2 || sym[0] != '_' || sym[1] != 'Z')
    return strlen(name) == len && memcmp(sym, name, len) == 0;
  size_t i = 2;
  int nested = i < len && sym[i] == 'N';
  i += (size_t)nested;
  const char *want = name;
  for (int first = 1; i < len && sym[i] != 'E'; first = 0) {
    if (sym[i] == 'L') i++;
    size_t n = 0;
    if (i >= len || !isdigit((unsigned char)sym[i])) return 0; /* a template, a substitution */
    while (i < len && isdigit((unsigned char)sym[i]) && n < len)
      n = 10 * n + (size_t)(sym[i++] - '0');
    if (n > len - i) return 0;
    const char *c = sym + i;
    i += n;
    if (added_scope(c, n, first)) continue;
    if (want != name) { /* each scope after the first is written after a "::" */
      if (want[0] != ':' || want[1] != ':') return 0;
      want += 2;
    }
    if (strncmp(want, c, n) != 0) return 0;
    want += n;
    if (!nested) break;
  }
  if (nested && (i >= len || sym[i] != 'E' || i + 1 != len)) return 0;
  if (!nested && i != len) return 0;
  return want != name && *want == '\0';
}

/* The section header at `index`, or NULL when it lies outside the image. */
static const Elf64_Shdr *section(const unsigned char *image, size_t len, const Elf64_Ehdr *eh,
                                 size_t index) {
  if (index >= eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr)) return NULL;
  size_t at = (size_t)eh->e_shoff + index * sizeof(Elf64_Shdr);
  if (eh->e_shoff > len || at > len || len - at < sizeof(Elf64_Shdr)) return NULL;
  return (const Elf64_Shdr *)(const void *)(image + at);
}

/* Whether [off, off + size) lies inside the image. */
static int inside(size_t len, Elf64_Off off, Elf64_Xword size) {
  return off <= len && size <= len - off;
}

int cj_elf_variable(const unsigned char *image, size_t len, const char *name,
                    unsigned long long *value, unsigned long long *size) {
  Elf64_Ehdr eh;
  if (!image || !name || len < sizeof eh) return -1;
  memcpy(&eh, image, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || (size_t)eh.e_shoff % 8 != 0)
    return -1;
  for (size_t i = 0; i < eh.e_shnum; i++) {
    const Elf64_Shdr *symtab = section(image, len, &eh, i);
    if (!symtab) return -1;
    if (symtab->sh_type != SHT_SYMTAB) continue; /* static variables are only there */
    const Elf64_Shdr *strtab = section(image, len, &eh, symtab->sh_link);
    if (!strtab || symtab->sh_entsize != sizeof(Elf64_Sym) ||
        !inside(len, symtab->sh_offset, symtab->sh_size) ||
        !inside(len, strtab->sh_offset, strtab->sh_size))
      return -1;
    const char *strings = (const char *)image + strtab->sh_offset;
    size_t count = symtab->sh_size / sizeof(Elf64_Sym);
    int found = 0;
    for (size_t k = 0; k < count; k++) {
      Elf64_Sym sym;
      memcpy(&sym, image + symtab->sh_offset + k * sizeof sym, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF ||
          sym.st_name >= strtab->sh_size)
        continue;
      const char *s = strings + sym.st_name;
      size_t n = strnlen(s, strtab->sh_size - sym.st_name);
      if (n == strtab->sh_size - sym.st_name || !cj_symbol_names_variable(s, n, name)) continue;
      if (found++ == 0) *value = sym.st_value, *size = sym.st_size;
    }
    return found;
  }
  return -1;
}
