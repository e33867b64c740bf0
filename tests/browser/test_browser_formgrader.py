"""The instructor's side: nbgrader's formgrader, served from the course root as `make formgrader` serves it: it
lists every assignment, its links open the course, and its buttons grade as `make grade` does."""
import json
import re
import urllib.request
from pathlib import Path

import pytest

import labdriver as lab_
import labpage
from grading.course import assignments

# Under `make test` (xdist, --dist loadgroup) in the first browser group, on one worker with its own server and
# browser (test_browser_notebooks.py says how the notebooks are split between the two groups).
pytestmark = pytest.mark.xdist_group("browser")


def test_formgrader_lists_every_assignment(lab, new_tab):
    page = new_tab  # the formgrader is a page of its own: the shared JupyterLab tab stays as it is
    js_errors = labpage.watch_page(page, "formgrader")
    page.goto(lab.url("formgrader"))
    rows = page.locator("#main-table tr")
    ids = assignments()
    try:
        page.wait_for_function(
            "n => [...document.querySelectorAll('#main-table tr')].filter(r => !/Loading/.test(r.innerText)).length >= n",
            arg=len(ids), timeout=lab_.RUN_ALL_S * 1000 // 2)
    except Exception:
        pass  # reported below with what the table shows
    shown = rows.all_inner_texts()
    names = [text.split("\t")[0].split("\n")[0].strip() for text in shown]
    missing = [aid for aid in ids if aid not in names]
    assert not missing, (f"the formgrader at {page.url} does not list {missing}; its table shows {shown[:10]}; "
                         f"the server log says:\n{lab.proc.log_tail(1500)}")
    assert not js_errors, f"the formgrader page raised JavaScript errors: {js_errors}"


AID = "01_branch_prediction"


def _hostile_submission(root, student):
    """The released student copy with a cell of the student's own that writes outside its folder, reads the
    gradebook and tampers with builtins, and a markdown cell with a script (tests/grading/test_nbgrader_path.py
    grades the same through nbgrader's API)."""
    import nbformat

    nb = nbformat.read(Path(root) / "notebooks" / AID / f"{AID}.ipynb", as_version=4)
    probe = (f"root = {str(root)!r}\n"
             "for attempt in (lambda: open(root + '/PWNED', 'w').write('x'),\n"
             "                lambda: print('gradebook:', open(root + '/gradebook.db', 'rb').read(15))):\n"
             "    try:\n"
             "        attempt()\n"
             "    except OSError as e:\n"
             "        print('refused:', type(e).__name__)\n"
             "import builtins\n"
             "builtins.abs = lambda x: 0\n")
    nb.cells.insert(2, nbformat.v4.new_code_cell(probe))
    nb.cells.insert(3, nbformat.v4.new_markdown_cell('<script>window.ATTACK = 1</script>'))
    folder = Path(root) / "submitted" / student / AID
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{AID}.ipynb")


def _press(page, student, column, lab):
    """Press the formgrader's button in `column` (autograde, generate-feedback) of the student's row; return
    the text of the dialog it opens when done."""
    row = page.locator("#main-table tr", has_text=student)
    row.locator(f"td.{column} a").click()
    dialog = page.locator("#success-modal, #error-modal")
    try:
        dialog.first.wait_for(state="visible", timeout=lab_.RUN_ALL_S * 1000)
    except Exception:
        raise AssertionError(f"no dialog after pressing {column} for {student}; the server log says:\n"
                             f"{lab.proc.log_tail(3000)}")
    text = dialog.first.inner_text()
    dialog.first.locator(".modal-footer button").first.click()
    page.wait_for_function("() => !document.querySelector('#success-modal, #error-modal')", timeout=10_000)
    return text


def test_formgrader_buttons_grade_in_the_sandbox_with_the_scan_and_notes(lab, new_tab):
    """Autograde and Generate Feedback in the formgrader run the course's steps (grading/nbgrader_steps.py):
    a hostile submission neither writes outside its folder nor reads the gradebook, its tampering line is
    removed and flagged, the formgrader marks it, its feedback page keeps the notes and no script."""
    from grading.course import generate_assignment
    from grading.grade.report import read_report

    root = lab.root
    generate_assignment(AID, root=root, release_dir=root / ".release")
    _hostile_submission(root, "hostile")
    page = new_tab
    js_errors = labpage.watch_page(page, "formgrader")
    page.goto(lab.url(f"formgrader/manage_submissions/{AID}"))
    page.locator("#main-table tr", has_text="hostile").wait_for(timeout=lab_.RENDER_S * 1000)

    said = _press(page, "hostile", "autograde", lab)
    assert "Successfully autograded" in said, said
    assert not (root / "PWNED").exists(), "the submission wrote outside its folder from the formgrader"
    graded = json.loads((root / "autograded" / "hostile" / AID / f"{AID}.ipynb").read_text())
    shown = json.dumps(graded["cells"][2]["outputs"])
    assert "SQLite format" not in shown and shown.count("refused:") == 2, f"the probe's cell showed {shown}"
    assert "pass  # removed by the integrity scan" in "".join(graded["cells"][2]["source"])
    row = read_report(root)[(AID, "hostile")]
    assert row["flagged"] == "1" and "builtins" in row["notes"], row

    said = _press(page, "hostile", "generate-feedback", lab)
    assert "Successfully generated feedback" in said, said
    feedback = (root / "feedback" / "hostile" / AID / f"{AID}.html").read_text()
    assert "Grading notes" in feedback and not re.search(r"<script[^>]*>[^<]*ATTACK", feedback)

    # Manual Grading marks it flagged
    page.goto(lab.url(f"formgrader/gradebook/{AID}/{AID}"))
    flagged = page.locator("#main-table tr", has_text="hostile").locator("td.flagged .glyphicon-flag")
    flagged.wait_for(timeout=lab_.RENDER_S * 1000)
    assert not js_errors, f"the formgrader raised JavaScript errors: {js_errors}"


def test_formgrader_links_open_the_course_not_a_working_copy(lab, new_tab):
    """Served from the course root (make formgrader), the assignment's name opens its source folder and
    Preview its released student copy: no 404, no learner's work/."""
    page = new_tab
    page.goto(lab.url("formgrader/manage_assignments"))
    row = page.locator("#main-table tr", has_text=AID)
    row.wait_for(timeout=lab_.RENDER_S * 1000)
    links = {"name": row.locator("td.name a").first, "preview": row.locator("td.preview a").first}
    wanted = {"name": f"solutions/{AID}", "preview": f"notebooks/{AID}"}
    for what, link in links.items():
        href = link.get_attribute("href")
        assert href and href.rstrip("/").endswith(wanted[what]), f"{what} links to {href}, not {wanted[what]}"
        assert "work/" not in href and "../" not in href, href
        with urllib.request.urlopen(lab.base + href + f"?token={lab.token}", timeout=30) as r:
            assert r.status == 200, f"{what} ({href}) answers {r.status}"


def test_a_submission_that_failed_to_grade_is_in_manual_grading_with_its_reason(lab, new_tab):
    """make grade could not read it: Manual Grading still lists it, and its page says why (a stand-in notebook
    in autograded/, grading/grade/merge.py)."""
    from grading.course import generate_assignment
    from grading.grade import grade

    aid = "02_acceptance_rule"
    root = lab.root
    generate_assignment(aid, root=root, release_dir=root / ".release")
    folder = root / "submitted" / "broken" / aid
    folder.mkdir(parents=True)
    (folder / f"{aid}.ipynb").write_text('{"cells": [')
    [res] = grade(root, only=[aid], workers=1, quiet=True, export=False, sandbox=False)  # no kernel starts
    assert res.status == "failed", res
    page = new_tab
    js_errors = labpage.watch_page(page, "formgrader")
    page.goto(lab.url(f"formgrader/gradebook/{aid}/{aid}"))
    link = page.locator("#main-table td.name a.name-hidden")  # names hidden: "Submission #1", its only one
    link.first.wait_for(timeout=lab_.RENDER_S * 1000)
    assert link.count() == 1, f"Manual Grading lists {link.count()} submissions of {aid}, not the one failed"
    assert not js_errors, f"the formgrader raised JavaScript errors: {js_errors}"
    link.first.click()
    page.get_by_text("not valid JSON").first.wait_for(timeout=lab_.RENDER_S * 1000)
    # nbgrader's own page for a submission loads MathJax from a CDN, which this machine cannot reach
    offline = ("ERR_NAME_NOT_RESOLVED", "ERR_INTERNET_DISCONNECTED", "MathJax is not defined")
    js_errors[:] = [e for e in js_errors if not any(o in e for o in offline)]
    assert not js_errors, f"the submission's page raised JavaScript errors: {js_errors}"


def _off_the_machine(url):
    """A request that leaves this machine (a CDN, the documentation), not the server or the page's own data."""
    from urllib.parse import urlparse

    parsed = urlparse(url)
    return parsed.scheme not in ("data", "blob", "about") and parsed.hostname not in ("127.0.0.1", "localhost")


def test_formgrader_is_offline_and_quiet_on_honest_work(lab, new_tab):
    """Issue 45: Autograde on an honest submission shows no checksum warning; no page of the formgrader
    (assignments, submissions, the submission view) asks anything of another machine, the submission view
    shows its mathematics as MathML, the assignments page has no "exchange directory does not exist" box,
    and the server logs no critical line. Seen failing before: seven "Attribute 'checksum' ... has changed!"
    lines in the dialog, MathJax requested from cdnjs.cloudflare.com, the exchange box, and a critical
    "Unwritable directory" line per page."""
    import nbformat

    from devtools import badsubmissions as bs
    from grading.course import generate_assignment

    root, student = lab.root, "honest_offline"
    generate_assignment(AID, root=root, release_dir=root / ".release")
    folder = root / "submitted" / student / AID
    folder.mkdir(parents=True)
    nbformat.write(bs.solved(root, AID), folder / f"{AID}.ipynb")
    page = new_tab
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    js_errors = labpage.watch_page(page, "formgrader")

    page.goto(lab.url("formgrader/manage_assignments"))
    page.locator("#main-table tr", has_text=AID).wait_for(timeout=lab_.RENDER_S * 1000)
    text = page.locator("body").inner_text()
    assert "does not exist" not in text and "not available" not in text, text[:2000]

    page.goto(lab.url(f"formgrader/manage_submissions/{AID}"))
    page.locator("#main-table tr", has_text=student).wait_for(timeout=lab_.RENDER_S * 1000)
    said = _press(page, student, "autograde", lab)
    assert "Successfully autograded" in said and "has changed" not in said, said

    page.goto(lab.url(f"formgrader/gradebook/{AID}/{AID}"))
    link = page.locator("#main-table tr", has_text=student).locator("td.name a")
    link.first.wait_for(timeout=lab_.RENDER_S * 1000)
    link.first.click()
    page.locator("#notebook-container").first.wait_for(timeout=lab_.RENDER_S * 1000)
    page.wait_for_load_state("networkidle")
    assert page.locator("#notebook-container math").count() > 0, "the submission view shows no typeset mathematics"
    off = sorted({u for u in requests if _off_the_machine(u)})
    assert not off, f"the formgrader's pages asked other machines for {off}"
    log = lab.proc.log_tail(200_000)
    assert "not serializable" not in log, "nbgrader's config dump warned on Manage Assignments"
    assert "Unwritable directory" not in log and "\n[C " not in log, \
        [ln for ln in log.splitlines() if ln.startswith("[C ") or "Unwritable" in ln][:5]
    assert not js_errors, f"the formgrader raised JavaScript errors: {js_errors}"
