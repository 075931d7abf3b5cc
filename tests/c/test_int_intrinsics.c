/*
** test_int_intrinsics.c -- CUDA's integer intrinsics (bit counts, bit reversal, byte permute,
** funnel shifts with and without the clamp, high halves of products, 24-bit products, halving
** adds, sums of absolute differences) at their boundaries: each expected value computed here from
** the CUDA Math API's definition of the intrinsic, written bit by bit, never from the CPU device's
** code. On a GPU when there is one (which so checks these expectations against the hardware), else
** on the CPU device, whose kernels/cujit/cpu_math.h defines them.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(int_intrinsics, .init = cj_fixture_open, .fini = cj_fixture_close);

/* What each input gives, in the kernel's order (one unsigned long long each). */
enum {
  R_POPC,
  R_POPCLL,
  R_CLZ,
  R_CLZLL,
  R_FFS,
  R_FFSLL,
  R_BREV,
  R_BREVLL,
  R_BYTE_PERM,
  R_FSHL,
  R_FSHR,
  R_FSHLC,
  R_FSHRC,
  R_MULHI,
  R_UMULHI,
  R_MUL64HI,
  R_UMUL64HI,
  R_MUL24,
  R_UMUL24,
  R_HADD,
  R_RHADD,
  R_UHADD,
  R_URHADD,
  R_SAD,
  R_USAD,
  R_COUNT
};

static const char *const result_name[R_COUNT] = {"__popc",
                                                 "__popcll",
                                                 "__clz",
                                                 "__clzll",
                                                 "__ffs",
                                                 "__ffsll",
                                                 "__brev",
                                                 "__brevll",
                                                 "__byte_perm",
                                                 "__funnelshift_l",
                                                 "__funnelshift_r",
                                                 "__funnelshift_lc",
                                                 "__funnelshift_rc",
                                                 "__mulhi",
                                                 "__umulhi",
                                                 "__mul64hi",
                                                 "__umul64hi",
                                                 "__mul24",
                                                 "__umul24",
                                                 "__hadd",
                                                 "__rhadd",
                                                 "__uhadd",
                                                 "__urhadd",
                                                 "__sad",
                                                 "__usad"};

static const char kernel_body[] =
    "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "if (i >= n) return;\n"
    "unsigned x = a[i], y = b[i], z = s[i];\n"
    "unsigned long long X = A[i], Y = B[i], *r = o + i * rc;\n"
    "r[0] = __popc(x); r[1] = __popcll(X);\n"
    "r[2] = __clz((int)x); r[3] = __clzll((long long)X);\n"
    "r[4] = __ffs((int)x); r[5] = __ffsll((long long)X);\n"
    "r[6] = __brev(x); r[7] = __brevll(X);\n"
    /* the selector's nibbles without their top bit: the Math API reads 3 bits of each */
    "r[8] = __byte_perm(x, y, z & 0x7777u);\n"
    "r[9] = __funnelshift_l(x, y, z); r[10] = __funnelshift_r(x, y, z);\n"
    "r[11] = __funnelshift_lc(x, y, z); r[12] = __funnelshift_rc(x, y, z);\n"
    "r[13] = (unsigned)__mulhi((int)x, (int)y); r[14] = __umulhi(x, y);\n"
    "r[15] = (unsigned long long)__mul64hi((long long)X, (long long)Y);\n"
    "r[16] = __umul64hi(X, Y);\n"
    "r[17] = (unsigned)__mul24((int)x, (int)y); r[18] = __umul24(x, y);\n"
    "r[19] = (unsigned)__hadd((int)x, (int)y); r[20] = (unsigned)__rhadd((int)x, (int)y);\n"
    "r[21] = __uhadd(x, y); r[22] = __urhadd(x, y);\n"
    "r[23] = __sad((int)x, (int)y, z); r[24] = __usad(x, y, z);";

/* --- the definitions, bit by bit ---------------------------------------------------------------
 */

static int bit(uint64_t v, int i) {
  return (int)(v >> i & 1);
}

static uint64_t popcount(uint64_t v, int bits) {
  uint64_t n = 0;
  for (int i = 0; i < bits; i++) n += (uint64_t)bit(v, i);
  return n;
}

/* The number of zero bits above the highest set one: `bits` for 0. */
static uint64_t leading_zeros(uint64_t v, int bits) {
  uint64_t n = 0;
  for (int i = bits - 1; i >= 0 && !bit(v, i); i--) n++;
  return n;
}

/* The 1-based position of the lowest set bit, 0 for 0. */
static uint64_t first_set(uint64_t v, int bits) {
  for (int i = 0; i < bits; i++)
    if (bit(v, i)) return (uint64_t)i + 1;
  return 0;
}

