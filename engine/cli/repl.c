/*
** repl.c -- the interactive loop of the `cujit` command: reads statements (libedit on a
** terminal, plain lines from a pipe), continues incomplete ones as lua.c does, prints the values
** of expressions (repl_print.c), keeps a persistent history, completes names on Tab
** (repl_complete.c), and adds a few commands (:help [NAME], :time, :history, :save, :restart,
** :quit), a note when a statement runs long, wall + GPU timing of each statement, and after a
** fatal GPU fault the offer of :restart, which replays the session in a new process
** (repl_session.c).
*/
#include "repl.h"

#include <errno.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include <editline/readline.h>

#define PROMPT "> "
#define PROMPT2 ">> "
#define HISTORY_MAX 1000
#define SLOW_SECONDS 0.5 /* a statement running longer than this gets a note */

enum { STMT_READY, STMT_NONE, STMT_EOF, STMT_ERROR, STMT_QUIT };

/* Wakes once a statement has run for SLOW_SECONDS and says so, since neither Lua nor a compile
** or a GPU wait in C can print anything while it runs. */
typedef struct watchdog {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int started, quit, running;
  unsigned long statement; /* counts statements, so a note is never about an earlier one */
  struct timespec deadline;
} watchdog;

typedef struct repl {
  lua_State *L;
  cujit_engine *engine;
  int interactive;
  char *history_path; /* NULL: no history */
  int history_warned;
  int timing;
  cujit_device *event_device; /* the device the timing events belong to */
  cujit_event *ev_start, *ev_end;
  watchdog dog;
  repl_session *session; /* the statements that ran without error */
  char *pending;         /* the statement being run, kept when it succeeds */
  int pending_expression;
} repl;

static volatile sig_atomic_t sigint_seen;
static volatile sig_atomic_t in_gpu_wait;
static cujit_engine *volatile repl_engine;

/* Outside a statement, Ctrl-C abandons the line being typed, or cuts short the wait for the
** timing event; it never ends the session. */
static void on_repl_sigint(int sig) {
  (void)sig;
  sigint_seen = 1;
  if (in_gpu_wait && repl_engine) cujit_interrupt(repl_engine);
}

