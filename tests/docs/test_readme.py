#!/usr/bin/env python3
"""The README and the docs as a new user meets them (issue 26).

  test_readme.py SRC_DIR BIN_DIR SURGE_DATA CRUXEVAL_DATA            (docs.readme)
  test_readme.py SRC_DIR BIN_DIR SURGE_DATA CRUXEVAL_DATA docs/X.md  (docs.pages.X)

docs.readme: README.md at most 8 KB, every relative link in README.md and
docs/ resolves (files and headings), and every command and Python example in
README.md runs as shown. docs.pages.X: every command and Python example of
that page runs as shown, and every option of a usage synopsis (a ```text
block starting with surgebox or surgebox-run) is one its --help lists.
Both run in a scratch directory laid out as the docs assume (../shared/surge
beside it, the files they name: test.cpp, hello.py, preds.jsonl, P.jsonl,
gens.json, G.json, IN.jsonl; clients/ and build/ of the tree), with the
build's binaries on PATH, a fresh venv's pip and python3, HOME in the
scratch directory and one daemon at SURGEBOX_SOCKET. A block preceded by
`<!-- not run: why -->` is printed with its reason, never counted as run.
A page whose commands need the SURGE or CRUXEval data skips (77) without it.

Set by test_quickstart.py (a fresh clone): SURGEBOX_DOCS_AUTOSTART=1 starts
no daemon and names no socket (the client starts its private one, as on a
new user's machine); SURGEBOX_DOCS_NO_WHEEL=1 checks that the venv has no
`wheel`; SURGEBOX_DOCS_KEEP=DIR keeps the README's out/report.html there.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def slug(heading):
    """GitHub's anchor for a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        return {slug(m.group(1)) for m in re.finditer(r"(?m)^#+ (.*)$", f.read())}


def check_links(src, files=None):
    """Every relative link of files (README.md and docs/*.md unless given)
    names a file that exists, and a heading of it where it names one."""
    if files is None:
        files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    n = 0
    for f in files:
        text = open(f).read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"(https?:|mailto:)", target):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if "/shared/" in full:  # the benchmark data beside the project, not part of it
                continue
            n += 1
            ok = os.path.exists(full)
            if ok and anchor and full.endswith(".md"):
                ok = anchor in anchors(full)
            check(ok, f"{os.path.relpath(f, src)}: link {target}")
    return n


def blocks(readme):
    """(language, code, reason not run or None) per fenced block."""
    text = open(readme).read()
    out = []
    for m in re.finditer(r"(?:<!-- not run: (.*?) -->\n)?```(\w+)\n(.*?)```", text, re.S):
        out.append((m.group(2), m.group(3), m.group(1)))
    return out


def fixtures(work, surge, cruxeval, build_dir):
    with open(os.path.join(work, "test.cpp"), "w") as f:
        f.write("#include <iostream>\nint main() { std::cout << 6 * 7 << std::endl; }\n")
    with open(os.path.join(work, "hello.py"), "w") as f:
        f.write("print('hello')\n")
    os.makedirs(os.path.join(work, "..", "shared"), exist_ok=True)
    if os.path.isdir(surge):
        os.symlink(surge, os.path.join(work, "..", "shared", "surge"))
    os.symlink(build_dir, os.path.join(work, "build"))
    # a prediction per DR item 0 and BG item 0, as a model would write them
    for name in ("preds.jsonl", "P.jsonl"):
        with open(os.path.join(work, name), "w") as f:
            for subset in ("dr", "bg"):
                f.write(json.dumps({"subset": subset, "index": 0, "model": "m", "prediction": "Output:\n```\n42\n```"}) + "\n")
    # exec requests for batch: raw steps and the toolchain form
    with open(os.path.join(work, "IN.jsonl"), "w") as f:
        f.write(json.dumps({"steps": [{"name": "run", "argv": ["echo", "hi"]}]}) + "\n")
        f.write(json.dumps({"toolchain": "python3", "files": [{"path": "main.py", "content": "print(6 * 7)"}]}) + "\n")
    # every sample's reference output, as a perfect model's generations
    gens = {}
    if os.path.exists(cruxeval):
        with open(cruxeval) as f:
            for line in f:
                if line.strip():
                    s = json.loads(line)
                    gens[s["id"]] = [s["output"]]
    for name in ("gens.json", "G.json"):
        with open(os.path.join(work, name), "w") as f:
            json.dump(gens, f)


def needs_data(page_blocks):
    """Do the page's runnable blocks use the SURGE or CRUXEval data?"""
    return any(not why and lang in ("sh", "python") and ("../shared" in code or "cruxeval" in code)
               for lang, code, why in page_blocks)


def check_synopsis(code, env):
    """A usage synopsis: every --option in it is one its command's --help lists
    (a line starting with surgebox starts a command; indented lines go on)."""
    cmds = []
    for line in code.splitlines():
        if re.match(r"surgebox(-run)?\b", line):
            cmds.append(line)
        elif cmds and line.strip():
            cmds[-1] += " " + line
    for c in cmds:
        check_one_synopsis(c, env)


def check_one_synopsis(code, env):
    words = code.split()
    cmd = words[:2] if words[0] == "surgebox" and len(words) > 1 and not words[1].startswith("-") else words[:1]
    p = subprocess.run(cmd + ["--help"], env=env, capture_output=True, text=True)
    for opt in sorted(set(re.findall(r"--[a-z][a-z0-9-]*", code))):
        check(p.returncode == 0 and re.search(re.escape(opt) + r"\b", p.stdout) is not None,
              f"synopsis of {' '.join(cmd)}: {opt} is in its --help")


