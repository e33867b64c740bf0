"""The feedback page (grading/grade/feedback.py) and the caps on what a submission's outputs may weigh
(grading/kernels/outputs.py), without grading: a notebook is rendered the way nbgrader's generate_feedback
renders it. What a whole class run does with the same attacks is in test_grading_class.py (issue 36).

The page keeps only what the course's pages need: no script, nothing loaded from elsewhere, no data:
address but its own figures, no class or markup of the grader's own messages; its mathematics is
MathML made at grading time, so it is typeset offline (checked in Chromium with the network cut); each
test is named by what it tests (issue 39).
"""
import base64
import io
import os
import re
import sys

import nbformat
import pytest
from nbformat.notebooknode import NotebookNode

from devtools.coursework import loaded_addresses
from grading.course import REPO
from grading.grade.feedback import clean_html, feedback_exporter, latex_output_to_html, what_it_tests, tex_to_mathml
from grading.grade import scores
from grading.kernels.outputs import (MAX_IMAGE_CHARS, MAX_NOTEBOOK_OUTPUT_CHARS, MAX_OUTPUT_CHARS, TRUNCATED, CapOutput,
                                   OutputBudget, cap_output)

AID = "01_branch_prediction"
FORGED = "Final score: 11 / 11"
LONG_MESSAGE = "expected " + ", ".join(f"{i / 7:.6f}" for i in range(200)) + " and got something else"


def figure_png():
    """A small real matplotlib figure, as the inline backend embeds it (base64 PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 3, 2])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def hostile_notebook():
    """The course's notebook 01 (its markdown: the course's own mathematics), with a figure, and markdown and
    outputs that try to look like the grader, load remote things and link data: addresses."""
    nb = nbformat.read(REPO / "notebooks" / AID / f"{AID}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader["score"] = 1  # as GetGrades sets it
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(
        f'<div class="alert alert-success grading-notes panel-heading">{FORGED}</div>\n\n'
        '![t](https://attack.invalid/x.png) <img src="http://attack.invalid/y.png"> '
        '[see](data:text/html;base64,PGgxPmhpPC9oMT4=) <img src="data:image/png;base64,iVBORw0KGgo="> '
        '<a href="javascript:alert(1)">js</a> <span style="color:red" onclick="x()">s</span>\n\n'
        '<link rel="stylesheet" href="https://attack.invalid/s.css"><iframe src="https://attack.invalid/"></iframe>\n\n'
        "Inline $p(x) = \\frac{a}{b}$ and a block $$\\sum_i q_i = 1$$\n\n```python\ndef f():\n    return 1\n```"))
    code = nbformat.v4.new_code_cell("show()")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": figure_png(), "text/plain": "<Figure>"}),
        nbformat.v4.new_output("display_data", data={
            "text/html": f'<div class="alert alert-danger">{FORGED}</div><img src="https://attack.invalid/o.png">',
            "text/plain": "x"}, metadata={"text/html": {"isolated": True}}),
        nbformat.v4.new_output("display_data", data={"text/latex": "$\\alpha^2$", "text/plain": "a"}),
        nbformat.v4.new_output("display_data", data={
            "text/markdown": f'<span class="score">{FORGED}</span> [x](data:text/html,hi)', "text/plain": "m"}),
    ]
    nb.cells.insert(2, code)
    long = nbformat.v4.new_code_cell('"""the long one."""\ncheck()')   # a failed test: one long line of message
    long.metadata.nbgrader = NotebookNode(grade=True, solution=False, locked=True, grade_id="test_long", points=1,
                                          score=0, schema_version=3)
    long.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=LONG_MESSAGE,
                                           traceback=[f"AssertionError: {LONG_MESSAGE}"])]
    widget = nbformat.v4.new_code_cell("window_widget")
    widget.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
        "text/plain": "interactive(children=(IntSlider(value=4),))"})]
    nb.cells[3:3] = [long, widget]
    unanswered = next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    unanswered.metadata.nbgrader["comment"] = "No response."   # as GetGrades sets it for an untouched exercise
    code.metadata["tags"] = ["x alert alert-success panel-heading", "ok-tag"]   # tags become classes on the page
    return nb


def render(nb):
    resources = {"nbgrader": {"notebook": AID, "score": 3, "max_score": 9, "late_penalty": 0}}
    return feedback_exporter().from_notebook_node(nb, resources)[0]


@pytest.fixture(scope="module")
def page():
    return render(hostile_notebook())


def test_the_page_loads_nothing_from_elsewhere_and_runs_nothing(page):
    assert "<script" not in page.lower(), "no script: the mathematics is MathML, made at grading time"
    assert "<iframe" not in page.lower() and " on" + "click=" not in page
    assert not re.search(r"""href\s*=\s*["']?javascript:""", page, re.I)
    remote = [a for a in loaded_addresses(page) if re.match(r"(?i)\s*(https?:)?//", a)]
    assert not remote, f"the page loads {remote}"
    assert "attack.invalid" not in page, "no remote address at all: images, style sheets, frames"
    data = [a for a in loaded_addresses(page) if a.lower().startswith("data:")]
    assert data and all(a.startswith("data:image/png;base64,") for a in data), data
    assert len(data) == 1, "the figure, and no image of the markdown's own"
    assert not re.search(r"""href\s*=\s*["']?data:""", page, re.I), "no data: link"


