"""A notebook's cells as the page shows them after Run All (what the kernel sent, what the DOM
renders), and the judgement of them: every cell ran, every figure and widget shows, no error but
the expected ones."""
import re
import time

from labdriver import RENDER_S

# Per code cell: its model outputs (what the kernel sent) and what the DOM shows for them.
JS_CELLS = """() => {
  const panel = window.jupyterapp.shell.currentWidget, out = [];
  panel.content.widgets.forEach((cell, index) => {
    const m = cell.model;
    if (m.type !== 'code') return;
    const node = cell.node, outputs = [];
    for (let i = 0; i < m.outputs.length; i++) outputs.push(m.outputs.get(i).toJSON());
    const imgs = [...node.querySelectorAll('.jp-OutputArea-output img')];
    const widgetErrors = [...node.querySelectorAll('.jupyter-widgets-error-widget, .jp-RenderedText.jupyter-widgets-error')]
      .map(e => e.innerText.slice(0, 300));
    const interacts = [...node.querySelectorAll('.widget-interact')].map(w => ({
      images: [...w.querySelectorAll('img')].filter(i => i.complete && i.naturalWidth > 0).length,
      stderr: [...w.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.innerText.slice(-600)),
      controls: w.querySelectorAll('.widget-slider, .widget-dropdown, .widget-button, .widget-toggle-button').length,
    }));
    const widgetViews = outputs.filter(o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length;
    const rendered = [...node.querySelectorAll('.jp-OutputArea-output > .jupyter-widgets, .jp-OutputArea-output .lm-Widget.jupyter-widgets, .jp-OutputArea-output .jupyter-widgets')].length;
    const loading = [...node.querySelectorAll('.jp-OutputArea-output')].some(e => /Loading widget|Error displaying widget/.test(e.innerText));
    out.push({index, id: m.id, source: m.sharedModel.getSource(), tags: m.getMetadata('tags') || [],
              executionCount: m.executionCount, outputs,
              imagesShown: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
              imagesBroken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length,
              widgetViews, widgetsRendered: rendered, widgetLoadingOrError: loading, widgetErrors, interacts});
  });
  return out;
}"""


def first_line(source):
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:80]
    return "(empty)"


def cell_name(cell):
    return f"cell {cell['index']} [{first_line(cell['source'])}]"


def error_of(output):
    """(ename, evalue) of a kernel error output, or None."""
    if output.get("output_type") == "error":
        return output.get("ename", "?"), output.get("evalue", "")
    return None


TRACEBACK_NAME = re.compile(r"^(\w*(?:Error|Exception|Interrupt|Exit))\b", re.M)
# A top-level matplotlib call: this cell must show a figure (a `def` draws only when called).
PENDING_LINE = "first: this cell shows its results."  # speclab.plumbing.pending.needs
MAKES_FIGURE = re.compile(r"^(?:\w+\s*,\s*\w+\s*=\s*)?(?:fig\w*\s*,\s*\w+\s*=\s*)?plt\.(subplots|figure|show)\(", re.M)



def says_pending(cell):
    """Whether the cell printed speclab.plumbing.pending's line: its figure needs an exercise the student copy has not
    solved, and the cell says which instead of drawing empty axes (issue 27)."""
    import json
    return PENDING_LINE in json.dumps(cell["outputs"])


def widget_error_names(stderr_texts):
    """Exception names in the stderr a widget's Output shows (an exception in its update function)."""
    names = []
    for text in stderr_texts:
        found = TRACEBACK_NAME.findall(text)
        if found or "Traceback" in text:
            names.append(found[-1] if found else "Traceback")
    return names


def _pngs(cell):
    """How many figures the kernel sent in this cell's outputs."""
    return sum(1 for o in cell["outputs"] if "image/png" in (o.get("data") or {}))


def _settled(cells):
    for cell in cells:
        # the front end renders outputs after the model has them; on a loaded machine the last cells'
        # figures were seen arriving seconds after Run All ended, so wait for them as for widgets
        if cell["imagesShown"] < _pngs(cell):
            return False
        if cell["widgetViews"] and (not cell["widgetsRendered"] or cell["widgetLoadingOrError"]):
            return False
        for w in cell["interacts"]:
            if not w["images"] and not w["stderr"]:
                return False
    return True


