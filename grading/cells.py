"""nbgrader's cell metadata, read one way everywhere (grading, the integrity scan, the tests and tools).

A cell's `metadata.nbgrader` says what nbgrader does with it: `solution` (the student writes it),
`grade` (a graded test, worth `points`), `locked`, and its `grade_id`. Cells read from JSON by
hand (plain dicts) and nbformat's NotebookNode are both accepted.

The course uses two of nbgrader's kinds of graded cell: the solution cell (nbgrader's "autograded
answer": `solution` and not `grade`, a code cell the student writes, one exercise each) and the
test cell (`grade` and not `solution`: the visible and hidden tests). nbgrader's third kind, a
manually graded answer (`solution` and `grade`), is not used (tests/grading/test_integrity.py checks it):
is_solution, is_test and is_graded are the only readers of those two flags, so "solution cell" and
"test cell" mean one thing in grading/, devtools/ and the tests.
"""


def meta(cell):
    """The cell's nbgrader metadata ({} for a cell nbgrader does not know)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def has_meta(cell):
    """True if the cell carries nbgrader metadata at all (even an empty one)."""
    return "nbgrader" in cell.get("metadata", {})


def grade_id(cell):
    return meta(cell).get("grade_id")


def points(cell):
    return meta(cell).get("points", 0)


def is_solution(cell):
    """A solution cell: a code cell the student writes, graded by the tests (solution and not grade)."""
    m = meta(cell)
    return cell.get("cell_type") == "code" and bool(m.get("solution")) and not m.get("grade")


def is_graded(cell):
    """A graded cell (a test, worth points)."""
    return bool(meta(cell).get("grade"))


def is_test(cell):
    """A test cell (grade and not solution): the visible and hidden tests, scored by their outputs."""
    m = meta(cell)
    return bool(m.get("grade")) and not m.get("solution")


def nbgrader_type(cell):
    """The flags nbgrader reads a cell's type from, as written: (solution, grade, locked, task). Two cells of
    the same type compare equal; a submission whose cell differs from the release's was retyped."""
    m = meta(cell)
    return tuple(m.get(k) for k in ("solution", "grade", "locked", "task"))


def is_locked(cell):
    """A cell the student may not change (nbgrader restores it before grading)."""
    return bool(meta(cell).get("locked"))


def solution_cells(nb):
    """{grade_id: cell} of the notebook's solution cells, in notebook order."""
    return {grade_id(c): c for c in nb.cells if is_solution(c)}


def graded_cells(nb):
    """The notebook's graded code cells (its tests), in notebook order."""
    return [c for c in nb.cells if c.get("cell_type") == "code" and is_graded(c)]


def graded_points(nb):
    """{grade_id: points} of the notebook's graded cells."""
    return {grade_id(c): points(c) for c in nb.cells if is_graded(c)}
