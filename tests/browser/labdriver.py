"""Drive JupyterLab in headless Chromium: start and stop servers, run notebooks, read what a learner sees.

Used by the browser tests (tests/browser/) and by `make screenshots` (devtools/screenshots.py).
Every process started here is stopped here: a server is shut down through SIGTERM (which makes
Jupyter shut its kernels down), and any descendant still alive afterwards is killed by pid.
"""
import json
import os
import re
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


# ---------------------------------------------------------------- processes

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


# ---------------------------------------------------------------- what the page shows

class Problems:
    """Everything wrong seen on one page: collected, then reported together."""

    def __init__(self, label):
        self.label, self.items = label, []

    def add(self, where, what):
        self.items.append(f"{where}: {what}")

    def __bool__(self):
        return bool(self.items)

    def report(self):
        return f"{self.label}:\n  - " + "\n  - ".join(self.items)


# Console messages that are not errors of the course (none so far: every console error fails a test).
BENIGN_CONSOLE = ()


def watch_page(page, label):
    """Collect uncaught JavaScript exceptions and console errors of a page."""
    js = []

    def on_console(msg):
        if msg.type == "error" and not any(p.search(msg.text) for p in BENIGN_CONSOLE):
            js.append(f"console error: {msg.text[:500]}")

    page.on("pageerror", lambda err: js.append(f"uncaught JavaScript exception: {str(err)[:500]}"))
    page.on("console", on_console)
    return js


# JavaScript run in the page. `window.jupyterapp` is there because of --LabApp.expose_app_in_browser.
# The current tab is a notebook (the one at `path`, when given) whose kernel is idle.
JS_PANEL = "(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; " \
           "return !!(w && w.content && w.content.model && w.sessionContext && w.sessionContext.session " \
           "&& w.sessionContext.session.kernel && w.sessionContext.session.kernel.status === 'idle' " \
           "&& (!path || (w.context && w.context.path === path))); }"

JS_RUN_ALL = """async () => {
  const app = window.jupyterapp, panel = app.shell.currentWidget;
  await panel.sessionContext.ready;
  const ok = await app.commands.execute('notebook:run-all-cells');
  return ok === undefined ? null : !!ok;
}"""

# Per code cell: its model outputs (what the kernel sent) and what the DOM shows for them.
JS_CELLS = """() => {
  const panel = window.jupyterapp.shell.currentWidget, out = [];
  panel.content.widgets.forEach((cell, index) => {
    const m = cell.model;
    if (m.type !== 'code') return;
    const node = cell.node, outputs = [];
    for (let i = 0; i < m.outputs.length; i++) outputs.push(m.outputs.get(i).toJSON());
    const imgs = [...node.querySelectorAll('.jp-OutputArea-output img')];
    const widgetErrors = [...node.querySelectorAll('.jupyter-widgets-error-widget, .jp-RenderedText.jupyter-widgets-error')]
      .map(e => e.innerText.slice(0, 300));
    const interacts = [...node.querySelectorAll('.widget-interact')].map(w => ({
      images: [...w.querySelectorAll('img')].filter(i => i.complete && i.naturalWidth > 0).length,
      stderr: [...w.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.innerText.slice(-600)),
      controls: w.querySelectorAll('.widget-slider, .widget-dropdown, .widget-button, .widget-toggle-button').length,
    }));
    const widgetViews = outputs.filter(o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length;
    const rendered = [...node.querySelectorAll('.jp-OutputArea-output > .jupyter-widgets, .jp-OutputArea-output .lm-Widget.jupyter-widgets, .jp-OutputArea-output .jupyter-widgets')].length;
    const loading = [...node.querySelectorAll('.jp-OutputArea-output')].some(e => /Loading widget|Error displaying widget/.test(e.innerText));
    out.push({index, id: m.id, source: m.sharedModel.getSource(), tags: m.getMetadata('tags') || [],
              executionCount: m.executionCount, outputs,
              imagesShown: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
              imagesBroken: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).length,
              widgetViews, widgetsRendered: rendered, widgetLoadingOrError: loading, widgetErrors, interacts});
  });
  return out;
}"""


