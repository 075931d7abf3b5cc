/*
** gcov_exec.c -- linked into the coverage build only (scripts/mutate/coverage.sh links every
** executable with -Wl,--wrap=execv and this object). A process that replaces itself through execv
** (the REPL's :restart, the command starting itself again) would otherwise lose the counters of
** everything it ran before: gcov writes them at exit, and exec is no exit. So the map would call
** that code executed by no test, and its mutants "not covered". The counters are written first.
*/
extern void __gcov_dump(void);
extern void __gcov_reset(void);
extern int __real_execv(const char *path, char *const argv[]);

int __wrap_execv(const char *path, char *const argv[]);

int __wrap_execv(const char *path, char *const argv[]) {
  __gcov_dump();
  int rc = __real_execv(path, argv);
  __gcov_reset(); /* exec failed and the process goes on: count from here, as gcc's own wrapper */
  return rc;
}
