# test_repl_pty.sh -- the REPL on a terminal (a pseudo-terminal driven from python3's pty
# module): banner and prompts "> " / ">> ", Ctrl-C interrupting a running statement and keeping
# the session, Ctrl-C abandoning a half-typed line, Ctrl-D leaving with status 0, the history
# file written to $CUJIT_HISTORY and read back by the next session (up-arrow recall), and one
# warning, not an exit, when the history cannot be written.
# Run by ctest as: bash test_repl_pty.sh /path/to/cujit. Needs python3 (skips without), no GPU.
set -u
CUJIT=${1:?usage: bash test_repl_pty.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache"

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$TMP" "$(cd "$(dirname "$0")" && pwd)" <<'EOF'
import os, random, re, sys, time
sys.path.insert(0, sys.argv[3])  # pty_session.py
from pty_session import Session as PtySession, fail, ok, verdict

cujit, tmp = sys.argv[1], sys.argv[2]


def Session(env):
    return PtySession(cujit, env)

a, b = random.randint(2, 999), random.randint(2, 999)
history = os.path.join(tmp, "history")

# --- session 1: prompts, continuation, Ctrl-C, history ------------------------------------------
s = Session({"CUJIT_HISTORY": history})
s.expect("banner", r"^cujit [0-9.]+ -- Lua 5\.4")
s.expect("first prompt", r"^> ")
s.send("%d + %d\n" % (a, b))
s.expect("expression value", r"^%d$" % (a + b))
s.send("function g(x)\n")
s.expect("continuation prompt", r"^>> ")
s.send("  return x * %d\nend\n" % b)
s.send("g(%d)\n" % a)
s.expect("multi-line function", r"^%d$" % (a * b))
s.send("k = [[\n")
s.expect("[[ continues", r"^>> ")
s.send("__global__ void k() {}\n]]\n")
s.send("=#k\n")
s.expect("[[ string complete", r"^%d$" % len("__global__ void k() {}\n"))

s.send("n = 0 while true do n = n + 1 end\n")
s.expect("a long statement gets a note", r"still running after 0\.5 s; Ctrl-C interrupts")
s.send("\x03")
s.expect("Ctrl-C interrupts it", r"interrupted!")
s.send("print('alive', n > 0)\n")
s.expect("the session goes on after Ctrl-C", r"^alive\ttrue$")

# typed before libedit's raw mode, the half line is the terminal's, echoed with the ^C by it
if not s.wait_for_input(r"\n> $"):
    fail("no prompt waiting for a key before the half line: " + s.describe())
s.send("print('never run %d'" % a)
time.sleep(0.3)
s.send("\x03")
s.expect("Ctrl-C at the prompt gives a new prompt", r"never run %d'\n> " % a)
s.send("'after abandon', %d\n" % b)
s.expect("the next statement runs", r"^after abandon\t%d$" % b)
if re.search(r"^never run", s.buf, re.M):
    fail("the abandoned line ran")
else:
    ok("the abandoned line did not run")

s.send("function half_typed()\n")
s.expect("continuation before Ctrl-C", r"^>> ")
s.send("\x03")
s.expect("Ctrl-C at >> abandons the whole statement", r"^> ")
s.send("half_typed\n")
s.expect("the abandoned function was never defined", r"^nil$")

s.send(":time on\n")
s.expect(":time on", r"^timing is on$")
s.send("=%d\n" % b)
s.expect("timing line", r"^time: wall [0-9.]+ ms")
if not s.wait_for_input(r"\n> $"):  # a ^D before libedit's raw mode is lost (pty_session.py)
    fail("no prompt waiting for a key: " + s.describe())
s.send("\x04")
rc = s.finish()
if rc == 0: ok("Ctrl-D exits 0")
else: fail("Ctrl-D exit status %r" % rc)

try:
    # libedit writes entries with strvis(3): "\\040" is a space, "\\012" a newline
    text = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), open(history).read())
except OSError as e:
    text = ""
    fail("no history file: %s" % e)
for what, piece in [("one-line statement", "%d + %d" % (a, b)),
                    ("=expr", "=%d" % b),
                    ("command", ":time on")]:
    if piece in text: ok("history has the " + what)
    else: fail("history lacks %r: %r" % (piece, text))
if re.search(r"function.*g\(x\)", text) and "end" in text: ok("history has the multi-line function")
else: fail("history lacks the function: %r" % text)
if "never run" in text or "half_typed()" in text:
    fail("an abandoned statement is in the history")
else:
    ok("abandoned statements are not in the history")

# --- session 2: the history is read back -----------------------------------------------------------
s = Session({"CUJIT_HISTORY": history})
s.expect("second session prompt", r"^> ")
s.send("\x1b[A\n")  # up arrow: the last statement of session 1, =b
s.expect("up arrow recalls the last entry", r"^> =%d\n%d$" % (b, b))
if not s.wait_for_input(r"\n> $"):
    fail("second session: no prompt waiting for a key: " + s.describe())
s.send("\x04")
rc = s.finish()
if rc == 0: ok("second session exits 0")
else: fail("second session exit status %r" % rc)

# --- session 3: an unwritable history file is one warning, not an exit -------------------------------
s = Session({"CUJIT_HISTORY": os.path.join(tmp, "no", "such", "dir", "history")})
s.expect("prompt with a bad history path", r"^> ")
for i in range(3):
    s.send("=%d\n" % (a + i))
    s.expect("statement %d runs" % (i + 1), r"^%d$" % (a + i))
if not s.wait_for_input(r"\n> $"):
    fail("third session: no prompt waiting for a key: " + s.describe())
s.send("\x04")
rc = s.finish()
warnings = len(re.findall(r"warning: cannot write the history to .*no/such/dir/history", s.buf))
if warnings == 1: ok("one history warning")
else: fail("%d history warnings in: %r" % (warnings, s.buf))
if rc == 0: ok("exits 0 despite the history")
else: fail("exit status %r" % rc)

verdict()
EOF
