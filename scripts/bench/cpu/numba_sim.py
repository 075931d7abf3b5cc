"""numba_sim.py -- Numba's side of cpu_vs_numba_sim.sh: the kernels of numba_sim.lua for Numba's
CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set here before Numba is imported), at the same sizes.
Prints one line per kernel:  <kernel> <elements> <seconds per launch, best of the repetitions> <check>

The simulator has no warp operations (no shfl_*_sync), so its warp reduction ("wsum") does the
same sums through shared memory with syncthreads, as a Numba user would have to."""
import math
import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
SIDE = int(round(math.sqrt(N)))


@cuda.jit
def vadd(a, b, c, n):
    i = cuda.grid(1)
    if i < n:
        c[i] = a[i] + b[i]


@cuda.jit
def conv(inp, f, out, h, w):
    x, y = cuda.grid(2)
    if x >= w or y >= h:
        return
    acc = float32(0)
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            yy = min(max(y + dy, 0), h - 1)
            xx = min(max(x + dx, 0), w - 1)
            acc += f[(dy + 1) * 3 + dx + 1] * inp[yy * w + xx]
    out[y * w + x] = acc


@cuda.jit
def bsum(x, out):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.blockIdx.x * 256 + t]
    cuda.syncthreads()
    st = 128
    while st > 0:
        if t < st:
            s[t] += s[t + st]
        cuda.syncthreads()
        st //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def wsum(x, out):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    lane = t % 32
    s[t] = x[cuda.blockIdx.x * 256 + t]
    cuda.syncthreads()
    o = 16
    while o > 0:
        v = s[t + o] if lane + o < 32 else float32(0)
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        o //= 2
    if lane == 0:
        out[cuda.blockIdx.x * 8 + t // 32] = s[t]


def best(fn):
    b = math.inf
    for _ in range(REPS):
        t0 = time.perf_counter()
        fn()
        b = min(b, time.perf_counter() - t0)
    return b


ones = np.ones(N, np.float32)
c = np.zeros(N, np.float32)
t = best(lambda: vadd[(N + 255) // 256, 256](ones, ones, c, N))
print(f"vadd {N} {t:.9f} {'ok' if c[-1] == 2 else 'WRONG'}", flush=True)

img = np.ones(SIDE * SIDE, np.float32)
filt = np.full(9, 1.0 / 9, np.float32)
out = np.zeros(SIDE * SIDE, np.float32)
blocks = ((SIDE + 15) // 16, (SIDE + 15) // 16)
t = best(lambda: conv[blocks, (16, 16)](img, filt, out, SIDE, SIDE))
print(f"conv {SIDE * SIDE} {t:.9f} {'ok' if abs(out[-1] - 1) < 1e-5 else 'WRONG'}", flush=True)

sums = np.zeros(N // 256, np.float32)
t = best(lambda: bsum[N // 256, 256](ones, sums))
print(f"bsum {N} {t:.9f} {'ok' if sums[0] == 256 else 'WRONG'}", flush=True)

wsums = np.zeros(N // 32, np.float32)
t = best(lambda: wsum[N // 256, 256](ones, wsums))
print(f"wsum {N} {t:.9f} {'ok' if wsums[0] == 32 else 'WRONG'}", flush=True)
