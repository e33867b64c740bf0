"""One drafted token (notebooks 02 and 03): figures of p against q, and p rebuilt from its parts.

    from speclab.views import onetoken
    onetoken.overlap_bars(ax, p, q)                      # p and q side by side, min(p, q) shaded
    onetoken.stacked_parts(ax, p, [("accepted", np.minimum(p, q), "overlap"),
                                   ("from the residual", (1 - a) * r, "residual")])

The rule itself is what the notebooks teach; the reference versions of their exercises live in
speclab.rules.speculative, plus one here: one_token_distribution (notebook 03's exact output
distribution), which the graders lend to a later exercise so that each is graded on its own, and
02's break-it references: swapped_accept_prob (the broken rule) and emitted_distribution (the exact
one-step output of any accept rule with a given fallback), lent to 02's measurement likewise.
"""
import numpy as np

from ..rules.speculative import RULES, residual
from .style import COLORS, token_axis

# The rules that change a single token: "continue" differs only in what follows a rejection.
ONE_TOKEN_RULES = tuple(rule for rule in RULES if rule != "continue")


def one_token_distribution(p, q, rule="correct"):
    """Exact distribution of the token one speculative step emits under `rule`.

    "correct": keep x with min(1, p/q), else sample the residual (the output is p);
    "greedy": keep x iff x == argmax(p), else sample the residual;
    "no_resample": keep x with min(1, p/q), else sample p itself.
    """
    if rule not in ONE_TOKEN_RULES:
        raise ValueError(f"rule must be one of {ONE_TOKEN_RULES}, got {rule!r}")
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if rule == "greedy":
        best = int(np.argmax(p))
        kept = np.where(np.arange(len(p)) == best, q, 0.0)
    else:
        kept = np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept + (1.0 - kept.sum()) * fallback


def one_token_parts(p, q, rule="correct"):
    """(kept, from_fallback): the two parts of one_token_distribution, for 03's widget.

    kept[x] is the chance that the draft proposes x and the rule keeps it; from_fallback[x] the
    chance of a rejection followed by x from the fallback (the residual, or p for "no_resample").
    """
    if rule not in ONE_TOKEN_RULES:
        raise ValueError(f"rule must be one of {ONE_TOKEN_RULES}, got {rule!r}")
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.where(np.arange(len(p)) == int(np.argmax(p)), q, 0.0) if rule == "greedy" else np.minimum(p, q)
    fallback = p if rule == "no_resample" else residual(p, q)
    return kept, (1.0 - kept.sum()) * fallback


def swapped_accept_prob(p, q, x):
    """BROKEN on purpose (02's break-it): min(1, q[x] / p[x]), the ratio upside down.

    Where p[x] = 0 the ratio is infinite and the guess is always kept.
    """
    px, qx = float(p[x]), float(q[x])
    return 1.0 if px == 0.0 else min(1.0, qx / px)


def emitted_distribution(p, q, r, accept):
    """Exact distribution of the token one step emits: the draft proposes x ~ q, the step keeps it
    with probability accept(p, q, x) (asked only where q[x] > 0), and otherwise emits a token drawn
    from the distribution r. The graders lend it to 02's measurement.
    """
    p, q, r = (np.asarray(v, dtype=float) for v in (p, q, r))
    kept = np.array([q[x] * float(accept(p, q, x)) if q[x] > 0 else 0.0 for x in range(len(q))])
    return kept + (1.0 - kept.sum()) * r


def room(peak):
    """A y limit with room for the legend above a bar of height `peak`: 1.25 x peak, rounded up to
    0.6, 0.9 or 1.25, so a widget's axis stays put while its bars move (and steps rarely)."""
    return next((top for top in (0.6, 0.9, 1.25) if 1.25 * peak <= top), 1.25 * peak)


