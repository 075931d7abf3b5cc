/*
** elf_symbols.c -- which symbols an ELF64 shared object in memory defines (elf_symbols.h). Every
** offset and size read from the object is checked against its length before use: the bytes come
** from the disk cache.
*/
#include "elf_symbols.h"
#include "symbols.h"

#include <elf.h>
#include <string.h>

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

/* The ELF header of a little-endian ELF64 image, 0 when it is none. */
static int elf_header(const unsigned char *image, size_t len, Elf64_Ehdr *eh) {
  if (!image || len < sizeof *eh) return 0;
  memcpy(eh, image, sizeof *eh);
  return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
         eh->e_ident[EI_DATA] == ELFDATA2LSB && (size_t)eh->e_shoff % 8 == 0;
}

/* The string table of a symbol table, both inside the image; NULL when either is not. */
static const Elf64_Shdr *strings_of(const unsigned char *image, size_t len, const Elf64_Ehdr *eh,
                                    const Elf64_Shdr *symtab) {
  const Elf64_Shdr *strtab = section(image, len, eh, symtab->sh_link);
  if (!strtab || symtab->sh_entsize != sizeof(Elf64_Sym) ||
      !inside(len, symtab->sh_offset, symtab->sh_size) ||
      !inside(len, strtab->sh_offset, strtab->sh_size))
    return NULL;
  return strtab;
}

/* The full symbol table (.symtab: hidden, local and static symbols too); NULL when the image
** has none or is not well formed. */
static const Elf64_Shdr *full_table(const unsigned char *image, size_t len, const Elf64_Ehdr *eh) {
  for (size_t i = 0; i < eh->e_shnum; i++) {
    const Elf64_Shdr *sh = section(image, len, eh, i);
    if (!sh) return NULL;
    if (sh->sh_type == SHT_SYMTAB) return sh;
  }
  return NULL;
}

/* Looks `name` up in one symbol table (SHT_SYMTAB or SHT_DYNSYM): 1 defined (*found: its
** entry, when asked), 0 not, -1 bad. */
static int look_up(const unsigned char *image, size_t len, const Elf64_Ehdr *eh,
                   const Elf64_Shdr *symtab, const char *name, Elf64_Sym *found) {
  const Elf64_Shdr *strtab = strings_of(image, len, eh, symtab);
  if (!strtab) return -1;
  const char *strings = (const char *)image + strtab->sh_offset;
  size_t nlen = strlen(name), count = symtab->sh_size / sizeof(Elf64_Sym);
  for (size_t i = 0; i < count; i++) {
    Elf64_Sym sym;
    memcpy(&sym, image + symtab->sh_offset + i * sizeof sym, sizeof sym);
    if (sym.st_name >= strtab->sh_size || strtab->sh_size - sym.st_name <= nlen) continue;
    if (memcmp(strings + sym.st_name, name, nlen + 1) == 0 && sym.st_shndx != SHN_UNDEF) {
      if (found) *found = sym;
      return 1;
    }
  }
  return 0;
}

/* cj_elf_defines, and the symbol's entry (found may be NULL); *header the ELF header. */
static int find_symbol(const unsigned char *image, size_t len, const char *name, Elf64_Sym *found,
                       Elf64_Ehdr *header) {
  if (!name || !elf_header(image, len, header)) return -1;
  const Elf64_Ehdr eh = *header;
  /* The full table (.symtab) holds hidden symbols too; a stripped object has only .dynsym. */
  const Elf64_Shdr *dynsym = NULL;
  for (size_t i = 0; i < eh.e_shnum; i++) {
    const Elf64_Shdr *sh = section(image, len, &eh, i);
    if (!sh) return -1;
    if (sh->sh_type == SHT_SYMTAB) return look_up(image, len, &eh, sh, name, found);
    if (sh->sh_type == SHT_DYNSYM) dynsym = sh;
  }
  return dynsym ? look_up(image, len, &eh, dynsym, name, found) : -1;
}

int cj_elf_defines(const unsigned char *image, size_t len, const char *name) {
  Elf64_Ehdr eh;
  return find_symbol(image, len, name, NULL, &eh);
}

const unsigned char *cj_elf_data(const unsigned char *image, size_t len, const char *name,
                                 size_t *size) {
  Elf64_Ehdr eh;
  Elf64_Sym sym;
  if (find_symbol(image, len, name, &sym, &eh) != 1 || sym.st_shndx >= SHN_LORESERVE) return NULL;
  const Elf64_Shdr *sh = section(image, len, &eh, sym.st_shndx);
  if (!sh || sh->sh_type != SHT_PROGBITS || sym.st_value < sh->sh_addr ||
      sym.st_value - sh->sh_addr > sh->sh_size ||
      sym.st_size > sh->sh_size - (sym.st_value - sh->sh_addr))
    return NULL;
  Elf64_Off off = sh->sh_offset + (sym.st_value - sh->sh_addr);
  if (!inside(len, off, sym.st_size)) return NULL;
  *size = (size_t)sym.st_size;
  return image + off;
}

long long cj_elf_tls_bytes(const unsigned char *image, size_t len, const char *prefix) {
  Elf64_Ehdr eh;
  if (!prefix || !elf_header(image, len, &eh)) return -1;
  const Elf64_Shdr *symtab = full_table(image, len, &eh); /* locals are only there */
  const Elf64_Shdr *strtab = symtab ? strings_of(image, len, &eh, symtab) : NULL;
  if (!strtab) return -1;
  const char *strings = (const char *)image + strtab->sh_offset;
  size_t plen = strlen(prefix), count = symtab->sh_size / sizeof(Elf64_Sym);
  long long bytes = 0;
  for (size_t k = 0; k < count; k++) {
    Elf64_Sym sym;
    memcpy(&sym, image + symtab->sh_offset + k * sizeof sym, sizeof sym);
    if (ELF64_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF ||
        sym.st_name >= strtab->sh_size || strtab->sh_size - sym.st_name <= plen ||
        memcmp(strings + sym.st_name, prefix, plen) != 0)
      continue;
    if (sym.st_size < (1ull << 40)) bytes += (long long)sym.st_size;
  }
  return bytes;
}

int cj_elf_variable(const unsigned char *image, size_t len, const char *name,
                    unsigned long long *value, unsigned long long *size) {
  Elf64_Ehdr eh;
  if (!name || !elf_header(image, len, &eh)) return -1;
  const Elf64_Shdr *symtab = full_table(image, len, &eh); /* static variables are only there */
  const Elf64_Shdr *strtab = symtab ? strings_of(image, len, &eh, symtab) : NULL;
  if (!strtab) return -1;
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
