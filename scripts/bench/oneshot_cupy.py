"""oneshot_cupy.py -- case 4b for CuPy: a whole process that launches kernels/vadd.cu once and prints
a value. run.sh times it from start to exit with a warm CUPY_CACHE_DIR."""
import os
import sys

import cupy as cp

src = open(os.path.join(sys.argv[1], "vadd.cu")).read()
n = 1 << 20
x = cp.ones(n, dtype=cp.float32)
y = cp.full(n, 2.0, dtype=cp.float32)
z = cp.empty(n, dtype=cp.float32)
cp.RawKernel(src, "vadd")((n // 256,), (256,), (x, y, z, cp.int32(n)))
print(float(z[n - 1]))
