#!/usr/bin/env bash
# test_pch_exit.sh -- a process that made a precompiled header ($TMPDIR/cujit-pch-<ns>-<pid>-XXXXXX,
# about 100 MB a PCH) removes it however it ends: at cujit_close, and also when it exits without
# one. Lua's os.exit() does not close the Lua state, so the engine is never closed: the examples'
# compile-only runs end so, and left their directories in TMPDIR until a later PCH compile of
# another process collected them (seen by scripts/test_twice.sh: the build tree's test-tmp not
# empty). Each case prints how many PCHs it made (the cache's own count), so none passes without
# one: os.exit with a status (kept), os.exit(true), an error ending the script, a plain end; and
# from a stock lua5.4 with require "cujit", where the library's exit handler runs too.
# Run by ctest as: bash test_pch_exit.sh /path/to/cujit. Needs NVRTC (skips, 77, without), no GPU.
set -u
source "$(dirname "$0")/lib.sh"
need_nvrtc
unset CUJIT_PCH
export CUJIT_CACHE=off # every run compiles, so every run makes its PCH

compile='local cuda = require "cujit"
cuda.source("#include <cooperative_groups.h>\n" ..
            "extern \"C\" __global__ void g(int *x) { cooperative_groups::this_thread_block().sync(); x[0] = 1; }",
            {arch = "sm_90"})
io.write("made ", cuda.cache_stats().pch_created, "\n")
io.flush()
'

# ends NAME RC TAIL [COMMAND...]: runs the compile then TAIL in a TMPDIR of its own; the exit status
# must be RC, one PCH made, and nothing left in that TMPDIR.
ends() {
  local name=$1 want=$2 tail=$3
  shift 3
  local dir="$TMP/$name"
  mkdir -p "$dir"
  TMPDIR="$dir" run "${@:-$CUJIT}" -e "$compile$tail"
  check_rc "$name" "$want"
  same "$name: one PCH made" "$(head -1 <<<"$out")" "made 1"
  same "$name: nothing left in TMPDIR" "$(ls -A "$dir")" ""
}

ends "os.exit(0)" 0 'os.exit(0)'
ends "os.exit(3)" 3 'os.exit(3)'
ends "os.exit(true)" 0 'os.exit(true)'
ends "os.exit(0, true): the state closed" 0 'os.exit(0, true)'
ends "an error ends the script" 1 'error("stopped here")'
ends "a plain end" 0 ''

# (A sanitizer build's cujit.so cannot load into the system's lua5.4: its runtime must come first.)
if ldd "$CUJIT_BINARY_DIR/lua/cujit.so" 2>/dev/null | grep -q 'libasan\|libtsan'; then
  echo "note: a sanitizer build: the stock interpreter is not tested here"
elif command -v lua5.4 >/dev/null && [ -f "$CUJIT_BINARY_DIR/lua/cujit.so" ]; then
  export LUA_CPATH="$CUJIT_BINARY_DIR/lua/?.so;;"
  ends "lua5.4 with require: os.exit(0)" 0 'os.exit(0)' lua5.4
  ends "lua5.4 with require: a plain end" 0 '' lua5.4
else
  echo "note: no lua5.4 or no lua/cujit.so: the stock interpreter is not tested here"
fi
finish
