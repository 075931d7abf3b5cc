# test_repl_comforts.sh -- the REPL's comforts on a terminal (a pseudo-terminal, see
# pty_session.py): Tab completion of globals, table fields (also of a table behind __index), the
# methods of cujit's host arrays and kernels (read from their metatables) and cuda.jit's option
# names (also past long strings holding brackets); the listing of several
# candidates; tables printed as nested values with limits; :help NAME giving docs/lua.md's own
# text. Needs python3 (skips without) and NVRTC for one sm_90 kernel (no GPU).
# Run by ctest as: bash test_repl_comforts.sh /path/to/cujit.
set -u
CUJIT=${1:?usage: bash test_repl_comforts.sh /path/to/cujit}
command -v python3 >/dev/null || { echo "skip: python3 is needed to drive a pseudo-terminal"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""
here=$(cd "$(dirname "$0")" && pwd)

PYTHONDONTWRITEBYTECODE=1 python3 - "$CUJIT" "$here" "$here/../../docs/lua.md" <<'EOF'
import random, re, sys
sys.path.insert(0, sys.argv[2])
from pty_session import Session, fail, ok, verdict

cujit, doc = sys.argv[1], sys.argv[3]
n = random.randint(100, 999)
s = Session(cujit, {})
s.expect("prompt", r"^> ")
s.send('cuda = require "cujit"\n')

# --- completion -------------------------------------------------------------------------------
# libedit redraws the completed line with cursor moves, so the checks look at what the completed
# statement printed, and at the completed tail of the echo.
s.send("zebra_unique_%d = %d\n" % (n, n))
s.send("zebra_uni\t + 1\n")
s.expect("a global completes", r"^%d$" % (n + 1))
s.send("tbl = {alpha_field = %d, beta = 2}\n" % n)
s.send("tbl.alp\t\n")
s.expect("a table field completes after '.'", r"^%d$" % n)
s.send('h = cuda.host_array(3, "i32")\n')
s.send("h:tot\t)\n")
s.expect("a host array method completes after ':' (with its '(')", r"able\(\)\n\{0, 0, 0\}$")
s.send('k = cuda.jit("kc%d(int *x)", "x[0] = 1;", {ar\t = "sm_90"})\n' % n)
# (a slow compile may print its notes, "still running ...", before the prompt)
s.expect("cuda.jit's option name completes inside its options table",
         r'ch = "sm_90"\}\)\n(cujit: [^\n]*\n)*> ')
# A long string of another level, holding what would open or close brackets, is skipped whole.
s.send('k2 = cuda.jit([[kd%d(int *x)]], [==[x[0] = 2; /* ]] ( { ]=] */]==], {ar\t = "sm_90"})\n' % n)
# (libedit redraws the long line with cursor moves: the kernel's signature shows the option took)
s.expect("a statement with long strings holding brackets runs", r'sm_90"\}\)\n(cujit: [^\n]*\n)*> ')
s.send("k2:sig\t)\n")
s.expect("the option name completed after long strings holding brackets", r"^kd%d\(int \*x\)$" % n)
# The path to the completed name is read through a table's __index (a prototype) too.
s.send("proto = {inner_part = {zeta_field = %d}}\n" % n)
s.send("obj = setmetatable({}, {__index = proto})\n")
s.send("obj.inner_part.zeta_f\t\n")
s.expect("a field of a field behind __index completes", r"^%d$" % n)
s.send("k:sig\t)\n")
s.expect("a kernel method completes (methods behind its __index closure)",
         r"^kc%d\(int \*x\)$" % n)
s.send("cuda.dev\t\t")
m = s.expect("two Tabs list the candidates", r"\ncuda\.device\b[\s\S]*?> cuda\.device")
if m and all(c in m.group(0) for c in ("cuda.devices", "cuda.device_function", "cuda.device_array")):
    ok("the listing has every cuda.dev* name")
elif m:
    fail("the listing lacks names: %r" % m.group(0))
s.send("\x03")
s.expect("Ctrl-C abandons the completed line", r"^> ")

# --- printing ----------------------------------------------------------------------------------
s.send('t = {1, 2, "a\\nb", x = {y = "z"}, [true] = %d}\n' % n)
s.send("t\n")
s.expect("a nested table prints as a value", r'^\{1, 2, "a\\nb", \[true\] = %d, x = \{y = "z"\}\}$' % n)
s.send("deep = {{{{{{1}}}}}}\n")
s.send("deep\n")
s.expect("depth is limited, and says how much is hidden", r"^\{\{\{\{\{\.\.\.1 entry\}\}\}\}\}$")
s.send("long = {} for i = 1, 300 do long[i] = i end\n")
s.send("long\n")
s.expect("length is limited, and says how many more", r"^  1, 2, 3, [\d, ]*\n  \.\.\.\(2\d\d more\)\n\}$")
s.send("c = {} c.me = c\n")
s.send("c\n")
s.expect("a cycle is named, not followed", r"^\{me = <cycle>\}$")
s.send('"raw string", h\n')
s.expect("top-level strings print raw, host arrays with their elements",
         r"^raw string\tcujit\.host_array i32\[3\] \{0, 0, 0\}$")

# --- :help ---------------------------------------------------------------------------------------
rows = {}
for line in open(doc, encoding="utf-8"):
    cells = [c.strip().replace("`", "") for c in line.strip().strip("|").split("|")]
    if line.startswith("| `cuda.memory()`") or line.startswith("| `k:name()`"):
        rows[cells[0].split("(")[0]] = cells[0] + ": " + cells[1]
for name, query in (("cuda.memory", ":help cuda.memory"), ("k:name", ":help k:signature")):
    want = rows.get(name)
    if not want:
        fail("docs/lua.md has no row for %s any more: update this test" % name)
        continue
    s.send(query + "\n")
    s.expect("%s shows docs/lua.md's row" % query, "^" + re.escape(want) + r"\n    \(docs/lua\.md, ")
s.send(":help jit\n")
s.expect(":help jit finds cuda.jit's heading and paragraph",
         r"^cuda\.jit\(signature, body \[, options\]\) -> kernel\n    Defines a kernel")
s.send(":help arch\n")
s.expect(":help arch gives the option's row", r'^arch = "sm_90": target')
s.send(":help no_such_%d\n" % n)
s.expect("an unknown name says so and lists the names", r"no reference for 'no_such_%d' in docs/lua\.md; it documents: cuda\.jit " % n)
if not s.wait_for_input(r"\n> $"):  # a ^D before libedit's raw mode is lost (pty_session.py)
    fail("no prompt waiting for a key: " + s.describe())
s.send("\x04")
rc = s.finish()
if rc == 0: ok("exits 0")
else: fail("exit status %r" % rc)
verdict()
EOF
