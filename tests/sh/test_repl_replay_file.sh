#!/usr/bin/env bash
# test_repl_replay_file.sh -- the file :restart hands the new process (CUJIT_REPL_REPLAY: a magic
# line, then each statement as its length on a line and its text), read by a REPL on a pipe. A
# statement that fails when replayed is named by number, its error shown, and dropped, the others
# replayed in order ("replayed N statements ... (some failed: see above)"); a length that runs past
# the end of the file, stops short of its record's newline, or is not plain digits ends the replay
# there ("the replay file is damaged"), what came before it replayed; the file is removed once read, whole or damaged. (test_repl_restart.sh
# makes such files through :restart on a terminal; test_output_files.sh, one not made by it.)
# Run by ctest as: bash test_repl_replay_file.sh /path/to/cujit. No GPU, no NVRTC.
set -u
source "$(dirname "$0")/lib.sh"
export CUJIT_HISTORY="" CUJIT_CACHE_DIR="$TMP/cache"

# replay NAME CONTENT INPUT: writes CONTENT to $TMP/cujit-replay-NAME, runs `cujit -i` with it and
# INPUT on stdin; sets out, err, rc.
replay() {
  printf '%s' "$2" >"$TMP/cujit-replay-$1"
  out=$(printf '%s\n' "$3" | CUJIT_REPL_REPLAY="$TMP/cujit-replay-$1" "$CUJIT" -i 2>"$TMP/stderr")
  rc=$?
  err=$(cat "$TMP/stderr")
}

# A record: the text's length in bytes, a newline, the text, a newline.
record() { printf '%d\n%s\n' "${#1}" "$1"; }

# --- a statement failing in the replay: named, shown and dropped; the rest replayed -----------------
content="cujit-replay 1
$(record 'x = 40')
$(record 'error("the file it read is gone")')
$(record 'y = x + 2')
$(record 'function twice(v) return 2 * v end')
"
replay failing "$content" 'print(x, y, twice(y))'
check_rc "a replay with a failing statement" 0
same "the statements before and after it ran, in order" "$out" "40	42	84"
check "the failing one is named by its number" "$err" \
  '^cujit: replaying statement 2 failed; it is dropped:$'
check "with its error" "$err" 'the file it read is gone'
check "the count says some failed" "$err" \
  '^cujit: replayed 3 statements in [0-9.]+ ms \(some failed: see above\)$'
[ ! -e "$TMP/cujit-replay-failing" ] && ok "the file is removed once read" ||
  fail "the replay file is still there"

# --- all replayed: the singular, no note ---------------------------------------------------------
replay one "cujit-replay 1
$(record 'only = "one"')
" 'print(only)'
same "one statement replayed" "$out" "one"
check "its count in the singular, no note" "$err" '^cujit: replayed 1 statement in [0-9.]+ ms$'

# --- damaged: a length past the end, a length that is not a number ------------------------------
replay past "cujit-replay 1
$(record 'a = 1')
999
b = 2
" 'print(a, b)'
same "a length past the end: what came before it replayed" "$out" "1	nil"
check "a length past the end: damaged" "$err" \
  '^cujit: the replay file is damaged; the rest of it is not replayed$'
check "a length past the end: one replayed" "$err" '^cujit: replayed 1 statement in '
[ ! -e "$TMP/cujit-replay-past" ] && ok "a damaged file is removed too" ||
  fail "the damaged replay file is still there"
replay words "cujit-replay 1
five
a = 1
$(record 'b = 2')
" 'print(a, b)'
same "a length that is not a number: nothing after it" "$out" "nil	nil"
check "a length that is not a number: damaged" "$err" \
  '^cujit: the replay file is damaged; the rest of it is not replayed$'
check "a length that is not a number: none replayed" "$err" '^cujit: replayed 0 statements in '
# a length one short: the record's text does not end where its newline is
replay short "cujit-replay 1
5
a = 12
$(record 'b = 2')
" 'print(a, b)'
check "a length one short: damaged" "$err" \
  '^cujit: the replay file is damaged; the rest of it is not replayed$'
check "a length one short: the record before it replayed" "$err" '^cujit: replayed 0 statements in '
same "a length one short: nothing read from the middle of a record" "$out" "nil	nil"
for bad in " 5" "+5" "5 "; do
  replay spaced "cujit-replay 1
$bad
a = 1
" 'print(a)'
  check "a length written '$bad': damaged" "$err" \
    '^cujit: the replay file is damaged; the rest of it is not replayed$'
  same "a length written '$bad': nothing replayed" "$out" "nil"
done

finish
