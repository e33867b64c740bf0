"""A solution cell that tampers with what the tests use earns nothing, and is flagged.

Each attack pairs a tampering line with a WRONG greedy_decode (it ignores its argument and
returns the context forever), so any mark it earned would be undeserved.

Delegation (issue 15): a solution cell that hands its exercise to a course helper not on the
exercise's allow-list (`# Helpers you may call: ...`, read from the source notebook) is flagged
and loses the exercise. The evasions are tried on a small synthetic notebook (below), run
in-process: each delegating answer passes its test as written and fails it once sanitized.
The course's own notebooks are checked too: every solution cell declares its helpers, every
name it declares is a course helper, and the instructor's solutions use only those.

Why one module of about 500 lines: the scan is one function (grading/integrity.scan), and its
attacks and delegation routes are tables of one shape each, checked the same way.
"""
import ast
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from devtools.coursework import fill
from devtools.mutants import failing_in_kernel, run_variant, with_variant
from grading import cells, integrity
from grading.course import assignments, release_notebook, scratch_course, source_notebook

AID = "01_branch_prediction"
WRONG = '''
def greedy_decode(P, ctx, n):
    return [ctx] * n, n
'''
RIGHT = '''
def greedy_decode(P, ctx, n):
    out, t = [], ctx
    for _ in range(n):
        t = int(np.argmax(P[t]))
        out.append(t)
    return out, n
'''
# greedy_decode handed to another course helper (01's break-it reference, which never trusts a
# round when m > n and, with the target as its own draft, emits exactly the greedy tokens).
DELEGATE = """from speclab.rules.speculative import trusting_greedy as tg

def greedy_decode(P, ctx, n):
    return tg(P, P, ctx, n, 1, n + 1)[0], n
"""
ATTACKS = {
    "numpy comparisons always true": "np.isclose = np.allclose = lambda *a, **k: True\n",
    "numpy array_equal always true": "import numpy\nnumpy.array_equal = lambda *a, **k: True\n",
    "builtins replaced": "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.float = lambda x: 0.0\n",
    "speclab check replaced": "import speclab.plumbing.checks\nspeclab.plumbing.checks.check_equal = lambda *a, **k: None\n",
    "check rebound in the notebook": "check_equal = lambda *a, **k: None\n",
    "setattr on the checks module": "import speclab.plumbing.checks as sc\nsetattr(sc, 'check_equal', lambda *a, **k: None)\n",
    "numpy deleted": "del np\n",
    "numpy replaced": "np = None\n",
    "target replaced": "P = np.eye(6)\n",
    "globals() written": "globals()['check_equal'] = lambda *a, **k: None\n",
}
IMMUNE_WITHOUT_SANITIZE = {"numpy comparisons always true", "numpy array_equal always true", "builtins replaced"}


def source():
    return nbformat.read(source_notebook(AID), as_version=4)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_is_flagged_with_cell_and_line(attack):
    nb = with_variant(AID, "greedy_decode", ATTACKS[attack] + WRONG)
    findings = integrity.scan(nb, source())
    assert findings, f"the integrity scan missed: {attack}"
    assert all(f.grade_id == "greedy_decode" and f.line >= 1 for f in findings)
    assert "line" in str(findings[0]) and "greedy_decode" in str(findings[0])


def test_the_reference_import_is_flagged():
    nb = with_variant(AID, "greedy_decode", "from speclab.rules.speculative import greedy_decode\n\n" + "def greedy_decode_unused(): pass\n" + "\ndef greedy_decode(P, ctx, n):\n    raise NotImplementedError\n")
    assert any("reference" in f.why for f in integrity.scan(nb, source()))
    nb = with_variant(AID, "greedy_decode", "import speclab.rules.speculative as ref\n\ndef greedy_decode(P, ctx, n):\n    return ref.greedy_decode(P, ctx, n)\n")
    assert any("reference greedy_decode" in f.why for f in integrity.scan(nb, source()))