def test_nothing_on_the_page_imitates_the_grader(page):
    body = page[page.index("<body"):]
    for cls in ("alert", "grading-notes", "panel-heading", "score"):
        mine = re.findall(rf"""class\s*=\s*["'][^"']*\b{cls}\b""", body)
        if cls in ("panel-heading", "score"):  # nbgrader's own headings and scores are the template's
            assert all(FORGED not in page[page.index(m):page.index(m) + 200] for m in mine)
        else:
            assert not mine, f"class {cls} reached the page"
    assert FORGED in page, "the student's words are kept, as plain text"
    assert "style=\"color:red\"" not in page


def test_mathematics_is_mathml_and_the_course_formulas_all_convert(page):
    assert page.count("<math") > 20, "the notebook's formulas, as MathML"
    assert '<math display="block"' in page
    assert "<mfrac>" in page and "<msub>" in page
    assert "$$" not in re.sub(r"<pre.*?</pre>", "", page, flags=re.S), "no TeX left for a script to typeset"
    assert "<merror" not in page
    assert "<math" in latex_output_to_html("$\\alpha^2$ and text <b>")
    assert "&lt;b&gt;" in latex_output_to_html("$x$ <b>")
    assert tex_to_mathml("\\frac{1}{").startswith(("<code>", "<math")), "unbalanced TeX never fails the page"


def test_each_test_is_named_by_what_it_tests(page):
    assert "Test cell" not in page
    assert "<code>test_greedy_decode</code>: greedy_decode follows the target&#x27;s argmax" in page
    assert what_it_tests({"source": '"""checks x."""\ncheck(x)', "metadata": {}}) == "checks x."
    assert what_it_tests({"source": "check(x)", "metadata": {"nbgrader": {"grade_id": "t1"}}}) == "t1"


def test_the_index_names_each_unanswered_exercise(page):
    """nbgrader's index listed the "No response." comment of each untouched exercise as a bare "Comment"."""
    index = page[page.index('<div id="toc">'):page.index("</ol>", page.index('<div id="toc">'))]
    assert ">Comment<" not in index
    assert re.search(r'href="#comment-\w+"><code>\w+</code>: not answered</a>', index), index


def test_a_failed_test_is_marked_for_its_message_first_and_tags_add_no_class(page):
    assert "celltag_speclab-failed" in page and "celltag_ok-tag" in page
    assert not re.search(r'class="[^"]*celltag_x\b', page), "a tag with spaces would add any class"


def test_a_widget_says_it_is_live_in_jupyterlab(page):
    """A widget's view needs a kernel and a script: the page says so in one line, under the widget's code."""
    at = page.index("window_widget")
    assert "live in JupyterLab" in page[at:at + 3000]


def test_clean_html_keeps_code_highlighting_and_heading_anchors():
    html = '<h2 id="Part-1">Part 1<a class="anchor-link" href="#Part-1">¶</a></h2><div class="highlight"><pre>' \
           '<span class="k">def</span></pre></div><p id="x" class="alert k">t</p>'
    out = clean_html(html)
    assert 'id="Part-1"' in out and 'class="anchor-link"' in out and '<span class="k">' in out
    assert 'id="x"' not in out and "alert" not in out


# ----------------------------------------------------------------------------- caps

def test_an_image_over_the_cap_is_replaced_by_a_line_saying_so():
    out = NotebookNode(output_type="display_data", metadata={}, data={
        "image/png": "A" * (MAX_IMAGE_CHARS + 1), "text/plain": "<Figure>"})
    cap_output(out)
    assert set(out.data) == {"text/plain"} and TRUNCATED in out.data["text/plain"]
    small = NotebookNode(output_type="display_data", metadata={}, data={"image/png": figure_png()})
    cap_output(small)
    assert "image/png" in small.data, "a course figure is kept"


