/*
** test_cpu_device.c -- the CPU device's kernel side, end to end without the engine: kernels from
** kernels.h go through cj_cpu_translation_unit and g++, and run on two worker threads; results
** are checked against host references on fresh random inputs (the seed is printed), with outputs
** poisoned first. Also: the device library's programs (reductions, Philox fills), the errors a
** GPU would not report (barrier divergence, __trap, assert), schedules, and refusals.
** `test_cpu_device --check-child` is the AddressSanitizer half, run in a child process.
*/
#include "compile/compile.h"
#include "program/program.h"
#include "compile/cpu_source.h"
#include "cujit.h"
#include "lang/signature.h"
#include "harness.h"
#include "kernels.h"
#include "../../kernels_src/cujit/cpu_abi.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "program/library.h"

int check_mode_tests(const char *self, const char *so, const char *which); /* test_cpu_check.c */

static int failures, checks;
#define CHECK_PLACEHOLDER
#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                  \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
    }                                                                                              \
  } while (0)

/* binary16 by its bits, the host's reference for __half: conversions round to nearest even.
** Written out rather than _Float16 so that every C11 compiler builds the test (clang 14 has no
** _Float16 on x86-64), and independent of cujit's own conversions, which it checks. */
typedef uint16_t host_half;

static host_half half_of(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, mag = x & 0x7fffffff, exp = mag >> 23;
  if (mag > 0x7f800000) return (host_half)(sign | 0x7e00);  /* NaN */
  if (mag >= 0x477ff000) return (host_half)(sign | 0x7c00); /* 65520 and up round to infinity */
  if (exp == 0) return (host_half)sign;                     /* a float subnormal: far below */
  uint32_t m = (mag & 0x7fffff) | 0x800000, shift, q;
  if (mag >= 0x38800000) { /* a normal half: the float's 13 low mantissa bits go */
    shift = 13;
    q = ((exp - 127 + 15) << 10) | ((m >> 13) & 0x3ff);
  } else { /* a subnormal half, in units of 2^-24 */
    shift = 126 - exp;
    if (shift > 31) return (host_half)sign;
    q = m >> shift;
  }
  uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++; /* a carry moves into the exponent */
  return (host_half)(sign | q);
}

