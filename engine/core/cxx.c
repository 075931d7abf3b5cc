/*
** cxx.c -- the CPU device's compiler: runs the system C++ compiler (CUJIT_CXX, default g++) on
** the translation unit cpu_source.c builds, in a private temporary directory that also holds the
** embedded <cujit/...> headers, and reads back the shared object. The compiler's first error is
** placed at the user's line through the #line directives, as NVRTC's errors are (source.c).
*/
#define _GNU_SOURCE /* pipe2 */
#include "cxx.h"
#include "cpu_source.h"
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
                                          NULL};

int cj_cxx_check(void) {
  const char *v = getenv("CUJIT_CPU_CHECK");
  return v && *v && strcmp(v, "0") != 0;
}

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
static int run_tool(char *const *argv, char **output, int *exit_status) {
  int fds[2];
  *output = NULL;
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
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

static pthread_mutex_t identity_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char command[PATH_MAX];
  char *text[2]; /* plain, check */
} known;

static char *make_identity(const char *version, const char *const *flags) {
  cj_buf b = {0};
  cj_buf_puts(&b, version);
  cj_buf_puts(&b, " |");
  for (size_t i = 0; flags[i]; i++) cj_buf_printf(&b, " %s", flags[i]);
  if (b.failed) cj_buf_free(&b);
  return b.data;
}

cujit_status cj_cxx_identity(cujit_engine *engine, int check, const char **identity) {
  cxx_command c;
  *identity = NULL;
  if (!command_from_env(&c))
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "CUJIT_CXX is blank: set it to a C++17 compiler such as g++, or unset it");
  const char *env = getenv("CUJIT_CXX");
  pthread_mutex_lock(&identity_lock);
  if (known.text[0] && strcmp(known.command, env && *env ? env : "g++") == 0) {
    *identity = known.text[check ? 1 : 0];
    pthread_mutex_unlock(&identity_lock);
    return CUJIT_OK;
  }
  pthread_mutex_unlock(&identity_lock);
  char *argv[MAX_WORDS + 2];
  for (int i = 0; i < c.nwords; i++) argv[i] = c.words[i];
  argv[c.nwords] = "--version";
  argv[c.nwords + 1] = NULL;
  char *output;
  int status = 0, err = run_tool(argv, &output, &status);
  if (err) return no_compiler(engine, &c, err);
  if (status != 0) {
    cujit_status st = cj_fail(engine, CUJIT_ERROR_COMPILE,
                              "'%s --version' failed (exit status %d); set CUJIT_CXX to a C++17 "
                              "compiler. It said:\n%s",
                              c.words[0], status, output ? output : "");
    free(output);
    return st;
  }
  output[strcspn(output, "\n")] = '\0';
  char *plain = make_identity(output, plain_flags), *checked = make_identity(output, check_flags);
  free(output);
  if (!plain || !checked) {
    free(plain);
    free(checked);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  pthread_mutex_lock(&identity_lock);
  /* The old strings may still be held by callers: they are kept (a change of CUJIT_CXX within
  ** one process is rare, and each costs two short strings). */
  snprintf(known.command, sizeof known.command, "%s", env && *env ? env : "g++");
  known.text[0] = plain, known.text[1] = checked;
  *identity = known.text[check ? 1 : 0];
  pthread_mutex_unlock(&identity_lock);
  return CUJIT_OK;
}

/* --- the scratch directory ---------------------------------------------------------------------
 */

static int write_file(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  const char *p = data;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return err;
    }
    p += n, len -= (size_t)n;
  }
  return close(fd) == 0 ? 0 : errno;
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

