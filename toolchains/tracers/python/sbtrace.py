# surgebox's Python tracer (trace format v1, PROTOCOL.md "Traces"):
#
#   SURGEBOX_TRACE_FD=3 [SURGEBOX_TRACE_LIMITS='{"events":1000}'] \
#   [SURGEBOX_TRACE_PATHS=/app] python3 [FLAGS] sbtrace.py main.py ARGS...
#
# runs main.py as `python3 [FLAGS] main.py ARGS...` would and writes its trace
# to descriptor SURGEBOX_TRACE_FD. This file stays small: its own code is
# compiled on every run (a __main__ script has no cached bytecode). Its parts
# come from __pycache__ through the loader Python already has:
#   sbexcepthook.py        _main_module and _strip_hook, shared with the warm zygote
#   sbtrace_values.py      the names bound before the program runs, JSON, values
#   sbtrace_events.py      what both engines share: records, limits, _prepare
#   sbtrace_settrace.py    the sys.settrace engine (3.8 ... 3.11), or
#   sbtrace_monitoring.py  the sys.monitoring engine (3.12+): only one is loaded
# Each part is a module of its own that imports what it uses from the ones
# before it by name; they are in sys.modules only while they load (so that
# those imports find them, never a file on sys.path) and taken out before
# the program runs: it sees no module of ours. The program's module frame
# runs right under this file's: one frame, cut from tracebacks by _strip_hook.
import sys
import os

_ENGINE_MODULE = "sbtrace_monitoring" if sys.version_info >= (3, 12) else "sbtrace_settrace"
_PARTS = ("sbexcepthook", "sbtrace_values", "sbtrace_events", _ENGINE_MODULE)
_modules = []  # kept: the parts' functions run with their modules' globals
for _name in _PARTS:
    _path = os.path.join(os.path.dirname(os.path.abspath(__file__)), _name + ".py")
    _module = type(sys)(_name)
    _module.__file__ = _path
    sys.modules[_name] = _module
    _modules.append(_module)
    exec(type(sys.modules["__main__"].__loader__)(_name, _path).get_code(_name), _module.__dict__)
# (BaseException, SystemExit and type too: the program may replace the builtins' own)
from sbtrace_values import BaseException, SystemExit, _in_mro, type
from sbtrace_events import _exit_json, _prepare
from sbexcepthook import _strip_hook
if _ENGINE_MODULE == "sbtrace_monitoring":
    from sbtrace_monitoring import Tracer as _Engine
else:
    from sbtrace_settrace import Tracer as _Engine
for _name in _PARTS:
    del sys.modules[_name]
del _name, _path, _module
_G = globals()
_tracer, _source, _g, _exit = _prepare(_Engine)
del _prepare, _Engine
if _source is None:
    _tracer.finish(_exit)
    sys.exit(2)
try:
    _tracer.start()
    exec(compile(_source, _g["__file__"], "exec", dont_inherit=True), _g)
except BaseException as _e:
    _tracer.finish(_exit_json(_e, _tracer))
    if not _in_mro(type(_e), SystemExit):
        _strip_hook.hook, _strip_hook.entry = sys.excepthook, _G
        sys.excepthook = _strip_hook
    del _e
    raise
else:
    _tracer.finish('{"code":0}')
