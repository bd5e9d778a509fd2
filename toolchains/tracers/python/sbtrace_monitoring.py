# surgebox's Python tracer, the sys.monitoring engine (CPython 3.12+):
# class Tracer, the callbacks of tool DEBUGGER_ID.
# Loaded by sbtrace.py on those versions only (see there).

from sbtrace_values import (
    Exception, _TOOL, _getframe, _gettrace, _m_DISABLE, _m_E, _m_free_tool, _m_get_events,
    _m_get_tool, _m_register, _m_set_events, _m_set_local_events, _m_use_tool, id, list)
from sbtrace_events import (
    TracerCore)


class Tracer(TracerCore):  # (the tracer's type is named Tracer whichever engine feeds it)
    """Events by sys.monitoring (CPython 3.12+), tool DEBUGGER_ID: PY_START
    and the other global events see every new frame; a traced code object
    gets LINE, returns, yields, resumes, backward jumps and calls."""
    ENGINE = "monitoring"
    FRAMES_UNDER_PROGRAM = 1  # our module frame

    def engine_start(self):
        self._start_monitoring()

    def engine_stop(self):
        self._stop_monitoring()

    def engine_off_in_child(self):
        self._stop_monitoring()

    def engine_tampered(self):
        if _gettrace() is not None:
            return True
        if _m_get_tool(_TOOL) != "surgebox-trace" or _m_get_events(_TOOL) != self.global_events:
            return True
        for e, cb in self.callbacks:
            old = _m_register(_TOOL, e, cb)
            if old is not cb:
                return True
        return False

    def _start_monitoring(self):
        E = _m_E
        _m_use_tool(_TOOL, "surgebox-trace")
        # JUMP: sys.settrace gives a line event on a backward jump to the same
        # line (a loop on one line); every other jump is disabled at its first call
        # CALL: a call of os._exit & co. by any name flushes the records first
        self.local_events = E.LINE | E.PY_RETURN | E.PY_YIELD | E.PY_RESUME | E.JUMP | E.CALL
        self.global_events = E.PY_START | E.PY_THROW | E.PY_UNWIND | E.RAISE
        self.callbacks = ((E.PY_START, self._m_start), (E.PY_RESUME, self._m_resume),
                          (E.PY_THROW, self._m_resume), (E.LINE, self._m_line),
                          (E.PY_RETURN, self._m_return), (E.PY_YIELD, self._m_yield),
                          (E.PY_UNWIND, self._m_unwind), (E.RAISE, self._m_raise),
                          (E.JUMP, self._m_jump), (E.CALL, self._m_call))
        self.lines = {}  # code -> [(start, end, line)] of code.co_lines()
        for e, cb in self.callbacks:
            _m_register(_TOOL, e, cb)
        self.DISABLE = _m_DISABLE
        _m_set_events(_TOOL, self.global_events)

    def _stop_monitoring(self):
        if _m_get_tool(_TOOL) != "surgebox-trace":
            return
        _m_set_events(_TOOL, 0)
        for code, fi in self.codes.items():
            if fi >= 0:
                _m_set_local_events(_TOOL, code, 0)
        for e, _ in self.callbacks:
            _m_register(_TOOL, e, None)
        _m_free_tool(_TOOL)

    def _m_start(self, code, offset):
        try:
            with self.lock:
                fi = self.codes.get(code)
                if fi is None:
                    fi = self.classify(code, _getframe(1).f_globals)
                    if fi >= 0:
                        _m_set_local_events(_TOOL, code, self.local_events)
                if fi < 0:
                    return self.DISABLE
                if self.status is not None:
                    return None
                frame = _getframe(1)
                st = self.new_frame(frame, code, fi)
                if st is not None:
                    self.ev(frame, st, "call", frame.f_lineno or code.co_firstlineno, "")
        except Exception as e:
            self.crash(e)
        return None

    def _m_state(self, code):
        if self.status is not None or self.codes.get(code, -1) < 0:
            return None, None
        frame = _getframe(2)
        st = self.states.get(id(frame))
        if st is None or st.code is not code:
            return frame, None
        return frame, st

    def _m_resume(self, code, offset, exc=None):
        try:
            with self.lock:
                frame, st = self._m_state(code)
                if frame is None:
                    return None
                if st is None:
                    st = self.new_frame(frame, code, self.codes[code])
                    k = "call"
                else:
                    st = self.link(frame, st)
                    k = "resume"
                if st is not None:
                    self.ev(frame, st, k, frame.f_lineno, "")
        except Exception as e:
            self.crash(e)
        return None

    def _m_line(self, code, ln):
        try:
            with self.lock:
                frame, st = self._m_state(code)
                if st is not None:
                    if st.pending_exc is not None:
                        self.resolve(frame, st, ln, False)
                    self.ev(frame, st, "line", ln, "")
        except Exception as e:
            self.crash(e)
        return None

    def _m_return(self, code, offset, val):
        try:
            with self.lock:
                frame, st = self._m_state(code)
                if st is not None:
                    ln = frame.f_lineno
                    if st.pending_exc is not None:
                        self.resolve(frame, st, ln, True)
                    self.ev(frame, st, "return", ln, ',"val":' + self.R.value(val))
                    self.leave(frame, st, True)
        except Exception as e:
            self.crash(e)
        return None

    def _m_yield(self, code, offset, val):
        try:
            with self.lock:
                frame, st = self._m_state(code)
                if st is not None:
                    ln = frame.f_lineno
                    if st.pending_exc is not None:
                        self.resolve(frame, st, ln, False)
                    self.ev(frame, st, "yield", ln, ',"val":' + self.R.value(val))
                    self.leave(frame, st, False)
        except Exception as e:
            self.crash(e)
        return None

    def _m_unwind(self, code, offset, exc):
        try:
            with self.lock:
                frame, st = self._m_state(code)
                if st is not None:
                    st.pending_exc = None
                    self.ev(frame, st, "unwind", frame.f_lineno, ',"exc":' + self.exc_json(exc))
                    self.leave(frame, st, True)
        except Exception as e:
            self.crash(e)
        return None

    def _line_at(self, code, offset):
        ranges = self.lines.get(code)
        if ranges is None:
            ranges = self.lines[code] = list(code.co_lines())
        for start, end, line in ranges:
            if start <= offset < end:
                return line
        return None

    def _m_jump(self, code, src, dst):
        try:
            with self.lock:
                if dst > src:
                    return self.DISABLE
                line = self._line_at(code, dst)
                if line is None or line != self._line_at(code, src):
                    return self.DISABLE  # the LINE event of the target says it
                frame, st = self._m_state(code)
                if st is not None:
                    if st.pending_exc is not None:
                        self.resolve(frame, st, line, False)
                    self.ev(frame, st, "line", line, "")
        except Exception as e:
            self.crash(e)
        return None

    def _m_call(self, code, offset, func, arg0):
        if id(func) in self.haz_ids:
            try:
                with self.lock:
                    self.flush()
            except Exception as e:
                self.crash(e)
        return None

    def _m_raise(self, code, offset, exc):
        try:
            with self.lock:
                frame, st = self._m_state(code)
                if st is not None:
                    st.pending_exc = exc
                    st.exc_line = frame.f_lineno
                    self.ev(frame, st, "exception", frame.f_lineno, ',"exc":' + self.exc_json(exc))
        except Exception as e:
            self.crash(e)
        return None
