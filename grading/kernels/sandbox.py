"""The sandbox every kernel that runs student code starts in (bubblewrap, Debian's `bubblewrap`).

A submission is code. nbgrader runs it in a Jupyter kernel that, left alone, is a process of the user
who grades, with that user's files, processes and network. Here each kernel is started inside
`bwrap`, and sees:

- the system (/usr, /etc), the Python it runs on and the virtualenv (at their own paths, a path under
  /tmp inside its private /tmp): read-only;
- the course's package, `speclab`, and its data: read-only, at /course (the only course path it knows);
- nothing else of the course: no solutions/, no gradebook, no grading/, no other submission, no home
  folder, no course path in its environment (the environment is emptied and set anew);
- a private tmpfs of DISK bytes at /sandbox, its only writable place: the working folder
  /sandbox/work (empty: no submitted file travels), $HOME and /tmp;
- its own process namespace (it cannot see or signal the grader's processes), no network (its own
  network namespace, loopback only), and limits set before Python starts: address space (the grader's
  memory limit), CPU seconds, processes, file size, no core files. A grader that runs as root runs
  the kernel as an unused user id (so the process limit applies: Linux does not hold root to it).
- limits for all its processes together, kept from outside by a thread of the grader's (grading/kernels/watchdog.py):
  memory (the same limit, summed over the sandbox), processes and threads, and CPU (one core's share on
  average; what the submission starts runs at nice 19). The rlimits above are per process.

The mount table (/proc/self/mountinfo) names the source of each bind: the connection file and the font list
are copied in (bwrap's --ro-bind-data), so none of the grader's private folders shows; the Python, the
virtualenv, speclab/ and data/ show their host paths (bwrap cannot rename a bind's source, and the
virtualenv must lie at its own path, which sys.prefix names anyway). Knowing a path opens nothing.

The kernel talks to the grader over ZeroMQ on Unix sockets (jupyter_client's `ipc` transport). The
sockets live in a small tmpfs inside the sandbox (/run/kernel); the grader reaches them through
/proc/<kernel>/root (a link in the job's folder, renewed when the kernel restarts), so nothing the
kernel can write lies outside the sandbox. When the kernel ends, bwrap's process namespace ends and
every process the submission started ends with it (--die-with-parent: also when the grader dies).

`available()` says whether bwrap can start here (it needs Linux user namespaces); `make grade` refuses
to grade without it unless told to (--no-sandbox), `make check` says so in one line and goes on.

One module (about 400 lines) for one concern: the command that builds the sandbox and the kernel manager
that reaches into it share its layout (INSIDE, SOCKETS, CONNECTION), which must agree on both sides.
"""
import asyncio
import functools
import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Float, Integer, List, Unicode

from . import hidden, watchdog as watchdogs
from .procfs import descendant, process_cpu, user_tasks
from .timeline import mark

DISK = 64 << 20          # bytes of the sandbox's tmpfs: working folder, home and /tmp together
PROCESSES = 128          # processes and threads the kernel's user may have (a kernel uses about 10)
INSIDE = "/sandbox"      # the private tmpfs
SOCKETS = "/run/kernel"  # the kernel's ZeroMQ sockets (a tmpfs of their own)
SOCKET_PATH_MAX = 107    # bytes of a Unix socket's path (sun_path is 108, with its NUL)
COURSE = "/course"       # speclab and its data, read-only (PYTHONPATH)
CONNECTION = "/run/connection.json"  # the kernel's connection file (ports and key), read-only
UID_BASE = 1 << 30       # a grader running as root runs kernels as UID_BASE + a hash of the job's folder
SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/conda")
# passed from the grader's environment into the sandbox (no other variable is)
KEEP = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "MPLBACKEND", "LANG", "LC_ALL", "TZ",
        "PYDEVD_DISABLE_FILE_VALIDATION")

