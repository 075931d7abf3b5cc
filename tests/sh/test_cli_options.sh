# test_cli_options.sh -- the edges of the `cujit` command's Lua options and of the REPL's commands
# on a pipe: each option missing its argument, joined to another letter, repeated, after `--` or
# `-`, in every order that changes what runs; the exact message and exit status of each refusal.
# Where stock lua 5.4 is installed (lua5.4), cujit's exit status and stdout are compared with its
# own for the same command line: the options are documented as lua's. The REPL's commands: short
# forms, blanks around them, :time without an argument, :save with no name, to a directory, to
# /dev/stdout, and what :save writes for an expression that printed no value; an argument of 1024
# bytes or more refused whole, 1023 taken. Stdin is read as the
# script only with no script, -e or -v (`-- -` is the file called -); LUA_INIT_5_4 errors are named so.
# Run by ctest as: bash test_cli_options.sh /path/to/cujit. Needs no GPU and no compiler.
set -u
source "$(dirname "$0")/lib.sh"

unset LUA_INIT LUA_INIT_5_4 LUA_PATH LUA_CPATH
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""
cd "$TMP" || exit 1
echo 'print("script", ...)' >s.lua
echo 'return {v = 42}' >m.lua
export LUA_PATH="$TMP/?.lua;;"

# --- refusals: the exact message, the usage after it, status 1, nothing on stdout -------------------
# refused NAME MESSAGE ARGS...: the first line of stderr is MESSAGE, the usage follows.
refused() {
  local name=$1 msg=$2
  shift 2
  run "$CUJIT" "$@" </dev/null
  check_rc "$name" 1
  same "$name: the message" "$(head -1 <<<"$err")" "$msg"
  same "$name: the usage follows it" "$(sed -n 2p <<<"$err")" \
    "usage: cujit [options] [script [args]]   run Lua 5.4 with cujit, as stock lua does"
  same "$name: nothing on stdout, nothing ran" "$out" ""
}
refused "-e at the end" "cujit: '-e' needs an argument" -e
refused "-e before another option" "cujit: '-e' needs an argument" -e -v
refused "-l at the end" "cujit: '-l' needs an argument" -l
refused "-l before -e" "cujit: '-l' needs an argument" -l -e 'print(1)'
refused "-e after a good -e" "cujit: '-e' needs an argument" -e 'print("ran")' -e
for bad in -ix -Ex -Wx -vx --x --- -x -Z -h; do
  refused "$bad" "cujit: unrecognized option '$bad'" "$bad"
done
refused "a bad option after good ones" "cujit: unrecognized option '-q'" -v -e 'print(1)' -q s.lua
refused "a bad option before the script" "cujit: unrecognized option '--verbose'" --verbose s.lua

