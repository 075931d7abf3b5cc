#!/usr/bin/env python3
"""scripts/mutate/mutants.py -- systematic mutants of C (and Lua) files, for mutate.sh.

Every mutant of a class is made wherever its pattern occurs (none picked by hand); a run samples
them with a seeded generator, so the same seed gives the same mutants. The file is tokenized first,
so nothing inside a comment, a string or a preprocessor line is mutated. Python 3 stdlib only.

Classes:
  ROR   relational operator replaced: each of < <= > >= == != by each other
  AOR   arithmetic operator replaced: binary + - * / % by each other, += -= *= /= %= likewise,
        ++ and -- by each other
  LCR   logical connector: && for ||, || for &&; a `!` removed
  CRP   constant: an integer literal 0 -> 1, 1 -> 0 and 2, n -> n+1 and n-1
  NEG   condition negated: if (c) -> if (!(c)), while (c) -> while (!(c))
  SDL   statement deleted: an expression statement (a call, an assignment) -> `;`, a returned
        value (not a constant) -> 0 (C); a call statement alone on its line removed (Lua)
  SWP   adjacent call arguments of the same kind (two names, two numbers, two strings) swapped

  mutants.py sample [-n N] [-s SEED] [-o OUTDIR] [--lines A-B] [--ids FILE] FILE...
      All mutants of the FILEs (paths relative to the current directory), N of them drawn (0:
      all); writes OUTDIR/index.tsv (number, file, line, class, id, change) and, per mutant,
      OUTDIR/<number>.<ext> (the whole mutated file) and OUTDIR/<number>.diff.
  mutants.py count FILE...
      How many mutants of each class each file has.

A mutant's id is a digest of the changed text, its replacement and which occurrence of that pair
it is in the file: stable when other lines change. Unique within its file only: the same change at
the same occurrence has the same id in every file, so scripts/mutate/equivalents lists an id with
its file.
"""
import argparse
import difflib
import hashlib
import os
import random
import re
import sys

C_PUNCT = sorted("""<<= >>= ... -> ++ -- << >> <= >= == != && || *= /= %= += -= &= ^= |= ##
    [ ] ( ) { } . & * + - ~ ! / % < > ^ | ? : ; = , #""".split(), key=len, reverse=True)
LUA_PUNCT = sorted("""... .. == ~= <= >= << >> // :: [ ] ( ) { } . , ; : + - * / % ^ # & ~ |
    < > =""".split(), key=len, reverse=True)
C_KEYWORDS = set("""auto break case char const continue default do double else enum extern float
    for goto if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while _Bool _Atomic _Alignof _Alignas _Noreturn
    _Static_assert _Thread_local _Generic bool size_t""".split())
LUA_KEYWORDS = set("""and break do else elseif end false for function goto if in local nil not or
    repeat return then true until while""".split())
RELATIONAL = {"c": ["<", "<=", ">", ">=", "==", "!="], "lua": ["<", "<=", ">", ">=", "==", "~="]}
ARITHMETIC = {"c": ["+", "-", "*", "/", "%"], "lua": ["+", "-", "*", "/", "%"]}
COMPOUND = ["+=", "-=", "*=", "/=", "%="]
NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]*)$")


class Token:
    __slots__ = ("kind", "text", "start", "end", "line")

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line


