# test_cli_tools_edges.sh -- the edges of the `cujit` subcommands that the other test_cli* scripts
# leave: `--help` / `-h` after every subcommand (the usage on stdout, status 0, nothing else done),
# `cujit help SUBCOMMAND`, extra arguments refused with their message, a stdout that cannot be
# written (a full disk) said and status 1, which CUJIT_CACHE values the "cache is off" message may
# blame, the units of sizes, `cache clear`'s count in the singular; and of `cujit compile`: the
# default output beside the input wherever it is, the summary's singular, NVRTC's warnings shown
# before it, -o - leaving stdout to the code alone (even with -v), options in any order, -D / -X /
# --std given twice, and the exact refusal of an empty input or output name and of --sass beside
# --ptx or --cubin; a source with no kernel cujit can name refused, and --time without a TMPDIR to
# write in.
# Run by ctest as: bash test_cli_tools_edges.sh /path/to/cujit. No GPU; the compile part needs NVRTC
# (it skips, exit 77, without it, after the checks that need none).
set -u
source "$(dirname "$0")/lib.sh"

export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CACHE
cd "$TMP" || exit 1
run "$CUJIT" help
usage=$out
check "the usage starts as documented" "$usage" '^usage: cujit \[options\] \[script \[args\]\]'

# --- --help and -h after a subcommand: the usage, exactly, and nothing else -----------------------
# A compile given --help compiles nothing (no k.ptx), whatever came before it.
printf 'extern "C" __global__ void one(int *x) { x[0] = 1; }\n' >k.cu
for args in "compile --help" "compile -h" "compile k.cu --arch sm_90 --help" "cache --help" \
  "cache -h" "devices --help" "devices -h" "--version --help" "--version -h" "help compile" \
  "help cache" "help --help"; do
  # shellcheck disable=SC2086
  run "$CUJIT" $args
  check_rc "cujit $args" 0
  same "cujit $args: the usage on stdout" "$out" "$usage"
  same "cujit $args: nothing on stderr" "$err" ""
done
[ ! -e k.ptx ] && ok "compile --help wrote nothing" || fail "compile --help compiled k.cu"
# After -X (NVRTC's options) or -o, '--help' is a value, not a request for the usage.
run "$CUJIT" compile k.cu --arch sm_90 -o --help
same "-o --help: the value is missing, not the usage" "$err" \
  "cujit compile: option '-o' needs a value, and '--help' after it is an option (a value that starts with '-' is joined to it: -o--help)"

# --- extra arguments ----------------------------------------------------------------------------
run "$CUJIT" --version extra
check_rc "--version with an argument" 1
same "--version with an argument: the message" "$err" "cujit --version: takes no arguments"
same "--version with an argument: nothing on stdout" "$out" ""
run "$CUJIT" devices --help extra
check_rc "devices --help extra" 1
same "devices --help extra: refused, not the usage" "$err" "cujit devices: takes no arguments"
run "$CUJIT" help bogus
check_rc "help with a name that is no subcommand" 1
same "help bogus: the message" "$err" \
  "cujit help: 'bogus' is not a subcommand (devices, compile, cache, help, --version); 'cujit help' alone shows the usage"
same "help bogus: nothing on stdout" "$out" ""
run "$CUJIT" help compile cache
check_rc "help with two names" 1
same "help with two names: the message" "$err" \
  "cujit help: takes one argument at most, a subcommand's name (devices, compile, cache, help, --version)"
run "$CUJIT" cache --help extra
check_rc "cache --help extra" 1
same "cache --help extra: the cache's usage" "$err" "cujit cache: usage: cujit cache dir|stats|clear"

# --- a stdout that cannot be written -----------------------------------------------------------
if [ -w /dev/full ]; then
  for args in "help" "--version" "cache dir" "compile --help"; do
    # shellcheck disable=SC2086
    "$CUJIT" $args >/dev/full 2>"$TMP/stderr"
    rc=$?
    err=$(cat "$TMP/stderr")
    check_rc "cujit $args >/dev/full" 1
    check "cujit $args >/dev/full: says stdout could not be written" "$err" \
      "^cujit ${args%% *}: cannot write to stdout(: No space left on device)?$"
  done
else
  echo "note: no /dev/full here: a stdout that cannot be written is not checked"
fi

