"""Grading speed: `make grade` against stock nbgrader on the same class, side by side in one run.

A generated class of N_SUBMISSIONS submissions of notebook 02 (60% right, 30% with one catalogued
mistake, 10% blank: devtools/badsubmissions.bench_class) is graded three ways, every submission
once by each, in fresh copies of one course:
  stock   `nbgrader autograde ID` then `nbgrader generate_feedback ID` (one process each, one
          submission after another: what an instructor runs without this course's grader), with the
          course's config less its own steps (grading.nbgrader_steps.stock_config);
  ours/1  `make grade -j 1` (grading.grade.grade, one worker);
  ours/N  `make grade` with every core;
  ours/N without sandbox  `make grade --no-sandbox` with every core: what the sandbox (grading/kernels/sandbox.py,
          bubblewrap around every kernel) costs, side by side with ours/N (goal, issue 26: under 10% per
          submission).
  ours/N tests in the kernel  `make grade --no-judge` with every core: the old path, the hidden tests run in
          the student's kernel after the student's code; ours/N runs them in the judge (grading/judge/),
          outside the kernel (issue 36: what the judge costs).
The machine is shared and its load drifts, so the class is split in two halves and the runs go
stock, ours/1, ours/N on the first half, then ours/N, ours/1, stock on the second: a steady drift
costs every setting alike. Only ratios measured within one run mean anything here. Both graders
run the kernels with the same environment (grading.grade.pool.WORKER_ENV: inline backend, one BLAS
thread), so the ratios measure the graders, not a backend. Goals (issue 16): ours/1 at most 1.1x
stock's time (per core), ours/N at least 1.8x faster than stock on 2 cores.

Also printed: the floor, the notebooks' bare execution per submission (nbclient, kernel start
included, no nbgrader); the CPU seconds each way spends per submission, all processes counted
(kernels included), which the other jobs on a shared machine do not change the way they change
wall time; and where ours spends its time per submission (intake, nbgrader's autograde and
feedback, notes, publishing, CPU) and per run (gradebooks, merging, report).
"""
import os
import resource
import shutil
import tempfile
import time
from multiprocessing import forkserver
from pathlib import Path

from devtools import badsubmissions as bs
from grading.course import nbgrader, scratch_course
from grading.kernels.execute import execute
from grading.gradebook import cell_scores
from grading.grade import grade
from grading.grade.pool import WORKER_ENV

AID = os.environ.get("SPECLAB_BENCH_NOTEBOOK", "02_acceptance_rule")
N_SUBMISSIONS = max(2, int(os.environ.get("SPECLAB_BENCH_CLASS", 12)))
FLOOR_SAMPLE = 3


