"""The widgets of notebooks 01 and 02 show true numbers (checked here, off the reader's path).

Each notebook is run once in-process (devtools.mutants; the fixtures nb01 and nb02: conftest.py), then
its widget is probed on a twin that is never displayed, exactly as a slider move would redraw it.
"""
import numpy as np
import pytest

from speclab.views import widgets

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_01_timeline_reads_the_average_not_one_run(nb01):
    w = nb01["timeline_widget"]
    start = widgets.probe(w, "draft accuracy a", 0.8)
    assert round(start["tokens_per_call"], 2) == 3.36, "a = 0.8, k = 4: (1 - 0.8^5) / 0.2 = 3.36 tokens per call"
    assert round(start["speedup"], 2) == 2.40, "3.36 / (1 + 4 * 0.1) = 2.40x at the start"
    # The simulated mean is seeded, so this is deterministic; for a fresh seed the tolerance 0.1 is
    # over 5 standard deviations of a 20,000-round mean (sd <= 2.5 / sqrt(20000) = 0.018): P < 1e-7.
    assert abs(start["simulated"] - start["tokens_per_call"]) < 0.1, "20,000 simulated rounds agree with the formula"
    assert sum(start["run"]) >= 48 and sum(start["run"][:-1]) < 48, "one run produces 48 tokens and stops"
    assert all(1 <= t <= 5 for t in start["run"]), "a round yields 1 to k + 1 tokens"


def test_01_timeline_perfect_predictor_and_extremes(nb01):
    w = nb01["timeline_widget"]
    perfect = widgets.probe(w, "draft accuracy a", 1.0)
    assert perfect["tokens_per_call"] == 5 and perfect["run"] == [5] * 10, "all k guesses plus the bonus, every round"
    never = widgets.probe(w, "draft accuracy a", 0.0)
    assert never["tokens_per_call"] == 1 and never["run"] == [1] * 48, "a predictor that is never right: 1 per call"
    widgets.probe(w, "draft accuracy a", 0.8)


def test_01_timeline_finds_slower_than_plain(nb01):
    w = nb01["timeline_widget"]
    widgets.probe(w, "draft accuracy a", 0.5)
    assert widgets.probe(w, "draft cost c", 0.2)["speedup"] > 1, "a = 0.5, k = 4, c = 0.2 still pays"
    slow = widgets.probe(w, "draft cost c", 0.25)
    assert slow["speedup"] < 1, "a = 0.5, k = 4, c = 0.25: 1.94 tokens per 2 call-times, slower than plain"
    assert abs(slow["speedup"] - 1.9375 / 2) < 1e-12
    widgets.probe(w, "draft accuracy a", 0.8)
    widgets.probe(w, "draft cost c", 0.1)


def test_01_every_k_redraws_with_its_own_average(nb01):
    w = nb01["timeline_widget"]
    for k in range(1, 9):
        got = widgets.probe(w, "guesses per round k", k)
        want = (1 - 0.8 ** (k + 1)) / 0.2
        assert abs(got["tokens_per_call"] - want) < 1e-12, f"k = {k}: the average is (1 - a^(k+1)) / (1 - a)"
        assert max(got["run"]) <= k + 1
    widgets.probe(w, "guesses per round k", 4)


def test_02_overlap_widget_numbers(nb02):
    w = nb02["overlap_widget"]
    assert abs(widgets.probe(w, "blend weight w", 1.0)["rate"] - 1.0) < 1e-12, "w = 1, T = 1 is the target itself"
    assert round(widgets.probe(w, "temperature T", 2.0)["rate"], 3) == 0.849, "the target at T = 2 keeps 84.9%"
    widgets.probe(w, "blend weight w", 0.85)
    assert round(widgets.probe(w, "temperature T", 1.3)["rate"], 3) == 0.947, "a little heat raises the rate"
    p, q = nb02["p"], nb02["q"]
    good = widgets.probe(w, "temperature T", 1.0)
    assert abs(good["rate"] - float(np.minimum(p, q).sum())) < 1e-12, "w = 0.85, T = 1 is the good draft"
    assert np.allclose(good["overlap"], np.minimum(p, q))
