#!/usr/bin/env bash
# run.sh -- the one benchmark command: cujit (C and Lua) against the raw Driver API, NVRTC alone,
# CuPy and Numba, on the same GPU in one run. Writes results.csv, table.md, the charts and run.log
# into --out, and prints the table. See scripts/bench/README.md for the cases and the method.
#
#   scripts/bench/run.sh --build BUILD_DIR --out OUT_DIR [--quick | --short] [--cases LIST]
#                        [--python PYTHON] [--timeout SECONDS]
#
# --quick: the same cases on a smaller sweep. --short: CI, no GPU needed; every code path runs with
# tiny sizes, and what cannot run says "missing". A peer that is not installed is "missing", never
# a failure. Exit status: 0 when the table and charts were written, 2 for bad arguments, 1 else.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}
die_usage() {
  echo "run.sh: $1" >&2
  echo "usage: run.sh --build BUILD_DIR --out OUT_DIR [--quick | --short] [--cases LIST]" \
    "[--python PYTHON] [--timeout SECONDS]" >&2
  exit 2
}

build= out= mode=full cases=all python=${PYTHON:-python3} step_timeout=150
while [ $# -gt 0 ]; do
  case $1 in
  --build | --out | --cases | --python | --timeout)
    [ $# -ge 2 ] || die_usage "$1 needs a value"
    case $1 in
    --build) build=$2 ;; --out) out=$2 ;; --cases) cases=$2 ;; --python) python=$2 ;;
    --timeout) step_timeout=$2 ;;
    esac
    shift 2 ;;
  --quick) mode=quick; shift ;;
  --short) mode=short; shift ;;
  -h | --help) usage; exit 0 ;;
  *) die_usage "unknown argument '$1'" ;;
  esac
done
[ -n "$build" ] || die_usage "--build is needed: the CMake build directory (e.g. /tmp/b)"
[ -n "$out" ] || die_usage "--out is needed: where results.csv, table.md and the charts go"
[ -d "$build" ] || die_usage "--build $build is not a directory; build the project first"
case $step_timeout in '' | *[!0-9]*) die_usage "--timeout expects whole seconds, got '$step_timeout'" ;; esac
known="all info launch roundtrip cold warm process bandwidth sum gemm montecarlo graph latency small memory redefine pch link compile"
for c in ${cases//,/ }; do
  case " $known " in *" $c "*) ;; *) die_usage "unknown case '$c' (cases: ${known// /, })" ;; esac
done

mkdir -p "$out" || die_usage "cannot create --out $out"
out=$(cd "$out" && pwd)
csv=$out/results.csv log=$out/run.log
work=$(mktemp -d "${TMPDIR:-/tmp}/cujit-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
echo "case,system,variant,n,value,unit,status,detail" >"$csv"
: >"$log"

bench=$build/scripts/bench kernels=$here/kernels
raw=$bench/cujit_bench_raw cbench=$bench/cujit_bench_c report=$bench/cujit_bench_report
latency=$bench/cujit_bench_latency redefine=$bench/cujit_bench_redefine
compile=$bench/cujit_bench_compile
headers=$bench/cujit_bench_headers link=$bench/cujit_bench_link
cujit=$build/cujit
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
export LUA_CPATH="$bench/lua/?.so;$build/lua/?.so;;"

case $mode in
full) opts=() proc_reps=5 redefine_reps=2000 pch_reps=5 ;;
quick) opts=(--quick) proc_reps=3 redefine_reps=2000 pch_reps=3 ;;
short) opts=(--short) proc_reps=1 step_timeout=60 redefine_reps=100 pch_reps=1 ;;
esac
common=(--kernels "$kernels" "${opts[@]}")

