"""The JupyterHub route, end to end, with a temporary exchange folder and two students.

release_assignment -> fetch_assignment -> (work) -> submit -> collect -> make grade ->
release_feedback -> fetch_feedback, every step nbgrader's own exchange code, run in this process
through NbGraderAPI (devtools/exchange.py says how one process plays the instructor and both
students). Separate OS users, a real hub, its permissions and the browser's Assignments tab are
tests/hub's; what no test on one machine can show is listed in grading/README.md.
"""
import json
import time
from datetime import datetime, timezone

import nbformat
from nbgrader.api import Gradebook

from devtools import badsubmissions as bs
from devtools.coursework import answers, fill
from devtools.exchange import COURSE_ID, instructor, make_exchange, student
from grading.course import release_notebook, source_notebook
from grading.grade import grade
from grading.grade.received import LEDGER, arrival
from grading.gradebook import score

AID = "01_branch_prediction"


def work_on(path, answers):
    """Do the homework: fill the fetched notebook's solution cells from {grade_id: source}."""
    nbformat.write(fill(nbformat.read(path, as_version=4), answers), path)


def test_release_fetch_submit_collect_grade_feedback(tmp_path, course_copy):
    root, exchange, homes = course_copy(AID), make_exchange(tmp_path / "exchange"), tmp_path / "home"
    instructor(root, exchange, "release_assignment", AID)
    assert (exchange / COURSE_ID / "outbound" / AID / f"{AID}.ipynb").is_file()

    right = answers(nbformat.read(source_notebook(AID, root), as_version=4))
    _, func, _, mistake = bs.wrong_answer(root, AID, 0)
    wrong = dict(right)
    wrong[next(g for g, src in right.items() if f"def {func}(" in src)] = mistake
    for name, answered in (("alice", right), ("bob", wrong)):
        home = homes / name
        home.mkdir(parents=True)
        listed = student(home, name, exchange, "list")
        assert any(a.get("assignment_id") == AID for a in listed), f"{name} must see the released assignment: {listed}"
        student(home, name, exchange, "fetch_assignment", AID)
        notebook = home / AID / f"{AID}.ipynb"
        assert notebook.read_bytes() == release_notebook(AID, root).read_bytes()
        work_on(notebook, answered)
        student(home, name, exchange, "submit", AID)

    # the due date falls between the submissions and the collection: both were on time (grading/grade/received.py
    # takes each one's time from the exchange's file times at collect, not from the collection's copy)
    inbound = {name: arrival(next((exchange / COURSE_ID / "inbound").glob(f"{name}+{AID}+*")))
               for name in ("alice", "bob")}
    time.sleep(1.1)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(AID, duedate=datetime.now(timezone.utc).replace(tzinfo=None))
    time.sleep(1.1)
    instructor(root, exchange, "collect", AID)
    ledger = json.loads((root / LEDGER).read_text())
    assert {n: ledger[f"{n}/{AID}"]["time"] for n in inbound} == {
        n: t.isoformat(timespec="seconds") for n, t in inbound.items()}, "collect records the exchange's times"
    for name in ("alice", "bob"):
        assert (root / "submitted" / name / AID / f"{AID}.ipynb").is_file()
        assert (root / "submitted" / name / AID / "timestamp.txt").is_file()

    results = {r.student: r for r in grade(root, workers=2, quiet=True)}
    full = bs.full_marks(root, AID)
    lost = sum(bs.failing_tests(root, AID, func, mistake).values())
    assert score(root, AID, "alice") == full
    assert score(root, AID, "bob") == (full[0] - lost, full[1])
    assert all(r.status == "graded" and not r.flagged for r in results.values())
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assert [gb.find_submission(AID, n).total_seconds_late for n in ("alice", "bob")] == [0, 0]
    csv = (root / "grades.csv").read_text()
    # the time the submission reached the course (grading/grade/received.py), not the student's timestamp.txt
    stamp = json.loads((root / LEDGER).read_text())[f"alice/{AID}"]["time"]
    assert stamp[:19].replace("T", " ") in csv.replace("T", " "), "the submission time must reach grades.csv"

    instructor(root, exchange, "release_feedback", AID)
    for name, want in (("alice", full[0]), ("bob", full[0] - lost)):
        student(homes / name, name, exchange, "fetch_feedback", AID)
        pages = list((homes / name / AID / "feedback").glob(f"*/{AID}.html"))
        assert len(pages) == 1, f"{name} must receive exactly one feedback page"
        assert f"{AID} (Score: {float(want)} / {float(full[1])})" in pages[0].read_text(), (
            f"{name}'s feedback must show the score the gradebook holds")
