"""speclab.decoding.sweeps reproduces the NumPy walk-through's tables, and its fast loop is the plain loop."""
import numpy as np
import pytest

from speclab.decoding import sweeps
from speclab.models.tables import blend, draft, table, target, temper


@pytest.mark.parametrize("kind,k,seed", [("middling", 1, 30), ("middling", 4, 7), ("poor", 16, 41),
                                         ("good", 3, 0)])
def test_fast_loop_is_the_plain_loop(kind, k, seed):
    P, Q = target(), draft(kind)
    slow = sweeps.run_rounds(P, Q, k, 1500, np.random.default_rng(seed))
    fast = sweeps.run_rounds_fast(P, Q, k, 1500, np.random.default_rng(seed))
    assert slow == fast


def test_fast_loop_on_temperature_and_junk_drafts():
    P = target()
    for Q in (temper(P, 2.0), temper(P, 0.5), blend(P, table("other2"), 0.0), P):
        for ctx in (0, 3):
            assert (sweeps.run_rounds(P, Q, 4, 800, np.random.default_rng(1), ctx)
                    == sweeps.run_rounds_fast(P, Q, 4, 800, np.random.default_rng(1), ctx))


def test_kept_drafts():
    assert sweeps.kept_drafts([3], 4) == 0
    assert sweeps.kept_drafts([1, 2, 3], 4) == 2
    assert sweeps.kept_drafts([1, 2, 3, 4, 5], 4) == 4


def fmt(rows, *keys):
    return [tuple(round(r[key], 3 if key == "speedup" else 4) for key in keys) for r in rows]


def test_quality_and_temperature_tables():
    assert fmt(sweeps.quality_sweep(), "kept", "tokens", "speedup") == [
        (1.0, 5.0, 3.571), (0.9204, 4.6814, 3.344), (0.7769, 4.1076, 2.934),
        (0.4964, 2.9856, 2.133), (0.2698, 2.0792, 1.485), (0.1316, 1.5265, 1.090)]
    assert fmt(sweeps.temperature_sweep(), "kept", "tokens", "speedup") == [
        (1.0, 5.0, 3.571), (0.8625, 4.4501, 3.179), (0.6658, 3.6631, 2.617), (0.6743, 3.6970, 2.641)]


def test_k_sweep_table():
    rows = sweeps.k_sweep()
    assert [r["k"] for r in rows] == list(sweeps.KS)
    assert fmt(rows, "kept", "tokens", "speedup") == [
        (0.7078, 1.7078, 1.553), (0.5997, 2.1995, 1.833), (0.5194, 2.5583, 1.968),
        (0.4494, 2.7974, 1.998), (0.4002, 3.0009, 2.001), (0.3490, 3.0937, 1.934),
        (0.2829, 3.2634, 1.813), (0.1987, 3.3845, 1.538), (0.1486, 3.3774, 1.299)]
    assert max(rows, key=lambda r: r["speedup"])["k"] == 5


def test_break_even_table_and_poor_draft():
    tokens, c_star, rows = sweeps.break_even_table()
    assert (round(tokens, 4), round(c_star, 4)) == (2.8064, 0.4516)
    assert [(round(r["c"], 4), round(r["cost"], 4), round(r["speedup"], 3)) for r in rows] == [
        (0.01, 1.04, 2.698), (0.05, 1.2, 2.339), (0.1, 1.4, 2.005), (0.4516, 2.8064, 1.0),
        (0.6, 3.4, 0.825), (1.0, 5.0, 0.561)]
    tokens, s = sweeps.poor_draft()
    assert (round(tokens, 4), round(s, 3)) == (1.5523, 0.776)


def test_measure_plain_and_fast_agree_on_a_seed_row():
    P, Q = target(), draft("middling")
    slow = sweeps.measure(P, Q, 4, 40_000, np.random.default_rng(30), fast=False)
    assert (round(slow[0], 4), round(slow[1], 4)) == (0.4494, 2.7974)