static float float_of(host_half h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float f = e == 0    ? ldexpf((float)m, -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf((float)(m | 0x400), e - 25);
  return h & 0x8000 ? -f : f;
}

static unsigned long long rng_state;
static unsigned long long rnd(void) {
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}
static int rand_int(int lo, int hi) { /* in [lo, hi] */
  return lo + (int)(rnd() % (unsigned long long)(hi - lo + 1));
}
static float rand_float(void) { /* in [-1, 1], never 0 */
  float f = (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  return f == 0.0f ? 0.5f : f;
}
static void *poisoned(size_t bytes) {
  void *p = malloc(bytes);
  memset(p, 0xA5, bytes);
  return p;
}
static cpu_launch_opts shape(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz) {
  cpu_launch_opts o = {{gx, gy, gz}, {bx, by, bz}, 0, CJ_CPU_FORWARD, 0};
  return o;
}
static char err[16384];
static int launch(cpu_module *m, const char *k, cpu_launch_opts o, void **args) {
  int rc = cpu_launch(m, k, &o, args, err, sizeof err);
  CHECK(rc == 0, "launch of %s failed: %s", k, err);
  return rc;
}

static void test_vadd(cpu_module *m) {
  int n = 100003;
  float *a = malloc(n * 4), *b = malloc(n * 4), *c = poisoned(n * 4);
  for (int i = 0; i < n; i++) a[i] = rand_float(), b[i] = rand_float();
  void *args[] = {&a, &b, &c, &n};
  launch(m, "vadd", shape((n + 255) / 256, 1, 1, 256, 1, 1), args);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
  CHECK(bad == 0, "vadd: %d wrong elements", bad);
  free(a), free(b), free(c);
}

static void test_matmul(cpu_module *m) {
  int M = 45, N = 37, K = 51;
  float *A = malloc(M * K * 4), *B = malloc(K * N * 4), *C = poisoned(M * N * 4);
  for (int i = 0; i < M * K; i++) A[i] = rand_float();
  for (int i = 0; i < K * N; i++) B[i] = rand_float();
  void *args[] = {&A, &B, &C, &M, &N, &K};
  for (int sched = CJ_CPU_FORWARD; sched <= CJ_CPU_RANDOM; sched++) {
    memset(C, 0xA5, M * N * 4);
    cpu_launch_opts o = shape((N + 15) / 16, (M + 15) / 16, 1, 16, 16, 1);
    o.schedule = sched, o.seed = rnd();
    launch(m, "matmul", o, args);
    double worst = 0;
    for (int r = 0; r < M; r++)
      for (int c = 0; c < N; c++) {
        double ref = 0;
        for (int j = 0; j < K; j++) ref += (double)A[r * K + j] * B[j * N + c];
        double d = fabs(ref - C[r * N + c]);
        worst = d > worst || d != d ? (d != d ? INFINITY : d) : worst;
      }
    CHECK(worst < 1e-4, "matmul (schedule %d): off by %g", sched, worst);
  }
  free(A), free(B), free(C);
}

static void test_reductions(cpu_module *m) {
  int n = 256 * 37 - 11, nb = (n + 255) / 256;
  int *x = malloc(n * 4), *out = poisoned(nb * 4);
  long long total = 0;
  for (int i = 0; i < n; i++) x[i] = rand_int(-1000, 1000) | 1, total += x[i];
  void *a1[] = {&x, &out, &n};
  launch(m, "tree_sum", shape(nb, 1, 1, 256, 1, 1), a1);
  int bad = 0;
  for (int b = 0; b < nb; b++) {
    int ref = 0;
    for (int i = b * 256; i < n && i < b * 256 + 256; i++) ref += x[i];
    bad += out[b] != ref;
  }
  CHECK(bad == 0, "tree_sum: %d wrong blocks", bad);

  /* Block shapes that are not multiples of 32 exercise reduce.h's partial warps. */
  unsigned blocks[] = {256, 96, 64, 1024};
  for (int s = 0; s < 4; s++) {
    unsigned long long sum = 0;
    long long *per = poisoned(8 * 8);
    unsigned long long *ps = &sum;
    void *a2[] = {&x, &ps, &per, &n};
    launch(m, "warp_sum", shape(8, 1, 1, blocks[s], 1, 1), a2);
    CHECK((long long)sum == total, "warp_sum (block %u): %lld, expected %lld", blocks[s],
          (long long)sum, total);
    long long per_total = 0;
    for (int b = 0; b < 8; b++) per_total += per[b];
    CHECK(per_total == total, "block_sum (block %u): %lld, expected %lld", blocks[s], per_total,
          total);
    free(per);
  }
  double *d = malloc(100 * 5 * 8), *sums = poisoned(5 * 8), *mins = poisoned(5 * 8);
  for (int i = 0; i < 500; i++) d[i] = rand_int(1, 1 << 20);
  void *a3[] = {&d, &sums, &mins};
  launch(m, "lib_sum", shape(5, 1, 1, 100, 1, 1), a3);
  for (int b = 0; b < 5; b++) {
    double s = 0, mn = INFINITY;
    for (int i = 0; i < 100; i++) s += d[b * 100 + i], mn = fmin(mn, d[b * 100 + i]);
    CHECK(sums[b] == s && mins[b] == mn, "lib_sum block %d: %g %g, expected %g %g", b, sums[b],
          mins[b], s, mn);
  }
  free(x), free(out), free(d), free(sums), free(mins);
}

static void test_warp_ops(cpu_module *m) {
  int n = 4 * 128;
  int *x = malloc(n * 4), *out = poisoned(n * 5 * 4);
  unsigned *v = poisoned(n * 3 * 4);
  for (int i = 0; i < n; i++) x[i] = rand_int(1, 1 << 30);
  x[37] = 29 * 5;                                    /* one warp whose __all_sync is false */
  for (int i = 64; i < 96; i++) x[i] = 61 * (i + 1); /* one warp whose __any_sync is true */
  void *a1[] = {&x, &out}, *a2[] = {&x, &v};
  launch(m, "shuffles", shape(4, 1, 1, 128, 1, 1), a1);
  launch(m, "votes", shape(4, 1, 1, 128, 1, 1), a2);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int l = i & 31, w = i - l, ref[5];
    ref[0] = x[w + (l * 7) % 32];
    ref[1] = l >= 3 ? x[i - 3] : x[i];
    ref[2] = l + 5 < 32 ? x[i + 5] : x[i];
    ref[3] = x[w + (l ^ 9)];
    ref[4] = x[w + (l & 16) + 3];
    for (int k = 0; k < 5; k++) bad += out[5 * i + k] != ref[k];
    unsigned ballot = 0, any = 0, all = 1;
    for (int j = 0; j < 32; j++) {
      ballot |= (unsigned)(x[w + j] & 1) << j;
      any |= x[w + j] % 61 == 0;
      all &= x[w + j] % 29 != 0;
    }
    bad += v[3 * i] != ballot || v[3 * i + 1] != any || v[3 * i + 2] != all;
  }
  CHECK(bad == 0, "shuffles and votes: %d wrong values", bad);
  int *r = poisoned(n * 8 * 4);
  for (int i = 0; i < 32; i++) x[96 + i] = 4 * i + 2; /* one warp where __match_all_sync holds */
  void *a3[] = {&x, &r};
  launch(m, "wred", shape(4, 1, 1, 128, 1, 1), a3);
  bad = 0;
  for (int w = 0; w < n; w += 32) {
    int sum = 0, mn = x[w];
    unsigned mx = 0, xr = 0, all = 1;
    for (int j = 0; j < 32; j++) {
      int e = x[w + j];
      sum = (int)((unsigned)sum + (unsigned)e), mn = e < mn ? e : mn,
      mx = (unsigned)e > mx ? (unsigned)e : mx, xr ^= (unsigned)e;
      all &= (e & 3) == (x[w] & 3);
    }
    for (int j = 0; j < 32; j++) {
      const int *o = r + 8 * (w + j);
      unsigned any = 0;
      for (int k = 0; k < 32; k++) any |= (unsigned)((x[w + k] & 3) == (x[w + j] & 3)) << k;
      bad += o[0] != sum || o[1] != mn || (unsigned)o[2] != mx || (unsigned)o[3] != xr;
      bad += (unsigned)o[4] != any || (unsigned)o[5] != (all ? 0xffffffffu : 0) || o[6] != (int)all;
      bad += o[7] != (int)0xffffffffu + 1;
    }
  }
  CHECK(bad == 0, "__reduce_*_sync and __match_*_sync: %d wrong values", bad);
  free(r);
  free(x), free(out), free(v);
}

static void test_atomics(cpu_module *m) {
  int n = 300 * 128 - 5;
  int *x = malloc(n * 4), ci = 7, mx = -1, mn = 1 << 30, xorv = 0;
  unsigned long long cu = 0;
  float cf = 0;
  double cd = 0, dmx = -1;
  unsigned hist[16] = {0}, orv = 0;
  for (int i = 0; i < n; i++) x[i] = rand_int(0, 1 << 20);
  int *pci = &ci, *pmx = &mx, *pmn = &mn, *pxor = &xorv;
  unsigned long long *pcu = &cu;
  float *pcf = &cf;
  double *pcd = &cd, *pdmx = &dmx;
  unsigned *phist = hist, *porv = &orv;
  void *args[] = {&x, &n, &pci, &pcu, &pcf, &pcd, &pmx, &pmn, &phist, &porv, &pxor, &pdmx};
  launch(m, "atomics", shape(300, 1, 1, 128, 1, 1), args);
  unsigned long long rsum = 0;
  int rmx = -1, rmn = 1 << 30, rxor = 0;
  unsigned rhist[16] = {0}, ror = 0;
  for (int i = 0; i < n; i++) {
    rsum += (unsigned long long)x[i];
    rmx = x[i] > rmx ? x[i] : rmx, rmn = x[i] < rmn ? x[i] : rmn;
    rhist[x[i] % 16]++, ror |= 1u << (x[i] % 32), rxor ^= x[i];
  }
  CHECK(ci == 7 - n, "atomicAdd/Sub int: %d, expected %d", ci, 7 - n);
  CHECK(cu == rsum, "atomicAdd u64: %llu, expected %llu", cu, rsum);
  CHECK(cf == (float)n, "atomicAdd float: %g, expected %d", cf, n);
  CHECK(cd == (double)rsum, "atomicAdd double: %.17g, expected %llu", cd, rsum);
  CHECK(mx == rmx && mn == rmn, "atomicMax/Min: %d %d, expected %d %d", mx, mn, rmx, rmn);
  CHECK(memcmp(hist, rhist, sizeof hist) == 0, "atomicAdd histogram differs");
  CHECK(orv == ror && xorv == rxor, "atomicOr/Xor: %x %x, expected %x %x", orv, xorv, ror, rxor);
  CHECK(dmx == rmx * 0.5, "atomicMax double: %g, expected %g", dmx, rmx * 0.5);
  free(x);
}

static void test_shared_and_schedules(cpu_module *m) {
  int nb = 6, bs = 128, n = nb * bs;
  float *x = malloc(n * 4), *y = poisoned(n * 4);
  int *xi = malloc(n * 4), *yi = poisoned(n * 4), *racy[3];
  for (int i = 0; i < n; i++) x[i] = rand_float(), xi[i] = rand_int(1, 1 << 30);
  for (int sched = CJ_CPU_FORWARD; sched <= CJ_CPU_RANDOM; sched++) {
    cpu_launch_opts o = shape(nb, 1, 1, bs, 1, 1);
    o.schedule = sched, o.seed = rnd(), o.shared_bytes = bs * 4;
    memset(y, 0xA5, n * 4), memset(yi, 0xA5, n * 4);
    void *a1[] = {&x, &y}, *a2[] = {&xi, &yi};
    launch(m, "dyn_rev", o, a1);
    launch(m, "ns_rev", o, a2);
    int bad = 0;
    for (int i = 0; i < n; i++) {
      int r = (i / bs) * bs + (bs - 1 - i % bs);
      bad += y[i] != x[r] || yi[i] != xi[r];
    }
    CHECK(bad == 0, "extern __shared__ (schedule %d): %d wrong", sched, bad);
    racy[sched] = poisoned(n * 4);
    void *a3[] = {&xi, &racy[sched]};
    launch(m, "racy", o, a3);
  }
  /* Without the barrier, forward order reads slots not yet written; reverse order reads them
  ** written, all but (at most) the one that wraps around in each block: the schedules disagree,
  ** which is how the race shows. */
  int wrong_fwd = 0, wrong_rev = 0, wrong_rnd = 0;
  for (int i = 0; i < n; i++) {
    int ref = xi[(i / bs) * bs + (i % bs + 1) % bs];
    wrong_fwd += racy[0][i] != ref, wrong_rev += racy[1][i] != ref, wrong_rnd += racy[2][i] != ref;
  }
  /* A random order reads about half the neighbours written. */
  CHECK(wrong_fwd > nb && wrong_rev <= nb && wrong_rnd > nb && wrong_rnd < wrong_fwd,
        "a racy kernel should differ between schedules (wrong: forward %d, reverse %d, random %d)",
        wrong_fwd, wrong_rev, wrong_rnd);
  for (int s = 0; s < 3; s++) free(racy[s]);
  /* Blocks with and without a barrier, many per worker. */
  int nc = 600 * 128, *xc = malloc(nc * 4), *yc = poisoned(nc * 4), bad = 0;
  for (int i = 0; i < nc; i++) xc[i] = rand_int(1, 1 << 30);
  void *a4[] = {&xc, &yc};
  launch(m, "cond_bar", shape(600, 1, 1, 128, 1, 1), a4);
  for (int i = 0; i < nc; i++) {
    int b = i / 128, t = i % 128;
    bad += yc[i] != (b % 3 == 1 ? xc[b * 128 + 127 - t] : xc[i] + 1);
  }
  CHECK(bad == 0, "blocks with and without a barrier: %d wrong", bad);
  free(xc), free(yc);
  free(x), free(y), free(xi), free(yi);
}

static void test_indices(cpu_module *m) {
  unsigned g[3] = {3, 2, 2}, b[3] = {4, 3, 5}, nt = 4 * 3 * 5, n = 3 * 2 * 2 * nt;
  int *out = poisoned(n * 4);
  void *args[] = {&out};
  cpu_launch_opts o = shape(g[0], g[1], g[2], b[0], b[1], b[2]);
  o.schedule = CJ_CPU_RANDOM, o.seed = rnd();
  launch(m, "idx3", o, args);
  int bad = 0;
  for (unsigned i = 0; i < n; i++) {
    unsigned blk = i / nt, t = i % nt;
    unsigned ref = t % 4 + 10 * (t / 4 % 3) + 100 * (t / 12) + 1000 * (blk % 3) +
                   10000 * (blk / 3 % 2) + 100000 * (blk / 6);
    bad += out[i] != (int)ref;
  }
  CHECK(bad == 0, "3-D indices: %d wrong", bad);
  int *x = malloc(4 * 64 * 4), *so = poisoned(4 * 5 * 4);
  for (int i = 0; i < 256; i++) x[i] = rand_int(1, 1000);
  for (int i = 0; i < 64; i++) x[64 + i] = 3 * i + 3; /* block 1: all true */
  void *a2[] = {&x, &so};
  launch(m, "sync_ops", shape(4, 1, 1, 64, 1, 1), a2);
  for (int blk = 0; blk < 4; blk++) {
    int c = 0;
    for (int i = 0; i < 64; i++) c += x[blk * 64 + i] % 3 == 0;
    CHECK(so[5 * blk] == c && so[5 * blk + 1] == (c == 64) && so[5 * blk + 2] == (c > 0) &&
              so[5 * blk + 3] == 1 && so[5 * blk + 4] == 0,
          "__syncthreads_count/and/or in block %d", blk);
  }
  free(out), free(x), free(so);
  char where[64] = "";
  char *pw = where;
  void *a3[] = {&pw};
  launch(m, "whereami", shape(3, 1, 1, 8, 2, 1), a3);
  CHECK(strcmp(where, "block (2,0,0) thread (5,1,0)") == 0, "where_now: '%s'", where);
  for (int w = -1; w < 2; w++) /* no record, and each worker's after its entry returned */
    CHECK(cpu_where(m, w, where, sizeof where) == 0, "worker %d outside a launch: '%s'", w, where);
}

/* Philox4x32-10 written independently from the paper, for random inputs beyond the KATs. */
static void philox_host(const uint32_t in[6], uint32_t out[4]) {
  uint32_t c0 = in[0], c1 = in[1], c2 = in[2], c3 = in[3], k0 = in[4], k1 = in[5];
  for (int r = 0; r < 10; r++) {
    if (r) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0, c1 = (uint32_t)p1, c2 = n2, c3 = (uint32_t)p0;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

static void test_philox(cpu_module *m) {
  enum { N = 259 };
  /* Random123's known answers for philox4x32-10 (counter, key -> output). */
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1}};
  uint32_t *in = malloc(N * 6 * 4), *out = poisoned(N * 4 * 4);
  for (int i = 0; i < N * 6; i++) in[i] = (uint32_t)rnd();
  for (int k = 0; k < 3; k++) memcpy(in + 6 * k, kat[k], 6 * 4);
  int n = N;
  void *args[] = {&in, &out, &n};
  launch(m, "philox", shape(3, 1, 1, 128, 1, 1), args);
  for (int k = 0; k < 3; k++)
    CHECK(memcmp(out + 4 * k, kat[k] + 6, 16) == 0, "Philox known answer %d differs", k);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    uint32_t ref[4];
    philox_host(in + 6 * i, ref);
    bad += memcmp(ref, out + 4 * i, 16) != 0;
  }
  CHECK(bad == 0, "Philox: %d of %d blocks differ from the host's", bad, N);
  free(in), free(out);
}

