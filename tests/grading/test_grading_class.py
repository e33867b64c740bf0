"""Grading a whole class with `make grade` (grading/grade/), broken and hostile submissions included.

One class is built in a temporary course from notebook 01: four honest students (right,
blank, two different catalogued mistakes), one student per broken submission in
devtools/badsubmissions.CASES and one per class of attack in devtools/attacks.ATTACKS (issue
26; the two on the sandbox's limits, attacks.LIMITS, are graded in tests/grading/test_limits.py's class, with
the same checks), all generated from the notebooks at run time. The class is graded once, in parallel, in the
sandbox (grading/kernels/sandbox.py), with a 10 s cell timeout and a 2 GiB memory limit; the course is
named in the grader's PYTHONPATH and marked as the attacks' target, so that an attack that gets out
of its kernel acts on this course. Then, for every broken submission: the grading completed, the
honest students' scores are exactly what stock `nbgrader autograde` gives them alone (sequential,
one process), the broken one gets the score it deserves and a grading note saying what happened, no
file in the course outside the expected outputs changed, and the self-check (`make check`) reports
every broken submission with the same score, cell by cell. For every attack: it earns no point it
does not deserve unless it is flagged, no process it started outlives grading, no hidden test line
reaches any feedback page, no file but the graded notebook and its page is kept, and the pages are
sanitised. The class is graded by the judge (grading/judge/, the default): the attacks on tests that run in
the kernel (issue 36) are among the attacks.

Slowest module of the grading tests. SLOW: the class fixture (41 submissions, two of which
loop until the timeout and two of which run out of memory).

Why one module of about 400 lines: every test here reads the one grading of the one class (a module
fixture, on one xdist worker); split, the class would be graded once per module.
"""
import csv
import html
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from devtools import attacks, badsubmissions as bs
from grading import selfcheck
from devtools.coursework import leaked_hidden_lines, loaded_addresses
from grading.kernels import sandbox as sandboxes
from grading.course import REPO, nbgrader, nbgrader_api, release_notebook, source_notebook
from grading.grade import REPORT, NoSandbox, default_memory_limit, grade, parse_size, summary, tree_state
from grading.grade.intake import NBGRADER_FILES
from grading.grade.pool import Pool
from grading.kernels.robust import gib
from grading.gradebook import cell_scores, score
from grading.nbgrader_steps import stock_config

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*not in session.*"),  # nbgrader's harmless SAWarning
    # one xdist worker for the module: its fixtures grade the class once, not once per worker (seen: a
    # `-n 2` run of this module alone spread its tests and graded the class on both workers)
    pytest.mark.xdist_group("class-grading"),
]

AID = "01_branch_prediction"
CELL_TIMEOUT = 10  # long enough for any honest cell on a loaded 2-core machine
MEMORY_LIMIT = 2 << 30  # a kernel with the course's imports has about 1 GiB of address space
# What grading is expected to write; everything else in the course must be left byte for byte.
OUTPUTS = ["gradebook.db", "grades.csv", "autograded", "feedback", ".nbgrader.log"]
CASES = {case.name: case for case in bs.CASES}
ATTACKS = {case.name: case for case in attacks.ATTACKS if case.name not in attacks.LIMITS}


@pytest.fixture(scope="module")
def course(released):
    """A course with notebook 01 released and registered in its gradebook, no submissions (shared: copy it)."""
    return released(AID)


