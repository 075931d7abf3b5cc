# test_lineinfo.sh -- line info names real files (compile/kept.c): with CUJIT_LINEINFO=1 or
# line_info = true, every .file of the PTX that cujit produced is a file on disk, a cuda.jit body's
# kept copy holds the body with the user's line numbers (the .loc of its statement points at
# the right line), a file compiled names that file, a source string names a kept copy; the copies
# live under the cache directory (removed by `cujit cache clear`) or, with the cache off, in a
# private directory removed when the engine closes. CUJIT_LINEINFO is read strictly and enters
# the cache key. Run by ctest as: bash test_lineinfo.sh /path/to/cujit. Needs NVRTC, not a GPU.
set -u
source "$(dirname "$0")/lib.sh"

export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_LINEINFO CUJIT_CACHE
need_nvrtc
cd "$TMP" || exit 1

# jit.lua OPTS: compiles a cuda.jit kernel for sm_90 with the options table OPTS and prints each
# .file as "FILE index path" and each .loc as "LOC index line".
cat >jit.lua <<'EOF'
local cuda = require "cujit"
local opts = load("return " .. (arg[1] or "{}"))()
opts.arch = "sm_90"
local k = cuda.jit("scale2(const float *a, float *c, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] * 2.5f;
]], opts)
for line in k:ptx():gmatch("[^\n]+") do
  local i, path = line:match('^%s*%.file%s+(%d+)%s+"([^"]*)"')
  if i then print("FILE " .. i .. " " .. path) end
  local fi, ln = line:match("^%s*%.loc%s+(%d+)%s+(%d+)")
  if fi then print("LOC " .. fi .. " " .. ln) end
end
EOF

# every_file_exists OUT: each FILE line's path is a file on disk.
every_file_exists() {
  local n=0 missing=""
  while read -r _ _ path; do
    n=$((n + 1))
    [ -f "$path" ] || missing="$missing $path"
  done < <(grep '^FILE ' <<<"$1")
  [ "$n" -gt 0 ] && [ -z "$missing" ]
}
# body_index OUT: the .file index of the body's kept copy (scale2.cu).
body_index() { grep -E '^FILE [0-9]+ .*/scale2\.cu$' <<<"$1" | awk '{print $2}'; }

# --- off: no line table ----------------------------------------------------------------------------
run "$CUJIT" jit.lua
check_rc "jit without line info" 0
check_not "no .file without line info" "$out" '^FILE'

# --- CUJIT_LINEINFO=1: real files, the body's lines ----------------------------------------------
CUJIT_LINEINFO=1 run "$CUJIT" jit.lua
check_rc "jit with CUJIT_LINEINFO=1" 0
check "CUJIT_LINEINFO=1 gives a line table (and is not the cached entry without it)" "$out" '^FILE'
every_file_exists "$out" && ok "every .file names a file on disk" || fail "a .file is missing: $out"
idx=$(body_index "$out")
[ -n "$idx" ] && ok "the body has its own file (index $idx)" || fail "no scale2.cu file: $out"
body=$(grep -E "^FILE $idx " <<<"$out" | awk '{print $3}')
same "the kept body is the body as given" "$(cat "$body" 2>/dev/null)" '  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] * 2.5f;'
check "the store is at line 3 of the body" "$out" "^LOC $idx 3\$"
check_not "no .loc past the body's 3 lines in its file" "$out" "^LOC $idx ([4-9]|[1-9][0-9])\$"
case "$body" in
"$TMP/cache/sources/"*) ok "kept under the cache directory" ;;
*) fail "kept at $body, not under $TMP/cache/sources" ;;
esac
[ -f "$(dirname "$body")/unit.cu" ] && ok "the unit as compiled is kept beside it" || fail "no unit.cu"
check "unit.cu names the body's copy" "$(cat "$(dirname "$body")/unit.cu" 2>/dev/null)" \
  "#line 1 \"$body\""

# --- line_info = true alone does the same --------------------------------------------------------
run "$CUJIT" jit.lua '{line_info = true}'
check_rc "jit with line_info = true" 0
every_file_exists "$out" && ok "line_info = true: every .file exists" || fail "line_info: $out"
check "line_info = true: the store at line 3" "$out" "^LOC $(body_index "$out") 3\$"

# --- cujit's own headers (given to NVRTC in memory) are named by kept copies too ----------------
cat >hdr.lua <<'EOF'
local cuda = require "cujit"
local opts = load("return " .. (arg[1] or "{}"))()
opts.arch, opts.preamble = "sm_90", "#include <cujit/random.h>\n"
local k = cuda.jit("rng(uint4 *x, unsigned int seed)", [[
  x[threadIdx.x] = cujit::philox4x32_10(make_uint4(threadIdx.x, 0, 0, 0), make_uint2(seed, 1));
]], opts)
for path in k:ptx():gmatch('%.file%s+%d+%s+"([^"]*)"') do print("FILE 0 " .. path) end
EOF
for opts in '{line_info = true}' '{debug = true}'; do
  run "$CUJIT" hdr.lua "$opts"
  check_rc "a kernel using <cujit/random.h>, $opts" 0
  check "$opts: the header's device code is in the line table" "$out" '/cujit/random\.h$'
  every_file_exists "$out" && ok "$opts: every .file exists, cujit's header included" ||
    fail "$opts: a .file is missing: $out"
