"""Limits for a whole sandbox, all its processes together (issue 36): grading/kernels/watchdog.py.

Found by an outside check: six forked children of 1 GiB each held 6.5 GiB in one sandbox against a 4 GiB
limit (the limits were per process), and 32 busy children, each in a session of its own, slowed the
classmates graded beside them five-fold. Here, with sizes scaled down to lowered limits:
- the watchdog alone, over a plain process tree (no sandbox: cheap): children past the memory budget or
  the process cap are killed and their parent is not; busy children past the CPU share are paused and
  niced (their session's autogroup too), and the CPU they get stays near the share;
- in the sandbox, through RobustExecute: forked children past the memory budget are killed and the
  kernel goes on; setsid children are niced and held to the share; a process cap counted per sandbox
  also where the grader is not root; the mount table shows none of the grader's private paths;
- in a class beside an honest classmate (`make grade`'s path): the attackers get a grading note, the
  classmate's score and notes are those it gets alone, and nothing outlives grading.
Timings are measured in devtools/benches/sandbox.py, never asserted here. With the limits off
(SPECLAB_SANDBOX_WATCHDOG=watch: the watchdog measures but does not act) every test but the mount
table's and the process count's fails.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import nbformat
import pytest
from traitlets.config import Config

from devtools import attacks, badsubmissions as bs
from devtools.coursework import leaked_hidden_lines
from grading.course import source_notebook
from grading.kernels import sandbox, watchdog
from grading.grade import grade
from grading.kernels.robust import RobustExecute
from grading.gradebook import cell_scores

needs_bwrap = pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
MIB = 1 << 20

# A parent that starts N children running CHILD (each prints one line), waits for them all and prints how each
# ended: "exit 0" or "signal 9". It is the "kernel" the watchdog protects.
FAMILY = r"""
import os, sys, time
n, child = int(sys.argv[1]), sys.argv[2]
kids = []
for i in range(n):
    pid = os.fork()
    if pid == 0:
        try:
            exec(child)
        finally:
            os._exit(0)
    kids.append(pid)
for pid in kids:
    _, status = os.waitpid(pid, 0)
    how = "signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status) else "exit %d" % os.WEXITSTATUS(status)
    os.write(1, how.encode() + b"\n")  # one write per line: the children write too
