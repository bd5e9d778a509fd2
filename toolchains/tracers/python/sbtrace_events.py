# surgebox's Python tracer: what both engines share. The trace's records
# (head, events, end, seal), its limits, which code is the program's, the
# values and changes of a frame's locals, and the preparation of the
# program's run (_prepare). How events arrive is the engine's: a subclass of
# TracerCore in sbtrace_settrace.py (up to 3.11) or sbtrace_monitoring.py (3.12+).
# Loaded by sbtrace.py (see there: a module that is never in sys.modules
# while the program runs); every name it takes from sbtrace_values.py is
# listed below (the builtins among them are the tracer's own bindings).
import sys
import os

from sbtrace_values import (
    AttributeError, BaseException, Exception, ImportError, InterruptedError, OSError, Renderer,
    SystemExit, ValueError, _BuiltinType, _FunctionType, _IMMUTABLE, _ModuleType, _O_RDONLY,
    _SCALAR_ARG, _V, _cut, _exc_args, _exc_info, _exc_msg, _fatal, _getframe, _getprofile, _in_mro,
    _j, _kind, _mod_dict, _os_close, _os_open, _os_read, _os_write, _parse_json_object,
    _self_module, _sys_modules, _t_dict, _t_mro, _t_name, _type_name, all, bool, compile, dict,
    frozenset, getattr, id, int, len, list, object, range, set, str, tuple, type)
from sbexcepthook import _main_module

_CO_OPTIMIZED = 0x1
_CO_GENLIKE = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
_RETURN_VALUE, _YIELD_VALUE, _YIELD_FROM, _RESUME = 83, 86, 72, 151
_MISSING = object()
_NS_SKIP = frozenset(id(t) for t in (_ModuleType, _FunctionType, _BuiltinType, type))
_DEFAULT_LIMITS = (("events", 1000000), ("bytes", 64 << 20), ("value_chars", 256), ("items", 32),
                   ("nest", 4), ("depth", 256), ("snapshot_every", 64))
_END_RESERVE = 512  # bytes kept under the byte cap for the end record
_SEAL_BYTES = 85  # a seal line: {"t":"seal","mac":"<64 hex digits>"}\n
_MIN_BYTES = 4096  # room for head, end and a few events, whatever the paths
# Names whose call may end the process at once (no Python-level exit, no
# finally): a frame whose code names one writes its records through (each
# event flushed), so a trace cut by os._exit, os.abort or a signal sent to
# itself still holds every event up to the call (PROTOCOL.md "Traces").
_HAZARD_NAMES = frozenset(("_exit", "abort", "kill", "killpg", "raise_signal", "pthread_kill", "execv",
                           "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe", "fexecve"))


class _Frame:
    """A traced frame's state: its number in the records, its code, the
    nearest traced frame below it and its depth, the start of each record
    of it, the last rendering of each local (and, for an immutable value,
    the object rendered: the same object is not rendered again), the
    exception raised in it that is not yet handled or unwound (and its
    line), whether the next event writes every local, whether its locals
    are a namespace (module or class body: imports and classes are left
    out), the index of its file, whether each event is written through."""
    __slots__ = ("frame_no", "code", "caller", "depth", "record_prefix", "fn_json", "rendered", "rendered_object",
                 "pending_exc", "snapshot_next", "namespace", "file_index", "flush_each", "exc_line")


