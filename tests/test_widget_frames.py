"""speclab.widgets' live widgets across axis rescales: recent frames are kept, the first layout too.

A move that rescales an axis needs the figure's static part drawn again (its frame); a learner who drags
a slider back and forth across such a step should not pay for it twice (issue 30: latency as felt).
"""
import io
from unittest import mock

import numpy as np

from speclab import widgets

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
