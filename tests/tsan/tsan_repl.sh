#!/usr/bin/env bash
# tsan_repl.sh -- the REPL's watchdog under ThreadSanitizer: on a terminal (python3's pty, through
# tests/sh/pty_session.py) the REPL starts a thread that says "still running" once a statement
# has run for half a second; the main thread arms and disarms it around every statement
# (engine/cli/repl.c, watchdog_arm) while it waits on the same fields. Quick statements and slow
# ones the watchdog reports, in turn, then Ctrl-D: the session must end with status 0 and
# ThreadSanitizer must report nothing (halt_on_error: a race would end the REPL with status 66 at
# once). Not Ctrl-C: ThreadSanitizer holds a signal back until the thread next enters a call it
# intercepts, which a loop of uninstrumented Lua may never do (tests/sh/test_repl_pty.sh covers
# Ctrl-C in the plain build). Registered as tsan.repl_pty with -DCUJIT_SANITIZE_THREAD=ON.
#   bash tsan_repl.sh /path/to/cujit (built with ThreadSanitizer)
set -u
CUJIT=${1:?usage: bash tsan_repl.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$(cd "$(dirname "$0")/../sh" && pwd)" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])  # pty_session.py
from pty_session import Session, ctrl_d_exits_0, fail, ok, verdict

s = Session(sys.argv[1], {})
s.expect("first prompt", r"^> ")
# a busy loop of about a second in plain Lua (not instrumented: the interpreter is Debian's)
slow = "local x = 0; local t = os.clock(); while os.clock() - t < 0.8 do x = x + 1 end; print('slow done')\n"
for round in range(4):
    if "ThreadSanitizer" in s.buf:
        break  # reported below, once
    s.send("%d + %d\n" % (round, 40))
    s.expect("round %d: a quick statement" % round, r"^%d$" % (round + 40))
    s.send(slow)
    s.expect("round %d: the watchdog speaks" % round, r"still running after 0\.5 s; Ctrl-C interrupts")
    s.expect("round %d: the slow statement ends" % round, r"^slow done$")
if "ThreadSanitizer" not in s.buf:
    ctrl_d_exits_0(s, "the session")
if "ThreadSanitizer" in s.buf:
    fail("ThreadSanitizer reported: %s" % s.buf[s.buf.index("ThreadSanitizer") - 20:][:2000])
else:
    ok("no ThreadSanitizer report")
verdict()
PY
