# test_cli_inspect.sh -- what cujit says of the code it made, with no GPU: `cujit compile -v`
# (each kernel's registers, spills, local and shared memory, threads per block, from ptxas's
# report), cujit_kernel_resources_get through Lua's k:info(), `cujit compile --sass` (the
# toolkit's cuobjdump, else nvdisasm, found under CUDA_HOME/bin, /usr/local/cuda/bin or PATH;
# stand-in tools check what cujit hands them, the real ones when present; a tool that fails or
# cannot start, and a TMPDIR that is not there, each said), and `--time` (NVRTC's
# phase times, with -v too, every time from a real compile, its file removed). Run by ctest as:
# bash test_cli_inspect.sh /path/to/cujit. Needs NVRTC, not a GPU.
set -u
source "$(dirname "$0")/lib.sh"

export CUJIT_CACHE_DIR="$TMP/cache"
need_nvrtc
cd "$TMP" || exit 1

# local_arr: a large local array (local memory > 0); squeezed: many live values under
# __launch_bounds__(1024, 2) (32 registers at most: 64K for two blocks of 1024), which must
# spill, and -maxrregcount=24 for the kernels without bounds; shared: a static __shared__ array
# of 512 bytes; bounded: __launch_bounds__(128).
cat >res.cu <<'EOF'
extern "C" __global__ void local_arr(float *out, int k) {
  volatile float big[512];
  for (int j = 0; j < 512; j++) big[j] = j * k;
  out[threadIdx.x] = big[k & 511];
}
extern "C" __global__ void __launch_bounds__(1024, 2) squeezed(float *out, const float *in, int k) {
  float v[48];
#pragma unroll
  for (int j = 0; j < 48; j++) v[j] = in[threadIdx.x * 48 + j] * (float)k;
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; j++) s += v[j] * v[47 - j] + v[(j * 7) % 48];
  out[threadIdx.x] = s;
}
extern "C" __global__ void shared(float *out) {
  __shared__ float sh[128];
  sh[threadIdx.x & 127] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = sh[(threadIdx.x + 1) & 127];
}
extern "C" __global__ void __launch_bounds__(128) bounded(float *out) { out[threadIdx.x] = 1; }
EOF

# field KERNEL WHAT: the number before WHAT on KERNEL's -v line ("60 bytes spill stores").
field() { grep -E "^cujit: $1: " <<<"$err" | grep -oE "[0-9]+ $2" | grep -oE '^[0-9]+'; }

# --- -v ----------------------------------------------------------------------------------------------
run "$CUJIT" compile res.cu --arch sm_90 -v -X -maxrregcount=24 -o res.ptx
check_rc "compile -v" 0
for k in local_arr squeezed shared bounded; do
  check "-v reports $k whole" "$err" "^cujit: $k: [0-9]+ registers, [0-9]+ bytes spill stores, [0-9]+ bytes spill loads, [0-9]+ bytes local, [0-9]+ bytes static shared, [0-9]+ max threads per block\$"
done
[ "$(field local_arr 'bytes local')" -ge 2048 ] 2>/dev/null && ok "a 512-float local array: local memory >= 2048 bytes" ||
  fail "local_arr's local memory: $(field local_arr 'bytes local') ($err)"
[ "$(field squeezed 'bytes spill stores')" -gt 0 ] 2>/dev/null && ok "squeezed to 32 registers: spill stores > 0" ||
  fail "squeezed spills no stores: $err"
[ "$(field squeezed 'bytes spill loads')" -gt 0 ] 2>/dev/null && ok "squeezed: spill loads > 0" ||
  fail "squeezed spills no loads: $err"
[ "$(field squeezed registers)" -le 32 ] 2>/dev/null && ok "squeezed: at most 32 registers" ||
  fail "squeezed registers: $(field squeezed registers)"
same "shared: 512 bytes of static shared memory" "$(field shared 'bytes static shared')" 512
same "bounded: __launch_bounds__(128) caps the block" "$(field bounded 'max threads per block')" 128
same "local_arr: no launch bounds, few registers: 1024 threads" "$(field local_arr 'max threads per block')" 1024
check "the PTX is still written" "$(cat res.ptx 2>/dev/null)" '\.entry squeezed'

# without -maxrregcount local_arr does not spill: the number comes from the compile
[ "$(field local_arr 'bytes spill stores')" -gt 0 ] 2>/dev/null && ok "local_arr spills at 24 registers" ||
  fail "local_arr at 24 registers: $(field local_arr 'bytes spill stores')"
