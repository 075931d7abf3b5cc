/*
** remote.c -- NVRTC compiles in worker processes (remote.h): the pool of workers, the messages
** between the engine and a worker, and the worker's side of them.
**
** A message is "CJW1", a 64-bit little-endian length, then fields, each a 32-bit length and its
** bytes (text fields end in a NUL, which the reader checks). A request: the protocol's name, the
** NVRTC version, want_cubin, whether to compile with a PCH and the engine's PCH heap size, name,
** source, the name expressions, the header count, the header names, their sources, the option
** count, the options. A reply: the protocol's name, the compile's nvrtcResult, the failed call
** ("" for none) and its result, the PCHs made and used, log, PTX, CUBIN, lowered names.
*/
#define _GNU_SOURCE /* dladdr */
#include "remote.h"
#include "pch.h"
#include "base/workers.h"
#include "base/env.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PROTOCOL "cujit-nvrtc-worker 1"
#define MAGIC "CJW1"
#define MESSAGE_MAX ((uint64_t)1 << 32) /* 4 GiB: more is a broken or hostile peer */
#define WORKER_NAME "cujit-nvrtc-worker"

/* --- messages --------------------------------------------------------------------------------- */

/* All of `n` bytes, or 0. send() with MSG_NOSIGNAL: a worker that died must not end the
** engine's process with SIGPIPE; a worker's socket is always a socket. */
static int send_all(int fd, const void *p, size_t n) {
  for (const char *c = p; n;) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k, n -= (size_t)k;
  }
  return 1;
}

static int recv_all(int fd, void *p, size_t n) {
  for (char *c = p; n;) {
    ssize_t k = read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k, n -= (size_t)k;
  }
  return 1;
}

static void put_field(cj_buf *b, const void *p, size_t n) {
  uint32_t len = (uint32_t)n;
  if (n > UINT32_MAX) b->failed = 1;
  cj_buf_add(b, (const char *)&len, sizeof len);
  if (n) cj_buf_add(b, p, n);
}

static void put_text(cj_buf *b, const char *s) {
  put_field(b, s ? s : "", strlen(s ? s : "") + 1);
}

static void put_number(cj_buf *b, long long v) {
  char text[32];
  snprintf(text, sizeof text, "%lld", v);
  put_text(b, text);
}

/* Sends the fields in `body` as one message. */
static int send_message(int fd, const cj_buf *body) {
  if (body->failed) return 0;
  uint64_t len = body->len;
  char head[12];
  memcpy(head, MAGIC, 4), memcpy(head + 4, &len, sizeof len);
  return send_all(fd, head, sizeof head) && send_all(fd, body->data, body->len);
}

/* A message read: its bytes, and a cursor over its fields. */
typedef struct message {
  char *data;
  size_t len, at;
  int bad; /* a field was missing, too long, or a text without its NUL */
} message;

/* 1 with the message in m (free m->data), 0 at the end of the stream or for a broken one. */
static int recv_message(int fd, message *m) {
  char head[12];
  uint64_t len;
  memset(m, 0, sizeof *m);
  if (!recv_all(fd, head, sizeof head) || memcmp(head, MAGIC, 4) != 0) return 0;
  memcpy(&len, head + 4, sizeof len);
  if (len > MESSAGE_MAX || !(m->data = malloc(len ? len : 1))) return 0;
  m->len = len;
  if (!recv_all(fd, m->data, len)) {
    free(m->data);
    m->data = NULL;
    return 0;
  }
  return 1;
}

/* The next field: its bytes (inside m->data) and length; NULL with m->bad set when none is left. */
static const char *field(message *m, size_t *n) {
  uint32_t len;
  *n = 0;
  if (m->bad || m->len - m->at < sizeof len) return m->bad = 1, (const char *)NULL;
  memcpy(&len, m->data + m->at, sizeof len);
  m->at += sizeof len;
  if (m->len - m->at < len) return m->bad = 1, (const char *)NULL;
  m->at += len, *n = len;
  return m->data + m->at - len;
}

static const char *text(message *m) {
  size_t n;
  const char *s = field(m, &n);
  if (s && (n == 0 || s[n - 1] != '\0')) m->bad = 1, s = NULL;
  return s ? s : "";
}

static long long number(message *m) {
  const char *s = text(m);
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end) m->bad = 1;
  return v;
}

