#!/usr/bin/env bash
# test_header_examples.sh -- every code example in include/cujit.h compiles, as C and as C++. An
# example is the run of comment lines indented by five spaces ("**     code") after a line ending
# in "Example:"; each is compiled as the body of a function with `cujit_engine *e` in scope,
# warnings as errors (unused variables aside: examples declare what they show): by $CC at C11,
# and by g++ and clang++ (those installed; a missing one is named) at C++11, 14, 17 and 20 with
# -pedantic. Then a C++ program that uses every CUJIT_ARG_* and *_INIT macro (and includes
# cujit_lua.h) is built against the build's libcujit and run on the CPU device: the header works
# unchanged from C++, values and all. The CUJIT argument is not used.
set -u
cd "${CUJIT_SOURCE_DIR:?}" || exit 1
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "no C compiler: skipped"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
awk -v dir="$TMP" '
  /Example:[[:space:]]*$/ { n++; file = sprintf("%s/example%02d.c", dir, n); taking = 1;
                            print "#include \"cujit.h\"" > file;
                            printf "void example%d(cujit_engine *e);\nvoid example%d(cujit_engine *e) {\n", n, n > file;
                            next }
  taking && /^\*\*     / { sub(/^\*\*     /, ""); print > file; next }
  taking { print "}" > file; close(file); taking = 0 }
' include/cujit.h
cxxs=()
for cxx in g++ clang++; do
  if command -v "$cxx" >/dev/null; then cxxs+=("$cxx"); else echo "note: no $cxx here: not tested"; fi
done
fails=0 count=0
for f in "$TMP"/example*.c; do
  [ -e "$f" ] || break
  count=$((count + 1))
  if "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -Wno-unused -fsyntax-only -Iinclude "$f" \
    2>"$TMP/err"; then
    echo "ok: $(basename "$f") compiles"
  else
    echo "FAIL: example $count of include/cujit.h does not compile:" >&2
    cat -n "$f" >&2
    cat "$TMP/err" >&2
    fails=$((fails + 1))
  fi
  for cxx in "${cxxs[@]}"; do
    for std in c++11 c++14 c++17 c++20; do
      if "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror -Wno-unused -Wno-unused-parameter \
        -fsyntax-only -Iinclude -x c++ "$f" 2>"$TMP/err"; then
        echo "ok: $(basename "$f") compiles as $std ($cxx)"
      else
        echo "FAIL: example $count of include/cujit.h does not compile as $std ($cxx):" >&2
        cat "$TMP/err" >&2
        fails=$((fails + 1))
      fi
    done
  done
done
[ "$count" -gt 0 ] || { echo "FAIL: no example found in include/cujit.h" >&2; fails=1; }

# --- a C++ program, built and run ----------------------------------------------------------------
# Every macro's value is checked: the C++ spellings must give what the C ones give, and a kernel
# that stores its arguments shows what reached the device.
cat >"$TMP/prog.cpp" <<'CPP'
#include "cujit.h"
#include "cujit_lua.h" // C++ programs embed Lua too: this header must compile as C++ as well

