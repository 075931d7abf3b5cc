/*
** arch.c -- the target arch of a compile: "sm_90", "sm_90a", "compute_90" or "cpu" read and
** checked, the device's arch taken when none is given (made arch-specific, sm_90a, for a source
** using wgmma or setmaxnreg), and an NVRTC's own list of the archs it compiles for (an explicit
** arch it lacks refused, naming them; the device's capped at its highest).
*/
#include "compile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "sm_90", "sm_90a", "sm_100f", "compute_90": the number, and whether it gives a CUBIN. */
int cj_parse_arch(const char *arch, int *number, int *cubin) {
  const char *p;
  if (strncmp(arch, "sm_", 3) == 0)
    p = arch + 3, *cubin = 1;
  else if (strncmp(arch, "compute_", 8) == 0)
    p = arch + 8, *cubin = 0;
  else
    return 0;
  if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1])) return 0;
  char *end;
  long n = strtol(p, &end, 10);
  if (n < 10 || n > 999 || (*end && !((*end == 'a' || *end == 'f') && end[1] == '\0'))) return 0;
  *number = (int)n;
  return 1;
}

int cj_arch_make_specific(const char *source, char *arch, size_t len) {
  static const char *const specific[] = {"wgmma.", "setmaxnreg.", "tcgen05.", "__CUDA_ARCH_FEAT_SM",
                                         "__CUDA_ARCH_SPECIFIC__"};
  int number, cubin;
  size_t n = strlen(arch);
  if (!source || !cj_parse_arch(arch, &number, &cubin) || !cubin || number < 90 ||
      !isdigit((unsigned char)arch[n - 1]) || n + 2 > len)
    return 0;
  for (size_t i = 0; i < sizeof specific / sizeof *specific; i++)
    if (strstr(source, specific[i])) {
      arch[n] = 'a', arch[n + 1] = '\0';
      return 1;
    }
  return 0;
}

static void supported_list(const cj_nvrtc *nv, char *buf, size_t len) {
  buf[0] = '\0';
  size_t used = 0;
  for (int i = 0; i < nv->arch_count && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%ssm_%d", i ? ", " : "", nv->archs[i]);
}

/* From the list asked at open (loader.h says why not asked again). */
static int arch_supported(const cj_nvrtc *nv, int number) {
  if (nv->arch_count <= 0) return 1; /* cannot tell: let NVRTC judge */
  for (int i = 0; i < nv->arch_count; i++)
    if (nv->archs[i] == number) return 1;
  return 0;
}

cujit_status cj_nvrtc_fit_arch(cujit_engine *engine, cj_nvrtc *nv, int explicit_arch, char *arch,
                               size_t len) {
  int number, cubin;
  if (!cj_parse_arch(arch, &number, &cubin)) return CUJIT_ERROR_INVALID_ARGUMENT;
  if (arch_supported(nv, number)) return CUJIT_OK;
  int highest = 0;
  for (int i = 0; i < nv->arch_count; i++)
    if (nv->archs[i] > highest) highest = nv->archs[i];
  if (!explicit_arch && highest > 0 && number > highest) {
    snprintf(arch, len, "sm_%d", highest);
    return CUJIT_OK;
  }
  char list[1024];
  supported_list(nv, list, sizeof list);
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "arch '%s' is not supported by NVRTC %d.%d (%s); it supports: %s", arch,
                 nv->version / 1000, nv->version % 1000 / 10, nv->path, list);
}

cujit_status cj_compile_arch(cujit_engine *engine, const cujit_compile_options *options,
                             const char *device_arch, char *arch, size_t len) {
  if (!engine || !arch || len < 16)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "no room for the arch");
  arch[0] = '\0';
  int number, cubin;
  if (options && options->arch && strcmp(options->arch, "cpu") != 0) {
    if (!cj_parse_arch(options->arch, &number, &cubin))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "arch '%s' is not an arch: write sm_NN (such as sm_90) for a CUBIN and PTX, "
                     "compute_NN for PTX only, or cpu for the CPU device",
                     options->arch);
    snprintf(arch, len, "%s", options->arch);
  } else {
    snprintf(arch, len, "%s",
             options && options->arch ? options->arch
             : device_arch            ? device_arch
                                      : "");
  }
  const cj_compiler *compiler = cj_compiler_for(arch);
  return compiler->fit_arch ? compiler->fit_arch(engine, options && options->arch, arch, len)
                            : CUJIT_OK;
}