"""
# Resident memory (every page written), a MiB every 50 ms: four children together grow at 80 MiB/s, so a
# watchdog that looks every TICK (0.1 s) stops them near the budget even when a loaded machine delays its look
# by a second (80 MiB more). Written all at once, the four could finish inside one look (a CI run saw 248 MiB).
CLIMB = "blocks = []\nfor _ in range({mib}):\n    blocks.append(b'x' * (1 << 20))\n    time.sleep(0.05)\n" \
        "time.sleep({seconds})\n"
BUSY = "os.setsid()\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n" \
       "nice = os.getpriority(os.PRIO_PROCESS, 0)\n" \
       "os.write(1, b'%d %s\\n' % (nice, open('/proc/self/autogroup', 'rb').read().split()[-1]))\n"


def family(n, child, **watch):
    """Run FAMILY with a watchdog over it; (its output lines, the watchdog, wall seconds)."""
    proc = subprocess.Popen([sys.executable, "-c", FAMILY, str(n), child], stdout=subprocess.PIPE, text=True)
    dog = watchdog.Watchdog(proc.pid, proc.pid, **watch).start()
    start = time.monotonic()
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
        dog.stop()
    return out.split("\n"), dog, time.monotonic() - start


def test_children_past_the_memory_budget_are_killed_and_their_parent_is_not():
    before = len(watchdog.EVENTS)
    lines, dog, _ = family(4, CLIMB.format(mib=60, seconds=20), memory=150 * MIB)
    assert lines.count("signal 9") == 4, f"every child was to be killed, got {lines}"
    assert dog.killed == {"memory": 4}
    assert dog.peak_memory < 4 * 60 * MIB, "the children never held what they asked for together"
    assert [k for k, _ in watchdog.EVENTS[before:]] == ["memory"]
    assert "past the 0.146 GiB the grader lets a submission use" in watchdog.notes(before)[0]


def test_children_past_the_process_cap_are_killed():
    lines, dog, _ = family(12, "time.sleep(20)\n", tasks=6)
    assert lines.count("signal 9") == 12 and dog.killed == {"processes": 12}


def test_busy_children_in_sessions_of_their_own_are_niced_and_held_to_the_share():
    """4 busy children (setsid) under a share of 0.25 cores. Whether they reach the share depends on the load
    (at nice 19 a busy machine gives them little): what they got stays under it."""
    share, burst = 0.25, 0.2
    before = len(watchdog.EVENTS)
    lines, dog, wall = family(4, BUSY.format(seconds=2), share=share, burst=burst)
    said = [ln for ln in lines if ln and not ln.startswith(("exit", "signal"))]
    assert said == ["19 19"] * 4, f"each child at nice 19, its autogroup too: {lines}"
    # what they used stays near the share: one look (TICK) at every core, and the burst, ahead at most
    assert dog.cpu <= share * wall + burst + (os.cpu_count() or 1) * 2 * watchdog.TICK, (dog.cpu, wall)
    assert "4 of its processes left its kernel's session (setsid)" in " ".join(watchdog.notes(before))


def test_a_sandbox_past_its_share_is_paused():
    """The protected parent itself busy (nice 0) for 1.5 s under a share of 0.05 cores: even on a loaded machine
    it gets more, and is paused."""
    before = len(watchdog.EVENTS)
    proc = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end:\n"
                             "    pass\n"])
    dog, start = watchdog.Watchdog(proc.pid, proc.pid, share=0.05, burst=0.05).start(), time.monotonic()
    proc.wait(timeout=120)
    wall = time.monotonic() - start
    dog.stop()
    assert dog.paused > 0
    assert dog.cpu <= 0.05 * wall + 0.05 + 2 * watchdog.TICK, (dog.cpu, wall)  # one core, one look ahead at most
    assert re.search(r"more than 0.05 core\(s\) together: they were paused for [\d.]+ s",
                     " ".join(watchdog.notes(before)))


def test_nothing_is_left_paused_and_a_gone_sandbox_is_not_touched():
    lines, dog, _ = family(2, BUSY.format(seconds=1), share=0.1, burst=0.05)
    assert len([ln for ln in lines if ln == "exit 0"]) == 2, "the children ran to their end: resumed every time"
    assert dog._members() == [], "the family's parent is gone: no pid of another process is taken for it"


# ----------------------------------------------------------------------------- in the sandbox

def run_cells(tmp_path, sources, **traits):
    """Execute `sources` as cells in a sandboxed kernel (RobustExecute); the notebook, and the watchdog's summary."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in sources])
    config = Config()
    config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
    for name, value in traits.items():
        setattr(config.SandboxedKernelManager, name, value)
    seen = len(watchdog.SANDBOXES)
    ep = RobustExecute(config=config, timeout=60, sandbox=True, kernel_name="python3",
                       memory_limit=traits.get("memory_limit", 0))
    ep.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    return nb, watchdog.SANDBOXES[seen:]


