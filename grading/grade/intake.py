"""Intake: what there is to grade, the gradebooks it is graded against, and each submission's
scratch course (stray files, unreadable notebooks, mending for nbgrader, the integrity scan)."""
import functools
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .. import integrity, reveal
from ..cells import grade_id, has_meta, is_graded, is_locked, is_solution, is_test, meta, nbgrader_type, points
from ..course import nbgrader_api
from ..integrity.order import release_order
from . import received
from .notes import printable

MAX_NOTES = 30   # notes kept per submission; one more says how many were left out


@dataclass
class Result:
    """One submission's outcome, from intake to merge (it travels from a worker to the parent)."""
    student: str
    aid: str
    status: str = "graded"             # "graded" or "failed"
    score: float = 0.0
    max_score: float = 0.0
    notes: list = field(default_factory=list)
    flagged: bool = False
    why: str = ""                      # for "failed": why it could not be graded
    seconds: float = 0.0
    record: dict = None                # the scores nbgrader gave it in its scratch course, merged into the gradebook
    findings: list = field(default_factory=list)   # integrity.Finding, one per line ignored when grading
    timings: dict = field(default_factory=dict)    # seconds per step, for `make bench`

    def note(self, text, flag=False, first=False):
        """Add a note (made printable and bounded: it may quote the submission); past MAX_NOTES, the last
        note says how many more there were."""
        text = printable(text)
        self.flagged = self.flagged or flag
        if text in self.notes:
            return
        self.notes.insert(0, text) if first else self.notes.append(text)
        if len(self.notes) > MAX_NOTES:
            left = sum(int(n.split()[0]) if n.endswith(" more notes left out") else 1
                       for n in self.notes[MAX_NOTES - 1:])
            self.notes[MAX_NOTES - 1:] = [f"{left} more notes left out"]

    def fail(self, why, suffix=": it scores 0"):
        self.status, self.why = "failed", printable(why, 300)
        self.note(why + suffix, flag=True, first=True)


@dataclass
class Job:
    """Everything a worker needs to grade one submission (plain data: it is pickled to the worker)."""
    root: str                          # the course
    student: str
    aid: str
    scratch: str                       # a folder of its own, outside the course
    template: str                      # the template gradebook
    notebooks: list                    # the notebook names the assignment has
    releases: dict                     # {notebook name: the released student copy's path}
    cell_timeout: int
    memory_limit: int = 0              # bytes of address space a kernel may use; 0: no limit
    sandbox: bool = False              # start its kernels in the sandbox (grading/kernels/sandbox.py)
    cpu_limit: int = 0                 # CPU seconds one kernel may use; 0: no limit
    judge: bool = True                 # run the test cells in the worker (grading/judge/), not in the kernel
    received: str = ""                 # when it reached the course (received.py, UTC ISO): lateness is charged from it
    duedate: str = ""                  # the assignment's due date (UTC ISO), if it has one


# ----------------------------------------------------------------------------- the class

def submissions(root, only=None):
    """(student, assignment) pairs found in submitted/, sorted."""
    found = []
    for folder in sorted((Path(root) / "submitted").glob("*/*")):
        if folder.is_dir() and not folder.name.startswith(".") and (only is None or folder.name in only):
            found.append((folder.parent.name, folder.name))
    return found


