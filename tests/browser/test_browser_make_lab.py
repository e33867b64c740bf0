"""`make lab`, as a learner runs it, in a throwaway copy of the repository (never the real work/).

The copy shares the real .venv (a symlink; `make -o .venv/.installed` trusts it as set up), and so notebook 10's model cache.
The server it starts must answer, and its default page must open the student copy of the
first notebook from the copy's new work/ folder.
"""
import os
import shutil

import nbformat
import pytest

import labdriver as lab_
import labpage
from grading.course import assignments

# Under `make test` (xdist, --dist loadgroup) in the first browser group, on one worker with its own server and
# browser (test_browser_notebooks.py says how the notebooks are split between the two groups).
pytestmark = pytest.mark.xdist_group("browser")

REPO = lab_.REPO
PARTS = ("Makefile", "requirements.txt", "requirements-model.txt", "pyproject.toml", "grading", "speclab", "solutions", "notebooks", "data")


def snapshot(folder):
    if not folder.exists():
        return None
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns) for p in folder.rglob("*"))


@pytest.fixture
def repo_copy(session_dir):
    dest = session_dir / "make-lab-repo"
    for part in PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "node_modules",
                                                                            "smollm2-135m"))
        elif src.exists():
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    (dest / ".venv").symlink_to(REPO / ".venv")
    # notebook 10's 538 MB float32 cache, built by the real set-up: shared as the venv is (make sees it current)
    (dest / "data" / "smollm2-135m").symlink_to(REPO / "data" / "smollm2-135m")
    return dest


def test_make_lab_serves_the_student_copy(browser_parts, browser, repo_copy, session_dir):
    if not shutil.which("make"):
        pytest.fail("`make` is not installed", pytrace=False)
    real_work = snapshot(REPO / "work")
    port, token = lab_.free_port(), "speclab-make-lab-test"
    lab_args = (f"--no-browser --ip=127.0.0.1 --ServerApp.port_retries=0 --ServerApp.token={token} "
                f"--LabApp.workspaces_dir={session_dir / 'make-lab-workspaces'}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECLAB_COURSE_ROOT", "MAKE", "JUPYTER_TOKEN"))}
    proc = lab_.Process(["make", "-o", ".venv/.installed", "-o", "data/smollm2-135m/manifest.json", "lab", f"PORT={port}", f"LAB_ARGS={lab_args}"],
                        cwd=repo_copy, env=env, log=session_dir / "make-lab.log")
    page = None
    try:
        base = f"http://127.0.0.1:{port}"
        lab_.wait_until_answers(f"{base}/api/status?token={token}", proc)
        proc.watch()
        first = assignments()[0]
        made = repo_copy / "work" / first / f"{first}.ipynb"
        assert made.is_file(), f"make lab did not make {made}:\n{proc.log_tail()}"
        # the served file is the student copy, byte for byte, so the page shows the student copy
        assert made.read_bytes() == (REPO / "notebooks" / first / f"{first}.ipynb").read_bytes(), (
            f"{made} is not the student copy notebooks/{first}/{first}.ipynb")

        page = browser.new_page()
        js_errors = labpage.watch_page(page, "make lab")
        page.goto(f"{base}/?token={token}")  # the server redirects to its default_url
        page.wait_for_selector(".jp-Notebook", timeout=lab_.KERNEL_READY_S * 1000)
        tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current").first.inner_text()
        assert f"{first}.ipynb" in tab, f"make lab's default page opened {tab!r}, not {first}.ipynb"
        title = nbformat.read(made, as_version=4).cells[0].source.splitlines()[0].lstrip("# ").strip()
        try:
            page.locator(".jp-Notebook .jp-Cell").filter(has_text=title).first.wait_for(
                timeout=lab_.KERNEL_READY_S * 1000)
        except Exception:
            pytest.fail(f"make lab's notebook never showed its title {title!r}; the page shows: "
                        f"{page.locator('.jp-Notebook').first.inner_text()[:300]!r}", pytrace=False)
        proc.watch()
        assert not js_errors, f"JavaScript errors in the lab make lab started: {js_errors}"
    finally:
        if page is not None:
            page.close()
        killed = proc.stop()
    assert not killed, f"stopping make lab left processes that had to be killed: {killed}"
    assert snapshot(REPO / "work") == real_work, "make lab in the copy touched the real work/ folder"