def first_line(source):
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:80]
    return "(empty)"


def cell_name(cell):
    return f"cell {cell['index']} [{first_line(cell['source'])}]"


def error_of(output):
    """(ename, evalue) of a kernel error output, or None."""
    if output.get("output_type") == "error":
        return output.get("ename", "?"), output.get("evalue", "")
    return None


TRACEBACK_NAME = re.compile(r"^(\w*(?:Error|Exception|Interrupt|Exit))\b", re.M)
# A top-level matplotlib call: this cell must show a figure (a `def` draws only when called).
PENDING_LINE = "first: this cell shows its results."  # speclab.pending.needs
MAKES_FIGURE = re.compile(r"^(?:\w+\s*,\s*\w+\s*=\s*)?(?:fig\w*\s*,\s*\w+\s*=\s*)?plt\.(subplots|figure|show)\(", re.M)



def says_pending(cell):
    """Whether the cell printed speclab.pending's line: its figure needs an exercise the student copy has not
    solved, and the cell says which instead of drawing empty axes (issue 27)."""
    import json
    return PENDING_LINE in json.dumps(cell["outputs"])


def widget_error_names(stderr_texts):
    """Exception names in the stderr a widget's Output shows (an exception in its update function)."""
    names = []
    for text in stderr_texts:
        found = TRACEBACK_NAME.findall(text)
        if found or "Traceback" in text:
            names.append(found[-1] if found else "Traceback")
    return names


# ---------------------------------------------------------------- a notebook in the lab

def open_notebook(page, server, relpath):
    """Open relpath and wait until its kernel is idle: in the JupyterLab already running in page
    (starting JupyterLab's front end takes seconds), else by loading JupyterLab on it, in a clean
    workspace."""
    if lab_is_running(page, server):
        page.evaluate("path => window.jupyterapp.commands.execute('docmanager:open', "
                      "{path, factory: 'Notebook'}).then(() => null)", relpath)
    else:
        page.goto(server.url(f"lab/tree/{relpath}") + "&reset")
    page.wait_for_selector(".jp-Notebook", timeout=KERNEL_READY_S * 1000)
    page.wait_for_function(JS_PANEL, arg=relpath, timeout=KERNEL_READY_S * 1000)


# ---------------------------------------------------------------- one JupyterLab for many tests

def lab_is_running(page, server):
    """Whether page shows a started JupyterLab of this server (not another page, not a dead app)."""
    if not page.url.startswith(f"{server.base}/lab"):
        return False
    try:
        return page.evaluate("() => !!(window.jupyterapp && window.jupyterapp.shell "
                             "&& window.jupyterapp.commands.hasCommand('docmanager:open'))")
    except Exception:  # navigating, or the page crashed
        return False


def load_lab(page, server):
    """Load JupyterLab's front end in page, in a clean workspace, and wait until it has started."""
    page.goto(server.url("lab") + "&reset")
    page.wait_for_function("() => !!window.jupyterapp", timeout=KERNEL_READY_S * 1000)
    page.evaluate("() => window.jupyterapp.restored.then(() => null)")


# Every open document's tabs, as their paths. (A Launcher is no document: JupyterLab opens one
# whenever the main area empties.)
JS_OPEN_DOCUMENTS = "() => [...window.jupyterapp.shell.widgets('main')].filter(w => w.context).map(w => w.context.path)"

# Close every document without saving: marked clean first, so no "Save your work?" dialog asks.
# (The course copy is throwaway; what a test changed never needs to be kept.)
JS_CLOSE_ALL = """async () => {
  const app = window.jupyterapp;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.model) w.context.model.dirty = false;
  }
  await app.commands.execute('application:close-all');
  return null;
}"""

