"""Grading a whole class with `make grade` (grading/grade.py), broken submissions included.

One class is built in a temporary course from notebook 01: four honest students (right,
blank, two different catalogued mistakes) and one student per broken submission in
devtools/badsubmissions.CASES, all generated from the notebooks at run time. The class is
graded once, in parallel, with a 10 s cell timeout. Then, for every broken submission: the
grading completed, the honest students' scores are exactly what stock `nbgrader autograde`
gives them alone (sequential, one process), the broken one gets the score it deserves and
a grading note saying what happened, and no file in the course outside the expected outputs
changed.

Slowest module of the grading tests: about 3 min 25 s on the shared 2-core machine. SLOW: the
class fixture (about 2 min: 17 submissions, two of which loop until the timeout) and the
submission-limit test (about 45 s: it waits out a 25 s limit).
"""
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from grading import badsubmissions as bs
from grading.course import REPO, nbgrader
from grading.grade import REPORT, grade, summary, tree_state
from grading.gradebook import cell_scores, score
from grading.release import release

AID = "01_branch_prediction"
CELL_TIMEOUT = 10  # long enough for any honest cell on a loaded 2-core machine
# What grading is expected to write; everything else in the course must be left byte for byte.
OUTPUTS = ["gradebook.db", "grades.csv", "autograded", "feedback", ".nbgrader.log"]
CASES = {case.name: case for case in bs.CASES}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with notebook 01 released and registered in its gradebook, no submissions."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(REPO / "solutions" / AID, root / "solutions" / AID)
    release([AID], root=root)
    return root


