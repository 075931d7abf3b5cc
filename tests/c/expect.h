/*
** expect.h -- the checks C tests make on every call: it succeeded (else stop, with the engine's
** message), or it failed with a given status and a message holding a given part, or exactly a
** given message. All read the file's `engine`.
*/
#ifndef CUJIT_TEST_EXPECT_H
#define CUJIT_TEST_EXPECT_H

#include <criterion/criterion.h>
#include <string.h>

#include "cujit.h"

/* The last failure was `status` and its message holds `part`. */
#define EXPECT_FAIL(call, status, part)                                                            \
  do {                                                                                             \
    cujit_status st_ = (call);                                                                     \
    cr_expect_eq(st_, (status), "%s gave %s (%s), wanted %s", #call, cujit_status_string(st_),     \
                 cujit_errmsg(engine), cujit_status_string(status));                               \
    cr_expect(strstr(cujit_errmsg(engine), (part)) != NULL, "%s: message \"%s\" lacks \"%s\"",     \
              #call, cujit_errmsg(engine), (part));                                                \
  } while (0)

/* The call fails with `status` and exactly `message`. */
#define EXPECT_REFUSED(call, status, message)                                                      \
  do {                                                                                             \
    cujit_status st_ = (call);                                                                     \
    cr_expect_eq(st_, (status), "%s gave %s (%s)", #call, cujit_status_string(st_),                \
                 cujit_errmsg(engine));                                                            \
    cr_expect_str_eq(cujit_errmsg(engine), (message), "%s said \"%s\", not \"%s\"", #call,         \
                     cujit_errmsg(engine), (message));                                             \
  } while (0)

#define EXPECT_OK(call)                                                                            \
  do {                                                                                             \
    cujit_status st_ = (call);                                                                     \
    cr_assert_eq(st_, CUJIT_OK, "%s failed: %s", #call, cujit_errmsg(engine));                     \
  } while (0)

#endif