# Whether an open notebook shows output that ran JavaScript of its own in the page (a Javascript
# display, an HTML output with a script). Such code can leave timers and globals behind that outlive
# its document, e.g. a planted `setTimeout(() => { throw ... })` firing during the next test: after
# it the tab is reloaded, so nothing it left can be blamed on the next test.
JS_RAN_OWN_JAVASCRIPT = """() => [...window.jupyterapp.shell.widgets('main')].some(w => {
  const cells = w.content && w.content.model && w.content.model.cells;
  if (!cells) return false;
  for (let i = 0; i < cells.length; i++) {
    const outputs = cells.get(i).outputs;
    for (let j = 0; outputs && j < outputs.length; j++) {
      const data = outputs.get(j).data || {};
      if ('application/javascript' in data || /<script/i.test(String(data['text/html'] || ''))) return true;
    }
  }
  return false;
})"""

CLOSE_S = 15


def dismiss_dialogs(page, tries=3):
    """Close any dialog a test left open (a validation report, a kernel message); True if none is left.

    A "Save your work?" dialog is answered Discard; any other is dismissed with Escape."""
    dialogs = page.locator(".jp-Dialog")
    for _ in range(tries):
        if not dialogs.count():
            return True
        discard = dialogs.locator("button", has_text="Discard")
        if discard.count():
            discard.first.click()
        else:
            page.keyboard.press("Escape")
        page.wait_for_timeout(300)
    return not dialogs.count()


def close_documents(page):
    """Close every open document, discarding changes; True once none is open."""
    if not dismiss_dialogs(page):
        return False
    page.evaluate(JS_CLOSE_ALL)
    deadline = time.monotonic() + CLOSE_S
    while page.evaluate(JS_OPEN_DOCUMENTS):
        if time.monotonic() > deadline or not dismiss_dialogs(page):
            return False
        time.sleep(0.2)
    return True


class LabTab:
    """One browser tab with JupyterLab's front end loaded once, in which test after test opens its
    notebook (loading and starting JupyterLab, megabytes of JavaScript, costs seconds per test).

    `errors` holds the JavaScript exceptions and console errors of the current test only: each
    test starts with it empty, and the tab is reloaded when a test left it unusable."""

    def __init__(self, page, server):
        self.page, self.server = page, server
        self.errors = watch_page(page, "shared JupyterLab tab")
        self.needs_reload = True

    def start_test(self):
        """A JupyterLab with no document open, and an empty error list, for the next test."""
        self.page.bring_to_front()  # another test's tab may have been in front: keep timers and focus ours
        # Errors raised while the previous test's documents closed are dropped (as they were when
        # each test closed a tab of its own): this test's list starts empty.
        self.errors.clear()
        if self.needs_reload or not lab_is_running(self.page, self.server) or self.page.evaluate(JS_OPEN_DOCUMENTS):
            # JupyterLab's start-up errors, if any, are reported by the test that triggered the load.
            load_lab(self.page, self.server)
        self.needs_reload = False

    def end_test(self):
        """Close the test's documents; if that fails, the next test gets a freshly loaded JupyterLab.

        Never raises: the test's own result stands."""
        try:
            self.needs_reload = (not lab_is_running(self.page, self.server)
                                 or self.page.evaluate(JS_RAN_OWN_JAVASCRIPT)
                                 or not close_documents(self.page))
        except Exception:
            self.needs_reload = True


# Cells still queued or running show [*] in their prompt; the kernel is idle once the last one is done.
# Also says whether the last code cell has run: Run All then has certainly reached the end.
JS_BUSY = """() => { const w = window.jupyterapp.shell.currentWidget;
  const queued = [...w.content.node.querySelectorAll('.jp-InputPrompt')].filter(e => e.innerText.includes('*')).length;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  const code = w.content.widgets.filter(c => c.model.type === 'code');
  const lastRan = code.length === 0 || code[code.length - 1].model.executionCount !== null;
  return {busy: queued + (k && k.status === 'idle' ? 0 : 1), lastRan}; }"""

# A quiet page whose last cell has not run is taken as Run All having stopped only after this long:
# between two cells the front end may show neither a queued prompt nor a busy kernel for a moment
# (it sends the next cell once it has handled the previous reply, widget rendering included), and
# on a loaded machine that moment lasted over a second and was misread as an early stop.
STOPPED_QUIET_S = 15


