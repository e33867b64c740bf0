"""The browser checks can fail: a notebook with one planted fault per cell is caught, cell by cell.

Planted: a widget whose update raises, a figure that is drawn but never shown, a widget the
front end cannot display (a JavaScript-side error), a Python error, a widget whose figure
ignores its slider, and a JavaScript exception.
"""
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import labcells
import labpage
import labwidget

# Under `make test` (xdist, --dist loadgroup) in the first browser group, on one worker with its own server and
# browser (test_browser_notebooks.py says how the notebooks are split between the two groups).
pytestmark = pytest.mark.xdist_group("browser")

CELLS = [
    ("setup", """import matplotlib.pyplot as plt
from IPython.display import Javascript, display
from speclab.views import widgets"""),

    ("dead slider", """def same_every_time(fig, k):
    fig.add_subplot().plot([0, 1], [0, 1])  # ignores k: moving the slider redraws the same picture
    return k

widgets.redrawing(same_every_time, k=widgets.slider(2, 1, 5, 1, "k"))"""),
    ("broken widget", """def broken(fig, k):
    raise ValueError("planted: the update function fails")

widgets.redrawing(broken, k=widgets.slider(2, 1, 5, 1, "k"))"""),
    ("missing figure", """fig, ax = plt.subplots()
ax.plot([1, 2, 3])
plt.close(fig)  # planted: drawn, never shown"""),
    ("unknown widget", """display({"application/vnd.jupyter.widget-view+json":
         {"model_id": "0123456789abcdef", "version_major": 2, "version_minor": 0}}, raw=True)"""),
    ("python error", "1 / 0"),
    ("javascript error", """display(Javascript("setTimeout(() => { throw new Error('planted front-end fault'); }, 0)"))"""),
]

EXPECTED = {  # fault -> what the report must say about that cell
    "dead slider": "the figure did not change",
    "broken widget": "raised ValueError",
    "missing figure": "draws a matplotlib figure but no figure appears",
    "unknown widget": "did not render",
    "python error": "Python error ZeroDivisionError",
    "javascript error": "planted front-end fault",
}


def test_planted_faults_are_each_reported(lab, page, js_errors):
    nb = new_notebook(cells=[new_markdown_cell("# Planted faults")])
    for name, source in CELLS:
        cell = new_code_cell(source)
        if name == "python error":
            cell.metadata["tags"] = ["raises-exception"]  # so Run All goes on to the cells below
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = lab.root / "faults" / "faults.ipynb"
    path.parent.mkdir(exist_ok=True)
    nbformat.write(nb, path)

    problems = labpage.Problems("planted faults")
    labpage.open_notebook(page, lab, "faults/faults.ipynb")
    labpage.run_all(page)
    labcells.check_cells(labcells.read_cells(page, timeout=10), student=False, problems=problems)
    labwidget.move_main_widget(page, problems, student=False, redraw_s=5)
    page.wait_for_timeout(500)
    for text in js_errors:
        problems.add("browser", text)
    report = problems.report()
    index = {name: i + 1 for i, (name, _) in enumerate(CELLS)}
    for name, phrase in EXPECTED.items():
        lines = [line for line in problems.items if phrase in line]
        assert lines, f"the planted fault {name!r} (cell {index[name]}) was not reported:\n{report}"
        if name in ("broken widget", "missing figure", "unknown widget", "python error"):
            assert any(line.startswith(f"cell {index[name]} ") for line in lines), (
                f"the planted fault {name!r} was reported without its cell ({index[name]}):\n{report}")


def _cell(index, ename=None, ran=True):
    outputs = [{"output_type": "error", "ename": ename, "evalue": "planted"}] if ename else []
    return {"index": index, "source": f"cell_{index}()", "executionCount": index if ran else None, "outputs": outputs,
            "imagesShown": 0, "imagesBroken": 0, "widgetViews": 0, "widgetsRendered": 0,
            "widgetLoadingOrError": False, "widgetErrors": [], "interacts": []}


@pytest.mark.parametrize("cells, phrase", [
    ([_cell(1), _cell(2, "NotImplementedError"), _cell(3)], None),
    ([_cell(1), _cell(2, "ValueError"), _cell(3)], "cell 2 [cell_2()]: Python error ValueError"),
    ([_cell(1), _cell(2, "NotImplementedError"), _cell(3, ran=False)], "must be tagged raises-exception"),
], ids=["tagged exercise", "another error", "untagged exercise"])
def test_student_copy_run_is_judged(cells, phrase):
    """What a student copy's Run All may show (the check a headless run of every student copy made before it was
    merged into test_notebook_in_jupyterlab): a NotImplementedError in a cell that lets Run All go on, and no
    other error. Run All stops at an untagged failing cell, so the cells below it never ran."""
    problems = labpage.Problems("a student copy")
    labcells.check_cells(cells, student=True, problems=problems)
    if phrase is None:
        assert not problems, problems.report()
    else:
        assert any(phrase in line for line in problems.items), problems.report()
