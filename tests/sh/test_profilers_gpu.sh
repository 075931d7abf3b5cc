# test_profilers_gpu.sh -- the profilers and debuggers see the user's source, on a GPU:
#   - compute-sanitizer memcheck on a cuda.jit kernel that writes past its array, with
#     CUJIT_LINEINFO=1, reports the write at the body's file (the kept copy) and line;
#   - ncu --set basic --import-source yes on a cujit launch lists the kernel by its name;
#   - the resources `cujit compile -v` reads from ptxas's report agree with what the driver says
#     of the same kernels (k:attributes()), the spills aside (the driver has none).
# Skips (77) without a GPU (fails under CUJIT_REQUIRE_GPU=1), and each tool's part without the
# tool (compute-sanitizer, ncu: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin). Run by ctest as:
# bash test_profilers_gpu.sh /path/to/cujit.
set -u
source "$(dirname "$0")/lib.sh"

export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_DEVICE CUJIT_LINEINFO
if ! "$CUJIT" devices >/dev/null 2>&1; then
  why=$("$CUJIT" devices 2>&1 | head -1)
  if [ "${CUJIT_REQUIRE_GPU:-0}" = 1 ]; then
    fail "CUJIT_REQUIRE_GPU=1 but there is no GPU: $why"
    finish
  fi
  echo "skip: no GPU ($why)"
  exit 77
fi
cd "$TMP" || exit 1

# tool NAME: the path of a CUDA tool, or nothing.
tool() {
  command -v "$1" 2>/dev/null && return
  for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    [ -n "$d" ] && [ -x "$d/bin/$1" ] && echo "$d/bin/$1" && return
  done
}
ran=0

# --- resources: compiler and driver agree ---------------------------------------------------------
arch=$("$CUJIT" devices | head -1 | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^sm_/) print $i}')
cat >res.cu <<'EOF'
extern "C" __global__ void local_arr(float *out, int k) {
  volatile float big[512];
  for (int j = 0; j < 512; j++) big[j] = j * k;
  out[threadIdx.x] = big[k & 511];
}
extern "C" __global__ void shared(float *out) {
  __shared__ float sh[128];
  sh[threadIdx.x & 127] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = sh[(threadIdx.x + 1) & 127];
}
extern "C" __global__ void __launch_bounds__(128) bounded(float *out) { out[threadIdx.x] = 1; }
extern "C" __global__ void heavy(float *out, const float *in) {
  float v[64];
#pragma unroll
  for (int j = 0; j < 64; j++) v[j] = in[threadIdx.x * 64 + j];
  float s = 0;
#pragma unroll
  for (int j = 0; j < 64; j++) s += v[j] * v[63 - j] * v[(j * 5) & 63];
  out[threadIdx.x] = s;
}
EOF
run "$CUJIT" compile res.cu --arch "$arch" -v -o res.ptx
check_rc "compile -v for $arch" 0
run2() { "$CUJIT" -e 'local cuda = require "cujit"
local m = cuda.load("res.cu")
for _, name in ipairs({"local_arr", "shared", "bounded", "heavy"}) do
  local a = m[name]:attributes()
  print(string.format("cujit: %s: %d registers, %d bytes local, %d bytes static shared, %d max threads per block",
    name, a.registers, a.local_bytes, a.static_shared_bytes, a.max_threads_per_block))
end'; }
driver=$(run2 2>&1)
compiler=$(grep -E '^cujit: [a-z_]+: [0-9]+ registers' <<<"$err" |
  sed -E 's/, [0-9]+ bytes spill stores, [0-9]+ bytes spill loads//')
same "compile -v's resources are the driver's (registers, local, shared, threads)" \
  "$(sort <<<"$compiler")" "$(sort <<<"$driver")"

# --- compute-sanitizer: the body's file and line ------------------------------------------------
cat >oob.lua <<'EOF'
local cuda = require "cujit"
local k = cuda.jit("oob_write(int *x, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i + n] = i;
]])
local x = cuda.device_array(256, "i32")
pcall(function() k[{1, 256}](x, 256); cuda.synchronize() end)
EOF
cs=$(tool compute-sanitizer)
if [ -n "$cs" ]; then
  ran=1
  out=$(CUJIT_LINEINFO=1 CUJIT_POOL=off "$cs" --tool memcheck "$CUJIT" oob.lua 2>&1)
  check "memcheck sees the out-of-bounds write" "$out" 'Invalid __global__ write of size 4'
  check "memcheck names the kernel" "$out" 'oob_write'
  # memcheck writes the file's last part; the line table holds the whole path, the kept copy's
  at=$(grep -oE 'in [^ ]*oob_write\.cu:[0-9]+' <<<"$out" | head -1)
  [ -n "$at" ] && ok "memcheck names the body's file: $at" || fail "no oob_write.cu:LINE in: $out"
  same "the line is the store's, line 3 of the body" "${at##*:}" 3
  file=$(ls "$TMP"/cache/sources/*/oob_write.cu 2>/dev/null | head -1)
  same "the kept file of that name holds the body as written at that line" \
    "$(sed -n 3p "$file" 2>/dev/null)" '    x[i + n] = i;'
  out=$(CUJIT_POOL=off "$cs" --tool memcheck "$CUJIT" oob.lua 2>&1)
  check_not "without line info memcheck has no file and line" "$out" 'oob_write\.cu:[0-9]'
else
  echo "skip part: no compute-sanitizer (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
fi

# --- ncu: the kernel under its name ----------------------------------------------------------------
cat >prof.lua <<'EOF'
local cuda = require "cujit"
local k = cuda.jit("cj_profiled_saxpy(float a, const float *x, float *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
]])
local n = 1 << 16
local x, y = cuda.device_array(n, "f32"), cuda.device_array(n, "f32")
k[{n // 256, 256}](2.0, x, y, n)
cuda.synchronize()
EOF
ncu=$(tool ncu)
if [ -n "$ncu" ]; then
  out=$(CUJIT_LINEINFO=1 "$ncu" --set basic --import-source yes --csv "$CUJIT" prof.lua 2>&1)
  if grep -q 'ERR_NVGPUCTRPERM' <<<"$out"; then
    echo "skip part: ncu may not read the GPU's counters here (ERR_NVGPUCTRPERM)"
  else
    ran=1
    check "ncu lists the kernel by its name" "$out" 'cj_profiled_saxpy'
    check "ncu measured it (a metric row of the kernel)" "$out" '"cj_profiled_saxpy.*","[^"]*",'
  fi
else
  echo "skip part: no ncu (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)"
fi
[ "$ran" = 1 ] || echo "note: neither compute-sanitizer nor ncu could run: only the resources were checked"

finish
