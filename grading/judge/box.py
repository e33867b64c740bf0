"""The judge's own sandbox: one notebook's execution (its kernel and the judge) in a fresh process, in a
bubblewrap sandbox of its own, discarded after the submission.

The judge decodes what a student's kernel sends; a bug there must cost one submission, never a classmate,
the gradebook or the instructor's server. So the step that executes a submission (JudgeExecute: the
sandboxed kernel, and the judge that runs the hidden tests against it) runs in a process started for this
notebook alone (`BoxedExecute`, in the worker, hands it the notebook and reads back its outputs), which sees:
- the system, the Python and the virtualenv, the course's `grading/` and `speclab/` (with its data) and
  the assignment's source folder: read-only;
- one writable folder of its own (the notebook in, the executed notebook and a small verdict out), and a
  private /tmp; no gradebook, no `submitted/`, no other submission, no home folder;
- its own process, network (loopback only), IPC and UTS namespaces, and an environment built from an
  allow-list (none of the grader's tokens or paths);
- limits: address space, CPU seconds, no core files; the caller's wall-clock limit (and --die-with-parent);
- a user id of its own and no capabilities (a root grader: an unused user id, as the kernels get; a grader
  that is not root: a user namespace of its own, mapped to the grader's user).
What the worker takes back is only the outputs (and execution counts) of the cells it sent: sources,
metadata and the scores' cell ids are the worker's own, so a compromised judge can write nothing but this
notebook's outputs, which nbgrader then scores in the worker as before.

The student's kernel keeps its own sandbox (grading/kernels/sandbox.py), nested inside this one. Nesting needs a
/proc that Linux deems fully visible: bwrap's --proc covers /proc/irq and /proc/bus, which the launcher
inside unmounts (holding, for that moment only, the capabilities of its own user namespace) before it drops
to its user id and starts Python. Measured here (Linux 6.18, bwrap 0.8, as root): nested unprivileged
bwrap fails on `mount proc` otherwise.
"""
import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat

from ..kernels import hidden, sandbox as sandboxes
from ..kernels.timeline import mark
from ..course import REPO
from .execute import JudgeExecute

MAX_NOTEBOOK_BYTES = 64 << 20   # the executed notebook read back (kernels/outputs.py caps a notebook's outputs at 4 MB)
MAX_VERDICT_BYTES = 1 << 20
DISK = 256 << 20                # the box's private /tmp (the kernel's own tmpfs is inside the kernel's sandbox)
# passed from the grader's environment into the box (no other variable is)
KEEP = (*sandboxes.KEEP, "SPECLAB_JUDGE_OPTED_OUT", "SPECLAB_TIMELINE")

# On the host, as the grader: a user namespace for the box. A root grader maps root (for bwrap's set-up) and
# one unused user id (the judge's); a grader that is not root can map only itself, to root.
HOST = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, 9)  # PR_SET_PDEATHSIG: SIGKILL when the worker dies
j, uid, gid = int(sys.argv[1]), os.getuid(), os.getgid()
go_r, go_w = os.pipe(); ready_r, ready_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(go_w); os.close(ready_r)
    libc.prctl(1, 9)
    ok = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER
    os.write(ready_w, b"u" if ok else b"e")
    if not ok or os.read(go_r, 1) != b"g":
        os._exit(125)
    os.execv(sys.argv[2], sys.argv[2:])
os.close(go_r); os.close(ready_w)
if os.read(ready_r, 1) == b"u":
    extra = f"{j} {j} 1\n" if uid == 0 else ""
    if uid:
        open(f"/proc/{pid}/setgroups", "w").write("deny")
    open(f"/proc/{pid}/uid_map", "w").write(f"0 {uid} 1\n{extra}")
    open(f"/proc/{pid}/gid_map", "w").write(f"0 {gid} 1\n{extra}")
    os.write(go_w, b"g")
