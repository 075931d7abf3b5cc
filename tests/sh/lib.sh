# lib.sh -- what the shell tests share (sourced, not run: ctest runs only test_*.sh). Sets
# CUJIT (the command under test, $1), TMP (removed on exit) and the failure count, and gives
# the checks, need_nvrtc (skip without NVRTC) and repl (the REPL on a pipe). A test ends with
# `finish`.
CUJIT=${1:?usage: bash $(basename "$0") /path/to/cujit}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# run CMD...: sets $out, $err and $rc.
run() {
  out=$("$@" 2>"$TMP/stderr")
  rc=$?
  err=$(cat "$TMP/stderr")
}
# check NAME TEXT PATTERN: an extended regex that must match somewhere in TEXT.
check() {
  if grep -Eq -- "$3" <<<"$2"; then ok "$1"; else fail "$1: no /$3/ in: $2"; fi
}
check_not() {
  if grep -Eq -- "$3" <<<"$2"; then fail "$1: unexpected /$3/ in: $2"; else ok "$1"; fi
}
check_rc() {
  if [ "$rc" -eq "$2" ]; then ok "$1: exit $rc"; else fail "$1: exit $rc, wanted $2 (stderr: $err)"; fi
}
# same NAME GOT WANTED: exact equality.
same() {
  if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: got [$2], wanted [$3]"; fi
}
# finish: the verdict, as the exit status.
finish() {
  echo "$fails failure(s)"
  [ "$fails" -eq 0 ]
  exit
}
# need_nvrtc: returns when `cujit --version` finds NVRTC (trying /usr/local/cuda/lib64 on
# LD_LIBRARY_PATH when it does not at first); else the test skips (exit 77), saying why.
need_nvrtc() {
  "$CUJIT" --version | grep -Eq '^NVRTC +[0-9]' && return
  [ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  "$CUJIT" --version | grep -Eq '^NVRTC +[0-9]' && return
  echo "skip: no NVRTC ($("$CUJIT" --version | grep NVRTC))"
  exit 77
}
# need_stand_in: puts the stand-in driver (scripts/bench/stubcuda, built into the build tree
# ctest names in CUJIT_BINARY_DIR) first on LD_LIBRARY_PATH, or skips (exit 77) where it is not
# built; sets $stub to its directory.
need_stand_in() {
  stub="${CUJIT_BINARY_DIR:?run through ctest}/scripts/bench/stubcuda"
  if [ ! -e "$stub/libcuda.so.1" ]; then
    echo "skip: the stand-in driver is not built ($stub/libcuda.so.1)"
    exit 77
  fi
  export LD_LIBRARY_PATH="$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}
# repl TEXT: TEXT (a newline added) fed to the REPL on a pipe, `cujit -i`; sets $out, $err, $rc.
repl() { run "$CUJIT" -i <<<"$1"; }
