/*
** cujit.h -- the one public header of libcujit, a runtime-compilation kernel engine.
**
** A C program hands cujit a CUDA kernel as a string; cujit compiles it with NVRTC, keeps the PTX
** and CUBIN in a memory + disk cache, and launches it through the CUDA Driver API with arguments
** checked against the kernel's signature. libcuda and NVRTC are opened at run time, so every
** function here works (or fails with a clear status) on a machine with neither.
**
** Conventions, as SQLite's:
**   - every object is an opaque handle; freeing a NULL handle is a no-op;
**   - every fallible function returns a cujit_status; CUJIT_OK is zero;
**   - after a failure, cujit_errmsg(engine) says what went wrong and what to do. The message is
**     kept per engine and per thread, so threads sharing an engine never see each other's errors.
**     A call whose handle is NULL (no engine to tell) returns CUJIT_ERROR_INVALID_ARGUMENT and
**     records nothing: the engine's message is then an earlier failure's, not this one's;
**   - every struct a call reads or fills begins with `size_t size`, set by its INIT macro, so that
**     it can grow without breaking programs built against another header ("Structs that grow").
**
** Threads. Every call may run on any thread; per handle, what may run at once:
**   - engine: every call from many threads, but cujit_close (nothing else may run) and
**     cujit_set_warning_handler (set it before sharing the engine). The current device
**     (cujit_set_device) is per engine, not per thread as CUDA's is: one thread changes it for
**     all.
**   - kernel: launches, specialisation and queries from many threads (a concrete kernel's launch
**     takes no lock once it is loaded on the device; a generic kernel takes its own lock to find
**     its specialisation); not cujit_kernel_free while another thread uses it.
**   - program: taking kernels and reading it from many threads; not cujit_program_free meanwhile.
**   - cujit_program_compile_many and cujit_kernel_specialize_many run their compiles on threads
**     of their own (CUJIT_COMPILE_THREADS), made for the call and joined before it returns; a
**     first compile for a GPU may start the driver on a thread of its own (cuInit overlapping
**     NVRTC), joined when the driver is first needed or at cujit_close. No thread of cujit's
**     outlives cujit_close (the CPU device's workers included).
**   - buffer: copies and launches that use it from many threads (the device runs the work in the
**     order the calls are made; writes to the same bytes race as on any GPU); not freed meanwhile.
**   - stream, event: any of their calls from many threads, the work ordered as the calls happen to
**     run; not freed meanwhile.
**
** Lifetimes. Strings and pointers a call returns belong to the object they came from and live as
** long as it: a kernel's name, signature, source, type variables and cujit_param_info fields (the
** kernel; a specialisation lives as long as its generic kernel); a program's kernel names, PTX,
** CUBIN and log (the program); cujit_cache_dir (the engine); cujit_errmsg (until the next call on
** the same engine from the same thread). cujit_status_string, cujit_version and the dtype names
** are static.
**
** Structs that grow. Every struct a call reads (cujit_compile_options, cujit_launch_config) or
** fills (cujit_device_info, cujit_param_info, cujit_kernel_attributes, cujit_cache_stats,
** cujit_scalar) begins with `size_t size` (cujit_param_info's is `struct_size`, its `size` being
** the parameter's): the sizeof of the layout the program was built with.
** Declare each with its INIT macro (cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;), or write
** .size = sizeof(cujit_launch_config) in a designated initializer. Later headers add fields only
** at the end, after the whole of the earlier layout, and cujit keeps to the caller's size:
**   - a struct it reads: only the first `size` bytes are read; the fields of a newer layout that
**     an older program does not have take their defaults (zero, as the INIT macro sets them);
**   - a struct it fills: only the first min(size, this library's sizeof) bytes are written, and
**     `size` then says how many were filled; bytes past them are left as they were, so a newer
**     program on an older library sees which fields it got;
**   - a newer program on an older library may pass a struct larger than the library knows: the
**     bytes past the library's layout must be zero (the newer fields unset), else the call fails
**     with CUJIT_ERROR_UNSUPPORTED rather than ignore a setting it does not know;
**   - `size` 0 (a struct declared without its macro), below the struct's first layout, or above
**     4096 bytes (an uninitialised field) is CUJIT_ERROR_INVALID_ARGUMENT naming the struct and
**     the macro.
** cujit_arg has no size: arrays of it are passed, whose stride is the program's; it grows by new
** kinds whose values fit its union (a larger value goes by pointer, as v.bytes does).
**
** Streams. A NULL stream means the device's default stream everywhere (copies, fills, launches,
** library calls, event records and waits); cujit_stream_synchronize and cujit_stream_query take a
** stream (cujit_device_synchronize waits for a whole device). Work queued on the default stream is
** ordered after earlier work on it; launches, random fills and cujit_memset return at once (a
** memset on it is ordered before all later work on every stream, as cudaMemset of device memory
** is), while copies on it return when they are done, as cudaMemcpy does (a non-NULL stream makes
** them asynchronous too), and reductions always wait for their result.
**
** C++. The header works unchanged from C++11 on (g++ and clang++, -pedantic): the declarations are
** extern "C", and the CUJIT_ARG_* and *_INIT macros, which C writes with compound literals and
** designated initializers, are inline functions there giving the same values. It may share a
** translation unit with the toolkit's <cuda.h> and <cuda_runtime.h>, in either order.
**
** Code examples in this header are checked by tests/sh/test_header_examples.sh: each one is the
** run of lines after an "Example:" line, compiled as statements with cujit_engine *e in scope (as
** C11 and as C++11 to C++20). tests/sh/test_cxx.sh builds and runs a C++ program that uses every
** CUJIT_* macro of this header (checked by name) and compiles it beside <cuda.h> and
** <cuda_runtime.h>.
*/
#ifndef CUJIT_H
#define CUJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CUJIT_API __attribute__((visibility("default")))
#else
#define CUJIT_API
#endif

#define CUJIT_VERSION_MAJOR 0
#define CUJIT_VERSION_MINOR 1
#define CUJIT_VERSION_PATCH 0
#define CUJIT_VERSION_STRING "0.1.0"
#define CUJIT_VERSION_NUMBER                                                                       \
  (CUJIT_VERSION_MAJOR * 10000 + CUJIT_VERSION_MINOR * 100 + CUJIT_VERSION_PATCH)

/* ---------------------------------------------------------------------------------------------
** Status codes
** ------------------------------------------------------------------------------------------- */

typedef enum cujit_status {
  CUJIT_OK = 0,
  CUJIT_ERROR_INVALID_ARGUMENT, /* a NULL where a value is needed, a zero size, a bad option */
  CUJIT_ERROR_OUT_OF_HOST_MEMORY,
  CUJIT_ERROR_NO_DRIVER,     /* libcuda.so.1 could not be opened or is too old */
  CUJIT_ERROR_NO_DEVICE,     /* the driver is there but the device asked for is not */
  CUJIT_ERROR_NO_NVRTC,      /* NVRTC is needed (a cache miss) but could not be opened */
  CUJIT_ERROR_SIGNATURE,     /* a malformed kernel signature */
  CUJIT_ERROR_COMPILE,       /* NVRTC rejected the source; the message holds the mapped log */
  CUJIT_ERROR_NOT_FOUND,     /* a kernel name that is not in the source */
  CUJIT_ERROR_ARGUMENT,      /* launch arguments that do not match the signature */
  CUJIT_ERROR_LAUNCH_CONFIG, /* grid, block or shared memory outside the device's limits */
  CUJIT_ERROR_DEVICE_MEMORY, /* the device could not allocate the memory asked for */
  CUJIT_ERROR_DEVICE_FAULT,  /* a kernel faulted; the device refuses work until reset */
  CUJIT_ERROR_BUFFER_LOST,   /* the buffer lived on a device that has been reset since */
  CUJIT_ERROR_NOT_READY,     /* a stream or event query: the work has not finished yet */
  CUJIT_ERROR_CACHE,         /* the cache could not be read or written (only from cache calls) */
  CUJIT_ERROR_IO,            /* a file could not be read or written */
  CUJIT_ERROR_DRIVER,        /* any other error reported by the CUDA driver */
  CUJIT_ERROR_INTERRUPTED,   /* a wait was cut short by cujit_interrupt() */
  CUJIT_ERROR_UNSUPPORTED,   /* the driver, NVRTC or device lacks a feature that was asked for */
  CUJIT_STATUS_COUNT_
} cujit_status;

/* A fixed one-line description of a status code (never NULL). */
CUJIT_API const char *cujit_status_string(cujit_status status);

/* ---------------------------------------------------------------------------------------------
** Handles
** ------------------------------------------------------------------------------------------- */

typedef struct cujit_engine cujit_engine;   /* everything cujit knows; one per program */
typedef struct cujit_device cujit_device;   /* one GPU; owned by the engine, never freed */
typedef struct cujit_program cujit_program; /* a compiled translation unit */
typedef struct cujit_kernel cujit_kernel;   /* one kernel of a program, with its signature */
typedef struct cujit_buffer cujit_buffer;   /* device memory */
typedef struct cujit_host_buffer cujit_host_buffer; /* pinned (page-locked) host memory */
typedef struct cujit_stream cujit_stream;           /* a queue of work on one device */
typedef struct cujit_event cujit_event; /* a marker in a stream, for ordering and timing */

/* ---------------------------------------------------------------------------------------------
** Engine
** ------------------------------------------------------------------------------------------- */

/* Opens an engine. Never fails for want of a GPU, a driver or NVRTC: those are reported by the
** calls that need them. Reads CUJIT_DEVICE, CUJIT_NVRTC, CUJIT_CACHE, CUJIT_CACHE_DIR and
** CUJIT_CACHE_MAX from the environment, strictly (README.md, "Environment": a value not understood
** is an error or a warning, never a guess). On failure *out is NULL. */
CUJIT_API cujit_status cujit_open(cujit_engine **out);

/* Frees the engine and everything still alive in it (kernels, buffers, streams, events). Work
** still queued on the CPU device gets 2 s to finish; what still runs then is abandoned, with a
** warning, as a GPU's context teardown ends its kernels (docs/cpu.md). */
CUJIT_API void cujit_close(cujit_engine *engine);

/* The message of the last failure of a call on this engine from this thread; "" if none. The
** pointer stays valid until the next call on the same engine from the same thread. */
CUJIT_API const char *cujit_errmsg(const cujit_engine *engine);

/* The status of that last failure on this engine from this thread (CUJIT_OK if none yet). */
CUJIT_API cujit_status cujit_errcode(const cujit_engine *engine);

/* Installs a function that receives the engine's warnings (cache trouble, a slow compile note).
** By default warnings go to stderr prefixed "cujit: warning: ". NULL restores the default. */
typedef void (*cujit_warning_fn)(void *user, const char *message);
CUJIT_API void cujit_set_warning_handler(cujit_engine *engine, cujit_warning_fn fn, void *user);

/* Makes every wait in progress on this engine (the synchronize calls, a default-stream copy or
** fill waiting for earlier work, cujit_nccl_id_read), on every thread, end soon with
** CUJIT_ERROR_INTERRUPTED; the work queued goes on running. When no wait is in progress the
** interrupt stays pending, and the next wait to start reports it at once. Once a wait has
** reported it, it is no longer pending: waits that start later run normally. Safe to call from a
** signal handler and from any thread (it only bumps an atomic counter). */
CUJIT_API void cujit_interrupt(cujit_engine *engine);

/* Forgets an interrupt that no wait has reported yet (call it before starting new work, so a
** Ctrl-C that stopped host code does not cut short a later, unrelated wait). */
CUJIT_API void cujit_interrupt_clear(cujit_engine *engine);

/* Versions. The driver's and NVRTC's are written as major*1000 + minor*10 (CUDA's own way);
** each is 0, with the status saying why, when that library is missing. */
CUJIT_API const char *cujit_version(void);
CUJIT_API cujit_status cujit_driver_version(cujit_engine *engine, int *version);
CUJIT_API cujit_status cujit_nvrtc_version(cujit_engine *engine, int *version);

