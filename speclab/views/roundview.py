"""A picture of one round: the drafted tokens, each accept test, and what comes out.

    trace = trace_round(P, Q, ctx, k, rng, rule="correct")
    draw_round(ax, trace)

trace_round plays one round under the course's randomness contract (the same
uniforms, in the same order, as draft_tokens then verify_round in
speclab.rules.speculative, so it emits the same tokens) and records every decision.
"""
import numpy as np
from matplotlib.patches import FancyBboxPatch
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from ..rules.speculative import TableRows, accept_prob, check_rule, draft_tokens, verify_drafts
from .style import COLORS
from ..models.tokens import name


class _Recorder:
    """An rng that remembers the uniforms it hands out, so a trace can show each test's u."""

    def __init__(self, rng):
        self.rng, self.drawn = rng, []

    def random(self):
        self.drawn.append(self.rng.random())
        return self.drawn[-1]


def trace_round(P, Q, ctx, k, rng, rule="correct"):
    """One round, with its decisions. Returns a dict:

    ctx, k, rule, drafted (k tokens), tests (one dict per tested draft: token, p, q,
    ratio = min(1, p/q) or None for greedy, u (None for greedy), ok), stop (index of
    the first rejection, or k), final (token, source: "residual", "target" or
    "bonus"), emitted (the round's tokens).

    The round itself is speclab.rules.speculative.verify_drafts (the same uniforms in the same order as
    draft_tokens then verify_round); this only records what it decided.
    """
    check_rule(rule)
    drafted = draft_tokens(Q, ctx, k, rng)
    prefixes = [ctx] + drafted
    recorder = _Recorder(rng)
    emitted, stop = verify_drafts(drafted, TableRows(P, Q, prefixes), recorder, rule)
    tests = []
    for i, x in enumerate(drafted[:stop + 1]):
        p, q = P[prefixes[i]], Q[prefixes[i]]
        greedy = rule == "greedy"
        tests.append({"token": x, "p": float(p[x]), "q": float(q[x]), "ok": i < stop,
                      "ratio": None if greedy else accept_prob(p, q, x),
                      "u": None if greedy else recorder.drawn[i]})
    source = "bonus" if stop == k else "target" if rule == "no_resample" else "residual"
    return {"ctx": ctx, "k": k, "rule": rule, "drafted": drafted, "tests": tests, "stop": stop,
            "final": (emitted[stop], source), "emitted": emitted}


def round_build(ax, k_max, moving=False):
    """Slots for a round of up to k_max drafts (draw_round's artists), all hidden: a drafted and an
    emitted box at every position, with their texts and notes. round_update fills them.

    The slots never move; a round only recolours, relabels, shows or hides them. moving=True marks
    them for a live widget (speclab.views.widgets.moving).
    """
    def box(x, y):
        patch = ax.add_patch(FancyBboxPatch((x - 0.32, y - 0.3), 0.64, 0.6, boxstyle="round,pad=0.02",
                                            linewidth=1.5, visible=False))
        return patch, ax.text(x, y, "", ha="center", va="center", fontsize=14, fontweight="bold", visible=False)

    slots = {"drafted": [box(i, 1.0) for i in range(k_max)],
             "emitted": [box(j, 0.0) for j in range(k_max + 1)],
             # the accept test above each draft; where the emitted token came from, below it
             "test": [ax.text(i, 1.36, "", ha="center", va="bottom", fontsize=8, visible=False) for i in range(k_max)],
             "source": [ax.text(j, -0.5, "", ha="center", fontsize=8, visible=False) for j in range(k_max + 1)],
             # position labels as texts, not ticks, so a widget shows as many as the round has
             "pos": [ax.text(j, -0.03, f"pos {j}", ha="center", va="top", transform=ax.get_xaxis_transform(),
                             visible=False) for j in range(k_max + 1)],
             "title": ax.set_title("", y=1.0)}
    ax.set_xlim(-0.7, max(k_max, 4) + 0.7)
    ax.set_ylim(-0.8, 1.8)
    ax.set_yticks([0, 1], ["emitted", "drafted\nby Q"])
    ax.set_xticks([])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    for artist in _slot_artists(slots):
        artist.set_animated(moving)
    return slots