def run_all(page, timeout=RUN_ALL_S):
    """Run > Run All Cells, as a learner would; returns when no cell is queued or running.

    (The command's own promise settles as soon as one cell fails, even a cell tagged
    raises-exception, while the cells below it still run: so watch the prompts instead.)"""
    page.evaluate(JS_RUN_ALL)
    deadline, quiet_since = time.monotonic() + timeout, None
    while True:
        now = time.monotonic()
        if now > deadline:
            raise TimeoutError(f"Run All still running after {timeout} s")
        state = page.evaluate(JS_BUSY)
        if state["busy"]:
            quiet_since = None
        else:
            quiet_since = quiet_since or now
            quiet = now - quiet_since
            if (state["lastRan"] and quiet >= 1.2) or quiet >= STOPPED_QUIET_S:
                return
        time.sleep(0.4)


def _pngs(cell):
    """How many figures the kernel sent in this cell's outputs."""
    return sum(1 for o in cell["outputs"] if "image/png" in (o.get("data") or {}))


def _settled(cells):
    for cell in cells:
        # the front end renders outputs after the model has them; on a loaded machine the last cells'
        # figures were seen arriving seconds after Run All ended, so wait for them as for widgets
        if cell["imagesShown"] < _pngs(cell):
            return False
        if cell["widgetViews"] and (not cell["widgetsRendered"] or cell["widgetLoadingOrError"]):
            return False
        for w in cell["interacts"]:
            if not w["images"] and not w["stderr"]:
                return False
    return True


# Scroll the cell at this index into view, as a learner does who scrolls down to its figure.
JS_SCROLL_TO = """async (index) => { const nb = window.jupyterapp.shell.currentWidget.content;
  await nb.scrollToItem(index, 'center'); }"""

# How long a cell may stay unsettled before it is scrolled into view. JupyterLab renders outputs of
# cells out of view lazily: once (1 of about 300 cells with figures in a CI run) a figure the kernel had
# sent was still not in the page a minute after Run All, with no <img> at all in its cell.
SCROLL_AFTER_S = 5


def read_cells(page, timeout=2 * RENDER_S):
    """The code cells as the page shows them, once every widget and figure has drawn (or the timeout passed).

    A cell still unsettled after SCROLL_AFTER_S is scrolled into view, once, as a reader would."""
    start = time.monotonic()
    deadline, scrolled = start + timeout, set()
    while True:
        cells = page.evaluate(JS_CELLS)
        if _settled(cells) or time.monotonic() > deadline:
            return cells
        if time.monotonic() - start > SCROLL_AFTER_S:
            for cell in cells:
                if cell["index"] not in scrolled and not _settled([cell]):
                    scrolled.add(cell["index"])
                    page.evaluate(JS_SCROLL_TO, cell["index"])
        time.sleep(0.5)


