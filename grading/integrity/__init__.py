"""Integrity scan: find student code that tampers with what the graded tests rely on,
or that hands an exercise's work to a course helper.

Graded tests run in the student's kernel after the student's code, so a solution
cell could replace what the tests call. This scan reads every code cell that is not
the course's own (new cells and edited ones) and flags, with the cell and the line:

  - an assignment into a module or into builtins   (np.isclose = ..., builtins.abs = ...)
  - setattr / delattr / exec / eval / __import__ / globals() / sys.modules
  - a top-level rebinding of a name the tests use  (check_close = ..., del np, P = ...)
  - a use of the course's reference version of an exercise
    (from speclab.rules.speculative import residual, or speculative.residual(...))
  - delegation: a solution cell that uses a course helper (any function, class or method
    reachable from the speclab package: under any name, through a module attribute, a
    class, a method, getattr or importlib, or a function of the student's own that uses
    one) which is not on its exercise's allow-list. The allow-list is the solution cell's
    first line in the SOURCE notebook, `# Helpers you may call: a, b` (or `none`); a cell
    without that line may call no helper. The student's own exercises are not helpers.

One module per concern, each read top to bottom:
  syntax.py      a cell's syntax tree as IPython runs it, and the small readers the others share
  tamper.py      tampering (and the IPython shell, sys's hooks, code rewriting), cell by cell
  bindings.py    where each name is bound, scope by scope (course cells and the student's)
  references.py  what a name can hold: the course helpers reached, through the student's own code
  allowlists.py  the helpers each exercise may call, from the source notebook
  delegation.py  a solution cell that uses a helper its exercise does not allow
  sanitize.py    the notebook with every flagged statement replaced by `pass`
This module puts them together: `scan` (the findings) and `sanitize`.

`sanitize` returns a copy of the notebook with each flagged statement replaced by
`pass`, so a tampering submission is graded on its own merits: whatever the
tampering was meant to hide shows up as a failed test, and a delegated exercise
loses its points.
"""
from dataclasses import dataclass

import nbformat

from ..cells import grade_id as _grade_id, is_graded
from .allowlists import allow_line, allow_lists, missing_allow_lines, unresolved_allow_entries  # noqa: F401
from .delegation import DELEGATES, _Delegation
from .references import _IPYTHON
from .sanitize import sanitize  # noqa: F401
from .syntax import _cached, _source_key, free_names  # noqa: F401
from .tamper import course_context, course_imports, scan_cell


@dataclass(frozen=True)
class Finding:
    cell: int          # index of the cell in the notebook
    grade_id: str      # the solution cell's id, or "" for a cell the student added
    line: int          # line number inside the cell
    code: str          # that line
    why: str
    kind: str = "tamper"  # "tamper", or "delegate": the work handed to a course helper

    def __str__(self):
        where = f"cell {self.cell}" + (f" ({self.grade_id})" if self.grade_id else " (added by the student)")
        return f"{where}, line {self.line}: {self.why}: `{self.code.strip()}`"


_CONTEXT, _IMPORTS = {}, {}  # course_context and course_imports, per source notebook


def scan(submission_nb, source_nb):
    """Findings for every student-written code cell of a submission."""
    trusted, protected, modules, exercises = _cached(_CONTEXT, _source_key(source_nb), lambda: course_context(source_nb))
    imports = _cached(_IMPORTS, _source_key(source_nb), lambda: course_imports(source_nb))
    scanned = [i for i, cell in enumerate(submission_nb.cells)
               if cell.cell_type == "code" and not is_graded(cell)  # graded test cells are
               and cell.source.strip() not in trusted]                          # restored before grading
    delegation = _Delegation(submission_nb, source_nb, skip=set(range(len(submission_nb.cells))) - set(scanned))
    findings = []
    for i in scanned:
        cell = submission_nb.cells[i]
        grade_id = _grade_id(cell) or ""
        lines = cell.source.splitlines()
        code = lambda line: lines[line - 1] if 0 < line <= len(lines) else ""  # noqa: E731
        tampering = scan_cell(cell.source, protected, modules, exercises, imports)
        reference = {line for line, why in tampering if "reference" in why}
        found = [Finding(i, grade_id, line, code(line), why, kind="delegate" if line in reference else "tamper")
                 for line, why in tampering]
        shell = {line for line, why in tampering if "IPython" in why or "get_ipython" in why}
        found += [Finding(i, grade_id, line, code(line), why, kind="delegate")
                  for line, why in delegation.findings(i, grade_id)
                  if not (line in reference and why.startswith(DELEGATES))  # said once, by the reference rule
                  and not (line in shell and why == _IPYTHON)]               # ... and by the shell rule
        findings += sorted(found, key=lambda f: f.line)
    return findings


def scan_file(submission_path, source_path):
    return scan(nbformat.read(submission_path, as_version=4), nbformat.read(source_path, as_version=4))