def copy_course(course, tmp_path_factory, name):
    root = tmp_path_factory.mktemp(name)
    shutil.copytree(course, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def honest(course):
    return bs.good_students(course, AID)


@pytest.fixture(scope="module")
def sequential(course, honest, tmp_path_factory):
    """The honest students graded the stock way: nbgrader's autograde (NbGraderAPI, in this process), one
    submission after another."""
    root = copy_course(course, tmp_path_factory, "sequential")
    bs.write_class(root, AID, honest)
    api = nbgrader_api(root, config=stock_config())  # nbgrader's own steps: the course config now sandboxes them
    for student in honest:
        assert api.autograde(AID, student)["success"], f"stock nbgrader could not grade {student}"
    return {student: cell_scores(root, AID, student) for student in honest}


def lingering():
    """Process ids of the processes an attack left behind (attacks.LINGER in their command line)."""
    found = []
    for pid in (int(d) for d in os.listdir("/proc") if d.isdigit()):
        try:
            if attacks.LINGER.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                found.append(pid)
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def graded(course, honest, tmp_path_factory):
    """The whole class, broken and hostile submissions included, graded in parallel. SLOW: most of this module."""
    root = copy_course(course, tmp_path_factory, "class")
    (root / attacks.TARGET).write_text("the attacks in devtools/attacks.py act on this course only\n")
    bs.write_class(root, AID, honest)
    bs.write_class(root, AID, bs.bad_class(root, AID))
    bs.write_class(root, AID, bs.bad_class(root, AID, list(ATTACKS.values())))
    before = tree_state(root, OUTPUTS)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), saved) if p)  # where attack 1 looks
    try:
        results = grade(root, workers=2, cell_timeout=CELL_TIMEOUT, memory_limit=MEMORY_LIMIT, quiet=True)
    finally:
        os.environ.pop("PYTHONPATH") if saved is None else os.environ.update(PYTHONPATH=saved)
    time.sleep(2)  # what an attack left running would act now
    after, left = tree_state(root, OUTPUTS), lingering()
    for pid in left:  # the test's own clean-up: they were started by this test's grading
        os.kill(pid, signal.SIGKILL)
    return root, {r.student: r for r in results}, before, after, left


def test_every_submission_gets_a_result(graded, honest):
    root, results, *_ = graded
    assert set(results) == set(honest) | set(CASES) | set(ATTACKS)
    unreadable = {name for name, case in CASES.items() if case.note == "could not be read"}
    assert {s for s, r in results.items() if r.status == "failed"} == unreadable, (
        "only the notebooks that cannot be read may fail to grade; everything else must be graded")
    for student in results:
        assert score(root, AID, student) is not None, f"{student} has no score in the gradebook"


def test_honest_scores_equal_sequential_nbgrader(graded, sequential):
    """Parallel grading in scratch courses, merged into the gradebook, gives stock nbgrader's scores, cell by cell."""
    root, results, *_ = graded
    for student, cells in sequential.items():
        assert cell_scores(root, AID, student) == cells, f"{student}: parallel and sequential grading disagree"
        assert not results[student].flagged and not results[student].notes, f"{student} was flagged for nothing"
    full = bs.full_marks(root, AID)
    assert score(root, AID, "reference") == full and score(root, AID, "blank") == (0, full[1])


@pytest.mark.parametrize("name", list(CASES))
def test_broken_submission(graded, name):
    root, results, *_ = graded
    case, res = CASES[name], results[name]
    assert score(root, AID, name) == case.expect(root, AID), f"{case.what}: wrong score"
    assert (res.score, res.max_score) == case.expect(root, AID)
    assert any(case.note in note for note in res.notes), f"{case.what}: no note saying so, got {res.notes}"
    assert res.flagged == case.flagged, f"{case.what}: flagged should be {case.flagged}"
    page = root / "feedback" / name / AID / f"{AID}.html"
    text = page.read_text()
    assert "Grading notes" in text and case.note in text, "the feedback page must show the grading note"
    assert page.stat().st_size < 1_000_000, "the feedback page must stay small"


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_earns_no_unearned_point_unflagged(graded, name):
    """An attack (issue 26's table) is graded, and scores at most what its work deserves unless it is flagged."""
    root, results, *_ = graded
    case, res = ATTACKS[name], results[name]
    deserved = case.expect(root, AID)
    assert res.status == "graded", f"{case.what}: {res.why}"
    assert res.score <= deserved[0] or res.flagged, (
        f"{case.what}: {res.score:g} points, deserves {deserved[0]:g}, not flagged: {res.notes}")
    if case.flagged:
        assert res.flagged, f"{case.what}: should be flagged, notes: {res.notes}"


def test_nothing_outlives_grading(graded):
    """A process a submission starts, detached or not, ends with its sandbox; none acts after grading."""
    root, _, _, _, left = graded
    assert not left, f"{len(left)} process(es) started by a submission outlived grading"
    assert not (root / "written_after_grading.txt").exists()