_, status = os.waitpid(pid, 0)
os._exit(os.waitstatus_to_exitcode(status) & 255)
"""

# Inside the box, as root of its user namespace: /proc made nestable, the limits, then no capabilities.
INSIDE = r"""
import ctypes, os, resource as r, sys
libc = ctypes.CDLL(None, use_errno=True)
for path in (b"/proc/irq", b"/proc/bus"):
    libc.umount2(path, 2)  # MNT_DETACH; what bwrap laid over /proc, where the kernel's sandbox mounts its own
mem, cpu, j = (int(x) for x in sys.argv[1].split(","))
r.setrlimit(r.RLIMIT_CORE, (0, 0))
for what, n, hard in ((r.RLIMIT_AS, mem, mem), (r.RLIMIT_CPU, cpu, cpu + 5)):
    if n:
        r.setrlimit(what, (n, hard))
try:
    os.setgroups([]); os.setgid(j); os.setuid(j)  # a root grader mapped j: setuid drops every capability
except OSError:  # a grader that is not root: a user namespace of our own, where we are j (exec drops them)
    if libc.unshare(0x10000000):
        sys.exit("the judge's sandbox could not drop its capabilities")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{j} 0 1"), ("gid_map", f"{j} 0 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
os.execv(sys.argv[2], sys.argv[2:])
"""


def available():
    """(True, "") if both sandboxes can start here, the judge's with the kernel's nested in it; else (False, why)."""
    ok, why = sandboxes.available()
    return (ok, why) if not ok else _box_starts()


@functools.lru_cache(maxsize=1)
def _box_starts():
    folder = Path(tempfile.mkdtemp(prefix="speclab-box-"))
    try:
        prepare(folder, judge_uid(folder))
        probe = subprocess.run(command(folder, argv=[sandboxes.python(), "-I", "-S", "-c", "pass"]),
                               capture_output=True, text=True, timeout=120,
                               env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"the judge's sandbox could not run ({type(e).__name__}: {e})"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if probe.returncode:
        why = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"the judge's sandbox cannot start here ({why})"
    return True, ""


def judge_uid(folder):
    """The judge's user id: a root grader's unused one (as its kernels'); otherwise only a name in its namespace."""
    return sandboxes.kernel_uid(folder) or 1000


def ro_binds(source, prebuilt=None):
    """(host path, path in the box) of what the box reads: Python, the virtualenv, the course's code, the source,
    and the kernel's speclab if prebuilt."""
    package, data = sandboxes.package_dirs()
    binds = [(p, p) for p in sandboxes.python_dirs()]
    binds += [(str(REPO / "grading"), str(REPO / "grading")), (str(package), str(package))]
    if data.is_dir():
        binds.append((str(data), str(data)))
    if source:
        binds.append((str(source), str(source)))
    if prebuilt:
        binds.append((str(prebuilt), str(prebuilt)))
    fonts = sandboxes.font_cache()
    if fonts and os.path.isfile(fonts):
        binds.append((fonts, f"/tmp/mpl/{os.path.basename(fonts)}"))
    return binds


def environment():
    env = {k: v for k, v in os.environ.items() if k in KEEP}
    env.update(HOME="/tmp/home", TMPDIR="/tmp", PYTHONPATH=str(REPO), PYTHONNOUSERSITE="1",
               PYTHONDONTWRITEBYTECODE="1", MPLCONFIGDIR="/tmp/mpl",
               PATH=os.pathsep.join([os.path.dirname(sandboxes.python()), "/usr/local/bin", "/usr/bin", "/bin"]))
    env.setdefault("LANG", "C.UTF-8")
    return env


def command(folder, source=None, memory=0, cpu=0, argv=None, prebuilt=None):
    """The argv that runs `argv` (default: this module's main on `folder`) in a fresh box whose only writable
    path is `folder`."""
    j = judge_uid(folder)
    args = [sandboxes.bwrap(), "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--clearenv"]
    for path in sandboxes.SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(DISK), "--tmpfs", "/tmp",
             "--perms", "1777", "--dir", "/tmp/home", "--perms", "1777", "--dir", "/tmp/mpl"]
    made = {"/tmp", "/tmp/mpl"}
    for how, host, inside in [("--ro-bind", *b) for b in ro_binds(source, prebuilt)] + [("--bind", str(folder), str(folder))]:
        for parent in reversed(Path(inside).parents):  # bwrap would make them 0700: the judge's user could not enter
            if str(parent) != "/" and str(parent) not in made and not any(
                    str(parent) == s or str(parent).startswith(s + "/") for s in sandboxes.SYSTEM):
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += [how, host, inside]
    args += ["--remount-ro", "/", "--chdir", "/tmp"]
    for k, v in sorted(environment().items()):
        args += ["--setenv", k, v]
    python = sandboxes.python()
    argv = argv or [python, "-m", "grading.judge.inbox", str(folder)]
    limits = f"{int(memory)},{int(cpu)},{j}"
    return [sandboxes.python(), "-I", "-S", "-c", HOST, str(j), *args, "--", python, "-I", "-S", "-c", INSIDE,
            limits, *argv]


