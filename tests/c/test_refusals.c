/*
** test_refusals.c -- refusals of the C API that no other test reached, each with its whole
** message and the state left as it was: a buffer of the wrong dtype for a kernel's pointer, views
** that do not fit or are misaligned (also a view of a view whose own offset would misalign a wider
** element: a GPU faults on such a pointer), an elementwise launch over more elements than a buffer
** holds, and malformed IPC handles (cut, padded, upper-case, a size that is negative, signed,
** spaced or not whole elements), all refused before any device sees them; cujit_launch_n past
** the grid's limit, a source file holding NUL bytes, a cooperative launch on a capturing stream
** (the capture goes on), and a graph node's arguments that would select another specialisation.
** On a GPU when there is one, else on the CPU device.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(refusals, .init = cj_fixture_open, .fini = cj_fixture_close);

#define N 64

static cujit_device *current(void) {
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  return dev;
}

static void check_values(cujit_buffer *b, float start, const char *what) {
  float h[N];
  cj_test_download(h, b, sizeof h);
  for (int i = 0; i < N; i++)
    cr_assert_eq(h[i], start + (float)i, "%s: [%d] = %g, want %g", what, i, h[i], start + i);
}

static cujit_buffer *counting(float start) {
  float h[N];
  for (int i = 0; i < N; i++) h[i] = start + (float)i;
  return cj_test_upload(h, sizeof h, CUJIT_F32);
}

Test(refusals, a_buffer_of_the_wrong_dtype) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "twice(float *x, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) x[i] *= 2;",
                                NULL, NULL, &k));
  int hi[N];
  for (int i = 0; i < N; i++) hi[i] = i;
  cujit_buffer *ints = cj_test_upload(hi, sizeof hi, CUJIT_I32);
  cujit_buffer *doubles;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(double), CUJIT_F64, &doubles));
  cujit_launch_config c = {
      .size = sizeof c, .grid = {1, 1, 1}, .block = {N, 1, 1}, .shared_bytes = 0, .stream = NULL};
  cujit_arg a1[] = {CUJIT_ARG_BUF(ints), CUJIT_ARG_I(N)};
  EXPECT_REFUSED(cujit_launch(k, &c, a1, 2), CUJIT_ERROR_ARGUMENT,
                 "kernel 'twice', argument 1 'x' (float *): the buffer holds i32 but the "
                 "parameter points to f32");
  cujit_arg a2[] = {CUJIT_ARG_BUF(doubles), CUJIT_ARG_I(N)};
  EXPECT_REFUSED(cujit_launch(k, &c, a2, 2), CUJIT_ERROR_ARGUMENT,
                 "kernel 'twice', argument 1 'x' (float *): the buffer holds f64 but the "
                 "parameter points to f32");
  EXPECT_OK(cujit_device_synchronize(current()));
  int got[N];
  cj_test_download(got, ints, sizeof got);
  for (int i = 0; i < N; i++)
    cr_assert_eq(got[i], i, "the refused launch ran: [%d] = %d", i, got[i]);
  /* an f32 buffer: accepted, and the kernel runs on it */
  cujit_buffer *x = counting(1);
  cujit_arg a3[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &c, a3, 2));
  EXPECT_OK(cujit_device_synchronize(current()));
  float h[N];
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N; i++) cr_assert_eq(h[i], 2 * (1 + (float)i));
  cujit_kernel_free(k);
}

