"""Notebook 07's widget: the hardware explainer's deployment, at every batch that fits.

Llama-3-70B as the target and Llama-3.2-1B as the draft on four cards of one accelerator. The
left panel is one round's step times at the chosen batch (plain step, k draft steps with their
overhead hatched, the verify pass), or, when the batch does not fit, its memory bill against the
cards' capacity. The right panel is the speedup over every batch 1..4096 that fits, with the
ideal draft (bytes only) dashed. The numbers come from speclab.speed.serving.deployment, priced by the
step_time and weight_bytes it is handed: the notebook hands in the learner's, used once solved and the
course's until then. What a move returns is that dict without its curves.
"""
import numpy as np
from matplotlib import rcParams
from matplotlib.ticker import MaxNLocator, NullLocator

from ...speed.hardware import load_accelerators, step_time, weight_bytes
from ...speed.serving import BATCHES, at_batch, deployment
from ..style import COLORS, steady_ylim
from ..widgets import moving

CURVE = np.unique(np.geomspace(1, 4096, 160).astype(int)) - 1  # indices of the batches the curves draw


def build_deployment(fig):
    """The deployment widget's figure without its numbers: what no control changes, drawn once.

    Returns the parts update_deployment changes (marked as moving, for speclab.views.widgets.live).
    """
    # Fixed margins and no layout engine: with any engine (even "none") savefig lays the figure
    # out in a first, unrendered draw before the real one; these margins fit the labels.
    fig.set_layout_engine(None)
    ax1, ax2 = fig.subplots(1, 2, width_ratios=[1, 1.8], gridspec_kw=dict(
        left=0.075, right=0.985, bottom=0.2, top=0.9, wspace=0.22))
    n = len(BATCHES)
    # Left, when the batch fits: one round's step times. When it does not: its memory bill.
    steps = ax1.bar([0, 1, 1, 2], [0, 0, 0, 0], bottom=[0, 0, 0, 0], hatch=["", "", "//", ""], edgecolor="white",
                    linewidth=0, color=[COLORS["plain"], COLORS["draft"], COLORS["draft"], COLORS["target"]])
    bill = ax1.bar([0, 0], [0, 0], bottom=[0, 0], color=[COLORS["plain"], COLORS["rejected"]], width=0.5)
    capacity = ax1.axhline(1, color="black", lw=1.5)
    # labels that change with a control are texts where the tick labels go, not tick labels (those are kept)
    under = ax1.get_xaxis_text1_transform(rcParams["xtick.major.pad"] + rcParams["xtick.major.size"])[0]
    tick_label = ax1.text(1, 0, " ", transform=under, ha="center", va="top", fontsize=rcParams["xtick.labelsize"])
    memory_label = ax1.text(0.3, 0, "memory", va="bottom", fontsize=8)
    weights_label = ax1.text(0, 0, "weights", ha="center", va="center", color="white", fontsize=8)
    kv_label = ax1.text(0, 0, "KV caches", ha="center", va="center", color="white", fontsize=8)
    title1 = ax1.set_title(" ", y=1.0)
    # Few ticks, no vertical grid under the bars: tick labels and grid lines are most of the drawing.
    ax1.yaxis.set_major_locator(MaxNLocator(4))
    ax1.grid(axis="x", visible=False)
    # Right: the speedup over every batch that fits; the axes hold still (batches 1..4096 on a log scale)
    ideal, = ax2.plot([1], [1], color=COLORS["target"], lw=1, ls="--")
    real, = ax2.plot([1], [1], color=COLORS["target"], lw=2)
    # Labels beside the curves' flat start instead of a legend (a legend was a fifth of a redraw).
    ideal_label = ax2.text(1.15, 0, "ideal draft (bytes only)", fontsize=8, va="bottom", color=COLORS["target"])
    real_label = ax2.text(1.15, 0, " ", fontsize=8, color=COLORS["target"])
    ax2.axhline(1, color=COLORS["floor"], ls=":", lw=1)
    full = ax2.axvspan(1, n, color=COLORS["floor"], alpha=0.25, lw=0)
    full_label = ax2.text(n * 0.9, 0.15, " ", ha="right", fontsize=8)
    dot, = ax2.plot([1], [1], "o", color=COLORS["rejected"])
    too_big = ax2.axvline(1, color=COLORS["rejected"], lw=1.5)
    title2 = ax2.set_title(" ", y=1.0)
    ax2.set(xscale="log", xlim=(0.8, n), xlabel="batch size (sequences)", ylabel="speedup")
    # Plain decade labels and fixed title positions: a log axis' default labels are mathtext ($10^2$),
    # parsed again at every redraw, and an automatic title position measures every tick label.
    ax2.set_xticks([1, 10, 100, 1000], ["1", "10", "100", "1000"])
    ax2.xaxis.set_minor_locator(NullLocator())
    ax2.yaxis.set_major_locator(MaxNLocator(5, integer=True))
    parts = moving(*steps, *bill, capacity, tick_label, memory_label, weights_label, kv_label, title1,
                   ideal, real, ideal_label, real_label, full, full_label, dot, too_big, title2)
    return {"axes": (ax1, ax2), "steps": tuple(steps), "bill": tuple(bill), "capacity": capacity,
            "tick_label": tick_label, "bill_labels": (memory_label, weights_label, kv_label), "title1": title1,
            "ideal": ideal, "real": real, "ideal_label": ideal_label, "real_label": real_label, "full": full,
            "full_label": full_label, "dot": dot, "too_big": too_big, "title2": title2, "all": parts, "mode": None,
            "curves": {}}   # the step times over the batches, kept for the next move (serving.deployment)