def tokenize(text, lang):
    """Identifiers, numbers, strings and punctuators; comments and preprocessor lines skipped."""
    tokens, i, n, line = [], 0, len(text), 1
    punct = C_PUNCT if lang == "c" else LUA_PUNCT
    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line, i, line_start = line + 1, i + 1, True
            continue
        if c.isspace():
            i += 1
            continue
        if lang == "c" and c == "#" and line_start:  # a preprocessor line, continuations too
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line, i = line + 1, i + 1
                i += 1
            continue
        line_start = False
        if lang == "c" and text.startswith("//", i) or lang == "lua" and text.startswith("--", i):
            long_comment = lang == "lua" and re.match(r"--\[(=*)\[", text[i:i + 64])
            if long_comment:
                close = "]" + long_comment.group(1) + "]"
                j = text.find(close, i)
                j = n if j < 0 else j + len(close)
            else:
                j = text.find("\n", i)
                j = n if j < 0 else j
            line += text.count("\n", i, j)
            i = j
            continue
        if lang == "c" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        long_string = lang == "lua" and re.match(r"\[(=*)\[", text[i:i + 64])
        if long_string:
            close = "]" + long_string.group(1) + "]"
            j = text.find(close, i)
            j = n if j < 0 else j + len(close)
            tokens.append(Token("str", text[i:j], i, j, line))
            line += text.count("\n", i, j)
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            tokens.append(Token("str" if c == '"' or lang == "lua" else "chr", text[i:j], i, j, line))
            i = j
            continue
        m = re.compile(r"[A-Za-z_]\w*").match(text, i)
        if m:
            # C string prefixes (u8"..", L'..') belong to the literal that follows.
            if lang == "c" and m.end() < n and text[m.end()] in "\"'" and m.group() in ("u8", "u", "U", "L"):
                i = m.end()
                continue
            tokens.append(Token("id", m.group(), i, m.end(), line))
            i = m.end()
            continue
        m = re.compile(r"\.?[0-9](?:[eEpP][+-]|[\w.])*").match(text, i)
        if m:
            tokens.append(Token("num", m.group(), i, m.end(), line))
            i = m.end()
            continue
        for p in punct:
            if text.startswith(p, i):
                tokens.append(Token("op", p, i, i + len(p), line))
                i += len(p)
                break
        else:
            tokens.append(Token("op", c, i, i + 1, line))
            i += 1
    return tokens


class Mutant:
    __slots__ = ("cls", "start", "end", "replacement", "line", "file", "id", "change")

    def __init__(self, cls, start, end, replacement, line):
        self.cls, self.start, self.end, self.replacement, self.line = cls, start, end, replacement, line


def matching(tokens, k):
    """The index of the bracket closing tokens[k]."""
    opening, closing = tokens[k].text, {"(": ")", "[": "]", "{": "}"}[tokens[k].text]
    depth = 0
    for j in range(k, len(tokens)):
        if tokens[j].text == opening:
            depth += 1
        elif tokens[j].text == closing:
            depth -= 1
            if depth == 0:
                return j
    return None


def is_operand_end(tok, lang):
    """True when tok can end an operand, so that an operator after it is binary."""
    keywords = C_KEYWORDS if lang == "c" else LUA_KEYWORDS
    if tok is None:
        return False
    if tok.kind in ("num", "str", "chr"):
        return True
    if tok.kind == "id":
        return tok.text not in keywords or (lang == "lua" and tok.text in ("nil", "true", "false"))
    return tok.text in (")", "]") or (lang == "lua" and tok.text == "}")


def after_cast(tokens, k):
    """tokens[k - 1] closes a cast such as `(unsigned char)` or `(struct x *)`: what follows is
    unary (C)."""
    if k < 2 or tokens[k - 1].text != ")":
        return False
    j, inside = k - 2, []
    while j >= 0 and tokens[j].text != "(":
        inside.append(tokens[j])
        j -= 1
    if j < 0 or not inside or j and tokens[j - 1].kind == "id" and tokens[j - 1].text not in C_KEYWORDS:
        return False  # a call's closing parenthesis, or nothing
    return all(t.text in C_KEYWORDS or t.text.endswith("_t") or t.text in ("*", "FILE") or
               t.kind == "id" and j + 1 < k and tokens[j + 1].text in ("struct", "union", "enum", "const")
               for t in inside)


def in_parameter_list(tokens, k):
    """tokens[k] lies inside the parentheses of a function's declaration (`int f(char *p)`): the
    name before the opening parenthesis follows a type, not an operator or a keyword like return."""
    depth, j = 0, k
    while j > 0:
        j -= 1
        t = tokens[j].text
        if t == ")":
            depth += 1
        elif t == "(":
            if depth == 0:
                break
            depth -= 1
        elif t in (";", "{", "}"):
            return False
    return j >= 2 and tokens[j - 1].kind == "id" and (tokens[j - 2].kind == "id" and tokens[j - 2].text not in
                                                      ("return", "case", "sizeof") or tokens[j - 2].text == "*")


