# test_repl_abandon.sh -- a CPU-device kernel that never ends, in the REPL on a terminal: Ctrl-C
# ends the wait (the kernel goes on), cuda.reset() abandons it and the device then computes
# correctly; :restart replaces the process while such a kernel runs; Ctrl-D with one running ends
# the session within cujit_close's 2 s and a warning, status 0. Before, the session could only
# be killed: the reset and the exit waited for the kernel for ever.
# Run by ctest as: bash test_repl_abandon.sh /path/to/cujit. Needs python3 and g++, no GPU.
set -u
CUJIT=${1:?usage: bash test_repl_abandon.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY="" CUJIT_DEVICE=cpu TMPDIR="$TMP"

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$(cd "$(dirname "$0")" && pwd)" <<'EOF2'
import sys
sys.path.insert(0, sys.argv[2])
from pty_session import Session, fail, ok, verdict

cujit = sys.argv[1]
spin = ('spin = cuda.jit("spin(int *f)", "while (((volatile int *)f)[0] == 0) { }") '
        'flag = cuda.zeros(1, "i32") spin[{4, 32}](flag) print("launched")\n')
twice = ('k = cuda.jit("twice(int *y, int n)", "int i = blockIdx.x * blockDim.x + threadIdx.x; '
         'if (i < n) y[i] = 2 * i;") y = cuda.zeros(1000, "i32") k[{8, 128}](y, 1000) '
         't = y:totable() bad = 0 for i = 1, 1000 do if t[i] ~= 2 * (i - 1) then bad = bad + 1 '
         'end end print("wrong", bad)\n')

s = Session(cujit, {})
s.expect("prompt", r"^> ")
s.send('cuda = require "cujit"\n')
s.send(spin)
# The launch statement compiles the kernel, which under load takes over 0.5 s and gets its own
# "still running" note: only once it has ended is the note the wait's.
s.expect("the launch statement ends", r"^launched$")
s.send("cuda.synchronize()\n")
s.expect("the wait runs long", r"still running after 0\.5 s; Ctrl-C interrupts")
s.send("\x03")
s.expect("Ctrl-C ends the wait", r"interrupted")
s.send("cuda.reset() print('reset done')\n")
s.expect("cuda.reset() abandons the kernel and returns", r"^reset done$")
s.send(twice)
s.expect("the device computes correctly after it", r"^wrong\t0$")

s.send(spin)
s.expect("the second launch statement ends", r"^launched$")
s.send(":restart\n")
# require, the first launch, the reset, twice, the second launch: both launches are dropped
s.expect(":restart lists the first launch second", r"^   2  spin = ")
s.expect(":restart lists the spinning kernel's launch last", r"^   5  spin = ")
s.expect(":restart asks what to drop", r"drop which\? .*$")
s.send("2 5\n")
s.expect("the new process starts, though a kernel spun in the old one",
         r"restarting: a new cujit replays 3 statements[\s\S]*?replayed 3 statements")
s.expect("a prompt in the new process", r"^> ")
s.send(twice)
s.expect("the new process computes", r"^wrong\t0$")

s.send(spin)
s.expect("the third launch statement ends", r"^launched$")
if not s.wait_for_input(r"\n> $"):  # a ^D before libedit's raw mode is lost (pty_session.py)
    fail("no prompt waiting for a key: " + s.describe())
s.send("\x04")
s.expect("Ctrl-D: the close abandons the kernel", r"still running kernel 'spin' 2 s after the close; abandoned it")
rc = s.finish()
if rc == 0: ok("the session ends with status 0")
else: fail("exit status %r" % rc)
verdict()
EOF2
