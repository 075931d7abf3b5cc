/*
** cli.h -- what the parts of the `cujit` command share: the subcommands (cmd_tools.c), the Lua
** runner (run.c) and the REPL (repl.c). Private to the command.
*/
#ifndef CUJIT_CLI_H
#define CUJIT_CLI_H

#include <stdio.h>

#include "cujit.h"

#include <lua.h>

#define CLI_NAME "cujit"

/* 1 if argv[1] names a subcommand (devices, compile, cache, help, --version, --help). A first
** argument that ends in ".lua" or contains a '/' is always a script, never a subcommand. */
int cli_is_tool(const char *arg);

/* Runs the subcommand named by argv[1]; returns the exit status. */
int cli_tool_main(int argc, char **argv);

/* `cujit compile -v`: each kernel's resources as ptxas reported them, one line each on stderr
** (cmd_inspect.c); 0 when one of them has none (said why). */
int cli_print_resources(cujit_engine *engine, cujit_program *prog, const char *arch);

/* `cujit compile --sass`: the program's CUBIN through cuobjdump -sass (or nvdisasm) on stdout;
** 0 after a message when there is no CUBIN, no tool, or the tool fails. */
int cli_print_sass(cujit_engine *engine, cujit_program *prog, const char *arch);
/* `cujit compile --time`: the table of phase times NVRTC wrote into `path` (its option --time=,
** which this compile was given), one line per phase on stderr; says so when there is none (the
** program came from the cache). */
void cli_print_times(const cujit_program *prog, const char *path);

/* The usage text, for `cujit help` and for bad options. */
void cli_print_usage(FILE *out);

/* Runs Lua as stock `lua` does (scripts, -e, -l, -i, -v, -, --, -E, -W); returns the exit status.
 */
int cli_lua_main(int argc, char **argv);

/* Prints "cujit: msg" on stderr. */
void cli_message(const char *msg);

/* Calls the function below `narg` arguments on the stack in protected mode, with a traceback
** on error and Ctrl-C turned into a Lua error ("interrupted!") plus cujit_interrupt(engine).
** Returns the lua_pcall status; on error the message is left on the stack. */
int cli_docall(lua_State *L, int narg, int nres);

/* On an error status prints the message on the top of the stack and pops it. Returns status. */
int cli_report(lua_State *L, int status);

/* The arguments the command was started with, for the REPL's :restart. */
char **cli_argv(void);

/* The engine the runner opened, for the REPL's timing and for interrupts. */
cujit_engine *cli_engine(void);

/* The interactive loop: reads statements from stdin (with libedit when it is a terminal, plain
** lines otherwise) and runs them in L until end of input. */
void cli_repl(lua_State *L);

/* A cache of small freed blocks chained in front of L's allocator (lua_blocks.c), which makes the
** short-lived tables of a Lua loop cheaper to make and collect. Returns NULL when there is no
** memory for it (L then works as before). Free it after lua_close(L), never before. */
typedef struct cli_block_cache cli_block_cache;
cli_block_cache *cli_block_cache_install(lua_State *L);
void cli_block_cache_free(cli_block_cache *cache);

#endif
