#!/usr/bin/env bash
# test_env.sh -- every CUJIT_* variable the library and the command read (README.md,
# "Environment") is read strictly: each accepted spelling does what the table says, and any other
# value is refused with a message naming the variable, the value and the accepted values (an
# error where the table says so, else one warning and the default). Runs on the CPU device, and
# on the stand-in driver (scripts/bench/stubcuda) for the variables only a GPU reads, and with NVRTC
# (an explicit sm_90, no GPU) for CUJIT_PCH.
. "$(dirname "$0")/lib.sh"
re() { sed 's/[][\.*^$+?(){}|/]/\\&/g' <<<"$1"; } # $1 as an extended regex matching itself
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_DEVICE CUJIT_CPU_THREADS CUJIT_CPU_SCHEDULE CUJIT_CPU_CHECK CUJIT_CPU_CHECK_RESTARTED \
  CUJIT_CACHE CUJIT_CACHE_SHARED CUJIT_WAIT CUJIT_POOL CUJIT_COMPILE_THREADS CUJIT_MINIMAL

# --- CUJIT_DEVICE: an ordinal or cpu, else an error saying the value was not understood ----------
probe='local cuda = require "cujit"
local k = cuda.jit("probe(int *x)", "x[threadIdx.x] = threadIdx.x + 1;")
local x = cuda.zeros(3, "i32"); k[{1, 3}](x)
print("ran", table.concat(x:totable(), ","), cuda.device().name)'
CUJIT_DEVICE=cpu run "$CUJIT" -e "$probe"
check "CUJIT_DEVICE=cpu runs on the CPU device" "$out" "^ran	1,2,3	CPU \("
for v in "cpu " " cpu" CPU Cpu -1 +0 " 0" 0x 1.0 gpu; do
  CUJIT_DEVICE="$v" run "$CUJIT" -e "$probe"
  check "CUJIT_DEVICE='$v' is said not to be understood" "$err" \
    "CUJIT_DEVICE='$(re "$v")' is not understood: it takes a GPU ordinal \(0, 1, \.\.\.: digits only\) or cpu"
  check_not "CUJIT_DEVICE='$v': no advice to set the variable already set" "$err" \
    "set CUJIT_DEVICE=cpu|No GPU to run on|no GPU to take the arch"
  [ "$rc" -ne 0 ] && ok "CUJIT_DEVICE='$v': exit $rc" || fail "CUJIT_DEVICE='$v' exits 0"
done
if ! "$CUJIT" devices >/dev/null 2>&1; then # no GPU: an ordinal is understood, and says no GPU
  CUJIT_DEVICE=0 run "$CUJIT" -e "$probe"
  check "CUJIT_DEVICE=0 without a GPU: the no-GPU advice" "$err" "set CUJIT_DEVICE=cpu"
  check_not "CUJIT_DEVICE=0 is understood" "$err" "not understood"
fi

# --- CUJIT_CPU_THREADS: 1..1024, else the CPU device is refused -----------------------------------
for v in 1 3 1024; do
  CUJIT_DEVICE=cpu CUJIT_CPU_THREADS=$v run "$CUJIT" -e "$probe"
  s=s; [ "$v" = 1 ] && s=""
  check "CUJIT_CPU_THREADS=$v" "$out" "^ran	1,2,3	CPU \($v thread$s\)"
done
# Unset, the threads are the cores this process may use (its affinity), not the machine's: under
# taskset to the first core it may use, one.
if command -v taskset >/dev/null && [ "$(nproc)" -gt 1 ]; then
  first=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
  CUJIT_DEVICE=cpu run taskset -c "$first" "$CUJIT" -e "$probe"
  check "CUJIT_CPU_THREADS unset under taskset -c $first: one thread" "$out" "^ran	1,2,3	CPU \(1 thread\)"
  CUJIT_DEVICE=cpu run "$CUJIT" -e "$probe"
  check "CUJIT_CPU_THREADS unset: the cores this process may use" "$out" \
    "^ran	1,2,3	CPU \($(nproc) threads?\)"
