-- test_lua_gpu.lua -- launches from Lua on the GPU, checked against references computed in Lua
-- on fresh random inputs, with outputs poisoned first: 1-D, 2-D, generic f32/f64, dynamic shared
-- memory, forall, host arrays and tables copied in and out, copies, streams and events.
local h = require "helper"
local cuda = require "cujit"
h.need_gpu(cuda)

local f32 = h.f32

local vadd = cuda.jit("vadd(const float *a, const float *b, float *c, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
]])

local function blocks(n, b) return (n + b - 1) // b end

h.test("vadd on random inputs, poisoned output", function()
  local n = 1000 + math.random(0, 3000)
  local xs, ys = h.random_floats(n), h.random_floats(n)
  local a, b = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32")
  local c = cuda.full(n, h.POISON, "f32")
  vadd[{blocks(n, 128), 128}](a, b, c, n)
  local got = c:copy_to_host()
  h.eq(#got, n, "length")
  for i = 1, n do
    local want = f32(f32(xs[i]) + f32(ys[i]))
    if got[i] ~= want then error(string.format("c[%d] = %s, want %s", i, got[i], want)) end
  end
end)

h.test("a launch loop reuses its launcher and every launch runs", function()
  local inc = cuda.jit("inc(float *y, float by, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += by;
  ]])
  local n = 777
  local y = cuda.zeros(n, "f32")
  local first = inc[{blocks(n, 256), 256}]
  for _ = 1, 100 do
    local l = inc[{blocks(n, 256), 256}]
    h.check(l == first, "the launcher is reused")
    l(y, 0.5, n)
  end
  for i, v in ipairs(y:copy_to_host()) do
    if v ~= 50 then error(string.format("y[%d] = %s after 100 launches, want 50", i, v)) end
  end
end)

h.test("generic kernels with f32 and f64", function()
  local axpy = cuda.jit("axpy(T a, const T *x, T *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
  ]])
  local n = 2049
  local xs, ys = h.random_floats(n), h.random_floats(n)
  local alpha = math.random() + 0.5
  for _, dt in ipairs {"f64", "f32"} do
    local x, y = cuda.to_device(xs, dt), cuda.to_device(ys, dt)
    axpy[{blocks(n, 256), 256}](alpha, x, y, n)
    local got = y:copy_to_host()
    h.eq(got.dtype, dt, "result dtype")
    for i = 1, n do
      local want = alpha * xs[i] + ys[i]
      local tol = dt == "f64" and 1e-14 or 1e-6
      if math.abs(got[i] - want) > tol * math.max(1, math.abs(want)) then
        error(string.format("%s y[%d] = %.17g, want %.17g", dt, i, got[i], want))
      end
    end
  end
  local x, y = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f64")
  h.raises("T", axpy[{1, 32}], 1.0, x, y, n) -- T bound twice to different types
end)

h.test("2-D launch covers a grid that is not a multiple of the block", function()
  local fill2d = cuda.jit("fill2d(int *out, int w, int hgt)", [[
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < w && r < hgt) out[r * w + c] = r * 1000 + c;
  ]])
  local w, hgt = 37 + math.random(0, 50), 19 + math.random(0, 30)
  local out = cuda.full({hgt, w}, -1, "i32")
  fill2d[{grid = {blocks(w, 16), blocks(hgt, 8)}, block = {16, 8}}](out, w, hgt)
  local t = out:totable()
  for r = 1, hgt do
    for c = 1, w do
      if t[r][c] ~= (r - 1) * 1000 + (c - 1) then
        error(string.format("out[%d][%d] = %d", r, c, t[r][c]))
      end
    end
  end
end)

h.test("dynamic shared memory", function()
  local rev = cuda.jit("reverse_blocks(const float *in, float *out)", [[
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = tile[blockDim.x - 1 - threadIdx.x];
  ]])
  local bs, nb = 128, 7
  local xs = h.random_floats(bs * nb)
  local out = cuda.full(bs * nb, h.POISON, "f32")
  rev[{nb, bs, shared = bs * 4}](cuda.to_device(xs, "f32"), out)
  local got = out:copy_to_host()
  for blk = 0, nb - 1 do
    for t = 0, bs - 1 do
      local want = f32(xs[blk * bs + (bs - 1 - t) + 1])
      if got[blk * bs + t + 1] ~= want then error("element " .. (blk * bs + t + 1)) end
    end
  end
end)