static void install_repl_sigint(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_repl_sigint; /* no SA_RESTART: a read at the prompt returns */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the watchdog ----------------------------------------------------------------------------- */

static void *watchdog_main(void *arg) {
  watchdog *w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->quit) {
    if (!w->running) {
      pthread_cond_wait(&w->cond, &w->lock);
      continue;
    }
    unsigned long mine = w->statement;
    int rc = 0;
    while (!w->quit && w->running && w->statement == mine && rc != ETIMEDOUT)
      rc = pthread_cond_timedwait(&w->cond, &w->lock, &w->deadline);
    if (!w->quit && w->running && w->statement == mine) {
      fprintf(stderr, CLI_NAME ": still running after %.1f s; Ctrl-C interrupts\n", SLOW_SECONDS);
      while (!w->quit && w->running && w->statement == mine) pthread_cond_wait(&w->cond, &w->lock);
    }
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

static void watchdog_start(watchdog *w) {
  pthread_mutex_init(&w->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cond, &attr);
  pthread_condattr_destroy(&attr);
  w->started = pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

static void watchdog_stop(watchdog *w) {
  if (!w->started) return;
  pthread_mutex_lock(&w->lock);
  w->quit = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
  w->started = 0;
}

static void watchdog_arm(watchdog *w, int running) {
  if (!w->started) return;
  pthread_mutex_lock(&w->lock);
  w->running = running;
  if (running) {
    w->statement++;
    clock_gettime(CLOCK_MONOTONIC, &w->deadline);
    long ns = w->deadline.tv_nsec + (long)(SLOW_SECONDS * 1e9);
    w->deadline.tv_sec += ns / 1000000000L;
    w->deadline.tv_nsec = ns % 1000000000L;
  }
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

/* --- history ---------------------------------------------------------------------------------- */

/* $CUJIT_HISTORY (empty: no history), else ~/.cujit_history. */
static char *history_file(void) {
  const char *env = getenv("CUJIT_HISTORY");
  if (env) return *env ? strdup(env) : NULL;
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  size_t n = strlen(home) + sizeof "/.cujit_history";
  char *path = malloc(n);
  if (path) snprintf(path, n, "%s/.cujit_history", home);
  return path;
}

/* The history is kept only in a regular file (or a new one): through a link, in the file it
** points at. Anything else (/dev/null, a FIFO) means no history: libedit's writer would chmod it
** 0600 and its reader would block on a FIFO. NULL: no history file. */
static char *history_target(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return errno == ENOENT ? strdup(path) : NULL;
  return S_ISREG(st.st_mode) ? realpath(path, NULL) : NULL;
}

/* 1 when `path` holds something other than a history libedit wrote (its first line is libedit's
** mark): a plain list of lines, say another program's history. libedit would read none of it and
** then write this session's over it, so such a file is left alone. A missing or empty file is not
** foreign: it becomes the history. */
static int foreign_history(const char *path) {
  static const char mark[] = "_HiStOrY_V2_";
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[sizeof mark + 1] = "";
  int foreign = fgets(line, sizeof line, f) && strncmp(line, mark, sizeof mark - 1) != 0;
  fclose(f);
  return foreign;
}

/* libedit writes the history to a new file beside it, renamed over the old one, so an error
** (a full disk) leaves the old history as it was. */
static int write_history_whole(const char *target) {
  size_t n = strlen(target) + sizeof ".cujit-XXXXXX";
  char *tmp = malloc(n);
  if (!tmp) return errno = ENOMEM, 0;
  snprintf(tmp, n, "%s.cujit-XXXXXX", target);
  int fd = mkstemp(tmp), ok = 0;
  if (fd >= 0) {
    close(fd);
    errno = 0;
    ok = write_history(tmp) == 0 && rename(tmp, target) == 0;
    int err = errno;
    if (!ok) unlink(tmp); /* our own temporary file */
    errno = err;
  }
  free(tmp);
  return ok;
}

static void history_save(repl *r) {
  if (!r->history_path || r->history_warned) return;
  char *target = history_target(r->history_path);
  if (!target) return; /* not a regular file: no history, by the rule above */
  int ok = write_history_whole(target);
  int err = errno;
  free(target);
  if (ok) return;
  r->history_warned = 1;
  fprintf(stderr,
          CLI_NAME ": warning: cannot write the history to %s (%s); set CUJIT_HISTORY to "
                   "a writable file, or to \"\" for none\n",
          r->history_path, err ? strerror(err) : "unknown error");
}

static void history_add(repl *r, const char *statement) {
  if (!r->interactive || !*statement) return;
  add_history(statement);
  history_save(r);
}

/* --- reading lines ---------------------------------------------------------------------------- */

/* _PROMPT / _PROMPT2 when set to strings, as in lua.c. */
static const char *get_prompt(lua_State *L, int first, char *buf, size_t len) {
  lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2");
  const char *p = lua_tostring(L, -1);
  snprintf(buf, len, "%s", p ? p : first ? PROMPT : PROMPT2);
  lua_pop(L, 1);
  return buf;
}

static char *read_plain_line(void) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    return NULL;
  }
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = '\0';
  return line;
}

/* libedit's own reading retries a read() cut short by a signal, so Ctrl-C at the prompt would
** wait for the next key. This getc waits with SIGINT blocked except inside pselect, so a Ctrl-C
** either is seen before waiting or ends the wait: no window where it is lost. */
static int prompt_getc(FILE *in) {
  sigset_t unblocked;
  sigprocmask(SIG_SETMASK, NULL, &unblocked);
  sigdelset(&unblocked, SIGINT);
  int fd = fileno(in);
  for (;;) {
    if (sigint_seen) return EOF;
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(fd, &readable);
    int n = pselect(fd + 1, &readable, NULL, NULL, NULL, &unblocked);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return EOF;
    sigset_t pending; /* input and Ctrl-C together: the Ctrl-C came first, so it wins */
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGINT)) return EOF;
    unsigned char c;
    ssize_t got = read(fd, &c, 1);
    if (got == 1) return c;
    if (got == 0 || errno != EINTR) return EOF;
  }
}

/* libedit's readline with SIGINT blocked but inside prompt_getc's wait. NULL at end of input, or
** with *interrupted set when Ctrl-C abandoned the line. */
static char *prompt_line(const char *prompt, int *interrupted) {
  *interrupted = 0;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigint_seen = 0;
  sigprocmask(SIG_BLOCK, &block, &old);
  char *line = readline(prompt);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (sigint_seen) {
    sigint_seen = 0;
    *interrupted = 1;
    free(line);
    fputc('\n', stdout);
    fflush(stdout);
    return NULL;
  }
  return line;
}

