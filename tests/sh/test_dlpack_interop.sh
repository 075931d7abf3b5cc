# test_dlpack_interop.sh -- cujit's DLPack export and import against real producers and consumers
# (dlpack_interop.py, through Python's ctypes and the build's libcujit.so): PyTorch's CUDA tensors
# on a GPU, and on the CPU device PyTorch's CPU tensors and NumPy arrays, each where that library
# is importable. Memory is shared both ways (same address, writes seen by the other side) and each
# side's deleter runs when the other lets go.
# Where it runs: with a GPU and a torch that sees it, all of it. A GPU without torch (or a torch
# without CUDA) skips the GPU half with the reason, also under CUJIT_REQUIRE_GPU=1 (torch is no
# dependency of cujit); no GPU under CUJIT_REQUIRE_GPU=1 fails, as the suite does. What could not
# run is named, and the test then ends as skipped (77) once everything that ran passed.
# Run by ctest as: bash test_dlpack_interop.sh /path/to/cujit.
set -u
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
lib="${CUJIT_BINARY_DIR:?run through ctest}/libcujit.so"
if [ ! -e "$lib" ]; then
  echo "skip: $lib is not built"
  exit 77
fi
if ! command -v python3 >/dev/null; then
  echo "skip: no python3 to load libcujit.so with ctypes"
  exit 77
fi
if ldd "$lib" 2>/dev/null | grep -Eq 'lib(a|t|ub)san'; then
  echo "skip: $lib is a sanitizer build, which python3 cannot load without the sanitizer's runtime"
  exit 77
fi

gpu=$("$CUJIT" -e 'local c = require "cujit"; io.write(c.has_gpu() and "yes" or "no")' 2>&1)
if [ "$gpu" != yes ] && [ "${CUJIT_REQUIRE_GPU:-}" = 1 ]; then
  echo "FAIL: CUJIT_REQUIRE_GPU=1 but cujit sees no GPU ($gpu)" >&2
  exit 1
fi

unchecked=()
# mode: runs dlpack_interop.py for one library and device; a missing library (77) is noted.
mode() {
  (cd "$TMP" && python3 "$here/dlpack_interop.py" "$lib" "$1") >"$TMP/$1.out" 2>&1
  local status=$?
  cat "$TMP/$1.out"
  case $status in
  0) ok "$1: every check held" ;;
  77) unchecked+=("$1 ($(grep -m1 '^skip:' "$TMP/$1.out" | cut -c7-))") ;;
  *) fail "$1: exit $status" ;;
  esac
}

export CUJIT_CACHE_DIR="${CUJIT_CACHE_DIR:-$TMP/cache}"
if [ "$gpu" = yes ]; then
  mode torch-cuda
else
  unchecked+=("torch-cuda (no GPU)")
fi
mode torch-cpu
mode numpy-cpu

if [ "$fails" -eq 0 ] && [ "${#unchecked[@]}" -gt 0 ]; then
  echo "$fails failure(s)"
  printf 'skip: not run: %s\n' "${unchecked[@]}"
  exit 77
fi
finish
