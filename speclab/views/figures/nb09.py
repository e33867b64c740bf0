"""Notebook 09's widget: a SpecInfer-style tree valued against a chain and the best tree of each size
(left), and its verify pass priced on notebook 07's 4 x H100 deployment (right).

    tree_widget = widgets.live(nb09.build_tree, nb09.update_tree, figsize=(9.5, 3.3),
                               root=..., width=..., depth=..., quality=..., batch=...)

The toy pair is the course's target and `blend(target, other2, quality)`; the deployment is the
notebook's (Llama-3-70B verified, Llama-3.2-1B drafting, four pooled H100s, every sequence at
1,024 tokens of context, the realistic draft-step overhead of notebook 07, section 5).
"""
from functools import lru_cache

import numpy as np
from matplotlib import rcParams
from matplotlib.ticker import MaxNLocator

from ...speed import costs
from .. import style, widgets
from ...rules import trees
from ...speed import hardware as hw
from ...models.tables import blend, table, target

CTX = 1024                                  # tokens of context per sequence
SIZES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256])
LOG_TICKS = [1, 4, 16, 64, 256, 1024]
POSITIONS = np.arange(11)                   # the verify pass over 2^0 .. 2^10 positions


@lru_cache(maxsize=1)
def _deployment():
    return (hw.load_model("llama-3-70b"), hw.load_model("llama-3.2-1b"), hw.accelerator("H100", cards=4))


@lru_cache(maxsize=1)
def _pair():
    P = target()
    return P, table("other2"), costs.stationary(P)


def kept_per_pass(tree, Q, mats):
    """Expected accepted drafts of one pass over `tree`, averaged over the target's contexts."""
    P, _, pi = _pair()
    return float(pi @ trees.tree_accepted(P, Q, tree, mats=mats))


@lru_cache(maxsize=64)
def _curves(quality):
    """Accept matrices, chain and best-tree values for one draft quality (reused while other controls move)."""
    P, other, pi = _pair()
    Q = blend(P, other, quality)
    m = trees.accept_matrices(P, Q, 8)
    a = trees.positional_acceptance(P, Q, 8)
    v, chain_kept = np.zeros(len(P)), [0.0]
    for _ in range(int(SIZES[-1])):            # a chain of N: sum of M_1^j 1, j = 1..N
        v = m[0] @ (1.0 + v)
        chain_kept.append(float(pi @ v))
    tree_kept = [kept_per_pass(trees.greedy_tree(a, int(N)), Q, m) for N in SIZES]
    return Q, m, np.array(chain_kept), np.array(tree_kept)


@lru_cache(maxsize=256)
def _verify_ms(positions, batch):
    T70, _, four = _deployment()
    return hw.step_time(T70, four, positions, CTX, batch) * 1e3


