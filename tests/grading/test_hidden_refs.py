"""The graded kernel cannot reach its own notebook's reference answers (grading/kernels/hidden.py): its /course/speclab
is a copy in which the functions the graded notebook's exercises define raise. Routes the integrity scan cannot
follow (a module name built from strings, the source file read and exec'd) then get nothing; an honest
classmate graded in the same run still scores full marks."""
import nbformat
import pytest
from traitlets.config import Config

from devtools import badsubmissions as bs
from grading.kernels import hidden, sandbox
from grading.cells import grade_id
from grading.course import scratch_course
from grading.kernels.robust import RobustExecute

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
def test_reference_routes_the_scan_cannot_follow_get_nothing(tmp_path, monkeypatch):
    from grading.grade import grade

    monkeypatch.setenv("SPECLAB_HIDE_REFERENCES", "1")  # off by default: README's hidden references

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


# Run in a kernel sandboxed for 02: every route to accept_prob, by name or by file, and a function 02 does not set.
ROUTES = """
import importlib, numpy as np
p, q = np.array([0.2, 0.8]), np.array([0.5, 0.5])
seen = {}
try:
    seen["import"] = importlib.import_module("spec" + "lab.speculative").accept_prob(p, q, 0)
except RuntimeError as e:
    seen["import"] = str(e)
ns = {"__name__": "speclab.copied", "__package__": "speclab"}
exec(open("/course/speclab/speculative.py").read(), ns)
try:
    seen["file"] = ns["accept_prob"](p, q, 0)
except RuntimeError as e:
    seen["file"] = str(e)
seen["residual"] = importlib.import_module("speclab.speculative").residual(p, q).tolist()
print(sorted(seen.items()))
"""


@pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
def test_the_graded_kernel_reaches_no_reference_of_its_notebook(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(ROUTES)])
    config = Config()
    config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
    config.SandboxedKernelManager.hidden = ["accept_prob"]
    config.SandboxedKernelManager.notebook = AID
    RobustExecute(config=config, timeout=60, sandbox=True, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    out = nb.cells[0].outputs[-1]
    assert "text" in out, out
    seen = dict(eval(out["text"]))
    gone = f"the course's reference for accept_prob is not available while {AID} is graded"
    assert seen["import"] == gone and seen["file"] == gone, seen
    assert seen["residual"] == [0.0, 1.0]  # the rest of speclab, 02's other helpers, still answers
