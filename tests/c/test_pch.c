/*
** test_pch.c -- NVRTC's precompiled headers inside a process (compile/pch.c): a compile with a PCH
** gives the bytes one without gives (PTX and CUBIN, and the same cache key), CUJIT_PCH read
** strictly and each value's effect (cujit_cache_stats' pch_created / pch_used), a header edited
** after its PCH was made is seen, the engine's private directory, a heap too small, and an NVRTC
** without the PCH calls. NVRTC only, for an explicit sm_90: no GPU needed, but for the last case,
** which runs kernels compiled through a PCH on the GPU (skipped without one, failing instead under
** CUJIT_REQUIRE_GPU=1).
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "scratch.h"
#include "compile/cxx_scratch.h"
#include "compile/pch.h"

static char tmpdir[256];

static void setup(void) {
  cr_assert_lt(snprintf(tmpdir, sizeof tmpdir, "%s", cj_scratch_with_cache("pch")),
               (int)sizeof tmpdir);
  setenv("CUJIT_CACHE", "off", 1); /* every compile runs NVRTC, unless a test says otherwise */
  unsetenv("CUJIT_PCH");
  unsetenv("CUJIT_LINEINFO");
  char path[400];
  snprintf(path, sizeof path, "%s/inc", tmpdir);
  cr_assert_eq(mkdir(path, 0700), 0);
}

static void teardown(void) {
  cj_scratch_remove();
}

TestSuite(pch, .init = setup, .fini = teardown);

static cujit_engine *open_engine(void) {
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  int v;
  if (cujit_nvrtc_version(e, &v) != CUJIT_OK) cr_skip_test("no NVRTC: %s", cujit_errmsg(e));
  if (v < 12080) cr_skip_test("NVRTC %d has no precompiled headers", v);
  return e;
}

static const char *inc_dir(void) {
  static char path[400];
  snprintf(path, sizeof path, "%s/inc", tmpdir);
  return path;
}

/* A program including "h.h" (from inc/) whose kernel `name` stores VAL. */
static cujit_program *compile(cujit_engine *e, const char *name, const char *prefix) {
  static char src[40000];
  snprintf(src, sizeof src,
           "%s#include \"h.h\"\n"
           "extern \"C\" __global__ void %s(float *x) { x[threadIdx.x] = VAL + hv(); }\n",
           prefix ? prefix : "", name);
  const char *dirs[] = {inc_dir()};
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90", o.include_dirs = dirs, o.include_dir_count = 1;
  char file[64];
  snprintf(file, sizeof file, "%s.cu", name);
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(e, src, file, &o, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  return p;
}

static const char *header_a = "#pragma once\n#define VAL 1.5f\n__device__ int hv() { return 1; }\n";
static const char *header_b =
    "#pragma once\n#define VAL 7.25f\n__device__ int hv() { return 2; }\n";

static void counts(cujit_engine *e, uint64_t created, uint64_t used, const char *when) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(e, &s), CUJIT_OK);
  cr_assert_eq(s.pch_created, created, "%s: %llu PCH made, expected %llu", when,
               (unsigned long long)s.pch_created, (unsigned long long)created);
  cr_assert_eq(s.pch_used, used, "%s: %llu PCH used, expected %llu", when,
               (unsigned long long)s.pch_used, (unsigned long long)used);
}

static void same_bytes(cujit_program *a, cujit_program *b, const char *what) {
  size_t la, lb;
  const char *pa = cujit_program_ptx(a, &la), *pb = cujit_program_ptx(b, &lb);
  cr_assert(la == lb && memcmp(pa, pb, la) == 0, "%s: the PTX differs", what);
  const void *ca = cujit_program_cubin(a, &la), *cb = cujit_program_cubin(b, &lb);
  cr_assert(ca && cb && la == lb && memcmp(ca, cb, la) == 0, "%s: the CUBIN differs", what);
}

