/*
** test_std_headers.c -- the stand-in standard headers NVRTC lacks (kernels_src/std/, includes.c):
** the resolver hands one over only where no file answers the name, as cujit/std/NAME, its bytes
** in the key; a user's header of the same name wins; host-only headers are refused at the
** user's line; NDEBUG is read at each <assert.h>. Compiles for sm_90 (NVRTC, no GPU needed).
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "base/base.h"
#include "compile/includes.h"
#include "cujit.h"

static char dir[256];

static void setup(void) {
  cr_assert_lt(snprintf(dir, sizeof dir, "%s", cj_scratch_with_cache("std_headers")),
               (int)sizeof dir);
}

static void teardown(void) {
  cj_scratch_remove();
}

TestSuite(std_headers, .init = setup, .fini = teardown, .timeout = 300);

static const char *standin_text(const char *name) {
  for (size_t i = 0; i < cj_std_header_count; i++)
    if (strcmp(cj_std_header_names[i], name) == 0) return cj_std_header_sources[i];
  cr_assert_fail("no stand-in named %s", name);
  return NULL;
}

static const char *header_text(const cj_includes *inc, const char *name) {
  for (size_t i = 0; i < inc->header_count; i++)
    if (strcmp(inc->header_names[i], name) == 0) return inc->header_sources[i];
  return NULL;
}

static size_t lines(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* Resolves `source` (named dir/k.cu) with the embedded stand-ins, or none, and the flags. */
static void resolve(const char *source, int standins, const char *const *flags, size_t nflags,
                    const char *system_dir, cj_includes *inc) {
  cj_include_request rq = {.source = source,
                           .name = cj_scratch_path("k.cu"),
                           .flags = flags,
                           .flag_count = nflags,
                           .system_dir = system_dir};
  if (standins) {
    rq.standin_names = cj_std_header_names;
    rq.standin_sources = cj_std_header_sources;
    rq.standin_count = cj_std_header_count;
  }
  cr_assert_eq(cj_includes_resolve(&rq, inc), 1);
  cr_assert_eq(inc->cacheable, 1, "%s", inc->why);
}

static const char *const SOURCE = "#include <stdint.h>\n"
                                  "#include \"cmath\"\n"
                                  "#if __has_include(<cstdint>) && !__has_include(<vector>)\n"
                                  "#endif\n"
                                  "#ifdef HOST_ONLY\n"
                                  "#  include <vector> // the host's\n"
                                  "#endif\n"
                                  "__global__ void k(int32_t *p) { *p = 1; }\n";

Test(std_headers, handed_over_under_their_own_name_where_no_file_answers) {
  cj_includes inc;
  resolve(SOURCE, 1, NULL, 0, NULL, &inc);
  cr_assert(strstr(inc.source, "#include <cujit/std/stdint.h>\n"), "%s", inc.source);
  cr_assert(strstr(inc.source, "#include \"cujit/std/cmath\"\n"), "%s", inc.source);
  cr_assert(strstr(inc.source, "__has_include(<cujit/std/cstdint>)"), "%s", inc.source);
  cr_assert(strstr(inc.source, "!__has_include(<vector>)"), "no stand-in answers a host-only name");
  cr_assert(strstr(inc.source, "#  include <cujit/std/host/vector> // the host's\n"),
            "a host-only header gets its host-only stand-in: %s", inc.source);
  cr_assert_not_null(header_text(&inc, "cujit/std/host/__cujit_host_only.h"),
                     "and what it includes");
  cr_assert_eq(lines(inc.source), lines(SOURCE), "line numbers unchanged");
  cr_assert_str_eq(header_text(&inc, "cujit/std/stdint.h"), standin_text("stdint.h"),
                   "the very bytes embedded are handed over (and hashed)");
  cr_assert(strstr(header_text(&inc, "cujit/std/cmath"), "#include <cujit/std/math.h>"),
            "a stand-in's own includes resolve the same way");
  cr_assert_null(header_text(&inc, "stdint.h"), "never under the name the user wrote");
  cj_includes_free(&inc);

  /* Without stand-ins (the CPU device: g++ has the host's headers), nothing changes. */
  resolve(SOURCE, 0, NULL, 0, NULL, &inc);
  cr_assert_str_eq(inc.source, SOURCE);
  cr_assert_eq(inc.header_count, 0);
  cj_includes_free(&inc);

  /* A source that includes none of them costs nothing: no header handed over. */
  resolve("__global__ void k(int *p) { *p = 1; }\n", 1, NULL, 0, NULL, &inc);
  cr_assert_eq(inc.header_count, 0);
  cj_includes_free(&inc);
}

