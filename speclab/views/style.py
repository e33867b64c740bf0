"""One look for every figure: the same colour always means the same thing.

    from speclab.views import style
    style.use()
    ax.bar(x, p, color=style.COLORS["target"])
"""
import numpy as np

from ..models.tokens import TOKENS

COLORS = {
    "target": "#1f4e79",     # the big model, p
    "draft": "#e08a1e",      # the small model, q
    "overlap": "#9bbf85",    # min(p, q): mass the accept step delivers
    "residual": "#b03a48",   # max(0, p - q), renormalised
    "accepted": "#3a8a3a",
    "rejected": "#c0392b",
    "bonus": "#7b4fa0",      # the free token after k acceptances
    "floor": "#888888",      # sampling-noise floor and other reference lines
    "plain": "#5b6770",      # plain (non-speculative) decoding
}

RC = {
    "figure.figsize": (7.0, 3.6),
    "figure.dpi": 100,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "legend.frameon": False,
    "font.size": 10,
}


def use():
    """Apply the course style to every later figure."""
    # imported here: a module that only reads COLORS (the judge's, through speclab.views.onetoken) loads no
    # matplotlib (0.25 CPU s of each fresh judge)
    import matplotlib

    matplotlib.rcParams.update(RC)  # pyplot's own rcParams; the judge's fresh process needs no pyplot


def token_axis(ax, axis="x"):
    """Label an axis with the token letters a..f."""
    ticks, labels = np.arange(len(TOKENS)), list(TOKENS)
    if axis == "x":
        ax.set_xticks(ticks, labels)
        ax.set_xlabel("next token")
    else:
        ax.set_yticks(ticks, labels)
    return ax


def paired_bars(ax, series, width=0.8):
    """Side-by-side bars for several distributions over the tokens.

    series: list of (label, values, colour name or hex). Returns the axes.
    """
    n = len(series)
    x = np.arange(len(series[0][1]))
    for i, (label, values, colour) in enumerate(series):
        offset = (i - (n - 1) / 2) * width / n
        ax.bar(x + offset, values, width / n, label=label, color=COLORS.get(colour, colour))
    token_axis(ax)
    ax.set_ylabel("probability")
    ax.legend()
    return ax


def table_heatmap(ax, M, title, cmap="Blues"):
    """A model table as a heat map, with each row's most likely next token outlined."""
    from matplotlib.patches import Rectangle  # here: a module that only reads COLORS loads no matplotlib

    M = np.asarray(M)
    ax.imshow(M, cmap=cmap, vmin=0, vmax=1)
    for r in range(M.shape[0]):
        for c in range(M.shape[1]):
            ax.text(c, r, f"{M[r, c]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if M[r, c] > 0.5 else "black")
        best = int(np.argmax(M[r]))
        ax.add_patch(Rectangle((best - 0.5, r - 0.5), 1, 1, fill=False, lw=2, ec=COLORS["draft"]))
    ax.set_xticks(np.arange(len(TOKENS)), list(TOKENS))
    ax.set_yticks(np.arange(len(TOKENS)), list(TOKENS))
    ax.set_xlabel("next token")
    ax.set_ylabel("current token")
    ax.grid(False)
    ax.set_title(title)
    return ax


def _nice_ceil(x):
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (times a power of ten) at or above x > 0."""
    scale = 10.0 ** np.floor(np.log10(x))
    return scale * next(m for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * scale >= x * (1 - 1e-12))


def steady_ylim(ax, lo, hi, floor=None, cover=None):
    """Give a live widget's y axis limits that depend on the data alone, in round steps.

    The bottom is `floor` (else 0 for data at or above 0, else a round number below lo); the top
    is a round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten) above hi, or above
    `cover` if larger (what other settings of a control show, so that moving it keeps the axis).
    The same settings always show the same axis, whatever path led to them, and the axis moves
    only where the data cross a step: a move that changes limits redraws the whole frame
    (speclab.views.widgets.live). Returns True when the limits changed.
    """
    hi = hi if cover is None else max(hi, cover)
    bottom = floor if floor is not None else 0.0 if lo >= 0 else -_nice_ceil(-1.08 * lo)
    top = bottom + _nice_ceil(hi + 0.15 * max(hi - bottom, 1e-9) - bottom)
    if ax.get_ylim() == (bottom, top):
        return False
    ax.set_ylim(bottom, top)
    return True


def round_top(hi):
    """A round top for a y axis showing data up to hi > 0: the smallest of 1, 2, 5 (times a power of
    ten) at or above 1.15 hi. A function of the data alone, so the same settings always show the same
    axis; it changes only where the data cross a step of the ladder (coarser than steady_ylim's)."""
    x = 1.15 * hi
    scale = 10.0 ** np.floor(np.log10(x))
    return scale * next(m for m in (1, 2, 5, 10) if m * scale >= x * (1 - 1e-12))