static void test_printf_and_half(cpu_module *m) {
  int x[5];
  for (int i = 0; i < 5; i++) x[i] = rand_int(1, 1 << 30);
  int *px = x;
  void *args[] = {&px};
  fflush(stdout);
  int saved = dup(1);
  FILE *tmp = tmpfile();
  dup2(fileno(tmp), 1);
  launch(m, "printer", shape(5, 1, 1, 64, 1, 1), args);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  char text[1024] = "";
  rewind(tmp);
  size_t len = fread(text, 1, sizeof text - 1, tmp);
  text[len] = '\0';
  fclose(tmp);
  for (int b = 0; b < 5; b++) {
    char line[64];
    snprintf(line, sizeof line, "block %d says %d\n", b, x[b]);
    CHECK(strstr(text, line) != NULL, "printf: '%s' missing from '%s'", line, text);
  }
  /* __half: every conversion rounds to nearest even, as half_of does on the host; __hadd and
  ** __hmul round once, as the GPU's half arithmetic. */
  int n = 4096;
  float *f = malloc(n * 4), *back = poisoned(n * 4);
  unsigned short *bits = poisoned(n * 2);
  for (int i = 0; i < n; i++) {
    int e = rand_int(-30, 17);
    f[i] = ldexpf(rand_float(), e);
  }
  f[0] = 65504.0f, f[1] = 65520.0f, f[2] = 5.9604645e-8f, f[3] = -2.9802322e-8f, f[4] = 1.0f;
  void *a2[] = {&f, &bits, &back, &n};
  launch(m, "half", shape(n / 256, 1, 1, 256, 1, 1), a2);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    host_half h = half_of(f[i]);
    host_half sum = half_of(float_of(h) + float_of(half_of(float_of(h) * 0.5f)));
    bad += bits[i] != h || back[i] != float_of(sum);
  }
  CHECK(bad == 0, "__half conversions: %d of %d differ", bad, n);
  free(f), free(back), free(bits);
}

