/*
** test_cxx_log.c -- the CPU device's compiler log read to its last byte and no further (cxx.c):
** an error inside cujit's own headers is placed at the user's line named by the log's last
** "required from here", also when that line ends the log without a newline, in a log that fills
** its buffer exactly (256 bytes with the terminating NUL), so that a read past the end is a
** heap overflow the sanitizer build reports. The compiler is a script standing in for g++
** (CUJIT_CXX) that prints the log it is given for the translation unit. Needs g++: runs on CI.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/cxx.h"
#include "compile/scan.h"
#include "cujit.h"
#include "expect.h"
#include "scratch.h"

static cujit_engine *engine;

static void setup(void) {
  const char *dir = cj_scratch_make("cxx-log");
  char cache[600];
  cr_assert_lt(snprintf(cache, sizeof cache, "%s/cache", dir), (int)sizeof cache);
  setenv("CUJIT_CACHE_DIR", cache, 1);
  setenv("CUJIT_PCH", "off", 1); /* the stand-in answers the unit only: no prelude to make */
  unsetenv("CUJIT_CPU_CHECK");
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void teardown(void) {
  unsetenv("CUJIT_CXX");
  cujit_close(engine);
  engine = NULL;
  cj_scratch_remove();
}

TestSuite(cxx_log, .init = setup, .fini = teardown, .timeout = 120);

static const char source[] = "extern \"C\" __global__ void quiet(float *x) {\n"
                             "  x[0] = 1.0f; }\n";

/* Compiles `source` with a stand-in g++ that fails the translation unit printing exactly `log`
** (real g++ for everything else); the compile must fail and its message is returned (the
** engine's, valid until its next call). */
static const char *fail_with_log(const char *log) {
  cj_scratch_write("log.txt", log);
  char script[1400];
  snprintf(script, sizeof script,
           "#!/bin/sh\ncase \"$*\" in *.cpp*) cat '%s' >&2; exit 1 ;; esac\nexec g++ \"$@\"\n",
           cj_scratch_path("log.txt"));
  cj_scratch_write("fake-g++", script);
  const char *fake = cj_scratch_path("fake-g++");
  cr_assert_eq(chmod(fake, 0755), 0, "%s", fake);
  setenv("CUJIT_CXX", fake, 1);
  cj_signature *sig = NULL;
  size_t n = 0;
  char err[256];
  cr_assert_eq(cj_scan_kernels(source, &sig, &n, err, sizeof err), CUJIT_OK, "%s", err);
  cj_cache_entry e = {0};
  cujit_status st = cj_cxx_compile(engine, source, "quiet.cu", NULL, sig, NULL, n, &e);
  cr_expect_eq(st, CUJIT_ERROR_COMPILE, "%s", cujit_errmsg(engine));
  cr_expect_null(e.cubin, "no object from a failed compile");
  for (size_t i = 0; i < n; i++) cj_signature_free(&sig[i]);
  free(sig);
  unsetenv("CUJIT_CXX");
  return cujit_errmsg(engine);
}

/* A log of exactly 255 bytes: an error in a cujit header, then `site` (the user's line),
** followed by a newline or not. */
static void log_of_255(char *log, const char *site, int newline) {
  const char *head = "In file included from tu.cpp:1:\n"
                     "/scratch/include/cujit/fake.h:10:5: error: static assertion failed: "
                     "no such thing on the CPU device";
  size_t fixed = strlen(head) + 1 + strlen(site) + (newline ? 1 : 0);
  cr_assert_lt(fixed, 255);
  size_t pad = 255 - fixed;
  snprintf(log, 256, "%s%*s\n%s%s", head, (int)pad, "", site, newline ? "\n" : "");
  cr_assert_eq(strlen(log), 255);
}

Test(cxx_log, a_last_line_without_newline_names_the_users_line) {
  char log[256];
  log_of_255(log, "quiet.cu:2:7:   required from here", 0);
  const char *msg = fail_with_log(log);
  cr_expect(strstr(msg, "'quiet.cu' failed to compile: quiet.cu:2: error: static assertion failed: "
                        "no such thing on the CPU device"),
            "placed at the user's line 2, the one the log's last line names: %s", msg);
}

Test(cxx_log, the_same_with_a_newline_and_the_last_site_wins) {
  char log[256];
  log_of_255(log, "quiet.cu:1:7:   required from here\nquiet.cu:2:3:   required from here", 1);
  const char *msg = fail_with_log(log);
  cr_expect(strstr(msg, "'quiet.cu' failed to compile: quiet.cu:2: error: static assertion"),
            "the last site of several is the user's line: %s", msg);
}
