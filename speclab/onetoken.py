"""One drafted token (notebooks 02 and 03): figures of p against q, and p rebuilt from its parts.

    from speclab import onetoken
    onetoken.overlap_bars(ax, p, q)                      # p and q side by side, min(p, q) shaded
    onetoken.stacked_parts(ax, p, [("accepted", np.minimum(p, q), "overlap"),
                                   ("from the residual", (1 - a) * r, "residual")])

The rule itself is what the notebooks teach; the reference versions of their exercises live in
speclab.speculative, plus one here: one_token_distribution (notebook 03's exact output
distribution), which the graders lend to a later exercise so that each is graded on its own, and
02's break-it references: swapped_accept_prob (the broken rule) and emitted_distribution (the exact
one-step output of any accept rule with a given fallback), lent to 02's measurement likewise.
"""
import numpy as np

from .speculative import residual
from .style import COLORS, token_axis

ONE_TOKEN_RULES = ("correct", "greedy", "no_resample")


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


def overlap_bars(ax, p, q, labels=("target p", "draft q")):
    """p and q as side-by-side bars; the part of each bar below min(p, q) is shaded.

    What sticks out above the shading is p's surplus (tokens the draft under-proposes)
    on the left bar and q's surplus (tokens it over-proposes) on the right. Returns ax.
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    x, w = np.arange(len(p)), 0.4
    overlap = np.minimum(p, q)
    ax.bar(x - w / 2, p, w, color=COLORS["target"], label=labels[0])
    ax.bar(x + w / 2, q, w, color=COLORS["draft"], label=labels[1])
    for dx in (-w / 2, w / 2):  # the same min(p, q) drawn over both bars
        ax.bar(x + dx, overlap, w, color=COLORS["overlap"],
               label="min(p, q)" if dx < 0 else None)
    token_axis(ax)
    ax.set_ylabel("probability of the next token")
    ax.legend(ncol=3, loc="upper left")
    ax.set_ylim(0, max(p.max(), q.max()) * 1.25)
    return ax


def stacked_parts(ax, p, parts, outline="target p"):
    """Bars stacked from `parts` [(label, values, colour name)], with p drawn as an outline on top.

    Where the stack fills the outline exactly, the parts add up to p; a stack that pokes
    above the outline, or stops short of it, is off by that much. Returns the stack's top.
    """
    p = np.asarray(p, dtype=float)
    x = np.arange(len(p))
    bottom = np.zeros_like(p)
    for label, values, colour in parts:
        values = np.asarray(values, dtype=float)
        ax.bar(x, values, 0.6, bottom=bottom, label=label, color=COLORS.get(colour, colour))
        bottom = bottom + values
    ax.bar(x, p, 0.8, fill=False, edgecolor=COLORS["target"], linewidth=1.8, label=outline)
    token_axis(ax)
    ax.set_ylabel("probability of the next token")
    ax.legend(loc="upper left")
    ax.set_ylim(0, max(p.max(), bottom.max()) * 1.25)
    return bottom
