/*
** limage.c -- PNG images as u8 arrays of shape {height, width, channels}: cuda.image.read and
** cuda.image.write, with libpng. libpng reports errors by longjmp, so all its work happens in
** functions that touch no Lua state and return a message; the Lua side raises afterwards. A
** written image is encoded in memory first and then written whole by cujit_file_write.
*/
#include "larray.h"
#include "lhost.h"
#include "limage.h"

#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pixels per side we read: far beyond any test image, far below overflow. */
#define MAX_SIDE 65536

typedef struct image {
  uint32_t width, height;
  int channels; /* 1 grey, 2 grey + alpha (written only), 3 RGB, 4 RGBA */
  unsigned char *pixels;
} image;

/* What a libpng session shares with its error handler; kept off the stack frame that setjmp
** saves, so nothing in it is lost by the longjmp. */
typedef struct png_session {
  const char *path;
  FILE *file;
  png_structp png;
  png_infop info;
  png_bytep *rows;
  image *img;
  char *err;
  size_t errlen;
  unsigned char *out; /* the encoded file, written whole afterwards (cujit_file_write) */
  size_t out_len, out_cap;
} png_session;

static void on_png_error(png_structp png, png_const_charp msg) {
  png_session *s = png_get_error_ptr(png);
  snprintf(s->err, s->errlen, "'%s': %s", s->path, msg);
  png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg; /* e.g. a bad CRC in an ancillary chunk: the pixels are still fine */
}

static int session_fail(png_session *s, const char *fmt, const char *detail) {
  snprintf(s->err, s->errlen, fmt, s->path, detail);
  return 0;
}

/* Asks libpng for 8-bit samples, 1, 3 or 4 per pixel, whatever the file holds: palettes and
** low-bit grey expand, transparency becomes alpha, 16-bit samples keep their high byte, grey with
** alpha becomes RGBA. */
static void request_8bit(png_structp png, png_infop info) {
  int color = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16) png_set_strip_16(png);
  int alpha = (color & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
  if (!(color & PNG_COLOR_MASK_COLOR) && alpha) png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
}

static int read_pixels(png_session *s) {
  image *img = s->img;
  if (setjmp(png_jmpbuf(s->png))) return 0;
  png_init_io(s->png, s->file);
  png_set_sig_bytes(s->png, 8);
  png_set_user_limits(s->png, MAX_SIDE, MAX_SIDE);
  png_read_info(s->png, s->info);
  request_8bit(s->png, s->info);
  img->width = png_get_image_width(s->png, s->info);
  img->height = png_get_image_height(s->png, s->info);
  img->channels = png_get_channels(s->png, s->info);
  size_t row = (size_t)img->width * (size_t)img->channels;
  if (png_get_rowbytes(s->png, s->info) != row || img->channels == 2)
    return session_fail(s, "'%s': %s", "unexpected pixel layout after conversion to 8 bits");
  img->pixels = malloc(row * img->height);
  s->rows = malloc(sizeof *s->rows * img->height);
  if (!img->pixels || !s->rows) return session_fail(s, "'%s': %s", "out of host memory");
  for (uint32_t y = 0; y < img->height; y++) s->rows[y] = img->pixels + y * row;
  png_read_image(s->png, s->rows);
  png_read_end(s->png, NULL);
  return 1;
}

/* Reads a PNG into img (pixels malloc'd). Returns 1, or 0 with a message in err. */
static int png_read_file(const char *path, image *img, char *err, size_t errlen) {
  png_session s = {.path = path, .img = img, .err = err, .errlen = errlen};
  unsigned char sig[8];
  memset(img, 0, sizeof *img);
  s.file = fopen(path, "rb");
  if (!s.file) return session_fail(&s, "cannot open image '%s': %s", strerror(errno));
  if (fread(sig, 1, sizeof sig, s.file) != sizeof sig || png_sig_cmp(sig, 0, sizeof sig) != 0) {
    fclose(s.file);
    return session_fail(&s, "'%s' is not a PNG file (%s)",
                        "it does not start with the PNG signature; only PNG images are read");
  }
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, on_png_error, on_png_warning);
  s.info = s.png ? png_create_info_struct(s.png) : NULL;
  int ok = s.info ? read_pixels(&s) : session_fail(&s, "'%s': %s", "libpng could not start");
  png_destroy_read_struct(s.png ? &s.png : NULL, s.info ? &s.info : NULL, NULL);
  fclose(s.file);
  free(s.rows);
  if (!ok) {
    free(img->pixels);
    img->pixels = NULL;
  }
  return ok;
}

/* libpng's output goes into memory: the file is written whole by cujit_file_write's rule, so a
** libpng error or a full disk leaves an existing file as it was. */
static void on_png_write(png_structp png, png_bytep data, size_t len) {
  png_session *s = png_get_io_ptr(png);
  if (len > s->out_cap - s->out_len) {
    size_t cap = s->out_cap ? 2 * s->out_cap : 1 << 16;
    while (cap - s->out_len < len) cap *= 2;
    unsigned char *grown = realloc(s->out, cap);
    if (!grown) png_error(png, "out of host memory");
    s->out = grown, s->out_cap = cap;
  }
  memcpy(s->out + s->out_len, data, len);
  s->out_len += len;
}

static void on_png_flush(png_structp png) {
  (void)png;
}