done
hdr=$(grep -E '/cujit/random\.h$' <<<"$out" | head -1 | awk '{print $3}')
check "the kept header is cujit's random.h" "$(cat "$hdr" 2>/dev/null)" 'philox4x32_10'

# --- strict reading ---------------------------------------------------------------------------------
CUJIT_LINEINFO=maybe run "$CUJIT" jit.lua
check_rc "CUJIT_LINEINFO=maybe refused" 1
check "the refusal names the variable, the value and what it takes" "$err" \
  "CUJIT_LINEINFO='maybe' is not understood: it takes 1, on, yes or true \(on\), 0, off, no or false \(off\), or unset; it turns line_info on"
CUJIT_LINEINFO=off run "$CUJIT" jit.lua
check_not "CUJIT_LINEINFO=off: no line table" "$out" '^FILE'
CUJIT_LINEINFO=off run "$CUJIT" jit.lua '{line_info = true}'
check "CUJIT_LINEINFO=off leaves line_info = true on" "$out" '^FILE'
CUJIT_LINEINFO=YES run "$CUJIT" jit.lua
check "CUJIT_LINEINFO=YES (any case) is on" "$out" '^FILE'

# --- errors still name the body's line -------------------------------------------------------------
CUJIT_LINEINFO=1 run "$CUJIT" -e 'local cuda = require "cujit"
cuda.jit("bad(int *x)", "x[0] = 1;\nx[1] = undefined_thing;\n", {arch = "sm_90"})'
check "an error under line info names line 2 of the body" "$err" \
  "kernel 'bad' failed to compile: line 2 of its body: error: identifier \"undefined_thing\""

# --- a file names itself, from any directory ------------------------------------------------------
mkdir -p src other
cat >src/k.cu <<'EOF'
extern "C" __global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 2.0f * x[i];
}
EOF
(cd other && CUJIT_LINEINFO=1 "$CUJIT" compile ../src/k.cu --arch sm_90 -o k.ptx 2>/dev/null)
files=$(grep -E '^\s*\.file' other/k.ptx 2>/dev/null)
same "cujit compile names the file by its absolute path" "$(awk '{print $3}' <<<"$files")" \
  "\"$TMP/src/k.cu\""
check "the store is at the file's line 4" "$(cat other/k.ptx 2>/dev/null)" '\.loc\s+1 4 '
run "$CUJIT" compile src/k.cu --arch sm_90 -o plain.ptx --lineinfo
check "--lineinfo names the file too" "$(cat plain.ptx 2>/dev/null)" "\.file\s+1 \"$TMP/src/k.cu\""

# --- a source string names a kept copy ------------------------------------------------------------
CUJIT_LINEINFO=1 run "$CUJIT" -e 'local cuda = require "cujit"
local m = cuda.source("extern \"C\" __global__ void s1(float *x) {\n  x[threadIdx.x] = 1.0f;\n}\n",
                      {arch = "sm_90", name = "dir/mine.cu"})
print(m:ptx():match("%.file%s+%d+%s+\"([^\"]+)\""))'
check_rc "cuda.source with line info" 0
case "$out" in
"$TMP/cache/sources/"*/mine.cu) ok "a source string names its kept copy" ;;
*) fail "a source string names '$out'" ;;
esac
same "the copy is the text given" "$(cat "$out" 2>/dev/null)" 'extern "C" __global__ void s1(float *x) {
  x[threadIdx.x] = 1.0f;
}'

# --- cujit cache clear takes the copies with the entries ------------------------------------------
[ -d "$TMP/cache/sources" ] && ok "sources/ exists before clear" || fail "no sources/ before clear"
run "$CUJIT" cache clear
check_rc "cache clear" 0
[ ! -e "$TMP/cache/sources" ] && ok "cache clear removed the kept sources" || fail "sources/ stays"
CUJIT_LINEINFO=1 run "$CUJIT" jit.lua
every_file_exists "$out" && ok "after a clear the copies are made again" || fail "after clear: $out"

# --- cache off: a private directory, gone at close -------------------------------------------------
mkdir -p tmpdir
CUJIT_CACHE=off TMPDIR="$TMP/tmpdir" CUJIT_LINEINFO=1 run "$CUJIT" jit.lua
check_rc "jit with the cache off" 0
path=$(grep -E '^FILE [0-9]+ .*/scale2\.cu$' <<<"$out" | awk '{print $3}')
case "$path" in
"$TMP/tmpdir/cujit-sources-"*) ok "cache off: kept under \$TMPDIR" ;;
*) fail "cache off: kept at '$path'" ;;
esac
[ -n "$path" ] && [ ! -e "$(dirname "$(dirname "$path")")" ] && ok "the private directory is gone after close" ||
  fail "the private directory stays: $(ls -R "$TMP/tmpdir")"
CUJIT_CACHE=off TMPDIR="$TMP/tmpdir" CUJIT_LINEINFO=1 run "$CUJIT" -e 'local cuda = require "cujit"
local k = cuda.jit("k1(int *x)", "x[0] = 1;", {arch = "sm_90"})
local f = k:ptx():match("%.file%s+%d+%s+\"([^\"]+)\"")
local h = io.open(f) print(h and "open" or "missing") if h then h:close() end'
same "cache off: the copy is there while the engine is open" "$out" "open"

finish