/* Writes len bytes to the file `path` the way cujit writes every file a user names (`cujit
** compile -o`, cuda.image.write, cuda.write_file, the REPL's :save and history), so that a write
** never harms what was there:
**   - a regular file, or a name that does not exist yet, is written to a temporary file in the
**     same directory and renamed into place: a failure (full disk, `ulimit -f`, an error half
**     way) leaves the old file as it was, or no file. A replaced file keeps its permissions; a
**     new one gets 0666 less the umask. Through a symbolic link, the file it points at is the
**     one replaced, and the link stays;
**   - a character device (/dev/null, /dev/stdout's terminal), a FIFO, or a regular file with
**     other hard links is opened and written in place, never replaced or removed; so is a
**     regular file in a directory where no temporary file can be made;
**   - "-" is standard output;
**   - a directory, a block device or a socket is refused.
** CUJIT_ERROR_IO with the reason otherwise. SIGXFSZ is held off for the write (a file past the
** size limit is an error, not the end of the process). engine may be NULL (no message then).
** Thread-safe. */
CUJIT_API cujit_status cujit_file_write(cujit_engine *engine, const char *path, const void *data,
                                        size_t len);

/* ---------------------------------------------------------------------------------------------
** Devices
** ------------------------------------------------------------------------------------------- */

typedef struct cujit_device_info {
  size_t size; /* set with CUJIT_DEVICE_INFO_INIT; the library fills the fields it covers */
  int ordinal;
  char name[256];
  int cc_major, cc_minor; /* compute capability */
  int multiprocessors;
  size_t total_memory; /* bytes */
  int max_threads_per_block;
  int max_block_dim[3];
  int max_grid_dim[3];
  int max_shared_per_block;       /* bytes without opt-in */
  int max_shared_per_block_optin; /* bytes with opt-in */
  int warp_size;
  int clock_khz;
  int memory_clock_khz;
  int memory_bus_width; /* bits */
  int pci_bus_id;
} cujit_device_info;

