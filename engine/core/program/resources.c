/*
** resources.c -- a kernel's resources as the compiler reported them (cujit_kernel_resources_get,
** and the spills cujit_kernel_attributes_get adds to the device's attributes): ptxas's report in
** NVRTC's log, which a compile given --ptxas-options=-v holds, and the PTX's launch bounds. Read
** from the compiled program alone: no device, any target.
*/
#include "kernel.h"
#include "base/structs.h"
#include "resources.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The number written just before `at` ("60 bytes spill stores": the 60 before " bytes"), or -1. */
static int number_before(const char *line, const char *at) {
  const char *p = at;
  while (p > line && p[-1] == ' ') p--;
  const char *end = p;
  while (p > line && isdigit((unsigned char)p[-1])) p--;
  return p == end ? -1 : (int)strtol(p, NULL, 10);
}

/* The value of the item `what` (" bytes stack frame", " registers") in a line of the report. */
static int item(const char *line, size_t len, const char *what) {
  size_t wl = strlen(what);
  for (const char *p = line; p + wl <= line + len; p++)
    if (memcmp(p, what, wl) == 0) return number_before(line, p);
  return -1;
}

/* ptxas's report on `symbol` in the log: the "Function properties for SYMBOL" line, the stack
** and spills on the line after it, and the "Used N registers, ..., M bytes smem" line of the
** entry (no smem item: none). 1 when found. */
static int read_report(const char *log, const char *symbol, cujit_kernel_attributes *a) {
  static const char props[] = "Function properties for ";
  size_t sl = strlen(symbol);
  const char *p = log ? strstr(log, props) : NULL;
  for (; p; p = strstr(p + 1, props)) {
    const char *name = p + sizeof props - 1;
    if (strncmp(name, symbol, sl) == 0 && (name[sl] == '\n' || name[sl] == '\r')) break;
  }
  if (!p) return 0;
  int found = 0;
  for (const char *line = strchr(p, '\n'); line && *++line; line = strchr(line, '\n')) {
    size_t len = strcspn(line, "\n");
    if (strstr(line, "Compiling entry function") &&
        (size_t)(strstr(line, "Compiling") - line) < len)
      break; /* the next kernel's */
    int frame = item(line, len, " bytes stack frame");
    if (frame >= 0) {
      a->local_bytes = frame;
      a->spill_store_bytes = item(line, len, " bytes spill stores");
      a->spill_load_bytes = item(line, len, " bytes spill loads");
    }
    int regs = item(line, len, " registers");
    if (regs >= 0 && strncmp(line, "ptxas info", 10) == 0) {
      a->registers = regs;
      int smem = item(line, len, " bytes smem");
      a->static_shared_bytes = smem >= 0 ? smem : 0;
      found = 1;
      break;
    }
  }
  return found && a->local_bytes >= 0;
}

/* The threads the PTX's .maxntid or .reqntid of `symbol` allows a block (their product), or 0
** when it gives none. */
static int launch_bound(const char *ptx, const char *symbol) {
  static const char entry[] = ".entry ";
  size_t sl = strlen(symbol);
  for (const char *p = ptx ? strstr(ptx, entry) : NULL; p; p = strstr(p + 1, entry)) {
    const char *name = p + sizeof entry - 1;
    if (strncmp(name, symbol, sl) != 0 || (name[sl] != '(' && !isspace((unsigned char)name[sl])))
      continue;
    const char *body = strchr(name, '{'); /* the directives stand between ")" and "{" */
    for (const char *d = strchr(name, ')'); d && body && d < body; d++) {
      if (strncmp(d, ".maxntid", 8) != 0 && strncmp(d, ".reqntid", 8) != 0) continue;
      long n = 1, v;
      char *end = (char *)d + 8;
      for (int i = 0; i < 3; i++) {
        while (*end == ' ' || *end == '\t' || *end == ',') end++;
        if (!isdigit((unsigned char)*end)) break;
        v = strtol(end, &end, 10);
        n *= v;
      }
      return n > 0 && n <= 1024 ? (int)n : 1024;
    }
    return 0;
  }
  return 0;
}

/* The threads a block of a kernel of `regs` registers per thread may have: registers are given
** out per warp in units of 256, from four register files of 16K (one per quarter of the SM, whose
** warps a block spreads over evenly), at most 1024 threads; then the launch bounds. (79 registers:
** 2560 a warp, 6 warps a quarter, 768 threads, as the H200's driver says.) */
static int max_threads(int regs, int bound) {
  int per_warp = (regs * 32 + 255) / 256 * 256;
  int threads = per_warp > 0 ? 16384 / per_warp * 4 * 32 : 1024;
  if (threads > 1024) threads = 1024;
  return bound > 0 && bound < threads ? bound : threads;
}

int cj_resources_read(const cujit_program *p, const char *symbol, cujit_kernel_attributes *a) {
  a->registers = a->local_bytes = a->static_shared_bytes = -1;
  a->spill_store_bytes = a->spill_load_bytes = -1;
  if (!p || strcmp(p->arch, "cpu") == 0 || !read_report(p->log, symbol, a)) return 0;
  a->const_bytes = -1;
  a->max_threads_per_block = max_threads(a->registers, launch_bound(p->ptx, symbol));
  const char *v = p->ptx ? strstr(p->ptx, ".version ") : NULL;
  a->ptx_version = 0;
  if (v) {
    char *end;
    long major = strtol(v + 9, &end, 10);
    long minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    a->ptx_version = (int)(major * 10 + minor);
  }
  a->binary_version = strncmp(p->arch, "sm_", 3) == 0 ? atoi(p->arch + 3) : 0;
  return 1;
}

cujit_status cujit_kernel_resources_get(cujit_kernel *kernel, cujit_kernel_attributes *attrs) {
  if (!kernel || !attrs)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_resources_get needs a kernel and an output pointer");
  size_t room;
  cujit_status st =
      cj_struct_room(kernel->engine, "cujit_kernel_resources_get", "cujit_kernel_attributes", attrs,
                     sizeof *attrs, CJ_KERNEL_ATTRIBUTES_V1, &room);
  if (st != CUJIT_OK) return st;
  if (!kernel->program)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' is generic: specialise it first (cujit_kernel_specialize)",
                   kernel->sig.name);
  cujit_kernel_attributes all; /* this layout, then the caller's part of it */
  memset(&all, 0, sizeof all);
  if (strcmp(kernel->program->arch, "cpu") == 0)
    return cj_fail(kernel->engine, CUJIT_ERROR_NOT_FOUND,
                   "kernel '%s' is compiled for the CPU device, which has no registers or spills "
                   "to report; cujit_kernel_attributes_get gives its attributes",
                   kernel->sig.name);
  if (!cj_resources_read(kernel->program, cj_signature_symbol(&kernel->sig), &all))
    return cj_fail(kernel->engine, CUJIT_ERROR_NOT_FOUND,
                   "kernel '%s': its compile made no resource report (the compile log has none "
                   "for it): compile with the extra flag --ptxas-options=-v (Lua: flags = "
                   "{\"--ptxas-options=-v\"}; `cujit compile -v`) for an sm_XX target",
                   kernel->sig.name);
  cj_struct_out(attrs, room, &all);
  return CUJIT_OK;
}