/* A malloc'd copy of a field that may be empty (NULL then), with a NUL after its bytes. */
static int copy_field(message *m, void **out, size_t *n_out) {
  size_t n;
  const char *p = field(m, &n);
  *out = NULL;
  if (n_out) *n_out = 0;
  if (!p || n == 0) return p != NULL;
  char *c = malloc(n + 1);
  if (!c) return 0;
  memcpy(c, p, n), c[n] = '\0';
  *out = c;
  if (n_out) *n_out = n;
  return 1;
}

/* The static name of a call a worker reported (cj_nvrtc_step holds a static string). */
static const char *call_name(const char *reported) {
  static const char *const calls[] = {
      "nvrtcCreateProgram", "nvrtcAddNameExpression", "nvrtcGetPTXSize",     "nvrtcGetPTX",
      "nvrtcGetCUBINSize",  "nvrtcGetCUBIN",          "nvrtcGetLoweredName", "malloc",
      "empty CUBIN"};
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
    if (!strcmp(reported, calls[i])) return calls[i];
  return *reported ? "an NVRTC call in a worker process" : NULL;
}

/* --- the worker's side ------------------------------------------------------------------------ */

/* Reads a request's fields into `job` (pointers into m; `lists` and `o` to free). A compile with a
** PCH gets its headers as `inc`, as the engine's process had them. */
static int read_request(message *m, cj_nvrtc *nv, cj_nvrtc_job *job, char ***lists,
                        cj_option_list *o, cj_includes *inc) {
  memset(job, 0, sizeof *job);
  if (strcmp(text(m), PROTOCOL) != 0 || number(m) != nv->version) return 0;
  job->want_cubin = number(m) != 0;
  int pch = number(m) != 0;
  long long heap = number(m);
  if (pch && heap > 0) cj_pch_heap_reserve(nv, (size_t)heap);
  job->name = text(m), job->source = text(m);
  size_t n;
  job->exprs = field(m, &n), job->exprs_len = n;
  long long headers = number(m);
  if (m->bad || headers < 0 || headers > (long long)(m->len / 4)) return 0;
  lists[0] = calloc((size_t)headers * 2 + 1, sizeof *lists[0]);
  for (long long i = 0; lists[0] && i < headers * 2; i++) lists[0][i] = (char *)text(m);
  long long options = number(m);
  if (!lists[0] || m->bad || options < 0 || options > (long long)(m->len / 4)) return 0;
  for (long long i = 0; i < options; i++) cj_option_list_add(o, text(m), NULL);
  job->header_count = (int)headers;
  job->header_names = (const char *const *)lists[0];
  job->header_sources = (const char *const *)lists[0] + headers;
  job->options = o;
  inc->source = (char *)job->source, inc->cacheable = 1; /* what the PCH reads of it */
  inc->header_names = lists[0], inc->header_sources = lists[0] + headers;
  inc->header_count = (size_t)headers;
  job->pch = pch ? inc : NULL;
  return !o->failed && !m->bad && m->at == m->len;
}

static int answer(int out, const cj_cache_entry *e, nvrtcResult compiled,
                  const cj_nvrtc_step *failed, const unsigned long long pchs[2]) {
  cj_buf b = {0};
  put_text(&b, PROTOCOL);
  put_number(&b, compiled);
  put_text(&b, failed->call);
  put_number(&b, failed->result);
  put_number(&b, (long long)pchs[0]);
  put_number(&b, (long long)pchs[1]);
  put_field(&b, e->log, e->log ? strlen(e->log) : 0);
  put_field(&b, e->ptx, e->ptx ? e->ptx_len : 0);
  put_field(&b, e->cubin, e->cubin_len);
  put_field(&b, e->names, e->names_len);
  int ok = send_message(out, &b);
  cj_buf_free(&b);
  return ok;
}

