"""`make grade`: autograde a class in parallel, write feedback, grades.csv and a report.

Layout (nbgrader's): submitted/<student>/<assignment id>/<assignment id>.ipynb.

    python -m grading.grade                      # everything in submitted/, all cores
    python -m grading.grade 01_branch_prediction # one assignment
    python -m grading.grade -j 1 --cell-timeout 10

How one class is graded, and why:
1. The assignments are registered in the course gradebook (gradebook.db) if they are not
   yet, and a template gradebook is made from it: the same assignments and cells, no students.
2. Each submission is graded in its own scratch course (a copy of the assignment's source
   folder, the submission, and a copy of the template gradebook kept outside the scratch
   course) by one of the worker processes, one per core, each grading one submission after
   another; a worker is killed and replaced when a submission runs past its limit.
   nbgrader's SQLite gradebook is never written by two processes at once, and whatever a
   submission does to the files around it happens to the scratch copy, never to the course.
3. The parent merges each worker's scores into the course gradebook, one at a time, copies
   autograded/ and feedback/ back, and adds a "Grading notes" box to the feedback page
   saying what went wrong (a cell stopped at the timeout, a locked cell edited, ...).
4. At the end: `nbgrader export` to grades.csv, autograded/grading-report.csv, and a summary:
   graded, failed to grade (with why), flagged for review (with why).

A submission that cannot be read, that crashes the grader, or that runs past the
per-submission limit scores 0 and is flagged; the class always completes.
"""
import argparse
import copy
import csv
import hashlib
import html
import json
import os
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from . import integrity
from .course import CONFIG_DIR, REPO, nbgrader

REPORT = Path("autograded") / "grading-report.csv"
MAX_OUTPUT_CHARS = 20_000     # per output of a cell, after execution; the rest is cut
TRUNCATED = "output truncated by the grader"
MAX_NOTES = 6


# ----------------------------------------------------------------------------- finding work

def submissions(root, only=None):
    """(student, assignment) pairs found in submitted/, sorted."""
    found = []
    for folder in sorted((Path(root) / "submitted").glob("*/*")):
        if folder.is_dir() and not folder.name.startswith(".") and (only is None or folder.name in only):
            found.append((folder.parent.name, folder.name))
    return found


def in_gradebook(root, aid):
    with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
        try:
            gb.find_assignment(aid)
            return True
        except MissingEntry:
            return False


def register(root, aid):
    """Record the assignment's graded cells in the gradebook without touching notebooks/."""
    with tempfile.TemporaryDirectory() as scratch:
        nbgrader("generate_assignment", aid, "--force", "--log-level=ERROR",
                 f"--CourseDirectory.release_directory={scratch}", root=root)


def make_template(root, dest):
    """A copy of the course gradebook with its assignments and cells but no students."""
    shutil.copy(Path(root) / "gradebook.db", dest)
    with sqlite3.connect(dest) as db:
        for table in ("comment", "grade", "submitted_notebook", "submitted_assignment", "student"):
            db.execute(f"DELETE FROM {table}")
    db.close()
    with sqlite3.connect(dest) as db:
        db.execute("VACUUM")
    db.close()


def expected_notebooks(template, aid):
    with sqlite3.connect(template) as db:
        rows = db.execute("SELECT notebook.name FROM notebook JOIN assignment "
                          "ON notebook.assignment_id = assignment.id WHERE assignment.name = ?", (aid,))
        names = sorted(r[0] for r in rows)
    db.close()
    return names


# ----------------------------------------------------------------------------- one result

@dataclass
class Result:
    student: str
    aid: str
    status: str = "graded"             # "graded" or "failed"
    score: float = 0.0
    max_score: float = 0.0
    notes: list = field(default_factory=list)
    flagged: bool = False
    why: str = ""                      # for "failed": why it could not be graded
    seconds: float = 0.0
    record: dict = None                # the worker's scores, merged into the gradebook
    scratch: Path = None               # where it was graded

    def note(self, text, flag=False):
        if text not in self.notes:
            self.notes.append(text)
        self.flagged = self.flagged or flag


