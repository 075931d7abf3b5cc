-- test_args.lua -- the arguments real code passes (issue 22): the standard typedefs as parameter
-- types, each carrying a value that needs its full width; NULL (nil) for any pointer, and the
-- nonnull option that refuses it by name; static and namespaced __constant__/__device__
-- variables filled with m:global and read by a kernel; structs by value past the classic 4 KiB
-- of parameters. Sources in tests/realcuda/arguments.cu, run on the GPU (on the CPU device
-- without one) against the host's results; NVRTC's view is also checked for sm_90 when it is
-- there.
local h = require "helper"
local cuda = require "cujit"

local dir = h.here() .. "../realcuda/"
h.need_gpu(cuda)
local on_cpu = cuda.device().arch == "cpu"
local has_nvrtc = cuda.version().nvrtc ~= nil

local function host(a)
  local t, hst = {}, a:copy_to_host()
  for i = 1, #hst do t[i] = hst[i] end
  return t
end

-- Each value needs its parameter's whole width: past 2^32 for the 64-bit ones, negative for the
-- signed ones, past the signed range for the unsigned ones.
local widths = {
  {"started", "i64", -(1 << 40) - 7}, {"bytes", "u64", (1 << 40) + 3},
  {"delta", "i64", -(1 << 42) + 1}, {"handle", "i64", -(1 << 43) - 5},
  {"address", "u64", (1 << 47) + 11}, {"big", "i64", -(1 << 50) - 1},
  {"ubig", "u64", (1 << 62) + 9}, {"small", "i16", -30001}, {"wide", "u64", (1 << 55) + 13},
  {"tiny", "i8", -101}, {"fast", "u64", (1 << 60) + 17}, {"i8", "i8", -128},
  {"u16", "u16", 65000}, {"i32", "i32", -2000000001}, {"u64", "u64", (1 << 61) + 19},
}

local function check_width_params(k, where)
  local p = k:params()
  for i, w in ipairs(widths) do
    h.eq(p[i].name, w[1], where .. " parameter " .. i)
    h.eq(p[i].dtype, w[2], where .. " " .. w[1] .. "'s dtype")
  end
end