/* CUJIT_PCH=on: the second program with the same headers uses the PCH the first made, and both
** are byte for byte what a compile without PCH makes; the log says nothing of the PCH. */
Test(pch, on_made_then_used_and_bytes_identical) {
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  cujit_program *first = compile(e, "first", NULL);
  counts(e, 1, 0, "the first compile");
  cujit_program *second = compile(e, "second", NULL);
  counts(e, 1, 1, "the second compile");
  cr_assert_null(strstr(cujit_program_log(second), "precompiled"), "%s", cujit_program_log(second));
  setenv("CUJIT_PCH", "off", 1);
  cujit_engine *plain = open_engine();
  cujit_program *first_plain = compile(plain, "first", NULL);
  cujit_program *second_plain = compile(plain, "second", NULL);
  counts(plain, 0, 0, "CUJIT_PCH=off");
  same_bytes(first, first_plain, "a compile that made the PCH");
  same_bytes(second, second_plain, "a compile that used the PCH");
  cujit_program_free(first), cujit_program_free(second);
  cujit_program_free(first_plain), cujit_program_free(second_plain);
  cujit_close(e);
  cujit_close(plain);
}

/* The cache key is the same with and without PCH: what a PCH compile stored is a hit for an
** engine with PCH off. */
Test(pch, same_cache_key) {
  cj_scratch_write("inc/h.h", header_a);
  unsetenv("CUJIT_CACHE");
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  cujit_program *p = compile(e, "keyed", NULL);
  counts(e, 1, 0, "a compile with PCH");
  cujit_program_free(p);
  cujit_close(e);
  setenv("CUJIT_PCH", "off", 1);
  e = open_engine();
  p = compile(e, "keyed", NULL);
  cr_assert_eq(cujit_program_from_cache(p), 1, "the entry a PCH compile stored is not found");
  cujit_program_free(p);
  cujit_close(e);
}

static void keep_warning(void *user, const char *message) {
  snprintf(user, 512, "%s", message);
}

/* A value not understood is a warning naming it and what it takes, and auto is used; case
** counts. */
Test(pch, strict_value_warns_and_uses_auto) {
  cj_scratch_write("inc/h.h", header_a);
  static const char *const bad[] = {"ON", "yes", "1", "auto ", "automatic"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("CUJIT_PCH", bad[i], 1);
    cujit_engine *e = open_engine();
    char said[512] = "";
    cujit_set_warning_handler(e, keep_warning, said);
    char name[32];
    snprintf(name, sizeof name, "strict%zu", i);
    cujit_program_free(compile(e, name, NULL));
    char expect[128];
    snprintf(expect, sizeof expect, "CUJIT_PCH='%s' is not understood", bad[i]);
    cr_assert(strstr(said, expect), "'%s': %s", bad[i], said);
    cr_assert(strstr(said, "it takes off, on or auto; auto is used"), "%s", said);
    counts(e, 0, 0, "auto, a small header"); /* auto: this header is not heavy */
    cujit_close(e);
  }
}

