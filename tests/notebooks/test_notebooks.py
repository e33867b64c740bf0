"""Every notebook runs, the student copies are what nbgrader makes, and nothing leaks."""
import re

import nbformat
import pytest

from devtools.coursework import MARKERS, leaked_hidden_lines
from grading.cells import solution_cells
from grading.course import REPO, assignments, release_notebook, source_notebook
from grading.kernels.execute import errors

AIDS = assignments()


@pytest.mark.parametrize("aid", [pytest.param(a, marks=pytest.mark.xdist_group(f"catalog-{a}")) for a in AIDS])
def test_source_runs_top_to_bottom(aid, autograded):
    # The pipeline's "reference" submission is the student copy with the source's answers, graded by
    # nbgrader with the hidden tests put back: its run is the source's run, so it is not executed again.
    # Errors are kept as outputs; demand none: a cell tagged raises-exception must not hide a failing hidden test.
    course, _ = autograded(aid)
    nb = nbformat.read(course / "autograded" / "reference" / aid / f"{aid}.ipynb", as_version=4)
    assert not errors(nb), f"{aid} (source) raised while running all cells: {errors(nb)}"


# The student copy's own run (only NotImplementedError, and every cell that raises it tagged raises-exception so
# that Run All goes on) is checked where a learner meets it: tests/browser/test_browser_notebooks.py runs the copy
# in JupyterLab and fails on any other error and on a Run All that stops early. A headless run here checked the
# same thing in a kernel of its own, a fourth execution of every student copy per run (60 s for 10 under load).


def test_student_copy_has_no_solutions_or_hidden_tests(aid):
    source = nbformat.read(source_notebook(aid), as_version=4)
    leaked = leaked_hidden_lines(release_notebook(aid).read_text(), source, markers=MARKERS)
    assert not leaked, f"{aid}: the student copy shows solutions or hidden tests: {leaked}"


def test_student_copy_is_what_nbgrader_generates_now(aid, released):
    fresh = release_notebook(aid, released(aid)).read_bytes()
    assert fresh == release_notebook(aid).read_bytes(), (
        f"notebooks/{aid} is stale: run `make release` and commit the result")


@pytest.mark.parametrize("kind", ["solutions", "notebooks"])
def test_committed_notebooks_carry_no_outputs(kind):
    for path in sorted((REPO / kind).glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path} is stored with outputs"


def test_source_follows_the_course_anatomy(aid):
    nb = nbformat.read(source_notebook(aid), as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "starts with a title"
    assert re.search(r"^## .*Break it", text, re.M), "has a break-it section"
    assert re.search(r"^## Summary", text, re.M), "ends with a summary"
    assert "widgets." in code or "ipywidgets" in code, "has a widget"
    solutions = solution_cells(nb)
    assert 3 <= len(solutions) <= 6, f"{aid} has {len(solutions)} graded parts; the spec asks for 3 to 6"
    for c in nb.cells:
        if c.cell_type == "code":
            assert not re.search(r"^\s*[%!]", c.source, re.M), "no magics: cells must run as plain Python"
    numbers = [int(n) for n in re.findall(r"^## (\d+)\.", text, re.M)]
    assert numbers == list(range(1, len(numbers) + 1)), f"{aid}: its numbered sections run {numbers}, not 1, 2, 3, ..."
