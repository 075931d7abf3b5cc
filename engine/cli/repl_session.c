/*
** repl_session.c -- the REPL's memory of a session: the statements that ran without error, in
** order; `:history` lists them, `:save FILE` writes them as a Lua script, and `:restart`
** re-executes the command (after a fatal GPU fault, say) and hands them over in a replay file,
** having asked which to drop and whether to replay those that look like they write files. The
** new process finds the file through CUJIT_REPL_REPLAY and the REPL replays it before its first
** prompt; kernel definitions then come from the disk cache.
*/
#include "repl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REPLAY_ENV "CUJIT_REPL_REPLAY"
#define REPLAY_MAGIC "cujit-replay 1\n"

typedef struct statement {
  char *text;
  int as_expression;
} statement;

struct repl_session {
  statement *items;
  size_t n, cap;
};

repl_session *repl_session_new(void) {
  return calloc(1, sizeof(repl_session));
}

void repl_session_free(repl_session *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) free(s->items[i].text);
  free(s->items);
  free(s);
}

void repl_session_add(repl_session *s, const char *text, int as_expression) {
  if (!s || !*text) return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 32;
    statement *items = realloc(s->items, cap * sizeof *items);
    if (!items) {
      cli_message("not enough memory to remember the statement for :history and :restart");
      return;
    }
    s->items = items;
    s->cap = cap;
  }
  char *copy = strdup(text);
  if (!copy) return;
  s->items[s->n++] = (statement){copy, as_expression};
}

size_t repl_session_count(const repl_session *s) {
  return s ? s->n : 0;
}

/* --- statements that write files ----------------------------------------------------------------
 */

/* Whether the literal at p follows a comma (blanks between): an argument after the first. */
static int after_comma(const char *text, const char *p) {
  while (p > text && (p[-1] == ' ' || p[-1] == '\t')) p--;
  return p > text && p[-1] == ',';
}

/* A short string literal such as "w", 'ab' or "r+" after a comma: an io.open mode that writes
** (a file named "raw" or "a", the first argument, is not one). */
static int has_writing_mode(const char *text) {
  for (const char *p = text; *p; p++) {
    if (*p != '"' && *p != '\'') continue;
    const char *q = p + 1;
    while (*q && strchr("rwab+", *q)) q++;
    if (*q == *p && q - p - 1 >= 1 && q - p - 1 <= 3 && after_comma(text, p))
      for (const char *m = p + 1; m < q; m++)
        if (*m == 'w' || *m == 'a' || *m == '+') return 1;
    for (q = p + 1; *q && *q != *p; q += (*q == '\\' && q[1]) ? 2 : 1) {
    }
    if (!*q) return 0;
    p = q;
  }
  return 0;
}

int repl_writes_files(const char *text) {
  static const char *const writers[] = {"os.remove", "os.rename", "os.execute", ":save(", NULL};
  for (int i = 0; writers[i]; i++)
    if (strstr(text, writers[i])) return 1;
  const char *out = strstr(text, "io.output(");
  if (out && out[strlen("io.output(")] != ')') return 1;
  return strstr(text, "io.open") && has_writing_mode(text);
}

/* --- :history and :save --------------------------------------------------------------------------
 */

/* One statement, its continuation lines indented under its first. */
static void print_statement(FILE *out, size_t number, const char *text, const char *note) {
  fprintf(out, "%4zu  ", number);
  for (const char *p = text; *p; p++) {
    fputc(*p, out);
    if (*p == '\n') fputs("      ", out);
  }
  fprintf(out, "%s\n", note);
}

void repl_session_print(const repl_session *s, FILE *out) {
  if (!s || s->n == 0) {
    fputs("no statements yet (only those that ran without error are kept)\n", out);
    return;
  }
  for (size_t i = 0; i < s->n; i++)
    print_statement(out, i + 1, s->items[i].text,
                    repl_writes_files(s->items[i].text) ? "   [writes files]" : "");
  fflush(out);
}