h.test("forall covers n with the suggested block size", function()
  local sq = cuda.jit("square(const double *x, double *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
  ]])
  local n = 100000 + math.random(0, 999)
  local xs = h.random_floats(n)
  local y = cuda.full(n, h.POISON, "f64")
  sq:forall(n)(cuda.to_device(xs, "f64"), y, n)
  local got = y:copy_to_host()
  for i = 1, n do if got[i] ~= xs[i] * xs[i] then error("y[" .. i .. "]") end end
  local block, min_grid = sq:suggest_block()
  h.check(block > 0 and block <= 1024 and min_grid > 0, "suggest_block")
end)

h.test("host arrays and tables are copied in, and out unless const", function()
  local saxpy = cuda.jit("saxpy(float a, const float *x, float *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
  ]])
  local n = 300
  local xs, ys = h.random_floats(n), h.random_floats(n)
  local hx, hy = cuda.array(xs, "f32"), cuda.array(ys, "f32")
  saxpy[{blocks(n, 64), 64}](2.0, hx, hy, n)
  for i = 1, n do h.eq(hy[i], f32(2 * f32(xs[i]) + f32(ys[i])), "host y[" .. i .. "]") end
  for i = 1, n do h.eq(hx[i], f32(xs[i]), "host x unchanged") end
  local ty = {}
  for i = 1, n do ty[i] = ys[i] end
  saxpy[{blocks(n, 64), 64}](3.0, xs, ty, n)
  for i = 1, n do h.near(ty[i], 3 * f32(xs[i]) + f32(ys[i]), 1e-6, "table y[" .. i .. "]") end
  -- const parameters are not copied back, even if the kernel writes through them
  local sneaky = cuda.jit("sneaky(const float *x)", "((float *)x)[0] = 99.0f;")
  local tx = {1, 2}
  sneaky[{1, 1}](tx)
  h.eq(tx[1], 1, "const table not copied back")
end)

h.test("integer scalars keep every bit", function()
  local k = cuda.jit("put64(long long a, unsigned long long b, long long *out, unsigned long long *uout)",
                     "out[0] = a; uout[0] = b;")
  local out, uout = cuda.full(1, 0, "i64"), cuda.full(1, 0, "u64")
  local a = math.mininteger + math.random(1, 1000)
  k[{1, 1}](a, math.maxinteger, out, uout)
  h.eq(out:copy_to_host()[1], a, "i64")
  h.eq(uout:copy_to_host()[1], math.maxinteger, "u64")
  k[{1, 1}](a, 2.0 ^ 63, out, uout)
  h.eq(uout:copy_to_host()[1], math.mininteger, "u64 2^63 (wraps when read into Lua)")
end)

h.test("device array dtype mismatch names the parameter", function()
  h.raises("bad argument #1 'a' to 'vadd' (f32 array expected, got f64 device array)",
           vadd[{1, 32}], cuda.zeros(4, "f64"), cuda.zeros(4), cuda.zeros(4), 4)
end)

