"""Latency as a learner feels it: from a key press on a slider to the widget's new figure on the page.

The `widgets` section times a redraw inside the kernel; a learner waits for more than that: the
value's trip to the kernel, the update, the PNG, its trip back, and the page decoding and painting
it. This section starts JupyterLab and headless Chromium the way the browser tests do
(tests/browser/labdriver.py), opens each source notebook, runs it (Run All), and moves its main widget's
sliders (or dropdowns) with the keyboard, one move at a time: steps, and each control's two ends,
where axes rescale if they ever do (labwidget.LATENCY_KEYS). Each move is timed in the page with performance.now(),
from the keydown to the moment the widget's <img> has a new src ("shown") and to the first frame
after that image is decoded ("painted").

Goal (issue 30): on 2 cores, a median under 150 ms and every move, rescales included, under 250 ms.
Each widget's second row says where the time went, as medians over its moves, in ms, from the
kernel connection's messages as the page sees them (labwidget.JS_LATENCY_WATCH):
  input    key press to the page sending the new value (the slider and ipywidgets' front end)
  in       to the kernel starting on it (server, kernel queue)
  kernel   to the kernel publishing the figure (wall time; beside it the widget's own record of
           the move in CPU time, speclab.views.widgets: update + rasterise + PNG encode and display)
  out      to the figure reaching the page (kernel to server to page)
  render   to the new <img> in the page (the Image widget's view: a new blob: URL)
  decode   to the first frame after the PNG is decoded (not in the goal: the goal is `shown`)
and the PNG's size.

    python -m devtools.bench latency            # every notebook (a few minutes)
    python -m devtools.benches.latency 05 07    # some notebooks (prints the same table)
"""
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from grading.course import REPO, assignments

sys.path.insert(0, str(REPO / "tests" / "browser"))
import labdriver as lab  # tests/browser holds the driver the browser tests use
import labcells
import labpage
import labwidget

MEDIAN_GOAL_MS = 150
MAX_GOAL_MS = 250

# Runs in the notebook's kernel: every widget built with speclab.views.widgets, with its record of moves.
KERNEL_TIMINGS = r"""
import gc as _gc, json as _json, ipywidgets as _W
print(_json.dumps({str(id(_o)): [len(_o._screen.timings), _o._screen.timings[-64:]] for _o in _gc.get_objects()
                   if isinstance(_o, _W.interactive) and hasattr(_o, "_screen")}))
"""

JS_KERNEL_STDOUT = """async code => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const future = kernel.requestExecute({code, store_history: false});
  future.onIOPub = msg => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
  await future.done;
  return out;
}"""

# The figure's size: its <img>'s source fetched (a blob: URL for an Image widget, or a data: URL).
JS_PNG_BYTES = """async w => { const i = w.querySelector('img'), s = i && i.getAttribute('src');
  if (!s) return 0;
  try { return (await (await fetch(s)).arrayBuffer()).byteLength; } catch (e) { return 0; } }"""


def kernel_records(page):
    return json.loads(page.evaluate(JS_KERNEL_STDOUT, KERNEL_TIMINGS).strip().splitlines()[-1])


