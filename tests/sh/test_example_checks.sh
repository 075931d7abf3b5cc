#!/usr/bin/env bash
# test_example_checks.sh -- an example's count of checks against the list ctest gives it
# (CUJIT_EXAMPLE_CHECKS naming tests/example_checks.lua; examples/example_support.lua):
# examples/devices.lua, on the CPU device and compile-only, passes with the project's list; it
# fails, saying its count, the listed one and the mode, when a list says one more or one less,
# has no count for its mode, or no entry for it; a copy of it with one check removed fails against
# the project's list; an example's arguments are part of its name; without the variable nothing is
# counted. Every example's own test runs against the list (examples/CMakeLists.txt).
. "$(dirname "$0")/lib.sh"
need_nvrtc
ex="$CUJIT_SOURCE_DIR/examples"
list="$CUJIT_SOURCE_DIR/tests/example_checks.lua"
# go SCRIPT ARGS...: the example on the CPU device (GPU runs are not counted)
go() { CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" LUA_PATH="$ex/?.lua;;" run "$CUJIT" "$@"; }
mine() { printf 'return {%s}\n' "$1" >"$TMP/list.lua"; }

CUJIT_EXAMPLE_CHECKS=$list go "$ex/devices.lua"
check_rc "devices.lua on the CPU device against the project's list" 0
check "its count" "$out" '^3 checks passed in'
CUJIT_EXAMPLE_CHECKS=$list CUJIT_EXAMPLE_COMPILE_ONLY=1 go "$ex/devices.lua"
check_rc "devices.lua compile-only against the project's list" 0
check "its count" "$out" '1 host checks passed'

mine '["devices"] = {compile = 1, cpu = 4}'
CUJIT_EXAMPLE_CHECKS=$TMP/list.lua go "$ex/devices.lua"
check_rc "a list that says one check more" 1
check "says the counts, the mode and the list" "$err" \
  "devices \(cpu\): 3 checks passed, $TMP/list.lua lists 4: a check was removed or added, or no longer runs"
check_not "and no summary" "$out" 'checks passed in'
mine '["devices"] = {compile = 1, cpu = 2}'
CUJIT_EXAMPLE_CHECKS=$TMP/list.lua go "$ex/devices.lua"
check_rc "a list that says one check less" 1
check "says so" "$err" 'devices \(cpu\): 3 checks passed, .* lists 2'
mine '["devices"] = {compile = 2, cpu = 3}'
CUJIT_EXAMPLE_CHECKS=$TMP/list.lua CUJIT_EXAMPLE_COMPILE_ONLY=1 go "$ex/devices.lua"
check_rc "compile-only against a list that says one more" 1
check "says the mode" "$err" 'devices \(compile\): 1 checks passed, .* lists 2'
check_not "and nothing past the host checks" "$out" 'compile-only: kernels compiled'
mine '["devices"] = {compile = 1}'
CUJIT_EXAMPLE_CHECKS=$TMP/list.lua go "$ex/devices.lua"
check_rc "a list without the mode" 1
check "says what to do" "$err" "devices \(cpu\): 3 checks passed, and $TMP/list.lua lists no count for it: add it there"
mine '["vector_add"] = {compile = 0, cpu = 2}'
CUJIT_EXAMPLE_CHECKS=$TMP/list.lua go "$ex/devices.lua"
check_rc "a list without the example" 1
check "says so" "$err" 'devices \(cpu\): 3 checks passed, and .* lists no count for it'

# The class of bug the list is for: a check that always passed, removed (seed 67's devices.lua:26).
grep -vF 'S.check(cpu and cpu.arch == "cpu", "the CPU device is listed' "$ex/devices.lua" >"$TMP/devices.lua"
[ "$(wc -l <"$TMP/devices.lua")" -lt "$(wc -l <"$ex/devices.lua")" ] || fail "the copy lost no line"
CUJIT_EXAMPLE_CHECKS=$list go "$TMP/devices.lua"
check_rc "devices.lua with a check removed" 1
check "is caught by the count" "$err" 'devices \(cpu\): 2 checks passed, .* lists 3'

# Arguments are part of the name: cluster_reduce --sweep has a count of its own.
mine '["cluster_reduce"] = {cpu = 3}'
CUJIT_EXAMPLE_CHECKS=$TMP/list.lua go "$ex/cluster_reduce.lua" --sweep
check_rc "cluster_reduce --sweep against a list of cluster_reduce alone" 1
check "names it with its arguments" "$err" 'cluster_reduce --sweep \(cpu\): [0-9]+ checks passed, and .* lists no count'

# Without the variable (a user's run) nothing is counted, whatever a list says.
mine '["devices"] = {compile = 7, cpu = 7}'
CUJIT_EXAMPLE_CHECKS= go "$ex/devices.lua"
check_rc "devices.lua run by a user" 0
check "ends as ever" "$out" '^3 checks passed in'
finish
