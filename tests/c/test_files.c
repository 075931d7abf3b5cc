/*
** test_files.c -- cujit_file_write from C: its refusals (no path, NULL data, a directory, a
** socket), that a replaced file keeps its mode and a link its target, that a file with other hard
** links is written in place, that a new name is made 0666 less the umask, that a failed write
** leaves the old file and no temporary file (a dangling link stays dangling), that each failure
** gives its true reason (a mode that cannot be set on the new file among them: fchmod made to fail
** through the link's --wrap), and that SIGXFSZ does not end the process. The
** front ends (compile -o, image.write, :save, history) are in tests/sh/test_output_files.sh.
*/
#include "scratch.h"

#include <criterion/criterion.h>
#include <cujit.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static cujit_engine *engine;
static const char *dir;

/* fchmod, failing with fchmod_errno while it is not 0 (tests/CMakeLists.txt: --wrap=fchmod). */
int __real_fchmod(int fd, mode_t mode);
int __wrap_fchmod(int fd, mode_t mode);
static int fchmod_errno;
int __wrap_fchmod(int fd, mode_t mode) {
  if (fchmod_errno) return errno = fchmod_errno, -1;
  return __real_fchmod(fd, mode);
}
static char path[600];

static void setup(void) {
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  dir = cj_scratch_make("files");
}

static void teardown(void) {
  cujit_close(engine);
  cj_scratch_remove();
}

TestSuite(files, .init = setup, .fini = teardown);

static const char *at(const char *name) {
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

static void put(const char *name, const char *text) {
  FILE *f = fopen(at(name), "w");
  cr_assert(f);
  fputs(text, f);
  fclose(f);
}

static char *slurp(const char *name) {
  static char text[4096];
  FILE *f = fopen(at(name), "r");
  cr_assert(f, "cannot read %s", name);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

/* Entries in the scratch directory whose name holds "cujit-": our temporary files. */
static int temporaries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) n += strstr(de->d_name, "cujit-") != NULL;
  closedir(d);
  return n;
}

Test(files, refusals_say_what_was_wrong) {
  cr_assert_eq(cujit_file_write(engine, NULL, "x", 1), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "no file name"), "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_file_write(engine, "", "x", 1), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_file_write(engine, at("n"), NULL, 3), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "NULL for 3 bytes"), "%s", cujit_errmsg(engine));
  cr_assert_eq(access(at("n"), F_OK), -1, "nothing made by a refused call");
  cr_assert_eq(cujit_file_write(NULL, at("n"), "x", 1), CUJIT_OK, "engine may be NULL");
  cr_assert_eq(cujit_file_write(NULL, "", "x", 1), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_file_write(engine, at("empty"), NULL, 0), CUJIT_OK, "0 bytes need no data");
  struct stat st;
  cr_assert_eq(stat(at("empty"), &st), 0);
  cr_assert_eq(st.st_size, 0);
}

