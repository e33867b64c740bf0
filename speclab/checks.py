"""Comparisons for graded tests, in plain Python.

Tests run in the student's kernel after the student's code, so a solution could
replace numpy's comparison functions (np.isclose = lambda *a, **k: True). Nothing
here calls numpy: values are turned into Python floats and compared with operators.
"""
# Bound at import, before any student code runs: a later `builtins.float = ...` or
# `math.fsum = ...` in a solution cell changes nothing here.
from builtins import AssertionError, float, hasattr, isinstance, len, list, repr, tuple, zip
from math import fsum as _fsum


def floats(x):
    """Any number, nested list or array as a flat list of Python floats."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        out = []
        for item in x:
            out.extend(floats(item))
        return out
    return [float(x)]


def shape(x):
    """The nested-list shape of x, as a tuple (() for a number)."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return (len(x),) + (shape(x[0]) if len(x) else ())
    return ()


def close(actual, expected, tol=1e-9):
    """True if every entry of actual is within tol of expected (same number of entries, no NaN)."""
    a, e = floats(actual), floats(expected)
    if len(a) != len(e):
        return False
    for x, y in zip(a, e):
        if not (x - y <= tol and y - x <= tol):  # False for NaN, unlike abs(x - y) > tol
            return False
    return True


def check_close(actual, expected, message, tol=1e-9):
    """Raise AssertionError(message, with the values) unless actual is close to expected."""
    if not close(actual, expected, tol):
        raise AssertionError(f"{message}\n  expected {_show(expected)}\n  got      {_show(actual)}")


def check_equal(actual, expected, message):
    """Raise AssertionError(message) unless actual == expected (for tokens, counts, lists)."""
    if hasattr(actual, "tolist"):
        actual = actual.tolist()
    if isinstance(actual, tuple) and isinstance(expected, list):
        actual = list(actual)
    if not actual == expected:
        raise AssertionError(f"{message}\n  expected {expected!r}\n  got      {actual!r}")


def _show(x):
    try:
        vals = floats(x)
    except (TypeError, ValueError):
        return repr(x)
    if len(vals) == 1:
        return f"{vals[0]:.6g}"
    return "[" + " ".join(f"{v:.4f}" for v in vals[:12]) + (" ..." if len(vals) > 12 else "") + "]"


def fsum(x):
    """Exact-as-possible sum of the entries of x."""
    return _fsum(floats(x))
