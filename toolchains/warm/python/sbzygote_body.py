# The zygote's body (see sbzygote.py), compiled from source and executed in the
# zygote's __main__ namespace. Standard library modules that start-up has
# already imported only, plus _socket (for SCM_RIGHTS), dropped from
# sys.modules in each child.
#
# Request (one SOCK_SEQPACKET message, at most 1 MiB): b"\0"-separated fields
#   RUN, cwd, argc, argv..., envc, env... ("NAME=VALUE")
# with three descriptors by SCM_RIGHTS: the job's stdin, stdout, stderr.
# The zygote reads only its first four bytes (RUN/SBX): the forked child
# parses and checks it (_Z_INBOX), and a refusal comes after that fork.
# Or, from surgebox's daemon (runners/warm.c), a sandboxed job: b"SBX\0"
# alone, with the descriptors stdin, stdout, stderr, the job's socket, the
# sandbox init's pidfd, the job's plan (a memfd: the init's plan, packed by
# runners/plan.c's marshal pair, of which the zygote reads the mode only and
# the forked child maps and checks the rest, sbwarm_plan) and the job's
# cgroup.procs files; no reply on this socket (only READY, once, at start):
# the init hears GO/FAIL/EXIT
# on the job's socket (libsbwarm.so, SURGEBOX_ZYGOTE_LIB, loaded once here;
# runners/warm_lib.c says the steps). The child is the job's before any of
# its code runs: namespaces, cgroup, session, descriptors, directory,
# limits, uid and capabilities, seccomp, exactly as a cold job's program.
# argv[0] must be the zygote's own interpreter (sys.executable, or the path it
# was started as), argv[1] the script (no interpreter options: a job with
# options runs cold). Replies, one message each:
#   b"PID <pid> SEED <n>"  the child is forked, its hash seed (or b"REFUSED <why>")
#   b"EXIT <pid> <wait status> <utime s> <stime s> <maxrss kB>"
# Start-up variables of the interpreter (PYTHON*, LANG, LC_*) in the job's
# environment must equal those the zygote was started with (its original
# block, /proc/self/environ), else the job is REFUSED: they decide what
# start-up did, which the child inherits instead of redoing. What start-up
# added to os.environ (LC_CTYPE by PEP 538's locale coercion) is added to the
# job's environment, as a cold start-up would add it.
# SURGEBOX_ZYGOTE_SEEDED=1: the launcher chose the zygote's PYTHONHASHSEED
# (one seed per zygote, said in every PID reply) where a cold job would get a
# random one; a job may then leave PYTHONHASHSEED unset (or set it to that
# seed), and its child's environment is the job's own, without it.

_Z_MODULES = frozenset(sys.modules)  # what start-up imported, before us
import _socket  # noqa: E402  (the C module only: socket.py imports a dozen more)
import _thread  # noqa: E402
import _warnings  # noqa: E402
import _weakref  # noqa: E402
import atexit  # noqa: E402
import gc  # noqa: E402
import mmap  # noqa: E402  (the inbox: _serve)

_Z_V = sys.version_info[:2]
# surgebox's daemon starts us with HOME=/dev/null (runners/warm.c: the
# job's HOME is a client's word, and our start-up is outside the sandbox,
# as root when privileged): each child computes
# site.USER_BASE/USER_SITE anew from the job's HOME, as a cold start-up does
_Z_REHOME = [False]
_Z_SITE_AT = [0]  # where start-up's sys.path reaches the site-packages (the user site goes before)
# A job's request (argv, environment, directory) never enters the heap the
# zygote forks from (issue 35): it is received into the inbox, a private
# anonymous mapping of the zygote's own, which only the forked child parses
# (_parse, in its own memory); before the next job the zygote drops the
# inbox's pages (MADV_DONTNEED: they read as zeros again). Parsing in the
# zygote, as before, left the strings in its freed heap blocks, and the next
# job's child inherited them (tests/warm/test_heap_scan.py). Chosen over a
# second message read by the child: the zygote reads every message, so a
# child that died before reading its own would leave it to be read as the
# next request; the inbox leaves nothing behind whatever the child does.
_Z_INBOX_MAX = 1 << 20  # a request's bytes at most (the daemon's are 4: its job is in the plan's memfd)
_Z_INBOX = [None]
_Z_CHECK = [None]  # what _parse checks a request against: (me, start_env, seed or None, added)


