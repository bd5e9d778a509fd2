#!/usr/bin/env python3
"""Circles in a folder's call graph (issue 40): an arrow runs from a .c file
to each other .c file of the same folder that defines a function it names
(a call, or a prototype written in the .c: a name, not an include, is what
ties two files). Prints each circle (strongly connected set) larger than
one file, its size, and the largest; exit 1 when one is larger than --max.

    bench/include_circles.py daemon [runners ...] [--max 2]
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEF = re.compile(r"^[A-Za-z_][\w \*]*?\b([a-z]\w*)\s*\([^;]*$", re.M)
NAME = re.compile(r"\b([a-z]\w*)\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", re.S)


def graph(folder):
    files = sorted(f for f in os.listdir(os.path.join(ROOT, folder)) if f.endswith(".c"))
    text, owner = {}, {}
    for f in files:
        with open(os.path.join(ROOT, folder, f), encoding="utf-8") as h:
            text[f] = COMMENT.sub(" ", h.read())
        for m in DEF.finditer(text[f]):
            line = text[f][m.start():text[f].find("\n", m.start())]
            if line.startswith("static") or m.group(1) in ("if", "for", "while", "switch", "return"):
                continue
            owner.setdefault(m.group(1), f)
    edges = {f: set() for f in files}
    for f in files:
        for name in set(NAME.findall(text[f])):
            g = owner.get(name)
            if g and g != f:
                edges[f].add(g)
    return edges


def circles(edges):
    """Tarjan's strongly connected components, those of two files or more."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--max", type=int, default=0, help="exit 1 when a circle is larger than this (0: never)")
    args = ap.parse_args()
    worst = 0
    for folder in args.folders:
        edges = graph(folder)
        cs = circles(edges)
        largest = max((len(c) for c in cs), default=1)
        worst = max(worst, largest)
        print(f"{folder}: {len(edges)} files, {len(cs)} circles, largest {largest}")
        for c in cs:
            print(f"  {len(c)}: {' '.join(c)}")
    return 1 if args.max and worst > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
