/*
** cxx_scratch.c -- the CPU device compiler's scratch directories. Each compile writes its unit,
** the embedded headers and the shared object into a directory of its own under TMPDIR, and the
** compiler's temporaries into its tmp/ (the child's TMPDIR); the directory goes when the compile
** ends. A process killed mid-compile cannot remove it, so its name holds the pid (and the pid
** namespace, within which a pid means something) and the first compile of every later process
** removes those of processes that are gone: directories owned by this user, named exactly so,
** never through a symlink, and only the files cujit and the compiler write there.
*/
#include "cxx_scratch.h"
#include "source.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PREFIX "cujit-cxx-"
#define TEMPLATE_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

unsigned long long cj_pid_namespace(void) {
  char link[64];
  ssize_t n = readlink("/proc/self/ns/pid", link, sizeof link - 1);
  if (n <= 0) return 0;
  link[n] = '\0';
  const char *open = strchr(link, '[');
  return open ? strtoull(open + 1, NULL, 10) : 0;
}

static const char *tmp_root(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

static void remove_files_in(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char child[PATH_MAX];
  struct stat st;
  for (struct dirent *e; (e = readdir(d));)
    if (snprintf(child, sizeof child, "%s/%s", dir, e->d_name) < (int)sizeof child &&
        lstat(child, &st) == 0 && S_ISREG(st.st_mode))
      unlink(child);
  closedir(d);
}

void cj_cxx_scratch_remove(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return;
  char child[PATH_MAX];
  static const char *const parts[] = {"tu.cpp", "k.o", "k.so", NULL};
  for (size_t i = 0; parts[i]; i++) {
    snprintf(child, sizeof child, "%s/%s", path, parts[i]);
    unlink(child);
  }
  for (size_t i = 0; i < cj_embedded_header_count; i++) {
    snprintf(child, sizeof child, "%s/include/%s", path, cj_embedded_header_names[i]);
    unlink(child);
    for (char *slash = strrchr(child, '/'); slash && slash > child + strlen(path) + 8;
         slash = strrchr(child, '/')) {
      *slash = '\0';
      rmdir(child);
    }
  }
  snprintf(child, sizeof child, "%s/include/__cj_h", path); /* the user's headers, rewritten */
  if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) remove_files_in(child);
  rmdir(child);
  snprintf(child, sizeof child, "%s/include", path); /* the loops above stop below it */
  rmdir(child);
  snprintf(child, sizeof child, "%s/tmp", path);
  if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) remove_files_in(child);
  rmdir(child);
  rmdir(path);
}

/* 1 when `name` is exactly a scratch directory's name of a process of this pid namespace that no
** longer exists. */
static int dead_ones(const char *name, unsigned long long ns) {
  unsigned long long their_ns;
  long pid;
  char rest[8];
  if (strncmp(name, PREFIX, sizeof PREFIX - 1) != 0) return 0;
  if (sscanf(name + sizeof PREFIX - 1, "%llu-%ld-%7s", &their_ns, &pid, rest) != 3) return 0;
  char again[128];
  snprintf(again, sizeof again, PREFIX "%llu-%ld-%s", their_ns, pid, rest);
  if (strcmp(again, name) != 0 || strlen(rest) != 6 || strspn(rest, TEMPLATE_CHARS) != 6) return 0;
  if (their_ns != ns || pid <= 0 || (pid_t)pid == getpid()) return 0;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH; /* EPERM: alive, another user's */
}

static void collect_litter(void) {
  const char *root = tmp_root();
  DIR *d = opendir(root);
  if (!d) return;
  unsigned long long ns = cj_pid_namespace();
  uid_t me = getuid();
  char path[PATH_MAX];
  struct stat st;
  for (struct dirent *e; (e = readdir(d));)
    if (dead_ones(e->d_name, ns) &&
        snprintf(path, sizeof path, "%s/%s", root, e->d_name) < (int)sizeof path &&
        lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == me)
      cj_cxx_scratch_remove(path);
  closedir(d);
}

static pthread_once_t collected = PTHREAD_ONCE_INIT;

int cj_cxx_scratch_make(char *dir, size_t len) {
  pthread_once(&collected, collect_litter);
  if (snprintf(dir, len, "%s/" PREFIX "%llu-%ld-XXXXXX", tmp_root(), cj_pid_namespace(),
               (long)getpid()) >= (int)len)
    return ENAMETOOLONG;
  if (!mkdtemp(dir)) return errno;
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  if (mkdir(tmp, 0700) != 0) {
    int err = errno;
    cj_cxx_scratch_remove(dir);
    return err;
  }
  return 0;
}
