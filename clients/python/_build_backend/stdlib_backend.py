"""The client's PEP 517 build backend, written with the standard library only.

Why not setuptools: pip builds in an isolated environment and, offline
(`pip install --no-index`), cannot download setuptools or wheel into it;
`--no-build-isolation` then depends on what the target Python happens to
have (a pyenv Python has setuptools but no `wheel`: "invalid command
'bdist_wheel'"). The package is pure Python with no dependencies, so a wheel
is a zip of surgebox/ plus three text files (PEP 427): nothing to download,
the same on every Python >= 3.8. pyproject.toml names this module with
`backend-path`; `requires = []`.

Hooks: build_wheel, build_sdist, build_editable (PEP 660: a .pth pointing at
this tree) and their prepare_metadata_* / get_requires_* companions.
Metadata comes from pyproject.toml's [project] table, which may hold only
`key = "string"` lines and `dependencies = []` (anything else is refused,
naming the line). Nothing is written into the source tree: not even this
module's own bytecode (removed below once imported).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "surgebox"
# zip and tar entries get a fixed date: the same tree gives the same bytes
_EPOCH = (1980, 1, 1, 0, 0, 0)
_KNOWN = ("name", "version", "description", "readme", "requires-python", "dependencies", "license")


def _forget_own_bytecode():
    """The import of this module wrote __pycache__ into the source tree (the
    hook runner imports it from there): remove it again."""
    cached = globals().get("__cached__")
    if not cached:
        return
    try:
        os.remove(cached)
        os.rmdir(os.path.dirname(cached))
    except OSError:
        pass


_forget_own_bytecode()


def _project():
    """pyproject.toml's [project] table as {key: str or list}."""
    table = {}
    section = None
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if text.startswith("["):
                section = text
                continue
            if section != "[project]":
                continue
            m = re.match(r'^([A-Za-z-]+)\s*=\s*(?:"([^"\\]*)"|\[\s*\])$', text)
            if not m or m.group(1) not in _KNOWN:
                raise ValueError("pyproject.toml line %d: the stdlib backend reads only "
                                 "key = \"string\" or dependencies = [] in [project] (%s)" % (n, text))
            table[m.group(1)] = m.group(2) if m.group(2) is not None else []
    for key in ("name", "version"):
        if key not in table:
            raise ValueError("pyproject.toml: [project] has no %s" % key)
    init = open(os.path.join(ROOT, PACKAGE, "__init__.py"), encoding="utf-8").read()
    m = re.search(r'^__version__ = "([^"]+)"$', init, re.M)
    if not m or m.group(1) != table["version"]:
        raise ValueError("%s/__init__.py's __version__ (%s) differs from pyproject.toml's version (%s)"
                         % (PACKAGE, m and m.group(1), table["version"]))
    return table


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: %s" % p["name"], "Version: %s" % p["version"]]
    if p.get("description"):
        lines.append("Summary: %s" % p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    if p.get("license"):
        lines.append("License: %s" % p["license"])
    body = ""
    if p.get("readme"):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"].replace("-", "_"), p["version"])


def _wheel_text():
    return "Wheel-Version: 1.0\nGenerator: surgebox stdlib_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _package_files():
    """(archive name, absolute path) of surgebox/'s sources and py.typed, sorted."""
    out = []
    for d, dirs, files in os.walk(os.path.join(ROOT, PACKAGE)):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                path = os.path.join(d, name)
                out.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), path))
    return out


def _write_wheel(directory, entries, p):
    """entries: [(archive name, bytes)]; adds METADATA, WHEEL, RECORD."""
    di = _dist_info(p)
    entries = list(entries) + [(di + "/METADATA", _metadata(p).encode("utf-8")),
                               (di + "/WHEEL", _wheel_text().encode("ascii"))]
    record = []
    for name, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append(di + "/RECORD,,")
    entries.append((di + "/RECORD", ("\n".join(record) + "\n").encode("utf-8")))
    wheel = "%s-%s-py3-none-any.whl" % (p["name"].replace("-", "_"), p["version"])
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, _EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _prepare_metadata(directory):
    p = _project()
    di = os.path.join(directory, _dist_info(p))
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    with open(os.path.join(di, "WHEEL"), "w", encoding="ascii") as f:
        f.write(_wheel_text())
    return _dist_info(p)


# --- PEP 517 -----------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(n, _read(path)) for n, path in _package_files()], _project())


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (p["name"], p["version"])
    members = [("PKG-INFO", _metadata(p).encode("utf-8"))]
    for rel in ("pyproject.toml", p.get("readme"), "_build_backend/stdlib_backend.py"):
        if rel:
            members.append((rel, _read(os.path.join(ROOT, rel))))
    members += [(n, _read(path)) for n, path in _package_files()]
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel, data in members:
            info = tarfile.TarInfo(base + "/" + rel)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 315532800
            t.addfile(info, io.BytesIO(data))
    return name


# --- PEP 660: pip install -e -------------------------------------------------
def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _prepare_metadata(metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pth = (ROOT + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, [("_%s_editable.pth" % PACKAGE, pth)], _project())
