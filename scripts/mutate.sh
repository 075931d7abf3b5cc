#!/usr/bin/env bash
# scripts/mutate.sh -- mutation testing: does the suite fail when the code is wrong?
#
# scripts/mutate/mutants.py makes every mutant of its classes (operators, constants, conditions,
# deleted statements, swapped arguments) of the files asked for, and draws a seeded sample. Each
# mutant replaces its file in a private copy of the tree (WORKDIR/src: the worktree is never
# touched), is rebuilt (nice -n 19, one job) and judged by exactly the tests that executed its line
# in the coverage map (WORKDIR/coverage.map, made by scripts/mutate/coverage.sh), fastest first,
# up to the first that fails. A mutant is: killed (a test failed, or ran past its limit);
# survived; not covered (no test executes its line: counted as survived); invalid (does not
# build, or Lua that luac refuses: not counted); equivalent (its object code, or Lua bytecode, is
# the original's; or its id is in scripts/mutate/equivalents with a reason: not counted).
#
#   scripts/mutate.sh [-n N] [-s SEED] [-w WORKDIR] [-i IDS] [-b SECONDS] [-a] [-p PATCHES]...
#                     [--folder DIR]... [FILE|DIR]...
#     FILE        one file, sampled alone (C, or Lua under examples/)
#     DIR, --folder DIR
#                 the .c (and, under examples/, .lua) files directly in DIR, sampled together
#     -n N        N mutants per FILE or DIR (default 15; 0 = every mutant)
#     -s SEED     the sample's seed (default 1): the same seed, the same mutants
#     -w WORKDIR  the copy, its builds, the map and the results (default build-mutate)
#     -i IDS      every mutant whose id (first word of each line) is in the file IDS (no -n), such as
#                 an earlier run's survivors: did new assertions kill them?
#     -b SECONDS  stop judging a mutant once its tests have run this long without a failure, the
#                 rest of its tests not run: "undecided", reported apart, not in the score
#                 (default 0: no budget, every covering test runs)
#     -p PATCHES  hand-written mutants, one group: every PATCHES/*.patch, a bug someone planted as
#                 a diff of one file (scripts/mutate/patches.py; PATCHES/<name>.txt describes it),
#                 judged like the others by the tests that executed its changed lines; a device
#                 header (kernels_src/) by every test that compiled a kernel
#     -a          build with AddressSanitizer, LeakSanitizer and UBSan (WORKDIR/build-san): a
#                 mutant that only leaks or overruns is killed too
# Results: WORKDIR/results/<group>.tsv (one mutant a line: number, file, line, class, id, change,
# verdict, tests run), WORKDIR/results/report.txt (per group and the survivors).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
sample=15 seed=1 work="$here/build-mutate" ids="" sanitize=0 budget=0 groups=()
usage() { sed -n '3,34p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
args=()
while [ $# -gt 0 ]; do # --folder DIR is -d DIR
  case $1 in --folder) args+=(-d "${2:-}") && shift 2 ;; --folder=*) args+=(-d "${1#--folder=}") && shift ;; *) args+=("$1") && shift ;; esac
done
set -- "${args[@]}"
while getopts "n:s:w:i:d:b:p:ah" opt; do
  case $opt in
    n) sample=$OPTARG ;;
    s) seed=$OPTARG ;;
    w) work=$OPTARG ;;
    i) ids=$(cd "$(dirname "$OPTARG")" && pwd)/$(basename "$OPTARG") ;;
    d) groups+=("${OPTARG%/}") ;;
    b) budget=$OPTARG ;;
    p) [ -d "$OPTARG" ] || { echo "mutate.sh: -p $OPTARG: no such directory" >&2; exit 2; }
       groups+=("@$(cd "$OPTARG" && pwd)") ;; # @: a directory of patches
    a) sanitize=1 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
