"""The JupyterHub route, end to end, with a temporary exchange folder and two students.

release_assignment -> fetch_assignment -> (work) -> submit -> collect -> make grade ->
release_feedback -> fetch_feedback, every step the real nbgrader command. One process
plays the instructor and both students (devtools/exchange.py says how); what that cannot
show (separate OS users, a hub's permissions) is listed in grading/README.md.
About a minute on 2 cores.
"""
import shutil

import nbformat

from devtools import badsubmissions as bs
from grading.course import REPO
from devtools.exchange import COURSE_ID, instructor, make_exchange, student
from grading.grade import grade
from grading.gradebook import score
from grading.release import release

AID = "01_branch_prediction"


def work_on(path, answers):
    """Do the homework: fill the fetched notebook's solution cells from {grade_id: source}."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and gid in answers:
            cell.source = answers[gid]
    nbformat.write(nb, path)


def test_release_fetch_submit_collect_grade_feedback(tmp_path):
    root, exchange, homes = tmp_path / "course", make_exchange(tmp_path / "exchange"), tmp_path / "home"
    shutil.copytree(REPO / "solutions" / AID, root / "solutions" / AID)
    release([AID], root=root)
    instructor(root, exchange, "release_assignment", AID, "--force")
    assert (exchange / COURSE_ID / "outbound" / AID / f"{AID}.ipynb").is_file()

    source = nbformat.read(root / "solutions" / AID / f"{AID}.ipynb", as_version=4)
    right = {c.metadata.nbgrader.grade_id: c.source for c in source.cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    _, func, _, mistake = bs.wrong_answer(root, AID, 0)
    wrong = dict(right)
    wrong[next(g for g, src in right.items() if f"def {func}(" in src)] = mistake
    for name, answers in (("alice", right), ("bob", wrong)):
        home = homes / name
        home.mkdir(parents=True)
        run = student(home, name, exchange, "list", log_level="INFO")
        listed = run.stdout + run.stderr
        assert AID in listed, f"{name} must see the released assignment: {listed}"
        student(home, name, exchange, "fetch_assignment", AID)
        notebook = home / AID / f"{AID}.ipynb"
        assert notebook.read_bytes() == (root / "notebooks" / AID / f"{AID}.ipynb").read_bytes()
        work_on(notebook, answers)
        student(home, name, exchange, "submit", AID)

    instructor(root, exchange, "collect", AID)
    for name in ("alice", "bob"):
        assert (root / "submitted" / name / AID / f"{AID}.ipynb").is_file()
        assert (root / "submitted" / name / AID / "timestamp.txt").is_file()

    results = {r.student: r for r in grade(root, workers=2, quiet=True)}
    full = bs.full_marks(root, AID)
    lost = sum(bs.failing_tests(root, AID, func, mistake).values())
    assert score(root, AID, "alice") == full
    assert score(root, AID, "bob") == (full[0] - lost, full[1])
    assert all(r.status == "graded" and not r.flagged for r in results.values())
    csv = (root / "grades.csv").read_text()
    stamp = (root / "submitted" / "alice" / AID / "timestamp.txt").read_text().strip()
    assert stamp[:19].replace("T", " ") in csv.replace("T", " "), "the submission time must reach grades.csv"

    instructor(root, exchange, "release_feedback", AID)
    for name, want in (("alice", full[0]), ("bob", full[0] - lost)):
        student(homes / name, name, exchange, "fetch_feedback", AID)
        pages = list((homes / name / AID / "feedback").glob(f"*/{AID}.html"))
        assert len(pages) == 1, f"{name} must receive exactly one feedback page"
        assert f"{AID} (Score: {float(want)} / {float(full[1])})" in pages[0].read_text(), (
            f"{name}'s feedback must show the score the gradebook holds")
