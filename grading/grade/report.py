"""Reporting: the progress line, the summary, autograded/grading-report.csv (one row per submission, kept
across runs), and grades.csv through nbgrader's export with a plugin that adds the `review` column.

`nbgrader export` run by hand gives the same grades.csv: grading/nbgrader_config.py names the plugin.
"""
import csv
import sys
import time
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin
from traitlets import Unicode

from .strays import NOT_GRADED
from .notes import printable

REPORT = Path("autograded") / "grading-report.csv"
REPORT_FIELDS = ["student", "assignment", "status", "score", "max_score", "flagged", "seconds", "notes"]
MAX_NOTES = 6
NOT_SUBMITTED = "not submitted"   # grades.csv's review column for a student with no submission (scores empty)


class Progress:
    def __init__(self, total, stream=None, quiet=False):
        # sys.stderr looked up now, not when this module was imported: whoever imported it first may
        # have had sys.stderr replaced then (pytest's capsys), by a stream closed since
        stream = sys.stderr if stream is None else stream
        self.total, self.done, self.stream, self.quiet = total, 0, stream, quiet
        self.start = time.perf_counter()
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def step(self, res):
        self.done += 1
        if self.quiet:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.total - self.done)
        width = 30
        bar = "#" * int(width * self.done / self.total)
        mark = verdict(res)
        line = (f"[{bar:<{width}}] {self.done}/{self.total}  {elapsed:5.0f} s, ~{left:4.0f} s left  "
                f"{printable(res.student, 80)} {printable(res.aid, 80)}: {res.score:g}/{res.max_score:g} {mark}")
        if self.tty:
            self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def verdict(res):
    """A submission in a word or two for its progress line: a score that hides errors is not "ok"."""
    if res.status != "graded":
        return "FAILED" if res.status == "failed" else res.status
    if res.flagged:
        return "flagged"
    errors = sum(" raised " in n for n in getattr(res, "notes", ()))
    return f"errors: {errors}, see feedback" if errors else "ok"


def summary(results, seconds, workers, root, sandbox=None, missing=None):
    """The lines make grade prints at the end. Every name and note in them is printable (notes.printable).
    missing: ({assignment: number of students in the gradebook with no submission of it}, [assignments the
    gradebook holds that are not counted]), as missing() returns, or a dict of the first alone."""
    strays = [r for r in results if r.status == NOT_GRADED]
    results = [r for r in results if r.status != NOT_GRADED]
    graded = [r for r in results if r.status == "graded"]
    failed = [r for r in results if r.status == "failed"]
    flagged = [r for r in results if r.flagged]
    rate = len(results) / seconds * 60 if seconds else 0
    lines = [f"graded {len(graded)} of {len(results)} submissions in {seconds:.0f} s with {workers} worker(s) "
             f"({rate:.1f} per minute)"]
    if strays:
        lines[0] += f"; {len(strays)} more item(s) under submitted/ are not submissions (below)"
    if sandbox is not None:
        lines.append("every kernel ran in the sandbox (bubblewrap: grading/kernels/sandbox.py)" if sandbox else
                     "the kernels ran WITHOUT the sandbox (--no-sandbox): as you, with your files and network")

    def who(r):
        return f"{printable(r.student, 80)} {printable(r.aid, 80)}"
    if failed:
        lines.append(f"failed to grade ({len(failed)}; scored 0 and flagged):")
        lines += [f"  {who(r)}: {printable(r.why, 300)}" for r in failed]
    if flagged:
        lines.append(f"flagged for review ({len(flagged)}):")
        for r in flagged:
            lines.append(f"  {who(r)} ({r.score:g}/{r.max_score:g}): " +
                         "; ".join(printable(n) for n in r.notes[:MAX_NOTES]))
    if strays:
        lines.append(f"not graded ({len(strays)} under submitted/; each is a row of the report):")
        lines += [f"  {printable(r.why, 400)}" for r in strays]
    missing, uncounted = missing if isinstance(missing, tuple) else (missing, [])
    if missing and any(missing.values()):
        lines.append("not submitted (empty in grades.csv, not 0): " +
                     ", ".join(f"{printable(aid, 80)} by {n} student(s)" for aid, n in sorted(missing.items()) if n))
    if uncounted:
        lines.append(f"not counted in grades.csv (released, but nobody handed it in and it has no due date): "
                     f"{', '.join(printable(a, 80) for a in uncounted)} (grading/README.md: which notebooks count)")
    lines.append(f"feedback in {Path(root) / 'feedback'}, scores in {Path(root) / 'grades.csv'}, "
                 f"notes per submission in {Path(root) / REPORT}")
    return "\n".join(lines)