def looks_like_type(tokens, k):
    """`T *` in a declaration or a cast: a pointer, not a product (C). A guess from the tokens
    around it; a wrong guess costs an invalid mutant or a missed one, nothing else."""
    prev = tokens[k - 1] if k else None
    before = tokens[k - 2] if k > 1 else None
    after = tokens[k + 1] if k + 1 < len(tokens) else None
    beyond = tokens[k + 2] if k + 2 < len(tokens) else None
    if prev is None or prev.kind != "id":
        return False
    if prev.text in C_KEYWORDS or prev.text.endswith("_t") or prev.text == "FILE":
        return True
    if before is not None and before.text in ("struct", "union", "enum", "const"):
        return True
    if re.search(r"[a-z]", prev.text) and re.search(r"[A-Z]", prev.text):  # lua_State, a type
        return True
    if before is not None and before.text in ("(", ",") and in_parameter_list(tokens, k):
        return True
    if after is not None and after.text in (")", "*", "const"):
        return True
    # a statement `T *x = ...;` or `T *x;`, a function `static T *f(`
    return (before is None or before.text in (";", "{", "}") or before.text in C_KEYWORDS) and after is not None \
        and after.kind == "id" and beyond is not None and beyond.text in ("=", ";", ",", "[", "(")


def statement_start(tokens, k):
    prev = tokens[k - 1] if k else None
    return prev is None or prev.text in (";", "{", "}", "else", "do")


def operator_mutants(tokens, lang, out):
    for k, tok in enumerate(tokens):
        prev = tokens[k - 1] if k else None
        t = tok.text
        if tok.kind != "op" and not (lang == "lua" and tok.kind == "id" and t in ("and", "or", "not")):
            continue
        if t in RELATIONAL[lang]:
            for other in RELATIONAL[lang]:
                if other != t:
                    out.append(Mutant("ROR", tok.start, tok.end, other, tok.line))
        elif t in ARITHMETIC[lang] and is_operand_end(prev, lang) and not (lang == "c" and after_cast(tokens, k)):
            if lang == "c" and t == "*" and looks_like_type(tokens, k):
                continue
            for other in ARITHMETIC[lang]:
                if other != t:
                    out.append(Mutant("AOR", tok.start, tok.end, other, tok.line))
        elif lang == "c" and t in COMPOUND:
            for other in COMPOUND:
                if other != t:
                    out.append(Mutant("AOR", tok.start, tok.end, other, tok.line))
        elif lang == "c" and t in ("++", "--"):
            out.append(Mutant("AOR", tok.start, tok.end, "--" if t == "++" else "++", tok.line))
        elif t in ("&&", "||", "and", "or"):
            other = {"&&": "||", "||": "&&", "and": "or", "or": "and"}[t]
            out.append(Mutant("LCR", tok.start, tok.end, other, tok.line))
        elif t in ("!", "not"):
            end = tokens[k + 1].start if k + 1 < len(tokens) else tok.end
            out.append(Mutant("LCR", tok.start, end, "", tok.line))


def constant_mutants(tokens, lang, out):
    for k, tok in enumerate(tokens):
        if tok.kind != "num":
            continue
        m = NUMBER.match(tok.text)
        if not m:
            continue
        digits, suffix = m.group(1), m.group(2)
        value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 8 if len(digits) > 1 and digits[0] == "0" else 10)
        if value == 0:
            targets = [1]
        elif value == 1:
            targets = [0, 2]
        else:
            targets = [value + 1, value - 1]
        for v in targets:
            text = (hex(v) if digits[:2] in ("0x", "0X") else str(v)) + suffix
            out.append(Mutant("CRP", tok.start, tok.end, text, tok.line))


def condition_mutants(tokens, lang, text, out):
    for k, tok in enumerate(tokens):
        if tok.kind != "id" or tok.text not in ("if", "while", "elseif"):
            continue
        if lang == "c":
            if k + 1 >= len(tokens) or tokens[k + 1].text != "(":
                continue
            close = matching(tokens, k + 1)
            if close is None:
                continue
            a, b = tokens[k + 1].end, tokens[close].start
            out.append(Mutant("NEG", a, b, "!(" + text[a:b] + ")", tok.line))
        else:
            stop = "do" if tok.text == "while" else "then"
            j, depth = k + 1, 0
            while j < len(tokens) and not (depth == 0 and tokens[j].text == stop):
                t = tokens[j].text
                depth += 1 if t in ("(", "[", "{") else -1 if t in (")", "]", "}") else 0
                j += 1
            if j >= len(tokens) or j == k + 1:
                continue
            a, b = tokens[k + 1].start, tokens[j - 1].end
            out.append(Mutant("NEG", a, b, "not (" + text[a:b] + ")", tok.line))


