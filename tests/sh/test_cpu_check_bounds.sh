#!/usr/bin/env bash
# test_cpu_check_bounds.sh -- CUJIT_CPU_CHECK=1 finds the off-by-one, for every size and dtype
# (engine/core/backend/cpu/cpu_device.c track()): under AddressSanitizer a device buffer ends exactly where
# the user's array ends, so the byte after it is the sanitizer's red zone, whatever n * size is
# (it used to be rounded up to 256 bytes, and x[n] went unreported unless 256 divides n * size).
# A sweep asks the sanitizer itself, from a checked kernel, whether the last byte of each array
# is addressable and the next is not (every dtype, 1..300 elements, and a slice at the array's
# end); then real kernels read and write x[n] and must be reported with the line and the thread,
# ending the process with a non-zero status. A slice that ends inside its array is not caught
# (its end is the array's memory): docs/cpu.md says so. Dynamic shared memory likewise ends at the
# launch's size (kernels_src/cujit/cpu_launch.h begin_launch), not at its 256-byte rounding nor at
# the end of a larger buffer the worker kept from an earlier launch. Needs g++ and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
# UBSan's halt_on_error (the sanitizer suite's) would end the process before cujit's line.
export CUJIT_DEVICE=cpu CUJIT_CPU_CHECK=1 UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED

cat >"$TMP/sweep.lua" <<'EOF'
local cuda = require "cujit"
-- out[0]: the array's last byte is poisoned (wrong); out[1]: the byte after it is (right).
local probe = cuda.jit("probe(const void *p, unsigned long long bytes, int *out)", [[
  const char *c = (const char *)p;
  out[0] = __asan_address_is_poisoned(c + bytes - 1);
  out[1] = __asan_address_is_poisoned(c + bytes);
]], {preamble = 'extern "C" int __asan_address_is_poisoned(void const volatile *);'})
local size = {i8 = 1, u8 = 1, i16 = 2, u16 = 2, f16 = 2, i32 = 4, u32 = 4, f32 = 4,
              i64 = 8, u64 = 8, f64 = 8}
