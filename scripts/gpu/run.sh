#!/usr/bin/env bash
# run.sh -- the whole GPU-machine session in one command (device time is scarce): stage the
# Debian libraries carried in .gpu-deps, build, run the suite with CUJIT_REQUIRE_GPU=1, run every
# example on its own (keeping its output), the big matmul sizes, with --sanitizer (it multiplies
# the time) compute-sanitizer's memcheck with leak check, racecheck and synccheck over the
# examples and the C test programs, and the benchmarks. Everything lands in one folder, packed
# into $OUT/gpu-run.tgz (the device tool returns few files); the summary is printed last, with
# one verdict line per sanitizer run.
#   scripts/gpu/run.sh [--no-tests] [--no-bench] [--no-examples] [--sanitizer] [--sanitizer-jobs N (4)]
#                      [--sanitizer-tools memcheck,racecheck,synccheck] [--bench-args "..."]
#                      [--tests-regex REGEX] (only the ctest tests matching REGEX)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=/tmp/gpu-run
rm -rf "$out" && mkdir -p "$out"
tests=1 bench=1 examples=1 sanitizer=0 bench_args="" sanitizer_jobs=4 tests_regex=""
sanitizer_tools=memcheck,racecheck,synccheck
while [ $# -gt 0 ]; do
  case $1 in
    --no-tests) tests=0 ;;
    --no-bench) bench=0 ;;
    --no-examples) examples=0 ;;
    --sanitizer) sanitizer=1 ;;
    --bench-args) bench_args=$2; shift ;;
    --tests-regex) tests_regex=$2; shift ;;
    --sanitizer-jobs) sanitizer_jobs=$2; shift ;;
    --sanitizer-tools) sanitizer=1 sanitizer_tools=$2; shift ;;
  esac
  shift
done
source .gpu-deps/env.sh
export NCCL_NVLS_ENABLE=0 # NVLink multicast stays off on the shared GPU machines (../shared/gpu/README.md)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .commit 2>/dev/null; } > "$out/machine.txt" 2>&1
t0=$(date +%s)
if ! { cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUJIT_WERROR=OFF && cmake --build /tmp/b -j16; } > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "BUILD FAILED"; exit 1
fi
t1=$(date +%s)
echo "== gcc warnings on this machine: $(grep -c "warning:" "$out/build.log")"; grep "warning:" "$out/build.log" | sort -u | head -5
rc=0
if [ "$tests" = 1 ]; then
  CUJIT_REQUIRE_GPU=1 ctest --test-dir /tmp/b --output-on-failure -j8 --timeout 300 \
    ${tests_regex:+-R "$tests_regex"} > "$out/ctest.log" 2>&1
  rc=$?
