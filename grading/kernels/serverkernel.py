"""JupyterLab's own kernel manager, on private sockets (grading/kernels/localkernel.py: no TCP port to race
another process for). Apart from localkernel.py because jupyter_server is slow to import, and only
a server needs it. grading/jupyter_server_config.py names it for make lab; grading/hub/setup.sh for
every server on the course's JupyterHub."""
from jupyter_server.services.kernels.kernelmanager import ServerKernelManager

from .localkernel import PrivateSockets


class PrivateServerKernelManager(PrivateSockets, ServerKernelManager):
    pass
