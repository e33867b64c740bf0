"""Notebook 02's widget: the target p against a draft q made from two dials, for context 'a'.

The blend weight w mixes the target with an unrelated table (blend(P, other2, w): w = 1 is a
perfect draft) and the temperature T re-samples the result (temper). The figure shades the
overlap min(p, q) and the title gives the acceptance rate: the shaded area, sum(min(p, q)), added up
here. So the widget works before the learner's exercises do, and in a kernel grading notebook 02, where
the course's acceptance_rate is hidden (grading/kernels/hidden.py).
"""
from .. import onetoken, widgets
from ...models.tables import blend, table, target, temper
from ...models.tokens import V, token

P = target()
OTHER = table("other2")   # the unrelated table the NumPy walk-through's good and middling drafts blend in
CTX = token("a")


def build_overlap(fig):
    """What no dial changes: p's bars, the axes; returns the bars and the title that move."""
    p = P[CTX]
    fig.set_layout_engine(None)  # fixed margins
    ax = fig.subplots(gridspec_kw=dict(left=0.1, right=0.98, bottom=0.14, top=0.9))
    bars = onetoken.overlap_build(ax, V)
    onetoken.overlap_update(bars, p, p)   # p's bars stay; the draft's bars and the shading move
    return bars, widgets.moving(*bars["q"], *bars["shade"], ax.set_title("", y=1.0))[-1]


def update_overlap(parts, blend_weight, temperature):
    """Target vs a draft made from two dials, for context 'a'; returns what it plotted."""
    bars, title = parts
    p = P[CTX]
    q_row = temper(blend(P, OTHER, blend_weight), temperature)[CTX]
    overlap = onetoken.overlap_update(bars, p, q_row)
    rate = float(overlap.sum())   # the guesses kept: the shaded area
    title.axes.set_ylim(0, onetoken.room(max(p.max(), q_row.max())))  # steps only for a peaked draft
    title.set_text(f"w = {blend_weight:.2f}, T = {temperature:.2f}: {rate:.1%} of the guesses are kept")
    return {"q": q_row, "overlap": overlap, "rate": rate}
