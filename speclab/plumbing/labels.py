"""Many short labels in one style, drawn as kept pictures of their texts (a live widget's numbers).

Agg lays a Text out and rasterises its glyphs afresh on every draw, about a millisecond each, and
notebook 01's lanes write the tokens kept on every verify pass: up to 96 one-digit counts per slider
move, most of that move's drawing. `Labels` draws each distinct string once, as a matplotlib Text on
a scratch canvas, keeps its pixels, and stamps them where the string goes: the same glyphs, to
within a pixel of where a Text would put them.
"""
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform

_PAD = 64   # the scratch canvas' half-width in pixels: room for a short label at any alignment


class Labels(Artist):
    """Short texts at data points, all in one style (Text's keywords: color, fontsize, ha, va, ...).

    ax.add_artist(Labels(...)) puts them on an axis (in its data coordinates); set_labels(xy, texts)
    changes them. Like a Text, they are not clipped to the axes.
    """

    zorder = 3   # as a Text's: above lines and patches

    def __init__(self, **text_kw):
        super().__init__()
        self.set_clip_on(False)
        self._kw = text_kw
        self._xy, self._texts = np.empty((0, 2)), []
        self._stamps = {}   # (text, dpi) -> (RGBA pixels, x and y offset from the anchor's pixel)

    def set_labels(self, xy, texts):
        self._xy, self._texts = np.asarray(xy, dtype=float).reshape(-1, 2), list(texts)
        self.stale = True

    def _stamp(self, text, dpi):
        key = (text, dpi)
        if key not in self._stamps:
            renderer = RendererAgg(2 * _PAD, 2 * _PAD, dpi)
            label = Text(_PAD, _PAD, text, transform=IdentityTransform(), **self._kw)
            label.figure = self.figure   # Text reads the dpi from its figure
            label.draw(renderer)
            pixels = np.asarray(renderer.buffer_rgba())
            rows, cols = np.nonzero(pixels[..., 3])
            if not len(rows):
                self._stamps[key] = None
            else:
                top, bottom, left, right = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
                # Agg's draw_image takes the rows bottom first, placed from the image's bottom edge,
                # counted up from the canvas' bottom
                self._stamps[key] = (pixels[top:bottom, left:right][::-1].copy(), left - _PAD, _PAD - bottom)
        return self._stamps[key]

    def draw(self, renderer):
        if not self.get_visible() or not self._texts:
            return
        points = self.get_transform().transform(self._xy)
        gc = renderer.new_gc()
        gc.set_clip_rectangle(self.axes.bbox if self.axes and self.get_clip_on() else None)
        for (x, y), text in zip(points, self._texts):
            stamp = self._stamp(text, renderer.dpi)
            if stamp is not None:
                pixels, dx, dy = stamp
                renderer.draw_image(gc, round(x) + dx, round(y) + dy, pixels)
        gc.restore()
        self.stale = False
