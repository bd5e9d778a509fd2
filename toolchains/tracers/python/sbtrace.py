# surgebox's Python tracer (trace format v1, PROTOCOL.md "Traces"):
#
#   SURGEBOX_TRACE_FD=3 [SURGEBOX_TRACE_LIMITS='{"events":1000}'] \
#   [SURGEBOX_TRACE_PATHS=/app] python3 [FLAGS] sbtrace.py main.py ARGS...
#
# runs main.py as `python3 [FLAGS] main.py ARGS...` would and writes its trace
# to descriptor SURGEBOX_TRACE_FD. This file stays small: its own code is
# compiled on every run (a __main__ script has no cached bytecode); the body
# (sbtrace_values.py, sbtrace_events.py) comes from __pycache__ through the
# loader Python already has, without an import. The program's module frame
# runs right under this file's: one frame, cut from tracebacks by _strip_hook.
import sys
import os

for _part in ("sbtrace_values", "sbtrace_events"):
    exec(type(sys.modules["__main__"].__loader__)(
        _part, os.path.join(os.path.dirname(os.path.abspath(__file__)), _part + ".py")
    ).get_code(_part), globals())
del _part
_G = globals()
_tracer, _source, _g, _exit = _prepare()
del _prepare
if _source is None:
    _tracer.finish(_exit)
    sys.exit(2)
try:
    _tracer.start()
    exec(compile(_source, _g["__file__"], "exec", dont_inherit=True), _g)
except BaseException as _e:
    _tracer.finish(_exit_json(_e, _tracer))
    if not _in_mro(type(_e), SystemExit):
        _strip_hook.hook = sys.excepthook
        sys.excepthook = _strip_hook
    del _e
    raise
else:
    _tracer.finish('{"code":0}')