def box_memory(kernel_memory):
    """The judge's own address space: its course objects and nbclient, plus room for the kernel's limit (a child
    cannot raise its hard limit above its parent's)."""
    return max(4 << 30, 2 * int(kernel_memory)) if kernel_memory else 0


def prepare(folder, uid):
    """A folder the box's user may write (a root grader's judge runs as an unused user id)."""
    if os.geteuid() == 0:
        os.chown(folder, uid, uid)
    os.chmod(folder, 0o700)


# ----------------------------------------------------------------------------- the worker's side

def settings(step):
    """The execution step's configured values, as plain data the box rebuilds it from."""
    out = {}
    for name in step.traits(config=True):
        try:
            out[name] = json.loads(json.dumps(getattr(step, name)))
        except (TypeError, ValueError):  # a class or an object: the box's step has its own
            continue
    return out


def run(step, nb, resources, source, timeout):
    """Execute `nb` with `step`'s settings in a fresh box; returns (outputs by cell index, verdict)."""
    km = dict(step.config.get("SandboxedKernelManager", {}))
    memory, cpu = int(km.get("memory_limit") or step.memory_limit or 0), int(km.get("cpu_limit") or 0)
    folder = Path(tempfile.mkdtemp(prefix="speclab-box-"))
    try:
        prepare(folder, judge_uid(folder))
        info = (resources or {}).get("nbgrader", {})
        made = prebuilt(step, source, info.get("notebook", ""))
        job = {"settings": settings(step), "kernel": {k: v for k, v in km.items() if isinstance(v, (int, float))},
               "assignment": info.get("assignment", ""), "notebook": info.get("notebook", ""),
               "source": str(source or ""), "progress": step.on_cell_start is not None, "prebuilt": made}
        (folder / "job.json").write_text(json.dumps(job))
        nbformat.write(nb, folder / "in.ipynb")
        for name in ("job.json", "in.ipynb"):
            os.chmod(folder / name, 0o444)
        cmd = command(folder, source, box_memory(memory), int(cpu or timeout), prebuilt=made.get("folder"))
        mark("box: started")
        code, stderr = wait(cmd, timeout, folder / "progress", lambda i: hook(step, nb, i))
        mark("box: ended")
        verdict = read_verdict(folder / "verdict.json")
        if code or not verdict.get("ok"):
            tail = (verdict.get("error") or stderr[-300:] or f"exit {code}")
            raise RuntimeError(f"the judge's sandbox failed: {str(tail)[:300]}")
        return read_outputs(folder / "out.ipynb", len(nb.cells)), verdict
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def prebuilt(step, source, notebook):
    """The kernel's speclab without the notebook's references, built here, in hidden's cache, once per worker (the
    box's /tmp is new for each submission: built there, it was built again each time, 0.05 to 0.2 s), as the box's
    JudgeExecute would name it: {'names', 'notebook', 'folder'}, or {} (the box then builds its own)."""
    path = Path(source or "") / f"{notebook}.ipynb"
    if not (source and step.judge and step.hide_references and path.is_file()):
        return {}
    return _prebuilt(str(path), path.stat().st_mtime_ns, notebook)