def overlap_build(ax, n, labels=("target p", "draft q")):
    """The artists of overlap_bars for n tokens, all at height 0: {"p", "q": bars, "shade": the
    2n bars of min(p, q), over p's then over q's}. overlap_update sets them."""
    x, w, zero = np.arange(n), 0.4, np.zeros(n)
    bars = {"p": ax.bar(x - w / 2, zero, w, color=COLORS["target"], label=labels[0]),
            "q": ax.bar(x + w / 2, zero, w, color=COLORS["draft"], label=labels[1])}
    bars["shade"] = [*ax.bar(x - w / 2, zero, w, color=COLORS["overlap"], label="min(p, q)"),
                     *ax.bar(x + w / 2, zero, w, color=COLORS["overlap"])]  # one min(p, q) over both bars
    token_axis(ax)
    ax.set_axisbelow(True)   # grid under every bar, moving or not
    ax.set_ylabel("probability of the next token")
    ax.legend(ncol=3, loc="upper left")
    return bars


def overlap_update(bars, p, q):
    """Set the bars of overlap_build to p, q and min(p, q); returns min(p, q)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    overlap = np.minimum(p, q)
    for bar, height in zip([*bars["p"], *bars["q"], *bars["shade"]], np.concatenate([p, q, overlap, overlap])):
        bar.set_height(height)
    return overlap


def overlap_bars(ax, p, q, labels=("target p", "draft q")):
    """p and q as side-by-side bars; the part of each bar below min(p, q) is shaded.

    What sticks out above the shading is p's surplus (tokens the draft under-proposes)
    on the left bar and q's surplus (tokens it over-proposes) on the right. Returns ax.
    A widget builds the same bars once (overlap_build) and moves them (overlap_update).
    """
    overlap_update(overlap_build(ax, len(p), labels), p, q)
    ax.set_ylim(0, max(np.max(p), np.max(q)) * 1.25)
    return ax


def stacked_build(ax, n, parts, outline="target p"):
    """The artists of stacked_parts for n tokens and `parts` [(label, colour name)], at height 0:
    {"stack": one set of bars per part, "outline": p's outline, "legend"}. stacked_update sets them."""
    x, zero = np.arange(n), np.zeros(n)
    bars = {"stack": [ax.bar(x, zero, 0.6, label=label, color=COLORS.get(colour, colour))
                      for label, colour in parts],
            "outline": ax.bar(x, zero, 0.8, fill=False, edgecolor=COLORS["target"], linewidth=1.8, label=outline)}
    token_axis(ax)
    ax.set_axisbelow(True)   # grid under every bar, moving or not
    ax.set_ylabel("probability of the next token")
    bars["legend"] = ax.legend(loc="upper left")
    return bars


def stacked_update(bars, p, values, labels=None):
    """Stack `values` (one array per part) in the bars of stacked_build, outline p, and (if given)
    relabel the parts in the legend. Returns the stack's top."""
    p = np.asarray(p, dtype=float)
    bottom = np.zeros_like(p)
    for part, heights in zip(bars["stack"], values):
        heights = np.asarray(heights, dtype=float)
        for bar, base, height in zip(part, bottom, heights):
            bar.set_y(base)
            bar.set_height(height)
        bottom = bottom + heights
    for bar, height in zip(bars["outline"], p):
        bar.set_height(height)
    for text, label in zip(bars["legend"].get_texts(), labels or ()):
        text.set_text(label)
    return bottom


def stacked_parts(ax, p, parts, outline="target p"):
    """Bars stacked from `parts` [(label, values, colour name)], with p drawn as an outline on top.

    Where the stack fills the outline exactly, the parts add up to p; a stack that pokes
    above the outline, or stops short of it, is off by that much. Returns the stack's top.
    A widget builds the same bars once (stacked_build) and moves them (stacked_update).
    """
    bars = stacked_build(ax, len(p), [(label, colour) for label, _, colour in parts], outline)
    bottom = stacked_update(bars, p, [values for _, values, _ in parts])
    ax.set_ylim(0, max(np.max(p), bottom.max()) * 1.25)
    return bottom
