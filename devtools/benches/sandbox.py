"""What the sandbox costs: `make grade` with and without it (grading/kernels/sandbox.py), legs interleaved.

The grading section measures the sandbox once per half class, beside three other settings, so a load
swing during one leg moves its ratio by more than the effect (it read 1.12x once on a loaded machine
while the CPU seconds showed no cost). Here the same class of notebook 02 is graded LEGS times each
way, in the order on, off, off, on, on, off, ... (each pair in both orders, so a steady drift costs both
alike), every leg in a fresh copy of the course with every core; the ratio is taken of the medians
per submission. Goal (issue 26): under 1.10.

Then the limits of a whole sandbox (grading/kernels/watchdog.py, issue 36): honest classmates graded alone, and
beside each attack of devtools/attacks.py on those limits (forked memory children; busy children in
sessions of their own), with the limits on and off (SPECLAB_SANDBOX_WATCHDOG=watch: the watchdog measures
and does not act), each run in a process of its own (the workers' fork server keeps the environment it
started with). Per run: the classmates' median seconds in their worker, and the attacker's peaks as its
watchdog measured them (memory of all its processes together, processes and threads, time paused).

    python -m devtools.bench sandbox
    SPECLAB_SANDBOX_LEGS=6 SPECLAB_BENCH_CLASS=12 python -m devtools.bench sandbox
    SPECLAB_SANDBOX_PART=limits python -m devtools.bench sandbox   # only the limits (or: cost)
    SPECLAB_SANDBOX_ATTACKS=attack_busy_sessions SPECLAB_SANDBOX_PART=limits python -m devtools.bench sandbox
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from devtools import attacks, badsubmissions as bs
from grading.kernels import sandbox as sandboxes
from grading.course import scratch_course
from grading.gradebook import cell_scores
from grading.grade import grade

AID = os.environ.get("SPECLAB_BENCH_NOTEBOOK", "02_acceptance_rule")
N_SUBMISSIONS = max(2, int(os.environ.get("SPECLAB_BENCH_CLASS", 8)))
LEGS = max(2, int(os.environ.get("SPECLAB_SANDBOX_LEGS", 4)))  # legs per setting
PART = os.environ.get("SPECLAB_SANDBOX_PART", "both")
LIMITS_AID = "01_branch_prediction"  # the shortest notebook: the attack lasts as long as its grading
CLASSMATES = 3
LIMIT_MEMORY = "1536M"               # each forked child fits a kernel's address space; together they do not
LIMIT_ATTACKS = os.environ.get("SPECLAB_SANDBOX_ATTACKS", "attack_busy_sessions attack_fork_memory").split()


def order(legs):
    """on, off, off, on, on, off, ...: every adjacent pair has both settings, in both orders."""
    pairs = [("on", "off") if i % 2 == 0 else ("off", "on") for i in range(legs)]
    return [s for pair in pairs for s in pair]


def bench():
    if not sandboxes.available()[0]:
        yield "sandbox", "bubblewrap cannot start here: nothing to compare"
        return
    if PART in ("both", "cost"):
        yield from cost()
    if PART in ("both", "limits"):
        yield from limits()


# Run in a process of its own: grade the course given, print each submission's seconds, notes and score, and the
# summaries its sandboxes' watchdogs logged.
RUN = """
import json, os, sys
from grading.grade import grade, parse_size
results = grade(sys.argv[1], workers=2, memory_limit=parse_size(sys.argv[2]), quiet=True)
print(json.dumps({r.student: [r.seconds, r.notes, r.score] for r in results}))
"""


def graded(root, limits_on, log):
    env = {**os.environ, "SPECLAB_SANDBOX_WATCHDOG": "on" if limits_on else "watch",
           "SPECLAB_SANDBOX_WATCHDOG_LOG": str(log)}
    out = subprocess.run([sys.executable, "-c", RUN, str(root), LIMIT_MEMORY], env=env, capture_output=True,
                         text=True, timeout=3600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def limits():
    """Classmates alone, beside each attack with the limits on, off, off, on (drift costs both alike), alone."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = scratch_course(tmp / "course", [LIMITS_AID], release="generate")
        right = {f"{LIMITS_AID}.ipynb": bs.nb_bytes(bs.solved(course, LIMITS_AID))}
        honest = {f"classmate_{i}": right for i in range(CLASSMATES)}
        cases = {c.name: c for c in attacks.ATTACKS}
        runs = [("alone", None, True)]
        for name in LIMIT_ATTACKS:
            runs += [(name, name, True), (name, name, False), (name, name, False), (name, name, True)]
        runs.append(("alone", None, True))
        seconds, peaks, notes, scores = {}, {}, {}, set()
        for n, (label, attack, on) in enumerate(runs):
            root, log = tmp / f"limits{n}", tmp / f"limits{n}.log"
            shutil.copytree(course, root)
            students = dict(honest)
            if attack:
                students[attack] = cases[attack].build(course, LIMITS_AID)
            bs.write_class(root, LIMITS_AID, students)
            got = graded(root, on, log)
            seconds.setdefault((label, on), []).append(statistics.median(got[s][0] for s in honest))
            scores.add(json.dumps(sorted((s, got[s][2]) for s in honest)))
            if attack:  # the attacker's sandbox: the one with the most tasks (then memory) of the run
                sums = [json.loads(line) for line in log.read_text().splitlines()]
                peaks.setdefault((label, on), []).append(max(sums, key=lambda s: (s["peak tasks"], s["peak memory"])))
                notes[(label, on)] = got[attack][1]
        alone = seconds[("alone", True)]
        yield (f"{LIMITS_AID}: {CLASSMATES} classmates, 2 workers, memory limit {LIMIT_MEMORY}",
               "classmates' median s per submission, alone: " + ", ".join(f"{x:.1f}" for x in alone))
        for attack in LIMIT_ATTACKS:
            for on in (True, False):
                got, mid = peaks[(attack, on)], statistics.median(seconds[(attack, on)])
                yield (f"  beside {attack}, limits {'on' if on else 'off'}",
                       f"classmates {', '.join(f'{x:.1f}' for x in seconds[(attack, on)])} s "
                       f"({mid / statistics.median(alone):.2f}x alone); attacker: peak "
                       f"{max(x['peak memory'] for x in got) / (1 << 30):.2f} GiB, {max(x['peak tasks'] for x in got)} "
                       f"tasks, {statistics.mean(x['cpu'] / x['seconds'] for x in got):.2f} cores, paused "
                       f"{statistics.mean(x['paused'] for x in got):.1f} s")
            yield f"  {attack}: its notes, limits on", " | ".join(notes[(attack, True)])[:300] or "(none)"
        yield "classmates' scores the same in every run", str(len(scores) == 1)


def cost():
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
