# surgebox's Python tracer, its first part: the names it binds before the
# program runs, JSON text and values rendered without running the program's
# code. sbtrace.py, the entry, loads it (after sbexcepthook.py; then
# sbtrace_events.py, the engine) as a module of its own from its cached bytecode; the
# other parts import what they use of it by name, and no part is left in
# sys.modules when the program runs.
#
# sbtrace.py runs main.py as `python3 [FLAGS] main.py ARGS...` would (argv, sys.path[0],
# a fresh __main__, stdout/stderr bytes, tracebacks, exit status) and writes
# the trace as JSON Lines to descriptor SURGEBOX_TRACE_FD. Standard library
# only, CPython 3.8 ... 3.13: sys.settrace up to 3.11, sys.monitoring from 3.12.
# Nothing here may run the program's code (no repr/str/getattr on its objects)
# or raise into it; what the program can still notice is listed in PROTOCOL.md.
import sys
import os

_self_module = sys.modules["__main__"]  # the entry's module, kept: it holds the parts' modules

# Everything the tracer calls while the program runs is bound here, before it
# starts: a program may replace builtins.len, os.write, sys.exc_info, ...
# and the tracer must never call the program's code. (Module globals come
# before builtins in a name lookup; this namespace is the tracer's own.)
type, len, id, set, dict, list, tuple, str, int, float = type, len, id, set, dict, list, tuple, str, int, float
bytes, bytearray, complex, bool, range, slice, frozenset = bytes, bytearray, complex, bool, range, slice, frozenset
object, all, abs, enumerate, exec, compile, getattr = object, all, abs, enumerate, exec, compile, getattr
BaseException, Exception, SystemExit, OSError = BaseException, Exception, SystemExit, OSError
InterruptedError, ValueError, AttributeError, ImportError = InterruptedError, ValueError, AttributeError, ImportError
_os_write, _os_close, _getcwd = os.write, os.close, os.getcwd
_os_open, _os_read, _O_RDONLY = os.open, os.read, os.O_RDONLY
_exc_info, _getframe, _gettrace, _getprofile = sys.exc_info, sys._getframe, sys.gettrace, sys.getprofile
_settrace, _sys_modules = sys.settrace, sys.modules
_mon = getattr(sys, "monitoring", None)
if _mon is not None:
    _m_get_tool, _m_get_events, _m_set_events = _mon.get_tool, _mon.get_events, _mon.set_events
    _m_set_local_events, _m_register, _m_use_tool, _m_free_tool = (
        _mon.set_local_events, _mon.register_callback, _mon.use_tool_id, _mon.free_tool_id)
    _m_DISABLE, _m_E = _mon.DISABLE, _mon.events
_V = sys.version_info[:2]
_MON = _V >= (3, 12)
_TOOL = 0  # sys.monitoring.DEBUGGER_ID


def _fatal(msg):
    sys.stderr.write("sbtrace: %s\n" % msg)
    sys.stderr.flush()
    os._exit(2)


# ---------------------------------------------------------------- JSON out

