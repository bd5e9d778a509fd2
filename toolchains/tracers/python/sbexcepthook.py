# The program's uncaught exception, printed as `python3 main.py` prints it,
# for the two files that run a program in a module frame of their own right
# under theirs: the tracer's entry (sbtrace.py, which loads this file as it
# loads its other parts) and the warm zygote (toolchains/warm/python/
# sbzygote.py, which compiles it from source into its own namespace, as it
# does its body). Both install it the same way, when the program's
# exception is on its way out:
#
#   _strip_hook.hook, _strip_hook.entry = sys.excepthook, _G  # _G: its globals()
#   sys.excepthook = _strip_hook
import sys


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
