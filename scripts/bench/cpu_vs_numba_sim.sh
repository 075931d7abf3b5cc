#!/usr/bin/env bash
# cpu_vs_numba_sim.sh -- cujit's CPU device against Numba's CUDA simulator, in one run, on the same
# kernels and sizes (issue 10's goal: at least 1000x faster): vector add, a 3x3 2-D convolution, a
# shared-memory block reduction with __syncthreads, and a warp-shuffle reduction. Prints a table:
# time per element of each, the ratio, and the goal beside it. A benchmark: it asserts nothing.
#
#   scripts/bench/cpu_vs_numba_sim.sh --build BUILD_DIR [--python PYTHON] [--n ELEMENTS] [--reps N]
#
# --build: a CMake build holding the `cujit` command. --python: a Python with numba and numpy
# (default python3; e.g. a venv: python3 -m venv v && v/bin/pip install numba). --n: elements per
# kernel (default 2048; the convolution's image is sqrt(n) x sqrt(n)); the simulator runs one
# Python thread per CUDA thread, so 4096 already takes it about 20 s. --reps: cujit's repetitions
# (best of; default 20); the simulator runs each kernel once (its run is seconds long).
# Numba's simulator has no warp shuffles: its warp reduction does the same sums through shared
# memory with syncthreads. Exit status: 0 when the table was printed, 1 when a side failed, 2 for
# bad arguments.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build= python=${PYTHON:-python3} n=2048 reps=20
die_usage() {
  echo "cpu_vs_numba_sim.sh: $1" >&2
  sed -n '7p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die_usage "$1 needs a value"
  case $1 in
  --build) build=$2 ;; --python) python=$2 ;; --n) n=$2 ;; --reps) reps=$2 ;;
  *) die_usage "unknown argument '$1'" ;;
  esac
  shift 2
done
[ -n "$build" ] || die_usage "--build is needed: the CMake build directory"
[ -x "$build/cujit" ] || die_usage "no cujit command in $build: build the project first"
case $n in '' | *[!0-9]*) die_usage "--n expects a whole number, got '$n'" ;; esac
[ $((n % 256)) -eq 0 ] && [ "$n" -ge 256 ] || die_usage "--n must be a multiple of 256"
"$python" -c "import numba, numpy" 2>/dev/null ||
  { echo "cpu_vs_numba_sim.sh: $python has no numba/numpy (pip install numba)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cujit-numba-sim.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
CUJIT_DEVICE=cpu CUJIT_CACHE_DIR=$work/cache "$build/cujit" "$here/cpu/numba_sim.lua" "$n" "$reps" \
  >"$work/cujit.txt" || { echo "cpu_vs_numba_sim.sh: the cujit side failed" >&2; exit 1; }
"$python" "$here/cpu/numba_sim.py" "$n" 1 >"$work/numba.txt" ||
  { echo "cpu_vs_numba_sim.sh: the Numba side failed" >&2; exit 1; }

echo "cujit CPU device (CUJIT_DEVICE=cpu, $(nproc) cores, best of $reps launches + synchronize)"
echo "against Numba $("$python" -c 'import numba; print(numba.__version__)') CUDA simulator (one run), $n elements"
echo
printf '| %-31s | %14s | %14s | %10s | %-12s |\n' kernel "cujit ns/elem" "Numba ns/elem" ratio goal
printf '| %-31s | %14s | %14s | %10s | %-12s |\n' --- --- --- --- ---
join "$work/cujit.txt" "$work/numba.txt" | while read -r k elems tc okc _ tn okn; do
  case $k in
  vadd) name="vector add" ;; conv) name="2-D convolution 3x3" ;;
  bsum) name="block reduction (__syncthreads)" ;; wsum) name="warp-shuffle reduction" ;;
  *) name=$k ;;
  esac
  awk -v name="$name" -v e="$elems" -v tc="$tc" -v tn="$tn" -v okc="$okc" -v okn="$okn" 'BEGIN {
    r = tn / tc
    verdict = (r >= 1000 ? ">=1000x met" : ">=1000x MISSED")
    if (okc != "ok" || okn != "ok") verdict = "WRONG"
    printf "| %-31s | %14.2f | %14.0f | %9.0fx | %-12s |\n", name, tc / e * 1e9, tn / e * 1e9, r, verdict
  }'
done
