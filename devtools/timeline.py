"""Where one submission's grading spends its wall-clock time: `python -m devtools.timeline [N]`.

Grades a class of N (default 3) submissions of notebook 02 (devtools/badsubmissions.bench_class: right ones
first) with one worker, SPECLAB_TIMELINE=1, and prints each submission's marks (grading/kernels/timeline.py)
from the worker taking it to its verdicts: the time since it was taken and since the previous mark. Marks of
the judge's box are indented. The first submission pays the fork server's and the hidden copy's first use:
read the later ones.
"""
import os
import sys
import tempfile
from pathlib import Path

os.environ["SPECLAB_TIMELINE"] = "1"  # before grading is imported: the fork server's workers inherit it

AID = os.environ.get("SPECLAB_BENCH_NOTEBOOK", "02_acceptance_rule")


def show(result):
    marks = sorted(getattr(result, "timeline", []))
    if not marks:
        print(f"{result.student}: no marks ({result.status} {result.why})")
        return
    t0 = last = marks[0][0]
    print(f"{result.student} ({result.status}, {result.score}/{result.max_score}), {marks[-1][0] - t0:.2f} s:")
    for t, what in marks:
        print(f"  {t - t0:7.3f}  +{t - last:6.3f}  {what}")
        last = t


def main(n):
    from devtools import badsubmissions as bs
    from grading.course import scratch_course
    from grading.grade import grade

    with tempfile.TemporaryDirectory() as tmp:
        course = scratch_course(Path(tmp) / "course", [AID], release="generate")
        bs.write_class(course, AID, bs.bench_class(course, AID, n))
        for result in sorted(grade(course, workers=1, quiet=True), key=lambda r: r.student):
            show(result)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
