#!/usr/bin/env bash
# test_cpu_writer_hash.sh -- the CPU device's cache key joins a digest of its unit writer
# (cj_cpu_writer_hash, written by cmake/embed.cmake from the files CMakeLists.txt names), so an
# engine whose writer changed never loads an object the old writer wrote: the build's digest is
# the one of the writer files in the tree, it changes when one of them changes and not otherwise.
. "$(dirname "$0")/lib.sh"
src=${CUJIT_SOURCE_DIR:?} bin=${CUJIT_BINARY_DIR:?}
core=$src/engine/core/compile
digest() { # the writer digest embed.cmake writes for the files $1 (|-separated)
  cmake -DSRC_DIR="$src/kernels_src" -DOUT="$TMP/embedded.c" "-DWRITER=$1" \
    -P "$src/cmake/embed.cmake" >/dev/null 2>&1 || return 1
  sed -n 's/^const char cj_cpu_writer_hash\[\] = "\([0-9a-f]*\)";$/\1/p' "$TMP/embedded.c"
}
files="$core/cpu_source.c|$core/cpu_source.h|$core/cxx.c|$core/options.c|$core/options.h|$core/cpu_entries.c|$core/cpu_names.c"
built=$(sed -n 's/^const char cj_cpu_writer_hash\[\] = "\([0-9a-f]*\)";$/\1/p' "$bin/embedded_headers.c")
now=$(digest "$files")
check "the build holds a writer digest" "$built" '^[0-9a-f]{64}$'
same "it is the digest of the writer files in the tree" "$built" "$now"
same "the same files give the same digest" "$(digest "$files")" "$now"
cp "$core/cpu_source.c" "$TMP/cpu_source.c"
echo "/* one more line */" >>"$TMP/cpu_source.c"
changed=$(digest "$TMP/cpu_source.c|$core/cpu_source.h|$core/cxx.c|$core/options.c|$core/options.h")
check "a changed writer gives a digest" "$changed" '^[0-9a-f]{64}$'
if [ "$changed" != "$now" ]; then ok "a changed writer gives another digest"; else fail "a changed writer kept its digest"; fi
grep -q 'cj_key_add_str(kb, cj_cpu_writer_hash)' "$core/compile.c" &&
  ok "the CPU device's key joins it" || fail "compile.c's CPU key does not add cj_cpu_writer_hash"
# The prelude (<cujit/cpu_*.h>, in every unit though the source does not include it) joins the
# CPU key too: before, an object built on an older prelude was loaded from the cache.
cpu_key=$(sed -n '/^static cujit_status compile_cpu(/,/^}/p' "$core/compile.c")
grep -q 'cj_key_add_str(kb, cj_embedded_headers_hash)' <<<"$cpu_key" &&
  ok "the CPU device's key joins the embedded headers' digest" ||
  fail "compile_cpu's key does not add cj_embedded_headers_hash"
finish
