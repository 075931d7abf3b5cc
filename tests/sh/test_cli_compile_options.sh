# test_cli_compile_options.sh -- that each of `cujit compile`'s options reaches NVRTC and changes
# what is written (--lineinfo and -G in the PTX, --fast-math and -X --use_fast_math in the
# division, --std in what compiles, -D with and without a value, -I in its order, --arch's
# target), that a repeated option's last value wins, and each malformed value's refusal with its
# exact message and nothing written: an empty or misspelt --arch, an option where a value belongs
# (`-o --cubin` must not write a file called --cubin), `--`, an output that is the input through a
# symbolic link. Compile-only for sm_90: runs without a GPU.
# Run by ctest as: bash test_cli_compile_options.sh /path/to/cujit. Needs NVRTC (skips, exit 77,
# without it).
set -u
source "$(dirname "$0")/lib.sh"

export CUJIT_CACHE_DIR="$TMP/cache"
need_nvrtc
cd "$TMP" || exit 1

cat >div.cu <<'EOF'
extern "C" __global__ void ratio(float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] / y[i];
}
EOF
cat >std17.cu <<'EOF'
template <int N> __device__ int pick() {
  if constexpr (N > 1) return N * 2; // C++17
  else return -1;
}
extern "C" __global__ void uses17(int *out) { out[threadIdx.x] = pick<4>(); }
EOF
# Which value a macro has, read back from the PTX: the kernel stores it.
cat >macro.cu <<'EOF'
#include "which.h"
extern "C" __global__ void store(int *out) {
#ifdef FLAG
  out[0] = FLAG + 1000;
#else
  out[0] = 77;
#endif
  out[1] = WHICH;
}
EOF
mkdir -p first second
echo '#define WHICH 111111' >first/which.h
echo '#define WHICH 222222' >second/which.h

# ptx ARGS...: compiles to stdout; $out is the PTX, $err the summary.
ptx() { run "$CUJIT" compile "$@" -o -; }

# --- each option changes the PTX ------------------------------------------------------------------
ptx div.cu --arch sm_90
check_rc "plain compile" 0
check "without --fast-math the division is IEEE" "$out" 'div\.rn\.f32'
check_not "without --lineinfo, no line table" "$out" '\.loc'
check_not "without -G, no debug sections" "$out" 'debug_info'
check ".target from --arch" "$out" '^\.target sm_90$'
plain=$out
ptx div.cu --arch sm_90 --fast-math
check "--fast-math: an approximate division" "$out" 'div\.(approx|full)\.ftz\.f32'
check_not "--fast-math: no IEEE division" "$out" 'div\.rn\.f32'
ptx div.cu --arch sm_90 -X --use_fast_math
check "-X --use_fast_math reaches NVRTC" "$out" 'div\.(approx|full)\.ftz\.f32'
ptx div.cu --arch sm_90 --lineinfo
check "--lineinfo: a line table" "$out" '\.loc'
check_not "--lineinfo alone: no debug sections" "$out" 'debug_info'
ptx div.cu --arch sm_90 -G
check "-G: debug sections" "$out" 'debug_info'
ptx div.cu --arch compute_80
check "--arch compute_80: PTX for sm_80" "$out" '^\.target sm_80$'
ptx div.cu --arch=sm_80
check "--arch=sm_80" "$out" '^\.target sm_80$'
ptx div.cu --arch sm_80 --arch sm_90
check "--arch twice: the last wins" "$out" '^\.target sm_90$'
ptx div.cu --fast-math --arch sm_90
[ "$out" != "$plain" ] && ok "the cache tells --fast-math apart from none" ||
  fail "--fast-math gave the plain PTX (from the cache?)"

# --std
ptx std17.cu --arch sm_90
check_rc "C++17 by default" 0
ptx std17.cu --arch sm_90 --std c++11
check_rc "--std c++11 refuses C++17 code" 1
check "--std c++11: NVRTC's complaint about the C++17 code" "$err" 'constexpr'
ptx std17.cu --arch sm_90 --std=c++17
check_rc "--std=c++17" 0
ptx std17.cu --arch sm_90 --std c++99
check_rc "--std c++99" 1
check "--std c++99: the options to check" "$err" "NVRTC refused an option compiling 'std17\.cu'; check -X, --std and --arch\."
check "--std c++99: NVRTC's reason" "$err" 'invalid value for --std'

# -D and -I
ptx macro.cu --arch sm_90 -I first
check "no -D FLAG: the #else branch" "$out" '\b77;'
check "-I first: first/which.h" "$out" '\b111111;'
ptx macro.cu --arch sm_90 -I first -D FLAG
check "-D FLAG without a value is 1" "$out" '\b1001;'
ptx macro.cu --arch sm_90 -I first -DFLAG=5
check "-DFLAG=5" "$out" '\b1005;'
ptx macro.cu --arch sm_90 -I second -I first
check "-I second -I first: the first directory given is searched first" "$out" '\b222222;'
ptx macro.cu --arch sm_90 -Ifirst -Isecond
check "-Ifirst -Isecond: first's header" "$out" '\b111111;'
check_not "-Ifirst -Isecond: not second's" "$out" '\b222222;'