void repl_session_save(const repl_session *s, const char *path) {
  if (!*path) {
    cli_message(":save needs a file name: :save session.lua");
    return;
  }
  /* Made whole in memory, then written by cujit_file_write: a failure (a full disk) leaves an
  ** existing file as it was, and /dev/stdout or a FIFO is written in place, never replaced. */
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) {
    cli_message("not enough memory to save the session");
    return;
  }
  time_t now = time(NULL);
  char when[64] = "";
  strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&now));
  fprintf(f,
          "-- A cujit REPL session, saved by :save on %s: the statements that ran without\n"
          "-- error, in order (values the REPL printed are print(...) calls). Run it with\n"
          "--   cujit %s\n",
          when, path);
  size_t n = s ? s->n : 0;
  for (size_t i = 0; i < n; i++) {
    const statement *st = &s->items[i];
    const char *body = st->text[0] == '=' ? st->text + 1 : st->text;
    if (st->as_expression) /* a "--" may open a comment that would swallow the ")" */
      fprintf(f, "print(%s%s)\n", body, strstr(body, "--") ? "\n" : "");
    else
      fprintf(f, "%s\n", body);
  }
  int failed = ferror(f);
  if (fclose(f) != 0 || failed) {
    free(text);
    cli_message("not enough memory to save the session");
    return;
  }
  cujit_engine *e = cli_engine();
  if (cujit_file_write(e, path, text, len) != CUJIT_OK)
    fprintf(stderr, CLI_NAME ": :save: %s\n", e ? cujit_errmsg(e) : "cannot write the file");
  else
    printf("saved %zu statement%s to %s\n", n, n == 1 ? "" : "s", path);
  free(text);
}

/* --- :restart ------------------------------------------------------------------------------------
 */

/* Marks in drop[] the statements named by an answer such as "2 5-7"; 0 on a bad answer. */
static int parse_drops(const char *answer, size_t n, char *drop) {
  const char *p = answer;
  for (;;) {
    while (*p == ' ' || *p == ',' || *p == '\t') p++;
    if (!*p) return 1;
    char *end;
    unsigned long first = strtoul(p, &end, 10), last = first;
    if (end == p) return 0;
    p = end;
    if (*p == '-') {
      last = strtoul(p + 1, &end, 10);
      if (end == p + 1) return 0;
      p = end;
    }
    if (first < 1 || last < first || last > n) return 0;
    for (unsigned long i = first; i <= last; i++) drop[i - 1] = 1;
  }
}

/* Writes the kept statements to a new replay file; returns its malloc'd path, or NULL. */
static char *write_replay(const repl_session *s, const char *drop) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  size_t len = strlen(dir) + sizeof "/cujit-replay-XXXXXX";
  char *path = malloc(len);
  if (!path) return NULL;
  snprintf(path, len, "%s/cujit-replay-XXXXXX", dir);
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    fprintf(stderr, CLI_NAME ": cannot write a replay file in %s (%s)\n", dir, strerror(errno));
    if (fd >= 0) close(fd), unlink(path);
    free(path);
    return NULL;
  }
  fputs(REPLAY_MAGIC, f);
  for (size_t i = 0; i < s->n; i++)
    if (!drop[i]) fprintf(f, "%zu\n%s\n", strlen(s->items[i].text), s->items[i].text);
  if (fclose(f) != 0) {
    fprintf(stderr, CLI_NAME ": writing the replay file %s failed\n", path);
    unlink(path);
    free(path);
    return NULL;
  }
  return path;
}

/* Asks which statements to drop, then about each kept one that writes files. 0: cancelled. */
static int choose(const repl_session *s, char *drop, char *(*read_answer)(const char *)) {
  printf(":restart starts a new cujit process (same arguments) and replays these statements:\n");
  repl_session_print(s, stdout);
  for (;;) {
    char *answer = read_answer("drop which? (numbers or ranges, e.g. 2 5-7; Enter: none) ");
    if (!answer) return 0;
    memset(drop, 0, s->n);
    int ok = parse_drops(answer, s->n, drop);
    free(answer);
    if (ok) break;
    printf("give numbers from 1 to %zu, or ranges such as 2-4, separated by spaces\n", s->n);
  }
  for (size_t i = 0; i < s->n; i++) {
    if (drop[i] || !repl_writes_files(s->items[i].text)) continue;
    char question[96];
    snprintf(question, sizeof question, "replay #%zu, which looks like it writes files? [y/N] ",
             i + 1);
    char *answer = read_answer(question);
    if (!answer) return 0;
    drop[i] = !(answer[0] == 'y' || answer[0] == 'Y');
    free(answer);
  }
  return 1;
}

