"""The judge (grading/judge/): hidden tests run in the grading worker, never in the student's kernel.

Fast: the codec builds only exact types, and the slice leaves plots and widgets out. SLOW: every judged
notebook's reference and blank submissions score the same, cell by cell, under the judge as under the old
path (the tests in the kernel; a notebook in OPT_OUT is skipped, with its reason, unless
SPECLAB_JUDGE_OPTED_OUT=1), and the three attacks on
tests in the kernel (devtools.attacks.KERNEL_ATTACKS) earn nothing beside an honest classmate of notebook 02
(in notebook 01's class too: tests/grading/test_grading_class.py).
"""
import ast
import html
import json
import os
import subprocess
import sys

import nbformat
import numpy as np
import pytest

from devtools import attacks, badsubmissions as bs
from devtools.coursework import leaked_hidden_lines
from grading.course import REPO, scratch_course, source_notebook
from grading.gradebook import cell_scores
from grading.judge import agent, codec, sync
from grading.judge.execute import JUDGE_OPTED_OUT, OPT_OUT
from grading.judge.slicing import course_slice, exercises, lean, read_anywhere
from speclab.rules.sampling import ScriptedRNG
from tests.grading.conftest import InProcessKernel, code_cell

def roundtrip(x, hook=None, dec=None):
    return codec.decode(json.loads(codec.dumps(x, hook)), dec)


def test_plain_values_cross_with_their_exact_types():
    values = [None, True, 3, 2.5, float("nan"), "s", [1, (2, 3.0)], {"a": 1, 2: [None]},
              np.float64(0.25), np.int64(7), np.bool_(True), np.arange(6, dtype=np.int32).reshape(2, 3),
              np.array([0.5, np.inf]), np.zeros((0, 4)), np.array([True, False]), {1, 4}, set(),
              frozenset({"a", (1, 2)})]
    for x in values:
        y = roundtrip(x)
        assert type(y) is type(x)
        if isinstance(x, np.ndarray):
            assert y.dtype == x.dtype and y.shape == x.shape and np.array_equal(y, x) and y.flags.writeable
        elif x == x:
            assert y == x
    g = np.random.default_rng(5)
    h = roundtrip(g)
    assert type(h) is np.random.Generator and h.random() == g.random()
    course = lambda x: None if type(x) in codec.PLAIN else codec.course_object(x, None)  # noqa: E731
    s = roundtrip(ScriptedRNG([0.5, 0.25]), course)
    assert type(s) is ScriptedRNG and (s.random(), s.calls) == (0.5, 1)


def test_nothing_with_methods_of_its_own_crosses():
    class Agreeable(float):
        def tolist(self):
            return "whatever the test expects"

    class Arr(np.ndarray):
        pass

    for x in (Agreeable(1.0), np.zeros(3).view(Arr), np.array([object()]), lambda: 1, object(), {Agreeable(2.0)},
              np.zeros(2, dtype=[("a", "f8")]), b"bytes"):
        with pytest.raises(codec.CodecError):
            codec.dumps(x)


def test_decode_refuses_what_it_does_not_know():
    bad = [{"nd": ["O", [1], ""]}, {"nd": ["<f8", [2], "AAAAAAAAAAA="]}, {"np": ["<f8", "AA=="]}, {"x": 1},
           {"tuple": 1}, {"dict": [[[1], 2]]}, {"obj": ["builtins:float", {"dict": []}]},
           {"obj": ["speclab.plumbing.checks:check_close", {"dict": []}]}, {"fn": "os:system"}, {"ref": 0},
           {"a": 1, "b": 2}, {"set": [[1]]}, {"set": 1}, {"rng": [1, 2, 3]}, {"rng": [-1, 1, 0, 0]},
           {"rng": [2**128, 1, 0, 0]}, {"rng": [1, 1, 2, 0]}, {"rng": [1, 1, 0, 2**32]}, {"rng": [True, 1, 0, 0]},
           {"rng": {"dict": [["bit_generator", "PCG64"]]}}]
    for j in bad:
        with pytest.raises((codec.CodecError, ValueError)):
            codec.decode(j)
    from grading.judge.callbacks import course_function

    assert course_function("speclab.rules.speculative:accept_prob").__module__ == "speclab.rules.speculative"
    assert codec.registered_class("speclab.rules.sampling:ScriptedRNG") is ScriptedRNG
    for name in ("os:system", "speclab.rules.speculative:<lambda>", "speclab.nothing:x", "speclab.plumbing.checks:check_close",
                 "speclab.rules.speculative:np.load", "speclab.rules.sampling:ScriptedRNG.__init__"):
        with pytest.raises(codec.CodecError):
            course_function(name)
        with pytest.raises(codec.CodecError):
            codec.registered_class(name)


