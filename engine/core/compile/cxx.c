/*
** cxx.c -- the CPU device's compiler: runs the system C++ compiler (CUJIT_CXX, default g++) on
** the translation unit cpu_source.c builds, in a private temporary directory that also holds the
** embedded <cujit/...> headers, and reads back the shared object. The compiler's first error is
** placed at the user's line through the #line directives, as NVRTC's errors are (source.c).
*/
#define _GNU_SOURCE /* pipe2 */
#include "cxx.h"
#include "cpu_source.h"
#include "cxx_pch.h"
#include "cxx_scratch.h"
#include "options.h"
#include "base/env.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_WORDS 16            /* in CUJIT_CXX ("ccache g++") */
#define MAX_ARGS 256            /* on one compiler command line */
#define MAX_OUTPUT (1 << 20)    /* of the compiler kept for the log; the rest is dropped */
#define MAX_OBJECT (256u << 20) /* a shared object bigger than this is refused */

/* Flags that do not depend on the program: part of the identity in the cache key.
** -U_FORTIFY_SOURCE: distributions that turn it on by default make glibc's longjmp refuse to
** jump onto another stack, which the block executor's fibers do. */
static const char *const plain_flags[] = {
    "-O2", "-fPIC", "-shared", "-pipe", "-w", "-U_FORTIFY_SOURCE", NULL};
static const char *const check_flags[] = {"-O1",
                                          "-fPIC",
                                          "-shared",
                                          "-pipe",
                                          "-w",
                                          "-U_FORTIFY_SOURCE",
                                          "-g",
                                          "-fno-omit-frame-pointer",
                                          "-fsanitize=address,undefined",
                                          "-fno-sanitize-recover=all",
                                          "-fstack-clash-protection",
                                          NULL};

/* --- running a tool ----------------------------------------------------------------------------
 */

typedef struct cxx_command {
  char text[PATH_MAX]; /* CUJIT_CXX as given, words split in place by the NULs */
  char *words[MAX_WORDS];
  int nwords;
} cxx_command;

static int command_from_env(cxx_command *c) {
  const char *env = getenv("CUJIT_CXX");
  snprintf(c->text, sizeof c->text, "%s", env && *env ? env : "g++");
  c->nwords = 0;
  for (char *p = strtok(c->text, " \t"); p && c->nwords < MAX_WORDS; p = strtok(NULL, " \t"))
    c->words[c->nwords++] = p;
  return c->nwords > 0;
}

/* Runs argv with stdout and stderr into *output (malloc'd, NUL-terminated, cut at MAX_OUTPUT).
** Returns 0 and the exit status, or an errno when the program could not be started. */
static int run_tool(char *const *argv, char *const *envp, char **output, int *exit_status) {
  int fds[2];
  *output = NULL;
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    return err;
  }
  cj_buf b = {0};
  char chunk[4096];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (b.len < MAX_OUTPUT) cj_buf_add(&b, chunk, (size_t)n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  *output = b.data ? b.data : cj_strdup("");
  return 0;
}

static cujit_status no_compiler(cujit_engine *engine, const cxx_command *c, int err) {
  if (err == ENOENT)
    return cj_fail(engine, CUJIT_ERROR_COMPILE,
                   "the CPU device compiles kernels with the system C++ compiler, and '%s' was "
                   "not found: install g++ (Debian/Ubuntu: apt-get install g++; Fedora: dnf "
                   "install gcc-c++) or set CUJIT_CXX to a C++17 compiler",
                   c->words[0]);
  return cj_fail(engine, CUJIT_ERROR_COMPILE,
                 "the CPU device could not run the C++ compiler '%s': %s; set CUJIT_CXX to a "
                 "C++17 compiler that can be run",
                 c->words[0], strerror(err));
}

/* --- the identity ------------------------------------------------------------------------------
 */

