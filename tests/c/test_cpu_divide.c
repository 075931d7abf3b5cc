/*
** test_cpu_divide.c -- cpu_divide.c: every x86-64 div/idiv form (widths 8/16/32/64, signed and
** unsigned, register operands old and REX, AH-style bytes, memory through base, displacements,
** SIB with and without base and index, RIP-relative and FS-relative) really faults here and is
** resumed by cj_div_resume with the GPU's quotient and remainder, at the next instruction; the
** divisions a C compiler makes at -O0 and -O2 too; the decoder's lengths on hand-encoded bytes;
** and what must stay a fault. The values are those an H200 gave (cpu_divide.h).
*/
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "backend/cpu/cpu_divide.h"

#if defined(__x86_64__)

static sigjmp_buf not_resumed;
static volatile int faults;

static void on_fpe(int sig, siginfo_t *info, void *context) {
  (void)sig;
  faults++;
  if (!cj_div_resume(info->si_code, context)) siglongjmp(not_resumed, 1);
}

static struct sigaction old_fpe;
static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fpe;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGFPE, &sa, &old_fpe);
  faults = 0;
}
static void uninstall(void) {
  sigaction(SIGFPE, &old_fpe, NULL);
}

/* A division run in asm: rax and rdx in, rax and rdx out, and `after` set by the instruction
** that follows the division (so a wrong length would not reach it). */
#define DIV_ASM(insn, divisor_constraint, divisor)                                                 \
  __asm__ volatile(insn "\n\tmovl $1, %[after]"                                                    \
                   : "+a"(rax), "+d"(rdx), [after] "=m"(after)                                     \
                   : divisor_constraint(divisor)                                                   \
                   : "cc", "memory")

struct outcome {
  uint64_t rax, rdx;
  int after;
};

static void expect(struct outcome got, uint64_t rax, uint64_t rdx, const char *what) {
  cr_expect_eq(got.after, 1, "%s: the next instruction did not run", what);
  cr_expect_eq(got.rax, rax, "%s: rax %#llx, want %#llx", what, (unsigned long long)got.rax,
               (unsigned long long)rax);
  cr_expect_eq(got.rdx, rdx, "%s: rdx %#llx, want %#llx", what, (unsigned long long)got.rdx,
               (unsigned long long)rdx);
}

Test(divide, register_operands_every_width, .init = install, .fini = uninstall) {
  uint64_t rax, rdx;
  int after;
  uint64_t zero = 0, m1 = ~0ull;
  struct outcome o;
#define RUN(a, d, insn, c, v)                                                                      \
  do {                                                                                             \
    rax = (a), rdx = (d), after = 0;                                                               \
    DIV_ASM(insn, c, v);                                                                           \
    o = (struct outcome){rax, rdx, after};                                                         \
  } while (0)
  /* 32 bits: x / 0 = 0xffffffff, x % 0 = x (the upper halves are cleared, as divl's are) */
  RUN(0xabcd00000007ull, 0, "divl %k[v]", [v] "c", zero);
  expect(o, 0xffffffff, 7, "divl 7/0");
  RUN(0xfffffff9ull, 0xffffffff, "idivl %k[v]", [v] "c", zero);
  expect(o, 0xffffffff, 0xfffffff9, "idivl -7/0");
  RUN(0x80000000ull, 0xffffffff, "idivl %k[v]", [v] "c", m1);
  expect(o, 0x80000000, 0, "idivl INT_MIN/-1");
  RUN(7, 0, "divl %k[v]", [v] "r", zero);
  expect(o, 0xffffffff, 7, "divl 7/0, any register");
  /* 64 bits: 0xffffffff when the dividend fits in 32 bits, else all ones */
  RUN(7, 0, "divq %q[v]", [v] "c", zero);
  expect(o, 0xffffffff, 7, "divq 7/0");
  RUN(1ull << 32, 0, "divq %q[v]", [v] "c", zero);
  expect(o, ~0ull, 1ull << 32, "divq 2^32/0");
  RUN(~6ull, ~0ull, "idivq %q[v]", [v] "c", zero);
  expect(o, ~0ull, ~6ull, "idivq -7/0");
  RUN(1ull << 63, ~0ull, "idivq %q[v]", [v] "c", m1);
  expect(o, 1ull << 63, 0, "idivq LLONG_MIN/-1");
  /* r8..r15 need REX.B */
  {
    /* an explicit register variable holds its register only at the asm that uses it: a call
    ** between (the sanitizer build's instrumentation) may change it, so it is set before each */
    register uint64_t r11 __asm__("r11") = 0;
    RUN(9, 0, "divq %%r11", [v] "r", r11);
    expect(o, 0xffffffff, 9, "divq %r11");
    r11 = 0;
    RUN(9, 0, "divl %%r11d", [v] "r", r11);
    expect(o, 0xffffffff, 9, "divl %r11d");
  }
  /* 16 bits: DX:AX; the rest of rax and rdx stays */
  RUN(0x1234567800000007ull, 0x5555000000000000ull, "divw %w[v]", [v] "c", zero);
  expect(o, 0x123456780000ffffull, 0x5555000000000007ull, "divw 7/0");
  RUN(0x8000, 0xffff, "idivw %w[v]", [v] "c", m1);
  expect(o, 0x8000, 0, "idivw -32768/-1");
  /* 8 bits: AX / r8, AL = quotient, AH = remainder */
  RUN(0x7777000000000007ull, 0, "divb %b[v]", [v] "c", zero);
  expect(o, 0x77770000000007ffull, 0, "divb 7/0");
  RUN(0xff80, 0, "idivb %b[v]", [v] "c", m1);
  expect(o, 0x0080, 0, "idivb -128/-1");
  RUN(0xfff9, 0, "idivb %b[v]", [v] "c", zero);
  expect(o, 0xf9ff, 0, "idivb -7/0");
  RUN(7, 0, "divb %%ch", [v] "c", zero);
  expect(o, 0x07ff, 0, "divb %ch (no REX: CH)");
  {
    register uint64_t rsi __asm__("rsi") = 0;
    RUN(7, 0, "divb %%sil", [v] "r", rsi);
    expect(o, 0x07ff, 0, "divb %sil (REX: SIL)");
    register uint64_t r9 __asm__("r9") = 0;
    RUN(7, 0, "divb %%r9b", [v] "r", r9);
    expect(o, 0x07ff, 0, "divb %r9b");
  }
  cr_expect_eq(faults, 18);
#undef RUN
}