/* The device library's own programs, compiled exactly as library.c writes them. */
static void test_library_programs(void) {
  const char *red[] = {"cj_sum",       "cj_min",       "cj_max",      "cj_dot",
                       "cj_sum_final", "cj_min_final", "cj_max_final"};
  const char *fill[] = {"cj_fill_f32", "cj_fill_f64"};
  char *src = cj_library_source(0, CUJIT_F32);
  cpu_module *m = cpu_compile(src, red, 7, 0, err, sizeof err);
  free(src);
  CHECK(m != NULL, "the f32 reduction program: %s", err);
  if (m) {
    unsigned long long n = 100003, nparts = 8, one = 1;
    float *x = malloc(n * 4);
    double *parts = poisoned(8 * 8), *out = poisoned(8), ref = 0;
    for (unsigned long long i = 0; i < n; i++) x[i] = rand_float(), ref += x[i];
    void *a1[] = {&x, &n, &parts}, *a2[] = {&parts, &nparts, &out};
    launch(m, "cj_sum", shape(8, 1, 1, 256, 1, 1), a1);
    launch(m, "cj_sum_final", shape(1, 1, 1, 256, 1, 1), a2);
    CHECK(fabs(*out - ref) < 1e-9 * n, "cj_sum: %.17g, expected %.17g", *out, ref);
    (void)one;
    free(x), free(parts), free(out);
    cpu_unload(m);
  }
  src = cj_library_source(1, CUJIT_F32);
  m = cpu_compile(src, fill, 2, 0, err, sizeof err);
  free(src);
  CHECK(m != NULL, "the random-fill program: %s", err);
  if (m) {
    unsigned long long n = 1003, seed = rnd(), offset = 5;
    int normal = 0;
    double mean = 0, std = 1;
    float *o = poisoned(n * 4);
    void *args[] = {&o, &n, &seed, &offset, &normal, &mean, &std};
    launch(m, "cj_fill_f32", shape(2, 1, 1, 256, 1, 1), args);
    int bad = 0;
    for (unsigned long long k = 0; k < n; k++) {
      unsigned long long idx = offset + k, blk = idx / 4;
      uint32_t in[6] = {(uint32_t)blk,  (uint32_t)(blk >> 32), 0, 0,
                        (uint32_t)seed, (uint32_t)(seed >> 32)},
               r[4];
      philox_host(in, r);
      float ref = (float)((r[idx % 4] >> 8) + 1u) * 5.9604644775390625e-8f;
      bad += o[k] != ref;
    }
    CHECK(bad == 0, "cj_fill_f32: %d of %llu differ from the host's Philox", bad, n);
    free(o);
    cpu_unload(m);
  }
}

