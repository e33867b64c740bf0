"""A kernel manager whose kernel listens on Unix sockets in a private folder: no TCP port to race for.

jupyter_client picks a kernel's five TCP ports by binding port 0 and closing the socket, writes them
to the connection file, and only then starts the kernel, which binds them. Another process starting
a kernel in between can be handed the same ports (jupyter_client #487, open; papermill #511). The
loser's kernel fails to bind ("Address already in use"), hangs as it exits, and its client waits the
whole 60 s startup limit before failing. Seen once in 494 executions of the stall bench (issue 25:
two executions at once), and the test suite starts hundreds of kernels from two workers beside a
Jupyter server. jupyter_client's own port cache (LocalPortCache) only sees one process's choices.

Over `ipc` the "ports" are socket files under a folder that is this kernel's alone, so nothing
outside can take them. jupyter_client's default ipc address ("kernel-ipc", relative to each process's
working folder) is not private, hence the folder. Every path we run ourselves uses this manager:
grading/kernels/execute.py, make grade and make check without the sandbox (the sandbox has its own ipc
folder), devtools/mutants.py, and JupyterLab's server (grading/kernels/serverkernel.py): make lab, and each
user's server on the course's JupyterHub, where a class starting kernels at once would race for
ports. Drop it if jupyter_client ever lets the kernel choose its ports.
"""
import shutil
import tempfile
import weakref

from jupyter_client.manager import AsyncKernelManager


class PrivateSockets:
    """For a jupyter_client kernel manager class: the kernel's sockets are Unix sockets in a folder of
    this kernel's own (mode 0700), made as the manager is and removed with the kernel."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # /tmp, not $TMPDIR or the runtime folder: a Unix socket's path has at most 107 bytes
        self._folder = tempfile.mkdtemp(prefix="kernel-", dir="/tmp")
        self.transport, self.ip = "ipc", f"{self._folder}/s"
        # Also removed when this process exits with the kernel never shut down. A Jupyter server
        # without a terminal takes SIGINT (JupyterHub's first word to a server it stops) as a
        # KeyboardInterrupt and exits without shutting its kernels down; those end on their own when
        # they see their parent gone, but their folders would stay.
        self._remove_folder = weakref.finalize(self, shutil.rmtree, self._folder, ignore_errors=True)

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart)
        if not restart:  # a restarted kernel binds the same sockets again
            self._remove_folder()


class LocalKernelManager(PrivateSockets, AsyncKernelManager):
    """nbclient's kernel manager on private sockets."""
