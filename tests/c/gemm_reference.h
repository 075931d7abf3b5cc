/*
** gemm_reference.h -- the host reference of cujit_gemm's tests (test_gemm.c, the SIMT path;
** test_gemm_tc.c, the tensor-core path): operands exact in their dtype, uploaded plain or as an
** unaligned view, and one case's product compared element by element with a bound derived for
** each element.
*/
#ifndef CUJIT_TEST_GEMM_REFERENCE_H
#define CUJIT_TEST_GEMM_REFERENCE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"

/* Host values of one dtype: f32, f16 (GCC's _Float16 rounds to nearest even, as the GPU) or bf16
** (float's top 16 bits, rounded to nearest even here; the values are finite). */
typedef struct host_matrix {
  cujit_dtype dtype;
  size_t count;
  double *exact; /* the values as stored, widened: what the reference computes with */
  void *raw;     /* the stored bytes */
} host_matrix;

static inline uint16_t bf16_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float bf16_value(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline void put(host_matrix *h, size_t i, double v) {
  if (h->dtype == CUJIT_BF16) {
    uint16_t b = bf16_bits((float)v);
    ((uint16_t *)h->raw)[i] = b;
    h->exact[i] = bf16_value(b);
  } else if (h->dtype == CUJIT_F16) {
    _Float16 x = (_Float16)(float)v;
    ((_Float16 *)h->raw)[i] = x;
    h->exact[i] = (double)(float)x;
  } else {
    float x = (float)v;
    ((float *)h->raw)[i] = x;
    h->exact[i] = x;
  }
}

static inline double get(const host_matrix *h, size_t i) {
  return h->dtype == CUJIT_BF16  ? (double)bf16_value(((const uint16_t *)h->raw)[i])
         : h->dtype == CUJIT_F16 ? (double)(float)((const _Float16 *)h->raw)[i]
                                 : (double)((const float *)h->raw)[i];
}

/* Random values in [-1, 1]; a quarter of them exactly 0 when `zeros` (a mask's "not > 0"). */
static inline host_matrix random_matrix(cujit_dtype dtype, size_t count, int zeros) {
  host_matrix h = {dtype, count, calloc(count, sizeof(double)),
                   calloc(count, cujit_dtype_size(dtype))};
  cr_assert(h.exact && h.raw);
  for (size_t i = 0; i < count; i++) {
    uint64_t r = cj_test_rand64();
    double v = (double)(r >> 11) * 0x1p-52 - 1.0;
    put(&h, i, zeros && (r & 3) == 0 ? 0.0 : v);
  }
  return h;
}

static inline void free_matrix(host_matrix *h) {
  free(h->exact), free(h->raw);
}

static inline cujit_buffer *upload(const host_matrix *h) {
  return cj_test_upload(h->raw, h->count * cujit_dtype_size(h->dtype), h->dtype);
}

#define GUARD 70 /* more than a tile's row: a store one row past C lands in it */

typedef struct gemm_case {
  cujit_dtype in, out;
  int m, n, k, trans_a, trans_b, bias, relu, mask;
  double alpha, beta;
  double slack; /* the bound's factor over the SIMT path's (0: 1) */
} gemm_case;

/* `h` in a buffer `offset` elements into a larger one (1 makes its address unaligned for the
** kernel's 16- and 8-byte loads): a view, and the buffer in *whole (NULL
** and the plain upload without an offset). */
static inline cujit_buffer *upload_at(const host_matrix *h, size_t offset, cujit_buffer **whole) {
  *whole = NULL;
  if (!offset) return upload(h);
  size_t size = cujit_dtype_size(h->dtype), bytes = h->count * size;
  cujit_buffer *view;
  *whole = cj_test_upload(NULL, bytes + offset * size, h->dtype);
  EXPECT_OK(cujit_memcpy_htod(*whole, offset * size, h->raw, bytes, NULL));
  EXPECT_OK(cujit_buffer_view(*whole, offset * size, bytes, h->dtype, &view));
  return view;
}

/* Runs one case and compares every element of C with the reference. The bound on each element
** is the classic one for a sum of k products accumulated in f32, (k + 3) * 2^-24 times the sum
** of the magnitudes of its terms (products, beta * C, bias), doubled for the reorderings of
** fmaf; an f16 C adds its own rounding, 2^-11 of the value, plus half of f16's smallest
** subnormal (2^-25) for results that underflow. Inputs are exact in their dtype, so the
** reference starts from the same numbers the kernel reads. A wrong index, a missed edge or a
** transposed operand is off by about the size of the terms, far above the bound. */
static inline void check_case_at(const gemm_case *t, size_t offset) {
  size_t m = (size_t)t->m, n = (size_t)t->n, k = (size_t)t->k;
  host_matrix a = random_matrix(t->in, m * k, 0), b = random_matrix(t->in, k * n, 0);
  /* C has GUARD elements past its m x n, which must stay as they were: a store past an edge. */
  host_matrix c = random_matrix(t->out, m * n + GUARD, 0), bias = random_matrix(t->out, n, 0);
  host_matrix mask = random_matrix(t->out, m * n, 1);
  cujit_buffer *whole_a, *whole_b;
  cujit_buffer *da = upload_at(&a, offset, &whole_a), *db = upload_at(&b, offset, &whole_b);
  cujit_buffer *dc = upload(&c);
  cujit_buffer *dbias = t->bias ? upload(&bias) : NULL, *dmask = t->mask ? upload(&mask) : NULL;
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = t->m, o.n = t->n, o.k = t->k, o.trans_a = t->trans_a, o.trans_b = t->trans_b;
  o.alpha = t->alpha, o.beta = t->beta, o.bias = dbias, o.relu = t->relu, o.relu_mask = dmask;
  EXPECT_OK(cujit_gemm(da, db, dc, &o, NULL));
  host_matrix got = random_matrix(t->out, m * n + GUARD, 0);
  cj_test_download(got.raw, dc, got.count * cujit_dtype_size(t->out));
  for (size_t i = m * n; i < got.count; i++)
    cr_expect_eq(get(&got, i), c.exact[i], "%dx%dx%d: guard element %zu past C was overwritten",
                 t->m, t->n, t->k, i - m * n);
  int bad = 0;
  for (size_t i = 0; i < m && bad < 5; i++)
    for (size_t j = 0; j < n && bad < 5; j++) {
      double sum = 0, mag = 0;
      for (size_t p = 0; p < k; p++) {
        double x = a.exact[t->trans_a ? p * m + i : i * k + p];
        double y = b.exact[t->trans_b ? j * k + p : p * n + j];
        sum += x * y, mag += fabs(x * y);
      }
      double v = t->alpha * sum + t->beta * c.exact[i * n + j];
      mag = fabs(t->alpha) * mag + fabs(t->beta * c.exact[i * n + j]);
      if (t->bias) v += bias.exact[j], mag += fabs(bias.exact[j]);
      if (t->relu && v < 0) v = 0;
      if (t->mask && !(mask.exact[i * n + j] > 0)) v = 0;
      double bound = (t->slack > 0 ? t->slack : 1.0) * 2.0 * (double)(k + 3) * 0x1p-24 * mag;
      if (t->out == CUJIT_F16) bound += 0x1p-11 * fabs(v) + 0x1p-25;
      if (t->out == CUJIT_BF16) bound += 0x1p-8 * fabs(v) + 0x1p-133;
      double have = get(&got, i * n + j);
      if (!(fabs(have - v) <= bound)) {
        bad++;
        cr_expect_fail("%s->%s m %d n %d k %d trans %d%d bias %d relu %d mask %d alpha %g beta "
                       "%g: C[%zu][%zu] is %.9g, want %.9g (bound %.3g)",
                       cujit_dtype_name(t->in), cujit_dtype_name(t->out), t->m, t->n, t->k,
                       t->trans_a, t->trans_b, t->bias, t->relu, t->mask, t->alpha, t->beta, i, j,
                       have, v, bound);
      }
    }
  cujit_buffer *bufs[] = {da, db, dc, dbias, dmask, whole_a, whole_b};
  for (size_t i = 0; i < 7; i++)
    if (bufs[i]) cujit_buffer_free(bufs[i]);
  host_matrix *hosts[] = {&a, &b, &c, &bias, &mask, &got};
  for (size_t i = 0; i < 6; i++) free_matrix(hosts[i]);
}

static inline void check_case(const gemm_case *t) {
  check_case_at(t, 0);
}

#endif