/* A generic signature + body kernel, as source.c writes it for NVRTC: typedefs, a preamble with a
** device function, #line per part, and <cuda_fp16.h> for __half (mapped to cujit/half.h). */
static void test_generated_source(void) {
  cj_signature sig;
  char msg[512];
  const char *types[] = {"__half"};
  if (cj_signature_parse("haxpy(T a, const T *x, T *y, int n)", &sig, msg, sizeof msg) !=
      CUJIT_OK) {
    CHECK(0, "signature: %s", msg);
    return;
  }
  char *src =
      cj_source_for_kernel(&sig,
                           "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "if (i < n) y[i] = (T)fmadd((float)a, (float)x[i], (float)y[i]);",
                           "__device__ float fmadd(float a, float b, float c) {\n"
                           "  return a * b + c;\n}\n",
                           types);
  const char *names[] = {"haxpy"};
  cpu_module *m = src ? cpu_compile(src, names, 1, 0, err, sizeof err) : NULL;
  CHECK(m != NULL, "a generic __half kernel from source.c: %s", err);
  if (m) {
    int n = 1000;
    host_half a = half_of(rand_float()), *x = malloc(n * 2), *y = malloc(n * 2),
              *ref = malloc(n * 2);
    for (int i = 0; i < n; i++) {
      x[i] = half_of(rand_float()), y[i] = half_of(rand_float());
      ref[i] = half_of(float_of(a) * float_of(x[i]) + float_of(y[i]));
    }
    void *args[] = {&a, &x, &y, &n};
    launch(m, "haxpy", shape(4, 1, 1, 256, 1, 1), args);
    CHECK(memcmp(ref, y, n * 2) == 0, "haxpy on __half differs from the host's");
    free(x), free(y), free(ref);
    cpu_unload(m);
  }
  free(src);
  cj_signature_free(&sig);
}