class TracerCore:
    """The records, limits and values of a trace, whichever engine feeds it
    events: the settrace Tracer (sbtrace_settrace.py) or the monitoring Tracer
    (sbtrace_monitoring.py) say how events arrive (ENGINE, engine_start,
    engine_stop, engine_off_in_child, engine_tampered)."""
    ENGINE = None  # the head's "mech"
    FRAMES_UNDER_PROGRAM = 0  # frames of ours under the program's module frame (RecursionError depth)

    def __init__(self, fd, limits, roots, entry_path, argv, hash_seed, seal=None):
        self.fd = fd
        # SHA-256 fed with the supervisor's key and every byte written: the
        # seal (stop) binds the records and the status to a key the program
        # was never given; it shares our process, so one that reads our
        # memory can still forge it (PROTOCOL.md "Traces": whose word it is)
        self.seal = seal
        self.lim = limits
        self.roots = tuple(r.rstrip(os.sep) + os.sep for r in roots)
        self.cwd = os.getcwd()
        self.own = os.path.dirname(os.path.abspath(__file__)) + os.sep  # the tracer's directory
        self.stdlib = os.path.dirname(os.path.abspath(os.__file__)) + os.sep
        self.buf = []
        self.nbytes = 0
        self.n = 0
        self.status = None  # None while tracing; then complete/truncated/tampered/crashed
        self.cap = None
        self.reason = None
        self.states = {}  # id(frame) -> _Frame, live traced frames
        self.codes = {}  # code -> file index, or -1 for code we do not trace
        self.files = {}  # absolute path -> index
        self.next_fr = 1
        self.R = Renderer(limits["value_chars"], limits["items"], limits["nest"], self.frame_fr)
        self.head_files = [entry_path]
        self.files[entry_path] = 0
        self.argv = argv
        self.hash_seed = hash_seed
        self.main_ident = None
        self.lock = _allocate_lock()  # one event at a time: threads share the records (re-entrant: finish runs traced)
        self.tls = _thread_local()  # per thread: its number `th` (0 = the main thread)
        self.nthreads = 1
        self.hazard = {}  # code -> True when its names include a process-ending call
        self.haz_ids = frozenset(id(f) for f in (getattr(os, n, None) for n in _HAZARD_NAMES) if f is not None)
        self.handlers = {}  # file index -> (except-clause lines, lines an exception stays in flight) or None
        self.th_hook = False  # the settrace Tracer: threading._trace_hook still to set, once threading is imported
        self.th_hooked = False  # ... and set
        self.max_events = limits["events"]
        self.snap = limits["snapshot_every"]
        self.byte_budget = limits["bytes"] - _END_RESERVE - (_SEAL_BYTES if seal is not None else 0)
        self.g = self.l = None  # the settrace Tracer's trace functions (sys.gettrace() is compared to g)

    # -- output
    def write(self, line):
        size = len(line) if line.isascii() else len(line.encode("utf-8", "surrogatepass"))
        if self.nbytes + size > self.byte_budget:
            return False
        self.nbytes += size
        self.buf.append(line)
        if len(self.buf) >= 256:
            self.flush()
        return True

    def flush(self):
        if not self.buf:
            return
        data = "".join(self.buf).encode("utf-8", "surrogatepass")
        self.buf = []
        while data:
            try:
                k = _os_write(self.fd, data)
            except InterruptedError:
                continue
            except OSError:
                self.fd = -1
                if self.status is None:
                    self.stop("crashed", reason="trace descriptor not writable")
                return
            if self.seal is not None:
                self.seal.update(data[:k])
            data = data[k:]

    def head(self):
        lim = ",".join('"%s":%d' % (k, self.lim[k]) for k, _ in _DEFAULT_LIMITS)
        impl = sys.implementation.name
        line = ('{"t":"head","v":1,"lang":"python","impl":"%s","version":"%s","mech":"%s",'
                '"hash_seed":"%s","files":["%s"],"entry":0,"argv":[%s],"limits":{%s}}\n') % (
            "CPython" if impl == "cpython" else _j(impl), "%d.%d.%d" % sys.version_info[:3],
            self.ENGINE, _j(self.hash_seed), _j(self.head_files[0]),
            ",".join('"%s"' % _j(a) for a in self.argv), lim)
        self.buf.append(line)  # always: a trace has a head, whatever argv's size
        self.nbytes += len(line.encode("utf-8", "surrogatepass"))

    # -- which code is the program's
    def classify(self, code, g=None):
        """The file index of code (-1: not traced); g: the globals it runs with."""
        fn = code.co_filename
        fi = -1
        if fn and not fn.startswith("<"):
            p = _normpath(fn if fn[:1] == "/" else self.cwd + "/" + fn)
            if (p.startswith(self.roots) and not p.startswith(self.own) and not p.startswith(self.stdlib)
                    and "-packages" + os.sep not in p):
                fi = self.files.get(p)
                if fi is None:
                    fi = len(self.files)
                    self.files[p] = fi
                    self.write('{"t":"file","f":%d,"path":"%s"}\n' % (fi, _j(p)))
        self.codes[code] = fi
        if fi >= 0:
            self.hazard[code] = self.hazardous(code, g)
        return fi

    def hazardous(self, code, g):
        """Whether code names a call that may end the process at once: by
        its own name, or a global bound to one (`die = os._exit`)."""
        names = code.co_names
        for n in names:
            if n in _HAZARD_NAMES:
                return True
        if g is None or not (type(g) is dict or _in_mro(type(g), dict)):
            return False
        haz = self.haz_ids
        for name, v in dict.items(g):  # not g.get(name): a key of the program's could compare itself
            if id(v) in haz and type(name) is str and name in names:
                return True
        return False

    def frame_fr(self, f):
        st = self.states.get(id(f))
        if st is not None and st.code is f.f_code:
            return st.frame_no
        return None

    # -- frames
    def new_frame(self, frame, code, fi):
        st = _Frame()
        st.frame_no = self.next_fr
        self.next_fr += 1
        st.code = code
        st.file_index = fi
        st.fn_json = '"fn":"%s"' % _j(code.co_name)
        st.rendered = {}
        st.rendered_object = {}
        st.pending_exc = None
        st.namespace = not (code.co_flags & _CO_OPTIMIZED)
        st.flush_each = self.hazard.get(code, False)
        self.states[id(frame)] = st
        return self.link(frame, st)

    def link(self, frame, st):
        """(Re)compute caller/depth: the nearest traced frame below (a caller, or
        whoever resumes a generator)."""
        b = frame.f_back
        states = self.states
        up = None
        while b is not None:
            s = states.get(id(b))
            if s is not None and s.code is b.f_code:
                up = s
                break
            b = b.f_back
        st.caller = up
        st.depth = up.depth + 1 if up is not None else 0
        th = self.thread_no()
        st.record_prefix = '%s"fr":%d,"up":%s,"d":%d,"f":%d,' % (
            '"th":%d,' % th if th else "", st.frame_no, "null" if up is None else up.frame_no, st.depth, st.file_index)
        st.snapshot_next = True
        if st.depth > self.lim["depth"]:
            self.stop("truncated", "depth")
            return None
        return st

    def thread_no(self):
        """This thread's number: 0 for the main thread, then 1, 2 ... as first seen."""
        d = self.tls.__dict__
        th = d.get("th")
        if th is None:
            if _get_ident() == self.main_ident:
                th = 0
            else:
                th = self.nthreads
                self.nthreads += 1
            d["th"] = th
        return th

    # -- one event
    def ev(self, frame, st, k, ln, tail):
        i = self.n
        if i >= self.max_events:
            self.stop("truncated", "events")
            return
        full = st.snapshot_next or i % self.snap == 0
        st.snapshot_next = False
        loc = self.diff(st, _items(frame.f_locals), full)
        line = '{"t":"ev","i":%d,"k":"%s",%s"ln":%d,%s%s%s}\n' % (i, k, st.record_prefix, ln, st.fn_json, loc, tail)
        if not self.write(line):
            self.stop("truncated", "bytes")
            return
        self.n = i + 1
        if st.flush_each:
            self.flush()

    def diff(self, st, items, full):
        rendered, rendered_object = st.rendered, st.rendered_object
        value = self.R.value
        namespace = st.namespace
        out = []
        seen = 0
        for name, v in items:
            t = type(v)
            if namespace and (type(name) is not str or id(t) in _NS_SKIP
                       or (name[:2] == "__" and name[-2:] == "__") or _kind(t) in ("module", "class")):
                continue
            seen += 1
            if id(t) in _IMMUTABLE:  # same object, same repr: no render
                if rendered_object.get(name, _MISSING) is v:
                    if full:
                        out.append(_key(name) + rendered[name])
                    continue
                r = value(v)
                rendered_object[name] = v
            else:  # mutable or an object: rendered again, compared
                r = value(v)
                if name in rendered_object:
                    del rendered_object[name]
            if full or rendered.get(name) != r:
                out.append(_key(name) + r)
            rendered[name] = r
        if len(rendered) > seen:  # names gone (or now skipped) since the last event
            keep = set()
            for name, v in items:
                t = type(v)
                if not (namespace and (type(name) is not str or id(t) in _NS_SKIP
                                or (name[:2] == "__" and name[-2:] == "__")
                                or _kind(t) in ("module", "class"))):
                    keep.add(name)
            for name in [n for n in rendered if n not in keep]:
                del rendered[name]
                rendered_object.pop(name, None)
                out.append('"%s":null' % _j(name))  # also in a full snapshot: a reader may apply it as a diff
        if out or full:
            return ',"loc":{' + ",".join(out) + "}"
        return ""

    def resolve(self, frame, st, ln, returning):
        """An exception seen in this frame is pending and the frame goes on at
        line ln (or returns/yields normally): say `handled` where it is caught,
        before the first line of the except block. Not yet on an `except`
        clause's own line (its match is tested) nor on a line where the
        exception is still in flight (a `finally` block, a `with`'s exit);
        a file whose source cannot be read: once the handler is done."""
        if not returning:
            hl = self.handlers.get(st.file_index, _MISSING)
            if hl is _MISSING:  # a file other than the entry: read when first needed
                hl = self.handlers[st.file_index] = _handler_lines(_read_source(self.path_of(st.file_index)))
            if hl is None:
                if _exc_info()[1] is st.pending_exc:
                    return
            elif ln in hl[0] or ln in hl[1] or ln == st.exc_line:
                return  # (the raise's own line again: 3.8/3.9 run a with's exit there)
        exc = st.pending_exc
        st.pending_exc = None
        self.ev(frame, st, "handled", ln, ',"exc":' + _exc_msg(exc, self.lim["value_chars"]))

    def path_of(self, fi):
        for p, i in self.files.items():
            if i == fi:
                return p
        return None

    def exc_json(self, e, end=False):
        """end: for the end record, which the supervisor bounds at 16 KiB
        (_END_MAX): the message at most 1024 characters, the type 512."""
        chars, ty = (min(self.lim["value_chars"], 1024), 512) if end else (self.lim["value_chars"], None)
        if _in_mro(type(e), BaseException):  # not isinstance: it may read a __class__ property
            return _exc_msg(e, chars, ty)
        return '{"ty":"%s","msg":""}' % _j(_cut(_type_name(type(e)), ty))

    # -- start/stop
    def start(self):
        self.main_ident = _get_ident()
        self.thread_no()
        if self.th_hook:
            self.hook_threads()
        self.engine_start()

    def stop(self, status, cap=None, reason=None):
        if self.status is not None:
            return
        self.status, self.cap, self.reason = status, cap, reason
        self.states.clear()
        try:
            self.engine_stop()
        except Exception:
            pass
        self.flush()
        if self.seal is not None and self.fd >= 0:
            # written now, before the program runs on: a status it changes
            # later (through gc, past a cap) no longer matches
            h = self.seal.copy()
            h.update(("%s\n%s" % (status, cap or "")).encode())
            self.seal = None
            data = ('{"t":"seal","mac":"%s"}\n' % h.hexdigest()).encode()
            while data and self.fd >= 0:
                try:
                    data = data[_os_write(self.fd, data):]
                except InterruptedError:
                    continue
                except OSError:
                    self.fd = -1

    def hook_threads(self):
        """Up to 3.11 (sys.settrace is per thread): once the program has
        imported threading (never imported for it), threads it starts are
        traced through threading's own hook (threading.settrace's variable)."""
        mods = _sys_modules
        th = dict.get(mods, "threading") if type(mods) is dict else None
        if type(th) is not _ModuleType:
            return
        d = _mod_dict(th)
        if "Thread" not in d or dict.get(d, "_trace_hook", 0) is not None:
            return  # not imported through yet, or a hook the program set (tamper_check says so)
        d["_trace_hook"] = self.g
        self.th_hook = False
        self.th_hooked = True

    def crash(self, e):
        self.stop("crashed", reason="%s: %s" % (_type_name(type(e)), _safe_str(e)))

    def tamper_check(self):
        """True when the program removed or replaced our hooks."""
        if _getprofile() is not None:
            return True
        mods = _sys_modules
        th = dict.get(mods, "threading") if type(mods) is dict else None
        if type(th) is _ModuleType:
            h = dict.get(_mod_dict(th), "_trace_hook")
            if h is not self.g and (h is not None or self.th_hooked):
                return True  # another hook, or ours removed (threads would start untraced)
        return self.engine_tampered()

    def finish(self, exit_json):
        with self.lock:  # threads still running stop at the end: no record after it
            self._finish(exit_json)

    def _finish(self, exit_json):
        if self.status is None:
            tampered = False
            try:
                tampered = self.tamper_check()
            except Exception:
                tampered = True
            self.stop("tampered" if tampered else "complete")
        end = '{"t":"end","status":"%s",' % self.status
        if self.cap:
            end += '"cap":"%s",' % self.cap
        end += '"events":%d,"exit":%s' % (self.n, exit_json)
        if self.reason:
            end += ',"reason":"%s"' % _j(self.reason[:200])
        self.buf.append(end + "}\n")
        self.flush()

    def before_fork(self):
        """os.fork() is coming: no thread is inside an event when it happens."""
        self.lock.acquire()

    def after_fork(self):
        self.lock.release()

    def forked(self):
        """In a child of os.fork(): stop without a word (the parent owns the trace)."""
        self.lock = _allocate_lock()  # the parent's is held (before_fork) by a thread the child has not
        self.status = "forked"
        self.states.clear()
        self.buf = []
        try:
            self.engine_off_in_child()
            _os_close(self.fd)
        except Exception:
            pass
        self.fd = -1

    # -- what both engines share
    def leave(self, frame, st, gone):
        if gone:
            self.states.pop(id(frame), None)
        if st.caller is not None:
            st.caller.snapshot_next = True


