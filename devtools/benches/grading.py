"""Grading throughput: submissions per minute with 1 worker and with every core, in one run.

A generated class of N_SUBMISSIONS submissions of notebook 01 (60% right, 30% with one
catalogued mistake, 10% blank: devtools/badsubmissions.bench_class) is graded by
`grading.grade.grade` with one worker and with os.cpu_count() workers, every submission once
by each. On a shared machine the load drifts while this runs, so the class is split in two
halves and the runs go in the order 1, all, all, 1 (first half, first half, second half,
second half): a steady drift then costs both settings alike. Each run is in a fresh copy of
the course; both settings must give the same scores. The load average is shown per setting.
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

from devtools import badsubmissions as bs
from grading.course import REPO
from grading.gradebook import score
from grading.grade import grade
from grading.release import release

AID = "01_branch_prediction"
N_SUBMISSIONS = max(2, int(os.environ.get("SPECLAB_BENCH_CLASS", 50)))


def bench():
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = tmp / "course"
        shutil.copytree(REPO / "solutions" / AID, course / "solutions" / AID)
        release([AID], root=course)
        students = list(bs.bench_class(course, AID, N_SUBMISSIONS).items())
        halves = [dict(students[: len(students) // 2]), dict(students[len(students) // 2:])]
        order = [(1, 0), (cores, 0), (cores, 1), (1, 1)] if cores > 1 else [(1, 0), (1, 1)]
        seconds, scores, loads, graded = {}, {}, {}, {}
        for run, (workers, half) in enumerate(order):
            root = tmp / f"run{run}"
            shutil.copytree(course, root)
            bs.write_class(root, AID, halves[half])
            loads.setdefault(workers, []).append(os.getloadavg()[0])
            start = time.perf_counter()
            results = grade(root, workers=workers, quiet=True)
            seconds[workers] = seconds.get(workers, 0.0) + time.perf_counter() - start
            scores.setdefault(workers, {}).update({r.student: score(root, AID, r.student) for r in results})
            graded[workers] = graded.get(workers, 0) + sum(r.status == "graded" for r in results)
        for workers in sorted(seconds):
            load = sum(loads[workers]) / len(loads[workers])
            yield (f"{AID}: {N_SUBMISSIONS} submissions, {workers} worker(s)",
                   f"{seconds[workers]:6.1f} s, {N_SUBMISSIONS / seconds[workers] * 60:5.1f} per minute "
                   f"({graded[workers]} graded; load average {load:.1f} at the start)")
        if cores > 1:
            yield f"speed-up with {cores} workers", f"{seconds[1] / seconds[cores]:.2f}x"
            yield "same scores with 1 and with all workers", str(scores[1] == scores[cores])
