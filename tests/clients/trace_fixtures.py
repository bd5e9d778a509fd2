"""Hand-written traces in surgebox trace format v1, as the tracer would write them (CPython 3.11,
sys.settrace) for small programs. Each program's source is here too, line numbers as in the trace.
Expected answers live in the tests, worked out by hand from these listings."""
import json

HEAD = {"t": "head", "v": 1, "lang": "python", "impl": "CPython", "version": "3.11.2", "mech": "settrace",
        "hash_seed": "0", "files": ["/app/main.py"], "entry": 0, "argv": ["main.py"],
        "limits": {"events": 1000000, "bytes": 67108864, "value_chars": 256, "items": 32, "nest": 4,
                   "depth": 256, "snapshot_every": 64}}


def I(n):
    return ["int", str(n)]


def S(s):
    return ["str", repr(s)]


def FN(name):
    return ["function", "<function %s>" % name]


def jsonl(rows, end=None):
    """rows: (k, fr, up, d, ln, fn, extra dict) -> the trace text, i numbered from 0."""
    out = [json.dumps(HEAD)]
    for i, (k, fr, up, d, ln, fn, extra) in enumerate(rows):
        rec = {"t": "ev", "i": i, "k": k, "fr": fr, "up": up, "d": d, "f": 0, "ln": ln, "fn": fn}
        rec.update(extra)
        out.append(json.dumps(rec))
    if end is None:
        end = {"t": "end", "status": "complete", "events": len(rows), "exit": {"code": 0}}
    out.append(json.dumps(end))
    return "\n".join(out) + "\n"


# ---- A: a CRUXEval-like f calling a helper in a loop ---------------------------------------
SRC_A = """def g(x):
    return x * 2

def f(s, n):
    out = []
    for c in s:
        out.append(g(n))
    return out

assert f('ab', 3) == [6, 6]
"""
M, F2 = "<module>", "f"
ROWS_A = [
    ("call", 1, None, 0, 1, M, {"loc": {}}),                                    # 0
    ("line", 1, None, 0, 1, M, {"loc": {}}),                                    # 1
    ("line", 1, None, 0, 4, M, {"loc": {"g": FN("g")}}),                        # 2
    ("line", 1, None, 0, 10, M, {"loc": {"f": FN("f")}}),                       # 3
    ("call", 2, 1, 1, 4, "f", {"loc": {"s": S("ab"), "n": I(3)}}),              # 4
    ("line", 2, 1, 1, 5, "f", {"loc": {}}),                                     # 5
    ("line", 2, 1, 1, 6, "f", {"loc": {"out": ["list", "#1[]"]}}),              # 6
    ("line", 2, 1, 1, 7, "f", {"loc": {"c": S("a")}}),                          # 7
    ("call", 3, 2, 2, 1, "g", {"loc": {"x": I(3)}}),                            # 8
    ("line", 3, 2, 2, 2, "g", {"loc": {}}),                                     # 9
    ("return", 3, 2, 2, 2, "g", {"loc": {}, "val": I(6)}),                      # 10
    ("line", 2, 1, 1, 6, "f", {"loc": {"s": S("ab"), "n": I(3), "out": ["list", "#1[6]"], "c": S("a")}}),  # 11
    ("line", 2, 1, 1, 7, "f", {"loc": {"c": S("b")}}),                          # 12
    ("call", 4, 2, 2, 1, "g", {"loc": {"x": I(3)}}),                            # 13
    ("line", 4, 2, 2, 2, "g", {"loc": {}}),                                     # 14
    ("return", 4, 2, 2, 2, "g", {"loc": {}, "val": I(6)}),                      # 15
    ("line", 2, 1, 1, 6, "f", {"loc": {"s": S("ab"), "n": I(3), "out": ["list", "#1[6, 6]"], "c": S("b")}}),  # 16
    ("line", 2, 1, 1, 8, "f", {"loc": {}}),                                     # 17
    ("return", 2, 1, 1, 8, "f", {"loc": {}, "val": ["list", "#1[6, 6]"]}),      # 18
    ("return", 1, None, 0, 10, M, {"loc": {"g": FN("g"), "f": FN("f")}, "val": ["NoneType", "None"]}),  # 19
]
TRACE_A = jsonl(ROWS_A)