int cj_remote_serve(cujit_engine *engine, int in, int out) {
  cj_nvrtc nv;
  char why[512];
  if (!cj_nvrtc_open(&nv, why, sizeof why)) {
    fprintf(stderr, WORKER_NAME ": %s\n", why);
    return 2;
  }
  /* NVRTC's first compile in a process costs tens of ms more than the next: paid now, while the
  ** engine has not yet sent a job (a worker started for later jobs waits warm) */
  nvrtcProgram warm;
  if (nv.nvrtcCreateProgram(&warm, "__global__ void cujit_warm(void) {}\n", "warm.cu", 0, NULL,
                            NULL) == NVRTC_SUCCESS) {
    nv.nvrtcCompileProgram(warm, 0, NULL);
    nv.nvrtcDestroyProgram(&warm);
  }
  int status = 0;
  for (message m; recv_message(in, &m);) {
    cj_nvrtc_job job;
    char **lists[1] = {NULL};
    cj_option_list o = {0};
    cj_includes inc = {0};
    cj_cache_entry e = {0};
    nvrtcResult compiled = NVRTC_SUCCESS;
    cj_nvrtc_step failed = {NULL, NVRTC_SUCCESS};
    unsigned long long before[2] = {engine->pch_created, engine->pch_used}, pchs[2];
    int ok = read_request(&m, &nv, &job, lists, &o, &inc);
    if (ok) cj_nvrtc_job_run(engine, &nv, &job, &e, &compiled, &failed);
    pchs[0] = engine->pch_created - before[0], pchs[1] = engine->pch_used - before[1];
    ok = ok && answer(out, &e, compiled, &failed, pchs);
    cj_cache_entry_free(&e);
    cj_option_list_free(&o);
    free(lists[0]), free(m.data);
    if (!ok) {
      status = 1;
      break;
    }
  }
  cj_nvrtc_close(&nv);
  return status;
}

/* --- the pool --------------------------------------------------------------------------------- */

typedef struct worker {
  pid_t pid;
  int fd; /* the engine's end of the worker's socket */
  struct worker *next;
} worker;

struct cj_remote {
  pthread_mutex_t lock; /* guards all below */
  worker *idle;         /* workers waiting for a job */
  int found;            /* 0 not looked for yet, 1 found (path), -1 none or off */
  int always;           /* CUJIT_NVRTC_WORKER=always: every compile in a worker */
  int live;             /* workers started and not ended */
  char path[PATH_MAX];
  char **env; /* the workers' environment: ours, CUJIT_NVRTC naming our NVRTC */
};

cj_remote *cj_remote_open(void) {
  cj_remote *pool = calloc(1, sizeof *pool);
  if (pool) pthread_mutex_init(&pool->lock, NULL);
  return pool;
}

static void end_worker(worker *w) {
  close(w->fd); /* the worker reads the end of its input and exits */
  while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
  }
  free(w);
}

/* A worker that failed a job: ended, and its place free for another. */
static void drop_worker(cj_remote *pool, worker *w) {
  end_worker(w);
  pthread_mutex_lock(&pool->lock);
  pool->live--;
  pthread_mutex_unlock(&pool->lock);
}

void cj_remote_close(cj_remote *pool) {
  if (!pool) return;
  for (worker *w = pool->idle, *next; w; w = next) next = w->next, end_worker(w);
  for (char **v = pool->env; v && *v; v++) free(*v);
  free(pool->env);
  pthread_mutex_destroy(&pool->lock);
  free(pool);
}

static int executable(const char *path) {
  return path && *path && access(path, X_OK) == 0;
}

/* Where the worker program is: CUJIT_NVRTC_WORKER, else beside the file that holds this code (the
** build tree's libcujit.so and cujit sit beside it), else where `make install` puts it, else the
** build tree that made this library. */
static int find_worker(cujit_engine *engine, cj_remote *pool) {
  const char *env = getenv("CUJIT_NVRTC_WORKER");
  if (env && (!strcmp(env, "off") || !strcmp(env, "0"))) return 0;
  if (env && !strcmp(env, "always")) pool->always = 1, env = NULL;
  if (env && *env) {
    if (executable(env)) return snprintf(pool->path, sizeof pool->path, "%s", env) < PATH_MAX;
    cj_warn(engine,
            "CUJIT_NVRTC_WORKER=%s is not an executable file; compiles run one at a time "
            "in this process. Point it at cujit-nvrtc-worker, or set it to off",
            env);
    return 0;
  }
  static const char anchor = 0; /* an object of this file: dladdr names the file holding it */
  Dl_info here;
  if (dladdr(&anchor, &here) && here.dli_fname) {
    const char *slash = strrchr(here.dli_fname, '/');
    int dir = slash ? (int)(slash - here.dli_fname) : 0;
    if (slash &&
        snprintf(pool->path, sizeof pool->path, "%.*s/" WORKER_NAME, dir, here.dli_fname) <
            PATH_MAX &&
        executable(pool->path))
      return 1;
  }
  static const char *const built_in[] = {CUJIT_WORKER_INSTALLED, CUJIT_WORKER_BUILT};
  for (size_t i = 0; i < 2; i++)
    if (executable(built_in[i]))
      return snprintf(pool->path, sizeof pool->path, "%s", built_in[i]) < PATH_MAX;
  return 0;
}