static void expect_error(cpu_module *m, const char *k, cpu_launch_opts o, void **args,
                         const char *text) {
  int rc = cpu_launch(m, k, &o, args, err, sizeof err);
  CHECK(rc != 0 && strstr(err, text) != NULL, "%s: expected an error with\n  %s\ngot\n  %s", k,
        text, rc ? err : "(success)");
}

static void test_errors(void) {
  cpu_module *m = cpu_compile(ERROR_SRC, ERROR_KERNELS,
                              sizeof ERROR_KERNELS / sizeof *ERROR_KERNELS, 0, err, sizeof err);
  CHECK(m != NULL, "the error kernels: %s", err);
  if (!m) return;
  int *y = poisoned(16 * 256 * 4), *x = malloc(16 * 256 * 4);
  for (int i = 0; i < 16 * 256; i++) x[i] = rand_int(0, 1000);
  void *a1[] = {&y}, *a2[] = {&x, &y};
  expect_error(m, "ret_early", shape(1, 1, 1, 256, 1, 1), a1,
               "kernel 'ret_early': block (0,0,0) thread (5,0,0): returned while 255 threads "
               "wait at __syncthreads (line 2)");
  expect_error(m, "two_bars", shape(2, 1, 1, 128, 1, 1), a1,
               "waits at __syncthreads (line 4) while thread (0,0,0) waits at __syncthreads "
               "(line 2)");
  expect_error(m, "warp_ret", shape(1, 1, 1, 64, 1, 1), a1,
               "waits at __shfl_down_sync (line 3) for lane 3, thread (3,0,0), which returned");
  expect_error(m, "plain_warp", shape(1, 1, 1, 32, 1, 1), a1,
               "thread (1,0,0): waits at __shfl_down_sync (line 2) for lane 0, which returned");
  expect_error(m, "trapper", shape(16, 1, 1, 32, 1, 1), a1,
               "kernel 'trapper': block (3,0,0) thread (7,0,0): __trap() was called (line 1)");
  expect_error(m, "fiber_trap", shape(4, 1, 1, 64, 1, 1), a1,
               "thread (40,0,0): __trap() was called (line 2)");
  x[3 * 64 + 17] = -1;
  expect_error(m, "asserter", shape(16, 1, 1, 64, 1, 1), a2,
               "kernel 'asserter': block (3,0,0) thread (17,0,0): assertion 'x[i] >= 0' failed "
               "(line 2)");
  /* After all that the workers' stacks and state are sound: a barrier kernel runs right. */
  memset(y, 0xA5, 16 * 256 * 4);
  launch(m, "copy", shape(16, 1, 1, 256, 1, 1), a2);
  CHECK(memcmp(x, y, 16 * 256 * 4) == 0, "a launch after failed ones gives wrong results");
  free(x), free(y);
  cpu_unload(m);
  m = cpu_compile(OVERFLOW_SRC, OVERFLOW_KERNELS, 2, 0, err, sizeof err);
  CHECK(m != NULL, "the overflow kernels: %s", err);
  if (!m) return;
  int out = 0, *po = &out;
  void *a3[] = {&po};
  expect_error(
      m, "deep_plain", shape(4, 1, 1, 64, 1, 1), a3,
      "kernel 'deep_plain': block (1,0,0): a thread's stack overflowed: more than 128 KiB");
  expect_error(m, "deep_fiber", shape(1, 1, 1, 64, 1, 1), a3,
               "kernel 'deep_fiber': block (0,0,0) thread (3,0,0): its stack overflowed");
  cpu_unload(m);
}