/* Held from the look-up to the store, `g++ --version` included: threads that make their first
** compile at once wait for the one that asks the compiler, instead of each asking and all but
** the last one's strings being lost. */
static pthread_mutex_t identity_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct cxx_identity {
  char command[PATH_MAX];
  char *text[2];             /* plain, check */
  struct cxx_identity *next; /* older ones (CUJIT_CXX changed): callers may still hold their text */
} cxx_identity;
static cxx_identity *known;

static char *make_identity(const char *version, const char *const *flags) {
  cj_buf b = {0};
  cj_buf_puts(&b, version);
  cj_buf_puts(&b, " |");
  for (size_t i = 0; flags[i]; i++) cj_buf_printf(&b, " %s", flags[i]);
  if (b.failed) cj_buf_free(&b);
  return b.data;
}

/* Asks the compiler its version and stores the identities; under identity_lock. */
static cujit_status ask_compiler(cujit_engine *engine, const cxx_command *c, const char *command) {
  char *argv[MAX_WORDS + 2];
  for (int i = 0; i < c->nwords; i++) argv[i] = c->words[i];
  argv[c->nwords] = "--version";
  argv[c->nwords + 1] = NULL;
  char *output;
  int status = 0, err = run_tool(argv, environ, &output, &status);
  if (err) return no_compiler(engine, c, err);
  if (status != 0) {
    cujit_status st = cj_fail(engine, CUJIT_ERROR_COMPILE,
                              "'%s --version' failed (exit status %d); set CUJIT_CXX to a C++17 "
                              "compiler. It said:\n%s",
                              c->words[0], status, output ? output : "");
    free(output);
    return st;
  }
  output[strcspn(output, "\n")] = '\0';
  cxx_identity *id = calloc(1, sizeof *id);
  char *plain = make_identity(output, plain_flags), *checked = make_identity(output, check_flags);
  free(output);
  if (!id || !plain || !checked) {
    free(id);
    free(plain);
    free(checked);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  snprintf(id->command, sizeof id->command, "%s", command);
  id->text[0] = plain, id->text[1] = checked;
  id->next = known; /* kept, and reachable: a change of CUJIT_CXX is rare */
  known = id;
  return CUJIT_OK;
}

cujit_status cj_cxx_identity(cujit_engine *engine, int check, const char **identity) {
  cxx_command c;
  *identity = NULL;
  if (check < 0) { /* a value of CUJIT_CPU_CHECK not understood: neither build is what was meant */
    char why[256];
    int on;
    cj_env_bool("CUJIT_CPU_CHECK", &on, why, sizeof why);
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s; the CPU device compiles nothing until it is one of those", why);
  }
  if (!command_from_env(&c))
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "CUJIT_CXX is blank: set it to a C++17 compiler such as g++, or unset it");
  const char *env = getenv("CUJIT_CXX");
  const char *command = env && *env ? env : "g++";
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&identity_lock);
  if (!known || strcmp(known->command, command) != 0) st = ask_compiler(engine, &c, command);
  if (st == CUJIT_OK) *identity = known->text[check ? 1 : 0];
  pthread_mutex_unlock(&identity_lock);
  return st;
}

/* --- the scratch directory ---------------------------------------------------------------------
 */

/* Past ulimit -f the write fails with EFBIG (cj_fsize_guard), and the compile says so. */
static int write_file(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  const char *p = data;
  int err = 0;
  cj_fsize limit;
  cj_fsize_guard(&limit);
  while (len > 0 && !err) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n > 0) p += n, len -= (size_t)n;
  }
  cj_fsize_release(&limit);
  if (close(fd) != 0 && !err) err = errno;
  return err;
}

/* Every embedded header under dir/include, so `#include <cujit/...>` finds it. */
static int write_headers(const char *dir) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/include", dir);
  if (mkdir(path, 0700) != 0) return errno;
  for (size_t i = 0; i < cj_embedded_header_count; i++) {
    const char *name = cj_embedded_header_names[i];
    if (snprintf(path, sizeof path, "%s/include/%s", dir, name) >= (int)sizeof path)
      return ENAMETOOLONG;
    for (char *slash = strchr(path + strlen(dir) + 9, '/'); slash; slash = strchr(slash + 1, '/')) {
      *slash = '\0';
      int made = mkdir(path, 0700) == 0 || errno == EEXIST;
      *slash = '/';
      if (!made) return errno;
    }
    const char *text = cj_embedded_header_sources[i];
    int err = write_file(path, text, strlen(text));
    if (err) return err;
  }
  return 0;
}

