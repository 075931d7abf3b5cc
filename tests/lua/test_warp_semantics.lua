-- test_warp_semantics.lua -- the warp shuffles, votes, matches and reductions, the barriers with
-- a predicate and the atomics, against CUDA's definitions (the programming guide's and PTX's:
-- shfl.sync's source lane and clamp, match.sync comparing bits, atomicInc/atomicDec wrapping),
-- each expected value computed here in Lua from the definition, never from the CPU device's code.
-- Every width (1 to 32) with lanes out of range, partial masks, signed and unsigned reductions
-- at INT_MIN/INT_MAX/UINT_MAX, barriers over blocks that are not whole warps, atomics past
-- their wrap-around points, 32- and 64-bit and floating point. On a GPU when there is one, else
-- on the CPU device (helper.need_gpu); the source also compiles for sm_90 with NVRTC.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local SRC = [[
// Shuffles: each lane's own source lane for __shfl_sync (out of range, negative), and every
// delta / lane mask from 0 to 31 for the others, at each width 1, 2, 4, ..., 32.
extern "C" __global__ void shuffles(const int *x, const int *src, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[t];
  int *o = out + t * 6 * 97;
  for (int wi = 0; wi < 6; wi++, o += 97) {
    int w = 1 << wi;
    o[0] = __shfl_sync(0xffffffffu, v, src[t], w);
    for (int d = 0; d < 32; d++) {
      o[1 + d] = __shfl_up_sync(0xffffffffu, v, (unsigned)d, w);
      o[33 + d] = __shfl_down_sync(0xffffffffu, v, (unsigned)d, w);
      o[65 + d] = __shfl_xor_sync(0xffffffffu, v, d, w);
    }
  }
}

// 64-bit values through every shuffle (both halves must travel), at each width.
extern "C" __global__ void shuffles64(const long long *x, const int *src, long long *out,
                                      double *dout) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  long long v = x[t];
  double d = (double)v * 0.5;
  for (int wi = 0; wi < 6; wi++) {
    int w = 1 << wi, o = (t * 6 + wi) * 4;
    out[o + 0] = __shfl_sync(0xffffffffu, v, src[t], w);
    out[o + 1] = __shfl_up_sync(0xffffffffu, v, 3u, w);
    out[o + 2] = __shfl_down_sync(0xffffffffu, v, 5u, w);
    dout[o + 3] = __shfl_xor_sync(0xffffffffu, d, 6, w);
  }
}

// Only the even lanes take part, reading from even lanes.
extern "C" __global__ void shuffles_even(const int *x, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  if (lane & 1) return;
  int v = x[t];
  out[3 * t + 0] = __shfl_xor_sync(0x55555555u, v, 2);
  out[3 * t + 1] = __shfl_sync(0x55555555u, v, (lane + 6) & 31);
  out[3 * t + 2] = __shfl_down_sync(0x55555555u, v, 4, 8);
}

// Votes under each mask: only the lanes the mask names call them; the warp meets (__syncwarp)
// before the next mask.
extern "C" __global__ void votes(const int *pred, const unsigned *masks, int nmasks,
                                 unsigned *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int n = gridDim.x * blockDim.x;
  for (int m = 0; m < nmasks; m++) {
    unsigned mask = masks[m];
    if (!((mask >> lane) & 1u)) {
      __syncwarp();
      continue;
    }
    int p = pred[m * n + t];
    unsigned *o = out + 3 * (m * n + t);
    o[0] = __ballot_sync(mask, p);
    o[1] = __any_sync(mask, p) != 0;
    o[2] = __all_sync(mask, p) != 0;
    __syncwarp(); // the whole warp meets before the next mask
  }
}

// Matches of 32-bit, 64-bit (equal low halves) and float values (compared as bits).
extern "C" __global__ void matches(const unsigned *v32, const long long *v64, const float *vf,
                                   const unsigned *masks, int nmasks, unsigned *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int n = gridDim.x * blockDim.x;
  for (int m = 0; m < nmasks; m++) {
    unsigned mask = masks[m];
    if (!((mask >> lane) & 1u)) {
      __syncwarp();
      continue;
    }
    int i = m * n + t, p = 7;
    unsigned *o = out + 9 * i;
    o[0] = __match_any_sync(mask, v32[i]);
    o[1] = __match_all_sync(mask, v32[i], &p);
    o[2] = p;
    o[3] = __match_any_sync(mask, (unsigned long long)v64[i]);
    o[4] = __match_all_sync(mask, v64[i], &p);
    o[5] = p;
    o[6] = __match_any_sync(mask, vf[i]);
    o[7] = __match_all_sync(mask, vf[i], &p);
    o[8] = p;
    __syncwarp();
  }
}

// Reductions, signed and unsigned, under each mask.
extern "C" __global__ void reductions(const int *v, const unsigned *masks, int nmasks, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int n = gridDim.x * blockDim.x;
  for (int m = 0; m < nmasks; m++) {
    unsigned mask = masks[m];
    if (!((mask >> lane) & 1u)) {
      __syncwarp();
      continue;
    }
    int s = v[m * n + t];
    unsigned u = (unsigned)s;
    int *o = out + 9 * (m * n + t);
    o[0] = __reduce_add_sync(mask, s);
    o[1] = (int)__reduce_add_sync(mask, u);
    o[2] = __reduce_min_sync(mask, s);
    o[3] = (int)__reduce_min_sync(mask, u);
    o[4] = __reduce_max_sync(mask, s);
    o[5] = (int)__reduce_max_sync(mask, u);
    o[6] = (int)__reduce_and_sync(mask, u);
    o[7] = (int)__reduce_or_sync(mask, u);
    o[8] = (int)__reduce_xor_sync(mask, u);
    __syncwarp();
  }
}

// Three barriers with a predicate in a row, over a block of any shape: count, and, or of the
// predicate, then of its negation, then of a constant.
extern "C" __global__ void barriers(const int *pred, int *out) {
  int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  int nb = blockDim.x * blockDim.y * blockDim.z;
  int b = blockIdx.x;
  int p = pred[b * nb + tid];
  int c = __syncthreads_count(p), a = __syncthreads_and(p), o = __syncthreads_or(p);
  int cn = __syncthreads_count(!p), an = __syncthreads_and(!p), on = __syncthreads_or(!p);
  int c1 = __syncthreads_count(5), a0 = __syncthreads_and(0), o3 = __syncthreads_or(3);
  int *r = out + 9 * (b * nb + tid);
  r[0] = c, r[1] = a != 0, r[2] = o != 0, r[3] = cn, r[4] = an != 0, r[5] = on != 0;
  r[6] = c1, r[7] = a0 != 0, r[8] = o3 != 0;
}

// atomicInc / atomicDec on counters with their own start and limit: every thread once on each.
extern "C" __global__ void inc_dec(unsigned *inc, unsigned *dec, const unsigned *lim, int k,
                                   unsigned *old_inc, unsigned *old_dec) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < k; j++) {
    old_inc[t * k + j] = atomicInc(&inc[j], lim[j]);
    old_dec[t * k + j] = atomicDec(&dec[j], lim[j]);
  }
}