def check_cells(cells, student, problems, source_cells=None):
    """Every failure of what a learner sees after Run All, by cell, into problems."""
    allowed = {"NotImplementedError"} if student else set()
    stopped = None
    for cell in cells:
        where = cell_name(cell)
        if cell["executionCount"] is None:
            if stopped is None:
                stopped = cell
            continue
        errors = [e for e in map(error_of, cell["outputs"]) if e]
        for ename, evalue in errors:
            if ename not in allowed:
                problems.add(where, f"Python error {ename}: {evalue[:300]}")
        if cell["imagesBroken"]:
            problems.add(where, f"{cell['imagesBroken']} figure image(s) failed to load")
        pngs = _pngs(cell)
        if cell["imagesShown"] < pngs:
            problems.add(where, f"the kernel sent {pngs} figure(s) but the page shows {cell['imagesShown']}")
        if not errors and not cell["imagesShown"] and MAKES_FIGURE.search(cell["source"]):
            problems.add(where, "draws a matplotlib figure but no figure appears")
        if cell["widgetViews"] and (not cell["widgetsRendered"] or cell["widgetLoadingOrError"]):
            problems.add(where, f"{cell['widgetViews']} widget(s) sent by the kernel did not render "
                                f"(\"Loading widget...\" or \"Error displaying widget\")")
        for text in cell["widgetErrors"]:
            problems.add(where, f"widget error shown: {text}")
        for n, w in enumerate(cell["interacts"]):
            names = widget_error_names(w["stderr"])
            bad = [x for x in names if x not in allowed]
            if bad:
                tail = " | ".join(w["stderr"])[-400:]
                problems.add(where, f"widget {n}: its update function raised {', '.join(bad)}: {tail}")
            elif not names and not w["images"]:
                problems.add(where, f"widget {n} rendered its controls but no figure")
            if not w["controls"]:
                problems.add(where, f"widget {n} shows no slider, dropdown or button")
        if source_cells and student and not errors and not says_pending(cell):
            src = source_cells.get(cell["index"])
            if src and (cell["imagesShown"] < src["imagesShown"] or cell["widgetViews"] < src["widgetViews"]):
                problems.add(where, f"shows {cell['imagesShown']} figure(s) and {cell['widgetViews']} widget(s);"
                                    f" the source notebook's cell shows {src['imagesShown']} and {src['widgetViews']}")
    if stopped is not None:
        ran = [c for c in cells if c["executionCount"] is not None]
        last = max(ran, key=lambda c: c["executionCount"]) if ran else None
        failing = f"{cell_name(last)} raised " + ", ".join(
            e[0] for e in map(error_of, last["outputs"]) if e) if last else "nothing ran"
        never = sum(1 for c in cells if c["executionCount"] is None)
        problems.add("Run All", f"stopped early: {failing}; {never} code cell(s) from {cell_name(stopped)} on "
                                f"never ran, so every widget and figure below stays blank (a cell that fails "
                                f"until an exercise is solved must be tagged raises-exception)")
    return cells


# The controls, in the order a "main widget" is picked and moved.
MOVABLE = (".widget-slider", ".widget-dropdown", ".widget-button")


def main_widget(page):
    """The notebook's first interactive widget that shows a figure (else the first one), or None."""
    widgets = page.locator(".jp-Notebook .widget-interact")
    first = None
    for i in range(widgets.count()):
        w = widgets.nth(i)
        if not any(w.locator(sel).count() for sel in MOVABLE):
            continue
        first = first or w
        if w.locator("img").count():
            return w
    return first


# What the widget's figure shows: its image's size and a hash of its bytes (None while it shows
# none). A speclab widget's figure is an Image widget, whose <img> gets a new blob: URL for every
# picture, even the same picture again, so only the bytes can tell a stale figure from a redrawn one
# (for a data: URL, bytes and src change together). FNV-1a, 32 bits: two different pictures agree by
# chance with probability 2^-32.
JS_FIGURE_KEY = """async w => {
  const img = w.querySelector('img'), src = img && img.getAttribute('src');
  if (!src) return null;
  let bytes;
  try { bytes = new Uint8Array(await (await fetch(src)).arrayBuffer()); }
  catch (e) { return null; }   // a blob: URL revoked as the next picture arrived: ask again
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) { h ^= bytes[i]; h = Math.imul(h, 0x01000193); }
  return bytes.length + ':' + (h >>> 0).toString(16);
}"""


def _figure_src(widget):
    """The widget's figure as JS_FIGURE_KEY sees it (None while it shows none)."""
    return widget.evaluate(JS_FIGURE_KEY) if widget.locator("img").count() else None


def _state(widget):
    return widget.evaluate("""w => [...w.querySelectorAll('.widget-readout, select')]
                                      .map(e => e.value !== undefined && e.tagName === 'SELECT' ? e.value : e.innerText)
                                      .join(' | ')""")


