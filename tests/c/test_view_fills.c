/*
** test_view_fills.c -- the device library's writes through a view of a bigger buffer (issue 28):
** random fills (uniform and normal, f32 and f64), memset and copies, at every start and length
** around the generator's blocks (4 f32 or 2 f64 numbers a block). Every element of the view gets
** exactly the number a fill of a buffer of its own at the same counter gives, and the elements
** just before and after the view keep their bytes: an off-by-one at either end of the view, or a
** fill that starts counting at the buffer rather than the view, fails here. On a GPU when there is
** one, else on the CPU device.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(view_fills, .init = cj_fixture_open, .fini = cj_fixture_close, .timeout = 300);

#define TOTAL 40      /* elements of the viewed buffer */
#define SENTINEL 0xA5 /* every byte outside the view; a NaN-free pattern no fill writes */

static cujit_status fill(cujit_buffer *b, int normal, uint64_t seed, uint64_t offset) {
  return normal ? cujit_random_normal(b, seed, offset, 0.25, 3.0, NULL)
                : cujit_random_uniform(b, seed, offset, NULL);
}

/* The bytes a fill of a buffer of its own of `count` elements gives at `offset`. */
static void reference(cujit_dtype dtype, int normal, uint64_t seed, uint64_t offset, size_t count,
                      unsigned char *out) {
  size_t es = cujit_dtype_size(dtype);
  cujit_buffer *b = cj_test_upload(NULL, count * es, dtype);
  EXPECT_OK(fill(b, normal, seed, offset));
  cj_test_download(out, b, count * es);
  cujit_buffer_free(b);
}

/* The view's elements [first, first + count) of `all` hold `want`; every other byte is SENTINEL. */
static void check_view(const unsigned char *all, const unsigned char *want, size_t es, size_t first,
                       size_t count, const char *what) {
  for (size_t i = 0; i < TOTAL * es; i++) {
    size_t element = i / es;
    if (element >= first && element < first + count)
      cr_assert_eq(all[i], want[i - first * es],
                   "%s: element %zu (view element %zu) byte %zu differs from the fill of its own",
                   what, element, element - first, i % es);
    else
      cr_assert_eq(all[i], SENTINEL, "%s: element %zu outside the view [%zu, %zu) was written",
                   what, element, first, first + count);
  }
}

static void fill_views(cujit_dtype dtype, int normal) {
  const size_t es = cujit_dtype_size(dtype);
  const uint64_t seed = 0x5eed0000u + (uint64_t)dtype * 2 + (uint64_t)normal;
  cujit_buffer *all = cj_test_upload(NULL, TOTAL * es, dtype);
  unsigned char got[TOTAL * 8], want[TOTAL * 8];
  static const size_t lengths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 17};
  for (size_t first = 0; first <= 5; first++)
    for (size_t l = 0; l <= sizeof lengths / sizeof lengths[0]; l++) {
      /* the lengths above, then the view that ends at the buffer's last element */
      size_t count = l < sizeof lengths / sizeof lengths[0] ? lengths[l] : TOTAL - first;
      for (uint64_t offset = 0; offset <= 3; offset += 3) { /* a counter inside a block too */
        char what[128];
        snprintf(what, sizeof what, "%s %s fill of elements [%zu, %zu) at counter %llu",
                 cujit_dtype_name(dtype), normal ? "normal" : "uniform", first, first + count,
                 (unsigned long long)offset);
        EXPECT_OK(cujit_memset(all, 0, SENTINEL, TOTAL * es, NULL));
        cujit_buffer *view;
        EXPECT_OK(cujit_buffer_view(all, first * es, count * es, dtype, &view));
        EXPECT_OK(fill(view, normal, seed, offset));
        cj_test_download(got, all, TOTAL * es);
        reference(dtype, normal, seed, offset, count, want);
        for (size_t k = 0; k < count; k++) { /* the numbers themselves: finite, uniform in (0, 1] */
          double v;
          if (dtype == CUJIT_F32) {
            float f;
            memcpy(&f, want + k * es, sizeof f);
            v = f;
          } else {
            memcpy(&v, want + k * es, sizeof v);
          }
          cr_assert(isfinite(v) && (normal || (v > 0 && v <= 1)), "%s: element %zu is %g", what, k,
                    v);
        }
        check_view(got, want, es, first, count, what);
        cujit_buffer_free(view);
      }
    }
  cujit_buffer_free(all);
}

