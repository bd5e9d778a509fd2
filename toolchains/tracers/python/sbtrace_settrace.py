# surgebox's Python tracer, the sys.settrace engine (CPython 3.8 ... 3.11):
# class Tracer, the trace functions a traced frame's events reach.
# Loaded by sbtrace.py on those versions only (see there).

from sbtrace_values import (
    Exception, _V, _gettrace, _settrace, id, len)
from sbtrace_events import (
    TracerCore, _CO_GENLIKE, _RESUME, _RETURN_VALUE, _YIELD_FROM, _YIELD_VALUE)


class Tracer(TracerCore):  # (the tracer's type is named Tracer whichever engine feeds it)
    """Events by sys.settrace (CPython 3.8 ... 3.11): g, the global trace
    function, sees every new frame; l, the local one, a traced frame's lines,
    returns and exceptions. Threads are traced through threading's hook."""
    ENGINE = "settrace"
    FRAMES_UNDER_PROGRAM = 2  # our module frame and exec's C call

    def __init__(self, fd, limits, roots, entry_path, argv, hash_seed, seal=None):
        TracerCore.__init__(self, fd, limits, roots, entry_path, argv, hash_seed, seal)
        self.ccode = {}  # code -> co_code bytes (the yield/return test)
        self.th_hook = True  # threading._trace_hook still to set, once threading is imported
        self.g = self._g  # one bound method each: sys.gettrace() is compared to it
        self.l = self._l

    def engine_start(self):
        _settrace(self.g)

    def engine_stop(self):
        if _gettrace() is self.g:
            _settrace(None)

    def engine_off_in_child(self):
        _settrace(None)

    def engine_tampered(self):
        return _gettrace() is not self.g

    def _g(self, frame, event, arg):
        """Global trace function: 'call' of every new frame (and generator resumes)."""
        try:
            if self.th_hook:
                with self.lock:
                    self.hook_threads()
            code = frame.f_code
            if self.codes.get(code, 0) < 0:
                return None  # code we do not trace (the standard library, ours): no lock needed
            with self.lock:
                fi = self.codes.get(code)
                if fi is None:
                    fi = self.classify(code, frame.f_globals)
                if fi < 0 or self.status is not None:
                    return None
                st = self.states.get(id(frame))
                if st is not None and st.code is code and code.co_flags & _CO_GENLIKE and not self._fresh(frame, code):
                    st = self.link(frame, st)
                    k = "resume"
                else:
                    st = self.new_frame(frame, code, fi)
                    k = "call"
                if st is None:
                    return None
                self.ev(frame, st, k, frame.f_lineno or code.co_firstlineno, "")
                return self.l
        except Exception as e:
            self.crash(e)
            return None

    def _fresh(self, frame, code):
        if _V >= (3, 11):
            cc = self.co_code(code)
            lasti = frame.f_lasti
            return cc[lasti] == _RESUME and cc[lasti + 1] == 0
        return frame.f_lasti < 0

    def co_code(self, code):
        cc = self.ccode.get(code)
        if cc is None:
            cc = self.ccode[code] = code.co_code
        return cc

    def _l(self, frame, event, arg):
        """Local trace function of a traced frame."""
        try:
            with self.lock:
                st = self.states.get(id(frame))
                if st is None:
                    return None
                if event == "line":
                    ln = frame.f_lineno
                    if st.pending_exc is not None:
                        self.resolve(frame, st, ln, False)
                    self.ev(frame, st, "line", ln, "")
                elif event == "return":
                    code = frame.f_code
                    cc = self.co_code(code)
                    lasti = frame.f_lasti
                    op = cc[lasti] if 0 <= lasti < len(cc) else -1
                    ln = frame.f_lineno
                    if op == _RETURN_VALUE:
                        if st.pending_exc is not None:
                            self.resolve(frame, st, ln, True)
                        self.ev(frame, st, "return", ln, ',"val":' + self.R.value(arg))
                        self.leave(frame, st, True)
                    elif op == _YIELD_VALUE or op == _YIELD_FROM or (
                            _V < (3, 11) and lasti + 2 < len(cc) and cc[lasti + 2] == _YIELD_FROM):
                        if st.pending_exc is not None:
                            self.resolve(frame, st, ln, False)
                        self.ev(frame, st, "yield", ln, ',"val":' + self.R.value(arg))
                        self.leave(frame, st, False)
                    else:
                        exc = st.pending_exc
                        st.pending_exc = None
                        self.ev(frame, st, "unwind", ln, ',"exc":' + (
                            self.exc_json(exc) if exc is not None else '{"ty":"?","msg":""}'))
                        self.leave(frame, st, True)
                    return None
                elif event == "exception":
                    st.pending_exc = arg[1]
                    st.exc_line = frame.f_lineno
                    self.ev(frame, st, "exception", frame.f_lineno, ',"exc":' + self.exc_json(arg[1]))
                return self.l
        except Exception as e:
            self.crash(e)
            return None