def test_honest_work_is_not_flagged():
    helper = '''
def most_likely(row):
    best = 0
    for i in range(len(row)):
        if row[i] > row[best]:
            best = i
    return best

def greedy_decode(P, ctx, n):
    tokens, t = [], ctx
    for _ in range(n):
        t = most_likely(P[t])
        tokens.append(t)
    return tokens, n
'''
    nb = with_variant(AID, "greedy_decode", helper)
    nb.cells.append(nbformat.v4.new_code_cell("x = greedy_decode(P, 0, 5)\nprint(names(x[0]))\nimport numpy as np"))
    assert integrity.scan(nb, source()) == []
    assert integrity.scan(source(), source()) == [], "the course's own notebook is clean"


# Routes to what the tests use that go through the shell, sys or code objects (issue 26): each is flagged with
# its cell and line wherever the student writes it, and the flagged lines are gone once sanitized.
SHELL_ROUTES = {
    "sys.displayhook called": "import sys\nsys.displayhook('ok')\n",
    "displayhook imported from sys": "from sys import displayhook\ndisplayhook('ok')\n",
    "sys under another name": "import sys as s\ns.displayhook = print\n",
    "sys.path changed": "import sys\nsys.path.insert(0, '/tmp')\n",
    "a test helper's __code__ replaced through a parameter": (
        "def tidy(*fs):\n    for f in fs:\n        f.__code__ = (lambda *a, **k: None).__code__\ntidy(check_equal)\n"),
    "a module handed to a function": (
        "def quiet(m):\n    m.check_equal = lambda *a, **k: None\nimport speclab.plumbing.checks as c\nquiet(c)\n"),
    "a function's globals": "check_equal.__globals__['float'] = int\n",
    "a frame's globals": "import sys\ng = sys._getframe(0).f_globals\n",
    "IPython imported": "import IPython\nIPython.get_ipython().input_transformers_post.append(lambda ls: ls)\n",
    "get_ipython imported": "from IPython import get_ipython\nget_ipython().events.register('pre_run_cell', print)\n",
    "get_ipython as the kernel provides it": "get_ipython().input_transformers_post.append(lambda ls: ls)\n",
    "a %%capture cell's body": "%%capture\nimport speclab.plumbing.checks as c\nc.check_equal = lambda *a, **k: None\n",
    "a %time line's argument": "%time import speclab.plumbing.checks as c; c.check_equal = lambda *a, **k: None\n",
    "%%writefile": "%%writefile my_helpers.py\nx = 1\n",
    "a shell command": "!touch my_file\n",
    "importlib.util": "import importlib.util\nspec = importlib.util.spec_from_file_location('m', 'm.py')\n",
    "gc": "import gc\nfor o in gc.get_objects():\n    pass\n",
}
SHELL_HONEST = {
    "%time of the student's own code": "%time my_run = greedy_decode(P, 0, 5)\n",
    "%%time of the student's own code": "%%time\nmy_run = greedy_decode(P, 0, 5)\n",
    "%matplotlib inline": "%matplotlib inline\n",
    "a class that sets its own attributes": (
        "class Counter:\n    def __init__(self):\n        self.n = 0\n\n    def add(self, k):\n        self.n += k\n"),
    "a function that fills an array it is handed": "def fill(out, v):\n    out[0] = v\n",
    "display imported as the course imports it": "from IPython.display import display\ndisplay(1)\n",
}


@pytest.mark.parametrize("route", sorted(SHELL_ROUTES))
def test_shell_and_code_routes_are_flagged_anywhere_and_removed(route):
    nb = with_variant(AID, "greedy_decode", WRONG)
    nb.cells.insert(2, nbformat.v4.new_code_cell(SHELL_ROUTES[route]))
    findings = integrity.scan(nb, source())
    assert findings and all(f.cell == 2 for f in findings), f"{route}: {[str(f) for f in findings]}"
    clean = integrity.sanitize(nb, findings).cells[2].source.splitlines()
    for f in findings:
        kept = clean[f.line - 1] if f.line <= len(clean) else ""
        assert kept.strip().startswith("pass"), f"{route}: line {f.line} was kept: {kept!r}"


