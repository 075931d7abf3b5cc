/*
** test_elf_symbols.c -- reading an ELF64 object's symbols (lang/elf_symbols.h) from images built
** here byte by byte: what each function finds in a well-formed image (a defined symbol, an
** undefined one, a data symbol's bytes, thread-local bytes by prefix, a variable and how many
** define it), and what it refuses: every offset, size, link and name that lies outside the image
** or its tables, a name the string table does not end, images that are not ELF64 or are cut short.
** The CPU device reads its compiled programs this way; the bytes come from the disk cache.
*/
#include <criterion/criterion.h>
#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "lang/elf_symbols.h"

/* The image: header, .data (PROGBITS at address 0x1000; the TLS symbols point into it too),
** .symtab, .strtab, then the section headers [0] null, [1] .data, [2] .symtab, [3] .strtab,
** [4] .bss (NOBITS). The string table's last name, "lastvar", has no NUL: the table ends inside
** it. */
enum {
  DATA_OFF = 64,
  DATA_SIZE = 32,
  SYMS_OFF = 96,
  NSYMS = 10,
  STR_OFF = SYMS_OFF + NSYMS * sizeof(Elf64_Sym)
};
static const char STRINGS[] = "\0cj_var\0undef_sym\0tls_shared_a\0tls_shared_b\0other_tls\0"
                              "twice\0_ZN2ns3varE\0lastvar";
enum { STR_SIZE = sizeof STRINGS - 1 }; /* without the literal's own NUL: "lastvar" is cut */
enum {
  SH_OFF = (STR_OFF + STR_SIZE + 7) / 8 * 8,
  NSECT = 5,
  IMAGE = SH_OFF + NSECT * sizeof(Elf64_Shdr)
};

typedef struct {
  unsigned char bytes[IMAGE];
  Elf64_Shdr *sh; /* the section headers, inside bytes */
  Elf64_Sym *sym; /* the symbols, inside bytes */
} image;

static uint32_t name_at(const char *name) {
  for (uint32_t i = 1; i < STR_SIZE; i += (uint32_t)strlen(STRINGS + i) + 1)
    if (strcmp(STRINGS + i, name) == 0) return i;
  cr_assert_fail("no %s in the string table", name);
  return 0;
}

static void put_symbol(image *im, int k, const char *name, int type, uint16_t shndx, uint64_t value,
                       uint64_t size) {
  Elf64_Sym s = {0};
  s.st_name = name_at(name);
  s.st_info = (unsigned char)ELF64_ST_INFO(STB_GLOBAL, type);
  s.st_shndx = shndx;
  s.st_value = value;
  s.st_size = size;
  memcpy(&im->sym[k], &s, sizeof s);
}

static void build(image *im) {
  memset(im, 0, sizeof *im);
  Elf64_Ehdr eh = {0};
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_type = ET_DYN;
  eh.e_shoff = SH_OFF;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = NSECT;
  memcpy(im->bytes, &eh, sizeof eh);
  for (int i = 0; i < DATA_SIZE; i++) im->bytes[DATA_OFF + i] = (unsigned char)(0xA0 + i);
  memcpy(im->bytes + STR_OFF, STRINGS, STR_SIZE);
  im->sh = (Elf64_Shdr *)(void *)(im->bytes + SH_OFF);
  im->sym = (Elf64_Sym *)(void *)(im->bytes + SYMS_OFF);
  im->sh[1] = (Elf64_Shdr){
      .sh_type = SHT_PROGBITS, .sh_addr = 0x1000, .sh_offset = DATA_OFF, .sh_size = DATA_SIZE};
  im->sh[2] = (Elf64_Shdr){.sh_type = SHT_SYMTAB,
                           .sh_offset = SYMS_OFF,
                           .sh_size = NSYMS * sizeof(Elf64_Sym),
                           .sh_link = 3,
                           .sh_entsize = sizeof(Elf64_Sym)};
  im->sh[3] = (Elf64_Shdr){.sh_type = SHT_STRTAB, .sh_offset = STR_OFF, .sh_size = STR_SIZE};
  im->sh[4] = (Elf64_Shdr){.sh_type = SHT_NOBITS, .sh_addr = 0x2000, .sh_size = 64};
  /* symbol 0 is the null one */
  put_symbol(im, 1, "cj_var", STT_OBJECT, 1, 0x1008, 8);
  put_symbol(im, 2, "undef_sym", STT_OBJECT, SHN_UNDEF, 0, 0);
  put_symbol(im, 3, "tls_shared_a", STT_TLS, 1, 0, 16);
  put_symbol(im, 4, "tls_shared_b", STT_TLS, 1, 16, 4);
  put_symbol(im, 5, "other_tls", STT_TLS, 1, 20, 100);
  put_symbol(im, 6, "twice", STT_OBJECT, 1, 0x1010, 4);
  put_symbol(im, 7, "twice", STT_OBJECT, 1, 0x1018, 8);
  put_symbol(im, 8, "_ZN2ns3varE", STT_OBJECT, 4, 0x2000, 12);
  put_symbol(im, 9, "lastvar", STT_OBJECT, 1, 0x1000, 4);
}