static int read_object(const char *path, void **data, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > MAX_OBJECT) {
    close(fd);
    return EFBIG;
  }
  char *buf = malloc((size_t)st.st_size);
  size_t got = 0;
  while (buf && got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (!buf || got != (size_t)st.st_size) {
    free(buf);
    return buf ? EIO : ENOMEM;
  }
  *data = buf, *len = got;
  return 0;
}

/* --- the command line --------------------------------------------------------------------------
 */

typedef struct arg_list {
  char *v[MAX_ARGS + 1];
  int n, owned_from; /* v[owned_from..n) were malloc'd here */
  int failed;
} arg_list;

static void arg_add(arg_list *a, const char *prefix, const char *value) {
  if (a->failed || a->n >= MAX_ARGS) {
    a->failed = 1;
    return;
  }
  size_t need = strlen(prefix) + (value ? strlen(value) : 0) + 1;
  char *s = malloc(need);
  if (!s) {
    a->failed = 1;
    return;
  }
  snprintf(s, need, "%s%s", prefix, value ? value : "");
  a->v[a->n++] = s;
  a->v[a->n] = NULL;
}

static void args_free(arg_list *a) {
  for (int i = a->owned_from; i < a->n; i++) free(a->v[i]);
}

/* How a unit is built. A fast-math unit is compiled (-c) and linked in two runs: g++ (12 and
** older) adds crtfastmath.o to any link given -ffast-math, -shared too, and its constructor turns
** on flush-to-zero for the thread that loads the object, the host's; on a GPU fast math belongs to
** the kernel (cpu_math.h's ftz_scope flushes during the kernel's own run only). */
enum { ONE_STEP, COMPILE_ONLY, LINK_ONLY, MAKE_PCH };

/* The flags a PCH is made with and keyed by: all but the unit's own -I, -D and -U (g++ checks
** those macros against the PCH itself; cxx_pch.h). */
static int pch_flag(const char *flag) {
  return strncmp(flag, "-I", 2) != 0 && strncmp(flag, "-D", 2) != 0 && strncmp(flag, "-U", 2) != 0;
}

/* MAKE_PCH makes the precompiled prelude (to `out`); the other stages build the unit, given the
** PCH's directory in pch_dir (or NULL). */
static void build_args(arg_list *a, const cxx_command *c, const char *dir, int check,
                       const cujit_compile_options *op, cj_buf *notes, int stage,
                       const char *pch_dir, const char *out) {
  for (int i = 0; i < c->nwords; i++) a->v[a->n++] = c->words[i];
  a->owned_from = a->n;
  char path[PATH_MAX];
  if (stage == LINK_ONLY) { /* the sanitizers' runtimes are linked by their -fsanitize flags */
    for (const char *const *f = check ? check_flags : plain_flags; *f; f++) arg_add(a, *f, NULL);
    snprintf(path, sizeof path, "%s/k.so", dir);
    arg_add(a, "-o", NULL);
    arg_add(a, path, NULL);
    snprintf(path, sizeof path, "%s/k.o", dir);
    arg_add(a, path, NULL);
    return;
  }
  const char *const *fixed = check ? check_flags : plain_flags;
  for (const char *const *f = fixed; *f; f++)
    if (stage != MAKE_PCH || strcmp(*f, "-shared") != 0) arg_add(a, *f, NULL);
  if (stage == COMPILE_ONLY) arg_add(a, "-c", NULL);
  if (pch_dir) arg_add(a, "-I", pch_dir);
  snprintf(path, sizeof path, "%s/include", dir);
  arg_add(a, "-I", path);
  /* The options, from the table (options.h): -std=, -ffast-math, -g, -I, -D, extra flags that
  ** mean the same to g++. One the fixed flags already hold (-g under CUJIT_CPU_CHECK) is left. */
  cj_option_list o = {0};
  cj_options_cxx(op, &o, notes);
  a->failed |= o.failed;
  for (size_t i = 0; i < o.n; i++) {
    int fixed_already = 0;
    for (const char *const *f = fixed; *f; f++) fixed_already |= strcmp(*f, o.v[i]) == 0;
    if (!fixed_already && (stage != MAKE_PCH || pch_flag(o.v[i]))) arg_add(a, o.v[i], NULL);
  }
  cj_option_list_free(&o);
  if (stage == MAKE_PCH) {
    snprintf(path, sizeof path, "%s/include/cujit/cpu_prelude.h", dir);
    arg_add(a, "-x", NULL);
    arg_add(a, "c++-header", NULL);
    arg_add(a, "-o", NULL);
    arg_add(a, out, NULL);
    arg_add(a, path, NULL);
    return;
  }
  snprintf(path, sizeof path, "%s/%s", dir, stage == COMPILE_ONLY ? "k.o" : "k.so");
  arg_add(a, "-o", NULL);
  arg_add(a, path, NULL);
  snprintf(path, sizeof path, "%s/tu.cpp", dir);
  arg_add(a, path, NULL);
}

