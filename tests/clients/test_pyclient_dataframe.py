#!/usr/bin/env python3
"""surgebox.to_dataframe with the real pandas (Debian's python3-pandas, a
test-only package in .ci/packages) on results from a real surgeboxd: one
row per result, RECORD_KEYS as the columns, the values of to_record, and
what a researcher does next (filter by status, sum the CPU) works.
Without pandas: SKIPPED (exit 77), never a pass.
"""
import sys

try:
    import pandas
except ImportError:
    print("SKIPPED: pandas is not installed for %s (apt-get install python3-pandas)" % sys.executable)
    sys.exit(77)

from pyclient_env import Daemon  # noqa: E402

import surgebox  # noqa: E402


def main():
    failures = []

    def check(cond, what):
        print(("ok: " if cond else "FAIL: ") + what, flush=True)
        if not cond:
            failures.append(what)

    d = Daemon("--jobs", "2")
    try:
        with surgebox.Client(d.sock) as c:
            rs = [c.run(toolchain="python3", files={"main.py": "print(6 * 7)"}),
                  c.run(toolchain="python3", files={"main.py": "import sys\nprint('x', file=sys.stderr)\nsys.exit(3)"}),
                  c.run([["sh", "-c", "printf '\\377'"]])]
    finally:
        d.stop()
    df = surgebox.to_dataframe(rs)
    check(isinstance(df, pandas.DataFrame), "a pandas.DataFrame (%s)" % type(df))
    check(list(df.columns) == list(surgebox.RECORD_KEYS), "the columns are RECORD_KEYS in order (%s)" % list(df.columns))
    check(len(df) == 3, "one row per result (%d)" % len(df))
    check(list(df["status"]) == ["ok", "runtime_error", "ok"], "statuses %s" % list(df["status"]))
    check(df.loc[0, "stdout"] == "42\n" and df.loc[1, "stderr"] == "x\n", "the streams as text")
    check(int(df.loc[1, "exit_code"]) == 3, "exit_code 3 (%r)" % df.loc[1, "exit_code"])
    check(bool(df.loc[2, "stdout_lossy"]) and df.loc[2, "stdout"] == "\ufffd", "invalid UTF-8 shown lossy")
    for i, r in enumerate(rs):
        row = r.to_record()
        check(all(df.loc[i, k] == row[k] or (row[k] is None and pandas.isna(df.loc[i, k])) for k in surgebox.RECORD_KEYS),
              "row %d equals its to_record()" % i)
    check(df["cpu_time_s"].dtype.kind == "f" and (df["cpu_time_s"] > 0).all(), "cpu_time_s a float column, > 0")
    check(df["max_rss_kb"].dtype.kind in "iu" and (df["max_rss_kb"] > 0).all(), "max_rss_kb an integer column, > 0")
    failed = df[df["status"] != "ok"]
    check(list(failed.index) == [1], "filtering by status finds the failed job (%s)" % list(failed.index))
    total = df["cpu_time_s"].sum()
    check(abs(total - sum(r.to_record()["cpu_time_s"] for r in rs)) < 1e-9, "the CPU column sums (%.6f s)" % total)
    by_step = surgebox.to_dataframe(rs, step="compile")
    check(by_step["step"].isna().all(), "step=compile: no such step, empty step columns")
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("PASS (pandas %s)" % pandas.__version__)


if __name__ == "__main__":
    main()
