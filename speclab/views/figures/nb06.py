"""Notebook 06's widget: the speedup against the draft's price c, and where it crosses 1.

For an acceptance alpha and a look-ahead k the curve is tokens / (1 + k c) over c in [0, 1],
with tokens = (1 - alpha^(k+1)) / (1 - alpha); the dashed line is the break-even price
c* = (tokens - 1) / k, the dot the chosen c, and two dotted lines mark a draft's price by size
and measured (the notebook passes them in).
"""
import numpy as np

from .. import style, widgets

CS = np.linspace(0, 1, 201)


def build_break_even(fig, marks):
    """What no control changes, drawn once, with a dotted line at each price in `marks`
    (c by size, c measured); returns the artists a move changes."""
    fig.set_layout_engine("none")   # fixed margins: a layout pass on every move would double the drawing
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.9)
    ax = fig.add_subplot()
    ax.axhline(1, color=style.COLORS["floor"], lw=1)
    for c in marks:
        ax.axvline(c, color=style.COLORS["draft"], lw=1, ls=":")
    ax.set(xlabel="draft cost c (dotted: the 1B draft's price by size and measured)", ylabel="speedup", xlim=(-0.05, 1.05))
    curve, = ax.plot(CS, CS, color=style.COLORS["target"])
    c_star = ax.axvline(0.5, color=style.COLORS["rejected"], ls="--", label="break-even")
    dot, = ax.plot([0], [0], "o", ms=9, label="c")
    title = ax.set_title(" ", y=1.0)
    legend = ax.legend(loc="upper right")
    return widgets.moving(curve, c_star, dot, title, legend) + (ax,)


def update_break_even(parts, alpha, k, c):
    """Redraw the curve for (alpha, k), the break-even line and the dot at c; returns the numbers."""
    curve, c_star_line, dot, title, legend, ax = parts
    tokens = k + 1.0 if alpha == 1 else (1 - alpha ** (k + 1)) / (1 - alpha)
    c_star = (tokens - 1) / k
    s = tokens / (1 + k * c)
    curve.set_ydata(tokens / (1 + k * CS))
    c_star_line.set_xdata([c_star, c_star])
    colour = style.COLORS["accepted"] if s > 1 else style.COLORS["rejected"]
    dot.set_data([c], [s])
    dot.set_color(colour)
    legend.legend_handles[1].set_color(colour)
    for text, label in zip(legend.get_texts(), (f"break-even c* = {c_star:.3f}", f"c = {c:.2f}: {s:.3f}x")):
        text.set_text(label)
    verdict = "faster" if s > 1 else ("break-even" if s == 1 else "SLOWER")
    title.set_text(f"{tokens:.2f} tokens per call: at c = {c:.2f} speculation is {verdict}")
    # the y axis holds still while the curve fits it (a new axis redraws the whole frame)
    style.steady_ylim(ax, 0.0, max(1.5, tokens), floor=0.0)
    return {"tokens": tokens, "c_star": c_star, "speedup": s, "faster": bool(s > 1)}
