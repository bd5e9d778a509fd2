import sys
import traceback


def hook(t, v, tb):
    sys.stderr.write("custom hook:\n" + "".join(traceback.format_exception(t, v, tb)))
    print("frames:", len(traceback.extract_tb(tb)), "last_traceback same:", sys.last_traceback is tb)


sys.excepthook = hook


def fail():
    raise ValueError("through the program's own hook")


fail()