def cpu_now():
    """CPU seconds used so far by this process, its finished children (stock nbgrader and its kernels, the
    floor's kernels), and the fork server with its finished children (make grade's workers and their
    kernels: a worker reaps its kernels, the fork server reaps the workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
        except (OSError, ValueError):
            pass
    return total


# The course's config puts its sandboxed steps into `nbgrader autograde` and `generate_feedback` (every path
# an instructor grades from is safe): stock nbgrader's leg loads the same config without them.
STOCK_CONFIG = """from grading.nbgrader_steps import stock_config
c = get_config()  # noqa: F821 (injected by traitlets)
c.merge(stock_config())
"""


def stock(root):
    config_dir = root / "stock-config"
    config_dir.mkdir(exist_ok=True)
    (config_dir / "nbgrader_config.py").write_text(STOCK_CONFIG)
    for command in ("autograde", "generate_feedback"):
        nbgrader(command, AID, "--force", "--log-level=ERROR", root=root, check=False, capture=True, env=WORKER_ENV,
                 config_dir=config_dir)
    if (root / "autograded" / "grading-report.csv").exists():  # the course's last autograde step writes it
        raise RuntimeError("the stock leg ran the course's own steps, not nbgrader's")


def floor(root, students):
    """Seconds per submission of executing the notebook alone (a fresh kernel each, as grading starts one)."""
    old, stderr = dict(os.environ), os.dup(2)
    os.environ.update(WORKER_ENV)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)  # the kernels' start-up warnings, as a worker's go to its log
    try:
        seconds = []
        for student in students[:FLOOR_SAMPLE]:
            folder = root / "submitted" / student / AID
            start = time.perf_counter()
            execute(folder / f"{AID}.ipynb", allow_errors=True, timeout=120)
            seconds.append(time.perf_counter() - start)
    finally:
        os.dup2(stderr, 2)
        os.close(stderr)
        os.environ.clear()
        os.environ.update(old)
    return sum(seconds) / len(seconds)


def bench():
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = scratch_course(tmp / "course", [AID], release="generate")
        students = list(bs.bench_class(course, AID, N_SUBMISSIONS).items())
        halves = [dict(students[: len(students) // 2]), dict(students[len(students) // 2:])]
        bare = f"ours/{cores} without sandbox"
        old = f"ours/{cores} tests in the kernel"
        order = [("stock", 0), ("ours/1", 0), (f"ours/{cores}", 0), (old, 0), (bare, 0), ("floor", 0),
                 (bare, 1), (old, 1), (f"ours/{cores}", 1), ("ours/1", 1), ("stock", 1)]
        seconds, scores, loads, steps, runs, legs, cpu = {}, {}, {}, {}, {}, [], {}
        for n, (how, half) in enumerate(order):
            root = tmp / f"run{n}"
            shutil.copytree(course, root)
            bs.write_class(root, AID, halves[half])
            loads.setdefault(how, []).append(os.getloadavg()[0])
            cpu0 = cpu_now()
            if how == "floor":
                seconds[how] = floor(root, list(halves[half]))
                cpu[how] = (cpu_now() - cpu0) / FLOOR_SAMPLE
                continue
            start = time.perf_counter()
            if how == "stock":
                stock(root)
            else:
                timings = {}
                results = grade(root, workers=1 if how == "ours/1" else cores, quiet=True, timings=timings,
                                sandbox=how != bare, judge=how != old)
                for r in results:
                    for step, t in r.timings.items():
                        steps.setdefault(how, {}).setdefault(step, []).append(t)
                    # a sandboxed kernel is reaped inside its sandbox: its CPU time, read from /proc by the
                    # grader as it ends, never reaches the fork server's children's times
                    cpu[how] = cpu.get(how, 0.0) + r.timings.get("sandboxed kernels cpu", 0.0)
                for step, t in timings.items():
                    runs.setdefault(how, {}).setdefault(step, 0.0)
                    runs[how][step] += t
            time.sleep(1)  # the fork server reaps the workers of a closed pool
            cpu[how] = cpu.get(how, 0.0) + cpu_now() - cpu0
            legs.append(f"{how}{'ab'[half]} {time.perf_counter() - start:.0f} s")
            seconds[how] = seconds.get(how, 0.0) + time.perf_counter() - start
            scores.setdefault(how, {}).update({s: cell_scores(root, AID, s) for s in halves[half]})
        load = {how: sum(v) / len(v) for how, v in loads.items()}
        yield f"{AID}: {N_SUBMISSIONS} submissions, in this order", ", ".join(legs)
        for how in ("stock", "ours/1", f"ours/{cores}", old, bare):
            if how in seconds:
                yield f"  {how}", (f"{seconds[how]:6.1f} s, {seconds[how] / N_SUBMISSIONS:5.2f} s per submission "
                                   f"(load average {load[how]:.1f})")
        yield "  floor: bare execution, per submission", (f"{seconds['floor']:6.2f} s, {cpu['floor']:5.2f} CPU s "
                                                       "(nbclient, kernel start included)")
        yield "ours/1 / stock, wall (per core; goal <= 1.1)", f"{seconds['ours/1'] / seconds['stock']:.2f}x"
        if cores > 1:
            yield f"stock / ours/{cores}, wall (speed-up; goal >= 1.8 on 2 cores)", \
                f"{seconds['stock'] / seconds[f'ours/{cores}']:.2f}x"
        yield f"ours/{cores} / {bare}, wall (the sandbox's cost; goal < 1.10)", \
            f"{seconds[f'ours/{cores}'] / seconds[bare]:.2f}x"
        yield f"ours/{cores} / {old}, wall (the judge's cost)", f"{seconds[f'ours/{cores}'] / seconds[old]:.2f}x"
        for how in ("stock", "ours/1", f"ours/{cores}", old, bare):
            yield f"  {how}: CPU seconds per submission (all processes)", (
                f"{cpu[how] / N_SUBMISSIONS:5.2f} s ({cpu[how] / N_SUBMISSIONS / cpu['floor']:.2f}x the floor's)")
        yield "ours/1 / stock, CPU (per core, whatever the load)", f"{cpu['ours/1'] / cpu['stock']:.2f}x"
        yield f"ours/{cores} / {old}, CPU (the judge's cost, whatever the load)", f"{cpu[f'ours/{cores}'] / cpu[old]:.2f}x"
        same = len({repr(sorted(v.items())) for v in scores.values()}) == 1
        yield "same scores, cell by cell, every way", str(same)
        for how, per in steps.items():
            yield f"{how}: per submission, in its worker", ", ".join(
                f"{step} {sum(t) / len(t):.2f} s" for step, t in per.items())
            yield f"{how}: per run, in the parent", ", ".join(f"{step} {t / 2:.2f} s" for step, t in runs[how].items())
