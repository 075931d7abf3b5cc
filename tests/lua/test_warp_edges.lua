-- test_warp_edges.lua -- the edges of the warp intrinsics, barriers and atomics that
-- test_warp_semantics.lua leaves: every shuffle (int, unsigned, float, double, long long) at every
-- width with each lane's own source lane, delta or lane mask, negative and past 31 (PTX's shfl.sync
-- reads only b[4:0]); partial warps (blocks of 48 and 19 threads) where votes, reductions,
-- matches, __activemask and shuffles take the lanes that exist; lanes that returned early and
-- __activemask; predicates of other types (CUDA's `int predicate`: 0.5f and 1ll << 32 are false);
-- and one thread's atomics in a known order, so that each old value is checked in sequence
-- (atomicInc/atomicDec against a limit that changes each call, CAS hits and misses, the _block
-- and _system forms, INT_MIN/INT_MAX/UINT_MAX and the 64-bit ends). Every expected value is
-- computed here from CUDA's and PTX's definitions. On a GPU when there is one (which then checks
-- these expectations against the hardware), else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local SRC = [[
// Each lane's own argument for each shuffle kind (arg[round * n + t]), at each width, for five
// types; the 64-bit and floating-point values are derived from the int one.
template <class T> __device__ void shuffles_of(T v, const int *arg, T *out, int t, int n,
                                               int rounds) {
  for (int r = 0; r < rounds; r++) {
    int a = arg[(r * n + t) * 4];
    unsigned up = (unsigned)arg[(r * n + t) * 4 + 1], down = (unsigned)arg[(r * n + t) * 4 + 2];
    int x = arg[(r * n + t) * 4 + 3];
    for (int wi = 0; wi < 6; wi++) {
      int w = 1 << wi;
      T *o = out + ((r * n + t) * 6 + wi) * 4;
      o[0] = __shfl_sync(0xffffffffu, v, a, w);
      o[1] = __shfl_up_sync(0xffffffffu, v, up, w);
      o[2] = __shfl_down_sync(0xffffffffu, v, down, w);
      o[3] = __shfl_xor_sync(0xffffffffu, v, x, w);
    }
  }
}
extern "C" __global__ void shuffle_types(const int *x, const int *arg, int rounds, int *oi,
                                         unsigned *ou, float *of, double *od, long long *ol) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  int v = x[t];
  shuffles_of<int>(v, arg, oi, t, n, rounds);
  shuffles_of<unsigned>((unsigned)v ^ 0x80000000u, arg, ou, t, n, rounds);
  shuffles_of<float>((float)v * 0.25f, arg, of, t, n, rounds);
  shuffles_of<double>((double)v * 1024.0 + 0.5, arg, od, t, n, rounds);
  shuffles_of<long long>(((long long)v << 32) - t, arg, ol, t, n, rounds);
}

// A partial warp: the mask is the lanes that exist (what __activemask() gives in converged code).
extern "C" __global__ void partial(const int *v, const int *pred, const int *src, unsigned *out) {
  int t = threadIdx.x, lane = t & 31, base = t - lane;
  int lanes = blockDim.x - base < 32 ? blockDim.x - base : 32;
  unsigned mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
  int s = v[t], p = pred[t], q = 7;
  unsigned u = (unsigned)s, *o = out + 20 * t;
  o[0] = __activemask();
  o[1] = __ballot_sync(mask, p);
  o[2] = __any_sync(mask, p) != 0;
  o[3] = __all_sync(mask, p) != 0;
  o[4] = (unsigned)__reduce_add_sync(mask, s);
  o[5] = (unsigned)__reduce_min_sync(mask, s);
  o[6] = (unsigned)__reduce_max_sync(mask, s);
  o[7] = __reduce_min_sync(mask, u);
  o[8] = __reduce_max_sync(mask, u);
  o[9] = __reduce_and_sync(mask, u);
  o[10] = __reduce_or_sync(mask, u);
  o[11] = __reduce_xor_sync(mask, u);
  o[12] = __match_any_sync(mask, s & 3);
  o[13] = __match_all_sync(mask, s & 1, &q);
  o[14] = (unsigned)q;
  o[15] = (unsigned)__shfl_sync(mask, s, src[t]);          // src: a lane that exists, +- 32k
  o[16] = (unsigned)__shfl_up_sync(mask, s, (unsigned)lane % 5u + 32u * (lane % 3u), 8);
  o[17] = (unsigned)__syncthreads_count(p);
  o[18] = (unsigned)__syncthreads_and(p);
  o[19] = (unsigned)__syncthreads_or(p);
}

// Lanes at or past `keep` return at once; the others see the warp without them: __activemask,
// and the votes, reductions and matches of the full mask, which CUDA defines over the lanes of
// the mask that have not exited.
extern "C" __global__ void early_exit(int keep, unsigned *out) {
  int lane = threadIdx.x & 31, q = 9;
  if (lane >= keep) return;
  unsigned m = __activemask(), *o = out + 8 * threadIdx.x;
  o[0] = m;
  o[1] = __ballot_sync(m, lane & 1);
  o[2] = __ballot_sync(0xffffffffu, lane % 3 == 0);
  o[3] = __all_sync(0xffffffffu, lane < keep) != 0;
  o[4] = __reduce_add_sync(0xffffffffu, (unsigned)lane + 1u);
  o[5] = (unsigned)__reduce_min_sync(0xffffffffu, -lane);
  o[6] = __match_all_sync(0xffffffffu, keep, &q);
  __syncwarp();
  o[7] = (unsigned)q;
}

// Predicates of other types, which CUDA converts to its `int predicate`: f as float (0.5f is 0),
// d as double, l as long long (1ll << 32 is 0). One warp, and the block's barriers.
extern "C" __global__ void predicates(const float *f, const double *d, const long long *l,
                                      int *out) {
  int t = threadIdx.x;
  int *o = out + 9 * t;
  o[0] = (int)__ballot_sync(0xffffffffu, f[t]);
  o[1] = (int)__ballot_sync(0xffffffffu, d[t]);
  o[2] = (int)__ballot_sync(0xffffffffu, l[t]);
  o[3] = __any_sync(0xffffffffu, f[t]) != 0;
  o[4] = __all_sync(0xffffffffu, l[t] | 1) != 0;
  o[5] = __all_sync(0xffffffffu, d[t] + 2.0) != 0;
  o[6] = __syncthreads_count(f[t]);
  o[7] = __syncthreads_and(l[t] | 1);
  o[8] = __syncthreads_or(d[t]);
}

// One thread applies each atomic to its own cell, k times with the i-th values: every old value
// in order, and the cells at the end.
extern "C" __global__ void atomic_sequence(int k, const int *xs, const int *cs,
                                           const unsigned *lims, const long long *ls,
                                           const long long *lcs, const float *fs, int *si,
                                           unsigned *su, long long *sq64, long long *sl,
                                           float *sf, double *sd, int *oi, unsigned *ou,
                                           long long *oq64, long long *ol, float *of,
                                           double *od) {
  // the unsigned 64-bit cells travel as long long (Lua's integers are signed)
  unsigned long long *sq = (unsigned long long *)sq64, *oq = (unsigned long long *)oq64;
  for (int i = 0; i < k; i++) {
    int x = xs[i], c = cs[i];
    unsigned ux = (unsigned)x, uc = (unsigned)c;
    unsigned long long q = (unsigned long long)ls[i], qc = (unsigned long long)lcs[i];
    int *a = oi + 9 * i;
    a[0] = atomicAdd(&si[0], x);
    a[1] = atomicSub(&si[1], x);
    a[2] = atomicExch(&si[2], x);
    a[3] = atomicMin(&si[3], x);
    a[4] = atomicMax_block(&si[4], x);
    a[5] = atomicAnd(&si[5], x);
    a[6] = atomicOr_system(&si[6], x);
    a[7] = atomicXor(&si[7], x);
    a[8] = atomicCAS(&si[8], c, x);
    unsigned *b = ou + 11 * i;
    b[0] = atomicAdd_system(&su[0], ux);
    b[1] = atomicSub(&su[1], ux);
    b[2] = atomicExch(&su[2], ux);
    b[3] = atomicMin(&su[3], ux);
    b[4] = atomicMax(&su[4], ux);
    b[5] = atomicAnd_block(&su[5], ux);
    b[6] = atomicOr(&su[6], ux);
    b[7] = atomicXor(&su[7], ux);
    b[8] = atomicCAS_block(&su[8], uc, ux);
    b[9] = atomicInc(&su[9], lims[i]);
    b[10] = atomicDec(&su[10], lims[i]);
    unsigned long long *e = oq + 8 * i;
    e[0] = atomicAdd(&sq[0], q);
    e[1] = atomicExch(&sq[1], q);
    e[2] = atomicMin(&sq[2], q);
    e[3] = atomicMax(&sq[3], q);
    e[4] = atomicAnd(&sq[4], q);
    e[5] = atomicOr(&sq[5], q);
    e[6] = atomicXor(&sq[6], q);
    e[7] = atomicCAS(&sq[7], qc, q);
    ol[2 * i] = atomicMin(&sl[0], ls[i]);
    ol[2 * i + 1] = atomicMax_system(&sl[1], ls[i]);
    of[2 * i] = atomicAdd(&sf[0], fs[i]);
    of[2 * i + 1] = atomicExch(&sf[1], fs[i]);
    od[i] = atomicAdd_block(&sd[0], (double)fs[i] * 3.0);
  }
}
]]

