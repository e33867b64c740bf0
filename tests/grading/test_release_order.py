"""Locked cells in the release's order (grading/integrity/order.py): a test cell moved above the exercises it
follows lends the course's reference into the kernel (its `alone(globals(), accept_prob=ref.accept_prob)`
swaps the name there while the student's acceptance_rate runs), where the student's code can keep it and
answer accept_prob with it. Graded through `make grade` with an honest classmate in the same pool."""
import nbformat
import pytest

from devtools import badsubmissions as bs
from grading.cells import grade_id
from grading.course import scratch_course
from grading.integrity.order import release_order

AID = "02_acceptance_rule"

KEEPER = ("def acceptance_rate(p, q):\n"
          "    global _kept\n"
          "    _kept = accept_prob\n"
          "    return float(np.minimum(p, q).sum())\n")
DELEGATE = ("def accept_prob(p, q, x):\n"
            "    return _kept(p, q, x)\n")


def moved_test(solved):
    """The reference submission with test_acceptance_rate moved above accept_prob, a cell of the student's own
    above it that keeps what `accept_prob` is while the test runs, and accept_prob answered with what was kept."""
    nb = nbformat.reads(solved, as_version=4)
    at = {grade_id(c): i for i, c in enumerate(nb.cells) if grade_id(c)}
    test = nb.cells.pop(at["test_acceptance_rate"])
    nb.cells[at["accept_prob"]].source = DELEGATE
    first = at["accept_prob"]
    nb.cells[first:first] = [nbformat.v4.new_code_cell(KEEPER), test]
    return nbformat.writes(nb).encode()


def test_moved_cells_go_back_to_the_release_order():
    release = nbformat.read(f"notebooks/{AID}/{AID}.ipynb", as_version=4)
    nb = nbformat.read(f"notebooks/{AID}/{AID}.ipynb", as_version=4)
    order = [grade_id(c) for c in nb.cells if grade_id(c)]
    at = {grade_id(c): i for i, c in enumerate(nb.cells) if grade_id(c)}
    test = nb.cells.pop(at["test_acceptance_rate"])
    mine = nbformat.v4.new_code_cell("x = 1")
    nb.cells[at["accept_prob"]:at["accept_prob"]] = [mine, test]
    note = release_order(nb, release)
    assert note and "test_acceptance_rate" in note
    assert [grade_id(c) for c in nb.cells if grade_id(c)] == order
    assert nb.cells[at["accept_prob"]] is mine  # the student's own cell keeps its place
    assert release_order(nb, release) is None


@pytest.mark.slow
def test_a_moved_test_cell_lends_nothing_and_is_flagged(tmp_path):
    from grading.grade import grade

    root = scratch_course(tmp_path / "course", [AID], release="generate")
    good = bs.good_students(root, AID)
    solved = good["reference"][f"{AID}.ipynb"]
    bs.write_class(root, AID, {"attacker": {f"{AID}.ipynb": moved_test(solved)}, "honest": good["reference"]})
    results = {r.student: r for r in grade(root, [AID], workers=1, cell_timeout=60, quiet=True, export=False)}
    full = bs.full_marks(root, AID)[0]
    assert results["honest"].score == full and not results["honest"].flagged, results["honest"].notes
    attacker = results["attacker"]
    assert attacker.flagged and any("release's order" in n for n in attacker.notes), attacker.notes
    assert attacker.score < full, f"the kept reference answered accept_prob: {attacker.score:g}/{full:g}"