# ---- B: a generator consumed by a for loop, an exception raised by C code and caught ----------
SRC_B = """def gen(n):
    for k in range(n):
        yield k * k

def f(n):
    total = 0
    for v in gen(n):
        total += v
    try:
        int('x')
    except ValueError:
        total = -total
    return total

f(2)
"""
EXC_B = {"ty": "ValueError", "msg": "invalid literal for int() with base 10: 'x'"}
ROWS_B = [
    ("call", 1, None, 0, 1, M, {"loc": {}}),                                    # 0
    ("line", 1, None, 0, 1, M, {"loc": {}}),                                    # 1
    ("line", 1, None, 0, 5, M, {"loc": {"gen": FN("gen")}}),                    # 2
    ("line", 1, None, 0, 15, M, {"loc": {"f": FN("f")}}),                       # 3
    ("call", 2, 1, 1, 5, "f", {"loc": {"n": I(2)}}),                            # 4
    ("line", 2, 1, 1, 6, "f", {"loc": {}}),                                     # 5
    ("line", 2, 1, 1, 7, "f", {"loc": {"total": I(0)}}),                        # 6
    ("call", 3, 2, 2, 1, "gen", {"loc": {"n": I(2)}}),                          # 7
    ("line", 3, 2, 2, 2, "gen", {"loc": {}}),                                   # 8
    ("line", 3, 2, 2, 3, "gen", {"loc": {"k": I(0)}}),                          # 9
    ("yield", 3, 2, 2, 3, "gen", {"loc": {}, "val": I(0)}),                     # 10
    ("line", 2, 1, 1, 8, "f", {"loc": {"n": I(2), "total": I(0), "v": I(0)}}),  # 11
    ("line", 2, 1, 1, 7, "f", {"loc": {}}),                                     # 12
    ("resume", 3, 2, 2, 3, "gen", {"loc": {"n": I(2), "k": I(0)}}),             # 13
    ("line", 3, 2, 2, 2, "gen", {"loc": {}}),                                   # 14
    ("line", 3, 2, 2, 3, "gen", {"loc": {"k": I(1)}}),                          # 15
    ("yield", 3, 2, 2, 3, "gen", {"loc": {}, "val": I(1)}),                     # 16
    ("line", 2, 1, 1, 8, "f", {"loc": {"n": I(2), "total": I(0), "v": I(1)}}),  # 17
    ("line", 2, 1, 1, 7, "f", {"loc": {"total": I(1)}}),                        # 18
    ("resume", 3, 2, 2, 3, "gen", {"loc": {"n": I(2), "k": I(1)}}),             # 19
    ("line", 3, 2, 2, 2, "gen", {"loc": {}}),                                   # 20
    ("return", 3, 2, 2, 2, "gen", {"loc": {}, "val": ["NoneType", "None"]}),    # 21
    ("line", 2, 1, 1, 9, "f", {"loc": {"n": I(2), "total": I(1), "v": I(1)}}),  # 22
    ("line", 2, 1, 1, 10, "f", {"loc": {}}),                                    # 23
    ("exception", 2, 1, 1, 10, "f", {"loc": {}, "exc": EXC_B}),                 # 24
    ("line", 2, 1, 1, 11, "f", {"loc": {}}),                                    # 25
    ("handled", 2, 1, 1, 12, "f", {"loc": {}, "exc": EXC_B}),                   # 26 (caught: before the except block)
    ("line", 2, 1, 1, 12, "f", {"loc": {}}),                                    # 27
    ("line", 2, 1, 1, 13, "f", {"loc": {"total": I(-1)}}),                      # 28
    ("return", 2, 1, 1, 13, "f", {"loc": {}, "val": I(-1)}),                    # 29
    ("return", 1, None, 0, 15, M, {"loc": {"gen": FN("gen"), "f": FN("f")}, "val": ["NoneType", "None"]}),  # 30
]
TRACE_B = jsonl(ROWS_B)

