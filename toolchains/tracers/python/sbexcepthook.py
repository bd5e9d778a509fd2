# What the two files that run a program in a module frame of their own
# right under theirs share: the program's __main__ (_main_module), and its
# uncaught exception printed as `python3 main.py` prints it (_strip_hook).
# The two: the tracer's entry (sbtrace.py, which loads this file as it loads
# its other parts) and the warm zygote (toolchains/warm/python/sbzygote.py,
# which compiles it from source into its own namespace, as it does its
# body). Both install the hook the same way, when the program's exception
# is on its way out:
#
#   _strip_hook.hook, _strip_hook.entry = sys.excepthook, _G  # _G: its globals()
#   sys.excepthook = _strip_hook
import sys
import os


def _main_module(script, loader_type):
    """The program's module __main__ as `python3 SCRIPT` makes it, put in
    sys.modules; returns its dict. __file__ absolute from 3.9 (joined to the
    cwd, not normalised), sys.path[0] the script's real directory (unless
    isolated or safe_path); loader_type: the type of the entry's own loader."""
    file_value = script if sys.version_info < (3, 9) or os.path.isabs(script) else os.path.join(os.getcwd(), script)
    if not (sys.flags.isolated or getattr(sys.flags, "safe_path", False)):
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    mod = type(sys)("__main__")
    g = mod.__dict__
    g["__annotations__"] = {}
    g["__builtins__"] = sys.modules["builtins"]
    g["__file__"] = file_value
    g["__cached__"] = None
    g["__loader__"] = loader_type("__main__", file_value)
    sys.modules["__main__"] = mod
    return g


def _strip_hook(t, v, tb):
    """sys.excepthook for the program's uncaught exception: the frames that
    run with _strip_hook.entry as their globals (the file that ran the
    program) cut from its traceback, then the hook the program had (or the
    default), _strip_hook.hook. Both attributes are cleared before the hook
    runs: in a zygote this function's dict is frozen with the zygote's heap,
    and the program's hook must not live on in it (the zygote's copy did so;
    the tracer's copy kept the hook: the stricter behaviour is kept)."""
    hook, entry = _strip_hook.hook, _strip_hook.entry
    _strip_hook.hook = _strip_hook.entry = None
    sys.excepthook = hook
    while tb is not None and tb.tb_frame.f_globals is entry:
        tb = tb.tb_next
    try:
        v.__traceback__ = tb
    except Exception:
        pass
    sys.last_traceback = tb
    return hook(t, v, tb)
