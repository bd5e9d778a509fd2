"""What the HTTP benchmarks share (bench/http_run_code.py,
bench/http_targets.py): the private daemon, started through tests'
httpd.Daemon (--http on a loopback port the kernel picks), the C++ program
sent once per test case, and CRUXEval's checks."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "http"))
from httpd import Daemon  # noqa: E402

DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "cruxeval", "cruxeval.jsonl")
CPP = r"""#include <iostream>
int main() { long a, b; std::cin >> a >> b; std::cout << a + b << "\n"; }
"""


def start_daemon(bin_dir, jobs):
    """A private surgeboxd with --jobs JOBS and an HTTP front on loopback."""
    return Daemon(bin_dir, "--jobs", str(jobs))


def cruxeval_checks(path, limit=0):
    """Each CRUXEval program with an assert of its reference output."""
    out = []
    for line in open(path):
        if line.strip():
            s = json.loads(line)
            out.append(s["code"] + "\nassert f(%s) == %s\n" % (s["input"], s["output"]))
    return out[:limit] if limit else out
