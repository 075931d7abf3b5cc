#!/usr/bin/env bash
# test_cpu_check_gemm.sh -- cuda.gemm's SIMT kernels (kernels_src/cujit/gemm.h) read only inside
# their operands, with loads aligned as their types require, under the CPU device's check build
# (CUJIT_CPU_CHECK=1: AddressSanitizer and UBSan in the kernel). Correct results alone do not show
# this: a 16-byte load at an address that is not a multiple of 16 gives the right values on the
# CPU (a GPU faults), and a read past an operand's last row only feeds rows of C that are not
# stored. Edge tiles beside interior ones in m and n, in tiles of 128 and of 64 (two workers, so
# that the kernel's choice of tile does not depend on the machine's cores); k that is and is not
# a whole number of steps, and 3 past a multiple of 4 (a quad that would end just past a row);
# every transpose; f32, f16 and bf16 inputs; each operand (and C) at its array's start or one
# element past it (a view: no 16- or 8-byte loads there). Every product is also checked exactly
# against a host product: the inputs are multiples of 1/8 in [-1, 1], so every sum is exact in
# float. Needs g++ and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
# UBSan's halt_on_error (the sanitizer suite's) would end the process before cujit's line.
export CUJIT_DEVICE=cpu CUJIT_CPU_THREADS=2 CUJIT_CPU_CHECK=1 UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED CUJIT_GEMM

cat >"$TMP/gemm.lua" <<'LUA'
local cuda = require "cujit"
local function host_matrix(rows, cols, seed)
  local t = {}
  local x = seed
  for i = 1, rows * cols do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = (x % 17 - 8) / 8 -- exact in f16 and bf16
  end
  return t
end
local function device(t, rows, cols, dtype, offset)
  local flat = cuda.zeros(rows * cols + offset, dtype)
  local v = flat:slice(1 + offset, rows * cols + offset):reshape(rows, cols)
  v:copy_from(cuda.array(t, dtype):reshape(rows, cols))
  return v
end
local bad, runs = 0, 0
-- with 2 workers, tiles of 128 for the first three (at least 2 of them), of 64 for the last
local shapes = {{129, 255, 20}, {257, 130, 24}, {130, 129, 11}, {100, 120, 19}}
for _, dtype in ipairs {"f32", "f16", "bf16"} do
  for _, s in ipairs(shapes) do
    local m, n, k = s[1], s[2], s[3]
    for ta = 0, 1 do
      for tb = 0, 1 do
        for offset = 0, 1 do
          local ar, ac = ta == 1 and k or m, ta == 1 and m or k
          local br, bc = tb == 1 and n or k, tb == 1 and k or n
          local ha, hb = host_matrix(ar, ac, m + ta), host_matrix(br, bc, n + tb)
          local a, b = device(ha, ar, ac, dtype, offset), device(hb, br, bc, dtype, offset)
          local c = device(host_matrix(m, n, 3), m, n, "f32", offset)
          cuda.gemm(a, b, c, {trans_a = ta == 1, trans_b = tb == 1})
          local hc = c:copy_to_host()
          runs = runs + 1
          for i = 1, m do
            for j = 1, n do
              local sum = 0
              for p = 1, k do
                local av = ta == 1 and ha[(p - 1) * m + i] or ha[(i - 1) * k + p]
                local bv = tb == 1 and hb[(j - 1) * k + p] or hb[(p - 1) * n + j]
                sum = sum + av * bv
              end
              if hc:get(i, j) ~= sum then
                bad = bad + 1
                if bad < 5 then print(dtype, m, n, k, ta, tb, offset, i, j, hc:get(i, j), sum) end
              end
            end
          end
        end
      end
    end
  end
end
print(string.format("%d products, %d wrong elements", runs, bad))
LUA
run "$CUJIT" "$TMP/gemm.lua"
check_rc "every product runs under the check build" 0
check_not "no read outside an operand" "$err" "AddressSanitizer"
check_not "no misaligned load or other undefined behaviour" "$err" "runtime error"
check "96 products (3 dtypes x 4 shapes x 4 transposes x 2 alignments), every element exact" \
  "$out" "^96 products, 0 wrong elements$"
finish