# Run inside the sandbox, before the kernel: the limits, then the unused user id (root only), then exec.
LAUNCH = r"""
import os, resource as r, sys
mem, cpu, nproc, fsize, uid = (int(x) for x in sys.argv[1].split(","))
r.setrlimit(r.RLIMIT_CORE, (0, 0))
for what, n, hard in ((r.RLIMIT_AS, mem, mem), (r.RLIMIT_CPU, cpu, cpu + 5), (r.RLIMIT_FSIZE, fsize, fsize)):
    if n:
        r.setrlimit(what, (n, hard))
if uid:
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
if nproc:
    r.setrlimit(r.RLIMIT_NPROC, (nproc, nproc))
try:  # the grader's font list: matplotlib need not build it again
    os.makedirs(os.environ["MPLCONFIGDIR"], exist_ok=True)
    for name in os.listdir(sys.argv[2] + "/mplcache"):
        with open(sys.argv[2] + "/mplcache/" + name, "rb") as f, open(os.environ["MPLCONFIGDIR"] + "/" + name, "wb") as g:
            g.write(f.read())
except OSError:
    pass
os.chdir(sys.argv[2] + "/work")
os.execv(sys.argv[3], sys.argv[3:])
"""


@functools.lru_cache(maxsize=1)
def bwrap():
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def available():
    """(True, "") if a kernel can be sandboxed here, else (False, why not), in words."""
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap needs Linux (this is {sys.platform})"
    if bwrap() is None:
        return False, "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        probe = subprocess.run([bwrap(), *namespaces(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
                                "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"bwrap could not run ({type(e).__name__}: {e})"
    if probe.returncode:
        why = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"bwrap cannot start a sandbox here ({why}; are user namespaces disabled?)"
    return True, ""


def namespaces():
    """All of bwrap's namespaces; as root no user namespace, so that the kernel can become another user."""
    common = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    return common if os.geteuid() == 0 else ["--unshare-user", *common]


def package_dirs():
    """(speclab's folder, its data folder) as the grader imports them: a checkout's speclab/ and data/, or an
    installed package's folder (which holds its data)."""
    spec = importlib.util.find_spec("speclab")
    package = Path(list(spec.submodule_search_locations)[0]).resolve()
    data = package / "data" if (package / "data").is_dir() else package.parent / "data"
    return package, data


@functools.lru_cache(maxsize=1)
def font_cache():
    """matplotlib's font list as the grader has it (its fontlist-v*.json), or None. The kernel's home is new each
    time, and building the list costs a kernel about 0.3 CPU seconds: the sandbox starts with a copy of this one."""
    import glob

    folder = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib")
    found = sorted(glob.glob(os.path.join(folder, "fontlist-v*.json")))
    return found[-1] if found else None


def kernel_uid(folder):
    """The user id a root grader runs the kernel of the job in `folder` as (a different one per job)."""
    return UID_BASE + zlib.crc32(str(folder).encode()) % (1 << 28) if os.geteuid() == 0 else 0


def unlinked(path):
    """`path` with a virtualenv reached through a link (a course's .venv linked to a shared one) written as
    the folder it links to: only that folder is bound into the sandbox, where the link's own place may not
    exist (or may lie under /tmp, which the sandbox replaces)."""
    if path == sys.prefix or path.startswith(sys.prefix + "/"):
        return os.path.realpath(sys.prefix) + path[len(sys.prefix):]
    return path


def python_dirs():
    """The folders of the Python the kernel runs on and of the virtualenv (outside SYSTEM), bound at their own
    paths: a venv's files name them."""
    found = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix,
                                           os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))}
    return [p for p in sorted(found) if not any(p == s or p.startswith(s + "/") for s in SYSTEM)]


def private_tmp(path):
    """Where bwrap must put `path` to show it at `path`: under the sandbox's /tmp, a link to INSIDE/tmp that bwrap
    cannot follow while it sets the sandbox up (the link is absolute: it would lead into the grader's own /)."""
    return f"{INSIDE}/tmp{path[4:]}" if path == "/tmp" or path.startswith("/tmp/") else path


