"""numba_kernels.py -- kernels/vadd.cu and saxpy.cu written in Python for Numba, at module level in a
file of their own so that @cuda.jit(cache=True) can keep them in NUMBA_CACHE_DIR (Numba caches only
functions it can find again by file and name), and so that Numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1) can run them (it swaps the `cuda` of a module's globals, not of a
closure). Import only after `numpy.row_stack = numpy.vstack`."""
from numba import cuda


def vadd(x, y, z, n):
    i = cuda.grid(1)
    if i < n:
        z[i] = x[i] + y[i]


def saxpy(alpha, x, y, n):
    i = cuda.grid(1)
    if i < n:
        y[i] = alpha * x[i] + y[i]