Test(std_headers, none_for_what_the_toolkit_names_in_branches_nvrtc_skips) {
  /* The toolkit's headers name <cstdint>, <utility> where NVRTC never goes: a stand-in there
  ** would drag libcu++ into every key and manifest (cuda_fp16.h: 16 files would become 257). */
  const char *text = "#ifndef __CUDACC_RTC__\n#include <cstdint>\n#include <vector>\n#endif\n";
  cj_scratch_write("tk/tk.h", text);
  cj_scratch_write("mine/mine.h", text);
  cj_includes inc;
  resolve("#include <tk.h>\n", 1, NULL, 0, cj_scratch_path("tk"), &inc);
  cr_assert_eq(inc.header_count, 1, "the toolkit's header alone");
  cj_includes_free(&inc);
  char flag[600];
  snprintf(flag, sizeof flag, "-I%s", cj_scratch_path("mine"));
  const char *flags[] = {flag};
  resolve("#include <mine.h>\n", 1, flags, 1, cj_scratch_path("tk"), &inc);
  cr_assert_not_null(header_text(&inc, "cujit/std/cstdint"), "a user's header gets them");
  cr_assert_not_null(header_text(&inc, "cujit/std/host/vector"));
  cj_includes_free(&inc);
}

Test(std_headers, a_user_header_of_the_same_name_wins_and_changes_the_key) {
  cj_includes standin, user, changed;
  resolve(SOURCE, 1, NULL, 0, NULL, &standin);

  cj_scratch_write("inc/stdint.h", "typedef int int32_t;\n");
  char flag[600];
  snprintf(flag, sizeof flag, "--include-path=%s", cj_scratch_path("inc"));
  const char *flags[] = {flag};
  resolve(SOURCE, 1, flags, 1, NULL, &user);
  char real[4096], want[4200];
  cr_assert_not_null(realpath(cj_scratch_path("inc/stdint.h"), real));
  snprintf(want, sizeof want, "#include <%s>\n", real);
  cr_assert(strstr(user.source, want), "the user's file: %s", user.source);
  cr_assert_null(header_text(&user, "cujit/std/stdint.h"));
  cr_assert_neq(memcmp(standin.digest, user.digest, 16), 0, "another header, another key");

  /* The stand-in's bytes are in the key: the same request with one stand-in changed. */
  const char **srcs = malloc(cj_std_header_count * sizeof *srcs);
  cr_assert_not_null(srcs);
  for (size_t i = 0; i < cj_std_header_count; i++)
    srcs[i] = strcmp(cj_std_header_names[i], "stdint.h") == 0 ? "typedef int int32_t;\n"
                                                              : cj_std_header_sources[i];
  cj_include_request rq = {.source = SOURCE,
                           .name = cj_scratch_path("k.cu"),
                           .standin_names = cj_std_header_names,
                           .standin_sources = srcs,
                           .standin_count = cj_std_header_count};
  cr_assert_eq(cj_includes_resolve(&rq, &changed), 1);
  cr_assert_neq(memcmp(standin.digest, changed.digest, 16), 0, "a changed stand-in, another key");
  cj_includes again;
  resolve(SOURCE, 1, NULL, 0, NULL, &again);
  cr_assert_eq(memcmp(standin.digest, again.digest, 16), 0, "and the same request, the same key");
  free(srcs);
  cj_includes_free(&again);
  cj_includes_free(&changed);
  cj_includes_free(&user);
  cj_includes_free(&standin);
}