def run_blocks(page_blocks, work, env, venv):
    """Every block of a page as shown; the number run."""
    ran = 0
    for lang, code, why in page_blocks:
        if why:
            print(f"not run ({why}):\n{code}")
            continue
        if lang == "text" and re.match(r"surgebox(-run)?\b", code):
            check_synopsis(code, env)
        elif lang == "sh":
            for line in code.splitlines():
                cmd = re.sub(r"\s+#.*$", "", line).strip()
                if not cmd or cmd.startswith("#"):
                    continue
                p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=1800)
                ran += 1
                check(p.returncode == 0, f"`{cmd}` exits 0 ({p.returncode}: {p.stderr[-600:]})")
        elif lang == "python":
            p = subprocess.run([os.path.join(venv, "bin", "python3"), "-c", code], cwd=work, env=env,
                               capture_output=True, text=True, timeout=600)
            ran += 1
            check(p.returncode == 0, f"the Python example runs ({p.stderr[-600:]})")
            # what a print( line prints, shown as its comment
            for want in re.findall(r"^.*\bprint\(.*#\s*(\S.*)$", code, re.M):
                check(want.strip() in p.stdout, f"the Python example prints {want.strip()!r} ({p.stdout!r})")
    return ran


def main():
    src, bin_dir, surge, cruxeval = sys.argv[1:5]
    page = sys.argv[5] if len(sys.argv) > 5 else None
    doc = os.path.join(src, page or "README.md")
    page_blocks = blocks(doc)
    if page is None:
        size = os.path.getsize(doc)
        check(size <= 8192, f"README.md is {size} bytes (at most 8 KB)")
        print(f"{check_links(src)} relative links checked")
    have_data = os.path.exists(os.path.join(surge, "dr.json")) and os.path.exists(cruxeval)
    if not have_data and (page is None or needs_data(page_blocks)):
        print(f"SKIPPED: the commands of {page or 'README.md'} need the SURGE data ({surge}) and CRUXEval ({cruxeval})")
        sys.exit(1 if failures else SKIP)
    top = tempfile.mkdtemp(prefix="sbreadme-")
    work = os.path.join(top, "work")
    os.makedirs(work)
    fixtures(work, surge, cruxeval, os.path.dirname(os.path.abspath(bin_dir)))
    # the README's directory is the tree's root: its clients/ here; pip and
    # python3 are a fresh venv's, so `pip install` touches nothing of the host
    os.symlink(os.path.join(src, "clients"), os.path.join(work, "clients"))
    venv = os.path.join(top, "venv")
    p = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"SKIPPED: cannot make a venv for the docs' pip install ({p.stderr.strip()[-200:]}; apt install python3-venv)")
        sys.exit(1 if failures else SKIP)
    if os.environ.get("SURGEBOX_DOCS_NO_WHEEL"):
        p = subprocess.run([os.path.join(venv, "bin", "python3"), "-c", "import wheel"], capture_output=True)
        check(p.returncode != 0, "the venv has no `wheel` (pip install must not need it)")
    home = os.path.join(top, "home")
    os.makedirs(home)
    autostart = bool(os.environ.get("SURGEBOX_DOCS_AUTOSTART"))
    env = dict(os.environ, PATH=os.pathsep.join([os.path.join(venv, "bin"), bin_dir, os.environ.get("PATH", "")]),
               CRUXEVAL_DATA=cruxeval, SURGEBOX_SOCKET=os.path.join(top, "d.sock"), HOME=home)
    for k in ("PYTHONPATH", "SURGEBOX_DOCS_AUTOSTART", "SURGEBOX_DOCS_NO_WHEEL", "SURGEBOX_DOCS_KEEP"):
        env.pop(k, None)
    d = None
    if autostart:  # no daemon: the client's private one, in a runtime directory of the user's
        del env["SURGEBOX_SOCKET"]
        env["XDG_RUNTIME_DIR"] = os.path.join(top, "run")
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        env["SURGEBOX_IDLE_TIMEOUT"] = "30"
    else:  # one daemon for every command, as a user's would be
        d = subprocess.Popen([os.path.join(bin_dir, "surgeboxd"), "--socket", env["SURGEBOX_SOCKET"],
                              "--cache-dir", os.path.join(top, "cache")], env=env)
    try:
        for _ in range(600 if d else 0):
            if os.path.exists(env["SURGEBOX_SOCKET"]) or d.poll() is not None:
                break
            subprocess.run(["sleep", "0.2"])
        ran = run_blocks(page_blocks, work, env, venv)
        if page is None:
            check(ran >= 10, f"{ran} commands and examples ran")
            report = os.path.join(work, "out", "report.html")
            check(os.path.exists(report), "surgebox report wrote out/report.html")
            if os.environ.get("SURGEBOX_DOCS_KEEP") and os.path.exists(report):
                shutil.copy(report, os.environ["SURGEBOX_DOCS_KEEP"])
            scored = os.path.join(work, "scored.json")
            check(os.path.exists(scored) and json.load(open(scored)).get("pass_at_1") == 100.0,
                  "the CRUXEval smoke test scores the reference outputs 100")
        else:
            check(ran >= 1, f"{ran} commands and examples of {page} ran")
    finally:
        if d:
            d.terminate()
            d.wait(timeout=300)
        shutil.rmtree(top, ignore_errors=True)
    if failures:
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
