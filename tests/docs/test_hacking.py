#!/usr/bin/env python3
"""The developers' map (issue 40): HACKING.md at most 15 KB (15,000 bytes), and every
relative link in it and in docs/architecture/*.md resolving (files and
headings, test_readme.py's check). Before the tree, the check is shown to
catch a link to a missing file and to a missing heading.

  test_hacking.py SRC_DIR"""
import contextlib
import glob
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_readme  # noqa: E402  (check_links, failures)

MAX_BYTES = 15 * 1000


def selftest():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "a.md"), "w") as f:
            f.write("# Here\n[ok](a.md#here) [gone](b.md) [no heading](a.md#there)\n")
        with contextlib.redirect_stdout(io.StringIO()):
            n = test_readme.check_links(d, [os.path.join(d, "a.md")])
    bad = list(test_readme.failures)
    test_readme.failures.clear()
    if n != 3 or len(bad) != 2:
        print("FAIL: the link check itself: %d links, failures %r (want 3 links, 2 failures)" % (n, bad))
        return False
    return True


def main():
    src = sys.argv[1]
    if not selftest():
        return 1
    hacking = os.path.join(src, "HACKING.md")
    size = os.path.getsize(hacking)
    test_readme.check(size <= MAX_BYTES, "HACKING.md is %d bytes (at most %d)" % (size, MAX_BYTES))
    pages = sorted(glob.glob(os.path.join(src, "docs", "architecture", "*.md")))
    test_readme.check(len(pages) > 0, "docs/architecture/ has pages")
    n = test_readme.check_links(src, [hacking] + pages)
    print("%d relative links checked" % n)
    return 1 if test_readme.failures else 0


if __name__ == "__main__":
    sys.exit(main())