def move_main_widget(page, problems, student, redraw_s=REDRAW_S, report_missing=True, widget=None):
    """Move the main widget's first slider one step (or pick another dropdown option, or press its
    button), and check its figure is redrawn with no error. Returns the widget's locator (or None)."""
    widget = widget or main_widget(page)
    if widget is None:
        if report_missing:  # else Run All stopped early, which is reported already
            problems.add("main widget", "the notebook shows no interactive widget with a slider, dropdown or button")
        return None
    widget.scroll_into_view_if_needed()
    before_src, before = _figure_src(widget), _state(widget)
    if widget.locator(".widget-slider").count():
        slider = widget.locator(".widget-slider").first
        label = slider.locator(".widget-label").first.inner_text().strip()
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        deadline = time.monotonic() + 2
        while _state(widget) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        back = "ArrowLeft"
        if _state(widget) == before:  # at its maximum: step left instead
            handle.press("ArrowLeft")
            back = "ArrowRight"
        action = f"slider {label!r}"
    elif widget.locator(".widget-dropdown select").count():
        select = widget.locator(".widget-dropdown select").first
        options = select.locator("option").all_inner_texts()
        current = select.evaluate("s => s.options[s.selectedIndex].text")
        other = next((o for o in options if o != current), current)
        select.select_option(label=other)
        action = f"dropdown: {current!r} -> {other!r}"
    else:
        widget.locator(".widget-button").first.click()
        action = "button"
    after = _state(widget)
    if widget.locator(".widget-slider").count() and after == before:
        problems.add("main widget", f"moving {action} with the arrow keys did not change its value ({before})")
        return widget
    deadline = time.monotonic() + redraw_s
    while time.monotonic() < deadline:
        src = _figure_src(widget)
        stderr = widget.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
        if src and src != before_src:
            break
        if stderr:
            break
        time.sleep(0.25)
    stderr = widget.locator('[data-mime-type="application/vnd.jupyter.stderr"]').all_inner_texts()
    names = widget_error_names(stderr)
    bad = [n for n in names if not (student and n == "NotImplementedError")]
    if bad:
        problems.add("main widget", f"after moving {action} ({before} -> {after}) its update raised "
                                    f"{', '.join(bad)}: {' | '.join(stderr)[-400:]}")
    elif before_src is None and not names:
        problems.add("main widget", f"showed no figure before moving {action}")
    elif before_src is not None and (src is None or src == before_src):
        problems.add("main widget", f"moved {action} ({before} -> {after}); the figure did not change "
                                    f"within {redraw_s} s")
    elif before_src is not None and action.startswith("slider") and not names:
        # Step back: the widget must draw, for the values it showed after Run All, the figure it
        # showed then. If not, that figure was stale or garbled (e.g. a later cell drove the
        # displayed widget from the kernel while the page was echoing its slider values back).
        moved_src = src
        handle.press(back)
        deadline = time.monotonic() + redraw_s
        while time.monotonic() < deadline:
            src = _figure_src(widget)
            if _state(widget) == before and src and src != moved_src:
                break
            time.sleep(0.25)
        if _state(widget) != before:
            problems.add("main widget", f"stepping {action} back did not return it to {before} "
                                        f"(shows {_state(widget)})")
        elif src != before_src:
            problems.add("main widget", f"after Run All it showed a figure for ({before}) that differs from "
                                        f"the one it draws for the same values when stepped back to them: "
                                        f"the figure shown after Run All was stale or garbled (does a later "
                                        f"cell change this displayed widget?)")
    return widget