def test_ipython_imported_in_a_solution_cell_is_flagged():
    nb = with_variant(AID, "greedy_decode", "import IPython\nIPython.get_ipython()\n" + WRONG)
    assert any(f.grade_id == "greedy_decode" and "IPython" in f.why for f in integrity.scan(nb, source()))


@pytest.mark.parametrize("case", sorted(SHELL_HONEST))
def test_honest_shell_use_is_not_flagged(case):
    nb = with_variant(AID, "greedy_decode", RIGHT)
    nb.cells.insert(len(nb.cells), nbformat.v4.new_code_cell(SHELL_HONEST[case]))
    assert integrity.scan(nb, source()) == [], case


def statements(nb):
    """What the notebook's code cells run, statement by statement. Left out: `pass`, which the scan puts
    where it removed a statement, and a plain `import` of a module the notebook has imported already
    (builtins, numpy, speclab: no code runs) under a name no cell reads (so nothing is shadowed)."""
    read = set().union(*(integrity.free_names(c.source) for c in nb.cells if c.cell_type == "code"))

    def idle(node):
        return isinstance(node, ast.Pass) or isinstance(node, ast.Import) and all(
            a.name.split(".")[0] in ("builtins", "numpy", "speclab")
            and (a.asname or a.name.split(".")[0]) not in read for a in node.names)
    return [[ast.dump(node) for node in ast.parse(c.source).body if not idle(node)]
            for c in nb.cells if c.cell_type == "code"]


@pytest.fixture(scope="module")
def wrong_fails_in_a_kernel():
    """The graded cells that fail when the source notebook, with the wrong greedy_decode and no attack, runs
    in a real kernel (once for this module)."""
    return failing_in_kernel(with_variant(AID, "greedy_decode", WRONG), source_notebook(AID).parent)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_attack_earns_marks_once_sanitized(attack, wrong_fails_in_a_kernel):
    """Once sanitized, the notebook runs exactly the statements of the notebook with the wrong answer and no
    attack (proved statically, statement by statement), and that notebook fails in a real kernel: so
    running each sanitized notebook in a kernel of its own would show nothing more."""
    nb = with_variant(AID, "greedy_decode", ATTACKS[attack] + WRONG)
    clean = integrity.sanitize(nb, integrity.scan(nb, source()))
    assert statements(clean) == statements(with_variant(AID, "greedy_decode", WRONG)), (
        f"{attack}: the scan left part of the attack in the notebook it grades")
    assert "test_greedy_decode" in wrong_fails_in_a_kernel, "a wrong greedy_decode earned marks"


@pytest.mark.parametrize("attack", sorted(IMMUNE_WITHOUT_SANITIZE))
def test_tests_are_immune_to_cheap_attacks_even_unsanitized(attack):
    nb = with_variant(AID, "greedy_decode", ATTACKS[attack] + WRONG)
    failing = failing_in_kernel(nb, source_notebook(AID).parent)
    assert "test_greedy_decode" in failing, f"{attack}: the tests trusted a patched function"


def test_importing_what_the_course_imports_is_not_tampering():
    nb = with_variant(AID, "greedy_decode", "from speclab.plumbing.checks import check_equal\nimport numpy as np\n" + RIGHT)
    assert integrity.scan(nb, source()) == []
    nb = with_variant(AID, "greedy_decode", "from speclab.plumbing.checks import check_close as check_equal\n" + RIGHT)
    assert any("rebinds check_equal" in f.why for f in integrity.scan(nb, source())), "another object is"


def test_sanitizing_keeps_a_right_answer_right():
    """The sanitized notebook runs exactly the statements of the right answer without the tampering line
    (statically), and that answer passes (in-process: it patches nothing)."""
    nb = with_variant(AID, "greedy_decode", "np.isclose = lambda *a, **k: True\n" + RIGHT)
    clean = integrity.sanitize(nb, integrity.scan(nb, source()))
    assert "removed by the integrity scan" in "".join(c.source for c in clean.cells)
    assert statements(clean) == statements(with_variant(AID, "greedy_decode", RIGHT))
    assert not run_variant(AID, "greedy_decode", RIGHT)


