"""Small builders for the course's widgets: controls that change one figure.

A widget here is ipywidgets' `interactive` around an update function that returns the
numbers it plotted; that return value is `widget.result`, which is how tests check a
widget without rendering it (`probe`).

A slider redraws while it is dragged, so a move must cost at most about 100 ms
(`make bench`, section widgets). Measured here, nearly all of that is matplotlib laying
out and rasterising text (tick labels, titles, legends), not the course's numbers. So
`live` widgets build their figure once and, on a move, change only the artists that
move: the rest is rasterised once and kept as a background, the moving artists are
drawn on top of a copy of it, and the pixels go straight to a fast PNG encoder. If a
move changes an axis' limits, the background is rasterised again, so a figure's frame
is never stale; the last few frames' backgrounds are kept, so moving back to limits
already shown costs no redraw, and the layout of the first frame is kept for the rest. The
canvas keeps the glyphs it has rendered (speclab.plumbing.fastagg): a move's text is mostly glyphs drawn
before, and a glyph kept costs a blit instead of FreeType's hinting and rasterising.

`redrawing` is the simple form (clear, draw everything, show) for figures that are
cheap or change their whole structure on every move.

Either shows its figure in an ipywidgets Image whose value (the PNG's bytes) is replaced on a
move, not as a new display output: the bytes travel as one binary comm message and the page
swaps one <img>'s source, where an output would travel as base64 text, be captured by an Output
widget (which echoes its whole content, the PNG included, back to the kernel) and be rendered as
a new output element (issue 30: latency as a learner feels it, about 20% of each move).
"""
import struct
import time
import zlib

import ipywidgets as W
import numpy as np
from IPython import get_ipython
from IPython.display import clear_output
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..plumbing import fastagg
from ..plumbing.pending import unsolved

DPI = 100
ZLIB_LEVEL = 1   # the PNG's compression: fastest; a figure's flat colours pack well even so


def slider(value, lo, hi, step, description, fmt=None, continuous=True):
    """A float (or int, if every argument is an int) slider.

    It redraws while dragged; pass continuous=False for a control whose redraw honestly needs
    a simulation, so it redraws once, on release.
    """
    if all(isinstance(v, int) for v in (value, lo, hi, step)):
        return W.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                           continuous_update=continuous, style={"description_width": "initial"})
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         readout_format=fmt or ".2f", continuous_update=continuous,
                         style={"description_width": "initial"})


def log_slider(value, lo, hi, description, continuous=True):
    """An int slider whose stops are spaced evenly in log scale: every power of two from lo to hi and
    the half-way stop 1.5x each (1, 2, 3, 4, 6, 8, 12, ...). ipywidgets has no log IntSlider, and a
    linear one from 1 to 1024 puts every batch below 100 in its first few pixels."""
    stops = sorted({n for p in range(0, hi.bit_length() + 1) for n in (2 ** p, 3 * 2 ** p // 2)
                    if lo <= n <= hi and n >= 1} | {value})
    return W.SelectionSlider(options=stops, value=value, description=description, continuous_update=continuous,
                             style={"description_width": "initial"})


def dropdown(options, value, description):
    return W.Dropdown(options=options, value=value, description=description,
                      style={"description_width": "initial"})


def new_figure(figsize):
    """A figure outside pyplot (nothing else ever shows or leaks it), laid out tight."""
    return Figure(figsize=figsize, dpi=DPI, layout="tight")


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode(canvas):
    """The canvas' current pixels as PNG bytes (no second rasterisation).

    Written here rather than by PIL: PIL tries a PNG filter on every row, which took two thirds
    of the encoding; a figure is mostly flat colour, which zlib packs as small unfiltered."""
    width, height = canvas.get_width_height(physical=True)
    rows = np.empty((height, 1 + 4 * width), dtype=np.uint8)
    rows[:, 0] = 0   # each row's filter: none
    rows[:, 1:] = np.asarray(canvas.buffer_rgba()).reshape(height, 4 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)   # 8-bit RGBA, not interlaced
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), ZLIB_LEVEL)) + _chunk(b"IEND", b""))


