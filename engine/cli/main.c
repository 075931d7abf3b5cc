/*
** main.c -- the `cujit` command's entry point: a subcommand (devices, compile, cache, help,
** --version) when the first argument names one, else Lua as stock `lua` runs it.
*/
#include "cli.h"

int main(int argc, char **argv) {
  if (argc > 1 && cli_is_tool(argv[1])) return cli_tool_main(argc, argv);
  return cli_lua_main(argc, argv);
}