def _key(name, _cache={}):
    """'"name":' of a local's name (a str), cached."""
    k = _cache.get(name)
    if k is None:
        k = '"' + _j(name) + '":'
        if len(_cache) < 100000:
            _cache[name] = k
    return k


_AST = _t_mro(type(compile("0", "<sbtrace>", "exec", 0x400, dont_inherit=True)))[-2]  # ast.AST
_ast_dict = _t_dict(_AST)["__dict__"].__get__  # a node's fields, read from its own dict


def _read_source(path):
    """The bytes of the file at path, or None."""
    try:
        fd = _os_open(path, _O_RDONLY)
    except Exception:
        return None
    try:
        chunks = []
        while True:
            b = _os_read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    except Exception:
        return None
    finally:
        _os_close(fd)


def _handler_lines(src):
    """(lines of `except` clauses, lines where an exception is still in
    flight: `finally` blocks and `with` statements' own lines) of the source
    src, from its syntax tree (compile's, no import); None when it cannot be
    parsed."""
    if src is None:
        return None
    try:
        tree = compile(src, "<sbtrace>", "exec", 0x400, dont_inherit=True)  # PyCF_ONLY_AST
        clause, flight = set(), set()
        todo = [tree]
        while todo:
            node = todo.pop()
            d = _ast_dict(node)
            name = _t_name(type(node))
            body = dict.get(d, "body")
            if name == "ExceptHandler" and body:
                clause.update(range(d["lineno"], _ast_dict(body[0])["lineno"]))
            elif name in ("With", "AsyncWith") and body:
                flight.update(range(d["lineno"], _ast_dict(body[0])["lineno"]))
            elif name in ("Try", "TryStar") and d["finalbody"]:
                fb = d["finalbody"]
                flight.update(range(_ast_dict(fb[0])["lineno"], _ast_dict(fb[-1])["end_lineno"] + 1))
            for v in dict.values(d):
                if type(v) is list:
                    for x in v:
                        if _in_mro(type(x), _AST):
                            todo.append(x)
                elif _in_mro(type(v), _AST):
                    todo.append(v)
        return frozenset(clause), frozenset(flight)
    except BaseException:
        return None


