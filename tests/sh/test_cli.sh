# test_cli.sh -- the `cujit` subcommands that need no compiler: --version, devices, help, cache
# dir/off/usage, and which first arguments are subcommands and which are scripts.
# Run by ctest as: bash test_cli.sh /path/to/cujit. Works with and without a GPU.
set -u
source "$(dirname "$0")/lib.sh"

export CUJIT_CACHE_DIR="$TMP/cache"

run "$CUJIT" devices
if [ "$rc" -eq 0 ]; then have_gpu=1; else have_gpu=0; fi
if [ "$have_gpu" = 0 ] && [ "${CUJIT_REQUIRE_GPU:-0}" = 1 ]; then
  fail "CUJIT_REQUIRE_GPU=1 but 'cujit devices' found no GPU: $err"
fi

# --- --version -------------------------------------------------------------------------------
run "$CUJIT" --version
check_rc "--version" 0
check "--version names cujit" "$out" '^cujit +[0-9]+\.[0-9]+\.[0-9]+$'
check "--version names Lua" "$out" '^Lua +5\.4\.[0-9]+$'
check "--version has an NVRTC line" "$out" '^NVRTC +([0-9]+\.[0-9]+ |missing: .+)'
# A minor version of 9 (a stand-in NVRTC reports 12.9: tests/c/nvrtc_failing.c).
shim="$CUJIT_BINARY_DIR/tests/libnvrtc_failing.so"
if [ -f "$shim" ]; then
  CUJIT_NVRTC="$shim" CJ_TEST_NVRTC_VERSION=12.9 run "$CUJIT" --version
  check "--version shows NVRTC 12.9" "$out" '^NVRTC +12\.9 '
fi
if grep -Eq '^NVRTC +[0-9]' <<<"$out"; then
  check "--version names the NVRTC library" "$out" '^NVRTC +[0-9]+\.[0-9]+ +\(.*libnvrtc[^)]*\)'
fi
if [ "$have_gpu" = 1 ]; then
  check "--version shows the driver's CUDA version" "$out" '^driver +CUDA [0-9]+\.[0-9]+$'
else
  check "--version says the driver is missing" "$out" '^driver +missing: .*(driver|libcuda)'
fi

# A missing NVRTC is reported, not fatal.
run env CUJIT_NVRTC="$TMP/no-such-libnvrtc.so" "$CUJIT" --version
check_rc "--version without NVRTC" 0
check "--version says NVRTC is missing" "$out" "^NVRTC +missing: .*no-such-libnvrtc"

# --- devices ----------------------------------------------------------------------------------
run "$CUJIT" devices
if [ "$have_gpu" = 1 ]; then
  check_rc "devices" 0
  check "devices: index name sm_XX memory SMs" "$out" '^0  .+  sm_[0-9]+  [0-9]+\.[0-9] GiB  [0-9]+ SMs$'
else
  check_rc "devices without a GPU" 1
  check "devices explains on stderr" "$err" '^cujit devices: .*(driver|GPU|device)'
  same "devices explains in one line" "$(wc -l <<<"$err")" 1
  [ -z "$out" ] && ok "devices prints nothing on stdout" || fail "devices stdout: $out"
fi
run "$CUJIT" devices extra
check_rc "devices with an argument" 1
same "devices with an argument: one message, nothing else" "$err" "cujit devices: takes no arguments"
same "devices with an argument: nothing on stdout" "$out" ""

# --- help -------------------------------------------------------------------------------------
for h in help --help; do
  run "$CUJIT" $h
  check_rc "$h" 0
  check "$h shows usage" "$out" '^usage: cujit'
  check "$h lists compile" "$out" 'cujit compile FILE\.cu'
  check "$h lists cache" "$out" 'cujit cache dir\|stats\|clear'
done

# --- cache dir / off / usage -------------------------------------------------------------------
run "$CUJIT" cache dir
check_rc "cache dir" 0
mkdir -p "$CUJIT_CACHE_DIR"
want=$(cd "$CUJIT_CACHE_DIR" && pwd -P)
got=$(cd "$out" 2>/dev/null && pwd -P)
[ "$got" = "$want" ] && ok "cache dir is CUJIT_CACHE_DIR" || fail "cache dir: '$out', wanted $want"

run env CUJIT_CACHE=off "$CUJIT" cache dir
check_rc "cache dir with CUJIT_CACHE=off" 1
check "cache off explained" "$err" 'disk cache is off.*CUJIT_CACHE=off'
run env CUJIT_CACHE=off "$CUJIT" cache stats
check_rc "cache stats with CUJIT_CACHE=off" 1

run "$CUJIT" cache stats
check_rc "cache stats" 0
check "cache stats: directory" "$out" "^directory +.*/cache$"
check "cache stats: entries" "$out" '^entries +[0-9]+$'
check "cache stats: size and limit" "$out" '^size +.* \(limit .*\)$'

run "$CUJIT" cache
check_rc "cache without a subcommand" 1
check "cache usage" "$err" 'usage: cujit cache dir\|stats\|clear'
run "$CUJIT" cache frobnicate
check_rc "cache with a bad subcommand" 1

# --- subcommand or script? -------------------------------------------------------------------
mkdir -p "$TMP/s"
echo 'print("the script called devices ran", ...)' >"$TMP/s/devices"
echo 'print("cache.lua ran")' >"$TMP/s/cache.lua"
echo 'print("the file called cache ran")' >"$TMP/s/cache"
run bash -c "cd '$TMP/s' && '$CUJIT' ./devices x"
check_rc "./devices is a script" 0
check "./devices ran as Lua" "$out" '^the script called devices ran	x$'
run bash -c "cd '$TMP/s' && '$CUJIT' cache.lua"
check_rc "cache.lua is a script" 0
check "cache.lua ran as Lua" "$out" '^cache\.lua ran$'
run bash -c "cd '$TMP/s' && '$CUJIT' cache dir"
check_not "a bare 'cache' is the subcommand even beside a file" "$out" 'ran'

finish
