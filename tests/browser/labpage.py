"""A notebook in JupyterLab's page: opened, Run All, its documents closed, Validate pressed;
the page's JavaScript errors and the problems found, collected for one report."""
import time

from labdriver import KERNEL_READY_S, RUN_ALL_S

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
    elif expect_failures and not (0 <= text.find("NotImplementedError") < text.find("The test that failed:")):
        # the course config puts a failure's message before the test's source (grading/validate.py)
        problems.add("Validate", f"the report does not show the failure's message before the test: {text[:400]}")
    page.keyboard.press("Escape")
    return text
