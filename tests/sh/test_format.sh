#!/usr/bin/env bash
# test_format.sh -- the C sources follow .clang-format (device headers in kernels_src/ are CUDA C++
# and are not checked). Skips (77) when clang-format is not installed.
set -u
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
cd "${CUJIT_SOURCE_DIR:?}" || exit 1
bad=0
for f in $(git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^kernels_src/' ||
           find engine include tests examples scripts -name '*.[ch]'); do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run: clang-format -i $f)"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "every C file follows .clang-format"
exit $bad
