# test_cli_compile.sh -- `cujit compile` (PTX, CUBIN, -o, -D, -I, errors with file:line, the
# missing --arch message without a GPU) and `cujit cache stats|clear` on what it compiled.
# Run by ctest as: bash test_cli_compile.sh /path/to/cujit. Needs NVRTC, not a GPU (skips,
# exit 77, when NVRTC cannot be found).
set -u
source "$(dirname "$0")/lib.sh"
# The first four bytes of a file, as hex.
magic() { head -c4 "$1" | od -An -tx1 | tr -d ' \n'; }

export CUJIT_CACHE_DIR="$TMP/cache" # private: `cache clear` must not touch other tests' cache

need_nvrtc
if "$CUJIT" devices >/dev/null 2>&1; then have_gpu=1; else have_gpu=0; fi

cd "$TMP" || exit 1
cat >k.cu <<'EOF'
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
EOF
cat >bad.cu <<'EOF'
extern "C" __global__ void bad(float *x) {
  int i = threadIdx.x;
  x[i] = not_declared_anywhere;
}
EOF
mkdir -p inc
echo '#define FACTOR 3.0f' >inc/factor.h
cat >needs.cu <<'EOF'
#include "factor.h"
#ifndef SCALE
#error SCALE must be defined
#endif
extern "C" __global__ void scaled(float *x) { x[threadIdx.x] *= FACTOR * SCALE; }
EOF

# --- PTX, default output name ------------------------------------------------------------------
run "$CUJIT" compile k.cu --arch sm_90
check_rc "compile k.cu to PTX" 0
[ -s k.ptx ] && ok "k.ptx written next to k.cu" || fail "no k.ptx"
check "PTX has vadd's entry" "$(cat k.ptx 2>/dev/null)" '\.entry vadd'
check "PTX has scale's entry" "$(cat k.ptx 2>/dev/null)" '\.entry scale'
check "PTX targets sm_90" "$(cat k.ptx 2>/dev/null)" '\.target sm_90'
check "summary names both kernels" "$err" '2 kernels \(vadd, scale\) for sm_90'
[ -z "$out" ] && ok "nothing on stdout when writing a file" || fail "stdout: $out"

# --- the same again comes from the cache ---------------------------------------------------------
run "$CUJIT" compile k.cu --arch=sm_90 -o again.ptx
check_rc "compile again" 0
check "second compile is a cache hit" "$err" 'from the cache'
cmp -s k.ptx again.ptx && ok "cached PTX is identical" || fail "cached PTX differs"

# --- CUBIN ---------------------------------------------------------------------------------------
run "$CUJIT" compile k.cu --arch sm_90 --cubin
check_rc "compile to CUBIN" 0
[ "$(magic k.cubin 2>/dev/null)" = 7f454c46 ] && ok "k.cubin is ELF" || fail "k.cubin magic: $(magic k.cubin 2>/dev/null)"
run "$CUJIT" compile k.cu --arch sm_90 --cubin -o out.bin
[ "$(magic out.bin 2>/dev/null)" = 7f454c46 ] && ok "-o out.bin is ELF" || fail "out.bin missing or not ELF"

# --- the output kind follows -o's extension; a flag that contradicts it is refused ---------------
run "$CUJIT" compile k.cu --arch sm_90 -o file.cubin
check_rc "-o file.cubin without --cubin" 0
[ "$(magic file.cubin 2>/dev/null)" = 7f454c46 ] && ok "-o file.cubin writes a CUBIN (ELF)" ||
  fail "-o file.cubin is not ELF: $(magic file.cubin 2>/dev/null)"
check "the summary names file.cubin" "$err" '-> file\.cubin$'
# An output that cannot be put in place (a directory there) is an error, the file left as it was.
mkdir -p a_dir
run "$CUJIT" compile k.cu --arch sm_90 -o a_dir
check_rc "-o onto a directory" 1
check "-o onto a directory says so" "$err" 'a_dir'
[ -d a_dir ] && [ -z "$(ls -A . | grep 'a_dir\.tmp')" ] && ok "no temporary file left" ||
  fail "a_dir replaced or a temporary left: $(ls -A)"
run "$CUJIT" compile k.cu --arch sm_90 --cubin -o named.ptx
check_rc "--cubin -o named.ptx" 1
same "--cubin -o named.ptx: the one message" "$err" \
  "cujit compile: --cubin contradicts -o named.ptx, whose extension asks for PTX; drop --cubin, or name the output *.cubin"
