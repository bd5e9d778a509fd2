# surgebox's gdb tracer, values (PROTOCOL.md "Traces", "C and C++"): a
# gdb.Value rendered as [type, repr] by reading the inferior's memory only
# (never calling its code: no `call`, no pretty printer's `to_string` that
# calls functions; libstdc++'s printers only read memory). Bounded like the
# Python tracer's: value_chars, items, nest; addresses become first-seen
# object numbers.
import struct

import gdb

_C = gdb
_SCALAR_INT = (_C.TYPE_CODE_INT, _C.TYPE_CODE_CHAR, _C.TYPE_CODE_BOOL, _C.TYPE_CODE_ENUM)
_CHAR_NAMES = ("char", "signed char", "unsigned char")
_ESC = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 39: "\\'", 92: "\\\\"}


def _char_text(b, quote):
    if b in _ESC and (b not in (34, 39) or chr(b) == quote):
        return _ESC[b]
    if 32 <= b < 127:
        return chr(b)
    return "\\x%02x" % b


def float_repr(x, size):
    """The shortest decimal that reads back as the same float of `size` bytes."""
    if x != x or x in (float("inf"), float("-inf")):
        return repr(x)
    if size != 4:
        return repr(x)
    packed = struct.pack("<f", x)
    for p in range(1, 10):
        s = "%.*g" % (p, x)
        if struct.pack("<f", float(s)) == packed:
            if "e" not in s and "." not in s and "n" not in s:
                s += ".0"
            return s
    return repr(x)


