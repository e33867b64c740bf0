"""The reveal (a break-it's Explain, cells tagged `reveal` in the source) never reaches a student copy: nbgrader's
generate_assignment with the course's config puts a one-line pointer in its place (grading/reveal.py), and
refuses a `reveal` tag where the student copy needs the cell."""
import nbformat
import pytest

from grading import cells, reveal
from grading.course import release_notebook, scratch_course, source_notebook

AID = "04_tv_distance"
SECRET = ("The window hides the damage because a stale draft only moves the positions after the first rejection, "
          "so a two-token window sees at most one of them.")
SECRET2 = "Serving stacks that reuse a cache across rounds make the same mistake: $\\alpha^{k}$ of rounds are exact."


def tagged_source(extra=None):
    """Notebook 04's source with a two-cell reveal of the fixture's own under its title, away from the notebook's
    own reveals (a run next to one of them would join it); solutions/ untouched."""
    nb = nbformat.read(source_notebook(AID), as_version=4)
    at = 1
    run = [nbformat.v4.new_markdown_cell(f"**Explain.** {SECRET}"), nbformat.v4.new_markdown_cell(SECRET2)]
    for i, cell in enumerate(run):
        cell.metadata["tags"] = ["reveal"]
        cell["id"] = f"reveal-{i}"
    nb.cells[at:at] = run
    if extra:
        extra(nb)
    return nb


def generate(tmp_path, nb):
    course = scratch_course(tmp_path / "course", [AID], sources={AID: nb}, release="generate")
    return nbformat.read(release_notebook(AID, course), as_version=4)


def test_the_reveal_is_a_pointer_in_the_student_copy(tmp_path):
    copy = generate(tmp_path, tagged_source())
    text = nbformat.writes(copy)
    assert "stale draft only moves" not in text and "Serving stacks" not in text, "no reveal text in the copy"
    pointers = [c for c in copy.cells if reveal.POINTER_TAG in c.metadata.get("tags", []) and c.id.startswith("reveal-")]
    assert len(pointers) == 1, "one pointer for a run of reveal cells"
    assert pointers[0].id == "reveal-0" and pointers[0].cell_type == "markdown"
    assert "make check NB=04 REVEAL=1" in pointers[0].source and len(pointers[0].source) < 300
    # everything else is exactly the committed student copy: the pointer is the only difference
    committed = nbformat.read(release_notebook(AID), as_version=4)
    assert [c for c in copy.cells if c is not pointers[0]] == committed.cells


@pytest.mark.parametrize("where", ["code cell", "test cell", "nbgrader markdown cell"])
def test_a_reveal_tag_the_copy_needs_is_refused(tmp_path, where):
    def tag(nb):
        if where == "code cell":
            cell = next(c for c in nb.cells if c.cell_type == "code" and not cells.has_meta(c))
        elif where == "test cell":
            cell = next(c for c in nb.cells if cells.is_test(c))
        else:
            cell = next(c for c in nb.cells if c.cell_type == "markdown")
            cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": True, "grade_id": "intro",
                                         "schema_version": 3}
        cell.metadata.setdefault("tags", []).append("reveal")
    with pytest.raises(RuntimeError, match=r"the `reveal` tag is on (a code cell|an nbgrader cell)"):
        generate(tmp_path, tagged_source(tag))


def test_no_reveal_text_reaches_any_student_copy(aid):
    """The course's own notebooks: each run of reveal cells is one pointer, and no line of it is in the copy."""
    source = nbformat.read(source_notebook(aid), as_version=4)
    copy = nbformat.read(release_notebook(aid), as_version=4)
    runs = reveal.reveal_runs(source, where=aid)
    pointers = [c.id for c in copy.cells if reveal.POINTER_TAG in c.metadata.get("tags", [])]
    assert pointers == [run[0].id for run in runs], f"{aid}: one pointer per reveal, in its place"
    shown = "\n".join(c.source for c in copy.cells)
    leaked = [ln for run in runs for c in run for ln in c.source.splitlines() if len(ln.strip()) >= 20
              and ln.strip() in shown]
    assert not leaked, f"{aid}: reveal text in the student copy: {leaked}"