run "$CUJIT" compile res.cu --arch sm_90 -v -o res2.ptx
same "without the register cap local_arr spills nothing" "$(field local_arr 'bytes spill stores')" 0

# a PTX-only target has no ptxas report: said, and the exit status says so
run "$CUJIT" compile res.cu --arch compute_90 -v -o res3.ptx
check_rc "compile -v for compute_90" 1
check "compute_90: no resources, said why" "$err" "no resources for compute_90, which is PTX only"

# --- k:info() without a device: the compiler's report ---------------------------------------------
run "$CUJIT" -e 'local cuda = require "cujit"
local src = io.open("res.cu"):read("a")
local m = cuda.source(src, {arch = "sm_90", flags = {"--ptxas-options=-v", "-maxrregcount=24"}})
local i = m.squeezed:info()
print(i.from, i.spill_stores > 0, i.spill_loads > 0, i.registers <= 32, m.shared:info().static_shared_bytes, m.bounded:info().max_threads_per_block)'
if "$CUJIT" devices >/dev/null 2>&1; then
  same "k:info() on a GPU comes from the device, with the report's spills" "$out" 'device	true	true	true	512	128'
else
  same "k:info() with no GPU: the compiler's report" "$out" 'compiler	true	true	true	512	128'
fi
run "$CUJIT" -e 'local cuda = require "cujit"
local k = cuda.jit("plain(float *x)", "x[0] = 1;", {arch = "sm_90"})
local ok, e = pcall(k.info, k) print(ok and "ok" or e)'
if ! "$CUJIT" devices >/dev/null 2>&1; then
  check "no device and no report: k:info() says to pass --ptxas-options=-v" "$out" \
    "nor from the compiler \(kernel 'plain': its compile made no resource report .*--ptxas-options=-v"
fi
CUJIT_DEVICE=cpu run "$CUJIT" -e 'local cuda = require "cujit"
local k = cuda.jit("plain(float *x)", "x[0] = 1;")
local i = k:info() print(i.from, i.spill_stores, i.max_threads_per_block ~= nil)'
same "the CPU device: its attributes, spills nil" "$out" 'device	nil	true'

# --- --time ------------------------------------------------------------------------------------------
# NVRTC's phase times, beside -v's report (NVRTC 13 writes none into the log then: cujit has them
# written to a file of its own), from a real compile each time, the file and its directory gone.
mkdir -p timetmp
for pass in 1 2; do
  TMPDIR="$TMP/timetmp" run "$CUJIT" compile res.cu --arch sm_90 -v --time -o res.ptx
  check_rc "compile -v --time ($pass)" 0
  check "--time prints NVRTC's front end ($pass)" "$err" "^cujit:   CUDA C\+\+ Frontend +[0-9.]+ ms\$"
  check "--time prints NVRTC's optimizer ($pass)" "$err" "^cujit:   NVVM Optimizer +[0-9.]+ ms\$"
  check "-v still reports the kernels beside --time ($pass)" "$err" "^cujit: bounded: [0-9]+ registers"
  check "--time compiles, never from the cache ($pass)" "$err" "^cujit: res.cu: 4 kernels .* compiled in"
done
[ -z "$(ls -A timetmp)" ] && ok "--time leaves nothing in TMPDIR" || fail "left in TMPDIR: $(ls -A timetmp)"
run "$CUJIT" compile res.cu --arch sm_90 -o res.ptx
check "no phase times without --time" "$err" "^cujit: res.cu: 4 kernels"
grep -q "NVRTC's phases" <<<"$err" && fail "phases printed without --time: $err" || ok "none printed"

