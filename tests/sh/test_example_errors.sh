#!/usr/bin/env bash
# test_example_errors.sh -- the C quick start (examples/c/saxpy.c) on its paths other than a plain
# run: a cujit call that fails (the CPU device with no C++ compiler) is reported and exits 1 (the
# examples' CHECK); and without a GPU (CUDA_VISIBLE_DEVICES= hides any), CUJIT_REQUIRE_GPU=1 fails
# saying why, CUJIT_EXAMPLE_NO_CPU=1 skips (77), and a plain run falls back to the CPU device,
# saying so and why on one line. CUJIT_EXAMPLE_COMPILE_ONLY=1 compiles and runs nothing. Its
# check can fail: a wrong result (one float spoilt by tests/c/dtoh_corrupting.c) is caught; and
# so is one given to examples/vector_add.lua, to each of its three checks (the third: its inputs
# are the stream's numbers it says), whose printed bandwidth must be the bytes it moves over the
# time it prints; so must examples/reduce.lua's, whose checks of its planted minimum and maximum
# fail when given one beyond it, and of 2^20 normals when one of the two is wrong; a sum off by
# 1e-4 fails its double-precision check of 2^20 normals, and its exact one of the pattern;
# half.lua's check against the half-rounded inputs fails on a row off by 1; cluster_reduce.lua
# refuses an option other than --sweep with its usage. The DLPack example
# (examples/c/dlpack.c) names its device as saxpy does (CUJIT_DEVICE=cpu; no GPU, required or not),
# and so does examples/embed, whose C side's check fails when the script's kernel did otherwise than
# it says, or it returns no constants, and which reports a script's error. mlp.lua --gemm's check
# of each product it times fails on a wrong element. mlp.lua and mlp_data_parallel.lua asked for
# data that is missing skip, saying which file and how to fetch it.
. "$(dirname "$0")/lib.sh"
saxpy="$CUJIT_BINARY_DIR/examples/example_saxpy"
[ -x "$saxpy" ] || { echo "skip: $saxpy is not built"; exit 77; }
CUJIT_DEVICE=cpu CUJIT_CXX=/nonexistent/g++ CUJIT_CACHE_DIR="$TMP/cache" run "$saxpy"
check_rc "saxpy with a failing call" 1
check "says what failed" "$err" '^saxpy: .*(/nonexistent/g\+\+|CUJIT_CXX)'

CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$saxpy"
check_rc "saxpy on the CPU device by CUJIT_DEVICE=cpu" 0
check "names the device it runs on" "$out" '^runs on: CPU device \(CPU .+\)$'
check "checks every element" "$out" '^saxpy on 1048576 floats: ok \(0 mismatches\)$'
# Its check can fail: one float spoilt on its way back is caught. (A sanitized build's runtime
# must come first among the libraries; the stand-in is loaded before it.)
spoil="$CUJIT_BINARY_DIR/tests/libdtoh_corrupting.so"
for delta in 1 -1; do
  CJ_TEST_SPOIL=$delta LD_PRELOAD=$spoil ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$saxpy"
  check_rc "saxpy given a wrong result (off by $delta)" 1
  check "counts the one wrong element (off by $delta)" "$out" '^saxpy on 1048576 floats: FAILED \(1 mismatches\)$'
done

# examples/c/dlpack.c names its device the same way, and its round trip checks every element.
dlpack="$CUJIT_BINARY_DIR/examples/example_dlpack"
[ -x "$dlpack" ] || { echo "skip: $dlpack is not built"; exit 77; }
CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$dlpack"
check_rc "dlpack on the CPU device by CUJIT_DEVICE=cpu" 0
check "dlpack names the device it runs on" "$out" '^runs on: CPU device \(CPU .+\)$'
check_not "and no GPU" "$out" 'runs on: GPU'
check "dlpack prints the tensor it exports: DLPack 1, the CPU (kDLCPU), 512 x 1024, row-major" \
  "$out" '^exported: DLPack 1\.[0-9]+, device type 1, 2-D 512 x 1024, strides 1024, 1$'
check "dlpack's round trip is exact" "$out" \
  '^round trip of 524288 floats, no copy: ok \(0 mismatches seen by the producer, 0 by the consumer after the producer.s free\)$'

# Its check fails on a wrong element either way, too large or too small (one float spoilt in each
# of its two read-backs).
for delta in 1 -1; do
  CJ_TEST_SPOIL=$delta LD_PRELOAD=$spoil ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$dlpack"
  check_rc "dlpack given a wrong result (off by $delta)" 1
  check "dlpack counts the wrong element of each read-back (off by $delta)" "$out" \
    '^round trip of 524288 floats, no copy: FAILED \(1 mismatches seen by the producer, 1 by the consumer after the producer.s free\)$'
