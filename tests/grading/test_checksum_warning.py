"""No tampering warning on honest work, on any path (issue 45; nbgrader issue 1961): nbgrader's OverwriteCells
compared a released test cell with the checksum of its source, hidden tests included, and warned
"Attribute 'checksum' for cell test_... has changed!" on every honest submission. grading/checksums.py.

SLOW: `nbgrader autograde` by hand with the course's config (the formgrader's Autograde runs the same), two
submissions of notebook 01.
"""
import shutil

import nbformat
import pytest

from devtools import badsubmissions as bs
from grading.cells import is_locked, is_test
from grading.checksums import released_source
from grading.course import nbgrader, release_notebook, source_notebook

AID = "01_branch_prediction"
WARNING = "Attribute 'checksum' for cell"


def submit(root, student, nb):
    folder = root / "submitted" / student / AID
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{AID}.ipynb")


def test_released_source_is_what_the_student_copy_holds(released):
    root = released(AID)
    source = {c.metadata.nbgrader["grade_id"]: c for c in nbformat.read(source_notebook(AID, root), 4).cells
              if is_locked(c)}
    release = [c for c in nbformat.read(release_notebook(AID, root), 4).cells if is_test(c)]
    hidden = [c for c in release if source[c.metadata.nbgrader["grade_id"]].source != c.source]
    assert hidden, "01 has test cells with hidden tests"
    for c in release:
        assert released_source(source[c.metadata.nbgrader["grade_id"]].source) == c.source


def test_autograde_by_hand_warns_on_an_edited_test_cell_only(released, tmp_path):
    """Seen failing before grading/checksums.py: the honest submission drew seven checksum warnings."""
    root = shutil.copytree(released(AID), tmp_path / "course")
    submit(root, "honest", bs.solved(root, AID))
    edited = bs.solved(root, AID)
    cell = next(c for c in edited.cells if is_test(c))
    cell.source += "\nassert True  # a student's edit"
    submit(root, "edited", edited)
    logs = {}
    for student in ("honest", "edited"):
        run = nbgrader("autograde", AID, "--student", student, "--force", root=root, capture=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        logs[student] = run.stdout + run.stderr
    assert WARNING not in logs["honest"], [ln for ln in logs["honest"].splitlines() if WARNING in ln]
    gid = cell.metadata.nbgrader["grade_id"]
    assert f"{WARNING} {gid} has changed" in logs["edited"]
    assert sum(WARNING in ln for ln in logs["edited"].splitlines()) == 1


pytestmark = [pytest.mark.filterwarnings("ignore:.*not in session.*")]
