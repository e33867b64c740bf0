"""Drive JupyterLab in headless Chromium: start and stop its servers and the browser.

What a page shows is read by the modules beside this one: labpage.py (a notebook opened, run,
validated), labcells.py (its cells read and judged) and labwidget.py (its main widget moved, timed
and photographed). Used by the browser tests (tests/browser/), the hub test (tests/hub/),
`make screenshots` (devtools/screenshots.py) and `make bench` (latency). Every process started here
is stopped here: a server is shut down through SIGTERM (which makes Jupyter shut its kernels down),
and any descendant still alive afterwards is killed by pid.
"""
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("SPECLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1280, "height": 900}
SCREENSHOTS = Path(os.environ.get("SPECLAB_SCREENSHOTS", REPO / "screenshots"))
# What the course copy needs: the notebooks, their data; nbgrader's config stays in the repo.
COURSE_PARTS = ("solutions", "notebooks", "data")
# Where the course copy is taken from (the repo; another folder to try a modified course).
COURSE_FROM = Path(os.environ.get("SPECLAB_BROWSER_COURSE_FROM", REPO))

# Seconds. Generous: two shared cores, and a notebook may have one ~10 s experiment cell.
SERVER_READY_S = 60
KERNEL_READY_S = 60
RUN_ALL_S = 240
RENDER_S = 30
REDRAW_S = 20


class BrowserSetupError(RuntimeError):
    """Chromium or Playwright is missing: the message says what to install."""


def missing_browser_parts():
    """What is missing to run the browser tests ([] when nothing is)."""
    missing = []
    if not os.access(CHROMIUM, os.X_OK):
        missing.append(f"{CHROMIUM} (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pinned in requirements.txt: `make setup`; never "
                       "`playwright install`: the system Chromium is used)")
    return missing


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_course(dest):
    """A throwaway copy of the course (running notebooks in JupyterLab saves them)."""
    dest = Path(dest)
    for part in COURSE_PARTS:
        if (COURSE_FROM / part).is_dir():
            shutil.copytree(COURSE_FROM / part, dest / part,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return dest



def _children():
    """{pid: parent pid} for every process we can see."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            table[int(entry)] = int(fields[1])
    return table


def descendants(pid):
    """Every live descendant of pid (kernels included: they get their own session, not our group)."""
    table, found, frontier = _children(), set(), {pid}
    while frontier:
        frontier = {c for c, p in table.items() if p in frontier and c not in found}
        found |= frontier
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] not in ("Z", "X")
    except OSError:
        return False


def stop_pids(pids, grace=10):
    """Wait for pids to exit; kill (by pid) those still alive after grace seconds; return those."""
    deadline = time.monotonic() + grace
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = sorted(p for p in pids if _alive(p))
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


class Process:
    """A subprocess in its own process group, whose whole tree is stopped by stop()."""

    def __init__(self, cmd, cwd, env, log):
        self.cmd, self.log_path = cmd, Path(log)
        self._log = open(self.log_path, "wb")
        self.popen = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.popen.pid
        self.seen = set()  # every descendant ever seen, so stop() can check each one is gone

    def watch(self):
        self.seen |= descendants(self.pid)

    def log_tail(self, n=3000):
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self, grace=15):
        """SIGTERM the group (Jupyter then shuts its kernels down), then kill whatever is left, by pid.

        Returns the pids that had to be killed (ideally none)."""
        self.watch()
        if self.popen.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.popen.wait(5)
        killed = stop_pids(self.seen, grace)
        self._log.close()
        return killed


def lab_env(course_root):
    env = dict(os.environ)
    env.update(JUPYTER_CONFIG_PATH=str(REPO / "grading"), SPECLAB_COURSE_ROOT=str(course_root),
               MPLBACKEND="module://matplotlib_inline.backend_inline", PYTHONUNBUFFERED="1")
    env.pop("JUPYTER_TOKEN", None)
    # As under make: the venv's bin on PATH (nbgrader's gradebook shells out to `alembic`).
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


def wait_until_answers(url, proc, timeout=SERVER_READY_S):
    """Poll url until it answers 200; fail with the server log if the server dies or never answers."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        if proc.popen.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.popen.returncode} before answering "
                               f"{url}:\n{proc.log_tail()}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return json.loads(r.read() or b"null")
        except Exception as err:  # not up yet
            last = err
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout} s ({last}):\n{proc.log_tail()}")


class LabServer:
    """JupyterLab on a course copy, with a random token, reachable only on 127.0.0.1."""

    def __init__(self, root, logdir):
        self.root = Path(root)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        # Fresh user settings (never the machine's ~/.jupyter): no "Jupyter news?" toast over the figures.
        settings = Path(logdir) / "user-settings"
        news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        news.parent.mkdir(parents=True, exist_ok=True)
        news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={self.port}", "--ServerApp.port_retries=0",
               f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={self.root}",
               "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.expose_app_in_browser=True",
               f"--LabApp.workspaces_dir={Path(logdir) / 'workspaces'}",
               f"--LabApp.user_settings_dir={settings}",
               "--ServerApp.shutdown_no_activity_timeout=1800",
               "--MappingKernelManager.cull_idle_timeout=0"]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.proc = Process(cmd, cwd=self.root, env=lab_env(self.root), log=Path(logdir) / "jupyterlab.log")
        wait_until_answers(self.api("status"), self.proc)

    def api(self, path):
        return f"{self.base}/api/{path}?token={self.token}"

    def url(self, path):
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def request(self, method, path):
        req = urllib.request.Request(self.api(path), method=method)
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self):
        """Delete every session (and so its kernel): one notebook's kernel never outlives its test."""
        self.proc.watch()
        for session in self.request("GET", "sessions") or []:
            self.request("DELETE", f"sessions/{session['id']}")

    def stop(self):
        return self.proc.stop()


def launch_browser(playwright, profile_dir):
    """Headless Debian Chromium (never Playwright's own download), with a throwaway profile."""
    return playwright.chromium.launch_persistent_context(
        str(profile_dir), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
        viewport=VIEWPORT)
