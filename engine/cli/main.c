/*
** main.c -- the `cujit` command's entry point: a subcommand (devices, compile, cache, help,
** --version) when the first argument names one, else Lua as stock `lua` runs it; under
** CUJIT_CPU_CHECK=1, first a restart of itself with AddressSanitizer's runtime loaded.
*/
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"

/* Set for the restarted process, to LD_PRELOAD as it was before: that process must not restart
** again, whatever it finds, and puts LD_PRELOAD back. */
#define RESTARTED_ENV "CUJIT_CPU_CHECK_RESTARTED"

/* A library of the compiler that builds the checked kernels (CUJIT_CXX, else g++), as
** `-print-file-name` finds it; 0 when it has none (it then prints the bare name). */
static int compiler_library(const char *name, char *path, size_t len) {
  const char *cxx = getenv("CUJIT_CXX");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s -print-file-name=%s 2>/dev/null", cxx && *cxx ? cxx : "g++", name);
  FILE *p = popen(cmd, "r");
  if (!p) return 0;
  int got = fgets(path, (int)len, p) != NULL;
  pclose(p);
  path[got ? strcspn(path, "\n") : 0] = '\0';
  return path[0] == '/' && access(path, R_OK) == 0;
}

/* Prepends `first` to the colon-separated list in environment variable `name`. */
static int env_prepend(const char *name, const char *first) {
  const char *old = getenv(name);
  size_t len = strlen(first) + (old ? strlen(old) + 1 : 0) + 1;
  char *value = malloc(len);
  if (!value) return -1;
  snprintf(value, len, "%s%s%s", first, old && *old ? ":" : "", old ? old : "");
  int rc = setenv(name, value, 1);
  free(value);
  return rc;
}

/* LD_PRELOAD as it was before the restart (RESTARTED_ENV's value), and RESTARTED_ENV unset, so
** that a later restart (the REPL's :restart) preloads again. */
static void put_preload_back(void) {
  const char *before = getenv(RESTARTED_ENV);
  if (*before ? setenv("LD_PRELOAD", before, 1) : unsetenv("LD_PRELOAD")) return;
  unsetenv(RESTARTED_ENV);
}

/* Kernels checked by CUJIT_CPU_CHECK=1 (docs/cpu.md) load only into a process that had
** AddressSanitizer's runtime before it started: the command restarts itself once with it
** preloaded (LD_PRELOAD), with leak checking off unless ASAN_OPTIONS says otherwise (the command
** itself is not instrumented). The restarted process puts LD_PRELOAD back as it was, so that the
** compiler and the other programs it starts do not get the runtime, and never restarts itself.
** Nothing is done when the runtime is there already (the sanitizer build, a preload of the
** user's); should the restart fail, the command runs on and a checked kernel's load says what to
** do. */
static void restart_with_asan(char **argv) {
  if (getenv(RESTARTED_ENV)) {
    put_preload_back();
    return;
  }
  /* Only a value that turns the check on (the library's reading: 1, on, yes, true in any case);
  ** a value it does not understand is refused by the first compile for the CPU device. */
  const char *check = getenv("CUJIT_CPU_CHECK");
  if (!check || !(strcmp(check, "1") == 0 || strcasecmp(check, "on") == 0 ||
                  strcasecmp(check, "yes") == 0 || strcasecmp(check, "true") == 0))
    return;
  if (dlsym(RTLD_DEFAULT, "__asan_init")) return;
  char runtime[4096], cxx_library[4096];
  if (!compiler_library("libasan.so", runtime, sizeof runtime)) {
    fprintf(stderr,
            CLI_NAME ": CUJIT_CPU_CHECK=1: the C++ compiler (%s) has no AddressSanitizer runtime "
                     "(libasan.so); install it (Debian: libgcc-12-dev) or unset CUJIT_CPU_CHECK\n",
            getenv("CUJIT_CXX") && *getenv("CUJIT_CXX") ? getenv("CUJIT_CXX") : "g++");
    return;
  }
  /* The C++ library after it: the sanitizer looks the real __cxa_throw up when it starts, and a
  ** kernel's exception (a device fault) would otherwise stop the process in its interceptor. */
  int with_cxx = compiler_library("libstdc++.so.6", cxx_library, sizeof cxx_library);
  const char *options = getenv("ASAN_OPTIONS"), *preload = getenv("LD_PRELOAD");
  if (setenv(RESTARTED_ENV, preload ? preload : "", 1) != 0 ||
      (with_cxx && env_prepend("LD_PRELOAD", cxx_library) != 0) ||
      env_prepend("LD_PRELOAD", runtime) != 0 ||
      ((!options || !strstr(options, "detect_leaks")) &&
       env_prepend("ASAN_OPTIONS", "detect_leaks=0") != 0))
    return;
  execv("/proc/self/exe", argv);
  fprintf(stderr, CLI_NAME ": CUJIT_CPU_CHECK=1: restarting with %s preloaded failed (%s)\n",
          runtime, strerror(errno));
  put_preload_back();
}

int main(int argc, char **argv) {
  restart_with_asan(argv);
  if (argc > 1 && cli_is_tool(argv[1])) return cli_tool_main(argc, argv);
  return cli_lua_main(argc, argv);
}
