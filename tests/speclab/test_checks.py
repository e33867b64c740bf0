"""speclab.plumbing.checks: the graded tests compare in plain Python, whatever a solution does to NumPy."""
import sys
import types

import numpy as np
import pytest

from speclab.plumbing import checks


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


def test_tokens_are_shown_as_the_letters_the_notebooks_print():
    with pytest.raises(AssertionError) as failed:
        checks.check_tokens([3], [4], "the first token is the argmax")
    assert "expected 'e'\n  got      'd'" in str(failed.value)
    with pytest.raises(AssertionError) as failed:
        checks.check_tokens(np.array([4, 5, 1]), (4, 5, 0), "greedy decoding")
    assert "expected 'efa'\n  got      'efb'" in str(failed.value)
    with pytest.raises(AssertionError) as failed:
        checks.check_tokens(7, 4, "not a token")  # what is not a token id is shown as it is
    assert "expected 'e'\n  got      7" in str(failed.value)
    checks.check_tokens(np.int64(2), 2, "an id from numpy is the same token")
    checks.check_tokens((0, 1), [0, 1], "a tuple of tokens is the same sequence")
    checks.check_tokens(np.array([4, 5, 0]), "efa", "a sequence may be expected as its letters")


def _failure(actual, expected):
    with pytest.raises(AssertionError) as failed:
        checks.check_tokens(actual, expected, "the message")
    return str(failed.value)


def test_a_wrong_sequence_fails_and_says_where_it_parts():
    text = _failure([4, 5, 0, 4, 5, 1], "efaefa")
    assert "first difference at position 5 (counting from 0): expected 'a', got 'b'" in text
    assert text.endswith("  got      'efaefb'\n" + " " * 17 + "^"), text  # the caret under the 'b'
    assert "got nothing (it ends after 4 tokens)" in _failure([4, 5, 0, 4], "efaefa")
    assert "expected nothing (it ends after 6 tokens), got 'e'" in _failure([4, 5, 0, 4, 5, 0, 4], "efaefa")
    # a long sequence: the window around the first difference, not all 48 tokens
    text = _failure([4, 5, 0] * 16, [4, 5, 0] * 8 + [4, 5, 1] + [4, 5, 0] * 7)
    assert "position 26" in text and "positions 14 to 37 (48 tokens expected, 48 got)" in text
    assert "expected ...'aefaefaefaefbefaefaefaef'..." in text and "efaefaefaefaefaefaefaefaefaefaefa" not in text
    # ids beyond the six letters (a bigger vocabulary): numbers throughout, never letters for some of them
    text = _failure(list(np.array([1, 7, 3])), [1, 7, 2])
    assert "expected 2, got 3" in text and "got      [1, 7, 3]" in text and "'" not in text
    # the same letters as a string, where ids were expected, is not passed off as equal
    assert "got      'efa' (a str, not token ids)" in _failure("efa", [4, 5, 0])
    for wrong in ([4, 5], [4, 5, 0, 0], [0, 5, 4], [4.5, 5, 0], None, 4):
        with pytest.raises(AssertionError):
            checks.check_tokens(wrong, [4, 5, 0], "every wrong answer fails")


def _run_cells(sources, extra_arguments=()):
    """Execute code cells in a fresh kernel (IPython's default traceback mode unless told); the error outputs."""
    import nbformat

    from grading.kernels.execute import notebook_client

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    notebook_client(nb, ".", timeout=120, allow_errors=True, extra_arguments=list(extra_arguments)).execute()
    return [o for c in nb.cells for o in c.outputs if o.output_type == "error"]


@pytest.mark.slow  # a kernel each
@pytest.mark.parametrize("mode", ["Context", "Minimal"])
def test_a_failed_check_shows_the_students_line_not_the_checks_frames(mode):
    """In JupyterLab (IPython's default mode, Context) and in Validate and the grader (Minimal)."""
    import re

    shown = _run_cells(["from speclab.plumbing.checks import check_close\n",
                        "x = 1.0\ncheck_close(x, 2.0, 'the residual must sum to 1')\n"],
                       [f"--InteractiveShell.xmode={mode}"])
    assert len(shown) == 1 and shown[0].ename == "AssertionError", shown
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(shown[0].traceback))
    assert "the residual must sum to 1" in text and "expected 2" in text
    assert "checks.py" not in text and "raise AssertionError" not in text, text
    if mode == "Context":
        assert "check_close(x, 2.0, 'the residual must sum to 1')" in text, text  # the line that failed


@pytest.mark.slow
def test_other_errors_keep_their_whole_traceback():
    shown = _run_cells(["from speclab.plumbing.checks import check_close\n", "check_close('a', 1.0, 'message')\n"])
    text = "\n".join(shown[0].traceback)
    assert shown[0].ename == "ValueError" and "checks.py" in text  # a bug's traceback says where it is


def test_a_shell_shows_failures_from_the_students_line_and_a_plain_process_needs_no_ipython(monkeypatch):
    class Shell:
        custom_exceptions = ()

        def set_custom_exc(self, kinds, handler):
            self.custom_exceptions = kinds

    shell = Shell()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert checks.show_failures_from_here() and shell.custom_exceptions == (AssertionError,)
    monkeypatch.delitem(sys.modules, "IPython")
    assert not checks.show_failures_from_here()
    assert "IPython" not in sys.modules, "a process without a shell (the judge) loads no IPython to look for one"
