/*
** options.h -- the one table of compile options: every member of cujit_compile_options with its
** names (C, Lua, `cujit compile`), its NVRTC and g++ spellings, how it enters the keys and how its
** values are checked. NVRTC's option list (which both cache keys hash), the CPU device's g++ line,
** the memo key and the public description (cujit_compile_option, which the Lua binding and the
** command read) are all made from it, so an option added here reaches every one of them, and
** options.c refuses to build when the struct has a member the table lacks. Internal.
*/
#ifndef CUJIT_OPTIONS_H
#define CUJIT_OPTIONS_H

#include "base/base.h"
#include "cache.h"

/* How an option enters the keys (the memo key hashes every option as given, whatever its row):
** CJ_KEY_TARGET: as the arch compiled for, which the callers resolve and hash themselves;
** CJ_KEY_LINE: through NVRTC's option list, which the source key and the full key hash;
** CJ_KEY_UNIT: through the translation unit, whose kernels and checks it changes (scan.h);
** CJ_KEY_NONE: not at all, for it changes nothing compiled (the program keeps it for its
** launches' checks);
** CJ_KEY_LINK: through the contents of the files it names, which the link step (link.h) hashes
** into the key of the linked program (a program compiled with it is never `pure`). */
enum { CJ_KEY_TARGET, CJ_KEY_LINE, CJ_KEY_UNIT, CJ_KEY_NONE, CJ_KEY_LINK };

/* The check of each value before NVRTC's list is written, so a bad one is an error naming it. */
enum { CJ_CHECK_NONE, CJ_CHECK_STD, CJ_CHECK_DEFINE, CJ_CHECK_DIR, CJ_CHECK_NONEMPTY };

/* CJ_COMPILE_OPTIONS(TEXT, SWITCH, LIST): one row per member of cujit_compile_options, in the
** struct's order (options.c asserts both). The columns:
**   TEXT(field, fallback, lua, cli, value, nvrtc, cxx, key, check, example, other, doc)
**   SWITCH(field, lua, cli, nvrtc, cxx, env, doc)             -- enters the keys by the line
**   LIST(field, count, item, lua, cli, value, nvrtc, cxx, key, check, example, other, doc)
** fallback: the value when NULL; lua: the key of a Lua options table; cli: `cujit compile`'s flag
** (NULL: none); value: what a value looks like in help texts; nvrtc / cxx: the spelling put before
** the value on NVRTC's / g++'s line (NULL: not on that line; CJ_CXX_AS_NVRTC: an NVRTC flag that
** g++ takes when it means the same, else left out with a note); item: one value in errors;
** example: a valid value other than the default (the tests set each option to it); other: a second
** valid value, neither the default nor the example, with as many items, that the same source
** compiles with (the tests change each option from example to other: the keys must follow the
** value, not only its presence); doc: one line;
** env: an on/off environment variable that turns the switch on for every compile (NULL: none),
** read at each compile, so it enters NVRTC's list, g++'s line and the memo key as the member does.
** Adding an option: a member in cujit.h, a row here, its line in the tables of docs/lua.md and
** docs/cli.md (test_lua_options says which are missing); nothing else lists them. */
#define CJ_COMPILE_OPTIONS(TEXT, SWITCH, LIST)                                                     \
  TEXT(arch, NULL, "arch", "--arch", "sm_XX", "-arch=", NULL, CJ_KEY_TARGET, CJ_CHECK_NONE,        \
       "compute_90", "sm_80",                                                                      \
       "target: sm_XX (or sm_90a: Hopper's arch-specific instructions) for CUBIN and PTX, "        \
       "compute_XX for PTX only; default: the current device's")                                   \
  SWITCH(fast_math, "fast_math", "--fast-math", "--use_fast_math", "-ffast-math", NULL,            \
         "fast math: --use_fast_math (-ffast-math on the CPU device)")                             \
  SWITCH(line_info, "line_info", "--lineinfo", "-lineinfo", "-g", "CUJIT_LINEINFO",                \
         "line info for profilers (CUJIT_LINEINFO=1 turns it on for every compile)")               \
  SWITCH(debug, "debug", "-G", "-G", "-g", NULL, "device debug info")                              \
  LIST(defines, define_count, "define", "defines", "-D", "NAME[=VALUE]", "-D", "-D", CJ_KEY_LINE,  \
       CJ_CHECK_DEFINE, "CJ_EXAMPLE=2", "CJ_EXAMPLE=5", "define a macro")                          \
  LIST(include_dirs, include_dir_count, "include dir", "include_dirs", "-I", "DIR",                \
       "--include-path=", "-I", CJ_KEY_LINE, CJ_CHECK_DIR, ".", "..", "add an include directory")  \
  LIST(extra_flags, extra_flag_count, "extra flag", "flags", "-X", "FLAG", "", CJ_CXX_AS_NVRTC,    \
       CJ_KEY_LINE, CJ_CHECK_NONEMPTY, "-DCJ_EXAMPLE_FLAG=3", "-DCJ_EXAMPLE_FLAG=4",               \
       "pass FLAG to NVRTC as it is")                                                              \
  TEXT(std, "c++17", "std", "--std", "c++NN", "-std=", "-std=", CJ_KEY_LINE, CJ_CHECK_STD,         \
       "c++20", "c++14", "language standard (default c++17)")                                      \
  LIST(signatures, signature_count, "signature", "signatures", NULL, "k(float *x, int n)", NULL,   \
       NULL, CJ_KEY_UNIT, CJ_CHECK_NONE, "store(int *y)", "store(int *out)",                       \
       "the kernels' signatures, given instead of read from the source")                           \
  LIST(name_expressions, name_expression_count, "name expression", "name_expressions", NULL,       \
       "k<float>", NULL, NULL, CJ_KEY_UNIT, CJ_CHECK_NONE, "tstore<int>", "tstore<float>",         \
       "template kernels to instantiate, each a kernel of that name")                              \
  LIST(nonnull, nonnull_count, "parameter name", "nonnull", NULL, "x or *", NULL, NULL,            \
       CJ_KEY_NONE, CJ_CHECK_NONE, "y", "*",                                                       \
       "pointer parameters that refuse a null pointer (*: every one not declared = NULL)")         \
  LIST(link, link_count, "link file", "link", "--link", "FILE", NULL, NULL, CJ_KEY_LINK,           \
       CJ_CHECK_NONEMPTY, "cj_example_link.cu", "cj_example_link_other.cu",                        \
       "device code linked with the program: .cu, .ptx, .ltoir, .fatbin, .cubin, .a (nvJitLink)")