def statement_mutants(tokens, lang, text, out):
    if lang != "c":
        lua_call_deletions(tokens, out)
        return
    depth_paren = 0
    for k, tok in enumerate(tokens):
        t = tok.text
        if t == "(":
            depth_paren += 1
        elif t == ")":
            depth_paren -= 1
        if depth_paren or not statement_start(tokens, k):
            continue
        if t == "return":
            end = k + 1
            while end < len(tokens) and tokens[end].text != ";":
                end += 1
            if end < len(tokens) and end > k + 1 and not (end == k + 2 and tokens[k + 1].kind == "num"):
                out.append(Mutant("SDL", tokens[k + 1].start, tokens[end - 1].end, "0", tok.line))
            continue
        # An expression statement: a call `f(...)`, an assignment `x = `, `a->b = `, `*p = `,
        # `x++`; not a declaration (`T x`, `T *x`).
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        if nxt is None:
            continue
        is_expression = (tok.kind == "id" and tok.text not in C_KEYWORDS and
                         nxt.text in ("(", "=", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>=",
                                      "++", "--", "->", ".", "["))
        is_expression = is_expression or t in ("++", "--") or (t == "*" and nxt.kind == "id")
        if not is_expression:
            continue
        j, depth = k, 0
        while j < len(tokens):
            if tokens[j].text in ("(", "[", "{"):
                depth += 1
            elif tokens[j].text in (")", "]", "}"):
                depth -= 1
                if depth < 0:
                    break
            elif tokens[j].text == ";" and depth == 0:
                break
            j += 1
        if j < len(tokens) and tokens[j].text == ";" and not any(tokens[x].text == "{" for x in range(k, j)):
            out.append(Mutant("SDL", tok.start, tokens[j].end, ";", tok.line))


def lua_call_deletions(tokens, out):
    """Lua: a call statement (`f(...)`, `a.b:c(...)`) alone on its line, deleted."""
    for k, tok in enumerate(tokens):
        prev = tokens[k - 1] if k else None
        if tok.kind != "id" or tok.text in LUA_KEYWORDS:
            continue
        if prev is not None and prev.line == tok.line and prev.text not in (";", "then", "do", "else"):
            continue
        j = k + 1
        while j + 1 < len(tokens) and tokens[j].text in (".", ":") and tokens[j + 1].kind == "id":
            j += 2
        if j >= len(tokens) or tokens[j].text != "(":
            continue
        close = matching(tokens, j)
        if close is None:
            continue
        following = tokens[close + 1] if close + 1 < len(tokens) else None
        if following is None or following.line > tokens[close].line or following.text in (";", "end"):
            out.append(Mutant("SDL", tok.start, tokens[close].end, "", tok.line))


def argument_kind(args):
    if len(args) == 1 and args[0].kind in ("num", "str", "chr"):
        return args[0].kind
    if all(a.kind == "str" for a in args):
        return "str"
    words = [a for a in args if a.text not in (".", "->")]
    if words and all(a.kind == "id" for a in words) and len(words) == (len(args) + 1) // 2 and args[0].kind == "id":
        return "name"
    if len(args) >= 2 and args[0].text == "&" and argument_kind(args[1:]) == "name":
        return "address"
    return None


def swap_mutants(tokens, lang, text, out):
    keywords = C_KEYWORDS if lang == "c" else LUA_KEYWORDS
    for k, tok in enumerate(tokens):
        if tok.kind != "id" or tok.text in keywords or k + 1 >= len(tokens) or tokens[k + 1].text != "(":
            continue
        if lang == "c" and k and (tokens[k - 1].kind == "id" or tokens[k - 1].text == "*"):
            continue  # a declaration or definition, not a call
        if lang == "lua" and k and tokens[k - 1].text == "function":
            continue
        close = matching(tokens, k + 1)
        if close is None:
            continue
        args, current, depth = [], [], 0
        for j in range(k + 2, close):
            t = tokens[j].text
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            if t == "," and depth == 0:
                args.append(current)
                current = []
            else:
                current.append(tokens[j])
        args.append(current)
        for a, b in zip(args, args[1:]):
            if not a or not b:
                continue
            kind = argument_kind(a)
            if kind is None or kind != argument_kind(b):
                continue
            ta, tb = text[a[0].start:a[-1].end], text[b[0].start:b[-1].end]
            if ta == tb:
                continue
            middle = text[a[-1].end:b[0].start]
            out.append(Mutant("SWP", a[0].start, b[-1].end, tb + middle + ta, a[0].line))


