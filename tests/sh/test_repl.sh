# test_repl.sh -- the REPL driven through a pipe (`cujit -i`): expressions print their values,
# =expr, multi-line functions and [[ strings continue, errors do not end the session, :help,
# :time, :quit, unknown commands, and no prompts or banner on a pipe.
# Run by ctest as: bash test_repl.sh /path/to/cujit. Needs no GPU.
set -u
source "$(dirname "$0")/lib.sh"
# repl INPUT: feeds INPUT to `cujit -i`; sets $out, $err, $rc.
repl() {
  out=$(printf '%s' "$1" | "$CUJIT" -i 2>"$TMP/stderr")
  rc=$?
  err=$(cat "$TMP/stderr")
}
# line N: the Nth line of $out.
line() { sed -n "${1}p" <<<"$out"; }

export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY="$TMP/history"
a=$((RANDOM % 1000 + 2)) b=$((RANDOM % 1000 + 2))

repl "$a + $b
=$a * $b
\"text\", $a, nil
function f(x)
  return x * $a
end
f($b)
s = [[
extern \"C\" __global__ void k(float *x) {
  x[threadIdx.x] = $b;
}]]
print(#s, s:match('void (%w+)%('))
t = {
  n = $a,
}
t.n
local hidden = 1
hidden
"
same "exit status at end of input" "$rc" 0
same "an expression prints its value" "$(line 1)" "$((a + b))"
same "=expr prints its value" "$(line 2)" "$((a * b))"
same "several values are tab-separated" "$(line 3)" "text	$a	nil"
same "a multi-line function" "$(line 4)" "$((a * b))"
s_len=$(printf 'extern "C" __global__ void k(float *x) {\n  x[threadIdx.x] = %s;\n}' "$b" | wc -c)
same "an unterminated [[ string continues" "$(line 5)" "$s_len	k"
same "a multi-line table constructor" "$(line 6)" "$a"
same "a local lasts one statement, as in lua" "$(line 7)" "nil"
[ -z "$err" ] && ok "nothing on stderr" || fail "stderr: $err"
check_not "no prompts on a pipe" "$out" '^>'
check_not "no banner on a pipe" "$out" 'Copyright'
[ ! -e "$CUJIT_HISTORY" ] && ok "no history from a pipe" || fail "history written from a pipe"

# --- errors keep the session ---------------------------------------------------------------------
repl "error('oops $a')
'still here', $b
x = = 2
'and here'
for i = 1,
"
same "exit status after errors" "$rc" 0
same "after a runtime error the session goes on" "$(line 1)" "still here	$b"
same "after a syntax error the session goes on" "$(line 2)" "and here"
check "the runtime error is reported" "$err" "^cujit: stdin:1: oops $a$"
check "with a traceback" "$err" 'stack traceback:'
check "the syntax error is reported" "$err" "^cujit: stdin:1: unexpected symbol near '='"
check "an unfinished statement at the end is reported" "$err" "^cujit: stdin:1: .*near <eof>$"

# --- commands --------------------------------------------------------------------------------------
repl ":help
:time on
x = $a
=x + 1
:time off
=x + 2
:time sideways
:nonsense
::label::
:quit
print('not reached')
"
same "exit status after :quit" "$rc" 0
check ":help lists :time" "$out" '^  :time on'
check ":help lists :quit" "$out" '^  :quit'
check ":help lists :help" "$out" '^  :help'
check ":time on says so" "$out" '^timing is on$'
check ":time off says so" "$out" '^timing is off$'
check "timed statement printed" "$out" "^$((a + 1))$"
check "untimed statement printed" "$out" "^$((a + 2))$"
timings=$(grep -Ec '^time: wall [0-9.]+ ms' <<<"$err")
same "two statements timed while :time was on" "$timings" 2
if "$CUJIT" devices >/dev/null 2>&1; then
  check "with a GPU, GPU time too" "$err" '^time: wall [0-9.]+ ms, GPU [0-9.]+ ms$'
fi
check "a bad :time argument" "$err" ":time takes 'on' or 'off', not 'sideways'"
check "an unknown command" "$err" "unknown command ':nonsense'"
check_not "a Lua label is not a command" "$err" "unknown command ':'"
check_not ":quit stops reading" "$out" 'not reached'

# --- the cujit module in the REPL --------------------------------------------------------------------
repl 'cuda = require "cujit"
type(cuda)
'
same "require \"cujit\" in the REPL" "$(line 1)" "table"

# --- a kernel typed over several lines (needs NVRTC, not a GPU) -----------------------------------
if ! "$CUJIT" --version | grep -Eq '^NVRTC +[0-9]' && [ -d /usr/local/cuda/lib64 ]; then
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if "$CUJIT" --version | grep -Eq '^NVRTC +[0-9]'; then
  repl "cuda = require 'cujit'
k = cuda.jit('scale$a(float *x, float s, int n)', [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
]], {arch = 'sm_90'})
k:ptx():match('%.entry (scale%d+)')
bad = cuda.jit('broken(int n)', [[
  int m = n;
  m += not_declared_$b;
]], {arch = 'sm_90'})
'after the compile error'
"
  same "a kernel defined over several lines compiles" "$(line 1)" "scale$a"
  same "the session goes on after a compile error" "$(line 2)" "after the compile error"
  check "the compile error names the kernel" "$err" "broken"
  check "and the culprit" "$err" "not_declared_$b"
else
  echo "skip: kernel in the REPL (no NVRTC)"
fi

# --- -i after a script, with its arguments --------------------------------------------------------------
echo 'greeting = "hi " .. (...)' >"$TMP/pre.lua"
out=$(printf 'greeting\n' | "$CUJIT" -i "$TMP/pre.lua" there 2>&1)
same "-i enters the REPL after the script" "$out" "hi there"

finish
