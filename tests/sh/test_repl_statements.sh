# test_repl_statements.sh -- what the REPL does with each kind of line on a pipe (`cujit -i`),
# beyond test_repl.sh and test_cli_options.sh: a last line with no newline still runs; a line
# starting with ':' inside an unfinished statement is Lua, never a command (so ':quit' there does
# not quit); blank lines are no statements (nothing printed, nothing kept for :history); the
# exit status of os.exit in the REPL; errors of every kind of value, each reported and the
# session going on; which statements :history marks [writes files] (the rule :restart asks by);
# :help's spellings of one name giving one text; :time's refusals; _PROMPT printing nothing on a
# pipe; and the fault note, which on a pipe says the fault without offering :restart (which needs
# a terminal), for the engine's two wordings and never for other errors.
# Run by ctest as: bash test_repl_statements.sh /path/to/cujit. Needs no GPU and no compiler.
set -u
source "$(dirname "$0")/lib.sh"
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""
cd "$TMP" || exit 1

# --- lines -------------------------------------------------------------------------------------------
run bash -c "printf 'x = 6\nprint(x * 7)' | '$CUJIT' -i"
same "a last line without a newline runs" "$out" "42"
repl 'print(("abc")
:upper())'
same "a continuation line starting with ':' is Lua, not a command" "$out" "ABC"
same "nothing on stderr" "$err" ""
repl 'function f()
:quit
end
print("still here")'
check_rc "':quit' inside an unfinished statement" 0
same "':quit' inside an unfinished statement does not quit" "$out" "still here"
same "it is Lua's syntax error, and 'end' after it another" "$err" "cujit: stdin:2: unexpected symbol near ':'
cujit: stdin:1: <eof> expected near 'end'"
repl 'print("a")


   	
print("b")
:history'
same "blank lines: nothing printed, no error" "$out" 'a
b
   1  print("a")
   2  print("b")'
same "blank lines: nothing on stderr" "$err" ""

# --- os.exit ----------------------------------------------------------------------------------------
for pair in "os.exit(3):3" "os.exit(0):0" "os.exit(true):0" "os.exit(false):1" "os.exit():0"; do
  repl "${pair%:*}
print('not reached')"
  check_rc "${pair%:*} in the REPL" "${pair##*:}"
  same "${pair%:*}: nothing after it runs" "$out" ""
done

# --- errors of every kind: said, and the session goes on ----------------------------------------------
repl 'error()
error(42)
error({})
error(setmetatable({}, {__tostring = function() return "my error object" end}))
error("plain", 0)
print("alive")'
same "after five errors the session goes on" "$out" "alive"
same "each error's first line" "$(grep '^cujit: ' <<<"$err")" "cujit: (error object is a nil value)
cujit: 42
cujit: (error object is a table value)
cujit: my error object
cujit: plain"
same "a traceback after each string error" "$(grep -c '^stack traceback:$' <<<"$err")" 4

# --- :history's [writes files] -------------------------------------------------------------------------
# Each statement is inside `if false then ... end`: the rule reads the text, nothing is run.
writers=(
  'os.remove("f")' 'os.rename("a", "b")' 'os.execute("true")' 'k:save("f")'
  'io.output("f")' 'io.open("f", "w")' "io.open('f', 'a')" 'io.open("f", "r+")' 'io.open("f", "wb")'
  'io.open("a","w")' 'io.open(name,	"ab")'
)
readers=(
  'io.open("f")' 'io.open("f", "r")' 'io.open("f", "rb")' 'io.output()' 'y = "w"' 'os.getenv("w")'
  'io.open("weights.bin", "rb")' 'io.open("a+b.txt")' "io.open('raw')" 'io.open("w", "r")'
)
text="" want=""
i=0
for s in "${writers[@]}" "${readers[@]}"; do
  i=$((i + 1))
  text+="if false then $s end
"
  mark=""
  [ "$i" -le "${#writers[@]}" ] && mark="   [writes files]"
  want+=$(printf '%4d  if false then %s end%s' "$i" "$s" "$mark")$'\n'
done
repl "$text:history"
same ":history marks the statements that write files, and only those" "$out" "${want%$'\n'}"

# --- :save's header: when, what, and how to run it ---------------------------------------------------------
repl 'x = 1
:save saved.lua'
check ":save's first line says when" "$(sed -n 1p saved.lua)" \
  '^-- A cujit REPL session, saved by :save on [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}: the statements that ran without$'