else
  echo "skip: taskset is not installed or this process may use one core (the affinity checks)"
fi
for v in 4abc abc 0 1025 " 4" -1 +4 4.0 99999999999999999999999; do
  CUJIT_DEVICE=cpu CUJIT_CPU_THREADS="$v" run "$CUJIT" -e "$probe"
  check "CUJIT_CPU_THREADS='$v' is refused" "$err" \
    "CUJIT_CPU_THREADS='$(re "$v")' is not understood: it takes a whole number from 1 to 1024"
  check_not "CUJIT_CPU_THREADS='$v': not framed as a missing GPU" "$err" "no GPU"
  [ "$rc" -ne 0 ] && ok "CUJIT_CPU_THREADS='$v': exit $rc" || fail "CUJIT_CPU_THREADS='$v' ran"
done

# --- CUJIT_CPU_SCHEDULE: forward, reverse, random, random:SEED --------------------------------------
# One worker, one block: the order the threads take tickets in is the schedule's order.
order='local cuda = require "cujit"
local k = cuda.jit("order(int *t, int *c)", "t[threadIdx.x] = atomicAdd(c, 1);")
local t, c = cuda.zeros(8, "i32"), cuda.zeros(1, "i32"); k[{1, 8}](t, c)
print("order", table.concat(t:totable(), ","))'
export CUJIT_DEVICE=cpu CUJIT_CPU_THREADS=1
CUJIT_CPU_SCHEDULE=forward run "$CUJIT" -e "$order"
same "forward: thread 0 first" "$out" "order	0,1,2,3,4,5,6,7"
same "forward: no warning" "$err" ""
CUJIT_CPU_SCHEDULE=reverse run "$CUJIT" -e "$order"
same "reverse: the last thread first" "$out" "order	7,6,5,4,3,2,1,0"
CUJIT_CPU_SCHEDULE=random:12345 run "$CUJIT" -e "$order"
seeded=$out
CUJIT_CPU_SCHEDULE=random:12345 run "$CUJIT" -e "$order"
same "random:SEED twice: the same order" "$out" "$seeded"
same "random:SEED: no warning" "$err" ""
CUJIT_CPU_SCHEDULE=random run "$CUJIT" -e "$order"
drawn=$out
check "random: the seed drawn is told" "$err" \
  "CUJIT_CPU_SCHEDULE=random: the CPU device runs blocks and threads in the order of seed [0-9]+; set CUJIT_CPU_SCHEDULE=random:[0-9]+ to have that order again"
seed=$(grep -o 'random:[0-9]\+' <<<"$err" | head -1)
CUJIT_CPU_SCHEDULE=$seed run "$CUJIT" -e "$order"
same "CUJIT_CPU_SCHEDULE=$seed (the seed told) gives that order again" "$out" "$drawn"
unset CUJIT_CPU_SCHEDULE
run "$CUJIT" -e "$order"
same "unset: forward" "$out" "order	0,1,2,3,4,5,6,7"
for v in revers Reverse "forward " random: random:x random:-1 random:1x random:99999999999999999999999 randomly; do
  CUJIT_CPU_SCHEDULE="$v" run "$CUJIT" -e "$order"
  check "CUJIT_CPU_SCHEDULE='$v' is refused" "$err" "CUJIT_CPU_SCHEDULE='$(re "$v")' is not understood: "
  [ "$rc" -ne 0 ] && ok "CUJIT_CPU_SCHEDULE='$v': exit $rc" || fail "CUJIT_CPU_SCHEDULE='$v' ran: $out"
done
CUJIT_CPU_SCHEDULE=revers run "$CUJIT" -e "$order"
check "the accepted schedules are named" "$err" "it takes forward, reverse or random, or random:SEED"
unset CUJIT_CPU_THREADS

# --- CUJIT_CPU_CHECK: on (1, on, yes, true), off (0, off, no, false), else refused ----------------
oob='local cuda = require "cujit"
local k = cuda.jit("oob(int *y, int n)",
                   "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i <= n) y[i] = 1;")