Test(view_fills, uniform_f32) {
  CJ_NEED_DEVICE(engine);
  fill_views(CUJIT_F32, 0);
}

Test(view_fills, uniform_f64) {
  CJ_NEED_DEVICE(engine);
  fill_views(CUJIT_F64, 0);
}

Test(view_fills, normal_f32) {
  CJ_NEED_DEVICE(engine);
  fill_views(CUJIT_F32, 1);
}

Test(view_fills, normal_f64) {
  CJ_NEED_DEVICE(engine);
  fill_views(CUJIT_F64, 1);
}

/* A view of a view fills the elements of the innermost view, counted from the first buffer. */
Test(view_fills, a_view_of_a_view) {
  CJ_NEED_DEVICE(engine);
  const size_t es = sizeof(float);
  cujit_buffer *all = cj_test_upload(NULL, TOTAL * es, CUJIT_F32), *outer, *inner;
  EXPECT_OK(cujit_memset(all, 0, SENTINEL, TOTAL * es, NULL));
  EXPECT_OK(cujit_buffer_view(all, 3 * es, 30 * es, CUJIT_F32, &outer));
  EXPECT_OK(cujit_buffer_view(outer, 5 * es, 7 * es, CUJIT_F32, &inner)); /* elements 8..14 */
  EXPECT_OK(cujit_random_uniform(inner, 42, 1, NULL));
  unsigned char got[TOTAL * 4], want[TOTAL * 4];
  cj_test_download(got, all, sizeof got);
  reference(CUJIT_F32, 0, 42, 1, 7, want);
  check_view(got, want, es, 8, 7, "a view of a view");
  cujit_buffer_free(inner), cujit_buffer_free(outer), cujit_buffer_free(all);
}

/* memset and copies through a view write its bytes only, at its offsets. */
Test(view_fills, memset_and_copies_through_a_view) {
  CJ_NEED_DEVICE(engine);
  const size_t es = sizeof(double);
  cujit_buffer *all = cj_test_upload(NULL, TOTAL * es, CUJIT_F64), *view;
  unsigned char got[TOTAL * 8], want[TOTAL * 8];
  for (size_t first = 0; first <= 3; first++)
    for (size_t count = 1; count <= 5; count++) {
      char what[96];
      EXPECT_OK(cujit_memset(all, 0, SENTINEL, TOTAL * es, NULL));
      EXPECT_OK(cujit_buffer_view(all, first * es, count * es, CUJIT_F64, &view));
      snprintf(what, sizeof what, "memset of the view [%zu, %zu)", first, first + count);
      EXPECT_OK(cujit_memset(view, 0, 0x3c, count * es, NULL));
      memset(want, 0x3c, sizeof want);
      cj_test_download(got, all, sizeof got);
      check_view(got, want, es, first, count, what);
      /* a copy from the host into the view's second element onwards, and one back out */
      double host[5] = {1.5, -2.5, 3.25, 1e300, -0.0}, back[5];
      snprintf(what, sizeof what, "copy into the view [%zu, %zu) from its element 1", first,
               first + count);
      EXPECT_OK(cujit_memcpy_htod(view, es, host, (count - 1) * es, NULL));
      memcpy(want + es, host, (count - 1) * es);
      cj_test_download(got, all, sizeof got);
      check_view(got, want, es, first, count, what);
      EXPECT_OK(cujit_memcpy_dtoh(back, view, es, (count - 1) * es, NULL));
      cr_assert_eq(memcmp(back, host, (count - 1) * es), 0, "%s: read back differs", what);
      cujit_buffer_free(view);
    }
  cujit_buffer_free(all);
}
