"""What the sandbox costs: `make grade` with and without it (grading/sandbox.py), legs interleaved.

The grading section measures the sandbox once per half class, beside three other settings, so a load
swing during one leg moves its ratio by more than the effect (it read 1.12x once on a loaded machine
while the CPU seconds showed no cost). Here the same class of notebook 02 is graded LEGS times each
way, in the order on, off, off, on, on, off, ... (each pair in both orders, so a steady drift costs both
alike), every leg in a fresh copy of the course with every core; the ratio is taken of the medians
per submission. Goal (issue 26): under 1.10.

    python -m devtools.bench sandbox
    SPECLAB_SANDBOX_LEGS=6 SPECLAB_BENCH_CLASS=12 python -m devtools.bench sandbox
"""
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from devtools import badsubmissions as bs
from grading import sandbox as sandboxes
from grading.course import scratch_course
from grading.gradebook import cell_scores
from grading.grade import grade

AID = os.environ.get("SPECLAB_BENCH_NOTEBOOK", "02_acceptance_rule")
N_SUBMISSIONS = max(2, int(os.environ.get("SPECLAB_BENCH_CLASS", 8)))
LEGS = max(2, int(os.environ.get("SPECLAB_SANDBOX_LEGS", 4)))  # legs per setting


def order(legs):
    """on, off, off, on, on, off, ...: every adjacent pair has both settings, in both orders."""
    pairs = [("on", "off") if i % 2 == 0 else ("off", "on") for i in range(legs)]
    return [s for pair in pairs for s in pair]


def bench():
    if not sandboxes.available()[0]:
        yield "sandbox", "bubblewrap cannot start here: nothing to compare"
        return
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = scratch_course(tmp / "course", [AID], release="generate")
        students = bs.bench_class(course, AID, N_SUBMISSIONS)
        seconds, scores, loads, legs = {"on": [], "off": []}, {}, {"on": [], "off": []}, []
        for n, setting in enumerate(order(LEGS)):
            root = tmp / f"leg{n}"
            shutil.copytree(course, root)
            bs.write_class(root, AID, students)
            loads[setting].append(os.getloadavg()[0])
            start = time.perf_counter()
            grade(root, workers=cores, quiet=True, sandbox=setting == "on")
            seconds[setting].append((time.perf_counter() - start) / N_SUBMISSIONS)
            legs.append(f"{setting} {seconds[setting][-1]:.2f}")
            scores.setdefault(setting, {s: cell_scores(root, AID, s) for s in students})
            time.sleep(1)
        yield f"{AID}: {N_SUBMISSIONS} submissions, {cores} workers; s per submission", ", ".join(legs)
        for setting in ("on", "off"):
            yield (f"  sandbox {setting}: seconds per submission, median (min-max)",
                   f"{statistics.median(seconds[setting]):.2f} ({min(seconds[setting]):.2f}-"
                   f"{max(seconds[setting]):.2f}), load average {statistics.mean(loads[setting]):.1f}")
        ratio = statistics.median(seconds["on"]) / statistics.median(seconds["off"])
        yield "sandbox on / off, median per submission (goal < 1.10)", f"{ratio:.3f}x"
        yield "same scores, cell by cell, both ways", str(scores["on"] == scores["off"])