local y = cuda.zeros(1024, "i32"); k[{5, 256}](y, 1024); cuda.synchronize()
print("unchecked")'
asan=$(g++ -print-file-name=libasan.so)
for v in 1 on ON yes True; do
  [ -e "$asan" ] || { echo "note: g++ has no libasan: the check's on-spellings are not run"; break; }
  CUJIT_CPU_CHECK=$v run "$CUJIT" -e "$oob"
  check "CUJIT_CPU_CHECK=$v turns the check on" "$err" "AddressSanitizer"
  check_not "CUJIT_CPU_CHECK=$v: the overflow stops the script" "$out" "unchecked"
done
for v in 0 off OFF no false False; do
  CUJIT_CPU_CHECK=$v run "$CUJIT" -e "$oob"
  same "CUJIT_CPU_CHECK=$v leaves the check off" "$out" "unchecked"
  check_not "CUJIT_CPU_CHECK=$v: nothing checked" "$err" "AddressSanitizer|not understood"
done
for v in maybe 2 "1 " enable -1; do
  CUJIT_CPU_CHECK="$v" run "$CUJIT" -e "$oob"
  check "CUJIT_CPU_CHECK='$v' is refused" "$err" \
    "CUJIT_CPU_CHECK='$(re "$v")' is not understood: it takes 1, on, yes or true \(on\), 0, off, no or false \(off\), or unset"
  check_not "CUJIT_CPU_CHECK='$v': nothing ran" "$out" "unchecked"
  [ "$rc" -ne 0 ] && ok "CUJIT_CPU_CHECK='$v': exit $rc" || fail "CUJIT_CPU_CHECK='$v' exits 0"
done
unset CUJIT_DEVICE

# --- CUJIT_CACHE: off or on, else one warning and on ----------------------------------------------
for v in off 0 no FALSE disabled; do
  CUJIT_CACHE=$v run "$CUJIT" cache dir
  check "CUJIT_CACHE=$v turns the disk cache off" "$err" "the disk cache is off \(CUJIT_CACHE=$v\)"
done
for v in on 1 yes true; do
  CUJIT_CACHE=$v run "$CUJIT" cache dir
  same "CUJIT_CACHE=$v keeps the disk cache" "$out" "$CUJIT_CACHE_DIR"
  same "CUJIT_CACHE=$v: no warning" "$err" ""
done
for v in maybe of "off " 2; do
  CUJIT_CACHE="$v" run "$CUJIT" cache dir
  same "CUJIT_CACHE='$v': the cache stays on" "$out" "$CUJIT_CACHE_DIR"
  same "CUJIT_CACHE='$v': one warning with the accepted values" "$err" \
    "cujit: warning: CUJIT_CACHE='$v' is not understood: it takes 1, on, yes or true (on), 0, off, no or false (off), or unset; the disk cache stays on"
done

# --- CUJIT_CACHE_SHARED: a directory others may write is used only when it is on ----------------
mkdir -p "$TMP/shared"
chmod 777 "$TMP/shared"
for v in 1 yes ON; do
  CUJIT_CACHE_DIR="$TMP/shared" CUJIT_CACHE_SHARED=$v run "$CUJIT" cache dir
  same "CUJIT_CACHE_SHARED=$v uses the shared directory" "$out" "$TMP/shared"
done
for v in 0 no off; do
  CUJIT_CACHE_DIR="$TMP/shared" CUJIT_CACHE_SHARED=$v run "$CUJIT" cache dir
  check "CUJIT_CACHE_SHARED=$v: the shared directory is not used" "$err" "group or others may write it"
  check_not "CUJIT_CACHE_SHARED=$v is understood" "$err" "not understood"
done
CUJIT_CACHE_DIR="$TMP/shared" CUJIT_CACHE_SHARED=sure run "$CUJIT" cache dir
check "CUJIT_CACHE_SHARED=sure is refused: not shared" "$err" \
  "CUJIT_CACHE_SHARED='sure' is not understood: it takes 1, on, yes or true \(on\), 0, off, no or false \(off\), or unset; the cache is not shared"
