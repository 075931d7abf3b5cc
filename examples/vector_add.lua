-- vector_add.lua -- the hello world of GPU computing: c = a + b, checked against the host. On the
-- CPU device the arrays are 2^20 and 2^24 elements instead of 2^22 and 2^28.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local add = cuda.jit("add(const float *a, const float *b, float *c, long long n)", [[
  long long i = cujit::grid1();
  if (i < n) c[i] = a[i] + b[i];
]], S.options())
S.host_checks_done()

local seed = S.seed()
local n = S.on_cpu and 1 << 20 or 1 << 22
local a, b = cuda.device_array(n), cuda.device_array(n)
cuda.random.normal(a, seed)
cuda.random.normal(b, seed, 0, 1, n) -- the next n numbers of the same stream
local c = cuda.full(n, -12345.5) -- poisoned: a missed element shows

add[{S.blocks(n, 256), 256}](a, b, c, n)

local ha, hb, hc = a:copy_to_host(), b:copy_to_host(), c:copy_to_host()
local bad = 0
for i = 1, n do
  if hc[i] ~= S.f32(ha[i] + hb[i]) then bad = bad + 1 end
end
S.check(bad == 0, "c = a + b for all %d elements (%d wrong)", n, bad)

-- The same on 2^28 elements (3 GiB moved), timed with events: the bandwidth it reaches.
local LOG_BIG = S.on_cpu and 24 or 28
local big = 1 << LOG_BIG
local x, y, z = cuda.device_array(big), cuda.device_array(big), cuda.device_array(big)
cuda.random.uniform(x, seed)
cuda.random.uniform(y, seed + 1)
local launch = add[{S.blocks(big, 256), 256}]
local ms = S.gpu_ms(function() launch(x, y, z, big) end, 10, nil, true)
S.printf("2^%d floats: %.3f ms per add, %.4g GB/s (3 x 4 bytes per element)", LOG_BIG, ms,
         3 * 4 * big / ms / 1e6)
local hz, hx, hy = z:copy_to_host(), x:copy_to_host(), y:copy_to_host()
bad = 0
for _ = 1, 10000 do
  local i = math.random(1, big)
  if hz[i] ~= S.f32(hx[i] + hy[i]) then bad = bad + 1 end
end
S.check(bad == 0, "2^%d elements: 10000 random positions match the host (%d wrong)", LOG_BIG, bad)

-- The inputs are what they say: a the first n normals of the seed's stream, b the next n. (Were
-- b the same numbers as a, c would be 2a, and a kernel adding a to itself would pass too.)
local ab, differ = cuda.random.normal(cuda.device_array(2 * n), seed):copy_to_host(), 0
for i = 1, n do
  if ab[i] ~= ha[i] or ab[n + i] ~= hb[i] then differ = differ + 1 end
end
S.check(differ == 0, "a and b are the first 2 x %d normals of one stream (%d differ)", n, differ)
S.done()
