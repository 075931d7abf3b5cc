# test_doc_snippets.sh -- every fenced ```lua block in README.md and docs/*.md runs as written,
# unless it is marked ```lua fragment (docs/CONTRIBUTING.md says when to mark one). Each block is
# run alone by `cujit`, in a scratch directory where `examples/` is the checkout's, with a scratch
# cache: on the GPU when there is one, else on the CPU device (CUJIT_DEVICE=cpu), else (no GPU and
# no CPU device) only parsed. A block marked ```lua gpu runs on a GPU only (elsewhere it is parsed
# and counted as skipped). A block that fails is named by file, block number and line, with the
# error mapped to the line of the document.
# Every ```c block is a whole program: compiled (C11, warnings as errors) against the checkout's
# include/ and the build's libcujit (and libcujit-lua with Lua 5.4 when it includes cujit_lua.h),
# then run in the same scratch directory WITHOUT CUJIT_DEVICE (the program must choose the CPU
# device itself where there is no GPU); it must exit 0, and each `/* --> TEXT */` in it is a line
# its output must hold, in that order. ```c fragment blocks are not compiled. A ```cpp block is the
# same as a C++17 program (c++, or CXX), and ```cpp fragment is not compiled.
# Run by ctest as: bash test_doc_snippets.sh /path/to/cujit [file.md ...] (the files default to
# README.md and docs/*.md of CUJIT_SOURCE_DIR, else of this checkout).
set -u
source "$(dirname "$0")/lib.sh"
shift
SRC=${CUJIT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ $# -gt 0 ]; then docs=("$@"); else docs=("$SRC/README.md" "$SRC"/docs/*.md); fi

# --- where the blocks run ---------------------------------------------------------------------
export CUJIT_CACHE_DIR="$TMP/cache" # scratch: the blocks' kernels never reach the user's cache
work="$TMP/work"
mkdir -p "$work" "$TMP/blocks"
ln -s "$SRC/examples" "$work/examples" # blocks read examples/data/...; they write in $work
if "$CUJIT" devices >/dev/null 2>&1; then
  mode="on the GPU"
  device_env=()
elif [ "${CUJIT_REQUIRE_GPU:-}" = 1 ]; then
  fail "CUJIT_REQUIRE_GPU=1 but there is no GPU: $("$CUJIT" devices 2>&1 | head -1)"
  finish
elif [ "${CUJIT_TEST_NO_CPU:-}" = 1 ]; then
  mode="parse only"
  device_env=()
  echo "no GPU, and CUJIT_TEST_NO_CPU=1 keeps the blocks off the CPU device"
elif CUJIT_DEVICE=cpu "$CUJIT" -e 'local cuda = require "cujit"
  local k = cuda.jit("probe(int *x)", "x[0] = 7;")
  local x = cuda.zeros(1, "i32"); k[{1, 1}](x); assert(x:totable()[1] == 7)' >"$TMP/probe" 2>&1; then
  mode="on the CPU device (no GPU here)"
  device_env=(CUJIT_DEVICE=cpu)
else
  mode="parse only"
  device_env=()
  echo "no GPU, and the CPU device failed: $(head -c 300 "$TMP/probe")"
fi
echo "running the doc blocks: $mode"

# --- extracting the blocks -----------------------------------------------------------------------
# Writes each ```lua and ```lua gpu block of $1 to $TMP/blocks/N.lua, each ```c block to
# $TMP/blocks/N.c, and prints "N LINE KIND" per block, LINE being the document's line of its first
# code line and KIND "lua", "gpu" or "c". A block never closed is reported as "open LINE".
extract() {
  awk -v dir="$TMP/blocks" -v base="$2" '
    !inside && /^```/ {
      inside = 1; start = NR
      info = $0; sub(/^```[ \t]*/, "", info); sub(/[ \t]+$/, "", info)
      run = (info == "lua" || info == "lua gpu" || info == "c" || info == "cpp")
      kind = info == "lua" ? "lua" : info == "c" || info == "cpp" ? info : "gpu"
      if (run) {
        n++; file = sprintf("%s/%d.%s", dir, base + n, kind == "gpu" ? "lua" : kind); printf "" > file
      }
      next
    }
    inside && /^```[ \t]*$/ {
      inside = 0
      if (run) { close(file); printf "%d %d %s\n", base + n, start + 1, kind }
      next
    }
    inside && run { print >> file }
    END { if (inside) printf "open %d\n", start }
  ' "$1"
}

# Parses block $1 without running it.
parse() {
  BLOCK="$1" "$CUJIT" -e 'assert(loadfile(os.getenv("BLOCK")))' </dev/null >"$TMP/out" 2>&1
}

# The line of the document that line N of a block starting at document line START is.
doc_line() { echo $(($2 + $1 - 1)); }

# --- the C blocks ------------------------------------------------------------------------------
BIN=${CUJIT_BINARY_DIR:-$(cd "$(dirname "$CUJIT")" && pwd)}
CC=${CC:-cc}
# A sanitizer build's libcujit needs the sanitizer's runtime in the program that links it.
san=()
nm -D "$BIN/libcujit.so" 2>/dev/null | grep -qw __asan_init && san=(-fsanitize=address,undefined)
# Compiles C (or C++: N.cpp) block $1 to $1.bin; the compiler's messages go to $TMP/out.
compile_c() {
  local extra=() cc=("$CC" -std=c11)
  if grep -q 'cujit_lua\.h' "$1"; then
    extra=("$BIN/libcujit-lua.a" $(pkg-config --cflags --libs lua5.4 libpng) -lm)
  fi
  [ "${1##*.}" = cpp ] && cc=("${CXX:-c++}" -std=c++17)
  "${cc[@]}" -Wall -Wextra -Werror -pedantic "${san[@]}" -I"$SRC/include" -o "$1.bin" "$1" \
    -L"$BIN" -lcujit -Wl,-rpath,"$BIN" "${extra[@]}" -lm >"$TMP/out" 2>&1
}
# Runs the compiled C block $1 (without CUJIT_DEVICE: it chooses its device) and checks that its
# output holds each "/* --> TEXT */" line of the block, in order. Sets rc; the output is $TMP/out.
run_c() {
  (cd "$work" && env -u CUJIT_DEVICE timeout 120 "$1.bin") </dev/null >"$TMP/out" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || return
  grep -o '/\* --> .* \*/' "$1" | sed 's|^/\* --> ||; s| \*/$||' >"$1.want"
  local missing
  missing=$(awk 'NR == FNR { want[++nw] = $0; next }
                 k < nw && $0 == want[k + 1] { k++ }
                 END { if (k < nw) print want[k + 1] }' "$1.want" "$TMP/out")
  if [ -n "$missing" ]; then
    echo "the output lacks the line the block promises (/* --> $missing */), in that order" >>"$TMP/out"
    rc=1
  fi
}

# --- running them ------------------------------------------------------------------------------------
fragment_help="Make the block run as written, set-up lines included ('local cuda = require \"cujit\"', its inputs), or mark it: open it with \`\`\`lua fragment instead of \`\`\`lua when it cannot run alone (a synopsis, a part of a larger program), or with \`\`\`lua gpu when it needs what only a GPU has (docs/CONTRIBUTING.md, 'Code blocks in the docs')."
total=0
ran=0
gpu_only=0
fragments=0
c_total=0
c_ran=0
c_fragments=0
base=0
for doc in "${docs[@]}"; do
  rel=${doc#"$SRC"/}
  fragments=$((fragments + $(grep -c '^```lua[ \t]\+fragment[ \t]*$' "$doc")))
  c_fragments=$((c_fragments + $(grep -c '^```c\(pp\)\?[ \t]\+fragment[ \t]*$' "$doc")))
  nblock=0
  while read -r id line kind; do
    if [ "$id" = open ]; then
      fail "$rel: the code block opened at line $line is never closed (a line of just \`\`\`)"
      continue
    fi
    nblock=$((nblock + 1))
    total=$((total + 1))
    base=$id
    if [ "$kind" = c ] || [ "$kind" = cpp ]; then
      total=$((total - 1))
      c_total=$((c_total + 1))
      block="$TMP/blocks/$id.$kind"
      lang=C
      [ "$kind" = cpp ] && lang=C++
      what="$rel, $lang block $nblock (lines $line-$(($line + $(wc -l <"$block") - 1)))"
      if ! compile_c "$block"; then
        fail "$what does not compile:
