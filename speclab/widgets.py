"""Small builders for the course's widgets: controls that redraw one figure.

A widget here is ipywidgets' `interactive` around a draw function. The draw function
gets a cleared matplotlib figure and the control values, draws, and returns the
numbers it plotted; that return value is `widget.result`, which is how tests check
a widget without rendering it.

A slider redraws while it is dragged, so a redraw must stay within about 100 ms
(`make bench`, section widgets). Most of that time is matplotlib's, so each widget
keeps one figure for its whole life and renders it exactly once per move: the inline
backend's default (a new figure, saved with bbox_inches="tight") rasterises every
figure twice, once only to measure it. The figure's "tight" layout engine keeps the
labels inside it instead, and the PNG is written with fast compression: a bigger
image over a local connection costs less than a slower redraw.
"""
from io import BytesIO

import ipywidgets as W
from IPython.display import Image, display
from matplotlib.figure import Figure

DPI = 100
PNG_OPTIONS = {"compress_level": 1}


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


def dropdown(options, value, description):
    return W.Dropdown(options=options, value=value, description=description,
                      style={"description_width": "initial"})


def new_figure(figsize):
    """A figure outside pyplot (nothing else ever shows or leaks it), laid out tight."""
    return Figure(figsize=figsize, dpi=DPI, layout="tight")


def png(fig):
    """The figure as PNG bytes: one rasterisation."""
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, pil_kwargs=PNG_OPTIONS)
    return buf.getvalue()


def redrawing(draw, figsize=(7.0, 3.6), **controls):
    """An interactive widget: each change clears its figure, calls draw(fig, **values) and shows it.

    Returns the `interactive`; its .result is what draw returned for the current values.
    """
    fig = new_figure(figsize)

    def update(**values):
        fig.clear()
        result = draw(fig, **values)
        display(Image(data=png(fig), format="png"))
        return result

    widget = W.interactive(update, **controls)
    widget._draw, widget._figsize = draw, figsize  # for probe()
    return widget


def probe(widget, description, value):
    """What `widget` would draw with the control labelled `description` set to `value`.

    Works on a twin that is never displayed (its state carries over from one probe to the
    next), so checking a widget's numbers from a cell never touches the figure on the page.
    """
    names = {c.description: c._kwarg for c in widget.kwargs_widgets}
    if description not in names:
        raise KeyError(f"no control labelled {description!r}; the controls are {sorted(names)}")
    state = widget.__dict__.setdefault("_probe_state", dict(widget.kwargs))
    state[names[description]] = value
    return widget._draw(new_figure(widget._figsize), **state)


def set_value(widget, description, value):
    """Set the control labelled `description` on the widget itself and return widget.result.

    For callbacks (a button that moves a slider); to check numbers from a cell, use probe().
    """
    for child in widget.children:
        if getattr(child, "description", None) == description:
            child.value = value
            return widget.result
    raise KeyError(f"no control labelled {description!r}")
