# surgebox's warm Python interpreter (a zygote), issue 25:
#
#   SURGEBOX_ZYGOTE_FD=N python3 sbzygote.py
#
# never runs job code itself. It waits on descriptor N (a SOCK_SEQPACKET
# socket) for jobs; for each it forks a child that runs the job's program as
# `python3 main.py ARGS` would, and reports the child's pid and wait status
# (sbzygote_body.py: the request format). Only a forked child returns from
# _serve(): it runs the program here, in its own module frame right under
# this one (its __main__ made by the tracer's _main_module), cut from
# tracebacks by the tracer's own _strip_hook
# (toolchains/tracers/python/sbexcepthook.py),
# so that Python's own main ends the run (SystemExit, the excepthook, atexit,
# the final flush and its exit status 120) exactly as for a cold start.
# This file stays small; its body is compiled from source here, not
# imported, and not loaded from cached bytecode: measured, the children of a
# zygote that compiled its body cost 13 % less CPU (warm jobs 12 % less wall)
# than those of one that loaded the same code from its .pyc (the compile,
# 2.5 ms once per zygote, leaves its heap laid out otherwise; bench/RESULTS.md).
import sys
import os

# _main_module and _strip_hook are the tracer's (one copy for both, compiled here the same way)
for _path in ("sbzygote_body.py", "../../tracers/python/sbexcepthook.py"):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), _path), "rb") as _f:
        exec(compile(_f.read(), _f.name, "exec", dont_inherit=True), globals())
del _f, _path
_G = globals()
_source, _g = _serve()
del _serve
try:
    exec(_code_of(_source, _g["__file__"]), _g)
except BaseException as _e:
    _Z_STATUS[0] = _exit_status(_e)
    _ended()
    if not _in_mro(type(_e), SystemExit):
        _strip_hook.hook, _strip_hook.entry = sys.excepthook, _G
        sys.excepthook = _strip_hook
    del _e, _g  # the zygote's (frozen) namespace must not keep the program's alive
    raise
del _g
_Z_STATUS[0] = 0
_ended()
