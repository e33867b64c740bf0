"""One submission, in a worker process: intake, then nbgrader's autograde and generate_feedback on its
scratch course with our steps in place of some of nbgrader's (kernels/robust.py: execution that survives
interrupt-proof cells, dead kernels and memory hogs; kernels/outputs.py: output capped by characters; scores.py: tests
scored by their errors; feedback.py: the feedback page), then the notes on what happened (notes.py)."""
import os
import re
import resource
import shutil
import time
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.api import Gradebook
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, GetGrades,
                                    IgnorePattern, LimitOutput)

from ..judge.box import BoxedExecute
from ..kernels import kernelwait, sandbox as sandboxes, timeline, watchdog
from ..kernels.timeline import mark
from ..kernels.outputs import CapOutput
from ..reveal import PlaceReveals
from . import intake, merge
from .feedback import FeedbackExporter, RedactHiddenTests
from .notes import changes, runtime_notes, tree_state
from .scores import StrictSaveAutoGrades

kernelwait.install()  # in each worker process: a lost ZeroMQ wake-up must not hold a cell to its limit


# nbgrader's autograde preprocessors, with BoxedExecute (JudgeExecute: RobustExecute, tests run by the judge; in
# a fresh sandbox of its own where the kernel is sandboxed, grading/judge/box.py) for Execute and CapOutput before LimitOutput
PREPROCESSORS = [BoxedExecute, IgnorePattern, ClearMetadataPreprocessor, CapOutput, LimitOutput,
                 StrictSaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# nbgrader_config.py's feedback preprocessors, with RedactHiddenTests before ClearHiddenTests, and the source's
# reveals in place of their pointers (PlaceReveals)
FEEDBACK = [GetGrades, RedactHiddenTests, ClearHiddenTests, PlaceReveals, CSSHTMLHeaderPreprocessor]


def _config(base, scratch, cell_timeout, memory_limit, sandbox=False, cpu_limit=0, aid="", judge=True):
    config = base.copy()
    config.CourseDirectory.root = str(scratch / "course")
    config.CourseDirectory.db_url = f"sqlite:///{scratch / 'gradebook.db'}"
    if cell_timeout:
        config.Execute.timeout = int(cell_timeout)
    config.RobustExecute.memory_limit = int(memory_limit or 0)
    config.RobustExecute.pid_file = str(scratch / "kernel.pid")
    config.RobustExecute.sandbox = bool(sandbox)
    config.SandboxedKernelManager.memory_limit = int(memory_limit or 0)
    config.SandboxedKernelManager.cpu_limit = int(cpu_limit or 0)
    config.SandboxedKernelManager.folder = str(scratch / "kernel")
    config.JudgeExecute.judge = bool(judge)
    config.JudgeExecute.source = str(scratch / "course" / config.CourseDirectory.get("source_directory", "solutions")
                                     / aid) if aid else ""
    config.Autograde.autograde_preprocessors = PREPROCESSORS
    config.GenerateFeedback.exporter_class = FeedbackExporter
    config.GenerateFeedback.preprocessors = FEEDBACK
    return config


def autograde(base_config, scratch, aid, student, cell_timeout=None, memory_limit=0, sandbox=False, cpu_limit=0,
              judge=True):
    """nbgrader's autograde and generate_feedback in the scratch course (through NbGraderAPI, in this
    process); returns the scores it recorded, as plain data."""
    from nbgrader.apps import NbGraderAPI

    scratch = Path(scratch)
    os.environ["SPECLAB_COURSE_ROOT"] = str(scratch / "course")
    config = _config(base_config, scratch, cell_timeout, memory_limit, sandbox, cpu_limit, aid, judge)
    if sandbox:
        (scratch / "kernel").mkdir(mode=0o700, exist_ok=True)
    api = NbGraderAPI(config=config)
    out = {"success": False}
    graded = api.autograde(aid, student, force=True, create=True)
    out["success"] = bool(graded.get("success"))
    errors = [ln.strip() for ln in (graded.get("error") or "").splitlines() + (graded.get("log") or "").splitlines()
              if re.match(r"\s*\w+(\.\w+)*(Error|Exception|Interrupt)\b:", ln) and "Please see the" not in ln]
    out["error"] = errors[-1] if errors else (graded.get("error") or "")[-300:]
    mark("worker: autograded")
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
    return out



# ----------------------------------------------------------------------------- one submission, in a worker

def cpu_seconds():
    """CPU seconds this process and its finished children (kernels) have used; a sandboxed kernel's are counted
    as it ends (sandbox.KERNEL_CPU: it is reaped inside its sandbox)."""
    return sandboxes.KERNEL_CPU[0] + sum(r.ru_utime + r.ru_stime for r in (
        resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


def grade_submission(job, base_config):
    """Intake, autograde, feedback and notes for one submission; its autograded notebook and feedback page
    go into the course. Runs in a worker process; returns the Result with the scores to merge."""
    start, cpu, kernels = time.perf_counter(), cpu_seconds(), sandboxes.KERNEL_CPU[0]
    limits = len(watchdog.EVENTS), len(watchdog.SANDBOXES)  # what the sandbox's watchdog did to this one
    timeline.MARKS.clear()
    mark("worker: took it")
    res = intake.prepare(job)
    mark("worker: intake done")
    res.timings["intake"] = time.perf_counter() - start
    scratch, student, aid = Path(job.scratch), job.student, job.aid
    course = scratch / "course"
    if res.status != "failed":
        skip = [f"autograded/{student}/{aid}", f"feedback/{student}/{aid}", ".nbgrader.log"]
        before = tree_state(course, skip)
        t = time.perf_counter()
        try:
            record = autograde(base_config, scratch, aid, student, job.cell_timeout, job.memory_limit,
                               job.sandbox, job.cpu_limit, getattr(job, "judge", True))
        except Exception as e:  # reported as this submission's failure
            record = {"success": False, "error": f"{type(e).__name__}: {e}"}
        res.timings["nbgrader"] = time.perf_counter() - t
        mark("worker: autograde and feedback done")
        t = time.perf_counter()
        if record["success"]:
            res.record = record
            res.score, res.max_score = record["score"], record["max_score"]
            if not record.get("feedback"):
                res.note("nbgrader could not write the feedback page; the score stands", flag=True)
        else:
            lines = [ln for ln in record.get("error", "").strip().splitlines() if ln.strip()]
            res.fail(f"nbgrader could not grade it: {(lines or ['?'])[-1][:200]}")
        done = changes(before, tree_state(course, skip))
        if done:
            shown = ", ".join(done[:5]) + (f" and {len(done) - 5} more" if len(done) > 5 else "")
            res.note(f"the submission changed files outside its folder while it ran ({shown}); this happened in a "
                     "scratch copy of the course, and nothing in the course itself was changed", flag=True)
        for nb in sorted((course / "autograded" / student / aid).glob("*.ipynb")):
            runtime_notes(res, nb, job.cell_timeout, job.memory_limit)
        for text in watchdog.notes(*limits):
            res.note(text)
        res.timings["sandbox paused"] = watchdog.paused(limits[1])
        res.timings["notes"] = time.perf_counter() - t
    t = time.perf_counter()
    merge.publish(job.root, res, scratch, job.notebooks)
    shutil.rmtree(scratch, ignore_errors=True)
    res.timings["publish"] = time.perf_counter() - t
    res.timings["cpu"] = cpu_seconds() - cpu  # the worker's and its kernel's, for `make bench`
    res.timings["sandboxed kernels cpu"] = sandboxes.KERNEL_CPU[0] - kernels  # in "cpu" too; not in getrusage
    res.seconds = time.perf_counter() - start
    mark("worker: published")
    res.timeline = list(timeline.MARKS)
    return res