static void test_refusals(void) {
  static const struct {
    const char *source, *text;
  } cases[] = {
      {"#line 1 \"k\"\nint a;\nfloat v = tex2D(t, 0, 0);\n",
       "kernel 'k' uses textures (tex2D) (line 2 of its body), which is not supported on the CPU "
       "device"},
      {"#line 1 \"k\"\n asm(\"trap;\");\n", "kernel 'k' uses inline PTX (asm) (line 1"},
      {"#line 1 \"k\"\n// asm in a comment is fine\n__shfl(v, 0);\n",
       "the pre-CUDA 9 __shfl (use __shfl_sync) (line 2"},
      {"#line 1 \"k\"\nchild<<<1, 1>>>();\n", "kernel launches from the device"},
      {"extern \"C\" __global__ void k(int *y) {}\nextern \"C\" __global__ void k2(int *y) {\n"
       "#line 1 \"k2\"\n  y[0] = tex1D(t, 0);\n}\n",
       "kernel 'k2' uses textures (tex1D) (line 1 of its body)"},
      {"#line 1 \"k\"\n#include <cooperative_groups/details/info.h>\n",
       "kernel 'k' uses cooperative groups' internals (<cooperative_groups/details/...>"},
      {"#line 1 \"k:preamble\"\n\n__device__ int f() { return __ballot(1); }\n",
       "kernel 'k' uses the pre-CUDA 9 __ballot (use __ballot_sync) (line 2 of its preamble)"},
  };
  const char *k[] = {"k", "k2"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *tu = cj_cpu_translation_unit(cases[i].source, k, NULL, 2, 0, err, sizeof err);
    CHECK(!tu && strstr(err, cases[i].text), "refusal %zu: got '%s'", i, tu ? "(accepted)" : err);
    free(tu);
  }
  /* GPU-only code under #ifndef __CUJIT_CPU__ (or the #else of #ifdef) is not refused. */
  static const char *const portable[] = {
      "#ifndef __CUJIT_CPU__\nasm(\"trap;\");\n#endif\n",
      "#if !defined(__CUJIT_CPU__) && 1\nasm(\"trap;\");\n#else\nint a;\n#endif\n",
      "#ifdef __CUJIT_CPU__\nint a;\n#else\n#if 1\nasm(\"trap;\");\n#endif\n#endif\n",
  };
  for (size_t i = 0; i < sizeof portable / sizeof portable[0]; i++) {
    char *ok = cj_cpu_translation_unit(portable[i], k, NULL, 1, 0, err, sizeof err);
    CHECK(ok != NULL, "portable source %zu refused: %s", i, err);
    free(ok);
  }
  char *late = cj_cpu_translation_unit("#ifdef __CUJIT_CPU__\n#endif\nasm(\"x\");\n", k, NULL, 1, 0,
                                       err, sizeof err);
  CHECK(!late && strstr(err, "inline PTX"), "asm after a closed #ifdef __CUJIT_CPU__ accepted");
  free(late);
  const char *bad[] = {"k; system(\"x\")"};
  char *tu = cj_cpu_translation_unit("", bad, NULL, 1, 0, err, sizeof err);
  CHECK(!tu && strstr(err, "is not a kernel name"), "a bad kernel name was accepted");
  free(tu);
}

