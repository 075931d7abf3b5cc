/*
** files.c -- reading a source file whole (cj_file_read), and how cujit writes a file the user named
*(`cujit compile -o`, cuda.image.write,
** cuda.write_file, the REPL's :save and history, NCCL id files): the rule that a write never
** harms what was there. A regular file (or a new name) is written to a temporary file beside it
** and renamed into place, so a failure (full disk, libpng error, `ulimit -f`) leaves the old file
** as it was; through a symbolic link the link's target is the file replaced and the link stays
** (a link to nothing: its target is made, and removed again if the write fails). Anything that
** is not a plain file of its own (a character device such as /dev/null, a FIFO, a regular file
** with other hard links) is opened and written in place, never replaced or removed, and so is a
** file whose directory is not writable; a directory, a block device and a socket are refused.
*/
#define _GNU_SOURCE /* renameat2's RENAME_NOREPLACE */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* write() in full, EINTR retried. With SIGXFSZ blocked (see write_guarded), a file past
** `ulimit -f` fails here with EFBIG instead of ending the process. */
static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return 0;
    if (w == 0) return errno = EIO, 0;
    p += w, n -= (size_t)w;
  }
  return 1;
}

/* Past `ulimit -f` a write fails with EFBIG instead of SIGXFSZ ending the process: the signal
** is held off in this thread only for the write (cj_fsize_guard, base.c). */
static int write_guarded(int fd, const void *data, size_t len) {
  cj_fsize limit;
  cj_fsize_guard(&limit);
  int ok = write_all(fd, data, len);
  cj_fsize_release(&limit); /* keeps errno */
  return ok;
}

/* The directory part of path ("." when it has none), malloc'd. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

/* Writes the data to a new temporary file beside `target` and renames it over `target`
** (replace) or onto the free name (RENAME_NOREPLACE: if something appeared there meanwhile, it
** is not replaced and the caller looks again). mode: the permissions the file gets. */
static int write_by_rename(const char *target, int replace, mode_t mode, const void *data,
                           size_t len, int *err) {
  char *dir = dir_of(target);
  const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
  size_t n = (dir ? strlen(dir) : 0) + strlen(base) + sizeof "/..cujit-XXXXXX";
  char *tmp = dir ? malloc(n) : NULL;
  if (!tmp) {
    free(dir);
    return *err = ENOMEM, 0;
  }
  snprintf(tmp, n, "%s/.%s.cujit-XXXXXX", dir, base);
  free(dir);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    free(tmp);
    return -1; /* no temporary file: the caller may write in place */
  }
  int ok = fchmod(fd, mode) == 0 && write_guarded(fd, data, len);
  *err = errno;
  if (close(fd) != 0 && ok) ok = 0, *err = errno;
  if (ok) {
    int moved = replace ? rename(tmp, target)
                        : renameat2(AT_FDCWD, tmp, AT_FDCWD, target, RENAME_NOREPLACE);
    if (moved != 0) ok = 0, *err = errno;
  }
  if (!ok) unlink(tmp); /* our own temporary file, never the target */
  free(tmp);
  return ok;
}

/* Opens the existing `path` without creating or replacing it and writes the data into it.
** *opened: it was opened (and, with `truncate`, emptied): a failure after that leaves it cut. */
static int write_in_place(const char *path, int truncate, const void *data, size_t len, int *err,
                          int *opened) {
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (truncate ? O_TRUNC : 0));
  if (fd < 0) return *err = errno, 0;
  *opened = 1;
  int ok = write_guarded(fd, data, len);
  *err = errno;
  if (close(fd) != 0 && ok) ok = 0, *err = errno;
  return ok;
}

static int write_stdout(const void *data, size_t len, int *err) {
  fflush(stdout); /* what the program printed before goes first */
  int ok = write_guarded(STDOUT_FILENO, data, len);
  *err = errno;
  return ok;
}

/* `path` is a symbolic link to nothing (through any chain of links). Its target is made empty
** (the test that it can be made there), then written by a rename like any regular file, so that
** a failed write removes it and leaves the link dangling as it was. -1: the target cannot be
** made, and the message says so and what to do; else as write_by_rename. */
static int write_dangling(cujit_engine *engine, const char *fn, const char *path, mode_t mask,
                          const void *data, size_t len, int *err) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666 & ~mask);
  struct stat made;
  if (fd < 0 || fstat(fd, &made) != 0) {
    *err = errno;
    if (fd >= 0) close(fd);
    char to[PATH_MAX];
    ssize_t n = readlink(path, to, sizeof to - 1);
    to[n > 0 ? n : 0] = '\0';
    cj_fail(engine, CUJIT_ERROR_IO,
            "%s%scannot write '%s': it is a symbolic link to '%s', which does not exist and "
            "cannot be made (%s); point the link at a file that can be written, or remove the "
            "link, and try again",
            fn, *fn ? ": " : "", path, to, strerror(*err));
    return -1;
  }
  close(fd);
  char *target = realpath(path, NULL); /* it resolves now */
  if (!target) return *err = errno, 0;
  int ok = write_by_rename(target, 1, made.st_mode & 07777, data, len, err);
  struct stat now;
  if (ok != 1 && lstat(target, &now) == 0 && now.st_ino == made.st_ino &&
      now.st_dev == made.st_dev && now.st_size == 0)
    unlink(target); /* the empty file made above, still untouched */
  free(target);
  return ok < 0 ? 0 : ok;
}