def test_no_hidden_test_reaches_any_feedback(graded):
    """Only the graded notebook's page is kept in feedback/, and no page shows a hidden test line, whatever the
    submission read (solutions/, the kernel's history) or copied beside its notebook."""
    root, results, *_ = graded
    source = nbformat.read(source_notebook(AID, root), as_version=4)
    for student in results:
        folder = root / "feedback" / student / AID
        # besides the page, only nbgrader's own small files (release_feedback reads them), never the student's
        assert sorted(p.name for p in folder.iterdir() if p.name not in NBGRADER_FILES) == [f"{AID}.html"], (
            f"{student}: {os.listdir(folder)}")
        page = folder.joinpath(f"{AID}.html").read_text()
        # also joined up again: attack_history prints the cell being run a few characters a line
        for text in (page, html.unescape(page).replace("\n", "")):
            leaked = leaked_hidden_lines(text, source)
            assert not leaked, f"{student}'s feedback shows hidden tests: {leaked[:3]}"
        kept = root / "autograded" / student / AID
        if kept.is_dir():
            assert sorted(p.name for p in kept.iterdir() if p.name not in NBGRADER_FILES) == [f"{AID}.ipynb"], (
                f"{student}: {os.listdir(kept)}")


def test_disk_a_submission_fills_is_bounded(graded):
    root, *_ = graded
    size = sum(p.stat().st_size for kind in ("autograded", "feedback")
               for p in (root / kind / "attack_disk").rglob("*") if p.is_file())
    assert size < 5_000_000, f"{size:,} bytes kept for a submission that wrote {attacks.ATTACK_DISK_MB} MB"


def test_feedback_pages_are_sanitised(graded):
    """A <script> or an event handler in a markdown cell or an output does not reach the feedback page."""
    root, *_ = graded
    page = (root / "feedback" / "attack_html" / AID / f"{AID}.html").read_text()
    assert re.search(r"<[^<>]*\bonerror\s*=", page, re.I) is None, "an event handler reached the page"
    assert re.search(rf"<script[^>]*>[^<]*{attacks.SCRIPT}", page) is None, "a script reached the page"
    assert "&lt;script&gt;" in page, "the code cell that displays it is shown, escaped"


# Issue 36: submissions that inflated the records, forged the grader's messages or stopped the class run
ISSUE_36 = ["attack_images", "attack_surrogate", "attack_long_name", "attack_escapes", "attack_forged",
            "attack_timestamp", "copy_pasted"]


def kept_bytes(root, student):
    return sum(p.stat().st_size for kind in ("autograded", "feedback") for p in (root / kind / student).rglob("*")
               if p.is_file())


def is_printable(text):
    return text.isprintable() and "\x1b" not in text


@pytest.mark.parametrize("name", ISSUE_36)
def test_issue_36_submission_is_graded_fairly_and_said(graded, name):
    """Each is graded (none stops the class), earns what its work deserves, is flagged as its case says, says
    what happened in a printable note, and keeps a bounded size of files (three 8 MB images kept 67 MB)."""
    root, results, *_ = graded
    case, res = ATTACKS[name], results[name]
    assert res.status == "graded", f"{case.what}: {res.why}"
    assert (res.score, res.max_score) == case.expect(root, AID), f"{case.what}: {res.notes}"
    assert res.flagged == case.flagged, f"{case.what}: {res.notes}"
    assert not case.note or any(case.note in n for n in res.notes), f"{case.what}: {res.notes}"
    assert all(is_printable(n) and len(n) <= 600 for n in res.notes), res.notes
    assert kept_bytes(root, name) < 3_000_000, f"{case.what}: {kept_bytes(root, name):,} bytes kept"


def test_records_are_written_and_printable(graded):
    """grades.csv and the grading report are written, every field printable and bounded, and the summary too,
    whatever the submissions put in their exceptions, cell ids and file names."""
    root, results, *_ = graded
    for path in (root / "grades.csv", root / REPORT):
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert {r.get("student_id") or r.get("student") for r in rows} >= set(results), path
        assert all(is_printable(v) and len(v) < 20_000 for r in rows for v in r.values()), path
    text = summary(list(results.values()), 60.0, 2, root)
    assert all(is_printable(line) for line in text.splitlines())
    assert "\\x1b[2J" in text, "an escape sequence is shown, not sent"