Test(refusals, views_that_do_not_fit_or_are_misaligned) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *b = counting(0), *v = NULL, *w = NULL;
  EXPECT_REFUSED(cujit_buffer_view(b, 2, 8, CUJIT_F32, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: offset 2 and size 8 must be whole f32 elements (4 bytes "
                 "each)");
  cr_expect_null(v);
  EXPECT_REFUSED(cujit_buffer_view(b, 8, 6, CUJIT_F32, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: offset 8 and size 6 must be whole f32 elements (4 bytes "
                 "each)");
  EXPECT_REFUSED(cujit_buffer_view(b, 4, 16, CUJIT_F64, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: offset 4 and size 16 must be whole f64 elements (8 bytes "
                 "each)");
  EXPECT_REFUSED(cujit_buffer_view(b, 0, 0, CUJIT_F32, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: a view of 0 bytes at offset 0 does not fit in a buffer of 256 "
                 "bytes (a view holds at least one byte, inside its buffer)");
  EXPECT_REFUSED(cujit_buffer_view(b, 252, 8, CUJIT_F32, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: a view of 8 bytes at offset 252 does not fit in a buffer of "
                 "256 bytes (a view holds at least one byte, inside its buffer)");
  EXPECT_REFUSED(cujit_buffer_view(b, 260, 4, CUJIT_F32, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: a view of 4 bytes at offset 260 does not fit in a buffer of "
                 "256 bytes (a view holds at least one byte, inside its buffer)");
  EXPECT_REFUSED(cujit_buffer_view(b, 0, 4, (cujit_dtype)99, &v), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: 99 is not a cujit_dtype");
  /* A view of a view: its offset counts from the inner view, whose own start decides alignment.
  ** An f32 view 4 bytes in, then an f64 view at offset 0 of it, would put a double at byte 4. */
  EXPECT_OK(cujit_buffer_view(b, 4, 32, CUJIT_F32, &v));
  EXPECT_REFUSED(cujit_buffer_view(v, 0, 16, CUJIT_F64, &w), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: the view would start 4 bytes into the buffer it views "
                 "(offset 0 of a view that starts at byte 4), which is not a whole number of f64 "
                 "elements (8 bytes each): a misaligned pointer, on which a GPU faults");
  cr_expect_null(w);
  EXPECT_REFUSED(cujit_buffer_view(v, 8, 16, CUJIT_F64, &w), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: the view would start 12 bytes into the buffer it views "
                 "(offset 8 of a view that starts at byte 4), which is not a whole number of f64 "
                 "elements (8 bytes each): a misaligned pointer, on which a GPU faults");
  cujit_buffer *v8;
  EXPECT_OK(cujit_buffer_view(b, 8, 32, CUJIT_F32, &v8));
  EXPECT_OK(cujit_buffer_view(v8, 8, 16, CUJIT_F64, &w)); /* byte 16: aligned */
  double d[2];
  cj_test_download(d, w, sizeof d);
  float f[4] = {4, 5, 6, 7}; /* bytes 16..31 of the counting buffer, as doubles */
  double want[2];
  memcpy(want, f, sizeof want);
  cr_expect(memcmp(d, want, sizeof d) == 0, "the aligned f64 view reads bytes 16..31");
  cujit_buffer_free(v8);
  cujit_buffer_free(w);
  cujit_buffer_free(v);
  check_values(b, 0, "the viewed buffer after the refusals");
}

Test(refusals, an_elementwise_launch_past_a_buffer) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  EXPECT_OK(cujit_elementwise_define(engine, "T x, T y -> T z", "z = x + y", "add", NULL, &k));
  cujit_buffer *x = counting(0), *y = counting(100), *z, *short_z;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(float), CUJIT_F32, &z));
  EXPECT_OK(cujit_buffer_alloc(engine, (N - 1) * sizeof(float), CUJIT_F32, &short_z));
  cujit_arg shorter[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y), CUJIT_ARG_BUF(short_z)};
  EXPECT_REFUSED(cujit_elementwise_launch(k, N, NULL, shorter, 3), CUJIT_ERROR_ARGUMENT,
                 "elementwise kernel 'add', argument 3 'z': the buffer holds 63 elements of 4 "
                 "bytes, fewer than the 64 the launch covers");
  cujit_arg ok[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y), CUJIT_ARG_BUF(z)};
  EXPECT_REFUSED(cujit_elementwise_launch(k, N + 1, NULL, ok, 3), CUJIT_ERROR_ARGUMENT,
                 "elementwise kernel 'add', argument 1 'x': the buffer holds 64 elements of 4 "
                 "bytes, fewer than the 65 the launch covers");
  cujit_buffer *head;
  EXPECT_OK(cujit_buffer_view(x, 0, 8 * sizeof(float), CUJIT_F32, &head));
  cujit_arg viewed[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(head), CUJIT_ARG_BUF(z)};
  EXPECT_REFUSED(cujit_elementwise_launch(k, 9, NULL, viewed, 3), CUJIT_ERROR_ARGUMENT,
                 "elementwise kernel 'add', argument 2 'y': the buffer holds 8 elements of 4 "
                 "bytes, fewer than the 9 the launch covers");
  EXPECT_OK(cujit_elementwise_launch(k, N, NULL, ok, 3)); /* the whole length is fine */
  EXPECT_OK(cujit_device_synchronize(current()));
  float h[N];
  cj_test_download(h, z, sizeof h);
  for (int i = 0; i < N; i++) cr_assert_eq(h[i], 100 + 2 * (float)i, "z[%d] = %g", i, h[i]);
  cujit_buffer_free(head);
  cujit_kernel_free(k);
}

/* "cujit_buffer_ipc_open: 'TEXT' is not a cujit IPC handle; ...", TEXT cut at 60 characters. */
static const char *bad_handle(const char *fn, const char *text, const char *exporter) {
  static char msg[400];
  snprintf(msg, sizeof msg,
           "%s: '%.60s%s' is not a cujit IPC handle; pass the text the exporting process's %s "
           "gave, unchanged",
           fn, text, strlen(text) > 60 ? "..." : "", exporter);
  return msg;
}

/* Malformed handles are refused by their text, before a device is asked: the same message with
** and without a GPU, and *out set to NULL. */
Test(refusals, malformed_ipc_handles) {
  static const char fn[] = "cujit_buffer_ipc_open", exporter[] = "cujit_buffer_ipc_handle";
  char hex[129], upper[129], text[400];
  for (int i = 0; i < 128; i++) hex[i] = "0123456789abcdef"[(i * 7) % 16];
  hex[128] = '\0';
  for (int i = 0; i < 129; i++) upper[i] = (char)(hex[i] >= 'a' ? hex[i] - 32 : hex[i]);
  static int sentinel;
  /* sizes: negative, signed, spaced, zero, not whole f32 elements, trailing junk, empty, past
  ** 2^64 */
  const char *sizes[] = {"-4", "+4", " 4", "0", "6", "4x", "", "18446744073709551620"};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    snprintf(text, sizeof text, "cujit-ipc-mem:f32:%s:%s", sizes[i], hex);
    cujit_buffer *b = (cujit_buffer *)&sentinel;
    EXPECT_REFUSED(cujit_buffer_ipc_open(engine, text, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                   bad_handle(fn, text, exporter));
    cr_expect_null(b, "size '%s': out is set to NULL", sizes[i]);
  }
  char bodies[7][300];
  snprintf(bodies[0], sizeof bodies[0], "cujit-ipc-mem:");
  snprintf(bodies[1], sizeof bodies[1], "cujit-ipc-mem:f32:4:");
  snprintf(bodies[2], sizeof bodies[2], "cujit-ipc-mem:f99:4:%s", hex);
  snprintf(bodies[3], sizeof bodies[3], "cujit-ipc-mem:bytes:4:%s", hex + 1); /* 127 digits */
  snprintf(bodies[4], sizeof bodies[4], "cujit-ipc-mem:f32:4:%s0", hex);      /* 129 */
  snprintf(bodies[5], sizeof bodies[5], "cujit-ipc-mem:f32:4:%s", upper);
  snprintf(bodies[6], sizeof bodies[6], "cujit-ipc-event:%s", hex); /* an event's */
  for (int i = 0; i < 7; i++) {
    cujit_buffer *b = (cujit_buffer *)&sentinel;
    EXPECT_REFUSED(cujit_buffer_ipc_open(engine, bodies[i], &b), CUJIT_ERROR_INVALID_ARGUMENT,
                   bad_handle(fn, bodies[i], exporter));
    cr_expect_null(b, "%s: out is set to NULL", bodies[i]);
  }
  cujit_buffer *b = NULL;
  EXPECT_REFUSED(cujit_buffer_ipc_open(engine, "short", &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_ipc_open: 'short' is not a cujit IPC handle; pass the text the "
                 "exporting process's cujit_buffer_ipc_handle gave, unchanged");
  EXPECT_REFUSED(cujit_buffer_ipc_open(engine, NULL, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_ipc_open: '(NULL)' is not a cujit IPC handle; pass the text the "
                 "exporting process's cujit_buffer_ipc_handle gave, unchanged");
  /* events: a buffer's handle, a trailing blank, upper case */
  const char *events[] = {"cujit-ipc-mem:f32:4:%s", "cujit-ipc-event:%s ", "cujit-ipc-event:%.0s"};
  for (int i = 0; i < 3; i++) {
    snprintf(text, sizeof text, events[i], hex);
    cujit_event *e = (cujit_event *)&sentinel;
    EXPECT_REFUSED(cujit_event_ipc_open(engine, text, &e), CUJIT_ERROR_INVALID_ARGUMENT,
                   bad_handle("cujit_event_ipc_open", text, "cujit_event_ipc_handle"));
    cr_expect_null(e, "%s: out is set to NULL", text);
  }
  snprintf(text, sizeof text, "cujit-ipc-event:%s", upper);
  cujit_event *e = NULL;
  EXPECT_REFUSED(cujit_event_ipc_open(engine, text, &e), CUJIT_ERROR_INVALID_ARGUMENT,
                 bad_handle("cujit_event_ipc_open", text, "cujit_event_ipc_handle"));
}

/* "the CPU device" or "device N", as the engine names a device in its messages. */
static const char *device_name(char *buf, size_t len) {
  int ordinal = cujit_device_ordinal(current());
  if (ordinal == CUJIT_DEVICE_CPU)
    snprintf(buf, len, "the CPU device");
  else
    snprintf(buf, len, "device %d", ordinal);
  return buf;
}

/* cujit_launch_n over more elements than the grid's first dimension can cover with the block it
** picks: refused before anything runs, with the numbers and the way out; the kernel still works. */
Test(refusals, launch_n_past_the_grid_limit) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "ones(float *x, unsigned long long n)",
                                "unsigned long long i = blockIdx.x * (unsigned long long)"
                                "blockDim.x + threadIdx.x;\nif (i < n) x[i] = 1;",
                                NULL, NULL, &k));
  int block = 0, min_grid = 0;
  EXPECT_OK(cujit_kernel_suggest_block(k, &block, &min_grid));
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(current(), &info));
  cr_assert_gt(block, 0);
  size_t grid = (size_t)info.max_grid_dim[0], n = grid * (size_t)block + 1;
  cujit_buffer *x = counting(0);
  cujit_arg a[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_U(n)};
  char name[32], want[512];
  snprintf(want, sizeof want,
           "kernel 'ones': %zu elements need %zu blocks of %d, over %s's grid limit of %d; use a "
           "grid-stride loop and an explicit grid",
           n, grid + 1, block, device_name(name, sizeof name), info.max_grid_dim[0]);
  EXPECT_REFUSED(cujit_launch_n(k, n, NULL, a, 2), CUJIT_ERROR_LAUNCH_CONFIG, want);
  check_values(x, 0, "after the refusal"); /* nothing ran */
  cujit_arg few[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_U(N)};
  EXPECT_OK(cujit_launch_n(k, N, NULL, few, 2));
  float h[N];
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N; i++)
    cr_assert_eq(h[i], 1.0f, "x[%d] = %g after a launch that fits", i, h[i]);
  cujit_kernel_free(k);
}

/* A file with a NUL byte in it is no CUDA source: refused by name, before any compile. */
Test(refusals, a_source_file_holding_nul_bytes) {
  char path[600];
  snprintf(path, sizeof path, "%s/nul.cu", cj_scratch); /* the fixture's cache directory */
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  static const char text[] = "extern \"C\" __global__ void k(int *x) { *x = 1; }\0// after\n";
  cr_assert_eq(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
  cr_assert_eq(fclose(f), 0);
  cujit_program *p = (cujit_program *)&p;
  char want[700];
  snprintf(want, sizeof want, "'%s' holds NUL bytes: it is not a CUDA source file", path);
  EXPECT_REFUSED(cujit_program_compile_file(engine, path, &sm90, &p), CUJIT_ERROR_IO, want);
  cr_assert_null(p, "no program from a refused file");
}

/* A cooperative launch on a capturing stream is refused, and the capture goes on as it was: the
** graph holds the launches around it, and replays them. */
Test(refusals, a_cooperative_launch_while_capturing) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "plus(float *x, float v)", "x[threadIdx.x] += v;", NULL,
                                NULL, &k));
  cujit_buffer *x = counting(0);
  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 1, c.block[0] = N, c.stream = s;
  cujit_arg zero[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(0)};
  EXPECT_OK(cujit_launch(k, &c, zero, 2)); /* loaded on the device before the capture */
  EXPECT_OK(cujit_stream_synchronize(s));
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  cujit_arg one[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(1)};
  EXPECT_OK(cujit_launch(k, &c, one, 2));
  EXPECT_REFUSED(cujit_launch_cooperative(k, &c, one, 2), CUJIT_ERROR_UNSUPPORTED,
                 "kernel 'plus': a cooperative launch cannot be captured into a graph by cujit; "
                 "launch it outside the capture");
  cr_assert(cujit_stream_capturing(s), "the refusal ends no capture");
  cujit_arg ten[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(10)};
  EXPECT_OK(cujit_launch(k, &c, ten, 2));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(s, &g));
  cr_assert_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 2, "the two launches");
  check_values(x, 0, "nothing ran during the capture");
  EXPECT_OK(cujit_graph_replay(g, s, 2));
  EXPECT_OK(cujit_stream_synchronize(s));
  check_values(x, 22, "two replays of +1 and +10");
  EXPECT_OK(cujit_launch_cooperative(k, &c, one, 2)); /* outside a capture it runs */
  EXPECT_OK(cujit_stream_synchronize(s));
  check_values(x, 23, "the cooperative launch after the capture");
  cujit_graph_free(g);
  cujit_stream_free(s);
  cujit_kernel_free(k);
}

