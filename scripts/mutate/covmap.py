#!/usr/bin/env python3
"""scripts/mutate/covmap.py -- the coverage map: which ctest tests executed each source line.

coverage.sh runs every test alone in a --coverage build and pipes gcov's JSON for that one test
into `collect`; `merge` joins the per-test records into one map; mutate.sh asks `tests` which tests
executed a mutant's line. Python 3 standard library only.

  covmap.py list BUILD                   the build's ctest tests: name TAB command, one a line
  covmap.py collect SRC OUT TARGET...   gcov --json-format --stdout on stdin -> OUT (one test)
  covmap.py merge SRC WORKDIR MAP        WORKDIR/coverage/{tests.txt,<test>.cov} -> MAP
  covmap.py tests MAP FILE LINE          the tests that cover FILE:LINE, one a line (exit 3: none)
  covmap.py judges MAP INDEX             for the index of mutants.py or patches.py: number, tests (fastest first), targets
  covmap.py limits MAP                   test names on stdin -> "name seconds targets": how long
                                         each may run, what it needs built
  covmap.py summary MAP [FILE...]        per file: instrumented lines, covered lines, tests

The map (a text file):
  # header lines
  T <n> <test name> <status> <seconds> <targets,comma,separated>   one per test run
  F <file> <sha1 of the text the map was made from>                one per source file mapped
  <file>:<line> <n> <n> ...   an instrumented line and the tests (their numbers) that executed it;
                              no numbers: instrumented, executed by none
  <file>:* <n> ...            a file mapped as a whole (Lua examples: by the tests that name it)
A line gcov does not instrument (a declaration, the middle of a statement split over lines, an
initializer) is judged by every test that executed some line of its file: `tests` says so.
"""
import hashlib
import json
import os
import re
import sys

MAPPED_DIRS = ("engine/", "examples/")


def read_gcov_json(stream):
    """gcov --stdout writes one JSON document per data file, one after another."""
    text = stream.read()
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return
        doc, pos = decoder.raw_decode(text, pos)
        yield doc


def relative_source(path, src, cwd):
    full = os.path.normpath(os.path.join(cwd, path))
    if not full.startswith(src + os.sep):
        return None
    rel = full[len(src) + 1:]
    return rel if rel.startswith(MAPPED_DIRS) else None


def collect(src, out, targets):
    src = os.path.realpath(src)
    executed, instrumented = {}, {}
    for doc in read_gcov_json(sys.stdin):
        cwd = doc.get("current_working_directory", "/")
        for record in doc.get("files", []):
            rel = relative_source(record["file"], src, cwd)
            if rel is None:
                continue
            for line in record.get("lines", []):
                number = line["line_number"]
                instrumented.setdefault(rel, set()).add(number)
                if line["count"] > 0:
                    executed.setdefault(rel, set()).add(number)
    with open(out, "w") as f:
        f.write("targets %s\n" % ",".join(sorted(set(targets)) or ["-"]))
        for rel in sorted(instrumented):
            f.write("I %s %s\n" % (rel, ",".join(map(str, sorted(instrumented[rel])))))
        for rel in sorted(executed):
            f.write("X %s %s\n" % (rel, ",".join(map(str, sorted(executed[rel])))))


