"""Value rendering (PROTOCOL.md "Traces", values): values/main.py returns
one value per function; each `return` event's val must be exactly the
hand-written [type, repr] below, on every installed Python. The hostile
objects print if their __repr__, properties, __getattr__, __class__,
__iter__ or __str__ ran: stdout must be exactly the program's own "ok"."""
import os
import sys
import tempfile
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracerun  # noqa: E402

# Object numbers are first-seen (#1 is main.py's `keep`, which holds every
# value so that no number is reused: like id(), a number is reused once its
# object is gone, and which one depends on the allocator of the version).
EXPECTED = {
    "v_int": ["int", "-42"],
    "v_bool": ["bool", "True"],
    "v_float": ["float", "0.30000000000000004"],
    "v_complex": ["complex", "(1-2j)"],
    "v_none": ["NoneType", "None"],
    "v_str": ["str", "'it\\'s \"q\"\\n'"],
    "v_longstr": ["str", "'" + "a" * 256 + "…'…(+44 chars)"],
    "v_bytes": ["bytes", "b'\\x00ab'"],
    "v_bytearray": ["bytearray", "#2bytearray(b'xy')"],
    "v_tuple1": ["tuple", "(1,)"],
    "v_list": ["list", "#3[1, 'a', None, 2.5]"],
    "v_longlist": ["list", "#4[" + ", ".join(str(i) for i in range(32)) + ", …(+8 items)]"],
    "v_dict": ["dict", "#5{'k': #6[1], 2: (3, 4)}"],
    "v_set": ["set", "#7{1, 2, 3}"],
    "v_emptyset": ["set", "#8set()"],
    "v_frozenset": ["frozenset", "frozenset({5})"],
    "v_range": ["range", "range(2, 10, 3)"],
    "v_slice": ["slice", "slice(1, None, 2)"],
    "v_ellipsis": ["ellipsis", "Ellipsis"],
    "v_hugeint": ["int", "<int 5001 digits>"],
    "v_bigint": ["int", "1180591620717411303424"],
    "v_point": ["Point", "#9Point(x=1, y=#10[2])"],
    "v_loud": ["Loud", "#11Loud(a=1)"],
    "v_masked": ["Masked", "#12Masked()"],
    "v_slotted": ["Slotted", "#13Slotted(u=1)"],
    "v_louddict": ["LoudDict", "#14{'a': 1}"],
    "v_function": ["function", "<function v_int>"],
    "v_builtin": ["builtin_function_or_method", "<builtin_function len>"],
    "v_class": ["type", "<class Point>"],
    "v_module": ["module", "<module sys>"],
    "v_method": ["method", "<method Point.__init__>"],
    "v_exc": ["ValueError", "#16ValueError('bad', 3)"],
    "v_deep": ["list", "#17[#18[#19[#20[#21[…]]]]]"],
    "v_cycle": ["list", "#22[1, #22]"],
    "v_alias": ["list", "#24[#23[7], #23[7]]"],
    "v_generator": ["generator", "<generator gen>"],
    # issue 36: objects of types from C have no number and no fields, whether the type is static
    # or (re.Pattern from 3.11 on) a heap type; a class written in Python shows its fields
    "v_pattern": ["re.Pattern", "<re.Pattern object>"],
    "v_deque": ["collections.deque", "<collections.deque object>"],
    "v_fraction": ["fractions.Fraction", "#25fractions.Fraction(_denominator=2, _numerator=1)"]  # slots: CPython sorts their names,
}
EXC = {"ty": "BadStr", "msg": "x"}  # BaseException.__str__, never the class's own


def main():
    pys = tracerun.pythons()
    if not pys:
        print("SKIPPED: no python3")
        return tracerun.SKIP
    fails = 0
    for label, py in pys:
        with tempfile.TemporaryDirectory() as tmp:
            work = os.path.join(tmp, "values")
            shutil.copytree(os.path.join(tracerun.HERE, "values"), work)
            p, trace = tracerun.run_traced(py, "main.py", cwd=work)
        why = []
        if p.stdout != b"ok\n" or p.stderr or p.returncode:
            why.append("program output changed: %r %r %d" % (p.stdout, p.stderr, p.returncode))
        recs = tracerun.records(trace)
        got = {e["fn"]: e["val"] for e in tracerun.events(recs) if e["k"] == "return" and e["fn"] in EXPECTED}
        for fn, want in EXPECTED.items():
            if got.get(fn) != want:
                why.append("%s: want %r got %r" % (fn, want, got.get(fn)))
        excs = [e["exc"] for e in tracerun.events(recs) if e["fn"] == "raise_badstr" and e["k"] == "exception"]
        dels = [e.get("loc") for e in tracerun.events(recs) if e["fn"] == "v_del" and e["k"] == "line"]
        if dels != [None, {"gone": ["int", "1"]}, {"gone": None}]:  # state before lines 2, 3, 4
            why.append("v_del: a deleted local is not null: %r" % dels)
        if excs != [EXC]:
            why.append("BadStr exception: %r" % excs)
        if recs[-1]["status"] != "complete":
            why.append("end %r" % recs[-1])
        print("%s %s" % ("FAIL" if why else "ok  ", label))
        for w in why:
            print("   ", w)
        fails += bool(why)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