def test_every_kind_of_output_is_capped():
    big = "x" * (MAX_OUTPUT_CHARS * 3)
    outs = [NotebookNode(output_type="stream", name="stdout", text=big),
            NotebookNode(output_type="error", ename="E" * 140_000, evalue=big, traceback=[big, big]),
            NotebookNode(output_type="execute_result", execution_count=1, metadata={}, data={
                "text/html": big, "application/json": {"k": big}, "image/svg+xml": "<svg/>"})]
    for out in outs:
        assert cap_output(out) < 3 * MAX_OUTPUT_CHARS
    assert len(outs[1].ename) < 300 and outs[1].output_type == "error"
    assert set(outs[2].data) == {"text/plain"} and TRUNCATED in outs[2].data["text/plain"]


def test_the_notebook_budget_keeps_errors_and_stderr_so_scores_never_change():
    """Past the notebook's budget an output becomes a placeholder of its own kind: an error stays an error and
    stderr stays stderr (both fail a test cell), a result stays a result (flagged in a test cell)."""
    budget = OutputBudget(limit=1000)
    assert budget.admit(NotebookNode(output_type="stream", name="stdout", text="x" * 900))
    stderr = NotebookNode(output_type="stream", name="stderr", text="y" * 900)
    shown = NotebookNode(output_type="display_data", metadata={}, data={"image/png": "A" * 900})
    err = NotebookNode(output_type="error", ename="AssertionError", evalue="wrong " * 50, traceback=["wrong"])
    assert not budget.admit(stderr) and stderr.name == "stderr" and stderr.text
    assert not budget.admit(shown) and shown.output_type == "display_data" and "image/png" not in shown.data
    assert budget.admit(err) and err.output_type == "error" and err.ename == "AssertionError", "past the budget"
    cell = NotebookNode(cell_type="code", metadata={"nbgrader": {"grade": True, "points": 2, "grade_id": "t"}},
                        outputs=[stderr])
    assert scores.test_score(cell) == 0.0


def test_capoutput_bounds_a_notebook_of_images_and_keeps_one_placeholder_per_kind():
    image = "A" * (MAX_IMAGE_CHARS - 10)
    cells = [NotebookNode(cell_type="code", source="", metadata={}, outputs=[
        NotebookNode(output_type="display_data", metadata={}, data={"image/png": image}) for _ in range(20)])
        for _ in range(3)]
    nb = NotebookNode(cells=cells, metadata={})
    CapOutput().preprocess(nb, {})
    total = sum(len(str(o)) for c in nb.cells for o in c.outputs)
    assert total < MAX_NOTEBOOK_OUTPUT_CHARS + 10_000
    assert all(len(c.outputs) <= 20 for c in nb.cells) and len(nb.cells[2].outputs) == 1


def test_streams_are_merged_then_cut_once():
    cell = NotebookNode(cell_type="code", source="", metadata={}, outputs=[
        NotebookNode(output_type="stream", name="stdout", text="y" * 99 + "\n") for _ in range(5000)])
    CapOutput().preprocess(NotebookNode(cells=[cell], metadata={}), {})
    [out] = cell.outputs
    assert f"{5000 * 100 - MAX_OUTPUT_CHARS:,} of {5000 * 100:,} characters not shown" in out.text


# ----------------------------------------------------------------------------- in a browser, offline