def kernel_cpu(before, after, moves):
    """Median (update, rasterise, encode) CPU ms per move of the widget whose record grew by `moves`
    entries (None if none did)."""
    for key, (count, timings) in after.items():
        grew = count - before.get(key, [0])[0]
        if moves and grew == moves:
            return [1e3 * statistics.median(t[i] for t in timings[-moves:]) for i in range(3)]
    return None


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids):
    """User + system CPU seconds of the live processes among pids."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def process_groups(server, browser_pids):
    """{group: pids}: the Jupyter server, its kernels, Chromium (Playwright's driver left out)."""
    chromium = set()
    for pid in browser_pids:
        for p in {pid} | lab.descendants(pid):
            try:
                if Path(f"/proc/{p}/comm").read_text().startswith("chrom"):
                    chromium.add(p)
            except OSError:
                pass
    return {"server": {server.proc.pid}, "kernel": lab.descendants(server.proc.pid), "chromium": chromium}


def measure(aid, page, server, browser_pids):
    """(summary, moves, kernel's own CPU ms per move, CPU ms per move by process, png bytes) for one
    source notebook's main widget."""
    relpath = f"solutions/{aid}/{aid}.ipynb"
    labpage.open_notebook(page, server, relpath)
    labpage.run_all(page)
    labcells.read_cells(page)
    widget = labwidget.main_widget(page)
    if widget is None:
        return None, [], None, None, None
    before = kernel_records(page)
    groups = process_groups(server, browser_pids)
    cpu_before = {g: cpu_seconds(pids) for g, pids in groups.items()}
    moves = labwidget.measure_latency(page, widget)
    cpu_after = {g: cpu_seconds(pids) for g, pids in groups.items()}
    after = kernel_records(page)
    redrawn = sum(1 for m in moves if m["ms"] is not None)
    per_move = {g: 1e3 * (cpu_after[g] - cpu_before[g]) / max(1, len(moves)) for g in groups}
    return (labwidget.latency_summary(moves), moves, kernel_cpu(before, after, redrawn), per_move,
            page.evaluate(JS_PNG_BYTES, widget.element_handle()))


STAGES = (("input", None, "sent"), ("in", "sent", "busy"), ("kernel", "busy", "displayed"),
          ("out", "displayed", "received"), ("render", "received", "shown"), ("decode", "shown", "painted"))


def stage_medians(done):
    """{stage: median ms} over the moves where both its ends were seen."""
    out = {}
    for name, a, b in STAGES:
        gaps = [m["at"][b] - (m["at"][a] if a else 0) for m in done
                if m["at"][b] is not None and (a is None or m["at"][a] is not None)]
        out[name] = statistics.median(gaps) if gaps else None
    return out


def rows(aid, summary, moves, cpu, per_move, png):
    if summary is None:
        yield f"{aid[:2]} (no main widget)", ""
        return
    if not summary.get("redrawn"):
        yield f"{aid[:2]} main widget", f"no move redrew ({summary['moves']} moves)"
        return
    done = [m for m in moves if m["ms"] is not None]
    worst = max(done, key=lambda m: m["ms"])
    missed = [g for g, bad in (("median", summary["median"] >= MEDIAN_GOAL_MS),
                               ("max", summary["max"] >= MAX_GOAL_MS)) if bad]
    controls = ", ".join(dict.fromkeys(m["control"] for m in moves))
    yield (f"{aid[:2]} main widget [{controls}]",
           f"median {summary['median']:4.0f} ms, max {summary['max']:4.0f} ms, {summary['redrawn']}/{summary['moves']} "
           f"moves redrawn" + (f"  MISSES GOAL ({', '.join(missed)})" if missed else ""))
    stages = stage_medians(done)
    split = ", ".join(f"{k} {'?' if v is None else f'{v:.0f}'}" for k, v in stages.items())
    cpu_text = (f"kernel CPU {sum(cpu):.0f} (update {cpu[0]:.0f}, rasterise {cpu[1]:.0f}, encode+show {cpu[2]:.0f})"
                if cpu else "kernel CPU n/a (not a speclab widget)")
    yield "   where (median ms per move)", f"{split}; png {png / 1024:.0f} KB"
    yield "   CPU per move (ms)", (f"{cpu_text}; by process: "
                                  + ", ".join(f"{g} {v:.0f}" for g, v in per_move.items()))
    yield "   slowest move", (f"{worst['ms']:.0f} ms: {worst['key']} on {worst['control']!r} {worst['from']} -> {worst['to']} "
                               f"(" + ", ".join(f"{k} {v}" for k, v in worst["at"].items()) + ")")


def table(ids=None):
    from playwright.sync_api import sync_playwright

    missing = lab.missing_browser_parts()
    if missing:
        yield "latency", "skipped: needs " + " and ".join(missing)
        return
    yield "load average (1, 5, 15 min) at the start", " ".join(f"{x:.2f}" for x in os.getloadavg())
    medians, maxima = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # only the sources run here; copy_course copies what the browser tests use
        server = lab.LabServer(lab.copy_course(tmp / "course"), tmp)
        before = lab.descendants(os.getpid())
        try:
            with sync_playwright() as p:
                context = lab.launch_browser(p, tmp / "chromium-profile")
                context.set_default_timeout(lab.RENDER_S * 1000)
                started = lab.descendants(os.getpid()) - before   # Playwright's driver and Chromium
                tab = labpage.LabTab(context.new_page(), server)
                try:
                    for aid in ids or assignments():
                        tab.start_test()
                        start = time.perf_counter()
                        try:
                            summary, moves, cpu, per_move, png = measure(aid, tab.page, server, started)
                        except Exception as err:  # a notebook that does not come up: say so, go on
                            yield f"{aid[:2]} main widget", f"failed: {type(err).__name__}: {str(err)[:200]}"
                            continue
                        finally:
                            tab.end_test()
                            server.shutdown_kernels()
                        yield from rows(aid, summary, moves, cpu, per_move, png)
                        if summary and summary.get("redrawn"):
                            medians.append(summary["median"])
                            maxima.append(summary["max"])
                        yield "   (seconds for this notebook, Run All included)", f"{time.perf_counter() - start:.1f}"
                finally:
                    for pid in list(started):
                        started |= lab.descendants(pid)
                    context.close()
            lab.stop_pids(started)
        finally:
            server.stop()
    yield "load average (1, 5, 15 min) at the end", " ".join(f"{x:.2f}" for x in os.getloadavg())
    if medians:
        yield (f"worst median / worst max (goal {MEDIAN_GOAL_MS} / {MAX_GOAL_MS} ms)",
               f"{max(medians):.0f} / {max(maxima):.0f} ms")


def bench():
    yield from table()


if __name__ == "__main__":
    from devtools.bench import per_notebook
    per_notebook(table, sys.argv[1:])