def text(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


FORKS = """
import os, time
kids = []
for i in range(6):
    pid = os.fork()
    if pid == 0:
        try:  # 200 MiB, 2 MiB every 50 ms: the six grow at 240 MiB/s, so a look the load delays by 0.7 s
            blocks = []  # still ends them below 6 x 200 MiB (at once, all six could finish inside one look)
            for _ in range(100):
                blocks.append(b"x" * (2 << 20))
                time.sleep(0.05)
            time.sleep(20)
        finally:
            os._exit(0)
    kids.append(pid)
print(sorted(os.waitpid(k, 0)[1] for k in kids))
"""


@needs_bwrap
def test_forked_children_past_the_sandbox_memory_are_killed_and_the_kernel_goes_on(tmp_path):
    """6 children of 200 MiB under a 1 GiB limit (each fits its address space, together they do not)."""
    before = len(watchdog.EVENTS)
    nb, (summary,) = run_cells(tmp_path, [FORKS, "print(6 * 7)"], memory_limit=1024 * MIB)
    assert text(nb.cells[0]).strip() == str([int(signal.SIGKILL)] * 6), "each child killed (SIGKILL)"
    assert text(nb.cells[1]).strip() == "42", "the kernel itself goes on"
    assert summary["killed"] == {"memory": 6} and summary["peak memory"] < 6 * 200 * MIB
    assert "the 6 process(es) it started beside its kernel were killed" in watchdog.notes(before)[0]


SESSIONS = """
import os, time
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            end = time.time() + 2
            while time.time() < end:
                pass
            group = open('/proc/self/autogroup', 'rb').read().split()[-1]
            os.write(1, b'%d %s\\n' % (os.getpriority(os.PRIO_PROCESS, 0), group))
        finally:
            os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
"""


@needs_bwrap
def test_busy_children_in_sessions_of_their_own_are_niced_and_held_to_the_sandbox_share(tmp_path):
    """4 busy children (setsid) under a share of 0.25 cores: at nice 19, their autogroups too, and what they got
    stays under the share (on a loaded machine they get less: the test holds either way)."""
    before = len(watchdog.EVENTS)
    nb, (summary,) = run_cells(tmp_path, [SESSIONS], cpu_share=0.25)
    assert text(nb.cells[0]).split("\n")[:4] == ["19 19"] * 4, "each child at nice 19, its autogroup too"
    assert summary["apart"] == 4
    assert summary["cpu"] <= 0.25 * summary["seconds"] + watchdog.BURST + (os.cpu_count() or 1) * 2 * watchdog.TICK
    assert "4 of its processes left its kernel's session (setsid)" in " ".join(watchdog.notes(before))


NPROC = """
import os, time
n = 0
for i in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    n += 1
print(n)
"""


@needs_bwrap
def test_the_process_cap_counts_the_sandbox_alone(tmp_path):
    """16 processes and threads for the whole sandbox: the kernel (about 10 threads) forks until refused."""
    nb, (summary,) = run_cells(tmp_path, [NPROC], process_limit=16)
    forked = int(text(nb.cells[0]))
    assert 0 < forked < 16 and summary["peak tasks"] <= 16 + 1, (forked, summary)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not sandbox.available()[0],
                    reason="needs root (to become another user), setpriv and bwrap")
def test_a_grader_that_is_not_root_gets_a_process_count_per_sandbox():
    """As a user with 20 processes already, a sandbox's RLIMIT_NPROC of 5 lets it start 3 more (bwrap's reaper
    and the process itself are the other two): Linux counts the sandbox's user namespace apart, as
    sandbox.nproc_per_namespace() says (the command then adds none of the user's processes to the cap)."""
    forks = ("import os, resource, time\nresource.setrlimit(resource.RLIMIT_NPROC, (5, 5))\nn = 0\n"
             "for i in range(10):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
             "    if pid == 0:\n        time.sleep(3)\n        os._exit(0)\n    n += 1\nprint(n)\n")
    shell = ('for i in $(seq 20); do sleep 30 >/dev/null 2>&1 & pids="$pids $!"; done; '
             'bwrap --unshare-user --unshare-pid --ro-bind / / --proc /proc --dev /dev /usr/bin/python3 -c "$0"; '
             "kill $pids")
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", shell, forks],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["3"] and sandbox.nproc_per_namespace(), (out.stdout, out.stderr)


@needs_bwrap
def test_the_mount_table_shows_none_of_the_graders_private_paths(tmp_path):
    nb, _ = run_cells(tmp_path, ["print(open('/proc/self/mountinfo').read())"])
    table = text(nb.cells[0])
    assert " /run/connection.json " in table and str(tmp_path) not in table, "the connection file's folder"
    fonts = sandbox.font_cache()
    assert not fonts or os.path.dirname(fonts) not in table, "the grader's font cache"


# ----------------------------------------------------------------------------- in a class