static uint32_t zeros32[128];
static uint64_t zeros64[4];
static __thread uint32_t thread_zero;

Test(divide, memory_operands, .init = install, .fini = uninstall) {
  uint64_t rax, rdx;
  int after;
  struct outcome o;
  uint32_t *z32 = zeros32;
  uint64_t idx = 2, fs_base, offset;
  __asm__("movq %%fs:0, %0" : "=r"(fs_base));
  offset = (uint64_t)&thread_zero - fs_base;
#define RUN(a, d, insn, ...)                                                                       \
  do {                                                                                             \
    rax = (a), rdx = (d), after = 0;                                                               \
    __asm__ volatile(insn "\n\tmovl $1, %[after]"                                                  \
                     : "+a"(rax), "+d"(rdx), [after] "=m"(after)                                   \
                     : __VA_ARGS__                                                                 \
                     : "cc", "memory");                                                            \
    o = (struct outcome){rax, rdx, after};                                                         \
  } while (0)
  RUN(7, 0, "divl (%[p])", [p] "r"(z32));
  expect(o, 0xffffffff, 7, "divl (base)");
  RUN(7, 0, "divl 4(%[p])", [p] "r"(z32));
  expect(o, 0xffffffff, 7, "divl disp8(base)");
  RUN(7, 0, "divl 400(%[p])", [p] "r"(z32));
  expect(o, 0xffffffff, 7, "divl disp32(base)");
  RUN(7, 0, "divl (%[p],%[i],4)", [p] "r"(z32), [i] "r"(idx));
  expect(o, 0xffffffff, 7, "divl (base,index,4)");
  RUN(7, 0, "divl -8(%[p],%[i],4)", [p] "r"(z32 + 2), [i] "r"(idx));
  expect(o, 0xffffffff, 7, "divl disp8(base,index,4)");
  RUN(7, 0, "divl (,%[i],1)", [i] "r"(z32));
  expect(o, 0xffffffff, 7, "divl (,index,1): no base");
  RUN(7, 0, "divl zeros32(%%rip)", "m"(zeros32[0]));
  expect(o, 0xffffffff, 7, "divl rip-relative");
  RUN(7, 0, "divq zeros64+8(%%rip)", "m"(zeros64[1]));
  expect(o, 0xffffffff, 7, "divq rip-relative with displacement");
  RUN(~6ull, ~0ull, "idivq 8(%[p])", [p] "r"(zeros64));
  expect(o, ~0ull, ~6ull, "idivq disp8");
  RUN(7, 0, "divw 2(%[p])", [p] "r"(z32));
  expect(o, 0xffff, 7, "divw disp8(base)");
  RUN(0xfff9, 0, "idivb 3(%[p])", [p] "r"(z32));
  expect(o, 0xf9ff, 0, "idivb disp8(base)");
  {
    register uint32_t *r13 __asm__("r13") = z32;
    RUN(7, 0, "divl (%%r13)", "r"(r13));
    expect(o, 0xffffffff, 7, "divl (%r13): mod 1 for r13");
    register uint32_t *r12p __asm__("r12") = z32;
    RUN(7, 0, "divl (%%r12)", "r"(r12p));
    expect(o, 0xffffffff, 7, "divl (%r12): SIB for r12");
  }
  RUN(7, 0, "divl %%fs:(%[off])", [off] "r"(offset));
  expect(o, 0xffffffff, 7, "divl %fs:(reg)");
  cr_expect_eq(faults, 14);
#undef RUN
}

