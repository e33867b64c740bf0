"""What an instructor sees through `make grade` (issue 45, issue 42 item 7): every item under submitted/ ends
graded or named with the reason and the fix, grades.csv holds a row per notebook the class was set (not per
notebook released), a progress line says what the first seconds are spent on and a score that hides errors is
not "ok", and lateness is charged from when a submission reached the course, not from the timestamp.txt the
student's own process wrote.

SLOW: each test grades one or two submissions of notebook 01 (about 10 s each) in the sandbox.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import nbformat
import pytest

from devtools import badsubmissions as bs
from grading.course import REPO, load_config, release_notebook
from grading.grade import grade, report
from grading.grade.intake import Result
from grading.grade.received import LEDGER

pytestmark = [pytest.mark.filterwarnings("ignore:.*not in session.*")]

AID, OTHER = "01_branch_prediction", "04_tv_distance"


def rows(root):
    with open(root / "grades.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def put(root, rel, data):
    path = root / "submitted" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data) if isinstance(data, bytes) else shutil.copyfile(data, path)


@pytest.fixture
def course(released, tmp_path):
    """01 and 04 released into one course (as `make release` does: both registered in the gradebook)."""
    from grading.course import generate_assignment

    root = shutil.copytree(released(AID), tmp_path / "course")
    shutil.copytree(REPO / "solutions" / OTHER, root / "solutions" / OTHER)
    generate_assignment(OTHER, root=root)
    return root


def test_every_item_under_submitted_is_graded_or_named_with_the_fix(course):
    """Through `python -m grading.grade` (what `make grade` runs). Seen failing before the fix: "graded 1 of 1
    submissions", no word of frank, gil, ghost or notes.txt anywhere, and a grades.csv row of 04 for ann,
    "not submitted", though nobody was set 04; the blank submission that raised two errors read "0/11 ok"."""
    nb = nbformat.read(release_notebook(AID, course), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell("import no_such_module"))
    first = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    first.source = "undefined_name + 1\n" + first.source   # an exercise cell that raises NameError
    put(course, f"ann/{AID}/{AID}.ipynb", nbformat.writes(nb).encode())
    put(course, "ann/notes.txt", b"my notes")
    put(course, f"frank/{OTHER}.ipynb", release_notebook(OTHER, course))    # one folder too high
    put(course, "gil/99_mystery.ipynb", release_notebook(AID, course))      # a notebook the course does not know
    (course / "submitted" / "ghost").mkdir()                                # a student folder holding nothing
    run = subprocess.run([sys.executable, "-m", "grading.grade", "-j", "1", "--memory-limit", "2G"], cwd=REPO,
                         capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, SPECLAB_COURSE_ROOT=str(course)))
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    assert "graded 1 of 1 submissions" in out and "4 more item(s) under submitted/ are not submissions" in out
    for said in (f"submitted/frank/{OTHER}.ipynb is one folder too high: not graded. Move it to "
                 f"submitted/frank/{OTHER}/{OTHER}.ipynb",
                 "submitted/gil/99_mystery.ipynb is a notebook the course does not know",
                 "submitted/ghost/ holds nothing", "submitted/ann/notes.txt is not a notebook"):
        assert said in out, said
    stored = {(r["student"], r["assignment"]): r for r in report.read_report(course).values()}
    assert stored[("frank", OTHER)]["status"] == "not graded" and "Move it to" in stored[("frank", OTHER)]["notes"]
    assert {("gil", "99_mystery.ipynb"), ("ghost", "(empty folder)"), ("ann", "notes.txt")} <= set(stored)
    # what the first seconds are spent on, and a score that hides errors
    assert run.stderr.index("checking that the sandbox") < run.stderr.index("generating the student copies") \
        < run.stderr.index("1/1")
    assert "errors: 2, see feedback" in run.stderr and " ok\n" not in run.stderr
    # a row per student of the class and notebook it was set: 04 was released, never set
    got = rows(course)
    assert {(r["assignment"], r["student_id"]) for r in got} == {(AID, s) for s in ("ann", "frank", "gil", "ghost")}
    assert all(r["review"] == report.NOT_SUBMITTED for r in got if r["student_id"] != "ann")
    assert f"not counted in grades.csv (released, but nobody handed it in and it has no due date): {OTHER}" in out
    assert f"not submitted (empty in grades.csv, not 0): {AID} by 3 student(s)" in out


def test_a_due_date_sets_a_notebook_for_the_class(course):
    """README: giving a notebook a due date counts it, whoever handed it in: a row per student, "not submitted"."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(OTHER, duedate=datetime(2030, 1, 1))
        gb.update_or_create_student("ann")
        gb.update_or_create_submission(AID, "ann")
    report.export(course, load_config(course))
    got = {(r["assignment"], r["student_id"]): r["review"] for r in rows(course)}
    assert got == {(AID, "ann"): "", (OTHER, "ann"): report.NOT_SUBMITTED}
    assert report.missing(course) == ({AID: 0, OTHER: 1}, [])