# --- what runs, and in which order ------------------------------------------------------------------
run "$CUJIT" -e 'x = 1' -l m -e 'print(x, m.v)'
same "-e, -l and -e run in the order given" "$out" "1	42"
run "$CUJIT" -lm -e 'print(m.v)'
same "-lmod joined" "$out" "42"
run "$CUJIT" -l g=m -l h=m -e 'print(g.v, h.v, g == h, m)'
same "-l g=mod twice: two globals, one module" "$out" "42	42	true	nil"
run "$CUJIT" -e 'warn("before")' -W -e 'warn("after")'
same "-W takes effect where it stands: warnings before it are off" "$err" "Lua warning: after"
run "$CUJIT" -W -W -e 'warn("twice")'
same "-W twice" "$err" "Lua warning: twice"
run "$CUJIT" -v -v
same "-v twice prints the version once" "$(grep -c '^cujit [0-9.]* -- Lua' <<<"$out")" 1
run "$CUJIT" -e 'print("e")' -v
same "-v after -e: the version first, then -e" "$out" "$("$CUJIT" -v)
e"
run "$CUJIT" -- s.lua -e x
same "-- then a script: the rest are its arguments" "$out" "script	-e	x"
run "$CUJIT" -e 'print("e")' -- s.lua a
same "-e then --: both run" "$out" "e
script	a"
run bash -c "echo 'print(\"piped\")' | '$CUJIT' --"
same "-- alone: stdin runs, as with no argument" "$out" "piped"
run bash -c "echo 'print(\"stdin\", ...)' | '$CUJIT' - -e x"
same "- then arguments: stdin runs with them, -e is one" "$out" "stdin	-e	x"
run "$CUJIT" s.lua -e 'print("no")' -v
same "options after the script are its arguments" "$out" "script	-e	print(\"no\")	-v"
run "$CUJIT" -e 'print(arg[-1] == "-e", arg[-2], #arg)' s.lua one
same "arg holds the options at negative indices" "$(head -1 <<<"$out")" "false	-e	1"
run env LUA_INIT_5_4='print("5.4")' LUA_INIT='print("plain")' "$CUJIT" -e ''
same "LUA_INIT_5_4 wins over LUA_INIT" "$out" "5.4"
run env LUA_INIT='error("init fails")' "$CUJIT" -e 'print("not reached")'
check_rc "an error in LUA_INIT" 1
check "an error in LUA_INIT is reported" "$err" '^cujit: LUA_INIT:1: init fails$'
same "an error in LUA_INIT: nothing else runs" "$out" ""
run env LUA_INIT='error("ignored")' "$CUJIT" -E -e 'print("ran")'
same "-E: LUA_INIT is not run" "$out" "ran"
run "$CUJIT" -e 'error("first")' -e 'print("second")'
check_rc "an error in -e" 1
same "an error in -e stops the next -e" "$out" ""
check "an error in -e names the command line" "$err" '^cujit: \(command line\):1: first$'
run "$CUJIT" -e 'error("stop")' -i </dev/null
check_rc "an error before -i: no REPL" 1
printf 'print("in the repl", x)\n' >repl_in.txt
run "$CUJIT" -e 'x = 7' -i <repl_in.txt
check_rc "-e then -i on a pipe" 0
same "-i reads the pipe after -e, with no banner" "$out" "in the repl	7"

# --- against stock lua 5.4: the same status and stdout ------------------------------------------------
if command -v lua5.4 >/dev/null; then
  while IFS= read -r line; do
    eval "set -- $line"
    "$CUJIT" "$@" </dev/null >"$TMP/c.out" 2>/dev/null
    crc=$?
    lua5.4 "$@" </dev/null >"$TMP/l.out" 2>/dev/null
    lrc=$?
    same "as lua: exit status of: $line" "$crc" "$lrc"
    if cmp -s "$TMP/c.out" "$TMP/l.out"; then ok "as lua: stdout of: $line"; else
      fail "as lua: stdout of: $line: cujit [$(cat "$TMP/c.out")] lua [$(cat "$TMP/l.out")]"
    fi
  done <<'EOF'
-e
-e -v
-l
-l -e x
-ix
--x
-x
-- -e
-e 'print(1)' -- s.lua a
-e 'print(1)' -W -e 'warn("a")'
- s.lua
s.lua -e
-lstring -e 'print(string ~= nil)'
-e 'error("x")'
-e 'os.exit(5)'
-e 'print(select("#", ...))' s.lua 1 2
-e 'print(#arg, arg[1], arg[2])' -- s.lua 1 2
-lm -lm=m -e 'print(m.v)'
-E -e 'print(os.getenv("LUA_PATH") ~= nil)'
no_such_script.lua
-e 'print(1)' no_such_script.lua
EOF
else
  echo "note: no lua5.4 here; the comparison with stock lua is not made"
fi

