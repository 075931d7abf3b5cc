#!/usr/bin/env python3
"""scripts/mutate/patches.py -- hand-written mutants, for mutate.sh -p: bugs planted by a person
(someone who did not write the tests, for an independent sample), each a patch, judged exactly as
mutants.py's are.

  patches.py -o OUTDIR DIR
      Each DIR/*.patch (a unified diff of ONE file against the tree, as `git diff` writes it;
      run from the tree's root) applied with `patch -p1` to a copy: OUTDIR/index.tsv (number,
      file, the changed lines of the original as A,B,..., class HAND, id: the patch's name,
      change: the first line of DIR/<name>.txt, the bug as its author described it) and, per
      mutant, OUTDIR/<number>.<ext> (the whole mutated file) and OUTDIR/<number>.diff. A patch
      that touches no file or several, or does not apply, is refused with its name: a sample must
      not shrink silently.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def target_and_lines(patch_text, name):
    """The one file a patch changes, and the original's lines it changes (for an insertion, the
    lines either side of it: the tests that executed those are the ones that pass through it)."""
    targets = [line[4:].split("\t")[0].strip() for line in patch_text.splitlines() if line.startswith("+++ ")]
    if len(targets) != 1 or not targets[0].startswith("b/"):
        raise SystemExit("patches.py: %s: a patch must change exactly one file (found %d)" % (name, len(targets)))
    lines, original = set(), None
    for line in patch_text.splitlines():
        m = HUNK.match(line)
        if m:
            original = int(m.group(1)) if m.group(2) != "0" else int(m.group(1)) + 1
            continue
        if original is None or line.startswith(("--- ", "+++ ", "\\")):
            continue
        if line.startswith("-"):
            lines.add(original)
            original += 1
        elif line.startswith("+"):
            lines.update(n for n in (original - 1, original) if n > 0)
        else:
            original += 1
    if not lines:
        raise SystemExit("patches.py: %s: the patch changes no line" % name)
    return targets[0][2:], sorted(lines)


def description(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError:
        return "(no description)"
    return " ".join(first.split()) or "(no description)"


def main(argv):
    parser = argparse.ArgumentParser(description="hand-written mutants (see the file's docstring)")
    parser.add_argument("-o", required=True, help="output directory")
    parser.add_argument("dir", help="the directory of *.patch files")
    args = parser.parse_args(argv[1:])
    names = sorted(n[:-len(".patch")] for n in os.listdir(args.dir) if n.endswith(".patch"))
    if not names:
        raise SystemExit("patches.py: %s: no *.patch file" % args.dir)
    os.makedirs(args.o, exist_ok=True)
    with open(os.path.join(args.o, "index.tsv"), "w") as index, tempfile.TemporaryDirectory() as scratch:
        for number, name in enumerate(names, 1):
            patch = os.path.join(args.dir, name + ".patch")
            with open(patch, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
            rel, lines = target_and_lines(text, name)
            if not os.path.isfile(rel):
                raise SystemExit("patches.py: %s: %s is not a file of the tree" % (name, rel))
            out = os.path.join(args.o, "%d%s" % (number, os.path.splitext(rel)[1]))
            # patch -o writes the result elsewhere and leaves the tree alone; its rejects go to
            # the scratch directory, not beside the file.
            done = subprocess.run(["patch", "-s", "-p1", "-N", "-o", out, "-r", os.path.join(scratch, "rej"), "-i",
                                   os.path.abspath(patch)], capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit("patches.py: %s does not apply to %s:\n%s" % (name, rel, done.stdout + done.stderr))
            shutil.copyfile(patch, os.path.join(args.o, "%d.diff" % number))
            change = description(os.path.join(args.dir, name + ".txt")).replace("\t", " ")
            index.write("%d\t%s\t%s\tHAND\t%s\t%s\n" % (number, rel, ",".join(map(str, lines)), name, change))
    print("%d mutants of %d drawn (hand-written, %s)" % (len(names), len(names), args.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
