"""Notebook 05's widget: the speedup against k for a draft, its price c, and a chosen k.

Three curves over k = 1..16: the formula (1 - a^(k+1)) / (1 - a) / (1 + k c) with the draft's
alpha, the exact Markov count, and a quick simulation (4,000 rounds per k in 200 chains,
speclab.decoding.simulate); the formula's best k is starred. The draft is blend(P, other2, weight).
"""
from functools import lru_cache

import numpy as np

from ...decoding import simulate
from .. import style, widgets
from ...speed.costs import markov_round_stats, paper_alpha
from ...models.tables import blend, table, target

P = target()
KS = np.arange(1, 17)


@lru_cache(maxsize=None)
def draft_curves(weight):
    """(alpha, exact tokens per call, simulated tokens per call) for k = 1..16 of one draft.

    Everything that depends on the draft alone, computed once per blend weight: moving c or k
    only re-prices these.
    """
    D = blend(P, table("other2"), weight)
    exact = np.array([markov_round_stats(P, D, int(j))[1] for j in KS])
    # the runs of simulate.run, seeded by k, played together (a new draft is a move: issue 30)
    sim = np.array([r.tokens_per_call for r in simulate.sweep(
        P, D, KS, 4000, [np.random.default_rng(int(j)) for j in KS], chains=200, burn_in=5)])
    return paper_alpha(P, D), exact, sim


def build_k_sweep(fig):
    """What no control changes, drawn once; returns the artists a move changes."""
    fig.set_layout_engine("none")   # fixed margins: a layout pass on every move would double the drawing
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.9)
    ax = fig.add_subplot()
    ax.axhline(1, color=style.COLORS["floor"], lw=1, ls=":")
    ax.set(xlabel="drafts per round k", ylabel="speedup", xlim=(0.25, 16.75))
    formula, = ax.plot(KS, KS, color=style.COLORS["target"], label="formula")
    exact, = ax.plot(KS, KS, "--", color=style.COLORS["overlap"], label="exact Markov count")
    sim, = ax.plot(KS, KS, "o", ms=4, color=style.COLORS["draft"], label="simulation, 4,000 rounds per k")
    best, = ax.plot([1], [1], "*", ms=14, color=style.COLORS["accepted"], label="best k")
    at_k = ax.axvline(1, color=style.COLORS["floor"], lw=1)
    title = ax.set_title(" ", y=1.0)
    legend = ax.legend(fontsize=8, loc="upper right")
    return widgets.moving(formula, exact, sim, best, at_k, title, legend) + (ax,)


def update_k_sweep(parts, weight, c, k):
    """Price the draft's curves at c, star the best k, mark k; returns the numbers it drew."""
    formula_line, exact_line, sim_points, best_star, at_k, title, legend, ax = parts
    a, exact, sim = draft_curves(round(weight, 2))
    tokens = KS + 1.0 if abs(1 - a) < 1e-12 else (1 - a ** (KS + 1)) / (1 - a)
    cost = 1 + KS * c
    formula = tokens / cost
    best = int(KS[np.argmax(formula)])
    formula_line.set_ydata(formula)
    exact_line.set_ydata(exact / cost)
    sim_points.set_ydata(sim / cost)
    best_star.set_data([best], [formula[best - 1]])
    at_k.set_xdata([k, k])
    title.set_text(f"Best k = {best} ({formula[best - 1]:.2f}x); at k = {k}: {formula[k - 1]:.2f}x")
    legend.get_texts()[0].set_text(f"formula (alpha = {a:.3f})")
    legend.get_texts()[3].set_text(f"best k = {best}")
    # the y axis holds still while the curves fit it (a new axis redraws the whole frame); the
    # legend goes where the curve is not
    low, high = min(1.0, formula.min(), (sim / cost).min()), max(formula.max(), (exact / cost).max(), (sim / cost).max())
    style.steady_ylim(ax, low, high)
    bottom, top = ax.get_ylim()
    legend.set_loc("lower right" if formula[-1] > (bottom + top) / 2 else "upper right")
    return {"alpha": a, "best_k": best, "best_speedup": float(formula[best - 1]),
            "speedup_at_k": float(formula[k - 1]), "simulated_at_k": float(sim[k - 1] / cost[k - 1])}
