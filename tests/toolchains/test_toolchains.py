#!/usr/bin/env python3
"""Toolchain tests through the daemon: per toolchain hello world, stdin, a
compile error and a runtime error; the C++ matrix; the compile cache; and
the plumbing of the Julia and Lean 4 toolchain files with stand-in binaries;
per language, a program as benchmark authors write them (non-ASCII source,
a tuple-returning function it asserts itself).

Run as: test_toolchains.py BIN_DIR CACHE_DIR CASE, inside
  unshare --mount --propagation private --pid --fork --mount-proc
(ctest does that). CACHE_DIR holds the toolchain detection cache shared by
the cases so that option probes run once per build tree.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "daemon"))
from test_daemon import Client  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from private_daemon import PrivateDaemon  # noqa: E402

SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def skip(why):
    print("SKIPPED: " + why, flush=True)
    sys.exit(SKIP)


def Daemon(bin_dir, cache_dir, *extra, env=None):
    """A private daemon (tests/cli/private_daemon.py) with two workers."""
    return PrivateDaemon(bin_dir, cache_dir, "--jobs", "2", *extra, env=env)


def toolchains(c):
    r = c.call({"id": "tc", "type": "toolchains"})
    return {t["name"]: t for t in r["toolchains"]}


def job(id_, tc, files, **kw):
    req = {"id": id_, "type": "exec", "toolchain": tc, "files": [{"path": p, "content": s} for p, s in files.items()]}
    req.update(kw)
    return req


# ---------------------------------------------------------------- programs
# Per language: (source name, hello reading one word from stdin, code that
# does not compile, code that fails at run time, what its stderr shows).
PROGRAMS = {
    "c": ("main.c",
          '#include <stdio.h>\nint main(void){char s[64]; if (scanf("%63s", s) != 1) return 3; printf("hello %s\\n", s); return 0;}\n',
          "int main( {\n",
          '#include <stdlib.h>\nint main(void){abort();}\n', None),
    "cpp": ("test.cpp",
            '#include <iostream>\n#include <string>\nint main(){std::string s; std::cin >> s; std::cout << "hello " << s << std::endl;}\n',
            "int main() { return undeclared_thing; }\n",
            '#include <stdexcept>\nint main(){ throw std::runtime_error("boom"); }\n', "boom"),
    "rust": ("main.rs",
             'use std::io::Read;\nfn main(){ let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); println!("hello {}", s.trim()); }\n',
             "fn main() { let x: i32 = \"no\"; }\n",
             'fn main(){ let v: Vec<i32> = Vec::new(); println!("{}", v[3]); }\n', "panicked"),
    "java": ("Main.java",
             'import java.util.Scanner;\npublic class Hello { public static void main(String[] a){ Scanner in = new Scanner(System.in); System.out.println("hello " + in.next()); } }\n',
             "public class Broken { void f() { int x = \"s\"; } }\n",
             'public class Crash { public static void main(String[] a){ throw new IllegalStateException("boom"); } }\n',
             "IllegalStateException"),
    "python": ("main.py", 'import sys\nprint("hello " + sys.stdin.read().strip())\n', None,
               'raise ValueError("boom")\n', "Traceback"),
    "javascript": ("main.js", 'const s = require("fs").readFileSync(0, "utf8").trim();\nconsole.log("hello " + s);\n', None,
                   'throw new Error("boom");\n', "Error: boom"),
    "csharp": ("main.cs",
               'using System;\nclass P { static void Main(){ Console.WriteLine("hello " + Console.ReadLine().Trim()); } }\n',
               "class P { static void Main() { int x = \"s\"; } }\n",
               'using System;\nclass P { static void Main(){ throw new InvalidOperationException("boom"); } }\n', "boom"),
    "julia": ("main.jl", 'println("hello " * strip(readline()))\n', None, 'error("boom")\n', "boom"),
}


def case_lean(c, name):
    """Real Lean 4 + Mathlib: messages come back as Lean's JSON lines."""
    good = "import Mathlib\nset_option maxHeartbeats 0\ntheorem t (a b : Nat) : a + b = b + a := by omega\n"
    bad = "import Mathlib\ntheorem t : (2 : Nat) + 2 = 5 := by norm_num\n"
    r = c.call(job("lean-ok", name, {"Main.lean": good}), 900)
    check(r["status"] == "ok", f"{name} proof: {r['status']} {r['steps'][-1]['stdout'][:300]!r}")
    r = c.call(job("lean-bad", name, {"Main.lean": bad}), 900)
    msgs = [json.loads(line) for line in r["steps"][-1]["stdout"].splitlines() if line.startswith("{")]
    check(any(m.get("severity") == "error" and "pos" in m for m in msgs), f"{name}: an error message with pos: {msgs[:3]}")


