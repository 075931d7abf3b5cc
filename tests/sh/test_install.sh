#!/usr/bin/env bash
# test_install.sh -- what an embedding C program sees: install into a scratch prefix, then build
# the C quick start (examples/c/saxpy.c) against it through pkg-config (without an rpath, where
# it must not start; with the README's rpath line; and `pkg-config --static` against libcujit.a
# alone) and through find_package(cujit), and run each in compile-only mode (no GPU needed).
# Every run uses a scratch cache ($tmp/cache), never the user's.
set -u
src=${CUJIT_SOURCE_DIR:?} build=${CUJIT_BINARY_DIR:?}
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
[ -f "$tmp/prefix/include/cujit.h" ] || fail "cujit.h not installed"
[ -f "$tmp/prefix/include/cujit_lua.h" ] || fail "cujit_lua.h not installed"
[ -f "$tmp/prefix/include/cujit_dlpack.h" ] || fail "cujit_dlpack.h not installed"
[ -f "$libdir/pkgconfig/cujit.pc" ] || fail "cujit.pc not installed"
[ -f "$libdir/cmake/cujit/cujitConfig.cmake" ] || fail "cujitConfig.cmake not installed"
run_saxpy() { CUJIT_CACHE_DIR="$tmp/cache" CUJIT_EXAMPLE_COMPILE_ONLY=1 "$@"; }
build_saxpy() { # OUT LIBS...
  local out=$1
  shift
  cc -std=c11 -Wall -Werror $(pkg-config --cflags cujit) "$src/examples/c/saxpy.c" -o "$out" "$@"
}

# pkg-config (only our .pc, taken as written: a sysroot setting would be prefixed to its paths)
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# Without an rpath the loader does not look in the prefix (the README says so).
build_saxpy "$tmp/saxpy_plain" $(pkg-config --libs cujit) -lm || fail "build through pkg-config"
run_saxpy "$tmp/saxpy_plain" >/dev/null 2>"$tmp/plain.err" &&
  fail "a program linked without an rpath found libcujit.so.0 in $libdir"
grep -q "libcujit.so.0" "$tmp/plain.err" || fail "no loader error about libcujit.so.0: $(cat "$tmp/plain.err")"
# The README's line: the rpath from pkg-config's libdir variable.
build_saxpy "$tmp/saxpy_pc" $(pkg-config --libs cujit) -lm \
  -Wl,-rpath,"$(pkg-config --variable=libdir cujit)" || fail "build through pkg-config with the rpath"
run_saxpy "$tmp/saxpy_pc" | grep -q "compiled saxpy" ||
  fail "the pkg-config build (rpath from --variable=libdir) did not compile its kernel"

# Static: with only libcujit.a in the prefix, `pkg-config --static` must name everything it
# needs (xxHash, dl, pthread, m).
cp -a "$tmp/prefix" "$tmp/static"
rm -f "$tmp"/static/lib*/libcujit.so*
static_pc="$(ls -d "$tmp"/static/lib*/ | head -1)pkgconfig"
static_libs=$(PKG_CONFIG_PATH=$static_pc pkg-config --static --libs cujit) || fail "pkg-config --static --libs cujit"
for lib in -lcujit -lxxhash -ldl -lpthread -lm; do
  grep -qw -- "$lib" <<<"$static_libs" || fail "pkg-config --static gives no $lib: $static_libs"
done
PKG_CONFIG_PATH=$static_pc build_saxpy "$tmp/saxpy_static" $static_libs || fail "static link with: $static_libs"
ldd "$tmp/saxpy_static" | grep -q libcujit && fail "the static build still needs libcujit.so"
run_saxpy "$tmp/saxpy_static" | grep -q "compiled saxpy" || fail "the static build did not compile its kernel"

# find_package
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(cujit 0.1 REQUIRED)
add_executable(saxpy "$src/examples/c/saxpy.c")
target_link_libraries(saxpy PRIVATE cujit::cujit m)
CMAKE
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_RPATH="$libdir" >"$tmp/consumer.log" 2>&1 &&
  cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "build through find_package"; }
run_saxpy "$tmp/consumer/build/saxpy" | grep -q "compiled saxpy" ||
  fail "the find_package build did not compile its kernel"
echo "installed, and built the C quick start through pkg-config (rpath, static) and find_package"
