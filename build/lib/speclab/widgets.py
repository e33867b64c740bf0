"""Small builders for the course's widgets: controls that redraw one figure.

A widget here is ipywidgets' `interactive` around a draw function. The draw function
gets a fresh matplotlib figure and the control values, draws, and returns the
numbers it plotted; that return value is `widget.result`, which is how tests check
a widget without rendering it.
"""
import ipywidgets as W
import matplotlib.pyplot as plt


def slider(value, lo, hi, step, description, fmt=None):
    """A float (or int, if every argument is an int) slider that updates while dragging."""
    if all(isinstance(v, int) for v in (value, lo, hi, step)):
        return W.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                           continuous_update=True, style={"description_width": "initial"})
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         readout_format=fmt or ".2f", continuous_update=True,
                         style={"description_width": "initial"})


def dropdown(options, value, description):
    return W.Dropdown(options=options, value=value, description=description,
                      style={"description_width": "initial"})


def redrawing(draw, figsize=(7.0, 3.6), **controls):
    """An interactive widget: each change calls draw(fig, **values) on a new figure and shows it.

    Returns the `interactive`; its .result is what draw returned for the current values.
    """
    def update(**values):
        fig = plt.figure(figsize=figsize)
        try:
            result = draw(fig, **values)
            plt.show()
        finally:
            plt.close(fig)  # headless tests redraw hundreds of times; never leak figures
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
    fig = plt.figure(figsize=widget._figsize)
    try:
        return widget._draw(fig, **state)
    finally:
        plt.close(fig)


def set_value(widget, description, value):
    """Set the control labelled `description` on the widget itself and return widget.result.

    For callbacks (a button that moves a slider); to check numbers from a cell, use probe().
    """
    for child in widget.children:
        if getattr(child, "description", None) == description:
            child.value = value
            return widget.result
    raise KeyError(f"no control labelled {description!r}")
