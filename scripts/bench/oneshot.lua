-- oneshot.lua -- case 4b for cujit: a whole `cujit` process that launches kernels/vadd.cu once and
-- prints a value. run.sh times it from start to exit with a warm CUJIT_CACHE_DIR.
--   cujit oneshot.lua KERNELS_DIR
local cuda = require "cujit"
local f = assert(io.open(arg[1] .. "/vadd.cu"))
local src = f:read("a")
f:close()
local vadd = cuda.source(src).vadd
local n = 1 << 20
local x, y, z = cuda.device_array(n, "f32"), cuda.device_array(n, "f32"), cuda.device_array(n, "f32")
x:fill(1.0); y:fill(2.0)
vadd[{ n // 256, 256 }](x, y, z, n)
print(z:copy_to_host()[n])
