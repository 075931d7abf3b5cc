#!/usr/bin/env bash
# test_rockspec.sh -- cujit-scm-1.rockspec, as a Lua user runs it from a checkout: `luarocks
# make --local` (into a scratch tree, from a scratch copy of the source, so neither ~/.luarocks
# nor the checkout is touched), then a stock lua5.4 with the tree's paths requires the module,
# finds it in the tree, and compiles a kernel for sm_90 (NVRTC only, scratch cache).
# Skips (77) when luarocks is not installed: scripts/setup.sh installs it.
set -u
src=${CUJIT_SOURCE_DIR:?}
command -v luarocks >/dev/null || { echo "skip: luarocks is not installed (apt-get install luarocks)"; exit 77; }
command -v lua5.4 >/dev/null || { echo "skip: lua5.4 is not installed"; exit 77; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir "$tmp/src"
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./build.luarocks --exclude=./.git -cf - . |
  tar -C "$tmp/src" -xf - || fail "copying the source"
rocks() { luarocks --lua-version 5.4 --tree "$tmp/tree" "$@"; }
(cd "$tmp/src" && rocks make --local cujit-scm-1.rockspec) >"$tmp/make.log" 2>&1 ||
  { cat "$tmp/make.log"; fail "luarocks make --local"; }
grep -q "cujit scm-1 is now installed" "$tmp/make.log" || { cat "$tmp/make.log"; fail "luarocks did not install the rock"; }
[ -f "$tmp/tree/lib/lua/5.4/cujit.so" ] || fail "no cujit.so in the tree: $(find "$tmp/tree" -name '*.so')"
eval "$(rocks path)" || fail "luarocks path"
cd "$tmp" || fail "cd"
out=$(CUJIT_CACHE_DIR="$tmp/cache" lua5.4 -e '
  local cuda = require "cujit"
  print("from", package.searchpath("cujit", package.cpath))
  local k = cuda.jit("rock(int *x, int n)", "if (threadIdx.x < n) x[threadIdx.x] = 1;", {arch = "sm_90"})
  print("kernel", k:name(), k:ptx():match("%.entry") ~= nil)' 2>&1) || fail "require \"cujit\" from the tree: $out"
grep -qx "from	$tmp/tree/lib/lua/5.4/cujit.so" <<<"$out" || fail "the module did not come from the tree: $out"
grep -qx "kernel	rock	true" <<<"$out" || fail "the rock's module did not compile a kernel: $out"
echo "luarocks make --local built and installed cujit; lua5.4 required it from the tree"
