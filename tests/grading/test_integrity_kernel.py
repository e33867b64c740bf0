"""Notebooks 02 and 03: patching numpy's comparisons earns nothing, in a real kernel.

The graded tests compare with speclab.plumbing.checks (plain Python), so a solution cell that makes
np.isclose / np.allclose / np.array_equal always say True cannot turn a wrong answer right,
and does not turn a right answer wrong. These run the whole solved notebook in a fresh kernel,
because the attack patches the numpy module for the process that runs it.
"""
import pytest

from grading.course import source_notebook
from devtools.mutants import failing_in_kernel, with_variant

ATTACK = "import numpy as np\nnp.isclose = np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"

CASES = {  # aid, function, its graded test, a wrong version, a right version
    "02 acceptance_rate": ("02_acceptance_rule", "acceptance_rate", "test_acceptance_rate",
                           "def acceptance_rate(p, q):\n    return float(np.maximum(p, q).sum())\n",
                           "def acceptance_rate(p, q):\n    return float(np.minimum(p, q).sum())\n"),
    "03 residual": ("03_residual", "residual", "test_residual",
                    "def residual(p, q):\n    return np.maximum(0, p - q)\n",
                    "def residual(p, q):\n    r = np.maximum(0, p - q)\n    return r / r.sum() if r.sum() > 0 else p\n"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_patched_numpy_does_not_rescue_a_wrong_answer(case):
    aid, func, test, wrong, _ = CASES[case]
    failing = failing_in_kernel(with_variant(aid, func, ATTACK + wrong), source_notebook(aid).parent)
    assert test in failing, f"{aid}: a wrong {func} earned the marks of {test} after patching numpy"


@pytest.mark.parametrize("case", sorted(CASES))
def test_patched_numpy_does_not_fail_a_right_answer(case):
    aid, func, _, _, right = CASES[case]
    failing = failing_in_kernel(with_variant(aid, func, ATTACK + right), source_notebook(aid).parent)
    assert not failing, f"{aid}: a right {func} failed {sorted(failing)} once numpy was patched"
