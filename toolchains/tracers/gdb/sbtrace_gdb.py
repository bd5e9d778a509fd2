# surgebox's gdb tracer (PROTOCOL.md "Traces", "C and C++"): a C or C++
# program built at -O0 -g, stepped line by line by gdb, its trace written
# as the Python tracer's records to the descriptor SURGEBOX_TRACE_FD.
#
#   SURGEBOX_TRACE_FD=3 [SURGEBOX_TRACE_LIMITS='{"events":1000}'] \
#   sbtrace_launch -g /usr/bin/gdb -nx -q -batch -ix sbtrace_gdb.py -ex 'python sbtrace_run()' \
#       --args sbtrace_launch ./main ./main ARGS...
#
# gdb is started by `sbtrace_launch -g`, which gives gdb /dev/null as its
# standard streams and keeps the job's as descriptors 10-12; gdb runs
# `sbtrace_launch PROGRAM`, which gives them back to the program with
# nothing else open. Sourced by -ix, before gdb loads anything: gdb makes itself undumpable (the program, same uid,
# cannot open its /proc/PID/mem); sbtrace_launch denies the program ptrace.
import json
import os
import signal
import sys

import gdb

_HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "/opt/surgebox/tracers/gdb"
sys.path.insert(0, _HERE)
from sbtrace_gdb_values import Renderer  # noqa: E402

_DEFAULT_LIMITS = (("events", 1000000), ("bytes", 64 << 20), ("value_chars", 256), ("items", 32),
                   ("nest", 4), ("depth", 256), ("snapshot_every", 64))
_END_RESERVE = 512
# g++'s functions for a file's static objects (<iostream>'s): not the program's code, not traced
_COMPILER_MADE = ("_GLOBAL__sub_I_", "__static_initialization_and_destruction_", "_GLOBAL__sub_D_")
_MIN_BYTES = 4096
_CRASH = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS")
_SIGTEXT = {"SIGSEGV": "Segmentation fault", "SIGBUS": "Bus error", "SIGFPE": "Arithmetic exception",
            "SIGILL": "Illegal instruction", "SIGABRT": "Aborted", "SIGSYS": "Bad system call"}


def _fatal(msg):
    os.write(12 if _fd_ok(12) else 2, ("sbtrace_gdb: %s\n" % msg).encode())
    os._exit(2)