local function u32(x) return x & 0xffffffff end
local function s32(x)
  x = x & 0xffffffff
  return x >= 0x80000000 and x - 0x100000000 or x
end

local m
local function program()
  m = m or cuda.source(SRC)
  return m
end

h.test("the source compiles for sm_90 with NVRTC (what a GPU runs)", function()
  if not cuda.version().nvrtc then return h.need_nvrtc(cuda) end -- fails where it is required
  local ptx = cuda.source(SRC, {arch = "sm_90"}):ptx()
  for _, name in ipairs({"shuffle_types", "partial", "early_exit", "predicates",
                         "atomic_sequence"}) do
    h.contains(ptx, ".entry " .. name, "the PTX")
  end
end)

-- PTX's shfl.sync (the CUDA wrappers' c operand: width w gives segmask 32 - w, and a clamp of 0
-- for up, 31 otherwise): the lane a lane reads, or its own when none.
local function source(kind, lane, arg, w)
  local b = arg & 31 -- bval = b[4:0]
  local lo = lane & (32 - w) -- minLane
  local hi = kind == "up" and lo or lo | (w - 1) -- maxLane
  local j
  if kind == "idx" then
    j = lo | (b & (w - 1))
  elseif kind == "up" then
    j = lane - b
    return j >= hi and j or lane
  elseif kind == "down" then
    j = lane + b
  else
    j = lane ~ b
  end
  return j <= hi and j or lane
