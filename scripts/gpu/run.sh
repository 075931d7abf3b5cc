#!/usr/bin/env bash
# run.sh -- the whole GPU-machine session in one command (device time is scarce): stage the
# Debian libraries carried in .gpu-deps, build, run the suite with CUJIT_REQUIRE_GPU=1, run the
# benchmarks, and leave logs in $OUT (or ./gpu-out). Prints a short summary last.
#   scripts/gpu/run.sh [--no-bench] [--bench-args "..."]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
bench=1 bench_args="--quick"
while [ $# -gt 0 ]; do
  case $1 in
    --no-bench) bench=0 ;;
    --bench-args) bench_args=$2; shift ;;
  esac
  shift
done
source .gpu-deps/env.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; git log -1 --format=%H 2>/dev/null || cat .commit 2>/dev/null; } > "$out/machine.txt" 2>&1
t0=$(date +%s)
if ! { cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUJIT_WERROR=OFF && cmake --build /tmp/b -j16; } > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "BUILD FAILED"; exit 1
fi
t1=$(date +%s)
echo "== gcc warnings on this machine: $(grep -c "warning:" "$out/build.log")"; grep "warning:" "$out/build.log" | sort -u | head -5
CUJIT_REQUIRE_GPU=1 ctest --test-dir /tmp/b --output-on-failure -j8 --timeout 300 > "$out/ctest.log" 2>&1
rc=$?
t2=$(date +%s)
if [ "$bench" = 1 ] && [ -x scripts/bench/run.sh ]; then
  timeout 420 scripts/bench/run.sh --build /tmp/b --out "$out/bench" $bench_args > "$out/bench.log" 2>&1
  echo "bench exit $?" >> "$out/bench.log"
fi
t3=$(date +%s)
echo "== failures"; grep -E "\(Failed\)|\(Subprocess|\(Timeout|\*\*\*" "$out/ctest.log" | head -40
echo "== bench (tail)"; tail -60 "$out/bench.log" 2>/dev/null
echo "== timings: build $((t1-t0))s, tests $((t2-t1))s, bench $((t3-t2))s"
echo "== ctest (tail)"; tail -5 "$out/ctest.log"
exit $rc
