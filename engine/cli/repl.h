/*
** repl.h -- what the parts of the REPL share: the loop (repl.c) calls the value printer
** (repl_print.c), tab completion (repl_complete.c), the :help reference (repl_help.c) and the
** session journal with :history, :save and :restart (repl_session.c). Private to the command.
*/
#ifndef CUJIT_REPL_H
#define CUJIT_REPL_H

#include "cli.h"

/* Prints the values above stack index `base` on one line, tab-separated as lua.c does: strings
** as they are, tables as nested readable values (depth and length limited), small device arrays
** with their first elements. Leaves the stack at `base`. */
void repl_print_values(lua_State *L, int base);

/* Makes libedit's Tab complete globals, fields after '.', methods after ':' (cujit's objects
** included, read from their metatables) and option names inside a cuda.jit/source/load options
** table, all looked up in L at the time Tab is pressed. */
void repl_complete_install(lua_State *L);

/* `:help NAME`: prints the short reference of a cujit function or method, taken from the text of
** docs/lua.md built into the command; NAME may be cuda.jit, jit, k:ptx, ptx, ... Returns 0 when
** nothing matched (after saying so). */
int repl_help(const char *name);

/* --- the session journal (repl_session.c) ------------------------------------------------------
 */

typedef struct repl_session repl_session;

/* The statements that ran without error, in order, for :history, :save and :restart. */
repl_session *repl_session_new(void);
void repl_session_free(repl_session *s);
/* Keeps a statement that ran without error; `as_expression` says that it was loaded as an
** expression (its values were printed), so :save writes it as print(...). */
void repl_session_add(repl_session *s, const char *text, int as_expression);
size_t repl_session_count(const repl_session *s);

/* `:history`: the numbered statements. */
void repl_session_print(const repl_session *s, FILE *out);
/* `:save FILE`: the statements as a Lua script that runs with `cujit FILE`. */
void repl_session_save(const repl_session *s, const char *path);

/* Asks the questions of `:restart`, read through read_answer (which returns a malloc'd line, or
** NULL when the user gave up): statements to drop, and whether to replay those that look like
** they write files. Then re-executes this command (/proc/self/exe, argv) with the statements
** kept in a replay file named by CUJIT_REPL_REPLAY. Returns only when the restart did not
** happen, after saying why. */
void repl_session_restart(const repl_session *s, char **argv, char *(*read_answer)(const char *));

/* At start-up: when CUJIT_REPL_REPLAY names a replay file, takes it (the file is removed and the
** variable unset) and returns its statements one by one through *next; NULL when there is none.
** The returned reader is freed by repl_replay_close. */
typedef struct repl_replay repl_replay;
repl_replay *repl_replay_open(void);
/* The next statement (owned by the reader), or NULL at the end. */
const char *repl_replay_next(repl_replay *rp);
void repl_replay_close(repl_replay *rp);

/* 1 when the text looks like it writes or removes files: io.open with a "w"/"a"/"+" mode,
** io.output, os.remove, os.rename, os.execute, a :save(...) call. */
int repl_writes_files(const char *text);

#endif
