import sys
def parse(s):
    return int(s)
def outer(items):
    try:
        return [parse(s) for s in items]
    except ValueError as e:
        raise LookupError("no number in %r" % (items,)) from e
print("before", flush=True)
sys.stderr.write("to stderr\n")
print(outer(["1", "x"]))
