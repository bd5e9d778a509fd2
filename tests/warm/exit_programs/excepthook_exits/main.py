import sys
def hook(t, v, tb):
    print("hook", t.__name__)
    raise SystemExit(5)
sys.excepthook = hook
raise ValueError("x")
