"""speclab.views.widgets: redrawing and live widgets show what they drew, in place, with the pixels of a full redraw."""
import io
from unittest import mock

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from speclab.views import widgets


@pytest.fixture(autouse=True)
def no_figures_before():
    """The tests below check that a widget leaves nothing in pyplot: start from nothing there, whatever a test run
    earlier in the same worker left (a full run's xdist order left one figure open)."""
    plt.close("all")


def test_redrawing_widget_returns_what_it_drew():
    calls = []

    def draw(fig, k):
        calls.append(k)
        fig.add_subplot().plot(range(k))
        return k * 2

    w = widgets.redrawing(draw, k=widgets.slider(2, 1, 5, 1, "k"))
    assert w.result == 4
    assert widgets.set_value(w, "k", 5) == 10 and calls[-1] == 5
    with pytest.raises(KeyError):
        widgets.set_value(w, "nope", 1)
    assert plt.get_fignums() == [], "the widget closes its figures"
    calls.clear()
    assert widgets.probe(w, "k", 3) == 6 and w.children[0].value == 5 and w.result == 10, (
        "probe computes on a twin and leaves the displayed widget alone")
    assert widgets.probe(w, "k", 1) == 2 and calls == [3, 1]
    with pytest.raises(KeyError):
        widgets.probe(w, "nope", 1)


def _speed_widget():
    """A small live widget: a curve, a dot and a title move; an axis and a line stay."""
    xs = np.linspace(0, 1, 101)

    def build(fig):
        ax = fig.add_subplot()
        ax.axhline(1, color="grey")
        ax.set(xlim=(0, 1), ylim=(0, 3), xlabel="c", ylabel="speedup")
        curve, = ax.plot(xs, xs)
        dot, = ax.plot([0], [0], "o")
        return widgets.moving(curve, dot, ax.set_title(""))

    def update(parts, a, c):
        curve, dot, title = parts
        curve.set_ydata(a / (1 + xs))
        dot.set_data([c], [a / (1 + c)])
        title.set_text(f"a = {a:.1f}")
        return a / (1 + c)

    return widgets.live(build, update, a=widgets.slider(2.0, 0.5, 4.0, 0.5, "a"),
                        c=widgets.slider(0.5, 0.0, 1.0, 0.25, "c"))


def _pixels(png_bytes):
    import io

    from PIL import Image as PILImage
    return np.asarray(PILImage.open(io.BytesIO(png_bytes)).convert("RGB"), dtype=int)


def test_live_widget_updates_in_place_and_shows_the_same_pixels_as_a_full_redraw():
    w = _speed_widget()
    assert w.result == 2.0 / 1.5
    fig = w._screen.fig
    axes_before = fig.axes[0]
    assert widgets.set_value(w, "c", 1.0) == 1.0 and fig.axes[0] is axes_before, "the figure is kept, not rebuilt"
    assert widgets.set_value(w, "a", 3.0) == 1.5
    shown = _pixels(widgets.encode(w._screen.canvas))
    # the same state drawn from scratch, every artist in one full rasterisation
    for artist in fig.findobj(lambda a: a.get_animated()):
        artist.set_animated(False)
    full = _pixels(widgets.png(fig))
    assert shown.shape == full.shape
    # Moving artists are drawn last, so where one crosses the frame (a spine, a tick) it lies on
    # top of it: a few dozen pixels of 252,000. Anything else would be a stale or missing artist.
    differ = (np.abs(shown - full).max(axis=2) > 2).mean()
    assert differ < 1e-3, f"a move shows what a full redraw of the same state shows ({differ:.2%} of pixels differ)"
    assert plt.get_fignums() == [], "the widget's figure stays outside pyplot"


def test_live_widget_redraws_its_frame_when_limits_change():
    w = _speed_widget()
    ax = w._screen.fig.axes[0]
    widgets.set_value(w, "a", 2.5)
    frame = w._screen.frame
    ax.set_ylim(0, 6)   # what an update that rescales does
    widgets.set_value(w, "a", 3.0)
    assert w._screen.frame != frame and w._screen.frame[0][1] == (0, 6), "new limits, new background"


def test_live_widget_probe_uses_a_twin():
    w = _speed_widget()
    assert widgets.probe(w, "c", 0.0) == 2.0 and w.result == 2.0 / 1.5
    assert widgets.probe(w, "a", 4.0) == 4.0, "the twin keeps c = 0 from the previous probe"
    assert w.children[0].value == 2.0 and len(w._screen.timings) == 1, "the shown widget did not move"
    with pytest.raises(KeyError):
        widgets.probe(w, "nope", 1)


def test_png_leaves_a_live_widgets_canvas_alone():
    w = _speed_widget()
    fig = w._screen.fig
    widgets.png(fig)
    assert fig.canvas is w._screen.canvas, "a picture of the figure must not steal the widget's canvas"
    widgets.set_value(w, "c", 1.0)
    assert w.result == 1.0