def test_make_grade_flags_tampering_in_grades_csv_and_awards_nothing(tmp_path):
    """`make grade` on a small class: two tampering students and an honest one."""
    import csv

    from grading.grade import grade
    from grading.gradebook import cell_scores

    scratch_course(tmp_path, [AID], release="copy")
    student_copy = nbformat.read(release_notebook(AID), as_version=4)
    answers = {"honest": RIGHT, "isclose": ATTACKS["numpy comparisons always true"] + WRONG,
               "rebinder": ATTACKS["check rebound in the notebook"] + WRONG, "delegator": DELEGATE}
    for student, answer in answers.items():
        nb = fill(nbformat.from_dict(student_copy), {"greedy_decode": answer})
        folder = tmp_path / "submitted" / student / AID
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{AID}.ipynb")

    grade(tmp_path, workers=2, quiet=True)
    for student in answers:
        got = cell_scores(tmp_path, AID, student)["test_greedy_decode"][0]
        assert got == (2 if student == "honest" else 0), f"{student} scored {got} on greedy_decode"
    with open(tmp_path / "grades.csv", newline="") as f:
        review = {row["student_id"]: row["review"] for row in csv.DictReader(f)}
    assert review["honest"] == ""
    for student in ("isclose", "rebinder", "delegator"):
        assert "integrity" in review[student] and "greedy_decode" in review[student], review[student]
    assert integrity.DELEGATES in review["delegator"] and "trusting_greedy" in review["delegator"], review["delegator"]


def test_the_delegate_passes_unless_the_scan_removes_it():
    """Seen without the scan: the delegating greedy_decode earns every mark (in-process, as the catalog's
    delegates are run: it patches nothing, so a kernel of its own would show nothing more)."""
    assert not run_variant(AID, "greedy_decode", DELEGATE)


