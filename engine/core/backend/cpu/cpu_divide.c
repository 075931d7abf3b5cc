/*
** cpu_divide.c -- the CPU device's integer division by zero, as a GPU computes it: decodes the
** div/idiv the host faulted on (x86-64: prefixes, REX, F6/F7 /6 /7, ModRM, SIB, displacement),
** computes the GPU's quotient and remainder (cpu_divide.h lists them), writes them into the
** faulting context's registers and moves its instruction pointer past the instruction. Called
** from the worker's SIGFPE handler, so it only reads registers and the operand the instruction
** itself read, and calls nothing that is not async-signal-safe.
*/
#define _GNU_SOURCE /* REG_RAX and the other register names of ucontext_t */
#include "cpu_divide.h"

#include <signal.h>
#include <string.h>

#if defined(__x86_64__)
#include <ucontext.h>
#endif

int cj_div_decode(const unsigned char *code, cj_div_insn *out) {
  memset(out, 0, sizeof *out);
  out->reg = out->base = out->index = -1;
  const unsigned char *p = code;
  int opsize16 = 0, rex = 0;
  for (;; p++) { /* legacy prefixes, then at most one REX right before the opcode */
    if (p - code >= 14) return 0;
    unsigned char b = *p;
    if (b == 0x66)
      opsize16 = 1;
    else if (b == 0x67)
      out->addr32 = 1;
    else if (b == 0x64)
      out->fs = 1;
    else if (b == 0x65)
      return 0; /* GS has no base a user program sets on Linux */
    else if (b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0xf0 || b == 0xf2 ||
             b == 0xf3)
      continue; /* null segments in 64-bit mode; lock/rep do not change a division */
    else
      break;
  }
  if ((*p & 0xf0) == 0x40) rex = *p++;
  if (*p != 0xf6 && *p != 0xf7) return 0;
  out->width = *p == 0xf6 ? 8 : rex & 8 ? 64 : opsize16 ? 16 : 32;
  p++;
  unsigned modrm = *p++, mod = modrm >> 6, op = (modrm >> 3) & 7, rm = modrm & 7;
  if (op != 6 && op != 7) return 0; /* F6/F7 /0 to /5: test, not, neg, mul, imul */
  out->is_signed = op == 7;
  if (mod == 3) {
    out->reg = (int)rm | (rex & 1) << 3;
    if (out->width == 8 && !rex && rm >= 4) out->reg = (int)rm - 4, out->high_byte = 1;
  } else {
    out->mem = 1;
    if (rm == 4) {
      unsigned sib = *p++, idx = ((sib >> 3) & 7) | (rex & 2) << 2, base = sib & 7;
      out->scale = (int)(sib >> 6);
      if (idx != 4) out->index = (int)idx; /* 4 without REX.X: no index */
      if (base == 5 && mod == 0)
        mod = 2; /* no base, a 32-bit displacement */
      else
        out->base = (int)(base | (rex & 1) << 3);
    } else if (rm == 5 && mod == 0) {
      out->rip_relative = 1;
      mod = 2;
    } else {
      out->base = (int)(rm | (rex & 1) << 3);
    }
    if (mod == 1) {
      out->disp = (int8_t)*p++;
    } else if (mod == 2) {
      int32_t d;
      memcpy(&d, p, 4);
      out->disp = d;
      p += 4;
    }
  }
  out->length = (int)(p - code);
  return 1;
}

static uint64_t width_mask(int width) {
  return width == 64 ? ~0ull : (1ull << width) - 1;
}

int cj_div_gpu_result(int width, int is_signed, uint64_t high, uint64_t low, uint64_t divisor,
                      uint64_t *quotient, uint64_t *remainder) {
  uint64_t mask = width_mask(width), sign = 1ull << (width - 1);
  low &= mask, high &= mask, divisor &= mask;
  /* The compiler's division of a C value: the high half is the low half's extension (cdq, cqo,
  ** xor edx,edx). Anything else is not C's division (a wider one of hand-written code). */
  uint64_t extension = is_signed && (low & sign) ? mask : 0;
  if (high != extension) return 0;
  if (divisor == 0) {
    *quotient = width == 64 && (low >> 32) == 0 ? 0xffffffffull : mask;
    *remainder = low;
    return 1;
  }
  if (is_signed && divisor == mask && low == sign) { /* MIN / -1 */
    *quotient = sign;
    *remainder = 0;
    return 1;
  }
  return 0;
}

#if defined(__x86_64__)
/* ModRM's register numbers (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15) as ucontext's. */
static const int gregs_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP,
                                 REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                 REG_R12, REG_R13, REG_R14, REG_R15};

int cj_div_resume(int si_code, void *ucontext) {
  if (si_code != FPE_INTDIV && si_code != FPE_INTOVF) return 0;
  ucontext_t *uc = ucontext;
  greg_t *g = uc->uc_mcontext.gregs;
  const unsigned char *code = (const unsigned char *)g[REG_RIP];
  cj_div_insn d;
  if (!cj_div_decode(code, &d)) return 0;
  uint64_t divisor = 0;
  if (!d.mem) {
    uint64_t r = (uint64_t)g[gregs_of[d.reg]];
    divisor = d.high_byte ? r >> 8 : r;
  } else {
    uint64_t at = (uint64_t)d.disp;
    if (d.rip_relative) at += (uint64_t)g[REG_RIP] + (uint64_t)d.length;
    if (d.base >= 0) at += (uint64_t)g[gregs_of[d.base]];
    if (d.index >= 0) at += (uint64_t)g[gregs_of[d.index]] << d.scale;
    if (d.addr32) at &= 0xffffffffull;
    if (d.fs) { /* glibc keeps the thread pointer, FS's base, in its first word */
      uint64_t fs_base;
      __asm__("movq %%fs:0, %0" : "=r"(fs_base));
      at += fs_base;
    }
    memcpy(&divisor, (const void *)at, (size_t)d.width / 8); /* the faulting read succeeded */
  }
  uint64_t rax = (uint64_t)g[REG_RAX], rdx = (uint64_t)g[REG_RDX], high, low;
  if (d.width == 8)
    high = rax >> 8, low = rax;
  else
    high = rdx, low = rax;
  uint64_t q, r;
  if (!cj_div_gpu_result(d.width, d.is_signed, high, low, divisor, &q, &r)) return 0;
  switch (d.width) {
  case 8: /* AL = quotient, AH = remainder; the rest of RAX stays */
    g[REG_RAX] = (greg_t)((rax & ~0xffffull) | (r & 0xff) << 8 | (q & 0xff));
    break;
  case 16:
    g[REG_RAX] = (greg_t)((rax & ~0xffffull) | (q & 0xffff));
    g[REG_RDX] = (greg_t)((rdx & ~0xffffull) | (r & 0xffff));
    break;
  default: /* a 32-bit result zero-extends into the 64-bit register, as the instruction's does */
    g[REG_RAX] = (greg_t)q;
    g[REG_RDX] = (greg_t)r;
  }
  g[REG_RIP] += d.length;
  return 1;
}
#else
/* Elsewhere the fault stays a device fault (AArch64 does not trap: x / 0 is 0 there). */
int cj_div_resume(int si_code, void *ucontext) {
  (void)si_code, (void)ucontext;
  return 0;
}
#endif
