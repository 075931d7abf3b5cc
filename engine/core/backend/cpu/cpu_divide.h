/*
** cpu_divide.h -- integer division by zero (and INT_MIN / -1) on the CPU device gives what a GPU
** gives instead of SIGFPE: the worker's fault handler (cpu_pool.c) hands the faulting context
** here, which decodes the x86-64 div/idiv at its instruction pointer, writes the GPU's quotient
** and remainder into its registers and moves past it. Internal.
**
** The GPU's values (an H200, CUDA 13; the same for signed and unsigned operands):
**   32 bits and narrower: x / 0 = all ones (-1, 0xffffffff), x % 0 = x;
**   64 bits: x / 0 = 0xffffffff when x's bits fit in the low 32 (its division takes the 32-bit
**            path), else all ones; x % 0 = x;
**   MIN / -1 = MIN, MIN % -1 = 0 at every width.
*/
#ifndef CUJIT_CPU_DIVIDE_H
#define CUJIT_CPU_DIVIDE_H

#include <stdint.h>

/* A decoded div or idiv: the operand's width in bits (8, 16, 32, 64), whether it is idiv, its
** length in bytes, and where the divisor is: a register (its number 0-15, rax..r15; high_byte:
** AH, CH, DH or BH) or memory (mem set; the address is computed from the context). */
typedef struct cj_div_insn {
  int width, is_signed, length;
  int mem, reg, high_byte;
  /* memory operand: base and index register numbers (-1: none), scale, displacement, and
  ** whether it is relative to the next instruction, to FS, or to 32-bit addressing. */
  int base, index, scale, rip_relative, fs, addr32;
  int64_t disp;
} cj_div_insn;

/* Decodes the instruction at code (at most 15 bytes are read); 1 when it is a div or idiv this
** file can resume, else 0. */
int cj_div_decode(const unsigned char *code, cj_div_insn *out);

/* The GPU's quotient and remainder of the dividend (high:low halves, as the instruction reads
** them, each `width` bits) by divisor, for a division the host faulted on; 0 when it is not one
** a C division makes (the high half is not the low half's extension), which stays a fault. */
int cj_div_gpu_result(int width, int is_signed, uint64_t high, uint64_t low, uint64_t divisor,
                      uint64_t *quotient, uint64_t *remainder);

/* From the SIGFPE handler: the ucontext_t of a fault with code si_code. 1 when the division was
** given the GPU's result and the thread may resume; 0 leaves the context untouched. */
int cj_div_resume(int si_code, void *ucontext);

#endif
