"""A picture of one round: the drafted tokens, each accept test, and what comes out.

    trace = trace_round(P, Q, ctx, k, rng, rule="correct")
    draw_round(ax, trace)

trace_round plays one round under the course's randomness contract (the same
uniforms, in the same order, as draft_tokens then verify_round in
speclab.speculative, so it emits the same tokens) and records every decision.
"""
import numpy as np
from matplotlib.patches import FancyBboxPatch
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

from .sampling import sample_from
from .speculative import RULES, accept_prob, draft_tokens, residual
from .style import COLORS
from .tokens import name


def trace_round(P, Q, ctx, k, rng, rule="correct"):
    """One round, with its decisions. Returns a dict:

    ctx, k, rule, drafted (k tokens), tests (one dict per tested draft: token, p, q,
    ratio = min(1, p/q) or None for greedy, u (None for greedy), ok), stop (index of
    the first rejection, or k), final (token, source: "residual", "target" or
    "bonus"), emitted (the round's tokens).
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    drafted = draft_tokens(Q, ctx, k, rng)
    prefixes = [ctx] + drafted
    tests, emitted = [], []
    for i, x in enumerate(drafted):
        p, q = P[prefixes[i]], Q[prefixes[i]]
        if rule == "greedy":
            u, ratio, ok = None, None, x == int(np.argmax(p))
        else:
            u, ratio = rng.random(), accept_prob(p, q, x)
            ok = u < ratio
        tests.append({"token": x, "p": float(p[x]), "q": float(q[x]), "ratio": ratio, "u": u, "ok": bool(ok)})
        if ok:
            emitted.append(x)
            continue
        source = "target" if rule == "no_resample" else "residual"
        fix = sample_from(p if source == "target" else residual(p, q), rng.random())
        emitted.append(fix)
        if rule == "continue":
            emitted.extend(drafted[i + 1:])
        return {"ctx": ctx, "k": k, "rule": rule, "drafted": drafted, "tests": tests, "stop": i,
                "final": (fix, source), "emitted": emitted}
    bonus = sample_from(P[prefixes[-1]], rng.random())
    return {"ctx": ctx, "k": k, "rule": rule, "drafted": drafted, "tests": tests, "stop": k,
            "final": (bonus, "bonus"), "emitted": emitted + [bonus]}


def _box(ax, x, y, text, colour, faded=False, hatch=None):
    ax.add_patch(FancyBboxPatch(
        (x - 0.32, y - 0.3), 0.64, 0.6, boxstyle="round,pad=0.02", facecolor=colour,
        alpha=0.25 if faded else 0.9, edgecolor=colour, hatch=hatch, linewidth=1.5))
    ax.text(x, y, text, ha="center", va="center", fontsize=14, fontweight="bold",
            color="#999999" if faded else "white")


def draw_round(ax, trace):
    """Draw a trace: drafted tokens on top (accepted, rejected, never tested), emitted below."""
    k, stop, drafted = trace["k"], trace["stop"], trace["drafted"]
    for i, x in enumerate(drafted):
        if i < len(trace["tests"]):
            t = trace["tests"][i]
            _box(ax, i, 1.0, name(x), COLORS["accepted"] if t["ok"] else COLORS["rejected"])
            if t["u"] is None:
                note = "argmax of p" if t["ok"] else "not argmax"
            else:
                note = f"u={t['u']:.2f} {'<' if t['ok'] else '≥'} {t['ratio']:.2f}"
            ax.text(i, 1.45, ("✓ " if t["ok"] else "✗ ") + note, ha="center", fontsize=8,
                    color=COLORS["accepted"] if t["ok"] else COLORS["rejected"])
        else:
            _box(ax, i, 1.0, name(x), COLORS["floor"], faded=True)
    final, source = trace["final"]
    colour = {"residual": COLORS["residual"], "target": COLORS["target"], "bonus": COLORS["bonus"]}[source]
    for j, x in enumerate(trace["emitted"]):
        if j < stop:
            _box(ax, j, 0.0, name(x), COLORS["accepted"])
        elif j == stop:
            _box(ax, j, 0.0, name(x), colour)
            ax.text(j, -0.5, {"residual": "from the residual", "target": "from p",
                              "bonus": "bonus from p"}[source], ha="center", fontsize=8, color=colour)
        else:  # "continue": stale drafts emitted after a rejection
            _box(ax, j, 0.0, name(x), COLORS["rejected"], hatch="//")
            ax.text(j, -0.5, "stale draft", ha="center", fontsize=8, color=COLORS["rejected"])
    ax.set_xlim(-0.7, max(k, 4) + 0.7)
    ax.set_ylim(-0.8, 1.8)
    ax.set_yticks([0, 1], ["emitted", "drafted\nby Q"])
    ax.set_xticks(range(k + 1), [f"pos {i}" for i in range(k + 1)])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    n_ok = sum(t["ok"] for t in trace["tests"])
    rule = "" if trace["rule"] == "correct" else f" ({trace['rule']} rule)"
    m = len(trace["emitted"])
    ax.set_title(f"{n_ok} of {k} drafts accepted: {m} token{'s' if m > 1 else ''} "
                 f"from one target call{rule}")
    return ax


WINDOW_COLOURS = {"greedy": COLORS["rejected"], "no_resample": COLORS["draft"], "continue": COLORS["bonus"]}


def draw_windows(ax, windows, exact_tv, floor, measured=None, k=None, floor_label="floor"):
    """Notebook 04's window figure: the exact TV of each shortcut's first n tokens, n in `windows`.

    exact_tv: {rule: [TV for each window]}; floor: a perfect sampler's expected TV per window;
    measured: optional {rule: [simulated TV per window]} drawn as dots; k: shade the windows
    n > k (those a larger k would still change). Log scale from 1e-3 to 1: an exact 0 (a rule
    that is exact in that window) is drawn as a hollow marker on the bottom edge.
    """
    bottom = 1e-3
    windows = np.asarray(windows)
    ax.axvspan(1.5, 2.5, color=COLORS["floor"], alpha=0.15, lw=0)
    ax.text(2, 0.6, "the NumPy walk-through's window", ha="center", fontsize=8, color=COLORS["plain"])
    if k is not None and k < windows.max():
        ax.axvspan(k + 0.5, windows.max() + 0.5, color=COLORS["target"], alpha=0.06, lw=0)
        ax.text(windows.max() + 0.4, 0.6, f"n > k = {k}: these would change with a larger k", ha="right",
                fontsize=8, color=COLORS["target"])
    for rule, values in exact_tv.items():
        values = np.asarray(values, dtype=float)
        zero = values < 1e-12
        shown = np.where(zero, bottom, values)
        colour = WINDOW_COLOURS.get(rule, COLORS["plain"])
        ax.plot(windows, shown, "-", color=colour, lw=1.8, label=f"{rule}" + ("" if measured is None else ": exact"))
        if zero.any():
            ax.plot(windows[zero], shown[zero], "o", mfc="white", color=colour, ms=6, clip_on=False)
        if measured is not None and rule in measured:
            ax.plot(windows, measured[rule], "o", color=colour, ms=5)
    ax.plot(windows, floor, "--", color=COLORS["floor"], label=floor_label)
    ax.set_yscale("log")
    ax.set_ylim(bottom, 1)
    # plain tick labels: log axes' default 10^x labels go through mathtext, a third of a redraw
    ax.yaxis.set_major_locator(FixedLocator([1e-3, 1e-2, 1e-1, 1.0]))
    ax.yaxis.set_major_formatter(FixedFormatter(["0.001", "0.01", "0.1", "1"]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlim(windows.min() - 0.5, windows.max() + 0.5)
    ax.set_xticks(windows)
    ax.set_xlabel("window: the first n emitted tokens (hollow marker: exactly 0)")
    ax.set_ylabel("TV from the target's joint")
    ax.legend(fontsize=8, ncol=2, loc="lower right")
    return ax
