/*
** run.c -- the `cujit` command as a Lua interpreter: the options, the `arg` table, LUA_INIT,
** protected calls with tracebacks and Ctrl-C, exactly as stock `lua` 5.4 behaves, with the cujit
** module installed (sharing one engine) before anything runs.
*/
#include "cli.h"
#include "cujit_lua.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

static cujit_engine *run_engine;  /* the one engine of this process */
static lua_State *volatile run_L; /* the state a Ctrl-C should stop */
static char **run_argv;           /* as given to main, for a restart */

char **cli_argv(void) {
  return run_argv;
}

cujit_engine *cli_engine(void) {
  return run_engine;
}

void cli_message(const char *msg) {
  fprintf(stderr, CLI_NAME ": %s\n", msg);
  fflush(stderr);
}

int cli_report(lua_State *L, int status) {
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    cli_message(msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
  }
  return status;
}

/* --- Ctrl-C ----------------------------------------------------------------------------------- */

/* Runs at the next Lua instruction after a Ctrl-C: turns it into an error. */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

/* A signal handler may only set flags: lua_sethook is safe here (it is what lua.c does), and
** cujit_interrupt only sets the engine's flag, which cuts short a wait on the GPU. The handler
** is reset on delivery, so a second Ctrl-C before the first takes effect ends the program. */
static void on_sigint(int sig) {
  (void)sig;
  lua_sethook(run_L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
  if (run_engine) cujit_interrupt(run_engine);
}

static void set_sigint(void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
}

/* Adds a traceback to an error message; non-string errors use __tostring when they have one. */
static int msg_handler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

int cli_docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg;
  lua_pushcfunction(L, msg_handler);
  lua_insert(L, base);
  run_L = L;
  struct sigaction old;
  sigaction(SIGINT, NULL, &old);
  set_sigint(on_sigint, SA_RESETHAND);
  if (run_engine) cujit_interrupt_clear(run_engine); /* an old Ctrl-C must not stop new waits */
  int status = lua_pcall(L, narg, nres, base);
  sigaction(SIGINT, &old, NULL);
  if (lua_gethook(L) == stop_hook) lua_sethook(L, NULL, 0, 0); /* a Ctrl-C too late to act */
  lua_remove(L, base);
  return status;
}

/* --- running chunks --------------------------------------------------------------------------- */

static int run_chunk(lua_State *L, int status) {
  if (status == LUA_OK) status = cli_docall(L, 0, 0);
  return cli_report(L, status);
}

static int do_file(lua_State *L, const char *name) {
  return run_chunk(L, luaL_loadfile(L, name));
}