// Adds and subtracts of a constant, past each type's wrap-around, and floating-point adds of
// exact values. The 64-bit counters travel as long long.
extern "C" __global__ void adds(int *si, unsigned *ui, long long *ll, float *f, double *d,
                                int *old_si, unsigned *old_ui, long long *old_ll) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  old_si[2 * t] = atomicAdd(&si[0], 3);
  old_si[2 * t + 1] = atomicSub(&si[1], 5);
  old_ui[2 * t] = atomicAdd(&ui[0], 7u);
  old_ui[2 * t + 1] = atomicSub(&ui[1], 2u);
  unsigned long long *ull = (unsigned long long *)ll;
  old_ll[t] = (long long)atomicAdd(&ull[0], 11ull);
  atomicAdd(&ull[1], (unsigned long long)t * 0x100000001ull);
  atomicAdd(&f[0], 0.25f * (float)(t % 13));
  atomicAdd(&d[0], 0.5 * (double)t);
  atomicAdd(&f[1], -1.5f);
}

// Min, max, and, or, xor, signed and unsigned, 32- and 64-bit: every thread once on each.
extern "C" __global__ void bitwise(const int *v, const long long *w, int *s32, unsigned *u32,
                                   long long *s64) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int x = v[t];
  long long y = w[t];
  unsigned long long *u64 = (unsigned long long *)s64;
  atomicMin(&s32[0], x);
  atomicMax(&s32[1], x);
  atomicAnd(&s32[2], x);
  atomicOr(&s32[3], x);
  atomicXor(&s32[4], x);
  atomicMin(&u32[0], (unsigned)x);
  atomicMax(&u32[1], (unsigned)x);
  atomicAnd(&u32[2], (unsigned)x);
  atomicOr(&u32[3], (unsigned)x);
  atomicXor(&u32[4], (unsigned)x);
  atomicMin(&s64[0], y);
  atomicMax(&s64[1], y);
  atomicMin(&u64[2], (unsigned long long)y);
  atomicMax(&u64[3], (unsigned long long)y);
  atomicAnd(&u64[4], (unsigned long long)y);
  atomicOr(&u64[5], (unsigned long long)y);
  atomicXor(&u64[6], (unsigned long long)y);
}

