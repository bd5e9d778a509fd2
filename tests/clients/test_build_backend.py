#!/usr/bin/env python3
"""The client's build backend (clients/python/_build_backend/stdlib_backend.py)
called as pip calls it: the wheel holds every module and py.typed, its
RECORD's hashes and sizes are the files' own (checked here with hashlib),
METADATA names pyproject's version; the sdist can be built from again; the
editable wheel points at the tree; nothing is written into the tree."""
import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.normpath(os.path.join(HERE, "..", "..", "clients", "python"))
sys.dont_write_bytecode = True  # this test's own imports leave nothing in the tree either
sys.path.insert(0, os.path.join(PKG, "_build_backend"))
import stdlib_backend as backend  # noqa: E402


def tree():
    return sorted(os.path.relpath(os.path.join(d, f), PKG) for d, _, fs in os.walk(PKG) for f in fs
                  if "__pycache__" not in d)


class BackendTest(unittest.TestCase):
    def setUp(self):
        self.before = tree()
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()
        self.assertEqual(tree(), self.before)

    def test_wheel_record_matches_its_files(self):
        self.assertEqual(backend.get_requires_for_build_wheel(), [])
        name = backend.build_wheel(self.tmp.name)
        version = open(os.path.join(PKG, "pyproject.toml")).read().split('version = "')[1].split('"')[0]
        self.assertEqual(name, "surgebox-%s-py3-none-any.whl" % version)
        with zipfile.ZipFile(os.path.join(self.tmp.name, name)) as z:
            names = z.namelist()
            modules = sorted(f for f in os.listdir(os.path.join(PKG, "surgebox")) if f.endswith(".py"))
            self.assertEqual(sorted(n[9:] for n in names if n.startswith("surgebox/")), sorted(modules + ["py.typed"]))
            di = "surgebox-%s.dist-info/" % version
            rows = list(csv.reader(io.TextIOWrapper(z.open(di + "RECORD"), "utf-8")))
            self.assertEqual(sorted(r[0] for r in rows), sorted(names))
            for path, digest, size in rows:
                if path == di + "RECORD":
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(path)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (want, len(data)), path)
            meta = z.read(di + "METADATA").decode()
            self.assertIn("Name: surgebox\nVersion: %s\n" % version, meta)
            self.assertIn("Requires-Python: >=3.8\n", meta)
            self.assertIn("Tag: py3-none-any", z.read(di + "WHEEL").decode())
            self.assertEqual(z.read("surgebox/client.py"), open(os.path.join(PKG, "surgebox", "client.py"), "rb").read())

    def test_sdist_builds_again(self):
        name = backend.build_sdist(self.tmp.name)
        with tarfile.open(os.path.join(self.tmp.name, name)) as t:
            t.extractall(self.tmp.name, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        src = os.path.join(self.tmp.name, name[:-len(".tar.gz")])
        for rel in ("pyproject.toml", "README.md", "PKG-INFO", "_build_backend/stdlib_backend.py", "surgebox/py.typed"):
            self.assertTrue(os.path.isfile(os.path.join(src, rel)), rel)
        out = os.path.join(self.tmp.name, "dist")
        os.mkdir(out)
        code = "import sys; sys.path.insert(0, '_build_backend'); import stdlib_backend as b; print(b.build_wheel(%r))" % out
        p = subprocess.run([sys.executable, "-B", "-c", code], cwd=src, stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(p.returncode, 0)
        self.assertTrue(os.path.isfile(os.path.join(out, p.stdout.strip())))

    def test_editable_wheel_points_at_the_tree(self):
        name = backend.build_editable(self.tmp.name)
        with zipfile.ZipFile(os.path.join(self.tmp.name, name)) as z:
            self.assertEqual(z.read("_surgebox_editable.pth").decode().strip(), PKG)
            self.assertFalse(any(n.startswith("surgebox/") for n in z.namelist()))

    def test_metadata_directory(self):
        di = backend.prepare_metadata_for_build_wheel(self.tmp.name)
        self.assertTrue(os.path.isfile(os.path.join(self.tmp.name, di, "METADATA")))

    def test_a_pyproject_it_cannot_read_is_refused_naming_the_line(self):
        real = backend.ROOT
        fake = os.path.join(self.tmp.name, "pkg")
        os.makedirs(os.path.join(fake, "surgebox"))
        with open(os.path.join(fake, "pyproject.toml"), "w") as f:
            f.write('[project]\nname = "surgebox"\nversion = "9"\nauthors = [{name = "x"}]\n')
        backend.ROOT = fake
        try:
            with self.assertRaises(ValueError) as cm:
                backend.build_wheel(self.tmp.name)
        finally:
            backend.ROOT = real
        self.assertIn("pyproject.toml line 4", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
