"""speclab.plumbing.pending: a block that needs an unsolved exercise prints one line naming it and stops there;
any other error still raises."""
import io
from contextlib import redirect_stdout

import pytest

from speclab.plumbing.pending import finished, learner_first, needs


def unsolved():
    raise NotImplementedError


def test_an_unsolved_exercise_prints_one_line_and_skips_the_rest():
    reached, out = [], io.StringIO()
    with redirect_stdout(out):
        with needs("Exercise C (drift)"):
            unsolved()
            reached.append("the figure")
    assert reached == [], "the drawing below the unsolved call must not run (no empty axes)"
    assert out.getvalue() == "Solve Exercise C (drift) first: this cell shows its results.\n"


def test_a_solved_block_runs_to_the_end_and_prints_nothing():
    reached, out = [], io.StringIO()
    with redirect_stdout(out):
        with needs("Exercise C (drift)"):
            reached.append("the figure")
    assert reached == ["the figure"] and out.getvalue() == ""


def test_any_other_error_is_raised():
    with pytest.raises(ZeroDivisionError):
        with needs("Exercise C (drift)"):
            1 / 0


def test_learner_first_takes_the_learners_answer_once_solved():
    def course(x):
        return ("course", x)
    assert learner_first(lambda x: ("learner", x), course)(3) == ("learner", 3)


def test_learner_first_falls_back_on_the_course_while_unsolved():
    def course(x, *, k=1):
        return ("course", x, k)
    assert learner_first(lambda x, k=1: unsolved(), course)(3, k=2) == ("course", 3, 2)


def test_learner_first_in_a_graded_kernel_ends_in_needs_line():
    # there the course's reference raises too (grading/kernels/hidden.py's stub)
    def hidden(x):
        raise NotImplementedError("the course's reference for f is not available while NB is graded")
    out = io.StringIO()
    with redirect_stdout(out):
        with needs("Exercise A (f)"):
            learner_first(lambda x: unsolved(), hidden)(1)
    assert out.getvalue() == "Solve Exercise A (f) first: this cell shows its results.\n"


def test_learner_first_does_not_hide_the_learners_other_errors():
    with pytest.raises(ZeroDivisionError):
        learner_first(lambda: 1 / 0, lambda: "course")()


def test_finished_stops_a_block_that_reads_results_an_earlier_cell_did_not_complete():
    finished({"a": 1, "b": 2}, ["a", "b"])   # complete: nothing raised
    out, reached = io.StringIO(), []
    with redirect_stdout(out):
        with needs("Exercise B (loop)"):
            finished({"a": 1}, ["a", "b"])
            reached.append("the table")
    assert reached == [] and out.getvalue().startswith("Solve Exercise B (loop) first")