Test(std_headers, a_toolkit_standin_comes_before_the_toolkit_but_after_include_dirs) {
  cj_scratch_write("toolkit/cuda_profiler_api.h", "extern __host__ int cudaProfilerStart(void);\n");
  cj_scratch_write("mine/cuda_profiler_api.h", "#define MINE 1\n");
  const char *src = "#include <cuda_profiler_api.h>\n";
  cj_includes inc;
  resolve(src, 1, NULL, 0, cj_scratch_path("toolkit"), &inc);
  cr_assert_str_eq(inc.source, "#include <cujit/std/toolkit/cuda_profiler_api.h>\n");
  cj_includes_free(&inc);
  char flag[600], real[4096], want[4200];
  snprintf(flag, sizeof flag, "-I%s", cj_scratch_path("mine"));
  const char *flags[] = {flag};
  resolve(src, 1, flags, 1, cj_scratch_path("toolkit"), &inc);
  cr_assert_not_null(realpath(cj_scratch_path("mine/cuda_profiler_api.h"), real));
  snprintf(want, sizeof want, "#include <%s>\n", real);
  cr_assert_str_eq(inc.source, want);
  cj_includes_free(&inc);
  resolve(src, 0, NULL, 0, cj_scratch_path("toolkit"), &inc); /* without stand-ins: the toolkit's */
  cr_assert_not_null(realpath(cj_scratch_path("toolkit/cuda_profiler_api.h"), real));
  snprintf(want, sizeof want, "#include <%s>\n", real);
  cr_assert_str_eq(inc.source, want);
  cj_includes_free(&inc);
}

/* --- through NVRTC ---------------------------------------------------------------------------- */

static cujit_engine *open_engine(void) {
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  int v;
  if (cujit_nvrtc_version(e, &v) != CUJIT_OK) cr_skip_test("no NVRTC: %s", cujit_errmsg(e));
  return e;
}

/* Compiles for sm_90 with a fresh engine; returns the status, the message in msg. */
static cujit_status compile(const char *source, const cujit_compile_options *op, char *msg,
                            size_t size, int *from_cache, char *ptx, size_t ptx_size) {
  cujit_engine *e = open_engine();
  cujit_program *p = NULL;
  cujit_status st = cujit_program_compile(e, source, "k.cu", op, &p);
  snprintf(msg, size, "%s", st == CUJIT_OK ? "" : cujit_errmsg(e));
  if (st == CUJIT_OK) {
    if (from_cache) *from_cache = cujit_program_from_cache(p);
    if (ptx) snprintf(ptx, ptx_size, "%s", cujit_program_ptx(p, NULL));
    cujit_program_free(p);
  }
  cujit_close(e);
  return st;
}

static const cujit_compile_options sm90 = {.size = sizeof(cujit_compile_options), .arch = "sm_90"};

