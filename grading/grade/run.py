"""Execution: nbgrader's autograde and generate_feedback on one scratch course, in a worker process,
with execution that survives interrupt-proof cells and dead kernels, a memory limit on the kernel,
and output capped by characters as well as by lines; then the notes on what happened when it ran."""
import hashlib
import json
import os
import re
import resource
import shutil
import time
from pathlib import Path

import jinja2
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat.notebooknode import NotebookNode
from jupyter_core.utils import run_sync
from nbgrader.api import Gradebook
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, Execute, GetGrades,
                                    IgnorePattern, LimitOutput, NbGraderPreprocessor, SaveAutoGrades)
from traitlets import Bool, Integer, Unicode

from .. import kernelwait
from ..localkernel import LocalKernelManager
from .. import sandbox as sandboxes
from ..cells import meta as nbgrader_meta
from . import intake, merge

kernelwait.install()  # in each worker process: a lost ZeroMQ wake-up must not hold a cell to its limit

MAX_OUTPUT_CHARS = 20_000     # per output of a cell, after execution; the rest is cut
TRUNCATED = "output truncated by the grader"
STOPPED = ("CellTimeoutError", "KeyboardInterrupt", "DeadKernelError")
GIB = 1 << 30


def is_memory_error(ename):
    return ename.endswith("MemoryError")  # numpy raises _ArrayMemoryError, a MemoryError


def gib(n):
    return f"{n / GIB:.3g} GiB"


class RobustExecute(Execute):
    """nbgrader's Execute, except that a cell that ignores the interrupt (catches BaseException) or kills
    the kernel does not fail the whole notebook: the cell gets an error output, the kernel is restarted, the
    cells above it are run again to rebuild the state, and grading goes on. The kernel's address space is
    limited to `memory_limit` bytes (RLIMIT_AS, set on the kernel process as it starts): an allocation past
    it raises MemoryError in the cell; if the kernel then still holds more than three quarters of it (a
    global that grew), it is restarted the same way, so the cells below get their memory back."""

    memory_limit = Integer(0, help="bytes of address space the kernel may use (0: no limit)").tag(config=True)
    pid_file = Unicode("", help="where to write the kernel's process id (its process group's)").tag(config=True)
    sandbox = Bool(False, help="start the kernel in the sandbox (grading/sandbox.py)").tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # nbgrader's Execute passes AsyncKernelManager as an argument, which config cannot change
        self.kernel_manager_class = sandboxes.SandboxedKernelManager if self.sandbox else LocalKernelManager

    def preprocess(self, nb, resources=None, km=None):
        self._skip = set()
        return super().preprocess(nb, resources, km)

    async def async_start_new_kernel(self, **kwargs):
        await super().async_start_new_kernel(**kwargs)
        self._kernel_started()

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient's sync name wraps its own coroutine

    def _kernel_started(self):
        pid = getattr(self.km.provisioner, "pid", None)
        if pid is None:
            return
        if self.pid_file:  # the parent kills this process group if the worker is killed at the limit
            Path(self.pid_file).write_text(str(pid))
        if self.memory_limit and not self.sandbox:  # the sandbox sets it inside, before the kernel starts
            resource.prlimit(pid, resource.RLIMIT_AS, (self.memory_limit, self.memory_limit))

    def _kernel_memory(self):
        """The kernel's address space in bytes (what the limit counts), or None if it cannot be read."""
        try:
            pid = getattr(self.km, "kernel_pid", None) or self.km.provisioner.pid
            status = Path(f"/proc/{pid}/status").read_text()
            return int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) * 1024
        except (OSError, AttributeError, TypeError):
            return None

    def preprocess_cell(self, cell, resources, index):
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
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
        if self.memory_limit and any(o.get("output_type") == "error" and is_memory_error(o.get("ename", ""))
                                     for o in cell.get("outputs", [])):
            held = self._kernel_memory()
            if held is None or held > self.memory_limit * 3 // 4:  # less than a quarter left for the cells below
                cell.outputs.append(NotebookNode(output_type="stream", name="stderr", text=(
                    f"[the grader: the kernel still held {gib(held or 0)} of its {gib(self.memory_limit)} after this "
                    "cell ran out of memory; it was restarted and the cells above run again]\n")))
                self._skip.add(index)
                self._restart_and_replay(index)
        return cell, resources

    def _restart(self):
        run_sync(self.km.restart_kernel)(now=True)
        self._kernel_started()
        # Ask until the new kernel answers (jupyter_client's wait_for_ready re-sends kernel_info each
        # second): a single request could reach the old kernel's socket as it went (a sandboxed kernel
        # is reached over ipc through its /proc root, renewed on restart) and cost a whole cell timeout
        # (measured: 60 s of each 67 s restart of the memory hog's kernel).
        run_sync(self.kc.wait_for_ready)(timeout=self.startup_timeout)

    def _restart_and_replay(self, upto):
        import copy

        self._restart()
        for j in range(upto):
            c = self.nb.cells[j]
            if c.cell_type != "code" or j in self._skip or any(
                    o.get("output_type") == "error"
                    and (o.get("ename") in STOPPED or is_memory_error(o.get("ename", "")))
                    for o in c.get("outputs", [])):
                continue
            try:
                super().preprocess_cell(copy.deepcopy(c), self.resources, j)
            except (CellTimeoutError, DeadKernelError):
                self._skip.add(j)
                self._restart()


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


