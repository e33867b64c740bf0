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


# ----------------------------------------------------------------------------- the reveal (grading/reveal.py)

REVEAL = ("**Why.** A draft kept on trust is wrong exactly where the draft's argmax leaves the target's, "
          "$\\arg\\max_x q(x) \\ne \\arg\\max_x p(x)$, and every token after it inherits the damage.")


def revealed_course(tmp_path):
    """A course folder with notebook 01's source carrying a reveal after its Diagnose's test, and the student
    copy nbgrader's generate_assignment makes of it (the pointer in the reveal's place)."""
    from grading import reveal

    source = nbformat.read(source_notebook(AID), as_version=4)
    at = next(i for i, c in enumerate(source.cells) if cells.grade_id(c) == reveal.diagnose_parts(source)[-1]) + 1
    cell = nbformat.v4.new_markdown_cell(REVEAL)
    cell.metadata["tags"] = ["reveal"]
    source.cells.insert(at, cell)
    return scratch_course(tmp_path / "course", [AID], sources={AID: source}, release="generate")


def result_with(root, diagnose_passed):
    """A self-check result for notebook 01 with every part solved but the Diagnose, which passed or scored 0."""
    from grading import reveal

    source = nbformat.read(source_notebook(AID, root), as_version=4)
    diagnose = reveal.diagnose_parts(source)
    parts = [(gid, pts if diagnose_passed or gid not in diagnose else 0, pts, "")
             for gid, pts in cells.graded_points(source).items()]
    return {"aid": AID, "parts": parts}


def test_the_reveal_waits_for_the_diagnose_or_is_asked_for_and_recorded(tmp_path, capsys):
    from grading import reveal

    root = revealed_course(tmp_path)
    mine = root / "work" / AID
    selfcheck.show_reveal(root, result_with(root, False), folder=mine)
    out = capsys.readouterr().out
    assert "A draft kept on trust" not in out and "make check NB=01 REVEAL=1" in out and not mine.exists()

    selfcheck.show_reveal(root, result_with(root, True), folder=mine)
    out = capsys.readouterr().out
    assert "the reveal of 01_branch_prediction ==" in out and "A draft kept on trust" in out
    assert "$\\arg\\max_x q(x) \\ne \\arg\\max_x p(x)$" in out and "**" not in out, "plain text, maths as TeX"
    assert max(map(len, out.splitlines())) <= 92 and not mine.exists(), "wrapped; a passed Diagnose is not recorded"

    selfcheck.show_reveal(root, result_with(root, False), asked=True, folder=mine)
    out = capsys.readouterr().out
    assert "A draft kept on trust" in out and "before your Diagnose passed" in out
    assert reveal.seen_note(mine).startswith(reveal.SEEN_EARLY)


def test_an_asked_for_reveal_reaches_the_grader_through_nbgrader_submit(tmp_path, capsys, monkeypatch):
    """make check NB=01 REVEAL=1 on an untouched copy: the reveal is shown and recorded beside the notebook; the
    folder handed in as nbgrader submit copies it carries the record; make grade flags it in its report and
    grades.csv, and the feedback page shows the reveal where its pointer was."""
    import csv

    from nbgrader.coursedir import CourseDirectory
    from nbgrader.utils import ignore_patterns

    from grading import reveal
    from grading.kernels import sandbox
    from grading.grade import grade

    root = revealed_course(tmp_path)
    work = root / "work" / AID
    work.mkdir(parents=True)
    shutil.copyfile(release_notebook(AID, root), work / f"{AID}.ipynb")
    monkeypatch.setenv("SPECLAB_COURSE_ROOT", str(root))
    assert selfcheck.main([AID, "--reveal"]) == 0
    out = capsys.readouterr().out
    assert "A draft kept on trust" in out and (work / reveal.RECORD).is_file()

    course = CourseDirectory()
    handed_in = root / "submitted" / "ann" / AID
    shutil.copytree(work, handed_in, ignore=ignore_patterns(exclude=course.ignore, include=course.include,
                                                            max_file_size=course.max_file_size))
    assert (handed_in / reveal.RECORD).is_file(), "nbgrader submit's copy carries the record"
    [res] = grade(root, workers=1, quiet=True, sandbox=sandbox.available()[0])
    assert any(n.startswith(reveal.SEEN_EARLY) for n in res.notes) and res.flagged, res.notes
    assert not any(reveal.RECORD in n for n in res.notes), "the record is not a stray file"
    with open(root / "grades.csv", newline="") as f:
        [row] = [r for r in csv.DictReader(f) if r["student_id"] == "ann"]
    assert reveal.SEEN_EARLY in row["review"]
    page = (root / "feedback" / "ann" / AID / f"{AID}.html").read_text()
    assert '<div class="speclab-reveal">' in page and "A draft kept on trust" in page
    assert "records that you asked" not in page, "the pointer is replaced"


def test_the_reveal_record_is_read_as_the_students_file(tmp_path):
    """The record is the student's: a reveal asked for after the Diagnose passed is no note; one that is not the
    self-check's record (edited, garbage, huge) is flagged for a person, never a crash."""
    from grading import reveal

    assert reveal.seen_note(tmp_path) is None, "no record, no note"
    reveal.record(tmp_path, diagnose_passed=True)
    assert reveal.seen_note(tmp_path) is None
    reveal.record(tmp_path, diagnose_passed=False, when="2026-12-01T10:00:00Z")
    assert reveal.seen_note(tmp_path) == f"{reveal.SEEN_EARLY} (make check REVEAL=1, first at 2026-12-01T10:00:00Z)"
    for garbage in (b"\xff\xfe", b'{"revealed": 3}', b"[1, 2]", b"x" * (reveal.MAX_RECORD_BYTES + 1)):
        (tmp_path / reveal.RECORD).write_bytes(garbage)
        assert "could not be read" in reveal.seen_note(tmp_path)


def test_the_reveal_as_terminal_text():
    from grading.reveal import as_terminal_text

    text = as_terminal_text("## Why\n\nA **long** paragraph " + "word " * 40 + "with $\\frac{a}{b} + c + d$ kept and "
                            "[a link](https://example.org).\n\n* an item " + "item " * 30 + "\n\n```python\nx = 1\n```",
                            width=60)
    lines = text.splitlines()
    assert lines[0] == "Why" and all(len(ln) <= 60 for ln in lines), text
    assert any("$\\frac{a}{b} + c + d$" in ln for ln in lines), "a formula is never broken across lines"
    assert "**" not in text and "a link (https://example.org)" in text
    assert any(ln.startswith("  item") for ln in lines), "a list item's lines hang under its text"
    assert "    x = 1" in lines


def test_make_check_reveal_variable():
    import subprocess

    from grading.course import REPO

    def dry(*args):
        return subprocess.run(["make", "-n", "-o", "setup", "-o", ".venv/.installed", "check", *args], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout
    assert "grading.selfcheck 04 --reveal" in dry("NB=04", "REVEAL=1")
    assert "--reveal" not in dry("NB=04") and "--reveal" not in dry("NB=04", "REVEAL=0")