Test(std_headers, every_standin_compiles_and_a_users_header_wins) {
  /* A kernel that stores VALUE: 11 with the stand-in <stdint.h>, the user's own VALUE where
  ** include_dirs has a stdint.h; each program its own cache entry. */
  const char *src =
      "#include <stdio.h>\n#include <cstdio>\n#include <assert.h>\n#include <cassert>\n"
      "#include <stdint.h>\n#include <cstdint>\n#include <stddef.h>\n"
      "#include <cstddef>\n#include <limits.h>\n#include <climits>\n"
      "#include <float.h>\n#include <cfloat>\n#include <math.h>\n#include <cmath>\n"
      "#include <string.h>\n#include <cstring>\n#include <stdlib.h>\n"
      "#include <cstdlib>\n#include <time.h>\n#include <ctime>\n"
      "#include <cuda_runtime.h>\n#include <cuda_runtime_api.h>\n"
      "#include <cuda_profiler_api.h>\n#include <device_launch_parameters.h>\n"
      "#include <type_traits>\n#include <utility>\n#include <limits>\n"
      "#include <array>\n#include <tuple>\n#include <functional>\n"
      "#include <initializer_list>\n"
      "#ifndef VALUE\n#define VALUE 11\n#endif\n"
      "static_assert(CUDART_VERSION >= 12000, \"the toolkit's cuda_runtime.h\");\n"
      "extern \"C\" __global__ void k(std::int32_t *p) {\n"
      "  std::array<int, 2> a = {VALUE, 0};\n"
      "  *p = std::get<0>(std::make_tuple(a[0], INT_MAX)) + (int)std::floor(0.5f);\n"
      "  assert(*p > 0);\n}\n";
  char msg[8192], ptx[65536];
  int cached = -1;
  cujit_status st = compile(src, &sm90, msg, sizeof msg, &cached, ptx, sizeof ptx);
  cr_assert_eq(st, CUJIT_OK, "%s", msg);
  cr_assert_eq(cached, 0);
  cr_assert(strstr(ptx, ", 11;"), "the stand-in's VALUE: %s", ptx);

  /* the project's own stdint.h (a whole one: <cstdint> builds on it) */
  cj_scratch_write("inc/stdint.h", "#include <cuda/std/cstdint>\n#define VALUE 22\n");
  const char *dirs[] = {cj_scratch_path("inc")};
  cujit_compile_options op = {.size = sizeof(cujit_compile_options),
                              .arch = "sm_90",
                              .include_dirs = dirs,
                              .include_dir_count = 1};
  st = compile(src, &op, msg, sizeof msg, &cached, ptx, sizeof ptx);
  cr_assert_eq(st, CUJIT_OK, "%s", msg);
  cr_assert_eq(cached, 0, "the user's header: another key");
  cr_assert(strstr(ptx, ", 22;"), "the user's stdint.h won: %s", ptx);

  st = compile(src, &sm90, msg, sizeof msg, &cached, ptx, sizeof ptx);
  cr_assert_eq(st, CUJIT_OK, "%s", msg);
  cr_assert_eq(cached, 1, "the stand-in program again: a hit");
  cr_assert(strstr(ptx, ", 11;"), "%s", ptx);
}

Test(std_headers, every_embedded_standin_compiles_together) {
  /* Each stand-in kernels_src/std/ holds, by the name code includes it by: none may break NVRTC,
  ** alone or beside the others (a typedef or macro two of them both define). */
  cj_buf b = {0};
  for (size_t i = 0; i < cj_std_header_count; i++) {
    const char *nm = cj_std_header_names[i];
    if (strncmp(nm, "toolkit/", 8) == 0) nm += 8;
    if (strncmp(nm, "host/", 5) == 0) nm += 5;
    cj_buf_printf(&b, "#include <%s>\n", nm);
  }
  cj_buf_puts(&b, "extern \"C\" __global__ void k(long long *p) {\n"
                  "  p[0] = std::min<long long>(INT64_MAX, LLONG_MAX) + sizeof(std::int8_t);\n}\n");
  cr_assert(!b.failed);
  char msg[8192];
  cujit_status st = compile(b.data, &sm90, msg, sizeof msg, NULL, NULL, 0);
  cr_assert_eq(st, CUJIT_OK, "%s\n%s", b.data, msg);
  cj_buf_free(&b);
}

