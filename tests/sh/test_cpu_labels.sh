#!/usr/bin/env bash
# test_cpu_labels.sh -- what runs on the CPU device is never labelled as the GPU's or NVRTC's:
# the REPL's note after a slow statement that compiled ("cujit: 1 program compiled during that
# ... s statement", not "NVRTC compiled": g++ compiled it), and the timings of
# examples/monte_carlo.lua ("kernel ... ms (the CPU device", not "(GPU") and conv2d.lua ("CPU
# device part", not "GPU part"). Runs on the CPU device
# (CUJIT_DEVICE=cpu); needs g++, and python3 for the REPL's terminal.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
SRC=${CUJIT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""

if command -v python3 >/dev/null; then
  PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$(cd "$(dirname "$0")" && pwd)" >"$TMP/pty" 2>&1 <<'PY'
import random, sys
sys.path.insert(0, sys.argv[2])
from pty_session import Session, ctrl_d_exits_0, fail, ok, verdict
s = Session(sys.argv[1], {})
s.expect("a prompt", r"^> ")
name = "label_%d" % random.randint(1, 10**9)  # a fresh kernel: a compile, not a cache hit
s.send('cuda = require "cujit"; k = cuda.jit("%s(int *x)", "x[0] = 1;"); '
       'local t = os.clock(); while os.clock() - t < 0.7 do end\n' % name)
m = s.expect("the note after a slow statement that compiled",
             r"^cujit: 1 program compiled during that [0-9.]+ s statement$")
if "NVRTC" in s.buf:
    fail("the note names NVRTC, which compiled nothing: " + s.buf[-300:])
else:
    ok("no NVRTC in the note")
ctrl_d_exits_0(s, "the compile note's session")  # waits for libedit's raw mode (pty_session.py)
verdict()
PY
  rc=$?
  sed 's/^/  repl: /' "$TMP/pty"
  [ "$rc" -eq 0 ] && ok "the REPL's compile note" || fail "the REPL's compile note (above)"
else
  echo "note: no python3: the REPL's note is not tested"
fi

cd "$SRC/examples" || exit 1
run "$CUJIT" monte_carlo.lua
check_rc "monte_carlo.lua on the CPU device" 0
check "its first timing names the CPU device" "$out" '^  kernel [0-9.]+ ms \(the CPU device\); first RNG'
check "its second too" "$out" '^  kernel [0-9.]+ ms \(the CPU device, [0-9]+ normals\)'
check_not "no timing says GPU" "$out" '\(GPU'
CUJIT_EXAMPLE_OUT="$TMP/out" run "$CUJIT" conv2d.lua
check_rc "conv2d.lua on the CPU device" 0
check "its wall time names the CPU device" "$out" '; CPU device part [0-9.]+ ms wall$'
check_not "and not the GPU" "$out" 'GPU part'
finish