# Across axis rescales: recent frames are kept, the first layout too. A move that rescales an axis needs
# the figure's static part drawn again (its frame); a learner who drags a slider back and forth across
# such a step should not pay for it twice (issue 30: latency as felt).
STEP = 0.9   # the axis' top steps by 1 each time the line's top passes a multiple of this


def _build(fig):
    ax = fig.add_subplot()
    x = np.arange(6)
    ax.bar(x, np.linspace(0.1, 0.5, 6), label="p")
    ax.set_xticks(x, list("abcdef"))
    ax.legend(loc="upper left")
    line, = ax.plot(x, 0.1 * x, "o-")
    return widgets.moving(line), widgets.moving(ax.set_title(""))


def _update(parts, s):
    line, title = parts
    y = np.linspace(0.1, 0.5, 6) * s
    line.set_ydata(y)
    title.set_text(f"s = {s:.2f}")
    title.axes.set_ylim(0, float(np.ceil(y.max() / STEP)))
    return float(y.max())


def _pixels(png):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def test_a_frame_shown_before_is_not_drawn_again_and_is_not_stale():
    w = widgets.live(_build, _update, s=widgets.slider(1.0, 0.5, 30.0, 0.1, "s"))
    screen = w._screen
    with mock.patch.object(screen.canvas, "draw", wraps=screen.canvas.draw) as draw:
        widgets.set_value(w, "s", 1.9)   # rescale: a new frame, drawn
        assert draw.call_count == 1 and screen.frame[0][1] == (0, 2.0)
        widgets.set_value(w, "s", 1.7)   # back: the first frame is kept
        widgets.set_value(w, "s", 1.9)   # and forth: so is the second
        widgets.set_value(w, "s", 1.0)
        assert draw.call_count == 1, f"frames shown before were drawn again ({draw.call_count} draws)"
    shown = _pixels(widgets.encode(screen.canvas))
    for artist in screen.fig.findobj(lambda a: a.get_animated()):
        artist.set_animated(False)
    full = _pixels(widgets.png(screen.fig))
    differ = (np.abs(shown - full).max(axis=2) > 2).mean()
    assert differ < 1e-3, f"a kept frame shows what a full redraw shows ({differ:.2%} of pixels differ)"


def test_at_most_kept_frames_are_kept_and_the_first_layout_stays():
    w = widgets.live(_build, _update, s=widgets.slider(1.0, 0.5, 30.0, 0.1, "s"))
    screen = w._screen
    ax = screen.fig.axes[0]
    position = ax.get_position().bounds
    for k in range(1, widgets.KEPT_FRAMES + 5):
        widgets.set_value(w, "s", round(2 * STEP * k + 0.1, 1))   # a new top every move
    assert len(screen.backgrounds) == widgets.KEPT_FRAMES
    assert ax.get_position().bounds == position, "the axes keep the place the first layout gave them"


def test_encode_is_a_png_of_exactly_the_canvas_pixels():
    from PIL import Image
    w = _speed_widget()
    canvas = w._screen.canvas
    png = widgets.encode(canvas)
    decoded = Image.open(io.BytesIO(png))
    decoded.load()   # checks every chunk's CRC and the compressed data
    assert decoded.format == "PNG" and decoded.mode == "RGBA"
    assert np.array_equal(np.asarray(decoded), np.asarray(canvas.buffer_rgba())), "lossless, row for row"
    assert w._screen.image.value == png, "the Image widget shows these bytes"


def test_log_slider_steps_evenly_in_log_scale():
    s = widgets.log_slider(1, 1, 1024, "batch")
    assert list(s.options) == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
    assert s.value == 1 and s.description == "batch"
    assert 119 in widgets.log_slider(119, 1, 1024, "batch").options   # a value off the grid is kept as a stop


def test_a_live_widget_that_needs_an_unsolved_exercise_shows_needs_one_line(capsys):
    """needs=: while the learner's function raises NotImplementedError the widget shows pending's one line (no
    traceback, no figure); probe raises it, so a check cell inside needs(...) prints its line too; solved, it draws."""
    solved = []

    def build(fig):
        return widgets.moving(fig.subplots().set_title(""))

    def update(title, x):
        if not solved:
            raise NotImplementedError
        title.set_text(f"x = {x}")
        return x

    w = widgets.live(build, update, needs="Exercise A (f)", x=widgets.slider(1, 0, 3, 1, "x"))
    # in its Output (outside a kernel the Output passes it to stdout)
    assert capsys.readouterr().out.endswith("Solve Exercise A (f) first: this cell shows its results.\n")
    assert w._screen.image.layout.display == "none", "no figure while the exercise is unsolved"
    with pytest.raises(NotImplementedError):
        widgets.probe(w, "x", 2)
    solved.append(True)
    assert widgets.set_value(w, "x", 3) == 3 and w.out.outputs == () and w._screen.image.layout.display is None