# -o, --ptx and --cubin repeated: the last wins
run "$CUJIT" compile div.cu --arch sm_90 -o a.ptx -o b.ptx
check_rc "-o twice" 0
[ -s b.ptx ] && [ ! -e a.ptx ] && ok "-o twice: the last is written, the first not" ||
  fail "-o twice: $(ls)"
run "$CUJIT" compile div.cu --arch sm_90 -ojoined.ptx
[ -s joined.ptx ] && ok "-oFILE joined" || fail "-oFILE: $(ls)"
run "$CUJIT" compile div.cu --arch sm_90 --ptx --cubin -o kind.out
[ "$(head -c4 kind.out | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] && ok "--ptx --cubin: the last (a CUBIN)" ||
  fail "--ptx --cubin did not write a CUBIN"
run "$CUJIT" compile div.cu --arch sm_90 --cubin --ptx -o kind.out
check "--cubin --ptx: the last (PTX)" "$(cat kind.out)" '\.entry ratio'

# --- malformed values: the exact message, status 1, nothing written ----------------------------------
# refused NAME MESSAGE ARGS...
refused() {
  local name=$1 msg=$2
  shift 2
  rm -f div.ptx div.cubin
  local before
  before=$(ls -A | sort)
  run "$CUJIT" compile "$@"
  check_rc "$name" 1
  same "$name: the message" "$err" "$msg"
  same "$name: nothing on stdout" "$out" ""
  same "$name: no file written" "$(ls -A | sort)" "$before"
}
notarch="is not an arch: write sm_NN (such as sm_90) for a CUBIN and PTX, compute_NN for PTX only, or cpu for the CPU device"
refused "--arch= (empty)" "cujit compile: arch '' $notarch" div.cu --arch=
refused "--arch sm_9" "cujit compile: arch 'sm_9' $notarch" div.cu --arch sm_9
refused "--arch SM_90" "cujit compile: arch 'SM_90' $notarch" div.cu --arch SM_90
refused "--arch sm90" "cujit compile: arch 'sm90' $notarch" div.cu --arch sm90
refused "--archx" "cujit compile: unknown option '--archx' (see 'cujit help')" div.cu --archx sm_90
refused "--arch-sm_90" "cujit compile: unknown option '--arch-sm_90' (see 'cujit help')" div.cu --arch-sm_90
refused "--" "cujit compile: unknown option '--' (see 'cujit help')" div.cu --arch sm_90 --
refused "--use_fast_math (an NVRTC option, not cujit's)" \
  "cujit compile: unknown option '--use_fast_math' (see 'cujit help')" div.cu --arch sm_90 --use_fast_math
refused "-o followed by an option" \
  "cujit compile: option '-o' needs a value, and '--cubin' after it is an option (a value that starts with '-' is joined to it: -o--cubin)" \
  div.cu --arch sm_90 -o --cubin
[ ! -e ./--cubin ] && ok "-o --cubin wrote no file called --cubin" || fail "a file called --cubin"
refused "--arch followed by an option" \
  "cujit compile: option '--arch' needs a value, and '-o' after it is an option (a value that starts with '-' is joined to it: --arch=-o)" \
  div.cu --arch -o x.ptx
refused "-D followed by an option" \
  "cujit compile: option '-D' needs a value, and '-G' after it is an option (a value that starts with '-' is joined to it: -D-G)" \
  div.cu --arch sm_90 -D -G
refused "-D=X" "cujit compile: define 0 ('=X') is not NAME or NAME=VALUE with NAME a C identifier" \
  div.cu --arch sm_90 -D=X
refused "--ptx with -o x.cubin" \
  "cujit compile: --ptx contradicts -o x.cubin, whose extension asks for a CUBIN; drop --ptx, or name the output *.ptx" \
  div.cu --arch sm_90 --ptx -o x.cubin
ln -s div.cu alias.ptx
refused "-o a link to the input" \
  "cujit compile: the output alias.ptx is the input file; it would be overwritten. Pass another -o, or leave -o out to write FILE.ptx" \
  div.cu --arch sm_90 -o alias.ptx
same "the input is untouched" "$(head -1 div.cu)" 'extern "C" __global__ void ratio(float *x, const float *y, int n) {'
refused "-o the input by another path" \
  "cujit compile: the output ./div.cu is the input file; it would be overwritten. Pass another -o, or leave -o out to write FILE.ptx" \
  div.cu --arch sm_90 -o ./div.cu
refused "--arch cpu" \
  "cujit compile: --arch cpu names the CPU device, which has no PTX or CUBIN: its kernels are compiled by the C++ compiler when a script or program uses them (CUJIT_DEVICE=cpu). This command writes GPU code only: pass a GPU target, for example --arch sm_90" \
  div.cu --arch cpu
# -X takes values that start with '-', and -o takes '-' (stdout)
run "$CUJIT" compile div.cu --arch sm_90 -X -DFLAG -o -
check_rc "-X with a value that starts with '-'" 0
check "-o - writes to stdout" "$out" '\.entry ratio'

finish