run "$CUJIT" compile k.cu --arch sm_90 -o named.ptx --ptx
check_rc "-o named.ptx --ptx agree" 0
check "named.ptx is PTX" "$(cat named.ptx 2>/dev/null)" '\.entry vadd'
for order in "--ptx -o x.cubin" "-o x.cubin --ptx" "--ptx -ox.cubin"; do
  rm -f x.cubin k.ptx
  run "$CUJIT" compile k.cu --arch sm_90 $order
  check_rc "$order is refused" 1
  check "$order: the contradiction is named" "$err" \
    '^cujit compile: --ptx contradicts -o x\.cubin, whose extension asks for a CUBIN; drop --ptx, or name the output \*\.ptx$'
  [ ! -e x.cubin ] && [ ! -e k.ptx ] && ok "$order: nothing written" || fail "$order wrote a file"
done
run "$CUJIT" compile k.cu --arch compute_90 -o c.cubin
check_rc "compute_90 -o c.cubin" 1
check "compute_90 -o c.cubin explains" "$err" 'no CUBIN.*sm_XX target, or write PTX'
[ ! -e c.cubin ] && ok "compute_90 -o c.cubin: nothing written" || fail "c.cubin was written"
run "$CUJIT" compile k.cu --arch sm_90 -o plain.out
check_rc "-o plain.out" 0
check "another extension: PTX, the default" "$(cat plain.out 2>/dev/null)" '\.entry vadd'

# --- -o - writes to stdout ------------------------------------------------------------------------
run "$CUJIT" compile k.cu --arch sm_90 --ptx -o -
check_rc "compile to stdout" 0
check "PTX on stdout" "$out" '\.entry vadd'
check "summary says stdout" "$err" '-> stdout'

# --- compute_XX has no CUBIN ------------------------------------------------------------------------
run "$CUJIT" compile k.cu --arch compute_90 --cubin -o c.cubin
check_rc "compute_90 --cubin" 1
check "compute_90 --cubin explains" "$err" 'no CUBIN.*sm_XX'

# --- -D and -I -------------------------------------------------------------------------------------
run "$CUJIT" compile needs.cu --arch sm_90 -I inc
check_rc "missing -D fails" 1
check "the #error is reported" "$err" 'SCALE must be defined'
run "$CUJIT" compile needs.cu --arch sm_90 -I inc -D SCALE=2.0f -o needs.ptx
check_rc "-I dir -D NAME=VALUE" 0
check_not "one kernel, no warning" "$err" 'warning'
check "needs.ptx has its kernel" "$(cat needs.ptx 2>/dev/null)" '\.entry scaled'
run "$CUJIT" compile needs.cu --arch sm_90 -Iinc -DSCALE=2.0f --fast-math --lineinfo -o needs2.ptx
check_rc "joined -Idir -DX=Y with --fast-math --lineinfo" 0

# --- errors -----------------------------------------------------------------------------------------
run "$CUJIT" compile bad.cu --arch sm_90
check_rc "a bad .cu" 1
check "the error names bad.cu and line 3" "$err" 'bad\.cu[:(]3'
check "the error names the culprit" "$err" 'not_declared_anywhere'
[ ! -e bad.ptx ] && ok "no output for a failed compile" || fail "bad.ptx was written"

# An option NVRTC refuses: the message names the command line's options, not the C fields.
run "$CUJIT" compile k.cu --arch sm_90 -X --no-such-nvrtc-option -o refused.ptx
check_rc "an option NVRTC refuses" 1
check "it names -X, --std and --arch" "$err" "NVRTC refused an option compiling 'k\.cu'; check -X, --std and --arch\."
check "it shows NVRTC's complaint" "$err" 'no-such-nvrtc-option'
check_not "no C field name" "$err" 'extra_flags'

run "$CUJIT" compile nowhere.cu --arch sm_90
check_rc "a missing file" 1
check "the missing file is named" "$err" 'nowhere\.cu'

run "$CUJIT" compile
check_rc "no input file" 1
check "no input explained" "$err" 'no input file'
same "no input: one line, nothing compiled" "$(wc -l <<<"$err")" 1
run "$CUJIT" compile k.cu --arch sm_90 --bogus
check_rc "an unknown option" 1
check "the unknown option is named" "$err" "unknown option '--bogus'"
run "$CUJIT" compile k.cu --arch
check_rc "--arch without a value" 1
check "--arch needs a value" "$err" "'--arch' needs a value"
# A refused command line compiles nothing: one message, no summary, no output.
for opt in --arch --std -o -D -I -X; do
  rm -f k.ptx
  run "$CUJIT" compile k.cu --arch sm_90 $opt
  check_rc "$opt without a value" 1
  same "$opt without a value: the one message" "$err" "cujit compile: option '$opt' needs a value"
  [ ! -e k.ptx ] && ok "$opt without a value: no output" || fail "$opt without a value wrote k.ptx"