/* A malloc'd line without its newline; NULL at end of input. *interrupted says that Ctrl-C
** abandoned the line. */
static char *read_line(repl *r, int first, int *interrupted) {
  *interrupted = 0;
  if (!r->interactive) return read_plain_line();
  char prompt[128];
  return prompt_line(get_prompt(r->L, first, prompt, sizeof prompt), interrupted);
}

/* An answer to a question of :restart (on a terminal); NULL when Ctrl-C or Ctrl-D gave up. */
static char *read_answer(const char *question) {
  int interrupted;
  return prompt_line(question, &interrupted);
}

/* --- commands --------------------------------------------------------------------------------- */

static void print_help(void) {
  puts("The cujit REPL runs Lua 5.4 statements, with the cujit module available:\n"
       "    cuda = require \"cujit\"   (a `local` lasts for one statement only)\n"
       "An expression alone, or =expr, prints its value(s). An unfinished statement, such as a\n"
       "function or an unterminated [[ kernel string, continues on the next line (prompt >>).\n"
       "Tab completes names, fields after '.', methods after ':' and cuda.jit's options.\n"
       "Commands:\n"
       "  :help        this text\n"
       "  :help NAME   the reference of a cujit function or method (cuda.jit, k:ptx, arch...)\n"
       "  :time on     print each statement's wall time, and its device time measured with events\n"
       "               recorded on the current device's default stream before and after it\n"
       "  :time off    stop timing\n"
       "  :history     the statements of this session that ran without error, numbered\n"
       "  :save FILE   write them to FILE as a Lua script (cujit FILE runs it)\n"
       "  :restart     a new cujit process that replays them (after a fatal GPU fault); asks\n"
       "               which to drop, and before replaying any that write files\n"
       "  :quit        leave (as does Ctrl-D, or os.exit())\n"
       "Ctrl-C interrupts a running statement or a wait on the GPU and keeps the session; a\n"
       "statement still running after 0.5 s (usually a kernel compile) gets a note saying so.\n"
       "History is kept in $CUJIT_HISTORY, else ~/.cujit_history.");
}

static void timing_forget_events(repl *r) {
  cujit_event_free(r->ev_start);
  cujit_event_free(r->ev_end);
  r->ev_start = r->ev_end = NULL;
  r->event_device = NULL;
}

static void set_timing(repl *r, const char *arg) {
  if (strcmp(arg, "on") == 0)
    r->timing = 1;
  else if (strcmp(arg, "off") == 0)
    r->timing = 0;
  else if (*arg) {
    fprintf(stderr, CLI_NAME ": :time takes 'on' or 'off', not '%s'\n", arg);
    return;
  }
  printf("timing is %s\n", r->timing ? "on" : "off");
  cujit_device *dev;
  if (r->timing && cujit_current_device(r->engine, &dev) != CUJIT_OK) {
    const char *why = cujit_errmsg(r->engine);
    printf("(wall time only, no device to time with events: %.*s; the CPU device's time is shown "
           "too when it is current: CUJIT_DEVICE=cpu, or cuda.device(\"cpu\"))\n",
           (int)strcspn(why, "\n"), why);
  }
}

/* The rest of a command line after its word, without surrounding blanks, into arg: 0 when it
** does not fit in len bytes (cut short, a file name would name another file). */
static int command_argument(const char *line, char *arg, size_t len) {
  line += strspn(line, " \t");
  line += strcspn(line, " \t");
  line += strspn(line, " \t");
  size_t n = strlen(line);
  while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
  if (n >= len) return 0;
  snprintf(arg, len, "%.*s", (int)n, line);
  return 1;
}

/* A line ":word ..." (but not a Lua label "::name::"). Returns STMT_NONE or STMT_QUIT. */
static int run_command(repl *r, const char *line) {
  char word[32] = "", arg[1024] = "";
  sscanf(line + 1, "%31s", word);
  if (!command_argument(line + 1, arg, sizeof arg)) {
    fprintf(stderr, CLI_NAME ": :%s: its argument is longer than %zu bytes; nothing was done\n",
            word, sizeof arg - 1);
    return STMT_NONE;
  }
  if ((strcmp(word, "help") == 0 || strcmp(word, "h") == 0) && *arg)
    repl_help(arg);
  else if (strcmp(word, "help") == 0 || strcmp(word, "h") == 0)
    print_help();
  else if (strcmp(word, "history") == 0)
    repl_session_print(r->session, stdout);
  else if (strcmp(word, "save") == 0)
    repl_session_save(r->session, arg);
  else if (strcmp(word, "restart") == 0 && !r->interactive)
    cli_message(":restart needs a terminal: input read from a pipe could not follow into the new "
                "process");
  else if (strcmp(word, "restart") == 0)
    repl_session_restart(r->session, cli_argv(), read_answer);
  else if (strcmp(word, "time") == 0)
    set_timing(r, arg);
  else if (strcmp(word, "quit") == 0 || strcmp(word, "q") == 0)
    return STMT_QUIT;
  else
    fprintf(stderr, CLI_NAME ": unknown command ':%s'; :help lists the commands\n", word);
  fflush(stdout);
  return STMT_NONE;
}

