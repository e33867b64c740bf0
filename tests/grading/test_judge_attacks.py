"""Issue 42's data-level attacks on the judge: what a submission that controls its kernel (its agent included)
sends the grader, and what the grader makes of it.

Each attack is tried through the judge in this process (a kernel's agent here, or a forged answer standing for a
kernel whose agent the student rewrote) as a test cell of the judge's runs it: the attacker earns nothing it did
not compute, nothing happens outside (no file removed, no code run, no variable of the grader's environment
shown), and an honest classmate judged next, in the same process, passes the same test. Two run end to end
through the real judge and a sandboxed kernel (slow): the in-place mutation and the agent as a resolver.
Each was seen failing on the judge before issue 42 (the commit's message says how).
"""
import gc
import json
import socket
import threading
import tracemalloc
import types

import nbformat
import numpy as np
import pytest

import speclab.plumbing.checks
from grading.judge import channel, codec
from grading.judge.judge import Judge
from tests.grading.conftest import InProcessKernel, code_cell

HONEST = "import numpy as np\n\ndef answer(p):\n    return 2 * np.asarray(p)\n"
TEST = ("import numpy as np\nfrom speclab.plumbing.checks import check_close\n"
        "_p = np.array([0.25, 0.75])\n_r = answer(_p)\ncheck_close(_r, 2 * _p, 'twice p')\n")


def judged(test, student=HONEST, forged=None):
    """The outputs of test cell `test` judged against a kernel that ran `student` (or answers `forged`), and the
    judge's namespace after it."""
    nb = nbformat.v4.new_notebook(cells=[code_cell("def answer(p):\n    raise NotImplementedError\n", solution=True,
                                               grade=False, grade_id="answer")])
    j = Judge(nb, InProcessKernel(student, forged))
    outputs = j.run_test("t", test)
    gc.collect()  # a finaliser built by the decoder would run now
    return [(o.get("ename") or o.get("name"), o.get("evalue") or o.get("text")) for o in outputs], j.ns


def failed(outputs):
    return [o for o in outputs if o[0] not in ("stdout", "stderr")]


def honest_classmate_passes(test=TEST):
    outputs, _ = judged(test)
    assert not failed(outputs), outputs


@pytest.fixture
def hostile(monkeypatch):
    """A module a speclab module imports (as speclab.models.smollm.cache imports json, and json codecs, and codecs
    builtins), holding library-like classes: a finaliser that removes a path, an iterable that calls what it
    holds, a value whose == answers what it holds."""
    mod = types.ModuleType("hostile")
    exec('''

class Cleanup:
    def __del__(self):
        os.remove(self.path)

class Lazy:
    def __iter__(self):
        self.call(self.code)
        return iter([0.5, 1.5])

class Agree:
    def __eq__(self, other):
        return self.verdict
    def __ne__(self, other):
        return not self.verdict
''', mod.__dict__)
    monkeypatch.setattr(speclab.plumbing.checks, "_hostile", mod, raising=False)
    return mod


def test_a_finaliser_class_reached_through_a_speclab_modules_imports_is_not_built(tmp_path, hostile):
    victim = tmp_path / "gradebook.db"
    victim.write_text("grades")
    forged = {"ok": {"obj": ["speclab.plumbing.checks:_hostile.Cleanup", {"dict": [["path", str(victim)]]}]}}
    outputs, ns = judged(TEST, forged=forged)
    built = "_r" in ns
    ns.clear()  # the worker drops the judge's namespace after the notebook
    gc.collect()
    assert victim.exists(), "the judge built the kernel's object, and its finaliser removed a file"
    assert not built, "the judge built the kernel's object"
    assert failed(outputs) and "cannot check" in failed(outputs)[0][1], outputs
    honest_classmate_passes()


