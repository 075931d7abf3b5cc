#!/usr/bin/env bash
# test_cli_compile_cpu.sh -- `cujit compile` refuses the CPU device's "arch", which has no PTX or
# CUBIN to write (its kernels are host code compiled when a script or program runs them): --arch
# cpu, --arch=cpu, with --ptx or --cubin, and no --arch while the CPU device is current
# (CUJIT_DEVICE=cpu). Each exits 1 with a message saying so and what to pass, and writes nothing:
# no output file is made, and one already there is left as it was.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
export CUJIT_CACHE_DIR="$TMP/cache"
printf 'extern "C" __global__ void k(int *x) { x[0] = 1; }\n' >k.cu
for args in "--arch cpu" "--arch=cpu" "--arch cpu --ptx" "--arch cpu --cubin" "--arch cpu -o k.cubin"; do
  rm -f k.ptx k.cubin
  # shellcheck disable=SC2086
  run "$CUJIT" compile k.cu $args
  check_rc "compile $args" 1
  check "compile $args: says why" "$err" \
    "^cujit compile: --arch cpu names the CPU device, which has no PTX or CUBIN"
  check "compile $args: says what to pass" "$err" "pass a GPU target, for example --arch sm_90"
  check_not "compile $args: no success line" "$err" "kernel \(k\) for cpu"
  [ ! -e k.ptx ] && [ ! -e k.cubin ] && ok "compile $args: writes nothing" ||
    fail "compile $args wrote $(ls k.ptx k.cubin 2>/dev/null)"
done
echo "kept" >out.ptx
run "$CUJIT" compile k.cu --arch cpu -o out.ptx
check_rc "compile --arch cpu -o an existing file" 1
same "the existing file is left as it was" "$(cat out.ptx)" "kept"
run "$CUJIT" compile k.cu --arch cpu -o -
check_rc "compile --arch cpu -o -" 1
same "nothing on stdout" "$out" ""
rm -f k.ptx
CUJIT_DEVICE=cpu run "$CUJIT" compile k.cu
check_rc "compile with the CPU device current, no --arch" 1
check "the current device is named" "$err" \
  "^cujit compile: the current device is the CPU device \(CUJIT_DEVICE=cpu\), which has no PTX or CUBIN"
[ ! -e k.ptx ] && ok "nothing written" || fail "k.ptx written"
finish