def test_an_argument_is_sent_again_only_when_it_changed(monkeypatch):
    """At every crossing (a callback, the end of a call) the arguments a function may have changed are compared
    with what was last sent; a plain list is compared as it is, without encoding it again (08's contexts)."""
    contexts = [list(range(50)) for _ in range(20)]
    arr = [np.zeros(3)]
    shared = sync.Shared([contexts, arr, 7], [codec.encode(contexts), codec.encode(arr), 7])
    real, calls = sync.encode, []

    def counting(x, hook=None, depth=0):
        if depth == 0:
            calls.append(id(x))
        return real(x, hook, depth)

    monkeypatch.setattr(sync, "encode", counting)
    assert shared.changes() == {} and calls == [id(arr)], "an unchanged plain list was encoded again"
    contexts[7][3] = -1
    arr[0][1] = 2.0
    changed = shared.changes()
    assert sorted(changed) == ["0", "1"], changed
    assert changed["0"][7][3] == -1 and shared.changes() == {}


def test_an_exposed_argument_is_compared_natively_and_every_change_still_crosses(monkeypatch):
    """07's best_gain calls its `step` back 15,000 times with three hardware dicts among its arguments: once a
    callback holds one, each crossing compares them with a copy of what was last sent (sync.seen), and encodes
    one only if it differs, where anything its encoding tells apart differs (a dict's order, a list for a tuple,
    an array's dtype or bytes; a value equal in another type, 1 for 1.0, was never a change, and is not)."""
    cfg = {"name": "toy", "hidden_size": 64, "tied": False, "eps": 1e-5, "layers": [1, 2], "w": np.zeros(3)}
    shared = sync.Shared([cfg], [codec.encode(cfg)])
    shared.exposed = True
    real, calls = sync.encode, []
    monkeypatch.setattr(sync, "encode", lambda x, hook=None, depth=0: calls.append(1) or real(x, hook, depth))
    assert shared.changes() == {} and len(calls) == 1
    assert shared.changes() == {} and len(calls) == 1, "an unchanged plain dict was encoded again"
    changes = [lambda c: c.__setitem__("tied", True), lambda c: c.__setitem__("hidden_size", 63),
               lambda c: c.__setitem__("name", c.pop("name")), lambda c: c["layers"].append(3),
               lambda c: c["layers"].__setitem__(0, (1,)), lambda c: c["w"].__setitem__(0, -0.0),
               lambda c: c.__setitem__("w", c["w"].astype(np.float32)), lambda c: c.__setitem__("eps", 2e-5)]
    for change in changes:
        change(cfg)
        out = shared.changes()
        assert list(out) == ["0"] and out["0"] == real(cfg), "a change to an exposed argument did not cross"
        assert shared.changes() == {}
    shared.apply({"0": real(dict(cfg, hidden_size=65))}, None)  # the other side's change: compared anew after
    assert cfg["hidden_size"] == 65 and shared.changes() == {}
    cfg["hidden_size"] = 64
    assert shared.changes()["0"] == real(cfg)


def test_a_price_table_crosses_by_value_and_is_called_in_the_kernel():
    """07's hidden tests hand best_gain a PriceTable: it crosses once, by value, its fields checked, and the
    kernel's student code prices every batch from it without a callback (a function is one per batch)."""
    from speclab.speed import hardware as hw
    from speclab.speed.prices import PriceTable

    j, ns = judged("def total(step, cfg, acc):\n    return sum(step(cfg, acc, 1, 512, b) for b in range(1, 301))\n")
    cfg, acc = hw.load_model("llama-3-70b"), hw.accelerator("H100", cards=4)
    table, seen = PriceTable(hw.step_time, (cfg,), acc, 512, (1,), 300), []
    kernel, real = j.transport.agent, j.transport.agent.callback
    kernel.callback = lambda *a: seen.append(a) or real(*a)
    ns.update(_t=table, _cfg=cfg, _acc=acc)
    exec("_got = total(_t, _cfg, _acc)\n_one = total(lambda *a, **k: 1.0, _cfg, _acc)", ns)
    assert ns["_got"] == sum(hw.step_time(cfg, acc, 1, 512, b) for b in range(1, 301))
    assert ns["_one"] == 300.0 and len(seen) == 300, "a function of the judge's is called back once per batch"
    broken = codec.course_object(table, None)
    broken["obj"][1]["dict"] = [p if p[0] != "seconds" else ["seconds", codec.encode(np.zeros(3))]
                                for p in broken["obj"][1]["dict"]]
    with pytest.raises(codec.CodecError):
        codec.decode(broken)


