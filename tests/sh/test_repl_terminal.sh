# test_repl_terminal.sh -- what the REPL does only on a terminal (a pseudo-terminal, see
# pty_session.py), beyond test_repl_pty.sh and test_repl_comforts.sh: `cujit -i` and `cujit -v -i`
# print the banner once; _PROMPT and _PROMPT2 change the prompts; Ctrl-D at a continuation
# prompt ends that statement (Lua's error) but not the session, and at the first prompt ends it
# with status 0; Tab completes keywords, names starting with '_' only when asked for, string
# methods, fields of library tables with '(' after a function and none after a value, and
# option names only inside the options table of jit/source/load/elementwise (not of any call);
# blank lines stay out of the history file, which keeps the last 1000 entries; a file that is not a
# history cujit wrote (another program's lines) is left untouched, saying so, and an empty one used;
# :restart's replay time covers what the replayed statements spent.
# Run by ctest as: bash test_repl_terminal.sh /path/to/cujit. Needs python3 (skips without), no
# GPU, no compiler.
set -u
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$(cd "$(dirname "$0")" && pwd)" "$TMP" <<'EOF' || fails=$((fails + 1))
import os, re, sys
sys.path.insert(0, sys.argv[2])
from pty_session import Session, ctrl_d_exits_0 as ends, fail, ok, verdict

cujit, tmp = sys.argv[1], sys.argv[3]
banner = r"cujit [0-9.]+ -- Lua 5\.4"

# --- the banner, once ----------------------------------------------------------------------------
for args in (["-i"], ["-v", "-i"], []):
    s = Session(cujit, {}, args)
    s.expect("cujit %s: the first prompt" % " ".join(args), r"^> ")
    n = len(re.findall(banner, s.buf))
    if n == 1: ok("cujit %s: the banner once" % " ".join(args))
    else: fail("cujit %s: the banner %d times: %r" % (" ".join(args), n, s.buf))
    ends(s, "cujit %s" % " ".join(args))

# --- prompts and Ctrl-D --------------------------------------------------------------------------
s = Session(cujit, {})
s.expect("prompt", r"^> ")
s.send('_PROMPT = "lua$ " _PROMPT2 = "more$ "\n')
s.expect("_PROMPT is the new prompt", r"^lua\$ ")
s.send("function h()\n")
s.expect("_PROMPT2 is the new continuation prompt", r"^more\$ ")
if not s.wait_for_input(r"more\$ $"):  # a ^D before libedit's raw mode is lost (pty_session.py)
    fail("no continuation prompt waiting for a key: " + s.describe())
s.send("\x04")
s.expect("Ctrl-D at the continuation prompt: Lua's error for the unfinished statement",
         r"'end' expected near <eof>")
s.expect("and a new prompt", r"^lua\$ ")
s.send("print('session on', h)\n")
s.expect("the session goes on, h undefined", r"^session on\tnil$")
s.send("_PROMPT = nil\n")
s.expect("_PROMPT = nil: the default prompt again", r"^> ")

# --- completion ----------------------------------------------------------------------------------
# Each completed statement runs, and what it prints says what Tab inserted.
s.send("whil\t false do end print('keyword')\n")
s.expect("a keyword completes", r"^keyword$")
s.send("t = {_hidden = 1, shown = 2}\n")
s.send("t.\t\n")
s.expect("after '.', names starting with '_' are left out: one candidate", r"^2$")
s.send("_VERS\t\n")
s.expect("a name starting with '_' completes when '_' is typed", r"^Lua 5\.4$")
s.send('str = "abc"\n')
s.send("str:upp\t)\n")
s.expect("a string's method completes, with its '('", r"^ABC$")
s.send("string.form\t'%d', 7)\n")
s.expect("a library function completes, with its '('", r"^7$")
s.send("math.hu\t\n")
s.expect("a value completes without '('", r"^inf$")
# The option names (cuda.options: preamble) only inside the options table of a maker's call.
s.send('cuda = require "cujit"\n')
s.send("key = function(a, t) return (next(type(a) == 'table' and a or t)) end m = {jit = key, other = key}\n")
s.send('m.jit("x", {pream\t = 1})\n')
s.expect("inside jit's options table, an option name completes", r"^preamble$")
s.send('m.other("x", {pream\t = 1})\n')
s.expect("inside another call's table, no option name", r"^pream$")
s.send('m.jit({pream\t = 1}, {})\n')
s.expect("a table that is jit's first argument is no options table", r"^pream$")
ends(s, "the completion session")

