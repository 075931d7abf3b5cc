#!/usr/bin/env bash
# test_layers.sh -- the core is a ladder: every #include "..." among engine/core files, and every
# call between its objects (nm), follows an arrow of tests/sh/layers.txt (down only), the arrows
# form no circle, every core file has a layer, and no file under engine/ is longer than 700 lines. The CUJIT argument is not used.
set -u
cd "${CUJIT_SOURCE_DIR:?}" || exit 1
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
MAX_LINES=700
# Files being split on other branches at the time of writing; each entry must still be too long
# (so the list cannot go stale): remove it when the split lands.
PENDING_SPLIT=""

declare -A layer_of allowed
layers=()
while read -r line; do
  line=${line%%#*}
  [ -z "${line// /}" ] && continue
  left=${line%%:*} right=${line#*:}
  read -r name globs <<<"$left"
  layers+=("$name")
  allowed[$name]=$(echo $right)
  for g in $globs; do
    for f in engine/core/$g; do
      [ -e "$f" ] || continue
      f=${f#engine/core/}
      [ -n "${layer_of[$f]:-}" ] && fail "$f is in two layers: ${layer_of[$f]} and $name"
      layer_of[$f]=$name
    done
  done
done <tests/sh/layers.txt

# The declared arrows: each may only point at layers listed above it (earlier lines), which
# makes a circle impossible; an arrow to an unknown layer is a typo.
declare -A seen
for name in "${layers[@]}"; do
  for to in ${allowed[$name]}; do
    [ -n "${seen[$to]:-}" ] || fail "layer $name may include $to, which is not below it"
  done
  seen[$name]=1
done

# What a layer reaches: its arrows, closed transitively.
reach() {
  local out=" " l
  local -a todo=($1)
  while [ ${#todo[@]} -gt 0 ]; do
    l=${todo[0]}
    todo=("${todo[@]:1}")
    case "$out" in *" $l "*) continue ;; esac
    out="$out$l "
    todo+=(${allowed[$l]})
  done
  echo "$out"
}

for path in $(find engine/core -name '*.[ch]' | sort); do
  f=${path#engine/core/}
  dir=$(dirname "$f")
  from=${layer_of[$f]:-}
  if [ -z "$from" ]; then
    fail "$f has no layer: add it to tests/sh/layers.txt"
    continue
  fi
  ok_layers=$(reach "$from")
  while read -r inc; do
    [ -z "$inc" ] && continue
    # the public headers (cujit_dlpack.h: the DLPack ABI's types), above and below everything
    case "$inc" in cujit.h | cujit_dlpack.h) continue ;; esac
    # "x.h" is the including file's neighbour when there is one (the compiler looks there first),
    # else a path from engine/core ("compile/cache.h").
    [ "$dir" != . ] && [ -e "engine/core/$dir/$inc" ] && inc="$dir/$inc"
    to=${layer_of[$inc]:-}
    if [ -z "$to" ]; then
      fail "$f includes \"$inc\", which is no core file with a layer"
    elif ! case " $ok_layers " in *" $to "*) true ;; *) false ;; esac; then
      fail "$f ($from) includes \"$inc\" ($to): an arrow layers.txt does not allow"
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$path")
done

# Calls follow the arrows too, those through the public header included: every symbol a core
# object uses (nm: U) that another core object defines must be defined in the user's own layer or
# one it reaches. Reads the objects of the build the suite runs in (CUJIT_BINARY_DIR).
objs="${CUJIT_BINARY_DIR:-}/CMakeFiles/cujit_core.dir/engine/core"
if [ ! -d "$objs" ]; then
  fail "no objects of engine/core under $objs: build first (cmake --build), then run this test"
else
  declare -A defined_in
  src_dir=$PWD
  symbols=$(cd "$objs" && find . -name '*.c.o' | sort | while read -r o; do
    f=${o#./}
    [ -e "$src_dir/engine/core/${f%.o}" ] || continue # left by a file since removed
    nm "$o" | awk -v f="${f%.o}" '$1 == "U" { print "U", f, $2 }
                                  NF == 3 && $2 ~ /^[TDBRCGS]$/ { print "D", f, $3 }'
  done)
  [ -n "$symbols" ] || fail "nm found no symbols in $objs"
  while read -r kind f sym; do
    [ "$kind" = D ] && defined_in[$sym]=$f
  done <<<"$symbols"
  declare -A reach_of
  for l in "${layers[@]}"; do reach_of[$l]=$(reach "$l"); done
  ncalls=0
  while read -r kind f sym; do
    [ "$kind" = U ] || continue
    to_file=${defined_in[$sym]:-}
    [ -z "$to_file" ] && continue # libc, the loader's dlsym'd entry points, ...
    ncalls=$((ncalls + 1))
    from=${layer_of[$f]:-} to=${layer_of[$to_file]:-}
    if [ -z "$from" ] || [ -z "$to" ]; then
      fail "$f uses $sym of $to_file, and one of them has no layer"
    elif ! case " ${reach_of[$from]} " in *" $to "*) true ;; *) false ;; esac; then
      fail "$f ($from) calls $sym of $to_file ($to): an arrow layers.txt does not allow"
    fi
  done <<<"$symbols"
  [ "$ncalls" -gt 0 ] || fail "no call between core objects found: is $objs the core's build?"
  echo "$ncalls uses of symbols across core objects checked against the ladder"
fi

for path in $(find engine -name '*.[ch]' | sort); do
  n=$(wc -l <"$path")
  case " $PENDING_SPLIT " in
  *" $path "*)
    [ "$n" -gt "$MAX_LINES" ] || fail "$path is $n lines now: take it off PENDING_SPLIT" ;;
  *)
    [ "$n" -le "$MAX_LINES" ] || fail "$path has $n lines, over $MAX_LINES: split it by role" ;;
  esac
done

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
