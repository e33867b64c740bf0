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
from grading.course import REPO, scratch_course
from grading.gradebook import cell_scores, score
from grading.kernels.robust import RobustExecute

AID = "02_acceptance_rule"

BUILT_NAME = ("import importlib\n"
              "def accept_prob(p, q, x):\n"
              "    return importlib.import_module('spec' + 'lab.rules.specu' + 'lative').accept_prob(p, q, x)\n")
READ_FILE = ("_ns = {}\n"
             "exec(open('/course/' + 'speclab/rules/speculative.py').read(), _ns)\n"
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


# The two tests of routes below read one class of 02, graded once (with one worker, the honest classmate last): the
# attackers of both, one blank and the honest copy. One xdist worker for both, or each worker grades it again.
ROUTES_CLASS = pytest.mark.xdist_group("hidden-refs-02")


@pytest.fixture(scope="module")
def routes_graded(tmp_path_factory):
    """(results by student, full marks) of a class of 02 graded by make grade's path, hiding on (the default): the
    two routes of the first test below (built, reader), every route of ATTACK_ROUTES, a blank copy, and zz_honest."""
    from grading.grade import grade

    root = scratch_course(tmp_path_factory.mktemp("routes") / "course", [AID], release="generate")
    good = bs.good_students(root, AID)
    solved = good["reference"][f"{AID}.ipynb"]
    cache = str(hidden.cache_root())
    students = {"built": {f"{AID}.ipynb": with_accept_prob(solved, BUILT_NAME)},
                "reader": {f"{AID}.ipynb": with_accept_prob(solved, READ_FILE)}}
    students.update({name: {f"{AID}.ipynb": with_accept_prob(solved, FIND + route.format(repo=str(REPO), cache=cache)
                                                             + ANSWER)}
                     for name, route in ATTACK_ROUTES.items()})
    assert len(students) == 2 + len(ATTACK_ROUTES), "a route's name taken twice"
    students["blank"] = {f"{AID}.ipynb": with_accept_prob(solved, BLANK)}
    students["zz_honest"] = good["reference"]   # graded last, by the same worker
    bs.write_class(root, AID, students)
    results = {r.student: r for r in grade(root, [AID], workers=1, cell_timeout=60, quiet=True, export=False)}
    return results, bs.full_marks(root, AID)[0]


@pytest.mark.slow
@ROUTES_CLASS
def test_reference_routes_the_scan_cannot_follow_get_nothing(routes_graded):
    results, full = routes_graded
    assert results["zz_honest"].score == full, results["zz_honest"].notes
    assert results["blank"].score < full
    for attacker in ("built", "reader"):
        assert results[attacker].score == results["blank"].score, (attacker, results[attacker].notes)


# Run in a kernel sandboxed for 02: every route to accept_prob, by name or by file, and a function 02 does not set.
ROUTES = """
import importlib, numpy as np
p, q = np.array([0.2, 0.8]), np.array([0.5, 0.5])
seen = {}
try:
    seen["import"] = importlib.import_module("spec" + "lab.rules.speculative").accept_prob(p, q, 0)
except RuntimeError as e:
    seen["import"] = str(e)
ns = {"__name__": "speclab.rules.copied", "__package__": "speclab.rules"}
exec(open("/course/speclab/rules/speculative.py").read(), ns)
try:
    seen["file"] = ns["accept_prob"](p, q, 0)
except RuntimeError as e:
    seen["file"] = str(e)
seen["residual"] = importlib.import_module("speclab.rules.speculative").residual(p, q).tolist()
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


# Every route to 02's accept_prob a student who has read the course might take, one submission each; each hands
# in the reference's answer when it finds one. Hidden references are on by default (grading/judge/execute.py);
# The integrity scan zeroes each of these already (hiding off, this test passes too: every route is a finding); the
# test below runs the same routes in a kernel with no scan, where only hiding stops them.
FIND = """import numpy as np
_found = None
def _try(get):
    global _found
    if _found is None:
        try:
            f = get()
            f(np.array([0.2, 0.8]), np.array([0.5, 0.5]), 0)   # raises where the reference is hidden
            _found = f
        except Exception:
            pass
def _run(code, path):   # a module's code run as a function: no exec, no eval
    import types
    ns = {"__name__": "speclab.copied", "__package__": "speclab", "__file__": path, "__builtins__": __builtins__}
    types.FunctionType(code, ns)()
    return ns["accept_" + "prob"]
"""
ANSWER = "def accept_prob(p, q, x):\n    if _found is None:\n        raise NotImplementedError()\n    return _found(p, q, x)\n"
ATTACK_ROUTES = {
    "plain": "from speclab.rules.speculative import accept_prob as _ref\n_try(lambda: _ref)\n",
    "importlib": "import importlib\n_try(lambda: importlib.import_module('spec' + 'lab.speculative').accept_prob)\n",
    "runpy": "import runpy\n_try(lambda: runpy.run_module('spec' + 'lab.speculative')['accept_' + 'prob'])\n",
    "source": ("import inspect, speclab.rules.sampling as _s\n"
               "_mod = inspect.getmodule(_s).__file__.replace('sampling', 'speculative')\n"
               "_try(lambda: _run(compile(open(_mod).read(), _mod, 'exec'), _mod))\n"),
    "files": ("import glob, marshal, os, tempfile\n"
              "for _root in ('/course', '/tmp', os.path.expanduser('~'), {repo!r}, {cache!r}):\n"
              "    for _path in glob.glob(_root + '/**/speculative*.py*', recursive=True):\n"
              "        _code = (marshal.loads(open(_path, 'rb').read()[16:]) if _path.endswith('.pyc')\n"
              "                 else compile(open(_path).read(), _path, 'exec'))\n"
              "        _try(lambda: _run(_code, _path))\n"),
    "pickle": "import pickle, io\n_try(lambda: pickle.load(io.BytesIO(b'cspec' + b'lab.speculative\\naccept_' + b'prob\\n.')))\n",
}


@pytest.mark.slow
@ROUTES_CLASS
def test_every_route_to_the_graded_notebooks_reference_scores_nothing(routes_graded):
    results, full = routes_graded
    assert results["zz_honest"].score == full, results["zz_honest"].notes
    assert results["blank"].score < full
    got = {name: results[name].score for name in ATTACK_ROUTES}
    assert got == {name: results["blank"].score for name in ATTACK_ROUTES}, (got, results["blank"].score)


def test_hidden_references_are_on_by_default_for_every_notebook():
    import os
    import subprocess
    import sys

    from grading.course import REPO, assignments
    from grading.judge.execute import JudgeExecute

    env = {k: v for k, v in os.environ.items() if k != "SPECLAB_HIDE_REFERENCES"}
    code = "from grading.judge.execute import JudgeExecute as J; print(J().hide_references)"
    for value, want in ((None, "True"), ("1", "True"), ("0", "False")):
        run_env = env if value is None else {**env, "SPECLAB_HIDE_REFERENCES": value}
        out = subprocess.run([sys.executable, "-c", code], env=run_env, cwd=REPO, capture_output=True, text=True)
        assert out.stdout.strip() == want, (value, out.stdout, out.stderr[-500:])
    for aid in assignments():   # none exempt: each kernel lacks its notebook's every exercise
        source = nbformat.read(REPO / "solutions" / aid / f"{aid}.ipynb", as_version=4)
        assert JudgeExecute().hidden_names(aid, source) == hidden.exercise_names(source) != [], aid


@pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
def test_no_route_finds_the_reference_in_a_kernel_graded_for_its_notebook(tmp_path, hidden_names=("accept_prob",)):
    # No integrity scan here: the kernel as grading 02 starts it. Seen failing with hidden_names=(): all six found.
    from grading.course import REPO

    code = FIND + "_seen = []\n"
    for name, route in ATTACK_ROUTES.items():
        code += route.format(repo=str(REPO), cache=str(hidden.cache_root()))
        code += f"if _found is not None:\n    _seen.append({name!r})\n_found = None\n"
    code += "print(_seen)\n"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    config = Config()
    config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
    config.SandboxedKernelManager.hidden = list(hidden_names)
    config.SandboxedKernelManager.notebook = AID
    RobustExecute(config=config, timeout=120, sandbox=True, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    texts = [o.get("text", "") for o in nb.cells[0].outputs if o.get("name") == "stdout"]
    assert texts and texts[-1].strip() == "[]", nb.cells[0].outputs


def run_hidden(tmp_path, aid, code, timeout=120):
    """Run `code` as one cell in a sandboxed kernel whose speclab lacks `aid`'s references, as grading `aid` starts
    it; returns the cell's outputs."""
    source = nbformat.read(f"solutions/{aid}/{aid}.ipynb", as_version=4)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    config = Config()
    config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
    config.SandboxedKernelManager.hidden = hidden.exercise_names(source)
    config.SandboxedKernelManager.notebook = aid
    RobustExecute(config=config, timeout=timeout, sandbox=True, kernel_name="python3", allow_errors=True).preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    return nb.cells[0].outputs


# 02's widget, built and moved in a kernel grading 02: its title's rate is the shaded overlap, not the course's
# acceptance_rate (hidden there). Seen failing with update_overlap calling speculative.acceptance_rate: the probe
# raised "the course's reference for acceptance_rate is not available while 02_acceptance_rule is graded".
WIDGET_02 = """
from speclab.views import widgets
from speclab.views.figures import nb02
w = widgets.live(nb02.build_overlap, nb02.update_overlap,
                 blend_weight=widgets.slider(0.85, 0.0, 1.0, 0.05, "blend weight w"),
                 temperature=widgets.slider(1.0, 0.3, 3.0, 0.1, "temperature T"))
perfect = widgets.probe(w, "blend weight w", 1.0)["rate"]
widgets.probe(w, "blend weight w", 0.85)
print(repr((w.result["rate"], widgets.probe(w, "temperature T", 1.3)["rate"], perfect)))
"""


@pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
def test_02_widget_draws_in_a_kernel_grading_02(tmp_path):
    outputs = run_hidden(tmp_path, AID, WIDGET_02)
    texts = [o.get("text", "") for o in outputs if o.get("name") == "stdout"]
    assert texts and not [o for o in outputs if o.get("output_type") == "error"], outputs
    good, hotter, perfect = eval(texts[-1])
    assert round(good, 4) == 0.9286 and round(hotter, 3) == 0.947 and abs(perfect - 1) < 1e-12, (good, hotter, perfect)


def routes_seen_grading(tmp_path, aid, routes):
    """What `routes` (a cell that prints a dict route -> what it found) prints in the kernel JudgeExecute sets up to
    grade `aid`, with its outputs for the failure message."""
    from grading.judge.execute import JudgeExecute

    source = nbformat.read(f"solutions/{aid}/{aid}.ipynb", as_version=4)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(routes)])
    config = Config()
    config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
    config.SandboxedKernelManager.hidden = JudgeExecute().hidden_names(aid, source)
    config.SandboxedKernelManager.notebook = aid
    RobustExecute(config=config, timeout=120, sandbox=True, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    texts = [o.get("text", "") for o in nb.cells[0].outputs if o.get("name") == "stdout"]
    return (eval(texts[-1]) if texts else None), nb.cells[0].outputs


# Notebook 10's references by three routes: its module imported by a built name, the module's file run anew, and the
# helper that stands the course's prompt_lookup in for an unsolved one in 10's demos (specloop.your_lookup). The kernel
# is configured with the names JudgeExecute hides when it grades 10. Seen failing while NOT_HIDDEN exempted 10: every
# route answered [3, 1].
ROUTES_10 = """
import importlib
mod = importlib.import_module('spec' + 'lab.decoding.spec' + 'loop')
def unsolved(*args):
    raise NotImplementedError
seen = {}
for route, get in (("import", lambda: getattr(mod, 'prompt_' + 'lookup')),
                   ("file", lambda: ns['prompt_' + 'lookup']),
                   ("stand-in", lambda: mod.your_lookup(unsolved))):
    if route == "file":
        ns = {"__name__": "speclab.decoding.copied", "__package__": mod.__package__}
        exec(compile(open(mod.__file__).read(), mod.__file__, "exec"), ns)
    try:
        seen[route] = repr(get()([1, 2, 3, 1, 2], 2))
    except NotImplementedError as e:
        seen[route] = str(e)
print(repr(seen))
"""


@pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
def test_a_kernel_grading_10_reaches_no_prompt_lookup_by_import_file_or_stand_in(tmp_path):
    aid = "10_real_transformer"
    seen, outputs = routes_seen_grading(tmp_path, aid, ROUTES_10)
    gone = f"the course's reference for prompt_lookup is not available while {aid} is graded"
    assert seen == {"import": gone, "file": gone, "stand-in": gone}, outputs


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*not in session.*")  # nbgrader's harmless SAWarning, from the autograde
@pytest.mark.xdist_group("catalog-10_real_transformer")  # beside the other readers of 10's autograde: no lock waited on
def test_10_graded_with_its_references_hidden_draws_for_the_reference_and_says_needs_for_a_blank(autograded):
    """10's demos take the learner's functions (specloop.your_loop, your_lookup), so in a kernel grading 10, where the
    course's are hidden: the reference scores full marks and every cell runs clean, tables and widget included; a
    blank submission's demos end in needs' one line, never a traceback (its test cells fail, as they should). Seen
    failing with main's demos (the course's sl.speculative_generate and sl.prompt_lookup) and 10 out of NOT_HIDDEN:
    the blank's experiment cell raised the stub's NotImplementedError, the three that read it KeyError or NameError.
    Read from the run's own autograde of 10's reference and blank copies (make grade's sandboxed steps, hiding on:
    tests/conftest.py), not graded again here; seen failing on it with SPECLAB_HIDE_REFERENCES=0 (the blank's cells
    printed the course's numbers)."""
    aid = "10_real_transformer"
    root, _ = autograded(aid)
    assert score(root, aid, "reference") == bs.full_marks(root, aid), cell_scores(root, aid, "reference")
    printed = {}
    for student in ("reference", "blank"):
        nb = nbformat.read(root / "autograded" / student / aid / f"{aid}.ipynb", as_version=4)
        errors = [(c.get("id"), o.get("ename")) for c in nb.cells for o in c.get("outputs", [])
                  if o.get("output_type") == "error" and not c.metadata.get("nbgrader", {}).get("grade")]
        assert not errors, (student, errors)
        printed[student] = {c.get("id"): "".join(o.get("text", "") for o in c.get("outputs", [])) for c in nb.cells}
        printed[student]["widgets"] = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                                          for c in nb.cells for o in c.get("outputs", []))
    ref, blank = printed["reference"], printed["blank"]
    assert "identical to greedy" in ref["cell-022"] and "speedup on this CPU" in ref["cell-032"], ref
    assert "chat's answer" in ref["cell-030"] and ref["widgets"] >= 1, ref
    for cell in ("cell-022", "cell-030", "cell-032", "cell-034", "cell-035"):
        assert blank[cell].startswith("Solve Exercise A (verify_block)"), (cell, blank[cell])


