#!/usr/bin/env python3
"""The pure parts of the freshroot test (label unit): compare.py finds every
kind of difference between two regenerations and only those, and debroot.py
takes the mirrors from apt's configuration as apt_mirror.c does."""
import copy
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import debroot  # noqa: E402

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def block(exact, substituted):
    return {"n": 2, "ran": 2, "exact": exact, "normalized": 2, "jaccard_mean": 1.0, "missing_toolchain": 0,
            "nondeterministic": 0, "environment": "host", "substituted": substituted}


SUMMARY = {"bg": dict(block(2, "java 17.0.21.1 (SURGE: JDK 11-15)"), internal_error=0,
                      mismatches={"toolchain_drift": [], "other": []},
                      by={"java": block(1, "java 17.0.21.1 (SURGE: JDK 11-15)"), "python3": block(1, None)})}


def item(gt, toolchain="python3", version="3.11.2"):
    return {"gt": gt, "exec": {"status": "ok", "regenerated": True, "matched": "exact", "class": None,
                               "toolchain": {"name": toolchain, "version": version}, "profile": {"name": "host"}}}


ITEMS = [item("a\n"), {"gt": "not run"}, item("c\n")]


def write(d, summary, items):
    os.makedirs(d)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)
    with open(os.path.join(d, "bg.json"), "w") as f:
        json.dump(items, f)
    return d


def diffs(top, name, summary, items):
    host = os.path.join(top, "host")
    if not os.path.exists(host):
        write(host, SUMMARY, ITEMS)
    return compare.compare_runs(host, write(os.path.join(top, name), summary, items), ["bg"])


