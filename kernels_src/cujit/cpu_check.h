/*
** cujit/cpu_check.h -- the CPU device's check build (CJ_CPU_CHECK: the translation unit compiled
** with -fsanitize=address,undefined -fno-sanitize-recover=all): every sanitizer report is followed
** by a line naming the CUDA thread that was running, "cujit: the report above is from kernel 'k':
** block (3,0,0) thread (232,0,0): ...". AddressSanitizer hands its report to a callback; UBSan has
** no such hook (and its fatal path skips the death callback), so the fatal handlers the check
** build calls are defined here: each prints UBSan's own report through the recoverable handler,
** then the thread, then flushes stdout (the kernels' printf) and ends the process as the fatal
** handler would.
*/
#pragma once

namespace cj_cpu {

#if defined(CJ_CPU_CHECK)
/* Under the sanitizers: say which CUDA thread was running when a report is written. The report's
** own stack trace names the line, in the file #line gave (the kernel's name for its body). */
extern "C" void __asan_set_error_report_callback(void (*)(const char *)) __attribute__((weak));
static inline void report_thread(const char *report) {
  static thread_local bool reported;
  exec *ex = R.ex;
  if (!ex || reported) return;
  reported = true;
  char line[64] = "";
  size_t kl = strlen(ex->L->kernel);
  for (const char *p = report ? strstr(report, ex->L->kernel) : nullptr; p;
       p = strstr(p + 1, ex->L->kernel))
    if (p > report && (p[-1] == ' ' || p[-1] == '/') && p[kl] == ':' && p[kl + 1] >= '0' &&
        p[kl + 1] <= '9') {
      snprintf(line, sizeof line, ", line %d of its body", atoi(p + kl + 1));
      break;
    }
  unsigned t = current(ex);
  set_error(ex, t, "the sanitizer's report%s", line);
  uint3 b = R.bid, th = tid_of(ex, t); /* this thread's, whatever launch->error holds */
  fprintf(stderr,
          "cujit: the report above is from kernel '%s': block (%u,%u,%u) thread (%u,%u,%u)%s\n",
          ex->L->kernel, b.x, b.y, b.z, th.x, th.y, th.z, line);
}
/* UBSan's data argument starts with the source location (file, line, column) of the check: the
** file is the kernel's name in its body (#line). It is read as text only when it is exactly that
** name, so a handler whose data starts otherwise is named without a line. */
static inline void report_ubsan(const void *data) {
  struct location {
    const char *file;
    unsigned line, column;
  } loc;
  memcpy(&loc, data, sizeof loc);
  exec *ex = R.ex;
  char text[320] = "";
  if (ex && loc.file && strcmp(loc.file, ex->L->kernel) == 0)
    snprintf(text, sizeof text, " %s:%u:", ex->L->kernel, loc.line);
  report_thread(text);
}
/* The sanitizer ends the process with _exit: what the kernel's printf and the host wrote to a
** buffered stdout (a file, a pipe) would be lost without this flush. */
static void on_asan_report(const char *report) {
  report_thread(report);
  fflush(stdout);
}
static inline void install_check_hooks() {
  if (__asan_set_error_report_callback) __asan_set_error_report_callback(on_asan_report);
}
#else
static inline void install_check_hooks() {}
#endif

} // namespace cj_cpu

#if defined(CJ_CPU_CHECK)
/* UBSan's fatal handlers, taken over inside this shared object (hidden): the report, the thread,
** exit status 1. The data and value arguments pass through untouched. */
#define CJ_UBSAN(name, params, args)                                                               \
  extern "C" void __ubsan_handle_##name params;                                                    \
  extern "C"                                                                                       \
      __attribute__((visibility("hidden"), noreturn)) void __ubsan_handle_##name##_abort params {  \
    __ubsan_handle_##name args;                                                                    \
    ::cj_cpu::report_ubsan(d);                                                                     \
    fflush(stdout);                                                                                \
    fflush(stderr);                                                                                \
    _exit(1);                                                                                      \
  }
CJ_UBSAN(add_overflow, (void *d, void *a, void *b), (d, a, b))
CJ_UBSAN(sub_overflow, (void *d, void *a, void *b), (d, a, b))
CJ_UBSAN(mul_overflow, (void *d, void *a, void *b), (d, a, b))
CJ_UBSAN(divrem_overflow, (void *d, void *a, void *b), (d, a, b))
CJ_UBSAN(shift_out_of_bounds, (void *d, void *a, void *b), (d, a, b))
CJ_UBSAN(pointer_overflow, (void *d, void *a, void *b), (d, a, b))
CJ_UBSAN(negate_overflow, (void *d, void *a), (d, a))
CJ_UBSAN(out_of_bounds, (void *d, void *a), (d, a))
CJ_UBSAN(type_mismatch_v1, (void *d, void *a), (d, a))
CJ_UBSAN(load_invalid_value, (void *d, void *a), (d, a))
CJ_UBSAN(float_cast_overflow, (void *d, void *a), (d, a))
CJ_UBSAN(vla_bound_not_positive, (void *d, void *a), (d, a))
CJ_UBSAN(nonnull_arg, (void *d), (d))
CJ_UBSAN(nonnull_return_v1, (void *d, void *l), (d, l))
CJ_UBSAN(invalid_builtin, (void *d), (d))
#undef CJ_UBSAN
#endif
