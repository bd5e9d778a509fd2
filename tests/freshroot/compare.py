"""Two regenerations of the same slice compared: the fidelity summary
(`--summary`) and every regenerated item of `--out` (<subset>.json).

Equal means: per subset and per group the same counts (n, ran, exact,
normalized, missing_toolchain, nondeterministic, internal_error), the same
mismatch classes with the same items, the same environment and
substitutions named (version numbers compared to their second component: a
Debian point release of the same toolchain is said, not failed), and per
item the same regenerated reference (`gt`), status, match, class, toolchain
name and profile. Times are not compared (they are the machine's), nor the
output of an item both runs found nondeterministic (its repeats differed).

An item that ran on another toolchain (name or version to its second
component) is explained, not failed, when either run names it as a
substitution (`exec.substituted`): this host may hold what a fresh machine
cannot (pyenv's Python 3.8 here), and the README promises the same answers
*or* being told exactly why not. Its differences, and the count and name
differences of the subset and group it belongs to, are notes. The same
toolchain with a different answer, or another toolchain nobody named, fails."""
import json
import os
import re

# Known random tokens in a reference: GCC's temporary object names in a
# linker error ("/tmp/ccKgDGJl.o": mkstemps), different on every machine
# (one compile cache hides it between repeats on one machine: DR item 60).
# Clang's are "/tmp/<source stem>-<6 hex>.o" ("/tmp/test-0936ff.o").
RANDOM_TOKENS = re.compile(r"/tmp/(?:cc[A-Za-z0-9]{6}\.(?:o|s|res|ltrans[0-9]*\.o)|[\w.+-]+-[0-9a-f]{6}\.o)\b")
COUNTS = ("n", "ran", "exact", "normalized", "missing_toolchain", "nondeterministic", "internal_error")
NAMES = ("environment", "substituted")
VERSION = re.compile(r"\b(\d+\.\d+)(?:\.\d+)+\b")


def load(path):
    with open(path) as f:
        return json.load(f)


def short(v, n=160):
    s = json.dumps(v)
    return s if len(s) <= n else s[:n] + "..."


def major(text):
    return VERSION.sub(r"\1", text) if isinstance(text, str) else text


def compare_block(where, a, b, out, notes, explained=0):
    """One subset's or group's summary: a the host's, b the root's;
    explained: how many of its items ran on other, named toolchains."""
    sink, why = (notes, f" (explained: {explained} item(s) on another toolchain, named)") if explained else (out, "")
    slack = max(a.get("nondeterministic") or 0, b.get("nondeterministic") or 0)
    for k in COUNTS:
        if a.get(k) != b.get(k):
            # a nondeterministic item may match by chance in one run
            chance = k in ("exact", "normalized") and abs((a.get(k) or 0) - (b.get(k) or 0)) <= slack
            (out if k in ("n", "internal_error") else notes if chance else sink).append(
                f"{where}: {k} host {a.get(k)} root {b.get(k)}{why}{' (within its nondeterministic items)' if chance else ''}")
    for k in NAMES:
        if major(a.get(k)) != major(b.get(k)):
            sink.append(f"{where}: {k} host {short(a.get(k))} root {short(b.get(k))}{why}")
        elif a.get(k) != b.get(k):
            notes.append(f"{where}: {k} differs in a point release: host {short(a.get(k))} root {short(b.get(k))}")
    ma, mb = a.get("mismatches") or {}, b.get("mismatches") or {}
    for cls in sorted(set(ma) | set(mb)):
        if sorted(ma.get(cls) or []) != sorted(mb.get(cls) or []):
            sink.append(f"{where}: mismatches {cls} host {ma.get(cls)} root {mb.get(cls)}{why}")


def compare_summaries(host, root, out, notes, explained=None):
    """explained: {(subset, group): count} of items on other, named toolchains."""
    explained = explained or {}
    for subset in sorted(set(host) | set(root)):
        a, b = host.get(subset), root.get(subset)
        if not isinstance(a, dict) or not isinstance(b, dict):
            out.append(f"{subset}: in the summary of {'root' if a is None else 'host'} only")
            continue
        in_subset = sum(n for (s_, _g), n in explained.items() if s_ == subset)
        compare_block(subset, a, b, out, notes, in_subset)
        ga, gb = a.get("by") or {}, b.get("by") or {}
        for g in sorted(set(ga) | set(gb)):
            if g not in ga or g not in gb:
                out.append(f"{subset}/{g}: group in {'host' if g in ga else 'root'} only")
            else:
                compare_block(f"{subset}/{g}", ga[g], gb[g], out, notes, explained.get((subset, g), 0))