# --- devices and --version against the stand-in driver (scripts/bench/stub_driver.c) -------------
# It has one device, "stub sm_90 (no GPU)", of compute capability CUJIT_STUB_CC (9), a driver of
# CUJIT_STUB_DRIVER_VERSION (13000), and fails the calls CUJIT_STUB_FAIL names: the paths of a
# machine with a GPU, without one.
stub="${CUJIT_BINARY_DIR:-}/scripts/bench/stubcuda"
if [ -e "$stub/libcuda.so.1" ]; then
  with_stub() { LD_LIBRARY_PATH="$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
  with_stub run "$CUJIT" devices
  check_rc "devices with a driver and a device" 0
  same "devices: ordinal, name, arch, memory, SMs" "$out" "0  stub sm_90 (no GPU)  sm_90  80.0 GiB  132 SMs"
  same "devices: nothing on stderr" "$err" ""
  CUJIT_STUB_CC=8 with_stub run "$CUJIT" devices
  check "devices: the arch is the device's" "$out" "^0  stub sm_90 \(no GPU\)  sm_80  "
  with_stub run "$CUJIT" --version
  same "--version: the driver's CUDA version" "$(tail -1 <<<"$out")" "driver   CUDA 13.0"
  CUJIT_STUB_DRIVER_VERSION=12090 with_stub run "$CUJIT" --version
  same "--version: CUDA 12.9" "$(tail -1 <<<"$out")" "driver   CUDA 12.9"
  CUJIT_STUB_FAIL=cuDriverGetVersion with_stub run "$CUJIT" --version
  same "--version: a driver that gives no version" "$(tail -1 <<<"$out")" \
    "driver   loaded, but it reports no CUDA version (cuDriverGetVersion)"
  CUJIT_DEVICE=0 CUJIT_STUB_FAIL=cuDeviceGetCount with_stub run "$CUJIT" devices
  check_rc "devices when the driver fails" 1
  same "devices when the driver fails (CUJIT_DEVICE=0): its reason, and the CPU device" "$err" \
    "cujit devices: reading the CUDA devices failed: stub error text (stub error name, code 2) (without a GPU, kernels run on the CPU device: CUJIT_DEVICE=cpu, or cuda.device(\"cpu\") in Lua; 'cujit compile --arch sm_90' needs no GPU)"
  CUJIT_DEVICE=cpu CUJIT_STUB_FAIL=cuDeviceGetCount with_stub run "$CUJIT" devices
  check "devices when the driver fails, the CPU device chosen: said so" "$err" \
    "\(kernels run on the CPU device, as CUJIT_DEVICE=cpu asks; 'cujit compile --arch sm_90' needs no GPU\)$"
else
  echo "note: no stand-in driver at $stub: devices with a device is checked on a GPU only"
fi
run "$CUJIT" devices
version_driver=$("$CUJIT" --version | sed -n 's/^driver   missing: //p')
if [ "$rc" -ne 0 ] && [ -n "$version_driver" ]; then
  check "devices without a driver: the loader's reason, as --version gives it" "$err" \
    "^cujit devices: $(sed 's/[][().*^$\\/]/\\&/g' <<<"$version_driver") \(without a GPU"
fi

# --- the cache is off: what the message blames ---------------------------------------------------
# Only a value that turns the cache off (0, off, no, false, disabled, in any case) is blamed; with
# any other, the cache is off for the reason the library's warning gives (here a directory that
# cannot be made), and "unset CUJIT_CACHE" would not help.
for value in off OFF 0 no False disabled; do
  for what in dir stats clear; do
    CUJIT_CACHE=$value run "$CUJIT" cache $what
    check_rc "CUJIT_CACHE=$value cache $what" 1
    same "CUJIT_CACHE=$value cache $what: blames CUJIT_CACHE" "$err" \
      "cujit cache: the disk cache is off (CUJIT_CACHE=$value); unset CUJIT_CACHE to use it"
    same "CUJIT_CACHE=$value cache $what: nothing on stdout" "$out" ""
  done
done
touch not_a_dir
for value in on 1 yes; do
  CUJIT_CACHE=$value CUJIT_CACHE_DIR="$TMP/not_a_dir/cache" run "$CUJIT" cache stats
  check_rc "CUJIT_CACHE=$value, an unusable directory" 1
  same "CUJIT_CACHE=$value, an unusable directory: the warning says why, the message points to it" \
    "$(sed -n 2p <<<"$err")" \
    "cujit cache: the disk cache is off (the warning above says why); set CUJIT_CACHE_DIR to a directory of your own"
  check "CUJIT_CACHE=$value, an unusable directory: the warning names the directory" \
    "$(head -1 <<<"$err")" "^cujit: warning: cache directory '.*not_a_dir/cache'"
done

# Sizes: a unit from 1024 of the one below (CUJIT_CACHE_MAX is the limit stats shows).
for pair in "1023:1023 bytes" "1024:1.0 KiB" "1048575:1024.0 KiB" "1048576:1.0 MiB" "3221225472:3.0 GiB" \
  "1099511627776:1.0 TiB"; do
  CUJIT_CACHE_MAX=${pair%%:*} run "$CUJIT" cache stats
  same "cache stats with CUJIT_CACHE_MAX=${pair%%:*}" "$(sed -n 3p <<<"$out")" \
    "size       0 bytes (limit ${pair#*:}, CUJIT_CACHE_MAX)"
done

need_nvrtc
# Without --arch the current device's arch: the stand-in driver's sm_80, say.
if [ -e "$stub/libcuda.so.1" ]; then
  CUJIT_STUB_CC=8 with_stub run "$CUJIT" compile k.cu -o -
  check_rc "compile without --arch, a device of sm_80" 0
  check "the device's arch is the target" "$out" '^\.target sm_80$'
  check "and the summary says so" "$err" ' for sm_80, '
fi
# --- cache clear counts in the singular ----------------------------------------------------------
CUJIT_CACHE_DIR="$TMP/one" run "$CUJIT" compile k.cu --arch sm_90 -o single.ptx
CUJIT_CACHE_DIR="$TMP/one" run "$CUJIT" cache stats
same "one compile, one cache entry" "$(sed -n 2p <<<"$out")" "entries    1"
size=$(sed -n 's/^size       \(.*\) (limit .*/\1/p' <<<"$out")
CUJIT_CACHE_DIR="$TMP/one" run "$CUJIT" cache clear
same "cache clear of one entry: the singular, its size, the directory" "$out" \
  "removed 1 entry ($size) from $TMP/one"
# --- compile: where the output goes by default ------------------------------------------------
mkdir -p sub
cp k.cu sub/k.cu
cp k.cu kernel.txt
run "$CUJIT" compile sub/k.cu --arch sm_90
check_rc "compile sub/k.cu" 0
[ -s sub/k.ptx ] && [ ! -e k.ptx ] && ok "sub/k.cu's PTX goes beside it, sub/k.ptx" ||
  fail "sub/k.cu wrote: $(find . -name '*.ptx')"
check "sub/k.ptx is PTX of its kernel" "$(cat sub/k.ptx 2>/dev/null)" '\.entry one'
check "the summary: one kernel in the singular, and where it went" "$err" \
  '^cujit: sub/k\.cu: 1 kernel \(one\) for sm_90, compiled in [0-9.]+ ms -> sub/k\.ptx$'
run "$CUJIT" compile sub/k.cu --arch sm_90 --cubin
[ "$(head -c4 sub/k.cubin 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] &&
  ok "--cubin: sub/k.cubin, an ELF" || fail "no ELF sub/k.cubin"
check "a cache hit says so" "$err" '^cujit: sub/k\.cu: 1 kernel \(one\) for sm_90, from the cache in [0-9.]+ ms -> sub/k\.cubin$'
run "$CUJIT" compile kernel.txt --arch sm_90
[ -s kernel.txt.ptx ] && ok "a name without .cu gets .ptx added: kernel.txt.ptx" ||
  fail "kernel.txt wrote: $(ls)"

# --- compile: options in any order, and given twice --------------------------------------------
cat >two.cu <<'EOF'
extern "C" __global__ void two(int *out, float *x, const float *y) {
  out[0] = A + 1000;
  out[1] = B + 2000;
  x[0] = x[0] / y[0];
#if __cplusplus >= 201703L
  out[2] = 17017;
#else
  out[2] = 11011;
#endif
}
EOF
run "$CUJIT" compile --arch sm_90 -D A=5 -o - two.cu -D B=7
check_rc "options before and after the input" 0
check "-D given twice: the first macro" "$out" '\b1005;'
check "-D given twice: the second macro" "$out" '\b2007;'
run "$CUJIT" compile two.cu --arch sm_90 -DA=1 -DB=2 --std c++11 --std c++17 -o -
check "--std given twice: the last (C++17)" "$out" '\b17017;'
run "$CUJIT" compile two.cu --arch sm_90 -DA=1 -DB=2 --std c++17 --std=c++11 -o -
check "--std given twice, the last joined: C++11" "$out" '\b11011;'
run "$CUJIT" compile two.cu --arch sm_90 -DA=1 -DB=2 -X --use_fast_math -X -lineinfo -o -
check "-X given twice: the first flag (fast math)" "$out" 'div\.(approx|full)\.ftz\.f32'
check "-X given twice: the second flag (line info)" "$out" '\.loc'

# --- compile: stdout holds the code alone; NVRTC's warnings come before the summary -------------
run "$CUJIT" compile k.cu --arch sm_90 -v -o -
check_rc "-v -o -" 0
check "-o -: the PTX on stdout" "$out" '\.entry one'
check_not "-o - -v: no report or summary on stdout" "$out" 'registers|kernel \(one\)|^cujit'
check "-o - -v: the report on stderr" "$err" '^cujit: one: [0-9]+ registers'
check "-o - -v: the summary on stderr, naming stdout" "$err" '-> stdout$'
printf 'extern "C" __global__ void w(int *x) { int unused_%s = 3; x[0] = 1; }\n' "$RANDOM" >warn.cu
run "$CUJIT" compile warn.cu --arch sm_90 -o warn.ptx
check_rc "a compile with a warning succeeds" 0
check "NVRTC's warning is shown, naming the file and line" "$err" '^warn\.cu\(1\): warning .*unused_'
same "the summary is the last line" "$(tail -1 <<<"$err" | sed 's/in [0-9.]* ms/in T ms/')" \
  "cujit: warn.cu: 1 kernel (w) for sm_90, compiled in T ms -> warn.ptx"

# --- compile: refusals, exactly, and nothing written ---------------------------------------------
# refused NAME MESSAGE ARGS...
refused() {
  local name=$1 msg=$2 before
  shift 2
  before=$(find . | sort)
  run "$CUJIT" compile "$@"
  check_rc "$name" 1
  same "$name: the message" "$err" "$msg"
  same "$name: nothing on stdout" "$out" ""
  same "$name: no file written" "$(find . | sort)" "$before"
}
refused "an empty input name" \
  "cujit compile: the input file's name is empty (''); usage: cujit compile FILE.cu [--arch sm_XX] [-o OUT] [--ptx|--cubin]" \
  "" --arch sm_90
refused "-o with an empty name" \
  "cujit compile: -o was given an empty file name; name the output file, or write -o - for stdout" \
  k.cu --arch sm_90 -o ""
refused "--sass with --cubin" \
  "cujit compile: --sass prints the machine code on stdout and writes no file: drop --cubin, or redirect stdout" \
  k.cu --arch sm_90 --sass --cubin
refused "--ptx with --sass" \
  "cujit compile: --sass prints the machine code on stdout and writes no file: drop --ptx, or redirect stdout" \
  k.cu --arch sm_90 --ptx --sass
refused "-h joined to a value is no request for help" \
  "cujit compile: unknown option '-hx' (see 'cujit help')" k.cu --arch sm_90 -hx

# --- a source without a kernel cujit can name, and --time without a place to write -------------
# A template kernel no name expression instantiates, and kernels only inside #if 0: refused with
# the reason (cujit_program_compile's), nothing written.
printf 'template <typename T> __global__ void t(T *x) { x[0] = 1; }\n' >templ.cu
printf '#if 0\nextern "C" __global__ void gone(int *x) { x[0] = 1; }\n#endif\n' >inactive.cu
before=$(find . -path ./cache -prune -o -print | sort) # the cache may gain entries
run "$CUJIT" compile templ.cu --arch sm_90 -o templ.ptx
check_rc "only a template kernel" 1
same "only a template kernel: the message" "$err" \
  "cujit compile: 'templ.cu': no __global__ kernel in the source other than templates: name their instantiations in the name_expressions option, such as {\"scale<float>\"}"
run "$CUJIT" compile inactive.cu --arch sm_90 -o inactive.ptx
check_rc "kernels only inside #if 0" 1
same "kernels only inside #if 0: the message" "$err" \
  "cujit compile: 'inactive.cu': none of the kernels read from the source (gone) is in the compiled program: they are all inside inactive preprocessor conditions"
same "neither wrote a file" "$(find . -path ./cache -prune -o -print | sort)" "$before"
before=$(find . -path ./cache -prune -o -print | sort) # the cache may gain entries
TMPDIR="$TMP/not-there" run "$CUJIT" compile k.cu --arch sm_90 --time -o k2.ptx
check_rc "--time with TMPDIR missing" 1
same "--time with TMPDIR missing: the message" "$err" \
  "cujit compile: --time: cannot make a directory in TMPDIR"
same "--time with TMPDIR missing: nothing written" "$(find . -path ./cache -prune -o -print | sort)" \
  "$before"

finish
