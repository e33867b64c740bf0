"""speclab.checks: the graded tests compare in plain Python, whatever a solution does to NumPy."""
import numpy as np
import pytest

from speclab import checks


def test_checks_compare_in_plain_python():
    assert checks.close(np.array([0.1, 0.2]), [0.1, 0.2 + 1e-12])
    assert not checks.close([0.1, 0.2], [0.1])
    assert not checks.close([float("nan")], [0.0]), "NaN never passes"
    assert checks.shape(np.zeros((6, 6))) == (6, 6)
    with pytest.raises(AssertionError, match="the residual"):
        checks.check_close([1, 0], [0.5, 0.5], "the residual")
    checks.check_equal((1, 2), [1, 2], "tuples and lists of tokens compare equal")
    with pytest.raises(AssertionError):
        checks.check_equal(np.array([1, 2]), [1, 3], "tokens")


def test_checks_ignore_a_patched_numpy(monkeypatch):
    monkeypatch.setattr(np, "isclose", lambda *a, **k: True)
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    assert not checks.close([1.0], [2.0])
