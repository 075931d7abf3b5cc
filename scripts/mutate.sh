#!/usr/bin/env bash
# scripts/mutate.sh -- mutation testing: does the suite fail when the code is wrong?
#
# For each FILE (a path listed in scripts/mutate.table), universalmutator (pip install
# universalmutator) writes regular-expression mutants of it (C by its C rules; Lua, which it has
# no rules for, by its universal ones); each chosen mutant replaces the file in a private copy of
# the tree, the table's targets are rebuilt (nice -n 19, -j1: one core, low priority), and the
# table's CPU-testable ctest tests run with a fresh cache and a private scratch directory. A
# mutant that does not build (Lua: that luac5.4 -p refuses) is invalid (not counted); one some
# test fails on is killed; the rest survive. Prints each file's score and every survivor with its diff.
#
#   scripts/mutate.sh [-n N] [-s SEED] [-w WORKDIR] FILE...
#     -n N        sample N mutants per file (default 40; 0 = every mutant)
#     -s SEED     the sample's seed (default 1), so a run can be repeated
#     -w WORKDIR  where the copy, its build and the results live (default build-mutate)
#     -f LIST     run the mutants named in LIST (one path a line; such as an earlier run's
#                 results/<file>.survived) instead of a fresh sample: did new assertions kill them?
#     -a          build the copy with AddressSanitizer, LeakSanitizer and UBSan (WORKDIR/build-san,
#                 as scripts/sanitize.sh does): a mutant that only leaks memory or reads past an
#                 allocation is killed too (slower: the first build takes minutes)
# Results: WORKDIR/results/<file>.{killed,survived,invalid,same} and WORKDIR/results/report.txt.
# A mutant that changes only white space (or a Lua one compiled to the same bytecode) is the same
# program: listed in .same, not run.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
sample=40 seed=1 work="$here/build-mutate" list="" sanitize=0
usage() { sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while getopts "n:s:w:f:ah" opt; do
  case $opt in
    n) sample=$OPTARG ;;
    s) seed=$OPTARG ;;
    w) work=$OPTARG ;;
    f) list=$(cd "$(dirname "$OPTARG")" && pwd)/$(basename "$OPTARG") ;;
    a) sanitize=1 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
mkdir -p "$work" && work=$(cd "$work" && pwd)
command -v mutate > /dev/null || { echo "mutate.sh: universalmutator is missing: pip install universalmutator" >&2; exit 2; }
table="$here/scripts/mutate.table"
luac=$(command -v luac5.4 || command -v luac) # Lua files: the syntax check, the bytecode compared
for f in "$@"; do
  grep -q "^$f " "$table" || { echo "mutate.sh: $f has no line in $table: add its targets and tests" >&2; exit 2; }
done

# A private copy of the tree (tracked and untracked files, no build trees), so the worktree is never
# mutated and can be edited while this runs.
src="$work/src" build="$work/build" results="$work/results" config=(-DCMAKE_BUILD_TYPE=Release)
if [ "$sanitize" = 1 ]; then
  build="$work/build-san" config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUJIT_SANITIZE=address,undefined)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
  export LSAN_OPTIONS=suppressions=$here/scripts/sanitize.supp:print_suppressions=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
mkdir -p "$src" "$results"
# Only files that differ are copied (with a fresh mtime), so ninja rebuilds exactly those.
(cd "$here" && git ls-files --cached --others --exclude-standard -z) |
  while IFS= read -r -d '' f; do
    [ -f "$here/$f" ] && ! cmp -s "$here/$f" "$src/$f" &&
      mkdir -p "$src/$(dirname "$f")" && cp "$here/$f" "$src/$f"
  done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja "${config[@]}" > "$work/configure.log" 2>&1 ||
    { echo "mutate.sh: configure failed, see $work/configure.log" >&2; exit 1; }
fi

fields() { grep "^$1 " "$table" | awk '{print $2, $3, $4, $5}'; }

# Runs the table's tests for FILE against what is built; 0 when they all pass.
run_tests() {
  local regex=$1
  rm -rf "$build/test-cache" "$build/test-tmp" # a fresh cache and scratch per mutant
  mkdir -p "$build/test-tmp"
  # The tests' own TIMEOUT (600 s) outranks ctest --timeout, so a mutant that makes a test hang is
  # cut off here: ctest runs in its own process group, killed whole after $limit s (60, or the
  # table's limit:SECONDS for tests that compile many kernels on the CPU device): a killed mutant.
  setsid nice -n 19 ctest --test-dir "$build" -R "$regex" -j1 > "$work/ctest.log" 2>&1 &
  local pid=$! rc
  (sleep "$limit" && kill -KILL -- "-$pid" 2> /dev/null) &
  local watch=$!
  wait "$pid"
  rc=$?
  kill "$watch" 2> /dev/null
  wait "$watch" 2> /dev/null
  return $rc
}