def png(fig):
    """The figure as PNG bytes: one rasterisation, on a canvas of its own (the figure's own canvas,
    a live widget's screen among them, is left as it was)."""
    own = fig.canvas
    try:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        return encode(canvas)
    finally:
        fig.set_canvas(own)


def moving(*artists):
    """Mark artists that a live widget's update changes; returns the first (or all) of them.

    A moving artist is left out of the kept background and drawn afresh on every move.
    """
    for artist in artists:
        artist.set_animated(True)
    return artists[0] if len(artists) == 1 else artists


def _moving_artists(fig):
    found = [a for ax in fig.axes for a in ax.get_children() if a.get_animated()]
    found += [a for a in fig.get_children() if a.get_animated()]
    return sorted(found, key=lambda a: a.get_zorder())


def _frame(fig):
    """What the kept background depends on beyond the static artists: each axis' limits."""
    return tuple((ax.get_xlim(), ax.get_ylim()) for ax in fig.axes)


# Backgrounds a live widget keeps, one per frame (axis limits) it has shown, most recent last: a
# learner dragging a slider back and forth across a step of an axis finds the frame already drawn.
KEPT_FRAMES = 8


class _Screen:
    """One figure on one canvas, with its kept backgrounds; records each move's cost."""

    def __init__(self, fig):
        self.fig, self.canvas = fig, fastagg.Canvas(fig)   # keeps glyphs: text is most of a move
        self.background = self.frame = None
        self.backgrounds = {}   # frame -> background (live widgets only)
        self.timings = []   # (update, rasterise, encode+show) in CPU seconds, per move
        # the figure on the page, replaced in place on a move; hidden while it has no picture (an
        # empty image shows as a broken one)
        self.image = W.Image(format="png", layout=W.Layout(display="none"))

    def _background(self, frame):
        """The kept background for this frame, drawn now if it is not kept yet."""
        if frame in self.backgrounds:
            self.backgrounds[frame] = self.backgrounds.pop(frame)   # most recent last
            return self.backgrounds[frame]
        self.canvas.draw()                           # moving artists are skipped here
        if self.frame is None and self.fig.get_layout_engine() is not None:
            # The layout of the first frame is kept: laying a figure out costs as much as drawing
            # it, and a frame drawn again after a rescale then costs half (and its axes keep their
            # place instead of jumping by a pixel as tick labels change width).
            self.fig.set_layout_engine("none")
        self.backgrounds[frame] = self.canvas.copy_from_bbox(self.fig.bbox)
        while len(self.backgrounds) > KEPT_FRAMES:
            del self.backgrounds[next(iter(self.backgrounds))]
        return self.backgrounds[frame]

    def hide(self):
        self.image.layout.display = "none"

    def show(self, started, updated, blit):
        if blit:
            frame = _frame(self.fig)
            if self.background is None or frame != self.frame:
                self.background = self._background(frame)
                self.frame = frame
            self.canvas.restore_region(self.background)
            for artist in _moving_artists(self.fig):
                (artist.axes or self.fig).draw_artist(artist)
        else:
            self.canvas.draw()
        drawn = time.process_time()
        self.image.value = encode(self.canvas)
        if self.image.layout.display is not None:
            self.image.layout.display = None
        self.timings.append((updated - started, drawn - updated, time.process_time() - drawn))


