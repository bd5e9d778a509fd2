#!/usr/bin/env python3
"""The README's quick starts in a fresh clone (issue 26), as a new user
follows them: `git clone` of the tree's HEAD into a scratch directory, the
build by the README's own cmake lines (its "Install to use" block, without
the lines that need sudo; build/bin then on PATH as it says), then every
command and example of the clone's README run by the clone's own
tests/docs/test_readme.py with no daemon running (the client starts its
private one), the Python client pip-installed into a venv without `wheel`,
the CRUXEval smoke test (`verify --samples 0,1,2`) and `surgebox report`,
whose page is then opened in Debian's headless chromium
(tests/surge/headless.py): no console error, a screenshot.

  test_quickstart.py SRC_DIR SURGE_DATA CRUXEVAL_DATA SHOT_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(why):
    print("SKIPPED: " + why)
    sys.exit(SKIP)


def install_lines(readme):
    """The cmake lines of the README's "Install to use" block, as shown."""
    text = open(readme).read()
    sec = text[text.index("## Install to use"):]
    block = re.search(r"```sh\n(.*?)```", sec, re.S).group(1)
    return [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()
            if line.strip() and not line.startswith("sudo ")]


def main():
    src, surge, cruxeval, shots = sys.argv[1:5]
    if not shutil.which("git"):
        skip("git is not installed")
    if not os.path.exists(os.path.join(surge, "dr.json")) or not os.path.exists(cruxeval):
        skip(f"the README's quick starts need the SURGE data ({surge}) and CRUXEval ({cruxeval})")
    sys.path.insert(0, os.path.join(src, "tests", "surge"))
    import headless
    if not headless.available():
        skip("no chromium to open the report in (apt-get install chromium)")
    t0 = time.monotonic()
    top = tempfile.mkdtemp(prefix="sbquick-")
    clone = os.path.join(top, "surgebox")
    try:
        head = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        p = subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", src, clone], capture_output=True, text=True)
        check(p.returncode == 0, f"git clone ({p.stderr[-300:]})")
        p = subprocess.run(["git", "-C", clone, "checkout", "--quiet", "--detach", head], capture_output=True, text=True)
        check(p.returncode == 0, f"checkout of HEAD {head[:12]} ({p.stderr[-300:]})")
        if failures:
            sys.exit(1)
        # the benchmark data beside the clone, where the README expects it
        os.makedirs(os.path.join(top, "shared"))
        os.symlink(surge, os.path.join(top, "shared", "surge"))
        os.symlink(os.path.dirname(cruxeval), os.path.join(top, "shared", "cruxeval"))
        lines = install_lines(os.path.join(clone, "README.md"))
        check(any(line.startswith("cmake -S") for line in lines), f"the README's build lines: {lines}")
        for line in lines:
            t = time.monotonic()
            p = subprocess.run(["bash", "-c", line], cwd=clone, capture_output=True, text=True, timeout=3600)
            check(p.returncode == 0, f"`{line}` exits 0 in {time.monotonic() - t:.0f} s ({p.stderr[-800:]})")
        bin_dir = os.path.join(clone, "build", "bin")
        check(all(os.access(os.path.join(bin_dir, b), os.X_OK) for b in ("surgebox", "surgeboxd", "surgebox-run")),
              "build/bin has surgebox, surgeboxd and surgebox-run")
        if failures:
            sys.exit(1)
        report = os.path.join(top, "report.html")
        env = dict(os.environ, SURGEBOX_DOCS_AUTOSTART="1", SURGEBOX_DOCS_NO_WHEEL="1", SURGEBOX_DOCS_KEEP=report)
        t = time.monotonic()
        p = subprocess.run([sys.executable, os.path.join(clone, "tests", "docs", "test_readme.py"), clone, bin_dir,
                            os.path.join(top, "shared", "surge"), os.path.join(top, "shared", "cruxeval", "cruxeval.jsonl")],
                           env=env, capture_output=True, text=True, timeout=3600)
        print(p.stdout[-6000:])
        check(p.returncode == 0, f"the README's commands and examples in the clone ({p.returncode}, "
                                 f"{time.monotonic() - t:.0f} s): {p.stderr[-600:]}")
        check("ok: the venv has no `wheel`" in p.stdout, "the Python client was installed into a venv without wheel")
        check(os.path.exists(report), "the README's surgebox report page was kept")
        if os.path.exists(report):
            b = headless.Browser(1280, 900)
            try:
                s = b.open("file://" + report)
                errs = b.errors()
                check(not errs, f"report.html in chromium: console errors {errs}")
                title = b.evaluate(s, "document.title")
                rows = b.evaluate(s, "document.querySelectorAll('#fidelity-table tr').length")
                check(bool(title) and rows and rows >= 3, f"the page shows its fidelity table ({title!r}, {rows} rows)")
                os.makedirs(shots, exist_ok=True)
                data = b.screenshot(s, os.path.join(shots, "quickstart-report.png"))
                check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, f"a screenshot ({len(data)} bytes)")
            finally:
                b.close()
        print(f"the README's quick starts in a fresh clone took {time.monotonic() - t0:.0f} s")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if failures:
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