/* What a C compiler makes of division by a zero it cannot see, unoptimised (operands on the
** stack) and optimised; never UBSan-instrumented (the sanitizer build would report the division
** instead of letting it fault, which is what this tests). */
static int __attribute__((noinline, optimize("O0"), no_sanitize_undefined)) div_o0(int a, int b) {
  return a / b + 1000 * (a % b);
}
static long long __attribute__((noinline, optimize("O2"), no_sanitize_undefined))
div_o2(long long a, long long b) {
  return a / b ^ a % b;
}
static unsigned __attribute__((noinline, optimize("O2"), no_sanitize_undefined))
udiv_o2(const unsigned *a, const unsigned *b) {
  return *a / *b + *a % *b;
}
static short __attribute__((noinline, optimize("O0"), no_sanitize_undefined))
sdiv16_o0(short a, short b) {
  return (short)(a / b);
}

Test(divide, compiled_divisions, .init = install, .fini = uninstall) {
  volatile int zero = 0, minus1 = -1;
  cr_expect_eq(div_o0(7, zero), -1 + 7000);
  cr_expect_eq(div_o0(INT_MIN, minus1), INT_MIN);
  cr_expect_eq(div_o2(7, zero), 0xffffffffll ^ 7);
  cr_expect_eq(div_o2(-7, zero), -1 ^ -7);
  cr_expect_eq(div_o2(LLONG_MIN, minus1), LLONG_MIN);
  unsigned a = 7, b = (unsigned)zero; /* not a constant: g++ traps (ud2) on a zero it can see */
  cr_expect_eq(udiv_o2(&a, &b), 0xffffffffu + 7);
  cr_expect_eq(sdiv16_o0(-32768, (short)minus1), -32768);
  cr_expect_eq(sdiv16_o0(7, (short)zero), -1);
}

Test(divide, what_stays_a_fault, .init = install, .fini = uninstall) {
  volatile int resumed = 0;
  uint64_t rax = 0, rdx = 1, one = 1;
  int after = 0;
  if (sigsetjmp(not_resumed, 1) == 0) { /* 2^64 / 1 overflows: no C division does that */
    DIV_ASM("divq %q[v]", [v] "c", one);
    resumed = 1;
  }
  cr_expect_eq(resumed, 0);
  cr_expect_eq(faults, 1);
  cr_expect_eq(cj_div_resume(FPE_FLTDIV, NULL), 0, "a floating-point code is not ours");
  uint64_t q, r;
  cr_expect_eq(cj_div_gpu_result(32, 0, 1, 7, 0, &q, &r), 0, "a high half that is not 0");
  cr_expect_eq(cj_div_gpu_result(32, 1, 0, 0x80000000u, 0, &q, &r), 0, "not sign-extended");
  cr_expect_eq(cj_div_gpu_result(32, 1, 0, 5, 3, &q, &r), 0, "5 / 3 does not fault");
}

#endif