done

CUJIT_EXAMPLE_COMPILE_ONLY=1 CUJIT_CACHE_DIR="$TMP/cache" run "$saxpy"
check_rc "CUJIT_EXAMPLE_COMPILE_ONLY=1" 0
check "compiles for sm_90, saying how" "$out" \
  '^compiled saxpy\(float a, const float \*x, float \*y, int n\) for sm_90 \((NVRTC|cache hit), [0-9.]+ ms\)$'
check_not "and runs nothing" "$out" 'runs on|saxpy on'

# examples/embed (C hands a buffer to a Lua script and checks what it did): a script that raises is
# reported with the script's own message; one whose kernel did something else than the constants
# it returns, or that returns no constants, fails the C side's check (every element counted).
embed="$CUJIT_BINARY_DIR/examples/example_embed"
if [ -x "$embed" ]; then
  CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$embed" "$CUJIT_SOURCE_DIR/examples/embed/script.lua"
  check_rc "embed on the CPU device" 0
  check "embed checks every element" "$out" '^C sees the script.s result on 100000 floats: ok \(0 mismatches\)$'
  printf 'error("the script gave up")\n' >"$TMP/raises.lua"
  # Run from $TMP by a relative name: Lua shortens a chunk name over 60 bytes to "...tail", and a
  # clone's path can be that long.
  pushd "$TMP" >/dev/null
  CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$embed" raises.lua
  popd >/dev/null
  check_rc "embed with a script that raises" 1
  same "embed reports the script's error" "$err" "embed: raises.lua:1: the script gave up"
  # the example's script, its returned scale one more than the kernel used
  sed 's/^return scale, shift$/return scale + 1, shift/' "$CUJIT_SOURCE_DIR/examples/embed/script.lua" \
    >"$TMP/lies.lua"
  CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$embed" "$TMP/lies.lua"
  check_rc "embed with a script whose kernel did otherwise" 1
  check "embed's check counts the wrong elements" "$out" \
    '^C sees the script.s result on 100000 floats: FAILED \(100000 mismatches\)$'
  sed 's/^return scale, shift$/return "three", shift/' "$CUJIT_SOURCE_DIR/examples/embed/script.lua" \
    >"$TMP/words.lua"
  CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$embed" "$TMP/words.lua"
  check_rc "embed with a script that returns no constants" 1
  check "embed says what the script must return" "$err" '^embed: the script must return scale, shift$'
else
  fail "$embed is not built"
fi

# A Lua example's check can fail too: with one element of each array copied back spoilt (LUA_INIT
# wraps copy_to_host), vector_add.lua counts the one wrong element and exits non-zero.
# CJ_SPOIL_COPY=N spoils the N-th copy only, and pins the positions math.random(1, n) draws to the
# spoilt one, so a check of sampled positions sees it at every draw. CJ_SPOIL_METHOD=min (or max)
# (or sum) spoils that reduction's result instead, from its CJ_SPOIL_FROM-th call on: CJ_SPOIL_BY
# (default 1) beyond the right answer (min - 1, max + 1, sum + 1).
cat > "$TMP/spoil.lua" << 'EOF'
require "cujit"
local only, copies = tonumber(os.getenv("CJ_SPOIL_COPY") or ""), 0
local spoilt = os.getenv("CJ_SPOIL_METHOD") or "copy_to_host"
local from = tonumber(os.getenv("CJ_SPOIL_FROM") or "1")
local by = tonumber(os.getenv("CJ_SPOIL_BY") or "1")
local arrays = debug.getregistry()["cujit.device_array"]
local index = arrays.__index
arrays.__index = function(a, key)
  local method = index(a, key)
  if key ~= spoilt then return method end
  return function(...)
    local h = method(...)
    copies = copies + 1
    if key ~= "copy_to_host" then
      return copies < from and h or key == "min" and h - by or h + by
    end
    if only and copies ~= only then return h end
    local i = #h // 2 + 1
    h[i] = h[i] + 1
    return h
  end
end
if only then
  math.random = function(_, n) return n // 2 + 1 end -- (1, n): the spoilt element
