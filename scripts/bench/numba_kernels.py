"""numba_kernels.py -- kernels/vadd.cu written in Python for Numba, at module level in a file of its
own so that @cuda.jit(cache=True) can keep it in NUMBA_CACHE_DIR (Numba caches only functions it
can find again by file and name). Import only after `numpy.row_stack = numpy.vstack`."""
from numba import cuda


def vadd(x, y, z, n):
    i = cuda.grid(1)
    if i < n:
        z[i] = x[i] + y[i]
