/*
** stub_driver.c -- a stand-in libcuda.so.1 for profiling cujit's own host work without a GPU
** (scripts/bench/profile_launch.lua): one pretend sm_90 device (CUJIT_STUB_DEVICES=N for more:
** stub_devices.c) whose memory is host memory, whose launches, waits and loads succeed at once
** and do nothing. Built into BUILD/scripts/bench/stubcuda/libcuda.so.1; only what puts that
** directory on LD_LIBRARY_PATH sees it. Never a test of correctness: kernels do not run.
** CUJIT_STUB_CALL_NS=N makes every driver call spin N ns (the H200 driver's calls cost roughly
** 100-1000 ns each), so a figure also shows how many driver calls a path makes.
** CUJIT_STUB_KERNEL_NS=N makes every launch pretend to run N ns: queries answer NOT_READY until
** then and the driver's own waits spin until then, so a wait's polls cost what they would.
** CUJIT_STUB_FAIL=cuName[,cuName...] makes those calls fail, with CUJIT_STUB_FAIL_CODE (a CUresult,
** 2 = out of memory unless set) and nothing written: read when cujit looks the calls up, so set it
** before cujit_open. Tests use it for paths a real GPU takes only under load or after a fault.
** CUJIT_STUB_DRIVER_VERSION=N and CUJIT_STUB_CC=MAJOR make it an older driver or GPU.
** CUJIT_STUB_ABSENT=cuName[,cuName...] makes those entry points missing (not found), as on a
** driver older than they are: for the optional ones cujit must refuse only their feature.
** cuCtxCreate makes contexts other than the primary one (of the CUdevice it is given, which
** cuCtxGetDevice tells back), streams remember their context (cuStreamGetCtx), and
** cujit_stub_work_context() (dlsym it) is the context that was current at the last allocation,
** launch or stream made: where cujit did its work (tests/c/test_embedding.c).
** cujit_stub_live_allocations() (dlsym it from libcuda.so.1) counts the device and pinned blocks
** allocated and not yet freed: what a real driver would report leaked at context destruction.
** CUJIT_STUB_MEMORY=BYTES is each device's memory (80 GiB unless set): an allocation past what
** that device's live blocks leave is refused as out of memory, as the real driver's.
** cuPointerGetAttributes answers for every pretend block (memory type, the context and device
** current when it was allocated, managed or not, its range) and with defaults for any other
** address, as the real driver does;
** cujit_stub_block(bytes, kind, ordinal) makes a block of a kind cujit does not allocate itself
** (CJ_STUB_* below: managed, another device's, another context's) for tests of cujit_buffer_wrap,
** freed by cujit_stub_block_free.
** Launch attributes (issue 26) are noted (stub_attrs.c): cujit_stub_seen(name) tells them back.
** Managed memory, its prefetches and advice, registered and mapped host memory: stub_memory.c
** (CUJIT_STUB_MANAGED=0: a device without managed memory).
** Events (stub_events.c) remember their flags: cuEventElapsedTime refuses one without timing.
** IPC handles (stub_ipc.c) name the address and the process; a handle of another process opens.
** Graphs are recorded (stub_graph.c): what each replay was given, for tests of the CUDA backend's
** graph bookkeeping; each loaded library and each of its kernels has a handle of its own.
** cuInit starts a thread of the driver's own, as the real one does: unmapping the library while
** it lives (a dlclose that really unloads) crashes the process, as it does with the real driver.
*/
#include "stub_attrs.h"
#include "stub_events.h"
#include "stub_graph.h"
#include "stub_ipc.h"
#include "stub_memory.h"
#include "stub_devices.h"

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char object_; /* the address every pretend handle points at */
static _Thread_local CUcontext current;

static long call_ns = -1;   /* CUJIT_STUB_CALL_NS, read at the first call */
static long kernel_ns = -1; /* CUJIT_STUB_KERNEL_NS */
static long busy_until;     /* the pretend device runs a kernel until then (ns) */
/* Every pretend block (device or pinned memory) is kept on a list until freed: counted, and
** still reachable when a test makes the frees fail, so LeakSanitizer does not blame the stand-in
** for what the pretend driver would free with its context. */
typedef struct block_header {
  struct block_header *prev, *next;
  size_t bytes;
  int kind, ordinal; /* a CJ_STUB_* kind; the device it belongs to */
  void *ctx;         /* the context it belongs to (cuPointerGetAttributes' answer) */
  char pad[24];      /* the block after it stays 64-byte aligned, as malloc's is 16 */
} block_header;
_Static_assert(sizeof(block_header) == 64, "blocks stay 64-byte aligned");