# ----------------------------------------------------------------------------- before grading

def _read_notebook(path):
    """(notebook, None) or (None, why it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return None, f"the file {path.name} could not be read ({type(e).__name__})"
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return None, (f"{path.name} could not be read: it is not valid JSON (line {e.lineno}, column {e.colno}: "
                      f"{e.msg}); was it edited outside Jupyter or cut off while uploading?")
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if not isinstance(cell.get("source"), str):
                raise ValueError("a cell has no source text")
    except Exception as e:  # noqa: BLE001: any reason it is not a notebook
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, f"{path.name} could not be read: it is JSON but not a Jupyter notebook ({first[:120]})"
    return nb, None


def _meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def compare_with_release(nb, release):
    """Notes on how a submission's nbgrader cells differ from the released student copy, and whether
    the notebook had to be mended for nbgrader (cells unknown to this release: an old test is dropped,
    since the current one is put back; other cells keep their code without the nbgrader metadata)."""
    rel = {_meta(c)["grade_id"]: c for c in release.cells if _meta(c).get("grade_id")}
    sub = {}
    for c in nb.cells:
        if _meta(c).get("grade_id"):
            sub.setdefault(_meta(c)["grade_id"], c)
    notes = []
    missing = [g for g, c in rel.items() if g not in sub and (_meta(c).get("grade") or _meta(c).get("locked"))]
    unknown = [g for g in sub if g not in rel]
    edited = [g for g, c in rel.items() if g in sub and _meta(c).get("locked")
              and (sub[g].source.strip() != c.source.strip()
                   or _meta(sub[g]).get("points", 0) != _meta(c).get("points", 0))]
    if missing:
        notes.append(f"test or locked cell(s) {', '.join(missing)} were missing from the submission (deleted, or "
                     "their nbgrader metadata removed): the released version was put back and graded")
    if unknown:
        notes.append(f"cell(s) {', '.join(unknown)} are not in the current release (a copy of an older release?): "
                     "the submission was graded against the current tests")
    if edited:
        notes.append(f"locked cell(s) {', '.join(edited)} were edited (or come from an older release): the released "
                     "version was put back before grading")
    mended = False
    for c in list(nb.cells):
        meta = _meta(c)
        if "nbgrader" in c.get("metadata", {}) and meta.get("grade_id") not in rel:
            mended = True
            if meta.get("grade") or (meta.get("locked") and not meta.get("solution")):
                nb.cells.remove(c)
            else:
                del c.metadata["nbgrader"]
    return notes, mended


def _no_links(folder, names):
    """copytree's ignore: checkpoints, and symbolic links (a link in a submission could point
    the kernel at the course's own files)."""
    return [n for n in names if n == ".ipynb_checkpoints" or os.path.islink(os.path.join(folder, n))]