$(sed "s|$TMP/blocks/$id\.$kind|$rel block $nblock|g" "$TMP/out" | head -20)
  Make it a whole program (main, its #includes), or open it with \`\`\`$kind fragment."
      elif [ "$mode" = "parse only" ]; then
        ok "$what compiles (not run: $mode)"
      else
        run_c "$block"
        if [ "$rc" -eq 0 ]; then
          c_ran=$((c_ran + 1))
          ok "$what"
        else
          fail "$what fails ($mode, exit $rc):
$(head -20 "$TMP/out")"
        fi
      fi
      continue
    fi
    block="$TMP/blocks/$id.lua"
    what="$rel, Lua block $nblock (lines $line-$(($line + $(wc -l <"$block") - 1)))"
    if [ "$kind" = gpu ] && [ "$mode" != "on the GPU" ]; then
      what="$what (\`\`\`lua gpu: parsed only, run on a GPU)"
      gpu_only=$((gpu_only + 1))
      parse "$block"
    elif [ "$mode" != "parse only" ]; then
      (cd "$work" && env "${device_env[@]}" timeout 120 "$CUJIT" "$block") </dev/null >"$TMP/out" 2>&1
    else
      parse "$block"
    fi
    rc=$?
    if [ "$rc" -eq 0 ]; then
      [ "$kind" = gpu ] && [ "$mode" != "on the GPU" ] || ran=$((ran + 1))
      ok "$what"
      continue
    fi
    # The first "N.lua:L:" in the output is where the block failed; map it to the document.
    at=$(grep -o "blocks/$id\.lua:[0-9]\+:" "$TMP/out" | head -1 | sed 's/.*:\([0-9]\+\):$/\1/')
    where=""
    [ -n "$at" ] && where=", at $rel:$(doc_line "$at" "$line") (line $at of the block: $(sed -n "${at}p" "$block" | sed 's/^ *//'))"
    [ "$rc" -eq 124 ] && where="$where, still running after 120 s"
    fail "$what fails ($mode, exit $rc)$where:
$(sed "s|$TMP/blocks/$id\.lua|$rel block $nblock|g" "$TMP/out" | head -20)
  $fragment_help"
  done < <(extract "$doc" "$base")
done
[ "$mode" = "parse only" ] && verdict="were parsed, not run" || verdict="ran $mode"
echo "$ran of $total runnable Lua blocks $verdict; $gpu_only skipped (\`\`\`lua gpu: no GPU here);" \
  "$fragments marked as fragments"
echo "$c_ran of $c_total C and C++ blocks compiled and ran $mode; $c_fragments marked as fragments"
[ "$total" -gt 0 ] || fail "no runnable Lua block found in ${docs[*]}"
if [ "$mode" = "parse only" ] && [ "$fails" -eq 0 ]; then
  echo "skip: the blocks were only parsed: no GPU, and not the CPU device (above)"
  exit 77
fi
finish
