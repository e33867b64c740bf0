"""End to end, in a temporary course folder: release, submit, autograde, feedback (the `autograded`
fixture of tests/conftest.py does these steps once per run; this test checks what they produced).

For each notebook: the instructor's own solutions score full marks, the blank student
copy scores 0, a submission with one catalogued wrong answer loses exactly the points
of the tests that wrong answer fails, and the feedback shows no hidden test.
"""
import html
import re

import nbformat
import pytest

from devtools.coursework import leaked_hidden_lines
from devtools.mutants import run_variant
from grading.cells import graded_points
from grading.course import assignments, source_notebook
from grading.gradebook import score

AIDS = assignments()
pytestmark = pytest.mark.filterwarnings("ignore:.*not in session.*")  # nbgrader's harmless SAWarning


@pytest.mark.parametrize("aid", [pytest.param(aid, marks=pytest.mark.xdist_group(f"catalog-{aid}")) for aid in AIDS])
def test_release_submit_grade_feedback(aid, autograded):
    # in its notebook's catalog group: run_variant below reuses the source that worker already executed
    course, (func, mistake, wrong_src) = autograded(aid)  # the three submissions, graded once per run
    source = nbformat.read(source_notebook(aid, course), as_version=4)
    points = graded_points(source)
    full = sum(points.values())
    failures = run_variant(aid, func, wrong_src)
    lost = sum(points[gid] for gid in {gid for gid, _ in failures})

    assert score(course, aid, "reference") == (full, full), "the instructor's solutions must score full marks"
    assert score(course, aid, "blank") == (0, full), "an untouched student copy must score 0"
    assert lost > 0
    assert score(course, aid, "onewrong") == (full - lost, full), (
        f"a wrong {func} ({mistake}) must lose exactly the {lost} points of the tests it fails")

    page = course / "feedback" / "onewrong" / aid / f"{aid}.html"
    assert page.exists(), "feedback HTML was not written"
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    for gid, error in failures:  # the message that teaches reaches the student
        first = error.split(": ", 1)[-1].splitlines()[0].strip()
        assert first in text, f"feedback for {gid} does not show its failure message {first!r}"
    leaked = leaked_hidden_lines(text, source)
    assert not leaked, f"the feedback shows hidden tests: {leaked}"