def test_a_backdated_timestamp_does_not_avoid_the_late_penalty_and_is_flagged(course, monkeypatch):
    """Issue 42: with a due date and penalty_method "zero", a timestamp.txt written before the due date by hand
    made a late submission score in full, unflagged (seen on the code before this: 11/11, no note). The course's
    own time (when the files reached submitted/) is charged; an honest late student with a true timestamp.txt
    is charged alike and not flagged."""
    from nbgrader.api import Gradebook

    due = datetime.now(timezone.utc) - timedelta(days=1)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(AID, duedate=due.replace(tzinfo=None))
    solved = nbformat.writes(bs.solved(course, AID)).encode()
    for student, claimed in (("backdated", due - timedelta(hours=2)), ("late", datetime.now(timezone.utc))):
        put(course, f"{student}/{AID}/{AID}.ipynb", solved)
        put(course, f"{student}/{AID}/timestamp.txt", claimed.strftime("%Y-%m-%d %H:%M:%S.%f %Z").encode())
    config = load_config(course)
    config.LateSubmissionPlugin.penalty_method = "zero"
    monkeypatch.setattr("grading.grade.load_config", lambda root: config)
    results = {r.student: r for r in grade(course, workers=1, memory_limit=2 << 30, quiet=True)}
    full = bs.full_marks(course, AID)[0]
    got = {r["student_id"]: r for r in rows(course)}
    for student in ("backdated", "late"):
        assert float(got[student]["raw_score"]) == full and float(got[student]["score"]) == 0.0, got[student]
    assert results["backdated"].flagged and "timestamp.txt" in got["backdated"]["review"]
    assert "correct its time in" in got["backdated"]["review"]
    assert not results["late"].flagged, results["late"].notes
    ledger = json.loads((course / LEDGER).read_text())
    assert set(ledger) == {f"backdated/{AID}", f"late/{AID}"}


def test_a_score_that_hides_errors_is_not_ok():
    res = Result("ann", AID, score=1, max_score=14)
    assert report.verdict(res) == "ok"
    res.note("cell number 2 raised NameError: name 'x' is not defined")
    res.note("cell number 3 raised ModuleNotFoundError: No module named 'y'")
    assert report.verdict(res) == "errors: 2, see feedback"


def test_nbgrader_autograde_by_hand_charges_the_course_time_too(course):
    """The formgrader's Autograde runs this path. Seen failing before received.charge: 11/11, unflagged."""
    from nbgrader.api import Gradebook

    from grading.course import nbgrader
    from grading.gradebook import score

    due = datetime.now(timezone.utc) - timedelta(days=1)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(AID, duedate=due.replace(tzinfo=None))
    put(course, f"backdated/{AID}/{AID}.ipynb", nbformat.writes(bs.solved(course, AID)).encode())
    put(course, f"backdated/{AID}/timestamp.txt", (due - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S %Z").encode())
    run = nbgrader("autograde", AID, "--force", "--LateSubmissionPlugin.penalty_method=zero", root=course,
                   capture=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission(AID, "backdated")
        assert sub.total_seconds_late > 0 and sub.late_submission_penalty == sub.score > 0
        assert sub.notebooks[0].flagged
    assert score(course, AID, "backdated")[0] > 0   # the raw score stands; the penalty takes it to 0 in grades.csv
    row = report.read_report(course)[(AID, "backdated")]
    assert row["flagged"] == "1" and "timestamp.txt" in row["notes"], row
