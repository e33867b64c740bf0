"""speclab.plumbing.labels: many short labels drawn as kept pictures of their texts, as Texts would draw them."""
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from speclab.plumbing.labels import Labels

STYLE = dict(ha="center", va="center", color="white", fontsize=7)


def _lane(use_labels, xs):
    """Counts written on a coloured bar, on axes whose data coordinates are pixels."""
    fig = Figure(figsize=(4, 1), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1), xlim=(0, 400), ylim=(0, 100))
    ax.barh([50], [400], height=40, color="tab:green")
    texts = [str(1 + i % 9) for i in range(len(xs))] + ["10", "3.4"]
    xy = [(x, 50) for x in xs] + [(360, 30), (380, 70)]
    if use_labels:
        labels = ax.add_artist(Labels(**STYLE))
        labels.set_labels(xy, texts)
        labels.set_labels(xy, texts)   # set again: replaces, does not add
    else:
        for (x, y), text in zip(xy, texts):
            ax.text(x, y, text, **STYLE)
    fig.canvas.draw()
    fig.canvas.draw()   # the second draw stamps from the kept pictures
    return np.asarray(fig.canvas.buffer_rgba()).astype(int)


def test_labels_draw_the_pixels_texts_draw_at_whole_pixels():
    xs = np.arange(12, 340, 25)
    texts, labels = _lane(False, xs), _lane(True, xs)
    assert (texts[..., 3] > 0).all()
    differ = int((texts != labels).any(axis=2).sum())
    assert differ == 0, f"{differ} pixels differ from the same labels drawn as Texts (on top of the bar)"


def test_labels_fall_within_a_pixel_of_texts_anywhere():
    """Off whole pixels, a Text places each glyph to a 64th of a pixel, a label at the nearest pixel:
    the same glyphs, each label's ink centred within a pixel of the Text's."""
    xs = np.arange(12, 340, 25) + 0.37
    bare = _lane(True, [])
    texts, labels = (np.abs(_lane(use, xs) - bare).sum(axis=2) for use in (False, True))
    for x in xs:
        window = (slice(35, 65), slice(int(x) - 8, int(x) + 9))
        centres = []
        for ink in (texts[window], labels[window]):
            assert ink.sum() > 1000, f"a label at x = {x} is drawn"
            rows, cols = np.indices(ink.shape)
            centres.append(np.array([(rows * ink).sum(), (cols * ink).sum()]) / ink.sum())
        assert np.abs(centres[0] - centres[1]).max() < 0.75, f"the label at x = {x} is off by {centres[1] - centres[0]} px"