def test_compare(top):
    d, n = diffs(top, "same", SUMMARY, ITEMS)
    check(d == [] and n == [], f"equal runs: no difference ({d} {n})")

    items = copy.deepcopy(ITEMS)
    items[2]["gt"] = "C\n"
    d, _ = diffs(top, "gt", SUMMARY, items)
    check(len(d) == 1 and d[0].startswith("bg[2] gt:"), f"an item's output differs: {d}")

    items = copy.deepcopy(ITEMS)
    items[1] = item("b\n")
    d, _ = diffs(top, "extra", SUMMARY, items)
    check(d == ["bg[1]: regenerated in root only"], f"an item ran on one side only: {d}")

    s = copy.deepcopy(SUMMARY)
    s["bg"]["by"]["python3"]["exact"] = 0
    s["bg"]["mismatches"]["toolchain_drift"] = [2]
    s["bg"]["internal_error"] = 1
    d, _ = diffs(top, "counts", s, ITEMS)
    check(any(x.startswith("bg/python3: exact host 1 root 0") for x in d)
          and any("mismatches toolchain_drift" in x for x in d)
          and any(x.startswith("bg: internal_error host 0 root 1") for x in d), f"counts and classes: {d}")

    s = copy.deepcopy(SUMMARY)
    s["bg"]["by"]["java"]["substituted"] = s["bg"]["substituted"] = "java 17.0.22 (SURGE: JDK 11-15)"
    items = copy.deepcopy(ITEMS)
    items[0]["exec"]["toolchain"]["version"] = "3.11.9"
    d, n = diffs(top, "point", s, items)
    check(d == [] and len(n) == 3, f"a point release is a note, not a difference: {d} {n}")

    s = copy.deepcopy(SUMMARY)
    s["bg"]["by"]["python3"]["substituted"] = "python3 3.11.2 (SURGE: Python 3.8)"
    del s["bg"]["by"]["java"]
    items = copy.deepcopy(ITEMS)
    items[0]["exec"]["toolchain"]["name"] = "python3.8"
    d, _ = diffs(top, "named", s, items)
    check(any(x.startswith("bg/python3: substituted host null") for x in d)
          and "bg/java: group in host only" in d and any(x.startswith("bg[0] toolchain:") for x in d),
          f"a substitution, a group and a toolchain named differently: {d}")

    # GCC's temporary object names differ on every machine: not a difference
    h = copy.deepcopy(ITEMS)
    items = copy.deepcopy(ITEMS)
    h[2]["gt"] = "/usr/bin/ld: /tmp/ccKgDGJl.o: in function `main':\n"
    items[2]["gt"] = "/usr/bin/ld: /tmp/ccWSyrzm.o: in function `main':\n"
    d, _ = compare.compare_runs(write(os.path.join(top, "tmpnames-host"), SUMMARY, h),
                                write(os.path.join(top, "tmpnames"), SUMMARY, items), ["bg"])
    check(d == [], f"GCC's random temporary names are masked: {d}")
    items[2]["gt"] = "/usr/bin/ld: /tmp/ccWSyrzm.o: in function `other':\n"
    d, _ = compare.compare_runs(os.path.join(top, "tmpnames-host"), write(os.path.join(top, "tmpnames2"), SUMMARY, items),
                                ["bg"])
    check(len(d) == 1 and d[0].startswith("bg[2] gt:"), f"but the rest of the output still counts: {d}")

    # clang's temporary names too; an item nondeterministic in both runs: its output is not compared
    h = copy.deepcopy(ITEMS)
    items = copy.deepcopy(ITEMS)
    h[0]["gt"] = "/usr/bin/ld: /tmp/test-0936ff.o: in function `main':\n"
    items[0]["gt"] = "/usr/bin/ld: /tmp/test-f3351c.o: in function `main':\n"
    h[2]["gt"], items[2]["gt"] = "558e7fa30ee0\n", "55bfadf9cee0\n"
    h[2]["exec"]["deterministic"] = items[2]["exec"]["deterministic"] = False
    d, _ = compare.compare_runs(write(os.path.join(top, "nondet-host"), SUMMARY, h),
                                write(os.path.join(top, "nondet"), SUMMARY, items), ["bg"])
    check(d == [], f"clang's temporary names masked, nondeterministic outputs not compared: {d}")
    items[2]["exec"]["deterministic"] = True
    d, _ = compare.compare_runs(os.path.join(top, "nondet-host"), write(os.path.join(top, "nondet2"), SUMMARY, items),
                                ["bg"])
    check(any(x.startswith("bg[2] gt:") for x in d), f"nondeterministic in one run only: compared: {d}")

    # this host's pyenv 3.8 against a fresh machine's 3.9 in surge-2025, named there: explained, not failed
    s = copy.deepcopy(SUMMARY)
    s["bg"]["by"]["python3"]["exact"] = 0
    s["bg"]["exact"] = 1
    s["bg"]["by"]["python3"]["substituted"] = "python3 3.9.2 (SURGE: Python 3.8)"
    s["bg"]["mismatches"]["toolchain_drift"] = [0]
    items = copy.deepcopy(ITEMS)
    items[0]["gt"] = "A 3.9 traceback\n"
    items[0]["exec"].update(toolchain={"name": "python3", "version": "3.9.2"}, profile={"name": "surge-2025"},
                            matched="no", substituted={"used": "python3 3.9.2", "surge": "Python 3.8"},
                            group="python3")
    d, n = diffs(top, "explained", s, items)
    check(d == [] and any(x.startswith("bg[0] gt:") and "named" in x for x in n)
          and any(x.startswith("bg/python3: exact host 1 root 0 (explained") for x in n),
          f"another toolchain, named: notes, not differences: {d} {n}")
    # the same change of toolchain without anyone naming it fails
    del items[0]["exec"]["substituted"]
    d, _ = diffs(top, "unnamed", s, items)
    check(any(x.startswith("bg[0] gt:") for x in d) and any(x.startswith("bg/python3: exact") for x in d),
          f"another toolchain, not named: differences: {d}")


def test_mirrors(top):
    etc = os.path.join(top, "apt")
    os.makedirs(os.path.join(etc, "sources.list.d"))
    with open(os.path.join(etc, "sources.list.d", "a.sources"), "w") as f:
        f.write("Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n\n"
                "Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\n")
    with open(os.path.join(etc, "sources.list.d", "b.list"), "w") as f:
        f.write("# deb http://commented.example/debian bookworm main\n"
                "deb [arch=amd64 signed-by=/k.gpg] http://main.example/debian bookworm main\n")
    check(debroot.mirrors(etc) == ("http://main.example/debian", "http://sec.example/debian-security"),
          f"mirrors: deb822 and one-line sources, deb-src and comments skipped: {debroot.mirrors(etc)}")
    check(debroot.mirrors(os.path.join(top, "none")) == (None, None), "no apt configuration: no mirror")
    lines = debroot.sources_list("http://m/debian", None).splitlines()
    check(lines == ["deb http://m/debian bookworm main", "deb http://m/debian bookworm-updates main"],
          f"sources.list without a security archive: {lines}")


def main():
    with tempfile.TemporaryDirectory() as top:
        test_compare(top)
        test_mirrors(top)
    print(f"{len(failures)} failure(s)" if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
