/*
** lfile.c -- cuda.write_file(path, bytes): a file written the way cujit writes every file a user
** names (cujit_file_write): a regular file replaced whole through a temporary file, so a failure
** leaves what was there; /dev/null, a FIFO or a terminal written in place, never replaced. Lua's
** io.open(path, "wb") truncates first, so a failed write there loses the old file.
*/
#include "lfile.h"

static int l_write_file(lua_State *L) {
  const char *path = cjl_check_text(L, 1, "the path");
  size_t len;
  const char *bytes = luaL_checklstring(L, 2, &len);
  cujit_engine *e = cjl_engine(L);
  if (cujit_file_write(e, path, bytes, len) != CUJIT_OK)
    return luaL_error(L, "cuda.write_file: %s", cujit_errmsg(e));
  return 0;
}

static const luaL_Reg module_functions[] = {{"write_file", l_write_file}, {NULL, NULL}};

void cjl_open_files(lua_State *L, int module_index) {
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
