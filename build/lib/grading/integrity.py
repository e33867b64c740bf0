"""Integrity scan: find student code that tampers with what the graded tests rely on.

Graded tests run in the student's kernel after the student's code, so a solution
cell could replace what the tests call. This scan reads every code cell that is not
the course's own (new cells and edited ones) and flags, with the cell and the line:

  - an assignment into a module or into builtins   (np.isclose = ..., builtins.abs = ...)
  - setattr / delattr / exec / eval / __import__ / globals() / sys.modules
  - a top-level rebinding of a name the tests use  (check_close = ..., del np, P = ...)
  - a use of the course's reference version of an exercise
    (from speclab.speculative import residual, or speculative.residual(...))

`sanitize` returns a copy of the notebook with each flagged statement replaced by
`pass`, so a tampering submission is graded on its own merits: whatever the
tampering was meant to hide shows up as a failed test.
"""
import ast
import copy
import symtable
from dataclasses import dataclass

import nbformat

BUILTIN_MODULES = {"builtins", "__builtins__", "sys", "importlib", "speclab"}
DANGEROUS_CALLS = {"setattr", "delattr", "exec", "eval", "compile", "__import__", "globals", "vars"}


@dataclass(frozen=True)
class Finding:
    cell: int          # index of the cell in the notebook
    grade_id: str      # the solution cell's id, or "" for a cell the student added
    line: int          # line number inside the cell
    code: str          # that line
    why: str

    def __str__(self):
        where = f"cell {self.cell}" + (f" ({self.grade_id})" if self.grade_id else " (added by the student)")
        return f"{where}, line {self.line}: {self.why}: `{self.code.strip()}`"


def _nbgrader(cell):
    return cell.metadata.get("nbgrader", {})


def course_context(source_nb):
    """What the course's own cells provide: trusted sources, protected names, exercise names."""
    trusted, protected, modules, exercises = set(), set(), set(BUILTIN_MODULES), set()
    for cell in source_nb.cells:
        if cell.cell_type != "code":
            continue
        meta = _nbgrader(cell)
        tree = _parse(cell.source)
        if meta.get("solution"):
            exercises |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} if tree else set()
            continue
        trusted.add(cell.source.strip())
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bound = (alias.asname or alias.name).split(".")[0]
                    modules.add(bound)
                    protected.add(bound)
        if meta.get("grade"):
            protected |= free_names(cell.source)
    protected -= exercises
    protected = {n for n in protected if not n.startswith("_")}  # test-local scratch names
    return trusted, protected, modules, exercises


def free_names(src):
    """Names a cell reads from the notebook's namespace without binding them itself."""
    top = symtable.symtable(src, "<cell>", "exec")
    names = {s.get_name() for s in top.get_symbols() if s.is_referenced() and not s.is_assigned()
             and not s.is_imported()}
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        if table.get_type() == "function":
            assigned = {s.get_name() for s in top.get_symbols() if s.is_assigned()}
            names |= set(table.get_globals()) - assigned
    return names


def _parse(src):
    try:
        return ast.parse(src)
    except SyntaxError:
        return None


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    if isinstance(node, ast.Call):  # globals()[...] = ..., vars(np)[...] = ...
        return getattr(node.func, "id", None)
    return node.id if isinstance(node, ast.Name) else None


def _targets(stmt):
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    if isinstance(stmt, ast.Delete):
        return stmt.targets
    return []


def _flatten(targets):
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            yield from _flatten(t.elts)
        elif isinstance(t, ast.Starred):
            yield from _flatten([t.value])
        else:
            yield t


def scan_cell(src, protected, modules, exercises):
    """[(line, why)] for one cell's source."""
    tree = _parse(src)
    if tree is None:
        return []
    found = []
    modules = set(modules)
    for node in ast.walk(tree):  # modules the cell imports itself are modules too
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
    for node in ast.walk(tree):
        for t in _flatten(_targets(node)):
            root = _root(t)
            if isinstance(t, (ast.Attribute, ast.Subscript)) and root in modules | {"globals", "vars"}:
                verb = "deletes from" if isinstance(node, ast.Delete) else "assigns into"
                found.append((node.lineno, f"{verb} `{root}`, which the tests use"))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in DANGEROUS_CALLS:
            found.append((node.lineno, f"calls {node.func.id}(), which can change what the tests see"))
        if isinstance(node, ast.Attribute) and node.attr == "modules" and _root(node) == "sys":
            found.append((node.lineno, "touches sys.modules"))
        if isinstance(node, ast.Attribute) and node.attr in exercises and _root(node) in modules:
            found.append((node.lineno, f"uses the course's reference {node.attr} instead of writing it"))
        if isinstance(node, ast.Global):
            hit = sorted(set(node.names) & protected)
            if hit:
                found.append((node.lineno, f"declares {', '.join(hit)} global, which the tests use"))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("speclab"):
            hit = sorted({a.name for a in node.names} & exercises)
            if hit:
                found.append((node.lineno, f"imports the course's reference {', '.join(hit)} instead of writing it"))
    for stmt in tree.body:  # top-level rebinding of a name the tests rely on
        names = set()
        for t in _flatten(_targets(stmt)):
            if isinstance(t, ast.Name):
                names.add(t.id)
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
            names -= {"numpy", "np", "math"}  # re-importing the same modules is harmless
        hit = sorted(names & protected)
        if hit:
            found.append((stmt.lineno, f"rebinds {', '.join(hit)}, which the tests use"))
    return sorted(set(found))


def scan(submission_nb, source_nb):
    """Findings for every student-written code cell of a submission."""
    trusted, protected, modules, exercises = course_context(source_nb)
    findings = []
    for i, cell in enumerate(submission_nb.cells):
        if cell.cell_type != "code" or _nbgrader(cell).get("grade"):
            continue  # graded test cells are restored from the gradebook before grading
        if cell.source.strip() in trusted:
            continue
        lines = cell.source.splitlines()
        for line, why in scan_cell(cell.source, protected, modules, exercises):
            findings.append(Finding(i, _nbgrader(cell).get("grade_id", ""), line,
                                    lines[line - 1] if line <= len(lines) else "", why))
    return findings


def sanitize(submission_nb, findings):
    """A copy of the notebook with every flagged statement replaced by `pass`."""
    nb = copy.deepcopy(submission_nb)
    by_cell = {}
    for f in findings:
        by_cell.setdefault(f.cell, set()).add(f.line)
    for i, lines in by_cell.items():
        cell = nb.cells[i]
        tree = _parse(cell.source)
        src = cell.source.splitlines()
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and node.lineno in lines:
                indent = src[node.lineno - 1][: len(src[node.lineno - 1]) - len(src[node.lineno - 1].lstrip())]
                src[node.lineno - 1] = indent + "pass  # removed by the integrity scan"
                for j in range(node.lineno, node.end_lineno):
                    src[j] = ""
                lines.discard(node.lineno)
        cell.source = "\n".join(src)
    return nb


def scan_file(submission_path, source_path):
    return scan(nbformat.read(submission_path, as_version=4), nbformat.read(source_path, as_version=4))