#include <cstdio>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != CUJIT_OK) {                                                                      \
      std::fprintf(stderr, "line %d: %s\n", __LINE__, cujit_errmsg(e));                            \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main() {
  cujit_engine *e = nullptr;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  CHECK(cujit_set_device(e, CUJIT_DEVICE_CPU));
  cujit_device *dev = nullptr;
  CHECK(cujit_current_device(e, &dev));
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
  cujit_kernel_attributes attrs = CUJIT_KERNEL_ATTRIBUTES_INIT;
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cujit_cache_stats stats = CUJIT_CACHE_STATS_INIT;
  cujit_param_info param = CUJIT_PARAM_INFO_INIT;
  cujit_scalar sum = CUJIT_SCALAR_INIT;
  if (info.size != sizeof info || options.size != sizeof options || attrs.size != sizeof attrs ||
      cfg.size != sizeof cfg || stats.size != sizeof stats || param.struct_size != sizeof param ||
      sum.size != sizeof sum || options.arch || cfg.grid[0] || cfg.block[0] || cfg.shared_bytes ||
      cfg.stream || param.name || param.size || sum.dtype || sum.v.u) {
    std::fprintf(stderr, "an *_INIT macro gave a wrong size or a field that is not zero\n");
    return 1;
  }
  CHECK(cujit_device_info_get(dev, &info));
  cujit_kernel *k = nullptr;
  CHECK(cujit_kernel_define(e, "store(long long i, unsigned long long u, double f, double *out)",
                            "out[0] = (double)i; out[1] = (double)u; out[2] = f;", nullptr,
                            &options, &k));
  CHECK(cujit_kernel_attributes_get(k, &attrs));
  CHECK(cujit_kernel_param(k, 3, &param));
  cujit_buffer *out = nullptr;
  CHECK(cujit_buffer_alloc(e, 3 * sizeof(double), CUJIT_F64, &out));
  cujit_arg args[] = {CUJIT_ARG_I(-7), CUJIT_ARG_U(1u << 20), CUJIT_ARG_F(2.5f),
                      CUJIT_ARG_BUF(out)};
  if (args[0].kind != CUJIT_ARG_INT || args[0].v.i != -7 || args[1].kind != CUJIT_ARG_UINT ||
      args[1].v.u != (1u << 20) || args[2].kind != CUJIT_ARG_FLOAT || args[2].v.f != 2.5 ||
      args[3].kind != CUJIT_ARG_BUFFER || args[3].v.buffer != out) {
    std::fprintf(stderr, "a CUJIT_ARG_* macro gave a wrong cujit_arg\n");
    return 1;
  }
  cfg.grid[0] = 1, cfg.block[0] = 1;
  CHECK(cujit_launch(k, &cfg, args, 4));
  double got[3] = {0, 0, 0};
  CHECK(cujit_memcpy_dtoh(got, out, 0, sizeof got, nullptr));
  CHECK(cujit_cache_stats_get(e, &stats));
  CHECK(cujit_reduce(out, CUJIT_REDUCE_SUM, 3, &sum, nullptr));
  std::printf("%s: %.17g %.17g %.17g\n", info.ordinal == CUJIT_DEVICE_CPU ? "cpu" : "?", got[0],
              got[1], got[2]);
  cujit_close(e);
  return !(got[0] == -7 && got[1] == 1048576 && got[2] == 2.5 && sum.v.f == 1048571.5 &&
           param.kind == CUJIT_PARAM_POINTER);
}
CPP
BIN=${CUJIT_BINARY_DIR:-}
if [ ${#cxxs[@]} -eq 0 ]; then
  echo "note: no C++ compiler here: the header is tested as C only"
elif [ -z "$BIN" ] || [ ! -e "$BIN/libcujit.so" ]; then
  echo "FAIL: CUJIT_BINARY_DIR (${BIN:-unset}) holds no libcujit.so: the C++ program cannot be built" >&2
  fails=$((fails + 1))
else
  [ "${CUJIT_TEST_NO_CPU:-}" = 1 ] && echo "note: CUJIT_TEST_NO_CPU=1: the C++ program is built, not run"
  # A sanitizer build's libcujit (GCC's runtime) links only into a program built with it, by g++.
  san=()
  nm -D "$BIN/libcujit.so" 2>/dev/null | grep -qw __asan_init && san=(-fsanitize=address,undefined)
  for cxx in "${cxxs[@]}"; do
    if [ ${#san[@]} -gt 0 ] && [ "$cxx" != g++ ]; then
      echo "note: a sanitizer build: the C++ program is built and run by g++ only, not $cxx"
      continue
    fi
    for std in c++11 c++20; do
      if ! "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror "${san[@]}" -Iinclude -o "$TMP/prog" \
        "$TMP/prog.cpp" -L"$BIN" -lcujit -Wl,-rpath,"$BIN" 2>"$TMP/err"; then
        echo "FAIL: the C++ program does not compile as $std ($cxx):" >&2
        cat "$TMP/err" >&2
        fails=$((fails + 1))
        continue
      fi
      [ "${CUJIT_TEST_NO_CPU:-}" = 1 ] && continue
      if out=$("$TMP/prog" 2>&1) && [ "$out" = "cpu: -7 1048576 2.5" ]; then
        echo "ok: the C++ program ($std, $cxx) ran on the CPU device: $out"
      else
        echo "FAIL: the C++ program ($std, $cxx) failed on the CPU device: $out" >&2
        fails=$((fails + 1))
      fi
    done
  done
fi
echo "$count example(s), $fails failure(s)"
[ "$fails" -eq 0 ]