done
run "$CUJIT" compile k.cu bad.cu --arch sm_90
check_rc "two input files" 1
same "two input files: the one message" "$err" "cujit compile: one input file at a time ('k.cu' and 'bad.cu')"
[ ! -e k.ptx ] && ok "two input files: no output" || fail "two input files wrote k.ptx"
run "$CUJIT" compile k.cu --arch sm_90 --bogus
same "an unknown option: the one message" "$err" "cujit compile: unknown option '--bogus' (see 'cujit help')"
run "$CUJIT" compile k.cu --arch sm_90 -o k.ptx
check_rc "a good compile" 0
check_not "a file with kernels gets no warning" "$err" 'warning'
run "$CUJIT" compile k.cu --arch sm_90 -o "$TMP/no/such/dir/k.ptx"
check_rc "an unwritable output" 1
check "the output path is named" "$err" 'cannot write .*no/such/dir/k\.ptx'

# --- without --arch ----------------------------------------------------------------------------------
rm -f k.ptx
run "$CUJIT" compile k.cu
if [ "$have_gpu" = 1 ]; then
  check_rc "without --arch, the GPU's arch" 0
  check "the GPU's arch is used" "$(cat k.ptx 2>/dev/null)" '\.target sm_[0-9]+'
else
  check_rc "without --arch and without a GPU" 1
  check "the message says to pass --arch" "$err" '--arch'
fi

# --- cache stats and clear -------------------------------------------------------------------------------
run "$CUJIT" cache stats
check_rc "cache stats" 0
entries=$(sed -n 's/^entries *//p' <<<"$out")
[ "${entries:-0}" -ge 1 ] && ok "cache holds entries ($entries)" || fail "cache stats entries: '$entries'"
# A mistyped command must not wipe the cache: extra arguments are refused and nothing is removed.
for junk in "clear junk" "clear clear" "clear --all" "stats junk" "dir junk"; do
  run "$CUJIT" cache $junk
  check_rc "cache $junk is refused" 1
  check "cache $junk: usage" "$err" '^cujit cache: usage: cujit cache dir\|stats\|clear$'
  same "cache $junk prints nothing on stdout" "$out" ""
done
run "$CUJIT" cache stats
same "the refused commands removed nothing" "$(sed -n 's/^entries *//p' <<<"$out")" "$entries"
run "$CUJIT" cache clear
check_rc "cache clear" 0
check "cache clear reports what it removed" "$out" "^removed $entries entr(y|ies) .* from .*/cache$"
run "$CUJIT" cache stats
check "cache is empty after clear" "$out" '^entries +0$'
check "an empty cache's size, in bytes, and the default limit" "$out" \
  '^size +0 bytes \(limit 1\.0 GiB, CUJIT_CACHE_MAX\)$'
run env CUJIT_CACHE_MAX=1536 "$CUJIT" cache stats
check "a limit in KiB" "$out" '^size +0 bytes \(limit 1\.5 KiB, CUJIT_CACHE_MAX\)$'
run env CUJIT_CACHE_MAX=1000 "$CUJIT" cache stats
check "a limit under 1 KiB, in bytes" "$out" '^size +0 bytes \(limit 1000 bytes, CUJIT_CACHE_MAX\)$'
run "$CUJIT" cache clear
check "clearing an empty cache" "$out" '^removed 0 entries \(0 bytes\) from .*/cache$'
# A file whose only kernel the preprocessor leaves out is refused, saying so; nothing is written.
printf '#if 0\nextern "C" __global__ void gone(int *x) { x[0] = 1; }\n#endif\n' >nokernel.cu
run "$CUJIT" compile nokernel.cu --arch sm_90 -o nokernel.ptx
check_rc "a file whose kernel is under #if 0" 1
check "it says why" "$err" "^cujit compile: 'nokernel\.cu': none of the kernels read from the source \(gone\) is in the compiled program"
[ ! -e nokernel.ptx ] && ok "no output for it" || fail "nokernel.ptx was written"
run "$CUJIT" compile k.cu --arch sm_90 -o after.ptx
check "after clear, NVRTC compiles again" "$err" ', compiled in '

finish
