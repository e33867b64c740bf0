"""speclab.views.roundview: the picture of one round plays the round (the same uniforms, the same tokens) and
its windows' figure marks what is exactly zero."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from speclab import draft, target
from speclab.rules import exact
from speclab.views import roundview, widgets
from speclab.rules.speculative import RULES, draft_tokens, verify_round

P = target()
GOOD = draft("good")


@pytest.mark.parametrize("rule", RULES)
def test_trace_round_emits_what_verify_round_emits(rule):
    for seed in range(200):
        trace = roundview.trace_round(P, GOOD, 0, 4, np.random.default_rng(seed), rule)
        rng = np.random.default_rng(seed)
        expected = verify_round(P, GOOD, 0, draft_tokens(GOOD, 0, 4, rng), rng, rule)
        assert trace["emitted"] == expected
        assert sum(t["ok"] for t in trace["tests"]) == trace["stop"]


def test_draw_windows_marks_exact_zeros():
    fig = widgets.new_figure((7.5, 3.6))
    ax = fig.add_subplot()
    tvs = {rule: exact.window_tvs(P, GOOD, 0, 1, 4, rule) for rule in RULES[1:]}
    roundview.draw_windows(ax, np.arange(1, 5), tvs, [0.003, 0.007, 0.014, 0.027], k=1)
    hollow = [line for line in ax.lines if line.get_marker() == "o" and line.get_markerfacecolor() == "white"
              and len(line.get_xdata())]   # every rule has a line for its zeros; only continue's has any
    assert len(hollow) == 1 and len(hollow[0].get_xdata()) == 4, "continue at k = 1 is exactly 0 in all four windows"
    assert ax.get_ylim() == (1e-3, 1)
    widgets.png(fig)