wants() { [[ ",$cases," == *",all,"* || ",$cases," == *",$1,"* ]]; }
# The cases of a list that were asked for, comma-separated ("" if none).
pick() {
  local c r=
  for c in ${1//,/ }; do wants "$c" && r=${r:+$r,}$c; done
  echo "$r"
}
note() { echo "== $*" >>"$log"; echo "run.sh: $*" >&2; }
missing_row() { echo "$1,$2,$3,0,,,missing,$4" >>"$csv"; }

# Runs one benchmark command with a time limit; its CSV rows go to the results (or to $2 when
# given), its stderr to the log. A command that times out or fails leaves a "missing" row per case.
step() {
  local system=$1 case_list=$2 dest=$3
  shift 3
  note "$system [$case_list]: $*"
  timeout "$step_timeout" "$@" >"$work/rows" 2>>"$log"
  local rc=$?
  grep -E '^[a-z_]+,' "$work/rows" >>"$dest"
  if [ $rc -ne 0 ]; then
    local why="exited with status $rc"
    [ $rc -eq 124 ] && why="timed out after ${step_timeout}s"
    for c in ${case_list//,/ }; do missing_row "$c" "$system" "(all)" "$why (see run.log)"; done
  fi
}

# Rows from several processes measuring one figure: one row with the median of those that
# measured it, else the first "missing" row. Input lines on stdin.
median_rows() {
  awk -F, 'BEGIN { OFS = "," }
    { key = $1 "," $2 "," $3 }
    $7 == "ok" { n[key]++; v[key, n[key]] = $5; row[key] = $0; order[key] = order[key] ? order[key] : ++k }
    $7 != "ok" && !(key in bad) { bad[key] = $0; order[key] = order[key] ? order[key] : ++k }
    END {
      for (key in order) {
        if (n[key] == 0) { print bad[key]; continue }
        m = n[key]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
          if (v[key, j] + 0 < v[key, i] + 0) { t = v[key, i]; v[key, i] = v[key, j]; v[key, j] = t }
        med = m % 2 ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2
        split(row[key], f, ",")
        f[5] = sprintf("%.6g", med)
        print f[1], f[2], f[3], f[4], f[5], f[6], f[7], "median of " m " processes"
      }
    }'
}

# One figure per new process, $proc_reps times: cold (a fresh empty cache each time) or warm (one
# cache, filled by an untimed run first). $1 system, $2 case, $3 the cache variable, then the command.
per_process() {
  local system=$1 bcase=$2 var=$3
  shift 3
  : >"$work/proc"
  local r cache=$work/cache-$system-warm
  if [ "$bcase" = warm ]; then
    rm -rf "$cache"; mkdir -p "$cache"
    env "$var=$cache" "$@" >/dev/null 2>>"$log" </dev/null # fills the cache; not timed
  fi
  for ((r = 1; r <= proc_reps; r++)); do
    [ "$bcase" = cold ] && { cache=$work/cache-$system-cold-$r; rm -rf "$cache"; mkdir -p "$cache"; }
    step "$system" "$bcase" "$work/proc" env "$var=$cache" "$@"
  done
  median_rows <"$work/proc" >>"$csv"
}

# Case 4b: the whole process, start to exit, timed from here with a warm cache.
whole_process() {
  local system=$1 var=$2
  shift 2
  local cache=$work/cache-$system-process r t0 t1 times=() failed=
  mkdir -p "$cache"
  note "$system [process]: $*"
  env "$var=$cache" timeout "$step_timeout" "$@" >/dev/null 2>>"$log" </dev/null # warms the cache
  for ((r = 1; r <= proc_reps; r++)); do
    t0=$EPOCHREALTIME
    env "$var=$cache" timeout "$step_timeout" "$@" >"$work/printed" 2>>"$log" </dev/null || failed=1
    t1=$EPOCHREALTIME
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1e3 }')")
  done
  if [ -n "$failed" ]; then
    missing_row process "$system" vadd "the script failed: $(tail -n 1 "$log" | tr ',' ';')"
    return
  fi
  printf '%s\n' "${times[@]}" | sort -g | awk -v s="$system" '{ v[NR] = $1 }
    END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "process,%s,vadd,1048576,%.6g,ms,ok,median of %d processes\n", s, m, NR }' >>"$csv"
}

have() { [ -x "$1" ] || { echo "$1 was not built (ninja -C $build cujit_bench)"; return 1; }; }
python_has() { "$python" -c "import $1" >/dev/null 2>&1; }