def prepare(root, student, aid, template, release, scratch):
    """Build the scratch course for one submission; returns a Result (status failed if unreadable)."""
    res = Result(student, aid)
    folder = Path(root) / "submitted" / student / aid
    wanted = expected_notebooks(template, aid)
    found = sorted(p for p in folder.glob("*.ipynb") if p.is_file() and not p.is_symlink())
    course = scratch / "course"
    dest = course / "submitted" / student / aid
    shutil.copytree(folder, dest, ignore=_no_links)
    src = Path(root) / "solutions" / aid
    if src.is_dir():
        shutil.copytree(src, course / "solutions" / aid, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    else:
        (course / "solutions" / aid).mkdir(parents=True)
    shutil.copy(template, scratch / "gradebook.db")

    names = {p.name for p in found}
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
            res.status = "failed"
            res.why = (f"no {name}.ipynb in the submission (found: {', '.join(sorted(names)) or 'nothing'})")
            res.note(res.why, flag=True)
            return res
    extra = sorted(p.name for p in dest.glob("*.ipynb") if p.stem not in wanted)
    if extra:
        res.note(f"other notebooks in the folder were not graded: {', '.join(extra)}")
        for n in extra:
            (dest / n).unlink()
    for name in wanted:
        nb, why = _read_notebook(dest / f"{name}.ipynb")
        if nb is None:
            res.status = "failed"
            res.why = why
            res.note(why + ": nothing could be graded, it scores 0", flag=True)
            return res
        mended = False
        if name in release:
            notes, mended = compare_with_release(nb, release[name])
            for n in notes:
                res.note(n, flag=True)
        source = src / f"{name}.ipynb"
        if source.is_file():  # tampering with what the tests use: flagged, and ignored when grading
            findings = integrity.scan(nb, nbformat.read(source, as_version=4))
            for f in findings:
                res.note(f"integrity: {f} (this line was ignored when grading)", flag=True)
            if findings:
                nb, mended = integrity.sanitize(nb, findings), True
        if mended:
            nbformat.write(nb, dest / f"{name}.ipynb")
    return res


def tree_state(top, skip):
    """{relative path: (size, sha1)} of every file under top, except those under the `skip` prefixes."""
    state = {}
    top = Path(top)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(top).as_posix()
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            try:
                h = hashlib.sha1()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                state[rel] = (path.stat().st_size, h.hexdigest())
            except OSError:
                state[rel] = None
    return state


def changes(before, after):
    out = [f"{p} deleted" for p in sorted(before) if p not in after]
    out += [f"{p} changed" for p in sorted(before) if p in after and before[p] != after[p]]
    out += [f"{p} created" for p in sorted(after) if p not in before]
    return out


# ----------------------------------------------------------------------------- in the worker

def _worker_preprocessors():
    """nbgrader's autograde preprocessors, with execution that survives uninterruptible cells
    and dead kernels, and output capped by characters as well as by lines."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbformat.notebooknode import NotebookNode
    from jupyter_core.utils import run_sync
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, Execute, IgnorePattern,
                                        LimitOutput, NbGraderPreprocessor, SaveAutoGrades)

    class RobustExecute(Execute):
        """A cell that ignores the interrupt (catches BaseException) or kills the kernel does not
        fail the whole notebook: the cell gets an error output, the kernel is restarted, the
        cells above it are run again to rebuild the state, and grading goes on."""

        def preprocess(self, nb, resources=None, km=None):
            self._skip = set()
            return super().preprocess(nb, resources, km)

        def preprocess_cell(self, cell, resources, index):
            try:
                return super().preprocess_cell(cell, resources, index)
            except (CellTimeoutError, DeadKernelError) as e:
                if isinstance(e, CellTimeoutError):
                    ename, text = "CellTimeoutError", (f"the cell ran longer than {self.timeout} s and did not stop "
                                                       "when interrupted; the kernel was restarted")
                else:
                    ename, text = "DeadKernelError", "the kernel died while running this cell; it was restarted"
                cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") != "error"]
                cell.outputs.append(NotebookNode(output_type="error", ename=ename, evalue=text,
                                                 traceback=[f"{ename}: {text}"]))
                self._skip.add(index)
                self._restart_and_replay(index)
                return cell, self.resources

        def _restart_and_replay(self, upto):
            run_sync(self.km.restart_kernel)(now=True)
            self.wait_for_reply(self.kc.kernel_info())
            for j in range(upto):
                c = self.nb.cells[j]
                if c.cell_type != "code" or j in self._skip or any(
                        o.get("output_type") == "error" and o.get("ename") in ("CellTimeoutError", "KeyboardInterrupt",
                                                                               "DeadKernelError")
                        for o in c.get("outputs", [])):
                    continue
                try:
                    super().preprocess_cell(copy.deepcopy(c), self.resources, j)
                except (CellTimeoutError, DeadKernelError):
                    self._skip.add(j)
                    run_sync(self.km.restart_kernel)(now=True)
                    self.wait_for_reply(self.kc.kernel_info())

    class CapOutput(NbGraderPreprocessor):
        """Cut every text output to MAX_OUTPUT_CHARS characters (LimitOutput counts lines only,
        so one 25 MB line would pass it)."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type != "code":
                return cell, resources
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and len(out.get("text", "")) > MAX_OUTPUT_CHARS:
                    n = len(out.text)
                    out.text = (out.text[:MAX_OUTPUT_CHARS] +
                                f"\n... {TRUNCATED}: {n - MAX_OUTPUT_CHARS:,} of {n:,} characters not shown ...\n")
                for key, value in list(out.get("data", {}).items()):
                    if isinstance(value, str) and len(value) > MAX_OUTPUT_CHARS and key.startswith("text/"):
                        out.data[key] = value[:MAX_OUTPUT_CHARS] + f"\n... {TRUNCATED} ...\n"
            return cell, resources

    return [RobustExecute, IgnorePattern, ClearMetadataPreprocessor, CapOutput, LimitOutput,
            SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]


def worker(scratch, aid, student, cell_timeout=None):
    """Autograde and write feedback for one submission in its scratch course (run in a subprocess)."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    scratch = Path(scratch)
    course = scratch / "course"
    os.environ["SPECLAB_COURSE_ROOT"] = str(course)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(CONFIG_DIR)).load_config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.db_url = f"sqlite:///{scratch / 'gradebook.db'}"
    if cell_timeout:
        config.Execute.timeout = int(cell_timeout)
    config.Autograde.autograde_preprocessors = _worker_preprocessors()
    api = NbGraderAPI(config=config)
    out = {"success": False}
    graded = api.autograde(aid, student, force=True, create=True)
    out["success"] = bool(graded.get("success"))
    errors = [ln.strip() for ln in (graded.get("error") or "").splitlines() + (graded.get("log") or "").splitlines()
              if re.match(r"\s*\w+(\.\w+)*(Error|Exception|Interrupt)\b:", ln) and "Please see the" not in ln]
    out["error"] = errors[-1] if errors else (graded.get("error") or "")[-300:]
    if out["success"]:
        fb = api.generate_feedback(aid, student, force=True)
        out["feedback"] = bool(fb.get("success"))
        with Gradebook(config.CourseDirectory.db_url) as gb:
            sub = gb.find_submission(aid, student)
            out["timestamp"] = sub.timestamp.isoformat() if sub.timestamp else None
            out["score"], out["max_score"] = sub.score, sub.max_score
            out["notebooks"] = {
                nb.name: {"late_penalty": nb.late_submission_penalty,
                          "grades": {g.name: [g.auto_score, bool(g.needs_manual_grade)] for g in nb.grades},
                          "comments": {c.name: c.auto_comment for c in nb.comments}}
                for nb in sub.notebooks}
    (scratch / "result.json").write_text(json.dumps(out))


def serve(cell_timeout=None):
    """Grade the jobs read from stdin, one JSON line each, answering DONE on stdout after each."""
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever nbgrader or a library prints goes to the log, not into the answers
    from nbgrader.apps import NbGraderAPI  # noqa: F401: the slow imports, before saying READY
    _worker_preprocessors()
    channel.write("READY\n")
    channel.flush()
    for line in sys.stdin:
        job = json.loads(line)
        try:
            worker(job["scratch"], job["aid"], job["student"], cell_timeout)
        except Exception as e:  # noqa: BLE001: reported as this submission's failure
            Path(job["scratch"], "result.json").write_text(
                json.dumps({"success": False, "error": f"{type(e).__name__}: {e}"}))
        channel.write("DONE\n")
        channel.flush()


class WorkerProcess:
    """One grading process that autogrades submission after submission (one Python start-up and
    one import of nbgrader per worker, not per submission). A submission that runs past its limit
    gets the process killed, with its process group, and the next submission a fresh one; the
    kernel of the killed one, a session of its own, exits within a second of losing its parent
    (ipykernel's parent poller)."""

    def __init__(self, tmp, cell_timeout):
        self.tmp, self.cell_timeout, self.proc, self.buf = Path(tmp), cell_timeout, None, b""
        self.log_path = None

    def last_words(self):
        """The last line the worker wrote to its log (why it crashed, usually)."""
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except (OSError, AttributeError):
            return "?"
        return lines[-1][:200] if lines else "?"

    def start(self):
        env = dict(os.environ, JUPYTER_CONFIG_PATH=str(CONFIG_DIR),
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg")
        cmd = [sys.executable, "-m", "grading.grade", "--serve"]
        if self.cell_timeout:
            cmd += ["--cell-timeout", str(self.cell_timeout)]
        self.log_path = self.tmp / f"worker-{threading.get_ident()}.log"
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, cwd=self.tmp, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, start_new_session=True)
        log.close()
        self.buf = b""
        # the start-up (Python, nbgrader's imports) is not counted in any submission's limit
        if self._answer(time.monotonic() + 600) != b"READY":
            self.kill()
            raise RuntimeError(f"a grading process did not start: {self.last_words()}")

    def run(self, scratch, aid, student, limit):
        """"done", "timeout" or "crashed"."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps({"scratch": str(scratch), "aid": aid, "student": student}).encode()
                                  + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.kill()
            return "crashed"
        answer = self._answer(time.monotonic() + limit)
        if answer == b"DONE":
            return "done"
        self.kill()
        return "timeout" if answer is None else "crashed"

    def _answer(self, deadline):
        """The next line the worker writes: b"READY", b"DONE", b"" if it died, None at the deadline."""
        fd = self.proc.stdout.fileno()
        while True:
            if b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if line.strip() in (b"READY", b"DONE"):
                    return line.strip()
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return b""
                self.buf += chunk

    def kill(self):
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.proc, self.buf = None, b""

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None


# ----------------------------------------------------------------------------- after grading

def runtime_notes(res, autograded_nb, timeout):
    """Notes from the executed notebook: stopped cells, dead kernels, errors outside tests, cut output."""
    try:
        nb = nbformat.read(autograded_nb, as_version=4)
    except Exception:  # noqa: BLE001
        return
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = _meta(cell)
        name = meta.get("grade_id") or f"number {i + 1}"
        zero = "; it scores 0" if meta.get("grade") else ""
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                ename = out.get("ename", "")
                if ename == "CellTimeoutError" and "restarted" in out.get("evalue", ""):
                    res.note(f"cell {name} ran longer than {timeout} s and ignored the interrupt (does it catch "
                             "BaseException?): the kernel was restarted, the cells above it run again, and "
                             "grading went on" + zero)
                elif ename in ("CellTimeoutError", "KeyboardInterrupt"):
                    res.note(f"cell {name} ran longer than {timeout} s and was stopped (an endless loop?)"
                             + zero)
                elif ename == "DeadKernelError":
                    res.note(f"cell {name} crashed the Python kernel; it was restarted and grading went on")
                elif (meta.get("solution") and ename != "NotImplementedError") or ename in (
                        "ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError"):
                    # an exercise cell that fails, or code that cannot even be imported or parsed;
                    # failing tests and the demo cells below a wrong answer speak for themselves
                    res.note(f"cell {name} raised {ename}: {out.get('evalue', '')[:120]}")
            elif kind == "stream" and TRUNCATED in out.get("text", ""):
                res.note(f"cell {name} printed more output than the grader keeps: only the first "
                         f"{MAX_OUTPUT_CHARS:,} characters of each output are shown")


def notes_html(res):
    items = "".join(f"<li>{html.escape(n)}</li>" for n in res.notes)
    return ('<div class="grading-notes" style="border:2px solid #b8860b;background:#fff8dc;padding:0.6em 1em;'
            'margin:1em;font-family:sans-serif"><b>Grading notes</b><ul>' + items + "</ul></div>")


def write_feedback(root, res, scratch):
    """Copy the scratch feedback into the course, with the notes on top; or write a page of notes."""
    dest = Path(root) / "feedback" / res.student / res.aid
    made = scratch / "course" / "feedback" / res.student / res.aid
    if dest.exists():
        shutil.rmtree(dest)
    if made.is_dir():
        shutil.copytree(made, dest)
    else:
        dest.mkdir(parents=True)
    pages = sorted(dest.glob("*.html"))
    if not pages:
        page = dest / f"{res.aid}.html"
        why = ("This submission could not be graded automatically." if res.status == "failed"
               else "This submission was graded, but its feedback page could not be made.")
        body = f"<h1>{html.escape(res.aid)}: {res.score:g} / {res.max_score:g}</h1><p>{why}</p>"
        page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(res.aid)}</title>"
                        f"</head><body>{notes_html(res)}{body}</body></html>")
        return
    if res.notes:
        for page in pages:
            text = page.read_text(encoding="utf-8")
            m = re.search(r"<body[^>]*>", text)
            at = m.end() if m else 0
            page.write_text(text[:at] + notes_html(res) + text[at:], encoding="utf-8")


def copy_autograded(root, res, scratch):
    made = scratch / "course" / "autograded" / res.student / res.aid
    dest = Path(root) / "autograded" / res.student / res.aid
    if dest.exists():
        shutil.rmtree(dest)
    if made.is_dir():
        shutil.copytree(made, dest, ignore=_no_links)


def merge(gb, res):
    """Write one submission's scores into the course gradebook (called from one thread only)."""
    gb.update_or_create_student(res.student)
    record = res.record or {}
    kwargs = {"timestamp": record["timestamp"]} if record.get("timestamp") else {}
    sub = gb.update_or_create_submission(res.aid, res.student, **kwargs)
    for nb in sub.notebooks:
        rec = record.get("notebooks", {}).get(nb.name)
        nb.flagged = bool(res.flagged)
        if rec is None:  # could not be graded: 0, and flagged for a person to look at
            for g in nb.grades:
                g.auto_score, g.needs_manual_grade = 0, False
            continue
        nb.late_submission_penalty = rec["late_penalty"]
        for g in nb.grades:
            g.auto_score, g.needs_manual_grade = rec["grades"].get(g.name, [0, False])
        for c in nb.comments:
            c.auto_comment = rec["comments"].get(c.name)
    gb.db.commit()
    res.score, res.max_score = sub.score, sub.max_score


# ----------------------------------------------------------------------------- one submission

def grade_one(root, student, aid, template, release, scratch, cell_timeout, limit, pool_worker):
    start = time.perf_counter()
    res = prepare(root, student, aid, template, release, scratch)
    res.scratch = scratch
    if res.status == "failed":
        res.seconds = time.perf_counter() - start
        return res
    course = scratch / "course"
    skip = [f"autograded/{student}/{aid}", f"feedback/{student}/{aid}", ".nbgrader.log"]
    before = tree_state(course, skip)
    outcome = pool_worker.run(scratch, aid, student, limit)
    if outcome == "timeout":
        res.status, res.why = "failed", f"grading took longer than {limit:g} s and was stopped"
    result = scratch / "result.json"
    if res.status != "failed":
        if not result.exists():
            res.status, res.why = "failed", f"the grading process crashed: {pool_worker.last_words()}"
        else:
            record = json.loads(result.read_text())
            if record["success"]:
                res.record = record
                res.score, res.max_score = record["score"], record["max_score"]
                if not record.get("feedback"):
                    res.note("nbgrader could not write the feedback page; the score stands", flag=True)
            else:
                lines = [ln for ln in record.get("error", "").strip().splitlines() if ln.strip()]
                res.status, res.why = "failed", f"nbgrader could not grade it: {(lines or ['?'])[-1][:200]}"
    if res.status == "failed":
        res.note(f"{res.why}: it scores 0", flag=True)
    done = changes(before, tree_state(course, skip))
    if done:
        shown = ", ".join(done[:5]) + (f" and {len(done) - 5} more" if len(done) > 5 else "")
        res.note(f"the submission changed files outside its folder while it ran ({shown}); this happened in a "
                 "scratch copy of the course, and nothing in the course itself was changed", flag=True)
    for nb in sorted((course / "autograded" / student / aid).glob("*.ipynb")):
        runtime_notes(res, nb, cell_timeout)
    res.seconds = time.perf_counter() - start
    return res


# ----------------------------------------------------------------------------- the class

class Progress:
    def __init__(self, total, stream=sys.stderr, quiet=False):
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
        mark = {"graded": "ok" if not res.flagged else "flagged", "failed": "FAILED"}[res.status]
        line = (f"[{bar:<{width}}] {self.done}/{self.total}  {elapsed:5.0f} s, ~{left:4.0f} s left  "
                f"{res.student} {res.aid}: {res.score:g}/{res.max_score:g} {mark}")
        if self.tty:
            self.stream.write("\r\033[K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def summary(results, seconds, workers, root):
    graded = [r for r in results if r.status == "graded"]
    failed = [r for r in results if r.status == "failed"]
    flagged = [r for r in results if r.flagged]
    rate = len(results) / seconds * 60 if seconds else 0
    lines = [f"graded {len(graded)} of {len(results)} submissions in {seconds:.0f} s with {workers} worker(s) "
             f"({rate:.1f} per minute)"]
    if failed:
        lines.append(f"failed to grade ({len(failed)}; scored 0 and flagged):")
        lines += [f"  {r.student} {r.aid}: {r.why}" for r in failed]
    if flagged:
        lines.append(f"flagged for review ({len(flagged)}):")
        for r in flagged:
            lines.append(f"  {r.student} {r.aid} ({r.score:g}/{r.max_score:g}): " + "; ".join(r.notes[:MAX_NOTES]))
    lines.append(f"feedback in {Path(root) / 'feedback'}, scores in {Path(root) / 'grades.csv'}, "
                 f"notes per submission in {Path(root) / REPORT}")
    return "\n".join(lines)


def write_report(root, results):
    path = Path(root) / REPORT
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "status", "score", "max_score", "flagged", "seconds", "notes"])
        for r in sorted(results, key=lambda r: (r.aid, r.student)):
            w.writerow([r.student, r.aid, r.status, f"{r.score:g}", f"{r.max_score:g}", int(r.flagged),
                        f"{r.seconds:.1f}", " | ".join(r.notes)])


def mark_for_review(csv_path, results):
    """Add a `review` column to nbgrader's grades.csv: why a person should look at a submission."""
    if not Path(csv_path).is_file():
        return
    why = {(r.aid, r.student): " | ".join(r.notes) for r in results if r.flagged}
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    fields = [k for k in rows[0] if k != "review"] + ["review"]
    for row in rows:
        row["review"] = why.get((row["assignment"], row["student_id"]), row.get("review", ""))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def record(gb, root, res):
    """Merge one result into the gradebook and copy its files into the course; never raises."""
    try:
        merge(gb, res)
    except Exception as e:  # noqa: BLE001
        gb.db.rollback()
        res.status, res.why = "failed", f"could not record the scores: {type(e).__name__}: {e}"
        res.note(res.why, flag=True)
    if res.scratch is not None:
        try:
            copy_autograded(root, res, res.scratch)
            write_feedback(root, res, res.scratch)
        except OSError as e:
            res.note(f"could not copy the autograded notebook or feedback: {e}", flag=True)
        shutil.rmtree(res.scratch, ignore_errors=True)


def configured_timeout():
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=str(CONFIG_DIR)).load_config()
    return int(config.Execute.get("timeout", 30))