def item_view(it):
    e = it.get("exec") or {}
    tc = e.get("toolchain") or {}
    gt = it.get("gt")
    if isinstance(gt, str):
        gt = RANDOM_TOKENS.sub("/tmp/ccXXXXXX.o", gt)
    return {"gt": gt, "status": e.get("status"), "matched": e.get("matched"), "class": e.get("class"),
            "toolchain": tc.get("name"), "profile": (e.get("profile") or {}).get("name"),
            "substituted": e.get("substituted")}


def regenerated(path):
    """index -> item for the items of a --out file that ran."""
    return {i: it for i, it in enumerate(load(path)) if (it.get("exec") or {}).get("regenerated")}


def toolchain_key(it):
    tc = (it.get("exec") or {}).get("toolchain") or {}
    return tc.get("name"), major(tc.get("version") or "")


def named(it):
    return bool((it.get("exec") or {}).get("substituted"))


def explained_items(host_dir, root_dir, subsets):
    """{(subset, group): count} of items that ran on different toolchains
    in the two runs, with the substitution named by either."""
    ex = {}
    for subset in subsets:
        pa, pb = os.path.join(host_dir, subset + ".json"), os.path.join(root_dir, subset + ".json")
        if not os.path.exists(pa) or not os.path.exists(pb):
            continue
        a, b = regenerated(pa), regenerated(pb)
        for i in set(a) & set(b):
            if toolchain_key(a[i]) != toolchain_key(b[i]) and (named(a[i]) or named(b[i])):
                g = (b[i].get("exec") or {}).get("group")
                ex[(subset, g)] = ex.get((subset, g), 0) + 1
    return ex


def compare_items(host_dir, root_dir, subsets, out, notes):
    for subset in subsets:
        pa, pb = os.path.join(host_dir, subset + ".json"), os.path.join(root_dir, subset + ".json")
        if not os.path.exists(pa) or not os.path.exists(pb):
            out.append(f"{subset}.json: missing in {'host' if not os.path.exists(pa) else 'root'}")
            continue
        a, b = regenerated(pa), regenerated(pb)
        for i in sorted(set(a) | set(b)):
            if i not in a or i not in b:
                out.append(f"{subset}[{i}]: regenerated in {'host' if i in a else 'root'} only")
                continue
            va, vb = item_view(a[i]), item_view(b[i])
            nondet = [not (x.get("exec") or {}).get("deterministic", True) for x in (a[i], b[i])]
            if nondet[0] and nondet[1]:  # its output changes from run to run: that it does is what must agree
                for k in ("gt", "matched", "class"):
                    va.pop(k)
                    vb.pop(k)
            other = toolchain_key(a[i]) != toolchain_key(b[i])
            sink = notes if other and (named(a[i]) or named(b[i])) else out
            why = f" (ran on {toolchain_key(a[i])} here, {toolchain_key(b[i])} there, named)" if sink is notes else ""
            for k in va:
                if va[k] != vb[k]:
                    sink.append(f"{subset}[{i}] {k}: host {short(va[k])} root {short(vb[k])}{why}")
            ta, tb = (a[i]["exec"].get("toolchain") or {}), (b[i]["exec"].get("toolchain") or {})
            if ta.get("version") != tb.get("version"):
                notes.append(f"{subset}[{i}] toolchain version: host {ta.get('version')} root {tb.get('version')}")


def compare_runs(host_dir, root_dir, subsets):
    """(differences, notes): differences fail the test, notes are said."""
    out, notes = [], []
    compare_summaries(load(os.path.join(host_dir, "summary.json")), load(os.path.join(root_dir, "summary.json")),
                      out, notes, explained_items(host_dir, root_dir, subsets))
    compare_items(host_dir, root_dir, subsets, out, notes)
    return out, notes