Test(std_headers, a_host_only_header_compiles_until_device_code_uses_it) {
  char msg[8192];
  /* included for the host code, as a sample's main file does: the host declarations and
  ** definitions that use them are elided (docs/cuda-code.md, "Host code"), so it compiles */
  const char *host =
      "#include <cstdio>\n#include <iostream>\n#include <vector>\n#include <string>\n"
      "#include <algorithm>\n#include <unistd.h>\n"
      "void report(const std::vector<float> *v); // a host declaration's types\n"
      "static std::string describe(const std::vector<int> &v) {\n"
      "  std::cout << v.size();\n  return std::string(\"ok\");\n}\n"
      "extern \"C\" __global__ void k(int *p) { *p = std::max(p[1], 2); }\n";
  cujit_status st = compile(host, &sm90, msg, sizeof msg, NULL, NULL, 0);
  cr_assert_eq(st, CUJIT_OK, "host code using host-only headers is elided: %s", msg);
  /* a host function the kernel calls stays (cujit cannot decide): NVRTC names its use */
  const char *both = "#include <vector>\n"
                     "static int count(int n) { std::vector<int> v(n); return (int)v.size(); }\n"
                     "extern \"C\" __global__ void k(int *p) { *p = count(p[1]); }\n";
  st = compile(both, &sm90, msg, sizeof msg, NULL, NULL, 0);
  cr_assert_eq(st, CUJIT_ERROR_COMPILE, "a host function device code calls is kept");
  cr_assert(strstr(msg, "k.cu:2:"), "at the host function, not at a header: %s", msg);
  cr_assert(strstr(msg, "<vector> is a host-only header"), "%s", msg);
  const char *device =
      "#include <cstdio>\n#include <iostream>\n#include <vector>\n#include <string>\n"
      "#include <algorithm>\n#include <unistd.h>\n"
      "extern \"C\" __global__ void k(int *p) { *p = std::max(p[1], 2); }\n";
  st = compile(device, &sm90, msg, sizeof msg, NULL, NULL, 0);
  cr_assert_eq(st, CUJIT_OK, "unused host-only headers cost nothing: %s", msg);
  /* used in device code: fails naming the header, the user's line in NVRTC's log */
  const char *uses[][2] = {
      {"std::vector<int> v;", "<vector> is a host-only header: std::vector"},
      {"std::cout << *p;", "<iostream> is a host-only header: std::cout"},
      {"std::string s;", "<string> is a host-only header"},
      {"std::sort(p, p + 2);", "<algorithm> is a host-only header: std::sort"}};
  for (size_t i = 0; i < sizeof uses / sizeof *uses; i++) {
    char src[1024];
    snprintf(src, sizeof src,
             "#include <iostream>\n#include <vector>\n#include <string>\n#include <algorithm>\n"
             "extern \"C\" __global__ void k(int *p) {\n  %s\n}\n",
             uses[i][0]);
    st = compile(src, &sm90, msg, sizeof msg, NULL, NULL, 0);
    cr_assert_eq(st, CUJIT_ERROR_COMPILE, "%s: %s", uses[i][0], msg);
    cr_assert(strstr(msg, uses[i][1]), "%s: %s", uses[i][0], msg);
    cr_assert(strstr(msg, "#ifndef __CUDACC_RTC__"), "says what to do: %s", msg);
    cr_assert(strstr(msg, "at line 6 of k.cu"), "the use's line: %s", msg);
  }
}

Test(std_headers, assert_reads_ndebug_at_each_inclusion) {
  char msg[8192];
  const char *on = "#include <assert.h>\n"
                   "extern \"C\" __global__ void k(int *p) { assert(no_such_name); }\n";
  cujit_status st = compile(on, &sm90, msg, sizeof msg, NULL, NULL, 0);
  cr_assert_eq(st, CUJIT_ERROR_COMPILE, "assert(e) evaluates e: %s", msg);
  cr_assert(strstr(msg, "no_such_name"), "%s", msg);
  const char *off = "#include <cassert>\n#define NDEBUG\n#include <assert.h>\n"
                    "extern \"C\" __global__ void k(int *p) { assert(no_such_name); *p = 1; }\n";
  st = compile(off, &sm90, msg, sizeof msg, NULL, NULL, 0);
  cr_assert_eq(st, CUJIT_OK, "NDEBUG before the second <assert.h> turns it off: %s", msg);
}