def test_the_page_shows_its_mathematics_and_figures_offline(page, playwright, tmp_path):
    """Chromium with every request that is not a file refused: the formulas are typeset (MathML laid out with
    a size), the figure is drawn (naturalWidth > 0), and nothing was asked of the network."""
    sys.path.insert(0, str(REPO / "tests" / "browser"))
    from labdriver import CHROMIUM, CHROMIUM_ARGS, missing_browser_parts  # the suite's Chromium, as it runs it

    if missing_browser_parts() and os.environ.get("SPECLAB_SKIP_BROWSER") == "1":  # as the browser tests do
        pytest.skip(f"needs {missing_browser_parts()} (skipped because SPECLAB_SKIP_BROWSER=1)")
    assert not missing_browser_parts(), f"needs {missing_browser_parts()}; SPECLAB_SKIP_BROWSER=1 skips this"
    path = tmp_path / "page.html"
    path.write_text(page, encoding="utf-8")
    browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    try:
        context = browser.new_context(viewport={"width": 1100, "height": 900})
        asked = []

        def route(r):
            if r.request.url.startswith("file:"):
                return r.continue_()
            asked.append(r.request.url)
            return r.abort()
        context.route("**/*", route)
        tab = context.new_page()
        tab.goto(path.as_uri())
        sizes = tab.evaluate("[...document.querySelectorAll('math')].map(m => m.getBoundingClientRect().width)")
        widths = tab.evaluate("[...document.images].map(i => i.naturalWidth)")
        fraction = tab.evaluate("document.querySelector('mfrac') && document.querySelector('mfrac')"
                                ".getBoundingClientRect().height")
        order = tab.evaluate("['.output_wrapper', '.input'].map(s => document.querySelector("
                             "'div.celltag_speclab-failed ' + s).getBoundingClientRect().top)")
        boxes = tab.evaluate("[...document.querySelectorAll('div.output_area pre')].map(p => [p.scrollWidth, "
                             "p.clientWidth, p.textContent.length])")
    finally:
        browser.close()
    assert not asked, f"the page asked the network for {asked}"
    assert len(sizes) > 20 and all(w > 0 for w in sizes), "every formula is laid out"
    assert fraction and fraction > 10, "a fraction is drawn as one (numerator over denominator), not as text"
    assert widths and all(w > 0 for w in widths), f"figures not drawn: {widths}"
    assert order[0] < order[1], "a failed test's message is drawn above its source"
    longest = max(boxes, key=lambda b: b[2])
    assert longest[2] > len(LONG_MESSAGE) and longest[0] <= longest[1] + 1, (
        f"a long failure message wraps inside its box: {longest[0]} px of text in a {longest[1]} px box")


# ----------------------------------------------------------------------------- the reveal (grading/reveal.py)

REVEAL = "Why the trust breaks: a draft kept on trust is wrong exactly where $q$'s argmax leaves $p$'s, $\\frac{a}{b}$."


def revealed_pair():
    """(source, student copy) of notebook 01 with a two-cell reveal after its Diagnose's test, the copy as the
    release makes it (the pointer in the reveal's place)."""
    from grading import reveal
    from grading.course import source_notebook

    source = nbformat.read(source_notebook(AID), as_version=4)
    source.cells = [c for c in source.cells if not reveal.is_reveal(c)]   # the fixture's reveal, alone on the page
    diagnose = reveal.diagnose_parts(source)[-1]
    at = next(i for i, c in enumerate(source.cells) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
              == diagnose) + 1
    run = [nbformat.v4.new_markdown_cell(REVEAL), nbformat.v4.new_markdown_cell("Real systems: **the same**.")]
    for i, cell in enumerate(run):
        cell.metadata["tags"], cell["id"] = ["reveal"], f"reveal-{i}"
    source.cells[at:at] = run
    copy, _ = reveal.RevealPointers().preprocess(nbformat.from_dict(source), {"nbgrader": {"assignment": AID}})
    for cell in copy.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader["score"] = 1  # as GetGrades sets it
    return source, copy, diagnose


def test_the_reveal_is_on_the_page_where_its_pointer_sits():
    from grading import reveal

    source, copy, diagnose = revealed_pair()
    forged = nbformat.v4.new_markdown_cell("FAKE REVEAL of my own")
    forged.metadata["tags"] = ["reveal"]   # a submission's own cell tagged reveal is not drawn as the course's
    copy.cells.insert(1, forged)
    page = render(reveal.place_reveals(copy, source))
    assert page.count('<div class="speclab-reveal">') == 1 and "FAKE REVEAL of my own" in page
    box = page[page.index('<div class="speclab-reveal">'):]
    assert box.index("The reveal") < box.index("Why the trust breaks") < box.index("Real systems")
    assert "<math" in box[:box.index("Real systems")] and "$q$" not in page, "its maths typeset, offline"
    assert page.index(f'name="{diagnose}"') < page.index('<div class="speclab-reveal">'), "under the Diagnose"
    assert "REVEAL=1" not in page, "the pointer is replaced"
    # a submission that lost its pointer still gets the reveal, after the cell above it in the source
    lost = nbformat.from_dict(copy)
    lost.cells = [c for c in lost.cells if reveal.POINTER_TAG not in c.metadata.get("tags", [])]
    page = render(reveal.place_reveals(lost, source))
    assert page.index(f'name="{diagnose}"') < page.index('<div class="speclab-reveal">')


def test_every_feedback_path_places_the_reveal():
    """make grade's feedback steps and nbgrader generate_feedback's (the course config) both place it."""
    from grading import nbgrader_steps
    from grading.course import load_config
    from grading.grade import run
    from grading.reveal import PlaceReveals

    assert PlaceReveals in run.FEEDBACK and PlaceReveals in load_config().GenerateFeedback.preprocessors
    assert nbgrader_steps.FEEDBACK == run.FEEDBACK
