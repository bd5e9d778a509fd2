#!/usr/bin/env python3
"""The house's shape for one folder, from its sources (issue 40's figures).

    python3 bench/house_figures.py [FOLDER ...]   (default: runners)

Per folder, over its *.c files:
  - edges: A -> B when A names a non-static function defined in B (a
    call, or the function's address handed on: a callback counts), or
    includes B's own header (B.h beside B.c); the shared headers
    (internal.h, sandbox.h, ...) with no .c of their name add no edge;
  - circles: the strongly connected components of more than one file, with
    their sizes and members;
  - arrows back up: inside each circle, the files put in an order that
    keeps as many edges as it can pointing down (Eades, Lin and Smyth's
    greedy order); the edges that still point up, each with the functions
    it calls. Zero for a folder with no circle;
  - the 10 longest functions (lines from the signature's first line to the
    closing brace).
Only the sources are read: rerun it on any tree (git stash, a worktree of
an older commit) for a before/after.
"""
import os
import re
import sys

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "defined", "alignof",
            "_Static_assert", "static_assert", "__attribute__", "typeof", "__typeof__", "offsetof"}
IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")


def strip_comments_strings(text):
    """Comments and string/char literals blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, is_static, first_line, last_line, body) of each function defined at column 0."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line[:1].isalpha() or line[:1] == "_":
            if line.startswith(("typedef", "struct", "enum", "union")) and "(" not in line:
                i += 1
                continue
            # the signature: up to the line whose end opens the body
            j = i
            one_line = re.match(r"[^;{}=]*\([^;{]*\)\s*\{.*\}\s*$", line)  # int f(void) { return 1; }
            if one_line:
                head = line.split("(")[0]
                m = re.search(r"([A-Za-z_]\w*)\s*$", head)
                if m and "=" not in head:
                    body = line[line.index("{") + 1:line.rindex("}")]
                    found.append((m.group(1), "static" in head.split(), i + 1, i + 1, body))
                i += 1
                continue
            while j < len(lines) and not lines[j].rstrip().endswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{") and "(" in " ".join(lines[i:j + 1]):
                sig = " ".join(lines[i:j + 1])
                head = sig.split("(")[0]
                if "=" not in head:
                    m = re.search(r"([A-Za-z_]\w*)\s*$", head)
                    k = j + 1
                    while k < len(lines) and not lines[k].startswith("}"):
                        k += 1
                    if m:
                        found.append((m.group(1), "static" in head.split(), i + 1, k + 1,
                                      "\n".join(lines[j + 1:k])))
                    i = k + 1
                    continue
        i += 1
    return found


def folder_figures(folder):
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c"))
    text = {}
    for f in files:
        with open(os.path.join(folder, f), encoding="utf-8", errors="replace") as fh:
            text[f] = strip_comments_strings(fh.read())
    defs, funcs = {}, []
    for f in files:
        for name, static, a, b, body in functions(text[f]):
            funcs.append((b - a + 1, f, name))
            if not static:
                defs.setdefault(name, f)
    edges = {f: {} for f in files}
    for f in files:
        # every name in the file, not only calls inside bodies: a function handed on as a
        # callback, or put in a file-scope table, is an arrow as much as a call is
        for name in set(IDENT.findall(text[f])):
            if name in KEYWORDS:
                continue
            g = defs.get(name)
            if g and g != f:
                edges[f].setdefault(g, set()).add(name)
        with open(os.path.join(folder, f), encoding="utf-8", errors="replace") as fh:
            for inc in re.findall(r'^#include\s+"([^"]+)\.h"', fh.read(), re.M):
                g = os.path.basename(inc) + ".c"
                if g in edges and g != f:
                    edges[f].setdefault(g, set()).add("#include")
    return files, edges, sorted(funcs, reverse=True)


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def greedy_order(comp, edges):
    """Eades-Lin-Smyth: sinks to the end, sources to the front, else the
    node with the largest out-minus-in degree first."""
    left = set(comp)
    front, back = [], []

    def outs(v):
        return [w for w in edges[v] if w in left and w != v]

    def ins(v):
        return [u for u in left if u != v and v in edges[u]]

    while left:
        changed = True
        while changed:
            changed = False
            for v in sorted(left):
                if not outs(v):
                    back.insert(0, v)
                    left.discard(v)
                    changed = True
            for v in sorted(left):
                if not ins(v):
                    front.append(v)
                    left.discard(v)
                    changed = True
        if left:
            v = max(sorted(left), key=lambda v: len(outs(v)) - len(ins(v)))
            front.append(v)
            left.discard(v)
    return front + back


def report(folder):
    files, edges, funcs = folder_figures(folder)
    comps = [c for c in sccs(files, edges) if len(c) > 1]
    comps.sort(key=len, reverse=True)
    print(f"== {folder}: {len(files)} .c files, {sum(len(e) for e in edges.values())} file-to-file arrows")
    print(f"circles: {len(comps)}; sizes: {[len(c) for c in comps] or 0}; largest: {len(comps[0]) if comps else 0}")
    total_back = 0
    for c in comps:
        order = greedy_order(c, edges)
        pos = {v: i for i, v in enumerate(order)}
        back = [(a, b) for a in c for b in edges[a] if b in pos and pos[b] < pos[a]]
        total_back += len(back)
        print(f"  circle of {len(c)}: {' '.join(order)}")
        for a, b in sorted(back):
            print(f"    back up: {a} -> {b} ({', '.join(sorted(edges[a][b]))})")
    print(f"arrows back up: {total_back}")
    print("longest functions:")
    for n, f, name in funcs[:10]:
        print(f"  {n:4d} {f} {name}")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in sys.argv[1:] or ["runners"]:
        report(folder if os.path.isabs(folder) else os.path.join(root, folder))


if __name__ == "__main__":
    main()