def _slot_artists(slots):
    for key, value in slots.items():
        for item in (value if isinstance(value, list) else [value]):
            yield from (item if isinstance(item, tuple) else (item,))


def _fill(slot, text, colour, faded=False, hatch=None):
    patch, label = slot
    patch.set(visible=True, facecolor=colour, edgecolor=colour, alpha=0.25 if faded else 0.9, hatch=hatch)
    label.set(visible=True, text=text, color="#999999" if faded else "white")


def round_update(slots, trace):
    """Show a trace in round_build's slots: drafted tokens on top (accepted, rejected, never tested),
    emitted below, the title. Returns the trace."""
    k, stop, drafted = trace["k"], trace["stop"], trace["drafted"]
    for artist in _slot_artists(slots):
        artist.set_visible(False)
    for i, x in enumerate(drafted):
        if i < len(trace["tests"]):
            t = trace["tests"][i]
            colour = COLORS["accepted"] if t["ok"] else COLORS["rejected"]
            _fill(slots["drafted"][i], name(x), colour)
            if t["u"] is None:
                note = "argmax of p" if t["ok"] else "not argmax"
            else:  # two lines, so eight tests side by side do not run into each other
                note = f"u={t['u']:.2f}\n{'<' if t['ok'] else '≥'} {t['ratio']:.2f}"
            slots["test"][i].set(visible=True, text=("✓ " if t["ok"] else "✗ ") + note, color=colour)
        else:
            _fill(slots["drafted"][i], name(x), COLORS["floor"], faded=True)
    final, source = trace["final"]
    colour = {"residual": COLORS["residual"], "target": COLORS["target"], "bonus": COLORS["bonus"]}[source]
    for j, x in enumerate(trace["emitted"]):
        if j < stop:
            _fill(slots["emitted"][j], name(x), COLORS["accepted"])
        elif j == stop:
            _fill(slots["emitted"][j], name(x), colour)
            slots["source"][j].set(visible=True, color=colour, text={"residual": "from the residual", "target": "from p",
                                                                     "bonus": "bonus from p"}[source])
        else:  # "continue": stale drafts emitted after a rejection
            _fill(slots["emitted"][j], name(x), COLORS["rejected"], hatch="//")
            slots["source"][j].set(visible=True, color=COLORS["rejected"], text="stale draft")
    for label in slots["pos"][:k + 1]:
        label.set_visible(True)
    n_ok = sum(t["ok"] for t in trace["tests"])
    rule = "" if trace["rule"] == "correct" else f" ({trace['rule']} rule)"
    m = len(trace["emitted"])
    slots["title"].set(visible=True, text=f"{n_ok} of {k} drafts accepted: {m} token{'s' if m > 1 else ''} "
                                          f"from one target call{rule}")
    return trace


def draw_round(ax, trace):
    """Draw a trace: drafted tokens on top (accepted, rejected, never tested), emitted below.

    A widget builds the same slots once (round_build) and fills them on each move (round_update).
    """
    round_update(round_build(ax, trace["k"]), trace)
    return ax


WINDOW_COLOURS = {"greedy": COLORS["rejected"], "no_resample": COLORS["draft"], "continue": COLORS["bonus"]}
WINDOW_BOTTOM = 1e-3   # the log axis' floor: an exact 0 is drawn there, hollow


