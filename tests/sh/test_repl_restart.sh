# test_repl_restart.sh -- :history, :save and :restart on a terminal (see pty_session.py). A
# session defines variables, a kernel (sm_90, NVRTC only) and a function, has a statement that
# fails and one that writes a file; :history lists what ran without error; :save writes a script
# that `cujit` runs; a fault message (the engine's wording, raised by hand: there is no GPU here)
# offers :restart; :restart drops a statement chosen by number, asks about the one that writes
# files, re-executes the process, and the session's variables are back.
# Run by ctest as: bash test_repl_restart.sh /path/to/cujit. Needs python3 (skips without).
set -u
CUJIT=${1:?usage: bash test_repl_restart.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY="" TMPDIR="$TMP"
here=$(cd "$(dirname "$0")" && pwd)

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$here" "$TMP" <<'EOF'
import glob, os, random, re, subprocess, sys
sys.path.insert(0, sys.argv[2])
from pty_session import Session, fail, ok, verdict

cujit, tmp = sys.argv[1], sys.argv[3]
n = random.randint(100, 999)
out_file = os.path.join(tmp, "written.txt")
script = os.path.join(tmp, "session.lua")

s = Session(cujit, {})
s.expect("prompt", r"^> ")
statements = [
    'cuda = require "cujit"',                                               # 1
    "x = %d" % n,                                                           # 2
    'k = cuda.jit("rk%d(int *x)", "x[0] = 1;", {arch = "sm_90"})' % n,      # 3
    "function twice(v)\n  return 2 * v\nend",                               # 4
    'f = io.open("%s", "w") f:write("once") f:close()' % out_file,          # 5
    "y = 1",                                                                # 6
    "x + 1",                                                                # 7
]
for st in statements[:4]:
    s.send(st + "\n")
s.send('error("boom %d")\n' % n)
s.expect("a failing statement fails", r"boom %d" % n)
for st in statements[4:]:
    s.send(st + "\n")
s.expect("an expression prints", r"^%d$" % (n + 1))
if "type :restart" in s.buf: fail("an ordinary error offered :restart")
else: ok("an ordinary error does not offer :restart")

s.send(":history\n")
m = s.expect(":history lists the statements", r"^   1  cuda = require \"cujit\"\n[\s\S]*^   7  x \+ 1\n")
if m:
    text = m.group(0)
    if "boom" in text: fail(":history has the failed statement")
    else: ok(":history leaves the failed statement out")
    if re.search(r"^   4  function twice\(v\)\n        return 2 \* v\n      end$", text, re.M):
        ok(":history shows a multi-line statement indented")
    else: fail("multi-line statement not shown: %r" % text)
    if re.search(r"^   5  f = io\.open.*\[writes files\]$", text, re.M): ok("the file writer is marked")
    else: fail("the file writer is not marked: %r" % text)

s.send(":save %s\n" % script)
s.expect(":save says how many", r"^saved 7 statements to ")

s.send('error("device 0 faulted: an illegal memory access was encountered '
       '(CUDA_ERROR_ILLEGAL_ADDRESS) in or before kernel \'rk\'; the device refuses further work '
       'until reset")\n')
s.expect("a fault message offers :restart", r"the GPU faulted\. .*type :restart .* replays the 7 statements")

os.remove(out_file)
s.send(":restart\n")
s.expect(":restart shows what it will replay", r"replays these statements:\n   1  cuda")
s.expect(":restart asks what to drop", r"drop which\? .*$")
s.send("6 99\n")
s.expect("a bad number is refused and asked again", r"give numbers from 1 to 7[\s\S]*drop which\?")
s.send("6\n")
s.expect("it asks before replaying the file writer", r"replay #5, which looks like it writes files\? \[y/N\] ")
s.send("n\n")
s.expect("it restarts", r"restarting: a new cujit replays 5 statements")
m = s.expect("the new process replays them", r"^cujit [0-9.]+ -- Lua[\s\S]*?replayed 5 statements in [0-9.]+ ms\n")
if m and re.search(r"^%d$" % (n + 1), m.group(0), re.M):
    fail("the replay printed an expression's value")
elif m:
    ok("the replay prints no values")
s.expect("a prompt in the new process", r"^> ")
s.send("x, twice(x), k:name(), y\n")
s.expect("the variables, the function and the kernel are back; the dropped one is not",
         r"^%d\t%d\trk%d\tnil$" % (n, 2 * n, n))
if os.path.exists(out_file): fail("the file writer was replayed though the answer was no")
else: ok("the file writer was not replayed")
if glob.glob(os.path.join(tmp, "cujit-replay-*")): fail("the replay file was left behind")
else: ok("the replay file was removed")
s.send(":history\n")
s.expect("the new session's history holds the replayed statements",
         r"^   5  x \+ 1\n")
if not s.wait_for_input(r"\n> $"):  # a ^D before libedit's raw mode is lost (pty_session.py)
    fail("no prompt waiting for a key: " + s.describe())
s.send("\x04")
rc = s.finish()
if rc == 0: ok("the restarted REPL exits 0")
else: fail("exit status %r" % rc)

r = subprocess.run([cujit, script], capture_output=True, text=True, timeout=120)
if r.returncode == 0 and r.stdout.splitlines()[-1:] == [str(n + 1)]:
    ok("the saved script runs and prints the expression")
else:
    fail("the saved script: status %d, out %r, err %r" % (r.returncode, r.stdout, r.stderr))
if open(out_file).read() == "once": ok("the saved script has the file writer")
else: fail("the saved script did not write the file")

# A pipe cannot follow into a new process: :restart refuses.
r = subprocess.run([cujit, "-i"], input="x = 1\n:restart\nprint('still', x)\n",
                   capture_output=True, text=True, timeout=60)
if "still\t1" in r.stdout and ":restart needs a terminal" in r.stderr:
    ok(":restart on a pipe refuses and the session goes on")
else:
    fail(":restart on a pipe: out %r err %r" % (r.stdout, r.stderr))
verdict()
EOF