/* Removes the scratch directory and everything in it (two levels of headers at most). */
static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    unlink(path);
    return;
  }
  char child[PATH_MAX];
  static const char *const parts[] = {"tu.cpp", "k.o", "k.so", NULL};
  for (size_t i = 0; parts[i]; i++) {
    snprintf(child, sizeof child, "%s/%s", path, parts[i]);
    unlink(child);
  }
  for (size_t i = 0; i < cj_embedded_header_count; i++) {
    snprintf(child, sizeof child, "%s/include/%s", path, cj_embedded_header_names[i]);
    unlink(child);
    for (char *slash = strrchr(child, '/'); slash && slash > child + strlen(path) + 8;
         slash = strrchr(child, '/')) {
      *slash = '\0';
      rmdir(child);
    }
  }
  snprintf(child, sizeof child, "%s/include", path); /* the loop above stops below it */
  rmdir(child);
  rmdir(path);
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

/* Flags meant for NVRTC that mean the same to g++: macros and include paths. Others (-arch,
** --use_fast_math, -maxrregcount, ...) describe the GPU build and are left out, with a note. */
static int flag_for_cxx(const char *flag) {
  static const char *const kept[] = {"-D", "-U", "-I", "-std=", "--include-path=", NULL};
  for (size_t i = 0; kept[i]; i++)
    if (strncmp(flag, kept[i], strlen(kept[i])) == 0) return 1;
  return 0;
}

/* How a unit is built. A fast-math unit is compiled (-c) and linked in two runs: g++ (12 and
** older) adds crtfastmath.o to any link given -ffast-math, -shared too, and its constructor turns
** on flush-to-zero for the thread that loads the object, the host's; on a GPU fast math belongs to
** the kernel (cpu_math.h's ftz_scope flushes during the kernel's own run only). */
enum { ONE_STEP, COMPILE_ONLY, LINK_ONLY };

static void build_args(arg_list *a, const cxx_command *c, const char *dir, int check,
                       const cujit_compile_options *op, cj_buf *notes, int stage) {
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
  arg_add(a, "-std=", op && op->std ? op->std : "c++17");
  for (const char *const *f = check ? check_flags : plain_flags; *f; f++) arg_add(a, *f, NULL);
  if (op && op->fast_math) arg_add(a, "-ffast-math", NULL);
  if (stage == COMPILE_ONLY) arg_add(a, "-c", NULL);
  if (!check && op && (op->debug || op->line_info)) arg_add(a, "-g", NULL);
  snprintf(path, sizeof path, "%s/include", dir);
  arg_add(a, "-I", path);
  for (size_t i = 0; op && i < op->include_dir_count; i++) arg_add(a, "-I", op->include_dirs[i]);
  for (size_t i = 0; op && i < op->define_count; i++) arg_add(a, "-D", op->defines[i]);
  for (size_t i = 0; op && i < op->extra_flag_count; i++) {
    const char *f = op->extra_flags[i];
    if (strncmp(f, "--include-path=", 15) == 0)
      arg_add(a, "-I", f + 15);
    else if (flag_for_cxx(f))
      arg_add(a, f, NULL);
    else
      cj_buf_printf(notes, "cujit: extra flag '%s' is for NVRTC; the CPU device leaves it out\n",
                    f);
  }
  snprintf(path, sizeof path, "%s/%s", dir, stage == COMPILE_ONLY ? "k.o" : "k.so");
  arg_add(a, "-o", NULL);
  arg_add(a, path, NULL);
  snprintf(path, sizeof path, "%s/tu.cpp", dir);
  arg_add(a, path, NULL);
}

/* --- errors ------------------------------------------------------------------------------------
 */

