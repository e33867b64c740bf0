"""Reading a cell for the integrity scan: its syntax tree as IPython runs it, the statements a line belongs
to, what an assignment targets, what an import binds, and a cache keyed by the source notebook."""
import ast
import functools
import symtable

from ..cells import grade_id, is_graded, is_solution  # one reader of nbgrader's cell metadata

@functools.lru_cache(maxsize=4096)  # the same course cells come with every submission; trees are read, never changed
def _parse(src):
    """The cell's syntax tree, line numbers as in the cell; None if IPython could not run it either.

    A cell with IPython syntax (`%time`, `!ls`, `x?`) is parsed as IPython runs it (each magic
    becomes a get_ipython() call on its own line), so a magic cannot hide a cell from the scan.
    """
    try:
        return ast.parse(src)
    except SyntaxError:
        pass
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        tree = ast.parse(TransformerManager().transform_cell(src))
    except Exception:  # not Python, not IPython: the cell fails in the kernel too
        return None
    lines = src.splitlines()
    blank = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    ast.increment_lineno(tree, blank)  # IPython drops the leading blank lines
    return tree


def _cell_magic(src):
    """True if the cell starts with a cell magic (%%time ...): IPython runs it as one statement."""
    return src.lstrip().startswith("%%")


def _magic(node):
    """(kind, name, Python text) if node is IPython's form of a magic with constant arguments
    (get_ipython().run_line_magic('time', 'x = 1'), run_cell_magic('capture', '', 'body')), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run_line_magic", "run_cell_magic") and isinstance(node.func.value, ast.Call)
            and getattr(node.func.value.func, "id", None) == "get_ipython"):
        return None
    args = [_const(a) for a in node.args]
    if not args or not all(isinstance(a, str) for a in args):
        return None
    return node.func.attr, args[0], args[-1]


def _statement_lines(tree):
    """{line: the first line of the innermost statement that contains it} (decorators included)."""
    where = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            for line in range(start, (node.end_lineno or node.lineno) + 1):
                if where.get(line, 0) <= node.lineno:
                    where[line] = node.lineno
    return where


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


def _const(node):
    return node.value if isinstance(node, ast.Constant) else _MISSING


_MISSING = object()


def _import_origins(tree):
    """{name: (module, attribute or None)} for every name a cell's imports bind."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.setdefault(a.asname or a.name.split(".")[0], set()).add(
                    (a.name if a.asname else a.name.split(".")[0], None))
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for a in node.names:
                out.setdefault(a.asname or a.name, set()).add((node.module, a.name))
    return out


def _imported(node):
    """(module, attribute or None, alias) for each name an import binds."""
    if isinstance(node, ast.Import):
        return [(a.name, None, a) for a in node.names]
    return [(node.module or "", a.name, a) for a in node.names] if not node.level else []


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


def _source_key(source_nb):
    return tuple((c.cell_type, c.source, grade_id(c), is_solution(c), is_graded(c)) for c in source_nb.cells)


def _cached(cache, key, make):
    """make() once per source notebook: every submission of an assignment comes with the same source."""
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        cache[key] = make()
    return cache[key]
