#!/usr/bin/env bash
# test_header_examples.sh -- every code example in include/cujit.h compiles, as C and as C++. An
# example is the run of comment lines indented by five spaces ("**     code") after a line ending
# in "Example:"; each is compiled as the body of a function with `cujit_engine *e` in scope,
# warnings as errors (unused variables aside: examples declare what they show): by $CC at C11,
# and by g++ and clang++ (those installed; a missing one is named) at C++11, 14, 17 and 20 with
# -pedantic. (A C++ program using every macro is test_cxx.sh's.) The CUJIT argument is not used.
set -u
cd "${CUJIT_SOURCE_DIR:?}" || exit 1
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "no C compiler: skipped"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
awk -v dir="$TMP" '
  /Example:[[:space:]]*$/ { n++; file = sprintf("%s/example%02d.c", dir, n); taking = 1;
                            print "#include \"cujit.h\"" > file;
                            printf "void example%d(cujit_engine *e);\nvoid example%d(cujit_engine *e) {\n", n, n > file;
                            next }
  taking && /^\*\*     / { sub(/^\*\*     /, ""); print > file; next }
  taking { print "}" > file; close(file); taking = 0 }
' include/cujit.h
cxxs=()
for cxx in g++ clang++; do
  if command -v "$cxx" >/dev/null; then cxxs+=("$cxx"); else echo "note: no $cxx here: not tested"; fi
done
fails=0 count=0
for f in "$TMP"/example*.c; do
  [ -e "$f" ] || break
  count=$((count + 1))
  if "$CC" -std=c11 -Wall -Wextra -Wpedantic -Werror -Wno-unused -fsyntax-only -Iinclude "$f" \
    2>"$TMP/err"; then
    echo "ok: $(basename "$f") compiles"
  else
    echo "FAIL: example $count of include/cujit.h does not compile:" >&2
    cat -n "$f" >&2
    cat "$TMP/err" >&2
    fails=$((fails + 1))
  fi
  for cxx in "${cxxs[@]}"; do
    for std in c++11 c++14 c++17 c++20; do
      if "$cxx" -std=$std -Wall -Wextra -Wpedantic -Werror -Wno-unused -Wno-unused-parameter \
        -fsyntax-only -Iinclude -x c++ "$f" 2>"$TMP/err"; then
        echo "ok: $(basename "$f") compiles as $std ($cxx)"
      else
        echo "FAIL: example $count of include/cujit.h does not compile as $std ($cxx):" >&2
        cat "$TMP/err" >&2
        fails=$((fails + 1))
      fi
    done
  done
done
[ "$count" -gt 0 ] || { echo "FAIL: no example found in include/cujit.h" >&2; fails=1; }

echo "$count example(s), $fails failure(s)"
[ "$fails" -eq 0 ]
