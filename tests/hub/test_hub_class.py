"""One class on a real JupyterHub (issue 18): real accounts, the Assignments tab in Chromium, the
exchange's permissions, a due date, make grade as the instructor, feedback, and the memory limit.

The hub is set up by the guide's own files (grading/hub/setup.sh, instructor.sh, jupyterhub_config.py;
grading/README.md, "The JupyterHub route"), so the guide cannot drift from what runs here:
1. root runs setup.sh (exchange, global nbgrader config, students' config without the instructor
   tools); accounts: an instructor and three students in a new group, with passwords (PAM);
   JupyterHub with configurable-http-proxy from `make setup` and the LocalProcessSpawner.
2. The instructor (their own OS user) releases notebook 02 from a course clone in their home.
3. Students A and B log in through the hub in Chromium, open the Assignments tab, fetch, fill in
   the exercises in the page (A right, B with a catalogued mistake), press Validate, submit.
   C (the memory hog, step 7) submits with `nbgrader submit` as their own OS user.
4. A cannot list inbound/ (nor so find B's submission there); a student's page has no formgrader,
   create-assignment or course-list plugin or menu entry, and its server no formgrader.
5. A due date falls between A's and B's submissions; the instructor collects and runs `make grade` as
   themselves; B's late penalty (LateSubmissionPlugin, "zero") is in grades.csv.
6. The instructor releases feedback; each student fetches it in the browser and reads their own score.
7. C's submission allocates without end: make grade's memory limit stops it, C's feedback says so, C
   keeps the other exercises' points, and A's and B's scores are what they would be without C.

Needs root (accounts, a hub); skipped otherwise, except in CI (CI=true), where it fails.

Why one module of about 400 lines: one hub, set up once, plays the whole class in order; split, each
module would start a hub of its own.
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import hubdriver as hub_
from hubdriver import REPO, lab_
import labpage  # tests/browser, on the path once hubdriver is imported

from devtools import badsubmissions as bs
from grading.cells import solution_cells

pytestmark = pytest.mark.xdist_group("hub")

AID = "02_acceptance_rule"
COURSE_ID = "speclab"
TIMINGS = {}


def _need_root():
    if os.geteuid() == 0:
        return
    why = "the hub test needs root (it creates system accounts and runs a JupyterHub that starts servers as them)"
    if os.environ.get("CI") == "true":
        pytest.fail(why + "; CI runs as root, so this is a failure there", pytrace=False)
    pytest.skip(why)


class Steps:
    def __init__(self):
        self.t0 = time.monotonic()
        self.last = self.t0

    def __call__(self, name):
        now = time.monotonic()
        TIMINGS[name] = round(now - self.last, 1)
        self.last = now


@pytest.fixture(scope="module")
def world():
    """Accounts, the guide's set-up, the instructor's course clone, a hub; all removed afterwards."""
    _need_root()
    missing = hub_.missing_parts()
    assert not missing, "the hub test needs " + "; ".join(missing)
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="speclab-hub-", dir="/tmp"))
    os.chmod(base, 0o755)
    cleanups = []
    try:
        # the users' servers run the course env's Python: its folders, and the interpreter it links to
        # (here a pyenv build under /root), must be reachable by every user; put back afterwards
        changed = hub_.traversable(REPO / ".venv") + hub_.traversable(Path(os.path.realpath(hub_.sys.executable)).parent)
        cleanups.append(lambda: hub_.restore(changed))
        (base / "home").mkdir(mode=0o755)
        accounts = hub_.Accounts(base / "home", ["instructor", "alice", "bob", "carol"])
        cleanups.append(accounts.remove)
        etc, exchange = base / "etc", base / "exchange"
        subprocess.run(["bash", str(hub_.HUB / "setup.sh")], check=True, capture_output=True,
                       env=dict(os.environ, EXCHANGE=str(exchange), HUB_ETC=str(etc), COURSE_ID=COURSE_ID))
        course = make_clone(accounts)
        accounts.run("instructor", ["bash", str(hub_.HUB / "instructor.sh")], COURSE=course)
        hub = hub_.Hub(base, etc, accounts.group, [accounts.names["instructor"]])
        cleanups.append(hub.stop)
        TIMINGS["set-up: accounts, setup.sh, clone, instructor.sh, hub"] = round(time.monotonic() - t0, 1)
        yield {"base": base, "accounts": accounts, "etc": etc, "exchange": exchange, "course": course,
               "hub": hub}
    finally:
        errors = []
        for undo in reversed(cleanups):
            try:
                left = undo()
                if left:
                    errors.append(f"{undo}: had to kill {left}")
            except Exception as e:
                errors.append(f"{type(e).__name__}: {e}")
        shutil.rmtree(base, ignore_errors=True)
        assert not errors, "cleaning up the hub test: " + "; ".join(errors)


def make_clone(accounts):
    """The instructor's course clone (guide step 2): the repository's files in ~/speclab, owned by the
    instructor, using the course env (`make setup` there would build the same venv: linked instead)."""
    home = accounts.home("instructor")
    course = home / "speclab"
    course.mkdir()
    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy2(REPO / name, course / name)
    for folder in ("grading", "speclab", "data", f"solutions/{AID}", f"notebooks/{AID}"):
        shutil.copytree(REPO / folder, course / folder,
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "node_modules"))
    (course / ".venv").symlink_to(REPO / ".venv")
    # the guide's late policy (README, step 7): a late submission scores zero
    with open(course / "grading" / "nbgrader_config.py", "a") as f:
        f.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    subprocess.run(["chown", "-R", "-h", f"{accounts.names['instructor']}:{accounts.group}", str(course)],
                   check=True)
    return course


def run_as(world, role, cmd, check=True, background=False):
    """cmd as `role`'s OS user, with what a terminal in their hub server has: the Jupyter config path
    grading/hub/jupyterhub_config.py gives them (students: the students' folder first)."""
    acc, etc = world["accounts"], world["etc"]
    folders = [etc / "everyone"] if role == "instructor" else [etc / "students", etc / "everyone"]
    cwd = world["course"] if role == "instructor" else acc.home(role)
    return acc.run(role, cmd, cwd=cwd, check=check, background=background,
                   JUPYTER_CONFIG_PATH=os.pathsep.join(map(str, folders)))


def nbgrader_as(world, role, *args, check=True, background=False):
    return run_as(world, role, ["nbgrader", *args], check=check, background=background)


# ------------------------------------------------------------------------------------------ browser

def start_login(context, world, role):
    """Log in on the hub's login page (the hub then starts the user's server)."""
    acc, hub = world["accounts"], world["hub"]
    page = context.new_page()
    js = labpage.watch_page(page, role)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", acc.names[role])
    page.fill("#password_input", acc.passwords[role])
    page.click("#login_submit", no_wait_after=True)
    return page, js


def finish_login(page, world, role):
    acc, hub = world["accounts"], world["hub"]
    try:
        page.wait_for_url(re.compile(rf"/user/{acc.names[role]}/lab"), timeout=hub_.SPAWN_S * 1000)
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started && "
                               "document.querySelector('#jp-main-dock-panel')", timeout=hub_.SPAWN_S * 1000)
    except Exception:
        shot(page, f"login-{role}")
        raise AssertionError(f"{role} did not reach JupyterLab through the hub (at {page.url});\n"
                             f"hub log:\n{hub.log_tail()}")