def case_language(d, c, name):
    tcs = toolchains(c)
    if name not in tcs or not tcs[name].get("available"):
        hint = tcs.get(name, {}).get("install") or "not declared"
        skip(f"toolchain {name} is not installed here ({hint})")
    lang = tcs[name]["language"]
    if lang == "lean":
        case_lean(c, name)
        return
    src, hello, broken, crash, crash_text = PROGRAMS[lang]
    r = c.call(job("hello", name, {src: hello}, stdin="world\n"), 300)
    check(r["status"] == "ok", f"{name} hello: {r.get('status')} {r.get('error')} {[s.get('stderr') for s in r.get('steps', [])]}")
    if r["status"] == "ok":
        check(r["steps"][-1]["stdout"] == "hello world\n", f"{name} stdout {r['steps'][-1]['stdout']!r}")
    tc = r.get("toolchain", {})
    check(tc.get("name") == name and tc.get("version") == tcs[name]["version"] and tc.get("path"),
          f"{name}: the response records the toolchain identity: {tc}")
    if broken is not None:
        r = c.call(job("broken", name, {src: broken}), 300)
        check(r["status"] == "compile_error", f"{name} compile error: {r['status']}")
        check(len(r["steps"]) == 1 and r["steps"][0]["name"] == "compile" and r["steps"][0]["stderr"],
              f"{name}: only the compile step ran, with diagnostics")
    r = c.call(job("crash", name, {src: crash}), 300)
    check(r["status"] in ("runtime_error", "signaled"), f"{name} runtime error: {r['status']} {r.get('steps', [{}])[-1].get('stderr', '')[:300]!r}")
    if crash_text:
        check(crash_text in r["steps"][-1]["stderr"], f"{name}: stderr shows {crash_text!r}: {r['steps'][-1]['stderr'][:300]!r}")
    if lang == "c":
        check(r["steps"][-1]["signal"] == "SIGABRT", f"{name}: abort() is SIGABRT, got {r['steps'][-1]['signal']}")


# ------------------------------------------- programs as benchmarks write them
# MultiPL-E-style translations: non-ASCII source (a UTF-8 literal printed) and
# a tuple-returning function the program asserts itself. Per language: the
# toolchain, the source name, a program whose assertion holds and one whose
# assertion fails (it must not pass: the assertions are the test).
TEXT = "grüße, 世界 — ✓"

UTF8_TUPLES = {
    "cpp": ("g++", "test.cpp", """#include <cassert>
#include <iostream>
#include <string>
#include <tuple>
std::tuple<long, std::string> f(long x) { return std::make_tuple(x * 2, "é" + std::to_string(x)); }
int main() {
    assert(f(21) == std::make_tuple(42L, std::string("é%s")));
    std::cout << "%s" << std::endl;
}
"""),
    "java": ("java", "Main.java", """import java.util.*;
import org.javatuples.*;
class Problem {
    public static Pair<Long, String> f(long x) { return Pair.with(x * 2L, "é" + x); }
    public static void main(String[] args) {
        assert(f(21L).equals(Pair.with(42L, "é%s")));
        System.out.println("%s");
    }
}
"""),
    "rust": ("rustc", "main.rs", """fn f(x: i64) -> (i64, String) { (x * 2, format!("é{}", x)) }
fn main() {
    assert_eq!(f(21), (42, String::from("é%s")));
    println!("%s");
}
"""),
    "javascript": ("node", "main.js", """const assert = require("assert");
function f(x) { return [x * 2, "é" + x]; }
assert.deepEqual(f(21), [42, "é%s"]);
console.log("%s");
"""),
    "python": ("python3", "main.py", """def f(x):
    return (x * 2, "é" + str(x))
assert f(21) == (42, "é%s")
print("%s")
"""),
    "csharp": ("mono", "main.cs", """using System;
class Problem {
    static (long, string) F(long x) { return (x * 2, "é" + x); }
    static void Main(string[] args) {
        if (!F(21).Equals((42L, "é%s"))) throw new Exception("assertion failed");
        Console.WriteLine("%s");
    }
}
"""),
    "julia": ("julia", "main.jl", """f(x) = (x * 2, "é" * string(x))
@assert f(21) == (42, "é%s")
println("%s")
"""),
}


