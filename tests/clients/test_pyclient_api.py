#!/usr/bin/env python3
"""The Python client's public surface, without a daemon: every public name
has a docstring and annotations, run() takes explicit keywords (and the
old name `timeout` still works, with a DeprecationWarning), Result.to_record
rows, surgebox.to_dataframe with and without pandas. Any Python >= 3.8."""
import inspect
import os
import sys
import types
import typing
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "..", "..", "clients", "python")
sys.path.insert(0, PKG)
import surgebox  # noqa: E402
from surgebox import _conn, _jobs, trace_cwm, trace_ldb, trace_lines, trace_views  # noqa: E402

PUBLIC_MODULES = (surgebox, trace_cwm, trace_ldb, trace_lines, trace_views, surgebox.trace)


def public_callables():
    """(qualified name, function) of every public function and method."""
    seen, out = set(), []

    def add(name, obj):
        if id(obj) not in seen:
            seen.add(id(obj))
            out.append((name, obj))

    for mod in PUBLIC_MODULES:
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n)
            if not getattr(obj, "__module__", "").startswith("surgebox"):
                continue
            if inspect.isfunction(obj):
                add("%s.%s" % (mod.__name__, n), obj)
            elif inspect.isclass(obj):
                add("%s.%s" % (mod.__name__, n), obj)
                for k, v in vars(obj).items():
                    if k.startswith("_") and k != "__init__":
                        continue
                    v = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
                    if inspect.isfunction(v):
                        add("%s.%s.%s" % (mod.__name__, n, k), v)
    return out


class SurfaceTest(unittest.TestCase):
    def test_every_public_name_has_a_docstring(self):
        names = public_callables()
        self.assertGreater(len(names), 60)
        missing = [n for n, o in names if not inspect.getdoc(o) and not n.endswith("__init__")]
        self.assertEqual(missing, [])

    def test_every_public_function_is_annotated(self):
        missing = []
        for name, obj in public_callables():
            if not inspect.isfunction(obj):
                continue
            sig = inspect.signature(obj)
            bare = [p for p, v in sig.parameters.items() if v.annotation is inspect.Parameter.empty
                    and p not in ("self", "cls")]
            if bare or (sig.return_annotation is inspect.Signature.empty and obj.__name__ != "__init__"):
                missing.append((name, bare))
        self.assertEqual(missing, [])

    def test_annotations_resolve_on_this_python(self):
        # `from __future__ import annotations` keeps them strings: each must name something real
        for name, obj in public_callables():
            if inspect.isfunction(obj) and name != "surgebox.to_dataframe":  # names pandas, not installed
                ns = dict(vars(sys.modules[obj.__module__]))
                ns.update(vars(surgebox.trace))
                typing.get_type_hints(obj, globalns=ns)

    def test_py_typed_ships(self):
        self.assertTrue(os.path.isfile(os.path.join(PKG, "surgebox", "py.typed")))

    def test_run_takes_explicit_keywords(self):
        for cls in (surgebox.Client, surgebox.AsyncClient):
            params = inspect.signature(cls.run).parameters
            self.assertEqual(list(params)[:2], ["self", "steps"])
            for k in ("toolchain", "files", "stdin", "options", "args", "limits", "outputs",
                      "outputs_max_bytes", "output_encoding", "profile", "cancel_after"):
                self.assertEqual(params[k].kind, inspect.Parameter.KEYWORD_ONLY, (cls.__name__, k))
            self.assertFalse(any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()))
            self.assertIn("cancel_after", inspect.signature(cls.run_many).parameters)

    def test_a_misspelt_keyword_is_a_type_error(self):
        c = surgebox.Client.__new__(surgebox.Client)
        with self.assertRaises(TypeError):
            c.run(toolchain="python3", file={"m.py": ""})

    def test_job_of_matches_build_exec_fields(self):
        job = _jobs.job_of(toolchain="python3", files={"m.py": "x"}, stdin=b"\x00", limits={"time_s": 2},
                           cancel_after=4)
        self.assertEqual(job, {"toolchain": "python3", "files": {"m.py": "x"}, "stdin": b"\x00",
                               "limits": {"time_s": 2}, "cancel_after": 4})
        req = surgebox.build_exec(job, 1)
        self.assertNotIn("cancel_after", req)
        self.assertEqual(req["limits"], {"time_s": 2})

    def test_cancel_after_and_its_old_name(self):
        self.assertEqual(_jobs.cancel_after_of({"cancel_after": 3}, 9), 3)
        self.assertEqual(_jobs.cancel_after_of({}, 9), 9)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.assertEqual(_jobs.cancel_after_of({"timeout": 5}, None), 5)
        self.assertEqual([w.category for w in caught], [DeprecationWarning])
        self.assertIn("'timeout' is now 'cancel_after'", str(caught[0].message))
        self.assertIn("time_s", str(caught[0].message))
        with self.assertRaises(ValueError):
            _jobs.cancel_after_of({"timeout": 5, "cancel_after": 3}, None)


