# test_cli_lua.sh -- `cujit` as a Lua interpreter, compared with what stock lua 5.4 does: the
# arg table and `...` (thousands of arguments too), -e, -l mod, -l g=mod, -, --, -v, -E and
# LUA_INIT, error exits with a traceback, os.exit codes, stdin as a script, Ctrl-C, and
# `require "cujit"` (no global `cuda`).
# Run by ctest as: bash test_cli_lua.sh /path/to/cujit. Needs no GPU.
set -u
source "$(dirname "$0")/lib.sh"

unset LUA_INIT LUA_INIT_5_4
export CUJIT_CACHE_DIR="$TMP/cache"
cd "$TMP" || exit 1

cat >args.lua <<'EOF'
print(arg[0], arg[1], arg[2], #arg, select("#", ...), ...)
print(arg[-1], arg[-2], arg[-3])
EOF
r1=$RANDOM
run "$CUJIT" args.lua "x$r1" "y z"
check_rc "script with arguments" 0
same "arg[0..2], #arg and ..." "$(sed -n 1p <<<"$out")" "args.lua	x$r1	y z	2	2	x$r1	y z"
same "arg[-1] is the interpreter" "$(sed -n 2p <<<"$out")" "$CUJIT	nil	nil"

# As many arguments as the system passes (5000 here): every one reaches `...` and arg, in order
# (they once overran the Lua stack: a segmentation fault).
run "$CUJIT" args.lua $(seq 1 5000)
check_rc "a script with 5000 arguments" 0
same "all 5000 in ... and arg" "$(sed -n 1p <<<"$out" | cut -f2-6)" "1	2	5000	5000	1"
same "the last one last" "$(sed -n 1p <<<"$out" | awk -F'\t' '{ print NF, $NF }')" "5005 5000"

run "$CUJIT" -e "v = $r1" args.lua a
check_rc "-e before a script" 0
same "options take negative indices" "$(sed -n 2p <<<"$out")" "v = $r1	-e	$CUJIT"

run "$CUJIT" -e "a = $r1" -e 'print(a * 2)'
check_rc "-e twice" 0
same "-e statements run in order" "$out" "$((r1 * 2))"
run "$CUJIT" "-eprint('joined')"
same "-e joined to its statement" "$out" "joined"

# --- -l ------------------------------------------------------------------------------------------
echo "return { value = $r1 }" >mymod.lua
export LUA_PATH="$TMP/?.lua;;"
run "$CUJIT" -l mymod -e 'print(mymod.value)'
check_rc "-l mod" 0
same "-l mod sets global mod" "$out" "$r1"
run "$CUJIT" -l m=mymod -e 'print(m.value, mymod)'
same "-l g=mod sets global g" "$out" "$r1	nil"
run "$CUJIT" -l no_such_module_here
check_rc "-l of a missing module" 1
check "the missing module is named" "$err" "no_such_module_here"

# --- stdin: '-' and no arguments --------------------------------------------------------------------
run bash -c "echo 'print(\"from stdin\", ...)' | '$CUJIT' - p q"
check_rc "- runs stdin" 0
same "- passes the arguments" "$out" "from stdin	p	q"
run bash -c "echo 'print(6 * 7)' | '$CUJIT'"
check_rc "piped stdin without arguments runs it, as lua does" 0
same "stdin ran as a chunk" "$out" "42"
run "$CUJIT" -- args.lua -e
same "-- ends the options" "$(sed -n 1p <<<"$out")" "args.lua	-e	nil	1	1	-e"

# --- -v, bad options ----------------------------------------------------------------------------------
run "$CUJIT" -v
check_rc "-v" 0
check "-v shows cujit and Lua" "$out" '^cujit [0-9.]+ -- Lua 5\.4'
run "$CUJIT" -v -e 'print("after v")'
check "-v then -e runs the statement" "$out" '^after v$'
run "$CUJIT" -Z
check_rc "an unknown option" 1
check "the option is named" "$err" "unrecognized option '-Z'"
run "$CUJIT" -e
check_rc "-e without a statement" 1
check "-e needs an argument" "$err" "'-e' needs an argument"

# --- errors ---------------------------------------------------------------------------------------------
printf 'local function inner() error("boom %s") end\ninner()\n' "$r1" >err.lua
run "$CUJIT" err.lua
check_rc "a runtime error" 1
check "error message with the script line" "$err" "^cujit: err\.lua:1: boom $r1$"
check "a traceback follows" "$err" 'stack traceback:'
check "the traceback names the function" "$err" "in (local|upvalue|function) 'inner'"

echo 'x = = 1' >syntax.lua
run "$CUJIT" syntax.lua
check_rc "a syntax error" 1
check "syntax error names the file" "$err" '^cujit: syntax\.lua:1:'

run "$CUJIT" missing_script.lua
check_rc "a missing script" 1
check "missing script named" "$err" 'cannot open missing_script\.lua'

run "$CUJIT" -e 'error(setmetatable({}, {__tostring = function() return "custom object" end}))'
check_rc "an error object with __tostring" 1
check "__tostring is used" "$err" 'custom object'
run "$CUJIT" -e 'error({})'
check "a table error says what it is" "$err" 'error object is a table value'

run "$CUJIT" -e 'os.exit(3)'
check_rc "os.exit(3)" 3
run "$CUJIT" -e 'os.exit(77)'
check_rc "os.exit(77) passes through (ctest skip)" 77

# --- LUA_INIT and -E ------------------------------------------------------------------------------------
run env LUA_INIT="print('init $r1')" "$CUJIT" -e 'print("main")'
same "LUA_INIT runs first" "$out" "init $r1
main"
echo "print('init file')" >init.lua
run env LUA_INIT="@$TMP/init.lua" "$CUJIT" -e ''
same "LUA_INIT=@file runs the file" "$out" "init file"
run env LUA_INIT="print('init')" "$CUJIT" -E -e 'print(package.path:find("'"$TMP"'", 1, true) == nil)'
same "-E ignores LUA_INIT and LUA_PATH" "$out" "true"

# --- -W ---------------------------------------------------------------------------------------------------
run "$CUJIT" -W -e 'warn("careful")'
check "-W turns warnings on" "$err" 'careful'
run "$CUJIT" -e 'warn("quiet")'
check_not "warnings are off without -W" "$err" 'quiet'

# --- Ctrl-C stops a script ---------------------------------------------------------------------------------
STARTED="$TMP/started" "$CUJIT" -e 'io.open(os.getenv("STARTED"), "w"):close() while true do end' \
  2>"$TMP/int.err" &
pid=$!
for _ in $(seq 200); do [ -e "$TMP/started" ] && break; sleep 0.05; done
kill -INT "$pid"
wait "$pid"
rc=$?
err=$(cat "$TMP/int.err")
check_rc "Ctrl-C ends a script" 1
check "Ctrl-C is reported as interrupted" "$err" 'interrupted!'

# --- the cujit module ------------------------------------------------------------------------------------
run "$CUJIT" -e 'local cuda = require "cujit"; print(type(cuda), cuda == require "cujit", rawget(_G, "cuda"))'
check_rc "require \"cujit\"" 0
same "require gives one module table, and no global cuda" "$out" "table	true	nil"

finish