# --- history: no blank lines, the last 1000 entries ------------------------------------------------
history = os.path.join(tmp, "history")
with open(history, "w") as f:
    f.write("_HiStOrY_V2_\n" + "".join("old%d=%d\n" % (i, i) for i in range(1, 1006)))
s = Session(cujit, {"CUJIT_HISTORY": history})
s.expect("prompt with a long history", r"^> ")
s.send("\n   \n")
s.send("newest = 1\n")
s.send("=newest\n")
s.expect("a statement runs", r"^1$")
ends(s, "the history session")
entries = open(history).read().splitlines()[1:]
if len(entries) == 1000: ok("the history keeps 1000 entries")
else: fail("the history has %d entries" % len(entries))
if entries[-2:] == ["newest\\040=\\0401", "=newest"]: ok("the newest entries last")
else: fail("the last entries: %r" % entries[-2:])
if entries[:1] == ["old8=8"]: ok("the oldest dropped first")
else: fail("the first entry: %r" % entries[:1])
if any(not e.strip() or re.fullmatch(r"(\\040)+", e) for e in entries): fail("a blank line is in the history")
else: ok("blank lines are not in the history")

# :restart's replay says how long it took: at least the 0.3 s one replayed statement spends.
s = Session(cujit, {"TMPDIR": tmp})
s.expect("prompt before :restart", r"^> ")
s.send("c = require('cujit').clock\n")
s.send("t0 = c() while c() - t0 < 0.3 do end\n")
s.send(":restart\n")
s.expect(":restart asks which to drop", r"drop which\? .*$")
s.send("\n")
m = s.expect("the replay's time", r"replayed 2 statements in ([0-9.]+) ms")
if m and float(m.group(1)) >= 300: ok("the replay's time covers the statement's 0.3 s (%s ms)" % m.group(1))
elif m: fail("the replay took %s ms, less than the 300 ms it spent" % m.group(1))
s.expect("a prompt after the replay", r"^> ")
ends(s, "the restarted session")

# A file that is not a history cujit wrote (another program's plain lines) is left as it is.
plain = os.path.join(tmp, "plain_history")
with open(plain, "w") as f:
    f.write("my precious line 1\nmy precious line 2\n")
s = Session(cujit, {"CUJIT_HISTORY": plain})
s.expect("a foreign history file: one warning",
         r"cujit: warning: .*plain_history is not a history cujit wrote \(its first line is not "
         r"libedit's mark\); it is left as it is and this session keeps no history")
s.expect("prompt with a foreign history file", r"^> ")
s.send("=40 + 2\n")
s.expect("the session runs", r"^42$")
ends(s, "the foreign history session")
if open(plain).read() == "my precious line 1\nmy precious line 2\n": ok("the foreign file is untouched")
else: fail("the foreign history file was changed: %r" % open(plain).read())
if s.buf.count("is not a history cujit wrote") == 1: ok("the warning is said once")
else: fail("warnings: %r" % s.buf)
empty = os.path.join(tmp, "empty_history")
open(empty, "w").close()
s = Session(cujit, {"CUJIT_HISTORY": empty})
s.expect("prompt with an empty history file", r"^> ")
s.send("empty_ok = 1\n")
ends(s, "the empty history session")
if "empty_ok" in open(empty).read() and "warning" not in s.buf: ok("an empty file becomes the history")
else: fail("an empty history file: %r, %r" % (open(empty).read(), s.buf))
verdict()
EOF
finish