// Exchanges (every value put in comes out once), one-shot compare-and-swaps (one winner) and a
// compare-and-swap loop (a 64-bit sum).
extern "C" __global__ void swaps(int *xi, float *xf, long long *xl, int *old_i, float *old_f,
                                 long long *old_l, int *cas_old, long long *cas_sum,
                                 unsigned short *cas16, int *cas16_old) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long *ul = (unsigned long long *)xl;
  old_i[t] = atomicExch(&xi[0], t + 1);
  old_f[t] = atomicExch(&xf[0], 0.5f * (float)(t + 1));
  old_l[t] = (long long)atomicExch(&ul[0], (unsigned long long)(t + 1) << 33);
  cas_old[t] = atomicCAS(&xi[1], -7, t);
  unsigned long long *s = (unsigned long long *)cas_sum;
  unsigned long long seen = *(volatile unsigned long long *)s, want;
  do {
    want = seen;
    seen = atomicCAS(s, want, want + ((unsigned long long)t << 31));
  } while (seen != want);
  cas16_old[t] = atomicCAS(&cas16[0], (unsigned short)0xfffe, (unsigned short)(t + 1));
}
]]

-- 32-bit helpers: Lua integers are 64-bit.
local function u32(x) return x & 0xffffffff end
local function s32(x)
  x = x & 0xffffffff
  return x >= 0x80000000 and x - 0x100000000 or x
end
local function ult(a, b) return math.ult(a, b) end

local BLOCK, BLOCKS = 64, 2 -- two blocks of two warps
local N = BLOCK * BLOCKS
local WIDTHS = {1, 2, 4, 8, 16, 32}
local MASKS = {0xffffffff, 0x00000001, 0x80000000, 0x0000ffff, 0xffff0000, 0x55555555,
               0xaaaaaaaa, 0x00ff00f0, 0x80000001}
