# scripts/mutate/lib.sh -- what mutate.sh and coverage.sh share: the private copy of the tree.
# Sourced, not run. Both work on WORKDIR/src, a copy of the worktree's tracked and untracked
# files, so the worktree itself is never mutated nor built from while they run.

# Brings WORKDIR/src ($2) up to date with the tree at $1, copying only the files that differ (with
# a fresh mtime), so that ninja rebuilds exactly those.
mutate_sync_copy() {
  local tree=$1 copy=$2 f
  mkdir -p "$copy"
  (cd "$tree" && git ls-files --cached --others --exclude-standard -z) |
    while IFS= read -r -d '' f; do
      [ -f "$tree/$f" ] && ! cmp -s "$tree/$f" "$copy/$f" &&
        mkdir -p "$copy/$(dirname "$f")" && cp "$tree/$f" "$copy/$f"
    done
  return 0
}

# Kills (by id) every process whose environment holds MUTATE_RUN=$1.
mutate_kill_token() {
  local e
  for e in /proc/[0-9]*/environ; do
    grep -qzx "MUTATE_RUN=$1" "$e" 2> /dev/null && kill -KILL "$(basename "$(dirname "$e")")" 2> /dev/null
  done
  return 0
}

# Runs COMMAND... (nice -n 19, output to LOG) and stops it after LIMIT seconds. The tests' own
# TIMEOUT outranks ctest --timeout, and Criterion's workers start process groups of their own, so
# killing ctest's group is not enough: the command's processes carry a token in their environment,
# and every process holding it is killed at the limit, and any left over once it returns.
# Answers the command's status (137 when it was stopped).
mutate_run_limited() {
  local limit=$1 log=$2 token pid watch rc
  shift 2
  token="$$-$(date +%s%N)"
  MUTATE_RUN=$token setsid nice -n 19 "$@" < /dev/null > "$log" 2>&1 &
  pid=$!
  (sleep "$limit" && mutate_kill_token "$token") &
  watch=$!
  wait "$pid"
  rc=$?
  kill "$watch" 2> /dev/null
  wait "$watch" 2> /dev/null
  mutate_kill_token "$token"
  return $rc
}