def screenshot(page, widget, name):
    """The main widget's cell, else the window, as SCREENSHOTS/name.png.

    A cell scrolled into view paints its figure over a few frames: shoot until two shots agree."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    target = widget.locator("xpath=ancestor::div[contains(@class, 'jp-Cell')][1]").first if widget else None
    if target is None or not target.count():
        page.screenshot(path=str(path))
        return path
    target.scroll_into_view_if_needed()
    for img in widget.locator("img").all():
        img.evaluate("i => i.decode().catch(() => null)")
    shot, previous = None, None
    for _ in range(10):
        page.wait_for_timeout(250)
        shot = target.screenshot()
        if shot == previous:
            break
        previous = shot
    path.write_bytes(shot)
    return path


def validate(page, problems, expect_failures):
    """Press nbgrader's Validate button and read its report."""
    button = page.locator(".validate-button")
    if not button.count():
        problems.add("Validate", "nbgrader's Validate button is not in the notebook toolbar")
        return None
    button.first.click()
    dialog = page.locator(".jp-Dialog").filter(has_text="Validation")
    try:
        dialog.first.wait_for(timeout=RUN_ALL_S * 1000)
    except Exception:
        problems.add("Validate", f"no validation report within {RUN_ALL_S} s of pressing Validate")
        return None
    body = dialog.first.locator(".jp-Dialog-body")
    text = body.inner_text()
    classes = body.evaluate("b => [...b.querySelectorAll('*')].map(e => e.className).join(' ') + ' ' + b.className")
    outcome = next((k for k in ("validation-failed", "validation-success", "validation-changed",
                                "validation-passed", "validation-type-error", "validation-missing-exception")
                    if k in classes), None)
    if outcome is None:
        problems.add("Validate", f"the report is not a validation result: {text[:400]}")
    elif expect_failures and outcome != "validation-failed":
        problems.add("Validate", f"a fresh student copy should fail its visible tests, but the report is "
                                 f"{outcome}: {text[:300]}")
    elif not expect_failures and outcome != "validation-success":
        problems.add("Validate", f"the report is {outcome}: {text[:300]}")
    page.keyboard.press("Escape")
    return text


# ---------------------------------------------------------------- latency, as a learner feels it

# Installed once on a widget's node. A keydown or pointerdown inside the widget (capture phase, so
# before the slider handles it) stamps the start of a move with performance.now(); a MutationObserver
# stamps the moment the widget's first <img> has a src other than the one it had when the move was
# armed (the kernel's new figure is in the page: `shown`), then the first frame after that image is
# decoded (the learner sees it: `painted`). Every number is taken in the page: how Python waits for
# it adds nothing. On the way, the kernel connection's messages say where the time went: `sent`, the
# page sending the move's comm message; `busy` and `displayed`, the kernel starting on it and
# publishing its figure (the kernel's own clock: the same machine's), as a display output or as an
# Image widget's new value (speclab.widgets); `received`, that figure reaching the page. An Image
# widget's <img> gets a new blob: URL for each new picture, so a new src is a new figure either way.
JS_LATENCY_WATCH = """w => {
  if (w.__latency) return;
  const s = w.__latency = {};
  const srcNow = () => { const i = w.querySelector('img'); return i ? i.getAttribute('src') : null; };
  s.arm = () => {
    Object.assign(s, {t0: null, sent: null, msgId: null, busy: null, displayed: null, received: null,
                      shown: null, painted: null, src: srcNow()});
  };
  s.arm();
  const start = () => { if (s.t0 === null) s.t0 = performance.now(); };
  w.addEventListener('keydown', start, true);
  w.addEventListener('pointerdown', start, true);
  new MutationObserver(() => {
    if (s.t0 === null || s.shown !== null) return;
    const img = w.querySelector('img'), src = img && img.getAttribute('src');
    if (!src || src === s.src) return;
    s.shown = performance.now();
    img.decode().catch(() => null).then(() => requestAnimationFrame(() => { s.painted = performance.now(); }));
  }).observe(w, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  const kernelTime = date => Date.parse(date) - performance.timeOrigin;
  if (kernel) kernel.anyMessage.connect((_, args) => {
    const msg = args.msg, type = msg.header.msg_type, now = performance.now();
    if (s.t0 === null) return;
    if (args.direction === 'send') {
      if (type === 'comm_msg' && s.sent === null) { s.sent = now; s.msgId = msg.header.msg_id; }
      return;
    }
    if (!s.msgId || !msg.parent_header || msg.parent_header.msg_id !== s.msgId) return;
    if (type === 'status' && msg.content.execution_state === 'busy' && s.busy === null) s.busy = kernelTime(msg.header.date);
    const data = msg.content.data || {};
    const figure = (type === 'display_data' && data['image/png'])
      || (type === 'comm_msg' && data.method === 'update' && (data.buffer_paths || []).some(p => p[0] === 'value'));
    if (figure && s.received === null) {
      s.received = now; s.displayed = kernelTime(msg.header.date);
    }
  });
}"""
JS_LATENCY_ARM = "w => w.__latency.arm()"
JS_LATENCY_READ = """w => { const s = w.__latency, ms = t => t === null ? null : Math.round(10 * (t - s.t0)) / 10;
  return {sent: ms(s.sent), busy: ms(s.busy), displayed: ms(s.displayed), received: ms(s.received),
          shown: ms(s.shown), painted: ms(s.painted)}; }"""