static const char *command_of(const char *line) {
  while (*line == ' ' || *line == '\t') line++;
  return (line[0] == ':' && line[1] != ':') ? line : NULL;
}

/* --- assembling statements -------------------------------------------------------------------- */

/* A syntax error at <eof> means "go on reading", as in lua.c. */
static int incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return 0;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  static const char mark[] = "<eof>";
  return len >= sizeof mark - 1 && strcmp(msg + len - (sizeof mark - 1), mark) == 0;
}

/* Compiles "return <text>;" so that an expression typed alone prints its value. */
static int load_as_expression(lua_State *L, const char *text) {
  const char *code = lua_pushfstring(L, "return %s;", text);
  int status = luaL_loadbuffer(L, code, strlen(code), "=stdin");
  lua_remove(L, -2);
  if (status != LUA_OK) lua_pop(L, 1);
  return status;
}

/* Compiles what was typed: "=expr" as "return expr" (as Lua 5.1 had it), else as an expression
** if it is one, else as statements. *expression says which. */
static int load_typed(lua_State *L, const char *typed, int *expression) {
  *expression = 1;
  if (typed[0] == '=') {
    const char *code = lua_pushfstring(L, "return %s", typed + 1);
    int status = luaL_loadbuffer(L, code, strlen(code), "=stdin");
    lua_remove(L, -2);
    return status;
  }
  if (load_as_expression(L, typed) == LUA_OK) return LUA_OK;
  *expression = 0;
  return luaL_loadbuffer(L, typed, strlen(typed), "=stdin");
}

/* Appends "\n" and `more` to *text. */
static int append_line(char **text, const char *more) {
  size_t a = strlen(*text), b = strlen(more);
  char *t = realloc(*text, a + b + 2);
  if (!t) return 0;
  t[a] = '\n';
  memcpy(t + a + 1, more, b + 1);
  *text = t;
  return 1;
}

/* Reads continuation lines while `*typed` is incomplete. Returns the load status (chunk or
** message on the stack), or -1 when Ctrl-C abandoned the statement (nothing on the stack). */
static int complete_statement(repl *r, char **typed) {
  lua_State *L = r->L;
  int status, interrupted;
  while ((status = load_typed(L, *typed, &r->pending_expression)) != LUA_OK &&
         incomplete(L, status)) {
    char *more = read_line(r, 0, &interrupted);
    if (!more) {
      if (!interrupted) return status; /* end of input: report the unfinished statement */
      lua_pop(L, 1);
      return -1;
    }
    lua_pop(L, 1);
    int ok = append_line(typed, more);
    free(more);
    if (!ok) return luaL_error(L, "not enough memory");
  }
  return status;
}

/* Reads lines until they make a chunk (left on the stack: STMT_READY), a syntax error (message
** on the stack: STMT_ERROR), a command, an abandoned line (STMT_NONE) or the end (STMT_EOF). The
** whole statement becomes one history entry, as lua.c keeps it; an abandoned one none. */
static int read_statement(repl *r) {
  int interrupted;
  char *typed = read_line(r, 1, &interrupted);
  if (!typed) return interrupted ? STMT_NONE : STMT_EOF;
  if (typed[strspn(typed, " \t\r")] == '\0') { /* a blank line: no statement, kept nowhere */
    free(typed);
    return STMT_NONE;
  }
  const char *cmd = command_of(typed);
  int what = cmd ? run_command(r, cmd) : STMT_NONE;
  int abandoned = 0;
  if (!cmd) {
    int status = complete_statement(r, &typed);
    abandoned = status < 0;
    what = abandoned ? STMT_NONE : status == LUA_OK ? STMT_READY : STMT_ERROR;
  }
  if (!abandoned) history_add(r, typed);
  free(r->pending);
  r->pending = what == STMT_READY ? typed : NULL; /* kept in the session if it runs */
  if (!r->pending) free(typed);
  return what;
}