# Scroll the cell at this index into view, as a learner does who scrolls down to its figure.
JS_SCROLL_TO = """async (index) => { const nb = window.jupyterapp.shell.currentWidget.content;
  await nb.scrollToItem(index, 'center'); }"""

# How long a cell may stay unsettled before it is scrolled into view. JupyterLab renders outputs of
# cells out of view lazily: once (1 of about 300 cells with figures in a CI run) a figure the kernel had
# sent was still not in the page a minute after Run All, with no <img> at all in its cell.
SCROLL_AFTER_S = 5


def read_cells(page, timeout=2 * RENDER_S):
    """The code cells as the page shows them, once every widget and figure has drawn (or the timeout passed).

    A cell still unsettled after SCROLL_AFTER_S is scrolled into view, once, as a reader would."""
    start = time.monotonic()
    deadline, scrolled = start + timeout, set()
    while True:
        cells = page.evaluate(JS_CELLS)
        if _settled(cells) or time.monotonic() > deadline:
            return cells
        if time.monotonic() - start > SCROLL_AFTER_S:
            for cell in cells:
                if cell["index"] not in scrolled and not _settled([cell]):
                    scrolled.add(cell["index"])
                    page.evaluate(JS_SCROLL_TO, cell["index"])
        time.sleep(0.5)


def check_cells(cells, student, problems, source_cells=None):
    """Every failure of what a learner sees after Run All, by cell, into problems."""
    allowed = {"NotImplementedError"} if student else set()
    stopped = None
    for cell in cells:
        where = cell_name(cell)
        if cell["executionCount"] is None:
            if stopped is None:
                stopped = cell
            continue
        errors = [e for e in map(error_of, cell["outputs"]) if e]
        for ename, evalue in errors:
            if ename not in allowed:
                problems.add(where, f"Python error {ename}: {evalue[:300]}")
        if cell["imagesBroken"]:
            problems.add(where, f"{cell['imagesBroken']} figure image(s) failed to load")
        pngs = _pngs(cell)
        if cell["imagesShown"] < pngs:
            problems.add(where, f"the kernel sent {pngs} figure(s) but the page shows {cell['imagesShown']}")
        if not errors and not cell["imagesShown"] and MAKES_FIGURE.search(cell["source"]):
            problems.add(where, "draws a matplotlib figure but no figure appears")
        if cell["widgetViews"] and (not cell["widgetsRendered"] or cell["widgetLoadingOrError"]):
            problems.add(where, f"{cell['widgetViews']} widget(s) sent by the kernel did not render "
                                f"(\"Loading widget...\" or \"Error displaying widget\")")
        for text in cell["widgetErrors"]:
            problems.add(where, f"widget error shown: {text}")
        for n, w in enumerate(cell["interacts"]):
            names = widget_error_names(w["stderr"])
            bad = [x for x in names if x not in allowed]
            if bad:
                tail = " | ".join(w["stderr"])[-400:]
                problems.add(where, f"widget {n}: its update function raised {', '.join(bad)}: {tail}")
            elif not names and not w["images"]:
                problems.add(where, f"widget {n} rendered its controls but no figure")
            if not w["controls"]:
                problems.add(where, f"widget {n} shows no slider, dropdown or button")
        if source_cells and student and not errors and not says_pending(cell):
            src = source_cells.get(cell["index"])
            if src and (cell["imagesShown"] < src["imagesShown"] or cell["widgetViews"] < src["widgetViews"]):
                problems.add(where, f"shows {cell['imagesShown']} figure(s) and {cell['widgetViews']} widget(s);"
                                    f" the source notebook's cell shows {src['imagesShown']} and {src['widgetViews']}")
    if stopped is not None:
        ran = [c for c in cells if c["executionCount"] is not None]
        last = max(ran, key=lambda c: c["executionCount"]) if ran else None
        failing = f"{cell_name(last)} raised " + ", ".join(
            e[0] for e in map(error_of, last["outputs"]) if e) if last else "nothing ran"
        never = sum(1 for c in cells if c["executionCount"] is None)
        problems.add("Run All", f"stopped early: {failing}; {never} code cell(s) from {cell_name(stopped)} on "
                                f"never ran, so every widget and figure below stays blank (a cell that fails "
                                f"until an exercise is solved must be tagged raises-exception)")
    return cells