def sha1_of(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


REQUIRE = re.compile(r"""\brequire\s*\(?\s*["']([\w.]+)["']""")


def lua_examples_named(src, test_commands):
    """examples/*.lua by test: a test covers an example it names (NAME.lua) or requires
    (require "NAME") on its command line or in its own script (tests/sh, tests/lua), and every
    example those require, transitively (mlp.lua requires nn, nn requires nn_gemm: a test of
    mlp.lua runs all three). Lua lines are not traced: the whole file is mapped."""
    covered = {}
    examples = sorted(f for f in os.listdir(os.path.join(src, "examples")) if f.endswith(".lua"))
    requires = {}  # example -> the examples its text requires
    for example in examples:
        with open(os.path.join(src, "examples", example), errors="replace") as f:
            names = REQUIRE.findall(f.read())
        requires[example] = {n + ".lua" for n in names if n + ".lua" in examples}
    for name, command in test_commands.items():
        text = command
        for word in command.split():
            if word.startswith(src) and os.path.isfile(word) and not word.endswith((".so",)):
                try:
                    with open(word, errors="replace") as f:
                        text += f.read()
                except OSError:
                    pass
        reached = {e for e in examples if re.search(r"(^|[^\w])%s\b" % re.escape(e), text)}
        reached |= {n + ".lua" for n in REQUIRE.findall(text) if n + ".lua" in examples}
        todo = list(reached)
        while todo:
            for more in requires[todo.pop()] - reached:
                reached.add(more)
                todo.append(more)
        for example in reached:
            covered.setdefault("examples/" + example, set()).add(name)
    return covered


def merge(src, work, out):
    src = os.path.realpath(src)
    tests = []  # (name, status, seconds, command)
    with open(os.path.join(work, "coverage", "tests.txt")) as f:
        for line in f:
            name, status, seconds, command = line.rstrip("\n").split("\t")
            tests.append((name, status, seconds, command))
    number = {name: i for i, (name, _, _, _) in enumerate(tests)}
    lines, targets = {}, {}
    for name, _, _, _ in tests:
        cov = os.path.join(work, "coverage", name + ".cov")
        if not os.path.exists(cov):
            continue
        with open(cov) as f:
            for record in f:
                kind, rest = record.rstrip("\n").split(" ", 1)
                if kind == "targets":
                    targets[name] = rest
                    continue
                rel, numbers = rest.split(" ")
                per_file = lines.setdefault(rel, {})
                for n in map(int, numbers.split(",")):
                    per_line = per_file.setdefault(n, set())
                    if kind == "X":
                        per_line.add(number[name])
    lua = lua_examples_named(src, {name: command for name, _, _, command in tests})
    with open(out, "w") as f:
        f.write("# coverage map, scripts/mutate/coverage.sh: which tests executed each line\n")
        for i, (name, status, seconds, _) in enumerate(tests):
            f.write("T %d %s %s %s %s\n" % (i, name, status, seconds, targets.get(name, "-")))
        for rel in sorted(set(lines) | set(lua)):
            if os.path.exists(os.path.join(src, rel)):
                f.write("F %s %s\n" % (rel, sha1_of(os.path.join(src, rel))))
        for rel in sorted(lines):
            for n in sorted(lines[rel]):
                f.write("%s:%d%s\n" % (rel, n, "".join(" %d" % t for t in sorted(lines[rel][n]))))
        for rel in sorted(lua):
            f.write("%s:*%s\n" % (rel, "".join(" %d" % number[t] for t in sorted(lua[rel], key=number.get))))


class CoverageMap:
    RUNTIME_COMPILERS = ("engine/core/compile/cxx.c", "engine/core/compile/nvrtc_job.c")

    def __init__(self, path):
        self.tests, self.sha1, self.lines, self.targets, self.status = [], {}, {}, {}, {}
        self.seconds = {}
        with open(path) as f:
            for record in f:
                if record.startswith("#"):
                    continue
                if record.startswith("T "):
                    _, _, name, status, seconds, targets = record.split()
                    self.tests.append(name)
                    self.seconds[name] = int(seconds)
                    self.status[name] = status
                    self.targets[name] = [] if targets == "-" else targets.split(",")
                elif record.startswith("F "):
                    _, rel, digest = record.split()
                    self.sha1[rel] = digest
                else:
                    words = record.split()
                    rel, line = words[0].rsplit(":", 1)
                    key = 0 if line == "*" else int(line)
                    self.lines.setdefault(rel, {})[key] = [self.tests[int(w)] for w in words[1:]]

    def covering(self, rel, line):
        """(tests, how): the tests that executed the line, and whether that is exact."""
        per_file = self.lines.get(rel, {})
        if not per_file and rel.startswith("kernels_src/"):
            # The device headers are embedded in the library and compiled at run time (by the
            # C++ compiler for the CPU device, by NVRTC for a GPU), where gcov does not see them:
            # they are judged by every test that compiled a kernel either way.
            users = set()
            for compiler in self.RUNTIME_COMPILERS:
                users.update(t for tests in self.lines.get(compiler, {}).values() for t in tests)
            return sorted(users, key=self.tests.index), "file"
        if 0 in per_file:
            return per_file[0], "file"
        if line in per_file:
            return per_file[line], "line"
        anywhere = sorted({t for tests in per_file.values() for t in tests}, key=self.tests.index)
        return anywhere, "file"

    def limit(self, name):
        """A mutant's test may run three times as long as the coverage build's (-O0, counting)
        run, and a minute more: past that it hangs, and is killed."""
        return 60 + 3 * self.seconds.get(name, 60)


def list_tests(build):
    import subprocess
    shown = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                           check=True, capture_output=True, text=True).stdout
    for test in json.loads(shown).get("tests", []):
        print("%s\t%s" % (test["name"], " ".join(test.get("command", []))))


def judges(map_path, index_path):
    cmap = CoverageMap(map_path)
    with open(index_path) as index:
        for record in index:
            number, rel, lines = record.split("\t")[:3]
            tests = set()  # a hand-written mutant (patches.py) changes several lines: A,B,...
            for line in lines.split(","):
                tests.update(cmap.covering(rel, int(line))[0])
            tests = sorted(tests, key=lambda t: (cmap.seconds.get(t, 0), t))
            targets = sorted({x for t in tests for x in cmap.targets.get(t, [])})
            print("%s\t%s\t%s" % (number, ",".join(tests), ",".join(targets)))


def main(argv):
    if len(argv) == 3 and argv[1] == "list":
        list_tests(argv[2])
    elif len(argv) >= 4 and argv[1] == "collect":
        collect(argv[2], argv[3], argv[4:])
    elif len(argv) == 5 and argv[1] == "merge":
        merge(argv[2], argv[3], argv[4])
    elif len(argv) == 5 and argv[1] == "tests":
        tests, _ = CoverageMap(argv[2]).covering(argv[3], int(argv[4]))
        print("\n".join(tests))
        return 0 if tests else 3
    elif len(argv) == 4 and argv[1] == "judges":
        judges(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "limits":
        cmap = CoverageMap(argv[2])
        for name in sys.stdin.read().split():
            print("%s %d %s" % (name, cmap.limit(name), ",".join(cmap.targets.get(name, [])) or "-"))
    elif len(argv) >= 3 and argv[1] == "summary":
        cmap = CoverageMap(argv[2])
        for rel in argv[3:] or sorted(cmap.lines):
            per_file = cmap.lines.get(rel, {})
            covered = sum(1 for tests in per_file.values() if tests)
            users = {t for tests in per_file.values() for t in tests}
            print("%s: %d of %d instrumented lines executed, by %d tests" %
                  (rel, covered, len(per_file), len(users)))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
