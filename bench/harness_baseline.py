"""The unsandboxed harness method researchers use for CRUXEval today, as
issue 25 describes CRUXEval's own: a process pool whose workers fork a child
per check, `exec()` the program text in it (stdout and stderr swallowed),
and pass the verdict back through a multiprocessing manager; the child is
joined with a 3 s limit (upstream's) and killed past it. A manager per check,
as human-eval's check_correctness, which CRUXEval's execution code follows
(our reading; the issue's description does not say). Used by
bench/warm_python.py; the programs are CRUXEval's own, never hostile ones."""
import concurrent.futures
import contextlib
import io
import multiprocessing

TIMEOUT_S = 3.0


def _unsafe_execute(program, result):
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(program, {})
        result.append("passed")
    except BaseException as e:  # noqa: B902 (the verdict, as upstream)
        result.append("failed: %s" % type(e).__name__)


def check(program):
    """True when the program ran without an exception within the limit."""
    ctx = multiprocessing.get_context("fork")
    with ctx.Manager() as manager:
        result = manager.list()
        p = ctx.Process(target=_unsafe_execute, args=(program, result))
        p.start()
        p.join(timeout=TIMEOUT_S + 1)
        if p.is_alive():
            p.kill()
            p.join()
        return len(result) > 0 and result[0] == "passed"


def run(programs, jobs):
    """The verdicts, in order, of programs run `jobs` at a time."""
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as ex:
        return list(ex.map(check, programs, chunksize=8))