/* --- errors ------------------------------------------------------------------------------------
 */

/* The FILE and LINE of a g++ line "FILE:LINE[:COL]<mark at hit>": 1 and *file_end, *line. */
static int location(const char *s, const char *hit, const char **file_end, long *line) {
  const char *nums[2] = {NULL, NULL}; /* back over ":COL" and ":LINE" */
  const char *p = hit;
  int count = 0;
  while (count < 2) {
    const char *q = p;
    while (q > s && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q == p || q == s || q[-1] != ':') break;
    nums[count++] = q;
    p = q - 1;
  }
  if (count == 0) return 0;
  *file_end = p;
  *line = strtol(nums[count - 1], NULL, 10);
  return 1;
}

/* The first occurrence of `mark` in the line [s, s + n), or NULL. */
static const char *find_in_line(const char *s, size_t n, const char *mark) {
  size_t ml = strlen(mark);
  for (const char *p = s; p + ml <= s + n; p++)
    if (memcmp(p, mark, ml) == 0) return p;
  return NULL;
}

/* An error inside cujit's own headers (a static_assert saying what the CPU device lacks) is the
** user's line that instantiated it: the last "FILE:LINE:COL:   required from here" of the log
** outside those headers. 0 when there is none. */
static int user_site(const char *log, const char **file, const char **file_end, long *line) {
  int found = 0;
  for (const char *s = log; *s;) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    const char *hit = find_in_line(s, n, ":   required from here");
    const char *fe;
    long l;
    if (hit && !find_in_line(s, n, "/include/cujit/") && location(s, hit, &fe, &l))
      *file = s, *file_end = fe, *line = l, found = 1;
    s += n + (e ? 1 : 0);
  }
  return found;
}

/* The first "FILE:LINE[:COL]: [fatal ]error: TEXT" of g++'s output, rewritten in NVRTC's form
** "FILE(LINE): error: TEXT" so that source.c places it. FILE may hold colons ("k:preamble"). */
static int first_error(const char *log, cj_buf *out) {
  static const char *const marks[] = {": error: ", ": fatal error: "};
  for (const char *s = log; *s;) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    for (size_t m = 0; m < 2; m++) {
      const char *hit = find_in_line(s, n, marks[m]);
      const char *file = s, *file_end;
      long line;
      if (!hit || !location(s, hit, &file_end, &line)) continue;
      const char *text = hit + strlen(marks[m]);
      if (find_in_line(s, (size_t)(file_end - s), "/include/cujit/"))
        user_site(log, &file, &file_end, &line);
      cj_buf_printf(out, "%.*s(%ld): error: %.*s\n", (int)(file_end - file), file, line,
                    (int)(s + n - text), text);
      return 1;
    }
    s += n + (e ? 1 : 0);
  }
  return 0;
}

