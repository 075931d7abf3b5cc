# test_cli_cache_inputs.sh -- `cujit compile` and the cache's input rule seen from the command
# line: a changed header is compiled again (beside the file, through -I and -X flags), -o never
# overwrites the input nor leaves a truncated file, and `cujit cache` says truly why the disk
# cache is off. Run by ctest as: bash test_cli_cache_inputs.sh /path/to/cujit. Needs NVRTC.
set -u
source "$(dirname "$0")/lib.sh"
export CUJIT_CACHE_DIR="$TMP/cache"

need_nvrtc
cd "$TMP" || exit 1

# The issue's repro: the header beside k.cu changes from 111 to 222.
echo '#define VALUE 111' >hdr.h
printf '#include "hdr.h"\nextern "C" __global__ void k(int *p) { *p = VALUE; }\n' >k.cu
run "$CUJIT" compile --arch sm_90 k.cu -o -
check "first compile stores 111" "$out" 'mov.u32.*111;'
echo '#define VALUE 222' >hdr.h
run "$CUJIT" compile --arch sm_90 k.cu -o -
check "a changed header is compiled again" "$out" 'mov.u32.*222;'
check "not from the cache" "$err" 'compiled in'
run "$CUJIT" compile --arch sm_90 k.cu -o -
check "unchanged: a hit" "$err" 'from the cache'
check "a hit has the new value" "$out" 'mov.u32.*222;'

# The same through cuda.load, in a directory of its own, and an absolute #include in a preamble.
mkdir -p lua/sub
echo '#define VALUE 511' >lua/sub/h.h
printf '#include "h.h"\nextern "C" __global__ void k(int *p) { *p = VALUE; }\n' >lua/sub/k.cu
echo '#define PVALUE 521' >lua/abs.h
cat >lua/load.lua <<EOF
local cuda = require "cujit"
local m = cuda.load("lua/sub/k.cu", {arch = "sm_90"})
local k = cuda.jit("kp(int *p)", "*p = PVALUE;", {arch = "sm_90", preamble = '#include "$TMP/lua/abs.h"'})
print(m:ptx():match("mov.u32%s+%%r%d+, (%d+);"), k:ptx():match("mov.u32%s+%%r%d+, (%d+);"))
EOF
run "$CUJIT" lua/load.lua
same "cuda.load and a preamble: first values" "$out" "511	521"
echo '#define VALUE 512' >lua/sub/h.h
echo '#define PVALUE 522' >lua/abs.h
run "$CUJIT" lua/load.lua
same "cuda.load and a preamble: the changed headers are seen" "$out" "512	522"

# -X --include-path=DIR and -X --pre-include=FILE
mkdir -p xdir
echo '#define VALUE 333' >xdir/x.h
printf '#include "x.h"\nextern "C" __global__ void k(int *p) { *p = VALUE; }\n' >x.cu
run "$CUJIT" compile --arch sm_90 x.cu -X "--include-path=$TMP/xdir" -o -
check "-X --include-path" "$out" 'mov.u32.*333;'
echo '#define VALUE 334' >xdir/x.h
run "$CUJIT" compile --arch sm_90 x.cu -X "--include-path=$TMP/xdir" -o -
check "-X --include-path: the change is seen" "$out" 'mov.u32.*334;'
echo '#define VALUE 444' >pre.h
printf 'extern "C" __global__ void k(int *p) { *p = VALUE; }\n' >p.cu
run "$CUJIT" compile --arch sm_90 p.cu -X --pre-include=pre.h -o -
check "-X --pre-include" "$out" 'mov.u32.*444;'
echo '#define VALUE 445' >pre.h
run "$CUJIT" compile --arch sm_90 p.cu -X --pre-include=pre.h -o -
check "-X --pre-include: the change is seen" "$out" 'mov.u32.*445;'

# -o never writes over the input, by name or through a link.
cp k.cu k.keep
for o in k.cu ./k.cu "$TMP/k.cu"; do
  run "$CUJIT" compile --arch sm_90 k.cu -o "$o"
  check_rc "-o $o refused" 1
  check "-o $o: says why" "$err" 'is the input file'
done
ln -s k.cu link.cu
run "$CUJIT" compile --arch sm_90 k.cu -o link.cu
check_rc "-o through a link refused" 1
same "the input is untouched" "$(cat k.cu)" "$(cat k.keep)"

# A full disk (a file size limit of 0) leaves the old output whole, and no temporary file.
echo "old output" >out.ptx
# (its messages go through a pipe: the limit would stop them reaching a file too)
run bash -c "set -o pipefail; trap '' XFSZ; ulimit -f 0; \"\$0\" compile --arch sm_90 k.cu -o out.ptx 2>&1 | cat" "$CUJIT"
check_rc "a write that cannot finish fails" 1
check "says what failed" "$out" "cannot write 'out.ptx': File too large; .*what was there is as it was"
same "the old output is whole" "$(cat out.ptx)" "old output"
same "no temporary file is left" "$(ls | grep -c 'out.ptx.tmp')" "0"
run "$CUJIT" compile --arch sm_90 k.cu -o out.ptx
check_rc "then it writes" 0
check "the new output" "$(cat out.ptx)" '\.entry k'

# Why the disk cache is off, truly.
run env -u HOME -u XDG_CACHE_HOME -u CUJIT_CACHE_DIR "$CUJIT" cache dir
check_rc "no HOME: cache dir fails" 1
check "no HOME: says no variable is set" "$err" 'neither CUJIT_CACHE_DIR, XDG_CACHE_HOME nor HOME is set'
check_not "no HOME: not 'not writable'" "$err" 'not writable'
long="$TMP/$(printf 'd%.0s' $(seq 1 4100))"
run env CUJIT_CACHE_DIR="$long" "$CUJIT" cache dir
check_rc "a too long CUJIT_CACHE_DIR: cache dir fails" 1
check "a too long CUJIT_CACHE_DIR: says so" "$err" 'too long'
finish