void repl_session_restart(const repl_session *s, char **argv, char *(*read_answer)(const char *)) {
  static const repl_session none = {NULL, 0, 0};
  if (!s) s = &none;
  char *drop = calloc(s->n ? s->n : 1, 1);
  if (!drop) {
    cli_message("not enough memory to restart");
    return;
  }
  if (s->n > 0 && !choose(s, drop, read_answer)) {
    puts("restart cancelled; the session goes on");
    free(drop);
    return;
  }
  size_t kept = 0;
  for (size_t i = 0; i < s->n; i++) kept += !drop[i];
  char *path = write_replay(s, drop);
  free(drop);
  if (!path) return;
  printf("restarting: a new %s replays %zu statement%s\n", CLI_NAME, kept, kept == 1 ? "" : "s");
  fflush(stdout);
  fflush(stderr);
  setenv(REPLAY_ENV, path, 1);
  sigset_t none_blocked;
  sigemptyset(&none_blocked);
  sigprocmask(SIG_SETMASK, &none_blocked, NULL); /* exec keeps the mask: start unblocked */
  execv("/proc/self/exe", argv);
  fprintf(stderr, CLI_NAME ": cannot restart: executing /proc/self/exe failed (%s)\n",
          strerror(errno));
  unsetenv(REPLAY_ENV);
  unlink(path);
  free(path);
}

/* --- the replay, in the new process -------------------------------------------------------------
 */

struct repl_replay {
  char *data;
  size_t len, pos;
  char *current;
};

repl_replay *repl_replay_open(void) {
  const char *env = getenv(REPLAY_ENV);
  if (!env || !*env) return NULL;
  char *path = strdup(env);
  unsetenv(REPLAY_ENV); /* not for the programs this session starts */
  if (!path) return NULL;
  /* Only a replay file :restart made is read and removed: a regular file of this user, not
  ** reached through a link, named as write_replay names it, starting with the magic line. Any
  ** other path in the variable is left exactly as it is. */
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  int fd = strncmp(base, "cujit-replay-", 13) == 0
               ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
               : -1;
  struct stat info;
  if (fd >= 0 && (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid())) {
    close(fd);
    fd = -1;
  }
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (fd >= 0 && !f) close(fd);
  repl_replay *rp = calloc(1, sizeof *rp);
  size_t cap = 0;
  if (f && rp) {
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
      if (rp->len + got + 1 > cap) {
        cap = 2 * (rp->len + got + 1);
        char *data = realloc(rp->data, cap);
        if (!data) break;
        rp->data = data;
      }
      memcpy(rp->data + rp->len, chunk, got);
      rp->len += got;
    }
  }
  if (f) fclose(f);
  if (!rp || !rp->data || rp->len < strlen(REPLAY_MAGIC) ||
      memcmp(rp->data, REPLAY_MAGIC, strlen(REPLAY_MAGIC)) != 0) {
    fprintf(stderr,
            CLI_NAME ": %s is not a replay file that :restart wrote; nothing replayed (the file "
                     "was left as it was)\n",
            path);
    free(path);
    repl_replay_close(rp);
    return NULL;
  }
  unlink(path); /* read whole: the file has done its work */
  free(path);
  rp->data[rp->len] = '\0';
  rp->pos = strlen(REPLAY_MAGIC);
  return rp;
}

const char *repl_replay_next(repl_replay *rp) {
  free(rp->current);
  rp->current = NULL;
  if (rp->pos >= rp->len) return NULL;
  /* A record as write_replay writes it: digits, a newline, that many bytes, a newline. Anything
  ** else (a length with spaces or a sign, one that runs past the end or stops short of the
  ** newline) means the file was changed: what follows is not read as statements. */
  char *end = rp->data + rp->pos;
  unsigned long long n = isdigit((unsigned char)*end) ? strtoull(end, &end, 10) : 0;
  size_t start = (size_t)(end + 1 - rp->data);
  if (end == rp->data + rp->pos || *end != '\n' || n >= rp->len - start ||
      rp->data[start + n] != '\n') {
    cli_message("the replay file is damaged; the rest of it is not replayed");
    rp->pos = rp->len;
    return NULL;
  }
  rp->current = strndup(end + 1, (size_t)n);
  rp->pos = start + (size_t)n + 1;
  return rp->current;
}

void repl_replay_close(repl_replay *rp) {
  if (!rp) return;
  free(rp->current);
  free(rp->data);
  free(rp);
}
