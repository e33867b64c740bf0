"""The course's own steps for `nbgrader autograde` and `nbgrader generate_feedback` run by hand or from the
formgrader's Autograde and Generate Feedback buttons: the same sandbox, integrity scan and notes as
`make grade`, in place in the course (grading/nbgrader_config.py names these steps).

`make grade` grades each submission in a scratch course and puts its own steps in place of these
(grading/grade/run.py); everything below is for the paths nbgrader itself drives:

- CourseMend (first of nbgrader's sanitizing steps): a cell whose nbgrader type was changed, or that an
  older release had, is put back as `make grade`'s intake does, so nbgrader's OverwriteCells can grade it;
- CourseIntake (first of the autograde steps): refuses, naming `make grade`, where the sandbox cannot
  start; runs the integrity scan and removes the flagged lines;
- Sandboxed: `make grade`'s execution (BoxedExecute: the kernel and the judge that runs the hidden tests, in a
  fresh sandbox of their own, grading/judge/box.py, never in the server's process), every kernel in the sandbox,
  with its memory and CPU limits;
- CourseNotes (last): the notes on what happened (flagged in the gradebook, so the formgrader marks the
  submission; written to autograded/grading-report.csv, so grades.csv's `review` column has them);
- CourseFeedback (the feedback exporter): the sanitised page of `make grade`, with its "Grading notes"
  box from the grading report.
"""
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.preprocessors import (CheckCellMetadata, ClearOutput, DeduplicateIds, Execute, NbGraderPreprocessor,
                                    OverwriteKernelspec)
from traitlets import Bool

from . import integrity, reveal
from .checksums import ReleasedOverwriteCells
from .kernels import sandbox as sandboxes
from .grade.feedback import FeedbackExporter
from .grade import received
from .grade.intake import Result, compare_with_release
from .judge import box
from .judge.box import BoxedExecute
from .judge.execute import JudgeExecute
from .grade.merge import NOTES_START, notes_html
from .grade.notes import runtime_notes
from .grade.report import read_report, write_report
from .grade.run import FEEDBACK as GRADE_FEEDBACK, PREPROCESSORS

SAFE_PATH = "make grade"

# Notes per submission, from the first step to the last, in this process: {(student, assignment): Result}.
_PENDING = {}


class NotSandboxed(RuntimeError):
    """The sandbox cannot start here: this path refuses and names the one that can grade without it."""


def refusal(why):
    return (f"the course refuses to run students' code outside its sandbox: {why}. The formgrader's Autograde "
            f"and `nbgrader autograde` have no way around it; `{SAFE_PATH}` has one, only for submissions you "
            "trust: `make grade GRADE_ARGS=--no-sandbox`")


def course_root(config):
    from nbgrader.coursedir import CourseDirectory

    return Path(CourseDirectory(config=config).root)


def _key(resources):
    info = resources.get("nbgrader", {})
    return info.get("student"), info.get("assignment"), info.get("notebook")


def _pending(resources):
    student, aid, _ = _key(resources)
    if (student, aid) not in _PENDING:
        _PENDING[(student, aid)] = Result(student, aid)
        _PENDING[(student, aid)].started = time.perf_counter()
    return _PENDING[(student, aid)]


def _read(path):
    return nbformat.read(path, as_version=4) if Path(path).is_file() else None


class CourseMend(NbGraderPreprocessor):
    """Before nbgrader's sanitizing steps: the submission's nbgrader cells compared with the released
    student copy (notebooks/<id>/), mended as `make grade`'s intake mends them, with the same notes."""

    def preprocess(self, nb, resources):
        student, aid, name = _key(resources)
        _PENDING.pop((student, aid), None)  # a new run of this submission
        release = _read(course_root(self.config) / "notebooks" / aid / f"{name}.ipynb")
        if release is not None:
            notes, _ = compare_with_release(nb, release)
            res = _pending(resources)
            for n in notes:
                res.note(n, flag=True)
        return nb, resources


class CourseIntake(NbGraderPreprocessor):
    """First of the autograde steps: no sandbox, no grading; then the integrity scan, as in `make grade`."""

    def preprocess(self, nb, resources):
        ok, why = box.available()
        if not ok:
            raise NotSandboxed(refusal(why))
        student, aid, name = _key(resources)
        res = _pending(resources)
        seen = reveal.seen_note(course_root(self.config) / "submitted" / str(student) / str(aid))
        if seen and seen not in res.notes:
            res.note(seen, flag=True)
        received.charge(resources["nbgrader"]["db_url"], course_root(self.config), student, aid, res)  # not timestamp.txt
        source = _read(course_root(self.config) / "solutions" / aid / f"{name}.ipynb")
        if source is not None:
            findings = integrity.scan(nb, source)
            for f in findings:
                res.note(f"integrity: {f} (this line was ignored when grading)", flag=True)
            if findings:
                res.findings += findings
                nb = integrity.sanitize(nb, findings)
        return nb, resources


