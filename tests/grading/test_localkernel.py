"""grading/localkernel.py: a kernel we start has sockets no other process can take.

jupyter_client chooses TCP ports, writes them down and only then starts the kernel: a port another
process binds in between makes the kernel fail to bind, hang, and its client wait out the 60 s
startup limit (seen in the stall bench, issue 25). The test plays the other process: every port
jupyter_client would hand a kernel is one this test already holds."""
import asyncio
import os
import socket

import nbformat
from jupyter_client.localinterfaces import localhost
from jupyter_client.provisioning.local_provisioner import LocalPortCache

from grading.execute import execute
from grading.localkernel import LocalKernelManager


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


def test_the_kernel_sockets_live_in_a_folder_of_their_own_gone_with_the_kernel():
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

    assert not os.path.exists(asyncio.run(run()))