def update_deployment(parts, batch=1, chip="H100", context=1024, k=4, a=0.8, overhead_ms=0.8, step=step_time,
                      weights=weight_bytes):
    """Set build_deployment's parts to one setting: one round's step times at this batch (or, if the
    batch does not fit, its memory bill), and the speedup over every batch that fits in memory, each pass
    priced by `step` and the weights counted by `weights` (the learner's step_time and weight_bytes, once solved).

    Returns deployment(...) without its curves: the numbers tests read as widget.result.
    """
    r = deployment(chip, context, batch, k, a, overhead_ms, step=step, weights=weights, curves=parts["curves"])
    # a new left axis covers every accelerator, so picking another one moves the bars, not the axis (their
    # step times and memory at this batch: no curves, which a learner's step_time prices one call per batch)
    every = [r] + [at_batch(other, context, batch, k, overhead_ms, step=step, weights=weights)
                   for other in load_accelerators() if other != chip]
    cap, n = r["max_batch"], len(BATCHES)
    ax1, ax2 = parts["axes"]
    fits = r["fits"]
    if parts["mode"] != fits:   # the left panel's frame changes with the mode: new limits redraw it
        parts["mode"] = fits
        if fits:
            ax1.set_xticks([0, 1, 2], ["plain\nstep", "", "verify\npass"])
            ax1.set(xlim=(-0.6, 2.6), ylabel="ms")
        else:
            ax1.set_xticks([0], [""])
            ax1.set(xlim=(-0.8, 0.8), ylabel="GB")
        ax1.set_ylim(0, 1e-9)   # the new panel's scale is chosen below
    for bar in parts["steps"]:
        bar.set_visible(fits)
    for artist in (*parts["bill"], parts["capacity"], *parts["bill_labels"]):
        artist.set_visible(not fits)
    if fits:
        drafting = k * r["draft_bytes_ms"]
        for bar, height, bottom in zip(parts["steps"], [r["plain_ms"], drafting, k * overhead_ms, r["verify_ms"]],
                                       [0, 0, drafting, 0]):
            bar.set_height(height)
            bar.set_y(bottom)
        parts["tick_label"].set_text(f"{k} draft steps\n(// overhead)")
        parts["tick_label"].set_x(1)
        parts["title1"].set_text(f"One round at batch {batch}")
        steady_ylim(ax1, 0.0, max(r["plain_ms"], k * r["draft_ms"], r["verify_ms"]), floor=0.0,
                    cover=max(max(e["plain_ms"], k * e["draft_ms"], e["verify_ms"]) for e in every))
    else:
        used = [r["weights_gb"], r["memory_gb"] - r["weights_gb"]]
        weights, caches = parts["bill"]
        weights.set_height(used[0])
        caches.set_height(used[1])
        caches.set_y(used[0])
        parts["capacity"].set_ydata([r["capacity_gb"]] * 2)
        memory_label, weights_label, kv_label = parts["bill_labels"]
        memory_label.set_y(r["capacity_gb"])
        weights_label.set_y(used[0] / 2)
        kv_label.set_y(used[0] + used[1] / 2)
        parts["tick_label"].set_text(f"batch {batch}")
        parts["tick_label"].set_x(0)
        parts["title1"].set_text(f"Needs {r['memory_gb']:.0f} GB of {r['capacity_gb']:.0f}")
        steady_ylim(ax1, 0.0, max(r["memory_gb"], r["capacity_gb"]), floor=0.0,
                    cover=max(max(e["memory_gb"], e["capacity_gb"]) for e in every))
    shown = CURVE[CURVE < min(cap, n)]
    xs = r["batches"][shown]
    parts["ideal"].set_data(xs, r["ideal_curve"][shown])
    parts["real"].set_data(xs, r["speedup_curve"][shown])
    top, low = float(r["ideal_curve"][0]), float(r["speedup_curve"][0])
    # the right panel's axis holds still while the curves fit it (a new axis redraws the whole frame)
    steady_ylim(ax2, 0.0, max(3.2, top), floor=0.0)
    parts["ideal_label"].set_y(top + 0.06)
    close = top - low < 0.3
    parts["real_label"].set_text(f"draft + {overhead_ms:.1f} ms per step")
    parts["real_label"].set_y(low - 0.08 if close else low + 0.06)
    parts["real_label"].set_va("top" if close else "bottom")
    parts["full"].set_visible(cap < n)
    parts["full_label"].set_visible(cap < n)
    if cap < n:
        parts["full"].set_x(max(cap, 1))
        parts["full"].set_width(n - max(cap, 1))
        parts["full_label"].set_text(f"more than {cap}\ndo not fit")
    slow = r["slower_batch"]
    ending = f"slower from batch {slow}" if slow else "never slower while it fits"
    parts["dot"].set_visible(fits)
    parts["too_big"].set_visible(not fits)
    if fits:
        parts["dot"].set_data([batch], [r["speedup"]])
        parts["title2"].set_text(f"{r['speedup']:.2f}x at batch {batch}; {ending}")
        parts["title2"].set_color("black")
    else:
        parts["too_big"].set_xdata([batch, batch])
        parts["title2"].set_text(f"Batch {batch} does not fit: at most {cap} sequences")
        parts["title2"].set_color(COLORS["rejected"])
    return {key: v for key, v in r.items() if key not in ("batches", "speedup_curve", "ideal_curve")}


def draw_deployment(fig, batch=1, chip="H100", context=1024, k=4, a=0.8, overhead_ms=0.8, step=step_time,
                    weights=weight_bytes):
    """The deployment widget's figure, drawn whole on `fig` (build_deployment, then update_deployment)."""
    return update_deployment(build_deployment(fig), batch, chip, context, k, a, overhead_ms, step, weights)