static int do_string(lua_State *L, const char *s, const char *name) {
  return run_chunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l mod, or -l g=mod: require mod and keep the result in global mod (or g). */
static int do_library(lua_State *L, char *spec) {
  char *eq = strchr(spec, '=');
  const char *mod = eq ? eq + 1 : spec;
  lua_getglobal(L, "require");
  lua_pushstring(L, mod);
  int status = cli_docall(L, 1, 1);
  if (status == LUA_OK) {
    if (eq)
      lua_pushlstring(L, spec, (size_t)(eq - spec));
    else
      lua_pushstring(L, mod);
    lua_insert(L, -2);
    lua_setglobal(L, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  return cli_report(L, status);
}

/* The script with its arguments (argv after it) passed as `...`. */
static int do_script(lua_State *L, char **argv, int script) {
  const char *name = argv[script];
  if (strcmp(name, "-") == 0 && strcmp(argv[script - 1], "--") != 0) name = NULL; /* stdin */
  int status = luaL_loadfile(L, name);
  if (status == LUA_OK) {
    int n = 0;
    while (argv[script + 1 + n]) n++;
    /* Room for them all, the message handler and the call's own (without it, some thousands of
    ** arguments were written past the stack's end: a crash). */
    luaL_checkstack(L, n + 3, "too many arguments to the script");
    for (int i = 0; i < n; i++) lua_pushstring(L, argv[script + 1 + i]);
    status = cli_docall(L, n, LUA_MULTRET);
  }
  return cli_report(L, status);
}

/* --- options ---------------------------------------------------------------------------------- */

enum { HAS_BAD = 1, HAS_I = 2, HAS_V = 4, HAS_E = 8, HAS_CAPITAL_E = 16 };

/* Scans the options up to the script. Sets *script to its index (0 when there is none) and
** *bad to the offending option on error. */
static int collect_args(char **argv, int *script, int *bad) {
  int flags = 0;
  *script = 0;
  for (int i = 1; argv[i]; i++) {
    const char *a = argv[i];
    *bad = i;
    if (a[0] != '-') {
      *script = i;
      return flags;
    }
    switch (a[1]) {
    case '-':
      if (a[2] != '\0') return HAS_BAD;
      *script = argv[i + 1] ? i + 1 : 0;
      return flags;
    case '\0':
      *script = i;
      return flags;
    case 'E':
      if (a[2] != '\0') return HAS_BAD;
      flags |= HAS_CAPITAL_E;
      break;
    case 'W':
      if (a[2] != '\0') return HAS_BAD;
      break;
    case 'i':
      if (a[2] != '\0') return HAS_BAD;
      flags |= HAS_I;
      break;
    case 'v':
      if (a[2] != '\0') return HAS_BAD;
      flags |= HAS_V;
      break;
    case 'e':
      flags |= HAS_E;
      /* FALLTHROUGH */
    case 'l':
      if (a[2] == '\0' && (argv[++i] == NULL || argv[i][0] == '-')) return HAS_BAD;
      break;
    default:
      return HAS_BAD;
    }
  }
  return flags;
}

static void print_bad_option(const char *opt) {
  if (opt[1] == 'e' || opt[1] == 'l')
    fprintf(stderr, CLI_NAME ": '%s' needs an argument\n", opt);
  else
    fprintf(stderr, CLI_NAME ": unrecognized option '%s'\n", opt);
  cli_print_usage(stderr);
}

/* Runs -e, -l and -W in the order given. */
static int run_args(lua_State *L, char **argv, int upto) {
  for (int i = 1; i < upto; i++) {
    char opt = argv[i][1];
    if (opt == 'W') lua_warning(L, "@on", 0);
    if (opt != 'e' && opt != 'l') continue;
    char *extra = argv[i][2] ? argv[i] + 2 : argv[++i];
    int status = opt == 'e' ? do_string(L, extra, "=(command line)") : do_library(L, extra);
    if (status != LUA_OK) return 0;
  }
  return 1;
}

/* arg[0] is the script, arg[1..] its arguments, arg[-1..] the interpreter and its options. */
static void create_arg_table(lua_State *L, char **argv, int argc, int script) {
  lua_createtable(L, argc - script - 1, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* LUA_INIT_5_4, else LUA_INIT: "@file" runs the file, anything else is run as code. */
static int handle_lua_init(lua_State *L) {
  const char *name = "=LUA_INIT_5_4";
  const char *init = getenv(name + 1);
  if (!init) init = getenv((name = "=LUA_INIT") + 1);
  if (!init) return LUA_OK;
  if (init[0] == '@') return do_file(L, init + 1);
  return do_string(L, init, name);
}

static void print_version(void) {
  printf(CLI_NAME " %s -- %s\n", cujit_version(), LUA_COPYRIGHT);
  fflush(stdout);
}

/* Installs the cujit module ahead of everything, so `require "cujit"` finds it. */
static void open_cujit(lua_State *L) {
  cujit_lua_open(L, run_engine);
  lua_settop(L, 0);
}

static int run_main(lua_State *L, int argc, char **argv, int flags, int script) {
  if (flags & HAS_V) print_version();
  if (flags & HAS_CAPITAL_E) {
    lua_pushboolean(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV"); /* package.path and cpath ignore env */
  }
  luaL_openlibs(L);
  open_cujit(L);
  create_arg_table(L, argv, argc, script);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  if (!(flags & HAS_CAPITAL_E) && handle_lua_init(L) != LUA_OK) return 0;
  if (!run_args(L, argv, script ? script : argc)) return 0;
  if (script && do_script(L, argv, script) != LUA_OK) return 0;
  if (flags & HAS_I) {
    if (!(flags & HAS_V) && isatty(STDIN_FILENO)) print_version();
    cli_repl(L);
  } else if (!script && !(flags & (HAS_E | HAS_V))) {
    if (isatty(STDIN_FILENO)) {
      print_version();
      cli_repl(L);
    } else if (do_file(L, NULL) != LUA_OK) {
      return 0;
    }
  }
  return 1;
}

/* Everything runs in protected mode, so a memory error anywhere is reported, not a crash. */
static int protected_main(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int script, bad;
  int flags = collect_args(argv, &script, &bad);
  if (flags == HAS_BAD) {
    print_bad_option(argv[bad]);
    return 0;
  }
  lua_pushboolean(L, run_main(L, argc, argv, flags, script));
  return 1;
}

/* Lua's warnings are off until -W or a "@on" warning; Lua handles that itself. */
int cli_lua_main(int argc, char **argv) {
  run_argv = argv;
  if (cujit_open(&run_engine) != CUJIT_OK) {
    cli_message("cannot open the cujit engine: out of memory");
    return EXIT_FAILURE;
  }
  lua_State *L = luaL_newstate();
  if (!L) {
    cli_message("cannot create the Lua state: not enough memory");
    cujit_close(run_engine);
    return EXIT_FAILURE;
  }
  cli_block_cache *blocks = cli_block_cache_install(L);
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, protected_main);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = lua_pcall(L, 2, 1, 0);
  int ok = lua_toboolean(L, -1);
  cli_report(L, status);
  lua_close(L);
  cli_block_cache_free(blocks);
  cujit_close(run_engine);
  run_engine = NULL;
  fflush(stdout);
  return (status == LUA_OK && ok) ? EXIT_SUCCESS : EXIT_FAILURE;
}
