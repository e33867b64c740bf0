"""A submission make grade could not grade is listed in the formgrader's Manual Grading, with why: nbgrader
lists only notebooks with a file in autograded/, so the grader writes a stand-in (grading/grade/merge.py)."""
import json

import pytest

from grading.course import nbgrader_api, scratch_course
from grading.grade import grade

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:.*not in session.*")]
AID = "01_branch_prediction"


def test_a_submission_that_failed_to_grade_is_in_manual_grading_with_its_reason(tmp_path):
    root = scratch_course(tmp_path / "course", [AID], release="generate")
    folder = root / "submitted" / "broken" / AID
    folder.mkdir(parents=True)
    (folder / f"{AID}.ipynb").write_text('{"cells": [')  # cut off while uploading
    folder = root / "submitted" / "renamed" / AID
    folder.mkdir(parents=True)
    (folder / "<img src=x onerror=alert(1)>.txt").write_text("not a notebook")
    results = {r.student: r for r in grade(root, only=[AID], workers=1, quiet=True, sandbox=False)}
    assert {r.status for r in results.values()} == {"failed"}

    listed = {s["student"]: s for s in nbgrader_api(root).get_notebook_submissions(AID, AID)}
    assert set(listed) == {"broken", "renamed"}, "Manual Grading must list every submission, graded or not"
    for student, why in (("broken", "not valid JSON"), ("renamed", "no 01_branch_prediction.ipynb")):
        assert listed[student]["score"] == 0
        nb = json.loads((root / "autograded" / student / AID / f"{AID}.ipynb").read_text())
        shown = "".join(nb["cells"][0]["outputs"][0]["text"])
        assert why in shown and f"submitted/{student}/{AID}/" in shown, shown
        # the reason, which may quote the student's file names, is a text output: the formgrader escapes it
        assert nb["cells"][0]["outputs"][0]["output_type"] == "stream"