static cujit_status compile_failed(cujit_engine *engine, const char *name, const char *source,
                                   const char *log, int status, const char *compiler) {
  cj_buf diag = {0};
  if (first_error(log, &diag) && diag.data) {
    char *msg = cj_compile_error_message(name, source, diag.data);
    cj_buf_free(&diag);
    if (msg) {
      char *cut = strstr(msg, "\n\n");
      if (cut) *cut = '\0';
      cujit_status st = cj_fail(engine, CUJIT_ERROR_COMPILE, "%s\n\n%s", msg, log);
      free(msg);
      return st;
    }
  }
  cj_buf_free(&diag);
  return cj_fail(engine, CUJIT_ERROR_COMPILE,
                 "'%s' failed to compile for the CPU device: %s exited with status %d\n\n%s", name,
                 compiler, status, *log ? log : "(the compiler wrote nothing)");
}

/* --- the compile -------------------------------------------------------------------------------
 */

static cujit_status scratch_failed(cujit_engine *engine, const char *what, int err) {
  return cj_fail(engine, CUJIT_ERROR_IO,
                 "the CPU device could not %s in its temporary directory: %s; %s", what,
                 strerror(err),
                 err == EFBIG ? "the file size limit (ulimit -f) is below what a compile writes: "
                                "raise it"
                              : "set TMPDIR to a writable directory");
}

/* The environment with TMPDIR=dir/tmp, so that the compiler's own temporaries (cc*.s, cc*.o)
** land in the scratch directory and go with it, also after a kill. The strings are environ's
** but the one made, kept in a static per thread buffer. NULL when out of memory. */
static char **env_with_tmpdir(const char *dir) {
  static __thread char tmpdir[PATH_MAX];
  snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s/tmp", dir);
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = environ[i];
  env[k++] = tmpdir;
  return env;
}

/* The user's headers as the unit writer rewrote them, as include/__cj_h/<h>.h. */
static int write_user_headers(const char *dir, const cj_cpu_headers *hd) {
  char path[PATH_MAX];
  for (size_t h = 0; hd && h < hd->count; h++) {
    if (!hd->rewritten[h]) continue;
    snprintf(path, sizeof path, "%s/include/__cj_h", dir);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) return errno;
    snprintf(path, sizeof path, "%s/include/__cj_h/%zu.h", dir, h);
    int err = write_file(path, hd->rewritten[h], strlen(hd->rewritten[h]));
    if (err) return err;
  }
  return 0;
}

/* Runs the stages of one build (MAKE_PCH, or the unit's: one, or compile and link for fast math),
** their output appended to notes. 0, or -1 when the arguments could not be made (out of memory or
** over MAX_ARGS), or the errno of a compiler that could not be run; *status the last exit. */
static int run_stages(const cxx_command *c, const char *dir, int check,
                      const cujit_compile_options *op, const char *pch_dir, const char *pch_out,
                      cj_buf *notes, int *status) {
  int stage = pch_out ? MAKE_PCH : op && op->fast_math ? COMPILE_ONLY : ONE_STEP;
  for (*status = 0; *status == 0;) {
    arg_list a = {0};
    build_args(&a, c, dir, check, op, notes, stage, pch_dir, pch_out);
    if (a.failed) return args_free(&a), -1;
    char *output = NULL;
    char **env = env_with_tmpdir(dir);
    int err = env ? run_tool(a.v, env, &output, status) : ENOMEM;
    free(env);
    args_free(&a);
    if (err) return err;
    cj_buf_puts(notes, output ? output : "");
    free(output);
    if (stage != COMPILE_ONLY) break;
    stage = LINK_ONLY;
  }
  return 0;
}

