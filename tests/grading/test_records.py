"""What a submission can put into the grader's records (issue 36) and how the records read (issue 39), without
grading: notes made printable and bounded (grading/grade/notes.py, intake.Result), a notebook that is not
writable text, a pasted test cell, a timestamp.txt that is no date (intake.py), the grading report and
grades.csv (report.py), whatever an earlier run stored. The same attacks graded in a class run:
test_grading_class.py.
"""
import csv
import json
import shutil

import nbformat
import pytest

from grading.course import load_config
from grading.grade import report, write_records
from grading.grade.intake import MAX_NOTES, Result, bad_timestamp, drop_copies, read_notebook
from grading.grade.notes import MAX_NOTE_CHARS, printable

AID = "01_branch_prediction"
ESCAPES = "\x1b[2J\x1b[H\x1b]0;grading done\x07graded 33 of 33, none flagged\x1b[8m"


def is_printable(text):
    return text.isprintable() and "\x1b" not in text


def test_printable_replaces_controls_and_bounds_length():
    line = printable(ESCAPES + "\n\u202e\ud800 é 漢字")
    assert is_printable(line) and "\\x1b[2J" in line and "\\u202e" in line and "\\ud800" in line
    assert "é 漢字" in line, "text in any script is kept"
    long = printable("E" * 140_000)
    assert len(long) == MAX_NOTE_CHARS and "140,000 characters" in long
    assert printable("short", 10) == "short"
    line.encode("utf-8")  # no surrogate is left to fail a file or a terminal


def test_notes_are_printable_bounded_and_the_failure_comes_first():
    res = Result("s", AID)
    for i in range(3 * MAX_NOTES):
        res.note(f"note {i} {ESCAPES}")
    res.fail("E" * 140_000)
    assert len(res.notes) == MAX_NOTES and res.notes[0].startswith("EEE")
    assert res.notes[-1] == f"{2 * MAX_NOTES + 2} more notes left out"
    assert all(is_printable(n) and len(n) <= MAX_NOTE_CHARS for n in res.notes)
    assert is_printable(res.why) and len(res.why) <= 300


def test_a_lone_surrogate_is_replaced_and_said(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x \ud800 y")])
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=True))
    said = []
    read, why = read_notebook(path, said)
    assert why is None and "surrogate" in said[0]
    nbformat.write(read, tmp_path / "back.ipynb")  # nbgrader writes it back: it must be writable text


def test_a_pasted_cell_is_graded_once():
    test = nbformat.v4.new_code_cell("assert f() == 1")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "t1",
                                 "schema_version": 3}
    copy = nbformat.from_dict(json.loads(json.dumps(test)))
    nb = nbformat.v4.new_notebook(cells=[test, copy])
    note = drop_copies(nb)
    assert "t1" in note and "more than once" in note
    assert "nbgrader" in nb.cells[0].metadata and "nbgrader" not in nb.cells[1].metadata
    assert drop_copies(nb) is None


@pytest.mark.parametrize("text,ok", [("2026-12-01 17:00:00.123456 UTC", True), ("2026-12-01T17:00:00", True),
                                     ("yesterday, honestly", False), ("", False), (ESCAPES, False)])
def test_a_timestamp_that_is_not_a_date_is_said(tmp_path, text, ok):
    path = tmp_path / "timestamp.txt"
    path.write_text(text)
    why = bad_timestamp(path)
    assert (why is None) == ok
    assert ok or (is_printable(why) and "not a date" in why)


@pytest.fixture
def course(released, tmp_path):
    """A course with notebook 01 in its gradebook, two students: `handed_in` with a submission, `absent`
    without."""
    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    shutil.copytree(released(AID), root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_student("handed_in")
        gb.update_or_create_student("absent")
        gb.update_or_create_submission(AID, "handed_in")
    return root


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_records_are_written_whatever_an_earlier_run_stored(course, capsys):
    """A grading report stored by an earlier run (an unbounded note, a field past the csv module's limit,
    escapes, bytes that are not UTF-8) neither stops this run nor reaches grades.csv as it was."""
    path = course / report.REPORT
    path.parent.mkdir(parents=True)
    hostile = "E" * 140_000 + ESCAPES
    path.write_bytes(("student,assignment,status,score,max_score,flagged,seconds,notes\n"
                      f"handed_in,{AID},graded,9,9,1,1.0,{hostile}\n").encode() + b"\xff\xfe,x\n")
    res = Result("absent", AID)
    res.note(f"cell X raised {hostile}", flag=True)
    assert write_records(course, [res], load_config(course))
    rows = {r["student_id"]: r for r in read_csv(course / "grades.csv")}
    assert all(is_printable(v) for row in rows.values() for v in row.values())
    assert len(rows["handed_in"]["review"]) <= 20_000
    stored = read_csv(path)
    assert {r["student"] for r in stored} >= {"handed_in", "absent"}


def test_an_unreadable_report_is_set_aside_and_a_new_one_written(course, monkeypatch):
    path = course / report.REPORT
    path.parent.mkdir(parents=True)
    path.write_text("student,assignment\n\"cut short")
    assert write_records(course, [Result("handed_in", AID)], load_config(course)), "a row cut short is dropped"
    assert [r["student"] for r in read_csv(path)] == ["handed_in"]

    def unreadable(*args, **kwargs):
        raise csv.Error("field larger than field limit (16777216)")
    monkeypatch.setattr(report.csv, "DictReader", unreadable)
    assert write_records(course, [Result("absent", AID)], load_config(course))
    monkeypatch.undo()
    assert path.with_name(path.name + ".unreadable").is_file()
    assert [r["student"] for r in read_csv(path)] == ["absent"]


def test_a_missing_submission_is_empty_in_grades_csv_and_counted_apart(course):
    write_records(course, [], load_config(course))
    rows = {r["student_id"]: r for r in read_csv(course / "grades.csv")}
    assert rows["absent"]["score"] == rows["absent"]["raw_score"] == "", "not submitted is not 0.0"
    assert rows["absent"]["review"] == report.NOT_SUBMITTED
    assert float(rows["handed_in"]["score"]) == 0.0 and rows["handed_in"]["review"] == ""
    assert report.missing(course) == ({AID: 1}, [])
    text = report.summary([], 1.0, 1, course, missing={AID: 1})
    assert f"not submitted (empty in grades.csv, not 0): {AID} by 1 student(s)" in text


def test_the_summary_and_progress_line_are_printable(tmp_path):
    import io

    res = Result(f"st{ESCAPES}", AID)
    res.note(ESCAPES, flag=True)
    res.fail(ESCAPES)
    text = report.summary([res], 1.0, 1, tmp_path)
    assert all(is_printable(line) for line in text.splitlines())
    stream = io.StringIO()
    report.Progress(1, stream=stream).step(res)
    assert is_printable(stream.getvalue().strip())