/* What a block is, for cuPointerGetAttributes. */
enum { CJ_STUB_DEVICE, CJ_STUB_PINNED, CJ_STUB_MANAGED, CJ_STUB_OTHER_CONTEXT };
static char other_context_; /* the pretend context of CJ_STUB_OTHER_CONTEXT blocks */

static block_header live = {&live, &live, 0, 0, 0, NULL, {0}};
static long live_allocations;
static size_t device_bytes[CJ_STUB_DEVICES_MAX]; /* each device's live CJ_STUB_DEVICE blocks */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

long cujit_stub_live_allocations(void);
long cujit_stub_live_allocations(void) {
  pthread_mutex_lock(&live_lock);
  long n = live_allocations;
  pthread_mutex_unlock(&live_lock);
  return n;
}

/* The bytes a device's blocks count against its memory, or NULL for a block that counts none. */
static size_t *counted(int kind, int ordinal) {
  return kind == CJ_STUB_DEVICE && ordinal >= 0 && ordinal < CJ_STUB_DEVICES_MAX
             ? &device_bytes[ordinal]
             : NULL;
}

/* NULL when the host is out of memory, or a device block would not fit the device's memory. */
static void *block_alloc_in(size_t bytes, int kind, int ordinal, void *ctx) {
  block_header *h = bytes > SIZE_MAX - sizeof *h ? NULL : malloc(sizeof *h + bytes);
  if (!h) return NULL;
  h->bytes = bytes, h->kind = kind, h->ordinal = ordinal, h->ctx = ctx;
  size_t *used = counted(kind, ordinal);
  pthread_mutex_lock(&live_lock);
  size_t memory = cj_stub_device_memory();
  int fits = !used || (*used <= memory && bytes <= memory - *used);
  if (fits) {
    h->prev = &live, h->next = live.next, live.next->prev = h, live.next = h;
    live_allocations++;
    if (used) *used += bytes;
  }
  pthread_mutex_unlock(&live_lock);
  if (fits) return h + 1;
  free(h);
  return NULL;
}

/* A block of the primary context (&object_, device 0), or of the other context. */
static void *block_alloc_kind(size_t bytes, int kind, int ordinal) {
  return block_alloc_in(bytes, kind, ordinal,
                        kind == CJ_STUB_OTHER_CONTEXT ? (void *)&other_context_ : (void *)&object_);
}

void *cujit_stub_block(size_t bytes, int kind, int ordinal);
void *cujit_stub_block(size_t bytes, int kind, int ordinal) {
  return block_alloc_kind(bytes, kind, ordinal);
}

static void block_free(void *block);
void cujit_stub_block_free(void *block);
void cujit_stub_block_free(void *block) {
  block_free(block);
}

static void block_free(void *block) {
  if (!block) return;
  block_header *h = (block_header *)block - 1;
  pthread_mutex_lock(&live_lock);
  h->prev->next = h->next, h->next->prev = h->prev;
  live_allocations--;
  size_t *used = counted(h->kind, h->ordinal);
  if (used) *used -= h->bytes;
  pthread_mutex_unlock(&live_lock);
  free(h);
}

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* The pretend cost of one driver call. */
void cj_stub_cost(void) {
  cj_stub_flush_copies(); /* every call comes after the copies queued before it (stub_memory.c) */
  if (call_ns < 0) {
    const char *env = getenv("CUJIT_STUB_CALL_NS");
    call_ns = env ? atol(env) : 0;
  }
  if (call_ns == 0) return;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < call_ns);
}

static void note_work(void);

static CUresult ok(void) {
  cj_stub_cost();
  return CUDA_SUCCESS;
}