/* The precompiled prelude this unit is built with (cxx_pch.h): its directory, or NULL. A PCH is
** made here when none is kept for the unit's key; none in the check build, whose sanitizers'
** code generation dominates (measured: 4.6 s a unit either way). */
static const char *prelude_pch(cujit_engine *engine, const cxx_command *c, const char *dir,
                               const char *identity, int check, const cujit_compile_options *op,
                               cj_cxx_pch *pch) {
  /* clang finds no .gch through #include (it takes -include-pch): g++ and its wrappers only */
  if (check || strstr(identity, "clang")) return NULL;
  cj_option_list o = {0};
  cj_buf notes = {0}, key = {0};
  cj_options_cxx(op, &o, &notes);
  cj_buf_printf(&key, "%s |", identity);
  for (size_t i = 0; i < o.n; i++)
    if (pch_flag(o.v[i])) cj_buf_printf(&key, " %s", o.v[i]);
  cj_buf_printf(&key, " | headers %s", cj_embedded_headers_hash);
  int failed = o.failed || key.failed;
  cj_option_list_free(&o);
  cj_buf_free(&notes);
  int state = failed ? CJ_CXX_PCH_NONE : cj_cxx_pch_open(engine, key.data, pch);
  cj_buf_free(&key);
  if (state == CJ_CXX_PCH_MAKE) {
    int status, err = run_stages(c, dir, check, op, NULL, pch->made, &notes, &status);
    cj_buf_free(&notes); /* a prelude that does not compile: the unit's compile says why */
    state = cj_cxx_pch_made(engine, pch, err == 0 && status == 0);
  }
  return state == CJ_CXX_PCH_USE ? pch->dir : NULL;
}

/* Writes the unit and the headers into dir, runs the compiler, reads the shared object. */
static cujit_status compile_in(cujit_engine *engine, const char *dir, const char *unit,
                               const cj_cpu_headers *hd, const char *source, const char *name,
                               const cujit_compile_options *op, int check, const char *identity,
                               cj_cache_entry *out) {
  cxx_command c;
  if (!command_from_env(&c))
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "CUJIT_CXX is blank: set it to a C++17 compiler such as g++, or unset it");
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tu.cpp", dir);
  int err = write_file(path, unit, strlen(unit));
  if (!err) err = write_headers(dir);
  if (!err) err = write_user_headers(dir, hd);
  if (err) return scratch_failed(engine, "write the translation unit", err);
  cj_cxx_pch pch;
  const char *pch_dir = prelude_pch(engine, &c, dir, identity, check, op, &pch);
  cj_buf notes = {0};
  int status;
  err = run_stages(&c, dir, check, op, pch_dir, NULL, &notes, &status);
  if (err == 0 && status != 0 && pch_dir && cj_cxx_pch_named(notes.data)) {
    /* g++ refused the PCH itself (a bad file that passed its checksum, another g++ behind the
    ** same version line): it goes, and the unit is built without it */
    cj_cxx_pch_drop(&pch);
    cj_buf_free(&notes);
    err = run_stages(&c, dir, check, op, NULL, NULL, &notes, &status);
  }
  if (err) {
    cj_buf_free(&notes);
    if (err < 0)
      return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                     "out of memory (or over %d compiler arguments)", MAX_ARGS);
    return no_compiler(engine, &c, err);
  }
  out->log = notes.data ? notes.data : cj_strdup("");
  if (!out->log) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (status != 0) return compile_failed(engine, name, source, out->log, status, c.words[0]);
  snprintf(path, sizeof path, "%s/k.so", dir);
  err = read_object(path, &out->cubin, &out->cubin_len);
  if (err) return scratch_failed(engine, "read the compiled shared object", err);
  out->ptx = cj_strdup("");
  out->ptx_len = 0;
  if (!out->ptx) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  return CUJIT_OK;
}