Test(elf_symbols, a_well_formed_image) {
  image im;
  build(&im);
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), 1);
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "undef_sym"), 0, "referenced, not defined");
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "absent"), 0);
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_va"), 0, "a prefix of a name is not the name");
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var_"), 0, "nor is a longer one");
  size_t size = 0;
  const unsigned char *p = cj_elf_data(im.bytes, IMAGE, "cj_var", &size);
  cr_assert_eq(p, im.bytes + DATA_OFF + 8, "the bytes at the symbol's address");
  cr_assert_eq(size, 8);
  cr_assert_eq(p[0], 0xA8);
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "undef_sym", &size));
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "_ZN2ns3varE", &size),
                 "NOBITS: no bytes in the file");
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "tls_shared_"), 20, "16 + 4, not other_tls");
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "tls_shared_a"), 16, "a name is its own prefix");
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "nothing"), 0);
  unsigned long long value = 0, bytes = 0;
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "cj_var", &value, &bytes), 1);
  cr_assert_eq(value, 0x1008);
  cr_assert_eq(bytes, 8);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "twice", &value, &bytes), 2, "both counted");
  cr_assert(value == 0x1010 && bytes == 4, "the first one's value and size");
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "ns::var", &value, &bytes), 1, "in a namespace");
  cr_assert_eq(value, 0x2000);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "undef_sym", &value, &bytes), 0, "undefined");
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "tls_shared_a", &value, &bytes), 0,
               "thread-local: not a data object");
}

/* A name the string table does not end (its NUL would be past the table) is no name at all. */
Test(elf_symbols, a_name_cut_by_the_end_of_its_table) {
  image im;
  build(&im);
  unsigned long long value = 7, bytes = 7;
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "lastvar"), 0);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "lastvar", &value, &bytes), 0);
  cr_assert(value == 7 && bytes == 7, "nothing written when nothing is found");
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "lastva"), 0, "nor any prefix of it");
  /* ended inside the table (one byte longer, its NUL the byte after the strings): found */
  im.sh[3].sh_size = STR_SIZE + 1;
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "lastvar"), 1);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "lastvar", &value, &bytes), 1);
  /* a symbol whose name starts past the table */
  im.sh[3].sh_size = STR_SIZE;
  im.sym[1].st_name = STR_SIZE;
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), 0);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "cj_var", &value, &bytes), 0);
}

Test(elf_symbols, not_elf64_or_cut_short) {
  image im;
  build(&im);
  size_t size;
  unsigned long long value, bytes;
  cr_assert_eq(cj_elf_defines(NULL, IMAGE, "cj_var"), -1);
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, NULL), -1);
  cr_assert_eq(cj_elf_defines(im.bytes, sizeof(Elf64_Ehdr) - 1, "cj_var"), -1, "a header cut");
  cr_assert_eq(cj_elf_defines(im.bytes, SH_OFF + 3 * sizeof(Elf64_Shdr), "cj_var"), -1,
               "the section headers cut (the fourth, .strtab's, missing)");
  cr_assert_eq(cj_elf_defines(im.bytes, SH_OFF, "cj_var"), -1, "cut before the section headers");
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, SH_OFF, "tls_"), -1);
  cr_assert_eq(cj_elf_variable(im.bytes, SH_OFF, "cj_var", &value, &bytes), -1);
  cr_assert_null(cj_elf_data(im.bytes, SH_OFF, "cj_var", &size));
  image bad;
  bad = im;
  bad.bytes[EI_CLASS] = ELFCLASS32;
  cr_assert_eq(cj_elf_defines(bad.bytes, IMAGE, "cj_var"), -1, "ELF32");
  bad = im;
  bad.bytes[EI_DATA] = ELFDATA2MSB;
  cr_assert_eq(cj_elf_defines(bad.bytes, IMAGE, "cj_var"), -1, "big-endian");
  bad = im;
  bad.bytes[1] = 'F';
  cr_assert_eq(cj_elf_defines(bad.bytes, IMAGE, "cj_var"), -1, "no ELF magic");
  cr_assert_eq(cj_elf_tls_bytes(bad.bytes, IMAGE, "tls_"), -1);
  cr_assert_eq(cj_elf_variable(bad.bytes, IMAGE, "cj_var", &value, &bytes), -1);
}

