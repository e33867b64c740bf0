"""speclab.plumbing.fastagg: a canvas that keeps laid-out text and rendered glyphs draws what matplotlib's draws."""
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from speclab.plumbing import fastagg


def _figure(shift):
    """Text of every kind a widget draws: a title with non-Latin glyphs, rotated and small labels, a
    legend with mathtext (whose fraction bar is a box, not a glyph), tick labels; `shift` moves one
    label by a fraction of a pixel, so its glyphs fall elsewhere within their pixels."""
    fig = Figure(figsize=(5, 3), dpi=100)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 2], label=r"$\frac{a}{b}$ curve")
    ax.set_title(f"Best k = 4 (2.41x); {shift:.3f}: (1 − aᵏ⁺¹)/(1 − a)")
    ax.set(xlabel="draft cost c", ylabel="speedup")
    ax.text(0.3 + shift, 1.1, "moved label 123", fontsize=7, rotation=30)
    ax.text(0.6, 0.4, "bold", fontsize=11, fontweight="bold", color="white", backgroundcolor="black")
    ax.legend()
    return fig


def _pixels(canvas):
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("shift", [0.0, 0.0013, 0.21])
def test_fast_canvas_draws_matplotlibs_pixels_first_time_and_from_the_cache(shift):
    stock = _pixels(FigureCanvasAgg(_figure(shift)))
    fast = fastagg.Canvas(_figure(shift))
    first, again = _pixels(fast), _pixels(fast)
    assert fast.get_renderer().__class__ is not FigureCanvasAgg(Figure()).get_renderer().__class__, (
        "the caching renderer is the one in use")
    for drawn, when in ((first, "first draw"), (again, "drawn again from the cache")):
        differ = int((drawn != stock).any(axis=2).sum())
        assert differ == 0, f"{when}, shift {shift}: {differ} pixels differ from matplotlib's own renderer"


def test_caches_stay_bounded(monkeypatch):
    monkeypatch.setattr(fastagg, "MAX_GLYPHS", 50)
    monkeypatch.setattr(fastagg, "MAX_LAYOUTS", 5)
    canvas = fastagg.Canvas(_figure(0.0))
    for shift in np.linspace(0, 1, 12):
        canvas.figure.axes[0].set_title(f"{shift:.4f}")
        _pixels(canvas)
    assert len(fastagg._glyphs) <= 50 and len(fastagg._layouts) <= 5
