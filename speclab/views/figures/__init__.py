"""The notebooks' widget figures, one module per notebook (nb01 ... nb10), off the reading path.

Each widget is a pair used through speclab.views.widgets.live:

    build_<thing>(fig, ...)       draws what no control changes, once; returns the parts a move changes
    update_<thing>(parts, ...)    sets those parts to the controls' values; returns what it plotted

(or one draw_<thing>(fig, ...) used through speclab.views.widgets.redrawing). The notebook keeps the
call to live() with its controls, so a learner reads the sliders, their ranges and labels at a
glance, and the figure's plumbing lives here. What update returns is widget.result, which tests
read through speclab.views.widgets.probe.
"""
