/*
** nccl_id.c -- NCCL unique ids as text, so that processes can share one through an environment
** variable or a file: ncclGetUniqueId as 256 hex digits, reading them back with every mistake
** named, and the rendezvous file (written whole by rename, read by waiting for it to appear).
*/
#include "nccl.h"
#include "base/files.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ID_DIGITS (2 * CJ_NCCL_ID_BYTES)

static int hex_value(int ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

cujit_status cj_nccl_id_parse(cujit_engine *engine, const char *fn, const char *hex,
                              cj_nccl_id *id) {
  if (!hex)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the unique id is NULL; pass the text of cujit_nccl_unique_id from rank 0",
                   fn);
  while (isspace((unsigned char)*hex)) hex++;
  size_t n = 0;
  while (hex[n] && !isspace((unsigned char)hex[n])) n++;
  const char *rest = hex + n;
  while (isspace((unsigned char)*rest)) rest++;
  if (n != ID_DIGITS || *rest)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: a unique id is %d hex digits, got %s%zu character%s; pass the text of "
                   "cujit_nccl_unique_id (Lua: cuda.nccl.unique_id()) from rank 0 unchanged",
                   fn, ID_DIGITS, *rest ? "more than one word, the first of " : "", n,
                   n == 1 ? "" : "s");
  for (size_t i = 0; i < CJ_NCCL_ID_BYTES; i++) {
    int hi = hex_value((unsigned char)hex[2 * i]), lo = hex_value((unsigned char)hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: the unique id has '%c' at position %zu, which is not a hex digit", fn,
                     hex[hi < 0 ? 2 * i : 2 * i + 1], (hi < 0 ? 2 * i : 2 * i + 1) + 1);
    id->internal[i] = (char)(hi << 4 | lo);
  }
  return CUJIT_OK;
}

cujit_status cujit_nccl_unique_id(cujit_engine *engine, char id_hex[CUJIT_NCCL_ID_HEX]) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_nccl_unique_id";
  if (!engine) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: engine is NULL", fn);
  if (!id_hex)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: id_hex is NULL; pass a buffer of CUJIT_NCCL_ID_HEX characters", fn);
  id_hex[0] = '\0';
  const cj_nccl *lib = cj_nccl_need(engine, fn);
  if (!lib) return CUJIT_ERROR_UNSUPPORTED;
  cj_nccl_id id;
  cj_nccl_result rc = lib->GetUniqueId(&id);
  if (rc != CJ_NCCL_SUCCESS) return cj_nccl_fail(engine, lib, NULL, rc, "ncclGetUniqueId");
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < CJ_NCCL_ID_BYTES; i++) {
    id_hex[2 * i] = digits[(unsigned char)id.internal[i] >> 4];
    id_hex[2 * i + 1] = digits[(unsigned char)id.internal[i] & 15];
  }
  id_hex[ID_DIGITS] = '\0';
  return CUJIT_OK;
}

/* --- the rendezvous file ---------------------------------------------------------------------- */

cujit_status cujit_nccl_id_write(cujit_engine *engine, const char *path, const char *id_hex) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_nccl_id_write";
  if (!engine) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: engine is NULL", fn);
  if (!path || !*path)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: no path to write the id to", fn);
  cj_nccl_id id;
  cujit_status st = cj_nccl_id_parse(engine, fn, id_hex, &id);
  if (st != CUJIT_OK) return st;
  /* Written beside the target and renamed over it (files.c), so a reader never sees half an
  ** id; a FIFO or a device given as the path is written in place. */
  char text[ID_DIGITS + 2];
  snprintf(text, sizeof text, "%.*s\n", ID_DIGITS, id_hex + strspn(id_hex, " \t\r\n"));
  st = cj_file_write(engine, NULL, path, text, strlen(text));
  if (st != CUJIT_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", cujit_errmsg(engine));
    return cj_fail(engine, st,
                   "%s: cannot write the unique id: %s; choose a path every rank can reach (a "
                   "shared file system across hosts)",
                   fn, why);
  }
  return CUJIT_OK;
}

/* The file's text when it is there (1), 0 while absent; anything else fails. */
static int read_id_file(cujit_engine *engine, const char *fn, const char *path, char *text,
                        size_t len, cujit_status *st) {
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT) return 0;
    *st = cj_fail(engine, CUJIT_ERROR_IO, "%s: cannot read %s (%s)", fn, path, strerror(errno));
    return -1;
  }
  size_t got = fread(text, 1, len - 1, f);
  text[got] = '\0';
  fclose(f);
  return 1;
}

cujit_status cujit_nccl_id_read(cujit_engine *engine, const char *path, double timeout_s,
                                char id_hex[CUJIT_NCCL_ID_HEX]) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_nccl_id_read";
  if (!engine) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: engine is NULL", fn);
  if (!path || !*path || !id_hex)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL; pass the file rank 0 writes and a buffer of "
                   "CUJIT_NCCL_ID_HEX characters",
                   fn, id_hex ? "path" : "id_hex");
  id_hex[0] = '\0';
  char text[1024];
  cujit_status st = CUJIT_OK;
  double deadline = cj_now_ms() + (timeout_s > 0 ? timeout_s * 1000.0 : 0);
  int found;
  /* Rank 0 may not have written it yet: look every 10 ms until the timeout. */
  unsigned mark = cj_interrupt_mark(engine);
  while ((found = read_id_file(engine, fn, path, text, sizeof text, &st)) == 0) {
    if (cj_interrupted(engine, mark)) {
      return cj_fail(engine, CUJIT_ERROR_INTERRUPTED, "%s: interrupted while waiting for %s", fn,
                     path);
    }
    if (cj_now_ms() >= deadline)
      return cj_fail(engine, CUJIT_ERROR_IO,
                     "%s: %s did not appear within %g s; start rank 0 (which writes it with "
                     "cujit_nccl_id_write) or wait longer",
                     fn, path, timeout_s > 0 ? timeout_s : 0.0);
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  if (found < 0) return st;
  char what[4200];
  snprintf(what, sizeof what, "%s: %s", fn, path);
  cj_nccl_id id;
  if ((st = cj_nccl_id_parse(engine, what, text, &id)) != CUJIT_OK) return st;
  const char *start = text + strspn(text, " \t\r\n");
  memcpy(id_hex, start, ID_DIGITS);
  id_hex[ID_DIGITS] = '\0';
  return CUJIT_OK;
}
