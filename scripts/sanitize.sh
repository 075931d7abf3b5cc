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
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export ASAN_OPTIONS=$ASAN_OPTIONS:allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/sanitize.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
log=build-san/sanitize-ctest.log
status=0
ctest --test-dir build-san --output-on-failure -j"$(nproc)" -E '^sh\.test_(lua_stock|install)$' "$@" \
  2>&1 | tee "$log" || status=$?
[ "$status" = 0 ] && exit 0
# LeakSanitizer's own stop-the-world tracer can still segfault at a process's exit ("Tracer caught
# signal 11 ... LeakSanitizer has encountered a fatal error": no leak is reported, the sanitizer
# itself stopped). The cause is GCC 12's libasan guessing the extent of a dlopened library's
# thread-local block (CMakeLists.txt, where the sanitizer build loads NVRTC at start for it); the
# CPU device's kernels are such libraries, so it depends on the heap's layout (seen in
# lua.test_library and lua.test_mlp, never twice in a row). A test that failed only so runs once
# more, alone, and must pass then; any other failure stands as it is.
failed=$(sed -n 's/^[0-9]*:\(.*\)$/\1/p' build-san/Testing/Temporary/LastTestsFailed.log 2>/dev/null)
[ -n "$failed" ] || exit "$status"
for t in $failed; do
  # The test's block of output: from its result line to the next line ctest writes itself.
  block=$(awk -v t="$t" '
    $0 ~ "Test +#[0-9]+: " t " " { on = 1; next }
    on && /^ *([0-9]+\/[0-9]+ Test|Start +[0-9]+:)/ { on = 0 }
    on { print }' "$log")
  if ! grep -q "Tracer caught signal" <<<"$block" ||
    ! grep -q "LeakSanitizer has encountered a fatal error" <<<"$block" ||
    grep -qE "ERROR: (AddressSanitizer|LeakSanitizer): detected|runtime error:|[0-9]+ tests?, [1-9][0-9]* failed" <<<"$block"; then
    echo "sanitize.sh: $t failed for its own reasons (above): no second run" >&2
    exit "$status"
  fi
done
echo "sanitize.sh: $(echo $failed) failed only as LeakSanitizer's tracer crashed at exit; once more:" >&2
ctest --test-dir build-san --output-on-failure -R "^($(echo $failed | tr ' ' '|'))\$"