def test_a_model_table_crosses_by_value_and_is_called_in_the_kernel():
    """08's hidden tests hand verify_context_round ModelTables: each crosses with the call, by value, its fields
    checked, and the kernel's student code reads every distribution from it without a callback (a model is one
    per context)."""
    from speclab.models.modeltable import ModelTable
    from speclab.models.ngram import corpus_model

    j, ns = judged("def walk(model, context, drafted):\n"
                   "    return [float(model(list(context) + list(drafted[:i]))[0]) for i in range(len(drafted) + 1)]\n")
    model, context, drafted = corpus_model("code", 3), [5, 6, 7], [8, 9]
    table, seen = ModelTable(model, [context + drafted[:i] for i in range(3)]), []
    kernel, real = j.transport.agent, j.transport.agent.callback
    kernel.callback = lambda *a: seen.append(a) or real(*a)
    ns.update(_t=table, _m=model, _c=context, _d=drafted)
    exec("_got = walk(_t, _c, _d)\n_one = walk(_m, _c, _d)", ns)
    assert ns["_got"] == ns["_one"] == [float(model(context + drafted[:i])[0]) for i in range(3)]
    assert len(seen) == 3, f"the model itself is called back once per context, the table never: {len(seen)}"
    for field, bad in [("probs", np.zeros(3)), ("probs", np.zeros((3, 4), np.float32)), ("window", -1),
                       ("contexts", [[5, 6], (7, 8)]), ("contexts", [[5, 6.0]])]:
        broken = codec.course_object(table, None)
        broken["obj"][1]["dict"] = [p if p[0] != field else [field, codec.encode(bad)] for p in broken["obj"][1]["dict"]]
        with pytest.raises(codec.CodecError):
            codec.decode(broken)
    assert type(codec.decode(codec.course_object(table, None))) is ModelTable, "as sent, it is received"


WALKS = """
def walk(contexts, f, g):
    contexts[0].append(99)          # changed before any callback holds an argument
    a = f(len(contexts[0]))         # handed a number: nothing to compare yet
    b = g(contexts)                 # handed the argument itself: the judge's code sees the change, makes one
    d = len(contexts[1])            # ... which is here when it returns
    contexts[1].append(7)
    c = f(0)                        # from here on every crossing compares: what the judge holds moves on
    return a, b, c, d

def count(contexts, f):
    return [f(len(c)) for c in contexts]
"""


def test_a_callback_compares_the_arguments_only_once_one_was_handed_over(monkeypatch):
    """08's shortcut_tv calls the target back 2,136 times beside 4,000 long contexts: both sides compare the call's
    arguments at a callback only once a callback of the call was handed one of them (a ref), and from then on at
    every crossing, so that what the judge's code holds always shows the kernel's changes."""
    j, ns = judged(WALKS)
    kernel_side, judge_side = j.transport.module.Shared, sync.Shared
    counts = {"kernel": 0, "judge": 0}
    for side, cls in (("kernel", kernel_side), ("judge", judge_side)):
        real = cls.changes
        monkeypatch.setattr(cls, "changes", lambda self, real=real, side=side: counts.__setitem__(
            side, counts[side] + 1) or real(self))
    exec("_ctx = [list(range(3000)) for _ in range(200)]\n_sizes = count(_ctx, lambda n: n + 1)", ns)
    assert ns["_sizes"] == [3001] * 200
    assert counts == {"kernel": 1, "judge": 0}, f"compared at callbacks that held no argument: {counts}"
    exec("_ctx = [[1, 2], [3]]\n_held = []\n"
         "def _g(c):\n    _held.append(c)\n    c[1].append(8)\n    return len(c[0])\n"
         "_out = walk(_ctx, lambda n: len(_held[0][1]) if _held else n, _g)", ns)
    assert ns["_out"] == (3, 3, 3, 2), ns["_out"]
    assert ns["_ctx"] == [[1, 2], [3]] and ns["_held"][0] == [[1, 2, 99], [3, 8, 7]], (ns["_ctx"], ns["_held"])


class LocalAgent:
    """The agent in this process, every message through JSON as over its socket; `restart` loses what it held."""

    def __init__(self, source):
        self.ns, self.sizes = {}, []
        exec(source, self.ns)
        self.agent = agent.Agent(self.ns)

    def restart(self):
        self.agent = agent.Agent(self.ns)

    def transport(self, kind, body, on_callback):
        text = json.dumps(body)
        self.sizes.append(len(text))
        return json.loads(json.dumps(self.agent.call(json.loads(text)))), [], None


def test_a_large_dict_is_sent_once_and_lent_as_it_was_sent():
    """08's count tables: sent once (`keep`), named by a handle after (`held`), sent again when the judge's dict
    changed or the kernel restarted; each call sees it as sent (what an earlier call wrote into it undone), and
    its changes do not come back."""
    from grading.judge.judge import Judge

    nb = nbformat.v4.new_notebook(cells=[code_cell("def total(tables, key):\n    return 0\n", solution=True,
                                               grade=False, grade_id="total")])
    kernel = LocalAgent("import numpy as np\n"
                       "def total(tables, key):\n"
                       "    t = tables[-1]\n"
                       "    s = float(t[key].sum())\n"
                       "    t[key][:] = -1.0  # a careless function changes its argument\n"
                       "    t.pop((0, 1), None)\n"
                       "    return s\n")
    judge = Judge(nb, kernel.transport)
    small = {(): np.array([3.0, 1.0])}
    big = {(i, j): np.array([float(i), float(j)]) for i in range(40) for j in range(40)}
    assert len(big) >= codec.HOLD
    assert judge.ns["total"]([small, big], (3, 4)) == 7.0
    first = kernel.sizes[-1]
    for key, want in [((3, 4), 7.0), ((0, 1), 1.0), ((39, 39), 78.0)]:
        assert judge.ns["total"]([small, big], key) == want, "the kernel's copy was changed by an earlier call"
        assert kernel.sizes[-1] < first / 20, "the held dict was sent again"
    assert big[(3, 4)].tolist() == [3.0, 4.0] and (0, 1) in big, "a change to a lent copy came back to the judge"
    big[(5, 5)] = np.array([100.0, 0.0])  # the test's own dict changed: sent again
    assert judge.ns["total"]([small, big], (5, 5)) == 100.0 and kernel.sizes[-1] > first / 2
    kernel.restart()  # the kernel holds nothing now: the judge sends it again, and the call is made once
    assert judge.ns["total"]([small, big], (5, 5)) == 100.0 and kernel.sizes[-2:][0] < first / 20 < kernel.sizes[-1]


