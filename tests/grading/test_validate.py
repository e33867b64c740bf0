"""Validate (JupyterLab's button, `nbgrader validate`) with the course's config: each failure's message first, the
test's source after it (grading/validate.py). nbgrader's dialog draws a failed cell's "source" first, as text,
then its "error": the message must be in "source"."""
import io
import shutil

from grading.course import load_config, release_notebook
from grading.validate import TEST_HEADING

AID = "02_acceptance_rule"


def test_a_failure_shows_its_message_before_the_test(tmp_path):
    from nbgrader.validator import Validator

    mine = tmp_path / f"{AID}.ipynb"
    shutil.copyfile(release_notebook(AID), mine)   # untouched: every visible test fails, not yet solved
    validator = Validator(config=load_config())    # the course config, as the Validate handler loads it
    failed = validator.validate(str(mine))["failed"]
    first = failed[0]
    assert first["source"].splitlines()[-1].startswith("NotImplementedError"), first["source"]
    assert "def " not in first["source"] and "check_" not in first["source"], "the message alone, no test code"
    assert first["error"].startswith(TEST_HEADING) and "accept_prob" in first["error"], "the test, after it"
    validator.stream = out = io.StringIO()
    validator.validate_and_print(str(mine))
    text = out.getvalue()
    assert text.index("NotImplementedError") < text.index(TEST_HEADING), text[:600]
