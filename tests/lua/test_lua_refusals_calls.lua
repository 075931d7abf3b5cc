-- test_lua_refusals_calls.lua -- refusals of the binding that no test reached, second pass
-- (issue 28; the engine's own: c.test_refusals_calls): each with its whole message, next to the
-- bound it guards (the last value accepted), the array left as it was. Host array stores one
-- past either end and out of the dtype's range, a freed host array, reshapes to another element
-- count, a:cols of arrays that are not matrices, what a strided view of columns cannot do
-- (reduce, launch), and specialising a kernel with no type variables or with too few or too many
-- dtypes. A third pass (the coverage map's refusals no test executed): copies from what is not
-- an array, images wider than PNG's side, compile options of the wrong type, shapes past memory,
-- a launcher whose stream was freed, globals smaller than the view asked, untyped globals reduced,
-- a generic kernel's globals, and a kernel of exactly 128 parameters launched (129 refused). On a
-- GPU when there is one, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

h.test("host array stores past either end or out of range are refused", function()
  local a = cuda.host_array(10, "u8")
  for i = 1, 10 do a[i] = i end
  for _, i in ipairs({0, -1, 11}) do
    h.raises(string.format("index %d out of range for a host array of 10 elements (1 to 10)", i),
             function() a[i] = 1 end)
  end
  h.raises("cannot store into host array at index 10: value 256 out of range for u8 (0 to 255)",
           function() a[10] = 256 end)
  h.raises("cannot store into host array at index 1: value -1 out of range for u8 (0 to 255)",
           function() a[1] = -1 end)
  h.raises("cannot store into host array at index 1: number has no integer representation",
           function() a[1] = 1.5 end)
  h.eq(a[0], nil, "a[0] reads nil")
  h.eq(a[11], nil, "a[11] reads nil")
  for i = 1, 10 do h.eq(a[i], i, "a[" .. i .. "] after the refused stores") end
  a[10], a[1] = 255, 0 -- the ends, and the dtype's bounds
  h.eq(a[10], 255, "a[10]")
  h.eq(a[1], 0, "a[1]")
  a:free()
  h.raises("host array has been freed", function() return a[1] end)
end)

h.test("reshapes to another element count are refused", function()
  local a = cuda.to_device({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "i32")
  h.raises("cannot reshape 12 elements into a shape of 10", a.reshape, a, 2, 5)
  h.raises("cannot reshape 12 elements into a shape of 13", a.reshape, a, {13})
  h.raises("cannot reshape 12 elements into a shape of 24", a.reshape, a, 2, 3, 4)
  local m = a:reshape(3, 4)
  h.same(m.shape, {3, 4}, nil, "shape")
  h.same(m:totable()[3], {9, 10, 11, 12}, nil, "the last row")
end)

h.test("a:cols needs a matrix; a strided view of columns neither reduces nor launches", function()
  local v = cuda.zeros(6, "f32")
  h.raises("a:cols needs a 2-D array, this one has 1 dimension (use a:slice)", v.cols, v, 1)
  local cube = cuda.zeros({2, 2, 2}, "f32")
  h.raises("a:cols needs a 2-D array, this one has 3 dimensions (use a:slice)", cube.cols, cube, 1)
  local m = cuda.to_device({{1, 2, 3}, {4, 5, 6}}, "f32")
  local c = m:cols(2, 3)
  h.same(c.shape, {2, 2}, nil, "shape of columns 2..3")
  h.eq(c.contiguous, false, "columns 2..3 are strided")
  h.raises("a strided view (columns of a matrix) has no 'sum': kernels, reductions and "
           .. "elementwise kernels need contiguous memory; v:copy() makes a contiguous array",
           function() return c:sum() end)
  h.eq(c:copy():sum(), 2 + 3 + 5 + 6, "the copy of columns 2..3 sums")
  local scale = cuda.jit("scale(float *x, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 10.0f;
  ]])
  h.raises("bad argument #1 'x' to 'scale' (cujit.device_array expected (or a host array or "
           .. "table, copied in and out), got cujit.strided_view (columns of a matrix, not "
           .. "contiguous: v:copy() makes a contiguous array))", scale[{1, 32}], c, 4)
  h.same(m:totable()[2], {4, 5, 6}, nil, "the matrix after the refused launch")
  local whole = m:cols(1, 3) -- every column: contiguous, launches
  scale[{1, 32}](whole, 6)
  h.same(m:totable()[2], {40, 50, 60}, nil, "every column is the matrix itself")
end)

h.test("specialising needs a generic kernel and one dtype per type variable", function()
  local concrete = cuda.jit("twice(float *x, int n)", "if (threadIdx.x < n) x[threadIdx.x] *= 2;")
  h.raises("'twice' is not generic (it has no type variables left to bind)", concrete.specialize,
           concrete, "f32")
  h.raises("'twice' is not generic (it has no type variables left to bind)",
           concrete.specialize_all, concrete, {"f32"})
  local axpy = cuda.jit("axpy(T a, const T *x, T *y, int n)",
                        "if (threadIdx.x < n) y[threadIdx.x] += a * x[threadIdx.x];")
  h.raises("'axpy' has 1 type variable(s): give one dtype for each", axpy.specialize, axpy)
  h.raises("'axpy' has 1 type variable(s): give one dtype for each", axpy.specialize, axpy, "f32",
           "f64")
  local s = axpy:specialize("f64")
  h.raises("is not generic (it has no type variables left to bind)", s.specialize, s, "f64")
  local x, y = cuda.to_device({1, 2, 3}, "f64"), cuda.to_device({10, 20, 30}, "f64")
  s[{1, 32}](2, x, y, 3)
  h.same(y:totable(), {12, 24, 36}, nil, "the f64 specialisation runs")
end)

h.test("a copy from what is not an array, and images past 65536 pixels a side", function()
  local a = cuda.to_device({1, 2, 3, 4}, "f32")
  h.raises({"bad argument #2", "(table, cujit.host_array or cujit.device_array "
           .. "expected, got string)"}, a.copy_from, a, "1234")
  h.raises({"bad argument #2", "(table, cujit.host_array or cujit.device_array "
           .. "expected, got number)"}, a.copy_from, a, 5)
  h.same(a:totable(), {1, 2, 3, 4}, nil, "the array after the refused copies")
  local path = h.tmpname(".png")
  for _, shape in ipairs({{1, 65537}, {65537, 1}}) do
    h.raises({"bad argument #2", "(images are limited to 65536 pixels a side)"},
             cuda.image.write, path, cuda.zeros(shape, "u8"))
  end
  h.eq(io.open(path), nil, "nothing written")
  cuda.image.write(path, cuda.zeros({1, 65536}, "u8")) -- the widest accepted
  local back = cuda.image.read(path)
  h.eq(back.shape[1] .. "x" .. back.shape[2], "1x65536", "the widest image read back")
  os.remove(path)
end)

h.test("compile options of the wrong type, and shapes past any memory", function()
  local src = 'extern "C" __global__ void k(int *x) { x[0] = N; }'
  h.raises({"bad argument #2", "(option 'defines' must be a table ({'NAME', "
           .. "'NAME=value'} or {NAME = value}))"}, cuda.source, src, {defines = "N=1"})
  h.raises({"bad argument #2", "(option 'uses' must be a table of "
           .. "cuda.device_function objects)"}, cuda.source, src, {defines = {N = 1}, uses = 5})
  h.raises({"bad argument #3", "(option 'uses' must be a table of cuda.device_function "
           .. "objects)"}, cuda.jit, "k(int *x)", "x[0] = 1;", {uses = 5})
  h.raises({"bad argument #3", "(option 'uses'[2] must be a cujit.device_function, got "
           .. "string)"}, cuda.jit, "k(int *x)", "x[0] = 1;",
           {uses = {cuda.device_function("__device__ int one() { return 1; }"), "two"}})
  local big = {2 ^ 30, 2 ^ 30, 2 ^ 30}
  h.raises({"bad argument #1", "(shape too large)"}, cuda.zeros, big)
  h.raises({"bad argument #1", "(shape too large)"}, cuda.host_array, big)
  h.raises({"bad argument #1", "(shape too large)"}, cuda.zeros, {2 ^ 31, 2 ^ 31})
end)

h.test("a launcher whose stream was freed refuses, the kernel still launches elsewhere", function()
  local k = cuda.jit("ones(float *x)", "x[threadIdx.x] = 1.0f;")
  local s = cuda.stream()
  local a = cuda.zeros(4, "f32")
  local on_s = k[{1, 4, stream = s}]
  on_s(a)
  s:synchronize()
  h.same(a:totable(), {1, 1, 1, 1}, nil, "the launch on the live stream")
  a:fill(0)
  s:free()
  h.raises("the stream of this launch of 'ones' has been freed", on_s, a)
  h.same(a:totable(), {0, 0, 0, 0}, nil, "nothing ran")
  k[{1, 4}](a)
  h.same(a:totable(), {1, 1, 1, 1}, nil, "the default stream's launcher")
end)

h.test("globals: a view larger than the variable, untyped bytes, a generic kernel's", function()
  local p = cuda.source("__device__ int taps[4] = {1, 2, 3, 4};\n"
                        .. "struct pair { int a; float b; };\n"
                        .. "__device__ pair pp = {5, 6.0f};\n"
                        .. 'extern "C" __global__ void q(int *x) { x[0] = taps[0] + pp.a; }')
  h.raises("the global 'taps' holds 16 bytes, fewer than the 64 bytes of the dtype and shape "
           .. "given", p.global, p, "taps", "f64", {8})
  h.raises("the global 'taps' holds 16 bytes, fewer than the 20 bytes of the dtype and shape "
           .. "given", p.global, p, "taps", "i32", {5})
  h.same(p:global("taps", "i32", {4}):totable(), {1, 2, 3, 4}, nil, "exactly its size")
  local bytes = p:global("pp")
  h.eq(bytes.dtype, "bytes", "a struct's global is untyped")
  h.raises("(the array holds untyped bytes; give it an element type)",
           bytes.sum, bytes)
  local g = cuda.jit("fill(T *x)", "x[0] = v;", {preamble = "__device__ int v = 3;"})
  h.raises("kernel 'fill' is generic: specialise it first (k:specialize{...}), each "
           .. "specialisation has its own globals", g.global, g, "v")
  h.same(g:specialize("i32"):global("v", "i32"):totable(), {3}, nil, "a specialisation's global")
end)

h.test("a kernel of 128 parameters launches; 129 are refused", function()
  local function params(n)
    local t = {}
    for i = 1, n do t[i] = "int a" .. i end
    return table.concat(t, ", ")
  end
  local k = cuda.jit("widest(int *out, " .. params(127) .. ")", "out[0] = a1 + a64 + a127;")
  local out, args = cuda.zeros(1, "i32"), {}
  for i = 1, 127 do args[i] = i end
  k[{1, 1}](out, table.unpack(args))
  h.eq(out:totable()[1], 1 + 64 + 127, "the first, a middle and the last argument arrive")
  h.raises("more than 128 parameters, the most cujit launches", cuda.jit,
           "wider(int *out, " .. params(128) .. ")", "out[0] = a1;")
end)

h.run()
