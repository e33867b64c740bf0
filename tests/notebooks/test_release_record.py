"""notebooks/ records the source each student copy was generated from (grading/release.py): a source changed
since the last `make release`, even only in its hidden tests, which leaves the student copy as it was, fails
here until the copies are regenerated and committed."""
import shutil

from grading import release
from grading.course import REPO, assignments, source_notebook


def test_every_student_copy_was_generated_from_its_source_as_it_is():
    want = {str(source_notebook(aid).relative_to(REPO)): release.digest(source_notebook(aid)) for aid in assignments()}
    stale = sorted(name for name, sha in want.items() if release.recorded().get(name) != sha)
    assert not stale, f"sources changed since the last `make release` (run it and commit notebooks/): {stale}"


def test_a_changed_source_is_seen_until_it_is_recorded_again(tmp_path):
    aid = assignments()[0]
    src = source_notebook(aid, tmp_path)
    src.parent.mkdir(parents=True)
    shutil.copy(source_notebook(aid), src)
    (tmp_path / "notebooks").mkdir()
    release.record([aid], tmp_path)
    name = str(src.relative_to(tmp_path))
    assert release.recorded(tmp_path) == {name: release.digest(src)}
    src.write_bytes(src.read_bytes().replace(b"BEGIN HIDDEN TESTS", b"BEGIN HIDDEN TESTS ", 1))
    assert release.recorded(tmp_path)[name] != release.digest(src)
    release.record([aid], tmp_path)
    assert release.recorded(tmp_path)[name] == release.digest(src)
