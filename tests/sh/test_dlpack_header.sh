# test_dlpack_header.sh -- include/cujit_dlpack.h beside an official dlpack.h, in C11 and C++11 to
# C++20 (each compiler found: cc, c++, clang, clang++), warnings as errors: alone, and followed by
# a dlpack.h (its include guard then keeps it out); after a dlpack.h of major 1 (its definitions are
# used, and the layout checks hold them to the ABI); after one of another major, or of a wrong
# layout, an error that says so. The "official" headers here are stand-ins written for the test,
# with the official header's guard and version macro.
# Run by ctest as: bash test_dlpack_header.sh /path/to/cujit.
set -u
source "$(dirname "$0")/lib.sh"
inc="${CUJIT_SOURCE_DIR:?run through ctest}/include"
mkdir -p "$TMP/v1/dlpack" "$TMP/v2/dlpack" "$TMP/bad/dlpack" "$TMP/guard/dlpack"

# A dlpack.h whose body must never be read (cujit_dlpack.h came first).
cat >"$TMP/guard/dlpack/dlpack.h" <<'EOF'
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#error "the official header was read after cujit_dlpack.h defined the same names"
#endif
EOF
# A stand-in of a major-1 dlpack.h: the ABI's names and layout, with one extra name of its own.
official() { # MAJOR FLAGS_FIELD
  cat <<EOF
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
#include <stdint.h>
#define DLPACK_MAJOR_VERSION $1
#define DLPACK_MINOR_VERSION 3
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13, kDLNewDevice = 99 } DLDeviceType;
typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 } DLDataTypeCode;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct { void *data; DLDevice device; int32_t ndim; DLDataType dtype; int64_t *shape;
                 int64_t *strides; uint64_t byte_offset; } DLTensor;
typedef struct DLManagedTensorVersioned { DLPackVersion version; void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self); $2 DLTensor dl_tensor; }
  DLManagedTensorVersioned;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#endif
EOF
}
official 1 "uint64_t flags;" >"$TMP/v1/dlpack/dlpack.h"
official 2 "uint64_t flags;" >"$TMP/v2/dlpack/dlpack.h"
official 1 "" >"$TMP/bad/dlpack/dlpack.h" # no flags: a layout of another ABI

cat >"$TMP/alone.c" <<'EOF'
#include <cujit.h>
#include <cujit_dlpack.h>
#include <dlpack/dlpack.h>
static void drop(DLManagedTensorVersioned *self) { (void)self; }
int main(void) {
  int64_t shape[CUJIT_DLPACK_MAX_DIMS] = {4};
  DLManagedTensorVersioned m = {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, 0, drop,
                                DLPACK_FLAG_BITMASK_READ_ONLY, {0, {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, 0, 0}};
  m.deleter(&m);
  return m.dl_tensor.device.device_type == kDLCUDA && m.version.major == 1 ? 0 : 1;
}
EOF
cat >"$TMP/after.c" <<'EOF'
#include <dlpack/dlpack.h>
#include <cujit_dlpack.h>
int main(void) {
  DLManagedTensorVersioned m;
  m.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
  m.dl_tensor.device.device_type = kDLNewDevice; /* the official header's own name */
  return DLPACK_MINOR_VERSION == 3 && m.flags == 2 ? 0 : 1;
}
EOF

compilers=()
for c in cc clang; do command -v $c >/dev/null && compilers+=("$c -std=c11 -x c"); done
for c in c++ clang++; do
  command -v $c >/dev/null || continue
  for std in c++11 c++17 c++20; do compilers+=("$c -std=$std -x c++"); done
done
[ ${#compilers[@]} -gt 0 ] || { echo "skip: no C or C++ compiler"; exit 77; }

for c in "${compilers[@]}"; do
  flags="-Wall -Wextra -Werror -pedantic -I$inc"
  # shellcheck disable=SC2086
  if $c $flags -I"$TMP/guard" "$TMP/alone.c" -o "$TMP/alone" 2>"$TMP/err" && "$TMP/alone"; then
    ok "$c: alone, then the official header (kept out by its guard)"
  else
    fail "$c: alone: $(cat "$TMP/err")"
  fi
  # shellcheck disable=SC2086
  if $c $flags -I"$TMP/v1" "$TMP/after.c" -o "$TMP/after" 2>"$TMP/err" && "$TMP/after"; then
    ok "$c: after an official header of major 1 (its definitions used)"
  else
    fail "$c: after major 1: $(cat "$TMP/err")"
  fi
  # shellcheck disable=SC2086
  run $c $flags -I"$TMP/v2" -fsyntax-only "$TMP/after.c"
  check "$c: after major 2, refused" "$err" "cujit reads and writes DLPack 1.x tensors"
  # shellcheck disable=SC2086
  run $c $flags -I"$TMP/bad" -fsyntax-only "$TMP/after.c"
  check "$c: a wrong layout, refused" "$err" "DLManagedTensorVersioned is 80 bytes"
done
finish
