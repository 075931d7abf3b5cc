/*
** structs.c -- copying the public structs that grow between the caller's layout and this
** library's (structs.h): the rule of cujit.h's introduction, in one place.
*/
#include "structs.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* "cujit_launch_config" -> "CUJIT_LAUNCH_CONFIG_INIT", for the messages. */
static void init_macro(const char *type, char *out, size_t len) {
  size_t i = 0;
  for (; type[i] && i + 6 < len; i++) out[i] = (char)toupper((unsigned char)type[i]);
  snprintf(out + i, len - i, "_INIT");
}

static size_t size_of(const void *theirs) {
  size_t size;
  memcpy(&size, theirs, sizeof size); /* every such struct begins with its size_t size */
  return size;
}

static cujit_status check_size(cujit_engine *engine, const char *fn, const char *type, size_t size,
                               size_t ours_size, size_t v1) {
  if (size >= v1 && size <= CJ_STRUCT_SIZE_MAX) return CUJIT_OK;
  char init[64];
  init_macro(type, init, sizeof init);
  if (size == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s's size field is 0; declare it with %s (%s x = %s;), or set "
                   ".size = sizeof(%s), so that cujit knows which layout the program has",
                   fn, type, init, type, init, type);
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: the %s's size field is %zu, which is no layout of %s (from %zu to %d "
                 "bytes; this library's is %zu): an uninitialised struct? declare it with %s",
                 fn, type, size, type, v1, CJ_STRUCT_SIZE_MAX, ours_size, init);
}

cujit_status cj_struct_in(cujit_engine *engine, const char *fn, const char *type,
                          const void *theirs, void *ours, size_t ours_size, size_t v1) {
  size_t size = size_of(theirs);
  cujit_status st = check_size(engine, fn, type, size, ours_size, v1);
  if (st != CUJIT_OK) return st;
  const unsigned char *bytes = theirs;
  for (size_t i = ours_size; i < size; i++)
    if (bytes[i])
      return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                     "%s: the %s is %zu bytes, a newer layout than this library's %zu, and sets "
                     "a field it does not know (byte %zu is not zero); link the libcujit of the "
                     "cujit.h the program was built with, or leave the newer fields unset",
                     fn, type, size, ours_size, i);
  memset(ours, 0, ours_size);
  memcpy(ours, theirs, size < ours_size ? size : ours_size);
  memcpy(ours, &ours_size, sizeof ours_size);
  return CUJIT_OK;
}

cujit_status cj_struct_room(cujit_engine *engine, const char *fn, const char *type,
                            const void *theirs, size_t ours_size, size_t v1, size_t *room) {
  *room = 0;
  if (!theirs)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the %s is NULL; pass one to fill", fn,
                   type);
  size_t size = size_of(theirs);
  cujit_status st = check_size(engine, fn, type, size, ours_size, v1);
  *room = size < ours_size ? size : ours_size;
  return st;
}

void cj_struct_out(void *theirs, size_t room, const void *ours) {
  memcpy(theirs, ours, room);
  memcpy(theirs, &room, sizeof room);
}
