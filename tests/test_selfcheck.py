"""The self-check grades a learner's own copy, explains each failure, and changes nothing."""
import hashlib
import re

import nbformat

from grading import selfcheck
from grading.course import release_notebook, source_notebook

AID = "01_branch_prediction"


def half_done(path):
    """A student copy with greedy_decode solved, speculative_greedy wrong, the rest untouched."""
    src = nbformat.read(source_notebook(AID), as_version=4)
    solved = {c.metadata.nbgrader.grade_id: c.source for c in src.cells
              if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(release_notebook(AID), as_version=4)
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "greedy_decode":
            c.source = solved[gid]
        if gid == "speculative_greedy":
            c.source = solved[gid].replace("        else:\n            tokens.append(int(np.argmax(P[prefix])))\n", "")
        if gid == "drift":
            c.source = "import numpy\nnumpy.isclose = lambda *a, **k: True\n" + solved[gid]
    nbformat.write(nb, path)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_half_done_notebook_gets_a_per_part_report(tmp_path, capsys):
    work = tmp_path / "work" / AID
    work.mkdir(parents=True)
    mine = work / f"{AID}.ipynb"
    half_done(mine)
    before = digest(mine)

    assert selfcheck.main([AID, "--work", str(tmp_path / "work")]) == 0
    out = capsys.readouterr().out
    assert digest(mine) == before, "the self-check must never modify the learner's notebook"
    assert re.search(r"test_greedy_decode\s+2 / 2\s+ok", out)
    assert re.search(r"test_speculative_greedy\s+0 / 3\s+AssertionError: .*bonus", out), out
    assert re.search(r"test_trusting_greedy\s+0 / 2\s+not yet solved", out)
    assert re.search(r"test_drift\s+2 / 2\s+ok", out), "an honest answer keeps its points, graded on its own"
    assert "integrity: cell" in out and "numpy.isclose" in out, "tampering is reported with cell and line"
    assert f"{AID}: 4 / 9 points" in out
    src = nbformat.read(source_notebook(AID), as_version=4).cells
    hidden = "\n".join(re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END", "\n".join(c.source for c in src), re.S))
    for line in hidden.splitlines():
        if len(line.strip()) > 25 and not line.strip().startswith(("check_equal(", '"')):
            assert line.strip() not in out, f"the report shows hidden test code: {line.strip()}"


def test_progress_table_over_the_course(tmp_path, capsys):
    assert selfcheck.main(["--work", str(tmp_path / "empty")]) == 0
    out = capsys.readouterr().out
    assert "course progress" in out
    assert out.count("not started") >= 2 * len(selfcheck.assignments())


def test_notebook_names_resolve():
    assert selfcheck.resolve("1") == selfcheck.resolve("01") == AID
