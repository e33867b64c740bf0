"""runtime_notes (grading/grade/notes.py) reads the executed notebook: what it must flag for a person to look at."""
import nbformat

from grading.grade.intake import Result
from grading.grade.notes import runtime_notes

PROTOCOL = ("the kernel sent 1,001 lines for no request of the grader's on its agent's socket; they were not read")


def executed(tmp_path, ename, evalue):
    cell = nbformat.v4.new_code_cell("check_equal(f(1), 2)", metadata={
        "nbgrader": {"grade": True, "solution": False, "grade_id": "test_f", "points": 2, "locked": True}})
    cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])]
    path = tmp_path / "autograded.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    return path


def test_a_judge_protocol_error_flags_the_submission_with_a_plain_reason(tmp_path):
    res = Result("s", "02_acceptance_rule")
    runtime_notes(res, executed(tmp_path, "ProtocolError", PROTOCOL), timeout=60)
    assert res.flagged, res.notes
    assert len(res.notes) == 1 and res.notes[0].startswith("cell test_f: the submission's code wrote to the grader's"), res.notes
    assert "1,001 lines" in res.notes[0] and "scores 0" in res.notes[0]


def test_a_failing_test_is_not_flagged(tmp_path):
    res = Result("s", "02_acceptance_rule")
    runtime_notes(res, executed(tmp_path, "AssertionError", "f(1) should be 2"), timeout=60)
    assert not res.flagged and not res.notes