def test_eval_reached_by_name_is_never_called(tmp_path, hostile):
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).write_text('code ran in the grader')"
    for name in ("speclab.models.smollm.cache:json.codecs.builtins.eval", "speclab.plumbing.checks:_hostile.os.system"):
        forged = {"ok": {"obj": ["speclab.plumbing.checks:_hostile.Lazy", {"dict": [["call", {"fn": name}], ["code", code]]}]}}
        outputs, _ = judged(TEST.replace("check_close(_r,", "check_close(np.array(list(_r)),"), forged=forged)
        assert not marker.exists(), "the judge called a function the kernel named"
        assert failed(outputs), outputs
        outputs, _ = judged(TEST, forged={"ok": {"fn": name}})  # the function itself, as the result
        assert failed(outputs) and "cannot check" in failed(outputs)[0][1], outputs
    honest_classmate_passes()


def test_a_library_class_whose_eq_answers_what_the_kernel_set_earns_nothing(hostile):
    test = "_r = answer([1, 2])\nassert _r == [2, 4], 'twice the list'\n"
    for forged in ({"ok": {"obj": ["speclab.plumbing.checks:_hostile.Agree", {"dict": [["verdict", True]]}]}},
                   {"ok": {"obj": ["speclab.decoding.specloop:np._core.overrides.collections.UserList",
                                   {"dict": [["data", [2, 4]]]}]}}):
        outputs, _ = judged(test, forged=forged)
        assert failed(outputs) and "cannot check" in failed(outputs)[0][1], (forged, outputs)
    honest_classmate_passes("_r = answer([1, 2])\nassert _r.tolist() == [2, 4]\n")


def test_the_graders_environment_cannot_be_named(monkeypatch):
    monkeypatch.setenv("SPECLAB_GRADER_TOKEN", "tok-1b2c3d-secret")
    test = "from speclab.plumbing.checks import check_equal\ncheck_equal(answer([1, 2]), [2, 4], 'twice the list')\n"
    for name in ("speclab.plumbing.checks:_os.environ", "speclab.plumbing.checks:_os.environ.copy", "os:environ"):
        outputs, _ = judged(test, forged={"ok": {"fn": name}})
        assert failed(outputs), outputs
        assert "tok-1b2c3d-secret" not in json.dumps(outputs), "the grader's environment is on the feedback page"
    honest_classmate_passes(test)


def test_registered_course_types_are_checked_field_by_field():
    """Even a course class of the registry is built only with its own fields, each of the type it holds."""
    bad = [["speclab.rules.sampling:ScriptedRNG", [["uniforms", [0.5]], ["calls", 0], ["__class__", 1]]],
           ["speclab.rules.sampling:ScriptedRNG", [["uniforms", [2.0]], ["calls", 0]]],
           ["speclab.rules.sampling:ScriptedRNG", [["uniforms", "abc"], ["calls", -1]]],
           ["speclab.models.smollm.model:Model", [["w", {"dict": [["token_embd", {"fn": "speclab.plumbing.checks:_os.system"}]]}],
                                           ["bytes_per_token", 1]]],
           ["speclab.models.smollm.model:KVCache", [["kv", [1]], ["length", 0]]]]
    for name, fields in bad:
        with pytest.raises(codec.CodecError):
            codec.decode({"obj": [name, {"dict": fields}]})
    ok = codec.decode({"obj": ["speclab.rules.sampling:ScriptedRNG", {"dict": [["uniforms", [0.5]], ["calls", 0]]}]})
    assert type(ok).__name__ == "ScriptedRNG" and ok.random() == 0.5


# ----------------------------------------------------------------------------- the protocol's bounds

