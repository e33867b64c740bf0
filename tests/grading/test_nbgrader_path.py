"""nbgrader's own paths (`nbgrader autograde` and `generate_feedback` with the course's config, which is what
the formgrader's Autograde and Generate Feedback buttons run, through NbGraderAPI in the server's process)
grade as `make grade` does: the sandbox, the integrity scan, the notes (grading/nbgrader_steps.py); where
the sandbox cannot start they refuse and name `make grade`."""
import html
import json
import re

import nbformat
import pytest

from grading import reveal
from grading.kernels import sandbox
from grading.course import generate_assignment, nbgrader_api, release_notebook, scratch_course
from grading.grade.report import read_report

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:.*not in session.*")]
AID = "01_branch_prediction"
REVEAL = "Why it breaks, and the same mistake in a cache: a kept draft is trusted, $q \\ne p$."
needs_bwrap = pytest.mark.skipif(not sandbox.available()[0], reason="bubblewrap cannot start here")


def hostile_course(root):
    """A course with the released student copy of AID submitted by `hostile`, with a cell of its own that
    writes outside its folder, reads the gradebook, tampers with builtins; and a markdown cell with a script."""
    scratch_course(root, [AID], release="copy")
    source = nbformat.read(root / "solutions" / AID / f"{AID}.ipynb", as_version=4)
    explain = nbformat.v4.new_markdown_cell(REVEAL)   # a reveal the committed student copy does not point to
    explain.metadata["tags"] = ["reveal"]
    source.cells.append(explain)
    nbformat.write(source, root / "solutions" / AID / f"{AID}.ipynb")
    generate_assignment(AID, root=root, release_dir=root / ".release")
    nb = nbformat.read(release_notebook(AID, root), as_version=4)
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
    nb.cells.insert(3, nbformat.v4.new_markdown_cell('<script>window.ATTACK = 1</script><img src="x" '
                                                     'onerror="window.ATTACK = 2">'))
    folder = root / "submitted" / "hostile" / AID
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{AID}.ipynb")
    reveal.record(folder, diagnose_passed=False)   # make check REVEAL=1 before the Diagnose passed
    return root


@needs_bwrap
def test_autograde_runs_the_judge_in_a_box_of_its_own(tmp_path, monkeypatch):
    """The formgrader's Autograde (NbGraderAPI in the server's process, the course's config) executes the
    submission and its hidden tests in a fresh sandbox of their own (grading/judge/box.py), as another user, never
    in the server's process."""
    from grading.judge import box

    seen = []
    real = box.run

    def watched(*args, **kwargs):
        outputs, verdict = real(*args, **kwargs)
        seen.append(verdict)
        return outputs, verdict

    monkeypatch.setattr(box, "run", watched)
    root = hostile_course(tmp_path / "course")
    graded = nbgrader_api(root).autograde(AID, "hostile")
    assert graded["success"], graded.get("error") or graded.get("log")
    assert len(seen) == 1 and seen[0]["ok"], seen
    assert seen[0]["uid"] != 0, "the judge ran as root"  # a root grader's judge: an unused user id of its own


@needs_bwrap
def test_autograde_and_feedback_run_the_sandbox_the_scan_and_the_notes(tmp_path):
    root = hostile_course(tmp_path / "course")
    api = nbgrader_api(root)
    graded = api.autograde(AID, "hostile")
    assert graded["success"], graded.get("error") or graded.get("log")
    assert not (root / "PWNED").exists(), "the submission wrote outside its folder"
    nb = json.loads((root / "autograded" / "hostile" / AID / f"{AID}.ipynb").read_text())
    shown = json.dumps(nb["cells"][2]["outputs"])
    assert "SQLite format" not in shown and shown.count("refused:") == 2, shown
    assert "pass  # removed by the integrity scan" in "".join(nb["cells"][2]["source"])
    tests = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")
             and not c["metadata"]["nbgrader"].get("solution")]
    assert tests and all(c["execution_count"] is None for c in tests), "the tests ran in the kernel, not in the judge"

    row = read_report(root)[(AID, "hostile")]
    assert row["flagged"] == "1" and "integrity:" in row["notes"] and "builtins" in row["notes"], row
    assert reveal.SEEN_EARLY in row["notes"] and "not used when grading" not in row["notes"], row
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assert gb.find_submission_notebook(AID, AID, "hostile").flagged, "the formgrader would not mark it"

    made = api.generate_feedback(AID, "hostile")
    assert made["success"], made.get("error") or made.get("log")
    page = (root / "feedback" / "hostile" / AID / f"{AID}.html").read_text()
    assert not re.search(r"<script[^>]*>[^<]*ATTACK", page) and "onerror" not in page  # its text may stay, inert
    assert "Grading notes" in page and "builtins" in html.unescape(page)
    assert '<div class="speclab-reveal">' in page and "the same mistake in a cache" in page, "the source's reveal"


def test_without_the_sandbox_it_refuses_and_names_make_grade(tmp_path, monkeypatch):
    root = hostile_course(tmp_path / "course")
    sandbox.available.cache_clear()
    monkeypatch.setattr(sandbox, "available", lambda: (False, "bwrap is not installed (a test says so)"))
    graded = nbgrader_api(root).autograde(AID, "hostile")
    said = (graded.get("error") or "") + (graded.get("log") or "")
    assert not graded["success"]
    assert "make grade" in said and "bwrap is not installed (a test says so)" in said, said
    assert not (root / "PWNED").exists()
    ran = root / "autograded" / "hostile" / AID / f"{AID}.ipynb"
    assert not ran.exists() or "refused:" not in ran.read_text(), "the student's code ran"


def test_stock_config_is_nbgrader_without_the_course_steps(tmp_path):
    """For a bench's or a test's "stock" comparison: nbgrader's own steps, none of the course's."""
    from nbgrader.converters import Autograde

    from grading.nbgrader_steps import AUTOGRADE, stock_config

    api = nbgrader_api(tmp_path, stock_config(tmp_path))
    steps = Autograde(coursedir=api.coursedir, parent=api).autograde_preprocessors
    assert [s.__name__ for s in steps][:1] == ["Execute"] and not set(steps) & set(AUTOGRADE[:2])
    course = Autograde(coursedir=nbgrader_api(tmp_path).coursedir, parent=nbgrader_api(tmp_path))
    assert course.autograde_preprocessors == AUTOGRADE
