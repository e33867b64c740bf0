"""The self-check grades a learner's own copy, explains each failure, and changes nothing; it finds the
course from the folder it runs in, not from where the package is installed.

That it gives `make grade`'s score on every bad-submission kind is tested in test_grading_class.py: its
report of each submission the class grading graded, and three kinds graded through the self-check itself.
"""
import hashlib
import re
import shutil

import nbformat
import pytest

from devtools import catalog
from devtools.coursework import fill, leaked_hidden_lines
from grading import cells, selfcheck
from grading.course import NoCourse, course_root, release_notebook, scratch_course, source_notebook

AID = "01_branch_prediction"
TAMPER = "import numpy\nnumpy.isclose = lambda *a, **k: True\n"


def exercises():
    """[(grade_id of the solution cell, its source, {test grade_id: points})], in notebook order: each
    exercise with the graded tests that follow it."""
    out = []
    for c in nbformat.read(source_notebook(AID), as_version=4).cells:
        if cells.is_solution(c):
            out.append((cells.grade_id(c), c.source, {}))
        elif cells.is_graded(c) and out:
            out[-1][2][cells.grade_id(c)] = cells.points(c)
    return out


def half_done(path):
    """A student copy with the first exercise solved, the second wrong (its first catalogued mistake), the
    third solved with a line that tampers with numpy, the rest untouched."""
    (first, right1, _), (second, right2, _), (third, right3, _) = exercises()[:3]
    func = re.search(r"^def (\w+)", right2, re.M).group(1)
    wrong, _ = catalog.split(next(iter(catalog.load()[AID][func]["wrong"].values())))
    answers = {first: right1, second: wrong, third: TAMPER + right3}
    nbformat.write(fill(nbformat.read(release_notebook(AID), as_version=4), answers), path)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def a_course(tmp_path):
    """A course folder outside the checkout: notebook 01's source and student copy."""
    return scratch_course(tmp_path / "course", [AID], release="copy")


def test_half_done_notebook_gets_a_per_part_report(tmp_path, capsys, monkeypatch):
    """Run in a course folder outside the checkout, from its work/ folder, as an installed speclab-check is."""
    monkeypatch.delenv("SPECLAB_COURSE_ROOT", raising=False)
    root = a_course(tmp_path)
    work = root / "work" / AID
    work.mkdir(parents=True)
    mine = work / f"{AID}.ipynb"
    half_done(mine)
    before = digest(mine)
    monkeypatch.chdir(work)

    assert selfcheck.main([AID]) == 0
    out = capsys.readouterr().out
    assert digest(mine) == before, "the self-check must never modify the learner's notebook"
    (_, _, tests1), (_, _, tests2), (_, _, tests3), *rest = exercises()
    for gid, points in {**tests1, **tests3}.items():  # right, and right with a tampering line ignored
        assert re.search(rf"{gid}\s+{points} / {points}\s+ok", out), f"{gid} must keep its points:\n{out}"
    assert any(re.search(rf"{gid}\s+0 / {points}\s+AssertionError: ", out) for gid, points in tests2.items()), (
        f"a wrong answer's test must say why it failed:\n{out}")
    for _, _, tests in rest:
        for gid, points in tests.items():
            assert re.search(rf"{gid}\s+0 / {points}\s+not yet solved", out), out
    assert "integrity: cell" in out and "numpy.isclose" in out, "tampering is reported with cell and line"
    parts = [(float(a), float(b)) for a, b in re.findall(r"^  \w+\s+([\d.]+) / ([\d.]+)\s", out, re.M)]
    assert f"{AID}: {sum(a for a, _ in parts):g} / {sum(b for _, b in parts):g} points" in out
    # an assertion's message (a check_equal call's, a string) is what the report rightly quotes
    leaked = leaked_hidden_lines(out, nbformat.read(source_notebook(AID), as_version=4), longer_than=25,
                                 shown=("check_equal(", '"'))
    assert not leaked, f"the report shows hidden test code: {leaked}"


def test_a_line_per_graded_part_as_it_starts(tmp_path, capsys):
    """make check says where it is while the notebook runs: one line per graded part, in order (on stderr;
    the report is stdout)."""
    root = a_course(tmp_path)
    mine = tmp_path / "mine.ipynb"
    shutil.copyfile(release_notebook(AID), mine)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPECLAB_COURSE_ROOT", str(root))
        assert selfcheck.main([AID, "--file", str(mine)]) == 0
    captured = capsys.readouterr()
    ids = selfcheck.graded_parts(root, AID)
    shown = re.findall(rf"^  {AID}: part (\d+)/(\d+) (\w+) \(at \d+ s\)$", captured.err, re.M)
    assert ids and shown == [(str(i + 1), str(len(ids)), gid) for i, gid in enumerate(ids)], captured.err
    assert "part" not in captured.out, "progress goes to stderr, the report to stdout"


def test_progress_table_over_the_course(tmp_path, capsys):
    assert selfcheck.main(["--work", str(tmp_path / "empty")]) == 0
    out = capsys.readouterr().out
    assert "course progress" in out
    assert out.count("not started") >= 2 * len(selfcheck.assignments())
    n = len(selfcheck.assignments())
    assert f"checking 0 of {n} notebooks ({n} not started) ..." in out, "not 'the others', when there are none"


def test_notebook_names_resolve():
    assert selfcheck.resolve("1") == selfcheck.resolve("01") == AID


def test_the_course_is_found_from_where_it_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("SPECLAB_COURSE_ROOT", raising=False)
    root = a_course(tmp_path)
    (root / "work" / AID).mkdir(parents=True)
    assert course_root(root) == root and course_root(root / "work" / AID) == root
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    with pytest.raises(NoCourse, match="SPECLAB_COURSE_ROOT"):
        course_root(nowhere)
    monkeypatch.chdir(nowhere)
    assert selfcheck.main([AID]) == 2
    assert "no course folder" in capsys.readouterr().err, "a clear message, not a traceback"
    monkeypatch.setenv("SPECLAB_COURSE_ROOT", str(root))
    assert course_root() == root
    monkeypatch.setenv("SPECLAB_COURSE_ROOT", str(nowhere))
    with pytest.raises(NoCourse, match="not a course folder"):
        course_root()