same ":save's header says how to run it" "$(sed -n 2,3p saved.lua)" "-- error, in order (values the REPL printed are print(...) calls). Run it with
--   cujit saved.lua"
same ":save's statements after it" "$(sed -n '4,$p' saved.lua)" "x = 1"

# An expression that ends in a comment is still one the saved script runs and prints.
repl '1 + 1 -- two
"a--b" .. "c"
:save comment.lua'
same "values of expressions with '--'" "$out" "2
a--bc
saved 2 statements to comment.lua"
run "$CUJIT" comment.lua
same "the saved script of expressions that end in a comment runs" "$out" "2
a--bc"
same "and says nothing on stderr" "$err" ""

# --- :help's spellings of one name ------------------------------------------------------------------------
repl ':help cuda.jit'
jit_help=$out
check ":help cuda.jit gives its reference" "$jit_help" '^cuda\.jit\(signature, body \[, options\]\) -> kernel$'
for spelling in ':help cuda.jit()' ':help jit' ':h jit' '  :help   cuda.jit  '; do
  repl "$spelling"
  same "'$spelling' is ':help cuda.jit'" "$out" "$jit_help"
done
repl ':help k:'
check ":help with no member after ':' lists what there is" "$out" "^no reference for 'k:' in docs/lua\.md; it documents: cuda\.jit "

# --- :time ------------------------------------------------------------------------------------------------
for bad in ON yes 1 "on now"; do
  repl ":time $bad"
  same ":time $bad is refused" "$err" "cujit: :time takes 'on' or 'off', not '$bad'"
  same ":time $bad: no state printed" "$out" ""
done
CUJIT_DEVICE=cpu repl ':time on
x = 1
:time off
y = 2'
same ":time on with the CPU device current: no 'wall time only' note" "$out" "timing is on
timing is off"
check ":time on with the CPU device: its time beside the wall time" "$err" \
  '^time: wall [0-9.]+ ms, CPU device [0-9.]+ ms$'
same ":time: one statement timed" "$(grep -c '^time: ' <<<"$err")" 1

# --- prompts on a pipe -------------------------------------------------------------------------------------
repl '_PROMPT = "P> " _PROMPT2 = "Q> "
function g()
return 5 end
g()'
same "_PROMPT and _PROMPT2 print nothing on a pipe" "$out" "5"

# --- the fault note on a pipe --------------------------------------------------------------------------------
pipe_note="cujit: the GPU faulted. cuda.reset() may bring it back; when it cannot (the message says to restart the program), run cujit again (:restart, which replays a session, needs a terminal)"
repl 'x = 1
error("device 0 faulted: an illegal memory access; restart the program")
error("device 0 faulted: a trap; the device refuses further work until reset")
error("device 0 faulted: nothing that says it is lasting")
error("restart the program, it refuses further work")
print("alive")'
same "fault notes: the session goes on" "$out" "alive"
same "fault notes: after each of the engine's two wordings, and only those" \
  "$(grep -c '^cujit: the GPU faulted' <<<"$err")" 2
check "fault note on a pipe: no :restart offered" "$err" "^$(sed 's/[.()]/\\&/g' <<<"$pipe_note")$"
check_not "fault note on a pipe: never 'type :restart'" "$err" "type :restart"

# --- a real fault of the CPU device, timed: the note names it; its time is unavailable, said why;
# after cuda.reset() the timing takes events made afresh ------------------------------------------------
CUJIT_DEVICE=cpu repl 'cuda = require "cujit"
boom = cuda.jit("boom(int *x)", "if (threadIdx.x == 0) __trap();")
a = cuda.device_array(1, "i32")
:time on
boom[{1, 1}](a) cuda.synchronize()
cuda.reset()
a = cuda.device_array(1, "i32")
_ = a:fill(7)
print("after the reset", a:copy_to_host()[1])'
same "a CPU device fault timed: the session goes on" "$out" "timing is on
after the reset	7"
check "the note names the CPU device, not a GPU" "$err" \
  '^cujit: the CPU device faulted\. cuda\.reset\(\) may bring it back; when it cannot'
check_not "and no GPU" "$err" "the GPU faulted"
check "the faulting statement's device time is unavailable, with the fault" "$err" \
  '^time: wall [0-9.]+ ms, CPU device time unavailable: the CPU device faulted: kernel .boom.'
check "after the reset, statements are timed on the device again" "$err" \
  '^time: wall [0-9.]+ ms, CPU device [0-9.]+ ms$'

finish