def python():
    """The virtualenv's python, as the sandbox sees it (the venv's own bin/, so that the venv applies)."""
    return unlinked(sys.executable)


@functools.lru_cache(maxsize=1)
def nproc_per_namespace():
    """Whether Linux counts RLIMIT_NPROC per user namespace (5.14 and later: "ucounts"), so that a sandbox's own
    user namespace has a count of its own."""
    try:
        return tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2]) >= (5, 14)
    except ValueError:
        return False


def command(kernel_cmd, connection_file, env, memory=0, cpu=0, disk=DISK, processes=PROCESSES, uid=0, speclab=None):
    """The argv that runs `kernel_cmd` (a Jupyter kernel's, reading `connection_file`) in the sandbox.

    RLIMIT_NPROC counts every task of the kernel's real user. A root grader gives each kernel a user of its
    own. A grader that is not root shares its user with the kernel, but since Linux 5.14 the count is kept
    per user namespace, and each sandbox has one (tests/grading/test_limits.py checks it); on an older
    Linux the kernel may add `processes` to what that user has when it starts (its own server, workers
    and other kernels: a hub's instructor has well over a hundred), and only the watchdog caps the sandbox.

    The connection file and the font list are copied in (--ro-bind-data, from descriptors the shell in
    front of bwrap opens), so the sandbox's mount table does not show where the grader keeps them."""
    if not uid and processes and not nproc_per_namespace():
        processes += user_tasks(os.getuid())
    package, data = package_dirs()
    args = [bwrap(), *namespaces(), "--die-with-parent", "--clearenv"]
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    binds = [(p, p) for p in python_dirs()]
    binds.append((str(speclab or package), f"{COURSE}/speclab"))  # speclab: grading/kernels/hidden.py's copy
    if data.is_dir() and data.parent != package:
        binds.append((str(data), f"{COURSE}/data"))
    # The sandbox's own mounts first, then the binds: a bind under /tmp (a course cloned there, whose venv is
    # bound at its own path) goes into the private /tmp. Binds first made /tmp a folder, where bwrap then
    # could not put the link: no sandboxed kernel started from a course under /tmp.
    args += ["--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--size", str(disk), "--tmpfs", "/dev/shm",
             "--perms", "1777", "--size", str(disk), "--tmpfs", INSIDE,
             "--perms", "1777", "--dir", f"{INSIDE}/work", "--perms", "1777", "--dir", f"{INSIDE}/home",
             "--perms", "1777", "--dir", f"{INSIDE}/tmp", "--symlink", f"{INSIDE}/tmp", "/tmp",
             "--perms", "1777", "--size", str(1 << 20), "--tmpfs", SOCKETS]
    made = {INSIDE, f"{INSIDE}/tmp"}
    for source, dest in binds:
        dest = private_tmp(dest)
        for parent in reversed(Path(dest).parents):  # bwrap would make them 0700: no one else could enter
            if str(parent) != "/" and str(parent) not in made and not any(
                    str(parent) == s or str(parent).startswith(s + "/") for s in SYSTEM):
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", source, dest]
    files = [str(connection_file)]
    args += ["--perms", "0444", "--ro-bind-data", "3", CONNECTION, "--remount-ro", "/"]
    fonts = font_cache()
    if fonts and os.path.isfile(fonts):
        files.append(fonts)
        args += ["--perms", "0755", "--dir", f"{INSIDE}/mplcache",
                 "--perms", "0444", "--ro-bind-data", "4", f"{INSIDE}/mplcache/{os.path.basename(fonts)}"]
    inside_env = {k: v for k, v in env.items() if k in KEEP}
    inside_env.update(HOME=f"{INSIDE}/home", TMPDIR=f"{INSIDE}/tmp", PYTHONPATH=COURSE, PYTHONNOUSERSITE="1",
                      PYTHONDONTWRITEBYTECODE="1", MPLCONFIGDIR=f"{INSIDE}/home/.config/matplotlib",
                      PATH=os.pathsep.join([os.path.dirname(python()), "/usr/local/bin", "/usr/bin", "/bin"]))
    inside_env.setdefault("LANG", "C.UTF-8")
    for k, v in sorted(inside_env.items()):
        args += ["--setenv", k, v]
    limits = f"{int(memory)},{int(cpu)},{int(processes)},{int(disk)},{int(uid)}"
    launcher = [python(), "-I", "-S", "-c", LAUNCH, limits, INSIDE]
    kernel_cmd = [unlinked(arg) for arg in kernel_cmd]
    # bwrap and its reaper ignore SIGINT (the grader interrupts a cell by signalling the kernel's process
    # group, bwrap's included); the kernel itself handles it as it always does. The shell opens the files
    # bwrap copies in as descriptors 3 (and 4).
    opens = " ".join(f'{3 + i}<"${i + 1}"' for i in range(len(files)))
    return ["/bin/sh", "-c", f'trap "" INT; exec {opens}; shift {len(files)}; exec "$@"', "sandbox", *files,
            *args, "--", *launcher, *kernel_cmd]


