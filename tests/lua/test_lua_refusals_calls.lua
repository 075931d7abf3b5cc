-- test_lua_refusals_calls.lua -- refusals of the binding that no test reached, second pass
-- (issue 28; the engine's own: c.test_refusals_calls): each with its whole message, next to the
-- bound it guards (the last value accepted), the array left as it was. Host array stores one
-- past either end and out of the dtype's range, a freed host array, reshapes to another element
-- count, a:cols of arrays that are not matrices, what a strided view of columns cannot do
-- (reduce, launch), and specialising a kernel with no type variables or with too few or too many
-- dtypes. On a GPU when there is one, else on the CPU device.
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

h.run()