/* Lengths and operands of hand-encoded instructions, including prefixes the tests above do not
** run (a 32-bit address, segment and lock prefixes) and what is not a division. */
Test(divide, decoder) {
  static const struct {
    unsigned char code[15];
    int ok, length, width, is_signed, mem, reg, high_byte;
  } cases[] = {
      {{0xf7, 0xf1}, 1, 2, 32, 0, 0, 1, 0},                                /* div ecx */
      {{0xf7, 0xf9}, 1, 2, 32, 1, 0, 1, 0},                                /* idiv ecx */
      {{0x48, 0xf7, 0xf1}, 1, 3, 64, 0, 0, 1, 0},                          /* div rcx */
      {{0x49, 0xf7, 0xfb}, 1, 3, 64, 1, 0, 11, 0},                         /* idiv r11 */
      {{0x66, 0xf7, 0xf1}, 1, 3, 16, 0, 0, 1, 0},                          /* div cx */
      {{0xf6, 0xf5}, 1, 2, 8, 0, 0, 1, 1},                                 /* div ch */
      {{0x40, 0xf6, 0xf6}, 1, 3, 8, 0, 0, 6, 0},                           /* div sil */
      {{0xf7, 0x31}, 1, 2, 32, 0, 1, -1, 0},                               /* div [rcx] */
      {{0xf7, 0x71, 0x04}, 1, 3, 32, 0, 1, -1, 0},                         /* div [rcx+4] */
      {{0xf7, 0xb1, 1, 2, 3, 4}, 1, 6, 32, 0, 1, -1, 0},                   /* div [rcx+disp32] */
      {{0xf7, 0x34, 0x24}, 1, 3, 32, 0, 1, -1, 0},                         /* div [rsp] */
      {{0xf7, 0x74, 0x8d, 0xf8}, 1, 4, 32, 0, 1, -1, 0},                   /* div [rbp+rcx*4-8] */
      {{0xf7, 0x34, 0x25, 0, 0, 0, 0}, 1, 7, 32, 0, 1, -1, 0},             /* div [disp32] */
      {{0xf7, 0x35, 1, 0, 0, 0}, 1, 6, 32, 0, 1, -1, 0},                   /* div [rip+1] */
      {{0x67, 0xf7, 0x31}, 1, 3, 32, 0, 1, -1, 0},                         /* div [ecx] */
      {{0x64, 0x48, 0xf7, 0x34, 0x25, 8, 0, 0, 0}, 1, 9, 64, 0, 1, -1, 0}, /* div fs:[8] */
      {{0x2e, 0x3e, 0xf7, 0x31}, 1, 4, 32, 0, 1, -1, 0},                   /* null segments */
      {{0x41, 0xf7, 0x75, 0x00}, 1, 4, 32, 0, 1, -1, 0},                   /* div [r13+0] */
      {{0xf7, 0xe1}, 0, 0, 0, 0, 0, 0, 0},                                 /* mul ecx */
      {{0xf7, 0xc1, 0, 0, 0, 0}, 0, 0, 0, 0, 0, 0, 0},                     /* test ecx, imm */
      {{0x65, 0xf7, 0x31}, 0, 0, 0, 0, 0, 0, 0},                           /* gs: not resumed */
      {{0x0f, 0xaf, 0xc1}, 0, 0, 0, 0, 0, 0, 0},                           /* imul */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cj_div_insn d;
    int ok = cj_div_decode(cases[i].code, &d);
    cr_expect_eq(ok, cases[i].ok, "case %zu: decoded %d", i, ok);
    if (!ok || !cases[i].ok) continue;
    cr_expect_eq(d.length, cases[i].length, "case %zu: length %d", i, d.length);
    cr_expect_eq(d.width, cases[i].width, "case %zu: width %d", i, d.width);
    cr_expect_eq(d.is_signed, cases[i].is_signed, "case %zu", i);
    cr_expect_eq(d.mem, cases[i].mem, "case %zu", i);
    if (!d.mem) cr_expect_eq(d.reg, cases[i].reg, "case %zu: register %d", i, d.reg);
    cr_expect_eq(d.high_byte, cases[i].high_byte, "case %zu", i);
  }
}

Test(divide, gpu_values_every_width) {
  uint64_t q, r;
  static const struct {
    int width, is_signed;
    uint64_t high, low, divisor, q, r;
  } cases[] = {
      {32, 1, 0, 7, 0, 0xffffffff, 7},
      {32, 1, 0xffffffff, 0xfffffff9, 0, 0xffffffff, 0xfffffff9},
      {32, 0, 0, 0, 0, 0xffffffff, 0},
      {32, 1, 0xffffffff, 0x80000000, 0xffffffff, 0x80000000, 0},
      {64, 0, 0, 0xffffffff, 0, 0xffffffff, 0xffffffff},
      {64, 0, 0, 1ull << 32, 0, ~0ull, 1ull << 32},
      {64, 1, ~0ull, 1ull << 63, ~0ull, 1ull << 63, 0},
      {64, 1, ~0ull, 1ull << 63, 0, ~0ull, 1ull << 63},
      {16, 0, 0, 65535, 0, 0xffff, 65535},
      {16, 1, 0xffff, 0x8000, 0xffff, 0x8000, 0},
      {8, 0, 0, 255, 0, 0xff, 255},
      {8, 1, 0xff, 0x80, 0xff, 0x80, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cr_assert(cj_div_gpu_result(cases[i].width, cases[i].is_signed, cases[i].high, cases[i].low,
                                cases[i].divisor, &q, &r),
              "case %zu", i);
    cr_expect(q == cases[i].q && r == cases[i].r, "case %zu: %#llx %#llx", i, (unsigned long long)q,
              (unsigned long long)r);
  }
}