end
EOF
# bandwidth.awk: each line's printed GB/s against its bytes over its printed milliseconds. The ms
# are printed with 3 decimals (off by up to 0.0005 ms), the GB/s to 4 significant digits (off by
# up to 0.05 %): the slack is those two relative errors, whatever the speed. (It was 0.5 GB/s
# flat: on a loaded 2-core machine the CPU device moves under 1 GB/s, so 2 x 4 bytes an element
# for 3 x 4 passed; and the figure, printed as whole GB/s, read "0 GB/s" and failed: issue 28.)
# A time printed as 0.000 fails. fields=vector_add: LOG MS GBS (12 bytes an element);
# fields=reduce: NAME LOG MS GBS GIB (4 bytes an element, 8 for dot; GIB to 2 decimals).
cat >"$TMP/bandwidth.awk" <<'EOF'
{
  if (fields == "vector_add") { bytes = 12 * 2 ^ $1; ms = $2; gbs = $3 + 0 }
  else {
    bytes = ($1 == "dot" ? 8 : 4) * 2 ^ $2; ms = $3; gbs = $4 + 0
    if (($5 - bytes / 2 ^ 30) ^ 2 > 0.0051 ^ 2) bad = 1
  }
  if (!(ms > 0)) { bad = 1; next }
  want = bytes / ms / 1e6
  slack = want * (0.0005 + 0.0005 / ms) * 1.01
  if (!(gbs > 0) || (gbs - want) ^ 2 > slack ^ 2) bad = 1
}
END { exit bad || NR == 0 }
EOF
CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" LUA_INIT="@$TMP/spoil.lua" \
  run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/vector_add.lua"
check_rc "vector_add.lua given a wrong result" 1
check "vector_add.lua counts the one wrong element" "$err" 'check failed: c = a \+ b for all [0-9]+ elements \(1 wrong\)'
# Its second check (10000 random positions of the big arrays: z is the 4th copy) counts too.
CJ_SPOIL_COPY=4 CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" LUA_INIT="@$TMP/spoil.lua" \
  run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/vector_add.lua"
check_rc "vector_add.lua given a wrong result in its big arrays" 1
check "its second check counts every draw of the wrong element" "$err" \
  'check failed: 2\^24 elements: 10000 random positions match the host \(10000 wrong\)'
# Its third checks the inputs: a the first n normals of the seed's stream and b the next n (the
# 7th copy is those 2n drawn at once): one number drawn otherwise fails it.
CJ_SPOIL_COPY=7 CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" LUA_INIT="@$TMP/spoil.lua" \
  run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/vector_add.lua"
check_rc "vector_add.lua given one input number drawn otherwise" 1
check "its check of the inputs counts it" "$err" \
  'check failed: a and b are the first 2 x [0-9]+ normals of one stream \(1 differ\)'
# The bandwidth it prints is 3 x 4 bytes per element over the time it prints, within what the
# rounding of the two printed figures allows (bandwidth.awk): relative, never a fixed number of
# GB/s, so the check is as sharp on a loaded machine as on an idle one.
figures=$(sed -En 's/^2\^([0-9]+) floats: ([0-9.]+) ms per add, ([^ ]+) GB\/s .*/\1 \2 \3/p' <<<"$out")
same "prints one bandwidth line" "$(wc -w <<<"$figures")" 3
if awk -v fields=vector_add -f "$TMP/bandwidth.awk" <<<"$figures"; then
  ok "the bandwidth printed is 12 bytes x 2^n / time ($figures)"
else
  fail "the bandwidth printed is not 12 bytes x 2^n / time: $out"
fi

# reduce.lua's figures: sum, min and max read 4 bytes per element, dot (of x with itself, as
# x:dot(x) counts it) 8; each line's GB/s is those bytes over its time, its GiB those bytes, and
# the last line the f32 array's size (all as rounded in print).
CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/reduce.lua"
check_rc "reduce.lua on the CPU device" 0
figures=$(sed -En 's/^(sum|min|max|dot) +of 2\^([0-9]+) f32: +([0-9.]+) ms, +([^ ]+) GB\/s \(reading ([^ ]+) GiB\)$/\1 \2 \3 \4 \5/p' <<<"$out")
same "reduce.lua prints four bandwidth lines" "$(cut -d' ' -f1 <<<"$figures" | tr '\n' ' ')" "sum min max dot "
if awk -v fields=reduce -f "$TMP/bandwidth.awk" <<<"$figures"; then
  ok "reduce.lua's bandwidth is the bytes read (4 or 8 x 2^n) over the time ($(tr '\n' ';' <<<"$figures"))"
else
  fail "reduce.lua's bandwidth is not the bytes read over the time: $out"