build_targets() {
  local targets=$1 t args=()
  for t in ${targets//,/ }; do args+=(--target "$t"); done
  nice -n 19 cmake --build "$build" -j1 "${args[@]}" > "$work/build.log" 2>&1
}

total_killed=0 total_valid=0
echo "# scripts/mutate.sh $* ($(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$here" rev-parse --short HEAD))" > "$results/report.txt"
for f in "$@"; do
  read -r targets regex opt1 opt2 <<< "$(fields "$f")"
  upto="" limit=60
  for o in $opt1 $opt2; do
    case $o in upto:*) upto=$o ;; limit:*) limit=${o#limit:} ;; esac
  done
  ext=${f##*.}
  name=$(basename "$f" ".$ext") dir=$(dirname "$f") lang=()
  case $ext in c | h) lang=(c) ;; esac # the CPU device's headers (kernels_src) mutate as C
  orig="$work/orig-$name.$ext" mdir="$work/mutants/$name"
  cp "$src/$f" "$orig"
  start=$(date +%s)
  # The baseline must build and pass, or every mutant would look killed.
  if ! build_targets "$targets" || ! run_tests "$regex"; then
    echo "mutate.sh: $f: the unmutated tree fails its tests; see $work/build.log, $work/ctest.log" >&2
    exit 1
  fi
  if [ -z "$list" ]; then
    rm -rf "$mdir" && mkdir -p "$mdir"
    # A 4th column "upto:WORD" mutates only the lines above the first line holding WORD (the part
    # of the file in scope, such as launch.c's argument checks).
    lines=()
    if [ -n "$upto" ]; then
      last=$(grep -n -F -m1 "${upto#upto:}" "$src/$f" | cut -d: -f1)
      seq 1 "$((${last:-1} - 1))" > "$work/lines-$name.txt"
      lines=(--lines "$work/lines-$name.txt")
    fi
    (cd "$mdir" && mutate "$src/$f" "${lang[@]}" --noCheck "${lines[@]}" --mutantDir "$mdir" > "$work/mutate-$name.log" 2>&1)
  fi
  all=$(find "$mdir" -name "$name.mutant.*.$ext" 2> /dev/null | sort -V)
  generated=$(printf '%s\n' "$all" | grep -c .)
  if [ -n "$list" ]; then
    chosen=$(grep "/$name\.mutant\.[0-9]*\.$ext$" "$list")
  elif [ "$sample" -gt 0 ]; then
    chosen=$(printf '%s\n' "$all" | shuf -n "$sample" --random-source=<(yes "$seed"))
  else
    chosen=$all
  fi
  : > "$results/$name.killed"; : > "$results/$name.survived"; : > "$results/$name.invalid"
  : > "$results/$name.same"
  for m in $chosen; do
    # Changes only in white space (universalmutator's regexes make some) are the same program.
    # So is a Lua mutant compiled to the same bytecode (a change in a comment, say).
    if [ "$(tr -d '[:space:]' < "$m")" = "$(tr -d '[:space:]' < "$orig")" ] ||
      { [ "$ext" = lua ] && cmp -s <("$luac" -s -o - "$m" 2> /dev/null) <("$luac" -s -o - "$orig"); }; then
      echo "$m" >> "$results/$name.same"
      continue
    fi
    cp "$m" "$src/$f"
    if [ "$ext" = lua ] && ! "$luac" -p "$m" > /dev/null 2>&1; then
      echo "$m" >> "$results/$name.invalid"
    elif ! build_targets "$targets"; then
      echo "$m" >> "$results/$name.invalid"
    elif run_tests "$regex"; then
      echo "$m" >> "$results/$name.survived"
      echo "SURVIVED $(basename "$m")"
    else
      echo "$m" >> "$results/$name.killed"
    fi
    cp "$orig" "$src/$f"
  done
  build_targets "$targets" > /dev/null 2>&1 # leave the copy built as the tree is
  k=$(wc -l < "$results/$name.killed") s=$(wc -l < "$results/$name.survived")
  i=$(wc -l < "$results/$name.invalid") w=$(wc -l < "$results/$name.same")
  valid=$((k + s)) secs=$(($(date +%s) - start))
  total_killed=$((total_killed + k)) total_valid=$((total_valid + valid))
  score="n/a"
  [ "$valid" -gt 0 ] && score="$((100 * k / valid))%"
  tag="" && [ "$sanitize" = 1 ] && tag=" (sanitized build)"
  line="$f$tag: $k of $valid valid mutants killed ($score); $i invalid, $w white space only; $(printf '%s\n' "$chosen" | grep -c .) run of $generated generated (seed $seed); ${secs}s"
  echo "$line" | tee -a "$results/report.txt"
  while read -r m; do
    [ -n "$m" ] || continue
    echo "--- survivor $(basename "$m")"
    diff -u "$orig" "$m" | sed -n '3,$p' | grep '^[-+@]' | sed "s|^|  |"
  done < "$results/$name.survived" | tee -a "$results/report.txt"
done
[ "$total_valid" -gt 0 ] &&
  echo "all: $total_killed of $total_valid valid mutants killed ($((100 * total_killed / total_valid))%)" |
  tee -a "$results/report.txt"
exit 0
