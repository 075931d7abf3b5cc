#!/usr/bin/env bash
# test.sh -- run the whole test suite (after scripts/setup.sh built ./build). GPU tests skip with a
# reason when there is no GPU; CUJIT_REQUIRE_GPU=1 turns those skips into failures.
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
