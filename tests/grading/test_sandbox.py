"""The sandboxed kernel is reached however deep the grader's private folder lies. Its sockets are
reached through a link in that folder, and a Unix socket's path has at most 107 bytes: CI's
pytest folder (/tmp/pytest-of-root/pytest-105/popen-gw1/test_a_kernel_restarted_after_0/kernel/...)
once made zmq refuse them ("File name too long"), and so would a course cloned far down."""
import nbformat
import pytest
from traitlets.config import Config

from grading import sandbox
from grading.grade.kernel import RobustExecute


@pytest.mark.skipif(not sandbox.available(), reason="bubblewrap cannot start here")
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
