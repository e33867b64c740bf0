"""Delegation: a solution cell may use only the course helpers its exercise allows (allowlists.py),
however it reaches them (references.py)."""
import ast

from .allowlists import _allowed, _allowed_objects
from .references import _Analysis, _qual
from .syntax import _flatten, _parse, _statement_lines, _targets

DELEGATES = "hands the work to the course helper"  # how every delegation finding begins


def _named(ref, written):
    if ref.kind == "instance":
        return f"`{written}` (an instance of {_qual(ref.obj)})"
    if ref.kind == "module":
        return f"the course module {ref.obj.__name__} (`{written}`)"
    return f"`{written}` ({_qual(ref.obj)})"


def _top_bound_names(stmt):
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    names = []
    for t in _flatten(_targets(stmt)):
        if isinstance(t, ast.Name):
            names.append(t.id)
    return names


class _Delegation:
    """The delegation findings of one submission, against its source notebook's allow-lists."""

    def __init__(self, submission_nb, source_nb, skip):
        self.lists, self.allowed = _allowed_objects(source_nb)
        self.an = _Analysis()
        self.an.add_source(source_nb)
        self.trees = {}
        for i, cell in enumerate(submission_nb.cells):
            if i in skip or cell.cell_type != "code":
                continue
            tree = _parse(cell.source)
            if tree is not None:
                self.trees[i] = tree
                self.an.add_tree(tree, i, course=False)

    def _rule(self, gid):
        names = self.lists.get(gid, ())
        return f"; {gid} may call only: {', '.join(names)}" if names else f"; {gid} may call no course helper"

    def findings(self, i, grade_id):
        """[(line, why)] for cell i of the submission."""
        tree = self.trees.get(i)
        if tree is None:
            return []
        found = []
        cell_gid = grade_id if grade_id in self.lists else None
        for stmt in tree.body:
            bound = [n for n in _top_bound_names(stmt) if n in self.an.exercises]
            gid = self.an.exercises[bound[0]] if bound else cell_gid
            if gid is not None and isinstance(stmt, (ast.Import, ast.ImportFrom)):  # `import ... as <exercise>`
                for name in bound:
                    for b in self.an.glob.bindings.get(name, []):
                        for r in self.an._binding_refs(b, name) if b.cell == i else []:
                            if r.kind in ("helper", "instance", "module") and not _allowed(r, self.allowed[gid]):
                                found.append((stmt.lineno, f"{DELEGATES} {_named(r, r.label)} as `{name}`"
                                                           + self._rule(gid)))
            try:
                uses = self.an.references(stmt, self.an.glob)
            except RecursionError:  # an expression nested thousands deep: unreadable, so not trusted
                found.append((stmt.lineno, "is nested too deeply for the integrity scan to read"))
                continue
            for node, refs, line, _, _ in uses:
                written = ast.unparse(node)
                written = written if len(written) <= 60 else written[:57] + "..."
                for r in refs:
                    if r.kind == "hidden":
                        if gid is not None or r.everywhere:
                            found.append((line, r.label))
                    elif gid is None:
                        continue
                    elif r.kind == "carrier":
                        if r.cell == i or r.cell is None:
                            continue  # made in this cell: its own lines are checked here
                        where = f"cell {r.cell}"
                        for t in self.an.carried(r):
                            if t.kind == "hidden":
                                found.append((line, f"{t.label}, through `{written}` (made in {where})"))
                            elif not _allowed(t, self.allowed[gid]):
                                what = f"an instance of {_qual(t.obj)}" if t.kind == "instance" else (
                                    t.obj.__name__ if t.kind == "module" else _qual(t.obj))
                                found.append((line, f"{DELEGATES} {what} through `{written}` "
                                                    f"(made in {where})" + self._rule(gid)))
                    elif r.kind == "module":
                        found.append((line, f"passes {_named(r, written)} around, which hides which helper does "
                                            "the work" + self._rule(gid)))
                    elif not _allowed(r, self.allowed[gid]):
                        found.append((line, f"{DELEGATES} {_named(r, written)}" + self._rule(gid)))
        at = _statement_lines(tree)
        return sorted({(at.get(line, line), why) for line, why in found})
