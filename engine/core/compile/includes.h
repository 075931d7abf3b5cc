/*
** includes.h -- resolving a translation unit's #include files the way the compiler would, so that
** what the cache key hashes is exactly what the compiler reads: each file is read once, hashed,
** and handed to the compiler as an in-memory header under its resolved name. Also the manifest
** that lets a cache hit check those files by stat instead of reading them again. Independent of
** NVRTC and of the cache: the result is a list of (name, bytes) and a digest. Internal.
*/
#ifndef CUJIT_INCLUDES_H
#define CUJIT_INCLUDES_H

#include <stddef.h>
#include <stdint.h>

/* What to resolve, and where the compiler would look. */
typedef struct cj_include_request {
  const char *source; /* the main translation unit */
  const char *name;   /* its name; its directory is where its quoted includes are looked for */
  const char *const *flags; /* the compiler's options, in order: -I/--include-path and
                            ** --pre-include/-include are read from them */
  size_t flag_count;
  const char *system_dir;           /* searched after every -I directory (the toolkit's), or NULL */
  const char *const *builtin_names; /* headers the compiler holds in memory (<cujit/...>); */
  const char *const *builtin_sources; /* they are found before any file */
  size_t builtin_count;
  /* Stand-ins for the standard headers NVRTC lacks (kernels_src/std/), or none: taken only where
  ** no file answers a name, never for a file that exists; "toolkit/NAME" is looked for before the
  ** system directory (the toolkit's NAME cannot compile under NVRTC), NAME after it, and
  ** "host/NAME" (a host-only header: its names fail where device code uses them) last, for an
  ** #include only. Each is handed over as "cujit/std/<its name>", the directive rewritten to it,
  ** and hashed like any header. */
  const char *const *standin_names;
  const char *const *standin_sources;
  size_t standin_count;
  int elide_host_code; /* each file outside system_dir is read without its host code (host_code.h):
                       ** for both devices, as NVRTC and the CPU device's unit writer take the
                       ** headers from here (g++ cannot compile a host wrapper's <<<...>>>) */
} cj_include_request;

/* The stand-ins cmake/embed.cmake embeds from kernels_src/std/ (names relative to it). */
extern const char *const cj_std_header_names[];
extern const char *const cj_std_header_sources[];
extern const size_t cj_std_header_count;

typedef struct cj_include_file {
  char *path;      /* as it was found ("./hdr.h", "inc/sub/x.h"), NULL for a path probed absent */
  char *canonical; /* its real path: the name the compiler is given */
  int64_t size, mtime_sec, mtime_nsec; /* mtime_sec -1: do not trust stat, compare contents */
  int64_t device,
      inode;     /* another file at the path (a link moved, a file replaced): resolve again */
  uint64_t hash; /* XXH64 of its bytes */
} cj_include_file;

typedef struct cj_includes {
  char *source; /* the main translation unit, each resolved #include naming its real path */
  char **header_names, **header_sources; /* the compiler's in-memory headers, parallel */
  size_t header_count;
  char **flags; /* the request's flags, each --pre-include naming its real path */
  size_t flag_count;
  uint8_t digest[16]; /* XXH3-128 over source, headers and flags: the key's part */
  int cacheable;      /* 0: an #include could not be resolved by name; why says where */
  char why[512];
  cj_include_file *files; /* every file read and every path probed absent, for the manifest */
  size_t file_count;
} cj_includes;

/* Resolves every #include (and __has_include) of the source and, recursively, of what it
** includes, active or not. Returns 1, or 0 when out of memory (out is then freed). A name cujit
** cannot resolve (computed by a macro, unreadable, holding NUL bytes) leaves out->cacheable 0
** with the reason; the compiler then gets the request unchanged and must not be cached. */
int cj_includes_resolve(const cj_include_request *request, cj_includes *out);

/* 1 when resolving `source` with these flags can read no file at all: its text never says
** include or import (no directive, no __has_include, active or not) and no flag pre-includes
** one. Its full key then needs no manifest: resolving it reads nothing, and costs less than the
** manifest's lookup. */
int cj_includes_none(const char *source, const char *const *flags, size_t flag_count);
void cj_includes_free(cj_includes *inc);

/* The manifest: the full key plus every file with its size, mtime, device, inode and hash, and
** every path probed absent. Malloc'd text, or NULL. */
char *cj_includes_manifest(const cj_includes *inc, const uint8_t key[16]);
/* 1 and the recorded key when every path still names the same file (device and inode), holding
** what was hashed (a stat; its contents only when size or mtime moved), and every absent path is
** still absent; else 0. */
int cj_includes_manifest_check(const char *text, size_t len, uint8_t key[16]);
/* 1 when the manifest lists no file and no absent path: the unit read nothing but itself. */
int cj_includes_manifest_empty(const char *text, size_t len);

#endif
