#!/usr/bin/env bash
# sanitize.sh -- builds cujit with AddressSanitizer (LeakSanitizer included) and
# UndefinedBehaviorSanitizer into ./build-san (-DCUJIT_SANITIZE=address,undefined) and runs the
# whole suite there, fuzz replays included. Any report fails the run. NVRTC's own allocations,
# kept for the life of the process, are suppressed by name in scripts/sanitize.supp; nothing of
# cujit's is (NVRTC stays mapped in this build so that its blocks are named). Left out, as the
# ASan runtime cannot be loaded into an executable after it started: sh.test_lua_stock (cujit.so
# in the system's lua5.4) and sh.test_install (a program built against the installed library).
# c.test_oom runs here too: its refused allocations then also show what an error path leaks.
# About a minute on 2 cores, build included; .ci/run runs it after the normal suite.
#   scripts/sanitize.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUJIT_SANITIZE=address,undefined
cmake --build build-san -j"$(nproc)"
# allocator_may_return_null: an allocation too big for the host fails as without ASan, so the
# CPU device's out-of-memory errors are tested here too.
# intercept_tls_get_addr=0: GCC 12's libasan (up to GCC 13) takes a dynamic TLS block whose start
# lies 16 bytes into a page (tls_beg % 4096, where a malloc'd block often lands) for one with
# glibc 2.19's header and reads the two words before it as the block's extent; LeakSanitizer's
# tracer then reads that made-up range at exit and dies ("Tracer caught signal 11 ... LeakSanitizer
# has encountered a fatal error", no leak reported). The CPU device's kernels are dlopened
# libraries with thread-local blocks, so it came and went with the heap's layout (lua.test_mlp in
# two CI runs in a row). Without the interception LeakSanitizer does not scan dynamically loaded
# libraries' thread-local blocks, which hold no heap pointer of cujit's (its own are static TLS).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export ASAN_OPTIONS=$ASAN_OPTIONS:allocator_may_return_null=1:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$PWD/scripts/sanitize.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
log=build-san/sanitize-ctest.log
status=0
ctest --test-dir build-san --output-on-failure -j"$(nproc)" -E '^sh\.test_(lua_stock|install)$' "$@" \
  2>&1 | tee "$log" || status=$?
[ "$status" = 0 ] && exit 0
# Two failures are the sanitizer runtime's own, not the code's, and run once more, alone (each must
# pass then; any other failure stands as it is):
# - LeakSanitizer's stop-the-world tracer can segfault at a process's exit ("Tracer caught signal
#   11 ... LeakSanitizer has encountered a fatal error": no leak is reported, the sanitizer itself
#   stopped). The cause is GCC 12's libasan guessing the extent of a dlopened library's thread-local
#   block (ASAN_OPTIONS above, which should end it; CMakeLists.txt, where the sanitizer build loads
#   NVRTC at start for it); kept for a libasan that still crashes so.
# - A Criterion program (c.*) can hang before its test starts: Criterion forks its worker while
#   nanomsg's thread may hold libasan's stack-depot lock (inside a malloc), and GCC 12's libasan
#   does not take that lock around fork, so the child spins on it forever (seen once in 300 runs of
#   c.test_gemm_tc.stub_driver beside c.test_gemm.stub_driver; gdb: the child in
#   StackDepotNode::store under Criterion's malloc, the parent in waitpid). ctest stops it at the
#   test's timeout ("***Timeout") with no sanitizer report.
failed=$(sed -n 's/^[0-9]*:\(.*\)$/\1/p' build-san/Testing/Temporary/LastTestsFailed.log 2>/dev/null)
[ -n "$failed" ] || exit "$status"
why=""
for t in $failed; do
  # The test's result line, and its block of output: to the next line ctest writes itself.
  result=$(grep -E "Test +#[0-9]+: $t " "$log" | tail -1)
  block=$(awk -v t="$t" '
    $0 ~ "Test +#[0-9]+: " t " " { on = 1; next }
    on && /^ *([0-9]+\/[0-9]+ Test|Start +[0-9]+:)/ { on = 0 }
    on { print }' "$log")
  if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer): detected|runtime error:|[0-9]+ tests?, [1-9][0-9]* failed" <<<"$block"; then
    known=0
  elif grep -q "Tracer caught signal" <<<"$block" &&
    grep -q "LeakSanitizer has encountered a fatal error" <<<"$block"; then
    known=1 why="$why $t (LeakSanitizer's tracer crashed at exit)"
  elif [[ $t == c.* ]] && grep -q '\*\*\*Timeout' <<<"$result" && ! grep -q "^\[FAIL\]" <<<"$block"; then
    known=1 why="$why $t (a Criterion worker hung in libasan's fork)"
  else
    known=0
  fi
  if [ "$known" = 0 ]; then
    echo "sanitize.sh: $t failed for its own reasons (above): no second run" >&2
    exit "$status"
  fi
done
echo "sanitize.sh: failed only through the sanitizer runtime:$why; once more:" >&2
ctest --test-dir build-san --output-on-failure -R "^($(echo $failed | tr ' ' '|'))\$"