def test_feedback_pages_show_figures_and_mathematics_and_nothing_forged(graded):
    """The honest page has the notebook's figures (the inline backend) and MathML, no script and no "Test
    cell"; the forged one has none of the grader's styles, nothing remote and no data: but figures."""
    root, *_ = graded
    page = (root / "feedback" / "reference" / AID / f"{AID}.html").read_text()
    assert 'src="data:image/png;base64,' in page, "the notebook's figures are on its page"
    assert "<math" in page and "<script" not in page and "Test cell" not in page
    forged = (root / "feedback" / "attack_forged" / AID / f"{AID}.html").read_text()
    body = forged[forged.index("<body"):]
    assert attacks.FORGED in body, "the student's words stay, as plain text"
    assert not [a for a in loaded_addresses(forged) if attacks.REMOTE in a], "the page loads nothing from elsewhere"
    # in a tag, not in the escaped source listing of the attack's own cell (`&lt;p class="alert"`)
    assert not re.search(r"""<[a-z][^<>]*\bclass\s*=\s*["'][^"']*\b(alert|grading-notes)\b""", body), \
        "the grader's styles"
    assert not re.search(r"""(src|href)\s*=\s*["']?data:(?!image/png;base64,)""", forged), "a data: address"
    images = (root / "feedback" / "attack_images" / AID / f"{AID}.html").read_text()
    assert "image larger than the grader keeps" in images and len(images) < 1_500_000


def test_a_later_run_reads_what_this_one_stored(graded, tmp_path_factory):
    """The next make grade, the attackers gone, grades and writes grades.csv (it stopped reading the report
    the first run stored: a 140,000-character note), keeping the other rows."""
    root, results, *_ = graded
    again = tmp_path_factory.mktemp("again")
    shutil.copytree(root, again, dirs_exist_ok=True)
    for folder in (again / "submitted").iterdir():
        if folder.name != "reference":
            shutil.rmtree(folder)
    (again / "grades.csv").unlink()
    [res] = grade(again, workers=1, cell_timeout=CELL_TIMEOUT, memory_limit=MEMORY_LIMIT, quiet=True)
    assert res.status == "graded" and (again / "grades.csv").is_file()
    with open(again / REPORT, newline="", encoding="utf-8") as f:
        assert {r["student"] for r in csv.DictReader(f)} == set(results)


def test_grade_refuses_without_the_sandbox_and_check_says_so(course, monkeypatch, capsys):
    """Where bwrap cannot start, make grade refuses (unless --no-sandbox) and make check runs without it, saying
    so in one line. A recorder stands in for grading in the self-check."""
    monkeypatch.setattr(sandboxes, "available", lambda: (False, "no bwrap in this test"))
    with pytest.raises(NoSandbox, match="no bwrap in this test"):
        grade(course, quiet=True)
    seen = {}
    monkeypatch.setattr("grading.grade.grade", lambda root, **kwargs: seen.update(kwargs) or [])
    selfcheck.check_many([(AID, release_notebook(AID, course))], root=course, workers=1)
    assert seen["sandbox"] is False
    said = [ln for ln in capsys.readouterr().err.strip().splitlines() if "sandbox" in ln]  # beside progress lines
    assert len(said) == 1 and "without the grader's sandbox" in said[0] and "no bwrap in this test" in said[0]


def test_selfcheck_reports_every_broken_submission_as_make_grade_scored_it(graded):
    """`make check` reads a graded submission into its report with `selfcheck._result`: on every broken
    kind, as `make grade` graded it here, the report has the same score, cell by cell, and says why."""
    root, results, *_ = graded
    for name, case in CASES.items():
        result = selfcheck._result(root, results[name])
        graded_cells = {gid: got for gid, (got, _) in cell_scores(root, AID, name).items()}
        assert {gid: got for gid, got, _, _ in result["parts"]} == graded_cells, (
            f"{case.what}: the self-check's report and make grade disagree")
        assert result["score"] == results[name].score
        said = " ".join(result["notes"] + [result.get("error", "")])
        assert case.note in said, f"{case.what}: the self-check does not say so: {said}"