class _Interactive(W.interactive):
    """ipywidgets' interactive whose figure is the screen's Image widget, below its Output.

    ipywidgets' own update captures every call in the Output: two state messages and a
    clear_output per move, which the page echoes back to the kernel. Here the Output is used only
    by an update that displays something beside its figure (marked with `displays`), and to show
    an update's error, in place of the figure: for a widget that draws the learner's exercises (`needs`
    names them), an unsolved one's NotImplementedError as pending.needs shows it, in one line."""

    def __init__(self, update_and_show, screen, twin, captures, needs, /, **controls):
        self._screen, self._twin = screen, twin   # for make bench, and for probe()
        self._captures, self._failed, self._needs = captures, False, needs
        super().__init__(update_and_show, **controls)
        self.children = (*self.children, screen.image)

    def update(self, *args):
        self.kwargs = {w._kwarg: w.get_interact_value() for w in self.kwargs_widgets}
        try:
            if self._captures:
                with self.out:
                    clear_output(wait=True)
                    self.result = self.f(**self.kwargs)
            else:
                self.result = self.f(**self.kwargs)
        except Exception as err:
            self._failed = True
            self._screen.hide()   # no figure from before the error
            with self.out:
                if not self._captures:
                    clear_output(wait=True)
                shell = get_ipython()
                if self._needs and isinstance(err, NotImplementedError):
                    print(unsolved(self._needs))
                elif shell is None:   # as ipywidgets does outside IPython
                    self.log.warning("Exception in interact callback: %s", err, exc_info=True)
                else:
                    shell.showtraceback()
        else:
            if self._failed and not self._captures:
                self.out.clear_output()
            self._failed = False


def displays(update):
    """Mark an update (or draw) function that displays something beside its figure (a coloured
    text, say): what it displays goes to the widget's Output, above the figure, replaced on each move."""
    update.displays = True
    return update


def live(build, update, figsize=(7.0, 3.6), needs=None, **controls):
    """A widget whose figure is built once and updated in place.

    build(fig) draws everything no control changes and returns `parts`: the artists (in any
    container) that update will change, each marked with moving(). update(parts, **values)
    changes them (set_data, set_height, set_text, ...) and returns what it plotted, which
    becomes widget.result. An update may also change axis limits; the frame is then redrawn.
    `needs`, for an update that calls the learner's exercises, names them as pending.needs does:
    while one is unsolved the widget shows that one line instead of a traceback.
    """
    screen = _Screen(new_figure(figsize))
    parts = build(screen.fig)

    def update_and_show(**values):
        started = time.process_time()
        result = update(parts, **values)
        screen.show(started, time.process_time(), blit=True)
        return result

    def twin():
        fig = new_figure(figsize)
        twin_parts = build(fig)
        return lambda **values: update(twin_parts, **values)

    return _Interactive(update_and_show, screen, twin, getattr(update, "displays", False), needs, **controls)


def redrawing(draw, figsize=(7.0, 3.6), **controls):
    """An interactive widget: each change clears its figure, calls draw(fig, **values) and shows it.

    Returns the `interactive`; its .result is what draw returned for the current values.
    """
    screen = _Screen(new_figure(figsize))

    def update_and_show(**values):
        started = time.process_time()
        screen.fig.clear()
        result = draw(screen.fig, **values)
        screen.show(started, time.process_time(), blit=False)
        return result

    def twin():
        return lambda **values: draw(new_figure(figsize), **values)

    return _Interactive(update_and_show, screen, twin, getattr(draw, "displays", False), None, **controls)


def probe(widget, description, value):
    """What `widget` would draw with the control labelled `description` set to `value`.

    Works on a twin that is never displayed (its state carries over from one probe to the
    next), so checking a widget's numbers from a cell never touches the figure on the page.
    """
    names = {c.description: c._kwarg for c in widget.kwargs_widgets}
    if description not in names:
        raise KeyError(f"no control labelled {description!r}; the controls are {sorted(names)}")
    state = widget.__dict__.setdefault("_probe_state", dict(widget.kwargs))
    if "_probe_update" not in widget.__dict__:
        widget._probe_update = widget._twin()
    state[names[description]] = value
    return widget._probe_update(**state)


def set_value(widget, description, value):
    """Set the control labelled `description` on the widget itself and return widget.result.

    For callbacks (a button that moves a slider); to check numbers from a cell, use probe().
    """
    for child in widget.children:
        if getattr(child, "description", None) == description:
            child.value = value
            return widget.result
    raise KeyError(f"no control labelled {description!r}")