/* The marker of CJ_CXX_AS_NVRTC (its address). */
extern const char cj_cxx_as_nvrtc[];
#define CJ_CXX_AS_NVRTC cj_cxx_as_nvrtc

/* A row of the table: the public description and the engine's own columns. */
typedef struct cj_option {
  cujit_compile_option_info info;
  const char *fallback, *item, *nvrtc, *cxx, *example, *other;
  const char *env; /* a SWITCH row's variable, or NULL */
  int key, check;
} cj_option;

extern const cj_option cj_options[];
extern const size_t cj_option_count;

/* The value of a TEXT row in `op` (NULL when not given), the array and count of a LIST row's. */
const char *cj_option_text(const cj_option *row, const cujit_compile_options *op);
const char *const *cj_option_items(const cj_option *row, const cujit_compile_options *op,
                                   size_t *count);

/* A list of compiler arguments, each its own allocation. */
typedef struct cj_option_list {
  char **v;
  size_t n, cap;
  int failed; /* an allocation failed */
} cj_option_list;

/* Adds `flag` followed by `value` (when given), concatenated. */
void cj_option_list_add(cj_option_list *o, const char *flag, const char *value);
/* 1 when the list holds `flag` exactly, as one item. */
int cj_option_list_has(const cj_option_list *o, const char *flag);
void cj_option_list_free(cj_option_list *o);

/* Checks every option (an error naming the one at fault and what to write) and writes NVRTC's
** list for `arch`: the TEXT rows, the switches, then each LIST row's values, each in table order.
** The toolkit's include path is not in it: it depends on the machine, not the program. */
cujit_status cj_options_nvrtc(cujit_engine *engine, const cujit_compile_options *op,
                              const char *arch, cj_option_list *out);

/* The options' part of g++'s line on the CPU device (in the same order; a switch spelling given
** twice is added once), after cj_options_nvrtc accepted them. NVRTC flags g++ is not given are
** noted in `notes`, one line each. */
void cj_options_cxx(const cujit_compile_options *op, cj_option_list *out, cj_buf *notes);

/* 1 when the switch at `offset` (offsetof(cujit_compile_options, line_info), ...) is on for a
** compile with `op` (the member, or its row's variable); 0 when off or when the variable holds a
** value the compile refuses (cj_options_nvrtc says why). */
int cj_options_switch_on(const cujit_compile_options *op, size_t offset);

/* 1 when `flags` ask ptxas for its report: --ptxas-options=-v or -Xptxas=-v (or --verbose; NVRTC
** hands ptxas one option per flag). Such a compile must not be served by the cache of NVRTC or
** nvJitLink (CUDA 12.9+; the driver's compute cache, ~/.nv/ComputeCache), which hands back the
** binary of an earlier compile without running ptxas, and so without the report that
** cujit_kernel_resources_get and `cujit compile -v` read. */
int cj_options_ptxas_verbose(const char *const *flags, size_t n);
/* The version of NVRTC and of nvJitLink (major*1000 + minor*10) that added the cache and the
** option to bypass it (NVRTC --no-cache, nvJitLink -no-cache). */
#define CJ_NO_CACHE_VERSION 12090

/* Adds every option as given (but the target, the caller's) to the memo key. 0 when the compile
** would refuse one of them (a count with a NULL array, a bad value): no memo then, and the
** compile says what was wrong. */
int cj_options_memo(cj_key_builder *kb, const cujit_compile_options *op);

/* Checks the lists a copy keeps: no count with a NULL array, no NULL entry (the error names it). */
cujit_status cj_options_check_lists(cujit_engine *engine, const cujit_compile_options *op);

/* A deep copy of `src` (NULL: the defaults) into *dst, every string of it in one allocation
** (*storage, which the caller frees), for a generic kernel that compiles later. The lists of the
** unit (signatures, name expressions) are left out: a defined kernel has its own signature.
** Needs lists cj_options_check_lists accepted; 0 when out of memory. */
int cj_options_copy(const cujit_compile_options *src, cujit_compile_options *dst, void **storage);

#endif