# The two kinds whose grading `make check` changes: the file is copied under the name the grader expects,
# and the memory limit it is given is the one grading applies. The other kinds differ only in what
# grade() does with them, which the class grading above ran; the time limit's way through is checked
# below without waiting out a loop.
THROUGH_SELFCHECK = ["wrong_name", "eats_memory"]


def test_selfcheck_grades_through_make_grade(graded, tmp_path):
    """`make check` on a learner's file grades it by `make grade`'s path, in a scratch course: the same
    score, cell by cell, as the class grading gave it."""
    root, results, *_ = graded
    items = []
    for name in THROUGH_SELFCHECK:
        [(filename, data)] = CASES[name].build(root, AID).items()
        path = tmp_path / name / filename
        path.parent.mkdir()
        path.write_bytes(data)
        items.append((AID, path))
    checked = selfcheck.check_many(items, timeout=CELL_TIMEOUT, root=root, workers=2, memory_limit=MEMORY_LIMIT)
    for name, result in zip(THROUGH_SELFCHECK, checked):
        graded_cells = {gid: got for gid, (got, _) in cell_scores(root, AID, name).items()}
        assert {gid: got for gid, got, _, _ in result["parts"]} == graded_cells, (
            f"{CASES[name].what}: the self-check and make grade disagree")
        assert result["score"] == results[name].score
    said = {name: " ".join(r["notes"] + [r.get("error", "")]) for name, r in zip(THROUGH_SELFCHECK, checked)}
    assert CASES["wrong_name"].note not in said["wrong_name"], "the self-check grades your file under the expected name"
    assert f"ran out of memory (the grader lets a submission use {gib(MEMORY_LIMIT)})" in said["eats_memory"], (
        said["eats_memory"])


def test_selfcheck_gives_make_grade_its_limits(course, monkeypatch):
    """The time and memory limits `make check` is given reach grade() unchanged (a recorder stands in for it)."""
    seen = {}

    def recorder(root, **kwargs):
        seen.update(kwargs, submitted=sorted(p.name for p in (root / "submitted").glob("*/*/*.ipynb")))
        return []
    monkeypatch.setattr("grading.grade.grade", recorder)
    notebook = release_notebook(AID, course)
    selfcheck.check_many([(AID, notebook)], timeout=7, root=course, workers=1, memory_limit=3 << 30)
    assert (seen["cell_timeout"], seen["memory_limit"], seen["workers"]) == (7, 3 << 30, 1)
    assert seen["submitted"] == [f"{AID}.ipynb"]


def test_nothing_outside_the_outputs_changed(graded):
    """Submissions that delete the gradebook, overwrite solutions and write files only touched a scratch copy."""
    root, _, before, after, _ = graded
    assert before == after
    assert not (root / "i_was_here.txt").exists() and not (root / "i_was_here_too.txt").exists()


def test_huge_output_is_cut(graded):
    root, *_ = graded
    path = root / "autograded" / "prints_50mb" / AID / f"{AID}.ipynb"
    assert path.stat().st_size < 1_000_000, "50 MB of printing must not reach the autograded notebook"
    nb = nbformat.read(path, as_version=4)
    assert any("output truncated by the grader" in o.get("text", "") for c in nb.cells if c.cell_type == "code"
               for o in c.outputs)


def test_report_and_summary(graded):
    root, results, *_ = graded
    rows = (root / REPORT).read_text().splitlines()
    assert len(rows) == len(results) + 1
    text = summary(list(results.values()), 60.0, 2, root)
    assert text.startswith(f"graded {len(results) - 3} of {len(results)} submissions")
    assert "failed to grade (3" in text and "flagged for review" in text
    assert "bad_json" in text and "not valid JSON" in text
    exported = (root / "grades.csv").read_text()
    assert "vandal" in exported and "prints_50mb" in exported


def _stub(job, config):
    """A stand-in for grading one submission: "slow" starts a process group of its own (as a kernel is
    started), writes its id where the grader looks for the kernel's, and never returns."""
    if job.student == "slow":
        child = subprocess.Popen(["sleep", "600"], start_new_session=True)
        (job.scratch / "kernel.pid").write_text(str(child.pid))
        time.sleep(600)
    return f"{job.student} done in {os.getpid()}"


