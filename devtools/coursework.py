"""The course's notebooks as the tests and tools handle them: answers put into a student copy, and the
check that no hidden test line reaches what a student sees.

    answers(source)               {grade_id: source} of the instructor's solution cells
    fill(nb, answers)             a student copy's solution cells filled in (in place)
    solved(aid, root)             the student copy with every solution filled in from the source
    hidden_lines(source)          the lines of the source's ### BEGIN HIDDEN TESTS blocks
    leaked_hidden_lines(text, source)   those of them that appear in `text`

A scratch course (solutions/, a release, a gradebook) is grading.course.scratch_course;
nbgrader's cell metadata is read by grading.cells.
"""
import re

import nbformat

from grading import cells
from grading.course import REPO, release_notebook, source_notebook

HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN SOLUTION", "END SOLUTION")


def answers(source):
    """{grade_id: source} of the solution cells of a notebook (the instructor's, for a source notebook)."""
    return {gid: c.source for gid, c in cells.solution_cells(source).items()}


def fill(nb, answers):
    """Put answers {grade_id: source} into the notebook's solution cells with those grade ids (in place;
    returns nb)."""
    for cell in nb.cells:
        if cells.is_solution(cell) and cells.grade_id(cell) in answers:
            cell.source = answers[cells.grade_id(cell)]
    return nb


def solved(aid, root=REPO, source=None):
    """The student copy of `aid` in the course `root`, every solution cell filled in from the source
    notebook (or from `source`, a notebook, if given)."""
    source = source or nbformat.read(source_notebook(aid, root), as_version=4)
    return fill(nbformat.read(release_notebook(aid, root), as_version=4), answers(source))


def hidden_lines(source, longer_than=30, shown=()):
    """The stripped lines of the source notebook's hidden test blocks longer than `longer_than`
    characters (shorter ones, like `n = 5`, could appear anywhere), less those starting with a prefix in
    `shown` (what a report may rightly quote, e.g. an assertion's message)."""
    text = "\n".join(c.source for c in source.cells)
    return [line.strip() for block in HIDDEN.findall(text) for line in block.splitlines()
            if len(line.strip()) > longer_than and not line.strip().startswith(tuple(shown))]


def leaked_hidden_lines(text, source, markers=MARKERS[:2], **kw):
    """The hidden test lines of `source` (hidden_lines) that appear in `text`, and the nbgrader `markers`
    that do: [] when nothing leaked."""
    found = [m for m in markers if m in text]
    return found + [line for line in hidden_lines(source, **kw) if line in text]


def loaded_addresses(html):
    """What a browser would load by itself: src attributes, <link href>, url() in <style> and style attributes
    (words on the page that look like addresses are not loaded)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    found = [tag["src"] for tag in soup.find_all(src=True)] + [tag["href"] for tag in soup.find_all("link", href=True)]
    css = [tag.get_text() for tag in soup.find_all("style")] + [tag["style"] for tag in soup.find_all(style=True)]
    return found + [u for text in css for u in re.findall(r"""url\(\s*["']?([^"')]+)""", text)]