h.test("copies between device, host and tables, per dtype", function()
  for _, dt in ipairs {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                       "u64"} do
    local n = 50 + math.random(0, 50)
    local lo = (dt:sub(1, 1) == "u") and 0 or -100
    local src = h.random_ints(n, lo, 100)
    local d = cuda.to_device(src, dt)
    local where = cuda.device().ordinal == -1 and "the CPU device" or "device " .. cuda.device().ordinal
    h.eq(tostring(d), string.format("cujit.device_array %s[%d] on %s", dt, n, where), "tostring")
    h.eq(#d, n, "#d")
    h.same(d:totable(), src, nil, dt .. " totable")
    local host = cuda.host_array(n, dt)
    d:copy_to_host(host)
    h.same(host:totable(), src, nil, dt .. " copy_to_host(h)")
    local e = cuda.device_array(n, dt):copy_from(d)
    h.same(e:totable(), src, nil, dt .. " copy_from device")
    e:copy_from(cuda.array(src, dt))
    h.same(e:totable(), src, nil, dt .. " copy_from host")
    e:copy_from(src)
    h.same(e:copy():totable(), src, nil, dt .. " copy_from table, copy")
    e:fill(7)
    for i, v in ipairs(e:totable()) do if v ~= 7 then error(dt .. " fill " .. i) end end
    local z = cuda.zeros(n, dt)
    for _, v in ipairs(z:totable()) do h.eq(v, 0, dt .. " zeros") end
  end
  h.raises("same dtype and element count", cuda.zeros(3, "f32").copy_from, cuda.zeros(3, "f32"), cuda.zeros(4, "f32"))
  h.raises("cannot copy f32[3] into i32[3]", cuda.zeros(3, "f32").copy_to_host, cuda.zeros(3, "f32"),
           cuda.host_array(3, "i32"))
end)

h.test("2-D device arrays, reshape views", function()
  local t = {{1, 2, 3}, {4, 5, 6}}
  local d = cuda.to_device(t, "i32")
  h.same(d.shape, {2, 3}, nil, "shape")
  local v = d:reshape(3, 2)
  h.same(v:totable()[3], {5, 6}, nil, "reshaped rows")
  h.same(d:reshape{6}:totable(), {1, 2, 3, 4, 5, 6}, nil, "flat view")
  h.raises("cannot reshape", d.reshape, d, 4)
  d:free()
  h.raises("freed", v.totable, v)
  h.contains(tostring(v), "(freed)", "view of a freed array")
end)

h.test("free, __close and allocated()", function()
  local before = cuda.allocated()
  local a = cuda.device_array(1 << 20, "f32")
  h.eq(cuda.allocated(), before + 4 * (1 << 20), "allocated grows by the buffer")
  a:free()
  h.eq(cuda.allocated(), before, "free gives it back")
  a:free()
  h.eq(tostring(a), "cujit.device_array f32[1048576] (freed)", "tostring after free")
  h.raises("device array has been freed", a.copy_to_host, a)
  do
    local b <close> = cuda.zeros(1 << 20)
    h.eq(cuda.allocated(), before + 4 * (1 << 20), "closed later")
  end
  h.eq(cuda.allocated(), before, "__close freed it")
  local free, total = cuda.memory()
  h.check(free > 0 and free <= total, "memory()")
  h.check(math.type(cuda.zeros(4):devptr()) == "integer", "devptr")
end)

h.test("streams: async copies, launches, query, synchronize", function()
  local s = cuda.stream()
  local where = cuda.device().ordinal == -1 and "the CPU device" or "device " .. cuda.device().ordinal
  h.eq(tostring(s), "cujit.stream on " .. where, "tostring")
  local n = 1 << 16
  local xs = h.random_floats(n)
  local hx = cuda.array(xs, "f32", {pinned = true})
  local dx = cuda.to_device_async(hx, s)
  local dy = cuda.full(n, h.POISON, "f32")
  vadd[{blocks(n, 256), 256, stream = s}](dx, dx, dy, n)
  local hy = dy:copy_to_host_async(s)
  h.eq(hy.pinned, true, "async result is pinned")
  s:synchronize()
  h.eq(s:query(), true, "query after synchronize")
  for i = 1, n do if hy[i] ~= 2 * f32(xs[i]) then error("hy[" .. i .. "]") end end
  s:free()
  h.raises("stream has been freed", s.synchronize, s)
end)

h.test("events time GPU work", function()
  local e1, e2 = cuda.event(), cuda.event()
  local n = 1 << 20
  local a = cuda.zeros(n)
  e1:record()
  for _ = 1, 10 do vadd[{blocks(n, 256), 256}](a, a, a, n) end
  h.eq(e2:record(), e2, "record returns the event")
  e2:synchronize()
  h.eq(e2:query(), true, "query")
  local ms = e1:elapsed(e2)
  h.check(ms >= 0, "elapsed >= 0")
  h.eq(cuda.elapsed(e1, e2), ms, "cuda.elapsed")
  local s = cuda.stream()
  local e3 = cuda.event():record(s)
  s:wait(e3)
  s:synchronize()
  cuda.synchronize()
end)

h.test("kernel attributes", function()
  local a = vadd:attributes()
  h.check(a.registers > 0 or cuda.device().arch == "cpu", "registers (none counted on the CPU device)")
  h.check(a.max_threads_per_block > 0 and a.max_threads_per_block <= 1024, "max threads")
  h.eq(a.static_shared_bytes, 0, "no static shared memory")
  local dev = cuda.device()
  if dev.arch == "cpu" then
    h.eq(dev.ordinal, -1, "the CPU device's ordinal")
  else
    h.eq(dev.ordinal, 0, "current device")
    h.eq(cuda.device(0).ordinal, 0, "set device 0")
  end
  h.raises("device ordinals start at 0", cuda.device, -2)
end)

h.test("launch limits are reported by the engine", function()
  local n = 4
  local a = cuda.zeros(n)
  h.raises({}, vadd[{1, 4096}], a, a, a, n)
  local ok = cuda.status()
  h.eq(ok, true, "a refused launch does not poison the device")
end)

h.run()
