# test_stub_context.sh -- the `cujit` command when the GPU's primary context cannot be made (the
# GPU full of other processes), against the stand-in driver (scripts/bench/stub_driver.c) told to
# refuse cuDevicePrimaryCtxRetain: the Lua error is clear, a script may catch it and go on or
# exit, and the process ends as for any Lua error, without a crash at exit (the H200 crashed
# there, under compute-sanitizer, after this very failure).
# Run by ctest as: bash test_stub_context.sh /path/to/cujit.
set -u
source "$(dirname "$0")/lib.sh"
need_stand_in
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_STUB_FAIL=cuDevicePrimaryCtxRetain
unset CUJIT_DEVICE
cd "$TMP" || exit 1
WHY='retaining the primary context of device 0 failed: device 0 is out of memory'

# Host work before (as examples/half.lua did), then the device: the error goes uncaught.
cat >uncaught.lua <<'LUA'
local cuda = require "cujit"
local h = cuda.array({1 / 3, 65504}, "f16")
assert(h[2] == 65504)
local a = cuda.device_array({64, 64})
print("not reached", a)
LUA
run "$CUJIT" uncaught.lua
check_rc "uncaught: exit status of a Lua error" 1
check "uncaught: names the script's line" "$err" "^cujit: uncaught\.lua:4: $WHY"
check_not "uncaught: nothing after the error" "$out" 'not reached'

# Caught: the script goes on without the GPU and ends normally, or exits with its own status.
cat >caught.lua <<'LUA'
local cuda = require "cujit"
local ok, err = pcall(cuda.device_array, 100)
assert(not ok)
print("caught: " .. err)
local again, err2 = pcall(cuda.stream)
print("again: " .. tostring(again) .. " " .. tostring(err2))
collectgarbage()
if arg[1] then os.exit(tonumber(arg[1])) end
LUA
run "$CUJIT" caught.lua
check_rc "caught: the script ends normally" 0
check "caught: the message" "$out" "^caught: $WHY"
check "caught: asking again fails the same" "$out" "^again: false .*$WHY"
run "$CUJIT" caught.lua 3
check_rc "caught, then os.exit(3)" 3
check_not "no crash" "$err" 'Segmentation|core dumped|Aborted'

# The C API's side of it (tests/c/test_stub_driver.c) and the stub's knob: no knob, no error.
unset CUJIT_STUB_FAIL
run "$CUJIT" caught.lua
check "without the knob the context is made" "$err" "assertion failed"
finish