def test_score(cell):
    """What a graded test cell scores: 0 if it has any error output, whatever came before it; else its points.

    nbgrader's determine_grade reads the outputs in order and stops at the first execute_result, taking a
    number in it as partial credit and anything else as full credit: a submission whose code calls
    sys.displayhook('ok') before failing got full marks. The course's tests never show a result, so here
    only errors count (and a result or display in a test cell is flagged: runtime_notes)."""
    points = float(_meta_points(cell))
    outputs = cell.get("outputs", [])
    if any(o.get("output_type") == "error" or (o.get("output_type") == "stream" and o.get("name") == "stderr")
           for o in outputs):
        return 0.0
    return points


def _meta_points(cell):
    return nbgrader_meta(cell).get("points", 0)


class StrictSaveAutoGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, with a test cell's score from test_score (solution cells as nbgrader does)."""

    def _add_score(self, cell, resources):
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code" or meta.get("solution"):
            return super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(meta["grade_id"], self.notebook_id, self.assignment_id, self.student_id)
        grade.auto_score = test_score(cell)
        grade.needs_manual_grade = grade.manual_score is not None
        self.gradebook.db.commit()


HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
REDACTED = "[the grader removed this output: it showed hidden test code]\n"


def _output_text(out):
    parts = [out.get("text", ""), out.get("evalue", ""), "\n".join(out.get("traceback", []) or [])]
    parts += [v for v in out.get("data", {}).values() if isinstance(v, str)]
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


class RedactHiddenTests(NbGraderPreprocessor):
    """Before ClearHiddenTests (which clears their source): an output anywhere in the notebook that shows
    hidden test code (a marker, or a line of it of 20 characters or more, also as a repr writes it) is
    replaced by a line saying so. A kernel's history (`In`, `_ih`, `inspect`) holds every test it ran."""

    def preprocess(self, nb, resources):
        visible = {ln.strip() for c in nb.cells for ln in HIDDEN_BLOCK.sub("", c.source).splitlines()}
        lines = {ln.strip() for c in nb.cells if nbgrader_meta(c).get("grade")
                 for block in HIDDEN_BLOCK.findall(c.source) for ln in block.splitlines()}
        needles = {"BEGIN HIDDEN TESTS", "END HIDDEN TESTS"}
        for ln in lines - visible:
            if len(ln) >= 20:
                needles |= {ln, repr(ln)[1:-1], json.dumps(ln)[1:-1]}
        for cell in nb.cells:
            if not nbgrader_meta(cell).get("grade") or nbgrader_meta(cell).get("solution"):
                # nbgrader's ClearHiddenTests reads every cell: the marker's text in a student's own cell made it
                # fail ("No end hidden tests statement found") and the page was not written
                for marker in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
                    cell.source = cell.source.replace(marker, marker.replace(" ", "-"))
            if cell.cell_type != "code":
                continue
            for i, out in enumerate(cell.get("outputs", [])):
                text = _output_text(out)
                if any(n in text for n in needles):
                    cell.outputs[i] = NotebookNode(output_type="stream", name="stdout", text=REDACTED)
        return nb, resources