def read_report(root, set_aside=False):
    """{(assignment, student): row} of autograded/grading-report.csv, or {} if there is none or it cannot be read
    (not a report this grader wrote: its rows are made anew as submissions are graded again; set_aside: it is
    kept beside, as grading-report.csv.unreadable)."""
    path = Path(root) / REPORT
    if not path.is_file():
        return {}
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(1 << 24)  # a report written before notes were bounded may hold long fields
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = {}
            for row in csv.DictReader(f):
                if row.get("assignment") and row.get("student"):  # a row cut short is dropped
                    rows[(row["assignment"], row["student"])] = {k: printable(row.get(k) or "", 20_000)
                                                                 for k in REPORT_FIELDS}
            return rows
    except (csv.Error, KeyError, TypeError, ValueError, OSError) as e:
        if set_aside:
            print(f"{path} could not be read ({type(e).__name__}: {printable(e, 200)}); it is kept as "
                  f"{path.name}.unreadable and a new one is written", file=sys.stderr, flush=True)
            try:
                path.replace(path.with_name(path.name + ".unreadable"))
            except OSError:
                pass
        return {}
    finally:
        csv.field_size_limit(limit)


def write_report(root, results):
    """One row per submission: this run's results replace the rows of the same submissions. A row per item under
    submitted/ that is no submission (status "not graded", no score), made anew each run: one moved or removed
    since is no longer named."""
    rows = {k: v for k, v in read_report(root, set_aside=True).items() if v.get("status") != NOT_GRADED}
    for r in results:
        scored = r.status != NOT_GRADED
        rows[(r.aid, r.student)] = dict(zip(REPORT_FIELDS, [
            printable(r.student, 200), printable(r.aid, 200), r.status, f"{r.score:g}" if scored else "",
            f"{r.max_score:g}" if scored else "",
            int(r.flagged), f"{r.seconds:.1f}", " | ".join(printable(n) for n in r.notes)]))
    path = Path(root) / REPORT
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8", errors="backslashreplace") as f:
        w = csv.DictWriter(f, fieldnames=REPORT_FIELDS)
        w.writeheader()
        w.writerows(rows[key] for key in sorted(rows))


class ReviewExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export (the same columns, in the same order) plus `review`: why a person should look
    at a submission, from the grading report (the notes of each flagged submission). Written with the csv
    module, so a note with a comma stays in its column."""

    course_root = Unicode("", help="the course folder whose grading report is read (default: "
                                   "CourseDirectory.root)").tag(config=True)

    KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
            "late_submission_penalty", "score", "max_score"]

    def _root(self):
        if self.course_root:
            return self.course_root
        from nbgrader.coursedir import CourseDirectory

        return CourseDirectory(config=self.config).root

    def export(self, gradebook):
        """A row per student and assignment the class was set (counted(): one with a due date, or one somebody
        handed in), or per assignment named with --assignment."""
        review = {key: row["notes"] for key, row in read_report(self._root()).items() if row.get("flagged") == "1"}
        students = [str(s) for s in self.student]
        assignments = [str(a) for a in self.assignment]
        with open(self.to or "grades.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(self.KEYS + ["review"])
            for assignment in gradebook.assignments:
                if (assignment.name not in assignments) if assignments else not counted(assignment):
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    missing = False
                    row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                           "last_name": student.last_name, "first_name": student.first_name, "email": student.email,
                           "max_score": assignment.max_score}
                    try:
                        sub = gradebook.find_submission(assignment.name, student.id)
                    except MissingEntry:  # not handed in: no score at all, which a 0.0 would hide
                        row.update(timestamp="", raw_score="", late_submission_penalty="", score="")
                        missing = True
                    else:
                        penalty = sub.late_submission_penalty
                        row.update(timestamp=sub.timestamp, raw_score=sub.score, late_submission_penalty=penalty,
                                   score=max(0.0, sub.score - penalty))
                    said = review.get((assignment.name, student.id), "")
                    w.writerow([printable("" if row[k] is None else row[k], 200) for k in self.KEYS]
                               + [(f"{NOT_SUBMITTED}: {said}" if said else NOT_SUBMITTED) if missing else said])


def counted(assignment):
    """Was the class set this assignment? Yes once it has a due date (`nbgrader db assignment add ID
    --duedate=...`, or the formgrader's Manage Assignments) or somebody handed it in; `make release` alone
    registers every notebook in the gradebook, set or not."""
    return assignment.duedate is not None or len(assignment.submissions) > 0


def missing(root):
    """({assignment counted: how many students in the gradebook have no submission of it}, [the gradebook's
    assignments not counted]), for the summary: the rows of grades.csv, counted ({} and [] if the gradebook
    cannot be read)."""
    from nbgrader.api import Gradebook

    out, uncounted = {}, []
    try:
        with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
            students = {s.id for s in gb.students}
            for a in gb.assignments:
                if counted(a):
                    out[a.name] = len(students - {sub.student.id for sub in a.submissions})
                else:
                    uncounted.append(a.name)
    except Exception:  # the summary goes without it; grades.csv says the same row by row
        pass
    return out, sorted(uncounted)


def export(root, config):
    """grades.csv, as `nbgrader export` writes it with the course config (in this process)."""
    from nbgrader.api import Gradebook
    from traitlets.utils.importstring import import_item

    config = config.copy()
    config.CourseDirectory.root = str(root)
    plugin = config.ExportApp.get("plugin_class", ReviewExportPlugin)
    plugin = import_item(plugin) if isinstance(plugin, str) else plugin
    extra = {"course_root": str(root)} if plugin.class_traits().get("course_root") else {}
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        plugin(config=config, to=str(Path(root) / "grades.csv"), **extra).export(gb)