/* auto (and unset): a small user header runs without PCH, cujit's device library with it; off:
** never; a kernel's unit (it starts with cujit's #line) and line info: never, even with on. */
Test(pch, each_value) {
  cj_scratch_write("inc/h.h", header_a);
  static const char *const modes[] = {NULL, "auto", "off"};
  static const char *random_h = "#include <cujit/random.h>\n";
  for (size_t i = 0; i < 3; i++) {
    if (modes[i])
      setenv("CUJIT_PCH", modes[i], 1);
    else
      unsetenv("CUJIT_PCH");
    cujit_engine *e = open_engine();
    char said[512] = "";
    cujit_set_warning_handler(e, keep_warning, said);
    cujit_program_free(compile(e, "small", NULL));
    counts(e, 0, 0, "a small header");
    cujit_program_free(compile(e, "library", random_h));
    int on = i < 2;
    counts(e, on, 0, "cujit's device library");
    cujit_program_free(compile(e, "library2", random_h));
    counts(e, on, on, "cujit's device library again");
    cr_assert_eq(said[0], '\0', "%s", said);
    cujit_close(e);
  }
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(e, "unit(float *x)", "x[0] = 1;", random_h, &o, &k), CUJIT_OK,
               "%s", cujit_errmsg(e));
  cujit_kernel_free(k);
  counts(e, 0, 0, "a kernel's unit");
  setenv("CUJIT_LINEINFO", "on", 1);
  cujit_program_free(compile(e, "lined", NULL));
  counts(e, 0, 0, "line info on");
  unsetenv("CUJIT_LINEINFO");
  const char *flags[] = {"--generate-line-info"}, *dirs[] = {inc_dir()};
  o.extra_flags = flags, o.extra_flag_count = 1, o.include_dirs = dirs, o.include_dir_count = 1;
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(e, "#include \"h.h\"\nextern \"C\" __global__ void g() {}\n",
                                     "g.cu", &o, &p),
               CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_program_free(p);
  counts(e, 0, 0, "line info in NVRTC's long spelling");
  cujit_program_free(compile(e, "unlined", NULL));
  counts(e, 1, 0, "line info off again");
  cujit_close(e);
}

/* auto reads the #includes of the program's own text (the source and the user's headers), not
** the toolkit's: <cuda_fp16.h> (fast for NVRTC, though it names libcu++ under an #if NVRTC never
** takes) is not worth a PCH, nor cujit's own library programs; <cujit/random.h> named by a user
** header is. */
Test(pch, auto_reads_the_programs_own_includes) {
  setenv("CUJIT_PCH", "auto", 1);
  cujit_engine *e = open_engine();
  cj_scratch_write("inc/h.h", header_a);
  cujit_program_free(compile(e, "fp16", "#include <cuda_fp16.h>\n"));
  counts(e, 0, 0, "<cuda_fp16.h>");
  cujit_program_free(
      compile(e, "library", "#define CJ_RANDOM 1\n#include <cujit/library_kernels.h>\n"));
  counts(e, 0, 0, "cujit's own library program");
  cj_scratch_write("inc/h.h", "#pragma once\n#include <cujit/random.h>\n#define VAL 1.0f\n"
                              "__device__ int hv() { return 1; }\n");
  cujit_program_free(compile(e, "indirect", NULL));
  counts(e, 1, 0, "<cujit/random.h> from a user header");
  /* a header whose last line is blanks without a newline: read to its end, not past it */
  cj_scratch_write("inc/h.h", "#pragma once\n#include <cujit/random.h>\n#define VAL 2.0f\n"
                              "__device__ int hv() { return 2; }\n \t ");
  cujit_program_free(compile(e, "trailing_blanks", NULL));
  counts(e, 2, 0, "<cujit/random.h> from a header ending in blanks");
  cujit_close(e);
}

/* auto: a user header of at least 64 KiB and four times the source's text is worth a PCH; the
** same header under a source a third of its size is not. */
Test(pch, auto_header_text_dominates) {
  static char text[100000], prefix[40000];
  int at = snprintf(text, sizeof text, "#pragma once\n#define VAL 1.0f\n");
  for (int i = 0; at < 70000; i++)
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "__device__ inline int f%04d() { return %d; }\n", i, i);
  snprintf(text + at, sizeof text - (size_t)at, "__device__ int hv() { return f0001(); }\n");
  cj_scratch_write("inc/h.h", text);
  setenv("CUJIT_PCH", "auto", 1);
  cujit_engine *e = open_engine();
  cujit_program_free(compile(e, "big_header", NULL));
  counts(e, 1, 0, "a 70 KB header, a small source");
  at = snprintf(prefix, sizeof prefix, "/*");
  while (at < 24000) at += snprintf(prefix + at, sizeof prefix - (size_t)at, " a long comment");
  snprintf(prefix + at, sizeof prefix - (size_t)at, " */\n");
  cujit_program_free(compile(e, "big_source", prefix));
  counts(e, 1, 0, "a 70 KB header, a 24 KB source");
  cujit_close(e);
}

