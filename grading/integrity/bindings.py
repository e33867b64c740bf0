"""Where a notebook binds each name, scope by scope, as Python's rules have it: the first half of the
reference analysis (references.py resolves what the bindings hold).

A binding records what was written (an import, an assignment's right-hand side, a def, a loop
target ...), not what it evaluates to: the course's cells (once per source notebook, top level only)
and the student's cells (every scope: functions, classes, lambdas, comprehensions) are read in any
order, and `lookup` finds a name the way Python does when the code runs (a function's free names are
looked up in the globals when it is called, so every global binding of the name counts).
"""
import ast

from ..cells import grade_id, is_solution
from .syntax import _cached, _parse, _source_key


class _Binding:
    """One place a name is bound. kind: "module" (import m; data: the module's name), "from" (from m import
    a; data: (m, a)), "value" (an assignment; data: its right-hand side), "iter" (a for or with target; data:
    what it iterates), "def" (a def or class; data: the node), "builtin" (getattr, __import__,
    get_ipython), "opaque" (a parameter, an except name, a relative import: never a course helper)."""
    __slots__ = ("kind", "data", "scope", "cell", "course")

    def __init__(self, kind, data, scope, cell, course):
        self.kind, self.data, self.scope, self.cell, self.course = kind, data, scope, cell, course


class _Scope:
    def __init__(self, kind, parent):
        self.kind, self.parent = kind, parent  # kind: "global", "function", "class"
        self.bindings, self.declared_global, self.stars = {}, set(), []


_NEW_SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _outer_parts(node):
    """The parts of a scope-making node evaluated in the enclosing scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d]
    if isinstance(node, ast.Lambda):
        return node.args.defaults + [d for d in node.args.kw_defaults if d]
    if isinstance(node, ast.ClassDef):
        return node.decorator_list + node.bases + [k.value for k in node.keywords]
    return [node.generators[0].iter]


def _inner_parts(node):
    if isinstance(node, ast.Lambda):
        return [node.body]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.body
    out = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    for i, gen in enumerate(node.generators):
        out += ([gen.iter] if i else []) + gen.ifs
    return out


def _scope_nodes(roots):
    """Every node under roots that belongs to the same scope (nested scopes: only their outer parts)."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        children = _outer_parts(node) if isinstance(node, _NEW_SCOPE) else list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))


def _statements(stmts):
    """The statements of a block and of the blocks inside it (if, for, with, try), not of functions."""
    for node in stmts:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                yield handler
                yield from _statements(handler.body)


_COURSE = {}   # the course cells' bindings, per source notebook


class _Bindings:
    """The bindings of one notebook (course cells and the student's cells), scope by scope."""

    def __init__(self):
        self.glob = _Scope("global", None)
        self.scopes = {}          # id(scope-making node) -> its _Scope
        self.exercises = {}       # exercise function name -> its grade_id
        self._keep = []           # the trees, so that ids stay unique

    def add_source(self, source_nb, solutions_as_course=False):
        """The course's cells of the source notebook (and, if asked, its solution cells)."""
        key = (_source_key(source_nb), solutions_as_course)
        bindings, stars, exercises = _cached(_COURSE, key, lambda: _Bindings()._course(source_nb, solutions_as_course))
        for name, bs in bindings.items():
            self.glob.bindings.setdefault(name, []).extend(bs)
        self.glob.stars += stars
        self.exercises.update(exercises)

    def _course(self, source_nb, solutions_as_course):
        for i, cell in enumerate(source_nb.cells):
            if cell.cell_type != "code":
                continue
            tree = _parse(cell.source)
            if is_solution(cell):
                for node in (tree.body if tree else []):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        self.exercises[node.name] = grade_id(cell) or ""
                if not solutions_as_course:
                    continue
            if tree is not None:
                self.add_tree(tree, i, course=True)
        return self.glob.bindings, self.glob.stars, self.exercises

    def add_tree(self, tree, cell, course):
        self._keep.append(tree)
        if course:  # the course's own cells: only what they bind at the top level matters
            for node in _statements(tree.body):
                self._bind(node, self.glob, cell, course)
        else:
            self._build(tree.body, self.glob, cell, course)

    def _build(self, roots, scope, cell, course):
        nodes = list(_scope_nodes(roots))
        for node in nodes:
            if isinstance(node, (ast.Global, ast.Nonlocal)) and scope.kind != "global":
                scope.declared_global |= set(node.names) if isinstance(node, ast.Global) else set()
        for node in nodes:
            self._bind(node, scope, cell, course)
            if isinstance(node, _NEW_SCOPE) and not course:  # the course's own functions are never walked
                inner = _Scope("class" if isinstance(node, ast.ClassDef) else "function", scope)
                self.scopes[id(node)] = inner
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    a = node.args
                    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
                        if arg is not None:
                            self._add(inner, arg.arg, _Binding("opaque", None, inner, cell, course))
                elif not isinstance(node, ast.ClassDef):  # a comprehension's loop variables
                    for gen in node.generators:
                        self._bind_target(gen.target, None, inner, cell, course)
                self._build(_inner_parts(node), inner, cell, course)

    def _add(self, scope, name, binding):
        if binding.scope is self.glob:
            binding.scope = None  # evaluated in the global scope of whichever analysis holds it
        if scope.kind != "global" and name in scope.declared_global:
            scope = self.glob
        scope.bindings.setdefault(name, []).append(binding)

    def _bind_target(self, target, value, scope, cell, course, kind="value"):
        if isinstance(target, ast.Name):
            b = _Binding(kind, value, scope, cell, course) if value is not None else _Binding("opaque", None, scope, cell, course)
            self._add(scope, target.id, b)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                     and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts))
            for j, t in enumerate(target.elts):
                self._bind_target(t, value.elts[j] if pairs else value, scope, cell, course, kind)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, value, scope, cell, course, kind)

    def _bind(self, node, scope, cell, course):
        add = lambda name, kind, data: self._add(scope, name, _Binding(kind, data, scope, cell, course))  # noqa: E731
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.asname or a.name.split(".")[0], "module", a.name if a.asname else a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if node.level:
                    add(a.asname or a.name, "opaque", None)
                elif a.name == "*":
                    self.glob.stars.append(node.module)
                else:
                    add(a.asname or a.name, "from", (node.module, a.name))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                self._bind_target(t, node.value, scope, cell, course)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            self._bind_target(node.target, getattr(node, "value", None) if isinstance(node, ast.AnnAssign) else None,
                              scope, cell, course)
        elif isinstance(node, ast.NamedExpr):
            self._bind_target(node.target, node.value, scope, cell, course)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._bind_target(node.target, node.iter, scope, cell, course, kind="iter")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars, item.context_expr, scope, cell, course, kind="iter")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name, "opaque", None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, "def", node)

    def lookup(self, name, scope):
        """The bindings `name` may hold when code in `scope` runs: the nearest enclosing function's, else
        every global one (and every `from m import *`); [] for the student's own exercise."""
        s, first = scope, True
        while s is not None and s.kind != "global":
            if name in s.declared_global:
                break
            if (s.kind != "class" or first) and name in s.bindings:
                return s.bindings[name]
            s, first = s.parent, False
        if name in self.exercises:
            return []  # the student's own exercise: never a helper (a rebinding is flagged where it happens)
        found = list(self.glob.bindings.get(name, []))
        found += [_Binding("from", (mod, name), None, None, True) for mod in self.glob.stars]
        if not found and name in ("getattr", "__import__", "get_ipython"):
            found = [_Binding("builtin", name, None, None, True)]
        return found
