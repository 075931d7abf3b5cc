/*
** fuzz_includes.c -- the #include resolver and the manifest: any source text is resolved (names
** looked up under a directory that does not exist, so the disk is only probed), its manifest is
** written and must check as unchanged; any bytes given as a manifest are checked without a crash.
*/
#include "fuzz.h"
#include "compile/includes.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *source = fuzz_cstring(data, size);
  const char *flags[] = {"-I/nonexistent/cujit-fuzz", "--pre-include=/nonexistent/p.h"};
  const char *names[] = {"cujit/fuzz.h"}, *sources[] = {"#include <cujit/fuzz.h>\n"};
  /* stand-ins too: they answer names no file does, host/ ones for an #include only */
  const char *std_names[] = {"stdio.h", "toolkit/t.h", "host/vector"};
  const char *std_sources[] = {"#include <stdio.h>\n#include <t.h>\n", "#include <vector>\n",
                               "#if __has_include(<stdio.h>)\n#include <vector>\n#endif\n"};
  cj_include_request rq = {.source = source,
                           .name = "/nonexistent/k.cu",
                           .flags = flags,
                           .flag_count = 2,
                           .builtin_names = names,
                           .builtin_sources = sources,
                           .builtin_count = 1,
                           .standin_names = std_names,
                           .standin_sources = std_sources,
                           .standin_count = 3,
                           .elide_host_code = 1};
  cj_includes inc;
  if (!cj_includes_resolve(&rq, &inc)) abort();
  uint8_t key[16] = {1, 2, 3}, got[16];
  char *m = inc.cacheable ? cj_includes_manifest(&inc, key) : NULL;
  if (m && (!cj_includes_manifest_check(m, strlen(m), got) || memcmp(key, got, 16) != 0)) {
    fprintf(stderr, "a fresh manifest does not check:\n%s\n", m);
    abort();
  }
  free(m);
  cj_includes_free(&inc);
  cj_includes_manifest_check((const char *)data, size, got);
  free(source);
  return 0;
}