class StubJob:
    def __init__(self, scratch, student):
        self.scratch, self.student = scratch, student


def test_the_pool_kills_a_submission_past_its_limit_with_its_kernel_and_grades_the_next(tmp_path):
    """pebble's timeout kills the worker; the grader kills the kernel's process group; a fresh worker takes
    the next submission. A stub stands for grading, so no real limit is waited out."""
    jobs = [StubJob(tmp_path / name, name) for name in ("slow", "next", "last")]
    for job in jobs:
        job.scratch.mkdir()
    pool = Pool(1, config={}, log_dir=tmp_path, function=_stub)
    for job in jobs:
        pool.schedule(job, timeout=3)
    outcomes = {job.student: outcome for job, outcome in pool.results()}
    pool.close()
    assert "longer than 3 s" in pool.failure(outcomes["slow"], 3)
    assert outcomes["next"].startswith("next done") and outcomes["last"].startswith("last done")
    kernel = int((tmp_path / "slow" / "kernel.pid").read_text())
    for _ in range(50):
        try:
            os.killpg(kernel, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(kernel, signal.SIGKILL)
        pytest.fail("the kernel of the stopped submission is still running")


def test_a_submission_past_its_limit_scores_0_and_is_flagged(course, tmp_path_factory):
    """The same through `make grade`, with a limit a real submission cannot meet."""
    root = copy_course(course, tmp_path_factory, "limit")
    bs.write_class(root, AID, {"loops_forever": CASES["loops_forever"].build(root, AID)})
    [stopped] = grade(root, workers=1, cell_timeout=60, submission_limit=1, quiet=True)
    assert stopped.status == "failed" and stopped.flagged and "longer than 1 s" in stopped.why
    assert score(root, AID, "loops_forever") == (0, bs.full_marks(root, AID)[1])
    page = (root / "feedback" / "loops_forever" / AID / f"{AID}.html").read_text()
    assert "Grading notes" in page and "longer than 1 s" in page


def test_memory_limit_option():
    assert parse_size("4G") == 4 << 30 and parse_size("512M") == 512 << 20 and parse_size("2GiB") == 2 << 30
    assert parse_size("none") == parse_size("0") == 0
    with pytest.raises(ValueError):
        parse_size("a lot")
    assert 1 << 30 <= default_memory_limit(2) <= 4 << 30
    assert default_memory_limit(10_000) == 1 << 30, "never less than a course notebook needs"


def test_a_misspelt_assignment_folder_is_reported(course, honest, tmp_path_factory):
    root = copy_course(course, tmp_path_factory, "misspelt")
    bs.write_class(root, AID[:-1], {"typo": honest["reference"]})
    [res] = grade(root, workers=1, quiet=True)
    assert res.status == "failed" and res.flagged and "no assignment" in res.why


def test_command_line(course, honest, tmp_path_factory):
    """`python -m grading.grade ID` (what `make grade` runs) in a course named by SPECLAB_COURSE_ROOT."""
    root = copy_course(course, tmp_path_factory, "cli")
    bs.write_class(root, AID, {"reference": honest["reference"], "bad_json": CASES["bad_json"].build(root, AID)})
    run = subprocess.run([sys.executable, "-m", "grading.grade", AID, "-j", "2", "--memory-limit", "2G"], cwd=REPO,
                         capture_output=True,
                         text=True, env=dict(os.environ, SPECLAB_COURSE_ROOT=str(root)), timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "graded 1 of 2 submissions" in run.stdout
    assert "failed to grade (1" in run.stdout and "bad_json" in run.stdout
    assert "[" in run.stderr and "2/2" in run.stderr, "a progress line per submission"
    assert score(root, AID, "reference") == bs.full_marks(root, AID)
    # `nbgrader export` by hand writes the review column too: the plugin is in the course config
    (root / "grades.csv").unlink()
    nbgrader("export", "--log-level=ERROR", root=root)
    with open(root / "grades.csv", newline="") as f:
        review = {row["student_id"]: row["review"] for row in csv.DictReader(f)}
    assert "could not be read" in review["bad_json"] and review["reference"] == ""