def test_a_count_table_of_a_hundred_rows_is_held_and_another_dict_of_that_size_is_not():
    """08's order-2 tables hold 95 contexts: held from codec.HOLD_ROWS rows (sent once, then named), where any other
    dict of that size still crosses by value at every call."""
    from grading.judge.judge import Judge

    nb = nbformat.v4.new_notebook(cells=[code_cell("def total(tables, key):\n    return 0\n", solution=True,
                                               grade=False, grade_id="total")])
    kernel = LocalAgent("def total(tables, key):\n    return float(sum(tables[-1][key]))\n")
    judge = Judge(nb, kernel.transport)
    table = {(i,): np.full(95, float(i)) for i in range(95)}
    named = {f"k{i}": [float(i)] * 95 for i in range(95)}
    assert len(table) < codec.HOLD
    sizes = []
    for key in [(3,), (4,), (94,)]:
        assert judge.ns["total"]([table], key) == 95.0 * key[0]
        sizes.append(kernel.sizes[-1])
    assert sizes[1] < sizes[0] / 20 and sizes[2] < sizes[0] / 20, f"the count table was sent again: {sizes}"
    for key in ["k3", "k4"]:
        assert judge.ns["total"]([named], key) == 95.0 * int(key[1:])
    assert kernel.sizes[-1] > kernel.sizes[-2] / 2, "a dict that is no count table was held"


def test_a_count_table_is_lent_itself_and_checked_before_each_use():
    """A held dict whose values are rows of one array (next_counts' tables) is lent to the call itself, not
    copied, and checked before each use on both sides, bit for bit: a row the judge's test changes in place is
    sent again; a row a call writes into is restored before the next call; the same table twice in one call
    is two objects, as two copies were."""
    from grading.judge.judge import Judge

    nb = nbformat.v4.new_notebook(cells=[code_cell("def look(tables, key):\n    return 0\n", solution=True,
                                               grade=False, grade_id="look")])
    kernel = LocalAgent("import numpy as np\n"
                        "seen = []\n"
                        "def look(tables, key):\n"
                        "    seen.append(id(tables[0]))\n"
                        "    s = float(tables[0][key][0])\n"
                        "    if key[0] == 1:\n"
                        "        tables[0][key][0] = -1.0  # written in place, in the row's own memory\n"
                        "    return s, float(tables[-1][key][0])\n")
    judge = Judge(nb, kernel.transport)
    keys = [(i, j) for i in range(40) for j in range(40)]
    rows = np.arange(2.0 * len(keys)).reshape(len(keys), 2)
    table = dict(zip(keys, rows))  # as speclab.models.ngram.next_counts builds it: each value a row of `rows`
    assert codec.Seal(table).block is not None, "a count table is sealed by its one block"
    assert judge.ns["look"]([table], (1, 2)) == (rows[42][0], -1.0), "the same dict, within one call"
    first = kernel.sizes[-1]
    assert judge.ns["look"]([table], (1, 2)) == (84.0, -1.0), "the kernel's table kept an earlier call's write"
    assert kernel.sizes[-1] < first / 20, "the held table was sent again"
    assert judge.ns["look"]([table, table], (1, 2)) == (84.0, 84.0), "one table twice: two objects, as copies"
    rows[42][0] = 7.0  # the test changes a row in place: the kernel must see it
    assert judge.ns["look"]([table], (1, 2)) == (7.0, -1.0) and kernel.sizes[-1] > first / 2
    for _ in range(2):
        assert judge.ns["look"]([table], (3, 3)) == (rows[123][0],) * 2 and kernel.sizes[-1] < first / 20
    assert len(set(kernel.ns["seen"][-2:])) == 1, "an untouched held table is lent itself, never copied"
    assert rows[42][0] == 7.0 and np.shares_memory(table[(1, 2)], rows), "the kernel's write came back to the judge"