JS_LATENCY_DONE = "w => w.__latency.painted !== null"

# The main widget's controls are moved with the keys a learner uses on a focused control: a slider
# steps and jumps to its two ends (where axes rescale, if they ever do); a dropdown steps through
# its options and jumps to the first and last. A key that leaves the value where it was (an end
# already reached) is no move and is skipped. The first LATENCY_CONTROLS controls are moved (sliders
# first), the sequence repeated until LATENCY_MIN_MOVES moves were made (at most twice).
LATENCY_KEYS = {".widget-slider": ("ArrowRight", "ArrowRight", "ArrowLeft", "End", "ArrowLeft", "Home", "ArrowRight"),
                ".widget-dropdown": ("ArrowDown", "ArrowDown", "ArrowUp", "End", "Home", "ArrowDown")}
LATENCY_CONTROLS = 2
LATENCY_MIN_MOVES = 10


def _control_value(control):
    """What a slider's readout or a dropdown's selected option shows."""
    return control.evaluate("""c => { const s = c.querySelector('select');
      if (s) return s.selectedIndex < 0 ? '' : s.options[s.selectedIndex].text;
      const r = c.querySelector('.widget-readout'); return r ? r.innerText : ''; }""")


def measure_latency(page, widget, redraw_s=REDRAW_S):
    """Move the widget's controls with the keyboard, one move at a time, each awaited until its new
    figure is painted. Returns one dict per move: control, key, values, `ms` (key press to the new
    image's src in the page) and `painted_ms` (to the first frame after that image is decoded);
    `ms` is None for a move whose figure never changed within redraw_s (a failure for the caller).
    `at` holds the milestones of JS_LATENCY_WATCH in ms from the key press (None where not seen)."""
    widget.scroll_into_view_if_needed()
    node = widget.element_handle()
    page.evaluate(JS_LATENCY_WATCH, node)
    controls = []
    for kind, keys in LATENCY_KEYS.items():
        found = widget.locator(kind)
        controls += [(found.nth(i), keys) for i in range(found.count())]
    controls = controls[:LATENCY_CONTROLS]
    moves = []
    for _ in range(2):
        for control, keys in controls:
            label = control.locator(".widget-label").first.inner_text().strip()
            target = control.locator(".noUi-handle, select").first
            for key in keys:
                before = _control_value(control)
                page.evaluate(JS_LATENCY_ARM, node)
                target.focus()
                target.press(key)
                after = _control_value(control)
                if after == before:
                    continue
                move = {"control": label, "key": key, "from": before, "to": after, "ms": None, "painted_ms": None}
                moves.append(move)
                try:
                    page.wait_for_function(JS_LATENCY_DONE, arg=node, timeout=redraw_s * 1000, polling=50)
                except Exception:  # a playwright TimeoutError: the figure never changed
                    continue
                s = page.evaluate(JS_LATENCY_READ, node)
                move.update(ms=s["shown"], painted_ms=s["painted"], at=s)
        if len(moves) >= LATENCY_MIN_MOVES:
            break
    return moves


def latency_summary(moves):
    """{moves, median, max, painted_median, painted_max} in ms over the moves that redrew (None when none)."""
    import statistics
    done = [m for m in moves if m["ms"] is not None]
    if not done:
        return {"moves": len(moves), "redrawn": 0}
    ms, painted = [m["ms"] for m in done], [m["painted_ms"] for m in done]
    return {"moves": len(moves), "redrawn": len(done), "median": round(statistics.median(ms), 1),
            "max": max(ms), "painted_median": round(statistics.median(painted), 1), "painted_max": max(painted)}
