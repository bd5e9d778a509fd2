# The harness of function-call cases (issue 38), run by the daemon as
#   INTERPRETER /app/.sb_fn_harness.py FILE  < {"fn": NAME, "args": [...]}
# It loads FILE as module "solution" (its `if __name__ == "__main__"` part
# does not run), calls NAME (or CLASS.NAME on CLASS()) with the arguments,
# and prints {"result": VALUE} as one JSON line on the standard output it
# kept for itself; the program's own prints go to stderr. The expected value
# is never here: the daemon compares. Exit 3: the value is not JSON.
# It imports only what start-up already did: json's C half (_json) instead of
# json, which imports re and enum (as long as the rest of a warm case), and
# the import machinery start-up made instead of importlib.util.
import os
import sys


def codec():
    """json.loads and json.dumps(allow_nan=False), as json itself makes them
    from _json's scanner and encoder; json itself where _json is absent."""
    try:
        import _json
        scanner, make_encoder, ascii_str = _json.make_scanner, _json.make_encoder, _json.encode_basestring_ascii
    except (ImportError, AttributeError):
        import json
        return json.loads, lambda value: json.dumps(value, allow_nan=False)

    class Context:  # what json.JSONDecoder() gives its scanner
        strict = True
        object_hook = object_pairs_hook = None
        parse_float, parse_int = float, int
        parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__
        memo = {}

    scan, space = scanner(Context()), " \t\n\r"

    def loads(text):
        start = len(text) - len(text.lstrip(space))
        try:
            value, end = scan(text, start)
        except StopIteration:
            raise ValueError("the call is not JSON") from None
        if text[end:].strip(space):
            raise ValueError("the call is not one JSON value")
        return value

    def default(o):
        raise TypeError("Object of type %s is not JSON serializable" % o.__class__.__name__)

    encode = make_encoder({}, default, ascii_str, None, ": ", ", ", False, False, False)

    def dumps(value):  # json.dumps' one-shot path with c_make_encoder
        return "".join(encode(value, 0))

    return loads, dumps


def load_module(path):
    try:  # what importlib.util's two functions are, already imported
        from _frozen_importlib import module_from_spec
        from _frozen_importlib_external import spec_from_file_location
    except ImportError:
        from importlib.util import module_from_spec, spec_from_file_location
    spec = spec_from_file_location("solution", path)
    mod = module_from_spec(spec)
    sys.modules["solution"] = mod
    spec.loader.exec_module(mod)
    return mod


def main():
    loads, dumps = codec()
    kept = os.dup(1)  # the result's; the function's prints go to stderr, in order with its errors
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    call = loads(sys.stdin.read())
    path = sys.argv[1]
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    mod = load_module(path)
    name = call["fn"]
    if "." in name:
        cls, meth = name.split(".", 1)
        fn = getattr(getattr(mod, cls)(), meth)
    elif hasattr(mod, name):
        fn = getattr(mod, name)
    elif hasattr(mod, "Solution"):  # LeetCode style: a method of class Solution
        fn = getattr(mod.Solution(), name)
    else:
        raise AttributeError("%s defines no function %s" % (path, name))
    value = fn(*call["args"])
    try:
        text = dumps({"result": value})
    except (TypeError, ValueError) as e:
        sys.stderr.write("the result is not a JSON value: %s\n" % e)
        sys.exit(3)
    # The streams as start-up made them, and no file object of ours left (a
    # finaliser): a warm child may then end by its short exit instead of the
    # interpreter's whole teardown (toolchains/warm/python, _short_exit).
    sys.stdout = sys.__stdout__
    data = (text + "\n").encode()
    while data:
        data = data[os.write(kept, data):]
    os.close(kept)

main()
