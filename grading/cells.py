"""nbgrader's cell metadata, read one way everywhere (grading, the integrity scan, the tests and tools).

A cell's `metadata.nbgrader` says what nbgrader does with it: `solution` (the student writes it),
`grade` (a graded test, worth `points`), `locked`, and its `grade_id`. Cells read from JSON by
hand (plain dicts) and nbformat's NotebookNode are both accepted.
"""


def meta(cell):
    """The cell's nbgrader metadata ({} for a cell nbgrader does not know)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell):
    return meta(cell).get("grade_id")


def points(cell):
    return meta(cell).get("points", 0)


def is_solution(cell):
    """A code cell the student writes (a graded solution cell)."""
    return cell.get("cell_type") == "code" and bool(meta(cell).get("solution"))


def is_graded(cell):
    """A graded cell (a test, worth points)."""
    return bool(meta(cell).get("grade"))


def solution_cells(nb):
    """{grade_id: cell} of the notebook's solution code cells, in notebook order."""
    return {grade_id(c): c for c in nb.cells if is_solution(c)}


def graded_cells(nb):
    """The notebook's graded code cells (its tests), in notebook order."""
    return [c for c in nb.cells if c.get("cell_type") == "code" and is_graded(c)]


def graded_points(nb):
    """{grade_id: points} of the notebook's graded cells."""
    return {grade_id(c): points(c) for c in nb.cells if is_graded(c)}