fi
t2=$(date +%s)
if [ "$examples" = 1 ]; then
  mkdir -p "$out/examples"
  for f in examples/*.lua; do
    name=$(basename "$f" .lua); [ "$name" = example_support ] && continue
    (cd examples && CUJIT_REQUIRE_GPU=1 timeout 120 /tmp/b/cujit "$name.lua") > "$out/examples/$name.txt" 2>&1
    echo "exit $?" >> "$out/examples/$name.txt"
  done
  (cd examples && timeout 120 /tmp/b/cujit matmul.lua --big) > "$out/examples/matmul_big.txt" 2>&1
  (cd /tmp/b/examples && ./example_saxpy) > "$out/examples/saxpy_c.txt" 2>&1
  cp examples/out/*.png "$out/examples/" 2>/dev/null
fi
t3=$(date +%s)
# compute-sanitizer: each tool over each Lua example, the C example and each C test program
# (Criterion's workers are child processes: --target-processes all follows them). One file per
# run, ending with its exit status; the summary greps their "SUMMARY" lines. The runs are
# independent processes on one GPU, so --sanitizer-jobs of them go at once (serially the three
# tools take far longer than one device call; 14 at once ran the H200 out of memory, each
# sanitizer holding its own share); --sanitizer-tools picks the tools. The test programs run
# with --report-api-errors no: several cases provoke API errors on purpose (out of memory,
# NOT_FOUND, faults); the examples keep the default, where any API error is news.
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
sanitize_one() { # TOOL KIND NAME: KIND is lua (an example), c (the C example) or test
  local tool=$1 kind=$2 name=$3 log="$out/sanitizer/$1-$(basename "$3").txt"
  local args=(--tool "$tool" --target-processes all --error-exitcode 99)
  [ "$tool" = memcheck ] && args+=(--leak-check full)
  [ "$kind" = test ] && args+=(--report-api-errors no)
  case $kind in
    lua) (cd examples && CUJIT_REQUIRE_GPU=1 timeout 300 "$cs" "${args[@]}" /tmp/b/cujit "$name.lua") ;;
    c) (cd /tmp/b/examples && timeout 300 "$cs" "${args[@]}" "./$name") ;;
    test) CUJIT_REQUIRE_GPU=1 CUJIT_CACHE_DIR=/tmp/b/test-cache-sanitizer-$tool CUJIT_SOURCE_DIR=$PWD \
            CUJIT_BINARY_DIR=/tmp/b timeout 600 "$cs" "${args[@]}" "$name" --jobs 1 ;;
  esac > "$log" 2>&1
  echo "exit $?" >> "$log"
}
# The verdict of one sanitizer run, from its log (whose last line is "exit N"): ok, no GPU work
# (the program made no CUDA call: the sanitizer exits 255 saying so), SANITIZER ERRORS (with the
# counts), CRASHED, TIMEOUT, PROGRAM FAILED (its own checks, no sanitizer error) or UNFINISHED.
sanitizer_verdict() {
  local f=$1 rc errors hazards leaks
  rc=$(tail -n 1 "$f" | sed -n 's/^exit \([0-9]*\)$/\1/p')
  errors=$(grep -oE "ERROR SUMMARY: [0-9]+" "$f" | awk '{n += $3} END {print n + 0}')
  hazards=$(grep -oE "RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors" "$f" |
    awk '{n += substr($6, 2)} END {print n + 0}')
  leaks=$(grep -oE "LEAK SUMMARY: [1-9][0-9]* bytes leaked in [0-9]+ allocations" "$f" | tail -n 1 |
    cut -c15-)
  if grep -q "terminated before first instrumented API call" "$f"; then
    echo "no GPU work"
  elif [ -z "$rc" ]; then
    echo "UNFINISHED (no exit status in the log)"
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "TIMEOUT"
  elif [ "$rc" = 99 ] || [ "$errors" != 0 ] || [ "$hazards" != 0 ]; then
    echo "SANITIZER ERRORS: $errors error(s), $hazards race hazard(s)${leaks:+; $leaks} (exit $rc)"
  elif grep -q "process didn't terminate successfully" "$f"; then
    echo "CRASHED (exit $rc)"
  elif [ "$rc" != 0 ]; then
    echo "PROGRAM FAILED (exit $rc; no sanitizer error)"
  else
    echo "ok"
  fi
}
if [ "$sanitizer" = 1 ] && [ -x "$cs" ]; then
  mkdir -p "$out/sanitizer"
  export -f sanitize_one
  export out cs
  for tool in ${sanitizer_tools//,/ }; do
    for f in examples/*.lua; do
      name=$(basename "$f" .lua); [ "$name" = example_support ] && continue
      echo "$tool lua $name"
    done
    echo "$tool c example_saxpy"
    for t in /tmp/b/tests/test_*; do # test_stub_driver runs against the stand-in driver only
      [ -x "$t" ] && [ "${t##*/}" != test_stub_driver ] && echo "$tool test $t"
    done
  done | xargs -P "$sanitizer_jobs" -L 1 bash -c 'sanitize_one "$@"' _
fi
t3s=$(date +%s)
if [ "$bench" = 1 ] && [ -x scripts/bench/run.sh ]; then
  timeout 400 scripts/bench/run.sh --build /tmp/b --out "$out/bench" $bench_args > "$out/bench.log" 2>&1
  echo "bench exit $?" >> "$out/bench.log"
fi
t4=$(date +%s)
if [ -n "${OUT:-}" ]; then
  tar -C /tmp -czf "$OUT/gpu-run.tgz" gpu-run
  cp "$out/ctest.log" "$OUT/" 2>/dev/null
fi
echo "== failures"; grep -E "\(Failed\)|\(Subprocess|\(Timeout|\*\*\*Failed" "$out/ctest.log" | head -40
echo "== examples"; tail -n 3 "$out"/examples/*.txt 2>/dev/null | head -60
echo "== compute-sanitizer: one line per run (tool, program, verdict); logs in sanitizer/TOOL-PROGRAM.txt"
verdicts=$(for f in "$out"/sanitizer/*.txt; do
  [ -e "$f" ] || break
  run=$(basename "$f" .txt)
  printf '%-10s %-26s %s\n' "${run%%-*}" "${run#*-}" "$(sanitizer_verdict "$f")"
done)
if [ -z "$verdicts" ]; then
  echo "not run (pass --sanitizer; it needs compute-sanitizer at $cs)"
else
  echo "$verdicts"
  echo "-- $(wc -l <<<"$verdicts") runs: $(grep -c ' ok$' <<<"$verdicts") ok," \
    "$(grep -c ' no GPU work$' <<<"$verdicts") without GPU work," \
    "$(grep -cvE ' (ok|no GPU work)$' <<<"$verdicts") to look at"
fi
echo "== bench goals"; grep -E "GOAL|Goals:" "$out/bench/table.md" 2>/dev/null | head -40
echo "== timings: build $((t1-t0))s, tests $((t2-t1))s, examples $((t3-t2))s, sanitizer $((t3s-t3))s, bench $((t4-t3s))s"
echo "== ctest (tail)"; tail -5 "$out/ctest.log"
exit $rc