def _normpath(p):
    """os.path.normpath of an absolute path, without the program's os.path."""
    out = []
    for part in p.split("/"):
        if part == "..":
            if out:
                out.pop()
        elif part and part != ".":
            out.append(part)
    return "/" + "/".join(out)


def _frame_locals_proxy():
    if _V < (3, 13):
        return None

    def f():
        x = 1
        return _getframe().f_locals
    return type(f())


_FrameLocalsProxy = _frame_locals_proxy()


def _items(locs):
    """The (name, value) pairs of frame.f_locals: a dict's through
    dict.items, 3.13's proxy's own; a class body's other mapping (from a
    metaclass's __prepare__) would run the program's code: nothing shown."""
    t = type(locs)
    if t is dict or _in_mro(t, dict):
        return dict.items(locs)  # a view: iterable twice
    if t is _FrameLocalsProxy:
        return locs.items()  # a list
    return ()


def _safe_str(e):
    try:
        a = _exc_args(e)
        return BaseException.__str__(e) if all(id(type(x)) in _SCALAR_ARG for x in a) else "?"
    except Exception:
        return "?"


try:
    from _thread import get_ident as _get_ident, RLock as _allocate_lock, _local as _thread_local
except ImportError:  # no threads in this build
    def _get_ident():
        return 0

    class _allocate_lock:
        def __enter__(self):
            pass

        def __exit__(self, *a):
            pass

        def acquire(self, *a):
            return True

        def release(self):
            pass

    class _thread_local:
        pass