# --- stdin: read as a script only with no script, no -e and no -v -----------------------------------
echo 'print("the file called -")' >./-
run bash -c "echo 'print(\"stdin\")' | '$CUJIT' -- -"
same "-- then -: the file called '-', not stdin" "$out" "the file called -"
run bash -c "echo 'print(\"stdin\")' | '$CUJIT' -"
same "- alone: stdin, not the file called '-'" "$out" "stdin"
rm ./-
run bash -c "echo 'print(\"stdin ran\")' | '$CUJIT' -v"
same "-v alone does not read stdin" "$out" "$("$CUJIT" -v)"
run bash -c "echo 'print(\"stdin ran\")' | '$CUJIT' -e 'print(1)'"
same "-e alone does not read stdin" "$out" "1"
run bash -c "echo 'print(\"stdin ran\")' | '$CUJIT' s.lua"
same "a script does not read stdin" "$out" "script"
run bash -c "printf 'print(\"before\")\nerror(\"in stdin\")\nprint(\"after\")\n' | '$CUJIT'"
check_rc "an error in a script read from stdin" 1
same "an error in stdin: what ran before it" "$out" "before"
same "an error in stdin: named as stdin's line" "$(head -1 <<<"$err")" "cujit: stdin:2: in stdin"
run bash -c "echo 'x = = 1' | '$CUJIT'"
check_rc "a syntax error in stdin" 1
check "a syntax error in stdin: the message" "$err" "^cujit: stdin:1: unexpected symbol near '='$"
run env LUA_INIT_5_4='error("five four")' LUA_INIT='print("not run")' "$CUJIT" -e 'print("not run")'
check_rc "an error in LUA_INIT_5_4" 1
same "an error in LUA_INIT_5_4 is named so" "$(head -1 <<<"$err")" "cujit: LUA_INIT_5_4:1: five four"
same "an error in LUA_INIT_5_4: nothing else runs" "$out" ""
echo 'print("init file", ...)' >init.lua
run env LUA_INIT_5_4="@init.lua" "$CUJIT" -e 'print("main")'
same "LUA_INIT_5_4=@file runs the file first" "$out" "init file
main"
run env LUA_INIT="@no_such_init.lua" "$CUJIT" -e 'print("main")'
check_rc "LUA_INIT=@ a missing file" 1
same "LUA_INIT=@ a missing file: named" "$(head -1 <<<"$err")" "cujit: cannot open no_such_init.lua: No such file or directory"

# --- a subcommand's name is a script's after an option, with '/' or '.lua' ---------------------------
for args in "-- devices" "-v devices" "-e x=1 cache" "-E compile"; do
  # shellcheck disable=SC2086
  run "$CUJIT" $args </dev/null
  check_rc "cujit $args: a script" 1
  check "cujit $args: the script is looked for" "$err" "^cujit: cannot open ${args##* }: No such file or directory$"
done
for name in compile.lua devices/ ./help; do
  run "$CUJIT" "$name" </dev/null
  same "cujit $name: a script" "$err" "cujit: cannot open $name: No such file or directory"
done
run "$CUJIT" --versio
check_rc "--versio: a Lua option, unknown" 1
same "--versio: the message" "$(head -1 <<<"$err")" "cujit: unrecognized option '--versio'"
run "$CUJIT" help
help_out=$out
run "$CUJIT" --help
same "--help is help" "$out" "$help_out"
check "help: the Lua options" "$out" '^  -W        turn warnings on$'
check "help: the compile options" "$out" '^  -o OUT            output file'