def default_memory_limit():
    from .grade import default_memory_limit as per_worker

    return per_worker(1)


class Sandboxed:
    """Mixed into `make grade`'s execution step (RobustExecute): every kernel in the sandbox (this path has
    no --no-sandbox), each with a private folder of its own for its connection file. Limits:
    SandboxedKernelManager.memory_limit and cpu_limit (grading/nbgrader_config.py sets them as `make grade`
    would for one worker)."""

    def preprocess(self, nb, resources=None, km=None):
        ok, why = box.available()
        if not ok:
            raise NotSandboxed(refusal(why))
        self._folder = tempfile.mkdtemp(prefix="speclab-kernel-")
        try:
            return super().preprocess(nb, resources, km)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)

    def create_kernel_manager(self):
        config = self.config.copy()
        config.SandboxedKernelManager.folder = self._folder
        self.kernel_manager_class = sandboxes.SandboxedKernelManager
        kernel_name = self.kernel_name or self.nb.metadata.get("kernelspec", {}).get("name")
        if kernel_name:
            self.kernel_name = kernel_name
            self.km = self.kernel_manager_class(kernel_name=kernel_name, config=config)
        else:
            self.km = self.kernel_manager_class(config=config)
        return self.km


class SandboxedExecute(Sandboxed, BoxedExecute):
    """make grade's execution step (JudgeExecute, a RobustExecute), always in the sandbox (a class of its own, so
    make grade's workers can unpickle a config that names it)."""

    sandbox = Bool(True, help="always: this path cannot run without the sandbox").tag(config=False)


def sandboxed(steps):
    """make grade's autograde steps with its execution step (JudgeExecute, a RobustExecute) sandboxed; refuses
    (ImportError) steps that execute the notebook some other way, which would run students' code outside the
    sandbox, or without the judge."""
    out = [SandboxedExecute if step in (JudgeExecute, BoxedExecute) else step for step in steps]
    if out.count(SandboxedExecute) != 1 or any(issubclass(step, Execute) and step is not SandboxedExecute
                                               for step in out):
        raise ImportError(f"grading/nbgrader_steps.py: make grade's steps {steps} have no single JudgeExecute to "
                          "sandbox; nbgrader's own paths would run students' code outside the sandbox")
    return out


class CourseNotes(NbGraderPreprocessor):
    """Last of the autograde steps: what happened, in `make grade`'s words, flagged in the gradebook and
    written to autograded/grading-report.csv (one row per submission, as `make grade` writes it)."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        student, aid, name = _key(resources)
        res = _pending(resources)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{name}.ipynb"
            nbformat.write(nb, path)
            timeout = self.config.Execute.get("timeout", 60)
            memory = self.config.SandboxedKernelManager.get("memory_limit", 0)
            runtime_notes(res, path, timeout, memory)
        with Gradebook(resources["nbgrader"]["db_url"]) as gb:
            sub_nb = gb.find_submission_notebook(name, aid, student)
            sub_nb.flagged = bool(res.flagged)
            gb.db.commit()
            sub = gb.find_submission(aid, student)
            res.score, res.max_score = sub.score, sub.max_score
        res.seconds = time.perf_counter() - getattr(res, "started", time.perf_counter())
        write_report(course_root(self.config), [res])
        return nb, resources


class CourseFeedback(FeedbackExporter):
    """`make grade`'s feedback page (sanitised), with the submission's "Grading notes" box from the grading
    report, so a page made again by the formgrader's Generate Feedback keeps them."""

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        student, aid, _ = _key(resources or {})
        row = read_report(course_root(self.config)).get((aid, student))
        if row and row.get("notes") and NOTES_START not in output:
            notes = Result(student, aid, notes=row["notes"].split(" | "))
            at = output.find(">", output.find("<body")) + 1 if "<body" in output else 0
            output = output[:at] + notes_html(notes) + output[at:]
        return output, resources



# nbgrader's sanitizing steps, CourseMend first
# ReleasedOverwriteCells: nbgrader's OverwriteCells, silent on a test cell as released (grading/checksums.py)
SANITIZE = [CourseMend, ClearOutput, DeduplicateIds, OverwriteKernelspec, ReleasedOverwriteCells, CheckCellMetadata]
# make grade's autograde steps (grading/grade/run.py), sandboxed, between the scan and the notes
AUTOGRADE = [CourseIntake, *sandboxed(PREPROCESSORS), CourseNotes]
# make grade's feedback steps
FEEDBACK = list(GRADE_FEEDBACK)


def stock_config(root=None):
    """The course's nbgrader config without the steps above (nbgrader's own autograde and feedback steps):
    stock nbgrader, unsandboxed, for comparisons only (a bench's or a test's "stock" run), never for grading."""
    from .course import load_config

    config = load_config(root)
    for section, names in (("Autograde", ("sanitize_preprocessors", "autograde_preprocessors")),
                           ("GenerateFeedback", ("preprocessors", "exporter_class"))):
        for name in names:
            config[section].pop(name, None)
    return config