end

h.test("shuffles of five types at every width, arguments negative and past 31", function()
  local N, ROUNDS = 64, 6
  local xs, args = {}, {}
  -- distinct (the lane shows), and exact as float / 4 and double * 1024 + 0.5
  for t = 1, N do xs[t] = math.random(-60000, 60000) * 64 + t - 1 end
  local picks = {0, 31, 32, 33, 63, 64, -1, -31, -32, -33, 0x7fffffff, -0x80000000}
  for i = 1, ROUNDS * N * 4 do
    args[i] = math.random(2) == 1 and picks[math.random(#picks)] or math.random(-100, 100)
  end
  local n4 = ROUNDS * N * 24
  local oi, ou, of = cuda.full(n4, -1, "i32"), cuda.zeros(n4, "u32"), cuda.zeros(n4, "f32")
  local od, ol = cuda.zeros(n4, "f64"), cuda.zeros(n4, "i64")
  program().shuffle_types[{N // 64, 64}](cuda.to_device(xs, "i32"), cuda.to_device(args, "i32"),
                                           ROUNDS, oi, ou, of, od, ol)
  local got = {oi:totable(), ou:totable(), of:totable(), od:totable(), ol:totable()}
  local value = {
    function(x) return x end,
    function(x) return u32(x) ~ 0x80000000 end,
    function(x) return x * 0.25 end,
    function(x) return x * 1024.0 + 0.5 end,
  }
  local names = {"int", "unsigned", "float", "double", "long long"}
  local kinds = {"idx", "up", "down", "xor"}
  local bad, first = 0, nil
  for r = 0, ROUNDS - 1 do
    for t = 0, N - 1 do
      local lane, base = t % 32, t - t % 32
      for wi = 0, 5 do
        local w = 1 << wi
        for k = 1, 4 do
          local arg = args[(r * N + t) * 4 + k]
          local j = base + source(kinds[k], lane, arg, w)
          local o = ((r * N + t) * 6 + wi) * 4 + k
          for ty = 1, 5 do
            local want = ty == 5 and (xs[j + 1] << 32) - j or value[ty](xs[j + 1])
            if got[ty][o] ~= want then
              bad = bad + 1
              first = first or string.format(
                "%s __shfl_%s_sync(%d, width %d) in thread %d: got %s, want %s (lane %d)",
                names[ty], kinds[k], arg, w, t, got[ty][o], want, j - base)
            end
          end
        end
      end
    end
  end
  h.check(bad == 0, string.format("%d wrong shuffles; first: %s", bad, tostring(first)))
end)

-- The reference for one partial warp's lanes `lanes` (0-based lanes 0 .. lanes - 1).
local function partial_expect(v, pred, src, base, lanes, nb, lane)
  local mask = (1 << lanes) - 1
  local ballot, sum, smin, smax = 0, 0, math.maxinteger, math.mininteger
  local umin, umax, uand, uor, uxor = 0xffffffff, 0, 0xffffffff, 0, 0
  local any, allp, count = 0, 1, 0
  local mine, match, all_same = v[base + lane + 1] & 3, 0, true
  for l = 0, lanes - 1 do
    local s, p = v[base + l + 1], pred[base + l + 1] ~= 0
    local u = u32(s)
    if p then ballot, any = ballot | (1 << l), 1 else allp = 0 end
    sum, smin, smax = sum + s, math.min(smin, s), math.max(smax, s)
    if math.ult(u, umin) then umin = u end
    if math.ult(umax, u) then umax = u end
    uand, uor, uxor = uand & u, uor | u, uxor ~ u
    if s & 3 == mine then match = match | (1 << l) end
    if s & 1 ~= v[base + 1] & 1 then all_same = false end
  end
  for i = 1, nb do if pred[i] ~= 0 then count = count + 1 end end
  local up = lane % 5 + 32 * (lane % 3)
  return {mask, ballot, any, allp, u32(sum), u32(smin), u32(smax), umin, umax, uand, uor, uxor,
          match, all_same and mask or 0, all_same and 1 or 0,
          u32(v[base + source("idx", lane, src[base + lane + 1], 32) + 1]),
          u32(v[base + source("up", lane, up, 8) + 1]), count, count == nb and 1 or 0,
          count > 0 and 1 or 0}
end

h.test("partial warps: votes, reductions, matches, shuffles and barriers of the lanes that exist",
       function()
  local edge = {-0x80000000, 0x7fffffff, -1, 0, 1, 0x40000000}
  for _, nb in ipairs({48, 19, 33}) do
    for round = 1, 4 do
      local v, pred, src = {}, {}, {}
      local odd = math.random(nb) -- round 3: the one thread false; round 4: the one true
      for t = 1, nb do
        local lanes = math.min(32, nb - (t - 1) // 32 * 32)
        v[t] = round == 1 and edge[math.random(#edge)] or math.random(-0x80000000, 0x7fffffff)
        pred[t] = round == 2 and 5 or round == 3 and (t == odd and 0 or -1) or
                  round == 4 and (t == odd and 0x100 or 0) or
                  math.random(0, 1) * math.random(-3, 3)
        -- a lane that exists, plus or minus a multiple of 32 (taken modulo the width)
        src[t] = math.random(0, lanes - 1) + 32 * math.random(-3, 3)
      end
      local out = cuda.full(20 * nb, 0xdead, "u32")
      program().partial[{1, nb}](cuda.to_device(v, "i32"), cuda.to_device(pred, "i32"),
                                 cuda.to_device(src, "i32"), out)
      local got = out:totable()
      local names = {"__activemask", "ballot", "any", "all", "add", "min (int)", "max (int)",
                     "min (unsigned)", "max (unsigned)", "and", "or", "xor", "match_any",
                     "match_all", "match_all's pred", "__shfl_sync", "__shfl_up_sync width 8",
                     "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}
      for t = 0, nb - 1 do
        local lane, base = t % 32, t - t % 32
        local want = partial_expect(v, pred, src, base, math.min(32, nb - base), nb, lane)
        for r = 1, 20 do
          h.eq(got[20 * t + r], want[r], string.format("block of %d, round %d, thread %d: %s", nb,
                                                      round, t, names[r]))
        end
      end
    end
  end
end)

h.test("lanes that returned: not in __activemask, nor in the votes and reductions of the mask",
       function()
  local k = program().early_exit
  for _, keep in ipairs({1, 2, 5, 17, 31}) do
    local out = cuda.full(8 * 64, 0xdead, "u32")
    k[{1, 64}](keep, out)
    local got = out:totable()
    local mask, odd, third = (1 << keep) - 1, 0, 0
    for l = 0, keep - 1 do
      if l % 2 == 1 then odd = odd | (1 << l) end
      if l % 3 == 0 then third = third | (1 << l) end
    end
    local want = {mask, odd, third, 1, keep * (keep + 1) // 2, u32(-(keep - 1)), mask, 1}
    local names = {"__activemask", "ballot of the odd lanes", "ballot of every third lane",
                   "__all_sync", "__reduce_add_sync", "__reduce_min_sync (int)",
                   "__match_all_sync", "__match_all_sync's pred"}
    for t = 0, 63 do
      for r = 1, 8 do
        h.eq(got[8 * t + r], t % 32 < keep and want[r] or 0xdead,
             string.format("keep %d, thread %d: %s", keep, t, names[r]))
      end
    end
  end
end)

h.test("predicates convert to int as CUDA's parameter does: 0.5f and 1ll << 32 are false",
       function()
  local fs = {0.5, -0.5, 0.999, 1.0, -1.0, 2.5, 0.0, -0.0, 1e-30, 300.0, -0.25}
  local ds = {0.5, 1e-300, -0.99, 1.0, 7.5, -2.0, 0.0, -1e-5}
  local ls = {1 << 32, (1 << 32) + 1, -(1 << 32), 0, 1, -1, 1 << 62, 0x80000000, 0x7fffffff00000000}
  local f, d, l = {}, {}, {}
  for t = 1, 32 do
    f[t], d[t], l[t] = fs[(t - 1) % #fs + 1], ds[(t * 3 - 1) % #ds + 1], ls[(t * 5 - 1) % #ls + 1]
  end
  -- C's conversion to int: toward zero (every value here is in int's range)
  local function int_of_float(x) return x >= 1 and 1 or x <= -1 and -1 or 0 end
  local function int_of_ll(x) return s32(x) end -- the low 32 bits, as nvcc and g++ convert
  local out = cuda.full(9 * 32, -9, "i32")
  program().predicates[{1, 32}](cuda.to_device(f, "f32"), cuda.to_device(d, "f64"),
                                cuda.to_device(l, "i64"), out)
  local got = out:totable()
  local bf, bd, bl, count = 0, 0, 0, 0
  local all_l, all_d, or_d = 1, 1, 0
  for t = 0, 31 do
    if int_of_float(f[t + 1]) ~= 0 then bf, count = bf | (1 << t), count + 1 end
    if int_of_float(d[t + 1]) ~= 0 then bd, or_d = bd | (1 << t), 1 end
    if int_of_ll(l[t + 1]) ~= 0 then bl = bl | (1 << t) end
    if int_of_ll(l[t + 1] | 1) == 0 then all_l = 0 end
    if int_of_float(d[t + 1] + 2.0) == 0 then all_d = 0 end
  end
  local want = {s32(bf), s32(bd), s32(bl), bf ~= 0 and 1 or 0, all_l, all_d, count, all_l, or_d}
  local names = {"ballot of floats", "ballot of doubles", "ballot of long longs", "any of floats",
                 "all of long longs | 1", "all of doubles + 2", "__syncthreads_count of floats",
                 "__syncthreads_and of long longs | 1", "__syncthreads_or of doubles"}
  for t = 0, 31 do
    for r = 1, 9 do h.eq(got[9 * t + r], want[r], "thread " .. t .. ": " .. names[r]) end
  end
end)

-- One thread's atomics in order: the old value of each call, from the definitions.
local function walk_cells(n, start, step, args)
  local cell, olds = start, {}
  for i = 1, n do olds[i], cell = cell, step(cell, args(i)) end
  return olds, cell
end

h.test("one thread's atomics in order: every old value, wrap-arounds, CAS hits and misses",
       function()
  local K = 40
  local I32 = {-0x80000000, 0x7fffffff, -1, 0, 1, -0x7fffffff, 0x40000000, 0x55555555}
  local I64 = {math.mininteger, math.maxinteger, -1, 0, 1, 1 << 32, -(1 << 32), 0xffffffff}
  local LIMS = {0, 1, 3, 0xffffffff, 0xfffffffe, 7, 100, 0x80000000}
  local xs, cs, lims, ls, lcs, fs = {}, {}, {}, {}, {}, {}
  for i = 1, K do
    xs[i] = i % 3 == 0 and math.random(-0x80000000, 0x7fffffff) or I32[math.random(#I32)]
    lims[i] = i % 4 == 0 and math.random(0, 0xffffffff) or LIMS[math.random(#LIMS)]
    ls[i] = i % 3 == 0 and math.random(math.mininteger, math.maxinteger) or I64[math.random(#I64)]
    fs[i] = i % 5 == 0 and 16777216.0 or math.random(-4000, 4000) * 0.125 -- 2^24: float rounds
  end
  local s_start = {0x7ffffff0, -0x7ffffff0, 17, 0x7fffffff, -0x80000000, -1, 0, 0x0f0f0f0f, 5}
  local u_start = {0xfffffff0, 16, 17, 0xffffffff, 0, 0xffffffff, 0, 0xf0f0f0f0, 5, 0xfffffffd, 2}
  local q_start = {-16, 17, -1, 0, -1, 0, 0x0123456789abcdef, 5}
  local l_start = {math.maxinteger, math.mininteger}
  -- CAS: the even calls name the value the cell holds (a hit), the odd ones one it does not
  local function cas_args(start, pool, values, conv)
    local cell, out = start, {}
    for i = 1, K do
      local c = i % 2 == 0 and cell or conv(pool[math.random(#pool)])
      if c == cell and i % 2 == 1 then c = conv(cell + 1) end
      out[i] = c
      if c == cell then cell = values[i] end
    end
    return out
  end
  local uxs = {}
  for i = 1, K do uxs[i] = u32(xs[i]) end
  local ucs = cas_args(u_start[9], I32, uxs, u32)
  cs = cas_args(s_start[9], I32, xs, s32)
  lcs = cas_args(q_start[8], I64, ls, function(x) return x end)
  local si, su = cuda.to_device(s_start, "i32"), cuda.to_device(u_start, "u32")
  local sq, sl = cuda.to_device(q_start, "i64"), cuda.to_device(l_start, "i64")
  local sf, sd = cuda.to_device({1.0, -2.5}, "f32"), cuda.to_device({-7.0}, "f64")
  local oi, ou, oq = cuda.zeros(9 * K, "i32"), cuda.zeros(11 * K, "u32"), cuda.zeros(8 * K, "i64")
  local ol, of, od = cuda.zeros(2 * K, "i64"), cuda.zeros(2 * K, "f32"), cuda.zeros(K, "f64")
  program().atomic_sequence[{1, 1}](K, cuda.to_device(xs, "i32"), cuda.to_device(cs, "i32"),
    cuda.to_device(lims, "u32"), cuda.to_device(ls, "i64"), cuda.to_device(lcs, "i64"),
    cuda.to_device(fs, "f32"), si, su, sq, sl, sf, sd, oi, ou, oq, ol, of, od)
  local function check(cells, olds, j, stride, start, step, args, what)
    local want, last = walk_cells(K, start[j], step, args)
    local got = {}
    for i = 1, K do got[i] = olds[(i - 1) * stride + j] end
    h.same(got, want, nil, what .. ": the old values in order")
    h.eq(cells[j], last, what .. ": the cell at the end")
  end
  local x = function(i) return xs[i] end
  local ux = function(i) return uxs[i] end
  local q = function(i) return ls[i] end
  local gi, gu, gq = si:totable(), su:totable(), sq:totable()
  local ti, tu, tq = oi:totable(), ou:totable(), oq:totable()
  local int_steps = {
    {"int atomicAdd", function(o, v) return s32(o + v) end},
    {"int atomicSub", function(o, v) return s32(o - v) end},
    {"int atomicExch", function(_, v) return v end},
    {"int atomicMin", math.min},
    {"int atomicMax_block", math.max},
    {"int atomicAnd", function(o, v) return s32(o & v) end},
    {"int atomicOr_system", function(o, v) return s32(o | v) end},
    {"int atomicXor", function(o, v) return s32(o ~ v) end},
  }
  for j, st in ipairs(int_steps) do check(gi, ti, j, 9, s_start, st[2], x, st[1]) end
  check(gi, ti, 9, 9, s_start, function(o, a) return o == a[1] and a[2] or o end,
        function(i) return {cs[i], xs[i]} end, "int atomicCAS")
  local function umin(a, b) return math.ult(b, a) and b or a end
  local function umax(a, b) return math.ult(a, b) and b or a end
  local uint_steps = {
    {"unsigned atomicAdd_system", function(o, v) return u32(o + v) end},
    {"unsigned atomicSub", function(o, v) return u32(o - v) end},
    {"unsigned atomicExch", function(_, v) return v end},
    {"unsigned atomicMin", umin},
    {"unsigned atomicMax", umax},
    {"unsigned atomicAnd_block", function(o, v) return o & v end},
    {"unsigned atomicOr", function(o, v) return o | v end},
    {"unsigned atomicXor", function(o, v) return o ~ v end},
  }
  for j, st in ipairs(uint_steps) do check(gu, tu, j, 11, u_start, st[2], ux, st[1]) end
  check(gu, tu, 9, 11, u_start, function(o, a) return o == a[1] and a[2] or o end,
        function(i) return {ucs[i], uxs[i]} end, "unsigned atomicCAS_block")
  -- the guide: atomicInc stores ((old >= val) ? 0 : (old+1)), atomicDec
  -- (((old == 0) || (old > val)) ? val : (old-1)); the limit changes with every call here
  local lim = function(i) return lims[i] end
  check(gu, tu, 10, 11, u_start, function(o, l) return o >= l and 0 or o + 1 end, lim, "atomicInc")
  check(gu, tu, 11, 11, u_start, function(o, l) return (o == 0 or o > l) and l or o - 1 end, lim,
        "atomicDec")
  local ull_steps = {
    {"unsigned long long atomicAdd", function(o, v) return o + v end},
    {"unsigned long long atomicExch", function(_, v) return v end},
    {"unsigned long long atomicMin", umin},
    {"unsigned long long atomicMax", umax},
    {"unsigned long long atomicAnd", function(o, v) return o & v end},
    {"unsigned long long atomicOr", function(o, v) return o | v end},
    {"unsigned long long atomicXor", function(o, v) return o ~ v end},
  }
  for j, st in ipairs(ull_steps) do check(gq, tq, j, 8, q_start, st[2], q, st[1]) end
  check(gq, tq, 8, 8, q_start, function(o, a) return o == a[1] and a[2] or o end,
        function(i) return {lcs[i], ls[i]} end, "unsigned long long atomicCAS")
  local gl, tl = sl:totable(), ol:totable()
  check(gl, tl, 1, 2, l_start, math.min, q, "long long atomicMin")
  check(gl, tl, 2, 2, l_start, math.max, q, "long long atomicMax_system")
  local f = function(i) return fs[i] end
  check(sf:totable(), of:totable(), 1, 2, {1.0}, function(o, v) return h.f32(o + v) end, f,
        "float atomicAdd (rounded to float at each call)")
  check(sf:totable(), of:totable(), 2, 2, {1.0, -2.5}, function(_, v) return v end, f,
        "float atomicExch")
  check(sd:totable(), od:totable(), 1, 1, {-7.0}, function(o, v) return o + 3 * v end, f,
        "double atomicAdd_block")
end)

h.run()