/* The workers' environment: this process's, with CUJIT_NVRTC naming the NVRTC this engine opened
** (by its file, so that a worker cannot find another one on its library path). */
static char **worker_env(const cj_nvrtc *nv) {
  struct link_map *lib = NULL;
  const char *nvrtc =
      dlinfo(nv->handle, RTLD_DI_LINKMAP, &lib) == 0 && lib && lib->l_name && lib->l_name[0] == '/'
          ? lib->l_name
          : nv->path;
  size_t n = 0;
  while (environ && environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  size_t k = 0;
  for (size_t i = 0; env && i < n; i++)
    if (strncmp(environ[i], "CUJIT_NVRTC=", 12) != 0 && !(env[k++] = cj_strdup(environ[i])))
      goto fail;
  if (env && (env[k] = malloc(strlen(nvrtc) + 13))) {
    sprintf(env[k], "CUJIT_NVRTC=%s", nvrtc);
    return env;
  }
fail:
  for (size_t i = 0; env && i < k; i++) free(env[i]);
  free(env);
  return NULL;
}

/* A new worker; NULL when it cannot be started. Its stdin and stdout are one end of a socket pair
** (close-on-exec in this process, so no other child inherits it); its stderr is /dev/null. */
static worker *start_worker(cj_remote *pool) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return NULL;
  worker *w = malloc(sizeof *w);
  posix_spawn_file_actions_t fa;
  int made = w && posix_spawn_file_actions_init(&fa) == 0;
  int ok = made && posix_spawn_file_actions_adddup2(&fa, sv[1], 0) == 0 &&
           posix_spawn_file_actions_adddup2(&fa, sv[1], 1) == 0 &&
           posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) == 0;
  char *argv[] = {pool->path, NULL};
  ok = ok && posix_spawn(&w->pid, pool->path, &fa, NULL, argv, pool->env) == 0;
  if (made) posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (!ok) {
    close(sv[0]);
    free(w);
    return NULL;
  }
  w->fd = sv[0], w->next = NULL;
  return w;
}

/* Whether the pool has a worker program (looked for once, at the first compile that asks): 0 no,
** 1 yes, 2 yes and every compile is to run in a worker. */
static int ready(cujit_engine *engine, cj_remote *pool, cj_nvrtc *nv) {
  pthread_mutex_lock(&pool->lock);
  if (!pool->found)
    pool->found = find_worker(engine, pool) && (pool->env = worker_env(nv)) ? 1 : -1;
  int mode = pool->found == 1 ? 1 + pool->always : 0;
  pthread_mutex_unlock(&pool->lock);
  return mode;
}

/* A worker for a job: an idle one, else a new one when there may be one more. A job that is not
** `heavy` does not wait for a new worker to start (it would take longer than compiling it in the
** process, about 0.1 s on an H200 host): it gets NULL, and the new worker waits in the pool for
** the next jobs. *fresh: the worker returned was just started. */
static worker *take_worker(cj_remote *pool, int heavy, int *fresh) {
  char why[128]; /* the compile threads of now (a first compile may have run with 1): the
                 ** process's own NVRTC is one of them; 0, refused, is the caller's to say */
  int threads = cj_compile_threads(why, sizeof why), most = threads > 1 ? threads - 1 : 1;
  pthread_mutex_lock(&pool->lock);
  worker *w = pool->idle;
  if (w) pool->idle = w->next;
  int start = !w && pool->found == 1 && pool->live < most;
  if (start) pool->live++; /* its place, taken before it starts outside the lock */
  pthread_mutex_unlock(&pool->lock);
  *fresh = !w;
  if (!start) return w;
  worker *made = start_worker(pool);
  pthread_mutex_lock(&pool->lock);
  if (!made)
    pool->live--;
  else if (!heavy)
    made->next = pool->idle, pool->idle = made;
  pthread_mutex_unlock(&pool->lock);
  return heavy ? made : NULL;
}

