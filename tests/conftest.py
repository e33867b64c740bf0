import asyncio
import concurrent.futures
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # devtools/ (catalog, fixtures, benches) is never installed: import it from the checkout
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ["JUPYTER_CONFIG_PATH"] = str(REPO / "grading")

from grading.course import assignments  # noqa: E402
from devtools.xdist_schedule import pytest_xdist_make_scheduler  # noqa: E402,F401  (a worker's crash ends)

AIDS = assignments()


@pytest.fixture(params=AIDS)
def aid(request):
    return request.param


# --- markers: `make unit` is the fast inner loop, `make test` runs everything ----------------------

# Modules that execute whole notebooks, grade a class or build a wheel: minutes, not seconds.
SLOW = {"grading/test_pipeline.py", "grading/test_grader_strength.py", "grading/test_grading_class.py",
        "grading/test_exchange.py", "grading/test_integrity_kernel.py", "notebooks/test_binding.py",
        "grading/test_instructor_paths.py", "grading/test_checksum_warning.py",
        "packaging/test_wheel.py"}
# A test that asks for one of these fixtures executes a notebook (or makes a release) too.
SLOW_FIXTURES = {"autograded"}


def pytest_collection_modifyitems(items):
    """Mark each test by where it lives (browser/, hub/) and by what it costs (slow), so that
    `pytest -m "not slow and not browser and not hub"` (make unit) is a minute or two."""
    tests = Path(__file__).parent
    for item in items:
        where = Path(str(item.path)).relative_to(tests).as_posix()
        top = where.split("/")[0]
        if top in ("browser", "hub"):
            item.add_marker(top)
        if where in SLOW or top in ("browser", "hub") or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker("slow")


# --- work shared between tests (and between xdist workers) ---------------------------------------

@pytest.fixture(scope="session")
def playwright():
    """The one Playwright of this process, shared by the browser and hub tests. Its sync API keeps an
    asyncio loop running on the main thread for as long as it lives, so a second `sync_playwright()` in
    the same worker fails ("using Playwright Sync API inside the asyncio loop"): which tests share a
    worker is xdist's choice, so no test may start its own."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture
def run_coroutine():
    """run_coroutine(coro) -> its result, run to the end on a new event loop in a thread of its own.
    `asyncio.run` refuses to start in a thread whose loop is running, and while this worker's Playwright
    lives (above) the main thread's is: a test that calls it directly passes alone and fails after a
    browser test in the same worker."""
    def run(coro):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro).result()
    return run


@pytest.fixture(scope="session")
def run_cache(tmp_path_factory):
    """A folder of this test run, shared by its xdist workers (the parent of the workers' base temps; without
    xdist, the run's own base temp: its parent holds other runs' folders)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "speclab-run-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def released(run_cache):
    """released(aid) -> a scratch course (read-only, shared) with solutions/<aid>/ and the student copy
    nbgrader's generate_assignment makes of it now, in this process; copy it before writing into it."""
    import shutil

    from grading.course import scratch_course

    def make(aid):
        dest = run_cache / f"released-{aid}-{os.getpid()}"
        if not dest.exists():
            tmp = run_cache / f"released-{aid}-{os.getpid()}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            scratch_course(tmp, [aid], release="generate")
            os.replace(tmp, dest)
        return dest
    return make


