"""oneshot_numba.py -- case 4b for Numba: a whole process that launches the vector add once and
prints a value. run.sh times it from start to exit with a warm NUMBA_CACHE_DIR."""
import numpy as np

np.row_stack = np.vstack  # numba-cuda 0.30 still looks for it
from numba import cuda  # noqa: E402


@cuda.jit(cache=True)
def vadd(x, y, z, n):
    i = cuda.grid(1)
    if i < n:
        z[i] = x[i] + y[i]


n = 1 << 20
x = cuda.to_device(np.ones(n, dtype=np.float32))
y = cuda.to_device(np.full(n, 2.0, dtype=np.float32))
z = cuda.device_array(n, dtype=np.float32)
vadd[n // 256, 256](x, y, z, np.int32(n))
print(z.copy_to_host()[n - 1])
