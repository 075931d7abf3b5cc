#!/usr/bin/env bash
# test_cli_link.sh -- `cujit compile --link FILE` and Lua's `link = {...}` (docs/cuda-code.md,
# "Linking device code"): every kind of file nvJitLink takes, as nvcc writes them (when the toolkit
# has nvcc; cujit's own -rdc output otherwise), linked without a GPU for sm_90; the cache's answer
# following a file's contents; nvJitLink absent; an undefined symbol; and on the CPU device a .cu
# file run from Lua. Needs NVRTC (and nvJitLink for the linking cases); skips saying which.
. "$(dirname "$0")/lib.sh"
export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_NVJITLINK CUJIT_DEVICE
cd "$TMP" || exit 1
cat >k.cu <<'EOF'
extern __device__ float twice_plus(float x);
extern "C" __global__ void apply(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice_plus(y[i]);
}
EOF
echo '__device__ float twice_plus(float x) { return 2.0f * x + 1.0f; }' >lib.cu
echo 'extern "C" __global__ void probe(int *x) { x[0] = 1; }' >probe.cu
run "$CUJIT" compile probe.cu --arch sm_90 -o probe.ptx
if [ "$rc" -ne 0 ]; then
  grep -q "NVRTC" <<<"$err" && { echo "skip: no NVRTC: $err"; exit 77; }
  fail "compile without link: $err"
fi

# nvJitLink where cujit looks for it: the loader's path, then the toolkit's lib64 directories.
have_nvjitlink=0
ldconfig -p 2>/dev/null | grep -q 'libnvJitLink\.so\.1[23] ' && have_nvjitlink=1
IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
for d in "${dirs[@]}" "${CUDA_HOME:-/nonexistent}/lib64" "${CUDA_PATH:-/nonexistent}/lib64" \
  /usr/local/cuda/lib64; do
  [ -n "$d" ] && ls "$d"/libnvJitLink.so.1[23] >/dev/null 2>&1 && have_nvjitlink=1
done
[ "${CUJIT_REQUIRE_GPU:-}" = 1 ] && [ "$have_nvjitlink" = 0 ] &&
  fail "CUJIT_REQUIRE_GPU=1 but no libnvJitLink.so.13/.12 where cujit looks"

if [ "$have_nvjitlink" = 1 ]; then
  # --- a .cu file: linked, cached, recompiled when edited ------------------------------------------
  run "$CUJIT" compile k.cu --arch sm_90 --link lib.cu -o k.cubin
  check_rc "--link lib.cu" 0
  check "--link lib.cu compiles" "$err" "1 kernel \(apply\) for sm_90, compiled in"
  same "the linked CUBIN is an ELF" "$(head -c4 k.cubin | od -An -tx1 | tr -d ' ')" "7f454c46"
  run "$CUJIT" compile k.cu --arch sm_90 --link lib.cu -o k.ptx
  check "the same link again: from the cache" "$err" "from the cache"
  check "the linked PTX inlines lib.cu's + 1.0" "$(cat k.ptx)" "0f3F800000"
  CUJIT_NVRTC=/nonexistent/libnvrtc.so CUJIT_NVJITLINK=/nonexistent/libnvJitLink.so \
    run "$CUJIT" compile k.cu --arch sm_90 --link lib.cu -o k2.ptx
  check "a hit opens neither NVRTC nor nvJitLink" "$err" "from the cache"
  same "the hit's PTX is the linked one" "$(cmp -s k.ptx k2.ptx && echo same)" "same"
  echo '__device__ float twice_plus(float x) { return 2.0f * x + 3.0f; }' >lib.cu
  run "$CUJIT" compile k.cu --arch sm_90 --link lib.cu -o k.ptx
  check "an edited lib.cu compiles again" "$err" "compiled in"
  check "the new PTX has + 3.0" "$(cat k.ptx)" "0f40400000"
  echo '__device__ float twice_plus(float x) { return 2.0f * x + 1.0f; }' >lib.cu

  # --- an undefined symbol: named, with the files --------------------------------------------------
  echo '__device__ float other(float x) { return x; }' >other.cu
  run "$CUJIT" compile k.cu --arch sm_90 --link other.cu -o bad.cubin
  check_rc "an undefined symbol" 1
  check "an undefined symbol is named with the files" "$err" \
    "linking 'k.cu' with other.cu failed: undefined symbol 'twice_plus\(float\)' \(_Z10twice_plusf\)"

  # --- every kind of file -------------------------------------------------------------------------
  # cujit's own separate-compilation output: PTX and a CUBIN with -rdc=true (a kernel makes it a
  # program cujit compiles).
  { cat lib.cu; echo 'extern "C" __global__ void lib_k(float *y) { y[0] = twice_plus(y[0]); }'; } >libk.cu
  "$CUJIT" compile libk.cu --arch sm_90 -X -rdc=true -o rdc.ptx 2>/dev/null
  "$CUJIT" compile libk.cu --arch sm_90 -X -rdc=true -o rdc.cubin 2>/dev/null
  kinds="rdc.ptx rdc.cubin"
  nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
  if [ -x "$nvcc" ]; then
    "$nvcc" -gencode arch=compute_90,code=lto_90 -dc -ltoir lib.cu -o nv.ltoir &&
      "$nvcc" -gencode arch=compute_90,code=lto_90 -rdc=true -fatbin lib.cu -o nv_lto.fatbin &&
      "$nvcc" -arch=sm_90 -rdc=true -fatbin lib.cu -o nv_sass.fatbin &&
      "$nvcc" -arch=sm_90 -rdc=true -cubin lib.cu -o nv.cubin &&
      "$nvcc" -arch=sm_90 -rdc=true -ptx lib.cu -o nv.ptx &&
      "$nvcc" -gencode arch=compute_90,code=lto_90 -dc lib.cu -o lto.o && "$nvcc" -lib lto.o -o nv_lto.a &&
      "$nvcc" -arch=sm_90 -dc lib.cu -o sass.o && "$nvcc" -lib sass.o -o nv_sass.a ||
      fail "nvcc could not write the link files"
    kinds="$kinds nv.ltoir nv_lto.fatbin nv_sass.fatbin nv.cubin nv.ptx nv_lto.a nv_sass.a"
  else
    echo "note: no nvcc: .ltoir, .fatbin and .a files are not tried"
  fi
  for f in $kinds; do
    run "$CUJIT" compile k.cu --arch sm_90 --link "$f" -o "k_$f.cubin"
    check_rc "--link $f" 0
    same "--link $f: an ELF CUBIN" "$(head -c4 "k_$f.cubin" 2>/dev/null | od -An -tx1 | tr -d ' ')" "7f454c46"
  done
  run "$CUJIT" compile k.cu --arch compute_90 --link rdc.ptx -o x.ptx
  check_rc "compute_90 with a .ptx file" 1
  check "compute_90 with a .ptx file: why" "$err" "arch 'compute_90' gives PTX only"