/* Bit i of the result is bit bits-1-i of v. */
static uint64_t reversed(uint64_t v, int bits) {
  uint64_t r = 0;
  for (int i = 0; i < bits; i++) r |= (uint64_t)bit(v, bits - 1 - i) << i;
  return r;
}

/* Byte n of the result is byte s[4n+2:4n] of the eight bytes x (0..3) then y (4..7). */
static uint64_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
  uint8_t in[8];
  for (int i = 0; i < 4; i++) in[i] = (uint8_t)(x >> 8 * i), in[4 + i] = (uint8_t)(y >> 8 * i);
  uint32_t r = 0;
  for (int n = 0; n < 4; n++) r |= (uint32_t)in[s >> 4 * n & 7] << 8 * n;
  return r;
}

/* hi:lo shifted left by k bits (0..32), its upper 32 bits. */
static uint64_t shift_left(uint32_t lo, uint32_t hi, unsigned k) {
  if (k == 0) return hi;
  if (k == 32) return lo;
  return (uint32_t)(hi << k | lo >> (32 - k));
}

/* hi:lo shifted right by k bits (0..32), its lower 32 bits. */
static uint64_t shift_right(uint32_t lo, uint32_t hi, unsigned k) {
  if (k == 0) return lo;
  if (k == 32) return hi;
  return (uint32_t)(lo >> k | hi << (32 - k));
}