def test_a_count_table_crosses_as_its_entries_that_are_not_zero():
    """A dict of int-tuple keys and arrays of one shape and dtype (next_counts' tables) is sent as the positions and
    bits of its entries that are not all zero: what arrives is the same dict bit for bit (-0.0 and NaN too, keys
    in order, m = 0 too), its values the rows of one block; anything else is sent a value at a time, and a
    malformed table is refused."""
    keys = [(i, j) for i in range(30) for j in range(40)]
    rows = np.zeros((len(keys), 7))
    rows[::5, 3], rows[7, 0], rows[8, 1], rows[9, 6] = 2.0, -0.0, np.nan, 1e-300
    table = dict(zip(keys, rows))
    sent = json.loads(json.dumps(codec.rows_of(table)))
    assert len(json.dumps(sent)) < len(codec.dumps(table)) / 10, "not smaller than a row at a time"
    got = codec.table_from(sent["rows"])
    assert list(got) == keys and all(type(k) is tuple and all(type(t) is int for t in k) for k in got)
    assert np.stack(list(got.values())).view(np.uint64).tolist() == rows.view(np.uint64).tolist()
    assert codec.Seal(got).block is not None, "the rows of one block, as the agent lends them"
    empty = codec.table_from(json.loads(json.dumps(codec.rows_of({(): np.array([3, 0, 1], dtype=np.int32)})))["rows"])
    assert list(empty) == [()] and empty[()].dtype == np.int32 and empty[()].tolist() == [3, 0, 1]
    for other in ({(1, True): np.zeros(2)}, {(1, 2): np.zeros(2), (1,): np.zeros(2)}, {"a": np.zeros(2)},
                  {(1,): np.zeros(2), (2,): np.zeros(3)}, {(1,): np.zeros(2), (2,): np.zeros(2, np.float32)},
                  {(1,): np.zeros(2, complex)}, {(2**70,): np.zeros(1)}, {(1,): [0.0]}, {}):
        assert codec.rows_of(other) is None, other
    good = sent["rows"]
    repeated = codec._ints(np.zeros(2 * len(keys), int))
    for i, bad in [(0, -1), (0, 1.5), (0, 1), (2, ["<i1", "AA=="]), (2, ["<u8", good[2][1]]), (2, "AA=="), (2, repeated),
                   (3, "|O"), (4, [-1]), (5, codec._ints(np.array([10**9]))), (5, codec._ints(np.array([-1]))),
                   (6, "AAAA")]:
        forged = list(good)
        forged[i] = bad
        with pytest.raises((codec.CodecError, ValueError)):
            codec.table_from(forged)


def test_the_slice_leaves_out_plots_and_widgets():
    nb = nbformat.read(source_notebook("02_acceptance_rule", REPO), as_version=4)
    plan = course_slice(nb, exercises(nb))
    chosen = "\n".join(nb.cells[i].source for i in sorted(plan))
    assert "P, Q = target()" in chosen and "ref.residual(p, q)" in chosen
    assert "widgets.live" not in chosen and "plt.subplots" not in chosen
    assert exercises(nb) >= {"accept_prob", "counter_shortfall"}



def test_the_judge_runs_only_the_imports_a_test_reads():
    tree = lean(ast.parse("import numpy as np, os\nimport matplotlib.pyplot as plt\nfrom speclab.views import style, "
                          "widgets\nfrom x import *\nstyle.use()\nP = 1"), {"np", "style", "P"})
    assert ast.unparse(tree).splitlines() == ["import numpy as np", "from speclab.views import style",
                                              "from x import *", "style.use()", "P = 1"]