/* A header edited after a PCH was made from it: the next compile in the same process sees the
** edit (NVRTC alone would take the old PCH: it cannot see a header given in memory change). */
Test(pch, edited_header_is_seen) {
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  cujit_program_free(compile(e, "before", NULL));
  counts(e, 1, 0, "before the edit");
  cj_scratch_write("inc/h.h", header_b);
  cujit_program *after = compile(e, "after", NULL);
  counts(e, 2, 0, "after the edit: a PCH of its own");
  const char *ptx = cujit_program_ptx(after, NULL);
  /* VAL + hv(): 7.25f + 2 = 9.25f (bits 1091829760) after the edit, 1.5f + 1 = 2.5f
  ** (1075838976) before */
  cr_assert(strstr(ptx, "1091829760"), "the edit is not seen:\n%s", ptx);
  cr_assert_null(strstr(ptx, "1075838976"), "the old header was used");
  setenv("CUJIT_PCH", "off", 1);
  cujit_engine *plain = open_engine();
  cujit_program *after_plain = compile(plain, "after", NULL);
  same_bytes(after, after_plain, "after the edit");
  cujit_program_free(after), cujit_program_free(after_plain);
  cujit_close(e);
  cujit_close(plain);
}

/* Each engine has its own directory, 0700 under TMPDIR, made at its first PCH compile and
** removed with everything in it at cujit_close. */
Test(pch, private_directory_removed_at_close) {
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *a = open_engine(), *b = open_engine();
  cr_assert_null(cj_pch_dir(a), "made before any compile");
  cujit_program_free(compile(a, "ina", NULL));
  cujit_program_free(compile(b, "inb", NULL));
  counts(a, 1, 0, "engine a"), counts(b, 1, 0, "engine b: no PCH of a's");
  char da[512], db[512];
  snprintf(da, sizeof da, "%s", cj_pch_dir(a));
  snprintf(db, sizeof db, "%s", cj_pch_dir(b));
  cr_assert_str_neq(da, db);
  const char *tmp = getenv("TMPDIR");
  cr_assert(tmp && strncmp(da, tmp, strlen(tmp)) == 0, "%s is not under TMPDIR %s", da, tmp);
  struct stat st;
  cr_assert_eq(lstat(da, &st), 0);
  cr_assert(S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "mode %o", st.st_mode & 0777);
  cujit_close(a);
  cr_assert_neq(lstat(da, &st), 0, "%s is still there after cujit_close", da);
  cr_assert_eq(lstat(db, &st), 0, "closing one engine removed another's directory");
  cujit_close(b);
  cr_assert_neq(lstat(db, &st), 0, "%s is still there after cujit_close", db);
}

