#!/usr/bin/env python3
"""Run the ```python blocks of a Markdown file, in order, in one namespace
(later examples may use earlier names); a ```text block right after a
python block is that block's exact standard output.

Usage: readme_examples.py README.md [PACKAGE_DIR_PREFIX]
With a prefix, `surgebox` must be imported from under it (an installed
copy, not the source tree). Exit 1 at the first block that fails."""
import contextlib
import io
import sys
import traceback


def blocks(text):
    """[(language, code, first line number)] of the fenced blocks."""
    out, lang, buf, start = [], None, [], 0
    for n, line in enumerate(text.splitlines(True), 1):
        if line.startswith("```"):
            if lang is None:
                lang, buf, start = line[3:].strip() or "-", [], n + 1
            else:
                out.append((lang, "".join(buf), start))
                lang = None
        elif lang is not None:
            buf.append(line)
    if lang is not None:
        raise SystemExit("unclosed ``` block from line %d" % start)
    return out


def main():
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        found = blocks(f.read())
    ns = {"__name__": "__readme__"}
    ran = checked = 0
    for k, (lang, code, line) in enumerate(found):
        if lang != "python":
            continue
        want = found[k + 1][1] if k + 1 < len(found) and found[k + 1][0] == "text" else None
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, "%s:%d" % (path, line), "exec"), ns)
        except Exception:
            print("FAIL: the example at %s:%d raised:\n%s" % (path, line, traceback.format_exc()))
            return 1
        ran += 1
        print("ran the example at line %d" % line)
        sys.stdout.write("".join("  | " + x + "\n" for x in out.getvalue().splitlines()))
        if want is not None:
            checked += 1
            if out.getvalue() != want:
                print("FAIL: the example at %s:%d printed %r, the README says %r" % (path, line, out.getvalue(), want))
                return 1
        if len(sys.argv) > 2 and "surgebox" in sys.modules:
            where = sys.modules["surgebox"].__file__
            if not where.startswith(sys.argv[2]):
                print("FAIL: surgebox was imported from %s, not from under %s" % (where, sys.argv[2]))
                return 1
    if ran == 0:
        print("FAIL: no ```python block in %s" % path)
        return 1
    print("%d examples ran, %d outputs as the README shows" % (ran, checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