for _ = 1, 4 do MASKS[#MASKS + 1] = math.random(1, 0xffffffff) end

local m -- the program, compiled once for the tests that run it

local function program()
  m = m or cuda.source(SRC)
  return m
end

local function launch(k, ...) k[{BLOCKS, BLOCK}](...) end

-- Lanes in `mask`, as a list of lane numbers.
local function lanes_of(mask)
  local l = {}
  for lane = 0, 31 do if (mask >> lane) & 1 == 1 then l[#l + 1] = lane end end
  return l
end

h.test("the source compiles for sm_90 with NVRTC (what a GPU runs)", function()
  if not cuda.version().nvrtc then return h.need_nvrtc(cuda) end -- fails where it is required
  local p = cuda.source(SRC, {arch = "sm_90"})
  local ptx = p:ptx()
  for _, name in ipairs({"shuffles", "shuffles64", "votes", "matches", "reductions", "barriers", "inc_dec",
                         "adds", "bitwise", "swaps"}) do
    h.contains(ptx, ".entry " .. name, "the PTX")
  end
  h.contains(ptx, "redux.sync", "the PTX's warp reductions")
  h.contains(ptx, "match.any.sync", "the PTX's matches")
end)

h.test("shuffles at every width, sources out of range, deltas past the width", function()
  local xs, srcs = {}, {}
  for t = 1, N do
    xs[t] = math.random(-1000000, 1000000) * 64 + (t - 1) -- distinct: the lane shows
    srcs[t] = math.random(-40, 80)
  end
  local out = cuda.full(N * 6 * 97, -1, "i32")
  launch(program().shuffles, cuda.to_device(xs, "i32"), cuda.to_device(srcs, "i32"), out)
  local got = out:totable()
  local bad, first = 0, nil
  local function expect(i, want, what)
    if got[i] ~= want then
      bad = bad + 1
      first = first or string.format("%s: got %d, want %d", what, got[i], want)
    end
  end
  for t = 0, N - 1 do
    local lane, base = t % 32, t - t % 32
    local v = xs[t + 1]
    for wi, w in ipairs(WIDTHS) do
      local seg = lane - lane % w
      local o = t * 6 * 97 + (wi - 1) * 97 + 1
      -- the guide: a source lane out of [0, width) is taken modulo width, within the segment
      expect(o, xs[base + seg + (srcs[t + 1] & (w - 1)) + 1],
             string.format("thread %d __shfl_sync(src %d, width %d)", t, srcs[t + 1], w))
      for d = 0, 31 do
        local j = lane - d -- up: no wrap below the segment; the lane keeps its own value
        expect(o + 1 + d, j >= seg and xs[base + j + 1] or v,
               string.format("thread %d __shfl_up_sync(%d, width %d)", t, d, w))
        j = lane + d -- down: none past the segment's end
        expect(o + 33 + d, j <= seg + w - 1 and xs[base + j + 1] or v,
               string.format("thread %d __shfl_down_sync(%d, width %d)", t, d, w))
        j = lane ~ d -- xor: an earlier segment is read, a later one is not
        expect(o + 65 + d, j <= seg + w - 1 and xs[base + j + 1] or v,
               string.format("thread %d __shfl_xor_sync(%d, width %d)", t, d, w))
      end
    end
  end
  h.check(bad == 0, string.format("%d wrong shuffles; first: %s", bad, first))
end)

h.test("64-bit shuffles (long long, double) at every width", function()
  local xs, srcs = {}, {}
  for t = 1, N do
    xs[t] = (math.random(-1000000, 1000000) << 32) + t * 8 -- distinct halves
    srcs[t] = math.random(-40, 80)
  end
  local out, dout = cuda.full(N * 24, -1, "i64"), cuda.full(N * 24, -1, "f64")
  launch(program().shuffles64, cuda.to_device(xs, "i64"), cuda.to_device(srcs, "i32"), out, dout)
  local got, dgot = out:totable(), dout:totable()
  for t = 0, N - 1 do
    local lane, base = t % 32, t - t % 32
    for wi, w in ipairs(WIDTHS) do
      local seg, o = lane - lane % w, (t * 6 + wi - 1) * 4
      local what = string.format("thread %d width %d", t, w)
      h.eq(got[o + 1], xs[base + seg + (srcs[t + 1] & (w - 1)) + 1], what .. " __shfl_sync")
      local j = lane - 3
      h.eq(got[o + 2], j >= seg and xs[base + j + 1] or xs[t + 1], what .. " __shfl_up_sync 3")
      j = lane + 5
      h.eq(got[o + 3], j <= seg + w - 1 and xs[base + j + 1] or xs[t + 1], what .. " __shfl_down_sync 5")
      j = lane ~ 6
      h.eq(dgot[o + 4], (j <= seg + w - 1 and xs[base + j + 1] or xs[t + 1]) * 0.5,
           what .. " __shfl_xor_sync 6 (double)")
    end
  end
end)

h.test("shuffles among the even lanes only (mask 0x55555555)", function()
  local xs = {}
  for t = 1, N do xs[t] = math.random(-100000, 100000) * 64 + t end
  local out = cuda.full(3 * N, 12345, "i32")
  launch(program().shuffles_even, cuda.to_device(xs, "i32"), out)
  local got = out:totable()
  for t = 0, N - 1 do
    local lane, base = t % 32, t - t % 32
    local w1, w2, w3 = 12345, 12345, 12345
    if lane % 2 == 0 then
      w1 = xs[base + (lane ~ 2) + 1]
      w2 = xs[base + ((lane + 6) & 31) + 1]
      local j = lane + 4
      w3 = j <= lane - lane % 8 + 7 and xs[base + j + 1] or xs[t + 1]
    end
    h.eq(got[3 * t + 1], w1, "thread " .. t .. " xor 2")
    h.eq(got[3 * t + 2], w2, "thread " .. t .. " from lane+6")
    h.eq(got[3 * t + 3], w3, "thread " .. t .. " down 4 width 8")
  end
end)

h.test("__ballot_sync, __any_sync, __all_sync under partial masks", function()
  local nm = #MASKS
  local pred = {}
  for mi = 1, nm do
    for wp = 0, N // 32 - 1 do
      -- per warp and mask: random, all true, all false, or all true but one lane in the mask
      local mode = (mi + wp) % 4
      local lanes = lanes_of(MASKS[mi])
      local odd = lanes[math.random(#lanes)]
      for lane = 0, 31 do
        local p = mode == 0 and math.random(0, 3) - 1 or mode == 1 and 1 or mode == 2 and 0 or
                    (lane == odd and 0 or 1)
        -- lanes outside the mask hold the opposite, to catch a vote that reads them
        if (MASKS[mi] >> lane) & 1 == 0 then p = mode == 2 and 1 or 0 end
        pred[(mi - 1) * N + wp * 32 + lane + 1] = p
      end
    end
  end
  local out = cuda.full(3 * nm * N, 0xdead, "u32")
  launch(program().votes, cuda.to_device(pred, "i32"), cuda.to_device(MASKS, "u32"), nm, out)
  local got = out:totable()
  for mi = 1, nm do
    local mask = MASKS[mi]
    for wp = 0, N // 32 - 1 do
      local ballot, any, all = 0, 0, 1
      for lane = 0, 31 do
        if (mask >> lane) & 1 == 1 then
          local p = pred[(mi - 1) * N + wp * 32 + lane + 1] ~= 0
          if p then ballot, any = ballot | (1 << lane), 1 else all = 0 end
        end
      end
      for lane = 0, 31 do
        local i = 3 * ((mi - 1) * N + wp * 32 + lane)
        local what = string.format("mask %08x warp %d lane %d", mask, wp, lane)
        if (mask >> lane) & 1 == 1 then
          h.eq(got[i + 1], ballot, what .. " ballot")
          h.eq(got[i + 2], any, what .. " any")
          h.eq(got[i + 3], all, what .. " all")
        else
          h.eq(got[i + 1], 0xdead, what .. ": a lane outside the mask wrote")
        end
      end
    end
  end
end)

h.test("__match_any_sync and __match_all_sync: 32-bit, 64-bit and float bits", function()
  local nm = #MASKS
  local v32, v64, vf = {}, {}, {}
  local floats = {0.0, -0.0, 1.5, 0 / 0}
  for mi = 1, nm do
    for wp = 0, N // 32 - 1 do
      local same = (mi + wp) % 3 == 0 -- every lane of the mask equal: __match_all_sync holds
      for lane = 0, 31 do
        local i = (mi - 1) * N + wp * 32 + lane + 1
        local g = same and 2 or math.random(0, 3)
        v32[i] = same and 0xfffffffe or ({0, 0xffffffff, 0x80000000, 17})[g + 1]
        -- equal low halves: only the high half tells these apart
        v64[i] = (same and 5 or math.random(0, 2)) << 32 | 0x1234
        vf[i] = floats[same and 3 or math.random(1, 3)]
      end
    end
  end
  local out = cuda.full(9 * nm * N, 0xdead, "u32")
  launch(program().matches, cuda.to_device(v32, "u32"), cuda.to_device(v64, "i64"),
         cuda.to_device(vf, "f32"), cuda.to_device(MASKS, "u32"), nm, out)
  local got = out:totable()
  local function bits(x) return string.pack("<f", x) end
  for mi = 1, nm do
    local mask = MASKS[mi]
    for wp = 0, N // 32 - 1 do
      local base = (mi - 1) * N + wp * 32
      for lane = 0, 31 do
        if (mask >> lane) & 1 == 1 then
          local i = base + lane + 1
          local any32, any64, anyf = 0, 0, 0
          local all32, all64, allf = true, true, true
          for _, l in ipairs(lanes_of(mask)) do
            local j = base + l + 1
            if v32[j] == v32[i] then any32 = any32 | (1 << l) else all32 = false end
            if v64[j] == v64[i] then any64 = any64 | (1 << l) else all64 = false end
            if bits(vf[j]) == bits(vf[i]) then anyf = anyf | (1 << l) else allf = false end
          end
          local o = 9 * (i - 1)
          local what = string.format("mask %08x warp %d lane %d", mask, wp, lane)
          h.eq(got[o + 1], any32, what .. " match_any 32-bit")
          h.eq(got[o + 2], all32 and mask or 0, what .. " match_all 32-bit")
          h.eq(got[o + 3], all32 and 1 or 0, what .. " match_all 32-bit pred")
          h.eq(got[o + 4], any64, what .. " match_any 64-bit")
          h.eq(got[o + 5], all64 and mask or 0, what .. " match_all 64-bit")
          h.eq(got[o + 6], all64 and 1 or 0, what .. " match_all 64-bit pred")
          h.eq(got[o + 7], anyf, what .. " match_any float (bits: -0.0 is not 0.0)")
          h.eq(got[o + 8], allf and mask or 0, what .. " match_all float")
          h.eq(got[o + 9], allf and 1 or 0, what .. " match_all float pred")
        end
      end
    end
  end
end)

h.test("__reduce_*_sync signed and unsigned at the boundaries, under partial masks", function()
  local nm = #MASKS
  local edge = {-0x80000000, 0x7fffffff, -1, 0, 1, -0x7fffffff, 0x40000000}
  local v = {}
  for mi = 1, nm do
    for wp = 0, N // 32 - 1 do
      for lane = 0, 31 do
        local mode = (mi + wp) % 3
        v[(mi - 1) * N + wp * 32 + lane + 1] = mode == 0 and edge[math.random(#edge)] or
          mode == 1 and math.random(-0x80000000, 0x7fffffff) or 0x7fffffff - math.random(0, 3)
      end
    end
  end
  local out = cuda.full(9 * nm * N, 0x5eed, "i32")
  launch(program().reductions, cuda.to_device(v, "i32"), cuda.to_device(MASKS, "u32"), nm, out)
  local got = out:totable()
  for mi = 1, nm do
    local mask = MASKS[mi]
    for wp = 0, N // 32 - 1 do
      local base = (mi - 1) * N + wp * 32
      local sum, smin, smax = 0, math.maxinteger, math.mininteger
      local umin, umax, uand, uor, uxor = 0xffffffff, 0, 0xffffffff, 0, 0
      for _, l in ipairs(lanes_of(mask)) do
        local s = v[base + l + 1]
        local u = u32(s)
        sum = sum + s
        smin, smax = math.min(smin, s), math.max(smax, s)
        if ult(u, umin) then umin = u end
        if ult(umax, u) then umax = u end
        uand, uor, uxor = uand & u, uor | u, uxor ~ u
      end
      local want = {s32(sum), s32(sum), smin, s32(umin), smax, s32(umax), s32(uand), s32(uor),
                    s32(uxor)}
      local names = {"add (int)", "add (unsigned)", "min (int)", "min (unsigned)", "max (int)",
                     "max (unsigned)", "and", "or", "xor"}
      for lane = 0, 31 do
        local o = 9 * (base + lane)
        for r = 1, 9 do
          local w = (mask >> lane) & 1 == 1 and want[r] or 0x5eed
          h.eq(got[o + r], w, string.format("mask %08x warp %d lane %d %s", mask, wp, lane, names[r]))
        end
      end
    end
  end
end)

h.test("__syncthreads_count/_and/_or over blocks of any shape, three in a row", function()
  local shapes = {{96, 1, 1}, {33, 1, 1}, {1, 1, 1}, {8, 4, 3}, {5, 7, 2}, {128, 1, 1}}
  local k = program().barriers
  for _, sh in ipairs(shapes) do
    local nb, blocks = sh[1] * sh[2] * sh[3], 4
    local pred = {}
    for b = 0, blocks - 1 do
      for i = 1, nb do
        -- block 0 all true, block 1 all false, the others random, one a single true thread
        local p = b == 0 and 3 or b == 1 and 0 or b == 2 and (i == nb and -1 or 0) or
                    math.random(0, 1) * math.random(1, 9)
        pred[b * nb + i] = p
      end
    end
    local out = cuda.full(9 * blocks * nb, -9, "i32")
    k[{{blocks, 1, 1}, sh}](cuda.to_device(pred, "i32"), out)
    local got = out:totable()
    for b = 0, blocks - 1 do
      local c = 0
      for i = 1, nb do if pred[b * nb + i] ~= 0 then c = c + 1 end end
      local want = {c, c == nb and 1 or 0, c > 0 and 1 or 0, nb - c, c == 0 and 1 or 0,
                    c < nb and 1 or 0, nb, 0, 1}
      for i = 0, nb - 1 do
        for r = 1, 9 do
          h.eq(got[9 * (b * nb + i) + r], want[r],
               string.format("block shape %dx%dx%d block %d thread %d result %d", sh[1], sh[2],
                             sh[3], b, i, r))
        end
      end
    end
  end
end)

-- The states a counter goes through, applying `step` n times from `s`: the sorted old values
-- every atomic returns, and the last state.
local function walk(s, n, step)
  local olds = {}
  for i = 1, n do olds[i], s = s, step(s) end
  table.sort(olds)
  return olds, s
end

local function column(t, k, j, n)
  local c = {}
  for i = 0, n - 1 do c[i + 1] = t[i * k + j] end
  table.sort(c)
  return c
end

h.test("atomicInc wraps to 0 past its limit, atomicDec to the limit at 0 or above it", function()
  -- {start, limit}: below, at and above the limit, a limit of 0 and of UINT_MAX
  local cases = {{0, 7}, {3, 3}, {10, 3}, {0, 0}, {5, 0}, {0xfffffffd, 0xffffffff},
                 {0, 0xffffffff}, {200, 100}, {100, 1000}}
  local k = #cases
  local starts, lims = {}, {}
  for j, c in ipairs(cases) do starts[j], lims[j] = c[1], c[2] end
  local inc, dec = cuda.to_device(starts, "u32"), cuda.to_device(starts, "u32")
  local old_inc, old_dec = cuda.zeros(N * k, "u32"), cuda.zeros(N * k, "u32")
  launch(program().inc_dec, inc, dec, cuda.to_device(lims, "u32"), k, old_inc, old_dec)
  local gi, gd = inc:totable(), dec:totable()
  local oi, od = old_inc:totable(), old_dec:totable()
  for j, c in ipairs(cases) do
    local s, val = c[1], c[2]
    -- the guide: atomicInc stores ((old >= val) ? 0 : (old+1)),
    -- atomicDec stores (((old == 0) || (old > val)) ? val : (old-1))
    local olds_i, last_i = walk(s, N, function(old) return old >= val and 0 or old + 1 end)
    local olds_d, last_d = walk(s, N, function(old) return (old == 0 or old > val) and val or old - 1 end)
    local what = string.format("start %d, limit %d", s, val)
    h.eq(gi[j], last_i, "atomicInc's final value, " .. what)
    h.eq(gd[j], last_d, "atomicDec's final value, " .. what)
    h.same(column(oi, k, j, N), olds_i, nil, "atomicInc's old values, " .. what)
    h.same(column(od, k, j, N), olds_d, nil, "atomicDec's old values, " .. what)
  end
end)

h.test("atomicAdd/atomicSub wrap around in 32 and 64 bits; float and double adds", function()
  local si = cuda.to_device({0x7fffffff - 100, -0x80000000 + 50}, "i32")
  local ui = cuda.to_device({0xffffffff - 300, 20}, "u32")
  local ll = cuda.to_device({-100, 0}, "i64") -- -100: 2^64 - 100 as unsigned long long
  local f, d = cuda.to_device({1.0, 0.0}, "f32"), cuda.to_device({-3.0}, "f64")
  local old_si, old_ui, old_ll = cuda.zeros(2 * N, "i32"), cuda.zeros(2 * N, "u32"),
                                 cuda.zeros(N, "i64")
  launch(program().adds, si, ui, ll, f, d, old_si, old_ui, old_ll)
  local osi, oui = old_si:totable(), old_ui:totable()
  local ols = old_ll:totable()
  local olds, last
  olds, last = walk(0x7fffffff - 100, N, function(x) return s32(x + 3) end)
  h.eq(si:totable()[1], last, "int atomicAdd past INT_MAX")
  h.same(column(osi, 2, 1, N), olds, nil, "int atomicAdd's old values")
  olds, last = walk(-0x80000000 + 50, N, function(x) return s32(x - 5) end)
  h.eq(si:totable()[2], last, "int atomicSub past INT_MIN")
  h.same(column(osi, 2, 2, N), olds, nil, "int atomicSub's old values")
  olds, last = walk(0xffffffff - 300, N, function(x) return u32(x + 7) end)
  h.eq(ui:totable()[1], last, "unsigned atomicAdd past UINT_MAX")
  h.same(column(oui, 2, 1, N), olds, nil, "unsigned atomicAdd's old values")
  olds, last = walk(20, N, function(x) return u32(x - 2) end)
  h.eq(ui:totable()[2], last, "unsigned atomicSub below 0")
  h.same(column(oui, 2, 2, N), olds, nil, "unsigned atomicSub's old values")
  olds, last = walk(-100, N, function(x) return x + 11 end) -- Lua's integers wrap as 64-bit
  h.eq(ll:totable()[1], last, "unsigned long long atomicAdd past 2^64")
  table.sort(ols)
  h.same(ols, olds, nil, "unsigned long long atomicAdd's old values")
  local sum64, sumf, sumd = 0, 1.0, -3.0
  for t = 0, N - 1 do
    sum64 = sum64 + t * 0x100000001
    sumf = sumf + 0.25 * (t % 13)
    sumd = sumd + 0.5 * t
  end
  h.eq(ll:totable()[2], sum64, "unsigned long long atomicAdd of differing values")
  h.eq(f:totable()[1], sumf, "float atomicAdd (exact values)")
  h.eq(f:totable()[2], -1.5 * N, "float atomicAdd of a negative value")
  h.eq(d:totable()[1], sumd, "double atomicAdd (exact values)")
end)

h.test("atomicMin/Max/And/Or/Xor: signed and unsigned compare differently, 32 and 64 bits", function()
  local v, w = {}, {}
  local edge32 = {-0x80000000, 0x7fffffff, -1, 0, 1}
  local edge64 = {math.mininteger, math.maxinteger, -1, 0, 1, 0x100000000}
  for t = 1, N do
    v[t] = t <= #edge32 and edge32[t] or math.random(-0x80000000, 0x7fffffff)
    w[t] = t <= #edge64 and edge64[t] or math.random(math.mininteger, math.maxinteger)
  end
  -- starts that no value beats, for min and max, so the result is the values' own
  local s32s = {0x7fffffff, -0x80000000, -1, 0, 0x0f0f0f0f}
  local u32s = {0xffffffff, 0, 0xffffffff, 0, 0xf0f0f0f0}
  local s64s = {math.maxinteger, math.mininteger, -1, 0, -1, 0, 0x0123456789abcdef}
  local a32, b32, a64 = cuda.to_device(s32s, "i32"), cuda.to_device(u32s, "u32"),
                        cuda.to_device(s64s, "i64")
  launch(program().bitwise, cuda.to_device(v, "i32"), cuda.to_device(w, "i64"), a32, b32, a64)
  local smin, smax, sand, sor, sxor = table.unpack(s32s)
  local umin, umax, uand, uor, uxor = table.unpack(u32s)
  local lmin, lmax, qmin, qmax, qand, qor, qxor = table.unpack(s64s)
  for t = 1, N do
    local x, u, y = v[t], u32(v[t]), w[t]
    smin, smax, sand, sor, sxor = math.min(smin, x), math.max(smax, x), s32(sand & x),
                                  s32(sor | x), s32(sxor ~ x)
    if ult(u, umin) then umin = u end
    if ult(umax, u) then umax = u end
    uand, uor, uxor = uand & u, uor | u, uxor ~ u
    lmin, lmax = math.min(lmin, y), math.max(lmax, y)
    if ult(y, qmin) then qmin = y end
    if ult(qmax, y) then qmax = y end
    qand, qor, qxor = qand & y, qor | y, qxor ~ y
  end
  h.same(a32:totable(), {smin, smax, sand, sor, sxor}, nil, "int min, max, and, or, xor")
  h.same(b32:totable(), {umin, umax, uand, uor, uxor}, nil, "unsigned min, max, and, or, xor")
  h.same(a64:totable(), {lmin, lmax, qmin, qmax, qand, qor, qxor}, nil,
         "long long min, max; unsigned long long min, max, and, or, xor")
end)

h.test("atomicExch, atomicCAS (one winner, 16-bit too) and a compare-and-swap loop", function()
  local xi, xf, xl = cuda.to_device({-1, -7}, "i32"), cuda.to_device({-2.5}, "f32"),
                     cuda.to_device({-3}, "i64")
  local old_i, old_f, old_l = cuda.zeros(N, "i32"), cuda.zeros(N, "f32"), cuda.zeros(N, "i64")
  local cas_old, cas_sum = cuda.zeros(N, "i32"), cuda.to_device({0x7fffffffffff}, "i64")
  local cas16, cas16_old = cuda.to_device({0xfffe}, "u16"), cuda.zeros(N, "i32")
  launch(program().swaps, xi, xf, xl, old_i, old_f, old_l, cas_old, cas_sum, cas16, cas16_old)
  -- every value put in comes out exactly once: as an old value, or as the final one
  local function all_once(olds, final, first, value, what)
    local have = olds:totable()
    have[#have + 1] = final
    local want = {first}
    for t = 0, N - 1 do want[#want + 1] = value(t) end
    table.sort(have)
    table.sort(want)
    h.same(have, want, nil, what)
  end
  all_once(old_i, xi:totable()[1], -1, function(t) return t + 1 end, "int atomicExch")
  all_once(old_f, xf:totable()[1], -2.5, function(t) return 0.5 * (t + 1) end, "float atomicExch")
  all_once(old_l, xl:totable()[1], -3, function(t) return (t + 1) << 33 end,
           "unsigned long long atomicExch")
  -- atomicCAS(&x, -7, t): the first thread finds -7 and stores its t; the others find that t
  local winner = xi:totable()[2]
  h.check(winner >= 0 and winner < N, "a thread's value replaced -7: " .. winner)
  local olds, wins = cas_old:totable(), 0
  for t = 1, N do
    if olds[t] == -7 then
      wins = wins + 1
      h.eq(t - 1, winner, "the thread that found -7 is the one whose value stayed")
    else
      h.eq(olds[t], winner, "a losing atomicCAS returns the winner's value")
    end
  end
  h.eq(wins, 1, "threads that found -7")
  local sum = 0x7fffffffffff
  for t = 0, N - 1 do sum = sum + (t << 31) end
  h.eq(cas_sum:totable()[1], sum, "the 64-bit sum by atomicCAS loops")
  local w16 = cas16:totable()[1]
  h.check(w16 >= 1 and w16 <= N, "a 16-bit atomicCAS stored a thread's value: " .. w16)
  local olds16, wins16 = cas16_old:totable(), 0
  for t = 1, N do
    if olds16[t] == 0xfffe then wins16 = wins16 + 1 else h.eq(olds16[t], w16, "16-bit loser") end
  end
  h.eq(wins16, 1, "threads that found 0xfffe (16-bit)")
end)

h.run()