_managers = itertools.count()
# CPU seconds the sandboxed kernels of this process used: a sandboxed kernel is reaped inside its sandbox,
# so its time never reaches the grader's getrusage(RUSAGE_CHILDREN) (read from /proc as each one ends)
KERNEL_CPU = [0.0]


class SandboxedKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager, starting the kernel inside the sandbox (`command`), over `ipc`.

    nbclient (nbgrader's Execute) makes one with the notebook's config: RobustExecute.kernel_manager_class.
    """

    memory_limit = Integer(0, help="bytes of address space the kernel may use (0: no limit)").tag(config=True)
    cpu_limit = Integer(0, help="CPU seconds one kernel process may use (0: no limit)").tag(config=True)
    disk_limit = Integer(DISK, help="bytes of the sandbox's writable tmpfs").tag(config=True)
    process_limit = Integer(PROCESSES, help="processes and threads the kernel may have").tag(config=True)
    cpu_share = Float(watchdogs.SHARE, help="cores the sandbox's processes may use together on average (0: no "
                      "limit); memory_limit and process_limit also bound them together (grading/kernels/watchdog.py)"
                      ).tag(config=True)
    hidden = List(Unicode(), help="the graded notebook's references, absent (grading/kernels/hidden.py)").tag(config=True)
    notebook = Unicode("", help="the graded notebook's name, for hidden's message").tag(config=True)
    prebuilt = Dict(help="a copy of speclab without some references, built by the caller: {'names': hidden, 'notebook': "
                    "notebook, 'folder': its speclab}; used when both match (the judge's box: its /tmp is new each time, "
                    "so hidden's cache there never hits)").tag(config=True)
    folder = Unicode("", help="a private folder of the grader's for the connection file and the socket link"
                     ).tag(config=True)

    kernel_pid = None  # the kernel's process id (bwrap's is the provisioner's)
    watchdog = None    # the limits of the whole sandbox (grading/kernels/watchdog.py), while the kernel runs

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        folder = Path(self.folder or os.environ.get("TMPDIR", "/tmp"))
        folder.mkdir(parents=True, exist_ok=True)
        self.transport, self.ip = "ipc", f"{SOCKETS}/s"  # as the kernel sees them (its connection file)
        name = f"k{os.getpid()}-{next(_managers)}"  # short: a Unix socket's path has at most 107 bytes
        self.connection_file = str(folder / f"{name}.json")
        self._link_folder = None
        if len(f"{folder}/{name}.root{SOCKETS}/s-65535".encode()) > SOCKET_PATH_MAX:
            # a deep folder (a course cloned far down, pytest's tmp_path) would make zmq refuse the sockets
            self._link_folder = tempfile.mkdtemp(prefix="sk", dir="/tmp")  # private (0700)
            folder = Path(self._link_folder)
        self._link = folder / f"{name}.root"

    def _host_ip(self):
        return f"{self._link}{SOCKETS}/s"

    def _make_url(self, channel):
        """The grader's end of a channel: the kernel's socket, reached through its /proc/<pid>/root."""
        return f"ipc://{self._host_ip()}-{getattr(self, f'{channel}_port')}"

    def client(self, **kwargs):
        kc = super().client(**kwargs)
        kc.ip = self._host_ip()
        return kc

    def cleanup_ipc_files(self):
        pass  # the sockets are in the sandbox's own tmpfs, gone with it

    def format_kernel_cmd(self, extra_arguments=None):
        host = os.path.realpath(self.connection_file)
        cmd = [CONNECTION if arg == host else arg for arg in super().format_kernel_cmd(extra_arguments)]
        # the working folder is not on sys.path: a module the submission writes there cannot be imported
        return cmd + [f"--IPKernelApp.exec_lines=import sys as _s; _s.path[:] = [p for p in _s.path if p and p != '.' "
                      f"and not p.startswith('{INSIDE}')]; del _s"]

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        os.chmod(self.connection_file, 0o644)  # the kernel may run as another user; its folder is private
        env = kw.pop("env", None) or dict(os.environ)
        kw.pop("cwd", None)
        mark("kernel: launching")
        speclab = self._hidden_copy()
        mark("kernel: hidden copy " + ("the caller's" if speclab and str(speclab) == self.prebuilt.get("folder") else "built"))
        cmd = command(kernel_cmd, self.connection_file, env, memory=self.memory_limit, cpu=self.cpu_limit,
                      disk=self.disk_limit, processes=self.process_limit, uid=kernel_uid(self.connection_file),
                      speclab=speclab)
        await super()._async_launch_kernel(cmd, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, **kw)
        outer = self.provisioner.pid
        self.kernel_pid = None
        for _ in range(3000):  # bwrap sets the sandbox up in milliseconds; a loaded machine may take seconds
            if self.provisioner.process.poll() is not None:
                break  # bwrap could not start it (its error is in the grader's log)
            pid = descendant(outer)
            if pid is not None:
                try:
                    if os.path.realpath(f"/proc/{pid}/exe") != os.path.realpath(bwrap()):
                        self.kernel_pid = pid
                        break
                except OSError:
                    pass
            await asyncio.sleep(0.01)
        if self.kernel_pid is None:
            raise RuntimeError("the sandboxed kernel did not start")
        mark("kernel: bwrap set up, launcher running")
        self.watchdog = watchdogs.Watchdog(descendant(outer, 1), self.kernel_pid, memory=self.memory_limit,
                                           tasks=self.process_limit, share=self.cpu_share).start()
        tmp = self._link.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        os.symlink(f"/proc/{self.kernel_pid}/root", tmp)
        os.replace(tmp, self._link)

    def _hidden_copy(self):
        """The speclab to bind: the course's, or a copy without the hidden references (the caller's, if it matches)."""
        if not self.hidden:
            return None
        made = self.prebuilt
        if sorted(made.get("names") or []) == sorted(self.hidden) and made.get("notebook") == self.notebook \
                and os.path.isdir(made.get("folder") or ""):
            return Path(made["folder"])
        return hidden.package_without(package_dirs()[0], self.hidden, self.notebook)

    async def _async_shutdown_kernel(self, now=False, restart=False):
        if self.watchdog:  # first: a paused sandbox is resumed, so that the kernel can hear the request
            self.watchdog.stop()
            self.watchdog = None
        if self.kernel_pid:
            KERNEL_CPU[0] += process_cpu(self.kernel_pid)
            self.kernel_pid = None
        await super()._async_shutdown_kernel(now=now, restart=restart)

    shutdown_kernel = _async_shutdown_kernel  # AsyncKernelManager's public name is the coroutine itself

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart)
        if not restart:
            self._link.unlink(missing_ok=True)
            if self._link_folder:
                shutil.rmtree(self._link_folder, ignore_errors=True)
