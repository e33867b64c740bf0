"""speclab.plumbing.pending: a block that needs an unsolved exercise prints one line naming it and stops there;
any other error still raises."""
import io
from contextlib import redirect_stdout

import pytest

from speclab.plumbing.pending import needs


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
