#!/usr/bin/env bash
# scripts/mutate/coverage.sh -- the coverage map mutate.sh judges mutants by: for every line of
# engine/ and examples/, the ctest tests that executed it, measured, not written by hand.
#
# Builds WORKDIR/src (a private copy of the tree) with gcc --coverage at -O0 in
# WORKDIR/build-coverage, then runs every ctest test ALONE (nice -n 19, one at a time): the
# counters are emptied before each test (every .gcda removed) and read after it with gcov, so each
# test's record holds exactly the lines it executed. The Lua examples are mapped whole, to the
# tests that name them (their lines are not traced). Output: WORKDIR/coverage.map (format:
# scripts/mutate/covmap.py), and WORKDIR/coverage/<test>.cov, tests.txt, <test>.log.
#
#   scripts/mutate/coverage.sh [-w WORKDIR] [-R REGEX] [-E REGEX] [-l SECONDS] [-k]
#     -w WORKDIR  default build-mutate (the one mutate.sh uses)
#     -R REGEX    only the tests matching REGEX (ctest -R); the map then holds only them
#     -E REGEX    leave out the tests matching REGEX (ctest -E)
#     -l SECONDS  a test running longer is stopped (default 600, the tests' own TIMEOUT); its
#                 record still counts what it had executed
#     -k          keep the records of tests already run (WORKDIR/coverage/<test>.cov from the same
#                 sources), running only the missing ones: resumes an interrupted run
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
work="$here/build-mutate" include="" exclude="" limit=600 keep=0
usage() { sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while getopts "w:R:E:l:kh" opt; do
  case $opt in
    w) work=$OPTARG ;;
    R) include=$OPTARG ;;
    E) exclude=$OPTARG ;;
    l) limit=$OPTARG ;;
    k) keep=1 ;;
    *) usage ;;
  esac
done
. "$here/scripts/mutate/lib.sh"
mkdir -p "$work" && work=$(cd "$work" && pwd)
src="$work/src" build="$work/build-coverage" records="$work/coverage"
covmap="$here/scripts/mutate/covmap.py"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

mutate_sync_copy "$here" "$src"
# gcov writes a process's counters at a normal exit only: every executable is linked with
# gcov_flush.c, which writes them first where a process ends otherwise (execv, _exit, a fatal
# signal's default action), or what such a process ran would be mapped as executed by no test.
gcc -O0 -Wall -Werror -c "$here/scripts/mutate/gcov_flush.c" -o "$work/gcov_flush.o" ||
  { echo "coverage.sh: cannot compile scripts/mutate/gcov_flush.c" >&2; exit 1; }
exe_flags="--coverage -Wl,--wrap=execv -Wl,--wrap=signal -Wl,--export-dynamic-symbol=_exit"
exe_flags+=" -Wl,--export-dynamic-symbol=_Exit $work/gcov_flush.o"
if [ ! -f "$build/build.ninja" ] || ! grep -qF -- "$exe_flags" "$build/CMakeCache.txt"; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Coverage "-DCMAKE_C_FLAGS=--coverage -O0 -DNDEBUG" \
    "-DCMAKE_EXE_LINKER_FLAGS=$exe_flags" -DCMAKE_{SHARED,MODULE}_LINKER_FLAGS=--coverage \
    > "$work/configure-coverage.log" 2>&1 ||
    { echo "coverage.sh: configure failed, see $work/configure-coverage.log" >&2; exit 1; }
fi
nice -n 19 cmake --build "$build" -j1 > "$work/build-coverage.log" 2>&1 ||
  { echo "coverage.sh: the coverage build failed, see $work/build-coverage.log" >&2; exit 1; }

[ "$keep" = 1 ] || rm -rf "$records"
mkdir -p "$records"
# A kept record is valid only for the sources it was measured on.
stamp=$(cd "$src" && find CMakeLists.txt cmake engine examples include kernels_src tests scripts/bench -type f -print0 |
  sort -z | xargs -0 cat | sha1sum | cut -c1-40)
[ -f "$records/sources.sha1" ] && [ "$(cat "$records/sources.sha1")" != "$stamp" ] && rm -f "$records"/*.cov
echo "$stamp" > "$records/sources.sha1"

python3 "$covmap" list "$build" > "$work/coverage-tests.all" || exit 1
: > "$records/tests.new"
start=$(date +%s) count=0
while IFS=$'\t' read -r name command; do
  [ "$name" = test_tmp.make ] && continue # the fixture that makes the scratch directory
  [ -n "$include" ] && ! [[ $name =~ $include ]] && continue
  [ -n "$exclude" ] && [[ $name =~ $exclude ]] && continue
  count=$((count + 1))
  if [ "$keep" = 1 ] && [ -f "$records/$name.cov" ] && old=$(grep -F -m1 "$name"$'\t' "$records/tests.txt" 2> /dev/null); then
    echo "$old" >> "$records/tests.new"
    continue
  fi
  find "$build" -name '*.gcda' -delete
  rm -rf "$build/test-cache" "$build/test-tmp" && mkdir -p "$build/test-tmp"
  t0=$(date +%s)
  # Stopped at the limit (lib.sh): the data of the processes killed is lost, what ended is kept.
  mutate_run_limited "$limit" "$records/$name.log" ctest --test-dir "$build" -R "^${name//./\\.}\$" -j1 --output-on-failure
  rc=$?
  secs=$(($(date +%s) - t0))
  if [ "$rc" -gt 128 ]; then
    status=stopped
  elif grep -q '\*\*\*Skipped' "$records/$name.log"; then
    status=skipped
  elif [ "$rc" = 0 ]; then
    status=passed
  else
    status=failed
  fi
  # The targets whose own objects ran (tests/CMakeFiles/test_kernel.dir/... -> test_kernel): what
  # a mutant's build must relink for this test (shared libraries and modules are added by mutate.sh).
  gcdas=$(find "$build" -name '*.gcda')
  targets=$(printf '%s\n' "$gcdas" | sed -n 's|.*CMakeFiles/\([^/]*\)\.dir/.*|\1|p' | sort -u)
  # The test's own program too, where the build makes it: one whose objects leave no coverage
  # data (examples/c/interop_runtime.cu, compiled by nvcc) must still be built for the test.
  exe=$(basename "${command%% *}")
  if find "$build" -type d -name "$exe.dir" -path '*/CMakeFiles/*' | grep -q .; then
    targets=$(printf '%s\n%s\n' "$targets" "$exe" | sed '/^$/d' | sort -u)
  fi
  if [ -n "$gcdas" ]; then
    (cd "$records" && printf '%s\n' "$gcdas" | nice -n 19 xargs gcov --json-format --stdout 2> /dev/null) |
      python3 "$covmap" collect "$src" "$records/$name.cov" $targets
  else
    python3 "$covmap" collect "$src" "$records/$name.cov" $targets < /dev/null
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$secs" "$command" >> "$records/tests.new"
  echo "coverage.sh: $name $status ${secs}s ($(grep -c '^X ' "$records/$name.cov") files executed)"
done < "$work/coverage-tests.all"
mv "$records/tests.new" "$records/tests.txt"
find "$build" -name '*.gcda' -delete
python3 "$covmap" merge "$src" "$work" "$work/coverage.map" || exit 1
echo "coverage.sh: $count tests in $(($(date +%s) - start)) s; map: $work/coverage.map"
awk '$1 == "T" {print $4}' "$work/coverage.map" | sort | uniq -c | sed 's/^/  /'
