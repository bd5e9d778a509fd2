"""Hand-written expectations for the C and C++ corpus (tests/trace/c/*.c,
*.cpp), from reading each program with the rules of PROTOCOL.md "Traces",
"C and C++": a call event at the function's line, then a line event per
line about to run (several line-table rows of one line make one event,
unless the frame jumped back), the closing brace's line (the epilogue)
before each return, no new event when a callee returns into the middle of
the caller's line. Never produced by the tracer and pasted.

events: "k fn ln" for every event in order. values: (event index, name,
expected repr) on that event's state (the frame's locals after applying
loc diffs), "=NAME@I" meaning the same object number as NAME's at event I.
"""

CASES = {
    "fact": {
        "toolchain": "gcc", "stdout": "6\n", "exit": {"code": 0},
        "events": ["call main 9", "line main 10",
                   "call fact 3", "line fact 4", "line fact 6",
                   "call fact 3", "line fact 4", "line fact 6",
                   "call fact 3", "line fact 4", "line fact 5", "line fact 7", "return fact 7",
                   "line fact 7", "return fact 7",
                   "line fact 7", "return fact 7",
                   "line main 11", "line main 12", "line main 13", "return main 13"],
        "vals": {12: "1", 14: "2", 16: "6", 20: "0"},
        "values": [(2, "n", "3"), (5, "n", "2"), (8, "n", "1"), (13, "n", "2"), (17, "r", "6")],
        "depths": {2: 1, 5: 2, 8: 3},
    },
    "loop_array": {  # -O2 asked: the trace's compile step is at -O0 -g all the same
        "toolchain": "gcc", "options": {"opt": "O2"}, "stdout": "26\n", "exit": {"code": 0},
        "events": ["call main 3", "line main 4", "line main 5", "line main 6",
                   "line main 7", "line main 6", "line main 7", "line main 6", "line main 7", "line main 6",
                   "line main 7", "line main 6", "line main 9", "line main 10", "line main 11", "return main 11"],
        "values": [(2, "a", "[5, 6, 7, 8]"), (4, "i", "0"), (4, "sum", "0"), (6, "i", "1"), (6, "sum", "5"),
                   (12, "sum", "26")],
        "vals": {15: "0"},
    },
    "structs": {
        "toolchain": "gcc", "stdout": "4 2\n", "exit": {"code": 0},
        "events": ["call main 12", "line main 13", "line main 14", "line main 15",
                   "call move 8", "line move 9", "line move 10", "return move 10",
                   "line main 16", "line main 17", "line main 18", "return main 18"],
        "values": [(2, "a", "{x=1, y=2}"), (3, "q", "=a@3"), (4, "p", "=a@3"), (4, "dx", "3"),
                   (8, "a", "{x=4, y=2}"), (8, "q", "=a@3")],
        "vals": {11: "0"},
    },
    "segv": {
        "toolchain": "gcc", "stdout": "before\n", "exit": {"signal": 11},
        "events": ["call main 7", "line main 8", "line main 9", "line main 10",
                   "call poke 3", "line poke 4", "exception poke 4"],
        "values": [(5, "p", "NULL")],
        "exc": {6: {"ty": "SIGSEGV", "msg": "Segmentation fault"}},
    },
    "exit3": {
        "toolchain": "gcc", "stdout": "", "exit": {"code": 3},
        "events": ["call main 7", "line main 8", "call quit 3", "line quit 4"],
        "values": [(2, "code", "3")],
    },
    "stdin": {
        "toolchain": "gcc", "stdin": "3\n4 5 6\n", "stdout": "15\n", "exit": {"code": 0},
        "events": ["call main 3", "line main 4", "line main 5", "line main 7",
                   "line main 8", "line main 9", "line main 7", "line main 8", "line main 9", "line main 7",
                   "line main 8", "line main 9", "line main 7", "line main 11", "line main 12", "line main 13",
                   "return main 13"],
        "values": [(3, "n", "3"), (5, "x", "4"), (8, "x", "5"), (11, "x", "6"), (13, "total", "15")],
        "vals": {16: "0"},
    },
    "scalars": {
        "toolchain": "gcc", "stdout": "3 A 0.1 0.1\n", "exit": {"code": 0},
        "events": ["call main 4", "line main 5", "line main 6", "line main 7", "line main 8", "line main 9",
                   "line main 10", "line main 11", "line main 12", "return main 12"],
        "values": [(6, "s", "~ \"hi\\n\""), (6, "c", "65 'A'"), (6, "d", "0.1"), (6, "f", "0.1"), (6, "n", "3")],
        "types": [(6, "s", "const char *"), (6, "c", "char"), (6, "d", "double"), (6, "f", "float"),
                  (6, "n", "size_t")],
    },
    "callback": {
        "toolchain": "gcc", "stdout": "1 2\n", "exit": {"code": 0},
        "events": ["call main 8", "line main 9", "line main 10",
                   "call cmp 4", "line cmp 5", "line cmp 6", "return cmp 6",
                   "line main 11", "line main 12", "line main 13", "return main 13"],
        "values": [(2, "v", "[2, 1]"), (7, "v", "[1, 2]")],
        "vals": {6: "1", 10: "0"},
        "depths": {3: 1},
        "ups": {3: 0},
    },
    "counter": {
        "toolchain": "g++", "stdout": "6\n", "exit": {"code": 0},
        "events": ["call main() 9", "line main() 10", "line main() 11", "line main() 12", "line main() 13",
                   "call Counter::add(int) 6", "line Counter::add(int) 6", "return Counter::add(int) 6",
                   "line main() 12", "line main() 13",
                   "call Counter::add(int) 6", "line Counter::add(int) 6", "return Counter::add(int) 6",
                   "line main() 12", "line main() 13",
                   "call Counter::add(int) 6", "line Counter::add(int) 6", "return Counter::add(int) 6",
                   "line main() 12", "line main() 14", "line main() 15", "line main() 16", "return main() 16"],
        "values": [(2, "c", "{n=0}"), (5, "k", "1"), (5, "this", "=c@2"), (15, "k", "3"), (19, "c", "{n=6}")],
        "vals": {22: "0"},
    },    # the value rules: 40 items cut at 32, an enum's name, _Bool, unsigned char, a double's repr, a
    # function pointer, a wild char pointer, a struct pointing at itself, a pointer into an array
    "values": {
        "toolchain": "gcc", "stdout": "10 240\n", "exit": {"code": 0},
        "events": ["call main 10", "line main 12"] + ["line main 13", "line main 12"] * 40
                  + ["line main %d" % n for n in range(14, 25)]
                  + ["call twice 8", "line twice 8", "return twice 8", "line main 25", "line main 26",
                     "return main 26"],
        "values": [(92, "big", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, …(+8 items)]"), (92, "c", "GREEN"), (92, "flag", "true"),
                   (92, "u", "200 '\\xc8'"), (92, "neg", "-7"), (92, "third", "0.3333333333333333"),
                   (92, "fp", "<function twice>"), (92, "wild", "~ <unreadable>"),
                   (92, "o", "re:#(\\d+)\\{in=\\{v=\\[1, 2\\]\\}, self=#\\1\\}"), (92, "inside", "=big@92+12")],
        "types": [(92, "c", "enum color"), (92, "flag", "_Bool"), (92, "u", "unsigned char"), (92, "neg", "long"),
                  (92, "fp", "int (*)(int)"), (92, "o", "struct outer")],
        "vals": {95: "10", 98: "0"},
    },
    # a C++ exception: thrown in check (exception), check left by it (unwind), caught in safe
    # (exception there, then the catch clause's lines: __cxa_begin_catch on 13, __cxa_end_catch on 15)
    "throw": {
        "toolchain": "g++", "stdout": "2 -1\n", "exit": {"code": 0},
        "events": ["call main() 18", "line main() 19",
                   "call safe(int) 10", "line safe(int) 12",
                   "call check(int) 4", "line check(int) 5", "line check(int) 7", "line check(int) 8",
                   "return check(int) 8", "line safe(int) 16", "return safe(int) 16",
                   "call safe(int) 10", "line safe(int) 12",
                   "call check(int) 4", "line check(int) 5", "line check(int) 6", "exception check(int) 6",
                   "unwind check(int) 6", "exception safe(int) 12", "line safe(int) 13", "line safe(int) 14",
                   "line safe(int) 15", "line safe(int) 16", "return safe(int) 16",
                   "line main() 20", "line main() 21", "return main() 21"],
        "values": [(13, "x", "-5")],
        "vals": {8: "2", 10: "2", 23: "-1", 26: "0"},
        "exc": {16: {"ty": "std::invalid_argument", "msg": ""}, 17: {"ty": "std::invalid_argument", "msg": ""}, 18: {"ty": "std::invalid_argument", "msg": ""}},
    },
}
