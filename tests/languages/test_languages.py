#!/usr/bin/env python3
"""SandboxFusion's `language` values through the native protocol (issue 37):
for one value of http/languages.json, its toolchain with the entry's source
name, options and compile arguments, as the HTTP front will send it: a
hello, a stdin echo, code that does not compile (a compile error where the
toolchain compiles, else the interpreter's non-zero exit), a runtime error,
a timeout and a memory kill. A value whose toolchain (or profile) is not
installed here prints SKIPPED naming what to install; a value marked
"missing" is SKIPPED with its reason. `coverage` checks that every value
SandboxFusion accepts has an entry and that every entry names a declared
toolchain.

Run as: test_languages.py BIN_DIR CACHE_DIR VALUE, inside
  unshare --mount --propagation private --pid --fork --mount-proc
(ctest does that).
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from test_daemon import Client  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402

from programs import PROGRAMS  # noqa: E402

SKIP = 77
# SandboxFusion's sandbox/runners/types.py `Language`, plus the aliases its
# runner table accepts ('js', 'ts'): every value a client may send.
SANDBOXFUSION_VALUES = [
    "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript", "sql", "rust", "cuda",
    "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest", "junit", "kotlin_script", "jest", "verilog",
    "python_gpu", "lean", "swift", "racket", "js", "ts"]
# A value whose toolchain is not on the host but in a profile (issue 37: julia
# is the surge-2025 profile's, Debian 11's 1.5.3): tried there when it exists.
PROFILE_FALLBACK = {"julia": "surge-2025"}
# The fields http/README.md allows in an entry (the front refuses others).
ENTRY_FIELDS = {"toolchain", "source", "options", "compile_args", "args", "files", "warm", "profile", "missing", "note"}
MEMORY_MIB = 256
TIME_S = 2
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def skip(why):
    print("SKIPPED: " + why, flush=True)
    sys.exit(SKIP)


def languages():
    with open(os.path.join(ROOT, "http", "languages.json")) as f:
        return json.load(f)


def declared_toolchains():
    """name -> family file, from the toolchain files' binaries (exact names only)."""
    names = {}
    d = os.path.join(ROOT, "toolchains", "defs")
    for fn in os.listdir(d):
        if fn.endswith(".json"):
            with open(os.path.join(d, fn)) as f:
                t = json.load(f)
            for b in t["binaries"]:
                names.setdefault(b["name"], fn)
    return names


def case_coverage():
    langs = languages()
    for v in SANDBOXFUSION_VALUES:
        check(v in langs, f"SandboxFusion's value {v!r} has no entry in http/languages.json")
    declared = declared_toolchains()
    for v, e in langs.items():
        check(set(e) <= ENTRY_FIELDS, f"{v}: fields the front does not read: {sorted(set(e) - ENTRY_FIELDS)}")
        if "missing" in e:
            check(isinstance(e["missing"], str) and len(e["missing"]) > 20 and "toolchain" not in e,
                  f"{v}: a missing entry names what is missing and no toolchain: {e}")
            continue
        check(e.get("toolchain") in declared, f"{v}: toolchain {e.get('toolchain')!r} is declared by no toolchain file")
        check(isinstance(e.get("source"), str) and "/" not in e["source"], f"{v}: source {e.get('source')!r}")
        check(v in PROGRAMS, f"{v}: no test programs for it in tests/languages/programs.py")


def request(id_, entry, code, **kw):
    req = {"id": id_, "type": "exec", "toolchain": entry["toolchain"],
           "files": [{"path": entry["source"], "content": code}]}
    if entry.get("options"):
        req["options"] = entry["options"]
    if entry.get("compile_args"):
        req["compile_args"] = entry["compile_args"]
    if entry.get("profile"):
        req["profile"] = entry["profile"]
    req.update(kw)
    return req


def call(c, req, timeout=600):
    """One request; its status and time printed (the suite's figures)."""
    t0 = time.monotonic()
    r = c.call(req, timeout)
    print(f"  {req['id']:7} {r.get('status')!s:14} {time.monotonic() - t0:6.2f} s", flush=True)
    return r


def last(r):
    steps = r.get("steps") or [{}]
    return steps[-1]


def show(r):
    return f"{r.get('status')} {r.get('error')} " + " | ".join(
        f"{s.get('name')}: {s.get('status')} exit {s.get('exit_code')} {s.get('limit_hit')} "
        f"out {s.get('stdout', '')[:200]!r} err {s.get('stderr', '')[-400:]!r}" for s in r.get("steps", []))


