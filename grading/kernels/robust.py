"""The kernel a notebook is graded in: nbgrader's Execute made to survive what a submission does to it
(RobustExecute: interrupt-proof cells, dead kernels, memory), and the kernel's process id for the worker."""
import copy
import re
import resource
from pathlib import Path

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from . import sandbox as sandboxes
from .localkernel import LocalKernelManager
from .timeline import mark
from .outputs import OutputBudget

STOPPED = ("CellTimeoutError", "KeyboardInterrupt", "DeadKernelError")
GIB = 1 << 30


def is_memory_error(ename):
    return ename.endswith("MemoryError")  # numpy raises _ArrayMemoryError, a MemoryError


def gib(n):
    return f"{n / GIB:.3g} GiB"


class RobustExecute(Execute):
    """nbgrader's Execute, except that a cell that ignores the interrupt (catches BaseException) or kills
    the kernel does not fail the whole notebook: the cell gets an error output, the kernel is restarted, the
    cells above it are run again to rebuild the state, and grading goes on. The kernel's address space is
    limited to `memory_limit` bytes (RLIMIT_AS, set on the kernel process as it starts): an allocation past
    it raises MemoryError in the cell; if the kernel then still holds more than three quarters of it (a
    global that grew), it is restarted the same way, so the cells below get their memory back."""

    memory_limit = Integer(0, help="bytes of address space the kernel may use (0: no limit)").tag(config=True)
    pid_file = Unicode("", help="where to write the kernel's process id (its process group's)").tag(config=True)
    sandbox = Bool(False, help="start the kernel in the sandbox (grading/kernels/sandbox.py)").tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # nbgrader's Execute passes AsyncKernelManager as an argument, which config cannot change
        self.kernel_manager_class = sandboxes.SandboxedKernelManager if self.sandbox else LocalKernelManager
        self._budget = OutputBudget()  # preprocess starts a fresh one per notebook; cells run alone get this one

    def preprocess(self, nb, resources=None, km=None):
        self._skip = set()
        self._budget = OutputBudget()
        return super().preprocess(nb, resources, km)

    def output(self, outs, msg, display_id, cell_index):
        """Each output cut as it arrives (outputs.OutputBudget): four 32 MB images made a 1.2 GiB worker."""
        out = super().output(outs, msg, display_id, cell_index)
        if out is not None:
            self._budget.admit(out)
        return out

    async def async_start_new_kernel(self, **kwargs):
        mark("kernel: start")
        await super().async_start_new_kernel(**kwargs)
        mark("kernel: launched")
        self._kernel_started()

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        mark("kernel: ready (kernel_info answered)")
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def _async_cleanup_kernel(self):
        mark("kernel: shutdown")
        await super()._async_cleanup_kernel()
        mark("kernel: down")

    _cleanup_kernel = run_sync(_async_cleanup_kernel)

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient's sync name wraps its own coroutine

    def _kernel_started(self):
        pid = getattr(self.km.provisioner, "pid", None)
        if pid is None:
            return
        if self.pid_file:  # the parent kills this process group if the worker is killed at the limit
            Path(self.pid_file).write_text(str(pid))
        if self.memory_limit and not self.sandbox:  # the sandbox sets it inside, before the kernel starts
            resource.prlimit(pid, resource.RLIMIT_AS, (self.memory_limit, self.memory_limit))

    def _kernel_memory(self):
        """The kernel's address space in bytes (what the limit counts), or None if it cannot be read."""
        try:
            pid = getattr(self.km, "kernel_pid", None) or self.km.provisioner.pid
            status = Path(f"/proc/{pid}/status").read_text()
            return int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) * 1024
        except (OSError, AttributeError, TypeError):
            return None

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            mark(f"cell {index}")
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except (CellTimeoutError, DeadKernelError) as e:
            if isinstance(e, CellTimeoutError):
                ename, text = "CellTimeoutError", (f"the cell ran longer than {self.timeout} s and did not stop "
                                                   "when interrupted; the kernel was restarted")
            else:
                ename, text = "DeadKernelError", "the kernel died while running this cell; it was restarted"
            cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "error"]
            cell.outputs.append(NotebookNode(output_type="error", ename=ename, evalue=text,
                                             traceback=[f"{ename}: {text}"]))
            self._skip.add(index)
            self._restart_and_replay(index)
            return cell, self.resources
        if self.memory_limit and any(o.get("output_type") == "error" and is_memory_error(o.get("ename", ""))
                                     for o in cell.get("outputs", [])):
            held = self._kernel_memory()
            if held is None or held > self.memory_limit * 3 // 4:  # less than a quarter left for the cells below
                cell.outputs.append(NotebookNode(output_type="stream", name="stderr", text=(
                    f"[the grader: the kernel still held {gib(held or 0)} of its {gib(self.memory_limit)} after this "
                    "cell ran out of memory; it was restarted and the cells above run again]\n")))
                self._skip.add(index)
                self._restart_and_replay(index)
        return cell, resources

    def _restart(self):
        run_sync(self.km.restart_kernel)(now=True)
        self._kernel_started()
        # Ask until the new kernel answers (jupyter_client's wait_for_ready re-sends kernel_info each
        # second): a single request could reach the old kernel's socket as it went (a sandboxed kernel
        # is reached over ipc through its /proc root, renewed on restart) and cost a whole cell timeout
        # (measured: 60 s of each 67 s restart of the memory hog's kernel).
        run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)

    def _restart_and_replay(self, upto):
        self._restart()
        for j in range(upto):
            c = self.nb.cells[j]
            if c.cell_type != "code" or j in self._skip or any(
                    o.get("output_type") == "error"
                    and (o.get("ename") in STOPPED or is_memory_error(o.get("ename", "")))
                    for o in c.get("outputs", [])):
                continue
            try:
                super().preprocess_cell(copy.deepcopy(c), self.resources, j)
            except (CellTimeoutError, DeadKernelError):
                self._skip.add(j)
                self._restart()