class Pair:
    """A Channel (the judge's end) connected to a socket this test writes on, as the kernel's agent would."""

    def __init__(self, tmp_path):
        path = str(tmp_path / "agent.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        self.channel = channel.Channel(path)
        self.agent, _ = server.accept()
        server.close()

    def feed(self, data):
        """Write data from a thread (the judge stops reading: the writer must not hold the test)."""
        def write():
            try:
                self.agent.sendall(data)
            except OSError:
                pass
        t = threading.Thread(target=write, daemon=True)
        t.start()
        return t

    def read(self, n, rounds=100_000):
        import select

        for _ in range(rounds):
            msg = self.channel.line(n)
            if msg is not None or self.channel.refused:
                return msg
            select.select([self.channel.fd], [], [], 1.0)
            self.channel.fill()
            if self.channel.dead and not self.channel.buf:
                return None
        return None

    def close(self):
        self.channel.close()
        self.agent.close()


def test_a_120_mb_line_is_refused_without_reading_it_whole(tmp_path):
    pair = Pair(tmp_path)
    pair.channel.send({"n": 1, "kind": "call", "body": {"name": "answer", "args": [0.5], "kwargs": {}}}, 5, new=True)
    line = b'{"n":1,"done":{"ok":[' + b"1," * (60 << 20) + b"1]}}\n"  # 120 MB of small ints: 25 bytes each parsed
    tracemalloc.start()
    writer = pair.feed(line)
    msg = pair.read(1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    pair.close()
    writer.join(10)
    assert msg is None and pair.channel.refused and "bytes" in pair.channel.refused
    assert peak < channel.LINE_ALLOWANCE + (16 << 20), f"the judge held {peak / 2**20:.0f} MiB of one line"


def test_lines_for_no_request_are_counted_never_parsed(tmp_path, monkeypatch):
    pair = Pair(tmp_path)
    pair.channel.send({"n": 7, "kind": "call", "body": {}}, 5, new=True)
    parsed = []
    real = json.loads
    monkeypatch.setattr(channel.json, "loads", lambda raw: parsed.append(len(raw)) or real(raw))
    flood = b'{"n":6,"cb":0,"args":[],"kwargs":{}}\n' * 50 + b'{"cb":0}\n' * 50 + b'{"n":7,"done":{"ok":1}}\n'
    writer = pair.feed(flood)
    assert pair.read(7) == {"n": 7, "done": {"ok": 1}}
    assert pair.channel.unrequested == 100 and len(parsed) == 1, (pair.channel.unrequested, len(parsed))
    writer.join(10)
    writer = pair.feed(b'{"n":3}\n' * (channel.UNREQUESTED + 10) + b'{"n":7,"done":{"ok":1}}\n')
    assert pair.read(7) is None and "no request" in pair.channel.refused  # a flood: nothing more is read
    pair.close()
    writer.join(10)


# ----------------------------------------------------------------------------- changes to the arguments

MUTATES = '''import numpy as np

def answer(p):
    p[:] = 0.0                       # writes into the test's input ...
    return np.zeros(len(p))          # ... so that twice the (zeroed) input is what it returns
'''


def test_an_exercise_that_writes_into_its_inputs_changes_no_expected_value():
    outputs, ns = judged(TEST, student=MUTATES)
    assert failed(outputs), "an exercise that zeroed its input passed: the change reached the test's own array"
    assert ns["_p"].tolist() == [0.25, 0.75]
    honest_classmate_passes()


def test_a_declared_output_is_copied_back_and_nothing_else():
    student = "def answer(p, out, rng, g):\n    out[:] = p\n    p[:] = 0\n    rng.random()\n    g.random()\n    return 1\n"
    test = ("import numpy as np\nfrom speclab.plumbing.isolate import outputs\nfrom speclab.rules.sampling import ScriptedRNG\n"
            "_p, _out, _rng, _g = np.ones(2), np.zeros(2), ScriptedRNG([0.5, 0.5]), np.random.default_rng(1)\n"
            "_state = dict(_g.bit_generator.state)\n"
            "with outputs(_out):\n    answer(_p, _out, _rng, _g)\n")
    outputs, ns = judged(test, student=student)
    assert not failed(outputs), outputs
    assert ns["_out"].tolist() == [1.0, 1.0] and ns["_p"].tolist() == [1.0, 1.0]
    assert ns["_rng"].calls == 1 and ns["_rng"].uniforms == [0.5, 0.5]
    assert ns["_g"].bit_generator.state != ns["_state"], "a generator drawn from moves on, as in the kernel"



# A test in 03's manner: a scripted rng and a generator handed to the exercise, the token checked against the test's
# own expectation, the uniforms it should have drawn counted. The kernel's answer below is forged (its agent
# rewritten): what it claims the call made of the rng and the generator comes back in `mut`.
RNG_TEST = ("import numpy as np\nfrom speclab.rules.sampling import ScriptedRNG\n"
            "_rng, _g = ScriptedRNG([0.5, 0.8]), np.random.default_rng(3)\n_state = dict(_g.bit_generator.state)\n"
            "_got = answer(_rng, _g)\nassert (_got, _rng.calls) == (1, 2), (_got, _rng.calls)\n")


def _scripted(uniforms, calls, extra=()):
    return {"obj": ["speclab.rules.sampling:ScriptedRNG", {"dict": [["uniforms", uniforms], ["calls", calls], *extra]}]}


@pytest.mark.parametrize("token, rng, g", [
    (0, _scripted([0.0, 0.0], 2), None),                    # the count the test wants, a wrong token, a new script
    (1, _scripted([0.5, 0.8], 10**6), None),                # a position far past the script
    (1, _scripted([0.5, 0.8], -2), None),                   # a count no ScriptedRNG holds
    (1, _scripted([0.5, 0.8], 2, [["left", 0]]), None),     # a field it has not
    (1, _scripted([0.5, 0.8], True), None),                 # a bool for the count
    (1, _scripted([0.5, 0.8], 2), {"rng": [2**130, 1, 0, 0]}),  # a generator state out of PCG64's range
    (1, _scripted([0.5, 0.8], 2), {"rng": [1, 1, 7, 0]}),
    (1, _scripted([0.5, 0.8], 2), {"rng": {"dict": []}}),
])
def test_a_forged_rng_state_earns_nothing(token, rng, g):
    """The rng crosses by value and runs in the kernel; only its count of calls comes back (registry.OUTPUTS),
    checked field by field, and a generator's state only as four ints in PCG64's ranges. A kernel that lies
    about what it consumed can only fail its own test: the uniforms the test scripted stay as it wrote them
    (its expected values come from them), and a count the class cannot hold, or a generator state numpy's
    PCG64 cannot, never reaches the test's objects."""
    mut = {"0": rng} if g is None else {"0": rng, "1": g}
    outputs, ns = judged(RNG_TEST, forged={"ok": token, "mut": mut})
    assert ns["_rng"].uniforms == [0.5, 0.8], "the kernel rewrote the test's script"
    assert ns["_g"].bit_generator.state == ns["_state"] or g is None, "a forged generator state reached the test"
    if g is None:
        assert failed(outputs), f"a forged rng ({rng}) with token {token} passed the test"
        assert ns["_rng"].calls in (0, 2, 10**6), ns["_rng"].calls
    honest = "def answer(rng, g):\n    rng.random()\n    rng.random()\n    g.random()\n    return 1\n"
    outputs, ns = judged(RNG_TEST, student=honest)
    assert not failed(outputs), outputs
    assert ns["_g"].bit_generator.state != ns["_state"], "an honest draw from the generator moves it on"


ZEROES_THE_HEAD = '''def answer(model):
    for name in ("token_embd", "output_norm"):     # the tied head, and the norm before it
        try:
            model.w[name][:] = 0.0
        except Exception:
            pass
    return 0
'''


def test_the_course_model_cannot_be_poisoned_through_what_a_test_hands_over():
    """Notebook 10: a test hands an exercise a model (a tiny random stand-in it computes its expected values
    with, or SmolLM2 as load_model caches it per process). The model stays in the judge, a Remote in the
    kernel: an exercise that zeroes its head in place changes a copy at most, never the model the test (or
    the next classmate, judged in the same worker) computes expected values with."""
    from speclab.models.smollm import load_model

    real = load_model()
    before = real.w["token_embd"][:256].copy()
    test = ("from speclab.models.tinyllama import tiny\nfrom speclab.models.smollm import load_model\n"
            "from speclab.plumbing.checks import check_close\n"
            "_m = tiny(seed=1)\n_want = _m.forward([3, 1, 4], _m.new_cache())\n"
            "answer(_m)\nanswer(load_model())\n"
            "check_close(_m.forward([3, 1, 4], _m.new_cache()), _want, 'the stand-in as the test made it')\n")
    outputs, _ = judged(test, student=ZEROES_THE_HEAD)
    assert not failed(outputs), f"the exercise zeroed the test's own stand-in: {outputs}"
    assert np.array_equal(load_model().w["token_embd"][:256], before), "the cached model's head was zeroed"
    assert load_model() is real
    honest_classmate_passes()


def test_the_course_models_weights_are_read_only():
    """The second line: were a model's weights ever reached in place (a judge bug, a test run in the kernel),
    numpy refuses the write. SmolLM2's are memory-mapped read-only; the tiny stand-in's are frozen when drawn."""
    from speclab.models.smollm import load_model
    from speclab.models.tinyllama import tiny

    for model in (load_model(), tiny(seed=3), tiny(seed=3).exit_at(1)):
        for name, w in model.w.items():
            assert not w.flags.writeable, f"{type(model).__name__}.w[{name!r}] is writable"
            with pytest.raises(ValueError):
                w[...] = 0.0


def test_the_agent_is_no_resolver():
    """Student code in the kernel cannot ask the agent for the course's reference functions (the same import
    the ordinary way is flagged by the scan), and the scan flags any use of the agent's name."""
    from grading import integrity

    student = '''import numpy as np

def _resolve(name):
    agent = __speclab_judge__
    for route in (lambda: agent._dec_hook("fn", name),
                  lambda: type(agent).__init__.__globals__["resolve"](name),
                  lambda: agent._dec_hook("obj", name)):
        try:
            return route()
        except Exception:
            pass
    return None

def answer(p):
    twice = _resolve("speclab.rules.speculative:accept_prob")
    return 2 * np.asarray(p) if twice is not None else np.zeros(2)
'''
    outputs, _ = judged(TEST, student=student)
    assert failed(outputs), "the kernel's agent resolved a course function for student code"
    source = nbformat.v4.new_notebook(cells=[code_cell("def answer(p):\n    raise NotImplementedError\n",
                                                   solution=True, grade=False, grade_id="answer")])
    for code, why in ((student, "agent"), ("f = __speclab_judge__.callback\n", "agent"),
                      ("x = globals()['__speclab_judge__']\n", "agent"),
                      ("x = globals()['__speclab_' + 'judge__']\n", "globals()")):  # spelt apart: globals() is
        sub = nbformat.v4.new_notebook(cells=[code_cell(code, solution=True, grade=False, grade_id="answer")])
        assert any(why in f.why for f in integrity.scan(sub, source)), code


# ----------------------------------------------------------------------------- end to end: a sandboxed kernel

@pytest.mark.slow
def test_mutation_and_resolver_through_a_real_kernel(tmp_path, judge_in_sandbox):
    resolver = ("def answer(p):\n    f = __speclab_judge__._dec_hook('fn', 'speclab.rules.speculative:accept_prob')\n"
                "    return 2 * np.asarray(p)\n")
    results = {}
    for name, student in (("honest", HONEST), ("mutates", MUTATES), ("resolver", "import numpy as np\n" + resolver)):
        nb = nbformat.v4.new_notebook(cells=[code_cell(student, solution=True, grade=False, grade_id="answer"),
                                             code_cell(TEST, solution=False, grade=True, grade_id="t")])
        source = nbformat.v4.new_notebook(cells=[code_cell(HONEST, solution=True, grade=False, grade_id="answer"),
                                                 code_cell(TEST, solution=False, grade=True, grade_id="t")])
        judge_in_sandbox(nb, source, tmp_path / name, timeout=30)
        results[name] = [(o.get("ename"), o.get("evalue")) for o in nb.cells[1].outputs if o.output_type == "error"]
    assert results["honest"] == [], results
    assert results["mutates"] and "twice p" in results["mutates"][0][1], results
    assert results["resolver"], "the kernel's agent resolved a course function for student code"