static void give_back(cj_remote *pool, worker *w) {
  pthread_mutex_lock(&pool->lock);
  w->next = pool->idle, pool->idle = w;
  pthread_mutex_unlock(&pool->lock);
}

static void put_request(cj_buf *b, cj_nvrtc *nv, const cj_nvrtc_job *job) {
  put_text(b, PROTOCOL);
  put_number(b, nv->version);
  put_number(b, job->want_cubin);
  put_number(b, job->pch != NULL);
  put_number(b, job->pch ? (long long)cj_pch_heap_size() : 0);
  put_text(b, job->name);
  put_text(b, job->source);
  put_field(b, job->exprs, job->exprs_len);
  put_number(b, job->header_count);
  for (int i = 0; i < job->header_count; i++) put_text(b, job->header_names[i]);
  for (int i = 0; i < job->header_count; i++) put_text(b, job->header_sources[i]);
  put_number(b, (long long)job->options->n);
  for (size_t i = 0; i < job->options->n; i++) put_text(b, job->options->v[i]);
}

/* The worker's reply into e; 0 (e emptied) when it is broken. */
static int take_reply(cujit_engine *engine, message *m, cj_cache_entry *e, nvrtcResult *compiled,
                      cj_nvrtc_step *failed) {
  int ok = !strcmp(text(m), PROTOCOL);
  *compiled = (nvrtcResult)number(m);
  failed->call = call_name(text(m));
  failed->result = (nvrtcResult)number(m);
  long long created = number(m), used = number(m);
  if (!m->bad && created >= 0 && used >= 0) { /* the worker's PCHs count as the engine's */
    atomic_fetch_add(&engine->pch_created, (unsigned long long)created);
    atomic_fetch_add(&engine->pch_used, (unsigned long long)used);
  }
  void *log = NULL, *ptx = NULL, *names = NULL;
  ok = ok && copy_field(m, &log, NULL);
  if (ok) ok = (e->log = log ? log : calloc(1, 1)) != NULL; /* "" as NVRTC's own */
  ok = ok && copy_field(m, &ptx, &e->ptx_len);
  e->ptx = ptx;
  ok = ok && copy_field(m, &e->cubin, &e->cubin_len) && copy_field(m, &names, &e->names_len);
  e->names = names;
  if (ok && !m->bad && m->at == m->len) return 1;
  cj_cache_entry_free(e);
  memset(e, 0, sizeof *e);
  return 0;
}

/* One job on one worker: 1 with the reply in e, 0 when the worker failed (then it is ended). */
static int run_on(cujit_engine *engine, cj_remote *pool, worker *w, cj_nvrtc *nv,
                  const cj_nvrtc_job *job, cj_cache_entry *e, nvrtcResult *compiled,
                  cj_nvrtc_step *failed) {
  cj_buf req = {0};
  put_request(&req, nv, job);
  message m;
  int ok = send_message(w->fd, &req) && recv_message(w->fd, &m);
  cj_buf_free(&req);
  if (ok) {
    ok = take_reply(engine, &m, e, compiled, failed);
    free(m.data);
  }
  if (!ok) drop_worker(pool, w);
  return ok;
}

int cj_remote_compile(cujit_engine *engine, cj_nvrtc *nv, const cj_nvrtc_job *job,
                      cj_cache_entry *e, nvrtcResult *compiled, cj_nvrtc_step *failed) {
  int busy = atomic_fetch_add(&engine->nvrtc_running, 1) > 0;
  int mode = engine->remote ? ready(engine, engine->remote, nv) : 0;
  if (mode == 0 || (mode == 1 && !busy)) return 0;
  atomic_fetch_sub(&engine->nvrtc_running, 1); /* this one runs elsewhere, unless ... */
  int heavy = mode == 2 || job->heavy;
  for (int attempt = 0; attempt < 2; attempt++) {
    int fresh;
    worker *w = take_worker(engine->remote, heavy, &fresh);
    if (!w) break;
    if (run_on(engine, engine->remote, w, nv, job, e, compiled, failed)) {
      give_back(engine->remote, w);
      atomic_fetch_add(&engine->compiles_in_workers, 1);
      return 1;
    }
    if (fresh) break; /* a new worker failed: another would too */
  }
  atomic_fetch_add(&engine->nvrtc_running, 1); /* ... no worker could: here after all */
  return 0;
}

void cj_remote_done(cujit_engine *engine) {
  atomic_fetch_sub(&engine->nvrtc_running, 1);
}
