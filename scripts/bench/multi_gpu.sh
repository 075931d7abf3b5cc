#!/usr/bin/env bash
# multi_gpu.sh -- the two-GPU benchmark of issue 14 in one run: the peer copy GPU0->GPU1 beside a
# copy on one GPU, the all-reduce of 256 MiB f32 through cujit beside NCCL called directly from C
# (cujit_bench_multi_gpu), and the Monte Carlo over every GPU against one
# (examples/multi_gpu.lua). Prints a table; the rows also go to OUT/multi_gpu.csv.
#
#   scripts/bench/multi_gpu.sh --build BUILD_DIR [--out OUT_DIR] [--mib N] [--reps N]
#
# NCCL is measured only with NCCL_NVLS_ENABLE=0 in the environment (this script never sets it);
# CUJIT_NCCL names libnccl.so.2 when it is not on the library path (for the nvidia-nccl-cu13 wheel:
# python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))"/lib/libnccl.so.2).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build= out=. mib=256 reps=20
while [ $# -gt 0 ]; do
  case $1 in
  --build | --out | --mib | --reps)
    [ $# -ge 2 ] || { echo "multi_gpu.sh: $1 needs a value" >&2; exit 2; }
    case $1 in --build) build=$2 ;; --out) out=$2 ;; --mib) mib=$2 ;; --reps) reps=$2 ;; esac
    shift 2 ;;
  -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "multi_gpu.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$build" ] && [ -d "$build" ] || { echo "multi_gpu.sh: --build BUILD_DIR is needed" >&2; exit 2; }
build=$(cd "$build" && pwd)
mkdir -p "$out" || exit 1
csv=$out/multi_gpu.csv
echo "case,system,variant,n,value,unit,status,detail" >"$csv"
[ "${NCCL_NVLS_ENABLE-}" = 0 ] || echo "note: NCCL_NVLS_ENABLE is not 0: the NCCL rows will be missing"

"$build/scripts/bench/cujit_bench_multi_gpu" --mib "$mib" --reps "$reps" >>"$csv" || exit 1

# The Monte Carlo: its own lines, one device then every device, with the speed-up.
mc=$out/multi_gpu_montecarlo.log
(cd "$here/../../examples" && "$build/cujit" multi_gpu.lua) >"$mc" 2>&1
mc_status=$?

echo
echo "| figure | system | value |"
echo "| --- | --- | --- |"
awk -F, 'NR > 1 { v = ($7 == "missing") ? "missing: " $8 : sprintf("%.3f %s", $5, $6);
                 printf "| %s (%d MiB) | %s | %s |\n", $3, $4 / 1048576, $2, v }' "$csv"
grep -E "^(1 device|[0-9]+ devices):" "$mc" | sed 's/^/| Monte Carlo | cujit | /; s/$/ |/'
[ $mc_status -eq 0 ] || { echo "examples/multi_gpu.lua failed; see $mc" >&2; exit 1; }