check "CUJIT_CACHE_SHARED=sure: the directory is not used" "$err" "group or others may write it"

# --- CUJIT_CACHE_MAX: a size, else one warning and 1G ---------------------------------------------
CUJIT_CACHE_MAX=512M run "$CUJIT" cache stats
check "CUJIT_CACHE_MAX=512M" "$out" "512\.0 MiB"
CUJIT_CACHE_MAX=lots run "$CUJIT" cache stats
check "CUJIT_CACHE_MAX=lots is refused" "$err" "CUJIT_CACHE_MAX='lots' is not a size; using 1G"

# --- CUJIT_COMPILE_THREADS: compile_all's threads, else an error and nothing compiled -------------
many='local cuda = require "cujit"
local ps = cuda.compile_all({"extern \"C\" __global__ void a(int *x) { *x = 1; }",
                             "extern \"C\" __global__ void b(int *x) { *x = 2; }"})
print("many", #ps, ps[2]:kernels()[1])'
for v in 1 2 1024; do
  CUJIT_DEVICE=cpu CUJIT_COMPILE_THREADS=$v run "$CUJIT" -e "$many"
  check "CUJIT_COMPILE_THREADS=$v compiles" "$out" "^many	2	b"
done
for v in 0 1025 -1 " 2" 2x two; do
  CUJIT_DEVICE=cpu CUJIT_COMPILE_THREADS="$v" run "$CUJIT" -e "$many"
  check "CUJIT_COMPILE_THREADS='$v' is refused" "$err" \
    "cujit_program_compile_many: CUJIT_COMPILE_THREADS='$(re "$v")' is not understood: it takes a whole number from 1 to 1024"
  [ "$rc" -ne 0 ] && ok "CUJIT_COMPILE_THREADS='$v': exit $rc" || fail "CUJIT_COMPILE_THREADS='$v' exits 0"
done

# --- CUJIT_MINIMAL: on/off for a GPU compile (NVRTC, an explicit arch), else an error -------------
if "$CUJIT" -e 'os.exit(require("cujit").version().nvrtc and 0 or 1)' 2>/dev/null; then
  one='local cuda = require "cujit"
print("minimal", cuda.jit("m(int *x)", "*x = 1;", {arch = "sm_90"}):name())'
  for v in on off 1 0; do
    CUJIT_CACHE=off CUJIT_MINIMAL=$v run "$CUJIT" -e "$one"
    check "CUJIT_MINIMAL=$v compiles" "$out" "^minimal	m"
  done
  CUJIT_CACHE=off CUJIT_MINIMAL=sometimes run "$CUJIT" -e "$one"
  check "CUJIT_MINIMAL=sometimes is refused" "$err" \
    "CUJIT_MINIMAL='sometimes' is not understood: it takes 1, on, yes or true \(on\), 0, off, no or false \(off\)"
  [ "$rc" -ne 0 ] && ok "CUJIT_MINIMAL=sometimes: exit $rc" || fail "CUJIT_MINIMAL=sometimes exits 0"
else
  echo "note: no NVRTC here: CUJIT_MINIMAL not tested"
fi

# --- CUJIT_POOL and CUJIT_WAIT: read by a GPU, here the stand-in driver's ------------------------
stub="${CUJIT_BINARY_DIR:-}/scripts/bench/stubcuda"
if [ -e "$stub/libcuda.so.1" ]; then
  gpu='local cuda = require "cujit"; local a = cuda.zeros(10); cuda.synchronize(); cuda.synchronize()
print("gpu", cuda.device().name, a:totable()[1])'
  for v in off 0 no on 1 yes true; do
    LD_LIBRARY_PATH="$stub:${LD_LIBRARY_PATH:-}" CUJIT_POOL=$v run "$CUJIT" -e "$gpu"
    check "CUJIT_POOL=$v runs" "$out" "^gpu	"
    same "CUJIT_POOL=$v: no warning" "$err" ""
  done
  LD_LIBRARY_PATH="$stub:${LD_LIBRARY_PATH:-}" CUJIT_POOL=maybe run "$CUJIT" -e "$gpu"
  check "CUJIT_POOL=maybe runs, with the pool" "$out" "^gpu	"
  same "CUJIT_POOL=maybe: one warning" "$err" \
    "cujit: warning: CUJIT_POOL='maybe' is not understood: it takes 1, on, yes or true (on), 0, off, no or false (off), or unset; the memory pool stays on"
  for v in spin 0 5 10000000; do
    LD_LIBRARY_PATH="$stub:${LD_LIBRARY_PATH:-}" CUJIT_WAIT=$v run "$CUJIT" -e "$gpu"
    check "CUJIT_WAIT=$v runs" "$out" "^gpu	"
    same "CUJIT_WAIT=$v: no warning" "$err" ""
  done
  for v in abc 10ms -1 10000001 " 5" Spin; do
    LD_LIBRARY_PATH="$stub:${LD_LIBRARY_PATH:-}" CUJIT_WAIT="$v" run "$CUJIT" -e "$gpu"
    check "CUJIT_WAIT='$v' runs" "$out" "^gpu	"
    same "CUJIT_WAIT='$v': one warning with the accepted values" "$err" \
      "cujit: warning: CUJIT_WAIT='$v' is not understood: it takes a whole number from 0 to 10000000$([ -n "${v//[0-9]/}" ] && echo " (digits only)"): microseconds to spin before napping, or spin; waits use the default, 1000"
  done
else
  echo "note: no stand-in driver at $stub: CUJIT_POOL and CUJIT_WAIT not tested"
fi

# --- CUJIT_PCH: off, on or auto, else a warning at each compile and auto ---------------------------
# Read by NVRTC's compiles (an explicit sm_90: no GPU needed); what it did is in cache_stats().
pch='local cuda = require "cujit"
for i = 1, 2 do
  cuda.source("#include \"h.h\"\nextern \"C\" __global__ void k" .. i .. "(float *x) { x[0] = V; }\n",
              { arch = "sm_90", include_dirs = { os.getenv("PCH_DIR") } })
end
local s = cuda.cache_stats() print("pch", s.pch_created, s.pch_used)'
mkdir -p "$TMP/pchinc" && echo "#define V 2.0f" >"$TMP/pchinc/h.h"
nvrtc_lib=${CUJIT_NVRTC:-}
[ -z "$nvrtc_lib" ] && [ -e /usr/local/cuda/lib64/libnvrtc.so.13 ] && nvrtc_lib=/usr/local/cuda/lib64/libnvrtc.so.13
if CUJIT_NVRTC=$nvrtc_lib "$CUJIT" --version | grep -Eq '^NVRTC +1[3-9]|^NVRTC +12\.(8|9)'; then
  for v in off:0:0 on:1:1 auto:0:0 :0:0; do # auto: a small user header is not worth one
    IFS=: read -r value made used <<<"$v"
    CUJIT_NVRTC=$nvrtc_lib PCH_DIR="$TMP/pchinc" CUJIT_CACHE=off CUJIT_PCH="$value" run "$CUJIT" -e "$pch"
    same "CUJIT_PCH='$value': PCH made and used" "$out" "pch	$made	$used"
    same "CUJIT_PCH='$value': no warning" "$err" ""
  done
  for v in ON On yes 1 true "auto " automatic; do
    CUJIT_NVRTC=$nvrtc_lib PCH_DIR="$TMP/pchinc" CUJIT_CACHE=off CUJIT_PCH="$v" run "$CUJIT" -e "$pch"
    same "CUJIT_PCH='$v': auto (a small header: none)" "$out" "pch	0	0"
    check "CUJIT_PCH='$v': a warning with the accepted values" "$err" \
      "^cujit: warning: CUJIT_PCH='$(re "$v")' is not understood: it takes off, on or auto; auto is used\$"
  done
else
  echo "note: no NVRTC 12.8+: CUJIT_PCH not tested"
fi
finish