/* The upper 64 bits of the 128-bit product, from 32-bit halves (no 128-bit type). */
static uint64_t umul64hi(uint64_t a, uint64_t b) {
  uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* Signed: the unsigned product's upper half less b for a negative a and a for a negative b
** (two's complement, modulo 2^64). */
static uint64_t mul64hi(uint64_t a, uint64_t b) {
  uint64_t r = umul64hi(a, b);
  if (bit(a, 63)) r -= b;
  if (bit(b, 63)) r -= a;
  return r;
}

/* The 24-bit operands: bits 23..0, bit 23 the sign for the signed form (the top 8 bits ignored). */
static int64_t low24_signed(uint32_t v) {
  int64_t m = v & 0xffffff;
  return m >= 0x800000 ? m - 0x1000000 : m;
}

static void expected(uint32_t x, uint32_t y, uint32_t z, uint64_t X, uint64_t Y, uint64_t *r) {
  int64_t sx = (int32_t)x, sy = (int32_t)y;
  r[R_POPC] = popcount(x, 32);
  r[R_POPCLL] = popcount(X, 64);
  r[R_CLZ] = leading_zeros(x, 32);
  r[R_CLZLL] = leading_zeros(X, 64);
  r[R_FFS] = first_set(x, 32);
  r[R_FFSLL] = first_set(X, 64);
  r[R_BREV] = reversed(x, 32);
  r[R_BREVLL] = reversed(X, 64);
  r[R_BYTE_PERM] = byte_perm(x, y, z);
  r[R_FSHL] = shift_left(x, y, z & 31);
  r[R_FSHR] = shift_right(x, y, z & 31);
  r[R_FSHLC] = shift_left(x, y, z < 32 ? z : 32);
  r[R_FSHRC] = shift_right(x, y, z < 32 ? z : 32);
  r[R_MULHI] = (uint32_t)((uint64_t)(sx * sy) >> 32);
  r[R_UMULHI] = ((uint64_t)x * y) >> 32;
  r[R_MUL64HI] = mul64hi(X, Y);
  r[R_UMUL64HI] = umul64hi(X, Y);
  r[R_MUL24] = (uint32_t)(uint64_t)(low24_signed(x) * low24_signed(y));
  r[R_UMUL24] = (uint32_t)((uint64_t)(x & 0xffffff) * (y & 0xffffff));
  /* the sums in 64 bits (no overflow), halved rounding down; the r forms add 1 first */
  int64_t ssum = sx + sy;
  r[R_HADD] = (uint32_t)(ssum >= 0 ? ssum / 2 : -((-ssum + 1) / 2));
  r[R_RHADD] = (uint32_t)(ssum + 1 >= 0 ? (ssum + 1) / 2 : -((-(ssum + 1) + 1) / 2));
  r[R_UHADD] = ((uint64_t)x + y) / 2;
  r[R_URHADD] = ((uint64_t)x + y + 1) / 2;
  r[R_SAD] = (uint32_t)((uint64_t)(sx > sy ? sx - sy : sy - sx) + z);
  r[R_USAD] = (uint32_t)((x > y ? (uint64_t)x - y : (uint64_t)y - x) + z);
}

/* --- the inputs ------------------------------------------------------------------------------ */

enum { FIXED = 16, RANDOM = 48, N = FIXED + RANDOM };

typedef struct {
  uint32_t x, y, z;
  uint64_t X, Y;
} input;

/* Zeros, ones, the sign bits, bit 23 (the 24-bit sign), shifts of 0, 31, 32, 33 and past 2^31. */
static const input fixed[FIXED] = {
    {0, 0, 0, 0, 0},
    {1, 0, 1, 1, 0},
    {0xffffffffu, 0xffffffffu, 31, ~0ull, ~0ull},
    {0x80000000u, 0x80000000u, 32, 1ull << 63, 1ull << 63},
    {0x7fffffffu, 0x80000000u, 33, (1ull << 63) - 1, 1ull << 63},
    {0x80000000u, 0x7fffffffu, 0xffffffffu, 1ull << 63, ~0ull},
    {0x12345678u, 0x9abcdef0u, 32, 0x123456789abcdef0ull, 0x0fedcba987654321ull},
    {0x12345678u, 0x9abcdef0u, 40, 0x8000000000000001ull, 2},
    {0x12345678u, 0x9abcdef0u, 64, 0xffffffff00000000ull, 0x00000000ffffffffull},
    {0x12345678u, 0x9abcdef0u, 0x80000005u, 3, ~0ull},
    {0x00800000u, 0x00800000u, 0x3210, 1ull << 32, 1ull << 32},
    {0xff7fffffu, 0x00ffffffu, 0x7654, 0x100000000ull, 0xffffffffffffffffull},
    {0xdeadbeefu, 0x01000001u, 0x4567, 0xdeadbeefdeadbeefull, 0x8000000000000000ull},
    {0xfffffffeu, 0x00000001u, 1, 0xfffffffffffffffeull, 0x7fffffffffffffffull},
    {0x00000003u, 0xfffffffdu, 0x0123, 0x0000000080000000ull, 0x0000000080000000ull},
    {0x80000001u, 0x7fffffffu, 16, 0x8000000080000000ull, 3},
};

Test(int_intrinsics, give_the_math_api_s_values_at_the_boundaries) {
  CJ_NEED_DEVICE(engine);
  static input in[N];
  for (int i = 0; i < FIXED; i++) in[i] = fixed[i];
  for (int i = FIXED; i < N; i++) {
    uint64_t r = cj_test_rand64(), q = cj_test_rand64();
    /* shifts of 0..63 half the time, any 32 bits otherwise */
    in[i] = (input){(uint32_t)r, (uint32_t)(r >> 32), i % 2 ? (uint32_t)(q % 64) : (uint32_t)q,
                    cj_test_rand64() >> (q % 7 * 9), cj_test_rand64() >> (q % 5 * 13)};
  }
  uint32_t hx[N], hy[N], hz[N];
  uint64_t hX[N], hY[N];
  for (int i = 0; i < N; i++) hx[i] = in[i].x, hy[i] = in[i].y, hz[i] = in[i].z;
  for (int i = 0; i < N; i++) hX[i] = in[i].X, hY[i] = in[i].Y;
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(
      engine,
      "int_intrinsics(const unsigned *a, const unsigned *b, const unsigned *s, "
      "const unsigned long long *A, const unsigned long long *B, unsigned long long *o, int rc, "
      "int n)",
      kernel_body, NULL, NULL, &k));
  cujit_buffer *da = cj_test_upload(hx, sizeof hx, CUJIT_U32);
  cujit_buffer *db = cj_test_upload(hy, sizeof hy, CUJIT_U32);
  cujit_buffer *ds = cj_test_upload(hz, sizeof hz, CUJIT_U32);
  cujit_buffer *dA = cj_test_upload(hX, sizeof hX, CUJIT_U64);
  cujit_buffer *dB = cj_test_upload(hY, sizeof hY, CUJIT_U64);
  static uint64_t got[N][R_COUNT];
  cujit_buffer *dout = cj_test_upload(NULL, sizeof got, CUJIT_U64);
  cujit_launch_config c = {
      .size = sizeof c, .grid = {2, 1, 1}, .block = {N / 2, 1, 1}, .shared_bytes = 0};
  cujit_arg args[] = {CUJIT_ARG_BUF(da),    CUJIT_ARG_BUF(db), CUJIT_ARG_BUF(ds),
                      CUJIT_ARG_BUF(dA),    CUJIT_ARG_BUF(dB), CUJIT_ARG_BUF(dout),
                      CUJIT_ARG_I(R_COUNT), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &c, args, 8));
  cj_test_download(got, dout, sizeof got);
  int wrong = 0;
  for (int i = 0; i < N; i++) {
    uint64_t want[R_COUNT];
    expected(in[i].x, in[i].y, in[i].z, in[i].X, in[i].Y, want);
    for (int j = 0; j < R_COUNT; j++)
      if (got[i][j] != want[j] && wrong++ < 40)
        cr_log_error("%s: x %#x y %#x s %#x X %#llx Y %#llx gave %#llx, the definition %#llx",
                     result_name[j], in[i].x, in[i].y, in[i].z, (unsigned long long)in[i].X,
                     (unsigned long long)in[i].Y, (unsigned long long)got[i][j],
                     (unsigned long long)want[j]);
  }
  cr_expect_eq(wrong, 0, "%d results differ from the definitions (the first 40 above)", wrong);
  cujit_buffer *bufs[] = {da, db, ds, dA, dB, dout};
  for (int i = 0; i < 6; i++) cujit_buffer_free(bufs[i]);
  cujit_kernel_free(k);
}