_ESC = {i: "\\u%04x" % i for i in range(32)}
_ESC.update({ord('"'): '\\"', ord("\\"): "\\\\", 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"})
_ESC.update({i: "\\u%04x" % i for i in range(0xD800, 0xE000)})  # lone surrogates


def _j(s):
    """JSON string body (no quotes) of str s."""
    if s.isprintable():
        if '"' in s or "\\" in s:
            return s.replace("\\", "\\\\").replace('"', '\\"')
        return s
    return s.translate(_ESC)


def _parse_json_object(text):
    """The flat JSON object of SURGEBOX_TRACE_LIMITS: string keys, integer
    values (no json import: it would load re into the program's sys.modules)."""
    out = {}
    s = text.strip()
    if not (s.startswith("{") and s.endswith("}")):
        raise ValueError("not a JSON object")
    body = s[1:-1].strip()
    if not body:
        return out
    for part in body.split(","):
        k, sep, v = part.partition(":")
        k, v = k.strip(), v.strip()
        if not sep or len(k) < 2 or k[0] != '"' or k[-1] != '"':
            raise ValueError("bad member %r" % part.strip())
        if not (v.isdigit() and v.isascii()):
            raise ValueError("%s: not a non-negative integer" % k)
        out[k[1:-1]] = int(v)
    return out


# ---------------------------------------------------------------- values

_FunctionType = type(_fatal)
_BuiltinType = type(len)
_BoundMethod = type(type("_C", (), {"m": lambda self: 0})().m)
_ModuleType = type(sys)
_GetSet = type(_FunctionType.__dict__["__code__"])
_Member = type(type("_S", (), {"__slots__": ("a",)}).__dict__["a"])
_NoneType = type(None)


def _gen_type():
    def g():
        yield 0
    return type(g())


_GenType = _gen_type()
_EllipsisType = type(...)
_NotImplType = type(NotImplemented)

_t_dict = type.__dict__["__dict__"].__get__
_t_mro = type.__dict__["__mro__"].__get__
_t_name = type.__dict__["__name__"].__get__
_t_qualname = type.__dict__["__qualname__"].__get__
_t_module = type.__dict__["__module__"].__get__
_t_flags = type.__dict__["__flags__"].__get__
_f_qualname = _FunctionType.__dict__["__qualname__"].__get__
_b_name = _BuiltinType.__dict__["__name__"].__get__
_m_func = _BoundMethod.__dict__["__func__"].__get__
_mod_dict = _ModuleType.__dict__["__dict__"].__get__
_g_qualname = _GenType.__dict__["__qualname__"].__get__
_g_frame = _GenType.__dict__["gi_frame"].__get__
_exc_args = BaseException.__dict__["args"].__get__
_HEAP = 1 << 9
_INT_MAX_DIGITS = 4300

_BUILTIN_NAMES = {}
for _t in (int, bool, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset,
           range, slice, _NoneType, _EllipsisType, _NotImplType, object, type):
    _BUILTIN_NAMES[id(_t)] = _t_name(_t)
del _t

# Sets of types hold their id()s: hashing or comparing a program's class
# could run its metaclass's __hash__ or __eq__.
_IMMUTABLE = frozenset(id(t) for t in (int, bool, float, complex, str, bytes, _NoneType, range))


def _in_mro(t, base):
    for b in _t_mro(t):
        if b is base:
            return True
    return False


def _type_name(t, _cache={}):
    e = _cache.get(id(t))  # (type, name): the type kept alive, so its id is not reused
    n = e[1] if e is not None and e[0] is t else None
    if n is None:
        n = _BUILTIN_NAMES.get(id(t))
        if n is None:
            try:
                qn = _t_qualname(t)
                mod = _t_module(t)
            except Exception:
                qn, mod = "?", None
            if type(qn) is not str:
                qn = "?"
            if type(mod) is str and mod not in ("builtins", "__main__"):
                n = mod + "." + qn
            else:
                n = qn
        _cache[id(t)] = (t, n)
    return n


def _from_class_statement(t):
    """A class written in Python (the program's or the standard library's):
    a class statement gives it, or a base of it but object, a __dict__ or
    __slots__ entry. A heap type from C (re.Pattern from 3.11 on) has
    neither: it renders as <T object>, as it does where it is a static type."""
    for c in _t_mro(t):
        if c is not object:
            cd = _t_dict(c)
            if "__dict__" in cd or "__slots__" in cd:
                return True
    return False


def _kind(t, _cache={}):
    """Which builtin a type renders as: the first of ours in its MRO, or
    'obj' (instance dict and slots, for classes written in Python), 'exc',
    'other' (<T object>)."""
    e = _cache.get(id(t))
    k = e[1] if e is not None and e[0] is t else None
    if k is None:
        k = "other"
        try:
            for b in _t_mro(t):
                kb = _KINDS.get(id(b))
                if kb is not None:
                    k = kb
                    break
                if b is BaseException:
                    k = "exc"
                    break
            if k == "other" and _t_flags(t) & _HEAP and _from_class_statement(t):
                k = "obj"
        except Exception:
            k = "other"
        _cache[id(t)] = (t, k)
    return k


class _Cut(Exception):
    pass


class Renderer:
    """Bounded canonical reprs; object numbers shared by the whole trace."""

    def __init__(self, chars, items, nest, frame_fr):
        self.chars, self.items, self.nest = chars, items, nest
        self.budget_total = max(chars * items, 256)
        self.ids = {}  # id(obj) -> (number, type); see PROTOCOL.md on reuse
        self.next_id = 1
        self.frame_fr = frame_fr  # id(frame) -> fr, for generators

    def value(self, v):
        """JSON text of [type, repr]."""
        t = type(v)
        if t is int:
            if -10 ** 15 < v < 10 ** 15:
                return '["int","%d"]' % v
        elif t is str:
            if len(v) <= self.chars:
                r = str.__repr__(v)
                return '["str","' + _j(r) + '"]'
        elif t is _NoneType:
            return '["NoneType","None"]'
        elif t is bool:
            return '["bool","True"]' if v else '["bool","False"]'
        try:
            self.left = self.budget_total
            self.active = set()
            r = self.r(v, 0)
        except Exception as e:  # never raises into the program
            r = "<unrenderable: %s>" % _type_name(type(e))
        return '["' + _j(_type_name(t)) + '","' + _j(r) + '"]'

    def num(self, v, t):
        k = id(v)
        e = self.ids.get(k)
        if e is None or e[1] is not t:
            e = (self.next_id, t)
            self.next_id += 1
            self.ids[k] = e
        return "#%d" % e[0]

    def r(self, v, depth):
        t = type(v)
        k = _KINDS.get(id(t)) or _kind(t)
        out = _RENDER[k](self, v, t, depth)
        self.left -= len(out)
        return out

    def seq(self, v, t, depth, it, n, opn, cls, tuple1=False, prefix=""):
        if depth >= self.nest:
            return prefix + opn + "…" + cls
        if prefix:
            self.active.add(id(v))
        parts = []
        i = 0
        for x in it:
            if i >= self.items or self.left <= 0:
                parts.append("…(+%d items)" % (n - i))
                break
            parts.append(self.r(x, depth + 1))
            i += 1
        if prefix:
            self.active.discard(id(v))
        body = ", ".join(parts)
        if tuple1 and n == 1:
            body += ","
        return prefix + opn + body + cls


def _r_int(R, v, t, d):
    v = int.__int__(v) if t is not int else v  # a subclass's own __int__ never runs
    bits = int.bit_length(v)
    if bits > 14290:  # over 4300 digits: count them without str()
        if bits > 4000000:
            return "<int ~%d digits>" % int(bits * 0.30102999566398120 + 1)
        digits = int(bits * 0.30102999566398120) + 1
        if abs(v) < 10 ** (digits - 1):
            digits -= 1
        if digits > _INT_MAX_DIGITS:
            return "<int %d digits>" % digits
    r = int.__repr__(v)
    if len(r) - (r[0] == "-") > _INT_MAX_DIGITS:
        return "<int %d digits>" % (len(r) - (r[0] == "-"))
    return r


def _r_bool(R, v, t, d):
    return "True" if v else "False"


def _r_float(R, v, t, d):
    return float.__repr__(v)


def _r_complex(R, v, t, d):
    return complex.__repr__(v)


def _clipped(R, v, n, rep, getitem, unit):
    """rep(v) of a str or bytes v of n items (its type's own methods: no
    program code), or of its first R.chars with "…" inside the quotes and
    the count of the rest after them."""
    if n <= R.chars:
        return rep(v)
    r = rep(getitem(v, slice(0, R.chars)))
    return r[:-1] + "…" + r[-1] + "…(+%d %s)" % (n - R.chars, unit)


def _r_str(R, v, t, d):
    return _clipped(R, v, str.__len__(v), str.__repr__, str.__getitem__, "chars")


def _r_bytes(R, v, t, d):
    return _clipped(R, v, bytes.__len__(v), bytes.__repr__, bytes.__getitem__, "bytes")


def _r_bytearray(R, v, t, d):
    p = R.num(v, t)
    if id(v) in R.active:
        return p
    head = bytes(bytearray.__getitem__(v, slice(0, R.chars)))  # an exact bytearray: no program code
    return p + "bytearray(" + _clipped(R, head, bytearray.__len__(v), bytes.__repr__, bytes.__getitem__,
                                       "bytes") + ")"


def _r_none(R, v, t, d):
    return "None"


def _r_ellipsis(R, v, t, d):
    return "Ellipsis"


def _r_notimpl(R, v, t, d):
    return "NotImplemented"


def _r_list(R, v, t, d):
    p = R.num(v, t)
    if id(v) in R.active:
        return p
    return R.seq(v, t, d, list.__iter__(v), list.__len__(v), "[", "]", prefix=p)


def _unnumbered_seq(R, v, t, d, it, n, opn, cls, tuple1=False):
    """An immutable container's items (it has no number): opn + "…" + cls
    where it holds itself, which it can only through a mutable member:
    (l,) with l = [t]."""
    if id(v) in R.active:
        return opn + "…" + cls
    R.active.add(id(v))
    try:
        return R.seq(v, t, d, it, n, opn, cls, tuple1=tuple1)
    finally:
        R.active.discard(id(v))


def _r_tuple(R, v, t, d):
    return _unnumbered_seq(R, v, t, d, tuple.__iter__(v), tuple.__len__(v), "(", ")", tuple1=True)


def _r_set(R, v, t, d):
    p = R.num(v, t)
    if id(v) in R.active:
        return p
    n = set.__len__(v)
    if n == 0:
        return p + "set()"
    return R.seq(v, t, d, set.__iter__(v), n, "{", "}", prefix=p)


def _r_frozenset(R, v, t, d):
    n = frozenset.__len__(v)
    if n == 0:
        return "frozenset()"
    return "frozenset(" + _unnumbered_seq(R, v, t, d, frozenset.__iter__(v), n, "{", "}") + ")"


def _r_dict(R, v, t, d):
    p = R.num(v, t)
    if id(v) in R.active:
        return p
    if d >= R.nest:
        return p + "{…}"
    R.active.add(id(v))
    n = dict.__len__(v)
    parts = []
    i = 0
    for k, x in dict.items(v):
        if i >= R.items or R.left <= 0:
            parts.append("…(+%d items)" % (n - i))
            break
        parts.append(R.r(k, d + 1) + ": " + R.r(x, d + 1))
        i += 1
    R.active.discard(id(v))
    return p + "{" + ", ".join(parts) + "}"


def _r_range(R, v, t, d):
    # range's repr is builtin and its members are ints
    return range.__repr__(v)


def _r_slice(R, v, t, d):
    s = slice.__dict__
    parts = [R.r(s[m].__get__(v), d + 1) for m in ("start", "stop", "step")]
    return "slice(" + ", ".join(parts) + ")"


def _attrs(v, t):
    """(name, value) pairs of an instance: its __dict__ (through the plain
    __dict__ slot only) then its __slots__ (member descriptors)."""
    out = []
    slots = []
    dict_desc = None
    for c in _t_mro(t):
        cd = _t_dict(c)
        if dict_desc is None and "__dict__" in cd:
            dict_desc = cd["__dict__"]
        for name, desc in cd.items():
            if type(desc) is _Member and c is not object:
                slots.append((name, desc))
    if type(dict_desc) is _GetSet:
        try:
            dd = dict_desc.__get__(v)
        except Exception:
            dd = None
        if type(dd) is dict:
            out.extend(dict.items(dd))
    for name, desc in slots:
        try:
            out.append((name, desc.__get__(v)))
        except Exception:  # an unset slot: AttributeError from C
            pass
    return out


def _r_obj(R, v, t, d):
    p = R.num(v, t)
    name = _type_name(t)
    if id(v) in R.active:
        return p
    if d >= R.nest:
        return p + name + "(…)"
    R.active.add(id(v))
    try:
        attrs = _attrs(v, t)
        parts = []
        for i, (k, x) in enumerate(attrs):
            if i >= R.items or R.left <= 0:
                parts.append("…(+%d items)" % (len(attrs) - i))
                break
            ks = k if type(k) is str else R.r(k, d + 1)
            parts.append(ks + "=" + R.r(x, d + 1))
    finally:
        R.active.discard(id(v))
    return p + name + "(" + ", ".join(parts) + ")"


def _r_exc(R, v, t, d):
    p = R.num(v, t)
    if id(v) in R.active:
        return p
    R.active.add(id(v))
    try:
        args = _exc_args(v)
        body = R.seq(args, tuple, d, tuple.__iter__(args), tuple.__len__(args), "(", ")")
    finally:
        R.active.discard(id(v))
    return p + _type_name(t) + body


def _r_function(R, v, t, d):
    return "<function %s>" % _f_qualname(v)


def _r_builtin(R, v, t, d):
    return "<builtin_function %s>" % _b_name(v)


def _r_method(R, v, t, d):
    f = _m_func(v)
    if type(f) is _FunctionType:
        return "<method %s>" % _f_qualname(f)
    return "<method>"


def _r_class(R, v, t, d):
    return "<class %s>" % _type_name(v)


def _r_module(R, v, t, d):
    n = dict.get(_mod_dict(v), "__name__")
    return "<module %s>" % (n if type(n) is str else "?")


def _r_gen(R, v, t, d):
    qn = _g_qualname(v)
    fr = None
    try:
        f = _g_frame(v)
        if f is not None:
            fr = R.frame_fr(f)
    except Exception:
        pass
    kind = _type_name(t)
    if fr is None:
        return "<%s %s>" % (kind, qn)
    return "<%s %s #%d>" % (kind, qn, fr)


def _r_other(R, v, t, d):
    return "<%s object>" % _type_name(t)


_KINDS = {int: "int", bool: "bool", float: "float", complex: "complex", str: "str", bytes: "bytes",
          bytearray: "bytearray", list: "list", tuple: "tuple", set: "set", frozenset: "frozenset",
          dict: "dict", range: "range", slice: "slice", _NoneType: "none", _EllipsisType: "ellipsis",
          _NotImplType: "notimpl", _FunctionType: "function", _BuiltinType: "builtin",
          _BoundMethod: "method", type: "class", _ModuleType: "module", _GenType: "gen"}
_RENDER = {"int": _r_int, "bool": _r_bool, "float": _r_float, "complex": _r_complex, "str": _r_str,
           "bytes": _r_bytes, "bytearray": _r_bytearray, "list": _r_list, "tuple": _r_tuple,
           "set": _r_set, "frozenset": _r_frozenset, "dict": _r_dict, "range": _r_range,
           "slice": _r_slice, "none": _r_none, "ellipsis": _r_ellipsis, "notimpl": _r_notimpl,
           "function": _r_function, "builtin": _r_builtin, "method": _r_method, "class": _r_class,
           "module": _r_module, "gen": _r_gen, "obj": _r_obj, "exc": _r_exc, "other": _r_other}


def _coro_types():
    ns = {}
    exec("async def c():\n    pass\nasync def a():\n    yield 0\n", ns)
    c = ns["c"]()
    ct = type(c)
    c.close()
    return ct, type(ns["a"]())


_CoroType, _AGenType = _coro_types()
_KINDS[_CoroType] = "coro"
_KINDS[_AGenType] = "agen"
_KINDS = {id(t): k for t, k in _KINDS.items()}  # builtin types: their ids never change
_c_qualname = _CoroType.__dict__["__qualname__"].__get__
_c_frame = _CoroType.__dict__["cr_frame"].__get__
_a_qualname = _AGenType.__dict__["__qualname__"].__get__
_a_frame = _AGenType.__dict__["ag_frame"].__get__


def _mk_r_gen(qualname, frame):
    def r(R, v, t, d):
        qn = qualname(v)
        fr = None
        f = frame(v)
        if f is not None:
            fr = R.frame_fr(f)
        if fr is None:
            return "<%s %s>" % (_type_name(t), qn)
        return "<%s %s #%d>" % (_type_name(t), qn, fr)
    return r


_RENDER["coro"] = _mk_r_gen(_c_qualname, _c_frame)
_RENDER["agen"] = _mk_r_gen(_a_qualname, _a_frame)

_SCALAR_ARG = frozenset(id(t) for t in (str, int, float, bool, _NoneType, bytes))


def _cut(s, chars):
    return s if chars is None or len(s) <= chars else s[:chars] + "…(+%d chars)" % (len(s) - chars)


def _exc_msg(e, chars, ty_chars=None):
    """str(e) when only builtin code would run for it, else the args as
    BaseException.__str__ shows them, rendered by us; the type's name cut
    at ty_chars (the end record's bound)."""
    t = type(e)
    try:
        args = _exc_args(e)
        safe = all(id(type(a)) in _SCALAR_ARG for a in tuple.__iter__(args))
        meth = None
        for c in _t_mro(t):
            cd = _t_dict(c)
            if "__str__" in cd:
                meth = cd["__str__"] if not (_t_flags(c) & _HEAP) else BaseException.__str__
                break
        if meth is not BaseException.__str__:
            # OSError, SyntaxError, KeyError...: builtin __str__ reading members
            for c in _t_mro(t):
                for m, desc in _t_dict(c).items():
                    if type(desc) is _Member and id(type(desc.__get__(e))) not in _SCALAR_ARG:
                        safe = False
        if safe and meth is not None:
            s = meth(e)
        else:
            R = Renderer(chars, 8, 2, lambda f: None)
            R.left, R.active = chars * 8, set()
            n = tuple.__len__(args)
            s = "" if n == 0 else R.r(args[0] if n == 1 else args, 0)
        if type(s) is not str:
            s = "?"
    except Exception as x:
        s = "<unrenderable: %s>" % _type_name(type(x))
    if len(s) > chars:
        s = s[:chars] + "…(+%d chars)" % (len(s) - chars)
    return '{"ty":"' + _j(_cut(_type_name(t), ty_chars)) + '","msg":"' + _j(s) + '"}'
