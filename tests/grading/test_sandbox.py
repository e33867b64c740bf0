"""The sandboxed kernel starts wherever the course lies, and is reached however deep the grader's private
folder lies.

Its sockets are reached through a link in that folder, and a Unix socket's path has at most 107 bytes:
CI's pytest folder (/tmp/pytest-of-root/pytest-105/popen-gw1/test_a_kernel_restarted_after_0/kernel/...)
once made zmq refuse them ("File name too long"), and so would a course cloned far down. A course cloned
under /tmp has its virtualenv bound at its own path, under the sandbox's private /tmp: bound first, it
once made /tmp a folder where bwrap then could not make the link, and no kernel started."""
import tempfile
from pathlib import Path

import nbformat
import pytest
from traitlets.config import Config

from grading.kernels import sandbox
from grading.kernels.robust import RobustExecute


needs_bwrap = pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")


@needs_bwrap
def test_a_sandboxed_kernel_answers_from_a_folder_too_deep_for_a_socket_path(tmp_path):
    folder = tmp_path / ("deep" * 30) / "kernel"
    assert len(str(folder)) > sandbox.SOCKET_PATH_MAX
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
    config = Config()
    config.SandboxedKernelManager.folder = str(folder)
    ep = RobustExecute(config=config, timeout=60, sandbox=True, kernel_name="python3")
    ep.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert nb.cells[0].outputs[-1]["data"]["text/plain"] == "42"
    assert not list(folder.glob("*.root")), "the link lies elsewhere, and is gone with the kernel"


# Run in the sandboxed kernel: what it sees of the folder bound under /tmp and of the grader's /tmp around it.
LOOK = """
import os
seen = {"bound": open(BOUND + "/marker.txt").read(), "beside": os.path.exists(BESIDE)}
open(SCRATCH, "w").write("mine")
seen["tmp"] = open(SCRATCH).read()
try:
    open(BOUND + "/written.txt", "w").write("no")
    seen["bound writable"] = True
except OSError:
    seen["bound writable"] = False
print(sorted(seen.items()))
"""


@needs_bwrap
def test_a_sandboxed_kernel_starts_when_a_bound_folder_lies_under_tmp(tmp_path, monkeypatch):
    """A folder bound at its own path (as a venv is) under /tmp: the kernel starts, reads it, cannot write it,
    has a /tmp of its own that it can write, and sees nothing else of the grader's /tmp."""
    with tempfile.TemporaryDirectory(dir="/tmp") as outside:
        bound = Path(outside) / "course" / ".venv"
        bound.mkdir(parents=True)
        (bound / "marker.txt").write_text("bound")
        beside = Path(outside) / "course" / "solutions.txt"
        beside.write_text("the grader's")
        dirs = sandbox.python_dirs()
        monkeypatch.setattr(sandbox, "python_dirs", lambda: [*dirs, str(bound)])
        scratch = f"{outside}-scratch.txt"  # a name of the grader's /tmp that nothing else uses
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            f"BOUND, BESIDE, SCRATCH = {str(bound)!r}, {str(beside)!r}, {scratch!r}\n" + LOOK)])
        config = Config()
        config.SandboxedKernelManager.folder = str(tmp_path / "kernel")
        ep = RobustExecute(config=config, timeout=60, sandbox=True, kernel_name="python3")
        ep.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
        assert nb.cells[0].outputs[-1]["text"].strip() == str(sorted(
            {"bound": "bound", "beside": False, "tmp": "mine", "bound writable": False}.items()))
        assert not (bound / "written.txt").exists() and not Path(scratch).exists(), "written in the sandbox only"