static int write_pixels(png_session *s) {
  static const int color_types[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                    PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA};
  const image *img = s->img;
  if (setjmp(png_jmpbuf(s->png))) return 0;
  png_set_write_fn(s->png, s, on_png_write, on_png_flush);
  png_set_IHDR(s->png, s->info, img->width, img->height, 8, color_types[img->channels],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(s->png, s->info);
  size_t row = (size_t)img->width * (size_t)img->channels;
  s->rows = malloc(sizeof *s->rows * img->height);
  if (!s->rows) return session_fail(s, "'%s': %s", "out of host memory");
  for (uint32_t y = 0; y < img->height; y++) s->rows[y] = img->pixels + y * row;
  png_write_image(s->png, s->rows);
  png_write_end(s->png, NULL);
  return 1;
}

/* Encodes img as an 8-bit PNG; *out (malloc'd) and *out_len, or 0 with a message in err. */
static int png_encode(const char *path, image *img, unsigned char **out, size_t *out_len, char *err,
                      size_t errlen) {
  png_session s = {.path = path, .img = img, .err = err, .errlen = errlen};
  s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &s, on_png_error, on_png_warning);
  s.info = s.png ? png_create_info_struct(s.png) : NULL;
  int ok = s.info ? write_pixels(&s) : session_fail(&s, "'%s': %s", "libpng could not start");
  png_destroy_write_struct(s.png ? &s.png : NULL, s.info ? &s.info : NULL);
  free(s.rows);
  if (!ok) {
    free(s.out);
    return 0;
  }
  *out = s.out, *out_len = s.out_len;
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Lua functions
** ------------------------------------------------------------------------------------------- */

/* cuda.image.read(path) -> host array u8 {height, width, channels}, channels 1, 3 or 4. */
static int l_read(lua_State *L) {
  const char *path = cjl_check_text(L, 1, "the path");
  image img;
  char err[512];
  if (!png_read_file(path, &img, err, sizeof err)) return luaL_error(L, "%s", err);
  size_t shape[3] = {img.height, img.width, (size_t)img.channels};
  /* Lua may raise while allocating: keep the pixels in a block it owns first. */
  size_t bytes = shape[0] * shape[1] * shape[2];
  unsigned char *copy = lua_newuserdatauv(L, bytes, 0);
  memcpy(copy, img.pixels, bytes);
  free(img.pixels);
  cjl_host *h = cjl_push_host(L, CUJIT_U8, 3, shape, 0);
  memcpy(cjl_host_data(h), copy, bytes);
  return 1;
}

/* The dtype, shape and element count of a host or device array at idx. */
static void array_layout(lua_State *L, int idx, cujit_dtype *dtype, int *ndim, size_t *shape) {
  cjl_host *h = cjl_test_host(L, idx);
  if (h) {
    h = cjl_check_host(L, idx);
    *dtype = h->dtype, *ndim = h->ndim;
    memcpy(shape, h->shape, sizeof h->shape);
    return;
  }
  cjl_array *a = cjl_test_array(L, idx);
  if (!a)
    luaL_argerror(
        L, idx,
        lua_pushfstring(L, "u8 host or device array expected, got %s", luaL_typename(L, idx)));
  cjl_check_array(L, idx, &a);
  *dtype = a->dtype, *ndim = a->ndim;
  memcpy(shape, a->shape, sizeof a->shape);
}

/* The pixels of the array at idx, in host memory (a device array is copied into a Lua block). */
static unsigned char *array_pixels(lua_State *L, int idx, size_t bytes) {
  cjl_host *h = cjl_test_host(L, idx);
  if (h) return cjl_host_data(h);
  cjl_array *a = cjl_test_array(L, idx);
  unsigned char *copy = lua_newuserdatauv(L, bytes, 0);
  if (cujit_memcpy_dtoh(copy, cjl_array_buffer(a), 0, bytes, NULL) != CUJIT_OK)
    cjl_error(L, cjl_engine(L));
  return copy;
}

/* cuda.image.write(path, array): a u8 array {h, w} (grey) or {h, w, c}, c = 1, 2, 3 or 4. */
static int l_write(lua_State *L) {
  const char *path = cjl_check_text(L, 1, "the path");
  cujit_dtype dtype;
  int ndim;
  size_t shape[CJL_MAX_DIMS];
  array_layout(L, 2, &dtype, &ndim, shape);
  if (dtype != CUJIT_U8)
    return luaL_argerror(
        L, 2,
        lua_pushfstring(L,
                        "u8 array expected, got %s (scale and convert "
                        "to 0..255 first)",
                        dtype == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(dtype)));
  size_t channels = ndim == 3 ? shape[2] : 1;
  if (ndim == 1 || channels > 4)
    return luaL_argerror(L, 2,
                         lua_pushfstring(L,
                                         "image shape {height, width} or {height, width, "
                                         "channels} with 1 to 4 channels expected, got "
                                         "%d dimension(s)%s",
                                         ndim, ndim == 3 ? " and more than 4 channels" : ""));
  if (shape[0] > MAX_SIDE || shape[1] > MAX_SIDE)
    return luaL_argerror(L, 2, "images are limited to 65536 pixels a side");
  image img = {
      .width = (uint32_t)shape[1], .height = (uint32_t)shape[0], .channels = (int)channels};
  img.pixels = array_pixels(L, 2, shape[0] * shape[1] * channels);
  char err[512];
  unsigned char *png;
  size_t len;
  if (!png_encode(path, &img, &png, &len, err, sizeof err))
    return luaL_error(L, "cuda.image.write: %s (nothing was written)", err);
  cujit_engine *e = cjl_engine(L);
  cujit_status st = cujit_file_write(e, path, png, len);
  free(png);
  if (st != CUJIT_OK) return luaL_error(L, "cuda.image.write: %s", cujit_errmsg(e));
  return 0;
}

static const luaL_Reg image_functions[] = {{"read", l_read}, {"write", l_write}, {NULL, NULL}};

void cjl_open_images(lua_State *L, int module_index) {
  luaL_newlib(L, image_functions);
  lua_setfield(L, module_index, "image");
}