# The short exit (_short_exit): the status Python's main will give, set by
# sbzygote.py when the program ends (None: not known, finalise as a cold
# start does); libsbwarm.so's exit and audit-hook watch, when it is loaded;
# the std streams _stdio made; what the zygote left for each child to check.
_Z_STATUS = [None]
_Z_SHORT = [None]
_Z_STDIO = []
_Z_SERVE = [None]  # libsbwarm's sbwarm_serve and its out-arguments (_load_lib)
_Z_SETENV = [None]  # libsbwarm's sbwarm_environ, when loaded (_environ)
_Z_EXTRA = [None, ()]  # len(sys.modules) when counted, and what the zygote added to start-up's modules
_Z_INT_ARRAYS = []  # ctypes' c_int * n, made in the zygote (_load_lib)
_Z_HOT = [None]  # libsbwarm's sbwarm_hot_apply (warm_hot.c), for the plain protocol's child
_Z_REHEARSAL = [None]  # in the rehearsal's child only (_rehearse): libsbwarm's report and its pipe
# what the rehearsal runs: a check as CRUXEval's (a function, a call, an
# assert) and a print, so that it takes the paths most jobs take
_Z_REHEARSAL_SOURCE = b"""def f(text, n):
    words = [w.upper() for w in text.split() if len(w) > n]
    return {w: len(w) for w in words}
assert f("a bb ccc dddd", 1) == {"BB": 2, "CCC": 3, "DDDD": 4}
print(sorted(f("x yy zzz", 0).items()))
"""
# The daemon's harness of function-call cases (toolchains/harness/fn_harness.py,
# which daemon/cases.c writes into each case's /app and runs as
# INTERPRETER /app/.sb_fn_harness.py FILE), compiled once here (_precompile):
# a child whose script is that path with exactly those bytes runs this code
# object rather than compiling the same 4 KB again (3.4 ms a case, in a
# forked child). The same call compile() would make, so the same object.
_Z_FN_HARNESS = "/app/.sb_fn_harness.py"  # daemon/internal.h SBD_FN_HARNESS_NAME, under /app
_Z_PRECOMPILED = [None]  # (its path, its bytes, its code)
_Z_NOTE = [None]  # tests only (tests/warm/zygoterun.py): a file each short exit appends its pid to
_Z_EXCEPTHOOK = sys.excepthook
_Z_FILTERS = list(_warnings.filters)
_Z_OLD = [None]  # the classes of the zygote's objects: (class, its __mro__, its __del__), _old_classes
_Z_OLD_C = [None, None, ()]  # libsbwarm's set-up and check of them, the check once set up, the dicts it reads
_Z_SCAN_MAX = 200000  # more young objects than this: finalise (as costly as the scan)
_Z_QUIET = frozenset((sys.modules["io"].BytesIO, sys.modules["io"].StringIO))  # close() writes nowhere
_Z_GEN = type((lambda: (yield))())
_Z_TYPE_MRO = type.__dict__["__mro__"].__get__
_Z_TYPE_DICT = type.__dict__["__dict__"].__get__
_Z_CALLBACK = _weakref.ReferenceType.__dict__["__callback__"].__get__
_Z_PROXIES = (_weakref.ProxyType, _weakref.CallableProxyType)
# weak-reference callbacks of the standard library that only drop an entry
# (abc's caches, thread-local dicts, weak containers, logging's handler
# list), by name (a program's own import of weakref makes new functions)
_Z_BUILTIN = type(len)
_Z_FUNCTION = type(lambda: None)
_Z_QUIET_BUILTINS = frozenset(("_destroy", "clear_locals", "_localdummy_destroyed"))
_Z_STDLIB = os.path.dirname(os.__file__)
_Z_QUIET_CALLBACKS = frozenset((os.path.join(_Z_STDLIB, f), q) for f, q in (
    ("weakref.py", "WeakValueDictionary.__init__.<locals>.remove"),
    ("weakref.py", "WeakKeyDictionary.__init__.<locals>.remove"),
    ("_weakrefset.py", "WeakSet.__init__.<locals>._remove"),
    (os.path.join("logging", "__init__.py"), "_removeHandlerRef")))


def _startup_env(env):
    return {k: v for k, v in env.items()
            if k.startswith(("PYTHON", "LC_")) or k in ("LANG", "LANGUAGE")}


def _in_mro(t, base):
    return base in type.__dict__["__mro__"].__get__(t)


def _exit_status(e):
    """The exit status Python's main gives for the program's uncaught
    exception e (handle_system_exit, or 1 after sys.excepthook), or None
    where this cannot know it without running the program's code (a
    SystemExit subclass, a changed excepthook) or it is a signal
    (KeyboardInterrupt)."""
    t = type(e)
    if t is SystemExit:
        code = e.code
        if code is None:
            return 0
        if _in_mro(type(code), int):  # (int)PyLong_AsLong(code), then exit()
            code = int.__int__(code)
            return code & 0xFF if -(1 << 63) <= code < (1 << 63) else None
        return 1  # main printed str(code)
    if _in_mro(t, SystemExit) or _in_mro(t, KeyboardInterrupt) or sys.excepthook is not _Z_EXCEPTHOOK:
        return None
    return 1