/* Each link, size and offset of the tables pointing outside the image, one at a time. */
Test(elf_symbols, tables_that_point_outside) {
  image im;
  unsigned long long value, bytes;
  build(&im);
  im.sh[2].sh_link = NSECT; /* the string table: a section that does not exist */
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "cj_var", &value, &bytes), -1);
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "tls_"), -1);
  build(&im);
  im.sh[2].sh_entsize = 16; /* not Elf64_Sym's size */
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  build(&im);
  im.sh[2].sh_size = IMAGE; /* the symbols run past the image */
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  build(&im);
  im.sh[3].sh_offset = IMAGE - 2; /* the strings run past the image */
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  build(&im);
  Elf64_Ehdr eh;
  memcpy(&eh, im.bytes, sizeof eh);
  eh.e_shentsize = 32; /* section headers of another size */
  memcpy(im.bytes, &eh, sizeof eh);
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  build(&im);
  memcpy(&eh, im.bytes, sizeof eh);
  eh.e_shoff = SH_OFF + 4; /* not 8-aligned */
  memcpy(im.bytes, &eh, sizeof eh);
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  build(&im);
  im.sh[2].sh_type = SHT_PROGBITS; /* no symbol table at all */
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), -1);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "cj_var", &value, &bytes), -1);
  im.sh[2].sh_type = SHT_DYNSYM; /* only the dynamic one (a stripped object): looked up there */
  cr_assert_eq(cj_elf_defines(im.bytes, IMAGE, "cj_var"), 1);
  cr_assert_eq(cj_elf_variable(im.bytes, IMAGE, "cj_var", &value, &bytes), -1,
               "static variables are only in the full table");
}

/* A data symbol's bytes must lie inside its section and the section inside the image. */
Test(elf_symbols, data_outside_its_section) {
  image im;
  size_t size = 99;
  build(&im);
  im.sym[1].st_value = 0x0FFF; /* before the section's address */
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "cj_var", &size));
  build(&im);
  im.sym[1].st_value = 0x1000 + DATA_SIZE - 4; /* 8 bytes from 4 before the end */
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "cj_var", &size));
  im.sym[1].st_size = 4; /* 4 bytes there fit exactly */
  cr_assert_eq(cj_elf_data(im.bytes, IMAGE, "cj_var", &size), im.bytes + DATA_OFF + DATA_SIZE - 4);
  cr_assert_eq(size, 4);
  size = 99;
  build(&im);
  im.sym[1].st_value = 0x1000 + DATA_SIZE + 1; /* past the section's end */
  im.sym[1].st_size = 0;
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "cj_var", &size));
  build(&im);
  im.sh[1].sh_offset = IMAGE - 4; /* the section's bytes past the image */
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "cj_var", &size));
  build(&im);
  im.sym[1].st_shndx = SHN_ABS; /* a reserved section index */
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "cj_var", &size));
  build(&im);
  im.sym[1].st_shndx = NSECT; /* a section that does not exist */
  cr_assert_null(cj_elf_data(im.bytes, IMAGE, "cj_var", &size));
  cr_assert_eq(size, 99, "size untouched by the refusals since");
}

/* Thread-local sizes of 2^40 bytes or more are taken for damage, not added. */
Test(elf_symbols, a_huge_thread_local_is_not_added) {
  image im;
  build(&im);
  im.sym[4].st_size = 1ull << 40;
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "tls_shared_"), 16);
  im.sym[4].st_size = (1ull << 40) - 1;
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "tls_shared_"), 16 + (1ll << 40) - 1);
  im.sym[4].st_shndx = SHN_UNDEF; /* an undefined one is not counted */
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "tls_shared_"), 16);
}

/* A thread-local whose name the string table cuts: only a prefix the table holds whole counts. */
Test(elf_symbols, a_thread_local_name_cut_by_the_end_of_its_table) {
  image im;
  build(&im);
  im.sym[9].st_info = (unsigned char)ELF64_ST_INFO(STB_GLOBAL, STT_TLS);
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "lastva"), 4, "6 of its 7 bytes: inside");
  cr_assert_eq(cj_elf_tls_bytes(im.bytes, IMAGE, "lastvar"), 0, "all 7 and no NUL: not");
}