def case_utf8_tuples(d, c, lang):
    name, src, tmpl = UTF8_TUPLES[lang]
    tcs = toolchains(c)
    if name not in tcs or not tcs[name].get("available"):
        skip(f"toolchain {name} is not installed here ({tcs.get(name, {}).get('install') or 'not declared'})")
    good, wrong = tmpl % ("21", TEXT), tmpl % ("12", TEXT)
    r = c.call(job("u-good", name, {src: good}, output_encoding="base64"), 300)
    steps = r.get("steps", [])
    check(r.get("status") == "ok", f"{name}: {r.get('status')} {r.get('error')} {[s.get('stderr', '')[:400] for s in steps]}")
    if r.get("status") == "ok":
        out = base64.b64decode(steps[-1]["stdout_b64"])
        check(out == (TEXT + "\n").encode(), f"{name} printed {out!r}, expected {(TEXT + chr(10)).encode()!r}")
    r = c.call(job("u-wrong", name, {src: wrong}), 300)
    check(r.get("status") in ("runtime_error", "signaled"),
          f"{name}: a failed assertion must fail the program, got {r.get('status')}")


CS_ASSERT = """using System;
using System.Diagnostics;
class Problem {
    static long Add(long a, long b) { return a + b + %s; }
    public static void Main(string[] args) {
        Debug.Assert(Add(1L, 2L) == 3L);
        Console.WriteLine("done");
    }
}
"""


def case_csharp_debug_assert(d, c):
    """MultiPL-E's C# programs assert with Debug.Assert, which mcs drops unless
    DEBUG is defined: a wrong answer must not look like a clean exit 0. mono
    prints a failed assert and goes on (exit 0); upstream's harness reads
    stderr for DefaultTraceListener.Fail, so that is where it must show."""
    tcs = toolchains(c)
    if not tcs.get("mono", {}).get("available"):
        skip("toolchain mono is not installed here")
    r = c.call(job("cs-ok", "mono", {"main.cs": CS_ASSERT % "0"}), 300)
    run = (r.get("steps") or [{}])[-1]
    check(r.get("status") == "ok" and run.get("stdout") == "done\n" and run.get("stderr") == "",
          f"a passing Debug.Assert: {r.get('status')} {run.get('stdout')!r} {run.get('stderr', '')[:300]!r}")
    r = c.call(job("cs-fail", "mono", {"main.cs": CS_ASSERT % "1"}), 300)
    run = (r.get("steps") or [{}])[-1]
    visible = r.get("status") != "ok" or run.get("exit_code") != 0 or "DefaultTraceListener.Fail" in run.get("stderr", "")
    check(visible, f"a failed Debug.Assert looks clean: {r.get('status')} exit {run.get('exit_code')} "
                   f"stdout {run.get('stdout')!r} stderr {run.get('stderr', '')[:300]!r}")


NODE_ES = {18: "ECMAScript 2022", 20: "ECMAScript 2023", 22: "ECMAScript 2024"}  # node.green, by hand


