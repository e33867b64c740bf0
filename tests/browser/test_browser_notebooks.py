"""Every notebook in JupyterLab, in Chromium, as a learner meets it: Run All, then look.

For each assignment, the source notebook (solutions/) and the student copy (notebooks/):
every cell runs, every widget renders and draws its figure, every figure appears, no JavaScript
error, no Python error (in the student copy: only the NotImplementedError of unsolved
exercises, in cells tagged raises-exception, or Run All stops there: this is the only check of the
student copy's run; a headless run of it checked the same and was merged here); the main widget's slider is moved and its figure must change; a screenshot of the
widget, as it first draws, is saved as screenshots/<id>-<copy>.png. The student copy's Validate
button must run and report.

In the source copy the main widget's sliders (or dropdowns) are then moved with the keyboard, move
after move (steps and both ends), and every move must bring a new figure. How long each took, from the key press to
the new image in the page, is measured in the page and recorded with the phase timings (printed, and
in SPECLAB_TIMELINE's line as latency_ms): never asserted (`make bench`, section latency, holds it
to its goal).
"""
import time

import pytest

import labdriver as lab_
import labcells
import labpage
import labwidget
from grading.course import assignments

COPIES = {"source": "solutions", "student": "notebooks"}
# Two xdist groups, so that under `make test` two workers each open half of the notebooks, each with a JupyterLab
# and a Chromium of its own (session fixtures are per worker); on one worker they took ~14 minutes, mostly waiting
# on the page. A notebook's two copies share a group (its student copy is compared with its source's run). The cut
# balances the seconds measured per test (README, "What a run costs"): the first group also holds the planted
# faults, the formgrader and `make lab`.
SECOND_GROUP_FROM = "08"


def group(aid):
    return pytest.mark.xdist_group("browser-2" if aid[:2] >= SECOND_GROUP_FROM else "browser")


@pytest.mark.parametrize("copy", list(COPIES))
@pytest.mark.parametrize("aid", [pytest.param(aid, marks=group(aid)) for aid in assignments()])
def test_notebook_in_jupyterlab(aid, copy, lab, page, js_errors, source_runs, record_property):
    student = copy == "student"
    relpath = f"{COPIES[copy]}/{aid}/{aid}.ipynb"
    if not (lab.root / relpath).is_file():
        pytest.fail(f"{relpath} does not exist (student copies: `make release`)", pytrace=False)
    failure_shot = lab_.SCREENSHOTS / "failures" / f"{aid}-{copy}.png"
    failure_shot.unlink(missing_ok=True)  # never leave a stale one from an earlier run
    problems = labpage.Problems(f"{aid} ({copy} copy, {relpath}) in JupyterLab")
    seconds, t, latency = {}, time.perf_counter(), None

    def lap(phase):
        nonlocal t
        seconds[phase], t = round(time.perf_counter() - t, 1), time.perf_counter()

    try:
        labpage.open_notebook(page, lab, relpath)
        lap("open")
        labpage.run_all(page)
        lap("run all")
        cells = labcells.read_cells(page)
        labcells.check_cells(cells, student, problems,
                         source_cells=source_runs.get(aid) if student else None)
        if not student:
            source_runs[aid] = {c["index"]: c for c in cells}
        lap("check")
        ran_all = all(c["executionCount"] is not None for c in cells)
        widget = labwidget.main_widget(page)
        labwidget.screenshot(page, widget, f"{aid}-{copy}")  # as the author set it up, before the move
        labwidget.move_main_widget(page, problems, student, report_missing=ran_all, widget=widget)
        lap("slider")
        if not student and widget is not None and not problems:
            moves = labwidget.measure_latency(page, widget, min_moves=0)  # each move once: a check, not a bench
            latency = labwidget.latency_summary(moves)
            lap("latency")
            if not moves:
                problems.add("main widget", "none of its sliders or dropdowns could be moved with the keyboard")
            for m in moves:
                if m["ms"] is None:
                    problems.add("main widget", f"pressing {m['key']} on {m['control']!r} ({m['from']} -> "
                                                f"{m['to']}) brought no new figure within {lab_.REDRAW_S} s")
        if student:
            labpage.validate(page, problems, expect_failures=True)
            lap("validate")
    except Exception as err:  # a timeout or a page that never came up: say where it was
        problems.add("driver", f"{type(err).__name__}: {str(err)[:800]}")
    print(f"{aid} ({copy}) seconds: {seconds}")
    record_property("seconds", seconds)  # also in SPECLAB_TIMELINE's line for this test
    if latency:
        print(f"{aid} ({copy}) main widget, key press to new figure, ms: {latency}")
        record_property("latency_ms", latency)
    for text in js_errors:
        problems.add("browser", text)
    if problems:
        failure_shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(failure_shot), full_page=True)
        widget_shot = lab_.SCREENSHOTS / f"{aid}-{copy}.png"
        if widget_shot.exists():  # a failing notebook's widget is no picture for the README
            widget_shot.replace(failure_shot.with_name(f"{aid}-{copy}-widget.png"))
        pytest.fail(problems.report() + f"\n(window: screenshots/failures/{aid}-{copy}.png)", pytrace=False)
