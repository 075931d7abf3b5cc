#!/usr/bin/env bash
# test_install.sh -- what an embedding C program sees: install into a scratch prefix, then build
# the C quick start (examples/c/saxpy.c) against it twice, through pkg-config and through
# find_package(cujit), and run it in compile-only mode (no GPU needed).
set -u
src=${CUJIT_SOURCE_DIR:?} build=${CUJIT_BINARY_DIR:?}
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; }
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
[ -f "$tmp/prefix/include/cujit.h" ] || fail "cujit.h not installed"
[ -f "$tmp/prefix/include/cujit_lua.h" ] || fail "cujit_lua.h not installed"
[ -f "$libdir/pkgconfig/cujit.pc" ] || fail "cujit.pc not installed"
[ -f "$libdir/cmake/cujit/cujitConfig.cmake" ] || fail "cujitConfig.cmake not installed"

# pkg-config (only our .pc, taken as written: a sysroot setting would be prefixed to its paths)
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -Wall -Werror $(pkg-config --cflags cujit) "$src/examples/c/saxpy.c" -o "$tmp/saxpy_pc" \
  $(pkg-config --libs cujit) -lm -Wl,-rpath,"$libdir" || fail "build through pkg-config"
CUJIT_CACHE_DIR="$tmp/cache" CUJIT_EXAMPLE_COMPILE_ONLY=1 "$tmp/saxpy_pc" | grep -q "compiled saxpy" ||
  fail "the pkg-config build did not compile its kernel"

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
CUJIT_CACHE_DIR="$tmp/cache" CUJIT_EXAMPLE_COMPILE_ONLY=1 "$tmp/consumer/build/saxpy" | grep -q "compiled saxpy" ||
  fail "the find_package build did not compile its kernel"
echo "installed, and built the C quick start through pkg-config and find_package"
