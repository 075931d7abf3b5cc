#!/usr/bin/env bash
# test_cpu_litter.sh -- a process killed during a CPU-device compile (kill -9) leaves its scratch
# directory $TMPDIR/cujit-cxx-<pid namespace>-<pid>-XXXXXX behind (shared/repro/13); the first
# compile of the next process removes it, with the compiler's own temporaries, which land in its
# tmp/ (the compiler's TMPDIR). What is not provably a dead cujit process's own is left alone: a
# live process's directory, another pid namespace's, a name not exactly of the pattern, a symlink,
# a directory holding a file cujit never writes. Needs g++ (the CPU device's compiler).
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" TMPDIR="$TMP/tmp"
mkdir -p "$TMPDIR"
ns=$(readlink /proc/self/ns/pid | tr -dc 0-9)
[ -n "$ns" ] || { echo "skip: /proc/self/ns/pid is needed"; exit 77; }

# A compiler that says where it runs, then waits to be killed (the --version for the key passes).
cat >"$TMP/slow-g++" <<EOF2
#!/bin/sh
if [ "\$1" != --version ]; then
  echo "\$\$ \$TMPDIR" >"$TMP/compiling"
  exec sleep 60
fi
exec g++ "\$@"
EOF2
chmod +x "$TMP/slow-g++"
prev=
for i in 1 2 3; do
  rm -f "$TMP/compiling"
  CUJIT_CXX="$TMP/slow-g++" "$CUJIT" -e "require'cujit'.jit('kk$i(float *o)', 'o[0] = $i;')" \
    >/dev/null 2>&1 &
  p=$!
  for _ in $(seq 600); do [ -s "$TMP/compiling" ] && break; sleep 0.1; done
  kill -9 "$p"; wait "$p" 2>/dev/null
  read -r gxx gxx_tmp <"$TMP/compiling"
  kill "$gxx" 2>/dev/null
  case "$gxx_tmp" in
  "$TMPDIR/cujit-cxx-$ns-$p-"??????/tmp) ok "kill $i: the compiler's TMPDIR is the scratch directory's tmp/" ;;
  *) fail "kill $i: the compiler's TMPDIR is $gxx_tmp" ;;
  esac
  echo temp >"$gxx_tmp/ccAbCdEf.s" # as g++ killed mid-way leaves its own
  [ -d "${gxx_tmp%/tmp}" ] && ok "kill $i left its directory" || fail "kill $i left nothing?"
  # The process just killed had its first compile: it removed the one killed before.
  [ -z "$prev" ] || { [ -e "$prev" ] && fail "kill $i: $prev is still there" || ok "kill $i: the one before is gone"; }
  prev=${gxx_tmp%/tmp}
done

# What must stay: a live process's (this shell's), another pid namespace's, names that are not
# exactly of the pattern, a symlink to a dead process's directory, and one holding a user's file.
sh -c 'exit 0' & dead=$!; wait $dead
mkdir "$TMPDIR/cujit-cxx-$ns-$$-AAAAAA" "$TMPDIR/cujit-cxx-$((ns + 1))-$dead-BBBBBB" \
  "$TMPDIR/cujit-cxx-$ns-$dead-CCCCCCC" "$TMPDIR/cujit-cxx-$ns-$dead-DDDDD" \
  "$TMPDIR/cujit-cxx-0$ns-$dead-EEEEEE" "$TMP/target" "$TMPDIR/cujit-cxx-$ns-$dead-GGGGGG"
echo mine >"$TMP/target/tu.cpp"
ln -s "$TMP/target" "$TMPDIR/cujit-cxx-$ns-$dead-FFFFFF"
echo mine >"$TMPDIR/cujit-cxx-$ns-$dead-GGGGGG/notes.txt"
echo cujits >"$TMPDIR/cujit-cxx-$ns-$dead-GGGGGG/tu.cpp"

run "$CUJIT" -e "local k = require'cujit'.jit('kk(float *o)', 'o[0] = 1;') print('compiled')"
check_rc "the next process compiles" 0
check "it compiled" "$out" "^compiled$"
[ -e "$prev" ] && fail "the last killed compile's $prev is still there" || ok "the last killed compile's directory is gone"
for p in "cujit-cxx-$ns-$$-AAAAAA" "cujit-cxx-$((ns + 1))-$dead-BBBBBB" "cujit-cxx-$ns-$dead-CCCCCCC" \
         "cujit-cxx-$ns-$dead-DDDDD" "cujit-cxx-0$ns-$dead-EEEEEE" "cujit-cxx-$ns-$dead-FFFFFF" \
         "cujit-cxx-$ns-$dead-GGGGGG"; do
  [ -e "$TMPDIR/$p" ] && ok "left alone: $p" || fail "removed: $p"
done
same "exactly those are left" "$(ls "$TMPDIR" | wc -l)" 7
same "the symlink's target is untouched" "$(cat "$TMP/target/tu.cpp")" mine
same "a user's file stays" "$(cat "$TMPDIR/cujit-cxx-$ns-$dead-GGGGGG/notes.txt")" mine

# A compile that ends normally leaves nothing, also when the unit includes the user's own headers
# (written, rewritten, as include/__cj_h/<n>.h in the scratch directory: once left behind).
mkdir -p "$TMP/inc" "$TMP/tmp2"
printf '__device__ float twice(float x) { return 2 * x; }\n' >"$TMP/inc/twice.cuh"
TMPDIR="$TMP/tmp2" run "$CUJIT" -e "local cuda = require'cujit'
local p = cuda.source('#include \"twice.cuh\"\\nextern \"C\" __global__ void k(float *o) { o[0] = twice(3); }',
  {include_dirs = {'$TMP/inc'}})
local o = cuda.zeros(1) p.k[{1, 1}](o) print(o:totable()[1])"
check_rc "a unit including a user's header compiles" 0
check "and runs" "$out" "^6(\\.0)?$"
same "and leaves nothing in TMPDIR" "$(ls -A "$TMP/tmp2")" ""
finish