static const char *kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return NULL;
}

cujit_status cj_file_write(cujit_engine *engine, const char *fn, const char *path, const void *data,
                           size_t len) {
  const char *sep = fn ? ": " : "";
  if (!fn) fn = "";
  if (!path || !*path)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s%sno file name given", fn, sep);
  if (!data && len)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s%sdata is NULL for %zu bytes", fn, sep,
                   len);
  static const unsigned char none[1];
  if (!data) data = none;
  int err = 0, ok = 0;
  const char *in_place = NULL; /* why a regular file was opened and truncated, not replaced */
  if (strcmp(path, "-") == 0) {
    ok = write_stdout(data, len, &err);
  } else {
    mode_t mask = umask(0);
    umask(mask);
    for (int attempt = 0; attempt < 4 && !ok; attempt++) {
      struct stat st;
      if (stat(path, &st) != 0) {
        if (errno != ENOENT) {
          err = errno;
          break;
        }
        struct stat link;
        if (lstat(path, &link) == 0) { /* a dangling symbolic link */
          ok = write_dangling(engine, fn, path, mask, data, len, &err);
          if (ok < 0) return CUJIT_ERROR_IO; /* its message is set */
          break;
        }
        ok = write_by_rename(path, 0, 0666 & ~mask, data, len, &err);
        if (ok < 0) break;
        if (!ok && err == EEXIST) continue; /* it appeared meanwhile: look at it again */
        break;
      }
      const char *refused = kind_of(st.st_mode);
      if (refused)
        return cj_fail(engine, CUJIT_ERROR_IO,
                       "%s%s'%s' is %s; cujit writes only to a file, a character device or a "
                       "pipe. Give a file name",
                       fn, sep, path, refused);
      if (!S_ISREG(st.st_mode) || st.st_nlink > 1) { /* /dev/null, a FIFO, a shared inode */
        int opened = 0;
        ok = write_in_place(path, S_ISREG(st.st_mode), data, len, &err, &opened);
        if (S_ISREG(st.st_mode) && opened) in_place = "it has other hard links";
        break;
      }
      char *target = realpath(path, NULL); /* through links: the file they point at */
      if (!target) {
        err = errno;
        break;
      }
      ok = write_by_rename(target, 1, st.st_mode & 07777, data, len, &err);
      /* No temporary file beside it because its directory is not writable: the file itself,
      ** which may be. Not for a full disk: truncating the file would lose it. */
      if (ok < 0 && (err == EACCES || err == EPERM)) {
        int opened = 0;
        ok = write_in_place(target, 1, data, len, &err, &opened);
        if (opened) in_place = "its directory is not writable";
      }
      free(target);
      break;
    }
    if (ok < 0) ok = 0;
  }
  if (ok) return CUJIT_OK;
  if (strcmp(path, "-") == 0) /* nothing there to keep: what was written is out */
    return cj_fail(engine, CUJIT_ERROR_IO,
                   "%s%scannot write to standard output ('-'): %s; part of the data may have "
                   "been written. Check where standard output goes (a closed pipe, a full disk)",
                   fn, sep, strerror(err ? err : EIO));
  int full = err == ENOSPC || err == EFBIG || err == EDQUOT;
  return cj_fail(engine, CUJIT_ERROR_IO, "%s%scannot write '%s': %s; %s%s%s%s", fn, sep, path,
                 strerror(err ? err : EIO),
                 full ? "free space (or raise the file size limit) and try again"
                      : "check the path and its directory's permissions",
                 in_place ? " (it was written in place, since " : "; what was there is as it was",
                 in_place ? in_place : "", in_place ? ", so it may be incomplete)" : "");
}

cujit_status cujit_file_write(cujit_engine *engine, const char *path, const void *data,
                              size_t len) {
  return cj_file_write(engine, NULL, path, data, len);
}

cujit_status cj_file_read(cujit_engine *engine, const char *path, size_t max, char **out) {
  FILE *f = fopen(path, "rb");
  if (!f) return cj_fail(engine, CUJIT_ERROR_IO, "cannot read '%s': %s", path, strerror(errno));
  cj_buf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < max) cj_buf_add(&b, chunk, n);
  int err = ferror(f) ? errno : 0;
  fclose(f);
  if (err || b.failed || b.len >= max) {
    cj_buf_free(&b);
    return cj_fail(engine, err ? CUJIT_ERROR_IO : CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "cannot read '%s': %s", path, err ? strerror(err) : "too big for a source file");
  }
  if (b.data && memchr(b.data, '\0', b.len)) {
    cj_buf_free(&b);
    return cj_fail(engine, CUJIT_ERROR_IO, "'%s' holds NUL bytes: it is not a CUDA source file",
                   path);
  }
  *out = b.data ? b.data : cj_strdup("");
  return *out ? CUJIT_OK : cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

void cj_remove_tree(const char *path) {
  nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int cj_file_holds(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  char *have = malloc(len + 1);
  size_t got = have ? fread(have, 1, len + 1, f) : 0;
  int same = have && got == len && memcmp(have, text, len) == 0;
  free(have);
  fclose(f);
  return same;
}