def copy_course(course, tmp_path_factory, name):
    root = tmp_path_factory.mktemp(name)
    shutil.copytree(course, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def honest(course):
    return bs.good_students(course, AID)


@pytest.fixture(scope="module")
def sequential(course, honest, tmp_path_factory):
    """The honest students graded the stock way: one `nbgrader autograde`, one submission after another."""
    root = copy_course(course, tmp_path_factory, "sequential")
    bs.write_class(root, AID, honest)
    nbgrader("autograde", AID, "--force", "--log-level=ERROR", root=root, check=False, capture=True)
    return {student: cell_scores(root, AID, student) for student in honest}


@pytest.fixture(scope="module")
def graded(course, honest, tmp_path_factory):
    """The whole class, broken submissions included, graded in parallel. SLOW: most of this module."""
    root = copy_course(course, tmp_path_factory, "class")
    bs.write_class(root, AID, honest)
    bs.write_class(root, AID, bs.bad_class(root, AID))
    before = tree_state(root, OUTPUTS)
    results = grade(root, workers=2, cell_timeout=CELL_TIMEOUT, quiet=True)
    after = tree_state(root, OUTPUTS)
    return root, {r.student: r for r in results}, before, after


def test_every_submission_gets_a_result(graded, honest):
    root, results, _, _ = graded
    assert set(results) == set(honest) | set(CASES)
    unreadable = {name for name, case in CASES.items() if case.note == "could not be read"}
    assert {s for s, r in results.items() if r.status == "failed"} == unreadable, (
        "only the notebooks that cannot be read may fail to grade; everything else must be graded")
    for student in results:
        assert score(root, AID, student) is not None, f"{student} has no score in the gradebook"


def test_honest_scores_equal_sequential_nbgrader(graded, sequential):
    """Parallel grading in scratch courses, merged into the gradebook, gives stock nbgrader's scores, cell by cell."""
    root, results, _, _ = graded
    for student, cells in sequential.items():
        assert cell_scores(root, AID, student) == cells, f"{student}: parallel and sequential grading disagree"
        assert not results[student].flagged and not results[student].notes, f"{student} was flagged for nothing"
    full = bs.full_marks(root, AID)
    assert score(root, AID, "reference") == full and score(root, AID, "blank") == (0, full[1])


@pytest.mark.parametrize("name", list(CASES))
def test_broken_submission(graded, name):
    root, results, _, _ = graded
    case, res = CASES[name], results[name]
    assert score(root, AID, name) == case.expect(root, AID), f"{case.what}: wrong score"
    assert (res.score, res.max_score) == case.expect(root, AID)
    assert any(case.note in note for note in res.notes), f"{case.what}: no note saying so, got {res.notes}"
    assert res.flagged == case.flagged, f"{case.what}: flagged should be {case.flagged}"
    page = root / "feedback" / name / AID / f"{AID}.html"
    text = page.read_text()
    assert "Grading notes" in text and case.note in text, "the feedback page must show the grading note"
    assert page.stat().st_size < 1_000_000, "the feedback page must stay small"


def test_nothing_outside_the_outputs_changed(graded):
    """Submissions that delete the gradebook, overwrite solutions and write files only touched a scratch copy."""
    root, _, before, after = graded
    assert before == after
    assert not (root / "i_was_here.txt").exists() and not (root / "i_was_here_too.txt").exists()


def test_huge_output_is_cut(graded):
    root, _, _, _ = graded
    path = root / "autograded" / "prints_50mb" / AID / f"{AID}.ipynb"
    assert path.stat().st_size < 1_000_000, "50 MB of printing must not reach the autograded notebook"
    nb = nbformat.read(path, as_version=4)
    assert any("output truncated by the grader" in o.get("text", "") for c in nb.cells if c.cell_type == "code"
               for o in c.outputs)


def test_report_and_summary(graded):
    root, results, _, _ = graded
    rows = (root / REPORT).read_text().splitlines()
    assert len(rows) == len(results) + 1
    text = summary(list(results.values()), 60.0, 2, root)
    assert text.startswith(f"graded {len(results) - 3} of {len(results)} submissions")
    assert "failed to grade (3" in text and "flagged for review" in text
    assert "bad_json" in text and "not valid JSON" in text
    exported = (root / "grades.csv").read_text()
    assert "vandal" in exported and "prints_50mb" in exported


def test_submission_past_its_limit_is_stopped_and_the_next_one_graded(course, honest, tmp_path_factory):
    """A submission that runs past the per-submission limit kills its worker; the next gets a fresh one.
    SLOW: about 45 s."""
    root = copy_course(course, tmp_path_factory, "limit")
    bs.write_class(root, AID, {"loops_forever": CASES["loops_forever"].build(root, AID),
                               "reference": honest["reference"]})
    # a 60 s cell timeout, so the loop runs into the 25 s limit (an honest submission needs a few seconds)
    results = {r.student: r for r in grade(root, workers=1, cell_timeout=60, submission_limit=25, quiet=True)}
    stopped = results["loops_forever"]
    assert stopped.status == "failed" and stopped.flagged and "longer than 25 s" in stopped.why
    assert score(root, AID, "loops_forever") == (0, bs.full_marks(root, AID)[1])
    assert score(root, AID, "reference") == bs.full_marks(root, AID), "the worker after a killed one must grade"


def test_a_misspelt_assignment_folder_is_reported(course, honest, tmp_path_factory):
    root = copy_course(course, tmp_path_factory, "misspelt")
    bs.write_class(root, AID[:-1], {"typo": honest["reference"]})
    [res] = grade(root, workers=1, quiet=True)
    assert res.status == "failed" and res.flagged and "no assignment" in res.why


def test_command_line(course, honest, tmp_path_factory):
    """`python -m grading.grade ID` (what `make grade` runs) in a course named by SPECLAB_COURSE_ROOT."""
    root = copy_course(course, tmp_path_factory, "cli")
    bs.write_class(root, AID, {"reference": honest["reference"], "bad_json": CASES["bad_json"].build(root, AID)})
    run = subprocess.run([sys.executable, "-m", "grading.grade", AID, "-j", "2"], cwd=REPO, capture_output=True,
                         text=True, env=dict(os.environ, SPECLAB_COURSE_ROOT=str(root)), timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "graded 1 of 2 submissions" in run.stdout
    assert "failed to grade (1" in run.stdout and "bad_json" in run.stdout
    assert "[" in run.stderr and "2/2" in run.stderr, "a progress line per submission"
    assert score(root, AID, "reference") == bs.full_marks(root, AID)
