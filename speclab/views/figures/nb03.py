"""Notebook 03's widget: one step's output, stacked from its kept drafts and its fallback.

For a row of the target table (the context token), a draft (good, middling, poor or perfect)
and a rule (correct: resample from the residual; no_resample: fall back to p; greedy), the bars
stack what the kept drafts emit on what a rejection's fallback emits, outlined against p; the
title says whether the stack is exactly p, or by how much (total variation) it misses.
"""
import numpy as np

from .. import onetoken, widgets
from ...models.tables import draft, target
from ...models.tokens import V, name

P = target()


def build_parts(fig):
    """What no control changes: the axes; returns the bars, the legend and the title that move."""
    ax = fig.add_subplot()
    bars = onetoken.stacked_build(ax, V, [("kept drafts", "overlap"), ("rejected × fallback", "residual")])
    widgets.moving(*bars["stack"][0], *bars["stack"][1], *bars["outline"], bars["legend"])
    return bars, widgets.moving(ax.set_title("", y=1.0))   # a fixed place: no layout pass per frame


def update_parts(parts, context, draft_kind, rule):
    """Kept and fallback parts of one step for a table row under `rule`; returns what it plotted."""
    bars, title = parts
    p_row = P[context]
    q_row = p_row if draft_kind == "perfect" else draft(draft_kind)[context]
    kept, from_fallback = onetoken.one_token_parts(p_row, q_row, rule)
    fallback = "p" if rule == "no_resample" else "residual"
    if rule == "greedy" and np.array_equal(p_row, q_row):
        fallback = "residual (= p, the convention)"
    top = onetoken.stacked_update(bars, p_row, [kept, from_fallback],
                                  [f"kept drafts ({kept.sum():.1%})", f"rejected ({1 - kept.sum():.1%}) × {fallback}"])
    title.axes.set_ylim(0, onetoken.room(max(p_row.max(), top.max())))  # steps only for a tall bar
    gap = 0.5 * float(np.abs(top - p_row).sum())
    verdict = "the stack is exactly p" if gap < 1e-12 else f"the stack misses p by {gap:.4f} (TV)"
    title.set_text(f"{rule} after {name(context)!r}, {draft_kind} draft: {verdict}")
    return {"kept": kept, "from_fallback": from_fallback, "kept_mass": float(kept.sum()), "tv": gap,
            "max_error": float(np.abs(top - p_row).max())}