static CUresult launch(void) {
  cj_stub_cost();
  note_work();
  if (kernel_ns < 0) {
    const char *env = getenv("CUJIT_STUB_KERNEL_NS");
    kernel_ns = env ? atol(env) : 0;
  }
  if (kernel_ns > 0) __atomic_store_n(&busy_until, now_ns() + kernel_ns, __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

CUresult cj_stub_launch(void) {
  return launch();
}

static CUresult query(void) {
  cj_stub_cost();
  return now_ns() < __atomic_load_n(&busy_until, __ATOMIC_RELAXED) ? CUDA_ERROR_NOT_READY
                                                                   : CUDA_SUCCESS;
}

static CUresult synchronize(void) {
  cj_stub_cost();
  while (now_ns() < __atomic_load_n(&busy_until, __ATOMIC_RELAXED)) {
  }
  return CUDA_SUCCESS;
}

/* The driver's own thread: wakes every millisecond, in the library's code. */
static void *driver_thread(void *unused) {
  (void)unused;
  for (;;) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
  return NULL;
}

static void start_driver_thread(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, driver_thread, NULL) == 0) pthread_detach(t);
}

static CUresult init(unsigned flags) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  cj_stub_cost();
  (void)flags;
  pthread_once(&once, start_driver_thread);
  return CUDA_SUCCESS;
}

/* A name and a description told apart, so that tests see which goes where in a message. */
static CUresult get_error_name(CUresult rc, const char **name) {
  cj_stub_cost();
  (void)rc;
  *name = "stub error name";
  return CUDA_SUCCESS;
}

static CUresult get_error_string(CUresult rc, const char **text) {
  cj_stub_cost();
  (void)rc;
  *text = "stub error text";
  return CUDA_SUCCESS;
}

/* CUJIT_STUB_DRIVER_VERSION (13000 unless set) and CUJIT_STUB_CC (the major compute capability, 9
** unless set): an older driver or GPU, for the checks that depend on them (test_stub_driver). */
int cj_stub_env_int(const char *name, int fallback) {
  const char *env = getenv(name);
  return env && *env ? atoi(env) : fallback;
}

static CUresult driver_version(int *v) {
  cj_stub_cost();
  *v = cj_stub_env_int("CUJIT_STUB_DRIVER_VERSION", 13000);
  return CUDA_SUCCESS;
}

static CUresult mem_info(size_t *free_bytes, size_t *total) {
  cj_stub_cost();
  if (!current) return CUDA_ERROR_INVALID_CONTEXT; /* as the real driver answers */
  size_t *used = counted(CJ_STUB_DEVICE, cj_stub_current_device());
  *total = cj_stub_device_memory();
  pthread_mutex_lock(&live_lock);
  *free_bytes = used && *total > *used ? *total - *used : 0;
  pthread_mutex_unlock(&live_lock);
  return CUDA_SUCCESS;
}

