/*
** cmd_inspect.c -- what `cujit compile` says about the code it made: -v, each kernel's resources
** as ptxas reported them (cujit_kernel_resources_get), --sass, the CUBIN's machine code as the
** CUDA toolkit's cuobjdump (or nvdisasm) prints it, and --time, NVRTC's phase times. Public API
** only.
*/
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int cli_print_resources(cujit_engine *e, cujit_program *prog, const char *arch) {
  int failed = 0;
  for (size_t i = 0; i < cujit_program_kernel_count(prog); i++) {
    const char *name = cujit_program_kernel_name(prog, i);
    cujit_kernel *k = NULL;
    cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
    if (cujit_program_kernel(prog, name, &k) != CUJIT_OK ||
        cujit_kernel_resources_get(k, &a) != CUJIT_OK) {
      if (strncmp(arch, "compute_", 8) == 0)
        fprintf(stderr,
                CLI_NAME ": %s: no resources for %s, which is PTX only (ptxas runs for an "
                         "sm_XX target)\n",
                name, arch);
      else
        fprintf(stderr, CLI_NAME ": %s\n", cujit_errmsg(e));
      failed = 1;
    } else {
      fprintf(stderr,
              CLI_NAME ": %s: %d registers, %d bytes spill stores, %d bytes spill loads, %d bytes "
                       "local, %d bytes static shared, %d max threads per block\n",
              name, a.registers, a.spill_store_bytes, a.spill_load_bytes, a.local_bytes,
              a.static_shared_bytes, a.max_threads_per_block);
    }
    cujit_kernel_free(k);
  }
  return !failed;
}

/* The toolkit's `tool`: under $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, then PATH. */
static int find_tool(const char *tool, char *path, size_t len) {
  const char *dirs[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t i = 0; i < 3; i++)
    if (dirs[i] && *dirs[i] && snprintf(path, len, "%s/bin/%s", dirs[i], tool) < (int)len &&
        access(path, X_OK) == 0)
      return 1;
  const char *env = getenv("PATH");
  for (const char *p = env; p && *p;) {
    size_t n = strcspn(p, ":");
    if (n && snprintf(path, len, "%.*s/%s", (int)n, p, tool) < (int)len && access(path, X_OK) == 0)
      return 1;
    p += n + (p[n] == ':');
  }
  return 0;
}

/* Runs `argv` with its output on ours; its exit status, or -1 when it could not be started. */
static int run_tool(char *const argv[]) {
  pid_t pid;
  fflush(stdout);
  int err = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
  if (err) {
    fprintf(stderr, CLI_NAME " compile --sass: cannot run %s: %s\n", argv[0], strerror(err));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int cli_print_sass(cujit_engine *engine, cujit_program *prog, const char *arch) {
  size_t len = 0;
  const void *cubin = cujit_program_cubin(prog, &len);
  /* The CUBIN goes to a file of TMPDIR's for the tool, as --time's table does; removed after. */
  const char *tmp = getenv("TMPDIR");
  char tool[PATH_MAX], file[PATH_MAX];
  snprintf(file, sizeof file, "%s/cujit-sass-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int cuobjdump = find_tool("cuobjdump", tool, sizeof tool);
  if (!cubin) {
    fprintf(stderr,
            CLI_NAME " compile --sass: %s gives no CUBIN (a compute_XX target is PTX only); pass "
                     "an sm_XX target\n",
            arch);
    return 0;
  }
  if (!cuobjdump && !find_tool("nvdisasm", tool, sizeof tool)) {
    fprintf(stderr,
            CLI_NAME " compile --sass: neither cuobjdump nor nvdisasm was found (looked in "
                     "$CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin and PATH); install the "
                     "CUDA toolkit's cuobjdump (Debian/Ubuntu: cuda-cuobjdump-XX-Y) or nvdisasm, "
                     "or set CUDA_HOME to a toolkit that has them\n");
    return 0;
  }
  int fd = mkstemp(file);
  if (fd < 0) {
    fprintf(stderr, CLI_NAME " compile --sass: cannot make %s: %s\n", file, strerror(errno));
    return 0;
  }
  close(fd);
  int ok = cujit_file_write(engine, file, cubin, len) == CUJIT_OK;
  if (!ok) fprintf(stderr, CLI_NAME " compile --sass: %s\n", cujit_errmsg(engine));
  char *argv[] = {tool, cuobjdump ? "-sass" : file, cuobjdump ? file : NULL, NULL};
  int status = ok ? run_tool(argv) : -1;
  unlink(file);
  if (ok && status != 0)
    fprintf(stderr, CLI_NAME " compile --sass: %s failed (exit status %d)\n", tool, status);
  return status == 0;
}

/* NVRTC's --time=FILE table: a heading line, then "FILE, PHASE, VALUE, UNIT" per phase. */
void cli_print_times(const cujit_program *prog, const char *path) {
  FILE *f = fopen(path, "r");
  char line[512], phase[256], unit[32];
  double value;
  int phases = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "%*[^,], %255[^,], %lf, %31[^\n]", phase, &value, unit) == 3) {
      if (!phases++) fprintf(stderr, CLI_NAME ": NVRTC's phases:\n");
      fprintf(stderr, CLI_NAME ":   %-24s %10.1f %s\n", phase, value, unit);
    }
  if (f) fclose(f);
  if (!phases)
    fprintf(stderr, CLI_NAME ": --time: %s\n",
            cujit_program_from_cache(prog) ? "from the cache, NVRTC did not run"
                                           : "NVRTC wrote no phase times");
}