for g in "$@"; do groups+=("${g%/}"); done
[ ${#groups[@]} -gt 0 ] || usage
. "$here/scripts/mutate/lib.sh"
mkdir -p "$work" && work=$(cd "$work" && pwd)
tools="$here/scripts/mutate" map="$work/coverage.map" equivalents="$here/scripts/mutate/equivalents"
[ -f "$map" ] || { echo "mutate.sh: no coverage map $map: run scripts/mutate/coverage.sh first" >&2; exit 2; }
luac=$(command -v luac5.4 || command -v luac)

# Warnings are not errors here: a mutant that only draws a warning (`a || b && c`) is a program.
# But one that breaks a constraint of the C language (a pointer passed for an integer, or one
# pointer type for another, as swapped arguments do) is not: GCC 12 only warns where the standard
# requires a diagnostic and GCC 14 refuses, so those stay errors and such a mutant is invalid.
constraints="-Werror=incompatible-pointer-types -Werror=int-conversion -Werror=implicit-function-declaration"
src="$work/src" build="$work/build" results="$work/results" config=(-DCMAKE_BUILD_TYPE=Release)
if [ "$sanitize" = 1 ]; then
  build="$work/build-san" config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUJIT_SANITIZE=address,undefined)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:intercept_tls_get_addr=0 # sanitize.sh says why
  export LSAN_OPTIONS=suppressions=$here/scripts/sanitize.supp:print_suppressions=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
config+=(-DCUJIT_WERROR=OFF "-DCMAKE_C_FLAGS=$constraints")
mkdir -p "$results"
mutate_sync_copy "$here" "$src"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ ! -f "$build/build.ninja" ] || ! grep -q '^CUJIT_WERROR:BOOL=OFF' "$build/CMakeCache.txt" ||
  ! grep -qF -- "CMAKE_C_FLAGS:STRING=$constraints" "$build/CMakeCache.txt"; then
  cmake -S "$src" -B "$build" -G Ninja "${config[@]}" > "$work/configure.log" 2>&1 ||
    { echo "mutate.sh: configure failed, see $work/configure.log" >&2; exit 1; }
fi
# Every library (shared, static, module): a test may load or link one (cujit.so, libcujit_static.a,
# the stand-in drivers) whose objects the coverage map cannot tell apart from one another.
libraries=$(ninja -C "$build" -t targets all | sed -n 's/^[^:]*: C_\(SHARED\|MODULE\|STATIC\)_LIBRARY_LINKER__\(.*\)_[A-Za-z]*$/\2/p' | sort -u)

build_targets() { # TARGET... (comma- or space-separated)
  local t args=()
  for t in ${*//,/ } $libraries; do args+=(--target "$t"); done
  nice -n 19 cmake --build "$build" -j1 "${args[@]}" < /dev/null > "$work/build.log" 2>&1
}

# Runs the tests ("name limit targets" a line on stdin, fastest first) one at a time, each after
# building what it needs (so a mutant killed by its first test relinks only that test's targets),
# stopping at the first that fails; a test running past its limit is stopped (lib.sh) and counts
# as failed. 0 when all pass, 3 when the budget ($1 seconds, 0: none) ran out first, 4 when a
# test's targets do not link; how many ran goes to WORKDIR/ran.
run_tests() {
  local name rc=0 ran=0 limit targets budget=${1:-0} t0=$SECONDS
  while read -r name limit targets; do
    if [ "$budget" -gt 0 ] && [ $((SECONDS - t0)) -ge "$budget" ]; then rc=3 && break; fi
    build_targets "${targets#-}" || { rc=4 && break; }
    rm -rf "$build/test-cache" "$build/test-tmp" && mkdir -p "$build/test-tmp"
    ran=$((ran + 1))
    mutate_run_limited "$limit" "$work/ctest.log" ctest --test-dir "$build" -R "^${name//./\\.}\$" -j1
    rc=$?
    [ "$rc" = 0 ] || { echo "$name" > "$work/failed" && break; }
  done
  echo "$ran" > "$work/ran"
  [ "$ran" -gt 0 ] || return 2 # nothing ran: never a pass
  return $rc
}

# The objects compiled from FILE, for the object-code comparison.
objects_of() {
  python3 -c 'import json,sys,os
for e in json.load(open(sys.argv[1])):
    if os.path.realpath(e["file"]) == os.path.realpath(sys.argv[2]):
        print(e.get("output") or e["command"].split(" -o ")[1].split()[0])' "$build/compile_commands.json" "$src/$1"
}

same_program() { # FILE EXT: is the rebuilt mutant the original program?
  local f=$1 ext=$2 o
  if [ "$ext" = lua ]; then
    cmp -s <("$luac" -s -o - "$src/$f" 2> /dev/null) "$work/orig/$f.luac"
    return
  fi
  case $f in *.c) ;; *) return 1 ;; esac # a header (a device header is embedded): no object of its own
  for o in $(objects_of "$f"); do cmp -s "$build/$o" "$work/orig/$f.objs/$(echo "$o" | tr / _)" || return 1; done
  return 0
}