static int subdirs(const char *path) {
  DIR *d = opendir(path);
  cr_assert_not_null(d, "%s", path);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* A header edited again and again (a session): the engine keeps the directories of its 8 header
** sets used last (each PCH is about 100 MB), the oldest going first. */
Test(pch, header_sets_are_bounded) {
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  char text[256], name[32];
  for (int i = 0; i < 10; i++) {
    snprintf(text, sizeof text,
             "#pragma once\n#define VAL %d.0f\n__device__ int hv() { return 0; }\n", i);
    cj_scratch_write("inc/h.h", text);
    snprintf(name, sizeof name, "edit%d", i);
    cujit_program_free(compile(e, name, NULL));
  }
  counts(e, 10, 0, "ten header sets");
  cr_assert_eq(subdirs(cj_pch_dir(e)), 8, "%d directories of header sets", subdirs(cj_pch_dir(e)));
  cujit_program_free(compile(e, "edit9_again", NULL)); /* the last set: still there */
  counts(e, 10, 1, "the last set again");
  cj_scratch_write("inc/h.h",
                   "#pragma once\n#define VAL 0.0f\n__device__ int hv() { return 0; }\n");
  cujit_program_free(compile(e, "edit0_again", NULL)); /* the first: gone, made again */
  counts(e, 11, 1, "the first set again");
  cr_assert_eq(subdirs(cj_pch_dir(e)), 8);
  cujit_close(e);
}

/* A child of fork() that compiles makes a directory of its own, and its cujit_close leaves its
** parent's alone. */
Test(pch, forked_child_has_its_own_directory) {
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  cujit_program_free(compile(e, "parent", NULL));
  char parent[512];
  snprintf(parent, sizeof parent, "%s", cj_pch_dir(e));
  int pipefd[2];
  cr_assert_eq(pipe(pipefd), 0);
  pid_t child = fork();
  if (child == 0) { /* plain exits: Criterion's assertions belong to the parent */
    cujit_program *p = NULL;
    const char *dirs[] = {inc_dir()};
    cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
    o.arch = "sm_90", o.include_dirs = dirs, o.include_dir_count = 1;
    int ok = cujit_program_compile(e,
                                   "#include \"h.h\"\nextern \"C\" __global__ void c(float *x) "
                                   "{ x[0] = VAL; }\n",
                                   "child.cu", &o, &p) == CUJIT_OK;
    const char *mine = cj_pch_dir(e);
    char line[600];
    snprintf(line, sizeof line, "%d %s", ok, mine ? mine : "(none)");
    if (write(pipefd[1], line, strlen(line) + 1) < 0) _exit(2);
    cujit_program_free(p);
    cujit_close(e);
    _exit(0);
  }
  close(pipefd[1]);
  char got[600] = "";
  cr_assert_gt(read(pipefd[0], got, sizeof got - 1), 0);
  int status;
  cr_assert_eq(waitpid(child, &status, 0), child);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  cr_assert_eq(strncmp(got, "1 ", 2), 0, "the child: %s", got);
  cr_assert_str_neq(got + 2, parent, "the child used its parent's directory");
  cr_assert_str_neq(got + 2, "(none)");
  struct stat st;
  cr_assert_eq(lstat(parent, &st), 0, "the child's cujit_close removed its parent's directory");
  cr_assert_neq(lstat(got + 2, &st), 0, "the child's directory outlived its cujit_close");
  cujit_close(e);
}

/* The roots a killed process left ($TMPDIR/cujit-pch-<pid namespace>-<pid>-XXXXXX) go at the
** first PCH compile of a later process; a live process's, a name not exactly so and one another
** mode than 0700 stay. */
Test(pch, dead_processes_roots_are_collected) {
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  cr_assert_eq(waitpid(dead, NULL, 0), dead);
  const char *tmp = getenv("TMPDIR");
  cr_assert(tmp && *tmp);
  unsigned long long ns = cj_pid_namespace();
  char paths[4][600];
  snprintf(paths[0], sizeof paths[0], "%s/cujit-pch-%llu-%ld-Ab3xYz", tmp, ns, (long)dead);
  snprintf(paths[1], sizeof paths[1], "%s/cujit-pch-%llu-%ld-Ab3xYz", tmp, ns, (long)getppid());
  snprintf(paths[2], sizeof paths[2], "%s/cujit-pch-%llu-%ld-Ab3x", tmp, ns, (long)dead);
  snprintf(paths[3], sizeof paths[3], "%s/cujit-pch-%llu-%ld-Cd4xYz", tmp, ns, (long)dead);
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(mkdir(paths[i], i == 3 ? 0755 : 0700), 0, "%s", paths[i]);
    cr_assert_eq(chmod(paths[i], i == 3 ? 0755 : 0700), 0);
    char sub[3200];
    snprintf(sub, sizeof sub, "%s/0123456789abcdef0123456789abcdef", paths[i]);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/0123456789abcdef0123456789abcdef/k_0.pch", paths[i]);
    FILE *f = fopen(sub, "w");
    cr_assert_not_null(f);
    fputs("pch", f);
    fclose(f);
  }
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  cujit_program_free(compile(e, "collector", NULL));
  counts(e, 1, 0, "a PCH compile");
  struct stat st;
  cr_assert_neq(lstat(paths[0], &st), 0, "a dead process's root was left");
  for (int i = 1; i < 4; i++) {
    cr_assert_eq(lstat(paths[i], &st), 0, "%s was removed", paths[i]);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", paths[i]);
    cr_assert_eq(system(cmd), 0);
  }
  cujit_close(e);
}