def windows_build(ax, windows, rules, floor, measured=None, floor_label="floor", moving=False):
    """The artists of draw_windows for `rules`, the TV lines empty: returns parts for windows_update.

    measured (optional {rule: [simulated TV per window]}) is drawn at once, as dots.
    moving=True marks what windows_update changes for a live widget (speclab.views.widgets.moving).
    """
    windows = np.asarray(windows)
    ax.axvspan(1.5, 2.5, color=COLORS["floor"], alpha=0.15, lw=0)
    ax.text(2, 0.6, "the NumPy walk-through's window", ha="center", fontsize=8, color=COLORS["plain"])
    parts = {"windows": windows,
             "k_span": ax.axvspan(windows.max() + 0.5, windows.max() + 0.5, color=COLORS["target"], alpha=0.06, lw=0),
             "k_note": ax.text(windows.max() + 0.4, 0.6, "", ha="right", fontsize=8, color=COLORS["target"])}
    for rule in rules:
        colour = WINDOW_COLOURS.get(rule, COLORS["plain"])
        parts[rule] = (ax.plot([], [], "-", color=colour, lw=1.8, label=f"{rule}" + ("" if measured is None else ": exact"))[0],
                       ax.plot([], [], "o", mfc="white", color=colour, ms=6, clip_on=False)[0])
        if measured is not None and rule in measured:
            ax.plot(windows, measured[rule], "o", color=colour, ms=5)
    parts["floor"], = ax.plot(windows, floor, "--", color=COLORS["floor"], label=floor_label)
    ax.set_yscale("log")
    ax.set_ylim(WINDOW_BOTTOM, 1)
    # plain tick labels: log axes' default 10^x labels go through mathtext, a third of a redraw
    ax.yaxis.set_major_locator(FixedLocator([1e-3, 1e-2, 1e-1, 1.0]))
    ax.yaxis.set_major_formatter(FixedFormatter(["0.001", "0.01", "0.1", "1"]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlim(windows.min() - 0.5, windows.max() + 0.5)
    ax.set_xticks(windows)
    ax.set_xlabel("window: the first n emitted tokens (hollow marker: exactly 0)")
    ax.set_ylabel("TV from the target's joint")
    ax.legend(fontsize=8, ncol=2, loc="lower right")
    for artist in (parts["k_span"], parts["k_note"], parts["floor"], *(a for r in rules for a in parts[r])):
        artist.set_animated(moving)   # the floor too: it stays on top of the shaded windows
    return parts


def windows_update(parts, exact_tv, k=None):
    """Draw exact_tv ({rule: [TV for each window]}) in windows_build's lines; shade the windows
    n > k (those a larger k would still change). An exact 0 is a hollow marker on the bottom edge."""
    windows = parts["windows"]
    shade = k is not None and k < windows.max()
    parts["k_span"].set(visible=shade, x=(k if shade else windows.max()) + 0.5, width=windows.max() - (k if shade else windows.max()))
    parts["k_note"].set(visible=shade, text=f"n > k = {k}: these would change with a larger k" if shade else "")
    for rule, values in exact_tv.items():
        values = np.asarray(values, dtype=float)
        zero = values < 1e-12
        line, zeros = parts[rule]
        line.set_data(windows, np.where(zero, WINDOW_BOTTOM, values))
        zeros.set_data(windows[zero], np.full(int(zero.sum()), WINDOW_BOTTOM))
        zeros.set_visible(bool(zero.any()))   # an empty line would still count in a tight layout
    return exact_tv


def draw_windows(ax, windows, exact_tv, floor, measured=None, k=None, floor_label="floor"):
    """Notebook 04's window figure: the exact TV of each shortcut's first n tokens, n in `windows`.

    exact_tv: {rule: [TV for each window]}; floor: a perfect sampler's expected TV per window;
    measured: optional {rule: [simulated TV per window]} drawn as dots; k: shade the windows
    n > k (those a larger k would still change). Log scale from 1e-3 to 1: an exact 0 (a rule
    that is exact in that window) is drawn as a hollow marker on the bottom edge.
    A widget builds the same artists once (windows_build) and moves them (windows_update).
    """
    windows_update(windows_build(ax, windows, list(exact_tv), floor, measured, floor_label), exact_tv, k)
    return ax
