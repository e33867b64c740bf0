"""A picture of one round: the drafted tokens, each accept test, and what comes out.

    trace = trace_round(P, Q, ctx, k, rng, rule="correct")
    draw_round(ax, trace)

trace_round plays one round under the course's randomness contract (the same
uniforms, in the same order, as draft_tokens then verify_round in
speclab.speculative, so it emits the same tokens) and records every decision.
"""
import numpy as np
from matplotlib.patches import FancyBboxPatch

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