# 07's weight_bytes by two routes the integrity scan cannot follow, in the kernel JudgeExecute sets up to grade 07:
# its module imported by a built name, and its file compiled and run anew; then through 07's own demo helper,
# serving.deployment, handed a learner's weight_bytes that is unsolved. Seen failing with 07 back in NOT_HIDDEN: every
# route answered (13476831232 bytes; the deployment priced with the course's).
ROUTES_07 = """
import importlib
mod = importlib.import_module('spec' + 'lab.speed.hard' + 'ware')
cfg, seen = mod.load_model('llama-2-7b'), {}
try:
    seen["import"] = repr(mod.weight_bytes(cfg))
except RuntimeError as e:
    seen["import"] = str(e)
ns = {"__name__": "speclab.speed.copied", "__package__": "speclab.speed"}
exec(compile(open(mod.__file__).read(), mod.__file__, "exec"), ns)
try:
    seen["file"] = repr(ns["weight_bytes"](cfg))
except RuntimeError as e:
    seen["file"] = str(e)
def unsolved(*args):
    raise NotImplementedError()
try:
    seen["demo"] = repr(importlib.import_module('speclab.speed.serving').deployment(step=unsolved, weights=unsolved))
except RuntimeError as e:
    seen["demo"] = str(e)
print(repr(seen))
"""


@pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
def test_a_kernel_grading_07_reaches_not_its_weight_bytes(tmp_path):
    aid = "07_roofline"
    seen, outputs = routes_seen_grading(tmp_path, aid, ROUTES_07)
    gone = f"the course's reference for {{}} is not available while {aid} is graded"
    assert seen == {"import": gone.format("weight_bytes"), "file": gone.format("weight_bytes"),
                    "demo": gone.format("weight_bytes")}, outputs


# The 07 reference and a blank copy, graded with hiding on (the default) by make grade's sandboxed steps: the run's own
# autograde of them (tests/conftest.py), read here, not graded again. The reference scores
# full marks, and no cell of it shows an error, a traceback or needs' line: its demo cells and widget run on its own
# functions (seen failing with cell-036 calling hw.crossover_batch(T, four, n): needs' line in the reference). The
# blank copy's demo cells print needs' line where a kernel that kept the course's references prints the course's
# numbers (seen failing with 07 back in NOT_HIDDEN: cell-031 printed "plain target step  : 10.530 ms ..."; and on the
# autograde with SPECLAB_HIDE_REFERENCES=0).
@pytest.mark.slow
@pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")
@pytest.mark.filterwarnings("ignore:.*not in session.*")  # nbgrader's harmless SAWarning, from the autograde
@pytest.mark.xdist_group("catalog-07_roofline")  # beside the other readers of 07's autograde: no lock waited on
def test_07_graded_with_its_references_hidden_runs_every_demo_on_the_learners_functions(autograded):
    aid = "07_roofline"
    root, _ = autograded(aid)  # the run's own autograde of 07's reference and blank copies, not graded again here
    assert score(root, aid, "reference") == bs.full_marks(root, aid), cell_scores(root, aid, "reference")

    def outputs(student):
        nb = nbformat.read(root / "autograded" / student / aid / f"{aid}.ipynb", as_version=4)
        return {c.id: c.outputs for c in nb.cells if c.cell_type == "code"}

    def text(outs):
        return "".join(o.get("text", "") for o in outs if o.get("output_type") == "stream")

    ref = outputs("reference")
    bad = {cid: outs for cid, outs in ref.items()
           if any(o.get("output_type") == "error" or any(mark in o.get("text", "") for mark in
                  ("Traceback", "not available", "Solve Exercise")) for o in outs)}
    assert not bad, bad
    assert "plain target step  : 10.530 ms" in text(ref["cell-031"]), ref["cell-031"]
    assert "back at batch 1, 1,024 context: 2.45x" in text(ref["cell-049"]), ref["cell-049"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in ref["cell-048"]), ref["cell-048"]
    blank = outputs("blank")
    for cid in ("cell-031", "cell-036", "attention-ridge", "cell-039", "cell-049"):
        assert "Solve Exercise A (weight_bytes)" in text(blank[cid]), (cid, blank[cid])
