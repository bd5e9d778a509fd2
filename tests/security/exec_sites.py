"""Every place the product starts a program is one HACKING.md's "Exec
sites" table lists, with the rule it follows (issue 35): a new execve,
execveat, fexecve, exec*, posix_spawn, system or popen in C, or a
subprocess / os.exec* / os.spawn* / os.system / os.popen in the product's
Python, fails this test until the table says who runs it, as whom, where,
and what names the file. A listed site gone from the code fails it too (the
table must not vouch for what is not there). Before the tree, the scanner
is shown to find a site it must find and skip one it must skip.

  exec_sites.py SOURCE_DIR"""
import os
import re
import sys
import tempfile

PRODUCT = ("cli", "client", "clients", "common", "daemon", "dataset", "proto", "runners", "toolchains")
C_CALL = re.compile(r"(?<![\w.])(execve|execveat|fexecve|execv|execvp|execvpe|execl|execlp|execle|posix_spawnp?|system|popen)"
                    r"\s*\(|\b(SYS_execveat|SYS_execve)\b")
PY_CALL = re.compile(r"\bsubprocess\.(Popen|run|call|check_call|check_output|getoutput|getstatusoutput)\s*\(|"
                     r"\bos\.(exec\w*|spawn\w*|posix_spawn\w*|system|popen)\s*\(")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')  # "root file system (...)" in a help text is no call
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*×(\d+)\s*\|")


def is_comment(line, py):
    s = line.strip()
    return s.startswith("#") if py else s.startswith(("*", "/*", "//"))


def scan(root):
    """{(relative path, call): count} of the product's exec sites under root."""
    found = {}
    for top in PRODUCT:
        for dirpath, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ("tests", "__pycache__", "build")]
            for n in names:
                py = n.endswith(".py")
                if not (py or n.endswith((".c", ".h"))):
                    continue
                path = os.path.join(dirpath, n)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        if is_comment(line, py):
                            continue
                        for m in (PY_CALL if py else C_CALL).finditer(STRING.sub('""', line)):
                            call = m.group(0).rstrip("( \t")
                            key = (os.path.relpath(path, root), call)
                            found[key] = found.get(key, 0) + 1
    return found


def table(hacking):
    rows = {}
    with open(hacking, encoding="utf-8") as f:
        inside = False
        for line in f:
            if line.startswith("## "):
                inside = line.startswith("## Exec sites")
            m = ROW.match(line) if inside else None
            if m:
                rows[(m.group(1), m.group(2))] = int(m.group(3))
    return rows


def selftest():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "runners"))
        with open(os.path.join(d, "runners", "x.c"), "w") as f:
            f.write("/* execve(x) in a comment */\n  int r = execve(p, a, e);\n  sb_spawn_file_actions(x);\n"
                    "  puts(\"a file system (b)\");\n")
        with open(os.path.join(d, "runners", "y.py"), "w") as f:
            f.write("# os.system('x')\nsubprocess.run(['a'])\n")
        got = scan(d)
    want = {("runners/x.c", "execve"): 1, ("runners/y.py", "subprocess.run"): 1}
    if got != want:
        print("FAIL: the scanner itself: found %r, want %r" % (got, want))
        return False
    return True


def main():
    root = sys.argv[1]
    if not selftest():
        return 1
    found = scan(root)
    listed = table(os.path.join(root, "HACKING.md"))
    fails = 0
    for key, n in sorted(found.items()):
        print("%s: %s x%d" % (key[0], key[1], n))
        if listed.get(key) != n:
            fails += 1
            print("FAIL: %s calls %s %d times; HACKING.md's \"Exec sites\" table says %s: list it with its rule"
                  % (key[0], key[1], n, listed.get(key, "nothing")))
    for key in sorted(set(listed) - set(found)):
        fails += 1
        print("FAIL: HACKING.md lists %s in %s, which the code no longer has" % (key[1], key[0]))
    if not found:
        print("FAIL: no exec site found at all under %s (wrong directory?)" % root)
        return 1
    print("%d exec sites, %d not as listed" % (sum(found.values()), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