def case_language_levels(d, c, bin_dir):
    """`toolchains` says which language level each compiler accepts."""
    tcs = {n: t for n, t in toolchains(c).items() if t.get("available")}
    if not tcs:
        skip("no toolchain installed")
    for name, t in tcs.items():
        check("language_level" in t, f"{name}: no language_level field")
    seen = set()
    for name, t in tcs.items():
        fam, ver, lvl = t["family"], t["version"], t.get("language_level")
        major = int(ver.split(".")[0]) if ver.split(".")[0].isdigit() else None
        if fam == "java":
            want = f"Java {ver.split('.')[1] if ver.startswith('1.') else ver.split('.')[0]}"
        elif fam == "mono":
            want = "C# 7.2" if major == 6 else None  # mono 6's mcs: -langversion 1 to 7.2
        elif fam == "rustc":
            want = "editions 2015..2024" if int(ver.split(".")[1]) >= 85 else "editions 2015..2021"
        elif fam == "node":
            want = NODE_ES.get(major)
        elif fam == "python3":
            want = "Python " + ".".join(ver.split(".")[:2])
        elif fam in ("g++", "clang++"):
            check(lvl and lvl.startswith("c++98..c++") and ", gnu++98..gnu++" in lvl, f"{name}: {lvl!r}")
            want = None
        elif fam == "make":
            check(lvl is None, f"{name}: make declares no level, got {lvl!r}")
            want = None
        else:
            want = None
        if want is not None:
            seen.add(fam)
            check(lvl == want, f"{name} {ver}: language_level {lvl!r}, expected {want!r}")
    if not seen:
        skip("none of java, mono, rustc, node, python3 is installed")
    out = subprocess.run([os.path.join(bin_dir, "surgebox"), "--socket", d.sock, "toolchains"], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    check(out.returncode == 0 and lines and "language level" in lines[0], f"the table has a language level column: {lines[:1]}")
    for name, t in tcs.items():
        if t.get("language_level"):
            row = [ln for ln in lines if ln.split()[:1] == [name]]
            check(row and t["language_level"] in row[0], f"{name}'s row shows {t['language_level']!r}: {row}")


CPLUSPLUS = {"c++98": 199711, "c++03": 199711, "c++11": 201103, "c++14": 201402, "c++17": 201703, "c++20": 202002}


def case_cpp_matrix(d, c):
    """Every installed C++ compiler x every standard: __cplusplus proves the
    flag arrived; -O levels through __OPTIMIZE__; unsupported values are
    answered as such, unknown ones refused."""
    tcs = toolchains(c)
    cxx = [n for n, t in tcs.items() if t.get("family") in ("g++", "clang++") and t.get("available")]
    if not cxx:
        skip("no C++ compiler installed")
    src = '#include <cstdio>\nint main(){ std::printf("%ld", (long)__cplusplus);\n#ifdef __OPTIMIZE__\n std::printf(" opt");\n#endif\n#ifdef __OPTIMIZE_SIZE__\n std::printf(" size");\n#endif\n return 0; }\n'
    sent = {}
    k = 0
    for name in sorted(cxx):
        for std, value in CPLUSPLUS.items():
            supported = std in tcs[name]["options"]["std"]
            check(supported, f"{name} accepts {std}")
            k += 1
            sent[f"m{k}"] = (name, std, "O0", value)
            c.send(job(f"m{k}", name, {"test.cpp": src}, options={"std": std, "opt": "O0"}))
        c23 = "c++23" in tcs[name]["options"]["std"]
        k += 1
        sent[f"m{k}"] = (name, "c++23", "O0", None if c23 else "unsupported")
        c.send(job(f"m{k}", name, {"test.cpp": src}, options={"std": "c++23", "opt": "O0"}))
    for opt, suffix in (("O1", " opt"), ("O2", " opt"), ("O3", " opt"), ("Os", " opt size")):
        k += 1
        sent[f"m{k}"] = (sorted(cxx)[0], "c++17", opt, 201703, suffix)
        c.send(job(f"m{k}", sorted(cxx)[0], {"test.cpp": src}, options={"std": "c++17", "opt": opt}))
    for _ in range(len(sent)):
        r = c.recv(600)
        want = sent[r["id"]]
        name, std, opt = want[0], want[1], want[2]
        if want[3] == "unsupported":
            check(r["status"] == "unsupported" and not r["steps"], f"{name} {std}: {r['status']}")
            continue
        check(r["status"] == "ok", f"{name} {std} {opt}: {r['status']} {r.get('steps', [{}])[0].get('stderr', '')[:200]!r}")
        if r["status"] != "ok":
            continue
        out = r["steps"][-1]["stdout"]
        if want[3] is not None:
            expect = str(want[3]) + (want[4] if len(want) > 4 else "")
            check(out == expect, f"{name} -std={std} -{opt}: printed {out!r}, expected {expect!r}")
        else:
            check(int(out.split()[0]) > 202002, f"{name} c++23: __cplusplus {out!r}")
        check(r["toolchain"]["options"] == {"std": std, "opt": opt}, f"identity options {r['toolchain']['options']}")
    r = c.call(job("bad1", sorted(cxx)[0], {"test.cpp": src}, options={"std": "c++99"}))
    check(r["type"] == "error" and r["error"]["code"] == "bad_request" and "c++99" in r["error"]["message"], f"c++99: {r}")
    r = c.call(job("bad2", sorted(cxx)[0], {"test.cpp": src}, options={"standard": "c++11"}))
    check(r["type"] == "error" and r["error"]["code"] == "bad_request" and "standard" in r["error"]["message"], f"unknown option: {r}")
    r = c.call(job("missing", "g++-3", {"test.cpp": src}))
    check(r["type"] == "exec" and r["status"] == "toolchain_missing" and "apt-get install" in r["error"], f"g++-3: {r}")
    r = c.call(job("unknown", "cobol", {"a.cob": ""}))
    check(r["type"] == "error" and r["error"]["code"] == "unknown_toolchain", f"cobol: {r}")


def case_java_names(d, c):
    """SURGE: /app/<Class>.java after the public class; the JVM locale option."""
    tcs = toolchains(c)
    if "java" not in tcs or not tcs["java"].get("available"):
        skip("java is not installed here")
    src = 'import java.util.*;\nimport java.text.*;\npublic class Dates { public static void main(String[] a){ System.out.println(new java.io.File("Dates.java").exists()); System.out.println(DateFormat.getDateInstance(DateFormat.FULL).format(new Date(0))); } }\n'
    r = c.call(job("j1", "java", {"test.java": src}), 300)
    check(r["status"] == "ok", f"java rename: {r['status']} {r['steps'][-1]['stderr'][:300]!r}")
    lines = r["steps"][-1]["stdout"].splitlines()
    check(lines[:1] == ["true"], f"the file was written as Dates.java: {lines}")
    check(len(lines) > 1 and "1970" in lines[1], f"default locale date: {lines}")
    r = c.call(job("j2", "java", {"test.java": src}, options={"locale": "zh_CN"}), 300)
    check(r["status"] == "ok" and "1970年" in r["steps"][-1]["stdout"], f"zh_CN date: {r['steps'][-1]['stdout']!r}")


def case_python_numpy(d, c):
    """SURGE's SC/TC scripts need numpy and scipy in the sandboxed python3."""
    tcs = toolchains(c)
    if "python3" not in tcs:
        skip("python3 is not installed here")
    host = subprocess.run([tcs["python3"]["path"], "-c", "import numpy, scipy"], capture_output=True)
    if host.returncode != 0:
        skip("the host python3 lacks numpy/scipy (apt-get install python3-numpy python3-scipy)")
    src = "import numpy as np, scipy.linalg as la\nprint(np.__version__ != '', float(la.det(np.array([[2.0, 0], [0, 3.0]]))))\n"
    r = c.call(job("np", "python3", {"main.py": src}), 300)
    check(r["status"] == "ok" and r["steps"][-1]["stdout"] == "True 6.0\n", f"numpy/scipy: {r['status']} {r['steps'][-1]}")


def fresh_src(tag=""):
    """A C++ program nobody compiled before (the cache must miss)."""
    return f'// {uuid.uuid4()} {tag}\n#include <cstdio>\nint main(){{ std::puts("cached {tag}"); return 0; }}\n'


def case_cache(d, c):
    tcs = toolchains(c)
    name = next((n for n in ("g++", "g++-12", "clang++") if n in tcs), None)
    if not name:
        skip("no C++ compiler installed")
    src = fresh_src("a")
    r1 = c.call(job("c1", name, {"test.cpp": src}, options={"opt": "O0"}), 300)
    r2 = c.call(job("c2", name, {"test.cpp": src}, options={"opt": "O0"}), 300)
    check(r1["status"] == "ok" and r2["status"] == "ok", "both ran")
    check(not r1["steps"][0].get("cached"), "first compile is a miss")
    check(r2["steps"][0].get("cached") is True, "second compile is a hit")
    strip = lambda s: {k: v for k, v in s.items() if k not in ("cached", "cache_key")}  # noqa: E731
    check(strip(r1["steps"][0]) == strip(r2["steps"][0]), "a hit returns the compile result byte for byte")
    check(r1["steps"][1]["stdout"] == r2["steps"][1]["stdout"] == "cached a\n", "the run step executes each time")
    check(r2["steps"][1].get("cached") is None, "the run step is never cached")
    # same sources, other flags: another entry
    r3 = c.call(job("c3", name, {"test.cpp": src}, options={"opt": "O2"}), 300)
    check(not r3["steps"][0].get("cached") and r3["steps"][0].get("cache_key") is None, "other flags: a miss")
    r4 = c.call(job("c4", name, {"test.cpp": src}, options={"opt": "O2"}), 300)
    check(r4["steps"][0]["cache_key"] != r2["steps"][0]["cache_key"], "other flags: another key")
    # a compile error is cached too
    bad = "int main( { " + str(uuid.uuid4()) + "\n"
    b1 = c.call(job("b1", name, {"test.cpp": bad}), 300)
    b2 = c.call(job("b2", name, {"test.cpp": bad}), 300)
    check(b1["status"] == b2["status"] == "compile_error" and b2["steps"][0].get("cached") is True, "compile errors are cached")
    check(b1["steps"][0]["stderr"] == b2["steps"][0]["stderr"], "same diagnostics from the cache")
    # concurrent identical jobs compile once
    st0 = c.call({"id": "s0", "type": "status"})["cache"]
    src = fresh_src("concurrent")
    for i in range(4):
        c.send(job(f"p{i}", name, {"test.cpp": src}))
    got = [c.recv(300) for _ in range(4)]
    st1 = c.call({"id": "s1", "type": "status"})["cache"]
    compiled = [g for g in got if not g["steps"][0].get("cached")]
    check(all(g["status"] == "ok" for g in got), "concurrent jobs all ok")
    check(len(compiled) == 1, f"one compile for four identical jobs, got {len(compiled)}")
    check(st1["misses"] - st0["misses"] == 1 and st1["stores"] - st0["stores"] == 1, f"cache stats {st0} -> {st1}")
    # survives a restart: a new daemon on the same cache dir hits
    return src


def case_cache_restart(d, c, bin_dir, cache_dir):
    tcs = toolchains(c)
    name = next((n for n in ("g++", "g++-12", "clang++") if n in tcs), None)
    if not name:
        skip("no C++ compiler installed")
    src = fresh_src("restart")
    r1 = c.call(job("r1", name, {"test.cpp": src}), 300)
    d.stop()
    d2 = Daemon(bin_dir, cache_dir)
    c2 = Client(d2.sock)
    r2 = c2.call(job("r2", name, {"test.cpp": src}), 300)
    check(r1["status"] == r2["status"] == "ok" and r2["steps"][0].get("cached") is True, "a restarted daemon hits")
    st = c2.call({"id": "s", "type": "status"})["cache"]
    check(st["entries"] >= 1 and st["bytes"] > 0, f"entries survive: {st}")
    d2.stop()


def case_cache_eviction(d, c):
    """--cache-max-mib 1: entries beyond the bound are evicted, oldest first."""
    tcs = toolchains(c)
    name = next((n for n in ("g++", "g++-12") if n in tcs), None)
    if not name:
        skip("no g++ installed")
    # a binary of ~300 KiB each: a big static array
    for i in range(6):
        src = fresh_src(str(i)) + f"static volatile char big[300000] = {{{i + 1}}};\nint use(){{return big[0];}}\n"
        r = c.call(job(f"e{i}", name, {"test.cpp": src}), 300)
        check(r["status"] == "ok", f"eviction job {i}: {r['status']}")
    st = c.call({"id": "s", "type": "status"})["cache"]
    check(st["evictions"] >= 2 and st["bytes"] <= st["max_bytes"], f"bounded: {st}")


FAKE_JULIA = """#!/bin/sh
# stands in for julia: prints its version, or runs "the program" by showing it
if [ "$1" = "--version" ]; then echo "julia version 1.10.4"; exit 0; fi
for a in "$@"; do case "$a" in --*) ;; *) f="$a"; break;; esac; done
echo "fake julia ran $f in $(pwd) as $(id -u) with depot $JULIA_DEPOT_PATH"
cat "$f"
read line && echo "stdin: $line"
"""

FAKE_LAKE = """#!/bin/sh
# stands in for lake: `lake env lean --json FILE` prints Lean-style JSON messages
if [ "$1" = "--version" ]; then echo "Lake version 5.0.0-abc (Lean version 4.9.0)"; exit 0; fi
[ "$1 $2 $3" = "env lean --json" ] || { echo "unexpected: $*" >&2; exit 2; }
[ -f lakefile.lean ] || { echo "not in the Mathlib project: $(pwd)" >&2; exit 3; }
if grep -q sorry "$4"; then
  echo '{"severity":"warning","pos":{"line":1,"column":0},"endPos":{"line":1,"column":7},"data":"declaration uses sorry"}'
else
  echo '{"severity":"error","pos":{"line":2,"column":4},"endPos":{"line":2,"column":9},"data":"unknown identifier"}'
  exit 1
fi
"""


def case_fake_julia_lean(bin_dir, cache_dir):
    """The julia and lean4 toolchain files, end to end, with stand-in binaries
    mounted on a private /opt (this wrapper's mount namespace only)."""
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/opt"], check=True)
    os.makedirs("/opt/julia/bin")
    os.makedirs("/opt/elan/bin")
    os.makedirs("/opt/mathlib-project")
    open("/opt/mathlib-project/lakefile.lean", "w").write("-- fake project\n")
    for path, text in (("/opt/julia/bin/julia", FAKE_JULIA), ("/opt/elan/bin/lake", FAKE_LAKE)):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    private_cache = tempfile.mkdtemp(prefix="sbtc-fake-")
    d = Daemon(bin_dir, private_cache)
    try:
        c = Client(d.sock)
        tcs = toolchains(c)
        check(tcs.get("julia", {}).get("version") == "1.10.4", f"julia detected: {tcs.get('julia')}")
        check(tcs.get("lean4", {}).get("version") == "4.9.0", f"lean4 detected: {tcs.get('lean4')}")
        r = c.call(job("j", "julia", {"main.jl": 'println("hi")\n'}, stdin="in\n"))
        out = r["steps"][-1]["stdout"] if r.get("steps") else ""
        check(r["status"] == "ok" and out.startswith(f"fake julia ran main.jl in /app as {r['steps'][-1].get('uid')} with depot /tmp/julia-depot\n")
              and 'println("hi")' in out and "stdin: in" in out, f"julia plumbing: {r.get('status')} {out!r} {r.get('error')}")
        check(r["toolchain"]["path"] == "/opt/julia/bin/julia", "julia identity")
        ok = c.call(job("l1", "lean4", {"Main.lean": "import Mathlib\ntheorem t : True := sorry\n"}))
        err = c.call(job("l2", "lean4", {"Main.lean": "import Mathlib\ntheorem t : True := foo\n"}))
        check(ok["status"] == "ok" and '"declaration uses sorry"' in ok["steps"][-1]["stdout"],
              f"lean4 plumbing (ok): {ok.get('status')} {ok['steps'][-1]['stdout']!r} {ok['steps'][-1]['stderr']!r}")
        check(err["status"] == "runtime_error" and '"unknown identifier"' in err["steps"][-1]["stdout"],
              f"lean4 plumbing (error): {err.get('status')} {err['steps'][-1]['stdout']!r}")
    finally:
        d.stop()


def main():
    bin_dir, cache_dir, case = sys.argv[1], sys.argv[2], sys.argv[3]
    if os.geteuid() != 0:
        skip("the toolchain tests run as root (CI and this machine are root)")
    if os.getpid() != 1:
        print("refusing to run outside the unshare wrapper (pid is not 1)")
        sys.exit(2)
    os.makedirs(cache_dir, exist_ok=True)
    if case == "fake_julia_lean":
        case_fake_julia_lean(bin_dir, cache_dir)
    else:
        extra = ["--cache-max-mib", "1"] if case == "cache_eviction" else []
        if case.startswith("cache"):  # a private compile cache, the shared detection cache
            private = tempfile.mkdtemp(prefix="sbtc-cache-")
            if os.path.exists(os.path.join(cache_dir, "toolchains.json")):
                shutil.copy(os.path.join(cache_dir, "toolchains.json"), private)
            cache_dir = private
        d = Daemon(bin_dir, cache_dir, *extra)
        try:
            c = Client(d.sock)
            if case.startswith("lang:"):
                case_language(d, c, case[5:])
            elif case.startswith("utf8_tuples:"):
                case_utf8_tuples(d, c, case[len("utf8_tuples:"):])
            elif case == "language_levels":
                case_language_levels(d, c, bin_dir)
            elif case == "cpp_matrix":
                case_cpp_matrix(d, c)
            elif case == "python_numpy":
                case_python_numpy(d, c)
            elif case == "java_names":
                case_java_names(d, c)
            elif case == "csharp_debug_assert":
                case_csharp_debug_assert(d, c)
            elif case == "cache":
                case_cache(d, c)
            elif case == "cache_restart":
                case_cache_restart(d, c, bin_dir, cache_dir)
            elif case == "cache_eviction":
                case_cache_eviction(d, c)
            else:
                print("unknown case", case)
                sys.exit(2)
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
