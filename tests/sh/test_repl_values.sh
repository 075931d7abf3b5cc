# test_repl_values.sh -- how the REPL prints values (docs/cli.md, "Values"), each rule on a pipe
# (`cujit -i`, the same printer as on a terminal) with the exact text wanted: several values
# tab-separated, strings raw at the top and quoted and escaped inside a table, numbers as print
# writes them, the array part in order then the other keys sorted, keys that are not names in
# brackets (reserved words too), a hole ending the array part, the limits (24 entries then
# "...(N more)" for the array and for the keys, 200 bytes of a string then its length, 4 levels
# then the count of what is hidden, <cycle>), one entry a line past 96 columns with nested
# tables indented, __tostring and __name objects, host and device arrays (on the CPU device: a
# device array's elements up to 4096, none past), an error inside __tostring said without ending
# the session, and statements that give no value print nothing.
# Run by ctest as: bash test_repl_values.sh /path/to/cujit. Needs no GPU and no compiler.
set -u
source "$(dirname "$0")/lib.sh"
export CUJIT_CACHE_DIR="$TMP/cache" CUJIT_HISTORY=""

# value NAME EXPRESSION WANTED: the REPL prints exactly WANTED for EXPRESSION typed alone.
value() {
  repl "$2"
  same "$1" "$out" "$3"
  same "$1: nothing on stderr" "$err" ""
}

# --- the top level ---------------------------------------------------------------------------------
value "several values, tab-separated, nil included" '1, nil, "two words", false' "1	nil	two words	false"
value "a string at the top is raw, newline and all" '"a\nb\t\"c\""' 'a
b	"c"'
value "numbers as print writes them" '1, 1.0, -0.0, 2^63, 1e308 * 10, 3 // 2, 7 / 2' \
  "1	1.0	-0.0	9.2233720368548e+18	inf	1	3.5"
value "=expr, with several values" '=1 + 1, "x"' "2	x"
value "a statement prints nothing of its own" 'x = 1' ""
value "a call that returns nothing prints only what it prints" 'print("once")' "once"
value "nothing after =" '=' ""

# --- tables -------------------------------------------------------------------------------------------
value "an empty table" '{}' "{}"
value "array part, then the other keys sorted (by their text: '[' before '_' before 'a')" '{3, 2, 1, zeta = 1, alpha = 2, mid = {}}' \
  "{3, 2, 1, alpha = 2, mid = {}, zeta = 1}"
value "keys that are not names, in brackets" '{["a b"] = 1, ["end"] = 2, ["9x"] = 3, [true] = 4, [1.5] = 5, [""] = 6}' \
  '{[""] = 6, ["9x"] = 3, ["a b"] = 1, ["end"] = 2, [1.5] = 5, [true] = 4}'
value "names: letters, digits after the first, '_'; other characters in brackets" \
  '{Z = 1, _a9 = 2, ["x|y"] = 3, ["a{"] = 4, ["~"] = 5, ["[b]"] = 6, ["^"] = 7, A = 8, ["@"] = 9}' \
  '{A = 8, Z = 1, ["@"] = 9, ["[b]"] = 6, ["^"] = 7, ["a{"] = 4, ["x|y"] = 3, ["~"] = 5, _a9 = 2}'
value "a hole ends the array part" '{1, nil, 3, [5] = 5}' "{1, [3] = 3, [5] = 5}"
value "strings inside a table: quoted and escaped" '{"tab\there", "q\"b\\", "nl\n", "\1\127"}' \
  '{"tab\there", "q\"b\\", "nl\n", "\001\127"}'
value "nested tables" '{a = {b = {c = "d"}}, {1, {2}}}' '{{1, {2}}, a = {b = {c = "d"}}}'
value "a cycle is named" 't = {} t.self = t t.list = {t}
t' "{list = {<cycle>}, self = <cycle>}"
value "a table seen twice, not inside itself, is shown twice" 'u = {1}
{u, u}' "{{1}, {1}}"

# The limits, each saying what it hides.
value "4 levels, then the count hidden" '{{{{{1, 2}}}}}' "{{{{{...2 entries}}}}}"
value "4 levels: one entry in the singular" '{{{{{x = 1}}}}}' "{{{{{...1 entry}}}}}"
want_array=$(printf '{\n ')
for i in $(seq 1 24); do want_array+=" $i,"; done
# 24 entries of the array, packed onto lines of at most 96 columns, then the count
repl 'a = {} for i = 1, 30 do a[i] = i end
a'
same "24 entries of an array, then how many more" "$out" "{
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
  ...(6 more)
}"
# Array items fill lines of at most 96 columns: 10 digits and a comma each, 7 to a line (85
# columns; an 8th would make 97).
repl 'wide = {} for i = 1, 24 do wide[i] = 1000000000 + i end
wide'
same "array items fill lines up to 96 columns" "$(sed -n 2p <<<"$out")" \
  "  1000000001, 1000000002, 1000000003, 1000000004, 1000000005, 1000000006, 1000000007,"
