#!/usr/bin/env bash
# tsan.sh -- builds cujit with ThreadSanitizer into ./build-tsan (-DCUJIT_SANITIZE_THREAD=ON) and
# runs the programs written for it (tests/tsan: Criterion's arena cannot start under
# ThreadSanitizer, so the suite itself does not run there): tsan.threads (8 threads on one
# engine: defining, launching, specialising, compiling many programs at once) and
# tsan.streams_stub (8 threads making, using and freeing streams, events and buffers on the
# stand-in driver's pretend GPU: what the locks of the CUDA backend guard, without a GPU),
# tsan.cpu (8 threads capturing copies, replaying and allocating on the CPU device), tsan.reset
# (the CPU device faulting on one thread while another resets it) and tsan.repl_pty (the REPL's watchdog thread, on a pseudo-terminal). Any race reported fails the
# run. A few minutes on 2 cores, mostly the build; .ci/run runs it last.
#   scripts/tsan.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUJIT_SANITIZE_THREAD=ON
cmake --build build-tsan -j"$(nproc)" --target tsan_threads tsan_streams tsan_cpu tsan_reset cujit_bench_stubcuda cujit_cli
# halt_on_error: the first race ends the program with ThreadSanitizer's status (66)
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
ctest --test-dir build-tsan --output-on-failure -R '^tsan\.' --no-tests=error "$@"