def gradebooks(root, aids, config, template, release_dir):
    """Build the template gradebook (the assignments and their cells, no students) and register each
    assignment in the course gradebook if it is not there yet: both by nbgrader's generate_assignment
    (in this process), releasing into `release_dir`, never into the course's notebooks/. A course with
    no gradebook yet gets a copy of the template. Returns the assignment ids nbgrader could not
    generate (no such source folder)."""
    from nbgrader.api import Gradebook, MissingEntry

    root = Path(root)
    course_db = root / "gradebook.db"
    template_api = nbgrader_api(root, config, db=template, release_dir=release_dir)
    unknown = [aid for aid in aids if not template_api.generate_assignment(aid, force=True, create=True).get("success")]
    if not course_db.exists():
        shutil.copy(template, course_db)
        return unknown
    with Gradebook(f"sqlite:///{course_db}") as gb:
        known, duedates = set(), {}
        for aid in aids:
            try:
                assignment = gb.find_assignment(aid)
            except MissingEntry:
                continue
            duedates[aid] = assignment.duedate
            if assignment.notebooks:  # `nbgrader db assignment add ID --duedate=...` adds one without
                known.add(aid)        # notebooks: generate_assignment below adds them, keeping the date
    # The due dates the instructor set go into the template, from which every submission's scratch
    # gradebook is copied, so nbgrader's autograde there computes lateness and the late penalty.
    with Gradebook(f"sqlite:///{template}") as gb:
        for aid, due in duedates.items():
            if due is not None and aid not in unknown:
                gb.update_or_create_assignment(aid, duedate=due)
    course_api = nbgrader_api(root, config, db=course_db, release_dir=release_dir)
    for aid in aids:
        if aid not in known and aid not in unknown:
            course_api.generate_assignment(aid, force=True, create=True)
    return unknown


