"""Allow-lists: the course helpers each exercise may call, read from the SOURCE notebook.

Each graded solution cell of a source notebook starts with `# Helpers you may call: a, b` (or
`none`); a cell without that line may call no helper. The names are resolved to the objects they
bind in the notebook (references.py), once per source notebook.
"""
import inspect
import re

from ..cells import grade_id, is_solution
from .references import _Analysis
from .syntax import _cached, _source_key

ALLOW_LINE = re.compile(r"^[ \t]*#[ \t]*Helpers you may call:[ \t]*(.*?)[ \t]*$", re.M | re.I)


def allow_line(src):
    """The names on a cell's `# Helpers you may call:` line: a tuple (() for none); None if absent."""
    m = ALLOW_LINE.search(src)
    if m is None:
        return None
    text = m.group(1).strip().rstrip(".")
    if text.lower() in ("none", ""):
        return ()
    return tuple(e.strip() for e in text.split(",") if e.strip())


def _solution_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells) if is_solution(c)]


def allow_lists(source_nb):
    """{grade_id: the helpers that exercise may call}, read from the source notebook's solution cells.

    A solution cell without the line may call no helper (tests/grading/test_integrity.py names it).
    """
    return {grade_id(c) or "": allow_line(c.source) or () for _, c in _solution_cells(source_nb)}


def missing_allow_lines(source_nb):
    """[(cell index, grade_id)] of solution cells whose first line is not `# Helpers you may call: ...`."""
    out = []
    for i, c in _solution_cells(source_nb):
        first = next((line for line in c.source.splitlines() if line.strip()), "")
        if allow_line(first) is None:
            out.append((i, grade_id(c) or ""))
    return out


def unresolved_allow_entries(source_nb):
    """[(grade_id, entry)] for allow-list entries that name no course helper the notebook binds
    (the notebook's own exercises may be listed too: they are the student's, always allowed)."""
    course = _Analysis()
    course.add_source(source_nb, solutions_as_course=True)
    out = []
    for gid, names in allow_lists(source_nb).items():
        for name in names:
            if name not in course.exercises and not any(r.kind in ("helper", "instance")
                                                        for r in course.resolve_name(name)):
                out.append((gid, name))
    return out


_ALLOWED = {}  # allow-lists resolved to objects, per source notebook


def _allowed_objects(source_nb):
    """(allow_lists, {grade_id: ids of the objects it allows})."""
    return _cached(_ALLOWED, _source_key(source_nb), lambda: _make_allowed(source_nb))


def _make_allowed(source_nb):
    lists = allow_lists(source_nb)
    course = _Analysis()
    course.add_source(source_nb, solutions_as_course=True)
    allowed = {gid: {id(r.obj) for name in names for r in course.resolve_name(name)
                     if r.kind in ("helper", "instance", "module")} for gid, names in lists.items()}
    return lists, allowed


def _allowed(ref, allowed_ids):
    if ref.kind in ("helper", "module"):
        return id(ref.obj) in allowed_ids or any(inspect.isclass(o) and id(o) in allowed_ids for o in ref.owners)
    if ref.kind == "instance":
        return id(ref.obj) in allowed_ids
    return False
