"""speclab.plumbing.isolate: an exercise graded alone borrows an earlier exercise's reference and gives it back."""
import pytest

from speclab.plumbing.isolate import alone


def test_alone_binds_and_restores_even_when_a_check_fails():
    ns = {"residual": "mine"}
    with pytest.raises(AssertionError):
        with alone(ns, residual="reference", extra=1):
            assert ns["residual"] == "reference" and ns["extra"] == 1
            raise AssertionError("a failing check")
    assert ns == {"residual": "mine"}, "alone must restore the student's names and remove the ones it added"