Test(files, a_directory_and_a_socket_are_refused_and_stay) {
  cr_assert_eq(mkdir(at("d"), 0700), 0);
  cr_assert_eq(cujit_file_write(engine, at("d"), "x", 1), CUJIT_ERROR_IO);
  cr_assert(strstr(cujit_errmsg(engine), "is a directory; cujit writes only to a file"), "%s",
            cujit_errmsg(engine));
  struct stat st;
  cr_assert(stat(at("d"), &st) == 0 && S_ISDIR(st.st_mode));
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  const char *sock = at("sock");
  cr_assert_lt(strlen(sock), sizeof addr.sun_path, "the scratch path is too long for a socket");
  memcpy(addr.sun_path, sock, strlen(sock) + 1);
  cr_assert_eq(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
  cr_assert_eq(cujit_file_write(engine, at("sock"), "x", 1), CUJIT_ERROR_IO);
  cr_assert(strstr(cujit_errmsg(engine), "is a socket"), "%s", cujit_errmsg(engine));
  cr_assert(lstat(at("sock"), &st) == 0 && S_ISSOCK(st.st_mode), "the socket stays");
  close(s);
}

Test(files, a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask) {
  put("f", "old");
  cr_assert_eq(chmod(at("f"), 0604), 0);
  cr_assert_eq(cujit_file_write(engine, at("f"), "new", 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_str_eq(slurp("f"), "new");
  struct stat st;
  cr_assert_eq(stat(at("f"), &st), 0);
  cr_assert_eq(st.st_mode & 07777, 0604);
  mode_t old = umask(077);
  cr_assert_eq(cujit_file_write(engine, at("g"), "x", 1), CUJIT_OK);
  umask(old);
  cr_assert_eq(stat(at("g"), &st), 0);
  cr_assert_eq(st.st_mode & 07777, 0600);
  cr_assert_eq(temporaries(), 0);
}

Test(files, a_link_keeps_its_target_and_hard_links_stay_shared) {
  put("target", "old");
  cr_assert_eq(symlink("target", at("link")), 0);
  cr_assert_eq(cujit_file_write(engine, at("link"), "through", 7), CUJIT_OK);
  struct stat st;
  cr_assert(lstat(at("link"), &st) == 0 && S_ISLNK(st.st_mode), "still a link");
  cr_assert_str_eq(slurp("target"), "through");
  cr_assert_eq(symlink("made-by-link", at("dangling")), 0);
  cr_assert_eq(cujit_file_write(engine, at("dangling"), "made", 4), CUJIT_OK);
  cr_assert(lstat(at("dangling"), &st) == 0 && S_ISLNK(st.st_mode));
  cr_assert_str_eq(slurp("made-by-link"), "made", "a dangling link's target is created");
  put("h1", "shared");
  char second[600];
  snprintf(second, sizeof second, "%s/h2", dir);
  cr_assert_eq(link(at("h1"), second), 0);
  cr_assert_eq(cujit_file_write(engine, at("h1"), "both", 4), CUJIT_OK);
  cr_assert_str_eq(slurp("h2"), "both", "written in place: the other name sees it");
  cr_assert(stat(at("h1"), &st) == 0 && st.st_nlink == 2);
}

Test(files, a_fifo_is_written_in_place) {
  cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
  pid_t child = fork();
  if (child == 0) { /* the reader */
    FILE *f = fopen(at("fifo"), "r");
    char got[16] = "";
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    _exit(n == 5 && memcmp(got, "piped", 5) == 0 ? 0 : 1);
  }
  cr_assert_eq(cujit_file_write(engine, at("fifo"), "piped", 5), CUJIT_OK);
  int status;
  waitpid(child, &status, 0);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader got the bytes");
  struct stat st;
  cr_assert(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "still a FIFO");
}

/* cujit_file_write of 64 KiB to `name` under a file size limit of 4 KiB (the old limit back after).
 */
static cujit_status write_past_the_limit(const char *name) {
  struct rlimit old, small = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
  getrlimit(RLIMIT_FSIZE, &old);
  small.rlim_max = old.rlim_max;
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  static char data[65536];
  memset(data, 'x', sizeof data);
  cujit_status st = cujit_file_write(engine, at(name), data, sizeof data);
  setrlimit(RLIMIT_FSIZE, &old);
  return st;
}

Test(files, past_the_size_limit_the_old_file_stays_and_the_process_lives) {
  put("big", "the old contents");
  cujit_status st = write_past_the_limit("big");
  cr_assert_eq(st, CUJIT_ERROR_IO, "an error, not SIGXFSZ's end of the process");
  cr_assert(strstr(cujit_errmsg(engine), "File too large") &&
                strstr(cujit_errmsg(engine), "what was there is as it was"),
            "%s", cujit_errmsg(engine));
  cr_assert_str_eq(slurp("big"), "the old contents");
  cr_assert_eq(temporaries(), 0, "the temporary file is removed");
  sigset_t pending;
  sigpending(&pending);
  cr_assert(!sigismember(&pending, SIGXFSZ), "no SIGXFSZ left pending");
}

/* The new file's mode cannot be set: the write fails with the reason, and what was there stays
** (a new file with the wrong mode never replaces it). */
Test(files, a_mode_that_cannot_be_set_fails_the_write_and_the_old_file_stays) {
  put("moded", "the old contents");
  cr_assert_eq(chmod(at("moded"), 0640), 0);
  fchmod_errno = EIO;
  cujit_status st = cujit_file_write(engine, at("moded"), "new", 3);
  fchmod_errno = 0;
  cr_assert_eq(st, CUJIT_ERROR_IO);
  cr_assert(strstr(cujit_errmsg(engine), "Input/output error") &&
                strstr(cujit_errmsg(engine), "what was there is as it was"),
            "%s", cujit_errmsg(engine));
  cr_assert_str_eq(slurp("moded"), "the old contents");
  cr_assert_eq(temporaries(), 0, "the temporary file is removed");
  cr_assert_eq(cujit_file_write(engine, at("moded"), "new", 3), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  struct stat s;
  cr_assert_eq(stat(at("moded"), &s), 0);
  cr_assert_eq(s.st_mode & 07777, 0640, "the mode kept: %o", s.st_mode & 07777);
  cr_assert_str_eq(slurp("moded"), "new");
}

/* A file with other hard links is written in place and cannot be kept as it was: a write cut
** short says so and why, instead of the usual "as it was". */
Test(files, a_write_in_place_cut_short_says_the_file_may_be_incomplete) {
  put("h1", "shared");
  char second[600];
  snprintf(second, sizeof second, "%s/h2", dir);
  cr_assert_eq(link(at("h1"), second), 0);
  cr_assert_eq(write_past_the_limit("h1"), CUJIT_ERROR_IO);
  const char *msg = cujit_errmsg(engine);
  cr_assert(strstr(msg, "h1': File too large; free space (or raise the file size limit) and try "
                        "again (it was written in place, since it has other hard links, so it "
                        "may be incomplete)") &&
                !strstr(msg, "as it was") && !strstr(msg, "directory"),
            "%s", msg);
  cr_assert_eq(temporaries(), 0);
}

/* A link to nothing: its target is made and written whole by a rename, so a write cut short
** leaves the link dangling as it was and no target; a target that cannot be made is refused
** saying the link points to nothing and what to do. Never the in-place reasons of other files. */
Test(files, a_dangling_link_is_left_as_it_was_or_refused_saying_so) {
  cr_assert_eq(symlink("made-by-link", at("dangling")), 0);
  cr_assert_eq(write_past_the_limit("dangling"), CUJIT_ERROR_IO);
  const char *msg = cujit_errmsg(engine);
  cr_assert(strstr(msg, "dangling': File too large; free space (or raise the file size limit) "
                        "and try again; what was there is as it was") &&
                !strstr(msg, "in place") && !strstr(msg, "hard links"),
            "%s", msg);
  struct stat st;
  cr_assert(lstat(at("dangling"), &st) == 0 && S_ISLNK(st.st_mode), "the link stays");
  cr_assert(stat(at("made-by-link"), &st) != 0 && errno == ENOENT, "no target left behind");
  cr_assert_eq(temporaries(), 0);
  cr_assert_eq(cujit_file_write(engine, at("dangling"), "made", 4), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_str_eq(slurp("made-by-link"), "made", "with room, the target is made");
  cr_assert(lstat(at("dangling"), &st) == 0 && S_ISLNK(st.st_mode), "and the link stays");
  cr_assert_eq(symlink("no-such-dir/x", at("nowhere")), 0);
  cr_assert_eq(cujit_file_write(engine, at("nowhere"), "x", 1), CUJIT_ERROR_IO);
  msg = cujit_errmsg(engine);
  cr_assert(strstr(msg, "nowhere': it is a symbolic link to 'no-such-dir/x', which does not exist "
                        "and cannot be made (No such file or directory); point the link at a "
                        "file that can be written, or remove the link, and try again") &&
                !strstr(msg, "hard links") && !strstr(msg, "in place"),
            "%s", msg);
  cr_assert(lstat(at("nowhere"), &st) == 0 && S_ISLNK(st.st_mode));
  cr_assert_eq(temporaries(), 0);
}

/* What a user who cannot write the directory gets, as the child reports it: each call's status
** and message. */
typedef struct ro_report {
  cujit_status status[3];
  char msg[3][600];
} ro_report;

/* In a directory its user cannot write (as root: a child process as nobody, for whom it is made
** so), no temporary file can be made beside a file: the file itself is written in place. A write
** cut short there says so with that reason; a file that cannot even be opened is as it was. */
Test(files, a_file_in_a_read_only_directory_is_written_in_place_saying_why) {
  uid_t user = geteuid() == 0 ? 65534 : geteuid(); /* nobody */
  cr_assert_eq(mkdir(at("ro"), 0700), 0);
  put("ro/f", "old");
  put("ro/locked", "kept");
  const char *names[] = {"ro", "ro/f", "ro/locked"};
  for (int i = 0; i < 3 && geteuid() == 0; i++)
    cr_assert_eq(chown(at(names[i]), user, user), 0, "%s", names[i]);
  cr_assert_eq(chmod(dir, 0711), 0); /* the child may pass through the scratch directory */
  cr_assert_eq(chmod(at("ro/locked"), 0444), 0);
  cr_assert_eq(chmod(at("ro"), 0555), 0);
  struct stat before;
  cr_assert_eq(stat(at("ro/f"), &before), 0);
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t child = fork();
  if (child == 0) { /* no Criterion here: the report goes back through the pipe */
    ro_report r;
    memset(&r, 0, sizeof r);
    if (geteuid() == 0 && (setgid(user) != 0 || setuid(user) != 0)) _exit(2);
    if (access(at("ro/f"), W_OK) != 0 || access(at("ro"), W_OK) == 0) _exit(3);
    r.status[0] = cujit_file_write(engine, at("ro/f"), "new", 3);
    snprintf(r.msg[0], sizeof r.msg[0], "%s", cujit_errmsg(engine));
    struct rlimit small = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    getrlimit(RLIMIT_FSIZE, &small);
    small.rlim_cur = 4096;
    setrlimit(RLIMIT_FSIZE, &small);
    static char data[65536];
    memset(data, 'x', sizeof data);
    r.status[1] = cujit_file_write(engine, at("ro/f"), data, sizeof data);
    snprintf(r.msg[1], sizeof r.msg[1], "%s", cujit_errmsg(engine));
    r.status[2] = cujit_file_write(engine, at("ro/locked"), "x", 1);
    snprintf(r.msg[2], sizeof r.msg[2], "%s", cujit_errmsg(engine));
    _exit(write(fds[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 4);
  }
  close(fds[1]);
  ro_report r;
  ssize_t got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status;
  waitpid(child, &status, 0);
  cr_assert(WIFEXITED(status), "the child ended by a signal");
  if (WEXITSTATUS(status) == 3)
    cr_skip_test("user %d cannot reach %s, or can write its directory", (int)user, at("ro/f"));
  cr_assert(WEXITSTATUS(status) == 0 && got == (ssize_t)sizeof r, "child: exit %d",
            WEXITSTATUS(status));
  cr_assert_eq(r.status[0], CUJIT_OK, "%s", r.msg[0]);
  cr_assert_eq(r.status[1], CUJIT_ERROR_IO);
  cr_assert(strstr(r.msg[1], "f': File too large; free space (or raise the file size limit) and "
                             "try again (it was written in place, since its directory is not "
                             "writable, so it may be incomplete)") &&
                !strstr(r.msg[1], "hard links"),
            "%s", r.msg[1]);
  struct stat after;
  cr_assert_eq(stat(at("ro/f"), &after), 0);
  cr_assert(after.st_ino == before.st_ino && after.st_size == 4096, "written in place, cut short");
  cr_assert_eq(r.status[2], CUJIT_ERROR_IO);
  cr_assert(strstr(r.msg[2], "locked': Permission denied; check the path and its directory's "
                             "permissions; what was there is as it was") &&
                !strstr(r.msg[2], "in place"),
            "%s", r.msg[2]);
  cr_assert_str_eq(slurp("ro/locked"), "kept");
}

/* Standard output has nothing to keep as it was: a failed write says what may have gone out. */
Test(files, a_failed_write_to_standard_output_says_so) {
  fflush(stdout);
  int saved = dup(1);
  int fd = open("/dev/null", O_RDONLY); /* writes to it fail: EBADF */
  dup2(fd, 1);
  close(fd);
  cujit_status st = cujit_file_write(engine, "-", "lost", 4);
  dup2(saved, 1);
  close(saved);
  cr_assert_eq(st, CUJIT_ERROR_IO);
  const char *msg = cujit_errmsg(engine);
  cr_assert(strstr(msg, "cannot write to standard output ('-'): Bad file descriptor; part of the "
                        "data may have been written") &&
                !strstr(msg, "as it was") && !strstr(msg, "directory's permissions"),
            "%s", msg);
}

Test(files, dash_is_standard_output) {
  fflush(stdout);
  int saved = dup(1);
  int fd = open(at("out"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, 1);
  close(fd);
  cujit_status st = cujit_file_write(engine, "-", "to stdout", 9);
  dup2(saved, 1);
  close(saved);
  cr_assert_eq(st, CUJIT_OK);
  cr_assert_str_eq(slurp("out"), "to stdout");
  cr_assert_eq(access("-", F_OK), -1, "no file named '-' made");
}