/* --- running statements ----------------------------------------------------------------------- */

/* Records the start event when timing and a usable GPU allow; 1 if it did. */
static int timing_begin(repl *r) {
  cujit_device *dev;
  if (!r->timing || cujit_current_device(r->engine, &dev) != CUJIT_OK ||
      cujit_device_status(dev) != CUJIT_OK)
    return 0;
  if (dev != r->event_device) {
    timing_forget_events(r);
    if (cujit_event_create(r->engine, &r->ev_start) != CUJIT_OK ||
        cujit_event_create(r->engine, &r->ev_end) != CUJIT_OK) {
      timing_forget_events(r);
      return 0;
    }
    r->event_device = dev;
  }
  if (cujit_event_record(r->ev_start, NULL) == CUJIT_OK) return 1;
  timing_forget_events(r); /* lost in a reset, say: made afresh next time */
  return 0;
}

static void timing_end(repl *r, int gpu, double wall) {
  if (!r->timing) return;
  float ms = 0;
  cujit_status st = CUJIT_OK;
  if (gpu) {
    in_gpu_wait = 1;
    st = cujit_event_record(r->ev_end, NULL);
    if (st == CUJIT_OK) st = cujit_event_synchronize(r->ev_end);
    if (st == CUJIT_OK) st = cujit_event_elapsed(r->ev_start, r->ev_end, &ms);
    in_gpu_wait = 0;
  }
  if (!gpu)
    fprintf(stderr, "time: wall %.3f ms\n", wall * 1e3);
  else if (st == CUJIT_OK)
    fprintf(stderr, "time: wall %.3f ms, %s %.3f ms\n", wall * 1e3,
            cujit_device_ordinal(r->event_device) == CUJIT_DEVICE_CPU ? "CPU device" : "GPU", ms);
  else {
    fprintf(stderr, "time: wall %.3f ms, %s time unavailable: %s\n", wall * 1e3,
            cujit_device_ordinal(r->event_device) == CUJIT_DEVICE_CPU ? "CPU device" : "GPU",
            cujit_errmsg(r->engine));
    timing_forget_events(r);
  }
}

static uint64_t compiles_so_far(cujit_engine *engine) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  return cujit_cache_stats_get(engine, &s) == CUJIT_OK ? s.misses : 0;
}

/* After a failed statement: when the GPU has faulted, says what :restart offers. Every error
** that a faulted device causes carries the engine's fault message ("device 0 faulted: ..."), so
** other errors are let go without asking the driver anything; the device state, or the
** message's own wording, confirms it. */
static void offer_restart(repl *r, const char *msg) {
  if (!msg || !strstr(msg, "faulted")) return;
  int faulted = strstr(msg, "refuses further work") || strstr(msg, "restart the program");
  int count = 0;
  if (!faulted && cujit_device_count(r->engine, &count) == CUJIT_OK)
    for (int i = 0; i < count && !faulted; i++) {
      cujit_device *dev;
      faulted = cujit_device_get(r->engine, i, &dev) == CUJIT_OK &&
                cujit_device_status(dev) == CUJIT_ERROR_DEVICE_FAULT;
    }
  if (!faulted) return;
  /* The CPU device's faults say so (cj_device_refuse); every other is a GPU's. */
  fprintf(stderr,
          CLI_NAME ": %s faulted. cuda.reset() may bring it back; when it cannot (the message "
                   "says to restart the program), ",
          strstr(msg, "the CPU device faulted") ? "the CPU device" : "the GPU");
  if (!r->interactive) { /* :restart needs a terminal: offering it here would be refused */
    fprintf(stderr, "run %s again (:restart, which replays a session, needs a terminal)\n",
            CLI_NAME);
    return;
  }
  size_t n = repl_session_count(r->session);
  fprintf(stderr,
          "type :restart for a new %s process that replays the %zu statement%s that ran without "
          "error (:history lists them; you choose which to drop)\n",
          CLI_NAME, n, n == 1 ? "" : "s");
}

