#!/usr/bin/env bash
# test_cxx.sh -- C++ hosts: the public headers work unchanged from C++ (issue 24).
#   1. Every macro the headers define (#define CUJIT_..., found here by name, so a new one cannot
#      be forgotten) is used by tests/cxx/host.cpp outside its comments; include guards and
#      CUJIT_API (the library's own declaration mark) aside.
#   2. host.cpp, with tests/cxx/layout.c built as C beside it, is built by g++ and clang++ at
#      C++11, 14, 17 and 20 (-Wall -Wextra -Wpedantic -Werror) against the build's libcujit and
#      run: it checks every macro's value, C's and C++'s layouts of the public structs, and
#      launches a kernel with every kind of argument on the GPU (CUJIT_REQUIRE_GPU=1: no GPU is a
#      failure) or the CPU device.
#   3. tests/cxx/with_cuda.c: cujit.h and cujit_lua.h in one translation unit with the toolkit's
#      <cuda.h> and <cuda_runtime.h>, in both orders, as C11 and as C++11 to C++20.
# A compiler that is not installed is named and left out (never a failure); with none, exit 77.
set -u
source "$(dirname "$0")/lib.sh"
cd "${CUJIT_SOURCE_DIR:?}" || exit 1
BIN=${CUJIT_BINARY_DIR:?run through ctest}
CC=${CC:-cc}
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
HOST=tests/cxx/host.cpp

# --- 1. every macro, by name -----------------------------------------------------------------
macros=$(sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\(CUJIT_[A-Za-z0-9_]*\).*/\1/p' \
  include/cujit.h include/cujit_lua.h | sort -u)
exempt=" CUJIT_H CUJIT_LUA_H CUJIT_API "
# The reading must find what is known to be there, or a broken pattern would check nothing.
for known in CUJIT_ARG_I CUJIT_ARG_RAW CUJIT_LAUNCH_CONFIG_INIT CUJIT_VERSION_STRING CUJIT_H; do
  grep -qx "$known" <<<"$macros" || fail "the macro list read from the headers lacks $known"
done
code=$(sed -e 's://.*$::' -e 's:/\*.*\*/::g' "$HOST") # host.cpp's code, its comments left out
used=0
for m in $macros; do
  case "$exempt" in *" $m "*) continue ;; esac
  if grep -Eq "(^|[^A-Za-z0-9_])$m([^A-Za-z0-9_]|$)" <<<"$code"; then
    used=$((used + 1))
  else
    fail "$m (include/cujit*.h) is not used by $HOST: use it there and check its value"
  fi
done
ok "$used macros of the headers are used by $HOST"

# --- 2. host.cpp, built and run ----------------------------------------------------------------
cxxs=()
for cxx in g++ clang++; do
  if command -v "$cxx" >/dev/null; then cxxs+=("$cxx"); else echo "note: no $cxx here: not tested"; fi
done
if [ ${#cxxs[@]} -eq 0 ]; then
  echo "skip: no C++ compiler (g++ or clang++) here"
  exit 77
fi
[ -e "$BIN/libcujit.so" ] || fail "$BIN holds no libcujit.so: the C++ program cannot be built"
# A sanitizer build's libcujit (GCC's runtime) links only into a program built with it, by g++.
san=()
nm -D "$BIN/libcujit.so" 2>/dev/null | grep -qw __asan_init && san=(-fsanitize=address,undefined)
if ! "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror "${san[@]}" -Iinclude -c tests/cxx/layout.c \
  -o "$TMP/layout.o" 2>"$TMP/err"; then
  fail "tests/cxx/layout.c does not compile as C11: $(cat "$TMP/err")"
fi
for cxx in "${cxxs[@]}"; do
  if [ ${#san[@]} -gt 0 ] && [ "$cxx" != g++ ]; then
    echo "note: a sanitizer build: host.cpp is built and run by g++ only, not $cxx"
    continue
  fi
  for std in c++11 c++14 c++17 c++20; do
    if ! "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror "${san[@]}" -Iinclude -o "$TMP/host" \
      "$HOST" "$TMP/layout.o" -L"$BIN" -lcujit -Wl,-rpath,"$BIN" 2>"$TMP/err"; then
      fail "$HOST does not build as $std ($cxx): $(cat "$TMP/err")"
      continue
    fi
    if [ "${CUJIT_TEST_NO_CPU:-}" = 1 ] && [ "${CUJIT_REQUIRE_GPU:-}" != 1 ]; then
      ok "$HOST builds as $std ($cxx) (CUJIT_TEST_NO_CPU=1: not run)"
      continue
    fi
    run "$TMP/host"
    if [ "$rc" = 0 ] && grep -q '^ok: [0-9]* checks$' <<<"$out"; then
      ok "$HOST as $std ($cxx): ${out//$'\n'/; }"
    else
      fail "$HOST as $std ($cxx) failed (exit $rc): $out $err"
    fi
  done
done
# One marker line for the summary (scripts/test_summary.lua) from the last run.
grep -m1 '^runs on: ' <<<"${out:-}"

# --- 3. with the toolkit's headers ----------------------------------------------------------------
if [ ! -e "$CUDA_INC/cuda.h" ] || [ ! -e "$CUDA_INC/cuda_runtime.h" ]; then
  fail "no cuda.h and cuda_runtime.h under $CUDA_INC (the toolkit is a build dependency)"
else
  for order in "" -DCUJIT_FIRST; do
    what="cujit.h ${order:+first }with cuda.h and cuda_runtime.h"
    if "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror $order -fsyntax-only -Iinclude \
      -I"$CUDA_INC" tests/cxx/with_cuda.c 2>"$TMP/err"; then
      ok "$what: C11 ($CC)"
    else
      fail "$what: C11 ($CC): $(cat "$TMP/err")"
    fi
    for cxx in "${cxxs[@]}"; do
      for std in c++11 c++14 c++17 c++20; do
        if "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror $order -fsyntax-only -Iinclude \
          -I"$CUDA_INC" -x c++ tests/cxx/with_cuda.c 2>"$TMP/err"; then
          ok "$what: $std ($cxx)"
        else
          fail "$what: $std ($cxx): $(cat "$TMP/err")"
        fi
      done
    done
  done
fi
finish
