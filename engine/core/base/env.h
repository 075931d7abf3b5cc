/*
** env.h -- reading cujit's environment variables strictly. Each reader takes the variable's name,
** accepts only the spellings it documents (README.md, "Environment") and, for any other value,
** writes into `why` a sentence naming the variable, the value and what it accepts; the caller
** decides what a refusal means (an error, or a warning and the default). An unset or empty
** variable is "not set" everywhere. Internal: nothing here is public.
*/
#ifndef CUJIT_ENV_H
#define CUJIT_ENV_H

#include <stddef.h>

/* What a reader found: nothing, a value it stored, or a value it refused (why says so). */
enum { CJ_ENV_UNSET = 0, CJ_ENV_SET = 1, CJ_ENV_BAD = -1 };

/* On: 1, on, yes, true; off: 0, off, no, false (any case). */
int cj_env_bool(const char *name, int *value, char *why, size_t len);

/* CUJIT_CPU_CHECK: 1 when the CPU device's kernels are built with AddressSanitizer and UBSan
** (1, on, yes or true), 0 when not (unset, 0, off, no, false), -1 for any other value, which
** the C++ compiler's identity (compile/cxx.c) refuses with the accepted ones. Read by both
** stacks: the compile (how to build) and the CPU backend (how to fill and report memory). */
int cj_env_cpu_check(void);

/* CUJIT_NVTX (on/off, as cj_env_bool; default on): 1 or 0, -1 for any other value (why says so;
** the caller warns and keeps the default). Read once per process by base/trace.c. */
int cj_env_nvtx(char *why, size_t len);

/* A decimal integer in [lo, hi] (hi < ULLONG_MAX / 10): digits only, no sign, spaces or suffix. */
int cj_env_uint(const char *name, unsigned long long lo, unsigned long long hi,
                unsigned long long *value, char *why, size_t len);

/* One of `words` (a NULL-terminated list, matched exactly): its index in *value. */
int cj_env_word(const char *name, const char *const *words, int *value, char *why, size_t len);

/* CUJIT_CPU_THREADS (1..1024): the number, 0 when not set, -1 when refused. */
int cj_env_cpu_threads(char *why, size_t len);

/* CUJIT_CPU_SCHEDULE=forward|reverse|random|random:SEED: 0, 1 or 2 (cpu_abi.h's CJ_CPU_FORWARD,
** _REVERSE, _RANDOM; 0 when not set), with *seed set from random:SEED and *drawn 1 for a bare
** random (the caller's *seed stands, to be told); -1 when refused. */
int cj_env_cpu_schedule(unsigned long long *seed, int *drawn, char *why, size_t len);

#endif