static void run_statement(repl *r) {
  lua_State *L = r->L;
  int base = lua_gettop(L) - 1; /* below the chunk */
  uint64_t compiles = r->interactive ? compiles_so_far(r->engine) : 0;
  int gpu = timing_begin(r);
  double start = now_seconds();
  if (r->interactive) watchdog_arm(&r->dog, 1);
  int status = cli_docall(L, 0, LUA_MULTRET);
  if (r->interactive) watchdog_arm(&r->dog, 0);
  double wall = now_seconds() - start;
  install_repl_sigint();
  if (status == LUA_OK) {
    /* An expression that gave no value (print(1), a call that returns nothing) printed none: it
    ** is kept as the statement it is, since :save's print(...) around it would add a line. */
    int values = lua_gettop(L) > base;
    repl_print_values(L, base);
    if (r->pending) repl_session_add(r->session, r->pending, r->pending_expression && values);
  } else {
    char *msg = lua_tostring(L, -1) ? strdup(lua_tostring(L, -1)) : NULL;
    cli_report(L, status);
    offer_restart(r, msg);
    free(msg);
  }
  free(r->pending);
  r->pending = NULL;
  lua_settop(L, base);
  fflush(stdout);
  timing_end(r, gpu, wall);
  if (r->interactive && wall >= SLOW_SECONDS) {
    uint64_t n = compiles_so_far(r->engine) - compiles;
    if (n > 0)
      fprintf(stderr, CLI_NAME ": %llu program%s compiled during that %.1f s statement\n",
              (unsigned long long)n, n == 1 ? "" : "s", wall);
  }
}

/* After a :restart: runs the statements the old process handed over, printing what they print
** but not their values, and keeps those that run in this session's journal. */
static void replay(repl *r) {
  repl_replay *rp = repl_replay_open();
  if (!rp) return;
  lua_State *L = r->L;
  double start = now_seconds();
  size_t done = 0, failed = 0;
  for (const char *text; (text = repl_replay_next(rp)) != NULL;) {
    int expression;
    int status = load_typed(L, text, &expression);
    if (status == LUA_OK) status = cli_docall(L, 0, 0);
    install_repl_sigint();
    if (status == LUA_OK) {
      repl_session_add(r->session, text, expression);
      done++;
    } else {
      fprintf(stderr, CLI_NAME ": replaying statement %zu failed; it is dropped:\n",
              done + failed + 1);
      cli_report(L, status);
      failed++;
    }
  }
  repl_replay_close(rp);
  fflush(stdout);
  fprintf(stderr, CLI_NAME ": replayed %zu statement%s in %.1f ms%s\n", done, done == 1 ? "" : "s",
          (now_seconds() - start) * 1e3, failed ? " (some failed: see above)" : "");
}

void cli_repl(lua_State *L) {
  repl r = {.L = L, .engine = cli_engine(), .interactive = isatty(STDIN_FILENO)};
  r.session = repl_session_new();
  repl_engine = r.engine;
  if (r.interactive) {
    rl_readline_name = CLI_NAME;
    rl_getc_function = prompt_getc;
    rl_catch_signals = 0; /* Ctrl-C is ours; libedit would re-raise it to the process group */
    r.history_path = history_file();
    stifle_history(HISTORY_MAX);
    char *history = r.history_path ? history_target(r.history_path) : NULL;
    if (history && foreign_history(history)) {
      fprintf(stderr,
              CLI_NAME ": warning: %s is not a history cujit wrote (its first line is not "
                       "libedit's mark); it is left as it is and this session keeps no history: "
                       "set CUJIT_HISTORY to another file, or to \"\" for none\n",
              r.history_path);
      free(r.history_path);
      r.history_path = NULL;
    } else if (history) {
      read_history(history);
    }
    free(history);
    repl_complete_install(L);
    puts("cuda = require \"cujit\" to start; :help lists what the REPL adds to Lua");
    watchdog_start(&r.dog);
  }
  struct sigaction old;
  sigaction(SIGINT, NULL, &old);
  install_repl_sigint();
  replay(&r);
  for (;;) {
    int what = read_statement(&r);
    if (what == STMT_EOF || what == STMT_QUIT) break;
    if (what == STMT_READY)
      run_statement(&r);
    else if (what == STMT_ERROR)
      cli_report(L, LUA_ERRSYNTAX);
  }
  if (r.interactive) {
    fputc('\n', stdout);
    watchdog_stop(&r.dog);
  }
  fflush(stdout);
  sigaction(SIGINT, &old, NULL);
  timing_forget_events(&r);
  free(r.history_path);
  free(r.pending);
  repl_session_free(r.session);
  repl_engine = NULL;
}
