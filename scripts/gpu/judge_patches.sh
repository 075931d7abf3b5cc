#!/usr/bin/env bash
# judge_patches.sh -- bugs planted by hand in GPU-only code (scripts/mutate.sh -p's patches: one
# diff of one file each), judged on the GPU machine, where the stand-in driver's verdict is not the
# last word: each patch applied to the tree, rebuilt (Release, /tmp/b), and run against the tests
# of its area (the ctest regex AREAS gives for its name, fixed before any result), then, if those
# pass, against the rest of the suite; the first failing test kills it. Each test that killed is
# run again at the end on the unmutated build, and must pass there. CUJIT_REQUIRE_GPU=1 throughout.
#   scripts/gpu/judge_patches.sh DIR AREAS [NAME...]
#     DIR     the patches (NAME.patch)
#     AREAS   a file of lines "NAME REGEX" (a patch without a line: its area is the whole suite)
#     NAME    only these patches (default: every one in DIR)
# DEADLINE (seconds, default 540): no patch is begun after DEADLINE - 120 s ("NOT RUN"), and a
# survivor of its area is not run against the rest past DEADLINE - 150 s ("area only").
set -u
cd "$(dirname "$0")/../.."
dir=$1 areas=$2
shift 2
source .gpu-deps/env.sh > /dev/null 2>&1
export NCCL_NVLS_ENABLE=0 CUJIT_REQUIRE_GPU=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s) deadline=${DEADLINE:-540} b=/tmp/b
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUJIT_WERROR=OFF > /tmp/judge-build.log 2>&1 &&
  cmake --build $b -j16 >> /tmp/judge-build.log 2>&1 || { tail -30 /tmp/judge-build.log; exit 1; }
apply() { git apply "$@" 2> /dev/null || patch -s -p1 $([ "$1" = -R ] && echo -R) -i "${@: -1}"; }
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(cd "$dir" && ls ./*.patch | sed 's|^\./||; s/\.patch$//'))
killers=()
for n in "${names[@]}"; do
  if [ $(($(date +%s) - t0)) -gt $((deadline - 120)) ]; then echo "$n: NOT RUN (time)" && continue; fi
  area=$(awk -v n="$n" '$1 == n { print $2 }' "$areas")
  area=${area:-.}
  apply "$dir/$n.patch" || { echo "$n: does not apply" && continue; }
  if ! cmake --build $b -j16 > /tmp/judge-mutant.log 2>&1; then
    echo "$n: INVALID (does not build)" && apply -R "$dir/$n.patch" && continue
  fi
  ctest --test-dir $b -j8 --timeout 200 --stop-on-failure -R "$area" > /tmp/judge-ctest.log 2>&1
  rc=$? phase=area
  if [ $rc = 0 ] && [ "$area" != . ] && [ $(($(date +%s) - t0)) -lt $((deadline - 150)) ]; then
    ctest --test-dir $b -j8 --timeout 200 --stop-on-failure -E "$area|sh.test_format|sh.test_rockspec" \
      > /tmp/judge-ctest.log 2>&1
    rc=$? phase=all
  elif [ $rc = 0 ] && [ "$area" != . ]; then
    phase="area only (time)"
  fi
  failed=$(grep -E 'Test +#.*\*\*\*(Failed|Timeout|Exception)|Test +#.*SEGFAULT' /tmp/judge-ctest.log | awk '{print $4}' | tr '\n' ' ')
  ran=$(grep -E 'tests passed' /tmp/judge-ctest.log | tail -1)
  if [ $rc = 0 ]; then echo "$n: SURVIVED ($phase; $ran)"; else echo "$n: KILLED by $failed($phase; $ran)" && killers+=($failed); fi
  [ -n "${OUT:-}" ] && cp /tmp/judge-ctest.log "$OUT/$n.log"
  apply -R "$dir/$n.patch"
done
cmake --build $b -j16 > /tmp/judge-mutant.log 2>&1
if [ ${#killers[@]} -gt 0 ]; then
  re=$(printf '^%s$|' "${killers[@]}" | sed 's/|$//; s/\./\\./g')
  ctest --test-dir $b -j8 --timeout 200 -R "$re" > /tmp/judge-base.log 2>&1
  echo "baseline (the killers, unmutated): exit $? $(grep -E 'tests passed' /tmp/judge-base.log)"
  grep -E 'Test +#.*\*\*\*' /tmp/judge-base.log
fi
echo "elapsed $(($(date +%s) - t0)) s"