def case_value(c, value):
    langs = languages()
    if value not in langs:
        print(f"no entry for {value} in http/languages.json")
        sys.exit(1)
    entry = langs[value]
    if "missing" in entry:
        skip(f"{value} cannot run here: {entry['missing']}")
    r = c.call({"id": "tc", "type": "toolchains"}, 300)
    tcs = {t["name"]: t for t in r["toolchains"]}
    name = entry["toolchain"]
    if not tcs.get(name, {}).get("available") and value in PROFILE_FALLBACK:
        # not on the host: the profile that has it, where one was created
        profile = PROFILE_FALLBACK[value]
        r = c.call({"id": "tcp", "type": "toolchains", "profile": profile}, 300)
        if r.get("type") != "error" and {t["name"]: t for t in r["toolchains"]}.get(name, {}).get("available"):
            entry = dict(entry, profile=profile)
            tcs = {t["name"]: t for t in r["toolchains"]}
    if not tcs.get(name, {}).get("available"):
        skip(f"{value}: toolchain {name} is not installed here ({tcs.get(name, {}).get('install') or 'not declared'})")
    p = PROGRAMS[value]

    # hello
    r = call(c, request("hello", entry, p["hello"]))
    check(r.get("status") == "ok" and last(r).get("exit_code") == 0, f"{value} hello: {show(r)}")
    check(p.get("hello_out", "hello world\n") in last(r).get("stdout", ""),
          f"{value} hello prints {p.get('hello_out', 'hello world')!r}: {show(r)}")
    check(r.get("toolchain", {}).get("name") == name, f"{value}: the answer names toolchain {name}: {r.get('toolchain')}")
    has_compile = any(s.get("name") == "compile" for s in r.get("steps", []))

    # stdin echo (test frameworks capture stdin: they have none)
    if p.get("echo"):
        text = "line one\nline two ü\n"
        r = call(c, request("echo", entry, p["echo"], stdin=text))
        check(r.get("status") == "ok" and last(r).get("stdout") == text, f"{value} stdin echo: {show(r)}")

    # code that does not compile / parse
    r = call(c, request("broken", entry, p["broken"]))
    if has_compile:
        check(r.get("status") == "compile_error" and len(r.get("steps", [])) == 1 and r["steps"][0].get("stderr")
              + r["steps"][0].get("stdout", ""), f"{value} compile error: only the compile step ran, with diagnostics: {show(r)}")
    else:
        check(r.get("status") == "runtime_error" and (last(r).get("stderr") or last(r).get("stdout")),
              f"{value} code that does not parse: a non-zero exit with diagnostics: {show(r)}")

    # runtime error
    r = call(c, request("crash", entry, p["crash"]))
    check(r.get("status") in ("runtime_error", "signaled") and last(r).get("exit_code") != 0,
          f"{value} runtime error: {show(r)}")
    if p.get("crash_text"):
        out = last(r).get("stderr", "") + last(r).get("stdout", "")
        check(p["crash_text"] in out, f"{value}: the runtime error shows {p['crash_text']!r}: {show(r)}")

    # timeout: the run step's own limit
    r = call(c, request("loop", entry, p["loop"], limits={"time_s": p.get("time_s", TIME_S)}))
    check(r.get("status") == "timeout" and last(r).get("limit_hit") in ("wall_time", "cpu_time"),
          f"{value} timeout: {show(r)}")
    if p.get("loop_out"):
        check(p["loop_out"] in last(r).get("stdout", ""), f"{value} timeout: the loop was reached: {show(r)}")

    # memory kill
    r = call(c, request("mem", entry, p["memory"], limits={"memory_mib": p.get("memory_mib", MEMORY_MIB)}))
    st = last(r)
    if p.get("heap_error"):
        # a JVM sizes its heap from the cgroup's limit and may throw first
        ok = r.get("status") == "memory_limit" or (
            r.get("status") == "runtime_error" and p["heap_error"] in st.get("stderr", "") + st.get("stdout", ""))
        check(ok, f"{value} memory: killed at the limit, or its runtime's own out-of-memory error: {show(r)}")
    else:
        check(r.get("status") == "memory_limit" and st.get("limit_hit") == "memory",
              f"{value} memory kill: {show(r)}")


def main():
    bin_dir, cache_dir, value = sys.argv[1], sys.argv[2], sys.argv[3]
    if value == "coverage":
        case_coverage()
    else:
        if os.geteuid() != 0:
            skip("the language tests run as root (CI and this machine are root)")
        if os.getpid() != 1:
            print("refusing to run outside the unshare wrapper (pid is not 1)")
            sys.exit(2)
        entry = languages().get(value, {})
        if "missing" in entry:  # before any daemon starts
            skip(f"{value} cannot run here: {entry['missing']}")
        os.makedirs(cache_dir, exist_ok=True)
        d = PrivateDaemon(bin_dir, cache_dir, "--jobs", "2")
        try:
            case_value(Client(d.sock), value)
        finally:
            if d.proc.poll() is None:
                d.stop()
        if failures:
            print("--- daemon log ---\n" + d.logtext()[-3000:])
    if failures:
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
