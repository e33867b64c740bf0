"""speclab.models.tables: the stored 6x6 target and draft tables, their recipe, blend and temper."""
import subprocess
import sys

import numpy as np
import pytest

from grading.course import REPO
from speclab import blend, draft, target, temper
from speclab.models import tables


def test_stored_tables_are_row_stochastic():
    for t in ("target", "other2", "other3"):
        assert tables.is_model(tables.table(t), V=6)


def test_stored_tables_match_their_recipe():
    run = subprocess.run([sys.executable, str(REPO / "data" / "make_tables.py"), "--check"], capture_output=True)
    assert run.returncode == 0, "data/make_tables.py no longer reproduces data/tables.json with this NumPy"


def test_target_and_good_draft_row_a_are_the_seed_pages():
    p, q = target()[0], draft("good")[0]
    assert np.round(p, 4).tolist() == [0.0943, 0.31, 0.0908, 0.0015, 0.3821, 0.1213]
    assert np.round(q, 4).tolist() == [0.0823, 0.2638, 0.0777, 0.0013, 0.4479, 0.127]


def test_tables_are_copies():
    P = target()
    P[0, 0] = 99
    assert target()[0, 0] != 99


def test_blend_and_temper():
    P, other = target(), tables.table("other2")
    assert np.allclose(blend(P, other, 1.0), P) and np.allclose(blend(P, other, 0.0), other)
    assert np.allclose(temper(P, 1.0), P)
    assert tables.is_model(temper(P, 0.5)) and tables.is_model(temper(P, 2.0))
    flat = temper(P, 1e6)
    assert np.allclose(flat, 1 / 6, atol=1e-4), "a huge temperature flattens every row"
    assert (temper(P, 0.3).max(axis=1) > P.max(axis=1)).all(), "a low temperature sharpens every row"
    with pytest.raises(ValueError):
        blend(P, other, 1.5)
    with pytest.raises(ValueError):
        temper(P, 0)
    with pytest.raises(KeyError):
        draft("excellent")