else
  echo "note: no libnvJitLink.so.13: the linking cases are not run"
fi

# --- nvJitLink absent: .cu compiled as one unit (a warning), other kinds refused --------------------
export CUJIT_CACHE_DIR="$TMP/cache-none" # a hit would need no nvJitLink (nor say anything)
CUJIT_NVJITLINK=/nonexistent/libnvJitLink.so run "$CUJIT" compile k.cu --arch sm_90 --link lib.cu -o one.ptx
check_rc "no nvJitLink, a .cu file" 0
check "no nvJitLink: the warning says why and what instead" "$err" \
  "CUJIT_NVJITLINK=/nonexistent/libnvJitLink.so could not be opened.*compiled with each program as one unit"
check "no nvJitLink: lib.cu's code is in the program" "$(cat one.ptx)" "0f3F800000"
echo '// any' >any.ptx
CUJIT_NVJITLINK=/nonexistent/libnvJitLink.so run "$CUJIT" compile k.cu --arch sm_90 --link any.ptx -o one.ptx
check_rc "no nvJitLink, a .ptx file" 1
check "no nvJitLink, a .ptx file: refused saying why" "$err" "link file 'any.ptx' \(PTX\) needs nvJitLink"

# --- refusals before any compile ----------------------------------------------------------------------
run "$CUJIT" compile k.cu --arch sm_90 --link lib.o -o x.ptx
check "a .o file is refused with the kinds" "$err" "link file 'lib.o' is of no kind cujit links"
run "$CUJIT" compile k.cu --arch sm_90 --link nothere.cu -o x.ptx
check "a missing file is refused" "$err" "link file 'nothere.cu' cannot be read: No such file"

# --- Lua, on the CPU device: cuda.jit and cuda.source with link = {...} ---------------------------------
if command -v g++ >/dev/null; then
  CUJIT_DEVICE=cpu run "$CUJIT" -e '
local cuda = require "cujit"
local k = cuda.jit("apply(float *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice_plus(y[i]);
]], {preamble = "extern __device__ float twice_plus(float x);", link = {"lib.cu"}})
local y = cuda.full(4, 3, "f32")
k[{1, 4}](y, 4)
local m = cuda.source(io.open("k.cu"):read("a"), {link = {"lib.cu"}, name = "k.cu"})
local z = cuda.full(4, 5, "f32")
m.apply[{1, 4}](z, 4)
print("ran", table.concat(y:totable(), ","), table.concat(z:totable(), ","))
local ok, e = pcall(cuda.jit, "apply(float *y, int n)", "y[0] = 1;", {link = {"any.ptx"}})
print("ptx", ok, e)'
  check "Lua on the CPU device: jit and source link lib.cu" "$out" "^ran	7(\\.0)?,7(\\.0)?,7(\\.0)?,7(\\.0)?	11(\\.0)?,11"
  check "Lua on the CPU device: a .ptx file refused" "$out" "which the CPU device cannot link"
else
  echo "note: no g++: the CPU device's cases are not run"
fi
finish