def _short_exit():
    """Registered first in each child, so that atexit runs it last: after
    threading's join of non-daemon threads and the program's own handlers,
    where Py_FinalizeEx would go on to tear the interpreter down (module
    dicts cleared, every object freed: in a forked child each write copies a
    page the zygote shares, 3 ms of a Debian python3's 3.5 per job). When
    nothing in that teardown could show, the std streams are flushed as
    flush_std_files does and the C library exits with the status Python's
    main would give; else this returns and finalisation runs as cold.
    Nothing shows when: the program has ended (not a call of
    atexit._run_exitfuncs); its status is known (_exit_status); no audit
    hook was added (libsbwarm's watch); no thread is left; the warnings
    filters are the start-up's (a finaliser's ResourceWarning stays
    ignored); sys.stdout/stderr are _stdio's and flush; and no object made
    since the fork (the zygote's are frozen, gc.freeze) has a finaliser: no
    class in its type's MRO defines __del__ (Python's or a C type's
    tp_finalize: io, generators, sockets, scandir...), save BytesIO and
    StringIO, finished generators and _stdio's streams; no weak reference
    with a callback; no weak proxy."""
    status, short = _Z_STATUS[0], _Z_SHORT[0]
    if _ended() or status is None or short is None:
        return
    try:
        if not _quiet_end():
            return
        for f in (sys.stdout, sys.stderr):
            if not f.closed:
                f.flush()
    except BaseException:
        return  # finalisation does it again and says so, as cold
    rehearsal = _Z_REHEARSAL[0]
    if rehearsal is not None:  # the pages this end wrote are in the report too
        rehearsal[0](rehearsal[1])
        os._exit(0)
    if _Z_NOTE[0]:
        note = os.open(_Z_NOTE[0], os.O_WRONLY | os.O_APPEND)
        os.write(note, b"%d\n" % os.getpid())
        os.close(note)
    short[0](status)


def _quiet_end():
    if _Z_SHORT[0][1]() or _thread._count():
        return False
    w = sys.modules.get("warnings")
    filters = _warnings.filters if w is None else (w.__dict__.get("filters") if type(w) is type(sys) else None)
    if type(filters) is not list or len(filters) != len(_Z_FILTERS) or any(
            a is not b for a, b in zip(filters, _Z_FILTERS)):
        return False
    out, err = _Z_STDIO[1](), _Z_STDIO[2]()
    if out is None or err is None or not (sys.stdout is out and sys.__stdout__ is out and sys.stderr is err and sys.__stderr__ is err):
        return False
    exempt = None
    for gen in (0, 1, 2):
        objs = gc.get_objects(gen)
        if len(objs) > _Z_SCAN_MAX:
            return False
        types = set(map(type, objs))
        finalised = [t for t in types if not _inert_type(t)]
        weak = [t for t in types if _in_mro(t, _weakref.ReferenceType)]
        if not finalised and not weak:
            continue
        if exempt is None:
            exempt = {id(r()) for r in _Z_STDIO if r() is not None}
        finalised, weak = frozenset(finalised), frozenset(weak)
        for o in objs:
            t = type(o)
            if t in finalised:
                if not (id(o) in exempt or (t is _Z_GEN and o.gi_frame is None)):
                    return False
            elif t in weak and not _quiet_callback(_Z_CALLBACK(o)):
                return False
    return True


def _quiet_callback(cb):
    t = type(cb)
    if cb is None or (t is _Z_BUILTIN and cb.__name__ in _Z_QUIET_BUILTINS and cb.__module__ is None):
        return True
    return t is _Z_FUNCTION and (cb.__code__.co_filename, cb.__qualname__) in _Z_QUIET_CALLBACKS


def _inert_type(t):
    if t in _Z_QUIET:
        return True
    if t in _Z_PROXIES:
        return False
    return not any("__del__" in _Z_TYPE_DICT(c) for c in _Z_TYPE_MRO(t))


def _load_lib(path):
    """libsbwarm.so through ctypes, once, before any job (ctypes and what it
    imports are dropped from each child's sys.modules with _socket)."""
    if not path:
        return None
    import ctypes
    lib = ctypes.CDLL(path)
    # every child would share a writable MAP_SHARED mapping with us and with
    # each other (libffi's closures use one where static trampolines are
    # missing; ctypes makes a closure at import): never serve then
    with open("/proc/self/maps") as fh:
        if any(line.split()[1][1] == "w" and line.split()[1][3] == "s" for line in fh):
            os._exit(1)
    for name, args in (("sbwarm_await_go", [ctypes.c_int]), ("sbwarm_enter", [ctypes.c_int] * 4),
                       ("sbwarm_enter_pid", [ctypes.c_int] * 3), ("sbwarm_leave_pid", []),
                       ("sbwarm_reap", [ctypes.c_int] * 2), ("sbwarm_refuse", [ctypes.c_int]),
                       ("sbwarm_fail", [ctypes.c_int]), ("sbwarm_plan", [ctypes.c_int] * 2),
                       ("sbwarm_arg", [ctypes.c_int]), ("sbwarm_env", [ctypes.c_int]),
                       ("sbwarm_program", [ctypes.c_int] * 4 + [ctypes.POINTER(ctypes.c_int), ctypes.c_int])):
        getattr(lib, name).argtypes = args
    lib.sbwarm_arg.restype = lib.sbwarm_env.restype = ctypes.c_char_p  # bytes, None past the last
    # the cgroup.procs descriptors' array types, made here: a ctypes type
    # made in a child leaves a weak proxy (no short exit, _quiet_end)
    _Z_INT_ARRAYS[:] = [ctypes.c_int * n for n in range(17)]
    lib.sbwarm_environ.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    _Z_SETENV[0] = lib.sbwarm_environ
    lib.sbwarm_hot_report.argtypes = [ctypes.c_int]
    lib.sbwarm_hot_set.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    _Z_HOT[0] = lib.sbwarm_hot_apply
    lib.sbwarm_drop_bounding()
    # the zygote's loop (warm_serve.c), called with the GIL held: it forks
    # as os.fork() does, the interpreter's fork hooks included
    serve = ctypes.PyDLL(path).sbwarm_serve
    serve.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int),
                      ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_long)]
    _Z_SERVE[0] = (serve, (ctypes.c_int * 10)(), ctypes.c_int(), ctypes.c_long())
    lib.sbwarm_old_set.argtypes = [ctypes.c_void_p] + [ctypes.c_size_t] * 3 + [ctypes.py_object]
    _Z_OLD_C[:] = [(lib.sbwarm_old_set, ctypes.PyDLL(path).sbwarm_old_changed, ctypes), None, ()]
    if lib.sbwarm_audit_watch() == 0:
        lib.sbwarm_exit.argtypes = [ctypes.c_int]
        _Z_SHORT[0] = (lib.sbwarm_exit, lib.sbwarm_audit_hooked, lib.sbwarm_class_changed)
    return lib, ctypes