def duedates(template, aids):
    """{assignment: its due date, UTC ISO} for those of `aids` that have one in the template gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template}") as gb:
        dates = {aid: gb.find_assignment(aid).duedate for aid in aids}
    return {aid: d.replace(tzinfo=None).isoformat() + "+00:00" for aid, d in dates.items() if d is not None}


def notebook_names(template, aid):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{template}") as gb:
        return sorted(nb.name for nb in gb.find_assignment(aid).notebooks)


# ----------------------------------------------------------------------------- one submission

SURROGATES = "the notebook holds characters that are not text (lone UTF-16 surrogates, written as \\ud800 to \\udfff " \
             "escapes in its JSON; no editor writes them): each was replaced by ? and the notebook was graded"


def read_notebook(path, notes=None):
    """(notebook, None) or (None, why it cannot be read). Text that cannot be written back as UTF-8 (a lone
    surrogate escaped in the JSON) is replaced by ?, and `notes` (a list) is told so."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return None, f"the file {Path(path).name} could not be read ({type(e).__name__})"
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as e:
        return None, (f"{Path(path).name} could not be read: it is not valid JSON (line {e.lineno}, column {e.colno}: "
                      f"{e.msg}); was it edited outside Jupyter or cut off while uploading?")
    except RecursionError:
        return None, f"{Path(path).name} could not be read: its JSON is nested too deeply"
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # nbgrader writing it back would fail (and, before, stop the class run)
        text = json.dumps(parsed, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8")
        if notes is not None:
            notes.append(SURROGATES)
    try:
        invalid = {}
        nb = nbformat.reads(text, as_version=4, capture_validation_error=invalid)
        if invalid.get("ValidationError"):
            raise invalid["ValidationError"]
        for cell in nb.cells:
            if not isinstance(cell.get("source"), str):
                raise ValueError("a cell has no source text")
    except Exception as e:  # any reason it is not a notebook
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, f"{Path(path).name} could not be read: it is JSON but not a Jupyter notebook ({first[:120]})"
    return nb, None


@functools.lru_cache(maxsize=32)
def _course_notebook(path, mtime):
    return nbformat.read(path, as_version=4)


def course_notebook(path):
    """A release or source notebook, read once per worker (they do not change while a class is graded)."""
    path = Path(path)
    return _course_notebook(str(path), path.stat().st_mtime_ns) if path.is_file() else None


def drop_copies(nb):
    """A cell pasted twice carries its nbgrader id twice, and nbgrader keys every cell by it (the submission
    failed to grade with a KeyError). Each id is graded once, where it first appears; later copies lose their
    nbgrader metadata and run as cells of the student's own. Returns a note, or None if there were none."""
    seen, twice = set(), []
    for c in nb.cells:
        gid = grade_id(c)
        if gid and gid in seen:
            del c.metadata["nbgrader"]
            twice.append(gid)
        elif gid:
            seen.add(gid)
    if not twice:
        return None
    return (f"cell(s) {', '.join(sorted(set(map(str, twice))))} appear more than once (copied and pasted?): each was "
            "graded once, where it first appears; the copies ran as cells of the student's own")


def compare_with_release(nb, release):
    """Notes on how a submission's nbgrader cells differ from the released student copy, and whether
    the notebook had to be mended for nbgrader (cells unknown to this release: an old test is dropped,
    since the current one is put back; other cells keep their code without the nbgrader metadata)."""
    rel = {grade_id(c): c for c in release.cells if grade_id(c)}
    sub = {}
    for c in nb.cells:
        if grade_id(c):
            sub.setdefault(grade_id(c), c)
    notes = []
    missing = [g for g, c in rel.items() if g not in sub and (is_graded(c) or is_locked(c))]
    unknown = [g for g in sub if g not in rel]
    edited = [g for g, c in rel.items() if g in sub and is_locked(c)
              and (sub[g].source.strip() != c.source.strip() or points(sub[g]) != points(c))]
    # what nbgrader reads a cell as: a test made a solution cell (points raised) would make nbgrader's
    # OverwriteCells fail ("Inconsistent checksums") and zero the notebook; the released cell is put back
    retyped = [g for g, c in rel.items() if g in sub and (sub[g].cell_type != c.cell_type
                                                          or nbgrader_type(sub[g]) != nbgrader_type(c))]
    for g in retyped:
        c = sub[g]
        c.cell_type = rel[g].cell_type
        c.metadata["nbgrader"] = dict(meta(rel[g]))
        if c.cell_type != "code":
            c.pop("outputs", None)
            c.pop("execution_count", None)
        else:
            c.setdefault("outputs", [])
            c.setdefault("execution_count", None)
        if is_locked(rel[g]) or is_test(rel[g]):
            c.source = rel[g].source
    edited = [g for g in edited if g not in retyped]
    if missing:
        notes.append(f"test or locked cell(s) {', '.join(missing)} were missing from the submission (deleted, or "
                     "their nbgrader metadata removed): the released version was put back and graded")
    if unknown:
        notes.append(f"cell(s) {', '.join(unknown)} are not in the current release (a copy of an older release?): "
                     "the submission was graded against the current tests")
    if retyped:
        notes.append(f"cell(s) {', '.join(retyped)} had their nbgrader type changed (a test cell made a solution "
                     "cell, its points raised?): the released version was put back and graded")
    if edited:
        notes.append(f"locked cell(s) {', '.join(edited)} were edited (or come from an older release): the released "
                     "version was put back before grading")
    moved = release_order(nb, release)  # before a cell unknown to the release is dropped: the places stay
    if moved:
        notes.append(moved)
    mended = bool(moved)
    for c in list(nb.cells):
        if has_meta(c) and grade_id(c) not in rel:
            mended = True
            if is_graded(c) or (is_locked(c) and not is_solution(c)):
                nb.cells.remove(c)
            else:
                del c.metadata["nbgrader"]
    return notes, mended or bool(retyped)


# nbgrader's own files in a submission: the exchange writes them at submit time. autograde reads
# timestamp.txt (the submission time: late penalties) and release_feedback both, so they travel (small
# plain files only); neither is the student's work.
NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")


def bad_timestamp(path):
    """Why nbgrader's timestamp.txt (the submission time, which late penalties read) cannot be used, or None."""
    from nbgrader.utils import parse_utc

    text = "(not UTF-8 text)"
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
        parse_utc(text)
        return None
    except Exception:  # not text, not a date, an empty file
        return (f"timestamp.txt does not hold a submission time ({printable(text, 60)!r} is not a date): it was "
                "ignored; lateness was charged from when the submission reached the course")


def other_files(folder):
    """The submission's files that are not its top-level notebooks (relative paths, sorted; links not followed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != ".ipynb_checkpoints"]
        rel = os.path.relpath(dirpath, folder)
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            if rel == "." and (name.endswith(".ipynb") or name in NBGRADER_FILES + (reveal.RECORD,)) and \
                    not os.path.islink(path):
                continue
            out.append(name if rel == "." else f"{rel}/{name}")
    return sorted(out)


def prepare(job):
    """Build the scratch course for one submission: <scratch>/course with the assignment's source
    folder and the submission, <scratch>/gradebook.db from the template. Returns a Result, failed if
    there is nothing nbgrader could grade."""
    res = Result(job.student, job.aid)
    root, scratch, aid = Path(job.root), Path(job.scratch), job.aid
    folder = root / "submitted" / job.student / aid
    found = sorted(p for p in folder.glob("*.ipynb") if p.is_file() and not p.is_symlink())
    course = scratch / "course"
    dest = course / "submitted" / job.student / aid
    dest.mkdir(parents=True)
    for nb in found:
        shutil.copyfile(nb, dest / nb.name)
    for name in NBGRADER_FILES:
        path = folder / name
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 1024:
            why = bad_timestamp(path) if name == "timestamp.txt" else None
            if why:
                res.note(why, flag=True)
            elif name == "timestamp.txt" and job.received:
                said = received.disagreement(path.read_text(encoding="utf-8"), job.received, job.duedate)
                if said:
                    res.note(said, flag=True)
            else:
                shutil.copyfile(path, dest / name)
    seen = reveal.seen_note(folder)  # make check REVEAL=1 before the Diagnose passed (grading/reveal.py)
    if seen:
        res.note(seen, flag=True)
    if job.received:  # the time nbgrader's autograde charges lateness from: the course's, never the student's
        (dest / "timestamp.txt").write_text(job.received, encoding="utf-8")
    others = other_files(folder)
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        res.note(f"files other than notebooks are not used when grading (the notebook runs in an empty folder): "
                 f"{shown}")
    src = root / "solutions" / aid
    if src.is_dir():
        shutil.copytree(src, course / "solutions" / aid, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    else:
        (course / "solutions" / aid).mkdir(parents=True)
    shutil.copy(job.template, scratch / "gradebook.db")

    wanted, names = job.notebooks, {p.name for p in found}
    for name in wanted:
        if f"{name}.ipynb" in names:
            continue
        strays = [p for p in found if p.stem not in wanted]
        if len(wanted) == 1 and len(strays) == 1:
            shutil.copy(strays[0], dest / f"{name}.ipynb")
            (dest / strays[0].name).unlink()
            res.note(f"the notebook was submitted as {strays[0].name}, not {name}.ipynb: it was graded as "
                     f"{name}.ipynb", flag=True)
        else:
            res.fail(f"no {name}.ipynb in the submission (found: {', '.join(sorted(names)) or 'nothing'})", "")
            return res
    extra = sorted(p.name for p in dest.glob("*.ipynb") if p.stem not in wanted)
    if extra:
        res.note(f"other notebooks in the folder were not graded: {', '.join(extra)}")
        for n in extra:
            (dest / n).unlink()
    for name in wanted:
        said = []
        nb, why = read_notebook(dest / f"{name}.ipynb", said)
        if nb is None:
            res.fail(why, ": nothing could be graded, it scores 0")
            return res
        for n in said:
            res.note(n, flag=True)
        copies = drop_copies(nb)
        if copies:
            res.note(copies)
        mended = bool(said or copies)
        release = course_notebook(job.releases.get(name, ""))
        if release is not None:
            notes, changed = compare_with_release(nb, release)
            mended = mended or changed
            for n in notes:
                res.note(n, flag=True)
        source = course_notebook(src / f"{name}.ipynb")
        if source is not None:  # tampering with what the tests use: flagged, and ignored when grading
            findings = integrity.scan(nb, source)
            for f in findings:
                res.note(f"integrity: {f} (this line was ignored when grading)", flag=True)
            if findings:
                res.findings += findings
                nb, mended = integrity.sanitize(nb, findings), True
        if mended:
            nbformat.write(nb, dest / f"{name}.ipynb")
    return res
