"""Grading throughput: submissions per minute with 1 worker and with every core, in one run.

A generated class of N_SUBMISSIONS submissions of notebook 01 (60% right, 30% with one
catalogued mistake, 10% blank: grading/badsubmissions.bench_class) is graded twice by
`grading.grade.grade`, each time in a fresh copy of the same temporary course: once with
one worker, once with os.cpu_count() workers. Both runs must give the same scores.
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

from grading import badsubmissions as bs
from grading.course import REPO
from grading.gradebook import score
from grading.grade import grade
from grading.release import release

AID = "01_branch_prediction"
N_SUBMISSIONS = int(os.environ.get("SPECLAB_BENCH_CLASS", 50))


def _timed_grade(course, tmp, workers):
    root = tmp / f"workers{workers}"
    shutil.copytree(course, root)
    start = time.perf_counter()
    results = grade(root, workers=workers, quiet=True)
    seconds = time.perf_counter() - start
    return seconds, {r.student: score(root, AID, r.student) for r in results}, results


def bench():
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = tmp / "course"
        shutil.copytree(REPO / "solutions" / AID, course / "solutions" / AID)
        release([AID], root=course)
        bs.write_class(course, AID, bs.bench_class(course, AID, N_SUBMISSIONS))
        rows = {}
        for workers in sorted({1, cores}):
            rows[workers] = _timed_grade(course, tmp, workers)
            seconds, scores, results = rows[workers]
            graded = sum(r.status == "graded" for r in results)
            yield (f"{AID}: {N_SUBMISSIONS} submissions, {workers} worker(s)",
                   f"{seconds:6.1f} s, {N_SUBMISSIONS / seconds * 60:5.1f} per minute ({graded} graded)")
        if cores > 1:
            one, many = rows[1], rows[cores]
            yield f"speed-up with {cores} workers", f"{one[0] / many[0]:.2f}x"
            yield "same scores with 1 and with all workers", str(one[1] == many[1])