/* A heap too small for the PCH: the compile succeeds without one and without NVRTC's warning, the
** heap is grown to what NVRTC asked for, and the next compile makes the PCH. */
Test(pch, heap_too_small_is_grown) {
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *e = open_engine();
  void *lib = dlopen(getenv("CUJIT_NVRTC"), RTLD_NOW | RTLD_NOLOAD); /* the one cujit opened */
  cr_assert_not_null(lib, "%s", dlerror());
  nvrtcResult (*set)(size_t), (*get)(size_t *);
  *(void **)&set = dlsym(lib, "nvrtcSetPCHHeapSize");
  *(void **)&get = dlsym(lib, "nvrtcGetPCHHeapSize");
  cr_assert(set && get);
  cr_assert_eq(set(1 << 20), NVRTC_SUCCESS);
  cujit_program *p = compile(e, "small_heap", NULL);
  counts(e, 0, 0, "a heap of 1 MiB");
  cr_assert_null(strstr(cujit_program_log(p), "preallocated"), "%s", cujit_program_log(p));
  size_t heap = 0;
  cr_assert_eq(get(&heap), NVRTC_SUCCESS);
  cr_assert_gt(heap, (size_t)1 << 20, "the heap was not grown");
  cujit_program_free(p);
  cujit_program_free(compile(e, "grown_heap", NULL));
  counts(e, 1, 0, "the heap grown");
  dlclose(lib);
  cujit_close(e);
}

/* An NVRTC without the PCH calls (older than 12.8; the stand-in exports none of them) compiles as
** before, with no PCH and no warning. */
Test(pch, nvrtc_without_pch_calls) {
  cj_scratch_write("inc/h.h", header_a);
  setenv("CUJIT_PCH", "on", 1);
  cujit_engine *plain = open_engine();
  setenv("CUJIT_NVRTC", CJ_TEST_NVRTC_FAILING, 1);
  cujit_engine *e = open_engine();
  char said[512] = "";
  cujit_set_warning_handler(e, keep_warning, said);
  cujit_program *p = compile(e, "standin", NULL), *q = compile(e, "standin2", NULL);
  counts(e, 0, 0, "an NVRTC without the PCH calls");
  cr_assert_eq(said[0], '\0', "%s", said);
  cr_assert_null(cj_pch_dir(e));
  setenv("CUJIT_PCH", "off", 1);
  cujit_program *r = compile(plain, "standin", NULL);
  same_bytes(p, r, "the stand-in NVRTC");
  cujit_program_free(p), cujit_program_free(q), cujit_program_free(r);
  cujit_close(e);
  cujit_close(plain);
}

/* The toolkit's cooperative groups under auto: a PCH made, then used by a second kernel, whose
** CUBIN is the one a compile without PCH makes. (Seconds of NVRTC: the one heavy header here.) */
/* LeakSanitizer's own check at exit (the sanitizer build's) crashed in its tracer ("Tracer caught
** signal 11", no leak reported) stopping this case's threads after NVRTC had compiled
** <cooperative_groups.h> through a PCH, in every run of CI's sanitizer suite, also alone. The case
** makes the leak check before that compile instead (LeakSanitizer then makes none at exit):
** AddressSanitizer and UBSan still check all of it, LeakSanitizer every other case. */
extern void __lsan_do_leak_check(void) __attribute__((weak));

