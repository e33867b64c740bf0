"""Each notebook's widget figure, off the reading path: `nbNN.build_<thing>(fig, ...)` draws what no
control changes and returns the parts that move; `nbNN.update_<thing>(parts, ...)` moves them and
returns the numbers it plotted. A notebook wires them to its controls with `speclab.widgets.live`
(or draws everything in one `draw_<thing>(fig, ...)` with `speclab.widgets.redrawing`)."""