def test_a_statement_that_only_styles_the_figures_goes_with_its_import():
    """`style.use()` reads `style`, which nothing else reads: both are left out (matplotlib is never imported);
    a bare statement reading only what is kept stays, and what it reads is kept for it."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import numpy as np\nfrom speclab.views import style\nimport os\n"
                                  "style.use()\nnp.set_printoptions(precision=3)\nos.getpid()\nP = np.ones(2)"),
        code_cell("assert P.sum() == 2", grade=True, solution=False, grade_id="t")])
    wanted = read_anywhere(nb, {0})
    assert {"np", "P"} <= wanted and "style" not in wanted
    kept = ast.unparse(lean(ast.parse(nb.cells[0].source), wanted)).splitlines()
    assert kept == ["import numpy as np", "np.set_printoptions(precision=3)", "P = np.ones(2)"], kept
    # a test that reads `style` keeps it, and the statement that styles with it
    nb.cells.append(code_cell("assert style", grade=True, solution=False, grade_id="u"))
    wanted = read_anywhere(nb, {0})
    kept = ast.unparse(lean(ast.parse(nb.cells[0].source), wanted)).splitlines()
    assert "from speclab.views import style" in kept and "style.use()" in kept and "os.getpid()" not in kept, kept


# a fresh judge of each notebook, run through every course cell its tests need: which heavy modules it loaded
LOADED = """
import sys, nbformat
from grading.judge.judge import Judge
nb = nbformat.read(sys.argv[1], as_version=4)
Judge(nb, lambda *a: (None, [], "no kernel")).advance(len(nb.cells))
print(sorted(m for m in ("matplotlib", "ipywidgets", "IPython") if m in sys.modules))
"""


@pytest.mark.parametrize("aid", ["01_branch_prediction", "02_acceptance_rule", "03_residual", "06_break_even",
                                 "09_beyond_one_draft"])
def test_a_fresh_judge_loads_no_pyplot_widgets_or_ipython(aid):
    """The notebook's first cell imports them for its figures (and styles them), and no test reads them: the
    judge, a fresh process per submission, skips those imports (1 to 2 CPU s each; matplotlib alone 0.25)."""
    out = subprocess.run([sys.executable, "-c", LOADED, str(source_notebook(aid, REPO))], capture_output=True,
                         text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", out.stdout


# ----------------------------------------------------------------------------- the same scores, cell by cell

def old_path_scores(root, aid):
    """{student: cell scores} of the reference and blank submissions graded with the tests in the kernel."""
    from grading.grade import grade

    course = root / "old"
    scratch_course(course, [aid], release="generate")
    good = bs.good_students(course, aid)
    bs.write_class(course, aid, {s: good[s] for s in ("reference", "blank")})
    results = grade(course, [aid], workers=2, cell_timeout=60, quiet=True, export=False, judge=False)
    assert all(r.status == "graded" for r in results), [(r.student, r.notes) for r in results]
    return {s: cell_scores(course, aid, s) for s in ("reference", "blank")}


# The old path (tests in the kernel, `--no-judge`) grades nothing any more: it is kept to compare, as `make bench`'s
# judge section does on every notebook (legs side by side, "same scores" printed). Here on 02 only, the notebook the
# class bench compares on: every notebook's judged reference, blank and one-wrong scores are checked exactly by
# tests/grading/test_pipeline.py, so grading the old path for all ten (about 250 worker-seconds a run, 10's alone
# ~60) checked only the old path.
OLD_PATH_COMPARED = ["02_acceptance_rule"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.*not in session.*")  # nbgrader's harmless SAWarning, from the autograde
@pytest.mark.parametrize("aid", [pytest.param(a, marks=pytest.mark.xdist_group(f"catalog-{a}"))
                                 for a in OLD_PATH_COMPARED])
def test_judge_scores_as_the_old_path(aid, tmp_path, autograded):
    if aid in OPT_OUT and os.environ.get(JUDGE_OPTED_OUT) != "1":
        pytest.skip(f"{aid} is graded the old way: {OPT_OUT[aid]}")
    # the judge's side is the run's own autograde of the same two submissions (make grade's sandboxed steps,
    # the judge on: tests/conftest.py), graded once per run for tests/grading/test_pipeline.py as well; in
    # that notebook's catalog group, so no other worker sits waiting on the autograde's lock
    judged, _ = autograded(aid)
    scores = {True: {s: cell_scores(judged, aid, s) for s in ("reference", "blank")},
              False: old_path_scores(tmp_path, aid)}
    assert scores[True] == scores[False]
    full = bs.full_marks(judged, aid)
    assert sum(s for s, _ in scores[True]["reference"].values()) == full[0]
    assert sum(s for s, _ in scores[True]["blank"].values()) == 0


# ----------------------------------------------------------------------------- the attacks it answers

ATTACK_AID = "02_acceptance_rule"
# The tests that read `attacked` below on one xdist worker: otherwise each worker that gets one grades the class
# again (a CI run graded it on two workers, 17 s and 16 s)
ATTACKED = pytest.mark.xdist_group("judge-attacked")


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """A class of notebook 02: an honest classmate and the three attacks on tests run in the kernel (issue 36),
    graded by the judge (the default). The same attacks in the class of notebook 01:
    tests/grading/test_grading_class.py (devtools.attacks.ATTACKS holds them)."""
    from grading.grade import grade

    root = scratch_course(tmp_path_factory.mktemp("attacked"), [ATTACK_AID], release="generate")
    bs.write_class(root, ATTACK_AID, {"reference": bs.good_students(root, ATTACK_AID)["reference"]})
    bs.write_class(root, ATTACK_AID, bs.bad_class(root, ATTACK_AID, attacks.KERNEL_ATTACKS))
    results = grade(root, workers=2, cell_timeout=60, quiet=True)
    return root, {r.student: r for r in results}


@pytest.mark.slow
@ATTACKED
@pytest.mark.parametrize("case", attacks.KERNEL_ATTACKS, ids=lambda c: c.name)
def test_attack_on_the_kernel_earns_nothing(attacked, case):
    root, results = attacked
    res = results[case.name]
    assert res.status == "graded", res.notes
    deserved = case.expect(root, ATTACK_AID)
    assert (res.score, res.max_score) == deserved or (res.score <= deserved[0] and res.flagged), (
        f"{case.what}: {res.score:g} points, deserves {deserved[0]:g}: {res.notes}")
    assert results["reference"].score == bs.full_marks(root, ATTACK_AID)[0] and not results["reference"].flagged


@pytest.mark.slow
@ATTACKED
def test_no_hidden_test_line_in_any_output(attacked):
    """Not in an autograded notebook's outputs, not on a feedback page, not even printed 12 characters a line
    (joined up again here) from the kernel's history."""
    root, results = attacked
    source = nbformat.read(source_notebook(ATTACK_AID, root), as_version=4)
    for student in results:
        nb = nbformat.read(root / "autograded" / student / ATTACK_AID / f"{ATTACK_AID}.ipynb", as_version=4)
        printed = "".join(str(o.get("text", "")) + str(o.get("evalue", "")) for c in nb.cells if c.cell_type == "code"
                          for o in c.get("outputs", []))
        page = html.unescape((root / "feedback" / student / ATTACK_AID / f"{ATTACK_AID}.html").read_text())
        for text in (printed, page):
            for joined in (text, text.replace("\n", "")):
                leaked = leaked_hidden_lines(joined, source)
                assert not leaked, f"{student}: hidden test lines shown: {leaked[:3]}"
    nb = nbformat.read(root / "autograded" / "attack_history" / ATTACK_AID / f"{ATTACK_AID}.ipynb", as_version=4)
    lines = [[ln for ln in o.text.splitlines() if "truncated" not in ln]  # nbgrader keeps 1,000 lines, says so
             for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "stream"]
    chunked = [ls for ls in lines if len(ls) > 3 and max(map(len, ls)) <= attacks.CHUNK]
    assert chunked, "the history attack printed no cell: is it still an attack?"


