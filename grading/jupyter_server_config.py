"""The course's JupyterLab server config: JUPYTER_CONFIG_PATH points at this folder (the Makefile's
make lab, the browser tests). Kernels listen on private Unix sockets, not TCP ports another process
could take first (grading/kernels/localkernel.py)."""
c = get_config()  # noqa: F821 (injected by traitlets)
c.AsyncMappingKernelManager.kernel_manager_class = "grading.kernels.serverkernel.PrivateServerKernelManager"