same "array items: 4 lines of them" "$(grep -c '^  1' <<<"$out")" 4
repl 'h = {} for i = 1, 30 do h[string.format("k%02d", i)] = i end
h'
same "24 keys, the first in sorted order, then how many more" "$(tr '\n' '|' <<<"$out")" \
  "{|$(for i in $(seq -w 1 24); do printf '  k%s = %d,|' "$i" "$((10#$i))"; done)  ...(6 more)|}|"
# 512 keys are all sorted before the first 24 are kept (the stack holds each one's text).
repl 'many = {} for i = 512, 1, -1 do many[string.format("k%03d", i)] = i end
many'
same "512 keys: the first 24 in sorted order, then how many more" "$(sed -n '2p;25p;26p' <<<"$out")" \
  "  k001 = 1,
  k024 = 24,
  ...(488 more)"
repl 'm = {1, 2} for i = 1, 30 do m["k" .. i] = i end
m'
same "an array and many keys: the array first, 24 in all" "$(sed -n '2p;$p' <<<"$out" | tr '\n' '|')" \
  "  1, 2,|}|"
check "an array and many keys: 8 more" "$out" '^  \.\.\.\(8 more\)$'
repl 's = string.rep("x", 199) .. "yz"
{s}'
same "200 bytes of a string in a table, then its length" "$out" \
  "{
  \"$(printf 'x%.0s' $(seq 1 199))y\"...(201 bytes in all)
}"
repl 'string.rep("x", 300)'
same "a string at the top is never cut" "${#out}" 300

# One entry a line when the table is wider than 96 columns, nested ones indented under it.
repl 'w = {name = string.rep("n", 50), inner = {alpha = string.rep("a", 40), beta = string.rep("b", 40)}}
w'
same "a wide table: one entry a line, nested ones indented" "$out" "{
  inner = {
    alpha = \"$(printf 'a%.0s' $(seq 1 40))\",
    beta = \"$(printf 'b%.0s' $(seq 1 40))\"
  },
  name = \"$(printf 'n%.0s' $(seq 1 50))\"
}"
value "exactly 96 columns: one line" "{\"$(printf 'q%.0s' $(seq 1 92))\"}" "{\"$(printf 'q%.0s' $(seq 1 92))\"}"
value "two entries, exactly 96 columns: one line" "{\"$(printf 'q%.0s' $(seq 1 89))\", 1}" "{\"$(printf 'q%.0s' $(seq 1 89))\", 1}"
repl "{\"$(printf 'q%.0s' $(seq 1 93))\"}"
same "one column past the limit, one entry a line" "$(wc -l <<<"$out")" 3

# --- objects -----------------------------------------------------------------------------------------
value "a table with __tostring prints through it" \
  'p = setmetatable({}, {__tostring = function() return "<point 1 2>" end})
p, {p}' "<point 1 2>	{<point 1 2>}"
repl 'setmetatable({}, {__name = "My.Type"})'
check "a table with __name shows the name" "$out" '^My\.Type: 0x[0-9a-f]+$'
repl 'print
{print}'
check "a function prints as print writes it" "$out" '^(builtin: )?function: (builtin: )?0x[0-9a-f]+
\{function: (builtin: )?0x[0-9a-f]+\}$'
repl 'bad = setmetatable({}, {__tostring = function() error("no text for you") end})
bad
"after", 1'
same "an error inside __tostring: the session goes on" "$out" "after	1"
check "an error inside __tostring: said, with its message" "$err" \
  '^cujit: error printing the values \(.*no text for you\)$'

# --- cujit's arrays ----------------------------------------------------------------------------------
cuda='cuda = require "cujit"
'
repl "${cuda}"'h = cuda.host_array(3, "i32") h[2] = 7
h'
same "a host array with its elements" "$out" "cujit.host_array i32[3] {0, 7, 0}"
CUJIT_DEVICE=cpu repl "${cuda}"'d = cuda.to_device({1.5, 2, -3}, "f32")
d
{d}
big = cuda.zeros(4097, "f32")
big
small = cuda.zeros(4096, "i32")
small'
same "a small device array with its elements (the CPU device)" "$(sed -n 1p <<<"$out")" \
  "cujit.device_array f32[3] on the CPU device {1.5, 2.0, -3.0}"
same "a device array inside a table too" "$(sed -n 2p <<<"$out")" \
  "{cujit.device_array f32[3] on the CPU device {1.5, 2.0, -3.0}}"
same "past 4096 elements, no elements" "$(sed -n 3p <<<"$out")" "cujit.device_array f32[4097] on the CPU device"
check "4096 elements: the elements shown" "$(sed -n 4p <<<"$out")" \
  '^cujit\.device_array i32\[4096\] on the CPU device \{0, 0, 0, '
CUJIT_DEVICE=cpu repl "${cuda}"'d = cuda.to_device({1, 2}, "i32")
d:free()
d
"alive"'
check "a freed device array prints without its elements" "$(head -1 <<<"$out")" '^cujit\.device_array'
check_not "a freed device array: no elements" "$(head -1 <<<"$out")" '\{'
same "a freed device array: the session goes on" "$(tail -1 <<<"$out")" "alive"

finish
