"""What the judge (grading/judge/) costs, notebook by notebook: each notebook's reference submission graded
by `make grade` with the judge (the default) and with the tests in the kernel (`--no-judge`), side by side.

Each notebook is graded SPECLAB_BENCH_REPEATS times each way (default 3), the legs in the order old, judged,
judged, old, old, judged, ... (so neither way always goes first), each in a fresh copy of the course, one worker,
sandboxed, after one leg not counted: the process's first grading starts the workers' fork server (2-3 s, which
counted in the first old leg until stop 54 and flattered the judge by ~7% over five legs). A single leg is noisier than the 1.15x bar on a shared machine (04 read 1.00-1.35x in single legs), so
the verdict is on the legs summed per way; the fastest leg of each way is shown beside it. Per way: the wall
seconds and the CPU seconds of every process (the grading worker, where the judge runs the tests, and the sandboxed
kernel), the load average at its legs' starts; and whether every leg gave the same scores, cell by cell. A notebook in OPT_OUT (grading/judge/execute.py) is graded the old way both times
unless SPECLAB_JUDGE_OPTED_OUT=1 (set before the first grading of the process: the workers' fork server keeps
the environment it started with).

    python -m devtools.bench judge
    SPECLAB_BENCH_REPEATS=1 SPECLAB_BENCH_NOTEBOOKS="03_residual 08_real_text" SPECLAB_JUDGE_OPTED_OUT=1 python -m devtools.bench judge
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

from devtools import badsubmissions as bs
from grading.course import assignments, scratch_course
from grading.gradebook import cell_scores
from grading.grade import grade
from grading.judge.execute import OPT_OUT

from .grading import cpu_now


def leg(course, aid, files, judge, where):
    root = where / ("judged" if judge else "old")
    shutil.copytree(course, root)
    bs.write_class(root, aid, {"reference": files})
    load = os.getloadavg()[0]
    cpu0, start = cpu_now(), time.perf_counter()
    results = grade(root, [aid], workers=1, quiet=True, export=False, judge=judge)
    wall = time.perf_counter() - start
    time.sleep(1)  # the fork server reaps the worker of a closed pool
    cpu = cpu_now() - cpu0 + sum(r.timings.get("sandboxed kernels cpu", 0.0) for r in results)
    status = ",".join(sorted({r.status for r in results}))
    return wall, cpu, load, cell_scores(root, aid, "reference"), status


GOAL = 1.15  # issue 46: the judge at most 1.15x the tests-in-the-kernel path, every notebook


def orders(repeats):
    """Which way each leg grades: old, judged, judged, old, old, judged, ... (True: judged)."""
    return [bool((n + n // 2) % 2) for n in range(2 * repeats)]


def bench():
    aids = os.environ.get("SPECLAB_BENCH_NOTEBOOKS", "").split() or assignments()
    repeats = int(os.environ.get("SPECLAB_BENCH_REPEATS", "3"))
    if repeats < 1:
        raise SystemExit(f"SPECLAB_BENCH_REPEATS must be at least 1, got {repeats}")
    forced = os.environ.get("SPECLAB_JUDGE_OPTED_OUT") == "1"
    yield "notebook", (f"old path (tests in the kernel) | judged | judged / old, {repeats} leg(s) each way summed "
                       f"(fastest legs); goal <= {GOAL}x")
    with tempfile.TemporaryDirectory() as tmp:
        for aid in aids:
            where = Path(tmp) / aid
            course = scratch_course(where / "course", [aid], release="generate")
            files = bs.good_students(course, aid)["reference"]
            leg(course, aid, files, False, where / "warm-up")  # not counted: see the docstring
            legs = {False: [], True: []}
            for n, judge in enumerate(orders(repeats)):
                legs[judge].append(leg(course, aid, files, judge, where / str(n)))
            (w0, c0, l0), (w1, c1, l1) = ([sum(x[i] for x in legs[j]) for i in range(3)] for j in (False, True))
            f0, f1 = (min(x[0] for x in legs[j]) for j in (False, True))
            same = len({repr(x[3]) for x in legs[False] + legs[True]}) == 1
            statuses = ",".join(sorted({x[4] for x in legs[False] + legs[True]}))
            note = "" if aid not in OPT_OUT else (" (opted out, judged: SPECLAB_JUDGE_OPTED_OUT=1)" if forced
                                                  else " (opted out: graded the old way both times)")
            verdict = "within" if w1 / w0 <= GOAL else "OVER"
            yield f"  {aid}", (f"{w0:6.1f} s {c0:6.1f} CPU s (load {l0 / repeats:4.1f}) | {w1:6.1f} s {c1:6.1f} CPU s "
                               f"(load {l1 / repeats:4.1f}) | {w1 / w0:5.2f}x wall ({f1 / f0:4.2f}x fastest legs) "
                               f"{c1 / c0:5.2f}x CPU: {verdict}; same scores: {same}; {statuses}{note}")
            shutil.rmtree(where, ignore_errors=True)