# ---------------------------------------------------------------- the run

def _limits_from_env():
    lim = dict(_DEFAULT_LIMITS)
    text = os.environ.pop("SURGEBOX_TRACE_LIMITS", None)
    if text:
        try:
            given = _parse_json_object(text)
        except ValueError as e:
            _fatal("SURGEBOX_TRACE_LIMITS: %s (want a JSON object of integers)" % e)
        for k, v in given.items():
            if k not in lim:
                _fatal("SURGEBOX_TRACE_LIMITS: unknown limit %r (known: %s)" % (k, ", ".join(lim)))
            least = _MIN_BYTES if k == "bytes" else 1
            if v < least:
                _fatal("SURGEBOX_TRACE_LIMITS: %s must be at least %d" % (k, least))
            lim[k] = v
    return lim


def _fd_from_env():
    text = os.environ.pop("SURGEBOX_TRACE_FD", None)
    if text is None or not text.isdigit():
        _fatal("SURGEBOX_TRACE_FD must name the trace descriptor (got %r)" % text)
    fd = int(text)
    try:
        os.fstat(fd)
    except OSError as e:
        _fatal("SURGEBOX_TRACE_FD=%d: %s" % (fd, e.strerror))
    os.set_inheritable(fd, False)  # no subprocess inherits the trace
    return fd