# --- --sass ------------------------------------------------------------------------------------------
# Stand-ins record their arguments and the first bytes of the file they were given.
mkdir -p fake/cuobj/bin fake/disasm/bin empty
cat >fake/cuobj/bin/cuobjdump <<'EOF'
#!/bin/sh
echo "cuobjdump args: $1"
head -c4 "$2" | od -An -tx1 | tr -d ' \n'; echo
[ -n "${SHOW_DIR:-}" ] && echo "in $(dirname "$2")"
exit 0
EOF
cat >fake/disasm/bin/nvdisasm <<'EOF'
#!/bin/sh
echo "nvdisasm args: $#"
head -c4 "$1" | od -An -tx1 | tr -d ' \n'; echo
EOF
chmod +x fake/cuobj/bin/cuobjdump fake/disasm/bin/nvdisasm
CUDA_HOME="$TMP/fake/cuobj" run "$CUJIT" compile res.cu --arch sm_90 --sass
check_rc "--sass with cuobjdump under CUDA_HOME/bin" 0
same "cuobjdump is given -sass and a CUBIN (ELF)" "$out" "cuobjdump args: -sass
7f454c46"
# The CUBIN is handed over in a file of TMPDIR's (not /tmp's), removed afterwards.
mkdir -p sasstmp
SHOW_DIR=1 TMPDIR="$TMP/sasstmp" CUDA_HOME="$TMP/fake/cuobj" run "$CUJIT" compile res.cu --arch sm_90 --sass
same "the CUBIN for the tool is in TMPDIR" "$(sed -n 3p <<<"$out")" "in $TMP/sasstmp"
same "and removed after" "$(ls -A sasstmp)" ""
if [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
  CUDA_HOME="$TMP/fake/disasm" PATH="/usr/bin:/bin" run "$CUJIT" compile res.cu --arch sm_90 --sass
  same "without cuobjdump, nvdisasm is given the CUBIN" "$out" "nvdisasm args: 1
7f454c46"
  CUDA_HOME="$TMP/empty" CUDA_PATH= PATH="/usr/bin:/bin" run "$CUJIT" compile res.cu --arch sm_90 --sass
  check_rc "--sass with neither tool" 1
  check "the refusal names both tools and where it looked" "$err" \
    "neither cuobjdump nor nvdisasm was found \(looked in \\\$CUDA_HOME/bin, \\\$CUDA_PATH/bin, /usr/local/cuda/bin and PATH\)"
fi
PATH="$TMP/fake/cuobj/bin:$PATH" CUDA_HOME="$TMP/empty" run "$CUJIT" compile res.cu --arch sm_90 --sass
check "cuobjdump is found on PATH too" "$out" "cuobjdump args: -sass|Function : "
# The tool failing, not starting, or no file to hand it: each said, exit status 1, nothing left.
mkdir -p fake/failing/bin fake/broken/bin
printf '#!/bin/sh\necho "cannot read it" >&2\nexit 3\n' >fake/failing/bin/cuobjdump
printf '#!%s/no/such/interpreter\n' "$TMP" >fake/broken/bin/cuobjdump
chmod +x fake/failing/bin/cuobjdump fake/broken/bin/cuobjdump
CUDA_HOME="$TMP/fake/failing" TMPDIR="$TMP/sasstmp" run "$CUJIT" compile res.cu --arch sm_90 --sass
check_rc "--sass with a tool that fails" 1
check "the tool's failure and its status" "$err" \
  "^cujit compile --sass: $TMP/fake/failing/bin/cuobjdump failed \(exit status 3\)\$"
same "its CUBIN removed" "$(ls -A sasstmp)" ""
CUDA_HOME="$TMP/fake/broken" TMPDIR="$TMP/sasstmp" run "$CUJIT" compile res.cu --arch sm_90 --sass
check_rc "--sass with a tool that cannot start" 1
check "why it could not be run" "$err" \
  "^cujit compile --sass: cannot run $TMP/fake/broken/bin/cuobjdump: No such file or directory\$"
same "its CUBIN removed" "$(ls -A sasstmp)" ""
CUDA_HOME="$TMP/fake/cuobj" TMPDIR="$TMP/no/such/dir" run "$CUJIT" compile res.cu --arch sm_90 --sass
check_rc "--sass with a TMPDIR that is not there" 1
check "the file it could not make, and why" "$err" \
  "^cujit compile --sass: cannot make $TMP/no/such/dir/cujit-sass-[A-Za-z0-9]{6}: No such file or directory\$"
run "$CUJIT" compile res.cu --arch compute_90 --sass
check_rc "--sass for compute_90" 1
check "compute_90 has no CUBIN to disassemble" "$err" "compute_90 gives no CUBIN"
run "$CUJIT" compile res.cu --arch sm_90 --sass -o x.sass
check_rc "--sass with -o" 1
check "--sass refuses -o, saying why" "$err" "--sass prints the machine code on stdout and writes no file: drop -o"
[ ! -e x.sass ] && ok "nothing written" || fail "x.sass written"

# The real tool, where the machine has it.
real=""
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
  [ -n "$d" ] && [ -x "$d/bin/cuobjdump" ] && real=1
done
command -v cuobjdump >/dev/null && real=1
if [ -n "$real" ]; then
  run "$CUJIT" compile res.cu --arch sm_90 --sass
  check_rc "--sass with the toolkit's cuobjdump" 0
  check "real SASS names each kernel" "$out" "Function : squeezed"
  check "real SASS has instructions" "$out" "EXIT"
else
  echo "note: no cuobjdump on this machine: the real tool's output is not checked here"
fi

finish