def _fd_ok(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _limits():
    lim = dict(_DEFAULT_LIMITS)
    raw = os.environ.get("SURGEBOX_TRACE_LIMITS", "")
    if raw:
        try:
            given = json.loads(raw)
        except ValueError:
            _fatal("SURGEBOX_TRACE_LIMITS is not JSON")
        if not isinstance(given, dict):
            _fatal("SURGEBOX_TRACE_LIMITS is not a JSON object")
        for k, v in given.items():
            if k not in lim:
                _fatal("SURGEBOX_TRACE_LIMITS: unknown limit %r (known: %s)" % (k, ", ".join(lim)))
            if type(v) is not int or v < 1:
                _fatal("SURGEBOX_TRACE_LIMITS: %s must be a positive integer" % k)
            lim[k] = v
    lim["bytes"] = max(lim["bytes"], _MIN_BYTES)
    return lim


def _early():
    """Before gdb prints anything: streams moved, environment and settings fixed."""
    try:  # undumpable: the program (same uid) cannot read or write gdb through /proc
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    except Exception:
        pass
    for cmd in ("set startup-with-shell off", "set debuginfod enabled off", "set debug-file-directory /nonexistent",
                "set auto-load safe-path /usr/share/gdb/auto-load", "set pagination off", "set confirm off",
                "set disable-randomization off", "set breakpoint pending off", "set step-mode off",
                "set print thread-events off", "set print inferior-events off", "set detach-on-fork on",
                "set follow-fork-mode parent", "set follow-exec-mode same", "set breakpoint always-inserted on",
                "set backtrace past-main on"):  # main's caller: its finish breakpoint, its return value
        try:
            gdb.execute(cmd, to_string=True)
        except gdb.error:
            pass


class _Frame:
    __slots__ = ("fr", "gf", "fn", "f", "ln", "loc", "full", "fin", "pc", "fresh", "d")


class _Finish(gdb.FinishBreakpoint):
    """Where a traced frame returns: its value kept, the stepping not stopped."""

    def __init__(self, frame, tracer, rec):
        super().__init__(frame, internal=True)
        self.silent = True
        self.tracer = tracer
        self.rec = rec

    def stop(self):
        try:
            rv = self.return_value
        except Exception:
            rv = None
        self.tracer.returned.append((self.rec, rv))
        return False

    def out_of_scope(self):
        pass


class Tracer:
    def __init__(self, fd, lim):
        self.fd = fd
        self.lim = lim
        self.roots = tuple(p.rstrip("/") + "/" for p in os.environ.get("SURGEBOX_TRACE_PATHS", "/app").split(":") if p)
        self.R = Renderer(lim["value_chars"], lim["items"], lim["nest"])
        self.buf = []
        self.nbytes = 0
        self.budget = lim["bytes"] - _END_RESERVE
        self.n = 0
        self.stack = []  # traced frames, outermost first
        self.returned = []  # (frame, value) from _Finish, in order
        self.files = {}
        self.next_fr = 1
        self.status = None
        self.cap = None
        self.crash_reason = None
        self.last_stop = None
        self.exit = None
        self.bps = []
        self.throw_bp = None
        self.throwing = None  # a C++ exception on its way (exc), and the frame it was thrown in
        self.thrower = None
        self.lines = {}  # pc of a line-table entry -> line

    # ---- records
    def emit(self, rec):
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8", "surrogateescape")
        if self.nbytes + len(data) > self.budget:
            return False
        self.nbytes += len(data)
        self.buf.append(data)
        if len(self.buf) >= 128:
            self.flush()
        return True

    def flush(self):
        data = b"".join(self.buf)
        self.buf = []
        while data:
            try:
                k = os.write(self.fd, data)
            except OSError:
                return
            data = data[k:]

    def stop_tracing(self, cap):
        if self.status is None:
            self.status, self.cap = "truncated", cap
            self.unbreak()
            self.flush()
            self.returned = []

    def unbreak(self):
        """Every breakpoint gone (the finish breakpoints are internal: not in gdb.breakpoints())."""
        for b in gdb.breakpoints() + tuple(self.bps):
            if b.is_valid():
                b.delete()
        self.bps = []
        for rec in self.stack:
            if rec.fin is not None and rec.fin.is_valid():
                rec.fin.delete()
            rec.fin = None

    def event(self, k, rec, ln, loc=None, val=None, exc=None):
        if self.status is not None:
            return
        if self.n >= self.lim["events"]:
            self.stop_tracing("events")
            return
        d = rec.d  # its place in the stack, fixed while it lives
        up = self.stack[d - 1].fr if d > 0 else None
        ev = {"t": "ev", "i": self.n, "k": k, "fr": rec.fr, "up": up, "d": d, "f": rec.f, "ln": ln, "fn": rec.fn}
        if loc is not None:
            ev["loc"] = loc
        if val is not None:
            ev["val"] = val
        if exc is not None:
            ev["exc"] = exc
        if not self.emit(ev):
            self.stop_tracing("bytes")
            return
        self.n += 1

    def file_index(self, path):
        i = self.files.get(path)
        if i is None:
            i = self.files[path] = len(self.files)
            if i:
                self.emit({"t": "file", "f": i, "path": path})
        return i

    # ---- frames
    def traced_path(self, gf):
        try:
            sal = gf.find_sal()
        except gdb.error:
            return None
        if sal.symtab is None or not sal.line:
            return None
        path = sal.symtab.fullname()
        if not path.startswith(self.roots):
            return None
        fn = gf.name() or ""
        return None if fn.startswith(_COMPILER_MADE) else path

    def chain(self):
        out = []
        gf = gdb.newest_frame()
        while gf is not None:
            if self.traced_path(gf):
                out.append(gf)
            gf = gf.older()
        out.reverse()
        return out

    def state(self, rec):
        """Every argument and local in scope at the frame's pc, rendered."""
        vals = {}
        try:
            block = rec.gf.block()
        except RuntimeError:
            return vals
        blocks = []
        while block is not None:
            blocks.append(block)
            if block.function is not None:
                break
            block = block.superblock
        for b in reversed(blocks):  # outer first: an inner name shadows
            for sym in b:
                if not (sym.is_variable or sym.is_argument):
                    continue
                try:
                    vals[sym.name] = self.R.render(sym.value(rec.gf))
                except Exception as e:
                    vals[sym.name] = ["?", "<unrenderable: %s>" % type(e).__name__]
        return vals

    def locs(self, rec, full):
        now = self.state(rec)
        if full or rec.full or self.n % self.lim["snapshot_every"] == 0:
            rec.full = False
            rec.loc = now
            return now
        diff = {k: v for k, v in now.items() if rec.loc.get(k) != v}
        for k in rec.loc:
            if k not in now:
                diff[k] = None
        rec.loc = now
        return diff or None

    def push(self, gf):
        rec = _Frame()
        rec.fr = self.next_fr
        self.next_fr += 1
        rec.gf = gf
        fn = gf.function()
        rec.fn = fn.print_name if fn is not None else (gf.name() or "?")
        rec.f = self.file_index(self.traced_path(gf))
        rec.ln = fn.line if fn is not None and fn.line else gf.find_sal().line
        rec.loc = {}
        rec.full = False
        rec.fin = None
        rec.d = len(self.stack)
        rec.pc = 0
        rec.fresh = True
        if len(self.stack) >= self.lim["depth"]:
            self.stop_tracing("depth")
            return
        self.stack.append(rec)
        self.event("call", rec, rec.ln, loc=self.locs(rec, True))
        if self.status is not None:
            return
        try:
            rec.fin = _Finish(gf, self, rec) if gf.older() is not None else None
        except (gdb.error, ValueError, RuntimeError) as e:
            if os.environ.get("SURGEBOX_GDB_DEBUG") == "1":
                print("finish breakpoint: %r" % e)
            rec.fin = None

    def pop(self, rec, value):
        if self.throwing is not None and value is None:  # left by a C++ exception on its way out
            self.event("unwind", rec, rec.ln, exc=self.throwing)
        else:
            self.event("return", rec, rec.ln, val=None if value is None else self.R.render(value))
        if rec.fin is not None and rec.fin.is_valid():
            rec.fin.delete()
        i = self.stack.index(rec)
        del self.stack[i:]
        if self.stack:
            self.stack[-1].full = True  # its next event: a full snapshot (its line goes on: no new event)

    def sync(self, line=True):
        """After a stop: returns reported by the finish breakpoints, frames gone without one (longjmp),
        new frames (calls, also from untraced code: qsort's comparator), then the line about to run."""
        for rec, value in self.returned:
            if rec in self.stack:
                while self.stack and self.stack[-1] is not rec:
                    self.pop(self.stack[-1], None)
                self.pop(rec, value)
        self.returned = []
        if self.status is not None:
            return
        newest = gdb.newest_frame()
        if self.stack and newest == self.stack[-1].gf:  # the common case: a line of the same frame
            chain = None
            top_gf = newest
        else:
            chain = self.chain()
            keep = self.pop_to(chain)
            for gf in chain[keep:]:
                self.push(gf)
                if self.status is not None:
                    return
            top_gf = chain[-1] if chain else None
        if not line or not self.stack or top_gf is None:
            return
        top = self.stack[-1]
        top.gf = top_gf
        pc = top_gf.pc()
        ln = self.lines.get(pc)
        if ln is None:
            return
        # Several line-table entries of one line (a for's init, test, step) make one event, unless the
        # frame jumped back (a loop written on one line: an event per iteration, as in Python).
        if chain is None and ln == top.ln and pc > top.pc and not top.fresh:
            top.pc = pc
            return
        top.ln, top.pc, top.fresh = ln, pc, False
        self.event("line", top, ln, loc=self.locs(top, False))

    # ---- the run
    def on_stop(self, ev):
        self.last_stop = ev

    def on_exit(self, ev):
        code = getattr(ev, "exit_code", None)
        if code is not None:
            self.exit = {"code": int(code)}
        else:
            try:
                self.exit = {"signal": int(gdb.parse_and_eval("$_exitsignal"))}
            except gdb.error:
                self.exit = {"code": 255}

    def alive(self):
        inf = gdb.selected_inferior()
        return inf is not None and inf.pid != 0

    def run(self, argv):
        gdb.events.stop.connect(self.on_stop)
        gdb.events.exited.connect(self.on_exit)
        gdb.execute("handle all nostop noprint pass", to_string=True)
        gdb.execute("handle %s stop print pass" % " ".join(_CRASH), to_string=True)
        gdb.execute("catch exec", to_string=True)
        gdb.execute("run", to_string=True)
        gdb.execute("delete", to_string=True)
        if not self.alive():
            self.head(argv, None, None)
            self.status, self.crash_reason = "crashed", "the program did not start"
            return
        argv[:] = self.cmdline()
        producer = self.producer()
        entry = self.main_file()
        if entry is None:
            self.head(argv, producer, None)
            self.status, self.cap = "crashed", None
            self.crash_reason = "no debug information for main (built without -g?)"
            self.cont()
            return
        self.head(argv, producer, entry)
        self.breakpoints()
        self.catch_throw()
        self.resume()
        while self.alive():
            ev = self.last_stop
            self.last_stop = None
            if self.status is not None:
                self.cont()
                continue
            if not self.main_thread():  # another thread at a line: not recorded
                self.resume()
                continue
            if self.thrown(ev):
                self.sync(line=False)
                if self.stack and self.status is None:
                    self.throwing = self.cxx_exception()
                    self.event("exception", self.stack[-1], self.stack[-1].ln, exc=self.throwing)
                    self.thrower = self.stack[-1]
            elif isinstance(ev, gdb.SignalEvent):
                self.sync(line=False)
                if self.stack and self.status is None:
                    sig = ev.stop_signal
                    self.event("exception", self.stack[-1], self.stack[-1].ln,
                               exc={"ty": sig, "msg": _SIGTEXT.get(sig, sig)})
            else:
                self.caught()
                self.sync()
            self.resume()

    # ---- C++ exceptions: `catch throw`; frames left on the way are `unwind`, the catching one gets `exception`
    def catch_throw(self):
        if not any(f.startswith("/") and f.endswith((".cpp", ".cc", ".cxx", ".C")) for f in self.files):
            return
        try:
            gdb.execute("catch throw", to_string=True)
            self.throw_bp = gdb.breakpoints()[-1]
            self.throw_bp.silent = True
        except (gdb.error, IndexError):
            self.throw_bp = None

    def thrown(self, ev):
        return (self.throw_bp is not None and isinstance(ev, gdb.BreakpointEvent)
                and any(b == self.throw_bp for b in ev.breakpoints))

    def cxx_exception(self):
        """The thrown type's name: $_exception where libstdc++ has its probes, else __cxa_throw's second
        argument (x86-64: rsi, a std::type_info whose name is the mangled type) demangled by gdb."""
        try:
            return {"ty": str(gdb.parse_and_eval("$_exception").type.strip_typedefs()), "msg": ""}
        except gdb.error:
            pass
        try:
            tinfo = int(gdb.parse_and_eval("$rsi"))
            name_at = int.from_bytes(bytes(gdb.selected_inferior().read_memory(tinfo + 8, 8)), "little")
            raw = bytes(gdb.selected_inferior().read_memory(name_at, 256)).split(b"\0")[0].decode("ascii")
            text = gdb.execute("demangle _ZTS%s" % raw, to_string=True).strip()
            ty = text[len("typeinfo name for "):] if text.startswith("typeinfo name for ") else raw
        except (gdb.error, gdb.MemoryError, UnicodeDecodeError, ValueError):
            ty = "?"
        return {"ty": ty, "msg": ""}

    def pop_to(self, chain):
        """Pop the stack's frames from the first that `chain` (self.chain(): the traced frames
        now, outermost first) no longer holds (unwound, or left by a longjmp); how many stay."""
        keep = 0
        while keep < len(chain) and keep < len(self.stack) and self.stack[keep].gf == chain[keep]:
            keep += 1
        while len(self.stack) > keep:
            self.pop(self.stack[-1], None)
        return keep

    def caught(self):
        """The first line stop after a throw: frames gone were unwound, the frame it stops in caught it."""
        if self.throwing is None:
            return
        exc, thrower = self.throwing, self.thrower
        self.pop_to(self.chain())
        self.throwing = self.thrower = None
        if self.stack and self.stack[-1] is not thrower:
            self.event("exception", self.stack[-1], self.stack[-1].ln, exc=exc)
    def main_thread(self):
        t = gdb.selected_thread()
        return t is None or t.ptid[1] == t.ptid[0]

    def resume(self):
        if self.buf:  # before the program runs on: a killed gdb loses nothing (a write costs ~1% of a stop)
            self.flush()
        try:
            gdb.execute("continue", to_string=True)
        except gdb.error:
            pass

    def cont(self):
        """Untraced to the end (a cap hit, or the trace crashed): no breakpoint left, so full speed."""
        self.flush()
        while self.alive():
            try:
                gdb.execute("continue", to_string=True)
            except gdb.error:
                return

    def breakpoints(self):
        """A breakpoint at every line-table entry of the program's files but each function's first (its
        prologue, where arguments are not yet in place): `continue` then stops at the next line to run
        in any traced frame, and untraced code (libc) runs at full speed."""
        self.lines = {}
        seen = set()
        for path in [p for p in self.files] + self.sources():
            if path in seen:
                continue
            seen.add(path)
            try:
                sals = gdb.decode_line("%s:1" % path)[1] or []
            except gdb.error:
                continue
            for sal in sals[:1]:
                if sal.symtab is None:
                    continue
                for entry in sal.symtab.linetable():
                    if entry.line and entry.pc not in self.lines:
                        self.lines[entry.pc] = entry.line
        starts = set()
        for pc in self.lines:
            b = gdb.block_for_pc(pc)
            while b is not None and b.function is None:
                b = b.superblock
            if b is None or b.start == pc or b.function.name.startswith(_COMPILER_MADE):
                starts.add(pc)
        for pc in sorted(self.lines):
            if pc in starts:
                continue
            try:
                bp = gdb.Breakpoint("*%#x" % pc, internal=True)
                bp.silent = True
                self.bps.append(bp)
            except (gdb.error, RuntimeError):
                pass
        for pc in starts:
            del self.lines[pc]

    def sources(self):
        out = []
        try:
            text = gdb.execute("info sources", to_string=True)
        except gdb.error:
            return out
        for part in text.replace("\n", ",").split(","):
            p = part.strip()
            if p.startswith(self.roots) and os.path.isfile(p):
                out.append(p)
        return out

    def main_file(self):
        try:
            sym = gdb.lookup_global_symbol("main")
        except gdb.error:
            sym = None
        if sym is None or sym.symtab is None:
            return None
        path = sym.symtab.fullname()
        if not path.startswith(self.roots):
            return None
        self.files[path] = 0
        return path

    def producer(self):
        try:
            sym = gdb.lookup_global_symbol("main")
            return sym.symtab.producer if sym is not None and sym.symtab is not None else None
        except (gdb.error, AttributeError):
            return None

    def head(self, argv, producer, entry):
        lang = "c"
        compiler, flags = None, None
        if producer:
            cut = producer.find(" -")
            compiler, flags = (producer, "") if cut < 0 else (producer[:cut], producer[cut + 1:])
            if "C++" in compiler:
                lang = "cpp"
        rec = {"t": "head", "v": 1, "lang": lang, "impl": "gdb", "version": gdb.VERSION, "mech": "gdb-step"}
        if compiler is not None:
            rec["compiler"] = compiler
            rec["flags"] = flags
        try:
            build = json.loads(os.environ.get("SURGEBOX_TRACE_BUILD", "null"))
        except ValueError:
            build = None
        if isinstance(build, list):
            rec["build"] = build
        rec.update({"files": [entry] if entry else [], "entry": 0, "argv": argv, "limits": self.lim})
        self.emit(rec)

    def returns_at_exit(self):
        """main's return seen by its finish breakpoint before the exit; frames left by exit() get none."""
        if self.status is None:
            for rec, value in self.returned:
                if rec in self.stack:
                    while self.stack and self.stack[-1] is not rec:
                        self.stack.pop()
                    self.pop(rec, value)
        self.returned = []

    def cmdline(self):
        with open("/proc/%d/cmdline" % gdb.selected_inferior().pid, "rb") as f:
            return [a.decode("utf-8", "surrogateescape") for a in f.read().split(b"\0")[:-1]]

    def end(self):
        status = self.status or "complete"
        rec = {"t": "end", "status": status}
        if self.cap:
            rec["cap"] = self.cap
            if self.cap == "events":
                rec["events"] = self.lim["events"]
        if "events" not in rec:
            rec["events"] = self.n
        if status == "crashed":
            rec["reason"] = self.crash_reason or "?"
        rec["exit"] = self.exit or {"code": 255}
        self.buf.append((json.dumps(rec, separators=(",", ":")) + "\n").encode())
        self.flush()


def _exit_like(exit):
    """gdb ends as the program did: its exit status, or killed by its signal."""
    if "signal" in exit:
        sig = exit["signal"]
        try:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(exit["code"] & 0xFF)


def sbtrace_run():
    fd = os.environ.get("SURGEBOX_TRACE_FD", "")
    if not fd.isdigit():
        _fatal("SURGEBOX_TRACE_FD is not set")
    lim = _limits()
    for name in ("SURGEBOX_TRACE_FD", "SURGEBOX_TRACE_LIMITS", "SURGEBOX_TRACE_PATHS", "SURGEBOX_TRACE_BUILD",
                 "LINES", "COLUMNS"):
        gdb.execute("unset environment %s" % name, to_string=True)
    t = Tracer(int(fd), lim)
    argv = []
    try:
        t.run(argv)
    except Exception as e:  # the tracer's own failure: said in the end, the program finished untraced
        if t.status is None:
            t.status, t.crash_reason = "crashed", "%s: %s" % (type(e).__name__, e)
        try:
            t.unbreak()
            while t.alive():
                gdb.execute("continue", to_string=True)
        except Exception:
            pass
    t.returns_at_exit()
    t.end()
    _exit_like(t.exit or {"code": 255})


_early()
