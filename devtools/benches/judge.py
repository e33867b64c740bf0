"""What the judge (grading/judge/) costs, notebook by notebook: each notebook's reference submission graded
by `make grade` with the judge (the default) and with the tests in the kernel (`--no-judge`), side by side.

The legs alternate per notebook (old then judged, judged then old, ...), each in a fresh copy of the course,
one worker, sandboxed; per leg the wall seconds, the CPU seconds of every process (the grading worker, where
the judge runs the tests, and the sandboxed kernel) and the load average; and whether the two legs gave the
same scores, cell by cell. A notebook in OPT_OUT (grading/judge/execute.py) is graded the old way both times
unless SPECLAB_JUDGE_OPTED_OUT=1 (set before the first grading of the process: the workers' fork server keeps
the environment it started with).

    python -m devtools.bench judge
    SPECLAB_BENCH_NOTEBOOKS="03_residual 08_real_text" SPECLAB_JUDGE_OPTED_OUT=1 python -m devtools.bench judge
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


def bench():
    aids = os.environ.get("SPECLAB_BENCH_NOTEBOOKS", "").split() or assignments()
    forced = os.environ.get("SPECLAB_JUDGE_OPTED_OUT") == "1"
    yield "notebook", "old path (tests in the kernel) | judged | judged / old"
    with tempfile.TemporaryDirectory() as tmp:
        for n, aid in enumerate(aids):
            where = Path(tmp) / aid
            course = scratch_course(where / "course", [aid], release="generate")
            files = bs.good_students(course, aid)["reference"]
            out = {}
            for judge in ((False, True) if n % 2 == 0 else (True, False)):
                out[judge] = leg(course, aid, files, judge, where)
            (w0, c0, l0, s0, st0), (w1, c1, l1, s1, st1) = out[False], out[True]
            note = "" if aid not in OPT_OUT else (" (opted out, judged: SPECLAB_JUDGE_OPTED_OUT=1)" if forced
                                                  else " (opted out: graded the old way both times)")
            yield f"  {aid}", (f"{w0:6.1f} s {c0:6.1f} CPU s (load {l0:4.1f}) | {w1:6.1f} s {c1:6.1f} CPU s "
                               f"(load {l1:4.1f}) | {w1 / w0:5.2f}x wall {c1 / c0:5.2f}x CPU; same scores: "
                               f"{s0 == s1}; {st0}/{st1}{note}")
            shutil.rmtree(where, ignore_errors=True)