# ----------------------------------------------------------------------------- the transport

SPIN = '''def spin(x):
    if x == "loop":
        while True:
            pass
    if x == "stubborn":
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
    if x == "die":
        import os
        os._exit(1)
    if x == "print":
        import sys
        print("hello")
        print("careful", file=sys.stderr)
    return x
'''


@pytest.mark.slow
def test_a_call_past_its_time_is_stopped_and_the_kernel_serves_again(tmp_path, judge_in_sandbox):
    """A call that loops is interrupted; one that ignores the interrupt, or ends its kernel, costs a restart;
    the next test cell is judged as usual; an exercise's prints come back as the cell's outputs, in order."""
    tests = {"loop": 'spin("loop")', "after_loop": "print(spin(2))", "stubborn": 'spin("stubborn")',
             "after_stubborn": "print(spin(3))", "die": 'spin("die")', "after_die": "print(spin(4))",
             "print": 'print(spin("print"))'}
    nb = nbformat.v4.new_notebook(cells=[code_cell("import numpy as np"),
                                         code_cell(SPIN, solution=True, grade=False, grade_id="spin")]
                                  + [code_cell(src, solution=False, grade=True, grade_id=gid) for gid, src in tests.items()])
    judge_in_sandbox(nb, nb, tmp_path, timeout=3)
    out = {c.metadata["nbgrader"]["grade_id"]: [(o.get("name") or o.get("ename"), o.get("text") or o.get("evalue"))
                                                for o in c.outputs] for c in nb.cells[2:]}
    assert out["loop"] == [("CellTimeoutError", "the cell ran longer than 3 s and was stopped")], out["loop"]
    assert out["after_loop"] == [("stdout", "2\n")]
    assert out["stubborn"][0][0] == "CellTimeoutError" and "restarted" in out["stubborn"][0][1], out["stubborn"]
    assert out["after_stubborn"] == [("stdout", "3\n")]
    assert out["die"][0][0] in ("DeadKernelError", "CellTimeoutError"), out["die"]
    assert out["after_die"] == [("stdout", "4\n")]
    assert out["print"] == [("stdout", "hello\n"), ("stderr", "careful\n"), ("stdout", "print\n")], out["print"]


# ----------------------------------------------------------------------------- objects by reference (notebook 10)

def judged(student):
    """A judge whose kernel (InProcessKernel) ran `student`, the notebook's solution cell, and a namespace to run a
    test's code in (the judge's own, where a test's classes are __main__'s)."""
    from grading.judge.judge import Judge

    nb = nbformat.v4.new_notebook(cells=[code_cell(student, solution=True, grade=False, grade_id="s")])
    j = Judge(nb, InProcessKernel(student))
    j.advance(len(nb.cells))
    return j, j.ns


TEST_OBJECTS = '''
import numpy as np
from speclab.models.smollm.model import Config, KVCache

class _Count:
    def __init__(self, length=0):
        self.length = length
    def truncate(self, length):
        self.length = length

class _Model:
    """A test's wrapper of a model: counts its calls; its caches are course objects (made here)."""
    def __init__(self):
        self.calls, self._secret, self.helper = 0, "the expected value", lambda x: x + 1
        self.np, self.system = np, __import__("os").system
    def new_cache(self):
        return KVCache(Config(n_layers=1, n_kv_heads=1, head_dim=2), capacity=8)
    def probs(self, tokens, cache):
        self.calls += 1
        cache.length += len(tokens)
        return np.full((len(tokens), 3), 1 / 3)
'''


