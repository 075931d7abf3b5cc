-- streams.lua -- copy/compute overlap: the same work (copy 2^26 floats in from pinned host memory,
-- run a kernel over them, copy the results back) in 16 chunks, first all on one stream, then
-- spread round-robin over 4 streams, so one chunk's copies run while another's kernel does.
-- Timed with events; the results of both runs are checked against the host. On the CPU device
-- the work is 2^20 floats (2^26 would take minutes there).
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local N, CHUNKS, STREAMS = S.on_cpu and 1 << 20 or 1 << 26, 16, 4
local CHUNK = N // CHUNKS

-- Enough arithmetic per element that the kernel takes about as long as the copies.
local work = cuda.jit("work(const float *x, float *y, long long n, int rounds)", [[
  for (long long i : cujit::grid_stride(n)) {
    float v = x[i];
    for (int r = 0; r < rounds; r++) v = sinf(v) * 0.5f + v * 0.75f;
    y[i] = v;
  }
]], S.options())

local function host_work(v, rounds)
  for _ = 1, rounds do v = math.sin(v) * 0.5 + v * 0.75 end
  return v
end

-- The host version iterates a contraction, so float32 and float64 stay close.
S.check(math.abs(host_work(1.0, 40) - host_work(S.f32(1.0) + 1e-7, 40)) < 1e-5,
        "host: the work is stable to input rounding")

S.host_checks_done()

local seed = S.seed()
local ROUNDS = 40

-- Pinned host chunks (inputs random, outputs poisoned) and device chunks.
local hin, hout, din, dout = {}, {}, {}, {}
for c = 1, CHUNKS do
  din[c], dout[c] = cuda.device_array(CHUNK), cuda.device_array(CHUNK)
  cuda.random.normal(din[c], seed, 0, 1, (c - 1) * CHUNK)
  hin[c] = din[c]:copy_to_host(cuda.host_array(CHUNK, "f32", {pinned = true}))
  hout[c] = cuda.host_array(CHUNK, "f32", {pinned = true})
end

local streams = {}
for s = 1, STREAMS do streams[s] = cuda.stream() end
local grid = 2 * cuda.device().multiprocessors

local function run(nstreams)
  for c = 1, CHUNKS do hout[c]:fill(-12345.5) end
  local e0, e1 = cuda.event(), cuda.event()
  cuda.synchronize()
  e0:record() -- the default stream: cujit's streams are non-blocking, so sync first
  local marks = {}
  for s = 1, nstreams do
    marks[s] = cuda.event():record()
    streams[s]:wait(marks[s])
  end
  for c = 1, CHUNKS do
    local s = streams[(c - 1) % nstreams + 1]
    din[c]:copy_from(hin[c], s)
    work[{grid, 256, stream = s}](din[c], dout[c], CHUNK, ROUNDS)
    dout[c]:copy_to_host_async(s, hout[c])
  end
  for s = 1, nstreams do
    local done = cuda.event():record(streams[s])
    done:synchronize()
  end
  e1:record()
  e1:synchronize()
  return e0:elapsed(e1)
end

local function check_results(label)
  local bad = 0
  for _ = 1, 20000 do
    local c, i = math.random(1, CHUNKS), math.random(1, CHUNK)
    local want = host_work(hin[c][i], ROUNDS)
    if math.abs(hout[c][i] - want) > 1e-4 * math.max(1, math.abs(want)) then bad = bad + 1 end
  end
  S.check(bad == 0, "%s: 20000 random results match the host (%d wrong)", label, bad)
end

run(1) -- warm-up: loads the kernel, touches the memory
local one = run(1)
check_results("1 stream")
local many = run(STREAMS)
check_results(STREAMS .. " streams")

-- The parts alone, for the overlap figure.
local copy_in = S.gpu_ms(function() din[1]:copy_from(hin[1], streams[1]) end, 5, streams[1])
local kernel = S.gpu_ms(function()
  work[{grid, 256, stream = streams[1]}](din[1], dout[1], CHUNK, ROUNDS)
end, 5, streams[1])
local copy_out = S.gpu_ms(function() dout[1]:copy_to_host_async(streams[1], hout[1]) end, 5,
                          streams[1])
streams[1]:synchronize()
local serial = CHUNKS * (copy_in + kernel + copy_out)
S.printf("per chunk of %d floats: copy in %.3f ms, kernel %.3f ms, copy out %.3f ms", CHUNK,
         copy_in, kernel, copy_out)
S.printf("1 stream:  %.3f ms (sum of the parts %.3f ms)", one, serial)
-- What overlap can hide: the time beyond the longest of the three parts (next to nothing on the
-- CPU device, whose copies are a memcpy).
local hideable = serial - math.max(CHUNKS * copy_in, CHUNKS * kernel, CHUNKS * copy_out)
if hideable > 0.01 * serial then
  S.printf("%d streams: %.3f ms: %.2fx faster; %.0f%% of the copy and kernel time hidden", STREAMS,
           many, one / many, 100 * (one - many) / hideable)
else
  S.printf("%d streams: %.3f ms: %.2fx faster; the kernels take nearly all the time: nothing to "
           .. "hide", STREAMS, many, one / many)
end
S.done()