# ---- C: lambdas called from C (sorted), with (its exit runs line 11 again), a comprehension, eval
#         calling back, recursion
#         ending in an uncaught exception (CPython 3.11's settrace gives the same call/line/return/
#         exception sequence for this program) ---------------------------------------------------
SRC_C = """def fact(n):
    if n <= 1:
        raise ValueError('base')
    return n * fact(n - 1)

def twice(k):
    return 2 * k

def f(xs):
    ys = sorted(xs, key=lambda x: -x)
    with open('/dev/null') as fh:
        sq = [y * y for y in ys]
    total = eval('twice(len(sq))')
    return fact(2) + total

f([1, 2])
"""
EXC_C = {"ty": "ValueError", "msg": "base"}
XS, YS, FH, SQ = ["list", "#1[1, 2]"], ["list", "#2[2, 1]"], ["TextIOWrapper", "<TextIOWrapper>"], ["list", "#4[4, 1]"]
MODC = {"fact": FN("fact"), "twice": FN("twice"), "f": FN("f")}
ROWS_C = [
    ("call", 1, None, 0, 1, M, {"loc": {}}),                                    # 0
    ("line", 1, None, 0, 1, M, {"loc": {}}),                                    # 1
    ("line", 1, None, 0, 6, M, {"loc": {"fact": FN("fact")}}),                  # 2
    ("line", 1, None, 0, 9, M, {"loc": {"twice": FN("twice")}}),                # 3
    ("line", 1, None, 0, 16, M, {"loc": {"f": FN("f")}}),                       # 4
    ("call", 2, 1, 1, 9, "f", {"loc": {"xs": XS}}),                             # 5
    ("line", 2, 1, 1, 10, "f", {"loc": {}}),                                    # 6
    ("call", 3, 2, 2, 10, "<lambda>", {"loc": {"x": I(1)}}),                    # 7
    ("line", 3, 2, 2, 10, "<lambda>", {"loc": {}}),                             # 8
    ("return", 3, 2, 2, 10, "<lambda>", {"loc": {}, "val": I(-1)}),             # 9
    ("call", 4, 2, 2, 10, "<lambda>", {"loc": {"x": I(2)}}),                    # 10
    ("line", 4, 2, 2, 10, "<lambda>", {"loc": {}}),                             # 11
    ("return", 4, 2, 2, 10, "<lambda>", {"loc": {}, "val": I(-2)}),             # 12
    ("line", 2, 1, 1, 11, "f", {"loc": {"xs": XS, "ys": YS}}),                  # 13
    ("line", 2, 1, 1, 12, "f", {"loc": {"fh": FH}}),                            # 14
    ("call", 5, 2, 2, 12, "<listcomp>", {"loc": {".0": ["list_iterator", "<list_iterator>"]}}),  # 15
    ("line", 5, 2, 2, 12, "<listcomp>", {"loc": {}}),                           # 16
    ("line", 5, 2, 2, 12, "<listcomp>", {"loc": {"y": I(2)}}),                  # 17
    ("line", 5, 2, 2, 12, "<listcomp>", {"loc": {"y": I(1)}}),                  # 18
    ("return", 5, 2, 2, 12, "<listcomp>", {"loc": {}, "val": SQ}),              # 19
    ("line", 2, 1, 1, 11, "f", {"loc": {"xs": XS, "ys": YS, "fh": FH, "sq": SQ}}),  # 20: the with's exit
    ("line", 2, 1, 1, 13, "f", {"loc": {}}),                                    # 21
    ("call", 6, 2, 2, 6, "twice", {"loc": {"k": I(2)}}),                        # 22
    ("line", 6, 2, 2, 7, "twice", {"loc": {}}),                                 # 23
    ("return", 6, 2, 2, 7, "twice", {"loc": {}, "val": I(4)}),                  # 24
    ("line", 2, 1, 1, 14, "f", {"loc": {"xs": XS, "ys": YS, "fh": FH, "sq": SQ, "total": I(4)}}),  # 25
    ("call", 7, 2, 2, 1, "fact", {"loc": {"n": I(2)}}),                         # 26
    ("line", 7, 2, 2, 2, "fact", {"loc": {}}),                                  # 27
    ("line", 7, 2, 2, 4, "fact", {"loc": {}}),                                  # 28
    ("call", 8, 7, 3, 1, "fact", {"loc": {"n": I(1)}}),                         # 29
    ("line", 8, 7, 3, 2, "fact", {"loc": {}}),                                  # 30
    ("line", 8, 7, 3, 3, "fact", {"loc": {}}),                                  # 31
    ("exception", 8, 7, 3, 3, "fact", {"loc": {}, "exc": EXC_C}),               # 32
    ("unwind", 8, 7, 3, 3, "fact", {"loc": {}, "exc": EXC_C}),                  # 33
    ("exception", 7, 2, 2, 4, "fact", {"loc": {"n": I(2)}, "exc": EXC_C}),      # 34
    ("unwind", 7, 2, 2, 4, "fact", {"loc": {}, "exc": EXC_C}),                  # 35
    ("exception", 2, 1, 1, 14, "f", {"loc": {"xs": XS, "ys": YS, "fh": FH, "sq": SQ, "total": I(4)}, "exc": EXC_C}),  # 36
    ("unwind", 2, 1, 1, 14, "f", {"loc": {}, "exc": EXC_C}),                    # 37
    ("exception", 1, None, 0, 16, M, {"loc": dict(MODC), "exc": EXC_C}),        # 38
    ("unwind", 1, None, 0, 16, M, {"loc": {}, "exc": EXC_C}),                   # 39
]
TRACE_C = jsonl(ROWS_C, {"t": "end", "status": "complete", "events": len(ROWS_C),
                         "exit": {"exception": EXC_C}})