def test_self_check_reports_a_delegation_and_awards_nothing(tmp_path, capsys):
    """`make check` on a student copy whose greedy_decode hands the work to a course helper."""
    from grading import selfcheck

    mine = tmp_path / f"{AID}.ipynb"
    nbformat.write(fill(nbformat.read(release_notebook(AID), as_version=4), {"greedy_decode": DELEGATE}), mine)
    assert selfcheck.main([AID, "--file", str(mine)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"test_greedy_decode\s+0 / 2", out), out
    assert "integrity: cell" in out and integrity.DELEGATES in out and "trusting_greedy" in out, out



# --- delegation: a synthetic notebook with three exercises ---------------------------------------
COURSE = """import numpy as np
from speclab import V, TOKENS, temper
from speclab.speed import costs
from speclab.models import ngram
from speclab.rules import speculative as ref
from speclab.speed.costs import speedup, expected_tokens
"""
TEMPERED = """# Helpers you may call: none
def tempered(P, T):
    logits = np.log(P) / T
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
"""
BEST = """# Helpers you may call: speedup, expected_tokens
def best_speedup(a, c, k_max):
    k = max(range(1, k_max + 1), key=lambda k: (speedup(expected_tokens(a, k), k, c), -k))
    return k, speedup(expected_tokens(a, k), k, c)
"""
DIST = """# Helpers you may call: none
def dist(tables, context, V):
    p = np.full(V, 1.0 / V)
    for m, table in enumerate(tables):
        if m > len(context):
            break
        c = table.get(tuple(int(t) for t in context[len(context) - m:]) if m else ())
        if c is not None:
            p = (c + np.count_nonzero(c) * p) / (c.sum() + np.count_nonzero(c))
    return p
"""
TESTS = {
    "tempered": """_P = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
_e = _P ** 0.5
assert np.allclose(tempered(_P, 2.0), _e / _e.sum(axis=1, keepdims=True)), "rows of exp(log p / T), normalised"
""",
    "best_speedup": """for _a, _c in [(0.8, 0.05), (0.5, 0.3), (0.95, 0.01)]:
    _k, _s = best_speedup(_a, _c, 12)
    assert (_k, round(_s, 9)) == (costs.best_k(_a, _c, 12), round(costs.best_speedup(_a, _c, 12)[1], 9))
""",
    "dist": """_ids = np.array([0, 1, 2, 1, 0, 1, 2, 2, 1, 0])
_tables = ngram.build_tables(_ids, 3, 3)
for _ctx in ([], [1], [2, 1], [0, 1, 2]):
    assert np.allclose(dist(_tables, _ctx, 3), ngram.ngram_dist(_tables, _ctx, 3)), "Witten-Bell"
""",
}
SOLVED = {"tempered": TEMPERED, "best_speedup": BEST, "dist": DIST}


def _cell(kind, gid, src):
    c = new_code_cell(src)
    c.metadata["nbgrader"] = {"grade_id": gid, "locked": kind == "test", "solution": kind == "solution",
                              "grade": kind == "test", **({"points": 1} if kind == "test" else {})}
    return c


def synthetic(answers=None, added=()):
    """The synthetic source notebook, with `answers` {exercise: source} and `added` [(position, source)]."""
    cells = [new_code_cell(COURSE)]
    for gid in SOLVED:
        cells += [_cell("solution", gid, (answers or {}).get(gid, SOLVED[gid])),
                  _cell("test", f"test_{gid}", TESTS[gid])]
    for pos, src in sorted(added, reverse=True):
        cells.insert(pos, new_code_cell(src))
    return new_notebook(cells=cells)


def failing_tests(nb):
    """Run the notebook in-process, cell by cell (plain Python); the graded cells that raised."""
    ns, failed = {"__name__": "__main__"}, set()
    for c in nb.cells:
        try:
            exec(compile(c.source, "<cell>", "exec"), ns)
        except Exception:
            if cells.is_graded(c):
                failed.add(cells.grade_id(c))
    return failed


# (answers, added cells, exercise that must lose its points, words the finding must contain)
DELEGATIONS = {
    "the helper by its course name": (
        {"tempered": "def tempered(P, T):\n    return temper(P, T)\n"}, (), "tempered", "speclab.models.tables.temper"),
    "imported under another name": (
        {"tempered": "from speclab.models.tables import temper as t\n\ndef tempered(P, T):\n    return t(P, T)\n"}, (),
        "tempered", "`t` (speclab.models.tables.temper)"),
    "imported inside the function": (
        {"tempered": "def tempered(P, T):\n    from speclab.models import tables\n    return tables.temper(P, T)\n"}, (),
        "tempered", "speclab.models.tables.temper"),
    "a dotted import": (
        {"tempered": "import speclab.models.tables\n\ndef tempered(P, T):\n    return speclab.models.tables.temper(P, T)\n"}, (),
        "tempered", "speclab.models.tables.temper"),
    "bound to a new name": (
        {"tempered": "f = temper\n\ndef tempered(P, T):\n    return f(P, T)\n"}, (), "tempered", "speclab.models.tables.temper"),
    "getattr on a speclab module": (
        {"tempered": "import speclab.models.tables as m\n\ndef tempered(P, T):\n    return getattr(m, 'temper')(P, T)\n"}, (),
        "tempered", "speclab.models.tables.temper"),
    "getattr with a computed name": (
        {"tempered": "import speclab.models.tables as m\n\ndef tempered(P, T):\n    return getattr(m, 'tem' + 'per')(P, T)\n"},
        (), "tempered", "computed name"),
    "importlib": (
        {"tempered": "import importlib\n\ndef tempered(P, T):\n"
                     "    return importlib.import_module('speclab.models.tables').temper(P, T)\n"}, (), "tempered",
        "speclab.models.tables.temper"),
    "importlib with a computed name": (
        {"tempered": "from importlib import import_module as im\n\ndef tempered(P, T):\n"
                     "    return im('speclab.' + 'models.tables').temper(P, T)\n"}, (), "tempered", "computed name"),
    "a module's __dict__": (
        {"tempered": "import speclab.models.tables as m\n\ndef tempered(P, T):\n    return m.__dict__['temper'](P, T)\n"}, (),
        "tempered", "__dict__"),
    "the module handed to another function": (
        {"tempered": "import operator\nimport speclab.models.tables as m\n\ndef tempered(P, T):\n"
                     "    return operator.attrgetter('temper')(m)(P, T)\n"}, (), "tempered", "course module speclab.models.tables"),
    "a helper from another notebook through a module attribute": (
        {"best_speedup": "def best_speedup(a, c, k_max):\n    k = costs.best_k(a, c, k_max)\n"
                         "    return k, speedup(expected_tokens(a, k), k, c)\n"}, (), "best_speedup", "speclab.speed.costs.best_k"),
    "the reference module of earlier notebooks": (
        {"best_speedup": "def best_speedup(a, c, k_max):\n    return costs.best_speedup(a, c, k_max)\n"}, (),
        "best_speedup", "best_speedup"),
    "a class": (
        {"dist": "def dist(tables, context, V):\n    return ngram.NGram(tables=tables, order=len(tables), V=V)(list(context))\n"},
        (), "dist", "speclab.models.ngram.NGram"),
    "a method": (
        {"dist": "def dist(tables, context, V):\n    return ngram.NGram.uncached(ngram.NGram(tables=tables, order=len(tables), V=V), context)\n"},
        (), "dist", "speclab.models.ngram.NGram.uncached"),
    "a function the student put in a cell of their own": (
        {"tempered": "def tempered(P, T):\n    return helper(P, T)\n"},
        [(1, "def helper(P, T):\n    return temper(P, T)\n")], "tempered", "through `helper`"),
    "a lambda in a cell of their own": (
        {"tempered": "def tempered(P, T):\n    return w(P, T)\n"}, [(1, "w = lambda P, T: temper(P, T)\n")],
        "tempered", "through `w`"),
    "a list holding the helper": (
        {"tempered": "def tempered(P, T):\n    return fs[0](P, T)\n"}, [(1, "fs = [temper]\n")], "tempered",
        "through `fs[0]`"),
    "functools.partial in a cell of their own": (
        {"tempered": "def tempered(P, T):\n    return g(P, T)\n"}, [(1, "import functools\ng = functools.partial(temper)\n")],
        "tempered", "through `g`"),
    "an instance made in a cell of their own": (
        {"dist": "def dist(tables, context, V):\n    return lm(list(context))\n"},
        [(5, "lm = ngram.NGram(tables=ngram.build_tables(np.array([0, 1, 2, 1, 0, 1, 2, 2, 1, 0]), 3, 3), order=3, V=3)\n")],
        "dist", "an instance of speclab.models.ngram.NGram"),
    "a helper kept by a function in another exercise's cell": (
        {"tempered": TEMPERED + "\ndef _pick_k(a, c, k_max):\n    return costs.best_k(a, c, k_max)\n",
         "best_speedup": "def best_speedup(a, c, k_max):\n    k = _pick_k(a, c, k_max)\n"
                         "    return k, speedup(expected_tokens(a, k), k, c)\n"}, (), "best_speedup", "through `_pick_k`"),
    "the exercise's name bound to the helper in a cell of their own": (
        {"tempered": "def tempered(P, T):\n    raise NotImplementedError\n"}, [(2, "tempered = temper\n")], "tempered", "temper"),
    "the helper imported under the exercise's name": (
        {"tempered": "def tempered(P, T):\n    raise NotImplementedError\n"},
        [(2, "from speclab.models.tables import temper as tempered\n")], "tempered", "as `tempered`"),
    "the exercise defined again in a cell of their own": (
        {"tempered": "def tempered(P, T):\n    raise NotImplementedError\n"},
        [(2, "def tempered(P, T):\n    return temper(P, T)\n")], "tempered", "speclab.models.tables.temper"),
    "a statement over several lines": (
        {"tempered": "def tempered(P, T):\n    out = np.asarray(\n        temper(P, T))\n    return out\n"}, (),
        "tempered", "speclab.models.tables.temper"),
}
MAGICS = {
    "a line magic in the cell": "%time x = 1\ndef tempered(P, T):\n    return temper(P, T)\n",
    "a cell magic": "%%time\ndef tempered(P, T):\n    return temper(P, T)\n",
}
HONEST = {
    "the instructor's solutions": ({}, ()),
    "an allowed helper under another name": (
        {"best_speedup": "from speclab.speed.costs import speedup as sp\n\ndef best_speedup(a, c, k_max):\n"
                         "    k = max(range(1, k_max + 1), key=lambda k: (sp(expected_tokens(a, k), k, c), -k))\n"
                         "    return k, sp(expected_tokens(a, k), k, c)\n"}, ()),
    "a parameter named like a helper": (
        {"tempered": TEMPERED.replace("(P, T)", "(P, temper)").replace("/ T", "/ temper")}, ()),
    "course data (V, TOKENS)": ({"tempered": TEMPERED.replace("    logits", "    assert len(TOKENS) == V\n    logits")}, ()),
    "another exercise of the notebook": (
        {"best_speedup": BEST.replace("    return k,", "    tempered(np.eye(2) + 0.5, 1.0)\n    return k,")}, ()),
    "helpers used freely in a cell of the student's own": (
        {}, [(1, "print(temper(np.eye(2) + 0.5, 2.0))\nimport speclab.speed.costs as cc\nprint(cc.best_k(0.5, 0.1, 4))\n"
                 "%matplotlib inline\n")]),
    "a function of the student's own that uses only allowed helpers": (
        {"best_speedup": "def best_speedup(a, c, k_max):\n    k = max(range(1, k_max + 1), key=lambda k: (gain(a, k, c), -k))\n"
                         "    return k, gain(a, k, c)\n"}, [(3, "def gain(a, k, c):\n    return speedup(expected_tokens(a, k), k, c)\n")]),
    "a helper named in a type annotation": (
        {"dist": DIST.replace("    p = np.full(V, 1.0 / V)", "    p: ngram.NGram = np.full(V, 1.0 / V)")
                     .replace("def dist(tables, context, V):", "def dist(tables, context, V) -> ngram.NGram:")}, ()),
    "data a helper made in a cell of the student's own": (
        {"tempered": TEMPERED.replace("    return e", "    assert Z.shape == (2, 2)\n    return e")},
        [(1, "Z = temper(np.eye(2) + 0.5, 2.0)\n")]),
}


@pytest.mark.parametrize("case", sorted(DELEGATIONS))
def test_delegation_is_flagged_and_loses_the_exercise(case):
    answers, added, exercise, words = DELEGATIONS[case]
    nb = synthetic(answers, added)
    assert f"test_{exercise}" not in failing_tests(nb), f"{case}: the delegating answer should pass as written"
    findings = [f for f in integrity.scan(nb, synthetic()) if f.kind == "delegate"]
    assert findings, f"the scan missed a delegation: {case}"
    said = " | ".join(str(f) for f in findings)
    assert words in said and exercise in said, f"{case}: the finding should say {words!r} and name {exercise}: {said}"
    clean = integrity.sanitize(nb, findings)
    assert f"test_{exercise}" in failing_tests(clean), f"{case}: the delegated {exercise} kept its points once sanitized"


@pytest.mark.parametrize("case", sorted(MAGICS))
def test_ipython_syntax_does_not_hide_a_cell(case):
    nb = synthetic({"tempered": MAGICS[case]})
    findings = integrity.scan(nb, synthetic())
    assert any("IPython" in f.why for f in findings), f"{case}: {[str(f) for f in findings]}"
    clean = integrity.sanitize(nb, findings)
    assert "temper(P, T)" not in clean.cells[1].source, clean.cells[1].source


@pytest.mark.parametrize("case", sorted(HONEST))
def test_honest_work_with_allowed_helpers_is_not_flagged(case):
    answers, added = HONEST[case]
    nb = synthetic(answers, added)
    assert integrity.scan(nb, synthetic()) == [], case
    assert failing_tests(nb) == set(), f"{case}: a correct answer must keep every point"


def test_allow_list_comes_from_the_source_not_the_submission():
    nb = synthetic({"tempered": "# Helpers you may call: temper\ndef tempered(P, T):\n    return temper(P, T)\n"})
    assert any(f.kind == "delegate" for f in integrity.scan(nb, synthetic()))
    src = synthetic()
    src.cells[1].source = src.cells[1].source.replace("# Helpers you may call: none", "# Helpers you may call: temper")
    assert integrity.scan(nb, src) == [], "a helper on the source's allow-list is allowed"


def test_a_solution_cell_without_an_allow_line_may_call_nothing():
    src = synthetic()
    src.cells[3].source = src.cells[3].source.split("\n", 1)[1]  # best_speedup loses its line
    assert integrity.missing_allow_lines(src) == [(3, "best_speedup")]
    found = integrity.scan(src, src)
    assert found and all(f.grade_id == "best_speedup" and "may call no course helper" in f.why for f in found)


def test_sanitize_removes_whole_statements():
    nb = synthetic({"tempered": "import functools\n\n@functools.lru_cache\ndef _t(T):\n    return T\n\n"
                                "def tempered(P, T):\n    if T > 0:\n        x = (1 +\n             temper(P, T).sum())\n"
                                "        return temper(P, T)\n    return P\n"})
    findings = integrity.scan(nb, synthetic())
    assert {f.line for f in findings} == {9, 11}, [str(f) for f in findings]
    clean = integrity.sanitize(nb, findings).cells[1].source
    compile(clean, "<sanitized>", "exec")
    assert "temper(" not in clean and "@functools.lru_cache" in clean


# --- the course's notebooks -----------------------------------------------------------------------
@pytest.mark.parametrize("aid", assignments())
def test_every_student_cell_is_a_solution_cell(aid):
    """grading/cells.py reads a solution cell as nbgrader's autograded answer (solution, not grade): the
    scan reads every other cell of the source as the course's own. A manually graded answer (solution
    and grade) or a markdown answer would be neither; the course has none."""
    nb = nbformat.read(source_notebook(aid), as_version=4)
    odd = [i for i, c in enumerate(nb.cells) if cells.meta(c).get("solution") and not cells.is_solution(c)]
    assert not odd, f"{aid}: cells {odd} are student answers that are not solution cells (grading/cells.py)"


@pytest.mark.parametrize("aid", assignments())
def test_every_solution_cell_declares_its_helpers(aid):
    missing = integrity.missing_allow_lines(nbformat.read(source_notebook(aid), as_version=4))
    assert not missing, (f"{aid}: these solution cells must start with `# Helpers you may call: a, b` "
                         f"(or `none`): " + ", ".join(f"cell {i} ({gid})" for i, gid in missing))


@pytest.mark.parametrize("aid", assignments())
def test_allow_lists_name_course_helpers(aid):
    bad = integrity.unresolved_allow_entries(nbformat.read(source_notebook(aid), as_version=4))
    assert not bad, (f"{aid}: allow-list names that are not a speclab function or class the notebook binds: "
                     + ", ".join(f"{gid}: {name}" for gid, name in bad))


@pytest.mark.parametrize("aid", assignments())
def test_instructor_solutions_use_only_allowed_helpers(aid):
    src = nbformat.read(source_notebook(aid), as_version=4)
    found = integrity.scan(src, src)
    assert not found, f"{aid}: the instructor's own solutions are flagged:\n" + "\n".join(map(str, found))
