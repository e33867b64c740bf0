"""Comparisons for graded tests, in plain Python.

Tests run in the student's kernel after the student's code, so a solution could
replace numpy's comparison functions (np.isclose = lambda *a, **k: True). Nothing
here calls numpy: values are turned into Python floats and compared with operators.

A failed check reads in the course's language: tokens as the letters the notebooks print
(check_tokens: expected 'e', got 'd'; never the ids 4 and 3; two sequences with the first position
where they part), and, in JupyterLab, a traceback that ends at the student's line, without this
module's frames (show_failures_from_here).
"""
# Bound at import, before any student code runs: a later `builtins.float = ...` or
# `math.fsum = ...` in a solution cell changes nothing here.
import os as _os
import sys as _sys
import types as _types
from builtins import (AssertionError, enumerate, float, hasattr, int, isinstance, len, list, max, min, repr, str,
                      tuple, type, zip)
from math import fsum as _fsum

from ..models.tokens import TOKENS as _TOKENS


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
        if hasattr(t, "tolist"):  # an id from numpy, inside a list
            t = t.tolist()
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(_TOKENS):
            return None
        out += _TOKENS[t]
    return repr(out)


def _as_shown(x):
    """A value as a failed check shows it: letters for tokens, else as it is (numpy's ids as plain ints)."""
    if isinstance(x, list):
        x = [t.tolist() if hasattr(t, "tolist") else t for t in x]
    return _letters(x) or repr(x)


_WINDOW = 12  # tokens shown each side of the first difference in a long sequence


def _first_difference(actual, expected):
    """The first position where two sequences part (the shorter one's length when it begins the other)."""
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not a == e:
            return i
    return min(len(actual), len(expected))


def _around(seq, lo, hi):
    """seq[lo:hi] as shown, with ... where the sequence goes on."""
    part = _as_shown(seq[lo:hi])
    return ("..." if lo > 0 else "") + part + ("..." if hi < len(seq) else "")


def _token_at(seq, i, as_letters):
    """The token at position i, as a letter (or as it is, when the sequences are not all letters)."""
    if i >= len(seq):
        return f"nothing (it ends after {len(seq)} token{'' if len(seq) == 1 else 's'})"
    t = seq[i].tolist() if hasattr(seq[i], "tolist") else seq[i]
    return _as_shown(t) if as_letters else repr(t)


def _sequence_lines(actual, expected):
    """The lines that show where two token sequences part: the position, then both (around it when long)."""
    i = _first_difference(actual, expected)
    as_letters = _letters(actual) is not None and _letters(expected) is not None
    what = [_token_at(s, i, as_letters) for s in (expected, actual)]
    lines = [f"  first difference at position {i} (counting from 0): expected {what[0]}, got {what[1]}"]
    lo, hi = 0, max(len(actual), len(expected))
    if hi > 2 * _WINDOW:
        lo, hi = max(0, i - _WINDOW), i + _WINDOW
        lines.append(f"  around it, positions {lo} to {hi - 1} ({len(expected)} tokens expected, {len(actual)} got):")
    shown = [_around(expected, lo, hi), _around(actual, lo, hi)]
    lines += [f"  expected {shown[0]}", f"  got      {shown[1]}"]
    if as_letters:  # one character per token: point at the first difference
        lines.append(" " * (len("  got      ") + shown[1].index("'") + 1 + i - lo) + "^")
    return lines


def check_tokens(actual, expected, message):
    """check_equal for tokens (one id, or a sequence of ids), shown as letters: expected 'efa', got 'efb'.
    A sequence may be expected as its letters ("efa"). Two sequences that differ are shown with the
    first position where they part, and only around it when they are long (no dump of 48 tokens). A
    value that is not made of token ids is shown as it is (expected 'e', got 7)."""
    if hasattr(actual, "tolist"):
        actual = actual.tolist()
    if isinstance(actual, tuple):
        actual = list(actual)
    if isinstance(expected, str):
        expected = [_TOKENS.index(c) for c in expected]  # the letters as the notebook prints them
    if isinstance(expected, tuple):
        expected = list(expected)
    if actual == expected:
        return
    if isinstance(actual, list) and isinstance(expected, list):
        lines = _sequence_lines(actual, expected)
    else:
        shown = [_as_shown(expected), _as_shown(actual)]
        if shown[0] == shown[1]:  # e.g. the letters 'efa' as a string, where token ids were expected
            shown[1] += f" (a {type(actual).__name__}, not token ids)"
        lines = [f"  expected {shown[0]}", f"  got      {shown[1]}"]
    raise AssertionError(message + "\n" + "\n".join(lines))


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

_HERE = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))) + _os.sep   # speclab/: the course's own helpers


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
        ipython = _sys.modules.get("IPython")  # not loaded: no shell runs here (the judge, a script), none to find
        find = getattr(ipython, "get_ipython", None)
        shell = find() if find is not None else None
    if shell is None or getattr(shell, "custom_exceptions", ()) not in ((), (AssertionError,)):
        return False
    shell.set_custom_exc((AssertionError,), _show_failure)
    return True


show_failures_from_here()
