"""The judge's thread and its kernel's agent share one core while a test cell is judged (grading/judge/colocate.py),
and go back to the cores they had after it."""
import os
import threading
import types

import pytest

from grading.judge.colocate import OneCore, current_cpu
from grading.judge.execute import AGENT, CODEC

ALL = os.sched_getaffinity(0)
needs_two = pytest.mark.skipif(len(ALL) < 2, reason="one core: nothing to choose")


def in_thread(fn):
    """fn() in a thread of its own (an affinity is a thread's: the test's own stays as it was), its result."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


@needs_two
def test_pin_holds_the_thread_to_its_core_until_unpin():
    def run():
        core = OneCore()
        cpu = core.pin()
        held = os.sched_getaffinity(0)
        again = core.pin()  # a second serve in the same cell (after an interrupt) names the same core
        core.unpin()
        return cpu, held, again, os.sched_getaffinity(0), current_cpu()
    cpu, held, again, after, now = in_thread(run)
    assert held == {cpu} and again == cpu
    assert after == ALL and now in ALL
    assert os.sched_getaffinity(0) == ALL  # the test's own thread never moved


def test_one_core_is_not_a_choice():
    def run():
        os.sched_setaffinity(0, {min(ALL)})
        core = OneCore()
        return core.pin(), core.saved
    assert in_thread(run) == (None, None)


def agent():
    module = types.ModuleType("speclab_judge_agent")
    for source in (CODEC, AGENT):
        exec(compile(source, "speclab_judge_agent", "exec"), module.__dict__)
    return module.install({})


@needs_two
@pytest.mark.parametrize("cpu", [max(ALL), None, "0", -1, 10_000])
def test_the_agent_serves_on_the_core_it_is_given_then_goes_back(cpu):
    """A core it may not take (not an int, not one of its own) leaves it where it was, and it serves all the
    same; an error while serving (the interrupt of a call past its time) still gives the cores back."""
    def run():
        a, seen = agent(), []

        def serve():
            seen.append(os.sched_getaffinity(0))
            raise KeyboardInterrupt
        a._serve = serve
        try:
            a.serve(cpu)
        except KeyboardInterrupt:
            pass
        return seen[0], os.sched_getaffinity(0)
    during, after = in_thread(run)
    assert during == ({cpu} if cpu == max(ALL) else ALL)
    assert after == ALL


@needs_two
@pytest.mark.slow
def test_a_judged_cell_runs_the_exercise_on_the_judges_own_core(tmp_path, judge_in_sandbox):
    import nbformat

    from tests.grading.conftest import code_cell

    solution = "import os\ndef where():\n    return sorted(os.sched_getaffinity(0))\n"
    test = "import os\nprint(where(), sorted(os.sched_getaffinity(0)))"
    nb = nbformat.v4.new_notebook(cells=[code_cell(solution, solution=True, grade=False, grade_id="where"),
                                         code_cell(test, solution=False, grade=True, grade_id="t"),
                                         code_cell(test, solution=False, grade=True, grade_id="again"),
                                         code_cell("print(where())")])
    judge_in_sandbox(nb, nb, tmp_path, timeout=30)
    for cell in nb.cells[1:3]:
        kernel, judge = eval(cell.outputs[0]["text"].replace("] [", "], ["))
        assert kernel == judge and len(judge) == 1, cell.outputs
    assert eval(nb.cells[3].outputs[0]["text"]) == sorted(ALL)  # the kernel's own cells: every core again