fi
log_n=$(sed -En 's/^sum +of 2\^([0-9]+) f32:.*/\1/p' <<<"$out")
gib=$(awk -v n="${log_n:-0}" 'BEGIN { printf "%.2f", 4 * 2 ^ n / 2 ^ 30 }')
check "and the size of one f32 array of 2^$log_n" "$out" "^\\($gib GiB per f32 array; the reductions read the input once\\)$"
# reduce_spoilt METHOD FROM [BY]: reduce.lua with x:METHOD() BY (1) beyond the right answer from
# its FROM-th call on (the first call of each is the 2^20 check's, the second the planted one's).
reduce_spoilt() {
  CJ_SPOIL_METHOD=$1 CJ_SPOIL_FROM=$2 CJ_SPOIL_BY=${3:-1} CUJIT_DEVICE=cpu \
    CUJIT_CACHE_DIR="$TMP/cache" LUA_INIT="@$TMP/spoil.lua" \
    run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/reduce.lua"
}
for m in min max; do
  # Its checks of the planted extremes want them exactly: a min below the planted one (or a max
  # above it) fails.
  reduce_spoilt $m 2
  check_rc "reduce.lua given a $m beyond the planted one" 1
  check "its check of the planted $m fails" "$err" "check failed: $m found the value planted at"
  # The 2^20 check wants both extremes right: a wrong min alone (or max alone) fails it.
  reduce_spoilt $m 1
  check_rc "reduce.lua given a wrong $m of 2^20 normals, the other right" 1
  check "its check of both extremes fails ($m)" "$err" "check failed: min .* and max .* match Lua exactly"
done

# Its sum of 2^20 normals is held to 1e-12 of sum |x| (about 8e-7: a double sum's rounding), not a
# float's: a sum off by 1e-4, 1.2e-10 of sum |x|, fails it. (The sum is called twice there.)
reduce_spoilt sum 1 1e-4
check_rc "reduce.lua given a sum of 2^20 normals off by 1e-4" 1
check "its check of that sum fails" "$err" "check failed: sum of 2\\^20 normals"
# and the sum of the planted pattern must be exact: off by 1e-4 (of about 4.7e8) fails.
reduce_spoilt sum 3 1e-4
check_rc "reduce.lua given a planted sum off by 1e-4" 1
check "its exact check of the planted sum fails" "$err" "check failed: sum of 2\\^24 = .*, exactly the closed form"
check_not "while the 2^20 sum passed" "$err" "check failed: sum of 2\\^20 normals"

# half.lua's check that the half kernel computes the product of the half-rounded inputs within
# 1e-5 of sum |a x|: one row's result off by 1 (the 3rd copy back is y_half; every sampled row is
# that row) is about 8e-4 of it, within what the input rounding allows, but not within 1e-5.
CJ_SPOIL_COPY=3 CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" LUA_INIT="@$TMP/spoil.lua" \
  run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/half.lua"
check_rc "half.lua given a half result off by 1" 1
check "its check against the half-rounded inputs fails" "$err" \
  "check failed: half kernel = float64 product of the half-rounded inputs within 1e-5"

# cluster_reduce.lua takes --sweep and nothing else: any other word is its usage and status 2.
for bad in --swep --help sweep; do
  CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/cluster_reduce.lua" "$bad"
  check_rc "cluster_reduce.lua $bad" 2
  check "says the option and the usage ($bad)" "$err" "unknown option '$bad'"
  check "and its usage" "$err" 'usage: cujit cluster_reduce.lua \[--sweep\]'
  check_not "runs nothing ($bad)" "$out" 'checks passed'
done

# mlp.lua --gemm checks every product it times (C at 121 entries against the host's product in
# double): 20 products here (f32 and bf16, nn.lua's GEMM and cuda.gemm, the square one and the
# MLP's four), each timed and checked. With one element spoilt on its way back (copy 1 is A of the
# first product, copy 3 its C: the middle element, row 33 of 64), that product's check fails and
# names the first entry off.
mlp_gemm=("$CUJIT" "$CUJIT_SOURCE_DIR/examples/mlp.lua" --gemm --gemm-size 64 --batch 4
  --precision f32,bf16 --gemm-reps 1)
CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "${mlp_gemm[@]}"
check_rc "mlp.lua --gemm on the CPU device" 0
same "mlp.lua --gemm times 20 products" "$(grep -c '^GEMMRESULT op=' <<<"$out")" 20
# A row's name is the product it times: the transposes each name stands for, in every row.
same "each row times the product its name says (transposes)" \
  "$(grep '^GEMMRESULT' <<<"$out" | sed -E 's/^GEMMRESULT op=([^ ]+) .* ta=([01]) tb=([01])$/\1 \2\3/' |
    LC_ALL=C sort | uniq -c | tr -s ' \n' '  ')" \
  " 4 A*B 00 4 H1*W2 00 4 X*W1 00 4 X^T*dZ1 10 4 dZ1*W1^T 01 "