STEP = {"name": "run", "status": "runtime_error", "exit_code": 3, "signal": None, "stdout": "a\ufffd",
        "stdout_b64": "Yf8=", "stdout_lossy": True, "stderr": "boom\n", "stdout_truncated": False,
        "stderr_truncated": True, "cpu_time_s": 0.25, "wall_time_s": 0.5, "max_rss_kb": 1616,
        "limit_hit": None, "limits": {"time_s": 30.0}, "enforced": {"wall_time": "..."}}


class RecordTest(unittest.TestCase):
    def test_a_run_is_one_flat_row(self):
        r = surgebox.Result({"id": 7, "type": "exec", "status": "runtime_error",
                             "steps": [dict(STEP, name="compile", status="ok", exit_code=0, stdout="", stderr="",
                                            stdout_b64=None, stderr_truncated=False), STEP]})
        row = r.to_record()
        self.assertEqual(list(row), list(surgebox.RECORD_KEYS))
        self.assertEqual(row, {"id": 7, "status": "runtime_error", "error": None, "client_timeout": False,
                               "steps": 2, "step": "run", "step_status": "runtime_error", "exit_code": 3,
                               "signal": None, "limit_hit": None, "cpu_time_s": 0.25, "wall_time_s": 0.5,
                               "max_rss_kb": 1616, "stdout": "a\ufffd", "stdout_lossy": True,
                               "stdout_truncated": False, "stderr": "boom\n", "stderr_lossy": False,
                               "stderr_truncated": True})
        for v in row.values():
            self.assertIsInstance(v, (str, int, float, bool, type(None)))
        self.assertEqual(r.to_record("compile")["step_status"], "ok")
        self.assertEqual(r.to_record("compile")["stdout"], "")

    def test_errors_and_cancels_have_the_same_keys(self):
        err = _conn.error_result("j", {"code": "busy", "message": "still busy after 1s"}).to_record()
        self.assertEqual(list(err), list(surgebox.RECORD_KEYS))
        self.assertEqual((err["id"], err["status"], err["error"], err["steps"], err["stdout"]),
                         ("j", "error", "busy: still busy after 1s", 0, None))
        cancel = _conn.timeout_result(3, "client timeout while the daemon was busy").to_record()
        self.assertEqual((cancel["status"], cancel["client_timeout"], cancel["error"]),
                         ("cancelled", True, "client timeout while the daemon was busy"))

    def test_to_dataframe_without_pandas_says_what_to_install(self):
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = None  # import pandas raises ImportError
        try:
            with self.assertRaises(ImportError) as cm:
                surgebox.to_dataframe([surgebox.Result({"status": "ok"})])
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved
        self.assertIn("pip install pandas", str(cm.exception))

    def test_to_dataframe_hands_pandas_the_rows_and_columns(self):
        made = []
        fake = types.ModuleType("pandas")
        fake.DataFrame = lambda rows, columns: made.append((rows, columns)) or "frame"
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = fake
        try:
            rs = [surgebox.Result({"id": i, "status": "ok", "steps": [STEP]}) for i in range(3)]
            self.assertEqual(surgebox.to_dataframe(rs), "frame")
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved
        rows, columns = made[0]
        self.assertEqual(columns, list(surgebox.RECORD_KEYS))
        self.assertEqual([r["id"] for r in rows], [0, 1, 2])
        self.assertEqual(rows[1], rs[1].to_record())

    def test_to_dataframe_with_real_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            print("note: pandas is not installed for %s: the real DataFrame is not checked here" % sys.executable)
            self.skipTest("pandas not installed")
        rs = [surgebox.Result({"id": i, "status": "ok", "steps": [STEP]}) for i in range(3)]
        df = surgebox.to_dataframe(rs)
        self.assertEqual(list(df.columns), list(surgebox.RECORD_KEYS))
        self.assertEqual(list(df["id"]), [0, 1, 2])


if __name__ == "__main__":
    unittest.main(verbosity=2)
