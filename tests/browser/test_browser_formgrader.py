"""The instructor's side: nbgrader's formgrader, served by the same JupyterLab, lists every assignment."""
import pytest

import labdriver as lab_
import labpage
from grading.course import assignments

# With `pytest -n 2 --dist loadgroup`, every browser test runs on one worker, sharing one server.
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
