# test_repl_fault_gpu.sh -- a real GPU fault in the REPL, on a terminal (see pty_session.py): a
# session defines 10 kernels and a few arrays, launches a kernel that writes to an illegal
# address; cuda.synchronize() reports the fault and the REPL offers :restart; :restart, dropping
# the faulting launch, re-executes the process, the session's variables are back (arrays with
# their contents, kernels launch again) and the time of the replay and of the whole restart are
# printed (figures, not checks). Without a GPU it runs on the CPU device (CUJIT_DEVICE=cpu), whose
# crash handler reports the wild store as a fault naming the kernel; CUJIT_TEST_NO_CPU=1 skips
# instead, CUJIT_REQUIRE_GPU=1 fails.
# Run by ctest as: bash test_repl_fault_gpu.sh /path/to/cujit. Needs python3.
set -u
CUJIT=${1:?usage: bash test_repl_fault_gpu.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
why=$("$CUJIT" -e 'local ok, why = (require "cujit").has_gpu() io.write(ok and "" or tostring(why))')
device="device 0"
if [ -n "$why" ]; then
  [ "${CUJIT_REQUIRE_GPU:-}" = 1 ] && { echo "FAIL: CUJIT_REQUIRE_GPU=1 but there is no GPU: $why"; exit 1; }
  [ "${CUJIT_TEST_NO_CPU:-}" = 1 ] && { echo "skip: no GPU: $why"; exit 77; }
  export CUJIT_DEVICE=cpu # the restarted process inherits it
  device="the CPU device"
  echo "runs on: CPU device (no GPU: ${why%%$'\n'*})"
else
  echo "runs on: GPU 0"
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY="" TMPDIR="$TMP"
here=$(cd "$(dirname "$0")" && pwd)

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$here" "$device" <<'EOF'
import sys, time
sys.path.insert(0, sys.argv[2])
from pty_session import Session, fail, ok, verdict

cujit = sys.argv[1]
s = Session(cujit, {})
s.expect("prompt", r"^> ")
s.send('cuda = require "cujit"\n')
for i in range(10):
    s.send('k%d = cuda.jit("scale%d(float *x, int n)", "int i = threadIdx.x; if (i < n) x[i] *= %d;")\n'
           % (i, i, i + 1))
s.send('a = cuda.to_device({1, 2, 3}, "f32")\n')
s.send('b = cuda.zeros(1024, "i32")\n')
s.send('h = cuda.array({4, 5, 6}, "f32")\n')
s.send("k1[{1, 3}](a, 3)\n")                                  # a = {2, 4, 6}
s.send('bad = cuda.jit("bad(int *p)", "*(volatile int *)8 = 1;")\n')
s.send("bad[{1, 1}](b)\n")                                    # statement 17: the culprit
s.send("cuda.synchronize()\n")
s.expect("the fault is reported", r"faulted")
s.expect("the REPL offers :restart", r"type :restart for a new cujit process that replays the 17 statements")
s.send(":restart\n")
s.expect("the list ends with the faulting launch", r"  17  bad\[\{1, 1\}\]\(b\)\n")
s.expect("asks what to drop", r"drop which\?")
start = time.time()
s.send("17\n")
m = s.expect("the new process replays the rest", r"replayed 16 statements in ([0-9.]+) ms")
s.expect("and gives a prompt", r"^> ")
whole = time.time() - start
if m:
    print("figure: replay of 16 statements (10 kernels, 3 arrays, 1 launch) %s ms; "
          "restart to the new prompt %.0f ms" % (m.group(1), whole * 1e3))
s.send("a, h\n")
s.expect("device and host arrays are back with their contents",
         r"^cujit\.device_array f32\[3\] on " + sys.argv[3] +
         r" \{2\.0, 4\.0, 6\.0\}\tcujit\.host_array f32\[3\] \{4\.0, 5\.0, 6\.0\}$")
s.send("k2[{1, 3}](a, 3) print(a:totable()[3], cuda.status())\n")
s.expect("kernels launch again on a healthy device", r"^18\.0\ttrue$")
if not s.wait_for_input(r"\n> $"):  # a ^D before libedit's raw mode is lost (pty_session.py)
    fail("no prompt waiting for a key: " + s.describe())
s.send("\x04")
rc = s.finish()
if rc == 0: ok("exits 0")
else: fail("exit status %r" % rc)
verdict()
EOF