def shot(page, name):
    out = lab_.SCREENSHOTS / "hub"
    out.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(out / f"{name}.png"))
    except Exception:
        pass


def open_assignments(page):
    """The Assignments tab, from the Nbgrader menu as a student would."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").first.click()
    panel = page.locator("#nbgrader-assignment-list").first
    panel.wait_for(timeout=60_000)
    return panel




def released_row(panel):
    return panel.locator("#released_assignments_list .list_item, .list_item").filter(has_text=AID)


def button(panel, label):
    return panel.locator("button", has_text=re.compile(rf"^\s*{label}\s*$"))


JS_FILL = """async ([answers]) => {
  const app = window.jupyterapp, panel = app.shell.currentWidget;
  await panel.context.ready;
  let filled = 0;
  panel.content.widgets.forEach(cell => {
    const meta = cell.model.getMetadata('nbgrader') || {};
    if (meta.solution && meta.grade_id in answers) { cell.model.sharedModel.setSource(answers[meta.grade_id]); filled++; }
  });
  await app.commands.execute('docmanager:save');
  return filled;
}"""

JS_NBGRADER_UI = """() => {
  const app = window.jupyterapp, ids = ['formgrader', 'create-assignment', 'course-list', 'assignment-list',
    'validate-assignment'];
  const plugins = Object.fromEntries(ids.map(id => [id, app.hasPlugin('@jupyter/nbgrader:' + id)]));
  const cmds = ['nbgrader:open-formgrader', 'nbgrader:open-formgrader-local', 'nbgrader:open-course-list',
    'nbgrader:open-create-assignment', 'nbgrader:open-assignment-list'];
  const commands = Object.fromEntries(cmds.map(c => [c, app.commands.hasCommand(c)]));
  return {plugins, commands};
}"""


def work_and_submit(page, world, role, answers, expect_valid):
    """Assignments tab: Fetch; open the notebook; fill the exercises in the page; Validate; Submit."""
    acc = world["accounts"]
    panel = open_assignments(page)
    button(panel, "Fetch").first.click()
    button(panel, "Submit").first.wait_for(timeout=60_000)
    notebook = acc.home(role) / AID / f"{AID}.ipynb"
    assert notebook.is_file() and notebook.stat().st_uid == hub_.uid(acc.names[role]), (
        f"Fetch must put {AID}.ipynb into {role}'s home, owned by {role}")
    page.evaluate(f"() => window.jupyterapp.commands.execute('docmanager:open', {{path: '{AID}/{AID}.ipynb'}})")
    page.wait_for_function(labpage.JS_PANEL, timeout=lab_.KERNEL_READY_S * 2000)
    kernels = [json.loads(f.read_text()) for f in
               (acc.home(role) / ".local" / "share" / "jupyter" / "runtime").glob("kernel-*.json")]
    assert kernels and all(k["transport"] == "ipc" for k in kernels), (
        f"{role}'s kernels must listen on private sockets (grading/hub/setup.sh), not TCP ports a classmate's "
        f"kernel could take first: {[(k['transport'], k['ip']) for k in kernels]}")
    filled = page.evaluate(JS_FILL, [answers])
    assert filled == len(answers), f"{role}: filled {filled} of {len(answers)} exercises in the page"
    page.locator(".validate-button").first.click()
    dialog = page.locator(".jp-Dialog").filter(has_text="Validation").first
    dialog.wait_for(timeout=lab_.RUN_ALL_S * 1000)
    report = dialog.inner_text()
    classes = dialog.evaluate("d => [...d.querySelectorAll('*')].map(e => e.className).join(' ')")
    page.keyboard.press("Escape")
    if expect_valid:
        assert "validation-success" in classes, f"{role}'s right answers must pass Validate: {report[:500]}"
    else:
        assert "validation-" in classes, f"{role}: Validate gave no report: {report[:500]}"
    page.locator(".lm-TabBar-tab", has_text="Assignments").first.click()
    button(panel, "Submit").first.click()
    hub_.wait_for(lambda: [d for d in (world["exchange"] / COURSE_ID / "inbound").iterdir()
                           if d.name.startswith(acc.names[role] + "+")], 60, f"{role}'s submission in inbound/")
    panel.locator("text=There are no submitted assignments.").wait_for(state="hidden", timeout=30_000)
    return report


def fetch_feedback(page, world, role):
    """Assignments tab: Fetch Feedback; then the page, as the student's browser shows it."""
    acc, hub = world["accounts"], world["hub"]
    page.locator(".lm-TabBar-tab", has_text="Assignments").first.click()
    panel = page.locator("#nbgrader-assignment-list").first
    panel.locator("#refresh_assignments_list").click()  # the feedback was released after the list loaded
    button(panel, "Fetch Feedback").first.click()
    pages = hub_.wait_for(lambda: list((acc.home(role) / AID / "feedback").glob(f"*/{AID}.html")), 60,
                          f"{role}'s feedback page in ~/{AID}/feedback/")
    assert len(pages) == 1, f"{role} must receive exactly one feedback page, got {pages}"
    rel = pages[0].relative_to(acc.home(role))
    page.goto(f"{hub.url}/user/{acc.names[role]}/files/{rel}")
    return page.inner_text("body"), rel


