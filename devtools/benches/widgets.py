"""Every widget's redraw, timed the way a slider move runs it.

Each source notebook is run top to bottom in a real kernel with the course's backend (inline,
as JupyterLab uses it). Then, in that kernel, every widget built with speclab.views.widgets (live or redrawing)
has each of its controls moved back and forth: setting a control's value runs the update
synchronously (ipywidgets' observer), which computes, draws a figure and encodes it as the PNG
the browser receives. The median of those moves is the redraw time, in CPU time of the kernel
process (all its threads): on a quiet machine that is the wall time a learner waits, and on a
shared, loaded one it stays put while the wall time (printed beside it) grows with the queue
for a core.

The share of that time is split three ways, from the widget's own record of each move
(speclab.views.widgets keeps one):
  compute  the update: the notebook's and speclab's numbers, and matplotlib building or
           changing the artists
  draw     Agg rasterising the figure (only the moving artists, for a live widget)
  encode   the rest: PNG encoding, sending the image to the front end, ipywidgets' own work

    python -m devtools.bench widgets            # every notebook
    python -m devtools.benches.widgets 05 07    # some notebooks (prints the same table)
"""
import json
import os
import sys
import time

import nbformat

from grading.course import assignments, source_notebook
from grading.kernels.execute import notebook_client

BUDGET_MS = 100   # issue 17: a dragged slider must not lag behind the hand
MOVES = 7         # per control; the median is reported

# Runs inside the kernel after the notebook; prints one JSON line per control.
PROBE = r'''
import json, statistics, time
import ipywidgets as _W
from speclab.views import widgets as _spw

def _moves(control):
    """Two values to alternate between, near the control's current one."""
    v = control.value
    if hasattr(control, "options") and not hasattr(control, "step"):
        opts = [o[1] if isinstance(o, tuple) else o for o in control.options]
        other = opts[(opts.index(v) + 1) % len(opts)] if v in opts else opts[0]
        return [other, v]
    if isinstance(v, bool):
        return [not v, v]
    step = getattr(control, "step", 1) or 1
    hi, lo = getattr(control, "max", v + step), getattr(control, "min", v - step)
    other = v + step if v + step <= hi else v - step
    if other < lo:
        return None
    return [type(v)(other), v]

_seen = set()
for _name, _w in list(globals().items()):
    if not isinstance(_w, _W.interactive) or not hasattr(_w, "_screen") or id(_w) in _seen:
        continue
    _seen.add(id(_w))
    for _c in _w.kwargs_widgets:
        _vals = _moves(_c)
        if _vals is None:
            continue
        _times, _cpu = [], []
        for _i in range(__MOVES__):
            _t, _p = time.perf_counter(), time.process_time()
            _c.value = _vals[_i % 2]
            _times.append(time.perf_counter() - _t)
            _cpu.append(time.process_time() - _p)
        if _c.value != _vals[1]:
            _c.value = _vals[1]
        # the widget's own record of each move: update (the notebook's code changing the
        # artists), rasterise (Agg), encode + show (PNG, and handing it to the front end)
        _split = _w._screen.timings[-__MOVES__:]
        _compute = statistics.median(t[0] for t in _split)
        _drawn = statistics.median(t[1] for t in _split)
        _png = _spw.encode(_w._screen.canvas)
        print("WIDGET " + json.dumps({
            "widget": _name, "control": _c.description, "ms": 1e3 * statistics.median(_cpu), "wall": 1e3 * statistics.median(_times),
            "compute": 1e3 * _compute, "draw": 1e3 * _drawn, "png_kb": len(_png) / 1024}))
'''


def measure(aid, moves=MOVES):
    """[{widget, control, ms, compute, draw, encode, ...}] for one notebook's widgets."""
    path = source_notebook(aid)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE.replace("__MOVES__", str(moves))))
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # the kernel picks inline, as in JupyterLab
    client = notebook_client(nb, path.parent, timeout=600)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    rows = []
    for out in nb.cells[-1].get("outputs", []):
        for line in out.get("text", "").splitlines():
            if line.startswith("WIDGET "):
                row = json.loads(line[len("WIDGET "):])
                row["encode"] = max(0.0, row["ms"] - row["compute"] - row["draw"])
                rows.append(row)
    return rows


def table(ids=None):
    """Rows (label, value) for `make bench`: notebook, widget, control, ms, and the split."""
    worst = 0.0
    for aid in ids or assignments():
        start = time.perf_counter()
        rows = measure(aid)
        for r in rows:
            ms = r["ms"]
            worst = max(worst, ms)
            share = ", ".join(f"{k} {100 * r[k] / ms:.0f}%" for k in ("compute", "draw", "encode")) if ms else ""
            flag = "" if ms <= BUDGET_MS else "  OVER BUDGET"
            yield (f"{aid[:2]} {r['widget']} [{r['control']}]",
                   f"{ms:6.1f} ms  (wall {r['wall']:.0f}; {share}; png {r['png_kb']:.0f} KB){flag}")
        if not rows:
            yield f"{aid[:2]} (no redrawing widget found)", f"{time.perf_counter() - start:.1f} s"
    yield "slowest redraw (budget 100 ms)", f"{worst:.1f} ms"


def bench():
    yield from table()


if __name__ == "__main__":
    from devtools.bench import per_notebook
    per_notebook(table, sys.argv[1:])
