/* <inttypes.h> for NVRTC (cujit stand-in): <stdint.h> and the printf formats of its types, for
** the device printf. int64_t is long long under NVRTC (libcu++), intptr_t and intmax_t too. */
#ifndef CUJIT_STD_INTTYPES_H
#define CUJIT_STD_INTTYPES_H
#include <stdint.h>
#define PRId8 "d"
#define PRId16 "d"
#define PRId32 "d"
#define PRId64 "lld"
#define PRIi8 "i"
#define PRIi16 "i"
#define PRIi32 "i"
#define PRIi64 "lli"
#define PRIu8 "u"
#define PRIu16 "u"
#define PRIu32 "u"
#define PRIu64 "llu"
#define PRIx8 "x"
#define PRIx16 "x"
#define PRIx32 "x"
#define PRIx64 "llx"
#define PRIX8 "X"
#define PRIX16 "X"
#define PRIX32 "X"
#define PRIX64 "llX"
#define PRIdPTR "lld"
#define PRIuPTR "llu"
#define PRIxPTR "llx"
#define PRIdMAX "lld"
#define PRIuMAX "llu"
#endif
