"""grading/kernels/localkernel.py: a kernel we start has sockets no other process can take.

jupyter_client chooses TCP ports, writes them down and only then starts the kernel: a port another
process binds in between makes the kernel fail to bind, hang, and its client wait out the 60 s
startup limit (seen in the stall bench, issue 25). The test plays the other process: every port
jupyter_client would hand a kernel is one this test already holds."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from jupyter_client.localinterfaces import localhost
from jupyter_client.provisioning.local_provisioner import LocalPortCache

from grading.kernels.execute import execute
from grading.kernels.localkernel import LocalKernelManager


def test_a_port_taken_by_another_process_does_not_stop_an_execution(tmp_path, monkeypatch):
    taken = socket.socket()
    taken.bind((localhost(), 0))
    taken.listen()
    port = taken.getsockname()[1]
    monkeypatch.setattr(LocalPortCache, "find_available_port", lambda self, ip: port)
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")]), path)
    try:
        nb, _ = execute(path)
    finally:
        taken.close()
    assert nb.cells[0].outputs[-1]["data"]["text/plain"] == "42"


def test_the_kernel_sockets_live_in_a_folder_of_their_own_gone_with_the_kernel(run_coroutine):
    async def run():
        km = LocalKernelManager(kernel_name="python3")
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            assert km.transport == "ipc" and os.path.isabs(km.ip)
            assert os.stat(os.path.dirname(km.ip)).st_mode & 0o077 == 0, "no one else may add to it"
            assert any(name.startswith("s-") for name in os.listdir(os.path.dirname(km.ip)))
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
        return os.path.dirname(km.ip)

    assert not os.path.exists(run_coroutine(run()))


@pytest.fixture
def server(tmp_path):
    """A Jupyter server with the course's config (JUPYTER_CONFIG_PATH=grading, as the Makefile sets it for
    make lab; the hub's servers get the same from grading/hub/setup.sh), no terminal, as JupyterHub
    starts one. Yields (its process, start_kernel() -> the kernel's connection info, its API url)."""
    repo = Path(__file__).resolve().parents[2]
    with socket.socket() as s:
        s.bind((localhost(), 0))
        port = s.getsockname()[1]
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(repo / "grading"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", f"--port={port}", "--port-retries=0",
                             "--ServerApp.token=t", "--no-browser", "--allow-root", f"--ServerApp.root_dir={tmp_path}"],
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = f"http://{localhost()}:{port}/api"

    def start_kernel():
        start = urllib.request.Request(f"{api}/kernels?token=t", data=b'{"name": "python3"}', method="POST")
        kernel = json.load(urllib.request.urlopen(start))["id"]
        return kernel, json.loads((tmp_path / "runtime" / f"kernel-{kernel}.json").read_text())

    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{api}/status?token=t")
                break
            except OSError:
                assert proc.poll() is None, "the server did not start"
                time.sleep(0.5)
        yield proc, start_kernel, api
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:  # stuck in its sockets' linger (above): as JupyterHub does
            proc.kill()
            proc.wait(15)


def test_jupyterlab_starts_its_kernels_on_private_sockets(server):
    _, start_kernel, api = server
    kernel, info = start_kernel()
    assert info["transport"] == "ipc", f"JupyterLab's kernel listens on {info['transport']} {info['ip']}"
    folder = os.path.dirname(info["ip"])
    assert os.stat(folder).st_mode & 0o077 == 0
    urllib.request.urlopen(urllib.request.Request(f"{api}/kernels/{kernel}?token=t", method="DELETE"))
    assert not os.path.exists(folder), "the socket folder goes with the kernel"


def test_a_server_stopped_by_sigint_leaves_no_socket_folder(server):
    """JupyterHub stops a user's server with SIGINT first. Without a terminal the server takes it as a
    KeyboardInterrupt and exits without shutting its kernels down (they end when they see it gone)."""
    proc, start_kernel, _ = server
    _, info = start_kernel()
    folder = os.path.dirname(info["ip"])
    assert os.path.isdir(folder)
    proc.send_signal(signal.SIGINT)
    # What is tested is the folder, gone at interpreter exit (atexit). The rest of the server's exit is
    # not ours and can be slow: it joins jupyter_lsp's start-up scan thread, then tears down its ZeroMQ
    # sockets, each allowed to linger (a faulthandler dump caught each step in 1-4 s exits; once, in a
    # loaded full run, the process was still there 60 s after SIGINT). JupyterHub then sends SIGTERM,
    # then SIGKILL; so does the fixture. So wait for the folder, or for the process.
    deadline = time.monotonic() + 60
    while os.path.exists(folder) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(folder), (
        "the server " + ("exited" if proc.poll() is not None else "went on for 60 s after SIGINT")
        + " and left its kernel's socket folder behind")
