"""speclab.views.figures: the notebooks' widget figures, one module per notebook.

Each notebook's widget numbers are checked where the notebook runs (tests/test_nb*_widgets.py,
the notebooks' own probe cells); here, what holds for the package as a whole, and 07's widget,
whose figure switches between two panels.
"""
import importlib
import inspect
import pkgutil

import numpy as np

from speclab.views import figures, widgets
from speclab.speed import hardware as hw
from speclab.views.figures import nb07


def test_one_naming_scheme_build_update_or_draw():
    """Every widget is build_<thing>(fig, ...) with update_<thing>(parts, ...), or draw_<thing>(fig, ...)."""
    for info in pkgutil.iter_modules(figures.__path__):
        mod = importlib.import_module(f"speclab.views.figures.{info.name}")
        public = {n: f for n, f in vars(mod).items() if inspect.isfunction(f) and f.__module__ == mod.__name__
                  and not n.startswith("_")}
        assert not [n for n in public if n.startswith("show_")], f"{info.name}: show_* is the old name, use update_*"
        for name, f in public.items():
            if name.startswith("build_"):
                thing = name[len("build_"):]
                assert f"update_{thing}" in public, f"{info.name}.{name} has no update_{thing}"
                assert list(inspect.signature(f).parameters)[0] == "fig", f"{info.name}.{name} takes the figure first"
            if name.startswith("update_"):
                assert f"build_{name[len('update_'):]}" in public, f"{info.name}.{name} has no build_ partner"
        assert mod.__doc__, f"speclab.views.figures.{info.name} says what it draws"


def test_07_draw_deployment_marks_a_batch_that_does_not_fit():
    fig = widgets.new_figure((9.5, 3.4))
    r = nb07.draw_deployment(fig, batch=512, context=4096)
    assert not r["fits"] and "does not fit" in fig.axes[1].get_title() and "119" in fig.axes[1].get_title()
    fig.clear()
    r = nb07.draw_deployment(fig, batch=1, context=1024)
    assert r["fits"] and "2.45x" in fig.axes[1].get_title() and "slower from batch 249" in fig.axes[1].get_title()


def test_07_deployment_widget_moves_in_place_and_shows_what_a_full_redraw_shows():
    """07's widget (speclab.views.widgets.live): another accelerator or batch keeps both axes' limits (a move
    redraws only the moving artists), and after a batch that does not fit and back, the pixels are
    those of a full redraw of the same state (no stale bars, labels or ticks from the other panel)."""
    import io

    from PIL import Image as PILImage

    w = widgets.live(nb07.build_deployment, nb07.update_deployment, figsize=(9.5, 3.4),
                     batch=widgets.slider(1, 1, 1024, 1, "batch"),
                     chip=widgets.dropdown(["A100", "H100", "H200"], "H100", "4 x"),
                     context=widgets.dropdown(list(hw.CONTEXTS), 1024, "context"))
    screen = w._screen
    frame = screen.frame
    for value in ("A100", "H200", "H100"):
        widgets.set_value(w, "4 x", value)
    widgets.set_value(w, "batch", 2)
    assert screen.frame == frame, "another accelerator or the next batch keeps the axes' limits"

    def pixels(png):
        return np.asarray(PILImage.open(io.BytesIO(png)).convert("RGB"), dtype=int)

    def shows_a_full_redraw(state):
        shown = pixels(widgets.encode(screen.canvas))
        moving = screen.fig.findobj(lambda a: a.get_animated())
        for artist in moving:
            artist.set_animated(False)
        full = pixels(widgets.png(screen.fig))
        for artist in moving:
            artist.set_animated(True)
        assert screen.fig.canvas is screen.canvas, "png() draws on a canvas of its own"
        # moving artists are drawn last, so where one crosses a spine or grid line it lies on top of it
        differ = (np.abs(shown - full).max(axis=2) > 2).mean()
        assert differ < 2e-3, f"{state}: the move shows what a full redraw shows ({differ:.2%} of pixels differ)"

    assert widgets.set_value(w, "context", 4096)["max_batch"] == 119
    assert not widgets.set_value(w, "batch", 512)["fits"] and "119" in screen.fig.axes[1].get_title()
    shows_a_full_redraw("batch 512 at 4,096 context (does not fit)")
    assert widgets.set_value(w, "batch", 100)["fits"]
    shows_a_full_redraw("batch 100 after a batch that did not fit")
