"""The widgets of notebooks 03 and 04, checked the way the notebooks once checked them in a cell.

Each source notebook is executed once, in-process (devtools.mutants does it for the catalog
too; the fixtures nb03 and nb04: conftest.py); the widgets it built are then probed through never-displayed twins (speclab.views.widgets.probe),
so nothing here depends on rendering.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from speclab import TOKENS, draft, target  # noqa: E402
from speclab.rules import exact
from speclab.views import widgets
from speclab.views.figures import nb03 as fig03  # noqa: E402

P = target()


def test_03_parts_stack_up_to_p_under_the_correct_rule_only():
    fig = plt.figure()
    parts = fig03.build_parts(fig)   # the widget's own figure, built once and updated
    for kind in ("good", "middling", "poor", "perfect"):
        for c in range(len(TOKENS)):
            for rule in ("correct", "no_resample", "greedy"):
                out = fig03.update_parts(parts, c, kind, rule)
                if rule == "correct" or (rule == "no_resample" and kind == "perfect"):
                    assert out["max_error"] < 1e-12, f"{rule}, row {c}, {kind}: the stack must be p"
                else:
                    assert out["tv"] > 1e-6, f"{rule}, row {c}, {kind}: a broken rule's stack must miss p"
    plt.close(fig)


def test_03_parts_widget_controls_reach_the_figure(nb03):
    w = nb03["parts_widget"]
    assert w.result["tv"] < 1e-12, "the widget opens on the correct rule"
    assert abs(widgets.probe(w, "rule", "no_resample")["tv"] - 0.0360) < 5e-5, "no_resample after 'a', good draft"
    greedy = widgets.probe(w, "rule", "greedy")
    assert abs(greedy["tv"] - 0.1232) < 5e-5
    assert widgets.probe(w, "draft", "perfect")["tv"] > 0.2, "greedy misses p even with a perfect draft"
    assert widgets.probe(w, "rule", "correct")["tv"] < 1e-12
    rate = widgets.probe(w, "context token", 3)
    assert widgets.probe(w, "draft", "poor")["kept_mass"] < rate["kept_mass"], "row d: the poor draft keeps less"


def test_04_round_widget_plays_rounds_of_1_to_k_plus_1_tokens(nb04):
    w = nb04["round_widget"]
    for k in (1, 4, 8):
        emitted = widgets.probe(w, "k drafts", k)["emitted"]
        assert 1 <= len(emitted) <= k + 1, "a round emits between 1 and k + 1 tokens"
    first = widgets.probe(w, "round #", 1)["emitted"]
    assert widgets.probe(w, "round #", 1)["emitted"] == first, "a round number replays the same round"


def test_04_window_widget_follows_k_and_the_exact_enumeration(nb04):
    w = nb04["window_widget"]
    Q = draft("good")
    for k in (1, 2, 3, 4, 5):
        shown = widgets.probe(w, "k drafts", k)
        for rule in ("greedy", "no_resample", "continue"):
            want = exact.window_tvs(P, Q, 0, k, len(shown["windows"]), rule)
            assert np.abs(np.array(shown[rule]) - want).max() < 1e-12, (k, rule)
    k1, k4 = widgets.probe(w, "k drafts", 1), widgets.probe(w, "k drafts", 4)
    assert max(k1["continue"]) < 1e-12, "with k = 1 nothing is stale: continue is exact"
    assert k4["continue"][2] > k4["no_resample"][2], "three tokens at k = 4: continue is worse than no_resample"
    assert k4 != k1, "moving k changes what the widget shows"
