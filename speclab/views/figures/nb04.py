"""Notebook 04's two widgets: one speculative round played out, and the shortcuts' exact distance
from the target over windows of the first n tokens.

Both work on the course's target and good draft from context 'a', as the notebook does.
"""
from functools import lru_cache

import numpy as np

from ...rules import exact
from .. import roundview, widgets
from ...models.tables import draft, target
from ...models.tokens import token

P, Q = target(), draft("good")
CTX = token("a")
K_MAX = 8          # the round widget's largest k: its figure keeps a slot for every draft it can show


def build_round(fig):
    """The slots of a round of up to K_MAX drafts, drawn once; a round recolours and relabels them."""
    return roundview.round_build(fig.add_subplot(), K_MAX, moving=True)


def update_round(slots, k, round_no):
    """Play round number `round_no` (its own seed) from 'a' with k drafts; returns the trace."""
    return roundview.round_update(slots, roundview.trace_round(P, Q, CTX, k, np.random.default_rng(round_no)))


BROKEN = ("greedy", "no_resample", "continue")
WINDOWS = np.arange(1, 7)   # the first n = 1 .. 6 tokens
TRIALS = 60_000             # the floor: what a perfect sampler scores at the notebook's 60,000 trials


@lru_cache(maxsize=None)
def window_floor():
    """The sampling floor per window at the notebook's 60,000 trials: computed once."""
    return [exact.expected_sampling_tv(exact.target_tokens_joint(P, CTX, n), TRIALS) for n in WINDOWS]


@lru_cache(maxsize=None)
def window_tvs(k):
    """{rule: exact TV per window} at k drafts per round: computed when k is first shown, then kept."""
    return {rule: exact.window_tvs(P, Q, CTX, k, len(WINDOWS), rule).tolist() for rule in BROKEN}


def build_windows(fig):
    """The axes, the floor and the legend, drawn once; returns the lines, the shading and the title k moves."""
    ax = fig.add_subplot()
    lines = roundview.windows_build(ax, WINDOWS, BROKEN, window_floor(), floor_label="floor, 60,000 trials",
                                    moving=True)
    return lines, widgets.moving(ax.set_title("", y=1.0))   # a fixed place: no layout pass per frame


def update_windows(parts, k):
    """Exact TV of each shortcut's first n tokens (n = 1..6) at k drafts per round; returns what it plotted."""
    lines, title = parts
    shown = roundview.windows_update(lines, window_tvs(k), k)
    worse = next((n for n in WINDOWS if shown["continue"][n - 1] > shown["no_resample"][n - 1]), None)
    title.set_text(f"k = {k}: " + ("continue is exact in every window (nothing stale)" if k == 1 else
                                   f"continue overtakes no_resample from a window of {worse} tokens" if worse else
                                   "continue stays below no_resample"))
    return {"windows": WINDOWS.tolist(), **shown}
