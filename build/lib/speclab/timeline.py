"""Timelines: the same tokens produced plainly and speculatively, drawn on one time axis.

A schedule is a list of steps (kind, duration, tokens_out): kind is "target" for a
plain target call, "draft" for one draft call, "verify" for the target pass that
checks a round. Durations are in any unit (target calls in notebook 01, ms in 07).
"""
import numpy as np
from matplotlib.patches import Patch

from .style import COLORS


def plain_schedule(n, step=1.0):
    """n plain target calls, one token each."""
    return [("target", step, 1) for _ in range(n)]


def speculative_schedule(emitted_per_round, k, draft_step, verify_step=1.0):
    """k draft calls then one verify pass per round; the pass emits that round's tokens."""
    steps = []
    for emitted in emitted_per_round:
        steps += [("draft", draft_step, 0)] * k + [("verify", verify_step, emitted)]
    return steps


def finish_time(steps):
    return float(sum(d for _, d, _ in steps))


def draw(ax, lanes, title=None, unit="time (target calls)"):
    """Draw schedules as horizontal lanes: lanes is [(label, steps)], top to bottom."""
    colours = {"target": COLORS["plain"], "draft": COLORS["draft"], "verify": COLORS["target"]}
    for row, (label, steps) in enumerate(lanes):
        y, t = len(lanes) - 1 - row, 0.0
        for kind, d, out in steps:
            edge = colours[kind] if kind == "draft" else "white"  # thin draft blocks must stay visible
            ax.barh(y, d, left=t, height=0.6, color=colours[kind], edgecolor=edge, linewidth=0.5)
            if kind == "verify" and out:
                ax.text(t + d / 2, y, str(out), ha="center", va="center", color="white", fontsize=7)
            t += d
        ax.text(t, y, f"  {finish_time(steps):.1f}", va="center", fontsize=9)
    ax.set_yticks(np.arange(len(lanes)), [label for label, _ in reversed(lanes)])
    ax.set_xlabel(unit)
    ax.grid(axis="y", visible=False)
    handles = [Patch(color=colours[k], label=lbl) for k, lbl in
               (("target", "target call (1 token)"), ("draft", "draft call"),
                ("verify", "verify pass (number = tokens kept)"))]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3, fontsize=8)
    if title:
        ax.set_title(title)
    return ax