local out = cuda.zeros(2, "i32")
local bad, tried = {}, 0
local function look(a, bytes, what)
  probe[{1, 1}](a, bytes, out)
  local t = out:totable()
  tried = tried + 1
  if t[1] ~= 0 or t[2] ~= 1 then bad[#bad + 1] = what .. string.format(" (%d,%d)", t[1], t[2]) end
end
for _, dtype in ipairs {"i8", "u8", "i16", "u16", "f16", "i32", "u32", "f32", "i64", "u64", "f64"} do
  for n = 1, 300 do
    local a = cuda.zeros(n, dtype)
    look(a, n * size[dtype], dtype .. "[" .. n .. "]")
    if n > 4 then look(a:slice(-3), 3 * size[dtype], dtype .. "[" .. n .. "]:slice(-3)") end
    a:free()
  end
end
print("tried", tried, "wrong", #bad, table.concat(bad, " ", 1, math.min(#bad, 10)))
EOF
run "$CUJIT" "$TMP/sweep.lua"
check_rc "the sweep runs" 0
check "every array and end slice, 11 dtypes x 300 sizes, ends at its last byte" "$out" \
  "^tried	6556	wrong	0	"

# One kernel per dtype; argument 3 picks reading x[n] (into y[0]) or writing it.
cat >"$TMP/obo.lua" <<'EOF'
local cuda = require "cujit"
local ctype = {i8 = "signed char", u16 = "unsigned short", f32 = "float", f64 = "double"}
local dtype, n, write = arg[1], tonumber(arg[2]), arg[3] == "write"
local k = cuda.jit("obo_" .. dtype .. "(" .. ctype[dtype] .. " *x, " .. ctype[dtype] ..
                   " *y, int n, int write)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == n) { if (write) x[i] = 1; else y[0] = x[i]; }
]])
local x, y = cuda.zeros(n, dtype), cuda.zeros(1, dtype)
k[{(n + 128) // 128, 128}](x, y, n, write and 1 or 0)
cuda.synchronize()
print("not reached")
EOF
for c in "f32 1000 read 4000" "f32 1000 write 4000" "i8 3 write 3" "i8 257 read 257" \
  "u16 129 read 258" "f64 33 write 264" "f64 1 read 8"; do
  set -- $c
  run "$CUJIT" "$TMP/obo.lua" $1 $2 $3
  what="$1 x[$2] ($3)"
  check "$what: the sanitizer reports it" "$err" "AddressSanitizer: heap-buffer-overflow"
  check "$what: 0 bytes past the $4-byte array" "$err" "0 bytes (to the right of|after) $4-byte region"
  check "$what: cujit names the thread and line 2" "$err" \
    "the report above is from kernel 'obo_$1': block \([0-9]+,0,0\) thread \([0-9]+,0,0\), line 2 of its body"
  check_not "$what: the script stops there" "$out" "not reached"
  [ "$rc" -ne 0 ] && ok "$what: exits non-zero ($rc)" || fail "$what: exit status 0"
done
cat >"$TMP/dyn_sweep.lua" <<'EOF'
local cuda = require "cujit"
local probe = cuda.jit("dprobe(unsigned bytes, int *out)", [[
  extern __shared__ unsigned char d[];
  out[0] = bytes ? __asan_address_is_poisoned(d + bytes - 1) : 0; // for 0 bytes: d[0]
  out[1] = __asan_address_is_poisoned(d + bytes);
]], {preamble = 'extern "C" int __asan_address_is_poisoned(void const volatile *);'})
local out = cuda.zeros(2, "i32")
local bad, tried = {}, 0
-- down from the largest (each launch smaller than the worker's last buffer), then up again
local sizes = {}
for b = 1024, 0, -1 do sizes[#sizes + 1] = b end
for b = 1, 300 do sizes[#sizes + 1] = b end
for _, b in ipairs(sizes) do
  probe[{2, 1, shared = b}](b, out)
  local t = out:totable()
  tried = tried + 1
  if t[1] ~= 0 or t[2] ~= 1 then bad[#bad + 1] = b .. string.format(" (%d,%d)", t[1], t[2]) end
end
print("tried", tried, "wrong", #bad, table.concat(bad, " ", 1, math.min(#bad, 10)))
EOF
run "$CUJIT" "$TMP/dyn_sweep.lua"
check_rc "the dynamic shared memory sweep runs" 0
check "dynamic shared memory ends at the launch's size, 0..1024 bytes down and 1..300 up" "$out" \
  "^tried	1325	wrong	0	"

# Argument 1: the shared bytes of an earlier, larger launch (0: none); 2: this launch's; 3: threads,
# each writing d[threadIdx.x].
cat >"$TMP/dyn.lua" <<'EOF'
local cuda = require "cujit"
local before, bytes, threads = tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3])
local k = cuda.jit("dynw(float *o)", [[
  extern __shared__ float d[];
  d[threadIdx.x] = 1.0f;
  o[threadIdx.x] = d[threadIdx.x];
]])
local o = cuda.zeros(1024, "f32")
if before > 0 then k[{1, before // 4, shared = before}](o) cuda.synchronize() end
k[{1, threads, shared = bytes}](o)
cuda.synchronize()
print("finished")
EOF
for c in "0 128 40 32" "4096 100 26 25" "0 132 34 33"; do
  set -- $c
  run "$CUJIT" "$TMP/dyn.lua" $1 $2 $3
  what="dynamic shared $2 bytes, $3 threads (after $1)"
  check "$what: the sanitizer reports it" "$err" "AddressSanitizer: heap-buffer-overflow"
  check "$what: 0 bytes past the $2-byte block" "$err" "0 bytes (to the right of|after) $2-byte region"
  check "$what: cujit names thread $4 and line 2" "$err" \
    "the report above is from kernel 'dynw': block \(0,0,0\) thread \($4,0,0\), line 2 of its body"
  check_not "$what: the script stops there" "$out" "finished"
  [ "$rc" -ne 0 ] && ok "$what: exits non-zero ($rc)" || fail "$what: exit status 0"
done
run "$CUJIT" "$TMP/dyn.lua" 1024 0 1
what="dynamic shared 0 bytes (after 1024)"
check "$what: the sanitizer reports d[0]" "$err" "AddressSanitizer: use-after-poison"
check "$what: cujit names thread 0 and line 2" "$err" \
  "the report above is from kernel 'dynw': block \(0,0,0\) thread \(0,0,0\), line 2 of its body"
[ "$rc" -ne 0 ] && ok "$what: exits non-zero ($rc)" || fail "$what: exit status 0"
run "$CUJIT" "$TMP/dyn.lua" 4096 132 33
check_rc "dynamic shared memory used to its last byte, after a larger launch" 0
check "and the script runs to its end" "$out" "^finished$"
finish
