"""A kernel the grader restarts (after a cell that ran out of memory, timed out or killed it) is
asked until it answers: a restart never waits out a cell's time limit on a request that went to the
old kernel. Seen: each restart of a sandboxed kernel sent one kernel_info over the ipc link of the
kernel that had just gone, waited the whole 60 s cell limit for its reply, then interrupted the new
kernel: grading notebook 02's memory hog took 146 s instead of 19, and the hub test's make grade of
three submissions 157 s. Without the sandbox the single request was answered (this test passes there
on the old code too).

The test restarts a real kernel, in the sandbox and out of it, under a grader whose time limit on a
wait ends the test (nbclient calls _async_handle_timeout when a wait runs out): no timing is
measured, a wait that runs out is an error."""
import nbformat
import pytest
from traitlets.config import Config

from grading.kernels import sandbox
from grading.kernels.robust import RobustExecute


class LimitReached(AssertionError):
    pass


class NoWaitingOut(RobustExecute):
    async def _async_handle_timeout(self, timeout, cell=None):
        raise LimitReached(f"a wait for the kernel ran out its {timeout} s limit")


HOG = "hoard = []\nwhile True:\n    hoard.append(b'x' * 2**27)"  # a global: the memory stays held


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no sandbox"])
def test_a_kernel_restarted_after_running_out_of_memory_is_asked_until_it_answers(sandboxed, tmp_path):
    if sandboxed and not sandbox.available()[0]:
        pytest.skip("bubblewrap cannot start here")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in ("x = 41", HOG, "x + 1")])
    config = Config()  # as grading.grade.run._config sets it for make grade
    config.SandboxedKernelManager.memory_limit = 2 << 30
    config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
    ep = NoWaitingOut(config=config, timeout=15, sandbox=sandboxed, memory_limit=2 << 30, kernel_name="python3")
    ep.nb, ep.resources, ep._skip = nb, {"metadata": {"path": str(tmp_path)}}, set()
    with ep.setup_kernel(cwd=str(tmp_path)):
        for index, cell in enumerate(nb.cells):
            ep.preprocess_cell(cell, ep.resources, index)
    assert any("restarted" in o.get("text", "") for o in nb.cells[1].outputs), \
        f"the hog's cell must have restarted the kernel: {nb.cells[1].outputs}"
    assert nb.cells[2].outputs[-1]["data"]["text/plain"] == "42", "the cell above ran again in the new kernel"
