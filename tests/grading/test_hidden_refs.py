"""The graded kernel cannot reach its own notebook's reference answers (grading/hidden.py): its /course/speclab
is a copy in which the functions the graded notebook's exercises define raise. Routes the integrity scan cannot
follow (a module name built from strings, the source file read and exec'd) then get nothing; an honest
classmate graded in the same run still scores full marks."""
import nbformat
import pytest

from devtools import badsubmissions as bs
from grading import hidden
from grading.cells import grade_id
from grading.course import scratch_course

AID = "02_acceptance_rule"

BUILT_NAME = ("import importlib\n"
              "def accept_prob(p, q, x):\n"
              "    return importlib.import_module('spec' + 'lab.specu' + 'lative').accept_prob(p, q, x)\n")
READ_FILE = ("_ns = {}\n"
             "exec(open('/course/' + 'speclab/speculative.py').read(), _ns)\n"
             "def accept_prob(p, q, x):\n"
             "    return _ns['accept_prob'](p, q, x)\n")
BLANK = "def accept_prob(p, q, x):\n    raise NotImplementedError()\n"


def test_stubbed_hides_only_the_named_functions_and_keeps_line_numbers():
    src = ("def f(a):\n    '''doc'''\n    x = a + 1\n    return x\n\n\n"
           "def g(a):\n    return f(a) * 2\n\n\nclass C:\n    def f(self):\n        return 3\n")
    out = hidden.stubbed(src, {"f"}, "NB")
    assert out.count("\n") == src.count("\n")
    ns = {}
    exec(out, ns)
    with pytest.raises(RuntimeError, match="reference for f is not available while NB is graded"):
        ns["f"](1)
    with pytest.raises(RuntimeError):
        ns["C"]().f()
    assert "def g(a):\n    return f(a) * 2\n" in out


def test_exercise_names_are_the_solution_cells_functions():
    nb = nbformat.read(f"solutions/{AID}/{AID}.ipynb", as_version=4)
    assert {"accept_prob", "acceptance_rate"} <= set(hidden.exercise_names(nb))


def with_accept_prob(solved, source):
    nb = nbformat.reads(solved, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "accept_prob")
    cell.source = source
    return nbformat.writes(nb).encode()


@pytest.mark.slow
def test_reference_routes_the_scan_cannot_follow_get_nothing(tmp_path):
    from grading.grade import grade

    root = scratch_course(tmp_path / "course", [AID], release="generate")
    good = bs.good_students(root, AID)
    solved = good["reference"][f"{AID}.ipynb"]
    bs.write_class(root, AID, {
        "built": {f"{AID}.ipynb": with_accept_prob(solved, BUILT_NAME)},
        "reader": {f"{AID}.ipynb": with_accept_prob(solved, READ_FILE)},
        "blank": {f"{AID}.ipynb": with_accept_prob(solved, BLANK)},
        "honest": good["reference"]})
    results = {r.student: r for r in grade(root, [AID], workers=1, cell_timeout=60, quiet=True, export=False)}
    full = bs.full_marks(root, AID)[0]
    assert results["honest"].score == full, results["honest"].notes
    assert results["blank"].score < full
    for attacker in ("built", "reader"):
        assert results[attacker].score == results["blank"].score, (attacker, results[attacker].notes)
