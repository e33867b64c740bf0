"""What a test cell scores from its outputs (test_score), used by StrictSaveAutoGrades in place of nbgrader's
determine_grade."""
from nbgrader.preprocessors import SaveAutoGrades

from ..cells import grade_id, is_test, points


def test_score(cell):
    """What a graded test cell scores: 0 if it has any error output, whatever came before it; else its points.

    nbgrader's determine_grade reads the outputs in order and stops at the first execute_result, taking a
    number in it as partial credit and anything else as full credit: a submission whose code calls
    sys.displayhook('ok') before failing got full marks. The course's tests never show a result, so here
    only errors count (and a result or display in a test cell is flagged: runtime_notes)."""
    outputs = cell.get("outputs", [])
    if any(o.get("output_type") == "error" or (o.get("output_type") == "stream" and o.get("name") == "stderr")
           for o in outputs):
        return 0.0
    return float(points(cell))


class StrictSaveAutoGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, with a test cell's score from test_score (solution cells as nbgrader does)."""

    def _add_score(self, cell, resources):
        if cell.cell_type != "code" or not is_test(cell):  # nbgrader calls it for graded cells only
            return super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(grade_id(cell), self.notebook_id, self.assignment_id, self.student_id)
        grade.auto_score = test_score(cell)
        grade.needs_manual_grade = grade.manual_score is not None
        self.gradebook.db.commit()