same "and checks each" "$(grep -Ec '^ok   GEMM (f32|bf16) (nn|library) +[^ ]+: C at 121 entries within the bound of the host.s product \(the worst at 0\.[0-9]+ of it\)$' <<<"$out")" 20
for copy in 1 3; do
  CJ_SPOIL_COPY=$copy CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" LUA_INIT="@$TMP/spoil.lua" \
    run "${mlp_gemm[@]}"
  check_rc "mlp.lua --gemm given a wrong element (copy $copy)" 1
  check "its product check fails, naming the entry (copy $copy)" "$err" \
    'check failed: GEMM f32 nn +A\*B: C at 121 entries within the bound of the host.s product \(the worst at [0-9.e+]+ of it; C\[33\]\[1\] = '
done

export CUDA_VISIBLE_DEVICES=
unset CUJIT_DEVICE CUJIT_REQUIRE_GPU CUJIT_EXAMPLE_NO_CPU
if "$CUJIT" devices > /dev/null 2>&1; then
  echo "ok: (the no-GPU paths are not checked: a GPU is visible with CUDA_VISIBLE_DEVICES=)"
  finish
fi
CUJIT_REQUIRE_GPU=1 run "$saxpy"
check_rc "CUJIT_REQUIRE_GPU=1 without a GPU" 1
check "says a GPU was required, and why there is none" "$err" \
  '^saxpy: CUJIT_REQUIRE_GPU=1 but there is no GPU: .*no CUDA (driver|device)'
check_not "ran nothing" "$out" 'runs on'
CUJIT_EXAMPLE_NO_CPU=1 run "$saxpy"
check_rc "CUJIT_EXAMPLE_NO_CPU=1 without a GPU skips" 77
check "says why it skipped" "$out" '^no GPU \(.*no CUDA (driver|device).*\): skipped$'
CUJIT_CACHE_DIR="$TMP/cache" run "$saxpy"
check_rc "without a GPU it runs on the CPU device" 0
check "says so and why, on one line" "$out" '^runs on: CPU device \(no GPU: .*no CUDA (driver|device).*\)$'
check "and checks every element" "$out" '^saxpy on 1048576 floats: ok \(0 mismatches\)$'
CUJIT_REQUIRE_GPU=1 run "$dlpack"
check_rc "dlpack: CUJIT_REQUIRE_GPU=1 without a GPU" 1
check "dlpack says a GPU was required, and why there is none" "$err" \
  '^dlpack: CUJIT_REQUIRE_GPU=1 but there is no GPU: .*no CUDA (driver|device)'
CUJIT_CACHE_DIR="$TMP/cache" run "$dlpack"
check_rc "dlpack without a GPU runs on the CPU device" 0
check "dlpack says so and why, on one line" "$out" '^runs on: CPU device \(no GPU: .*no CUDA (driver|device).*\)$'
script="$CUJIT_SOURCE_DIR/examples/embed/script.lua"
CUJIT_REQUIRE_GPU=1 run "$embed" "$script"
check_rc "embed: CUJIT_REQUIRE_GPU=1 without a GPU" 1
check "embed says a GPU was required, and why there is none" "$err" \
  '^embed: CUJIT_REQUIRE_GPU=1 but there is no GPU: .*no CUDA (driver|device)'
check_not "embed ran nothing" "$out" 'runs on|C sees'
CUJIT_EXAMPLE_NO_CPU=1 run "$embed" "$script"
check_rc "embed: CUJIT_EXAMPLE_NO_CPU=1 without a GPU skips" 77
check "embed says why it skipped" "$out" '^no GPU \(.*no CUDA (driver|device).*\): skipped$'
CUJIT_CACHE_DIR="$TMP/cache" run "$embed" "$script"
check_rc "embed without a GPU runs on the CPU device" 0
check "embed says so and why, on one line" "$out" '^runs on: CPU device \(no GPU: .*no CUDA (driver|device).*\)$'

# The MLP examples asked for data that is not there (not their default run, which trains on
# synthetic digits on the CPU device instead) skip (77), saying what is missing and how to fetch it.
for ex in mlp mlp_data_parallel; do
  CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" run "$CUJIT" "$CUJIT_SOURCE_DIR/examples/$ex.lua" \
    --data-dir "$TMP/no-data" --epochs 1
  check_rc "$ex.lua with no data in --data-dir" 77
  check "$ex.lua names the missing file" "$out" "skip: no (MNIST )?data \($TMP/no-data/mnist_5k\.csv\.gz not found\)"
  check "$ex.lua says how to fetch it" "$out" 'fetch the data once with:? +scripts/fetch_mnist\.sh'
done
finish