class Renderer:
    def __init__(self, value_chars, items, nest):
        self.chars = value_chars
        self.items = items
        self.nest = nest
        self.objs = {}  # address -> object number (first seen)
        self.extent = []  # (address, size, number) of rendered arrays and structs
        self.budget = 0

    def number(self, addr):
        n = self.objs.get(addr)
        if n is None:
            n = self.objs[addr] = len(self.objs) + 1
        return n

    def render(self, v):
        self.budget = self.chars * self.items
        try:
            t = v.type
            name = str(t)
            return [name, self._r(v, 0)]
        except gdb.MemoryError:
            return [_safe_type(v), "<unreadable>"]
        except Exception as e:  # a render must never stop the trace
            return [_safe_type(v), "<unrenderable: %s>" % type(e).__name__]

    def _addr_prefix(self, v, size, depth):
        """#n for an array or struct rendered as a whole (its members: none, a pointer to one is #n+k)."""
        addr = v.address
        if addr is None or depth > 0:
            return ""
        a = int(addr)
        n = self.number(a)
        self.extent.append((a, size, n))
        return "#%d" % n

    def _r(self, v, depth):
        t = v.type.strip_typedefs()
        code = t.code
        if code == _C.TYPE_CODE_REF or code == _C.TYPE_CODE_RVALUE_REF:
            return self._r(v.referenced_value(), depth)
        if code in (_C.TYPE_CODE_INT, _C.TYPE_CODE_CHAR):
            n = int(v)
            if t.sizeof == 1 and (code == _C.TYPE_CODE_CHAR or t.name in _CHAR_NAMES):
                return "%d '%s'" % (n, _char_text(n & 0xFF, "'"))
            return str(n)
        if code == _C.TYPE_CODE_BOOL:
            return "true" if int(v) else "false"
        if code == _C.TYPE_CODE_ENUM:
            n = int(v)
            for f in t.fields():
                if f.enumval == n:
                    return f.name
            return str(n)
        if code == _C.TYPE_CODE_FLT:
            if t.sizeof in (4, 8):
                return float_repr(float(v), t.sizeof)
            return v.format_string(raw=True)  # long double: gdb's own digits
        if code == _C.TYPE_CODE_PTR:
            return self._ptr(v, t)
        if code == _C.TYPE_CODE_ARRAY:
            return self._array(v, t, depth)
        if code in (_C.TYPE_CODE_STRUCT, _C.TYPE_CODE_UNION):
            return self._struct(v, t, depth)
        if code == _C.TYPE_CODE_FUNC:
            return "<function %s>" % _func_name(v)
        return "<%s>" % str(t)

    def _ptr(self, v, t):
        a = int(v)
        if a == 0:
            return "NULL"
        target = t.target().strip_typedefs()
        if target.code == _C.TYPE_CODE_FUNC:
            return "<function %s>" % _func_name(v.dereference())
        ref = self._ref(a)
        if target.code in (_C.TYPE_CODE_INT, _C.TYPE_CODE_CHAR) and target.sizeof == 1:
            return "%s %s" % (ref, self._cstring(a))
        return ref

    def _ref(self, a):
        """#n for the object at a; #n+k inside an array or struct rendered before (k bytes in)."""
        n = self.objs.get(a)
        if n is not None:
            return "#%d" % n
        for base, size, m in reversed(self.extent):
            if base < a < base + size:
                return "#%d+%d" % (m, a - base)
        return "#%d" % self.number(a)

    def _cstring(self, a):
        """The bytes at a up to a NUL, at most value_chars: read in pieces that stop at page ends."""
        inf = gdb.selected_inferior()
        out = b""
        limit = self.chars
        bad = False
        while len(out) <= limit:
            at = a + len(out)
            size = min(64, 4096 - at % 4096, limit + 1 - len(out))
            try:
                piece = bytes(inf.read_memory(at, size))
            except gdb.MemoryError:
                bad = True
                break
            nul = piece.find(b"\0")
            if nul >= 0:
                out += piece[:nul]
                break
            out += piece
        text = '"' + "".join(_char_text(b, '"') for b in out[:limit]) + '"'
        if bad:
            return text + "<unreadable>" if out else "<unreadable>"
        return text + ("…" if len(out) > limit else "")

    def _array(self, v, t, depth):
        lo, hi = t.range()
        n = hi - lo + 1
        elem = t.target().strip_typedefs()
        prefix = self._addr_prefix(v, t.sizeof, depth)
        if elem.sizeof == 1 and elem.code in (_C.TYPE_CODE_INT, _C.TYPE_CODE_CHAR) and elem.name in _CHAR_NAMES:
            raw = bytes(gdb.selected_inferior().read_memory(v.address, n)) if v.address else b""
            nul = raw.find(b"\0")  # shown as a C string: up to its NUL
            raw = raw[:nul] if nul >= 0 else raw
            text = '"' + "".join(_char_text(b, '"') for b in raw[: self.chars]) + '"'
            return prefix + text + ("…(+%d chars)" % (len(raw) - self.chars) if len(raw) > self.chars else "")
        if depth >= self.nest:
            return prefix + "[…]"
        parts = []
        for i in range(min(n, self.items)):
            if self.budget <= 0:
                break
            s = self._r(v[lo + i], depth + 1)
            self.budget -= len(s)
            parts.append(s)
        rest = n - len(parts)
        if rest:
            parts.append("…(+%d items)" % rest)
        return prefix + "[" + ", ".join(parts) + "]"

    def _struct(self, v, t, depth):
        prefix = self._addr_prefix(v, t.sizeof, depth)
        pp = gdb.default_visualizer(v)
        if pp is not None and hasattr(pp, "children"):
            return prefix + self._printer(pp, depth)
        if depth >= self.nest:
            return prefix + "{…}"
        parts = []
        fields = [f for f in t.fields() if not f.artificial and not (f.name or "").startswith("_vptr")]
        for i, f in enumerate(fields):
            if len(parts) >= self.items or self.budget <= 0:
                parts.append("…(+%d items)" % (len(fields) - i))
                break
            name = f.name if f.name else "<anonymous>"
            s = self._r(v[f], depth + 1)
            self.budget -= len(s)
            parts.append("%s=%s" % (name, s))
        return prefix + "{" + ", ".join(parts) + "}"

    def _printer(self, pp, depth):
        """libstdc++'s printers (std::vector, std::string, std::map): their children, rendered by us."""
        head = ""
        if hasattr(pp, "to_string"):
            s = pp.to_string()
            if isinstance(s, gdb.Value):
                s = self._r(s, depth + 1)
            if isinstance(s, str):
                head = s
        if pp.children is None or not hasattr(pp, "children"):
            return head
        if depth >= self.nest:
            return head + "{…}"
        parts = []
        hint = pp.display_hint() if hasattr(pp, "display_hint") else None
        it = iter(pp.children())
        count = 0
        for name, child in it:
            if count >= self.items or self.budget <= 0:
                rest = sum(1 for _ in it) + 1
                parts.append("…(+%d items)" % (rest if hint != "map" else (rest + 1) // 2))
                break
            s = self._r(child, depth + 1) if isinstance(child, gdb.Value) else repr(child)
            self.budget -= len(s)
            parts.append(s)
            count += 1
        if hint == "map":
            pairs = [parts[i] + ": " + parts[i + 1] for i in range(0, len(parts) - 1, 2)]
            if len(parts) % 2:
                pairs.append(parts[-1])
            parts = pairs
        if hint == "string":
            return head
        return (head + " " if head else "") + "[" + ", ".join(parts) + "]"


def _func_name(v):
    try:
        addr = int(v.address)
        b = gdb.block_for_pc(addr)
        if b is not None and b.function is not None:
            return b.function.print_name
    except Exception:
        pass
    return "?"


def _safe_type(v):
    try:
        return str(v.type)
    except Exception:
        return "?"