def _sandboxed(ctl, lib, fds, n):
    """A job of surgebox's daemon: fds = stdin, stdout, stderr, the job's
    socket, the init's pidfd, the plan, cgroup.procs...; n: the inbox's
    bytes (-1: malformed); the plan is read by the program's process only;
    returns the (source, module dict) in that process only."""
    lib, ctypes = lib
    if len(fds) < 6:  # malformed: nobody to tell but the init, if its socket came
        if len(fds) > 3:
            lib.sbwarm_refuse(fds[3])
        for f in fds:
            os.close(f)
        return None
    jfd, pidfd, blob, cg = fds[3], fds[4], fds[5], fds[6:]
    if n < 0:
        lib.sbwarm_refuse(jfd)
    elif lib.sbwarm_await_go(jfd) == 0:
        born = lib.sbwarm_enter_pid(jfd, pidfd, blob)
        if born == 0:  # one fork, born in the job's pid namespace
            _freeze()
            try:
                pid = os.fork()
            except BaseException:  # (EAGAIN) an internal error, said to the init
                pid = -1
            if pid == 0:
                if lib.sbwarm_enter(jfd, pidfd, blob, 1) != 0:
                    os._exit(127)
                return _program(ctl, lib, ctypes, fds, cg)
            if lib.sbwarm_leave_pid() != 0:  # cannot happen (its own namespace): never serve again
                os._exit(1)
            fds = _keep_job_socket(fds)
            if pid < 0:
                lib.sbwarm_refuse(jfd)
            else:
                lib.sbwarm_reap(jfd, pid)
        elif born == 1:  # user-namespace mode: two forks
            became = _twice(ctl, lib, ctypes, fds, cg)
            if became:
                return became
            fds = [jfd]
        else:  # FAIL said
            lib.sbwarm_reap(jfd, 0)
    for f in fds:
        os.close(f)
    return None


def _program(ctl, lib, ctypes, fds, cg):
    """In the program's process: its plan mapped and checked (libsbwarm's
    sbwarm_plan, plan.c's reader), its argv and environment checked (a
    refusal is FAIL to the init, then exit 127, as sbwarm_refuse), the
    plan's steps taken (sbwarm_program), then _become."""
    ctl.close()
    if lib.sbwarm_plan(fds[3], fds[5]) != 0:  # FAIL said
        os._exit(127)
    why, job = _check(None, _plan_words(lib.sbwarm_arg), _plan_words(lib.sbwarm_env))
    if why:
        lib.sbwarm_fail(fds[3])
        os._exit(127)
    arrays = _Z_INT_ARRAYS
    cgs = (arrays[len(cg)] if 0 < len(cg) < len(arrays) else ctypes.c_int * max(1, len(cg)))(*cg)
    lib.sbwarm_program(fds[3], fds[0], fds[1], fds[2], cgs, len(cg))  # or _exit
    return _become(None, None, *job)


def _plan_words(get):
    """The plan's argv or envp (sbwarm_arg, sbwarm_env), as bytes."""
    words = []
    while True:
        w = get(len(words))
        if w is None:
            return words
        words.append(w)


def _keep_job_socket(fds):
    """The zygote's part once the program's process is forked: every
    descriptor of the job closed but its socket (fds[3]); [that socket]."""
    for f in fds[:3] + fds[4:]:
        os.close(f)
    return fds[3:4]


def _twice(ctl, lib, ctypes, fds, cg):
    """User-namespace mode: a first fork enters every namespace (the user
    namespace first) and forks the program's process; the zygote, its
    subreaper, reaps that one. Closes fds but the job's socket; returns
    _program's in the program's process, None in the zygote."""
    jfd, pidfd, blob = fds[3], fds[4], fds[5]
    r, w = os.pipe()
    _freeze()
    first = os.fork()
    if first == 0:  # enters the init's namespaces; its child is the program
        try:
            os.close(r)
            if lib.sbwarm_enter(jfd, pidfd, blob, 0) != 0:
                os._exit(127)
            pid = os.fork()
        except BaseException:  # (fork: EAGAIN) an internal error, said to the init
            lib.sbwarm_refuse(jfd)
            os._exit(127)
        if pid == 0:
            os.close(w)
            return _program(ctl, lib, ctypes, fds, cg)
        os.write(w, b"%d" % pid)
        os._exit(0)
    os.close(w)
    _keep_job_socket(fds)
    while True:
        try:
            os.waitpid(first, 0)
            break
        except InterruptedError:
            continue
    got = os.read(r, 32)
    os.close(r)
    lib.sbwarm_reap(jfd, int(got) if got else 0)  # we are its subreaper
    return None