def grade(root=REPO, only=None, workers=None, cell_timeout=None, submission_limit=None, quiet=False,
          export=True):
    """Grade every submission in <root>/submitted/ (only the assignment ids in `only`, if given).

    Returns the list of Result, one per submission. Never raises for a student's submission.
    """
    root = Path(root)
    warnings.filterwarnings("ignore", message=".*not in session.*")  # nbgrader's harmless SAWarning
    pairs = submissions(root, only)
    if not pairs:
        print(f"nothing to grade: put submissions in {root / 'submitted'}/<student>/<assignment>/")
        return []
    workers = max(1, workers or os.cpu_count() or 1)
    timeout = cell_timeout or configured_timeout()
    limit = submission_limit or (20 * timeout + 120)
    aids, unknown, results = [], [], []
    for aid in sorted({aid for _, aid in pairs}):
        if not in_gradebook(root, aid):
            try:
                register(root, aid)
            except subprocess.CalledProcessError:
                unknown.append(aid)
                continue
        aids.append(aid)
    for student, aid in [p for p in pairs if p[1] in unknown]:  # a misspelt folder: reported, never fatal
        res = Result(student, aid, status="failed",
                     why=f"there is no assignment {aid!r} in the gradebook or in solutions/: not graded")
        res.note(res.why, flag=True)
        results.append(res)
    pairs = [p for p in pairs if p[1] not in unknown]
    start = time.perf_counter()
    progress = Progress(len(pairs), quiet=quiet)
    with tempfile.TemporaryDirectory(prefix="speclab-grade-") as tmp:
        tmp = Path(tmp)
        template = tmp / "template.db"
        make_template(root, template)
        release = {}
        for aid in aids:
            for name in expected_notebooks(template, aid):
                path = root / "notebooks" / aid / f"{name}.ipynb"
                if path.is_file():
                    release[name] = nbformat.read(path, as_version=4)
        counter = iter(range(len(pairs)))
        lock = threading.Lock()
        local, procs = threading.local(), []

        def job(student, aid):
            with lock:
                n = next(counter)
            if not hasattr(local, "worker"):
                local.worker = WorkerProcess(tmp, timeout)
                with lock:
                    procs.append(local.worker)
            scratch = tmp / f"{n:05d}"
            scratch.mkdir()
            try:
                return grade_one(root, student, aid, template, release, scratch, timeout, limit, local.worker)
            except Exception as e:  # noqa: BLE001: a bug or an odd file must not stop the class
                res = Result(student, aid, status="failed", why=f"the grader failed: {type(e).__name__}: {e}")
                res.note(res.why, flag=True)
                res.scratch = scratch
                return res

        pool = ThreadPoolExecutor(workers)
        try:
            with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
                futures = [pool.submit(job, s, a) for s, a in pairs]
                for fut in as_completed(futures):
                    res = fut.result()
                    record(gb, root, res)
                    results.append(res)
                    progress.step(res)
        except BaseException:  # Ctrl-C, or a broken gradebook: stop every worker, keep what is merged
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:
                proc.kill()
            raise
        pool.shutdown()
        for proc in procs:
            proc.close()
    seconds = time.perf_counter() - start
    if export:
        nbgrader("export", "--to", str(root / "grades.csv"), "--log-level=ERROR", root=root, check=False,
                 capture=True)
        mark_for_review(root / "grades.csv", results)
    write_report(root, results)
    if not quiet:
        print(summary(results, seconds, workers, root), flush=True)
    return results


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m grading.grade", description=__doc__.split("\n")[0])
    p.add_argument("ids", nargs="*", help="assignment ids (default: every assignment in submitted/)")
    p.add_argument("-j", "--workers", type=int, default=None, help="parallel workers (default: all cores)")
    p.add_argument("--cell-timeout", type=int, default=None,
                   help="seconds a cell may run (default: Execute.timeout in grading/nbgrader_config.py)")
    p.add_argument("--submission-limit", type=float, default=None,
                   help="seconds one submission may take in all (default: 20 cell timeouts + 2 minutes)")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # a worker process
    args = p.parse_args(argv)
    if args.serve:
        serve(cell_timeout=args.cell_timeout)
        return
    grade(os.environ.get("SPECLAB_COURSE_ROOT") or REPO, only=args.ids or None, workers=args.workers,
          cell_timeout=args.cell_timeout, submission_limit=args.submission_limit)


if __name__ == "__main__":
    main()
