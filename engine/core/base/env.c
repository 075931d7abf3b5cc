/*
** env.c -- strict readers of environment variables (env.h): a value is taken only when it is one
** of the spellings documented, so a typo is reported, never read as something else (strtol's
** "4abc" as 4, "false" as true because it is not "0").
*/
#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The value, or NULL when unset or empty. */
static const char *value_of(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

int cj_env_bool(const char *name, int *value, char *why, size_t len) {
  static const char *const on[] = {"1", "on", "yes", "true"};
  static const char *const off[] = {"0", "off", "no", "false"};
  const char *v = value_of(name);
  if (!v) return CJ_ENV_UNSET;
  for (size_t i = 0; i < sizeof on / sizeof *on; i++) {
    if (strcasecmp(v, on[i]) == 0) return *value = 1, CJ_ENV_SET;
    if (strcasecmp(v, off[i]) == 0) return *value = 0, CJ_ENV_SET;
  }
  snprintf(why, len,
           "%s='%s' is not understood: it takes 1, on, yes or true (on), 0, off, no or false "
           "(off), or unset",
           name, v);
  return CJ_ENV_BAD;
}

int cj_env_uint(const char *name, unsigned long long lo, unsigned long long hi,
                unsigned long long *value, char *why, size_t len) {
  const char *v = value_of(name);
  if (!v) return CJ_ENV_UNSET;
  unsigned long long n = 0;
  int digits = 1, over = 0;
  for (const char *p = v; *p; p++) {
    if (*p < '0' || *p > '9') {
      digits = 0;
      break;
    }
    if (!over) n = n * 10 + (unsigned)(*p - '0'); /* n <= hi < ULLONG_MAX / 10: no wrap */
    over |= n > hi;
  }
  if (digits && !over && n >= lo && n <= hi) return *value = n, CJ_ENV_SET;
  snprintf(why, len, "%s='%s' is not understood: it takes a whole number from %llu to %llu%s", name,
           v, lo, hi, digits ? "" : " (digits only)");
  return CJ_ENV_BAD;
}

int cj_env_word(const char *name, const char *const *words, int *value, char *why, size_t len) {
  const char *v = value_of(name);
  if (!v) return CJ_ENV_UNSET;
  size_t n = 0;
  for (; words[n]; n++)
    if (strcmp(v, words[n]) == 0) return *value = (int)n, CJ_ENV_SET;
  int at = snprintf(why, len, "%s='%s' is not understood: it takes ", name, v);
  for (size_t i = 0; i < n && at >= 0 && (size_t)at < len; i++)
    at += snprintf(why + at, len - (size_t)at, "%s%s", words[i],
                   i + 2 < n   ? ", "
                   : i + 1 < n ? " or "
                               : "");
  return CJ_ENV_BAD;
}

int cj_env_cpu_threads(char *why, size_t len) {
  unsigned long long n;
  int got = cj_env_uint("CUJIT_CPU_THREADS", 1, 1024, &n, why, len);
  return got == CJ_ENV_SET ? (int)n : got == CJ_ENV_BAD ? -1 : 0;
}

int cj_env_cpu_schedule(unsigned long long *seed, int *drawn, char *why, size_t len) {
  static const char *const words[] = {"forward", "reverse", "random", NULL};
  const char *v = value_of("CUJIT_CPU_SCHEDULE");
  *drawn = 0;
  if (v && strncmp(v, "random:", 7) == 0) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v + 7, &end, 10);
    if (v[7] >= '0' && v[7] <= '9' && !*end && !errno) return *seed = n, 2;
    snprintf(why, len,
             "CUJIT_CPU_SCHEDULE='%s' is not understood: the seed after random: is a whole "
             "number below 2^64 (digits only)",
             v);
    return -1;
  }
  int word = 0;
  if (cj_env_word("CUJIT_CPU_SCHEDULE", words, &word, why, len) == CJ_ENV_BAD) {
    size_t at = strlen(why);
    snprintf(why + at, len - at, ", or random:SEED (SEED a whole number)");
    return -1;
  }
  *drawn = word == 2;
  return word;
}

int cj_env_cpu_check(void) {
  int on = 0;
  char why[256];
  return cj_env_bool("CUJIT_CPU_CHECK", &on, why, sizeof why) == CJ_ENV_BAD ? -1 : on;
}

int cj_env_nvtx(char *why, size_t len) {
  int on = 1;
  return cj_env_bool("CUJIT_NVTX", &on, why, len) == CJ_ENV_BAD ? -1 : on;
}
