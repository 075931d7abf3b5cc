#!/usr/bin/env bash
# test_repl_help_coverage.sh -- the REPL's `:help NAME` knows every function of the Lua API: each
# function the module exports (cuda.*, the tables in it such as cuda.nccl and cuda.random, and the
# methods of the objects whose methods Lua can list: streams, events, graphs), and each call that
# docs/lua.md or docs/lua-library.md writes (`cuda.x(`, `cuda.x.y(`, `v:x(`, in text or code).
# For a cuda.* name the reference shown must be that function's own entry (its name followed by
# "(" or "{"), not a neighbour's. Needs no GPU (the objects are made on the CPU device).
. "$(dirname "$0")/lib.sh"
SRC=${CUJIT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""

# --- the names --------------------------------------------------------------------------------------
# What the module exports, as Lua sees it.
CUJIT_DEVICE=cpu "$CUJIT" -e '
local cuda = require "cujit"
local names = {}
for k, v in pairs(cuda) do
  if type(v) == "function" then names[#names + 1] = "cuda." .. k
  elseif type(v) == "table" then
    for k2, v2 in pairs(v) do
      if type(v2) == "function" then names[#names + 1] = "cuda." .. k .. "." .. k2 end
    end
  end
end
local function methods(var, obj)
  local index = getmetatable(obj).__index
  if type(index) ~= "table" then return end
  for k, v in pairs(index) do
    if type(v) == "function" then names[#names + 1] = var .. ":" .. k end
  end
end
methods("s", cuda.stream())
methods("e", cuda.event())
methods("g", cuda.graph(function() end))
table.sort(names)
print(table.concat(names, "\n"))' >"$TMP/exported" 2>"$TMP/err" || fail "listing the exports: $(cat "$TMP/err")"
# What the manuals write as calls (not io.stderr:write and the like: the receiver is a bare name).
grep -ohP '(?<![\w.])(cuda\.[a-z_]+(\.[a-z_]+)?|[a-z_]\w*:[a-z_]\w*)(?=[({])' \
  "$SRC/docs/lua.md" "$SRC/docs/lua-library.md" | sort -u >"$TMP/documented"
sort -u "$TMP/exported" "$TMP/documented" >"$TMP/names"
count=$(wc -l <"$TMP/names")
[ "$(wc -l <"$TMP/exported")" -gt 40 ] && ok "$(wc -l <"$TMP/exported") exported functions listed" ||
  fail "too few exports listed: $(tr '\n' ' ' <"$TMP/exported")"
[ "$(wc -l <"$TMP/documented")" -gt 40 ] && ok "$(wc -l <"$TMP/documented") documented calls found" ||
  fail "too few documented calls found"
for must in cuda.to_device cuda.zeros cuda.elementwise a:sum cuda.random.uniform cuda.nccl.comm; do
  grep -qxF "$must" "$TMP/names" && ok "$must is among the names walked" || fail "$must not walked"
done

# --- :help for each, in one session ------------------------------------------------------------------
while read -r name; do
  printf ':help %s\nprint("--- end of %s")\n' "$name" "$name"
done <"$TMP/names" >"$TMP/session"
"$CUJIT" -i <"$TMP/session" >"$TMP/out" 2>"$TMP/err"
missing=0 wrong=0
while read -r name; do
  block=$(awk -v end="--- end of $name" -v start="$prev" '
    $0 == end { exit } started { print } $0 == start || start == "" { started = 1 }' "$TMP/out")
  prev="--- end of $name"
  if grep -q "^no reference for '" <<<"$block"; then
    fail ":help $name: $(head -c 200 <<<"$block")"
    missing=$((missing + 1))
  elif [[ $name == cuda.* ]] && ! grep -qF -e "$name(" -e "$name{" <<<"$block"; then
    fail ":help $name shows another entry: $(head -c 200 <<<"$block")"
    wrong=$((wrong + 1))
  fi
done <"$TMP/names"
[ $((missing + wrong)) -eq 0 ] && ok ":help knows all $count names, each cuda.* one by its own entry"
echo "$count names: $missing without help, $wrong shown by another entry"

# the names the issue found missing, and an unknown one
for name in cuda.to_device cuda.zeros cuda.elementwise a:sum; do
  out=$(printf ':help %s\n' "$name" | "$CUJIT" -i 2>&1)
  check ":help $name: its own reference" "$out" "^${name//./\\.}\("
  check ":help $name: where in the manual" "$out" "\(docs/lua\.md, "
done
out=$(printf ':help nccl.comm\n:help uniform\n' | "$CUJIT" -i 2>&1)
check ":help nccl.comm (without cuda.)" "$out" '^cuda\.nccl\.comm\('
check ":help uniform (bare)" "$out" '^cuda\.random\.uniform\('
out=$(printf ':help no_such_function\n' | "$CUJIT" -i 2>&1)
check "an unknown name lists the documented ones, the new ones too" "$out" \
  "^no reference for 'no_such_function'.* cuda\.zeros .* cuda\.random\.uniform "
check_not "links are shown as their text" "$(printf ':help a:sum\n' | "$CUJIT" -i 2>&1)" '\]\('
# Brackets that are not a link stay, beside a link shown as its text; optional arguments keep
# theirs.
out=$(printf ':help cuda.managed_array\n:help comm:reduce_scatter\n' | "$CUJIT" -i 2>&1)
check "an index beside a link: both kept, the link as its text" "$out" \
  '^cuda\.managed_array\(shape \[, dtype\]\): a zeroed device array the host indexes too, m\[i\] \(Managed'
check "an index in a row: kept" "$out" \
  '^comm:reduce_scatter\(arrays, out \[, op \[, streams\]\]\): each array holds ranks x #out\[i\] elements$'
finish