# ---- raw C and NVRTC alone ------------------------------------------------------------------------
main_cases=$(pick info,launch,roundtrip,bandwidth,sum,graph)
if why=$(have "$raw"); then
  [ -n "$main_cases" ] && step raw "$main_cases" "$csv" "$raw" "${common[@]}" --cases "$main_cases"
  wants cold && per_process nvrtc cold CUJIT_UNUSED "$raw" "${common[@]}" --cases cold
  wants warm && per_process raw warm CUJIT_UNUSED "$raw" "${common[@]}" --cases warm
else
  for c in ${main_cases//,/ }; do missing_row "$c" raw "(all)" "$why"; done
fi

# ---- cujit C ----------------------------------------------------------------------------------------
main_cases=$(pick info,launch,roundtrip,bandwidth,sum,gemm,montecarlo,graph)
if why=$(have "$cbench"); then
  [ -n "$main_cases" ] && step cujit_c "$main_cases" "$csv" env CUJIT_CACHE_DIR="$work/cache-c" \
    "$cbench" "${common[@]}" --cases "$main_cases"
  for c in cold warm; do
    wants $c && per_process cujit_c $c CUJIT_CACHE_DIR "$cbench" "${common[@]}" --cases $c
  done
else
  for c in ${main_cases//,/ } cold warm; do wants "$c" && missing_row "$c" cujit_c "(all)" "$why"; done
fi

# ---- latency and small operations: cujit C beside the driver, in one process (issue 15) ------------
main_cases=$(pick latency,small)
if [ -n "$main_cases" ]; then
  if why=$(have "$latency"); then
    step cujit_c "$main_cases" "$csv" env CUJIT_CACHE_DIR="$work/cache-c" \
      "$latency" "${common[@]}" --cases "$main_cases"
    # The same waits under CUJIT_WAIT=spin (never nap): beside the default policy, the rows that
    # decide its spin window (docs/ARCHITECTURE.md, "Waits and the memory pool").
    if wants latency; then
      : >"$work/spin"
      step cujit_c_spin latency "$work/spin" env CUJIT_CACHE_DIR="$work/cache-c" CUJIT_WAIT=spin \
        "$latency" "${common[@]}" --cases latency
      sed -n 's/^latency,cujit_c,/latency,cujit_c_spin,/p' "$work/spin" >>"$csv"
      grep '^latency,cujit_c_spin,' "$work/spin" >>"$csv"
    fi
  else
    for c in ${main_cases//,/ }; do missing_row "$c" cujit_c "(all)" "$why"; done
  fi
fi

# ---- defining again: an already-defined kernel, an already-compiled program (issue 9) -----------
if wants redefine; then
  if why=$(have "$redefine"); then
    step cujit_c redefine "$csv" env CUJIT_CACHE_DIR="$work/cache-c" "$redefine" "$redefine_reps"
  else
    missing_row redefine cujit_c "(all)" "$why"
  fi
fi

# ---- kernels including <cooperative_groups.h> in one process: precompiled headers (issue 25) ----
if wants pch; then
  if why=$(have "$headers"); then
    step cujit_c pch "$csv" env TMPDIR="$work" "$headers" "$pch_reps"
  else
    missing_row pch cujit_c "(all)" "$why"
  fi
fi

# ---- a cold kernel linked with a device library kept as LTO-IR, against a full compile (issue 25) --
if wants link; then
  if why=$(have "$link"); then
    step cujit_c link "$csv" "$link" "$kernels" "$proc_reps"
  else
    missing_row link cujit_c "(all)" "$why"
  fi
fi

# ---- compiling (issue 25): at once, -minimal, a process's first compile beside the driver's start --
if wants compile; then
  if why=$(have "$compile"); then
    short=(); [ "$mode" = short ] && short=(--short)
    # Eight processes each making a precompiled header (heavy-floor) take minutes, not seconds,
    # on a loaded 2-core machine (two suites at once, scripts/test_twice.sh): a longer limit.
    for what in many many-heavy heavy-floor minimal; do
      step_timeout=$((step_timeout * 4)) step cujit_c compile "$csv" \
        env CUJIT_CACHE_DIR="$work/cache-compile" "$compile" "${short[@]}" "$what"
    done
    step cujit_c compile "$csv" env CUJIT_CACHE_DIR="$work/cache-compile" CUJIT_PCH=off "$compile" \
      --short many-heavy
    step cujit_c compile "$csv" env CUJIT_CACHE_DIR="$work/cache-compile" "$compile" "${short[@]}" \
      --arch cpu many
    step cujit_c compile "$csv" env CUJIT_CACHE_DIR="$work/cache-prelude" "$compile" "${short[@]}" \
      cpu-prelude
    # One figure per process, the three ways interleaved; the median of each (median_rows).
    : >"$work/first"
    for ((r = 1; r <= proc_reps; r++)); do
      for what in first-nvrtc first-cujit first-cujit-device first-driver; do
        step cujit_c compile "$work/first" env CUJIT_CACHE_DIR="$work/cache-compile" "$compile" "$what"
      done
    done
    median_rows <"$work/first" >>"$csv"
  else
    missing_row compile cujit_c "(all)" "$why"
  fi
fi

# ---- cujit Lua ----------------------------------------------------------------------------------------
main_cases=$(pick launch,roundtrip,bandwidth,graph,latency,small,memory)
if why=$(have "$cujit"); then
  [ -n "$main_cases" ] && step cujit_lua "$main_cases" "$csv" env CUJIT_CACHE_DIR="$work/cache-lua" \
    "$cujit" "$here/bench.lua" "${common[@]}" --cases "$main_cases"
  for c in cold warm; do
    wants $c && per_process cujit_lua $c CUJIT_CACHE_DIR "$cujit" "$here/bench.lua" "${common[@]}" --cases $c
  done
  wants process && whole_process cujit_lua CUJIT_CACHE_DIR "$cujit" "$here/oneshot.lua" "$kernels"
else
  for c in ${main_cases//,/ } cold warm process; do wants "$c" && missing_row "$c" cujit_lua "(all)" "$why"; done
fi

# ---- CuPy and Numba, each in processes of its own --------------------------------------------------
for peer in cupy numba; do
  main_cases=$(pick info,launch,roundtrip,bandwidth,sum,montecarlo,graph)
  [ $peer = cupy ] && main_cases=$(pick info,launch,roundtrip,bandwidth,sum,gemm,montecarlo,graph,latency,small)
  cache_var=CUPY_CACHE_DIR
  [ $peer = numba ] && cache_var=NUMBA_CACHE_DIR
  if ! command -v "$python" >/dev/null 2>&1; then
    for c in ${main_cases//,/ } cold warm process; do
      wants "$c" && missing_row "$c" $peer "(all)" "no $python to run the Python peers"
    done
    continue
  fi
  peer_cmd=("$python" "$here/peers.py" --system $peer "${common[@]}")
  [ -n "$main_cases" ] && step $peer "$main_cases" "$csv" env "$cache_var=$work/cache-$peer" \
    "${peer_cmd[@]}" --cases "$main_cases"
  for c in cold warm; do wants $c && per_process $peer $c $cache_var "${peer_cmd[@]}" --cases $c; done
  if wants process; then
    if python_has $peer; then
      whole_process $peer $cache_var "$python" "$here/oneshot_$peer.py" "$kernels"
    else
      missing_row process $peer vadd "$peer is not installed for $python"
    fi
  fi
done

# ---- the table and the charts -----------------------------------------------------------------
if ! why=$(have "$report"); then
  echo "run.sh: $why; results are in $csv" >&2
  exit 1
fi
note "report: $report --csv $csv --out $out"
"$report" --csv "$csv" --out "$out" || { echo "run.sh: the report failed; see above" >&2; exit 1; }
if [ $mode = short ]; then # CI: the chart writer on canned numbers too, since nothing was measured
  mkdir -p "$out/canned"
  "$report" --csv "$here/testdata/canned.csv" --out "$out/canned" >/dev/null ||
    { echo "run.sh: the report failed on the canned numbers" >&2; exit 1; }
fi
echo
echo "results: $csv, $out/table.md, charts: $(cd "$out" && ls *.png 2>/dev/null | tr '\n' ' ')log: $log"