def mutants_of(path, text):
    lang = "lua" if path.endswith(".lua") else "c"
    tokens = tokenize(text, lang)
    out = []
    operator_mutants(tokens, lang, out)
    constant_mutants(tokens, lang, out)
    condition_mutants(tokens, lang, text, out)
    statement_mutants(tokens, lang, text, out)
    swap_mutants(tokens, lang, text, out)
    out.sort(key=lambda m: (m.start, m.end, m.cls, m.replacement))
    seen = {}
    for m in out:
        original = text[m.start:m.end]
        m.file = path
        m.change = "%s -> %s" % (short(original), short(m.replacement))
        key = hashlib.sha1(("%s\0%s" % (original, m.replacement)).encode()).hexdigest()
        seen[key] = seen.get(key, 0) + 1
        m.id = hashlib.sha1(("%s\0%d" % (key, seen[key])).encode()).hexdigest()[:10]
    return out


def short(s):
    s = " ".join(s.split())
    return "`%s`" % (s if len(s) <= 60 else s[:28] + " ... " + s[-28:])


def in_ranges(line, ranges):
    return not ranges or any(a <= line <= b for a, b in ranges)


def main(argv):
    parser = argparse.ArgumentParser(description="systematic mutants (see the file's docstring)")
    parser.add_argument("command", choices=["sample", "count"])
    parser.add_argument("-n", type=int, default=0, help="how many to draw (0: all)")
    parser.add_argument("-s", type=int, default=1, help="the seed")
    parser.add_argument("-o", default="mutants", help="output directory")
    parser.add_argument("--lines", action="append", default=[], help="A-B: only these lines")
    parser.add_argument("--ids", help="a file: the mutants whose ids start its lines, all of them")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv[1:])
    ranges = [tuple(int(x) for x in r.split("-")) for r in args.lines]
    texts, every = {}, []
    for path in args.files:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            texts[path] = f.read()
        every += [m for m in mutants_of(path, texts[path]) if in_ranges(m.line, ranges)]
    if args.command == "count":
        for path in args.files:
            per_class = {}
            for m in every:
                if m.file == path:
                    per_class[m.cls] = per_class.get(m.cls, 0) + 1
            print("%s: %d (%s)" % (path, sum(per_class.values()),
                                   ", ".join("%s %d" % kv for kv in sorted(per_class.items()))))
        return 0
    if args.ids:
        with open(args.ids) as f:
            wanted = {line.split()[0] for line in f if line.strip() and not line.startswith("#")}
        every = [m for m in every if m.id in wanted]
    chosen = every if args.ids or args.n <= 0 or args.n >= len(every) else random.Random(args.s).sample(every, args.n)
    chosen.sort(key=lambda m: (args.files.index(m.file), m.start))
    os.makedirs(args.o, exist_ok=True)
    with open(os.path.join(args.o, "index.tsv"), "w") as index:
        for number, m in enumerate(chosen, 1):
            text = texts[m.file]
            mutated = text[:m.start] + m.replacement + text[m.end:]
            ext = os.path.splitext(m.file)[1]
            with open(os.path.join(args.o, "%d%s" % (number, ext)), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(mutated)
            diff = difflib.unified_diff(text.splitlines(True), mutated.splitlines(True), m.file, m.file, n=0)
            with open(os.path.join(args.o, "%d.diff" % number), "w", encoding="utf-8", errors="surrogateescape") as f:
                f.writelines(list(diff)[2:])
            index.write("%d\t%s\t%d\t%s\t%s\t%s\n" % (number, m.file, m.line, m.cls, m.id, m.change))
    print("%d mutants of %d drawn (seed %d)" % (len(chosen), len(every), args.s))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
