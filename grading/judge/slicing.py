"""Which course cells the judge runs before a test cell: the names each cell binds and reads, the exercises (what
the solution cells define, run only in the kernel), and the backward slice of course cells the tests need."""
import ast

from ..cells import is_graded, is_solution
from ..integrity.syntax import free_names


def is_test(cell):
    return cell.cell_type == "code" and is_graded(cell) and not is_solution(cell)


def _parse(source):
    try:
        return ast.parse(source)
    except SyntaxError:
        from IPython.core.inputtransformer2 import TransformerManager

        try:
            return ast.parse(TransformerManager().transform_cell(source))
        except SyntaxError:
            return None


def names(source):
    """(defined, read) names of a cell: bound at any level (also a subscript or attribute stored into, which
    changes the object a name holds), and read from the notebook's namespace without the cell binding them
    itself (a function's parameters, a loop's own variable are not read from it)."""
    tree = _parse(source)
    if tree is None:
        return set(), set()
    defined = set()
    try:
        used = free_names(ast.unparse(tree))
    except SyntaxError:
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                defined.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                defined.add("*" if a.name == "*" else (a.asname or a.name.split(".")[0]))
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                defined.add(base.id)
    return defined, used


def exercises(nb):
    """Names the solution cells define at their top level: the exercises, which only the kernel runs."""
    out = set()
    for c in nb.cells:
        if c.cell_type == "code" and is_solution(c):
            tree = _parse(c.source)
            for node in tree.body if tree else []:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out.add(node.name)
                elif isinstance(node, ast.Assign):
                    out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def course_slice(nb, exercise_names):
    """Indices of the course cells (neither solution nor test) the test cells need: a backward slice over
    names, in the notebook's order. A name a cell reads comes from the last cell above it that binds it (a
    course cell, which is then needed, and so on up; or a test cell, which the judge runs anyway)."""
    cells = [(i, c, *names(c.source)) for i, c in enumerate(nb.cells) if c.cell_type == "code" and not is_solution(c)]
    chosen, todo = set(), [(i, used) for i, c, _, used in cells if is_test(c)]
    while todo:
        at, used = todo.pop()
        for name in used - exercise_names:
            for i, c, defined, reads in reversed([x for x in cells if x[0] < at]):
                if name in defined or "*" in defined:
                    if not is_test(c) and i not in chosen:
                        chosen.add(i)
                        todo.append((i, reads))
                    break
    return chosen


def read_anywhere(nb, plan):
    """Every name read anywhere in the planned course cells and the test cells (a cell's own reads of what it
    binds included): what an import the judge runs must still bind. Except a bare expression statement of a
    course cell that reads an imported name nothing else reads (`style.use()`, `plt.show()`): it is left out
    with that import (`lean`), and so are its reads (matplotlib, 0.25 CPU s of each fresh judge, for
    `style.use()` alone)."""
    imported, wanted, bare = set(), set(), []
    for i, c in enumerate(nb.cells):
        if i in plan or is_test(c):
            tree = _parse(c.source)
            for node in tree.body if tree else []:
                if isinstance(node, (ast.Import, ast.ImportFrom)) and i in plan:
                    imported |= {a.asname or a.name.split(".")[0] for a in node.names}
                if i in plan and _bare(node):
                    bare.append(_reads(node))
                else:
                    wanted |= _reads(node)
    while True:  # a bare statement kept wants what it reads, which may keep another
        kept = [r for r in bare if r & imported <= wanted]
        if not kept:
            return wanted
        for r in kept:
            wanted |= r
            bare.remove(r)


def lean(tree, wanted):
    """`tree` with its top-level imports cut to the names in `wanted`, and its bare expression statements that
    read a name not wanted (one of the imports cut: see read_anywhere) left out: a notebook's first cell imports
    pyplot, IPython's display and the widgets for its figures, and sets their style, which no test reads (1 to 2
    CPU s of imports in each fresh judge). A star import, and every other statement, stays as it is."""
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            kept = [a for a in node.names if a.name == "*" or (a.asname or a.name.split(".")[0]) in wanted]
            if not kept:
                continue
            node.names = kept
        elif _bare(node) and not _reads(node) <= wanted:
            continue
        body.append(node)
    tree.body = body
    return tree


def _bare(node):
    """A statement that is an expression alone and binds nothing (no `:=` in it)."""
    return isinstance(node, ast.Expr) and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


def _reads(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