def test_a_test_object_crosses_by_reference():
    """A test's object stays in the judge: its methods run there, on the very objects the student's code hands
    them (a stub handed back is the judge's object, as is one returned); a course object one of its methods
    makes (a KV cache) stays there too, so the cache the student holds is the one the wrapper fills."""
    j, ns = judged('''
def run(model, cache, tokens):
    own = model.new_cache()                 # made in the judge: a stub here
    model.probs(tokens, own)
    model.probs(tokens[:1], own)
    rows = model.probs(tokens, cache)       # the judge's own cache, handed back
    own.truncate(own.length - 1)
    return rows, own, own.length, model, model.calls, type(model).__name__, model.helper(4)

def fill(model, cache):                     # a course object passed in crosses by state, as before
    model.probs([1, 2], cache)
    return cache.length
''')
    exec(TEST_OBJECTS + '''
_m, _c = _Model(), _Count(5)
_rows, _own, _length, _back, _calls, _kind, _helped = run(_m, _c, [7, 8, 9])
_course = _m.new_cache()
_filled = fill(_m, _course)
''', ns)
    assert ns["_back"] is ns["_m"] and ns["_m"].calls == 4 and ns["_calls"] == 3
    assert ns["_c"].length == 8 and type(ns["_rows"]) is np.ndarray and ns["_rows"].shape == (3, 3)
    assert type(ns["_own"]).__name__ == "KVCache" and ns["_own"].length == 3 and ns["_length"] == 3
    assert ns["_kind"] == "Remote" and ns["_helped"] == 5
    assert ns["_filled"] == 2 and ns["_course"].length == 2


def test_a_remote_gives_the_kernel_no_more_than_public_attributes():
    """Attacks from the kernel on a stub, and on the agent's channel behind it: no private name, nothing that
    reaches the judge's classes, dicts, globals, closures or bound selves, no data revealing a function, no
    library object, no setting or deleting, no object the judge did not hand this call; decode builds exact
    types only."""
    j, ns = judged('''
KEPT = []

def outcome(f):
    try:
        return ("ok", type(f()).__name__)
    except Exception as e:
        return (type(e).__name__, str(e)[:80])

def probe(model, cache):
    agent, rid, ask = model._agent, model._rid, model._agent.callback
    KEPT.append(model)
    out = {}
    for name in ("_secret", "__dict__", "__class__", "__init__", "__globals__", "__reduce__", "new_cache.__self__"):
        out["get " + name] = outcome(lambda: ask(["get", rid, name], (), {}))
    out["call __getattribute__"] = outcome(lambda: ask(["call", rid, "__getattribute__"], ("_secret",), {}))
    out["call calls"] = outcome(lambda: ask(["call", rid, "calls"], (), {}))
    out["call helper"] = outcome(lambda: ask(["call", rid, "helper"], (1,), {}))
    out["get np"] = outcome(lambda: model.np)
    out["get system"] = outcome(lambda: model.system)
    out["no such id"] = outcome(lambda: ask(["get", rid + 1000, "calls"], (), {}))
    out["set"] = outcome(lambda: ask(["set", rid, "calls"], (1,), {}))
    out["stub _secret"] = outcome(lambda: model._secret)
    out["stub __dict__"] = outcome(lambda: model.__dict__)
    out["probs.__self__"] = outcome(lambda: model.probs.__self__)
    out["helper"] = type(model.helper).__name__
    out["helper.__globals__"] = outcome(lambda: model.helper.__globals__)
    out["helper.__closure__"] = outcome(lambda: model.helper.__closure__)
    out["read a method"] = type(ask(["get", rid, "probs"], (), {})).__name__
    def setter():
        model.calls = 1
    def deleter():
        del model.calls
    def forced():
        object.__setattr__(model, "calls", 1)
    def set_cache():
        cache.length = 99
    for name, f in (("setattr", setter), ("delattr", deleter), ("object.__setattr__", forced),
                    ("set cache", set_cache)):
        out[name] = outcome(f)
    return out

def forge(model):
    return type(model)(model._agent, model._rid + 1000, [])

def stale():
    return KEPT[0].calls
''')
    exec(TEST_OBJECTS + '''
_m, _c = _Model(), _Count(5)
_out = probe(_m, _c)
''', ns)
    out = ns["_out"]
    refused = [k for k in out if k.startswith(("get _", "get __", "get new_cache", "call ", "stub ", "no such", "set"))
               or k in ("probs.__self__", "helper.__globals__", "helper.__closure__", "delattr", "object.__setattr__",
                        "set cache")]
    for k in refused:
        assert out[k][0] in ("AttributeError", "RuntimeError", "TypeError"), (k, out[k])
    for k in ("setattr", "delattr", "object.__setattr__", "set cache"):
        assert out[k][0] == "AttributeError", (k, out[k])
    assert out["get np"][0] == out["get system"][0] == "TypeError", out  # a library's module or function: refused
    assert out["helper"] == out["read a method"] == "Callback"  # a judge's function: callable only, no code
    assert ns["_m"].calls == 0 and ns["_c"].length == 5 and ns["_m"]._secret == "the expected value"
    text = json.dumps(out)
    assert "the expected value" not in text and "_Model" not in text and "os.system" not in text, text
    with pytest.raises(TypeError, match="cannot check"):
        exec("forge(_Model())", ns)  # an id the judge never issued, in a result
    with pytest.raises(RuntimeError, match="no such object"):
        exec("stale()", ns)  # a stub kept from an earlier call names nothing in the next
    with pytest.raises(codec.CodecError):
        codec.decode({"rm": [1, ["probs"]]})  # only the judge's hook builds a remote, from its own table
    with pytest.raises(codec.CodecError):
        codec.decode({"rm": 1}, j._dec({}, []))