def _seal_from(fd):
    """SURGEBOX_TRACE_SEAL=N: the supervisor's key, N bytes first on the
    trace descriptor (a socket whose far side then shuts: the program reads
    EOF there), read before the program runs; a SHA-256 fed with it."""
    text = os.environ.pop("SURGEBOX_TRACE_SEAL", None)
    if text is None:
        return None
    if not text.isdigit() or not 16 <= int(text) <= 64:
        _fatal("SURGEBOX_TRACE_SEAL must be the key's length in bytes, 16 to 64 (got %r)" % text)
    key = b""
    while len(key) < int(text):
        try:
            b = _os_read(fd, int(text) - len(key))
        except InterruptedError:
            continue
        except OSError as e:
            _fatal("SURGEBOX_TRACE_SEAL: cannot read the key: %s" % e.strerror)
        if not b:
            _fatal("SURGEBOX_TRACE_SEAL: the key ended after %d bytes" % len(key))
        key += b
    before = set(_sys_modules)  # the hash's module loaded, not left in sys.modules for the program to see
    h = None
    for name in ("_sha2", "_sha256", "_hashlib"):
        try:
            m = __import__(name)
            f = getattr(m, "sha256", None) or getattr(m, "openssl_sha256", None)
            h = f(key) if f is not None else None
        except ImportError:
            pass
        finally:
            for k in [k for k in _sys_modules if k not in before]:
                del _sys_modules[k]
        if h is not None:
            return h
    _fatal("SURGEBOX_TRACE_SEAL: this Python has no SHA-256 (_sha2, _sha256 or _hashlib)")


