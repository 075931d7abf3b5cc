# test_repl_restart_answers.sh -- the answers :restart takes, on a terminal: numbers out of range,
# 0, a reversed or open range, words and a range past the end are each refused and asked again;
# Ctrl-D at a question cancels and the session goes on; a comma-separated answer drops those
# statements; [y/N] for a statement that writes files drops it on 'n' (and on Enter) and keeps it
# on 'y'; the new process has exactly the statements kept. No GPU needed.
# Run by ctest as: bash test_repl_restart_answers.sh /path/to/cujit. Needs python3.
set -u
CUJIT=${1:?usage: bash test_repl_restart_answers.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY="" TMPDIR="$TMP"

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$(cd "$(dirname "$0")" && pwd)" "$TMP" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[2])
from pty_session import Session, fail, ok, verdict

cujit, tmp = sys.argv[1], sys.argv[3]
first, second = os.path.join(tmp, "first.txt"), os.path.join(tmp, "second.txt")

s = Session(cujit, {})
s.expect("prompt", r"^> ")
s.send("a = 1\n")
s.send("b = 2\n")
s.send('io.open("%s", "w"):close()\n' % first)
s.send("c = 3\n")
s.send('f = io.open("%s", "w") f:write("x") f:close()\n' % second)
s.send('print("five statements")\n')
s.expect("the statements ran", r"^five statements$")

s.send(":restart\n")
s.expect("the list", r"^   6  print\(\"five statements\"\)")
for bad in ["0", "7", "3-2", "2-", "abc", "1-99", "2x"]:
    s.expect("asked which to drop (before %r)" % bad, r"drop which\? .*$")
    s.send(bad + "\n")
    s.expect("%r is refused and asked again" % bad, r"^give numbers from 1 to 6, or ranges such as 2-4, separated by spaces$")
s.expect("asked again", r"drop which\? .*$")
# a ^D before libedit's raw mode is lost (pty_session.py): sent once the question waits for a key
if not s.wait_for_input(r"drop which\? [^\n]*\) $"):
    fail("no question waiting for a key: " + s.describe())
s.send("\x04")
s.expect("Ctrl-D at the question cancels", r"restart cancelled; the session goes on$")
s.send('print("still", a, c)\n')
s.expect("the session goes on", r"^still\t1\t3$")

os.remove(first)
os.remove(second)
s.send(":restart\n")
s.expect("asked which to drop", r"drop which\? .*$")
s.send("2,4 6-7\n")  # 7: the print after the cancel
s.expect("asked about the first file writer", r"replay #3, which looks like it writes files\? \[y/N\] $")
s.send("y\n")
s.expect("asked about the second file writer", r"replay #5, which looks like it writes files\? \[y/N\] $")
s.send("\n")
s.expect("two statements kept of seven", r"restarting: a new cujit replays 2 statements[\s\S]*?replayed 2 statements")
s.expect("a prompt in the new process", r"^> ")
s.send('print(a, b, c, io.open("%s") ~= nil, io.open("%s") ~= nil)\n' % (first, second))
s.expect("a kept, b and c dropped, the file write kept on 'y' and dropped on Enter",
         r"^1\tnil\tnil\ttrue\tfalse$")
s.send(":history\n")
m = s.expect("the new process's history is what was replayed", r"^   1  a = 1\n   2  io\.open")
s.send(":quit\n")
rc = s.finish()
if rc == 0: ok("the session ends with status 0")
else: fail("exit status %r" % rc)

# No replay file can be written (TMPDIR missing): :restart says where and why, and the session
# goes on in the same process, its statements kept.
missing = os.path.join(tmp, "no-such-dir")
s = Session(cujit, {"TMPDIR": missing})
s.expect("prompt", r"^> ")
s.send("kept = 41\n")
s.send(":restart\n")
s.expect("asked which to drop", r"drop which\? .*$")
s.send("\n")
s.expect("the replay file's failure names the directory and the reason",
         r"cannot write a replay file in %s \(No such file or directory\)" % missing)
s.send("print(kept + 1)\n")
s.expect("the session goes on with its statements", r"^42$")
s.send(":history\n")
s.expect("its history is intact", r"^   1  kept = 41\n   2  print\(kept \+ 1\)")
s.send(":quit\n")
rc = s.finish()
if rc == 0: ok("that session ends with status 0")
else: fail("exit status %r after the failed restart" % rc)
if not any(n.startswith("cujit-replay-") for n in os.listdir(tmp)):
    ok("no replay file is left behind (the restarted process removed the one it read)")
else: fail("left in TMPDIR: %r" % os.listdir(tmp))
verdict()
EOF