/* The name of header h under the toolkit's include directory (or its cccl/) when the resolver
** found it there, else NULL: what the unit writer maps to its stand-ins. */
static const char *toolkit_name(const cj_includes *inc, size_t h, const char *tk,
                                const char *real_tk) {
  const char *canon = inc->header_names[h];
  const char *dirs[2] = {tk, real_tk};
  for (size_t f = 0; canon[0] == '/' && f < inc->file_count; f++) {
    const cj_include_file *r = &inc->files[f];
    if (!r->path || strcmp(r->canonical, canon) != 0) continue;
    for (int d = 0; d < 2; d++) {
      const char *p = d == 0 ? r->path : r->canonical;
      size_t l = dirs[d] ? strlen(dirs[d]) : 0;
      if (l && strncmp(p, dirs[d], l) == 0 && p[l] == '/')
        return strncmp(p + l + 1, "cccl/", 5) == 0 ? p + l + 6 : p + l + 1;
    }
  }
  return NULL;
}

cujit_status cj_cxx_compile(cujit_engine *engine, const char *source, const char *name,
                            const cujit_compile_options *options, const cj_signature *kernels,
                            const int *cxx, size_t nkernels, cj_cache_entry *out) {
  return cj_cxx_compile_resolved(engine, source, name, options, kernels, cxx, nkernels, NULL, NULL,
                                 out);
}

cujit_status cj_cxx_compile_resolved(cujit_engine *engine, const char *source, const char *name,
                                     const cujit_compile_options *options,
                                     const cj_signature *kernels, const int *cxx, size_t nkernels,
                                     const cj_includes *inc, const char *toolkit_dir,
                                     cj_cache_entry *out) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<source>";
  int check = cj_env_cpu_check();
  const char *identity;
  cujit_status st = cj_cxx_identity(engine, check, &identity); /* a missing compiler, first */
  if (st != CUJIT_OK) return st;
  /* Resolved includes (each naming a real path) let the writer rewrite the user's headers too;
  ** without them (a name cujit could not resolve) g++ gets the source and finds them itself. */
  cj_cpu_headers hd = {0};
  const char **toolkit_names = NULL;
  char real_tk[PATH_MAX] = "";
  if (inc && inc->cacheable && inc->source) {
    if (toolkit_dir && !realpath(toolkit_dir, real_tk)) real_tk[0] = '\0';
    size_t n = inc->header_count;
    toolkit_names = calloc(n ? n : 1, sizeof *toolkit_names);
    hd.rewritten = calloc(n ? n : 1, sizeof *hd.rewritten);
    if (!toolkit_names || !hd.rewritten) {
      free(toolkit_names);
      free(hd.rewritten);
      return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    }
    for (size_t h = 0; h < n; h++) toolkit_names[h] = toolkit_name(inc, h, toolkit_dir, real_tk);
    hd.names = (const char *const *)inc->header_names;
    hd.sources = (const char *const *)inc->header_sources;
    hd.toolkit_names = toolkit_names;
    hd.count = n;
    source = inc->source;
  }
  const char **names = calloc(nkernels ? nkernels : 1, sizeof *names);
  if (!names) {
    free(toolkit_names);
    free(hd.rewritten);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  for (size_t i = 0; i < nkernels; i++) names[i] = kernels[i].name;
  char err[1024] = "";
  char *unit = cj_cpu_translation_unit_with(source, names, cxx, nkernels, check,
                                            hd.rewritten ? &hd : NULL, err, sizeof err);
  free(names);
  char dir[PATH_MAX / 2]; /* room left in every path made from it */
  int made = unit ? cj_cxx_scratch_make(dir, sizeof dir) : 0;
  if (unit && made == 0) {
    st = compile_in(engine, dir, unit, hd.rewritten ? &hd : NULL, source, name, options, check,
                    identity, out);
    cj_cxx_scratch_remove(dir);
  }
  for (size_t h = 0; hd.rewritten && h < hd.count; h++) free(hd.rewritten[h]);
  free(hd.rewritten);
  free(toolkit_names);
  free(unit);
  if (!unit)
    return cj_fail(engine, CUJIT_ERROR_COMPILE, "'%s' cannot be built for the CPU device: %s", name,
                   err[0] ? err : "out of memory");
  if (made != 0) return scratch_failed(engine, "make a directory", made);
  if (st != CUJIT_OK) cj_cache_entry_free(out);
  return st;
}
