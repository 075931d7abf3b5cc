#!/usr/bin/env bash
# scripts/test_twice.sh -- runs the whole suite twice at once, from two build trees of this source
# tree, and checks that both pass and that /tmp is left exactly as it was (issue 17: every test
# works in its own scratch directory under its build tree and removes it).
#
#   scripts/test_twice.sh BUILD_A BUILD_B      (both configured and built already)
#
# As root with unshare(1), both runs see a private, empty /tmp (a tmpfs in their own mount
# namespace), so what they leave there is exactly what is left, whatever else runs on the
# machine. Otherwise /tmp's listing before and after is compared: other programs writing to /tmp
# meanwhile can then show up too, and the script says so.
set -u
[ $# -eq 2 ] || { sed -n '6p' "$0" | sed 's/^# *//'; exit 2; }
a=$(cd "$1" && pwd) b=$(cd "$2" && pwd) || exit 2
[ "$a" != "$b" ] || { echo "test_twice.sh: give two different build trees" >&2; exit 2; }
for t in "$a" "$b"; do
  [ -f "$t/CTestTestfile.cmake" ] || { echo "test_twice.sh: $t is not a configured build tree" >&2; exit 2; }
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

# Both suites at once (-j1 each: two processes share the machine's cores); prints what /tmp holds
# afterwards that it did not hold before, one name a line, after the marker line.
both() {
  local before after
  before=$(ls -A /tmp | sort)
  ctest --test-dir "$a" -j1 --timeout 600 > "$a/test_twice.log" 2>&1 &
  local pa=$!
  ctest --test-dir "$b" -j1 --timeout 600 > "$b/test_twice.log" 2>&1 &
  local pb=$!
  wait "$pa"; local ra=$?
  wait "$pb"; local rb=$?
  after=$(ls -A /tmp | sort)
  echo "rc $ra $rb"
  echo "--- new in /tmp"
  comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep .
  return 0
}

private=0
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null &&
  unshare -m --propagation private true 2> /dev/null; then
  private=1
  export -f both
  export a b
  out=$(unshare -m --propagation private bash -c 'mount -t tmpfs cujit-test-twice /tmp && both')
else
  out=$(both)
fi
read -r _ ra rb <<< "$(head -1 <<< "$out")"
left=$(sed '1,/^--- new in \/tmp$/d' <<< "$out")
status=0
for side in "$a:$ra" "$b:$rb"; do
  t=${side%:*} rc=${side##*:}
  summary=$(grep -E 'tests passed|tests failed' "$t/test_twice.log" | tail -1)
  if [ "$rc" = 0 ]; then
    echo "ok: $t: $summary"
  else
    echo "FAIL: $t (ctest exit $rc): $summary; see $t/test_twice.log"
    grep -E '^\s+[0-9]+ - ' "$t/test_twice.log" | sed 's/^/  /'
    status=1
  fi
  if [ -n "$(ls -A "$t/test-tmp" 2> /dev/null)" ]; then
    echo "FAIL: $t/test-tmp is not empty afterwards:"; ls -A "$t/test-tmp" | sed 's/^/  /'
    status=1
  fi
done
if [ -z "$left" ]; then
  echo "ok: /tmp is as it was$([ $private = 1 ] && echo ' (a private /tmp: exact)')"
else
  echo "FAIL: new in /tmp afterwards$([ $private = 0 ] && echo ' (a shared /tmp: other programs may have written some of these)'):"
  sed 's/^/  /' <<< "$left"
  status=1
fi
exit $status
