"""The source notebooks' globals, for the tests that probe what a notebook built (its widgets)."""
import pytest

from devtools.mutants import _executed


def _globals_of(aid, name):
    """Fixture `name`: the globals of aid's source notebook, run once in-process (devtools.mutants)."""
    return pytest.fixture(scope="module", name=name)(lambda: _executed(aid)[1])


nb01 = _globals_of("01_branch_prediction", "nb01")
nb02 = _globals_of("02_acceptance_rule", "nb02")
nb03 = _globals_of("03_residual", "nb03")
nb04 = _globals_of("04_tv_distance", "nb04")
