# Each function returns one value; its `return` event's val is checked by
# test_values.py against a hand-written rendering. Hostile objects print or
# raise if anything but the instance dict is touched: stdout must stay "ok".
import collections
import fractions
import re
import sys


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class Loud:
    def __init__(self):
        self.a = 1

    def __repr__(self):
        print("REPR RAN")
        return "Loud!"

    def __getattr__(self, name):
        print("GETATTR RAN", name)
        raise AttributeError(name)

    @property
    def p(self):
        print("PROPERTY RAN")
        return 5


class Masked:
    @property
    def __class__(self):
        print("CLASS PROPERTY RAN")
        return int

    @property
    def __dict__(self):
        print("DICT PROPERTY RAN")
        return {"fake": 1}


class Slotted:
    __slots__ = ("u", "v")

    def __init__(self):
        self.u = 1


class LoudDict(dict):
    def __iter__(self):
        print("ITER RAN")
        return iter([])

    def items(self):
        print("ITEMS RAN")
        return []


class BadStr(Exception):
    def __str__(self):
        print("STR RAN")
        raise RuntimeError("no")


def gen():
    yield 1


def v_int(): return -42
def v_bool(): return True
def v_float(): return 0.1 + 0.2
def v_complex(): return complex(1, -2)
def v_none(): return None
def v_str(): return "it's \"q\"\n"
def v_longstr(): return "a" * 300
def v_bytes(): return b"\x00ab"
def v_bytearray(): return bytearray(b"xy")
def v_tuple1(): return (1,)
def v_list(): return [1, "a", None, 2.5]
def v_longlist(): return list(range(40))
def v_dict(): return {"k": [1], 2: (3, 4)}
def v_set(): return {3, 1, 2}
def v_emptyset(): return set()
def v_frozenset(): return frozenset({5})
def v_range(): return range(2, 10, 3)
def v_slice(): return slice(1, None, 2)
def v_ellipsis(): return ...
def v_hugeint(): return 10 ** 5000
def v_bigint(): return 2 ** 70
def v_point(): return Point(1, [2])
def v_loud(): return Loud()
def v_masked(): return Masked()
def v_slotted(): return Slotted()
def v_louddict(): return LoudDict(a=1)
def v_function(): return v_int
def v_builtin(): return len
def v_class(): return Point
def v_module(): return sys
def v_method(): return Point(0, 0).__init__
def v_exc(): return ValueError("bad", 3)
def v_deep(): return [[[[[1]]]]]


def v_cycle():
    c = [1]
    c.append(c)
    return c


def v_alias():
    shared = [7]
    return [shared, shared]


def v_generator():
    g = gen()
    return g


def v_del():
    gone = 1
    del gone
    return 0


def v_pattern(): return re.compile("a+")  # a heap type from C (3.11+): the type name only, no number
def v_deque(): return collections.deque([1])
def v_fraction(): return fractions.Fraction(1, 2)  # a standard library class written in Python


def raise_badstr():
    raise BadStr("x")


keep = []  # every value stays alive: numbers are never reused (see test_values.py)
for f in [v_int, v_bool, v_float, v_complex, v_none, v_str, v_longstr, v_bytes, v_bytearray, v_tuple1, v_list,
          v_longlist, v_dict, v_set, v_emptyset, v_frozenset, v_range, v_slice, v_ellipsis, v_hugeint, v_bigint,
          v_point, v_loud, v_masked, v_slotted, v_louddict, v_function, v_builtin, v_class, v_module, v_method,
          v_exc, v_deep, v_cycle, v_alias, v_generator, v_del, v_pattern, v_deque, v_fraction]:
    keep.append(f())
try:
    raise_badstr()
except BadStr:
    pass
print("ok")