Test(pch, cooperative_groups_auto, .timeout = 300) {
  if (__lsan_do_leak_check) __lsan_do_leak_check();
  cujit_engine *e = open_engine();
  static const char *cg = "#include <cooperative_groups.h>\n"
                          "namespace cg = cooperative_groups;\n"
                          "extern \"C\" __global__ void %s(float *x) {\n"
                          "  cg::thread_block b = cg::this_thread_block();\n"
                          "  x[b.thread_rank()] *= %d.0f;\n"
                          "  b.sync();\n"
                          "}\n";
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  char src[512];
  cujit_program *p[3];
  cujit_engine *plain = NULL; /* the third compile: another engine, PCH off */
  for (int i = 0; i < 3; i++) {
    if (i == 2) setenv("CUJIT_PCH", "off", 1), plain = open_engine();
    snprintf(src, sizeof src, cg, i ? "cg_second" : "cg_first", i ? 3 : 2);
    cujit_engine *in = i == 2 ? plain : e;
    cr_assert_eq(cujit_program_compile(in, src, i ? "cg_second.cu" : "cg_first.cu", &o, &p[i]),
                 CUJIT_OK, "%s", cujit_errmsg(in));
    counts(in, i < 2, i == 1, i ? "the second kernel" : "the first kernel");
  }
  same_bytes(p[1], p[2], "cooperative groups through a PCH");
  for (int i = 0; i < 3; i++) cujit_program_free(p[i]);
  cujit_close(e);
  cujit_close(plain);
}

/* On the GPU: kernels compiled through a PCH (cooperative groups, for the device's own arch), the
** second using the first's, run and give what they compute. */
Test(pch, kernels_through_a_pch_run_on_the_gpu, .timeout = 300) {
  setenv("CUJIT_PCH", "auto", 1);
  cujit_engine *e = open_engine();
  CJ_NEED_GPU(e);
  static const char *src = "#include <cooperative_groups.h>\n"
                           "namespace cg = cooperative_groups;\n"
                           "extern \"C\" __global__ void %s(float *x, int n) {\n"
                           "  cg::thread_block b = cg::this_thread_block();\n"
                           "  int i = blockIdx.x * blockDim.x + b.thread_rank();\n"
                           "  if (i < n) x[i] = x[i] * %d.0f + 1.0f;\n"
                           "  b.sync();\n"
                           "}\n";
  enum { n = 1000 };
  float host[n];
  for (int i = 0; i < n; i++) host[i] = (float)i;
  cujit_buffer *x;
  cr_assert_eq(cujit_buffer_alloc(e, n * sizeof(float), CUJIT_F32, &x), CUJIT_OK, "%s",
               cujit_errmsg(e));
  cr_assert_eq(cujit_memcpy_htod(x, 0, host, sizeof host, NULL), CUJIT_OK);
  for (int k = 2; k <= 3; k++) {
    char text[1024], name[32], file[40];
    snprintf(name, sizeof name, "gpu_cg%d", k);
    snprintf(file, sizeof file, "%s.cu", name);
    snprintf(text, sizeof text, src, name, k);
    cujit_program *p;
    cr_assert_eq(cujit_program_compile(e, text, file, NULL, &p), CUJIT_OK, "%s", cujit_errmsg(e));
    cujit_kernel *kern;
    cr_assert_eq(cujit_program_kernel(p, name, &kern), CUJIT_OK, "%s", cujit_errmsg(e));
    cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(n)};
    cr_assert_eq(cujit_launch_n(kern, n, NULL, args, 2), CUJIT_OK, "%s", cujit_errmsg(e));
    cujit_kernel_free(kern);
    cujit_program_free(p);
  }
  counts(e, 1, 1, "two kernels including <cooperative_groups.h>");
  cr_assert_eq(cujit_memcpy_dtoh(host, x, 0, sizeof host, NULL), CUJIT_OK, "%s", cujit_errmsg(e));
  for (int i = 0; i < n; i++) /* (i * 2 + 1) * 3 + 1 */
    cr_assert_eq(host[i], (float)((i * 2 + 1) * 3 + 1), "x[%d] = %g", i, host[i]);
  cujit_buffer_free(x);
  cujit_close(e);
}