def _prepare(engine):
    """Everything before the program's first line, the trace fed by engine
    (a TracerCore subclass); returns (tracer, code or None, the program's module
    dict, exit JSON if the file cannot be read)."""
    if len(sys.argv) < 2:
        _fatal("usage: python3 [FLAGS] sbtrace.py PROGRAM.py [ARGS...]")
    fd = _fd_from_env()
    seal = _seal_from(fd)
    limits = _limits_from_env()
    roots_text = os.environ.pop("SURGEBOX_TRACE_PATHS", None)
    script = sys.argv[1]
    entry = os.path.normpath(os.path.abspath(script))
    roots = roots_text.split(os.pathsep) if roots_text else [os.path.dirname(entry)]
    roots = [os.path.abspath(r) for r in roots if r]
    hash_seed = os.environ.get("PYTHONHASHSEED") or "random"
    tracer = engine(fd, limits, roots, entry, sys.argv[1:], hash_seed, seal)
    tracer.head()

    sys.argv = sys.argv[1:]
    orig = getattr(sys, "orig_argv", None)
    if orig is not None:
        at = len(orig) - len(sys.argv) - 1
        if 0 <= at < len(orig):
            sys.orig_argv = orig[:at] + orig[at + 1:]

    g = _main_module(script, type(_self_module.__loader__))
    file_value = g["__file__"]
    try:
        with open(script, "rb") as f:
            source = f.read()
    except OSError as e:
        prog = (getattr(sys, "orig_argv", None) or [sys.executable])[0]
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n" % (prog, file_value, e.errno, e.strerror))
        return tracer, None, g, '{"code":2}'
    tracer.handlers[0] = _handler_lines(source)  # before the program runs: its audit hooks see nothing
    try:
        os.register_at_fork(before=tracer.before_fork, after_in_parent=tracer.after_fork,
                            after_in_child=tracer.forked)
    except AttributeError:
        pass
    # our frame sits under the program's (and up to 3.11 so does exec's C
    # call): the program reaches the same depth as untraced before RecursionError
    sys.setrecursionlimit(sys.getrecursionlimit() + tracer.FRAMES_UNDER_PROGRAM)
    return tracer, source, g, None


def _exit_json(e, tracer):
    if _in_mro(type(e), SystemExit):
        c = SystemExit.__dict__["code"].__get__(e)
        if c is None:
            return '{"code":0}'
        if type(c) in (int, bool):
            return '{"code":%d}' % (c & 0xFF)
        return '{"code":1}'
    return '{"exception":%s}' % tracer.exc_json(e, end=True)