/* Time slices (cpu_exec.h): a thread in a long loop yields to the next one before its loop ends;
** the loop rewrite keeps an `else` after a loop bound to its `if`, loops of constexpr functions
** constant, and do-while loops as they were. */
static void test_time_slices(void) {
  static const char src[] =
      "constexpr int tri(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i; return s; }\n"
      "static_assert(tri(4) == 10, \"a loop of a constexpr function\");\n" KERNEL(
          "slices", "int *log, int *next, int *out, int n",
          "  for (int i = 0; i < n; i++) log[atomicAdd(next, 1)] = threadIdx.x;\n"
          "  int k = 0, j = 0;\n"
          "  if (n > 0) while (k < 3) k++; else k = -1;\n"
          "  do j++; while (j < 5);\n"
          "  out[threadIdx.x] = k * 10 + j;");
  const char *names[] = {"slices"};
  cpu_module *m = cpu_compile(src, names, 1, 0, err, sizeof err);
  CHECK(m != NULL, "the time-slice kernel did not compile: %s", err);
  if (!m) return;
  enum { n = 1000 };
  int *log = calloc(2 * n, sizeof(int)), next = 0, *pnext = &next, out[2] = {0, 0}, *pout = out;
  int count = n;
  void *args[] = {&log, &pnext, &pout, &count};
  launch(m, "slices", shape(1, 1, 1, 2, 1, 1), args);
  int first_of_1 = 2 * n, ones = 0;
  for (int i = 0; i < 2 * n; i++) {
    if (log[i] == 1 && first_of_1 == 2 * n) first_of_1 = i;
    ones += log[i] == 1;
  }
  CHECK(next == 2 * n && ones == n, "slices: %d entries, %d of thread 1", next, ones);
  CHECK(first_of_1 < n, "slices: thread 1 first ran after %d iterations of thread 0's loop of %d",
        first_of_1, n);
  CHECK(out[0] == 35 && out[1] == 35, "slices: the loops after it gave %d, %d (35 expected)",
        out[0], out[1]);
  count = 0;
  launch(m, "slices", shape(1, 1, 1, 2, 1, 1), args);
  CHECK(out[0] == -5 && out[1] == -5, "slices: the else after a loop gave %d, %d (-5 expected)",
        out[0], out[1]);
  free(log);
  cpu_unload(m);
}

int main(int argc, char **argv) {
  if (argc > 3 && strcmp(argv[1], "--check-child") == 0)
    return check_mode_tests(NULL, argv[2], argv[3]);
  rng_state = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32) ^ 0x9E37ull;
  printf("test_cpu_device: random seed %llu\n", rng_state);
  cpu_module *m = cpu_compile(MAIN_SRC, MAIN_KERNELS, sizeof MAIN_KERNELS / sizeof *MAIN_KERNELS, 0,
                              err, sizeof err);
  CHECK(m != NULL, "the main kernels did not compile: %s", err);
  if (m) {
    test_vadd(m);
    test_matmul(m);
    test_reductions(m);
    test_warp_ops(m);
    test_atomics(m);
    test_shared_and_schedules(m);
    test_indices(m);
    test_philox(m);
    test_printf_and_half(m);
    cpu_unload(m);
  }
  test_library_programs();
  test_generated_source();
  test_time_slices();
  test_errors();
  test_refusals();
  failures += check_mode_tests(argv[0], NULL, NULL);
  printf("test_cpu_device: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