@functools.lru_cache(maxsize=16)
def _prebuilt(path, mtime, notebook):
    names = hidden.exercise_names(nbformat.read(path, as_version=4))
    if not names:
        return {}
    folder = hidden.package_without(sandboxes.package_dirs()[0], names, notebook)
    return {"names": names, "notebook": notebook, "folder": str(folder)}


def wait(cmd, timeout, progress, started):
    """Run the box; while it runs, `started(i)` for each cell index it names in `progress` (make check's lines)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        deadline, seen = time.monotonic() + timeout, 0
        while True:
            try:
                code = proc.wait(timeout=0.3)
            except subprocess.TimeoutExpired:
                code = None
            seen = follow(progress, seen, started)
            if code is not None:
                break
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(cmd, timeout)
        err.seek(0)
        return code, err.read()[-4000:].decode(errors="replace")


def follow(progress, seen, started):
    try:
        with open(progress, "rb") as f:
            lines = f.read(1 << 16).split(b"\n")[:-1]
    except OSError:
        return seen
    for line in lines[seen:]:
        if line.isdigit():
            started(int(line))
    return max(seen, len(lines))


def hook(step, nb, index):
    """nbclient's on_cell_start, in this process, with this process's own cell (the box names only its index)."""
    if step.on_cell_start is not None and 0 <= index < len(nb.cells):
        step.on_cell_start(cell=nb.cells[index], cell_index=index)


def read_verdict(path):
    try:
        if path.is_symlink() or path.stat().st_size > MAX_VERDICT_BYTES:
            return {}
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_outputs(path, count):
    """(outputs, execution_count) per cell of the executed notebook: nothing else of it is taken."""
    if path.is_symlink() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise RuntimeError("the judge's sandbox returned no readable notebook")
    out = nbformat.read(path, as_version=4)
    if len(out.cells) != count:
        raise RuntimeError("the judge's sandbox returned a notebook of another shape")
    return [(c.get("outputs", []) if c.cell_type == "code" else None, c.get("execution_count")) for c in out.cells]


def apply(nb, outputs):
    for cell, (outs, count) in zip(nb.cells, outputs):
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(o) for o in outs if isinstance(o, dict)]
            cell.execution_count = count if isinstance(count, int) else None
    return nb


def record_events(verdict):
    """The box's watchdog notes and CPU seconds, into this process's (grading/kernels/watchdog.py, sandbox.KERNEL_CPU), as if
    its kernels ran here."""
    from ..kernels import timeline, watchdog

    if timeline.ON:
        timeline.MARKS.extend((t, f"  {w}") for t, w in verdict.get("marks", []))
    for item in verdict.get("events", [])[:20]:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
            watchdog.EVENTS.append((item[0][:20], item[1][:600]))
    cpu = verdict.get("cpu")
    if isinstance(cpu, (int, float)) and 0 < cpu < 1e6:  # the box's CPU seconds, counted as its kernels' are
        sandboxes.KERNEL_CPU[0] += float(cpu)
    paused = verdict.get("paused")
    if isinstance(paused, (int, float)) and paused > 0:
        watchdog.SANDBOXES.append({"paused": float(paused)})


class BoxedExecute(JudgeExecute):
    """JudgeExecute, run in a fresh box of its own when the kernel is sandboxed (`run`); this process keeps the
    notebook's cells and takes back only their outputs."""

    def preprocess(self, nb, resources=None, km=None):
        if not self.sandbox:
            return super().preprocess(nb, resources, km)
        mark("worker: nbgrader's autograde reached Execute")
        aid = (resources or {}).get("nbgrader", {}).get("assignment", "")
        source = self._source(aid) if aid else None
        limit = 20 * int(self.timeout or 60) + 120  # make grade's per-submission limit (its pool also keeps it)
        outputs, verdict = run(self, nb, resources, source if source and source.is_dir() else None, limit)
        record_events(verdict)
        return apply(nb, outputs), resources