h.test("the standard typedefs: each sized as the target sizes it, each value whole", function()
  local m = cuda.load(dir .. "arguments.cu")
  check_width_params(m.echo_widths, "this device:")
  local out = cuda.zeros(#widths, "i64")
  local args = {}
  for i, w in ipairs(widths) do args[i] = w[3] end
  args[#args + 1] = out
  m.echo_widths[{1, 32}](table.unpack(args))
  local want = {}
  for i, w in ipairs(widths) do want[i] = w[3] end
  h.same(host(out), want, nil, "the values the kernel received")
  h.raises({"'u16'", "65536"}, function()
    args[13] = 65536
    m.echo_widths[{1, 32}](table.unpack(args))
  end)
  if has_nvrtc then -- NVRTC's libcu++ spells them otherwise (long long); the sizes agree
    check_width_params(cuda.load(dir .. "arguments.cu", {arch = "sm_90"}).echo_widths, "sm_90:")
  end
end)

h.test("uint, ushort, uchar, ulong, longlong and clock_t in a signature", function()
  local k = cuda.jit("echo_short(clock_t c, uint u, ushort us, uchar uc, ulong ul, longlong ll, " ..
                     "ulonglong ull, long long *out)", [[
  out[0] = c; out[1] = u; out[2] = us; out[3] = uc;
  out[4] = (long long)ul; out[5] = ll; out[6] = (long long)ull;
]])
  local want = {-(1 << 40) - 3, 4000000000, 65000, 250, (1 << 50) + 3, -(1 << 45) - 1,
                (1 << 62) + 5}
  local types = {"clock_t", "unsigned int", "unsigned short", "unsigned char", "unsigned long",
                 "long long", "unsigned long long"}
  for i, t in ipairs(types) do h.eq(k:params()[i].type, t, "parameter " .. i) end
  local out = cuda.zeros(7, "i64")
  k[{1, 1}](want[1], want[2], want[3], want[4], want[5], want[6], want[7], out)
  h.same(host(out), want, nil, "the values the kernel received")
  h.raises({"'us'", "does not fit"}, k[{1, 1}], 0, 0, -1, 0, 0, 0, 0, out)
end)

local function axpb_reference(a, x, bias)
  local y = {}
  for i = 1, #x do y[i] = h.f32(h.f32(a * x[i]) + (bias and bias[i] or 0)) end
  return y
end

h.test("nil for a pointer the kernel checks for null, without '= NULL'", function()
  local m = cuda.load(dir .. "arguments.cu")
  h.check(m.axpb:params()[4].nullable, "bias takes nil")
  local n = 1000
  local xs, bs = h.random_floats(n), h.random_floats(n)
  for i = 1, n do xs[i], bs[i] = h.f32(xs[i]), h.f32(bs[i]) end
  local x, bias, y = cuda.to_device(xs, "f32"), cuda.to_device(bs, "f32"), cuda.zeros(n, "f32")
  local grid = {(n + 127) // 128, 128}
  m.axpb[grid](n, 1.5, x, nil, y)
  h.same(host(y), axpb_reference(1.5, xs, nil), 1e-6, "a * x with no bias")
  m.axpb[grid](n, -2, x, bias, y)
  h.same(host(y), axpb_reference(-2, xs, bs), 1e-6, "a * x + bias")
  -- The refusals that matter stay: an array of another dtype, a number for a pointer.
  h.raises({"'bias'", "i32"}, m.axpb[grid], n, 1, x, cuda.zeros(n, "i32"), y)
  h.raises({"'x'"}, m.axpb[grid], n, 1, 7, nil, y)
end)

h.test("the nonnull option refuses nil for the parameters it names, and only those", function()
  local m = cuda.load(dir .. "arguments.cu", {nonnull = {"x", "y"}})
  local n = 64
  local x, y = cuda.to_device(h.random_floats(n), "f32"), cuda.zeros(n, "f32")
  h.check(not m.axpb:params()[3].nullable, "x does not take nil")
  h.check(m.axpb:params()[4].nullable, "bias still does")
  h.raises({"#3 'x'", "nonnull"}, m.axpb[{1, 64}], n, 1, nil, nil, y)
  h.raises({"#5 'y'", "nonnull"}, m.axpb[{1, 64}], n, 1, x, nil, nil)
  m.axpb[{1, 64}](n, 1, x, nil, y) -- bias is not named
  h.same(host(y), host(x), nil, "1 * x")
  local all = cuda.load(dir .. "arguments.cu", {nonnull = true})
  h.raises({"'bias'", "nonnull"}, all.axpb[{1, 64}], n, 1, x, nil, y)
  h.raises({"nonnull", "'biass'", "axpb.bias"}, cuda.load, dir .. "arguments.cu",
           {nonnull = {"biass"}})
  local k = cuda.jit("copy_opt(const float *src, float *dst)", "dst[0] = src ? src[0] : -1.0f;",
                     {nonnull = {"dst"}})
  local one = cuda.zeros(1, "f32")
  k[{1, 1}](nil, one)
  h.same(host(one), {-1}, nil, "a signature's pointer takes nil too")
  h.raises({"'dst'", "nonnull"}, k[{1, 1}], one, nil)
  h.raises({"nonnull", "'n'"}, cuda.jit, "k2(float *a, int n)", "a[0] = n;", {nonnull = {"n"}})
  h.raises({"nonnull", "elementwise"}, cuda.elementwise, "float x -> float y", "y = x",
           {nonnull = true})
end)

h.test("static and namespaced __constant__/__device__ variables by name", function()
  local m = cuda.load(dir .. "arguments.cu")
  local weights = {0.0625, 0.25, 0.375, 0.25, 0.0625}
  local taps = m:global("taps")
  h.eq(taps.size, 9, "taps[MAX_TAPS]")
  local t = {}
  for i = 1, 9 do t[i] = weights[i] or 0 end
  taps:copy_from(t)
  m:global("filter::gain"):copy_from({2})
  m:global("filter::offset"):copy_from({-0.5})
  m:global("filter::radius"):copy_from({2})
  local n = 777
  local xs = h.random_floats(n)
  for i = 1, n do xs[i] = h.f32(xs[i]) end
  local out = cuda.zeros(n, "f32")
  m.smooth[{(n + 127) // 128, 128}](cuda.to_device(xs, "f32"), out, n)
  local want = {}
  for i = 1, n do
    local acc = 0
    for k = -2, 2 do acc = acc + weights[k + 3] * xs[math.min(math.max(i + k, 1), n)] end
    want[i] = 2 * acc - 0.5
  end
  h.same(host(out), want, 1e-5, "the filter with the host's coefficients")
  h.raises({"no __device__", "'filter::nosuch::radius'"}, m.global, m, "filter::nosuch::radius")
  h.raises({"no __device__", "'gain'"}, m.global, m, "gain") -- in its namespace only
end)

-- Structs by value past the classic 4 KiB: 8 KiB and 32000 bytes (CUDA 12.1+ allows 32764 on
-- Volta and newer), summed in the kernel in order, in double, as the host sums them.
local big_source = [[
struct Coeffs8K { float c[2048]; };
struct Coeffs32K { float c[8000]; };
__global__ void sum8k(Coeffs8K w, double *out) {
  if (threadIdx.x != 0) return;
  double s = 0;
  for (int i = 0; i < 2048; i++) s += w.c[i];
  out[0] = s;
}
__global__ void sum32k(Coeffs32K w, double *out) {
  if (threadIdx.x != 0) return;
  double s = 0;
  for (int i = 0; i < 8000; i++) s += w.c[i];
  out[0] = s;
}
]]
local too_big_source = [[
struct TooBig { float c[8200]; }; // 32800 bytes
__global__ void too_big(TooBig w, double *out) { out[0] = w.c[0]; }
]]

local function packed(n)
  local v, sum = {}, 0
  for i = 1, n do v[i] = h.f32(math.random() * 2 - 1); sum = sum + v[i] end
  return string.pack(string.rep("f", n), table.unpack(v)), sum
end

h.test("structs by value of 8 KiB and 32000 bytes, and one past the limit refused", function()
  if has_nvrtc then
    local m = cuda.source(big_source, {arch = "sm_90"})
    h.eq(m.sum8k:params()[1].size, 8192, "Coeffs8K sized from the PTX")
    h.eq(m.sum32k:params()[1].size, 32000, "Coeffs32K sized from the PTX")
    h.raises({"too_big", "32764"}, cuda.source, too_big_source, {arch = "sm_90"})
  end
  local m = cuda.source(big_source)
  local out = cuda.zeros(1, "f64")
  for _, case in ipairs{{m.sum8k, 2048}, {m.sum32k, 8000}} do
    local bytes, sum = packed(case[2])
    local ok, err = pcall(case[1][{1, 32}], bytes, out)
    if on_cpu and not ok then -- the CPU device cannot size a struct yet (its own issue)
      h.contains(err, "signatures option", "the CPU device's refusal")
    else
      h.check(ok, err)
      h.same(host(out), {sum}, nil, case[2] * 4 .. " bytes summed")
    end
  end
end)

h.run()
