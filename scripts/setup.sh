#!/usr/bin/env bash
# setup.sh -- on a fresh Debian/Ubuntu machine: install what cujit builds with, build it into
# ./build, and run a real example (vector add from Lua; with no GPU it compiles the kernels and
# says the launch was skipped).
#   scripts/setup.sh            install (if root and missing), build, run the example
#   SKIP_APT=1 scripts/setup.sh skip the package install
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="cmake ninja-build pkg-config gcc liblua5.4-dev lua5.4 libcriterion-dev libedit-dev libpng-dev libxxhash-dev luarocks"
if [ -z "${SKIP_APT:-}" ] && command -v apt-get >/dev/null; then
  missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    else
      echo "setup: missing packages: $missing (run as root, or: sudo apt-get install $missing)" >&2
      exit 1
    fi
  fi
fi
[ -d /usr/local/cuda/include ] || [ -n "${CUDAToolkit_ROOT:-}" ] ||
  echo "setup: no CUDA toolkit at /usr/local/cuda; set CUDAToolkit_ROOT to yours" >&2
# NVRTC is opened at run time; make the toolkit's copy findable when it is not on the loader path.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
example=examples/vector_add.lua
status=0
./build/cujit "$example" || status=$?
if [ "$status" = 77 ]; then
  # No GPU here: run the part that needs none (compile every kernel for sm_90, host checks).
  echo "setup: no GPU, so running $example in compile-only mode"
  CUJIT_EXAMPLE_COMPILE_ONLY=1 ./build/cujit "$example"
elif [ "$status" != 0 ]; then
  exit "$status"
fi