#ifndef __cplusplus
#define CUJIT_DEVICE_INFO_INIT                                                                     \
  { .size = sizeof(cujit_device_info) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_device_info cujit_device_info_init_(void) {
  cujit_device_info v = cujit_device_info();
  v.size = sizeof v;
  return v;
}
#define CUJIT_DEVICE_INFO_INIT (cujit_device_info_init_())
#endif

/* Number of GPUs the driver sees. Fails with NO_DRIVER when there is no driver. */
CUJIT_API cujit_status cujit_device_count(cujit_engine *engine, int *count);

/* The CPU device: the same kernels compiled by the system C++ compiler (g++, or CUJIT_CXX) and
** run on the host's cores, with no GPU, driver or NVRTC needed (docs/cpu.md). It is never chosen
** on its own: pass this ordinal to cujit_device_get or cujit_set_device, or set CUJIT_DEVICE=cpu.
** Its arch is "cpu"; cujit_device_count does not count it. */
#define CUJIT_DEVICE_CPU (-1)

/* The device with this ordinal (0-based, or CUJIT_DEVICE_CPU). Devices belong to the engine; they
** are never freed. */
CUJIT_API cujit_status cujit_device_get(cujit_engine *engine, int ordinal, cujit_device **out);

/* The device that new kernels, buffers and streams go to: CUJIT_DEVICE (an ordinal or "cpu"),
** else 0, until changed. Per engine, not per thread (unlike CUDA's current device): setting it
** affects every thread. */
CUJIT_API cujit_status cujit_current_device(cujit_engine *engine, cujit_device **out);
CUJIT_API cujit_status cujit_set_device(cujit_engine *engine, int ordinal);

CUJIT_API cujit_status cujit_device_info_get(cujit_device *device, cujit_device_info *info);
CUJIT_API int cujit_device_ordinal(const cujit_device *device);

/* "sm_90" for a compute capability 9.0 device; "cpu" for the CPU device. */
CUJIT_API cujit_status cujit_device_arch(cujit_device *device, char *buf, size_t len);

/* Free and total device memory in bytes, as the driver reports them now. */
CUJIT_API cujit_status cujit_device_memory(cujit_device *device, size_t *free_bytes,
                                           size_t *total_bytes);

/* Bytes currently allocated through cujit on this device (in live buffers): the sizes asked for,
** on every device, not what the allocator rounds them up to (a 4-byte buffer counts 4). */
CUJIT_API size_t cujit_device_allocated(const cujit_device *device);

/* Device buffers come from a memory pool (the driver's stream-ordered allocator on CUDA): an
** allocation and a free never wait for the device, and freeing a buffer that queued work still
** uses is safe (the memory is reused only after that work). The pool keeps freed memory for the
** next allocation; an allocation that finds the device full trims the pool and retries before
** failing. CUJIT_POOL=off allocates and frees each buffer with the driver directly (a free then
** waits for the device). cujit_device_pool_reserved gives the bytes the pool holds now (in use or
** not; 0 without a pool); cujit_device_trim waits for the device, then gives the pool's unused
** memory back (for other processes or libraries). */
CUJIT_API cujit_status cujit_device_pool_reserved(cujit_device *device, size_t *bytes);
CUJIT_API cujit_status cujit_device_trim(cujit_device *device);

/* Waits until all work cujit queued on the device has finished (its default stream and every
** cujit stream of it; work another library queued on its own streams is not waited for). Reports
** faults with the kernel that caused them when cujit can tell. Every wait (devices, streams,
** events, copies to the host) spins for up to CUJIT_WAIT microseconds (default 1000), then
** sleeps in short naps, so a long wait does not hold a core; CUJIT_WAIT=spin never sleeps. */
CUJIT_API cujit_status cujit_device_synchronize(cujit_device *device);

/* CUJIT_OK while the device is usable; CUJIT_ERROR_DEVICE_FAULT after a sticky fault, with the
** message saying which kernel faulted and how to recover. */
CUJIT_API cujit_status cujit_device_status(cujit_device *device);

/* Recreates the device's primary context after a fault. Buffers, streams and events of the device
** become lost (using them reports BUFFER_LOST / a clear error; freeing them is still fine);
** compiled kernels stay valid and are reloaded on their next launch. As a GPU's reset, it ends
** the kernel running now and drops the work queued (the CPU device abandons the kernel, wherever
** it is: docs/cpu.md). */
CUJIT_API cujit_status cujit_device_reset(cujit_device *device);

/* Several GPUs (docs/scaling.md). Buffers, streams and events belong to the device they were made
** on (the current one, or the one given to the _on calls); a launch runs on its stream's device,
** or the current one, and refuses a buffer of another device (naming the parameter and both
** devices) unless peer access from the launch's device to the buffer's was enabled here. Peer
** access lets kernels on `device` read and write `peer`'s memory over NVLink or PCIe; both must
** be GPUs; CUJIT_ERROR_UNSUPPORTED when the hardware cannot. A reset of either device drops it. */
CUJIT_API cujit_status cujit_device_enable_peer(cujit_device *device, cujit_device *peer);

/* ---------------------------------------------------------------------------------------------
** Compiling
** ------------------------------------------------------------------------------------------- */

typedef struct cujit_compile_options {
  size_t size; /* sizeof(cujit_compile_options): use CUJIT_COMPILE_OPTIONS_INIT */
  /* "sm_90" or "compute_90"; NULL: the current device's. "sm_90a" (issue 26) targets Hopper's
  ** arch-specific instructions (wgmma, setmaxnreg), which sm_90 refuses: a target of its own, in
  ** the cache key apart from sm_90, whose code runs only on sm_90 devices. With NULL, a source
  ** that uses wgmma, setmaxnreg or tcgen05, or tests __CUDA_ARCH_FEAT_SM... or
  ** __CUDA_ARCH_SPECIFIC__, is compiled for the device's arch-specific target (sm_90a on an sm_90
  ** device); a device before sm_90 has none. An arch given is compiled as given. */
  const char *arch;
  int fast_math; /* --use_fast_math */
  /* -lineinfo, also on for every compile when CUJIT_LINEINFO=1. With it on, the line table names
  ** real files, for profilers and debuggers: a program read from a file names that file, text
  ** given as a string is kept in <cache dir>/sources/ (a private directory removed at
  ** cujit_close when the disk cache is off) and named there, a kernel's body as a file of its
  ** own whose line 1 is the body's first line. cujit_cache_clear removes the kept copies. */
  int line_info;
  int debug;                  /* -G (device debug) */
  const char *const *defines; /* "NAME" or "NAME=VALUE" */
  size_t define_count;
  const char *const *include_dirs;
  size_t include_dir_count;
  const char *const *extra_flags; /* passed to NVRTC as they are */
  size_t extra_flag_count;
  const char *std; /* "c++17" (default), "c++20", ... */
  /* The signatures of the program's kernels, "scale(float *x, int n)", for cujit_program_compile
  ** and _compile_file: given, they replace reading the kernels from the source (needed when a
  ** macro writes a kernel), and NVRTC must compile each of them with exactly these parameters.
  ** Ignored by cujit_kernel_define and cujit_elementwise_define, which have theirs already. */
  const char *const *signatures;
  size_t signature_count;
  /* Template kernels to instantiate, as CuPy's name_expressions: "scale<float>"; each becomes a
  ** kernel of that name (cujit_program_kernel(p, "scale<float>", &k)) whose parameters are the
  ** template's with the arguments put in. For cujit_program_compile and _compile_file. */
  const char *const *name_expressions;
  size_t name_expression_count;
  /* Pointer parameters that must not be null. Any pointer parameter takes a null pointer (a NULL
  ** buffer, CUJIT_ARG_DEVPTR 0; Lua: nil), as real code passes NULL for optional inputs, unless
  ** named here: "x" is the pointer parameter x of each kernel that has one, "*" every pointer
  ** parameter not declared "= NULL". A name that is no pointer parameter of any kernel is an
  ** error. Such a parameter refuses a null pointer at launch, naming it. Ignored by
  ** cujit_elementwise_define, whose arrays all refuse a null pointer. */
  const char *const *nonnull;
  size_t nonnull_count;
  /* Files of device code linked with the program at run time (docs/cuda-code.md, "Linking device
  ** code"), as Numba's link=: the program declares `extern __device__` functions a file defines.
  ** By extension: .cu (compiled by cujit to LTO-IR with the program's options, kept in the cache),
  ** .ptx, .ltoir, .fatbin, .cubin and .a (nvcc -rdc / -dlto output). A relative name is the
  ** working directory's. With link files the program is compiled to LTO-IR and linked by
  ** nvJitLink (libnvJitLink.so.13/.12, or CUJIT_NVJITLINK) for an sm_NN arch; the linked program is
  ** cached under a key holding every file's contents, so an edited file is compiled again. Without
  ** nvJitLink, .cu files are compiled as one unit with the program (each #include'd after it, a
  ** warning says so) and other types are refused. The CPU device takes .cu files only, compiled
  ** the same way into its shared object. Failures (CUJIT_ERROR_INVALID_ARGUMENT unless said):
  ** a file that cannot be read, an extension not listed, a non-.cu file on the CPU device or
  *without
  ** nvJitLink (CUJIT_ERROR_UNSUPPORTED), a compute_NN arch with other than .cu/.ltoir files; a
  ** symbol no file defines is CUJIT_ERROR_COMPILE naming it and the files. */
  const char *const *link;
  size_t link_count;
} cujit_compile_options;

#ifndef __cplusplus
#define CUJIT_COMPILE_OPTIONS_INIT                                                                 \
  { .size = sizeof(cujit_compile_options) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_compile_options cujit_compile_options_init_(void) {
  cujit_compile_options v = cujit_compile_options();
  v.size = sizeof v;
  return v;
}
#define CUJIT_COMPILE_OPTIONS_INIT (cujit_compile_options_init_())
#endif

/* The compile options described, one entry per member of cujit_compile_options (its `size` and
** the lists' counts aside), from cujit's own table: what bindings and tools read so that they
** accept every option by its name without listing them again (the Lua options table, `cujit
** compile`'s flags). The entries are cujit's; a later version may add fields at the end. */
typedef enum cujit_option_kind {
  CUJIT_OPTION_TEXT,   /* a const char * (NULL: the default) */
  CUJIT_OPTION_SWITCH, /* an int, 0 or 1 */
  CUJIT_OPTION_LIST    /* a const char *const * and its size_t count */
} cujit_option_kind;

typedef struct cujit_compile_option_info {
  const char *field;    /* the member: "extra_flags" */
  const char *lua_name; /* the key in a Lua options table: "flags" */
  const char *cli_flag; /* the flag of `cujit compile`: "-X"; NULL when it has none */
  const char *value;    /* what a value looks like, for help texts: "FLAG"; NULL for a switch */
  const char *doc;      /* one line saying what it does */
  cujit_option_kind kind;
  size_t offset;       /* offsetof(cujit_compile_options, <field>) */
  size_t count_offset; /* a list's count member's offset; 0 for the others */
} cujit_compile_option_info;

/* The option at `index` (0, 1, ...), or NULL past the last. */
CUJIT_API const cujit_compile_option_info *cujit_compile_option(size_t index);

/* Compiles a translation unit holding one or more __global__ kernels: extern "C" ones by their
** name, C++-linkage ones by their qualified name ("k", "ns::k"), template instantiations named in
** options->name_expressions, and those of headers it includes by quoted name (docs/cuda-code.md).
** Their signatures are read from the source (or taken from options->signatures), and each is
** confirmed against what
** NVRTC compiled: a kernel inside an inactive #if is left out, and one whose compiled parameters
** differ from those read is a compile error naming it. `name` names the source in errors
*("saxpy.cu"); NULL gives
** "<source>". A cache hit never runs NVRTC. */
CUJIT_API cujit_status cujit_program_compile(cujit_engine *engine, const char *source,
                                             const char *name, const cujit_compile_options *options,
                                             cujit_program **out);

/* Reads a .cu file and compiles it as above, naming it by its path in errors. */
CUJIT_API cujit_status cujit_program_compile_file(cujit_engine *engine, const char *path,
                                                  const cujit_compile_options *options,
                                                  cujit_program **out);

CUJIT_API void cujit_program_free(cujit_program *program);

/* Compiles `count` independent programs at once, each as cujit_program_compile would, on up to
** CUJIT_COMPILE_THREADS threads (default: the cores this process may run on; 1 compiles them one
** after another on the calling thread). Item i is sources[i], named names[i] (names may be NULL,
** and any entry NULL, for "<source>"), compiled with options[i] (options may be NULL, and any
** entry NULL, for the defaults; the same pointer may be given for every item). Each item is
** looked up in the cache first (a hit costs what it costs alone); an item given twice in one call
** (the same source, name and options pointer) is compiled once, its repeats then taken from the
** memory cache. Every item is tried whatever the others do:
**   - programs[i] is the program, or NULL when item i failed; each is freed with
**     cujit_program_free (or at cujit_close), as one cujit_program_compile returns;
**   - statuses[i] (statuses may be NULL) is item i's status;
**   - cujit_program_compile_many_message(engine, i) is item i's message ("" for one compiled).
** Returns CUJIT_OK when every item compiled; else the status of the first that failed, with
** cujit_errmsg saying how many failed and the first one's message. INVALID_ARGUMENT (nothing
** compiled, every programs[i] NULL) for a NULL `sources` or `programs` with count > 0, or a
** CUJIT_COMPILE_THREADS that is not a whole number from 1 to 1024 (the message quotes it).
** count 0 does nothing and returns CUJIT_OK. Threads: the threads are made for the call and
** joined before it returns; the engine's rules hold as for cujit_program_compile from as many
** threads. Example:
**     const char *srcs[] = {"extern \"C\" __global__ void a(int *x) { *x = 1; }",
**                           "extern \"C\" __global__ void b(int *x) { *x = 2; }"};
**     cujit_program *progs[2];
**     cujit_status each[2];
**     const char *why = ""; // the first failure's message, if any
**     if (cujit_program_compile_many(e, 2, srcs, NULL, NULL, progs, each) != CUJIT_OK)
**       why = cujit_program_compile_many_message(e, each[0] != CUJIT_OK ? 0 : 1);
**     for (size_t i = 0; i < 2; i++) cujit_program_free(progs[i]);
*/
CUJIT_API cujit_status cujit_program_compile_many(cujit_engine *engine, size_t count,
                                                  const char *const *sources,
                                                  const char *const *names,
                                                  const cujit_compile_options *const *options,
                                                  cujit_program **programs, cujit_status *statuses);

/* The message of item `index` of the last cujit_program_compile_many on this engine from this
** thread: "" for an item that compiled; NULL past that call's count, or before any such call.
** Lives until the next cujit_program_compile_many (or cujit_kernel_specialize_many) on the same
** engine from the same thread, or cujit_close. */
CUJIT_API const char *cujit_program_compile_many_message(const cujit_engine *engine, size_t index);

/* The kernels the program defines, in source order. */
CUJIT_API size_t cujit_program_kernel_count(const cujit_program *program);
/* NULL past the last; the name lives as long as the program. */
CUJIT_API const char *cujit_program_kernel_name(const cujit_program *program, size_t index);

/* The kernel called `name`. The kernel keeps what it needs of the program: freeing the program
** first is fine. Fails with NOT_FOUND, listing the kernels there are. */
CUJIT_API cujit_status cujit_program_kernel(cujit_program *program, const char *name,
                                            cujit_kernel **out);

/* PTX and CUBIN of the program (NUL-terminated PTX; CUBIN as bytes). The pointers live as long as
** the program. A program compiled for compute_XX has no CUBIN (NULL, 0). */
CUJIT_API const char *cujit_program_ptx(const cujit_program *program, size_t *len);
CUJIT_API const void *cujit_program_cubin(const cujit_program *program, size_t *len);

/* The compile log (warnings), "" when NVRTC said nothing; a cache hit has the log of the compile
** that made the entry. */
CUJIT_API const char *cujit_program_log(const cujit_program *program);

/* 1 if the program came from the cache (memory or disk), 0 if NVRTC compiled it. */
CUJIT_API int cujit_program_from_cache(const cujit_program *program);

/* Milliseconds spent getting the program: the compile, or the cache lookup on a hit. */
CUJIT_API double cujit_program_milliseconds(const cujit_program *program);

/* Defines a kernel from a signature and a body, as Numba's @cuda.jit. Example:
**     cujit_kernel *k;
**     cujit_status st = cujit_kernel_define(e, "saxpy(float a, const float *x, float *y, int n)",
**                                           "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
**                                           "if (i < n) y[i] = a * x[i] + y[i];",
**                                           NULL, NULL, &k);
** Type variables (a type named by one upper-case letter, optionally followed by digits: T, U,
** T2) make the kernel generic: it is specialised and compiled on first use for each concrete type
** list, from the element types of the buffers passed, or explicitly with cujit_kernel_specialize.
** A non-generic kernel is compiled (or fetched from the cache) here; errors name the kernel and
** the line within `body`. `preamble` (may be NULL) is code placed before the kernel: device
** functions, #includes, constants; its lines are reported as such. */
CUJIT_API cujit_status cujit_kernel_define(cujit_engine *engine, const char *signature,
                                           const char *body, const char *preamble,
                                           const cujit_compile_options *options,
                                           cujit_kernel **out);

CUJIT_API void cujit_kernel_free(cujit_kernel *kernel);

/* The kernel's name, its signature as written back by cujit ("saxpy(float a, const float *x,
** float *y, int n)"), and the full source given to NVRTC ("" for an unspecialised generic kernel).
** Each lives as long as the kernel. */
CUJIT_API const char *cujit_kernel_name(const cujit_kernel *kernel);
CUJIT_API const char *cujit_kernel_signature(const cujit_kernel *kernel);
CUJIT_API const char *cujit_kernel_source(const cujit_kernel *kernel);

/* The program behind a concrete kernel (NULL for an unspecialised generic kernel). Owned by the
** kernel. */
CUJIT_API const cujit_program *cujit_kernel_program(const cujit_kernel *kernel);

/* 1 if the kernel has type variables. */
CUJIT_API int cujit_kernel_is_generic(const cujit_kernel *kernel);

/* ---------------------------------------------------------------------------------------------
** Types
** ------------------------------------------------------------------------------------------- */

typedef enum cujit_dtype {
  CUJIT_DTYPE_NONE = 0, /* untyped bytes: accepted by any pointer parameter */
  CUJIT_F16,
  CUJIT_F32,
  CUJIT_F64,
  CUJIT_I8,
  CUJIT_I16,
  CUJIT_I32,
  CUJIT_I64,
  CUJIT_U8,
  CUJIT_U16,
  CUJIT_U32,
  CUJIT_U64,
  CUJIT_BF16, /* bfloat16 (__nv_bfloat16); last, so that the values above stay as they were */
  CUJIT_DTYPE_COUNT_
} cujit_dtype;

/* "f32", "i64", ... ("bytes" for NONE), the C type ("float", "long long", "__half",
** "__nv_bfloat16", ...), the size in bytes ("?", "?" and 0 for a value that is no dtype), and
** the dtype named by either spelling (CUJIT_DTYPE_NONE when unknown or NULL). */
CUJIT_API const char *cujit_dtype_name(cujit_dtype dtype);
CUJIT_API const char *cujit_dtype_ctype(cujit_dtype dtype);
CUJIT_API size_t cujit_dtype_size(cujit_dtype dtype);
CUJIT_API cujit_dtype cujit_dtype_from_name(const char *name);

/* Explicitly specialises a generic kernel: `types` gives each type variable in order of first
** appearance, e.g. {CUJIT_F64} for axpy(T a, const T *x, T *y, int n). The result is owned by
** the generic kernel (do not free it) and is cached: the same list gives the same kernel. */
CUJIT_API cujit_status cujit_kernel_specialize(cujit_kernel *kernel, const cujit_dtype *types,
                                               size_t count, cujit_kernel **out);

/* Specialises a generic kernel for `lists` type lists at once, ahead of their first launches:
** list i is types[i * n] .. types[i * n + n - 1], n being the kernel's number of type variables.
** The lists not yet specialised are compiled at once as cujit_program_compile_many compiles
** (CUJIT_COMPILE_THREADS), then each is taken as cujit_kernel_specialize takes it: out[i] (out may
** be NULL: only compiled and kept on the kernel) is the specialisation, owned by the generic
** kernel, or NULL when list i failed; statuses[i] (may be NULL) its status, and
** cujit_program_compile_many_message(engine, i) its message. Returns CUJIT_OK when every list
** was specialised, else the first failure's status with cujit_errmsg saying how many failed and
** the first one's message. INVALID_ARGUMENT at once for a kernel that is not generic, or NULL
** types with lists > 0. Threads: as cujit_kernel_specialize. */
CUJIT_API cujit_status cujit_kernel_specialize_many(cujit_kernel *kernel, size_t lists,
                                                    const cujit_dtype *types, cujit_kernel **out,
                                                    cujit_status *statuses);

/* Parameters, as the signature declares them. */
typedef enum cujit_param_kind {
  CUJIT_PARAM_SCALAR,  /* passed by value: int, float, ... */
  CUJIT_PARAM_POINTER, /* a pointer to device memory */
} cujit_param_kind;

typedef struct cujit_param_info {
  size_t struct_size; /* set with CUJIT_PARAM_INFO_INIT (`size` is the parameter's) */
  const char *name;
  const char *type; /* as written, with type variables resolved when concrete: "const float *" */
  cujit_param_kind kind;
  cujit_dtype dtype;  /* scalar type, or element type of a pointer; NONE for void * / structs */
  int is_const;       /* pointer to const */
  size_t size, align; /* of the parameter itself (8 for a pointer) */
  size_t offset;      /* in the parameter buffer */
  int type_var;       /* index of the type variable this uses, or -1 */
  int nullable;       /* a pointer that takes a null pointer (Lua: nil): one the compile options'
                      ** nonnull does not name */
} cujit_param_info;

#ifndef __cplusplus
#define CUJIT_PARAM_INFO_INIT                                                                      \
  { .struct_size = sizeof(cujit_param_info) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_param_info cujit_param_info_init_(void) {
  cujit_param_info v = cujit_param_info();
  v.struct_size = sizeof v;
  return v;
}
#define CUJIT_PARAM_INFO_INIT (cujit_param_info_init_())
#endif

CUJIT_API size_t cujit_kernel_param_count(const cujit_kernel *kernel);
/* Fills `info`; its strings live as long as the kernel. */
CUJIT_API cujit_status cujit_kernel_param(const cujit_kernel *kernel, size_t index,
                                          cujit_param_info *info);
CUJIT_API size_t cujit_kernel_type_var_count(const cujit_kernel *kernel);
CUJIT_API const char *cujit_kernel_type_var(const cujit_kernel *kernel, size_t index);

typedef struct cujit_kernel_attributes {
  size_t size;   /* set with CUJIT_KERNEL_ATTRIBUTES_INIT */
  int registers; /* per thread */
  int static_shared_bytes;
  int const_bytes;
  int local_bytes;           /* per thread (spills and stack) */
  int max_threads_per_block; /* for this kernel on its device */
  int ptx_version, binary_version;
  /* Added later (a struct that grows): the bytes ptxas spilled to local memory per thread, as
  ** its report says them; -1 when the compile made no report (it makes one when given
  ** --ptxas-options=-v: `cujit compile -v`, extra_flags) or on the CPU device. */
  int spill_store_bytes, spill_load_bytes;
} cujit_kernel_attributes;

#ifndef __cplusplus
#define CUJIT_KERNEL_ATTRIBUTES_INIT                                                               \
  { .size = sizeof(cujit_kernel_attributes) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_kernel_attributes cujit_kernel_attributes_init_(void) {
  cujit_kernel_attributes v = cujit_kernel_attributes();
  v.size = sizeof v;
  return v;
}
#define CUJIT_KERNEL_ATTRIBUTES_INIT (cujit_kernel_attributes_init_())
#endif

/* Attributes on the current device (loads the kernel there if needed). */
CUJIT_API cujit_status cujit_kernel_attributes_get(cujit_kernel *kernel,
                                                   cujit_kernel_attributes *attrs);

/* The same attributes as the compiler reported them, with no device: read from the kernel's
** compiled program alone (ptxas's report in its log, its PTX), so it works where no GPU is, for
** a target other than the current device's. The report is there when the compile was given
** --ptxas-options=-v or -Xptxas=-v (extra_flags; `cujit compile -v` passes it), which also keeps
** NVRTC and nvJitLink from handing back a binary from their own cache (the driver's compute cache,
** CUDA 12.9+), since such a binary comes without the report:
**   registers, local_bytes (the stack frame), spill_store_bytes, spill_load_bytes and
**   static_shared_bytes from the report; max_threads_per_block from the PTX's launch bounds
**   (.maxntid, .reqntid) and the registers (given out per warp in units of 256 from four
**   register files of 16K, one per quarter of the SM, as on the GPUs from sm_50 on), at most
**   1024; ptx_version from the PTX
**   (".version 9.0" is 90) and binary_version from the arch (sm_90 is 90, 0 for compute_XX);
**   const_bytes -1 (not reported).
** Fails: CUJIT_ERROR_INVALID_ARGUMENT for a NULL or generic kernel (specialise it first), or a
** struct without its size; CUJIT_ERROR_NOT_FOUND when the log holds no report for the kernel
** (the message says to pass --ptxas-options=-v), or the program is the CPU device's.
** Thread safety: as cujit_kernel_attributes_get; the kernel must stay alive during the call. */
CUJIT_API cujit_status cujit_kernel_resources_get(cujit_kernel *kernel,
                                                  cujit_kernel_attributes *attrs);

/* ---------------------------------------------------------------------------------------------
** Launching
** ------------------------------------------------------------------------------------------- */

typedef enum cujit_arg_kind {
  CUJIT_ARG_INT,    /* v.i: any integer; range-checked against the parameter (bool: 0..1) */
  CUJIT_ARG_UINT,   /* v.u */
  CUJIT_ARG_FLOAT,  /* v.f: converted to the parameter's type; integer parameters need an exact,
                       in-range integral value */
  CUJIT_ARG_BUFFER, /* v.buffer: a cujit device buffer, for pointer parameters */
  CUJIT_ARG_DEVPTR, /* v.devptr: a raw device address, for pointer parameters */
  CUJIT_ARG_BYTES,  /* v.bytes: exactly the parameter's size, copied as is (structs) */
} cujit_arg_kind;

typedef struct cujit_arg {
  cujit_arg_kind kind;
  union {
    int64_t i;
    uint64_t u;
    double f;
    cujit_buffer *buffer;
    uint64_t devptr;
    const void *bytes;
  } v;
} cujit_arg;

/* Helpers to build arguments in place: CUJIT_ARG_I, _U and _F for numbers, CUJIT_ARG_BUF for a
** cujit buffer, CUJIT_ARG_PTR for a raw device address (a CUdeviceptr, or a pointer from
** cudaMalloc cast to uintptr_t), CUJIT_ARG_RAW for a pointer to exactly the parameter's bytes (a
** struct passed by value; the bytes are read by the launch call, not kept). Example:
**     cujit_kernel *k = NULL; cujit_buffer *x = NULL, *y = NULL; int n = 1024;
**     cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
**     cfg.grid[0] = (n + 255) / 256, cfg.block[0] = 256;
**     cujit_arg args[] = {CUJIT_ARG_F(2.0f), CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y), CUJIT_ARG_I(n)};
**     cujit_launch(k, &cfg, args, 4);
*/
#ifndef __cplusplus
#define CUJIT_ARG_I(x) ((cujit_arg){.kind = CUJIT_ARG_INT, .v.i = (int64_t)(x)})
#define CUJIT_ARG_U(x) ((cujit_arg){.kind = CUJIT_ARG_UINT, .v.u = (uint64_t)(x)})
#define CUJIT_ARG_F(x) ((cujit_arg){.kind = CUJIT_ARG_FLOAT, .v.f = (double)(x)})
#define CUJIT_ARG_BUF(x) ((cujit_arg){.kind = CUJIT_ARG_BUFFER, .v.buffer = (x)})
#define CUJIT_ARG_PTR(x) ((cujit_arg){.kind = CUJIT_ARG_DEVPTR, .v.devptr = (uint64_t)(x)})
#define CUJIT_ARG_RAW(p) ((cujit_arg){.kind = CUJIT_ARG_BYTES, .v.bytes = (p)})
#else
/* C++ has no compound literals and (even C++20) no nested designators: the same values, made by
** inline functions, so the macros read the same in both languages. */
static inline cujit_arg cujit_arg_int_(int64_t x) {
  cujit_arg a = cujit_arg();
  a.kind = CUJIT_ARG_INT;
  a.v.i = x;
  return a;
}
static inline cujit_arg cujit_arg_uint_(uint64_t x) {
  cujit_arg a = cujit_arg();
  a.kind = CUJIT_ARG_UINT;
  a.v.u = x;
  return a;
}
static inline cujit_arg cujit_arg_float_(double x) {
  cujit_arg a = cujit_arg();
  a.kind = CUJIT_ARG_FLOAT;
  a.v.f = x;
  return a;
}
static inline cujit_arg cujit_arg_buffer_(cujit_buffer *x) {
  cujit_arg a = cujit_arg();
  a.kind = CUJIT_ARG_BUFFER;
  a.v.buffer = x;
  return a;
}
static inline cujit_arg cujit_arg_devptr_(uint64_t x) {
  cujit_arg a = cujit_arg();
  a.kind = CUJIT_ARG_DEVPTR;
  a.v.devptr = x;
  return a;
}
static inline cujit_arg cujit_arg_bytes_(const void *p) {
  cujit_arg a = cujit_arg();
  a.kind = CUJIT_ARG_BYTES;
  a.v.bytes = p;
  return a;
}
#define CUJIT_ARG_I(x) (cujit_arg_int_(static_cast<int64_t>(x)))
#define CUJIT_ARG_U(x) (cujit_arg_uint_(static_cast<uint64_t>(x)))
#define CUJIT_ARG_F(x) (cujit_arg_float_(static_cast<double>(x)))
#define CUJIT_ARG_BUF(x) (cujit_arg_buffer_(x))
#define CUJIT_ARG_PTR(x) (cujit_arg_devptr_(static_cast<uint64_t>(x)))
#define CUJIT_ARG_RAW(p) (cujit_arg_bytes_(p))
#endif

typedef struct cujit_launch_config {
  size_t size;      /* sizeof(cujit_launch_config): use CUJIT_LAUNCH_CONFIG_INIT */
  unsigned grid[3]; /* 0 in y or z means 1 */
  unsigned block[3];
  unsigned shared_bytes; /* dynamic shared memory; above 48 KiB cujit opts the kernel in
                            (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, once per kernel and
                            size) up to the device's opt-in limit, refused beyond it */
  cujit_stream *stream;  /* NULL: the device's default stream */
  /* Added later (issue 26): launch attributes. Each is off at 0, as the INIT macro leaves it, and
  ** a configuration with none set (or a program built before them, whose smaller size gives
  ** zeros) launches as before (cuLaunchKernel); with one set, the launch goes through
  ** cuLaunchKernelEx with those attributes (resolved at run time; a driver without it refuses
  ** the attributes only, saying so). Refused with CUJIT_ERROR_LAUNCH_CONFIG (clusters, fit) or
  ** CUJIT_ERROR_UNSUPPORTED (the device), each message naming the value and the limit:
  **   cluster: thread block cluster dimensions (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION); all 0
  **     means no cluster, else 0 in y or z means 1. The grid must be a multiple of it on each
  **     axis; at most 8 blocks per cluster (portable), up to 16 where the device allows it (cujit
  **     sets CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED); refused when not one such
  **     cluster fits on the device at once (cuOccupancyMaxActiveClusters, asked once per kernel,
  **     cluster, block size and shared memory). The blocks of a cluster run together and reach
  **     each other's shared memory: cooperative_groups::this_cluster() or <cujit/cluster.h>.
  **   programmatic: 1 for programmatic dependent launch
  **     (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION): the kernel may start before the
  **     previous kernel of its stream ends, and waits for it where it calls
  **     cudaGridDependencySynchronize(); the previous one may call
  **     cudaTriggerProgrammaticLaunchCompletion() to let it start earlier (NVRTC declares
  **     neither: kernels made from a signature and a body have them, a whole source includes
  **     <cujit/pdl.h> or <cujit/cluster.h>).
  **   priority: the launch's priority (CU_LAUNCH_ATTRIBUTE_PRIORITY; lower is more urgent, as
  **     stream priorities; the driver clamps it to the device's range).
  ** Clusters and programmatic launches need sm_90 or newer (refused below, with the reason).
  ** A kernel compiled with __cluster_dims__(x, y, z) runs in those clusters without one (a
  ** cluster given must match them). The CPU device runs a cluster's blocks at once, one per
  ** worker (so at most as many blocks per cluster as workers, and at most 16), honours
  ** __cluster_dims__ on a kernel of the program, and takes programmatic and priority as no-ops:
  ** its stream order is already serial (docs/cpu.md). A cooperative launch takes none of them. */
  unsigned cluster[3];
  int programmatic;
  int priority;
} cujit_launch_config;

#ifndef __cplusplus
#define CUJIT_LAUNCH_CONFIG_INIT                                                                   \
  { .size = sizeof(cujit_launch_config) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_launch_config cujit_launch_config_init_(void) {
  cujit_launch_config v = cujit_launch_config();
  v.size = sizeof v;
  return v;
}
#define CUJIT_LAUNCH_CONFIG_INIT (cujit_launch_config_init_())
#endif

/* Launches a kernel asynchronously. The arguments are checked against the signature (count, kind,
** range, exactness) before anything reaches the driver; a mismatch is CUJIT_ERROR_ARGUMENT with a
** message naming the parameter. A generic kernel is specialised from the dtypes of the buffers
** passed. The device is the stream's, else the engine's current device. The launch path does no
** allocation, hashing or string work once the kernel is loaded on that device. */
CUJIT_API cujit_status cujit_launch(cujit_kernel *kernel, const cujit_launch_config *config,
                                    const cujit_arg *args, size_t nargs);

/* A cooperative launch (cuLaunchCooperativeKernel): every block runs at once, so a kernel may
** synchronise the whole grid (cooperative_groups::this_grid().sync()). The grid must fit on the
** device at once: blocks <= occupancy per SM x SMs, checked first (CUJIT_ERROR_LAUNCH_CONFIG
** saying how many fit). On the CPU device, whose workers run a block to its end, at most one block
** per worker. */
CUJIT_API cujit_status cujit_launch_cooperative(cujit_kernel *kernel,
                                                const cujit_launch_config *config,
                                                const cujit_arg *args, size_t nargs);
/* How many blocks of `block_threads` threads (and shared_bytes of dynamic shared memory) a
** cooperative launch of the kernel may have on the current device; 0 when no such block fits (a
** launch of it is refused, saying which limit it passes). On the CPU device: the number of
** workers for a block of at most max_threads_per_block threads and max_shared_per_block_optin
** bytes (a block holds one worker whatever its size), else 0. */
CUJIT_API cujit_status cujit_kernel_max_cooperative_blocks(cujit_kernel *kernel,
                                                           unsigned block_threads,
                                                           unsigned shared_bytes,
                                                           unsigned long long *blocks);

/* Launches over `n` elements in 1-D with the block size the occupancy API suggests for this kernel
** (cached), and enough blocks to cover n. */
CUJIT_API cujit_status cujit_launch_n(cujit_kernel *kernel, size_t n, cujit_stream *stream,
                                      const cujit_arg *args, size_t nargs);

/* The block size cujit_launch_n would pick on the current device. */
CUJIT_API cujit_status cujit_kernel_suggest_block(cujit_kernel *kernel, int *block_size,
                                                  int *min_grid);

/* ---------------------------------------------------------------------------------------------
** Device memory
** ------------------------------------------------------------------------------------------- */

/* Allocates `bytes` (> 0) on the current device. `dtype` tags the elements (NONE for raw bytes);
** it is what generic kernels specialise on and what typed pointer parameters check. */
CUJIT_API cujit_status cujit_buffer_alloc(cujit_engine *engine, size_t bytes, cujit_dtype dtype,
                                          cujit_buffer **out);
/* The same on a device given (a GPU or the CPU device), whatever the current device. */
CUJIT_API cujit_status cujit_buffer_alloc_on(cujit_device *device, size_t bytes, cujit_dtype dtype,
                                             cujit_buffer **out);
CUJIT_API void cujit_buffer_free(cujit_buffer *buffer);

CUJIT_API size_t cujit_buffer_size(const cujit_buffer *buffer);
CUJIT_API cujit_dtype cujit_buffer_dtype(const cujit_buffer *buffer);
CUJIT_API cujit_device *cujit_buffer_device(const cujit_buffer *buffer);
/* The device address (0 when the buffer is lost). */
CUJIT_API uint64_t cujit_buffer_devptr(const cujit_buffer *buffer);

/* Copies. Sizes and offsets are in bytes and checked against the buffers. On the NULL (default)
** stream the call returns when the copy is done; on another stream it is asynchronous (host
** memory must then stay alive until the stream is done, and is only truly asynchronous when
** pinned). One exception, as the driver's own cuMemcpyHtoD from pageable memory: a host-to-device
** copy of at most 64 KiB into a device buffer (not managed, mapped or shareable memory, nor a
** view) on a machine with one GPU returns once the source was read, and may change at once; all
** work queued afterwards through cujit (any stream), on the legacy default stream or on blocking
** streams sees the bytes; another library's non-blocking stream must first wait for the device
** (cujit_device_synchronize). */
CUJIT_API cujit_status cujit_memcpy_htod(cujit_buffer *dst, size_t dst_offset, const void *src,
                                         size_t bytes, cujit_stream *stream);
CUJIT_API cujit_status cujit_memcpy_dtoh(void *dst, const cujit_buffer *src, size_t src_offset,
                                         size_t bytes, cujit_stream *stream);
CUJIT_API cujit_status cujit_memcpy_dtod(cujit_buffer *dst, size_t dst_offset,
                                         const cujit_buffer *src, size_t src_offset, size_t bytes,
                                         cujit_stream *stream);
/* cujit_memcpy_dtod between two devices: between GPUs a peer copy (over NVLink or PCIe, staged
** through host memory by the driver when the GPUs cannot reach each other), between a GPU and the
** CPU device the GPU's host copy (the CPU device's memory is host memory, its queued work is
** waited for first). The stream, if any, is one of either device (of the GPU's, with the CPU
** device); it does not order the other device's work: record an event there and wait for it. */
/* Sets `bytes` bytes from `offset` to `value`. */
CUJIT_API cujit_status cujit_memset(cujit_buffer *dst, size_t offset, unsigned char value,
                                    size_t bytes, cujit_stream *stream);

/* Pinned host memory, for fast and truly asynchronous copies. */
CUJIT_API cujit_status cujit_host_alloc(cujit_engine *engine, size_t bytes,
                                        cujit_host_buffer **out);
CUJIT_API void cujit_host_free(cujit_host_buffer *buffer);
CUJIT_API void *cujit_host_ptr(const cujit_host_buffer *buffer);
CUJIT_API size_t cujit_host_size(const cujit_host_buffer *buffer);

/* Views, managed and mapped memory. Every buffer these calls give is an ordinary cujit_buffer:
** launches, copies, fills, reductions and elementwise kernels take it; free it with
** cujit_buffer_free. */

/* A view of `bytes` bytes of `buffer` from `offset` (both whole `dtype` elements, and so must be
** where the view starts in the memory a view of a view shares), sharing its memory. Freeing the
** viewed buffer (or a reset) leaves the view lost: every call then refuses it, saying so; free
** the view as any buffer (that frees no memory). A view of a view views the
** first buffer, so freeing the middle one leaves it usable. Making and freeing the views of one
** buffer (and freeing the buffer) from several threads at once needs the caller's lock, as
** freeing one buffer from two threads would. */
CUJIT_API cujit_status cujit_buffer_view(cujit_buffer *buffer, size_t offset, size_t bytes,
                                         cujit_dtype dtype, cujit_buffer **out);

/* Managed (unified) memory on the current device (cuMemAllocManaged): one address the device and
** the host both use. The host may read and write it through cujit_buffer_host_ptr only while no
** kernel or copy that uses it is running: synchronize first (the device, or the stream that used
** it). Touching it during a kernel is a data race, and on devices without concurrent managed
** access (cujit_device_info says nothing of it; see docs/lua.md) a segmentation fault. On the CPU
** device it is host memory. */
CUJIT_API cujit_status cujit_buffer_alloc_managed(cujit_engine *engine, size_t bytes,
                                                  cujit_dtype dtype, cujit_buffer **out);
/* The host address of a managed buffer, a mapped host buffer's view, or a view of either; NULL
** for device memory (copy it instead) or a lost buffer. */
CUJIT_API void *cujit_buffer_host_ptr(const cujit_buffer *buffer);

typedef enum cujit_advice {
  CUJIT_ADVISE_READ_MOSTLY,       /* copies on each reader; writes invalidate them */
  CUJIT_ADVISE_PREFERRED_DEVICE,  /* keep it on the buffer's device */
  CUJIT_ADVISE_PREFERRED_HOST,    /* keep it in host memory */
  CUJIT_ADVISE_ACCESSED_BY,       /* the buffer's device maps it, wherever it lives */
  CUJIT_ADVISE_UNSET_READ_MOSTLY, /* undo */
  CUJIT_ADVISE_UNSET_PREFERRED,
  CUJIT_ADVISE_UNSET_ACCESSED_BY,
} cujit_advice;

/* Migrates a managed buffer (or view) to its device (to_host 0) or to host memory, in `stream`
** order (NULL: the default stream); asynchronous. Advice is a hint for the driver's migrations.
** Both refuse non-managed memory; on the CPU device they do nothing. */
CUJIT_API cujit_status cujit_buffer_prefetch(cujit_buffer *buffer, int to_host,
                                             cujit_stream *stream);
CUJIT_API cujit_status cujit_buffer_advise(cujit_buffer *buffer, cujit_advice advice);

/* A device view of pinned host memory (cujit_host_alloc's, or registered below): kernels read and
** write the host memory directly over the bus (zero copy). Its lifetime is the host buffer's: the
** view is lost once the host buffer is freed. */
CUJIT_API cujit_status cujit_host_map(cujit_host_buffer *host, cujit_dtype dtype,
                                      cujit_buffer **out);
/* Page-locks `bytes` of host memory allocated elsewhere (cuMemHostRegister) as a host buffer:
** copies from it are truly asynchronous and cujit_host_map maps it. cujit_host_free unregisters
** it and frees nothing; the memory must outlive the host buffer. A no-op on the CPU device. */
CUJIT_API cujit_status cujit_host_register(cujit_engine *engine, void *ptr, size_t bytes,
                                           cujit_host_buffer **out);

/* A program's __device__ or __constant__ variable `name`, on the current device, as a view
** (cuLibraryGetGlobal; on the CPU device, the shared object's symbol). `name` is as the source
** names it: "taps", a static one, "ns::taps" in a namespace, an anonymous namespace's by its own
** name (docs/cuda-code.md, "Globals"). Copy into it before a
** launch to set constant memory. dtype, ndim and shape (each may be NULL) are what the
** declaration says (`__constant__ float taps[3][3]` gives f32, 2, {3, 3}); a type cujit cannot
** name gives CUJIT_DTYPE_NONE and one dimension of its size in bytes. The view lives while the
** program (or a kernel of it) does and until a reset of the device: after a reset, ask again
** (the program is loaded anew). NOT_FOUND names the variable. */
CUJIT_API cujit_status cujit_program_global(cujit_program *program, const char *name,
                                            cujit_buffer **out, cujit_dtype *dtype, int *ndim,
                                            size_t shape[3]);

/* ---------------------------------------------------------------------------------------------
** Foreign memory and DLPack
** ------------------------------------------------------------------------------------------- */

/* Called once when cujit no longer uses memory it did not allocate: `user` and `address` are what
** cujit_buffer_wrap was given. */
typedef void (*cujit_release_fn)(void *user, uint64_t address);

/* A buffer over `bytes` of memory that someone else allocated (cudaMalloc, a framework's
** allocator, cuMemAlloc; on the CPU device, host memory) at `address`, on the current device.
** The buffer is an ordinary cujit_buffer: launches, copies, fills, views, reductions, elementwise
** kernels and graphs take it. cujit never frees the memory; `release(user, address)` (NULL: none)
** is called exactly once, when cujit is done with it:
**   - at cujit_buffer_free of the buffer (views of it are then lost, as views of any buffer),
**     or at cujit_close for a buffer still alive, also when a device reset made it lost (the
**     memory may be gone with the reset's context: the call says only that cujit is done);
**   - later, while a DLPack tensor exported from it (cujit_buffer_to_dlpack) is alive: when the
**     last one's deleter runs;
**   - after cujit waited for the work queued on the buffer's device, so that no queued kernel or
**     copy still uses the memory when the owner frees it in `release`;
**   - on the thread that freed the buffer, closed the engine or ran the deleter. It must not call
**     cujit on the buffer's engine.
** A failed wrap never calls `release`: the memory stays the caller's.
** On a GPU, [address, address + bytes) must be device (or managed) memory of the context cujit
** uses on that device (cujit_device_context: the primary one unless cujit_device_use_context gave
** another), inside one allocation: host memory (use
** cujit_host_register and cujit_host_map), another GPU's memory (wrap it on that device), memory
** of another context, an address no driver allocation holds and a range that runs past its
** allocation are each refused (INVALID_ARGUMENT) saying which; a driver that cannot answer
** (cuPointerGetAttributes missing) is UNSUPPORTED. On the CPU device the address is host memory
** and is taken as given, but for a GPU's device memory (not managed), refused when the driver
** is there to say so. Everywhere, refused: address 0, bytes 0, bytes not whole `dtype`
** elements, an address not aligned to the dtype's size.
** Thread safety: as cujit_buffer_alloc. */
CUJIT_API cujit_status cujit_buffer_wrap(cujit_engine *engine, uint64_t address, size_t bytes,
                                         cujit_dtype dtype, cujit_release_fn release, void *user,
                                         cujit_buffer **out);
/* The same on a device given (a GPU or the CPU device), whatever the current device. */
CUJIT_API cujit_status cujit_buffer_wrap_on(cujit_device *device, uint64_t address, size_t bytes,
                                            cujit_dtype dtype, cujit_release_fn release, void *user,
                                            cujit_buffer **out);

/* DLPack (the versioned ABI, 1.x; include cujit_dlpack.h for its types). The tensors are passed
** as void * so that this header needs no DLPack definitions. */
#define CUJIT_DLPACK_MAX_DIMS 8

/* Exports `buffer` as a DLManagedTensorVersioned * in *out, sharing its memory (no copy): the
** shape `shape[0..ndim)` (NULL: one dimension of the whole buffer, ndim ignored; ndim 0..8 with
** every extent > 0, covering exactly the buffer's elements), explicit compact row-major strides
** (in elements; DLPack 1.x allows NULL for those, older readers do not), byte_offset 0, flags 0
** (writable), version 1.0, the device kDLCUDA with the GPU's ordinal, or kDLCPU 0 on the CPU
** device, the dtype mapped from the buffer's (CUJIT_DTYPE_NONE is refused: make a typed view).
** The tensor holds the memory: it stays valid after cujit_buffer_free of the buffer (the handle
** is gone at once, its views are lost), until the tensor's deleter runs, which frees what this
** call allocated and, once the buffer was freed and no other tensor holds it, the memory (a
** wrapped buffer's release then). Exporting a view holds the memory of the buffer it views; a
** view of a host buffer or of a program's global is refused (that memory is not a buffer's).
** Whoever holds the tensor (this caller, or the consumer it is handed to) calls its deleter
** exactly once. cujit_close and a device reset free the memory regardless (the tensor's data is
** then invalid); the deleter is still safe to call after them. Refused: a freed (orphaned) view,
** a lost buffer, a bad shape (saying why). The deleter may run on any thread, not during
** cujit_close of the buffer's engine. Nothing orders the consumer's work after cujit's: finish
** what cujit queued on the buffer (cujit_stream_synchronize, cujit_device_synchronize, or an
** event the consumer's stream waits for) before handing the tensor over. Thread safety: exports
** of one buffer from many threads at once, as copies from it; not while the buffer is freed. */
CUJIT_API cujit_status cujit_buffer_to_dlpack(cujit_buffer *buffer, int ndim, const int64_t *shape,
                                              void **out);

/* Imports a DLManagedTensorVersioned * (`managed_versioned`) as a buffer of this engine sharing
** its memory (cujit_buffer_wrap_on's checks apply: on a GPU the memory must be that device's).
** Read: the version (major 1; others refused, naming it), the device (kDLCUDA or kDLCUDAManaged
** with a GPU ordinal of this engine; kDLCPU: the CPU device), the dtype (f16, bf16, f32, f64,
** i8..i64, u8..u64 with one lane; others refused naming them), the shape (0 to 8 dimensions, at
** least one element), the strides (NULL or compact row-major; dimensions of extent 1 may have any
** stride; anything else is refused: make the tensor contiguous first), byte_offset (added to
** data), and the flags (a read-only tensor is refused: cujit's buffers are writable).
** Ownership: on success the buffer owns the tensor, and the tensor's deleter runs exactly once
** when the buffer is released (cujit_buffer_wrap's rules: free, close, after the last DLPack
** export of it). On failure nothing was taken: the caller still owns the tensor and must call
** its deleter (DLPack's rule: a consumer owns a tensor only once it accepted it).
** *ndim (may be NULL) and shape[0..*ndim) (NULL, or room for CUJIT_DLPACK_MAX_DIMS) receive the
** tensor's shape; the buffer is 1-D bytes of it, tagged with the mapped dtype. As for an export,
** the producer's work on the memory must be finished (or ordered by an event) before cujit's.
** Thread safety: as cujit_buffer_alloc. */
CUJIT_API cujit_status cujit_buffer_from_dlpack(cujit_engine *engine, void *managed_versioned,
                                                cujit_buffer **out, int *ndim, int64_t *shape);

/* ---------------------------------------------------------------------------------------------
** Streams and events
** ------------------------------------------------------------------------------------------- */

/* A non-blocking stream on the current device. */
CUJIT_API cujit_status cujit_stream_create(cujit_engine *engine, cujit_stream **out);
/* A non-blocking stream on the device given, whatever the current device. */
CUJIT_API cujit_status cujit_stream_create_on(cujit_device *device, cujit_stream **out);
CUJIT_API void cujit_stream_free(cujit_stream *stream);
CUJIT_API cujit_status cujit_stream_synchronize(cujit_stream *stream);
/* CUJIT_OK when all work is done, CUJIT_ERROR_NOT_READY while some is pending. NOT_READY is an
** answer, not a failure: it is not recorded as the thread's last error (cujit_errmsg). */
CUJIT_API cujit_status cujit_stream_query(cujit_stream *stream);
/* Makes future work in `stream` wait for `event` (NULL: the default stream of the event's
** device). */
CUJIT_API cujit_status cujit_stream_wait_event(cujit_stream *stream, cujit_event *event);
CUJIT_API cujit_device *cujit_stream_device(const cujit_stream *stream);

CUJIT_API cujit_status cujit_event_create(cujit_engine *engine, cujit_event **out);
CUJIT_API cujit_status cujit_event_create_on(cujit_device *device, cujit_event **out);
CUJIT_API void cujit_event_free(cujit_event *event);
/* Records the event in `stream` (NULL: the default stream). */
CUJIT_API cujit_status cujit_event_record(cujit_event *event, cujit_stream *stream);
CUJIT_API cujit_status cujit_event_synchronize(cujit_event *event);
/* As cujit_stream_query, for the work before the event's record. */
CUJIT_API cujit_status cujit_event_query(cujit_event *event);
/* Milliseconds between two recorded, completed events; a shareable event (below) has no timing
** and is refused (CUJIT_ERROR_INVALID_ARGUMENT). */
CUJIT_API cujit_status cujit_event_elapsed(cujit_event *start, cujit_event *end, float *ms);

/* ---------------------------------------------------------------------------------------------
** Embedding: the application's context, streams and events, and native handles
**
** For programs that already use CUDA (the runtime API, a framework) and hand cujit their objects,
** or take cujit's (docs/embedding.md). Native handles are passed as void * (a CUcontext,
** CUstream / cudaStream_t, CUevent / cudaEvent_t, CUfunction, CUmodule), so that this header needs
** no CUDA header. The CPU device has no native objects: every call here refuses it
** (CUJIT_ERROR_UNSUPPORTED, saying so).
**
** The caller's current context. Every call leaves the context current on the calling thread as it
** found it: a call that needs another one current makes it so, and puts the caller's back before
** it returns (costing a cuCtxSetCurrent each way, and nothing when the right one is current
** already). One exception, as the runtime API does: when no context was current at all, the one
** cujit used stays current, so runtime-API code on the same thread finds the device's primary
** context, the one it would use itself.
**
** Which context. cujit works on each GPU's primary context by default, the context the CUDA
** runtime API uses too, so memory, streams and events pass freely between cujit and runtime-API
** code. cujit never destroys what it did not create: not a context, stream or event it was given,
** nor memory it wraps (cujit_buffer_wrap).
** ------------------------------------------------------------------------------------------- */

/* Makes cujit use `context` (a CUcontext of the device's GPU, made by cuCtxCreate or any other
** library) on `device` in place of the primary context, for everything cujit makes there from now
** on. Call it after cujit_open, before anything is made on the device (a buffer, a stream, a
** loaded kernel): later, CUJIT_ERROR_UNSUPPORTED. The context must stay alive until cujit_close
** (cujit never destroys it); cujit_device_reset refuses such a device, since resetting is the
** owner's business. INVALID_ARGUMENT: a context the driver does not know, or of another GPU. */
CUJIT_API cujit_status cujit_device_use_context(cujit_device *device, void *context);
/* The context cujit uses on the device (its primary context, retained now if nothing was made
** there yet, or the one given above). It lives until cujit_close; do not destroy it. */
CUJIT_API cujit_status cujit_device_context(cujit_device *device, void **context);

/* The application's stream `native` (a CUstream or cudaStream_t, not NULL: the default stream is
** cujit's NULL stream) as a cujit stream on the current device, or on `device`: usable everywhere
** a cujit stream is (launches, copies, library calls, events, graph capture). The stream must
** belong to the context cujit uses on that device (INVALID_ARGUMENT otherwise, saying so), and
** must outlive the cujit stream; cujit_stream_free forgets it and never destroys it. Work cujit
** queues there is ordered with the application's own work on it, as on any stream; device
** synchronize and cujit's memory reuse order themselves after it, as for cujit's own streams.
** Wrapping one native stream twice at once is refused: use the first cujit stream. */
CUJIT_API cujit_status cujit_stream_wrap(cujit_engine *engine, void *native, cujit_stream **out);
CUJIT_API cujit_status cujit_stream_wrap_on(cujit_device *device, void *native, cujit_stream **out);
/* The application's event `native` (a CUevent or cudaEvent_t of the current device's context) as
** a cujit event: record, wait, query and time with it (timing needs an event made with timing and
** recorded, which the driver checks: cujit_event_elapsed refuses one without, INVALID_ARGUMENT).
** cujit_event_free forgets it and never destroys it. */
CUJIT_API cujit_status cujit_event_wrap(cujit_engine *engine, void *native, cujit_event **out);

/* The native handles of cujit's objects, for the application's own driver or runtime calls. Each
** lives as long as the object it came from (the stream, the event, the kernel, the program) and
** until a reset of its device; do not destroy them. A kernel's function and a program's module are
** those of the current device, the kernel loaded there first if it was not. */
CUJIT_API cujit_status cujit_stream_handle(const cujit_stream *stream, void **native);
CUJIT_API cujit_status cujit_event_handle(const cujit_event *event, void **native);
CUJIT_API cujit_status cujit_kernel_function(cujit_kernel *kernel, void **native);
CUJIT_API cujit_status cujit_program_module(cujit_program *program, void **native);

/* ---------------------------------------------------------------------------------------------
** Graphs
**
** Iterative work made of many small kernels is paced by the host (about 4 us a launch); a graph
** replays a recorded sequence for about 0.5 us a kernel. Record by stream capture:
**     cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;   // its grid and block, then
**     c.stream = s;
**     cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED);
**     cujit_launch(k1, &c, args1, 3);   // recorded, not run
**     cujit_launch(k2, &c, args2, 2);
**     cujit_graph *g;
**     cujit_capture_end(s, &g);
**     cujit_graph_replay(g, s, 1000);   // 1000 replays, asynchronous like launches
** Every cujit launch, copy, fill and library call issued on the capturing stream is recorded
** (buffers by address: they must outlive the graph's replays; freeing the graph after them is
** fine; the kernels it launches must outlive its cujit_graph_set_args and cujit_graph_update).
** Work on other streams runs as usual meanwhile, from any thread. What cannot be recorded fails
** during the capture with a message naming the call and the way out:
**   - a kernel not yet loaded on the device (defined but never launched there, or a generic
**     kernel's new specialisation): launch it once, or call cujit_kernel_suggest_block, first;
**   - a reduction (cujit_reduce, cujit_dot), which returns its value to the host;
**   - a wait on the capturing stream (cujit_stream_synchronize, cujit_stream_query);
**   - a copy between the device and pageable host memory on that stream: the driver refuses it
**     and invalidates the capture, which cujit_capture_end then reports (use cujit_host_alloc).
** The other refusals leave the capture as it was. cujit_device_synchronize does not wait for a
** capturing stream (nothing runs there). Graphs belong to the device of the stream they were
** captured on and may be replayed on any stream of that device (NULL: the default stream). A
** capturing stream, and a graph, is used by one thread at a time.
** ------------------------------------------------------------------------------------------- */

typedef struct cujit_graph cujit_graph; /* a recorded sequence of device work, replayable */

/* Which calls of other threads may run while a stream captures (the Driver API's modes):
** RELAXED (the default) allows everything; THREAD_LOCAL and GLOBAL refuse calls that are unsafe
** during a capture (a synchronous copy, loading a module) from this thread, or from any thread. */
typedef enum cujit_capture_mode {
  CUJIT_CAPTURE_RELAXED,
  CUJIT_CAPTURE_THREAD_LOCAL,
  CUJIT_CAPTURE_GLOBAL,
} cujit_capture_mode;

typedef enum cujit_graph_node_kind {
  CUJIT_GRAPH_NODE_KERNEL,
  CUJIT_GRAPH_NODE_COPY,
  CUJIT_GRAPH_NODE_MEMSET,
  CUJIT_GRAPH_NODE_OTHER,
  CUJIT_GRAPH_NODE_KINDS /* the number of kinds */
} cujit_graph_node_kind;

/* Starts recording the work issued on `stream` (a stream made by cujit_stream_create; the
** default stream cannot capture). */
CUJIT_API cujit_status cujit_capture_begin(cujit_stream *stream, cujit_capture_mode mode);
/* Ends the capture on `stream` and gives the graph, not yet instantiated (`out` NULL: discard
** it). After a failure, the stream no longer captures either. */
CUJIT_API cujit_status cujit_capture_end(cujit_stream *stream, cujit_graph **out);
/* 1 while the stream captures a graph. */
CUJIT_API int cujit_stream_capturing(const cujit_stream *stream);

/* Makes the graph launchable (tens of microseconds; done by the first launch otherwise). */
CUJIT_API cujit_status cujit_graph_instantiate(cujit_graph *graph);
/* One replay of the whole graph on `stream` (NULL: the default stream), asynchronous. */
CUJIT_API cujit_status cujit_graph_launch(cujit_graph *graph, cujit_stream *stream);
/* `times` replays in a row on `stream`, in one call. */
CUJIT_API cujit_status cujit_graph_replay(cujit_graph *graph, cujit_stream *stream, size_t times);
/* Replaces the arguments of kernel node `index` (kernel launches counted from 0 in capture
** order) for the following replays, checked against the kernel's signature exactly as a launch
** checks them (types, ranges, dtypes); the launch configuration stays. Replays already queued
** keep the arguments they had. */
CUJIT_API cujit_status cujit_graph_set_args(cujit_graph *graph, size_t index, const cujit_arg *args,
                                            size_t nargs);
/* Gives `graph` every node parameter of `from`, a new capture of the same shape (the same
** kernels, copies and fills in the same order), for the following replays; a different shape is
** CUJIT_ERROR_INVALID_ARGUMENT saying what differs. `from` is left as it was. */
CUJIT_API cujit_status cujit_graph_update(cujit_graph *graph, cujit_graph *from);
/* The number of nodes of a kind (CUJIT_GRAPH_NODE_KINDS: all of them). */
CUJIT_API size_t cujit_graph_node_count(const cujit_graph *graph, cujit_graph_node_kind kind);
/* The kernel that kernel node `index` launches (capture order, from 0), NULL past the last. */
CUJIT_API cujit_kernel *cujit_graph_kernel(const cujit_graph *graph, size_t index);
CUJIT_API cujit_device *cujit_graph_device(const cujit_graph *graph);
/* Writes the graph as Graphviz dot to `path` (cuGraphDebugDotPrint; the CPU device writes its
** nodes as a chain). */
CUJIT_API cujit_status cujit_graph_dot(cujit_graph *graph, const char *path);
/* Frees the graph; replays already queued complete. */
CUJIT_API void cujit_graph_free(cujit_graph *graph);

/* ---------------------------------------------------------------------------------------------
** Tensor maps (TMA, compute capability 9.0 and newer)
**
** A tensor map describes a buffer as a tensor of 1 to 5 dimensions cut into tiles ("boxes") that
** the Tensor Memory Accelerator copies between global and shared memory in one instruction
** (cp.async.bulk.tensor; <cujit/tma.h> has the device side). cujit_tensor_map_encode fills one
** (cuTensorMapEncodeTiled) for a buffer; a kernel takes it by value as a
** `const __grid_constant__ CUtensorMap` parameter, passed with CUJIT_ARG_RAW(map.opaque):
**     cujit_tensor_map_desc d = CUJIT_TENSOR_MAP_DESC_INIT;
**     d.rank = 2, d.dims[0] = cols, d.dims[1] = rows;          // innermost dimension first
**     d.strides[1] = cols * sizeof(float);                       // bytes from a row to the next
**     d.box[0] = 32, d.box[1] = 32;                              // a 32 x 32 tile
**     cujit_tensor_map m;
**     cujit_tensor_map_encode(buf, &d, &m);
**     cujit_arg args[] = {CUJIT_ARG_RAW(m.opaque), CUJIT_ARG_BUF(out)};
** The element type is the buffer's (a view's for another): any dtype of 1, 2, 4 or 8 bytes (TMA
** moves bits: i8 goes as u8). Refused with the reason: a device without TMA (the CPU device, a
** GPU below 9.0, a driver without cuTensorMapEncodeTiled), a rank outside 1..5, a dimension of 0
** or above 2^32, a stride not a multiple of 16 bytes, smaller than the dimension below it or of
** 2^40 bytes or more, a box dimension outside 1..256 or larger than its dimension, an innermost
** box row not a multiple of 16 bytes (or wider than the swizzle's span), an address not
** 16-byte aligned, and a tensor that reaches past the end of the buffer. The map holds the
** buffer's address, not the buffer: it must not be used after the buffer is freed. A map is plain
** bytes, usable from any thread.
** ------------------------------------------------------------------------------------------- */

typedef enum cujit_tensor_swizzle {
  CUJIT_SWIZZLE_NONE,
  CUJIT_SWIZZLE_32B, /* shared memory rows of 32, 64 or 128 bytes laid out to avoid bank conflicts
                      */
  CUJIT_SWIZZLE_64B,
  CUJIT_SWIZZLE_128B,
} cujit_tensor_swizzle;

#define CUJIT_TENSOR_MAX_RANK 5

typedef struct cujit_tensor_map_desc {
  size_t size;                             /* set with CUJIT_TENSOR_MAP_DESC_INIT */
  unsigned rank;                           /* 1 to 5 */
  uint64_t dims[CUJIT_TENSOR_MAX_RANK];    /* elements, the contiguous dimension first */
  uint64_t strides[CUJIT_TENSOR_MAX_RANK]; /* bytes from one index of dimension d >= 1 to the
                                           ** next (strides[0] is unused: elements are packed);
                                           ** 0: the dimensions below, packed */
  size_t offset;                           /* bytes into the buffer of element 0 (16-aligned) */
  unsigned box[CUJIT_TENSOR_MAX_RANK];     /* a tile's elements in each dimension, 1 to 256 */
  cujit_tensor_swizzle swizzle;
  int oob_nan; /* elements a box takes from outside the tensor read as NaN (float dtypes), not 0 */
} cujit_tensor_map_desc;

#ifndef __cplusplus
#define CUJIT_TENSOR_MAP_DESC_INIT                                                                 \
  { .size = sizeof(cujit_tensor_map_desc) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_tensor_map_desc cujit_tensor_map_desc_init_(void) {
  cujit_tensor_map_desc v = cujit_tensor_map_desc();
  v.size = sizeof v;
  return v;
}
#define CUJIT_TENSOR_MAP_DESC_INIT (cujit_tensor_map_desc_init_())
#endif

/* The driver's CUtensorMap, 128 bytes: passed to a kernel as CUJIT_ARG_RAW(map.opaque). */
typedef struct cujit_tensor_map {
  uint64_t opaque[16];
} cujit_tensor_map;

CUJIT_API cujit_status cujit_tensor_map_encode(cujit_buffer *buffer,
                                               const cujit_tensor_map_desc *desc,
                                               cujit_tensor_map *map);

/* ---------------------------------------------------------------------------------------------
** Cache
** ------------------------------------------------------------------------------------------- */

typedef struct cujit_cache_stats {
  size_t size; /* set with CUJIT_CACHE_STATS_INIT */
  uint64_t memory_hits, disk_hits, misses;
  uint64_t entries;   /* on disk */
  uint64_t bytes;     /* on disk */
  uint64_t max_bytes; /* the LRU bound */
  int disk_enabled;   /* 0 when CUJIT_CACHE=off or the directory is unwritable */
  /* Precompiled headers (CUJIT_PCH, README's Environment): compiles of this engine that made
  ** one, and that used one made before: NVRTC's, made in this process; the CPU device's
  ** precompiled prelude, kept in the disk cache by any process. A PCH never changes what is
  ** compiled; it makes a later compile with the same headers faster. */
  uint64_t pch_created, pch_used;
  /* Compiles of this engine that ran in a worker process (cujit-nvrtc-worker) because another
  ** NVRTC compile of the process was running: NVRTC runs one compile of a process at a time.
  ** CUJIT_NVRTC_WORKER (README's Environment) turns workers off or names the program. */
  uint64_t compiles_in_workers;
} cujit_cache_stats;

#ifndef __cplusplus
#define CUJIT_CACHE_STATS_INIT                                                                     \
  { .size = sizeof(cujit_cache_stats) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_cache_stats cujit_cache_stats_init_(void) {
  cujit_cache_stats v = cujit_cache_stats();
  v.size = sizeof v;
  return v;
}
#define CUJIT_CACHE_STATS_INIT (cujit_cache_stats_init_())
#endif

/* The cache directory in use ("" when the disk cache is off); lives as long as the engine. */
CUJIT_API const char *cujit_cache_dir(cujit_engine *engine);
CUJIT_API cujit_status cujit_cache_stats_get(cujit_engine *engine, cujit_cache_stats *stats);
/* Removes every entry, in memory and on disk. */
CUJIT_API cujit_status cujit_cache_clear(cujit_engine *engine);

/* ---------------------------------------------------------------------------------------------
** Library: random numbers, reductions, elementwise
**
** Ready-made device work on whole buffers, built on the kernels of kernels_src/cujit (compiled
** once per engine and element type on first use, then served by the cache). Each call runs on
** `stream` (NULL: the default stream) and on the device of the stream, else the current device;
** the buffers must live there.
** ------------------------------------------------------------------------------------------- */

/* Fills an f32 or f64 buffer with uniform numbers in (0, 1] from a counter-based generator
** (Philox4x32-10): element k is number offset + k of the stream that `seed` names, whatever the
** launch shape, so the result is reproducible and a fill at offset o + m continues exactly where
** element m of a fill at offset o is. On the device, cujit::uniform_float(seed, offset + k) (or
** _double) of <cujit/random.h> gives the same numbers. Asynchronous on `stream`. */
CUJIT_API cujit_status cujit_random_uniform(cujit_buffer *buffer, uint64_t seed, uint64_t offset,
                                            cujit_stream *stream);

/* As cujit_random_uniform, with normal numbers: mean + std * N(0, 1), by Box-Muller on the same
** stream of uniforms. std must be finite and >= 0. */
CUJIT_API cujit_status cujit_random_normal(cujit_buffer *buffer, uint64_t seed, uint64_t offset,
                                           double mean, double std, cujit_stream *stream);

typedef enum cujit_reduce_op {
  CUJIT_REDUCE_SUM,
  CUJIT_REDUCE_MIN,
  CUJIT_REDUCE_MAX,
} cujit_reduce_op;

/* A typed result: dtype is F64 (v.f) for floating inputs, I64 (v.i) for signed integers, U64
** (v.u) for unsigned integers. */
typedef struct cujit_scalar {
  size_t size; /* set with CUJIT_SCALAR_INIT when the library fills it */
  cujit_dtype dtype;
  union {
    double f;
    int64_t i;
    uint64_t u;
  } v;
} cujit_scalar;

#ifndef __cplusplus
#define CUJIT_SCALAR_INIT                                                                          \
  { .size = sizeof(cujit_scalar) }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size */
static inline cujit_scalar cujit_scalar_init_(void) {
  cujit_scalar v = cujit_scalar();
  v.size = sizeof v;
  return v;
}
#define CUJIT_SCALAR_INIT (cujit_scalar_init_())
#endif

/* The scalar as a double (integers beyond 2^53 are rounded). Reads dtype and v, which every
** layout has, whatever its size. */
CUJIT_API double cujit_scalar_to_double(const cujit_scalar *scalar);

/* Reduces the first `count` elements of a typed buffer (any dtype but NONE) and waits for the
** result. Integer sums are exact (accumulated in 64 bits, wrapping only past 2^64); floating sums
** are accumulated in double, so a float32 sum is far more accurate than float32 rounding would
** allow. min and max are exact and propagate NaN. count 0 gives a sum of 0 and, for min and max,
** CUJIT_ERROR_INVALID_ARGUMENT. Reductions of one engine are serialised (they share a small
** scratch buffer per device); the buffer must live on the current device. */
CUJIT_API cujit_status cujit_reduce(cujit_buffer *buffer, cujit_reduce_op op, size_t count,
                                    cujit_scalar *result, cujit_stream *stream);

/* The dot product of the first `count` elements of two buffers of the same dtype, accumulated
** and reported as cujit_reduce's sum is. */
CUJIT_API cujit_status cujit_dot(cujit_buffer *a, cujit_buffer *b, size_t count,
                                 cujit_scalar *result, cujit_stream *stream);

/* The shape and epilogue of a cujit_gemm. Start from CUJIT_GEMM_OPTIONS_INIT (alpha 1, the rest
** 0): a zeroed struct has alpha 0, a product that is all zeros. */
typedef struct cujit_gemm_options {
  size_t size;             /* sizeof(cujit_gemm_options): use CUJIT_GEMM_OPTIONS_INIT */
  int64_t m, n, k;         /* op(A) is m x k, op(B) k x n, C m x n; each 1 .. INT_MAX */
  int trans_a, trans_b;    /* nonzero: A is stored k x m (B: n x k) and op() transposes it */
  double alpha, beta;      /* finite; with beta 0, C is written without being read */
  cujit_buffer *bias;      /* NULL, or n elements of C's dtype added to every row */
  int relu;                /* nonzero: max(v, 0) after the bias (NaN stays NaN) */
  cujit_buffer *relu_mask; /* NULL, or m x n elements of C's dtype: v where mask > 0, else 0 */
} cujit_gemm_options;

#ifndef __cplusplus
#define CUJIT_GEMM_OPTIONS_INIT                                                                    \
  { .size = sizeof(cujit_gemm_options), .alpha = 1.0 }
#else /* C++ before C++20 has no designated initializers: zeroed, with its size and alpha */
static inline cujit_gemm_options cujit_gemm_options_init_(void) {
  cujit_gemm_options v = cujit_gemm_options();
  v.size = sizeof v;
  v.alpha = 1.0;
  return v;
}
#define CUJIT_GEMM_OPTIONS_INIT (cujit_gemm_options_init_())
#endif

/* C = epilogue(alpha * op(A) op(B) + beta * C) on the device, asynchronously on `stream` (NULL: the
** current device's default stream), as BLAS's GEMM over row-major arrays; the epilogue adds
** opts->bias, then applies relu, then opts->relu_mask (see cujit_gemm_options). A and B hold f32,
** f16 or bf16, both the same; products are accumulated in f32; C (with the bias and the mask) holds
** f32 or A's dtype, rounded to it once at the end. Each buffer must hold at least the elements its
** shape needs (more are left alone: a view of a larger array works) and live on the device the work
** runs on (the stream's, or the current one). C may not share memory with A, B, the bias or the
** mask: the kernel reads them while writing C. Refused with CUJIT_ERROR_INVALID_ARGUMENT and a
** message naming the operand: a NULL buffer or options, a size of m, n or k below 1 or above
** INT_MAX, a non-finite alpha or beta, other dtypes, a buffer too short for its shape, a buffer of
** another device, C sharing memory. The kernel for each dtype pair is compiled once per engine and
** kind of device (its epilogues are kernels of that one program) and kept until cujit_close; which
** kernel runs is cujit's choice and not part of the contract, only the result within f32
** accumulation is: a portable tiled one on CUDA cores, or on sm_90 for f16 and bf16 inputs whose
** shapes and alignment fit, a tensor-core one (wgmma and TMA). CUJIT_GEMM=simt or tensor forces one
** (tensor, where it cannot run, is refused with CUJIT_ERROR_UNSUPPORTED and the reason; an unknown
** value with CUJIT_ERROR_INVALID_ARGUMENT). Capturable into a graph once a call outside the capture
** has used the same dtypes and kernel on that device (it compiles them and loads that kernel's
** every epilogue and layout there; a product of a similar size runs on the same kernel); before, a
** capture is refused (CUJIT_ERROR_UNSUPPORTED), naming the kernel. Thread safety: calls from many
** threads on one engine are fine; the buffers must stay alive until the stream has run the work, as
** for any launch. */
CUJIT_API cujit_status cujit_gemm(cujit_buffer *a, cujit_buffer *b, cujit_buffer *c,
                                  const cujit_gemm_options *opts, cujit_stream *stream);

/* The kernel cujit_gemm would run for these arguments now (CUJIT_GEMM included), without
** compiling or running anything: for a caller that takes another route where the tensor cores do
** not take a product (the MLP example runs those on its own split-k kernel). The arguments are
** checked as cujit_gemm checks them, refused as it refuses them (with its messages, which name
** cujit_gemm), and a NULL `kernel` is refused. The answer holds for these shapes, dtypes,
** alignments, device and environment; it is not a promise about later versions. */
typedef enum cujit_gemm_kernel {
  CUJIT_GEMM_KERNEL_SIMT = 1,  /* the portable tiled kernel on CUDA cores */
  CUJIT_GEMM_KERNEL_TENSOR = 2 /* the tensor-core kernel (wgmma and TMA, sm_90) */
} cujit_gemm_kernel;
CUJIT_API cujit_status cujit_gemm_kernel_for(cujit_buffer *a, cujit_buffer *b, cujit_buffer *c,
                                             const cujit_gemm_options *opts, cujit_stream *stream,
                                             cujit_gemm_kernel *kernel);

/* Defines an elementwise kernel, as CuPy's ElementwiseKernel or Numba's @vectorize. Example:
**     cujit_kernel *k;
**     cujit_elementwise_define(e, "scalar T a, T x, T y -> T z", "z = a * x + y", "axpy",
**                              NULL, &k);
** `params` lists the inputs, "->", then the outputs. Each is "type name"; the type is a C type
** or dtype name ("float", "f32", "unsigned int", "__half"/"half", "__nv_bfloat16"/"bf16", ...)
** or a type variable (T, U,
** T2). Every parameter is an array of that type unless marked `scalar`, which passes it by value
** to every element (inputs only). `expr` is C++ run once per element, in which each array name is
** that element (inputs read-only; outputs start as zero and are stored afterwards), scalars are
** themselves, `i` is the element index and `n` the element count (long long): so `i` and `n` are
** reserved, as are names starting with `cj_`. The kernel's signature is the parameters in that
** order then `long long n`; generic kernels are specialised from the buffers passed. The same
** buffer may be both an input and an output (each element is read before it is written).
** `name` (NULL: "elementwise") names the kernel; `options` (may be NULL) are as for
** cujit_kernel_define. The result is an ordinary kernel: free it with cujit_kernel_free. */
CUJIT_API cujit_status cujit_elementwise_define(cujit_engine *engine, const char *params,
                                                const char *expr, const char *name,
                                                const cujit_compile_options *options,
                                                cujit_kernel **out);

/* Runs an elementwise kernel over n elements: `args` are its parameters without n, which is
** appended. Every array must hold at least n elements (checked). The grid is sized for memory
** bandwidth (a grid-stride loop over enough blocks to fill the device), not one thread per
** element. n == 0 does nothing. */
CUJIT_API cujit_status cujit_elementwise_launch(cujit_kernel *kernel, size_t n,
                                                cujit_stream *stream, const cujit_arg *args,
                                                size_t nargs);

/* ---------------------------------------------------------------------------------------------
** Sharing with other processes
** ------------------------------------------------------------------------------------------- */

/* Sharing with other processes (CUDA IPC; GPU only: the CPU device refuses each call). A handle
** is text of fewer than CUJIT_IPC_HANDLE_MAX bytes, to pass by a pipe, file or argument.
** Memory: allocate it shareable (pool memory cannot be exported), export its handle, and open the
** handle in another process (once per process) as a buffer of the same size and dtype; freeing
** that buffer closes it. The exporter must keep the buffer alive until every importer closed it:
** the memory is the exporter's. Events: a shareable event (no timing) is recorded by one process
** and waited on (cujit_stream_wait_event, cujit_event_synchronize) by another. */
#define CUJIT_IPC_HANDLE_MAX 192
CUJIT_API cujit_status cujit_buffer_alloc_shareable(cujit_engine *engine, size_t bytes,
                                                    cujit_dtype dtype, cujit_buffer **out);
CUJIT_API cujit_status cujit_buffer_ipc_handle(const cujit_buffer *buffer,
                                               char text[CUJIT_IPC_HANDLE_MAX]);
CUJIT_API cujit_status cujit_buffer_ipc_open(cujit_engine *engine, const char *text,
                                             cujit_buffer **out);
CUJIT_API cujit_status cujit_event_create_shareable(cujit_engine *engine, cujit_event **out);
CUJIT_API cujit_status cujit_event_ipc_handle(const cujit_event *event,
                                              char text[CUJIT_IPC_HANDLE_MAX]);
CUJIT_API cujit_status cujit_event_ipc_open(cujit_engine *engine, const char *text,
                                            cujit_event **out);

/* ---------------------------------------------------------------------------------------------
** NCCL collectives over several GPUs (docs/scaling.md)
** ---------------------------------------------------------------------------------------------
** NCCL is opened at run time on first use, once per process: $CUJIT_NCCL when set (a path to
** libnccl.so.2), else libnccl.so.2 from the library path. Without it these calls fail with
** CUJIT_ERROR_UNSUPPORTED saying what to install or set. cujit never sets or unsets NCCL's
** environment variables (NCCL_NVLS_ENABLE among them): they stay as the caller left them.
**
** A communicator holds ranks on GPUs: every listed device of this process (init_all, ranks 0..n-1
** in the order given), or one device of this process as rank `rank` of `nranks` processes sharing
** one unique id (init_rank, which blocks until every rank has joined; the path a run over several
** hosts takes). Its local ranks are those of this process. A collective takes arrays with one
** buffer per local rank, in that order, each on its rank's device, all of one dtype NCCL knows
** (i8, u8, i32, u32, i64, u64, f16, bf16, f32, f64), and `streams` (NULL: every rank's default
** stream; else one per local rank, each NULL or a stream of the rank's device). It is
** asynchronous, like a launch, issued for all local ranks in one NCCL group; counts are elements.
** `recv` NULL means in place (into `send`) for all_reduce, broadcast and reduce; all_gather's recv
** holds nranks * send_count elements, reduce_scatter's send nranks * recv_count. Reduce writes
** recv on the root only. Every argument is checked before NCCL sees it. */
typedef struct cujit_nccl_comm cujit_nccl_comm;

typedef enum cujit_nccl_op {
  CUJIT_NCCL_SUM,
  CUJIT_NCCL_PROD,
  CUJIT_NCCL_MIN,
  CUJIT_NCCL_MAX,
  CUJIT_NCCL_AVG
} cujit_nccl_op;

#define CUJIT_NCCL_ID_HEX 257 /* a unique id as text: 256 hex digits and a NUL */

/* NCCL's version (major*10000 + minor*100 + patch), opening it. */
CUJIT_API cujit_status cujit_nccl_version(cujit_engine *engine, int *version);

/* A new unique id (ncclGetUniqueId) as hex text, on rank 0, for the other ranks to receive: by
** an environment variable, by MPI, or by a file. The file: written whole (a rename), read by
** waiting for it to appear, up to timeout_s seconds (cujit_interrupt cuts the wait short); what
** is read is checked to be an id. */
CUJIT_API cujit_status cujit_nccl_unique_id(cujit_engine *engine, char id_hex[CUJIT_NCCL_ID_HEX]);
CUJIT_API cujit_status cujit_nccl_id_write(cujit_engine *engine, const char *path,
                                           const char *id_hex);
CUJIT_API cujit_status cujit_nccl_id_read(cujit_engine *engine, const char *path, double timeout_s,
                                          char id_hex[CUJIT_NCCL_ID_HEX]);

CUJIT_API cujit_status cujit_nccl_comm_init_all(cujit_engine *engine, const int *ordinals,
                                                int count, cujit_nccl_comm **out);
CUJIT_API cujit_status cujit_nccl_comm_init_rank(cujit_device *device, int nranks, int rank,
                                                 const char *id_hex, cujit_nccl_comm **out);
CUJIT_API void cujit_nccl_comm_free(cujit_nccl_comm *comm);
/* Ranks in the whole communicator; local ranks; the rank and device of local rank `local`. */
CUJIT_API int cujit_nccl_comm_ranks(const cujit_nccl_comm *comm);
CUJIT_API int cujit_nccl_comm_local(const cujit_nccl_comm *comm);
CUJIT_API int cujit_nccl_comm_rank(const cujit_nccl_comm *comm, int local);
CUJIT_API cujit_device *cujit_nccl_comm_device(const cujit_nccl_comm *comm, int local);

CUJIT_API cujit_status cujit_nccl_all_reduce(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                             cujit_buffer *const *recv, size_t count,
                                             cujit_nccl_op op, cujit_stream *const *streams);
CUJIT_API cujit_status cujit_nccl_broadcast(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                            cujit_buffer *const *recv, size_t count, int root,
                                            cujit_stream *const *streams);
CUJIT_API cujit_status cujit_nccl_reduce(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                         cujit_buffer *const *recv, size_t count, cujit_nccl_op op,
                                         int root, cujit_stream *const *streams);
CUJIT_API cujit_status cujit_nccl_all_gather(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                             cujit_buffer *const *recv, size_t send_count,
                                             cujit_stream *const *streams);
CUJIT_API cujit_status cujit_nccl_reduce_scatter(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                                 cujit_buffer *const *recv, size_t recv_count,
                                                 cujit_nccl_op op, cujit_stream *const *streams);

#ifdef __cplusplus
}
#endif

#endif /* CUJIT_H */