/* __fns(mask, base, offset) by another road than PTX's walk: the set bits at or above base (at or
** below it), the lowest (highest) |offset| - 1 of them cleared, then the lowest (highest) left. */
static uint32_t nth_set(uint32_t mask, uint32_t base, int offset) {
  if (offset == 0) return mask >> base & 1 ? base : 0xffffffffu;
  uint64_t bits = offset > 0 ? (uint64_t)mask >> base << base : mask & ((2ull << base) - 1);
  for (int n = offset > 0 ? offset : -offset; n > 1 && bits; n--)
    bits &= offset > 0 ? bits - 1 : ~(1ull << (63 - __builtin_clzll(bits)));
  if (!bits) return 0xffffffffu;
  return offset > 0 ? (uint32_t)__builtin_ctzll(bits) : (uint32_t)(63 - __builtin_clzll(bits));
}

/* PTX's examples, then every base with offsets -34..34 over masks of none, one, every other and
** all bits, and random ones. */
Test(int_intrinsics, fns_finds_the_nth_set_bit_from_base) {
  CJ_NEED_DEVICE(engine);
  enum { MASKS = 12, OFFS = 69, PER = 32 * OFFS };
  static uint32_t masks[MASKS] = {0, 1, 0x80000000u, 0xaaaaaaaau, 0x55555555u, 0xffffffffu};
  for (int i = 6; i < MASKS; i++) masks[i] = (uint32_t)cj_test_rand64();
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "fns(const unsigned *m, unsigned *o, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i >= n) return;\n"
                                "unsigned base = i % 32;\n"
                                "int offset = (i / 32) % 69 - 34;\n"
                                "o[i] = __fns(m[i / (32 * 69)], base, offset);",
                                NULL, NULL, &k));
  cujit_buffer *dm = cj_test_upload(masks, sizeof masks, CUJIT_U32);
  static uint32_t got[MASKS * PER];
  cujit_buffer *dout = cj_test_upload(NULL, sizeof got, CUJIT_U32);
  cujit_launch_config c = {
      .size = sizeof c, .grid = {MASKS * PER / 128, 1, 1}, .block = {128, 1, 1}};
  cujit_arg a[] = {CUJIT_ARG_BUF(dm), CUJIT_ARG_BUF(dout), CUJIT_ARG_I(MASKS * PER)};
  EXPECT_OK(cujit_launch(k, &c, a, 3));
  cj_test_download(got, dout, sizeof got);
  /* PTX's own examples: mask 0xaaaaaaaa, (base 3, offset 1) 3, (3, -1) 3, (2, 1) 3, (2, -1) 1 */
  cr_expect_eq(nth_set(0xaaaaaaaau, 3, 1), 3u);
  cr_expect_eq(nth_set(0xaaaaaaaau, 3, -1), 3u);
  cr_expect_eq(nth_set(0xaaaaaaaau, 2, 1), 3u);
  cr_expect_eq(nth_set(0xaaaaaaaau, 2, -1), 1u);
  int wrong = 0;
  for (int i = 0; i < MASKS * PER; i++) {
    uint32_t mask = masks[i / PER], base = (uint32_t)(i % 32);
    int offset = (i / 32) % OFFS - 34;
    uint32_t want = nth_set(mask, base, offset);
    if (got[i] != want && wrong++ < 10)
      cr_log_error("__fns(%#x, %u, %d) = %#x, want %#x", mask, base, offset, got[i], want);
  }
  cr_expect_eq(wrong, 0, "%d results differ (the first 10 above)", wrong);
  cujit_buffer_free(dm);
  cujit_buffer_free(dout);
  cujit_kernel_free(k);
}
