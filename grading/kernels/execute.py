"""Execute a notebook headless and report its errors by cell."""
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from . import kernelwait
from .localkernel import LocalKernelManager

kernelwait.install()  # a lost ZeroMQ wake-up must not hold a cell until its time limit


def notebook_client(nb, folder, timeout=300, **kwargs):
    """nbclient's client for `nb`, run with `folder` as its working folder, on a kernel with sockets of
    its own (grading/kernels/localkernel.py: no TCP port to race another process for)."""
    return NotebookClient(nb, timeout=timeout, kernel_name="python3", kernel_manager_class=LocalKernelManager,
                          resources={"metadata": {"path": str(folder)}}, **kwargs)


def execute(path, allow_errors=False, timeout=300):
    """Run every cell of the notebook at `path` (not saved back); return (nb, seconds)."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    client = notebook_client(nb, path.parent, timeout=timeout, allow_errors=allow_errors)
    start = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - start


def errors(nb):
    """[(cell index, cell id, ename, evalue)] for every error output."""
    out = []
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out.append((i, cell.get("id"), o["ename"], o["evalue"]))
    return out
