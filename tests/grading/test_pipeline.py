"""End to end, in a temporary course folder: release, submit, autograde, feedback.

For each notebook: the instructor's own solutions score full marks, the blank student
copy scores 0, a submission with one catalogued wrong answer loses exactly the points
of the tests that wrong answer fails, and the feedback shows no hidden test.
"""
import html
import re

import nbformat
import pytest

from devtools import catalog
from devtools.coursework import answers, fill, leaked_hidden_lines
from devtools.mutants import run_variant
from grading.cells import graded_points, is_solution
from grading.course import assignments, nbgrader_api, release_notebook, source_notebook
from grading.gradebook import score

AIDS = assignments()
pytestmark = pytest.mark.filterwarnings("ignore:.*not in session.*")  # nbgrader's harmless SAWarning


def submit(root, aid, student, nb):
    folder = root / "submitted" / student / aid
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{aid}.ipynb")


def defines(cell, func):
    return re.search(rf"^def {re.escape(func)}\b", cell.source, re.M) is not None


@pytest.fixture
def course(aid, course_copy):
    return course_copy(aid)


def run(step, *args):
    """One nbgrader command through NbGraderAPI (in this process, as `make grade` runs nbgrader)."""
    result = step(*args)
    assert result.get("success"), f"nbgrader {step.__name__} {args} failed:\n{result.get('error') or result.get('log')}"


@pytest.mark.parametrize("aid", [pytest.param(aid, marks=pytest.mark.xdist_group(f"catalog-{aid}")) for aid in AIDS])
def test_release_submit_grade_feedback(aid, course):
    # in its notebook's catalog group: run_variant below reuses the source that worker already executed
    source = nbformat.read(source_notebook(aid, course), as_version=4)
    student = nbformat.read(release_notebook(aid, course), as_version=4)
    points = graded_points(source)
    full = sum(points.values())

    # the reference: the student copy with every solution cell filled in from the source
    reference = fill(nbformat.from_dict(student), answers(source))
    submit(course, aid, "reference", reference)
    submit(course, aid, "blank", student)

    # one wrong exercise: the first catalogued mistake for the first catalogued function
    func, kinds = next(iter(catalog.load()[aid].items()))
    mistake, value = next(iter(kinds["wrong"].items()))
    wrong_src, _ = catalog.split(value)
    wrong = nbformat.from_dict(reference)
    target = [c for c in wrong.cells if is_solution(c) and defines(c, func)]
    assert len(target) == 1, f"{aid}: exactly one solution cell must define {func}"
    target[0].source = wrong_src
    submit(course, aid, "onewrong", wrong)
    failures = run_variant(aid, func, wrong_src)
    lost = sum(points[gid] for gid in {gid for gid, _ in failures})

    api = nbgrader_api(course)
    for name in ("reference", "blank", "onewrong"):
        run(api.autograde, aid, name)
    assert score(course, aid, "reference") == (full, full), "the instructor's solutions must score full marks"
    assert score(course, aid, "blank") == (0, full), "an untouched student copy must score 0"
    assert lost > 0
    assert score(course, aid, "onewrong") == (full - lost, full), (
        f"a wrong {func} ({mistake}) must lose exactly the {lost} points of the tests it fails")

    run(api.generate_feedback, aid, "onewrong")
    page = course / "feedback" / "onewrong" / aid / f"{aid}.html"
    assert page.exists(), "feedback HTML was not written"
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    for gid, error in failures:  # the message that teaches reaches the student
        first = error.split(": ", 1)[-1].splitlines()[0].strip()
        assert first in text, f"feedback for {gid} does not show its failure message {first!r}"
    leaked = leaked_hidden_lines(text, source)
    assert not leaked, f"the feedback shows hidden tests: {leaked}"