/* cujit_graph_set_args with buffers that would select another specialisation of a generic kernel
** than the one captured: the node launches that specialisation, so they are refused as its launch
** refuses them, and the node keeps its arguments. */
Test(refusals, graph_arguments_of_another_specialisation) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "bump(T *x)", "x[threadIdx.x] += (T)1;", NULL, NULL, &k));
  cujit_buffer *x = counting(0), *d;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(double), CUJIT_F64, &d));
  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 1, c.block[0] = N, c.stream = s;
  cujit_arg floats[] = {CUJIT_ARG_BUF(x)}, doubles[] = {CUJIT_ARG_BUF(d)};
  EXPECT_OK(cujit_launch(k, &c, floats, 1)); /* both specialisations loaded */
  EXPECT_OK(cujit_launch(k, &c, doubles, 1));
  EXPECT_OK(cujit_stream_synchronize(s));
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_launch(k, &c, floats, 1));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(s, &g));
  EXPECT_REFUSED(cujit_graph_set_args(g, 0, doubles, 1), CUJIT_ERROR_ARGUMENT,
                 "kernel 'bump', argument 1 'x' (float *): the buffer holds f64 but the parameter "
                 "points to f32");
  EXPECT_OK(cujit_graph_launch(g, s));
  EXPECT_OK(cujit_stream_synchronize(s));
  check_values(x, 2, "the node kept its buffer (one launch, one replay)");
  cujit_graph_free(g);
  cujit_stream_free(s);
  cujit_buffer_free(d);
  cujit_kernel_free(k);
}
