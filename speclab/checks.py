"""Comparisons for graded tests, in plain Python.

Tests run in the student's kernel after the student's code, so a solution could
replace numpy's comparison functions (np.isclose = lambda *a, **k: True). Nothing
here calls numpy: values are turned into Python floats and compared with operators.

A failed check reads in the course's language: tokens as the letters the notebooks print
(check_tokens: expected 'e', got 'd'; never the ids 4 and 3), and, in JupyterLab, a traceback
that ends at the student's line, without this module's frames (show_failures_from_here).
"""
# Bound at import, before any student code runs: a later `builtins.float = ...` or
# `math.fsum = ...` in a solution cell changes nothing here.
import os as _os
import types as _types
from builtins import AssertionError, float, hasattr, int, isinstance, len, list, repr, tuple, zip
from math import fsum as _fsum

from .tokens import TOKENS as _TOKENS


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


def _letters(x):
    """x (a token id, or a sequence of them) as the notebooks print tokens: 'e', or 'efa'; None if x is not
    made of token ids."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    single = not isinstance(x, (list, tuple))
    ids = [x] if single else list(x)
    out = ""
    for t in ids:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(_TOKENS):
            return None
        out += _TOKENS[t]
    return repr(out)


def check_tokens(actual, expected, message):
    """check_equal for tokens (one id, or a sequence of ids), shown as letters: expected 'efa', got 'efb'.
    A value that is not made of token ids is shown as it is (expected 'e', got 7)."""
    if hasattr(actual, "tolist"):
        actual = actual.tolist()
    if isinstance(actual, tuple):
        actual = list(actual)
    if isinstance(expected, tuple):
        expected = list(expected)
    if not actual == expected:
        shown = [_letters(v) or repr(v) for v in (expected, actual)]
        raise AssertionError(f"{message}\n  expected {shown[0]}\n  got      {shown[1]}")


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


# ----------------------------------------------------------------------------- what a student sees

_HERE = _os.path.dirname(_os.path.abspath(__file__)) + _os.sep   # speclab/: the course's own helpers


def _student_frames(tb):
    """The traceback without the frames of speclab's own code (the check that raised, a helper between)."""
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_HERE):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(kept):
        out = _types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _show_failure(shell, etype, value, tb, tb_offset=None):
    """IPython's traceback of a failed check, ending at the student's (or the test's) line."""
    tb = _student_frames(tb)
    value.__traceback__ = tb
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def show_failures_from_here(shell=None):
    """In IPython (JupyterLab's kernel), show an AssertionError without speclab's frames: a student reads
    the line of the test that failed and its message, not the inside of check_close. Leaves a shell that
    already has a handler of its own alone; returns whether it installed one."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or getattr(shell, "custom_exceptions", ()) not in ((), (AssertionError,)):
        return False
    shell.set_custom_exc((AssertionError,), _show_failure)
    return True


show_failures_from_here()
