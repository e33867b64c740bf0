"""speclab.views.onetoken: exact one-token distributions of notebooks 02 and 03, and their figures."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from speclab import draft, target
from speclab.views import onetoken
from speclab.rules import speculative as ref

P = target()


def pairs():
    g = np.random.default_rng(0)
    yield P[0], draft("good")[0]
    for kind in ("middling", "poor"):
        for r in range(6):
            yield P[r], draft(kind)[r]
    for _ in range(20):
        yield g.dirichlet(0.5 * np.ones(6)), g.dirichlet(0.5 * np.ones(6))


def test_the_correct_rule_gives_p_exactly():
    for p, q in pairs():
        assert np.abs(onetoken.one_token_distribution(p, q) - p).max() < 1e-15


@pytest.mark.parametrize("rule", onetoken.ONE_TOKEN_RULES)
def test_one_token_distribution_matches_verify_round(rule):
    """The first token of k = 1 rounds of speclab.rules.speculative.verify_round follows the exact distribution.

    20,000 rounds: each token's frequency has standard deviation at most sqrt(0.25 / 20000) = 0.0035;
    the tolerance 0.025 is 7 of those (false failure below 1e-11 per token; the seed is fixed anyway).
    """
    p, q = P[0], draft("middling")[0]
    PP, QQ = np.tile(p, (6, 1)), np.tile(q, (6, 1))  # every row alike: only one step matters
    rng = np.random.default_rng(4)
    counts = np.zeros(6)
    for _ in range(20_000):
        x = ref.draft_tokens(QQ, 0, 1, rng)
        counts[ref.verify_round(PP, QQ, 0, x, rng, rule)[0]] += 1
    assert np.abs(counts / 20_000 - onetoken.one_token_distribution(p, q, rule)).max() < 0.025


def test_figures_draw_what_they_say():
    p, q = P[0], draft("good")[0]
    fig, ax = plt.subplots()
    onetoken.overlap_bars(ax, p, q)
    heights = sorted(round(b.get_height(), 12) for b in ax.patches)
    expected = sorted(round(v, 12) for v in np.concatenate([p, q, np.minimum(p, q), np.minimum(p, q)]))
    assert heights == expected
    plt.close(fig)
    fig, ax = plt.subplots()
    a = ref.acceptance_rate(p, q)
    top = onetoken.stacked_parts(ax, p, [("kept", np.minimum(p, q), "overlap"),
                                         ("residual", (1 - a) * ref.residual(p, q), "residual")])
    assert np.abs(top - p).max() < 1e-15, "the stack of accepted and residual parts is p"
    plt.close(fig)