class _CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates, kept in memory for the worker's life (keyed by name and source checksum)."""

    def __init__(self):
        self.store = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.store:
            bucket.bytecode_from_string(self.store[bucket.key])

    def dump_bytecode(self, bucket):
        self.store[bucket.key] = bucket.bytecode_to_string()


# What a feedback page keeps of the HTML a markdown cell renders to (bleach's allow-list, as nbconvert's
# clean_html, with headings, paragraphs, images and tables): no script, style, iframe or event handler.
SAFE_TAGS = ["a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
             "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "span", "strong",
             "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "u", "ul"]
SAFE_ATTRIBUTES = {"*": ["class", "id", "title", "align"], "a": ["href"], "img": ["src", "alt", "width", "height"],
                   "td": ["colspan", "rowspan"], "th": ["colspan", "rowspan"]}


def clean_html(html):
    import bleach

    return bleach.clean(html, tags=SAFE_TAGS, attributes=SAFE_ATTRIBUTES,
                        protocols=["http", "https", "mailto", "data"], strip=True)


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTMLExporter (nbgrader's for feedback), whose templates are compiled once per worker:
    nbgrader makes a new exporter per generate_feedback call, and compiling the feedback template cost
    more than rendering it. Only the compiling is shared; each page is rendered by its own exporter.

    The page is sanitised: nbconvert's sanitize_html cleans the HTML outputs, and markdown is cleaned
    here once rendered (nbgrader's feedback template does not ask nbconvert to clean markdown)."""

    compiled = _CompiledTemplates()
    sanitize_html = Bool(True, help="strip scripts and event handlers from markdown and outputs").tag(config=True)

    @jinja2.pass_context
    def markdown2html(self, context, source):
        return clean_html(super().markdown2html(context, source))

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = self.compiled
        return environment


# nbgrader's autograde preprocessors, with RobustExecute for Execute and CapOutput before LimitOutput
PREPROCESSORS = [RobustExecute, IgnorePattern, ClearMetadataPreprocessor, CapOutput, LimitOutput,
                 StrictSaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# nbgrader_config.py's feedback preprocessors, with RedactHiddenTests before ClearHiddenTests
FEEDBACK = [GetGrades, RedactHiddenTests, ClearHiddenTests, CSSHTMLHeaderPreprocessor]


def _config(base, scratch, cell_timeout, memory_limit, sandbox=False, cpu_limit=0):
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
    config.Autograde.autograde_preprocessors = PREPROCESSORS
    config.GenerateFeedback.exporter_class = FeedbackExporter
    config.GenerateFeedback.preprocessors = FEEDBACK
    return config


def autograde(base_config, scratch, aid, student, cell_timeout=None, memory_limit=0, sandbox=False, cpu_limit=0):
    """nbgrader's autograde and generate_feedback in the scratch course (through NbGraderAPI, in this
    process); returns the scores it recorded, as plain data."""
    from nbgrader.apps import NbGraderAPI

    scratch = Path(scratch)
    os.environ["SPECLAB_COURSE_ROOT"] = str(scratch / "course")
    config = _config(base_config, scratch, cell_timeout, memory_limit, sandbox, cpu_limit)
    if sandbox:
        (scratch / "kernel").mkdir(mode=0o700, exist_ok=True)
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
    return out


# ----------------------------------------------------------------------------- what happened when it ran

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


def runtime_notes(res, autograded_nb, timeout, memory_limit=0):
    """Notes from the executed notebook: stopped cells, dead kernels, memory, errors outside tests, cut output."""
    try:
        cells = json.loads(Path(autograded_nb).read_text(encoding="utf-8"))["cells"]
    except Exception:
        return
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        meta = nbgrader_meta(cell)
        name = meta.get("grade_id") or f"number {i + 1}"
        zero = "; it scores 0" if meta.get("grade") else ""
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                ename, evalue = out.get("ename", ""), out.get("evalue", "")
                if ename == "CellTimeoutError" and "restarted" in evalue:
                    res.note(f"cell {name} ran longer than {timeout} s and ignored the interrupt (does it catch "
                             "BaseException?): the kernel was restarted, the cells above it run again, and "
                             "grading went on" + zero)
                elif ename in ("CellTimeoutError", "KeyboardInterrupt"):
                    res.note(f"cell {name} ran longer than {timeout} s and was stopped (an endless loop?)" + zero)
                elif ename == "DeadKernelError":
                    res.note(f"cell {name} crashed the Python kernel; it was restarted and grading went on")
                elif is_memory_error(ename):
                    limit = f"the grader lets a submission use {gib(memory_limit)}" if memory_limit else "no limit set"
                    res.note(f"cell {name} ran out of memory ({limit}): it was stopped with a MemoryError and grading "
                             "went on" + zero)
                elif "Read-only file system" in evalue or ename == "PermissionError":
                    res.note(f"cell {name} tried to write outside its working folder ({ename}: {evalue[:120]}); "
                             "the grader's sandbox let it write nowhere else", flag=True)
                elif (meta.get("solution") and ename != "NotImplementedError") or ename in (
                        "ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError"):
                    # an exercise cell that fails, or code that cannot even be imported or parsed;
                    # failing tests and the demo cells below a wrong answer speak for themselves
                    res.note(f"cell {name} raised {ename}: {evalue[:120]}")
            elif kind in ("execute_result", "display_data") and meta.get("grade") and not meta.get("solution"):
                res.note(f"test cell {name} showed a result ({kind}), which the course's tests never do: the "
                         "submission's code displayed something while it was tested", flag=True)
            elif kind == "stream" and TRUNCATED in "".join(out.get("text", "")):
                res.note(f"cell {name} printed more output than the grader keeps: only the first "
                         f"{MAX_OUTPUT_CHARS:,} characters of each output are shown")


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
    res = intake.prepare(job)
    res.timings["intake"] = time.perf_counter() - start
    scratch, student, aid = Path(job.scratch), job.student, job.aid
    course = scratch / "course"
    if res.status != "failed":
        skip = [f"autograded/{student}/{aid}", f"feedback/{student}/{aid}", ".nbgrader.log"]
        before = tree_state(course, skip)
        t = time.perf_counter()
        try:
            record = autograde(base_config, scratch, aid, student, job.cell_timeout, job.memory_limit,
                               job.sandbox, job.cpu_limit)
        except Exception as e:  # reported as this submission's failure
            record = {"success": False, "error": f"{type(e).__name__}: {e}"}
        res.timings["nbgrader"] = time.perf_counter() - t
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
        res.timings["notes"] = time.perf_counter() - t
    t = time.perf_counter()
    merge.publish(job.root, res, scratch, job.notebooks)
    shutil.rmtree(scratch, ignore_errors=True)
    res.timings["publish"] = time.perf_counter() - t
    res.timings["cpu"] = cpu_seconds() - cpu  # the worker's and its kernel's, for `make bench`
    res.timings["sandboxed kernels cpu"] = sandboxes.KERNEL_CPU[0] - kernels  # in "cpu" too; not in getrusage
    res.seconds = time.perf_counter() - start
    return res