AID = "01_branch_prediction"
ATTACKERS = attacks.LIMITS  # in devtools/attacks.py; not in test_grading_class.py's class, checked here alike
# Both tests below read the one class_graded of this module: one xdist worker for them, or each worker that
# gets one grades the class again (a CI run graded it twice, on two workers: 152 s and 133 s of wall clock)
IN_CLASS = pytest.mark.xdist_group("limits-class")


@pytest.fixture(scope="module")
def class_graded(released, tmp_path_factory):
    """An honest classmate alone, then beside the two attacks (memory children, busy setsid children), graded in
    the sandbox with 2 workers, a 1.5 GiB memory limit and a 10 s cell timeout."""
    course = released(AID)
    honest = {"reference": {f"{AID}.ipynb": bs.nb_bytes(bs.solved(course, AID))}}
    attackers = bs.bad_class(course, AID, [c for c in attacks.ATTACKS if c.name in ATTACKERS])
    out = {}
    for name, students in (("alone", honest), ("beside", {**honest, **attackers})):
        root = tmp_path_factory.mktemp(name)
        shutil.copytree(course, root, dirs_exist_ok=True)
        bs.write_class(root, AID, students)
        results = grade(root, workers=2, cell_timeout=10, memory_limit=1536 * MIB, quiet=True)
        out[name] = root, {r.student: r for r in results}
    return out


@needs_bwrap
@IN_CLASS
def test_attackers_in_a_class_are_stopped_with_a_note_and_the_classmate_keeps_its_grade(class_graded):
    root, results = class_graded["beside"]
    alone_root, alone = class_graded["alone"]
    assert cell_scores(root, AID, "reference") == cell_scores(alone_root, AID, "reference")
    assert results["reference"].notes == alone["reference"].notes == []
    memory = " ".join(results["attack_fork_memory"].notes)
    held = re.search(r"its processes held ([\d.]+) GiB together, past the 1.5 GiB", memory)
    assert held and float(held.group(1)) < attacks.FORK_CHILDREN * attacks.FORK_MIB / 1024, memory
    assert "process(es) it started beside its kernel were killed" in memory
    busy = " ".join(results["attack_busy_sessions"].notes)
    # paused too where the machine gives them more than a core at nice 19 (not on a loaded one): the bench shows it
    assert f"{attacks.BUSY_CHILDREN} of its processes left its kernel's session (setsid)" in busy, busy
    for name, said in (("attack_fork_memory", "beside its kernel were killed"), ("attack_busy_sessions", "nice 19")):
        page = (root / "feedback" / name / AID / f"{AID}.html").read_text()
        assert "Grading notes" in page and said in page


@needs_bwrap
@IN_CLASS
def test_attackers_earn_no_unearned_point_and_no_hidden_test_reaches_their_pages(class_graded):
    """test_grading_class.py's checks of every other attack, for these two: graded, no point its work does not
    deserve unless flagged, flagged if its case says so, and a feedback page with no hidden test line."""
    root, results = class_graded["beside"]
    source = nbformat.read(source_notebook(AID, root), as_version=4)
    for case in (c for c in attacks.ATTACKS if c.name in ATTACKERS):
        res, deserved = results[case.name], case.expect(root, AID)
        assert res.status == "graded", f"{case.what}: {res.why}"
        assert res.score <= deserved[0] or res.flagged, f"{case.what}: {res.score:g} of {deserved[0]:g}: {res.notes}"
        assert res.flagged or not case.flagged, f"{case.what}: should be flagged, notes: {res.notes}"
        page = (root / "feedback" / case.name / AID / f"{AID}.html").read_text()
        assert not leaked_hidden_lines(page, source), f"{case.what}: its feedback shows hidden tests"


@needs_bwrap
@IN_CLASS
def test_nothing_an_attacker_started_outlives_grading(class_graded, released):
    mark = attacks.busy_mark(released(AID))  # this class's children only: another worker may grade its own now
    left = []
    for pid in (int(d) for d in os.listdir("/proc") if d.isdigit()):
        try:
            if mark.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                left.append(pid)
        except OSError:
            pass
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left