def build_tree(fig):
    """What no control changes, drawn once; returns the artists a move changes."""
    # Fixed margins (no layout engine), sizes on a log2 scale drawn as plain numbers, labels on the
    # lines, fixed title positions, few ticks: each renders cheaper than its default.
    fig.set_layout_engine(None)
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw=dict(left=0.07, right=0.985, bottom=0.17, top=0.9, wspace=0.26))
    chain, = ax1.plot(np.log2(SIZES), SIZES, "--", color=style.COLORS["plain"])
    best, = ax1.plot(np.log2(SIZES), SIZES, "-", color=style.COLORS["accepted"])
    chain_label = ax1.text(8, 0, "chain", ha="right", va="bottom", fontsize=8, color=style.COLORS["plain"])
    best_label = ax1.text(5.8, 0, "best tree", ha="right", va="bottom", fontsize=8, color=style.COLORS["accepted"])
    yours = ax1.plot([0], [0], "o", ms=9, color=style.COLORS["draft"])[0]
    ax1.set_xticks(np.log2(LOG_TICKS[:-1]), [str(t) for t in LOG_TICKS[:-1]])
    ax1.set(xlim=(-0.4, 8.4), ylabel="accepted drafts per pass")
    xlabel = ax1.text(0.5, -0.1, " ", transform=ax1.transAxes, ha="center", va="top", fontsize=rcParams["axes.labelsize"])
    title1 = ax1.set_title(" ", y=1.0, pad=11)  # clear of the top tick label: the title is wider than its axes
    ax1.yaxis.set_major_locator(MaxNLocator(4))
    # the right panel's axis covers every batch (log scale): a new batch moves the curve, not the axis
    verify, = ax2.plot(POSITIONS, POSITIONS, color=style.COLORS["target"])
    plain = ax2.axhline(1, color=style.COLORS["floor"], ls="--", lw=1)
    plain_label = ax2.text(0, 1, "plain step", va="bottom", fontsize=8, color=style.COLORS["floor"])
    pass_dot = ax2.plot([0], [0], "o", ms=9, color=style.COLORS["draft"])[0]
    ax2.set_xticks(np.log2(LOG_TICKS), [str(t) for t in LOG_TICKS])
    ax2.set(yscale="log", xlim=(-0.5, 10.5), ylim=(5, 20000),
            xlabel="positions in the verify pass (N + 1)", ylabel="verify pass, ms on 4 x H100")
    ax2.set_yticks([10, 100, 1000, 10000], ["10", "100", "1,000", "10,000"])
    ax2.minorticks_off()
    title2 = ax2.set_title(" ", y=1.0, pad=11)
    return widgets.moving(chain, best, chain_label, best_label, yours, xlabel, title1,
                          verify, plain, plain_label, pass_dot, title2) + (ax1,)


def update_tree(parts, root, width, depth, quality, batch):
    """Value the tree <root, width, ..., width> (depth levels) at this draft quality and batch."""
    (chain, best, chain_label, best_label, yours, xlabel, title1,
     verify, plain, plain_label, pass_dot, title2, ax1) = parts
    T70, D1, four = _deployment()
    _, _, pi = _pair()
    Q, m, chain_kept, tree_kept = _curves(round(quality, 2))
    tree = trees.full_tree([root] + [width] * (depth - 1))
    N = trees.tree_nodes(tree)
    kept = kept_per_pass(tree, Q, m)
    at_root = float(pi @ sum(mi.sum(axis=1) for mi in m[:root]))
    speed = trees.tree_speedup(tree, kept, T70, D1, four, CTX, batch, costs.DRAFT_STEP_OVERHEAD_S)
    # the left axis holds still while the curves fit it (a new axis redraws the whole frame)
    style.steady_ylim(ax1, 0.0, max(tree_kept.max(), kept, 1.0), floor=0.0)
    top = ax1.get_ylim()[1]
    chain.set_ydata(chain_kept[SIZES])
    best.set_ydata(tree_kept)
    chain_label.set_y(chain_kept[256] + 0.02 * top)
    best_label.set_y(tree_kept[6])
    yours.set_data([np.log2(N)], [kept])
    xlabel.set_text(f"verified nodes N (one of {root} root candidates kept w.p. {at_root:.2f})")
    title1.set_text(f"your tree (dot): {N} nodes keep {kept:.2f}; a chain, {chain_kept[N]:.2f}")
    verify.set_ydata([_verify_ms(int(2 ** n), batch) for n in POSITIONS])
    plain.set_ydata([_verify_ms(1, batch)] * 2)
    plain_label.set_y(_verify_ms(1, batch))
    pass_dot.set_data([np.log2(N + 1)], [_verify_ms(N + 1, batch)])
    title2.set_text(f"batch {batch}: verify {_verify_ms(N + 1, batch):.1f} ms, speedup {speed:.2f}x")
    return {"nodes": N, "tree_kept": kept, "chain_kept": float(chain_kept[N]), "root_kept": at_root,
            "verify_ms": _verify_ms(N + 1, batch), "plain_ms": _verify_ms(1, batch), "speedup": speed}
