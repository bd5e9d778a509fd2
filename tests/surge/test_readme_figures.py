#!/usr/bin/env python3
"""The README's fidelity figures, regenerated: the table marked
`<!-- fidelity-table: COMMAND -->` in README.md is what COMMAND printed.
This regenerates the subsets asked (DR and BG by default, what CI can
afford; `tc` under a long label: every item, two repeats) as the README's
command does (each group where its version is closest to SURGE's: the host
or the build's surge-2025; TC's Python version does not show in its
references, so TC runs on the host, with or without the profile) and
compares every row of those subsets: exact and normalized counts (within the row's
nondeterministic items, whose output legitimately changes between runs),
ran, missing, and which toolchains ran the row.

A row whose toolchains differ here (a machine without pyenv's Python 3.8
runs BG python3 on Debian 11's 3.9) is not comparable: it is printed with
both environments, and the test fails only if no row at all could be
compared (then SKIPPED says why).

  test_readme_figures.py SRC_DIR BIN_DIR DATA_DIR [SUBSETS]   (SUBSETS: dr,bg by default)
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_regen as tr  # noqa: E402

SUBSETS = ("dr", "bg")  # the default; argv[4] names others (tc)
PROFILE_SUBSETS = ("dr", "bg")  # groups surge-2025 runs (g++-9, clang, JDK 11, Python 3.8/3.9)
ROW = re.compile(r"^\|\s*(?:&nbsp;)*\s*([A-Z]{2})(?:\s+([^|\s][^|]*?))?\s*\|(.*)\|\s*$")


def readme_table(src):
    """{(subset, group or None): {column: value}} and the command, from the
    table after the fidelity-table marker."""
    text = open(os.path.join(src, "README.md")).read()
    m = re.search(r"<!-- fidelity-table: (.*?) -->\n", text)
    if not m:
        tr.check(False, "README.md has no <!-- fidelity-table: COMMAND --> marker")
        return None, {}
    lines = text[m.end():].splitlines()
    header, rows = None, {}
    for line in lines:
        if not line.startswith("|"):
            if header:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set(cells[0]) <= set("-: "):
            continue
        r = ROW.match(line)
        if not r:
            continue
        subset, group = r.group(1).lower(), r.group(2)
        rows[(subset, group)] = dict(zip(header[1:], cells[1:]))
    return m.group(1), rows


def main():
    global SUBSETS
    src, bin_dir, data = sys.argv[1:4]
    if len(sys.argv) > 4:
        SUBSETS = tuple(sys.argv[4].split(","))
    data = os.environ.get("SURGE_DATA", data)
    if not os.path.exists(os.path.join(data, "dr.json")):
        print(f"SKIPPED: the SURGE data is not at {data} (set SURGE_DATA)")
        sys.exit(tr.SKIP)
    if os.geteuid() != 0:
        print("SKIPPED: regeneration tests run as root")
        sys.exit(tr.SKIP)
    command, rows = readme_table(src)
    if not rows:
        tr.check(False, "README.md's fidelity table has no rows")
        sys.exit(1)
    print("README's command:", command)
    if not any((subset, None) in rows for subset in SUBSETS):  # not measured yet: nothing to compare
        print(f"SKIPPED: README.md's fidelity table has no row for {', '.join(SUBSETS)} yet: measure it with "
              f"`surgebox regen --data ../shared/surge --subset {','.join(SUBSETS)} --repeat 2` (each group where "
              "the README's command runs it) and add the row")
        sys.exit(tr.SKIP)
    if any(s in PROFILE_SUBSETS for s in SUBSETS) and not tr.profile_ready(bin_dir):
        print("SKIPPED: the build's surge-2025 profile is missing (profiles.surge-2025 creates it); "
              "the README's figures were measured with it")
        sys.exit(tr.SKIP)
    out = tempfile.mkdtemp(prefix="sbreadme-")
    d = tr.start_daemon(bin_dir, out)
    try:
        s = tr.regen(bin_dir, data, out, ",".join(SUBSETS), extra=["--repeat", "2"])
    finally:
        d.terminate()
        d.wait(timeout=300)
    compared, differ = 0, []
    for (subset, group), want in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if subset not in SUBSETS:
            continue
        got = s[subset] if group is None else s[subset]["by"].get(group)
        name = subset.upper() + (" " + group if group else "")
        if got is None:
            tr.check(False, f"{name}: the README has the row, the regeneration has no such group")
            continue
        ran_with = got.get("toolchains") or "-"
        if want.get("toolchains", "") != ran_with:
            differ.append(f"{name}: README measured it with {want.get('toolchains')}, here {ran_with}")
            continue
        compared += 1
        slack = max(int(want["nondeterministic"]), got["nondeterministic"])
        for col in ("n", "ran", "missing toolchain"):
            key = "missing_toolchain" if col == "missing toolchain" else col
            tr.check(int(want[col]) == got[key], f"{name} {col}: README {want[col]}, regenerated {got[key]}")
        for col in ("exact", "normalized"):
            tr.check(abs(int(want[col]) - got[col]) <= slack,
                     f"{name} {col}: README {want[col]}, regenerated {got[col]} (nondeterministic: {slack})")
        print(f"compared {name}: exact {got['exact']} (README {want['exact']}), normalized {got['normalized']} "
              f"(README {want['normalized']}), toolchains {ran_with}")
    for line in differ:
        print("not comparable:", line)
    if not compared:
        print("SKIPPED: no README row ran with the same toolchains here: " + "; ".join(differ))
        sys.exit(tr.SKIP)
    if tr.failures:
        sys.exit(1)
    print(f"PASS ({compared} rows compared, {len(differ)} not comparable here)")


if __name__ == "__main__":
    main()
