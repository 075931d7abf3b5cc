/*
** program.h -- programs on devices: building one for the current device's arch, its life
** (references), loading its module onto each device on first need (through the backend) and
** unloading it with the last reference; the public cujit_program_* calls. Internal.
*/
#ifndef CUJIT_PROGRAM_H
#define CUJIT_PROGRAM_H

#include "run/device.h"
#include "compile/compile.h"

/* A compiled translation unit as its users see it; the backends see its code as a cj_image
** (backend/image.h, cj_program_image). Made and owned by this layer, which shares the heavy parts
** between the programs of one cache key: the fields up to `kernels` point into that shared record
** and live as long as the program. */
struct cujit_program {
  char *name;    /* for messages: "saxpy.cu", "<source>", the kernel name */
  char *source;  /* the full translation unit given to the compiler */
  char arch[16]; /* "sm_90" / "compute_90" */
  char *ptx;     /* NUL-terminated */
  size_t ptx_len;
  void *cubin; /* NULL for compute_XX */
  size_t cubin_len;
  cj_signature *kernels; /* the extern "C" __global__ kernels, source order */
  size_t nkernels;

  /* This program's own. */
  char *log; /* "" when none or from the cache */
  int from_cache;
  double ms;

  /* The program layer's. */
  cj_link link; /* in the live list while the user holds the handle */
  cujit_engine *engine;
  _Atomic int refs;     /* the user's handle + one per kernel got from it */
  struct cj_code *code; /* the shared record: bytes, kernels, modules on devices */
  char **nonnull;       /* the compile options' nonnull names (one allocation), for its kernels */
  size_t nnonnull;
};

/* The engine's map of loaded programs, from cache key to what the programs of that key share
** (bytes, kernels, the module on each device), so a second program of a key costs a lookup in
** the byte cache and this map, and no load; and its memo, from what a build that read no file was
** given to its key, so building the same again skips the scan and the key (docs/ARCHITECTURE.md,
** "The program cache"). Opened and closed by engine.c. */
cj_program_map *cj_program_map_open(void);
void cj_program_map_close(cj_program_map *map);

/* The arch a compile with these options targets: options->arch, else the current device's
** (failing with a message that says to pass an explicit arch when there is no device). */
cujit_status cj_program_arch(cujit_engine *engine, const cujit_compile_options *options, char *arch,
                             size_t len);

/* Compiles (or fetches from the cache) a translation unit for cj_program_arch's arch. The result
** has refs == 1 and is not in the live list. */
cujit_status cj_program_build(cujit_engine *engine, const char *source, const char *name,
                              const cujit_compile_options *options, cujit_program **out);

/* program_source.c: the kernels of the source a build was given, read into *scan (the host code
** elided first, the headers included by quoted name read too, name expressions instantiated;
** scan.h), failing with a message that names the program; and after the compile, each
** C++-linkage kernel's symbol from the lowered names kept in the entry. */
cujit_status cj_program_scan(cujit_engine *engine, const char *source, const char *name,
                             const cujit_compile_options *options, cj_scan *scan);
cujit_status cj_program_lowered_names(cujit_engine *engine, const char *name, cj_scan *scan,
                                      const cj_cache_entry *e);

/* References: the last release frees the program; the last program of a key dropped from the map
** unloads the shared record from every device. */
void cj_program_retain(cujit_program *program);
void cj_program_release(cujit_program *program);

/* The program's module on `dev` (entered by the caller), loaded on first need. */
cujit_status cj_program_module(cujit_program *program, cujit_device *dev, void **module);

#endif