echo "# scripts/mutate.sh ${args[*]} ($(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$here" rev-parse --short HEAD))" > "$results/report.txt"
# 1. The mutants of each group, and which tests judge each (the map's, fastest first).
slugs=()
for group in "${groups[@]}"; do
  slug=$(echo "${group#@}" | tr '/' '_')
  mdir="$work/mutants/$slug"
  rm -rf "$mdir"
  if [ "${group:0:1}" = @ ]; then # hand-written: the files are the ones the patches change
    (cd "$src" && python3 "$tools/patches.py" -o "$mdir" "${group#@}") > "$work/mutants-$slug.log" 2>&1 ||
      { cat "$work/mutants-$slug.log" >&2 && exit 1; }
    files=$(cut -f2 "$mdir/index.tsv" | sort -u)
  elif [ -d "$here/$group" ]; then
    files=$(cd "$here" && ls "$group"/*.c 2> /dev/null; case $group in examples*) cd "$here" && ls "$group"/*.lua 2> /dev/null ;; esac)
  else
    files=$group
  fi
  files=$(echo $files)
  [ -n "$files" ] || { echo "mutate.sh: $group: no .c file" >&2; exit 2; }
  for f in $files; do
    [ -f "$src/$f" ] || { echo "mutate.sh: $f: no such file" >&2; exit 2; }
    mapped=$(awk -v f="$f" '$1 == "F" && $2 == f { print $3 }' "$map")
    [ -z "$mapped" ] || [ "$mapped" = "$(sha1sum < "$src/$f" | cut -c1-40)" ] ||
      { echo "mutate.sh: $f changed since the coverage map was made: run scripts/mutate/coverage.sh again" >&2; exit 2; }
  done
  slugs+=("$slug")
  id_args=()
  [ -n "$ids" ] && id_args=(--ids "$ids")
  [ "${group:0:1}" = @ ] ||
    (cd "$src" && python3 "$tools/mutants.py" sample -n "$sample" -s "$seed" -o "$mdir" "${id_args[@]}" $files) > "$work/mutants-$slug.log" ||
    { echo "mutate.sh: mutants.py failed, see $work/mutants-$slug.log" >&2; exit 1; }
  echo "$group" > "$mdir/group"
  echo "$files" > "$mdir/files"
  python3 "$tools/covmap.py" judges "$map" "$mdir/index.tsv" > "$mdir/judges.tsv" || exit 1
done

# 2. The unmutated copy, built. The baseline: a test that kills a mutant must pass on the unmutated
# copy, or it would kill every mutant; the first time a test kills, it is run on the original
# (baseline_passes), and one that fails there is left out of every judgement (and listed). Kept
# per source digest in WORKDIR/baseline/<digest>/<test>: passed or failed.
judges=$(for slug in "${slugs[@]}"; do echo "$work/mutants/$slug/judges.tsv"; done)
all_targets=$(cat $judges | cut -f3 | tr ',' '\n' | grep . | sort -u)
build_targets $all_targets || { echo "mutate.sh: the unmutated copy does not build, see $work/build.log" >&2; exit 1; }
stamp=$(cd "$src" && find CMakeLists.txt cmake engine examples include kernels_src tests scripts/bench -type f -print0 |
  sort -z | xargs -0 cat | sha1sum | cut -c1-16)
[ "$sanitize" = 1 ] && stamp="$stamp-san"
baseline="$work/baseline/$stamp" && mkdir -p "$baseline"
broken_tests() { grep -l failed "$baseline"/* 2> /dev/null | xargs -r -n1 basename; }
# Does TEST pass on the original FILE? (the mutant of FILE, MUTANT, is put back afterwards)
baseline_passes() {
  local test=$1 f=$2 mutant=$3
  if [ ! -f "$baseline/$test" ]; then
    cp "$work/orig/$f.text" "$src/$f" # run_tests rebuilds what the test needs, both times
    if python3 "$tools/covmap.py" limits "$map" <<< "$test" | run_tests; then
      echo passed > "$baseline/$test"
    else
      echo failed > "$baseline/$test"
    fi
    cp "$mutant" "$src/$f"
  fi
  grep -q passed "$baseline/$test"
}

# 3. Each mutant, judged.
total="0 0 0 0 0 0"
for slug in "${slugs[@]}"; do
  mdir="$work/mutants/$slug" group=$(cat "$work/mutants/$slug/group") files=$(cat "$work/mutants/$slug/files")
  generated=$(sed -n 's/.* of \([0-9]*\) drawn.*/\1/p' "$work/mutants-$slug.log")
  start=$(date +%s)
  for f in $files; do # the originals, to compare the mutants' objects with
    mkdir -p "$work/orig/$f.objs" && rm -f "$work/orig/$f.objs"/*
    case $f in
      *.lua) "$luac" -s -o "$work/orig/$f.luac" "$src/$f" ;;
      *) for o in $(objects_of "$f"); do cp "$build/$o" "$work/orig/$f.objs/$(echo "$o" | tr / _)"; done ;;
    esac
    cp "$src/$f" "$work/orig/$f.text"
  done
  out="$results/$slug.tsv"
  : > "$out"
  while IFS=$'\t' read -r number f line cls id change; do
    IFS=$'\t' read -r _ tests targets < <(grep "^$number"$'\t' "$mdir/judges.tsv")
    ext=${f##*.}
    tests=$(echo "$tests" | tr ',' '\n' | grep . | grep -vxF -f <(broken_tests))
    verdict="" ran=0
    if [ -z "$tests" ]; then
      verdict="not covered"
    else
      cp "$mdir/$number.$ext" "$src/$f"
      if [ "$ext" = lua ]; then
        "$luac" -p "$src/$f" > /dev/null 2>&1 || verdict=invalid
      else
        objs=$(objects_of "$f") # none for a header: its tests' targets are rebuilt before each runs
        [ -z "$objs" ] ||
          nice -n 19 cmake --build "$build" -j1 $(for o in $objs; do echo --target "$o"; done) > "$work/build.log" 2>&1 || verdict=invalid
      fi
      if [ -z "$verdict" ] && same_program "$f" "$ext"; then
        verdict="equivalent (same code)"
      elif [ -z "$verdict" ]; then
        while :; do
          printf '%s\n' "$tests" | python3 "$tools/covmap.py" limits "$map" | run_tests "$budget"
          case $? in 0) verdict=survived ;; 3) verdict=undecided ;; 4) verdict=invalid ;; *) verdict=killed ;; esac
          ran=$(cat "$work/ran")
          [ "$verdict" = killed ] || break
          killer=$(cat "$work/failed")
          baseline_passes "$killer" "$f" "$mdir/$number.$ext" && break
          tests=$(printf '%s\n' "$tests" | grep -vxF "$killer") # it fails unmutated: judge again without it
          [ -n "$tests" ] || { verdict="not covered" && break; }
        done
        [ "$verdict" = undecided ] && ran="$ran of $(printf '%s\n' "$tests" | grep -c .)"
      fi
      cp "$work/orig/$f.text" "$src/$f"
    fi
    if [ "$verdict" = survived ] || [ "$verdict" = "not covered" ]; then
      # An id is unique within its file only ("the first `!=` made `<`" has one id in every
      # file): a line counts for the file its second field names (file:line; the line may drift).
      reason=$(awk -v id="$id" -v f="$f:" '$1 == id && index($2, f) == 1 { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$equivalents" 2> /dev/null)
      [ -n "$reason" ] && verdict="equivalent (listed)"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$number" "$f" "$line" "$cls" "$id" "$change" "$verdict" "$ran" >> "$out"
    echo "  $f:$line $cls $id $change: $verdict$([ "$ran" != 0 ] && echo " ($ran tests)")"
  done < "$mdir/index.tsv"
  build_targets > /dev/null 2>&1 # leave the copy built as the tree is
  count() { cut -f7 "$out" | grep -c "^$1"; }
  k=$(count killed) s=$(count survived) u=$(count "not covered") i=$(count invalid) e=$(count equivalent)
  b=$(count undecided)
  judged=$((k + s + u)) score="n/a"
  [ "$judged" -gt 0 ] && score="$((100 * k / judged))%"
  tag="" && [ "$sanitize" = 1 ] && tag=" (sanitized build)"
  broken=$(cut -f2 "$mdir/judges.tsv" | tr ',' '\n' | awk 'NR == FNR { bad[$0] = 1; next } bad[$0] { n++ } END { print n + 0 }' <(broken_tests) -)
  echo "$group$tag: killed $k, survived $s, not covered $u, invalid $i, equivalent $e, undecided $b; score $k/$judged = $score; $(grep -c . "$mdir/index.tsv") drawn of $generated (seed $seed); ${broken} judgements by tests failing unmutated left out; $(($(date +%s) - start)) s" |
    tee -a "$results/report.txt"
  awk -F'\t' '$7 == "survived" || $7 == "not covered" || $7 == "undecided" { printf "  %s %s:%s %s %s %s\n", toupper($7), $2, $3, $4, $5, $6 }' "$out" |
    tee -a "$results/report.txt"
  read -r tk ts tu ti te tb <<< "$total"
  total="$((tk + k)) $((ts + s)) $((tu + u)) $((ti + i)) $((te + e)) $((tb + b))"
done
broken_tests | sed 's/^/left out, failing unmutated: /' | tee -a "$results/report.txt"
read -r tk ts tu ti te tb <<< "$total"
[ $((tk + ts + tu)) -gt 0 ] &&
  echo "all: killed $tk, survived $ts, not covered $tu, invalid $ti, equivalent $te, undecided $tb; score $tk/$((tk + ts + tu)) = $((100 * tk / (tk + ts + tu)))%" |
  tee -a "$results/report.txt"
exit 0
