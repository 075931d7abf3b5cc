#!/usr/bin/env bash
# test_cpu_file_limit.sh -- under a file size limit (ulimit -f) every file cujit writes fails with
# EFBIG instead of SIGXFSZ ending the process, and cujit leaves SIGXFSZ's disposition alone: with
# a limit of 0 the CPU device's compile fails with a message that names the limit (exit 1, not
# 153, a death by SIGXFSZ); with a limit the compile fits in but the cache entry does not, the
# cache write degrades to a warning and the kernel runs; a kept program whose shared object is over
# the limit fails to load, saying why. Needs g++ (the CPU device's compiler).
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_DEVICE=cpu

# limited BLOCKS ARGS...: cujit under `ulimit -S -f BLOCKS` (1 KiB blocks); its output through a
# pipe, since its own stdout and stderr are files too. Sets $out and $rc.
limited() {
  local blocks=$1
  shift
  out=$(bash -c 'ulimit -S -f "$0" && exec "$@"' "$blocks" "$CUJIT" "$@" 2>&1)
  rc=$?
}

export CUJIT_CACHE_DIR="$TMP/cache0"
limited 0 -e "local k = require'cujit'.jit('kf(float *o)', 'o[0] = 1;') print('compiled')"
check_rc "limit 0: the compile fails, the process is not killed" 1
check "it says which file and why" "$out" "could not write the translation unit in its temporary directory: File too large"
check "and what to do" "$out" "the file size limit \(ulimit -f\) is below what a compile writes: raise it"
check "the cache write warned first" "$out" "cujit: warning: could not write cache entry .*: File too large"

# A #pragma message of a macro 100 KB long makes the log, kept in the cache entry, far longer
# than any file the compile writes (the source stays short); the compiler raises its own soft
# limit (the .s it writes is longer still).
cat >"$TMP/gxx" <<'EOF2'
#!/bin/sh
ulimit -S -f unlimited
exec g++ "$@"
EOF2
chmod +x "$TMP/gxx"
cat >"$TMP/k.lua" <<EOF2
local cuda = require "cujit"
local k = cuda.jit("kl(int *o)", [[
#define A "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
#define B A A A A A A A A A A
#define C B B B B B B B B B B
#define D C C C C C C C C C C
#pragma message D
o[0] = 42;
]])
local o = cuda.zeros(1, "i32")
k[{1, 1}](o)
print("o[0] = " .. o:totable()[1])
EOF2
export CUJIT_CACHE_DIR="$TMP/cache1" CUJIT_CXX="$TMP/gxx"
limited 50 "$TMP/k.lua"
check_rc "limit 50 KiB: the kernel compiles and runs" 0
check "its result" "$out" "^o\[0\] = 42$"
check "the cache entry (longer than the limit) is not kept, with a warning" "$out" \
  "cujit: warning: could not write cache entry .*\.cjc: File too large; kernels are still compiled"
same "no entry, and no partial file" "$(ls "$TMP/cache1" | grep -c 'cjc')" 0
run "$CUJIT" "$TMP/k.lua"
check_rc "without the limit" 0
same "the entry is kept" "$(ls "$TMP/cache1" | grep -c '\.cjc$')" 1

# A program from the cache is loaded by writing its shared object (some 30 KB) into a memfd,
# which counts against the limit too: under 8 KiB the load fails, saying so. Again with stdin
# closed, where the memfd is descriptor 0 (a valid one, as any other).
unset CUJIT_CXX
export CUJIT_CACHE_DIR="$TMP/cache2"
prog="local cuda = require'cujit' local k = cuda.jit('km(float *o)', 'o[0] = 5;')
local o = cuda.zeros(1) k[{1, 1}](o) print('o[0] = ' .. o:totable()[1])"
run "$CUJIT" -e "$prog"
check_rc "no limit: compiled, kept and run" 0
check "its result" "$out" "^o\[0\] = 5"
limited 8 -e "$prog"
check_rc "limit 8 KiB: loading the kept program fails, the process is not killed" 1
check "it says why and what to do" "$out" \
  "loading 'km' on the CPU device failed: File too large to write into memory \(a memfd counts against the file size limit, ulimit -f: raise it\)"
out=$(bash -c 'ulimit -S -f 8 && exec "$@" 0<&-' limited "$CUJIT" -e "$prog" 2>&1)
rc=$?
check_rc "the same with stdin closed" 1
check "the same message (the memfd is descriptor 0)" "$out" \
  "File too large to write into memory \(a memfd counts against the file size limit"
finish
