/*
** test_backend_scope.c -- the caller's context kept across public calls (backend.h:
** cj_backend_scope_open/close, cj_backend_switched) by its own rules, without a driver: only the
** outermost scope's close restores, and once; only the first switch of a scope is kept (it is the
** caller's); a NULL context replaced is not restored; outside any scope a switch keeps nothing;
** each thread has its own scopes. (Seed 29's backend.c:50, a scope's open counting down, passed
** every test that goes through the driver: only nested scopes and switches outside one tell.)
*/
#include <criterion/criterion.h>
#include <pthread.h>

#include "backend/backend.h"

static int restores;
static void *restored_user, *restored_prior;

static void restore(void *user, void *prior) {
  restores++;
  restored_user = user, restored_prior = prior;
}

static int a, b, c; /* three "contexts" and a "driver" */

Test(backend_scope, only_the_outermost_close_restores_the_first_switch) {
  restores = 0;
  cj_backend_scope_open();
  cj_backend_scope_open(); /* a public call inside another */
  cj_backend_switched(restore, &c, &a);
  cj_backend_switched(restore, &c, &b); /* a second device entered: a is still the caller's */
  cj_backend_scope_close();
  cr_expect_eq(restores, 0, "the inner scope's close restored");
  cj_backend_scope_close();
  cr_expect_eq(restores, 1, "the outermost close restores once");
  cr_expect_eq(restored_prior, &a, "the caller's context, the first one replaced");
  cr_expect_eq(restored_user, &c);
  cj_backend_scope_open(); /* the next call starts afresh */
  cj_backend_scope_close();
  cr_expect_eq(restores, 1, "a scope without a switch restores nothing");
}

Test(backend_scope, a_null_context_and_a_switch_outside_any_scope_keep_nothing) {
  restores = 0;
  cj_backend_scope_open();
  cj_backend_switched(restore, &c, NULL); /* none was current: the backend's stays */
  cj_backend_scope_close();
  cr_expect_eq(restores, 0, "a NULL context was restored");
  cj_backend_switched(restore, &c, &a); /* outside any scope */
  cj_backend_scope_open();
  cj_backend_scope_close();
  cr_expect_eq(restores, 0, "a switch outside any scope was kept and restored later");
  for (int i = 0; i < 3; i++) { /* balanced scopes leave the count where it was */
    cj_backend_scope_open();
    cj_backend_scope_close();
  }
  cj_backend_switched(restore, &c, &b);
  cj_backend_scope_open();
  cj_backend_scope_close();
  cr_expect_eq(restores, 0, "after balanced scopes, a switch outside them was kept");
}

static void *switch_in_a_scope(void *arg) {
  (void)arg;
  cj_backend_scope_open();
  cj_backend_switched(restore, &c, &b);
  cj_backend_scope_close();
  return NULL;
}

Test(backend_scope, each_thread_has_its_own_scopes) {
  restores = 0;
  cj_backend_scope_open(); /* this thread's scope stays open while another runs its own */
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, switch_in_a_scope, NULL), 0);
  pthread_join(t, NULL);
  cr_expect_eq(restores, 1, "the other thread's outermost close restored its own switch");
  cr_expect_eq(restored_prior, &b);
  cj_backend_switched(restore, &c, &a);
  cj_backend_scope_close();
  cr_expect_eq(restores, 2);
  cr_expect_eq(restored_prior, &a, "this thread's own switch");
}
