/*
** host_code.h -- host code elided: a CUDA source as it is shipped (main, host functions that call
** cudaMalloc and launch with <<<>>>, host globals, host classes and templates) made into the
** device code both compilers can take, by blanking the host-only declarations. Internal.
**
** The rules (docs/cuda-code.md, "Host code"): the source is read as a list of declarations at
** namespace scope (namespace and extern "C" blocks are entered). A declaration whose head says
** __global__, __device__, __constant__, __managed__ or __shared__ (itself, or through a macro the
** source defines) is device code and stays, with everything it names, and so on until nothing
** more is named: a host function stays when kept code calls it (or takes its address), a host
** type, variable or prototype when kept code names it. The rest is blanked. Whatever cujit
** cannot read as a declaration (a macro's invocation, an unknown upper-case word before the
** return type, using, static_assert) stays. Preprocessor lines are read as blank and never
** blanked (except #pragma and #include inside a blanked definition), so every #if stays
** balanced. Removed text becomes spaces and newlines stay, so every line keeps its number. A
** unit's headers are elided together, each knowing the words the rest keeps (elide_unit).
*/
#ifndef CUJIT_HOST_CODE_H
#define CUJIT_HOST_CODE_H

#include <stddef.h>

/* The rules' version, in the key of the include manifest (compile.c): a hit by the manifest
** stands for the headers' elided text, so a change of what is elided must change it. */
#define CJ_HOST_CODE_RULES "host code rules 4"

/* The source with its host-only declarations blanked (malloc'd; NULL when out of memory), and
** in *elided how many were blanked. Text cujit cannot read as declarations (a brace or
** parenthesis that closes nothing or is never closed, #if branches that open braces unevenly)
** is given back unchanged, with the reason and line in `why` (empty otherwise). */
char *cj_host_code_elide(const char *source, size_t *elided, char *why, size_t why_len);

/* A set of words (pointers into text that outlives it). */
typedef struct cj_host_word {
  const char *s;
  size_t n;
} cj_host_word;
typedef struct cj_host_set {
  cj_host_word *w;
  size_t cap, n;
} cj_host_set;

/* The same, for one file of a unit whose other files' kept code names the words `named` and calls
** `called` (NULL: none): what they name stays, as if kept code of this file named it (a header's
** struct that a kernel of the main file takes). */
char *cj_host_code_elide_in(const char *source, const cj_host_set *named, const cj_host_set *called,
                            size_t *elided, char *why, size_t why_len);

/* The `n` texts (malloc'd; each replaced by its elided text, freed by the caller) of the user's
** headers of a translation unit whose main source, its host code elided already, is `main`: a
** header's type, constant or function stays when kept code anywhere in the unit names it (a
** kernel of the main file taking a struct a helper header declares; another header's device
** function), so each is elided knowing what the others keep, until none keeps more. 0 when out of
** memory (every texts[i] still one the caller frees). */
int cj_host_code_elide_unit(const char *main, char **texts, size_t n);

/* The main source elided knowing its user headers' `n` texts (their host code elided already,
** knowing the main source elided alone): what they keep names stays in the main source too (a
** `struct Params` the main file declares, then includes the header whose kernel takes it). NULL
** when out of memory. */
char *cj_host_code_elide_among(const char *source, const char *const *others, size_t n,
                               size_t *elided, char *why, size_t why_len);

/* --- between host_code.c and host_text.c --- */

int cj_host_set_has(const cj_host_set *st, const char *s, size_t n);
/* 1 when the word was new, 0 when it was there, -1 when out of memory. */
int cj_host_set_add(cj_host_set *st, const char *s, size_t n);

/* __global__, __device__, __constant__, __managed__, __shared__; NULL-terminated. */
extern const char *const cj_host_device_words[];

/* 0 when the blanked text (cj_blank_source) surely holds no host code: every declaration at
** namespace scope says a device word before its body; 1 when it may. Allocates nothing. */
int cj_host_may_hold_host_code(const char *blanked);

/* Sets dir[i] to 1 at the '#' of each preprocessor line of s (n bytes; `blanked` is its
** cj_blank_source copy, which tells raw strings). */
void cj_host_mark_directives(const char *s, const char *blanked, size_t n, char *dir);

/* A #define of the source: its name, its replacement text (offsets into the source). */
typedef struct cj_host_macro {
  size_t at, len;   /* its name */
  size_t body, end; /* its replacement */
  int device, used; /* the replacement says a device word; its words were added already */
} cj_host_macro;

/* Each #define of s (dir from cj_host_mark_directives) into *out (malloc'd), *count of them; 0
** when out of memory. */
int cj_host_read_macros(const char *s, const char *dir, cj_host_macro **out, size_t *count);

/* Blanks out[from, to) but newlines and the preprocessor lines that shape the program (#if,
** #define, ...; dir from cj_host_mark_directives, NULL when s has no '#'): a #pragma or #include
*inside goes with it. */
void cj_host_blank(const char *s, const char *dir, char *out, size_t from, size_t to);

#endif