@pytest.fixture(scope="session")
def autograded(run_cache, released):
    """autograded(aid) -> (course, mistake): a read-only course in which nbgrader's autograde (in this
    process, as `make grade` runs it) has graded three submissions of aid, and generate_feedback the third:
      reference  the student copy with the source's answers filled in (so its run is the source's run,
                 hidden tests included: tests/notebooks reads it instead of executing the source again);
      blank      the student copy as released;
      onewrong   the reference with the catalog's first mistake for its first function;
    mistake is (function, name of the mistake, its source). Made once per run by whichever xdist worker
    asks first (the others wait on a lock)."""
    import fcntl
    import shutil

    import nbformat

    from devtools import catalog
    from devtools.coursework import answers, fill
    from grading.cells import is_solution
    from grading.course import nbgrader_api, release_notebook, source_notebook

    def submit(root, aid, student, nb):
        folder = root / "submitted" / student / aid
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{aid}.ipynb")

    def run(step, *args):
        result = step(*args)
        assert result.get("success"), (f"nbgrader {step.__name__} {args} failed:\n"
                                       f"{result.get('error') or result.get('log')}")

    def make(aid):
        dest = run_cache / f"autograded-{aid}"
        func, kinds = next(iter(catalog.load()[aid].items()))
        name, value = next(iter(kinds["wrong"].items()))
        wrong_src, _ = catalog.split(value)
        with open(run_cache / f"autograded-{aid}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not dest.exists():
                tmp = run_cache / f"autograded-{aid}.{os.getpid()}.tmp"
                shutil.rmtree(tmp, ignore_errors=True)
                shutil.copytree(released(aid), tmp)
                source = nbformat.read(source_notebook(aid, tmp), as_version=4)
                student = nbformat.read(release_notebook(aid, tmp), as_version=4)
                reference = fill(nbformat.from_dict(student), answers(source))
                wrong = nbformat.from_dict(reference)
                defining = [c for c in wrong.cells if is_solution(c)
                            and re.search(rf"^def {re.escape(func)}\b", c.source, re.M)]
                assert len(defining) == 1, f"{aid}: exactly one solution cell must define {func}"
                defining[0].source = wrong_src
                for student_id, nb in (("reference", reference), ("blank", student), ("onewrong", wrong)):
                    submit(tmp, aid, student_id, nb)
                api = nbgrader_api(tmp)
                for student_id in ("reference", "blank", "onewrong"):
                    run(api.autograde, aid, student_id)
                run(api.generate_feedback, aid, "onewrong")
                os.replace(tmp, dest)
        return dest, (func, name, wrong_src)
    return make


@pytest.fixture
def course_copy(tmp_path, released):
    """course_copy(aid) -> a writable copy of released(aid) in this test's tmp_path."""
    import shutil

    def copy(aid, name="course"):
        return Path(shutil.copytree(released(aid), tmp_path / name))
    return copy


@pytest.fixture(autouse=True)
def _working_directory_kept(request):
    """Every test ends in the folder it started in. Some code under test moves this process into a
    temporary folder and removes it (seen in `make test` runs: every later test on that xdist worker then
    failed with FileNotFoundError from os.getcwd); put the folder back and say which test moved it."""
    before = os.getcwd()
    yield
    try:
        now = os.getcwd()
    except FileNotFoundError:
        now = "a folder that no longer exists"
    if now != before:
        os.chdir(before)
        import warnings

        warnings.warn(f"{request.node.nodeid} left the working directory at {now}; it was put back to {before}")


# --- where a run's time goes ------------------------------------------------------------------------

def _tree_cpu(pid):
    """CPU seconds of pid's live process tree: each live member's own and what it reaped. Walks only the
    tree (/proc/<pid>/task/*/children), so it costs a few reads per test, not a scan of every process."""
    from grading.kernels.procfs import process_cpu

    total, frontier = 0.0, [pid]
    while frontier:
        member = frontier.pop()
        total += process_cpu(member)
        try:
            for task in os.listdir(f"/proc/{member}/task"):
                with open(f"/proc/{member}/task/{task}/children") as f:
                    frontier += [int(c) for c in f.read().split()]
        except OSError:
            pass  # it ended meanwhile: its parent's reaped time has it
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With SPECLAB_TIMELINE=<file>, append one JSON line per test: its xdist worker, start and end (wall
    clock, so workers line up); `cpu`, the CPU seconds its worker process and the children it reaped
    meanwhile used (its kernels); `tree_cpu`, the same for the worker's whole live process tree, which also
    counts what Chromium, the lab server and their kernels used during the test (in `cpu` they show only when
    the session ends). Neither sees the sandboxed kernels (a test that autogrades three submissions in
    the sandbox showed 2 CPU s: their processes leave the tree before the test ends, not reaped by it); /proc/stat counts the whole
    machine. Then what the test recorded with record_property (the browser tests: seconds per phase)."""
    path = os.environ.get("SPECLAB_TIMELINE")
    if not path:
        yield
        return
    import json
    import resource
    import time

    def cpu():
        return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage,
                                                         (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
    start, before, tree_before = time.time(), cpu(), _tree_cpu(os.getpid())
    yield
    line = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "test": item.nodeid, "start": start,
            "end": time.time(), "cpu": cpu() - before, "tree_cpu": round(_tree_cpu(os.getpid()) - tree_before, 2),
            **dict(item.user_properties)}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")
