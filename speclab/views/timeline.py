"""Timelines: the same tokens produced plainly and speculatively, drawn on one time axis.

A schedule is a list of steps (kind, duration, tokens_out): kind is "target" for a
plain target call, "draft" for one draft call, "verify" for the target pass that
checks a round. Durations are in any unit (target calls in notebook 01, ms in 07).

Notebook 01's widget also needs rounds from a predictor of a given accuracy a: each
guess is right with probability a, independently, and a round keeps the run of right
guesses plus one token from the target (1 to k + 1 tokens). `tokens_per_round` draws
them vectorised; `typical_run` picks, among seeded runs, one whose tokens per call are
closest to the exact average (1 - a^(k+1)) / (1 - a), so a single drawn run does not
read high or low; `average_schedule` lays out the average run itself, and
`simulated_mean` checks the average against 20,000 simulated rounds.

`draw(ax, lanes)` draws lanes once, for a still figure. A live widget (speclab.views.widgets.live) builds
the same artists once, `lane(ax, y, moving=True)` and `frame(...)`, and on each move refills them
with `set_lane(lane, steps)`: one drawing, built two ways.
"""
import math
from functools import lru_cache

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch

from ..speed.costs import expected_tokens
from ..plumbing.labels import Labels
from .style import COLORS

COLOURS = {"target": COLORS["plain"], "draft": COLORS["draft"], "verify": COLORS["target"]}


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


def lane(ax, y, moving=False):
    """One lane's artists at height y, empty until set_lane fills them.

    One collection per kind of step (not one bar per step), so a long lane draws as fast as a
    short one. moving=True marks them for a live widget (speclab.views.widgets.moving): a move redraws
    them over the kept background.
    """
    bars = {}
    for kind, colour in COLOURS.items():
        # thin draft blocks keep an edge of their own colour so they stay visible; others a white gap
        edge = colour if kind == "draft" else "white"
        bars[kind] = ax.add_collection(PolyCollection([], facecolors=colour, edgecolors=edge, linewidths=0.5),
                                       autolim=False)
    end = ax.text(0, y, "", va="center", fontsize=9)
    # the tokens kept, written on each verify pass: up to 48 a lane, drawn as kept pictures of their
    # digits (a Text each would be most of a widget's move)
    counts = ax.add_artist(Labels(ha="center", va="center", color="white", fontsize=7))
    parts = {"ax": ax, "y": y, "bars": bars, "end": end, "counts": counts}
    for artist in (*bars.values(), end, counts):
        artist.set_animated(moving)
    return parts


def set_lane(parts, steps):
    """Lay `steps` out in a lane made by lane(); returns its finish time."""
    y, t = parts["y"], 0.0
    spans = {kind: [] for kind in COLOURS}
    counts = []   # (x, tokens kept) written on each verify pass
    for kind, d, out in steps:
        spans[kind].append([(t, y - 0.3), (t, y + 0.3), (t + d, y + 0.3), (t + d, y - 0.3)])
        if kind == "verify" and out:
            counts.append((t + d / 2, str(out)))
        t += d
    for kind, verts in spans.items():
        parts["bars"][kind].set_verts(verts)
    parts["counts"].set_labels([(x, y) for x, _ in counts], [text for _, text in counts])
    parts["end"].set_position((t, y))
    parts["end"].set_text(f"  {t:.1f}")
    return t


def frame(ax, labels, xmax, unit="time (target calls)", legend=True):
    """The axes around lanes labelled `labels` (top to bottom): ticks, limits, the legend."""
    ax.set_yticks(np.arange(len(labels)), list(reversed(labels)))
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_xlim(0, xmax)
    ax.set_xlabel(unit)
    ax.grid(axis="y", visible=False)
    ax.set_axisbelow(True)   # grid under every lane, moving or not
    if legend:
        handles = [Patch(color=COLOURS[k], label=lbl) for k, lbl in
                   (("target", "target call (1 token)"), ("draft", "draft call"),
                    ("verify", "verify pass (number = tokens kept)"))]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3, fontsize=8)
    return ax


def room(finish, unit):
    """An x limit for lanes that finish at `finish`: 10% past the next multiple of `unit`.

    A widget's lanes change length on every move; stepping the limit keeps the axis (and the
    eye's scale) put until a lane outgrows it.
    """
    return 1.1 * unit * max(1, math.ceil(finish / unit - 1e-9))


def draw(ax, lanes, title=None, unit="time (target calls)", legend=True):
    """Draw schedules as horizontal lanes: lanes is [(label, steps)], top to bottom."""
    ends = [set_lane(lane(ax, len(lanes) - 1 - row), steps) for row, (_, steps) in enumerate(lanes)]
    frame(ax, [label for label, _ in lanes], 1.1 * max(ends), unit, legend)  # room for the end labels
    if title:
        ax.set_title(title)
    return ax


# --- a predictor of accuracy a (notebook 01) ------------------------------------------

def tokens_per_round(accuracy, k, rounds, rng):
    """Tokens each of `rounds` verify passes yields when every guess is right with probability
    `accuracy`, independently: the run of right guesses (at most k), plus the target's own token.
    """
    right = rng.random((rounds, k)) < accuracy
    run = np.cumprod(right, axis=1).sum(axis=1)  # guesses kept before the first wrong one
    return run + 1


def run_rounds(per_round_tokens, n):
    """The first rounds of a stream whose tokens add up to at least n (one run of n tokens)."""
    made = np.cumsum(per_round_tokens)
    return [int(x) for x in per_round_tokens[: int(np.searchsorted(made, n)) + 1]]


@lru_cache(maxsize=512)
def typical_run(accuracy, k, n=48, candidates=64, seed=0):
    """Tokens per round of one run of n tokens, picked among `candidates` seeded runs as the one
    whose tokens per target call are closest to the exact average (1 - a^(k+1)) / (1 - a)."""
    rng = np.random.default_rng([seed, k, int(round(accuracy * 1000))])
    draws = tokens_per_round(accuracy, k, candidates * n, rng).reshape(candidates, n)
    runs = [run_rounds(row, n) for row in draws]
    want = float(expected_tokens(accuracy, k))
    return tuple(min(runs, key=lambda r: abs(sum(r) / len(r) - want)))


@lru_cache(maxsize=512)
def simulated_mean(accuracy, k, rounds=20_000, seed=1):
    """Mean tokens per target call over `rounds` simulated rounds (a check on the exact average)."""
    rng = np.random.default_rng([seed, k, int(round(accuracy * 1000))])
    return float(tokens_per_round(accuracy, k, rounds, rng).mean())


def average_schedule(tokens_per_call, n, k, draft_step, verify_step=1.0):
    """The average run of n tokens: n / tokens_per_call rounds of k draft calls and one verify pass
    (the last one a fraction of a round), so it finishes at n / tokens_per_call * (k c + 1)."""
    rounds = n / tokens_per_call
    whole, part = int(rounds), rounds - int(rounds)
    steps = ([("draft", draft_step, 0)] * k + [("verify", verify_step, 0)]) * whole
    if part > 1e-9:
        steps += [("draft", draft_step * part, 0)] * k + [("verify", verify_step * part, 0)]
    return steps
