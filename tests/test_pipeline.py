"""End to end, in a temporary course folder: release, submit, autograde, feedback.

For each notebook: the instructor's own solutions score full marks, the blank student
copy scores 0, a submission with one catalogued wrong answer loses exactly the points
of the tests that wrong answer fails, and the feedback shows no hidden test.
"""
import html
import re
import shutil

import nbformat
import pytest

from devtools import catalog
from grading.course import REPO, nbgrader
from grading.gradebook import score
from devtools.mutants import graded_cells, run_variant
from grading.release import release


def solution_cells(nb):
    return {c.metadata.nbgrader.grade_id: c for c in nb.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}


def submit(root, aid, student, nb):
    folder = root / "submitted" / student / aid
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{aid}.ipynb")


def defines(cell, func):
    return re.search(rf"^def {re.escape(func)}\b", cell.source, re.M) is not None


@pytest.fixture
def course(aid, tmp_path):
    shutil.copytree(REPO / "solutions" / aid, tmp_path / "solutions" / aid)
    release([aid], root=tmp_path)
    return tmp_path


def test_release_submit_grade_feedback(aid, course):
    source = nbformat.read(course / "solutions" / aid / f"{aid}.ipynb", as_version=4)
    student = nbformat.read(course / "notebooks" / aid / f"{aid}.ipynb", as_version=4)
    full = sum(c.metadata.nbgrader.points for c in graded_cells(source))

    # the reference: the student copy with every solution cell filled in from the source
    solved = solution_cells(source)
    reference = nbformat.from_dict(student)
    for cell in reference.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solved[cell.metadata.nbgrader.grade_id].source
    submit(course, aid, "reference", reference)
    submit(course, aid, "blank", student)

    # one wrong exercise: the first catalogued mistake for the first catalogued function
    func, kinds = next(iter(catalog.load()[aid].items()))
    mistake, value = next(iter(kinds["wrong"].items()))
    wrong_src, _ = catalog.split(value)
    wrong = nbformat.from_dict(reference)
    target = [c for c in wrong.cells if c.metadata.get("nbgrader", {}).get("solution") and defines(c, func)]
    assert len(target) == 1, f"{aid}: exactly one solution cell must define {func}"
    target[0].source = wrong_src
    submit(course, aid, "onewrong", wrong)
    failures = run_variant(aid, func, wrong_src)
    failing = {gid for gid, _ in failures}
    lost = sum(c.metadata.nbgrader.points for c in graded_cells(source)
               if c.metadata.nbgrader.grade_id in failing)

    nbgrader("autograde", aid, "--force", "--log-level=ERROR", root=course, check=False)
    assert score(course, aid, "reference") == (full, full), "the instructor's solutions must score full marks"
    assert score(course, aid, "blank") == (0, full), "an untouched student copy must score 0"
    assert lost > 0
    assert score(course, aid, "onewrong") == (full - lost, full), (
        f"a wrong {func} ({mistake}) must lose exactly the {lost} points of the tests it fails")

    nbgrader("generate_feedback", aid, "--force", "--log-level=ERROR", root=course)
    page = course / "feedback" / "onewrong" / aid / f"{aid}.html"
    assert page.exists(), "feedback HTML was not written"
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    hidden = re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS",
                        "\n".join(c.source for c in source.cells), re.S)
    assert "BEGIN HIDDEN TESTS" not in text
    for gid, error in failures:  # the message that teaches reaches the student
        first = error.split(": ", 1)[-1].splitlines()[0].strip()
        assert first in text, f"feedback for {gid} does not show its failure message {first!r}"
    for block in hidden:
        for line in block.splitlines():
            if len(line.strip()) > 30:
                assert line.strip() not in text, f"feedback shows a hidden test line: {line.strip()}"