def _serve():
    """The zygote's loop; returns (source bytes, module dict) in a child only."""
    fd = int(os.environ.pop("SURGEBOX_ZYGOTE_FD"))
    lib = _load_lib(os.environ.pop("SURGEBOX_ZYGOTE_LIB", None))
    seeded = os.environ.pop("SURGEBOX_ZYGOTE_SEEDED", None) == "1"
    _Z_REHOME[0] = os.environ.pop("SURGEBOX_ZYGOTE_REHOME", None) == "1"
    _Z_NOTE[0] = os.environ.pop("SURGEBOX_ZYGOTE_NOTE", None)
    rehearse = os.environ.pop("SURGEBOX_ZYGOTE_NO_HOT", None) != "1"  # tests only: no rehearsal, no set
    seed = os.environ.get("PYTHONHASHSEED", "random") or "random"
    with open("/proc/self/environ", "rb") as fh:
        given = dict(e.split("=", 1) for e in os.fsdecode(fh.read()).split("\0") if "=" in e)
    given.pop("SURGEBOX_ZYGOTE_FD", None)
    given.pop("SURGEBOX_ZYGOTE_SEEDED", None)
    given.pop("SURGEBOX_ZYGOTE_REHOME", None)
    given.pop("SURGEBOX_ZYGOTE_NOTE", None)
    given.pop("SURGEBOX_ZYGOTE_NO_HOT", None)
    given.pop("SURGEBOX_ZYGOTE_LIB", None)
    if seeded:
        os.environ.pop("PYTHONHASHSEED", None)
        given.pop("PYTHONHASHSEED", None)
    start_env = _startup_env(given)
    added = {k: v for k, v in os.environ.items() if k not in given}
    me = {sys.executable, (getattr(sys, "orig_argv", None) or [sys.executable])[0]}
    site = sys.modules.get("site")
    system_sites = set(site.getsitepackages()) if site is not None and hasattr(site, "getsitepackages") else set()
    _Z_SITE_AT[0] = next((i for i, p in enumerate(sys.path) if p in system_sites), len(sys.path))
    _Z_CHECK[0] = (me, start_env, seed if seeded else None, added)
    inbox = _Z_INBOX[0] = mmap.mmap(-1, _Z_INBOX_MAX + 1, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    ctl = _socket.socket(fileno=fd)
    serve = _Z_SERVE[0]
    if serve:
        ctypes = lib[1]
        serve = serve + (ctypes.addressof(ctypes.c_char.from_buffer(inbox)),)
    _precompile()
    if lib:
        became = rehearse and _rehearse(ctl, lib, given)
        if became:  # the rehearsal's child: its program runs
            return became
        ctl.sendmsg([b"READY"])  # surgebox's daemon: start-up done, the library loaded
    while True:
        if serve:  # libsbwarm's loop serves the daemon's jobs; returns for the rest
            call, fdbuf, nfds, nbytes, addr = serve
            _freeze()
            r = call(fd, addr, len(inbox), fdbuf, nfds, nbytes)
            if r == 3:  # a signal: its handler has run
                continue
            if r == 4:  # an interpreter without PyOS_BeforeFork (3.6): Python's loop
                serve = None
                continue
            if r <= 0:
                if r == 0:
                    os._exit(0)  # the spawner closed its end: no job, no finalisation
                raise OSError(-r, os.strerror(-r))
            fds = fdbuf[:nfds.value]
            if r == 2:  # the program's process
                return _program(ctl, lib[0], lib[1], fds, fds[6:])
            n = nbytes.value
            filled = n if n >= 0 else len(inbox)
        else:
            try:
                n, anc, flags, _addr = ctl.recvmsg_into([inbox], _socket.CMSG_SPACE(10 * 4))
            except InterruptedError:
                continue
            if not n:
                os._exit(0)  # the spawner closed its end: no job, no finalisation
            fds = []
            for level, kind, data in anc:
                if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                    fds += [int.from_bytes(data[i:i + 4], sys.byteorder) for i in range(0, len(data) - len(data) % 4, 4)]
            filled = n
            if n > _Z_INBOX_MAX or flags & _socket.MSG_TRUNC:
                n = -1
        head = inbox[:4]  # (the only bytes of a request the zygote reads: no job's words)
        try:
            if head == b"SBX\0" and lib:
                became = _sandboxed(ctl, lib, fds, n)
                if became:
                    return became
                continue
            if head != b"RUN\0" or len(fds) != 3 or n < 0:
                for f in fds:
                    os.close(f)
                ctl.sendmsg([b"REFUSED malformed request"])
                continue
            became = _plain(ctl, fds, n, seed)
            if became:
                return became
        finally:  # the request's pages dropped: the next child forks without them
            inbox.madvise(mmap.MADV_DONTNEED, 0, min(len(inbox), (filled | (mmap.PAGESIZE - 1)) + 1))


def _precompile():
    """Once, at start: the function-call harness, where it is installed
    beside us (share/surgebox/harness, or the source tree), compiled as a
    child would compile it (_code_of)."""
    here = os.path.dirname(os.path.abspath(_G["__file__"]))
    try:
        with open(os.path.join(here, "..", "..", "harness", "fn_harness.py"), "rb") as fh:
            source = fh.read()
        _Z_PRECOMPILED[0] = (_Z_FN_HARNESS, source, compile(source, _Z_FN_HARNESS, "exec", dont_inherit=True))
    except (OSError, SyntaxError, ValueError):
        pass


def _code_of(source, filename):
    """In the program's process: the code of its script (sbzygote.py)."""
    pre = _Z_PRECOMPILED[0]
    if pre is not None and filename == pre[0] and source == pre[1]:
        return pre[2]
    return compile(source, filename, "exec", dont_inherit=True)


def _rehearse(ctl, lib, given):
    """Once, before READY: a child runs _Z_REHEARSAL_SOURCE through a plain
    job's path (_check, _become, the program, its short exit) on /dev/null,
    and at that exit reports the pages it wrote (libsbwarm's
    sbwarm_hot_report); the zygote keeps them (sbwarm_hot_set), and each
    job's process copies them in one call, not one fault each (warm_hot.c).
    Nothing of any job takes part. No short exit (none here, or the end was
    not quiet): no report, no set. [the child's (source, module dict)] in
    the child, None here."""
    lib = lib[0]
    if _Z_SHORT[0] is None or not hasattr(os, "memfd_create"):
        return None
    src = os.memfd_create("sbrehearsal")
    os.write(src, _Z_REHEARSAL_SOURCE)
    fds = [os.open(os.devnull, os.O_RDWR) for _ in range(3)]
    r, w = os.pipe()
    _Z_REHEARSAL[0] = (lib.sbwarm_hot_report, w)
    _freeze()
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid == 0:
        os.close(r)
        env = [os.fsencode("%s=%s" % kv) for kv in given.items()]
        why, job = _check(b"/", [os.fsencode(sys.executable), b"/proc/self/fd/%d" % src], env)
        if why:
            os._exit(1)
        return _become(ctl, fds, *job)
    _Z_REHEARSAL[0] = None
    for f in fds + [w, src]:
        os.close(f)
    report = b""
    while len(report) < (1 << 20):
        try:
            got = os.read(r, 1 << 16)
        except InterruptedError:
            continue
        if not got:
            break
        report += got
    os.close(r)
    if pid > 0:
        _wait(pid)
        if report:
            lib.sbwarm_hot_set(report, len(report))
    return None


def _plain(ctl, fds, n, seed):
    """A job of the plain protocol (tests, bench/warm_python.py): the child
    parses and checks its request and tells the zygote on a pipe whether it
    is refused (a reason) or runs (nothing), before the PID reply."""
    r, w = os.pipe()
    _freeze()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        why, job = _parse(_Z_INBOX[0][:n], fds)
        if why:
            os.write(w, why.encode())
            os._exit(0)
        os.close(w)
        return _become(ctl, fds, *job)
    os.close(w)
    for f in fds:
        os.close(f)
    why = b""
    while True:
        try:
            got = os.read(r, 512)
        except InterruptedError:
            continue
        if not got:
            break
        why += got
    os.close(r)
    if why:
        _wait(pid)
        ctl.sendmsg([b"REFUSED " + why])
        return None
    ctl.sendmsg([b"PID %d SEED %s" % (pid, seed.encode())])
    _p, status, ru = _wait(pid)
    ctl.sendmsg([b"EXIT %d %d %.6f %.6f %d" % (pid, status, ru.ru_utime, ru.ru_stime, ru.ru_maxrss)])
    return None


def _wait(pid):
    while True:
        try:
            return os.wait4(pid, 0)
        except InterruptedError:
            continue


def _freeze():
    """Everything the zygote has made moved out of the collector's reach
    before a fork: the child's collections (and _short_exit's scan) see only
    its own objects, and write no page it shares with the zygote."""
    _count_extra()
    if _Z_OLD[0] is None:
        _Z_OLD[0] = _old_classes()
        _old_in_c(_Z_OLD[0])
    if hasattr(gc, "freeze"):
        gc.freeze()


def _old_classes():
    """Once, before the first freeze: every class a finaliser of the
    zygote's objects could come from (the mutable classes in the MROs of
    their types, metaclasses too: a class is an object), with its __mro__
    and __del__ as they are. A program that adds __del__ to one, or changes
    its bases, gives objects it did not make a finaliser that a cold
    interpreter's teardown runs (issue 35: os._Environ.__del__, or
    abc.ABCMeta's, whose classes only the collector frees): _ended sees it."""
    heap, immutable = 1 << 9, (1 << 8 if _Z_V >= (3, 10) else 0)  # Py_TPFLAGS_HEAPTYPE, _IMMUTABLETYPE
    flags = type.__dict__["__flags__"].__get__
    objs = gc.get_objects()
    types = set(map(type, objs))
    del objs
    seen, out = set(), []
    for t in types:
        for c in _Z_TYPE_MRO(t):
            if c not in seen:
                seen.add(c)
                if flags(c) & heap and not flags(c) & immutable:
                    out.append((c, _Z_TYPE_MRO(c), _Z_TYPE_DICT(c).get("__del__")))
    return tuple(out)


def _old_in_c(classes):
    """Once, after _old_classes: the same check handed to libsbwarm
    (warm_classes.c), which reads the words a type object keeps its tp_mro
    and tp_dict in and looks __del__ up in that dict, writing nothing: the
    Python walk touches each class, __mro__ and __del__ at the program's end,
    a copied page each in a forked child. The two offsets are found on each
    class's own words and must agree on all of them; else the walk stays."""
    setup = _Z_OLD_C[0]
    if not setup or not classes:
        return
    set_old, check, ctypes = setup
    word = ctypes.sizeof(ctypes.c_void_p)
    at_mro = at_dict = None
    table, dicts = [], []
    for c, mro, fin in classes:
        real = gc.get_referents(_Z_TYPE_DICT(c))  # (a mappingproxy's one referent: the class's dict)
        if len(real) != 1 or not isinstance(real[0], dict) or type(real[0]).get is not dict.get:
            return  # (ctypes' classes keep a dict subclass of their own)
        words = [ctypes.c_size_t.from_address(id(c) + i * word).value for i in range(48)]
        m = [i for i, w in enumerate(words) if w == id(mro)]
        d = [i for i, w in enumerate(words) if w == id(real[0])]
        if len(m) != 1 or len(d) != 1 or at_mro not in (None, m[0]) or at_dict not in (None, d[0]):
            return
        at_mro, at_dict = m[0], d[0]
        table += [id(c), id(mro), id(real[0]), 0 if fin is None else id(fin)]
        dicts.append(real[0])  # (kept: no other object is ever at a dict's address)
    if set_old((ctypes.c_size_t * len(table))(*table), len(classes), at_mro * word, at_dict * word, "__del__") == 0:
        _Z_OLD_C[1:] = [check, tuple(dicts)]


def _old_changed():
    """Whether the program may have given an object of the zygote's a
    finaliser: an old class's __del__ or bases changed (_old_classes), or an
    object's __class__ or a class's __bases__ assigned (libsbwarm's audit
    hook: the zygote's objects are not scanned)."""
    short = _Z_SHORT[0]
    if short is not None and short[2]():
        return True
    if _Z_OLD_C[1] is not None:
        return _Z_OLD_C[1]() != 0
    for c, mro, fin in _Z_OLD[0] or ():
        if _Z_TYPE_MRO(c) is not mro or _Z_TYPE_DICT(c).get("__del__") is not fin:
            return True
    return False


def _ended():
    """When the program's module has ended (sbzygote.py) and again at the
    short exit: where the program may have given the zygote's objects a
    finaliser, they are handed back to the collector (gc.unfreeze), so that
    the teardown finalises them as a cold interpreter's teardown finalises
    its own start-up's objects (a frozen object is never collected, and its
    cycles would never be freed), and no short exit. True then."""
    try:
        if not _old_changed():
            return False
    except BaseException:
        pass  # (the program broke what the check reads: finalise as cold)
    if hasattr(gc, "unfreeze"):
        gc.unfreeze()
    return True


def _parse(msg, fds):
    """In the forked child only (the zygote never reads a request): a plain
    request's fields, _check'ed."""
    f = msg.split(b"\0")
    try:
        if f[0] != b"RUN" or len(fds) != 3:
            return "malformed request", None
        argc = int(f[2])
        argv = f[3:3 + argc]
        envc = int(f[3 + argc])
        env = f[4 + argc:4 + argc + envc]
    except (IndexError, ValueError):
        return "malformed request", None
    return _check(f[1], argv, env)


def _check(cwd, argv, env):
    """In the forked child only: why the job (cwd, argv, env as bytes; cwd
    None from a plan, whose steps take it) is refused, or None and (cwd,
    argv, env), env with what start-up added to the zygote's environment."""
    me, start_env, seed, added = _Z_CHECK[0]
    try:
        cwd = None if cwd is None else os.fsdecode(cwd)
        argv = [os.fsdecode(a) for a in argv]
        env = dict(os.fsdecode(e).split("=", 1) for e in env)
    except ValueError:
        return "malformed request", None
    if len(argv) < 2 or argv[0] not in me:
        return "argv[0] is not this zygote's interpreter", None
    if argv[1].startswith("-"):
        return "interpreter options: run cold", None
    if seed is not None and env.get("PYTHONHASHSEED", seed) == seed:
        start_env = dict(start_env, PYTHONHASHSEED=env.get("PYTHONHASHSEED"))
        if start_env["PYTHONHASHSEED"] is None:
            del start_env["PYTHONHASHSEED"]
    if _startup_env(env) != start_env:
        return "start-up variables (PYTHON*, LANG, LC_*) differ from the zygote's: run cold", None
    env.update(added)
    return None, (cwd, argv, env)


def _become(ctl, fds, cwd, argv, env):
    """In the forked child: the job's session, descriptors, directory,
    environment, sys state and __main__, as `python3 main.py` has them
    (ctl None: sbwarm_program made the session, descriptors and directory)."""
    if ctl is not None:
        if _Z_HOT[0] is not None:
            _Z_HOT[0]()
        ctl.close()
        os.setsid()
        for i, f in enumerate(fds):
            if f != i:
                os.dup2(f, i)  # inheritable, as a cold job's 0-2
        for f in fds:
            if f > 2:
                os.close(f)
        os.chdir(cwd)
    _environ(env)
    _stdio()
    if _Z_SHORT[0] is not None:
        atexit.register(_short_exit)
    for name in _Z_EXTRA[1]:
        sys.modules.pop(name, None)
    site = sys.modules.get("site")
    if _Z_REHOME[0] and site is not None and getattr(site, "USER_SITE", None) is not None:
        site.USER_BASE = site.USER_SITE = None  # start-up set them (the user site enabled)
        site.getusersitepackages()
        _user_site(site)
    script = argv[1]
    sys.argv = argv[1:]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = list(argv)
    g = _main_module(script, type(sys.modules["__main__"].__loader__))  # sbexcepthook.py's
    file_value = g["__file__"]
    try:
        with open(script, "rb") as fh:
            source = fh.read()
    except OSError as e:
        sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n" % (argv[0], file_value, e.errno, e.strerror))
        sys.stderr.flush()
        os._exit(2)
    # the zygote's frame sits under the program's (and up to 3.11 so does
    # exec's C call): the program reaches the same depth before RecursionError
    sys.setrecursionlimit(sys.getrecursionlimit() + (1 if _Z_V >= (3, 12) else 2))
    return source, g


def _user_site(site):
    """The user site under the job's HOME, added as a cold start-up adds it
    (site.main's addusersitepackages: after the standard library, before
    the site-packages, its .pth files processed, their lines run) where it
    exists (issue 35: it was ignored warm). Run in the program's process,
    inside the sandbox, as its uid: never in the zygote (HOME=/dev/null
    there). sys.path[0], the script's directory, is not there yet, as
    during a cold start-up's site; the site-packages' own .pth files were
    processed by the zygote's start-up, after these (PROTOCOL.md)."""
    user_site = site.USER_SITE
    if not site.ENABLE_USER_SITE or not os.path.isdir(user_site):
        return
    path = sys.path
    path0 = 0 if (sys.flags.isolated or getattr(sys.flags, "safe_path", False)) else 1
    at = max(_Z_SITE_AT[0], path0)
    first, tail = path[:path0], path[at:]
    path[:] = path[path0:at]
    site.addsitedir(user_site)
    path = sys.path  # (a .pth line may have bound another list)
    path[:] = first + path + [p for p in tail if p not in path]


def _environ(env):
    """os.environ (and os.environb) and the C environment become the job's,
    in its order: as os.environ.clear() then update(env) leave them, but
    with one call into libsbwarm for the C side and a new dict for
    os.environ's data (no unsetenv and putenv call per variable, each of
    which writes pages the child shares with the zygote)."""
    setenv = _Z_SETENV[0]
    if setenv is None:
        os.environ.clear()
        os.environ.update(env)
        return
    environ = os.environ
    data = {environ.encodekey(k): environ.encodevalue(v) for k, v in env.items()}
    block = b"".join(k + b"=" + v + b"\0" for k, v in data.items())
    if setenv(block, len(block)) != 0:
        raise MemoryError("the job's environment")
    environ._data = data
    if hasattr(os, "environb"):
        os.environb._data = data


def _count_extra():
    """Before each fork: the modules the zygote added to start-up's (counted
    again only when sys.modules grew or shrank), which each child drops."""
    if _Z_EXTRA[0] != len(sys.modules):
        _Z_EXTRA[:] = [len(sys.modules), tuple(set(sys.modules) - _Z_MODULES)]


def _stdio():
    """sys.stdin/stdout/stderr made anew on the job's descriptors, as
    Python's start-up makes them (create_stdio): buffering, line buffering
    from isatty (always on stderr from 3.9), the encodings and errors start-up chose."""
    io = sys.modules["io"]
    buffered = not sys.__stdout__.write_through  # -u, PYTHONUNBUFFERED
    texts, under = [], []
    for fd, name, write in ((0, "stdin", False), (1, "stdout", True), (2, "stderr", True)):
        old = getattr(sys, name)
        buf = io.open(fd, "wb" if write else "rb", -1 if buffered or not write else 0, None, None, None, False)
        raw = buf.raw if (buffered or not write) else buf
        raw.name = "<%s>" % name
        line = buffered and (raw.isatty() or (fd == 2 and _Z_V >= (3, 9)))  # stderr: always from 3.9
        new = io.TextIOWrapper(buf, old.encoding, old.errors, "\n", line, not buffered)
        new.mode = "w" if write else "r"
        setattr(sys, name, new)
        setattr(sys, "__%s__" % name, new)
        texts.append(new)
        under += [buf, raw]
    # weakly: the zygote's list is frozen, and a frozen object's reference
    # would keep these past the collection where a cold start frees them
    _Z_STDIO[:] = [_weakref.ref(f) for f in texts + under]