# --- REPL commands on a pipe ------------------------------------------------------------------------
repl ':history'
same ":history before any statement" "$out" "no statements yet (only those that ran without error are kept)"
repl ':h'
check ":h is :help" "$out" '^  :help NAME   the reference of a cujit function'
repl '   :help   '
check ":help with blanks around it" "$out" '^  :quit        leave'
repl ':time'
same ":time without an argument says the state" "$(head -1 <<<"$out")" "timing is off"
repl ':time on
:time'
same ":time after :time on" "$(grep -c '^timing is on$' <<<"$out")" 2
repl ':time on extra'
same ":time with two words" "$err" "cujit: :time takes 'on' or 'off', not 'on extra'"
repl ':time  off  '
same ":time with blanks around its argument" "$out" "timing is off"
repl ':save'
same ":save with no file name" "$err" "cujit: :save needs a file name: :save session.lua"
repl ':save    '
same ":save with only blanks" "$err" "cujit: :save needs a file name: :save session.lua"
mkdir -p adir
repl 'x = 1
:save adir'
check ":save to a directory is refused" "$err" "^cujit: :save: 'adir' is a directory"
[ -d adir ] && [ -z "$(ls -A adir)" ] && ok ":save left the directory alone" || fail "adir: $(ls -A adir)"
# A command's argument is at most 1023 bytes: a longer one is refused whole, never cut short (a
# file name cut short would name another file). Relative paths of exactly 1023 and 1024 bytes.
d=$(printf 'd%.0s' $(seq 200))
mkdir -p "$d/$d/$d/$d"
long="$d/$d/$d/$d/$(printf 's%.0s' $(seq 214))" # 4 x 201 + 214 = 1018 bytes
repl "x = 1
:save $long.lua"
same ":save to a path of 1022 bytes" "$err" ""
[ -f "$long.lua" ] && ok ":save wrote the file" || fail ":save wrote no $long.lua"
repl "x = 1
:save ${long}0.lua"
same ":save to a path of 1023 bytes" "$err" ""
[ -f "${long}0.lua" ] && ok ":save wrote the file" || fail ":save wrote no ${long}0.lua"
repl "x = 1
:save ${long}00.lua  "
same ":save to a path of 1024 bytes" "$err" \
  "cujit: :save: its argument is longer than 1023 bytes; nothing was done"
[ -z "$(find "$d" -name "${long##*/}0*" ! -name "${long##*/}0.lua")" ] && ok "and wrote nothing" ||
  fail ":save wrote $(find "$d" -name "${long##*/}*")"
repl ':time on'"$(printf ' %.0s' $(seq 2000))"
check ":time with 2000 blanks after its argument" "$out" '^timing is on$'
repl ':restart'
same ":restart on a pipe" "$err" \
  "cujit: :restart needs a terminal: input read from a pipe could not follow into the new process"
repl ':nonsense arg
:
:Help
print("still here")'
same "unknown commands: one line each, the session goes on" "$err" "cujit: unknown command ':nonsense'; :help lists the commands
cujit: unknown command ':'; :help lists the commands
cujit: unknown command ':Help'; :help lists the commands"
same "unknown commands: the next statement runs" "$out" "still here"
repl 'print("a")
:q
print("b")'
check_rc ":q" 0
same ":q leaves before the next statement" "$out" "a"
repl ':quit now
print("b")'
check_rc ":quit with an argument" 0
same ":quit with an argument leaves too" "$out" ""
repl '::top:: x = 2
print(x)'
same "a Lua label is not a command" "$out" "2"

# :save writes what ran: a value the REPL printed becomes print(...), a call that printed none
# stays the call (print(print(1)) would add an empty line), and the script prints what the
# session printed.
repl 'print(1)
=print(2)
y = 3
y
=y, nil
function f() end
f()
error("not kept")
:save s.out.lua
:save /dev/stdout'
check ":save says how many" "$out" '^saved 7 statements to s\.out\.lua$'
want_body='print(1)
print(2)
y = 3
print(y)
print(y, nil)
function f() end
f()'
same ":save's statements" "$(grep -v '^--' s.out.lua)" "$want_body"
check ":save to /dev/stdout writes the script in place" "$out" '^print\(y, nil\)$'
check ":save to /dev/stdout says so" "$out" '^saved 7 statements to /dev/stdout$'
session_out=$(sed -n '1,/^saved/p' <<<"$out" | grep -v '^saved')
run "$CUJIT" s.out.lua
same "the saved script prints what the session printed" "$out" "$session_out"
repl 'z = 1
:save one.lua'
same ":save of one statement" "$out" "saved 1 statement to one.lua"

finish