def grades_csv(course):
    import csv
    with open(course / "grades.csv") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_one_class_on_a_real_hub(world, playwright):
    step = Steps()
    acc, exchange, course = world["accounts"], world["exchange"], world["course"]
    A, B, C = (acc.names[r] for r in ("alice", "bob", "carol"))
    right = {gid: cell.source for gid, cell in solution_cells(bs.solved(REPO, AID)).items()}
    _, func, desc, mistake = bs.wrong_answer(REPO, AID, 0)
    wrong = dict(right)
    wrong[next(g for g, src in right.items() if f"def {func}(" in src)] = mistake

    browser = playwright.chromium.launch(executable_path=lab_.CHROMIUM, headless=True, args=lab_.CHROMIUM_ARGS)
    try:
        # (the steps overlap where the class allows it: the suite's time is short)
        pages = {}
        for role in ("alice", "bob"):  # A and B log in; the hub starts both servers at once
            pages[role] = start_login(browser.new_context(viewport=lab_.VIEWPORT), world, role)

        # 2. the instructor releases notebook 02, as themselves, meanwhile
        nbgrader_as(world, "instructor", "release_assignment", AID, "--force")
        assert (exchange / COURSE_ID / "outbound" / AID / f"{AID}.ipynb").is_file()
        step("release (while the students' servers start)")
        # C (the memory hog, step 7) hands in from a shell, on time: started now, waited for below
        hog = acc.home("carol") / AID / f"{AID}.ipynb"
        hog.parent.mkdir()
        files = next(c for c in bs.CASES if c.name == "eats_memory").build(REPO, AID)
        hog.write_bytes(files[f"{AID}.ipynb"])
        shutil.chown(hog.parent, C, acc.group)
        shutil.chown(hog, C, acc.group)
        carol = nbgrader_as(world, "carol", "submit", AID, background=True)

        for role in ("alice", "bob"):
            finish_login(pages[role][0], world, role)
        step("log in (two servers spawned)")
        a, b = pages["alice"][0], pages["bob"][0]

        # 3. A works and submits on time
        work_and_submit(a, world, "alice", right, expect_valid=True)
        step("alice: fetch, fill, validate, submit")
        carol.wait()
        # 5. the due date falls here: B's submission is late
        time.sleep(1.1)
        due = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        time.sleep(1.1)
        set_due = nbgrader_as(world, "instructor", "db", "assignment", "add", AID, f"--duedate={due}",
                              background=True)
        step("carol's submission; due date")
        work_and_submit(b, world, "bob", wrong, expect_valid=False)
        set_due.wait()
        step("bob: fetch, fill, validate, submit (late)")

        # 4. permissions: A cannot list inbound/, so cannot find B's submission
        inbound = exchange / COURSE_ID / "inbound"
        theirs = [d for d in inbound.iterdir() if d.name.startswith(B + "+")]
        assert len(theirs) == 1
        listing = run_as(world, "alice", ["ls", str(inbound)], check=False)
        assert listing.returncode != 0 and "Permission denied" in listing.stderr, (
            f"student A must not be able to list inbound/: {listing.stdout}{listing.stderr}")
        glob = run_as(world, "alice", ["bash", "-c", f"cat {inbound}/{B}+*/*.ipynb"], check=False)
        assert glob.returncode != 0 and '"cells"' not in glob.stdout, (
            "student A must not be able to read B's submission in inbound/")
        # the instructor tools are not in a student's page, nor on their server
        ui = a.evaluate(JS_NBGRADER_UI)
        assert ui["plugins"]["assignment-list"] and ui["plugins"]["validate-assignment"], ui
        shown = {k for k, v in ui["plugins"].items() if v} & {"formgrader", "create-assignment", "course-list"}
        assert not shown, f"a student's JupyterLab must not load nbgrader's instructor plugins: {shown}"
        assert ui["commands"]["nbgrader:open-assignment-list"], ui
        commands = {k for k, v in ui["commands"].items() if v and k != "nbgrader:open-assignment-list"}
        assert not commands, f"a student's JupyterLab must not offer {commands}"
        a.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.click()
        items = [t.strip() for t in a.locator(".lm-Menu-content .lm-Menu-item:not(.lm-mod-hidden)").all_inner_texts()]
        a.keyboard.press("Escape")
        assert [t for t in items if t] == ["Assignment List"], (
            f"a student's Nbgrader menu must offer only the Assignment List, it shows {items}")
        status = a.evaluate(f"async () => (await fetch('/user/{A}/formgrader')).status")
        assert status == 404, f"a student's server must not serve the formgrader (got HTTP {status})"
        step("permission checks")

        # 5. the instructor collects and grades, as themselves (not root), with make grade
        nbgrader_as(world, "instructor", "collect", AID)
        graded = run_as(world, "instructor", ["make", "--no-print-directory", "-o", "setup", "grade",
                                              f"GRADE_ARGS={AID}"])
        step("collect + make grade (3 submissions)")
        print("make grade on the hub said:\n" + graded.stdout[-3000:])  # shown when the test fails
        assert "every kernel ran in the sandbox" in graded.stdout, (
            "make grade on the hub must sandbox the students' kernels (bubblewrap)", graded.stdout[-2000:])
        assert (course / "grades.csv").stat().st_uid == hub_.uid(acc.names["instructor"])
        full, total = bs.full_marks(REPO, AID)
        lost = sum(bs.failing_tests(REPO, AID, func, mistake).values())
        hog_score = bs.losing(None)(REPO, AID)[0]
        step("expected scores (reference runs)")
        rows = grades_csv(course)
        assert float(rows[A]["raw_score"]) == full and float(rows[A]["late_submission_penalty"]) == 0, (
            rows[A], graded.stdout[-3000:])
        assert float(rows[B]["raw_score"]) == full - lost, (
            f"B's mistake ({desc}) must cost {lost} points: {rows[B]}", graded.stdout[-2000:])
        assert float(rows[B]["late_submission_penalty"]) == full - lost and float(rows[B]["score"]) == 0, (
            f"B submitted after the due date ({due}): the zero policy must take every point: {rows[B]}")
        # 7. the memory hog: stopped by make grade's limit, keeps the other exercises' points
        assert float(rows[C]["raw_score"]) == hog_score and float(rows[C]["late_submission_penalty"]) == 0, (
            rows[C], graded.stdout[-2000:])
        hog_page = (course / "feedback" / C / AID / f"{AID}.html").read_text()
        assert "ran out of memory" in hog_page and "GiB" in hog_page, (
            "the memory hog's feedback must say it ran out of memory, and the limit")
        assert 0 < hog_score < full

        # 6. feedback: released, fetched in each student's browser, own score only
        nbgrader_as(world, "instructor", "release_feedback", AID)
        listing = run_as(world, "alice", ["ls", str(exchange / COURSE_ID / "feedback")], check=False)
        assert listing.returncode != 0, "a student must not be able to list the released feedback"
        seen = {}
        # B's page shows the score after the late penalty, and the penalty
        for role, page, want, late in (("alice", a, full, 0), ("bob", b, 0, full - lost)):
            text, rel = fetch_feedback(page, world, role)
            assert f"{AID} (Score: {float(want)} / {float(total)})" in text, (
                f"{role}'s feedback page must show their score {want} / {total}: {text[:600]}")
            if late:
                assert f"Late submission penalty (Score: {-float(late)})" in text, text[:600]
            seen[role] = rel
        # B's browser, logged in as B, asks the hub for A's page: refused (an error or a page without it)
        other = b.evaluate(f"async () => {{ try {{ const r = await fetch('/user/{A}/files/{seen['alice']}');"
                           f" return [r.status, (await r.text()).slice(0, 4000)]; }}"
                           f" catch (e) {{ return [0, String(e)]; }} }}")
        assert other[0] != 200 and f"Score: {float(full)}" not in other[1], (
            f"B's browser must not get A's feedback page: {other}")
        step("feedback: release, fetch in the browser, read")
    finally:
        browser.close()
        print("hub test timings (s):", TIMINGS)
        Path(os.environ.get("SPECLAB_HUB_TIMINGS", "/dev/null")).write_text(repr(TIMINGS))