/* The first "FILE:LINE[:COL]: [fatal ]error: TEXT" of g++'s output, rewritten in NVRTC's form
** "FILE(LINE): error: TEXT" so that source.c places it. FILE may hold colons ("k:preamble"). */
static int first_error(const char *log, cj_buf *out) {
  static const char *const marks[] = {": error: ", ": fatal error: "};
  for (const char *s = log; *s;) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    for (size_t m = 0; m < 2; m++) {
      const char *hit = NULL;
      for (const char *p = s; p + strlen(marks[m]) <= s + n; p++)
        if (memcmp(p, marks[m], strlen(marks[m])) == 0) {
          hit = p;
          break;
        }
      if (!hit) continue;
      const char *text = hit + strlen(marks[m]);
      /* back over ":COL" and ":LINE" */
      const char *nums[2] = {NULL, NULL};
      const char *p = hit;
      int count = 0;
      while (count < 2) {
        const char *q = p;
        while (q > s && q[-1] >= '0' && q[-1] <= '9') q--;
        if (q == p || q == s || q[-1] != ':') break;
        nums[count++] = q;
        p = q - 1;
      }
      if (count == 0) continue;
      const char *line = nums[count - 1];
      cj_buf_printf(out, "%.*s(%ld): error: %.*s\n", (int)(p - s), s, strtol(line, NULL, 10),
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
                 "the CPU device could not %s in its temporary directory: %s; set TMPDIR to a "
                 "writable directory",
                 what, strerror(err));
}

/* Writes the unit and the headers into dir, runs the compiler, reads the shared object. */
static cujit_status compile_in(cujit_engine *engine, const char *dir, const char *unit,
                               const char *source, const char *name,
                               const cujit_compile_options *op, int check, cj_cache_entry *out) {
  cxx_command c;
  if (!command_from_env(&c))
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "CUJIT_CXX is blank: set it to a C++17 compiler such as g++, or unset it");
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tu.cpp", dir);
  int err = write_file(path, unit, strlen(unit));
  if (!err) err = write_headers(dir);
  if (err) return scratch_failed(engine, "write the translation unit", err);
  cj_buf notes = {0};
  int status = 0, two_steps = op && op->fast_math;
  for (int stage = two_steps ? COMPILE_ONLY : ONE_STEP; status == 0;) {
    arg_list a = {0};
    build_args(&a, &c, dir, check, op, &notes, stage);
    if (a.failed) {
      args_free(&a);
      cj_buf_free(&notes);
      return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                     "out of memory (or over %d compiler "
                     "arguments)",
                     MAX_ARGS);
    }
    char *output = NULL;
    err = run_tool(a.v, &output, &status);
    args_free(&a);
    if (err) {
      cj_buf_free(&notes);
      return no_compiler(engine, &c, err);
    }
    cj_buf_puts(&notes, output ? output : "");
    free(output);
    if (stage != COMPILE_ONLY) break;
    stage = LINK_ONLY;
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

cujit_status cj_cxx_compile(cujit_engine *engine, const char *source, const char *name,
                            const cujit_compile_options *options, const cj_signature *kernels,
                            const int *cxx, size_t nkernels, cj_cache_entry *out) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<source>";
  int check = cj_cxx_check();
  const char *identity;
  cujit_status st = cj_cxx_identity(engine, check, &identity); /* a missing compiler, first */
  if (st != CUJIT_OK) return st;
  const char **names = calloc(nkernels ? nkernels : 1, sizeof *names);
  if (!names) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  for (size_t i = 0; i < nkernels; i++) names[i] = kernels[i].name;
  char err[1024] = "";
  char *unit = cj_cpu_translation_unit(source, names, cxx, nkernels, check, err, sizeof err);
  free(names);
  if (!unit)
    return cj_fail(engine, CUJIT_ERROR_COMPILE, "'%s' cannot be built for the CPU device: %s", name,
                   err[0] ? err : "out of memory");
  const char *tmp = getenv("TMPDIR");
  char dir[PATH_MAX / 2]; /* room left in every path made from it */
  snprintf(dir, sizeof dir, "%s/cujit-cxx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    free(unit);
    return scratch_failed(engine, "make a directory", errno);
  }
  st = compile_in(engine, dir, unit, source, name, options, check, out);
  remove_tree(dir);
  free(unit);
  if (st != CUJIT_OK) cj_cache_entry_free(out);
  return st;
}