# ---- T: a thread the program starts, its events between the main thread's (th on its records) -
SRC_T = """import threading
def work(n):
    s = n + 1
    return s
t = threading.Thread(target=work, args=(1,))
t.start()
r = work(5)
t.join()
"""
TH = ["threading.Thread", "threading.Thread(_target=<function work>)"]
ROWS_T = [
    # (k, fr, up, d, ln, fn, extra), th in extra for thread 1; the main thread's index in a comment
    ("call", 1, None, 0, 1, M, {"loc": {}}),                                    # main 0
    ("line", 1, None, 0, 1, M, {}),                                             # main 1
    ("line", 1, None, 0, 2, M, {}),                                             # main 2
    ("line", 1, None, 0, 5, M, {}),                                             # main 3
    ("line", 1, None, 0, 6, M, {"loc": {"t": TH}}),                             # main 4
    ("call", 2, None, 0, 2, "work", {"th": 1, "loc": {"n": I(1)}}),             # thread 1: 0
    ("line", 1, None, 0, 7, M, {}),                                             # main 5
    ("line", 2, None, 0, 3, "work", {"th": 1}),                                 # thread 1: 1
    ("call", 3, 1, 1, 2, "work", {"loc": {"n": I(5)}}),                         # main 6
    ("line", 2, None, 0, 4, "work", {"th": 1, "loc": {"s": I(2)}}),             # thread 1: 2
    ("line", 3, 1, 1, 3, "work", {}),                                           # main 7
    ("return", 2, None, 0, 4, "work", {"th": 1, "val": I(2)}),                  # thread 1: 3
    ("line", 3, 1, 1, 4, "work", {"loc": {"s": I(6)}}),                         # main 8
    ("return", 3, 1, 1, 4, "work", {"val": I(6)}),                              # main 9
    ("line", 1, None, 0, 8, M, {"loc": {"t": TH, "r": I(6)}}),                  # main 10
    ("return", 1, None, 0, 8, M, {"loc": {"t": TH, "r": I(6)}, "val": ["NoneType", "None"]}),  # main 11
]


def _thread_first(rows):
    """th goes right after k, as the tracer writes it."""
    out = []
    for k, fr, up, d, ln, fn, extra in rows:
        if "th" in extra:
            extra = dict(extra)
            th = extra.pop("th")
            out.append((k, fr, up, d, ln, fn, dict({"th": th}, **extra)))
        else:
            out.append((k, fr, up, d, ln, fn, extra))
    return out


TRACE_T = jsonl(_thread_first(ROWS_T))
