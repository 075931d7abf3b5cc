/*
** test_nccl_lib.c -- the NCCL cujit opens (engine/core/collective/nccl_lib.c), through a stand-in
** (nccl_standin.c: CUJIT_NCCL names it): its version read, 2.10 (21000) the oldest taken and one
** below it refused with the version it has and what to install; a library lacking an entry point
** refused, naming it; a path that is no library refused, naming it. NCCL is opened once a process,
** and Criterion runs each test in a process of its own. No GPU, no NCCL.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"

static cujit_engine *engine;

static void open_with(const char *library, const char *version) {
  setenv("CUJIT_NCCL", library, 1);
  if (version)
    setenv("CJ_TEST_NCCL_VERSION", version, 1);
  else
    unsetenv("CJ_TEST_NCCL_VERSION");
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void close_engine(void) {
  cujit_close(engine);
  unsetenv("CUJIT_NCCL");
  unsetenv("CJ_TEST_NCCL_VERSION");
}

TestSuite(nccl_lib, .fini = close_engine);

Test(nccl_lib, its_version_is_read) {
  open_with(CJ_TEST_NCCL_STANDIN, "22703");
  int v = -1;
  cr_assert_eq(cujit_nccl_version(engine, &v), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(v, 22703);
}

Test(nccl_lib, version_2_10_is_the_oldest_taken) {
  open_with(CJ_TEST_NCCL_STANDIN, "21000");
  int v = -1;
  cr_assert_eq(cujit_nccl_version(engine, &v), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(v, 21000);
}

Test(nccl_lib, an_older_version_is_refused_saying_what_to_install) {
  open_with(CJ_TEST_NCCL_STANDIN, "20999");
  int v = -1;
  cr_assert_eq(cujit_nccl_version(engine, &v), CUJIT_ERROR_UNSUPPORTED);
  cr_assert_eq(v, 0, "the version is 0 when refused");
  const char *m = cujit_errmsg(engine);
  cr_assert(strstr(m, "cujit_nccl_version: NCCL at ") && strstr(m, CJ_TEST_NCCL_STANDIN), "%s", m);
  cr_assert(strstr(m, "is version 20999, older than cujit needs (2.10, for the avg reduction)"),
            "%s", m);
  cr_assert(strstr(m, "install NCCL 2.x"), "%s", m);
  /* refused again, the same way, without opening it again */
  cr_assert_eq(cujit_nccl_version(engine, &v), CUJIT_ERROR_UNSUPPORTED);
  cr_assert(strstr(cujit_errmsg(engine), "is version 20999"), "%s", cujit_errmsg(engine));
}

Test(nccl_lib, a_library_lacking_an_entry_point_is_refused_naming_it) {
  open_with(CJ_TEST_NCCL_STANDIN_OLD, "22703");
  int v = -1;
  cr_assert_eq(cujit_nccl_version(engine, &v), CUJIT_ERROR_UNSUPPORTED);
  const char *m = cujit_errmsg(engine);
  cr_assert(strstr(m, "lacks ncclReduceScatter: it is older than cujit needs (NCCL 2.10 or newer)"),
            "%s", m);
}

Test(nccl_lib, a_path_that_is_no_library_is_refused_naming_it) {
  open_with("/nonexistent/libnccl.so.2", NULL);
  int v = -1;
  cr_assert_eq(cujit_nccl_version(engine, &v), CUJIT_ERROR_UNSUPPORTED);
  const char *m = cujit_errmsg(engine);
  cr_assert(strstr(m, "CUJIT_NCCL=/nonexistent/libnccl.so.2"), "%s", m);
}