static CUresult retain(CUcontext *ctx, CUdevice d) { /* device 0's is &object_: stub_devices.c */
  cj_stub_cost();
  *ctx = d == 0 ? (CUcontext)&object_ : cj_stub_primary(d);
  return *ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult get_current(CUcontext *ctx) { /* a thread-local read in the real driver: free */
  *ctx = current;
  return CUDA_SUCCESS;
}

static CUresult set_current(CUcontext ctx) {
  cj_stub_cost();
  current = ctx;
  return CUDA_SUCCESS;
}

/* Contexts beside the primary one (&object_, device 0): cuCtxCreate hands out contexts[i] for
** the device it names, which cuCtxGetDevice tells back, so tests can give cujit a context of their
** own or one of another GPU. The context current at the last allocation, launch or stream made is
** kept (cujit_stub_work_context), so a test can tell where cujit did its work. */
#define STUB_CONTEXTS 16
static char contexts[STUB_CONTEXTS];
static CUdevice context_device[STUB_CONTEXTS];
static int contexts_made;
static CUcontext work_context;
static pthread_mutex_t context_lock = PTHREAD_MUTEX_INITIALIZER;

void *cujit_stub_work_context(void);
void *cujit_stub_work_context(void) {
  pthread_mutex_lock(&context_lock);
  void *ctx = work_context;
  pthread_mutex_unlock(&context_lock);
  return ctx;
}

static void note_work(void) {
  pthread_mutex_lock(&context_lock);
  work_context = current;
  pthread_mutex_unlock(&context_lock);
}

static CUresult ctx_create(CUcontext *ctx, CUctxCreateParams *params, unsigned flags, CUdevice d) {
  cj_stub_cost();
  (void)params, (void)flags;
  pthread_mutex_lock(&context_lock);
  int i = contexts_made < STUB_CONTEXTS ? contexts_made++ : -1;
  if (i >= 0) context_device[i] = d;
  pthread_mutex_unlock(&context_lock);
  if (i < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *ctx = (CUcontext)&contexts[i];
  current = *ctx; /* as the real one, it is made current */
  return CUDA_SUCCESS;
}

int cj_stub_context_device(CUcontext ctx) {
  char *c = (char *)ctx;
  if (c == &object_) return 0;
  if (c >= contexts && c < contexts + STUB_CONTEXTS) return context_device[c - contexts];
  return cj_stub_primary_device(ctx);
}

int cj_stub_current_device(void) {
  return cj_stub_context_device(current);
}

static CUresult ctx_get_device(CUdevice *d) {
  cj_stub_cost();
  int device = cj_stub_current_device();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *d = device;
  return CUDA_SUCCESS;
}

/* Streams are records of the context current when they were made (cuStreamGetCtx), on a list so
** that a handle the stand-in never made is told apart without reading it. */
typedef struct stub_stream {
  struct stub_stream *next;
  CUcontext ctx;
} stub_stream;
static stub_stream *streams;

static CUresult stream_create(CUstream *s, unsigned flags) {
  cj_stub_cost();
  (void)flags;
  stub_stream *r = malloc(sizeof *r);
  if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
  note_work();
  pthread_mutex_lock(&context_lock);
  r->ctx = current, r->next = streams, streams = r;
  pthread_mutex_unlock(&context_lock);
  *s = (CUstream)r;
  return CUDA_SUCCESS;
}

static CUresult stream_destroy(CUstream s) {
  cj_stub_cost();
  pthread_mutex_lock(&context_lock);
  stub_stream **at = &streams;
  while (*at && *at != (stub_stream *)s) at = &(*at)->next;
  stub_stream *r = *at;
  if (r) *at = r->next;
  pthread_mutex_unlock(&context_lock);
  free(r);
  return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult stream_get_ctx(CUstream s, CUcontext *ctx) {
  cj_stub_cost();
  if (s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) { /* every context has them */
    *ctx = current;
    return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
  }
  pthread_mutex_lock(&context_lock);
  stub_stream *r = streams;
  while (r && r != (stub_stream *)s) r = r->next;
  if (r) *ctx = r->ctx;
  pthread_mutex_unlock(&context_lock);
  return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Each loaded library its own handle, and each of its kernels by name its own function, so that
** stub_graph.c tells a node's kernel apart (two specialisations of a generic kernel are two
** programs with a kernel of the same name). */
static char libraries[256];
static unsigned library_count;
static struct {
  const void *library;
  char name[256];
} kernels[64];
static int kernel_count;

static CUresult library_load_data(CUlibrary *library) {
  cj_stub_cost();
  *library = (CUlibrary)&libraries[__atomic_fetch_add(&library_count, 1, __ATOMIC_RELAXED) % 256];
  return CUDA_SUCCESS;
}

static CUresult library_get_kernel(CUkernel *k, CUlibrary library, const char *name) {
  cj_stub_cost();
  pthread_mutex_lock(&context_lock);
  int i = 0;
  while (i < kernel_count && (kernels[i].library != library || strcmp(kernels[i].name, name) != 0))
    i++;
  if (i == kernel_count && kernel_count < 64 && strlen(name) < sizeof kernels[i].name) {
    kernels[i].library = library;
    strcpy(kernels[kernel_count++].name, name);
  }
  *k = i < kernel_count ? (CUkernel)&kernels[i] : (CUkernel)&object_;
  pthread_mutex_unlock(&context_lock);
  return CUDA_SUCCESS;
}

static CUresult kernel_get_function(CUfunction *f, CUkernel k) {
  cj_stub_cost();
  *f = (CUfunction)k;
  return CUDA_SUCCESS;
}

/* Every handle-making call writes the pretend handle into its first argument. */
static CUresult make_handle(void **out) {
  cj_stub_cost();
  *out = &object_;
  return CUDA_SUCCESS;
}

static CUresult mem_alloc(CUdeviceptr *p, size_t bytes) {
  cj_stub_cost();
  note_work();
  /* device memory of the context current now, as the real driver's (no second pretend call) */
  int d = current ? cj_stub_current_device() : 0;
  if (d < 0) d = 0;
  void *m = block_alloc_in(bytes, CJ_STUB_DEVICE, d, current ? (void *)current : &object_);
  *p = (CUdeviceptr)(uintptr_t)m;
  return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult mem_alloc_async(CUdeviceptr *p, size_t bytes, CUmemoryPool pool, CUstream s) {
  (void)pool, (void)s;
  return mem_alloc(p, bytes);
}

static CUresult mem_free(CUdeviceptr p) {
  cj_stub_cost();
  block_free((void *)(uintptr_t)p);
  return CUDA_SUCCESS;
}

static CUresult host_alloc(void **p, size_t bytes, unsigned flags) {
  cj_stub_cost();
  (void)flags;
  *p = block_alloc_kind(bytes, CJ_STUB_PINNED, 0);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult host_free(void *p) {
  cj_stub_cost();
  block_free(p);
  return CUDA_SUCCESS;
}

/* The block holding `p`, or NULL. */
static const block_header *block_at(uintptr_t p) {
  const block_header *found = NULL;
  pthread_mutex_lock(&live_lock);
  for (const block_header *h = live.next; h != &live && !found; h = h->next)
    if (p >= (uintptr_t)(h + 1) && p - (uintptr_t)(h + 1) < h->bytes) found = h;
  pthread_mutex_unlock(&live_lock);
  return found;
}

int cj_stub_is_pinned(const void *p) {
  const block_header *h = block_at((uintptr_t)p);
  return h && h->kind == CJ_STUB_PINNED;
}

/* Whether [p, p + bytes) lies in one block the stand-in made, or in registered host memory: the
** memory a copy may take as the device's. The real driver refuses an address it never allocated
** there (plain host memory given as a device address, or the two sides of a copy swapped) with
** CUDA_ERROR_INVALID_VALUE. */
int cj_stub_is_driver_memory(CUdeviceptr p, size_t bytes) {
  const block_header *h = block_at((uintptr_t)p);
  return bytes == 0 || (h && p + bytes - (uintptr_t)(h + 1) <= h->bytes) ||
         cj_stub_is_registered(p, bytes);
}

static CUresult copy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  cj_stub_cost();
  if (!cj_stub_is_driver_memory(dst, bytes) || !cj_stub_is_driver_memory(src, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  CUresult captured = cj_stub_capture_other(s, CU_GRAPH_NODE_TYPE_MEMCPY);
  if (captured != CUDA_SUCCESS) return captured;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return CUDA_SUCCESS;
}

static CUresult memset8(CUdeviceptr dst, unsigned char v, size_t bytes, CUstream s) {
  cj_stub_cost();
  if (!cj_stub_is_driver_memory(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  CUresult captured = cj_stub_capture_other(s, CU_GRAPH_NODE_TYPE_MEMSET);
  if (captured != CUDA_SUCCESS) return captured;
  memset((void *)(uintptr_t)dst, v, bytes);
  return CUDA_SUCCESS;
}

static CUresult copy_dtoh(void *dst, CUdeviceptr src, size_t bytes, CUstream s) {
  cj_stub_cost();
  if (!cj_stub_is_driver_memory(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  CUresult captured = cj_stub_capture_other(s, CU_GRAPH_NODE_TYPE_MEMCPY);
  if (captured != CUDA_SUCCESS) return captured;
  memmove(dst, (const void *)(uintptr_t)src, bytes);
  cj_stub_note_dtoh(dst);
  return CUDA_SUCCESS;
}

/* As the real driver: defaults (0, NULL, -1 ordinal unset) for an address it never allocated. */
static CUresult pointer_attributes(unsigned n, CUpointer_attribute *which, void **data,
                                   CUdeviceptr p) {
  cj_stub_cost();
  const block_header *h = block_at((uintptr_t)p);
  for (unsigned i = 0; i < n; i++) {
    switch (which[i]) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *(unsigned *)data[i] = !h                          ? 0
                             : h->kind == CJ_STUB_PINNED ? CU_MEMORYTYPE_HOST
                                                         : CU_MEMORYTYPE_DEVICE;
      break;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *(CUcontext *)data[i] = h ? (CUcontext)h->ctx : NULL;
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *(int *)data[i] = h ? h->ordinal : -2;
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      *(unsigned *)data[i] = h && h->kind == CJ_STUB_MANAGED;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *(CUdeviceptr *)data[i] = h ? (CUdeviceptr)(uintptr_t)(h + 1) : 0;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *(size_t *)data[i] = h ? h->bytes : 0;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

/* A call named in CUJIT_STUB_FAIL. */
static CUresult failing(void) {
  cj_stub_cost();
  const char *code = getenv("CUJIT_STUB_FAIL_CODE");
  return code ? (CUresult)atoi(code) : CUDA_ERROR_OUT_OF_MEMORY;
}

static int listed_in(const char *variable, const char *symbol) {
  const char *list = getenv(variable);
  size_t n = strlen(symbol);
  for (const char *at = list; at && (at = strstr(at, symbol)) != NULL; at += n)
    if ((at == list || at[-1] == ',') && (at[n] == ',' || at[n] == '\0')) return 1;
  return 0;
}

static CUresult occupancy(int *min_grid, int *block, CUfunction f, void *fn, size_t s, int l) {
  cj_stub_cost();
  (void)f, (void)fn, (void)s, (void)l;
  *min_grid = 132 * 8, *block = 256;
  return CUDA_SUCCESS;
}

static CUresult blocks_per_sm(int *n, CUfunction f, int threads, size_t shared) {
  cj_stub_cost();
  (void)f, (void)threads, (void)shared;
  *n = 8;
  return CUDA_SUCCESS;
}

static CUresult func_attribute(int *v, CUfunction_attribute a, CUfunction f) {
  cj_stub_cost();
  (void)f;
  *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}

#define ENTRY(name, fn)                                                                            \
  { #name, (void (*)(void))(fn) }
static const struct {
  const char *name;
  void (*fn)(void);
} entries[] = {
    ENTRY(cuInit, init),
    ENTRY(cuGetErrorName, get_error_name),
    ENTRY(cuGetErrorString, get_error_string),
    ENTRY(cuDriverGetVersion, driver_version),
    ENTRY(cuDeviceGetCount, cj_stub_get_count),
    ENTRY(cuDeviceGet, cj_stub_device_get),
    ENTRY(cuDeviceGetName, cj_stub_device_name),
    ENTRY(cuDeviceGetAttribute, cj_stub_device_attribute),
    ENTRY(cuDeviceTotalMem, cj_stub_total_mem),
    ENTRY(cuMemGetInfo, mem_info),
    ENTRY(cuDevicePrimaryCtxRetain, retain),
    ENTRY(cuCtxGetCurrent, get_current),
    ENTRY(cuCtxSetCurrent, set_current),
    ENTRY(cuMemAlloc, mem_alloc),
    ENTRY(cuMemFree, mem_free),
    ENTRY(cuMemAllocFromPoolAsync, mem_alloc_async),
    ENTRY(cuMemFreeAsync, mem_free),
    ENTRY(cuMemHostAlloc, host_alloc),
    ENTRY(cuMemFreeHost, host_free),
    ENTRY(cuMemcpyHtoDAsync, cj_stub_copy_htod),
    ENTRY(cuMemcpyDtoHAsync, copy_dtoh),
    ENTRY(cuMemcpyDtoDAsync, copy_dtod),
    ENTRY(cuMemsetD8Async, memset8),
    ENTRY(cuStreamCreate, stream_create),
    ENTRY(cuStreamDestroy, stream_destroy),
    ENTRY(cuStreamGetCtx, stream_get_ctx),
    ENTRY(cuCtxCreate, ctx_create),
    ENTRY(cuCtxGetDevice, ctx_get_device),
    ENTRY(cuLibraryGetModule, make_handle),
    ENTRY(cuEventCreate, cj_stub_event_create),
    ENTRY(cuEventDestroy, cj_stub_event_destroy),
    ENTRY(cuEventElapsedTime, cj_stub_event_elapsed),
    ENTRY(cuLibraryLoadData, library_load_data),
    ENTRY(cuLibraryGetKernel, library_get_kernel),
    ENTRY(cuKernelGetFunction, kernel_get_function),
    ENTRY(cuDeviceGetDefaultMemPool, make_handle),
    ENTRY(cuFuncGetParamInfo, cj_stub_param_info),
    ENTRY(cuOccupancyMaxPotentialBlockSize, occupancy),
    ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, blocks_per_sm),
    ENTRY(cuFuncGetAttribute, func_attribute),
    ENTRY(cuLaunchKernel, cj_stub_launch_plain),
    ENTRY(cuLaunchKernelEx, cj_stub_launch_ex),
    ENTRY(cuFuncSetAttribute, cj_stub_func_set_attribute),
    ENTRY(cuOccupancyMaxActiveClusters, cj_stub_max_active_clusters),
    ENTRY(cuStreamBeginCapture, cj_stub_capture_begin),
    ENTRY(cuStreamGetCaptureInfo, cj_stub_capture_info),
    ENTRY(cuStreamEndCapture, cj_stub_capture_end),
    ENTRY(cuGraphDestroy, cj_stub_graph_destroy),
    ENTRY(cuGraphGetNodes, cj_stub_graph_nodes),
    ENTRY(cuGraphNodeGetType, cj_stub_node_type),
    ENTRY(cuGraphInstantiateWithFlags, cj_stub_instantiate),
    ENTRY(cuGraphExecDestroy, cj_stub_exec_destroy),
    ENTRY(cuGraphExecKernelNodeSetParams, cj_stub_exec_set_kernel),
    ENTRY(cuGraphExecUpdate, cj_stub_exec_update),
    ENTRY(cuGraphLaunch, cj_stub_graph_launch),
    ENTRY(cuStreamQuery, query),
    ENTRY(cuEventQuery, query),
    ENTRY(cuStreamSynchronize, synchronize),
    ENTRY(cuEventSynchronize, synchronize),
    ENTRY(cuCtxSynchronize, synchronize),
    ENTRY(cuPointerGetAttributes, pointer_attributes),
    ENTRY(cuMemAllocManaged, cj_stub_alloc_managed),
    ENTRY(cuTensorMapEncodeTiled, cj_stub_tensor_map),
    ENTRY(cuMemPrefetchAsync, cj_stub_prefetch),
    ENTRY(cuMemAdvise, cj_stub_advise),
    ENTRY(cuMemHostRegister, cj_stub_host_register),
    ENTRY(cuMemHostUnregister, cj_stub_host_unregister),
    ENTRY(cuMemHostGetDevicePointer, cj_stub_host_device_pointer),
    ENTRY(cuIpcGetMemHandle, cj_stub_ipc_get_mem),
    ENTRY(cuIpcOpenMemHandle, cj_stub_ipc_open_mem),
    ENTRY(cuIpcCloseMemHandle, cj_stub_ipc_close_mem),
    ENTRY(cuIpcGetEventHandle, cj_stub_ipc_get_event),
    ENTRY(cuIpcOpenEventHandle, cj_stub_ipc_open_event),
    ENTRY(cuDeviceCanAccessPeer, cj_stub_can_access_peer),
    ENTRY(cuCtxEnablePeerAccess, cj_stub_enable_peer),
    ENTRY(cuDevicePrimaryCtxReset, cj_stub_primary_reset),
    ENTRY(cuMemcpyPeer, cj_stub_copy_peer),
    ENTRY(cuMemcpyPeerAsync, cj_stub_copy_peer_async),
    ENTRY(cuMemPoolSetAccess, cj_stub_pool_set_access),
    ENTRY(cuMemPoolTrimTo, cj_stub_pool_trim_to),
    ENTRY(cuEventRecord, cj_stub_event_record),
    ENTRY(cuStreamWaitEvent, cj_stub_stream_wait_event),
};

/* Everything else (launches, waits, queries, releases, attributes set) succeeds doing nothing;
** the calls cujit makes leave no output unwritten that it reads. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status) {
  (void)version, (void)flags;
  void (*fn)(void) = (void (*)(void))ok;
  for (size_t i = 0; i < sizeof entries / sizeof *entries; i++)
    if (strcmp(entries[i].name, symbol) == 0) fn = entries[i].fn;
  if (listed_in("CUJIT_STUB_FAIL", symbol)) fn = (void (*)(void))failing;
  if (listed_in("CUJIT_STUB_ABSENT", symbol)) {
    *pfn = NULL;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  memcpy(pfn, &fn, sizeof fn);
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}
