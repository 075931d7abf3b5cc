#!/usr/bin/env bash
# test_lua_stock.sh -- the loadable module cujit.so from a stock lua5.4: found through
# package.cpath (LUA_CPATH, set by ctest to <build>/lua/?.so), exporting luaopen_cujit and
# nothing internal, working without a GPU, and agreeing with the `cujit` command ($1).
set -u
cujit_cmd=${1:-}

fail() { echo "FAIL: $*" >&2; exit 1; }

command -v lua5.4 >/dev/null || { echo "SKIP: no lua5.4 on PATH"; exit 77; }

so=$(lua5.4 -e 'io.write(package.searchpath("cujit", package.cpath) or "")')
[ -n "$so" ] || fail "cujit.so not found on package.cpath (LUA_CPATH=${LUA_CPATH:-unset})"
case "$so" in */cujit.so) ;; *) fail "the module is not named cujit.so: $so" ;; esac

# Exported symbols: luaopen_cujit and the public C API, none of the binding's internals.
if command -v nm >/dev/null; then
  syms=$(nm -D --defined-only "$so") || fail "nm failed on $so"
  grep -q ' T luaopen_cujit$' <<<"$syms" || fail "luaopen_cujit is not exported"
  grep -q ' T cujit_lua_open$' <<<"$syms" || fail "cujit_lua_open is not exported"
  if grep -q ' T cjl_' <<<"$syms"; then fail "internal cjl_ symbols are exported"; fi
  if grep -qE ' T (lua|luaL)_' <<<"$syms"; then fail "the module carries its own copy of Lua"; fi
fi

# Loads and works without a GPU.
out=$(lua5.4 - <<'EOF' 2>&1
local cuda = require "cujit"
assert(type(cuda.jit) == "function", "cuda.jit")
local h = cuda.array({1, 2, 3}, "i16")
h[2] = 20
assert(h:totable()[2] == 20 and #h == 3, "host array")
assert(tostring(h) == "cujit.host_array i16[3] {1, 20, 3}", tostring(h))
local ok = pcall(cuda.array, {1, 2}, "nope")
assert(not ok, "bad dtype refused")
local has_gpu = cuda.has_gpu()
if not has_gpu then
  local ok2, err = pcall(cuda.device_array, 4)
  assert(not ok2 and #err > 0, "GPU work refused with a message")
end
if cuda.version().nvrtc then
  local k = cuda.jit("stock(float *y)", "y[0] = 1.0f;", {arch = "sm_90"})
  assert(k:ptx():find(".target sm_90", 1, true), "ptx for sm_90")
end
io.write("version ", cuda.version().cujit)
EOF
) || fail "the module does not work from stock lua5.4: $out"
echo "$out"

# The same module from a script's require, through the cujit command.
if [ -n "$cujit_cmd" ] && [ -x "$cujit_cmd" ]; then
  cmd_out=$("$cujit_cmd" -e 'io.write("version ", require("cujit").version().cujit)' 2>&1) ||
    fail "the cujit command could not require cujit: $cmd_out"
  [ "$cmd_out" = "$out" ] || fail "stock lua says '$out', the cujit command '$cmd_out'"
fi
echo "ok"
