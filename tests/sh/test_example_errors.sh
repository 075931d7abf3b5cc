#!/usr/bin/env bash
# test_example_errors.sh -- an example whose cujit call fails says so and exits 1 (the examples'
# CHECK): here the C quick start (examples/c/saxpy.c) on the CPU device with no C++ compiler.
. "$(dirname "$0")/lib.sh"
saxpy="$CUJIT_BINARY_DIR/examples/example_saxpy"
[ -x "$saxpy" ] || { echo "skip: $saxpy is not built"; exit 77; }
CUJIT_DEVICE=cpu CUJIT_CXX=/nonexistent/g++ CUJIT_CACHE_DIR="$TMP/cache" run "$saxpy"
check_rc "saxpy with a failing call" 1
check "says what failed" "$err" '^saxpy: .*(/nonexistent/g\+\+|CUJIT_CXX)'
finish
